//! The SVG chart as a browser renders it. The seed-compare comparison's SVG
//! is inlined in an HTML page that headless Chromium loads; a script in the
//! page parses nothing itself: it rasterises the SVG the browser parsed
//! (drawn onto a canvas, `getImageData`) and counts pixels of the series
//! colours in regions of the picture, and reports what the browser's DOM
//! holds (`polyline`, `circle`, `text` counts). `--dump-dom` prints the
//! page after the script ran; the test reads the report from it and
//! asserts on the rendering: not blank, the new frontier's colour inside the
//! interactivity plot area, baseline and new colours both there, and the
//! second topology's colour too.
//!
//! Without Chromium the test says so on stderr and returns, unless
//! `SWEEPKIT_REQUIRE_BROWSER=1` (set by scripts/check), which makes a
//! missing browser a failure. The browser is `SWEEPKIT_CHROMIUM`, else
//! `/usr/bin/chromium`, else `chromium` on PATH.

use std::path::{Path, PathBuf};
use std::time::Duration;

use compare_results::chart::{PAIRS, PANEL_H, PANEL_W};
use serde_json::Value;

/// How long Chromium may take to load and dump the page before the test
/// gives up (a hung browser must not hang the suite).
const BROWSER_DEADLINE: Duration = Duration::from_secs(120);

fn seed_fixture() -> Option<PathBuf> {
    let dir = match std::env::var_os("SWEEPKIT_SHARED") {
        Some(p) => PathBuf::from(p).join("conformance/fixtures/seed-compare"),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/conformance/fixtures/seed-compare"),
    };
    dir.join("expected.json").is_file().then_some(dir)
}

/// The page: the SVG inline, then a script that rasterises it and writes a
/// JSON report into `<pre id="report">`.
fn page(svg: &str, checks: &Value) -> String {
    format!(
        r#"<!doctype html>
<html><head><meta charset="utf-8"><title>compare-results chart</title></head>
<body style="margin:0">
<div id="chart">{svg}</div>
<pre id="report">pending</pre>
<script>
const checks = {checks};
const svg = document.querySelector('#chart svg');
const report = (v) => {{ document.getElementById('report').textContent = JSON.stringify(v); }};
if (!svg) {{
  report({{error: 'no svg element in the parsed page'}});
}} else {{
  const w = svg.width.baseVal.value, h = svg.height.baseVal.value;
  const dom = {{
    polylines: svg.querySelectorAll('polyline').length,
    circles: svg.querySelectorAll('circle').length,
    texts: Array.from(svg.querySelectorAll('text')).map(t => t.textContent.trim()),
  }};
  const img = new Image();
  img.onerror = () => report({{error: 'the browser could not render the SVG', dom}});
  img.onload = () => {{
    const canvas = document.createElement('canvas');
    canvas.width = w; canvas.height = h;
    const ctx = canvas.getContext('2d');
    // The pictures are transparent: drawn on a light page, as GitHub's.
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, w, h);
    ctx.drawImage(img, 0, 0);
    const px = ctx.getImageData(0, 0, w, h).data;
    const near = (i, rgb) => Math.abs(px[i] - rgb[0]) <= 3 && Math.abs(px[i + 1] - rgb[1]) <= 3
      && Math.abs(px[i + 2] - rgb[2]) <= 3 && px[i + 3] === 255;
    let nonWhite = 0;
    for (let i = 0; i < px.length; i += 4) {{
      if (px[i + 3] === 255 && (px[i] < 250 || px[i + 1] < 250 || px[i + 2] < 250)) nonWhite++;
    }}
    const counts = {{}};
    for (const c of checks) {{
      let n = 0;
      for (let y = c.y0; y < c.y1; y++) for (let x = c.x0; x < c.x1; x++) {{
        if (near((y * w + x) * 4, c.rgb)) n++;
      }}
      counts[c.name] = n;
    }}
    report({{width: w, height: h, pixels: w * h, non_white: nonWhite, counts, dom}});
  }};
  img.src = 'data:image/svg+xml;charset=utf-8,'
    + encodeURIComponent(new XMLSerializer().serializeToString(svg));
}}
</script>
</body></html>
"#
    )
}

/// Runs Chromium on `page` and returns the text of `<pre id="report">`.
fn render(browser: &Path, page: &Path, profile: &Path) -> String {
    // Virtual time lets the image load and the script finish before the dump.
    let mut cmd =
        test_kit::browser::chromium_command(browser, profile, (PANEL_W, 2 * PANEL_H + 200), 10_000);
    cmd.arg("--dump-dom")
        .arg(format!("file://{}", page.display()));
    let dom = test_kit::browser::run_with_deadline(cmd, "chromium --dump-dom", BROWSER_DEADLINE);
    test_kit::browser::report_in_dom(&dom)
}

#[test]
fn seed_compare_svg_renders_frontiers_in_chromium() {
    let Some(browser) = test_kit::chromium() else {
        assert!(
            !test_kit::require_browser(),
            "SWEEPKIT_REQUIRE_BROWSER=1 but no chromium found (set SWEEPKIT_CHROMIUM or install chromium)"
        );
        eprintln!("!!! SKIPPED: chromium not found; the SVG was not checked in a browser");
        return;
    };
    let Some(fixture) = seed_fixture() else {
        assert!(
            std::env::var_os("CI").is_none() && !test_kit::require_browser(),
            "seed-compare fixture not found (set SWEEPKIT_SHARED)"
        );
        eprintln!("!!! SKIPPED: seed-compare fixture not found");
        return;
    };
    let dir = test_kit::temp_dir();
    let svg_path = dir.path().join("compare.svg");
    let out = test_kit::command(env!("CARGO_BIN_EXE_compare-results"))
        .arg("--new")
        .arg(fixture.join("new/agg_bmk.json"))
        .arg("--baseline")
        .arg(fixture.join("baseline/agg_bmk.json"))
        .arg("--svg")
        .arg(&svg_path)
        .output()
        .expect("run compare-results");
    assert_eq!(out.status.code(), Some(0), "{}", test_kit::stderr(&out));
    let svg = std::fs::read_to_string(&svg_path).expect("svg written");

    // Regions of the first (interactivity) panel: its plot area below and
    // left of the legend (upper right), so legend swatches do not count.
    let (w, h) = (PANEL_W as f64, PANEL_H as f64);
    let plot = |name: &str, rgb: plotters::style::RGBColor| {
        serde_json::json!({
            "name": name, "rgb": [rgb.0, rgb.1, rgb.2],
            "x0": (w * 0.12) as u32, "x1": (w * 0.68) as u32,
            "y0": (h * 0.30) as u32, "y1": (h * 0.88) as u32,
        })
    };
    let whole_panel = |name: &str, rgb: plotters::style::RGBColor| {
        serde_json::json!({
            "name": name, "rgb": [rgb.0, rgb.1, rgb.2],
            "x0": (w * 0.12) as u32, "x1": PANEL_W, "y0": 0, "y1": PANEL_H,
        })
    };
    let (tp2_base, tp2_new) = PAIRS[0];
    let (tp4_base, tp4_new) = PAIRS[1];
    let checks = serde_json::json!([
        plot("tp2_new_frontier", tp2_new),
        plot("tp2_baseline_frontier", tp2_base),
        whole_panel("tp4_new", tp4_new),
        whole_panel("tp4_baseline", tp4_base),
    ]);
    let page_path = dir.path().join("page.html");
    std::fs::write(&page_path, page(&svg, &checks)).expect("write page");
    let report_text = render(&browser, &page_path, &dir.path().join("profile"));
    let report: Value = serde_json::from_str(&report_text)
        .unwrap_or_else(|e| panic!("report is not JSON ({e}): {report_text}"));
    eprintln!(
        "browser report: {}",
        report_text.chars().take(400).collect::<String>()
    );
    assert!(report.get("error").is_none(), "{report}");

    assert_eq!(report["width"], PANEL_W, "{report}");
    assert_eq!(
        report["height"],
        2 * PANEL_H,
        "one group: two panels, one above the other"
    );
    let pixels = report["pixels"].as_f64().expect("pixels");
    let non_white = report["non_white"].as_f64().expect("non_white");
    assert!(
        non_white > pixels * 0.02,
        "the rendering is (nearly) blank: {non_white} of {pixels} pixels drawn"
    );
    let count = |k: &str| report["counts"][k].as_u64().unwrap_or(0);
    // Measured on the seed: the points and labels alone give about 280
    // (new) and 180 (baseline) pixels in the region, the frontier lines
    // bring it to about 970 and 600. So these bounds fail when a frontier
    // is not drawn as a line; legend swatches lie outside the region.
    assert!(
        count("tp2_new_frontier") > 600,
        "new TP2 frontier line not drawn in the plot area: {report}"
    );
    assert!(
        count("tp2_baseline_frontier") > 400,
        "baseline TP2 frontier line not drawn in the plot area: {report}"
    );
    assert!(
        count("tp4_new") > 20 && count("tp4_baseline") > 20,
        "the second topology's points are missing: {report}"
    );

    let dom = &report["dom"];
    let texts: Vec<&str> = dom["texts"]
        .as_array()
        .expect("texts")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for label in [
        "new TP2 EP1 frontier",
        "baseline TP2 EP1 frontier",
        "new TP4 EP1 frontier",
        "baseline TP4 EP1 frontier",
    ] {
        assert!(texts.contains(&label), "legend lacks {label}: {texts:?}");
    }
    // 2 topologies x 2 sides, a frontier line each, plus the 4 concurrency
    // lines, plus the axes' and legend's lines.
    assert!(
        dom["polylines"].as_u64().unwrap_or(0) >= 8,
        "{}",
        dom["polylines"]
    );
}
