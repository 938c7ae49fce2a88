//! Library behind the `compare-results` binary: compare a sweep with a
//! baseline (an earlier `agg_bmk.json`, a saved or fetched response of the
//! public benchmarks API, or the InferenceX PostgreSQL database), per-point
//! deltas, a regression verdict, an eval table, a mermaid chart in the
//! markdown and, when asked (`--svg`), an SVG chart.
//!
//! Modules: [`key`] (normalised point identity), [`metrics`] (what is
//! compared), [`compare`] (matching and verdict), [`load`] (input files),
//! [`evals`] (eval rows and thresholds), [`http`] / [`db`] (remote
//! baselines), [`report`] (markdown via minijinja), [`chart`] (mermaid and
//! SVG), [`png`] (the SVG rasterised, one PNG per configuration), [`trend`]
//! (with main's history as the baseline, each configuration's trend), [`run`]
//! (the whole run over plain [`run::Options`]; the flags are the binary's).

pub mod chart;
pub mod compare;
pub mod db;
pub mod evals;
pub mod history;
pub mod http;
pub mod key;
pub mod load;
pub mod metrics;
pub use sweep_chart::png;
pub mod report;
pub mod run;
pub mod trend;

/// Everything that can stop a comparison. Messages name the file (and row
/// and key) and the cause.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Tree(#[from] sweep_model::tree::TreeError),
    #[error("{path}:{line}:{column}: invalid JSON: {message}")]
    Json {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{origin}: key '{key}': {cause}")]
    Row {
        origin: String,
        key: String,
        cause: String,
    },
    #[error("{origin}: {cause}")]
    BadRow { origin: String, cause: String },
    #[error("{origin}: expected a JSON object (a result row), found {found}")]
    NotObject { origin: String, found: String },
    #[error("{source_name}: {message}")]
    Api {
        source_name: String,
        message: String,
    },
    #[error("GET {url}: {cause}")]
    Http { url: String, cause: String },
    #[error("database: {0}")]
    Db(String),
    #[error("{0}")]
    Policy(String),
    #[error("rendering {what}: {cause}")]
    Render { what: String, cause: String },
}
