//! `validate-agentic` and `validate-agentic-results`: flags and glue over
//! `collect_results::agentic`.
use std::path::Path;
use std::process::ExitCode;

use collect_results::agentic;
use sweep_model::exit;

use super::cwd;
use crate::fail;

pub(crate) fn parse_fraction(s: &str) -> Result<f64, String> {
    match sweep_model::python::python_float(s) {
        Some(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Some(_) => Err("must be between 0 and 1".to_owned()),
        None => Err(format!("invalid float value: '{s}'")),
    }
}

/// `validate-agentic*`: an invalid result is the check saying no (1); a
/// missing or unreadable one leaves nothing to judge (2).
fn agentic_exit(context: &str, e: &agentic::AgenticError) -> ExitCode {
    let code = if e.is_unreadable() {
        exit::FAILED
    } else {
        exit::REJECTED
    };
    fail(context, e, code)
}

pub(crate) fn run_validate_agentic(artifact_dir: &Path, threshold: f64) -> ExitCode {
    match agentic::validate_result(artifact_dir, threshold) {
        Ok(ok) => {
            sweep_model::stdout::println(&ok.to_string());
            ExitCode::SUCCESS
        }
        Err(e) => agentic_exit("validate-agentic", &e),
    }
}

pub(crate) fn run_validate_agentic_results(result_filename: &str, conc_list: &str) -> ExitCode {
    let expected = conc_list.split_whitespace().count();
    match agentic::validate_results(&cwd(), result_filename, expected) {
        Ok(files) => {
            for f in files {
                sweep_model::stdout::println(&format!(
                    "Found agentic result file: {}",
                    f.display()
                ));
            }
            ExitCode::SUCCESS
        }
        Err(e) => agentic_exit("validate-agentic-results", &e),
    }
}
