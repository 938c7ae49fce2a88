//! The subcommands' glue, one module each, and the helpers they share.
use std::path::PathBuf;

use sweep_model::gha;

pub(crate) mod agentic;
pub(crate) mod aggregate;
pub(crate) mod evals;
pub(crate) mod process;
pub(crate) mod validate;

/// A float flag value Python's `float()` would refuse, or a fraction
/// outside 0..=1: clap reports it as a usage error (exit 2), naming the flag.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FloatArgError {
    #[error("invalid float value: '{0}'")]
    NotAFloat(String),
    #[error("must be between 0 and 1")]
    NotAFraction,
}

pub(crate) fn step_summary(md: &str) {
    if gha::in_actions()
        && let Err(e) = gha::append_step_summary(md)
    {
        eprintln!("warning: cannot append to $GITHUB_STEP_SUMMARY: {e}");
    }
}

pub(crate) fn cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

pub(crate) fn env_lookup(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}
