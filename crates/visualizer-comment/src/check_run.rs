//! The verdict as a check run on the pull request's head (issue #26 item 5):
//! a completed check named "sweep verdict" whose conclusion is the verdict
//! ([`Conclusion`]: `failure` when a point regressed, an eval is below its
//! threshold or legs ran and no result arrived, `neutral` when nothing was
//! meant to run or no point had a baseline, else `success`), so a
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

use crate::ack::Acknowledgement;
use crate::error::{BodyError, check_url};
use crate::verdict::{self, Conclusion, Scheduled};

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
///
/// `scheduled` is what success-rate counted ([`verdict::scheduled`]): with
/// no result row, the check is `failure` unless it counted no job at all
/// (then nothing was meant to run: `neutral`).
pub fn from_report(
    compare: &Value,
    scheduled: Scheduled,
    name: &str,
    head_sha: &str,
    run_url: Option<&str>,
) -> Result<CheckRun, BodyError> {
    from_report_acknowledged(compare, scheduled, name, head_sha, run_url, None)
}

/// [`from_report`] with a writer's acknowledgement of the regression
/// ([`crate::ack`]): a failure that is regressions alone turns `neutral`,
/// its title and summary naming who acknowledged it and why. An
/// acknowledgement of another commit than `head_sha` is not applied.
pub fn from_report_acknowledged(
    compare: &Value,
    scheduled: Scheduled,
    name: &str,
    head_sha: &str,
    run_url: Option<&str>,
    ack: Option<&Acknowledgement>,
) -> Result<CheckRun, BodyError> {
    check_sha(head_sha)?;
    if let Some(url) = run_url {
        check_url("run URL", url)?;
    }
    let mut h = verdict::head(compare, scheduled)?;
    if let Some(a) = ack.filter(|a| a.is_for(head_sha)) {
        h.acknowledge(&a.login, &a.reason, a.url.as_deref());
    }
    let mut lines = vec![format!("### {} {}", h.icon, h.line)];
    if h.acknowledged.is_some() {
        lines.push(
            "The regression is acknowledged by a writer on this commit, so the check is neutral; a later push voids the acknowledgement.".into(),
        );
    }
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
    use sweep_model::compare_summary::{BaselineRef, CompareSummary, Counts, Eval, Verdict};

    fn report(verdict: Verdict, new_rows: u64, matched: u64, evals: Vec<Eval>) -> Value {
        let s = CompareSummary {
            verdict,
            baseline: BaselineRef {
                label: "main @ 2026-11-30".into(),
                source: "agg".into(),
                ..BaselineRef::default()
            },
            line: "0 points regressed (0 metrics) · 0 improved · 5 unchanged · 0 inconclusive"
                .into(),
            counts: Counts {
                new_rows,
                matched,
                evals: evals.len() as u64,
                evals_failed: evals.iter().filter(|e| e.pass == Some(false)).count() as u64,
                ..Counts::default()
            },
            regressions: Vec::new(),
            top_regressions: Vec::new(),
            impacts: Vec::new(),
            evals,
        };
        json!({ "summary": serde_json::to_value(s).unwrap_or_default() })
    }

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn conclusion(v: &Value, scheduled: Scheduled) -> Option<Conclusion> {
        from_report(v, scheduled, DEFAULT_NAME, SHA, None)
            .map(|r| r.conclusion)
            .ok()
    }

    #[test]
    fn the_conclusion_follows_the_verdict() {
        let ran = Scheduled::Jobs(7);
        let c = |v: Value| conclusion(&v, ran);
        assert_eq!(
            c(report(Verdict::Regressions, 7, 7, vec![])),
            Some(Conclusion::Failure)
        );
        assert_eq!(
            c(report(Verdict::NoRegressions, 7, 7, vec![])),
            Some(Conclusion::Success)
        );
        assert_eq!(
            c(report(Verdict::NoRegressions, 7, 0, vec![])),
            Some(Conclusion::Neutral),
            "results without a baseline: nothing compared"
        );
        let failed_eval = vec![Eval {
            configuration: "c".into(),
            point: "p".into(),
            task: "gsm8k".into(),
            score: "80 %".into(),
            threshold: Some("90 %".into()),
            pass: Some(false),
        }];
        assert_eq!(
            c(report(Verdict::EvalsFailed, 7, 7, failed_eval)),
            Some(Conclusion::Failure),
            "an eval below threshold fails the check as it makes the heading ❌"
        );
    }

    /// Issue #34 item 3: legs ran, no result arrived, nothing compared:
    /// `failure`, not the `neutral` a required check lets pass; `neutral`
    /// only when success-rate counted no job at all.
    #[test]
    fn no_results_after_legs_ran_fail_and_nothing_scheduled_is_neutral() {
        let empty = report(Verdict::NoResults, 0, 0, vec![]);
        assert_eq!(
            conclusion(&empty, Scheduled::Jobs(126)),
            Some(Conclusion::Failure)
        );
        assert_eq!(
            conclusion(&empty, Scheduled::Unknown),
            Some(Conclusion::Failure),
            "not knowing whether legs ran fails closed"
        );
        assert_eq!(
            conclusion(&empty, Scheduled::Jobs(0)),
            Some(Conclusion::Neutral)
        );
    }

    /// Issue #34 low item: a verdict string this version does not know is
    /// an error (exit 2), never a green check.
    #[test]
    fn an_unknown_verdict_fails_closed() {
        let mut r = report(Verdict::NoRegressions, 7, 7, vec![]);
        r["summary"]["verdict"] = json!("no_regression");
        let e = from_report(&r, Scheduled::Jobs(7), DEFAULT_NAME, SHA, None);
        assert!(
            matches!(&e, Err(BodyError::Input { cause, .. }) if cause.contains("no_regression")),
            "{e:?}"
        );
    }

    #[test]
    fn a_short_or_non_hex_sha_is_refused() {
        let r = report(Verdict::NoRegressions, 7, 7, vec![]);
        let s = Scheduled::Jobs(7);
        assert!(from_report(&r, s, DEFAULT_NAME, "abc123", None).is_err());
        assert!(from_report(&r, s, DEFAULT_NAME, &"g".repeat(40), None).is_err());
    }
}
