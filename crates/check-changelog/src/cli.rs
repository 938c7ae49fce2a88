//! The flags of `check-changelog` and their translation into the library's
//! options (`sweep_changelog::gate`).

use crate::dry_run;
use clap::{Args, Parser, Subcommand};
use sweep_changelog::gate::{self, GateOptions, MergeMode, MergeOptions, PrepareError};
use sweep_changelog::git::Repo;
use sweep_changelog::strict;

/// The exit codes, as `--help` prints them (docs/tools/check-changelog.md).
const EXIT_CODES: &str = "Exit codes: 0 accepted; 1 rejected (the reason on stderr as \
`check-changelog: error: perf-changelog.yaml:<line>: …`); 2 usage, or a git ref, the changelog or a \
config that cannot be read.";

/// Command line of `check-changelog`.
#[derive(Debug, Parser)]
#[command(
    name = "check-changelog",
    version,
    about = "Gate perf-changelog.yaml changes between two git refs",
    after_help = EXIT_CODES,
    args_conflicts_with_subcommands = true,
    infer_long_args = true,
    args_override_self = true,
    subcommand_negates_reqs = true
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) check: CheckArgs,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// Flags of the gate itself.
#[derive(Debug, Clone, Args)]
pub(crate) struct CheckArgs {
    /// Older revision (a PR's `origin/<base branch>`).
    #[arg(long, env = "INPUT_BASE_REF", required = true)]
    base_ref: Option<String>,
    /// Newer revision (the PR head SHA).
    #[arg(long, env = "INPUT_HEAD_REF", required = true)]
    head_ref: Option<String>,
    /// Changelog path relative to the repository root.
    #[arg(
        long,
        env = "INPUT_CHANGELOG_FILE",
        default_value = "perf-changelog.yaml"
    )]
    pub(crate) changelog_file: String,
    /// Generate as with `--all-evals` (PR label `all-evals`).
    #[arg(long, env = "INPUT_ALL_EVALS")]
    all_evals: bool,
    /// Generate as with `--evals-only` (PR label `evals-only`).
    #[arg(long, env = "INPUT_EVALS_ONLY")]
    evals_only: bool,
    /// Also apply the byte-level rules (CR, tabs, NUL, duplicate keys,
    /// separators, append-at-end, pr-link rules) to the whole file.
    #[arg(long, env = "INPUT_STRICT")]
    strict: bool,
    /// With --strict: the PR number; new entries may then use an `XXX`
    /// placeholder or this PR's link (without it they need a canonical link).
    #[arg(long, env = "INPUT_PR_NUMBER")]
    pr_number: Option<u64>,
    /// With --strict: repository whose pull-request links are canonical.
    #[arg(long, env = "INPUT_REPO", default_value = strict::DEFAULT_REPO)]
    repo: String,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Rewrite the changelog so the branch appends cleanly after its base.
    #[command(subcommand)]
    PrepareMerge(MergeCommand),
    /// Before pushing: run the gate, then print the legs the sweep will
    /// schedule per runner type and bucket, with estimated GPU-hours.
    DryRun(dry_run::DryRunArgs),
}

/// Flags shared by the `prepare-merge` modes.
#[derive(Debug, Clone, Args)]
pub(crate) struct MergeCommon {
    /// Changelog path (read and rewritten in the working tree).
    #[arg(long, default_value = "perf-changelog.yaml")]
    changelog_file: String,
    /// Repository of the pull-request links.
    #[arg(long, default_value = strict::DEFAULT_REPO)]
    repo: String,
}

/// `prepare-merge` modes.
#[derive(Debug, Subcommand)]
pub(crate) enum MergeCommand {
    /// Replace `XXX` pr-link placeholders of the entries this PR appends
    /// (relative to BASE_REF) with the PR's link.
    Canonicalize {
        #[arg(long)]
        base_ref: String,
        /// The PR number; appended entries get `https://github.com/<repo>/pull/<N>`.
        #[arg(long)]
        pr_number: u64,
        #[command(flatten)]
        common: MergeCommon,
    },
    /// During a conflicted `git merge <base>` (or `git rebase <base>`,
    /// detected, where the stages swap): rebuild the changelog as the base
    /// branch's bytes plus this PR's own entries (index stages 1, 2, 3).
    ResolveConflict {
        /// The PR number; appended entries get its link. Without it (before
        /// the PR exists) they keep their pr-link as written (`XXX`).
        #[arg(long)]
        pr_number: Option<u64>,
        #[command(flatten)]
        common: MergeCommon,
    },
    /// A branch that is behind BASE_REF: rebuild the working-tree changelog
    /// as BASE_REF's bytes plus this branch's own entries (the same
    /// resolution, with the merge base, the working tree and BASE_REF).
    CatchUp {
        #[arg(long)]
        base_ref: String,
        /// The PR number; appended entries get its link. Without it (before
        /// the PR exists) they keep their pr-link as written (`XXX`).
        #[arg(long)]
        pr_number: Option<u64>,
        #[command(flatten)]
        common: MergeCommon,
    },
}

impl CheckArgs {
    pub(crate) fn options(&self) -> GateOptions {
        GateOptions {
            base_ref: self.base_ref.clone().unwrap_or_default(),
            head_ref: self.head_ref.clone().unwrap_or_default(),
            changelog_file: self.changelog_file.clone(),
            all_evals: self.all_evals,
            evals_only: self.evals_only,
            strict: self.strict,
            pr_number: self.pr_number,
            repo: self.repo.clone(),
        }
    }
}

/// `prepare-merge` with the flags turned into the library's mode and options.
pub(crate) fn prepare(repo: &Repo, cmd: &MergeCommand) -> Result<String, PrepareError> {
    let (mode, pr_number, common) = match cmd {
        MergeCommand::Canonicalize {
            base_ref,
            pr_number,
            common,
        } => (
            MergeMode::Canonicalize {
                base_ref: base_ref.clone(),
            },
            Some(*pr_number),
            common,
        ),
        MergeCommand::ResolveConflict { pr_number, common } => {
            (MergeMode::ResolveConflict, *pr_number, common)
        }
        MergeCommand::CatchUp {
            base_ref,
            pr_number,
            common,
        } => (
            MergeMode::CatchUp {
                base_ref: base_ref.clone(),
            },
            *pr_number,
            common,
        ),
    };
    let opts = MergeOptions {
        changelog_file: common.changelog_file.clone(),
        pr_number,
        repo: common.repo.clone(),
    };
    gate::prepare_merge(repo, &mode, &opts)
}
