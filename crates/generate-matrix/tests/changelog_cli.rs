//! `generate-matrix changelog` as a binary: JSON on stdout on success; on a
//! rejection exit 1, nothing on stdout, and in GitHub Actions the
//! `::error` annotation on stderr (the action captures stdout as the matrix).
#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::path::Path;
use std::process::Output;

const CONFIG: &str = "\
alpha-fp8-h200-sglang:
  image: example/sglang:v1
  model: example-org/Alpha
  model-prefix: alpha
  precision: fp8
  framework: sglang
  runner: h200
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 8, conc-list: [4, 8] }
";

use test_kit::git;

fn commit(dir: &Path, msg: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", msg]);
}

fn run(dir: &Path, actions: bool) -> Output {
    let mut cmd = test_kit::command(env!("CARGO_BIN_EXE_generate-matrix"));
    cmd.args([
        "changelog",
        "--base-ref",
        "HEAD~1",
        "--head-ref",
        "HEAD",
        "--changelog-file",
        "perf-changelog.yaml",
    ])
    .current_dir(dir);
    if actions {
        cmd.env("GITHUB_ACTIONS", "true");
    }
    cmd.output().unwrap()
}

fn repo(addition: &str) -> test_kit::TempDir {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    std::fs::create_dir(d.join("configs")).unwrap();
    std::fs::write(d.join("configs/amd-master.yaml"), "{}\n").unwrap();
    std::fs::write(d.join("configs/nvidia-master.yaml"), CONFIG).unwrap();
    std::fs::write(
        d.join("configs/runners.yaml"),
        "labels:\n  h200:\n    - h200_00\n",
    )
    .unwrap();
    let first = "- config-keys: [alpha-fp8-h200-sglang]\n  description: [first]\n  pr-link: x\n";
    std::fs::write(d.join("perf-changelog.yaml"), first).unwrap();
    git(d, &["init", "-q", "-b", "main"]);
    commit(d, "base");
    std::fs::write(d.join("perf-changelog.yaml"), format!("{first}{addition}")).unwrap();
    commit(d, "head");
    tmp
}

#[test]
fn success_prints_one_json_line() {
    let tmp = repo("\n- config-keys: [alpha-*]\n  description: [again]\n  pr-link: y\n");
    let out = run(tmp.path(), true);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches('\n').count(), 1);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["single_node"]["8k1k"].as_array().unwrap().len(), 2);
    assert_eq!(
        v["changelog_metadata"]["entries"][0]["config-keys"][0],
        "alpha-*"
    );
}

#[test]
fn rejection_annotates_on_stderr_and_keeps_stdout_empty() {
    let tmp = repo("\n- config-keys: [missing-key]\n  description: [x]\n  pr-link: y\n");
    let out = run(tmp.path(), true);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("Config key 'missing-key' not found in master configs."),
        "{err}"
    );
    assert!(
        err.contains("::error file=perf-changelog.yaml,line=5::Config key"),
        "{err}"
    );
    let out = run(tmp.path(), false);
    assert!(!String::from_utf8(out.stderr).unwrap().contains("::error"));
}

/// Issue #34 item 8: a changelog value with a line break cannot start a
/// workflow command of its own: under Actions the error line and the
/// annotation carry it as `%0A`, so the only line starting with `::` is
/// the tool's one annotation.
#[test]
fn a_newline_in_a_config_key_cannot_inject_a_workflow_command() {
    let tmp = repo(
        "\n- config-keys: [\"x\\n::error::INJECTED\\r\\n::warning::TWO\"]\n  description: [x]\n  pr-link: y\n",
    );
    let out = run(tmp.path(), true);
    assert_eq!(out.status.code(), Some(1));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let commands: Vec<&str> = text
        .lines()
        .flat_map(|l| l.split('\r'))
        .filter(|l| l.trim_start().starts_with("::"))
        .collect();
    assert_eq!(commands.len(), 1, "{text}");
    assert!(
        commands[0].starts_with("::error file=perf-changelog.yaml,line=5::"),
        "{text}"
    );
    assert!(
        commands[0].contains("x%0A::error::INJECTED%0D%0A::warning::TWO"),
        "{text}"
    );
    assert!(
        text.contains("generate-matrix: error: ") && text.contains("x%0A::error::INJECTED"),
        "the error line is escaped too: {text}"
    );
    // Outside Actions the error line is the text as it is.
    let out = run(tmp.path(), false);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("x\n::error::INJECTED"), "{err}");
}
