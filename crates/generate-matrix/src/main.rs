//! `generate-matrix`: expand master configs into the benchmark job matrix.
use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("generate-matrix: not implemented yet");
    ExitCode::from(2)
}
