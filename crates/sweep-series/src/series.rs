//! The series of the history: one per benchmark point (its identity on one
//! hardware) and metric, the values in the order main measured them, each
//! with the run it came from.
//!
//! A point's identity is what the configuration asked for: hardware, model
//! prefix, framework, precision, speculative decoding, sequence lengths,
//! topology and concurrency. What a change changes is not part of it (the
//! image, the served model id, the recipe fingerprint, the router and KV
//! transfer settings), so a PR that bumps an image continues its series
//! instead of starting a new one — which is what lets a change point name
//! the PR.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use sweep_model::results::ResultRow;

use crate::store::{Kind, Line, RunRef};

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

/// Fields of a row that are not part of a point's identity: the measured
/// values and what a change may change.
const NOT_IDENTITY: &[&str] = &[
    "tput_per_gpu",
    "output_tput_per_gpu",
    "input_tput_per_gpu",
    "image",
    "model",
    "recipe_fingerprint",
    "router",
    "kv_p2p_transfer",
];

/// A point's identity: its identity fields as compact JSON in the row's
/// field order (stable across runs: the aggregate writes them in one order).
pub type PointId = String;

/// One measured value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub value: f64,
    pub run: RunRef,
    /// The image the run served, to show what changed at a change point.
    pub image: String,
}

/// Every watched series of some lines: point, then metric, then samples in
/// the order of the lines.
pub type Series = BTreeMap<PointId, BTreeMap<&'static str, Vec<Sample>>>;

/// The identity of a benchmark row.
#[must_use]
pub fn point_id(row: &ResultRow) -> PointId {
    let mut id = row.row.to_map();
    id.retain(|k, _| !NOT_IDENTITY.contains(&k.as_str()) && !row.row.metrics.contains_key(k));
    Value::Object(id).to_string()
}

/// The watched series of benchmark `lines`. Lines that are not benchmark
/// rows, and values that are missing or not finite, are passed over (a
/// missing value is a gap in that metric's series, not a zero).
#[must_use]
pub fn series(lines: &[Line]) -> Series {
    let mut out = Series::new();
    for line in lines {
        if line.kind != Kind::Benchmark {
            continue;
        }
        let Ok(row) = ResultRow::try_from(line.row.clone()) else {
            continue;
        };
        let id = point_id(&row);
        for (metric, _) in WATCHED {
            let Some(value) = value(&row, &line.row, metric) else {
                continue;
            };
            out.entry(id.clone())
                .or_default()
                .entry(metric)
                .or_default()
                .push(Sample {
                    value,
                    run: line.run.clone(),
                    image: row.row.image.clone(),
                });
        }
    }
    out
}

fn value(row: &ResultRow, raw: &Map<String, Value>, metric: &str) -> Option<f64> {
    let v = match metric {
        "tput_per_gpu" => Some(row.row.tput_per_gpu),
        "output_tput_per_gpu" => Some(row.row.output_tput_per_gpu),
        _ => raw.get(metric).and_then(Value::as_f64),
    }?;
    v.is_finite().then_some(v)
}

/// The direction of a watched metric.
#[must_use]
pub fn better(metric: &str) -> Option<Better> {
    WATCHED.iter().find(|(m, _)| *m == metric).map(|(_, b)| *b)
}
