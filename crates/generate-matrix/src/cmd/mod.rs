//! The subcommands whose flags, files and exit codes are more than a few
//! lines; the logic they call is in the `sweep_matrix` and
//! `sweep_changelog` libraries.

pub(crate) mod canary;
pub(crate) mod changelog;
pub(crate) mod legs;
pub(crate) mod policy;
