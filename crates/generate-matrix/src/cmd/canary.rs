//! `generate-matrix canary`: the canary row and the remaining matrix as
//! step outputs.

use serde_json::Value;
use sweep_cli::{Failure, Outcome, ResultExt as _};
use sweep_matrix::canary::select_str;

/// `generate-matrix canary`: reads the search-space config from
/// `--search-space-config` (env `SEARCH_SPACE`, the reference's name) or a file.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CanaryArgs {
    /// The search-space config JSON (setup's `search-space-config` output).
    #[arg(long, env = "SEARCH_SPACE", conflicts_with = "input")]
    pub(crate) search_space_config: Option<String>,
    /// Read the search-space config from this file instead.
    #[arg(long)]
    pub(crate) input: Option<std::path::PathBuf>,
    /// Append `canary-config` and `remaining-search-space-config` to this file.
    #[arg(long, env = "GITHUB_OUTPUT")]
    pub(crate) github_output: Option<std::path::PathBuf>,
    /// Write the remaining config to this file instead: it is the whole
    /// matrix, too big for a step output, and only `canary-config` is then
    /// appended to the outputs.
    #[arg(long, env = "INPUT_REMAINING_FILE", value_name = "FILE")]
    pub(crate) remaining_file: Option<std::path::PathBuf>,
}

/// Runs `canary`: prints `{"canary-config": [...], "remaining-search-space-config": {...}}`
/// and writes both as compact single-line step outputs. Exit 1 on an invalid
/// config, 2 when the input file cannot be read.
pub(crate) fn run(args: &CanaryArgs) -> Outcome {
    let (origin, text) = match (&args.input, &args.search_space_config) {
        // A missing or unreadable input: the job cannot be done.
        (Some(p), _) => (
            p.display().to_string(),
            sweep_model::fsio::read_text(p, sweep_model::fsio::MAX_MATRIX_JSON_BYTES)
                .or_failed()
                .map_err(|f| f.context(format!("{}: cannot read", p.display())))?,
        ),
        (None, Some(t)) => ("SEARCH_SPACE".to_string(), t.clone()),
        (None, None) => {
            return Err(Failure::failed_msg(
                "give --search-space-config (env SEARCH_SPACE) or --input FILE",
            ));
        }
    };
    let split = select_str(&text).map_err(|e| Failure::rejected(e).context(origin))?;
    // Memory follows the config once: the text goes before the output is
    // built, and the output is written from the parsed config (what
    // `json!` of the two would print, without copying the config into it).
    drop(text);
    let canary = Value::Array(split.canary.clone());
    let doc = format!(
        "{{\"canary-config\":{canary},\"remaining-search-space-config\":{}}}",
        split.remaining
    );
    sweep_cli::stdout::println(&doc);
    drop(doc);
    let remaining_file = args
        .remaining_file
        .as_ref()
        .filter(|p| !p.as_os_str().is_empty());
    if let Some(p) = remaining_file {
        sweep_cli::write_atomic(p, split.remaining.to_string().as_bytes())
            .or_failed()
            .map_err(|f| f.context(format!("{}: cannot write", p.display())))?;
    }
    if let Some(path) = args
        .github_output
        .as_ref()
        .filter(|p| !p.as_os_str().is_empty())
    {
        let mut outputs = vec![("canary-config", &canary)];
        if remaining_file.is_none() {
            outputs.push(("remaining-search-space-config", &split.remaining));
        }
        for (k, v) in outputs {
            sweep_cli::write_output(path, k, &v.to_string())
                .or_failed()
                .map_err(|f| f.context(format!("{}: cannot write step outputs", path.display())))?;
        }
    }
    let summary = match split.canary.first() {
        Some(c) => format!(
            "### Canary\n\nrunner `{}`, conc `{}`, exp `{}`\n",
            c.get("runner").and_then(Value::as_str).unwrap_or("?"),
            c.get("conc").map(Value::to_string).unwrap_or_default(),
            c.get("exp-name").and_then(Value::as_str).unwrap_or("?"),
        ),
        None => "### Canary\n\nno single-node fixed-sequence candidate: no canary\n".to_string(),
    };
    if let Err(e) = sweep_cli::append_step_summary(&summary) {
        eprintln!("generate-matrix: warning: cannot write the step summary: {e}");
    }
    Ok(())
}
