//! What a scenario reads of an act run: the jobs and how they ended (a
//! leg's name nested in the sweep's, as GitHub lists it), the legs the
//! launcher ran, the log's tail for a failure message.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// A job's outcome as act printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Failed,
}

/// The `name:` of the leg workflow (`sweepkit-sweep-legs.yml`).
const LEGS_WORKFLOW_NAME: &str = "Sweep legs (sweepkit)";

/// act prefixes the log lines of a job of the leg workflow, which the sweep
/// calls, with `[<calling job>/<workflow name>/<job>]`, without the sweep's
/// own `<caller job>/<sweep name>/`; GitHub lists that job as `<calling
/// job> / <job>` inside the sweep. Rewrites those prefixes to
/// `[<caller job>/<sweep name>/<calling job> / <job>]`, the sweep's prefix
/// taken from its first job's lines, so that a leg reads as before the
/// split: `[sweep/Run Sweep (sweepkit)/single-node 8k1k / p3 | …]`.
pub(super) fn nest_names(log: &str) -> String {
    let sweep = log.lines().find_map(|l| {
        let rest = l.strip_prefix('[')?;
        let (job, _) = rest.split_once("] ")?;
        let i = job.find("/Run Sweep (sweepkit)/")?;
        Some(job[..i + "/Run Sweep (sweepkit)/".len()].to_string())
    });
    let Some(sweep) = sweep else {
        return log.to_string();
    };
    let marker = format!("/{LEGS_WORKFLOW_NAME}/");
    let mut out = String::with_capacity(log.len() + 4096);
    for line in log.lines() {
        let nested = line.strip_prefix('[').and_then(|rest| {
            let (job, msg) = rest.split_once(']')?;
            let (caller, leg) = job.split_once(&marker)?;
            // act numbers the calls of a matrix whose entries share a name
            // (`agentic eval-1`, `agentic eval-2`); GitHub shows the name.
            let caller = match caller.rsplit_once('-') {
                Some((name, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => name,
                _ => caller,
            };
            Some(format!("[{sweep}{caller} / {leg}]{msg}"))
        });
        out.push_str(nested.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// Whether `job` (a name from [`job_outcomes`], the sweep's prefix taken
/// off) is a GPU leg: a job of the leg workflow that is not its plan job.
pub fn is_leg(job: &str) -> bool {
    job.split_once(" / ")
        .is_some_and(|(_, j)| !j.starts_with("plan "))
}

/// Whether `job` is a plan job of the leg workflow (`<part> / plan …`).
pub fn is_plan(job: &str) -> bool {
    job.split_once(" / ")
        .is_some_and(|(_, j)| j.starts_with("plan "))
}

/// Every job act ran and how it ended, from its `[<workflow>/<job name>]
/// 🏁  Job succeeded` / `Job failed` lines.
pub fn job_outcomes(log: &str) -> BTreeMap<String, Outcome> {
    let mut out = BTreeMap::new();
    for line in log.lines() {
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let Some((job, msg)) = rest.split_once("] ") else {
            continue;
        };
        if msg.contains("Job succeeded") {
            out.insert(job.trim().to_string(), Outcome::Succeeded);
        } else if msg.contains("Job failed") {
            out.insert(job.trim().to_string(), Outcome::Failed);
        }
    }
    out
}

/// One run of act: how it ended, what it printed, how long it took.
pub struct ActRun {
    /// Whether act exited 0.
    pub ok: bool,
    /// act's output, stdout then stderr, a leg's job names nested in the
    /// sweep's (see `nest_names`).
    pub log: String,
    /// act's wall time in seconds.
    pub secs: f64,
}

impl ActRun {
    /// The outcome of every job that ran, names without `prefix`
    /// ([`outcomes_of`]).
    pub fn jobs(&self, prefix: &str) -> BTreeMap<String, Outcome> {
        outcomes_of(&self.log, prefix)
    }

    /// The log's last lines, for a failure message ([`tail`]).
    pub fn tail(&self) -> String {
        tail(&self.log)
    }

    /// Prints `scenario`'s wall time and the jobs that ran, then asserts
    /// that act exited 0, with the log's tail as the failure message.
    pub fn assert_ok(&self, scenario: &str) {
        eprintln!(
            "{scenario}: act ran {:.1} s; jobs: {:#?}",
            self.secs,
            job_outcomes(&self.log)
        );
        assert!(self.ok, "{scenario}: act failed:\n{}", self.tail());
    }

    /// Whether act skipped a job for a `runs-on` label with no `-P`
    /// mapping (it warns and goes on; a scenario asserts it did not).
    pub fn skipped_unmapped_job(&self) -> bool {
        self.log.contains("skipping unsupported platform")
            || self.log.contains("Skipping unsupported platform")
    }

    /// The legs the test's [`LAUNCHER`](super::LAUNCHER) ran, one per `launcher:` line, in
    /// the order they ran.
    pub fn launched(&self) -> Vec<Launched> {
        self.log
            .lines()
            .filter_map(|l| {
                l.split_once("| launcher: ")
                    .map(|(_, t)| Launched::parse(t))
            })
            .collect()
    }
}

/// A leg as the test's [`LAUNCHER`](super::LAUNCHER) prints it: `launcher: <model>
/// <framework> TP<tp> conc <conc> isl <isl> osl <osl> eval-only <bool> on
/// '<runner>'`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Launched {
    pub tp: u64,
    pub conc: u64,
    pub isl: u64,
    pub osl: u64,
    pub eval_only: bool,
}

impl Launched {
    fn parse(line: &str) -> Self {
        let w: Vec<&str> = line.split_whitespace().collect();
        let after = |k: &str| -> &str {
            let i = w
                .iter()
                .position(|x| *x == k)
                .unwrap_or_else(|| panic!("no {k:?} in the launcher line {line:?}"));
            w[i + 1]
        };
        let num = |k: &str| -> u64 { after(k).parse().unwrap() };
        Launched {
            tp: w[2].strip_prefix("TP").unwrap().parse().unwrap(),
            conc: num("conc"),
            isl: num("isl"),
            osl: num("osl"),
            eval_only: after("eval-only") == "true",
        }
    }

    /// The leg a dry-run leg (`check-changelog dry-run --json`) names.
    pub fn of_dry_run_leg(leg: &Value) -> Self {
        Self::of_row(&leg["row"], leg["family"] == "evals")
    }

    /// The leg a matrix row names.
    pub fn of_row(r: &Value, eval_only: bool) -> Self {
        Launched {
            tp: r["tp"].as_u64().unwrap(),
            conc: r["conc"].as_u64().unwrap(),
            isl: r["isl"].as_u64().unwrap(),
            osl: r["osl"].as_u64().unwrap(),
            eval_only,
        }
    }
}

/// The prefix act gives the sweep's jobs when the caller `run-sweep.yml`
/// (job `sweep`) calls it: strip it for the names the workflow gives.
pub const SWEEP_PREFIX: &str = "sweep/Run Sweep (sweepkit)/";

/// The sweep's jobs, but the legs, that a labelled PR's sweep with
/// benchmark and eval legs runs ([`fixed_jobs`]; the reuse gate and the
/// ingest jobs are skipped on a PR).
pub const PR_SWEEP_JOBS: [&str; 9] = [
    "policy",
    "check-changelog",
    "setup",
    "collect-results",
    "collect-evals",
    "upload-changelog-metadata",
    "calc-success-rate",
    "compare-results",
    "comment-unofficial-run-visualizer",
];

/// The outcome of every job act ran, names without `prefix` (a caller's
/// job and the called workflow's name, [`SWEEP_PREFIX`]).
pub fn outcomes_of(log: &str, prefix: &str) -> BTreeMap<String, Outcome> {
    job_outcomes(log)
        .into_iter()
        .map(|(k, v)| (k.strip_prefix(prefix).unwrap_or(&k).to_string(), v))
        .collect()
}

/// The jobs that ran and did not succeed.
pub fn failed_jobs(ran: &BTreeMap<String, Outcome>) -> Vec<&String> {
    ran.iter()
        .filter(|(_, o)| **o != Outcome::Succeeded)
        .map(|(k, _)| k)
        .collect()
}

/// The jobs that ran, but the legs (`<family> / <leg>`): the sweep's fixed
/// jobs.
pub fn fixed_jobs(ran: &BTreeMap<String, Outcome>) -> BTreeSet<&str> {
    ran.keys()
        .filter(|k| !k.contains(" / "))
        .map(String::as_str)
        .collect()
}

/// The last 60 lines of an act log, for a failure message.
pub fn tail(log: &str) -> String {
    let t: Vec<&str> = log.lines().rev().take(60).collect();
    t.into_iter().rev().collect::<Vec<_>>().join("\n")
}
