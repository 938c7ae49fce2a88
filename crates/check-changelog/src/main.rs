//! `check-changelog`: gate perf-changelog.yaml changes between two git refs
//! (exit 0 accepted, 1 rejected, 2 usage or an unreadable ref or file; see
//! docs/exit-codes.md). The gate lives in `sweep_changelog::gate`; the flags
//! in [`cli`]; `dry-run` (module [`dry_run`]) prints the legs a change will
//! schedule.

mod cli;
mod dry_run;
mod estimate;

use clap::Parser;
use cli::{Cli, Command};
use std::process::ExitCode;
use sweep_changelog::gate;
use sweep_changelog::git::Repo;
use sweep_changelog::report::{AnnotationStream, report};
use sweep_cli::{Classify, Failure, Outcome, stdout};
use sweep_model::gha::{self, Level};

/// The tool's name in `check-changelog: error: …` messages.
pub(crate) const TOOL: &str = "check-changelog";

fn run(cli: &Cli) -> Outcome {
    let repo = Repo::new(".");
    match &cli.command {
        Some(Command::DryRun(args)) => dry_run::run(args),
        Some(Command::PrepareMerge(cmd)) => {
            let msg =
                cli::prepare(&repo, cmd).map_err(|e| Failure::from(e).context("prepare-merge"))?;
            stdout::println(&msg);
            Ok(())
        }
        None => match gate::check(&repo, &cli.check.options()) {
            Ok(accepted) => {
                for w in &accepted.warnings {
                    let msg = w.message();
                    eprintln!("warning: {TOOL}: {msg}");
                    let (file, line) = w.at.clone().unzip();
                    gha::annotate(Level::Warning, file.as_deref(), line.flatten(), &msg);
                }
                stdout::println(&accepted.message);
                Ok(())
            }
            Err(r) => {
                // The gate's own report: the message and an annotation on
                // the changelog line it is about.
                let prefix = sweep_cli::error_prefix(TOOL);
                report(
                    &repo,
                    &cli.check.changelog_file,
                    &prefix,
                    &r,
                    AnnotationStream::Stdout,
                );
                Err(Failure::reported(r.kind()))
            }
        },
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    sweep_cli::main(TOOL, || run(&cli))
}
