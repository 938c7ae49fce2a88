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
         branched; rebase, or run `check-changelog prepare-merge` (in the PR checkout: \
         `check-changelog prepare-merge catch-up --base-ref {base} --pr-number <PR>`, then \
         commit; merge base {short})"
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;
    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@e.invalid"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn write_commit(dir: &std::path::Path, text: &str, msg: &str) {
        std::fs::write(dir.join("c.yaml"), text).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", msg]);
    }

    fn removed(repo: &Repo, base: &str, head: &str) -> Vec<Removed> {
        diff::parse(&repo.diff(base, head, "c.yaml").unwrap())
            .unwrap()
            .removed
    }

    #[test]
    fn entries_appended_on_the_base_after_branching_are_diagnosed() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        git(d, &["init", "-q", "-b", "main"]);
        let old = "- config-keys: [a]\n  pr-link: one\n";
        write_commit(d, old, "base");
        git(d, &["checkout", "-q", "-b", "pr"]);
        write_commit(
            d,
            &format!("{old}\n- config-keys: [mine]\n  pr-link: XXX\n"),
            "pr",
        );
        git(d, &["checkout", "-q", "main"]);
        let main = format!(
            "{old}\n- config-keys: [b]\n  pr-link: two\n\n- config-keys: [c]\n  pr-link: three\n"
        );
        write_commit(d, &main, "main");
        let repo = Repo::new(d);
        let r = removed(&repo, "main", "pr");
        assert!(!r.is_empty());
        let msg = diagnose(&repo, "main", "pr", "c.yaml", &r).unwrap();
        assert!(
            msg.starts_with("your branch is behind main: 2 entries were appended"),
            "{msg}"
        );

        // The branch itself also deletes a line: a genuine deletion.
        git(d, &["checkout", "-q", "pr"]);
        write_commit(
            d,
            "- config-keys: [a]\n  pr-link: changed\n\n- config-keys: [mine]\n  pr-link: XXX\n",
            "rewrite",
        );
        let r = removed(&repo, "main", "pr");
        assert_eq!(diagnose(&repo, "main", "pr", "c.yaml", &r), None);
        // Up to date with the base: nothing to diagnose.
        assert_eq!(
            diagnose(&repo, "pr", "main", "c.yaml", &removed(&repo, "pr", "main")),
            None
        );
    }

    #[test]
    fn unknown_revisions_are_named() {
        let tmp = tempfile::tempdir().unwrap();
        git(tmp.path(), &["init", "-q", "-b", "main"]);
        write_commit(tmp.path(), "x\n", "one");
        let e = Repo::new(tmp.path())
            .diff("nope", "HEAD", "c.yaml")
            .unwrap_err();
        assert!(
            e.message.starts_with("unknown git revision 'nope'"),
            "{}",
            e.message
        );
        assert!(e.message.contains("fetch-depth: 0"));
    }
}
