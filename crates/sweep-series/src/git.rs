//! The history as a git data branch: fetch the branch's tip, append the run
//! to its store, commit, push; when the push is refused because another
//! main run pushed first, start again from the new tip. Re-applying the
//! append (not rebasing a commit) is what lets two runs that finish
//! together both land: an append only adds lines, so it applies to any tip.
//!
//! The git command line does the work (as for the changelog gate), in a
//! work folder of the caller's; credentials are the caller's (the workflow
//! job's checkout token, given to git by the job, never by this module).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::store::{Appended, Run, Store, StoreError};

/// Pushes tried before giving up: each refusal means another run landed in
/// between, and main does not finish eight sweeps within one append.
pub const MAX_PUSH_ATTEMPTS: u32 = 8;

/// Where the history lives.
#[derive(Debug, Clone)]
pub struct Branch {
    /// The remote (a URL or a path to a repository).
    pub remote: String,
    /// The data branch, e.g. `sweepkit-history`.
    pub branch: String,
    /// An empty or earlier work folder of this module's.
    pub work: PathBuf,
}

/// What an append to the branch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// Committed and pushed, on the given attempt (1 when nobody raced).
    Landed { attempt: u32, commit: String },
    /// The run was on the branch already, with the same rows.
    AlreadyThere,
}

/// Why the branch was not appended to.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("git {args}: {cause}")]
    Git { args: String, cause: String },
    #[error(
        "the push to {branch} was refused {attempts} times in a row (other runs kept landing first); nothing of this run was pushed"
    )]
    Contended { branch: String, attempts: u32 },
}

/// Appends `run` to the history on `target` (see the module header).
/// `before_push` is called with the attempt number after each commit and
/// before its push (the tests race a second writer there; pass `|_| ()`).
///
/// # Errors
/// The store refused the run, git failed, or every push was refused.
pub fn append(
    target: &Branch,
    run: &Run,
    message: &str,
    before_push: impl FnMut(u32),
) -> Result<Pushed, GitError> {
    update(
        target,
        message,
        |store| Ok(store.append(run)? != Appended::AlreadyThere),
        before_push,
    )
}

/// Applies `change` to the store on the tip of `target`'s branch and pushes
/// the result, applying it again on the new tip when the push is refused.
/// `change` says whether it changed anything (nothing to push when not); it
/// must be safe to apply again on a newer tip (an append is).
///
/// # Errors
/// `change` failed, git failed, or every push was refused.
pub fn update(
    target: &Branch,
    message: &str,
    mut change: impl FnMut(&Store) -> Result<bool, StoreError>,
    mut before_push: impl FnMut(u32),
) -> Result<Pushed, GitError> {
    let (work, refspec) = (&target.work, prepare(target)?);
    for attempt in 1..=MAX_PUSH_ATTEMPTS {
        if remote_has(work, &refspec)? {
            git(work, &["fetch", "-q", "origin", &refspec])?;
            git(
                work,
                &["checkout", "-q", "-f", "-B", &target.branch, "FETCH_HEAD"],
            )?;
        } else {
            // A new history: an orphan branch with nothing in it.
            git(work, &["checkout", "-q", "-f", "--orphan", &target.branch])?;
            git(work, &["rm", "-rfq", "--ignore-unmatch", "."])?;
        }
        git(work, &["clean", "-fdxq"])?;
        if !change(&Store::new(work))? {
            return Ok(Pushed::AlreadyThere);
        }
        git(work, &["add", "-A"])?;
        git(
            work,
            &[
                "-c",
                "user.name=sweepkit history",
                "-c",
                "user.email=sweepkit-history@users.noreply.github.com",
                "commit",
                "-q",
                "-m",
                message,
            ],
        )?;
        before_push(attempt);
        let push = Command::new("git")
            .current_dir(work)
            .args(["push", "-q", "origin", &format!("HEAD:{refspec}")])
            .output()
            .map_err(|e| GitError::Git {
                args: "push".into(),
                cause: e.to_string(),
            })?;
        if push.status.success() {
            let commit = git(work, &["rev-parse", "HEAD"])?;
            return Ok(Pushed::Landed { attempt, commit });
        }
        let stderr = String::from_utf8_lossy(&push.stderr);
        let refused = [
            "[rejected]",
            "non-fast-forward",
            "fetch first",
            "cannot lock ref",
        ]
        .iter()
        .any(|m| stderr.contains(m));
        if !refused {
            return Err(GitError::Git {
                args: "push".into(),
                cause: stderr.trim().to_string(),
            });
        }
        eprintln!(
            "history: the push of attempt {attempt} was refused (another run landed first); appending again on the new tip"
        );
    }
    Err(GitError::Contended {
        branch: target.branch.clone(),
        attempts: MAX_PUSH_ATTEMPTS,
    })
}

/// Whether the remote has `refspec`.
/// What [`checkout`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckedOut {
    /// The branch's tip, checked out in the work folder.
    Tip { commit: String },
    /// The remote has no such branch yet (no main run appended): the work
    /// folder is an empty history.
    NoBranch,
}

/// Fetches the tip of the data branch into `target.work` for reading (the
/// store a comparison reads), or leaves an empty folder when the branch
/// does not exist yet. Nothing is pushed.
///
/// # Errors
/// git fails (the remote cannot be reached, say) or the folder cannot be
/// made.
pub fn checkout(target: &Branch) -> Result<CheckedOut, GitError> {
    let (work, refspec) = (&target.work, prepare(target)?);
    if !remote_has(work, &refspec)? {
        return Ok(CheckedOut::NoBranch);
    }
    git(work, &["fetch", "-q", "--depth", "1", "origin", &refspec])?;
    git(work, &["checkout", "-q", "-f", "--detach", "FETCH_HEAD"])?;
    git(work, &["clean", "-fdxq"])?;
    let commit = git(work, &["rev-parse", "HEAD"])?;
    Ok(CheckedOut::Tip { commit })
}

/// The work folder made a repository with the remote as `origin` (once),
/// and the branch's ref name.
fn prepare(target: &Branch) -> Result<String, GitError> {
    let work = &target.work;
    std::fs::create_dir_all(work).map_err(|e| GitError::Git {
        args: format!("init {}", work.display()),
        cause: e.to_string(),
    })?;
    if !work.join(".git").exists() {
        git(work, &["init", "-q"])?;
        git(work, &["remote", "add", "origin", &target.remote])?;
    }
    Ok(format!("refs/heads/{}", target.branch))
}

fn remote_has(work: &Path, refspec: &str) -> Result<bool, GitError> {
    Ok(!git(work, &["ls-remote", "origin", refspec])?.is_empty())
}

/// Runs git in `dir`; its trimmed stdout, or its stderr as the error.
fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| GitError::Git {
            args: args.join(" "),
            cause: e.to_string(),
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(GitError::Git {
            args: args.join(" "),
            cause: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}
