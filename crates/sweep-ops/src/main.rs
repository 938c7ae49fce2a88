//! `sweep-ops`: the benchmark repository's GitHub entry points other than
//! the PR/push sweep (`authorize-fork`, `merge`, `recover-ingest`,
//! `runner-digest`; see the crate's library). Exit codes are those of
//! `sweep_model::exit`: 0 done, 1 the rules refused (message on stderr and
//! as an `::error::` annotation), 2 the command could not work (usage, an
//! unreadable event file, GitHub failures after retries, a wait that timed
//! out).
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use github_client::{Client, Config};
use serde_json::Value;
use sweep_model::exit;
use sweep_model::gha::{self, Level};
use sweep_ops::{OpsError, Poll, digest, fork, merge, recover};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Trusted fork sweeps, the merge helper, ingest recovery and the runner digest"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// On a fork PR's `labeled` event: authorise its exact head SHA and
    /// dispatch the sweep (pull_request_target; never checks out PR code).
    AuthorizeFork(ForkCli),
    /// Merge a prepared PR so that the push to main reuses its sweep.
    Merge(MergeCli),
    /// Re-dispatch the ingest of a reused sweep whose ingest failed.
    RecoverIngest(RecoverCli),
    /// Markdown digest of the offline self-hosted runners.
    RunnerDigest(DigestCli),
}

#[derive(clap::Args, Debug)]
struct ForkCli {
    /// Repository (`owner/name`).
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repo: String,
    /// The `pull_request_target` event payload.
    #[arg(long, env = "GITHUB_EVENT_PATH")]
    event_path: PathBuf,
    /// Who applied the label.
    #[arg(long, env = "GITHUB_ACTOR")]
    actor: String,
    /// Workflow file to dispatch (the manual sweep entry).
    #[arg(long, env = "INPUT_WORKFLOW", default_value = "e2e-tests.yml")]
    workflow: String,
    /// Seconds to look for the dispatched run (its link goes in the comment).
    #[arg(long, env = "INPUT_LOOKUP_TIMEOUT", default_value_t = 30)]
    lookup_timeout: u64,
    /// Seconds between run lookups.
    #[arg(long, env = "INPUT_POLL_INTERVAL", default_value_t = 2)]
    poll_interval: u64,
    #[arg(long, env = "GITHUB_SERVER_URL", default_value = "https://github.com")]
    server_url: String,
    #[arg(long, env = "GITHUB_OUTPUT")]
    github_output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct MergeCli {
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repo: String,
    /// Pull request number.
    #[arg(long)]
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

#[derive(clap::Args, Debug)]
struct RecoverCli {
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repo: String,
    /// PR sweep run holding the benchmark artifacts.
    #[arg(long, env = "INPUT_SOURCE_RUN_ID")]
    source_run_id: u64,
    /// Push-to-main run holding the changelog metadata.
    #[arg(long, env = "INPUT_MERGE_RUN_ID")]
    merge_run_id: u64,
    /// Repository receiving the dispatch (`owner/name`).
    #[arg(long, env = "INPUT_INGEST_REPOSITORY")]
    ingest_repository: String,
    #[arg(long, env = "INPUT_EVENT_TYPE", default_value = "ingest-agentic-results",
          value_parser = recover::EVENT_TYPES)]
    event_type: String,
    #[arg(long, env = "INPUT_WORKFLOW", default_value = "run-sweep.yml")]
    workflow: String,
    #[arg(long, env = "INPUT_MAIN_BRANCH", default_value = "main")]
    main_branch: String,
    /// Check and print the dispatch without sending it.
    #[arg(long)]
    dry_run: bool,
}

#[derive(clap::Args, Debug)]
struct DigestCli {
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

/// An error of this binary with its exit code.
struct Failure {
    code: u8,
    error: anyhow::Error,
}

impl From<OpsError> for Failure {
    fn from(e: OpsError) -> Self {
        Failure {
            code: e.exit_code(),
            error: e.into(),
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Failure {
            code: exit::FAILED,
            error,
        }
    }
}

fn main() -> ExitCode {
    let result = match Cli::parse().cmd {
        Cmd::AuthorizeFork(c) => authorize_fork(c),
        Cmd::Merge(c) => run_merge(c),
        Cmd::RecoverIngest(c) => recover_ingest(c),
        Cmd::RunnerDigest(c) => runner_digest(c),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            let msg = format!("{:#}", f.error);
            gha::annotate(Level::Error, None, None, &msg);
            eprintln!("error: {msg}");
            ExitCode::from(f.code)
        }
    }
}

/// A client with the first token of `vars`; none is a usage failure.
fn client(vars: &[&str]) -> Result<Client, Failure> {
    let config = Config::from_env(vars);
    if config.token.is_none() {
        return Err(anyhow::anyhow!("{} is required", vars.join(" or ")).into());
    }
    Ok(Client::new(config).map_err(OpsError::from)?)
}

fn outputs(path: Option<&Path>, pairs: &[(&str, String)]) -> Result<(), Failure> {
    let Some(path) = path.filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    for (k, v) in pairs {
        gha::write_output(path, k, v).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn poll(timeout: u64, interval: u64) -> Poll {
    Poll {
        timeout: Duration::from_secs(timeout),
        interval: Duration::from_secs(interval),
    }
}

fn authorize_fork(c: ForkCli) -> Result<u8, Failure> {
    let text = std::fs::read_to_string(&c.event_path)
        .with_context(|| format!("reading the event payload {}", c.event_path.display()))?;
    let event: Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not JSON", c.event_path.display()))?;
    let client = client(&["GH_TOKEN", "GITHUB_TOKEN"])?;
    let args = fork::ForkArgs {
        repo: c.repo,
        event,
        actor: c.actor,
        workflow: c.workflow,
        server_url: c.server_url.trim_end_matches('/').to_string(),
        lookup: poll(c.lookup_timeout, c.poll_interval),
    };
    let d = fork::authorize(&client, &args)?;
    let run = d.run_url.clone().unwrap_or_default();
    outputs(
        c.github_output.as_deref(),
        &[
            ("head-sha", d.head_sha.clone()),
            ("merge-sha", d.merge_sha.clone()),
            ("run-url", run.clone()),
        ],
    )?;
    let mut summary = serde_json::json!({
        "pr-number": d.pr_number, "head-sha": d.head_sha, "merge-sha": d.merge_sha,
        "label": d.label, "run-url": run, "commented": d.commented,
    });
    summary["inputs"] = d.inputs;
    sweep_model::stdout::println(&summary.to_string());
    Ok(exit::OK)
}

fn run_merge(c: MergeCli) -> Result<u8, Failure> {
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
                 4. sweep-ops merge --pr {n} --head-sha <pushed head>",
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
            sweep_model::stdout::println(sha);
        }
    }
    Ok(exit::OK)
}

fn recover_ingest(c: RecoverCli) -> Result<u8, Failure> {
    let args = recover::RecoverArgs {
        repo: c.repo,
        source_run_id: c.source_run_id,
        merge_run_id: c.merge_run_id,
        ingest_repository: c.ingest_repository,
        event_type: c.event_type,
        workflow: c.workflow,
        main_branch: c.main_branch,
    };
    let reader = client(&["GH_TOKEN", "GITHUB_TOKEN"])?;
    let plan = recover::plan(&reader, &args)?;
    let line = serde_json::json!({
        "event_type": args.event_type, "repository": args.ingest_repository,
        "pr-number": plan.pr_number, "client_payload": plan.payload, "dry-run": c.dry_run,
    });
    if !c.dry_run {
        let ingest = client(&["INGEST_TOKEN"])?;
        recover::dispatch(&ingest, &args, &plan)?;
        let _ = gha::append_step_summary(&format!(
            "dispatched `{}` to `{}` for PR #{}: `{}`\n",
            args.event_type, args.ingest_repository, plan.pr_number, plan.payload
        ));
    }
    sweep_model::stdout::println(&line.to_string());
    Ok(exit::OK)
}

fn runner_digest(c: DigestCli) -> Result<u8, Failure> {
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
    sweep_model::stdout::print(&md);
    Ok(if c.fail_on_offline && !d.offline.is_empty() {
        exit::REJECTED
    } else {
        exit::OK
    })
}
