//! `check-changelog`: gate perf-changelog.yaml changes between two git refs.
use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("check-changelog: not implemented yet");
    ExitCode::from(2)
}
