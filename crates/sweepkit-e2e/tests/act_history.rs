//! Under act (harness and its limits: `act_harness/mod.rs`): main's memory
//! (issue #35 item 7). A manual run of main's code appends its aggregate to
//! the `sweepkit-history` branch of the scratch repository's bare remote
//! (the caller's history job, `sweepkit-history.yml`); the next PR's
//! compare, with `compare-baseline: history`, checks the branch out and
//! compares each point with its own series; neither that PR run nor a
//! fork's PR run writes to the branch. (The merge push that reuses a PR's
//! sweep appends too: scenario b, `act_reuse.rs`.)

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod act_harness;

use act_harness::*;

use serde_json::{Value, json};
use sweepkit_e2e::tool;

#[test]
fn a_main_run_appends_to_the_history_and_the_next_pr_compares_against_it_under_act() {
    let Some(act) = act_or_skip() else {
        return;
    };
    let _one = ONE_ACT_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = harness(act);
    assert_eq!(
        history_tip(&h.scratch),
        None,
        "no history before a main run"
    );

    // 1. A manual run of main's code (examples/e2e-tests.yml on main): the
    //    seed config at conc 4. Its history job appends the aggregate.
    let line = format!("test-config --config-keys {SEED_KEY} --conc 4");
    let matrix: Value = serde_json::from_str(&sh(
        &h.scratch.work,
        &tool("generate-matrix"),
        &["from-command", "--command-line", &line],
    ))
    .unwrap();
    for rows in matrix["single_node"].as_object().unwrap().values() {
        for r in rows.as_array().unwrap() {
            h.labels.insert(r["runner"].as_str().unwrap().to_string());
        }
    }
    h.serve_recorded_run();
    test_kit::git(&h.scratch.work, &["checkout", "-q", "main"]);
    let (ok, log, main_secs) = h.run_workflow(
        "e2e-tests.yml",
        "workflow_dispatch",
        &json!({
            "ref": "refs/heads/main",
            "repository": {"full_name": REPO, "name": "bench", "owner": {"login": "example"}, "default_branch": "main"},
            "inputs": {"generate-command": line, "test-name": "act main history"},
        }),
    );
    let ran = outcomes_of(&log, "");
    eprintln!("act_history: main run {main_secs:.1} s; jobs: {ran:#?}");
    assert!(ok, "the main run failed:\n{}", tail(&log));
    let history_job = ran
        .iter()
        .find(|(k, _)| k.starts_with("history/"))
        .map(|(k, v)| (k.clone(), v.clone()));
    assert!(
        matches!(&history_job, Some((_, Outcome::Succeeded))),
        "the main run's history job: {history_job:?}"
    );
    // After the append, the digest of what the run revealed: with one run
    // in the history, no change point.
    assert!(
        log.contains("No new change points on main since 20"),
        "the history job's digest:\n{}",
        tail(&log)
    );
    let agg: Value = serde_json::from_str(
        &std::fs::read_to_string(
            h.artifacts
                .join(ACT_RUN_ID.to_string())
                .join("results_bmk/agg_bmk.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let points = agg.as_array().unwrap().len();
    assert!(points > 0, "the main run has no results");
    let runs = history_runs(&h.scratch, &h.dir);
    assert_eq!(
        runs,
        vec![(ACT_RUN_ID, "workflow_dispatch".to_string(), points)],
        "the main run's rows landed on the history branch, once"
    );
    let tip = history_tip(&h.scratch).expect("a history branch");
    // Its results move away from act's one run id, as GitHub would number
    // a later run differently.
    std::fs::rename(
        h.artifacts.join(ACT_RUN_ID.to_string()),
        h.artifacts.join("4101"),
    )
    .unwrap();
    test_kit::git(&h.scratch.work, &["checkout", "-q", &h.scratch.branch]);

    // 2. The PR, its caller (the test's copy) comparing against main's
    //    history on the scratch remote.
    let caller = h.scratch.work.join(".github/workflows/run-sweep.yml");
    let text = std::fs::read_to_string(&caller).unwrap();
    let url_line = text
        .lines()
        .find(|l| l.trim_start().starts_with("compare-baseline-url:"))
        .unwrap()
        .to_string();
    std::fs::write(
        &caller,
        text.replacen(
            &url_line,
            &format!(
                "      compare-baseline: history\n      history-remote: {}",
                h.scratch.origin.display()
            ),
            1,
        ),
    )
    .unwrap();
    let dry = dry_run(&h.scratch);
    h.map_runners(dry["legs"].as_array().unwrap());
    h.fake.with_comments(REPO, PR, vec![]);
    let (ok, log, pr_secs) = h.run(
        "pull_request",
        &pr_event(&h.scratch, "labeled", "full-sweep-enabled"),
    );
    let ran = outcomes_of(&log, "sweep/Run Sweep (sweepkit)/");
    eprintln!("act_history: PR run {pr_secs:.1} s; jobs: {ran:#?}");
    assert!(ok, "the PR run failed:\n{}", tail(&log));
    assert_eq!(
        ran.get("compare-results"),
        Some(&Outcome::Succeeded),
        "{ran:#?}"
    );
    assert!(
        !ran.keys().any(|k| k.starts_with("history")),
        "a PR run has no history job: {ran:#?}"
    );
    assert_eq!(
        history_tip(&h.scratch).as_deref(),
        Some(tip.as_str()),
        "the PR run wrote to the history branch"
    );
    let comments = h.fake.comments(REPO, PR);
    assert_eq!(comments.len(), 1);
    let body = comments[0]["body"].as_str().unwrap();
    assert!(
        body.contains("## Benchmark comparison vs main's history (1 run; newest "),
        "the comment does not name main's history:\n{body}"
    );
    assert!(body.contains("Baseline: main's history."), "{body}");
    assert!(
        body.contains(&format!(
            "**Verdict: ✅ 0 points regressed (0 metrics) · 0 improved · {points} unchanged · "
        )),
        "the {points} points of the main run are this PR's baseline:\n{body}"
    );

    // 3. A fork's PR: policy and gate only; the history stays as it was.
    let (ok, log, fork_secs) = h.run(
        "pull_request",
        &pr_event_from(
            &h.scratch,
            "labeled",
            "full-sweep-enabled",
            "external/bench",
        ),
    );
    assert!(ok, "the fork PR run failed:\n{}", tail(&log));
    let fork = outcomes_of(&log, "sweep/Run Sweep (sweepkit)/");
    assert!(
        !fork.keys().any(|k| k.starts_with("history")),
        "a fork PR run has no history job: {fork:#?}"
    );
    assert_eq!(
        history_tip(&h.scratch).as_deref(),
        Some(tip.as_str()),
        "a fork PR wrote to the history branch"
    );
    assert_eq!(history_runs(&h.scratch, &h.dir).len(), 1);
    eprintln!(
        "act_history summary: main run appended 1 run ({points} points) to sweepkit-history; PR compared {points} points against main's history (1 run); PR and fork PR runs wrote nothing (tip {}); act wall time {main_secs:.1} s + {pr_secs:.1} s + {fork_secs:.1} s",
        &tip[..7]
    );
}
