//! The sweep's label and trigger policy as code (`generate-matrix sweep-policy`).
//!
//! The reference workflow spells this policy out as `if:` expressions that are
//! copied between jobs (workflow.md §1–§3). Here it is one pure function of
//! the triggering event, [`decide`], whose answers the reusable workflow reads
//! as job outputs, plus [`simulate`], which models how `run-sweep.yml` chains
//! those answers with the results of the `check-changelog` and
//! `reuse-sweep-gate` jobs. The truth-table tests below pin both against every
//! named row of workflow.md §3.3 and against an independent encoding of the
//! intent over the whole cross product the reference's own gating test uses.

use serde::Serialize;

/// The five primary (sweep) labels; more than one on a PR is a conflict.
pub const PRIMARY_LABELS: [&str; 5] = [
    "sweep-enabled",
    "full-sweep-enabled",
    "non-canary-full-sweep-enabled",
    "full-sweep-fail-fast",
    "full-sweep-fail-fast-no-canary",
];

/// Labels that change what a sweep runs without starting one on their own.
pub const MODIFIER_LABELS: [&str; 3] = ["all-evals", "evals-only", "agentx-fast"];

/// Labels read by the priority scheduler; adding or removing one restarts the sweep.
pub const POLICY_LABELS: [&str; 5] = [
    "skip_queue",
    "ci-patchwork",
    "engine-patch",
    "ci-patchwork-waived",
    "ci-checklist-complete",
];

/// Primary labels whose sweeps can be reused (every primary but `sweep-enabled`).
const FULL_SWEEP_LABELS: [&str; 4] = [
    "full-sweep-enabled",
    "non-canary-full-sweep-enabled",
    "full-sweep-fail-fast",
    "full-sweep-fail-fast-no-canary",
];

/// Modifiers that rule reuse out (the gate job is skipped when one is present).
const REUSE_INCOMPATIBLE_LABELS: [&str; 2] = ["evals-only", "agentx-fast"];

/// Primary labels that get a canary job.
const CANARY_LABELS: [&str; 2] = ["full-sweep-enabled", "full-sweep-fail-fast"];

/// Primary labels whose matrices are fail-fast.
const FAIL_FAST_LABELS: [&str; 2] = ["full-sweep-fail-fast", "full-sweep-fail-fast-no-canary"];

/// The commit-message tag that skips the PR-side sweep.
pub const SKIP_SWEEP_TAG: &str = "[skip-sweep]";

/// True for a primary, modifier or policy label (the 13 relevant labels).
pub fn is_relevant_label(label: &str) -> bool {
    PRIMARY_LABELS.contains(&label)
        || MODIFIER_LABELS.contains(&label)
        || POLICY_LABELS.contains(&label)
}

/// Everything the policy looks at, all taken from the triggering event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyInput {
    /// `github.event_name` (`pull_request`, `push`, …).
    pub event_name: String,
    /// `github.event.action` (`synchronize`, `labeled`, …); empty for push.
    pub action: String,
    /// `github.event.label.name` for labeled/unlabeled events.
    pub label: Option<String>,
    /// The PR's label names after the event (exact element matching).
    pub labels: Vec<String>,
    /// `github.event.pull_request.draft`.
    pub draft: bool,
    /// The head commit message (PR head, or the pushed head commit).
    pub head_commit_message: String,
    /// `github.event.pull_request.head.repo.full_name`. `None` (or empty)
    /// means unknown (a deleted fork has `head.repo: null`) and is treated as
    /// a fork: the PR's code never reaches the self-hosted runners unless the
    /// head repository is known to be this one.
    pub head_repo: Option<String>,
    /// `github.repository`.
    pub repository: String,
    /// `github.ref` (`refs/heads/main` for pushes to main).
    pub git_ref: String,
}

/// The decisions, as the workflow reads them (every field is a job output).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Decisions {
    /// The `check-changelog` job runs.
    pub run_check_changelog: bool,
    /// More than one primary label: `check-changelog` fails, nothing sweeps.
    pub conflicting_labels: bool,
    /// The primary label, when there is exactly one.
    pub primary_label: String,
    /// `[skip-sweep]` in the head commit message of a PR (ignored on push).
    pub skip_pr_sweep: bool,
    /// The `reuse-sweep-gate` job runs (given `check-changelog` succeeded).
    pub run_reuse_gate: bool,
    /// `setup` runs (given `check-changelog` succeeded or was skipped, and the
    /// gate was skipped or found no authorisation).
    pub run_setup: bool,
    /// The canary job is selected (given reuse is not enabled).
    pub canary: bool,
    /// Fan-out matrices are fail-fast.
    pub fail_fast: bool,
    /// `--trim-conc` for the matrix generator.
    pub trim_conc: bool,
    /// `--all-evals` for the validator and the generator.
    pub all_evals: bool,
    /// `--evals-only` for the validator and the generator.
    pub evals_only: bool,
    /// `agentx-fast: true` for the agentic throughput families.
    pub agentx_fast: bool,
    /// The unofficial-run visualizer comment is posted (given setup succeeded).
    pub comment: bool,
    /// Push to `refs/heads/main`: the ingest dispatch jobs may run.
    pub push_to_main: bool,
    /// Suffix of the concurrency group: `active`, or `private` for label events
    /// whose label is not relevant (such runs must cancel nothing).
    pub concurrency: &'static str,
}

impl Decisions {
    /// `(key, value)` pairs in output order, values as the workflow compares
    /// them (`true`/`false` strings).
    pub fn outputs(&self) -> Vec<(&'static str, String)> {
        let b = |v: bool| v.to_string();
        vec![
            ("run-check-changelog", b(self.run_check_changelog)),
            ("conflicting-labels", b(self.conflicting_labels)),
            ("primary-label", self.primary_label.clone()),
            ("skip-pr-sweep", b(self.skip_pr_sweep)),
            ("run-reuse-gate", b(self.run_reuse_gate)),
            ("run-setup", b(self.run_setup)),
            ("canary", b(self.canary)),
            ("fail-fast", b(self.fail_fast)),
            ("trim-conc", b(self.trim_conc)),
            ("all-evals", b(self.all_evals)),
            ("evals-only", b(self.evals_only)),
            ("agentx-fast", b(self.agentx_fast)),
            ("comment", b(self.comment)),
            ("push-to-main", b(self.push_to_main)),
            ("concurrency", self.concurrency.to_string()),
        ]
    }
}

/// Computes every decision of workflow.md §2–§3 from the event alone.
pub fn decide(input: &PolicyInput) -> Decisions {
    let is_pr = input.event_name == "pull_request";
    let is_push = input.event_name == "push";
    let has = |l: &str| input.labels.iter().any(|x| x == l);
    let has_any = |set: &[&str]| set.iter().any(|l| has(l));
    let label = input.label.as_deref().unwrap_or("");
    let label_event = input.action == "labeled" || input.action == "unlabeled";

    // Only label events whose label matters re-evaluate the sweep.
    let action_ok = !label_event || is_relevant_label(label);
    // The comment job leaves policy labels out of its list (§17 quirk 1).
    let comment_action_ok =
        !label_event || PRIMARY_LABELS.contains(&label) || MODIFIER_LABELS.contains(&label);

    let primaries: Vec<&str> = PRIMARY_LABELS.iter().copied().filter(|l| has(l)).collect();
    // Fail closed: only a head repository known to be this one is trusted.
    let same_repo = input
        .head_repo
        .as_deref()
        .is_some_and(|r| !r.is_empty() && r == input.repository);
    let skip_pr_sweep = is_pr && input.head_commit_message.contains(SKIP_SWEEP_TAG);

    let run_check_changelog = is_pr && !input.draft && action_ok;
    let run_reuse_gate = is_pr
        && input.action == "synchronize"
        && !input.draft
        && !has_any(&REUSE_INCOMPATIBLE_LABELS)
        && has_any(&FULL_SWEEP_LABELS);
    let pr_setup =
        is_pr && !input.draft && same_repo && !skip_pr_sweep && !primaries.is_empty() && action_ok;

    Decisions {
        run_check_changelog,
        conflicting_labels: primaries.len() > 1,
        primary_label: if primaries.len() == 1 {
            primaries[0].to_string()
        } else {
            String::new()
        },
        skip_pr_sweep,
        run_reuse_gate,
        run_setup: pr_setup || is_push,
        canary: is_pr && has_any(&CANARY_LABELS),
        fail_fast: is_pr && has_any(&FAIL_FAST_LABELS),
        trim_conc: is_pr && has("sweep-enabled"),
        all_evals: is_pr && has("all-evals"),
        evals_only: is_pr && has("evals-only"),
        agentx_fast: is_pr && has("agentx-fast"),
        comment: is_pr && !input.draft && !primaries.is_empty() && comment_action_ok,
        push_to_main: is_push && input.git_ref == "refs/heads/main",
        concurrency: if is_pr && label_event && !is_relevant_label(label) {
            "private"
        } else {
            "active"
        },
    }
}

/// Result of a job as GitHub reports it in `needs.<job>.result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobResult {
    Success,
    Failure,
    Skipped,
}

/// What actually happened to the first three jobs of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chain {
    pub check_changelog: JobResult,
    pub reuse_gate: JobResult,
    /// `setup` runs.
    pub setup: bool,
}

/// Models `run-sweep.yml`'s first three jobs: `check-changelog` runs when
/// [`Decisions::run_check_changelog`] and fails on conflicting labels or an
/// invalid changelog; the gate runs only after a successful check; setup runs
/// after a successful or skipped check, when the gate was skipped or found no
/// authorisation, and [`Decisions::run_setup`].
pub fn simulate(d: &Decisions, changelog_valid: bool, reuse_authorised: bool) -> Chain {
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

/// The error text for conflicting primary labels (the reference's wording).
pub const CONFLICT_MESSAGE: &str = "PR has multiple conflicting sweep labels. Pick exactly one.";

/// Parses the PR label list as the workflow passes it: a JSON array of
/// strings (`toJson(github.event.pull_request.labels.*.name)`); empty,
/// `null` and `[]` mean no labels.
pub fn parse_labels(text: &str) -> Result<Vec<String>, String> {
    let t = text.trim();
    if t.is_empty() || t == "null" {
        return Ok(Vec::new());
    }
    let v: serde_json::Value =
        serde_json::from_str(t).map_err(|e| format!("labels are not valid JSON: {e}"))?;
    let serde_json::Value::Array(items) = v else {
        return Err("labels must be a JSON array of label names".into());
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            serde_json::Value::String(s) => Ok(s),
            // The event payload form: [{"name": "…"}, …].
            serde_json::Value::Object(mut o) => match o.remove("name") {
                Some(serde_json::Value::String(s)) => Ok(s),
                _ => Err(format!("labels[{i}] has no string 'name'")),
            },
            other => Err(format!("labels[{i}] is not a string: {other}")),
        })
        .collect()
}

/// Fills the fields of `input` that were not given explicitly from a GitHub
/// event payload (`$GITHUB_EVENT_PATH`), so the action needs no expressions.
pub fn fill_from_event(input: &mut PolicyInput, event: &serde_json::Value, given: &Given) {
    let s = |v: &serde_json::Value| v.as_str().map(str::to_string);
    if !given.action
        && let Some(a) = event.get("action").and_then(s)
    {
        input.action = a;
    }
    if !given.label {
        input.label = event.pointer("/label/name").and_then(s);
    }
    let pr = event.get("pull_request");
    if let Some(pr) = pr.filter(|p| p.is_object()) {
        if !given.labels {
            input.labels = pr
                .get("labels")
                .and_then(|l| l.as_array())
                .map(|a| a.iter().filter_map(|x| x.get("name").and_then(s)).collect())
                .unwrap_or_default();
        }
        if !given.draft {
            input.draft = pr.get("draft").and_then(|d| d.as_bool()).unwrap_or(false);
        }
        if !given.head_repo {
            input.head_repo = pr.pointer("/head/repo/full_name").and_then(s);
        }
    } else if !given.head_commit_message
        && let Some(m) = event.pointer("/head_commit/message").and_then(s)
    {
        input.head_commit_message = m;
    }
}

/// Which [`PolicyInput`] fields were given explicitly (and so win over the event file).
#[derive(Debug, Clone, Copy, Default)]
pub struct Given {
    pub action: bool,
    pub label: bool,
    pub labels: bool,
    pub draft: bool,
    pub head_repo: bool,
    pub head_commit_message: bool,
}

/// Renders the decisions as a step-summary table.
pub fn summary_markdown(d: &Decisions) -> String {
    let mut md = String::from("### Sweep policy\n\n| decision | value |\n|---|---|\n");
    for (k, v) in d.outputs() {
        md.push_str(&format!("| `{k}` | `{v}` |\n"));
    }
    md
}

/// The pull-request scenarios of the reference's gating test (workflow.md
/// §3.3), for checking a policy against its intent: 4 actions × draft or
/// not × 23 label sets × 12 event labels × reuse authorised or not ×
/// changelog valid or not × 2 commit messages = 17 664 cases, each
/// `(event, changelog valid, reuse authorised)`, on `repository`. Together
/// with a push of each of [`GATING_PUSH_MESSAGES`] that is the reference's
/// 17 666.
#[must_use]
pub fn gating_cross_product(repository: &str) -> Vec<(PolicyInput, bool, bool)> {
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
pub const GATING_PUSH_MESSAGES: [&str; 2] = ["feat: add model", "fix: thing [skip-sweep]"];

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use JobResult::{Failure, Skipped, Success};

    const REPO: &str = "SemiAnalysisAI/InferenceX";

    fn pr(action: &str, labels: &[&str]) -> PolicyInput {
        PolicyInput {
            event_name: "pull_request".into(),
            action: action.into(),
            labels: labels.iter().map(|s| s.to_string()).collect(),
            head_repo: Some(REPO.into()),
            repository: REPO.into(),
            git_ref: "refs/pull/1/merge".into(),
            ..PolicyInput::default()
        }
    }

    fn labeled(action: &str, label: &str, labels: &[&str]) -> PolicyInput {
        PolicyInput {
            label: Some(label.into()),
            ..pr(action, labels)
        }
    }

    fn push(msg: &str) -> PolicyInput {
        PolicyInput {
            event_name: "push".into(),
            head_commit_message: msg.into(),
            repository: REPO.into(),
            git_ref: "refs/heads/main".into(),
            ..PolicyInput::default()
        }
    }

    fn run(input: &PolicyInput, valid: bool, auth: bool) -> (JobResult, JobResult, &'static str) {
        let c = simulate(&decide(input), valid, auth);
        (
            c.check_changelog,
            c.reuse_gate,
            if c.setup { "RUN" } else { "SKIP" },
        )
    }

    /// Every row of workflow.md §3.3, in table order (rows listing
    /// alternatives are expanded into one case per alternative).
    #[test]
    fn truth_table_rows_of_section_3_3() {
        let sync = |l: &[&str]| pr("synchronize", l);
        let mut fork = sync(&["full-sweep-enabled"]);
        fork.head_repo = Some("external/InferenceX".into());
        let mut draft = sync(&["full-sweep-enabled"]);
        draft.draft = true;
        let mut tagged = sync(&["full-sweep-enabled"]);
        tagged.head_commit_message = "fix: docs [skip-sweep]".into();

        // (name, input, changelog valid, reuse authorised,
        //  (check-changelog result, reuse-gate result, setup RUN/SKIP))
        type Row<'a> = (
            &'a str,
            PolicyInput,
            bool,
            bool,
            (JobResult, JobResult, &'a str),
        );
        #[rustfmt::skip]
        let rows: Vec<Row<'_>> = vec![
            ("sync full, no authorisation", sync(&["full-sweep-enabled"]), true, false, (Success, Success, "RUN")),
            ("sync full, authorised", sync(&["full-sweep-enabled"]), true, true, (Success, Success, "SKIP")),
            ("sync two primaries, authorised", sync(&["full-sweep-enabled", "full-sweep-fail-fast"]), true, true, (Failure, Skipped, "SKIP")),
            ("sync full, changelog invalid", sync(&["full-sweep-enabled"]), false, false, (Failure, Skipped, "SKIP")),
            ("sync sweep-enabled", sync(&["sweep-enabled"]), true, false, (Success, Skipped, "RUN")),
            ("sync only all-evals", sync(&["all-evals"]), true, false, (Success, Skipped, "SKIP")),
            ("sync only evals-only", sync(&["evals-only"]), true, false, (Success, Skipped, "SKIP")),
            ("sync only agentx-fast", sync(&["agentx-fast"]), true, false, (Success, Skipped, "SKIP")),
            ("sync no labels", sync(&[]), true, false, (Success, Skipped, "SKIP")),
            ("sync full + all-evals, authorised", sync(&["full-sweep-enabled", "all-evals"]), true, true, (Success, Success, "SKIP")),
            ("sync full + evals-only, authorised", sync(&["full-sweep-enabled", "evals-only"]), true, true, (Success, Skipped, "RUN")),
            ("sync full + agentx-fast, authorised", sync(&["full-sweep-enabled", "agentx-fast"]), true, true, (Success, Skipped, "RUN")),
            ("sync full + all-evals + evals-only, authorised", sync(&["full-sweep-enabled", "all-evals", "evals-only"]), true, true, (Success, Skipped, "RUN")),
            ("sync full, fork head", fork, true, false, (Success, Success, "SKIP")),
            ("sync full, draft", draft, true, false, (Skipped, Skipped, "SKIP")),
            ("sync full, [skip-sweep]", tagged, true, false, (Success, Success, "SKIP")),
            ("labeled full", labeled("labeled", "full-sweep-enabled", &["full-sweep-enabled"]), true, false, (Success, Skipped, "RUN")),
            ("labeled all-evals alone", labeled("labeled", "all-evals", &["all-evals"]), true, false, (Success, Skipped, "SKIP")),
            ("labeled evals-only alone", labeled("labeled", "evals-only", &["evals-only"]), true, false, (Success, Skipped, "SKIP")),
            ("labeled agentx-fast alone", labeled("labeled", "agentx-fast", &["agentx-fast"]), true, false, (Success, Skipped, "SKIP")),
            ("labeled modifier all-evals on full", labeled("labeled", "all-evals", &["full-sweep-enabled", "all-evals"]), true, false, (Success, Skipped, "RUN")),
            ("labeled modifier evals-only on full", labeled("labeled", "evals-only", &["full-sweep-enabled", "evals-only"]), true, false, (Success, Skipped, "RUN")),
            ("labeled modifier agentx-fast on full", labeled("labeled", "agentx-fast", &["full-sweep-enabled", "agentx-fast"]), true, false, (Success, Skipped, "RUN")),
            ("labeled skip_queue on full", labeled("labeled", "skip_queue", &["full-sweep-enabled", "skip_queue"]), true, false, (Success, Skipped, "RUN")),
            ("unlabeled skip_queue on full", labeled("unlabeled", "skip_queue", &["full-sweep-enabled"]), true, false, (Success, Skipped, "RUN")),
            ("labeled ci-patchwork on full", labeled("labeled", "ci-patchwork", &["full-sweep-enabled", "ci-patchwork"]), true, false, (Success, Skipped, "RUN")),
            ("unlabeled ci-patchwork on full", labeled("unlabeled", "ci-patchwork", &["full-sweep-enabled"]), true, false, (Success, Skipped, "RUN")),
            ("labeled documentation on full", labeled("labeled", "documentation", &["full-sweep-enabled"]), true, false, (Skipped, Skipped, "SKIP")),
            ("unlabeled last primary", labeled("unlabeled", "full-sweep-enabled", &[]), true, false, (Success, Skipped, "SKIP")),
            ("ready_for_review full", pr("ready_for_review", &["full-sweep-enabled"]), true, false, (Success, Skipped, "RUN")),
            ("push", push("feat: add model"), true, false, (Skipped, Skipped, "RUN")),
            ("push with [skip-sweep]", push("fix: x [skip-sweep]"), true, false, (Skipped, Skipped, "RUN")),
        ];
        for (name, input, valid, auth, want) in rows {
            assert_eq!(run(&input, valid, auth), want, "{name}");
            assert_eq!(
                intent(&input, valid, auth),
                want,
                "intent disagrees: {name}"
            );
        }
    }

    /// An independent encoding of the intended gating (written from the
    /// prose of workflow.md §3, not from [`decide`]).
    fn intent(sc: &PolicyInput, valid: bool, auth: bool) -> (JobResult, JobResult, &'static str) {
        let labels: std::collections::BTreeSet<&str> =
            sc.labels.iter().map(String::as_str).collect();
        let is_pr = sc.event_name == "pull_request";
        let relevant_event = !matches!(sc.action.as_str(), "labeled" | "unlabeled")
            || sc.label.as_deref().is_some_and(is_relevant_label);
        let sweep_labels = labels.iter().filter(|l| PRIMARY_LABELS.contains(l)).count();
        let check = if !(is_pr && !sc.draft && relevant_event) {
            Skipped
        } else if sweep_labels > 1 || !valid {
            Failure
        } else {
            Success
        };
        let gate_runs = check == Success
            && sc.action == "synchronize"
            && [
                "full-sweep-enabled",
                "non-canary-full-sweep-enabled",
                "full-sweep-fail-fast",
                "full-sweep-fail-fast-no-canary",
            ]
            .iter()
            .any(|l| labels.contains(l))
            && !labels.contains("evals-only")
            && !labels.contains("agentx-fast");
        let gate = if gate_runs { Success } else { Skipped };
        let event_ok = if is_pr {
            !sc.draft
                && sc.head_repo.as_deref() == Some(REPO)
                && sweep_labels > 0
                && relevant_event
                && !sc.head_commit_message.contains("[skip-sweep]")
        } else {
            sc.event_name == "push"
        };
        let setup = check != Failure && !(gate_runs && auth) && event_ok;
        (check, gate, if setup { "RUN" } else { "SKIP" })
    }

    /// The cross product of the reference's gating test: 4 actions × draft ×
    /// 23 label sets × 12 event labels × authorisation × changelog validity ×
    /// 2 commit messages, plus 2 pushes = 17 666 scenarios.
    #[test]
    fn exhaustive_cross_product_agrees_with_intent() {
        let mut n = 0;
        let mut runs = 0;
        for (sc, valid, auth) in gating_cross_product(REPO) {
            let got = run(&sc, valid, auth);
            assert_eq!(
                got,
                intent(&sc, valid, auth),
                "{sc:?} valid={valid} auth={auth}"
            );
            runs += usize::from(got.2 == "RUN");
            n += 1;
        }
        for msg in GATING_PUSH_MESSAGES {
            assert_eq!(run(&push(msg), true, false), (Skipped, Skipped, "RUN"));
            n += 1;
        }
        assert_eq!(n, 17_666);
        // Guard against a degenerate policy that never (or always) runs.
        assert!(runs > 0 && runs < n);
    }

    /// §3.1: primary label → canary, fail-fast, trim, reuse gate.
    #[test]
    fn primary_label_behaviour_of_section_3_1() {
        #[rustfmt::skip]
        let rows = [
            // label, trim, canary, fail-fast, gate on synchronize
            ("sweep-enabled", true, false, false, false),
            ("full-sweep-enabled", false, true, false, true),
            ("full-sweep-fail-fast", false, true, true, true),
            ("non-canary-full-sweep-enabled", false, false, false, true),
            ("full-sweep-fail-fast-no-canary", false, false, true, true),
        ];
        for (label, trim, canary, ff, gate) in rows {
            let d = decide(&pr("synchronize", &[label]));
            assert_eq!(
                (
                    d.trim_conc,
                    d.canary,
                    d.fail_fast,
                    d.run_reuse_gate,
                    d.run_setup
                ),
                (trim, canary, ff, gate, true),
                "{label}"
            );
            assert_eq!(d.primary_label, label);
            assert!(!d.conflicting_labels);
        }
        let none = decide(&pr("synchronize", &[]));
        assert!(!none.run_setup && none.run_check_changelog && none.primary_label.is_empty());
        let two = decide(&pr(
            "synchronize",
            &["sweep-enabled", "full-sweep-fail-fast"],
        ));
        assert!(two.conflicting_labels && two.primary_label.is_empty());
    }

    /// §3.2: modifiers become flags only on PRs; agentx-fast and evals-only
    /// rule the gate out; policy labels have no flag.
    #[test]
    fn modifiers_of_section_3_2() {
        let d = decide(&pr("synchronize", &["full-sweep-enabled", "all-evals"]));
        assert!(d.all_evals && !d.evals_only && !d.agentx_fast && d.run_reuse_gate);
        let d = decide(&pr("synchronize", &["full-sweep-enabled", "evals-only"]));
        assert!(d.evals_only && !d.run_reuse_gate);
        let d = decide(&pr("synchronize", &["full-sweep-enabled", "agentx-fast"]));
        assert!(d.agentx_fast && !d.run_reuse_gate);
        let d = decide(&pr(
            "synchronize",
            &["full-sweep-enabled", "skip_queue", "ci-patchwork"],
        ));
        assert!(!d.all_evals && !d.evals_only && !d.agentx_fast && d.run_reuse_gate);
        // Push: labels never apply, skip-sweep is ignored.
        let mut p = push("x [skip-sweep]");
        p.labels = vec!["sweep-enabled".into(), "all-evals".into()];
        let d = decide(&p);
        assert!(!d.trim_conc && !d.all_evals && !d.fail_fast && !d.skip_pr_sweep && d.run_setup);
        assert!(d.push_to_main);
        p.git_ref = "refs/heads/other".into();
        assert!(!decide(&p).push_to_main);
    }

    /// Labels match whole names only (`contains()` on an array).
    #[test]
    fn labels_match_exactly_not_by_substring() {
        let d = decide(&pr(
            "synchronize",
            &["full-sweep-enabled-please", "xall-evals"],
        ));
        assert!(!d.run_setup && !d.all_evals && d.primary_label.is_empty());
    }

    #[test]
    fn concurrency_is_private_only_for_irrelevant_label_events() {
        assert_eq!(
            decide(&labeled(
                "labeled",
                "documentation",
                &["full-sweep-enabled"]
            ))
            .concurrency,
            "private"
        );
        assert_eq!(
            decide(&labeled("unlabeled", "skip_queue", &["full-sweep-enabled"])).concurrency,
            "active"
        );
        assert_eq!(
            decide(&pr("synchronize", &["full-sweep-enabled"])).concurrency,
            "active"
        );
        assert_eq!(decide(&push("m")).concurrency, "active");
    }

    #[test]
    fn comment_skips_policy_label_events_and_drafts() {
        assert!(
            decide(&labeled(
                "labeled",
                "all-evals",
                &["sweep-enabled", "all-evals"]
            ))
            .comment
        );
        assert!(
            !decide(&labeled(
                "labeled",
                "skip_queue",
                &["sweep-enabled", "skip_queue"]
            ))
            .comment
        );
        let mut d = pr("synchronize", &["sweep-enabled"]);
        assert!(decide(&d).comment);
        d.draft = true;
        assert!(!decide(&d).comment);
        assert!(!decide(&push("m")).comment);
    }

    /// Issue #16 point 1: a PR whose head repository is unknown (`head.repo:
    /// null`, as for a deleted fork, or empty) is a fork and sets up nothing.
    #[test]
    fn unknown_head_repository_is_a_fork() {
        let ev = serde_json::json!({
            "action": "synchronize",
            "pull_request": {
                "draft": false,
                "labels": [{"name": "full-sweep-enabled"}],
                "head": {"repo": null}
            }
        });
        let mut input = pr("", &[]);
        input.head_repo = None;
        fill_from_event(&mut input, &ev, &Given::default());
        assert_eq!(input.head_repo, None);
        let d = decide(&input);
        assert!(d.run_check_changelog && !d.run_setup, "{d:?}");
        for unknown in [None, Some(String::new())] {
            let mut i = pr("synchronize", &["full-sweep-enabled"]);
            i.head_repo = unknown.clone();
            assert!(!decide(&i).run_setup, "{unknown:?}");
        }
        // The same PR from this repository does set up.
        assert!(decide(&pr("synchronize", &["full-sweep-enabled"])).run_setup);
    }

    #[test]
    fn parse_labels_accepts_names_payload_objects_and_empty() {
        assert_eq!(parse_labels("").unwrap(), Vec::<String>::new());
        assert_eq!(parse_labels("null").unwrap(), Vec::<String>::new());
        assert_eq!(parse_labels(r#"["a","b"]"#).unwrap(), vec!["a", "b"]);
        assert_eq!(parse_labels(r#"[{"name":"a"}]"#).unwrap(), vec!["a"]);
        assert!(parse_labels("{}").unwrap_err().contains("array"));
        assert!(parse_labels("[1]").unwrap_err().contains("labels[0]"));
        assert!(parse_labels("[").unwrap_err().contains("JSON"));
    }

    #[test]
    fn event_payload_fills_what_was_not_given() {
        let ev = serde_json::json!({
            "action": "labeled",
            "label": {"name": "full-sweep-enabled"},
            "pull_request": {
                "draft": true,
                "labels": [{"name": "full-sweep-enabled"}, {"name": "all-evals"}],
                "head": {"repo": {"full_name": "fork/InferenceX"}}
            }
        });
        let mut input = pr("", &[]);
        fill_from_event(&mut input, &ev, &Given::default());
        assert_eq!(input.action, "labeled");
        assert_eq!(input.label.as_deref(), Some("full-sweep-enabled"));
        assert_eq!(input.labels, vec!["full-sweep-enabled", "all-evals"]);
        assert!(input.draft);
        assert_eq!(input.head_repo.as_deref(), Some("fork/InferenceX"));
        let d = decide(&input);
        assert!(!d.run_check_changelog && !d.run_setup);

        let mut given = pr("synchronize", &["sweep-enabled"]);
        fill_from_event(
            &mut given,
            &ev,
            &Given {
                action: true,
                labels: true,
                ..Given::default()
            },
        );
        assert_eq!(given.action, "synchronize");
        assert_eq!(given.labels, vec!["sweep-enabled"]);

        let push_ev = serde_json::json!({"head_commit": {"message": "m [skip-sweep]"}});
        let mut p = push("");
        fill_from_event(&mut p, &push_ev, &Given::default());
        assert_eq!(p.head_commit_message, "m [skip-sweep]");
    }
}
