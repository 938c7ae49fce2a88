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
use std::process::Command;
use std::time::Duration;

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
fn run(cmd: Command, what: &str) -> String {
    test_kit::browser::run_with_deadline(cmd, what, BROWSER_DEADLINE)
}

/// Chromium at the comment's width, with time for mermaid to load and
/// draw before the dump or the screenshot.
fn chromium_command(browser: &Path, profile: &Path, height: u32) -> Command {
    test_kit::browser::chromium_command(browser, profile, (PAGE_WIDTH, height), 20_000)
}

/// The text of `<pre id="report">` in a dumped page.
fn report_of(dom: &str) -> Value {
    let text = test_kit::browser::report_in_dom(dom);
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
    assert_eq!(
        configs["rows"][0][2], "7: 2 · 0 · 5 · 0",
        "points: regressed · improved · unchanged · inconclusive: {configs}"
    );
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

/// Where the screenshots go: `SWEEPKIT_SHOTS_DIR` when set (for a person
/// to look at), else Cargo's test temp directory.
fn shots_dir() -> PathBuf {
    let dir = std::env::var_os("SWEEPKIT_SHOTS_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")), PathBuf::from);
    std::fs::create_dir_all(&dir).expect("shots dir");
    dir
}

/// Renders `body` in `theme` (`light`, `dark`) with its folds `open` (a
/// reader opened them) or as authored (`folded`): the page's report, and a
/// screenshot `<name>-<theme>-<folds>.png` of the first `height` px.
fn render_page(
    browser: &Path,
    tmp: &Path,
    body: &str,
    name: &str,
    theme: &str,
    folds: &str,
    height: u32,
) -> Value {
    let stem = format!("{name}-{theme}-{folds}");
    let md_path = tmp.join(format!("{stem}.md"));
    std::fs::write(&md_path, body).expect("write body");
    // The body beside its screenshot, for a person comparing the two.
    std::fs::write(shots_dir().join(format!("{stem}.md")), body).expect("write body");
    let page = tmp.join(format!("{stem}.html"));
    let mut node = Command::new("node");
    node.arg(browser_dir().join("render.mjs"))
        .arg(&md_path)
        .arg(&page)
        .args([theme, folds]);
    run(node, "node render.mjs");
    eprintln!("rendering {stem}");
    let mut dump = chromium_command(browser, &tmp.join(format!("profile-{stem}")), 2000);
    dump.arg("--dump-dom")
        .arg(format!("file://{}", page.display()));
    let report = report_of(&run(dump, "chromium --dump-dom"));
    let png = shots_dir().join(format!("{stem}.png"));
    let mut shot = chromium_command(browser, &tmp.join(format!("profile-shot-{stem}")), height);
    shot.arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()));
    run(shot, "chromium --screenshot");
    assert!(png.is_file(), "no screenshot at {}", png.display());
    eprintln!("screenshot: {}", png.display());
    report
}

/// What issue #37 item 9 checks in every rendering: the report before the
/// charts, every table whole, every regressed configuration open (as the
/// body authors it) and the others folded, no number wrapped away from its
/// unit and no breaking space before a unit; the dark page dark.
fn check_page(r: &Value, what: &str, theme: &str, charts: bool) {
    let order = &r["order"];
    let report_at = order["report"].as_i64().unwrap_or(-1);
    assert!(report_at >= 0, "{what}: no report heading: {order}");
    if charts {
        let charts_at = order["charts"].as_i64().unwrap_or(-1);
        assert!(
            charts_at > report_at,
            "{what}: the charts come before the report: {order}"
        );
    }
    let shapes = r["shapes"].as_array().expect("shapes");
    assert!(!shapes.is_empty(), "{what}: no table");
    for s in shapes {
        assert!(
            s["width"].as_u64().unwrap_or(0) > 0,
            "{what}: a table without a header: {s}"
        );
        assert_eq!(s["ragged"], 0, "{what}: a cut table: {s}");
    }
    let mut configurations = 0;
    for d in r["authored"].as_array().expect("authored") {
        let summary = d["summary"].as_str().unwrap_or_default();
        let Some(n) = summary
            .split_once(" regressed ·")
            .and_then(|(head, _)| head.rsplit(' ').next())
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        configurations += 1;
        assert_eq!(
            d["open"].as_bool(),
            Some(n > 0),
            "{what}: {} ({summary}) open iff regressed",
            d["after"]
        );
    }
    assert!(configurations > 0, "{what}: no configuration fold");
    assert!(
        r["unitChecks"].as_u64().unwrap_or(0) > 0,
        "{what}: no unit checked"
    );
    assert_eq!(
        r["wrapped"],
        serde_json::json!([]),
        "{what}: a number wrapped from its unit"
    );
    assert_eq!(
        r["breaking"],
        serde_json::json!([]),
        "{what}: a breaking space before a unit"
    );
    // Every table fits the comment's column: none scrolls sideways, so no
    // column (best, worst, impact) is hidden.
    assert_eq!(
        r["scrolls"],
        serde_json::json!([]),
        "{what}: a table wider than the page"
    );
    if theme == "dark" {
        assert_eq!(r["background"], "rgb(13, 17, 23)", "{what}");
    }
}

/// Issue #37 item 9: the 54-configuration body with its charts, the
/// regression body and the eval-failure body, each folded (as posted) and
/// open (as read), in GitHub's light and dark themes, checked in the page
/// (`check_page`), with a screenshot of each.
#[test]
fn the_sweep_regression_and_eval_failure_comments_render_whole_in_light_and_dark() {
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
    let tmp = test_kit::temp_dir();
    // The sweep: its pictures drawn here (the ones the body keeps) and
    // linked from a local folder instead of the charts branch.
    let (c, section) = sweep_compared();
    let mut i = input(Some(c), &[&section]);
    let (manifest, base_url) = sweep_charts();
    i.charts.manifest = Some(manifest);
    i.charts.base_url = Some(base_url.clone());
    i.head = Some(("4f2a9c0d1e3b5a7968f0c2d4e6a8b0c1d3e5f7a9".into(), None));
    let sweep = body::render(&i, NOTICE).expect("body");
    assert!(sweep.text.chars().count() <= visualizer_comment::BODY_LIMIT);
    let pictures = tmp.path().join("pictures");
    std::fs::create_dir_all(&pictures).expect("mkdir");
    let (base, new) = sweep_rows();
    let (base, new) = (rows(&base, "base.json"), rows(&new, "new.json"));
    let cmp = compare_results::compare::compare(
        new.clone(),
        base.clone(),
        compare_results::metrics::MetricSet::Default.defs(),
        &compare_results::compare::Policy::default(),
    );
    for g in compare_results::chart::group_svgs(&cmp, &new, &base).expect("charts") {
        let file = format!("{}.png", g.stem);
        if sweep.text.contains(&file) {
            let bytes = compare_results::png::render(&g.svg).expect("png");
            std::fs::write(pictures.join(&file), bytes).expect("write png");
        }
    }
    // Relative to the page (markdown-it, like GitHub, links no file: URL).
    let sweep_text = sweep.text.replace(&format!("{base_url}/"), "pictures/");
    let (c, section) = two_points_regressed();
    let regression = body::render(&input(Some(c), &[&section]), NOTICE).expect("body");
    let (c, section) = seed_improved_with(serde_json::json!([
        seed_eval(64, 0.9682),
        seed_eval(128, 0.881)
    ]));
    let eval = body::render(&input(Some(c), &[&section]), NOTICE).expect("body");
    // The regression acknowledged by a writer (issue #37 item 7).
    let (c, section) = two_points_regressed();
    let mut i = input(Some(c), &[&section]);
    let head = "4f2a9c0d1e3b5a7968f0c2d4e6a8b0c1d3e5f7a9";
    i.head = Some((head.into(), None));
    i.acknowledgement = Some(visualizer_comment::ack::Acknowledgement {
        login: "alice".into(),
        reason: "expected: the new scheduler trades TTFT for <throughput>".into(),
        head: head.into(),
        url: Some("https://github.com/acme/bench/pull/42#issuecomment-1".into()),
        created_at: "2026-08-21T10:00:00Z".into(),
    });
    let acknowledged = body::render(&i, NOTICE).expect("body");
    for (name, text, charts, height) in [
        ("sweep54", sweep_text.as_str(), true, 4200),
        ("regression", regression.text.as_str(), false, 2600),
        ("eval-failure", eval.text.as_str(), false, 2600),
        ("acknowledged", acknowledged.text.as_str(), false, 1400),
    ] {
        for theme in ["light", "dark"] {
            for folds in ["folded", "open"] {
                let what = format!("{name} {theme} {folds}");
                let r = render_page(&browser, tmp.path(), text, name, theme, folds, height);
                if folds == "open" {
                    assert!(
                        r["error"].is_null(),
                        "{what}: mermaid failed: {}",
                        r["error"]
                    );
                }
                check_page(&r, &what, theme, charts);
                if name == "sweep54" && folds == "open" {
                    // The end of the body, from the charts on: a screenshot
                    // of the pictures and the notes naming what was left out.
                    let at = text
                        .find("To fit a PR comment")
                        .or_else(|| text.find("#### Charts"))
                        .expect("the charts");
                    let tail = &text[at..];
                    render_page(
                        &browser,
                        tmp.path(),
                        tail,
                        "sweep54-end",
                        theme,
                        folds,
                        3000,
                    );
                }
                if name == "sweep54" {
                    let images = r["images"].as_array().expect("images");
                    assert!(!images.is_empty(), "{what}: no picture");
                    if folds == "open" {
                        assert!(
                            images.iter().all(|im| im["loaded"] == true),
                            "{what}: a picture did not load: {images:?}"
                        );
                    }
                }
                if name == "acknowledged" {
                    let first = r["headings"][0].as_str().unwrap_or_default();
                    assert!(
                        first.starts_with("⚠️ 2 points regressed")
                            && first.ends_with(
                                "— acknowledged by @\u{2060}alice: expected: the new scheduler trades TTFT for <throughput>"
                            ),
                        "{what}: {first}"
                    );
                }
                if name == "eval-failure" {
                    let evals = r["tables"]
                        .as_array()
                        .expect("tables")
                        .iter()
                        .find(|t| t["after"] == "Evals")
                        .cloned()
                        .unwrap_or_default();
                    assert_eq!(evals["rows"].as_array().map(Vec::len), Some(2), "{what}");
                }
            }
        }
    }
}
