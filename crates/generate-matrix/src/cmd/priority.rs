//! `generate-matrix priority`: flags, inputs and exit codes around
//! `sweep_matrix::priority`.

use std::io::{BufWriter, Seek as _, SeekFrom, Write as _};
use std::path::PathBuf;

use clap::Args;
use serde_json::value::RawValue;
use sweep_cli::{Failure, Outcome, ResultExt as _};
use sweep_matrix::priority;

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

/// `priority`: an invalid policy file or a matrix input of a shape it does
/// not annotate is the check saying no (1); an unreadable policy, a bad flag
/// value, an unreadable or malformed matrix input, or a failed write means
/// the job could not be done (2). The annotated matrix goes to an anonymous
/// temporary file first and is copied to stdout only when every job was
/// scored: a failure never leaves a partial matrix on stdout.
pub(crate) fn run_priority(a: &PriorityArgs) -> Result<std::fs::File, Failure> {
    let doc = sweep_model::yaml::load_file(&a.policy)?;
    let policy = priority::Policy::from_value(doc.into_value(), &a.policy.display().to_string())
        .or_rejected()?;
    // A bad flag value: a usage error.
    let labels = priority::parse_string_array(&a.labels_json, "--labels-json")
        .or_failed()?
        .unwrap_or_default();
    let criteria = priority::parse_string_array(&a.criteria_json, "--criteria-json").or_failed()?;
    let (source, text) = match &a.input {
        Some(p) => (
            p.display().to_string(),
            sweep_model::fsio::read_text(p, sweep_model::fsio::MAX_MATRIX_JSON_BYTES)
                .or_failed()
                .map_err(|f| f.context(format!("cannot read {}", p.display())))?,
        ),
        None => {
            let s = sweep_model::fsio::read_stdin_text(sweep_model::fsio::MAX_MATRIX_JSON_BYTES)
                .or_failed()
                .map_err(|f| f.context("cannot read stdin"))?;
            ("stdin".to_string(), s)
        }
    };
    check_list_rows(&text, &source)?;
    let ctx = priority::Context {
        event_name: a.event_name.clone(),
        labels,
        queue_namespace: a.queue_namespace.clone(),
        pr_number: a.pr_number,
        criteria,
    };
    let file = tempfile::tempfile()
        .or_failed()
        .map_err(|f| f.context("cannot create a temporary file"))?;
    let mut out = BufWriter::new(file);
    priority::annotate_text(&text, &policy, &ctx, &mut out).map_err(|e| match e {
        priority::AnnotateError::Shape(_) => Failure::rejected(e).context(source),
        priority::AnnotateError::Json(_) => {
            Failure::failed_msg(format!("{source}: matrix input is {e}"))
        }
        _ => Failure::failed(e),
    })?;
    drop(text);
    let mut file = out
        .into_inner()
        .map_err(|e| Failure::failed(e.into_error()).context("cannot write a temporary file"))?;
    file.seek(SeekFrom::Start(0))
        .or_failed()
        .map_err(|f| f.context("cannot read back a temporary file"))?;
    Ok(file)
}

/// The keys that make an object a matrix row (a job `priority` scores).
const ROW_KEYS: [&str; 2] = ["runner", "framework"];

/// A matrix list (the payload is a JSON array) holds matrix rows: an
/// object element without `runner` or `framework` would pass unscored and
/// unchanged, so it is refused (exit 1), naming its index and the missing
/// keys. Scalar elements still pass unchanged, as a recorded case of the
/// reference has them. A payload that does not parse is left to the
/// annotator, which names the JSON error.
fn check_list_rows(text: &str, source: &str) -> Result<(), Failure> {
    if !text.trim_start().starts_with('[') {
        return Ok(());
    }
    let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(text) else {
        return Ok(());
    };
    for (i, item) in items.iter().enumerate() {
        if !item.get().starts_with('{') {
            continue;
        }
        // Only the keys are read (the values stay raw text).
        let keys: std::collections::HashMap<String, &RawValue> =
            serde_json::from_str(item.get()).or_failed()?;
        let missing: Vec<&str> = ROW_KEYS
            .into_iter()
            .filter(|k| !keys.contains_key(*k))
            .collect();
        refuse_row(source, i, &missing)?;
    }
    Ok(())
}

fn refuse_row(source: &str, index: usize, missing: &[&str]) -> Result<(), Failure> {
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = missing.iter().map(|k| format!("'{k}'")).collect();
    Err(Failure::rejected_msg(format!(
        "{source}[{index}]: not a matrix row: missing {} (a matrix list holds rows with {})",
        names.join(" and "),
        ROW_KEYS.map(|k| format!("'{k}'")).join(" and ")
    )))
}

/// Runs `priority`: the annotated payload on stdout (one line of compact
/// JSON), or the error and its code.
pub(crate) fn run(a: &PriorityArgs) -> Outcome {
    let mut file = run_priority(a).map_err(|f| f.context("priority"))?;
    let mut stdout = std::io::stdout().lock();
    std::io::copy(&mut file, &mut stdout)
        .and_then(|_| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush())
        .or_failed()
        .map_err(|f| f.context("priority: cannot write to standard output"))
}
