//! `validate-artifacts`: glue over `reuse_sweep::validate`.
use sweep_cli::{Failure, Outcome, stdout};

pub(crate) fn validate(dir: &std::path::Path) -> Outcome {
    use reuse_sweep::validate;
    // `Err` is a failure to read or write the folder (exit 2).
    let report = validate::validate(dir)?;
    if !report.collapsed.is_empty() {
        stdout::println("Collapsed reran eval duplicates (kept latest result per identity):");
        for m in &report.collapsed {
            stdout::println(&format!("  {m}"));
        }
    }
    if !report.errors.is_empty() {
        // The reference's report, then the one error line (and annotation).
        eprintln!("Reusable sweep artifact validation failed:");
        for e in &report.errors {
            eprintln!("{}", sweep_cli::log_text(&e.to_string()));
        }
        return Err(Failure::rejected_msg(format!(
            "reusable sweep artifact validation failed ({} problem line(s))",
            report.errors.len()
        )));
    }
    stdout::println(&validate::summary(&report).to_string());
    Ok(())
}
