//! The shell shims of `actions/sweep-ops` and `actions/stage-results`, run
//! by bash with the step `env:` a runner would build from the inputs, the
//! tools from [`sweepkit_e2e::tool_dir`] and the fake GitHub on loopback:
//! the command dispatch, "empty input = not given", and the defaults the
//! shims fill in.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use test_kit::{FakeGitHub, Route};

fn as_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `text` with every `${{ inputs.X }}` replaced by the given input or the
/// declared default, and any other expression by `github`'s value or "".
fn eval(text: &str, action: &Value, inputs: &[(&str, &str)], github: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${{") {
        out.push_str(&rest[..i]);
        let j = rest[i..].find("}}").unwrap() + i;
        let key = rest[i + 3..j].trim();
        let value = match key.strip_prefix("inputs.") {
            Some(name) => inputs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
                .unwrap_or_else(|| as_str(&action["inputs"][name]["default"])),
            None => github
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.to_string())
                .unwrap_or_default(),
        };
        out.push_str(&value);
        rest = &rest[j + 2..];
    }
    out.push_str(rest);
    out
}

/// Runs the step named `step` of `actions/<name>` with `inputs`, in `dir`.
fn run_step(
    name: &str,
    step: &str,
    inputs: &[(&str, &str)],
    github: &[(&str, &str)],
    env: &[(&str, &str)],
    dir: &Path,
) -> Output {
    let (action_dir, action) = common::load_action(name, inputs);
    let s = action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == step)
        .unwrap_or_else(|| panic!("actions/{name} has no step {step:?}"));
    let script = dir.join("step.sh");
    std::fs::write(&script, s["run"].as_str().unwrap()).unwrap();
    let mut c = test_kit::command("bash");
    c.args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&script)
        .current_dir(dir)
        .env("PATH", sweepkit_e2e::path_with_tools())
        .env("GITHUB_ACTION_PATH", &action_dir)
        .env("SWEEPKIT_GITHUB_MAX_ATTEMPTS", "1")
        .envs(env.iter().copied());
    for (k, v) in s["env"].as_object().into_iter().flatten() {
        c.env(k, eval(&as_str(v), &action, inputs, github));
    }
    c.output().unwrap()
}

const GITHUB: [(&str, &str); 3] = [
    ("github.server_url", "https://github.com"),
    ("github.repository", "acme/bench"),
    ("github.run_id", "77"),
];

#[test]
fn sweep_ops_runner_digest_defaults_to_this_repository_and_can_fail() {
    let s = FakeGitHub::start().unwrap();
    s.add_route(Route::paginated(
        "GET",
        "/repos/acme/bench/actions/runners",
        json!({"runners": [{"name": "r1", "os": "Linux", "status": "offline", "labels": []}]}),
        "object:runners",
    ));
    let d = test_kit::temp_dir();
    let out_file = d.path().join("out");
    let summary = d.path().join("summary");
    let base = s.base_url();
    let env = [
        ("GITHUB_API_URL", base.as_str()),
        ("GITHUB_REPOSITORY", "acme/bench"),
        ("GITHUB_OUTPUT", out_file.to_str().unwrap()),
        ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
    ];
    let inputs = [("command", "runner-digest"), ("token", "ghp_runners")];
    let out = run_step(
        "sweep-ops",
        "Run sweep-ops",
        &inputs,
        &GITHUB,
        &env,
        d.path(),
    );
    test_kit::assert_exit(&out, 0);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.contains("1/1 self-hosted runners offline in `acme/bench`"),
        "{md}"
    );
    assert!(
        md.contains("([run](https://github.com/acme/bench/actions/runs/77))"),
        "{md}"
    );
    let outputs = std::fs::read_to_string(&out_file).unwrap();
    assert_eq!(outputs, "total=1\noffline-count=1\n");
    let auth = s.requests()[0].headers.get("authorization").cloned();
    assert_eq!(auth.as_deref(), Some("Bearer ghp_runners"));

    let inputs = [
        ("command", "runner-digest"),
        ("token", "ghp_runners"),
        ("fail-on-offline", "true"),
    ];
    let out = run_step(
        "sweep-ops",
        "Run sweep-ops",
        &inputs,
        &GITHUB,
        &env,
        d.path(),
    );
    test_kit::assert_exit(&out, 1);
}

#[test]
fn sweep_ops_recover_ingest_dry_run_and_an_unknown_command() {
    let s = FakeGitHub::start().unwrap();
    let run = |id: u64, event: &str, sha: &str, branch: &str| {
        json!({"id": id, "event": event, "status": "completed", "conclusion": "success",
               "path": ".github/workflows/run-sweep.yml", "head_sha": sha, "head_branch": branch,
               "head_repository": {"full_name": "acme/bench"}, "created_at": "2026-01-01T00:00:00Z"})
    };
    // Labelled for a full sweep before the run (issue #34's label rule).
    s.add_route(Route::paginated(
        "GET",
        "/repos/acme/bench/issues/5/timeline",
        json!([{"event": "labeled", "created_at": "2025-12-31T00:00:00Z", "label": {"name": "full-sweep-enabled"}}]),
        "array",
    ));
    s.add_route(Route::json(
        "GET",
        "/repos/acme/bench/actions/runs/11",
        run(11, "pull_request", "a1", "feat"),
    ));
    s.add_route(Route::json(
        "GET",
        "/repos/acme/bench/actions/runs/22",
        run(22, "push", "m2", "main"),
    ));
    for (id, name) in [(11, "bmk_agentic_x"), (22, "changelog-metadata")] {
        s.add_route(Route::paginated(
            "GET",
            &format!("/repos/acme/bench/actions/runs/{id}/artifacts"),
            json!({"artifacts": [{"name": name, "expired": false}]}),
            "object:artifacts",
        ));
    }
    s.add_route(Route::json(
        "GET",
        "/repos/acme/bench/commits/m2/pulls",
        json!([{"number": 5, "merged_at": "2026-01-01T00:00:00Z", "merge_commit_sha": "m2"}]),
    ));
    s.add_route(Route::paginated(
        "GET",
        "/repos/acme/bench/pulls/5/commits",
        json!([{"sha": "a1"}]),
        "array",
    ));
    // The trust rules recover-ingest shares with `reuse-sweep find`: a
    // writer's /reuse-sweep-run on the PR, and a merge run that reused
    // (nothing planned, the ingest job ran).
    s.with_collaborator("acme/bench", "writer", "write");
    s.with_comments(
        "acme/bench",
        5,
        vec![
            json!({"id": 1, "body": "/reuse-sweep-run", "user": {"login": "writer"},
                    "created_at": "2026-01-01T00:00:00Z", "author_association": "MEMBER"}),
        ],
    );
    let job = |name: &str, conclusion: &str| json!({"id": 1, "name": format!("sweep / {name}"), "status": "completed", "conclusion": conclusion});
    s.add_route(Route::paginated(
        "GET",
        "/repos/acme/bench/actions/runs/22/jobs",
        json!({"total_count": 4, "jobs": [
            job("policy", "success"),
            job("setup", "success"),
            job("canary-select", "skipped"),
            job("trigger-agentic-ingest", "failure"),
        ]}),
        "object:jobs",
    ));
    let d = test_kit::temp_dir();
    let base = s.base_url();
    let env = [
        ("GITHUB_API_URL", base.as_str()),
        ("GITHUB_REPOSITORY", "acme/bench"),
    ];
    let inputs = [
        ("command", "recover-ingest"),
        ("token", "ghs_repo"),
        ("source-run-id", "11"),
        ("merge-run-id", "22"),
        ("ingest-repository", "acme/app"),
        ("dry-run", "true"),
    ];
    let out = run_step(
        "sweep-ops",
        "Run sweep-ops",
        &inputs,
        &GITHUB,
        &env,
        d.path(),
    );
    test_kit::assert_exit(&out, 0);
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["dry-run"], true);
    assert_eq!(
        line["event_type"], "ingest-agentic-results",
        "an empty event-type input is the default"
    );
    assert!(s.requests().iter().all(|r| r.method == "GET"));

    let out = run_step(
        "sweep-ops",
        "Run sweep-ops",
        &[("command", "rm -rf"), ("token", "x")],
        &GITHUB,
        &env,
        d.path(),
    );
    test_kit::assert_exit(&out, 2);
}

#[test]
fn stage_results_shim_rejects_an_unknown_mode() {
    let d = test_kit::temp_dir();
    let out = run_step(
        "stage-results",
        "Check the mode",
        &[("mode", "stage"), ("token", "x")],
        &GITHUB,
        &[],
        d.path(),
    );
    test_kit::assert_exit(&out, 2);
    let out = run_step(
        "stage-results",
        "Check the mode",
        &[("mode", "callback"), ("token", "x")],
        &GITHUB,
        &[],
        d.path(),
    );
    test_kit::assert_exit(&out, 0);
}
