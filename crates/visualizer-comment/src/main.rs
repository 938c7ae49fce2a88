//! `visualizer-comment`: one sticky PR comment with the verdict (from
//! compare-results' JSON), the unofficial-run visualizer links, the runs,
//! success rates, evals and optional extra markdown sections.
//!
//! Exit codes: 0 the comment is created/updated/unchanged, or the token is
//! read-only (fork PR, 403 "Resource not accessible by integration":
//! warning + body in the job summary); 2 the tool could not do its job (bad
//! inputs, a rejected token (401), no such PR or repository (404), GitHub
//! failing after retries).
//!
//! `visualizer-comment check-run` posts the verdict as a completed check
//! run "sweep verdict" on the PR's head instead (needs `checks: write`; a
//! token without it is a warning and exit 0).
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use visualizer_comment::{DEFAULT_MARKER, DEFAULT_VISUALIZER_URL};

mod cmd;

/// Post (or update) the sticky visualizer comment on a pull request.
#[derive(Parser, Debug)]
#[command(
    version,
    about,
    after_help = "Exit codes: 0 the comment was created, updated or unchanged, or the token is read-only (a fork PR: a warning and the body in the job summary); check-run: 0 posted, or a token without checks: write (a warning); 2 could not do the job (a usage error, bad inputs, a rejected token, no such PR or repository, GitHub failing after retries).",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) comment: CommentArgs,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Create a completed check run with the verdict of compare-results'
    /// JSON report on a commit (the PR's head): failure when a point
    /// regressed or an eval is below its threshold, neutral when nothing was
    /// compared, else success. Needs `checks: write`; a token without it
    /// (fork pull requests) is a warning and exit 0.
    CheckRun(cmd::check_run::CheckRunArgs),
}

/// Flags of the comment (the command without a subcommand).
#[derive(Args, Debug)]
pub(crate) struct CommentArgs {
    /// Repository (`owner/name`).
    #[arg(long, env = "GITHUB_REPOSITORY", required = true)]
    pub(crate) repo: Option<String>,
    /// Pull request number.
    #[arg(long, env = "INPUT_PR_NUMBER", required = true)]
    pub(crate) pr_number: Option<u64>,
    /// Workflow run id (not the attempt).
    #[arg(long, env = "GITHUB_RUN_ID", required = true)]
    pub(crate) run_id: Option<u64>,
    /// Markdown file appended as a section (repeatable; order kept). A
    /// missing or empty file is skipped with a warning.
    #[arg(long = "section")]
    pub(crate) sections: Vec<PathBuf>,
    /// compare-results' `--json` report: its verdict and regressions head
    /// the comment, its evals are listed with their thresholds. A missing
    /// file is skipped with a warning.
    #[arg(long, env = "INPUT_COMPARE_JSON")]
    pub(crate) compare_json: Option<PathBuf>,
    /// success-rate's `run_stats.json`: the success rate per hardware. A
    /// missing file is skipped with a warning.
    #[arg(long, env = "INPUT_RUN_STATS")]
    pub(crate) run_stats: Option<PathBuf>,
    /// success-rate's `run_stats_by_runner.json` (`--by-runner`): the counts
    /// placed by the runner that ran each job and the jobs that could not be
    /// placed; shown instead of `--run-stats` when present and not `null`. A
    /// missing file is skipped with a warning.
    #[arg(long, env = "INPUT_RUN_STATS_BY_RUNNER")]
    pub(crate) run_stats_by_runner: Option<PathBuf>,
    /// This run's URL (default: from GITHUB_SERVER_URL, the repository and
    /// the run id).
    #[arg(long, env = "INPUT_RUN_URL")]
    pub(crate) run_url: Option<String>,
    /// URL of the run whose results this run reused (`/reuse-sweep-run`).
    #[arg(long, env = "INPUT_REUSED_RUN_URL")]
    pub(crate) reused_run_url: Option<String>,
    /// The compare-report artifact's URL, linked as the charts and the
    /// full report.
    #[arg(long, env = "INPUT_REPORT_URL")]
    pub(crate) report_url: Option<String>,
    /// compare-results' `charts.json` (`--charts-dir`); with
    /// --charts-base-url each configuration's PNG is embedded. A missing
    /// file is skipped with a warning.
    #[arg(long, env = "INPUT_CHARTS")]
    pub(crate) charts: Option<PathBuf>,
    /// URL of the folder the PNGs were pushed to (publish-charts'
    /// `base-url`).
    #[arg(long, env = "INPUT_CHARTS_BASE_URL")]
    pub(crate) charts_base_url: Option<String>,
    /// Hidden marker naming this comment (one per tool and purpose).
    #[arg(long, env = "INPUT_MARKER", default_value = DEFAULT_MARKER)]
    pub(crate) marker: String,
    /// Login whose marked comment is updated when the token cannot tell its
    /// own identity (Actions and App tokens may not call `GET /user`; use the
    /// app's bot login, e.g. `my-app[bot]`). A token that can (a PAT) is
    /// identified by `GET /user` and this is not used.
    #[arg(
        long,
        env = "INPUT_COMMENT_AUTHOR",
        default_value = "github-actions[bot]"
    )]
    pub(crate) comment_author: String,
    /// The commit the comment speaks for (the pull request's head), named
    /// and linked in the provenance line ("<sha> compared with <baseline>").
    #[arg(long, env = "INPUT_HEAD_SHA")]
    pub(crate) head_sha: Option<String>,
    /// Visualizer site (its `/inference` and `/evaluation` pages are linked).
    #[arg(long, env = "INPUT_VISUALIZER_URL", default_value = DEFAULT_VISUALIZER_URL)]
    pub(crate) visualizer_url: String,
    /// The comment command a writer acknowledges a regression with
    /// (`<command> <reason>` on a line of its own, on the PR's head commit):
    /// read when the verdict is regressions alone and --head-sha is given;
    /// the heading then names who and why. Empty: not read.
    #[arg(long, env = "INPUT_ACKNOWLEDGE_COMMAND", default_value = visualizer_comment::ack::DEFAULT_COMMAND)]
    pub(crate) acknowledge_command: String,
    /// Print the body to stdout instead of posting it.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Every error here is "could not do the job" (exit 2).
    match &cli.command {
        Some(Command::CheckRun(args)) => sweep_cli::main("visualizer-comment check-run", || {
            Ok(cmd::check_run::run(args)?)
        }),
        None => sweep_cli::main("visualizer-comment", || {
            Ok(cmd::comment::run(&cli.comment)?)
        }),
    }
}
