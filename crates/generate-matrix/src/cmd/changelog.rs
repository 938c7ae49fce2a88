//! `generate-matrix changelog`: the flags, and the matrix or the rejection
//! the pipeline (`sweep_changelog::pipeline`) returns written out.

use clap::Args;
use sweep_changelog::git::Repo;
use sweep_changelog::pipeline::{self, Options};
use sweep_changelog::report::{AnnotationStream, report};
use sweep_cli::{Classify as _, Failure, Outcome};

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
pub(crate) fn run(args: &ChangelogArgs) -> Outcome {
    let repo = Repo::new(".");
    match pipeline::run(&repo, &args.options()) {
        Ok(matrix) => {
            let s = serde_json::to_string(&matrix)
                .map_err(|e| Failure::failed(e).context("cannot serialise the matrix"))?;
            sweep_cli::stdout::println(&s);
            Ok(())
        }
        Err(r) => {
            // The rejection's own report, annotated on the changelog line
            // it is about; stdout is the matrix (the action captures it),
            // so the annotation goes to stderr.
            let prefix = sweep_cli::error_prefix(crate::TOOL);
            report(
                &repo,
                &args.changelog_file,
                &prefix,
                &r,
                AnnotationStream::Stderr,
            );
            // 1 the change is rejected, 2 a ref or file could not be read.
            Err(Failure::reported(r.kind()))
        }
    }
}
