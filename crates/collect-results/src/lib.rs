//! Library behind the `collect-results` binary: normalise, aggregate and check benchmark and eval results.
