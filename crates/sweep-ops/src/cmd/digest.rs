//! `runner-digest`: flags and glue over `sweep_ops::digest`.
use std::path::PathBuf;

use anyhow::Context;
use sweep_cli as gha;
use sweep_ops::digest;

use super::{client, outputs};
use sweep_cli::Failure;

#[derive(clap::Args, Debug)]
pub(crate) struct DigestCli {
    /// Repository whose runners are listed.
    #[arg(
        long,
        env = "INPUT_REPO",
        conflicts_with = "org",
        required_unless_present = "org"
    )]
    repo: Option<String>,
    /// Organisation whose runners are listed instead.
    #[arg(long, env = "INPUT_ORG")]
    org: Option<String>,
    /// Also post the digest on this issue when a runner is offline.
    #[arg(long, env = "INPUT_COMMENT_ISSUE")]
    comment_issue: Option<u64>,
    /// Repository of `--comment-issue` (default: `--repo`, else GITHUB_REPOSITORY).
    #[arg(long, env = "GITHUB_REPOSITORY")]
    comment_repo: Option<String>,
    /// Exit 1 when a runner is offline.
    #[arg(long)]
    fail_on_offline: bool,
    /// Date in the heading (default: today, UTC).
    #[arg(long)]
    date: Option<String>,
    /// Link to the run, shown in the digest.
    #[arg(long, env = "INPUT_RUN_URL")]
    run_url: Option<String>,
    #[arg(long, env = "GITHUB_OUTPUT")]
    github_output: Option<PathBuf>,
}

pub(crate) fn runner_digest(c: DigestCli) -> Result<(), Failure> {
    let scope = match (&c.repo, &c.org) {
        (Some(r), _) => digest::Scope::Repo(r.clone()),
        (None, Some(o)) => digest::Scope::Org(o.clone()),
        (None, None) => return Err(anyhow::anyhow!("--repo or --org is required").into()),
    };
    let client = client(&["GH_TOKEN", "GITHUB_TOKEN"])?;
    let d = digest::collect(&client, &scope).map_err(Failure::from)?;
    let date = c.date.unwrap_or_else(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        digest::utc_date(now)
    });
    let md = digest::render(&d, &scope, &date, c.run_url.as_deref());
    outputs(
        c.github_output.as_deref(),
        &[
            ("total", d.total.to_string()),
            ("offline-count", d.offline.len().to_string()),
        ],
    )?;
    gha::append_step_summary(&md).context("writing $GITHUB_STEP_SUMMARY")?;
    if let Some(issue) = c.comment_issue.filter(|_| !d.offline.is_empty()) {
        let repo = c
            .repo
            .clone()
            .or(c.comment_repo.clone())
            .ok_or_else(|| anyhow::anyhow!("--comment-issue needs --repo or --comment-repo"))?;
        sweep_ops::comment(&client, &repo, issue, &md)?;
    }
    sweep_cli::stdout::print(&md);
    if c.fail_on_offline && !d.offline.is_empty() {
        return Err(Failure::rejected_msg(format!(
            "{} runner(s) offline (--fail-on-offline)",
            d.offline.len()
        )));
    }
    Ok(())
}
