//! Markdown rendering. The layout lives in minijinja templates under the
//! workspace's `templates/` (`compare.md.j2`, `compare-reference.md.j2`),
//! compiled into the binary; this module formats every cell (numbers,
//! signs, colour markup) and hands the templates plain strings.

use std::collections::BTreeMap;

use minijinja::Environment;
use serde_json::{Value, json};

use crate::CompareError;
use crate::chart;
use crate::compare::{
    Cell, Class, Comparison, Counts, HistoryCell, Machine, PointResult, PointState, Row, Stats,
};
use crate::evals::EvalRow;
use crate::key::{GroupKey, PointKey, Topology, metric_value};
use crate::metrics::MetricDef;
use sweep_model::compare_summary::{self as summary, BaselineRef, CompareSummary, Verdict};

const MAIN_TEMPLATE: &str = include_str!("../../../templates/compare.md.j2");
const REFERENCE_TEMPLATE: &str = include_str!("../../../templates/compare-reference.md.j2");

/// What the templates need besides the comparison.
pub struct ReportInput<'a> {
    pub baseline_label: &'a str,
    pub comparison: &'a Comparison,
    /// All new rows (the reference layout shows unmatched ones too).
    pub new_rows: &'a [Row],
    pub evals: &'a [EvalRow],
    pub charts: bool,
}

/// Between a number and its unit, and an arrow and its number: a table
/// cell never wraps there (issue #37 item 4). Every percentage is
/// `12.0 %` with this space.
pub const NBSP: char = '\u{a0}';

/// `5 %`, `2.5 %`.
fn pct_plain(fraction: f64) -> String {
    let s = format!("{:.2}", fraction * 100.0);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{NBSP}%")
}

fn num(v: Option<f64>, def: &MetricDef) -> String {
    v.map_or_else(
        || "N/A".into(),
        |v| format!("{:.*}", def.decimals, v * def.display_scale),
    )
}

/// The change of the means, judged for the metric: `🟢 ▲ +4.0 %` better,
/// `🔴 ▼ -11.1 %` worse (the arrow is the direction of the value, the mark
/// whether that is good for this metric: throughput up, latency down),
/// bold beyond tolerance (`**🔴 ▼ -11.1 %**`), `0.0 %` for no change at
/// this precision. Inside the noise of repeats the cell says so:
/// `▼ -4.0 %, inconclusive — re-run`.
fn change(def: &MetricDef, c: &Cell) -> Option<String> {
    let r = c.rel_delta?;
    let text = judged(def, r);
    Some(match c.class {
        Some(Class::Improvement) | Some(Class::Regression) => format!("**{text}**"),
        _ if c.within_noise => format!("{text}, {INCONCLUSIVE}"),
        _ => text,
    })
}

/// 🟢 better or 🔴 worse for the metric (colour emoji read the same on a
/// light and a dark page), nothing for no change.
fn mark(def: &MetricDef, r: f64) -> &'static str {
    match better(def, r) {
        Some(true) => "🟢",
        Some(false) => "🔴",
        None => "",
    }
}

/// A change with its mark and arrow: `🔴 ▼ -12.0 %`.
fn judged(def: &MetricDef, r: f64) -> String {
    match mark(def, r) {
        "" => arrow(r),
        m => format!("{m}{NBSP}{}", arrow(r)),
    }
}

/// The legend of the marks, one line above the tables.
pub const CHANGE_LEGEND: &str = "Changes: 🟢 better, 🔴 worse for that metric (higher throughput, lower latency); ▲ ▼ the direction of the value; **bold** beyond tolerance.";

/// What an inconclusive cell and point say.
pub const INCONCLUSIVE: &str = "inconclusive — re-run";

/// A side's value: the value of a single run, or the mean of several
/// followed by their range, `1000.0 [970.0–1030.0]` (just the mean when
/// every run gave the same value).
fn side_text(def: &MetricDef, mean: Option<f64>, s: Option<Stats>) -> String {
    let m = num(mean, def);
    match s {
        Some(s) if s.n > 1 => {
            let (lo, hi) = (num(Some(s.min), def), num(Some(s.max), def));
            if lo == hi {
                m
            } else {
                format!("{m} [{lo}–{hi}]")
            }
        }
        _ => m,
    }
}

fn cell_text(def: &MetricDef, c: &Cell) -> String {
    let base = side_text(def, c.baseline, c.baseline_stats);
    let new = side_text(def, c.new, c.new_stats);
    match change(def, c) {
        Some(ch) => format!("{base} → {new} ({ch})"),
        None => format!("{base} → {new}"),
    }
}

/// A point's state in its table row.
fn state_text(s: PointState) -> &'static str {
    match s {
        PointState::Regressed => "**regressed**",
        PointState::Inconclusive => INCONCLUSIVE,
        PointState::Improved => "improved",
        PointState::Unchanged => "unchanged",
    }
}

/// Header of the runs column, shown when any point has repeats.
const RUNS_HEADER: &str = "n (base/new)";

/// Header of the column that says how main's history judged a point.
const HISTORY_HEADER: &str = "vs main's history";

fn topo_columns(points: &[&PointResult]) -> (Vec<String>, Vec<&'static str>) {
    let multi = points
        .iter()
        .any(|p| matches!(p.key.topology, Topology::Multi { .. }));
    if multi {
        let h = [
            "P TP",
            "P EP",
            "P DPA",
            "P workers",
            "D TP",
            "D EP",
            "D DPA",
            "D workers",
            "Conc",
        ];
        let a = [
            "---:", "---:", ":---:", "---:", "---:", "---:", ":---:", "---:", "---:",
        ];
        return (h.iter().map(|s| s.to_string()).collect(), a.to_vec());
    }
    let mut h: Vec<String> = vec!["TP".into(), "EP".into(), "DPA".into()];
    let mut a = vec!["---:", "---:", ":---:"];
    for (name, idx) in [("PP", 0), ("DCP", 1), ("PCP", 2)] {
        if points
            .iter()
            .any(|p| extra_sizes(&p.key.topology)[idx] != 1)
        {
            h.push(name.into());
            a.push("---:");
        }
    }
    h.push("Conc".into());
    a.push("---:");
    (h, a)
}

fn extra_sizes(t: &Topology) -> [i64; 3] {
    match t {
        Topology::Single {
            pp,
            dcp_size,
            pcp_size,
            ..
        } => [*pp, *dcp_size, *pcp_size],
        Topology::Multi { .. } => [1, 1, 1],
    }
}

fn topo_cells(k: &PointKey, header: &[String]) -> Vec<String> {
    match &k.topology {
        Topology::Single {
            tp,
            ep,
            dp_attention,
            pp,
            dcp_size,
            pcp_size,
        } => {
            let mut v = vec![tp.to_string(), ep.to_string(), dp_attention.to_string()];
            for (name, val) in [("PP", pp), ("DCP", dcp_size), ("PCP", pcp_size)] {
                if header.iter().any(|h| h == name) {
                    v.push(val.to_string());
                }
            }
            v.push(k.conc.to_string());
            v
        }
        Topology::Multi {
            prefill, decode, ..
        } => vec![
            prefill.tp.to_string(),
            prefill.ep.to_string(),
            prefill.dp_attention.to_string(),
            prefill.num_workers.to_string(),
            decode.tp.to_string(),
            decode.ep.to_string(),
            decode.dp_attention.to_string(),
            decode.num_workers.to_string(),
            k.conc.to_string(),
        ],
    }
}

/// A configuration's counts in its folded summary: `7 points: 2
/// regressed · 3 improved · 2 unchanged · 0 inconclusive`.
fn group_line(c: &Counts) -> String {
    format!(
        "{} point{}: {} regressed · {} improved · {} unchanged · {} inconclusive",
        c.matched,
        if c.matched == 1 { "" } else { "s" },
        c.regressed_points,
        c.improved,
        c.unchanged,
        c.inconclusive
    )
}

/// Removes the columns (all of them: the caller passes only the
/// droppable ones, before the metrics) whose value is the same on every row
/// of a table of two or more rows, and returns them as `header value`
/// (`EP 1`, `DPA false`) to be named once above the table. `Conc` always
/// stays: it is what tells the rows apart.
fn drop_constant_columns(
    header: &mut Vec<String>,
    align: &mut Vec<&str>,
    rows: &mut [Vec<String>],
) -> Vec<String> {
    let mut constant = Vec::new();
    if rows.len() < 2 {
        return constant;
    }
    let mut i = 0;
    while i < header.len() {
        let first = &rows[0][i];
        if header[i] != "Conc" && rows.iter().all(|r| &r[i] == first) {
            constant.push(format!("{} {}", header[i], first));
            header.remove(i);
            align.remove(i);
            for r in rows.iter_mut() {
                r.remove(i);
            }
        } else {
            i += 1;
        }
    }
    constant
}

fn point_ref(k: &PointKey) -> Value {
    json!({"group": k.group.title(), "point": k.label()})
}

fn environment() -> Result<Environment<'static>, CompareError> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    let err = |e: minijinja::Error| CompareError::Render {
        what: "templates".into(),
        cause: format!("{e:#}"),
    };
    // `md`: data (hardware, framework, model, task, file names) as inert
    // markdown text — no mentions, links, HTML or line breaks.
    env.add_filter("md", |s: String| sweep_model::markdown::inline(&s));
    env.add_template("compare.md.j2", MAIN_TEMPLATE)
        .map_err(err)?;
    env.add_template("compare-reference.md.j2", REFERENCE_TEMPLATE)
        .map_err(err)?;
    Ok(env)
}

fn render(name: &str, ctx: Value) -> Result<String, CompareError> {
    let env = environment()?;
    let tmpl = env.get_template(name).map_err(|e| CompareError::Render {
        what: name.into(),
        cause: format!("{e:#}"),
    })?;
    let mut out = tmpl
        .render(minijinja::Value::from_serialize(&ctx))
        .map_err(|e| CompareError::Render {
            what: name.into(),
            cause: format!("{e:#}"),
        })?;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

fn common(input: &ReportInput<'_>) -> serde_json::Map<String, Value> {
    let c = input.comparison;
    let mut m = serde_json::Map::new();
    m.insert("baseline_label".into(), input.baseline_label.into());
    m.insert("new_rows".into(), (!input.new_rows.is_empty()).into());
    let counts = c.counts();
    m.insert("summary_line".into(), counts.line().into());
    let all = self::counts(c, input.evals, input.new_rows.len());
    let icon = match verdict(c, input.evals, input.new_rows.len()) {
        Verdict::Regressions | Verdict::EvalsFailed => "❌",
        Verdict::NoResults => "⚠️",
        Verdict::NoRegressions if counts.matched == 0 => "⚠️",
        Verdict::NoRegressions => "✅",
    };
    m.insert(
        "verdict_line".into(),
        format!("{icon} {}", all.line()).into(),
    );
    m.insert("matched".into(), counts.matched.into());
    m.insert("strict".into(), c.strict.into());
    let tol: Vec<String> = c
        .metrics
        .iter()
        .zip(&c.tolerances)
        .map(|(d, t)| format!("{} {}", d.short, pct_plain(*t)))
        .collect();
    let tol = tol.join(", ");
    let tol = if c.history.is_some() {
        format!("learnt from main's history, else {tol}")
    } else {
        tol
    };
    m.insert("tolerance_text".into(), tol.into());
    if let Some(h) = &c.history {
        m.insert("history_rule".into(), history_rule(h).into());
    }
    m
}

/// The rule of a comparison with main's history, in one paragraph.
fn history_rule(h: &sweep_series::boundary::Settings) -> String {
    format!(
        "Baseline: main's history. Each point is compared with its own series (same configuration and hardware): \
         its main runs since the series' last change point, the newest {window} at most; the baseline is their mean. \
         A value regresses when it is outside the range learnt from them (one-sided {conf} t prediction bound) \
         and at least {min} worse than the mean. A point with fewer than {runs} such runs is judged by the \
         tolerance instead, and its row says so.",
        window = h.window,
        conf = pct_plain(h.confidence),
        min = pct_plain(h.min_change),
        runs = h.min_samples,
    )
}

/// A cell's judgement by the history, short: `n=12, boundary -4.1 %, 63 %
/// of it used` or `tolerance: 3 of the 5 main runs a learnt boundary
/// needs`.
fn history_cell_text(h: &HistoryCell) -> String {
    match h.boundary() {
        Some(b) => {
            let used = h
                .percent_of_limit
                .filter(|p| p.is_finite())
                .map_or_else(String::new, |p| {
                    format!(", {:.0}{NBSP}% of it used", p.max(0.0))
                });
            format!("n={}, boundary {}{used}", b.n, signed_pct(b.limit_change))
        }
        None => format!(
            "tolerance: {}",
            h.fallback().map_or_else(String::new, |f| f.to_string())
        ),
    }
}

/// `-4.1 %`, `+3.0 %`.
fn signed_pct(fraction: f64) -> String {
    format!("{:+.1}{NBSP}%", fraction * 100.0)
}

/// Main runs a trend shows before this PR's value.
const TREND_RUNS: usize = 10;

/// The bars of a trend, lowest first.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// A compact trend: the newest [`TREND_RUNS`] values of the series, then
/// this PR's value, as bars on one scale (`▄▆▃▅▄▅▆▄▅▅ → ▁`); empty with no
/// values.
fn trend(values: &[f64], new: Option<f64>) -> String {
    let shown = &values[values.len().saturating_sub(TREND_RUNS)..];
    let all: Vec<f64> = shown
        .iter()
        .copied()
        .chain(new)
        .filter(|v| v.is_finite())
        .collect();
    if shown.is_empty() || all.is_empty() {
        return String::new();
    }
    let (lo, hi) = all
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    let bar = |v: f64| {
        let i = if hi > lo {
            (((v - lo) / (hi - lo)) * 7.0).round() as usize
        } else {
            3
        };
        BARS[i.min(7)]
    };
    let past: String = shown.iter().map(|v| bar(*v)).collect();
    match new.filter(|v| v.is_finite()) {
        Some(v) => format!("{past}{NBSP}→{NBSP}{}", bar(v)),
        None => past,
    }
}

/// The history column of a point's row: the metric that decided it (the
/// first regressed one, else the first the history judged) with its trend
/// and its judgement.
fn history_text(c: &Comparison, p: &PointResult) -> String {
    let judged = c
        .metrics
        .iter()
        .zip(&p.cells)
        .filter(|(_, cell)| cell.history.is_some());
    let pick = judged
        .clone()
        .find(|(_, cell)| cell.class == Some(Class::Regression))
        .or_else(|| judged.clone().next());
    match pick {
        Some((d, cell)) => match &cell.history {
            Some(h) => {
                let t = trend(&h.learnt.values, cell.new);
                let t = if t.is_empty() { t } else { format!("{t}, ") };
                format!("{}: {t}{}", d.short, history_cell_text(h))
            }
            None => "–".into(),
        },
        None => "–".into(),
    }
}

/// The regressed metrics, formatted: configuration, point, metric label,
/// change (`▼ -11.1 % (1800.0 → 1600.0)`) and tolerance.
fn regression_items(c: &Comparison) -> Vec<summary::Regression> {
    c.regressions
        .iter()
        .map(|r| {
            let (def, cell) = c
                .metrics
                .iter()
                .zip(
                    c.points
                        .iter()
                        .find(|p| p.key == r.key)
                        .map(|p| &p.cells[..])
                        .unwrap_or(&[]),
                )
                .find(|(d, _)| d.key == r.metric)
                .map_or((None, None), |(d, cell)| (Some(d), Some(cell)));
            let change = match (def, cell) {
                (Some(d), Some(cell)) => format!(
                    "{} ({} → {})",
                    judged(d, r.rel_delta),
                    num(cell.baseline, d),
                    num(cell.new, d)
                ),
                _ => arrow(r.rel_delta),
            };
            summary::Regression {
                group: r.key.group.title(),
                point: r.key.label(),
                metric: def.map_or(r.metric, |d| d.label).to_string(),
                change,
                tolerance: pct_plain(r.tolerance),
            }
        })
        .collect()
}

/// The one verdict of a comparison, its evals and the number of new rows:
/// regressed points first, then evals below threshold, then no results.
pub fn verdict(c: &Comparison, evals: &[EvalRow], new_rows: usize) -> Verdict {
    if c.has_regressions() {
        Verdict::Regressions
    } else if evals.iter().any(|e| e.pass() == Some(false)) {
        Verdict::EvalsFailed
    } else if new_rows == 0 {
        Verdict::NoResults
    } else {
        Verdict::NoRegressions
    }
}

/// Every count of the comparison, its evals and its new rows.
pub fn counts(c: &Comparison, evals: &[EvalRow], new_rows: usize) -> summary::Counts {
    let k = c.counts();
    let n = |v: usize| v as u64;
    summary::Counts {
        new_rows: n(new_rows),
        matched: n(k.matched),
        regressed_points: n(k.regressed_points),
        regressed_metrics: n(k.regressed_metrics),
        improved: n(k.improved),
        unchanged: n(k.unchanged),
        inconclusive: n(k.inconclusive),
        other_hardware: n(k.other_hardware),
        no_baseline: n(c.unmatched_new.len()),
        not_rerun: n(c.unmatched_baseline.len()),
        evals: n(evals.len()),
        evals_failed: n(evals.iter().filter(|e| e.pass() == Some(false)).count()),
    }
}

/// The median of the primary metric's relative changes over each
/// configuration's matched points, worst first (for the metric's
/// direction).
fn impacts(c: &Comparison) -> Vec<summary::Impact> {
    let Some(def) = c.metrics.first() else {
        return Vec::new();
    };
    let mut groups: BTreeMap<&GroupKey, Vec<f64>> = BTreeMap::new();
    for p in &c.points {
        if let Some(r) = p.cells.first().and_then(|cell| cell.rel_delta) {
            groups.entry(&p.key.group).or_default().push(r);
        }
    }
    let mut out: Vec<(f64, summary::Impact)> = groups
        .into_iter()
        .filter_map(|(g, mut rs)| {
            let m = median(&mut rs)?;
            Some((
                goodness(def, m),
                summary::Impact {
                    group: g.title(),
                    metric: def.label.to_string(),
                    median_change: judged(def, m),
                    better: better(def, m),
                },
            ))
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out.into_iter().map(|(_, i)| i).collect()
}

/// The median of finite values (`None` for none).
pub(crate) fn median(v: &mut [f64]) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The comparison in a few strings for a PR comment (the JSON report's
/// `summary`, read by visualizer-comment): verdict, counts, the formatted
/// regressions and the eval results against their thresholds. Data strings
/// are raw; the reader escapes them for markdown.
pub fn summary(
    c: &Comparison,
    evals: &[EvalRow],
    new_rows: usize,
    baseline: BaselineRef,
) -> CompareSummary {
    let eval_items = evals
        .iter()
        .map(|e| summary::Eval {
            configuration: e.key.group.title(),
            point: e.key.label(),
            task: e.task.clone(),
            score: pct2(e.em_strict.or(e.em_flexible)),
            threshold: e.threshold.as_ref().map(|t| pct_plain(t.value)),
            pass: e.pass(),
        })
        .collect();
    CompareSummary {
        verdict: verdict(c, evals, new_rows),
        baseline,
        line: counts(c, evals, new_rows).line(),
        counts: counts(c, evals, new_rows),
        regressions: regression_items(c),
        top_regressions: top(c).iter().map(Top::item).collect(),
        impacts: impacts(c),
        evals: eval_items,
    }
}

/// Which report `compare.md.j2` lays out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// For the PR comment: the top regressions (at most [`TOP_ROWS`]), one
    /// line per configuration, and folded tables of the configurations
    /// with a point beyond tolerance showing only those points; fitted
    /// into [`COMMENT_REPORT_BUDGET`].
    Comment,
    /// For the job summary and the `compare-report` artifact: every
    /// regressed point, every configuration's whole table.
    Full,
}

/// Rows of the comment's top regressions table before "and N more": the
/// worst changes a reviewer acts on, one screen.
pub const TOP_ROWS: usize = 10;

/// Characters the comment layout may take: GitHub caps a comment at
/// 65,536; the comment's own head, links, success-rate table and footer
/// take a few thousand, so the report gets the rest less a margin. Over
/// it, folded tables (and charts) are left out, least important first
/// (see [`markdown`]); the full report keeps them.
pub const COMMENT_REPORT_BUDGET: usize = 58_000;

/// The comment layout of the report (`compare.md.j2`, [`Layout::Comment`]).
pub fn markdown(input: &ReportInput<'_>) -> Result<String, CompareError> {
    render_report(input, Layout::Comment)
}

/// The full report ([`Layout::Full`]): the job summary and the artifact.
pub fn markdown_full(input: &ReportInput<'_>) -> Result<String, CompareError> {
    render_report(input, Layout::Full)
}

/// A relative change with its arrow, `▼ -12.0 %` (no-break spaces).
fn arrow(r: f64) -> String {
    let number = format!("{:+.1}", r * 100.0);
    match number.as_str() {
        "+0.0" | "-0.0" => format!("0.0{NBSP}%"),
        n if n.starts_with('-') => format!("▼{NBSP}{n}{NBSP}%"),
        n => format!("▲{NBSP}{n}{NBSP}%"),
    }
}

/// How good a change is: the relative change, turned round for a metric
/// where lower is better.
fn goodness(def: &MetricDef, r: f64) -> f64 {
    if def.higher_is_better { r } else { -r }
}

/// Whether a change is better (`Some(true)`) or worse for the metric;
/// `None` for no change at the report's precision.
fn better(def: &MetricDef, r: f64) -> Option<bool> {
    match format!("{:+.1}", r * 100.0).as_str() {
        "+0.0" | "-0.0" => None,
        _ => Some(goodness(def, r) > 0.0),
    }
}

/// A regressed point for the top regressions: its worst regressed metric
/// (the largest change), that change, and the other regressed metrics.
struct Top<'a> {
    point: &'a PointResult,
    def: &'a MetricDef,
    cell: &'a Cell,
    rel: f64,
    also: Vec<String>,
}

/// The regressed points, largest change first (ties in report order).
fn top(c: &Comparison) -> Vec<Top<'_>> {
    let mut out: Vec<Top<'_>> = c
        .points
        .iter()
        .filter(|p| p.state == PointState::Regressed)
        .filter_map(|p| {
            let mut regressed: Vec<(&MetricDef, &Cell, f64)> = c
                .metrics
                .iter()
                .zip(&p.cells)
                .filter(|(_, cell)| cell.class == Some(Class::Regression))
                .filter_map(|(d, cell)| cell.rel_delta.map(|r| (d, cell, r)))
                .collect();
            // A stable sort: changes equal at a millionth keep the metric order.
            regressed.sort_by_key(|r| std::cmp::Reverse(size(r.2)));
            let &(def, cell, rel) = regressed.first()?;
            let also = regressed[1..]
                .iter()
                .map(|(d, _, r)| format!("{} {}", d.short, judged(d, *r)))
                .collect();
            Some(Top {
                point: p,
                def,
                cell,
                rel,
                also,
            })
        })
        .collect();
    // A stable sort: equal changes stay in report order.
    out.sort_by_key(|t| std::cmp::Reverse(size(t.rel)));
    out
}

/// The size of a relative change in millionths: changes that differ only
/// by floating-point noise (tput and output tput both -12 %) are equal.
fn size(rel: f64) -> i64 {
    (rel.abs() * 1e6).round() as i64
}

impl Top<'_> {
    /// `▼ -12.0 % (5621.2 → 4946.7)`; judged by main's history, followed
    /// by `, outside the learnt range (n=12, boundary -4.1 %)`.
    fn change(&self) -> String {
        let learnt = self
            .cell
            .history
            .as_ref()
            .and_then(HistoryCell::boundary)
            .map_or_else(String::new, |b| {
                format!(
                    ", outside the learnt range (n={}, boundary {})",
                    b.n,
                    signed_pct(b.limit_change)
                )
            });
        format!(
            "{} ({} → {}){learnt}",
            judged(self.def, self.rel),
            num(self.cell.baseline, self.def),
            num(self.cell.new, self.def)
        )
    }

    /// The table row, escaped.
    fn row(&self) -> Vec<String> {
        let p = self.point;
        let flag = if p.other_hardware { " ⚠️" } else { "" };
        let (arrow_text, rest) = self.change().split_once(" (").map_or_else(
            || (self.change(), String::new()),
            |(a, r)| (a.to_string(), format!(" ({r}")),
        );
        vec![
            md(&p.key.group.title()),
            format!("{}{flag}", md(&p.key.label())),
            self.def.label.to_string(),
            format!("**{arrow_text}**{rest}"),
            if self.also.is_empty() {
                "–".into()
            } else {
                self.also.join(", ")
            },
        ]
    }

    /// The summary's item, raw (the comment escapes it).
    fn item(&self) -> summary::TopRegression {
        summary::TopRegression {
            group: self.point.key.group.title(),
            point: self.point.key.label(),
            metric: self.def.label.to_string(),
            change: self.change(),
            also: self.also.clone(),
            other_hardware: self.point.other_hardware,
        }
    }
}

/// Where one side ran: `b200-dgxc · lmsysorg/sglang:v0.5.19 · sha256:0123456789ab`
/// for each distinct machine, or that the rows do not say.
fn machines_text(ms: &[&Machine]) -> String {
    let mut parts: Vec<String> = ms
        .iter()
        .map(|m| {
            let mut v = vec![
                m.hw.clone()
                    .unwrap_or_else(|| "hardware not recorded".into()),
            ];
            v.extend(m.image.clone());
            // `sha256:` and 12 hex digits: enough to tell images apart.
            v.extend(
                m.digest
                    .as_ref()
                    .map(|d| d.chars().take(19).collect::<String>()),
            );
            v.join(" · ")
        })
        .collect();
    parts.dedup();
    if parts.is_empty() {
        "not recorded".into()
    } else {
        parts.join(" / ")
    }
}

/// A configuration's hardware, both sides: `both: X`, or `X → Y`, with
/// ⚠️ when a point's baseline ran on other hardware. Escaped for markdown.
fn ran_on(pts: &[&PointResult]) -> String {
    let side = |f: &dyn Fn(&PointResult) -> &Vec<Machine>| -> Vec<&Machine> {
        let mut v: Vec<&Machine> = pts.iter().flat_map(|p| f(p).iter()).collect();
        v.sort();
        v.dedup();
        v
    };
    let (b, n) = (
        machines_text(&side(&|p| &p.baseline_machines)),
        machines_text(&side(&|p| &p.new_machines)),
    );
    let other = pts.iter().filter(|p| p.other_hardware).count();
    let warn = match other {
        0 => String::new(),
        k => format!(
            " ⚠️ {} on other hardware",
            if k == 1 {
                "1 point's baseline".to_string()
            } else {
                format!("{k} points' baselines")
            }
        ),
    };
    if b == n {
        format!("{} (both){warn}", md(&n))
    } else {
        format!("{} → {}{warn}", md(&b), md(&n))
    }
}

/// The best and worst change of the first metric over these points, as
/// `▲ +13.6 %` (best by what is better for the metric).
fn best_worst(def: &MetricDef, idx: usize, pts: &[&PointResult]) -> (String, String) {
    let rs: Vec<f64> = pts.iter().filter_map(|p| p.cells[idx].rel_delta).collect();
    let key = |r: &&f64| goodness(def, **r);
    let best = rs.iter().max_by(|a, b| key(a).total_cmp(&key(b)));
    let worst = rs.iter().min_by(|a, b| key(a).total_cmp(&key(b)));
    let show = |r: Option<&f64>| r.map_or_else(|| "N/A".into(), |r| judged(def, *r));
    (show(best), show(worst))
}

/// What the comment layout leaves out to fit [`COMMENT_REPORT_BUDGET`]:
/// whole charts and whole tables of configurations (never part of one),
/// named in the note.
#[derive(Debug, Clone, Default)]
struct Trim<'a> {
    charts: Vec<&'a GroupKey>,
    tables: Vec<&'a GroupKey>,
}

type Worst<'a> = Option<(f64, &'a MetricDef, f64)>;

/// `w`, or the change `r` of `d` (goodness `g`) when that is worse.
fn lower<'a>(w: Worst<'a>, g: f64, d: &'a MetricDef, r: f64) -> Worst<'a> {
    match w {
        Some(w) if w.0 <= g => Some(w),
        _ => Some((g, d, r)),
    }
}

/// How bad a configuration is, lowest first: its worst change for the
/// metric's direction among its regressed cells (a regressed configuration
/// always before one without), else among all its cells; and that change,
/// `mean TPOT 🔴 ▲ +12.4 %`, which the note names.
fn severity(c: &Comparison, pts: &[&PointResult]) -> ((bool, i64), String) {
    let mut worst_regressed: Worst<'_> = None;
    let mut worst: Worst<'_> = None;
    for p in pts {
        for (d, cell) in c.metrics.iter().zip(&p.cells) {
            let Some(r) = cell.rel_delta else { continue };
            let g = goodness(d, r);
            worst = lower(worst, g, d, r);
            if cell.class == Some(Class::Regression) {
                worst_regressed = lower(worst_regressed, g, d, r);
            }
        }
    }
    let text = |w: Worst<'_>| {
        w.map_or_else(
            || "N/A".into(),
            |(_, d, r)| format!("{} {}", d.short, judged(d, r)),
        )
    };
    match worst_regressed {
        Some(w) => ((false, (w.0 * 1e6).round() as i64), text(Some(w))),
        None => (
            (true, (worst.map_or(0.0, |w| w.0) * 1e6).round() as i64),
            text(worst),
        ),
    }
}

/// The order in which the comment drops parts to fit: the charts of the
/// configurations without a regressed point, then their tables, then the
/// regressed configurations' charts, then their tables; within each, the
/// least severe configuration first (see [`severity`]), so the worst
/// regressions keep their tables and charts longest. Only configurations
/// the comment shows a table for (a point beyond tolerance) are listed.
fn drop_order(c: &Comparison) -> Vec<(bool, &GroupKey)> {
    let mut groups: BTreeMap<&GroupKey, Vec<&PointResult>> = BTreeMap::new();
    for p in &c.points {
        groups.entry(&p.key.group).or_default().push(p);
    }
    let mut ranked: Vec<((bool, i64), &GroupKey, bool)> = groups
        .iter()
        .filter(|(_, pts)| pts.iter().any(|p| p.state != PointState::Unchanged))
        .map(|(g, pts)| {
            (
                severity(c, pts).0,
                *g,
                pts.iter().any(|p| p.state == PointState::Regressed),
            )
        })
        .collect();
    // Least severe first: quiet before regressed, then the mildest worst
    // change first (a stable sort keeps report order for ties).
    ranked.sort_by_key(|(s, _, _)| (std::cmp::Reverse(s.0), std::cmp::Reverse(s.1)));
    let mut order = Vec::new();
    for loud in [false, true] {
        for table in [false, true] {
            order.extend(
                ranked
                    .iter()
                    .filter(|(_, _, r)| *r == loud)
                    .map(|(_, g, _)| (table, *g)),
            );
        }
    }
    order
}

fn render_report(input: &ReportInput<'_>, layout: Layout) -> Result<String, CompareError> {
    let out = render_report_trimmed(input, layout, &Trim::default())?;
    if layout == Layout::Full || out.chars().count() <= COMMENT_REPORT_BUDGET {
        return Ok(out);
    }
    let order = drop_order(input.comparison);
    let mut last = out;
    let mut trim = Trim::default();
    for (table, g) in order {
        if table {
            trim.tables.push(g);
        } else {
            trim.charts.push(g);
        }
        last = render_report_trimmed(input, layout, &trim)?;
        if last.chars().count() <= COMMENT_REPORT_BUDGET {
            break;
        }
    }
    Ok(last)
}

/// Each configuration's Mermaid charts (one per topology, never one line
/// across topologies) and the labels of its topologies with one point,
/// which get none.
type GroupCharts<'a> = BTreeMap<&'a GroupKey, (Vec<String>, Vec<String>)>;

fn render_report_trimmed(
    input: &ReportInput<'_>,
    layout: Layout,
    trim: &Trim<'_>,
) -> Result<String, CompareError> {
    let c = input.comparison;
    let full = layout == Layout::Full;
    let mut ctx = common(input);
    ctx.insert("full".into(), full.into());
    let repeats = c.has_repeats();
    insert_headline(&mut ctx, c, full, repeats);
    let charts = if input.charts {
        group_charts(c)
    } else {
        BTreeMap::new()
    };
    let first = c.metrics.first();
    ctx.insert("first_metric".into(), first.map_or("", |d| d.label).into());
    let sections = Sections {
        c,
        full,
        repeats,
        trim,
        charts: &charts,
    };
    let parts = sections.parts();
    ctx.insert("overview".into(), parts.overview.into());
    ctx.insert("groups".into(), parts.sections.into());
    ctx.insert("left_out".into(), parts.left_out.into());
    ctx.insert("charts_left_out".into(), parts.charts_left_out.into());
    insert_leftovers(&mut ctx, input);
    render("compare.md.j2", Value::Object(ctx))
}

/// The part above the configurations: the top changes (all of them in the
/// full report, the first [`TOP_ROWS`] in the comment), whether points ran
/// more than once, the other-hardware count and the legends.
fn insert_headline(
    ctx: &mut serde_json::Map<String, Value>,
    c: &Comparison,
    full: bool,
    repeats: bool,
) {
    let top: Vec<Vec<String>> = top(c).iter().map(Top::row).collect();
    let shown = if full {
        top.len()
    } else {
        top.len().min(TOP_ROWS)
    };
    ctx.insert("top".into(), top[..shown].to_vec().into());
    ctx.insert("top_more".into(), (top.len() - shown).into());
    ctx.insert("repeats".into(), repeats.into());
    let counts = c.counts();
    ctx.insert("other_hardware".into(), counts.other_hardware.into());
    ctx.insert("chart_legend".into(), chart::MERMAID_LEGEND.into());
    ctx.insert("change_legend".into(), CHANGE_LEGEND.into());
}

/// The charts of every configuration, see [`GroupCharts`].
fn group_charts(c: &Comparison) -> GroupCharts<'_> {
    chart::series(c)
        .iter()
        .map(|s| {
            let drawn = chart::mermaid(s);
            let single: Vec<String> = s
                .topologies()
                .iter()
                .map(|t| t.label())
                .filter(|l| !drawn.iter().any(|(d, _)| d == l))
                .collect();
            (
                s.group,
                (drawn.into_iter().map(|(_, m)| m).collect(), single),
            )
        })
        .collect()
}

/// What the loop over configurations gives the template: the overview
/// lines, the sections (table and charts), and what the trim left out, by
/// name with its worst change.
#[derive(Default)]
struct GroupParts {
    overview: Vec<Value>,
    sections: Vec<Value>,
    left_out: Vec<String>,
    charts_left_out: Vec<String>,
}

/// What every configuration's section is cut by: the layout, whether
/// points ran more than once, the trim and the charts.
struct Sections<'a> {
    c: &'a Comparison,
    full: bool,
    repeats: bool,
    trim: &'a Trim<'a>,
    charts: &'a GroupCharts<'a>,
}

impl Sections<'_> {
    /// One overview line per configuration, in key order, and its section
    /// (see [`Sections::add_section`]).
    fn parts(&self) -> GroupParts {
        let mut groups: BTreeMap<&GroupKey, Vec<&PointResult>> = BTreeMap::new();
        for p in &self.c.points {
            groups.entry(&p.key.group).or_default().push(p);
        }
        let first = self.c.metrics.first();
        let mut parts = GroupParts::default();
        for (g, pts) in &groups {
            let counts = Counts::of(pts.iter().copied());
            let here = ran_on(pts);
            parts
                .overview
                .push(overview_row(g, pts, first, &counts, &here));
            self.add_section(&mut parts, g, pts, &counts, here);
        }
        parts
    }

    /// A configuration's section: its table and charts, or in the comment
    /// nothing (no point beyond tolerance) or only its name in the note
    /// (the trim left its table out).
    fn add_section(
        &self,
        parts: &mut GroupParts,
        g: &GroupKey,
        pts: &[&PointResult],
        counts: &Counts,
        here: String,
    ) {
        let (c, full) = (self.c, self.full);
        let regressed = counts.regressed_points > 0;
        // The points the table shows: all of them in the full report;
        // in the comment those beyond tolerance (regressed, improved or
        // inconclusive).
        let shown: Vec<&PointResult> = pts
            .iter()
            .copied()
            .filter(|p| full || p.state != PointState::Unchanged)
            .collect();
        let (mut group_charts, single) = self.charts.get(g).cloned().unwrap_or_default();
        if !full && shown.is_empty() {
            // Nothing beyond tolerance: the overview line says it all.
            return;
        }
        if !full && self.trim.tables.contains(&g) {
            parts
                .left_out
                .push(format!("{} (worst {})", md(&g.title()), severity(c, pts).1));
            return;
        }
        // In the comment, a topology without a chart is named only when
        // its point is in the table ("see the table").
        let mut single: Vec<String> = single
            .into_iter()
            .filter(|l| full || shown.iter().any(|p| &p.key.topology.label() == l))
            .collect();
        if !full && self.trim.charts.contains(&g) && !group_charts.is_empty() {
            parts.charts_left_out.push(md(&g.title()));
            group_charts.clear();
            single.clear();
        }
        let table = Table::of(c, &shown, self.repeats);
        let hidden = pts.len() - shown.len();
        parts.sections.push(json!({
            "title": g.title(),
            "points": counts.matched,
            "regressed": counts.regressed_points,
            // Regressed configurations open, the rest folded (both layouts).
            "open": regressed,
            "summary": group_line(counts),
            "ran_on": here,
            "constant": table.constant,
            "header": table.header,
            "align": table.align,
            "rows": table.rows,
            "hidden": hidden,
            "charts": group_charts,
            "single_point": single,
        }));
    }
}

/// A configuration's overview line: its title, where it ran, its five
/// counts in one cell, and the best, worst and median change of the first
/// metric.
fn overview_row(
    g: &GroupKey,
    pts: &[&PointResult],
    first: Option<&MetricDef>,
    counts: &Counts,
    here: &str,
) -> Value {
    let (best, worst) = first.map_or(("N/A".into(), "N/A".into()), |d| best_worst(d, 0, pts));
    let median_change = first
        .and_then(|d| {
            let mut rs: Vec<f64> = pts.iter().filter_map(|p| p.cells[0].rel_delta).collect();
            median(&mut rs).map(|m| judged(d, m))
        })
        .unwrap_or_else(|| "N/A".into());
    json!([
        md(&g.title()),
        here,
        // One cell for the five counts: five numeric columns (their
        // headers a word wide each) made the table wider than a
        // comment's column, hiding best, worst and impact.
        format!(
            "{}: {} · {} · {} · {}",
            counts.matched,
            counts.regressed_points,
            counts.improved,
            counts.unchanged,
            counts.inconclusive
        ),
        best,
        worst,
        median_change,
    ])
}

/// A configuration's table: the columns named once above it (the same on
/// every row), then its header, alignments and rows.
struct Table {
    constant: Vec<String>,
    header: Vec<String>,
    align: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// The table of these points: the leading columns (see
    /// [`Table::leading`]) less the constant ones, then one column per
    /// metric and the history column when there is a history.
    fn of(c: &Comparison, shown: &[&PointResult], repeats: bool) -> Table {
        let mut t = Table::leading(shown, repeats);
        t.constant = drop_constant_columns(&mut t.header, &mut t.align, &mut t.rows);
        t.header
            .extend(c.metrics.iter().map(|d| d.label.to_string()));
        t.align.extend(c.metrics.iter().map(|_| "---:"));
        if c.history.is_some() {
            t.header.push(HISTORY_HEADER.into());
            t.align.push(":---");
        }
        for (row, p) in t.rows.iter_mut().zip(shown) {
            row.extend(
                c.metrics
                    .iter()
                    .zip(&p.cells)
                    .map(|(d, cell)| cell_text(d, cell)),
            );
            if c.history.is_some() {
                row.push(history_text(c, p));
            }
        }
        t
    }

    /// The columns before the metrics: the point's state (flagged when its
    /// baseline ran on other hardware), its topology, the runs when points
    /// ran more than once. These are dropped when constant.
    fn leading(shown: &[&PointResult], repeats: bool) -> Table {
        let (topo_header, topo_align) = topo_columns(shown);
        let mut header: Vec<String> = vec!["state".into()];
        let mut align: Vec<&'static str> = vec![":---"];
        header.extend(topo_header.iter().cloned());
        align.extend(topo_align);
        if repeats {
            header.push(RUNS_HEADER.into());
            align.push("---:");
        }
        let rows: Vec<Vec<String>> = shown
            .iter()
            .map(|p| {
                let flag = if p.other_hardware {
                    " ⚠️ other hardware"
                } else {
                    ""
                };
                let mut row = vec![format!("{}{flag}", state_text(p.state))];
                row.extend(topo_cells(&p.key, &topo_header));
                if repeats {
                    row.push(format!("{}/{}", p.n_baseline, p.n_new));
                }
                row
            })
            .collect();
        Table {
            constant: Vec::new(),
            header,
            align,
            rows,
        }
    }
}

/// The part below the configurations: the points on one side only, the
/// duplicates, and the evals.
fn insert_leftovers(ctx: &mut serde_json::Map<String, Value>, input: &ReportInput<'_>) {
    let c = input.comparison;
    ctx.insert(
        "unmatched_new".into(),
        c.unmatched_new
            .iter()
            .map(point_ref)
            .collect::<Vec<_>>()
            .into(),
    );
    ctx.insert(
        "unmatched_baseline".into(),
        c.unmatched_baseline
            .iter()
            .map(point_ref)
            .collect::<Vec<_>>()
            .into(),
    );
    let dups: Vec<Value> = c
        .duplicates
        .iter()
        .map(|d| {
            json!({"side": d.side, "group": d.key.group.title(), "point": d.key.label(),
                "source": d.origin.to_string()})
        })
        .collect();
    ctx.insert("duplicates".into(), dups.into());
    ctx.insert(
        "eval_baseline".into(),
        input.evals.iter().any(|e| e.baseline.is_some()).into(),
    );
    ctx.insert("evals".into(), eval_rows(input.evals).into());
}

fn pct2(v: Option<f64>) -> String {
    v.map_or_else(|| "N/A".into(), |v| format!("{:.2}{NBSP}%", v * 100.0))
}

fn eval_rows(evals: &[EvalRow]) -> Vec<Value> {
    let mut sorted: Vec<&EvalRow> = evals.iter().collect();
    sorted.sort_by(|a, b| (&a.key, &a.task).cmp(&(&b.key, &b.task)));
    sorted
        .into_iter()
        .map(|e| {
            let g = &e.key.group;
            let (tp, ep) = match &e.key.topology {
                Topology::Single { tp, ep, .. } => (tp.to_string(), ep.to_string()),
                Topology::Multi {
                    prefill, decode, ..
                } => (
                    format!("P{}/D{}", prefill.tp, decode.tp),
                    format!("P{}/D{}", prefill.ep, decode.ep),
                ),
            };
            let threshold = match (&e.threshold, e.pass()) {
                (Some(t), Some(true)) => format!("✅ ≥{NBSP}{}", pct_plain(t.value)),
                (Some(t), Some(false)) => format!("❌ <{NBSP}{}", pct_plain(t.value)),
                (Some(t), None) => format!("? {}", pct_plain(t.value)),
                (None, _) => "–".into(),
            };
            let baseline = e.baseline.as_ref().map_or_else(
                || "–".to_string(),
                |b| {
                    let mut s = pct2(b.em_strict);
                    if let Some(se) = b.em_strict_se {
                        s.push_str(&format!(" ±{:.2}{NBSP}%", se * 100.0));
                    }
                    if b.significant_drop {
                        s.push_str(" ⚠️ significant drop");
                    }
                    s
                },
            );
            json!({
                // The configuration as every other table names it.
                "config": g.title(),
                "tp": tp,
                "ep": ep,
                "conc": e.key.conc,
                "task": e.task,
                "em_strict": pct2(e.em_strict),
                "se": e.em_strict_se.map_or_else(|| "N/A".into(), |se| format!("±{:.2}{NBSP}%", se * 100.0)),
                "em_flexible": pct2(e.em_flexible),
                "n_eff": e.raw.get("n_eff").filter(|v| !v.is_null()).map_or_else(String::new, |v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                }),
                "threshold": threshold,
                "baseline": baseline,
            })
        })
        .collect()
}

/// The reference's hardware column: `-multinode`, `-trt` or `-disagg`
/// removed once at the end, upper-cased.
fn reference_hw(hw: &str) -> String {
    let mut s = hw.to_string();
    for suffix in ["-multinode", "-trt", "-disagg"] {
        if let Some(stripped) = s.strip_suffix(suffix) {
            s = stripped.to_string();
            break;
        }
    }
    s.to_uppercase()
}

fn md(s: &str) -> String {
    sweep_model::markdown::inline(s)
}

fn raw_str(row: &Row, key: &str) -> String {
    match row.metrics.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

/// The reference delta cell: display-unit delta with the metric's decimals,
/// coloured by direction (no threshold), and the percentage.
fn reference_delta(def: &MetricDef, base: Option<f64>, new: Option<f64>) -> String {
    let (Some(b), Some(n)) = (base, new) else {
        return "N/A".into();
    };
    if b == 0.0 {
        return "N/A".into();
    }
    let (b, n) = (b * def.display_scale, n * def.display_scale);
    let d = n - b;
    let p = d / b * 100.0;
    let ds = format!("{:+.*}", def.decimals, d);
    let ps = format!("({p:+.1}%)");
    let better = if def.higher_is_better {
        d > 0.0
    } else {
        d < 0.0
    };
    let worse = if def.higher_is_better {
        d < 0.0
    } else {
        d > 0.0
    };
    if better {
        format!("$\\color{{green}}\\text{{{ds}}}$ {ps}")
    } else if worse {
        format!("$\\color{{red}}\\text{{{ds}}}$ {ps}")
    } else {
        format!("{ds} {ps}")
    }
}

/// The reference layout (`compare-reference.md.j2`).
pub fn reference_markdown(input: &ReportInput<'_>) -> Result<String, CompareError> {
    let c = input.comparison;
    let mut ctx = common(input);
    let by_key: BTreeMap<&PointKey, &PointResult> = c.points.iter().map(|p| (&p.key, p)).collect();
    let rows = reference_order(input.new_rows);
    let mut tables = Vec::new();
    for multi in [false, true] {
        let part: Vec<&&Row> = rows
            .iter()
            .filter(|r| r.key.group.is_multinode == multi)
            .collect();
        if part.is_empty() {
            continue;
        }
        let header = reference_header(c, multi);
        let align = vec!["---"; header.len()];
        let table_rows: Vec<Vec<String>> = part
            .iter()
            .map(|r| reference_row(c, &by_key, r, multi))
            .collect();
        tables.push(json!({
            "title": if multi { "Multi-Node Comparison vs. Most Recent" } else { "Single-Node Comparison vs. Most Recent" },
            "header": header,
            "align": align,
            "rows": table_rows,
        }));
    }
    ctx.insert("tables".into(), tables.into());
    render("compare-reference.md.j2", Value::Object(ctx))
}

/// All new rows in the reference's order: model prefix, hardware,
/// framework, ISL, OSL, concurrency.
fn reference_order(new_rows: &[Row]) -> Vec<&Row> {
    let mut rows: Vec<&Row> = new_rows.iter().collect();
    rows.sort_by(|a, b| {
        let k = |r: &Row| {
            (
                raw_str(r, "infmax_model_prefix"),
                reference_hw(&raw_str(r, "hw")),
                raw_str(r, "framework").to_uppercase(),
                r.key.group.isl,
                r.key.group.osl,
                r.key.conc,
            )
        };
        k(a).cmp(&k(b))
    });
    rows
}

/// The header of the single-node or the multi-node reference table: the
/// configuration, its parallelism, `Conc`, then each metric and its delta.
fn reference_header(c: &Comparison, multi: bool) -> Vec<String> {
    let mut header: Vec<String> = [
        "Model",
        "Served Model",
        "Hardware",
        "Framework",
        "Precision",
        "ISL",
        "OSL",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if multi {
        header.extend(["Prefill TP", "Prefill EP", "Decode TP", "Decode EP"].map(String::from));
    } else {
        header.extend(["TP", "EP", "DP Attention"].map(String::from));
    }
    header.push("Conc".into());
    for d in &c.metrics {
        header.push(d.label.to_string());
        header.push(format!("{} Delta", d.label));
    }
    header
}

/// One new row of a reference table, cells in [`reference_header`]'s
/// order; the deltas are against the matched baseline point, if any.
fn reference_row(
    c: &Comparison,
    by_key: &BTreeMap<&PointKey, &PointResult>,
    r: &Row,
    multi: bool,
) -> Vec<String> {
    // Result-file strings: escaped for markdown (sweep_model::markdown).
    let mut cells = vec![
        md(&raw_str(r, "infmax_model_prefix")),
        md(&raw_str(r, "model")),
        md(&reference_hw(&raw_str(r, "hw"))),
        md(&raw_str(r, "framework").to_uppercase()),
        md(&raw_str(r, "precision").to_uppercase()),
        r.key.group.isl.to_string(),
        r.key.group.osl.to_string(),
    ];
    if multi {
        for k in ["prefill_tp", "prefill_ep", "decode_tp", "decode_ep"] {
            cells.push(md(&raw_str(r, k)));
        }
    } else {
        for k in ["tp", "ep", "dp_attention"] {
            cells.push(md(&raw_str(r, k)));
        }
    }
    cells.push(r.key.conc.to_string());
    let point = by_key.get(&r.key);
    for (i, d) in c.metrics.iter().enumerate() {
        let new = metric_value(r.metrics.get(d.key));
        let base = point.and_then(|p| p.cells[i].baseline);
        cells.push(num(new, d));
        cells.push(reference_delta(d, base, new));
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricSet;

    /// `~` written for the no-break space.
    fn nb(s: &str) -> String {
        s.replace('~', "\u{a0}")
    }

    /// Issue #37 item 3: the mark says better or worse for the metric,
    /// the arrow only the direction: throughput up and TTFT down are both
    /// 🟢, throughput down and TTFT up both 🔴.
    #[test]
    fn every_delta_is_marked_better_or_worse_for_its_metric() {
        let defs = MetricSet::Default.defs();
        let (tput, ttft) = (&defs[0], &defs[3]);
        assert!(tput.higher_is_better && !ttft.higher_is_better);
        assert_eq!(judged(tput, 0.10), nb("🟢~▲~+10.0~%"));
        assert_eq!(judged(ttft, 0.25), nb("🔴~▲~+25.0~%"));
        assert_eq!(judged(ttft, -0.25), nb("🟢~▼~-25.0~%"));
        assert_eq!(judged(tput, -0.12), nb("🔴~▼~-12.0~%"));
        assert_eq!(judged(tput, 0.00001), nb("0.0~%"));
        assert!(CHANGE_LEGEND.contains("🟢 better") && CHANGE_LEGEND.contains("🔴 worse"));
    }

    /// Issue #37 item 4: a number keeps its unit, and an arrow its number,
    /// with no-break spaces; one percent style (`12.0 %`) everywhere.
    #[test]
    fn numbers_and_units_are_joined_by_no_break_spaces() {
        for s in [arrow(-0.12), pct_plain(0.94), pct2(Some(0.881))] {
            assert!(!s.contains(' '), "a breaking space in {s:?}");
            assert!(s.ends_with("\u{a0}%"), "{s:?}");
        }
    }

    #[test]
    fn a_trend_puts_the_newest_runs_and_this_value_on_one_scale() {
        let values: Vec<f64> = (0..12).map(|i| 100.0 + f64::from(i % 3)).collect();
        // The newest ten of twelve, then the new value, lowest to highest.
        assert_eq!(trend(&values, Some(80.0)), nb("█▇██▇██▇██~→~▁"));
        assert_eq!(trend(&[1.0, 1.0], Some(1.0)), nb("▄▄~→~▄"));
        assert_eq!(trend(&[], Some(1.0)), "");
        assert_eq!(trend(&[1.0, 2.0], None), "▁█");
    }

    #[test]
    fn change_cells_are_plain_arrows_bold_only_beyond_tolerance() {
        let def = &MetricSet::Default.defs()[0];
        let mut c = Cell {
            baseline: Some(1385.5),
            new: Some(1705.0),
            delta: Some(319.5),
            rel_delta: Some(319.5 / 1385.5),
            class: Some(Class::Improvement),
            baseline_stats: Stats::of(&[1385.5]),
            new_stats: Stats::of(&[1705.0]),
            within_noise: false,
            history: None,
        };
        assert_eq!(cell_text(def, &c), nb("1385.5 → 1705.0 (**🟢~▲~+23.1~%**)"));
        c.class = Some(Class::Neutral);
        assert_eq!(cell_text(def, &c), nb("1385.5 → 1705.0 (🟢~▲~+23.1~%)"));
        c.rel_delta = Some(-0.111);
        c.class = Some(Class::Regression);
        assert_eq!(cell_text(def, &c), nb("1385.5 → 1705.0 (**🔴~▼~-11.1~%**)"));
        c.rel_delta = Some(-0.00001);
        c.class = Some(Class::Neutral);
        assert_eq!(cell_text(def, &c), nb("1385.5 → 1705.0 (0.0~%)"));
        c.baseline = None;
        c.rel_delta = None;
        assert_eq!(cell_text(def, &c), "N/A → 1705.0");
    }

    #[test]
    fn repeated_cells_show_the_range_and_say_inconclusive() {
        let def = &MetricSet::Default.defs()[0];
        let c = Cell {
            baseline: Some(1000.0),
            new: Some(960.0),
            delta: Some(-40.0),
            rel_delta: Some(-0.04),
            class: Some(Class::Neutral),
            baseline_stats: Stats::of(&[970.0, 1000.0, 1030.0]),
            new_stats: Stats::of(&[960.0]),
            within_noise: true,
            history: None,
        };
        assert_eq!(
            cell_text(def, &c),
            nb("1000.0 [970.0–1030.0] → 960.0 (🔴~▼~-4.0~%, inconclusive — re-run)")
        );
        // Runs that all gave the same value show it once, no `±0.0%`.
        let same = Cell {
            baseline: Some(0.01),
            new: Some(0.01),
            delta: Some(0.0),
            rel_delta: Some(0.0),
            class: Some(Class::Neutral),
            baseline_stats: Stats::of(&[0.01, 0.01, 0.01]),
            new_stats: Stats::of(&[0.01, 0.01]),
            within_noise: false,
            history: None,
        };
        let tpot = &MetricSet::Default.defs()[2];
        assert_eq!(cell_text(tpot, &same), nb("10.00 → 10.00 (0.0~%)"));
    }

    #[test]
    fn constant_columns_are_dropped_and_named_once() {
        let mut header: Vec<String> = ["state", "TP", "EP", "DPA", "Conc"]
            .map(String::from)
            .to_vec();
        let mut align = vec![":---", "---:", "---:", ":---:", "---:"];
        let mut rows: Vec<Vec<String>> = [
            ["improved", "2", "1", "false", "4"],
            ["improved", "4", "1", "false", "4"],
        ]
        .iter()
        .map(|r| r.map(String::from).to_vec())
        .collect();
        let constant = drop_constant_columns(&mut header, &mut align, &mut rows);
        assert_eq!(constant, ["state improved", "EP 1", "DPA false"]);
        assert_eq!(header, ["TP", "Conc"]);
        assert_eq!(align, ["---:", "---:"]);
        assert_eq!(rows, [["2", "4"], ["4", "4"]]);
        // One row: nothing is "constant across a table".
        let mut one = vec![rows[0].clone()];
        assert!(drop_constant_columns(&mut header, &mut align, &mut one).is_empty());
    }

    #[test]
    fn reference_delta_matches_compare_results_py_format() {
        let def = &MetricSet::Reference.defs()[1]; // TTFT median, ms, 4 decimals
        assert_eq!(
            reference_delta(def, Some(0.5), Some(0.4)),
            "$\\color{green}\\text{-100.0000}$ (-20.0%)"
        );
        assert_eq!(reference_delta(def, Some(0.0), Some(0.4)), "N/A");
        assert_eq!(reference_hw("b200-multinode"), "B200");
        assert_eq!(reference_hw("b200-dgxc_03"), "B200-DGXC_03");
    }

    #[test]
    fn tolerance_percentages_are_trimmed() {
        assert_eq!(pct_plain(0.05), nb("5~%"));
        assert_eq!(pct_plain(0.025), nb("2.5~%"));
        assert_eq!(pct_plain(0.1), nb("10~%"));
    }
}
