//! Under act (harness and its limits: `test_kit::act`): the
//! `last-main-run` baseline (issue #24 item 4). A first run produces
//! `results_bmk`; the fake's Actions API lists that run as the newest
//! successful push run of `run-sweep.yml` on `main` and serves its artifact
//! as a zip behind a redirect; a labelled PR run with
//! `compare-baseline: last-main-run` then compares against it.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use serde_json::{Value, json};
use test_kit::act::*;
use test_kit::act_scenario;

/// The id the fake gives the first run (act gives every run id 1).
const MAIN_RUN_ID: u64 = 4101;
const MAIN_RUN_DAY: &str = "2026-12-01";

/// Answers the success-rate job's calls for act's run (id 1).
fn serve_jobs(h: &Harness) {
    h.serve_recorded_run();
}

#[test]
fn a_pr_compares_against_the_last_main_runs_results_under_act() {
    act_scenario!(act);
    let mut h = harness(act);

    // 1. The first run: the manual entry (examples/e2e-tests.yml) sweeps
    //    the seed config at conc 4 and uploads results_bmk.
    let line = format!("test-config --config-keys {SEED_KEY} --conc 4");
    h.from_command(&line);
    serve_jobs(&h);
    let first = h.run_workflow(
        "e2e-tests.yml",
        "workflow_dispatch",
        &json!({"inputs": {"generate-command": line, "test-name": "act main baseline"}}),
    );
    first.assert_ok("act_baseline: the first run");
    let first_secs = first.secs;
    let first_store = h.artifacts.join(ACT_RUN_ID.to_string());
    let first_agg: Value = serde_json::from_str(
        &std::fs::read_to_string(first_store.join("results_bmk/agg_bmk.json")).unwrap(),
    )
    .unwrap();
    let baseline_points = first_agg.as_array().unwrap().len();
    assert!(baseline_points > 0, "the first run has no results");

    // act gives every run the id 1 (ACT_RUN_ID), so the PR run would upload
    // into the first run's directory and the two runs would be one to the
    // fake. The first run's artifacts move to the id the fake lists it
    // under, as GitHub would have numbered it.
    let main_store = h.artifacts.join(MAIN_RUN_ID.to_string());
    std::fs::rename(&first_store, &main_store).unwrap();
    // The runs API: that run as the newest successful push run of the
    // caller's run-sweep.yml on main (at the base commit), its results_bmk
    // served as a zip of the harness's artifact directory, behind a 302.
    let main_sha = h.scratch.base.clone();
    h.fake.with_workflow_runs(
        REPO,
        "run-sweep.yml",
        vec![json!({
            "id": MAIN_RUN_ID,
            "name": "Run Sweep",
            "event": "push",
            "head_branch": "main",
            "head_sha": main_sha,
            "status": "completed",
            "conclusion": "success",
            "created_at": format!("{MAIN_RUN_DAY}T09:30:00Z"),
            "html_url": format!("https://github.com/{REPO}/actions/runs/{MAIN_RUN_ID}"),
        })],
    );
    let artifact_id = h.fake.with_artifact(
        REPO,
        MAIN_RUN_ID,
        "results_bmk",
        test_kit::zip_dir(&main_store.join("results_bmk")),
    );

    // 2. The PR run, its caller (the test's copy only) naming the
    //    last-main-run baseline instead of the benchmarks API.
    let caller = h.scratch.work.join(".github/workflows/run-sweep.yml");
    let text = std::fs::read_to_string(&caller).unwrap();
    let url_line = text
        .lines()
        .find(|l| l.trim_start().starts_with("compare-baseline-url:"))
        .unwrap()
        .to_string();
    std::fs::write(
        &caller,
        text.replacen(&url_line, "      compare-baseline: last-main-run", 1),
    )
    .unwrap();
    h.plan_pr_sweep();
    let pr = h.run_labelled_pr();
    pr.assert_ok("act_baseline: the PR run");
    let secs = pr.secs;
    let ran = pr.jobs(SWEEP_PREFIX);
    assert_eq!(
        ran.get("compare-results"),
        Some(&Outcome::Succeeded),
        "{ran:#?}"
    );

    // The fake: the runs listed with GitHub's filters, the artifact
    // downloaded through its redirect.
    let reqs = h.fake.requests();
    let list = reqs
        .iter()
        .find(|r| r.path == format!("/repos/{REPO}/actions/workflows/run-sweep.yml/runs"))
        .expect("compare-results listed the runs of run-sweep.yml");
    for (k, v) in [("branch", "main"), ("event", "push"), ("status", "success")] {
        assert_eq!(list.query.get(k).map(String::as_str), Some(v), "{list:?}");
    }
    assert_eq!(
        h.fake.count(
            "GET",
            &format!("/repos/{REPO}/actions/artifacts/{artifact_id}/zip")
        ),
        1
    );
    assert_eq!(
        h.fake.count(
            "GET",
            &format!("{}{artifact_id}.zip", fake_github::ARTIFACT_BLOB_PREFIX)
        ),
        1,
        "the redirect target was fetched"
    );

    // The comment names the baseline and compares matched points.
    let comments = h.fake.comments(REPO, PR);
    assert_eq!(comments.len(), 1);
    let body = comments[0]["body"].as_str().unwrap();
    let sha7 = &main_sha[..7];
    let named = format!("main @ {sha7} (run {MAIN_RUN_ID}, {MAIN_RUN_DAY})");
    assert!(
        body.contains(&format!("## Benchmark comparison vs {named}")),
        "the comment does not name the baseline {named:?}:\n{body}"
    );
    assert!(
        body.contains(&format!(
            "**Verdict: ✅ 0 points regressed (0 metrics) · 0 improved · {baseline_points} unchanged · 0 inconclusive · "
        )),
        "the comment lacks {baseline_points} matched points:\n{body}"
    );
    assert!(
        body.contains(&format!("** ({baseline_points} matched point")),
        "{body}"
    );
    assert!(!body.contains("\\`"), "{body}");
    let failed = ran.values().filter(|o| **o == Outcome::Failed).count();
    eprintln!(
        "act_baseline summary: PR run {} jobs succeeded, {failed} failed, {baseline_points} points matched against {named}; act wall time {secs:.1} s (first run {first_secs:.1} s)",
        ran.len() - failed
    );
}
