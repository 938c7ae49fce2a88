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
    let label = str_at(ev, "/label/name").unwrap_or_default().to_string();
    if !PRIMARY_SWEEP_LABELS.contains(&label.as_str()) {
        return refused(format!(
            "the applied label '{label}' is not a primary sweep label ({})",
            PRIMARY_SWEEP_LABELS.join(", ")
        ));
    }
    let number = ev
        .pointer("/pull_request/number")
        .and_then(Value::as_u64)
        .ok_or_else(|| OpsError::Failed("the event has no pull_request.number".into()))?;
    let event_sha = need_str(ev, "/pull_request/head/sha", "the event")?.to_string();
    if str_at(ev, "/pull_request/head/repo/full_name") == Some(args.repo.as_str()) {
        return refused("trusted external dispatch is only for fork pull requests");
    }

    require_write(client, &args.repo, &args.actor, "authorise external code")?;

    let pull = client.get(&format!("/repos/{}/pulls/{number}", args.repo), &[])?;
    if pull["state"].as_str() != Some("open") || pull["draft"].as_bool() == Some(true) {
        return refused(format!(
            "pull request #{number} must be open and ready for review"
        ));
    }
    if str_at(&pull, "/head/repo/full_name") == Some(args.repo.as_str()) {
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
    let default_branch = str_at(ev, "/repository/default_branch")
        .unwrap_or("main")
        .to_string();

    let short: String = head.chars().take(12).collect();
    let marker = format!("External PR #{number} @ {short}");
    let has = |l: &str| labels.iter().any(|x| x == l);
    let inputs = json!({
        "test-name": marker,
        "ref": merge_sha,
        "changelog-base-ref": base_sha,
        "changelog-head-ref": head,
        "trim-conc": (label == "sweep-enabled").to_string(),
        "all-evals": has("all-evals").to_string(),
        "evals-only": has("evals-only").to_string(),
        "fail-fast": label.contains("fail-fast").to_string(),
        "agentx-fast": has("agentx-fast").to_string(),
        "pr-labels-json": serde_json::to_string(&labels).unwrap_or_else(|_| "[]".into()),
    });

    let runs_path = format!(
        "/repos/{}/actions/workflows/{}/runs",
        args.repo,
        encode(&args.workflow)
    );
    let list_runs = || -> Result<Vec<Value>> {
        let v = client.get(
            &runs_path,
            &[("event", "workflow_dispatch"), ("per_page", "20")],
        )?;
        Ok(v["workflow_runs"].as_array().cloned().unwrap_or_default())
    };
    let seen = list_runs()?
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

    let run_url = args
        .lookup
        .until("the dispatched run", || {
            Ok(list_runs()?
                .iter()
                .filter(|r| r["id"].as_u64().is_some_and(|id| id > seen))
                .filter(|r| {
                    r["display_title"]
                        .as_str()
                        .is_some_and(|t| t.contains(&marker))
                })
                .max_by_key(|r| r["id"].as_u64())
                .and_then(|r| r["html_url"].as_str().map(str::to_string)))
        })
        .ok();

    let link = match &run_url {
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
    let commented = match comment(client, &args.repo, number, &body) {
        Ok(_) => true,
        Err(e) => {
            let msg = format!("the sweep was dispatched, but the PR comment failed: {e}");
            sweep_model::gha::annotate(sweep_model::gha::Level::Warning, None, None, &msg);
            eprintln!("warning: {msg}");
            false
        }
    };
    Ok(Dispatched {
        pr_number: number,
        head_sha: head,
        merge_sha,
        label,
        inputs,
        run_url,
        commented,
    })
}
