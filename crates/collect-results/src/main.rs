//! `collect-results`: normalise, aggregate and check benchmark and eval results.
use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("collect-results: not implemented yet");
    ExitCode::from(2)
}
