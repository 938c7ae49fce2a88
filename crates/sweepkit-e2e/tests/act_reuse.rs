//! Scenario b of issue #24 under act (the harness and its limits:
//! `test_kit::act`): a writer's `/reuse-sweep-run` on the PR makes its
//! `synchronize` skip the sweep, and the push of the merge to main reuses
//! the PR's sweep instead of running it again, then dispatches the ingest
//! once (`sweep-ops dispatch-ingest`).
//!
//! Run ids: act gives every run the id 1 (`ACT_RUN_ID`, its
//! `GITHUB_RUN_ID`), so the PR sweep run, the synchronize run and the push
//! run all call themselves run 1, and the upload stand-in writes each one's
//! artifacts to `$ACT_ARTIFACT_DIR/1/`. On GitHub they are three runs with
//! three ids. The test keeps them apart the way GitHub would see them: after
//! the PR sweep it moves that run's artifacts from `$ACT_ARTIFACT_DIR/1/` to
//! `$ACT_ARTIFACT_DIR/<PR_RUN_ID>/`, and the fake's Actions API lists the
//! PR's runs under their own ids (`PR_RUN_ID` for the sweep, `SYNC_RUN_ID`
//! for the synchronize run) with the artifacts found in those directories.
//! The push run is the only run 1 left, so `merge-run-id` is 1, as act
//! gives it, and `source-run-id` must be `PR_RUN_ID`, which only the
//! lookup through the fake can have produced.
//!
//! The fake answers what `reuse-sweep find` asks on the push (the commit's
//! PR, the PR, its commits and comments, the commenter's permission, the
//! workflow's runs, their artifacts) with the recorded answers of the
//! conformance fixture `reuse-sweep/push-unpinned-picks-latest-eligible`,
//! rewritten to this repository, its commits and ids (never an invented
//! shape).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};

use fake_github::Route;
use serde_json::{Value, json};
use sweepkit_e2e::workspace_root;
use test_kit::act::*;
use test_kit::{act_scenario, git};

/// The id the fake's run list gives the PR's `labeled` sweep run (act ran
/// it as run 1; see the module doc).
const PR_RUN_ID: u64 = 32982000102;
/// The id of the PR's later `synchronize` run (a gated no-op: success, no
/// artifacts), newest in the run list as on GitHub.
const SYNC_RUN_ID: u64 = 32985000105;
/// Where the caller sends the ingest (examples/run-sweep.yml as shipped).
const INGEST_REPO: &str = "SemiAnalysisAI/InferenceX-app";
/// The caller's secret for the ingest token, and its value in the test.
const INGEST_SECRET: &str = "INFX_FRONTEND_PAT";
const INGEST_TOKEN: &str = "ghp_fakeFrontendPat0000000000000000000";
/// The writer whose comment authorises the reuse.
const WRITER: &str = "alice";

/// The recorded push-to-main lookup this scenario's answers are made from.
const FIXTURE: &str = "tests/conformance/fixtures/github/reuse-sweep/push-unpinned-picks-latest-eligible/api/repos/SemiAnalysisAI/InferenceX";
/// The fixture's names for what this scenario has: its merge commit, PR,
/// the PR head its sweep ran on, the later `[skip-sweep]` head, base and branch.
const FX_MERGE: &str = "bcd2bcfba3b38731e312ae687f31874215b77567";
const FX_PR: &str = "2766";
const FX_SWEPT: &str = "62a623b358e4db453088b6f20cb299602df6ee58";
const FX_REFRESH: &str = "823c478c708253eeadc32d559a22fe1bd24f384a";
const FX_BASE: &str = "65545b6f239c15e220da7d2915c1e154282bf8c8";
const FX_BRANCH: &str = "klaud/issue-2759-dsv4-fp4-mi355x-vllm-agentic-refresh";

/// A recorded answer of [`FIXTURE`] with its repository, commits, branch
/// and PR number replaced by this scenario's.
fn recorded(rel: &str, s: &Scratch, merge: &str) -> Value {
    let text = std::fs::read_to_string(workspace_root().join(FIXTURE).join(rel)).unwrap();
    let text = text
        .replace("SemiAnalysisAI/InferenceX", REPO)
        .replace(FX_MERGE, merge)
        .replace(FX_SWEPT, &s.head)
        .replace(FX_REFRESH, &s.head)
        .replace(FX_BASE, &s.base)
        .replace(FX_BRANCH, "bump-qwen")
        .replace(&format!("/pulls/{FX_PR}"), &format!("/pulls/{PR}"))
        .replace(&format!("/pull/{FX_PR}"), &format!("/pull/{PR}"))
        .replace(&format!("/issues/{FX_PR}"), &format!("/issues/{PR}"))
        .replace(&format!("#{FX_PR}"), &format!("#{PR}"));
    serde_json::from_str(&text).unwrap()
}

/// The PR as GitHub answers it after the merge: recorded, with this PR's
/// number, its one sweep label and `merged_at` (kept from the recording).
fn merged_pull(v: &Value) -> Value {
    let mut p = v.clone();
    p["number"] = json!(PR);
    let mut label = p["labels"][0].clone();
    label["name"] = json!("full-sweep-enabled");
    label["url"] = json!(format!(
        "https://api.github.com/repos/{REPO}/labels/full-sweep-enabled"
    ));
    p["labels"] = json!([label]);
    assert!(p["merged_at"].is_string(), "the recorded PR is merged");
    p
}

/// Scenario b, second half: after the PR's labelled sweep, a writer's
/// `/reuse-sweep-run` and the PR's synchronize run (which skips the sweep),
/// the PR is merged and the push to main runs: setup finds the PR's sweep
/// through the API and reuses it, so no canary, plan or GPU leg runs, and
/// the ingest is dispatched exactly once, naming the PR's sweep run as the
/// source and the push run as the merge run.
#[test]
fn the_push_of_a_reuse_authorised_merge_reuses_the_pr_sweep_and_dispatches_ingest_once_under_act() {
    act_scenario!(act);
    let mut h = harness(act);
    h.secrets
        .push((INGEST_SECRET.to_string(), INGEST_TOKEN.to_string()));

    // 1. The PR's labelled sweep, as in scenario a (its legs' labels
    //    mapped; the fake answers the jobs API calc-success-rate reads).
    let legs = h.plan_pr_sweep();
    h.serve_recorded_run();
    let sweep = h.run_labelled_pr();
    sweep.assert_ok("scenario b (PR sweep)");
    let sweep_secs = sweep.secs;
    let swept_legs = sweep.launched().len();
    assert_eq!(swept_legs, legs.len(), "the PR sweep ran its legs");
    // The PR sweep's artifacts, under the id GitHub would have given it.
    let pr_store = h.artifacts.join(PR_RUN_ID.to_string());
    std::fs::rename(h.artifacts.join(ACT_RUN_ID.to_string()), &pr_store).unwrap();
    let pr_artifacts = artifact_names_in(&pr_store);
    assert!(
        pr_artifacts.contains("results_bmk"),
        "the PR sweep left no results_bmk: {pr_artifacts:?}"
    );

    // 2. A writer comments `/reuse-sweep-run` (the recorded comment, by
    //    alice, after the sweep's own comment); the synchronize run skips
    //    the sweep.
    let mut comments = h.fake.comments(REPO, PR);
    assert_eq!(comments.len(), 1, "the PR sweep's one comment");
    let merge_placeholder = "0".repeat(40);
    let mut reuse_comment = recorded(
        &format!("issues/{FX_PR}/comments.json"),
        &h.scratch,
        &merge_placeholder,
    )[0]
    .clone();
    reuse_comment["user"]["login"] = json!(WRITER);
    reuse_comment["author_association"] = json!("MEMBER");
    reuse_comment["created_at"] = json!("2026-12-01T00:00:00Z");
    reuse_comment["updated_at"] = json!("2026-12-01T00:00:00Z");
    assert_eq!(reuse_comment["body"], "/reuse-sweep-run");
    comments.push(reuse_comment);
    h.fake.with_comments(REPO, PR, comments);
    let mut permission = recorded(
        "collaborators/infx-owner/permission.json",
        &h.scratch,
        &merge_placeholder,
    );
    permission["permission"] = json!("write");
    permission["role_name"] = json!("write");
    permission["user"]["login"] = json!(WRITER);
    permission["user"]["role_name"] = json!("write");
    h.fake.add_route(Route::json(
        "GET",
        &format!("/repos/{REPO}/collaborators/{WRITER}/permission"),
        permission,
    ));
    let mut sync = pr_event(&h.scratch, "synchronize", "full-sweep-enabled");
    sync.as_object_mut().unwrap().remove("label");
    let synced = h.run("pull_request", &sync);
    synced.assert_ok("scenario b (synchronize after the sweep)");
    let sync_secs = synced.secs;
    assert_eq!(
        synced
            .jobs(SWEEP_PREFIX)
            .into_keys()
            .collect::<BTreeSet<_>>(),
        BTreeSet::from([
            "policy".to_string(),
            "check-changelog".to_string(),
            "reuse-sweep-gate".to_string()
        ]),
        "the synchronize run skips the sweep"
    );
    assert!(
        h.artifact_names().is_empty(),
        "the synchronize run uploaded artifacts"
    );

    // 3. The merge: main gets the PR's merge commit, the origin too.
    let work = &h.scratch.work;
    git(work, &["checkout", "-q", "main"]);
    git(
        work,
        &[
            "merge",
            "-q",
            "--no-ff",
            "bump-qwen",
            "-m",
            &format!("Merge pull request #{PR} from example/bump-qwen"),
        ],
    );
    let merge = git(work, &["rev-parse", "HEAD"]);
    git(
        &h.scratch.origin,
        &["fetch", "-q", &work.to_string_lossy(), "+main:main"],
    );

    // What `reuse-sweep find` reads on the push, recorded answers rewritten.
    let pulls = recorded(
        &format!("commits/{FX_MERGE}/pulls.json"),
        &h.scratch,
        &merge,
    );
    let pull = merged_pull(&pulls[0]);
    assert_eq!(pull["merge_commit_sha"], merge.as_str());
    assert_eq!(pull["head"]["sha"], h.scratch.head.as_str());
    h.fake.add_route(Route::paginated(
        "GET",
        &format!("/repos/{REPO}/commits/{merge}/pulls"),
        json!([pull.clone()]),
        "array",
    ));
    h.fake.add_route(Route::json(
        "GET",
        &format!("/repos/{REPO}/pulls/{PR}"),
        merged_pull(&recorded(
            &format!("pulls/{FX_PR}.json"),
            &h.scratch,
            &merge,
        )),
    ));
    // The PR's label history (issue #34: a reused run is judged by the
    // labels applied when it was created), from the answers sweepkit's
    // strict rules add to the same fixture, with this PR's one label.
    let timeline_file = workspace_root().join(format!(
        "tests/conformance/sweepkit-routes/github/reuse-sweep/push-unpinned-picks-latest-eligible/api/repos/SemiAnalysisAI/InferenceX/issues/{FX_PR}/timeline.json"
    ));
    let mut timeline: Value =
        serde_json::from_str(&std::fs::read_to_string(timeline_file).unwrap()).unwrap();
    timeline[0]["label"]["name"] = json!("full-sweep-enabled");
    h.fake.add_route(Route::paginated(
        "GET",
        &format!("/repos/{REPO}/issues/{PR}/timeline"),
        timeline,
        "array",
    ));
    // The PR's one commit: the recorded swept commit, now the bump.
    let recorded_commits = recorded(&format!("pulls/{FX_PR}/commits.json"), &h.scratch, &merge);
    let mut commit = recorded_commits
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["sha"] == h.scratch.head.as_str()
                && !c["commit"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("[skip-sweep]")
        })
        .unwrap()
        .clone();
    commit["commit"]["message"] = json!(format!("bump {SEED_KEY} to {SEED_IMAGE}"));
    commit["parents"][0]["sha"] = json!(h.scratch.base);
    h.fake.add_route(Route::paginated(
        "GET",
        &format!("/repos/{REPO}/pulls/{PR}/commits"),
        json!([commit]),
        "array",
    ));
    // The workflow's PR runs, newest first: the synchronize run (a gated
    // no-op, recorded as such) and the sweep run.
    let runs = recorded(
        "actions/workflows/run-sweep.yml/runs.json",
        &h.scratch,
        &merge,
    );
    let recorded_run = |id: u64| -> Value {
        runs["workflow_runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()
            .clone()
    };
    let mut sweep_run = recorded_run(PR_RUN_ID);
    let mut sync_run = recorded_run(SYNC_RUN_ID);
    for r in [&mut sweep_run, &mut sync_run] {
        assert_eq!(r["conclusion"], "success");
        assert_eq!(r["event"], "pull_request");
        assert_eq!(r["head_sha"], h.scratch.head.as_str());
        assert_eq!(r["head_repository"]["full_name"], REPO);
    }
    h.fake.add_route(Route::paginated(
        "GET",
        &format!("/repos/{REPO}/actions/workflows/run-sweep.yml/runs"),
        json!({"total_count": 2, "workflow_runs": [sync_run, sweep_run]}),
        "object:workflow_runs",
    ));
    let recorded_artifacts = recorded(
        &format!("actions/runs/{PR_RUN_ID}/artifacts.json"),
        &h.scratch,
        &merge,
    );
    let template = &recorded_artifacts["artifacts"][0];
    let listed: Vec<Value> = pr_artifacts
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut a = template.clone();
            a["id"] = json!(7_000_000_000_u64 + i as u64);
            a["name"] = json!(name);
            a["expired"] = json!(false);
            a["expires_at"] = json!("2027-03-01T00:00:00Z");
            a
        })
        .collect();
    h.fake.add_route(Route::paginated(
        "GET",
        &format!("/repos/{REPO}/actions/runs/{PR_RUN_ID}/artifacts"),
        json!({"total_count": listed.len(), "artifacts": listed}),
        "object:artifacts",
    ));
    h.fake.add_route(Route::paginated(
        "GET",
        &format!("/repos/{REPO}/actions/runs/{SYNC_RUN_ID}/artifacts"),
        json!({"total_count": 0, "artifacts": []}),
        "object:artifacts",
    ));
    h.fake.add_route(Route::empty(
        "POST",
        &format!("/repos/{INGEST_REPO}/dispatches"),
        204,
    ));

    // 4. The push of the merge to main.
    let seen = h.fake.requests().len();
    let push = json!({
        "ref": "refs/heads/main",
        "before": h.scratch.base,
        "after": merge,
        "created": false,
        "deleted": false,
        "forced": false,
        "base_ref": null,
        "repository": {"full_name": REPO, "name": "bench", "owner": {"login": "example"}, "default_branch": "main"},
        "pusher": {"name": WRITER},
        "sender": {"login": WRITER},
        "head_commit": {"id": merge, "message": format!("Merge pull request #{PR} from example/bump-qwen")},
    });
    let pushed = h.run("push", &push);
    h.keep_if_asked("reuse");
    pushed.assert_ok("scenario b (push)");
    let (log, secs) = (&pushed.log, pushed.secs);
    let mut ran = pushed.jobs(SWEEP_PREFIX);
    // The caller's history job (sweepkit-history.yml): the reused PR
    // sweep's aggregate appended to main's history, under the push run.
    let history: Vec<(String, Outcome)> = ran
        .iter()
        .filter(|(k, _)| k.starts_with("history/"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    ran.retain(|k, _| !k.starts_with("history/"));
    assert!(
        matches!(history.as_slice(), [(_, Outcome::Succeeded)]),
        "the push run's history job: {history:?}"
    );
    let reused_points = serde_json::from_str::<Value>(
        &std::fs::read_to_string(
            h.artifacts
                .join(PR_RUN_ID.to_string())
                .join("results_bmk/agg_bmk.json"),
        )
        .unwrap(),
    )
    .unwrap()
    .as_array()
    .unwrap()
    .len();
    assert_eq!(
        history_runs(&h.scratch, &h.dir),
        vec![(ACT_RUN_ID, "push".to_string(), reused_points)],
        "the merge push appended the reused sweep's rows to main's history"
    );

    // What ran: the reuse skipped every planning job and leg.
    assert!(failed_jobs(&ran).is_empty(), "{ran:#?}\n{}", pushed.tail());
    assert_eq!(
        ran.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        BTreeSet::from([
            "policy",
            "setup",
            "upload-changelog-metadata",
            "trigger-ingest"
        ]),
        "jobs the push run ran (no canary, plan, leg, collect or comment)"
    );
    assert!(pushed.launched().is_empty(), "a GPU leg ran on the push");
    assert!(
        log.contains(&format!(
            "reuse: true — PR #{PR} approved reusable full sweep from latest run"
        )) || log.contains("\"reuse-enabled\":\"true\""),
        "setup did not report the reuse"
    );
    let push_artifacts = h.artifact_names();
    assert_eq!(
        push_artifacts,
        BTreeSet::from([
            "search-space-config".to_string(),
            "changelog-metadata".to_string()
        ]),
        "the push run holds no results of its own"
    );

    // The fake: the lookup read what it needed, and the one write of the
    // push run is the ingest dispatch.
    let push_requests: Vec<_> = h.fake.requests()[seen..].to_vec();
    for r in &push_requests {
        eprintln!("fake (push): {} {} {:?}", r.method, r.path, r.query);
    }
    for read in [
        format!("/repos/{REPO}/commits/{merge}/pulls"),
        format!("/repos/{REPO}/issues/{PR}/comments"),
        format!("/repos/{REPO}/collaborators/{WRITER}/permission"),
        format!("/repos/{REPO}/actions/workflows/run-sweep.yml/runs"),
        format!("/repos/{REPO}/actions/runs/{PR_RUN_ID}/artifacts"),
    ] {
        assert!(
            push_requests
                .iter()
                .any(|r| r.method == "GET" && r.path == read),
            "the push run did not read {read}"
        );
    }
    let writes: Vec<_> = push_requests.iter().filter(|r| r.method != "GET").collect();
    assert_eq!(
        writes
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect::<Vec<_>>(),
        vec![format!("POST /repos/{INGEST_REPO}/dispatches")],
        "the push run's writes: the ingest dispatch, once"
    );
    let dispatch = writes[0];
    assert_eq!(
        dispatch.body,
        Some(json!({
            "event_type": "ingest-results",
            "client_payload": {
                "source-run-id": PR_RUN_ID.to_string(),
                "merge-run-id": ACT_RUN_ID.to_string(),
            },
        })),
        "source: the PR's sweep run; merge: the push run"
    );
    assert_eq!(
        dispatch.headers.get("authorization").map(String::as_str),
        Some(format!("Bearer {INGEST_TOKEN}").as_str()),
        "the dispatch uses the ingest token"
    );
    assert_eq!(
        h.fake
            .requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path.ends_with("/dispatches"))
            .count(),
        1,
        "ingest dispatched exactly once over the whole scenario"
    );
    let all_jobs = workflow_job_count(&h.scratch.work);
    eprintln!(
        "scenario b (push) summary: {} jobs succeeded, 0 failed, {} skipped; 0 legs (the PR sweep's {} reused from run {PR_RUN_ID}); ingest dispatched once; act wall time {secs:.1} s (PR sweep {sweep_secs:.1} s, synchronize {sync_secs:.1} s)",
        ran.len(),
        all_jobs - ran.len(),
        swept_legs
    );
}

/// Scenario b, first half: the PR `synchronize` after a writer's
/// `/reuse-sweep-run` comment: the reuse gate authorises the reuse, so
/// setup and every sweep job are skipped and nothing is written.
#[test]
fn a_synchronize_after_a_writers_reuse_comment_skips_the_sweep_under_act() {
    act_scenario!(act);
    let h = harness(act);
    h.fake.with_comments(
        REPO,
        PR,
        vec![json!({
            "id": 3_000_000_001_u64,
            "body": "/reuse-sweep-run",
            "user": {"login": "alice"},
            "author_association": "MEMBER",
            "created_at": "2026-12-01T00:00:00Z",
            "updated_at": "2026-12-01T00:00:00Z"
        })],
    );
    h.fake.with_collaborator(REPO, "alice", "write");
    let mut event = pr_event(&h.scratch, "synchronize", "full-sweep-enabled");
    event.as_object_mut().unwrap().remove("label");
    let run = h.run("pull_request", &event);
    run.assert_ok("scenario b (synchronize)");
    let secs = run.secs;
    let ran = run.jobs(SWEEP_PREFIX);
    assert_eq!(
        ran,
        BTreeMap::from([
            ("policy".to_string(), Outcome::Succeeded),
            ("check-changelog".to_string(), Outcome::Succeeded),
            ("reuse-sweep-gate".to_string(), Outcome::Succeeded),
        ]),
        "an authorised reuse skips setup and the sweep"
    );
    assert!(run.launched().is_empty(), "a GPU leg ran");
    assert!(
        h.fake
            .count("GET", &format!("/repos/{REPO}/issues/{PR}/comments"))
            >= 1
            && h.fake.count(
                "GET",
                &format!("/repos/{REPO}/collaborators/alice/permission")
            ) >= 1,
        "the gate read the comments and the author's permission"
    );
    let writes = h.writes();
    assert!(writes.is_empty(), "wrote to GitHub: {writes:?}");
    eprintln!(
        "scenario b (synchronize) summary: {} jobs succeeded, 0 failed, {} skipped; act wall time {secs:.1} s",
        ran.len(),
        workflow_job_count(&h.scratch.work) - ran.len()
    );
}
