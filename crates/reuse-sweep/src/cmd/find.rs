//! `find`: flags and glue over `reuse_sweep::find`.
use std::path::PathBuf;

use github_client::{Client, Config};
use reuse_sweep::find::{FindArgs, Finder};
use sweep_cli::{Failure, Outcome, ResultExt as _, stdout};

#[derive(clap::Args, Debug)]
pub(crate) struct FindCli {
    /// Repository (`owner/name`).
    #[arg(long, env = "INPUT_REPO")]
    repo: String,
    /// The commit of this run (merge commit on main, head SHA on a PR).
    #[arg(long, env = "INPUT_COMMIT_SHA")]
    commit_sha: String,
    /// `github.event_name`.
    #[arg(long, env = "INPUT_EVENT_NAME")]
    event_name: String,
    /// `github.event.action` (PR events).
    #[arg(long, env = "INPUT_EVENT_ACTION", default_value = "")]
    event_action: String,
    /// PR number (required for `pull_request` `synchronize`); empty = none.
    #[arg(long, env = "INPUT_PR_NUMBER", allow_negative_numbers = true)]
    pr_number: Option<String>,
    /// `github.ref`.
    #[arg(long = "ref", env = "INPUT_REF")]
    git_ref: String,
    /// Workflow file of PR sweeps.
    #[arg(long, env = "INPUT_WORKFLOW_ID", default_value = "run-sweep.yml")]
    workflow_id: String,
    /// Comma-separated labels that make a PR a full sweep; reuse needs one.
    #[arg(
        long,
        env = "INPUT_FULL_SWEEP_LABEL",
        default_value = "full-sweep-enabled,non-canary-full-sweep-enabled,full-sweep-fail-fast,full-sweep-fail-fast-no-canary"
    )]
    full_sweep_label: String,
    /// Comma-separated labels whose sweeps cannot be reused.
    #[arg(
        long,
        env = "INPUT_REUSE_INCOMPATIBLE_LABEL",
        default_value = "evals-only,agentx-fast"
    )]
    reuse_incompatible_label: String,
    /// The comment command.
    #[arg(
        long,
        env = "INPUT_PINNED_RUN_COMMAND",
        default_value = "/reuse-sweep-run"
    )]
    pinned_run_command: String,
    /// Accepted so that the reference's command lines still parse, and
    /// ignored: an `author_association` string is no proof of access, so the
    /// commenter's permission is always read from the API (write, maintain
    /// or admin authorise).
    #[arg(
        long,
        env = "INPUT_ALLOWED_AUTHOR_ASSOCIATIONS",
        default_value = "OWNER,MEMBER,COLLABORATOR",
        hide_default_value = true
    )]
    allowed_author_associations: String,
    /// File the outputs are appended to.
    #[arg(long, env = "GITHUB_OUTPUT")]
    github_output: Option<PathBuf>,
}

pub(crate) fn find(cli: FindCli) -> Outcome {
    // Checked before anything else, in every mode (reference behaviour).
    let config = Config::from_env(&["GH_TOKEN", "GITHUB_TOKEN"]);
    if config.token.is_none() {
        return Err(Failure::failed_msg("GH_TOKEN or GITHUB_TOKEN is required"));
    }
    let client = Client::new(config).or_failed()?;
    let pr_number = match cli.pr_number.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(v) => Some(v.parse::<i64>().map_err(|_| {
            Failure::failed_msg(format!(
                "--pr-number / INPUT_PR_NUMBER '{v}' is not an integer"
            ))
        })?),
    };
    let _ignored = cli.allowed_author_associations;
    let args = FindArgs {
        repo: cli.repo,
        commit_sha: cli.commit_sha,
        event_name: cli.event_name,
        event_action: cli.event_action,
        pr_number,
        git_ref: cli.git_ref,
        workflow_id: cli.workflow_id,
        full_sweep_labels: cli.full_sweep_label,
        reuse_incompatible_labels: cli.reuse_incompatible_label,
        pinned_run_command: cli.pinned_run_command,
    };
    let outcome = Finder::new(&client, &args).run()?;
    if let Some(path) = cli
        .github_output
        .as_ref()
        .filter(|p| !p.as_os_str().is_empty())
    {
        for (k, v) in outcome.pairs() {
            sweep_cli::write_output(path, k, &v)
                .or_failed()
                .map_err(|f| f.context(format!("writing {}", path.display())))?;
        }
    }
    // stdout is the JSON object only (the action pipes it to jq for the
    // job summary).
    stdout::println(&outcome.to_json().to_string());
    Ok(())
}
