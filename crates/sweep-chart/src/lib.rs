//! The pictures sweepkit draws, shared by the tools that draw them:
//! [`style`] (one palette and one text size for every picture), [`trend`]
//! (a configuration's series over main's runs, a PR's value last) and
//! [`png`] (an SVG rasterised with the bundled font).
//!
//! compare-results draws its baseline-against-new charts with these colours;
//! sweep-history (`show --png`) and compare-results (`--baseline-from
//! history` with `--charts-dir`) draw trends.

pub mod png;
pub mod style;
pub mod trend;

/// A picture could not be drawn: plotters' error (a backend's I/O or a
/// layout it refuses), by its message, as plotters' error types are generic
/// over the backend.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChartError(pub String);

impl<E: std::error::Error + Send + Sync> From<plotters::drawing::DrawingAreaErrorKind<E>>
    for ChartError
{
    fn from(e: plotters::drawing::DrawingAreaErrorKind<E>) -> Self {
        ChartError(e.to_string())
    }
}
