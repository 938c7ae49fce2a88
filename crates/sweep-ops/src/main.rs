//! `sweep-ops`: the benchmark repository's GitHub entry points other than
//! the PR/push sweep (`authorize-fork`, `check-fork-runners`, `dispatch-ingest`, `merge`,
//! `recover-ingest`, `runner-digest`, `pr-reminder`; see the crate's library). Exit codes are those of
//! `sweep_cli` (docs/exit-codes.md): 0 done, 1 the rules refused (message on stderr and
//! as an `::error::` annotation), 2 the command could not work (usage, an
//! unreadable event file, GitHub failures after retries, a wait that timed
//! out).
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Trusted fork sweeps, the ingest dispatch, the merge helper, ingest recovery and the runner digest",
    after_help = "Exit codes: 0 done; 1 the rules refused (the reason on stderr as `sweep-ops: error: …`); \
2 the command could not work (usage, an unreadable event file, GitHub failing after retries, a wait \
that timed out)."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// On a fork PR's `labeled` event: authorise its exact head SHA and
    /// dispatch the sweep (pull_request_target; never checks out PR code).
    AuthorizeFork(cmd::fork::ForkCli),
    /// Trusted dispatch: refuse a matrix row whose `runner` is not a label
    /// of the base's runner file (exit 1, naming the config).
    CheckForkRunners(cmd::fork::CheckRunnersCli),
    /// Dispatch the ingest of a push-to-main sweep (or of the PR sweep it
    /// reused) to the ingest repository (token in INGEST_TOKEN).
    DispatchIngest(cmd::ingest::IngestCli),
    /// Merge a prepared PR so that the push to main reuses its sweep.
    Merge(cmd::merge::MergeCli),
    /// Re-dispatch the ingest of a reused sweep whose ingest failed.
    RecoverIngest(cmd::recover::RecoverCli),
    /// Markdown digest of the offline self-hosted runners.
    RunnerDigest(cmd::digest::DigestCli),
    /// Post the reminder (your template file) once on a new pull request;
    /// a token that cannot write (a fork's) is a warning, exit 0.
    PrReminder(cmd::reminder::ReminderCli),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    sweep_cli::main("sweep-ops", || match cli.cmd {
        Cmd::AuthorizeFork(c) => cmd::fork::authorize_fork(c),
        Cmd::CheckForkRunners(c) => cmd::fork::check_fork_runners(c),
        Cmd::DispatchIngest(c) => cmd::ingest::dispatch_ingest(c),
        Cmd::Merge(c) => cmd::merge::run_merge(c),
        Cmd::RecoverIngest(c) => cmd::recover::recover_ingest(c),
        Cmd::RunnerDigest(c) => cmd::digest::runner_digest(c),
        Cmd::PrReminder(c) => cmd::reminder::pr_reminder(c),
    })
}
