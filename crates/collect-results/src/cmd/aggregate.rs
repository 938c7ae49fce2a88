//! `aggregate`: glue over `collect_results::aggregate`.
use std::path::Path;
use std::process::ExitCode;

use collect_results::{aggregate, summary};
use sweep_model::exit;

use super::step_summary;
use crate::fail_at;

/// `aggregate`: a result file that is invalid JSON or over the limits is
/// the check saying no (1); a directory or file that cannot be listed, read
/// or written means the job could not be done (2).
fn aggregate_exit_code(e: &aggregate::AggregateError) -> u8 {
    use aggregate::AggregateError as E;
    match e {
        E::Tree(_) | E::Read { .. } | E::Write { .. } => exit::FAILED,
        E::TooLarge { .. } | E::TooDeep { .. } | E::Json { .. } => exit::REJECTED,
    }
}

pub(crate) fn run_aggregate(results_dir: &str, exp_name: &str) -> ExitCode {
    // Relative paths keep error messages as the user wrote them.
    match aggregate::run(Path::new(results_dir), exp_name, Path::new("")) {
        Ok(report) => {
            eprintln!("{}", summary::aggregate_line(&report, results_dir));
            step_summary(&summary::aggregate_markdown(&report, results_dir));
            ExitCode::SUCCESS
        }
        Err(e) => fail_at("aggregate", &e, e.location(), aggregate_exit_code(&e)),
    }
}
