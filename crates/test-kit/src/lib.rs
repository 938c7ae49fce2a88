//! What every crate's tests share, in one place (as uv's `uv-test` and
//! zizmor's `tests/common.rs`): a dev-dependency only, never linked into a
//! shipped binary, and depending on no tool crate (so any crate may use it).
//!
//! * [`command`]: a `std::process::Command` for a binary under test with a
//!   scrubbed environment: only `PATH`, `HOME` and `TMPDIR` of the caller
//!   are passed on, so no `GITHUB_*`, `INPUT_*` or `RUNNER_*` variable of
//!   the machine running the tests (a CI job sets many) changes what a tool
//!   does. Tests add what they mean with `.env(…)`;
//!   [`CommandExt::github`] points a GitHub tool at the fake server.
//! * [`tool`]/[`tool_dir`]: the workspace binaries for the workspace-level
//!   tests, built from the current source (or `SWEEPKIT_BIN_DIR`). A tool
//!   crate's own tests use `env!("CARGO_BIN_EXE_<name>")`, which cargo
//!   builds for them.
//! * [`temp_dir`], [`fake_github`] (the loopback fake GitHub, re-exported
//!   as [`fake_github`](mod@fake_github)), [`closed_url`].
//! * Snapshots: [`assert_snapshot!`](crate::assert_snapshot) (insta with
//!   this workspace's settings) and [`redact`] for temp paths.
//! * [`pg::Server`]: a throw-away PostgreSQL server for the database tests.
//! * Files: [`write_file`] and [`write_json`] (parents made),
//!   [`write_executable`], [`mkfifo`], [`zip_of`] and [`zip_dir`],
//!   [`png_size`]; [`bench_repo`], the smallest benchmark repository the
//!   changelog tools accept.
//! * [`act`]: the harness that runs the whole sweep under nektos/act, and
//!   [`act_scenario!`](crate::act_scenario) that declares a scenario.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub mod act;
pub mod bench_repo;
pub mod browser;
mod files;
pub mod pg;

pub use files::{mkfifo, png_size, write_executable, write_file, write_json, zip_dir, zip_of};

pub use fake_github::{self, FakeGitHub, Fault, Route, closed_url, unused_port};
pub use insta;
pub use tempfile::{self, TempDir};

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
    "sweep-history",
];

/// Variables passed from the test's environment to a tool: what a program
/// needs to find executables (`git`) and a writable home and temp dir.
pub const PASSED_VARIABLES: &[&str] = &["PATH", "HOME", "TMPDIR"];

/// The retry settings [`CommandExt::github`] gives a GitHub tool: waits in
/// milliseconds instead of seconds, and few enough attempts that a test of
/// a lasting fault ends quickly.
pub const FAST_RETRY: &[(&str, &str)] = &[
    ("SWEEPKIT_GITHUB_RETRY_BASE_MS", "5"),
    ("SWEEPKIT_GITHUB_RETRY_MAX_MS", "1500"),
    ("SWEEPKIT_GITHUB_MAX_ATTEMPTS", "3"),
];

/// The token [`CommandExt::github`] sends (the fake accepts any).
pub const TEST_TOKEN: &str = "ghs_test";

/// A command for `program` with the scrubbed environment (see the crate
/// header): `env_clear`, then [`PASSED_VARIABLES`] as the test has them.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear();
    for var in PASSED_VARIABLES {
        if let Some(value) = std::env::var_os(var) {
            cmd.env(var, value);
        }
    }
    cmd
}

/// [`command`] for one workspace binary from [`tool_dir`].
pub fn tool_command(name: &str) -> Command {
    command(tool(name))
}

/// Settings a test adds to a [`command`].
pub trait CommandExt {
    /// Talk to `server`: `GITHUB_API_URL`, `GITHUB_TOKEN` ([`TEST_TOKEN`])
    /// and [`FAST_RETRY`] (a later `.env` overrides any of them).
    fn github(&mut self, server: &FakeGitHub) -> &mut Self;
}

impl CommandExt for Command {
    fn github(&mut self, server: &FakeGitHub) -> &mut Self {
        self.env("GITHUB_API_URL", server.base_url())
            .env("GITHUB_TOKEN", TEST_TOKEN)
            .envs(FAST_RETRY.iter().copied())
    }
}

/// The identity and settings every test repository's git runs with, so no
/// user or system configuration (signing, hooks, default branch) changes a
/// test.
pub const GIT_SETTINGS: &[&str] = &[
    "-c",
    "user.name=sweepkit-test",
    "-c",
    "user.email=test@example.invalid",
    "-c",
    "init.defaultBranch=main",
    "-c",
    "commit.gpgsign=false",
];

/// Runs `git args…` in `dir` with the scrubbed environment, no user or
/// system git configuration and [`GIT_SETTINGS`]; panics with git's error
/// unless it succeeds, and returns its standard output, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = command("git")
        .args(GIT_SETTINGS)
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap_or_else(|e| panic!("cannot run git: {e}"));
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        stderr(&out)
    );
    stdout(&out).trim().to_string()
}

/// A fresh temp dir (removed when dropped).
pub fn temp_dir() -> TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("cannot create a temp dir: {e}"))
}

/// A started, empty fake GitHub server (stops when dropped).
pub fn fake_github() -> FakeGitHub {
    FakeGitHub::start().unwrap_or_else(|e| panic!("cannot start the fake GitHub server: {e}"))
}

/// The standard output of a finished command, as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The standard error of a finished command, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts that a tool run exited with `want`, showing its stdout and
/// stderr when it did not.
#[track_caller]
pub fn assert_exit(out: &Output, want: i32) {
    assert_eq!(
        out.status.code(),
        Some(want),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The placeholder [`redact`] puts in place of a temp dir.
pub const TEMP_PLACEHOLDER: &str = "[TMP]";

/// `text` with every occurrence of `dir` (as given and canonicalized)
/// replaced by [`TEMP_PLACEHOLDER`], so a snapshot does not hold a path
/// that changes with each run.
pub fn redact(text: &str, dir: &Path) -> String {
    let mut out = text.to_string();
    let canonical = dir.canonicalize().ok();
    // The longer form first, in case one path contains the other.
    let mut forms: Vec<String> = [Some(dir.to_path_buf()), canonical]
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    forms.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for form in forms {
        out = out.replace(&form, TEMP_PLACEHOLDER);
    }
    out
}

/// The insta settings every snapshot uses: snapshots in the calling test
/// file's `snapshots/` directory (insta's default, so `tests/snapshots/`),
/// named `<test file>__<name>.snap`, without the asserted expression in
/// the header (it is always just a variable).
pub fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    settings
}

/// `insta::assert_snapshot!(name, value)` under [`snapshot_settings`].
#[macro_export]
macro_rules! assert_snapshot {
    ($name:expr, $value:expr $(,)?) => {
        $crate::snapshot_settings().bind(|| {
            $crate::insta::assert_snapshot!($name, $value);
        })
    };
}

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
        "test-kit: building the tools under test: cargo build --workspace --bins --locked --profile {profile} --target-dir {}",
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

/// Whether a missing browser fails the browser tests instead of skipping
/// them (`SWEEPKIT_REQUIRE_BROWSER=1`, set by scripts/check).
pub fn require_browser() -> bool {
    std::env::var("SWEEPKIT_REQUIRE_BROWSER").is_ok_and(|v| v == "1")
}

/// The Chromium of the browser tests: `SWEEPKIT_CHROMIUM`, else
/// `/usr/bin/chromium`, else `chromium` on PATH; `None` when there is none.
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SWEEPKIT_CHROMIUM").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "SWEEPKIT_CHROMIUM={} is not a file",
            p.display()
        );
        return Some(p);
    }
    let default = Path::new("/usr/bin/chromium");
    if default.is_file() {
        return Some(default.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("chromium"))
            .find(|p| p.is_file())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_sees_only_the_passed_variables() {
        let out = command("env")
            .env("GITHUB_OUTPUT", "/dev/null")
            .output()
            .unwrap_or_else(|e| panic!("cannot run env: {e}"));
        assert!(out.status.success(), "{}", stderr(&out));
        let mut names: Vec<String> = stdout(&out)
            .lines()
            .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
            .collect();
        names.sort();
        let mut want: Vec<String> = PASSED_VARIABLES
            .iter()
            .filter(|v| std::env::var_os(v).is_some())
            .map(|v| v.to_string())
            .chain(["GITHUB_OUTPUT".to_string()])
            .collect();
        want.sort();
        assert_eq!(names, want);
    }

    #[test]
    fn github_points_at_the_fake_with_fast_retries() {
        let server = fake_github();
        let mut cmd = command("true");
        cmd.github(&server);
        let envs: Vec<(String, String)> = cmd
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v?.to_str()?.to_string())))
            .collect();
        assert!(envs.contains(&("GITHUB_API_URL".into(), server.base_url())));
        assert!(envs.contains(&("GITHUB_TOKEN".into(), TEST_TOKEN.into())));
        assert!(envs.contains(&("SWEEPKIT_GITHUB_MAX_ATTEMPTS".into(), "3".into())));
    }

    #[test]
    fn git_runs_with_the_test_identity_and_fails_loudly() {
        let dir = temp_dir();
        git(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join("a"), "x").unwrap_or_else(|e| panic!("{e}"));
        git(dir.path(), &["add", "a"]);
        git(dir.path(), &["commit", "-q", "-m", "first"]);
        assert_eq!(
            git(dir.path(), &["log", "-1", "--format=%an <%ae> %s"]),
            "sweepkit-test <test@example.invalid> first"
        );
        assert_eq!(git(dir.path(), &["branch", "--show-current"]), "main");
        let failed = std::panic::catch_unwind(|| git(dir.path(), &["no-such-command"]));
        assert!(failed.is_err(), "a failing git must panic");
    }

    #[test]
    fn redact_replaces_the_temp_dir_in_both_spellings() {
        let dir = temp_dir();
        let given = dir.path().display().to_string();
        let canonical = dir
            .path()
            .canonicalize()
            .unwrap_or_else(|e| panic!("{e}"))
            .display()
            .to_string();
        let text = format!("wrote {given}/a.json and {canonical}/b.json; kept /etc/x");
        assert_eq!(
            redact(&text, dir.path()),
            "wrote [TMP]/a.json and [TMP]/b.json; kept /etc/x"
        );
    }
}
