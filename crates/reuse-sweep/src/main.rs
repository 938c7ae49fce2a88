//! `reuse-sweep`: the `/reuse-sweep-run` protocol.
//!
//! * `find` — the reference's `find_reusable_sweep_run.py` (same flags,
//!   outputs and fail-closed rules): exit 0 with the eight outputs, exit 1
//!   with `error: <message>` when the protocol refuses, exit 2 when it
//!   cannot work (no token, GitHub cannot answer, an output cannot be
//!   written, a bad flag value). The reference exits 1 for every error.
//! * `validate-artifacts` — the reference's
//!   `validate_reusable_sweep_artifacts.py`: exit 0 valid, 1 invalid, 2 the
//!   artifact folder cannot be read or written.
//!
//! The codes are those of `sweep_cli` (docs/exit-codes.md).
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

/// The contract of docs/tools/index.md#exit-codes, as this tool keeps it.
const EXIT_CODES: &str = "Exit codes: 0 a decision, or done; 1 refused (the protocol said no \
and fails closed, artifacts that fail validation, a forged or malformed callback; nothing is \
written); 2 could not do the job (a usage error, no token, an unreadable event file or \
artifact directory, GitHub failing after retries, a failed write).";

#[derive(Parser, Debug)]
#[command(
    version,
    about = "The /reuse-sweep-run protocol: find and validate a reusable PR sweep",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Decide whether this run reuses an approved pull-request sweep.
    Find(Box<cmd::find::FindCli>),
    /// Check a downloaded artifact directory of a reusable sweep (collapses
    /// re-run eval duplicates in place first).
    ValidateArtifacts {
        /// Directory whose sub-directories are artifacts (`gh run download` layout).
        #[arg(long, env = "INPUT_ARTIFACTS_DIR")]
        artifacts_dir: PathBuf,
    },
    /// `/stage-results [run-id]` on a PR: authorise and resolve the source run.
    StageResults(cmd::stage::StageCli),
    /// Validate the resolved run's downloaded artifacts, acknowledge on the
    /// PR and dispatch staging to the frontend (token in STAGE_TOKEN).
    StageDispatch(cmd::stage::StageDispatchCli),
    /// The frontend's staging callback (`repository_dispatch`): report on the PR.
    StageCallback(cmd::stage::StageCallbackCli),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    sweep_cli::main("reuse-sweep", || match cli.cmd {
        Cmd::Find(f) => cmd::find::find(*f),
        Cmd::ValidateArtifacts { artifacts_dir } => cmd::validate::validate(&artifacts_dir),
        Cmd::StageResults(c) => cmd::stage::stage_results(c),
        Cmd::StageDispatch(c) => cmd::stage::stage_dispatch(c),
        Cmd::StageCallback(c) => cmd::stage::stage_callback(c),
    })
}
