//! The verdict as a reader gets it first: compare-results' JSON `summary`
//! read once into a [`Head`] (the icon, the one-line counts, the regressed
//! points, the evals below threshold) and a check-run [`Conclusion`]. The
//! comment's heading ([`crate::body`]) and the "sweep verdict" check run
//! ([`crate::check_run`]) are both made from it, so they cannot disagree.

use serde::Deserialize;
use serde_json::Value;
use sweep_model::compare_summary::{CompareSummary, Eval, TopRegression, Verdict};

use crate::error::BodyError;

/// How many regressions (and failed evals) the head lists before "and N
/// more": enough for a reader to act on, short enough to stay a line.
pub const HEAD_ITEMS: usize = 5;

/// What the caller knows of the legs (success-rate's counts): whether any
/// job was meant to run. Unknown is treated as "some were".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheduled {
    /// success-rate counted this many GPU jobs.
    Jobs(u64),
    /// Not known (no run stats given).
    #[default]
    Unknown,
}

/// A check run's conclusion for the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conclusion {
    /// A point regressed, an eval is below its threshold, or legs ran and
    /// no result arrived (the ❌ heading).
    Failure,
    /// Nothing was compared because nothing was meant to run, or no point
    /// had a baseline.
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
    /// How many regressed points there are in all.
    pub regressions_total: usize,
    /// The sentence about baselines on other hardware, when any.
    pub other_hardware: Option<String>,
    /// The first [`HEAD_ITEMS`] evals below threshold.
    pub failed_evals: Vec<String>,
    pub failed_evals_total: usize,
    /// `N of N at or above threshold` when evals ran.
    pub evals_line: Option<String>,
    /// Whether the failure is regressions alone (no eval below its
    /// threshold, results arrived): the only failure a writer may
    /// acknowledge ([`Head::acknowledge`]).
    pub acknowledgeable: bool,
    /// The acknowledgement's line, markdown (`acknowledged by [@x](…): why`).
    pub acknowledged: Option<String>,
}

impl Head {
    /// A writer acknowledged the regression ([`crate::ack`]): when the
    /// failure is regressions alone, the conclusion turns neutral, the icon
    /// ⚠️, and the title and the line say who and why (the login escaped
    /// like any name, so the sticky comment's updates never mention them
    /// again). Returns whether it
    /// applied (evals below threshold, or no results, still fail).
    pub fn acknowledge(&mut self, login: &str, reason: &str, url: Option<&str>) -> bool {
        if !self.acknowledgeable {
            return false;
        }
        let who = match url {
            Some(u) if crate::error::check_url("acknowledgement URL", u).is_ok() => {
                format!("[{}]({u})", md(&format!("@{login}")))
            }
            _ => md(&format!("@{login}")),
        };
        let plain_reason: String = reason
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        self.icon = "⚠️";
        self.conclusion = Conclusion::Neutral;
        self.title = format!(
            "{} — regressed, acknowledged by @{login}: {plain_reason}",
            self.title
        );
        let line = format!("acknowledged by {who}: {}", md(&plain_reason));
        self.line = format!("{} — {line}", self.line);
        self.acknowledged = Some(line);
        true
    }
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

/// compare-results' JSON report's `summary`, typed; a report of another
/// layout (an unknown verdict, a missing or unknown field) is an error, never
/// a green heading.
pub fn summary(compare: &Value) -> Result<CompareSummary, BodyError> {
    let s = compare.get("summary").ok_or_else(|| BodyError::Input {
        what: "compare JSON".into(),
        cause: "no `summary` object (write it with this version's compare-results --json)".into(),
    })?;
    CompareSummary::deserialize(s).map_err(|e| BodyError::Input {
        what: "compare JSON `summary`".into(),
        cause: e.to_string(),
    })
}

/// How many GPU jobs success-rate counted in `run_stats.json` (or the
/// placed and unplaced ones of `run_stats_by_runner.json`), when given.
pub fn scheduled(run_stats: Option<&Value>, by_runner: Option<&Value>) -> Scheduled {
    let total = |v: &Value| -> Option<u64> {
        let m = v.as_object()?;
        Some(
            m.values()
                .filter_map(|s| s.get("total").and_then(Value::as_u64))
                .sum(),
        )
    };
    if let Some(b) = by_runner.filter(|v| !v.is_null()) {
        let placed = b.get("clusters").and_then(total);
        let unplaced = b.pointer("/unplaced/total").and_then(Value::as_u64);
        if let (Some(p), Some(u)) = (placed, unplaced) {
            return Scheduled::Jobs(p + u);
        }
    }
    match run_stats.filter(|v| !v.is_null()).and_then(total) {
        Some(n) => Scheduled::Jobs(n),
        None => Scheduled::Unknown,
    }
}

/// Reads compare-results' JSON report (its `summary`) into the head;
/// `scheduled` says whether legs were meant to run (for an empty sweep).
pub fn head(compare: &Value, scheduled: Scheduled) -> Result<Head, BodyError> {
    let s = summary(compare)?;
    let failed: Vec<&Eval> = s.evals.iter().filter(|e| e.pass == Some(false)).collect();
    let nothing_ran = scheduled == Scheduled::Jobs(0);
    let perf = perf_line(&s, nothing_ran);
    let (icon, conclusion) = icon_and_conclusion(&s, !failed.is_empty(), nothing_ran);
    let vs = if s.baseline.label.is_empty() {
        String::new()
    } else {
        format!(" vs {}", s.baseline.label)
    };
    let vs_md = if s.baseline.label.is_empty() {
        String::new()
    } else {
        format!(" vs {}", md(&s.baseline.label))
    };
    let other_hardware = (s.counts.other_hardware > 0).then(|| {
        format!(
            "{} compared with a baseline that ran on other hardware (marked ⚠️ below): the change may be the machine's, not the code's.",
            plural(s.counts.other_hardware, "point", "points")
        )
    });
    Ok(Head {
        icon,
        conclusion,
        title: format!("{perf}{vs}"),
        line: format!("{}{vs_md}", md(&perf)),
        regressions: regression_items(&s.top_regressions),
        regressions_total: s.top_regressions.len(),
        other_hardware,
        failed_evals: failed_eval_items(&failed),
        failed_evals_total: failed.len(),
        evals_line: evals_line(&s.evals),
        acknowledgeable: conclusion == Conclusion::Failure
            && failed.is_empty()
            && s.verdict == Verdict::Regressions,
        acknowledged: None,
    })
}

/// The performance half of the one-line counts, plain text: compare-results'
/// line, or why nothing was compared.
fn perf_line(s: &CompareSummary, nothing_ran: bool) -> String {
    match (s.verdict, s.counts.matched) {
        (Verdict::NoResults, _) if nothing_ran => {
            "No legs were scheduled: nothing to compare".to_string()
        }
        (Verdict::NoResults, _) => {
            "No benchmark results arrived: nothing could be compared".to_string()
        }
        (_, 0) => format!(
            "No matched points to compare{}",
            if s.counts.no_baseline > 0 {
                format!(" · {} no baseline", s.counts.no_baseline)
            } else {
                String::new()
            }
        ),
        _ => s.line.clone(),
    }
}

/// The heading's icon and the check run's conclusion for the verdict
/// (`evals_failed`: an eval is below its threshold).
fn icon_and_conclusion(
    s: &CompareSummary,
    evals_failed: bool,
    nothing_ran: bool,
) -> (&'static str, Conclusion) {
    match s.verdict {
        Verdict::Regressions | Verdict::EvalsFailed => ("❌", Conclusion::Failure),
        Verdict::NoResults if nothing_ran => ("⚠️", Conclusion::Neutral),
        Verdict::NoResults => ("❌", Conclusion::Failure),
        Verdict::NoRegressions if evals_failed => ("❌", Conclusion::Failure),
        Verdict::NoRegressions if s.counts.matched == 0 => ("⚠️", Conclusion::Neutral),
        Verdict::NoRegressions
            if s.counts.inconclusive > 0
                || s.counts.other_hardware > 0
                || s.counts.not_rerun > 0
                || s.counts.no_baseline > 0 =>
        {
            ("⚠️", Conclusion::Success)
        }
        Verdict::NoRegressions => ("✅", Conclusion::Success),
    }
}

/// The first [`HEAD_ITEMS`] regressed points, markdown.
fn regression_items(top: &[TopRegression]) -> Vec<String> {
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
    for r in top.iter().take(HEAD_ITEMS) {
        let also = if r.also.is_empty() {
            String::new()
        } else {
            format!(", also {}", md(&r.also.join(", ")))
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
    items
}

/// The first [`HEAD_ITEMS`] evals below threshold, markdown.
fn failed_eval_items(failed: &[&Eval]) -> Vec<String> {
    failed
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
        .collect()
}

/// `N of N at or above threshold` (and how many have none) when evals ran.
fn evals_line(evals: &[Eval]) -> Option<String> {
    let with_threshold = evals.iter().filter(|e| e.pass.is_some()).count() as u64;
    match (evals.len() as u64, with_threshold) {
        (0, _) => None,
        (n, 0) => Some(format!("{}, no threshold set", plural(n, "eval", "evals"))),
        (n, t) if t == n => Some(format!("{t} of {t} at or above threshold")),
        (n, t) => Some(format!(
            "{t} of {} at or above threshold ({} without one)",
            plural(n, "eval", "evals"),
            n - t
        )),
    }
}
