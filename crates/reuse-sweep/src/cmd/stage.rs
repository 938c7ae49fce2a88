//! `stage-results`, `stage-dispatch` and `stage-callback`: flags and glue
//! over `reuse_sweep::stage`.
use std::path::PathBuf;

use github_client::{Client, Config};
use sweep_cli::{Failure, Outcome, ResultExt as _, stdout};

#[derive(clap::Args, Debug)]
pub(crate) struct StageCli {
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
pub(crate) struct StageDispatchCli {
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
pub(crate) struct StageCallbackCli {
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
    /// Author the acknowledgement must have when `GET /user` answers 403
    /// (the workflow's installation token); another GitHub App's token
    /// names its own `<app-slug>[bot]`.
    #[arg(long, env = "INPUT_BOT_LOGIN", default_value = reuse_sweep::stage::DEFAULT_BOT_LOGIN)]
    bot_login: String,
}

/// A client with the first token of `vars`, or the exit-2 failure.
fn stage_client(vars: &[&str]) -> Result<Client, Failure> {
    let config = Config::from_env(vars);
    if config.token.is_none() {
        return Err(Failure::failed_msg(format!(
            "{} is required",
            vars.join(" or ")
        )));
    }
    Client::new(config).or_failed()
}

fn write_pairs(path: Option<&std::path::Path>, pairs: &[(&str, String)]) -> Outcome {
    let Some(path) = path.filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    for (k, v) in pairs {
        sweep_cli::write_output(path, k, v)
            .or_failed()
            .map_err(|f| f.context(format!("writing {}", path.display())))?;
    }
    Ok(())
}

pub(crate) fn stage_results(c: StageCli) -> Outcome {
    use reuse_sweep::stage;
    let event = stage::read_event(&c.event_path)?;
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
        return Err(Failure::failed_msg(format!(
            "{}: not an issue_comment payload (issue.number, comment.body, comment.user.login)",
            c.event_path.display()
        )));
    };
    let client = stage_client(&["GH_TOKEN", "GITHUB_TOKEN"])?;
    let args = stage::RequestArgs {
        repo: c.repo,
        pr,
        body: body.to_string(),
        actor: actor.to_string(),
        workflow: c.workflow_id,
    };
    let source = stage::request(&client, &args)?;
    write_pairs(c.github_output.as_deref(), &source.pairs())?;
    let json: serde_json::Map<String, serde_json::Value> = source
        .pairs()
        .into_iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v)))
        .collect();
    stdout::println(&serde_json::Value::Object(json).to_string());
    Ok(())
}

pub(crate) fn stage_dispatch(c: StageDispatchCli) -> Outcome {
    use reuse_sweep::stage;
    let client = stage_client(&["GH_TOKEN", "GITHUB_TOKEN"])?;
    let frontend = stage_client(&["STAGE_TOKEN"])?;
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
            write_pairs(
                c.github_output.as_deref(),
                &[("comment-id", id.to_string())],
            )?;
            stdout::println(&id.to_string());
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

pub(crate) fn stage_callback(c: StageCallbackCli) -> Outcome {
    use reuse_sweep::stage;
    let event = stage::read_event(&c.event_path)?;
    let client = stage_client(&["GH_TOKEN", "GITHUB_TOKEN"])?;
    let args = stage::CallbackArgs {
        repo: c.repo,
        event,
        frontend_repo: c.frontend_repository,
        server_url: c.server_url,
        staging_site: c.staging_site,
        bot_login: c.bot_login,
    };
    match stage::callback(&client, &args) {
        Ok(r) => {
            stdout::println(&r.body);
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}
