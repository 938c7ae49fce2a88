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

/// A runner file shaped like the reference's: group labels listing
/// machines, and `cluster:` labels (the buckets) listing the same machines.
const SEED_RUNNERS: &str = "\
labels:
  b200:
    - b200-dgxc_00
    - b200-nscale-slurm_0
    - b200-nscale-slurm_1
    - b200-nscale-slurm_2
  cluster:b200-dgxc:
    - b200-dgxc_00
  cluster:b200-nscale:
    - b200-nscale-slurm_0
    - b200-nscale-slurm_1
    - b200-nscale-slurm_2
";

/// The seed run's shape (issue #24 item 3): nine GPU legs whose names carry
/// the group label `b200` (`matrix.config.runner`), each run by a machine of
/// the `b200-nscale` cluster; one leg on a machine no list names; the
/// GitHub-hosted jobs around them; a skipped matrix parent.
fn seed_server() -> FakeGitHub {
    let s = test_kit::fake_github();
    s.add_route(Route::json("GET", "/user", json!({"login": "ci"})));
    s.add_route(Route::json(
        "GET",
        RUN,
        json!({"id": 77, "name": "Run Sweep"}),
    ));
    let mut jobs = vec![
        json!({"name": "setup", "conclusion": "success", "run_attempt": 1,
               "runner_name": "GitHub Actions 3", "labels": ["ubuntu-latest"]}),
        json!({"name": "multi-node 8k1k /", "conclusion": "skipped", "run_attempt": 1,
               "runner_name": null, "labels": ["ubuntu-latest"]}),
    ];
    for (i, conc) in [4, 8, 16, 32, 64, 128, 256, 512, 1024].iter().enumerate() {
        jobs.push(json!({
            "name": format!("single-node 8k1k / p3.000 | qwen3.5 fp4 b200 sgl TP2 c{conc}"),
            "conclusion": "success", "run_attempt": 1,
            "runner_name": format!("b200-nscale-slurm_{}", i % 3),
            "labels": ["self-hosted", "b200", format!("ci-job-3.000-{i}"), "ci-attempt-1"],
        }));
    }
    jobs.push(json!({
        "name": "eval / p3.000 | qwen3.5 fp4 b200 sgl TP2 c64 | eval-only",
        "conclusion": "failure", "run_attempt": 1,
        "runner_name": "b200-new-box_7",
        "labels": ["self-hosted", "b200", "ci-job-3.000-x", "ci-attempt-1"],
    }));
    jobs.push(json!({"name": "collect-results / collect-results", "conclusion": "success",
                     "run_attempt": 1, "runner_name": "GitHub Actions 4", "labels": ["ubuntu-latest"]}));
    s.add_route(Route::paginated(
        "GET",
        JOBS,
        json!({"total_count": 0, "jobs": jobs}),
        "object:jobs",
    ));
    s
}

fn run_seed(server: &FakeGitHub, dir: &Path, by_runner: Option<&str>) -> Output {
    std::fs::create_dir_all(dir.join("configs")).expect("mkdir");
    std::fs::write(dir.join("configs/runners.yaml"), SEED_RUNNERS).expect("runners");
    let mut cmd = test_kit::command(env!("CARGO_BIN_EXE_success-rate"));
    cmd.arg("run_stats")
        .current_dir(dir)
        .github(server)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_RUN_ID", "77")
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"));
    if let Some(p) = by_runner {
        cmd.args(["--by-runner", p]);
    }
    cmd.output().expect("run success-rate")
}

/// The reference's `run_stats.json` for the seed run: its name rule finds no
/// bucket in `b200`, so nothing is counted.
const SEED_RUN_STATS: &str = "{\n  \"b200-dgxc\": {\n    \"n_success\": 0,\n    \"total\": 0\n  },\n  \"b200-nscale\": {\n    \"n_success\": 0,\n    \"total\": 0\n  }\n}";

#[test]
fn legs_named_by_group_label_are_placed_by_their_runner() {
    let s = seed_server();
    let dir = test_kit::temp_dir();
    let out = run_seed(&s, dir.path(), Some("run_stats_by_runner.json"));
    assert!(out.status.success(), "{}", stderr(&out));
    let recorded = std::fs::read_to_string(dir.path().join("run_stats.json")).expect("run_stats");
    assert_eq!(
        recorded, SEED_RUN_STATS,
        "run_stats.json keeps the reference's rule"
    );
    let text = std::fs::read_to_string(dir.path().join("run_stats_by_runner.json"))
        .expect("run_stats_by_runner.json");
    let placed: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        placed["clusters"],
        json!({"b200-dgxc": {"n_success": 0, "total": 0},
               "b200-nscale": {"n_success": 9, "total": 9}})
    );
    assert_eq!(placed["placed_by_runner"], 9);
    assert_eq!(placed["placed_by_name"], 0);
    assert_eq!(
        placed["unplaced"],
        json!({"n_success": 0, "total": 1, "jobs_left_out": 0, "jobs": [{
            "name": "eval / p3.000 | qwen3.5 fp4 b200 sgl TP2 c64 | eval-only",
            "run_attempt": 1, "runner_name": "b200-new-box_7", "conclusion": "failure"}]})
    );
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).expect("step summary");
    test_kit::assert_snapshot!("run_stats_by_runner_step_summary", summary);
}

#[test]
fn without_the_flag_only_run_stats_is_written() {
    let s = seed_server();
    let dir = test_kit::temp_dir();
    let out = run_seed(&s, dir.path(), None);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut files: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["configs", "run_stats.json", "summary.md"]);
    let recorded = std::fs::read_to_string(dir.path().join("run_stats.json")).expect("run_stats");
    assert_eq!(recorded, SEED_RUN_STATS);
}

#[test]
fn bad_token_writes_null_to_both_files() {
    let s = seed_server();
    s.add_route(
        Route::json("GET", "/user", json!({"message": "Bad credentials"})).with_status(401),
    );
    let dir = test_kit::temp_dir();
    let out = run_seed(&s, dir.path(), Some("by_runner.json"));
    assert!(out.status.success(), "{}", stderr(&out));
    for f in ["run_stats.json", "by_runner.json"] {
        assert_eq!(
            std::fs::read_to_string(dir.path().join(f)).expect(f),
            "null",
            "{f}"
        );
    }
}
