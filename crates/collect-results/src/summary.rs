//! The one-line summaries (stderr) and the short `$GITHUB_STEP_SUMMARY`
//! tables that `aggregate` and `evals` add beyond the reference.

use std::fmt::Write as _;

use sweep_model::markdown;

use crate::aggregate::AggregateReport;
use crate::evals::EvalsReport;
#[cfg(test)]
use crate::group::element_facts;

fn file_name(p: &std::path::Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// E.g. `aggregate: read 12 files, wrote 12 rows to agg_bmk.json; skipped 1 (1 not *.json)`.
pub fn aggregate_line(r: &AggregateReport, results_dir: &str) -> String {
    if r.dir_missing {
        return format!(
            "aggregate: {results_dir} is not a directory (or does not exist); wrote 0 rows to {}",
            file_name(&r.output)
        );
    }
    let skipped = r.ignored_files + r.skipped_symlink_dirs;
    let mut why = Vec::new();
    if r.ignored_files > 0 {
        why.push(format!("{} not *.json", r.ignored_files));
    }
    if r.skipped_symlink_dirs > 0 {
        why.push(plural(
            r.skipped_symlink_dirs,
            "symlinked directory",
            "symlinked directories",
        ));
    }
    let tail = if skipped == 0 {
        "skipped 0".to_owned()
    } else {
        format!("skipped {skipped} ({})", why.join(", "))
    };
    format!(
        "aggregate: read {}, wrote {} to {}; {tail}",
        plural(r.files_read, "file", "files"),
        plural(r.files_read, "row", "rows"),
        file_name(&r.output)
    )
}

/// Markdown for the step summary: counts, then rows per configuration.
pub fn aggregate_markdown(r: &AggregateReport, results_dir: &str) -> String {
    let groups = &r.groups;
    let other = r.other_elements;
    let mut md = String::from("### collect-results aggregate\n\n");
    md.push_str("| Results dir | Files read | Rows written | Skipped |\n|---|---:|---:|---:|\n");
    let _ = writeln!(
        md,
        "| `{results_dir}` | {} | {} | {} |",
        r.files_read,
        r.files_read,
        r.ignored_files + r.skipped_symlink_dirs
    );
    if !groups.is_empty() {
        md.push_str("\n| Model | Hardware | Framework | Precision | Kind | Rows | Power valid |\n");
        md.push_str("|---|---|---|---|---|---:|---:|\n");
        for (i, ((m, hw, fw, prec, kind), (n, pv))) in groups.iter().enumerate() {
            if i == 50 {
                let _ = writeln!(md, "\n_{} more groups not shown._", groups.len() - 50);
                break;
            }
            // Names come from result files: escaped so they stay plain text.
            let [m, hw, fw, prec] = [m, hw, fw, prec].map(|s| markdown::inline(s));
            let _ = writeln!(md, "| {m} | {hw} | {fw} | {prec} | {kind} | {n} | {pv} |");
        }
    }
    if other > 0 {
        let _ = writeln!(md, "\n{other} element(s) are not result objects.");
    }
    md
}

fn skip_text(r: &EvalsReport) -> (usize, String) {
    let s = &r.skipped;
    let parts: Vec<String> = [
        (s.unparseable, "unparseable"),
        (s.not_lm_eval, "not lm-eval results"),
        (s.superseded, "superseded by a newer file"),
        (s.batch_filtered, "batched without a completed _concN"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, why)| format!("{n} {why}"))
    .collect();
    let total = s.unparseable + s.not_lm_eval + s.superseded + s.batch_filtered;
    (total, parts.join(", "))
}

/// E.g. `evals: 3 eval sets, read 3 result files, wrote 4 rows to agg_eval_all.json; skipped 2 files (2 not lm-eval results)`.
pub fn evals_line(r: &EvalsReport) -> String {
    let (total, why) = skip_text(r);
    let tail = if total == 0 {
        "skipped 0 files".to_owned()
    } else {
        format!("skipped {} ({why})", plural(total, "file", "files"))
    };
    format!(
        "evals: {}, read {}, wrote {} to {}; {tail}",
        plural(r.sets, "eval set", "eval sets"),
        plural(r.files_used, "result file", "result files"),
        plural(r.rows.len(), "row", "rows"),
        file_name(&r.output)
    )
}

/// Markdown counts table for the step summary.
pub fn evals_markdown(r: &EvalsReport, root: &str) -> String {
    let (total, why) = skip_text(r);
    let mut md = String::from("### collect-results evals\n\n");
    md.push_str(
        "| Root | Eval sets | Result files | Rows written | Skipped |\n|---|---:|---:|---:|---|\n",
    );
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(" ({why})")
    };
    let _ = writeln!(
        md,
        "| `{root}` | {} | {} | {} | {total}{why} |",
        r.sets,
        r.files_used,
        r.rows.len()
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn aggregate_line_names_counts_and_reasons() {
        let r = AggregateReport {
            files_read: 2,
            ignored_files: 1,
            output: "out/agg_bmk.json".into(),
            ..AggregateReport::default()
        };
        assert_eq!(
            aggregate_line(&r, "results"),
            "aggregate: read 2 files, wrote 2 rows to agg_bmk.json; skipped 1 (1 not *.json)"
        );
    }

    #[test]
    fn aggregate_markdown_groups_rows() {
        let row = json!({"infmax_model_prefix": "dsr1", "hw": "b200", "framework": "sglang",
                         "precision": "fp8", "is_multinode": false, "power_valid": 0});
        let mut r = AggregateReport {
            files_read: 2,
            other_elements: 1,
            output: "agg_bmk.json".into(),
            ..AggregateReport::default()
        };
        let (key, _) = element_facts(&row).expect("an object");
        r.groups.insert(key, (2, 0));
        let md = aggregate_markdown(&r, "results/");
        assert!(
            md.contains("| dsr1 | b200 | sglang | fp8 | single-node | 2 | 0 |"),
            "{md}"
        );
        assert!(md.contains("1 element(s) are not result objects"), "{md}");
    }

    #[test]
    fn aggregate_markdown_escapes_names_from_result_files() {
        let row = json!({"infmax_model_prefix": "@octocat", "hw": "b200|x", "framework": "[x](https://e.invalid)",
                         "precision": "fp8\n# heading", "is_multinode": false, "power_valid": 0});
        let mut r = AggregateReport {
            files_read: 1,
            output: "agg_bmk.json".into(),
            ..AggregateReport::default()
        };
        let (key, _) = element_facts(&row).expect("an object");
        r.groups.insert(key, (1, 0));
        let md = aggregate_markdown(&r, "results/");
        let table_row = md.lines().last().expect("a row");
        assert!(!table_row.contains("@octocat"), "{md}");
        assert!(!table_row.contains("[x](https"), "{md}");
        assert!(!md.contains("\n# heading"), "{md}");
        assert_eq!(table_row.matches(" | ").count(), 6, "{md}");
    }
}
