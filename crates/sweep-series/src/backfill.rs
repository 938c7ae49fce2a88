//! Backfill: the past main runs of the sweep workflow, read through the
//! GitHub API and appended to the history, so that an adopter's first pull
//! request already has a baseline.
//!
//! The runs are the successful `push` runs of the workflow on the branch,
//! newest first, at most a caller-named count (pages of 100); each one's
//! `results_bmk` artifact (and `eval_results_all`, when the run kept one)
//! is downloaded and its aggregate appended, oldest run first. Appends are
//! idempotent, so a backfill that stopped (a time-out, an expired token)
//! resumes by running again: the runs already in the history are passed
//! over without a download. A run without the artifact (expired, a gated
//! no-op run) is passed over and counted.

use std::collections::BTreeSet;
use std::path::Path;

use github_client::{Client, actions};
use serde_json::{Map, Value};

use crate::store::{Appended, History, Run, RunKey, RunRef, StoreError};

/// The most runs one backfill reads: a year of daily main sweeps and then
/// some. Each costs an artifact listing and a download.
pub const MAX_BACKFILL_RUNS: usize = 1000;

/// The artifact that holds a run's benchmark aggregate (`agg_bmk.json`).
pub const BENCHMARK_ARTIFACT: &str = "results_bmk";
/// The artifact that holds a run's eval aggregate (`agg_eval_all.json`).
pub const EVAL_ARTIFACT: &str = "eval_results_all";

/// What to backfill.
#[derive(Debug, Clone)]
pub struct Query<'a> {
    /// `owner/name`.
    pub repo: &'a str,
    /// The workflow file (`run-sweep.yml`).
    pub workflow: &'a str,
    pub branch: &'a str,
    /// At most this many runs (1 to [`MAX_BACKFILL_RUNS`]).
    pub max_runs: usize,
}

/// What a backfill did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Runs listed by the API (newest first, up to the maximum).
    pub listed: usize,
    /// Runs appended now.
    pub appended: Vec<u64>,
    /// Runs in the history already.
    pub already: usize,
    /// Runs without the benchmark artifact (expired or never made).
    pub without_artifact: Vec<u64>,
}

/// Why a backfill stopped.
#[derive(Debug, thiserror::Error)]
pub enum BackfillError {
    #[error(transparent)]
    GitHub(#[from] github_client::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("run {run_id}: artifact {artifact}: {cause}")]
    Artifact {
        run_id: u64,
        artifact: &'static str,
        cause: String,
    },
    #[error("--max-runs is {0}: give 1 to {MAX_BACKFILL_RUNS}")]
    MaxRuns(usize),
}

/// A listed run.
#[derive(Debug, Clone)]
struct Listed {
    id: u64,
    attempt: u32,
    sha: String,
    date: String,
}

/// Backfills `store` from `q` (see the module header).
///
/// # Errors
/// An API call failed, an artifact is not an aggregate, or the store
/// refused a run.
pub fn backfill(
    client: &Client,
    q: &Query<'_>,
    store: &dyn History,
) -> Result<Report, BackfillError> {
    if q.max_runs == 0 || q.max_runs > MAX_BACKFILL_RUNS {
        return Err(BackfillError::MaxRuns(q.max_runs));
    }
    let runs = list_runs(client, q)?;
    let known: BTreeSet<RunKey> = store.runs()?.iter().map(|l| l.run.key()).collect();
    let mut report = Report {
        listed: runs.len(),
        ..Report::default()
    };
    for run in runs.iter().rev() {
        if known.contains(&(run.id, run.attempt)) {
            report.already += 1;
            continue;
        }
        let Some(benchmarks) =
            artifact_rows(client, q.repo, run.id, BENCHMARK_ARTIFACT, "agg_bmk.json")?
        else {
            report.without_artifact.push(run.id);
            continue;
        };
        let evals = artifact_rows(client, q.repo, run.id, EVAL_ARTIFACT, "agg_eval_all.json")?
            .unwrap_or_default();
        let appended = store.append(&Run {
            run: RunRef {
                run_id: run.id,
                attempt: run.attempt,
                commit: run.sha.clone(),
                date: run.date.clone(),
                pr: pull_request_of(client, q.repo, &run.sha)?,
            },
            repo: q.repo.to_string(),
            event: "push".into(),
            benchmarks,
            evals,
        })?;
        match appended {
            Appended::Added { .. } => report.appended.push(run.id),
            Appended::AlreadyThere => report.already += 1,
        }
    }
    Ok(report)
}

/// The newest successful push runs of the workflow on the branch, newest
/// first, at most `q.max_runs`.
fn list_runs(client: &Client, q: &Query<'_>) -> Result<Vec<Listed>, BackfillError> {
    let path = format!(
        "/repos/{}/actions/workflows/{}/runs",
        q.repo,
        github_client::encode(q.workflow)
    );
    let mut out = Vec::new();
    for page in 1.. {
        let page = page.to_string();
        let answer = client.get(
            &path,
            &[
                ("branch", q.branch),
                ("event", "push"),
                ("status", "success"),
                ("per_page", "100"),
                ("page", &page),
            ],
        )?;
        let runs = answer
            .get("workflow_runs")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if runs.is_empty() {
            break;
        }
        for r in &runs {
            let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
            // GitHub filtered already; checked again so that a fork's pull
            // request run on a branch of the same name never enters main's
            // history.
            let Some(id) = r.get("id").and_then(Value::as_u64) else {
                continue;
            };
            if s("conclusion") != "success" || s("event") != "push" || s("head_branch") != q.branch
            {
                continue;
            }
            out.push(Listed {
                id,
                attempt: r
                    .get("run_attempt")
                    .and_then(Value::as_u64)
                    .and_then(|a| u32::try_from(a).ok())
                    .unwrap_or(1),
                sha: s("head_sha").to_string(),
                date: s("created_at").to_string(),
            });
            if out.len() == q.max_runs {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// The rows of `file` in the run's artifact `name`; `None` when the run has
/// no unexpired artifact of that name.
fn artifact_rows(
    client: &Client,
    repo: &str,
    run_id: u64,
    name: &'static str,
    file: &str,
) -> Result<Option<Vec<Map<String, Value>>>, BackfillError> {
    let listing = client.get_all(
        &format!("/repos/{repo}/actions/runs/{run_id}/artifacts"),
        &[("name", name)],
        Some("artifacts"),
    )?;
    let Some(id) = listing
        .iter()
        .find(|a| {
            a.get("name").and_then(Value::as_str) == Some(name)
                && a.get("expired").and_then(Value::as_bool) != Some(true)
        })
        .and_then(|a| a.get("id").and_then(Value::as_u64))
    else {
        return Ok(None);
    };
    let bad = |cause: String| BackfillError::Artifact {
        run_id,
        artifact: name,
        cause,
    };
    let zip = client.download_artifact_zip(repo, id)?;
    let dir = tempfile_dir().map_err(|e| bad(e.to_string()))?;
    let files = actions::unzip(&zip, dir.path()).map_err(|e| bad(e.to_string()))?;
    let Some(found) = files
        .iter()
        .find(|p| p.file_name().is_some_and(|n| n == file))
    else {
        return Err(bad(format!("holds no {file}")));
    };
    read_rows(&dir.path().join(found))
        .map(Some)
        .map_err(|e| bad(e.to_string()))
}

fn tempfile_dir() -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("sweepkit-backfill-")
        .tempdir()
}

/// The largest aggregate read from an artifact (as `actions::unzip` caps
/// what it inflates; an aggregate of 378 points is under 1 MB).
const MAX_AGGREGATE_BYTES: u64 = 64 * 1024 * 1024;

/// Why an artifact's file is not an aggregate.
#[derive(Debug, thiserror::Error)]
pub enum AggregateError {
    #[error(transparent)]
    Read(#[from] sweep_model::fsio::ReadError),
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("an aggregate is a JSON array of rows")]
    NotArray,
    #[error("[{0}] is not a row (an object)")]
    NotRow(usize),
}

fn read_rows(path: &Path) -> Result<Vec<Map<String, Value>>, AggregateError> {
    let bytes = sweep_model::fsio::read_regular(path, MAX_AGGREGATE_BYTES)?;
    match serde_json::from_slice::<Value>(&bytes)? {
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Object(m) => Ok(m),
                _ => Err(AggregateError::NotRow(i)),
            })
            .collect(),
        _ => Err(AggregateError::NotArray),
    }
}

/// The pull request a commit of main came from (`GET
/// /repos/{repo}/commits/{sha}/pulls`: the merged one, else the first);
/// `None` when GitHub knows none (a direct push).
fn pull_request_of(client: &Client, repo: &str, sha: &str) -> Result<Option<u64>, BackfillError> {
    if sha.is_empty() {
        return Ok(None);
    }
    let pulls = match client.get(&format!("/repos/{repo}/commits/{sha}/pulls"), &[]) {
        Ok(v) => v,
        Err(e) if e.status() == Some(404) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let list = pulls.as_array().cloned().unwrap_or_default();
    let merged = list
        .iter()
        .find(|p| p.get("merged_at").is_some_and(|m| !m.is_null()))
        .or_else(|| list.first());
    Ok(merged.and_then(|p| p.get("number")).and_then(Value::as_u64))
}
