//! Append-only sweeps (spec §6.4 scope rules, §7.3 delta): a PR may only
//! add generated points to existing curves of the configs and scenarios its
//! changelog entry names.

use crate::masters::RawMasters;
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap, HashSet};
use sweep_matrix::assemble::curve_key;
use sweep_model::python::dumps_like_python;
use sweep_model::python::{python_repr_list, python_repr_str};
use sweep_model::rows::MatrixRow;

/// Why an append-only entry is refused (§6.4 scope, §7.3 delta): config
/// keys and scenarios are quoted as the reference quotes them (`'a'`).
#[derive(Debug, thiserror::Error)]
pub enum AppendOnlyError {
    #[error(
        "append-only PR changed configs not selected by its changelog entry: {}",
        python_repr_list(.0.iter().map(|k| python_repr_str(k)))
    )]
    UnselectedConfigs(Vec<String>),
    #[error("append-only added or removed a scenario in config {}", python_repr_str(.0))]
    ScenarioSet(String),
    #[error(
        "append-only changed config-wide fields that can affect scenarios outside its \
         changelog scope: {}",
        python_repr_str(.0)
    )]
    ConfigWide(String),
    #[error(
        "append-only changed a scenario outside its changelog scope: {} / {}",
        python_repr_str(config),
        python_repr_str(scenario)
    )]
    OutsideScope { config: String, scenario: String },
    #[error(
        "append-only matrix entry has invalid concurrency value: {}",
        sweep_model::python::python_repr(.0)
    )]
    BadConcurrency(Value),
    #[error("append-only requires an existing curve in the base revision")]
    NoBaseCurve,
    #[error("append-only may not remove or modify existing generated recipes")]
    RemovedRecipes,
    #[error(
        "append-only may not remove existing concurrency points: {}",
        python_repr_list(.0.iter().map(i64::to_string))
    )]
    RemovedPoints(Vec<i64>),
    #[error("append-only did not add any generated points")]
    NothingAdded,
    #[error(
        "append-only additions must belong to an existing visual curve with \
         one unchanged non-null image"
    )]
    NotOnVisualCurve,
}

/// Checks that only selected configs/scenarios changed between the base and
/// head masters. `selected` maps config key → allowed scenario types, in
/// selection order.
pub fn validate_scope(
    base: &RawMasters<'_>,
    head: &RawMasters<'_>,
    selected: &[(String, BTreeSet<String>)],
) -> Result<(), AppendOnlyError> {
    let is_selected = |k: &str| selected.iter().any(|(s, _)| s == k);
    let mut unrelated: BTreeSet<&str> = BTreeSet::new();
    for k in base.keys().chain(head.keys()) {
        if !is_selected(k) && base.get(k) != head.get(k) {
            unrelated.insert(k);
        }
    }
    if !unrelated.is_empty() {
        return Err(AppendOnlyError::UnselectedConfigs(
            unrelated.into_iter().map(str::to_string).collect(),
        ));
    }
    let empty = Map::new();
    for (key, allowed) in selected {
        let (Some(b), Some(h)) = (base.get(key), head.get(key)) else {
            continue;
        };
        let scenarios = |v: &Value| -> Map<String, Value> {
            v.get("scenarios")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_else(|| empty.clone())
        };
        let (sb, sh) = (scenarios(b), scenarios(h));
        let kb: HashSet<&String> = sb.keys().collect();
        let kh: HashSet<&String> = sh.keys().collect();
        if kb != kh {
            return Err(AppendOnlyError::ScenarioSet(key.clone()));
        }
        let has_unselected = sb.keys().any(|s| !allowed.contains(s));
        let top = |v: &Value| -> Map<String, Value> {
            v.as_object()
                .map(|m| {
                    m.iter()
                        .filter(|(k, _)| k.as_str() != "scenarios")
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default()
        };
        if has_unselected && top(b) != top(h) {
            return Err(AppendOnlyError::ConfigWide(key.clone()));
        }
        for (scenario, value) in &sb {
            if !allowed.contains(scenario) && sh.get(scenario) != Some(value) {
                return Err(AppendOnlyError::OutsideScope {
                    config: key.clone(),
                    scenario: scenario.clone(),
                });
            }
        }
    }
    Ok(())
}

/// The row's points; a multi-node row without any is refused as the
/// reference refuses an empty list.
fn concurrencies(row: &MatrixRow) -> Result<&[i64], AppendOnlyError> {
    match row.concs() {
        [] => Err(AppendOnlyError::BadConcurrency(Value::Array(Vec::new()))),
        points => Ok(points),
    }
}

fn series_key(row: &Value) -> String {
    let get = |k: &str| row.get(k).cloned().unwrap_or(Value::Null);
    let agentic = row.get("scenario-type").and_then(Value::as_str) == Some("agentic-coding");
    let offload = match row.get("kv-offloading") {
        None | Some(Value::Null) => "off",
        Some(Value::String(s)) if s.is_empty() || s == "none" => "off",
        _ => "on",
    };
    let truthy = |v: &Value| match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    };
    let worker_hw = |k: &str| {
        row.get(k)
            .filter(|w| truthy(w))
            .and_then(|w| w.get("hardware"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let key = Value::Array(vec![
        get("model"),
        get("model-prefix"),
        get("precision"),
        get("framework"),
        get("runner"),
        Value::Bool(row.get("disagg").is_some_and(truthy)),
        Value::String(
            if agentic {
                "agentic_traces"
            } else {
                "single_turn"
            }
            .into(),
        ),
        if agentic { Value::Null } else { get("isl") },
        if agentic { Value::Null } else { get("osl") },
        Value::String(offload.into()),
        if agentic {
            Value::String(String::new())
        } else {
            row.get("spec-decoding")
                .cloned()
                .unwrap_or_else(|| Value::String("none".into()))
        },
        worker_hw("prefill"),
        worker_hw("decode"),
    ]);
    dumps_like_python(&key)
}

/// The rows of `head` that add points to base curves or add new curves,
/// rejecting any removal or modification of base points (§7.3).
pub fn delta(base: &[MatrixRow], head: &[MatrixRow]) -> Result<Vec<MatrixRow>, AppendOnlyError> {
    let (base_groups, base_order) = curve_points(base)?;
    let (head_groups, _) = curve_points(head)?;
    if base_groups.is_empty() {
        return Err(AppendOnlyError::NoBaseCurve);
    }
    if base_groups.keys().any(|k| !head_groups.contains_key(k)) {
        return Err(AppendOnlyError::RemovedRecipes);
    }
    for k in &base_order {
        let removed: BTreeSet<i64> = base_groups[k]
            .difference(&head_groups[k])
            .copied()
            .collect();
        if !removed.is_empty() {
            return Err(AppendOnlyError::RemovedPoints(
                removed.into_iter().collect(),
            ));
        }
    }
    let out = new_points(head, &base_groups);
    if out.is_empty() {
        return Err(AppendOnlyError::NothingAdded);
    }
    check_visual_curves(base, &out)?;
    Ok(out)
}

/// Concurrency points by curve key.
type CurvePoints = HashMap<String, HashSet<i64>>;

/// The concurrency points of each curve of `rows`, and the curves in
/// first-seen order.
fn curve_points(rows: &[MatrixRow]) -> Result<(CurvePoints, Vec<String>), AppendOnlyError> {
    let mut groups: CurvePoints = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for row in rows {
        let k = curve_key(row);
        let points = concurrencies(row)?;
        let set = groups.entry(k.clone()).or_insert_with(|| {
            order.push(k);
            HashSet::new()
        });
        set.extend(points.iter().copied());
    }
    Ok((groups, order))
}

/// The head rows cut down to the points their curve lacks in the base
/// (each point once), rows left with none dropped.
fn new_points(head: &[MatrixRow], base_groups: &CurvePoints) -> Vec<MatrixRow> {
    let mut out = Vec::new();
    let mut emitted: HashMap<String, HashSet<i64>> = HashMap::new();
    for row in head {
        let k = curve_key(row);
        let base_points = base_groups.get(&k);
        let is_new = |p: &i64| base_points.is_none_or(|b| !b.contains(p));
        let done = emitted.entry(k).or_default();
        let mut row = row.clone();
        match row.multi_node_concs_mut() {
            Some(points) => {
                points.retain(|p| is_new(p) && done.insert(*p));
                if !points.is_empty() {
                    out.push(row);
                }
            }
            None => {
                let p = row.concs().first().copied().unwrap_or(0);
                if is_new(&p) && done.insert(p) {
                    out.push(row);
                }
            }
        }
    }
    out
}

/// Every added row has an image, and it is the one image its visual
/// series has in the base.
fn check_visual_curves(base: &[MatrixRow], out: &[MatrixRow]) -> Result<(), AppendOnlyError> {
    let mut images: HashMap<String, BTreeSet<String>> = HashMap::new();
    for row in base.iter().map(MatrixRow::to_value) {
        images
            .entry(series_key(&row))
            .or_default()
            .insert(dumps_like_python(row.get("image").unwrap_or(&Value::Null)));
    }
    for row in out.iter().map(MatrixRow::to_value) {
        let image = row.get("image").unwrap_or(&Value::Null);
        let ok = !image.is_null()
            && images
                .get(&series_key(&row))
                .is_some_and(|set| set.len() == 1 && set.contains(&dumps_like_python(image)));
        if !ok {
            return Err(AppendOnlyError::NotOnVisualCurve);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;
    use serde_json::json;

    /// A single-node row for a number, a multi-node row for a list.
    fn row_tp(conc: Value, image: &str, tp: i64) -> MatrixRow {
        let mut v = json!({"image": image, "model": "m", "model-prefix": "p",
            "precision": "fp8", "framework": "f", "spec-decoding": "none", "runner": "r",
            "isl": 1024, "osl": 1024, "conc": conc, "max-model-len": 2304, "exp-name": "e",
            "disagg": false, "run-eval": false});
        let m = v.as_object_mut().unwrap();
        if m["conc"].is_array() {
            let w = json!({"num-worker": 1, "tp": tp, "ep": 1, "dp-attn": false, "pp": 1,
                           "dcp-size": 1, "pcp-size": 1});
            m.insert("prefill".into(), w.clone());
            m.insert("decode".into(), w);
        } else {
            for (k, x) in [
                ("tp", json!(tp)),
                ("pp", json!(1)),
                ("dcp-size", json!(1)),
                ("pcp-size", json!(1)),
                ("ep", json!(1)),
                ("dp-attn", json!(false)),
            ] {
                m.insert(k.into(), x);
            }
        }
        MatrixRow::from_map(m.clone()).unwrap()
    }

    fn row(conc: Value, image: &str) -> MatrixRow {
        row_tp(conc, image, 8)
    }

    #[test]
    fn delta_keeps_only_new_points() {
        let base = vec![row(json!(4), "i"), row(json!(8), "i")];
        let head = vec![row(json!(4), "i"), row(json!(8), "i"), row(json!(16), "i")];
        assert_eq!(delta(&base, &head).unwrap(), vec![row(json!(16), "i")]);
        let base = vec![row(json!([4, 8]), "i")];
        let head = vec![row(json!([4, 16, 8, 32]), "i")];
        assert_eq!(
            delta(&base, &head).unwrap(),
            vec![row(json!([16, 32]), "i")]
        );
    }

    #[test]
    fn delta_rejections() {
        let base = vec![row(json!(4), "i"), row(json!(8), "i")];
        assert!(
            delta(&base, &[row(json!(4), "i")])
                .unwrap_err()
                .to_string()
                .contains("[8]")
        );
        assert!(
            delta(&base, &base)
                .unwrap_err()
                .to_string()
                .contains("did not add")
        );
        assert!(
            delta(&[], &base)
                .unwrap_err()
                .to_string()
                .contains("existing curve")
        );
        let head = vec![row(json!(4), "j"), row(json!(8), "j")];
        assert!(
            delta(&base, &head)
                .unwrap_err()
                .to_string()
                .contains("remove or modify")
        );
        // A new recipe in a series whose image changed is refused.
        let extra = row_tp(json!(4), "j", 4);
        let head = vec![base[0].clone(), base[1].clone(), extra];
        assert!(
            delta(&base, &head)
                .unwrap_err()
                .to_string()
                .contains("visual curve")
        );
        assert!(
            delta(&[row(json!([]), "i")], &base)
                .unwrap_err()
                .to_string()
                .contains("invalid concurrency value: []")
        );
    }

    #[test]
    fn scope_rules() {
        let cfg = |tp: i64, agentic: i64| json!({"image": "i", "scenarios": {"fixed-seq-len": [{"tp": tp}], "agentic-coding": [{"tp": agentic}]}});
        let mk = |pairs: Vec<(&str, Value)>| -> Map<String, Value> {
            pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
        };
        let fixed_only: BTreeSet<String> = ["fixed-seq-len".to_string()].into();
        let sel = vec![("a".to_string(), fixed_only)];
        let base = mk(vec![("a", cfg(1, 1)), ("b", cfg(1, 1))]);
        let check = |head: Map<String, Value>| {
            validate_scope(
                &RawMasters::from_map(&base),
                &RawMasters::from_map(&head),
                &sel,
            )
        };
        assert!(check(mk(vec![("a", cfg(2, 1)), ("b", cfg(1, 1))])).is_ok());
        let e = check(mk(vec![("a", cfg(1, 1)), ("b", cfg(2, 1))]));
        assert_eq!(
            e.unwrap_err().to_string(),
            "append-only PR changed configs not selected by its changelog entry: ['b']"
        );
        let e = check(mk(vec![("a", cfg(1, 2)), ("b", cfg(1, 1))]));
        assert!(
            e.unwrap_err()
                .to_string()
                .contains("outside its changelog scope: 'a' / 'agentic-coding'")
        );
        let mut changed = cfg(1, 1);
        changed["image"] = json!("j");
        let e = check(mk(vec![("a", changed), ("b", cfg(1, 1))]));
        assert!(e.unwrap_err().to_string().contains("config-wide fields"));
    }
}
