//! Library behind the `check-changelog` binary: the perf-changelog gate
//! (spec changelog.md §11, the job of the reference's
//! `validate_perf_changelog.py`), its opt-in byte-level rules (`--strict`,
//! §12.1–12.3) and the merge helper (`prepare-merge`, §12.4).
//!
//! The gate reads the changelog at the head ref, requires a final newline,
//! then runs the same generation as `generate-matrix changelog` in-process
//! and rejects exactly when that rejects.

use clap::{Args, Parser, Subcommand};
use generate_matrix::changelog as gm;
use std::io::Write as _;
use std::process::ExitCode;
use sweep_changelog::git::Repo;
use sweep_changelog::pipeline::{Options, Rejection};
use sweep_changelog::prepare_merge;
use sweep_changelog::strict::{self, Links};

/// Command line of `check-changelog`.
#[derive(Debug, Parser)]
#[command(
    name = "check-changelog",
    version,
    about = "Gate perf-changelog.yaml changes between two git refs",
    args_conflicts_with_subcommands = true,
    infer_long_args = true,
    args_override_self = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(flatten)]
    pub check: CheckArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags of the gate itself.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Older revision (a PR's `origin/<base branch>`).
    #[arg(long, env = "INPUT_BASE_REF", required = true)]
    pub base_ref: Option<String>,
    /// Newer revision (the PR head SHA).
    #[arg(long, env = "INPUT_HEAD_REF", required = true)]
    pub head_ref: Option<String>,
    /// Changelog path relative to the repository root.
    #[arg(
        long,
        env = "INPUT_CHANGELOG_FILE",
        default_value = "perf-changelog.yaml"
    )]
    pub changelog_file: String,
    /// Generate as with `--all-evals` (PR label `all-evals`).
    #[arg(long, env = "INPUT_ALL_EVALS")]
    pub all_evals: bool,
    /// Generate as with `--evals-only` (PR label `evals-only`).
    #[arg(long, env = "INPUT_EVALS_ONLY")]
    pub evals_only: bool,
    /// Also apply the byte-level rules (CR, tabs, NUL, duplicate keys,
    /// separators, append-at-end, pr-link rules) to the whole file.
    #[arg(long, env = "INPUT_STRICT")]
    pub strict: bool,
    /// With --strict: the PR number; new entries may then use an `XXX`
    /// placeholder or this PR's link (without it they need a canonical link).
    #[arg(long, env = "INPUT_PR_NUMBER")]
    pub pr_number: Option<u64>,
    /// With --strict: repository whose pull-request links are canonical.
    #[arg(long, env = "INPUT_REPO", default_value = strict::DEFAULT_REPO)]
    pub repo: String,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Rewrite the changelog so the branch appends cleanly after its base.
    #[command(subcommand)]
    PrepareMerge(MergeCommand),
}

/// Flags shared by the `prepare-merge` modes.
#[derive(Debug, Clone, Args)]
pub struct MergeCommon {
    /// Changelog path (read and rewritten in the working tree).
    #[arg(long, default_value = "perf-changelog.yaml")]
    pub changelog_file: String,
    /// The PR number; appended entries get `https://github.com/<repo>/pull/<N>`.
    #[arg(long)]
    pub pr_number: u64,
    /// Repository of the pull-request links.
    #[arg(long, default_value = strict::DEFAULT_REPO)]
    pub repo: String,
}

/// `prepare-merge` modes.
#[derive(Debug, Subcommand)]
pub enum MergeCommand {
    /// Replace `XXX` pr-link placeholders of the entries this PR appends
    /// (relative to BASE_REF) with the PR's link.
    Canonicalize {
        #[arg(long)]
        base_ref: String,
        #[command(flatten)]
        common: MergeCommon,
    },
    /// During a conflicted merge: rebuild the changelog as the other side's
    /// bytes plus this PR's own entries (index stages 1, 2, 3).
    ResolveConflict {
        #[command(flatten)]
        common: MergeCommon,
    },
    /// A branch that is behind BASE_REF: rebuild the working-tree changelog
    /// as BASE_REF's bytes plus this branch's own entries (the same
    /// resolution, with the merge base, the working tree and BASE_REF).
    CatchUp {
        #[arg(long)]
        base_ref: String,
        #[command(flatten)]
        common: MergeCommon,
    },
}

/// The gate. Returns the success line or the rejection (with the head-file
/// line it is about, when known).
pub fn check(repo: &Repo, args: &CheckArgs) -> Result<String, Rejection> {
    let base = args.base_ref.clone().unwrap_or_default();
    let head = args.head_ref.clone().unwrap_or_default();
    let path = &args.changelog_file;
    let opts = Options {
        base_ref: base.clone(),
        head_ref: head.clone(),
        changelog_file: path.clone(),
        trim_conc: false,
        all_evals: args.all_evals,
        evals_only: args.evals_only,
    };
    // The file reads (git processes) overlap the generation; the results
    // are judged in the reference's order: newline, (strict rules), diff.
    let (head_bytes, base_bytes, generated) = std::thread::scope(|s| {
        let head_job = s.spawn(|| repo.show(&head, path));
        let base_job = args.strict.then(|| s.spawn(|| repo.show(&base, path)));
        let generated = gm::generate(repo, &opts);
        let joined = |r: std::thread::Result<Result<Vec<u8>, String>>| {
            r.unwrap_or_else(|_| Err("internal error: git reader panicked".into()))
        };
        (
            joined(head_job.join()),
            base_job.map(|j| joined(j.join())),
            generated,
        )
    });
    let head_bytes =
        head_bytes.map_err(|e| Rejection::new(format!("could not read {path} at {head}: {e}")))?;
    if !head_bytes.ends_with(b"\n") {
        return Err(Rejection {
            message: format!("{path} at {head} does not end with a newline"),
            line: Some(strict::line_at(&head_bytes, head_bytes.len())),
        });
    }
    if let Some(base_bytes) = base_bytes {
        let base_bytes = base_bytes
            .map_err(|e| Rejection::new(format!("could not read {path} at {base}: {e}")))?;
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
        })?;
    }
    generated.map_err(|r| Rejection {
        message: format!(
            "generate-matrix changelog rejected the diff:\n{}",
            r.message.trim()
        ),
        line: r.line,
    })?;
    Ok(format!(
        "Validated {path}: final newline present and matrix generated"
    ))
}

fn read_stage(repo: &Repo, stage: u8, path: &str) -> Result<Vec<u8>, String> {
    repo.show_stage(stage, path)
        .map_err(|e| format!("could not read stage {stage} for {path}: {e}"))
}

/// `prepare-merge`: computes the prepared bytes and writes them (atomically)
/// when they differ. Returns the line to print.
pub fn prepare_merge(repo: &Repo, cmd: &MergeCommand) -> Result<String, String> {
    let common = match cmd {
        MergeCommand::Canonicalize { common, .. }
        | MergeCommand::ResolveConflict { common }
        | MergeCommand::CatchUp { common, .. } => common,
    };
    let path = &common.changelog_file;
    let file = repo.dir().join(path);
    let links = Links {
        repo: common.repo.clone(),
    };
    let pr = common.pr_number;
    let original = std::fs::read(&file).map_err(|e| format!("cannot read {path}: {e}"))?;
    let prepared = match cmd {
        MergeCommand::Canonicalize { base_ref, .. } => {
            let base = repo
                .show(base_ref, path)
                .map_err(|e| format!("could not read {path} at {base_ref}: {e}"))?;
            prepare_merge::canonicalize(&base, &original, pr, &links)
        }
        MergeCommand::ResolveConflict { .. } => prepare_merge::resolve(
            &read_stage(repo, 1, path)?,
            &read_stage(repo, 2, path)?,
            &read_stage(repo, 3, path)?,
            pr,
            &links,
        ),
        MergeCommand::CatchUp { base_ref, .. } => {
            let mb = repo.merge_base(base_ref, "HEAD").ok_or_else(|| {
                format!(
                    "HEAD and {base_ref} have no merge base; fetch full history (fetch-depth: 0)"
                )
            })?;
            let merge_base = repo
                .show(&mb, path)
                .map_err(|e| format!("could not read {path} at {mb}: {e}"))?;
            let main = repo
                .show(base_ref, path)
                .map_err(|e| format!("could not read {path} at {base_ref}: {e}"))?;
            prepare_merge::resolve(&merge_base, &original, &main, pr, &links)
        }
    }
    .map_err(|v| v.message)?;
    if prepared == original {
        Ok(format!("{path} already prepared for PR #{pr}"))
    } else {
        sweep_model::fsio::write_atomic(&file, &prepared)
            .map_err(|e| format!("cannot write {path}: {e}"))?;
        Ok(format!("Prepared {path} for PR #{pr}"))
    }
}

/// Entry point: 0 accepted/prepared, 1 rejected, 2 usage (clap).
pub fn run(cli: Cli) -> ExitCode {
    let repo = Repo::new(".");
    match &cli.command {
        Some(Command::PrepareMerge(cmd)) => match prepare_merge(&repo, cmd) {
            Ok(msg) => {
                let _ = writeln!(std::io::stdout(), "{msg}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("ERROR: {e}");
                ExitCode::from(1)
            }
        },
        None => match check(&repo, &cli.check) {
            Ok(msg) => {
                let _ = writeln!(std::io::stdout(), "{msg}");
                ExitCode::SUCCESS
            }
            Err(r) => {
                gm::report(
                    &repo,
                    &cli.check.changelog_file,
                    "ERROR: ",
                    &r,
                    gm::AnnotationStream::Stdout,
                );
                ExitCode::from(1)
            }
        },
    }
}
