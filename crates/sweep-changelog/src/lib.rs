//! `perf-changelog.yaml` processing shared by `check-changelog` and
//! `generate-matrix changelog`: git access ([`git`]), the added/removed lines
//! of the changelog diff ([`diff`]), the changelog → matrix pipeline over the
//! `sweep-matrix` generator ([`pipeline`], [`append_only`], both over the
//! raw-config view [`masters`]), the gate of `check-changelog` ([`gate`]),
//! rejection messages and annotations ([`report`]), runner labels
//! `runners.yaml` lacks ([`runner_labels`]), the stale-branch
//! diagnosis ([`stale`]), the byte-level rules behind `check-changelog
//! --strict` ([`strict`]), the merge helper ([`prepare_merge`]) and the
//! local dry run ([`dry_run`]).

pub mod append_only;
pub mod diff;
pub mod dry_run;
pub mod gate;
pub mod git;
pub mod masters;
pub mod pipeline;
pub mod prepare_merge;
pub mod report;
pub mod runner_labels;
pub mod stale;
pub mod strict;
