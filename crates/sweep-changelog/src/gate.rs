//! The perf-changelog gate behind `check-changelog` (spec changelog.md §11,
//! the job of the reference's `validate_perf_changelog.py`), its opt-in
//! byte-level rules (`--strict`, §12.1–12.3) and the repository side of
//! the merge helper (`prepare-merge`, §12.4).
//!
//! The gate reads the changelog at the head ref, requires a final newline,
//! then runs the same generation as `generate-matrix changelog` in-process
//! and rejects exactly when that rejects.

use crate::git::Repo;
use crate::pipeline::{self, Options, Rejection, RejectionKind};
use crate::prepare_merge as merge;
use crate::runner_labels;
use crate::strict::{self, Links};

/// What the gate checks.
#[derive(Debug, Clone, Default)]
pub struct GateOptions {
    /// Older revision (a PR's `origin/<base branch>`).
    pub base_ref: String,
    /// Newer revision (the PR head SHA).
    pub head_ref: String,
    /// Changelog path relative to the repository root.
    pub changelog_file: String,
    /// Generate as with `--all-evals`.
    pub all_evals: bool,
    /// Generate as with `--evals-only`.
    pub evals_only: bool,
    /// Also apply the byte-level rules to the whole file.
    pub strict: bool,
    /// With `strict`: the PR number (allows `XXX` and this PR's link).
    pub pr_number: Option<u64>,
    /// With `strict`: repository whose pull-request links are canonical.
    pub repo: String,
}

/// Which `prepare-merge` rewrite to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeMode {
    /// Replace the `XXX` placeholders of the entries appended since `base_ref`.
    Canonicalize { base_ref: String },
    /// Rebuild a conflicted changelog from the index stages 1, 2, 3.
    ResolveConflict,
    /// Rebuild a stale changelog from the merge base, the work tree and `base_ref`.
    CatchUp { base_ref: String },
}

/// What every `prepare-merge` mode needs.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// Changelog path (read and rewritten in the working tree).
    pub changelog_file: String,
    /// The PR number; appended entries get its link. `None` (the PR does
    /// not exist yet; not for `Canonicalize`): they keep theirs as written,
    /// an `XXX` placeholder that `canonicalize` fills in later (the
    /// `sweep-ops merge` steps run it) and that the gate accepts on the PR.
    pub pr_number: Option<u64>,
    /// Repository of the pull-request links.
    pub repo: String,
}

/// What the gate accepted: the success line and the warnings to print
/// (runner labels `runners.yaml` lacks, which `--strict` refuses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub message: String,
    pub warnings: Vec<runner_labels::UnknownRunner>,
}

/// The gate. Returns the success line (with its warnings) or the rejection
/// (with the head-file line it is about, when known).
pub fn check(repo: &Repo, args: &GateOptions) -> Result<Accepted, Rejection> {
    let (message, matrix) = check_matrix(repo, args, false)?;
    let warnings = runner_labels::check(repo, &matrix)?;
    if args.strict && !warnings.is_empty() {
        let messages: Vec<String> = warnings
            .iter()
            .map(runner_labels::UnknownRunner::message)
            .collect();
        return Err(Rejection::new(format!(
            "{}\n(--strict refuses legs on a runner label that configs/runners.yaml does not \
             define)",
            messages.join("\n")
        )));
    }
    Ok(Accepted { message, warnings })
}

/// The gate, also returning the matrix its generation produced (what
/// `generate-matrix changelog` prints for the same range, with
/// `--trim-conc` when `trim_conc`), for the dry run.
pub fn check_matrix(
    repo: &Repo,
    args: &GateOptions,
    trim_conc: bool,
) -> Result<(String, sweep_matrix::assemble::ChangelogMatrix), Rejection> {
    let base = args.base_ref.clone();
    let head = args.head_ref.clone();
    let path = &args.changelog_file;
    let opts = Options {
        base_ref: base.clone(),
        head_ref: head.clone(),
        changelog_file: path.clone(),
        trim_conc,
        all_evals: args.all_evals,
        evals_only: args.evals_only,
    };
    // An unknown ref is said plainly, before anything is judged.
    for (flag, rev) in [("--base-ref", &base), ("--head-ref", &head)] {
        repo.require_commit(flag, rev)
            .map_err(|e| Rejection::unreadable(e.message))?;
    }
    // Judged in the reference's order: newline, (strict rules), diff.
    let head_bytes = repo
        .show(&head, path)
        .map_err(|e| Rejection::unreadable(format!("could not read {path} at {head}: {e}")))?;
    if !head_bytes.ends_with(b"\n") {
        return Err(Rejection {
            message: format!("{path} at {head} does not end with a newline"),
            line: Some(strict::line_at(&head_bytes, head_bytes.len())),
            kind: RejectionKind::Invalid,
        });
    }
    if args.strict {
        let base_bytes = repo
            .show(&base, path)
            .map_err(|e| Rejection::unreadable(format!("could not read {path} at {base}: {e}")))?;
        let links = Links {
            repo: args.repo.clone(),
        };
        strict::check(
            &base_bytes,
            &head_bytes,
            &format!("{path} at {base}"),
            &format!("{path} at {head}"),
            args.pr_number,
            &links,
        )
        .map_err(|v| Rejection {
            message: format!("strict changelog rules: {}", v.message),
            line: v.line,
            kind: RejectionKind::Invalid,
        })?;
    }
    let matrix = pipeline::run(repo, &opts).map_err(|r| {
        // The cause first; which step said no after it.
        let message = format!(
            "{}\n(the matrix generation, as `generate-matrix changelog`, rejected the diff)",
            r.message.trim()
        );
        r.with_message(message)
    })?;
    Ok((
        format!("Validated {path}: final newline present and matrix generated"),
        matrix,
    ))
}

/// Why `prepare-merge` stopped.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The changelog, a ref or an index stage could not be read or written
    /// (could not do the job, exit 2).
    #[error("{0}")]
    Unreadable(String),
    /// The flags or the entries do not allow the rewrite (the check said
    /// no, exit 1).
    #[error("{0}")]
    Refused(String),
}

impl sweep_exit::Classify for PrepareError {
    fn kind(&self) -> sweep_exit::Kind {
        match self {
            PrepareError::Unreadable(_) => sweep_exit::Kind::Failed,
            PrepareError::Refused(_) => sweep_exit::Kind::Rejected,
        }
    }
}

fn read_stage(repo: &Repo, stage: u8, path: &str) -> Result<Vec<u8>, PrepareError> {
    repo.show_stage(stage, path).map_err(|e| {
        PrepareError::Unreadable(format!(
            "could not read stage {stage} of {path} ({e}); `resolve-conflict` runs while a \
             `git merge` (or `git rebase`) of the base branch stops on a conflict in {path}"
        ))
    })
}

/// `prepare-merge`: computes the prepared bytes and writes them (atomically)
/// when they differ. Returns the line to print.
pub fn prepare_merge(
    repo: &Repo,
    mode: &MergeMode,
    common: &MergeOptions,
) -> Result<String, PrepareError> {
    use PrepareError::Unreadable;
    let path = &common.changelog_file;
    let file = repo.dir().join(path);
    let links = Links {
        repo: common.repo.clone(),
    };
    let pr = common.pr_number;
    let original = sweep_model::fsio::read_bytes(&file, sweep_model::yaml::MAX_YAML_BYTES as u64)
        .map_err(|e| Unreadable(format!("cannot read {path}: {e}")))?;
    // What to run after a conflict's rewrite.
    let mut next = None;
    let prepared = match mode {
        MergeMode::Canonicalize { base_ref } => {
            canonicalized(repo, base_ref, path, &original, pr, &links)?
        }
        MergeMode::ResolveConflict => {
            let (bytes, then) = resolved_conflict(repo, path, pr, &links)?;
            next = Some(then);
            bytes
        }
        MergeMode::CatchUp { base_ref } => caught_up(repo, base_ref, path, &original, pr, &links)?,
    };
    let whose = match pr {
        Some(n) => format!(" for PR #{n}"),
        None => String::new(),
    };
    let mut msg = if prepared == original {
        format!("{path} already prepared{whose}")
    } else {
        sweep_model::fsio::write_atomic(&file, &prepared)
            .map_err(|e| Unreadable(format!("cannot write {path}: {e}")))?;
        let mut m = format!("Prepared {path}{whose}");
        if let Some(next) = next {
            m.push_str(&format!("\nNext, {next}."));
        }
        m
    };
    if pr.is_none() {
        msg.push_str(
            "\nYour entries keep their pr-link as written (use `XXX` until the PR exists): the \
             gate accepts `XXX` on the PR, and before merging `check-changelog prepare-merge \
             canonicalize --base-ref <base> --pr-number N` writes the PR's link",
        );
    }
    Ok(msg)
}

/// `canonicalize`: the work tree's changelog with the PR's link on the
/// entries appended since `base_ref`.
fn canonicalized(
    repo: &Repo,
    base_ref: &str,
    path: &str,
    original: &[u8],
    pr: Option<u64>,
    links: &Links,
) -> Result<Vec<u8>, PrepareError> {
    use PrepareError::{Refused, Unreadable};
    let pr =
        pr.ok_or_else(|| Refused("canonicalize needs the PR number (--pr-number N)".to_string()))?;
    let base = repo
        .show(base_ref, path)
        .map_err(|e| Unreadable(format!("could not read {path} at {base_ref}: {e}")))?;
    merge::canonicalize(&base, original, pr, links).map_err(|v| Refused(v.message))
}

/// `resolve-conflict`: the changelog rebuilt from the index stages, and
/// what to run next.
fn resolved_conflict(
    repo: &Repo,
    path: &str,
    pr: Option<u64>,
    links: &Links,
) -> Result<(Vec<u8>, &'static str), PrepareError> {
    // During a rebase the branch being replayed is stage 3
    // ("theirs") and the base branch stage 2 ("ours"): swap them.
    let (pr_stage, main_stage, next) = if repo.rebase_in_progress() {
        (3, 2, "`git add` it and `git rebase --continue`")
    } else {
        (2, 3, "`git add` it and commit the merge")
    };
    let bytes = merge::resolve(
        &read_stage(repo, 1, path)?,
        &read_stage(repo, pr_stage, path)?,
        &read_stage(repo, main_stage, path)?,
        pr,
        links,
    )
    .map_err(|v| PrepareError::Refused(v.message))?;
    Ok((bytes, next))
}

/// `catch-up`: the work tree's changelog rebuilt from its merge base with
/// `base_ref` and `base_ref`'s own.
fn caught_up(
    repo: &Repo,
    base_ref: &str,
    path: &str,
    original: &[u8],
    pr: Option<u64>,
    links: &Links,
) -> Result<Vec<u8>, PrepareError> {
    use PrepareError::{Refused, Unreadable};
    let mb = repo.merge_base(base_ref, "HEAD").ok_or_else(|| {
        Unreadable(format!(
            "HEAD and {base_ref} have no merge base; fetch full history (fetch-depth: 0)"
        ))
    })?;
    let merge_base = repo
        .show(&mb, path)
        .map_err(|e| Unreadable(format!("could not read {path} at {mb}: {e}")))?;
    let main = repo
        .show(base_ref, path)
        .map_err(|e| Unreadable(format!("could not read {path} at {base_ref}: {e}")))?;
    merge::resolve(&merge_base, original, &main, pr, links).map_err(|v| Refused(v.message))
}
