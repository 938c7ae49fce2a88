//! `process`: glue over `collect_results::process`.
use collect_results::process;
use sweep_cli::{Failure, Kind, Outcome, ResultExt as _, stdout};

use super::{cwd, env_lookup};

pub(crate) fn run_process() -> Outcome {
    let dir = cwd();
    let out = process::run(&env_lookup, &dir).map_err(|e| {
        let at = e.location();
        let at = (at.0.map(str::to_owned), at.1);
        Failure::from(e)
            .context("process")
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
        .map_err(|f| f.context("process"))?;
    stdout::println(&json);
    if out.power.fail_exit && !out.power.valid {
        // The power step printed why.
        return Err(Failure::reported(Kind::Rejected));
    }
    Ok(())
}
