//! `generate-matrix priority`: flags, inputs and exit codes around
//! `sweep_matrix::priority`.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;
use sweep_matrix::priority;
use sweep_model::exit;

use super::print_json;

#[derive(Args)]
#[command(allow_negative_numbers = true, args_override_self = true)]
pub(crate) struct PriorityArgs {
    /// Priority policy (YAML).
    #[arg(
        long,
        env = "INPUT_POLICY",
        default_value = "configs/ci-priority.yaml",
        value_name = "FILE"
    )]
    policy: PathBuf,
    /// CI event name (push, pull_request, schedule, …).
    #[arg(long, env = "INPUT_EVENT_NAME", default_value = "")]
    event_name: String,
    /// JSON array of PR label names.
    #[arg(long, env = "INPUT_LABELS_JSON", default_value = "[]")]
    labels_json: String,
    /// Namespace mixed into queue tokens.
    #[arg(long, env = "INPUT_QUEUE_NAMESPACE", default_value = "local")]
    queue_namespace: String,
    /// PR number (enables skip-queue-pr with the skip-queue label).
    #[arg(long, env = "INPUT_PR_NUMBER")]
    pr_number: Option<i64>,
    /// JSON array of classifier criteria (criteria mode); empty or null = normal mode.
    #[arg(long, env = "INPUT_CRITERIA_JSON", default_value = "")]
    criteria_json: String,
    /// Read the matrix JSON from this file instead of stdin.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
}

/// Why `priority` failed: the exit code (`sweep_model::exit`) and the message.
pub(crate) type PriorityFailure = (u8, String);

/// `priority`: an invalid policy file is the check saying no (1); an
/// unreadable policy, a bad flag value or an unreadable/malformed matrix
/// input means the job could not be done (2).
pub(crate) fn run_priority(a: &PriorityArgs) -> Result<Value, PriorityFailure> {
    let failed = |e: String| (exit::FAILED, e);
    let doc = sweep_model::yaml::load_file(&a.policy).map_err(|e| {
        let code = if e.unreadable {
            exit::FAILED
        } else {
            exit::REJECTED
        };
        (code, e.to_string())
    })?;
    let policy = priority::Policy::from_value(doc.into_value(), &a.policy.display().to_string())
        .map_err(|e| (exit::REJECTED, e.to_string()))?;
    let labels = priority::parse_string_array(&a.labels_json, "--labels-json")
        .map_err(|e| failed(e.to_string()))?
        .unwrap_or_default();
    let criteria = priority::parse_string_array(&a.criteria_json, "--criteria-json")
        .map_err(|e| failed(e.to_string()))?;
    let text = match &a.input {
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| failed(format!("cannot read {}: {e}", p.display())))?,
        None => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| failed(format!("cannot read stdin: {e}")))?;
            s
        }
    };
    let payload: Value = serde_json::from_str(&text)
        .map_err(|e| failed(format!("matrix input is not valid JSON: {e}")))?;
    let ctx = priority::Context {
        event_name: a.event_name.clone(),
        labels,
        queue_namespace: a.queue_namespace.clone(),
        pr_number: a.pr_number,
        criteria,
    };
    priority::annotate(&payload, &policy, &ctx).map_err(|e| failed(e.to_string()))
}

/// Runs `priority`: the annotated payload on stdout, or the error and its code.
pub(crate) fn run(a: &PriorityArgs) -> ExitCode {
    match run_priority(a) {
        Ok(v) => print_json(&v),
        Err((code, e)) => {
            eprintln!("generate-matrix priority: error: {e}");
            ExitCode::from(code)
        }
    }
}
