//! The comment body as a reader gets it (insta snapshots): no regression,
//! regressions, a reused run, an eval failure, the fork (read-only) job
//! summary, and the cap with its note. The compare inputs come from one
//! compare-results comparison of seed-like rows (its JSON `summary` and its
//! markdown section together, so they cannot disagree), success-rate's
//! `run_stats.json` as that tool writes it; [`check_counts`] parses a body
//! and checks that every count in it agrees.

use compare_results::cli::report_json;
use compare_results::compare::{Policy, Row, compare as compare_rows};
use compare_results::key::{Origin, key_from_agg};
use compare_results::metrics::MetricSet;
use compare_results::report::{self, ReportInput};
use serde_json::{Value, json};
use visualizer_comment::BODY_LIMIT;
use visualizer_comment::body::{self, BodyInput};

const RUN: &str = "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/32991847205";
const REUSED: &str = "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/32880001234";
const NOTICE: &str = "This comment was cut to fit GitHub's 65,536-character limit; the full report is in the job summary.";

/// The version in the footer changes with every release; snapshots hold a
/// placeholder.
fn stable(s: &str) -> String {
    s.replace(
        &format!("sweepkit {}", env!("CARGO_PKG_VERSION")),
        "sweepkit [version]",
    )
}

fn input(compare: Option<Value>, sections: &[&str]) -> BodyInput {
    let mut i = BodyInput::new(
        "sweepkit:visualizer-comment",
        "https://inferencex.semianalysis.com",
        "32991847205",
    );
    i.run_url = Some(RUN.into());
    i.compare = compare;
    i.run_stats = Some(json!({
        "b200-dgxc": {"n_success": 7, "total": 7},
        "b200-nscale": {"n_success": 0, "total": 0},
        "h200-cw": {"n_success": 9, "total": 12}
    }));
    i.sections = sections.iter().map(|s| s.to_string()).collect();
    i
}

/// The seed's points (qwen3.5 fp4 b200 sglang 8k1k): (TP, conc, baseline
/// tput/GPU, TPOT s, TTFT s) as in the seed-compare fixture.
const SEED: [(i64, i64, f64, f64, f64); 7] = [
    (2, 4, 2491.3, 0.00666, 0.3764),
    (2, 8, 3949.4, 0.00824, 0.5842),
    (2, 16, 5621.2, 0.01182, 0.6470),
    (2, 32, 7784.4, 0.01693, 0.9734),
    (2, 64, 10511.9, 0.02534, 1.5369),
    (2, 128, 13655.1, 0.03925, 2.2815),
    (4, 4, 1385.5, 0.00588, 0.4396),
];

fn seed_row(tp: i64, conc: i64, tput: f64, tpot: f64, ttft: f64) -> Value {
    json!({
        "hw": "b200-nb_0", "conc": conc, "image": "lmsysorg/sglang:v0.5.19-cu130",
        "model": "nvidia/Qwen3.5-397B-A17B-NVFP4", "infmax_model_prefix": "qwen3.5",
        "framework": "sglang", "precision": "fp4", "spec_decoding": "none", "disagg": false,
        "recipe_fingerprint": "", "isl": 8192, "osl": 1024, "is_multinode": false, "tp": tp,
        "pp": 1, "dcp_size": 1, "pcp_size": 1, "ep": 1, "dp_attention": "false",
        "tput_per_gpu": tput, "output_tput_per_gpu": tput / 9.0,
        "input_tput_per_gpu": tput * 8.0 / 9.0, "mean_tpot": tpot, "mean_ttft": ttft
    })
}

/// The seed's baseline rows, and new rows with each point's tput/GPU
/// scaled by `factor(tp, conc)` (latencies unchanged).
fn seed_runs(factor: impl Fn(i64, i64) -> f64) -> (Vec<Value>, Vec<Value>) {
    let base = SEED
        .iter()
        .map(|&(tp, c, t, tpot, ttft)| seed_row(tp, c, t, tpot, ttft))
        .collect();
    let new = SEED
        .iter()
        .map(|&(tp, c, t, tpot, ttft)| seed_row(tp, c, t * factor(tp, c), tpot, ttft))
        .collect();
    (base, new)
}

fn rows(values: &[Value], path: &str) -> Vec<Row> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let metrics = v.as_object().expect("row").clone();
            let origin = Origin {
                path: path.into(),
                index: Some(i),
            };
            Row {
                key: key_from_agg(&metrics, &origin).expect("key"),
                metrics,
                origin,
            }
        })
        .collect()
}

const BASELINE: &str = "main @ 2026-11-30";

/// compare-results over these rows, as the compare job runs it: the JSON
/// report (with `evals` put into its summary when given) and the markdown
/// section, from one comparison.
fn compared(base: &[Value], new: &[Value], evals: Value) -> (Value, String) {
    let (base, new) = (rows(base, "base.json"), rows(new, "new.json"));
    let c = compare_rows(
        new.clone(),
        base,
        MetricSet::Default.defs(),
        &Policy::default(),
    );
    let md = report::markdown(&ReportInput {
        baseline_label: BASELINE,
        comparison: &c,
        new_rows: &new,
        evals: &[],
        charts: true,
    })
    .expect("markdown");
    let mut j = report_json(
        &c,
        "agg",
        Some("base.json"),
        &["base.json".into()],
        BASELINE,
        "new.json",
        &[],
    );
    j["summary"]["evals"] = evals;
    (j, md)
}

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

/// Checks that every count in a rendered body agrees: the heading, the
/// report's verdict line, the configurations' summaries (summed), the rows
/// of their tables by state, the regression list of the head, and any
/// "N regression(s)" wording. Returns the heading's counts.
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
    if let Some(n) = regression_words.first() {
        assert_eq!(*n, head.regressed_metrics, "{body}");
    }
    // The configurations' summaries and their tables.
    let mut sum = Stated::default();
    let mut points = 0;
    let mut blocks = body.split("<details").skip(1);
    for block in blocks.by_ref() {
        let Some(line) = block
            .split_once("<summary>")
            .and_then(|(_, r)| r.split_once("</summary>"))
            .map(|(s, _)| s)
        else {
            continue;
        };
        let Some(n) = number_before(
            line,
            if line.contains(" points:") {
                " points:"
            } else {
                " point:"
            },
        ) else {
            continue;
        };
        let group = Stated {
            regressed_points: number_before(line, " regressed").expect(line),
            regressed_metrics: 0,
            improved: number_before(line, " improved").expect(line),
            unchanged: number_before(line, " unchanged").expect(line),
            inconclusive: number_before(line, " inconclusive").expect(line),
        };
        assert_eq!(
            n,
            group.regressed_points + group.improved + group.unchanged + group.inconclusive,
            "a configuration's states add up to its points: {line}"
        );
        // Its table: one row per point, each in the state counted (its
        // `state` cell, or the state named above a table where every row
        // has the same).
        let every: Option<String> = block
            .lines()
            .find_map(|l| l.strip_prefix("Every row: "))
            .and_then(|l| l.split(" · ").find_map(|c| c.strip_prefix("state ")))
            .map(String::from);
        let lines: Vec<&str> = block.lines().filter(|l| l.starts_with('|')).collect();
        let (header, rows) = (lines[0], &lines[2..]);
        assert_eq!(rows.len() as u64, n, "table rows of {line}:\n{block}");
        assert!(
            header.starts_with("| state |") != every.is_some(),
            "a state column or one state for every row: {block}"
        );
        let table: Vec<String> = rows
            .iter()
            .map(|r| {
                every.clone().unwrap_or_else(|| {
                    r.trim_start_matches("| ")
                        .split(" | ")
                        .next()
                        .unwrap_or_default()
                        .to_string()
                })
            })
            .collect();
        let count = |s: &str| table.iter().filter(|r| r.contains(s)).count() as u64;
        assert_eq!(count("regressed"), group.regressed_points, "{block}");
        assert_eq!(count("improved"), group.improved, "{block}");
        assert_eq!(count("unchanged"), group.unchanged, "{block}");
        assert_eq!(count("inconclusive"), group.inconclusive, "{block}");
        sum.regressed_points += group.regressed_points;
        sum.improved += group.improved;
        sum.unchanged += group.unchanged;
        sum.inconclusive += group.inconclusive;
        points += n;
    }
    sum.regressed_metrics = head.regressed_metrics;
    assert!(points > 0, "no configuration summary in the body:\n{body}");
    assert_eq!(sum, head, "the configurations add up to the heading");
    // The head's regression list: the items shown plus "and N more".
    let listed = body
        .lines()
        .find(|l| l.starts_with("**Regressed:** "))
        .map_or(0, |l| {
            l.matches("(tolerance ").count() as u64
                + l.rsplit_once("; and ")
                    .and_then(|(_, t)| t.split_whitespace().next())
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0)
        });
    assert_eq!(
        listed, head.regressed_metrics,
        "regressions listed in the head"
    );
    head
}

fn gsm8k(conc: i64, score: &str, threshold: Option<&str>, pass: Option<bool>) -> Value {
    json!({"configuration": "qwen3.5 fp4 b200 sglang 8k1k", "point": format!("TP2 EP1, conc {conc}"),
           "task": "gsm8k", "score": score, "threshold": threshold, "pass": pass})
}

/// The seed: every point improved (tput/GPU up 6-23 %).
fn seed_improved() -> (Value, String) {
    let gains = [1.136, 1.122, 1.146, 1.124, 1.095, 1.058, 1.231];
    let (base, new) = seed_runs(|tp, c| {
        let i = SEED
            .iter()
            .position(|p| p.0 == tp && p.1 == c)
            .expect("point");
        gains[i]
    });
    compared(&base, &new, json!([]))
}

/// The issue's regression: two points at -12 % tput/GPU, the rest as before.
fn two_points_regressed() -> (Value, String) {
    let (base, new) = seed_runs(|tp, c| {
        if tp == 2 && (c == 16 || c == 32) {
            0.88
        } else {
            1.0
        }
    });
    compared(&base, &new, json!([]))
}

fn compare(verdict: &str, regressions: Value, evals: Value) -> Value {
    // Hand-made summaries for the edge cases (hostile strings, huge
    // frames); the snapshots take theirs from [`compared`].
    let regressed = regressions.as_array().map_or(0, Vec::len);
    json!({
        "schema_version": 1,
        "verdict": verdict,
        "summary": {
            "verdict": verdict,
            "baseline": BASELINE,
            "line": format!("{regressed} points regressed ({regressed} metrics) · 0 improved · {} unchanged · 0 inconclusive", 7 - regressed.min(7)),
            "counts": {"matched": 7, "regressed_points": regressed, "regressed_metrics": regressed,
                       "improved": 0, "unchanged": 7 - regressed.min(7), "inconclusive": 0},
            "matched": 7,
            "regressed_points": regressed,
            "regressions": regressions,
            "unmatched_new": 0,
            "unmatched_baseline": 0,
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

#[test]
fn no_regression_body() {
    let (mut c, section) = seed_improved();
    c["summary"]["evals"] = json!([
        gsm8k(64, "96.82%", Some("90 %"), Some(true)),
        gsm8k(128, "96.51%", Some("90 %"), Some(true))
    ]);
    let b = body::render(&input(Some(c), &[&section]), NOTICE).expect("body");
    assert!(!b.truncated);
    let head = first_lines(&b.text, 2);
    assert_eq!(
        head[0],
        "### ✅ 0 points regressed (0 metrics) · 7 improved · 0 unchanged · 0 inconclusive vs main @ 2026-11-30",
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
        "### ❌ 2 points regressed (4 metrics) · 0 improved · 5 unchanged · 0 inconclusive vs main @ 2026-11-30"
    );
    assert!(
        head[1].starts_with(
            "**Regressed:** qwen3.5 fp4 b200 sglang, 8k1k (spec: none) — TP2 EP1, conc 16: tput/GPU (tok/s) -12.0% (5621.2 → 4946.7) (tolerance 5 %); TP2 EP1, conc 16: output tput/GPU"
        ),
        "{head:?}"
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

#[test]
fn eval_failure_body_puts_the_failure_in_the_head() {
    let (mut c, section) = seed_improved();
    c["summary"]["evals"] = json!([
        gsm8k(64, "96.82%", Some("90 %"), Some(true)),
        gsm8k(128, "88.10%", Some("90 %"), Some(false))
    ]);
    let b = body::render(&input(Some(c), &[&section]), NOTICE).expect("body");
    let head = first_lines(&b.text, 2);
    assert!(
        head[0].starts_with("### ❌ 0 points regressed (0 metrics) · 7 improved · 0 unchanged · 0 inconclusive, 1 eval below threshold"),
        "{head:?}"
    );
    assert_eq!(
        head[1],
        "**Evals below threshold:** qwen3.5 fp4 b200 sglang 8k1k, TP2 EP1, conc 128: gsm8k 88.10% < 90 %"
    );
    test_kit::assert_snapshot!("eval_failure", stable(&b.text));
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
    assert!(part.contains("| b200-nscale | 9 / 9 | 100 % |"), "{part}");
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
    assert!(part.contains("| b200-nscale | 9 / 9 | 100 % |"), "{part}");
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
    i.run_stats_by_runner = Some(Value::Null);
    let b = body::render(&i, NOTICE).expect("body");
    assert!(
        success_part(&b.text).contains("| h200-cw | 9 / 12 | 75 % ⚠️ |"),
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
