//! Git access through the `git` CLI.
//!
//! Why the CLI and not a Rust git library: the contract is "the lines that
//! `git diff <base> <head> -- <file>` reports as added/removed", and that
//! depends on git's own diff algorithm, its binary detection and the user's
//! configuration (`.gitattributes`, `diff.algorithm`). Running the same
//! program is the only way to get byte-identical hunks; a library diff would
//! differ on exactly the edge cases the gate is about. It also keeps the
//! build lean (no libgit2/gix), and a handful of git processes cost a few
//! milliseconds.
//!
//! Failures are turned into messages that say how to fix the checkout
//! (unknown ref, shallow clone → `fetch-depth: 0`).
//!
//! Refs come from workflow inputs and so from event data: a ref that starts
//! with `-` is refused before git runs (git would read it as an option, e.g.
//! `--output=<file>` writes a file), and every command also passes
//! `--end-of-options` before its revisions as a second guard.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A failed git command, with a diagnosis when one is possible.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct GitError {
    pub message: String,
}

/// A git work tree (commands run with it as the current directory).
#[derive(Debug, Clone)]
pub struct Repo {
    dir: PathBuf,
}

/// Refuses a revision git could take for an option (or an empty one).
pub fn check_rev(rev: &str) -> Result<(), GitError> {
    if rev.is_empty() {
        return Err(GitError {
            message: "empty git revision".to_string(),
        });
    }
    if rev.starts_with('-') {
        return Err(GitError {
            message: format!(
                "git revision '{rev}' starts with '-': refused, git would read it as an option \
                 (pass a branch name, tag or commit SHA)"
            ),
        });
    }
    Ok(())
}

impl Repo {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Repo { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn run(&self, args: &[&str]) -> Result<Output, GitError> {
        Command::new("git")
            .args(args)
            .current_dir(&self.dir)
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .map_err(|e| GitError {
                message: format!("could not run git (is it installed and on PATH?): {e}"),
            })
    }

    /// Raw stdout of `git diff <base> <head> -- <path>`. A failing diff (an
    /// unknown ref, not a repository) is an error that names the missing ref
    /// and the fix, instead of the reference's silent empty diff.
    pub fn diff(&self, base: &str, head: &str, path: &str) -> Result<Vec<u8>, GitError> {
        check_rev(base)?;
        check_rev(head)?;
        let out = self.run(&[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--end-of-options",
            base,
            head,
            "--",
            path,
        ])?;
        if out.status.success() {
            return Ok(out.stdout);
        }
        Err(self.diagnose(
            &[base, head],
            &out,
            &format!("git diff {base} {head} -- {path}"),
        ))
    }

    /// Bytes of `<rev>:<path>`; the error carries git's trimmed stderr.
    pub fn show(&self, rev: &str, path: &str) -> Result<Vec<u8>, GitError> {
        // `:<stage>` specs start with ':' and pass; a rev starting with '-' does not.
        check_rev(rev)?;
        let spec = format!("{rev}:{path}");
        let out = self.run(&["show", "--end-of-options", &spec])?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(GitError {
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }

    /// Bytes of the file at `path` in index stage `n` (1 base, 2 ours, 3 theirs).
    pub fn show_stage(&self, stage: u8, path: &str) -> Result<Vec<u8>, GitError> {
        self.show(&format!(":{stage}"), path)
    }

    /// Which of `paths` exist (as files) at `rev`.
    pub fn ls_tree(&self, rev: &str, paths: &[&str]) -> Result<Vec<String>, GitError> {
        check_rev(rev)?;
        let mut args = vec![
            "ls-tree",
            "-r",
            "--name-only",
            "--end-of-options",
            rev,
            "--",
        ];
        args.extend_from_slice(paths);
        let out = self.run(&args)?;
        if !out.status.success() {
            return Err(self.diagnose(&[rev], &out, &format!("git ls-tree {rev}")));
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect())
    }

    /// The merge base of two revisions, if they have one.
    pub fn merge_base(&self, a: &str, b: &str) -> Option<String> {
        if check_rev(a).is_err() || check_rev(b).is_err() {
            return None;
        }
        let out = self.run(&["merge-base", "--end-of-options", a, b]).ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    }

    /// The commit a revision names, if it resolves.
    pub fn resolve(&self, rev: &str) -> Option<String> {
        check_rev(rev).ok()?;
        let spec = format!("{rev}^{{commit}}");
        let out = self
            .run(&[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &spec,
            ])
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Whether a `git rebase` is stopped in this work tree (a conflict to
    /// resolve). During a rebase the index stages swap roles: stage 2
    /// ("ours") is the branch being rebased onto, stage 3 ("theirs") the
    /// commit being replayed. `git am` also uses `rebase-apply`, marked by
    /// its `applying` file, and keeps the merge roles.
    pub fn rebase_in_progress(&self) -> bool {
        let git_path = |name: &str| {
            let out = self.run(&["rev-parse", "--git-path", name]).ok()?;
            out.status
                .success()
                .then(|| self.dir.join(String::from_utf8_lossy(&out.stdout).trim()))
        };
        if git_path("rebase-merge").is_some_and(|p| p.is_dir()) {
            return true;
        }
        git_path("rebase-apply").is_some_and(|p| p.is_dir() && !p.join("applying").exists())
    }

    /// How to get a revision the checkout lacks.
    fn fetch_hint(&self) -> &'static str {
        if self.is_shallow() {
            "this is a shallow clone: check out with full history (actions/checkout with \
             `fetch-depth: 0`) or `git fetch --unshallow origin`"
        } else {
            "fetch it first (e.g. `git fetch origin <branch>`, or actions/checkout with \
             `fetch-depth: 0` so base branches and PR heads are present)"
        }
    }

    /// Fails with a plain "unknown git revision" message (naming the flag
    /// that gave it) when `rev` does not name a commit of this checkout.
    pub fn require_commit(&self, flag: &str, rev: &str) -> Result<(), GitError> {
        check_rev(rev)?;
        if self.resolve(rev).is_some() {
            return Ok(());
        }
        let inside = self
            .run(&["rev-parse", "--is-inside-work-tree"])
            .is_ok_and(|o| o.status.success());
        if !inside {
            return Err(GitError {
                message: format!(
                    "{} is not inside a git work tree; run from the top of the repository checkout",
                    self.dir.display()
                ),
            });
        }
        Err(GitError {
            message: format!(
                "unknown git revision '{rev}' ({flag}): the checkout does not contain it; {}",
                self.fetch_hint()
            ),
        })
    }

    fn is_shallow(&self) -> bool {
        self.run(&["rev-parse", "--is-shallow-repository"])
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "true")
    }

    fn diagnose(&self, revs: &[&str], out: &Output, what: &str) -> GitError {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let missing: Vec<&str> = revs
            .iter()
            .copied()
            .filter(|r| self.resolve(r).is_none())
            .collect();
        if stderr.contains("not a git repository") {
            return GitError {
                message: format!(
                    "`{what}` failed: {} is not inside a git work tree; run from the top of the \
                     repository checkout",
                    self.dir.display()
                ),
            };
        }
        if !missing.is_empty() {
            let names = missing
                .iter()
                .map(|r| format!("'{r}'"))
                .collect::<Vec<_>>()
                .join(", ");
            return GitError {
                message: format!(
                    "unknown git revision {names}: the checkout does not contain it; {} (git: \
                     {stderr})",
                    self.fetch_hint()
                ),
            };
        }
        GitError {
            message: format!("`{what}` failed: {stderr}"),
        }
    }
}
