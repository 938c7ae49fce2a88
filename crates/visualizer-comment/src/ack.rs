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
    let mut reviewer = Reviewer {
        client,
        repo,
        repo_path: &repo_path,
        pr,
        head_sha,
        command_text,
        pull: None,
        permissions: Vec::new(),
    };
    let mut out = Review::default();
    for c in comments.iter().rev() {
        match reviewer.judge(c)? {
            Judgement::Skip => continue,
            Judgement::Refused(why) => out.refused.push(why),
            Judgement::Holds(ack) => {
                out.acknowledgement = Some(ack);
                break;
            }
        }
    }
    Ok(out)
}

/// What one comment says, judged by [`Reviewer::judge`].
enum Judgement {
    /// Not a command (or not one to report).
    Skip,
    /// A command that does not count, with its reason.
    Refused(String),
    /// An acknowledgement that holds.
    Holds(Acknowledgement),
}

/// Owns the judging of one PR's comments, newest first, with what the
/// lookups so far learnt: the PR (fetched once, when first needed) and
/// each commenter's permission.
struct Reviewer<'a> {
    client: &'a Client,
    repo: &'a str,
    repo_path: &'a str,
    pr: u64,
    head_sha: &'a str,
    command_text: &'a str,
    pull: Option<Value>,
    /// `(login, may write, role and permission for messages)`.
    permissions: Vec<(String, bool, String)>,
}

impl Reviewer<'_> {
    /// Judges comment `c` by the module's rules, cheapest first.
    fn judge(&mut self, c: &Value) -> Result<Judgement, Error> {
        let command_text = self.command_text;
        let body = text(c, "body");
        // A plain substring test (no parsing) keeps the permission lookups
        // to the comments that mention the command at all.
        if !command::within_limit(body) || !body.contains(command_text) {
            return Ok(Judgement::Skip);
        }
        let login = c
            .pointer("/user/login")
            .and_then(Value::as_str)
            .unwrap_or("");
        if login.is_empty() || comment_by_bot(c) {
            return Ok(Judgement::Skip);
        }
        let who = format!("{command_text} by @{login}");
        let (ok, role) = self.permission(login)?;
        if !ok {
            return Ok(Judgement::Refused(format!(
                "{who} does not count: @{login} has no write, maintain or admin permission on {} ({role})",
                self.repo
            )));
        }
        let reason = match command::last_reason_command(body, command_text) {
            None => return Ok(Judgement::Skip),
            Some(command::ReasonCommand::Missing) => {
                return Ok(Judgement::Refused(format!(
                    "{who} does not count: it gives no reason (`{command_text} <reason>`)"
                )));
            }
            Some(command::ReasonCommand::TooLong(n)) => {
                return Ok(Judgement::Refused(format!(
                    "{who} does not count: its reason has {n} characters, more than {}",
                    command::MAX_REASON_CHARS
                )));
            }
            Some(command::ReasonCommand::Reason(r)) => r,
        };
        if comment_edited(c) {
            return Ok(Judgement::Refused(format!(
                "{who} does not count: it was edited after it was written; write a new comment"
            )));
        }
        let head = match self.written_on_head(c, &who)? {
            Ok(head) => head,
            Err(why) => return Ok(Judgement::Refused(why)),
        };
        Ok(Judgement::Holds(Acknowledgement {
            login: login.to_string(),
            reason,
            head,
            url: c
                .get("html_url")
                .and_then(Value::as_str)
                .filter(|u| !u.is_empty())
                .map(str::to_string),
            created_at: text(c, "created_at").to_string(),
        }))
    }

    /// Whether `login` may write, and its role and permission for the
    /// refusal; asked of the API once per login.
    fn permission(&mut self, login: &str) -> Result<(bool, String), Error> {
        if let Some((_, ok, role)) = self.permissions.iter().find(|p| p.0 == login) {
            return Ok((*ok, role.clone()));
        }
        let access = self.client.collaborator_access(self.repo_path, login)?;
        let ok = may_write(access.as_ref());
        let role = match access {
            Some(a) => format!(
                "role '{}', permission '{}'",
                a.role_name.unwrap_or_default(),
                a.permission.unwrap_or_default()
            ),
            None => "not a collaborator".into(),
        };
        self.permissions.push((login.to_string(), ok, role.clone()));
        Ok((ok, role))
    }

    /// The PR's head when comment `c` was written, `Err` with the refusal
    /// (`who` names the command) when it cannot be shown or is not the
    /// commit of the regression.
    fn written_on_head(&mut self, c: &Value, who: &str) -> Result<Result<String, String>, Error> {
        let created = text(c, "created_at");
        let pull = match &self.pull {
            Some(p) => p,
            None => self.pull.insert(
                self.client
                    .get(&format!("/repos/{}/pulls/{}", self.repo_path, self.pr), &[])?,
            ),
        };
        let head = match head_when_written(self.client, self.repo, pull, created)? {
            Ok(head) => head,
            Err(why) => {
                return Ok(Err(format!(
                    "{who} does not count: the commit it was written on cannot be shown ({why})"
                )));
            }
        };
        if !head.eq_ignore_ascii_case(self.head_sha) {
            return Ok(Err(format!(
                "{who} does not count: it was written on {} and the regression is on {}; a later push voids an acknowledgement, acknowledge again",
                short(&head),
                short(self.head_sha)
            )));
        }
        Ok(Ok(head))
    }
}
