//! Library behind the `compare-results` binary: compare a sweep with a baseline: per-point deltas and a regression verdict.
