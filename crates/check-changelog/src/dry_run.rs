//! `check-changelog dry-run`: the gate, then the legs the sweep would
//! schedule for the change (a table, or JSON with `--json`). The work is in
//! `sweep_changelog::dry_run`; this module holds the flags and the exit
//! codes (0 planned, 1 the gate rejected, 2 the plan could not be written).

use clap::Args;
use sweep_changelog::dry_run::{self, DryRunError, MAX_LEG_MINUTES};
use sweep_changelog::gate::GateOptions;
use sweep_changelog::git::Repo;
use sweep_changelog::report::{AnnotationStream, report};
use sweep_changelog::strict;
use sweep_cli::{Classify, Failure, Outcome, stdout};

/// Flags of `check-changelog dry-run`: the gate's, plus the plan's.
#[derive(Debug, Clone, Args)]
pub(crate) struct DryRunArgs {
    /// Older revision (the branch the PR will target, e.g. `origin/main`).
    #[arg(long)]
    base_ref: String,
    /// Newer revision: the commit to be pushed (uncommitted changelog edits
    /// are not seen; the configs are read from the working tree).
    #[arg(long, default_value = "HEAD")]
    head_ref: String,
    /// Changelog path relative to the repository root.
    #[arg(long, default_value = "perf-changelog.yaml")]
    changelog_file: String,
    /// Plan as with the PR label `all-evals`.
    #[arg(long)]
    all_evals: bool,
    /// Plan as with the PR label `evals-only`.
    #[arg(long)]
    evals_only: bool,
    /// Plan as with `--trim-conc` (one concurrency per recipe).
    #[arg(long)]
    trim_conc: bool,
    /// Also apply the byte-level rules, as `check-changelog --strict`.
    #[arg(long)]
    strict: bool,
    /// With --strict: the PR number (allows `XXX` and this PR's link).
    #[arg(long)]
    pr_number: Option<u64>,
    /// With --strict: repository whose pull-request links are canonical.
    #[arg(long, default_value = strict::DEFAULT_REPO)]
    repo: String,
    /// Print JSON (every leg with its matrix row, and the summary rows).
    #[arg(long)]
    json: bool,
    /// Minutes charged to every leg [default: each leg's job timeout in the
    /// reference workflows: 500 single-node, 480 multi-node, 780 multi-node
    /// agentic].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_LEG_MINUTES)))]
    leg_minutes: Option<u32>,
}

impl DryRunArgs {
    fn gate_options(&self) -> GateOptions {
        GateOptions {
            base_ref: self.base_ref.clone(),
            head_ref: self.head_ref.clone(),
            changelog_file: self.changelog_file.clone(),
            all_evals: self.all_evals,
            evals_only: self.evals_only,
            strict: self.strict,
            pr_number: self.pr_number,
            repo: self.repo.clone(),
        }
    }
}

/// Runs the dry run in the current directory.
pub(crate) fn run(args: &DryRunArgs) -> Outcome {
    let repo = Repo::new(".");
    let plan = match dry_run::run(
        &repo,
        &args.gate_options(),
        args.trim_conc,
        args.leg_minutes,
    ) {
        Ok(plan) => plan,
        Err(DryRunError::Rejected(r)) => {
            // stdout is the plan: the gate's messages go to stderr.
            let prefix = sweep_cli::error_prefix(crate::TOOL);
            report(
                &repo,
                &args.changelog_file,
                &prefix,
                &r,
                AnnotationStream::Stderr,
            );
            // As the gate: 1 the change is rejected, 2 a ref or file could
            // not be read.
            return Err(Failure::reported(r.kind()));
        }
        Err(e @ DryRunError::Matrix(_)) => return Err(Failure::failed(e).context("dry-run")),
    };
    let text = if args.json {
        serde_json::to_string_pretty(&plan.to_json())
            .map_err(|e| Failure::failed(e).context("dry-run: cannot encode the plan as JSON"))?
            + "\n"
    } else {
        plan.render()
    };
    stdout::print(&text);
    Ok(())
}
