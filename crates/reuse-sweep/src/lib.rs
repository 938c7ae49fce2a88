//! Library behind the `reuse-sweep` binary: the /reuse-sweep-run protocol: find and validate a reusable PR sweep.
