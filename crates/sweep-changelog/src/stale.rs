//! Stale-branch diagnosis: a PR branch that is merely behind its base shows
//! up in `git diff <base> <head>` as "deleted" changelog lines — the entries
//! the base branch appended after the PR branched. The reference reports
//! that as a forbidden deletion; we recognise it and say what to do.

use crate::diff::{self, Removed};
use crate::git::Repo;
use std::collections::HashMap;

/// Returns the diagnosis when every non-blank line "deleted" between `base`
/// and `head` is a line that `base` appended since the merge base, and the
/// branch itself deleted nothing since it branched.
pub fn diagnose(
    repo: &Repo,
    base: &str,
    head: &str,
    path: &str,
    removed: &[Removed],
) -> Option<String> {
    if removed.is_empty() {
        return None;
    }
    let mb = repo.merge_base(base, head)?;
    let base_commit = repo.resolve(base)?;
    if mb == base_commit {
        return None; // the branch contains the base: nothing it is behind on
    }
    let appended = diff::parse(&repo.diff(&mb, base, path).ok()?).ok()?;
    if !appended.removed.is_empty() {
        return None;
    }
    let own = diff::parse(&repo.diff(&mb, head, path).ok()?).ok()?;
    if !own.removed.is_empty() {
        return None; // the branch itself deletes history: a genuine deletion
    }
    let mut pool: HashMap<&str, usize> = HashMap::new();
    for a in &appended.added {
        *pool.entry(a.text.trim_end()).or_default() += 1;
    }
    for r in removed {
        let slot = pool.get_mut(r.text.trim_end())?;
        if *slot == 0 {
            return None;
        }
        *slot -= 1;
    }
    let entries = appended
        .added
        .iter()
        .filter(|a| a.text.starts_with("- config-keys:") || a.text.starts_with("- config_keys:"))
        .count()
        .max(1);
    let short = &mb[..mb.len().min(12)];
    Some(format!(
        "your branch is behind {base}: {entries} entries were appended there since you \
         branched; rebase, or run `check-changelog prepare-merge` (merge base {short})"
    ))
}
