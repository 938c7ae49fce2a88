//! The one exit path of every sweepkit binary (docs/exit-codes.md).
//!
//! Every `main.rs` is parse + dispatch: it hands its command to [`main`],
//! which prints a failure once, as `<tool>: error: <cause chain>` on stderr
//! (and as an `::error::` annotation inside GitHub Actions), and exits with
//! the failure's code:
//!
//! - `0` the job was done;
//! - `1` the check said no ([`Kind::Rejected`]): a gate refused the change,
//!   an input the tool exists to judge is invalid, a regression with
//!   `--fail-on-regression`;
//! - `2` the tool could not do its job ([`Kind::Failed`]): a usage error
//!   (clap's own code is also 2), a missing or unreadable file, an I/O
//!   error, a GitHub/API failure.
//!
//! Libraries never choose an exit code: their typed errors implement
//! [`Classify`], and `?` turns them into a [`Failure`] of the right kind.
//! The helpers a binary needs around that (stdout that does not panic on a
//! closed pipe, step outputs, annotations, atomic writes) live here too, so a
//! binary depends on one crate for its edge.

use std::process::ExitCode;

/// stdout that does not panic on a closed pipe (one implementation, in
/// sweep-model, which the libraries that print share).
pub use sweep_model::stdout;

pub use sweep_model::fsio::{write_atomic, write_json_atomic};
pub use sweep_model::gha::{
    Level, annotate, annotation, append_step_summary, in_actions, log_text, write_output,
};

/// The exit contract (codes, kinds, [`Classify`], [`Failure`]) lives in
/// the small crate `sweep-exit`, so that libraries classify their errors
/// without depending on this crate; it is re-exported here for binaries.
pub use sweep_exit::{Classify, FAILED, Failure, Kind, OK, Outcome, REJECTED, ResultExt};

/// The `<tool>: error: ` prefix of every failure message.
#[must_use]
pub fn error_prefix(tool: &str) -> String {
    format!("{tool}: error: ")
}

/// Where a tool's `::error::` annotation goes. GitHub reads workflow
/// commands from both streams; a tool whose stdout is data that its caller
/// captures or discards (a report, a matrix) annotates on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Annotations {
    /// With the tool's other output (the default).
    Stdout,
    /// Next to the error line.
    Stderr,
}

/// Prints `failure` (once) for `tool`: an `::error::` annotation on stdout
/// inside GitHub Actions, then `<tool>: error: <message>` on stderr. Inside
/// Actions both are encoded as workflow-command data ([`log_text`]): a
/// message quotes user input (a changelog key, a file name), and a raw line
/// break in it would start a line the runner reads as a command.
pub fn report(tool: &str, failure: &Failure) {
    report_to(tool, Annotations::Stdout, failure);
}

/// [`report`] with the annotation on the stream `annotations` names.
pub fn report_to(tool: &str, annotations: Annotations, failure: &Failure) {
    if let Some(msg) = failure.message() {
        let (file, line) = failure.location();
        match annotations {
            Annotations::Stdout => annotate(Level::Error, file, line, &msg),
            Annotations::Stderr if in_actions() => {
                eprintln!("{}", annotation(Level::Error, file, line, &msg));
            }
            Annotations::Stderr => {}
        }
        eprintln!("{}{}", error_prefix(tool), log_text(&msg));
    }
}

/// Maps an outcome onto the exit contract, printing a failure once.
pub fn finish(tool: &str, outcome: Outcome) -> ExitCode {
    finish_to(tool, Annotations::Stdout, outcome)
}

fn finish_to(tool: &str, annotations: Annotations, outcome: Outcome) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::from(OK),
        Err(f) => {
            report_to(tool, annotations, &f);
            ExitCode::from(f.code())
        }
    }
}

/// The `main` of every sweepkit binary: runs `command` and exits per the
/// contract (see the crate docs). Usage errors are clap's own (exit 2).
pub fn main(tool: &str, command: impl FnOnce() -> Outcome) -> ExitCode {
    finish(tool, command())
}

/// [`main`] for a tool whose failure annotation goes to stderr (see
/// [`Annotations`]).
pub fn main_with(
    tool: &str,
    annotations: Annotations,
    command: impl FnOnce() -> Outcome,
) -> ExitCode {
    finish_to(tool, annotations, command())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt;

    #[derive(Debug)]
    struct Bad;
    impl fmt::Display for Bad {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("bad")
        }
    }
    impl std::error::Error for Bad {}
    impl Classify for Bad {
        fn kind(&self) -> Kind {
            Kind::Rejected
        }
    }

    fn fails() -> Outcome {
        Err(Bad)?
    }

    #[test]
    fn a_classified_error_keeps_its_kind_through_question_mark() {
        let f = fails().expect_err("fails");
        assert_eq!(f.code(), REJECTED);
        assert_eq!(f.message().as_deref(), Some("bad"));
    }

    #[test]
    fn an_io_error_or_anyhow_error_is_a_failure_to_do_the_job() {
        let f: Failure = std::io::Error::other("disk").into();
        assert_eq!(f.code(), FAILED);
        let f: Failure = anyhow::anyhow!("api").into();
        assert_eq!(f.code(), FAILED);
    }

    #[test]
    fn context_is_printed_before_the_cause() {
        let f = Failure::failed_msg("No such file").context("reading a.json");
        assert_eq!(f.message().as_deref(), Some("reading a.json: No such file"));
        assert_eq!(f.kind(), Kind::Failed);
    }

    #[derive(Debug)]
    struct Wrapped(std::io::Error);
    impl fmt::Display for Wrapped {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "a.yaml: cannot read file: {}", self.0)
        }
    }
    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_already_in_the_message_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let f = Failure::failed(Wrapped(io)).context("loading runners");
        assert_eq!(
            f.message().as_deref(),
            Some("loading runners: a.yaml: cannot read file: No such file")
        );
    }

    #[test]
    fn an_already_reported_failure_prints_nothing_more() {
        let f = Failure::reported(Kind::Rejected);
        assert_eq!(f.message(), None);
        assert_eq!(f.code(), REJECTED);
    }

    #[test]
    fn the_prefix_names_the_tool() {
        assert_eq!(error_prefix("success-rate"), "success-rate: error: ");
    }
}
