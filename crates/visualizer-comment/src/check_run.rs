//! The verdict as a check run on the pull request's head (issue #26 item 5):
//! a completed check named "sweep verdict" whose conclusion is the verdict
//! ([`Conclusion`]: `failure` when a point regressed or an eval is below its
//! threshold, `neutral` when nothing was compared, else `success`), so a
//! failing verdict shows in the PR's checks and GitHub notifies it. Its
//! title is the comment heading's one-line counts, its summary a few
//! markdown lines; the sticky comment stays the one comment.
//!
//! Creating a check run needs `checks: write`. A token without it (a fork
//! pull request's, or a caller that did not grant it) gets a 403 that is not
//! a rate limit: [`CheckOutcome::NotPermitted`], which the command reports as
//! a warning, not a failure.

use github_client::{Client, Error, encode};
use serde_json::{Value, json};

use crate::error::{BodyError, check_url};
use crate::verdict::{self, Conclusion};

/// The check's default name.
pub const DEFAULT_NAME: &str = "sweep verdict";

/// GitHub's limit on a check run's `output.summary`, in characters; the
/// summary lists at most [`verdict::HEAD_ITEMS`] items of each kind, so it
/// stays far below.
pub const SUMMARY_LIMIT: usize = 65_535;

/// A check run to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    pub name: String,
    /// The commit the check belongs to (the PR's head).
    pub head_sha: String,
    pub conclusion: Conclusion,
    /// The heading's one-line counts (plain text).
    pub title: String,
    /// A few lines of markdown: the heading, the regressed points, the
    /// evals below threshold, the run.
    pub summary: String,
    /// The run the check links to ("Details").
    pub details_url: Option<String>,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckOutcome {
    Created {
        id: u64,
        url: String,
    },
    /// The token may not create check runs here; `reason` quotes GitHub.
    NotPermitted {
        reason: String,
    },
}

/// A commit id as the Checks API takes it: 40 hex digits (64 in a SHA-256
/// repository).
fn check_sha(sha: &str) -> Result<(), BodyError> {
    if matches!(sha.len(), 40 | 64) && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(BodyError::Input {
            what: "head SHA".into(),
            cause: format!("{sha:?} is not a full commit id (40 hex digits)"),
        })
    }
}

/// One line of plain text: a check run's title is not markdown.
fn plain(s: &str) -> String {
    s.split(char::is_control)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The check run for compare-results' JSON report `compare` on `head_sha`.
/// `run_url` is linked in the summary and as the check's details.
pub fn from_report(
    compare: &Value,
    name: &str,
    head_sha: &str,
    run_url: Option<&str>,
) -> Result<CheckRun, BodyError> {
    check_sha(head_sha)?;
    if let Some(url) = run_url {
        check_url("run URL", url)?;
    }
    let h = verdict::head(compare)?;
    let mut lines = vec![format!("### {} {}", h.icon, h.line)];
    if !h.regressions.is_empty() {
        lines.push(format!(
            "**Regressed:** {}{}",
            h.regressions.join("; "),
            verdict::more(h.regressions_total, "")
        ));
    }
    if let Some(other) = &h.other_hardware {
        lines.push(format!("**Other hardware:** {other}"));
    }
    if !h.failed_evals.is_empty() {
        lines.push(format!(
            "**Evals below threshold:** {}{}",
            h.failed_evals.join("; "),
            verdict::more(h.failed_evals_total, "")
        ));
    } else if let Some(evals) = &h.evals_line {
        lines.push(format!("**Evals:** {evals}"));
    }
    let where_ = "The PR comment has the details; the run's `compare-report` artifact has the full report and the charts.";
    match run_url {
        Some(url) => lines.push(format!("{where_} Run: {url}")),
        None => lines.push(where_.to_string()),
    }
    Ok(CheckRun {
        name: plain(name),
        head_sha: head_sha.to_string(),
        conclusion: h.conclusion,
        title: plain(&h.title),
        summary: lines.join("\n\n"),
        details_url: run_url.map(str::to_string),
    })
}

/// The request body of `POST /repos/{repo}/check-runs`.
pub fn request_body(run: &CheckRun) -> Value {
    let mut body = json!({
        "name": run.name,
        "head_sha": run.head_sha,
        "status": "completed",
        "conclusion": run.conclusion.as_str(),
        "output": {"title": run.title, "summary": run.summary},
    });
    if let Some(url) = &run.details_url {
        body["details_url"] = json!(url);
    }
    body
}

/// A refusal for lack of permission: 403 that is not a rate limit (those
/// are retried by the client and, when they last, are a failure).
fn not_permitted(e: &Error) -> bool {
    match e {
        Error::Http {
            status, message, ..
        } => *status == 403 && !message.to_ascii_lowercase().contains("rate limit"),
        _ => false,
    }
}

/// Creates the completed check run on `repo` (`owner/name`).
pub fn create(client: &Client, repo: &str, run: &CheckRun) -> Result<CheckOutcome, Error> {
    let repo_path = repo.split('/').map(encode).collect::<Vec<_>>().join("/");
    match client.post(
        &format!("/repos/{repo_path}/check-runs"),
        &request_body(run),
    ) {
        Ok(v) => Ok(CheckOutcome::Created {
            id: v.get("id").and_then(Value::as_u64).unwrap_or_default(),
            url: v
                .get("html_url")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        }),
        Err(e) if not_permitted(&e) => Ok(CheckOutcome::NotPermitted {
            reason: e.to_string(),
        }),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(verdict: &str, matched: u64, evals: Value) -> Value {
        json!({"summary": {
            "verdict": verdict, "baseline": "main @ 2026-11-30",
            "line": format!("{} points regressed (2 metrics) · 0 improved · 5 unchanged · 0 inconclusive", u64::from(verdict == "regressions")),
            "counts": {"matched": matched, "inconclusive": 0},
            "evals": evals,
        }})
    }

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn the_conclusion_follows_the_verdict() {
        let c = |v: Value| from_report(&v, DEFAULT_NAME, SHA, None).map(|r| r.conclusion);
        assert_eq!(
            c(report("regressions", 7, json!([]))).ok(),
            Some(Conclusion::Failure)
        );
        assert_eq!(
            c(report("no_regressions", 7, json!([]))).ok(),
            Some(Conclusion::Success)
        );
        assert_eq!(
            c(report("no_regressions", 0, json!([]))).ok(),
            Some(Conclusion::Neutral)
        );
        let failed_eval = json!([{"configuration": "c", "point": "p", "task": "gsm8k",
            "score": "80%", "threshold": "90 %", "pass": false}]);
        assert_eq!(
            c(report("no_regressions", 7, failed_eval)).ok(),
            Some(Conclusion::Failure),
            "an eval below threshold fails the check as it makes the heading ❌"
        );
    }

    #[test]
    fn a_short_or_non_hex_sha_is_refused() {
        let r = report("no_regressions", 7, json!([]));
        assert!(from_report(&r, DEFAULT_NAME, "abc123", None).is_err());
        assert!(from_report(&r, DEFAULT_NAME, &"g".repeat(40), None).is_err());
    }
}
