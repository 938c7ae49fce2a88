//! The comment body as a reader gets it (insta snapshots): no regression,
//! regressions, a reused run, an eval failure, the fork (read-only) job
//! summary, and the cap with its note. The compare inputs come from one
//! compare-results comparison of seed-like rows (its JSON `summary` and its
//! markdown section together, so they cannot disagree), success-rate's
//! `run_stats.json` as that tool writes it; [`check_counts`] parses a body
//! and checks that every count in it agrees.

mod fixtures;

use fixtures::*;
use serde_json::{Value, json};
use visualizer_comment::BODY_LIMIT;
use visualizer_comment::body::{self, BodyInput};

/// The counts a summary line states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Stated {
    regressed_points: u64,
    regressed_metrics: u64,
    improved: u64,
    unchanged: u64,
    inconclusive: u64,
}

/// The number before `word` in `s` (`"2 points regressed"`, `"points"`).
fn number_before(s: &str, word: &str) -> Option<u64> {
    let at = s.find(word)?;
    s[..at].trim_end().rsplit([' ', '(']).next()?.parse().ok()
}

/// `N point(s) regressed (M metric(s)) · K improved · J unchanged · I
/// inconclusive`, wherever it stands in `line`.
fn parse_line(line: &str) -> Option<Stated> {
    let regressed = if line.contains(" points regressed") {
        " points regressed"
    } else {
        " point regressed"
    };
    let metrics = if line.contains(" metrics)") {
        " metrics)"
    } else {
        " metric)"
    };
    Some(Stated {
        regressed_points: number_before(line, regressed)?,
        regressed_metrics: number_before(line, metrics)?,
        improved: number_before(line, " improved")?,
        unchanged: number_before(line, " unchanged")?,
        inconclusive: number_before(line, " inconclusive")?,
    })
}

/// The cells of a markdown table row.
fn cells(row: &str) -> Vec<&str> {
    row.trim()
        .trim_start_matches('|')
        .trim_end_matches('|')
        .split(" | ")
        .map(str::trim)
        .collect()
}

/// The rows (header and alignment left out) of the table that follows the
/// line `heading` in `text`.
fn table_after<'a>(text: &'a str, heading: &str) -> Vec<Vec<&'a str>> {
    let Some(at) = text.find(heading) else {
        return Vec::new();
    };
    text[at..]
        .lines()
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(cells)
        .collect()
}

/// "and N more" / "…and N more" after `prefix` in the line starting with it.
fn and_more(text: &str, line_start: &str) -> u64 {
    text.lines()
        .find(|l| l.starts_with(line_start))
        .and_then(|l| l.rsplit_once("and ").map(|(_, t)| t))
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Checks that every count in a rendered body agrees: the heading, the
/// report's verdict line, the table of configurations (summed), each
/// folded configuration's summary and its table by state, the top
/// regressions table and the head's list of regressed points (each with
/// its "and N more"), and any "N regression(s)" wording. Returns the
/// heading's counts.
fn check_counts(body: &str) -> Stated {
    // Any "N regression(s)" a body states must name one number.
    let mut regression_words: Vec<u64> = Vec::new();
    for (i, _) in body.match_indices(" regression") {
        if let Some(n) = body[..i]
            .rsplit([' ', '(', '*'])
            .next()
            .and_then(|w| w.parse().ok())
        {
            regression_words.push(n);
        }
    }
    regression_words.dedup();
    assert!(
        regression_words.len() <= 1,
        "the body states different numbers of regressions {regression_words:?}:\n{body}"
    );
    let heading = body
        .lines()
        .find(|l| l.starts_with("### "))
        .expect("a heading");
    let head = parse_line(heading)
        .unwrap_or_else(|| panic!("the heading states no summary line: {heading}"));
    let verdict = body
        .lines()
        .find(|l| l.starts_with("**Verdict: "))
        .expect("the report's verdict line");
    let section = parse_line(verdict)
        .unwrap_or_else(|| panic!("the verdict line states no summary line: {verdict}"));
    assert_eq!(head, section, "heading vs report:\n{heading}\n{verdict}");
    let matched: u64 = number_before(verdict, " matched point").expect(verdict);
    assert_eq!(
        matched,
        head.regressed_points + head.improved + head.unchanged + head.inconclusive,
        "the states add up to the matched points: {verdict}"
    );
    if let Some(n) = regression_words.first() {
        assert_eq!(*n, head.regressed_metrics, "{body}");
    }
    // The table of configurations: one line each, adding up to the heading.
    let overview = table_after(body, "### Configurations");
    assert!(!overview.is_empty(), "no table of configurations:\n{body}");
    let mut sum = Stated::default();
    let mut per_config: std::collections::BTreeMap<String, [u64; 5]> = Default::default();
    for row in &overview {
        let [points, reg, imp, unch, inc] = overview_counts(row[2]);
        assert_eq!(points, reg + imp + unch + inc, "{row:?}");
        sum.regressed_points += reg;
        sum.improved += imp;
        sum.unchanged += unch;
        sum.inconclusive += inc;
        per_config.insert(row[0].to_string(), [points, reg, imp, unch, inc]);
    }
    sum.regressed_metrics = head.regressed_metrics;
    assert_eq!(sum, head, "the configurations add up to the heading");
    // Each folded configuration: its summary agrees with its overview
    // line, and its table shows the points it says by state.
    for block in body.split("\n### ").skip(1) {
        let Some((title, rest)) = block.split_once('\n') else {
            continue;
        };
        let Some(line) = rest
            .split_once("<summary>")
            .and_then(|(_, r)| r.split_once("</summary>"))
            .map(|(s, _)| s)
        else {
            continue;
        };
        let n = number_before(
            line,
            if line.contains(" points:") {
                " points:"
            } else {
                " point:"
            },
        )
        .expect(line);
        let stated = [
            n,
            number_before(line, " regressed").expect(line),
            number_before(line, " improved").expect(line),
            number_before(line, " unchanged").expect(line),
            number_before(line, " inconclusive").expect(line),
        ];
        assert_eq!(
            per_config.get(title.trim()),
            Some(&stated),
            "{title}: its summary vs its line in the table of configurations"
        );
        let block = rest.split("</details>").next().unwrap_or_default();
        let every: Option<String> = block
            .lines()
            .find_map(|l| l.strip_prefix("Every row: "))
            .and_then(|l| l.split(" · ").find_map(|c| c.strip_prefix("state ")))
            .map(String::from);
        let lines: Vec<&str> = block.lines().filter(|l| l.starts_with('|')).collect();
        let (header, rows) = (lines[0], &lines[2..]);
        let hidden = block
            .lines()
            .find(|l| l.contains(" unchanged point"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|w| w.parse::<u64>().ok())
            .unwrap_or(0);
        assert_eq!(
            rows.len() as u64 + hidden,
            n,
            "table rows of {line}:\n{block}"
        );
        assert!(
            header.starts_with("| state |") != every.is_some(),
            "a state column or one state for every row: {block}"
        );
        let table: Vec<String> = rows
            .iter()
            .map(|r| every.clone().unwrap_or_else(|| cells(r)[0].to_string()))
            .collect();
        let count = |s: &str| table.iter().filter(|r| r.contains(s)).count() as u64;
        assert_eq!(count("regressed"), stated[1], "{block}");
        assert_eq!(count("improved"), stated[2], "{block}");
        assert_eq!(count("unchanged") + hidden, stated[3], "{block}");
        assert_eq!(count("inconclusive"), stated[4], "{block}");
    }
    // The top regressions: its rows and "…and N more" are the regressed points.
    let top = table_after(body, "### Top regressions");
    let more = and_more(body, "…and ");
    assert_eq!(
        top.len() as u64 + more,
        head.regressed_points,
        "top regressions"
    );
    // The head's list: the points shown plus "and N more".
    let listed = body
        .lines()
        .find(|l| l.starts_with("**Regressed:** "))
        .map_or(0, |l| {
            l.split("; ").filter(|i| !i.starts_with("and ")).count() as u64
                + and_more(body, "**Regressed:** ")
        });
    assert_eq!(
        listed, head.regressed_points,
        "regressed points listed in the head"
    );
    head
}

fn compare(verdict: &str, regressions: Value, evals: Value) -> Value {
    // Hand-made summaries for the edge cases (hostile strings, huge
    // frames); the snapshots take theirs from [`compared`].
    let regressed = regressions.as_array().map_or(0, Vec::len) as u64;
    let top: Vec<Value> = regressions
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|r| {
            json!({"group": r["group"], "point": r["point"], "metric": r["metric"],
                   "change": r["change"], "also": [], "other_hardware": false})
        })
        .collect();
    json!({
        "schema_version": 1,
        "verdict": verdict,
        "summary": {
            "verdict": verdict,
            "baseline": {"label": BASELINE, "source": "agg", "sha": null, "run_url": null,
                         "date": null, "file": "base.json"},
            "line": format!("{regressed} points regressed ({regressed} metrics) · 0 improved · {} unchanged · 0 inconclusive", 7 - regressed.min(7)),
            "counts": {"new_rows": 7, "matched": 7, "regressed_points": regressed,
                       "regressed_metrics": regressed, "improved": 0,
                       "unchanged": 7 - regressed.min(7), "inconclusive": 0, "other_hardware": 0,
                       "no_baseline": 0, "not_rerun": 0,
                       "evals": evals.as_array().map_or(0, Vec::len), "evals_failed": 0},
            "regressions": regressions,
            "top_regressions": top,
            "impacts": [],
            "evals": evals,
        }
    })
}

/// The first `n` visible lines (the hidden marker line left out).
fn first_lines(body: &str, n: usize) -> Vec<&str> {
    body.lines()
        .filter(|l| !l.starts_with("<!--") && !l.trim().is_empty())
        .take(n)
        .collect()
}

/// The counts cell of the table of configurations, `7: 3 · 2 · 2 · 0`:
/// points, regressed, improved, unchanged, inconclusive.
fn overview_counts(cell: &str) -> [u64; 5] {
    let number = |s: &str| -> u64 {
        s.parse()
            .unwrap_or_else(|_| panic!("not a counts cell: {cell:?}"))
    };
    let (points, states) = cell
        .split_once(": ")
        .unwrap_or_else(|| panic!("not a counts cell: {cell:?}"));
    let states: Vec<&str> = states.split(" · ").collect();
    assert_eq!(states.len(), 4, "{cell:?}");
    let mut out = [number(points), 0, 0, 0, 0];
    for (o, s) in out[1..].iter_mut().zip(states) {
        *o = number(s);
    }
    out
}

#[test]
fn no_regression_body() {
    let (c, section) = seed_improved_with(json!([seed_eval(64, 0.9682), seed_eval(128, 0.9651)]));
    let b = body::render(&input(Some(c), &[&section]), NOTICE).expect("body");
    assert!(!b.truncated);
    let head = first_lines(&b.text, 2);
    assert_eq!(
        head[0],
        "### ✅ 0 points regressed (0 metrics) · 7 improved · 0 unchanged · 0 inconclusive · 0 not re-run · 0 no baseline · 0 evals failed vs main @ 2026-11-30",
        "improvements are in the heading"
    );
    assert_eq!(head[1], "**Evals:** 2 of 2 at or above threshold");
    check_counts(&b.text);
    test_kit::assert_snapshot!("no_regression", stable(&b.text));
}

#[test]
fn regression_body_lists_the_regressions_first() {
    let (c, section) = two_points_regressed();
    let b = body::render(&input(Some(c), &[&section]), NOTICE).expect("body");
    let head = first_lines(&b.text, 2);
    assert_eq!(
        head[0],
        "### ❌ 2 points regressed (4 metrics) · 0 improved · 5 unchanged · 0 inconclusive · 0 not re-run · 0 no baseline · no evals vs main @ 2026-11-30"
    );
    // One item per regressed point, its largest change first.
    assert_eq!(
        head[1],
        "**Regressed:** qwen3.5 fp4 b200 sglang, 8k1k (spec: none) — TP2 EP1, conc 16: tput/GPU (tok/s) 🔴~▼~-12.0~% (5621.2 → 4946.7), also output tput 🔴~▼~-12.0~%; TP2 EP1, conc 32: tput/GPU (tok/s) 🔴~▼~-12.0~% (7784.4 → 6850.3), also output tput 🔴~▼~-12.0~%"
            .replace('~', "\u{a0}")
    );
    assert_eq!(
        head[1].matches("qwen3.5").count(),
        1,
        "the configuration is named once"
    );
    let counts = check_counts(&b.text);
    assert_eq!((counts.regressed_points, counts.regressed_metrics), (2, 4));
    test_kit::assert_snapshot!("regression", stable(&b.text));
}

/// One point regressed, two improved, the rest unchanged.
fn compared_mixed() -> (Value, String) {
    let (base, new) = seed_runs(|tp, c| match (tp, c) {
        (2, 4) => 0.9,
        (2, 8) | (4, 4) => 1.2,
        _ => 1.01,
    });
    compared(&base, &new, json!([]))
}

/// Every count in a body agrees, whichever comparison (issue #26 item 1:
/// the heading said "4 regressions at 2 of 7" above a section saying "2
/// regressions"), and agrees with the JSON counts.
#[test]
fn every_count_in_a_body_agrees() {
    for (name, (c, section)) in [
        ("two points at -12 %", two_points_regressed()),
        ("seed", seed_improved()),
        ("mixed", compared_mixed()),
    ] {
        let b = body::render(&input(Some(c.clone()), &[&section]), NOTICE).expect("body");
        let head = check_counts(&b.text);
        let j = &c["summary"]["counts"];
        let n = |k: &str| j[k].as_u64().unwrap_or(u64::MAX);
        assert_eq!(
            head,
            Stated {
                regressed_points: n("regressed_points"),
                regressed_metrics: n("regressed_metrics"),
                improved: n("improved"),
                unchanged: n("unchanged"),
                inconclusive: n("inconclusive"),
            },
            "{name}: the body vs the JSON counts"
        );
    }
}

#[test]
fn reused_run_body_names_both_runs() {
    let (c, section) = seed_improved();
    let mut i = input(Some(c), &[&section]);
    i.reused_run_url = Some(REUSED.into());
    let b = body::render(&i, NOTICE).expect("body");
    assert!(b.text.contains(&format!(
        "Run: [run 32991847205]({RUN}) · benchmark results reused from [run 32880001234]({REUSED})"
    )));
    test_kit::assert_snapshot!("reused_run", stable(&b.text));
}

/// The eval failure as a sweep posts it (issue #37 item 5): compare-results
/// run on the seed sweep and a real `agg_eval_all.json` with one gsm8k
/// score below the corpus's 94 % threshold (`tests/data/eval-failure`),
/// then `visualizer-comment --dry-run` on its JSON and markdown. The
/// heading, the report's verdict and the JSON all say the evals failed.
#[test]
fn eval_failure_body_comes_from_a_real_run_of_both_binaries() {
    let seed = root().join("tests/conformance/fixtures/seed-compare");
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/eval-failure");
    let out = test_kit::temp_dir();
    let o = test_kit::tool_command("compare-results")
        .arg("--new")
        .arg(seed.join("new/agg_bmk.json"))
        .arg("--baseline")
        .arg(seed.join("baseline/agg_bmk.json"))
        .args(["--baseline-label", BASELINE])
        .arg("--new-evals")
        .arg(data.join("agg_eval_all.json"))
        .arg("--thresholds")
        .arg(thresholds_path())
        .arg("--json")
        .arg(out.path().join("compare.json"))
        .arg("--markdown")
        .arg(out.path().join("compare.md"))
        .output()
        .expect("run compare-results");
    assert_eq!(o.status.code(), Some(0), "{}", test_kit::stderr(&o));
    let j: Value =
        serde_json::from_slice(&std::fs::read(out.path().join("compare.json")).expect("json"))
            .expect("compare.json");
    assert_eq!(j["verdict"], "evals_failed");
    assert_eq!(j["summary"]["verdict"], "evals_failed");
    assert_eq!(j["summary"]["counts"]["evals_failed"], 1);
    let md = std::fs::read_to_string(out.path().join("compare.md")).expect("md");
    assert!(
        md.contains("**Verdict: ❌ 0 points regressed (0 metrics) · 7 improved · 0 unchanged · 0 inconclusive · 0 not re-run · 0 no baseline · 1 eval failed**"),
        "{md}"
    );
    let o = test_kit::tool_command("visualizer-comment")
        .args([
            "--dry-run",
            "--repo",
            "SemiAnalysisAI/InferenceX",
            "--pr-number",
            "2714",
        ])
        .args(["--run-id", "32991847205", "--run-url", RUN])
        .arg("--compare-json")
        .arg(out.path().join("compare.json"))
        .arg("--section")
        .arg(out.path().join("compare.md"))
        .output()
        .expect("run visualizer-comment");
    assert_eq!(o.status.code(), Some(0), "{}", test_kit::stderr(&o));
    let text = test_kit::stdout(&o);
    let head = first_lines(&text, 2);
    assert!(
        head[0].starts_with("### ❌ 0 points regressed (0 metrics) · 7 improved · 0 unchanged · 0 inconclusive · 0 not re-run · 0 no baseline · 1 eval failed"),
        "{head:?}"
    );
    assert_eq!(
        head[1],
        "**Evals below threshold:** qwen3.5 fp4 b200 sglang, 8k1k (spec: none), TP2 EP1, conc 128: gsm8k 88.10\u{a0}% < 94\u{a0}%"
    );
    let evals = table_after(&text, "### Evals");
    assert_eq!(evals.len(), 2, "both evals in the table:\n{text}");
    assert!(
        evals.iter().any(|r| r.iter().any(|c| c.starts_with("❌"))),
        "{evals:?}"
    );
    test_kit::assert_snapshot!("eval_failure", stable(&text));
}

#[test]
fn fork_read_only_summary_warns_then_carries_the_body() {
    let (c, section) = seed_improved();
    let i = input(Some(c), &[&section]);
    let s = body::render_read_only(
        &i,
        2714,
        "POST /repos/x/y/issues/2714/comments: HTTP 403: Resource not accessible by integration",
    )
    .expect("summary");
    let head = first_lines(&s, 2);
    assert_eq!(head[0], "> [!WARNING]");
    assert!(
        head[1].starts_with(
            "> Could not comment on PR #2714 (fork pull requests get a read-only token): "
        ),
        "{head:?}"
    );
    let full = body::render_full(&i).expect("full");
    let body_part = full.split_once('\n').map(|x| x.1).unwrap_or_default();
    assert!(s.ends_with(body_part), "the summary holds the whole body");
    test_kit::assert_snapshot!("fork_read_only", stable(&s));
}

#[test]
fn success_rate_null_and_hostile_strings() {
    let mut i = input(
        Some(compare(
            "regressions",
            json!([{"group": "@team <b>x</b>", "point": "TP1 EP1, conc 1", "metric": "tput/GPU (tok/s)",
                    "change": "-50.0% (2.0 → 1.0)", "tolerance": "5 %"}]),
            json!([]),
        )),
        &[],
    );
    i.run_stats = Some(json!({"b200": {"n_success": 0, "total": 0}}));
    let b = body::render(&i, NOTICE).expect("body");
    assert!(
        b.text.contains("No GPU jobs were counted for this run."),
        "{}",
        b.text
    );
    i.run_stats = Some(Value::Null);
    let b = body::render(&i, NOTICE).expect("body");
    assert!(
        !b.text.contains("@team"),
        "mentions are defused: {}",
        b.text
    );
    assert!(!b.text.contains("<b>"), "HTML is escaped: {}", b.text);
    assert!(
        b.text
            .contains("Not available: success-rate could not read this run's jobs.")
    );
}

#[test]
fn bad_inputs_are_errors_naming_the_input() {
    let mut i = input(Some(json!({"verdict": "no_regressions"})), &[]);
    let e = body::render(&i, NOTICE).expect_err("no summary");
    assert!(
        e.to_string().starts_with("compare JSON: no `summary`"),
        "{e}"
    );
    i.compare = None;
    i.run_stats = Some(json!({"b200": 3}));
    let e = body::render(&i, NOTICE).expect_err("bad stats");
    assert!(e.to_string().starts_with("run stats JSON: "), "{e}");
    i.run_stats = None;
    i.reused_run_url = Some("https://x/y) [click](https://evil".into());
    let e = body::render(&i, NOTICE).expect_err("bad url");
    assert!(e.to_string().starts_with("reused run URL: "), "{e}");
}

#[test]
fn long_bodies_keep_head_and_footer_and_say_they_were_cut() {
    let rows: String = (0..20_000)
        .map(|i| format!("| 2 | {i} | 1.0 → 2.0 |\n"))
        .collect();
    let big = format!(
        "<details><summary>big</summary>\n\n| TP | Conc | tput |\n|---|---|---|\n{rows}\n</details>\n\n```mermaid\nxychart-beta\n```"
    );
    let c = compare("no_regressions", json!([]), json!([]));
    let b = body::render(&input(Some(c), &[&big]), NOTICE).expect("body");
    assert!(b.truncated);
    let n = b.text.chars().count();
    assert!(n <= BODY_LIMIT, "{n} characters");
    assert!(n > BODY_LIMIT - 500, "the budget is used: {n}");
    assert!(first_lines(&b.text, 1)[0].starts_with("### ✅ 0 points regressed"));
    assert!(b.text.contains(&format!("> [!NOTE]\n> {NOTICE}")));
    assert!(b.text.contains("<sub>posted by sweepkit "));
    assert!(b.text.trim_end().ends_with("</sub>"));
    assert_eq!(
        b.text.matches("<details").count(),
        b.text.matches("</details>").count(),
        "details closed after the cut"
    );
    let full = body::render_full(&input(
        Some(compare("no_regressions", json!([]), json!([]))),
        &[&big],
    ))
    .expect("full");
    assert!(
        full.contains("| 2 | 19999 | 1.0 → 2.0 |"),
        "the job summary has it all"
    );
}

#[test]
fn a_frame_too_long_by_itself_is_still_capped() {
    let huge = "x".repeat(20_000);
    let regs: Vec<Value> = (0..5)
        .map(|i| {
            json!({"group": format!("{huge}{i}"), "point": "TP1 EP1, conc 1",
                   "metric": "tput/GPU (tok/s)", "change": "-50.0% (2.0 → 1.0)", "tolerance": "5 %"})
        })
        .collect();
    let b = body::render(
        &input(Some(compare("regressions", json!(regs), json!([]))), &[]),
        NOTICE,
    )
    .expect("body");
    assert!(b.truncated);
    assert!(b.text.chars().count() <= BODY_LIMIT);
    assert!(b.text.ends_with(NOTICE));
}

/// The success-rate part of a body: from its heading to the footer rule.
fn success_part(body: &str) -> &str {
    let start = body
        .find("#### Success rate per hardware")
        .expect("a success rate part");
    let end = body[start..]
        .find("\n---\n")
        .map_or(body.len(), |i| start + i);
    &body[start..end]
}

/// The seed run (issue #24 item 3): nine legs named by the group label
/// `b200`, so `run_stats.json` counts nothing; success-rate's
/// `run_stats_by_runner.json` places them on `b200-nscale` by their runner,
/// and one leg on an unknown machine is unplaced.
fn seed_by_runner(unplaced: Value) -> Value {
    json!({
        "schema_version": 1,
        "clusters": {
            "b200-dgxc": {"n_success": 0, "total": 0},
            "b200-nscale": {"n_success": 9, "total": 9}
        },
        "placed_by_runner": 9,
        "placed_by_name": 0,
        "unplaced": unplaced
    })
}

fn seed_input() -> BodyInput {
    let mut i = input(None, &[]);
    i.run_stats = Some(json!({
        "b200-dgxc": {"n_success": 0, "total": 0},
        "b200-nscale": {"n_success": 0, "total": 0}
    }));
    i
}

#[test]
fn placed_counts_are_shown_and_the_unplaced_jobs_named() {
    let mut i = seed_input();
    i.run_stats_by_runner = Some(seed_by_runner(json!({
        "n_success": 0, "total": 2, "jobs_left_out": 0, "jobs": [
            {"name": "eval / p3.000 | qwen3.5 fp4 b200 sgl TP2 c64 | eval-only",
             "run_attempt": 1, "runner_name": "b200-new-box_7", "conclusion": "failure"},
            {"name": "eval / p3.000 | qwen3.5 fp4 b200 sgl TP2 c64 | eval-only",
             "run_attempt": 2, "runner_name": null, "conclusion": "cancelled"}
        ]
    })));
    let b = body::render(&i, NOTICE).expect("body");
    let part = success_part(&b.text);
    assert!(
        part.contains("| b200-nscale | 9 / 9 | 100\u{a0}% |"),
        "{part}"
    );
    assert!(!part.contains("No GPU jobs were counted"), "{part}");
    test_kit::assert_snapshot!("success_rate_by_runner_unplaced", part);
}

#[test]
fn all_placed_means_no_unplaced_line() {
    let mut i = seed_input();
    i.run_stats_by_runner = Some(seed_by_runner(
        json!({"n_success": 0, "total": 0, "jobs": [], "jobs_left_out": 0}),
    ));
    let b = body::render(&i, NOTICE).expect("body");
    let part = success_part(&b.text);
    assert!(
        part.contains("| b200-nscale | 9 / 9 | 100\u{a0}% |"),
        "{part}"
    );
    assert!(!part.contains("could not be placed"), "{part}");
}

#[test]
fn only_unplaced_jobs_show_the_line_without_a_table() {
    let mut i = seed_input();
    let mut v = seed_by_runner(json!({"n_success": 1, "total": 1, "jobs_left_out": 0,
        "jobs": [{"name": "leg b200 c4", "run_attempt": 1, "runner_name": "x_1", "conclusion": "success"}]}));
    v["clusters"]["b200-nscale"] = json!({"n_success": 0, "total": 0});
    i.run_stats_by_runner = Some(v);
    let b = body::render(&i, NOTICE).expect("body");
    let part = success_part(&b.text);
    assert!(!part.contains("| hardware |"), "{part}");
    assert!(!part.contains("No GPU jobs were counted"), "{part}");
    assert!(
        part.contains("⚠️ 1 job could not be placed on a hardware cluster"),
        "{part}"
    );
    assert!(
        part.ends_with(": leg b200 c4.\n") || part.ends_with(": leg b200 c4."),
        "{part}"
    );
}

#[test]
fn a_cut_unplaced_list_says_the_names_are_a_floor() {
    let mut i = seed_input();
    let jobs: Vec<Value> = (0..7)
        .map(|c| json!({"name": format!("leg b200 c{c}")}))
        .collect();
    i.run_stats_by_runner = Some(seed_by_runner(
        json!({"n_success": 0, "total": 60, "jobs_left_out": 53, "jobs": jobs}),
    ));
    let b = body::render(&i, NOTICE).expect("body");
    let part = success_part(&b.text);
    assert!(part.contains("⚠️ 60 jobs could not be placed"), "{part}");
    assert!(part.contains("leg b200 c4; and 2 or more."), "{part}");
}

#[test]
fn null_placed_stats_fall_back_to_run_stats() {
    let mut i = input(None, &[]);
    i.run_stats = Some(json!({
        "b200-dgxc": {"n_success": 7, "total": 7},
        "h200-cw": {"n_success": 9, "total": 12}
    }));
    i.run_stats_by_runner = Some(Value::Null);
    let b = body::render(&i, NOTICE).expect("body");
    assert!(
        success_part(&b.text).contains("| h200-cw | 9 / 12 | 75\u{a0}% ⚠️ |"),
        "{}",
        b.text
    );
}

#[test]
fn placed_stats_of_another_layout_are_an_error_naming_the_input() {
    let mut i = seed_input();
    let mut v = seed_by_runner(json!({"total": 0}));
    v["schema_version"] = json!(2);
    i.run_stats_by_runner = Some(v);
    let e = body::render(&i, NOTICE).expect_err("schema 2");
    assert_eq!(
        e.to_string(),
        "run stats by runner JSON: schema_version 2 (this version reads 1)"
    );
    i.run_stats_by_runner = Some(json!({"b200": {"n_success": 1, "total": 1}}));
    let e = body::render(&i, NOTICE).expect_err("run_stats layout");
    assert!(
        e.to_string()
            .starts_with("run stats by runner JSON: expected "),
        "{e}"
    );
    let mut v = seed_by_runner(json!({"total": 0}));
    v["clusters"]["b200-nscale"] = json!(9);
    i.run_stats_by_runner = Some(v);
    let e = body::render(&i, NOTICE).expect_err("bad clusters");
    assert!(
        e.to_string()
            .starts_with("run stats by runner JSON `clusters`: expected {hardware"),
        "{e}"
    );
}

/// The seed with three runs a point on each side (issue #26 item 7): at
/// conc 4 two of three new runs are 12-13 % down and the third is not
/// (the mean drops 9.4 %: inconclusive); at conc 8 every run is 12 % down
/// (regressed); at conc 16 every run is 15 % up (improved); the rest move
/// within their noise.
fn repeats_compared() -> (Value, String) {
    let spread = [0.98, 1.0, 1.02];
    let mut base = Vec::new();
    let mut new = Vec::new();
    for &(tp, c, t, tpot, ttft) in &SEED {
        for (i, s) in spread.iter().enumerate() {
            base.push(seed_row(tp, c, t * s, tpot, ttft));
            let f = match (tp, c) {
                (2, 4) => [0.87, 0.88, 0.968][i],
                (2, 8) => 0.88 * s,
                (2, 16) => 1.15 * s,
                _ => [0.99, 1.0, 1.01][i],
            };
            new.push(seed_row(tp, c, t * f, tpot, ttft));
        }
    }
    compared(&base, &new, json!([]))
}

#[test]
fn repeats_body_counts_the_inconclusive_point() {
    let (c, section) = repeats_compared();
    let b = body::render(&input(Some(c), &[&section]), NOTICE).expect("body");
    assert_eq!(
        first_lines(&b.text, 1)[0],
        "### ❌ 1 point regressed (2 metrics) · 1 improved · 4 unchanged · 1 inconclusive · 0 not re-run · 0 no baseline · no evals vs main @ 2026-11-30"
    );
    assert!(b.text.contains("| inconclusive — re-run |"), "{}", b.text);
    assert!(!b.text.contains('±'), "ranges, not ±: {}", b.text);
    check_counts(&b.text);
    test_kit::assert_snapshot!("repeats", stable(&b.text));
}

#[test]
fn sweep_of_54_configurations_fits_and_names_every_configuration() {
    let (c, section) = sweep_compared();
    let summary = c.clone();
    let counts = c["summary"]["counts"].clone();
    assert_eq!(counts["matched"], 378);
    let mut i = input(Some(c), &[&section]);
    // The sweep's run: 126 legs on each of its three clusters.
    i.run_stats = Some(json!({
        "b200-dgxc": {"n_success": 126, "total": 126},
        "h200-nv": {"n_success": 126, "total": 126},
        "mi355x-amds": {"n_success": 126, "total": 126}
    }));
    // With its charts embedded from the charts branch (issue #37 item 1:
    // one budget for the whole body).
    let (manifest, base_url) = sweep_charts();
    i.charts.manifest = Some(manifest);
    i.charts.base_url = Some(base_url);
    i.head = Some((
        "4f2a9c0d1e3b5a7968f0c2d4e6a8b0c1d3e5f7a9".into(),
        Some("https://github.com/SemiAnalysisAI/InferenceX/commit/4f2a9c0d1e3b5a7968f0c2d4e6a8b0c1d3e5f7a9".into()),
    ));
    let b = body::render(&i, NOTICE).expect("body");
    let n = b.text.chars().count();
    eprintln!("54-configuration sweep with charts: comment body {n} characters");
    assert!(
        !b.truncated,
        "the report fits without a cut: {n} characters"
    );
    assert!(n <= BODY_LIMIT, "{n}");
    let overview = table_after(&b.text, "### Configurations");
    assert_eq!(overview.len(), 54, "one line per configuration");
    for model in SWEEP_MODELS {
        for hw in SWEEP_HW {
            for fw in SWEEP_FW {
                for (isl, osl) in SWEEP_SEQ {
                    let title = format!(
                        "{} fp8 {} {fw}, {} (spec: none)",
                        if model == "gptoss" {
                            "gptoss120b"
                        } else {
                            model
                        },
                        hw.split('-').next().unwrap_or(hw),
                        compare_results::key::seq_label(isl, osl)
                    );
                    assert!(
                        overview.iter().any(|r| r[0] == title),
                        "{title} is not named"
                    );
                }
            }
        }
    }
    let top = table_after(&b.text, "### Top regressions");
    assert_eq!(top.len(), 10, "at most ten rows");
    let flagged = overview.iter().filter(|r| r[1].contains("⚠️")).count();
    assert_eq!(flagged, 1, "the configuration whose baseline ran elsewhere");
    assert!(
        b.text.contains(
            "**Other hardware:** 7 points compared with a baseline that ran on other hardware"
        ),
        "{}",
        first_lines(&b.text, 4).join("\n")
    );
    // The report comes before the charts (issue #37 item 1).
    let charts_at = b.text.find("#### Charts").expect("the charts block");
    let report_at = b.text.find("## Benchmark comparison").expect("the report");
    assert!(report_at < charts_at, "the report precedes the charts");
    let report = &b.text[report_at..charts_at];
    // Whole tables are left out, named with their worst change; with those
    // shown, every configuration (each has a point beyond tolerance here).
    let left_out: Vec<&str> = report
        .lines()
        .find_map(|l| l.strip_prefix("- the tables of "))
        .or_else(|| {
            report
                .lines()
                .find_map(|l| l.strip_prefix("- the table of "))
        })
        .and_then(|l| l.split_once(": "))
        .map(|(_, names)| names.split("; ").collect())
        .unwrap_or_default();
    eprintln!("54-configuration sweep: tables left out: {left_out:#?}");
    assert_eq!(report.matches("\n<details").count() + left_out.len(), 54);
    // Kept by severity: every regressed configuration whose table is shown
    // has a worst regression (compare's largest change of any metric, from
    // its list of regressed points, largest first) at least as large as
    // every one left out.
    let magnitude = |change: &str| -> f64 {
        change
            .split('\u{a0}')
            .find(|t| t.starts_with(['+', '-']))
            .and_then(|n| n.parse::<f64>().ok())
            .map_or(0.0, f64::abs)
    };
    let mut worst_by_group: std::collections::BTreeMap<String, f64> = Default::default();
    for t in summary["summary"]["top_regressions"]
        .as_array()
        .expect("top")
    {
        let g = t["group"].as_str().unwrap_or_default().to_string();
        let m = magnitude(t["change"].as_str().unwrap_or_default());
        let e = worst_by_group.entry(g).or_insert(0.0);
        *e = e.max(m);
    }
    let dropped_names: Vec<&str> = left_out
        .iter()
        .map(|n| n.rsplit_once(" (worst ").map_or(*n, |(t, _)| t))
        .collect();
    let dropped_max = dropped_names
        .iter()
        .filter_map(|n| worst_by_group.get(*n))
        .fold(0.0_f64, |a, b| a.max(*b));
    let overview = table_after(&b.text, "### Configurations");
    for block in report.split("\n### ").skip(1) {
        let title = block.lines().next().unwrap_or_default().trim();
        let Some(row) = overview.iter().find(|r| r[0] == title) else {
            continue;
        };
        if let Some(w) = worst_by_group.get(title) {
            assert!(
                *w >= dropped_max,
                "{title} (worst {w}) kept over a dropped one at {dropped_max}"
            );
        }
        // Every regressed configuration is open (issue #37 item 2).
        let open = block.contains("<details open>");
        assert_eq!(
            open,
            overview_counts(row[2])[1] != 0,
            "{title}: open iff regressed"
        );
    }
    // No table is cut: each has its header, alignment and rows, and the
    // fold closes.
    assert_eq!(
        report.matches("<details").count(),
        report.matches("</details>").count()
    );
    let counted = check_counts(&b.text);
    assert_eq!(
        counted.regressed_points,
        counts["regressed_points"].as_u64().unwrap_or(0)
    );
    // The full report (job summary, compare-report artifact) has it all.
    let (base, new) = sweep_rows();
    let (_, _, full) = compared_full(&base, &new, json!([]));
    eprintln!(
        "54-configuration sweep: full report {} characters",
        full.chars().count()
    );
    assert_eq!(full.matches("<details").count(), 54, "every table");
    assert!(!full.contains("To fit a PR comment"));
    assert_eq!(
        table_after(&full, "### Regressed points").len() as u64,
        counted.regressed_points
    );
    test_kit::assert_snapshot!("sweep_54", stable(&b.text));
}

/// With the branch folder's URL (run-sweep.yml's `charts-base-url` from
/// `charts-branch`) and compare-results' `charts.json`, every configuration's
/// PNG is embedded by that URL, the regressed one unfolded; the artifact
/// link stays under them.
#[test]
fn charts_on_a_branch_are_embedded_by_url_one_per_configuration() {
    let mut i = input(None, &[]);
    i.charts.base_url = Some("https://github.com/acme/bench/raw/sweep-charts/32991847205-1".into());
    i.charts.report_url =
        Some("https://github.com/acme/bench/actions/runs/32991847205/artifacts/7".into());
    i.charts.manifest = Some(json!({"schema_version": 1, "charts": [
        {"configuration": "qwen3.5 fp4 b200 sglang 8k1k", "file": "01-qwen3-5-fp4-b200-sglang-8k1k.png", "regressed_points": 2},
        {"configuration": "dsr1 fp8 h200 vllm 1k1k", "file": "02-dsr1-fp8-h200-vllm-1k1k.png", "regressed_points": 0}
    ]}));
    let b = body::render(&i, NOTICE).expect("body");
    let base = "https://github.com/acme/bench/raw/sweep-charts/32991847205-1/";
    let images: Vec<&str> = b.text.lines().filter(|l| l.starts_with("![")).collect();
    assert_eq!(
        images,
        [
            format!("![qwen3.5 fp4 b200 sglang 8k1k]({base}01-qwen3-5-fp4-b200-sglang-8k1k.png)"),
            format!("![dsr1 fp8 h200 vllm 1k1k]({base}02-dsr1-fp8-h200-vllm-1k1k.png)"),
        ]
    );
    assert!(
        b.text
            .contains("<details open><summary>qwen3.5 fp4 b200 sglang 8k1k</summary>")
    );
    assert!(
        b.text
            .contains("<details><summary>dsr1 fp8 h200 vllm 1k1k</summary>")
    );
    assert!(b.text.contains("Charts and the full report: [compare-report](https://github.com/acme/bench/actions/runs/32991847205/artifacts/7)"));
    // Without the base URL (no branch, or a fork's pull request) only the link.
    i.charts.base_url = None;
    let b = body::render(&i, NOTICE).expect("body");
    assert!(!b.text.contains("!["), "{}", b.text);
    assert!(b.text.contains("[compare-report]("));
}

/// With main's history as the baseline, charts.json names each
/// configuration's trend too: it follows its chart in the same fold, by the
/// same base URL; a trend file name that could leave the folder is refused.
#[test]
fn a_trend_follows_its_chart_in_the_fold() {
    let mut i = input(None, &[]);
    i.charts.base_url = Some("https://github.com/acme/bench/raw/sweep-charts/7-1".into());
    i.charts.manifest = Some(json!({"schema_version": 1, "charts": [
        {"configuration": "qwen3.5 fp4 b200 sglang 8k1k", "file": "01-q.png",
         "trend": "01-q.trend.png", "regressed_points": 1},
        {"configuration": "dsr1 fp8 h200 vllm 1k1k", "file": "02-d.png", "regressed_points": 0}
    ]}));
    let b = body::render(&i, NOTICE).expect("body");
    let base = "https://github.com/acme/bench/raw/sweep-charts/7-1/";
    let images: Vec<&str> = b.text.lines().filter(|l| l.starts_with("![")).collect();
    assert_eq!(
        images,
        [
            format!("![qwen3.5 fp4 b200 sglang 8k1k]({base}01-q.png)"),
            format!(
                "![qwen3.5 fp4 b200 sglang 8k1k: trend over main's runs]({base}01-q.trend.png)"
            ),
            format!("![dsr1 fp8 h200 vllm 1k1k]({base}02-d.png)"),
        ]
    );
    let fold = &b.text[b.text.find("01-q.png").expect("chart")..];
    let trend_at = fold.find("01-q.trend.png").expect("trend");
    assert!(
        trend_at < fold.find("</details>").expect("fold end"),
        "{}",
        b.text
    );
    let block = &b.text[b.text.find("#### Charts").expect("the charts block")..];
    test_kit::assert_snapshot!("charts_with_trend", block);
    i.charts.manifest = Some(json!({"schema_version": 1, "charts": [
        {"configuration": "x", "file": "01-x.png", "trend": "../01-x.trend.png"}
    ]}));
    let err = body::render(&i, NOTICE).expect_err("refused");
    assert!(err.to_string().contains("../01-x.trend.png"), "{err}");
}
