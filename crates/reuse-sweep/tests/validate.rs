//! `reuse-sweep validate-artifacts` on small artifact trees written here.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use test_kit::{stderr, stdout};

fn write(root: &Path, rel: &str, v: &Value) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, v.to_string()).expect("write");
}

fn run(root: &Path) -> Output {
    test_kit::command(env!("CARGO_BIN_EXE_reuse-sweep"))
        .args(["validate-artifacts", "--artifacts-dir"])
        .arg(root)
        .output()
        .expect("run")
}

fn fixed(conc: u32) -> Value {
    json!({"hw": "h100", "infmax_model_prefix": "gptoss", "framework": "vllm", "precision": "fp8",
           "isl": 1024, "osl": 1024, "tp": 2, "conc": conc})
}

fn eval_meta(conc: u32) -> Value {
    json!({"hw": "h100-dgxc-slurm", "infmax_model_prefix": "gptoss", "framework": "vllm",
           "precision": "fp4", "tp": 2, "conc": conc})
}

fn eval_row(conc: u32, source: &str) -> Value {
    json!({"hw": "H100-DGXC-SLURM", "model_prefix": "gptoss", "framework": "vllm",
           "precision": "fp4", "tp": 2, "conc": conc, "source": source})
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
    write(
        r,
        "bmk_agentic_p0/x/point.json",
        &json!({"hw": "b200", "scenario_type": "agentic-coding", "conc": 4}),
    );
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
