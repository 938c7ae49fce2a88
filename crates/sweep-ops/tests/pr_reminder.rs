//! `sweep-ops pr-reminder` against the loopback fake GitHub (issue #38
//! item 7): the adopter's template posted once per PR behind a hidden
//! marker found across every page of comments, and a token that cannot
//! write (a fork's) is a warning with exit 0.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use test_kit::{FakeGitHub, Fault, stderr, stdout};

const REPO: &str = "acme/bench";
const PR: u64 = 7;
const COMMENTS: &str = "/repos/acme/bench/issues/7/comments";
const TEMPLATE: &str = "Thanks! Add the `full-sweep-fail-fast` label to run the sweep.\n";

fn run(s: &FakeGitHub, dir: &Path, extra: &[&str]) -> Output {
    std::fs::write(dir.join("reminder.md"), TEMPLATE).unwrap();
    test_kit::command(env!("CARGO_BIN_EXE_sweep-ops"))
        .args([
            "pr-reminder",
            "--repo",
            REPO,
            "--pr-number",
            "7",
            "--template",
        ])
        .arg(dir.join("reminder.md"))
        .args(extra)
        .current_dir(dir)
        .env("GITHUB_API_URL", s.base_url())
        .env("GH_TOKEN", test_kit::TEST_TOKEN)
        .env("SWEEPKIT_GITHUB_MAX_ATTEMPTS", "1")
        .output()
        .unwrap()
}

fn bodies(s: &FakeGitHub) -> Vec<String> {
    s.comments(REPO, PR)
        .iter()
        .filter_map(|c| c["body"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_template_is_posted_once_behind_the_marker() {
    let s = FakeGitHub::start().unwrap();
    s.with_comments(REPO, PR, vec![]);
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("posted the reminder on acme/bench#7"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        bodies(&s),
        [format!("<!-- recipe-reminder -->\n{}", TEMPLATE.trim_end())]
    );
    // The next event (reopened, ready_for_review, …) posts nothing.
    let out = run(&s, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("already on acme/bench#7"),
        "{}",
        stdout(&out)
    );
    assert_eq!(bodies(&s).len(), 1);
}

#[test]
fn a_marked_comment_on_a_later_page_is_found_and_a_new_marker_posts_its_own() {
    let s = FakeGitHub::start().unwrap();
    // 150 comments, the reference's reminder (same marker) as the 130th:
    // on the second page of 100.
    let comments: Vec<Value> = (1..=150)
        .map(|i| {
            let body = if i == 130 {
                "<!-- recipe-reminder -->\nthe reference's text".to_string()
            } else {
                format!("comment {i}")
            };
            json!({"id": i, "body": body, "user": {"login": "someone"}})
        })
        .collect();
    s.with_comments(REPO, PR, comments);
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("(comment 130)"), "{}", stdout(&out));
    let pages: Vec<String> = s
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path == COMMENTS)
        .map(|r| r.query.get("page").cloned().unwrap_or_else(|| "1".into()))
        .collect();
    assert_eq!(pages, ["1", "2"]);
    assert_eq!(bodies(&s).len(), 150, "nothing posted");
    // Another marker is another comment.
    let out = run(&s, dir.path(), &["--marker", "signoff-reminder"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(bodies(&s)[150].starts_with("<!-- signoff-reminder -->\n"));
}

#[test]
fn a_token_that_cannot_write_is_a_warning_and_exit_0() {
    let s = FakeGitHub::start().unwrap();
    s.with_comments(REPO, PR, vec![]);
    s.fail_always("POST", COMMENTS, Fault::Status(403));
    let dir = test_kit::temp_dir();
    let out = run(&s, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("warning: sweep-ops: pr-reminder: cannot comment on acme/bench#7: "),
        "{err}"
    );
    assert!(err.contains("no reminder posted"), "{err}");
    assert!(bodies(&s).is_empty());
}

#[test]
fn an_empty_template_is_refused_before_any_call() {
    let s = FakeGitHub::start().unwrap();
    s.with_comments(REPO, PR, vec![]);
    let dir = test_kit::temp_dir();
    std::fs::write(dir.path().join("empty.md"), "\n \n").unwrap();
    let out = test_kit::command(env!("CARGO_BIN_EXE_sweep-ops"))
        .args([
            "pr-reminder",
            "--repo",
            REPO,
            "--pr-number",
            "7",
            "--template",
        ])
        .arg(dir.path().join("empty.md"))
        .env("GITHUB_API_URL", s.base_url())
        .env("GH_TOKEN", test_kit::TEST_TOKEN)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("sweep-ops: error: the reminder template is empty"),
        "{}",
        stderr(&out)
    );
    assert!(s.requests().is_empty());
}

/// The example caller's command with the example template: what an
/// adopter copies posts InferenceX's reminder once.
#[test]
fn the_example_caller_posts_the_example_template() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let wf = std::fs::read_to_string(root.join("examples/pr-recipe-reminder.yml")).unwrap();
    let run_line = wf
        .lines()
        .find_map(|l| l.trim().strip_prefix("run: sweep-ops "))
        .expect("the example runs sweep-ops");
    let args: Vec<&str> = run_line.split_whitespace().collect();
    assert_eq!(
        args,
        ["pr-reminder", "--template", ".github/pr-reminder.md"]
    );
    let s = FakeGitHub::start().unwrap();
    s.with_comments(REPO, PR, vec![]);
    let dir = test_kit::temp_dir();
    std::fs::create_dir_all(dir.path().join(".github")).unwrap();
    let template = std::fs::read_to_string(root.join("examples/pr-reminder.md")).unwrap();
    std::fs::write(dir.path().join(".github/pr-reminder.md"), &template).unwrap();
    let out = test_kit::command(env!("CARGO_BIN_EXE_sweep-ops"))
        .args(&args)
        .current_dir(dir.path())
        .env("GITHUB_API_URL", s.base_url())
        .env("GH_TOKEN", test_kit::TEST_TOKEN)
        .env("GITHUB_REPOSITORY", REPO)
        .env("INPUT_PR_NUMBER", "7")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let posted = bodies(&s);
    assert_eq!(posted.len(), 1);
    assert!(posted[0].starts_with("<!-- recipe-reminder -->\n"));
    for needle in [
        "full-sweep-fail-fast",
        "full-sweep-enabled",
        "PR_REVIEW_CHECKLIST.md",
    ] {
        assert!(posted[0].contains(needle), "{needle}: {}", posted[0]);
    }
}
