//! Stale-branch diagnosis: a PR branch that is merely behind its base shows
//! up in `git diff <base> <head>` as "deleted" changelog lines — the entries
//! the base branch appended after the PR branched. The reference reports
//! that as a forbidden deletion; we recognise it and say what to do.
//!
//! Git's line matching is not the author's intent: when a branch deletes a
//! whitespace-only line and adds a blank line elsewhere (tidying the blank
//! lines around its entry), `git diff` may match the blank lines and show an
//! untouched old line as deleted and re-added in the same diff. Such a
//! removal is not a deletion of history, so [`real_removals`] leaves it out
//! (and whitespace-only removals, which the gate allows anyway); a line the
//! branch deletes without adding the same text back still counts, and the
//! diagnosis then stays silent (the bare deletion error stands).

use crate::diff::{self, Diff, Removed};
use crate::git::Repo;
use std::collections::HashMap;

/// The removals of `d` that delete content: every removed line except
/// (a) whitespace-only ones and (b) those the same diff adds back verbatim
/// (each added line cancels at most one removed line of identical text).
pub fn real_removals(d: &Diff) -> Vec<&Removed> {
    let mut re_added: HashMap<&str, usize> = HashMap::new();
    for a in &d.added {
        *re_added.entry(a.text.as_str()).or_default() += 1;
    }
    d.removed
        .iter()
        .filter(|r| {
            if diff::is_blank(&r.text) {
                return false;
            }
            match re_added.get_mut(r.text.as_str()) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            }
        })
        .collect()
}

/// Returns the diagnosis when every line really "deleted" between `base`
/// and `head` (see [`real_removals`]) is a line that `base` appended since
/// the merge base, and the branch itself really deleted nothing since it
/// branched.
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
    if !appended.removed.is_empty() || appended.added.is_empty() {
        return None; // the base rewrote the file, or did not touch it
    }
    let own = diff::parse(&repo.diff(&mb, head, path).ok()?).ok()?;
    if !real_removals(&own).is_empty() {
        return None; // the branch itself deletes history: a genuine deletion
    }
    // The caller's removals, less those its own diff adds back verbatim.
    let whole = diff::parse(&repo.diff(base, head, path).ok()?).ok()?;
    let claimed = Diff {
        added: whole.added,
        removed: removed.to_vec(),
    };
    let mut pool: HashMap<&str, usize> = HashMap::new();
    for a in &appended.added {
        *pool.entry(a.text.trim_end()).or_default() += 1;
    }
    for r in real_removals(&claimed) {
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
    // The branch also rewrote blank lines above its entry: `catch-up` keeps
    // the base's bytes only when the branch did, so say so.
    let tidy = match own.removed.iter().find(|r| !diff::is_blank(&r.text)) {
        Some(moved) => format!(
            "; your branch also changed blank lines in the old part of the file (git shows \
             '{}' as deleted and re-added): restore them as at the merge base first",
            moved.text.trim_end()
        ),
        None => String::new(),
    };
    let (n, were) = if entries == 1 {
        ("1 entry".to_string(), "was")
    } else {
        (format!("{entries} entries"), "were")
    };
    // What works, first: `git rebase` conflicts in this file (both sides
    // append), so it is not the advice.
    Some(format!(
        "your branch is behind {base}: {n} {were} appended there since you branched (merge \
         base {short}). To catch up, in the PR checkout run `check-changelog prepare-merge \
         catch-up --base-ref {base}` (add `--pr-number N` once the PR exists) and commit; or \
         `git merge {base}` and, on its conflict in {path}, `check-changelog prepare-merge \
         resolve-conflict`, then `git add` and commit{tidy}"
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

    /// An entry in block style.
    fn entry(key: &str, link: &str) -> String {
        format!(
            "- config-keys:\n    - {key}\n  description:\n    - change {key}\n  pr-link: {link}\n"
        )
    }

    /// At the merge base a section comment follows the first entry directly
    /// and a doubled blank line follows the comment. The branch tidies that
    /// (adds a blank line above the comment, deletes the extra blank, a
    /// whitespace-only line) and appends `branch_tail`; git matches the
    /// blank lines and shows the untouched comment line as deleted and
    /// re-added. The base meanwhile appended one entry.
    fn blank_tidy_repo(branch_tail: &str) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        git(d, &["init", "-q", "-b", "main"]);
        let (a, b) = (entry("a", "one"), entry("b", "two"));
        let mb = format!("{a}{COMMENT}\n\n\n{b}");
        write_commit(d, &mb, "base");
        git(d, &["checkout", "-q", "-b", "pr"]);
        write_commit(d, &format!("{a}\n{branch_tail}"), "pr");
        git(d, &["checkout", "-q", "main"]);
        write_commit(d, &format!("{mb}\n{}", entry("c", "three")), "main");
        tmp
    }

    const COMMENT: &str = "# entries below: b200";

    fn tidied_with_mine() -> String {
        format!(
            "{COMMENT}\n\n{}\n{}",
            entry("b", "two"),
            entry("mine", "XXX")
        )
    }

    #[test]
    fn a_blank_line_tidy_that_git_shows_as_moving_an_old_line_is_diagnosed() {
        let tmp = blank_tidy_repo(&tidied_with_mine());
        let repo = Repo::new(tmp.path());
        let mb = repo.merge_base("main", "pr").unwrap();
        // The case itself: the branch's own diff "removes" the untouched
        // entry line and adds it back.
        let own = diff::parse(&repo.diff(&mb, "pr", "c.yaml").unwrap()).unwrap();
        let texts: Vec<&str> = own.removed.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(texts, [COMMENT], "git no longer renders the case: {own:?}");
        assert!(own.added.iter().any(|a| a.text == COMMENT));
        assert!(real_removals(&own).is_empty());

        let r = removed(&repo, "main", "pr");
        assert!(!r.is_empty());
        let msg = diagnose(&repo, "main", "pr", "c.yaml", &r).unwrap();
        assert!(
            msg.starts_with("your branch is behind main: 1 entry was appended"),
            "{msg}"
        );
        assert!(
            msg.ends_with(
                "your branch also changed blank lines in the old part of the file (git shows \
                 '# entries below: b200' as deleted and re-added): restore them as at the merge \
                 base first"
            ),
            "{msg}"
        );
    }

    #[test]
    fn a_branch_that_really_deletes_a_line_gets_no_diagnosis() {
        // Same tidy, but the branch drops the comment line altogether.
        let tmp = blank_tidy_repo(&format!(
            "\n{}\n{}",
            entry("b", "two"),
            entry("mine", "XXX")
        ));
        let repo = Repo::new(tmp.path());
        let mb = repo.merge_base("main", "pr").unwrap();
        let own = diff::parse(&repo.diff(&mb, "pr", "c.yaml").unwrap()).unwrap();
        let real: Vec<&str> = real_removals(&own)
            .iter()
            .map(|r| r.text.as_str())
            .collect();
        assert_eq!(real, [COMMENT]);
        let r = removed(&repo, "main", "pr");
        assert_eq!(diagnose(&repo, "main", "pr", "c.yaml", &r), None);
    }

    #[test]
    fn only_blank_and_verbatim_re_added_removals_are_discounted() {
        let line = |t: &str| Removed {
            text: t.to_string(),
            base_line: 1,
            head_line: 1,
        };
        let d = Diff {
            added: vec![diff::Added {
                text: "  pr-link: one".into(),
                head_line: 3,
            }],
            removed: vec![
                line("   "),
                line("  pr-link: one"),
                line("  pr-link: one"),
                line("  pr-link: one "),
            ],
        };
        let left: Vec<&str> = real_removals(&d).iter().map(|r| r.text.as_str()).collect();
        // One re-add cancels one removal; trailing whitespace is not verbatim.
        assert_eq!(left, ["  pr-link: one", "  pr-link: one "]);
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
