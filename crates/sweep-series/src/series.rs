//! The series of the history: one per benchmark point (its identity on one
//! hardware) and metric, the values in the order main measured them, each
//! with the run it came from.
//!
//! A point's identity is what the configuration asked for: hardware (the
//! cluster, not the node: [`crate::record::hardware`]), model prefix,
//! framework, precision, speculative decoding, sequence lengths, topology
//! and concurrency. What a change changes is not part of it (the
//! image, the served model id, the recipe fingerprint, the router and KV
//! transfer settings), so a PR that bumps an image continues its series
//! instead of starting a new one — which is what lets a change point name
//! the PR.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::record::{Kind, Line, RunKey, RunRef};

/// The metrics whose series are watched for change points, with the
/// direction that is better. Throughput per GPU is the headline figure of a
/// sweep; time to first token and time per output token are the two
/// latencies a serving change moves independently.
pub const WATCHED: &[(&str, Better)] = &[
    ("tput_per_gpu", Better::Higher),
    ("output_tput_per_gpu", Better::Higher),
    ("median_ttft", Better::Lower),
    ("median_tpot", Better::Lower),
];

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// The fields of a benchmark row that make a point's identity, in the
/// aggregate's order: everything the configuration asked for. Left out on
/// purpose: the measured values, and what a change changes (`image`,
/// `model`, `recipe_fingerprint`, `router`, `kv_p2p_transfer`).
pub const IDENTITY: &[&str] = &[
    "hw",
    "conc",
    "infmax_model_prefix",
    "framework",
    "precision",
    "spec_decoding",
    "disagg",
    "isl",
    "osl",
    "is_multinode",
    "tp",
    "pp",
    "dcp_size",
    "pcp_size",
    "ep",
    "dp_attention",
    "prefill_tp",
    "prefill_pp",
    "prefill_dcp_size",
    "prefill_pcp_size",
    "prefill_ep",
    "prefill_dp_attention",
    "prefill_num_workers",
    "decode_tp",
    "decode_pp",
    "decode_dcp_size",
    "decode_pcp_size",
    "decode_ep",
    "decode_dp_attention",
    "decode_num_workers",
    "num_prefill_gpu",
    "num_decode_gpu",
    "prefill_hw",
    "decode_hw",
];

/// A point's identity: its identity fields as compact JSON, in
/// [`IDENTITY`] order.
pub type PointId = String;

/// One measured value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub value: f64,
    /// Shared by every sample of the run (a series of a thousand runs holds
    /// each run once).
    pub run: Arc<RunRef>,
    /// The image the run served, to show what changed at a change point.
    pub image: Arc<str>,
}

/// Every watched series of some lines: point, then metric, then samples in
/// the order of the lines.
pub type Series = BTreeMap<PointId, BTreeMap<&'static str, Vec<Sample>>>;

/// The identity of a benchmark row (a row as the aggregate writes it; the
/// store checked it when it was appended).
#[must_use]
pub fn point_id(row: &Map<String, Value>) -> PointId {
    let id: Map<String, Value> = IDENTITY
        .iter()
        .filter_map(|k| {
            let v = row.get(*k)?;
            // One series per hardware, whichever node of it ran the point.
            let v = match (*k, v) {
                ("hw", Value::String(hw)) => Value::String(crate::record::hardware(hw)),
                _ => v.clone(),
            };
            Some(((*k).to_string(), v))
        })
        .collect();
    Value::Object(id).to_string()
}

/// How much of a series file a reader needs.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// Every row: `sweep-history changes` and `show`.
    All,
    /// Of each of `points`, its newest `rows` rows (its newest main runs),
    /// other points left out: what a PR's comparison reads. The folder
    /// store stops reading a file once no older line can be among them.
    Newest {
        rows: usize,
        points: &'a BTreeSet<PointId>,
    },
}

impl Scope<'_> {
    /// How many of each point's newest rows are kept (`None`: all).
    pub(crate) fn newest(self) -> Option<usize> {
        match self {
            Scope::All => None,
            Scope::Newest { rows, .. } => Some(rows),
        }
    }
}

/// A benchmark row as a series keeps it: its run, image and the values of
/// the metrics asked for (in their order).
#[derive(Debug, Clone)]
pub(crate) struct PointRow {
    pub(crate) run: Arc<RunRef>,
    pub(crate) image: Arc<str>,
    pub(crate) values: Vec<Option<f64>>,
}

/// The series of the rows of each point (`points`: a point and its rows in
/// the order appended) for `metrics`, of each point its newest `newest`
/// rows if given: each point's rows in the order main ran them (run date,
/// then run id and attempt: a backfill appends older runs after newer ones;
/// rows of one run keep their order), then one series per metric. A value
/// that is missing or not finite is a gap in that metric's series, not a
/// zero.
pub(crate) fn build(
    points: impl IntoIterator<Item = (PointId, Vec<PointRow>)>,
    metrics: &[&'static str],
    newest: Option<usize>,
) -> Series {
    let mut out = Series::new();
    for (point, mut rows) in points {
        rows.sort_by(|a, b| order(&a.run).cmp(&order(&b.run)));
        if let Some(n) = newest {
            rows.drain(..rows.len().saturating_sub(n));
        }
        let mut per_metric = BTreeMap::new();
        for (j, metric) in metrics.iter().enumerate() {
            let samples: Vec<Sample> = rows
                .iter()
                .filter_map(|r| {
                    let value = r.values[j].filter(|v| v.is_finite())?;
                    Some(Sample {
                        value,
                        run: Arc::clone(&r.run),
                        image: Arc::clone(&r.image),
                    })
                })
                .collect();
            if !samples.is_empty() {
                per_metric.insert(*metric, samples);
            }
        }
        if !per_metric.is_empty() {
            out.insert(point, per_metric);
        }
    }
    out
}

/// The order main ran its runs in.
pub(crate) fn order(run: &RunRef) -> (&str, u64, u32) {
    (&run.date, run.run_id, run.attempt)
}

/// The watched series of benchmark `lines`, each in the order main ran
/// them (run date, then run id and attempt: a backfill appends older runs
/// after newer ones; rows of one run keep their order). Eval lines are
/// passed over, and so are values that are missing or not finite (a gap in
/// that metric's series, not a zero).
#[must_use]
pub fn series(lines: &[Line]) -> Series {
    let watched: Vec<&'static str> = WATCHED.iter().map(|(m, _)| *m).collect();
    series_of(lines, &watched)
}

/// [`series`] of the named `metrics` instead of the watched ones (the
/// metrics a comparison reads, say).
#[must_use]
pub fn series_of(lines: &[Line], metrics: &[&'static str]) -> Series {
    series_in(lines, metrics, Scope::All)
}

/// [`series_of`] within `scope`.
#[must_use]
pub fn series_in(lines: &[Line], metrics: &[&'static str], scope: Scope<'_>) -> Series {
    let mut runs: BTreeMap<RunKey, Arc<RunRef>> = BTreeMap::new();
    let mut points: BTreeMap<PointId, Vec<PointRow>> = BTreeMap::new();
    for line in lines.iter().filter(|l| l.kind == Kind::Benchmark) {
        let point = point_id(&line.row);
        if let Scope::Newest { points: wanted, .. } = scope
            && !wanted.contains(&point)
        {
            continue;
        }
        let run = runs
            .entry(line.run.key())
            .or_insert_with(|| Arc::new(line.run.clone()));
        points.entry(point).or_default().push(PointRow {
            run: Arc::clone(run),
            image: Arc::from(line.row.get("image").and_then(Value::as_str).unwrap_or("")),
            values: metrics
                .iter()
                .map(|m| line.row.get(*m).and_then(Value::as_f64))
                .collect(),
        });
    }
    build(points, metrics, scope.newest())
}

/// The direction of a watched metric.
#[must_use]
pub fn better(metric: &str) -> Option<Better> {
    WATCHED.iter().find(|(m, _)| *m == metric).map(|(_, b)| *b)
}
