//! The series of the history: one per benchmark point (its identity on one
//! hardware) and metric, the values in the order main measured them, each
//! with the run it came from.
//!
//! A point's identity is what the configuration asked for: hardware (the
//! cluster, not the node: [`crate::store::hardware`]), model prefix,
//! framework, precision, speculative decoding, sequence lengths, topology
//! and concurrency. What a change changes is not part of it (the
//! image, the served model id, the recipe fingerprint, the router and KV
//! transfer settings), so a PR that bumps an image continues its series
//! instead of starting a new one — which is what lets a change point name
//! the PR.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

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
    pub run: RunRef,
    /// The image the run served, to show what changed at a change point.
    pub image: String,
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
                ("hw", Value::String(hw)) => Value::String(crate::store::hardware(hw)),
                _ => v.clone(),
            };
            Some(((*k).to_string(), v))
        })
        .collect();
    Value::Object(id).to_string()
}

/// The watched series of benchmark `lines`, each in the order main ran
/// them (run date, then run id and attempt: a backfill appends older runs
/// after newer ones). Eval lines are passed over, and so are values that
/// are missing or not finite (a gap in that metric's series, not a zero).
#[must_use]
pub fn series(lines: &[Line]) -> Series {
    let watched: Vec<&'static str> = WATCHED.iter().map(|(m, _)| *m).collect();
    series_of(lines, &watched)
}

/// [`series`] of the named `metrics` instead of the watched ones (the
/// metrics a comparison reads, say).
#[must_use]
pub fn series_of(lines: &[Line], metrics: &[&'static str]) -> Series {
    let mut out = Series::new();
    for line in lines {
        if line.kind != Kind::Benchmark {
            continue;
        }
        let id = point_id(&line.row);
        let image = line.row.get("image").and_then(Value::as_str).unwrap_or("");
        for metric in metrics {
            let Some(value) = line
                .row
                .get(*metric)
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite())
            else {
                continue;
            };
            out.entry(id.clone())
                .or_default()
                .entry(metric)
                .or_default()
                .push(Sample {
                    value,
                    run: line.run.clone(),
                    image: image.to_string(),
                });
        }
    }
    for metrics in out.values_mut() {
        for samples in metrics.values_mut() {
            // Stable: lines of one run keep their order.
            samples.sort_by(|a, b| {
                (&a.run.date, a.run.run_id, a.run.attempt).cmp(&(
                    &b.run.date,
                    b.run.run_id,
                    b.run.attempt,
                ))
            });
        }
    }
    out
}

/// The direction of a watched metric.
#[must_use]
pub fn better(metric: &str) -> Option<Better> {
    WATCHED.iter().find(|(m, _)| *m == metric).map(|(_, b)| *b)
}
