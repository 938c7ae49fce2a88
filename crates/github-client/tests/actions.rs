//! `github_client::actions` against the fake server: the newest successful
//! push run of a workflow on a branch with a given artifact, the artifact's
//! zip behind GitHub's redirect, and its extraction.

use std::time::Duration;

use github_client::actions::{RunQuery, unzip};
use github_client::{Client, Config, RetryPolicy};
use serde_json::{Value, json};
use test_kit::{FakeGitHub, Fault, zip_of};

const REPO: &str = "example/bench";
const TOKEN: &str = "ghs_testToken";

fn client(s: &FakeGitHub) -> Client {
    Client::new(Config {
        api_url: s.base_url(),
        token: Some(TOKEN.into()),
        retry: RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(50),
        },
        timeout: Duration::from_secs(10),
    })
    .expect("client")
}

fn run(id: u64, event: &str, branch: &str, conclusion: &str, sha: &str) -> Value {
    json!({
        "id": id,
        "event": event,
        "head_branch": branch,
        "head_sha": sha,
        "status": if conclusion.is_empty() { "in_progress" } else { "completed" },
        "conclusion": if conclusion.is_empty() { Value::Null } else { json!(conclusion) },
        "created_at": format!("2026-11-{:02}T10:00:00Z", id % 28 + 1),
        "html_url": format!("https://github.com/{REPO}/actions/runs/{id}"),
    })
}

fn query<'a>(exclude: Option<u64>) -> RunQuery<'a> {
    RunQuery {
        repo: REPO,
        workflow: "run-sweep.yml",
        branch: "main",
        event: "push",
        exclude_run: exclude,
        artifact: "results_bmk",
    }
}

#[test]
fn the_last_main_run_is_the_newest_successful_push_run_with_the_artifact_other_than_this_one() {
    let s = test_kit::fake_github();
    s.with_workflow_runs(
        REPO,
        "run-sweep.yml",
        vec![
            // This run (success already, as a re-run of a finished run is).
            run(510, "push", "main", "success", "a510"),
            // A fork's pull request from its own `main` branch.
            run(509, "pull_request", "main", "success", "a509"),
            // A failed main run, a gated run without results.
            run(508, "push", "main", "failure", "a508"),
            run(507, "push", "main", "success", "a507"),
            run(506, "push", "main", "success", "a506"),
            run(505, "push", "main", "success", "a505"),
        ],
    );
    let zip = zip_of(&[("agg_bmk.json", "[]")]);
    s.with_artifact(REPO, 510, "results_bmk", zip.clone());
    s.with_artifact(REPO, 509, "results_bmk", zip.clone());
    s.with_artifact(REPO, 508, "results_bmk", zip.clone());
    s.with_artifact(REPO, 507, "run-stats", zip.clone());
    let want = s.with_artifact(REPO, 506, "results_bmk", zip.clone());
    s.with_artifact(REPO, 505, "results_bmk", zip);
    let found = client(&s)
        .last_successful_run_with_artifact(&query(Some(510)))
        .expect("lookup")
        .expect("a run");
    assert_eq!(found.run_id, 506);
    assert_eq!(found.artifact_id, want);
    assert_eq!(found.head_sha, "a506");
    assert_eq!(found.created_at, "2026-11-03T10:00:00Z");
    let list = s
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/workflows/run-sweep.yml/runs"))
        .expect("the runs were listed");
    for (k, v) in [("branch", "main"), ("event", "push"), ("status", "success")] {
        assert_eq!(list.query.get(k).map(String::as_str), Some(v), "{list:?}");
    }
    assert_eq!(
        s.count("GET", &format!("/repos/{REPO}/actions/runs/505/artifacts")),
        0,
        "the scan stops at the first run with the artifact"
    );
}

#[test]
fn no_successful_main_run_is_none_not_an_error() {
    let s = test_kit::fake_github();
    s.with_workflow_runs(
        REPO,
        "run-sweep.yml",
        vec![run(3, "push", "main", "failure", "c3")],
    );
    let found = client(&s)
        .last_successful_run_with_artifact(&query(None))
        .expect("lookup");
    assert_eq!(found, None);
}

#[test]
fn a_refused_run_listing_is_an_error_naming_the_endpoint() {
    let s = test_kit::fake_github();
    s.with_workflow_runs(REPO, "run-sweep.yml", vec![]);
    let path = format!("/repos/{REPO}/actions/workflows/run-sweep.yml/runs");
    s.fail_always("GET", &path, Fault::Status(403));
    let e = client(&s)
        .last_successful_run_with_artifact(&query(None))
        .expect_err("refused");
    assert_eq!(e.status(), Some(403));
    assert!(e.to_string().contains(&path), "{e}");
}

#[test]
fn the_artifact_zip_comes_through_the_redirect_and_the_signed_url_gets_no_token() {
    let s = test_kit::fake_github();
    let zip = zip_of(&[("agg_bmk.json", "[{\"hw\": \"b200\"}]"), ("sub/x.txt", "x")]);
    let id = s.with_artifact(REPO, 9, "results_bmk", zip.clone());
    let got = client(&s)
        .download_artifact_zip(REPO, id)
        .expect("download");
    assert_eq!(got, zip);
    let reqs = s.requests();
    let api = reqs
        .iter()
        .find(|r| r.path == format!("/repos/{REPO}/actions/artifacts/{id}/zip"))
        .expect("the API was asked");
    assert_eq!(
        api.headers.get("authorization").map(String::as_str),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let blob = reqs
        .iter()
        .find(|r| r.path.starts_with(fake_github_blob_prefix()))
        .expect("the redirect target was fetched");
    assert!(
        !blob.headers.contains_key("authorization"),
        "the token went to the signed URL: {blob:?}"
    );
    let dir = test_kit::temp_dir();
    let files = unzip(&got, dir.path()).expect("unzip");
    assert_eq!(files.len(), 2);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("agg_bmk.json")).expect("read"),
        "[{\"hw\": \"b200\"}]"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/x.txt")).expect("read"),
        "x"
    );
}

fn fake_github_blob_prefix() -> &'static str {
    test_kit::fake_github::ARTIFACT_BLOB_PREFIX
}

#[test]
fn a_failed_download_of_the_signed_url_is_an_error_without_the_signature() {
    let s = test_kit::fake_github();
    let id = s.with_artifact(REPO, 9, "results_bmk", zip_of(&[("a", "b")]));
    s.fail_always(
        "GET",
        &format!("{}{id}.zip", fake_github_blob_prefix()),
        Fault::Status(404),
    );
    let e = client(&s).download_artifact_zip(REPO, id).expect_err("404");
    let text = e.to_string();
    assert_eq!(e.status(), Some(404), "{text}");
    assert!(text.contains("redirect target"), "{text}");
    assert!(!text.contains("fake-signature"), "{text}");
}

#[test]
fn unzip_refuses_entries_that_leave_the_directory_and_non_zips() {
    let dir = test_kit::temp_dir();
    let e = unzip(&zip_of(&[("../evil.json", "[]")]), dir.path()).expect_err("traversal");
    assert!(e.to_string().contains("'../evil.json'"), "{e}");
    assert!(!dir.path().join("../evil.json").exists());
    let e = unzip(b"not a zip", dir.path()).expect_err("not a zip");
    assert!(e.to_string().contains("not a readable zip"), "{e}");
}
