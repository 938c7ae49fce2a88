//! `success-rate` end to end against the loopback fake GitHub, with faults.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use test_kit::{CommandExt, FakeGitHub, Fault, Route, stderr, stdout};

const REPO: &str = "acme/bench";
const RUN: &str = "/repos/acme/bench/actions/runs/77";
const JOBS: &str = "/repos/acme/bench/actions/runs/77/jobs";

fn run(server: &FakeGitHub, dir: &Path) -> Output {
    std::fs::create_dir_all(dir.join("configs")).expect("mkdir");
    std::fs::write(
        dir.join("configs/runners.yaml"),
        "labels:\n  h100: [a]\n  cluster:h100-cw: [a]\n  cluster:b200-nb: [b]\n",
    )
    .expect("runners");
    test_kit::command(env!("CARGO_BIN_EXE_success-rate"))
        .arg("run_stats")
        .current_dir(dir)
        .github(server)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_RUN_ID", "77")
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env("SWEEPKIT_GITHUB_MAX_ATTEMPTS", "4")
        .output()
        .expect("run success-rate")
}

fn server_with_jobs(n: usize) -> FakeGitHub {
    let s = test_kit::fake_github();
    s.add_route(Route::json("GET", "/user", json!({"login": "ci"})));
    s.add_route(Route::json(
        "GET",
        RUN,
        json!({"id": 77, "name": "Run Sweep"}),
    ));
    // n jobs on h100-cw alternating success/failure, one skipped, one unmatched
    let mut jobs: Vec<Value> = (0..n)
        .map(|i| {
            json!({"name": format!("bench / p{i} | cluster:h100-cw c{i}"),
                   "conclusion": if i % 2 == 0 { "success" } else { "failure" }})
        })
        .collect();
    jobs.push(json!({"name": "bench b200-nb", "conclusion": "skipped"}));
    jobs.push(json!({"name": "collect-results", "conclusion": "success"}));
    s.add_route(Route::paginated(
        "GET",
        JOBS,
        json!({"total_count": 0, "jobs": jobs}),
        "object:jobs",
    ));
    s
}

fn stats(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("run_stats.json")).expect("run_stats.json");
    assert!(!text.ends_with('\n'));
    serde_json::from_str(&text).expect("json")
}

#[test]
fn counts_over_pages_after_transient_faults() {
    let s = server_with_jobs(150);
    s.inject("GET", "/user", [Fault::Status(500)]);
    s.inject("GET", RUN, [Fault::TooManyRequests { retry_after: 0 }]);
    s.inject(
        "GET",
        JOBS,
        [
            Fault::Status(502),
            Fault::SecondaryRateLimit {
                retry_after: Some(0),
            },
        ],
    );
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stats(dir.path()),
        json!({"b200-nb": {"n_success": 0, "total": 0}, "h100-cw": {"n_success": 75, "total": 150}})
    );
    test_kit::assert_snapshot!("run_stats_table", stdout(&out));
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).expect("step summary");
    test_kit::assert_snapshot!("run_stats_step_summary", summary);
    let jobs_reqs: Vec<_> = s
        .requests()
        .into_iter()
        .filter(|r| r.path == JOBS)
        .collect();
    assert!(
        jobs_reqs
            .iter()
            .all(|r| r.query.get("filter").map(String::as_str) == Some("all"))
    );
    assert_eq!(jobs_reqs.len(), 4, "2 faults + 2 pages of 100");
}

#[test]
fn clear_error_and_no_file_after_the_retry_budget() {
    let s = server_with_jobs(3);
    s.fail_always("GET", JOBS, Fault::Status(503));
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("GitHub API GET /repos/acme/bench/actions/runs/77/jobs?filter=all&per_page=100 failed: HTTP 503"),
        "{err}"
    );
    assert!(err.contains("gave up after 4 attempts"), "{err}");
    assert!(!dir.path().join("run_stats.json").exists());
}

#[test]
fn bad_token_writes_null_and_exits_zero() {
    let s = server_with_jobs(3);
    s.add_route(
        Route::json("GET", "/user", json!({"message": "Bad credentials"})).with_status(401),
    );
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path());
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("run_stats.json")).expect("file"),
        "null"
    );
    assert_eq!(s.count("GET", RUN), 0);
    assert!(stdout(&out).contains("No data to display"));
}

#[test]
fn integration_token_without_user_access_still_counts() {
    let s = server_with_jobs(2);
    s.add_route(
        Route::json(
            "GET",
            "/user",
            json!({"message": "Resource not accessible by integration"}),
        )
        .with_status(403),
    );
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stats(dir.path())["h100-cw"],
        json!({"n_success": 1, "total": 2})
    );
}
