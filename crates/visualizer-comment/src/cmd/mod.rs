//! The commands' glue, one module each (the comment, which is the command
//! without a subcommand, and `check-run`), and the acknowledgement lookup
//! both share: only when the verdict is regressions alone, the refusals
//! logged as notices, GitHub failing a warning that keeps the failure (fail
//! closed).
use github_client::Client;
use serde_json::Value;
use visualizer_comment::ack::{self, Acknowledgement};
use visualizer_comment::verdict::{self, Scheduled};

pub(crate) mod check_run;
pub(crate) mod comment;

/// The writer's acknowledgement of the regression on `head_sha`, if the
/// report's verdict may be acknowledged and one holds.
pub(crate) fn acknowledgement(
    client: &Client,
    repo: &str,
    pr: u64,
    head_sha: &str,
    command: &str,
    report: &Value,
    scheduled: Scheduled,
) -> Option<Acknowledgement> {
    let command = command.trim();
    if command.is_empty() {
        return None;
    }
    match verdict::head(report, scheduled) {
        Ok(h) if h.acknowledgeable => {}
        _ => return None,
    }
    let note = |level: sweep_cli::Level, msg: &str| {
        sweep_cli::annotate(level, None, None, msg);
        eprintln!("{}", sweep_model::gha::log_text(msg));
    };
    match ack::review(client, repo, pr, head_sha, command) {
        Ok(r) => {
            for why in &r.refused {
                note(sweep_cli::Level::Notice, why);
            }
            if let Some(a) = &r.acknowledgement {
                note(
                    sweep_cli::Level::Notice,
                    &format!(
                        "the regression on {} is acknowledged by @{} ({}): {}; the verdict is neutral",
                        a.head.chars().take(7).collect::<String>(),
                        a.login,
                        a.created_at,
                        a.reason
                    ),
                );
            }
            r.acknowledgement
        }
        Err(e) => {
            note(
                sweep_cli::Level::Warning,
                &format!("could not read the PR's {command} comments ({e}); the regression stands"),
            );
            None
        }
    }
}
