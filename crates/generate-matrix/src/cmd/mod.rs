//! Each subcommand's flags and files (`main.rs` only parses and
//! dispatches); the logic they call is in the `sweep_matrix` and
//! `sweep_changelog` libraries, whose typed errors say which failure they
//! are (`sweep_cli::Classify`). Shared here: the JSON-output helper.

pub(crate) mod canary;
pub(crate) mod changelog;
pub(crate) mod from_command;
pub(crate) mod generate;
pub(crate) mod legs;
pub(crate) mod policy;
pub(crate) mod priority;

use serde_json::Value;
use sweep_cli::{Failure, Outcome};

/// Prints `v` as one line of compact JSON; exit 2 when it cannot be serialised.
pub(crate) fn print_json(v: &Value) -> Outcome {
    let s = serde_json::to_string(v)
        .map_err(|e| Failure::failed(e).context("cannot serialise output"))?;
    sweep_cli::stdout::println(&s);
    Ok(())
}
