//! `aggregate`: glue over `collect_results::aggregate`.
use std::path::Path;

use collect_results::{aggregate, summary};
use sweep_cli::{Failure, Outcome};

use super::step_summary;

pub(crate) fn run_aggregate(
    results_dir: &str,
    exp_name: &str,
    expected_legs: Option<u64>,
) -> Outcome {
    // Relative paths keep error messages as the user wrote them.
    let report = aggregate::run(
        Path::new(results_dir),
        exp_name,
        Path::new(""),
        expected_legs,
    )
    .map_err(|e| {
        let (file, line) = e.location();
        let file = file.map(str::to_owned);
        Failure::from(e)
            .context("aggregate")
            .at((file.as_deref(), line))
    })?;
    eprintln!("{}", summary::aggregate_line(&report, results_dir));
    step_summary(&summary::aggregate_markdown(&report, results_dir));
    Ok(())
}
