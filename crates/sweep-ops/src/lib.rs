//! Library behind the `sweep-ops` binary: the benchmark repository's GitHub
//! entry points other than the PR/push sweep, each a plain function over
//! [`github_client::Client`] that decides, acts and reports, fail closed.
//!
//! * [`fork`]: a maintainer's sweep label on a fork PR authorises that
//!   exact head SHA and dispatches the sweep with secrets (`authorize-fork`).
//! * [`merge`]: the maintainer's merge helper that keeps the PR's finished
//!   sweep for the push to main (`merge`).
//! * [`ingest`]: the ingest dispatch of a push-to-main sweep (`dispatch-ingest`).
//! * [`recover`]: re-dispatching the ingest of a reused run (`recover-ingest`).
//! * [`digest`]: the offline self-hosted runner digest (`runner-digest`).
//! * [`reminder`]: the once-per-PR reminder comment (`pr-reminder`).
//!
//! The `/stage-results` command lives in `reuse-sweep` (it validates a
//! finished sweep's artifacts with that crate's library).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use github_client::Client;
use serde_json::Value;

pub mod digest;
pub mod fork;
pub mod ingest;
pub mod merge;
pub mod recover;
pub mod reminder;

/// Repository permissions that may authorise privileged work (the
/// reference's rule: the legacy `permission` field of
/// `GET /repos/{repo}/collaborators/{login}/permission`).
pub const TRUSTED_PERMISSIONS: [&str; 3] = ["admin", "maintain", "write"];

/// The labels that start a sweep; a PR carries at most one.
pub const PRIMARY_SWEEP_LABELS: [&str; 5] = [
    "sweep-enabled",
    "full-sweep-enabled",
    "non-canary-full-sweep-enabled",
    "full-sweep-fail-fast",
    "full-sweep-fail-fast-no-canary",
];

/// Most API reads one wait may make, whatever the timeout and interval:
/// a zero interval with a long timeout must not hammer the API.
pub const MAX_POLLS: u32 = 1000;

/// Why a command did not do its job.
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    /// The rules said no (exit 1): unauthorised actor, moved head, a run
    /// that is not `success`, missing artifacts, a failed check.
    #[error("{0}")]
    Refused(String),
    /// GitHub could not answer (exit 2).
    #[error(transparent)]
    GitHub(#[from] github_client::Error),
    /// The command could not work: unreadable event file, a wait that timed
    /// out, an answer without a needed field (exit 2).
    #[error("{0}")]
    Failed(String),
}

/// Refused is a "no" (exit 1); the rest could not do the job (exit 2).
impl sweep_cli::Classify for OpsError {
    fn kind(&self) -> sweep_cli::Kind {
        match self {
            OpsError::Refused(_) => sweep_cli::Kind::Rejected,
            _ => sweep_cli::Kind::Failed,
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = OpsError> = std::result::Result<T, E>;

pub(crate) fn refused<T>(msg: impl Into<String>) -> Result<T> {
    Err(OpsError::Refused(msg.into()))
}

/// A bounded wait: probe, then sleep `interval`, until the probe answers,
/// `timeout` has passed or [`MAX_POLLS`] probes were made. Tests use a zero
/// interval and answer sequences of the fake server, never the clock.
#[derive(Debug, Clone, Copy)]
pub struct Poll {
    pub timeout: Duration,
    pub interval: Duration,
}

impl Poll {
    /// The first `Some` of `probe`; `OpsError::Failed` naming `what` on timeout.
    pub fn until<T>(&self, what: &str, mut probe: impl FnMut() -> Result<Option<T>>) -> Result<T> {
        let start = Instant::now();
        for n in 1..=MAX_POLLS {
            if let Some(v) = probe()? {
                return Ok(v);
            }
            if start.elapsed() >= self.timeout {
                break;
            }
            // One line per poll, so a long wait is never silent (#26 item 8).
            eprintln!(
                "waiting for {what}: poll {n}, {} s of {} s; next in {} s",
                start.elapsed().as_secs(),
                self.timeout.as_secs(),
                self.interval.as_secs()
            );
            std::thread::sleep(self.interval);
        }
        Err(OpsError::Failed(format!(
            "timed out after {} s waiting for {what}",
            start.elapsed().as_secs()
        )))
    }
}

/// The `permission` of `login` on `repo`; `none` for a user who is not a
/// collaborator (GitHub's 404).
pub fn permission(client: &Client, repo: &str, login: &str) -> Result<String> {
    Ok(client
        .collaborator_access(repo, login)?
        .and_then(|a| a.permission)
        .unwrap_or_else(|| "none".to_string()))
}

/// Refuses unless `login` has one of [`TRUSTED_PERMISSIONS`] on `repo`.
pub fn require_write(client: &Client, repo: &str, login: &str, what: &str) -> Result<String> {
    let p = permission(client, repo, login)?;
    if !TRUSTED_PERMISSIONS.contains(&p.as_str()) {
        return refused(format!(
            "@{login} has {p} permission on {repo}; write, maintain or admin permission is required to {what}"
        ));
    }
    Ok(p)
}

/// The label names of a pull request or issue object.
pub fn label_names(item: &Value) -> Vec<String> {
    item["labels"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|l| l.as_str().or_else(|| l["name"].as_str()))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The string at JSON pointer `ptr`, if it is a non-empty string.
pub fn str_at<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The string at `ptr`, or `Failed` naming what answered without it.
pub(crate) fn need_str<'a>(v: &'a Value, ptr: &str, what: &str) -> Result<&'a str> {
    str_at(v, ptr).ok_or_else(|| OpsError::Failed(format!("{what} has no '{ptr}'")))
}

/// Names of the unexpired artifacts of run `id`.
pub fn artifact_names(client: &Client, repo: &str, id: u64) -> Result<BTreeSet<String>> {
    let items = client.get_all(
        &format!("/repos/{repo}/actions/runs/{id}/artifacts"),
        &[],
        Some("artifacts"),
    )?;
    Ok(items
        .iter()
        .filter(|a| a["expired"].as_bool() != Some(true))
        .filter_map(|a| a["name"].as_str().map(str::to_string))
        .collect())
}

/// SHAs of the commits of pull request `pr`.
pub fn pull_commit_shas(client: &Client, repo: &str, pr: u64) -> Result<BTreeSet<String>> {
    let items = client.get_all(&format!("/repos/{repo}/pulls/{pr}/commits"), &[], None)?;
    Ok(items
        .iter()
        .filter_map(|c| c["sha"].as_str().map(str::to_string))
        .collect())
}

/// Posts `body` as a comment on issue/PR `number`.
pub fn comment(client: &Client, repo: &str, number: u64, body: &str) -> Result<Value> {
    Ok(client.post(
        &format!("/repos/{repo}/issues/{number}/comments"),
        &serde_json::json!({ "body": body }),
    )?)
}

/// `status/conclusion` of a run or check, for messages.
pub(crate) fn state_of(v: &Value) -> String {
    format!(
        "{}/{}",
        v["status"].as_str().unwrap_or("null"),
        v["conclusion"].as_str().unwrap_or("null")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_with_no_interval_stops_after_max_polls() {
        let poll = Poll {
            timeout: Duration::from_secs(3600),
            interval: Duration::ZERO,
        };
        let mut probes = 0;
        let r: Result<()> = poll.until("nothing", || {
            probes += 1;
            Ok(None)
        });
        assert!(matches!(r, Err(OpsError::Failed(ref m)) if m.contains("waiting for nothing")));
        assert_eq!(probes, MAX_POLLS);
    }

    #[test]
    fn a_zero_timeout_probes_once() {
        let poll = Poll {
            timeout: Duration::ZERO,
            interval: Duration::ZERO,
        };
        let mut probes = 0;
        let r: Result<()> = poll.until("x", || {
            probes += 1;
            Ok(None)
        });
        assert!(r.is_err());
        assert_eq!(probes, 1);
        assert_eq!(poll.until("y", || Ok(Some(5))).ok(), Some(5));
    }
}
