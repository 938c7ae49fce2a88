//! `merge`: the maintainer's merge helper (the reference's
//! `utils/merge_with_reuse.sh`) through the API, in two phases around the
//! local part.
//!
//! The reference posts `/reuse-sweep-run` *before* it pushes the prepared
//! branch, so that the PR run of the new head sees the authorisation and
//! skips its sweep. The local part — merging `main` into the PR branch and
//! resolving `perf-changelog.yaml` — is `check-changelog prepare-merge`
//! here, run by the maintainer between the two phases:
//!
//! * phase 1, `merge --pr N` (no `--head-sha`): the reference's checks —
//!   open, not from a fork, exactly one primary sweep label and it is a
//!   full-sweep one, no reuse-incompatible label (`evals-only`,
//!   `agentx-fast`), a `success` sweep run on one of its commits with
//!   unexpired result artifacts — then the `/reuse-sweep-run` comment;
//! * phase 2, `merge --pr N --head-sha <pushed head>`: the same checks, a
//!   refusal unless the PR head is that SHA and a `/reuse-sweep-run`
//!   comment is on the PR; a bounded wait for the post-merge gate check on
//!   the head (`--check-name`: the reusable workflow's `check-changelog`
//!   job, `<caller job> / check-changelog` in a caller); a re-read of the
//!   head; a second `/reuse-sweep-run` comment, written after the push so
//!   that the approval covers the prepared head (issue #34); the merge with
//!   `sha` = the head (GitHub refuses if it moved);
//!   a bounded wait for the push-to-main sweep run of the merge commit.

use github_client::Client;
use serde_json::{Value, json};

use crate::{
    OpsError, PRIMARY_SWEEP_LABELS, Poll, Result, artifact_names, comment, label_names, need_str,
    pull_commit_shas, refused, state_of, str_at,
};

/// Full-sweep labels: the only sweeps whose results can be reused.
pub const FULL_SWEEP_LABELS: [&str; 4] = [
    "full-sweep-enabled",
    "non-canary-full-sweep-enabled",
    "full-sweep-fail-fast",
    "full-sweep-fail-fast-no-canary",
];

/// Labels whose sweeps are not reusable.
pub const REUSE_INCOMPATIBLE_LABELS: [&str; 2] = ["evals-only", "agentx-fast"];

/// Artifacts that make a sweep run reusable (the reuse protocol's rule).
pub fn has_result_artifacts<'a>(mut names: impl Iterator<Item = &'a String>) -> bool {
    names.any(|n| n == "results_bmk" || n == "eval_results_all" || n.starts_with("bmk_agentic_"))
}

/// What `merge` needs.
#[derive(Debug, Clone)]
pub struct MergeArgs {
    pub repo: String,
    pub pr: u64,
    /// The head the maintainer prepared and pushed; `None` = phase 1.
    pub head_sha: Option<String>,
    /// Name of the gate's check run.
    pub check_name: String,
    /// Workflow file of the sweep (PR runs and the push-to-main run).
    pub workflow: String,
    /// `squash` (the reference), `merge` or `rebase`.
    pub merge_method: String,
    /// Wait for the gate check.
    pub check_wait: Poll,
    /// Wait for the push-to-main run; `None` = do not wait.
    pub reuse_wait: Option<Poll>,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The `success` PR sweep run the push will reuse.
    pub source_run_id: u64,
    /// The merge commit; `None` after phase 1 (authorised, not merged).
    pub merge_sha: Option<String>,
    /// URL of the push-to-main run, when waited for.
    pub push_run_url: Option<String>,
}

/// The comment that authorises the reuse.
pub const REUSE_COMMAND: &str = "/reuse-sweep-run";

/// Runs phase 1 or 2 of the merge helper (module doc).
pub fn merge(client: &Client, a: &MergeArgs) -> Result<Merged> {
    let repo = &a.repo;
    let pull = client.get(&format!("/repos/{repo}/pulls/{}", a.pr), &[])?;
    check_pull(&pull, a)?;
    let branch = need_str(&pull, "/head/ref", "the pull request")?.to_string();
    let source_run_id = eligible_run(client, a, &branch)?;

    let Some(head_sha) = a.head_sha.as_deref() else {
        comment(client, repo, a.pr, REUSE_COMMAND)?;
        return Ok(Merged {
            source_run_id,
            merge_sha: None,
            push_run_url: None,
        });
    };
    head_is(&pull, head_sha)?;
    require_phase_one(client, a)?;
    gate_check_passed(client, a, head_sha)?;
    let merge_sha = merge_head(client, a, head_sha)?;

    let push_run_url = match a.reuse_wait {
        None => None,
        Some(wait) => Some(wait_push_run(client, a, &merge_sha, wait)?),
    };
    Ok(Merged {
        source_run_id,
        merge_sha: Some(merge_sha),
        push_run_url,
    })
}

/// Refuses phase 2 unless the PR carries phase 1's reuse comment.
fn require_phase_one(client: &Client, a: &MergeArgs) -> Result<()> {
    let comments = client.get_all(
        &format!("/repos/{}/issues/{}/comments", a.repo, a.pr),
        &[],
        None,
    )?;
    if !comments
        .iter()
        .any(|c| c["body"].as_str().map(str::trim) == Some(REUSE_COMMAND))
    {
        return refused(format!(
            "PR #{} has no {REUSE_COMMAND} comment: run phase 1 (without --head-sha) before preparing and pushing the merge",
            a.pr
        ));
    }
    Ok(())
}

/// Waits (within `a.check_wait`) for the newest gate check on `head_sha`
/// to complete; refused unless it concluded `success`.
fn gate_check_passed(client: &Client, a: &MergeArgs, head_sha: &str) -> Result<()> {
    let check_path = format!("/repos/{}/commits/{head_sha}/check-runs", a.repo);
    let check = a
        .check_wait
        .until(&format!("check '{}'", a.check_name), || {
            let v = client.get(&check_path, &[("per_page", "100")])?;
            let latest = v["check_runs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["name"].as_str() == Some(a.check_name.as_str()))
                .max_by(|x, y| {
                    x["started_at"]
                        .as_str()
                        .unwrap_or("")
                        .cmp(y["started_at"].as_str().unwrap_or(""))
                })
                .cloned();
            Ok(latest.filter(|c| c["status"].as_str() == Some("completed")))
        })?;
    if check["conclusion"].as_str() != Some("success") {
        return refused(format!(
            "check '{}' on {} concluded {}{}",
            a.check_name,
            short(head_sha),
            check["conclusion"].as_str().unwrap_or("unknown"),
            str_at(&check, "/details_url")
                .map(|u| format!(" - {u}"))
                .unwrap_or_default()
        ));
    }
    Ok(())
}

/// Owns the merge itself: the PR's head must still be `head_sha`, the
/// reuse is approved again, and GitHub merges exactly that head. Returns
/// the merge commit.
fn merge_head(client: &Client, a: &MergeArgs, head_sha: &str) -> Result<String> {
    let repo = &a.repo;
    let pull = client.get(&format!("/repos/{repo}/pulls/{}", a.pr), &[])?;
    head_is(&pull, head_sha)?;
    // Approve again, now that the prepared head is pushed and checked: the
    // push-to-main lookup binds the approval to the head it saw (issue
    // #34), so the merge of main and the refresh commit, pushed after
    // phase 1's comment, are covered even when main brought a change to
    // a config, the changelog or a workflow.
    comment(client, repo, a.pr, REUSE_COMMAND)?;
    let answer = client
        .put(
            &format!("/repos/{repo}/pulls/{}/merge", a.pr),
            &json!({ "sha": head_sha, "merge_method": a.merge_method }),
        )
        .map_err(|e| match e.status() {
            // 405 not mergeable, 409 head moved, 422 bad method: a "no".
            Some(405 | 409 | 422) => {
                OpsError::Refused(format!("GitHub refused the merge of #{}: {e}", a.pr))
            }
            _ => e.into(),
        })?;
    Ok(need_str(&answer, "/sha", "the merge answer")?.to_string())
}

/// The first 8 characters (by char: `--head-sha` is user input).
fn short(sha: &str) -> String {
    sha.chars().take(8).collect()
}

fn head_is(pull: &Value, want: &str) -> Result<()> {
    let head = str_at(pull, "/head/sha").unwrap_or("");
    if head != want {
        return refused(format!(
            "the PR head is {}, expected {}: push the prepared merge (check-changelog prepare-merge) and pass its SHA",
            short(head),
            short(want)
        ));
    }
    Ok(())
}

fn check_pull(pull: &Value, a: &MergeArgs) -> Result<()> {
    let state = pull["state"].as_str().unwrap_or("unknown");
    if state != "open" {
        return refused(format!("PR #{} is {state}, expected open", a.pr));
    }
    if str_at(pull, "/head/repo/full_name") != Some(a.repo.as_str()) {
        return refused(format!(
            "PR #{} is from a fork; the merge helper cannot update its branch",
            a.pr
        ));
    }
    let labels = label_names(pull);
    let sweep: Vec<&String> = labels
        .iter()
        .filter(|l| PRIMARY_SWEEP_LABELS.contains(&l.as_str()))
        .collect();
    if sweep.len() != 1 {
        return refused(format!("PR #{} must have exactly one sweep label", a.pr));
    }
    if !FULL_SWEEP_LABELS.contains(&sweep[0].as_str()) {
        return refused(format!(
            "PR #{} must use a full-sweep label for artifact reuse",
            a.pr
        ));
    }
    let bad: Vec<&str> = labels
        .iter()
        .map(String::as_str)
        .filter(|l| REUSE_INCOMPATIBLE_LABELS.contains(l))
        .collect();
    if !bad.is_empty() {
        return refused(format!(
            "PR #{} uses {}, which is not eligible for artifact reuse",
            a.pr,
            bad.join(", ")
        ));
    }
    Ok(())
}

/// The first `success` PR sweep run on a commit of the PR with result artifacts.
fn eligible_run(client: &Client, a: &MergeArgs, branch: &str) -> Result<u64> {
    let shas = pull_commit_shas(client, &a.repo, a.pr)?;
    let runs = client.completed_pull_request_runs(&a.repo, &a.workflow, branch)?;
    for run in &runs {
        if run["conclusion"].as_str() != Some("success") {
            continue;
        }
        let (Some(id), Some(sha)) = (run["id"].as_u64(), run["head_sha"].as_str()) else {
            continue;
        };
        if !shas.contains(sha) {
            continue;
        }
        if has_result_artifacts(artifact_names(client, &a.repo, id)?.iter()) {
            return Ok(id);
        }
    }
    refused(format!(
        "PR #{} has no successful reusable {} run on a current commit",
        a.pr, a.workflow
    ))
}

fn wait_push_run(client: &Client, a: &MergeArgs, merge_sha: &str, wait: Poll) -> Result<String> {
    // The repository-wide run list filtered by commit: the merge commit has
    // exactly the push runs of this merge.
    let path = format!("/repos/{}/actions/runs", a.repo);
    let workflow_path = format!(".github/workflows/{}", a.workflow);
    let run = wait.until(&format!("the push run of {}", short(merge_sha)), || {
        let v = client.get(&path, &[("event", "push"), ("head_sha", merge_sha)])?;
        Ok(v["workflow_runs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["head_sha"].as_str() == Some(merge_sha))
            .filter(|r| r["path"].as_str() == Some(workflow_path.as_str()))
            .find(|r| r["status"].as_str() == Some("completed"))
            .cloned())
    })?;
    let url = str_at(&run, "/html_url").unwrap_or_default().to_string();
    if run["conclusion"].as_str() != Some("success") {
        return refused(format!(
            "merged as {}, but the push run is {} - {url}",
            short(merge_sha),
            state_of(&run)
        ));
    }
    Ok(url)
}
