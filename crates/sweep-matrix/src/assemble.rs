//! Row-level steps after generation: `--trim-conc` (§8), the canonical JSON
//! and `recipe-fingerprint` (§9), bucketing (§10.1) and the output-model
//! normalisation and closed-field check (§10.2).

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt::Write as _;
use sweep_model::python::dumps_like_python;
use sweep_model::rows::RowKind;

fn without(row: &Value, drop: &[&str]) -> Value {
    match row {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !drop.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// SHA-256 (lowercase hex) of the canonical JSON of the row without its
/// point-level fields.
pub fn recipe_fingerprint(row: &Value) -> String {
    let recipe = without(row, &["conc", "exp-name", "recipe-fingerprint"]);
    let digest = Sha256::digest(dumps_like_python(&recipe).as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

/// Identity of a curve: every field except the point-level ones, as a
/// mapping-order-insensitive string.
pub fn curve_key(row: &Value) -> String {
    dumps_like_python(&without(row, &["conc", "exp-name", "recipe-fingerprint"]))
}

/// Orders two `conc` values as Python would for ints (lists compare
/// lexicographically); anything else compares equal.
fn conc_cmp(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .partial_cmp(&y.as_f64())
            .unwrap_or(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = conc_cmp(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => Ordering::Equal,
    }
}

/// `--trim-conc`: multi-node rows keep `[min(conc)]`; other rows keep, per
/// group of rows equal except `conc`/`exp-name`, the one with the smallest
/// `conc` (earliest on ties). Order is preserved.
pub fn trim_conc(rows: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(rows.len());
    let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
    let mut group_order: Vec<String> = Vec::new();
    for mut row in rows {
        if matches!(
            kind_of(&row),
            RowKind::MultiNodeFixed | RowKind::MultiNodeAgentic
        ) {
            if let Some(Value::Array(conc)) = row.get_mut("conc")
                && conc.len() > 1
            {
                let min = conc
                    .iter()
                    .min_by(|a, b| conc_cmp(a, b))
                    .cloned()
                    .unwrap_or(Value::Null);
                *conc = vec![min];
            }
            out.push(row);
            continue;
        }
        let key = dumps_like_python(&without(&row, &["conc", "exp-name"]));
        let idxs = groups.entry(key.clone()).or_default();
        if idxs.is_empty() {
            group_order.push(key);
        }
        idxs.push(out.len());
        out.push(row);
    }
    let mut drop = vec![false; out.len()];
    for key in &group_order {
        let idxs = &groups[key];
        if idxs.len() < 2 {
            continue;
        }
        let mut keep = idxs[0];
        for &i in &idxs[1..] {
            if conc_cmp(&out[i]["conc"], &out[keep]["conc"]) == std::cmp::Ordering::Less {
                keep = i;
            }
        }
        for &i in idxs {
            if i != keep {
                drop[i] = true;
            }
        }
    }
    out.into_iter()
        .zip(drop)
        .filter_map(|(r, d)| (!d).then_some(r))
        .collect()
}

/// `1k1k`, `8k1k` or `<isl>_<osl>`.
pub fn seq_len_name(isl: &Value, osl: &Value) -> String {
    match (isl.as_i64(), osl.as_i64()) {
        (Some(1024), Some(1024)) => "1k1k".into(),
        (Some(8192), Some(1024)) => "8k1k".into(),
        _ => format!("{}_{}", py_scalar(isl), py_scalar(osl)),
    }
}

fn py_scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Output models (§10.2)

/// How a field is emitted.
#[derive(Clone, Copy)]
enum F {
    /// Required; must be present and non-null.
    Req(&'static str),
    /// Optional; dropped when absent or null.
    Opt(&'static str),
    /// Filled with a default when absent.
    Def(&'static str, fn() -> Value),
    /// A worker block (required).
    WorkerPool(&'static str),
}

fn v_false() -> Value {
    Value::Bool(false)
}
fn v_one() -> Value {
    Value::from(1)
}
fn v_none_str() -> Value {
    Value::String("none".into())
}
fn v_empty() -> Value {
    Value::Array(Vec::new())
}

const SN_FIXED: &[F] = &[
    F::Req("image"),
    F::Req("model"),
    F::Req("model-prefix"),
    F::Req("precision"),
    F::Req("framework"),
    F::Req("spec-decoding"),
    F::Req("runner"),
    F::Req("isl"),
    F::Req("osl"),
    F::Req("tp"),
    F::Req("pp"),
    F::Req("dcp-size"),
    F::Req("pcp-size"),
    F::Req("ep"),
    F::Req("dp-attn"),
    F::Req("conc"),
    F::Req("max-model-len"),
    F::Req("exp-name"),
    F::Req("disagg"),
    F::Req("run-eval"),
    F::Def("eval-only", v_false),
    F::Opt("router"),
    F::Opt("recipe-fingerprint"),
];

const MN_FIXED: &[F] = &[
    F::Req("image"),
    F::Req("model"),
    F::Req("model-prefix"),
    F::Req("precision"),
    F::Req("framework"),
    F::Req("spec-decoding"),
    F::Req("runner"),
    F::Req("isl"),
    F::Req("osl"),
    F::WorkerPool("prefill"),
    F::WorkerPool("decode"),
    F::Req("conc"),
    F::Req("max-model-len"),
    F::Req("exp-name"),
    F::Req("disagg"),
    F::Req("run-eval"),
    F::Def("eval-only", v_false),
    F::Opt("eval-conc"),
    F::Def("eval-all-concs", v_false),
    F::Opt("router"),
    F::Opt("kv-p2p-transfer"),
    F::Opt("recipe-fingerprint"),
];

const SN_AGENTIC: &[F] = &[
    F::Req("image"),
    F::Req("model"),
    F::Req("model-prefix"),
    F::Req("precision"),
    F::Req("framework"),
    F::Req("runner"),
    F::Req("tp"),
    F::Req("pp"),
    F::Req("dcp-size"),
    F::Req("pcp-size"),
    F::Req("ep"),
    F::Req("dp-attn"),
    F::Def("spec-decoding", v_none_str),
    F::Req("conc"),
    F::Req("kv-offloading"),
    F::Opt("kv-offload-backend"),
    F::Opt("router"),
    F::Req("total-cpu-dram-gb"),
    F::Req("duration"),
    F::Req("exp-name"),
    F::Req("scenario-type"),
    F::Opt("run-eval"),
    F::Opt("eval-only"),
    F::Opt("recipe-fingerprint"),
];

const MN_AGENTIC: &[F] = &[
    F::Req("image"),
    F::Req("model"),
    F::Req("model-prefix"),
    F::Req("precision"),
    F::Req("framework"),
    F::Req("spec-decoding"),
    F::Req("runner"),
    F::WorkerPool("prefill"),
    F::WorkerPool("decode"),
    F::Req("conc"),
    F::Req("kv-offloading"),
    F::Opt("kv-offload-backend"),
    F::Opt("router"),
    F::Opt("kv-p2p-transfer"),
    F::Req("total-cpu-dram-gb"),
    F::Req("duration"),
    F::Req("exp-name"),
    F::Req("disagg"),
    F::Req("scenario-type"),
    F::Opt("run-eval"),
    F::Opt("eval-only"),
    F::Opt("eval-conc"),
    F::Opt("recipe-fingerprint"),
];

const WORKER: &[F] = &[
    F::Req("num-worker"),
    F::Req("tp"),
    F::Def("pp", v_one),
    F::Def("dcp-size", v_one),
    F::Def("pcp-size", v_one),
    F::Req("ep"),
    F::Req("dp-attn"),
    F::Opt("hardware"),
    F::Def("additional-settings", v_empty),
];

/// The fields of the output model of a row kind (§10.2), in model order.
fn model_fields(kind: RowKind) -> &'static [F] {
    match kind {
        RowKind::SingleNodeFixed => SN_FIXED,
        RowKind::MultiNodeFixed => MN_FIXED,
        RowKind::SingleNodeAgentic => SN_AGENTIC,
        RowKind::MultiNodeAgentic => MN_AGENTIC,
    }
}

/// The reference's name of the output model of a row kind.
fn model_name(kind: RowKind) -> &'static str {
    match kind {
        RowKind::SingleNodeFixed => "SingleNodeMatrixEntry",
        RowKind::MultiNodeFixed => "MultiNodeMatrixEntry",
        RowKind::SingleNodeAgentic => "SingleNodeAgenticMatrixEntry",
        RowKind::MultiNodeAgentic => "MultiNodeAgenticMatrixEntry",
    }
}

/// The kind of a row (`sweep_model::rows::RowKind`, one detection rule).
fn kind_of(row: &Value) -> RowKind {
    RowKind::of_fields(|k| row.get(k))
}

/// What is wrong with one field of a row against its output model
/// (pydantic's wording, which the reference prints).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FieldProblem {
    /// The row or block is not an object.
    #[error("Input should be a valid dictionary")]
    NotAMapping,
    /// A required field is absent or null.
    #[error("Field required")]
    Required,
    /// A worker block is not an object.
    #[error("Input should be a valid dictionary or instance of WorkerConfig")]
    NotAWorker,
    /// A field the model does not have.
    #[error("Extra inputs are not permitted")]
    Extra,
}

/// One field of one row that its output model rejects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{loc}: {problem}")]
pub struct FieldError {
    /// Where: bucket, index, model and key path (`single_node.1k1k.0
    /// (SingleNodeMatrixEntry).tp`).
    pub loc: String,
    /// What.
    pub problem: FieldProblem,
}

/// Every row of an assembled matrix that its output model rejects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct AssembleError {
    /// The rejected fields, in row order.
    pub errors: Vec<FieldError>,
}

/// Rows the output model rejects: the check says no (exit 1).
impl sweep_cli::Classify for AssembleError {
    fn kind(&self) -> sweep_cli::Kind {
        sweep_cli::Kind::Rejected
    }
}

impl std::fmt::Display for AssembleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.errors.len();
        write!(
            f,
            "{n} validation error{} for ChangelogMatrixEntry",
            if n == 1 { "" } else { "s" }
        )?;
        for e in &self.errors {
            write!(f, "\n{e}")?;
        }
        Ok(())
    }
}

/// Re-emits `row` through its output model: model field order, defaults
/// filled in, nulls dropped. `loc` names the row in error messages.
///
/// # Errors
/// The first field the model rejects.
pub fn normalise_row(row: &Value, kind: RowKind, loc: &str) -> Result<Value, FieldError> {
    let Some(map) = row.as_object() else {
        return Err(FieldError {
            loc: loc.to_string(),
            problem: FieldProblem::NotAMapping,
        });
    };
    let model = model_name(kind);
    emit(map, model_fields(kind), &format!("{loc} ({model})"))
}

fn emit(map: &Map<String, Value>, fields: &[F], loc: &str) -> Result<Value, FieldError> {
    let err = |k: &str, problem| FieldError {
        loc: format!("{loc}.{k}"),
        problem,
    };
    let mut out = Map::new();
    for f in fields {
        match *f {
            F::Req(k) => match map.get(k) {
                Some(v) if !v.is_null() => {
                    out.insert(k.into(), v.clone());
                }
                _ => return Err(err(k, FieldProblem::Required)),
            },
            F::Opt(k) => {
                if let Some(v) = map.get(k).filter(|v| !v.is_null()) {
                    out.insert(k.into(), drop_nulls(v));
                }
            }
            F::Def(k, d) => match map.get(k) {
                Some(Value::Null) => {}
                Some(v) => {
                    out.insert(k.into(), v.clone());
                }
                None => {
                    out.insert(k.into(), d());
                }
            },
            F::WorkerPool(k) => match map.get(k) {
                Some(Value::Object(w)) => {
                    out.insert(k.into(), emit(w, WORKER, &format!("{loc}.{k}"))?);
                }
                _ => return Err(err(k, FieldProblem::NotAWorker)),
            },
        }
    }
    let known = |k: &str| {
        fields.iter().any(|f| match *f {
            F::Req(n) | F::Opt(n) | F::Def(n, _) | F::WorkerPool(n) => n == k,
        })
    };
    if let Some(extra) = map.keys().find(|k| !known(k)) {
        return Err(err(extra, FieldProblem::Extra));
    }
    Ok(Value::Object(out))
}

/// Nested metadata objects (router, kv-offload-backend) drop null members too.
fn drop_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Builds the final object: benchmark rows bucketed (§10.1), eval rows split
/// four ways, everything normalised (§10.2), metadata last.
///
/// # Errors
/// Every row field an output model rejects.
pub fn assemble(
    benchmark: &[Value],
    evals: &[Value],
    metadata: Value,
) -> Result<Value, AssembleError> {
    let mut single: Map<String, Value> = Map::new();
    let mut multi: Map<String, Value> = Map::new();
    let mut fail = Vec::new();
    for row in benchmark {
        let kind = kind_of(row);
        let (target, bucket) = match kind {
            RowKind::SingleNodeAgentic => (&mut single, "agentic".to_string()),
            RowKind::MultiNodeAgentic => (&mut multi, "agentic".to_string()),
            RowKind::MultiNodeFixed | RowKind::SingleNodeFixed => {
                let name = seq_len_name(
                    row.get("isl").unwrap_or(&Value::Null),
                    row.get("osl").unwrap_or(&Value::Null),
                );
                let t = if kind == RowKind::MultiNodeFixed {
                    &mut multi
                } else {
                    &mut single
                };
                (t, name)
            }
        };
        let side = if matches!(kind, RowKind::MultiNodeFixed | RowKind::MultiNodeAgentic) {
            "multi_node"
        } else {
            "single_node"
        };
        let list = target
            .entry(bucket.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(items) = list {
            let loc = format!("{side}.{bucket}.{}", items.len());
            match normalise_row(row, kind, &loc) {
                Ok(r) => items.push(r),
                Err(e) => fail.push(e),
            }
        }
    }
    let mut eval_buckets: [(&str, RowKind, Vec<Value>); 4] = [
        ("evals", RowKind::SingleNodeFixed, Vec::new()),
        ("agentic_evals", RowKind::SingleNodeAgentic, Vec::new()),
        ("multinode_evals", RowKind::MultiNodeFixed, Vec::new()),
        (
            "multinode_agentic_evals",
            RowKind::MultiNodeAgentic,
            Vec::new(),
        ),
    ];
    for row in evals {
        let kind = kind_of(row);
        if let Some((name, _, items)) = eval_buckets.iter_mut().find(|(_, k, _)| *k == kind) {
            let loc = format!("{name}.{}", items.len());
            match normalise_row(row, kind, &loc) {
                Ok(r) => items.push(r),
                Err(e) => fail.push(e),
            }
        }
    }
    if !fail.is_empty() {
        return Err(AssembleError { errors: fail });
    }
    let mut out = Map::new();
    out.insert("single_node".into(), Value::Object(single));
    out.insert("multi_node".into(), Value::Object(multi));
    for (name, _, items) in eval_buckets {
        out.insert(name.into(), Value::Array(items));
    }
    out.insert("changelog_metadata".into(), metadata);
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;
    use serde_json::json;

    #[test]
    fn fingerprint_ignores_point_fields_only() {
        let a = json!({"image": "i", "tp": 8, "conc": 4, "exp-name": "x"});
        let b = json!({"tp": 8, "image": "i", "conc": 64, "exp-name": "y"});
        let c = json!({"tp": 4, "image": "i", "conc": 4, "exp-name": "x"});
        assert_eq!(recipe_fingerprint(&a), recipe_fingerprint(&b));
        assert_ne!(recipe_fingerprint(&a), recipe_fingerprint(&c));
        // sha256('{"image":"i","tp":8}')
        assert_eq!(
            recipe_fingerprint(&a),
            format!("{:x}", Sha256::digest(br#"{"image":"i","tp":8}"#))
        );
    }

    #[test]
    fn trim_conc_keeps_minimum_per_recipe_and_order() {
        let rows = vec![
            json!({"tp": 8, "conc": 64, "exp-name": "a"}),
            json!({"tp": 4, "conc": 8, "exp-name": "b"}),
            json!({"tp": 8, "conc": 4, "exp-name": "c"}),
            json!({"tp": 4, "conc": 8, "exp-name": "d"}),
            json!({"prefill": {"tp": 1}, "conc": [32, 8, 16]}),
        ];
        let out = trim_conc(rows);
        assert_eq!(
            out,
            vec![
                json!({"tp": 4, "conc": 8, "exp-name": "b"}),
                json!({"tp": 8, "conc": 4, "exp-name": "c"}),
                json!({"prefill": {"tp": 1}, "conc": [8]}),
            ]
        );
    }

    #[test]
    fn seq_len_names() {
        assert_eq!(seq_len_name(&json!(1024), &json!(1024)), "1k1k");
        assert_eq!(seq_len_name(&json!(8192), &json!(1024)), "8k1k");
        assert_eq!(seq_len_name(&json!(1024), &json!(8192)), "1024_8192");
    }

    fn sn_row() -> Value {
        json!({"image": "i", "model": "m", "model-prefix": "p", "precision": "fp8",
               "framework": "f", "spec-decoding": "none", "runner": "r", "isl": 1024,
               "osl": 1024, "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1,
               "dp-attn": false, "conc": 4, "max-model-len": 2304, "exp-name": "e",
               "disagg": false, "run-eval": false})
    }

    #[test]
    fn normalisation_adds_defaults_and_rejects_extras() {
        let out = normalise_row(&sn_row(), RowKind::SingleNodeFixed, "x").unwrap();
        assert_eq!(out["eval-only"], json!(false));
        let mut extra = sn_row();
        extra["bogus"] = json!(1);
        let err = normalise_row(&extra, RowKind::SingleNodeFixed, "x").unwrap_err();
        assert_eq!(err.problem, FieldProblem::Extra);
        assert_eq!(
            err.to_string(),
            "x (SingleNodeMatrixEntry).bogus: Extra inputs are not permitted"
        );
        let worker = json!({"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": true, "hardware": null});
        let w = emit(worker.as_object().unwrap(), WORKER, "w").unwrap();
        assert_eq!(
            w,
            json!({"num-worker": 1, "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 8,
                   "dp-attn": true, "additional-settings": []})
        );
    }

    #[test]
    fn assemble_reports_every_rejected_row_under_one_count() {
        let mut missing = sn_row();
        missing.as_object_mut().unwrap().remove("tp");
        let mut extra = sn_row();
        extra["bogus"] = json!(1);
        let err = assemble(&[missing, extra], &[], json!({})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "2 validation errors for ChangelogMatrixEntry\n\
             single_node.1k1k.0 (SingleNodeMatrixEntry).tp: Field required\n\
             single_node.1k1k.0 (SingleNodeMatrixEntry).bogus: Extra inputs are not permitted"
        );
    }

    #[test]
    fn buckets_by_kind_and_sequence() {
        let mut agentic = sn_row();
        for k in ["isl", "osl", "max-model-len", "disagg", "run-eval"] {
            agentic.as_object_mut().unwrap().remove(k);
        }
        agentic["scenario-type"] = json!("agentic-coding");
        agentic["kv-offloading"] = json!("none");
        agentic["total-cpu-dram-gb"] = json!(0);
        agentic["duration"] = json!(3600);
        let out = assemble(&[sn_row(), agentic.clone()], &[agentic], json!({})).unwrap();
        assert_eq!(out["single_node"]["1k1k"].as_array().unwrap().len(), 1);
        assert_eq!(out["single_node"]["agentic"].as_array().unwrap().len(), 1);
        assert_eq!(out["agentic_evals"].as_array().unwrap().len(), 1);
        assert_eq!(out["multi_node"], json!({}));
    }
}
