//! Each subcommand's flags, files and exit codes (`main.rs` only parses and
//! dispatches); the logic they call is in the `sweep_matrix` and
//! `sweep_changelog` libraries. Shared here: the usage-error and JSON-output
//! helpers.

pub(crate) mod canary;
pub(crate) mod changelog;
pub(crate) mod from_command;
pub(crate) mod generate;
pub(crate) mod legs;
pub(crate) mod policy;
pub(crate) mod priority;

use serde_json::Value;
use std::process::ExitCode;
use sweep_model::exit;

/// A usage error (a bad flag value or command line): the message, exit 2.
pub(crate) fn usage_error(msg: &str) -> ExitCode {
    eprintln!("generate-matrix: error: {msg}");
    exit::failed()
}

/// Prints `v` as one line of compact JSON; 2 when it cannot be serialised.
pub(crate) fn print_json(v: &Value) -> ExitCode {
    match serde_json::to_string(v) {
        Ok(s) => {
            sweep_model::stdout::println(&s);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("generate-matrix: error: cannot serialise output: {e}");
            exit::failed()
        }
    }
}
