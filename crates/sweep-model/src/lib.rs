//! Typed model shared by every sweepkit tool: master configs and
//! `runners.yaml`, matrix rows, changelog entries and result rows; the
//! Python-compatible spellings the reference's outputs depend on
//! ([`python`]), type names for messages ([`json_type`]), the JSON parser that
//! refuses a key twice in one object ([`json_strict`]), the ranges a
//! figure or count must lie in ([`ranges`]), "did you mean" suggestions
//! ([`suggest`]) and the results-tree walker ([`tree`]); plus the small I/O
//! helpers every binary needs (atomic
//! writes, stdout, GitHub Actions annotations, step summaries and outputs).

pub mod changelog;
pub mod compare_summary;
pub mod config;
pub mod fsio;
pub mod gha;
pub mod jobs;
pub mod json_strict;
pub mod json_type;
pub mod markdown;
pub mod python;
pub mod ranges;
pub mod results;
pub mod rows;
pub mod runners;
pub mod stdout;
pub mod suggest;
pub mod tree;
pub mod yaml;
