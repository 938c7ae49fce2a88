//! `visualizer-comment`: one sticky PR comment with the results and dashboard links.
use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("visualizer-comment: not implemented yet");
    ExitCode::from(2)
}
