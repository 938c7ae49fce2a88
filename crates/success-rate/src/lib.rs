//! Library behind the `success-rate` binary: per-hardware job success counts of a workflow run.
