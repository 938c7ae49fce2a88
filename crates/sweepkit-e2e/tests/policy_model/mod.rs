//! Test support shared by `sweep_policy.rs` and `gating.rs`: a model of how
//! `run-sweep.yml` chains the policy's answers with the results of the
//! `check-changelog` and `reuse-sweep-gate` jobs ([`simulate`]), and the
//! reference gating test's scenarios ([`gating_cross_product`]). Moved here
//! from `sweep_matrix::policy`, whose public API they were only for tests.

#![allow(dead_code)] // each test binary uses part of it

use sweep_matrix::policy::{Decisions, PolicyInput};

/// Result of a job as GitHub reports it in `needs.<job>.result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobResult {
    Success,
    Failure,
    Skipped,
}

/// What actually happened to the first three jobs of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chain {
    pub(crate) check_changelog: JobResult,
    pub(crate) reuse_gate: JobResult,
    /// `setup` runs.
    pub(crate) setup: bool,
}

/// Models `run-sweep.yml`'s first three jobs: `check-changelog` runs when
/// `Decisions::run_check_changelog` and fails on conflicting labels or an
/// invalid changelog; the gate runs only after a successful check; setup runs
/// after a successful or skipped check, when the gate was skipped or found no
/// authorisation, and `Decisions::run_setup`.
pub(crate) fn simulate(d: &Decisions, changelog_valid: bool, reuse_authorised: bool) -> Chain {
    let check_changelog = if !d.run_check_changelog {
        JobResult::Skipped
    } else if d.conflicting_labels || !changelog_valid {
        JobResult::Failure
    } else {
        JobResult::Success
    };
    let gate_runs = check_changelog == JobResult::Success && d.run_reuse_gate;
    let reuse_gate = if gate_runs {
        JobResult::Success
    } else {
        JobResult::Skipped
    };
    let gate_ok = !gate_runs || !reuse_authorised;
    let setup = matches!(check_changelog, JobResult::Success | JobResult::Skipped)
        && gate_ok
        && d.run_setup;
    Chain {
        check_changelog,
        reuse_gate,
        setup,
    }
}

/// The pull-request scenarios of the reference's gating test (workflow.md
/// §3.3), for checking a policy against its intent: 4 actions × draft or
/// not × 23 label sets × 12 event labels × reuse authorised or not ×
/// changelog valid or not × 2 commit messages = 17 664 cases, each
/// `(event, changelog valid, reuse authorised)`, on `repository`. Together
/// with a push of each of [`GATING_PUSH_MESSAGES`] that is the reference's
/// 17 666.
#[must_use]
pub(crate) fn gating_cross_product(repository: &str) -> Vec<(PolicyInput, bool, bool)> {
    const LABEL_SETS: &[&[&str]] = &[
        &[],
        &["sweep-enabled"],
        &["full-sweep-enabled"],
        &["non-canary-full-sweep-enabled"],
        &["full-sweep-fail-fast"],
        &["full-sweep-fail-fast-no-canary"],
        &["all-evals"],
        &["evals-only"],
        &["agentx-fast"],
        &["all-evals", "evals-only"],
        &["documentation"],
        &["sweep-enabled", "full-sweep-enabled"],
        &["full-sweep-enabled", "full-sweep-fail-fast"],
        &["sweep-enabled", "all-evals"],
        &["full-sweep-enabled", "all-evals"],
        &["sweep-enabled", "evals-only"],
        &["full-sweep-enabled", "evals-only"],
        &["sweep-enabled", "agentx-fast"],
        &["full-sweep-enabled", "agentx-fast"],
        &["sweep-enabled", "all-evals", "evals-only"],
        &["full-sweep-enabled", "all-evals", "evals-only"],
        &["skip_queue"],
        &["full-sweep-enabled", "skip_queue"],
    ];
    const EVENT_LABELS: [Option<&str>; 12] = [
        Some("full-sweep-enabled"),
        Some("sweep-enabled"),
        Some("all-evals"),
        Some("evals-only"),
        Some("agentx-fast"),
        Some("skip_queue"),
        Some("ci-patchwork"),
        Some("engine-patch"),
        Some("ci-patchwork-waived"),
        Some("ci-checklist-complete"),
        Some("documentation"),
        None,
    ];
    let mut out = Vec::with_capacity(17_664);
    for action in ["ready_for_review", "synchronize", "labeled", "unlabeled"] {
        for draft in [false, true] {
            for labels in LABEL_SETS {
                for label in EVENT_LABELS {
                    for auth in [false, true] {
                        for valid in [true, false] {
                            for msg in GATING_PUSH_MESSAGES {
                                let event = PolicyInput {
                                    event_name: "pull_request".into(),
                                    action: action.into(),
                                    draft,
                                    label: label.map(str::to_string),
                                    labels: labels.iter().map(|s| (*s).to_string()).collect(),
                                    head_commit_message: msg.into(),
                                    head_repo: Some(repository.into()),
                                    repository: repository.into(),
                                    git_ref: "refs/pull/1/merge".into(),
                                };
                                out.push((event, valid, auth));
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// The commit messages of [`gating_cross_product`], also pushed once each.
pub(crate) const GATING_PUSH_MESSAGES: [&str; 2] = ["feat: add model", "fix: thing [skip-sweep]"];
