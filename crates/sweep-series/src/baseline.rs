//! The history as a baseline: each new point judged against its own series
//! (same identity, same hardware; another hardware never mixes in, since it
//! lives in another file) with the boundary learnt from the series since its
//! last change point. This is what `compare-results --baseline history`
//! reports per row; with too few values it says so, and the caller falls
//! back to its fixed tolerance.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::boundary::{Boundary, Judgement, Settings, learn};
use crate::change_point::{Options, change_points};
use crate::series::{Better, PointId, Sample, Scope, Series, WATCHED, point_id};
use crate::store::{History, Kind, RunRef, StoreError, file_of};

/// How many of the newest runs a judgement names as its baseline.
pub const NAMED_RUNS: usize = 5;

/// How many of a series' newest main runs a trend picture shows before a
/// PR's value: a month of daily runs, readable in a half-width panel.
pub const TREND_RUNS: usize = 30;

/// Where a series' current level begins, for a comparison and for
/// `sweep-history show`: Otava's p-value, and a change of at least 2 %
/// (the defaults of `sweep-history changes`, so the digest and a compare
/// agree on the levels).
#[must_use]
pub fn change_options() -> Options {
    Options {
        max_pvalue: 0.001,
        min_magnitude: 0.02,
        ..Options::default()
    }
}

/// One new value judged against its series.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub point: PointId,
    pub metric: &'static str,
    pub value: f64,
    /// Values of the series (since its last change point) the boundary was
    /// learnt from, or would have been.
    pub samples: usize,
    /// The newest runs of those values (at most [`NAMED_RUNS`], newest
    /// last): the baseline's commits and dates.
    pub runs: Vec<RunRef>,
    /// The learnt boundary and the judgement, or why there is none.
    pub verdict: Result<(Boundary, Judgement), Fallback>,
}

/// Why a value has no learnt boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// The point has no series in the history.
    NoSeries,
    /// Fewer values since the last change point than the settings need.
    TooFew { have: usize, need: usize },
    /// The series' mean is zero (no relative boundary).
    ZeroMean,
}

impl std::fmt::Display for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fallback::NoSeries => write!(f, "no history for this point"),
            Fallback::TooFew { have, need } => {
                write!(f, "{have} of the {need} main runs a learnt boundary needs")
            }
            Fallback::ZeroMean => write!(f, "the history's mean is zero"),
        }
    }
}

/// How many of a point's newest rows (its newest main runs) a comparison
/// reads and searches for the last change point of each series. A boundary
/// uses at most the newest `Settings::window` (30) values after it, so a
/// change further back than this never moves the boundary, and a PR's
/// compare neither reads a thousand runs of every configuration nor runs
/// E-Divisive over them (the cost of `sweep-history changes`, per PR).
pub const CHANGE_SCAN: usize = 200;

/// The newest values of a series since its last change point (searched in
/// the newest [`CHANGE_SCAN`]): a shift that main already took is the
/// series' new level, not noise.
fn since_last_change<'a>(samples: &'a [Sample], options: &Options) -> &'a [Sample] {
    let scanned = &samples[samples.len().saturating_sub(CHANGE_SCAN)..];
    let values: Vec<f64> = scanned.iter().map(|s| s.value).collect();
    let start = change_points(&values, options)
        .last()
        .map_or(0, |c| c.index);
    &scanned[start..]
}

/// What the history says of one metric at one point: the values a
/// boundary is learnt from (the newest `settings.window` since the last
/// change point, oldest first), their newest runs, and the boundary or why
/// there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct Learnt {
    pub values: Vec<f64>,
    /// The newest [`TREND_RUNS`] samples of the series as read, before and
    /// after its last change point: what a trend picture shows.
    pub recent: Vec<Sample>,
    /// The newest runs of those values (at most [`NAMED_RUNS`], newest
    /// last): the baseline's commits and dates.
    pub runs: Vec<RunRef>,
    pub verdict: Result<Boundary, Fallback>,
}

/// Learns one metric of one series (`samples` oldest first; `None` is a
/// point the history does not have).
#[must_use]
pub fn learn_samples(
    samples: Option<&[Sample]>,
    better: Better,
    settings: &Settings,
    options: &Options,
) -> Learnt {
    let Some(samples) = samples else {
        return Learnt {
            values: Vec::new(),
            recent: Vec::new(),
            runs: Vec::new(),
            verdict: Err(Fallback::NoSeries),
        };
    };
    let since = since_last_change(samples, options);
    let used = &since[since.len().saturating_sub(settings.window.max(2))..];
    let values: Vec<f64> = used.iter().map(|s| s.value).collect();
    let runs = used[used.len().saturating_sub(NAMED_RUNS)..]
        .iter()
        .map(|s| RunRef::clone(&s.run))
        .collect();
    let verdict = if values.len() < settings.min_samples {
        Err(Fallback::TooFew {
            have: values.len(),
            need: settings.min_samples,
        })
    } else {
        learn(&values, better, settings).ok_or(Fallback::ZeroMean)
    };
    Learnt {
        values,
        recent: samples[samples.len().saturating_sub(TREND_RUNS)..].to_vec(),
        runs,
        verdict,
    }
}

/// Learns `metrics` of every benchmark row of `new` from the history: one
/// map per row, in the order of `new`, with an entry for each metric (a
/// point the history lacks has [`Fallback::NoSeries`]). Each configuration's
/// file is read once.
///
/// # Errors
/// A row is not a benchmark row, or the store cannot be read.
pub fn learn_rows(
    store: &dyn History,
    new: &[&Map<String, Value>],
    metrics: &[(&'static str, Better)],
    settings: &Settings,
    options: &Options,
) -> Result<Vec<BTreeMap<&'static str, Learnt>>, StoreError> {
    let names: Vec<&'static str> = metrics.iter().map(|(m, _)| *m).collect();
    let mut placed = Vec::with_capacity(new.len());
    let mut wanted: BTreeMap<String, BTreeSet<PointId>> = BTreeMap::new();
    for (index, row) in new.iter().enumerate() {
        let file = file_of(Kind::Benchmark, row).map_err(|cause| StoreError::BadRow {
            what: "new",
            index,
            cause,
        })?;
        let point = point_id(row);
        wanted
            .entry(file.clone())
            .or_default()
            .insert(point.clone());
        placed.push((file, point));
    }
    let mut by_file: BTreeMap<&str, Series> = BTreeMap::new();
    for (file, points) in &wanted {
        let scope = Scope::Newest {
            rows: CHANGE_SCAN,
            points,
        };
        by_file.insert(file, store.series(file, &names, scope)?);
    }
    let mut out = Vec::with_capacity(new.len());
    for (file, point) in &placed {
        let point = by_file.get(file.as_str()).and_then(|s| s.get(point));
        let learnt = metrics
            .iter()
            .map(|(metric, better)| {
                let samples = point.map(|m| m.get(metric).map_or(&[][..], Vec::as_slice));
                (*metric, learn_samples(samples, *better, settings, options))
            })
            .collect();
        out.push(learnt);
    }
    Ok(out)
}

/// Judges every watched metric of every benchmark row of `new` against the
/// history.
///
/// # Errors
/// A row is not a benchmark row, or the store cannot be read.
pub fn judge(
    store: &dyn History,
    new: &[Map<String, Value>],
    settings: &Settings,
    options: &Options,
) -> Result<Vec<Judged>, StoreError> {
    let rows: Vec<&Map<String, Value>> = new.iter().collect();
    let learnt = learn_rows(store, &rows, WATCHED, settings, options)?;
    let mut out = Vec::new();
    for (row, mut metrics) in new.iter().zip(learnt) {
        let id = point_id(row);
        for (metric, _) in WATCHED {
            let Some(value) = row
                .get(*metric)
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite())
            else {
                continue;
            };
            let Some(l) = metrics.remove(metric) else {
                continue;
            };
            out.push(Judged {
                point: id.clone(),
                metric,
                value,
                samples: l.values.len(),
                runs: l.runs,
                verdict: l.verdict.map(|b| (b, b.judge(value, settings))),
            });
        }
    }
    Ok(out)
}
