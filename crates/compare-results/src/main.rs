//! `compare-results`: compare a sweep with its baseline (per-point deltas, a
//! regression verdict, an eval table and a chart). Exit status: 0 done, 1
//! regressions with `--fail-on-regression`, 2 usage or input error.
use std::process::ExitCode;

use sweep_model::exit;

use clap::Parser;
use compare_results::cli::{Args, run};

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(o) if o.regressions && o.fail_on_regression => exit::rejected(),
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            let msg = format!("{e:#}");
            if sweep_model::gha::in_actions() {
                // stderr: the action discards stdout (the markdown).
                let level = sweep_model::gha::Level::Error;
                eprintln!("{}", sweep_model::gha::annotation(level, None, None, &msg));
            }
            eprintln!("compare-results: error: {msg}");
            exit::failed()
        }
    }
}
