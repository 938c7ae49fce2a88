//! `reuse-sweep find` end to end against the loopback fake GitHub, with
//! transient faults and the fail-closed rules.

use std::collections::BTreeMap;
use std::process::Output;

use serde_json::{Value, json};
use test_kit::{CommandExt, FakeGitHub, Fault, Route, stderr};

const SHA: &str = "aaaa000000000000000000000000000000000001";
const HEAD: &str = "bbbb000000000000000000000000000000000002";
const R: &str = "/repos/acme/bench";
/// When every test run was created: after [`server`]'s labels were applied.
const RUN_AT: &str = "2026-08-21T09:00:00Z";

/// A comment by the user `assoc.to_lowercase()` (see [`server`] for who
/// has which repository role).
fn comment(assoc: &str, at: &str, body: &str) -> Value {
    json!({"author_association": assoc, "created_at": at, "body": body,
           "user": {"login": assoc.to_lowercase()}})
}

/// A merged PR #7 with `labels`, a pinned run 555 on HEAD, and `comments`.
/// Repository roles: `owner` admin, `maintainer` maintain, `writer` write,
/// `member` and `collaborator` read, `triager` triage; anyone else is not a
/// collaborator (404).
fn server(labels: &[&str], comments: Vec<Value>) -> FakeGitHub {
    let s = test_kit::fake_github();
    for (login, role) in [
        ("owner", "admin"),
        ("maintainer", "maintain"),
        ("writer", "write"),
        ("member", "read"),
        ("collaborator", "read"),
        ("triager", "triage"),
    ] {
        s.with_collaborator("acme/bench", login, role);
    }
    s.add_route(Route::json(
        "GET",
        &format!("{R}/commits/{SHA}/pulls"),
        json!([{"number": 7}]),
    ));
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/issues/7/comments"),
        json!(comments),
        "array",
    ));
    // The PR's labels, all applied on 2026-08-20 (before every run).
    let events: Vec<Value> = labels
        .iter()
        .map(|l| json!({"event": "labeled", "created_at": "2026-08-20T00:00:00Z", "label": {"name": l}}))
        .collect();
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/issues/7/timeline"),
        json!(events),
        "array",
    ));
    let labels: Vec<Value> = labels.iter().map(|l| json!({"name": l})).collect();
    s.add_route(Route::json(
        "GET",
        &format!("{R}/pulls/7"),
        json!({"number": 7, "labels": labels, "merged_at": "2026-08-22T14:05:31Z",
               "head": {"ref": "feat/x", "repo": {"full_name": "acme/bench"}}}),
    ));
    s.add_route(Route::json(
        "GET",
        &format!("{R}/actions/runs/555"),
        json!({"id": 555, "event": "pull_request", "head_repository": {"full_name": "acme/bench"}, "status": "completed", "conclusion": "success", "created_at": RUN_AT,
               "path": ".github/workflows/run-sweep.yml", "head_sha": HEAD, "run_attempt": 3,
               "html_url": "https://github.com/acme/bench/actions/runs/555"}),
    ));
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/pulls/7/commits"),
        json!([{"sha": HEAD}]),
        "array",
    ));
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/actions/runs/555/artifacts"),
        json!({"artifacts": [{"name": "results_bmk", "expired": false}]}),
        "object:artifacts",
    ));
    s
}

fn find(s: &FakeGitHub, dir: &std::path::Path) -> (Output, BTreeMap<String, String>) {
    find_with(s, dir, &[])
}

/// `reuse-sweep find` for a push to main of [`SHA`], outputs to
/// `dir/github_output`, the token as the action passes it.
fn find_cmd(s: &FakeGitHub, dir: &std::path::Path) -> std::process::Command {
    let mut cmd = test_kit::command(env!("CARGO_BIN_EXE_reuse-sweep"));
    cmd.args([
        "find",
        "--repo",
        "acme/bench",
        "--commit-sha",
        SHA,
        "--event-name",
        "push",
    ])
    .args(["--ref", "refs/heads/main", "--github-output"])
    .arg(dir.join("github_output"))
    .github(s)
    // The action passes the token as GH_TOKEN.
    .env_remove("GITHUB_TOKEN")
    .env("GH_TOKEN", test_kit::TEST_TOKEN);
    cmd
}

fn find_with(
    s: &FakeGitHub,
    dir: &std::path::Path,
    extra: &[&str],
) -> (Output, BTreeMap<String, String>) {
    let out = find_cmd(s, dir)
        .args(extra)
        .output()
        .expect("run reuse-sweep");
    let text = std::fs::read_to_string(dir.join("github_output")).unwrap_or_default();
    let pairs = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (out, pairs)
}

/// A full-sweep PR whose owner pinned run 555.
fn pinned_by_owner() -> FakeGitHub {
    server(
        &["full-sweep-enabled"],
        vec![comment(
            "OWNER",
            "2026-08-21T10:00:00Z",
            "/reuse-sweep-run 555",
        )],
    )
}

/// A GitHub or token failure exits 2 (README exit contract).
#[track_caller]
fn assert_github_failure(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(2),
        "GitHub/token failure: exit 2 (README exit contract)\n{}",
        stderr(out)
    );
}

#[test]
fn newest_maintainer_pin_over_paginated_comments_survives_faults() {
    let mut comments: Vec<Value> = (0..140)
        .map(|i| {
            comment(
                "NONE",
                &format!("2026-08-20T10:{:02}:{:02}Z", i / 60, i % 60),
                "bot noise",
            )
        })
        .collect();
    comments.push(comment(
        "MEMBER",
        "2026-08-21T09:00:00Z",
        "/reuse-sweep-run 111",
    ));
    comments.push(comment(
        "OWNER",
        "2026-08-21T10:00:00Z",
        "ok\n/reuse-sweep-run 555\n",
    ));
    comments.push(comment(
        "CONTRIBUTOR",
        "2026-08-21T11:00:00Z",
        "/reuse-sweep-run 999",
    ));
    let s = server(&["full-sweep-enabled"], comments);
    s.inject(
        "GET",
        &format!("{R}/issues/7/comments"),
        [Fault::Status(502)],
    );
    s.inject(
        "GET",
        &format!("{R}/actions/runs/555"),
        [Fault::TooManyRequests { retry_after: 0 }],
    );
    s.inject(
        "GET",
        &format!("{R}/pulls/7"),
        [Fault::SecondaryRateLimit {
            retry_after: Some(0),
        }],
    );
    let dir = test_kit::temp_dir();
    let (out, pairs) = find(&s, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(pairs["reuse-enabled"], "true");
    assert_eq!(pairs["reuse-source-run-id"], "555");
    assert_eq!(pairs["reuse-source-run-attempt"], "3");
    assert_eq!(pairs["reuse-source-pr-number"], "7");
    assert_eq!(pairs["reuse-source-head-sha"], HEAD);
    assert_eq!(pairs.len(), 8);
    let stdout: Value = serde_json::from_slice(&out.stdout).expect("stdout json");
    assert_eq!(stdout["reuse-enabled"], "true");
    let github_output = std::fs::read_to_string(dir.path().join("github_output")).expect("output");
    test_kit::assert_snapshot!("github_output_reuse", github_output);
}

#[test]
fn fails_closed_with_clear_error_after_the_retry_budget() {
    let s = pinned_by_owner();
    s.fail_always(
        "GET",
        &format!("{R}/actions/runs/555/artifacts"),
        Fault::Status(500),
    );
    let dir = test_kit::temp_dir();
    let (out, pairs) = find(&s, dir.path());
    assert_github_failure(&out);
    let err = stderr(&out);
    assert!(
        err.contains("error: GitHub API GET /repos/acme/bench/actions/runs/555/artifacts?per_page=100 failed: HTTP 500"),
        "{err}"
    );
    assert!(err.contains("gave up after 3 attempts"), "{err}");
    assert!(pairs.is_empty(), "nothing written on error: {pairs:?}");
}

#[test]
fn incompatible_label_refuses_before_any_run_lookup() {
    let s = server(
        &["full-sweep-enabled", "evals-only"],
        vec![comment("OWNER", "2026-08-21T10:00:00Z", "/reuse-sweep-run")],
    );
    let dir = test_kit::temp_dir();
    let (out, pairs) = find(&s, dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim_end(),
        "reuse-sweep: error: PR #7 has /reuse-sweep-run authorization but uses reuse-incompatible label(s): evals-only."
    );
    assert!(pairs.is_empty());
    assert_eq!(s.count("GET", &format!("{R}/actions/runs/555")), 0);
}

#[test]
fn commands_from_non_maintainers_do_not_authorise() {
    let s = server(
        &["full-sweep-enabled"],
        vec![
            comment(
                "CONTRIBUTOR",
                "2026-08-21T10:00:00Z",
                "/reuse-sweep-run 555",
            ),
            comment(
                "OWNER",
                "2026-08-21T11:00:00Z",
                "please /reuse-sweep-run 555",
            ),
        ],
    );
    let dir = test_kit::temp_dir();
    let (out, pairs) = find(&s, dir.path());
    assert!(out.status.success());
    assert_eq!(pairs["reuse-enabled"], "false");
    assert_eq!(pairs["reuse-source-pr-number"], "7");
    assert_eq!(
        pairs["reuse-reason"],
        "PR #7 has no /reuse-sweep-run authorization"
    );
    let github_output = std::fs::read_to_string(dir.path().join("github_output")).expect("output");
    test_kit::assert_snapshot!("github_output_no_authorization", github_output);
}

#[test]
fn missing_token_is_an_error_in_every_mode() {
    let out = test_kit::command(env!("CARGO_BIN_EXE_reuse-sweep"))
        .args([
            "find",
            "--repo",
            "a/b",
            "--commit-sha",
            "x",
            "--event-name",
            "pull_request",
            "--ref",
            "r",
        ])
        .output()
        .expect("run");
    assert_github_failure(&out);
    assert_eq!(
        stderr(&out).trim_end(),
        "reuse-sweep: error: GH_TOKEN or GITHUB_TOKEN is required"
    );
}

#[test]
fn empty_pr_number_from_the_action_means_none() {
    let out = test_kit::command(env!("CARGO_BIN_EXE_reuse-sweep"))
        .args([
            "find",
            "--repo",
            "a/b",
            "--commit-sha",
            "x",
            "--event-name",
            "pull_request",
            "--ref",
            "r",
        ])
        .env("GH_TOKEN", "t")
        .env("INPUT_PR_NUMBER", "")
        .env("INPUT_EVENT_ACTION", "")
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        v["reuse-reason"],
        "pull_request action unknown is not synchronize"
    );
}

// ---------------------------------------------------------------------------
// Issue #16 points 2 and 3: who may authorise, and which run is reused.
// ---------------------------------------------------------------------------

const OLD: &str = "cccc000000000000000000000000000000000003";

/// Point 3: a MEMBER or COLLABORATOR association without write permission
/// does not authorise; the permission read from the API decides, whatever
/// the association string says.
#[test]
fn authorisation_needs_write_permission_from_the_api() {
    for (assoc, login) in [("MEMBER", "member"), ("COLLABORATOR", "collaborator")] {
        let mut c = comment(assoc, "2026-08-21T10:00:00Z", "/reuse-sweep-run 555");
        c["user"]["login"] = json!(login);
        let s = server(&["full-sweep-enabled"], vec![c]);
        let dir = test_kit::temp_dir();
        let (out, pairs) = find(&s, dir.path());
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(pairs["reuse-enabled"], "false", "{assoc}");
        assert_eq!(
            pairs["reuse-reason"],
            "PR #7 has no /reuse-sweep-run authorization"
        );
        assert_eq!(
            s.count("GET", &format!("{R}/collaborators/{login}/permission")),
            1
        );
        assert!(stderr(&out).contains("has no write, maintain or admin permission"));
    }
    // Triage and unknown users (404) neither.
    for login in ["triager", "stranger"] {
        let mut c = comment("OWNER", "2026-08-21T10:00:00Z", "/reuse-sweep-run 555");
        c["user"]["login"] = json!(login);
        let s = server(&["full-sweep-enabled"], vec![c]);
        let dir = test_kit::temp_dir();
        let (_, pairs) = find(&s, dir.path());
        assert_eq!(pairs["reuse-enabled"], "false", "{login}");
    }
    // A maintainer whose association reads CONTRIBUTOR does authorise.
    for login in ["maintainer", "writer", "owner"] {
        let mut c = comment(
            "CONTRIBUTOR",
            "2026-08-21T10:00:00Z",
            "/reuse-sweep-run 555",
        );
        c["user"]["login"] = json!(login);
        let s = server(&["full-sweep-enabled"], vec![c]);
        let dir = test_kit::temp_dir();
        let (out, pairs) = find(&s, dir.path());
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(pairs["reuse-enabled"], "true", "{login}");
    }
}

/// A permission lookup that fails (not 404) fails the job instead of
/// guessing.
#[test]
fn a_failed_permission_lookup_fails_closed() {
    let s = pinned_by_owner();
    s.fail_always(
        "GET",
        &format!("{R}/collaborators/owner/permission"),
        Fault::Status(403),
    );
    let dir = test_kit::temp_dir();
    let (out, pairs) = find(&s, dir.path());
    assert_github_failure(&out);
    assert!(
        stderr(&out).contains("/collaborators/owner/permission failed: HTTP 403"),
        "{}",
        stderr(&out)
    );
    assert!(pairs.is_empty());
}

fn set_run(s: &FakeGitHub, id: u64, head: &str, conclusion: &str) {
    s.add_route(Route::json(
        "GET",
        &format!("{R}/actions/runs/{id}"),
        json!({"id": id, "event": "pull_request", "head_repository": {"full_name": "acme/bench"}, "status": "completed", "conclusion": conclusion,
               "path": ".github/workflows/run-sweep.yml", "head_sha": head, "run_attempt": 1, "created_at": RUN_AT,
               "html_url": format!("https://github.com/acme/bench/actions/runs/{id}")}),
    ));
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/actions/runs/{id}/artifacts"),
        json!({"artifacts": [{"name": "results_bmk", "expired": false}]}),
        "object:artifacts",
    ));
}

/// PR #7's commits: OLD, then HEAD, then the protocol's merge of main and
/// its `[skip-sweep]` refresh commit (HEAD stays the swept head).
fn with_history(s: &FakeGitHub) {
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/pulls/7/commits"),
        json!([
            {"sha": OLD, "parents": [{"sha": "p0"}], "commit": {"message": "first try"}},
            {"sha": HEAD, "parents": [{"sha": OLD}], "commit": {"message": "revert the first try"}},
            {"sha": MERGE, "parents": [{"sha": HEAD}, {"sha": "m"}],
             "commit": {"message": "Merge remote-tracking branch 'origin/main'"}},
            {"sha": REFRESH, "parents": [{"sha": MERGE}],
             "commit": {"message": "chore: refresh PR #7 for sweep reuse [skip-sweep]"}},
        ]),
        "array",
    ));
    // The merge brought only documentation; the refresh commit is empty.
    compare(s, HEAD, MERGE, &["README.md", "docs/results.md"]);
    compare(s, MERGE, REFRESH, &[]);
}

const MERGE: &str = "dddd000000000000000000000000000000000004";
const REFRESH: &str = "eeee000000000000000000000000000000000005";

/// `GET /compare/<parent>...<sha>`: `sha` is ahead of `parent` and changes
/// `files`.
fn compare(s: &FakeGitHub, parent: &str, sha: &str, files: &[&str]) {
    let files: Vec<Value> = files
        .iter()
        .map(|f| json!({"filename": f, "status": "modified"}))
        .collect();
    s.add_route(Route::json(
        "GET",
        &format!("{R}/compare/{parent}...{sha}"),
        json!({"status": "ahead", "ahead_by": 1, "behind_by": 0, "files": files}),
    ));
}

/// Point 2: a pinned run must be `success` and of the PR's head commit.
#[test]
fn a_pinned_run_must_be_a_success_of_the_current_head() {
    for (conclusion, head, want) in [
        (
            "failure",
            HEAD,
            "has conclusion 'failure'; expected success.",
        ),
        (
            "cancelled",
            HEAD,
            "has conclusion 'cancelled'; expected success.",
        ),
        (
            "success",
            OLD,
            "ran on cccc000000000000000000000000000000000003, not on PR #7's head commit bbbb000000000000000000000000000000000002",
        ),
    ] {
        let s = server(
            &["full-sweep-enabled"],
            vec![comment(
                "OWNER",
                "2026-08-21T10:00:00Z",
                "/reuse-sweep-run 556",
            )],
        );
        with_history(&s);
        set_run(&s, 556, head, conclusion);
        let dir = test_kit::temp_dir();
        let (out, pairs) = find(&s, dir.path());
        assert_eq!(out.status.code(), Some(1), "{conclusion} {head}");
        assert!(stderr(&out).contains(want), "{}", stderr(&out));
        assert!(pairs.is_empty());
    }
    // There is no other rule set: the flag the reference-rules mode used is
    // gone (a usage error), and its environment variable changes nothing.
    let s = server(
        &["full-sweep-enabled"],
        vec![comment(
            "OWNER",
            "2026-08-21T10:00:00Z",
            "/reuse-sweep-run 556",
        )],
    );
    with_history(&s);
    set_run(&s, 556, OLD, "failure");
    let dir = test_kit::temp_dir();
    let (out, pairs) = find_with(&s, dir.path(), &["--rules", "reference"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(pairs.is_empty());
    let out = find_cmd(&s, dir.path())
        .env("SWEEPKIT_REUSE_RULES", "reference")
        .output()
        .expect("run reuse-sweep");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("has conclusion 'failure'; expected success"),
        "{}",
        stderr(&out)
    );
}

/// Point 2: without a pin, only a successful run of the PR's head commit
/// is taken, and the reason says which run and why.
#[test]
fn an_unpinned_reuse_takes_only_a_run_of_the_current_head() {
    let runs = |list: Value| {
        let s = server(
            &["full-sweep-enabled"],
            vec![comment("OWNER", "2026-08-21T10:00:00Z", "/reuse-sweep-run")],
        );
        with_history(&s);
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/actions/workflows/run-sweep.yml/runs"),
            list,
            "object:workflow_runs",
        ));
        for id in [601, 602] {
            s.add_route(Route::paginated(
                "GET",
                &format!("{R}/actions/runs/{id}/artifacts"),
                json!({"artifacts": [{"name": "results_bmk", "expired": false}]}),
                "object:artifacts",
            ));
        }
        s
    };
    let run = |id: u64, head: &str, conclusion: &str| {
        json!({"id": id, "event": "pull_request", "head_repository": {"full_name": "acme/bench"}, "status": "completed", "conclusion": conclusion,
               "path": ".github/workflows/run-sweep.yml", "head_sha": head, "run_attempt": 1, "created_at": RUN_AT,
               "html_url": format!("https://github.com/acme/bench/actions/runs/{id}")})
    };
    // Newest first: a success on the old (reverted) commit, a failure on
    // the head, then the head's success.
    let s = runs(json!({"workflow_runs": [
        run(601, OLD, "success"), run(603, HEAD, "failure"), run(602, HEAD, "success")
    ]}));
    let dir = test_kit::temp_dir();
    let (out, pairs) = find(&s, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(pairs["reuse-source-run-id"], "602");
    assert_eq!(pairs["reuse-source-head-sha"], HEAD);
    assert_eq!(
        pairs["reuse-reason"],
        format!(
            "PR #7 approved reusable full sweep from latest run on {HEAD}: run 602 concluded success on the PR's head commit and has result artifacts"
        )
    );

    // Only the old commit succeeded: refused, naming the head.
    let s = runs(json!({"workflow_runs": [run(601, OLD, "success"), run(603, HEAD, "failure")]}));
    let dir = test_kit::temp_dir();
    let (out, pairs) = find(&s, dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("no successful run-sweep.yml pull_request run with result artifacts was found for its head commit {HEAD}")),
        "{}",
        stderr(&out)
    );
    assert!(pairs.is_empty());
}

/// Issue #23 item 1: a run triggered from a fork is never reused, pinned or
/// found, even when it is the PR's swept head; nor is a run that does not
/// say where it came from. The attack: commit A's sweep ran from a fork
/// (the fork's workflow code wrote its artifacts), then a `[skip-sweep]`
/// commit B makes A the swept head, and a maintainer's `/reuse-sweep-run`
/// would carry the fork's numbers onto main.
#[test]
fn a_run_triggered_from_a_fork_is_never_reused() {
    const A: &str = "fa11000000000000000000000000000000000009";
    let fork_run = |head_repository: Value| {
        json!({"id": 900, "event": "pull_request", "head_repository": head_repository,
               "status": "completed", "conclusion": "success", "created_at": RUN_AT,
               "path": ".github/workflows/run-sweep.yml", "head_sha": A, "run_attempt": 1,
               "html_url": "https://github.com/acme/bench/actions/runs/900"})
    };
    let scenario = |body: &str, head_repository: Value| {
        let s = server(
            &["full-sweep-enabled"],
            vec![comment("OWNER", "2026-08-21T10:00:00Z", body)],
        );
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/pulls/7/commits"),
            json!([
                {"sha": A, "parents": [{"sha": "p0"}], "commit": {"message": "bump the image"}},
                {"sha": "b0b0000000000000000000000000000000000010", "parents": [{"sha": A}],
                 "commit": {"message": "docs [skip-sweep]"}},
            ]),
            "array",
        ));
        compare(
            &s,
            A,
            "b0b0000000000000000000000000000000000010",
            &["docs/x.md"],
        );
        s.add_route(Route::json(
            "GET",
            &format!("{R}/actions/runs/900"),
            fork_run(head_repository.clone()),
        ));
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/actions/workflows/run-sweep.yml/runs"),
            json!({"workflow_runs": [fork_run(head_repository)]}),
            "object:workflow_runs",
        ));
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/actions/runs/900/artifacts"),
            json!({"artifacts": [{"name": "results_bmk", "expired": false}]}),
            "object:artifacts",
        ));
        s
    };
    for head_repository in [
        json!({"full_name": "mallory/bench"}),
        Value::Null,
        json!({}),
    ] {
        // Pinned: refused, naming where the run came from.
        let s = scenario("/reuse-sweep-run 900", head_repository.clone());
        let dir = test_kit::temp_dir();
        let (out, pairs) = find(&s, dir.path());
        assert_eq!(
            out.status.code(),
            Some(1),
            "{head_repository}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("Reusable source run 900 was triggered from"),
            "{}",
            stderr(&out)
        );
        assert!(pairs.is_empty());
        // Unpinned: the fork's run is not a candidate at all.
        let s = scenario("/reuse-sweep-run", head_repository.clone());
        let dir = test_kit::temp_dir();
        let (out, pairs) = find(&s, dir.path());
        assert_eq!(
            out.status.code(),
            Some(1),
            "{head_repository}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(&format!("no successful run-sweep.yml pull_request run with result artifacts was found for its head commit {A}")),
            "{}",
            stderr(&out)
        );
        assert!(pairs.is_empty());
    }
    // The same run from the repository itself is reused.
    let s = scenario("/reuse-sweep-run 900", json!({"full_name": "acme/bench"}));
    let dir = test_kit::temp_dir();
    let (out, pairs) = find(&s, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(pairs["reuse-source-run-id"], "900");
}

// ---------------------------------------------------------------------------
// Issue #34 item 2: who wrote a comment is known before it is parsed, and
// a body longer than GitHub allows is no command.
// ---------------------------------------------------------------------------

/// The commenter's permission is read before the body is parsed: a
/// stranger's pathological body (`"x" + "\n" * 65534 + "x"`, quadratic
/// for the reference's pattern) costs one permission lookup and is never
/// parsed; it changes nothing.
#[test]
fn a_strangers_comment_is_judged_by_permission_before_its_body() {
    let mut slow = comment(
        "NONE",
        "2026-08-21T11:00:00Z",
        &format!("x{}x", "\n".repeat(65_534)),
    );
    slow["user"]["login"] = json!("stranger");
    let s = server(
        &["full-sweep-enabled"],
        vec![
            comment("OWNER", "2026-08-21T10:00:00Z", "/reuse-sweep-run 555"),
            slow,
        ],
    );
    let dir = test_kit::temp_dir();
    let (out, pairs) = find(&s, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(pairs["reuse-enabled"], "true");
    assert_eq!(pairs["reuse-source-run-id"], "555");
    assert_eq!(
        s.count("GET", &format!("{R}/collaborators/stranger/permission")),
        1
    );
    // Nothing is logged for a comment that does not mention the command.
    assert!(!stderr(&out).contains("stranger"), "{}", stderr(&out));
}

/// GitHub stores at most 65,536 characters per comment: an owner's body
/// over that is not read as a command, whatever it holds.
#[test]
fn a_body_over_githubs_limit_is_not_a_command() {
    let body = format!("/reuse-sweep-run 555{}", " ".repeat(65_536));
    let s = server(
        &["full-sweep-enabled"],
        vec![comment("OWNER", "2026-08-21T10:00:00Z", &body)],
    );
    let dir = test_kit::temp_dir();
    let (out, pairs) = find(&s, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(pairs["reuse-enabled"], "false");
    assert_eq!(
        pairs["reuse-reason"],
        "PR #7 has no /reuse-sweep-run authorization"
    );
}

// ---------------------------------------------------------------------------
// Issue #34 item 1: the approval binds to the head it saw.
// ---------------------------------------------------------------------------

const LATE: &str = "1a7e000000000000000000000000000000000006";

/// PR #7 approved by the owner at 10:00 (pin 556, a success on HEAD).
/// Its commits: OLD, HEAD, then `after` (sha, parents, message, files).
/// `pushes`: the head branch's recorded pushes, `(timestamp, after)`.
fn approved_then(after: &[(&str, &[&str], &str, &[&str])], pushes: &[(&str, &str)]) -> FakeGitHub {
    let s = server(
        &["full-sweep-enabled"],
        vec![comment(
            "OWNER",
            "2026-08-21T10:00:00Z",
            "/reuse-sweep-run 556",
        )],
    );
    set_run(&s, 556, HEAD, "success");
    let mut commits = vec![
        json!({"sha": OLD, "parents": [{"sha": "p0"}], "commit": {"message": "first"}}),
        json!({"sha": HEAD, "parents": [{"sha": OLD}], "commit": {"message": "swept"}}),
    ];
    for (sha, parents, message, files) in after {
        let parents: Vec<Value> = parents.iter().map(|p| json!({"sha": p})).collect();
        commits.push(json!({"sha": sha, "parents": parents, "commit": {"message": message}}));
        compare(&s, parents[0]["sha"].as_str().unwrap_or(""), sha, files);
    }
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/pulls/7/commits"),
        json!(commits),
        "array",
    ));
    let activity: Vec<Value> = pushes
        .iter()
        .rev()
        .map(|(at, after)| {
            json!({"ref": "refs/heads/feat/x", "timestamp": at, "after": after,
                   "before": "0000000000000000000000000000000000000000", "activity_type": "push"})
        })
        .collect();
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/activity"),
        json!(activity),
        "array",
    ));
    s
}

/// The attack: after the approval a writer pushes a `[skip-sweep]` commit
/// that changes a config; the old run must not be reused for it.
#[test]
fn a_skip_sweep_commit_pushed_after_the_approval_that_changes_a_config_is_refused() {
    let s = approved_then(
        &[(
            LATE,
            &[HEAD],
            "tune [skip-sweep]",
            &["configs/nvidia-master.yaml"],
        )],
        &[
            ("2026-08-21T08:00:00Z", HEAD),
            ("2026-08-21T10:30:00Z", LATE),
        ],
    );
    let dir = test_kit::temp_dir();
    let (out, pairs) = find(&s, dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "commit {LATE} after the swept head {HEAD} changes configs/nvidia-master.yaml, which a sweep reads, and was not on the PR's head branch when the approval was written (2026-08-21T10:00:00Z)"
        )),
        "{err}"
    );
    assert!(pairs.is_empty());
    // Reverting a workflow edit, or renaming a benchmark script away, is
    // the same: the sweep's inputs changed after the approval.
    for (files, named) in [
        (
            &[".github/workflows/run-sweep.yml"][..],
            ".github/workflows/run-sweep.yml",
        ),
        (&["perf-changelog.yaml"][..], "perf-changelog.yaml"),
    ] {
        let s = approved_then(
            &[(LATE, &[HEAD], "revert [skip-sweep]", files)],
            &[
                ("2026-08-21T08:00:00Z", HEAD),
                ("2026-08-21T10:30:00Z", LATE),
            ],
        );
        let (out, _) = find(&s, test_kit::temp_dir().path());
        assert_eq!(out.status.code(), Some(1), "{named}");
        assert!(
            stderr(&out).contains(&format!("changes {named}")),
            "{}",
            stderr(&out)
        );
    }
}

/// A rename counts by both names: moving a benchmark script out of
/// `benchmarks/` changes what the sweep reads.
#[test]
fn a_rename_out_of_a_sweep_input_is_a_change_to_it() {
    let s = approved_then(&[], &[("2026-08-21T08:00:00Z", HEAD)]);
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/pulls/7/commits"),
        json!([
            {"sha": HEAD, "parents": [{"sha": OLD}], "commit": {"message": "swept"}},
            {"sha": LATE, "parents": [{"sha": HEAD}], "commit": {"message": "move [skip-sweep]"}},
        ]),
        "array",
    ));
    s.add_route(Route::json(
        "GET",
        &format!("{R}/compare/{HEAD}...{LATE}"),
        json!({"status": "ahead", "files": [{"filename": "attic/x.sh", "previous_filename": "benchmarks/x.sh", "status": "renamed"}]}),
    ));
    let (out, _) = find(&s, test_kit::temp_dir().path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("changes benchmarks/x.sh"),
        "{}",
        stderr(&out)
    );
}

/// The same commit pushed before the approval was seen by the approver:
/// the approval covers it (by the recorded push time, not the commit's
/// own date, which the pusher chooses).
#[test]
fn a_commit_on_the_branch_before_the_approval_is_covered_by_it() {
    let s = approved_then(
        &[(
            LATE,
            &[HEAD],
            "tune [skip-sweep]",
            &["configs/nvidia-master.yaml"],
        )],
        &[
            ("2026-08-21T08:00:00Z", HEAD),
            ("2026-08-21T09:30:00Z", LATE),
        ],
    );
    let (out, pairs) = find(&s, test_kit::temp_dir().path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(pairs["reuse-enabled"], "true");
    assert_eq!(pairs["reuse-source-run-id"], "556");
    // A push in the approval's own second is not before it; neither is a
    // head that was pushed before and force-pushed away again before the
    // approval.
    for pushes in [
        &[
            ("2026-08-21T08:00:00Z", HEAD),
            ("2026-08-21T10:00:00Z", LATE),
        ][..],
        &[
            ("2026-08-21T08:00:00Z", HEAD),
            ("2026-08-21T09:00:00Z", LATE),
            ("2026-08-21T09:30:00Z", HEAD),
            ("2026-08-21T10:30:00Z", LATE),
        ][..],
    ] {
        let s = approved_then(
            &[(
                LATE,
                &[HEAD],
                "tune [skip-sweep]",
                &["configs/nvidia-master.yaml"],
            )],
            pushes,
        );
        let (out, _) = find(&s, test_kit::temp_dir().path());
        assert_eq!(out.status.code(), Some(1), "{pushes:?}: {}", stderr(&out));
    }
}

/// The reuse protocol's own commits after the approval pass when they
/// change nothing a sweep reads: the merge of main judged by everything it
/// brought (its diff against the first parent), the refresh commit empty.
/// A merge that brings a config change is refused, naming the merge.
#[test]
fn the_protocols_merge_is_judged_by_what_it_brings() {
    let late_pushes = [
        ("2026-08-21T08:00:00Z", HEAD),
        ("2026-08-21T10:05:00Z", REFRESH),
    ];
    let s = approved_then(
        &[
            (
                MERGE,
                &[HEAD, "m"],
                "Merge remote-tracking branch 'origin/main'",
                &["README.md"],
            ),
            (
                REFRESH,
                &[MERGE],
                "chore: refresh PR #7 for sweep reuse [skip-sweep]",
                &[],
            ),
        ],
        &late_pushes,
    );
    let (out, pairs) = find(&s, test_kit::temp_dir().path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(pairs["reuse-source-run-id"], "556");
    // Nothing touched a sweep input: the push history was not needed.
    assert_eq!(s.count("GET", &format!("{R}/activity")), 0);

    let s = approved_then(
        &[
            (
                MERGE,
                &[HEAD, "m"],
                "Merge remote-tracking branch 'origin/main'",
                &["README.md", "configs/amd-master.yaml"],
            ),
            (
                REFRESH,
                &[MERGE],
                "chore: refresh PR #7 for sweep reuse [skip-sweep]",
                &[],
            ),
        ],
        &late_pushes,
    );
    let (out, pairs) = find(&s, test_kit::temp_dir().path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "commit {MERGE} after the swept head {HEAD} changes configs/amd-master.yaml"
        )),
        "{}",
        stderr(&out)
    );
    assert!(pairs.is_empty());
}

/// What cannot be judged is refused: a diff GitHub lists only in part, or
/// a later commit without a parent.
#[test]
fn a_diff_that_cannot_be_read_in_full_is_refused() {
    let many: Vec<String> = (0..300).map(|i| format!("docs/{i}.md")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let s = approved_then(&[(LATE, &[HEAD], "docs [skip-sweep]", &many)], &[]);
    let (out, _) = find(&s, test_kit::temp_dir().path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("300 or more files"),
        "{}",
        stderr(&out)
    );

    let s = approved_then(&[(LATE, &[HEAD], "docs [skip-sweep]", &["docs/a.md"])], &[]);
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/pulls/7/commits"),
        json!([
            {"sha": HEAD, "parents": [{"sha": OLD}], "commit": {"message": "swept"}},
            {"sha": LATE, "commit": {"message": "docs [skip-sweep]"}},
        ]),
        "array",
    ));
    let (out, _) = find(&s, test_kit::temp_dir().path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("names no parent"), "{}", stderr(&out));
}

// ---------------------------------------------------------------------------
// Issue #34 item 3a: a reused run's labels are checked as /stage-results
// checks them.
// ---------------------------------------------------------------------------

/// A run made while `evals-only` was applied is not a full sweep, even
/// after the label is removed and the PR carries only full-sweep labels.
#[test]
fn a_run_made_under_evals_only_is_not_reused_as_a_full_sweep() {
    let s = pinned_by_owner();
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/issues/7/timeline"),
        json!([
            {"event": "labeled", "created_at": "2026-08-20T00:00:00Z", "label": {"name": "full-sweep-enabled"}},
            {"event": "labeled", "created_at": "2026-08-21T08:00:00Z", "label": {"name": "evals-only"}},
            {"event": "unlabeled", "created_at": "2026-08-21T09:30:00Z", "label": {"name": "evals-only"}},
        ]),
        "array",
    ));
    let (out, pairs) = find(&s, test_kit::temp_dir().path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Reusable source run 555 is not a full sweep: it was created while reuse-incompatible label(s) evals-only were applied."),
        "{}",
        stderr(&out)
    );
    assert!(pairs.is_empty());

    // Nor is a run made before any full-sweep label was applied.
    let s = pinned_by_owner();
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/issues/7/timeline"),
        json!([{"event": "labeled", "created_at": "2026-08-21T09:30:00Z", "label": {"name": "full-sweep-enabled"}}]),
        "array",
    ));
    let (out, _) = find(&s, test_kit::temp_dir().path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("it was not created while a full-sweep label was applied"),
        "{}",
        stderr(&out)
    );
}
