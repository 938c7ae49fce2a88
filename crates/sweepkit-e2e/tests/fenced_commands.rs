//! Every fenced shell command of README.md, docs/adopt.md and
//! docs/migration.md runs as written (issue #38 item 2), on a scratch
//! InferenceX copy: the data-only history of the conformance corpus
//! (`tests/conformance/fixtures/history.bundle`: configs and changelog)
//! checked out, plus an empty stand-in for every file a `git rm` line of
//! the page deletes (the reference's workflows and scripts, which CI cannot
//! fetch). `<sweepkit>` and `../sweepkit` name this checkout; the tools are
//! the workspace's binaries, first on PATH.
//!
//! A command that cannot run here is named in [`ILLUSTRATIVE`] with the
//! reason; every other command must exit 0, and a command nobody listed
//! that fails is the test's failure. The test prints how many ran.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Command;
use test_kit::{git, tool_dir};

/// The pages whose fenced shell blocks are run.
const PAGES: [&str; 3] = ["README.md", "docs/adopt.md", "docs/migration.md"];

/// Commands (by their start) that are not run, and why.
const ILLUSTRATIVE: &[(&str, &str)] = &[
    (
        "./scripts/demo",
        "the demo: minutes of builds; scripts/demo is its own check",
    ),
    (
        "./scripts/check",
        "the whole test suite, of which this test is part",
    ),
    (
        "git clone https://github.com/sweepkit/sweepkit",
        "network: this checkout stands for the clone",
    ),
    (
        "cargo install --locked --path",
        "a release build of sweepkit: the test runs the workspace's build of the same crate",
    ),
    (
        "gh variable set",
        "GitHub's API: the examples' reading of the variable is tested by workflows.rs",
    ),
    ("$EDITOR", "interactive"),
];

/// This crate's workspace (from the test's own manifest dir: a shared
/// target directory can hold a test-kit built from another checkout).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The shell commands of a page's fenced `bash`/`sh` blocks, `\`
/// continuations joined, comments and blank lines dropped.
fn fenced_commands(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        let Some(lang) = line.strip_prefix("```") else {
            continue;
        };
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        if !matches!(lang.trim(), "bash" | "sh" | "shell") {
            continue;
        }
        let joined = body.join("\n").replace("\\\n", " ");
        for l in joined.lines().map(str::trim) {
            if !l.is_empty() && !l.starts_with('#') {
                out.push(l.to_string());
            }
        }
    }
    out
}

fn illustrative(command: &str) -> Option<&'static str> {
    ILLUSTRATIVE
        .iter()
        .find(|(start, _)| command.starts_with(start))
        .map(|(_, why)| *why)
}

/// Paths a `git rm` command names (after the options).
fn removed_paths(command: &str) -> Vec<String> {
    let Some(rest) = command.strip_prefix("git rm ") else {
        return Vec::new();
    };
    rest.split_whitespace()
        .filter(|w| !w.starts_with('-'))
        .map(str::to_string)
        .collect()
}

/// A scratch InferenceX copy with stand-ins for what `commands` delete.
fn scratch(dir: &Path, commands: &[String]) -> PathBuf {
    let repo = dir.join("InferenceX");
    let bundle = root().join("tests/conformance/fixtures/history.bundle");
    let out = Command::new("git")
        .args(["clone", "-q"])
        .arg(&bundle)
        .arg(&repo)
        .output()
        .unwrap();
    test_kit::assert_exit(&out, 0);
    git(&repo, &["config", "user.email", "t@example.invalid"]);
    git(&repo, &["config", "user.name", "t"]);
    for path in commands.iter().flat_map(|c| removed_paths(c)) {
        let p = repo.join(&path);
        if path.ends_with('/') || !path.contains('.') {
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("stand-in.py"), "# stand-in\n").unwrap();
        } else {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "# stand-in\n").unwrap();
        }
    }
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "stand-ins"]);
    repo
}

#[test]
fn every_fenced_shell_command_of_the_adoption_pages_runs_or_is_named_illustrative() {
    let tools = tool_dir().to_path_buf();
    let path = format!(
        "{}:{}",
        tools.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    for page in PAGES {
        let text = std::fs::read_to_string(root().join(page)).unwrap();
        let commands = fenced_commands(&text);
        assert!(!commands.is_empty(), "{page} has no fenced shell command");
        let tmp = test_kit::temp_dir();
        // `../sweepkit` from the scratch repository is this checkout.
        std::os::unix::fs::symlink(root(), tmp.path().join("sweepkit")).unwrap();
        let repo = scratch(tmp.path(), &commands);
        for command in &commands {
            if let Some(why) = illustrative(command) {
                skipped.push(format!("{page}: `{command}`: {why}"));
                continue;
            }
            let line = command.replace("<sweepkit>", "../sweepkit");
            let out = test_kit::command("bash")
                .args(["-euo", "pipefail", "-c", &line])
                .current_dir(&repo)
                .env("PATH", &path)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
                .output()
                .unwrap();
            ran += 1;
            if !out.status.success() {
                failures.push(format!(
                    "{page}: `{command}` exited {:?}:\n{}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    eprintln!(
        "{ran} fenced commands ran, {} illustrative:\n  {}",
        skipped.len(),
        skipped.join("\n  ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ran >= 10, "only {ran} commands ran");
}

#[test]
fn commands_are_read_from_shell_blocks_only_with_continuations_joined() {
    let page = "```bash\n# c\ngit rm a \\\n  b\n\nls\n```\n```yaml\nx: 1\n```\n";
    assert_eq!(fenced_commands(page), ["git rm a    b", "ls"]);
    assert_eq!(removed_paths("git rm -r utils/x"), ["utils/x"]);
}
