//! `/acknowledge-regression <reason>` against the loopback fake GitHub
//! (issue #37 item 7): a writer's acknowledgement on the PR's head commit
//! turns the regression's failing check neutral and names who and why in
//! the comment; a reader's, a fork author's, a bot's, an edited one, or one
//! made before a later push does not count, and says why.

mod fixtures;

use std::path::Path;
use std::process::Output;

use fixtures::*;
use serde_json::{Value, json};
use test_kit::{CommandExt, FakeGitHub, Route, stderr, stdout};

const REPO: &str = "acme/bench";
const R: &str = "/repos/acme/bench";
/// The head the sweep compared (pushed at 09:00).
const HEAD: &str = "4f2a9c0d1e3b5a7968f0c2d4e6a8b0c1d3e5f7a9";
/// A later push (11:00).
const LATER: &str = "9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c";

fn comment(id: u64, login: &str, at: &str, body: &str) -> Value {
    json!({"id": id, "user": {"login": login, "type": "User"}, "created_at": at,
           "updated_at": at, "body": body,
           "html_url": format!("https://github.com/acme/bench/pull/42#issuecomment-{id}")})
}

/// PR #42 from a branch of the repository itself (`fork`: from
/// `mallory/bench`), pushed at 09:00 (HEAD) and, with `later_push`, at
/// 11:00 (LATER); `alice` writes, `rita` reads, `fred` is no collaborator.
fn server(comments: Vec<Value>, later_push: bool, fork: bool) -> FakeGitHub {
    let s = test_kit::fake_github();
    s.with_comments(REPO, 42, comments);
    s.with_check_runs(REPO);
    s.with_collaborator(REPO, "alice", "maintain");
    s.with_collaborator(REPO, "rita", "read");
    let head = if later_push { LATER } else { HEAD };
    let head_repo = if fork { "mallory/bench" } else { REPO };
    s.add_route(Route::json(
        "GET",
        &format!("{R}/pulls/42"),
        json!({"number": 42, "head": {"ref": "feat/x", "sha": head, "repo": {"full_name": head_repo}}}),
    ));
    let mut pushes = vec![("2026-08-21T09:00:00Z", HEAD)];
    if later_push {
        pushes.push(("2026-08-21T11:00:00Z", LATER));
    }
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

fn report_file(dir: &Path) -> std::path::PathBuf {
    let (report, _) = two_points_regressed();
    let path = dir.join("compare.json");
    std::fs::write(&path, report.to_string()).expect("report");
    path
}

/// `visualizer-comment check-run` on `sha` for PR #42.
fn check_run(s: &FakeGitHub, dir: &Path, sha: &str) -> Output {
    test_kit::command(env!("CARGO_BIN_EXE_visualizer-comment"))
        .args(["check-run", "--pr-number", "42", "--sha", sha, "--report"])
        .arg(report_file(dir))
        .github(s)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_RUN_ID", "32991847205")
        .env("GITHUB_ACTIONS", "true")
        .output()
        .expect("run visualizer-comment check-run")
}

/// The sticky comment for `sha` on PR #42, with compare-results' comment
/// report (its own verdict line) as the section.
fn comment_run(s: &FakeGitHub, dir: &Path, sha: &str) -> Output {
    let (_, section) = two_points_regressed();
    let section_path = dir.join("compare.md");
    std::fs::write(&section_path, section).expect("section");
    test_kit::command(env!("CARGO_BIN_EXE_visualizer-comment"))
        .args(["--pr-number", "42", "--head-sha", sha, "--compare-json"])
        .arg(report_file(dir))
        .arg("--section")
        .arg(section_path)
        .github(s)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_RUN_ID", "32991847205")
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env("GITHUB_OUTPUT", dir.join("output"))
        .output()
        .expect("run visualizer-comment")
}

fn conclusion(s: &FakeGitHub) -> (String, String) {
    let runs = s.check_runs(REPO);
    assert_eq!(runs.len(), 1, "one check run: {runs:?}");
    (
        runs[0]["conclusion"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        runs[0]["output"]["title"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

fn sticky(s: &FakeGitHub) -> String {
    s.comments(REPO, 42)
        .iter()
        .filter_map(|c| c["body"].as_str())
        .find(|b| b.starts_with("<!-- sweepkit:visualizer-comment -->"))
        .expect("the sticky comment")
        .to_string()
}

const ACK: &str =
    "/acknowledge-regression expected: the new scheduler trades *TTFT* for <throughput>";

#[test]
fn a_writers_acknowledgement_turns_the_check_neutral_and_names_who_and_why() {
    let s = server(
        vec![comment(1, "alice", "2026-08-21T10:00:00Z", ACK)],
        false,
        false,
    );
    let dir = test_kit::temp_dir();
    let out = check_run(&s, dir.path(), HEAD);
    assert!(out.status.success(), "{}", stderr(&out));
    let (c, title) = conclusion(&s);
    assert_eq!(c, "neutral");
    assert!(
        title.ends_with(
            "— regressed, acknowledged by @alice: expected: the new scheduler trades *TTFT* for <throughput>"
        ),
        "{title}"
    );
    assert!(
        stdout(&out).contains("::notice::the regression on 4f2a9c0 is acknowledged by @alice"),
        "{}",
        stdout(&out)
    );

    let out = comment_run(&s, dir.path(), HEAD);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = sticky(&s);
    let heading = body
        .lines()
        .find(|l| l.starts_with("### "))
        .unwrap_or_default();
    assert!(heading.starts_with("### ⚠️ "), "{heading}");
    // The reason is escaped as every name is (no HTML, no link, no
    // mention; emphasis may only style it), the login is no mention.
    assert!(
        heading.contains(
            "— acknowledged by [@\u{2060}alice](https://github.com/acme/bench/pull/42#issuecomment-1): expected: the new scheduler trades *TTFT* for &lt;throughput&gt;"
        ),
        "{heading}"
    );
    // compare's own verdict line below agrees with the heading.
    assert!(
        body.contains("\n**Verdict: ⚠️ acknowledged: 2 points regressed (4 metrics) · "),
        "{body}"
    );
    assert!(!body.contains("**Verdict: ❌"), "{body}");
    test_kit::assert_snapshot!("acknowledged_comment", stable(&body));
}

#[test]
fn a_readers_or_fork_authors_acknowledgement_is_refused_with_the_reason() {
    let s = server(
        vec![
            comment(1, "rita", "2026-08-21T10:00:00Z", ACK),
            comment(2, "fred", "2026-08-21T10:05:00Z", ACK),
        ],
        false,
        false,
    );
    let dir = test_kit::temp_dir();
    let out = check_run(&s, dir.path(), HEAD);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(conclusion(&s).0, "failure");
    let log = stdout(&out);
    assert!(
        log.contains("/acknowledge-regression by @rita does not count: @rita has no write, maintain or admin permission on acme/bench (role 'read', permission 'read')"),
        "{log}"
    );
    assert!(
        log.contains("/acknowledge-regression by @fred does not count: @fred has no write, maintain or admin permission on acme/bench (not a collaborator)"),
        "{log}"
    );
    // Nobody without write access gets the PR or the pushes read for them.
    assert_eq!(s.count("GET", &format!("{R}/activity")), 0);
    let out = comment_run(&s, dir.path(), HEAD);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = sticky(&s);
    assert!(body.contains("### ❌ "), "{body}");
    assert!(!body.contains("acknowledged by"), "{body}");
}

#[test]
fn an_acknowledgement_before_a_later_push_is_void() {
    let s = server(
        vec![comment(1, "alice", "2026-08-21T10:00:00Z", ACK)],
        true,
        false,
    );
    let dir = test_kit::temp_dir();
    let out = check_run(&s, dir.path(), LATER);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(conclusion(&s).0, "failure");
    // Void: the comment's heading and compare's verdict line stay ❌.
    let out_comment = comment_run(&s, dir.path(), LATER);
    assert!(out_comment.status.success(), "{}", stderr(&out_comment));
    let body = sticky(&s);
    assert!(body.contains("\n### ❌ 2 points regressed"), "{body}");
    assert!(
        body.contains("\n**Verdict: ❌ 2 points regressed"),
        "{body}"
    );
    assert!(!body.contains("acknowledged"), "{body}");
    assert!(
        stdout(&out).contains("/acknowledge-regression by @alice does not count: it was written on 4f2a9c0 and the regression is on 9b8c7d6; a later push voids an acknowledgement, acknowledge again"),
        "{}",
        stdout(&out)
    );
    // The same comment still acknowledges the commit it was made on.
    let s = server(
        vec![comment(1, "alice", "2026-08-21T10:00:00Z", ACK)],
        true,
        false,
    );
    let out = check_run(&s, dir.path(), HEAD);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(conclusion(&s).0, "neutral");
}

#[test]
fn edited_bot_and_reasonless_acknowledgements_do_not_count() {
    let mut edited = comment(1, "alice", "2026-08-21T10:00:00Z", ACK);
    edited["updated_at"] = json!("2026-08-21T10:30:00Z");
    let mut bot = comment(3, "github-actions[bot]", "2026-08-21T10:20:00Z", ACK);
    bot["user"]["type"] = json!("Bot");
    let s = server(
        vec![
            edited,
            comment(
                2,
                "alice",
                "2026-08-21T10:10:00Z",
                "/acknowledge-regression",
            ),
            bot,
            comment(
                4,
                "alice",
                "2026-08-21T10:40:00Z",
                "> /acknowledge-regression quoted",
            ),
        ],
        false,
        false,
    );
    let dir = test_kit::temp_dir();
    let out = check_run(&s, dir.path(), HEAD);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(conclusion(&s).0, "failure");
    let log = stdout(&out);
    assert!(log.contains("it gives no reason"), "{log}");
    assert!(log.contains("it was edited after it was written"), "{log}");
    assert!(!log.contains("github-actions[bot]"), "{log}");
    assert_eq!(
        s.count(
            "GET",
            "/repos/acme/bench/collaborators/github-actions%5Bbot%5D/permission"
        ),
        0
    );
}

#[test]
fn a_fork_pr_cannot_bind_an_acknowledgement_and_fails_closed() {
    let s = server(
        vec![comment(1, "alice", "2026-08-21T10:00:00Z", ACK)],
        false,
        true,
    );
    let dir = test_kit::temp_dir();
    let out = check_run(&s, dir.path(), HEAD);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(conclusion(&s).0, "failure");
    assert!(
        stdout(&out).contains(
            "the PR's head branch is in mallory/bench, whose pushes acme/bench does not record"
        ),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_failure_that_is_not_regressions_alone_cannot_be_acknowledged() {
    let s = server(
        vec![comment(1, "alice", "2026-08-21T10:00:00Z", ACK)],
        false,
        false,
    );
    let dir = test_kit::temp_dir();
    let (mut report, _) = two_points_regressed();
    report["summary"]["verdict"] = json!("no_results");
    let path = dir.path().join("compare.json");
    std::fs::write(&path, report.to_string()).expect("report");
    let out = test_kit::command(env!("CARGO_BIN_EXE_visualizer-comment"))
        .args(["check-run", "--pr-number", "42", "--sha", HEAD, "--report"])
        .arg(&path)
        .github(&s)
        .env("GITHUB_REPOSITORY", REPO)
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(conclusion(&s).0, "failure");
    // Not even read: nothing to acknowledge.
    assert_eq!(s.count("GET", &format!("{R}/issues/42/comments")), 0);
}

#[test]
fn an_empty_acknowledge_command_turns_acknowledgements_off() {
    let s = server(
        vec![comment(1, "alice", "2026-08-21T10:00:00Z", ACK)],
        false,
        false,
    );
    let dir = test_kit::temp_dir();
    let out = test_kit::command(env!("CARGO_BIN_EXE_visualizer-comment"))
        .args(["check-run", "--pr-number", "42", "--sha", HEAD, "--report"])
        .arg(report_file(dir.path()))
        .github(&s)
        .env("GITHUB_REPOSITORY", REPO)
        .env("INPUT_ACKNOWLEDGE_COMMAND", "")
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(conclusion(&s).0, "failure");
    assert_eq!(s.count("GET", &format!("{R}/issues/42/comments")), 0);
}
