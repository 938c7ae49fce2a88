//! `sweep-history`: main's memory. Appends a completed main sweep's
//! aggregated rows to the history store (a folder, or the repository's data
//! branch), verifies the store, lists the change points of its series and
//! shows one configuration's series. The logic is in `sweep-series`.
//! Exit codes: 0 done; 1 the history or the rows were refused (a corrupt or
//! orphan line, a run already there with other rows, a row that is not an
//! aggregate row); 2 could not do the job (unreadable input, git, I/O).
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod cmd;

/// The contract of docs/tools/index.md#exit-codes, as this tool keeps it.
const EXIT_CODES: &str = "Exit codes: 0 done (appended or already there, verified, listed, shown, \
backfilled); 1 refused (a corrupt or orphan line, a run already there with other rows, a row \
that is not an aggregate row, an unknown configuration); 2 could not do the job (a missing \
store or input, git, I/O, the GitHub API or the database failed).";

#[derive(Parser, Debug)]
#[command(version, about, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Append one main run's aggregated rows (idempotent per run id and attempt).
    Append(AppendArgs),
    /// Check every line of the store; a corrupt line is named by file:line.
    Verify(StoreArgs),
    /// List the change points of every series, with the runs, commits and PR either side.
    Changes(ChangesArgs),
    /// Show one configuration's series as a table (and, with --png, a picture).
    Show(ShowArgs),
    /// Append past main runs' aggregates read through the GitHub API (resumable: runs already there are passed over).
    Backfill(BackfillArgs),
    /// Fetch the data branch's tip into a folder for reading (an empty history when the branch does not exist yet).
    Checkout(CheckoutArgs),
}

#[derive(Args, Debug)]
pub(crate) struct CheckoutArgs {
    /// The repository holding the data branch (URL or path).
    #[arg(long, env = "INPUT_REMOTE")]
    pub(crate) remote: String,
    /// The data branch.
    #[arg(long, env = "INPUT_BRANCH", default_value = "sweepkit-history")]
    pub(crate) branch: String,
    /// The folder to check it out in (created; read it with --store or
    /// compare-results --history).
    #[arg(long, env = "INPUT_WORK")]
    pub(crate) work: PathBuf,
}

#[derive(Args, Debug)]
pub(crate) struct BackfillArgs {
    #[command(flatten)]
    pub(crate) target: Target,
    /// The repository whose runs are read (`owner/name`).
    #[arg(long, env = "GITHUB_REPOSITORY")]
    pub(crate) repo: String,
    /// The sweep workflow's file.
    #[arg(long, default_value = "run-sweep.yml")]
    pub(crate) workflow: String,
    /// The branch whose push runs are main's history.
    #[arg(long, default_value = "main")]
    pub(crate) main_branch: String,
    /// At most this many runs, newest first (1 to 1000).
    #[arg(long, default_value_t = 100)]
    pub(crate) max_runs: usize,
}

#[derive(Args, Debug)]
pub(crate) struct StoreArgs {
    /// The history store: a folder (the checkout of the data branch) or a
    /// `postgres://` URL.
    #[arg(long, env = "INPUT_STORE")]
    pub(crate) store: PathBuf,
}

#[derive(Args, Debug)]
pub(crate) struct Target {
    /// The history store: a folder or a `postgres://` URL (with no --remote).
    #[arg(long, env = "INPUT_STORE", required_unless_present = "remote")]
    pub(crate) store: Option<PathBuf>,
    /// The repository holding the data branch (URL or path): fetch, change,
    /// commit and push, applying the change again on the new tip when a
    /// push is refused.
    #[arg(long, env = "INPUT_REMOTE", requires = "work")]
    pub(crate) remote: Option<String>,
    /// The data branch.
    #[arg(long, env = "INPUT_BRANCH", default_value = "sweepkit-history")]
    pub(crate) branch: String,
    /// Work folder for the branch's checkout (with --remote).
    #[arg(long, env = "INPUT_WORK")]
    pub(crate) work: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct AppendArgs {
    #[command(flatten)]
    pub(crate) target: Target,
    /// The run's aggregated benchmark rows (`agg_bmk.json`).
    #[arg(long, env = "INPUT_AGG")]
    pub(crate) agg: PathBuf,
    /// The run's aggregated eval rows (`agg_eval_all.json`), if it ran evals.
    #[arg(long, env = "INPUT_EVALS")]
    pub(crate) evals: Option<PathBuf>,
    #[arg(long, env = "GITHUB_RUN_ID")]
    pub(crate) run_id: u64,
    #[arg(long, env = "GITHUB_RUN_ATTEMPT", default_value_t = 1)]
    pub(crate) run_attempt: u32,
    /// The commit of main the run measured.
    #[arg(long, env = "GITHUB_SHA")]
    pub(crate) commit: String,
    /// When the run was made (RFC 3339).
    #[arg(long, env = "INPUT_DATE")]
    pub(crate) date: String,
    /// The pull request the commit came from, when known.
    #[arg(long, env = "INPUT_PR_NUMBER")]
    pub(crate) pr_number: Option<u64>,
    /// The commit's message: without --pr-number, the pull request is read
    /// from its first line (`Merge pull request #12 from …`, or a squash
    /// merge's `… (#12)`).
    #[arg(long, env = "INPUT_COMMIT_MESSAGE")]
    pub(crate) commit_message: Option<String>,
    #[arg(long, env = "GITHUB_REPOSITORY")]
    pub(crate) repo: String,
    #[arg(long, env = "GITHUB_EVENT_NAME", default_value = "push")]
    pub(crate) event: String,
}

#[derive(Args, Debug)]
pub(crate) struct ChangesArgs {
    #[command(flatten)]
    pub(crate) store: StoreArgs,
    /// Print JSON instead of a table.
    #[arg(long, conflicts_with = "markdown")]
    pub(crate) json: bool,
    /// Print a markdown digest (for a job summary or an issue) instead of a
    /// table.
    #[arg(long)]
    pub(crate) markdown: bool,
    /// Only the change points that the runs dated at or after this moment
    /// revealed (the runs before it did not show them yet): the news of an
    /// append, or of a day. UTC, as the store writes dates:
    /// `2026-12-04T00:00:00Z`.
    #[arg(long, value_parser = utc_date)]
    pub(crate) since: Option<String>,
    /// A change point is kept when its p-value is at most this (Otava's default).
    #[arg(long, default_value_t = 0.001)]
    pub(crate) max_pvalue: f64,
    /// ... and its change is at least this fraction (0.02: 2 %). Otava's
    /// default is 0; a change of under 2 % in a throughput series is not one
    /// a benchmark team acts on, and noise alone produces a few.
    #[arg(long, default_value_t = 0.02)]
    pub(crate) min_magnitude: f64,
}

#[derive(Args, Debug)]
pub(crate) struct ShowArgs {
    #[command(flatten)]
    pub(crate) store: StoreArgs,
    /// The configuration: `<hw>/<model prefix>-<precision>-<framework>`, e.g. `b200/qwen3.5-fp4-sglang`.
    #[arg(long)]
    pub(crate) config: String,
    /// The metric.
    #[arg(long, default_value = "tput_per_gpu")]
    pub(crate) metric: String,
    /// Also draw the series as a PNG here: one panel per point, main's
    /// runs oldest first, the learnt limit a next value is judged by.
    #[arg(long, value_name = "FILE")]
    pub(crate) png: Option<std::path::PathBuf>,
}

/// `YYYY-MM-DDTHH:MM:SSZ`, the one form the store's dates take, so that
/// comparing the strings compares the moments.
fn utc_date(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let shaped = b.len() == 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'Z';
    if shaped {
        Ok(s.to_string())
    } else {
        Err(format!(
            "'{s}' is not a UTC date of the store's form, e.g. 2026-12-04T00:00:00Z"
        ))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    sweep_cli::main("sweep-history", || match &cli.command {
        Command::Append(a) => cmd::append(a),
        Command::Verify(s) => cmd::verify(s),
        Command::Changes(c) => cmd::changes(c),
        Command::Show(s) => cmd::show(s),
        Command::Backfill(b) => cmd::backfill(b),
        Command::Checkout(c) => cmd::checkout(c),
    })
}
