//! The adoption path as a caller runs it: `sweepkit workflow write` in a
//! fresh repository, then `sweepkit workflow check` (passes), a one-byte
//! edit (fails, exit 1), a rewrite (the upgrade path: passes again), and a
//! missing file (exit 2). The written workflow names one pinned commit in
//! every `uses:` of sweepkit's actions. (scripts/lint-actions runs
//! actionlint and zizmor over a workflow written the same way.) `write`
//! refuses (exit 1) a pin whose `actions/setup/checksums.txt` lists no
//! release archive of this version, naming the fixes, unless
//! `--allow-unreleased`.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::Path;
use std::process::Output;

use sweepkit_e2e::workspace_root as root;
use test_kit::stderr;

/// `sweepkit args…` (built from the current source, or taken from
/// SWEEPKIT_BIN_DIR) with the kit's scrubbed environment.
fn run(repo: &Path, args: &[&str]) -> Output {
    test_kit::tool_command("sweepkit")
        .args(args)
        .current_dir(repo)
        .output()
        .unwrap()
}

#[test]
fn written_workflow_pins_every_action_at_one_commit_and_check_catches_a_one_byte_edit() {
    let repo = test_kit::temp_dir();
    let out = run(repo.path(), &["workflow", "write", "--allow-unreleased"]);
    assert!(out.status.success(), "write: {}", stderr(&out));
    let file = repo.path().join(".github/workflows/sweepkit-run-sweep.yml");
    let text = std::fs::read_to_string(&file).unwrap();

    // Every sweepkit action ref names the same commit, the one in the header,
    // with this version's comment.
    let pin = text
        .lines()
        .find_map(|l| l.strip_prefix("# sweepkit-actions: "))
        .unwrap()
        .to_string();
    let uses: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter_map(|l| l.trim_start_matches("- ").strip_prefix("uses: "))
        .filter(|u| u.starts_with("sweepkit/"))
        .collect();
    assert!(uses.len() > 10, "only {} sweepkit uses", uses.len());
    for u in &uses {
        let (spec, comment) = u.split_once(" # ").unwrap();
        assert!(spec.starts_with("sweepkit/sweepkit/actions/"), "{u}");
        assert_eq!(spec.rsplit_once('@').unwrap().1, pin, "{u}");
        assert_eq!(comment, format!("v{}", env!("CARGO_PKG_VERSION")), "{u}");
    }
    // The body is this repository's reusable workflow.
    let source = std::fs::read_to_string(root().join(".github/workflows/run-sweep.yml")).unwrap();
    assert!(text.ends_with(&source), "the body is not run-sweep.yml");

    let out = run(repo.path(), &["workflow", "check"]);
    assert!(
        out.status.success(),
        "check of a fresh file: {}",
        stderr(&out)
    );

    // One byte changed anywhere in the job graph: check fails with exit 1.
    let at = text.find("runs-on:").unwrap() + 3;
    let mut bytes = text.clone().into_bytes();
    bytes[at] = b'N';
    std::fs::write(&file, &bytes).unwrap();
    let out = run(repo.path(), &["workflow", "check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("changed since it was written"),
        "{}",
        stderr(&out)
    );

    // Writing again keeps the local edit (#34 item 8): exit 1, the diff on
    // stdout, nothing written; `--force` restores the file.
    let out = run(repo.path(), &["workflow", "write", "--allow-unreleased"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    let diff = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        diff.contains("(as written)") && diff.contains("\n+    runN-on: ubuntu-latest\n"),
        "{diff}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    let out = run(
        repo.path(),
        &["workflow", "write", "--allow-unreleased", "--force"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "the vendored file is world-readable");
    }
    // Unedited, it is rewritten without --force (how a newer sweepkit upgrades it).
    let out = run(repo.path(), &["workflow", "write", "--allow-unreleased"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(run(repo.path(), &["workflow", "check"]).status.success());

    // An explicit action commit: every ref names it, and it checks.
    let other = "0123456789abcdef0123456789abcdef01234567";
    let out = run(repo.path(), &["workflow", "write", "--ref", other]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Another commit's checksums are not known to this build: it says so.
    assert!(
        stderr(&out).contains(&format!("cannot check here whether {other} lists")),
        "{}",
        stderr(&out)
    );
    let pinned = std::fs::read_to_string(&file).unwrap();
    assert!(!pinned.contains(&pin) || pin == other);
    assert!(pinned.matches(&format!("@{other} # v")).count() == uses.len());
    assert!(run(repo.path(), &["workflow", "check"]).status.success());

    // No file: the check cannot do its job (exit 2).
    std::fs::remove_file(&file).unwrap();
    let out = run(repo.path(), &["workflow", "check"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// Whether this tree's checksums list an archive of this version for both
/// release architectures (the binary embeds this file as its pin's list).
fn released() -> bool {
    let sums = std::fs::read_to_string(root().join("actions/setup/checksums.txt")).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    ["x86_64", "aarch64"].iter().all(|arch| {
        ["musl", "gnu"].iter().any(|libc| {
            let name = format!("sweepkit-{version}-{arch}-unknown-linux-{libc}.tar.gz");
            sums.lines().any(|l| l.ends_with(&format!("  {name}")))
        })
    })
}

#[test]
fn write_refuses_a_pin_whose_checksums_list_no_archive_and_names_the_fix() {
    let repo = test_kit::temp_dir();
    let file = repo.path().join(".github/workflows/sweepkit-run-sweep.yml");
    let out = run(repo.path(), &["workflow", "write"]);
    if released() {
        // A pin with this version's archives: written, no warning.
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
        return;
    }
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for want in [
        "lists no release archive of sweepkit",
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "--ref <SHA>",
        "--allow-unreleased",
        "build-from-source: true",
    ] {
        assert!(err.contains(want), "the refusal lacks {want:?}: {err}");
    }
    assert!(!file.exists(), "a refused write left a file");

    // The override writes, and warns with the fix for the caller.
    let out = run(repo.path(), &["workflow", "write", "--allow-unreleased"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning:") && err.contains("build-from-source: true"),
        "{err}"
    );
    // #38 item 2: exactly the lines to add, for the caller and for the
    // other workflows that use sweepkit's actions.
    for lines in [
        "    with:\n      build-from-source: true\n",
        "    env:\n      SWEEPKIT_BUILD_FROM_SOURCE: \"true\"",
    ] {
        assert!(err.contains(lines), "the hint lacks {lines:?}: {err}");
    }
    assert!(file.is_file());
    assert!(run(repo.path(), &["workflow", "check"]).status.success());
}
