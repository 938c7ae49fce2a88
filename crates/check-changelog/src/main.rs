//! `check-changelog`: gate perf-changelog.yaml changes between two git refs
//! (exit 0 accepted, 1 rejected, 2 usage).
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    check_changelog::run(check_changelog::Cli::parse())
}
