//! `pr-reminder`: the first bot comment on a new pull request that touches
//! the configs or the changelog (InferenceX's `pr-recipe-reminder.yml`):
//! which label runs the sweep and the sign-off checklist, posted once per
//! PR. The text is the adopter's, a markdown template file in their
//! repository; a hidden marker line (found with a paginated lookup of the
//! PR's comments) keeps it to one comment, and a token that cannot write
//! (a fork's pull request) is a warning, not a failure.

use github_client::Client;

use crate::{OpsError, Result};

/// The default marker: the reference's, so a PR that already has the
/// reference's reminder does not get a second one after the migration.
pub const DEFAULT_MARKER: &str = "recipe-reminder";

/// Longest template accepted, in bytes: GitHub caps a comment body at
/// 65 536 characters, and the marker line needs room.
pub const MAX_TEMPLATE_BYTES: u64 = 60_000;

/// What the command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The reminder was posted (the new comment's id).
    Posted(u64),
    /// A comment with the marker is already there (its id).
    AlreadyPosted(u64),
    /// The token may not read or write the PR's comments (a fork's
    /// read-only token): nothing posted, with the reason.
    CannotWrite(String),
}

/// The hidden first line of the comment.
#[must_use]
pub fn marker_line(marker: &str) -> String {
    format!("<!-- {marker} -->")
}

/// The comment body: the marker line, then the template as written.
/// An empty template (only whitespace) is refused: a reminder that says
/// nothing would still be "posted once".
pub fn body(marker: &str, template: &str) -> Result<String> {
    if template.trim().is_empty() {
        return Err(OpsError::Failed(
            "the reminder template is empty: write the text to post (see \
             examples/pr-reminder.md)"
                .into(),
        ));
    }
    if marker.is_empty() || marker.contains("--") || marker.contains('\n') {
        return Err(OpsError::Failed(format!(
            "marker '{marker}': a marker is one line without `--` (it goes inside <!-- -->)"
        )));
    }
    Ok(format!("{}\n{}", marker_line(marker), template.trim_end()))
}

/// Posts `body` on PR `number` of `repo` unless a comment there already
/// holds the marker line.
pub fn remind(
    client: &Client,
    repo: &str,
    number: u64,
    marker: &str,
    body: &str,
) -> Result<Outcome> {
    let path = format!("/repos/{repo}/issues/{number}/comments");
    let line = marker_line(marker);
    let comments = match client.get_all(&path, &[], None) {
        Ok(c) => c,
        Err(e) if e.is_permission_denied() => {
            return Ok(Outcome::CannotWrite(format!(
                "cannot list the comments of {repo}#{number}: {e}"
            )));
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(c) = comments
        .iter()
        .find(|c| c["body"].as_str().is_some_and(|b| b.contains(&line)))
    {
        return Ok(Outcome::AlreadyPosted(c["id"].as_u64().unwrap_or(0)));
    }
    match client.post(&path, &serde_json::json!({ "body": body })) {
        Ok(c) => Ok(Outcome::Posted(c["id"].as_u64().unwrap_or(0))),
        Err(e) if e.is_permission_denied() => Ok(Outcome::CannotWrite(format!(
            "cannot comment on {repo}#{number}: {e}"
        ))),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;

    #[test]
    fn the_body_leads_with_the_marker_and_keeps_the_template() {
        assert_eq!(
            body("recipe-reminder", "Add a label.\n\n").unwrap(),
            "<!-- recipe-reminder -->\nAdd a label."
        );
        assert!(body("m", " \n").is_err());
        assert!(body("a--b", "x").is_err());
    }
}
