//! Eval selection (spec matrix.md §10): default marking, agentic marking,
//! `--all-evals` merging and eval-only filtering, applied to generated rows.

use std::collections::HashMap;

use serde_json::Value;
use sweep_model::python::{write_dumps_like_python, write_json_string_like_python};
use sweep_model::rows::RowKind;

use crate::row::{EvalMode, GenError, Row};

/// Smallest concurrency that can be an eval target (fixed and MN rows).
pub const MIN_EVAL_CONC: i64 = 16;

/// Fields left out of the topology key of a multi-node row.
const NON_TOPOLOGY: [&str; 6] = [
    "conc",
    "run-eval",
    "eval-only",
    "eval-conc",
    "eval-all-concs",
    "exp-name",
];

/// Every field of a multi-node row but the point-level and eval ones, in
/// sorted key order (Python's `json.dumps(..., sort_keys=True)` spelling).
fn topology_key(row: &Row) -> String {
    let value = row.to_value();
    let mut entries: Vec<(&str, &Value)> = value
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v))
        .filter(|(k, _)| !NON_TOPOLOGY.contains(k))
        .collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut out = String::with_capacity(512);
    out.push('{');
    for (k, v) in entries {
        write_json_string_like_python(k, &mut out);
        out.push(':');
        write_dumps_like_python(v, &mut out);
        out.push(',');
    }
    out
}

fn is_8k1k(row: &Row) -> bool {
    row.seq_len() == Some((8192, 1024))
}

/// What eval selection needs of one row: which
/// group the row competes in (by key) and with which concurrency.
enum Facts {
    /// Not an eval candidate in this mode.
    None,
    /// SN-fixed 8k1k with `conc` >= [`MIN_EVAL_CONC`]: its group key.
    SingleNodeFixed { key: String, conc: i64 },
    /// MN fixed 8k1k (or agentic when asked): its topology and best
    /// eligible concurrency (`None`: no eligible one, never marked).
    MultiNode {
        agentic: bool,
        topo: String,
        score: Option<i64>,
    },
    /// SN-agentic (when asked): its (model, runner, framework, precision).
    SingleNodeAgentic { key: String, conc: i64 },
}

/// A grouping key: the fields as one JSON array (distinct fields give
/// distinct keys).
fn group_key(fields: &impl serde::Serialize) -> String {
    serde_json::to_string(fields).unwrap_or_default()
}

fn facts_of(row: &Row, agentic: bool) -> Facts {
    match row {
        Row::SingleNodeFixed(r) if is_8k1k(row) && r.conc >= MIN_EVAL_CONC => {
            Facts::SingleNodeFixed {
                key: group_key(&(
                    &r.model,
                    &r.runner,
                    &r.framework,
                    &r.precision,
                    r.isl,
                    r.osl,
                    &r.spec_decoding,
                    r.dp_attn,
                )),
                conc: r.conc,
            }
        }
        Row::MultiNodeFixed(_) | Row::MultiNodeAgentic(_)
            if (row.kind() == RowKind::MultiNodeFixed && is_8k1k(row))
                || (row.kind() == RowKind::MultiNodeAgentic && agentic) =>
        {
            Facts::MultiNode {
                agentic: row.kind() == RowKind::MultiNodeAgentic,
                topo: topology_key(row),
                score: row
                    .concs()
                    .iter()
                    .copied()
                    .filter(|c| *c >= MIN_EVAL_CONC)
                    .max(),
            }
        }
        Row::SingleNodeAgentic(r) if agentic => Facts::SingleNodeAgentic {
            key: group_key(&(&r.model, &r.runner, &r.framework, &r.precision)),
            conc: r.conc,
        },
        _ => Facts::None,
    }
}

/// Marks eval rows (§10.1, and §10.2 when `agentic`); returns the marks and
/// the `eval-conc` to set per row.
fn mark(facts: &[Facts]) -> (Vec<bool>, Vec<Option<i64>>) {
    let n = facts.len();
    let mut marked = vec![false; n];
    let mut eval_conc = vec![None; n];
    // SN-fixed 8k1k: group, upper median and max of distinct eligible concs.
    let mut sn_groups: HashMap<&str, Vec<(usize, i64)>> = HashMap::new();
    let mut sn_order: Vec<&str> = Vec::new();
    // MN (fixed 8k1k, and agentic when asked): best score per topology.
    let mut mn_best: HashMap<(bool, &str), (i64, usize)> = HashMap::new();
    // SN-agentic: max conc per (model, runner, framework, precision).
    let mut sa_best: HashMap<&str, (i64, usize)> = HashMap::new();
    for (i, f) in facts.iter().enumerate() {
        match f {
            Facts::SingleNodeFixed { key, conc } => {
                let g = sn_groups.entry(key).or_default();
                if g.is_empty() {
                    sn_order.push(key);
                }
                g.push((i, *conc));
            }
            Facts::MultiNode {
                agentic,
                topo,
                score: Some(score),
            } => match mn_best.get(&(*agentic, topo.as_str())) {
                Some((best, _)) if best >= score => {}
                _ => {
                    mn_best.insert((*agentic, topo), (*score, i));
                }
            },
            Facts::SingleNodeAgentic { key, conc } => match sa_best.get(key.as_str()) {
                Some((best, _)) if best >= conc => {}
                _ => {
                    sa_best.insert(key, (*conc, i));
                }
            },
            Facts::MultiNode { score: None, .. } | Facts::None => {}
        }
    }
    for key in sn_order {
        let members = &sn_groups[key];
        let mut distinct: Vec<i64> = members.iter().map(|m| m.1).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let (Some(max), Some(median)) = (
            distinct.last().copied(),
            distinct.get(distinct.len() / 2).copied(),
        ) else {
            continue;
        };
        for &(i, c) in members {
            if c == max || c == median {
                marked[i] = true;
            }
        }
    }
    for (score, i) in mn_best.into_values() {
        marked[i] = true;
        eval_conc[i] = Some(score);
    }
    for (_, i) in sa_best.into_values() {
        marked[i] = true;
    }
    (marked, eval_conc)
}

fn sorted_distinct(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v.dedup();
    v
}

/// `--all-evals` expansion (§10.3).
fn expand_all(rows: Vec<Row>, mut topo: Vec<Option<String>>) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::with_capacity(rows.len());
    let mut merged: HashMap<(bool, String), usize> = HashMap::new();
    for (i, mut row) in rows.into_iter().enumerate() {
        let agentic = row.kind() == RowKind::MultiNodeAgentic;
        let merges = agentic || (row.kind() == RowKind::MultiNodeFixed && is_8k1k(&row));
        match &mut row {
            Row::SingleNodeAgentic(r) => r.run_eval = Some(true),
            Row::SingleNodeFixed(r) if r.isl == 8192 && r.osl == 1024 => r.run_eval = true,
            Row::MultiNodeFixed(_) | Row::MultiNodeAgentic(_) if merges => {
                let t = topo
                    .get_mut(i)
                    .and_then(Option::take)
                    .unwrap_or_else(|| topology_key(&row));
                let key = (agentic, t);
                if let Some(&at) = merged.get(&key) {
                    let kept = &mut out[at];
                    let union = sorted_distinct([kept.concs(), row.concs()].concat());
                    match kept {
                        Row::MultiNodeAgentic(k) => {
                            if let Some(m) = union.last() {
                                k.eval_conc = Some(*m);
                            }
                            k.conc = union;
                        }
                        Row::MultiNodeFixed(k) => k.conc = union,
                        Row::SingleNodeFixed(_) | Row::SingleNodeAgentic(_) => {}
                    }
                    continue;
                }
                let concs = sorted_distinct(row.concs().to_vec());
                match &mut row {
                    Row::MultiNodeAgentic(r) => {
                        r.run_eval = Some(true);
                        if let Some(m) = concs.last() {
                            r.eval_conc = Some(*m);
                        }
                        r.conc = concs;
                    }
                    Row::MultiNodeFixed(r) => {
                        r.run_eval = true;
                        r.eval_conc = None;
                        r.eval_all_concs = Some(true);
                        r.conc = concs;
                    }
                    Row::SingleNodeFixed(_) | Row::SingleNodeAgentic(_) => {}
                }
                merged.insert(key, out.len());
            }
            _ => {}
        }
        out.push(row);
    }
    out
}

/// Applies eval selection per mode.
///
/// # Errors
/// None today; the signature leaves room for a mode that can fail.
pub fn apply_evals(mut rows: Vec<Row>, mode: EvalMode) -> Result<Vec<Row>, GenError> {
    if mode != EvalMode::NoEvals {
        let agentic = matches!(mode, EvalMode::EvalsOnly | EvalMode::AllEvals);
        // What each row competes in (keys, topology, concurrency).
        let facts: Vec<Facts> = rows.iter().map(|r| facts_of(r, agentic)).collect();
        let (marked, eval_conc) = mark(&facts);
        for (i, row) in rows.iter_mut().enumerate() {
            if let Some(c) = eval_conc[i] {
                match row {
                    Row::MultiNodeFixed(r) => r.eval_conc = Some(c),
                    Row::MultiNodeAgentic(r) => r.eval_conc = Some(c),
                    Row::SingleNodeFixed(_) | Row::SingleNodeAgentic(_) => {}
                }
            }
            row.set_run_eval(marked[i]);
        }
        if mode == EvalMode::AllEvals {
            let topo = facts
                .into_iter()
                .map(|f| match f {
                    Facts::MultiNode { topo, .. } => Some(topo),
                    _ => None,
                })
                .collect();
            rows = expand_all(rows, topo);
        }
        if agentic {
            rows.retain(|r| r.run_eval() == Some(true));
            for r in &mut rows {
                r.set_eval_only(true);
            }
        }
    }
    // Rows were validated as they were built; eval selection only sets
    // typed eval fields, so they are not re-checked here.
    Ok(rows)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn sn(conc: i64, tp: i64) -> Row {
        let row = json!({"image":"i","model":"m","model-prefix":"p","precision":"fp8","framework":"f","runner":"r",
            "isl":8192,"osl":1024,"tp":tp,"pp":1,"dcp-size":1,"pcp-size":1,"conc":conc,"max-model-len":9472,
            "ep":1,"dp-attn":false,"spec-decoding":"none","exp-name":"p_8k1k","disagg":false,"run-eval":false});
        serde_json::from_value(row).unwrap()
    }

    #[test]
    fn sn_upper_median_and_max() {
        let rows: Vec<Row> = [4, 16, 32, 64, 100, 128, 256]
            .iter()
            .map(|c| sn(*c, 8))
            .chain([sn(100, 4)])
            .collect();
        let out = apply_evals(rows, EvalMode::Default).unwrap();
        let marked: Vec<i64> = out
            .iter()
            .filter(|r| r.run_eval() == Some(true))
            .map(|r| r.concs()[0])
            .collect();
        assert_eq!(marked, vec![100, 256, 100]);
        let only = apply_evals(out, EvalMode::EvalsOnly).unwrap();
        assert_eq!(only.len(), 3);
        assert!(
            only.iter()
                .all(|r| r.to_value()["eval-only"] == json!(true))
        );
    }

    /// The reference writes `run-eval` before `eval-conc` on a marked
    /// multi-node agentic row (its output model's field order).
    #[test]
    fn marked_multi_node_agentic_row_has_run_eval_before_eval_conc() {
        let worker = json!({"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": true,
            "pp": 1, "dcp-size": 1, "pcp-size": 1});
        let row: Row = serde_json::from_value(json!({"image":"i","model":"m","model-prefix":"p",
            "precision":"fp8","framework":"f","runner":"r","spec-decoding":"none",
            "prefill": worker, "decode": worker, "conc":[32], "kv-offloading":"none",
            "total-cpu-dram-gb":0, "duration":3600, "exp-name":"e", "disagg":false,
            "scenario-type":"agentic-coding"}))
        .unwrap();
        let out = apply_evals(vec![row], EvalMode::EvalsOnly).unwrap();
        let text = serde_json::to_string(&out[0]).unwrap();
        assert!(
            text.ends_with(
                r#""scenario-type":"agentic-coding","run-eval":true,"eval-conc":32,"eval-only":true}"#
            ),
            "{text}"
        );
    }

    #[test]
    fn no_evals_leaves_rows() {
        let out = apply_evals(vec![sn(4, 8)], EvalMode::NoEvals).unwrap();
        assert_eq!(out[0].run_eval(), Some(false));
    }

    #[test]
    fn canonical_sorts_keys() {
        assert_eq!(
            sweep_model::python::dumps_like_python(&json!({"b":1,"a":{"d":[1,2],"c":null}})),
            r#"{"a":{"c":null,"d":[1,2]},"b":1}"#
        );
    }
}
