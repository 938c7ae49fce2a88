//! `recover-ingest`: dispatch the ingest again for a reused sweep whose
//! ingest failed (the reference's `recover-reused-ingest.yml`, with the
//! safety checks its `recover_failed_ingest.py` applies to the runs).
//!
//! The reference workflow posts the two run ids it is given without a
//! check. This command first proves they belong together, with the rules
//! `reuse-sweep find` applies on the push (the shared ones of
//! [`github_client::trust`]), fail closed:
//! * the source run is a `pull_request` run of the sweep workflow,
//!   triggered from this repository (not a fork), that completed with
//!   conclusion `success`, holding unexpired benchmark artifacts
//!   (`bmk_agentic_*` for the agentic ingest, `results_bmk` or
//!   `eval_results_all` otherwise);
//! * the merge run is a completed `push` run of the same workflow on the
//!   main branch of this repository with an unexpired `changelog-metadata`
//!   artifact, and it was itself a reuse run (see [`reuse_evidence`]);
//! * the merge run's commit is the merge commit of exactly one merged PR;
//! * that PR carries a `/reuse-sweep-run` comment by a commenter with
//!   write, maintain or admin permission (asked of the API, never the
//!   comment's `author_association`); a pinned run id must be the source;
//! * the source run's head is the PR's swept head
//!   ([`github_client::trust::swept_head`]), not an older commit, it was
//!   made under a full-sweep label and no reuse-incompatible one
//!   ([`github_client::trust::run_label_refusal`]), and every PR commit
//!   after it was on the branch when the approval was written or changes
//!   nothing a sweep reads ([`github_client::trust::unapproved_change`]).
//!
//! The dispatch is the one `run-sweep.yml`'s ingest jobs send:
//! `repository_dispatch` of `ingest-agentic-results` (or `ingest-results`)
//! to the ingest repository with `source-run-id`, `merge-run-id` and, for
//! the agentic ingest, `database-target: production`.

use std::collections::{BTreeSet, HashMap};

use github_client::{Client, trust};
use serde_json::Value;
use sweep_model::jobs;

use crate::{OpsError, Result, artifact_names, refused, state_of, str_at};

/// The event types the ingest repository accepts.
pub use crate::ingest::EVENT_TYPES;

/// The comment command that authorises a reuse (`reuse-sweep find`'s
/// default `--pinned-run-command`).
pub const REUSE_COMMAND: &str = "/reuse-sweep-run";

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
    /// The comment command that authorises a reuse ([`REUSE_COMMAND`]).
    pub reuse_command: String,
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
    let source = check_source(client, a)?;
    let merge = check_merge(client, a)?;
    let pr_number = merged_pr(client, a, &merge)?;
    let approved_at = approval(client, a, pr_number)?;
    check_swept_code(client, a, &source, pr_number, &approved_at)?;

    let payload = crate::ingest::payload(
        &a.event_type,
        &a.source_run_id.to_string(),
        &a.merge_run_id.to_string(),
    );
    Ok(Recovery { pr_number, payload })
}

/// Whether the recovery is of the agentic ingest.
fn is_agentic(a: &RecoverArgs) -> bool {
    a.event_type == "ingest-agentic-results"
}

/// Run `id` of `a.repo`, as the API returns it.
fn get_run(client: &Client, a: &RecoverArgs, id: u64) -> Result<Value> {
    Ok(client.get(&format!("/repos/{}/actions/runs/{id}", a.repo), &[])?)
}

/// Owns the source run's checks: a successful `pull_request` run of the
/// sweep workflow from this repository holding unexpired benchmark
/// artifacts of the event type. Returns the run.
fn check_source(client: &Client, a: &RecoverArgs) -> Result<Value> {
    let workflow_path = format!(".github/workflows/{}", a.workflow);
    let source = get_run(client, a, a.source_run_id)?;
    expect_field(&source, "source", a.source_run_id, "path", &workflow_path)?;
    expect_field(&source, "source", a.source_run_id, "event", "pull_request")?;
    expect_from_repo(&source, "source", a.source_run_id, &a.repo)?;
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
    let agentic = is_agentic(a);
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
    Ok(source)
}

/// Owns the merge run's checks: a completed `push` run of the sweep
/// workflow on the main branch of this repository, with an unexpired
/// `changelog-metadata` artifact, that was a reuse run. Returns the run.
fn check_merge(client: &Client, a: &RecoverArgs) -> Result<Value> {
    let workflow_path = format!(".github/workflows/{}", a.workflow);
    let merge = get_run(client, a, a.merge_run_id)?;
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
    expect_from_repo(&merge, "merge", a.merge_run_id, &a.repo)?;
    let merge_names = artifact_names(client, &a.repo, a.merge_run_id)?;
    if !merge_names.contains("changelog-metadata") {
        return refused(format!(
            "merge run {} has no unexpired changelog-metadata artifact",
            a.merge_run_id
        ));
    }
    let jobs = client.get_all(
        &format!("/repos/{}/actions/runs/{}/jobs", a.repo, a.merge_run_id),
        &[("filter", "all")],
        Some("jobs"),
    )?;
    if let Err(why) = reuse_evidence(&jobs, &merge_names, is_agentic(a)) {
        return refused(format!(
            "merge run {} was not a reuse run: {why}; only the ingest of a reused sweep is recovered here",
            a.merge_run_id
        ));
    }
    Ok(merge)
}

/// Owns the mapping of the merge run's commit to the one merged PR whose
/// merge commit it is; returns that PR's number.
fn merged_pr(client: &Client, a: &RecoverArgs, merge: &Value) -> Result<u64> {
    let merge_sha = str_at(merge, "/head_sha").unwrap_or_default();
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
    merged[0]["number"]
        .as_u64()
        .ok_or_else(|| OpsError::Failed("the merged PR has no number".into()))
}

/// Owns the reuse approval: PR `pr_number` carries the reuse command by a
/// writer, and a pinned run id is the source run. Returns the approving
/// comment's `created_at`.
fn approval(client: &Client, a: &RecoverArgs, pr_number: u64) -> Result<String> {
    let Some((login, pin, approved_at)) =
        authorisation(client, &a.repo, pr_number, &a.reuse_command)?
    else {
        return refused(format!(
            "PR #{pr_number} has no {} comment by a commenter with write, maintain or admin permission on {}: its sweep was never authorised for reuse",
            a.reuse_command, a.repo
        ));
    };
    if let Some(pin) = pin
        && pin != a.source_run_id
    {
        return refused(format!(
            "@{login}'s {} comment on PR #{pr_number} pins run {pin}, not source run {}",
            a.reuse_command, a.source_run_id
        ));
    }
    Ok(approved_at)
}

/// Owns the binding of the source run to the approved code: its head is a
/// commit of the PR and the PR's swept head, it ran under a full-sweep
/// label and no reuse-incompatible one, and nothing a sweep reads arrived
/// after the approval.
fn check_swept_code(
    client: &Client,
    a: &RecoverArgs,
    source: &Value,
    pr_number: u64,
    approved_at: &str,
) -> Result<()> {
    let commits = client.get_all(
        &format!("/repos/{}/pulls/{pr_number}/commits", a.repo),
        &[],
        None,
    )?;
    let source_sha = str_at(source, "/head_sha").unwrap_or_default();
    if !commits
        .iter()
        .any(|c| c["sha"].as_str() == Some(source_sha))
    {
        return refused(format!(
            "source run {} head {source_sha} is not a commit of PR #{pr_number}, which merge run {} merged",
            a.source_run_id, a.merge_run_id
        ));
    }
    let swept = trust::swept_head(&commits).unwrap_or_default();
    if source_sha != swept {
        return refused(format!(
            "source run {} ran on {source_sha}, not on PR #{pr_number}'s swept head {swept} (the newest commit that is not a merge or [skip-sweep]); only a run of the PR's current code is ingested",
            a.source_run_id
        ));
    }
    // Bound to what was approved, as `reuse-sweep find` binds it: the run
    // was made under a full-sweep label and no reuse-incompatible one, and
    // nothing after its head that a sweep reads arrived after the approval.
    let timeline = client.get_all(
        &format!("/repos/{}/issues/{pr_number}/timeline", a.repo),
        &[],
        None,
    )?;
    let history = trust::LabelHistory::from_timeline(&timeline);
    if let Some(why) = trust::run_label_refusal(
        &history,
        source,
        &crate::merge::FULL_SWEEP_LABELS,
        &crate::merge::REUSE_INCOMPATIBLE_LABELS,
    ) {
        return refused(format!(
            "source run {} is not a full sweep: {why}",
            a.source_run_id
        ));
    }
    let last = commits.last().and_then(|c| c["sha"].as_str());
    if last != Some(source_sha) {
        let pull = client.get(&format!("/repos/{}/pulls/{pr_number}", a.repo), &[])?;
        let binding = trust::Binding {
            repo: &a.repo,
            pull: &pull,
            commits: &commits,
            swept: source_sha,
            approved_at,
        };
        if let Some(why) = trust::unapproved_change(client, &binding)? {
            return refused(format!(
                "PR #{pr_number}: source run {} does not stand for the approved code: {why}",
                a.source_run_id
            ));
        }
    }
    Ok(())
}

/// Why a run was not a reuse run (see [`reuse_evidence`]): the evidence
/// that it swept by itself, or the ingest that did not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotAReuseRun {
    /// Its own benchmark artifacts, by name.
    #[error("it holds benchmark results of its own ({0})")]
    OwnResults(String),
    /// Its planning jobs that ran, by name.
    #[error("its planning job(s) ran ({0}), so it swept by itself")]
    Planned(String),
    /// The ingest job of the event type.
    #[error("its {0} job did not run")]
    NoIngest(&'static str),
}

/// Whether a push-to-main run of `run-sweep.yml` reused a PR sweep, judged
/// from what the API exposes of it (the setup job's `reuse-enabled` output
/// is not exposed), `Err` saying why not. The workflow marks a reuse run
/// this way:
/// * every planning job (the leg workflow's `plan …` jobs, whose calls are
///   gated by `needs.setup.outputs.reuse-enabled != 'true'`; `canary-select`
///   in runs of sweepkit before the leg workflow) was skipped, so no
///   benchmark leg ran: in a run that swept by itself at least one ran;
/// * the ingest job of the event type (`trigger-agentic-ingest` or
///   `trigger-ingest`) ran anyway: without a reuse it runs only after a leg
///   or a collect job succeeded, which needs a planning job;
/// * it holds no benchmark results of its own (`bmk_*`, `results_bmk`,
///   `eval_results_all`): a reuse run's results are the source run's.
///
/// Job names are matched on their last ` / ` segment: a called workflow's
/// jobs are listed as `<caller job> / <job>`. `jobs` is the run's job list
/// over all attempts (`filter=all`).
pub fn reuse_evidence(
    jobs: &[Value],
    artifacts: &BTreeSet<String>,
    agentic: bool,
) -> std::result::Result<(), NotAReuseRun> {
    let own: Vec<&str> = artifacts
        .iter()
        .map(String::as_str)
        .filter(|n| n.starts_with("bmk_") || *n == "results_bmk" || *n == "eval_results_all")
        .collect();
    if !own.is_empty() {
        return Err(NotAReuseRun::OwnResults(own.join(", ")));
    }
    let short = |j: &Value| -> String {
        let name = j["name"].as_str().unwrap_or("");
        name.rsplit(" / ").next().unwrap_or(name).to_string()
    };
    let ran = |j: &Value| j["conclusion"].as_str() != Some("skipped");
    let planned: Vec<String> = jobs
        .iter()
        .filter(|j| {
            let n = short(j);
            n == jobs::LEGACY_CANARY_SELECT || n.starts_with(jobs::PLAN_PREFIX)
        })
        .filter(|j| ran(j))
        .map(short)
        .collect();
    if !planned.is_empty() {
        return Err(NotAReuseRun::Planned(planned.join(", ")));
    }
    let trigger = if agentic {
        jobs::AGENTIC_INGEST
    } else {
        jobs::INGEST
    };
    if !jobs.iter().any(|j| short(j) == trigger && ran(j)) {
        return Err(NotAReuseRun::NoIngest(trigger));
    }
    Ok(())
}

/// The newest `command` comment on PR `pr` whose author may write to
/// `repo` (the collaborator permission endpoint, [`trust::may_write`]):
/// `(login, pinned run id, the comment's created_at)`. Comments by others
/// are ignored, as `reuse-sweep find` ignores them; the last command line
/// of the deciding comment decides the pin (a bare command pins nothing).
fn authorisation(
    client: &Client,
    repo: &str,
    pr: u64,
    command: &str,
) -> Result<Option<(String, Option<u64>, String)>> {
    let mut comments = client.get_all(&format!("/repos/{repo}/issues/{pr}/comments"), &[], None)?;
    // Stable sort by the timestamp string: equal stamps keep API order.
    comments.sort_by_key(|c| c["created_at"].as_str().unwrap_or("").to_string());
    // Cheapest first: an over-long body is no command; then who wrote it
    // (one lookup per login); only a writer's comment is parsed at all.
    let mut writers: HashMap<String, bool> = HashMap::new();
    for c in comments.iter().rev() {
        let body = c["body"].as_str().unwrap_or("");
        let Some(login) = str_at(c, "/user/login") else {
            continue;
        };
        if !github_client::command::within_limit(body) {
            continue;
        }
        let may_write = match writers.get(login) {
            Some(known) => *known,
            None => {
                let access = client.collaborator_access(repo, login)?;
                let ok = trust::may_write(access.as_ref());
                writers.insert(login.to_string(), ok);
                ok
            }
        };
        if !may_write {
            if body.contains(command) {
                eprintln!(
                    "{command} by {login} ignored: {login} has no write, maintain or admin permission on {repo}"
                );
            }
            continue;
        }
        let Some(found) = github_client::command::last_command(body, command) else {
            continue;
        };
        let pin = match found {
            None => None,
            Some(digits) => Some(digits.parse::<u64>().map_err(|_| {
                OpsError::Refused(format!(
                    "PR #{pr}: run id '{digits}' in @{login}'s {command} comment is out of range"
                ))
            })?),
        };
        let at = c["created_at"].as_str().unwrap_or("").to_string();
        return Ok(Some((login.to_string(), pin, at)));
    }
    Ok(None)
}

/// Sends the planned dispatch with `ingest` (a client holding the token
/// allowed to dispatch to the ingest repository).
pub fn dispatch(ingest: &Client, a: &RecoverArgs, plan: &Recovery) -> Result<()> {
    crate::ingest::send(ingest, &a.ingest_repository, &a.event_type, &plan.payload)
}

/// Refuses a run not triggered from `repo` itself ([`trust::run_is_from`]):
/// a fork's run, or one that does not name its head repository.
fn expect_from_repo(run: &Value, which: &str, id: u64, repo: &str) -> Result<()> {
    if !trust::run_is_from(run, repo) {
        return refused(format!(
            "{which} run {id} was triggered from {}, not from {repo}: only this repository's runs are ingested",
            trust::head_repository(run).unwrap_or("an unnamed repository")
        ));
    }
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
