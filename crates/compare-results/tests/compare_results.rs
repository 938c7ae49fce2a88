//! End-to-end tests of the `compare-results` binary: the seed-compare
//! acceptance fixture, self-made fixtures (snapshots of the markdown, an
//! injected regression, unmatched and duplicate points, API baselines,
//! `--baseline-url` against the fake server's benchmarks API, the SVG
//! chart) and the PostgreSQL baseline against a real server started on
//! loopback.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use test_kit::{Fault, assert_snapshot, stderr, stdout};

// ---------------------------------------------------------------- helpers

/// The binary with a scrubbed environment (no Actions, no DATABASE_URL, no
/// action inputs) so the host cannot leak into a test.
fn cmd() -> Command {
    test_kit::command(env!("CARGO_BIN_EXE_compare-results"))
}

fn run(c: &mut Command) -> Output {
    c.output().expect("run compare-results")
}

/// `~` written for the no-break space between a number and its unit.
fn nb(s: &str) -> String {
    s.replace('~', "\u{a0}")
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("read json")).expect("parse json")
}

/// `../shared` relative to the workspace root, or `SWEEPKIT_SHARED`.
fn shared_dir() -> PathBuf {
    match std::env::var_os("SWEEPKIT_SHARED") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

/// The seed-compare fixture — the in-repo copy of the corpus
/// (`tests/conformance/`), or the shared one when `SWEEPKIT_SHARED` is set —
/// or `None` (with a loud note) when absent outside CI; in CI its absence
/// fails the test.
fn seed_fixture() -> Option<PathBuf> {
    let dir = match std::env::var_os("SWEEPKIT_SHARED") {
        Some(_) => shared_dir().join("conformance/fixtures/seed-compare"),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/conformance/fixtures/seed-compare"),
    };
    if dir.join("expected.json").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "seed-compare fixture not found at {} (set SWEEPKIT_SHARED)",
        dir.display()
    );
    eprintln!(
        "!!! SKIPPED: seed-compare fixture not found at {}",
        dir.display()
    );
    None
}

/// A complete agg row (the shape `collect-results process` writes).
fn agg_row(hw: &str, tp: i64, conc: i64, tput: f64, tpot: f64, ttft: f64) -> Value {
    json!({
        "hw": hw, "conc": conc, "image": "img:1", "model": "org/Model-FP8",
        "infmax_model_prefix": "dsr1", "framework": "sglang", "precision": "fp8",
        "spec_decoding": "none", "disagg": false, "recipe_fingerprint": "",
        "isl": 1024, "osl": 1024, "is_multinode": false, "tp": tp, "pp": 1, "dcp_size": 1,
        "pcp_size": 1, "ep": 1, "dp_attention": "false",
        "tput_per_gpu": tput, "output_tput_per_gpu": tput / 2.0, "input_tput_per_gpu": tput / 2.0,
        "mean_ttft": ttft, "median_ttft": ttft, "p90_ttft": ttft * 1.5, "p99_ttft": ttft * 2.0,
        "p99.9_ttft": ttft * 2.5, "mean_tpot": tpot, "mean_intvty": 1.0 / tpot,
        "median_intvty": 1.0 / tpot, "p90_intvty": 0.9 / tpot, "p99_intvty": 0.8 / tpot,
        "p99.9_intvty": 0.7 / tpot, "median_e2el": 10.0, "p90_e2el": 12.0, "p99_e2el": 14.0,
        "p99.9_e2el": 15.0, "power_metric_schema_version": 2, "power_valid": 0
    })
}

/// Self-made baseline and new runs: H100 TP8 at conc 4/8/16/32 and H200 TP4
/// at conc 8/16; the new run lacks H100 conc 32 and adds H100 conc 64.
fn small_runs() -> (Vec<Value>, Vec<Value>) {
    let base = vec![
        agg_row("h100-nv_01", 8, 4, 1000.0, 0.010, 0.200),
        agg_row("h100-nv_01", 8, 8, 1800.0, 0.012, 0.250),
        agg_row("h100-nv_02", 8, 16, 3000.0, 0.015, 0.300),
        agg_row("h100-nv_02", 8, 32, 4500.0, 0.020, 0.400),
        agg_row("h200", 4, 8, 2500.0, 0.011, 0.220),
        agg_row("h200", 4, 16, 4000.0, 0.014, 0.280),
    ];
    let new = vec![
        agg_row("h100-nv_03", 8, 4, 1040.0, 0.0098, 0.190),
        agg_row("h100-nv_03", 8, 8, 1900.0, 0.0118, 0.240),
        agg_row("h100-nv_03", 8, 16, 3050.0, 0.0151, 0.320),
        agg_row("h100-nv_03", 8, 64, 6000.0, 0.030, 0.600),
        agg_row("h200", 4, 8, 2600.0, 0.0105, 0.200),
        agg_row("h200", 4, 16, 4100.0, 0.0139, 0.270),
    ];
    (base, new)
}

fn eval_row(conc: i64, strict: f64, se: f64, flex: f64) -> Value {
    json!({
        "is_multinode": false, "model_prefix": "dsr1", "model": "org/Model-FP8", "hw": "H100",
        "framework": "sglang", "precision": "fp8", "spec_decoding": "none", "isl": 1024,
        "osl": 1024, "tp": 8, "ep": 1, "prefill_tp": 8, "prefill_ep": 1, "prefill_num_workers": 1,
        "decode_tp": 8, "decode_ep": 1, "decode_num_workers": 1, "conc": conc,
        "dp_attention": "false", "prefill_dp_attention": "false", "decode_dp_attention": "false",
        "task": "gsm8k", "em_strict": strict, "em_strict_se": se, "em_flexible": flex,
        "em_flexible_se": 0.006, "n_eff": 1319, "source": "eval_results/x/results.json",
        "score": strict, "score_name": "em_strict", "score_se": se
    })
}

struct Fixture {
    dir: test_kit::TempDir,
}

impl Fixture {
    fn new(base: &[Value], new: &[Value]) -> Self {
        let dir = test_kit::temp_dir();
        std::fs::create_dir_all(dir.path().join("base")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("new")).expect("mkdir");
        let f = Self { dir };
        f.write("base/agg_bmk.json", &json!(base));
        f.write("new/agg_bmk.json", &json!(new));
        f
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, v: &Value) {
        std::fs::write(
            self.path(rel),
            serde_json::to_string_pretty(v).expect("json"),
        )
        .expect("write");
    }

    /// The standard invocation: new vs base, JSON report in the fixture.
    fn compare(&self) -> Command {
        let mut c = cmd();
        c.arg("--new")
            .arg(self.path("new/agg_bmk.json"))
            .arg("--baseline")
            .arg(self.path("base/agg_bmk.json"))
            .arg("--baseline-label")
            .arg("main")
            .arg("--json")
            .arg(self.path("out/compare.json"))
            .arg("--svg")
            .arg(self.path("out/compare.svg"));
        std::fs::create_dir_all(self.path("out")).expect("mkdir");
        c
    }
}

/// Relative changes (percent) of one metric column of a markdown table,
/// keyed by (TP, conc).
fn md_changes(md: &str, column: &str) -> Vec<((i64, i64), f64)> {
    let mut header: Option<Vec<String>> = None;
    let mut out = Vec::new();
    for line in md.lines() {
        if !line.starts_with('|') {
            header = None;
            continue;
        }
        let cells: Vec<String> = line
            .trim_matches('|')
            .split(" | ")
            .map(|s| s.trim().to_string())
            .collect();
        let Some(h) = &header else {
            header = Some(cells);
            continue;
        };
        if cells[0].starts_with("---") || cells[0].starts_with(":--") {
            continue;
        }
        let (Some(ti), Some(ci), Some(mi)) = (
            h.iter().position(|c| c == "TP"),
            h.iter().position(|c| c == "Conc"),
            h.iter().position(|c| c == column),
        ) else {
            continue;
        };
        let cell = &cells[mi];
        let open = cell.rfind('(').expect("a change in parentheses");
        let num: String = cell[open..]
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '.' || *c == '-' || *c == '+')
            .collect();
        out.push((
            (
                cells[ti].parse().expect("tp"),
                cells[ci].parse().expect("conc"),
            ),
            num.parse().expect("percent"),
        ));
    }
    out
}

/// Checks that every key of `expected` is in `actual` with an equal value
/// (recursively; arrays element by element). `match_key` may be a
/// superset.
fn assert_subset(expected: &Value, actual: &Value, path: &str) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let av = a
                    .get(k)
                    .unwrap_or_else(|| panic!("{path}.{k}: missing in output"));
                if k == "match_key" {
                    let have: Vec<&Value> = av.as_array().expect("array").iter().collect();
                    for f in ev.as_array().expect("array") {
                        assert!(have.contains(&f), "{path}.match_key lacks {f}");
                    }
                    continue;
                }
                assert_subset(ev, av, &format!("{path}.{k}"));
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            assert_eq!(e.len(), a.len(), "{path}: length");
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                assert_subset(ev, av, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(expected, actual, "{path}"),
    }
}

// ------------------------------------------------------- seed acceptance

fn seed_run(dir: &Path, out: &Path) -> Output {
    run(cmd()
        .arg("--new")
        .arg(dir.join("new/agg_bmk.json"))
        .arg("--baseline")
        .arg(dir.join("baseline/agg_bmk.json"))
        .arg("--new-evals")
        .arg(dir.join("new/agg_eval_all.json"))
        .arg("--baseline-label")
        .arg("sglang v0.5.14 (seed baseline)")
        .arg("--json")
        .arg(out.join("compare.json"))
        .arg("--svg")
        .arg(out.join("compare.svg")))
}

#[test]
fn seed_compare_json_matches_expected() {
    let Some(dir) = seed_fixture() else { return };
    let out = test_kit::temp_dir();
    let o = seed_run(&dir, out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let expected = read_json(&dir.join("expected.json"));
    let actual = read_json(&out.path().join("compare.json"));
    assert_subset(&expected, &actual, "");
    assert_eq!(actual["verdict"], "no_regressions");
    assert_eq!(actual["schema_version"], 1);
}

#[test]
fn seed_compare_markdown_reproduces_the_seed_table() {
    let Some(dir) = seed_fixture() else { return };
    let out = test_kit::temp_dir();
    let o = seed_run(&dir, out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(
        md.contains(
            "**Verdict: ✅ 0 points regressed (0 metrics) · 7 improved · 0 unchanged · 0 inconclusive · 0 not re-run · 0 no baseline · 0 evals failed**"
        ),
        "{md}"
    );
    // The published comparison's tput/GPU changes, TP4 conc 4 then TP2 conc 4..128.
    let seed_tput = [
        ((4, 4), 23.1),
        ((2, 4), 13.6),
        ((2, 8), 12.2),
        ((2, 16), 14.6),
        ((2, 32), 12.4),
        ((2, 64), 9.5),
        ((2, 128), 5.8),
    ];
    let got = md_changes(&md, "tput/GPU (tok/s)");
    assert_eq!(got.len(), 7, "{md}");
    for (key, seed) in seed_tput {
        let (_, v) = got.iter().find(|(k, _)| *k == key).expect("point in table");
        assert!(
            (v - seed).abs() <= 0.1 + 1e-9,
            "tput {key:?}: {v} vs seed {seed}"
        );
    }
    // TPOT and TTFT: the seed's end points, and every row against expected.json.
    let tpot = md_changes(&md, "mean TPOT (ms)");
    let ttft = md_changes(&md, "mean TTFT (ms)");
    let at =
        |v: &[((i64, i64), f64)], k: (i64, i64)| v.iter().find(|(kk, _)| *kk == k).expect("row").1;
    assert!((at(&tpot, (4, 4)) - -15.7).abs() <= 0.1 + 1e-9);
    assert!((at(&tpot, (2, 128)) - -5.3).abs() <= 0.1 + 1e-9);
    assert!((at(&ttft, (4, 4)) - -59.2).abs() <= 0.1 + 1e-9);
    assert!((at(&ttft, (2, 128)) - -8.5).abs() <= 0.1 + 1e-9);
    let expected = read_json(&dir.join("expected.json"));
    for p in expected["points"].as_array().expect("points") {
        let k = (
            p["tp"].as_i64().expect("tp"),
            p["conc"].as_i64().expect("conc"),
        );
        for (col, metric, table) in [("tpot", "mean_tpot", &tpot), ("ttft", "mean_ttft", &ttft)] {
            let want = p["rel_delta"][metric].as_f64().expect("rel") * 100.0;
            let got = at(table, k);
            assert!(
                (got - want).abs() <= 0.05 + 1e-9,
                "{col} {k:?}: {got} vs {want}"
            );
        }
    }
    // The eval table carries the gsm8k figures.
    for s in [
        "96.82~%", "±0.48~%", "95.98~%", "96.51~%", "±0.51~%", "95.38~%", "1319",
    ] {
        assert!(md.contains(&nb(s)), "eval table lacks {s}");
    }
    // One mermaid chart per topology: the TP2 sweep over its six
    // concurrencies; TP4 (one point) gets none, and no line runs from one
    // topology into another.
    let charts: Vec<&str> = md.split("```mermaid\n").skip(1).collect();
    assert_eq!(charts.len(), 1, "{md}");
    assert!(charts[0].contains("title \"TP2 EP1: "), "{}", charts[0]);
    assert!(
        charts[0].contains("[\"4\", \"8\", \"16\", \"32\", \"64\", \"128\"]"),
        "{}",
        charts[0]
    );
    assert!(
        !md.contains("TP4 EP1 c4"),
        "a topology in a chart's x axis: {md}"
    );
    assert_snapshot!("seed_compare_markdown", md);
}

#[test]
fn seed_compare_svg_parses_and_has_both_series() {
    let Some(dir) = seed_fixture() else { return };
    let out = test_kit::temp_dir();
    let o = seed_run(&dir, out.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    check_svg(&out.path().join("compare.svg"), &["TP2 EP1", "TP4 EP1"]);
    // The interactivity panel: a frontier per side and topology, in the
    // legend, and the new TP2 frontier through all six of its points (on the
    // seed every TP2 point is on its run's frontier).
    let text = std::fs::read_to_string(out.path().join("compare.svg")).expect("svg");
    let doc = roxmltree::Document::parse(&text).expect("svg parses");
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "text")
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for label in [
        "baseline TP2 EP1 frontier",
        "new TP2 EP1 frontier",
        "baseline TP4 EP1 frontier",
        "new TP4 EP1 frontier",
    ] {
        assert!(texts.contains(&label), "legend lacks {label}: {texts:?}");
    }
    let new_tp2 = format!("#{:02X}{:02X}{:02X}", 255, 127, 14);
    let lengths: Vec<usize> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "polyline")
        .filter(|n| {
            n.attribute("stroke")
                .is_some_and(|s| s.eq_ignore_ascii_case(&new_tp2))
        })
        .map(|n| {
            n.attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .count()
        })
        .collect();
    // Six-point lines: the frontier and the concurrency line; two-point
    // ones: the legend swatches.
    assert_eq!(
        lengths.iter().filter(|&&n| n == 6).count(),
        2,
        "new TP2 lines: {lengths:?}"
    );
    for c in ["c4", "c8", "c16", "c32", "c64", "c128"] {
        assert!(texts.contains(&c), "point label {c} missing: {texts:?}");
    }
}

fn check_svg(path: &Path, topologies: &[&str]) {
    let text = std::fs::read_to_string(path).expect("svg written next to the JSON");
    let doc = roxmltree::Document::parse(&text).expect("SVG is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "text")
        .filter_map(|n| n.text())
        .collect();
    for t in topologies {
        for series in ["baseline", "new"] {
            let label = format!("{series} {t}");
            assert!(
                texts.iter().any(|x| x.trim() == label),
                "legend lacks '{label}': {texts:?}"
            );
        }
    }
    let lines = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "polyline")
        .count();
    assert!(
        lines >= 2 * topologies.len(),
        "expected a line per series, found {lines}"
    );
}

// ------------------------------------------------------ self-made fixtures

#[test]
fn markdown_snapshot_with_unmatched_points_and_evals() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    f.write(
        "new/agg_eval_all.json",
        &json!([
            eval_row(16, 0.95, 0.006, 0.94),
            eval_row(8, 0.90, 0.008, 0.91)
        ]),
    );
    f.write(
        "base/agg_eval_all.json",
        &json!([
            eval_row(16, 0.955, 0.006, 0.94),
            eval_row(8, 0.95, 0.006, 0.95)
        ]),
    );
    std::fs::write(
        f.path("thresholds.yaml"),
        "default:\n  gsm8k: 0.90\nmodels:\n  dsr1:\n    gsm8k: 0.91\n",
    )
    .expect("write");
    let o = run(f
        .compare()
        .arg("--new-evals")
        .arg(f.path("new/agg_eval_all.json"))
        .arg("--baseline-evals")
        .arg(f.path("base/agg_eval_all.json"))
        .arg("--thresholds")
        .arg(f.path("thresholds.yaml")));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = stdout(&o);
    assert_snapshot!("small_markdown", md);
    let j = read_json(&f.path("out/compare.json"));
    // One verdict for points and evals (issue #37 item 5): dsr1's 0.90 is
    // below its 0.91.
    assert_eq!(j["verdict"], "evals_failed");
    assert_eq!(j["summary"]["verdict"], "evals_failed");
    assert_eq!(j["summary"]["counts"]["evals_failed"], 1);
    assert_eq!(j["points"].as_array().expect("points").len(), 5);
    assert_eq!(j["unmatched_new"][0]["conc"], 64);
    assert_eq!(j["unmatched_baseline"][0]["conc"], 32);
    assert_eq!(j["evals"][1]["pass"], false, "0.90 < dsr1's 0.91");
    assert_eq!(
        j["summary"]["evals"][1],
        json!({"configuration": "dsr1 fp8 h100 sglang, 1k1k (spec: none)", "point": "TP8 EP1, conc 8",
            "task": "gsm8k", "score": nb("90.00~%"), "threshold": nb("91~%"), "pass": false})
    );
    assert_eq!(j["evals"][1]["significant_drop"], true);
    assert_eq!(j["evals"][0]["significant_drop"], false);
    check_svg(&f.path("out/compare.svg"), &["TP8 EP1", "TP4 EP1"]);
}

#[test]
fn injected_regression_is_reported_and_fails_with_the_flag() {
    let (base, mut new) = small_runs();
    // H100 TP8 conc 8: tput/GPU 1800 -> 1600 (-11.1 %), beyond the 5 % tolerance.
    new[1] = agg_row("h100-nv_03", 8, 8, 1600.0, 0.0118, 0.240);
    let f = Fixture::new(&base, &new);
    let o = run(&mut f.compare());
    assert_eq!(o.status.code(), Some(0), "no flag: report only");
    let md = stdout(&o);
    assert!(
        md.contains("**Verdict: ❌ 1 point regressed (2 metrics) · "),
        "{md}"
    );
    assert!(
        md.contains(&nb("| dsr1 fp8 h100 sglang, 1k1k (spec: none) | TP8 EP1, conc 8 | tput/GPU (tok/s) | **🔴~▼~-11.1~%** (1800.0 → 1600.0) | output tput 🔴~▼~-11.1~% |")),
        "{md}"
    );
    assert!(md.contains(&nb("(**🔴~▼~-11.1~%**)")), "{md}");
    assert!(!md.contains("\\color"), "no LaTeX colour: {md}");
    let j = read_json(&f.path("out/compare.json"));
    assert_eq!(j["verdict"], "regressions");
    let regs = j["regressions"].as_array().expect("regressions");
    assert!(!regs.is_empty());
    assert!(
        regs.iter()
            .all(|r| r["conc"] == 8 && r["hw"] == "h100" && r["tp"] == 8)
    );
    assert!(regs.iter().any(|r| r["metric"] == "tput_per_gpu"));
    // The summary visualizer-comment puts at the top of the PR comment.
    let sum = &j["summary"];
    assert_eq!(sum["verdict"], "regressions");
    // Each count once, under `counts` (issue #36 item 2).
    assert!(sum.get("matched").is_none() && j.get("counts").is_none());
    assert_eq!(sum["counts"]["matched"], 5);
    assert_eq!(sum["counts"]["regressed_points"], 1);
    assert_eq!(
        sum["regressions"][0],
        json!({
            "group": "dsr1 fp8 h100 sglang, 1k1k (spec: none)",
            "point": "TP8 EP1, conc 8",
            "metric": "tput/GPU (tok/s)",
            "change": nb("🔴~▼~-11.1~% (1800.0 → 1600.0)"),
            "tolerance": nb("5~%"),
        })
    );
    assert_eq!(sum["counts"]["no_baseline"], 1);
    assert_eq!(sum["counts"]["not_rerun"], 1);
    let o = run(f
        .compare()
        .arg("--fail-on-regression")
        .env("GITHUB_ACTIONS", "true"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("::error::1 point regressed (2 metrics) · 0 improved · 4 unchanged · 0 inconclusive vs main"),
        "{}",
        stderr(&o)
    );
    // A wider tolerance absorbs it.
    let o = run(f
        .compare()
        .arg("--fail-on-regression")
        .arg("--tolerance")
        .arg("tput_per_gpu=15%,output_tput_per_gpu=0.15"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Issue #34 item 2: a baseline row with `tput_per_gpu: 1.7e308` made the
/// chart's axis infinite and the run hang after compare.json/compare.md
/// were written. Now the row is refused where it enters, naming the file,
/// the row and the key (exit 2, bad input), and no output is written; the
/// same for a negative throughput, a zero TP and such rows of the new run
/// or of an API baseline.
#[test]
fn out_of_range_figures_and_counts_are_refused_before_any_output() {
    let (base, new) = small_runs();
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "base",
            json!({"tput_per_gpu": 1.7e308}),
            "base/agg_bmk.json[1]: key 'tput_per_gpu': is 1.7e308, above the limit of 1e12 (MAX_FIGURE)",
        ),
        (
            "base",
            json!({"output_tput_per_gpu": -5.0}),
            "base/agg_bmk.json[1]: key 'output_tput_per_gpu': is negative (-5)",
        ),
        (
            "base",
            json!({"median_intvty": "inf"}),
            "base/agg_bmk.json[1]: key 'median_intvty': is inf, not a finite number",
        ),
        (
            "base",
            json!({"tp": 0}),
            "base/agg_bmk.json[1]: key 'tp': must be a positive integer, found 0",
        ),
        (
            "new",
            json!({"conc": -8}),
            "new/agg_bmk.json[1]: key 'conc': must be a positive integer, found -8",
        ),
    ];
    for (side, patch, needle) in cases {
        let (mut b, mut n) = (base.clone(), new.clone());
        let rows = if side == "base" { &mut b } else { &mut n };
        for (k, v) in patch.as_object().expect("patch") {
            rows[1][k] = v.clone();
        }
        let f = Fixture::new(&b, &n);
        let o = run(f
            .compare()
            .arg("--markdown")
            .arg(f.path("out/compare.md"))
            .arg("--charts-dir")
            .arg(f.path("out/charts")));
        assert_eq!(o.status.code(), Some(2), "{needle}: {}", stderr(&o));
        let err = stderr(&o).replace(&format!("{}/", f.path("").display()), "");
        assert!(err.contains(needle), "{needle}: {err}");
        let written: Vec<_> = std::fs::read_dir(f.path("out"))
            .expect("out")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert!(written.is_empty(), "{needle}: no output, found {written:?}");
    }
    // An API baseline names the key inside `metrics`.
    let f = Fixture::new(&base, &new);
    let mut api = api_rows(&base[..4]);
    api[2]["metrics"]["tput_per_gpu"] = json!(1.7e308);
    f.write("api.json", &api);
    let o = run(cmd()
        .arg("--new")
        .arg(f.path("new/agg_bmk.json"))
        .arg("--baseline")
        .arg(f.path("api.json"))
        .arg("--json")
        .arg(f.path("api-out.json")));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("api.json[2]: key 'metrics.tput_per_gpu': is 1.7e308, above the limit"),
        "{}",
        stderr(&o)
    );
    assert!(!f.path("api-out.json").exists());
}

/// Issue #34 item 3b: a key twice in one object of a baseline, a new run
/// or a thresholds file is refused naming the file, line and key (exit 2),
/// never read as its last value; no output is written.
#[test]
fn a_key_twice_in_an_input_is_refused() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    let text = serde_json::to_string_pretty(&json!(base)).expect("json");
    let dup = text.replacen(
        "\"tput_per_gpu\": 1000.0,",
        "\"tput_per_gpu\": 1000.0,\n    \"tput_per_gpu\": 1.0,",
        1,
    );
    assert_ne!(dup, text);
    std::fs::write(f.path("base/agg_bmk.json"), &dup).expect("write");
    let o = run(&mut f.compare());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("base/agg_bmk.json:")
            && stderr(&o)
                .contains("invalid JSON: duplicate key \"tput_per_gpu\" at $[0].tput_per_gpu"),
        "{}",
        stderr(&o)
    );
    assert!(!f.path("out/compare.json").exists());
    // A thresholds file, YAML or JSON.
    let f = Fixture::new(&base, &new);
    for (name, body, needle) in [
        (
            "t.yaml",
            "default:\n  gsm8k: 0.1\n  gsm8k: 0.9\n",
            "t.yaml: line 3, column 1: duplicate key 'default.gsm8k' (first at line 2)",
        ),
        (
            "t.json",
            "{\"default\": {\"gsm8k\": 0.1, \"gsm8k\": 0.9}}",
            "t.json:1:",
        ),
    ] {
        std::fs::write(f.path(name), body).expect("write");
        let o = run(f.compare().arg("--thresholds").arg(f.path(name)));
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("duplicate key"),
            "{name}: {}",
            stderr(&o)
        );
        assert!(!f.path("out/compare.json").exists());
    }
    // A thresholds file that is not UTF-8: refused with the file and cause.
    std::fs::write(f.path("t.yaml"), b"default:\n  gsm8k: 0.9 # caf\xe9\n").expect("write");
    let o = run(f.compare().arg("--thresholds").arg(f.path("t.yaml")));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("t.yaml"), "{}", stderr(&o));
    assert!(stderr(&o).contains("valid UTF-8"), "{}", stderr(&o));
}

#[test]
fn seed_injected_regression_lists_the_point() {
    let Some(dir) = seed_fixture() else { return };
    let mut rows = read_json(&dir.join("new/agg_bmk.json"));
    for r in rows.as_array_mut().expect("rows") {
        if r["tp"] == 2 && r["conc"] == 64 {
            r["mean_ttft"] = json!(2.0); // baseline 1.5369 s: +30 %
        }
    }
    let tmp = test_kit::temp_dir();
    let new = tmp.path().join("agg_bmk.json");
    std::fs::write(&new, rows.to_string()).expect("write");
    let o = run(cmd()
        .arg("--new")
        .arg(&new)
        .arg("--baseline")
        .arg(dir.join("baseline/agg_bmk.json"))
        .arg("--json")
        .arg(tmp.path().join("c.json"))
        .arg("--fail-on-regression"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j = read_json(&tmp.path().join("c.json"));
    assert_eq!(j["verdict"], "regressions");
    assert_eq!(j["regressions"].as_array().expect("list").len(), 1);
    assert_eq!(j["regressions"][0]["metric"], "mean_ttft");
    assert_eq!(j["regressions"][0]["conc"], 64);
    assert!(
        stdout(&o).contains(&nb(
            "| TP2 EP1, conc 64 | mean TTFT (ms) | **🔴~▲~+30.1~%**"
        )),
        "{}",
        stdout(&o)
    );
}

#[test]
fn duplicates_keep_the_first_row_and_are_listed() {
    let (base, mut new) = small_runs();
    new.push(agg_row("h200", 4, 8, 10.0, 0.05, 5.0)); // a retried job, worse
    let f = Fixture::new(&base, &new);
    // Pooling repeats is the default (tests/noise.rs); `first` is the
    // spec's dedup.
    let o = run(f.compare().args(["--repeats", "first"]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = read_json(&f.path("out/compare.json"));
    assert_eq!(j["verdict"], "no_regressions", "the first row wins");
    assert_eq!(j["duplicates"][0]["side"], "new");
    assert_eq!(j["duplicates"][0]["conc"], 8);
    assert!(stdout(&o).contains("### Duplicate rows (first one used)"));
}

#[test]
fn directory_input_is_walked_and_agentic_rows_dropped() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    let d = f.path("newdir");
    std::fs::create_dir_all(d.join("bmk_a")).expect("mkdir");
    std::fs::create_dir_all(d.join("bmk_b")).expect("mkdir");
    std::fs::write(d.join("bmk_a/agg_a.json"), new[0].to_string()).expect("write");
    std::fs::write(d.join("bmk_b/agg_b.json"), json!([new[1]]).to_string()).expect("write");
    std::fs::write(
        d.join("bmk_b/agentic.json"),
        json!({"scenario_type": "agentic-coding"}).to_string(),
    )
    .expect("write");
    let o = run(cmd()
        .arg(&d)
        .arg("--baseline")
        .arg(f.path("base/agg_bmk.json"))
        .arg("--json")
        .arg(f.path("d.json")));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = read_json(&f.path("d.json"));
    assert_eq!(j["points"].as_array().expect("points").len(), 2);
    assert_eq!(j["unmatched_baseline"].as_array().expect("list").len(), 4);
}

/// The same baseline as rows of the benchmarks API.
fn api_rows(base: &[Value]) -> Value {
    let rows: Vec<Value> = base
        .iter()
        .map(|r| {
            let mut metrics = r.as_object().expect("row").clone();
            for k in [
                "hw",
                "conc",
                "image",
                "model",
                "infmax_model_prefix",
                "framework",
                "precision",
                "spec_decoding",
                "disagg",
                "recipe_fingerprint",
                "isl",
                "osl",
                "is_multinode",
                "tp",
                "ep",
                "dp_attention",
            ] {
                metrics.remove(k);
            }
            json!({
                "hardware": "h100", "framework": r["framework"], "model": "dsr1",
                "precision": r["precision"], "spec_method": "none", "disagg": false,
                "is_multinode": false, "prefill_tp": r["tp"], "prefill_ep": r["ep"],
                "prefill_dp_attention": false, "prefill_num_workers": 0, "decode_tp": r["tp"],
                "decode_ep": r["ep"], "decode_dp_attention": false, "decode_num_workers": 0,
                "num_prefill_gpu": r["tp"], "num_decode_gpu": r["tp"], "isl": r["isl"],
                "osl": r["osl"], "conc": r["conc"], "image": r["image"], "metrics": metrics,
                "date": "2026-08-01", "run_url": null, "benchmark_type": "single_turn"
            })
        })
        .collect();
    Value::Array(rows)
}

#[test]
fn api_response_file_is_a_baseline() {
    let (base, new) = small_runs();
    let h100: Vec<Value> = base.iter().take(4).cloned().collect();
    let f = Fixture::new(&base, &new);
    let mut api = api_rows(&h100);
    api.as_array_mut()
        .expect("rows")
        .push(json!({"benchmark_type": "agentic_traces", "hardware": "h100", "metrics": {}}));
    f.write("api.json", &api);
    let o = run(cmd()
        .arg("--new")
        .arg(f.path("new/agg_bmk.json"))
        .arg("--baseline")
        .arg(f.path("api.json"))
        .arg("--json")
        .arg(f.path("api-out.json")));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = read_json(&f.path("api-out.json"));
    assert_eq!(j["baseline"]["source"], "api");
    assert_eq!(j["points"].as_array().expect("points").len(), 3);
    assert_eq!(j["points"][0]["baseline"]["tput_per_gpu"], 1000.0);
    assert_eq!(j["unmatched_baseline"][0]["conc"], 32);
}

const API_MODEL: &str = "DeepSeek-R1-0528";
const API_DATE: &str = "2026-08-01";

#[test]
fn baseline_url_is_fetched_with_a_retry_on_server_error() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    let server = test_kit::fake_github();
    server.with_benchmarks(API_MODEL, API_DATE, api_rows(&base[..4]));
    server.inject(
        "GET",
        test_kit::fake_github::BENCHMARKS_PATH,
        [Fault::Status(503)],
    );
    let url = server.benchmarks_url(API_MODEL, API_DATE);
    let o = run(cmd()
        .arg("--new")
        .arg(f.path("new/agg_bmk.json"))
        .arg("--baseline-url")
        .arg(&url)
        .arg("--json")
        .arg(f.path("url.json")));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].method, "GET");
    assert_eq!(requests[1].path, "/api/v1/benchmarks");
    let query: Vec<(&str, &str)> = requests[1]
        .query
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        query,
        [("date", API_DATE), ("exact", "true"), ("model", API_MODEL)]
    );
    assert_eq!(
        requests[1].headers.get("accept").map(String::as_str),
        Some("application/json")
    );
    let j = read_json(&f.path("url.json"));
    assert_eq!(j["baseline"]["source"], "api");
    assert_eq!(j["baseline"]["path"], url.as_str());
    assert_eq!(j["points"].as_array().expect("points").len(), 3);
}

#[test]
fn baseline_url_client_error_names_the_cause() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    let server = test_kit::fake_github();
    server.with_benchmarks("Other-Model", API_DATE, json!([]));
    let url = server.benchmarks_url(API_MODEL, API_DATE);
    let o = run(cmd()
        .arg("--new")
        .arg(f.path("new/agg_bmk.json"))
        .arg("--baseline-url")
        .arg(&url));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(r#"HTTP 400: {"error":"Unknown model"}"#),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        server.count("GET", "/api/v1/benchmarks"),
        1,
        "a 400 is not retried"
    );
}

#[test]
fn reference_layout_has_the_thirteen_metric_table() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    let o = run(f.compare().arg("--metrics").arg("reference"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = stdout(&o);
    assert_snapshot!("reference_markdown", md);
    assert!(md.starts_with("## Single-Node Comparison vs. Most Recent\n"));
    let header = md.lines().nth(2).expect("header");
    assert_eq!(header.matches(" Delta |").count(), 13, "{header}");
}

/// The job summary, stdout and `--full-markdown` get the full report
/// (every point); `--markdown` gets the comment's layout (issue #26 item 2).
#[test]
fn step_summary_gets_the_full_report_and_markdown_the_comment_layout() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    let summary = f.path("summary.md");
    std::fs::write(&summary, "previous\n").expect("write");
    let o = run(f
        .compare()
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .arg("--markdown")
        .arg(f.path("out/report.md"))
        .arg("--full-markdown")
        .arg(f.path("out/full.md")));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let full = stdout(&o);
    let s = std::fs::read_to_string(&summary).expect("summary");
    assert_eq!(s, format!("previous\n{full}"));
    assert_eq!(
        std::fs::read_to_string(f.path("out/full.md")).expect("full md"),
        full
    );
    let comment = std::fs::read_to_string(f.path("out/report.md")).expect("md");
    assert_ne!(comment, full, "two layouts");
    assert!(comment.contains("### Configurations"), "{comment}");
    assert!(
        full.contains("| unchanged |"),
        "the full report has every point: {full}"
    );
    assert!(
        !comment.contains("| unchanged |"),
        "the comment only points beyond tolerance: {comment}"
    );
}

#[test]
fn input_errors_exit_2_with_file_and_cause() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    std::fs::write(f.path("bad.json"), "[\n  {\"hw\": }\n]").expect("write");
    let o = run(cmd()
        .arg("--new")
        .arg(f.path("bad.json"))
        .arg("--baseline")
        .arg(f.path("base/agg_bmk.json")));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.json:2:10: invalid JSON"),
        "{}",
        stderr(&o)
    );

    let mut rows = new.clone();
    rows[2].as_object_mut().expect("row").remove("tp");
    f.write("missing.json", &json!(rows));
    let o = run(cmd()
        .arg("--new")
        .arg(f.path("missing.json"))
        .arg("--baseline")
        .arg(f.path("base/agg_bmk.json")));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("missing.json[2]: field 'tp' is missing"),
        "{}",
        stderr(&o)
    );

    let o = run(cmd().arg("--new").arg(f.path("new/agg_bmk.json")));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no baseline"), "{}", stderr(&o));
    let o = run(f.compare().arg("--tolerance").arg("tputt=5%"));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown metric 'tputt'"),
        "{}",
        stderr(&o)
    );
}

/// #26 item 8: the names the report prints are tolerance names, and
/// `--json` alone writes no SVG next to the JSON.
#[test]
fn report_names_set_tolerances_and_json_alone_writes_no_svg() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    let o = run(cmd()
        .arg("--new")
        .arg(f.path("new/agg_bmk.json"))
        .arg("--baseline")
        .arg(f.path("base/agg_bmk.json"))
        .arg("--tolerance")
        .arg("tput=7%,TTFT=20%")
        .arg("--json")
        .arg(f.path("json-only.json")));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(
        md.contains(&nb("tput 7~%")) && md.contains(&nb("TTFT 20~%")),
        "tolerances set by the printed names: {md}"
    );
    assert!(f.path("json-only.json").is_file());
    assert!(
        !f.path("json-only.svg").exists(),
        "an SVG was written unasked"
    );
}

#[test]
fn empty_new_results_say_so_and_pass() {
    let (base, _) = small_runs();
    let f = Fixture::new(&base, &[]);
    let o = run(&mut f.compare());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("No benchmark results found to compare."));
}

// ------------------------------------------------------------- PostgreSQL

mod pg {
    pub(super) use test_kit::pg::Server;

    /// The InferenceX tables the baseline query reads (a subset of the
    /// app's schema, same column names and types).
    pub(super) const SCHEMA: &str = "
    create table configs (
      id serial primary key,
      hardware text not null, framework text not null, model text not null,
      precision text not null, spec_method text not null,
      disagg boolean not null default false, is_multinode boolean not null default false,
      prefill_tp smallint not null, prefill_ep smallint not null default 1,
      prefill_dp_attention boolean not null default false,
      prefill_num_workers smallint not null default 0,
      decode_tp smallint not null, decode_ep smallint not null default 1,
      decode_dp_attention boolean not null default false,
      decode_num_workers smallint not null default 0,
      num_prefill_gpu smallint not null, num_decode_gpu smallint not null);
    create table workflow_runs (
      id bigserial primary key, github_run_id bigint not null,
      run_attempt smallint not null default 0, name text not null,
      head_branch text, created_at timestamptz not null, date date not null);
    create table benchmark_results (
      id bigserial primary key,
      workflow_run_id bigint not null references workflow_runs(id),
      config_id integer not null references configs(id),
      benchmark_type text not null, date date not null,
      isl integer not null, osl integer not null, conc integer not null,
      image text, metrics jsonb not null, error text);
    ";
}

#[test]
fn postgres_baseline_uses_newest_main_error_free_row() {
    let Some(server) = pg::Server::start() else {
        return;
    };
    server.psql(pg::SCHEMA);
    // One config (dsr1-fp8 on h100, TP8/EP1) and one at TP4 that must not match.
    server.psql(
        "insert into configs (hardware, framework, model, precision, spec_method, prefill_tp, prefill_ep, decode_tp, decode_ep, num_prefill_gpu, num_decode_gpu)
         values ('h100','sglang','dsr1','fp8','none',8,1,8,1,8,8), ('h100','sglang','dsr1','fp8','none',4,1,4,1,4,4);
         insert into workflow_runs (github_run_id, name, head_branch, created_at, date) values
           (1,'sweep','main','2026-07-01','2026-07-01'),
           (2,'sweep','main','2026-07-10','2026-07-10'),
           (3,'sweep','feature','2026-07-20','2026-07-20'),
           (4,'sweep','main','2026-07-25','2026-07-25');",
    );
    let insert = |run: i64, cfg: i64, date: &str, conc: i64, tput: f64, error: &str| {
        let metrics = json!({"tput_per_gpu": tput, "output_tput_per_gpu": tput / 2.0,
            "mean_tpot": 0.012, "mean_ttft": 0.25, "median_ttft": 0.25});
        let error = if error.is_empty() {
            "null".to_string()
        } else {
            format!("'{error}'")
        };
        server.psql(&format!(
            "insert into benchmark_results (workflow_run_id, config_id, benchmark_type, date, isl, osl, conc, metrics, error)
             values ({run}, {cfg}, 'single_turn', '{date}', 1024, 1024, {conc}, '{metrics}'::jsonb, {error});"
        ));
    };
    insert(1, 1, "2026-07-01", 4, 900.0, ""); // old main row
    insert(2, 1, "2026-07-10", 4, 1000.0, ""); // newest error-free main row: the baseline
    insert(3, 1, "2026-07-20", 4, 5000.0, ""); // newer, but a feature branch
    insert(4, 1, "2026-07-25", 4, 1.0, "server crashed"); // newer main, but failed
    insert(2, 2, "2026-07-10", 4, 7777.0, ""); // other topology
    insert(2, 1, "2026-07-10", 8, 1950.0, ""); // conc 8

    let (_, new) = small_runs();
    let f = Fixture::new(&[], &new);
    let o = run(cmd()
        .arg(f.path("new/agg_bmk.json"))
        .env("DATABASE_URL", &server.url)
        .arg("--json")
        .arg(f.path("db.json"))
        .arg("--fail-on-regression"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j = read_json(&f.path("db.json"));
    assert_eq!(j["baseline"]["source"], "database");
    let points = j["points"].as_array().expect("points");
    assert_eq!(points.len(), 2, "conc 4 and conc 8 of H100 TP8");
    assert_eq!(points[0]["conc"], 4);
    assert_eq!(points[0]["baseline"]["tput_per_gpu"], 1000.0);
    assert_eq!(points[1]["baseline"]["tput_per_gpu"], 1950.0);
    // The other new points have no baseline and are listed as such.
    assert_eq!(j["unmatched_new"].as_array().expect("list").len(), 4);
    assert!(
        stderr(&o).contains("2 matched, 4 without a baseline"),
        "{}",
        stderr(&o)
    );

    // A regression against the database baseline fails with the flag.
    insert(2, 1, "2026-07-10", 16, 9000.0, "");
    let o = run(cmd()
        .arg(f.path("new/agg_bmk.json"))
        .env("DATABASE_URL", &server.url)
        .arg("--fail-on-regression"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("| TP8 EP1, conc 16 | tput/GPU (tok/s) |"));

    // sslmode=require goes through the TLS connector; this server has no TLS.
    let o = run(cmd()
        .arg(f.path("new/agg_bmk.json"))
        .env("DATABASE_URL", format!("{}?sslmode=require", server.url)));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("TLS"), "{}", stderr(&o));
}

/// `--baseline-runs N`: the newest N error-free main rows per point are the
/// baseline's repeats (newest first, so `--repeats first` is the reference
/// query's row).
#[test]
fn postgres_baseline_runs_reads_the_newest_n_rows_per_point() {
    let Some(server) = pg::Server::start() else {
        return;
    };
    server.psql(pg::SCHEMA);
    server.psql(
        "insert into configs (hardware, framework, model, precision, spec_method, prefill_tp, prefill_ep, decode_tp, decode_ep, num_prefill_gpu, num_decode_gpu)
         values ('h100','sglang','dsr1','fp8','none',8,1,8,1,8,8);
         insert into workflow_runs (github_run_id, name, head_branch, created_at, date) values
           (1,'sweep','main','2026-07-01','2026-07-01'),
           (2,'sweep','main','2026-07-05','2026-07-05'),
           (3,'sweep','main','2026-07-10','2026-07-10'),
           (4,'sweep','feature','2026-07-20','2026-07-20');",
    );
    for (run, date, tput, error) in [
        (1, "2026-07-01", 1.0, "null"), // the oldest: beyond N = 2
        (2, "2026-07-05", 1000.0, "null"),
        (3, "2026-07-10", 1040.0, "null"),
        (3, "2026-07-10", 5.0, "'crashed'"), // failed: never a baseline
        (4, "2026-07-20", 9999.0, "null"),   // a feature branch
    ] {
        let metrics = json!({"tput_per_gpu": tput, "output_tput_per_gpu": tput / 2.0,
            "mean_tpot": 0.0098, "mean_ttft": 0.19});
        server.psql(&format!(
            "insert into benchmark_results (workflow_run_id, config_id, benchmark_type, date, isl, osl, conc, metrics, error)
             values ({run}, 1, 'single_turn', '{date}', 1024, 1024, 4, '{metrics}'::jsonb, {error});"
        ));
    }
    let (_, new) = small_runs();
    let f = Fixture::new(&[], &new);
    let query = |extra: &[&str]| {
        let out = f.path("db.json");
        let o = run(cmd()
            .arg(f.path("new/agg_bmk.json"))
            .env("DATABASE_URL", &server.url)
            .args(extra)
            .arg("--json")
            .arg(&out));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        read_json(&out)["points"][0].clone()
    };
    let p = query(&["--baseline-runs", "2"]);
    assert_eq!(p["conc"], 4);
    assert_eq!(p["n"], json!({"baseline": 2, "new": 1}));
    assert_eq!(p["baseline_stats"]["tput_per_gpu"]["min"], 1000.0);
    assert_eq!(p["baseline_stats"]["tput_per_gpu"]["max"], 1040.0);
    let p = query(&[]);
    assert_eq!(p["n"], json!({"baseline": 1, "new": 1}));
    assert_eq!(p["baseline"]["tput_per_gpu"], 1040.0, "the newest row");
    let p = query(&["--baseline-runs", "2", "--repeats", "first"]);
    assert_eq!(p["baseline"]["tput_per_gpu"], 1040.0, "newest first");
}

#[test]
fn postgres_connection_failure_is_an_input_error_without_the_password() {
    let port = test_kit::unused_port().expect("port");
    let (_, new) = small_runs();
    let f = Fixture::new(&[], &new);
    let o = run(cmd()
        .arg(f.path("new/agg_bmk.json"))
        .arg("--database-url")
        .arg(format!("postgres://u:hunter2@127.0.0.1:{port}/ix")));
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("connecting to postgres://u:***@127.0.0.1"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn action_inputs_arrive_as_environment_with_empty_values() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    let summary = f.path("summary.md");
    std::fs::create_dir_all(f.path("out")).expect("mkdir");
    let mut c = cmd();
    c.current_dir(f.path("out"))
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("INPUT_NEW", f.path("new/agg_bmk.json"))
        .env("INPUT_BASELINE", f.path("base/agg_bmk.json"));
    for k in [
        "INPUT_BASELINE_URL",
        "INPUT_BASELINE_FORMAT",
        "INPUT_NEW_EVALS",
        "INPUT_BASELINE_EVALS",
        "INPUT_THRESHOLDS",
        "INPUT_POLICY",
        "INPUT_METRICS",
        "INPUT_TOLERANCES",
    ] {
        c.env(k, "");
    }
    c.env("INPUT_FAIL_ON_REGRESSION", "false")
        .env("INPUT_MARKDOWN", "compare.md")
        .env("INPUT_JSON", "compare.json")
        .env("INPUT_SVG", "compare.svg");
    let o = run(&mut c);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(f.path("out/compare.md").is_file());
    assert_eq!(
        read_json(&f.path("out/compare.json"))["verdict"],
        "no_regressions"
    );
    assert!(f.path("out/compare.svg").is_file());
    assert!(
        std::fs::read_to_string(&summary)
            .expect("summary")
            .contains("**Verdict: ✅ 0 points regressed (0 metrics) · ")
    );
}

fn multinode_row(conc: i64, tput: f64) -> Value {
    let mut r = agg_row("gb200-multinode-slurm", 1, conc, tput, 0.02, 1.0);
    let o = r.as_object_mut().expect("row");
    for k in ["tp", "pp", "dcp_size", "pcp_size", "ep", "dp_attention"] {
        o.remove(k);
    }
    for (k, v) in [
        ("is_multinode", json!(true)),
        ("disagg", json!(true)),
        ("framework", json!("dynamo-trt")),
        ("prefill_tp", json!(4)),
        ("prefill_ep", json!(4)),
        ("prefill_dp_attention", json!("true")),
        ("prefill_num_workers", json!(2)),
        ("decode_tp", json!(8)),
        ("decode_ep", json!(8)),
        ("decode_dp_attention", json!("false")),
        ("decode_num_workers", json!(1)),
        ("num_prefill_gpu", json!(8)),
        ("num_decode_gpu", json!(8)),
    ] {
        o.insert(k.into(), v);
    }
    r
}

#[test]
fn multi_node_points_get_prefill_and_decode_columns() {
    let base = vec![multinode_row(256, 500.0), multinode_row(512, 800.0)];
    let new = vec![multinode_row(256, 520.0), multinode_row(512, 700.0)];
    let f = Fixture::new(&base, &new);
    let o = run(&mut f.compare());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(
        md.contains("### dsr1 fp8 gb200 dynamo-trt, 1k1k (spec: none), multi-node disaggregated"),
        "{md}"
    );
    // Both points share their topology: its columns are named once above
    // the table (issue #26 item 4), the rows keep state and Conc.
    assert!(
        md.contains("Every row: P TP 4 · P EP 4 · P DPA true · P workers 2 · D TP 8 · D EP 8 · D DPA false · D workers 1\n"),
        "{md}"
    );
    assert!(
        md.contains(&nb(
            "| **regressed** | 512 | 800.0 → 700.0 (**🔴~▼~-12.5~%**) |"
        )),
        "{md}"
    );
    let j = read_json(&f.path("out/compare.json"));
    assert_eq!(j["regressions"][0]["prefill_num_workers"], 2);
    assert_eq!(j["regressions"][0]["conc"], 512);
}

#[test]
fn saved_api_error_answer_is_reported() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    f.write("api-error.json", &json!({"error": "Unknown model"}));
    let o = run(cmd()
        .arg("--new")
        .arg(f.path("new/agg_bmk.json"))
        .arg("--baseline")
        .arg(f.path("api-error.json")));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the saved API response is an error: Unknown model"),
        "{}",
        stderr(&o)
    );
}

/// Issue #16 point 6: strings from result files reach the report as inert
/// markdown text: no mention, link, autolink, HTML, table break or heading.
#[test]
fn hostile_result_strings_are_escaped_in_both_layouts() {
    let hostile = |v: Value| {
        let mut v = v;
        v["hw"] = json!("h100 @octocat <img src=x onerror=alert(1)>");
        v["framework"] = json!("sglang [click](https://evil.example) | x\n# pwned");
        v["model"] = json!("org/Model www.evil.example `code`");
        v["infmax_model_prefix"] = json!("dsr1 @org/team");
        v
    };
    let base = vec![
        hostile(agg_row("x", 8, 4, 1000.0, 0.010, 0.200)),
        hostile(agg_row("x", 8, 8, 1800.0, 0.012, 0.250)),
    ];
    let new = vec![
        hostile(agg_row("x", 8, 4, 1040.0, 0.0098, 0.190)),
        hostile(agg_row("x", 8, 8, 1900.0, 0.0118, 0.240)),
    ];
    let f = Fixture::new(&base, &new);
    let mut eval = eval_row(8, 0.95, 0.006, 0.94);
    eval["task"] = json!("gsm8k | @octocat\n## heading");
    eval["hw"] = json!("H100 <script>");
    f.write("new/agg_eval_all.json", &json!([eval]));
    let o = run(f
        .compare()
        .arg("--new-evals")
        .arg(f.path("new/agg_eval_all.json")));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = stdout(&o);
    assert_snapshot!("hostile_markdown", md);
    let o = run(f.compare().arg("--metrics").arg("reference"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let reference = stdout(&o);
    assert_snapshot!("hostile_reference_markdown", reference);
    for text in [&md, &reference] {
        for bad in [
            "@octocat",
            "@org/team",
            "<img",
            "<script",
            "](https://",
            "https://evil",
            "www.evil",
            "\n# pwned",
            "\n## heading",
        ] {
            assert!(!text.contains(bad), "{bad:?} in\n{text}");
        }
        // Every table row still has its column count.
        for block in text.split("\n\n") {
            let rows: Vec<&str> = block.lines().filter(|l| l.starts_with('|')).collect();
            if let Some(first) = rows.first() {
                let cols = |l: &str| l.replace("\\|", "").matches('|').count();
                assert!(rows.iter().all(|r| cols(r) == cols(first)), "{block}");
            }
        }
    }
}

/// #27 item 1: a failure inside Actions is one `::error::` annotation on
/// stderr (the action discards stdout, the report) and one
/// `compare-results: error:` line; stdout stays empty.
#[test]
fn a_failure_in_actions_is_annotated_on_stderr_once() {
    let dir = test_kit::temp_dir();
    let out = run(cmd()
        .current_dir(dir.path())
        .env("GITHUB_ACTIONS", "true")
        .args(["--new", "missing.json", "--baseline", "missing-too.json"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    let annotations: Vec<&str> = err.lines().filter(|l| l.starts_with("::error")).collect();
    assert_eq!(annotations.len(), 1, "{err}");
    assert!(annotations[0].contains("missing.json"), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("compare-results: error: "))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
}

/// #38 item 4: a tolerance without a unit that would mean 100 % or more
/// (`tput=5` = 500 %), or a percentage above 100, is refused as a usage
/// error with the spelling that was meant; fractions below 1 still work.
#[test]
fn tolerances_without_a_unit_or_above_100_percent_are_refused() {
    let (base, new) = small_runs();
    let f = Fixture::new(&base, &new);
    let with = |t: &str| {
        run(cmd()
            .arg("--new")
            .arg(f.path("new/agg_bmk.json"))
            .arg("--baseline")
            .arg(f.path("base/agg_bmk.json"))
            .arg("--tolerance")
            .arg(t))
    };
    let o = with("tput=5");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "'tput=5': a bare number is a fraction, so 5 would mean 500 %; write tput=5% for 5 \
             percent (or tput=0.05 as a fraction)"
        ),
        "{err}"
    );
    let o = with("TTFT=150%");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("'TTFT=150%': 150% is above 100 %"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty());
    let o = with("tput=0.05,TTFT=100%");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("tput 5\u{a0}%"), "{}", stdout(&o));
}
