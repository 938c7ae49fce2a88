//! `authorize-fork`: a trusted sweep of a fork pull request.
//!
//! Runs in a `pull_request_target` `labeled` job that never checks out the
//! PR's code. The rules are the reference's (`trusted-external-sweep.yml`):
//! the actor who applied the label needs write, maintain or admin
//! permission; the PR must be open, not a draft and from a fork; its head
//! must still be the SHA of the event (a push after the label is not
//! approved); the newly applied label must be its only primary sweep label;
//! GitHub must have produced a test merge commit. Then the sweep workflow is
//! dispatched from the default branch with the merge commit as `ref` and the
//! approved head SHA as `changelog-head-ref`, and the PR gets a comment with
//! the run's link.
//!
//! One difference: the reference finds the dispatched run by title and
//! creation time; here it is the newest run whose title holds the marker
//! and whose id is above every run listed before the dispatch, so no clock
//! is compared.
//!
//! Fail closed on the runners (issue #34 item 5): the dispatch is refused
//! unless the caller names the dedicated runner label of fork legs
//! (`--fork-runner-label`, the repository variable
//! `FORK_SWEEP_RUNNER_LABEL` that the dispatched workflow passes on as
//! `fork-runner-label`); without it a fork's code would run on main's
//! runners. The fork's configs are checked against the base's runner
//! labels by [`check_runners`] in the dispatched sweep.

use github_client::{Client, encode};
use serde_json::{Value, json};

use crate::{
    OpsError, PRIMARY_SWEEP_LABELS, Poll, Result, comment, label_names, need_str, refused,
    require_write, str_at,
};

/// What `authorize-fork` needs.
#[derive(Debug, Clone)]
pub struct ForkArgs {
    /// `owner/name` of the base repository.
    pub repo: String,
    /// The `pull_request_target` event payload.
    pub event: Value,
    /// Who applied the label (`github.actor`).
    pub actor: String,
    /// Workflow file dispatched (the manual sweep entry).
    pub workflow: String,
    /// `https://github.com` (or the GHES server) for links.
    pub server_url: String,
    /// How long to look for the dispatched run.
    pub lookup: Poll,
    /// The label only the runners kept for fork code carry (the
    /// repository variable `FORK_SWEEP_RUNNER_LABEL`); `None` or empty
    /// refuses the dispatch.
    pub fork_runner_label: Option<String>,
}

/// The repository variable the dispatched workflow reads the fork runner
/// label from (examples/e2e-tests.yml, examples/trusted-external-sweep.yml).
pub const FORK_RUNNER_VARIABLE: &str = "FORK_SWEEP_RUNNER_LABEL";

/// Longest runner label accepted: GitHub's own limit on a custom label.
pub const MAX_RUNNER_LABEL_CHARS: usize = 256;

/// Checks the dedicated fork runner label: set, not the label every
/// self-hosted runner has, and plain characters (it lands in `runs-on`).
///
/// # Errors
/// [`OpsError::Refused`] naming the variable to set.
pub fn check_fork_runner_label(label: Option<&str>) -> Result<String> {
    let label = label.map(str::trim).unwrap_or_default();
    if label.is_empty() {
        return refused(format!(
            "no dedicated runner label for fork legs: set the repository variable \
             {FORK_RUNNER_VARIABLE} (Settings > Secrets and variables > Actions > Variables) \
             to a label only the runners kept for fork code carry, and pass it to this step as \
             `fork-runner-label: ${{{{ vars.{FORK_RUNNER_VARIABLE} }}}}`; without it fork legs \
             would run on main's runners, so nothing was dispatched"
        ));
    }
    if label.eq_ignore_ascii_case("self-hosted") {
        return refused(format!(
            "fork-runner-label '{label}' is carried by every self-hosted runner: set \
             {FORK_RUNNER_VARIABLE} to a label only the runners kept for fork code carry"
        ));
    }
    let plain = label.chars().count() <= MAX_RUNNER_LABEL_CHARS
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c));
    if !plain {
        return refused(format!(
            "fork-runner-label {label:?} is not a plain runner label (letters, digits, '.', '_', \
             ':', '-'; at most {MAX_RUNNER_LABEL_CHARS} characters): fix {FORK_RUNNER_VARIABLE}"
        ));
    }
    Ok(label.to_string())
}

/// What was dispatched.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatched {
    pub pr_number: u64,
    pub head_sha: String,
    pub merge_sha: String,
    pub label: String,
    pub inputs: Value,
    /// The dispatched run, when it was found in time.
    pub run_url: Option<String>,
    /// Whether the PR comment was posted.
    pub commented: bool,
}

/// Authorises the event's head SHA and dispatches the sweep (module doc).
pub fn authorize(client: &Client, args: &ForkArgs) -> Result<Dispatched> {
    let ev = &args.event;
    check_fork_runner_label(args.fork_runner_label.as_deref())?;
    let label = applied_label(ev)?;
    let (number, event_sha) = event_pull(ev, &args.repo)?;

    require_write(client, &args.repo, &args.actor, "authorise external code")?;

    let approved = approved_pull(client, &args.repo, number, &event_sha, &label)?;
    let default_branch = str_at(ev, "/repository/default_branch")
        .unwrap_or("main")
        .to_string();

    let short: String = approved.head.chars().take(12).collect();
    let marker = format!("External PR #{number} @ {short}");
    let inputs = dispatch_inputs(&marker, &approved, &label);
    let run_url = dispatch_and_find(client, args, &default_branch, &inputs, &marker)?;
    let commented = comment_link(
        client,
        args,
        number,
        &approved.head,
        &label,
        run_url.as_deref(),
    );
    Ok(Dispatched {
        pr_number: number,
        head_sha: approved.head,
        merge_sha: approved.merge_sha,
        label,
        inputs,
        run_url,
        commented,
    })
}

/// The label the event applied, refused unless it is a primary sweep label.
fn applied_label(ev: &Value) -> Result<String> {
    let label = str_at(ev, "/label/name").unwrap_or_default().to_string();
    if !PRIMARY_SWEEP_LABELS.contains(&label.as_str()) {
        return refused(format!(
            "the applied label '{label}' is not a primary sweep label ({})",
            PRIMARY_SWEEP_LABELS.join(", ")
        ));
    }
    Ok(label)
}

/// The event's PR number and head SHA, refused unless the event's PR is
/// from a fork of `repo`.
fn event_pull(ev: &Value, repo: &str) -> Result<(u64, String)> {
    let number = ev
        .pointer("/pull_request/number")
        .and_then(Value::as_u64)
        .ok_or_else(|| OpsError::Failed("the event has no pull_request.number".into()))?;
    let event_sha = need_str(ev, "/pull_request/head/sha", "the event")?.to_string();
    if str_at(ev, "/pull_request/head/repo/full_name") == Some(repo) {
        return refused("trusted external dispatch is only for fork pull requests");
    }
    Ok((number, event_sha))
}

/// What [`approved_pull`] read off the PR as it stands.
struct ApprovedPull {
    /// The head SHA, equal to the event's.
    head: String,
    /// Every label of the PR.
    labels: Vec<String>,
    /// GitHub's test merge commit.
    merge_sha: String,
    /// The base SHA.
    base_sha: String,
}

/// Owns the checks of the PR as it stands: open, not a draft, from a fork,
/// head still `event_sha`, `label` its only primary sweep label, a test
/// merge commit produced.
fn approved_pull(
    client: &Client,
    repo: &str,
    number: u64,
    event_sha: &str,
    label: &str,
) -> Result<ApprovedPull> {
    let pull = client.get(&format!("/repos/{repo}/pulls/{number}"), &[])?;
    if pull["state"].as_str() != Some("open") || pull["draft"].as_bool() == Some(true) {
        return refused(format!(
            "pull request #{number} must be open and ready for review"
        ));
    }
    if str_at(&pull, "/head/repo/full_name") == Some(repo) {
        return refused("trusted external dispatch is only for fork pull requests");
    }
    let head = need_str(&pull, "/head/sha", "the pull request")?.to_string();
    if head != event_sha {
        return refused(format!(
            "the PR advanced from {event_sha} to {head}; remove and re-add the sweep label to approve the new revision"
        ));
    }
    let labels = label_names(&pull);
    let primary: Vec<&String> = labels
        .iter()
        .filter(|l| PRIMARY_SWEEP_LABELS.contains(&l.as_str()))
        .collect();
    if primary.len() != 1 || *primary[0] != label {
        return refused(format!(
            "expected exactly the newly applied primary sweep label '{label}'; found [{}]",
            primary
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let Some(merge_sha) = str_at(&pull, "/merge_commit_sha").map(str::to_string) else {
        return refused(
            "GitHub has not produced a merge commit; resolve conflicts and re-add the label",
        );
    };
    let base_sha = need_str(&pull, "/base/sha", "the pull request")?.to_string();
    Ok(ApprovedPull {
        head,
        labels,
        merge_sha,
        base_sha,
    })
}

/// The sweep workflow's dispatch inputs for the approved PR.
fn dispatch_inputs(marker: &str, approved: &ApprovedPull, label: &str) -> Value {
    let labels = &approved.labels;
    let has = |l: &str| labels.iter().any(|x| x == l);
    json!({
        "test-name": marker,
        "ref": approved.merge_sha,
        "changelog-base-ref": approved.base_sha,
        "changelog-head-ref": approved.head,
        "trim-conc": (label == "sweep-enabled").to_string(),
        "all-evals": has("all-evals").to_string(),
        "evals-only": has("evals-only").to_string(),
        "fail-fast": label.contains("fail-fast").to_string(),
        "agentx-fast": has("agentx-fast").to_string(),
        "pr-labels-json": serde_json::to_string(labels).unwrap_or_else(|_| "[]".into()),
    })
}

/// The newest `workflow_dispatch` runs of the workflow at `runs_path`.
fn list_dispatch_runs(client: &Client, runs_path: &str) -> Result<Vec<Value>> {
    let v = client.get(
        runs_path,
        &[("event", "workflow_dispatch"), ("per_page", "20")],
    )?;
    Ok(v["workflow_runs"].as_array().cloned().unwrap_or_default())
}

/// Owns the dispatch: notes the newest run id listed before it, sends it
/// from `default_branch`, and looks (within `args.lookup`) for the newest
/// later run whose title holds `marker`; its link, when found in time.
fn dispatch_and_find(
    client: &Client,
    args: &ForkArgs,
    default_branch: &str,
    inputs: &Value,
    marker: &str,
) -> Result<Option<String>> {
    let runs_path = format!(
        "/repos/{}/actions/workflows/{}/runs",
        args.repo,
        encode(&args.workflow)
    );
    let seen = list_dispatch_runs(client, &runs_path)?
        .iter()
        .filter_map(|r| r["id"].as_u64())
        .max()
        .unwrap_or(0);

    client.post(
        &format!(
            "/repos/{}/actions/workflows/{}/dispatches",
            args.repo,
            encode(&args.workflow)
        ),
        &json!({ "ref": default_branch, "inputs": inputs }),
    )?;

    Ok(args
        .lookup
        .until("the dispatched run", || {
            Ok(list_dispatch_runs(client, &runs_path)?
                .iter()
                .filter(|r| r["id"].as_u64().is_some_and(|id| id > seen))
                .filter(|r| {
                    r["display_title"]
                        .as_str()
                        .is_some_and(|t| t.contains(marker))
                })
                .max_by_key(|r| r["id"].as_u64())
                .and_then(|r| r["html_url"].as_str().map(str::to_string)))
        })
        .ok())
}

/// Posts the PR comment linking the run (or the workflow's runs when the
/// run was not found); whether it was posted. A failure is a warning: the
/// sweep is already dispatched.
fn comment_link(
    client: &Client,
    args: &ForkArgs,
    number: u64,
    head: &str,
    label: &str,
    run_url: Option<&str>,
) -> bool {
    let link = match run_url {
        Some(url) => format!("[trusted sweep run]({url})"),
        None => format!(
            "[{} runs]({}/{}/actions/workflows/{})",
            args.workflow, args.server_url, args.repo, args.workflow
        ),
    };
    let body = format!(
        "Dispatched {link} for the approved external revision `{head}` (label `{label}`).\n\
         Later commits are not trusted automatically: remove and re-add the primary sweep label to approve a new SHA."
    );
    match comment(client, &args.repo, number, &body) {
        Ok(_) => true,
        Err(e) => {
            let msg = format!("the sweep was dispatched, but the PR comment failed: {e}");
            sweep_model::gha::annotate(sweep_model::gha::Level::Warning, None, None, &msg);
            eprintln!("warning: {}", sweep_model::gha::log_text(&msg));
            false
        }
    }
}

/// Most bytes of the search-space config `check-fork-runners` reads: the
/// limit `generate-matrix split` applies to the same file.
pub const MAX_MATRIX_BYTES: u64 = 64 * 1024 * 1024;

/// How deep a matrix is searched for rows: the search-space config nests
/// rows three levels down (`single_node.1k1k[i]`); 16 leaves room and
/// bounds the walk.
pub const MAX_MATRIX_DEPTH: usize = 16;

/// One master config file of the checkout, for naming the config a bad
/// runner came from.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    /// The path as given (messages).
    pub path: String,
    /// The parsed file.
    pub doc: sweep_model::yaml::YamlDoc,
}

/// What [`check_runners`] saw when every runner was a known label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnersChecked {
    /// Matrix rows checked.
    pub rows: usize,
    /// The distinct runner labels they use, sorted.
    pub runners: Vec<String>,
}

/// Checks every row of a trusted dispatch's matrix: its `runner` must be a
/// label of the base's runner file (`runners`), so a fork config cannot
/// name `self-hosted` or any label main's runners carry outside that file.
/// The configs that name a bad runner are found in `configs` (the
/// checkout's master configs) and named with file and line.
///
/// # Errors
/// [`OpsError::Refused`] naming each config (or, when no config names it,
/// the row's `exp-name`), the value and the known labels.
pub fn check_runners(
    matrix: &Value,
    runners: &sweep_model::runners::Runners,
    configs: &[ConfigFile],
) -> Result<RunnersChecked> {
    let mut found = Vec::new();
    matrix_rows(matrix, 0, &mut found)?;
    let (seen, bad) = sort_runners(&found, runners);
    if bad.is_empty() {
        return Ok(RunnersChecked {
            rows: found.len(),
            runners: seen.into_iter().collect(),
        });
    }
    let known: Vec<&str> = runners.labels.keys().map(String::as_str).collect();
    let file = runners.file.display();
    let mut lines = Vec::new();
    for (runner, exps) in &bad {
        let mut named = configs_naming(configs, runner);
        if named.is_empty() {
            named.push(format!("the matrix rows {}", exps.join(", ")));
        }
        for n in named {
            lines.push(format!(
                "{n}: runner {runner:?} is not a label of the base's {file}"
            ));
        }
    }
    refused(format!(
        "{} (known labels: {}); a fork's legs run only on the labels the base branch lists",
        lines.join("; "),
        known.join(", ")
    ))
}

/// Collects into `out` every object of `v` (at most [`MAX_MATRIX_DEPTH`]
/// levels down) that has a `runner` key: the matrix rows.
fn matrix_rows<'a>(v: &'a Value, depth: usize, out: &mut Vec<&'a Value>) -> Result<()> {
    if depth > MAX_MATRIX_DEPTH {
        return Err(OpsError::Failed(format!(
            "the matrix nests deeper than {MAX_MATRIX_DEPTH} levels"
        )));
    }
    match v {
        Value::Object(m) if m.contains_key("runner") => out.push(v),
        Value::Object(m) => {
            for x in m.values() {
                matrix_rows(x, depth + 1, out)?;
            }
        }
        Value::Array(a) => {
            for x in a {
                matrix_rows(x, depth + 1, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A runner's unknown label with the `exp-name`s of the rows naming it.
type BadRunner = (String, Vec<String>);

/// Sorts the rows' runners into the known labels used (sorted) and the
/// unknown ones, in first-seen order, each with its rows' distinct
/// `exp-name`s.
fn sort_runners(
    found: &[&Value],
    runners: &sweep_model::runners::Runners,
) -> (std::collections::BTreeSet<String>, Vec<BadRunner>) {
    let mut seen = std::collections::BTreeSet::new();
    let mut bad: Vec<BadRunner> = Vec::new();
    for row in found {
        let runner = match &row["runner"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if runners.labels.contains_key(&runner) {
            seen.insert(runner);
            continue;
        }
        let exp = str_at(row, "/exp-name").unwrap_or("?").to_string();
        match bad.iter_mut().find(|(r, _)| *r == runner) {
            Some((_, exps)) => {
                if !exps.contains(&exp) {
                    exps.push(exp);
                }
            }
            None => bad.push((runner, vec![exp])),
        }
    }
    (seen, bad)
}

/// Each master config entry of `configs` whose `runner` is `runner`, as
/// `<file>[:<line>]: config '<key>'`.
fn configs_naming(configs: &[ConfigFile], runner: &str) -> Vec<String> {
    let mut named = Vec::new();
    for c in configs {
        let Value::Object(entries) = c.doc.value() else {
            continue;
        };
        for (key, entry) in entries {
            if entry.get("runner").and_then(Value::as_str) == Some(runner) {
                let seg = |k: &str| sweep_model::yaml::PathSeg::Key(k.to_string());
                let at = c
                    .doc
                    .line_of(&[seg(key), seg("runner")])
                    .map(|l| format!(":{l}"))
                    .unwrap_or_default();
                named.push(format!("{}{at}: config '{key}'", c.path));
            }
        }
    }
    named
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report
    use super::*;

    fn runners() -> sweep_model::runners::Runners {
        let doc =
            sweep_model::yaml::parse_str("labels:\n  h100: [h100_0]\n  cluster:b200: [b200_0]\n")
                .unwrap();
        sweep_model::runners::Runners::from_doc(std::path::Path::new("configs/runners.yaml"), &doc)
            .unwrap()
    }

    fn config(text: &str) -> ConfigFile {
        ConfigFile {
            path: "configs/nvidia-master.yaml".into(),
            doc: sweep_model::yaml::parse_str(text).unwrap(),
        }
    }

    fn msg<T: std::fmt::Debug>(r: Result<T>) -> String {
        match r {
            Err(OpsError::Refused(m)) => m,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn the_label_is_required_and_must_be_dedicated() {
        for none in [None, Some(""), Some("  ")] {
            let m = msg(check_fork_runner_label(none));
            assert!(
                m.contains("set the repository variable FORK_SWEEP_RUNNER_LABEL"),
                "{m}"
            );
            assert!(m.contains("nothing was dispatched"), "{m}");
        }
        let m = msg(check_fork_runner_label(Some("Self-Hosted")));
        assert!(m.contains("every self-hosted runner"), "{m}");
        for odd in ["a,b", "x\ny", "fork sweeps", "${{ x }}"] {
            let m = msg(check_fork_runner_label(Some(odd)));
            assert!(m.contains("not a plain runner label"), "{m}");
        }
        assert_eq!(
            check_fork_runner_label(Some(" fork-sweeps ")).unwrap(),
            "fork-sweeps"
        );
    }

    #[test]
    fn rows_on_known_labels_pass() {
        let m = serde_json::json!({"single_node": {"1k1k": [
            {"runner": "h100", "exp-name": "a"}, {"runner": "cluster:b200", "exp-name": "b"}]},
            "multi_node": {}, "evals": [{"runner": "h100", "exp-name": "c"}]});
        let r = check_runners(&m, &runners(), &[]).unwrap();
        assert_eq!(r.rows, 3);
        assert_eq!(r.runners, ["cluster:b200", "h100"]);
    }

    #[test]
    fn an_unknown_runner_names_the_config_the_value_and_the_labels() {
        let m = serde_json::json!({"single_node": {"1k1k": [
            {"runner": "self-hosted", "exp-name": "evil_1024"}, {"runner": "h100", "exp-name": "ok"}]}});
        let c = config(
            "ok-fp8-h100-sglang:\n  runner: h100\nevil-fp8-h100-sglang:\n  image: x\n  runner: self-hosted\n",
        );
        let m = msg(check_runners(&m, &runners(), &[c]));
        assert!(
            m.contains(
                "configs/nvidia-master.yaml:5: config 'evil-fp8-h100-sglang': runner \"self-hosted\" is not a label of the base's configs/runners.yaml"
            ),
            "{m}"
        );
        assert!(m.contains("(known labels: h100, cluster:b200)"), "{m}");
        assert!(!m.contains("ok-fp8"), "{m}");
    }

    #[test]
    fn a_runner_no_config_names_is_reported_by_its_rows() {
        let m = serde_json::json!({"multi_node": {"8k1k": [
            {"runner": "gpu-main", "exp-name": "x_8192"}, {"runner": 7, "exp-name": "y"}]}});
        let m = msg(check_runners(&m, &runners(), &[]));
        assert!(
            m.contains("the matrix rows x_8192: runner \"gpu-main\""),
            "{m}"
        );
        assert!(m.contains("the matrix rows y: runner \"7\""), "{m}");
    }
}
