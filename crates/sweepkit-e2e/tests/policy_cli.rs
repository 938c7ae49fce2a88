//! `generate-matrix sweep-policy` and `canary` as the actions call them:
//! exit codes, the conflict annotation, step outputs, rejected input.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::process::Output;

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    test_kit::tool_command("generate-matrix")
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

#[test]
fn conflicting_primary_labels_fail_with_an_annotation_unless_allowed() {
    let dir = test_kit::temp_dir();
    let out_file = dir.path().join("out");
    let env = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("SWEEP_EVENT_ACTION", "synchronize"),
        ("PR_LABELS", r#"["sweep-enabled","full-sweep-fail-fast"]"#),
        ("GITHUB_REPOSITORY", "example/bench"),
        ("SWEEP_HEAD_REPO", "example/bench"),
        ("GITHUB_OUTPUT", out_file.to_str().unwrap()),
    ];
    let out = run(&["sweep-policy"], &env);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("::error::PR has multiple conflicting sweep labels"),
        "{stdout}"
    );
    // The outputs are written before failing, so later steps could read them.
    let outputs = std::fs::read_to_string(&out_file).unwrap();
    assert!(outputs.contains("conflicting-labels=true\n"));
    assert!(outputs.contains("run-setup=true\n"));

    let mut allowed = env.to_vec();
    allowed.push(("SWEEP_ALLOW_CONFLICT", "true"));
    let out = run(&["sweep-policy"], &allowed);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bad_inputs_are_rejected_naming_the_variable() {
    let out = run(
        &["sweep-policy"],
        &[
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("PR_LABELS", "{\"a\":1}"),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("PR_LABELS"));

    let out = run(
        &["sweep-policy"],
        &[
            ("GITHUB_EVENT_NAME", "push"),
            ("GITHUB_EVENT_PATH", "/nonexistent/event.json"),
        ],
    );
    // An event file that cannot be read: the job cannot be done (exit 2).
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/event.json"));

    let out = run(
        &["canary"],
        &[("SEARCH_SPACE", r#"{"single_node": {"1k1k": 3}}"#)],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("single_node[\"1k1k\"]") && err.contains("SEARCH_SPACE"),
        "{err}"
    );

    // Neither source given: usage error.
    assert_eq!(run(&["canary"], &[]).status.code(), Some(2));
}

#[test]
fn push_event_payload_decides_without_any_flag() {
    let dir = test_kit::temp_dir();
    let event = dir.path().join("event.json");
    std::fs::write(
        &event,
        r#"{"head_commit": {"message": "merge [skip-sweep]"}}"#,
    )
    .unwrap();
    let out = run(
        &["sweep-policy"],
        &[
            ("GITHUB_EVENT_NAME", "push"),
            ("GITHUB_REF", "refs/heads/main"),
            ("GITHUB_EVENT_PATH", event.to_str().unwrap()),
        ],
    );
    assert!(out.status.success());
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // [skip-sweep] is ignored on push; main pushes may ingest.
    assert_eq!(d["run-setup"], true);
    assert_eq!(d["skip-pr-sweep"], false);
    assert_eq!(d["push-to-main"], true);
    assert_eq!(d["run-check-changelog"], false);
}

/// What the workflow reads: `sweep-policy`'s step outputs and job summary
/// for a labelled pull request, as insta snapshots.
#[test]
fn sweep_policy_outputs_and_summary_are_snapshotted() {
    let dir = test_kit::temp_dir();
    let output = dir.path().join("github_output");
    let summary = dir.path().join("summary.md");
    let out = run(
        &["sweep-policy"],
        &[
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("SWEEP_EVENT_ACTION", "synchronize"),
            ("PR_LABELS", r#"["sweep-enabled"]"#),
            ("GITHUB_REPOSITORY", "example/bench"),
            ("SWEEP_HEAD_REPO", "example/bench"),
            ("GITHUB_OUTPUT", output.to_str().unwrap()),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", test_kit::stderr(&out));
    test_kit::assert_snapshot!(
        "sweep_policy_github_output",
        std::fs::read_to_string(&output).unwrap()
    );
    test_kit::assert_snapshot!(
        "sweep_policy_step_summary",
        std::fs::read_to_string(&summary).unwrap_or_default()
    );
}

/// `canary`'s step outputs and job summary for a two-length sweep.
#[test]
fn canary_outputs_and_summary_are_snapshotted() {
    let dir = test_kit::temp_dir();
    let output = dir.path().join("github_output");
    let summary = dir.path().join("summary.md");
    let row = |tp: u64, conc: u64, isl: u64| serde_json::json!({"runner": "b200", "tp": tp, "conc": conc, "run-eval": false, "isl": isl, "exp-name": format!("dsr1_{isl}")});
    let ssc = serde_json::json!({
        "single_node": {"1k1k": [row(8, 16, 1024), row(8, 4, 1024)], "8k1k": [row(4, 4, 8192)]},
        "multi_node": {},
    });
    let ssc = ssc.to_string();
    let out = run(
        &["canary"],
        &[
            ("SEARCH_SPACE", ssc.as_str()),
            ("GITHUB_OUTPUT", output.to_str().unwrap()),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", test_kit::stderr(&out));
    test_kit::assert_snapshot!(
        "canary_github_output",
        std::fs::read_to_string(&output).unwrap()
    );
    test_kit::assert_snapshot!(
        "canary_step_summary",
        std::fs::read_to_string(&summary).unwrap_or_default()
    );
}
