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

use std::fmt;
use std::process::ExitCode;

/// stdout that does not panic on a closed pipe (one implementation, in
/// sweep-model, which the libraries that print share).
pub use sweep_model::stdout;

pub use sweep_model::fsio::{write_atomic, write_json_atomic};
pub use sweep_model::gha::{
    Level, annotate, annotation, append_step_summary, in_actions, log_text, write_output,
};

/// The job was done: the check passed, the output was written.
pub const OK: u8 = 0;
/// The check said no (see [`Kind::Rejected`]).
pub const REJECTED: u8 = 1;
/// The tool could not do its job (see [`Kind::Failed`]).
pub const FAILED: u8 = 2;

/// Which of the two failures an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Exit 1: the tool did its job and the answer is no (an invalid config,
    /// changelog, result set or workflow it exists to judge; a gate).
    Rejected,
    /// Exit 2: the tool could not do its job (a missing or unreadable input,
    /// a bad flag value, I/O, a failed API call, a wait that timed out).
    Failed,
}

impl Kind {
    /// The exit status of this kind.
    #[must_use]
    pub fn code(self) -> u8 {
        match self {
            Kind::Rejected => REJECTED,
            Kind::Failed => FAILED,
        }
    }
}

/// Implemented by library error types: says whether the error is a "no"
/// (exit 1) or "could not do the job" (exit 2). The borderline rule: an
/// input the tool exists to judge that is *invalid* is [`Kind::Rejected`];
/// an input it needs and *cannot read* is [`Kind::Failed`].
pub trait Classify {
    /// The kind of this error.
    fn kind(&self) -> Kind;
}

impl Classify for sweep_model::fsio::ReadError {
    fn kind(&self) -> Kind {
        Kind::Failed
    }
}

/// A YAML file that cannot be read is a missing input; one that is not
/// valid YAML is the input refused.
impl Classify for sweep_model::yaml::YamlError {
    fn kind(&self) -> Kind {
        if self.unreadable {
            Kind::Failed
        } else {
            Kind::Rejected
        }
    }
}

impl Classify for std::io::Error {
    fn kind(&self) -> Kind {
        Kind::Failed
    }
}

/// A failed command: its kind (hence exit code) and the error to print.
pub struct Failure {
    kind: Kind,
    /// `None` when the command already reported the failure itself (a gate
    /// that printed its own report); then [`main`] only exits.
    error: Option<anyhow::Error>,
    /// The file (and line) the failure is about, for the annotation.
    file: Option<String>,
    line: Option<usize>,
}

impl Failure {
    /// A failure of `kind` with `error` as its message (cause chain kept).
    pub fn new(kind: Kind, error: impl Into<anyhow::Error>) -> Self {
        Failure {
            kind,
            error: Some(error.into()),
            file: None,
            line: None,
        }
    }

    /// Exit 1 with `error` as the message.
    pub fn rejected(error: impl Into<anyhow::Error>) -> Self {
        Self::new(Kind::Rejected, error)
    }

    /// Exit 2 with `error` as the message.
    pub fn failed(error: impl Into<anyhow::Error>) -> Self {
        Self::new(Kind::Failed, error)
    }

    /// Exit 1 with a plain message.
    pub fn rejected_msg(message: impl fmt::Display) -> Self {
        Self::rejected(anyhow::anyhow!("{message}"))
    }

    /// Exit 2 with a plain message.
    pub fn failed_msg(message: impl fmt::Display) -> Self {
        Self::failed(anyhow::anyhow!("{message}"))
    }

    /// A failure the command has already printed (with its own report
    /// format); [`main`] prints nothing more and exits with `kind`'s code.
    #[must_use]
    pub fn reported(kind: Kind) -> Self {
        Failure {
            kind,
            error: None,
            file: None,
            line: None,
        }
    }

    /// The kind of this failure.
    #[must_use]
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The exit status of this failure.
    #[must_use]
    pub fn code(&self) -> u8 {
        self.kind.code()
    }

    /// The message [`main`] prints after `<tool>: error: ` (`None` when
    /// already reported).
    #[must_use]
    pub fn message(&self) -> Option<String> {
        self.error.as_ref().map(chain)
    }

    /// Adds context in front of the message (as [`anyhow::Context`] does).
    #[must_use]
    pub fn context(self, context: impl fmt::Display + Send + Sync + 'static) -> Self {
        Failure {
            error: self.error.map(|e| e.context(context)),
            ..self
        }
    }

    /// The file (and line) the failure is about: the `::error file=…,line=…::`
    /// annotation points there.
    #[must_use]
    pub fn at(self, (file, line): (Option<&str>, Option<usize>)) -> Self {
        Failure {
            file: file.map(str::to_owned),
            line,
            ..self
        }
    }
}

/// The cause chain as `a: b: c`, leaving out a cause whose text the message
/// already holds: many errors print their source in their own message too,
/// and a missing file is then said once, not twice (#26 item 8).
fn chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Failure({:?}, {:?})", self.kind, self.message())
    }
}

impl<E> From<E> for Failure
where
    E: Classify + std::error::Error + Send + Sync + 'static,
{
    fn from(e: E) -> Self {
        Failure::new(e.kind(), e)
    }
}

/// An `anyhow::Error` at the edge is a failure to do the job (exit 2); a
/// rejection is always said explicitly, by a classified error or
/// [`Failure::rejected`].
impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Failure::failed(error)
    }
}

/// The result of a command.
pub type Outcome = Result<(), Failure>;

/// Turns any error into a [`Failure`] of a chosen kind, with context.
pub trait ResultExt<T> {
    /// `Err` becomes an exit-2 failure.
    fn or_failed(self) -> Result<T, Failure>;
    /// `Err` becomes an exit-1 failure.
    fn or_rejected(self) -> Result<T, Failure>;
}

impl<T, E: Into<anyhow::Error>> ResultExt<T> for Result<T, E> {
    fn or_failed(self) -> Result<T, Failure> {
        self.map_err(Failure::failed)
    }
    fn or_rejected(self) -> Result<T, Failure> {
        self.map_err(Failure::rejected)
    }
}

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
        let (file, line) = (failure.file.as_deref(), failure.line);
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
