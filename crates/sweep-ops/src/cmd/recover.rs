//! `recover-ingest`: flags and glue over `sweep_ops::recover`.
use sweep_cli as gha;
use sweep_ops::recover;

use super::client;
use sweep_cli::Failure;

#[derive(clap::Args, Debug)]
pub(crate) struct RecoverCli {
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
    /// The comment command that authorises a reuse (as `reuse-sweep find
    /// --pinned-run-command`).
    #[arg(long, env = "INPUT_PINNED_RUN_COMMAND", default_value = recover::REUSE_COMMAND)]
    reuse_command: String,
    /// Check and print the dispatch without sending it.
    #[arg(long)]
    dry_run: bool,
}

pub(crate) fn recover_ingest(c: RecoverCli) -> Result<(), Failure> {
    let args = recover::RecoverArgs {
        repo: c.repo,
        source_run_id: c.source_run_id,
        merge_run_id: c.merge_run_id,
        ingest_repository: c.ingest_repository,
        event_type: c.event_type,
        workflow: c.workflow,
        main_branch: c.main_branch,
        reuse_command: c.reuse_command,
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
    sweep_cli::stdout::println(&line.to_string());
    Ok(())
}
