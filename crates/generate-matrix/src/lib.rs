//! Library behind the `generate-matrix` binary: expand master configs into the benchmark job matrix.

pub mod canary;
pub mod policy;
