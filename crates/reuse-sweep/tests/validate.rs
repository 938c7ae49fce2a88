//! `reuse-sweep validate-artifacts` on small artifact trees written here.

mod common;

use std::path::Path;
use std::process::Output;

use common::fixed;
use serde_json::{Value, json};
use test_kit::{stderr, stdout, write_json as write};

fn run(root: &Path) -> Output {
    test_kit::command(env!("CARGO_BIN_EXE_reuse-sweep"))
        .args(["validate-artifacts", "--artifacts-dir"])
        .arg(root)
        .output()
        .expect("run")
}

fn eval_meta(conc: u32) -> Value {
    json!({"hw": "h100-dgxc-slurm", "infmax_model_prefix": "gptoss", "framework": "vllm",
           "precision": "fp4", "tp": 2, "conc": conc})
}

/// An eval aggregate row as `collect-results evals` writes it.
fn eval_row(conc: u32, source: &str) -> Value {
    json!({"is_multinode": false, "model_prefix": "gptoss", "model": "openai/gpt-oss-120b",
           "hw": "H100-DGXC-SLURM", "framework": "vllm", "precision": "fp4", "spec_decoding": "none",
           "isl": 8192, "osl": 1024, "tp": 2, "ep": 1, "prefill_tp": 2, "prefill_ep": 1,
           "prefill_num_workers": 1, "decode_tp": 2, "decode_ep": 1, "decode_num_workers": 1,
           "conc": conc, "dp_attention": "false", "prefill_dp_attention": "false",
           "decode_dp_attention": "false", "task": "gsm8k", "em_strict": 0.9, "em_strict_se": 0.01,
           "em_flexible": 0.91, "em_flexible_se": 0.01, "n_eff": 1319, "source": source,
           "score": 0.9, "score_name": "em_strict", "score_se": 0.01})
}

/// An agentic point row as `process_agentic_result.py` writes it.
fn agentic(conc: u32) -> Value {
    json!({"hw": "b200", "conc": conc, "image": "img", "model": "m", "infmax_model_prefix": "qwen3.5",
           "framework": "sglang", "precision": "fp4", "spec_decoding": "none", "disagg": false,
           "scenario_type": "agentic-coding", "is_multinode": false, "tp": 4, "ep": 1,
           "dp_attention": false, "kv_offloading": "none"})
}

#[track_caller]
fn refused_with(out: &Output, line: &str) {
    assert_eq!(out.status.code(), Some(1), "{}", stderr(out));
    let err = stderr(out);
    assert!(
        err.lines().any(|l| l == line),
        "missing {line:?} in:\n{err}"
    );
}

#[test]
fn a_row_without_the_fields_the_ingest_needs_is_refused_naming_file_row_and_key() {
    let d = test_kit::temp_dir();
    let r = d.path();
    write(r, "results_bmk/agg.json", &json!({"anything": 1}));
    write(r, "run-stats/run_stats.json", &json!({}));
    let out = run(r);
    refused_with(
        &out,
        "results_bmk/agg.json: row 0: field 'is_multinode' is missing (expected a boolean)",
    );
    assert!(!stdout(&out).contains("validated"), "{}", stdout(&out));
}

#[test]
fn a_string_where_a_number_is_expected_is_refused() {
    let d = test_kit::temp_dir();
    let r = d.path();
    let mut bad_tp = fixed(8);
    bad_tp["tp"] = json!("2");
    let mut bad_tput = fixed(16);
    bad_tput["tput_per_gpu"] = json!("fast");
    write(
        r,
        "results_bmk/agg.json",
        &json!([fixed(4), bad_tp, bad_tput]),
    );
    write(r, "run-stats/run_stats.json", &json!({}));
    let out = run(r);
    refused_with(
        &out,
        "results_bmk/agg.json: row 1: field 'tp' must be an integer, found a string",
    );
    refused_with(
        &out,
        "results_bmk/agg.json: row 2: field 'tput_per_gpu' must be a number, found a string",
    );
}

#[test]
fn a_row_that_is_not_an_object_or_a_file_that_is_not_rows_is_refused() {
    let d = test_kit::temp_dir();
    let r = d.path();
    write(r, "results_bmk/agg.json", &json!([fixed(4), "row"]));
    write(r, "results_bmk/other.json", &json!(42));
    write(r, "run-stats/run_stats.json", &json!({}));
    let out = run(r);
    refused_with(
        &out,
        "results_bmk/agg.json: row 1: a result row must be a JSON object, found a string",
    );
    refused_with(
        &out,
        "results_bmk/other.json: must be a list of result rows or one row, found a number",
    );
}

#[test]
fn eval_and_agentic_rows_are_checked_for_their_own_fields() {
    let d = test_kit::temp_dir();
    let r = d.path();
    let mut bad_eval = eval_row(8, "eval_a/results_2025-01-01T10-00-00.json");
    bad_eval["conc"] = json!("8");
    write(r, "eval_a/meta_env.json", &eval_meta(8));
    write(r, "eval_results_all/agg_eval_all.json", &json!([bad_eval]));
    let mut bad_point = agentic(4);
    bad_point.as_object_mut().expect("object").remove("model");
    write(r, "bmk_agentic_p0/point.json", &bad_point);
    std::fs::create_dir_all(r.join("agentic_p0")).expect("mkdir");
    let out = run(r);
    refused_with(
        &out,
        "eval_results_all/agg_eval_all.json: row 0: field 'conc' must be an integer, found a string",
    );
    refused_with(
        &out,
        "bmk_agentic_p0/point.json: row 0: field 'model' is missing (expected a string)",
    );
}

#[test]
fn complete_eval_and_agentic_rows_validate() {
    let d = test_kit::temp_dir();
    let r = d.path();
    write(r, "eval_a/meta_env.json", &eval_meta(8));
    write(
        r,
        "eval_results_all/agg_eval_all.json",
        &json!([eval_row(8, "eval_a/results_2025-01-01T10-00-00.json")]),
    );
    write(r, "bmk_agentic_p0/point.json", &agentic(4));
    write(r, "results_bmk/agg.json", &json!([agentic(4)]));
    std::fs::create_dir_all(r.join("agentic_p0")).expect("mkdir");
    let out = run(r);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .ends_with("validated: 0 fixed-sequence row(s), 1 agentic row(s), 1 eval row(s).\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn row_problems_are_listed_up_to_twenty_per_file_then_counted() {
    let d = test_kit::temp_dir();
    let r = d.path();
    let rows: Vec<Value> = (0..25).map(|i| json!({"conc": i})).collect();
    write(r, "results_bmk/agg.json", &Value::Array(rows));
    write(r, "run-stats/run_stats.json", &json!({}));
    let out = run(r);
    refused_with(
        &out,
        "results_bmk/agg.json: row 19: field 'is_multinode' is missing (expected a boolean)",
    );
    refused_with(
        &out,
        "results_bmk/agg.json: ... and 5 more row(s) with problems",
    );
    assert!(!stderr(&out).contains("row 20:"), "{}", stderr(&out));
}

#[test]
fn rerun_eval_collapses_to_the_latest_result_and_validates() {
    let d = test_kit::temp_dir();
    let r = d.path();
    write(r, "results_bmk/agg.json", &json!([fixed(4), fixed(8)]));
    write(r, "run-stats/run_stats.json", &json!({}));
    for (dir, stamp) in [
        ("eval_a_old", "2025-01-01T10-00-00"),
        ("eval_a_new", "2025-01-02T10-00-00"),
    ] {
        write(r, &format!("{dir}/meta_env.json"), &eval_meta(8));
        write(r, &format!("{dir}/results_{stamp}.json"), &json!({}));
    }
    write(
        r,
        "eval_results_all/agg_eval_all.json",
        &json!([
            eval_row(8, "eval_a_old/results_2025-01-01T10-00-00.json"),
            eval_row(8, "eval_a_new/results_2025-01-02T10-00-00.json")
        ]),
    );
    let out = run(r);
    let stdout = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout.contains("  agg_eval_all.json: kept 1 of 2 eval row(s)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  removed superseded raw eval dir 'eval_a_old'"),
        "{stdout}"
    );
    assert!(stdout.ends_with(
        "Reusable sweep artifacts validated: 2 fixed-sequence row(s), 0 agentic row(s), 1 eval row(s).\n"
    ));
    assert!(!r.join("eval_a_old").exists());
    let agg: Value = serde_json::from_str(
        &std::fs::read_to_string(r.join("eval_results_all/agg_eval_all.json")).expect("agg"),
    )
    .expect("json");
    assert_eq!(agg.as_array().map(Vec::len), Some(1));
    assert!(
        agg[0]["source"]
            .as_str()
            .unwrap_or_default()
            .starts_with("eval_a_new/")
    );
}

#[test]
fn every_problem_is_listed_and_exit_is_one() {
    let d = test_kit::temp_dir();
    let r = d.path();
    write(r, "results_bmk/agg.json", &json!([fixed(4), fixed(4)]));
    write(r, "bmk_agentic_p0/x/point.json", &agentic(4));
    std::fs::create_dir_all(r.join("eval_b")).expect("mkdir");
    let out = run(r);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let want = [
        "Reusable sweep artifact validation failed:",
        "fixed-sequence artifacts contain 1 duplicate row(s)",
        "  duplicate x2: ('single', 'h100', 'gptoss', 'vllm', 'fp8', 'none', False, 1024, 1024, 2, 1, 1, 1, 1, False, 4)",
        "agentic aggregate artifacts are missing 1 expected row(s)",
        "missing raw agentic artifact dir: agentic_p0",
        "raw eval artifact 'eval_b' is missing meta_env.json",
        "missing run-stats artifact for fixed-sequence benchmarks",
    ];
    for line in want {
        assert!(
            err.lines().any(|l| l == line),
            "missing {line:?} in:\n{err}"
        );
    }
}

#[test]
fn empty_or_missing_directories_are_rejected() {
    let d = test_kit::temp_dir();
    let out = run(d.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no reusable benchmark, agentic, or eval result rows found"));
    // A folder that is not there cannot be judged: exit 2 (README exit contract).
    let out = run(&d.path().join("nope"));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("artifacts directory does not exist"));
}
