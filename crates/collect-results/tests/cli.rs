//! End-to-end tests of the `collect-results` binary: each test runs it in a
//! fresh temp dir with a scrubbed environment.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use test_kit::mkfifo;

/// A temp working dir plus a command builder with a clean environment.
struct Sandbox {
    dir: test_kit::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        Sandbox {
            dir: test_kit::temp_dir(),
        }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn write(&self, rel: &str, contents: &str) -> PathBuf {
        let p = self.path().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, contents).expect("write");
        p
    }
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        test_kit::command(env!("CARGO_BIN_EXE_collect-results"))
            .args(args)
            .current_dir(self.path())
            .envs(env.iter().copied())
            .output()
            .expect("run binary")
    }
    /// Names of the files in the working dir, sorted.
    fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path())
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

const RESULT: &str = "dsr1_1k1k_fp8_sglang_tp8_conc4_b200-x_01";

fn single_node_env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("RUNNER_TYPE", "b200"),
        ("FRAMEWORK", "sglang"),
        ("PRECISION", "fp8"),
        ("SPEC_DECODING", "none"),
        ("RESULT_FILENAME", RESULT),
        ("ISL", "1024"),
        ("OSL", "1024"),
        ("DISAGG", "false"),
        ("MODEL_PREFIX", "dsr1"),
        ("IMAGE", "lmsysorg/sglang:v1"),
        ("TP", "8"),
        ("EP_SIZE", "1"),
        ("DP_ATTENTION", "false"),
    ]
}

fn raw_result() -> Value {
    json!({
        "model_id": "deepseek-ai/DeepSeek-R1", "max_concurrency": 4,
        "benchmark_start_time_unix": 1000.0, "benchmark_end_time_unix": 1100.0, "duration": 100.0,
        "completed": 40, "total_input_tokens": 40000, "total_output_tokens": 40000,
        "output_throughput": 400.0, "total_token_throughput": 800.0,
        "mean_ttft_ms": 250.0, "mean_tpot_ms": 10.0
    })
}

#[test]
fn process_writes_row_and_sidecar_and_prints_the_row() {
    let sb = Sandbox::new();
    sb.write(&format!("{RESULT}.json"), &raw_result().to_string());
    let out = sb.run(&["process"], &single_node_env());
    assert!(out.status.success(), "{}", text(&out));
    let agg: Value = serde_json::from_slice(
        &std::fs::read(sb.path().join(format!("agg_{RESULT}.json"))).expect("agg"),
    )
    .expect("json");
    let printed: Value = serde_json::from_slice(&out.stdout).expect("stdout is the row");
    assert_eq!(agg, printed);
    assert_eq!(agg["tput_per_gpu"], json!(100.0));
    assert_eq!(agg["input_tput_per_gpu"], json!(50.0));
    assert_eq!(agg["mean_ttft"], json!(0.25));
    assert_eq!(agg["mean_intvty"], json!(100.0));
    assert_eq!(agg["power_valid"], json!(0));
    let side: Value = serde_json::from_slice(
        &std::fs::read(sb.path().join(format!("power_validation_{RESULT}.json"))).expect("side"),
    )
    .expect("json");
    assert_eq!(side["reasons"], json!(["telemetry_file_missing"]));
    assert_eq!(side["expected_gpu_count"], json!(8));
    // The row reads back through the shared model type.
    let row: sweep_model::results::ResultRow = serde_json::from_value(agg).expect("typed row");
    assert_eq!(row.row.conc, 4);
    let power = row.power.expect("the power part");
    assert_eq!(power.power_valid, 0);
    assert_eq!(power.power_metric_schema_version, 2);
}

/// Issue #34 item 2: figures and counts are refused where they enter,
/// naming the key or variable (exit 1, an invalid result or run
/// description), before anything is written. `1.7e308` once went through
/// and hung compare's chart.
#[test]
fn process_refuses_out_of_range_throughput_and_counts_naming_the_key() {
    let raw_text = raw_result().to_string();
    for (raw, env, needle) in [
        (
            raw_text.replace(
                "\"total_token_throughput\":800.0",
                "\"total_token_throughput\":1.7e308",
            ),
            vec![],
            "field 'total_token_throughput' is 1.7e308, above the limit of 1e12 (MAX_FIGURE)",
        ),
        (
            raw_text.replace(
                "\"output_throughput\":400.0",
                "\"output_throughput\":-400.0",
            ),
            vec![],
            "field 'output_throughput' is negative (-400)",
        ),
        (
            raw_text.replace(
                "\"output_throughput\":400.0",
                "\"output_throughput\":\"nan\"",
            ),
            vec![],
            "field 'output_throughput' is NaN, not a finite number",
        ),
        (
            raw_text.replace("\"output_throughput\":400.0", "\"output_throughput\":900.0"),
            vec![],
            "field 'output_throughput' (900) is more than 'total_token_throughput' (800)",
        ),
        (
            raw_text.replace("\"max_concurrency\":4", "\"max_concurrency\":0"),
            vec![],
            "field 'max_concurrency' must be a positive integer, found 0",
        ),
        (
            raw_text.clone(),
            vec![("TP", "0")],
            "TP=0 must be a positive integer, found 0",
        ),
        (
            raw_text.clone(),
            vec![("TP", "-8")],
            "TP=-8 must be a positive integer, found -8",
        ),
        (
            raw_text.clone(),
            vec![("EP_SIZE", "0")],
            "EP_SIZE=0 must be a positive integer, found 0",
        ),
        (
            raw_text.clone(),
            vec![("PP_SIZE", "4611686018427387904")],
            "PP_SIZE=4611686018427387904 is 4611686018427387904, above the limit of 1048576 (MAX_COUNT)",
        ),
    ] {
        assert!(
            !env.is_empty() || raw != raw_text,
            "{needle}: the replacement must apply"
        );
        let sb = Sandbox::new();
        sb.write(&format!("{RESULT}.json"), &raw);
        let mut e = single_node_env();
        for (k, v) in &env {
            e.retain(|(n, _)| n != k);
            e.push((k, v));
        }
        let out = sb.run(&["process"], &e);
        assert_eq!(out.status.code(), Some(1), "{needle}: {}", text(&out));
        assert!(text(&out).contains(needle), "{needle}: {}", text(&out));
        assert_eq!(
            sb.files(),
            vec![format!("{RESULT}.json")],
            "nothing written"
        );
    }
}

/// Issue #34 item 3b: a result with a key twice (the later value would
/// win silently) is refused naming the key and its line; nothing written.
#[test]
fn process_refuses_a_result_with_a_key_twice() {
    let sb = Sandbox::new();
    let raw = raw_result().to_string().replace(
        "\"total_token_throughput\":800.0",
        "\"total_token_throughput\":800.0,\n\"total_token_throughput\":8e9",
    );
    sb.write(&format!("{RESULT}.json"), &raw);
    let out = sb.run(
        &["process"],
        &[single_node_env(), vec![("GITHUB_ACTIONS", "true")]].concat(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("::error file={RESULT}.json,line=2::process: benchmark result {RESULT}.json is not valid JSON: duplicate key \"total_token_throughput\" at $.total_token_throughput")),
        "{}",
        text(&out)
    );
    assert_eq!(sb.files(), vec![format!("{RESULT}.json")]);
}

/// A latency named like an energy figure (`avg_power_w_ms` becomes
/// `avg_power_w`) is dropped as the reference's power step drops it, and the
/// power keys are the last ones written.
#[test]
fn process_drops_a_latency_named_like_an_energy_figure() {
    let sb = Sandbox::new();
    let mut raw = raw_result();
    raw["avg_power_w_ms"] = json!(5000.0);
    sb.write(&format!("{RESULT}.json"), &raw.to_string());
    let out = sb.run(&["process"], &single_node_env());
    assert!(out.status.success(), "{}", text(&out));
    let agg: Value = serde_json::from_slice(
        &std::fs::read(sb.path().join(format!("agg_{RESULT}.json"))).expect("agg"),
    )
    .expect("json");
    let keys: Vec<&String> = agg.as_object().expect("object").keys().collect();
    assert!(!keys.iter().any(|k| *k == "avg_power_w"), "{keys:?}");
    assert_eq!(
        keys[keys.len() - 2..],
        ["power_metric_schema_version", "power_valid"]
    );
}

/// (raw result, extra environment, expected message part).
type ErrorCase = (Value, Vec<(&'static str, &'static str)>, &'static str);

#[test]
fn process_errors_leave_no_output_files() {
    let cases: Vec<ErrorCase> = vec![
        (
            {
                let mut r = raw_result();
                r.as_object_mut()
                    .expect("obj")
                    .remove("total_token_throughput");
                r
            },
            vec![],
            "total_token_throughput",
        ),
        (
            {
                let mut r = raw_result();
                r["p99_itl_ms"] = json!("n/a");
                r
            },
            vec![],
            "p99_itl_ms",
        ),
        (
            raw_result(),
            vec![("ROUTER_METADATA", "{\"name\": \"x\"}")],
            "ROUTER_METADATA",
        ),
        (
            raw_result(),
            vec![("PP_SIZE", "0")],
            "PP_SIZE, DCP_SIZE, and PCP_SIZE",
        ),
        (raw_result(), vec![("TP", "eight")], "TP=\"eight\""),
    ];
    for (raw, extra_env, needle) in cases {
        let sb = Sandbox::new();
        sb.write(&format!("{RESULT}.json"), &raw.to_string());
        let mut env = single_node_env();
        env.retain(|(k, _)| !extra_env.iter().any(|(e, _)| e == k));
        env.extend(extra_env);
        let out = sb.run(&["process"], &env);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains(needle), "{needle}: {}", text(&out));
        assert_eq!(
            sb.files(),
            vec![format!("{RESULT}.json")],
            "no partial output for {needle}"
        );
    }
}

#[test]
fn process_missing_file_and_invalid_json_are_named() {
    let sb = Sandbox::new();
    let out = sb.run(&["process"], &single_node_env());
    // Missing input: the job cannot be done (README exit contract).
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains(&format!("{RESULT}.json")));
    sb.write(&format!("{RESULT}.json"), "{\"model_id\": ");
    let out = sb.run(&["process"], &single_node_env());
    // An invalid result: the check said no.
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("not valid JSON"), "{}", text(&out));
    assert_eq!(sb.files(), vec![format!("{RESULT}.json")]);
}

#[test]
fn require_power_fails_after_writing_both_files() {
    let sb = Sandbox::new();
    sb.write(&format!("{RESULT}.json"), &raw_result().to_string());
    let mut env = single_node_env();
    env.push(("REQUIRE_POWER", "Yes"));
    let out = sb.run(&["process"], &env);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("Power validation failed: telemetry_file_missing"));
    assert_eq!(sb.files().len(), 3);
}

#[test]
fn aggregate_error_leaves_no_output_and_keeps_an_older_file() {
    let sb = Sandbox::new();
    sb.write("results/a/agg_1.json", "{\"x\": 1}");
    sb.write("results/b/agg_2.json", "{\"x\": ");
    let out = sb.run(&["aggregate", "results", "bmk"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("results/b/agg_2.json"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("invalid JSON"));
    assert_eq!(sb.files(), vec!["results"]);

    // An earlier aggregate is left untouched by a failed run.
    sb.write("agg_bmk.json", "[\"old\"]");
    let out = sb.run(&["aggregate", "results", "bmk"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(sb.path().join("agg_bmk.json")).expect("read"),
        "[\"old\"]"
    );
    assert_eq!(sb.files(), vec!["agg_bmk.json", "results"]);
}

#[test]
fn aggregate_prints_summary_and_writes_step_summary_in_actions() {
    let sb = Sandbox::new();
    sb.write(
        "results/bmk_x/agg_x.json",
        r#"{"infmax_model_prefix":"dsr1","hw":"b200","framework":"sglang","precision":"fp8","is_multinode":false}"#,
    );
    sb.write("results/bmk_x/notes.txt", "hi");
    let summary = sb.path().join("summary.md");
    let summary_s = summary.to_string_lossy().into_owned();
    let out = sb.run(
        &["aggregate", "results", "bmk"],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", &summary_s),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(out.stdout.is_empty(), "aggregate prints nothing on stdout");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("read 1 file, wrote 1 row to agg_bmk.json; skipped 1 (1 not *.json)"),
        "{err}"
    );
    let md = std::fs::read_to_string(&summary).expect("summary");
    assert!(
        md.contains("| dsr1 | b200 | sglang | fp8 | single-node | 1 | 0 |"),
        "{md}"
    );
    test_kit::assert_snapshot!("aggregate_step_summary", md);

    // Outside Actions the step summary is left alone.
    std::fs::remove_file(&summary).expect("rm");
    let out = sb.run(
        &["aggregate", "results", "bmk"],
        &[("GITHUB_STEP_SUMMARY", &summary_s)],
    );
    assert!(out.status.success());
    assert!(!summary.exists());
}

#[test]
fn evals_summary_line_counts_skips() {
    let sb = Sandbox::new();
    sb.write(
        "ev/eval_a/meta_env.json",
        r#"{"hw":"b200","framework":"SGLang","precision":"FP8","infmax_model_prefix":"dsr1","tp":8,"conc":4}"#,
    );
    sb.write(
        "ev/eval_a/results_1.json",
        r#"{"lm_eval_version":"0.4","results":{"gsm8k":{"exact_match,strict-match":0.95,"exact_match_stderr,strict-match":0.01}},
            "configs":{"gsm8k":{"filter_list":[{"name":"strict-match"}]}},"n-samples":{"gsm8k":{"effective":1319}},"model_name":"m"}"#,
    );
    sb.write("ev/eval_a/other.json", "{\"a\":1}");
    sb.write("ev/eval_a/broken.json", "{");
    let summary = sb.path().join("summary.md");
    let summary_s = summary.to_string_lossy().into_owned();
    let out = sb.run(
        &["evals", "ev", "all"],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", &summary_s),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 eval set, read 1 result file, wrote 1 row to agg_eval_all.json; skipped 2 files (1 unparseable, 1 not lm-eval results)"),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("| dsr1           | B200       | SGLANG"),
        "{stdout}"
    );
    test_kit::assert_snapshot!("evals_stdout_table", stdout);
    let md = std::fs::read_to_string(&summary).unwrap_or_default();
    test_kit::assert_snapshot!("evals_step_summary", md);
    let rows: Vec<sweep_model::results::EvalRow> =
        serde_json::from_slice(&std::fs::read(sb.path().join("agg_eval_all.json")).expect("agg"))
            .expect("rows");
    assert_eq!(rows[0].source, "ev/eval_a/results_1.json");
    assert_eq!(rows[0].score_f64(), Some(0.95));
    assert!(
        std::fs::read_to_string(&summary)
            .expect("md")
            .contains("| `ev` | 1 | 1 | 1 |")
    );
}

#[test]
fn usage_errors_exit_2() {
    let sb = Sandbox::new();
    let out = sb.run(&["evals", "only-root"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).to_lowercase().contains("usage"));
    assert!(sb.files().is_empty());
    // Like the reference scripts, extra trailing arguments are ignored.
    let out = sb.run(&["aggregate", "missing", "x", "extra"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(sb.files(), vec!["agg_x.json"]);
}

/// Issue #34 item 1: a sweep whose legs all failed has nothing under
/// `results/`; with the legs expected (flag or `INPUT_EXPECTED_LEGS`, as
/// the action passes it) that is exit 1 naming both counts, and no
/// `agg_bmk.json` for a later step to take for a finished sweep.
#[test]
fn aggregate_with_legs_expected_and_no_results_exits_1_and_writes_nothing() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.path().join("results")).expect("mkdir");
    let actions = [("GITHUB_ACTIONS", "true")];
    for (args, env) in [
        (
            &["aggregate", "results/", "bmk", "--expected-legs", "9"][..],
            &actions[..],
        ),
        (
            &["aggregate", "results/", "bmk"][..],
            &[("INPUT_EXPECTED_LEGS", "9"), actions[0]][..],
        ),
    ] {
        let out = sb.run(args, env);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let t = text(&out);
        assert!(
            t.contains("results/: no results: the sweep scheduled 9 legs and 0 results arrived (0 result files read"),
            "{t}"
        );
        assert!(
            t.contains("::error file=results/::aggregate: results/: no results"),
            "{t}"
        );
        assert_eq!(sb.files(), vec!["results"], "nothing written");
    }
    // No expectation: the reference's `[]`, exit 0.
    let out = sb.run(&["aggregate", "results/", "bmk"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(sb.path().join("agg_bmk.json")).expect("read"),
        "[]"
    );
    // Not a count: a usage error.
    let out = sb.run(
        &["aggregate", "results/", "bmk", "--expected-legs", "-1"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn validate_scores_uses_model_prefix_from_env() {
    let sb = Sandbox::new();
    sb.write(
        "t.yaml",
        "default:\n  gsm8k: 0.9\nmodels:\n  qwen3.5:\n    gsm8k: 0.94\n",
    );
    sb.write(
        "results_1.json",
        r#"{"results":{"gsm8k":{"exact_match,strict-match":0.92}}}"#,
    );
    let out = sb.run(
        &["validate-scores", "--thresholds", "t.yaml"],
        &[("MODEL_PREFIX", "qwen3.5")],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out)
            .contains("FAIL: gsm8k exact_match,strict-match = 0.9200 (< 0.94 from models.qwen3.5)")
    );
    let out = sb.run(&["validate-scores", "--thresh", "t.yaml"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("(>= 0.9 from default)"));
}

/// A 20,000-deep file (about 120 KB) is a clear error naming the file and
/// the limit, in Actions also an annotation; nothing is written.
#[test]
fn aggregate_refuses_a_deeply_nested_file() {
    let sb = Sandbox::new();
    sb.write("r/ok.json", "{\"a\": 1}");
    let deep = format!("{}1{}", "[  ".repeat(20_000), "  ]".repeat(20_000));
    sb.write("r/d/deep.json", &deep);
    let out = sb.run(&["aggregate", "r", "bmk"], &[("GITHUB_ACTIONS", "true")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let all = text(&out);
    assert!(all.contains("r/d/deep.json"), "{all}");
    assert!(all.contains("MAX_JSON_DEPTH"), "{all}");
    assert!(all.contains("::error file=r/d/deep.json,line=1::"), "{all}");
    assert_eq!(sb.files(), vec!["r"]);
}

/// In Actions, an invalid file is also an annotation naming the file and
/// the line of the error, for `process` and `aggregate` alike.
#[test]
fn invalid_json_is_annotated_with_file_and_line() {
    let sb = Sandbox::new();
    sb.write("r/ok.json", "{\"a\": 1}");
    sb.write("r/d/bad.json", "{\n  \"hw\": \"b200\",\n  \"conc\": ,\n}\n");
    let summary = sb.path().join("summary.md");
    let summary = summary.to_str().expect("utf-8 path");
    let actions = [("GITHUB_ACTIONS", "true"), ("GITHUB_STEP_SUMMARY", summary)];
    let out = sb.run(&["aggregate", "r", "bmk"], &actions);
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("::error file=r/d/bad.json,line=3::aggregate: r/d/bad.json: invalid JSON"),
        "{stdout}"
    );

    sb.write(&format!("{RESULT}.json"), "{\n  \"x\": 1,\n  oops\n}");
    let mut env = single_node_env();
    env.extend(actions);
    let out = sb.run(&["process"], &env);
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("::error file="), "{stdout}");
    assert!(
        stdout.contains(&format!("{RESULT}.json,line=3::")),
        "{stdout}"
    );
}

/// Issue #16 point 8: an unparseable eval file is named in a warning; when
/// no file at all could be read the tool fails (exit 2) instead of writing
/// an empty table with exit 0.
#[test]
fn evals_name_unparseable_files_and_fail_when_nothing_was_read() {
    let sb = Sandbox::new();
    sb.write(
        "ev/eval_a/meta_env.json",
        r#"{"hw":"b200","framework":"SGLang","precision":"FP8","infmax_model_prefix":"dsr1","tp":8,"conc":4}"#,
    );
    sb.write("ev/eval_a/results_1.json", "{\"lm_eval_version\": ");
    sb.write("ev/eval_a/results_2.json", "[1, 2]");
    let out = sb.run(&["evals", "ev", "all"], &[("GITHUB_ACTIONS", "true")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no eval result could be read: 2 file(s) are not valid JSON objects: ev/eval_a/results_1.json, ev/eval_a/results_2.json"),
        "{err}"
    );
    assert!(
        !sb.path().join("agg_eval_all.json").exists(),
        "no empty output"
    );

    // One readable file: exit 0, the broken one named in a warning.
    sb.write(
        "ev/eval_a/results_3.json",
        r#"{"lm_eval_version":"0.4","results":{"gsm8k":{"exact_match,strict-match":0.95,"exact_match_stderr,strict-match":0.01}},
            "configs":{"gsm8k":{"filter_list":[{"name":"strict-match"}]}},"n-samples":{"gsm8k":{"effective":1319}},"model_name":"m"}"#,
    );
    let out = sb.run(&["evals", "ev", "all"], &[("GITHUB_ACTIONS", "true")]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("::warning file=ev/eval_a/results_1.json::ev/eval_a/results_1.json: not a valid JSON object"),
        "{stdout}"
    );
}

/// Issue #16 point 8: a non-finite throughput is an error naming the
/// field, not a `null` with exit 0. Since #34 item 2 it is refused where it
/// enters (the raw key, before any derived value), with huge and negative
/// values.
#[test]
fn non_finite_throughputs_are_an_error_naming_the_field() {
    for (total, output, needle) in [
        (
            json!("nan"),
            json!(400.0),
            "field 'total_token_throughput' is NaN, not a finite number",
        ),
        (
            json!(1.0e308),
            json!(-1.0e308),
            "field 'total_token_throughput' is 1e308, above the limit",
        ),
        (
            json!(800.0),
            json!("inf"),
            "field 'output_throughput' is inf, not a finite number",
        ),
    ] {
        let sb = Sandbox::new();
        let mut r = raw_result();
        r["total_token_throughput"] = total;
        r["output_throughput"] = output;
        sb.write(&format!("{RESULT}.json"), &r.to_string());
        let out = sb.run(&["process"], &single_node_env());
        assert_eq!(out.status.code(), Some(1), "{needle}: {}", text(&out));
        assert!(text(&out).contains(needle), "{needle}: {}", text(&out));
        assert!(
            !sb.path().join(format!("agg_{RESULT}.json")).exists(),
            "{needle}: no output"
        );
    }
}

/// Runs the binary like [`Sandbox::run`], but fails the test instead of
/// hanging when it has not exited within `BOUND`: a reader that blocks on a
/// FIFO would never return. A bound on a hang, not a timing assertion.
fn run_bounded(sb: &Sandbox, args: &[&str]) -> Output {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    const BOUND: Duration = Duration::from_secs(30);
    let mut child = test_kit::command(env!("CARGO_BIN_EXE_collect-results"))
        .args(args)
        .current_dir(sb.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn binary");
    let deadline = Instant::now() + BOUND;
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("collect-results {args:?} still running after {BOUND:?}: it blocked");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

#[test]
fn aggregate_refuses_a_fifo_named_json_at_once_naming_it() {
    let sb = Sandbox::new();
    sb.write("results/a/agg_1.json", "{\"x\": 1}");
    mkfifo(&sb.path().join("results/a/x.json"));
    let out = run_bounded(&sb, &["aggregate", "results", "bmk"]);
    let t = text(&out);
    // Unreadable input, as a directory named `x.json` is: exit 2.
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("results/a/x.json"), "{t}");
    assert!(t.contains("FIFO"), "{t}");
    assert_eq!(sb.files(), vec!["results"], "no output on failure");
}

#[cfg(unix)]
#[test]
fn aggregate_never_copies_a_file_a_symlink_leads_to_outside_the_tree() {
    const SECRET: &str = "s3cr3t-token-value";
    let sb = Sandbox::new();
    sb.write("results/a/agg_1.json", "{\"x\": 1}");
    let secret = sb.write(
        "elsewhere/secret.json",
        &format!("{{\"token\": \"{SECRET}\"}}"),
    );
    std::os::unix::fs::symlink(&secret, sb.path().join("results/a/a.json")).expect("symlink");
    let out = run_bounded(&sb, &["aggregate", "results", "bmk"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(
        t.contains("results/a/a.json") && t.contains("outside"),
        "{t}"
    );
    assert!(!t.contains(SECRET), "{t}");
    // Nothing is written, so the secret is in no agg_*.json.
    assert_eq!(sb.files(), vec!["elsewhere", "results"]);
}

#[cfg(unix)]
#[test]
fn aggregate_reads_a_symlink_that_stays_inside_the_tree() {
    let sb = Sandbox::new();
    sb.write("results/a/agg_1.json", "{\"x\": 1}");
    std::os::unix::fs::symlink("../a/agg_1.json", {
        std::fs::create_dir_all(sb.path().join("results/b")).expect("mkdir");
        sb.path().join("results/b/link.json")
    })
    .expect("symlink");
    let out = run_bounded(&sb, &["aggregate", "results", "bmk"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let agg: Value = serde_json::from_str(
        &std::fs::read_to_string(sb.path().join("agg_bmk.json")).expect("read"),
    )
    .expect("json");
    assert_eq!(agg, json!([{"x": 1}, {"x": 1}]));
}

/// The walks that follow a linked folder or file (issue #34 item 6): an
/// eval set, the agentic aggregate and a validate-scores match reached
/// through a link out of their root are refused, naming the link, and what
/// is behind it is never read.
#[cfg(unix)]
#[test]
fn evals_agentic_and_scores_refuse_a_link_out_of_their_root() {
    const SECRET: &str = "s3cr3t-token-value";
    let link = |target: &Path, at: &Path| {
        std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
        std::os::unix::fs::symlink(target, at).expect("symlink");
    };
    let sb = Sandbox::new();
    let secret_dir = sb.path().join("elsewhere");
    sb.write(
        "elsewhere/meta_env.json",
        &format!("{{\"hw\": \"{SECRET}\"}}"),
    );
    sb.write(
        "elsewhere/profile_export_aiperf.json",
        r#"{"request_count":{"avg":10},"error_request_count":{"avg":0}}"#,
    );
    sb.write(
        "elsewhere/results_9.json",
        &format!(
            r#"{{"results":{{"gsm8k":{{"exact_match,strict-match":0.99}}}}, "x": "{SECRET}"}}"#
        ),
    );
    // evals: a set folder that is a link out of the root.
    link(&secret_dir, &sb.path().join("ev/set_a"));
    let out = sb.run(&["evals", "ev", "all"], &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("ev/set_a") && t.contains("outside"), "{t}");
    assert!(!t.contains(SECRET), "{t}");
    // validate-agentic: the run folder holding the aggregate is a link.
    link(&secret_dir, &sb.path().join("art/run_1"));
    let out = sb.run(
        &[
            "validate-agentic",
            "--failed-request-threshold",
            "0.1",
            "art",
        ],
        &[],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("art/run_1") && t.contains("outside"), "{t}");
    // validate-scores: a results*.json match that is a link out of the
    // working directory fails the check instead of passing on its scores.
    let scores = tempfile_in(&sb);
    link(
        &secret_dir.join("results_9.json"),
        &scores.join("results_1.json"),
    );
    let out = test_kit::command(env!("CARGO_BIN_EXE_collect-results"))
        .args(["validate-scores"])
        .env("MODEL_PREFIX", "qwen3.5")
        .current_dir(&scores)
        .output()
        .expect("run");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("FAIL: ") && t.contains("results_1.json") && t.contains("outside"),
        "{t}"
    );
    assert!(!t.contains(SECRET), "{t}");
}

/// A fresh working directory inside the sandbox.
fn tempfile_in(sb: &Sandbox) -> PathBuf {
    let d = sb.path().join("scores");
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

/// A recorded multi-node `process` case: its environment without the
/// per-file variables, its raw result, and the files the reference wrote.
fn multinode_case(name: &str) -> (Vec<(String, String)>, PathBuf) {
    let case = test_kit::workspace_root()
        .join("tests/conformance/cases/collect-results")
        .join(name);
    let env: serde_json::Map<String, Value> =
        serde_json::from_slice(&std::fs::read(case.join("env.json")).expect("env.json"))
            .expect("env.json is an object");
    let env = env
        .into_iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "PREFILL_GPUS" | "DECODE_GPUS" | "RESULT_FILENAME"
            )
        })
        .map(|(k, v)| (k, v.as_str().expect("string").to_string()))
        .collect();
    (env, case)
}

#[test]
fn process_leg_processes_each_result_file_with_the_gpus_its_name_gives() {
    for (case, leg) in [
        (
            "process-multinode-disagg-hetero-hw",
            "qwen3.5_8k1k_fp8_dynamo-sglang_prefill-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw1_decode-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_disagg-true_spec-mtp_conc64_gb200-nv_2",
        ),
        (
            "process-multinode-aggregated-zero-decode",
            "glm5_8192_128_fp8_dynamo-trt_prefill-tp8-pp1-dcp1-pcp1-ep1-dpfalse-nw2_decode-tp8-pp2-dcp1-pcp1-ep8-dpfalse-nw0_disagg-false_spec-none_conc32_gb300-nv_0",
        ),
    ] {
        let (env, dir) = multinode_case(case);
        let sb = Sandbox::new();
        for f in std::fs::read_dir(dir.join("setup")).expect("setup") {
            let f = f.expect("entry");
            std::fs::copy(f.path(), sb.path().join(f.file_name())).expect("copy");
        }
        // Matches the leg's pattern but names no GPUs: passed over, said so.
        sb.write(&format!("{leg}_notes.json"), "{}");
        sb.write("power-producer-sha.txt", "0123abc\n");
        let mut env: Vec<(&str, &str)> =
            env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        env.push(("RESULT_FILENAME", leg));
        let out = sb.run(&["process-leg"], &env);
        assert_eq!(out.status.code(), Some(0), "{case}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("skipping {leg}_notes.json")), "{err}");
        assert!(
            err.contains("POWER_PRODUCER_SHA from the launcher stamp: 0123abc"),
            "{err}"
        );
        let expect: Value =
            serde_json::from_slice(&std::fs::read(dir.join("expect.json")).expect("expect.json"))
                .expect("expect.json");
        let files = expect["files"].as_object().expect("files");
        assert!(!files.is_empty());
        for (written, recorded) in files {
            if written.starts_with("power_validation_") {
                // The stamp names a producer the recorded case had not.
                continue;
            }
            // Byte for byte but the recorded file's final line break (the
            // conformance runner compares them as JSON).
            let got = std::fs::read_to_string(sb.path().join(written)).expect("written");
            let want = std::fs::read_to_string(dir.join(recorded.as_str().expect("path")))
                .expect("recorded");
            assert_eq!(
                got.trim_end(),
                want.trim_end(),
                "{case}: {written} differs from the recorded file"
            );
        }
    }
}

#[test]
fn process_leg_with_no_result_naming_its_gpus_exits_1_and_writes_nothing() {
    let sb = Sandbox::new();
    sb.write("leg_conc4.json", "{}");
    let out = sb.run(&["process-leg"], &[("RESULT_FILENAME", "leg")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("none of leg_*.json"), "{}", text(&out));
    assert_eq!(sb.files(), ["leg_conc4.json"]);
}
