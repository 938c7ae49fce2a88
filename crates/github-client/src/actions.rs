//! Workflow runs and their artifacts (Actions API): the newest successful
//! run of a workflow on a branch that has a given artifact, and that
//! artifact's files (`compare-results --baseline-from last-main-run`).
//!
//! An artifact download is two requests: `GET
//! /repos/{repo}/actions/artifacts/{id}/zip` (with the token, `actions:
//! read`), which GitHub answers with a `302` to a short-lived signed URL on
//! another host, then a plain GET of that URL (no token: the URL is its own
//! credential, so it is never printed either). The zip is read in memory
//! with the `zip` crate, within the size caps below.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::fetch::{self, Get, GetError};
use crate::{Client, Error, Result, encode};

/// Runs of the workflow looked at, newest first, before concluding there is
/// no baseline. Each one costs an artifact listing; a branch whose last 30
/// successful runs all lack the artifact (gated no-op runs, expired
/// artifacts) has no usable baseline, and going further back would compare
/// against old code.
pub const MAX_RUNS_SCANNED: usize = 30;

/// Largest artifact zip downloaded. A `results_bmk` artifact holds one
/// aggregate of a few hundred rows (well under 1 MiB even for a 378-point
/// sweep, compressed further in the zip); 64 MiB leaves room for much
/// larger sweeps and still refuses a wrong artifact before it fills the
/// job's memory.
pub const MAX_ARTIFACT_ZIP_BYTES: usize = 64 * 1024 * 1024;

/// Largest total of uncompressed bytes extracted from one zip: the cap that
/// stops a zip bomb (a small zip declaring, or inflating to, gigabytes).
pub const MAX_UNZIPPED_BYTES: u64 = 256 * 1024 * 1024;

/// Most files extracted from one zip: an aggregate artifact holds a
/// handful; a zip with more is not the artifact this reads.
pub const MAX_ZIP_ENTRIES: usize = 10_000;

/// Per-attempt limit of the signed-URL download (connect, answer, body).
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// A run of a workflow and the artifact found on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunArtifact {
    pub run_id: u64,
    /// The run's commit (`head_sha`).
    pub head_sha: String,
    /// When the run was created (`created_at`, ISO 8601 as GitHub writes it).
    pub created_at: String,
    /// The run's page (`html_url`), empty when GitHub gave none.
    pub html_url: String,
    pub artifact_id: u64,
    pub artifact_name: String,
}

/// Where to look for the run.
#[derive(Debug, Clone)]
pub struct RunQuery<'a> {
    /// `owner/name`.
    pub repo: &'a str,
    /// The workflow's file name (`run-sweep.yml`) or id.
    pub workflow: &'a str,
    pub branch: &'a str,
    /// `push` for the runs of commits landed on the branch: a pull request
    /// from a fork's branch of the same name lists under that branch too,
    /// with event `pull_request`, and must never be a baseline.
    pub event: &'a str,
    /// A run never chosen (the current one).
    pub exclude_run: Option<u64>,
    pub artifact: &'a str,
}

impl Client {
    /// The repository's default branch (`GET /repos/{repo}`).
    pub fn default_branch(&self, repo: &str) -> Result<String> {
        let path = format!("/repos/{repo}");
        let v = self.get(&path, &[])?;
        match v.get("default_branch").and_then(Value::as_str) {
            Some(b) if !b.is_empty() => Ok(b.to_string()),
            _ => Err(self.shape(
                crate::Verb::Get,
                &path,
                "no 'default_branch' string in the repository".to_string(),
            )),
        }
    }

    /// Every completed `pull_request` run of `workflow` (its file name or
    /// id) on `branch`, newest first as GitHub lists them, all pages: the
    /// runs a pull request's sweep may be found among.
    pub fn completed_pull_request_runs(
        &self,
        repo: &str,
        workflow: &str,
        branch: &str,
    ) -> Result<Vec<Value>> {
        self.get_all(
            &format!("/repos/{repo}/actions/workflows/{}/runs", encode(workflow)),
            &[
                ("event", "pull_request"),
                ("branch", branch),
                ("status", "completed"),
            ],
            Some("workflow_runs"),
        )
    }

    /// The newest successful run matching `q` (never `q.exclude_run`) that
    /// has an unexpired artifact named `q.artifact`, among the newest
    /// [`MAX_RUNS_SCANNED`]; `None` when there is none.
    pub fn last_successful_run_with_artifact(
        &self,
        q: &RunQuery<'_>,
    ) -> Result<Option<RunArtifact>> {
        let path = format!(
            "/repos/{}/actions/workflows/{}/runs",
            q.repo,
            encode(q.workflow)
        );
        let per_page = MAX_RUNS_SCANNED.to_string();
        let page = self.get(
            &path,
            &[
                ("branch", q.branch),
                ("event", q.event),
                ("status", "success"),
                ("per_page", &per_page),
            ],
        )?;
        let runs = match page.get("workflow_runs") {
            Some(Value::Array(runs)) => runs.clone(),
            _ => {
                return Err(self.shape(
                    crate::Verb::Get,
                    &path,
                    "expected an object with a 'workflow_runs' array".to_string(),
                ));
            }
        };
        for run in runs.iter().take(MAX_RUNS_SCANNED) {
            let Some(run_id) = run.get("id").and_then(Value::as_u64) else {
                return Err(self.shape(
                    crate::Verb::Get,
                    &path,
                    "a workflow run without a numeric 'id'".to_string(),
                ));
            };
            // The filters are GitHub's; checked again so that a run that is
            // not what was asked for can never become the baseline.
            let field = |k: &str| run.get(k).and_then(Value::as_str).unwrap_or_default();
            if Some(run_id) == q.exclude_run
                || field("conclusion") != "success"
                || field("head_branch") != q.branch
                || field("event") != q.event
            {
                continue;
            }
            let artifacts = self.get_all(
                &format!("/repos/{}/actions/runs/{run_id}/artifacts", q.repo),
                &[("name", q.artifact)],
                Some("artifacts"),
            )?;
            let found = artifacts.iter().find(|a| {
                a.get("name").and_then(Value::as_str) == Some(q.artifact)
                    && a.get("expired").and_then(Value::as_bool) != Some(true)
            });
            if let Some(a) = found {
                let Some(artifact_id) = a.get("id").and_then(Value::as_u64) else {
                    return Err(self.shape(
                        crate::Verb::Get,
                        &format!("/repos/{}/actions/runs/{run_id}/artifacts", q.repo),
                        "an artifact without a numeric 'id'".to_string(),
                    ));
                };
                return Ok(Some(RunArtifact {
                    run_id,
                    head_sha: field("head_sha").to_string(),
                    created_at: field("created_at").to_string(),
                    html_url: field("html_url").to_string(),
                    artifact_id,
                    artifact_name: q.artifact.to_string(),
                }));
            }
        }
        Ok(None)
    }

    /// The artifact's zip: the redirect from the API, then the signed URL
    /// (at most [`MAX_ARTIFACT_ZIP_BYTES`]).
    pub fn download_artifact_zip(&self, repo: &str, artifact_id: u64) -> Result<Vec<u8>> {
        let endpoint = format!("/repos/{repo}/actions/artifacts/{artifact_id}/zip");
        let location = self.redirect_location(&endpoint)?;
        let shown = format!("{endpoint} (its redirect target)");
        fetch::get_bytes(&Get {
            url: &location,
            accept: "application/zip, application/octet-stream",
            user_agent: concat!("sweepkit/", env!("CARGO_PKG_VERSION")),
            timeout: DOWNLOAD_TIMEOUT,
            max_body: MAX_ARTIFACT_ZIP_BYTES,
            retry: self.retry.clone(),
        })
        .map_err(|e| match e {
            GetError::Status {
                status,
                excerpt,
                attempts,
            } => Error::Http {
                method: "GET".into(),
                endpoint: shown,
                status,
                message: excerpt,
                attempts,
            },
            GetError::Transport { message, attempts } => Error::Transport {
                method: "GET".into(),
                endpoint: shown,
                message,
                attempts,
            },
            GetError::TooLarge { .. } => Error::Shape {
                method: "GET".into(),
                endpoint: shown,
                detail: format!(
                    "the artifact zip is larger than {} MiB (MAX_ARTIFACT_ZIP_BYTES); refused",
                    MAX_ARTIFACT_ZIP_BYTES / (1024 * 1024)
                ),
            },
            GetError::Config(message) => Error::Config(format!("{shown}: {message}")),
        })
    }
}

/// Why a zip could not be extracted.
#[derive(Debug, thiserror::Error)]
pub enum UnzipError {
    #[error("not a readable zip archive: {0}")]
    Archive(String),
    #[error("entry '{name}': {cause}")]
    Entry { name: String, cause: String },
    #[error("more than {MAX_ZIP_ENTRIES} entries (MAX_ZIP_ENTRIES); refused")]
    TooManyEntries,
    #[error(
        "more than {} MiB uncompressed (MAX_UNZIPPED_BYTES); refused",
        MAX_UNZIPPED_BYTES / (1024 * 1024)
    )]
    TooLarge,
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Extracts the files of `zip` under `dest` (an existing directory) and
/// returns their paths relative to it, in archive order. An entry whose
/// name would leave `dest` (absolute, `..`) is refused, and so is an
/// archive beyond [`MAX_ZIP_ENTRIES`] or [`MAX_UNZIPPED_BYTES`] (counted
/// on the bytes actually inflated, not on what the headers declare).
pub fn unzip(zip: &[u8], dest: &Path) -> Result<Vec<PathBuf>, UnzipError> {
    let mut archive =
        zip::ZipArchive::new(Cursor::new(zip)).map_err(|e| UnzipError::Archive(e.to_string()))?;
    if archive.len() > MAX_ZIP_ENTRIES {
        return Err(UnzipError::TooManyEntries);
    }
    let mut total: u64 = 0;
    let mut out = Vec::new();
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| UnzipError::Archive(e.to_string()))?;
        let name = entry
            .name()
            .map_err(|e| UnzipError::Archive(format!("entry {i}: {e}")))?
            .into_owned();
        if entry.is_dir() {
            continue;
        }
        let Some(rel) = entry.enclosed_name() else {
            return Err(UnzipError::Entry {
                name,
                cause: "its path leaves the extraction directory".into(),
            });
        };
        let remaining = MAX_UNZIPPED_BYTES - total;
        if entry.size() > remaining {
            return Err(UnzipError::TooLarge);
        }
        let mut bytes = Vec::new();
        (&mut entry)
            .take(remaining + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| UnzipError::Entry {
                name: name.clone(),
                cause: e.to_string(),
            })?;
        total += bytes.len() as u64;
        if total > MAX_UNZIPPED_BYTES {
            return Err(UnzipError::TooLarge);
        }
        let path = dest.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| UnzipError::Io {
                path: parent.display().to_string(),
                source,
            })?;
        }
        std::fs::write(&path, &bytes).map_err(|source| UnzipError::Io {
            path: path.display().to_string(),
            source,
        })?;
        out.push(rel);
    }
    Ok(out)
}
