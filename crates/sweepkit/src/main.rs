//! `sweepkit`: vendors the sweep workflow into a benchmark repository
//! (`sweepkit workflow write`) and checks that it is unchanged
//! (`sweepkit workflow check`). Exit status: 0 ok, 1 the check failed,
//! 2 the file could not be written or read (or a usage error).
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sweep_model::exit;

use clap::{Parser, Subcommand};
use sweepkit::{Verdict, WORKFLOW_FILE};

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
    /// Write (or upgrade) `<dir>/sweepkit-run-sweep.yml`.
    Write {
        /// The repository's workflow directory.
        #[arg(long, default_value = ".github/workflows")]
        dir: PathBuf,
        /// Pin sweepkit's actions at this commit (40 hex) instead of the
        /// commit this build's workflow names (a release's notes name it).
        #[arg(long = "ref", value_name = "SHA")]
        pin: Option<String>,
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
        WorkflowCmd::Write { dir, pin } => match sweepkit::write(&dir, pin.as_deref()) {
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
        },
        WorkflowCmd::Check { dir } => {
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
    }
}
