//! A configuration's trend: one small panel per point, main's values over
//! its runs (oldest left) and, last, this sweep's value, with the learnt
//! limit as a line when there is one. Each panel's y axis spans its own
//! data (a throughput of 4,000 and one of 400 are both readable), never
//! from zero.
//!
//! `sweep-history show --png` draws a configuration's series;
//! `compare-results --baseline-from history --charts-dir` draws, per
//! configuration, the newest main runs with the PR's value as the last
//! point.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::ChartError;
use crate::style::{BASELINE, INK, MIN_TEXT_PX, NEW, REGRESSED, WIDTH, ink_font};

/// Panels in one picture: 15 rows of two are 3,964 px high, under the
/// rasteriser's bound of 4,096 px a side; a configuration with more points
/// says in its title how many it shows.
pub const MAX_PANELS: usize = 30;
/// Points drawn with a marker: past this a panel is a line only (a
/// thousand markers in 400 px are a smear).
const MARKED: usize = 60;
/// Height of one panel, and of the title and legend above the panels.
const PANEL_H: u32 = 260;
const HEADER_H: u32 = 64;
/// Tick labels on a panel's x axis (numbers of up to 4 characters).
const X_TICKS: usize = 6;
const Y_TICKS: usize = 5;
const TITLE_PX: f64 = 20.0;
const CAPTION_PX: f64 = 15.0;
const LABEL_PX: f64 = MIN_TEXT_PX as f64;

/// One point's series.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// What the point is: `8192/1024 TP2 EP1 conc 16`.
    pub title: String,
    /// Main's values, oldest first, one per run. The x axis counts runs
    /// back from the newest (0), this sweep's value at +1, labelled `PR`.
    pub main: Vec<f64>,
    /// The line past which a value regresses (the learnt boundary, or the
    /// minimum practical change where that lies further out).
    pub limit: Option<f64>,
    /// This sweep's value, and whether it regressed.
    pub new: Option<(f64, bool)>,
}

/// A configuration's trend.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    /// The configuration: `b200/qwen3.5-fp4-sglang`.
    pub title: String,
    /// The metric with its unit, as the y axes name it.
    pub metric: String,
    pub panels: Vec<Panel>,
}

/// The picture's size for `panels` panels (at most [`MAX_PANELS`]): one
/// column for one panel, else two.
#[must_use]
pub fn size(panels: usize) -> (u32, u32) {
    let shown = u32::try_from(panels.clamp(1, MAX_PANELS)).unwrap_or(1);
    let rows = if shown == 1 { 1 } else { shown.div_ceil(2) };
    (WIDTH, HEADER_H + rows * PANEL_H)
}

/// The trend as an SVG document.
///
/// # Errors
/// plotters refuses the layout (a panel without a finite value is skipped,
/// not an error).
pub fn svg(t: &Trend) -> Result<String, ChartError> {
    let (w, h) = size(t.panels.len());
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
        let (header, body) = root.split_vertically(HEADER_H);
        draw_header(&header, t)?;
        let shown = &t.panels[..t.panels.len().min(MAX_PANELS)];
        let cols = if shown.len() == 1 { 1 } else { 2 };
        let rows = shown.len().div_ceil(cols).max(1);
        let areas = body.split_evenly((rows, cols));
        for (panel, area) in shown.iter().zip(&areas) {
            draw_panel(area, panel, &t.metric)?;
        }
        root.present()?;
    }
    Ok(out)
}

/// The trend as a PNG (transparent background).
///
/// # Errors
/// The SVG cannot be drawn or rasterised.
pub fn png(t: &Trend) -> Result<Vec<u8>, ChartError> {
    let svg = svg(t)?;
    crate::png::render(&svg).map_err(|e| ChartError(e.to_string()))
}

/// The title (with how many points are shown when not all) and the legend.
fn draw_header<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    t: &Trend,
) -> Result<(), ChartError> {
    let title = if t.panels.len() > MAX_PANELS {
        format!(
            "{}: {} over main's runs (the first {MAX_PANELS} of {} points)",
            t.title,
            t.metric,
            t.panels.len()
        )
    } else {
        format!("{}: {} over main's runs", t.title, t.metric)
    };
    area.draw(&Text::new(title, (12, 8), ink_font(TITLE_PX)))?;
    let y = 44;
    let mut x = 12;
    let mut item = |shape: &dyn Fn(i32, i32) -> Result<(), ChartError>,
                    label: &str|
     -> Result<(), ChartError> {
        shape(x, y)?;
        area.draw(&Text::new(
            label.to_string(),
            (x + 14, y - 9),
            ink_font(LABEL_PX),
        ))?;
        x += 14 + i32::try_from(label.chars().count()).unwrap_or(40) * 8 + 24;
        Ok(())
    };
    item(
        &|x, y| Ok(area.draw(&Circle::new((x, y), 4, BASELINE.filled()))?),
        "main's runs",
    )?;
    // Only what the picture shows has a legend entry.
    if t.panels.iter().any(|p| p.new.is_some()) {
        item(
            &|x, y| Ok(area.draw(&Circle::new((x, y), 5, NEW.filled()))?),
            "this sweep",
        )?;
    }
    if t.panels.iter().any(|p| p.new.is_some_and(|(_, r)| r)) {
        item(
            &|x, y| Ok(area.draw(&Circle::new((x, y), 7, REGRESSED.stroke_width(2)))?),
            "regressed",
        )?;
    }
    if t.panels.iter().any(|p| p.limit.is_some()) {
        item(
            &|x, y| {
                Ok(area.draw(&PathElement::new(
                    vec![(x - 8, y), (x + 8, y)],
                    REGRESSED.mix(0.6).stroke_width(2),
                ))?)
            },
            "regression limit",
        )?;
    }
    Ok(())
}

/// The y range of a panel: its values (and limit) with a tenth of their
/// spread above and below, or ±5 % of a flat series' value.
fn y_range(p: &Panel) -> Option<(f64, f64)> {
    let values = p
        .main
        .iter()
        .copied()
        .chain(p.limit)
        .chain(p.new.map(|(v, _)| v))
        .filter(|v| v.is_finite());
    let (lo, hi) = values.fold(None, |acc: Option<(f64, f64)>, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })?;
    let pad = if hi > lo {
        (hi - lo) / 10.0
    } else {
        (lo.abs() / 20.0).max(1e-9)
    };
    Some((lo - pad, hi + pad))
}

/// The decimals of a tick label for a range of this height.
fn decimals(lo: f64, hi: f64) -> usize {
    let span = hi - lo;
    if span >= 50.0 {
        0
    } else if span >= 5.0 {
        1
    } else if span >= 0.5 {
        2
    } else {
        3
    }
}

/// The label of tick `x`: runs back from the newest (0), `PR` at +1 when
/// the panel has this sweep's value, nothing between whole runs.
fn x_label(x: f64, oldest: f64, has_new: bool) -> String {
    let i = x.round();
    if (x - i).abs() > 1e-6 || i < oldest || i > 1.0 {
        String::new()
    } else if i == 1.0 {
        if has_new { "PR".into() } else { String::new() }
    } else {
        format!("{i:.0}")
    }
}

/// One point's panel: the axes, then its values ([`draw_values`]).
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    metric: &str,
) -> Result<(), ChartError> {
    let Some((lo, hi)) = y_range(p) else {
        area.draw(&Text::new(
            format!("{}: no values", p.title),
            (12, 12),
            ink_font(CAPTION_PX),
        ))?;
        return Ok(());
    };
    // Positions: main's newest run at 0, the older ones at −1, −2, …; this
    // sweep at +1.
    let oldest = -(p.main.len().saturating_sub(1) as f64);
    let x_lo = oldest.min(-1.0) - 0.5;
    let x_hi = if p.new.is_some() { 1.5 } else { 0.5 };
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, ink_font(CAPTION_PX))
        .margin(10)
        .x_label_area_size(48)
        // Room for a five-digit tick label beside the axis name.
        .y_label_area_size(76)
        .build_cartesian_2d(x_lo..x_hi, lo..hi)?;
    let places = decimals(lo, hi);
    let has_new = p.new.is_some();
    chart
        .configure_mesh()
        .x_labels(X_TICKS)
        .y_labels(Y_TICKS)
        .x_label_formatter(&|x| x_label(*x, oldest, has_new))
        .y_label_formatter(&|y| format!("{y:.places$}"))
        .x_desc("main runs before the newest (0)")
        .y_desc(metric)
        .label_style(ink_font(LABEL_PX))
        .axis_desc_style(ink_font(LABEL_PX))
        .axis_style(INK)
        .bold_line_style(INK.mix(0.15))
        .light_line_style(INK.mix(0.05))
        .draw()?;
    draw_values(&mut chart, p, (x_lo, x_hi), oldest)
}

/// A panel's values on its axes: the limit across, main's runs as a line
/// (marked while there are few), this sweep's value last (ringed when it
/// regressed).
fn draw_values<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    p: &Panel,
    (x_lo, x_hi): (f64, f64),
    oldest: f64,
) -> Result<(), ChartError> {
    if let Some(limit) = p.limit.filter(|v| v.is_finite()) {
        chart.draw_series(LineSeries::new(
            [(x_lo, limit), (x_hi, limit)],
            REGRESSED.mix(0.6).stroke_width(2),
        ))?;
    }
    let points: Vec<(f64, f64)> = p
        .main
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .map(|(i, v)| (oldest + i as f64, *v))
        .collect();
    chart.draw_series(LineSeries::new(points.clone(), BASELINE.stroke_width(2)))?;
    if points.len() <= MARKED {
        chart.draw_series(
            points
                .iter()
                .map(|&xy| Circle::new(xy, 3, BASELINE.filled())),
        )?;
    }
    if let Some((v, regressed)) = p.new.filter(|(v, _)| v.is_finite()) {
        let at = (1.0, v);
        if let Some(&prev) = points.last() {
            chart.draw_series(LineSeries::new([prev, at], NEW.mix(0.8).stroke_width(2)))?;
        }
        chart.draw_series(std::iter::once(Circle::new(at, 5, NEW.filled())))?;
        if regressed {
            chart.draw_series(std::iter::once(Circle::new(
                at,
                9,
                REGRESSED.stroke_width(2),
            )))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panel(title: &str, values: &[f64], new: Option<(f64, bool)>) -> Panel {
        Panel {
            title: title.into(),
            main: values.to_vec(),
            limit: Some(values.iter().sum::<f64>() / values.len() as f64 * 0.95),
            new,
        }
    }

    fn trend(panels: Vec<Panel>) -> Trend {
        Trend {
            title: "b200/qwen3.5-fp4-sglang".into(),
            metric: "tput/GPU (tok/s)".into(),
            panels,
        }
    }

    /// Font sizes of every text element of an SVG, as drawn.
    fn text_sizes(svg: &str) -> Vec<f64> {
        let doc = roxmltree::Document::parse(svg).expect("the SVG parses");
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.attribute("font-size"))
            .map(|s| s.trim_end_matches("px").parse::<f64>().expect("a size"))
            .collect()
    }

    /// The text of every text element, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("the SVG parses");
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect()
    }

    #[test]
    fn every_text_is_at_least_the_smallest_size_and_the_labels_are_there() {
        let t = trend(vec![
            panel(
                "1024/1024 TP8 conc 4",
                &[1000.0, 1010.0, 990.0, 1005.0],
                Some((900.0, true)),
            ),
            panel(
                "1024/1024 TP8 conc 8",
                &[1800.0, 1790.0, 1810.0],
                Some((1805.0, false)),
            ),
            panel("1024/1024 TP8 conc 16", &[3000.0], None),
        ]);
        let svg = svg(&t).expect("drawn");
        let sizes = text_sizes(&svg);
        assert!(!sizes.is_empty());
        let smallest = sizes.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(
            smallest >= f64::from(MIN_TEXT_PX) - 0.01,
            "smallest text {smallest} px"
        );
        let texts = texts(&svg);
        for needle in [
            "1024/1024 TP8 conc 4",
            "1024/1024 TP8 conc 16",
            "PR",
            "-3",
            "0",
            "regression limit",
        ] {
            assert!(
                texts.iter().any(|t| t == needle),
                "{needle} missing from {texts:?}"
            );
        }
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("b200/qwen3.5-fp4-sglang: tput/GPU"))
        );
        // This sweep's value in NEW orange, its ring in REGRESSED red.
        assert!(svg.contains("#FF7F0E") || svg.contains("#ff7f0e"));
        assert!(svg.contains("#D60000") || svg.contains("#d60000"));
    }

    #[test]
    fn the_legend_names_only_what_the_picture_shows() {
        let history_only = trend(vec![panel("p", &[1.0, 1.1, 0.9], None)]);
        let shown = texts(&svg(&history_only).expect("drawn"));
        assert!(shown.iter().any(|t| t == "main's runs"));
        assert!(shown.iter().any(|t| t == "regression limit"));
        assert!(!shown.iter().any(|t| t == "this sweep" || t == "regressed"));
        assert!(!shown.iter().any(|t| t == "PR"), "{shown:?}");
        let steady = trend(vec![panel("p", &[1.0, 1.1, 0.9], Some((1.0, false)))]);
        let shown = texts(&svg(&steady).expect("drawn"));
        assert!(shown.iter().any(|t| t == "this sweep"));
        assert!(!shown.iter().any(|t| t == "regressed"), "{shown:?}");
    }

    #[test]
    fn a_panel_spans_its_own_data_not_zero() {
        let p = panel("p", &[4000.0, 4100.0], Some((3900.0, false)));
        let (lo, hi) = y_range(&p).expect("a range");
        assert!(lo > 3000.0 && lo < 3900.0, "{lo}");
        assert!(hi > 4100.0 && hi < 4200.0, "{hi}");
        let flat = Panel {
            limit: None,
            ..panel("flat", &[2.0, 2.0], None)
        };
        assert_eq!(y_range(&flat), Some((1.9, 2.1)));
        let empty = Panel {
            limit: None,
            ..panel("none", &[f64::NAN], None)
        };
        assert_eq!(y_range(&empty), None);
    }

    #[test]
    fn the_size_grows_by_rows_of_two_and_stops_at_the_most_panels() {
        assert_eq!(size(1), (WIDTH, HEADER_H + PANEL_H));
        assert_eq!(size(2), (WIDTH, HEADER_H + PANEL_H));
        assert_eq!(size(7), (WIDTH, HEADER_H + 4 * PANEL_H));
        assert_eq!(size(500), size(MAX_PANELS));
        let (w, h) = size(MAX_PANELS);
        assert!(u64::from(w) * u64::from(h) <= 4096 * 4096);
    }

    #[test]
    fn the_png_is_transparent_where_nothing_is_drawn() {
        let t = trend(vec![panel("p", &[1.0, 1.1, 0.9], Some((1.0, false)))]);
        let bytes = png(&t).expect("rasterised");
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let img = resvg::tiny_skia::Pixmap::decode_png(&bytes).expect("decodes");
        assert_eq!((img.width(), img.height()), size(1));
        assert_eq!(img.pixel(WIDTH - 2, 2).map(|p| p.alpha()), Some(0));
        assert!(img.pixels().iter().any(|p| p.alpha() > 0));
    }

    #[test]
    fn more_points_than_fit_are_named_in_the_title() {
        let panels = (0..MAX_PANELS + 3)
            .map(|i| panel(&format!("conc {i}"), &[1.0, 2.0], None))
            .collect();
        let svg = svg(&trend(panels)).expect("drawn");
        assert!(svg.contains(&format!(
            "the first {MAX_PANELS} of {} points",
            MAX_PANELS + 3
        )));
        assert!(!svg.contains(&format!("conc {}", MAX_PANELS)));
    }
}
