//! compare-results' verdict for a reader: the `summary` object of
//! `compare.json`, written by compare-results and read by visualizer-comment
//! (the PR comment's heading, the "sweep verdict" check run). One type for
//! both tools, every count once (in [`Counts`]); its JSON schema is checked
//! in as `docs/compare.schema.json` (compare-results' `schema` test keeps the
//! two equal and validates real reports against it).
//!
//! Unknown fields and unknown verdicts are refused when read, so a report of
//! another layout never turns into a green heading (fail closed).

use serde::{Deserialize, Serialize};

/// The layout of `compare.json` (its `schema_version`, the reference's 1:
/// the summary is an addition inside it).
pub const SCHEMA_VERSION: u64 = 1;

/// The one verdict of a comparison: the performance points and the evals
/// together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A point regressed beyond tolerance (evals may have failed too).
    Regressions,
    /// No point regressed, an eval scored below its threshold.
    EvalsFailed,
    /// The sweep gave no new result row: nothing could be compared.
    NoResults,
    /// Compared (or nothing matched a baseline), nothing regressed, every
    /// eval at or above its threshold.
    NoRegressions,
}

impl Verdict {
    /// The verdict's word in `compare.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regressions => "regressions",
            Verdict::EvalsFailed => "evals_failed",
            Verdict::NoResults => "no_results",
            Verdict::NoRegressions => "no_regressions",
        }
    }

    /// Whether the verdict says no (a gate fails on it).
    pub fn fails(self) -> bool {
        !matches!(self, Verdict::NoRegressions)
    }
}

/// Every count of a comparison, each once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    /// New result rows read (0: no results arrived).
    pub new_rows: u64,
    /// Points in both runs.
    pub matched: u64,
    pub regressed_points: u64,
    /// Regressed metrics over the regressed points.
    pub regressed_metrics: u64,
    pub improved: u64,
    pub unchanged: u64,
    pub inconclusive: u64,
    /// Matched points (in any state) whose baseline ran on other hardware.
    pub other_hardware: u64,
    /// New points without a baseline point.
    pub no_baseline: u64,
    /// Baseline points this run did not re-run.
    pub not_rerun: u64,
    /// Eval results read.
    pub evals: u64,
    /// Eval results below their threshold.
    pub evals_failed: u64,
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Counts {
    /// Every count in one line, always in this order: `2 points regressed
    /// (4 metrics) · 3 improved · 2 unchanged · 0 inconclusive · 1 not
    /// re-run · 0 no baseline · 1 eval failed` (`no evals` when none ran).
    /// The PR comment's heading and the report's verdict line.
    pub fn line(&self) -> String {
        let evals = if self.evals == 0 {
            "no evals".to_string()
        } else {
            format!("{} failed", plural(self.evals_failed, "eval", "evals"))
        };
        format!(
            "{} regressed ({}) · {} improved · {} unchanged · {} inconclusive · {} not re-run · {} no baseline · {evals}",
            plural(self.regressed_points, "point", "points"),
            plural(self.regressed_metrics, "metric", "metrics"),
            self.improved,
            self.unchanged,
            self.inconclusive,
            self.not_rerun,
            self.no_baseline,
        )
    }
}

/// What the new run was compared with, for the provenance line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineRef {
    /// How the report names it (`main @ 1a2b3c4 (run 123, 2026-12-01)`,
    /// a file name).
    pub label: String,
    /// Where it came from: `agg`, `api`, `url`, `db`, `last-main-run`, `none`.
    pub source: String,
    /// The baseline run's commit (`last-main-run`).
    pub sha: Option<String>,
    /// The baseline run's page (`last-main-run`).
    pub run_url: Option<String>,
    /// The day the baseline ran (`YYYY-MM-DD`, `last-main-run`).
    pub date: Option<String>,
    /// The baseline file's name (a `--baseline` file).
    pub file: Option<String>,
}

/// A regressed metric at a point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Regression {
    pub group: String,
    pub point: String,
    pub metric: String,
    /// `▼ -11.1 % (1800.0 → 1600.0)`
    pub change: String,
    pub tolerance: String,
}

/// A regressed point: its largest regressed change and the others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopRegression {
    pub group: String,
    pub point: String,
    pub metric: String,
    pub change: String,
    pub also: Vec<String>,
    pub other_hardware: bool,
}

/// One eval result against its threshold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Eval {
    /// The configuration as the benchmark tables name it.
    pub configuration: String,
    pub point: String,
    pub task: String,
    /// `96.82 %`
    pub score: String,
    /// `94 %`, absent when no threshold applies.
    pub threshold: Option<String>,
    /// Against the threshold; absent without one.
    pub pass: Option<bool>,
}

/// A configuration's impact: the median change of the primary metric over
/// its matched points, the figure a reviewer quotes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Impact {
    pub group: String,
    /// The primary metric's label.
    pub metric: String,
    /// `▼ -12.0 %`
    pub median_change: String,
    /// Whether that change is better (`true`), worse (`false`) or neither
    /// (absent) for the metric.
    pub better: Option<bool>,
}

/// The `summary` object of `compare.json`: display strings (raw; a reader
/// escapes them for markdown) and the counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareSummary {
    pub verdict: Verdict,
    pub baseline: BaselineRef,
    /// [`Counts::line`]: the heading's words, so the heading and the report
    /// agree.
    pub line: String,
    pub counts: Counts,
    /// Every regressed metric.
    pub regressions: Vec<Regression>,
    /// The regressed points, largest change first.
    pub top_regressions: Vec<TopRegression>,
    /// Per configuration, worst first.
    pub impacts: Vec<Impact>,
    pub evals: Vec<Eval>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_verdict_is_refused() {
        let e = serde_json::from_str::<Verdict>("\"all_good\"");
        assert!(e.is_err(), "{e:?}");
        assert_eq!(
            serde_json::from_str::<Verdict>("\"evals_failed\"").ok(),
            Some(Verdict::EvalsFailed)
        );
        for v in [
            Verdict::Regressions,
            Verdict::EvalsFailed,
            Verdict::NoResults,
            Verdict::NoRegressions,
        ] {
            assert_eq!(
                serde_json::to_value(v).ok(),
                Some(serde_json::Value::from(v.as_str()))
            );
        }
    }

    #[test]
    fn an_unknown_count_is_refused() {
        let e = serde_json::from_str::<Counts>(r#"{"matched": 1, "regresed_points": 0}"#);
        assert!(e.is_err());
    }
}
