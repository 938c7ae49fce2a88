//! Scenario c of issue #24 under act (the harness and its limits:
//! `test_kit::act`): a regression. The baseline (the benchmarks API
//! the caller names, served by the fake) holds a row for every benchmark
//! leg of the seed PR as the launcher writes it; the launcher then writes
//! 15 % less throughput for two of those points. The comment says 2 points
//! regressed; with `fail-on-regression: true` in the caller the run fails
//! at compare-results (issue #26 item 5), without it the run is green with
//! the same comment. Either way the `compare-report` artifact holds the
//! pictures (the SVG and one PNG per configuration, the regressed points
//! counted in its charts.json) and the comment links it (issue #26 item 3).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use test_kit::act::*;
use test_kit::{act_scenario, png_size};

/// The benchmark legs of the seed PR: check-changelog's dry run over the
/// scratch repository's range, eval-only legs left out.
fn benchmark_legs(s: &Scratch) -> Vec<Value> {
    let dry = dry_run(s);
    dry["legs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["family"] != "evals")
        .map(|l| l["row"].clone())
        .collect()
}

/// A leg's result as the launcher writes it (tput/GPU from its curve,
/// latencies 9.5 ms TPOT and 150 ms TTFT), as a row of the benchmarks API.
fn api_row(r: &Value) -> Value {
    let (tp, conc) = (r["tp"].as_f64().unwrap(), r["conc"].as_f64().unwrap());
    let (isl, osl) = (r["isl"].as_f64().unwrap(), r["osl"].as_f64().unwrap());
    let round1 = |v: f64| (v * 10.0).round() / 10.0;
    let total = round1(900.0 * conc / (1.0 + conc / 64.0) / tp);
    let out = round1(total * osl / (isl + osl));
    json!({
        "hardware": r["runner"], "model": r["model-prefix"], "framework": r["framework"],
        "precision": r["precision"], "spec_method": r["spec-decoding"], "disagg": false,
        "is_multinode": false, "prefill_tp": r["tp"], "prefill_ep": r["ep"],
        "prefill_dp_attention": r["dp-attn"], "prefill_num_workers": 0, "decode_tp": r["tp"],
        "decode_ep": r["ep"], "decode_dp_attention": r["dp-attn"], "decode_num_workers": 0,
        "num_prefill_gpu": r["tp"], "num_decode_gpu": r["tp"], "isl": r["isl"], "osl": r["osl"],
        "conc": r["conc"], "image": "lmsysorg/sglang:v0.5.14-cu130", "date": BASELINE_DATE,
        "run_url": null, "benchmark_type": "single_turn",
        "metrics": {
            "tput_per_gpu": total / tp, "output_tput_per_gpu": out / tp,
            "input_tput_per_gpu": (total - out) / tp, "mean_tpot": 0.0095, "mean_ttft": 0.15
        }
    })
}

/// Width and height of a PNG, from its IHDR chunk.
/// The pictures in the run's `compare-report` artifact: its files, and
/// the regressed points its charts.json counts. Checks each PNG listed is
/// there, 880 px wide.
fn compare_report_pictures(h: &Harness) -> (Vec<String>, u64) {
    let store = h
        .artifacts
        .join(ACT_RUN_ID.to_string())
        .join("compare-report");
    let mut files: Vec<String> = Vec::new();
    let mut stack = vec![store.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p.strip_prefix(&store).unwrap().display().to_string());
            }
        }
    }
    files.sort();
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(store.join("charts/charts.json")).unwrap_or_else(|e| {
            panic!("compare-report has no charts/charts.json ({e}): {files:?}")
        }),
    )
    .unwrap();
    let mut regressed = 0;
    for c in manifest["charts"].as_array().unwrap() {
        let file = c["file"].as_str().unwrap();
        let bytes = std::fs::read(store.join("charts").join(file))
            .unwrap_or_else(|e| panic!("{file} listed but not uploaded ({e}): {files:?}"));
        assert_eq!(png_size(&bytes).0, 880, "{file}");
        regressed += c["regressed_points"].as_u64().unwrap();
    }
    (files, regressed)
}

/// One run of scenario c with `act`: act's run, the jobs' outcomes and the
/// comment the fake recorded.
fn run_scenario(act: &Path, gate: bool) -> (ActRun, BTreeMap<String, Outcome>, String) {
    let act = act.to_path_buf();
    let mut legs: Vec<Value> = Vec::new();
    let mut h = harness_with_baseline(act, |s| {
        legs = benchmark_legs(s);
        Value::Array(legs.iter().map(api_row).collect())
    });
    assert!(legs.len() >= 3, "the seed PR has benchmark legs: {legs:?}");
    for l in &legs {
        h.labels.insert(l["runner"].as_str().unwrap().to_string());
    }
    // Two points 15 % slower: the first two benchmark legs by (TP, conc).
    let mut points: Vec<(u64, u64)> = legs
        .iter()
        .map(|l| (l["tp"].as_u64().unwrap(), l["conc"].as_u64().unwrap()))
        .collect();
    points.sort();
    let slower: Vec<String> = points[..2]
        .iter()
        .map(|(tp, c)| format!("TP{tp}c{c}"))
        .collect();
    h.env.insert("ACT_SLOWER_POINTS".into(), slower.join(" "));
    if gate {
        let caller = h.scratch.work.join(".github/workflows/run-sweep.yml");
        let text = std::fs::read_to_string(&caller).unwrap();
        let text = text.replacen(
            "    with:\n",
            "    with:\n      fail-on-regression: true\n",
            1,
        );
        assert!(text.contains("fail-on-regression: true"));
        std::fs::write(&caller, text).unwrap();
    }
    h.fake.with_comments(REPO, PR, vec![]);
    h.serve_recorded_run();
    let run = h.run_labelled_pr();
    h.keep_if_asked(&format!("regression-{gate}"));
    let ran = run.jobs(SWEEP_PREFIX);
    assert!(
        !run.skipped_unmapped_job(),
        "act skipped a job for an unmapped runs-on label"
    );
    // One comment, posted either way.
    assert_eq!(
        h.writes(),
        vec![format!("POST /repos/{REPO}/issues/{PR}/comments")],
        "writes to GitHub (gate {gate})"
    );
    let comments = h.fake.comments(REPO, PR);
    assert_eq!(comments.len(), 1);
    let body = comments[0]["body"].as_str().unwrap().to_string();
    // The pictures: the SVG and one PNG per configuration (per sequence
    // length of the seed config), the two slower points counted as
    // regressed, and the comment links the artifact.
    let configurations: std::collections::BTreeSet<(u64, u64)> = legs
        .iter()
        .map(|l| (l["isl"].as_u64().unwrap(), l["osl"].as_u64().unwrap()))
        .collect();
    let (files, regressed) = compare_report_pictures(&h);
    for f in [
        "compare.md",
        "compare.json",
        "compare.svg",
        "charts/charts.json",
    ] {
        assert!(
            files.iter().any(|x| x == f),
            "compare-report lacks {f}: {files:?}"
        );
    }
    let pngs = files.iter().filter(|f| f.ends_with(".png")).count();
    assert_eq!(
        pngs,
        configurations.len(),
        "one PNG per configuration {configurations:?}: {files:?}"
    );
    assert_eq!(
        regressed, 2,
        "regressed points in charts.json (gate {gate})"
    );
    assert!(
        body.contains(&format!(
            "[compare-report](https://github.com/{REPO}/actions/runs/{ACT_RUN_ID}/artifacts/"
        )),
        "the comment does not link the compare-report artifact (gate {gate}):\n{body}"
    );
    (run, ran, body)
}

#[test]
fn a_regression_fails_the_run_at_compare_only_with_fail_on_regression_under_act() {
    act_scenario!(act);

    // With the gate: the run fails, and compare-results is the job that failed.
    let (gated, ran, gated_body) = run_scenario(&act, true);
    let (log, secs) = (&gated.log, gated.secs);
    eprintln!("scenario c (gate): act ran {secs:.1} s; jobs: {ran:#?}");
    assert!(
        !gated.ok,
        "act succeeded with a regression and the gate:\n{}",
        gated.tail()
    );
    let failed: Vec<&str> = ran
        .iter()
        .filter(|(_, o)| **o == Outcome::Failed)
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(failed, ["compare-results"], "{}", gated.tail());
    for job in [
        "comment-unofficial-run-visualizer",
        "calc-success-rate",
        "collect-results",
    ] {
        assert_eq!(ran.get(job), Some(&Outcome::Succeeded), "{job}: {ran:#?}");
    }
    // Its annotation is the summary line.
    let line = "2 points regressed (4 metrics) · 0 improved · ";
    assert!(
        log.lines()
            .any(|l| l.contains("compare-results") && l.contains("::error::") && l.contains(line))
            || log.lines().any(
                |l| l.starts_with("[sweep/Run Sweep (sweepkit)/compare-results]")
                    && l.contains(line)
            ),
        "compare-results' log has no summary line:\n{}",
        log.lines()
            .filter(|l| l.contains("/compare-results]"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let gated_succeeded = ran.values().filter(|o| **o == Outcome::Succeeded).count();

    // The comment says 2 points regressed, in its heading.
    let heading = gated_body
        .lines()
        .find(|l| l.starts_with("### "))
        .unwrap_or_default()
        .to_string();
    assert!(
        heading.starts_with("### ❌ 2 points regressed (4 metrics) · 0 improved · "),
        "{gated_body}"
    );
    assert!(gated_body.contains("**Regressed:** "), "{gated_body}");

    // Without the gate: green, the same comment.
    let (plain, ran, body) = run_scenario(&act, false);
    plain.assert_ok("scenario c (no gate)");
    let secs2 = plain.secs;
    assert!(failed_jobs(&ran).is_empty(), "{ran:#?}");
    assert!(ran.contains_key("compare-results"), "{ran:#?}");
    // The two runs are two commits of the scratch repository: the
    // provenance line names each run's own head; everything else is the same.
    let without_head = |b: &str| {
        b.lines()
            .map(|l| match l.split_once(" compared with ") {
                Some((head, rest)) if head.contains("/commit/") => {
                    format!("<head> compared with {rest}")
                }
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        without_head(&body),
        without_head(&gated_body),
        "the same comment with and without the gate"
    );
    eprintln!("comment:\n{body}");
    eprintln!(
        "scenario c summary: with fail-on-regression: {gated_succeeded} jobs succeeded, 1 failed (compare-results), act wall time {secs:.1} s; without: {} jobs succeeded, 0 failed, act wall time {secs2:.1} s; comment heading: {heading}",
        ran.len()
    );
}
