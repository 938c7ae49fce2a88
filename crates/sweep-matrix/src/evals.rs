//! Eval selection (spec matrix.md §10): default marking, agentic marking,
//! `--all-evals` merging and eval-only filtering, applied to generated rows.

use std::collections::HashMap;

use serde_json::Value;
use sweep_model::python::{
    dumps_like_python, write_dumps_like_python, write_json_string_like_python,
};
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

fn topology_key(row: &Row) -> String {
    let mut entries: Vec<(&str, &Value)> = row
        .iter()
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
    row.get("isl").and_then(Value::as_i64) == Some(8192)
        && row.get("osl").and_then(Value::as_i64) == Some(1024)
}

fn conc_list(row: &Row) -> Vec<i64> {
    match row.get("conc") {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_i64).collect(),
        Some(v) => v.as_i64().into_iter().collect(),
        None => Vec::new(),
    }
}

fn field(row: &Row, k: &str) -> String {
    row.get(k).map(dumps_like_python).unwrap_or_default()
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

fn facts_of(row: &Row, agentic: bool) -> Facts {
    let key = |fields: &[&str]| {
        fields
            .iter()
            .map(|k| field(row, k))
            .collect::<Vec<_>>()
            .join("\u{1}")
    };
    match RowKind::of(row) {
        RowKind::SingleNodeFixed if is_8k1k(row) => match row.get("conc").and_then(Value::as_i64) {
            Some(conc) if conc >= MIN_EVAL_CONC => Facts::SingleNodeFixed {
                key: key(&[
                    "model",
                    "runner",
                    "framework",
                    "precision",
                    "isl",
                    "osl",
                    "spec-decoding",
                    "dp-attn",
                ]),
                conc,
            },
            _ => Facts::None,
        },
        kind @ (RowKind::MultiNodeFixed | RowKind::MultiNodeAgentic)
            if (kind == RowKind::MultiNodeFixed && is_8k1k(row))
                || (kind == RowKind::MultiNodeAgentic && agentic) =>
        {
            Facts::MultiNode {
                agentic: kind == RowKind::MultiNodeAgentic,
                topo: topology_key(row),
                score: conc_list(row)
                    .into_iter()
                    .filter(|c| *c >= MIN_EVAL_CONC)
                    .max(),
            }
        }
        RowKind::SingleNodeAgentic if agentic => match row.get("conc").and_then(Value::as_i64) {
            Some(conc) => Facts::SingleNodeAgentic {
                key: key(&["model", "runner", "framework", "precision"]),
                conc,
            },
            None => Facts::None,
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
        let kind = RowKind::of(&row);
        match kind {
            RowKind::SingleNodeAgentic => {
                row.insert("run-eval".into(), true.into());
                out.push(row);
            }
            RowKind::MultiNodeAgentic | RowKind::MultiNodeFixed
                if kind == RowKind::MultiNodeAgentic || is_8k1k(&row) =>
            {
                let agentic = kind == RowKind::MultiNodeAgentic;
                let t = topo
                    .get_mut(i)
                    .and_then(Option::take)
                    .unwrap_or_else(|| topology_key(&row));
                let key = (agentic, t);
                if let Some(&at) = merged.get(&key) {
                    let kept = &mut out[at];
                    let mut union = conc_list(kept);
                    union.extend(conc_list(&row));
                    let union = sorted_distinct(union);
                    if agentic && let Some(m) = union.last() {
                        kept.insert("eval-conc".into(), (*m).into());
                    }
                    kept.insert("conc".into(), union.into());
                } else {
                    let concs = sorted_distinct(conc_list(&row));
                    row.insert("run-eval".into(), true.into());
                    if agentic {
                        if let Some(m) = concs.last() {
                            row.insert("eval-conc".into(), (*m).into());
                        }
                    } else {
                        row.remove("eval-conc");
                        row.insert("eval-all-concs".into(), true.into());
                    }
                    row.insert("conc".into(), concs.into());
                    merged.insert(key, out.len());
                    out.push(row);
                }
            }
            RowKind::SingleNodeFixed if is_8k1k(&row) => {
                row.insert("run-eval".into(), true.into());
                out.push(row);
            }
            _ => out.push(row),
        }
    }
    out
}

/// Applies eval selection per mode, then re-validates every final row.
///
/// # Errors
/// A final row that fails its schema (cannot happen for valid configs).
pub fn apply_evals(mut rows: Vec<Row>, mode: EvalMode) -> Result<Vec<Row>, GenError> {
    if mode != EvalMode::NoEvals {
        let agentic = matches!(mode, EvalMode::EvalsOnly | EvalMode::AllEvals);
        // What each row competes in (keys, topology, concurrency).
        let facts: Vec<Facts> = rows.iter().map(|r| facts_of(r, agentic)).collect();
        let (marked, eval_conc) = mark(&facts);
        for (i, row) in rows.iter_mut().enumerate() {
            if let Some(c) = eval_conc[i] {
                row.insert("eval-conc".into(), c.into());
            }
            row.insert("run-eval".into(), marked[i].into());
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
            rows.retain(|r| r.get("run-eval") == Some(&Value::Bool(true)));
            for r in &mut rows {
                r.insert("eval-only".into(), true.into());
            }
        }
    }
    // Rows were validated as they were built; eval selection only adds
    // typed eval fields, so they are not re-checked here.
    Ok(rows)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn sn(conc: i64, tp: i64) -> Row {
        json!({"image":"i","model":"m","model-prefix":"p","precision":"fp8","framework":"f","runner":"r",
            "isl":8192,"osl":1024,"tp":tp,"pp":1,"dcp-size":1,"pcp-size":1,"conc":conc,"max-model-len":9472,
            "ep":1,"dp-attn":false,"spec-decoding":"none","exp-name":"p_8k1k","disagg":false,"run-eval":false})
        .as_object()
        .unwrap()
        .clone()
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
            .filter(|r| r["run-eval"] == json!(true))
            .map(|r| r["conc"].as_i64().unwrap())
            .collect();
        assert_eq!(marked, vec![100, 256, 100]);
        let only = apply_evals(out, EvalMode::EvalsOnly).unwrap();
        assert_eq!(only.len(), 3);
        assert!(only.iter().all(|r| r["eval-only"] == json!(true)));
    }

    #[test]
    fn no_evals_leaves_rows() {
        let out = apply_evals(vec![sn(4, 8)], EvalMode::NoEvals).unwrap();
        assert_eq!(out[0]["run-eval"], json!(false));
    }

    #[test]
    fn canonical_sorts_keys() {
        assert_eq!(
            dumps_like_python(&json!({"b":1,"a":{"d":[1,2],"c":null}})),
            r#"{"a":{"c":null,"d":[1,2]},"b":1}"#
        );
    }
}
