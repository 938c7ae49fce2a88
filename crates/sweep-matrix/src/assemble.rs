//! Row-level steps after generation, on typed rows ([`MatrixRow`]):
//! `--trim-conc` (§8), the canonical JSON and `recipe-fingerprint` (§9),
//! and the changelog matrix itself, bucketed (§10.1) and written through
//! the reference's output models (§10.2, [`AsMatrixEntry`]) when it is
//! serialised. The row set and its field types are the row types' own, so
//! no closed-field check is left to do here.

use serde::ser::SerializeMap as _;
use serde::{Serialize, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt::Write as _;
use sweep_model::changelog::ChangelogEntry;
use sweep_model::python::dumps_like_python;
use sweep_model::rows::{AsMatrixEntry, MatrixRow, RowKind};

/// The row's canonical JSON object without the fields in `drop`.
fn without(row: &MatrixRow, drop: &[&str]) -> Value {
    match row.to_value() {
        Value::Object(mut m) => {
            m.retain(|k, _| !drop.contains(&k.as_str()));
            Value::Object(m)
        }
        other => other,
    }
}

/// SHA-256 (lowercase hex) of the canonical JSON of the row without its
/// point-level fields.
pub fn recipe_fingerprint(row: &MatrixRow) -> String {
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
pub fn curve_key(row: &MatrixRow) -> String {
    dumps_like_python(&without(row, &["conc", "exp-name", "recipe-fingerprint"]))
}

/// `--trim-conc`: multi-node rows keep `[min(conc)]`; other rows keep, per
/// group of rows equal except `conc`/`exp-name`, the one with the smallest
/// `conc` (earliest on ties). Order is preserved.
pub fn trim_conc(rows: Vec<MatrixRow>) -> Vec<MatrixRow> {
    let mut out: Vec<MatrixRow> = Vec::with_capacity(rows.len());
    let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
    let mut group_order: Vec<String> = Vec::new();
    for mut row in rows {
        if let Some(conc) = row.multi_node_concs_mut() {
            if let Some(&min) = conc.iter().min() {
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
        let Some((&first, rest)) = idxs.split_first() else {
            continue;
        };
        let mut keep = first;
        for &i in rest {
            if out[i].concs() < out[keep].concs() {
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

/// `changelog_metadata`: the range and the entries the matrix was generated
/// from (and, for the manual entry, its command line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangelogMetadata {
    pub base_ref: String,
    pub head_ref: String,
    #[serde(serialize_with = "entries_json")]
    pub entries: Vec<ChangelogEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generate_command: Option<String>,
}

fn entries_json<S: Serializer>(entries: &[ChangelogEntry], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(entries.iter().map(ChangelogEntry::to_json))
}

/// Rows by bucket name, in order of first appearance.
pub type Buckets = Vec<(String, Vec<MatrixRow>)>;

/// The changelog matrix (the reference's `ChangelogMatrixEntry`): typed
/// rows until it is serialised, when every row is written through its
/// output model ([`AsMatrixEntry`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangelogMatrix {
    /// Single-node benchmark rows by `1k1k` / `8k1k` / `<isl>_<osl>` /
    /// `agentic`.
    #[serde(serialize_with = "buckets")]
    pub single_node: Buckets,
    /// Multi-node benchmark rows, bucketed the same way.
    #[serde(serialize_with = "buckets")]
    pub multi_node: Buckets,
    /// Single-node fixed-seq-len eval rows.
    #[serde(serialize_with = "entries")]
    pub evals: Vec<MatrixRow>,
    /// Single-node agentic eval rows.
    #[serde(serialize_with = "entries")]
    pub agentic_evals: Vec<MatrixRow>,
    /// Multi-node fixed-seq-len eval rows.
    #[serde(serialize_with = "entries")]
    pub multinode_evals: Vec<MatrixRow>,
    /// Multi-node agentic eval rows.
    #[serde(serialize_with = "entries")]
    pub multinode_agentic_evals: Vec<MatrixRow>,
    pub changelog_metadata: ChangelogMetadata,
}

fn entries<S: Serializer>(rows: &[MatrixRow], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(rows.iter().map(AsMatrixEntry))
}

fn buckets<S: Serializer>(buckets: &Buckets, s: S) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(buckets.len()))?;
    for (name, rows) in buckets {
        m.serialize_entry(name, &rows.iter().map(AsMatrixEntry).collect::<Vec<_>>())?;
    }
    m.end()
}

impl ChangelogMatrix {
    /// Every row, in output order (benchmark buckets, then the eval lists).
    pub fn rows(&self) -> impl Iterator<Item = &MatrixRow> {
        self.single_node
            .iter()
            .chain(&self.multi_node)
            .flat_map(|(_, rows)| rows)
            .chain(&self.evals)
            .chain(&self.agentic_evals)
            .chain(&self.multinode_evals)
            .chain(&self.multinode_agentic_evals)
    }

    /// The matrix as a JSON value (what `generate-matrix changelog` prints).
    ///
    /// # Errors
    /// A worker block that is not a worker: generated rows are checked as
    /// they are built (§10.2), so this names a broken row built by hand.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
}

/// The bucket of a benchmark row: `agentic`, or its sequence lengths.
fn bucket_name(row: &MatrixRow) -> String {
    match row.seq_len() {
        Some((isl, osl)) => seq_len_name(&Value::from(isl), &Value::from(osl)),
        None => "agentic".to_string(),
    }
}

/// Builds the changelog matrix: benchmark rows bucketed by node kind and
/// sequence (§10.1), eval rows split four ways by kind, metadata last.
#[must_use]
pub fn assemble(
    benchmark: Vec<MatrixRow>,
    evals: Vec<MatrixRow>,
    metadata: ChangelogMetadata,
) -> ChangelogMatrix {
    let mut matrix = ChangelogMatrix {
        single_node: Vec::new(),
        multi_node: Vec::new(),
        evals: Vec::new(),
        agentic_evals: Vec::new(),
        multinode_evals: Vec::new(),
        multinode_agentic_evals: Vec::new(),
        changelog_metadata: metadata,
    };
    for row in benchmark {
        let side = match row.kind() {
            RowKind::SingleNodeFixed | RowKind::SingleNodeAgentic => &mut matrix.single_node,
            RowKind::MultiNodeFixed | RowKind::MultiNodeAgentic => &mut matrix.multi_node,
        };
        let name = bucket_name(&row);
        match side.iter_mut().find(|(n, _)| *n == name) {
            Some((_, rows)) => rows.push(row),
            None => side.push((name, vec![row])),
        }
    }
    for row in evals {
        match row.kind() {
            RowKind::SingleNodeFixed => matrix.evals.push(row),
            RowKind::SingleNodeAgentic => matrix.agentic_evals.push(row),
            RowKind::MultiNodeFixed => matrix.multinode_evals.push(row),
            RowKind::MultiNodeAgentic => matrix.multinode_agentic_evals.push(row),
        }
    }
    matrix
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;
    use serde_json::json;

    fn row(v: Value) -> MatrixRow {
        MatrixRow::from_map(v.as_object().unwrap().clone()).unwrap()
    }

    fn sn(tp: i64, conc: i64, exp: &str) -> MatrixRow {
        row(
            json!({"image": "i", "model": "m", "model-prefix": "p", "precision": "fp8",
               "framework": "f", "spec-decoding": "none", "runner": "r", "isl": 1024,
               "osl": 1024, "tp": tp, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1,
               "dp-attn": false, "conc": conc, "max-model-len": 2304, "exp-name": exp,
               "disagg": false, "run-eval": false}),
        )
    }

    fn mn(conc: &[i64]) -> MatrixRow {
        let w = json!({"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": true, "pp": 1,
                       "dcp-size": 1, "pcp-size": 1});
        row(
            json!({"image": "i", "model": "m", "model-prefix": "p", "precision": "fp8",
               "framework": "f", "spec-decoding": "none", "runner": "r", "isl": 8192,
               "osl": 1024, "prefill": w, "decode": w, "conc": conc, "max-model-len": 2304,
               "exp-name": "e", "disagg": false, "run-eval": false}),
        )
    }

    fn agentic() -> MatrixRow {
        row(
            json!({"image": "i", "model": "m", "model-prefix": "p", "precision": "fp8",
               "framework": "f", "runner": "r", "tp": 8, "pp": 1, "dcp-size": 1,
               "pcp-size": 1, "ep": 1, "dp-attn": false, "spec-decoding": "none", "conc": 4,
               "kv-offloading": "none", "total-cpu-dram-gb": 0, "duration": 3600,
               "exp-name": "e", "scenario-type": "agentic-coding"}),
        )
    }

    #[test]
    fn fingerprint_ignores_point_fields_only() {
        let a = sn(8, 4, "x");
        let b = sn(8, 64, "y");
        let c = sn(4, 4, "x");
        assert_eq!(recipe_fingerprint(&a), recipe_fingerprint(&b));
        assert_ne!(recipe_fingerprint(&a), recipe_fingerprint(&c));
        let recipe = without(&a, &["conc", "exp-name"]);
        assert_eq!(
            recipe_fingerprint(&a),
            format!(
                "{:x}",
                Sha256::digest(dumps_like_python(&recipe).as_bytes())
            )
        );
        assert!(
            dumps_like_python(&recipe)
                .starts_with(r#"{"dcp-size":1,"disagg":false,"dp-attn":false,"#)
        );
    }

    #[test]
    fn trim_conc_keeps_minimum_per_recipe_and_order() {
        let rows = vec![
            sn(8, 64, "a"),
            sn(4, 8, "b"),
            sn(8, 4, "c"),
            sn(4, 8, "d"),
            mn(&[32, 8, 16]),
        ];
        assert_eq!(
            trim_conc(rows),
            vec![sn(4, 8, "b"), sn(8, 4, "c"), mn(&[8])]
        );
    }

    #[test]
    fn seq_len_names() {
        assert_eq!(seq_len_name(&json!(1024), &json!(1024)), "1k1k");
        assert_eq!(seq_len_name(&json!(8192), &json!(1024)), "8k1k");
        assert_eq!(seq_len_name(&json!(1024), &json!(8192)), "1024_8192");
    }

    fn metadata() -> ChangelogMetadata {
        ChangelogMetadata {
            base_ref: "b".into(),
            head_ref: "h".into(),
            entries: Vec::new(),
            generate_command: None,
        }
    }

    #[test]
    fn buckets_by_kind_and_sequence() {
        let m = assemble(
            vec![sn(8, 4, "e"), agentic(), mn(&[4])],
            vec![agentic()],
            metadata(),
        );
        let out = m.to_value().unwrap();
        assert_eq!(out["single_node"]["1k1k"].as_array().unwrap().len(), 1);
        assert_eq!(out["single_node"]["agentic"].as_array().unwrap().len(), 1);
        assert_eq!(out["multi_node"]["8k1k"].as_array().unwrap().len(), 1);
        assert_eq!(out["agentic_evals"].as_array().unwrap().len(), 1);
        assert_eq!(out["evals"], json!([]));
        assert_eq!(
            out["changelog_metadata"],
            json!({"base_ref": "b", "head_ref": "h", "entries": []})
        );
        let keys: Vec<&String> = out.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "single_node",
                "multi_node",
                "evals",
                "agentic_evals",
                "multinode_evals",
                "multinode_agentic_evals",
                "changelog_metadata"
            ]
        );
        assert_eq!(m.rows().count(), 4);
    }
}
