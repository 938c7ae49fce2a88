//! `reuse-sweep`: the /reuse-sweep-run protocol: find and validate a reusable PR sweep.
use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("reuse-sweep: not implemented yet");
    ExitCode::from(2)
}
