//! Pictures of the comparison, baseline against new, per group (one
//! configuration) and per topology; different topologies are never joined
//! into one line.
//!
//! - Markdown: one mermaid `xychart-beta` per topology (tput/GPU over
//!   concurrency), which renders in GitHub comments and job summaries.
//! - SVG (plotters), one row per group with two panels: the field's headline
//!   chart, tput/GPU against interactivity (tokens/s per user) with the
//!   Pareto frontier of each series drawn and its points marked; and
//!   tput/GPU over concurrency (log2).
//!
//! Interactivity is the row's `median_intvty` (`1 / median TPOT`, written by
//! the per-job normaliser), the value the InferenceX dashboard plots on its
//! interactivity axis; a row without it falls back to `1 / median_tpot`,
//! the same quantity.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::compare::{Class, Comparison, PointResult, Row};
use crate::key::{GroupKey, PointKey, Topology, metric_value};
use crate::metrics::MetricDef;

/// A chart could not be drawn: plotters' error (a backend's I/O or a
/// layout it refuses), by its message, as plotters' error types are generic
/// over the backend.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChartError(String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for ChartError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        ChartError(e.to_string())
    }
}

/// The metric charted on the y axis.
pub const CHART_METRIC: &str = "tput_per_gpu";

/// The interactivity field (tokens/s per user) and its fallback, the
/// median time per output token in seconds.
pub const INTERACTIVITY_METRIC: &str = "median_intvty";
pub const TPOT_FALLBACK: &str = "median_tpot";

/// Matched points of one group with both values of its metric.
pub struct GroupSeries<'a> {
    pub group: &'a GroupKey,
    /// The metric charted over concurrency ([`group_metric`]): tput/GPU,
    /// or the metric that regressed when tput/GPU did not.
    pub metric: &'a MetricDef,
    /// (topology, conc, baseline, new), in report order, in the metric's
    /// display unit (`display_scale`: TTFT in ms).
    pub points: Vec<(&'a Topology, i64, f64, f64)>,
    /// The points whose charted metric regressed: (topology, conc).
    pub regressed: Vec<(&'a Topology, i64)>,
}

impl GroupSeries<'_> {
    /// The topologies of the group, in report order.
    pub fn topologies(&self) -> Vec<&Topology> {
        let mut t: Vec<&Topology> = self.points.iter().map(|p| p.0).collect();
        t.sort();
        t.dedup();
        t
    }
}

/// Whether the cell of metric `i` of a regressed point is a regression.
fn regressed_in(p: &PointResult, i: usize) -> bool {
    p.regressed
        && p.cells
            .get(i)
            .is_some_and(|cell| cell.class == Some(Class::Regression))
}

/// The metric a group is charted by over concurrency (issue #37 item 8:
/// the panel that shows a regression is the metric that regressed):
/// [`CHART_METRIC`] when it regressed at some point of the group or
/// nothing did; else the metric with the most regressed points (the
/// first in the comparison's order on a tie), so a TTFT regression is
/// drawn as TTFT. `None` when that metric is not compared at all.
pub fn group_metric(c: &Comparison, points: &[&PointResult]) -> Option<usize> {
    let tput = c.metrics.iter().position(|d| d.key == CHART_METRIC);
    let counts: Vec<usize> = (0..c.metrics.len())
        .map(|i| points.iter().filter(|p| regressed_in(p, i)).count())
        .collect();
    if tput.is_some_and(|t| counts[t] > 0) || counts.iter().all(|n| *n == 0) {
        return tput;
    }
    let max = counts.iter().copied().max().unwrap_or(0);
    counts.iter().position(|n| *n == max)
}

/// Groups of the comparison that have something to chart over concurrency.
pub fn series(c: &Comparison) -> Vec<GroupSeries<'_>> {
    let mut groups: BTreeMap<&GroupKey, Vec<&PointResult>> = BTreeMap::new();
    for p in &c.points {
        groups.entry(&p.key.group).or_default().push(p);
    }
    groups
        .into_iter()
        .filter_map(|(group, pts)| {
            let idx = group_metric(c, &pts)?;
            let metric = &c.metrics[idx];
            let scale = if metric.display_scale.is_finite() && metric.display_scale > 0.0 {
                metric.display_scale
            } else {
                1.0
            };
            let points: Vec<_> = pts
                .iter()
                // A log axis needs positive concurrencies.
                .filter(|p| p.key.conc > 0)
                .filter_map(|p| {
                    let cell = &p.cells[idx];
                    Some((
                        &p.key.topology,
                        p.key.conc,
                        cell.baseline? * scale,
                        cell.new? * scale,
                    ))
                })
                .filter(|p| p.2.is_finite() && p.3.is_finite())
                .collect();
            let regressed = pts
                .iter()
                .filter(|p| p.key.conc > 0 && regressed_in(p, idx))
                .map(|p| (&p.key.topology, p.key.conc))
                .collect();
            (!points.is_empty()).then_some(GroupSeries {
                group,
                metric,
                points,
                regressed,
            })
        })
        .collect()
}

/// The interactivity of a row (tokens/s per user), when it has one.
pub fn interactivity(row: &Row) -> Option<f64> {
    let positive = |v: Option<f64>| v.filter(|v| v.is_finite() && *v > 0.0);
    positive(metric_value(row.metrics.get(INTERACTIVITY_METRIC))).or_else(|| {
        positive(metric_value(row.metrics.get(TPOT_FALLBACK)))
            .map(|tpot| 1.0 / tpot)
            .filter(|v| v.is_finite())
    })
}

/// One point of the interactivity chart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub conc: i64,
    /// Tokens/s per user.
    pub interactivity: f64,
    /// Tokens/s per GPU.
    pub tput: f64,
}

/// Both sides of one topology of one group.
pub struct TopologySamples<'a> {
    pub topology: &'a Topology,
    pub baseline: Vec<Sample>,
    pub new: Vec<Sample>,
}

/// One group of the interactivity chart.
pub struct FrontierGroup<'a> {
    pub group: &'a GroupKey,
    pub topologies: Vec<TopologySamples<'a>>,
}

/// Every row of both sides (matched or not: a frontier is made of all of a
/// run's points) for the groups the new run has, by topology. The first row
/// per key counts, as in the comparison.
pub fn frontier_groups<'a>(new: &'a [Row], baseline: &'a [Row]) -> Vec<FrontierGroup<'a>> {
    type Sides = (Vec<Sample>, Vec<Sample>);
    let mut groups: BTreeMap<&GroupKey, BTreeMap<&Topology, Sides>> = BTreeMap::new();
    let new_groups: std::collections::BTreeSet<&GroupKey> =
        new.iter().map(|r| &r.key.group).collect();
    for (side, rows) in [(0, new), (1, baseline)] {
        let mut seen: std::collections::BTreeSet<&PointKey> = Default::default();
        for row in rows {
            if !new_groups.contains(&row.key.group) || !seen.insert(&row.key) {
                continue;
            }
            let (Some(x), Some(y)) = (
                interactivity(row),
                metric_value(row.metrics.get(CHART_METRIC)).filter(|v| v.is_finite()),
            ) else {
                continue;
            };
            let s = Sample {
                conc: row.key.conc,
                interactivity: x,
                tput: y,
            };
            let entry = groups
                .entry(&row.key.group)
                .or_default()
                .entry(&row.key.topology)
                .or_default();
            if side == 0 {
                entry.0.push(s);
            } else {
                entry.1.push(s);
            }
        }
    }
    groups
        .into_iter()
        .map(|(group, topos)| FrontierGroup {
            group,
            topologies: topos
                .into_iter()
                .map(|(topology, (mut new, mut baseline))| {
                    new.sort_by_key(|s| s.conc);
                    baseline.sort_by_key(|s| s.conc);
                    TopologySamples {
                        topology,
                        baseline,
                        new,
                    }
                })
                .collect(),
        })
        .collect()
}

/// Indices of the Pareto frontier of `samples`: the points no other point
/// beats or equals on both interactivity and tput/GPU while beating it on
/// one. Ordered by interactivity, so joining them draws the frontier.
pub fn pareto_frontier(samples: &[Sample]) -> Vec<usize> {
    let dominated = |p: &Sample| {
        samples.iter().any(|q| {
            q.interactivity >= p.interactivity
                && q.tput >= p.tput
                && (q.interactivity > p.interactivity || q.tput > p.tput)
        })
    };
    let mut idx: Vec<usize> = (0..samples.len())
        .filter(|&i| !dominated(&samples[i]))
        .collect();
    idx.sort_by(|&a, &b| {
        samples[a]
            .interactivity
            .total_cmp(&samples[b].interactivity)
            .then(samples[b].tput.total_cmp(&samples[a].tput))
    });
    idx
}

/// A quoted mermaid label: data cannot end the quote, the line or the
/// fenced block it sits in.
fn quote(s: &str) -> String {
    format!(
        "\"{}\"",
        sweep_model::markdown::code_block_line(s).replace('"', "'")
    )
}

/// One mermaid `xychart-beta` per topology of the group with at least two
/// points (the chart cannot draw a single one; the table has it): the
/// group's metric ([`group_metric`]: tput/GPU, or the metric that
/// regressed, e.g. TTFT) over the topology's concurrencies, a baseline and
/// a new line. Returns (topology label, chart).
pub fn mermaid(s: &GroupSeries<'_>) -> Vec<(String, String)> {
    s.topologies()
        .into_iter()
        .filter_map(|topo| {
            let pts: Vec<_> = s.points.iter().filter(|p| p.0 == topo).collect();
            (pts.len() >= 2).then(|| {
                (
                    topo.label(),
                    mermaid_topology(&topo.label(), s.metric, &pts),
                )
            })
        })
        .collect()
}

/// A metric's label without its unit: `mean TTFT (ms)` → `mean TTFT`.
fn metric_name(m: &MetricDef) -> &str {
    m.label.rsplit_once(" (").map_or(m.label, |(name, _)| name)
}

/// The mermaid lines' colours, baseline then new: a blue and an orange
/// that contrast with each other and with both GitHub themes (mermaid's
/// default palette starts with a near-white that hid the baseline).
pub const MERMAID_BASELINE: &str = "#1f77b4";
pub const MERMAID_NEW: &str = "#ff7f0e";

/// The legend printed under the mermaid charts (xychart-beta draws none;
/// the title no longer carries it).
pub const MERMAID_LEGEND: &str = "Lines: 🟦 baseline · 🟧 new over concurrency (tput/GPU, or the metric that regressed, named in each chart's title)";

fn mermaid_topology(
    label: &str,
    metric: &MetricDef,
    pts: &[&(&Topology, i64, f64, f64)],
) -> String {
    let concs: Vec<String> = pts.iter().map(|p| quote(&p.1.to_string())).collect();
    let fmt = |v: f64| format!("{v:.1}");
    let base: Vec<String> = pts.iter().map(|p| fmt(p.2)).collect();
    let new: Vec<String> = pts.iter().map(|p| fmt(p.3)).collect();
    let max = pts.iter().map(|p| p.2.max(p.3)).fold(0.0_f64, f64::max);
    let min = pts
        .iter()
        .map(|p| p.2.min(p.3))
        .fold(f64::INFINITY, f64::min);
    let hi = fine_ceiling(max);
    format!(
        "%%{{init: {{\"themeVariables\": {{\"xyChart\": {{\"plotColorPalette\": \"{MERMAID_BASELINE}, {MERMAID_NEW}\"}}}}}}}}%%\nxychart-beta\n    title {}\n    x-axis {} [{}]\n    y-axis {} {} --> {}\n    line \"baseline\" [{}]\n    line \"new\" [{}]",
        quote(&format!("{label}: {}", mermaid_name(metric))),
        quote("concurrency"),
        concs.join(", "),
        quote(metric.label),
        nice_floor(min, hi),
        hi,
        base.join(", "),
        new.join(", ")
    )
}

/// The title word of a mermaid chart: `tput/GPU` as before for the
/// default metric, else the metric's name (`mean TTFT`).
fn mermaid_name(m: &MetricDef) -> &str {
    if m.key == CHART_METRIC {
        "tput/GPU"
    } else {
        metric_name(m)
    }
}

/// A concurrency tick's label: the powers of two only (concurrencies are
/// 1, 2, 4, …); the log axis's ticks between them would round to repeated
/// labels ("6 6 … 8 8").
fn conc_tick(x: &f64) -> String {
    let l = x.log2();
    if x.is_finite() && *x > 0.0 && (l - l.round()).abs() < 0.01 {
        format!("{}", x.round())
    } else {
        String::new()
    }
}

/// A round lower bound for an axis whose top is `hi` (from
/// [`nice_ceiling`]): `lo` rounded down to a tenth of `hi`, so the data
/// fills the axis instead of sitting in a corner above a zero.
fn nice_floor(lo: f64, hi: f64) -> f64 {
    let step = hi / 10.0;
    if !(lo.is_finite() && step.is_finite()) || lo <= 0.0 || step <= 0.0 {
        return 0.0;
    }
    ((lo / step).floor() * step).max(0.0)
}

/// Largest value an axis is drawn to: ten times
/// `sweep_model::ranges::MAX_FIGURE`, the largest figure the loaders let
/// in, so every accepted row fits with the axis' 5 % head room, and far
/// below where an axis bound (`1.05 ×`, the next power of ten) overflows.
pub const MAX_AXIS: f64 = 10.0 * sweep_model::ranges::MAX_FIGURE;

/// Smallest top of an axis: a chart of values below it (or of none) is
/// drawn 0..1, as for no data; plotters' tick search is only safe on
/// ranges of normal floats.
pub const MIN_AXIS: f64 = 1e-6;

/// Most tick labels on an axis. plotters' key-point search stops once a
/// finer step would give more than this many, so on a finite axis from
/// [`axis_top`] its loops are bounded by it.
pub const MAX_TICKS: usize = 10;

/// A round upper bound for an axis (1, 2 or 5 times a power of ten), for
/// the largest value `v`: total (no value makes it loop or return a
/// non-finite bound) and at most `MAX_AXIS` rounded up, at least 1 when
/// there is nothing to show (`v` at or below [`MIN_AXIS`], NaN).
fn nice_ceiling(v: f64) -> f64 {
    if v.is_nan() || v <= MIN_AXIS {
        return 1.0;
    }
    let v = v.min(MAX_AXIS);
    let mag = 10f64.powf(v.log10().floor());
    for step in [1.0, 2.0, 5.0, 10.0, 20.0] {
        if step * mag >= v * 1.05 {
            return step * mag;
        }
    }
    10.0 * mag
}

/// The top of a picture's axis for its largest value: [`nice_ceiling`],
/// after refusing a value that is not finite or beyond [`MAX_AXIS`] (the
/// loaders refuse such figures; this keeps the drawing from ever getting
/// one). The error names the axis.
///
/// # Errors
/// `v` is NaN, infinite or above [`MAX_AXIS`].
pub fn axis_top(v: f64, axis: &str) -> Result<f64, ChartError> {
    if v.is_nan() || v > MAX_AXIS {
        return Err(ChartError(format!(
            "the {axis} axis would reach {v:e}, beyond the limit of {MAX_AXIS:e} (MAX_AXIS): a figure out of range reached the chart"
        )));
    }
    Ok(fine_ceiling(v))
}

/// A round upper bound on a finer ladder than [`nice_ceiling`] (1, 1.2,
/// 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten), for the pictures: a
/// top of 2100 is drawn to 2500, not 5000, so the data fills the panel
/// (issue #37 item 8). Never above [`nice_ceiling`], total like it.
fn fine_ceiling(v: f64) -> f64 {
    if v.is_nan() || v <= MIN_AXIS {
        return 1.0;
    }
    let v = v.min(MAX_AXIS);
    let mag = 10f64.powf(v.log10().floor());
    for step in [
        1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 15.0, 20.0,
    ] {
        if step * mag >= v * 1.05 {
            return step * mag;
        }
    }
    nice_ceiling(v)
}

/// (baseline, new) colours per topology. The first (most charts have one
/// topology) is the mermaid charts' pair, [`MERMAID_BASELINE`] blue and
/// [`MERMAID_NEW`] orange, so a PNG and a mermaid chart say "baseline" and
/// "new" in the same colours (issue #37 item 8); the others are a light
/// and a dark shade of one hue, none of them blue, orange or the ring's
/// red. Public so the browser test can look for them in the rendering.
pub const PAIRS: &[(RGBColor, RGBColor)] = &[
    (RGBColor(31, 119, 180), RGBColor(255, 127, 14)),
    (RGBColor(161, 217, 155), RGBColor(35, 139, 69)),
    (RGBColor(188, 189, 220), RGBColor(106, 81, 163)),
    (RGBColor(189, 189, 189), RGBColor(82, 82, 82)),
    (RGBColor(199, 233, 192), RGBColor(0, 109, 44)),
];

/// Width of a configuration's picture, in px: about the width GitHub gives
/// an image in a PR comment, so a PNG is shown at its own size and its text
/// at the size it was drawn (the old two-panel row, 1440 px wide, shrank to
/// 61 % and its 11 px labels to under 7 px).
pub const PANEL_W: u32 = 880;
/// Height of one panel; a configuration's picture holds two, one above the
/// other (interactivity, then concurrency).
pub const PANEL_H: u32 = 540;
/// Smallest text in a picture, in px at [`PANEL_W`]: readable at comment
/// width (GitHub's own body text is 14 px).
pub const MIN_TEXT_PX: u32 = 14;
/// Captions, axis names, tick and legend labels, and the per-point labels,
/// in px as drawn.
const CAPTION_PX: f64 = 20.0;
const AXIS_PX: f64 = 16.0;
const LABEL_PX: f64 = 15.0;
const POINT_PX: f64 = MIN_TEXT_PX as f64 + 0.5;

/// plotters' SVG backend writes a font of size `s` as `font-size="s / 1.24"`
/// (its em-box convention): asked for this much more, the text is drawn
/// at the size named above (the text size test reads the SVG).
const PLOTTERS_SVG_SHRINK: f64 = 1.24;

/// A font of `px` px as drawn in the SVG.
fn font(px: f64) -> FontDesc<'static> {
    ("sans-serif", px * PLOTTERS_SVG_SHRINK).into_font()
}
/// The ring around a regressed point (a red that no topology pair uses).
pub const REGRESSED: RGBColor = RGBColor(214, 0, 0);

/// Text, axes and frames (issue #37 item 8, dark mode): the pictures have
/// a transparent background, so GitHub shows them on its own page colour;
/// this grey (GitHub's muted foreground) reads on both themes (contrast
/// 4.6:1 on white, 4.1:1 on the dark theme's #0d1117), as do the data
/// colours.
pub const INK: RGBColor = RGBColor(110, 118, 129);

/// Grid lines: the ink, faint.
fn grid() -> RGBAColor {
    INK.mix(0.18)
}

/// A font of `px` px in the ink colour.
fn ink_font(px: f64) -> TextStyle<'static> {
    font(px).color(&INK)
}

/// The points of a group that regressed: (topology, concurrency).
type RegressedSet<'a> = std::collections::BTreeSet<(&'a Topology, i64)>;

/// One configuration's picture in the making: what both panels draw.
struct GroupParts<'c, 'r> {
    key: &'c GroupKey,
    conc: Option<&'c GroupSeries<'c>>,
    frontier: Option<&'r FrontierGroup<'r>>,
    /// Every regressed point of the group (the manifest's count).
    regressed: RegressedSet<'c>,
    /// The regressed points the interactivity panel shows as regressed:
    /// those whose tput/GPU or time per output token (its two axes)
    /// regressed.
    frontier_rings: RegressedSet<'c>,
}

/// Whether metric `key` is one the interactivity panel draws: tput/GPU
/// (its y axis) or a time per output token / interactivity (its x axis).
fn on_frontier_axes(key: &str) -> bool {
    key == CHART_METRIC || key.contains("tpot") || key.contains("intvty")
}

fn group_parts<'c, 'r>(
    c: &'c Comparison,
    conc_groups: &'c [GroupSeries<'c>],
    frontier: &'r [FrontierGroup<'r>],
) -> Vec<GroupParts<'c, 'r>>
where
    'r: 'c,
{
    let mut keys: Vec<&GroupKey> = conc_groups
        .iter()
        .map(|g| g.group)
        .chain(frontier.iter().map(|g| g.group))
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|key| GroupParts {
            key,
            conc: conc_groups.iter().find(|g| g.group == key),
            frontier: frontier.iter().find(|g| g.group == key),
            regressed: c
                .points
                .iter()
                .filter(|p| p.regressed && &p.key.group == key)
                .map(|p| (&p.key.topology, p.key.conc))
                .collect(),
            frontier_rings: c
                .points
                .iter()
                .filter(|p| &p.key.group == key)
                .filter(|p| {
                    c.metrics
                        .iter()
                        .enumerate()
                        .any(|(i, d)| on_frontier_axes(d.key) && regressed_in(p, i))
                })
                .map(|p| (&p.key.topology, p.key.conc))
                .collect(),
        })
        .collect()
}

/// How many panels a configuration's own picture has: two, or one when
/// the other would only say it has nothing (no interactivity values in
/// the rows, or no matched point): no empty half-picture in the comment.
fn panels(g: &GroupParts<'_, '_>) -> u32 {
    if g.frontier.is_some() && g.conc.is_some() {
        2
    } else {
        1
    }
}

/// Draws a configuration's own picture: [`draw_group`], or its one panel.
fn draw_group_own<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    g: &GroupParts<'_, '_>,
) -> Result<(), ChartError> {
    let topos = topology_order(g.conc, g.frontier);
    match (g.frontier, g.conc) {
        (Some(_), Some(_)) => draw_group(area, g),
        (Some(f), None) => draw_frontier_panel(area, f, &topos, &g.frontier_rings),
        (None, Some(s)) => draw_concurrency_panel(area, s, &topos),
        (None, None) => draw_empty(area, g.key, "nothing to chart"),
    }
}

/// Draws one configuration (two panels, one above the other) on `area`.
fn draw_group<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    g: &GroupParts<'_, '_>,
) -> Result<(), ChartError> {
    let (top, bottom) = area.split_vertically(PANEL_H);
    let topos = topology_order(g.conc, g.frontier);
    match g.frontier {
        Some(f) => draw_frontier_panel(&top, f, &topos, &g.frontier_rings)?,
        None => draw_empty(&top, g.key, "no interactivity values")?,
    }
    match g.conc {
        Some(s) => draw_concurrency_panel(&bottom, s, &topos)?,
        None => draw_empty(&bottom, g.key, "no matched points")?,
    }
    Ok(())
}

/// The SVG document for all groups, one picture per group stacked (`None`
/// when nothing can be charted). `new` and `baseline` are the rows the
/// comparison was made from.
pub fn svg(c: &Comparison, new: &[Row], baseline: &[Row]) -> Result<Option<String>, ChartError> {
    let conc_groups = series(c);
    let frontier = frontier_groups(new, baseline);
    let parts = group_parts(c, &conc_groups, &frontier);
    if parts.is_empty() {
        return Ok(None);
    }
    let mut out = String::new();
    {
        let n = parts.len() as u32;
        let root =
            SVGBackend::with_string(&mut out, (PANEL_W, 2 * PANEL_H * n)).into_drawing_area();
        // Transparent: the page's colour shows through (dark mode).
        for (row, g) in root.split_evenly((parts.len(), 1)).iter().zip(&parts) {
            draw_group(row, g)?;
        }
        root.present()?;
    }
    Ok(Some(out))
}

/// One configuration's own picture: its title, a file name for it and its
/// SVG ([`PANEL_W`] × 2 [`PANEL_H`], or one [`PANEL_H`] when one panel
/// would be empty), which [`crate::png`] rasterises.
pub struct GroupChart {
    pub title: String,
    /// `NN-<slug>`, unique in the run, safe in a file name and a URL.
    pub stem: String,
    /// Points of the group that regressed (ringed in red).
    pub regressed: usize,
    pub svg: String,
}

/// One picture per group, in report order.
pub fn group_svgs(
    c: &Comparison,
    new: &[Row],
    baseline: &[Row],
) -> Result<Vec<GroupChart>, ChartError> {
    let conc_groups = series(c);
    let frontier = frontier_groups(new, baseline);
    let parts = group_parts(c, &conc_groups, &frontier);
    let mut charts = Vec::with_capacity(parts.len());
    for (i, g) in parts.iter().enumerate() {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (PANEL_W, panels(g) * PANEL_H))
                .into_drawing_area();
            // Transparent: the page's colour shows through (dark mode).
            draw_group_own(&root, g)?;
            root.present()?;
        }
        let title = g.key.title();
        charts.push(GroupChart {
            stem: format!("{:02}-{}", i + 1, slug(&title)),
            title,
            regressed: g.regressed.len(),
            svg: out,
        });
    }
    Ok(charts)
}

/// Longest slug of a title in a chart's file name (the index before it
/// keeps names unique; a path on the charts branch stays short).
const MAX_SLUG: usize = 60;

/// `qwen3.5 fp4 b200 sglang, 1k/1k (spec: none)` → `qwen3.5-fp4-b200-sglang-1k-1k-spec-none`:
/// lower-case ASCII letters, digits, dots and single dashes.
fn slug(title: &str) -> String {
    let mut s = String::new();
    for ch in title.chars().flat_map(char::to_lowercase) {
        if ch.is_ascii_alphanumeric() || ch == '.' {
            s.push(ch);
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    let s: String = s.chars().take(MAX_SLUG).collect();
    let s = s.trim_end_matches(['-', '.']).trim_start_matches('.');
    if s.is_empty() {
        "chart".into()
    } else {
        s.to_string()
    }
}

/// One colour pair per topology of the group, the same in both panels.
fn topology_order<'a>(
    conc: Option<&GroupSeries<'a>>,
    frontier: Option<&FrontierGroup<'a>>,
) -> Vec<&'a Topology> {
    let mut t: Vec<&Topology> = conc
        .map(|g| g.points.iter().map(|p| p.0).collect())
        .unwrap_or_default();
    if let Some(f) = frontier {
        t.extend(f.topologies.iter().map(|s| s.topology));
    }
    t.sort();
    t.dedup();
    t
}

fn colours(topos: &[&Topology], t: &Topology) -> (RGBColor, RGBColor) {
    let i = topos.iter().position(|x| *x == t).unwrap_or(0);
    PAIRS[i % PAIRS.len()]
}

fn draw_empty<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    group: &GroupKey,
    why: &str,
) -> Result<(), ChartError> {
    area.draw(&Text::new(
        format!("{}: {why}", group.title()),
        (20, 30),
        ink_font(AXIS_PX),
    ))?;
    Ok(())
}

/// The lowest round value an axis starts at for data from `lo` to `top`
/// (a round top from [`axis_top`]): [`nice_floor`], so the data fills the
/// panel rather than a corner above zero (issue #37 item 8).
fn axis_floor(lo: f64, top: f64) -> f64 {
    // A little room below the lowest point, so it does not sit on the axis.
    let f = nice_floor(lo - 0.05 * (top - lo), top);
    if f < top { f } else { 0.0 }
}

/// Width and height of a point label in px as drawn (an estimate: DejaVu
/// Sans digits are 0.64 em wide).
fn label_box(text: &str) -> (i32, i32) {
    (
        (text.chars().count() as f64 * POINT_PX * 0.64).ceil() as i32,
        POINT_PX.ceil() as i32 + 2,
    )
}

/// A rectangle in px: (left, top, right, bottom).
type PxBox = (i32, i32, i32, i32);

fn overlaps(a: &PxBox, b: &PxBox) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Where each point's label goes, as an offset from the point (the text's
/// top-left corner), or `None` when every place would cover another label,
/// a marker or a ring, or leave the plot (issue #37 item 8: no
/// overlapping labels). `points` are the labelled points in px with their
/// text; `obstacles` every marker and ring; `area` the plotting area.
fn place_labels(
    points: &[((i32, i32), String)],
    obstacles: &[PxBox],
    area: PxBox,
) -> Vec<Option<(i32, i32)>> {
    let mut placed: Vec<PxBox> = Vec::new();
    points
        .iter()
        .map(|((x, y), text)| {
            let (w, h) = label_box(text);
            // Up-right first (clear of a 10 px ring), then down-right,
            // up-left, down-left.
            let offsets = [(13, -h - 9), (13, 9), (-13 - w, -h - 9), (-13 - w, 9)];
            let found = offsets.into_iter().find(|(dx, dy)| {
                let b = (x + dx, y + dy, x + dx + w, y + dy + h);
                b.0 >= area.0
                    && b.1 >= area.1
                    && b.2 <= area.2
                    && b.3 <= area.3
                    && !placed.iter().any(|p| overlaps(p, &b))
                    && !obstacles.iter().any(|o| overlaps(o, &b))
            });
            if let Some((dx, dy)) = found {
                placed.push((x + dx, y + dy, x + dx + w, y + dy + h));
            }
            found
        })
        .collect()
}

/// The frontier panel's chart: both axes linear.
type XyChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The concurrency panel's chart: concurrency on a log2 axis, the metric
/// linear.
type ConcChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<LogCoord<f64>, RangedCoordf64>>;

/// What the frontier panel gathers while it draws: every marker and ring,
/// so no label covers one; the labels; whether the "regressed" legend entry
/// is drawn.
#[derive(Default)]
struct FrontierMarks {
    obstacles: Vec<PxBox>,
    labels: Vec<((i32, i32), String, RGBColor)>,
    ring_legend: bool,
}

fn draw_frontier_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    g: &FrontierGroup<'_>,
    topos: &[&Topology],
    regressed: &RegressedSet<'_>,
) -> Result<(), ChartError> {
    let mut chart = frontier_chart(area, g)?;
    let mut marks = FrontierMarks::default();
    for t in &g.topologies {
        let (base_colour, new_colour) = colours(topos, t.topology);
        let label = t.topology.label();
        for (name, samples, colour, width, radius) in [
            ("baseline", &t.baseline, base_colour, 2, 4),
            ("new", &t.new, new_colour, 3, 5),
        ] {
            if samples.is_empty() {
                continue;
            }
            let style = colour.stroke_width(width);
            let legend = format!("{name} {label} frontier");
            draw_frontier(&mut chart, samples, style, radius, legend, &mut marks)?;
            if name == "new" {
                mark_new_points(&mut chart, t, regressed, new_colour, &mut marks)?;
            }
        }
    }
    draw_point_labels(&chart, &marks)?;
    draw_series_legend(&mut chart, SeriesLabelPosition::UpperRight)
}

/// The frontier panel's axes (from 0-ish to a fine ceiling over both sides'
/// samples), caption and mesh.
fn frontier_chart<'a, DB: DrawingBackend + 'a>(
    area: &'a DrawingArea<DB, Shift>,
    g: &FrontierGroup<'_>,
) -> Result<XyChart<'a, DB>, ChartError> {
    let all = || {
        g.topologies
            .iter()
            .flat_map(|t| t.baseline.iter().chain(&t.new))
    };
    let (xmax, ymax) = all().fold((0.0_f64, 0.0_f64), |(x, y), s| {
        (x.max(s.interactivity), y.max(s.tput))
    });
    let (xmin, ymin) = all().fold((f64::INFINITY, f64::INFINITY), |(x, y), s| {
        (x.min(s.interactivity), y.min(s.tput))
    });
    let (xtop, ytop) = (
        axis_top(xmax, "interactivity")?,
        axis_top(ymax, "tput/GPU")?,
    );
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{}: tput/GPU vs interactivity", g.group.title()),
            ink_font(CAPTION_PX),
        )
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(axis_floor(xmin, xtop)..xtop, axis_floor(ymin, ytop)..ytop)?;
    chart
        .configure_mesh()
        .x_labels(MAX_TICKS)
        .y_labels(MAX_TICKS)
        .x_desc("interactivity (tok/s/user, 1 / median TPOT)")
        .y_desc("tput/GPU (tok/s)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(ink_font(LABEL_PX))
        .axis_desc_style(ink_font(AXIS_PX))
        .axis_style(INK)
        .bold_line_style(grid())
        .light_line_style(INK.mix(0.06))
        .draw()?;
    Ok(chart)
}

/// One side of one topology: its Pareto frontier as a line (with its legend
/// entry `legend`), the frontier points filled and the dominated ones
/// hollow; each marker becomes an obstacle for the labels.
fn draw_frontier<'a, DB: DrawingBackend + 'a>(
    chart: &mut XyChart<'a, DB>,
    samples: &[Sample],
    style: ShapeStyle,
    radius: i32,
    legend: String,
    marks: &mut FrontierMarks,
) -> Result<(), ChartError> {
    let front = pareto_frontier(samples);
    let line: Vec<(f64, f64)> = front
        .iter()
        .map(|&i| (samples[i].interactivity, samples[i].tput))
        .collect();
    chart
        .draw_series(LineSeries::new(line.clone(), style))?
        .label(legend)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    // Frontier points filled, dominated points hollow.
    chart.draw_series(line.iter().map(|&p| Circle::new(p, radius, style.filled())))?;
    let dominated: Vec<(f64, f64)> = (0..samples.len())
        .filter(|i| !front.contains(i))
        .map(|i| (samples[i].interactivity, samples[i].tput))
        .collect();
    chart.draw_series(dominated.iter().map(|&p| Circle::new(p, radius, style)))?;
    for s in samples.iter() {
        let (x, y) = chart.backend_coord(&(s.interactivity, s.tput));
        let r = radius + 1;
        marks.obstacles.push((x - r, y - r, x + r, y + r));
    }
    Ok(())
}

/// The new side's extras: a ring around each regressed point (an obstacle
/// too), and a label per point.
fn mark_new_points<'a, DB: DrawingBackend + 'a>(
    chart: &mut XyChart<'a, DB>,
    t: &TopologySamples<'_>,
    regressed: &RegressedSet<'_>,
    colour: RGBColor,
    marks: &mut FrontierMarks,
) -> Result<(), ChartError> {
    let samples = &t.new;
    let rings: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| regressed.contains(&(t.topology, s.conc)))
        .map(|s| (s.interactivity, s.tput))
        .collect();
    for p in &rings {
        let (x, y) = chart.backend_coord(p);
        marks.obstacles.push((x - 12, y - 12, x + 12, y + 12));
    }
    draw_rings(chart, &rings, &mut marks.ring_legend)?;
    // The concurrency of each new point, so a reader can find
    // it in the table and in the other panel.
    for s in samples.iter() {
        marks.labels.push((
            chart.backend_coord(&(s.interactivity, s.tput)),
            format!("c{}", s.conc),
            colour,
        ));
    }
    Ok(())
}

/// The labels, each where [`place_labels`] finds room inside the plot
/// clear of the markers, rings and other labels; one without room is left
/// out.
fn draw_point_labels<'a, DB: DrawingBackend + 'a>(
    chart: &XyChart<'a, DB>,
    marks: &FrontierMarks,
) -> Result<(), ChartError> {
    let plot = {
        let (xr, yr) = (chart.x_range(), chart.y_range());
        let (x0, y0) = chart.backend_coord(&(xr.start, yr.end));
        let (x1, y1) = chart.backend_coord(&(xr.end, yr.start));
        (x0, y0, x1, y1)
    };
    let labels = &marks.labels;
    let requests: Vec<((i32, i32), String)> =
        labels.iter().map(|(p, t, _)| (*p, t.clone())).collect();
    let offsets = place_labels(&requests, &marks.obstacles, plot);
    let drawing = chart.plotting_area().strip_coord_spec();
    let origin = drawing.get_base_pixel();
    for ((p, text, colour), offset) in labels.iter().zip(offsets) {
        let Some((dx, dy)) = offset else { continue };
        drawing.draw(&Text::new(
            text.clone(),
            (p.0 + dx - origin.0, p.1 + dy - origin.1),
            font(POINT_PX).color(colour),
        ))?;
    }
    Ok(())
}

/// A panel's legend of its series, framed, at `position`.
fn draw_series_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), ChartError> {
    chart
        .configure_series_labels()
        .position(position)
        .label_font(ink_font(LABEL_PX))
        .background_style(TRANSPARENT)
        .border_style(INK)
        .draw()?;
    Ok(())
}

fn draw_concurrency_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    g: &GroupSeries<'_>,
    topos: &[&Topology],
) -> Result<(), ChartError> {
    let mut chart = concurrency_chart(area, g)?;
    let mut ring_legend = false;
    for topo in g.topologies() {
        draw_concurrency_topology(&mut chart, g, topos, topo, &mut ring_legend)?;
    }
    draw_series_legend(&mut chart, SeriesLabelPosition::UpperLeft)
}

/// The concurrency panel's axes (concurrency on log2 with room either
/// side, the metric from 0-ish to a fine ceiling over both sides), caption
/// and mesh.
fn concurrency_chart<'a, DB: DrawingBackend + 'a>(
    area: &'a DrawingArea<DB, Shift>,
    g: &GroupSeries<'_>,
) -> Result<ConcChart<'a, DB>, ChartError> {
    let concs = g.points.iter().map(|p| p.1 as f64);
    let (lo, hi) = concs.fold((f64::MAX, f64::MIN), |(lo, hi), c| (lo.min(c), hi.max(c)));
    let (lo, hi) = if lo == hi {
        (lo / 2.0, hi * 2.0)
    } else {
        (lo / 1.25, hi * 1.25)
    };
    let lo = lo.max(0.5);
    let name = metric_name(g.metric);
    let ymax = axis_top(
        g.points
            .iter()
            .map(|p| p.2.max(p.3))
            .fold(0.0_f64, f64::max),
        name,
    )?;
    let ymin = g
        .points
        .iter()
        .map(|p| p.2.min(p.3))
        .fold(f64::INFINITY, f64::min);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{}: {name} vs concurrency", g.group.title()),
            ink_font(CAPTION_PX),
        )
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d((lo..hi).log_scale().base(2.0), axis_floor(ymin, ymax)..ymax)?;
    let decimals = if ymax <= 10.0 { 1 } else { 0 };
    chart
        .configure_mesh()
        .x_labels(MAX_TICKS)
        .y_labels(MAX_TICKS)
        .x_desc("concurrency")
        .y_desc(g.metric.label)
        .x_label_formatter(&conc_tick)
        .y_label_formatter(&|y| format!("{y:.decimals$}"))
        .label_style(ink_font(LABEL_PX))
        .axis_desc_style(ink_font(AXIS_PX))
        .axis_style(INK)
        .bold_line_style(grid())
        .light_line_style(INK.mix(0.06))
        .draw()?;
    Ok(chart)
}

/// One topology over concurrency: baseline and new as lines with their
/// points and legend entries, and a ring where the new point regressed.
fn draw_concurrency_topology<'a, DB: DrawingBackend + 'a>(
    chart: &mut ConcChart<'a, DB>,
    g: &GroupSeries<'_>,
    topos: &[&Topology],
    topo: &Topology,
    ring_legend: &mut bool,
) -> Result<(), ChartError> {
    let pts: Vec<_> = g.points.iter().filter(|p| p.0 == topo).collect();
    let base: Vec<(f64, f64)> = pts.iter().map(|p| (p.1 as f64, p.2)).collect();
    let new: Vec<(f64, f64)> = pts.iter().map(|p| (p.1 as f64, p.3)).collect();
    let (base_colour, new_colour) = colours(topos, topo);
    let base_style = base_colour.stroke_width(2);
    let new_style = new_colour.stroke_width(3);
    let label = topo.label();
    chart
        .draw_series(LineSeries::new(base.clone(), base_style))?
        .label(format!("baseline {label}"))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], base_style));
    chart.draw_series(base.iter().map(|&p| Circle::new(p, 3, base_style.filled())))?;
    chart
        .draw_series(LineSeries::new(new.clone(), new_style))?
        .label(format!("new {label}"))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], new_style));
    chart.draw_series(new.iter().map(|&p| Circle::new(p, 4, new_style.filled())))?;
    // Ringed where this panel's metric regressed (issue #37 item 8).
    let rings: Vec<(f64, f64)> = pts
        .iter()
        .filter(|p| g.regressed.contains(&(topo, p.1)))
        .map(|p| (p.1 as f64, p.3))
        .collect();
    draw_rings(chart, &rings, ring_legend)
}

/// A red ring around each regressed new point, and the legend entry
/// "regressed" once per panel.
fn draw_rings<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    points: &[(X::ValueType, Y::ValueType)],
    legend_drawn: &mut bool,
) -> Result<(), ChartError>
where
    DB: DrawingBackend + 'a,
    X: Ranged,
    Y: Ranged,
    X::ValueType: Clone + 'static,
    Y::ValueType: Clone + 'static,
{
    if points.is_empty() {
        return Ok(());
    }
    let ring = REGRESSED.stroke_width(3);
    let series = chart.draw_series(points.iter().map(|p| Circle::new(p.clone(), 10, ring)))?;
    if !*legend_drawn {
        series
            .label("regressed point")
            .legend(move |(x, y)| Circle::new((x + 10, y), 6, ring));
        *legend_drawn = true;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One palette (issue #37 item 8): the PNG's first topology draws
    /// baseline and new in the mermaid charts' colours.
    #[test]
    fn the_png_and_mermaid_share_the_baseline_and_new_colours() {
        let hex = |c: RGBColor| format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2);
        assert_eq!(hex(PAIRS[0].0), MERMAID_BASELINE);
        assert_eq!(hex(PAIRS[0].1), MERMAID_NEW);
        for (b, n) in &PAIRS[1..] {
            assert!(![MERMAID_BASELINE, MERMAID_NEW].contains(&hex(*b).as_str()));
            assert!(![MERMAID_BASELINE, MERMAID_NEW].contains(&hex(*n).as_str()));
        }
    }

    #[test]
    fn axes_follow_the_data_and_concurrency_labels_do_not_repeat() {
        assert_eq!(nice_floor(2491.3, 20000.0), 2000.0);
        assert_eq!(nice_floor(100.0, 20000.0), 0.0);
        assert_eq!(nice_floor(f64::NAN, 20000.0), 0.0);
        let labels: Vec<String> = [4.0, 5.2, 6.0, 6.4, 8.0, 11.3, 16.0]
            .iter()
            .map(conc_tick)
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(labels, ["4", "8", "16"]);
    }

    #[test]
    fn picture_axes_end_near_the_data() {
        assert_eq!(fine_ceiling(2000.0), 2500.0);
        assert_eq!(fine_ceiling(13000.0), 15000.0);
        assert_eq!(fine_ceiling(96.0), 120.0);
        assert_eq!(fine_ceiling(0.0), 1.0);
        for v in [0.37, 1705.0, 16866.6, 1e12, MAX_AXIS] {
            assert!(
                fine_ceiling(v) >= v * 1.05 && fine_ceiling(v) <= nice_ceiling(v),
                "{v}"
            );
        }
    }

    #[test]
    fn nice_ceiling_rounds_up_to_1_2_5() {
        assert_eq!(nice_ceiling(14443.1), 20000.0);
        assert_eq!(nice_ceiling(1705.0), 2000.0);
        assert_eq!(nice_ceiling(96.0), 200.0);
        assert_eq!(nice_ceiling(0.0), 1.0);
    }

    /// Issue #34 item 2: `1.7e308` made the bound infinite and plotters'
    /// tick search never ended. Every input gives a finite bound, and the
    /// ticks plotters draws on it are at most [`MAX_TICKS`] + 1.
    #[test]
    fn axes_are_finite_and_their_ticks_bounded_for_any_value() {
        use plotters::coord::ranged1d::{KeyPointHint, Ranged};
        let values = [
            1.7e308,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            MAX_AXIS,
            1e12,
            0.0,
            -0.0,
            -5.0,
            -1e308,
            1e-300,
            f64::MIN_POSITIVE,
            5e-324,
            MIN_AXIS,
            2e-6,
            0.37,
            16866.6,
        ];
        for v in values {
            let top = nice_ceiling(v);
            assert!((1e-6..=2.0 * MAX_AXIS).contains(&top), "{v}: {top}");
            let axis: plotters::coord::types::RangedCoordf64 = (0.0..top).into();
            let ticks = axis.key_points(MAX_TICKS);
            assert!(
                !ticks.is_empty() && ticks.len() <= MAX_TICKS + 1,
                "{v}: {ticks:?}"
            );
            assert!(MAX_TICKS.max_num_points() == MAX_TICKS);
        }
        // The drawing refuses what no loader lets in, naming the axis.
        for v in [1.7e308, f64::INFINITY, f64::NAN, 2.0 * MAX_AXIS] {
            let e = axis_top(v, "tput/GPU").expect_err("out of range");
            assert!(
                e.to_string().contains("the tput/GPU axis would reach"),
                "{e}"
            );
            assert!(e.to_string().contains("MAX_AXIS"), "{e}");
        }
        for v in [0.0, -1.0, f64::NEG_INFINITY, 1e-300, 1e12, MAX_AXIS] {
            assert!(axis_top(v, "x").is_ok(), "{v}");
        }
    }

    /// Issue #37 item 8: labels never cover each other, a marker or a
    /// ring; one with no free place is left out rather than drawn over.
    #[test]
    fn point_labels_are_placed_clear_of_each_other_and_of_markers() {
        let area = (0, 0, 400, 300);
        let pts = vec![
            ((100, 100), "c4".to_string()),
            ((102, 101), "c8".to_string()),
            ((104, 102), "c16".to_string()),
            ((105, 103), "c32".to_string()),
            ((106, 104), "c64".to_string()),
        ];
        let ring = (88, 88, 112, 112);
        let got = place_labels(&pts, &[ring], area);
        let boxes: Vec<PxBox> = pts
            .iter()
            .zip(&got)
            .filter_map(|(((x, y), t), o)| {
                let (dx, dy) = (*o)?;
                let (w, h) = label_box(t);
                Some((x + dx, y + dy, x + dx + w, y + dy + h))
            })
            .collect();
        assert!(boxes.len() >= 3, "{got:?}");
        assert!(
            got.iter().any(Option::is_none),
            "five labels cannot fit around one spot: {got:?}"
        );
        for (i, a) in boxes.iter().enumerate() {
            assert!(!overlaps(a, &ring), "{a:?} covers the ring");
            for b in &boxes[i + 1..] {
                assert!(!overlaps(a, b), "{a:?} and {b:?} overlap");
            }
        }
        // At the plot's edge a label goes inside.
        let edge = place_labels(&[((395, 5), "c256".to_string())], &[], area);
        let (dx, dy) = edge[0].expect("placed");
        assert!(395 + dx >= 0 && 5 + dy >= 0 && dx < 0 && dy > 0, "{edge:?}");
    }

    fn s(conc: i64, interactivity: f64, tput: f64) -> Sample {
        Sample {
            conc,
            interactivity,
            tput,
        }
    }

    #[test]
    fn pareto_frontier_drops_dominated_points_and_orders_by_interactivity() {
        let pts = [
            s(4, 100.0, 1000.0),
            s(8, 80.0, 2000.0),
            s(16, 60.0, 1500.0), // dominated by conc 8
            s(32, 40.0, 4000.0),
            s(64, 40.0, 3000.0), // dominated by conc 32 (same x, lower y)
        ];
        assert_eq!(pareto_frontier(&pts), vec![3, 1, 0]);
        assert_eq!(pareto_frontier(&[]), Vec::<usize>::new());
        // Equal points dominate neither: both stay.
        assert_eq!(pareto_frontier(&[s(1, 1.0, 1.0), s(2, 1.0, 1.0)]).len(), 2);
    }
}
