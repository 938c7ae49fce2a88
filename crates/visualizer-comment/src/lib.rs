//! Library behind the `visualizer-comment` binary: one sticky pull-request
//! comment with the verdict, the unofficial-run visualizer links (the
//! reference's two lines, same URLs), the runs, success rates, evals and
//! extra markdown sections; the body is built by [`body`].
//!
//! Sticky: the comment starts with a hidden marker line. The PR's comments
//! are listed (every page) and the first one that starts with the marker
//! and was written by the token's own identity ([`token_login`]: `GET
//! /user` for a PAT; the configured author, default `github-actions[bot]`,
//! for Actions and App tokens, which may not call `/user`) is updated in
//! place; a comment is created only when there is none. A create that may
//! have been applied (5xx or a broken connection after sending) is never
//! repeated blindly: the comments are listed again and an existing sticky
//! comment is updated. After a create the comments are listed again too: if
//! another run created a marked comment in between, the oldest one is kept
//! (updated with this body) and the one this run created is deleted.
//!
//! A token without write access (fork pull requests: 403 "Resource not
//! accessible by integration") is not a failure: the caller gets
//! [`Outcome::ReadOnly`] with GitHub's reason and writes the body to the job
//! summary instead. Any other refusal (401 bad token, 404 no such PR or
//! repository) is an error.

use github_client::{Client, Error, encode};
use serde_json::{Value, json};

pub mod ack;
pub mod body;
pub mod charts;
pub mod check_run;
pub mod error;
pub mod verdict;

/// GitHub's limit on a comment body, in characters.
pub const BODY_LIMIT: usize = 65_536;

/// Default visualizer site.
pub const DEFAULT_VISUALIZER_URL: &str = "https://inferencex.semianalysis.com";

/// Default marker (one per tool and purpose).
pub const DEFAULT_MARKER: &str = "sweepkit:visualizer-comment";

/// What to post.
#[derive(Debug, Clone)]
pub struct Post {
    /// `owner/name`.
    pub repo: String,
    pub pr_number: u64,
    /// Marker name; the body starts with `<!-- {marker} -->`.
    pub marker: String,
    /// Login whose marked comments may be updated.
    pub author: String,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Created {
        id: u64,
        url: String,
    },
    Updated {
        id: u64,
        url: String,
    },
    Unchanged {
        id: u64,
        url: String,
    },
    /// The token may not write here; `reason` quotes GitHub.
    ReadOnly {
        reason: String,
    },
}

/// The hidden first line.
pub fn marker_line(marker: &str) -> String {
    format!("<!-- {marker} -->")
}

/// The reference's two visualizer lines, joined by `\n`.
pub fn visualizer_lines(base_url: &str, run_id: &str) -> String {
    let base = base_url.trim_end_matches('/');
    format!(
        "see unofficial run visualizer at {base}/inference?unofficialRun={run_id}\n\
         see unofficial run visualizer at {base}/evaluation?unofficialRun={run_id}"
    )
}

/// GitHub's message for a token that may read but not write here (the
/// read-only token of a fork pull request).
const READ_ONLY_MESSAGE: &str = "Resource not accessible by integration";

fn is_read_only(e: &Error) -> bool {
    match e {
        Error::Http {
            status, message, ..
        } => *status == 403 && message.contains(READ_ONLY_MESSAGE),
        _ => false,
    }
}

/// The login of the token in use (`GET /user`), or `None` when the token
/// may not ask (Actions and GitHub App installation tokens answer 403, and
/// some GitHub Enterprise setups 404): the caller then uses the configured
/// author. Any other failure is an error.
pub fn token_login(client: &Client) -> Result<Option<String>, Error> {
    match client.get("/user", &[]) {
        Ok(v) => Ok(v
            .get("login")
            .and_then(Value::as_str)
            .filter(|l| !l.is_empty())
            .map(str::to_string)),
        Err(e) if matches!(e.status(), Some(403 | 404)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Marked comments by the author, oldest first (by `created_at`, then id).
fn marked(comments: &[Value], post: &Post) -> Vec<(u64, String)> {
    let line = marker_line(&post.marker);
    let mut out: Vec<(String, u64, String)> = comments
        .iter()
        .filter_map(|c| {
            let body = c.get("body").and_then(Value::as_str)?;
            let login = c.pointer("/user/login").and_then(Value::as_str)?;
            if !body.starts_with(&line) || login != post.author {
                return None;
            }
            let at = c
                .get("created_at")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            Some((at, c.get("id").and_then(Value::as_u64)?, url_of(c)))
        })
        .collect();
    out.sort();
    out.into_iter().map(|(_, id, url)| (id, url)).collect()
}

fn sticky(comments: &[Value], post: &Post) -> Option<(u64, String, String)> {
    let line = marker_line(&post.marker);
    comments.iter().find_map(|c| {
        let body = c.get("body").and_then(Value::as_str)?;
        let login = c.pointer("/user/login").and_then(Value::as_str)?;
        if !body.starts_with(&line) || login != post.author {
            return None;
        }
        Some((
            c.get("id").and_then(Value::as_u64)?,
            body.to_string(),
            url_of(c),
        ))
    })
}

fn url_of(c: &Value) -> String {
    c.get("html_url")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Creates or updates the sticky comment.
pub fn publish(client: &Client, post: &Post, body: &str) -> Result<Outcome, Error> {
    let repo = post
        .repo
        .split('/')
        .map(encode)
        .collect::<Vec<_>>()
        .join("/");
    let list_path = format!("/repos/{repo}/issues/{}/comments", post.pr_number);
    let wrap = |r: Result<Outcome, Error>| match r {
        Err(e) if is_read_only(&e) => Ok(Outcome::ReadOnly {
            reason: e.to_string(),
        }),
        other => other,
    };
    // At most two rounds: a create that may have been applied is followed
    // by one fresh lookup, never by a second blind create.
    for round in 0..2 {
        let comments = match client.get_all(&list_path, &[], None) {
            Ok(c) => c,
            Err(e) => return wrap(Err(e)),
        };
        if let Some((id, old, url)) = sticky(&comments, post) {
            if old == body {
                return Ok(Outcome::Unchanged { id, url });
            }
            let patched = client.patch(
                &format!("/repos/{repo}/issues/comments/{id}"),
                &json!({ "body": body }),
            );
            return wrap(patched.map(|c| Outcome::Updated {
                id,
                url: Some(url_of(&c)).filter(|u| !u.is_empty()).unwrap_or(url),
            }));
        }
        if round == 1 {
            break;
        }
        match client.post(&list_path, &json!({ "body": body })) {
            Ok(c) => {
                let id = c.get("id").and_then(Value::as_u64).unwrap_or_default();
                return dedupe_after_create(client, &repo, &list_path, post, body, id, url_of(&c));
            }
            Err(e @ Error::Ambiguous { .. }) => {
                eprintln!(
                    "warning: {}; checking whether the comment exists",
                    sweep_model::gha::log_text(&e.to_string())
                );
            }
            Err(e) => return wrap(Err(e)),
        }
    }
    // The create may have been applied but the comment is not listed:
    // report it rather than risk a duplicate.
    Err(Error::Ambiguous {
        method: "POST".into(),
        endpoint: list_path,
        detail: "the comment was not found after an uncertain create".into(),
    })
}

/// After creating comment `id`: list again; when another run created a
/// marked comment first, keep the oldest (updated with `body`) and delete
/// ours. A failing re-list is a warning (the comment exists either way).
fn dedupe_after_create(
    client: &Client,
    repo: &str,
    list_path: &str,
    post: &Post,
    body: &str,
    id: u64,
    url: String,
) -> Result<Outcome, Error> {
    let comments = match client.get_all(list_path, &[], None) {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "warning: could not re-list the comments to check for a duplicate: {}",
                sweep_model::gha::log_text(&e.to_string())
            );
            return Ok(Outcome::Created { id, url });
        }
    };
    let all = marked(&comments, post);
    let Some((oldest, oldest_url)) = all.first().cloned() else {
        return Ok(Outcome::Created { id, url });
    };
    if oldest == id || !all.iter().any(|(i, _)| *i == id) {
        return Ok(Outcome::Created { id, url });
    }
    eprintln!(
        "warning: another run created sticky comment {oldest} at the same time; keeping it and deleting this run's duplicate {id}"
    );
    client.patch(
        &format!("/repos/{repo}/issues/comments/{oldest}"),
        &json!({ "body": body }),
    )?;
    match client.delete(&format!("/repos/{repo}/issues/comments/{id}")) {
        Ok(()) => {}
        Err(e) if e.status() == Some(404) => {}
        Err(e) => return Err(e),
    }
    Ok(Outcome::Updated {
        id: oldest,
        url: oldest_url,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// body.rs uses charts, verdict and error; none of them may import
    /// body (the circle body <-> charts of issue #26), and error imports
    /// nothing of this crate.
    #[test]
    fn the_modules_body_uses_do_not_import_body() {
        for (file, src) in [
            ("charts.rs", include_str!("charts.rs")),
            ("verdict.rs", include_str!("verdict.rs")),
            ("check_run.rs", include_str!("check_run.rs")),
            ("ack.rs", include_str!("ack.rs")),
        ] {
            assert!(
                !src.contains("use crate::body"),
                "{file} imports body: an import circle"
            );
        }
        assert!(
            !include_str!("error.rs").contains("use crate::"),
            "error.rs imports another module of this crate"
        );
    }

    #[test]
    fn sticky_needs_marker_at_start_and_the_author() {
        let post = Post {
            repo: "o/r".into(),
            pr_number: 1,
            marker: "m".into(),
            author: "github-actions[bot]".into(),
        };
        let c = |id: u64, login: &str, body: &str| json!({"id": id, "user": {"login": login}, "body": body, "html_url": format!("u{id}")});
        let comments = vec![
            c(1, "mallory", "<!-- m -->\nfake"),
            c(2, "github-actions[bot]", "quote: <!-- m -->"),
            c(3, "github-actions[bot]", "<!-- m -->\nreal"),
        ];
        assert_eq!(sticky(&comments, &post).map(|s| s.0), Some(3));
    }
}
