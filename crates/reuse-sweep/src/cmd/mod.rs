//! The subcommands' flags and file handling, one module each.
pub(crate) mod find;
pub(crate) mod stage;
pub(crate) mod validate;
