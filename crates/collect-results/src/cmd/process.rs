//! `process` and `process-leg`: glue over `collect_results::process` and
//! `collect_results::leg_results`.
use collect_results::{leg_results, process};
use sweep_cli::{Failure, Kind, Outcome, ResultExt as _, stdout};
use sweep_model::gha;

use super::{cwd, env_lookup};

pub(crate) fn run_process() -> Outcome {
    process_with(&env_lookup, "process")
}

/// `process` once in the working directory with `env`.
fn process_with(env: process::EnvFn<'_>, context: &'static str) -> Outcome {
    let dir = cwd();
    let out = process::run(env, &dir).map_err(|e| {
        let at = e.location();
        let at = (at.0.map(str::to_owned), at.1);
        Failure::from(e)
            .context(context)
            .at((at.0.as_deref(), at.1))
    })?;
    for m in &out.power.messages {
        eprintln!("{m}");
    }
    if let Some(line) = &out.power.stdout_line {
        stdout::println(line);
    }
    let json = serde_json::to_string_pretty(&out.row)
        .or_failed()
        .map_err(|f| f.context(context))?;
    stdout::println(&json);
    if out.power.fail_exit && !out.power.valid {
        // The power step printed why.
        return Err(Failure::reported(Kind::Rejected));
    }
    Ok(())
}

/// `process` once per result file of a multi-node leg
/// (`<RESULT_FILENAME>_*.json`), each with its own stem and its workers'
/// GPUs from its name; the launcher's stamp names the power producer unless
/// `POWER_PRODUCER_SHA` is set. Stops at the first file that fails.
pub(crate) fn run_process_leg(result_filename: &str) -> Outcome {
    let dir = cwd();
    let context = "process-leg";
    let found =
        leg_results::find(&dir, result_filename).map_err(|e| Failure::from(e).context(context))?;
    let pinned = env_lookup("POWER_PRODUCER_SHA").filter(|v| !v.is_empty());
    let stamp = match pinned {
        Some(_) => None,
        None => leg_results::read_stamp(&dir).map_err(|e| Failure::from(e).context(context))?,
    };
    if let Some(sha) = &stamp {
        eprintln!(
            "POWER_PRODUCER_SHA from the launcher stamp: {}",
            gha::log_text(sha)
        );
    }
    for name in &found.skipped {
        eprintln!(
            "skipping {}: its name has no _gpus_<n>",
            gha::log_text(name)
        );
    }
    for r in &found.results {
        eprintln!(
            "processing {}: prefill GPUs {}, decode GPUs {}",
            gha::log_text(&r.name),
            r.prefill_gpus,
            r.decode_gpus
        );
        let env = |name: &str| match name {
            "RESULT_FILENAME" => Some(r.stem.clone()),
            "IS_MULTINODE" => Some("true".to_string()),
            "PREFILL_GPUS" => Some(r.prefill_gpus.clone()),
            "DECODE_GPUS" => Some(r.decode_gpus.clone()),
            "POWER_PRODUCER_SHA" if stamp.is_some() => stamp.clone(),
            _ => env_lookup(name),
        };
        process_with(&env, context)?;
    }
    Ok(())
}
