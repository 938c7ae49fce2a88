//! `compare-results`: compare a sweep with a baseline: per-point deltas and a regression verdict.
use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("compare-results: not implemented yet");
    ExitCode::from(2)
}
