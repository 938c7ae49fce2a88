//! A writer's acknowledgement of a regression (issue #37 item 7): a PR
//! comment `/acknowledge-regression <reason>` turns the verdict's failure
//! into a neutral gate that names who acknowledged it and why, in the
//! comment's heading and the "sweep verdict" check run.
//!
//! The rules are the trust rules of `/reuse-sweep-run`
//! ([`github_client::trust`]), read the same way:
//! * who: the comment's author has write, maintain or admin permission
//!   (the collaborator permission endpoint, [`trust::may_write`]), checked
//!   before the comment is parsed; a bot's comment (the tool's own sticky
//!   comment quotes the command) never counts;
//! * what: the comment as it was written: an edited comment does not count
//!   ([`trust::comment_edited`]); the command is one line of its own with a
//!   reason of at most [`command::MAX_REASON_CHARS`] characters
//!   ([`command::last_reason_command`]);
//! * for which commit: the PR's head when the comment was written
//!   ([`trust::head_when_written`], server timestamps of the head branch's
//!   pushes). It acknowledges that commit's regression only: a later push
//!   voids it. A PR whose head is in a fork cannot show that, so there it
//!   is refused (fail closed).
//!
//! The newest comment that passes every rule wins; a newer one that fails
//! is reported with its reason (the caller logs it), so a reader or a fork's
//! author who types the command learns why it did nothing.

use github_client::trust::{comment_by_bot, comment_edited, head_when_written, may_write};
use github_client::{Client, Error, command, encode};
use serde_json::Value;

/// The comment command.
pub const DEFAULT_COMMAND: &str = "/acknowledge-regression";

/// An acknowledgement that holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acknowledgement {
    /// Who wrote it (a writer of the repository).
    pub login: String,
    /// Why, as written (one line, unescaped).
    pub reason: String,
    /// The commit it acknowledges (the PR's head when it was written).
    pub head: String,
    /// The comment's page.
    pub url: Option<String>,
    pub created_at: String,
}

impl Acknowledgement {
    /// Whether it acknowledges `sha` (a full or abbreviated commit id of at
    /// least 7 hex digits, compared without regard to case).
    pub fn is_for(&self, sha: &str) -> bool {
        let (a, b) = (self.head.to_ascii_lowercase(), sha.to_ascii_lowercase());
        b.len() >= 7 && !a.is_empty() && (a.starts_with(&b) || b.starts_with(&a))
    }
}

/// What the PR's comments say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Review {
    pub acknowledgement: Option<Acknowledgement>,
    /// Commands newer than the acknowledgement (or all, without one) that
    /// do not count, each with its reason, newest first.
    pub refused: Vec<String>,
}

fn short(sha: &str) -> String {
    sha.chars().take(7).collect()
}

fn text<'a>(c: &'a Value, key: &str) -> &'a str {
    c.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Reads the acknowledgements of PR `pr` of `repo` (`owner/name`) for the
/// regression found on `head_sha` (the commit the sweep compared).
/// GitHub failing is `Err`: the caller keeps the failure (fail closed).
pub fn review(
    client: &Client,
    repo: &str,
    pr: u64,
    head_sha: &str,
    command_text: &str,
) -> Result<Review, Error> {
    let repo_path = repo.split('/').map(encode).collect::<Vec<_>>().join("/");
    let mut comments = client.get_all(
        &format!("/repos/{repo_path}/issues/{pr}/comments"),
        &[],
        None,
    )?;
    // Stable sort by the timestamp string: equal stamps keep API order.
    comments.sort_by(|a, b| text(a, "created_at").cmp(text(b, "created_at")));
    let mut out = Review::default();
    let mut pull: Option<Value> = None;
    let mut permissions: Vec<(String, bool, String)> = Vec::new();
    for c in comments.iter().rev() {
        let body = text(c, "body");
        // A plain substring test (no parsing) keeps the permission lookups
        // to the comments that mention the command at all.
        if !command::within_limit(body) || !body.contains(command_text) {
            continue;
        }
        let login = c
            .pointer("/user/login")
            .and_then(Value::as_str)
            .unwrap_or("");
        if login.is_empty() || comment_by_bot(c) {
            continue;
        }
        let who = format!("{command_text} by @{login}");
        let (ok, role) = match permissions.iter().find(|p| p.0 == login) {
            Some((_, ok, role)) => (*ok, role.clone()),
            None => {
                let access = client.collaborator_access(&repo_path, login)?;
                let ok = may_write(access.as_ref());
                let role = match access {
                    Some(a) => format!(
                        "role '{}', permission '{}'",
                        a.role_name.unwrap_or_default(),
                        a.permission.unwrap_or_default()
                    ),
                    None => "not a collaborator".into(),
                };
                permissions.push((login.to_string(), ok, role.clone()));
                (ok, role)
            }
        };
        if !ok {
            out.refused.push(format!(
                "{who} does not count: @{login} has no write, maintain or admin permission on {repo} ({role})"
            ));
            continue;
        }
        let reason = match command::last_reason_command(body, command_text) {
            None => continue,
            Some(command::ReasonCommand::Missing) => {
                out.refused.push(format!(
                    "{who} does not count: it gives no reason (`{command_text} <reason>`)"
                ));
                continue;
            }
            Some(command::ReasonCommand::TooLong(n)) => {
                out.refused.push(format!(
                    "{who} does not count: its reason has {n} characters, more than {}",
                    command::MAX_REASON_CHARS
                ));
                continue;
            }
            Some(command::ReasonCommand::Reason(r)) => r,
        };
        if comment_edited(c) {
            out.refused.push(format!(
                "{who} does not count: it was edited after it was written; write a new comment"
            ));
            continue;
        }
        let created = text(c, "created_at");
        let pull = match &pull {
            Some(p) => p,
            None => pull.insert(client.get(&format!("/repos/{repo_path}/pulls/{pr}"), &[])?),
        };
        let head = match head_when_written(client, repo, pull, created)? {
            Ok(head) => head,
            Err(why) => {
                out.refused.push(format!(
                    "{who} does not count: the commit it was written on cannot be shown ({why})"
                ));
                continue;
            }
        };
        if !head.eq_ignore_ascii_case(head_sha) {
            out.refused.push(format!(
                "{who} does not count: it was written on {} and the regression is on {}; a later push voids an acknowledgement, acknowledge again",
                short(&head),
                short(head_sha)
            ));
            continue;
        }
        out.acknowledgement = Some(Acknowledgement {
            login: login.to_string(),
            reason,
            head,
            url: c
                .get("html_url")
                .and_then(Value::as_str)
                .filter(|u| !u.is_empty())
                .map(str::to_string),
            created_at: created.to_string(),
        });
        break;
    }
    Ok(out)
}
