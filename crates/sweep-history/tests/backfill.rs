//! `sweep-history backfill` against the fake GitHub: past main push runs'
//! `results_bmk` artifacts appended oldest first with their PR, a run
//! without the artifact counted, a pull request run never taken, and a
//! second backfill appending nothing (resumable).

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use test_kit::{CommandExt, FakeGitHub, Route, zip_of};

const REPO: &str = "acme/bench";
const SEED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/conformance/fixtures/seed-compare"
);

fn run(id: u64, event: &str, day: u64) -> Value {
    json!({
        "id": id, "run_attempt": 1, "event": event, "head_branch": "main",
        "head_sha": format!("{id:040x}"), "status": "completed", "conclusion": "success",
        "created_at": format!("2026-11-{day:02}T10:00:00Z"),
    })
}

fn backfill(server: &FakeGitHub, store: &Path) -> Output {
    test_kit::command(env!("CARGO_BIN_EXE_sweep-history"))
        .github(server)
        .args(["backfill", "--repo", REPO, "--max-runs", "10", "--store"])
        .arg(store)
        .output()
        .expect("runs")
}

#[test]
fn past_main_runs_are_appended_oldest_first_and_a_second_backfill_appends_nothing() {
    let server = FakeGitHub::start().expect("fake");
    let agg = std::fs::read_to_string(format!("{SEED}/baseline/agg_bmk.json")).expect("fixture");
    // Newest first, as GitHub lists them: 303 has no artifact (expired),
    // 302 is a pull request run on a branch named main (never main's).
    server.with_workflow_runs(
        REPO,
        "run-sweep.yml",
        vec![
            run(304, "push", 4),
            run(303, "push", 3),
            run(302, "pull_request", 2),
            run(301, "push", 1),
        ],
    );
    for id in [304, 302, 301] {
        server.with_artifact(REPO, id, "results_bmk", zip_of(&[("agg_bmk.json", &agg)]));
    }
    // GitHub lists a run without artifacts as an empty list.
    server.add_route(Route::json(
        "GET",
        &format!("/repos/{REPO}/actions/runs/303/artifacts"),
        json!({ "total_count": 0, "artifacts": [] }),
    ));
    server.add_route(Route::json(
        "GET",
        &format!("/repos/{REPO}/commits/{:040x}/pulls", 304),
        json!([{ "number": 88, "merged_at": "2026-11-04T09:00:00Z" }]),
    ));
    let dir = tempfile::tempdir().expect("tmp");
    let store = dir.path().join("h");
    let out = backfill(&server, &store);
    let stdout = String::from_utf8_lossy(&out.stdout);
    test_kit::assert_exit(&out, 0);
    assert_eq!(
        stdout.trim(),
        "backfill: 3 run(s) listed, 2 appended, 0 already in the history, 1 without a results_bmk artifact (expired or never made): 303"
    );
    let index = std::fs::read_to_string(store.join("runs.jsonl")).expect("index");
    let runs: Vec<Value> = index
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    assert_eq!(
        runs.iter()
            .map(|r| r["run_id"].as_u64())
            .collect::<Vec<_>>(),
        vec![Some(301), Some(304)]
    );
    assert_eq!(runs[1]["pr"], json!(88));
    assert!(runs[0].get("pr").is_none());
    // Resumable: nothing new, nothing downloaded again.
    let zips_before = server
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/zip"))
        .count();
    let again = backfill(&server, &store);
    assert!(again.status.success());
    assert_eq!(
        String::from_utf8_lossy(&again.stdout).trim(),
        "backfill: 3 run(s) listed, 0 appended, 2 already in the history, 1 without a results_bmk artifact (expired or never made): 303"
    );
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.path.ends_with("/zip"))
            .count(),
        zips_before
    );
}

#[test]
fn an_artifact_that_is_not_an_aggregate_stops_the_backfill_with_exit_2() {
    let server = FakeGitHub::start().expect("fake");
    server.with_workflow_runs(REPO, "run-sweep.yml", vec![run(401, "push", 1)]);
    server.with_artifact(REPO, 401, "results_bmk", zip_of(&[("other.txt", "hello")]));
    let dir = tempfile::tempdir().expect("tmp");
    let out = backfill(&server, &dir.path().join("h"));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("run 401: artifact results_bmk: holds no agg_bmk.json"),
        "{err}"
    );
}
