//! `generate-matrix from-command`: the manual entry of the sweep workflow.

use std::process::ExitCode;

use clap::{Args, Parser as _};
use serde_json::Value;
use sweep_model::{exit, gha};

use super::generate::{full_sweep_rows, test_config_rows};
use super::{print_json, usage_error};
use crate::{Cli, Command};

#[derive(Args)]
pub(crate) struct FromCommandArgs {
    /// The command line: `full-sweep …` or `test-config …` (without the program name).
    /// Without --config-files, the changelog path's master configs are read.
    #[arg(long, env = "INPUT_COMMAND_LINE", value_name = "LINE")]
    command_line: String,
}

/// `from-command`: the command line is split by quoting rules (nothing is
/// evaluated) and parsed by this program's own `full-sweep` / `test-config`
/// parser, so it accepts exactly what those subcommands accept.
pub(crate) fn from_command(a: &FromCommandArgs) -> ExitCode {
    let mut words = match sweep_matrix::legs::command_words(&a.command_line) {
        Ok(w) => w,
        Err(e) => {
            gha::annotate(gha::Level::Error, None, None, &e);
            return usage_error(&e);
        }
    };
    if !words
        .iter()
        .any(|w| w == "--config-files" || w.starts_with("--config-files="))
    {
        words.push("--config-files".into());
        words.extend(sweep_matrix::legs::default_config_files());
    }
    let argv = std::iter::once("generate-matrix".to_string()).chain(words);
    let cli = match Cli::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) => {
            let msg = format!("command line {:?}: {}", a.command_line, e.render());
            gha::annotate(gha::Level::Error, None, None, msg.trim_end());
            eprintln!("generate-matrix: error: {msg}");
            return exit::failed();
        }
    };
    let rows = match &cli.command {
        Command::FullSweep(f) => full_sweep_rows(f),
        Command::TestConfig(t) => test_config_rows(t),
        _ => return usage_error("only full-sweep and test-config command lines are accepted"),
    };
    let rows = match rows {
        Ok(r) => r,
        Err(code) => return code,
    };
    let rows: Result<Vec<Value>, _> = rows.iter().map(serde_json::to_value).collect();
    let rows = match rows {
        Ok(r) => r,
        Err(e) => {
            eprintln!("generate-matrix: error: cannot serialise the rows: {e}");
            return exit::failed();
        }
    };
    if rows.is_empty() {
        let msg = format!(
            "command line {:?} selects no benchmark rows: nothing to sweep",
            a.command_line
        );
        gha::annotate(gha::Level::Error, None, None, &msg);
        eprintln!("generate-matrix: error: {msg}");
        return exit::rejected();
    }
    match sweep_matrix::legs::bucket_rows(rows, &a.command_line) {
        Ok(v) => print_json(&v),
        Err(e) => {
            eprintln!("generate-matrix: error: {e}");
            exit::rejected()
        }
    }
}
