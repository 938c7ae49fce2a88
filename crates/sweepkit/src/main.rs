//! `sweepkit`: vendors the sweep workflows into a benchmark repository
//! (`sweepkit workflow write`) and checks that they are unchanged
//! (`sweepkit workflow check`, with a unified diff of any edit). Exit status: 0 ok, 1 the check failed (or
//! `write` refused a pin whose setup action cannot install this version),
//! 2 the file could not be written or read (or a usage error).
//! Exit codes: docs/exit-codes.md.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

/// The contract of docs/tools/index.md#exit-codes, as this tool keeps it.
const EXIT_CODES: &str = "Exit codes: 0 ok; 1 the check failed (an edited file, or one another \
sweepkit version wrote), a pin refused or a locally edited file kept; 2 the file could not be \
read or written, or a usage error.";

/// sweepkit's adoption command.
#[derive(Parser, Debug)]
#[command(name = "sweepkit", version, about, after_help = EXIT_CODES)]
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
    /// workflow it calls, `<dir>/sweepkit-sweep-legs.yml` (mode 0644).
    /// Refused (exit 1) when the pinned commit's `actions/setup/checksums.txt`
    /// lists no release archive of this version for a release target, or
    /// when a file there holds local edits or is not sweepkit's (its diff
    /// printed; `--force` replaces it).
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
        /// Replace a file that holds local edits (or that sweepkit did not
        /// write); without it such a file is kept, its diff printed, exit 1.
        #[arg(long)]
        force: bool,
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

fn main() -> ExitCode {
    let Cmd::Workflow(cmd) = Cli::parse().cmd;
    sweep_cli::main("sweepkit", || match cmd {
        WorkflowCmd::Write {
            dir,
            pin,
            allow_unreleased,
            force,
        } => {
            cmd::judge_release(&dir, pin.as_deref(), allow_unreleased)?;
            cmd::write(&dir, pin.as_deref(), force)
        }
        WorkflowCmd::Check { dir } => cmd::check(&dir),
    })
}
