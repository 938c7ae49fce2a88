//! The local dry run behind `check-changelog dry-run`: the legs a changelog
//! change will schedule, before it is pushed. It runs the gate
//! ([`gate::check_matrix`]), takes the matrix that gate generated (the one
//! `generate-matrix changelog` prints for the same range: no second
//! generator) and summarises its legs per runner type and bucket, with an
//! estimate of the GPU-hours they cost.
//!
//! One leg is one row of the matrix, that is one GPU job of the sweep (a
//! single-node row runs one concurrency, a multi-node row its whole `conc`
//! list). GPUs per leg are counted as the reference's jobs count them:
//! single node `tp × pp × pcp-size` (`GPU_COUNT` of `benchmark-tmpl.yml`),
//! multi-node the sum over prefill and decode of `num-worker × tp × pp ×
//! pcp-size` (`num_prefill_gpu + num_decode_gpu` of `process_result.py` and
//! `process_agentic_result.py`). The duration of a leg is an input; by
//! default each leg is charged its job's `timeout-minutes` in the reference
//! workflows, so the estimate is an upper bound.

use crate::gate::{self, GateOptions};
use crate::git::Repo;
use crate::pipeline::{self, Rejection};
use crate::runner_labels;
use serde_json::{Map, Value, json};
use sweep_matrix::assemble::seq_len_name;
use sweep_matrix::canary;
use sweep_matrix::legs::{FAMILIES, Kind, SplitError};
use sweep_model::config::ConfigEntry;
use sweep_model::rows::RowKind;

/// Minutes charged to a single-node leg by default: `timeout-minutes: 500`
/// of the reference's `benchmark-tmpl.yml` (also the default of sweepkit's
/// `run-sweep.yml` input `timeout-minutes`).
pub const DEFAULT_SINGLE_NODE_MINUTES: u32 = 500;
/// Minutes charged to a multi-node fixed-sequence leg by default: the 480 of
/// `benchmark-multinode-tmpl.yml`'s `timeout-minutes`.
pub const DEFAULT_MULTI_NODE_MINUTES: u32 = 480;
/// Minutes charged to a multi-node agentic leg by default: the 780 of
/// `benchmark-multinode-tmpl.yml`'s `timeout-minutes`.
pub const DEFAULT_MULTI_NODE_AGENTIC_MINUTES: u32 = 780;
/// Longest leg accepted by `--leg-minutes`: GitHub stops a self-hosted job
/// after 5 days (7 200 minutes), so a longer leg cannot be scheduled.
pub const MAX_LEG_MINUTES: u32 = 7200;

/// Why a dry run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DryRunError {
    /// The gate said no (the message as the gate words it).
    #[error("{0}")]
    Rejected(Rejection),
    /// The matrix is not shaped as the changelog matrix (a leg without a
    /// topology, a family that is not a list).
    #[error("the changelog matrix cannot be summarised: {0}")]
    Matrix(#[source] PlanError),
}

/// Why a changelog matrix cannot be planned: its shape (the message names
/// the leg, as `single_node.1k1k[3]`, and the field).
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("the matrix is not an object")]
    NotObject,
    #[error(transparent)]
    Canary(#[from] canary::CanaryError),
    #[error(transparent)]
    Family(#[from] SplitError),
    #[error("{at}: a matrix row is not an object")]
    RowNotObject { at: String },
    #[error("{at}: no {side} workers")]
    NoWorkers { at: String, side: &'static str },
    #[error("{at}: no integer {field}")]
    NoInteger { at: String, field: &'static str },
    #[error("{at}: {field} is not an integer")]
    NotInteger { at: String, field: &'static str },
}

/// One leg: where it sits in the matrix, its cost and the row itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Leg {
    /// Its list in the matrix: `single_node.8k1k`, `multi_node.agentic`,
    /// `evals`, …
    pub family: String,
    /// Summary row it counts in (see [`Group`]).
    pub group: Group,
    /// Config keys of the change that the row belongs to.
    pub configs: Vec<String>,
    pub topology: String,
    pub concurrencies: Vec<i64>,
    pub gpus: u64,
    pub minutes: u32,
    /// The leg the `canary` job would pick (run first when the PR carries a
    /// canary label).
    pub canary: bool,
    /// The row exactly as `generate-matrix changelog` emits it.
    pub row: Value,
}

/// A summary row's key: runner type and bucket (`single-node 8k1k`,
/// `multi-node agentic`); eval legs count in the bucket of their workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub runner: String,
    pub bucket: String,
}

/// One summary row.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub group: Group,
    pub legs: usize,
    pub eval_legs: usize,
    pub configs: Vec<String>,
    pub topologies: Vec<String>,
    pub concurrencies: Vec<i64>,
    /// The canary leg's topology and concurrency, when it is in this row.
    pub canary: Option<String>,
    /// Distinct GPU counts of its legs, ascending.
    pub gpus_per_leg: Vec<u64>,
    /// Σ gpus × minutes over its legs.
    pub gpu_minutes: u64,
}

/// The whole dry run.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub base_ref: String,
    pub head_ref: String,
    pub changelog_file: String,
    /// `--leg-minutes`, when given (else the per-kind defaults).
    pub leg_minutes: Option<u32>,
    pub legs: Vec<Leg>,
    pub summary: Vec<Summary>,
}

/// Refuses a head ref that is the checked-out commit while the working
/// tree's changelog differs from it: the plan reads the commit, so the edit
/// would be silently left out (or the gate would find "no additions").
fn uncommitted_changelog(repo: &Repo, opts: &GateOptions) -> Result<(), Rejection> {
    let path = &opts.changelog_file;
    let (Some(head), Some(checked_out)) = (repo.resolve(&opts.head_ref), repo.resolve("HEAD"))
    else {
        return Ok(()); // an unknown ref: the gate names it
    };
    if head != checked_out {
        return Ok(());
    }
    let Ok(committed) = repo.show(&head, path) else {
        return Ok(()); // the gate says it cannot be read
    };
    match sweep_model::fsio::read_bytes(
        &repo.dir().join(path),
        sweep_model::yaml::MAX_YAML_BYTES as u64,
    ) {
        Ok(work) if work != committed => Err(Rejection::new(format!(
            "{path} has uncommitted changes and the dry run reads the commit {}: commit first \
             (`git commit {path}`), then run the dry run again",
            opts.head_ref
        ))),
        _ => Ok(()),
    }
}

/// Runs the gate and plans the matrix it generated. Config names come from
/// the working-tree master configs the generation read.
pub fn run(
    repo: &Repo,
    gate_opts: &GateOptions,
    trim_conc: bool,
    leg_minutes: Option<u32>,
) -> Result<Plan, DryRunError> {
    uncommitted_changelog(repo, gate_opts).map_err(DryRunError::Rejected)?;
    let (_, matrix) =
        gate::check_matrix(repo, gate_opts, trim_conc).map_err(DryRunError::Rejected)?;
    // A leg on a label runners.yaml lacks would never start: the plan
    // refuses it (the gate only warns, unless --strict).
    let unknown = runner_labels::check(repo, &matrix).map_err(DryRunError::Rejected)?;
    if !unknown.is_empty() {
        let messages: Vec<String> = unknown
            .iter()
            .map(runner_labels::UnknownRunner::message)
            .collect();
        return Err(DryRunError::Rejected(Rejection::new(messages.join("\n"))));
    }
    let masters = pipeline::load_head_masters(repo).map_err(DryRunError::Rejected)?;
    let selected = runner_labels::selected_configs(&matrix, &masters.entries);
    // The plan reads the matrix as the leg workflow does: as printed.
    let printed = matrix
        .to_value()
        .map_err(|e| DryRunError::Rejected(Rejection::unreadable(e.to_string())))?;
    let mut plan = plan(&printed, &selected, leg_minutes).map_err(DryRunError::Matrix)?;
    plan.base_ref = gate_opts.base_ref.clone();
    plan.head_ref = gate_opts.head_ref.clone();
    plan.changelog_file = gate_opts.changelog_file.clone();
    Ok(plan)
}

/// Plans a changelog matrix: its legs in the order `generate-matrix
/// changelog` emits them, and one summary row per runner type and bucket
/// (in order of first appearance). `configs` name the rows (a row belongs
/// to the configs whose image, model, model prefix, precision, framework,
/// runner and node kind it carries).
pub fn plan(
    matrix: &Value,
    configs: &[&ConfigEntry],
    leg_minutes: Option<u32>,
) -> Result<Plan, PlanError> {
    let canary_row = canary::select(matrix)?.canary.into_iter().next();
    let mut canary_left = canary_row.is_some();
    let mut legs = Vec::new();
    for (family, rows) in families(matrix)? {
        for (i, row) in rows.iter().enumerate() {
            let at = format!("{family}[{i}]");
            // the canary job (split --without-canary) removes the first row equal to its pick from
            // single_node 1k1k and from 8k1k; the pick is the first of them.
            let canary = canary_left
                && (family == "single_node.1k1k" || family == "single_node.8k1k")
                && canary_row.as_ref() == Some(row);
            canary_left &= !canary;
            legs.push(leg(&family, row, canary, configs, leg_minutes, &at)?);
        }
    }
    let summary = summarise(&legs);
    Ok(Plan {
        base_ref: String::new(),
        head_ref: String::new(),
        changelog_file: String::new(),
        leg_minutes,
        legs,
        summary,
    })
}

/// The lists of legs with their family names, in output order: the
/// workflow's own family table, so the dry run shows the legs it runs.
fn families(matrix: &Value) -> Result<Vec<(String, &[Value])>, PlanError> {
    let Value::Object(top) = matrix else {
        return Err(PlanError::NotObject);
    };
    FAMILIES
        .iter()
        .map(|f| Ok((f.dotted(), f.rows(top)?)))
        .collect()
}

/// Whether the family (by its dotted name) holds eval-only legs.
fn is_eval(family: &str) -> bool {
    FAMILIES
        .iter()
        .any(|f| f.dotted() == family && matches!(f.kind, Kind::Eval | Kind::AgenticEval))
}

fn int(v: Option<&Value>) -> Option<u64> {
    match v {
        None => Some(1),
        Some(v) => v.as_u64(),
    }
}

/// `tp × pp × pcp-size` of a row or a multi-node worker side; `tp` is
/// required, the others default to 1.
fn side_gpus(side: &Value, at: &str) -> Result<u64, PlanError> {
    let tp = side
        .get("tp")
        .and_then(Value::as_u64)
        .ok_or_else(|| PlanError::NoInteger {
            at: at.to_string(),
            field: "tp",
        })?;
    let not_integer = |field| PlanError::NotInteger {
        at: at.to_string(),
        field,
    };
    let pp = int(side.get("pp")).ok_or_else(|| not_integer("pp"))?;
    let pcp = int(side.get("pcp-size")).ok_or_else(|| not_integer("pcp-size"))?;
    Ok(tp * pp * pcp)
}

/// TP/PP/DCP/PCP/EP/DPA of a row or worker side, named like the
/// reference's job names (`TP8/EP8/DPA`; sizes of 1 left out).
fn side_topology(side: &Value) -> String {
    let mut s = format!("TP{}", side.get("tp").map_or(Value::Null, Value::clone));
    for (key, label) in [
        ("pp", "PP"),
        ("dcp-size", "DCP"),
        ("pcp-size", "PCP"),
        ("ep", "EP"),
    ] {
        if let Some(v) = side.get(key).filter(|v| v.as_i64() != Some(1)) {
            s.push_str(&format!("/{label}{v}"));
        }
    }
    if side.get("dp-attn") == Some(&Value::Bool(true)) {
        s.push_str("/DPA");
    }
    s
}

fn text<'a>(row: &'a Value, key: &str) -> &'a str {
    row.get(key).and_then(Value::as_str).unwrap_or("")
}

fn leg(
    family: &str,
    row: &Value,
    canary: bool,
    configs: &[&ConfigEntry],
    leg_minutes: Option<u32>,
    at: &str,
) -> Result<Leg, PlanError> {
    let kind = RowKind::of(
        row.as_object()
            .ok_or_else(|| PlanError::RowNotObject { at: at.to_string() })?,
    );
    let multi = matches!(kind, RowKind::MultiNodeFixed | RowKind::MultiNodeAgentic);
    let agentic = matches!(kind, RowKind::SingleNodeAgentic | RowKind::MultiNodeAgentic);
    let (gpus, topology) = if multi {
        multi_node_shape(row, at)?
    } else {
        (side_gpus(row, at)?, side_topology(row))
    };
    let concurrencies = match row.get("conc") {
        Some(Value::Array(cs)) => cs.iter().filter_map(Value::as_i64).collect(),
        Some(c) => c.as_i64().into_iter().collect(),
        None => Vec::new(),
    };
    let bucket = if agentic {
        "agentic".to_string()
    } else {
        seq_len_name(
            row.get("isl").unwrap_or(&Value::Null),
            row.get("osl").unwrap_or(&Value::Null),
        )
    };
    let node = if multi { "multi-node" } else { "single-node" };
    let minutes = leg_minutes.unwrap_or(match (multi, agentic) {
        (false, _) => DEFAULT_SINGLE_NODE_MINUTES,
        (true, false) => DEFAULT_MULTI_NODE_MINUTES,
        (true, true) => DEFAULT_MULTI_NODE_AGENTIC_MINUTES,
    });
    Ok(Leg {
        family: family.to_string(),
        group: Group {
            runner: text(row, "runner").to_string(),
            bucket: format!("{node} {bucket}"),
        },
        configs: matching_configs(configs, row, multi),
        topology,
        concurrencies,
        gpus,
        minutes,
        canary,
        row: row.clone(),
    })
}

/// GPUs and topology (`<n>P(...) x <n>D(...)`) of a multi-node row, from
/// its prefill and decode workers.
fn multi_node_shape(row: &Value, at: &str) -> Result<(u64, String), PlanError> {
    let mut gpus = 0;
    let mut parts = Vec::new();
    for (side, letter) in [("prefill", "P"), ("decode", "D")] {
        let worker =
            row.get(side)
                .filter(|w| w.is_object())
                .ok_or_else(|| PlanError::NoWorkers {
                    at: at.to_string(),
                    side,
                })?;
        let at = format!("{at}.{side}");
        let n = worker
            .get("num-worker")
            .and_then(Value::as_u64)
            .ok_or_else(|| PlanError::NoInteger {
                at: at.clone(),
                field: "num-worker",
            })?;
        gpus += n * side_gpus(worker, &at)?;
        parts.push(format!("{n}{letter}({})", side_topology(worker)));
    }
    Ok((gpus, parts.join(" x ")))
}

/// Keys of the master configs a row was generated from (same image,
/// model, precision, framework, runner and node kind).
fn matching_configs(configs: &[&ConfigEntry], row: &Value, multi: bool) -> Vec<String> {
    configs
        .iter()
        .filter(|c| {
            c.image == text(row, "image")
                && c.model == text(row, "model")
                && c.model_prefix == text(row, "model-prefix")
                && c.precision == text(row, "precision")
                && c.framework == text(row, "framework")
                && c.runner == text(row, "runner")
                && c.multinode == multi
        })
        .map(|c| c.key.clone())
        .collect()
}

fn push_new<T: PartialEq + Clone>(list: &mut Vec<T>, items: &[T]) {
    for item in items {
        if !list.contains(item) {
            list.push(item.clone());
        }
    }
}

fn summarise(legs: &[Leg]) -> Vec<Summary> {
    let mut out: Vec<Summary> = Vec::new();
    for leg in legs {
        let i = match out.iter().position(|s| s.group == leg.group) {
            Some(i) => i,
            None => {
                out.push(Summary {
                    group: leg.group.clone(),
                    legs: 0,
                    eval_legs: 0,
                    configs: Vec::new(),
                    topologies: Vec::new(),
                    concurrencies: Vec::new(),
                    canary: None,
                    gpus_per_leg: Vec::new(),
                    gpu_minutes: 0,
                });
                out.len() - 1
            }
        };
        let s = &mut out[i];
        s.legs += 1;
        if is_eval(&leg.family) {
            s.eval_legs += 1;
        }
        push_new(&mut s.configs, &leg.configs);
        push_new(&mut s.topologies, std::slice::from_ref(&leg.topology));
        push_new(&mut s.concurrencies, &leg.concurrencies);
        push_new(&mut s.gpus_per_leg, &[leg.gpus]);
        if leg.canary {
            let conc = leg
                .concurrencies
                .first()
                .map_or(String::new(), |c| format!(" conc {c}"));
            s.canary = Some(format!("{}{conc}", leg.topology));
        }
        s.gpu_minutes += leg.gpus * u64::from(leg.minutes);
    }
    for s in &mut out {
        s.concurrencies.sort_unstable();
        s.gpus_per_leg.sort_unstable();
    }
    out
}

/// `1 leg`, `2 legs`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// GPU-minutes as GPU-hours with two decimals (for display and JSON).
pub fn gpu_hours(gpu_minutes: u64) -> f64 {
    (gpu_minutes as f64 / 60.0 * 100.0).round() / 100.0
}

impl Plan {
    /// Σ GPU-minutes of every leg.
    pub fn gpu_minutes(&self) -> u64 {
        self.summary.iter().map(|s| s.gpu_minutes).sum()
    }

    /// The JSON form (`--json`): the legs (each with the row exactly as
    /// `generate-matrix changelog` emits it, in its order) and the summary.
    pub fn to_json(&self) -> Value {
        let legs: Vec<Value> = self
            .legs
            .iter()
            .map(|l| {
                json!({
                    "family": l.family,
                    "runner": l.group.runner,
                    "bucket": l.group.bucket,
                    "configs": l.configs,
                    "topology": l.topology,
                    "gpus": l.gpus,
                    "minutes": l.minutes,
                    "gpu_hours": gpu_hours(l.gpus * u64::from(l.minutes)),
                    "canary": l.canary,
                    "row": l.row,
                })
            })
            .collect();
        let summary: Vec<Value> = self
            .summary
            .iter()
            .map(|s| {
                json!({
                    "runner": s.group.runner,
                    "bucket": s.group.bucket,
                    "legs": s.legs,
                    "eval_legs": s.eval_legs,
                    "configs": s.configs,
                    "topologies": s.topologies,
                    "concurrencies": s.concurrencies,
                    "canary": s.canary,
                    "gpus_per_leg": s.gpus_per_leg,
                    "gpu_hours": gpu_hours(s.gpu_minutes),
                })
            })
            .collect();
        let mut minutes = Map::new();
        match self.leg_minutes {
            Some(m) => {
                minutes.insert("every_leg".into(), m.into());
            }
            None => {
                minutes.insert("single_node".into(), DEFAULT_SINGLE_NODE_MINUTES.into());
                minutes.insert("multi_node".into(), DEFAULT_MULTI_NODE_MINUTES.into());
                minutes.insert(
                    "multi_node_agentic".into(),
                    DEFAULT_MULTI_NODE_AGENTIC_MINUTES.into(),
                );
            }
        }
        json!({
            "base_ref": self.base_ref,
            "head_ref": self.head_ref,
            "changelog_file": self.changelog_file,
            "leg_minutes": minutes,
            "legs": legs,
            "summary": summary,
            "total": {
                "legs": self.legs.len(),
                "eval_legs": self.summary.iter().map(|s| s.eval_legs).sum::<usize>(),
                "gpu_hours": gpu_hours(self.gpu_minutes()),
            },
        })
    }

    /// The plain-text table printed without `--json`.
    pub fn render(&self) -> String {
        let mut out = format!(
            "Dry run of {} from {} to {}: {}, {} GPU-hours\n\n",
            self.changelog_file,
            self.base_ref,
            self.head_ref,
            plural(self.legs.len(), "leg", "legs"),
            fmt_hours(self.gpu_minutes()),
        );
        if self.legs.is_empty() {
            out.push_str("The change schedules no legs.\n");
            return out;
        }
        let header = [
            "runner",
            "bucket",
            "legs",
            "configs",
            "topologies",
            "concurrencies",
            "evals",
            "canary",
            "GPUs/leg",
            "GPU-hours",
        ];
        let mut rows: Vec<Vec<String>> = self
            .summary
            .iter()
            .map(|s| {
                vec![
                    s.group.runner.clone(),
                    s.group.bucket.clone(),
                    s.legs.to_string(),
                    join(&s.configs),
                    join(&s.topologies),
                    join(&s.concurrencies),
                    s.eval_legs.to_string(),
                    s.canary.clone().unwrap_or_else(|| "-".into()),
                    join(&s.gpus_per_leg),
                    fmt_hours(s.gpu_minutes),
                ]
            })
            .collect();
        rows.push(vec![
            "total".into(),
            String::new(),
            self.legs.len().to_string(),
            String::new(),
            String::new(),
            String::new(),
            self.summary
                .iter()
                .map(|s| s.eval_legs)
                .sum::<usize>()
                .to_string(),
            String::new(),
            String::new(),
            fmt_hours(self.gpu_minutes()),
        ]);
        out.push_str(&table(&header, &rows));
        out.push('\n');
        match self.leg_minutes {
            Some(m) => out.push_str(&format!(
                "Every leg is charged {} (--leg-minutes).\n",
                plural(m as usize, "minute", "minutes")
            )),
            None => out.push_str(&format!(
                "Each leg is charged its job timeout in the reference workflows (an upper \
                 bound): single-node {DEFAULT_SINGLE_NODE_MINUTES} min, multi-node \
                 {DEFAULT_MULTI_NODE_MINUTES} min, multi-node agentic \
                 {DEFAULT_MULTI_NODE_AGENTIC_MINUTES} min; --leg-minutes N charges N instead.\n"
            )),
        }
        out.push_str(
            "GPUs/leg: tp x pp x pcp-size per worker, times num-worker on multi-node. The canary \
             leg runs first only with the full-sweep-enabled or full-sweep-fail-fast label.\n",
        );
        out
    }
}

fn join<T: ToString>(items: &[T]) -> String {
    if items.is_empty() {
        return "-".into();
    }
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn fmt_hours(gpu_minutes: u64) -> String {
    format!("{:.2}", gpu_hours(gpu_minutes))
}

/// A markdown pipe table, columns padded to their widest cell.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell(c).chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    out.push_str(&line(widths.iter().map(|w| "-".repeat(*w)).collect()));
    for row in rows {
        out.push_str(&line(row.iter().map(|c| cell(c)).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;

    fn single(isl: i64, tp: i64, conc: i64, extra: Value) -> Value {
        let mut row = json!({
            "image": "img", "model": "m", "model-prefix": "m", "precision": "fp8",
            "framework": "sglang", "runner": "b200", "isl": isl, "osl": 1024,
            "tp": tp, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": false,
            "conc": conc, "exp-name": "m", "disagg": false, "run-eval": false,
            "eval-only": false
        });
        if let (Value::Object(r), Value::Object(e)) = (&mut row, extra) {
            r.extend(e);
        }
        row
    }

    fn worker(n: i64, tp: i64, ep: i64, dpa: bool) -> Value {
        json!({"num-worker": n, "tp": tp, "pp": 1, "dcp-size": 1, "pcp-size": 1,
               "ep": ep, "dp-attn": dpa, "additional-settings": []})
    }

    fn matrix() -> Value {
        let multi = json!({
            "image": "img", "model": "m", "model-prefix": "m", "precision": "fp4",
            "framework": "dynamo-sglang", "runner": "gb200", "isl": 8192, "osl": 1024,
            "prefill": worker(1, 4, 4, true), "decode": worker(2, 8, 1, false),
            "conc": [64, 32], "exp-name": "m", "disagg": true, "run-eval": false
        });
        let mut multi_eval = multi.clone();
        multi_eval["run-eval"] = json!(true);
        json!({
            "single_node": {
                "1k1k": [single(1024, 4, 8, json!({})), single(1024, 4, 4, json!({}))],
                "8k1k": [single(8192, 2, 4, json!({"pp": 2, "pcp-size": 2}))]
            },
            "multi_node": {"8k1k": [multi]},
            "evals": [single(1024, 8, 16, json!({"run-eval": true, "dp-attn": true, "ep": 8}))],
            "agentic_evals": [],
            "multinode_evals": [multi_eval],
            "multinode_agentic_evals": [],
            "changelog_metadata": {}
        })
    }

    #[test]
    fn legs_keep_the_matrix_order_and_count_gpus_as_the_reference_jobs() {
        let m = matrix();
        let p = plan(&m, &[], None).unwrap();
        let families: Vec<&str> = p.legs.iter().map(|l| l.family.as_str()).collect();
        assert_eq!(
            families,
            [
                "single_node.1k1k",
                "single_node.1k1k",
                "single_node.8k1k",
                "multi_node.8k1k",
                "evals",
                "multinode_evals"
            ]
        );
        assert_eq!(p.legs[0].row, m["single_node"]["1k1k"][0]);
        let gpus: Vec<u64> = p.legs.iter().map(|l| l.gpus).collect();
        // tp; tp x pp x pcp-size; 1 x 4 prefill + 2 x 8 decode.
        assert_eq!(gpus, [4, 4, 8, 20, 8, 20]);
        let minutes: Vec<u32> = p.legs.iter().map(|l| l.minutes).collect();
        assert_eq!(minutes, [500, 500, 500, 480, 500, 480]);
        assert_eq!(p.legs[3].topology, "1P(TP4/EP4/DPA) x 2D(TP8)");
        assert_eq!(p.legs[2].topology, "TP2/PP2/PCP2");
        assert_eq!(p.legs[4].topology, "TP8/EP8/DPA");
    }

    #[test]
    fn the_canary_is_the_lowest_concurrency_fixed_single_node_leg() {
        let p = plan(&matrix(), &[], None).unwrap();
        let canary: Vec<usize> = (0..p.legs.len()).filter(|&i| p.legs[i].canary).collect();
        // 1k1k conc 4 (second leg) ties with 8k1k conc 4: the first wins.
        assert_eq!(canary, [1]);
        assert_eq!(p.summary[0].canary.as_deref(), Some("TP4 conc 4"));
        let mut none = matrix();
        none["single_node"] = json!({});
        let p = plan(&none, &[], None).unwrap();
        assert!(p.legs.iter().all(|l| !l.canary));
    }

    #[test]
    fn eval_legs_count_in_their_workload_bucket() {
        let p = plan(&matrix(), &[], Some(60)).unwrap();
        let rows: Vec<(&str, &str, usize, usize, u64)> = p
            .summary
            .iter()
            .map(|s| {
                (
                    s.group.runner.as_str(),
                    s.group.bucket.as_str(),
                    s.legs,
                    s.eval_legs,
                    s.gpu_minutes,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("b200", "single-node 1k1k", 3, 1, 16 * 60),
                ("b200", "single-node 8k1k", 1, 0, 8 * 60),
                ("gb200", "multi-node 8k1k", 2, 1, 40 * 60),
            ]
        );
        assert_eq!(p.summary[0].concurrencies, [4, 8, 16]);
        assert_eq!(p.summary[2].concurrencies, [32, 64]);
        assert_eq!(p.summary[0].gpus_per_leg, [4, 8]);
        assert_eq!(p.to_json()["total"]["gpu_hours"], json!(64.0));
    }

    #[test]
    fn a_leg_without_a_topology_is_an_error_naming_it() {
        let mut m = matrix();
        m["evals"][0].as_object_mut().unwrap().remove("tp");
        assert_eq!(
            plan(&m, &[], None).unwrap_err().to_string(),
            "evals[0]: no integer tp"
        );
        m["multi_node"]["8k1k"][0]["decode"] = Value::Null;
        assert_eq!(
            plan(&m, &[], None).unwrap_err().to_string(),
            "multi_node.8k1k[0]: no decode workers"
        );
    }

    #[test]
    fn a_plan_of_one_leg_says_1_leg_and_1_minute() {
        let m = json!({
            "single_node": {"1k1k": [single(1024, 4, 4, json!({}))]},
            "multi_node": {}, "evals": [], "agentic_evals": [], "multinode_evals": [],
            "multinode_agentic_evals": [], "changelog_metadata": {}
        });
        let text = plan(&m, &[], Some(1)).unwrap().render();
        assert!(text.contains(": 1 leg, 0.07 GPU-hours\n"), "{text}");
        assert!(
            text.contains("Every leg is charged 1 minute (--leg-minutes)."),
            "{text}"
        );
    }
}
