//! `evals`: glue over `collect_results::evals`.
use collect_results::{evals, summary};
use sweep_cli::{Failure, Level, Outcome, annotate, stdout};

use super::{cwd, step_summary};

pub(crate) fn run_evals(root: &str, exp_name: &str, sort_by: Option<&str>) -> Outcome {
    let dir = cwd();
    match evals::run(root, exp_name, &dir, &dir) {
        Ok(report) => {
            // Unparseable files are left out (the reference skips them);
            // each is named so a broken upload is not silently lost.
            for p in &report.skipped.unparseable_files {
                let shown = p.strip_prefix(&dir).unwrap_or(p).display().to_string();
                let msg = format!("{shown}: not a valid JSON object; left out of the eval table");
                annotate(Level::Warning, Some(&shown), None, &msg);
                eprintln!("warning: {}", sweep_model::gha::log_text(&msg));
            }
            stdout::print(&evals::render_markdown(
                &report.rows,
                sort_by.unwrap_or("model_prefix"),
            ));
            eprintln!("{}", summary::evals_line(&report));
            step_summary(&summary::evals_markdown(&report, root));
            Ok(())
        }
        // Could not do the job: there were results but none readable, or
        // the table could not be written.
        Err(e) => Err(Failure::from(e).context("evals")),
    }
}
