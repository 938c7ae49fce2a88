//! Pictures of the comparison: per group (one configuration), tput/GPU over
//! concurrency, baseline against new. In the markdown as a mermaid
//! `xychart-beta` (renders in GitHub comments and job summaries); on disk
//! as one SVG drawn with plotters, one panel per group, a baseline and a
//! new series per topology, concurrency on a log2 axis.

use std::collections::BTreeMap;

use plotters::prelude::*;

use crate::compare::{Comparison, PointResult};
use crate::key::{GroupKey, Topology};

/// The metric charted.
pub const CHART_METRIC: &str = "tput_per_gpu";

/// Matched points of one group with both values of the charted metric.
pub struct GroupSeries<'a> {
    pub group: &'a GroupKey,
    /// (topology, conc, baseline, new), in report order.
    pub points: Vec<(&'a Topology, i64, f64, f64)>,
}

/// Groups of the comparison that have something to chart.
pub fn series(c: &Comparison) -> Vec<GroupSeries<'_>> {
    let Some(idx) = c.metrics.iter().position(|d| d.key == CHART_METRIC) else {
        return Vec::new();
    };
    let mut groups: BTreeMap<&GroupKey, Vec<&PointResult>> = BTreeMap::new();
    for p in &c.points {
        groups.entry(&p.key.group).or_default().push(p);
    }
    groups
        .into_iter()
        .filter_map(|(group, pts)| {
            let points: Vec<_> = pts
                .iter()
                // A log axis needs positive concurrencies.
                .filter(|p| p.key.conc > 0)
                .filter_map(|p| {
                    let cell = &p.cells[idx];
                    Some((&p.key.topology, p.key.conc, cell.baseline?, cell.new?))
                })
                .collect();
            (!points.is_empty()).then_some(GroupSeries { group, points })
        })
        .collect()
}

/// A quoted mermaid label: data cannot end the quote, the line or the
/// fenced block it sits in.
fn quote(s: &str) -> String {
    format!(
        "\"{}\"",
        sweep_model::markdown::code_block_line(s).replace('"', "'")
    )
}

/// A mermaid `xychart-beta` for one group. The x axis is categorical:
/// concurrencies, prefixed with the topology when the group has several.
pub fn mermaid(s: &GroupSeries<'_>) -> String {
    let several = s.points.iter().any(|(t, ..)| *t != s.points[0].0);
    let labels: Vec<String> = s
        .points
        .iter()
        .map(|(t, conc, ..)| {
            if several {
                quote(&format!("{} c{conc}", t.label()))
            } else {
                quote(&conc.to_string())
            }
        })
        .collect();
    let fmt = |v: f64| format!("{v:.1}");
    let base: Vec<String> = s.points.iter().map(|p| fmt(p.2)).collect();
    let new: Vec<String> = s.points.iter().map(|p| fmt(p.3)).collect();
    let max = s
        .points
        .iter()
        .map(|p| p.2.max(p.3))
        .fold(0.0_f64, f64::max);
    let x_title = if several {
        "topology, concurrency"
    } else {
        "concurrency"
    };
    format!(
        "xychart-beta\n    title {}\n    x-axis {} [{}]\n    y-axis \"tput/GPU (tok/s)\" 0 --> {}\n    line \"baseline\" [{}]\n    line \"new\" [{}]",
        quote("tput/GPU: baseline (first line) vs new (second line)"),
        quote(x_title),
        labels.join(", "),
        nice_ceiling(max),
        base.join(", "),
        new.join(", ")
    )
}

/// A round upper bound for an axis (1, 2 or 5 times a power of ten).
fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    for step in [1.0, 2.0, 5.0, 10.0, 20.0] {
        if step * mag >= v * 1.05 {
            return step * mag;
        }
    }
    10.0 * mag
}

/// (baseline, new) colours per topology: a light and a dark shade of one hue.
const PAIRS: &[(RGBColor, RGBColor)] = &[
    (RGBColor(158, 202, 225), RGBColor(33, 113, 181)),
    (RGBColor(253, 174, 107), RGBColor(217, 72, 1)),
    (RGBColor(161, 217, 155), RGBColor(35, 139, 69)),
    (RGBColor(188, 189, 220), RGBColor(106, 81, 163)),
    (RGBColor(189, 189, 189), RGBColor(82, 82, 82)),
];

const PANEL_W: u32 = 900;
const PANEL_H: u32 = 420;

/// The SVG document for all groups (`None` when nothing can be charted).
pub fn svg(c: &Comparison) -> Result<Option<String>, String> {
    let groups = series(c);
    if groups.is_empty() {
        return Ok(None);
    }
    let mut out = String::new();
    {
        let n = groups.len() as u32;
        let root = SVGBackend::with_string(&mut out, (PANEL_W, PANEL_H * n)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let panels = root.split_evenly((groups.len(), 1));
        for (panel, g) in panels.iter().zip(&groups) {
            draw_panel(panel, g)?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(Some(out))
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    g: &GroupSeries<'_>,
) -> Result<(), String> {
    let concs = g.points.iter().map(|p| p.1 as f64);
    let (lo, hi) = concs.fold((f64::MAX, f64::MIN), |(lo, hi), c| (lo.min(c), hi.max(c)));
    let (lo, hi) = if lo == hi {
        (lo / 2.0, hi * 2.0)
    } else {
        (lo / 1.25, hi * 1.25)
    };
    let lo = lo.max(0.5);
    let ymax = nice_ceiling(
        g.points
            .iter()
            .map(|p| p.2.max(p.3))
            .fold(0.0_f64, f64::max),
    );
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{}: tput/GPU", g.group.title()), ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((lo..hi).log_scale().base(2.0), 0.0..ymax)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("concurrency")
        .y_desc("tput/GPU (tok/s)")
        .x_label_formatter(&|x| format!("{}", x.round()))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(RGBColor(240, 240, 240))
        .draw()
        .map_err(|e| e.to_string())?;

    let mut topologies: Vec<&Topology> = g.points.iter().map(|p| p.0).collect();
    topologies.dedup();
    topologies.sort();
    topologies.dedup();
    for (i, topo) in topologies.iter().enumerate() {
        let pts: Vec<_> = g.points.iter().filter(|p| p.0 == *topo).collect();
        let base: Vec<(f64, f64)> = pts.iter().map(|p| (p.1 as f64, p.2)).collect();
        let new: Vec<(f64, f64)> = pts.iter().map(|p| (p.1 as f64, p.3)).collect();
        let (base_colour, new_colour) = PAIRS[i % PAIRS.len()];
        let base_style = base_colour.stroke_width(2);
        let new_style = new_colour.stroke_width(3);
        let label = topo.label();
        chart
            .draw_series(LineSeries::new(base.clone(), base_style))
            .map_err(|e| e.to_string())?
            .label(format!("baseline {label}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], base_style));
        chart
            .draw_series(PointSeries::of_element(base, 3, base_style, &|c, s, st| {
                EmptyElement::at(c) + Circle::new((0, 0), s, st.filled())
            }))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(LineSeries::new(new.clone(), new_style))
            .map_err(|e| e.to_string())?
            .label(format!("new {label}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], new_style));
        chart
            .draw_series(PointSeries::of_element(new, 4, new_style, &|c, s, st| {
                EmptyElement::at(c) + Circle::new((0, 0), s, st.filled())
            }))
            .map_err(|e| e.to_string())?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ceiling_rounds_up_to_1_2_5() {
        assert_eq!(nice_ceiling(14443.1), 20000.0);
        assert_eq!(nice_ceiling(1705.0), 2000.0);
        assert_eq!(nice_ceiling(96.0), 200.0);
        assert_eq!(nice_ceiling(0.0), 1.0);
    }
}
