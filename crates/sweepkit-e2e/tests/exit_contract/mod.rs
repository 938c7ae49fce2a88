//! The exit contract of README "Tools", checked on every binary from
//! `test_kit::tool_dir`: `0` the job was done, `1` the check said no, `2` the
//! tool could not do its job (usage error, unreadable input, I/O, API).
//!
//! Each tool gets `--version` → 0, an unknown flag → 2, a missing or
//! unreadable input → 2, where it has one a "no" input → 1, and a success
//! → 0. The GitHub tools use the loopback fake server for success and a
//! closed loopback port for the API failure.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use test_kit::{Fault, Route};

const OK: i32 = 0;
const REJECTED: i32 = 1;
const FAILED: i32 = 2;

use sweepkit_e2e::TOOLS;
use test_kit::bench_repo::{self, MASTER, RUNNERS, entry};
use test_kit::write_file as write;

/// Runs `tool args…` in `dir` with the kit's scrubbed environment and
/// `env` (no `GITHUB_*` or `INPUT_*` of the caller leaks in), so each code
/// comes from the input.
fn run(tool: &str, args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    test_kit::tool_command(tool)
        .args(args)
        .current_dir(dir)
        .env("SWEEPKIT_GITHUB_MAX_ATTEMPTS", "1")
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"))
}

/// Asserts the exit code of `tool args…`, showing its output when it differs.
#[track_caller]
fn expect(code: i32, tool: &str, args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    let out = run(tool, args, dir, env);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{tool} {args:?}: expected exit {code}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A loopback URL nothing listens on.
fn closed_port_url() -> String {
    test_kit::closed_url().expect("free port")
}

#[test]
fn version_is_0_and_an_unknown_flag_is_2_for_every_tool() {
    let tmp = test_kit::temp_dir();
    for tool in TOOLS {
        let out = expect(OK, tool, &["--version"], tmp.path(), &[]);
        assert!(
            String::from_utf8_lossy(&out.stdout).starts_with(tool),
            "{tool} --version"
        );
        expect(FAILED, tool, &["--no-such-flag"], tmp.path(), &[]);
    }
    // Every subcommand keeps clap's usage code.
    for (tool, sub) in [
        ("generate-matrix", "full-sweep"),
        ("generate-matrix", "test-config"),
        ("generate-matrix", "changelog"),
        ("generate-matrix", "priority"),
        ("generate-matrix", "sweep-policy"),
        ("generate-matrix", "canary"),
        ("generate-matrix", "from-command"),
        ("generate-matrix", "split"),
        ("generate-matrix", "leg-env"),
        ("generate-matrix", "worker-settings"),
        ("generate-matrix", "changelog-metadata"),
        ("collect-results", "process"),
        ("collect-results", "aggregate"),
        ("collect-results", "evals"),
        ("collect-results", "validate-scores"),
        ("reuse-sweep", "find"),
        ("reuse-sweep", "validate-artifacts"),
        ("reuse-sweep", "stage-results"),
        ("reuse-sweep", "stage-dispatch"),
        ("reuse-sweep", "stage-callback"),
        ("sweep-ops", "authorize-fork"),
        ("sweep-ops", "merge"),
        ("sweep-ops", "recover-ingest"),
        ("sweep-ops", "runner-digest"),
        ("check-changelog", "prepare-merge"),
        ("check-changelog", "dry-run"),
    ] {
        expect(FAILED, tool, &[sub, "--no-such-flag"], tmp.path(), &[]);
    }
    expect(
        FAILED,
        "sweepkit",
        &["workflow", "check", "--no-such-flag"],
        tmp.path(),
        &[],
    );
}

use test_kit::git;

fn commit(dir: &Path, msg: &str) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", msg]);
    git(dir, &["rev-parse", "HEAD"])
}

#[test]
fn check_changelog() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    git(d, &["init", "-q", "-b", "main"]);
    git(d, &["config", "user.email", "t@example.invalid"]);
    git(d, &["config", "user.name", "t"]);
    bench_repo::write_configs(d);
    let (base_log, head_log) = bench_repo::base_and_appended_changelog();
    write(d, "perf-changelog.yaml", &base_log);
    let base = commit(d, "base");
    // Missing required input.
    expect(FAILED, "check-changelog", &["--base-ref", &base], d, &[]);
    // Accepted: one appended entry.
    write(d, "perf-changelog.yaml", &head_log);
    let added = commit(d, "append");
    expect(
        OK,
        "check-changelog",
        &["--base-ref", &base, "--head-ref", &added],
        d,
        &[],
    );
    // Rejected: a deleted line.
    write(d, "perf-changelog.yaml", &entry(bench_repo::KEY, 2));
    let deleted = commit(d, "delete");
    let out = expect(
        REJECTED,
        "check-changelog",
        &["--base-ref", &added, "--head-ref", &deleted],
        d,
        &[],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("Deletions are not allowed"));
    // The same through `generate-matrix changelog`: rejected is 1, stdout empty.
    let changelog = |base: &str, head: &str, file: &str| {
        vec![
            "changelog".to_string(),
            "--base-ref".into(),
            base.into(),
            "--head-ref".into(),
            head.into(),
            "--changelog-file".into(),
            file.into(),
        ]
    };
    let args = changelog(&added, &deleted, "perf-changelog.yaml");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = expect(REJECTED, "generate-matrix", &args, d, &[]);
    assert!(out.stdout.is_empty());
    // A git ref that cannot be read: the job cannot be done (2), both tools.
    let unknown = "0123456789abcdef0123456789abcdef01234567";
    let out = expect(
        FAILED,
        "check-changelog",
        &["--base-ref", &base, "--head-ref", unknown],
        d,
        &[],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains(unknown));
    let args = changelog(unknown, &added, "perf-changelog.yaml");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = expect(FAILED, "generate-matrix", &args, d, &[]);
    assert!(out.stdout.is_empty());
    // A changelog that is not there at the head ref: 2.
    expect(
        FAILED,
        "check-changelog",
        &[
            "--base-ref",
            &base,
            "--head-ref",
            &added,
            "--changelog-file",
            "no-such-changelog.yaml",
        ],
        d,
        &[],
    );
    // A master config the generation needs is missing from the work tree: 2.
    std::fs::remove_file(d.join("configs/amd-master.yaml")).expect("rm");
    let args = changelog(&base, &added, "perf-changelog.yaml");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = expect(FAILED, "generate-matrix", &args, d, &[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("configs/amd-master.yaml"));
}

#[test]
fn generate_matrix() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    write(d, "configs/nvidia-master.yaml", MASTER);
    write(d, "configs/runners.yaml", RUNNERS);
    let sweep = |config: &'static str| {
        vec![
            "full-sweep",
            "--config-files",
            config,
            "--runner-config",
            "configs/runners.yaml",
        ]
    };
    let out = expect(
        OK,
        "generate-matrix",
        &sweep("configs/nvidia-master.yaml"),
        d,
        &[],
    );
    let rows: Value = serde_json::from_slice(&out.stdout).expect("rows");
    assert_eq!(rows.as_array().map(Vec::len), Some(2), "one row per conc");
    // Bad flag value.
    let mut bad = sweep("configs/nvidia-master.yaml");
    bad.extend(["--step-size", "1"]);
    expect(FAILED, "generate-matrix", &bad, d, &[]);
    // A config file that cannot be read: the job cannot be done.
    let out = expect(
        FAILED,
        "generate-matrix",
        &sweep("configs/missing.yaml"),
        d,
        &[],
    );
    assert!(out.stdout.is_empty());
    // An invalid config: the check said no.
    write(
        d,
        "configs/bad.yaml",
        &MASTER.replace(
            "  framework: vllm\n",
            "  framework: vllm\n  no-such-field: 1\n",
        ),
    );
    let out = expect(
        REJECTED,
        "generate-matrix",
        &sweep("configs/bad.yaml"),
        d,
        &[],
    );
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("configs/bad.yaml"));
    // priority: an unreadable policy file is 2, an invalid one 1.
    write(d, "matrix.json", "[]");
    expect(
        FAILED,
        "generate-matrix",
        &[
            "priority",
            "--policy",
            "missing.yaml",
            "--input",
            "matrix.json",
        ],
        d,
        &[],
    );
    // The workflow's computations: a missing input file is 2, an invalid
    // one 1 (canary, split, changelog-metadata, the sweep-policy event).
    for sub in ["canary", "split", "changelog-metadata"] {
        let mut args = vec![sub, "--input", "no-such-config.json"];
        if sub == "changelog-metadata" {
            args.extend(["--output", "meta.json"]);
        }
        expect(FAILED, "generate-matrix", &args, d, &[]);
        write(d, "not-json.json", "{");
        args[2] = "not-json.json";
        expect(REJECTED, "generate-matrix", &args, d, &[]);
    }
    let policy = |event: &'static str| {
        vec![
            "sweep-policy",
            "--event-name",
            "pull_request",
            "--repository",
            "o/r",
            "--event-path",
            event,
        ]
    };
    expect(
        FAILED,
        "generate-matrix",
        &policy("no-such-event.json"),
        d,
        &[],
    );
    expect(
        REJECTED,
        "generate-matrix",
        &policy("not-json.json"),
        d,
        &[],
    );
    write(d, "policy.yaml", "- not a mapping\n");
    expect(
        REJECTED,
        "generate-matrix",
        &[
            "priority",
            "--policy",
            "policy.yaml",
            "--input",
            "matrix.json",
        ],
        d,
        &[],
    );
}

#[test]
fn collect_results() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    expect(FAILED, "collect-results", &["aggregate"], d, &[]);
    // Exception fixed by the conformance corpus (aggregate-missing-directory):
    // a results directory that does not exist is an empty result set.
    expect(
        OK,
        "collect-results",
        &["aggregate", "missing", "bmk0"],
        d,
        &[],
    );
    assert_eq!(
        std::fs::read_to_string(d.join("agg_bmk0.json")).expect("agg"),
        "[]"
    );
    write(d, "r/a.json", r#"{"hw": "h200", "conc": 4}"#);
    // The output cannot be written (a directory stands in its place).
    std::fs::create_dir_all(d.join("agg_blocked.json")).expect("mkdir");
    expect(
        FAILED,
        "collect-results",
        &["aggregate", "r", "blocked"],
        d,
        &[],
    );
    expect(OK, "collect-results", &["aggregate", "r", "bmk"], d, &[]);
    assert!(d.join("agg_bmk.json").is_file());
    // A result file that is not JSON: the result set is rejected.
    write(d, "bad/a.json", "{not json");
    expect(
        REJECTED,
        "collect-results",
        &["aggregate", "bad", "bmk2"],
        d,
        &[],
    );
    assert!(!d.join("agg_bmk2.json").exists());
    // validate-scores: below the threshold is a "no", above it passes.
    let score = |v: f64| format!(r#"{{"results":{{"gsm8k":{{"exact_match,strict-match":{v}}}}}}}"#);
    let env = [("MODEL_PREFIX", "alpha")];
    write(d, "results_1.json", &score(0.5));
    expect(REJECTED, "collect-results", &["validate-scores"], d, &env);
    write(d, "results_1.json", &score(0.95));
    expect(OK, "collect-results", &["validate-scores"], d, &env);
}

#[test]
fn compare_results() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    write(
        d,
        "base.json",
        &json!([crate::common::agg_row("h100", 8, 1000.0)]).to_string(),
    );
    write(
        d,
        "same.json",
        &json!([crate::common::agg_row("h100", 8, 1000.0)]).to_string(),
    );
    write(
        d,
        "worse.json",
        &json!([crate::common::agg_row("h100", 8, 500.0)]).to_string(),
    );
    let args = |new: &'static str| vec!["--new", new, "--baseline", "base.json"];
    expect(FAILED, "compare-results", &args("missing.json"), d, &[]);
    expect(OK, "compare-results", &args("same.json"), d, &[]);
    // A regression is only a "no" with --fail-on-regression.
    expect(OK, "compare-results", &args("worse.json"), d, &[]);
    let mut fail = args("worse.json");
    fail.push("--fail-on-regression");
    expect(REJECTED, "compare-results", &fail, d, &[]);
    let mut fine = args("same.json");
    fine.push("--fail-on-regression");
    expect(OK, "compare-results", &fine, d, &[]);
}

#[test]
fn success_rate() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    write(
        d,
        "configs/runners.yaml",
        "labels:\n  cluster:h100-cw: [a]\n",
    );
    let args = ["--repo", "acme/bench", "--run-id", "77", "run_stats"];
    // No runner config: an input it needs.
    let other = test_kit::temp_dir();
    expect(FAILED, "success-rate", &args, other.path(), &[]);
    // Exception fixed by the conformance corpus (auth-failure-writes-null):
    // a token whose identity cannot be read gives `null` stats and exit 0.
    let dead = closed_port_url();
    expect(
        OK,
        "success-rate",
        &args,
        d,
        &[("GITHUB_API_URL", &dead), ("GITHUB_TOKEN", "ghp_test")],
    );
    assert_eq!(
        std::fs::read_to_string(d.join("run_stats.json")).expect("stats"),
        "null"
    );
    std::fs::remove_file(d.join("run_stats.json")).expect("rm");
    let s = test_kit::fake_github();
    s.add_route(Route::json("GET", "/user", json!({"login": "ci"})));
    s.add_route(Route::json(
        "GET",
        "/repos/acme/bench/actions/runs/77",
        json!({"id": 77, "name": "Run Sweep"}),
    ));
    s.add_route(Route::paginated(
        "GET",
        "/repos/acme/bench/actions/runs/77/jobs",
        json!({"total_count": 0, "jobs": [
            {"name": "bench cluster:h100-cw", "conclusion": "success"}
        ]}),
        "object:jobs",
    ));
    let url = s.base_url();
    // GitHub cannot answer for the run: the job cannot be done.
    let broken = test_kit::fake_github();
    broken.add_route(Route::json("GET", "/user", json!({"login": "ci"})));
    broken.fail_always(
        "GET",
        "/repos/acme/bench/actions/runs/77",
        Fault::Status(500),
    );
    let broken_url = broken.base_url();
    expect(
        FAILED,
        "success-rate",
        &args,
        d,
        &[
            ("GITHUB_API_URL", &broken_url),
            ("GITHUB_TOKEN", "ghp_test"),
        ],
    );
    assert!(!d.join("run_stats.json").exists());
    expect(
        OK,
        "success-rate",
        &args,
        d,
        &[("GITHUB_API_URL", &url), ("GITHUB_TOKEN", "ghp_test")],
    );
    assert!(d.join("run_stats.json").is_file());
}

#[test]
fn visualizer_comment() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    let args = ["--repo", "acme/bench", "--pr-number", "5", "--run-id", "77"];
    expect(FAILED, "visualizer-comment", &args[..4], d, &[]);
    let dead = closed_port_url();
    let env = [
        ("GITHUB_API_URL", dead.as_str()),
        ("GITHUB_TOKEN", "ghp_test"),
    ];
    expect(FAILED, "visualizer-comment", &args, d, &env);
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let out = expect(OK, "visualizer-comment", &dry, d, &env);
    assert!(String::from_utf8_lossy(&out.stdout).contains("unofficialRun=77"));
}

#[test]
fn reuse_sweep() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    // find: no token, then a GitHub that cannot answer — both 2.
    let find = [
        "find",
        "--repo",
        "acme/bench",
        "--event-name",
        "pull_request",
        "--event-action",
        "synchronize",
        "--pr-number",
        "3",
        "--commit-sha",
        "0123456789abcdef0123456789abcdef01234567",
        "--ref",
        "refs/pull/3/merge",
    ];
    expect(FAILED, "reuse-sweep", &find, d, &[]);
    let dead = closed_port_url();
    expect(
        FAILED,
        "reuse-sweep",
        &find,
        d,
        &[("GITHUB_API_URL", &dead), ("GITHUB_TOKEN", "ghp_test")],
    );
    let validate = |dir: &'static str| vec!["validate-artifacts", "--artifacts-dir", dir];
    expect(FAILED, "reuse-sweep", &validate("missing"), d, &[]);
    // An artifact set with no result rows is invalid.
    std::fs::create_dir_all(d.join("empty")).expect("mkdir");
    expect(REJECTED, "reuse-sweep", &validate("empty"), d, &[]);
    // A row as `collect-results process` writes it (every field the ingest needs).
    let row = json!({"hw": "h100", "conc": 4, "image": "img", "model": "openai/gpt-oss-120b",
                     "infmax_model_prefix": "gptoss", "framework": "vllm", "precision": "fp8",
                     "spec_decoding": "none", "disagg": false, "recipe_fingerprint": "",
                     "isl": 1024, "osl": 1024, "is_multinode": false, "tp": 2, "pp": 1,
                     "dcp_size": 1, "pcp_size": 1, "ep": 1, "dp_attention": "false",
                     "tput_per_gpu": 10.5, "output_tput_per_gpu": 1.5, "input_tput_per_gpu": 9.0});
    write(
        d,
        "bad/results_bmk/agg.json",
        &json!([{"anything": 1}]).to_string(),
    );
    write(d, "bad/run-stats/run_stats.json", "{}");
    expect(REJECTED, "reuse-sweep", &validate("bad"), d, &[]);
    write(d, "ok/results_bmk/agg.json", &json!([row]).to_string());
    write(d, "ok/run-stats/run_stats.json", "{}");
    expect(OK, "reuse-sweep", &validate("ok"), d, &[]);
    // stage-callback: a missing event is 2, a forged source is a no.
    let callback = |path: &'static str| {
        vec![
            "stage-callback",
            "--repo",
            "acme/bench",
            "--event-path",
            path,
        ]
    };
    let token = [("GH_TOKEN", "ghp_test")];
    expect(FAILED, "reuse-sweep", &callback("missing.json"), d, &token);
    write(
        d,
        "callback.json",
        &json!({"action": "stage-results-completed",
                "client_payload": {"source-repository": "evil/app"}})
        .to_string(),
    );
    expect(
        REJECTED,
        "reuse-sweep",
        &callback("callback.json"),
        d,
        &token,
    );
}

#[test]
fn sweep_ops() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    let digest = [
        "runner-digest",
        "--repo",
        "acme/bench",
        "--date",
        "2026-12-01",
    ];
    // No token: cannot work.
    expect(FAILED, "sweep-ops", &digest, d, &[]);
    // GitHub cannot answer.
    let dead = closed_port_url();
    expect(
        FAILED,
        "sweep-ops",
        &digest,
        d,
        &[("GITHUB_API_URL", &dead), ("GH_TOKEN", "ghp_test")],
    );
    let s = test_kit::fake_github();
    let runner =
        |status: &str| json!({"name": "r1", "os": "Linux", "status": status, "labels": []});
    s.add_route(Route::paginated(
        "GET",
        "/repos/acme/bench/actions/runners",
        json!({"runners": [runner("online")]}),
        "object:runners",
    ));
    let env = [
        ("GITHUB_API_URL", s.base_url()),
        ("GH_TOKEN", "ghp_test".into()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut failing = digest.to_vec();
    failing.push("--fail-on-offline");
    expect(OK, "sweep-ops", &failing, d, &env);
    // The "no": a runner offline with --fail-on-offline.
    s.add_route(Route::paginated(
        "GET",
        "/repos/acme/bench/actions/runners",
        json!({"runners": [runner("offline")]}),
        "object:runners",
    ));
    expect(REJECTED, "sweep-ops", &failing, d, &env);
    // authorize-fork: a missing event file cannot work; a read-only actor is a no.
    let fork = |path: &'static str| {
        vec![
            "authorize-fork",
            "--repo",
            "acme/bench",
            "--actor",
            "reader",
            "--event-path",
            path,
        ]
    };
    expect(FAILED, "sweep-ops", &fork("missing.json"), d, &env);
    write(
        d,
        "event.json",
        &json!({"label": {"name": "sweep-enabled"},
                "pull_request": {"number": 1, "head": {"sha": "abc", "repo": {"full_name": "fork/bench"}}}})
        .to_string(),
    );
    s.with_collaborator("acme/bench", "reader", "read");
    expect(REJECTED, "sweep-ops", &fork("event.json"), d, &env);
}

#[test]
fn sweepkit_workflow() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    let check = ["workflow", "check", "--dir", "wf"];
    // Nothing written yet: the file to check cannot be read.
    expect(FAILED, "sweepkit", &check, d, &[]);
    expect(
        OK,
        "sweepkit",
        &["workflow", "write", "--dir", "wf", "--allow-unreleased"],
        d,
        &[],
    );
    expect(OK, "sweepkit", &check, d, &[]);
    let file = d.join("wf/sweepkit-run-sweep.yml");
    let text = std::fs::read_to_string(&file).expect("read");
    std::fs::write(&file, format!("{text}# edited\n")).expect("write");
    expect(REJECTED, "sweepkit", &check, d, &[]);
}

/// #26 item 8, #27 item 1: every tool (generate-matrix's subcommands and
/// compare-results too) goes through `sweep_cli::main` and says what went
/// wrong once, after the one prefix `<tool>: error: `, both
/// for a "no" (1) and for "could not do the job" (2).
#[test]
fn every_failure_is_reported_once_after_the_tool_prefix() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    write(d, "bad/a/x.json", "{ not json");
    std::fs::create_dir_all(d.join("empty")).expect("mkdir");
    write(d, "bad.json", "{ not json");
    let viz = ["--repo", "acme/bench", "--pr-number", "5", "--run-id", "77"];
    let mut viz_bad = viz.to_vec();
    viz_bad.extend(["--dry-run", "--compare-json", "bad.json"]);
    let success = ["--repo", "acme/bench", "--run-id", "77", "run_stats"];
    let cases: &[(i32, &str, &[&str])] = &[
        (REJECTED, "collect-results", &["aggregate", "bad", "x"]),
        (
            FAILED,
            "collect-results",
            &[
                "validate-agentic",
                "nowhere",
                "--failed-request-threshold",
                "0.1",
            ],
        ),
        (
            REJECTED,
            "reuse-sweep",
            &["validate-artifacts", "--artifacts-dir", "empty"],
        ),
        (
            FAILED,
            "reuse-sweep",
            &["validate-artifacts", "--artifacts-dir", "missing"],
        ),
        (FAILED, "success-rate", &success),
        (FAILED, "visualizer-comment", &viz_bad),
        (
            FAILED,
            "sweep-ops",
            &["runner-digest", "--repo", "acme/bench"],
        ),
        (FAILED, "sweepkit", &["workflow", "check", "--dir", "wf"]),
        (
            FAILED,
            "check-changelog",
            &["prepare-merge", "resolve-conflict"],
        ),
        (
            REJECTED,
            "generate-matrix",
            &["canary", "--search-space-config", "{ not json"],
        ),
        (
            FAILED,
            "generate-matrix",
            &["split", "--input", "missing.json"],
        ),
        (
            FAILED,
            "generate-matrix",
            &[
                "sweep-policy",
                "--event-name",
                "push",
                "--event-path",
                "missing.json",
            ],
        ),
        (
            REJECTED,
            "generate-matrix",
            &["priority", "--policy", "bad.json", "--input", "bad.json"],
        ),
        (FAILED, "compare-results", &["--new", "missing.json"]),
    ];
    for &(code, tool, args) in cases {
        let out = expect(code, tool, args, d, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        let prefix = format!("{tool}: error: ");
        let lines: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
        // Said once: no cause repeated inside the line either.
        let first = err.lines().next().unwrap_or_default();
        let tail = first.rsplit(": ").next().unwrap_or_default();
        assert_eq!(
            first.matches(tail).count(),
            1,
            "{tool}: cause repeated\n{err}"
        );
        assert_eq!(
            lines.len(),
            1,
            "{tool} {args:?}: one error line expected\n{err}"
        );
        assert!(
            lines[0].starts_with(&prefix),
            "{tool} {args:?}: the error line starts with {prefix:?}\n{err}"
        );
    }
}

/// #26 item 8: `sweep-ops merge` takes `--pr-number` as every other tool
/// does, and still accepts its older `--pr` (hidden).
#[test]
fn sweep_ops_merge_takes_pr_number_and_the_old_pr_spelling() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    for flag in ["--pr-number", "--pr"] {
        // Past parsing: the missing token is the failure, not the flag.
        let out = expect(
            FAILED,
            "sweep-ops",
            &["merge", "--repo", "acme/bench", flag, "7"],
            d,
            &[],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("GH_TOKEN or GITHUB_TOKEN is required"),
            "{flag}: {err}"
        );
    }
}
