//! `visualizer-comment check-run`: read compare-results' JSON report, create
//! the "sweep verdict" check run on the PR's head.
use anyhow::{Context, Result, anyhow};
use github_client::{Client, Config};
use visualizer_comment::check_run::{self, CheckOutcome};

use std::path::PathBuf;

use clap::Args;
use visualizer_comment::check_run::DEFAULT_NAME;

/// success-rate's run stats: one small object per cluster; 16 MiB is far
/// beyond any sweep's and keeps a wrong file from filling memory.
const MAX_RUN_STATS_BYTES: u64 = 16 * 1024 * 1024;

/// Flags of `check-run`.
#[derive(Args, Debug)]
pub(crate) struct CheckRunArgs {
    /// compare-results' `--json` report.
    #[arg(long, env = "INPUT_REPORT")]
    pub(crate) report: PathBuf,
    /// Repository (`owner/name`).
    #[arg(long, env = "GITHUB_REPOSITORY")]
    pub(crate) repo: String,
    /// The commit the check belongs to: the pull request's head SHA.
    #[arg(long, env = "INPUT_HEAD_SHA")]
    pub(crate) sha: String,
    /// The check's name.
    #[arg(long, env = "INPUT_CHECK_NAME", default_value = DEFAULT_NAME)]
    pub(crate) name: String,
    /// The run linked from the check (default: from GITHUB_SERVER_URL, the
    /// repository and GITHUB_RUN_ID, when the run id is set).
    #[arg(long, env = "INPUT_RUN_URL")]
    pub(crate) run_url: Option<String>,
    /// success-rate's `run_stats.json`: whether legs were meant to run.
    /// With no result row the check is `failure`, unless this file counts
    /// no job at all (`neutral`); without it, `failure` (fail closed). A
    /// missing file is skipped with a warning.
    #[arg(long, env = "INPUT_RUN_STATS")]
    pub(crate) run_stats: Option<PathBuf>,
    /// The pull request whose comments may acknowledge the regression (a
    /// writer's `/acknowledge-regression <reason>` on this head commit turns
    /// a failure that is regressions alone into `neutral`). Not given: no
    /// acknowledgement is read.
    #[arg(long, env = "INPUT_PR_NUMBER")]
    pub(crate) pr_number: Option<u64>,
    /// The acknowledgement's comment command; empty: not read.
    #[arg(long, env = "INPUT_ACKNOWLEDGE_COMMAND", default_value = visualizer_comment::ack::DEFAULT_COMMAND)]
    pub(crate) acknowledge_command: String,
}

pub(crate) fn run(args: &CheckRunArgs) -> Result<()> {
    let path = &args.report;
    let report = read_report(path)?;
    let run_url = run_url(args);
    let stats = read_run_stats(args)?;
    let scheduled = visualizer_comment::verdict::scheduled(stats.as_ref(), None);
    let config = Config::from_env(&["GITHUB_TOKEN", "GH_TOKEN"]);
    if config.token.is_none() {
        return Err(anyhow!(
            "GITHUB_TOKEN (or GH_TOKEN) is required: a token with `checks: write` on {}",
            args.repo
        ));
    }
    let client = Client::new(config)?;
    let ack = args.pr_number.and_then(|pr| {
        super::acknowledgement(
            &client,
            &args.repo,
            pr,
            &args.sha,
            &args.acknowledge_command,
            &report,
            scheduled,
        )
    });
    let check = check_run::from_report_acknowledged(
        &report,
        scheduled,
        &args.name,
        &args.sha,
        run_url.as_deref(),
        ack.as_ref(),
    )
    .with_context(|| format!("building the check run from {}", path.display()))?;
    let outcome = check_run::create(&client, &args.repo, &check).with_context(|| {
        format!(
            "creating check run {:?} on {} of {}",
            check.name, check.head_sha, args.repo
        )
    })?;
    report_outcome(outcome, &check)
}

/// compare-results' JSON report at `path`.
fn read_report(path: &std::path::Path) -> Result<serde_json::Value> {
    let text = sweep_model::fsio::read_text(path, sweep_model::fsio::MAX_AGGREGATE_JSON_BYTES)
        .with_context(|| format!("compare JSON {}: cannot read it", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| anyhow!("compare JSON {}: invalid JSON: {e}", path.display()))
}

/// The run linked from the check: `--run-url`, else the one of
/// GITHUB_RUN_ID (when set) on GITHUB_SERVER_URL.
fn run_url(args: &CheckRunArgs) -> Option<String> {
    match args.run_url.clone().filter(|u| !u.is_empty()) {
        Some(url) => Some(url),
        None => std::env::var("GITHUB_RUN_ID")
            .ok()
            .filter(|id| !id.is_empty())
            .map(|id| {
                let server = std::env::var("GITHUB_SERVER_URL")
                    .ok()
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "https://github.com".into());
                format!(
                    "{}/{}/actions/runs/{id}",
                    server.trim_end_matches('/'),
                    args.repo
                )
            }),
    }
}

/// success-rate's run stats when given (an empty path is none); a missing
/// file is skipped with a warning.
fn read_run_stats(args: &CheckRunArgs) -> Result<Option<serde_json::Value>> {
    let Some(p) = args
        .run_stats
        .as_deref()
        .filter(|p| !p.as_os_str().is_empty())
    else {
        return Ok(None);
    };
    if !p.exists() {
        eprintln!("warning: run stats {}: no such file, skipped", p.display());
        return Ok(None);
    }
    let bytes = sweep_model::fsio::read_regular(p, MAX_RUN_STATS_BYTES)
        .with_context(|| format!("run stats {}: cannot read it", p.display()))?;
    let stats = serde_json::from_slice::<serde_json::Value>(&bytes)
        .map_err(|e| anyhow!("run stats {}: invalid JSON: {e}", p.display()))?;
    Ok(Some(stats))
}

/// Prints the created check run (and writes the `check-run-url` output),
/// or warns that the token may not create one.
fn report_outcome(outcome: CheckOutcome, check: &check_run::CheckRun) -> Result<()> {
    match outcome {
        CheckOutcome::Created { url, .. } => {
            sweep_cli::stdout::println(&format!(
                "created check run {:?} ({}): {url}",
                check.name,
                check.conclusion.as_str()
            ));
            if let Some(out) = std::env::var_os("GITHUB_OUTPUT").filter(|p| !p.is_empty()) {
                sweep_cli::write_output(std::path::Path::new(&out), "check-run-url", &url)
                    .context("writing the check-run-url output")?;
            }
        }
        CheckOutcome::NotPermitted { reason } => {
            let msg = format!(
                "no check run {:?}: {reason}. Creating one needs `checks: write`, which fork pull requests never get; the verdict is in the PR comment.",
                check.name
            );
            sweep_cli::annotate(sweep_cli::Level::Warning, None, None, &msg);
            eprintln!("warning: {}", sweep_model::gha::log_text(&msg));
        }
    }
    Ok(())
}
