//! Library behind the `success-rate` binary: per-hardware job success
//! counts of a workflow run (`run_stats.json`), the contract of the
//! reference's `calc_success_rate.py` (spec: github.md §2).
//!
//! * Buckets: the `cluster:` keys of `labels` in `configs/runners.yaml`
//!   (or of the top-level mapping when there is no `labels`), prefix
//!   removed, sorted; fallback: the `hardware` keys.
//! * A job belongs to the first bucket (in sorted order) whose label occurs
//!   in the lower-cased job name between non-`[a-z0-9]` boundaries.
//! * Every attempt counts (`filter=all`); `skipped` jobs are ignored; any
//!   conclusion but `success` (including `null` for running jobs) is an
//!   unsuccessful attempt.

use std::path::Path;

pub mod placed;

use github_client::{Client, encode};
use serde_json::{Map, Value, json};

pub(crate) const CLUSTER_PREFIX: &str = "cluster:";

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Yaml(#[from] sweep_model::yaml::YamlError),
    #[error("{file}: {source}")]
    Runners {
        file: String,
        #[source]
        source: ShapeError,
    },
    #[error(transparent)]
    GitHub(#[from] github_client::Error),
}

/// The runner file is not shaped as a runner file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("the document is not a mapping")]
    NotMapping,
    #[error("'labels' is not a mapping")]
    LabelsNotMapping,
}

/// Every error means the counts could not be made (exit 2): the runner file
/// is an input this tool needs, not one it judges.
impl sweep_cli::Classify for Error {
    fn kind(&self) -> sweep_cli::Kind {
        sweep_cli::Kind::Failed
    }
}

/// Success counts of one bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub n_success: u64,
    pub total: u64,
}

/// Buckets in sorted order with their counts.
pub type RunStats = Vec<(String, Stats)>;

/// Hardware buckets from the runner configuration file.
pub fn load_buckets(path: &Path) -> Result<Vec<String>, Error> {
    let doc = sweep_model::yaml::load_file(path)?;
    buckets_from(doc.value()).map_err(|source| Error::Runners {
        file: path.display().to_string(),
        source,
    })
}

/// Hardware buckets from a parsed runner configuration.
pub fn buckets_from(runners: &Value) -> Result<Vec<String>, ShapeError> {
    let (top, labels) = label_map(runners)?;
    let mut out: Vec<String> = labels
        .keys()
        .filter_map(|k| k.strip_prefix(CLUSTER_PREFIX).map(str::to_string))
        .collect();
    if out.is_empty() {
        out = match top.get("hardware") {
            Some(Value::Object(m)) => m
                .keys()
                .map(|k| k.strip_prefix(CLUSTER_PREFIX).unwrap_or(k).to_string())
                .collect(),
            _ => Vec::new(),
        };
    }
    out.sort();
    Ok(out)
}

type JsonMap = serde_json::Map<String, Value>;

/// The runner file's top-level mapping and its label mapping: the
/// `labels:` key of the newer layout, or the top level itself in the older
/// one (every key a label).
pub(crate) fn label_map(runners: &Value) -> Result<(&JsonMap, &JsonMap), ShapeError> {
    let top = runners.as_object().ok_or(ShapeError::NotMapping)?;
    let labels = match top.get("labels") {
        Some(Value::Object(m)) => m,
        Some(_) => return Err(ShapeError::LabelsNotMapping),
        None => top,
    };
    Ok((top, labels))
}

/// True when `needle` occurs in `hay` with no `[a-z0-9]` right before or after it.
fn occurs_bounded(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let word = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    (0..h.len().saturating_sub(n.len()) + 1).any(|i| {
        h[i..].starts_with(n)
            && (i == 0 || !word(h[i - 1]))
            && h.get(i + n.len()).is_none_or(|b| !word(*b))
    })
}

/// The bucket of a job name: the first bucket in `buckets` order that matches.
pub fn bucket_of<'a>(job_name: &str, buckets: &'a [String]) -> Option<&'a str> {
    let name = job_name.to_lowercase();
    buckets
        .iter()
        .find(|b| {
            occurs_bounded(&name, b) || occurs_bounded(&name, &format!("{CLUSTER_PREFIX}{b}"))
        })
        .map(String::as_str)
}

/// Counts jobs (objects with `name` and `conclusion`) per bucket.
pub fn count(jobs: &[Value], buckets: &[String]) -> RunStats {
    let mut stats: RunStats = buckets
        .iter()
        .map(|b| (b.clone(), Stats::default()))
        .collect();
    for job in jobs {
        let name = job.get("name").and_then(Value::as_str).unwrap_or_default();
        let Some(bucket) = bucket_of(name, buckets) else {
            continue;
        };
        let conclusion = job.get("conclusion").and_then(Value::as_str);
        if conclusion == Some("skipped") {
            continue;
        }
        if let Some((_, s)) = stats.iter_mut().find(|(b, _)| b == bucket) {
            s.total += 1;
            if conclusion == Some("success") {
                s.n_success += 1;
            }
        }
    }
    stats
}

/// `run_stats.json` bytes: 2-space indented, bucket order, no trailing newline
/// (what Python's `json.dump(..., indent=2)` writes).
pub fn to_json(stats: &RunStats) -> String {
    let mut map = Map::new();
    for (b, s) in stats {
        map.insert(
            b.clone(),
            json!({"n_success": s.n_success, "total": s.total}),
        );
    }
    serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_else(|_| "null".into())
}

fn rate(s: &Stats) -> f64 {
    if s.total == 0 {
        0.0
    } else {
        s.n_success as f64 * 100.0 / s.total as f64
    }
}

/// The console table (buckets with at least one counted job).
pub fn to_table(stats: &RunStats) -> String {
    let rule = "=".repeat(60);
    let mut out = format!(
        "{rule}\nHardware Success Rates\n{rule}\n{:<20} {:<10} {:<10} {:<10}\n{}\n",
        "Hardware",
        "Success",
        "Total",
        "Rate",
        "-".repeat(60)
    );
    for (b, s) in stats.iter().filter(|(_, s)| s.total > 0) {
        out.push_str(&format!(
            "{b:<20} {:<10} {:<10} {:<10.2}%\n",
            s.n_success,
            s.total,
            rate(s)
        ));
    }
    out.push_str(&rule);
    out
}

/// The job-summary markdown.
pub fn to_markdown(stats: &RunStats, run_id: &str) -> String {
    let mut out = format!("### Hardware success rates (run {run_id})\n\n");
    match markdown_table(stats) {
        Some(table) => out.push_str(&table),
        None => out.push_str("No job of this run matched a hardware bucket.\n"),
    }
    out
}

/// The markdown table of the buckets with at least one counted job, `None`
/// when there is none.
pub(crate) fn markdown_table(stats: &RunStats) -> Option<String> {
    let rows: Vec<_> = stats.iter().filter(|(_, s)| s.total > 0).collect();
    if rows.is_empty() {
        return None;
    }
    let mut out = String::from("| Hardware | Success | Total | Rate |\n|---|---:|---:|---:|\n");
    for (b, s) in rows {
        // Plain names as code; anything else escaped for markdown.
        let name = if b
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            format!("`{b}`")
        } else {
            sweep_model::markdown::inline(b)
        };
        out.push_str(&format!(
            "| {name} | {} | {} | {:.1}% |\n",
            s.n_success,
            s.total,
            rate(s)
        ));
    }
    Some(out)
}

/// Fetches every job of every attempt of `run_id` in `repo`.
pub fn fetch_jobs(client: &Client, repo: &str, run_id: u64) -> Result<Vec<Value>, Error> {
    let run = client.get(
        &format!("/repos/{}/actions/runs/{run_id}", repo_path(repo)),
        &[],
    )?;
    eprintln!(
        "Found run: {} - {}",
        run.get("id").unwrap_or(&Value::Null),
        run.get("name").and_then(Value::as_str).unwrap_or("?")
    );
    Ok(client.get_all(
        &format!("/repos/{}/actions/runs/{run_id}/jobs", repo_path(repo)),
        &[("filter", "all")],
        Some("jobs"),
    )?)
}

/// `owner/name` with each part percent-encoded.
pub fn repo_path(repo: &str) -> String {
    repo.split('/').map(encode).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buckets(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn buckets_are_cluster_labels_sorted_without_prefix() {
        let runners = json!({"labels": {"h200": [], "cluster:h200-dgxc": [], "cluster:b200-nscale": [], "b200": []}});
        assert_eq!(
            buckets_from(&runners),
            Ok(buckets(&["b200-nscale", "h200-dgxc"]))
        );
        let top_level = json!({"cluster:mi355x-amds": [], "mi355x": []});
        assert_eq!(buckets_from(&top_level), Ok(buckets(&["mi355x-amds"])));
        let fallback = json!({"labels": {"h200": []}, "hardware": {"h200": {}, "b200": {}}});
        assert_eq!(buckets_from(&fallback), Ok(buckets(&["b200", "h200"])));
        assert!(buckets_from(&json!([1])).is_err());
    }

    #[test]
    fn matching_respects_boundaries_and_sorted_order() {
        let b = buckets(&[
            "b200-dgxc",
            "b300-nv",
            "gb300-nv",
            "h200-dgxc",
            "mi355x-amds",
        ]);
        assert_eq!(bucket_of("x / h200-dgxc-slurm_12", &b), Some("h200-dgxc"));
        assert_eq!(bucket_of("bench b300-nv_03", &b), Some("b300-nv"));
        assert_eq!(
            bucket_of("p | qwen cluster:MI355X-AMDS sgl", &b),
            Some("mi355x-amds")
        );
        assert_eq!(bucket_of("mi355x-amds2", &b), None);
        assert_eq!(bucket_of("xmi355x-amds", &b), None);
        assert_eq!(bucket_of("gb300-nvl", &b), None);
        assert_eq!(bucket_of("gb300-nv (x)", &b), Some("gb300-nv"));
        // first bucket in sorted order wins, not the first occurrence
        assert_eq!(bucket_of("h200-dgxc then b200-dgxc", &b), Some("b200-dgxc"));
        // a later, bounded occurrence still matches
        assert_eq!(bucket_of("ab300-nv and b300-nv", &b), Some("b300-nv"));
    }

    #[test]
    fn counts_all_attempts_and_ignores_skipped() {
        let b = buckets(&["b200-nscale", "h100-cw"]);
        let jobs = vec![
            json!({"name": "a b200-nscale c4", "conclusion": "failure"}),
            json!({"name": "a b200-nscale c4", "conclusion": "success"}),
            json!({"name": "eval b200-nscale", "conclusion": null}),
            json!({"name": "skip b200-nscale", "conclusion": "skipped"}),
            json!({"name": "collect", "conclusion": "success"}),
        ];
        let stats = count(&jobs, &b);
        assert_eq!(
            stats[0],
            (
                "b200-nscale".into(),
                Stats {
                    n_success: 1,
                    total: 3
                }
            )
        );
        assert_eq!(stats[1].1, Stats::default());
        assert_eq!(
            to_json(&stats),
            "{\n  \"b200-nscale\": {\n    \"n_success\": 1,\n    \"total\": 3\n  },\n  \"h100-cw\": {\n    \"n_success\": 0,\n    \"total\": 0\n  }\n}"
        );
        let md = to_markdown(&stats, "7");
        assert!(md.contains("| `b200-nscale` | 1 | 3 | 33.3% |"), "{md}");
        assert!(!md.contains("h100-cw"));
        // A hostile bucket name is escaped (issue #16 point 6).
        let hostile = vec![(
            "b`200 @team|x".to_string(),
            Stats {
                n_success: 1,
                total: 1,
            },
        )];
        let md = to_markdown(&hostile, "7");
        assert!(
            md.contains("| b\\`200 @\u{2060}team\\|x | 1 | 1 | 100.0% |"),
            "{md}"
        );
    }
}
