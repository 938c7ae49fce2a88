//! `check-changelog dry-run` with a token (#26 item 9): besides the upper
//! bound (each leg charged its job timeout) it estimates from the durations
//! of the same legs' last successful jobs, read from the Actions API of the
//! loopback fake server. The change is PR 2550 of the real history
//! (single-node 8k1k with evals: 13 legs, 233.33 GPU-hours at the timeouts).
#![allow(clippy::unwrap_used)] // tests fail loudly by design

use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use test_kit::{CommandExt as _, FakeGitHub, Route, git, stderr, stdout};

const BASE: &str = "a5aecb02cf9afb6f550ea9be90fa573c5da8c49d";
const HEAD: &str = "1dd4c709467074360db5b2dc7c7a65c247c1cca1";
const RUNS: &str = "/repos/o/r/actions/workflows/run-sweep.yml/runs";

/// The dry run of PR 2550 in a fresh clone of the history, against `server`.
fn dry_run(server: &FakeGitHub, extra: &[&str]) -> Output {
    let tmp = test_kit::temp_dir();
    let dir = tmp.path().join("repo");
    let bundle = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/conformance/fixtures/history.bundle");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            &bundle.to_string_lossy(),
            &dir.to_string_lossy(),
        ],
    );
    git(
        &dir,
        &["-c", "advice.detachedHead=false", "checkout", "-q", HEAD],
    );
    let mut args = vec!["dry-run", "--base-ref", BASE, "--history-repo", "o/r"];
    args.extend_from_slice(extra);
    test_kit::command(env!("CARGO_BIN_EXE_check-changelog"))
        .args(&args)
        .current_dir(&dir)
        .github(server)
        .output()
        .unwrap()
}

fn job(name: &str, conclusion: &str, started: &str, completed: &str) -> Value {
    json!({"name": name, "conclusion": conclusion, "started_at": started, "completed_at": completed})
}

/// Run 2 (newest) has the 4-GPU c4 leg at 60 min (and a failed job of it,
/// which does not count); run 1 has the eval legs TP2 c32 and TP2/EP2 c32
/// (two legs: the name tells them apart, as the reference's does) at 30
/// min and an older 999-min job of the c4 leg, which the newer one
/// shadows. The names are the leg workflow's (`p3.000 | … sgl TP4 mtp c4`).
fn history() -> FakeGitHub {
    let s = test_kit::fake_github();
    s.add_route(Route::json(
        "GET",
        RUNS,
        json!({"total_count": 2, "workflow_runs": [{"id": 2}, {"id": 1}]}),
    ));
    s.add_route(Route::json(
        "GET",
        "/repos/o/r/actions/runs/2/jobs",
        json!({"jobs": [
            job("sweep / setup", "success", "2026-01-02T00:00:00Z", "2026-01-02T00:05:00Z"),
            job("sweep / single-node 8k1k (1/2) / p3.000 | qwen3.5 fp4 b200 sgl TP4 mtp c4", "failure", "2026-01-02T00:00:00Z", "2026-01-02T00:07:00Z"),
            job("sweep / single-node 8k1k (2/2) / p3.000 | qwen3.5 fp4 b200 sgl TP4 mtp c4", "success", "2026-01-02T01:00:00Z", "2026-01-02T02:00:00Z"),
        ]}),
    ));
    s.add_route(Route::json(
        "GET",
        "/repos/o/r/actions/runs/1/jobs",
        json!({"jobs": [
            job("sweep / single-node 8k1k / p3.000 | qwen3.5 fp4 b200 sgl TP4 mtp c4", "success", "2026-01-01T00:00:00Z", "2026-01-01T16:39:00Z"),
            job("sweep / eval / p1.500 | qwen3.5 fp4 b200 sgl TP2 mtp c32 | eval-only", "success", "2026-01-01T00:00:00Z", "2026-01-01T00:30:00Z"),
            job("sweep / eval / p1.500 | qwen3.5 fp4 b200 sgl TP2/EP2 mtp c32 | eval-only", "success", "2026-01-01T00:00:00Z", "2026-01-01T00:30:00Z"),
        ]}),
    ));
    s
}

#[test]
fn with_a_token_the_last_successful_jobs_give_a_second_estimate_beside_the_upper_bound() {
    let s = history();
    let o = dry_run(&s, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    // 4 GPUs x 60 min + 2 eval legs x 2 GPUs x 30 min + 10 legs x 2 GPUs x
    // 500 min = 10 360 GPU-minutes.
    assert!(
        text.contains(
            "Estimate from the last successful jobs of the same legs (o/r run-sweep.yml, newest 2 completed runs read): 172.67 GPU-hours; upper bound (job timeouts): 233.33 GPU-hours.\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("3 of 13 legs measured; 10 without a successful job in those runs are charged their timeout.\n"),
        "{text}"
    );
    let runs = s.requests().into_iter().find(|r| r.path == RUNS).unwrap();
    assert_eq!(runs.query["status"], "completed");
}

#[test]
fn the_json_estimate_names_the_job_each_leg_was_measured_by() {
    let s = history();
    let o = dry_run(&s, &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let e = &v["estimate"];
    assert_eq!(e["legs_measured"], 3);
    assert_eq!(e["gpu_hours"], json!(172.67));
    assert_eq!(e["upper_bound_gpu_hours"], v["total"]["gpu_hours"]);
    assert_eq!(e["legs"][0]["run_id"], 2);
    assert_eq!(e["legs"][0]["minutes"], json!(60.0));
    assert_eq!(e["legs"][1], Value::Null);
    assert_eq!(e["legs"].as_array().unwrap().len(), 13);
}

#[test]
fn an_unreadable_history_warns_and_keeps_the_upper_bound() {
    let s = test_kit::fake_github();
    s.add_route(Route::json("GET", RUNS, json!({"message": "Not Found"})).with_status(404));
    let o = dry_run(&s, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(": 13 legs, 233.33 GPU-hours\n"),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("Estimate from"), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: check-changelog dry-run: no estimate from the job history of o/r run-sweep.yml: GitHub API GET /repos/o/r/actions/workflows/run-sweep.yml/runs"),
        "{err}"
    );
}
