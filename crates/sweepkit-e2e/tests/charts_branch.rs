//! `charts-branch` end to end (issue #26 item 3): the URL run-sweep.yml's
//! comment job gives visualizer-comment (`charts-base-url`) names the folder
//! the caller's publish-charts job (docs/charts.md) pushes the PNGs to, and
//! the comment embeds them exactly when that job runs (not on a fork's pull
//! request). publish.sh is run for real against a local bare repository.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::path::{Path, PathBuf};

use common::{eval_if, eval_value};
use serde_json::{Value, json};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const REPO: &str = "acme/bench";
const BRANCH: &str = "sweep-charts";
const RUN_ID: &str = "32991847205";
const ATTEMPT: &str = "2";

/// The `charts-base-url` expression of the comment job's visualizer-comment step.
fn base_url_expression() -> String {
    let wf = sweep_model::yaml::load_file(&root().join(".github/workflows/run-sweep.yml"))
        .unwrap()
        .into_value();
    let steps = wf["jobs"]["comment-unofficial-run-visualizer"]["steps"]
        .as_array()
        .unwrap();
    let step = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("sweepkit/sweepkit/actions/visualizer-comment@"))
        })
        .unwrap();
    step["with"]["charts-base-url"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The jobs of the caller snippet of `page` (under docs/) that uses `action`.
fn documented_jobs(page: &str, action: &str) -> Value {
    let doc = std::fs::read_to_string(root().join("docs").join(page)).unwrap();
    let block = doc
        .split("```yaml\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains(&format!("actions/{action}@")))
        .unwrap_or_else(|| panic!("docs/{page} shows no job using {action}"));
    sweep_model::yaml::parse_str(block).unwrap().into_value()
}

/// The contexts of the comment job (and of the caller's job after it).
fn ctx(event: &str, head_repo: Option<&str>, branch: &str) -> Value {
    let mut github = json!({
        "server_url": "https://github.com",
        "repository": REPO,
        "run_id": RUN_ID,
        "run_attempt": ATTEMPT,
        "event_name": event,
        "event": {},
    });
    if let Some(head) = head_repo {
        github["event"] = json!({"pull_request": {"head": {"repo": {"full_name": head}}}});
    }
    json!({
        "github": github,
        "inputs": {"charts-branch": branch},
        "needs": {"sweep": {"result": "success"}},
    })
}

#[test]
fn the_comment_embeds_from_the_charts_branch_only_when_the_caller_publishes() {
    let expr = base_url_expression();
    let jobs = documented_jobs("charts.md", "publish-charts");
    assert_eq!(jobs["sweep"]["with"]["charts-branch"], BRANCH);
    let job = &jobs["charts"];
    let job_if = job["if"].as_str().unwrap();
    let with = &job["steps"][1]["with"];
    assert_eq!(with["branch"], BRANCH, "the doc's job pushes to {BRANCH}");
    let cases = [
        ("pull_request", Some(REPO), true),
        ("pull_request", Some("someone/bench"), false),
        ("workflow_dispatch", None, true),
        ("push", None, true),
    ];
    for (event, head, publishes) in cases {
        let url = eval_value(&expr, &ctx(event, head, BRANCH));
        let expected = if publishes {
            json!(format!(
                "https://github.com/{REPO}/raw/{BRANCH}/{RUN_ID}-{ATTEMPT}"
            ))
        } else {
            json!("")
        };
        assert_eq!(url, expected, "{event} from {head:?}");
        assert_eq!(
            eval_if(job_if, &ctx(event, head, BRANCH), true),
            publishes,
            "docs/charts.md's job and the comment disagree for {event} from {head:?}"
        );
    }
    // Without the input: the artifact link only.
    assert_eq!(
        eval_value(&expr, &ctx("pull_request", Some(REPO), "")),
        json!("")
    );
}

#[test]
fn publish_charts_pushes_to_the_folder_the_comment_url_names() {
    let tmp = tempfile::tempdir().unwrap();
    let remote = tmp.path().join("remote.git");
    std::fs::create_dir(&remote).unwrap();
    test_kit::git(&remote, &["init", "-q", "--bare"]);
    let charts = tmp.path().join("charts");
    std::fs::create_dir(&charts).unwrap();
    let files = [
        "01-qwen3-5-fp4-b200-sglang-8k1k.png",
        "02-dsr1-fp8-h200-vllm-1k1k.png",
    ];
    for f in files {
        std::fs::write(charts.join(f), b"\x89PNG fake").unwrap();
    }
    let manifest = json!({"schema_version": 1, "charts": files.iter().map(|f| json!({
        "configuration": f, "file": f, "regressed_points": 0})).collect::<Vec<_>>()});
    std::fs::write(charts.join("charts.json"), manifest.to_string()).unwrap();
    let output = tmp.path().join("output");
    let out = test_kit::command("bash")
        .arg(root().join("actions/publish-charts/publish.sh"))
        .env("CHARTS_DIR", &charts)
        .env("CHARTS_BRANCH", BRANCH)
        .env("CHARTS_REMOTE", &remote)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_RUN_ID", RUN_ID)
        .env("GITHUB_RUN_ATTEMPT", ATTEMPT)
        .env("GITHUB_OUTPUT", &output)
        .output()
        .unwrap();
    test_kit::assert_exit(&out, 0);
    // The comment's URL, as run-sweep.yml computes it for this run.
    let url = eval_value(
        &base_url_expression(),
        &ctx("pull_request", Some(REPO), BRANCH),
    );
    let url = url.as_str().unwrap();
    let prefix = format!("https://github.com/{REPO}/raw/{BRANCH}/");
    let folder = url.strip_prefix(&prefix).unwrap();
    let pushed = test_kit::git(&remote, &["ls-tree", "-r", "--name-only", BRANCH]);
    for f in files.iter().copied().chain(["charts.json"]) {
        assert!(
            pushed.lines().any(|l| l == format!("{folder}/{f}")),
            "{folder}/{f} is not on {BRANCH}: {pushed}"
        );
    }
    // publish-charts' own output names the same folder, at the pushed commit.
    let sha = test_kit::git(&remote, &["rev-parse", BRANCH]);
    let outputs = std::fs::read_to_string(&output).unwrap();
    assert_eq!(
        outputs,
        format!(
            "base-url=https://github.com/{REPO}/raw/{}/{folder}/\n",
            sha.trim()
        )
    );
}

/// docs/comment.md's verdict job: `checks: write` and `pull-requests: read`
/// (a writer's `/acknowledge-regression` is read from the PR's comments)
/// and nothing else, only on a pull request from this repository (a fork's
/// token cannot create it).
#[test]
fn the_documented_verdict_job_asks_only_for_checks_write_and_skips_forks() {
    let jobs = documented_jobs("comment.md", "verdict-check");
    let job = &jobs["verdict"];
    assert_eq!(
        job["permissions"],
        json!({"checks": "write", "pull-requests": "read"})
    );
    assert_eq!(job["needs"], json!(["sweep"]));
    let job_if = job["if"].as_str().unwrap();
    assert!(eval_if(job_if, &ctx("pull_request", Some(REPO), ""), true));
    assert!(!eval_if(
        job_if,
        &ctx("pull_request", Some("someone/bench"), ""),
        true
    ));
    assert!(!eval_if(job_if, &ctx("push", None, ""), true));
    let steps = job["steps"].as_array().unwrap();
    assert_eq!(steps[0]["with"]["name"], "compare-report");
    assert_eq!(steps[1]["with"]["report"], "report/compare.json");
}

/// Runs publish.sh for real against a fresh local bare repository with
/// one chart, with `env` over the defaults of
/// [`publish_charts_pushes_to_the_folder_the_comment_url_names`]; returns
/// the run's output, the bare repository and the scratch directory.
fn publish_with(env: &[(&str, &str)]) -> (std::process::Output, PathBuf, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let remote = tmp.path().join("remote.git");
    std::fs::create_dir(&remote).unwrap();
    test_kit::git(&remote, &["init", "-q", "--bare"]);
    let charts = tmp.path().join("charts");
    std::fs::create_dir(&charts).unwrap();
    std::fs::write(charts.join("01-a.png"), b"\x89PNG fake").unwrap();
    std::fs::write(
        charts.join("charts.json"),
        json!({"schema_version": 1, "charts": [{"configuration": "a", "file": "01-a.png", "regressed_points": 0}]})
            .to_string(),
    )
    .unwrap();
    let mut cmd = test_kit::command("bash");
    cmd.arg(root().join("actions/publish-charts/publish.sh"))
        .current_dir(tmp.path())
        .env("CHARTS_DIR", &charts)
        .env("CHARTS_BRANCH", BRANCH)
        .env("CHARTS_REMOTE", &remote)
        .env("GITHUB_REPOSITORY", REPO)
        .env("GITHUB_RUN_ID", RUN_ID)
        .env("GITHUB_RUN_ATTEMPT", ATTEMPT)
        .env("GITHUB_OUTPUT", tmp.path().join("output"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    (cmd.output().unwrap(), remote, tmp)
}

/// Issue #34 item 8: publish-charts never pushes to the default branch (as
/// the caller passes it, or as the event names it) nor to a name that
/// looks protected, and the run id and attempt that name the folder it
/// replaces are positive integers (`../../x` would reach outside it).
/// Nothing is pushed and nothing outside the clone is removed.
#[test]
fn publish_charts_refuses_the_default_branch_and_a_bad_run_attempt() {
    let refused = |env: &[(&str, &str)], why: &str| {
        let (out, remote, tmp) = publish_with(env);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{env:?}: {err}");
        assert!(
            err.contains("::error::publish-charts: ") && err.contains(why),
            "{env:?}: {err}"
        );
        let heads = test_kit::git(&remote, &["for-each-ref", "refs/heads"]);
        assert!(heads.trim().is_empty(), "{env:?} pushed: {heads}");
        // The directories around the scratch clone are untouched.
        assert!(tmp.path().join("charts/charts.json").is_file());
        assert!(tmp.path().join("remote.git").is_dir());
    };
    refused(
        &[
            ("CHARTS_BRANCH", "trunk-of-acme"),
            ("CHARTS_DEFAULT_BRANCH", "trunk-of-acme"),
        ],
        "is the repository's default branch",
    );
    let tmp = tempfile::tempdir().unwrap();
    let event = tmp.path().join("event.json");
    std::fs::write(
        &event,
        serde_json::to_string_pretty(
            &json!({"repository": {"full_name": REPO, "default_branch": "dev-line"},
            "pull_request": {"head": {"repo": {"default_branch": "fork-main"}}}}),
        )
        .unwrap(),
    )
    .unwrap();
    let event = event.to_string_lossy().into_owned();
    for branch in ["dev-line", "fork-main"] {
        refused(
            &[("CHARTS_BRANCH", branch), ("GITHUB_EVENT_PATH", &event)],
            "is the repository's default branch",
        );
    }
    for branch in [
        "main",
        "Master",
        "trunk",
        "develop",
        "release",
        "release/1.2",
        "release-v2",
        "releases/x",
    ] {
        refused(&[("CHARTS_BRANCH", branch)], "looks protected");
    }
    for attempt in ["../../x", "0", "-1", "1/../..", "01", "1 2"] {
        refused(&[("GITHUB_RUN_ATTEMPT", attempt)], "GITHUB_RUN_ATTEMPT");
    }
    for run_id in ["0", "../1", "12a"] {
        refused(&[("GITHUB_RUN_ID", run_id)], "GITHUB_RUN_ID");
    }
    // A branch of its own, with the event naming another default: pushed.
    let (out, remote, _tmp) = publish_with(&[
        ("GITHUB_EVENT_PATH", &event),
        ("CHARTS_DEFAULT_BRANCH", "main"),
    ]);
    test_kit::assert_exit(&out, 0);
    let pushed = test_kit::git(&remote, &["ls-tree", "-r", "--name-only", BRANCH]);
    assert!(
        pushed
            .lines()
            .any(|l| l == format!("{RUN_ID}-{ATTEMPT}/01-a.png")),
        "{pushed}"
    );
}
