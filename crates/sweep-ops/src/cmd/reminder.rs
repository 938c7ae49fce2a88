//! `pr-reminder`: flags and glue over `sweep_ops::reminder`.
use std::path::PathBuf;

use sweep_cli::Failure;
use sweep_model::gha::{self, Level};
use sweep_ops::OpsError;
use sweep_ops::reminder::{self, DEFAULT_MARKER, MAX_TEMPLATE_BYTES, Outcome};

use super::client;

#[derive(clap::Args, Debug)]
pub(crate) struct ReminderCli {
    /// Repository of the pull request (`owner/name`).
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repo: String,
    /// The pull request.
    #[arg(long, env = "INPUT_PR_NUMBER")]
    pr_number: u64,
    /// Markdown file in your repository with the text to post (e.g.
    /// `.github/pr-reminder.md`; examples/pr-reminder.md is InferenceX's).
    #[arg(long, env = "INPUT_TEMPLATE")]
    template: PathBuf,
    /// Hidden marker naming the comment; one comment per PR carries it.
    #[arg(long, env = "INPUT_MARKER", default_value = DEFAULT_MARKER)]
    marker: String,
}

pub(crate) fn pr_reminder(c: ReminderCli) -> Result<(), Failure> {
    let bytes = sweep_model::fsio::read_regular(&c.template, MAX_TEMPLATE_BYTES).map_err(|e| {
        Failure::from(OpsError::Failed(format!(
            "reminder template {}: {e}",
            c.template.display()
        )))
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Failure::from(OpsError::Failed(format!(
            "reminder template {}: not UTF-8: {e}",
            c.template.display()
        )))
    })?;
    let body = reminder::body(&c.marker, &text)?;
    let client = client(&["GH_TOKEN", "GITHUB_TOKEN"])?;
    match reminder::remind(&client, &c.repo, c.pr_number, &c.marker, &body)? {
        Outcome::Posted(id) => sweep_cli::stdout::println(&format!(
            "posted the reminder on {}#{} (comment {id})",
            c.repo, c.pr_number
        )),
        Outcome::AlreadyPosted(id) => sweep_cli::stdout::println(&format!(
            "the reminder is already on {}#{} (comment {id}): nothing posted",
            c.repo, c.pr_number
        )),
        Outcome::CannotWrite(why) => {
            let msg = format!(
                "{why}; no reminder posted (a fork's pull request gets a read-only token: \
                 run the reminder on `pull_request_target` to post there)"
            );
            eprintln!("warning: sweep-ops: pr-reminder: {msg}");
            gha::annotate(Level::Warning, None, None, &msg);
        }
    }
    Ok(())
}
