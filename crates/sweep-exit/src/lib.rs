//! The exit contract every sweepkit tool shares (docs/exit-codes.md):
//! `0` the job was done, `1` the check said no ([`Kind::Rejected`]), `2` the
//! tool could not do its job ([`Kind::Failed`]).
//!
//! Library error types implement [`Classify`] from here, so a library says
//! which failure an error is without depending on the CLI crate
//! (`sweep-cli`, which re-exports everything here and prints a [`Failure`]
//! once at the edge); `?` turns a classified error into a [`Failure`] of
//! the right kind.

use std::fmt;

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

impl Classify for std::io::Error {
    fn kind(&self) -> Kind {
        Kind::Failed
    }
}

/// A failed command: its kind (hence exit code) and the error to print.
pub struct Failure {
    kind: Kind,
    /// `None` when the command already reported the failure itself (a gate
    /// that printed its own report); then `sweep_cli::main` only exits.
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
    /// format); `sweep_cli::main` prints nothing more and exits with `kind`'s code.
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

    /// The message `sweep_cli::main` prints after `<tool>: error: ` (`None` when
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

    /// The file and line the failure is about (set by [`Failure::at`]).
    #[must_use]
    pub fn location(&self) -> (Option<&str>, Option<usize>) {
        (self.file.as_deref(), self.line)
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
