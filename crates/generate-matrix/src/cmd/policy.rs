//! `generate-matrix sweep-policy`: flags, environment and event payload in,
//! decisions out (stdout, step outputs, step summary).

use sweep_cli::{Failure, Outcome, ResultExt as _};
use sweep_matrix::policy::{
    CONFLICT_MESSAGE, ExplicitInputs, PolicyInput, check_event, decide, fill_from_event,
    parse_labels, summary_markdown,
};

/// `generate-matrix sweep-policy`: every flag also reads the variable the
/// composite action sets (or the runner's own `GITHUB_*` variable), and
/// whatever is not given is read from the event payload (`GITHUB_EVENT_PATH`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct PolicyArgs {
    /// Event name (`pull_request`, `push`, …).
    #[arg(long, env = "GITHUB_EVENT_NAME")]
    pub(crate) event_name: String,
    /// Event action (`synchronize`, `labeled`, `unlabeled`, `ready_for_review`).
    #[arg(long, env = "SWEEP_EVENT_ACTION")]
    pub(crate) event_action: Option<String>,
    /// The label of a labeled/unlabeled event.
    #[arg(long, env = "SWEEP_EVENT_LABEL")]
    pub(crate) event_label: Option<String>,
    /// The PR's labels as a JSON array of names (the reference's `PR_LABELS`).
    #[arg(long, env = "PR_LABELS")]
    pub(crate) labels_json: Option<String>,
    /// The PR is a draft (`true`/`false`).
    #[arg(long, env = "SWEEP_PR_DRAFT")]
    pub(crate) draft: Option<String>,
    /// Head commit message (the PR head's, read with `git log`, or the pushed head's).
    #[arg(long, env = "SWEEP_HEAD_COMMIT_MESSAGE")]
    pub(crate) head_commit_message: Option<String>,
    /// Full name of the PR head repository (a fork when it differs from `--repository`).
    #[arg(long, env = "SWEEP_HEAD_REPO")]
    pub(crate) head_repo: Option<String>,
    /// This repository (`owner/name`).
    #[arg(long, env = "GITHUB_REPOSITORY", default_value = "")]
    pub(crate) repository: String,
    /// The git ref of the run (`refs/heads/main` for pushes to main).
    #[arg(long = "ref", env = "GITHUB_REF", default_value = "")]
    pub(crate) git_ref: String,
    /// Event payload to read the fields above from when they are not given.
    #[arg(long, env = "GITHUB_EVENT_PATH")]
    pub(crate) event_path: Option<std::path::PathBuf>,
    /// Append the decisions as `key=value` lines to this file.
    #[arg(long, env = "GITHUB_OUTPUT")]
    pub(crate) github_output: Option<std::path::PathBuf>,
    /// Report conflicting primary labels without failing (the policy job;
    /// the `check-changelog` job fails on them).
    #[arg(long, env = "SWEEP_ALLOW_CONFLICT", value_parser = clap::builder::BoolishValueParser::new(), default_value = "false")]
    pub(crate) allow_conflict: bool,
}

fn non_empty(v: &Option<String>) -> Option<&str> {
    v.as_deref().filter(|s| !s.is_empty())
}

/// Builds the input from flags, environment and the event payload: exit 1
/// when a flag or the event payload is invalid, 2 when the payload file
/// cannot be read.
pub(crate) fn input_from_args(args: &PolicyArgs) -> Result<PolicyInput, Failure> {
    let mut input = PolicyInput {
        event_name: args.event_name.clone(),
        action: non_empty(&args.event_action)
            .unwrap_or_default()
            .to_string(),
        label: non_empty(&args.event_label).map(str::to_string),
        labels: match non_empty(&args.labels_json) {
            Some(t) => parse_labels(t)
                .map_err(|e| Failure::from(e).context("--labels-json (PR_LABELS)"))?,
            None => Vec::new(),
        },
        draft: match non_empty(&args.draft) {
            None => false,
            Some(d) if d.eq_ignore_ascii_case("true") => true,
            Some(d) if d.eq_ignore_ascii_case("false") => false,
            Some(d) => {
                return Err(Failure::rejected_msg(format!(
                    "--draft (SWEEP_PR_DRAFT) must be true or false, got {d:?}"
                )));
            }
        },
        head_commit_message: args.head_commit_message.clone().unwrap_or_default(),
        head_repo: non_empty(&args.head_repo).map(str::to_string),
        repository: args.repository.clone(),
        git_ref: args.git_ref.clone(),
    };
    let given = ExplicitInputs {
        action: non_empty(&args.event_action).is_some(),
        label: non_empty(&args.event_label).is_some(),
        labels: non_empty(&args.labels_json).is_some(),
        draft: non_empty(&args.draft).is_some(),
        head_repo: non_empty(&args.head_repo).is_some(),
        head_commit_message: non_empty(&args.head_commit_message).is_some(),
    };
    if let Some(path) = args
        .event_path
        .as_ref()
        .filter(|p| !p.as_os_str().is_empty())
    {
        let text = sweep_model::fsio::read_text(path, sweep_model::fsio::MAX_EVENT_PAYLOAD_BYTES)
            .or_failed()
            .map_err(|f| f.context(format!("{}: cannot read the event payload", path.display())))?;
        let event: serde_json::Value = serde_json::from_str(&text).or_rejected().map_err(|f| {
            f.context(format!(
                "{}: the event payload is not valid JSON",
                path.display()
            ))
        })?;
        check_event(&event).map_err(|e| Failure::from(e).context(path.display().to_string()))?;
        fill_from_event(&mut input, &event, &given);
    }
    Ok(input)
}

/// Runs `sweep-policy`: JSON on stdout, outputs and summary when in Actions.
/// Exit 0; 1 when the input is rejected or the PR has conflicting primary
/// labels (unless `--allow-conflict`); 2 when the event payload file cannot
/// be read.
pub(crate) fn run(args: &PolicyArgs) -> Outcome {
    let input = input_from_args(args)?;
    let d = decide(&input);
    let s = serde_json::to_string_pretty(&d)
        .or_failed()
        .map_err(|f| f.context("cannot render the decisions"))?;
    sweep_cli::stdout::println(&s);
    if let Some(path) = args
        .github_output
        .as_ref()
        .filter(|p| !p.as_os_str().is_empty())
    {
        for (k, v) in d.outputs() {
            sweep_cli::write_output(path, k, &v)
                .or_failed()
                .map_err(|f| f.context(format!("{}: cannot write step outputs", path.display())))?;
        }
    }
    if let Err(e) = sweep_cli::append_step_summary(&summary_markdown(&d)) {
        eprintln!("generate-matrix: warning: cannot write the step summary: {e}");
    }
    if d.conflicting_labels && d.run_check_changelog && !args.allow_conflict {
        return Err(Failure::rejected_msg(CONFLICT_MESSAGE));
    }
    Ok(())
}
