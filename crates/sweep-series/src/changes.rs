//! The change points of the history, each named by the runs either side of
//! it: the commit range that holds the change and the pull request of the
//! first run after it.

use serde::Serialize;

use crate::change_point::{Options, change_points};
use crate::series::{PointId, Series};
use crate::store::RunRef;

/// One change point of one series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The point's identity (JSON of its identity fields).
    pub point: PointId,
    pub metric: &'static str,
    /// Index of the first sample of the new regime in the series.
    pub index: usize,
    /// The last run before the change and the first after it: the change
    /// came in with a commit in `(before.commit, after.commit]`.
    pub before: RunRef,
    pub after: RunRef,
    /// The image of the first run after it, when it differs from before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_change: Option<(String, String)>,
    pub mean_before: f64,
    pub mean_after: f64,
    /// after / before − 1.
    pub change: f64,
    pub pvalue: f64,
}

/// Every change point of every series, by point, metric and index.
#[must_use]
pub fn changes(series: &Series, options: &Options) -> Vec<Change> {
    let mut out = Vec::new();
    for (point, metrics) in series {
        for (metric, samples) in metrics {
            let values: Vec<f64> = samples.iter().map(|s| s.value).collect();
            for c in change_points(&values, options) {
                let (b, a) = (&samples[c.index - 1], &samples[c.index]);
                out.push(Change {
                    point: point.clone(),
                    metric,
                    index: c.index,
                    before: RunRef::clone(&b.run),
                    after: RunRef::clone(&a.run),
                    image_change: (b.image != a.image)
                        .then(|| (b.image.to_string(), a.image.to_string())),
                    mean_before: c.stats.mean_before,
                    mean_after: c.stats.mean_after,
                    change: c.stats.forward_change(),
                    pvalue: c.stats.pvalue,
                });
            }
        }
    }
    out
}

/// The change points of `series` that its runs dated before `since` (RFC
/// 3339, as the store writes dates) did not show yet: what the runs since
/// then revealed, for a digest after an append or once a day. A change
/// point counts as known when the older runs have one on the same point
/// and metric whose first run after it lies within one sample of it: more
/// runs of the new regime can move the estimate by a sample.
#[must_use]
pub fn new_since(series: &Series, since: &str, options: &Options) -> Vec<Change> {
    let older: Series = series
        .iter()
        .map(|(point, metrics)| {
            let metrics = metrics
                .iter()
                .map(|(metric, samples)| {
                    let kept = samples
                        .iter()
                        .filter(|s| s.run.date.as_str() < since)
                        .cloned()
                        .collect();
                    (*metric, kept)
                })
                .collect();
            (point.clone(), metrics)
        })
        .collect();
    let known = changes(&older, options);
    changes(series, options)
        .into_iter()
        .filter(|c| {
            let samples = &series[&c.point][c.metric];
            !known.iter().any(|k| {
                k.point == c.point
                    && k.metric == c.metric
                    && samples
                        .iter()
                        .position(|s| {
                            s.run.run_id == k.after.run_id && s.run.attempt == k.after.attempt
                        })
                        .is_some_and(|i| i.abs_diff(c.index) <= 1)
            })
        })
        .collect()
}
