//! `reuse-sweep find`: the `/reuse-sweep-run` protocol (spec: github.md §3).
//!
//! Decides whether a push-to-main run may reuse the artifacts of an approved
//! pull-request sweep, and (PR `synchronize` mode) whether the PR's own
//! sweep may be skipped. Once a maintainer's authorisation is found every
//! inconsistency is an error: the caller's job fails closed instead of
//! ingesting the wrong run.

use std::collections::{BTreeSet, HashMap};

use github_client::{Client, encode};
use serde_json::Value;
use sweep_model::python::python_str_or_empty;

use crate::command;

/// Which trust rules decide authorisation and the source run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Rules {
    /// Fail closed (the default): a command counts only when its author
    /// has write, maintain or admin permission on the repository (read from
    /// the collaborator permission endpoint); the source run must be a
    /// `success` run of the PR's swept head (see [`swept_head`]), pinned or not.
    #[default]
    Strict,
    /// The reference's rules, kept only so the recorded reference scenarios
    /// can be checked: the `author_association` string decides, any commit
    /// that is still in the PR may be the source, and a pinned run may also
    /// be `failure` or `cancelled`. Never for production use.
    Reference,
}

/// Repository roles whose holders may authorise a reuse (`role_name` of the
/// collaborator permission endpoint; custom roles report their base
/// `permission`, checked against [`WRITE_PERMISSIONS`]).
pub const AUTHORISING_ROLES: [&str; 3] = ["admin", "maintain", "write"];
/// `permission` values (the legacy field: maintain reports `write`) that
/// may authorise.
pub const WRITE_PERMISSIONS: [&str; 2] = ["admin", "write"];

/// The commit whose sweep a reuse stands for: the PR's newest commit that is
/// neither a merge commit nor tagged `[skip-sweep]` (the commits the reuse
/// protocol itself adds after the sweep, `merge_with_reuse`: the merge of
/// main and the refresh commit). `commits` is the PR's commit list in API
/// order (oldest first).
pub fn swept_head(commits: &[Value]) -> Option<String> {
    commits
        .iter()
        .rev()
        .find(|c| {
            let parents = c
                .get("parents")
                .and_then(Value::as_array)
                .map_or(1, Vec::len);
            let message = c
                .pointer("/commit/message")
                .and_then(Value::as_str)
                .unwrap_or("");
            parents <= 1 && !message.contains("[skip-sweep]")
        })
        .map(|c| python_str_or_empty(c.get("sha")))
        .filter(|s| !s.is_empty())
}

/// Inputs, with the reference's flag names and defaults.
#[derive(Debug, Clone)]
pub struct FindArgs {
    pub rules: Rules,
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
    pub allowed_author_associations: String,
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
    permissions: HashMap<String, bool>,
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
            let (authorised, _) = self.authorisation(pr)?;
            let have = if authorised { "has" } else { "has no" };
            return Ok(Outcome {
                skip_pr_sweep: authorised,
                source_pr_number: pr.to_string(),
                ..Outcome::disabled(format!("PR #{pr} {have} {cmd} authorization"))
            });
        }
        if a.event_name != "push" || a.git_ref != "refs/heads/main" {
            return Ok(Outcome::disabled("not a push to main"));
        }

        let pulls = self.client.get(
            &self.path(&format!("/commits/{}/pulls", encode(&a.commit_sha))),
            &[],
        )?;
        let pulls = match pulls {
            Value::Array(p) if !p.is_empty() => p,
            _ => return Ok(Outcome::disabled("no associated pull request")),
        };
        if pulls.len() > 1 {
            let mut authorised_prs = Vec::new();
            for pr in &pulls {
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
                    a.commit_sha,
                    numbers.join(", "),
                    authorised_prs.join(", ")
                ));
            }
            return Ok(Outcome::disabled("multiple associated pull requests"));
        }

        let pr_number = int_field(&pulls[0], "number", "the associated pull request")?;
        let (authorised, pinned) = self.authorisation(pr_number)?;
        if !authorised {
            return Ok(Outcome {
                source_pr_number: pr_number.to_string(),
                ..Outcome::disabled(format!("PR #{pr_number} has no {cmd} authorization"))
            });
        }

        let pr = self
            .client
            .get(&self.path(&format!("/pulls/{pr_number}")), &[])?;
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

        let (run, reason) = match &pinned {
            Some(id) => {
                let run = self
                    .client
                    .get(&self.path(&format!("/actions/runs/{id}")), &[])?;
                let why = match a.rules {
                    Rules::Strict => format!(
                        "PR #{pr_number} approved reusable full sweep from pinned run {id}: it concluded success on the PR's head commit {} and has result artifacts",
                        python_str_or_empty(run.get("head_sha"))
                    ),
                    Rules::Reference => {
                        format!("PR #{pr_number} approved reusable full sweep from pinned run {id}")
                    }
                };
                (run, why)
            }
            None => {
                let head_branch = python_str_or_empty(pr.get("head").and_then(|h| h.get("ref")));
                let all = self.pr_commits(pr_number)?;
                if all.is_empty() {
                    return refused(format!("PR #{pr_number} has no commits."));
                }
                let shas = match a.rules {
                    Rules::Reference => all,
                    Rules::Strict => match self.swept_head(pr_number)? {
                        Some(h) => BTreeSet::from([h]),
                        None => {
                            return refused(format!(
                                "PR #{pr_number} has no commit that a sweep could have run on (every commit is a merge or [skip-sweep])."
                            ));
                        }
                    },
                };
                let found = self.latest_successful_run(&head_branch, &shas)?;
                if a.rules == Rules::Strict
                    && found.is_none()
                    && let Some(head) = shas.iter().next()
                {
                    return refused(format!(
                        "PR #{pr_number} has {cmd} authorization but no successful {} pull_request run with result artifacts was found for its head commit {head} (the newest commit that is not a merge or [skip-sweep]); runs of older commits are not reused. Re-run the sweep on that commit, or pin a successful run of it with `{cmd} <run_id>`.",
                        a.workflow_id
                    ));
                }
                let Some(run) = found else {
                    return refused(format!(
                        "PR #{pr_number} has {cmd} authorization but no successful {} pull_request run was found for any of its {} commit(s); pin a specific run with `{cmd} <run_id>`.",
                        a.workflow_id,
                        shas.len()
                    ));
                };
                let head = match run.get("head_sha") {
                    None | Some(Value::Null) => "None".to_string(),
                    v => python_str_or_empty(v),
                };
                let why = match a.rules {
                    Rules::Strict => format!(
                        "PR #{pr_number} approved reusable full sweep from latest run on {head}: run {} concluded success on the PR's head commit and has result artifacts",
                        python_str_or_empty(run.get("id"))
                    ),
                    Rules::Reference => format!(
                        "PR #{pr_number} approved reusable full sweep from latest run on {head}"
                    ),
                };
                (run, why)
            }
        };
        let run_id = int_field(&run, "id", "the source run")?;
        self.validate_run(pr_number, &run, run_id, pinned.is_some())?;
        let attempt = python_str_or_empty(run.get("run_attempt"));
        Ok(Outcome {
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
        })
    }

    /// `(authorised, pinned run id)` from the PR's issue comments.
    fn authorisation(&mut self, pr: i64) -> Result<(bool, Option<String>), FindError> {
        let allowed = csv_set(&self.args.allowed_author_associations);
        let mut comments =
            self.client
                .get_all(&self.path(&format!("/issues/{pr}/comments")), &[], None)?;
        // Stable sort by the timestamp string: equal stamps keep API order.
        comments.sort_by_key(|c| python_str_or_empty(c.get("created_at")));
        for c in comments.iter().rev() {
            if self.args.rules == Rules::Reference
                && !allowed.contains(&python_str_or_empty(c.get("author_association")))
            {
                continue;
            }
            let body = python_str_or_empty(c.get("body"));
            if let Some(found) = command::last_command(&body, &self.args.pinned_run_command) {
                if self.args.rules == Rules::Strict && !self.may_authorise(c)? {
                    continue;
                }
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
                return Ok((true, pin));
            }
        }
        Ok((false, None))
    }

    /// Whether the author of comment `c` has write, maintain or admin
    /// permission on the repository (GitHub's collaborator permission
    /// endpoint; cached per login). A comment without a login, or a user
    /// GitHub does not know as a collaborator (404), does not authorise;
    /// any other failure is an error (the caller fails closed).
    fn may_authorise(&mut self, c: &Value) -> Result<bool, FindError> {
        let login = python_str_or_empty(c.pointer("/user/login"));
        if login.is_empty() {
            return Ok(false);
        }
        if let Some(ok) = self.permissions.get(&login) {
            return Ok(*ok);
        }
        let (ok, why) = match self.client.collaborator_access(&self.repo, &login)? {
            Some(access) => {
                let role = access.role_name.unwrap_or_default();
                let permission = access.permission.unwrap_or_default();
                let ok = AUTHORISING_ROLES.contains(&role.as_str())
                    || WRITE_PERMISSIONS.contains(&permission.as_str());
                (ok, format!("role '{role}', permission '{permission}'"))
            }
            None => (false, "not a collaborator".to_string()),
        };
        if !ok {
            eprintln!(
                "{} by {login} ignored: {login} has no write, maintain or admin permission on {} ({why})",
                self.args.pinned_run_command, self.args.repo
            );
        }
        self.permissions.insert(login, ok);
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

    fn latest_successful_run(
        &mut self,
        head_branch: &str,
        shas: &BTreeSet<String>,
    ) -> Result<Option<Value>, FindError> {
        if head_branch.is_empty() || shas.is_empty() {
            return Ok(None);
        }
        let runs = self.client.get_all(
            &self.path(&format!(
                "/actions/workflows/{}/runs",
                encode(&self.args.workflow_id)
            )),
            &[
                ("event", "pull_request"),
                ("branch", head_branch),
                ("status", "completed"),
            ],
            Some("workflow_runs"),
        )?;
        // Newest first, as GitHub lists them. Gated no-op runs succeed
        // without artifacts and are skipped by the artifact test.
        for run in runs {
            if run.get("conclusion").and_then(Value::as_str) != Some("success") {
                continue;
            }
            if !shas.contains(&python_str_or_empty(run.get("head_sha"))) {
                continue;
            }
            let id = int_field(&run, "id", "a workflow run")?;
            if has_reusable_results(&self.artifact_names(id)?) {
                return Ok(Some(run));
            }
        }
        Ok(None)
    }

    fn validate_run(
        &mut self,
        pr: i64,
        run: &Value,
        id: i64,
        pinned: bool,
    ) -> Result<(), FindError> {
        if run.get("event").and_then(Value::as_str) != Some("pull_request") {
            return refused(format!(
                "Reusable source run {id} is not a pull_request run."
            ));
        }
        if run.get("status").and_then(Value::as_str) != Some("completed") {
            return refused(format!("Reusable source run {id} is not completed."));
        }
        let conclusion = run.get("conclusion").and_then(Value::as_str).unwrap_or("");
        let lenient = pinned && self.args.rules == Rules::Reference;
        let allowed: &[&str] = if lenient {
            &["success", "failure", "cancelled"]
        } else {
            &["success"]
        };
        if !allowed.contains(&conclusion) || run.get("conclusion").is_some_and(|c| !c.is_string()) {
            let expected = if lenient {
                "success, failure, or cancelled"
            } else {
                "success"
            };
            return refused(format!(
                "Reusable source run {id} has conclusion {}; expected {expected}.",
                py_repr(run.get("conclusion"))
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
        if self.args.rules == Rules::Strict {
            let want = self.swept_head(pr)?.unwrap_or_default();
            if head != want {
                return refused(format!(
                    "Reusable source run {id} ran on {head}, not on PR #{pr}'s head commit {want} (the newest commit that is not a merge or [skip-sweep]); only a run of the PR's current code is reused."
                ));
            }
        }
        if !has_reusable_results(&self.artifact_names(id)?) {
            return refused(format!(
                "Reusable source run {id} has no benchmark, eval, or agentic result artifact."
            ));
        }
        Ok(())
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
    fn swept_head_skips_merges_and_skip_sweep_commits() {
        let c = |sha: &str, parents: usize, msg: &str| json!({"sha": sha, "parents": vec![json!({"sha": "p"}); parents], "commit": {"message": msg}});
        let list = vec![
            c("a", 1, "feat"),
            c("b", 1, "fix"),
            c("m", 2, "Merge branch 'main'"),
            c("r", 1, "chore: refresh [skip-sweep]"),
        ];
        assert_eq!(swept_head(&list).as_deref(), Some("b"));
        assert_eq!(swept_head(&list[..2]).as_deref(), Some("b"));
        // A code commit after the merge is the new head.
        let mut more = list.clone();
        more.push(c("z", 1, "tweak"));
        assert_eq!(swept_head(&more).as_deref(), Some("z"));
        assert_eq!(swept_head(&list[2..]), None);
        // No `parents`/`commit` (older fixtures): every commit counts.
        assert_eq!(swept_head(&[json!({"sha": "x"})]).as_deref(), Some("x"));
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
