//! `recover-ingest`: dispatch the ingest again for a reused sweep whose
//! ingest failed (the reference's `recover-reused-ingest.yml`, with the
//! safety checks its `recover_failed_ingest.py` applies to the runs).
//!
//! The reference workflow posts the two run ids it is given without a
//! check. This command first proves they belong together, fail closed:
//! * the source run is a `pull_request` run of the sweep workflow that
//!   completed with conclusion `success`, holding unexpired benchmark
//!   artifacts (`bmk_agentic_*` for the agentic ingest, `results_bmk` or
//!   `eval_results_all` otherwise);
//! * the merge run is a completed `push` run of the same workflow on the
//!   main branch with an unexpired `changelog-metadata` artifact;
//! * the merge run's commit is the merge commit of exactly one merged PR,
//!   and the source run's head is one of that PR's commits.
//!
//! The dispatch is the one `run-sweep.yml`'s ingest jobs send:
//! `repository_dispatch` of `ingest-agentic-results` (or `ingest-results`)
//! to the ingest repository with `source-run-id`, `merge-run-id` and, for
//! the agentic ingest, `database-target: production`.

use github_client::Client;
use serde_json::{Value, json};

use crate::{OpsError, Result, artifact_names, pull_commit_shas, refused, state_of, str_at};

/// The event types the ingest repository accepts.
pub const EVENT_TYPES: [&str; 2] = ["ingest-agentic-results", "ingest-results"];

/// What `recover-ingest` needs.
#[derive(Debug, Clone)]
pub struct RecoverArgs {
    pub repo: String,
    pub source_run_id: u64,
    pub merge_run_id: u64,
    /// `owner/name` receiving the dispatch.
    pub ingest_repository: String,
    /// One of [`EVENT_TYPES`].
    pub event_type: String,
    /// Workflow file of the sweep.
    pub workflow: String,
    /// Branch of the merge run.
    pub main_branch: String,
}

/// The checked dispatch.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovery {
    pub pr_number: u64,
    pub payload: Value,
}

/// Checks the two runs (module doc) and returns the dispatch to send.
pub fn plan(client: &Client, a: &RecoverArgs) -> Result<Recovery> {
    if !EVENT_TYPES.contains(&a.event_type.as_str()) {
        return Err(OpsError::Failed(format!(
            "--event-type '{}' is not one of {}",
            a.event_type,
            EVENT_TYPES.join(", ")
        )));
    }
    let workflow_path = format!(".github/workflows/{}", a.workflow);
    let run = |id: u64| client.get(&format!("/repos/{}/actions/runs/{id}", a.repo), &[]);

    let source = run(a.source_run_id)?;
    expect_field(&source, "source", a.source_run_id, "path", &workflow_path)?;
    expect_field(&source, "source", a.source_run_id, "event", "pull_request")?;
    if source["status"].as_str() != Some("completed")
        || source["conclusion"].as_str() != Some("success")
    {
        return refused(format!(
            "source run {} is {}, expected completed/success: only a successful sweep is ingested",
            a.source_run_id,
            state_of(&source)
        ));
    }
    let names = artifact_names(client, &a.repo, a.source_run_id)?;
    let agentic = a.event_type == "ingest-agentic-results";
    let has_data = names.iter().any(|n| {
        if agentic {
            n.starts_with("bmk_agentic_")
        } else {
            n == "results_bmk" || n == "eval_results_all"
        }
    });
    if !has_data {
        return refused(format!(
            "source run {} has no unexpired {} artifact",
            a.source_run_id,
            if agentic {
                "bmk_agentic_*"
            } else {
                "results_bmk or eval_results_all"
            }
        ));
    }

    let merge = run(a.merge_run_id)?;
    expect_field(&merge, "merge", a.merge_run_id, "path", &workflow_path)?;
    expect_field(&merge, "merge", a.merge_run_id, "event", "push")?;
    expect_field(
        &merge,
        "merge",
        a.merge_run_id,
        "head_branch",
        &a.main_branch,
    )?;
    expect_field(&merge, "merge", a.merge_run_id, "status", "completed")?;
    if !artifact_names(client, &a.repo, a.merge_run_id)?.contains("changelog-metadata") {
        return refused(format!(
            "merge run {} has no unexpired changelog-metadata artifact",
            a.merge_run_id
        ));
    }

    let merge_sha = str_at(&merge, "/head_sha").unwrap_or_default();
    let pulls = client.get(&format!("/repos/{}/commits/{merge_sha}/pulls", a.repo), &[])?;
    let merged: Vec<&Value> = pulls
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| str_at(p, "/merged_at").is_some())
        .filter(|p| p["merge_commit_sha"].as_str() == Some(merge_sha))
        .collect();
    if merged.len() != 1 {
        return refused(format!(
            "merge run {} commit {merge_sha} maps to {} exact merged PRs, expected 1",
            a.merge_run_id,
            merged.len()
        ));
    }
    let pr_number = merged[0]["number"]
        .as_u64()
        .ok_or_else(|| OpsError::Failed("the merged PR has no number".into()))?;
    let source_sha = str_at(&source, "/head_sha").unwrap_or_default();
    if !pull_commit_shas(client, &a.repo, pr_number)?.contains(source_sha) {
        return refused(format!(
            "source run {} head {source_sha} is not a commit of PR #{pr_number}, which merge run {} merged",
            a.source_run_id, a.merge_run_id
        ));
    }

    let mut payload = json!({
        "source-run-id": a.source_run_id.to_string(),
        "merge-run-id": a.merge_run_id.to_string(),
    });
    if agentic {
        payload["database-target"] = json!("production");
    }
    Ok(Recovery { pr_number, payload })
}

/// Sends the planned dispatch with `ingest` (a client holding the token
/// allowed to dispatch to the ingest repository).
pub fn dispatch(ingest: &Client, a: &RecoverArgs, plan: &Recovery) -> Result<()> {
    ingest.post(
        &format!("/repos/{}/dispatches", a.ingest_repository),
        &json!({ "event_type": a.event_type, "client_payload": plan.payload }),
    )?;
    Ok(())
}

fn expect_field(run: &Value, which: &str, id: u64, field: &str, want: &str) -> Result<()> {
    let got = run[field].as_str().unwrap_or("null");
    if got != want {
        return refused(format!(
            "{which} run {id} {field} is '{got}', expected '{want}'"
        ));
    }
    Ok(())
}
