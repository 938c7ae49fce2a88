//! `visualizer-comment` end to end against the loopback fake GitHub: one
//! sticky comment, updated in place, never duplicated, through faults.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use test_kit::{CommandExt, FakeGitHub, Fault, Route, stderr, stdout};

const REPO: &str = "acme/bench";
const LIST: &str = "/repos/acme/bench/issues/42/comments";

fn run(s: &FakeGitHub, dir: &Path, sections: &[&str]) -> Output {
    let mut cmd = test_kit::command(env!("CARGO_BIN_EXE_visualizer-comment"));
    cmd.args(["--pr-number", "42"])
        .github(s)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_RUN_ID", "32991847205")
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env("GITHUB_OUTPUT", dir.join("output"));
    for (i, text) in sections.iter().enumerate() {
        let p = dir.join(format!("section{i}.md"));
        std::fs::write(&p, text).expect("section");
        cmd.arg("--section").arg(p);
    }
    cmd.output().expect("run visualizer-comment")
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", stderr(out));
}

fn ours(s: &FakeGitHub) -> Vec<Value> {
    s.comments(REPO, 42)
        .into_iter()
        .filter(|c| {
            c["body"]
                .as_str()
                .is_some_and(|b| b.starts_with("<!-- sweepkit:visualizer-comment -->"))
        })
        .collect()
}

fn noise(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"id": i + 1, "user": {"login": "someone"}, "body": format!("comment {i}")}))
        .collect()
}

#[test]
fn running_twice_leaves_one_comment_updated() {
    let s = test_kit::fake_github();
    s.with_comments(REPO, 42, noise(3));
    let dir = test_kit::temp_dir();
    ok(&run(&s, dir.path(), &["## Compare\nfirst"]));
    ok(&run(
        &s,
        dir.path(),
        &["## Compare\nsecond", "## Evals\n| task | score |"],
    ));
    let mine = ours(&s);
    assert_eq!(mine.len(), 1);
    let body = mine[0]["body"].as_str().unwrap_or_default();
    test_kit::assert_snapshot!(
        "comment_body_two_sections",
        body.replace(
            &format!("sweepkit {}", env!("CARGO_PKG_VERSION")),
            "sweepkit [version]"
        )
    );
    assert_eq!(
        body,
        format!(
            "<!-- sweepkit:visualizer-comment -->\n\
             see unofficial run visualizer at https://inferencex.semianalysis.com/inference?unofficialRun=32991847205\n\
             see unofficial run visualizer at https://inferencex.semianalysis.com/evaluation?unofficialRun=32991847205\n\n\
             Run: [run 32991847205](https://github.com/acme/bench/actions/runs/32991847205)\n\n\
             ## Compare\nsecond\n\n## Evals\n| task | score |\n\n---\n<sub>posted by sweepkit {}</sub>",
            env!("CARGO_PKG_VERSION")
        )
    );
    assert_eq!(s.count("POST", LIST), 1);
    assert_eq!(s.comments(REPO, 42).len(), 4);
    let id = mine[0]["id"].as_u64().unwrap_or_default();
    let outputs = std::fs::read_to_string(dir.path().join("output")).expect("outputs");
    test_kit::assert_snapshot!(
        "github_output_two_runs",
        outputs.replace(&id.to_string(), "[ID]")
    );
    assert_eq!(
        outputs
            .matches(&format!(
                "comment-url=https://github.com/pull#issuecomment-{id}\n"
            ))
            .count(),
        2
    );
}

#[test]
fn existing_sticky_comment_on_page_two_is_updated_not_duplicated() {
    let s = test_kit::fake_github();
    let mut comments = noise(130);
    comments.insert(
        120,
        json!({"id": 9001, "user": {"login": "github-actions[bot]"},
               "body": "<!-- sweepkit:visualizer-comment -->\nold run"}),
    );
    s.with_comments(REPO, 42, comments);
    s.inject(
        "GET",
        LIST,
        [
            Fault::Status(500),
            Fault::TooManyRequests { retry_after: 0 },
        ],
    );
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path(), &[]);
    ok(&out);
    assert!(stdout(&out).contains("updated comment"));
    assert_eq!(s.count("POST", LIST), 0);
    assert_eq!(
        s.count("PATCH", "/repos/acme/bench/issues/comments/9001"),
        1
    );
    let mine = ours(&s);
    assert_eq!(mine.len(), 1);
    assert!(
        mine[0]["body"]
            .as_str()
            .unwrap_or_default()
            .contains("unofficialRun=32991847205")
    );
}

#[test]
fn uncertain_create_is_reconciled_without_a_duplicate() {
    let s = test_kit::fake_github();
    s.with_comments(REPO, 42, noise(2));
    // GitHub created the comment but the client saw a 502.
    s.inject("POST", LIST, [Fault::AppliedThenStatus(502)]);
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path(), &[]);
    ok(&out);
    assert_eq!(s.count("POST", LIST), 1, "the POST is never repeated");
    assert_eq!(ours(&s).len(), 1);
    assert!(stdout(&out).contains("already up to date"));
}

#[test]
fn marker_in_someone_elses_comment_is_not_hijacked() {
    let s = test_kit::fake_github();
    s.with_comments(
        REPO,
        42,
        vec![json!({"id": 5, "user": {"login": "mallory"}, "body": "<!-- sweepkit:visualizer-comment -->\nfake"})],
    );
    let dir = test_kit::temp_dir();
    ok(&run(&s, dir.path(), &[]));
    assert_eq!(s.count("PATCH", "/repos/acme/bench/issues/comments/5"), 0);
    assert_eq!(s.count("POST", LIST), 1);
}

#[test]
fn read_only_token_degrades_to_the_job_summary() {
    let s = test_kit::fake_github();
    s.add_route(Route::paginated("GET", LIST, json!([]), "array"));
    s.add_route(
        Route::json(
            "POST",
            LIST,
            json!({"message": "Resource not accessible by integration", "status": "403"}),
        )
        .with_status(403),
    );
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path(), &["| eval | score |"]);
    ok(&out);
    assert_eq!(s.count("POST", LIST), 1, "a 403 is not retried");
    let err = stderr(&out);
    assert!(
        err.contains("HTTP 403: Resource not accessible by integration"),
        "{err}"
    );
    assert!(err.contains("read-only token"), "{err}");
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).expect("summary");
    assert!(summary.contains("evaluation?unofficialRun=32991847205"));
    assert!(summary.contains("| eval | score |"));
    // What the fork PR's author finds in the job summary instead.
    test_kit::assert_snapshot!(
        "read_only_job_summary",
        summary.replace(
            &format!("sweepkit {}", env!("CARGO_PKG_VERSION")),
            "sweepkit [version]"
        )
    );
}

#[test]
fn clear_error_after_the_retry_budget() {
    let s = test_kit::fake_github();
    s.with_comments(REPO, 42, vec![]);
    s.fail_always("GET", LIST, Fault::Status(502));
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("commenting on PR #42"), "{err}");
    assert!(
        err.contains(
            "GitHub API GET /repos/acme/bench/issues/42/comments?per_page=100 failed: HTTP 502"
        ),
        "{err}"
    );
    assert!(err.contains("gave up after 3 attempts"), "{err}");
    assert_eq!(s.count("POST", LIST), 0);
}

// ---------------------------------------------------------------------------
// Issue #16 points 7 and 8.
// ---------------------------------------------------------------------------

/// A PAT's identity comes from `GET /user`: its own marked comment is
/// updated on the second run (matching `github-actions[bot]` duplicated it).
#[test]
fn a_pat_finds_its_own_comment_by_its_login() {
    let s = test_kit::fake_github();
    s.add_route(Route::json("GET", "/user", json!({"login": "alice"})));
    s.set_comment_author("alice");
    s.with_comments(
        REPO,
        42,
        vec![json!({"id": 5, "user": {"login": "github-actions[bot]"}, "created_at": "2026-08-01T00:00:00Z",
                    "body": "<!-- sweepkit:visualizer-comment -->\nold bot comment"})],
    );
    let dir = test_kit::temp_dir();
    ok(&run(&s, dir.path(), &["first"]));
    ok(&run(&s, dir.path(), &["second"]));
    let mine: Vec<Value> = ours(&s)
        .into_iter()
        .filter(|c| c["user"]["login"] == "alice")
        .collect();
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert!(
        mine[0]["body"]
            .as_str()
            .is_some_and(|b| b.contains("\n\nsecond\n"))
    );
    assert_eq!(s.count("POST", LIST), 1);
    // The bot's comment is not the PAT's to edit.
    assert_eq!(s.count("PATCH", "/repos/acme/bench/issues/comments/5"), 0);
}

/// Two runs race between list and POST: after its POST this run lists
/// again, keeps the older marked comment (with its body) and deletes the
/// duplicate it created.
#[test]
fn a_duplicate_created_by_a_race_is_deleted() {
    let s = test_kit::fake_github();
    s.with_comments(REPO, 42, noise(1));
    s.inject(
        "POST",
        LIST,
        [Fault::ConcurrentComment(
            "<!-- sweepkit:visualizer-comment -->\nthe other run".into(),
        )],
    );
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path(), &["this run"]);
    ok(&out);
    let left = ours(&s);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        left[0]["body"]
            .as_str()
            .is_some_and(|b| b.contains("\n\nthis run\n"))
    );
    assert_eq!(s.count("POST", LIST), 1);
    let deletes = s
        .requests()
        .into_iter()
        .filter(|r| r.method == "DELETE")
        .count();
    assert_eq!(deletes, 1);
    assert!(stderr(&out).contains("deleting this run's duplicate"));
}

/// Point 8: only the fork PR's read-only 403 is a warning; a rejected token
/// (401) or a missing PR (404) is exit 2.
#[test]
fn unauthorised_or_missing_is_an_error_not_read_only() {
    for (status, message) in [(401, "Bad credentials"), (404, "Not Found")] {
        let s = test_kit::fake_github();
        s.add_route(Route::paginated("GET", LIST, json!([]), "array"));
        s.add_route(Route::json("POST", LIST, json!({"message": message})).with_status(status));
        let dir = test_kit::temp_dir();
        let out = run(&s, dir.path(), &[]);
        assert_eq!(out.status.code(), Some(2), "{status}");
        let err = stderr(&out);
        assert!(err.contains(&format!("HTTP {status}: {message}")), "{err}");
        assert!(!err.contains("read-only token"), "{err}");
    }
}

#[test]
fn the_by_runner_file_is_read_from_its_input_and_preferred() {
    let dir = test_kit::temp_dir();
    let stats = dir.path().join("run_stats.json");
    std::fs::write(&stats, r#"{"b200-nscale": {"n_success": 0, "total": 0}}"#).expect("stats");
    let placed = dir.path().join("run_stats_by_runner.json");
    std::fs::write(
        &placed,
        json!({"schema_version": 1, "clusters": {"b200-nscale": {"n_success": 8, "total": 9}},
               "placed_by_runner": 9, "placed_by_name": 0,
               "unplaced": {"n_success": 0, "total": 1, "jobs_left_out": 0,
                            "jobs": [{"name": "leg b200 c4"}]}})
        .to_string(),
    )
    .expect("placed");
    let out = test_kit::command(env!("CARGO_BIN_EXE_visualizer-comment"))
        .args([
            "--pr-number",
            "42",
            "--repo",
            REPO,
            "--run-id",
            "7",
            "--dry-run",
        ])
        .arg("--run-stats")
        .arg(&stats)
        .env("INPUT_RUN_STATS_BY_RUNNER", &placed)
        .output()
        .expect("run visualizer-comment");
    ok(&out);
    let body = stdout(&out);
    assert!(
        body.contains("| b200-nscale | 8 / 9 | 89\u{a0}% ⚠️ |"),
        "{body}"
    );
    assert!(body.contains("⚠️ 1 job could not be placed"), "{body}");
    assert!(!body.contains("No GPU jobs were counted"), "{body}");
}
