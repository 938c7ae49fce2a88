//! The sweep workflow's jobs that a tool recognises by name in GitHub's
//! jobs API (which reports a job's `name:`, never its steps). These are the
//! only job names spelled in the libraries; the family list lives in
//! `sweep_matrix::legs::FAMILIES`, and the test `job_names_the_tools_read_are_the_workflows`
//! (crates/sweepkit-e2e/tests/workflows.rs) reads the shipped workflow
//! files and fails when one of these no longer names a job there.

/// `run-sweep.yml`'s job that dispatches the ingest of benchmark results.
pub const INGEST: &str = "trigger-ingest";

/// `run-sweep.yml`'s job that dispatches the ingest of agentic results.
pub const AGENTIC_INGEST: &str = "trigger-agentic-ingest";

/// The start of the names of `sweepkit-sweep-legs.yml`'s planning jobs
/// (`plan <family> <part>`); listed as `<caller job> / plan …`.
pub const PLAN_PREFIX: &str = "plan ";

/// The planning job of runs made before the leg workflow existed (the
/// history `sweep-ops recover-ingest` reads may still hold them); no
/// shipped workflow has it any more.
pub const LEGACY_CANARY_SELECT: &str = "canary-select";
