//! `generate-matrix split`, `changelog-metadata`, `leg-env` and
//! `worker-settings`: the flags and the files they read and write.

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use sweep_cli::{Failure, Outcome, ResultExt as _};
use sweep_matrix::leg::{LegError, LegInputs, LegPart, github_env_lines, leg_defaults, leg_env};
use sweep_matrix::legs::{
    changelog_metadata, parse_leg_env, read_config, split_owned, worker_settings,
};

/// Reads the search-space config at `input` and applies `f` to it; a
/// failure of either is annotated on the file (the kind from the library
/// error: unreadable 2, refused 1), `f`'s message prefixed with the path.
fn on_config<T, E>(input: &Path, f: impl FnOnce(Value) -> Result<T, E>) -> Result<T, Failure>
where
    Failure: From<E>,
{
    let file = input.display().to_string();
    let at = |f: Failure| f.at((Some(&file), None));
    let config = read_config(input).map_err(|e| at(e.into()))?;
    f(config).map_err(|e| at(Failure::from(e).context(file.clone())))
}

/// `path: cannot …` as an exit-2 failure.
fn io_failure(path: &Path) -> impl FnOnce(Failure) -> Failure + '_ {
    move |f| f.context(path.display().to_string())
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
    /// The calling sweep's inputs as JSON (`toJSON(inputs)` of
    /// run-sweep.yml): the legs' runner labels and timeouts follow them.
    #[arg(long, env = "INPUT_SWEEP", default_value = "")]
    pub(crate) sweep: String,
    /// Append the outputs to this file (default `$GITHUB_OUTPUT`); without
    /// it they are printed as one JSON object.
    #[arg(long, env = "GITHUB_OUTPUT")]
    pub(crate) github_output: Option<PathBuf>,
}

/// The sweep's inputs (`""`: none) as a JSON object.
fn sweep_inputs(text: &str) -> Result<Map<String, Value>, Failure> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(Failure::from(LegError::SweepNotObject(
            sweep_model::json_type::json_type_name(&other).to_string(),
        ))),
        Err(e) => Err(Failure::from(LegError::SweepNotObject(e.to_string()))),
    }
}

pub(crate) fn run_split(a: &SplitArgs) -> Outcome {
    let sweep = sweep_inputs(&a.sweep)?;
    let s = on_config(&a.input, |config| {
        split_owned(
            config,
            a.without_canary,
            a.family.as_deref(),
            a.part,
            &sweep,
        )
    })?;
    match a
        .github_output
        .as_ref()
        .filter(|p| !p.as_os_str().is_empty())
    {
        Some(out) => {
            // All outputs in one append after they are all computed: a
            // failure above leaves the file as it was.
            append_lines(out, &s.outputs)
                .or_failed()
                .map_err(io_failure(out))?;
        }
        None => {
            let doc: Map<String, Value> = s
                .outputs
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            sweep_cli::stdout::println(&Value::Object(doc).to_string());
        }
    }
    eprint!("{}", s.summary);
    if let Err(e) = sweep_cli::append_step_summary(&s.summary) {
        eprintln!("generate-matrix: warning: cannot write the step summary: {e}");
    }
    Ok(())
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

pub(crate) fn run_metadata(a: &MetadataArgs) -> Outcome {
    let meta = on_config(&a.input, |config| changelog_metadata(&config))?;
    let mut text = serde_json::to_string_pretty(&meta)
        .or_failed()
        .map_err(|f| f.context("cannot serialise the metadata"))?;
    text.push('\n');
    sweep_cli::write_atomic(&a.output, text.as_bytes())
        .or_failed()
        .map_err(io_failure(&a.output))
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
    /// The leg's matrix row as JSON: with it, the leg's own environment
    /// (the template variables of its row, its result file name) is
    /// written first, and its leg job's defaults apply.
    #[arg(long, env = "LEG_ROW")]
    pub(crate) row: Option<String>,
    /// With --row: the leg's family stem (the part's `family`).
    #[arg(long, env = "LEG_FAMILY", default_value = "")]
    pub(crate) family: String,
    /// With --row: the calling sweep's inputs as JSON.
    #[arg(long, env = "LEG_SWEEP", default_value = "")]
    pub(crate) sweep: String,
    /// With --row: the leg workflow's `agentx-fast`.
    #[arg(long, env = "LEG_AGENTX_FAST", default_value = "false", value_parser = clap::builder::BoolishValueParser::new())]
    pub(crate) agentx_fast: bool,
    /// With --row: the runner's name (the end of the result file name).
    #[arg(long, env = "RUNNER_NAME", default_value = "")]
    pub(crate) runner_name: String,
    /// Append the variables to this file (default `$GITHUB_ENV`).
    #[arg(long, env = "GITHUB_ENV")]
    pub(crate) github_env: Option<PathBuf>,
}

/// `KEY=VALUE` pairs, in order.
type Vars = Vec<(String, String)>;

/// The leg's own environment and its leg job's defaults (`--row`).
fn row_env(a: &LegEnvArgs, row: &str) -> Result<(Vars, Vec<String>), Failure> {
    let part = LegPart::of_family(&a.family)
        .ok_or_else(|| Failure::from(LegError::UnknownFamily(a.family.clone())))?;
    let fields = match serde_json::from_str::<Value>(row) {
        Ok(Value::Object(m)) => m,
        Ok(other) => {
            return Err(Failure::from(LegError::RowNotObject(
                sweep_model::json_type::json_type_name(&other).to_string(),
            )));
        }
        Err(e) => return Err(Failure::from(LegError::RowNotObject(e.to_string()))),
    };
    let inputs = LegInputs {
        sweep: sweep_inputs(&a.sweep)?,
        agentx_fast: a.agentx_fast,
        runner_name: a.runner_name.clone(),
    };
    let env = leg_env(&fields, part, &inputs)?;
    let defaults = leg_defaults(part.nodes).iter().map(|d| d.to_string());
    Ok((env, defaults.chain(a.defaults.iter().cloned()).collect()))
}

fn append_lines(path: &Path, vars: &[(String, String)]) -> std::io::Result<()> {
    use std::io::Write as _;
    let text = github_env_lines(vars);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())
}

pub(crate) fn run_leg_env(a: &LegEnvArgs) -> Outcome {
    let (mut vars, defaults) = match &a.row {
        Some(row) => row_env(a, row)?,
        None => (Vec::new(), a.defaults.clone()),
    };
    let own = vars.len();
    vars.extend(parse_leg_env(&a.leg_env, &defaults)?);
    let Some(path) = a.github_env.as_ref().filter(|p| !p.as_os_str().is_empty()) else {
        return Err(Failure::failed_msg(
            "no --github-env file (GITHUB_ENV is not set)",
        ));
    };
    append_lines(path, &vars)
        .or_failed()
        .map_err(io_failure(path))?;
    let names = |vars: &[(String, String)]| {
        vars.iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    if own > 0 {
        eprintln!("the leg's own environment: {}", names(&vars[..own]));
    }
    eprintln!("leg environment: {}", names(&vars[own..]));
    Ok(())
}

/// `generate-matrix worker-settings`: a multi-node row's `additional-settings`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct WorkerSettingsArgs {
    /// A worker's `additional-settings` as JSON (a list of `KEY=VALUE`
    /// strings, or null); repeatable, in order.
    #[arg(long = "settings-json", value_name = "JSON")]
    pub(crate) settings: Vec<String>,
    /// The row's name in messages (the leg's `EXP_NAME`).
    #[arg(long, env = "EXP_NAME", default_value = "the matrix row")]
    pub(crate) config: String,
    /// Write the `KEY=VALUE` lines here (atomically).
    #[arg(long, value_name = "FILE")]
    pub(crate) output: PathBuf,
}

pub(crate) fn run_worker_settings(a: &WorkerSettingsArgs) -> Outcome {
    let vars = worker_settings(&a.config, &a.settings)?;
    let mut text = String::new();
    for (k, v) in &vars {
        text.push_str(&format!("{k}={v}\n"));
    }
    sweep_cli::write_atomic(&a.output, text.as_bytes())
        .or_failed()
        .map_err(io_failure(&a.output))
}
