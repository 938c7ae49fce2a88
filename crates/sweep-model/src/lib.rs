//! Typed model shared by every sweepkit tool: master configs and
//! `runners.yaml`, matrix rows, changelog entries and result rows, plus the
//! small I/O helpers every binary needs (atomic writes, GitHub Actions
//! annotations, step summaries and outputs).

pub mod changelog;
pub mod config;
pub mod exit;
pub mod fsio;
pub mod gha;
pub mod json_type;
pub mod markdown;
pub mod python;
pub mod results;
pub mod rows;
pub mod runners;
pub mod stdout;
pub mod tree;
pub mod yaml;
