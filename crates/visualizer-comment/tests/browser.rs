//! The PR comment as GitHub shows it. The regression comment (compare-results
//! over the seed with two points 12 % down: its JSON summary heads the body,
//! its comment-layout markdown is the section) is rendered to HTML by
//! markdown-it and its ```mermaid blocks drawn by mermaid (both from npm,
//! pinned in tests/browser/package-lock.json, installed by scripts/setup), in
//! a page headless Chromium loads (`tests/browser/render.mjs`). A script in
//! the page reports what the browser shows: the headings, the tables (with
//! the heading before each) and every chart's SVG. The test asserts on that,
//! and keeps a screenshot of the page (`comment.png` in Cargo's test temp
//! directory) for a person to look at.
//!
//! Without Chromium, Node.js or the npm packages the test says so on stderr
//! and returns, unless `SWEEPKIT_REQUIRE_BROWSER=1` (set by scripts/check),
//! which makes any of them missing a failure. The browser is
//! `SWEEPKIT_CHROMIUM`, else `/usr/bin/chromium`, else `chromium` on PATH.

mod fixtures;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fixtures::*;
use serde_json::Value;
use visualizer_comment::body;

/// How long Chromium may take to load the page, draw the charts and dump
/// it (or take the screenshot) before the test gives up: a hung browser
/// must not hang the suite.
const BROWSER_DEADLINE: Duration = Duration::from_secs(180);

/// The page's width: GitHub's comment column is about 880 px.
const PAGE_WIDTH: u32 = 912;

/// Skips (returns `None`) with a message, or fails under
/// `SWEEPKIT_REQUIRE_BROWSER=1`.
fn missing(what: &str) -> Option<PathBuf> {
    assert!(
        !test_kit::require_browser(),
        "SWEEPKIT_REQUIRE_BROWSER=1 but {what} (scripts/setup installs it)"
    );
    eprintln!("!!! SKIPPED: {what}; the comment was not rendered in a browser");
    None
}

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser")
}

/// Runs `cmd` to the end within [`BROWSER_DEADLINE`]; its stdout.
fn run(mut cmd: Command, what: &str) -> String {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {what}: {e}"));
    let started = Instant::now();
    loop {
        match child.try_wait().expect("wait") {
            Some(_) => break,
            None if started.elapsed() > BROWSER_DEADLINE => {
                let _ = child.kill();
                panic!("{what} did not finish within {BROWSER_DEADLINE:?}");
            }
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    let out = child.wait_with_output().expect("output");
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn chromium_command(browser: &Path, profile: &Path, height: u32) -> Command {
    let mut cmd = Command::new(browser);
    // The flags that keep headless Chromium off the (closed) network.
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        // Lets mermaid load and draw before the dump or the screenshot.
        "--virtual-time-budget=20000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--window-size={PAGE_WIDTH},{height}"));
    cmd
}

/// The text of `<pre id="report">` in a dumped page.
fn report_of(dom: &str) -> Value {
    let start = dom.find("<pre id=\"report\">").unwrap_or_else(|| {
        panic!(
            "no report in the dumped page: {}",
            &dom[..dom.len().min(500)]
        )
    }) + "<pre id=\"report\">".len();
    let end = dom[start..].find("</pre>").expect("report closed") + start;
    let text = dom[start..end]
        .replace("&nbsp;", "\u{a0}")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("report is not JSON ({e}): {text}"))
}

#[test]
fn the_regression_comment_renders_as_on_github() {
    let Some(browser) = test_kit::chromium().or_else(|| missing("chromium not found")) else {
        return;
    };
    let dir = browser_dir();
    if !dir
        .join("node_modules/mermaid/dist/mermaid.min.js")
        .is_file()
        || !dir.join("node_modules/markdown-it").is_dir()
    {
        missing("markdown-it and mermaid are not installed in tests/browser (npm ci)");
        return;
    }
    if Command::new("node").arg("--version").output().is_err() {
        missing("node not found");
        return;
    }
    let (c, section) = two_points_regressed();
    let b = body::render(&input(Some(c), &[&section]), NOTICE).expect("body");
    let tmp = test_kit::temp_dir();
    let md_path = tmp.path().join("comment.md");
    std::fs::write(&md_path, &b.text).expect("write body");
    let page = tmp.path().join("comment.html");
    let mut node = Command::new("node");
    node.arg(dir.join("render.mjs")).arg(&md_path).arg(&page);
    run(node, "node render.mjs");

    let mut dump = chromium_command(&browser, &tmp.path().join("profile-dump"), 2000);
    dump.arg("--dump-dom")
        .arg(format!("file://{}", page.display()));
    let report = report_of(&run(dump, "chromium --dump-dom"));
    eprintln!(
        "browser report: {}",
        report.to_string().chars().take(600).collect::<String>()
    );
    assert!(report["error"].is_null(), "mermaid failed: {report}");

    // The heading a reviewer reads first.
    let headings: Vec<&str> = report["headings"]
        .as_array()
        .expect("headings")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        headings.first().copied(),
        Some(
            "❌ 2 points regressed (4 metrics) · 0 improved · 5 unchanged · 0 inconclusive · 0 not re-run · 0 no baseline · no evals vs main @ 2026-11-30"
        ),
        "{headings:?}"
    );
    // The top regressions: a real table, the two points, largest first.
    let tables = report["tables"].as_array().expect("tables");
    let top = tables
        .iter()
        .find(|t| {
            t["after"]
                .as_str()
                .is_some_and(|h| h.starts_with("Top regressions"))
        })
        .unwrap_or_else(|| panic!("no table under a Top regressions heading: {tables:?}"));
    let rows = top["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2, "{top}");
    assert_eq!(top["header"][0], "Configuration", "{top}");
    assert_eq!(rows[0][1], "TP2 EP1, conc 16", "{top}");
    assert!(
        rows[0][3]
            .as_str()
            .is_some_and(|c| c.starts_with("🔴\u{a0}▼\u{a0}-12.0\u{a0}% (5621.2 → 4946.7)")),
        "{top}"
    );
    // One line per configuration, counts in cells.
    let configs = tables
        .iter()
        .find(|t| t["after"] == "Configurations")
        .unwrap_or_else(|| panic!("no table of configurations: {tables:?}"));
    assert_eq!(
        configs["rows"].as_array().map(Vec::len),
        Some(1),
        "{configs}"
    );
    assert_eq!(configs["rows"][0][3], "2", "regressed points: {configs}");
    // The chart drawn: an SVG with its lines and labels, no syntax error.
    let charts = report["charts"].as_array().expect("charts");
    assert!(!charts.is_empty(), "no mermaid chart on the page");
    for chart in charts {
        assert_eq!(chart["svg"], true, "a chart was not drawn: {chart}");
        assert_eq!(chart["syntax_error"], false, "{chart}");
        assert!(
            chart["paths"].as_u64().unwrap_or(0) >= 2,
            "no lines: {chart}"
        );
        assert!(chart["width"].as_u64().unwrap_or(0) > 200, "{chart}");
        let texts = chart["texts"].to_string();
        assert!(
            texts.contains("concurrency") || texts.contains("conc"),
            "{chart}"
        );
    }

    // A screenshot for a person (not asserted on: pixels vary with fonts).
    let png = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("comment.png");
    let mut shot = chromium_command(&browser, &tmp.path().join("profile-shot"), 2600);
    shot.arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()));
    run(shot, "chromium --screenshot");
    assert!(png.is_file(), "no screenshot at {}", png.display());
    eprintln!("screenshot: {}", png.display());
}
