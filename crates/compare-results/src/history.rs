//! `--baseline-from history`: main's history as the baseline. Each new
//! point is compared with its own series in the store (same identity, same
//! hardware: another hardware lives in another file and never mixes in),
//! learnt by `sweep_series::baseline` since the series' last change point.
//! A point the history lacks has no baseline (unmatched, as with any
//! other source); a metric with fewer values than the learnt boundary needs
//! is judged by the tolerance against the values there are, and the report
//! says so per row.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use sweep_series::baseline::{Learnt, learn_rows};
use sweep_series::boundary::Settings;
use sweep_series::change_point::Options as ChangeOptions;
use sweep_series::series::Better;
use sweep_series::store::{RunRef, StoreError};

use crate::compare::{HistoryPolicy, Row, Stats};
use crate::key::{Origin, PointKey};
use crate::metrics::MetricDef;

/// A change point the history takes as the start of a series' current
/// level: the settings `sweep-history changes` and `show` use, so the
/// compare and the digest agree on where a series' level begins.
pub fn change_options() -> ChangeOptions {
    sweep_series::baseline::change_options()
}

/// The history as a baseline: one row per new point the history has (its
/// metrics the means of the values learnt from), and what was learnt.
#[derive(Debug)]
pub struct HistoryBaseline {
    pub rows: Vec<Row>,
    pub policy: HistoryPolicy,
    /// Where the store is (for messages; no password).
    pub store: String,
    /// Runs in the history's index.
    pub runs: usize,
    /// The newest of the runs the baseline's values came from.
    pub newest: Option<RunRef>,
}

/// Reads the history at `spec` (a folder or a `postgres://` URL) for the
/// points of `new`.
///
/// # Errors
/// The store cannot be opened or read, a line of it is corrupt (named by
/// file and line), or a new row is not a benchmark row the store can place.
pub fn load(
    spec: &str,
    new: &[Row],
    metrics: &[MetricDef],
    settings: Settings,
) -> Result<HistoryBaseline, StoreError> {
    let store = sweep_series::open_existing(spec)?;
    let runs = store.runs()?.len();
    // One row per point: repeats of a point share its series.
    let mut firsts: Vec<&Row> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for row in new {
        if seen.insert(row.key.clone()) {
            firsts.push(row);
        }
    }
    let watched: Vec<(&'static str, Better)> = metrics
        .iter()
        .map(|d| {
            let better = if d.higher_is_better {
                Better::Higher
            } else {
                Better::Lower
            };
            (d.key, better)
        })
        .collect();
    let maps: Vec<&Map<String, Value>> = firsts.iter().map(|r| &r.metrics).collect();
    let learnt = learn_rows(&*store, &maps, &watched, &settings, &change_options())?;

    let mut rows = Vec::new();
    let mut by_key: BTreeMap<PointKey, BTreeMap<&'static str, Learnt>> = BTreeMap::new();
    let mut newest: Option<RunRef> = None;
    for (row, per_metric) in firsts.iter().zip(learnt) {
        if per_metric.values().all(|l| l.values.is_empty()) {
            continue; // no history for this point: no baseline
        }
        let mut metrics_of = row.metrics.clone();
        // What the new row ran, not the history's: named by the runs.
        for k in ["image", "image_digest"] {
            metrics_of.remove(k);
        }
        for (metric, l) in &per_metric {
            match Stats::of(&l.values) {
                Some(s) => metrics_of.insert((*metric).to_string(), s.mean.into()),
                None => metrics_of.remove(*metric),
            };
            if let Some(r) = l.runs.last()
                && newest
                    .as_ref()
                    .is_none_or(|n| (&r.date, r.run_id) > (&n.date, n.run_id))
            {
                newest = Some(r.clone());
            }
        }
        rows.push(Row {
            key: row.key.clone(),
            metrics: metrics_of,
            origin: Origin {
                path: format!("{} (history)", store.describe()),
                index: None,
            },
        });
        by_key.insert(row.key.clone(), per_metric);
    }
    Ok(HistoryBaseline {
        rows,
        policy: HistoryPolicy {
            settings,
            learnt: by_key,
        },
        store: store.describe(),
        runs,
        newest,
    })
}
