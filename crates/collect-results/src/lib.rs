//! Library behind the `collect-results` binary: per-job normalisation of
//! benchmark results (`process`), run-level aggregation (`aggregate`), eval
//! aggregation (`evals`) and eval score checks (`validate-scores`) — the
//! contracts of InferenceX's `process_result.py`, `collect_results.py`,
//! `collect_eval_results.py` and `evals/validate_scores.py`
//! (spec `results.md` §1–6, §9).
//!
//! Row types live in `sweep_model::results`; this crate only produces them.

pub mod agentic;
pub mod aggregate;
pub mod evals;
pub mod group;
pub mod leg_results;
pub mod power;
pub mod power_csv;
pub mod power_multinode;
pub mod process;
pub mod summary;
pub mod table;
pub mod validate;
