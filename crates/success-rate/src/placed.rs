//! Success counts placed by the runner that ran each job (issue #24 item 3),
//! written next to `run_stats.json`, which keeps the reference's name-only
//! rule byte for byte.
//!
//! Leg names carry `matrix.config.runner`, which for most configurations is
//! a group label (`b200`), not a hardware bucket (`b200-nscale`): the name
//! rule counts none of those legs. Here a job attempt is placed by
//!
//! 1. its `runner_name` (jobs API): the bucket whose `cluster:` member list
//!    in the runner file names that machine (a machine listed under two
//!    clusters goes to the first in sorted order, as the name rule does);
//! 2. else its name, by the reference's rule ([`crate::bucket_of`]);
//! 3. else, when it asked for a GPU runner (one of its `labels` is a key of
//!    the runner file's label mapping, or its `runner_name` is listed there),
//!    it is *unplaced*: counted and named, never dropped silently.
//!
//! Other jobs (GitHub-hosted `setup`, `collect-results`, …) are not GPU
//! jobs and are not counted. The counting rules are the reference's:
//! every attempt, `skipped` ignored, anything but `success` (including a
//! still-running job) an unsuccessful attempt.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::{CLUSTER_PREFIX, Error, RunStats, Stats, bucket_of, buckets_from};

/// Version of the `run_stats_by_runner.json` layout; bumped when a key
/// changes meaning.
pub const SCHEMA_VERSION: u64 = 1;

/// How many unplaced job attempts the file names. A sweep with more than
/// this many unplaced legs has a runner file out of step with its runners;
/// the first names show which, and the file (which feeds a PR comment)
/// stays small. The count is always whole.
pub const UNPLACED_LIST_LIMIT: usize = 50;

/// What the runner file says about where jobs run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runners {
    /// Hardware buckets, sorted (the same as [`crate::buckets_from`]).
    pub buckets: Vec<String>,
    /// Machine (`runner_name`) → bucket, from the `cluster:` member lists.
    cluster_of: BTreeMap<String, String>,
    /// Every key of the label mapping (group labels, `cluster:` labels).
    labels: BTreeSet<String>,
    /// Every machine named in any member list of the label mapping.
    machines: BTreeSet<String>,
}

impl Runners {
    /// Reads a parsed runner file. Lenient like [`crate::buckets_from`]: a
    /// member list that is not a list of strings names no machines.
    pub fn from_value(runners: &Value) -> Result<Self, crate::ShapeError> {
        let buckets = buckets_from(runners)?;
        let (_, labels) = crate::label_map(runners)?;
        let members = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut cluster_of = BTreeMap::new();
        for bucket in &buckets {
            if let Some(list) = labels.get(&format!("{CLUSTER_PREFIX}{bucket}")) {
                for machine in members(list) {
                    cluster_of.entry(machine).or_insert_with(|| bucket.clone());
                }
            }
        }
        Ok(Runners {
            buckets,
            cluster_of,
            labels: labels.keys().cloned().collect(),
            machines: labels.values().flat_map(members).collect(),
        })
    }

    /// The bucket whose `cluster:` member list names `runner_name`.
    pub fn cluster_of(&self, runner_name: &str) -> Option<&str> {
        self.cluster_of.get(runner_name).map(String::as_str)
    }

    /// Whether a job asked for (or ran on) a runner the runner file knows.
    fn wants_gpu(&self, job: &Value) -> bool {
        let runner = job.get("runner_name").and_then(Value::as_str);
        runner.is_some_and(|r| self.machines.contains(r))
            || job
                .get("labels")
                .and_then(Value::as_array)
                .is_some_and(|ls| {
                    ls.iter()
                        .filter_map(Value::as_str)
                        .any(|l| self.labels.contains(l))
                })
    }
}

/// Reads the runner file for placement.
pub fn load_runners(path: &Path) -> Result<Runners, Error> {
    let doc = sweep_model::yaml::load_file(path)?;
    Runners::from_value(doc.value()).map_err(|source| Error::Runners {
        file: path.display().to_string(),
        source,
    })
}

/// One job attempt that could not be placed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnplacedJob {
    pub name: String,
    pub run_attempt: Option<u64>,
    pub runner_name: Option<String>,
    pub conclusion: Option<String>,
}

/// Counts placed by runner, with what could not be placed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placed {
    /// Every bucket, sorted, with its counts.
    pub clusters: RunStats,
    /// Attempts placed by their `runner_name`.
    pub by_runner: u64,
    /// Attempts placed by their name (no known runner).
    pub by_name: u64,
    /// Attempts of GPU jobs that neither rule placed.
    pub unplaced: Stats,
    /// The first [`UNPLACED_LIST_LIMIT`] of them, in listing order.
    pub unplaced_jobs: Vec<UnplacedJob>,
}

/// Places and counts `jobs` (the jobs API's objects, every attempt).
pub fn place(jobs: &[Value], runners: &Runners) -> Placed {
    let mut placed = Placed {
        clusters: runners
            .buckets
            .iter()
            .map(|b| (b.clone(), Stats::default()))
            .collect(),
        ..Placed::default()
    };
    for job in jobs {
        let conclusion = job.get("conclusion").and_then(Value::as_str);
        if conclusion == Some("skipped") {
            continue;
        }
        let success = conclusion == Some("success");
        let name = job.get("name").and_then(Value::as_str).unwrap_or_default();
        let runner_name = job
            .get("runner_name")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty());
        let bucket = match runner_name.and_then(|r| runners.cluster_of(r)) {
            Some(b) => {
                placed.by_runner += 1;
                Some(b)
            }
            None => bucket_of(name, &runners.buckets).inspect(|_| placed.by_name += 1),
        };
        let counter = match bucket {
            Some(b) => placed
                .clusters
                .iter_mut()
                .find(|(k, _)| k == b)
                .map(|(_, s)| s),
            None if runners.wants_gpu(job) => {
                if placed.unplaced_jobs.len() < UNPLACED_LIST_LIMIT {
                    placed.unplaced_jobs.push(UnplacedJob {
                        name: name.to_string(),
                        run_attempt: job.get("run_attempt").and_then(Value::as_u64),
                        runner_name: runner_name.map(str::to_string),
                        conclusion: conclusion.map(str::to_string),
                    });
                }
                Some(&mut placed.unplaced)
            }
            None => None,
        };
        if let Some(s) = counter {
            s.total += 1;
            if success {
                s.n_success += 1;
            }
        }
    }
    placed
}

/// `run_stats_by_runner.json`: `clusters` (every bucket, sorted, each
/// `{n_success, total}` like `run_stats.json`), how many attempts each rule
/// placed, and `unplaced` with its counts and the first names.
pub fn to_json(p: &Placed) -> String {
    let mut clusters = Map::new();
    for (b, s) in &p.clusters {
        clusters.insert(
            b.clone(),
            json!({"n_success": s.n_success, "total": s.total}),
        );
    }
    let doc = json!({
        "schema_version": SCHEMA_VERSION,
        "clusters": clusters,
        "placed_by_runner": p.by_runner,
        "placed_by_name": p.by_name,
        "unplaced": {
            "n_success": p.unplaced.n_success,
            "total": p.unplaced.total,
            "jobs": p.unplaced_jobs,
            "jobs_left_out": p.unplaced.total.saturating_sub(p.unplaced_jobs.len() as u64),
        },
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "null".into());
    text.push('\n');
    text
}

/// The job-summary markdown of the placed counts.
pub fn to_markdown(p: &Placed, run_id: &str) -> String {
    let mut out = format!("### Hardware success rates (run {run_id})\n\n");
    match crate::markdown_table(&p.clusters) {
        Some(table) => out.push_str(&table),
        None if p.unplaced.total == 0 => out.push_str("No GPU job ran in this run.\n"),
        None => {}
    }
    out.push_str(&format!(
        "\nPlaced by runner: {}, by job name: {}.\n",
        p.by_runner, p.by_name
    ));
    if p.unplaced.total > 0 {
        out.push_str(&format!(
            "\n{} could not be placed (runner not in a `cluster:` list, no hardware bucket in the name):\n\n",
            jobs(p.unplaced.total)
        ));
        for j in &p.unplaced_jobs {
            out.push_str(&format!(
                "- {} (attempt {}, runner {})\n",
                sweep_model::markdown::inline(&j.name),
                j.run_attempt.map_or("?".into(), |a| a.to_string()),
                sweep_model::markdown::inline(j.runner_name.as_deref().unwrap_or("none"))
            ));
        }
        let left = p
            .unplaced
            .total
            .saturating_sub(p.unplaced_jobs.len() as u64);
        if left > 0 {
            out.push_str(&format!("- and {left} more\n"));
        }
    }
    out
}

fn jobs(n: u64) -> String {
    format!("{n} job{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runners() -> Runners {
        Runners::from_value(&json!({"labels": {
            "b200": ["b200-cw_00", "b200-dgxc_00"],
            "b200-nscale": ["b200-nscale-slurm_0", "b200-nscale-slurm_1"],
            "cluster:b200-nscale": ["b200-nscale-slurm_0", "b200-nscale-slurm_1"],
            "cluster:b200-dgxc": ["b200-dgxc_00", "b200-nscale-slurm_1"],
            "cluster:h200-cw": "not a list",
        }}))
        .expect("runners")
    }

    #[test]
    fn a_machine_in_two_cluster_lists_goes_to_the_first_bucket() {
        let r = runners();
        assert_eq!(r.cluster_of("b200-nscale-slurm_1"), Some("b200-dgxc"));
        assert_eq!(r.cluster_of("b200-nscale-slurm_0"), Some("b200-nscale"));
        assert_eq!(r.cluster_of("b200-cw_00"), None);
        assert_eq!(r.buckets, ["b200-dgxc", "b200-nscale", "h200-cw"]);
    }

    #[test]
    fn runner_wins_over_name_and_unknown_gpu_jobs_are_unplaced() {
        let jobs = vec![
            // runner says b200-nscale although the name says b200-dgxc
            json!({"name": "x cluster:b200-dgxc", "runner_name": "b200-nscale-slurm_0",
                   "labels": ["self-hosted", "b200"], "conclusion": "success", "run_attempt": 1}),
            // no runner (cancelled before start): the name decides
            json!({"name": "x cluster:h200-cw", "runner_name": null,
                   "labels": ["self-hosted", "cluster:h200-cw"], "conclusion": "cancelled"}),
            // group member with no cluster: unplaced, a failure
            json!({"name": "x b200 c4", "runner_name": "b200-cw_00",
                   "labels": ["self-hosted", "b200"], "conclusion": "failure", "run_attempt": 2}),
            // never got a runner, group label only: unplaced
            json!({"name": "x b200 c8", "runner_name": null,
                   "labels": ["self-hosted", "b200"], "conclusion": "cancelled", "run_attempt": 1}),
            // skipped: ignored even when placeable
            json!({"name": "x b200 c16", "runner_name": "b200-nscale-slurm_0",
                   "labels": ["b200"], "conclusion": "skipped"}),
            // GitHub-hosted: not a GPU job
            json!({"name": "setup", "runner_name": "GitHub Actions 3",
                   "labels": ["ubuntu-latest"], "conclusion": "failure"}),
        ];
        let p = place(&jobs, &runners());
        assert_eq!(
            p.clusters,
            vec![
                ("b200-dgxc".to_string(), Stats::default()),
                (
                    "b200-nscale".to_string(),
                    Stats {
                        n_success: 1,
                        total: 1
                    }
                ),
                (
                    "h200-cw".to_string(),
                    Stats {
                        n_success: 0,
                        total: 1
                    }
                ),
            ]
        );
        assert_eq!((p.by_runner, p.by_name), (1, 1));
        assert_eq!(
            p.unplaced,
            Stats {
                n_success: 0,
                total: 2
            }
        );
        let names: Vec<_> = p.unplaced_jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["x b200 c4", "x b200 c8"]);
        assert_eq!(
            p.unplaced_jobs[0].runner_name.as_deref(),
            Some("b200-cw_00")
        );
        assert_eq!(p.unplaced_jobs[1].runner_name, None);
    }

    #[test]
    fn the_unplaced_list_is_bounded_and_the_count_is_whole() {
        let jobs: Vec<Value> = (0..UNPLACED_LIST_LIMIT + 7)
            .map(|i| {
                json!({"name": format!("leg b200 c{i}"), "runner_name": "mystery-box_1",
                            "labels": ["self-hosted", "b200"], "conclusion": "success"})
            })
            .collect();
        let p = place(&jobs, &runners());
        assert_eq!(p.unplaced.total, UNPLACED_LIST_LIMIT as u64 + 7);
        assert_eq!(p.unplaced_jobs.len(), UNPLACED_LIST_LIMIT);
        let doc: Value = serde_json::from_str(&to_json(&p)).expect("json");
        assert_eq!(doc["unplaced"]["jobs_left_out"], 7);
        assert_eq!(doc["unplaced"]["n_success"], UNPLACED_LIST_LIMIT as u64 + 7);
        assert!(to_markdown(&p, "1").contains("- and 7 more\n"));
    }
}
