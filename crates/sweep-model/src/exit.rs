//! The exit contract shared by every sweepkit binary (README, "Tools"):
//! `0` the job was done, `1` the check said no, `2` the tool could not do
//! its job. Each binary's `main.rs` maps its errors onto these three codes;
//! libraries return typed errors and never build an exit code.
//!
//! The borderline rule: an input that the tool exists to judge (a config,
//! changelog, result set or workflow file) that is *invalid* is a "no" (`1`);
//! an input the tool needs in order to work that it *cannot read* (missing
//! file, I/O error, bad flag value, failed API call) is `2`.

use std::process::ExitCode;

/// The job was done: the check passed, the output was written.
pub const OK: u8 = 0;
/// The check said no: a gate rejected the change, a regression with
/// `--fail-on-regression`, an invalid input the tool exists to validate.
pub const REJECTED: u8 = 1;
/// The tool could not do its job: usage error (clap's own code is also 2),
/// I/O error, unreadable input, GitHub/API failure.
pub const FAILED: u8 = 2;

/// [`REJECTED`] as an [`ExitCode`].
#[must_use]
pub fn rejected() -> ExitCode {
    ExitCode::from(REJECTED)
}

/// [`FAILED`] as an [`ExitCode`].
#[must_use]
pub fn failed() -> ExitCode {
    ExitCode::from(FAILED)
}
