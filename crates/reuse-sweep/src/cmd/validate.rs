//! `validate-artifacts`: glue over `reuse_sweep::validate`.
use std::process::ExitCode;

use sweep_model::exit;
use sweep_model::gha::{self, Level};

use crate::fail;

pub(crate) fn validate(dir: &std::path::Path) -> ExitCode {
    use reuse_sweep::validate;
    let report = match validate::validate(dir) {
        Ok(r) => r,
        Err(e) => return fail(&e, exit::FAILED),
    };
    if !report.collapsed.is_empty() {
        sweep_model::stdout::println(
            "Collapsed reran eval duplicates (kept latest result per identity):",
        );
        for m in &report.collapsed {
            sweep_model::stdout::println(&format!("  {m}"));
        }
    }
    if !report.errors.is_empty() {
        gha::annotate(
            Level::Error,
            None,
            None,
            &format!(
                "reusable sweep artifact validation failed ({} problem line(s))",
                report.errors.len()
            ),
        );
        eprintln!("Reusable sweep artifact validation failed:");
        for e in &report.errors {
            eprintln!("{e}");
        }
        return exit::rejected();
    }
    sweep_model::stdout::println(&validate::summary(&report).to_string());
    ExitCode::SUCCESS
}
