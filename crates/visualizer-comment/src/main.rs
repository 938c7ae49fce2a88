//! `visualizer-comment`: one sticky PR comment with the verdict (from
//! compare-results' JSON), the unofficial-run visualizer links, the runs,
//! success rates, evals and optional extra markdown sections.
//!
//! Exit codes: 0 the comment is created/updated/unchanged, or the token is
//! read-only (fork PR, 403 "Resource not accessible by integration":
//! warning + body in the job summary); 2 the tool could not do its job (bad
//! inputs, a rejected token (401), no such PR or repository (404), GitHub
//! failing after retries).
use std::path::PathBuf;
use std::process::ExitCode;

use sweep_model::exit;

use anyhow::{Context, Result, anyhow};
use clap::Parser;
use github_client::{Client, Config};
use serde_json::Value;
use sweep_model::gha::{self, Level};
use visualizer_comment::body::{self, BodyInput};
use visualizer_comment::{DEFAULT_MARKER, DEFAULT_VISUALIZER_URL, Outcome, Post, publish};

/// Post (or update) the sticky visualizer comment on a pull request.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// Repository (`owner/name`).
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repo: String,
    /// Pull request number.
    #[arg(long, env = "INPUT_PR_NUMBER")]
    pr_number: u64,
    /// Workflow run id (not the attempt).
    #[arg(long, env = "GITHUB_RUN_ID")]
    run_id: u64,
    /// Markdown file appended as a section (repeatable; order kept). A
    /// missing or empty file is skipped with a warning.
    #[arg(long = "section")]
    sections: Vec<PathBuf>,
    /// compare-results' `--json` report: its verdict and regressions head
    /// the comment, its evals are listed with their thresholds. A missing
    /// file is skipped with a warning.
    #[arg(long, env = "INPUT_COMPARE_JSON")]
    compare_json: Option<PathBuf>,
    /// success-rate's `run_stats.json`: the success rate per hardware. A
    /// missing file is skipped with a warning.
    #[arg(long, env = "INPUT_RUN_STATS")]
    run_stats: Option<PathBuf>,
    /// success-rate's `run_stats_by_runner.json` (`--by-runner`): the counts
    /// placed by the runner that ran each job and the jobs that could not be
    /// placed; shown instead of `--run-stats` when present and not `null`. A
    /// missing file is skipped with a warning.
    #[arg(long, env = "INPUT_RUN_STATS_BY_RUNNER")]
    run_stats_by_runner: Option<PathBuf>,
    /// This run's URL (default: from GITHUB_SERVER_URL, the repository and
    /// the run id).
    #[arg(long, env = "INPUT_RUN_URL")]
    run_url: Option<String>,
    /// URL of the run whose results this run reused (`/reuse-sweep-run`).
    #[arg(long, env = "INPUT_REUSED_RUN_URL")]
    reused_run_url: Option<String>,
    /// The compare-report artifact's URL, linked as the charts and the
    /// full report.
    #[arg(long, env = "INPUT_REPORT_URL")]
    report_url: Option<String>,
    /// compare-results' `charts.json` (`--charts-dir`); with
    /// --charts-base-url each configuration's PNG is embedded. A missing
    /// file is skipped with a warning.
    #[arg(long, env = "INPUT_CHARTS")]
    charts: Option<PathBuf>,
    /// URL of the folder the PNGs were pushed to (publish-charts'
    /// `base-url`).
    #[arg(long, env = "INPUT_CHARTS_BASE_URL")]
    charts_base_url: Option<String>,
    /// Hidden marker naming this comment (one per tool and purpose).
    #[arg(long, env = "INPUT_MARKER", default_value = DEFAULT_MARKER)]
    marker: String,
    /// Login whose marked comment is updated when the token cannot tell its
    /// own identity (Actions and App tokens may not call `GET /user`; use the
    /// app's bot login, e.g. `my-app[bot]`). A token that can (a PAT) is
    /// identified by `GET /user` and this is not used.
    #[arg(
        long,
        env = "INPUT_COMMENT_AUTHOR",
        default_value = "github-actions[bot]"
    )]
    comment_author: String,
    /// Visualizer site.
    #[arg(long, env = "INPUT_VISUALIZER_URL", default_value = DEFAULT_VISUALIZER_URL)]
    visualizer_url: String,
    /// Print the body to stdout instead of posting it.
    #[arg(long)]
    dry_run: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let msg = format!("{e:#}");
            gha::annotate(Level::Error, None, None, &msg);
            eprintln!("error: {msg}");
            exit::failed()
        }
    }
}

/// A JSON input file: `None` (with a warning) when it is not there, an
/// error when it is there but cannot be read or parsed.
fn json_input(what: &str, path: &std::path::Path) -> Result<Option<Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let msg = format!(
                "{what} {} not found; left out of the comment",
                path.display()
            );
            gha::annotate(Level::Warning, None, None, &msg);
            eprintln!("warning: {msg}");
            return Ok(None);
        }
        Err(e) => return Err(anyhow!("{what} {}: {e}", path.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| anyhow!("{what} {}: invalid JSON: {e}", path.display()))
}

fn run(cli: &Cli) -> Result<()> {
    let mut sections = Vec::new();
    for path in cli.sections.iter().filter(|p| !p.as_os_str().is_empty()) {
        match std::fs::read_to_string(path) {
            Ok(text) if !text.trim().is_empty() => sections.push(text),
            Ok(_) => eprintln!("warning: section {} is empty; skipped", path.display()),
            Err(e) => {
                let msg = format!("section {} cannot be read ({e}); skipped", path.display());
                gha::annotate(
                    Level::Warning,
                    Some(&path.display().to_string()),
                    None,
                    &msg,
                );
                eprintln!("warning: {msg}");
            }
        }
    }
    let server = std::env::var("GITHUB_SERVER_URL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "https://github.com".into());
    let run_url = cli.run_url.clone().unwrap_or_else(|| {
        format!(
            "{}/{}/actions/runs/{}",
            server.trim_end_matches('/'),
            cli.repo,
            cli.run_id
        )
    });
    let mut input = BodyInput::new(&cli.marker, &cli.visualizer_url, &cli.run_id.to_string());
    input.run_url = Some(run_url.clone());
    input.reused_run_url = cli.reused_run_url.clone().filter(|u| !u.is_empty());
    input.sections = sections;
    if let Some(p) = cli
        .compare_json
        .as_deref()
        .filter(|p| !p.as_os_str().is_empty())
    {
        input.compare = json_input("compare JSON", p)?;
    }
    if let Some(p) = cli
        .run_stats
        .as_deref()
        .filter(|p| !p.as_os_str().is_empty())
    {
        input.run_stats = json_input("run stats", p)?;
    }
    if let Some(p) = cli
        .run_stats_by_runner
        .as_deref()
        .filter(|p| !p.as_os_str().is_empty())
    {
        input.run_stats_by_runner = json_input("run stats by runner", p)?;
    }
    input.charts.report_url = cli.report_url.clone();
    input.charts.base_url = cli.charts_base_url.clone();
    if let Some(p) = cli.charts.as_deref().filter(|p| !p.as_os_str().is_empty()) {
        input.charts.manifest = json_input("charts manifest", p)?;
    }
    let notice = format!(
        "This comment was cut to fit GitHub's 65,536-character limit; the full report is in the job summary of [run {}]({run_url}).",
        cli.run_id
    );
    let body = body::render(&input, &notice).context("building the comment")?;
    if cli.dry_run {
        sweep_model::stdout::println(&body.text);
        return Ok(());
    }
    let config = Config::from_env(&["GITHUB_TOKEN", "GH_TOKEN"]);
    if config.token.is_none() {
        return Err(anyhow!(
            "GITHUB_TOKEN (or GH_TOKEN) is required: a token with `pull-requests: write` on {}",
            cli.repo
        ));
    }
    let client = Client::new(config)?;
    let author = match visualizer_comment::token_login(&client)
        .context("reading the token's identity (GET /user)")?
    {
        Some(login) => login,
        None => cli.comment_author.clone(),
    };
    let post = Post {
        repo: cli.repo.clone(),
        pr_number: cli.pr_number,
        marker: cli.marker.clone(),
        author,
    };
    let full_report = || -> Result<()> {
        let full = body::render_full(&input).context("building the job summary")?;
        gha::append_step_summary(&full).context("writing the job summary")?;
        Ok(())
    };
    let outcome = publish(&client, &post, &body.text)
        .with_context(|| format!("commenting on PR #{}", cli.pr_number))?;
    let url = match outcome {
        Outcome::Created { url, .. } => {
            sweep_model::stdout::println(&format!("created comment {url}"));
            url
        }
        Outcome::Updated { url, .. } => {
            sweep_model::stdout::println(&format!("updated comment {url}"));
            url
        }
        Outcome::Unchanged { url, .. } => {
            sweep_model::stdout::println(&format!("comment {url} is already up to date"));
            url
        }
        Outcome::ReadOnly { reason } => {
            let msg = format!(
                "cannot comment on PR #{}: {reason}. Fork pull requests get a read-only token; the comment is in the job summary instead.",
                cli.pr_number
            );
            gha::annotate(Level::Warning, None, None, &msg);
            eprintln!("warning: {msg}");
            let summary = body::render_read_only(&input, cli.pr_number, &reason)
                .context("building the job summary")?;
            gha::append_step_summary(&summary).context("writing the job summary")?;
            return Ok(());
        }
    };
    if let Some(out) = std::env::var_os("GITHUB_OUTPUT").filter(|p| !p.is_empty()) {
        gha::write_output(std::path::Path::new(&out), "comment-url", &url)
            .context("writing the comment-url output")?;
    }
    if body.truncated {
        full_report()?;
    }
    Ok(())
}
