//! Library behind the `generate-matrix` binary: expand master configs into the benchmark job matrix.

pub mod canary;
pub mod changelog;
pub mod decimal;
pub mod evals;
pub mod generate;
pub mod legs;
pub mod policy;
pub mod priority;
