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
//! This library holds what those tests share: [`tool_dir`], the directory
//! of the binaries under test, built from the current source.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Every binary the workspace ships.
pub const TOOLS: &[&str] = &[
    "check-changelog",
    "generate-matrix",
    "collect-results",
    "compare-results",
    "success-rate",
    "visualizer-comment",
    "reuse-sweep",
    "sweep-ops",
    "sweepkit",
];

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize()
        .unwrap_or_else(|e| panic!("workspace root {}: {e}", root.display()))
}

/// The directory holding the binaries under test.
///
/// With `SWEEPKIT_BIN_DIR` set, that directory as it is (a relative path is
/// taken from the workspace root): `scripts/check` points it at the release
/// build it has just made. Otherwise the tools are built from the current
/// source first — `cargo build --workspace --bins` in the profile and target
/// directory of the running test binary, once per test process — so a plain
/// `cargo test` never runs stale binaries. Either way every tool of [`TOOLS`]
/// must be there.
pub fn tool_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = match std::env::var_os("SWEEPKIT_BIN_DIR").filter(|d| !d.is_empty()) {
            Some(dir) => workspace_root().join(dir),
            None => build_tools(),
        };
        for tool in TOOLS {
            let path = dir.join(format!("{tool}{}", std::env::consts::EXE_SUFFIX));
            assert!(
                path.is_file(),
                "{} is missing (SWEEPKIT_BIN_DIR names a directory holding every tool; unset, the tests build them)",
                path.display()
            );
        }
        dir
    })
}

/// The path of one tool under test (see [`tool_dir`]).
pub fn tool(name: &str) -> PathBuf {
    tool_dir().join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Variables cargo sets for the crate it runs (besides `CARGO_PKG_*`); not
/// passed on to the nested build (see [`build_tools`]).
const CRATE_VARIABLES: &[&str] = &[
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "OUT_DIR",
];

/// Builds the workspace's binaries with the profile and target directory
/// the running test binary was built with, and returns their directory.
fn build_tools() -> PathBuf {
    // A test binary lives at <target dir>/<profile dir>/deps/<name>-<hash>.
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("test executable path: {e}"));
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| panic!("{} is not under <target>/<profile>/deps", exe.display()))
        .to_path_buf();
    let (Some(target_dir), Some(profile_name)) = (
        profile_dir.parent(),
        profile_dir.file_name().and_then(|n| n.to_str()),
    ) else {
        panic!("{} is not under <target>/<profile>/deps", exe.display());
    };
    // `dev` (and `test`, which inherits it) builds into `debug`.
    let profile = if profile_name == "debug" {
        "dev"
    } else {
        profile_name
    };
    // `cargo test` sets CARGO to the cargo that runs it (same toolchain).
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root())
        .args(["build", "--workspace", "--bins", "--locked", "--profile"])
        .arg(profile)
        .arg("--target-dir")
        .arg(target_dir);
    // `cargo test` gives the test process the variables it sets for a crate
    // (`CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`, …). Build scripts that rerun
    // when those change (ring's do) would make this build recompile them,
    // and the next plain `cargo build` recompile them back.
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k.starts_with("CARGO_PKG_") || CRATE_VARIABLES.contains(&k.as_ref()) {
            cmd.env_remove(&key);
        }
    }
    eprintln!(
        "sweepkit-e2e: building the tools under test: cargo build --workspace --bins --locked --profile {profile} --target-dir {}",
        target_dir.display()
    );
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo: {e}"));
    assert!(
        status.success(),
        "building the tools under test failed ({status}); see cargo's output above"
    );
    profile_dir
}
