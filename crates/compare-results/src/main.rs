//! `compare-results`: compare a sweep with its baseline (per-point deltas, a
//! regression verdict, an eval table and a chart). Exit status: 0 done, 1
//! regressions with `--fail-on-regression`, 2 usage or input error. The
//! flags are in [`args`]; the run is `compare_results::run`.

mod args;

use std::process::ExitCode;

use clap::Parser;
use sweep_cli::{Annotations, Failure, Kind, Outcome};

const TOOL: &str = "compare-results";

fn run(args: args::Args) -> Outcome {
    let o = compare_results::run::run(&args.options())?;
    if o.regressions && o.fail_on_regression {
        // The verdict line (and its annotation) is already printed.
        return Err(Failure::reported(Kind::Rejected));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = args::Args::parse();
    // stdout is the markdown report (the action discards it): the error's
    // annotation goes to stderr.
    sweep_cli::main_with(TOOL, Annotations::Stderr, || run(args))
}
