//! `--baseline-from history` end to end (issue #35 item 3): each new point
//! against its own series in main's history, judged by the boundary learnt
//! from it; with too few runs the tolerance judges and the row says so;
//! another hardware never mixes in; repeats compose; a corrupt history is
//! named and refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Map, Value, json};
use sweep_series::store::{Run, RunRef, Store};
use test_kit::{assert_exit, png_size, stderr};

fn cmd() -> Command {
    test_kit::command(env!("CARGO_BIN_EXE_compare-results"))
}

fn run(c: &mut Command) -> Output {
    c.output().expect("run compare-results")
}

/// An agg row of H100 TP8 (dsr1 fp8 sglang 1k1k) at conc 4, on runner
/// `hw`, its throughputs `tput` and its TTFT `ttft` seconds.
fn agg_row(hw: &str, tput: f64, ttft: f64) -> Map<String, Value> {
    let v = json!({
        "hw": hw, "conc": 4, "image": "img:1", "model": "org/Model-FP8",
        "infmax_model_prefix": "dsr1", "framework": "sglang", "precision": "fp8",
        "spec_decoding": "none", "disagg": false, "recipe_fingerprint": "",
        "isl": 1024, "osl": 1024, "is_multinode": false, "tp": 8, "pp": 1, "dcp_size": 1,
        "pcp_size": 1, "ep": 1, "dp_attention": "false",
        "tput_per_gpu": tput, "output_tput_per_gpu": tput / 2.0, "input_tput_per_gpu": tput / 2.0,
        "mean_ttft": ttft, "mean_tpot": 0.01
    });
    match v {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

/// ±8 % around 1000 tok/s/GPU, fixed so the test reads the same every time.
const NOISY: &[f64] = &[
    1060.0, 930.0, 1020.0, 950.0, 1080.0, 970.0, 1010.0, 920.0, 1050.0, 990.0, 1070.0, 940.0,
];

struct World {
    dir: test_kit::TempDir,
}

impl World {
    /// A history of one main run per value of `levels` on `h100-nv_01`.
    fn new(levels: &[f64]) -> World {
        let dir = test_kit::temp_dir();
        let store = Store::new(&dir.path().join("history"));
        for (i, level) in levels.iter().enumerate() {
            let id = i as u64 + 1;
            store
                .append(&Run {
                    run: RunRef {
                        run_id: 900 + id,
                        attempt: 1,
                        commit: format!("{id:040x}"),
                        date: format!("2026-11-{:02}T08:00:00Z", id),
                        pr: Some(100 + id),
                    },
                    repo: "acme/bench".into(),
                    event: "push".into(),
                    benchmarks: vec![agg_row("h100-nv_01", *level, 0.2)],
                    evals: Vec::new(),
                })
                .expect("append");
        }
        World { dir }
    }

    fn history(&self) -> PathBuf {
        self.dir.path().join("history")
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, rows: &[Map<String, Value>]) -> PathBuf {
        let p = self.path(rel);
        std::fs::write(&p, serde_json::to_string(rows).expect("json")).expect("write");
        p
    }

    /// compare-results against the history, the reports in the world.
    fn compare(&self, new: &[Map<String, Value>], extra: &[&str]) -> (Output, String, Value) {
        let new = self.write("new.json", new);
        let (md, js) = (self.path("compare.md"), self.path("compare.json"));
        let out = run(cmd()
            .arg("--new")
            .arg(&new)
            .args(["--baseline-from", "history", "--history"])
            .arg(self.history())
            .arg("--full-markdown")
            .arg(&md)
            .arg("--json")
            .arg(&js)
            .args(extra));
        let text = std::fs::read_to_string(&md).unwrap_or_default();
        let json = std::fs::read_to_string(&js)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null);
        (out, text, json)
    }
}

fn point(json: &Value) -> &Value {
    &json["points"][0]
}

#[test]
fn a_noisy_but_stable_series_gives_no_regression_where_the_fixed_tolerance_flags_one() {
    let w = World::new(NOISY);
    // 7 % below the last main run (940 → 874): beyond the fixed 5 %.
    let new = agg_row("h100-nv_02", 874.0, 0.2);

    // Today's rule, against the last main run's aggregate: regressed.
    let last = w.write("last.json", &[agg_row("h100-nv_01", 940.0, 0.2)]);
    let fixed = run(cmd()
        .arg("--new")
        .arg(w.write("new.json", std::slice::from_ref(&new)))
        .arg("--baseline")
        .arg(&last)
        .arg("--fail-on-regression"));
    assert_exit(&fixed, 1);

    // Against the history: within the range learnt from ±8 % noise.
    let (out, md, json) = w.compare(&[new], &["--fail-on-regression"]);
    assert_exit(&out, 0);
    assert_eq!(json["verdict"], "no_regressions", "{md}");
    let h = &point(&json)["history"]["tput_per_gpu"];
    assert_eq!(h["n"], 12, "{h}");
    let boundary = h["boundary_change"].as_f64().expect("a boundary");
    assert!(
        boundary < -0.07,
        "the learnt range is wider than the change: {h}"
    );
    assert_eq!(h["runs"].as_array().map(Vec::len), Some(5), "{h}");
    assert_eq!(h["runs"][4]["commit"], format!("{:040x}", 12), "{h}");
    assert!(
        md.contains(
            "## Benchmark comparison vs main's history (12 runs; newest 0000000, 2026-11-12)"
        ),
        "{md}"
    );
    assert!(md.contains("Baseline: main's history."), "{md}");
    assert!(md.contains("| vs main's history |"), "{md}");
    assert!(md.contains(" n=12, boundary -"), "{md}");
    assert!(
        stderr(&out).contains("main's history at "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_drop_beyond_the_learnt_range_regresses_and_names_the_range() {
    let w = World::new(NOISY);
    let (out, md, json) = w.compare(
        &[agg_row("h100-nv_02", 700.0, 0.2)],
        &["--fail-on-regression"],
    );
    assert_exit(&out, 1);
    assert_eq!(json["verdict"], "regressions", "{md}");
    assert!(
        md.contains("outside the learnt range (n=12, boundary -"),
        "the top regressions name the range: {md}"
    );
    let h = &point(&json)["history"]["tput_per_gpu"];
    assert!(
        h["percent_of_limit"].as_f64().expect("a share") > 100.0,
        "{h}"
    );
    // The regression's limit is the boundary, not the fixed tolerance.
    let limit = json["regressions"][0]["tolerance"].as_f64().expect("limit");
    assert!((limit + h["boundary_change"].as_f64().expect("b")).abs() < 1e-12);
}

#[test]
fn too_few_runs_fall_back_to_the_tolerance_and_say_so_per_row() {
    let w = World::new(&[1000.0, 1010.0, 990.0]);
    let (out, md, json) = w.compare(&[agg_row("h100-nv_02", 900.0, 0.2)], &[]);
    assert_exit(&out, 0);
    let h = &point(&json)["history"]["tput_per_gpu"];
    assert_eq!(
        h["fallback"], "3 of the 5 main runs a learnt boundary needs",
        "{h}"
    );
    // The tolerance judged it, against the mean of the three.
    assert_eq!(json["verdict"], "regressions", "{md}");
    assert!(
        md.contains(" tolerance: 3 of the 5 main runs a learnt boundary needs"),
        "{md}"
    );
    // Fewer needed: a boundary is learnt.
    let (_, _, json) = w.compare(
        &[agg_row("h100-nv_02", 900.0, 0.2)],
        &["--history-min-runs", "3"],
    );
    assert_eq!(point(&json)["history"]["tput_per_gpu"]["n"], 3);
}

#[test]
fn another_hardware_never_mixes_in() {
    let w = World::new(NOISY);
    let mut b200 = agg_row("b200-dgxc_01", 700.0, 0.2);
    b200.insert("hw".into(), "b200-dgxc_01".into());
    let (out, md, json) = w.compare(&[b200], &["--fail-on-regression"]);
    assert_exit(&out, 0);
    assert_eq!(json["points"].as_array().map(Vec::len), Some(0), "{md}");
    assert_eq!(
        json["unmatched_new"].as_array().map(Vec::len),
        Some(1),
        "{md}"
    );
}

#[test]
fn repeats_compose_with_the_learnt_boundary() {
    let w = World::new(NOISY);
    // Two new runs: their mean beyond the boundary, one run inside it.
    let (out, md, json) = w.compare(
        &[
            agg_row("h100-nv_02", 680.0, 0.2),
            agg_row("h100-nv_03", 960.0, 0.2),
        ],
        &["--fail-on-regression"],
    );
    assert_exit(&out, 0);
    assert_eq!(point(&json)["state"], "inconclusive", "{md}");
    assert_eq!(point(&json)["within_noise"]["tput_per_gpu"], true);
    // Both beyond it: a regression.
    let (out, _, json) = w.compare(
        &[
            agg_row("h100-nv_02", 700.0, 0.2),
            agg_row("h100-nv_03", 720.0, 0.2),
        ],
        &["--fail-on-regression"],
    );
    assert_exit(&out, 1);
    assert_eq!(point(&json)["state"], "regressed");
}

#[test]
fn a_latency_is_judged_on_its_own_worse_side() {
    let w = World::new(NOISY);
    // TTFT 0.2 s in every main run: a spread of zero, so the boundary is
    // the mean and the practical minimum decides. +1 % is nothing; +30 %
    // regresses.
    let (_, md, json) = w.compare(&[agg_row("h100-nv_02", 1000.0, 0.202)], &[]);
    assert_eq!(
        point(&json)["classification"]["mean_ttft"],
        "neutral",
        "{md}"
    );
    let (_, md, json) = w.compare(&[agg_row("h100-nv_02", 1000.0, 0.26)], &[]);
    assert_eq!(
        point(&json)["classification"]["mean_ttft"],
        "regression",
        "{md}"
    );
    let (_, md, json) = w.compare(&[agg_row("h100-nv_02", 1000.0, 0.15)], &[]);
    assert_eq!(
        point(&json)["classification"]["mean_ttft"],
        "improvement",
        "{md}"
    );
}

#[test]
fn a_corrupt_history_line_is_named_and_refused() {
    let w = World::new(NOISY);
    let file = w.history().join("series/h100-nv/dsr1-fp8-sglang.jsonl");
    let mut text = std::fs::read_to_string(&file).expect("series file");
    text.push_str("{not json\n");
    std::fs::write(&file, text).expect("write");
    let (out, _, _) = w.compare(&[agg_row("h100-nv_02", 1000.0, 0.2)], &[]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("dsr1-fp8-sglang.jsonl:13"), "{err}");
    assert!(!w.path("compare.md").exists(), "no partial output");
}

#[test]
fn a_missing_history_or_flag_is_refused() {
    let w = World::new(&[]);
    let new = w.write("new.json", &[agg_row("h100-nv_02", 1000.0, 0.2)]);
    let out = run(cmd()
        .arg("--new")
        .arg(&new)
        .args(["--baseline-from", "history"]));
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("--baseline-from history needs --history"));
    let out = run(cmd()
        .arg("--new")
        .arg(&new)
        .args(["--baseline-from", "history", "--history"])
        .arg(w.path("nowhere")));
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("no history store there"),
        "{}",
        stderr(&out)
    );
    let out = run(cmd()
        .arg("--new")
        .arg(&new)
        .args([
            "--baseline-from",
            "history",
            "--history-min-runs",
            "1",
            "--history",
        ])
        .arg(w.history()));
    assert_exit(&out, 2);
}

#[test]
fn the_history_report_reads_as_it_should() {
    let w = World::new(NOISY);
    let (_, md, _) = w.compare(
        &[agg_row("h100-nv_02", 700.0, 0.2)],
        &["--baseline-label", "main's history"],
    );
    let dir: &Path = w.dir.path();
    test_kit::assert_snapshot!("history_report", test_kit::redact(&md, dir));
}

/// Width and height from a PNG's header (IHDR is the first chunk).
#[test]
fn with_charts_each_configuration_has_its_trend_over_main_beside_its_chart() {
    let w = World::new(NOISY);
    let charts = w.path("charts");
    let (out, md, _) = w.compare(
        &[agg_row("h100-nv_02", 700.0, 0.2)],
        &["--charts-dir", charts.to_str().expect("utf-8")],
    );
    assert_exit(&out, 0);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(charts.join("charts.json")).expect("read"))
            .expect("charts.json parses");
    let entry = &manifest["charts"][0];
    let (chart, trend) = (
        entry["file"].as_str().expect("a chart"),
        entry["trend"].as_str().expect("a trend"),
    );
    assert_eq!(
        trend,
        chart.replace(".png", ".trend.png"),
        "the trend is named after its chart: {manifest}"
    );
    let bytes = std::fs::read(charts.join(trend)).expect("the trend is written");
    assert_eq!(png_size(&bytes).0, 880, "{md}");
    assert!(
        stderr(&out).contains("2 PNG chart(s) and charts.json"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn without_history_the_charts_have_no_trend() {
    let w = World::new(NOISY);
    let charts = w.path("charts");
    let base = w.write("base.json", &[agg_row("h100-nv_01", 1000.0, 0.2)]);
    let new = w.write("new.json", &[agg_row("h100-nv_02", 990.0, 0.2)]);
    let out = run(cmd()
        .arg("--new")
        .arg(&new)
        .arg("--baseline")
        .arg(&base)
        .arg("--charts-dir")
        .arg(&charts));
    assert_exit(&out, 0);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(charts.join("charts.json")).expect("read"))
            .expect("charts.json parses");
    assert!(manifest["charts"][0]["file"].is_string(), "{manifest}");
    assert!(manifest["charts"][0].get("trend").is_none(), "{manifest}");
}
