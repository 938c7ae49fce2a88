//! `process`: glue over `collect_results::process`.
use std::process::ExitCode;

use collect_results::process;
use sweep_model::exit;

use super::{cwd, env_lookup};
use crate::{fail, fail_at};

/// `process`: a result file or run description that is invalid is the
/// check saying no (1); a missing variable, an unreadable result or a
/// failed write means the job could not be done (2).
fn process_exit_code(e: &process::ProcessError) -> u8 {
    use process::ProcessError as E;
    match e {
        E::MissingVars(_) | E::Read { .. } | E::Write { .. } => exit::FAILED,
        _ => exit::REJECTED,
    }
}

pub(crate) fn run_process() -> ExitCode {
    let dir = cwd();
    match process::run(&env_lookup, &dir) {
        Ok(out) => {
            for m in &out.power.messages {
                eprintln!("{m}");
            }
            if let Some(line) = &out.power.stdout_line {
                sweep_model::stdout::println(line);
            }
            match serde_json::to_string_pretty(&out.row) {
                Ok(s) => sweep_model::stdout::println(&s),
                Err(e) => return fail("process", &e, exit::FAILED),
            }
            if out.power.fail_exit && !out.power.valid {
                exit::rejected()
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => fail_at("process", &e, e.location(), process_exit_code(&e)),
    }
}
