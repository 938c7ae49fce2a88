//! Matrix rows: the four row kinds of spec matrix.md §9 as strict types.
//!
//! The generator builds rows as [`MatrixRow`]s (ordered fields, no hashing)
//! and checks each one with [`validate_matrix_row`] before anything is
//! printed: closed field set, exact types (no coercion, no defaults for
//! required fields) and the row rules of §8.5. JSON objects are checked the
//! same way by [`validate_row`]. Downstream tools can deserialize rows into
//! these types too.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Kind of a matrix row (§9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// Single-node fixed-seq-len.
    SnFixed,
    /// Multi-node fixed-seq-len.
    MnFixed,
    /// Single-node agentic.
    SnAgentic,
    /// Multi-node agentic.
    MnAgentic,
}

impl RowKind {
    /// Detects the kind the way downstream consumers do: multi-node iff
    /// `prefill` is present, agentic iff `scenario-type` is `agentic-coding`.
    #[must_use]
    pub fn of(row: &Map<String, Value>) -> Self {
        Self::of_fields(|k| row.get(k))
    }

    /// [`RowKind::of`] for a row given by a field lookup.
    #[must_use]
    pub fn of_fields<'a>(get: impl Fn(&str) -> Option<&'a Value>) -> Self {
        let mn = get("prefill").is_some_and(|v| !v.is_null());
        let agentic = get("scenario-type").and_then(Value::as_str) == Some("agentic-coding");
        match (mn, agentic) {
            (false, false) => RowKind::SnFixed,
            (true, false) => RowKind::MnFixed,
            (false, true) => RowKind::SnAgentic,
            (true, true) => RowKind::MnAgentic,
        }
    }
}

/// A matrix row as the generator builds it: fields in insertion order (the
/// order of the reference's dicts, which is the output order), looked up
/// by a linear scan. Rows have about twenty short keys, so a scan costs
/// less than hashing the key; generator keys are `&'static str`, so
/// building a row allocates no key. Serializes as a JSON object; behaves
/// like `serde_json::Map` with `preserve_order` (insert keeps an existing
/// key's position, remove moves the last field into the gap).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MatrixRow {
    fields: Vec<(Cow<'static, str>, Value)>,
}

impl MatrixRow {
    /// An empty row with room for `n` fields.
    #[must_use]
    pub fn with_capacity(n: usize) -> Self {
        MatrixRow {
            fields: Vec::with_capacity(n),
        }
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.fields.iter().position(|(k, _)| k == key)
    }

    /// The value of a field.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.position(key).map(|i| &self.fields[i].1)
    }

    /// The value of a field, to change in place.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.position(key).map(|i| &mut self.fields[i].1)
    }

    /// Sets a field: in place if present (returning the old value), else
    /// appended.
    pub fn insert(&mut self, key: impl Into<Cow<'static, str>>, value: Value) -> Option<Value> {
        let key = key.into();
        match self.position(&key) {
            Some(i) => Some(std::mem::replace(&mut self.fields[i].1, value)),
            None => {
                self.fields.push((key, value));
                None
            }
        }
    }

    /// Removes a field; the last field takes its place (as
    /// `serde_json::Map::remove` with `preserve_order`).
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.position(key).map(|i| self.fields.swap_remove(i).1)
    }

    /// Fields in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.fields.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// Number of fields.
    #[must_use]
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether the row has no fields.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The row's kind ([`RowKind::of`]).
    #[must_use]
    pub fn kind(&self) -> RowKind {
        RowKind::of_fields(|k| self.get(k))
    }

    /// The row as a JSON object, fields in order.
    #[must_use]
    pub fn into_map(self) -> Map<String, Value> {
        self.fields
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v))
            .collect()
    }
}

impl From<Map<String, Value>> for MatrixRow {
    fn from(m: Map<String, Value>) -> Self {
        MatrixRow {
            fields: m.into_iter().map(|(k, v)| (Cow::Owned(k), v)).collect(),
        }
    }
}

impl From<MatrixRow> for Value {
    fn from(r: MatrixRow) -> Self {
        Value::Object(r.into_map())
    }
}

impl std::ops::Index<&str> for MatrixRow {
    type Output = Value;

    /// The field's value, `null` when absent (as indexing a `Value`).
    fn index(&self, key: &str) -> &Value {
        const NULL: Value = Value::Null;
        self.get(key).unwrap_or(&NULL)
    }
}

impl Serialize for MatrixRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut m = s.serialize_map(Some(self.fields.len()))?;
        for (k, v) in &self.fields {
            m.serialize_entry(k.as_ref(), v)?;
        }
        m.end()
    }
}

/// `router` / `kv-offload-backend` metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Component<'a> {
    /// Component name.
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// Component version (required for `router`).
    #[serde(default)]
    #[serde(borrow)]
    pub version: Option<Cow<'a, str>>,
}

/// A worker block in a multi-node row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WorkerRow<'a> {
    /// Number of workers.
    pub num_worker: i64,
    /// Tensor parallelism.
    pub tp: i64,
    /// Expert parallelism.
    pub ep: i64,
    /// Data-parallel attention.
    pub dp_attn: bool,
    /// Pipeline parallelism.
    pub pp: i64,
    /// Decode context parallelism.
    pub dcp_size: i64,
    /// Prefill context parallelism.
    pub pcp_size: i64,
    /// Hardware name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(borrow)]
    pub hardware: Option<Cow<'a, str>>,
    /// Extra settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(borrow)]
    pub additional_settings: Option<Vec<Cow<'a, str>>>,
}

/// Declares a strict row type (`deny_unknown_fields`, kebab-case keys):
/// the six fields every row kind starts with, the kind's own fields, then
/// the two every kind ends with, in output order. serde's `flatten` would
/// share them as structs, but it cannot be combined with
/// `deny_unknown_fields`.
macro_rules! strict_row {
    ($(#[$meta:meta])* $name:ident { $($fields:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "kebab-case")]
        #[allow(missing_docs)]
        pub struct $name<'a> {
            #[serde(borrow)]
            pub image: Cow<'a, str>,
            #[serde(borrow)]
            pub model: Cow<'a, str>,
            #[serde(borrow)]
            pub model_prefix: Cow<'a, str>,
            #[serde(borrow)]
            pub precision: Cow<'a, str>,
            #[serde(borrow)]
            pub framework: Cow<'a, str>,
            #[serde(borrow)]
            pub runner: Cow<'a, str>,
            $($fields)*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub eval_only: Option<bool>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[serde(borrow)]
            pub recipe_fingerprint: Option<Cow<'a, str>>,
        }
    };
}

strict_row! {
    /// SN-fixed row (§9.1).
    SnFixedRow {
        pub isl: i64,
        pub osl: i64,
        pub tp: i64,
        pub pp: i64,
        pub dcp_size: i64,
        pub pcp_size: i64,
        pub conc: i64,
        pub max_model_len: i64,
        pub ep: i64,
        pub dp_attn: bool,
        #[serde(borrow)]
        pub spec_decoding: Cow<'a, str>,
        #[serde(borrow)]
        pub exp_name: Cow<'a, str>,
        pub disagg: bool,
        pub run_eval: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[serde(borrow)]
        pub router: Option<Component<'a>>,
    }
}

strict_row! {
    /// MN-fixed row (§9.2).
    MnFixedRow {
        pub isl: i64,
        pub osl: i64,
        #[serde(borrow)]
        pub spec_decoding: Cow<'a, str>,
        #[serde(borrow)]
        pub prefill: WorkerRow<'a>,
        #[serde(borrow)]
        pub decode: WorkerRow<'a>,
        pub conc: Vec<i64>,
        pub max_model_len: i64,
        #[serde(borrow)]
        pub exp_name: Cow<'a, str>,
        pub disagg: bool,
        pub run_eval: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[serde(borrow)]
        pub router: Option<Component<'a>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[serde(borrow)]
        pub kv_p2p_transfer: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub eval_conc: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub eval_all_concs: Option<bool>,
    }
}

strict_row! {
    /// SN-agentic row (§9.3).
    SnAgenticRow {
        pub tp: i64,
        pub pp: i64,
        pub dcp_size: i64,
        pub pcp_size: i64,
        pub ep: i64,
        pub dp_attn: bool,
        #[serde(borrow)]
        pub spec_decoding: Cow<'a, str>,
        pub conc: i64,
        #[serde(borrow)]
        pub kv_offloading: Cow<'a, str>,
        pub total_cpu_dram_gb: i64,
        pub duration: i64,
        #[serde(borrow)]
        pub exp_name: Cow<'a, str>,
        #[serde(borrow)]
        pub scenario_type: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[serde(borrow)]
        pub kv_offload_backend: Option<Component<'a>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[serde(borrow)]
        pub router: Option<Component<'a>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub run_eval: Option<bool>,
    }
}

strict_row! {
    /// MN-agentic row (§9.4).
    MnAgenticRow {
        #[serde(borrow)]
        pub spec_decoding: Cow<'a, str>,
        #[serde(borrow)]
        pub prefill: WorkerRow<'a>,
        #[serde(borrow)]
        pub decode: WorkerRow<'a>,
        pub conc: Vec<i64>,
        #[serde(borrow)]
        pub kv_offloading: Cow<'a, str>,
        pub total_cpu_dram_gb: i64,
        pub duration: i64,
        #[serde(borrow)]
        pub exp_name: Cow<'a, str>,
        pub disagg: bool,
        #[serde(borrow)]
        pub scenario_type: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[serde(borrow)]
        pub kv_offload_backend: Option<Component<'a>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[serde(borrow)]
        pub router: Option<Component<'a>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[serde(borrow)]
        pub kv_p2p_transfer: Option<Cow<'a, str>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub run_eval: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub eval_conc: Option<i64>,
    }
}

fn check_spec(s: &str) -> Result<(), String> {
    if ["mtp", "draft_model", "none"].contains(&s) {
        Ok(())
    } else {
        Err(format!(
            "'spec-decoding' must be one of mtp, draft_model, none, got '{s}'"
        ))
    }
}

fn check_topology(tp: i64, pp: i64, dcp: i64, pcp: i64, what: &str) -> Result<(), String> {
    for (n, v) in [("pp", pp), ("dcp-size", dcp), ("pcp-size", pcp)] {
        if v <= 0 {
            return Err(format!("{what}'{n}' must be greater than 0, got {v}"));
        }
    }
    if tp % dcp != 0 {
        return Err(format!(
            "{what}'tp' ({tp}) must be divisible by 'dcp-size' ({dcp})"
        ));
    }
    Ok(())
}

fn check_component(
    c: Option<&Component<'_>>,
    name: &str,
    version_required: bool,
) -> Result<(), String> {
    let Some(c) = c else { return Ok(()) };
    if c.name.is_empty() {
        return Err(format!("'{name}.name' must not be empty"));
    }
    match &c.version {
        None if version_required => Err(format!("'{name}.version' is required")),
        Some(v) if v.is_empty() => Err(format!("'{name}.version' must not be empty")),
        Some(v) if v.starts_with("image:") => Err(format!(
            "'{name}.version' must be a component version, not an image reference"
        )),
        _ => Ok(()),
    }
}

fn check_workers(p: &WorkerRow<'_>, d: &WorkerRow<'_>) -> Result<(), String> {
    check_topology(p.tp, p.pp, p.dcp_size, p.pcp_size, "prefill.")?;
    check_topology(d.tp, d.pp, d.dcp_size, d.pcp_size, "decode.")?;
    if p.hardware.is_some() != d.hardware.is_some() {
        return Err(
            "'hardware' must be specified for both 'prefill' and 'decode', or neither".into(),
        );
    }
    Ok(())
}

fn check_fingerprint(f: Option<&Cow<'_, str>>) -> Result<(), String> {
    match f {
        Some(s)
            if s.len() != 64
                || !s
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)) =>
        {
            Err("'recipe-fingerprint' must be 64 lowercase hex characters".into())
        }
        _ => Ok(()),
    }
}

fn check_kv(offloading: &str, backend: Option<&Component<'_>>) -> Result<(), String> {
    match (offloading, backend.is_some()) {
        ("none", true) => {
            Err("'kv-offload-backend' can only be set when 'kv-offloading' is not 'none'".into())
        }
        ("dram", false) => {
            Err("'kv-offload-backend' is required when 'kv-offloading' is 'dram'".into())
        }
        ("none" | "dram", _) => Ok(()),
        (o, _) => Err(format!(
            "'kv-offloading' must be 'none' or 'dram', got '{o}'"
        )),
    }
}

/// Validates one generated row against the schema of its kind (§8.5).
/// Convenience wrapper over [`validate_value`] (clones the row).
///
/// # Errors
/// A message naming the offending field.
pub fn validate_row(row: &Map<String, Value>) -> Result<RowKind, String> {
    validate_value(&Value::Object(row.clone()))
}

/// Validates one generated row (a JSON object) without copying it.
///
/// # Errors
/// A message naming the offending field, or "not an object".
pub fn validate_value(v: &Value) -> Result<RowKind, String> {
    let Some(row) = v.as_object() else {
        return Err("a matrix row must be a JSON object".into());
    };
    validate_as(RowKind::of(row), || v)
}

/// Validates a row as the generator builds it ([`MatrixRow`]), without
/// copying it.
///
/// # Errors
/// A message naming the offending field.
pub fn validate_matrix_row(row: &MatrixRow) -> Result<RowKind, String> {
    validate_as(row.kind(), || {
        serde::de::value::MapDeserializer::<_, serde_json::Error>::new(
            row.fields.iter().map(|(k, v)| (k.as_ref(), v)),
        )
    })
}

/// The typed checks of a row of `kind`, read through a fresh deserializer
/// from `de` (a JSON object or a [`MatrixRow`]).
fn validate_as<'de, D>(kind: RowKind, de: impl Fn() -> D) -> Result<RowKind, String>
where
    D: serde::Deserializer<'de, Error = serde_json::Error>,
{
    let e = |x: serde_json::Error| x.to_string();
    match kind {
        RowKind::SnFixed => {
            let r = SnFixedRow::deserialize(de()).map_err(e)?;
            check_spec(&r.spec_decoding)?;
            check_topology(r.tp, r.pp, r.dcp_size, r.pcp_size, "")?;
            check_component(r.router.as_ref(), "router", true)?;
            check_fingerprint(r.recipe_fingerprint.as_ref())?;
            if r.disagg {
                return Err("'disagg' must be false in a single-node row".into());
            }
        }
        RowKind::MnFixed => {
            let r = MnFixedRow::deserialize(de()).map_err(e)?;
            check_spec(&r.spec_decoding)?;
            check_workers(&r.prefill, &r.decode)?;
            check_component(r.router.as_ref(), "router", true)?;
            check_fingerprint(r.recipe_fingerprint.as_ref())?;
            if r.disagg && r.kv_p2p_transfer.is_none() {
                return Err("disagg=true requires 'kv-p2p-transfer'".into());
            }
        }
        RowKind::SnAgentic => {
            let r = SnAgenticRow::deserialize(de()).map_err(e)?;
            check_spec(&r.spec_decoding)?;
            check_topology(r.tp, r.pp, r.dcp_size, r.pcp_size, "")?;
            check_component(r.router.as_ref(), "router", true)?;
            check_component(r.kv_offload_backend.as_ref(), "kv-offload-backend", false)?;
            check_kv(&r.kv_offloading, r.kv_offload_backend.as_ref())?;
            check_fingerprint(r.recipe_fingerprint.as_ref())?;
            if r.total_cpu_dram_gb < 0 {
                return Err("'total-cpu-dram-gb' must be >= 0".into());
            }
        }
        RowKind::MnAgentic => {
            let r = MnAgenticRow::deserialize(de()).map_err(e)?;
            check_spec(&r.spec_decoding)?;
            check_workers(&r.prefill, &r.decode)?;
            check_component(r.router.as_ref(), "router", true)?;
            check_component(r.kv_offload_backend.as_ref(), "kv-offload-backend", false)?;
            check_kv(&r.kv_offloading, r.kv_offload_backend.as_ref())?;
            check_fingerprint(r.recipe_fingerprint.as_ref())?;
            if r.total_cpu_dram_gb < 0 {
                return Err("'total-cpu-dram-gb' must be >= 0".into());
            }
            if r.disagg && r.kv_p2p_transfer.is_none() {
                return Err("disagg=true requires 'kv-p2p-transfer'".into());
            }
        }
    }
    Ok(kind)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn sn() -> Map<String, Value> {
        json!({"image":"i","model":"m","model-prefix":"p","precision":"fp8","framework":"f","runner":"r",
            "isl":1024,"osl":1024,"tp":8,"pp":1,"dcp-size":1,"pcp-size":1,"conc":4,"max-model-len":2304,
            "ep":1,"dp-attn":false,"spec-decoding":"none","exp-name":"p_1k1k","disagg":false,"run-eval":false})
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn sn_fixed_row_strict() {
        assert_eq!(validate_row(&sn()).unwrap(), RowKind::SnFixed);
        let mut r = sn();
        r.insert("bogus".into(), json!(1));
        assert!(validate_row(&r).unwrap_err().contains("bogus"));
        let mut r = sn();
        r.remove("run-eval");
        assert!(validate_row(&r).unwrap_err().contains("run-eval"));
        let mut r = sn();
        r.insert("tp".into(), json!("8"));
        assert!(validate_row(&r).is_err());
        let mut r = sn();
        r.insert("dcp-size".into(), json!(3));
        assert!(validate_row(&r).unwrap_err().contains("dcp-size"));
    }

    #[test]
    fn matrix_row_validates_as_the_json_object_does() {
        let cases: Vec<Map<String, Value>> = {
            let mut v = vec![sn()];
            let mut r = sn();
            r.insert("bogus".into(), json!(1));
            v.push(r);
            let mut r = sn();
            r.remove("run-eval");
            v.push(r);
            let mut r = sn();
            r.insert("tp".into(), json!("8"));
            v.push(r);
            let mut r = sn();
            r.insert("dcp-size".into(), json!(3));
            v.push(r);
            let mut r = sn();
            r.insert("router".into(), json!({"name": "x"}));
            v.push(r);
            v
        };
        for m in cases {
            let want = validate_row(&m);
            let got = validate_matrix_row(&MatrixRow::from(m.clone()));
            assert_eq!(got.is_ok(), want.is_ok(), "{m:?}");
            if let (Err(g), Err(w)) = (&got, &want) {
                // Same field named (serde's messages may word it alike).
                for f in ["bogus", "run-eval", "dcp-size", "version"] {
                    assert_eq!(g.contains(f), w.contains(f), "{g} / {w}");
                }
            }
        }
    }

    #[test]
    fn matrix_row_keeps_the_order_of_a_preserve_order_map() {
        // The same edits on both: inserts (new and existing keys) and a
        // remove from the middle, which moves the last field into the gap.
        let mut map = sn();
        let mut row = MatrixRow::from(map.clone());
        for (k, v) in [
            ("conc", json!(8)),
            ("eval-conc", json!(16)),
            ("x", json!(1)),
        ] {
            assert_eq!(row.insert(k, v.clone()), map.insert(k.into(), v));
        }
        assert_eq!(row.remove("isl"), map.remove("isl"));
        assert_eq!(row.remove("absent"), map.remove("absent"));
        assert_eq!(
            serde_json::to_string(&row).unwrap(),
            serde_json::to_string(&map).unwrap()
        );
        assert_eq!(row.clone().into_map(), map);
        assert_eq!(row.len(), map.len());
        assert_eq!(row["conc"], json!(8));
        assert_eq!(row["absent"], Value::Null);
        *row.get_mut("conc").unwrap() = json!(9);
        assert_eq!(row.get("conc"), Some(&json!(9)));
        assert_eq!(row.kind(), RowKind::SnFixed);
    }
}
