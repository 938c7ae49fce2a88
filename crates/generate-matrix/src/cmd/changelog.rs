//! `generate-matrix changelog`: the flags, and the matrix or the rejection
//! the pipeline (`sweep_changelog::pipeline`) returns written out.

use clap::Args;
use std::io::Write as _;
use std::process::ExitCode;
use sweep_changelog::git::Repo;
use sweep_changelog::pipeline::{self, Options};
use sweep_changelog::report::{AnnotationStream, report};
use sweep_model::exit;

/// Flags of `generate-matrix changelog`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ChangelogArgs {
    /// Older revision of the diff.
    #[arg(long, env = "INPUT_BASE_REF")]
    pub(crate) base_ref: String,
    /// Newer revision of the diff.
    #[arg(long, env = "INPUT_HEAD_REF")]
    pub(crate) head_ref: String,
    /// Changelog path (a git pathspec, relative to the repository root).
    #[arg(long, env = "INPUT_CHANGELOG_FILE")]
    pub(crate) changelog_file: String,
    /// Keep one (the lowest) concurrency per recipe.
    #[arg(long, env = "INPUT_TRIM_CONC")]
    pub(crate) trim_conc: bool,
    /// Expand every entry's eval selection, keep throughput.
    #[arg(long, env = "INPUT_ALL_EVALS")]
    pub(crate) all_evals: bool,
    /// Suppress throughput for every entry (default eval subset).
    #[arg(long, env = "INPUT_EVALS_ONLY")]
    pub(crate) evals_only: bool,
}

impl ChangelogArgs {
    /// The pipeline options these flags stand for.
    pub(crate) fn options(&self) -> Options {
        Options {
            base_ref: self.base_ref.clone(),
            head_ref: self.head_ref.clone(),
            changelog_file: self.changelog_file.clone(),
            trim_conc: self.trim_conc,
            all_evals: self.all_evals,
            evals_only: self.evals_only,
        }
    }
}

/// `generate-matrix changelog`: 0 with the matrix on stdout, 1 on rejection,
/// 2 when a git ref, the changelog or a config cannot be read.
pub(crate) fn run(args: &ChangelogArgs) -> ExitCode {
    let repo = Repo::new(".");
    match pipeline::run(&repo, &args.options()) {
        Ok(v) => {
            // Written by hand (not println!) so a closed stdout is an error
            // message, not a panic.
            let written = serde_json::to_string(&v)
                .map_err(std::io::Error::other)
                .and_then(|s| {
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "{s}").and_then(|()| out.flush())
                });
            match written {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: cannot write the matrix to stdout: {e}");
                    ExitCode::from(exit::FAILED)
                }
            }
        }
        Err(r) => {
            // stdout is the matrix (the action captures it): annotate on stderr.
            report(
                &repo,
                &args.changelog_file,
                "error: ",
                &r,
                AnnotationStream::Stderr,
            );
            // 1 the change is rejected, 2 a ref or file could not be read.
            ExitCode::from(sweep_cli::Classify::kind(&r).code())
        }
    }
}
