//! `visualizer-comment check-run` against the loopback fake GitHub: the
//! verdict of compare-results' JSON report as a completed "sweep verdict"
//! check run on the PR's head (issue #26 item 5); a token without `checks:
//! write` is a warning and exit 0, other API failures exit 2.

mod fixtures;

use std::path::Path;
use std::process::Output;

use fixtures::*;
use serde_json::{Value, json};
use test_kit::{CommandExt, FakeGitHub, Fault, Route, stderr, stdout};
use visualizer_comment::body;

const REPO: &str = "acme/bench";
const CHECKS: &str = "/repos/acme/bench/check-runs";
const SHA: &str = "4f2a9c0d1e3b5a7968f0c2d4e6a8b0c1d3e5f7a9";

fn check_run(s: &FakeGitHub, dir: &Path, report: &Value) -> Output {
    let path = dir.join("compare.json");
    std::fs::write(&path, report.to_string()).expect("report");
    test_kit::command(env!("CARGO_BIN_EXE_visualizer-comment"))
        .args(["check-run", "--sha", SHA, "--report"])
        .arg(&path)
        .github(s)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_RUN_ID", "32991847205")
        .env("GITHUB_OUTPUT", dir.join("output"))
        .output()
        .expect("run visualizer-comment check-run")
}

fn created(s: &FakeGitHub) -> Value {
    let runs = s.check_runs(REPO);
    assert_eq!(runs.len(), 1, "one check run: {runs:?}");
    runs[0].clone()
}

/// The comment's heading line (`### <icon> <counts>`) for the same report.
fn comment_heading(report: &Value) -> String {
    let b = body::render(&input(Some(report.clone()), &[]), NOTICE).expect("body");
    b.text
        .lines()
        .find_map(|l| l.strip_prefix("### "))
        .expect("heading")
        .to_string()
}

#[test]
fn a_regression_is_a_failing_check_run_titled_like_the_comment_heading() {
    let s = test_kit::fake_github();
    s.with_check_runs(REPO);
    let dir = test_kit::temp_dir();
    let (report, _) = two_points_regressed();
    let out = check_run(&s, dir.path(), &report);
    assert!(out.status.success(), "{}", stderr(&out));
    let run = created(&s);
    assert_eq!(run["name"], "sweep verdict");
    assert_eq!(run["head_sha"], SHA);
    assert_eq!(run["status"], "completed");
    assert_eq!(run["conclusion"], "failure");
    assert_eq!(
        run["details_url"],
        "https://github.com/acme/bench/actions/runs/32991847205"
    );
    let title = run["output"]["title"].as_str().unwrap_or_default();
    assert_eq!(format!("❌ {title}"), comment_heading(&report));
    assert!(stdout(&out).contains("created check run \"sweep verdict\" (failure)"));
    let outputs = std::fs::read_to_string(dir.path().join("output")).expect("outputs");
    assert!(outputs.contains("check-run-url=https://github.com/acme/bench/runs/9000000001"));
    test_kit::assert_snapshot!(
        "check_run_regression",
        format!(
            "title: {title}\n\n{}",
            run["output"]["summary"].as_str().unwrap_or_default()
        )
    );
}

#[test]
fn no_regression_is_a_successful_check_run() {
    let s = test_kit::fake_github();
    s.with_check_runs(REPO);
    let dir = test_kit::temp_dir();
    let (report, _) = seed_improved();
    let out = check_run(&s, dir.path(), &report);
    assert!(out.status.success(), "{}", stderr(&out));
    let run = created(&s);
    assert_eq!(run["conclusion"], "success");
    let title = run["output"]["title"].as_str().unwrap_or_default();
    assert_eq!(format!("✅ {title}"), comment_heading(&report));
}

#[test]
fn nothing_compared_is_a_neutral_check_run() {
    let s = test_kit::fake_github();
    s.with_check_runs(REPO);
    let dir = test_kit::temp_dir();
    let (mut report, _) = seed_improved();
    report["summary"]["counts"]["matched"] = json!(0);
    let out = check_run(&s, dir.path(), &report);
    assert!(out.status.success(), "{}", stderr(&out));
    let run = created(&s);
    assert_eq!(run["conclusion"], "neutral");
    assert!(
        run["output"]["title"]
            .as_str()
            .unwrap_or_default()
            .starts_with("No matched points to compare"),
        "{run}"
    );
}

/// Issue #34 item 3: the legs ran (success-rate counted 126 jobs) and no
/// result row arrived: compare-results' verdict is `no_results` and the
/// check is `failure`, not the `neutral` a required check lets pass. Only
/// run stats that count no job at all make it `neutral`.
#[test]
fn no_results_after_legs_ran_is_a_failing_check_and_nothing_scheduled_neutral() {
    let (base, _) = seed_runs(|_, _| 1.0);
    let (report, _) = compared(&base, &[], json!([]));
    assert_eq!(report["summary"]["verdict"], "no_results");
    for (stats, want) in [
        (
            json!({"b200-dgxc": {"n_success": 0, "total": 126}}),
            "failure",
        ),
        (
            json!({"b200-dgxc": {"n_success": 0, "total": 0}}),
            "neutral",
        ),
    ] {
        let s = test_kit::fake_github();
        s.with_check_runs(REPO);
        let dir = test_kit::temp_dir();
        let stats_path = dir.path().join("run_stats.json");
        std::fs::write(&stats_path, stats.to_string()).expect("stats");
        let path = dir.path().join("compare.json");
        std::fs::write(&path, report.to_string()).expect("report");
        let out = test_kit::command(env!("CARGO_BIN_EXE_visualizer-comment"))
            .args(["check-run", "--sha", SHA, "--report"])
            .arg(&path)
            .arg("--run-stats")
            .arg(&stats_path)
            .github(&s)
            .env("GITHUB_REPOSITORY", REPO)
            .output()
            .expect("run visualizer-comment check-run");
        assert!(out.status.success(), "{}", stderr(&out));
        let run = created(&s);
        assert_eq!(run["conclusion"], want, "{stats}: {run}");
    }
    // Without run stats: not knowing whether legs ran fails closed.
    let s = test_kit::fake_github();
    s.with_check_runs(REPO);
    let dir = test_kit::temp_dir();
    let out = check_run(&s, dir.path(), &report);
    assert!(out.status.success(), "{}", stderr(&out));
    let run = created(&s);
    assert_eq!(run["conclusion"], "failure");
    assert!(
        run["output"]["title"]
            .as_str()
            .unwrap_or_default()
            .starts_with("No benchmark results arrived"),
        "{run}"
    );
}

/// Issue #34 low item: a verdict this version does not know is exit 2 and
/// no check run, never a green one.
#[test]
fn an_unknown_verdict_is_exit_2_and_no_check_run() {
    let s = test_kit::fake_github();
    s.with_check_runs(REPO);
    let dir = test_kit::temp_dir();
    let (mut report, _) = seed_improved();
    report["summary"]["verdict"] = json!("looks_fine");
    let out = check_run(&s, dir.path(), &report);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("looks_fine"), "{}", stderr(&out));
    assert_eq!(s.count("POST", CHECKS), 0);
}

#[test]
fn a_token_without_checks_write_is_a_warning_and_exit_0() {
    let s = test_kit::fake_github();
    s.add_route(
        Route::json(
            "POST",
            CHECKS,
            json!({"message": "Resource not accessible by integration", "status": "403"}),
        )
        .with_status(403),
    );
    let dir = test_kit::temp_dir();
    let (report, _) = two_points_regressed();
    let out = check_run(&s, dir.path(), &report);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s.count("POST", CHECKS), 1, "a 403 is not retried");
    let err = stderr(&out);
    assert!(
        err.contains("warning: no check run \"sweep verdict\""),
        "{err}"
    );
    assert!(
        err.contains("HTTP 403: Resource not accessible by integration"),
        "{err}"
    );
    assert!(err.contains("needs `checks: write`"), "{err}");
}

#[test]
fn other_api_failures_exit_2_naming_the_check() {
    let s = test_kit::fake_github();
    s.fail_always("POST", CHECKS, Fault::Status(404));
    let dir = test_kit::temp_dir();
    let (report, _) = seed_improved();
    let out = check_run(&s, dir.path(), &report);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "creating check run \"sweep verdict\" on {SHA} of {REPO}"
        )),
        "{err}"
    );
    assert!(err.contains("HTTP 404"), "{err}");
}

#[test]
fn a_missing_report_exits_2_without_calling_github() {
    let s = test_kit::fake_github();
    s.with_check_runs(REPO);
    let dir = test_kit::temp_dir();
    let out = test_kit::command(env!("CARGO_BIN_EXE_visualizer-comment"))
        .args(["check-run", "--sha", SHA, "--report"])
        .arg(dir.path().join("missing.json"))
        .github(&s)
        .env("GITHUB_REPOSITORY", REPO)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing.json: cannot read it"));
    assert_eq!(s.requests().len(), 0);
}

/// In Actions GITHUB_REPOSITORY and GITHUB_RUN_ID are always set: the
/// comment's flags read them too, and the subcommand must still parse.
#[test]
fn the_subcommand_parses_with_the_comment_variables_set() {
    let s = test_kit::fake_github();
    s.with_check_runs(REPO);
    let dir = test_kit::temp_dir();
    let (report, _) = seed_improved();
    let path = dir.path().join("compare.json");
    std::fs::write(&path, report.to_string()).expect("report");
    let out = test_kit::command(env!("CARGO_BIN_EXE_visualizer-comment"))
        .args(["check-run"])
        .github(&s)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_RUN_ID", "32991847205")
        .env("INPUT_PR_NUMBER", "42")
        .env("INPUT_REPORT", &path)
        .env("INPUT_HEAD_SHA", SHA)
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(created(&s)["conclusion"], "success");
}
