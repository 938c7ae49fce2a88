//! `merge`: flags and glue over `sweep_ops::merge`.
use sweep_ops::merge;

use super::{client, poll};
use sweep_cli::Failure;

#[derive(clap::Args, Debug)]
pub(crate) struct MergeCli {
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repo: String,
    /// Pull request number (`--pr` is the older spelling, kept hidden).
    #[arg(long = "pr-number", alias = "pr")]
    pr: u64,
    /// The prepared head you pushed (after `check-changelog prepare-merge`).
    /// Without it: phase 1, the checks and the `/reuse-sweep-run` comment.
    #[arg(long)]
    head_sha: Option<String>,
    /// The gate's check-run name.
    #[arg(long, default_value = "sweep / check-changelog")]
    check_name: String,
    /// The sweep workflow file.
    #[arg(long, default_value = "run-sweep.yml")]
    workflow: String,
    #[arg(long, default_value = "squash", value_parser = ["squash", "merge", "rebase"])]
    merge_method: String,
    /// Seconds to wait for the gate check (the reference's CHECK_TIMEOUT_SECONDS).
    #[arg(long, env = "CHECK_TIMEOUT_SECONDS", default_value_t = 900)]
    timeout: u64,
    /// Seconds to wait for the push-to-main run; 0 = do not wait.
    #[arg(long, default_value_t = 3600)]
    reuse_timeout: u64,
    /// Seconds between polls.
    #[arg(long, default_value_t = 5)]
    poll_interval: u64,
}

pub(crate) fn run_merge(c: MergeCli) -> Result<(), Failure> {
    let client = client(&["GH_TOKEN", "GITHUB_TOKEN"])?;
    let args = merge::MergeArgs {
        repo: c.repo,
        pr: c.pr,
        head_sha: c.head_sha,
        check_name: c.check_name,
        workflow: c.workflow,
        merge_method: c.merge_method,
        check_wait: poll(c.timeout, c.poll_interval),
        reuse_wait: (c.reuse_timeout > 0).then(|| poll(c.reuse_timeout, c.poll_interval)),
    };
    let m = merge::merge(&client, &args)?;
    match &m.merge_sha {
        None => {
            let n = args.pr;
            eprintln!(
                "PR #{n} is authorised to reuse run {}. Next, on the PR branch:\n\
                 1. git fetch origin main && git merge origin/main (on a perf-changelog.yaml conflict: \
                 check-changelog prepare-merge resolve-conflict --pr-number {n}, then git add and commit)\n\
                 2. check-changelog prepare-merge canonicalize --base-ref origin/main --pr-number {n}\n\
                 3. commit (git commit --allow-empty when nothing changed: the PR run must see a new head) and push\n\
                 4. sweep-ops merge --pr-number {n} --head-sha <pushed head>",
                m.source_run_id
            );
        }
        Some(sha) => {
            eprintln!(
                "PR #{} merged as {sha}; the push to main reuses run {}{}",
                args.pr,
                m.source_run_id,
                m.push_run_url
                    .as_ref()
                    .map(|u| format!(" (push run succeeded: {u})"))
                    .unwrap_or_default()
            );
            sweep_cli::stdout::println(sha);
        }
    }
    Ok(())
}
