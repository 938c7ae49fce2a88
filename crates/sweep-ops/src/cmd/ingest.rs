//! `dispatch-ingest`: flags and glue over `sweep_ops::ingest`.
use sweep_model::gha::{self, Level};
use sweep_ops::ingest;

use super::client;
use sweep_cli::Failure;

#[derive(clap::Args, Debug)]
pub(crate) struct IngestCli {
    /// Repository receiving the dispatch (`owner/name`).
    #[arg(long, env = "INPUT_INGEST_REPOSITORY")]
    ingest_repository: String,
    /// `ingest-results` or `ingest-agentic-results` (checked by the
    /// library, so a wrong value is a refusal, exit 1).
    #[arg(long, env = "INPUT_EVENT_TYPE")]
    event_type: String,
    /// This run's id (the `merge-run-id`; the `source-run-id` too unless reused).
    #[arg(long, env = "GITHUB_RUN_ID")]
    run_id: String,
    /// The setup job's `reuse-enabled` (`true`, `false` or empty).
    #[arg(long, env = "INPUT_REUSE_ENABLED", default_value = "")]
    reuse_enabled: String,
    /// The setup job's `reuse-source-run-id` (the reused PR run).
    #[arg(long, env = "INPUT_REUSE_SOURCE_RUN_ID", default_value = "")]
    reuse_source_run_id: String,
}

pub(crate) fn dispatch_ingest(c: IngestCli) -> Result<(), Failure> {
    let args = ingest::IngestArgs {
        ingest_repository: c.ingest_repository,
        event_type: c.event_type,
        run_id: c.run_id,
        reuse_enabled: c.reuse_enabled,
        reuse_source_run_id: c.reuse_source_run_id,
    };
    let payload = ingest::plan(&args)?;
    // The only token this command holds: the one allowed to dispatch to
    // the ingest repository.
    let ingest_client = client(&["INGEST_TOKEN"])?;
    ingest::send(
        &ingest_client,
        &args.ingest_repository,
        &args.event_type,
        &payload,
    )?;
    let summary = format!(
        "dispatched `{}` to `{}`: `{payload}`\n",
        args.event_type, args.ingest_repository
    );
    if let Err(e) = gha::append_step_summary(&summary) {
        // The dispatch happened; the summary is a courtesy.
        gha::annotate(
            Level::Warning,
            None,
            None,
            &format!("the ingest was dispatched, but the step summary could not be written: {e}"),
        );
    }
    let line = serde_json::json!({
        "event_type": args.event_type, "repository": args.ingest_repository,
        "client_payload": payload,
    });
    sweep_cli::stdout::println(&line.to_string());
    Ok(())
}
