//! With main's history as the baseline: each configuration's trend, the
//! newest main runs of every point (at most
//! [`sweep_series::baseline::TREND_RUNS`]) and this sweep's value last,
//! drawn by [`sweep_chart::trend`]. The metric is the one the
//! configuration's chart shows ([`crate::chart::group_metric`]: tput/GPU, or
//! the metric that regressed).

use std::collections::BTreeMap;

use sweep_chart::trend::{Panel, Trend};
use sweep_series::boundary::Settings;

use crate::chart::group_metric;
use crate::compare::{Class, Comparison, PointResult};
use crate::key::GroupKey;

/// One trend per configuration with a history, by the configuration's
/// title (the title of its chart), in the order of the groups.
#[must_use]
pub fn trends(c: &Comparison) -> BTreeMap<String, Trend> {
    let mut groups: BTreeMap<&GroupKey, Vec<&PointResult>> = BTreeMap::new();
    for p in &c.points {
        groups.entry(&p.key.group).or_default().push(p);
    }
    let settings = c.history.unwrap_or_default();
    let mut out = BTreeMap::new();
    for (group, points) in groups {
        let Some(i) = group_metric(c, &points) else {
            continue;
        };
        let metric = &c.metrics[i];
        let scale = if metric.display_scale.is_finite() && metric.display_scale > 0.0 {
            metric.display_scale
        } else {
            1.0
        };
        let panels: Vec<Panel> = points
            .iter()
            .filter_map(|p| panel(p, i, scale, &settings))
            .collect();
        if panels.is_empty() {
            continue;
        }
        let title = group.title();
        out.insert(
            title.clone(),
            Trend {
                title,
                metric: metric.label.to_string(),
                panels,
            },
        );
    }
    out
}

/// A point's panel: the history's newest values of metric `i`, the line
/// past which a value regresses (the learnt boundary or the minimum
/// practical change), and this sweep's value (ringed when the point regressed in it);
/// `None` when the history has no value of it.
fn panel(p: &PointResult, i: usize, scale: f64, settings: &Settings) -> Option<Panel> {
    let cell = p.cells.get(i)?;
    let history = cell.history.as_ref()?;
    if history.learnt.recent.is_empty() {
        return None;
    }
    Some(Panel {
        title: p.key.label(),
        main: history
            .learnt
            .recent
            .iter()
            .map(|s| s.value * scale)
            .collect(),
        limit: history
            .boundary()
            .map(|b| b.regression_limit(settings) * scale),
        new: cell.new.map(|v| {
            let regressed = p.regressed && cell.class == Some(Class::Regression);
            (v * scale, regressed)
        }),
    })
}
