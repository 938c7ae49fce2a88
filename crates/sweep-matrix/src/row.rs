//! The types generation and eval marking share: a matrix row, the
//! generation error and the eval selection mode.

use sweep_model::config::ConfigError;

/// One matrix row: a typed row of one of the four kinds whose serde field
/// order is the reference's output order.
pub type Row = sweep_model::rows::MatrixRow;

/// A generation failure.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// A config or runner file is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The configs are valid but rows cannot be generated.
    #[error("{0}")]
    Generate(String),
}

/// Eval selection mode (§10.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EvalMode {
    /// Mark default eval rows; output all rows.
    #[default]
    Default,
    /// `--no-evals`: no marking at all.
    NoEvals,
    /// `--evals-only`: only marked rows (agentic included).
    EvalsOnly,
    /// `--all-evals` (with or without `--evals-only`).
    AllEvals,
}
