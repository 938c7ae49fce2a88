//! `sweepkit`: vendors the sweep workflow into a benchmark repository
//! (`sweepkit workflow write`) and checks that it is unchanged
//! (`sweepkit workflow check`). Exit status: 0 ok, 1 the check failed (or
//! `write` refused a pin whose setup action cannot install this version),
//! 2 the file could not be written or read (or a usage error).
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sweep_model::exit;

use clap::{Parser, Subcommand};
use sweepkit::{Release, Verdict, WORKFLOW_FILE};

/// sweepkit's adoption command.
#[derive(Parser, Debug)]
#[command(name = "sweepkit", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// The sweep workflow vendored into this repository.
    #[command(subcommand)]
    Workflow(WorkflowCmd),
}

#[derive(Subcommand, Debug)]
enum WorkflowCmd {
    /// Write (or upgrade) `<dir>/sweepkit-run-sweep.yml`. Refused (exit 1)
    /// when the pinned commit's `actions/setup/checksums.txt` lists no
    /// release archive of this version for a release target.
    Write {
        /// The repository's workflow directory.
        #[arg(long, default_value = ".github/workflows")]
        dir: PathBuf,
        /// Pin sweepkit's actions at this commit (40 hex) instead of the
        /// commit this build's workflow names (a release's notes name it).
        #[arg(long = "ref", value_name = "SHA")]
        pin: Option<String>,
        /// Write even when the pinned commit's checksums list no release
        /// archive of this version: for a repository whose caller sets
        /// `build-from-source: true` (the setup steps build the binaries).
        #[arg(long)]
        allow_unreleased: bool,
    },
    /// Fail (exit 1) when `<dir>/sweepkit-run-sweep.yml` changed since it
    /// was written, or was written by another sweepkit version.
    Check {
        /// The repository's workflow directory.
        #[arg(long, default_value = ".github/workflows")]
        dir: PathBuf,
    },
}

fn annotate(path: &Path, msg: &str) {
    if std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true") {
        println!("::error file={},line=1::{msg}", path.display());
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Cmd::Workflow(cmd) = cli.cmd;
    match cmd {
        WorkflowCmd::Write {
            dir,
            pin,
            allow_unreleased,
        } => match judge_release(&dir, pin.as_deref(), allow_unreleased) {
            Ok(()) => write(&dir, pin.as_deref()),
            Err(code) => code,
        },
        WorkflowCmd::Check { dir } => check(&dir),
    }
}

/// Refuses (exit 1) a pin whose `checksums.txt` lists no archive of this
/// version for a release target, unless `allow`; warns when it cannot know.
fn judge_release(dir: &Path, pin: Option<&str>, allow: bool) -> Result<(), ExitCode> {
    let version = sweepkit::VERSION;
    let path = dir.join(WORKFLOW_FILE);
    match sweepkit::release(pin) {
        Ok(Release::Listed { .. }) => Ok(()),
        Ok(Release::Unlisted { pin, missing }) => {
            let what = format!(
                "actions/setup/checksums.txt at the pinned commit {pin} lists no release archive of sweepkit {version} for {}: every setup step of the written workflow would fail (\"no release archive of sweepkit {version}\")",
                missing.join(", ")
            );
            if allow {
                eprintln!(
                    "warning: {what}; written anyway (--allow-unreleased): set `build-from-source: true` in your caller's `with:` so the setup steps build the binaries with cargo"
                );
                Ok(())
            } else {
                let msg = format!(
                    "{what}. Fix: run `sweepkit workflow write --ref <SHA>` with the pin the release notes of v{version} name (the commit that lists its checksums); or, to build the binaries on the runners instead, pass `--allow-unreleased` and set `build-from-source: true` in your caller's `with:`"
                );
                eprintln!("error: {msg}");
                annotate(&path, &msg);
                Err(exit::rejected())
            }
        }
        Ok(Release::Unknown { pin, embedded }) => {
            eprintln!(
                "warning: sweepkit {version} cannot check here whether {pin} lists release archives of sweepkit {version} (it knows the checksums at {embedded} only); if it lists none, every setup step fails: use the pin the release notes of v{version} name, or set `build-from-source: true` in your caller's `with:`"
            );
            Ok(())
        }
        Err(e) => {
            eprintln!("error: {e}");
            annotate(&path, &e.to_string());
            Err(exit::failed())
        }
    }
}

fn write(dir: &Path, pin: Option<&str>) -> ExitCode {
    match sweepkit::write(dir, pin) {
        Ok(path) => {
            eprintln!(
                "wrote {} (sweepkit {}); call it from your run-sweep.yml with `uses: ./{}`",
                path.display(),
                sweepkit::VERSION,
                Path::new(".github/workflows").join(WORKFLOW_FILE).display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            annotate(&dir.join(WORKFLOW_FILE), &e.to_string());
            exit::failed()
        }
    }
}

fn check(dir: &Path) -> ExitCode {
    let path = dir.join(WORKFLOW_FILE);
    let fail = |msg: String| {
        eprintln!("error: {msg}");
        annotate(&path, &msg);
        exit::rejected()
    };
    match sweepkit::check(&path) {
        Ok(Verdict::Unchanged { pin }) => {
            eprintln!(
                "{}: unchanged since `sweepkit workflow write` (sweepkit {}, actions at {pin})",
                path.display(),
                sweepkit::VERSION
            );
            ExitCode::SUCCESS
        }
        Ok(Verdict::Edited { reason }) => fail(format!(
            "{}: {reason}; undo the edit or run `sweepkit workflow write`",
            path.display()
        )),
        Ok(Verdict::OtherVersion { written_by }) => fail(format!(
            "{}: written by sweepkit {written_by}, this is sweepkit {}; run `sweepkit workflow write` to upgrade it (or check with sweepkit {written_by})",
            path.display(),
            sweepkit::VERSION
        )),
        Ok(Verdict::NotGenerated) => fail(format!(
            "{}: its hash matches, but sweepkit {} would write different content; run `sweepkit workflow write`",
            path.display(),
            sweepkit::VERSION
        )),
        Err(e) => {
            eprintln!("error: {e}");
            annotate(&path, &e.to_string());
            exit::failed()
        }
    }
}
