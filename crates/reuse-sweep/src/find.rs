//! `reuse-sweep find`: the `/reuse-sweep-run` protocol (spec: github.md §3).
//!
//! Decides whether a push-to-main run may reuse the artifacts of an approved
//! pull-request sweep, and (PR `synchronize` mode) whether the PR's own
//! sweep may be skipped. Once a maintainer's authorisation is found every
//! inconsistency is an error: the caller's job fails closed instead of
//! ingesting the wrong run.

use std::collections::{BTreeSet, HashMap};
use std::ops::ControlFlow;

use github_client::trust::{
    Binding, LabelHistory, head_repository, may_write, run_is_from, run_label_refusal,
    unapproved_change,
};
use github_client::{Client, command, encode};
use serde_json::Value;
use sweep_model::python::python_str_or_empty;

pub use github_client::trust::{AUTHORISING_ROLES, WRITE_PERMISSIONS, swept_head};

/// Inputs, with the reference's flag names and defaults.
#[derive(Debug, Clone)]
pub struct FindArgs {
    pub repo: String,
    pub commit_sha: String,
    pub event_name: String,
    pub event_action: String,
    pub pr_number: Option<i64>,
    pub git_ref: String,
    pub workflow_id: String,
    pub full_sweep_labels: String,
    pub reuse_incompatible_labels: String,
    pub pinned_run_command: String,
}

/// The eight outputs, always in this order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    pub enabled: bool,
    pub skip_pr_sweep: bool,
    pub source_run_id: String,
    pub source_run_attempt: String,
    pub source_run_url: String,
    pub source_pr_number: String,
    pub source_head_sha: String,
    pub reason: String,
}

impl Outcome {
    fn disabled(reason: impl Into<String>) -> Self {
        Outcome {
            reason: reason.into(),
            ..Outcome::default()
        }
    }

    /// `(key, value)` pairs in output order.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let b = |v: bool| if v { "true" } else { "false" }.to_string();
        vec![
            ("reuse-enabled", b(self.enabled)),
            ("skip-pr-sweep", b(self.skip_pr_sweep)),
            ("reuse-source-run-id", self.source_run_id.clone()),
            ("reuse-source-run-attempt", self.source_run_attempt.clone()),
            ("reuse-source-run-url", self.source_run_url.clone()),
            ("reuse-source-pr-number", self.source_pr_number.clone()),
            ("reuse-source-head-sha", self.source_head_sha.clone()),
            ("reuse-reason", self.reason.clone()),
        ]
    }

    /// The stdout JSON (2-space indented object, output order).
    pub fn to_json(&self) -> String {
        let map: serde_json::Map<String, Value> = self
            .pairs()
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::String(v)))
            .collect();
        serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default()
    }
}

/// Why `find` stopped without a decision.
#[derive(Debug, thiserror::Error)]
pub enum FindError {
    /// The protocol refused (fail closed): authorised but inconsistent.
    #[error("{0}")]
    Refused(String),
    /// GitHub could not answer (after retries) or answered nonsense.
    #[error(transparent)]
    GitHub(#[from] github_client::Error),
}

/// Refused is a "no" (exit 1); GitHub failing is exit 2.
impl sweep_cli::Classify for FindError {
    fn kind(&self) -> sweep_cli::Kind {
        match self {
            FindError::Refused(_) => sweep_cli::Kind::Rejected,
            FindError::GitHub(_) => sweep_cli::Kind::Failed,
        }
    }
}

fn refused<T>(msg: impl Into<String>) -> Result<T, FindError> {
    Err(FindError::Refused(msg.into()))
}

/// Python's `repr` of an optional JSON string (`'success'` / `None`).
fn py_repr(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "None".into(),
        Some(Value::String(s)) => format!("'{s}'"),
        Some(other) => other.to_string(),
    }
}

fn csv_set(s: &str) -> BTreeSet<String> {
    s.split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect()
}

/// An integer id field (`int(x["id"])` in the reference).
fn int_field(v: &Value, key: &str, what: &str) -> Result<i64, FindError> {
    match v.get(key) {
        Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64().unwrap_or_default()),
        Some(Value::String(s)) if s.trim().parse::<i64>().is_ok() => {
            Ok(s.trim().parse().unwrap_or_default())
        }
        other => refused(format!(
            "{what} has no usable '{key}' (got {})",
            other.map_or("nothing".to_string(), Value::to_string)
        )),
    }
}

/// The protocol over a GitHub client.
pub struct Finder<'a> {
    client: &'a Client,
    args: &'a FindArgs,
    repo: String,
    commits: HashMap<i64, Vec<Value>>,
    artifacts: HashMap<i64, BTreeSet<String>>,
    /// Per login: may authorise, and the role it holds (for the log).
    permissions: HashMap<String, (bool, String)>,
}

impl<'a> Finder<'a> {
    pub fn new(client: &'a Client, args: &'a FindArgs) -> Self {
        Finder {
            client,
            args,
            repo: args
                .repo
                .split('/')
                .map(encode)
                .collect::<Vec<_>>()
                .join("/"),
            commits: HashMap::new(),
            artifacts: HashMap::new(),
            permissions: HashMap::new(),
        }
    }

    fn path(&self, tail: &str) -> String {
        format!("/repos/{}{tail}", self.repo)
    }

    /// Runs the protocol.
    pub fn run(&mut self) -> Result<Outcome, FindError> {
        let a = self.args;
        let cmd = &a.pinned_run_command;
        if a.event_name == "pull_request" {
            return self.synchronize_decision();
        }
        if a.event_name != "push" || a.git_ref != "refs/heads/main" {
            return Ok(Outcome::disabled("not a push to main"));
        }
        let pr_number = match self.associated_pr()? {
            ControlFlow::Continue(n) => n,
            ControlFlow::Break(outcome) => return Ok(outcome),
        };
        let (authorised, pinned, approved_at) = self.authorisation(pr_number)?;
        if !authorised {
            return Ok(Outcome {
                source_pr_number: pr_number.to_string(),
                ..Outcome::disabled(format!("PR #{pr_number} has no {cmd} authorization"))
            });
        }
        let pr = self
            .client
            .get(&self.path(&format!("/pulls/{pr_number}")), &[])?;
        self.check_labels_and_merge(pr_number, &pr)?;
        let (run, reason) = match &pinned {
            Some(id) => self.pinned_run(pr_number, id)?,
            None => self.latest_run(pr_number, &pr)?,
        };
        let run_id = int_field(&run, "id", "the source run")?;
        self.validate_run(pr_number, &run, run_id)?;
        self.validate_binding(pr_number, &pr, &run, run_id, &approved_at)?;
        Ok(reuse_outcome(pr_number, &run, run_id, reason))
    }

    /// PR `synchronize` mode: the PR's own sweep is skipped exactly when
    /// the PR carries an authorisation; any other PR action disables reuse.
    fn synchronize_decision(&mut self) -> Result<Outcome, FindError> {
        let a = self.args;
        let cmd = &a.pinned_run_command;
        if a.event_action != "synchronize" {
            let action = if a.event_action.is_empty() {
                "unknown"
            } else {
                &a.event_action
            };
            return Ok(Outcome::disabled(format!(
                "pull_request action {action} is not synchronize"
            )));
        }
        let Some(pr) = a.pr_number else {
            return refused("--pr-number is required for pull_request synchronize");
        };
        let (authorised, _, _) = self.authorisation(pr)?;
        let have = if authorised { "has" } else { "has no" };
        Ok(Outcome {
            skip_pr_sweep: authorised,
            source_pr_number: pr.to_string(),
            ..Outcome::disabled(format!("PR #{pr} {have} {cmd} authorization"))
        })
    }

    /// The one pull request the pushed commit belongs to, or the outcome
    /// that ends the protocol (none, or several: refused when any of them
    /// carries an authorisation).
    fn associated_pr(&mut self) -> Result<ControlFlow<Outcome, i64>, FindError> {
        let a = self.args;
        let pulls = self.client.get(
            &self.path(&format!("/commits/{}/pulls", encode(&a.commit_sha))),
            &[],
        )?;
        let pulls = match pulls {
            Value::Array(p) if !p.is_empty() => p,
            _ => {
                return Ok(ControlFlow::Break(Outcome::disabled(
                    "no associated pull request",
                )));
            }
        };
        if pulls.len() > 1 {
            return self.multiple_prs(&pulls).map(ControlFlow::Break);
        }
        let n = int_field(&pulls[0], "number", "the associated pull request")?;
        Ok(ControlFlow::Continue(n))
    }

    /// A commit in several PRs is never reused; it is an error when one of
    /// them carries an authorisation (someone expected a reuse).
    fn multiple_prs(&mut self, pulls: &[Value]) -> Result<Outcome, FindError> {
        let mut authorised_prs = Vec::new();
        for pr in pulls {
            let Ok(n) = int_field(pr, "number", "a pull request") else {
                continue;
            };
            if n == 0 {
                continue;
            }
            if self.authorisation(n)?.0 {
                authorised_prs.push(format!("#{n}"));
            }
        }
        if !authorised_prs.is_empty() {
            let numbers: Vec<String> = pulls
                .iter()
                .map(|p| match p.get("number") {
                    None | Some(Value::Null) => "None".to_string(),
                    Some(v) => python_str_or_empty(Some(v)),
                })
                .collect();
            return refused(format!(
                "Commit {} maps to multiple PRs ({}); found reuse authorization on {}; refusing to reuse artifacts.",
                self.args.commit_sha,
                numbers.join(", "),
                authorised_prs.join(", ")
            ));
        }
        Ok(Outcome::disabled("multiple associated pull requests"))
    }

    /// An authorised PR must carry a full-sweep label, no
    /// reuse-incompatible one, and be merged.
    fn check_labels_and_merge(&self, pr_number: i64, pr: &Value) -> Result<(), FindError> {
        let a = self.args;
        let cmd = &a.pinned_run_command;
        let labels: BTreeSet<String> = pr
            .get("labels")
            .and_then(Value::as_array)
            .map(|ls| {
                ls.iter()
                    .filter_map(|l| l.get("name"))
                    .map(|n| python_str_or_empty(Some(n)))
                    .filter(|n| !n.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let full = csv_set(&a.full_sweep_labels);
        let incompatible = csv_set(&a.reuse_incompatible_labels);
        let bad: Vec<&str> = incompatible
            .intersection(&labels)
            .map(String::as_str)
            .collect();
        if !bad.is_empty() {
            return refused(format!(
                "PR #{pr_number} has {cmd} authorization but uses reuse-incompatible label(s): {}.",
                bad.join(", ")
            ));
        }
        if full.intersection(&labels).next().is_none() {
            let accepted: Vec<&str> = full.iter().map(String::as_str).collect();
            return refused(format!(
                "PR #{pr_number} has {cmd} authorization but is missing any of: {}.",
                accepted.join(", ")
            ));
        }
        if python_str_or_empty(pr.get("merged_at")).is_empty() {
            return refused(format!("PR #{pr_number} is not marked as merged."));
        }
        Ok(())
    }

    /// The run a `<command> <run_id>` comment pinned, and why it was chosen.
    fn pinned_run(&self, pr_number: i64, id: &str) -> Result<(Value, String), FindError> {
        let run = self
            .client
            .get(&self.path(&format!("/actions/runs/{id}")), &[])?;
        let why = format!(
            "PR #{pr_number} approved reusable full sweep from pinned run {id}: it concluded success on the PR's head commit {} and has result artifacts",
            python_str_or_empty(run.get("head_sha"))
        );
        Ok((run, why))
    }

    /// Without a pin: the newest successful run of the PR's swept head,
    /// and why it was chosen.
    fn latest_run(&mut self, pr_number: i64, pr: &Value) -> Result<(Value, String), FindError> {
        let a = self.args;
        let cmd = &a.pinned_run_command;
        let head_branch = python_str_or_empty(pr.get("head").and_then(|h| h.get("ref")));
        if self.pr_commit_list(pr_number)?.is_empty() {
            return refused(format!("PR #{pr_number} has no commits."));
        }
        let Some(head) = self.swept_head(pr_number)? else {
            return refused(format!(
                "PR #{pr_number} has no commit that a sweep could have run on (every commit is a merge or [skip-sweep])."
            ));
        };
        let Some(run) = self.latest_successful_run(&head_branch, &head)? else {
            return refused(format!(
                "PR #{pr_number} has {cmd} authorization but no successful {} pull_request run with result artifacts was found for its head commit {head} (the newest commit that is not a merge or [skip-sweep]); runs of older commits, and runs triggered from anywhere but {}, are not reused. Re-run the sweep on that commit, or pin a successful run of it with `{cmd} <run_id>`.",
                a.workflow_id, a.repo
            ));
        };
        let head = match run.get("head_sha") {
            None | Some(Value::Null) => "None".to_string(),
            v => python_str_or_empty(v),
        };
        let why = format!(
            "PR #{pr_number} approved reusable full sweep from latest run on {head}: run {} concluded success on the PR's head commit and has result artifacts",
            python_str_or_empty(run.get("id"))
        );
        Ok((run, why))
    }

    /// `(authorised, pinned run id, the deciding comment's created_at)`
    /// from the PR's issue comments.
    fn authorisation(&mut self, pr: i64) -> Result<(bool, Option<String>, String), FindError> {
        let mut comments =
            self.client
                .get_all(&self.path(&format!("/issues/{pr}/comments")), &[], None)?;
        // Stable sort by the timestamp string: equal stamps keep API order.
        comments.sort_by_key(|c| python_str_or_empty(c.get("created_at")));
        for c in comments.iter().rev() {
            let body = python_str_or_empty(c.get("body"));
            // Cheapest first: an over-long body is no command; then who
            // wrote it (one cached lookup per login); only a writer's
            // comment is parsed at all.
            if !command::within_limit(&body) || !self.may_authorise(c, &body)? {
                continue;
            }
            if let Some(found) = command::last_command(&body, &self.args.pinned_run_command) {
                let pin = match found {
                    None => None,
                    Some(digits) => {
                        let id: u64 = digits.parse().map_err(|_| {
                            FindError::Refused(format!(
                                "PR #{pr}: run id '{digits}' in the {} comment is out of range",
                                self.args.pinned_run_command
                            ))
                        })?;
                        Some(id.to_string())
                    }
                };
                return Ok((true, pin, python_str_or_empty(c.get("created_at"))));
            }
        }
        Ok((false, None, String::new()))
    }

    /// Whether the author of comment `c` has write, maintain or admin
    /// permission on the repository (GitHub's collaborator permission
    /// endpoint; cached per login). A comment without a login, or a user
    /// GitHub does not know as a collaborator (404), does not authorise;
    /// any other failure is an error (the caller fails closed).
    /// Checked before the body is parsed; a refusal is logged only when the
    /// body mentions the command at all (a plain substring test).
    fn may_authorise(&mut self, c: &Value, body: &str) -> Result<bool, FindError> {
        let login = python_str_or_empty(c.pointer("/user/login"));
        if login.is_empty() {
            return Ok(false);
        }
        let (ok, why) = match self.permissions.get(&login) {
            Some(known) => known.clone(),
            None => {
                let access = self.client.collaborator_access(&self.repo, &login)?;
                let ok = may_write(access.as_ref());
                let why = match access {
                    Some(a) => format!(
                        "role '{}', permission '{}'",
                        a.role_name.unwrap_or_default(),
                        a.permission.unwrap_or_default()
                    ),
                    None => "not a collaborator".to_string(),
                };
                self.permissions.insert(login.clone(), (ok, why.clone()));
                (ok, why)
            }
        };
        if !ok && body.contains(self.args.pinned_run_command.as_str()) {
            eprintln!(
                "{} by {login} ignored: {login} has no write, maintain or admin permission on {} ({why})",
                self.args.pinned_run_command, self.args.repo
            );
        }
        Ok(ok)
    }

    fn pr_commit_list(&mut self, pr: i64) -> Result<Vec<Value>, FindError> {
        if let Some(c) = self.commits.get(&pr) {
            return Ok(c.clone());
        }
        let list = self
            .client
            .get_all(&self.path(&format!("/pulls/{pr}/commits")), &[], None)?;
        self.commits.insert(pr, list.clone());
        Ok(list)
    }

    fn pr_commits(&mut self, pr: i64) -> Result<BTreeSet<String>, FindError> {
        Ok(self
            .pr_commit_list(pr)?
            .iter()
            .map(|c| python_str_or_empty(c.get("sha")))
            .filter(|s| !s.is_empty())
            .collect())
    }

    fn swept_head(&mut self, pr: i64) -> Result<Option<String>, FindError> {
        Ok(swept_head(&self.pr_commit_list(pr)?))
    }

    fn artifact_names(&mut self, run_id: i64) -> Result<BTreeSet<String>, FindError> {
        if let Some(n) = self.artifacts.get(&run_id) {
            return Ok(n.clone());
        }
        let list = self.client.get_all(
            &self.path(&format!("/actions/runs/{run_id}/artifacts")),
            &[],
            Some("artifacts"),
        )?;
        let names: BTreeSet<String> = list
            .iter()
            .filter(|a| {
                a.get("expired")
                    .is_none_or(|e| python_str_or_empty(Some(e)).is_empty())
            })
            .map(|a| python_str_or_empty(a.get("name")))
            .filter(|n| !n.is_empty())
            .collect();
        self.artifacts.insert(run_id, names.clone());
        Ok(names)
    }

    /// The newest successful `pull_request` run of `head` on the PR's
    /// branch that was triggered from this repository and has results.
    fn latest_successful_run(
        &mut self,
        head_branch: &str,
        head: &str,
    ) -> Result<Option<Value>, FindError> {
        if head_branch.is_empty() {
            return Ok(None);
        }
        let runs = self.client.completed_pull_request_runs(
            &self.repo,
            &self.args.workflow_id,
            head_branch,
        )?;
        // Newest first, as GitHub lists them. Gated no-op runs succeed
        // without artifacts and are skipped by the artifact test.
        for run in runs {
            if run.get("conclusion").and_then(Value::as_str) != Some("success") {
                continue;
            }
            if python_str_or_empty(run.get("head_sha")) != head
                || !run_is_from(&run, &self.args.repo)
            {
                continue;
            }
            let id = int_field(&run, "id", "a workflow run")?;
            if has_reusable_results(&self.artifact_names(id)?) {
                return Ok(Some(run));
            }
        }
        Ok(None)
    }

    fn validate_run(&mut self, pr: i64, run: &Value, id: i64) -> Result<(), FindError> {
        if run.get("event").and_then(Value::as_str) != Some("pull_request") {
            return refused(format!(
                "Reusable source run {id} is not a pull_request run."
            ));
        }
        if run.get("status").and_then(Value::as_str) != Some("completed") {
            return refused(format!("Reusable source run {id} is not completed."));
        }
        if run.get("conclusion").and_then(Value::as_str) != Some("success") {
            return refused(format!(
                "Reusable source run {id} has conclusion {}; expected success.",
                py_repr(run.get("conclusion"))
            ));
        }
        if !run_is_from(run, &self.args.repo) {
            let from = head_repository(run).unwrap_or("an unnamed repository");
            return refused(format!(
                "Reusable source run {id} was triggered from {from}, not from {}; runs from forks are never reused.",
                self.args.repo
            ));
        }
        let wf = &self.args.workflow_id;
        let expected_path = if wf.starts_with(".github/") {
            wf.clone()
        } else {
            format!(".github/workflows/{wf}")
        };
        let run_path = python_str_or_empty(run.get("path"));
        if !run_path.is_empty() && run_path != expected_path {
            return refused(format!(
                "Reusable source run {id} is from {run_path}, expected {expected_path}."
            ));
        }
        let head = python_str_or_empty(run.get("head_sha"));
        if head.is_empty() {
            return refused(format!("Reusable source run {id} has no head_sha."));
        }
        if !self.pr_commits(pr)?.contains(&head) {
            return refused(format!(
                "Reusable source run {id} head {head} is not in PR #{pr}'s commit list; pin a run whose commit is still part of the PR."
            ));
        }
        let want = self.swept_head(pr)?.unwrap_or_default();
        if head != want {
            return refused(format!(
                "Reusable source run {id} ran on {head}, not on PR #{pr}'s head commit {want} (the newest commit that is not a merge or [skip-sweep]); only a run of the PR's current code is reused."
            ));
        }
        if !has_reusable_results(&self.artifact_names(id)?) {
            return refused(format!(
                "Reusable source run {id} has no benchmark, eval, or agentic result artifact."
            ));
        }
        Ok(())
    }
}

impl Finder<'_> {
    /// The rules that bind a reuse to what was approved (issue #34): the
    /// run was made under a full-sweep label and no reuse-incompatible one
    /// ([`run_label_refusal`], the rule `/stage-results` applies), and
    /// every PR commit after the run's head was on the branch when the
    /// approval was written or changes nothing a sweep reads
    /// ([`unapproved_change`]).
    fn validate_binding(
        &mut self,
        pr_number: i64,
        pr: &Value,
        run: &Value,
        id: i64,
        approved_at: &str,
    ) -> Result<(), FindError> {
        let timeline = self.client.get_all(
            &self.path(&format!("/issues/{pr_number}/timeline")),
            &[],
            None,
        )?;
        let history = LabelHistory::from_timeline(&timeline);
        let full = csv_set(&self.args.full_sweep_labels);
        let incompatible = csv_set(&self.args.reuse_incompatible_labels);
        let full: Vec<&str> = full.iter().map(String::as_str).collect();
        let incompatible: Vec<&str> = incompatible.iter().map(String::as_str).collect();
        if let Some(why) = run_label_refusal(&history, run, &full, &incompatible) {
            return refused(format!(
                "Reusable source run {id} is not a full sweep: {why}."
            ));
        }
        let commits = self.pr_commit_list(pr_number)?;
        let head = python_str_or_empty(run.get("head_sha"));
        let binding = Binding {
            repo: &self.args.repo,
            pull: pr,
            commits: &commits,
            swept: &head,
            approved_at,
        };
        if let Some(why) = unapproved_change(self.client, &binding)? {
            return refused(format!(
                "PR #{pr_number}: reusable source run {id} does not stand for the approved code: {why}."
            ));
        }
        Ok(())
    }
}

/// The enabled outcome for a validated source run.
fn reuse_outcome(pr_number: i64, run: &Value, run_id: i64, reason: String) -> Outcome {
    let attempt = python_str_or_empty(run.get("run_attempt"));
    Outcome {
        enabled: true,
        skip_pr_sweep: false,
        source_run_id: run_id.to_string(),
        source_run_attempt: if attempt.is_empty() {
            "1".into()
        } else {
            attempt
        },
        source_run_url: python_str_or_empty(run.get("html_url")),
        source_pr_number: pr_number.to_string(),
        source_head_sha: python_str_or_empty(run.get("head_sha")),
        reason,
    }
}

/// At least one unexpired `results_bmk`, `eval_results_all` or `bmk_agentic_*`.
pub fn has_reusable_results(names: &BTreeSet<String>) -> bool {
    names
        .iter()
        .any(|n| n == "results_bmk" || n == "eval_results_all" || n.starts_with("bmk_agentic_"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reusable_artifact_names() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        assert!(has_reusable_results(&set(&["run-stats", "results_bmk"])));
        assert!(has_reusable_results(&set(&["bmk_agentic_x"])));
        assert!(!has_reusable_results(&set(&[
            "run-stats",
            "changelog-metadata",
            "bmk_qwen",
            "results_bmk_x"
        ])));
    }

    #[test]
    fn python_conversions() {
        assert_eq!(python_str_or_empty(Some(&json!(2))), "2");
        assert_eq!(python_str_or_empty(Some(&json!(0))), "");
        assert_eq!(python_str_or_empty(Some(&Value::Null)), "");
        assert_eq!(py_repr(Some(&json!("failure"))), "'failure'");
        assert_eq!(py_repr(None), "None");
    }

    #[test]
    fn outputs_keep_order_and_shape() {
        let o = Outcome::disabled("not a push to main");
        let keys: Vec<_> = o.pairs().into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            keys,
            [
                "reuse-enabled",
                "skip-pr-sweep",
                "reuse-source-run-id",
                "reuse-source-run-attempt",
                "reuse-source-run-url",
                "reuse-source-pr-number",
                "reuse-source-head-sha",
                "reuse-reason"
            ]
        );
        assert!(
            o.to_json()
                .starts_with("{\n  \"reuse-enabled\": \"false\",\n")
        );
    }
}
