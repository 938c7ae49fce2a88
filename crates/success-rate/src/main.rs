//! `success-rate`: per-hardware job success counts of a workflow run.
use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("success-rate: not implemented yet");
    ExitCode::from(2)
}
