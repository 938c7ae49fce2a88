//! `sweepkit`: vendors the sweep workflows into a benchmark repository
//! (`sweepkit workflow write`) and checks that they are unchanged
//! (`sweepkit workflow check`, with a unified diff of any edit). Exit status: 0 ok, 1 the check failed (or
//! `write` refused a pin whose setup action cannot install this version),
//! 2 the file could not be written or read (or a usage error).
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sweep_model::exit;

use clap::{Parser, Subcommand};
use sweepkit::{FILES, Release, Verdict, WORKFLOW_FILE};

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
    /// Write (or upgrade) `<dir>/sweepkit-run-sweep.yml` and the leg
    /// workflow it calls, `<dir>/sweepkit-sweep-legs.yml`. Refused (exit 1)
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
    /// Fail (exit 1) when a file `write` writes changed since it was
    /// written (printing the unified diff), or was written by another
    /// sweepkit version.
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
        Ok(paths) => {
            for path in &paths {
                eprintln!("wrote {} (sweepkit {})", path.display(), sweepkit::VERSION);
            }
            eprintln!(
                "call the sweep from your run-sweep.yml with `uses: ./{}`",
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

/// Checks every file of [`FILES`]: exit 1 when any is not as written (its
/// diff printed), 2 when one cannot be read.
fn check(dir: &Path) -> ExitCode {
    let mut worst = ExitCode::SUCCESS;
    let mut failed = false;
    for (name, _) in FILES {
        let path = dir.join(name);
        match check_one(&path) {
            Ok(true) => {}
            Ok(false) => {
                if !failed {
                    worst = exit::rejected();
                }
            }
            Err(code) => {
                failed = true;
                worst = code;
            }
        }
    }
    worst
}

/// One file: Ok(true) unchanged, Ok(false) the check said no, Err on I/O.
fn check_one(path: &Path) -> Result<bool, ExitCode> {
    let fail = |msg: String, diff: &str| {
        eprintln!("error: {msg}");
        annotate(path, &msg);
        if !diff.is_empty() {
            println!("{diff}");
        }
        Ok(false)
    };
    match sweepkit::check(path) {
        Ok((Verdict::Unchanged { pin }, _)) => {
            eprintln!(
                "{}: unchanged since `sweepkit workflow write` (sweepkit {}, actions at {pin})",
                path.display(),
                sweepkit::VERSION
            );
            Ok(true)
        }
        Ok((Verdict::Edited { reason }, diff)) => fail(
            format!(
                "{}: {reason}; undo the edit or run `sweepkit workflow write` (the diff from what it wrote follows)",
                path.display()
            ),
            &diff,
        ),
        Ok((Verdict::OtherVersion { written_by }, diff)) => fail(
            format!(
                "{}: written by sweepkit {written_by}, this is sweepkit {}; run `sweepkit workflow write` to upgrade it (or check with sweepkit {written_by})",
                path.display(),
                sweepkit::VERSION
            ),
            &diff,
        ),
        Ok((Verdict::NotGenerated, diff)) => fail(
            format!(
                "{}: its hash matches, but sweepkit {} would write different content; run `sweepkit workflow write`",
                path.display(),
                sweepkit::VERSION
            ),
            &diff,
        ),
        Ok((Verdict::Unknown, _)) => fail(
            format!(
                "{}: not a file `sweepkit workflow write` writes",
                path.display()
            ),
            "",
        ),
        Err(e) => {
            eprintln!("error: {e}");
            annotate(path, &e.to_string());
            Err(exit::failed())
        }
    }
}
