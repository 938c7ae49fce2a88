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

use crate::estimate::{self, Estimate, Source};

/// Flags of `check-changelog dry-run`: the gate's, plus the plan's.
#[derive(Debug, Clone, Args)]
pub(crate) struct DryRunArgs {
    /// Older revision: the branch the PR will target.
    #[arg(long, default_value = "origin/main")]
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
    /// With GITHUB_TOKEN or GH_TOKEN set, the repository whose sweep
    /// history gives the second estimate (the legs' last successful jobs)
    /// [default: GITHUB_REPOSITORY, else --repo].
    #[arg(long)]
    history_repo: Option<String>,
    /// The sweep workflow whose runs are read for that estimate.
    #[arg(long, default_value = "run-sweep.yml")]
    history_workflow: String,
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

/// The estimate from the sweep history, when a token is set; `None`
/// without one, or (with a warning) when the history cannot be read: the
/// plan and its upper bound stand on their own.
fn history_estimate(args: &DryRunArgs, plan: &dry_run::Plan) -> Option<Estimate> {
    let config = github_client::Config::from_env(&["GITHUB_TOKEN", "GH_TOKEN"]);
    config.token.as_ref()?;
    if plan.legs.is_empty() {
        return None;
    }
    let source = Source {
        repo: args.history_repo.clone().unwrap_or_else(|| {
            std::env::var("GITHUB_REPOSITORY")
                .ok()
                .filter(|r| !r.trim().is_empty())
                .unwrap_or_else(|| args.repo.clone())
        }),
        workflow: args.history_workflow.clone(),
    };
    let found = github_client::Client::new(config)
        .and_then(|client| estimate::estimate(&client, &source, plan));
    match found {
        Ok(e) => Some(e),
        Err(e) => {
            eprintln!(
                "warning: check-changelog dry-run: no estimate from the job history of {} {}: {e}",
                source.repo, source.workflow
            );
            None
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
    let estimate = history_estimate(args, &plan);
    let text = if args.json {
        let mut json = plan.to_json();
        if let (Some(e), Some(map)) = (&estimate, json.as_object_mut()) {
            map.insert("estimate".into(), e.to_json(&plan));
        }
        serde_json::to_string_pretty(&json)
            .map_err(|e| Failure::failed(e).context("dry-run: cannot encode the plan as JSON"))?
            + "\n"
    } else {
        let mut text = plan.render();
        if let Some(e) = &estimate {
            text.push_str(&e.render(&plan));
        }
        text
    };
    stdout::print(&text);
    Ok(())
}
