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

/// Makes `dir` with a stub script per tool of [`TOOLS`] that prints
/// `<tool> <version>`, as `--version` of a build of that version does: the
/// binaries a release archive or `actions/setup` is tested with.
pub fn version_stubs(dir: &std::path::Path, version: &str) {
    std::fs::create_dir(dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
    for t in TOOLS {
        test_kit::write_executable(
            &dir.join(t),
            &format!("#!/bin/sh\necho \"{t} {version}\"\n"),
        );
    }
}

/// The `PATH` a workflow step sees in these tests: the tools under test
/// ([`tool_dir`]) first, then the test's own `PATH`.
pub fn path_with_tools() -> String {
    format!(
        "{}:{}",
        tool_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}
