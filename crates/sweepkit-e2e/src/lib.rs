//! Test-only crate: `tests/chain.rs` runs the whole sweep chain locally —
//! a changelog commit in a throwaway git repository, `check-changelog`,
//! `generate-matrix changelog`, `sweep-policy`/`canary`, benchmark results
//! through `collect-results process`, `aggregate`/`evals`,
//! `compare-results`, and `success-rate` + `visualizer-comment` against the
//! fake GitHub server — invoking every tool with the environment variables
//! its composite action sets (see the README's action table).
