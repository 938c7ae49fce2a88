//! `generate-matrix priority`: flags, inputs and exit codes around
//! `sweep_matrix::priority`.

use std::io::{BufWriter, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use sweep_matrix::priority;
use sweep_model::exit;

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

/// `priority`: an invalid policy file or a matrix input of a shape it does
/// not annotate is the check saying no (1); an unreadable policy, a bad flag
/// value, an unreadable or malformed matrix input, or a failed write means
/// the job could not be done (2). The annotated matrix goes to an anonymous
/// temporary file first and is copied to stdout only when every job was
/// scored: a failure never leaves a partial matrix on stdout.
pub(crate) fn run_priority(a: &PriorityArgs) -> Result<std::fs::File, PriorityFailure> {
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
    let (source, text) = match &a.input {
        Some(p) => (
            p.display().to_string(),
            std::fs::read_to_string(p)
                .map_err(|e| failed(format!("cannot read {}: {e}", p.display())))?,
        ),
        None => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| failed(format!("cannot read stdin: {e}")))?;
            ("stdin".to_string(), s)
        }
    };
    let ctx = priority::Context {
        event_name: a.event_name.clone(),
        labels,
        queue_namespace: a.queue_namespace.clone(),
        pr_number: a.pr_number,
        criteria,
    };
    let file =
        tempfile::tempfile().map_err(|e| failed(format!("cannot create a temporary file: {e}")))?;
    let mut out = BufWriter::new(file);
    priority::annotate_text(&text, &policy, &ctx, &mut out).map_err(|e| match e {
        priority::AnnotateError::Shape(_) => (exit::REJECTED, format!("{source}: {e}")),
        priority::AnnotateError::Json(_) => failed(format!("{source}: matrix input is {e}")),
        _ => failed(e.to_string()),
    })?;
    drop(text);
    let mut file = out
        .into_inner()
        .map_err(|e| failed(format!("cannot write a temporary file: {}", e.error())))?;
    file.seek(SeekFrom::Start(0))
        .map_err(|e| failed(format!("cannot read back a temporary file: {e}")))?;
    Ok(file)
}

/// Runs `priority`: the annotated payload on stdout (one line of compact
/// JSON), or the error and its code.
pub(crate) fn run(a: &PriorityArgs) -> ExitCode {
    let copied = run_priority(a).and_then(|mut file| {
        let mut stdout = std::io::stdout().lock();
        std::io::copy(&mut file, &mut stdout)
            .and_then(|_| stdout.write_all(b"\n"))
            .and_then(|()| stdout.flush())
            .map_err(|e| {
                (
                    exit::FAILED,
                    format!("cannot write to standard output: {e}"),
                )
            })
    });
    match copied {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, e)) => {
            eprintln!("generate-matrix priority: error: {e}");
            ExitCode::from(code)
        }
    }
}
