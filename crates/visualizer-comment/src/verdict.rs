//! The verdict as a reader gets it first: compare-results' JSON `summary`
//! read once into a [`Head`] (the icon, the one-line counts, the regressed
//! points, the evals below threshold) and a check-run [`Conclusion`]. The
//! comment's heading ([`crate::body`]) and the "sweep verdict" check run
//! ([`crate::check_run`]) are both made from it, so they cannot disagree.

use serde::Deserialize;
use serde_json::Value;

use crate::error::BodyError;

/// How many regressions (and failed evals) the head lists before "and N
/// more": enough for a reader to act on, short enough to stay a line.
pub const HEAD_ITEMS: usize = 5;

#[derive(Debug, Deserialize)]
struct Summary {
    verdict: String,
    #[serde(default)]
    baseline: String,
    /// compare-results' summary line (`2 points regressed (4 metrics) · …`),
    /// the heading's words, so the heading and the report agree.
    line: String,
    counts: Counts,
    #[serde(default)]
    regressions: Vec<RegressionItem>,
    /// The regressed points, largest change first (compare-results
    /// 0.x and later); the head lists these when present, else the
    /// regressed metrics of `regressions`.
    #[serde(default)]
    top_regressions: Option<Vec<TopItem>>,
    #[serde(default)]
    evals: Vec<EvalItem>,
}

/// A regressed point: its largest regressed change and the others.
#[derive(Debug, Deserialize)]
struct TopItem {
    group: String,
    point: String,
    metric: String,
    change: String,
    #[serde(default)]
    also: Vec<String>,
    #[serde(default)]
    other_hardware: bool,
}

/// compare-results' counts (its `Counts`), computed once there.
#[derive(Debug, Deserialize)]
struct Counts {
    matched: u64,
    inconclusive: u64,
    /// Points whose baseline ran on other hardware.
    #[serde(default)]
    other_hardware: u64,
}

#[derive(Debug, Deserialize)]
struct RegressionItem {
    group: String,
    point: String,
    metric: String,
    change: String,
    tolerance: String,
}

#[derive(Debug, Deserialize)]
struct EvalItem {
    configuration: String,
    point: String,
    task: String,
    score: String,
    threshold: Option<String>,
    pass: Option<bool>,
}

/// A check run's conclusion for the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conclusion {
    /// A point regressed, or an eval is below its threshold (the ❌ heading).
    Failure,
    /// Nothing was compared (no baseline, or no point in both runs).
    Neutral,
    /// Compared, nothing regressed.
    Success,
}

impl Conclusion {
    /// GitHub's word for it (`conclusion` of a check run).
    pub fn as_str(self) -> &'static str {
        match self {
            Conclusion::Failure => "failure",
            Conclusion::Neutral => "neutral",
            Conclusion::Success => "success",
        }
    }
}

/// The head of the comment, every string but [`Head::title`] already
/// escaped for markdown.
#[derive(Debug, Clone)]
pub struct Head {
    /// ❌ regressions or evals below threshold, ⚠️ nothing compared or a
    /// point inconclusive or compared across hardware, ✅ otherwise.
    pub icon: &'static str,
    pub conclusion: Conclusion,
    /// The one-line counts with the eval failures and the baseline, as
    /// plain text (a check run's title is not markdown).
    pub title: String,
    /// The same line for markdown.
    pub line: String,
    /// The first [`HEAD_ITEMS`] regressed points, the configuration named
    /// once for its run of points.
    pub regressions: Vec<String>,
    /// How many regressed points (or metrics) there are in all.
    pub regressions_total: usize,
    /// Whether [`Head::regressions`] are whole points (`top_regressions`)
    /// or single metrics (an older report).
    pub regressions_are_points: bool,
    /// The sentence about baselines on other hardware, when any.
    pub other_hardware: Option<String>,
    /// The first [`HEAD_ITEMS`] evals below threshold.
    pub failed_evals: Vec<String>,
    pub failed_evals_total: usize,
    /// `N of N at or above threshold` when evals ran.
    pub evals_line: Option<String>,
}

fn md(s: &str) -> String {
    sweep_model::markdown::inline(s)
}

/// `; and 2 more…` after the first [`HEAD_ITEMS`] of `n` items, else empty.
pub(crate) fn more(n: usize, tail: &str) -> String {
    match n.saturating_sub(HEAD_ITEMS) {
        0 => String::new(),
        k => format!("; and {k} more{tail}"),
    }
}

pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn summary(compare: &Value) -> Result<Summary, BodyError> {
    let s = compare.get("summary").ok_or_else(|| BodyError::Input {
        what: "compare JSON".into(),
        cause: "no `summary` object (write it with this version's compare-results --json)".into(),
    })?;
    Summary::deserialize(s).map_err(|e| BodyError::Input {
        what: "compare JSON `summary`".into(),
        cause: e.to_string(),
    })
}

/// Reads compare-results' JSON report (its `summary`) into the head.
pub fn head(compare: &Value) -> Result<Head, BodyError> {
    let s = summary(compare)?;
    let failed: Vec<&EvalItem> = s.evals.iter().filter(|e| e.pass == Some(false)).collect();
    let perf = if s.counts.matched == 0 {
        "No matched points to compare"
    } else {
        s.line.as_str()
    };
    let evals_text = if failed.is_empty() {
        String::new()
    } else {
        format!(
            ", {} below threshold",
            plural(failed.len() as u64, "eval", "evals")
        )
    };
    let (icon, conclusion) = if s.verdict == "regressions" || !failed.is_empty() {
        ("❌", Conclusion::Failure)
    } else if s.counts.matched == 0 {
        ("⚠️", Conclusion::Neutral)
    } else if s.counts.inconclusive > 0 || s.counts.other_hardware > 0 {
        ("⚠️", Conclusion::Success)
    } else {
        ("✅", Conclusion::Success)
    };
    let (vs, vs_md) = if s.baseline.is_empty() {
        (String::new(), String::new())
    } else {
        (
            format!(" vs {}", s.baseline),
            format!(" vs {}", md(&s.baseline)),
        )
    };
    // The configuration is named once for its run of regressions.
    let mut items: Vec<String> = Vec::new();
    let mut last_group: Option<String> = None;
    let mut name = |group: &str, point: String| {
        if last_group.as_deref() == Some(group) {
            point
        } else {
            last_group = Some(group.to_string());
            format!("{} — {point}", md(group))
        }
    };
    let (regressions_total, regressions_are_points) = match &s.top_regressions {
        Some(top) => {
            for r in top.iter().take(HEAD_ITEMS) {
                let also = if r.also.is_empty() {
                    String::new()
                } else {
                    format!(" (also {})", md(&r.also.join(", ")))
                };
                let flag = if r.other_hardware {
                    " ⚠️ baseline on other hardware"
                } else {
                    ""
                };
                let point = format!(
                    "{}: {} {}{also}{flag}",
                    md(&r.point),
                    md(&r.metric),
                    md(&r.change)
                );
                items.push(name(&r.group, point));
            }
            (top.len(), true)
        }
        None => {
            for r in s.regressions.iter().take(HEAD_ITEMS) {
                let point = format!(
                    "{}: {} {} (tolerance {})",
                    md(&r.point),
                    md(&r.metric),
                    md(&r.change),
                    md(&r.tolerance)
                );
                items.push(name(&r.group, point));
            }
            (s.regressions.len(), false)
        }
    };
    let other_hardware = (s.counts.other_hardware > 0).then(|| {
        format!(
            "{} compared with a baseline that ran on other hardware (marked ⚠️ below): the change may be the machine's, not the code's.",
            plural(s.counts.other_hardware, "point", "points")
        )
    });
    let failed_evals: Vec<String> = failed
        .iter()
        .take(HEAD_ITEMS)
        .map(|e| {
            format!(
                "{}, {}: {} {} < {}",
                md(&e.configuration),
                md(&e.point),
                md(&e.task),
                md(&e.score),
                md(e.threshold.as_deref().unwrap_or("?"))
            )
        })
        .collect();
    let with_threshold = s.evals.iter().filter(|e| e.pass.is_some()).count() as u64;
    let evals_line = match (s.evals.len() as u64, with_threshold) {
        (0, _) => None,
        (n, 0) => Some(format!("{}, no threshold set", plural(n, "eval", "evals"))),
        (n, t) if t == n => Some(format!("{t} of {t} at or above threshold")),
        (n, t) => Some(format!(
            "{t} of {} at or above threshold ({} without one)",
            plural(n, "eval", "evals"),
            n - t
        )),
    };
    Ok(Head {
        icon,
        conclusion,
        title: format!("{perf}{evals_text}{vs}"),
        line: format!("{}{evals_text}{vs_md}", md(perf)),
        regressions: items,
        regressions_total,
        regressions_are_points,
        other_hardware,
        failed_evals,
        failed_evals_total: failed.len(),
        evals_line,
    })
}
