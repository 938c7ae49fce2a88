//! `validate-agentic` and `validate-agentic-results`: flags and glue over
//! `collect_results::agentic`.
use std::path::Path;

use collect_results::agentic;
use sweep_cli::{Failure, Outcome, stdout};

use super::cwd;

/// `--failed-request-threshold`: a fraction, spelled as Python's `float()`
/// reads it.
pub(crate) fn parse_fraction(s: &str) -> Result<f64, super::FloatArgError> {
    match sweep_model::python::python_float(s) {
        Some(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Some(_) => Err(super::FloatArgError::NotAFraction),
        None => Err(super::FloatArgError::NotAFloat(s.to_string())),
    }
}

pub(crate) fn run_validate_agentic(artifact_dir: &Path, threshold: f64) -> Outcome {
    match agentic::validate_result(artifact_dir, threshold) {
        Ok(ok) => {
            stdout::println(&ok.to_string());
            Ok(())
        }
        // An invalid result is the check saying no (1); a missing or
        // unreadable one leaves nothing to judge (2).
        Err(e) => Err(Failure::from(e).context("validate-agentic")),
    }
}

pub(crate) fn run_validate_agentic_results(result_filename: &str, conc_list: &str) -> Outcome {
    let expected = conc_list.split_whitespace().count();
    match agentic::validate_results(&cwd(), result_filename, expected) {
        Ok(files) => {
            for f in files {
                stdout::println(&format!("Found agentic result file: {}", f.display()));
            }
            Ok(())
        }
        Err(e) => Err(Failure::from(e).context("validate-agentic-results")),
    }
}
