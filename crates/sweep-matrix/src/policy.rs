//! The sweep's label and trigger policy as code (`generate-matrix sweep-policy`).
//!
//! The reference workflow spells this policy out as `if:` expressions that are
//! copied between jobs (workflow.md §1–§3). Here it is one pure function of
//! the triggering event, [`decide`], whose answers the reusable workflow reads
//! as job outputs. How `run-sweep.yml` chains those answers with the results
//! of the `check-changelog` and `reuse-sweep-gate` jobs is modelled and
//! checked in the workspace tests (`crates/sweepkit-e2e/tests/sweep_policy.rs`
//! against every named row of workflow.md §3.3 and the reference gating
//! test's whole cross product, `gating.rs` against the shipped workflow).

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

/// The error text for conflicting primary labels (the reference's wording).
pub const CONFLICT_MESSAGE: &str = "PR has multiple conflicting sweep labels. Pick exactly one.";

/// Why the label list or the event payload is refused (exit 1: the input
/// the policy decides from is invalid).
#[derive(Debug, thiserror::Error)]
pub enum PolicyInputError {
    #[error("labels are not valid JSON: {0}")]
    LabelsNotJson(#[source] serde_json::Error),
    #[error("labels must be a JSON array of label names")]
    LabelsNotArray,
    #[error("labels[{index}] has no string 'name'")]
    LabelWithoutName { index: usize },
    #[error("labels[{index}] is not a string: {found}")]
    LabelNotString {
        index: usize,
        found: serde_json::Value,
    },
    #[error(
        "the event payload is {found}; expected a JSON object (the webhook payload of the event)"
    )]
    EventNotObject { found: &'static str },
}

impl sweep_exit::Classify for PolicyInputError {
    fn kind(&self) -> sweep_exit::Kind {
        sweep_exit::Kind::Rejected
    }
}

/// Parses the PR label list as the workflow passes it: a JSON array of
/// strings (`toJson(github.event.pull_request.labels.*.name)`); empty,
/// `null` and `[]` mean no labels.
pub fn parse_labels(text: &str) -> Result<Vec<String>, PolicyInputError> {
    let t = text.trim();
    if t.is_empty() || t == "null" {
        return Ok(Vec::new());
    }
    let v: serde_json::Value = serde_json::from_str(t).map_err(PolicyInputError::LabelsNotJson)?;
    let serde_json::Value::Array(items) = v else {
        return Err(PolicyInputError::LabelsNotArray);
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            serde_json::Value::String(s) => Ok(s),
            // The event payload form: [{"name": "…"}, …].
            serde_json::Value::Object(mut o) => match o.remove("name") {
                Some(serde_json::Value::String(s)) => Ok(s),
                _ => Err(PolicyInputError::LabelWithoutName { index: i }),
            },
            found => Err(PolicyInputError::LabelNotString { index: i, found }),
        })
        .collect()
}

/// Checks an event payload before [`fill_from_event`] reads it: GitHub's
/// webhook payload is always a JSON object. Anything else (`null`, `[]`, a
/// number) is no event, and deciding from it as if nothing were set would
/// hide that nothing was read.
///
/// # Errors
/// The payload is not an object: "the event payload is …; expected …".
pub fn check_event(event: &serde_json::Value) -> Result<(), PolicyInputError> {
    if event.is_object() {
        return Ok(());
    }
    Err(PolicyInputError::EventNotObject {
        found: sweep_model::json_type::json_type_name(event),
    })
}

/// Fills the fields of `input` that were not given explicitly from a GitHub
/// event payload (`$GITHUB_EVENT_PATH`), so the action needs no expressions.
pub fn fill_from_event(input: &mut PolicyInput, event: &serde_json::Value, given: &ExplicitInputs) {
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
pub struct ExplicitInputs {
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
