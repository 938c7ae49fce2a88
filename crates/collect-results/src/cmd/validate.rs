//! `validate-scores`: flags and glue over `collect_results::validate`.
use std::path::{Path, PathBuf};

use collect_results::validate;
use sweep_cli::{Failure, Outcome, stdout};

use super::{cwd, env_lookup};

// The `validate-scores` flags (its help text is the variant's doc comment).
#[derive(clap::Args)]
pub(crate) struct ValidateScoresArgs {
    /// Fallback minimum score when no threshold matches.
    #[arg(long, default_value = "0.85", value_parser = parse_float_like_python)]
    min_score: f64,
    /// Thresholds file (YAML or JSON): `default.<task>`, `models.<prefix>.<task>`.
    #[arg(long)]
    thresholds: Option<PathBuf>,
    /// `meta_env.json` used for the model prefix and the batch manifest.
    #[arg(long, default_value = "meta_env.json")]
    meta_env: String,
    /// Model prefix (default: meta_env.json, then $MODEL_PREFIX).
    #[arg(long)]
    model_prefix: Option<String>,
    /// Only metrics whose name starts with this are checked.
    #[arg(long, default_value = "exact_match,", allow_hyphen_values = true)]
    metric_prefix: String,
    /// Glob for the result files.
    #[arg(long, default_value = "results*.json")]
    results_glob: String,
    /// Space-separated concurrencies the workflow requested.
    #[arg(long, allow_hyphen_values = true)]
    expected_concs: Option<String>,
}

fn parse_float_like_python(s: &str) -> Result<f64, super::FloatArgError> {
    sweep_model::python::python_float(s)
        .ok_or_else(|| super::FloatArgError::NotAFloat(s.to_string()))
}

fn run_validate(opts: validate::ValidateOptions, dir: &Path) -> Outcome {
    let outcome = validate::run(&opts, dir);
    for (stream, line) in &outcome.lines {
        match stream {
            validate::Stream::Out => {
                stdout::println(line);
            }
            validate::Stream::Err => eprintln!("{line}"),
        }
    }
    // The lines above said why.
    outcome
        .failure
        .map_or(Ok(()), |kind| Err(Failure::reported(kind)))
}

pub(crate) fn run_validate_scores(args: ValidateScoresArgs) -> Outcome {
    let ValidateScoresArgs {
        min_score,
        thresholds,
        meta_env,
        model_prefix,
        metric_prefix,
        results_glob,
        expected_concs,
    } = args;
    run_validate(
        validate::ValidateOptions {
            min_score,
            thresholds,
            meta_env,
            model_prefix,
            metric_prefix,
            results_glob,
            expected_concs,
            env_model_prefix: env_lookup("MODEL_PREFIX"),
        },
        &cwd(),
    )
}
