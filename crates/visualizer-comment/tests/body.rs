//! The comment body as a reader gets it (insta snapshots): no regression,
//! regressions, a reused run, an eval failure, the fork (read-only) job
//! summary, and the cap with its note. Inputs are compare-results' JSON
//! `summary` and success-rate's `run_stats.json` as those tools write them
//! (the seed-compare comparison's figures).

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

fn compare(verdict: &str, regressions: Value, evals: Value) -> Value {
    // Each test regression is at its own point.
    let regressed = regressions.as_array().map_or(0, Vec::len);
    json!({
        "schema_version": 1,
        "verdict": verdict,
        "summary": {
            "verdict": verdict,
            "baseline": "main @ 2026-11-30",
            "matched": 7,
            "regressed_points": regressed,
            "regressions": regressions,
            "unmatched_new": 0,
            "unmatched_baseline": 0,
            "evals": evals,
        }
    })
}

fn gsm8k(conc: i64, score: &str, threshold: Option<&str>, pass: Option<bool>) -> Value {
    json!({"configuration": "qwen3.5 fp4 b200 sglang 8k1k", "point": format!("TP2 EP1, conc {conc}"),
           "task": "gsm8k", "score": score, "threshold": threshold, "pass": pass})
}

const SECTION: &str = "## Benchmark comparison vs main @ 2026-11-30\n**Verdict: No regressions** (7 matched points)\n\n### qwen3.5 fp4 b200 sglang, 8k1k (spec: none)\n<details><summary>7 points, 0 regressed: table and charts</summary>\n\n| TP | Conc | tput/GPU (tok/s) |\n|---:|---:|---|\n| 2 | 128 | 13655.1 → 14443.1 (+5.8%) |\n\n</details>";

/// The first `n` visible lines (the hidden marker line left out).
fn first_lines(body: &str, n: usize) -> Vec<&str> {
    body.lines()
        .filter(|l| !l.starts_with("<!--") && !l.trim().is_empty())
        .take(n)
        .collect()
}

#[test]
fn no_regression_body() {
    let c = compare(
        "no_regressions",
        json!([]),
        json!([
            gsm8k(64, "96.82%", Some("90 %"), Some(true)),
            gsm8k(128, "96.51%", Some("90 %"), Some(true))
        ]),
    );
    let b = body::render(&input(Some(c), &[SECTION]), NOTICE).expect("body");
    assert!(!b.truncated);
    let head = first_lines(&b.text, 2);
    assert!(
        head[0].starts_with("### ✅ No regressions at 7 matched points"),
        "{head:?}"
    );
    assert_eq!(head[1], "**Evals:** 2 of 2 at or above threshold");
    test_kit::assert_snapshot!("no_regression", stable(&b.text));
}

#[test]
fn regression_body_lists_the_regressions_first() {
    let regs: Vec<Value> = (0..7)
        .map(|i| {
            json!({"group": "qwen3.5 fp4 b200 sglang, 8k1k (spec: none)",
                   "point": format!("TP2 EP1, conc {}", 4 << i),
                   "metric": "tput/GPU (tok/s)", "change": "-11.1% (1800.0 → 1600.0)",
                   "tolerance": "5 %"})
        })
        .collect();
    let b = body::render(
        &input(
            Some(compare("regressions", json!(regs), json!([]))),
            &[SECTION],
        ),
        NOTICE,
    )
    .expect("body");
    let head = first_lines(&b.text, 2);
    assert!(
        head[0].starts_with("### ❌ 7 regressions at 7 of 7 matched points"),
        "{head:?}"
    );
    assert!(head[1].starts_with("**Regressed:** qwen3.5 fp4 b200 sglang, 8k1k (spec: none) — TP2 EP1, conc 4: tput/GPU (tok/s) -11.1% (1800.0 → 1600.0) (tolerance 5 %); TP2 EP1, conc 8: "), "{head:?}");
    assert_eq!(
        head[1].matches("qwen3.5").count(),
        1,
        "the configuration is named once"
    );
    assert!(
        head[1].ends_with("; and 2 more (see the tables)"),
        "{head:?}"
    );
    test_kit::assert_snapshot!("regression", stable(&b.text));
}

#[test]
fn reused_run_body_names_both_runs() {
    let mut i = input(
        Some(compare("no_regressions", json!([]), json!([]))),
        &[SECTION],
    );
    i.reused_run_url = Some(REUSED.into());
    let b = body::render(&i, NOTICE).expect("body");
    assert!(b.text.contains(&format!(
        "Run: [run 32991847205]({RUN}) · benchmark results reused from [run 32880001234]({REUSED})"
    )));
    test_kit::assert_snapshot!("reused_run", stable(&b.text));
}

#[test]
fn eval_failure_body_puts_the_failure_in_the_head() {
    let c = compare(
        "no_regressions",
        json!([]),
        json!([
            gsm8k(64, "96.82%", Some("90 %"), Some(true)),
            gsm8k(128, "88.10%", Some("90 %"), Some(false))
        ]),
    );
    let b = body::render(&input(Some(c), &[SECTION]), NOTICE).expect("body");
    let head = first_lines(&b.text, 2);
    assert!(
        head[0].starts_with("### ❌ No regressions at 7 matched points, 1 eval below threshold"),
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
    let c = compare("no_regressions", json!([]), json!([]));
    let i = input(Some(c), &[SECTION]);
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
    assert!(first_lines(&b.text, 1)[0].starts_with("### ✅ No regressions"));
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
