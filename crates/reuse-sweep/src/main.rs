//! `reuse-sweep`: the `/reuse-sweep-run` protocol.
//!
//! * `find` — the reference's `find_reusable_sweep_run.py` (same flags,
//!   outputs and fail-closed rules): exit 0 with the eight outputs, exit 1
//!   with `error: <message>` when the protocol refuses, exit 2 when it
//!   cannot work (no token, GitHub cannot answer, an output cannot be
//!   written, a bad flag value). The reference exits 1 for every error.
//! * `validate-artifacts` — the reference's
//!   `validate_reusable_sweep_artifacts.py`: exit 0 valid, 1 invalid, 2 the
//!   artifact folder cannot be read or written.
//!
//! The codes are those of `sweep_model::exit` (README, "Tools").
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use github_client::{Client, Config};
use reuse_sweep::find::{FindArgs, FindError, Finder, Rules};
use sweep_model::exit;
use sweep_model::gha::{self, Level};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "The /reuse-sweep-run protocol: find and validate a reusable PR sweep"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Decide whether this run reuses an approved pull-request sweep.
    Find(Box<FindCli>),
    /// Check a downloaded artifact directory of a reusable sweep (collapses
    /// re-run eval duplicates in place first).
    ValidateArtifacts {
        /// Directory whose sub-directories are artifacts (`gh run download` layout).
        #[arg(long, env = "INPUT_ARTIFACTS_DIR")]
        artifacts_dir: PathBuf,
    },
    /// `/stage-results [run-id]` on a PR: authorise and resolve the source run.
    StageResults(StageCli),
    /// Validate the resolved run's downloaded artifacts, acknowledge on the
    /// PR and dispatch staging to the frontend (token in STAGE_TOKEN).
    StageDispatch(StageDispatchCli),
    /// The frontend's staging callback (`repository_dispatch`): report on the PR.
    StageCallback(StageCallbackCli),
}

#[derive(clap::Args, Debug)]
struct StageCli {
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repo: String,
    /// The `issue_comment` event payload (PR number, body, commenter).
    #[arg(long, env = "GITHUB_EVENT_PATH")]
    event_path: PathBuf,
    /// Workflow file of PR sweeps.
    #[arg(long, env = "INPUT_WORKFLOW_ID", default_value = "run-sweep.yml")]
    workflow_id: String,
    #[arg(long, env = "GITHUB_OUTPUT")]
    github_output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct StageDispatchCli {
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repo: String,
    #[arg(long, env = "INPUT_PR_NUMBER")]
    pr_number: u64,
    #[arg(long, env = "INPUT_RUN_ID")]
    run_id: u64,
    #[arg(long, env = "INPUT_RUN_ATTEMPT")]
    run_attempt: u64,
    #[arg(long, env = "INPUT_RUN_DATE")]
    run_date: String,
    #[arg(long, env = "INPUT_RUN_URL")]
    run_url: String,
    #[arg(long, env = "INPUT_REQUESTED_BY")]
    requested_by: String,
    /// The run's artifacts, downloaded (`gh run download` layout).
    #[arg(long, env = "INPUT_ARTIFACTS_DIR")]
    artifacts_dir: PathBuf,
    /// Frontend repository receiving the `stage-results` dispatch.
    #[arg(
        long,
        env = "INPUT_FRONTEND_REPOSITORY",
        default_value = "SemiAnalysisAI/InferenceX-app"
    )]
    frontend_repository: String,
    #[arg(long, env = "GITHUB_OUTPUT")]
    github_output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct StageCallbackCli {
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repo: String,
    /// The `repository_dispatch` event payload.
    #[arg(long, env = "GITHUB_EVENT_PATH")]
    event_path: PathBuf,
    /// The only accepted callback `source-repository`.
    #[arg(
        long,
        env = "INPUT_FRONTEND_REPOSITORY",
        default_value = "SemiAnalysisAI/InferenceX-app"
    )]
    frontend_repository: String,
    #[arg(long, env = "GITHUB_SERVER_URL", default_value = "https://github.com")]
    server_url: String,
    /// Root of the staging site the success comment links.
    #[arg(
        long,
        env = "INPUT_STAGING_SITE",
        default_value = "https://inferencemax-app-git-staging-semianalysisai.vercel.app"
    )]
    staging_site: String,
}

#[derive(clap::Args, Debug)]
struct FindCli {
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
    /// Comma-separated `author_association` values whose commands count
    /// (`--rules reference` only; strict rules ask the API for the permission).
    #[arg(
        long,
        env = "INPUT_ALLOWED_AUTHOR_ASSOCIATIONS",
        default_value = "OWNER,MEMBER,COLLABORATOR"
    )]
    allowed_author_associations: String,
    /// Trust rules: `strict` (default) reads the commenter's repository
    /// permission from the API and reuses only a `success` run of the PR's
    /// head; `reference` is the reference's association-based, any-PR-commit
    /// rules, kept only to check the recorded reference scenarios.
    #[arg(
        long,
        env = "SWEEPKIT_REUSE_RULES",
        value_enum,
        default_value = "strict"
    )]
    rules: Rules,
    /// File the outputs are appended to.
    #[arg(long, env = "GITHUB_OUTPUT")]
    github_output: Option<PathBuf>,
}

fn main() -> ExitCode {
    match Cli::parse().cmd {
        Cmd::Find(f) => find(*f),
        Cmd::ValidateArtifacts { artifacts_dir } => validate(&artifacts_dir),
        Cmd::StageResults(c) => stage_results(c),
        Cmd::StageDispatch(c) => stage_dispatch(c),
        Cmd::StageCallback(c) => stage_callback(c),
    }
}

/// A client with the first token of `vars`, or the exit-2 failure.
fn stage_client(vars: &[&str]) -> Result<Client, ExitCode> {
    let config = Config::from_env(vars);
    if config.token.is_none() {
        return Err(fail(
            &format!("{} is required", vars.join(" or ")),
            exit::FAILED,
        ));
    }
    Client::new(config).map_err(|e| fail(&e.to_string(), exit::FAILED))
}

fn stage_fail(e: reuse_sweep::stage::StageError) -> ExitCode {
    use reuse_sweep::stage::StageError;
    let code = match e {
        StageError::Refused(_) => exit::REJECTED,
        _ => exit::FAILED,
    };
    fail(&e.to_string(), code)
}

fn write_pairs(path: Option<&std::path::Path>, pairs: &[(&str, String)]) -> Result<(), ExitCode> {
    let Some(path) = path.filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    for (k, v) in pairs {
        gha::write_output(path, k, v)
            .map_err(|e| fail(&format!("writing {}: {e}", path.display()), exit::FAILED))?;
    }
    Ok(())
}

fn stage_results(c: StageCli) -> ExitCode {
    use reuse_sweep::stage;
    let event = match stage::read_event(&c.event_path) {
        Ok(v) => v,
        Err(e) => return stage_fail(e),
    };
    let (Some(pr), Some(body), Some(actor)) = (
        event
            .pointer("/issue/number")
            .and_then(serde_json::Value::as_u64),
        event
            .pointer("/comment/body")
            .and_then(serde_json::Value::as_str),
        event
            .pointer("/comment/user/login")
            .and_then(serde_json::Value::as_str),
    ) else {
        return fail(
            &format!(
                "{}: not an issue_comment payload (issue.number, comment.body, comment.user.login)",
                c.event_path.display()
            ),
            exit::FAILED,
        );
    };
    let client = match stage_client(&["GH_TOKEN", "GITHUB_TOKEN"]) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let args = stage::RequestArgs {
        repo: c.repo,
        pr,
        body: body.to_string(),
        actor: actor.to_string(),
        workflow: c.workflow_id,
    };
    let source = match stage::request(&client, &args) {
        Ok(s) => s,
        Err(e) => return stage_fail(e),
    };
    if let Err(code) = write_pairs(c.github_output.as_deref(), &source.pairs()) {
        return code;
    }
    let json: serde_json::Map<String, serde_json::Value> = source
        .pairs()
        .into_iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v)))
        .collect();
    sweep_model::stdout::println(&serde_json::Value::Object(json).to_string());
    ExitCode::SUCCESS
}

fn stage_dispatch(c: StageDispatchCli) -> ExitCode {
    use reuse_sweep::stage;
    let (client, frontend) = match (
        stage_client(&["GH_TOKEN", "GITHUB_TOKEN"]),
        stage_client(&["STAGE_TOKEN"]),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    let args = stage::DispatchArgs {
        repo: c.repo,
        pr: c.pr_number,
        source: stage::Source {
            run_id: c.run_id,
            run_attempt: c.run_attempt,
            run_date: c.run_date,
            requested_by: c.requested_by,
            run_url: c.run_url,
        },
        artifacts_dir: c.artifacts_dir,
        frontend_repo: c.frontend_repository,
    };
    match stage::dispatch(&client, &frontend, &args) {
        Ok(id) => {
            if let Err(code) = write_pairs(
                c.github_output.as_deref(),
                &[("comment-id", id.to_string())],
            ) {
                return code;
            }
            sweep_model::stdout::println(&id.to_string());
            ExitCode::SUCCESS
        }
        Err(e) => stage_fail(e),
    }
}

fn stage_callback(c: StageCallbackCli) -> ExitCode {
    use reuse_sweep::stage;
    let event = match stage::read_event(&c.event_path) {
        Ok(v) => v,
        Err(e) => return stage_fail(e),
    };
    let client = match stage_client(&["GH_TOKEN", "GITHUB_TOKEN"]) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let args = stage::CallbackArgs {
        repo: c.repo,
        event,
        frontend_repo: c.frontend_repository,
        server_url: c.server_url,
        staging_site: c.staging_site,
    };
    match stage::callback(&client, &args) {
        Ok(r) => {
            sweep_model::stdout::println(&r.body);
            ExitCode::SUCCESS
        }
        Err(e) => stage_fail(e),
    }
}

/// Prints the error (and its annotation) and returns `code`.
fn fail(msg: &str, code: u8) -> ExitCode {
    gha::annotate(Level::Error, None, None, msg);
    eprintln!("error: {msg}");
    ExitCode::from(code)
}

fn find(cli: FindCli) -> ExitCode {
    // Checked before anything else, in every mode (reference behaviour).
    let config = Config::from_env(&["GH_TOKEN", "GITHUB_TOKEN"]);
    if config.token.is_none() {
        return fail("GH_TOKEN or GITHUB_TOKEN is required", exit::FAILED);
    }
    let client = match Client::new(config) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string(), exit::FAILED),
    };
    let pr_number = match cli.pr_number.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(v) => match v.parse::<i64>() {
            Ok(n) => Some(n),
            Err(_) => {
                eprintln!("error: --pr-number / INPUT_PR_NUMBER '{v}' is not an integer");
                return exit::failed();
            }
        },
    };
    let args = FindArgs {
        rules: cli.rules,
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
        allowed_author_associations: cli.allowed_author_associations,
    };
    let outcome = match Finder::new(&client, &args).run() {
        Ok(o) => o,
        Err(e @ FindError::Refused(_)) => return fail(&e.to_string(), exit::REJECTED),
        Err(e @ FindError::GitHub(_)) => return fail(&e.to_string(), exit::FAILED),
    };
    if let Some(path) = cli
        .github_output
        .as_ref()
        .filter(|p| !p.as_os_str().is_empty())
    {
        for (k, v) in outcome.pairs() {
            if let Err(e) = gha::write_output(path, k, &v) {
                return fail(&format!("writing {}: {e}", path.display()), exit::FAILED);
            }
        }
    }
    // stdout is the JSON object only (the action pipes it to jq for the
    // job summary).
    sweep_model::stdout::println(&outcome.to_json().to_string());
    ExitCode::SUCCESS
}

fn validate(dir: &std::path::Path) -> ExitCode {
    use reuse_sweep::validate;
    let report = match validate::validate(dir) {
        Ok(r) => r,
        Err(e) => return fail(&e, exit::FAILED),
    };
    if !report.collapsed.is_empty() {
        sweep_model::stdout::println(
            "Collapsed reran eval duplicates (kept latest result per identity):",
        );
        for m in &report.collapsed {
            sweep_model::stdout::println(&format!("  {m}"));
        }
    }
    if !report.errors.is_empty() {
        gha::annotate(
            Level::Error,
            None,
            None,
            &format!(
                "reusable sweep artifact validation failed ({} problem line(s))",
                report.errors.len()
            ),
        );
        eprintln!("Reusable sweep artifact validation failed:");
        for e in &report.errors {
            eprintln!("{e}");
        }
        return exit::rejected();
    }
    sweep_model::stdout::println(&validate::summary(&report).to_string());
    ExitCode::SUCCESS
}
