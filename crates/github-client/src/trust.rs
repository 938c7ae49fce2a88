//! The trust rules every entry point that acts on another run's artifacts
//! shares (`reuse-sweep find`, `/stage-results`, `sweep-ops
//! recover-ingest`): who may authorise, which commit a sweep stands for, and
//! whose run it is. Each caller keeps its own protocol; these answers are
//! the same everywhere so the strict rules cannot drift apart.
//!
//! * who may authorise: [`may_write`];
//! * which commit a sweep stands for: [`swept_head`], and what may follow
//!   it: [`unapproved_change`] (the approval binds to the head it saw);
//! * under which labels the run was made: [`LabelHistory`] and
//!   [`run_label_refusal`];
//! * whose run it is: [`run_is_from`].

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use crate::{Access, Client, Result, encode};

/// What a sweep reads from the repository, the one definition the reuse
/// rules use: the master configs and `runners.yaml` (under `configs/`),
/// the changelog that drives it, the benchmark scripts its legs run
/// (`benchmarks/`), the launch scripts (`runners/`), the helpers those
/// call (`utils/`), and the workflows and local actions (`.github/`). An
/// entry ending in `/` is a folder (everything under it), any other a
/// file at the repository root.
pub const SWEEP_INPUTS: [&str; 6] = [
    "configs/",
    "perf-changelog.yaml",
    "benchmarks/",
    "runners/",
    "utils/",
    ".github/",
];

/// Whether a sweep reads `path` (a repository-relative path as GitHub
/// lists it): see [`SWEEP_INPUTS`].
pub fn is_sweep_input(path: &str) -> bool {
    SWEEP_INPUTS.iter().any(|p| {
        if p.ends_with('/') {
            path.starts_with(p)
        } else {
            path == *p
        }
    })
}

/// GitHub's compare endpoint lists at most 300 changed files: a diff that
/// reaches this many may hold more, so it cannot be shown to leave the
/// sweep's inputs alone and is refused.
pub const COMPARE_FILES_LIMIT: usize = 300;

/// Whether `t` is a timestamp as GitHub writes them (`YYYY-MM-DDTHH:MM:SSZ`),
/// the form in which string order is time order. Any other form is not
/// compared at all (fail closed).
fn is_utc_stamp(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

fn sha_of(c: &Value) -> &str {
    c.get("sha").and_then(Value::as_str).unwrap_or("")
}

fn parents_of(c: &Value) -> Vec<&str> {
    c.get("parents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("sha").and_then(Value::as_str))
        .collect()
}

/// What [`unapproved_change`] judges.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// `owner/name` as given (compared with the PR's head repository).
    pub repo: &'a str,
    /// The PR (`GET /pulls/{n}`: `head.ref`, `head.repo.full_name`).
    pub pull: &'a Value,
    /// The PR's commits in API order (oldest first), with `parents`.
    pub commits: &'a [Value],
    /// The commit the reused run swept.
    pub swept: &'a str,
    /// `created_at` of the deciding `/reuse-sweep-run` comment (an edit
    /// does not move it: anyone with write access may edit a comment).
    pub approved_at: &'a str,
}

/// The approval binds to the head it saw. Every PR commit after the swept
/// head — merge commits included, `[skip-sweep]` or not — is accepted
/// only if
/// * (a) it was on the PR's head branch when the approval was written:
///   an ancestor of (or equal to) the head the branch pointed to after the
///   last push GitHub recorded before the comment's `created_at`
///   (`GET /repos/{o}/{r}/activity?ref=refs/heads/<head.ref>`, server
///   timestamps; commit dates are the pusher's to choose and are never
///   read), or
/// * (b) it changes no file a sweep reads ([`is_sweep_input`]), judged by
///   its diff against its first parent (`GET /repos/{o}/{r}/compare/
///   <first parent>...<sha>`; for a merge commit that is everything the
///   merge brought in).
///
/// `Ok(Some(reason))` names the first commit that is neither and the file;
/// `Ok(None)` accepts. GitHub failing is `Err` (the caller fails closed).
pub fn unapproved_change(client: &Client, b: &Binding<'_>) -> Result<Option<String>> {
    let repo_path = b.repo.split('/').map(encode).collect::<Vec<_>>().join("/");
    let Some(i) = b.commits.iter().position(|c| sha_of(c) == b.swept) else {
        return Ok(Some(format!(
            "the swept head {} is not in the PR's commit list",
            b.swept
        )));
    };
    let mut seen: Option<BTreeSet<String>> = None;
    for c in &b.commits[i + 1..] {
        let sha = sha_of(c);
        let Some(first) = parents_of(c).first().copied() else {
            return Ok(Some(format!(
                "commit {sha} after the swept head {} names no parent, so what it changed cannot be read",
                b.swept
            )));
        };
        let file = match changed_input(client, &repo_path, first, sha)? {
            Diff::Clean => continue,
            Diff::Touches(file) => file,
            Diff::Unreadable(why) => {
                return Ok(Some(format!(
                    "commit {sha} after the swept head {}: {why}",
                    b.swept
                )));
            }
        };
        if seen.is_none() {
            seen = Some(seen_at_approval(client, &repo_path, b)?);
        }
        if seen.as_ref().is_some_and(|s| s.contains(sha)) {
            continue;
        }
        return Ok(Some(format!(
            "commit {sha} after the swept head {} changes {file}, which a sweep reads, and was not on the PR's head branch when the approval was written ({}); the reused run did not sweep it. Re-run the sweep on the PR's head, or approve again after the push",
            b.swept, b.approved_at
        )));
    }
    Ok(None)
}

/// What a commit's diff against its first parent says about the sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Diff {
    /// It changes no file a sweep reads.
    Clean,
    /// It changes this file, which a sweep reads.
    Touches(String),
    /// Why the diff cannot be judged (refused: fail closed).
    Unreadable(String),
}

/// What `sha` changes against `parent`, as far as a sweep is concerned.
fn changed_input(client: &Client, repo_path: &str, parent: &str, sha: &str) -> Result<Diff> {
    let cmp = client.get(
        &format!(
            "/repos/{repo_path}/compare/{}...{}",
            encode(parent),
            encode(sha)
        ),
        &[],
    )?;
    if cmp.get("status").and_then(Value::as_str) != Some("ahead") {
        return Ok(Diff::Unreadable(format!(
            "GitHub does not compare it as ahead of its first parent {parent}"
        )));
    }
    let Some(files) = cmp.get("files").and_then(Value::as_array) else {
        return Ok(Diff::Unreadable(
            "GitHub did not list the files it changes".into(),
        ));
    };
    if files.len() >= COMPARE_FILES_LIMIT {
        return Ok(Diff::Unreadable(format!(
            "it changes {} or more files, more than GitHub lists, so they cannot all be checked",
            COMPARE_FILES_LIMIT
        )));
    }
    for f in files {
        for key in ["filename", "previous_filename"] {
            let Some(name) = f.get(key).and_then(Value::as_str) else {
                if key == "filename" {
                    return Ok(Diff::Unreadable(
                        "GitHub listed a changed file without a name".into(),
                    ));
                }
                continue;
            };
            if is_sweep_input(name) {
                return Ok(Diff::Touches(name.to_string()));
            }
        }
    }
    Ok(Diff::Clean)
}

/// The PR commits on its head branch when the approval was written: the
/// head after the newest recorded push strictly before `approved_at`, and
/// its ancestors among the PR's commits. Empty when that cannot be shown
/// (see [`head_when_written`]) or when that head is no longer a PR commit.
fn seen_at_approval(client: &Client, repo_path: &str, b: &Binding<'_>) -> Result<BTreeSet<String>> {
    let mut seen = BTreeSet::new();
    let Ok(head) = pushed_head_before(client, repo_path, b.repo, b.pull, b.approved_at)? else {
        return Ok(seen);
    };
    let parents: HashMap<&str, Vec<&str>> = b
        .commits
        .iter()
        .map(|c| (sha_of(c), parents_of(c)))
        .collect();
    let mut todo = vec![head.as_str()];
    while let Some(sha) = todo.pop() {
        let Some(ps) = parents.get(sha) else {
            continue;
        };
        if seen.insert(sha.to_string()) {
            todo.extend(ps.iter().copied());
        }
    }
    Ok(seen)
}

/// The PR's head when something was written at `at` (a comment's
/// `created_at`): the commit its head branch pointed to after the newest
/// push GitHub recorded strictly before `at` (`GET /repos/{o}/{r}/activity
/// ?ref=refs/heads/<head.ref>`, server timestamps; commit dates are the
/// pusher's to choose and are never read). `pull` is `GET /pulls/{n}`,
/// `repo` the repository `owner/name` as given.
///
/// `Ok(Err(why))` when that cannot be shown (fail closed): the PR's head is
/// in another repository (a fork's pushes are not this repository's
/// activity), no push before `at` is recorded, a timestamp that is not
/// GitHub's form, or two pushes in the same second that disagree. GitHub
/// failing is `Err`.
pub fn head_when_written(
    client: &Client,
    repo: &str,
    pull: &Value,
    at: &str,
) -> Result<std::result::Result<String, String>> {
    let repo_path = repo.split('/').map(encode).collect::<Vec<_>>().join("/");
    pushed_head_before(client, &repo_path, repo, pull, at)
}

fn pushed_head_before(
    client: &Client,
    repo_path: &str,
    repo: &str,
    pull: &Value,
    at: &str,
) -> Result<std::result::Result<String, String>> {
    let head_ref = pull
        .pointer("/head/ref")
        .and_then(Value::as_str)
        .unwrap_or("");
    let head_repo = pull
        .pointer("/head/repo/full_name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if head_ref.is_empty() {
        return Ok(Err("GitHub does not name the PR's head branch".into()));
    }
    if !head_repo.eq_ignore_ascii_case(repo) {
        return Ok(Err(format!(
            "the PR's head branch is in {}, whose pushes {repo} does not record",
            if head_repo.is_empty() {
                "a repository GitHub does not name"
            } else {
                head_repo
            }
        )));
    }
    if !is_utc_stamp(at) {
        return Ok(Err(format!("{at:?} is not a GitHub timestamp")));
    }
    let full_ref = format!("refs/heads/{head_ref}");
    let activity = client.get_all(
        &format!("/repos/{repo_path}/activity"),
        &[("ref", full_ref.as_str())],
        None,
    )?;
    let mut newest: Option<(&str, BTreeSet<&str>)> = None;
    for a in &activity {
        let t = a.get("timestamp").and_then(Value::as_str).unwrap_or("");
        if a.get("ref").and_then(Value::as_str) != Some(full_ref.as_str())
            || !is_utc_stamp(t)
            || t >= at
        {
            continue;
        }
        let after = a.get("after").and_then(Value::as_str).unwrap_or("");
        match &mut newest {
            Some((n, afters)) if *n == t => {
                afters.insert(after);
            }
            Some((n, _)) if *n > t => {}
            _ => newest = Some((t, BTreeSet::from([after]))),
        }
    }
    let Some((_, afters)) = newest else {
        return Ok(Err(format!(
            "no push to {head_ref} before {at} is recorded"
        )));
    };
    match afters.into_iter().collect::<Vec<_>>()[..] {
        [head] if !head.is_empty() => Ok(Ok(head.to_string())),
        _ => Ok(Err(format!(
            "pushes to {head_ref} in the same second before {at} disagree on its head"
        ))),
    }
}

/// Whether an issue comment was edited after it was written (`updated_at`
/// later than `created_at`). An edit keeps the author but not the words they
/// wrote when they wrote them (anyone with write access may edit a comment),
/// so an edited command is not read.
pub fn comment_edited(comment: &Value) -> bool {
    let created = comment.get("created_at").and_then(Value::as_str);
    match comment.get("updated_at").and_then(Value::as_str) {
        None => false,
        Some(updated) => Some(updated) != created,
    }
}

/// Whether an issue comment was written by a bot (`user.type` `Bot`, or a
/// login ending in `[bot]`): a bot's comment, the tool's own above all,
/// never authorises anything (it may quote a command).
pub fn comment_by_bot(comment: &Value) -> bool {
    comment.pointer("/user/type").and_then(Value::as_str) == Some("Bot")
        || comment
            .pointer("/user/login")
            .and_then(Value::as_str)
            .is_some_and(|l| l.ends_with("[bot]"))
}

/// A PR's `labeled`/`unlabeled` timeline events (`GET /issues/{n}/timeline`),
/// replayed to tell which labels were applied at a given time.
#[derive(Debug, Clone, Default)]
pub struct LabelHistory {
    /// `(created_at, added, label)`, oldest first.
    events: Vec<(String, bool, String)>,
}

impl LabelHistory {
    /// From the timeline's items (any order; other events are ignored).
    pub fn from_timeline(timeline: &[Value]) -> Self {
        let mut events: Vec<(String, bool, String)> = timeline
            .iter()
            .filter_map(|e| {
                let added = match e.get("event")?.as_str()? {
                    "labeled" => true,
                    "unlabeled" => false,
                    _ => return None,
                };
                let name = e.pointer("/label/name")?.as_str()?;
                Some((
                    e.get("created_at")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    added,
                    name.to_string(),
                ))
            })
            .collect();
        // A stable sort by time keeps the API order of simultaneous events.
        events.sort_by(|x, y| x.0.cmp(&y.0));
        LabelHistory { events }
    }

    /// Labels applied at `at` (GitHub's `…Z` timestamps compare as
    /// strings; an event or a time that is empty does not count).
    pub fn active_at(&self, at: &str) -> BTreeSet<&str> {
        let mut active = BTreeSet::new();
        if at.is_empty() {
            return active;
        }
        for (time, added, name) in &self.events {
            if time.is_empty() {
                continue;
            }
            if time.as_str() > at {
                break;
            }
            if *added {
                active.insert(name.as_str());
            } else {
                active.remove(name.as_str());
            }
        }
        active
    }
}

/// The label rule for a run whose results are taken as a full sweep
/// (`/stage-results`, `reuse-sweep find`, `recover-ingest`): when the run
/// was created (`created_at`) one of `full` was applied and none of
/// `incompatible`. `Some(reason)` when not (a run made under `evals-only`
/// is not a full sweep, whatever the PR's labels say now).
pub fn run_label_refusal(
    history: &LabelHistory,
    run: &Value,
    full: &[&str],
    incompatible: &[&str],
) -> Option<String> {
    let created = run.get("created_at").and_then(Value::as_str).unwrap_or("");
    let active = history.active_at(created);
    if !full.iter().any(|l| active.contains(l)) {
        return Some("it was not created while a full-sweep label was applied".into());
    }
    let bad: Vec<&str> = incompatible
        .iter()
        .copied()
        .filter(|l| active.contains(l))
        .collect();
    if !bad.is_empty() {
        return Some(format!(
            "it was created while reuse-incompatible label(s) {} were applied",
            bad.join(", ")
        ));
    }
    None
}

/// Repository roles whose holders may authorise (`role_name` of the
/// collaborator permission endpoint; custom roles report their base
/// `permission`, checked against [`WRITE_PERMISSIONS`]).
pub const AUTHORISING_ROLES: [&str; 3] = ["admin", "maintain", "write"];
/// `permission` values (the legacy field: maintain reports `write`) that
/// may authorise.
pub const WRITE_PERMISSIONS: [&str; 2] = ["admin", "write"];

/// Whether an access answer grants write, maintain or admin. `None` (GitHub
/// answered 404: not a collaborator) never does.
pub fn may_write(access: Option<&Access>) -> bool {
    access.is_some_and(|a| {
        a.role_name
            .as_deref()
            .is_some_and(|r| AUTHORISING_ROLES.contains(&r))
            || a.permission
                .as_deref()
                .is_some_and(|p| WRITE_PERMISSIONS.contains(&p))
    })
}

/// The commit whose sweep a reuse stands for: the PR's newest commit that is
/// neither a merge commit nor tagged `[skip-sweep]` (the commits the reuse
/// protocol itself adds after the sweep: the merge of main and the refresh
/// commit). `commits` is the PR's commit list in API order (oldest first).
/// The commits it passes over are not trusted for that: each must pass
/// [`unapproved_change`].
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
        .and_then(|c| c.get("sha").and_then(Value::as_str))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The repository a workflow run was triggered from
/// (`head_repository.full_name`), if the run says.
pub fn head_repository(run: &Value) -> Option<&str> {
    run.pointer("/head_repository/full_name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Whether `run` was triggered from `repo` itself (`owner/name`, compared
/// without regard to case, as GitHub compares names). A run from a fork, or
/// one that does not name its head repository, is not: its code and its
/// artifacts were under someone else's control.
pub fn run_is_from(run: &Value, repo: &str) -> bool {
    head_repository(run).is_some_and(|h| h.eq_ignore_ascii_case(repo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_write_maintain_or_admin_may_authorise() {
        let a = |p: &str, r: &str| Access {
            permission: Some(p.into()),
            role_name: Some(r.into()),
        };
        assert!(may_write(Some(&a("admin", "admin"))));
        assert!(may_write(Some(&a("write", "maintain"))));
        assert!(may_write(Some(&a("write", "custom-bench"))));
        assert!(!may_write(Some(&a("read", "triage"))));
        assert!(!may_write(Some(&a("none", "read"))));
        assert!(!may_write(None));
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
        let mut more = list.clone();
        more.push(c("z", 1, "tweak"));
        assert_eq!(swept_head(&more).as_deref(), Some("z"));
        assert_eq!(swept_head(&list[2..]), None);
        assert_eq!(swept_head(&[json!({"sha": "x"})]).as_deref(), Some("x"));
    }

    #[test]
    fn label_history_tracks_add_and_remove() {
        let ev = |at: &str, what: &str, name: &str| json!({"event": what, "created_at": at, "label": {"name": name}});
        let h = LabelHistory::from_timeline(&[
            ev("2026-01-02T00:00:00Z", "unlabeled", "full-sweep-enabled"),
            json!({"event": "commented", "created_at": "2026-01-01T12:00:00Z"}),
            ev("2026-01-01T00:00:00Z", "labeled", "full-sweep-enabled"),
        ]);
        assert!(h.active_at("2025-12-31T00:00:00Z").is_empty());
        assert_eq!(
            h.active_at("2026-01-01T00:00:00Z"),
            BTreeSet::from(["full-sweep-enabled"])
        );
        assert!(h.active_at("2026-01-03T00:00:00Z").is_empty());
        assert!(h.active_at("").is_empty());
    }

    /// Issue #34 item 3a: a run made under `evals-only` is not a full
    /// sweep, even when the label is gone now; one rule for staging and
    /// reuse.
    #[test]
    fn a_run_is_judged_by_the_labels_applied_when_it_was_created() {
        let ev = |at: &str, what: &str, name: &str| json!({"event": what, "created_at": at, "label": {"name": name}});
        let h = LabelHistory::from_timeline(&[
            ev("2026-01-01T00:00:00Z", "labeled", "full-sweep-enabled"),
            ev("2026-01-01T01:00:00Z", "labeled", "evals-only"),
            ev("2026-01-01T03:00:00Z", "unlabeled", "evals-only"),
        ]);
        let run = |at: &str| json!({"id": 1, "created_at": at});
        let full = ["full-sweep-enabled", "full-sweep-fail-fast"];
        let bad = ["evals-only", "agentx-fast"];
        assert_eq!(
            run_label_refusal(&h, &run("2026-01-01T00:30:00Z"), &full, &bad),
            None
        );
        assert_eq!(
            run_label_refusal(&h, &run("2026-01-01T02:00:00Z"), &full, &bad).as_deref(),
            Some("it was created while reuse-incompatible label(s) evals-only were applied")
        );
        assert_eq!(
            run_label_refusal(&h, &run("2026-01-01T02:00:00Z"), &full, &[]),
            None
        );
        assert_eq!(
            run_label_refusal(&h, &run("2026-01-01T04:00:00Z"), &full, &bad),
            None
        );
        for early in [run("2025-12-31T00:00:00Z"), json!({"id": 1})] {
            assert_eq!(
                run_label_refusal(&h, &early, &full, &bad).as_deref(),
                Some("it was not created while a full-sweep label was applied")
            );
        }
    }

    #[test]
    fn sweep_inputs_are_folders_and_root_files() {
        for p in [
            "configs/nvidia-master.yaml",
            "configs/amd-master.yaml",
            "configs/runners.yaml",
            "perf-changelog.yaml",
            "benchmarks/single_node/x.sh",
            "runners/launch_b200.sh",
            "utils/bench_serving/x.py",
            ".github/workflows/run-sweep.yml",
        ] {
            assert!(is_sweep_input(p), "{p}");
        }
        for p in [
            "README.md",
            "docs/perf-changelog.yaml",
            "configsx/a.yaml",
            "perf-changelog.yaml.bak",
            ".githubx",
        ] {
            assert!(!is_sweep_input(p), "{p}");
        }
    }

    #[test]
    fn only_githubs_utc_form_is_compared() {
        assert!(is_utc_stamp("2026-08-22T13:39:48Z"));
        for t in [
            "2026-08-22T13:39:48.5Z",
            "2026-08-22T13:39:48+00:00",
            "",
            "2026-08-22 13:39:48Z",
        ] {
            assert!(!is_utc_stamp(t), "{t}");
        }
    }

    #[test]
    fn a_run_from_a_fork_or_from_nowhere_is_not_the_repositorys() {
        let run = |h: Value| json!({"id": 1, "head_repository": h});
        assert!(run_is_from(
            &run(json!({"full_name": "SemiAnalysisAI/InferenceX"})),
            "SemiAnalysisAI/InferenceX"
        ));
        assert!(run_is_from(
            &run(json!({"full_name": "semianalysisai/inferencex"})),
            "SemiAnalysisAI/InferenceX"
        ));
        assert!(!run_is_from(
            &run(json!({"full_name": "mallory-bench/InferenceX"})),
            "SemiAnalysisAI/InferenceX"
        ));
        assert!(!run_is_from(&run(Value::Null), "SemiAnalysisAI/InferenceX"));
        assert!(!run_is_from(&json!({"id": 1}), "SemiAnalysisAI/InferenceX"));
        assert!(!run_is_from(
            &run(json!({"full_name": ""})),
            "SemiAnalysisAI/InferenceX"
        ));
    }
}
