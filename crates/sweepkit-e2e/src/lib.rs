//! Test-only crate: `tests/chain.rs` runs the whole sweep chain locally —
//! a changelog commit in a throwaway git repository, `check-changelog`,
//! `generate-matrix changelog`, `sweep-policy`/`canary`, benchmark results
//! through `collect-results process`, `aggregate`/`evals`,
//! `compare-results`, and `success-rate` + `visualizer-comment` against the
//! fake GitHub server — invoking every tool with the environment variables
//! its composite action sets (see the README's action table).
//! `tests/conformance.rs` runs the recorded conformance corpus of
//! `tests/conformance/` (workspace root) against the tools.
//!
//! What those tests share lives in `test-kit` (the workspace's one test
//! support crate); the names the tests have always used are re-exported
//! here: [`tool_dir`], the directory of the binaries under test, built from
//! the current source.

pub use test_kit::{TOOLS, tool, tool_dir, workspace_root};
