//! `success-rate`: per-hardware job success counts of a workflow run,
//! written to `<stats_name>.json` (see the crate library for the rules).
//! Exit codes (docs/exit-codes.md): 0 written (also `null` when the token
//! cannot authenticate, as the reference does), 2 could not count (an
//! unreadable runner file, a missing token, GitHub failures).
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

mod cmd;

/// The contract of docs/tools/index.md#exit-codes, as this tool keeps it.
const EXIT_CODES: &str = "Exit codes: 0 written (also `null` when the token cannot read /user, \
as the reference does); 2 could not count (a usage error, an unreadable runner file, a missing \
token or run id, GitHub failing after retries, a failed write).";

/// Per-hardware success counts of every job attempt of a workflow run.
#[derive(Parser, Debug)]
#[command(version, about, after_help = EXIT_CODES)]
pub(crate) struct Cli {
    /// Output base name: `run_stats` writes `run_stats.json`.
    pub(crate) stats_name: String,
    /// Runner configuration whose `cluster:` labels are the hardware buckets.
    #[arg(
        long,
        env = "INPUT_RUNNER_CONFIG",
        default_value = "configs/runners.yaml"
    )]
    pub(crate) runner_config: PathBuf,
    /// Repository (`owner/name`).
    #[arg(long, env = "GITHUB_REPOSITORY")]
    pub(crate) repo: String,
    /// Workflow run id.
    #[arg(long, env = "GITHUB_RUN_ID")]
    pub(crate) run_id: String,
    /// Also write the counts placed by the runner that ran each job (its
    /// `runner_name` in a `cluster:` member list, else its name), with the
    /// jobs that could not be placed, to this file; the job summary then
    /// shows those counts. `<stats_name>.json` is unchanged.
    #[arg(long, env = "INPUT_BY_RUNNER")]
    pub(crate) by_runner: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // An `anyhow` error here is "could not do the job" (exit 2).
    sweep_cli::main("success-rate", || Ok(cmd::run(&cli)?))
}
