//! Under act (harness and its limits: `test_kit::act`): main's memory
//! (issue #35 item 7). A manual run of main's code appends its aggregate to
//! the `sweepkit-history` branch of the scratch repository's bare remote
//! (the caller's history job, `sweepkit-history.yml`); the next PR's
//! compare, with `compare-baseline: history`, checks the branch out and
//! compares each point with its own series; neither that PR run nor a
//! fork's PR run writes to the branch. (The merge push that reuses a PR's
//! sweep appends too: scenario b, `act_reuse.rs`.)

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use serde_json::{Value, json};
use test_kit::act::*;
use test_kit::act_scenario;

#[test]
fn a_main_run_appends_to_the_history_and_the_next_pr_compares_against_it_under_act() {
    act_scenario!(act);
    let mut h = harness(act);
    assert_eq!(
        history_tip(&h.scratch),
        None,
        "no history before a main run"
    );

    // 1. A manual run of main's code (examples/e2e-tests.yml on main): the
    //    seed config at conc 4. Its history job appends the aggregate.
    let line = format!("test-config --config-keys {SEED_KEY} --conc 4");
    h.from_command(&line);
    h.serve_recorded_run();
    test_kit::git(&h.scratch.work, &["checkout", "-q", "main"]);
    let main = h.run_workflow(
        "e2e-tests.yml",
        "workflow_dispatch",
        &json!({
            "ref": "refs/heads/main",
            "repository": {"full_name": REPO, "name": "bench", "owner": {"login": "example"}, "default_branch": "main"},
            "inputs": {"generate-command": line, "test-name": "act main history"},
        }),
    );
    main.assert_ok("act_history: the main run");
    let (log, main_secs) = (&main.log, main.secs);
    let ran = main.jobs("");
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
        tail(log)
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
    h.plan_pr_sweep();
    let pr = h.run_labelled_pr();
    pr.assert_ok("act_history: the PR run");
    let pr_secs = pr.secs;
    let ran = pr.jobs(SWEEP_PREFIX);
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
    let fork_run = h.run_labelled_fork_pr();
    fork_run.assert_ok("act_history: the fork PR run");
    let fork_secs = fork_run.secs;
    let fork = fork_run.jobs(SWEEP_PREFIX);
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
