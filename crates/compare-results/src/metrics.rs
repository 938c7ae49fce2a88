//! Metric definitions (spec `results.md` §8.4): which row fields are
//! compared, which direction is better, how they are displayed and the
//! default tolerance of each. Three sets: the four-metric default of the
//! published PR comparison, an extended set, and the reference's 13-metric
//! table for drop-in users of `compare_results.py`.

use serde::Serialize;

/// Whether a metric counts as throughput or latency in the strict verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Throughput,
    Latency,
}

/// One compared metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricDef {
    pub key: &'static str,
    pub label: &'static str,
    /// Short name used in the verdict line (`tput`, `TPOT`, …).
    #[serde(skip)]
    pub short: &'static str,
    pub higher_is_better: bool,
    pub display_scale: f64,
    pub decimals: usize,
    pub kind: Kind,
    #[serde(skip)]
    pub default_tolerance: f64,
}

/// Named metric sets selectable with `--metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MetricSet {
    /// tput/GPU, output tput/GPU, mean TPOT, mean TTFT.
    Default,
    /// The default four, input tput/GPU and the reference's percentiles.
    Extended,
    /// Exactly the reference `compare_results.py` table (13 metrics).
    Reference,
}

// A positional constructor keeps the metric tables one line per metric.
#[allow(clippy::too_many_arguments)]
const fn m(
    key: &'static str,
    label: &'static str,
    short: &'static str,
    higher_is_better: bool,
    display_scale: f64,
    decimals: usize,
    kind: Kind,
    default_tolerance: f64,
) -> MetricDef {
    MetricDef {
        key,
        label,
        short,
        higher_is_better,
        display_scale,
        decimals,
        kind,
        default_tolerance,
    }
}

use Kind::{Latency, Throughput};

const DEFAULT: &[MetricDef] = &[
    m(
        "tput_per_gpu",
        "tput/GPU (tok/s)",
        "tput",
        true,
        1.0,
        1,
        Throughput,
        0.05,
    ),
    m(
        "output_tput_per_gpu",
        "output tput/GPU (tok/s)",
        "output tput",
        true,
        1.0,
        1,
        Throughput,
        0.05,
    ),
    m(
        "mean_tpot",
        "mean TPOT (ms)",
        "TPOT",
        false,
        1000.0,
        2,
        Latency,
        0.05,
    ),
    // TTFT is the noisiest of the four, hence the wider band.
    m(
        "mean_ttft",
        "mean TTFT (ms)",
        "TTFT",
        false,
        1000.0,
        1,
        Latency,
        0.10,
    ),
];

const EXTRA: &[MetricDef] = &[
    m(
        "input_tput_per_gpu",
        "input tput/GPU (tok/s)",
        "input tput",
        true,
        1.0,
        1,
        Throughput,
        0.05,
    ),
    m(
        "median_ttft",
        "median TTFT (ms)",
        "median TTFT",
        false,
        1000.0,
        1,
        Latency,
        0.10,
    ),
    m(
        "p90_ttft",
        "p90 TTFT (ms)",
        "p90 TTFT",
        false,
        1000.0,
        1,
        Latency,
        0.10,
    ),
    m(
        "p99_ttft",
        "p99 TTFT (ms)",
        "p99 TTFT",
        false,
        1000.0,
        1,
        Latency,
        0.10,
    ),
    m(
        "p99.9_ttft",
        "p99.9 TTFT (ms)",
        "p99.9 TTFT",
        false,
        1000.0,
        1,
        Latency,
        0.10,
    ),
    m(
        "median_intvty",
        "median intvty (tok/s/user)",
        "median intvty",
        true,
        1.0,
        2,
        Latency,
        0.05,
    ),
    m(
        "p90_intvty",
        "intvty@p90 TPOT",
        "p90 intvty",
        true,
        1.0,
        2,
        Latency,
        0.05,
    ),
    m(
        "p99_intvty",
        "intvty@p99 TPOT",
        "p99 intvty",
        true,
        1.0,
        2,
        Latency,
        0.05,
    ),
    m(
        "p99.9_intvty",
        "intvty@p99.9 TPOT",
        "p99.9 intvty",
        true,
        1.0,
        2,
        Latency,
        0.05,
    ),
    m(
        "median_e2el",
        "median E2EL (s)",
        "median E2EL",
        false,
        1.0,
        3,
        Latency,
        0.05,
    ),
    m(
        "p90_e2el",
        "p90 E2EL (s)",
        "p90 E2EL",
        false,
        1.0,
        3,
        Latency,
        0.05,
    ),
    m(
        "p99_e2el",
        "p99 E2EL (s)",
        "p99 E2EL",
        false,
        1.0,
        3,
        Latency,
        0.05,
    ),
    m(
        "p99.9_e2el",
        "p99.9 E2EL (s)",
        "p99.9 E2EL",
        false,
        1.0,
        3,
        Latency,
        0.05,
    ),
];

/// The reference's columns: labels, formats and ms display as in
/// `compare_results.py` (TTFT ×1000, everything with 4 decimals but
/// TPUT/GPU with 2).
const REFERENCE: &[MetricDef] = &[
    m(
        "tput_per_gpu",
        "TPUT/GPU",
        "tput",
        true,
        1.0,
        2,
        Throughput,
        0.05,
    ),
    m(
        "median_ttft",
        "TTFT Median (ms)",
        "median TTFT",
        false,
        1000.0,
        4,
        Latency,
        0.10,
    ),
    m(
        "p90_ttft",
        "TTFT P90 (ms)",
        "p90 TTFT",
        false,
        1000.0,
        4,
        Latency,
        0.10,
    ),
    m(
        "p99_ttft",
        "TTFT P99 (ms)",
        "p99 TTFT",
        false,
        1000.0,
        4,
        Latency,
        0.10,
    ),
    m(
        "p99.9_ttft",
        "TTFT P99.9 (ms)",
        "p99.9 TTFT",
        false,
        1000.0,
        4,
        Latency,
        0.10,
    ),
    m(
        "median_intvty",
        "Intvty Median",
        "median intvty",
        true,
        1.0,
        4,
        Latency,
        0.05,
    ),
    m(
        "p90_intvty",
        "Intvty@P90 TPOT",
        "p90 intvty",
        true,
        1.0,
        4,
        Latency,
        0.05,
    ),
    m(
        "p99_intvty",
        "Intvty@P99 TPOT",
        "p99 intvty",
        true,
        1.0,
        4,
        Latency,
        0.05,
    ),
    m(
        "p99.9_intvty",
        "Intvty@P99.9 TPOT",
        "p99.9 intvty",
        true,
        1.0,
        4,
        Latency,
        0.05,
    ),
    m(
        "median_e2el",
        "E2EL Median (s)",
        "median E2EL",
        false,
        1.0,
        4,
        Latency,
        0.05,
    ),
    m(
        "p90_e2el",
        "E2EL P90 (s)",
        "p90 E2EL",
        false,
        1.0,
        4,
        Latency,
        0.05,
    ),
    m(
        "p99_e2el",
        "E2EL P99 (s)",
        "p99 E2EL",
        false,
        1.0,
        4,
        Latency,
        0.05,
    ),
    m(
        "p99.9_e2el",
        "E2EL P99.9 (s)",
        "p99.9 E2EL",
        false,
        1.0,
        4,
        Latency,
        0.05,
    ),
];

impl MetricSet {
    pub fn defs(self) -> Vec<MetricDef> {
        match self {
            MetricSet::Default => DEFAULT.to_vec(),
            MetricSet::Extended => DEFAULT.iter().chain(EXTRA).cloned().collect(),
            MetricSet::Reference => REFERENCE.to_vec(),
        }
    }
}

/// Every metric key any set knows (for validating `--tolerance` keys).
pub fn known_keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = DEFAULT
        .iter()
        .chain(EXTRA)
        .chain(REFERENCE)
        .map(|d| d.key)
        .collect();
    keys.dedup();
    let mut seen = std::collections::BTreeSet::new();
    keys.retain(|k| seen.insert(*k));
    keys
}

/// The metric key a `--tolerance` name means: a key (`tput_per_gpu`) or
/// the short name the report prints (`tput`, `output tput`, `TPOT`),
/// compared without case, with spaces and dashes read as `_`; `None` when
/// no metric has that name.
pub fn resolve_key(name: &str) -> Option<&'static str> {
    let norm = |s: &str| s.trim().to_ascii_lowercase().replace([' ', '-'], "_");
    let want = norm(name);
    let defs = || DEFAULT.iter().chain(EXTRA).chain(REFERENCE);
    defs()
        .find(|d| d.key == want)
        .or_else(|| defs().find(|d| norm(d.short) == want))
        .map(|d| d.key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_names_are_keys_or_the_short_names_the_report_prints() {
        assert_eq!(resolve_key("tput_per_gpu"), Some("tput_per_gpu"));
        assert_eq!(resolve_key("tput"), Some("tput_per_gpu"));
        assert_eq!(resolve_key("output tput"), Some("output_tput_per_gpu"));
        assert_eq!(resolve_key("TPOT"), Some("mean_tpot"));
        assert_eq!(resolve_key("ttft"), Some("mean_ttft"));
        assert_eq!(resolve_key("p99 TTFT"), Some("p99_ttft"));
        assert_eq!(resolve_key("bogus"), None);
    }

    #[test]
    fn reference_set_has_the_thirteen_columns() {
        let defs = MetricSet::Reference.defs();
        assert_eq!(defs.len(), 13);
        assert_eq!(defs[0].key, "tput_per_gpu");
        assert_eq!(defs[12].key, "p99.9_e2el");
    }

    #[test]
    fn extended_set_is_default_plus_extras_without_repeats() {
        let keys: Vec<_> = MetricSet::Extended.defs().iter().map(|d| d.key).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), keys.len());
        assert_eq!(
            &keys[..4],
            &[
                "tput_per_gpu",
                "output_tput_per_gpu",
                "mean_tpot",
                "mean_ttft"
            ]
        );
    }
}
