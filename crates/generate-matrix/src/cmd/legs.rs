//! `generate-matrix split`, `changelog-metadata`, `leg-env` and
//! `worker-settings`: the flags and the files they read and write.

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use sweep_matrix::legs::{changelog_metadata, parse_leg_env, read_config, split, worker_settings};
use sweep_model::exit;
use sweep_model::gha::{self, Level};

/// Reports `msg` (annotated on `path` when given) and exits with `code`.
fn fail_with(code: u8, path: Option<&Path>, msg: &str) -> ExitCode {
    let file = path.map(|p| p.display().to_string());
    gha::annotate(Level::Error, file.as_deref(), None, msg);
    eprintln!("generate-matrix: error: {msg}");
    ExitCode::from(code)
}

/// A rejected input (exit 1).
fn fail(path: Option<&Path>, msg: &str) -> ExitCode {
    fail_with(exit::REJECTED, path, msg)
}

/// `generate-matrix split`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SplitArgs {
    /// The search-space config file (the setup job's `search-space-config` artifact).
    #[arg(long, value_name = "FILE")]
    pub(crate) input: PathBuf,
    /// Write one part of this family (`sn-1k1k`, `mn-evals`, …) as the
    /// output `rows` (the leg workflow's plan job); without it, check every
    /// budget and write the parts lists (`<group>-parts`, setup).
    #[arg(long, env = "INPUT_FAMILY", value_name = "STEM")]
    pub(crate) family: Option<String>,
    /// With --family: which part (1-based), as the parts list names it.
    #[arg(long, env = "INPUT_PART", default_value_t = 1)]
    pub(crate) part: usize,
    /// Leave the canary row out (the canary job runs it first): `true` or `false`.
    #[arg(long, env = "INPUT_WITHOUT_CANARY", default_value = "false", value_parser = clap::builder::BoolishValueParser::new())]
    pub(crate) without_canary: bool,
    /// Append the outputs to this file (default `$GITHUB_OUTPUT`); without
    /// it they are printed as one JSON object.
    #[arg(long, env = "GITHUB_OUTPUT")]
    pub(crate) github_output: Option<PathBuf>,
}

pub(crate) fn run_split(a: &SplitArgs) -> ExitCode {
    let ssc = match read_config(&a.input) {
        Ok(v) => v,
        Err(e) => return fail_with(e.exit_code(), Some(&a.input), &e.to_string()),
    };
    let s = match split(&ssc, a.without_canary, a.family.as_deref(), a.part) {
        Ok(s) => s,
        Err(e) => return fail(Some(&a.input), &format!("{}: {e}", a.input.display())),
    };
    match a
        .github_output
        .as_ref()
        .filter(|p| !p.as_os_str().is_empty())
    {
        Some(out) => {
            // All outputs in one append after they are all computed: a
            // failure above leaves the file as it was.
            if let Err(e) = append_lines(out, &s.outputs) {
                eprintln!("generate-matrix: error: {}: {e}", out.display());
                return ExitCode::from(2);
            }
        }
        None => {
            let doc: Map<String, Value> = s
                .outputs
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            sweep_model::stdout::println(&Value::Object(doc).to_string());
        }
    }
    eprint!("{}", s.summary);
    if let Err(e) = gha::append_step_summary(&s.summary) {
        eprintln!("generate-matrix: warning: cannot write the step summary: {e}");
    }
    ExitCode::SUCCESS
}

/// `generate-matrix changelog-metadata`: the config's `changelog_metadata`
/// (or `{}`) as a file; exit 1, writing nothing, when the input is neither a
/// search-space config nor a matrix list
/// (`sweep_matrix::legs::changelog_metadata`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct MetadataArgs {
    /// The search-space config file.
    #[arg(long, value_name = "FILE")]
    pub(crate) input: PathBuf,
    /// Where to write the metadata JSON.
    #[arg(long, value_name = "FILE")]
    pub(crate) output: PathBuf,
}

pub(crate) fn run_metadata(a: &MetadataArgs) -> ExitCode {
    let ssc = match read_config(&a.input) {
        Ok(v) => v,
        Err(e) => return fail_with(e.exit_code(), Some(&a.input), &e.to_string()),
    };
    let meta = match changelog_metadata(&ssc) {
        Ok(m) => m,
        Err(e) => return fail(Some(&a.input), &format!("{}: {e}", a.input.display())),
    };
    let mut text = serde_json::to_string_pretty(&meta).unwrap_or_default();
    text.push('\n');
    if let Err(e) = sweep_model::fsio::write_atomic(&a.output, text.as_bytes()) {
        eprintln!("generate-matrix: error: {}: {e}", a.output.display());
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}

/// `generate-matrix leg-env`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct LegEnvArgs {
    /// The caller's extra leg environment: `KEY=VALUE` lines.
    #[arg(long, env = "LEG_ENV", default_value = "")]
    pub(crate) leg_env: String,
    /// A default `KEY=VALUE` that leg-env may override (repeatable).
    #[arg(long = "default", value_name = "KEY=VALUE")]
    pub(crate) defaults: Vec<String>,
    /// Append the variables to this file (default `$GITHUB_ENV`).
    #[arg(long, env = "GITHUB_ENV")]
    pub(crate) github_env: Option<PathBuf>,
}

fn append_lines(path: &Path, vars: &[(String, String)]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut text = String::new();
    for (k, v) in vars {
        text.push_str(&format!("{k}={v}\n"));
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())
}

pub(crate) fn run_leg_env(a: &LegEnvArgs) -> ExitCode {
    let vars = match parse_leg_env(&a.leg_env, &a.defaults) {
        Ok(v) => v,
        Err(e) => return fail(None, &e),
    };
    let Some(path) = a.github_env.as_ref().filter(|p| !p.as_os_str().is_empty()) else {
        eprintln!("generate-matrix: error: no --github-env file (GITHUB_ENV is not set)");
        return ExitCode::from(2);
    };
    if let Err(e) = append_lines(path, &vars) {
        eprintln!("generate-matrix: error: {}: {e}", path.display());
        return ExitCode::from(2);
    }
    let names: Vec<&str> = vars.iter().map(|(k, _)| k.as_str()).collect();
    eprintln!("leg environment: {}", names.join(" "));
    ExitCode::SUCCESS
}

/// `generate-matrix worker-settings`: a multi-node row's `additional-settings`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct WorkerSettingsArgs {
    /// A worker's `additional-settings` as JSON (a list of `KEY=VALUE`
    /// strings, or null); repeatable, in order.
    #[arg(long = "settings-json", value_name = "JSON")]
    pub(crate) settings: Vec<String>,
    /// Write the `KEY=VALUE` lines here (atomically).
    #[arg(long, value_name = "FILE")]
    pub(crate) output: PathBuf,
}

pub(crate) fn run_worker_settings(a: &WorkerSettingsArgs) -> ExitCode {
    let vars = match worker_settings(&a.settings) {
        Ok(v) => v,
        Err(e) => return fail(None, &e),
    };
    let mut text = String::new();
    for (k, v) in &vars {
        text.push_str(&format!("{k}={v}\n"));
    }
    if let Err(e) = sweep_model::fsio::write_atomic(&a.output, text.as_bytes()) {
        eprintln!("generate-matrix: error: {}: {e}", a.output.display());
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
