//! `generate-matrix from-command`: the manual entry of the sweep workflow.

use clap::{Args, Parser as _};
use sweep_cli::{Failure, Outcome};

use super::generate::{full_sweep_rows, test_config_rows};
use super::print_json;
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
/// parser, so it accepts exactly what those subcommands accept. A command
/// line that cannot be parsed is a usage error (2); one that selects no
/// rows, or rows that cannot be bucketed, is refused (1).
pub(crate) fn from_command(a: &FromCommandArgs) -> Outcome {
    let mut words = sweep_matrix::legs::command_words(&a.command_line)?;
    if !words
        .iter()
        .any(|w| w == "--config-files" || w.starts_with("--config-files="))
    {
        words.push("--config-files".into());
        words.extend(sweep_matrix::legs::default_config_files());
    }
    let argv = std::iter::once("generate-matrix".to_string()).chain(words);
    let cli = Cli::try_parse_from(argv).map_err(|e| {
        let msg = format!("command line {:?}: {}", a.command_line, e.render());
        Failure::failed_msg(msg.trim_end())
    })?;
    let rows = match &cli.command {
        Command::FullSweep(f) => full_sweep_rows(f)?,
        Command::TestConfig(t) => test_config_rows(t)?,
        _ => {
            return Err(Failure::failed_msg(
                "only full-sweep and test-config command lines are accepted",
            ));
        }
    };
    if rows.is_empty() {
        return Err(Failure::rejected_msg(format!(
            "command line {:?} selects no benchmark rows: nothing to sweep",
            a.command_line
        )));
    }
    let matrix = sweep_matrix::legs::bucket_rows(rows, &a.command_line)
        .to_value()
        .map_err(|e| Failure::failed(e).context("cannot serialise the matrix"))?;
    print_json(&matrix)
}
