//! Canary selection (`generate-matrix canary`, workflow.md §5): pick the one
//! single-node fixed-sequence row with the smallest concurrency to run before
//! the fan-out, and the search-space config without it.
//!
//! The reference does this with a jq program inside the workflow; the rules
//! mirrored here are jq's: candidates are `single_node["1k1k"]` then
//! `["8k1k"]` minus `run-eval: true` rows, `min_by(.conc)` keeps the first of
//! equal minima and compares with jq's total order, and the remaining config
//! always has `single_node` with both lists (absent ones become `[]`), the
//! first element deep-equal to the canary removed from each.

use std::cmp::Ordering;

use serde_json::{Map, Value};
use sweep_model::json_type::json_type_name;

/// Why a search-space config cannot be split.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CanaryError {
    #[error("search-space config is not valid JSON: {0}")]
    Json(String),
    #[error("search-space config must be a JSON object, found {0}")]
    NotObject(&'static str),
    #[error("search-space config: single_node must be an object, found {0}")]
    SingleNode(&'static str),
    #[error("search-space config: single_node[\"{0}\"] must be a list, found {1}")]
    Bucket(&'static str, &'static str),
}

/// The canary list (0 or 1 row) and the remaining search-space config.
#[derive(Debug, Clone, PartialEq)]
pub struct CanarySplit {
    pub canary: Vec<Value>,
    pub remaining: Value,
}

const BUCKETS: [&str; 2] = ["1k1k", "8k1k"];

/// Splits a search-space config as the canary part of `split` does.
///
/// The remaining config is a copy of `ssc` less the canary: a caller that
/// owns the config and needs no more of it saves that copy with
/// [`select_owned`], one that needs only the canary row with [`pick`].
pub fn select(ssc: &Value) -> Result<CanarySplit, CanaryError> {
    // Checked first, so a config that is refused is never copied.
    pick(ssc)?;
    select_owned(ssc.clone())
}

/// [`select`] on a config the caller gives up: the remaining config is
/// `ssc` itself with the canary taken out, no copy (the memory of `split`
/// and `canary` follows the config once, not three times).
pub fn select_owned(ssc: Value) -> Result<CanarySplit, CanaryError> {
    let canary = pick(&ssc)?;
    let Value::Object(mut top) = ssc else {
        return Err(CanaryError::NotObject(json_type_name(&ssc)));
    };
    // `.single_node // {}`: null (or false) counts as absent. Taking the
    // value leaves a null in its place, so the insert below keeps the key's
    // position (a key that was absent is appended, as before).
    let mut single = match top.get_mut("single_node").map(Value::take) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    for b in BUCKETS {
        let mut list = match single.get_mut(b).map(Value::take) {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        };
        if let Some(c) = canary.first()
            && let Some(i) = list.iter().position(|r| jq_cmp(r, c) == Ordering::Equal)
        {
            list.remove(i);
        }
        single.insert(b.to_string(), Value::Array(list));
    }
    top.insert("single_node".into(), Value::Object(single));
    Ok(CanarySplit {
        canary,
        remaining: Value::Object(top),
    })
}

/// The canary row alone (an empty list when there is none), checking the
/// config's shape as [`select`] does; nothing but that row is copied.
pub fn pick(ssc: &Value) -> Result<Vec<Value>, CanaryError> {
    let Value::Object(top) = ssc else {
        return Err(CanaryError::NotObject(json_type_name(ssc)));
    };
    // `.single_node // {}`: null (or false) counts as absent.
    let single = match top.get("single_node") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Object(m)) => Some(m),
        Some(other) => return Err(CanaryError::SingleNode(json_type_name(other))),
    };
    let mut lists: Vec<&[Value]> = Vec::with_capacity(2);
    for b in BUCKETS {
        lists.push(match single.and_then(|m| m.get(b)) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => &[],
            Some(Value::Array(a)) => a,
            Some(other) => return Err(CanaryError::Bucket(b, json_type_name(other))),
        });
    }
    let mut canary: Option<&Value> = None;
    for row in lists.into_iter().flatten() {
        if row.get("run-eval") == Some(&Value::Bool(true)) {
            continue;
        }
        let conc = row.get("conc").unwrap_or(&Value::Null);
        let better = canary
            .is_none_or(|c| jq_cmp(conc, c.get("conc").unwrap_or(&Value::Null)) == Ordering::Less);
        if better {
            canary = Some(row);
        }
    }
    Ok(canary.cloned().into_iter().collect())
}

/// Parses the config text first (the workflow hands it over as a string).
pub fn select_str(text: &str) -> Result<CanarySplit, CanaryError> {
    let v: Value = serde_json::from_str(text).map_err(|e| CanaryError::Json(e.to_string()))?;
    select_owned(v)
}

fn rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(false) => 1,
        Value::Bool(true) => 2,
        Value::Number(_) => 3,
        Value::String(_) => 4,
        Value::Array(_) => 5,
        Value::Object(_) => 6,
    }
}

/// jq's total order: null < false < true < numbers < strings < arrays <
/// objects; arrays lexicographically; objects by sorted key list, then by
/// values in key order. Numbers compare by value (`4 == 4.0`, as in jq).
fn jq_cmp(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = jq_cmp(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut kx: Vec<&String> = x.keys().collect();
            let mut ky: Vec<&String> = y.keys().collect();
            kx.sort();
            ky.sort();
            let o = kx.cmp(&ky);
            if o != Ordering::Equal {
                return o;
            }
            for k in kx {
                let o = jq_cmp(&x[k], &y[k]);
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use serde_json::json;

    fn row(tp: u64, conc: u64) -> Value {
        json!({"runner": "b200", "tp": tp, "conc": conc, "run-eval": false, "isl": 8192})
    }

    /// The qwen sweep of workflow.md §2/§5: canary is TP4 c4 (the first of
    /// the two c4 rows), remaining 8k1k holds the six TP2 rows, 1k1k is `[]`.
    #[test]
    fn qwen_sweep_picks_first_smallest_conc() {
        let rows8k: Vec<Value> = std::iter::once(row(4, 4))
            .chain([4, 8, 16, 32, 64, 128].map(|c| row(2, c)))
            .collect();
        let ssc = json!({
            "single_node": {"8k1k": rows8k},
            "multi_node": {},
            "evals": [{"tp": 2, "conc": 64, "run-eval": true}],
            "changelog_metadata": {"entries": []}
        });
        let s = select(&ssc).unwrap();
        assert_eq!(s.canary, vec![row(4, 4)]);
        let rem = &s.remaining["single_node"];
        assert_eq!(rem["1k1k"], json!([]));
        let left: Vec<(u64, u64)> = rem["8k1k"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["tp"].as_u64().unwrap(), r["conc"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            left,
            vec![(2, 4), (2, 8), (2, 16), (2, 32), (2, 64), (2, 128)]
        );
        // Other buckets untouched.
        assert_eq!(s.remaining["evals"], ssc["evals"]);
        assert_eq!(s.remaining["multi_node"], json!({}));
    }

    #[test]
    fn one_k_rows_come_first_on_ties_and_eval_rows_never_qualify() {
        let mut eval = row(8, 1);
        eval["run-eval"] = json!(true);
        let ssc = json!({"single_node": {
            "8k1k": [row(2, 2)],
            "1k1k": [eval.clone(), row(1, 2), row(3, 2)],
        }});
        let s = select(&ssc).unwrap();
        assert_eq!(s.canary, vec![row(1, 2)]);
        assert_eq!(s.remaining["single_node"]["1k1k"], json!([eval, row(3, 2)]));
        assert_eq!(s.remaining["single_node"]["8k1k"], json!([row(2, 2)]));
    }

    #[test]
    fn only_the_first_equal_row_is_removed_from_each_bucket() {
        let ssc = json!({"single_node": {"1k1k": [row(1, 1), row(1, 1)], "8k1k": [row(1, 1)]}});
        let s = select(&ssc).unwrap();
        assert_eq!(s.remaining["single_node"]["1k1k"], json!([row(1, 1)]));
        // jq removes the first equal element from 8k1k too.
        assert_eq!(s.remaining["single_node"]["8k1k"], json!([]));
    }

    #[test]
    fn no_candidates_gives_empty_canary_and_forces_single_node() {
        let ssc = json!({"multi_node": {"1k1k": [row(1, 1)]}, "evals": []});
        let s = select(&ssc).unwrap();
        assert!(s.canary.is_empty());
        assert_eq!(s.remaining["single_node"], json!({"1k1k": [], "8k1k": []}));
        assert_eq!(s.remaining["multi_node"], ssc["multi_node"]);
        // Agentic rows are never candidates but are kept.
        let ssc = json!({"single_node": {"agentic": [row(1, 1)], "1k1k": null}});
        let s = select(&ssc).unwrap();
        assert!(s.canary.is_empty());
        assert_eq!(s.remaining["single_node"]["agentic"], json!([row(1, 1)]));
        assert_eq!(s.remaining["single_node"]["1k1k"], json!([]));
    }

    #[test]
    fn conc_compares_numerically_not_textually() {
        let ssc = json!({"single_node": {"1k1k": [row(1, 16), row(1, 4), row(1, 128)]}});
        assert_eq!(select(&ssc).unwrap().canary, vec![row(1, 4)]);
    }

    #[test]
    fn malformed_configs_are_rejected_with_the_key_path() {
        assert_eq!(
            select(&json!([])).unwrap_err(),
            CanaryError::NotObject("an array")
        );
        assert_eq!(
            select(&json!({"single_node": []})).unwrap_err(),
            CanaryError::SingleNode("an array")
        );
        let e = select(&json!({"single_node": {"8k1k": {}}})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "search-space config: single_node[\"8k1k\"] must be a list, found an object"
        );
        assert!(matches!(select_str("{"), Err(CanaryError::Json(_))));
    }
}
