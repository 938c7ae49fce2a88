//! The pictures compare-results writes for a reader (issue #26 item 3):
//! one PNG per configuration (`--charts-dir`, rasterised with the bundled
//! font), 880 px wide, not blank, regressed points ringed in red; and the
//! text size rule, every label at least 14 px at 880 px width.

use std::path::Path;

use compare_results::chart::{MIN_TEXT_PX, PANEL_H, PANEL_W};
use resvg::tiny_skia::Pixmap;
use serde_json::{Value, json};

/// The width a PR comment shows an image at, the rule's reference.
const COMMENT_WIDTH: f64 = 880.0;

fn row(hw: &str, tp: i64, conc: i64, tput: f64, tpot: f64) -> Value {
    json!({
        "hw": hw, "conc": conc, "image": "img:1", "model": "org/Model-FP8",
        "infmax_model_prefix": "dsr1", "framework": "sglang", "precision": "fp8",
        "spec_decoding": "none", "disagg": false, "isl": 1024, "osl": 1024,
        "is_multinode": false, "tp": tp, "pp": 1, "dcp_size": 1, "pcp_size": 1, "ep": 1,
        "dp_attention": "false", "tput_per_gpu": tput, "output_tput_per_gpu": tput / 2.0,
        "input_tput_per_gpu": tput / 2.0, "mean_ttft": 0.2, "median_ttft": 0.2,
        "mean_tpot": tpot, "median_intvty": 1.0 / tpot
    })
}

/// Two configurations (H100 TP8, H200 TP4); on H200 conc 16 the new run
/// lost 30 % of its throughput, nothing else moved beyond tolerance.
fn runs() -> (Value, Value) {
    let base = json!([
        row("h100", 8, 4, 1000.0, 0.010),
        row("h100", 8, 8, 1800.0, 0.012),
        row("h100", 8, 16, 3000.0, 0.015),
        row("h200", 4, 8, 2500.0, 0.011),
        row("h200", 4, 16, 4000.0, 0.014),
        row("h200", 4, 32, 5200.0, 0.018),
    ]);
    let new = json!([
        row("h100", 8, 4, 1010.0, 0.010),
        row("h100", 8, 8, 1810.0, 0.012),
        row("h100", 8, 16, 3020.0, 0.015),
        row("h200", 4, 8, 2510.0, 0.011),
        row("h200", 4, 16, 2800.0, 0.014),
        row("h200", 4, 32, 5210.0, 0.018),
    ]);
    (base, new)
}

/// Runs compare-results on [`runs`] with `--svg` and `--charts-dir` in `dir`.
fn compare(dir: &Path) {
    let (base, new) = runs();
    std::fs::write(dir.join("base.json"), base.to_string()).expect("write");
    std::fs::write(dir.join("new.json"), new.to_string()).expect("write");
    let out = test_kit::command(Path::new(env!("CARGO_BIN_EXE_compare-results")))
        .arg("--new")
        .arg(dir.join("new.json"))
        .arg("--baseline")
        .arg(dir.join("base.json"))
        .arg("--svg")
        .arg(dir.join("compare.svg"))
        .arg("--charts-dir")
        .arg(dir.join("charts"))
        .output()
        .expect("run compare-results");
    assert_eq!(out.status.code(), Some(0), "{}", test_kit::stderr(&out));
}

/// Pixels of a picture that are drawn (not transparent) and that are the
/// red of the regressed-point ring.
fn pixels(p: &Pixmap) -> (usize, usize) {
    let mut drawn = 0;
    let mut red = 0;
    for px in p.pixels() {
        let px = px.demultiply();
        let (r, g, b, a) = (px.red(), px.green(), px.blue(), px.alpha());
        if a > 0 {
            drawn += 1;
        }
        if a > 200 && r > 180 && g < 50 && b < 50 {
            red += 1;
        }
    }
    (drawn, red)
}

/// Issue #37 item 8, dark mode: the background is transparent (GitHub's
/// page colour shows through, light or dark), and the ink is a grey that
/// reads on both.
#[test]
fn charts_have_a_transparent_background() {
    let dir = test_kit::temp_dir();
    compare(dir.path());
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("charts/charts.json")).expect("charts.json"),
    )
    .expect("charts.json parses");
    for c in manifest["charts"].as_array().expect("charts") {
        let file = c["file"].as_str().expect("file");
        let bytes = std::fs::read(dir.path().join("charts").join(file)).expect("png");
        let png = Pixmap::decode_png(&bytes).expect("a PNG");
        let total = png.pixels().len();
        let clear = png.pixels().iter().filter(|p| p.alpha() == 0).count();
        assert!(
            clear > total / 2,
            "{file}: {clear} of {total} pixels transparent"
        );
        let opaque_white = png
            .pixels()
            .iter()
            .filter(|p| {
                let p = p.demultiply();
                p.alpha() == 255 && (p.red(), p.green(), p.blue()) == (255, 255, 255)
            })
            .count();
        assert!(
            opaque_white < total / 100,
            "{file}: {opaque_white} opaque white pixels, a white block in dark mode"
        );
    }
}

#[test]
fn charts_dir_has_one_png_per_configuration_880_wide_not_blank_regressed_ringed() {
    let dir = test_kit::temp_dir();
    compare(dir.path());
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("charts/charts.json")).expect("charts.json"),
    )
    .expect("charts.json parses");
    let charts = manifest["charts"].as_array().expect("charts");
    assert_eq!(charts.len(), 2, "one per configuration: {manifest:#}");
    let mut seen = Vec::new();
    for c in charts {
        let file = c["file"].as_str().expect("file");
        assert!(
            file.ends_with(".png")
                && file
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)),
            "{file}"
        );
        let bytes = std::fs::read(dir.path().join("charts").join(file)).expect("png written");
        let png = Pixmap::decode_png(&bytes).expect("a PNG");
        assert_eq!(
            (png.width(), png.height()),
            (PANEL_W, 2 * PANEL_H),
            "{file}"
        );
        assert_eq!(PANEL_W, 880);
        let (drawn, red) = pixels(&png);
        let total = (png.width() * png.height()) as usize;
        assert!(
            drawn > total / 50,
            "{file} is (nearly) blank: {drawn} of {total} pixels drawn"
        );
        seen.push((
            c["configuration"]
                .as_str()
                .expect("configuration")
                .to_string(),
            c["regressed_points"].as_u64().expect("regressed_points"),
            red,
        ));
    }
    // H200 conc 16 regressed: ringed in both panels (and its legend
    // entry); H100 has no red at all.
    let h100 = seen
        .iter()
        .find(|s| s.0.contains("h100"))
        .expect("h100 chart");
    let h200 = seen
        .iter()
        .find(|s| s.0.contains("h200"))
        .expect("h200 chart");
    assert_eq!((h100.1, h200.1), (0, 1), "{seen:?}");
    assert_eq!(h100.2, 0, "red in a chart without regressions: {seen:?}");
    assert!(h200.2 > 150, "the regressed point is not ringed: {seen:?}");
}

#[test]
fn every_chart_text_is_at_least_14_px_at_comment_width() {
    let dir = test_kit::temp_dir();
    compare(dir.path());
    let text = std::fs::read_to_string(dir.path().join("compare.svg")).expect("svg written");
    let doc = roxmltree::Document::parse(&text).expect("svg parses");
    let width: f64 = doc
        .root_element()
        .attribute("width")
        .and_then(|w| w.trim_end_matches("px").parse().ok())
        .expect("svg width");
    // Shown at comment width, a picture wider than it shrinks, its text too.
    let scale = (COMMENT_WIDTH / width).min(1.0);
    let mut sizes: Vec<(f64, String)> = Vec::new();
    for t in doc.descendants().filter(|n| n.tag_name().name() == "text") {
        let size: f64 = t
            .attribute("font-size")
            .and_then(|s| s.trim_end_matches("px").parse().ok())
            .unwrap_or_else(|| panic!("text without a font-size: {:?}", t.text()));
        sizes.push((size * scale, t.text().unwrap_or("").trim().to_string()));
    }
    assert!(sizes.len() > 20, "too few texts to judge: {sizes:?}");
    let small: Vec<&(f64, String)> = sizes
        .iter()
        .filter(|(s, _)| *s < f64::from(MIN_TEXT_PX))
        .collect();
    assert!(
        small.is_empty(),
        "texts under {MIN_TEXT_PX} px at {COMMENT_WIDTH} px width (svg {width} px wide): {small:?}"
    );
}

/// Issue #37 item 8: where the regression is TTFT, the mermaid chart and
/// the PNG's concurrency panel draw TTFT (the metric that regressed), not
/// tput/GPU, which did not move; a configuration whose tput regressed
/// keeps tput/GPU.
#[test]
fn the_chart_of_a_ttft_regression_draws_ttft() {
    let dir = test_kit::temp_dir();
    let (base, mut new) = runs();
    for (i, ttft) in [(1, 0.35), (2, 0.40)] {
        new[i]["mean_ttft"] = json!(ttft);
    }
    std::fs::write(dir.path().join("base.json"), base.to_string()).expect("write");
    std::fs::write(dir.path().join("new.json"), new.to_string()).expect("write");
    let out = test_kit::command(Path::new(env!("CARGO_BIN_EXE_compare-results")))
        .arg("--new")
        .arg(dir.path().join("new.json"))
        .arg("--baseline")
        .arg(dir.path().join("base.json"))
        .arg("--markdown")
        .arg(dir.path().join("compare.md"))
        .arg("--svg")
        .arg(dir.path().join("compare.svg"))
        .output()
        .expect("run compare-results");
    assert_eq!(out.status.code(), Some(0), "{}", test_kit::stderr(&out));
    let md = std::fs::read_to_string(dir.path().join("compare.md")).expect("markdown");
    // H100 regressed on TTFT only, H200 on tput/GPU.
    assert!(md.contains("    title \"TP8 EP1: mean TTFT\"\n"), "{md}");
    assert!(md.contains("    y-axis \"mean TTFT (ms)\" "), "{md}");
    assert!(md.contains("    title \"TP4 EP1: tput/GPU\"\n"), "{md}");
    let svg = std::fs::read_to_string(dir.path().join("compare.svg")).expect("svg");
    assert!(svg.contains("h100 sglang, 1k1k (spec: none): mean TTFT vs concurrency"));
    assert!(svg.contains("h200 sglang, 1k1k (spec: none): tput/GPU vs concurrency"));
}

/// Rows without interactivity values get a one-panel picture (tput/GPU
/// over concurrency), not an empty half above it.
#[test]
fn a_configuration_without_interactivity_gets_one_panel() {
    let dir = test_kit::temp_dir();
    let (mut base, mut new) = runs();
    for rows in [&mut base, &mut new] {
        for r in rows.as_array_mut().expect("rows") {
            r.as_object_mut().expect("row").remove("median_intvty");
        }
    }
    std::fs::write(dir.path().join("base.json"), base.to_string()).expect("write");
    std::fs::write(dir.path().join("new.json"), new.to_string()).expect("write");
    let out = test_kit::command(Path::new(env!("CARGO_BIN_EXE_compare-results")))
        .arg("--new")
        .arg(dir.path().join("new.json"))
        .arg("--baseline")
        .arg(dir.path().join("base.json"))
        .arg("--charts-dir")
        .arg(dir.path().join("charts"))
        .output()
        .expect("run compare-results");
    assert_eq!(out.status.code(), Some(0), "{}", test_kit::stderr(&out));
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("charts/charts.json")).expect("charts.json"),
    )
    .expect("charts.json parses");
    for c in manifest["charts"].as_array().expect("charts") {
        let file = c["file"].as_str().expect("file");
        let bytes = std::fs::read(dir.path().join("charts").join(file)).expect("png");
        let png = Pixmap::decode_png(&bytes).expect("a PNG");
        assert_eq!((png.width(), png.height()), (PANEL_W, PANEL_H), "{file}");
    }
}
