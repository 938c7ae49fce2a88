//! The act scenarios of issue #24 (the harness and its limits:
//! `test_kit::act`, crates/test-kit/src/act/).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};

use fake_github::Route;
use serde_json::{Value, json};
use test_kit::act::*;
use test_kit::act_scenario;

/// Scenario a: a PR labelled `full-sweep-enabled` runs the canary, then
/// every leg the dry run plans, and posts one comment with the verdict.
#[test]
fn a_labelled_pr_runs_the_canary_then_every_leg_and_posts_one_verdict_under_act() {
    act_scenario!(act);
    let mut h = harness(act);

    // The legs the sweep must run, from the dry run over the same range.
    let legs = h.plan_pr_sweep();

    // The API the run reads and writes: the PR's comments (stateful, none
    // yet), and this run's jobs for calc-success-rate. act fills no jobs
    // API, so the fake answers it in the shape of the real job list of the
    // seed run (conformance fixture
    // success-rate/qwen35-b200-nscale-full-sweep), every leg completed
    // successfully as under act, on the label act ran.
    h.serve_recorded_run();

    let run = h.run_labelled_pr();
    h.keep_if_asked("sweep");
    run.assert_ok("scenario a");
    let (log, secs, tail) = (&run.log, run.secs, run.tail());

    // Every runs-on label is mapped (an unmapped one makes act skip the
    // job with a warning only).
    assert!(
        !run.skipped_unmapped_job(),
        "act skipped a job for an unmapped runs-on label:\n{tail}"
    );

    // The job graph: these ran and succeeded, nothing else ran (act
    // prints nothing for a skipped job).
    let prefix = SWEEP_PREFIX;
    let ran = run.jobs(prefix);
    let failed = failed_jobs(&ran);
    assert!(failed.is_empty(), "jobs failed: {failed:?}\n{tail}");
    let fixed_jobs = fixed_jobs(&ran);
    assert_eq!(
        fixed_jobs,
        BTreeSet::from(PR_SWEEP_JOBS),
        "jobs that ran (reuse-sweep-gate and the ingest jobs are skipped)"
    );
    // One plan job per part the sweep called the leg workflow for: the
    // canary, the 8k1k legs, the evals.
    let plans: BTreeSet<&str> = ran
        .keys()
        .filter(|k| is_plan(k))
        .map(String::as_str)
        .collect();
    assert_eq!(
        plans,
        BTreeSet::from([
            "canary / plan canary 1",
            "eval / plan evals 1",
            "single-node 8k1k / plan sn-8k1k 1"
        ]),
        "{ran:#?}"
    );

    // The legs: one launcher line per leg, equal leg for leg to the dry run.
    let mut ran_legs = run.launched();
    let mut want_legs: Vec<Launched> = legs.iter().map(Launched::of_dry_run_leg).collect();
    ran_legs.sort();
    want_legs.sort();
    assert_eq!(ran_legs, want_legs, "legs run vs check-changelog dry-run");
    let leg_jobs: Vec<&String> = ran.keys().filter(|k| is_leg(k)).collect();
    assert_eq!(leg_jobs.len(), legs.len(), "{leg_jobs:#?}");

    // The canary first: it finished before any other leg started.
    let canary_done = log
        .lines()
        .position(|l| l.starts_with(&format!("[{prefix}canary / p")) && l.contains("Job succeeded"))
        .unwrap();
    let first_other = log
        .lines()
        .position(|l| {
            l.starts_with(&format!("[{prefix}"))
                && l[1 + prefix.len()..].contains(" / ")
                && !l[1 + prefix.len()..].starts_with("canary / ")
        })
        .unwrap();
    assert!(
        canary_done < first_other,
        "a leg started before the canary finished"
    );
    let canary_legs: Vec<&Value> = legs.iter().filter(|l| l["canary"] == true).collect();
    assert_eq!(canary_legs.len(), 1, "the dry run names one canary");
    let c = &canary_legs[0]["row"];
    assert!(
        ran.keys()
            .any(|k| k.starts_with("canary / ")
                && k.ends_with(&format!("TP{} c{}", c["tp"], c["conc"]))),
        "the canary leg is the dry run's canary {c}"
    );

    // The artifacts of the run.
    let store = h.artifacts.join(ACT_RUN_ID.to_string());
    let names = h.artifact_names();
    let count = |p: &str| names.iter().filter(|n| n.starts_with(p)).count();
    let n_evals = want_legs.iter().filter(|l| l.eval_only).count();
    assert_eq!(count("bmk_"), legs.len() - n_evals, "{names:#?}");
    assert_eq!(
        count("eval_") - usize::from(names.contains("eval_results_all")),
        n_evals,
        "{names:#?}"
    );
    for a in [
        "search-space-config",
        "results_bmk",
        "eval_results_all",
        "changelog-metadata",
        "run-stats",
        "compare-report",
    ] {
        assert!(names.contains(a), "artifact {a} missing: {names:#?}");
    }
    let agg: Value = serde_json::from_str(
        &std::fs::read_to_string(store.join("results_bmk/agg_bmk.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        agg.as_array().unwrap().len(),
        legs.len() - n_evals,
        "results_bmk holds one row per benchmark leg"
    );

    // The fake: one comment on the PR, with the verdict; nothing else written.
    assert_eq!(
        h.writes(),
        vec![format!("POST /repos/{REPO}/issues/{PR}/comments")],
        "writes to GitHub"
    );
    let comments = h.fake.comments(REPO, PR);
    assert_eq!(comments.len(), 1);
    let body = comments[0]["body"].as_str().unwrap();
    eprintln!("comment:\n{body}");
    for r in h.fake.requests() {
        eprintln!("fake: {} {}", r.method, r.path);
    }
    assert!(
        h.fake.count(
            "GET",
            &format!("/repos/{REPO}/actions/runs/{ACT_RUN_ID}/jobs")
        ) >= 1,
        "calc-success-rate listed the run's jobs"
    );
    for want in [
        // compare-results' verdict over the run's own results.
        "**Verdict: ⚠️ 0 points regressed (0 metrics) · 0 improved · 0 unchanged · 0 inconclusive · ",
        "qwen3.5 fp4 b200 sglang, 8k1k (spec: none), TP4 EP1, conc 4",
        // success-rate read the run's jobs and placed every leg by the
        // runner that ran it (the reference's name rule counts 0 of them:
        // the leg names carry the group label `b200`).
        "#### Success rate per hardware",
        "| b200-nscale | 9 / 9 | 100\u{a0}% |",
        &format!("https://github.com/{REPO}/actions/runs/{ACT_RUN_ID}"),
    ] {
        assert!(body.contains(want), "the comment lacks {want:?}:\n{body}");
    }
    assert!(
        !body.contains("could not read this run's jobs"),
        "success-rate did not read the jobs:\n{body}"
    );
    assert!(
        !body.contains("could not be placed") && !body.contains("No GPU jobs were counted"),
        "every leg is placed on its cluster:\n{body}"
    );
    // One compare row per benchmark leg, none matched (no baseline rows).
    assert_eq!(
        body.matches("- no baseline: ").count(),
        legs.len() - n_evals,
        "{body}"
    );
    let all_jobs = workflow_job_count(&h.scratch.work);
    eprintln!(
        "scenario a summary: {} jobs succeeded, 0 failed; {} of the sweep's {all_jobs} job ids ran, {} calls of the leg workflow; {} legs; act wall time {secs:.1} s",
        ran.len(),
        fixed_jobs.len(),
        plans.len(),
        legs.len()
    );
}

/// Scenario e: a PR from a fork, labelled `full-sweep-enabled`, with a
/// read-only token (the fake refuses every write with GitHub's 403): only
/// the policy and the changelog gate run; no GPU leg, nothing written.
#[test]
fn a_fork_pr_with_a_read_only_token_runs_only_the_policy_and_the_gate_under_act() {
    act_scenario!(act);
    let h = harness(act);
    h.fake.with_comments(REPO, PR, vec![]);
    let refused = |method: &str, path: &str| {
        h.fake.add_route(
            Route::json(
                method,
                path,
                json!({
                    "message": "Resource not accessible by integration",
                    "documentation_url": "https://docs.github.com/rest",
                    "status": "403"
                }),
            )
            .with_status(403),
        );
    };
    refused("POST", &format!("/repos/{REPO}/issues/{PR}/comments"));
    let run = h.run_labelled_fork_pr();
    run.assert_ok("scenario e");
    let secs = run.secs;
    let ran = run.jobs(SWEEP_PREFIX);
    assert_eq!(
        ran,
        BTreeMap::from([
            ("policy".to_string(), Outcome::Succeeded),
            ("check-changelog".to_string(), Outcome::Succeeded),
        ]),
        "a fork PR runs only the policy and the changelog gate"
    );
    assert!(run.launched().is_empty(), "a GPU leg ran for a fork PR");
    let writes = h.writes();
    assert!(writes.is_empty(), "a fork PR wrote to GitHub: {writes:?}");
    assert!(h.fake.comments(REPO, PR).is_empty());
    let names = h.artifact_names();
    assert!(names.is_empty(), "artifacts of a fork PR: {names:?}");
    eprintln!(
        "scenario e summary: {} jobs succeeded, 0 failed, {} skipped; act wall time {secs:.1} s",
        ran.len(),
        workflow_job_count(&h.scratch.work) - ran.len()
    );
}

/// Scenario d: the manual entry (examples/e2e-tests.yml, `workflow_dispatch`
/// with a `test-config` command line) runs exactly the legs
/// `generate-matrix from-command` prints for that line, no canary, and
/// writes nothing to GitHub (no PR comment, no ingest).
#[test]
fn the_manual_entry_runs_exactly_the_legs_of_its_command_line_under_act() {
    act_scenario!(act);
    let mut h = harness(act);
    let line = format!("test-config --config-keys {SEED_KEY} --conc 4");
    let matrix = h.from_command(&line);
    let mut want: Vec<Launched> = Vec::new();
    for side in ["single_node", "multi_node"] {
        for rows in matrix[side].as_object().unwrap().values() {
            for r in rows.as_array().unwrap() {
                want.push(Launched::of_row(r, false));
            }
        }
    }
    assert!(!want.is_empty(), "{matrix}");
    h.serve_recorded_run();
    let run = h.run_workflow(
        "e2e-tests.yml",
        "workflow_dispatch",
        &json!({"inputs": {"generate-command": line, "test-name": "act manual entry"}}),
    );
    run.assert_ok("scenario d");
    let secs = run.secs;
    let ran = run.jobs("e2e/Run Sweep (sweepkit)/");
    assert!(failed_jobs(&ran).is_empty(), "{ran:#?}\n{}", run.tail());
    let fixed = fixed_jobs(&ran);
    assert_eq!(
        fixed,
        BTreeSet::from([
            "End-to-End Tests/check the mode",
            "policy",
            "setup",
            "collect-results",
            "upload-changelog-metadata",
            "calc-success-rate",
            "compare-results",
        ]),
        "jobs that ran (no canary, no comment, no ingest on a manual entry)"
    );
    assert_eq!(
        ran.keys().filter(|k| is_plan(k)).collect::<Vec<_>>(),
        ["single-node 8k1k / plan sn-8k1k 1"],
        "one part: the 8k1k legs"
    );
    let mut ran_legs = run.launched();
    ran_legs.sort();
    want.sort();
    assert_eq!(ran_legs, want, "legs run vs generate-matrix from-command");
    assert!(!ran.keys().any(|k| k.starts_with("canary")), "{ran:#?}");
    let writes = h.writes();
    assert!(
        writes.is_empty(),
        "the manual entry wrote to GitHub: {writes:?}"
    );
    assert!(
        h.artifacts
            .join(format!("{ACT_RUN_ID}/results_bmk/agg_bmk.json"))
            .is_file()
    );
    eprintln!(
        "scenario d summary: {} jobs succeeded, 0 failed; {} legs; act wall time {secs:.1} s",
        ran.len(),
        want.len()
    );
}
