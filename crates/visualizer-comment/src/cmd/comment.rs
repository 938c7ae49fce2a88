//! The command: read the inputs, render the body, post or update the sticky
//! comment (or fall back to the job summary on a read-only token).
use anyhow::{Context, Result, anyhow};
use github_client::{Client, Config};
use serde_json::Value;
use visualizer_comment::body::{self, BodyInput};
use visualizer_comment::{Outcome, Post, publish, verdict};

use crate::CommentArgs;

/// A JSON input file: `None` (with a warning) when it is not there, an
/// error when it is there but cannot be read or parsed.
fn json_input(what: &str, path: &std::path::Path) -> Result<Option<Value>> {
    let text = match sweep_model::fsio::read_text(path, sweep_model::fsio::MAX_AGGREGATE_JSON_BYTES)
    {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let msg = format!(
                "{what} {} not found; left out of the comment",
                path.display()
            );
            sweep_cli::annotate(sweep_cli::Level::Warning, None, None, &msg);
            eprintln!("warning: {}", sweep_model::gha::log_text(&msg));
            return Ok(None);
        }
        Err(e) => return Err(anyhow!("{what} {}: {e}", path.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| anyhow!("{what} {}: invalid JSON: {e}", path.display()))
}

pub(crate) fn run(cli: &CommentArgs) -> Result<()> {
    // clap requires all three unless a subcommand is given.
    let (Some(repo), Some(pr_number), Some(run_id)) =
        (cli.repo.as_deref(), cli.pr_number, cli.run_id)
    else {
        return Err(anyhow!("--repo, --pr-number and --run-id are required"));
    };
    let (mut input, run_url) = build_input(cli, repo, run_id)?;
    let notice = format!(
        "This comment was cut to fit GitHub's 65,536-character limit; the full report is in the job summary of [run {}]({run_url}).",
        run_id
    );
    if cli.dry_run {
        let body = body::render(&input, &notice).context("building the comment")?;
        sweep_cli::stdout::println(&body.text);
        return Ok(());
    }
    let config = Config::from_env(&["GITHUB_TOKEN", "GH_TOKEN"]);
    if config.token.is_none() {
        return Err(anyhow!(
            "GITHUB_TOKEN (or GH_TOKEN) is required: a token with `pull-requests: write` on {}",
            repo
        ));
    }
    let client = Client::new(config)?;
    look_up_acknowledgement(&client, cli, repo, pr_number, &mut input);
    let body = body::render(&input, &notice).context("building the comment")?;
    let author = match visualizer_comment::token_login(&client)
        .context("reading the token's identity (GET /user)")?
    {
        Some(login) => login,
        None => cli.comment_author.clone(),
    };
    let post = Post {
        repo: repo.to_string(),
        pr_number,
        marker: cli.marker.clone(),
        author,
    };
    let outcome = publish(&client, &post, &body.text)
        .with_context(|| format!("commenting on PR #{}", pr_number))?;
    let Some(url) = report_outcome(outcome, &input, pr_number)? else {
        return Ok(());
    };
    if let Some(out) = std::env::var_os("GITHUB_OUTPUT").filter(|p| !p.is_empty()) {
        sweep_cli::write_output(std::path::Path::new(&out), "comment-url", &url)
            .context("writing the comment-url output")?;
    }
    if body.truncated {
        let full = body::render_full(&input).context("building the job summary")?;
        sweep_cli::append_step_summary(&full).context("writing the job summary")?;
    }
    Ok(())
}

/// The extra markdown sections, in order: an empty file or one that
/// cannot be found is skipped with a warning, any other read error fails.
fn read_sections(cli: &CommentArgs) -> Result<Vec<String>> {
    let mut sections = Vec::new();
    for path in cli.sections.iter().filter(|p| !p.as_os_str().is_empty()) {
        match sweep_model::fsio::read_text(path, sweep_model::fsio::MAX_MARKDOWN_BYTES) {
            Ok(text) if !text.trim().is_empty() => sections.push(text),
            Ok(_) => eprintln!("warning: section {} is empty; skipped", path.display()),
            // A FIFO or a file over the limit is not a missing section.
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(anyhow!("section {}: {e}", path.display()));
            }
            Err(e) => {
                let msg = format!("section {} cannot be read ({e}); skipped", path.display());
                sweep_cli::annotate(
                    sweep_cli::Level::Warning,
                    Some(&path.display().to_string()),
                    None,
                    &msg,
                );
                eprintln!("warning: {}", sweep_model::gha::log_text(&msg));
            }
        }
    }
    Ok(sections)
}

/// Owns the body's inputs from the command line and the files it names;
/// returns them with this run's URL.
fn build_input(cli: &CommentArgs, repo: &str, run_id: u64) -> Result<(BodyInput, String)> {
    let sections = read_sections(cli)?;
    let server = std::env::var("GITHUB_SERVER_URL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "https://github.com".into());
    let run_url = cli.run_url.clone().unwrap_or_else(|| {
        format!(
            "{}/{}/actions/runs/{}",
            server.trim_end_matches('/'),
            repo,
            run_id
        )
    });
    let mut input = BodyInput::new(&cli.marker, &cli.visualizer_url, &run_id.to_string());
    input.run_url = Some(run_url.clone());
    input.reused_run_url = cli.reused_run_url.clone().filter(|u| !u.is_empty());
    input.sections = sections;
    input.head = head_commit(cli, &server, repo)?;
    read_json_inputs(cli, &mut input)?;
    Ok((input, run_url))
}

/// `--head-sha` (trimmed; empty is none) with its commit page, refused
/// unless it is 7 to 64 hex digits.
fn head_commit(
    cli: &CommentArgs,
    server: &str,
    repo: &str,
) -> Result<Option<(String, Option<String>)>> {
    let Some(sha) = cli
        .head_sha
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    else {
        return Ok(None);
    };
    if !(7..=64).contains(&sha.len()) || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(anyhow!("--head-sha {sha:?}: not a commit id (hex digits)"));
    }
    let url = format!("{}/{}/commit/{sha}", server.trim_end_matches('/'), repo);
    Ok(Some((sha.to_string(), Some(url))))
}

/// Reads the JSON inputs given (an empty path is none) into `input`, and
/// the chart links.
fn read_json_inputs(cli: &CommentArgs, input: &mut BodyInput) -> Result<()> {
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
    Ok(())
}

/// With a compare report and a head commit, looks up a writer's
/// acknowledgement of the regression into `input`.
fn look_up_acknowledgement(
    client: &Client,
    cli: &CommentArgs,
    repo: &str,
    pr_number: u64,
    input: &mut BodyInput,
) {
    if let (Some(compare), Some((sha, _))) = (&input.compare, &input.head) {
        let scheduled =
            verdict::scheduled(input.run_stats.as_ref(), input.run_stats_by_runner.as_ref());
        input.acknowledgement = super::acknowledgement(
            client,
            repo,
            pr_number,
            sha,
            &cli.acknowledge_command,
            compare,
            scheduled,
        );
    }
}

/// Prints what `publish` did and returns the comment's URL; on a
/// read-only token warns and writes the comment to the job summary
/// instead (`None`: nothing more to do).
fn report_outcome(outcome: Outcome, input: &BodyInput, pr_number: u64) -> Result<Option<String>> {
    let url = match outcome {
        Outcome::Created { url, .. } => {
            sweep_cli::stdout::println(&format!("created comment {url}"));
            url
        }
        Outcome::Updated { url, .. } => {
            sweep_cli::stdout::println(&format!("updated comment {url}"));
            url
        }
        Outcome::Unchanged { url, .. } => {
            sweep_cli::stdout::println(&format!("comment {url} is already up to date"));
            url
        }
        Outcome::ReadOnly { reason } => {
            let msg = format!(
                "cannot comment on PR #{}: {reason}. Fork pull requests get a read-only token; the comment is in the job summary instead.",
                pr_number
            );
            sweep_cli::annotate(sweep_cli::Level::Warning, None, None, &msg);
            eprintln!("warning: {}", sweep_model::gha::log_text(&msg));
            let summary = body::render_read_only(input, pr_number, &reason)
                .context("building the job summary")?;
            sweep_cli::append_step_summary(&summary).context("writing the job summary")?;
            return Ok(None);
        }
    };
    Ok(Some(url))
}
