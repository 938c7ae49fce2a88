//! Library behind the `check-changelog` binary: gate perf-changelog.yaml changes between two git refs.
