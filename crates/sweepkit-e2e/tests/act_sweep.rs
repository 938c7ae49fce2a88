//! The act scenarios of issue #24 (the harness and its limits:
//! `act_harness/mod.rs`).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod act_harness;

use act_harness::*;

use std::collections::{BTreeMap, BTreeSet};

use fake_github::Route;
use serde_json::{Value, json};
use sweepkit_e2e::tool;
#[test]
fn a_labelled_pr_runs_the_canary_then_every_leg_and_posts_one_verdict_under_act() {
    let Some(act) = act_or_skip() else {
        return;
    };
    let _one = ONE_ACT_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = harness(act);

    // The legs the sweep must run, from the dry run over the same range.
    let dry = dry_run(&h.scratch);
    let legs = dry["legs"].as_array().unwrap().clone();
    assert!(!legs.is_empty(), "the dry run plans no leg: {dry}");
    h.map_runners(&legs);

    // The API the run reads and writes: the PR's comments (stateful), and
    // this run's jobs for calc-success-rate. act fills no jobs API, so the
    // fake answers it in the shape of the real job list of the seed run
    // (conformance fixture success-rate/qwen35-b200-nscale-full-sweep),
    // every leg completed successfully as under act, on the label act ran.
    h.fake.with_comments(REPO, PR, vec![]);
    h.serve_recorded_run();

    let (ok, log, secs) = h.run(
        "pull_request",
        &pr_event(&h.scratch, "labeled", "full-sweep-enabled"),
    );
    if std::env::var("SWEEPKIT_ACT_KEEP").as_deref() == Ok("1") {
        let kept = std::env::temp_dir().join("sweepkit-act-kept");
        let _ = std::fs::remove_dir_all(&kept);
        copy_tree(&h.dir, &kept);
        eprintln!("kept in {}", kept.display());
    }
    let outcomes = job_outcomes(&log);
    eprintln!("scenario a: act ran {secs:.1} s; jobs: {outcomes:#?}");
    let tail: Vec<&str> = log.lines().rev().take(60).collect();
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(ok, "act failed:\n{tail}");

    // Every runs-on label is mapped (an unmapped one makes act skip the
    // job with a warning only).
    assert!(
        !log.contains("skipping unsupported platform")
            && !log.contains("Skipping unsupported platform"),
        "act skipped a job for an unmapped runs-on label:\n{tail}"
    );

    // The job graph: these ran and succeeded, nothing else ran (act
    // prints nothing for a skipped job).
    let prefix = "sweep/Run Sweep (sweepkit)/";
    let ran: BTreeMap<String, Outcome> = outcomes
        .iter()
        .map(|(k, v)| (k.strip_prefix(prefix).unwrap_or(k).to_string(), v.clone()))
        .collect();
    let failed: Vec<&String> = ran
        .iter()
        .filter(|(_, o)| **o == Outcome::Failed)
        .map(|(k, _)| k)
        .collect();
    assert!(failed.is_empty(), "jobs failed: {failed:?}\n{tail}");
    let fixed_jobs: BTreeSet<&str> = ran
        .keys()
        .filter(|k| !k.contains(" / "))
        .map(String::as_str)
        .collect();
    assert_eq!(
        fixed_jobs,
        BTreeSet::from([
            "policy",
            "check-changelog",
            "setup",
            "collect-results",
            "collect-evals",
            "upload-changelog-metadata",
            "calc-success-rate",
            "compare-results",
            "comment-unofficial-run-visualizer",
        ]),
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
    let mut ran_legs: Vec<(u64, u64, u64, u64, bool)> = log
        .lines()
        .filter_map(|l| l.split_once("| launcher: ").map(|(_, t)| t))
        .map(|t| {
            let w: Vec<&str> = t.split_whitespace().collect();
            let num = |k: &str| -> u64 {
                let i = w.iter().position(|x| *x == k).unwrap();
                w[i + 1].parse().unwrap()
            };
            let tp = w[2].strip_prefix("TP").unwrap().parse().unwrap();
            let eval = w[w.iter().position(|x| *x == "eval-only").unwrap() + 1] == "true";
            (tp, num("conc"), num("isl"), num("osl"), eval)
        })
        .collect();
    let mut want_legs: Vec<(u64, u64, u64, u64, bool)> = legs
        .iter()
        .map(|l| {
            let r = &l["row"];
            (
                r["tp"].as_u64().unwrap(),
                r["conc"].as_u64().unwrap(),
                r["isl"].as_u64().unwrap(),
                r["osl"].as_u64().unwrap(),
                l["family"] == "evals",
            )
        })
        .collect();
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
    let names: BTreeSet<String> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    let count = |p: &str| names.iter().filter(|n| n.starts_with(p)).count();
    let n_evals = want_legs.iter().filter(|l| l.4).count();
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
    let writes: Vec<String> = h
        .fake
        .requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        writes,
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
    let Some(act) = act_or_skip() else {
        return;
    };
    let _one = ONE_ACT_RUN.lock().unwrap_or_else(|e| e.into_inner());
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
    let (ok, log, secs) = h.run(
        "pull_request",
        &pr_event_from(
            &h.scratch,
            "labeled",
            "full-sweep-enabled",
            "external/bench",
        ),
    );
    let outcomes = job_outcomes(&log);
    eprintln!("scenario e: act ran {secs:.1} s; jobs: {outcomes:#?}");
    let tail: Vec<&str> = log.lines().rev().take(40).collect();
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(ok, "act failed:\n{tail}");
    let prefix = "sweep/Run Sweep (sweepkit)/";
    let ran: BTreeMap<String, Outcome> = outcomes
        .iter()
        .map(|(k, v)| (k.strip_prefix(prefix).unwrap_or(k).to_string(), v.clone()))
        .collect();
    assert_eq!(
        ran,
        BTreeMap::from([
            ("policy".to_string(), Outcome::Succeeded),
            ("check-changelog".to_string(), Outcome::Succeeded),
        ]),
        "a fork PR runs only the policy and the changelog gate"
    );
    assert!(!log.contains("| launcher: "), "a GPU leg ran for a fork PR");
    let writes: Vec<String> = h
        .fake
        .requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "a fork PR wrote to GitHub: {writes:?}");
    assert!(h.fake.comments(REPO, PR).is_empty());
    let names: Vec<String> = std::fs::read_dir(h.artifacts.join(ACT_RUN_ID.to_string()))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        names.iter().all(|n| n.starts_with('.')),
        "artifacts of a fork PR: {names:?}"
    );
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
    let Some(act) = act_or_skip() else {
        return;
    };
    let _one = ONE_ACT_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = harness(act);
    let line = format!("test-config --config-keys {SEED_KEY} --conc 4");
    let matrix: Value = serde_json::from_str(&sh(
        &h.scratch.work,
        &tool("generate-matrix"),
        &["from-command", "--command-line", &line],
    ))
    .unwrap();
    let mut want: Vec<(u64, u64, u64, u64)> = Vec::new();
    for side in ["single_node", "multi_node"] {
        for rows in matrix[side].as_object().unwrap().values() {
            for r in rows.as_array().unwrap() {
                h.labels.insert(r["runner"].as_str().unwrap().to_string());
                want.push((
                    r["tp"].as_u64().unwrap(),
                    r["conc"].as_u64().unwrap(),
                    r["isl"].as_u64().unwrap(),
                    r["osl"].as_u64().unwrap(),
                ));
            }
        }
    }
    assert!(!want.is_empty(), "{matrix}");
    h.serve_recorded_run();
    let (ok, log, secs) = h.run_workflow(
        "e2e-tests.yml",
        "workflow_dispatch",
        &json!({"inputs": {"generate-command": line, "test-name": "act manual entry"}}),
    );
    let outcomes = job_outcomes(&log);
    eprintln!("scenario d: act ran {secs:.1} s; jobs: {outcomes:#?}");
    let tail: Vec<&str> = log.lines().rev().take(40).collect();
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(ok, "act failed:\n{tail}");
    let ran: BTreeMap<String, Outcome> = outcomes
        .iter()
        .map(|(k, v)| {
            let short = k.strip_prefix("e2e/Run Sweep (sweepkit)/").unwrap_or(k);
            (short.to_string(), v.clone())
        })
        .collect();
    assert!(
        ran.values().all(|o| *o == Outcome::Succeeded),
        "{ran:#?}\n{tail}"
    );
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
    let mut ran_legs: Vec<(u64, u64, u64, u64)> = log
        .lines()
        .filter_map(|l| l.split_once("| launcher: ").map(|(_, t)| t))
        .map(|t| {
            let w: Vec<&str> = t.split_whitespace().collect();
            let num = |k: &str| -> u64 {
                let i = w.iter().position(|x| *x == k).unwrap();
                w[i + 1].parse().unwrap()
            };
            let tp = w[2].strip_prefix("TP").unwrap().parse().unwrap();
            (tp, num("conc"), num("isl"), num("osl"))
        })
        .collect();
    ran_legs.sort();
    want.sort();
    assert_eq!(ran_legs, want, "legs run vs generate-matrix from-command");
    assert!(!ran.keys().any(|k| k.starts_with("canary")), "{ran:#?}");
    let writes: Vec<String> = h
        .fake
        .requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
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
