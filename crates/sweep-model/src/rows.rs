//! Matrix rows: the four row kinds of spec matrix.md §9 as types.
//!
//! [`MatrixRow`] is what the generator builds and prints: one struct per
//! kind whose serde field order is the reference's output order, optional
//! fields left out when unset. The blocks a row copies from the master
//! config as written (`prefill`, `decode`, `router`, `kv-offload-backend`)
//! are kept as the config's own mapping ([`Verbatim`]): the reference copies
//! them key for key, so their key order is the config file's and a struct
//! would reorder them. [`MatrixRow::validate`] checks the row rules of §8.5
//! (the field set and field types are the types' own).

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

mod entry;
pub use entry::AsMatrixEntry;

/// Kind of a matrix row (§9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// Single-node fixed-seq-len.
    SingleNodeFixed,
    /// Multi-node fixed-seq-len.
    MultiNodeFixed,
    /// Single-node agentic.
    SingleNodeAgentic,
    /// Multi-node agentic.
    MultiNodeAgentic,
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
            (false, false) => RowKind::SingleNodeFixed,
            (true, false) => RowKind::MultiNodeFixed,
            (false, true) => RowKind::SingleNodeAgentic,
            (true, true) => RowKind::MultiNodeAgentic,
        }
    }
}

/// A mapping copied from the master config as written (key order included).
pub type Verbatim = Map<String, Value>;

/// `router` / `kv-offload-backend` metadata, read from a [`Verbatim`]
/// block to check it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Component<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default, borrow)]
    version: Option<Cow<'a, str>>,
}

/// A worker pool block (`prefill` / `decode`) of a multi-node row, read
/// from its [`Verbatim`] block to check it, and written in the reference's
/// `WorkerConfig` field order by [`AsMatrixEntry`].
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct WorkerPoolRow<'a> {
    num_worker: i64,
    tp: i64,
    pp: i64,
    dcp_size: i64,
    pcp_size: i64,
    ep: i64,
    dp_attn: bool,
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    hardware: Option<Cow<'a, str>>,
    /// Absent (`None`, written as `[]`, the model's default), null
    /// (`Some(None)`, left out) or a list.
    #[serde(
        default,
        deserialize_with = "present",
        serialize_with = "settings_or_empty",
        skip_serializing_if = "is_null_setting"
    )]
    additional_settings: Option<Option<Vec<Cow<'a, str>>>>,
}

/// A field that is present: `Some` of its value, null included.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[allow(clippy::ref_option)] // serde's skip_serializing_if passes a reference
fn is_null_setting(v: &Option<Option<Vec<Cow<'_, str>>>>) -> bool {
    matches!(v, Some(None))
}

#[allow(clippy::ref_option)] // serde's serialize_with passes a reference
fn settings_or_empty<S: serde::Serializer>(
    v: &Option<Option<Vec<Cow<'_, str>>>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(Some(items)) => items.serialize(s),
        _ => Vec::<&str>::new().serialize(s),
    }
}

/// Declares a row type (`deny_unknown_fields`, kebab-case keys): the six
/// fields every row kind starts with, the kind's own fields, then the two
/// every kind ends with, in output order. serde's `flatten` would share
/// them as structs, but it cannot be combined with `deny_unknown_fields`.
macro_rules! matrix_row {
    ($(#[$meta:meta])* $name:ident { $($fields:tt)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "kebab-case")]
        #[allow(missing_docs)]
        pub struct $name {
            pub image: String,
            pub model: String,
            pub model_prefix: String,
            pub precision: String,
            pub framework: String,
            pub runner: String,
            $($fields)*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub eval_only: Option<bool>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub recipe_fingerprint: Option<String>,
        }
    };
}

matrix_row! {
    /// SN-fixed row (§9.1).
    SingleNodeFixedRow {
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
        pub spec_decoding: String,
        pub exp_name: String,
        pub disagg: bool,
        pub run_eval: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub router: Option<Verbatim>,
    }
}

matrix_row! {
    /// MN-fixed row (§9.2).
    MultiNodeFixedRow {
        pub isl: i64,
        pub osl: i64,
        pub spec_decoding: String,
        pub prefill: Verbatim,
        pub decode: Verbatim,
        pub conc: Vec<i64>,
        pub max_model_len: i64,
        pub exp_name: String,
        pub disagg: bool,
        pub run_eval: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub router: Option<Verbatim>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub kv_p2p_transfer: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub eval_conc: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub eval_all_concs: Option<bool>,
    }
}

matrix_row! {
    /// SN-agentic row (§9.3).
    SingleNodeAgenticRow {
        pub tp: i64,
        pub pp: i64,
        pub dcp_size: i64,
        pub pcp_size: i64,
        pub ep: i64,
        pub dp_attn: bool,
        pub spec_decoding: String,
        pub conc: i64,
        pub kv_offloading: String,
        pub total_cpu_dram_gb: i64,
        pub duration: i64,
        pub exp_name: String,
        pub scenario_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub kv_offload_backend: Option<Verbatim>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub router: Option<Verbatim>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub run_eval: Option<bool>,
    }
}

matrix_row! {
    /// MN-agentic row (§9.4).
    MultiNodeAgenticRow {
        pub spec_decoding: String,
        pub prefill: Verbatim,
        pub decode: Verbatim,
        pub conc: Vec<i64>,
        pub kv_offloading: String,
        pub total_cpu_dram_gb: i64,
        pub duration: i64,
        pub exp_name: String,
        pub disagg: bool,
        pub scenario_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub kv_offload_backend: Option<Verbatim>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub router: Option<Verbatim>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub kv_p2p_transfer: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub run_eval: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub eval_conc: Option<i64>,
    }
}

/// One matrix row of any kind; serializes as the kind's own object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MatrixRow {
    /// Single-node fixed-seq-len.
    SingleNodeFixed(SingleNodeFixedRow),
    /// Multi-node fixed-seq-len.
    MultiNodeFixed(MultiNodeFixedRow),
    /// Single-node agentic.
    SingleNodeAgentic(SingleNodeAgenticRow),
    /// Multi-node agentic.
    MultiNodeAgentic(MultiNodeAgenticRow),
}

/// Reads a row by its kind ([`RowKind::of`]), strictly: closed field set,
/// exact types, no defaults for required fields.
impl<'de> Deserialize<'de> for MatrixRow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        MatrixRow::from_map(map).map_err(serde::de::Error::custom)
    }
}

/// The row as a JSON object, fields in output order.
impl From<MatrixRow> for Value {
    fn from(row: MatrixRow) -> Value {
        row.to_value()
    }
}

/// A row that breaks a rule of §8.5 (the message names the field).
#[derive(Debug, thiserror::Error)]
pub enum RowError {
    /// A missing or unknown field, or a field of the wrong type.
    #[error("{0}")]
    Shape(#[from] serde_json::Error),
    /// `spec-decoding` outside its set.
    #[error("'spec-decoding' must be one of mtp, draft_model, none, got '{0}'")]
    SpecDecoding(String),
    /// `pp`, `dcp-size` or `pcp-size` not positive (`block` is `prefill.`,
    /// `decode.` or empty).
    #[error("{block}'{field}' must be greater than 0, got {value}")]
    NotPositive {
        /// Worker block prefix.
        block: &'static str,
        /// The field.
        field: &'static str,
        /// Its value.
        value: i64,
    },
    /// `tp` not divisible by `dcp-size`.
    #[error("{block}'tp' ({tp}) must be divisible by 'dcp-size' ({dcp})")]
    DcpDivides {
        /// Worker block prefix.
        block: &'static str,
        /// `tp`.
        tp: i64,
        /// `dcp-size`.
        dcp: i64,
    },
    /// A component (`router`, `kv-offload-backend`) field problem.
    #[error("'{component}.{problem}")]
    Component {
        /// The component.
        component: &'static str,
        /// What is wrong, starting with the field name.
        problem: &'static str,
    },
    /// `hardware` on one worker block only.
    #[error("'hardware' must be specified for both 'prefill' and 'decode', or neither")]
    HardwarePair,
    /// A malformed `recipe-fingerprint`.
    #[error("'recipe-fingerprint' must be 64 lowercase hex characters")]
    Fingerprint,
    /// `kv-offloading` and `kv-offload-backend` disagree, or an unknown mode.
    #[error("{0}")]
    KvOffload(String),
    /// `total-cpu-dram-gb` negative.
    #[error("'total-cpu-dram-gb' must be >= 0")]
    NegativeDram,
    /// A single-node row with `disagg: true`.
    #[error("'disagg' must be false in a single-node row")]
    SingleNodeDisagg,
    /// `disagg: true` without `kv-p2p-transfer`.
    #[error("disagg=true requires 'kv-p2p-transfer'")]
    DisaggWithoutP2p,
}

fn check_spec(s: &str) -> Result<(), RowError> {
    if ["mtp", "draft_model", "none"].contains(&s) {
        Ok(())
    } else {
        Err(RowError::SpecDecoding(s.to_string()))
    }
}

fn check_topology(
    tp: i64,
    pp: i64,
    dcp: i64,
    pcp: i64,
    block: &'static str,
) -> Result<(), RowError> {
    for (field, value) in [("pp", pp), ("dcp-size", dcp), ("pcp-size", pcp)] {
        if value <= 0 {
            return Err(RowError::NotPositive {
                block,
                field,
                value,
            });
        }
    }
    if tp % dcp != 0 {
        return Err(RowError::DcpDivides { block, tp, dcp });
    }
    Ok(())
}

/// Reads a [`Verbatim`] block as `T` without copying it.
fn view<'a, T: Deserialize<'a>>(block: &'a Verbatim) -> Result<T, RowError> {
    Ok(T::deserialize(serde::de::value::MapDeserializer::<
        _,
        serde_json::Error,
    >::new(
        block.iter().map(|(k, v)| (k.as_str(), v)),
    ))?)
}

fn check_component(
    c: Option<&Verbatim>,
    component: &'static str,
    version_required: bool,
) -> Result<(), RowError> {
    let Some(c) = c else { return Ok(()) };
    let c: Component<'_> = view(c)?;
    let problem = if c.name.is_empty() {
        "name' must not be empty"
    } else {
        match &c.version {
            None if version_required => "version' is required",
            Some(v) if v.is_empty() => "version' must not be empty",
            Some(v) if v.starts_with("image:") => {
                "version' must be a component version, not an image reference"
            }
            _ => return Ok(()),
        }
    };
    Err(RowError::Component { component, problem })
}

fn check_workers(p: &Verbatim, d: &Verbatim) -> Result<(), RowError> {
    let p: WorkerPoolRow<'_> = view(p)?;
    let d: WorkerPoolRow<'_> = view(d)?;
    check_topology(p.tp, p.pp, p.dcp_size, p.pcp_size, "prefill.")?;
    check_topology(d.tp, d.pp, d.dcp_size, d.pcp_size, "decode.")?;
    if p.hardware.is_some() != d.hardware.is_some() {
        return Err(RowError::HardwarePair);
    }
    Ok(())
}

fn check_fingerprint(f: Option<&String>) -> Result<(), RowError> {
    match f {
        Some(s)
            if s.len() != 64
                || !s
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)) =>
        {
            Err(RowError::Fingerprint)
        }
        _ => Ok(()),
    }
}

fn check_kv(offloading: &str, backend: Option<&Verbatim>) -> Result<(), RowError> {
    let problem = match (offloading, backend.is_some()) {
        ("none", true) => {
            "'kv-offload-backend' can only be set when 'kv-offloading' is not 'none'".to_string()
        }
        ("dram", false) => "'kv-offload-backend' is required when 'kv-offloading' is 'dram'".into(),
        ("none" | "dram", _) => return Ok(()),
        (o, _) => format!("'kv-offloading' must be 'none' or 'dram', got '{o}'"),
    };
    Err(RowError::KvOffload(problem))
}

impl MatrixRow {
    /// Reads a row from a JSON object by its kind ([`RowKind::of`]).
    ///
    /// # Errors
    /// The field that is missing, unknown or of the wrong type.
    pub fn from_map(map: Map<String, Value>) -> Result<Self, RowError> {
        let kind = RowKind::of(&map);
        let v = Value::Object(map);
        Ok(match kind {
            RowKind::SingleNodeFixed => MatrixRow::SingleNodeFixed(serde_json::from_value(v)?),
            RowKind::MultiNodeFixed => MatrixRow::MultiNodeFixed(serde_json::from_value(v)?),
            RowKind::SingleNodeAgentic => MatrixRow::SingleNodeAgentic(serde_json::from_value(v)?),
            RowKind::MultiNodeAgentic => MatrixRow::MultiNodeAgentic(serde_json::from_value(v)?),
        })
    }

    /// The row as a JSON object, fields in output order.
    #[must_use]
    pub fn to_value(&self) -> Value {
        // Serializing these types cannot fail: string keys, integers,
        // strings, booleans and JSON values only.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The row's kind.
    #[must_use]
    pub fn kind(&self) -> RowKind {
        match self {
            MatrixRow::SingleNodeFixed(_) => RowKind::SingleNodeFixed,
            MatrixRow::MultiNodeFixed(_) => RowKind::MultiNodeFixed,
            MatrixRow::SingleNodeAgentic(_) => RowKind::SingleNodeAgentic,
            MatrixRow::MultiNodeAgentic(_) => RowKind::MultiNodeAgentic,
        }
    }

    /// `(isl, osl)` of a fixed-seq-len row.
    #[must_use]
    pub fn seq_len(&self) -> Option<(i64, i64)> {
        match self {
            MatrixRow::SingleNodeFixed(r) => Some((r.isl, r.osl)),
            MatrixRow::MultiNodeFixed(r) => Some((r.isl, r.osl)),
            MatrixRow::SingleNodeAgentic(_) | MatrixRow::MultiNodeAgentic(_) => None,
        }
    }

    /// The row's concurrencies (one for a single-node row).
    #[must_use]
    pub fn concs(&self) -> &[i64] {
        match self {
            MatrixRow::SingleNodeFixed(r) => std::slice::from_ref(&r.conc),
            MatrixRow::SingleNodeAgentic(r) => std::slice::from_ref(&r.conc),
            MatrixRow::MultiNodeFixed(r) => &r.conc,
            MatrixRow::MultiNodeAgentic(r) => &r.conc,
        }
    }

    /// `run-eval` (`None` on an agentic row that has none).
    #[must_use]
    pub fn run_eval(&self) -> Option<bool> {
        match self {
            MatrixRow::SingleNodeFixed(r) => Some(r.run_eval),
            MatrixRow::MultiNodeFixed(r) => Some(r.run_eval),
            MatrixRow::SingleNodeAgentic(r) => r.run_eval,
            MatrixRow::MultiNodeAgentic(r) => r.run_eval,
        }
    }

    /// Sets `run-eval`.
    pub fn set_run_eval(&mut self, on: bool) {
        match self {
            MatrixRow::SingleNodeFixed(r) => r.run_eval = on,
            MatrixRow::MultiNodeFixed(r) => r.run_eval = on,
            MatrixRow::SingleNodeAgentic(r) => r.run_eval = Some(on),
            MatrixRow::MultiNodeAgentic(r) => r.run_eval = Some(on),
        }
    }

    /// The runner label the row runs on.
    #[must_use]
    pub fn runner(&self) -> &str {
        match self {
            MatrixRow::SingleNodeFixed(r) => &r.runner,
            MatrixRow::MultiNodeFixed(r) => &r.runner,
            MatrixRow::SingleNodeAgentic(r) => &r.runner,
            MatrixRow::MultiNodeAgentic(r) => &r.runner,
        }
    }

    /// The `prefill` worker block of a multi-node row.
    #[must_use]
    pub fn prefill(&self) -> Option<&Verbatim> {
        match self {
            MatrixRow::MultiNodeFixed(r) => Some(&r.prefill),
            MatrixRow::MultiNodeAgentic(r) => Some(&r.prefill),
            MatrixRow::SingleNodeFixed(_) | MatrixRow::SingleNodeAgentic(_) => None,
        }
    }

    /// The concurrency list of a multi-node row, to change.
    pub fn multi_node_concs_mut(&mut self) -> Option<&mut Vec<i64>> {
        match self {
            MatrixRow::MultiNodeFixed(r) => Some(&mut r.conc),
            MatrixRow::MultiNodeAgentic(r) => Some(&mut r.conc),
            MatrixRow::SingleNodeFixed(_) | MatrixRow::SingleNodeAgentic(_) => None,
        }
    }

    /// Sets `recipe-fingerprint`.
    pub fn set_recipe_fingerprint(&mut self, fingerprint: String) {
        let f = match self {
            MatrixRow::SingleNodeFixed(r) => &mut r.recipe_fingerprint,
            MatrixRow::MultiNodeFixed(r) => &mut r.recipe_fingerprint,
            MatrixRow::SingleNodeAgentic(r) => &mut r.recipe_fingerprint,
            MatrixRow::MultiNodeAgentic(r) => &mut r.recipe_fingerprint,
        };
        *f = Some(fingerprint);
    }

    /// `eval-only` as set (`None` when the row has none).
    #[must_use]
    pub fn eval_only(&self) -> Option<bool> {
        match self {
            MatrixRow::SingleNodeFixed(r) => r.eval_only,
            MatrixRow::MultiNodeFixed(r) => r.eval_only,
            MatrixRow::SingleNodeAgentic(r) => r.eval_only,
            MatrixRow::MultiNodeAgentic(r) => r.eval_only,
        }
    }

    /// Sets `eval-only`.
    pub fn set_eval_only(&mut self, on: bool) {
        let f = match self {
            MatrixRow::SingleNodeFixed(r) => &mut r.eval_only,
            MatrixRow::MultiNodeFixed(r) => &mut r.eval_only,
            MatrixRow::SingleNodeAgentic(r) => &mut r.eval_only,
            MatrixRow::MultiNodeAgentic(r) => &mut r.eval_only,
        };
        *f = Some(on);
    }

    /// Checks the row rules of §8.5 that the types cannot express.
    ///
    /// # Errors
    /// The first rule the row breaks.
    pub fn validate(&self) -> Result<(), RowError> {
        match self {
            MatrixRow::SingleNodeFixed(r) => {
                check_spec(&r.spec_decoding)?;
                check_topology(r.tp, r.pp, r.dcp_size, r.pcp_size, "")?;
                check_component(r.router.as_ref(), "router", true)?;
                check_fingerprint(r.recipe_fingerprint.as_ref())?;
                if r.disagg {
                    return Err(RowError::SingleNodeDisagg);
                }
            }
            MatrixRow::MultiNodeFixed(r) => {
                check_spec(&r.spec_decoding)?;
                check_workers(&r.prefill, &r.decode)?;
                check_component(r.router.as_ref(), "router", true)?;
                check_fingerprint(r.recipe_fingerprint.as_ref())?;
                if r.disagg && r.kv_p2p_transfer.is_none() {
                    return Err(RowError::DisaggWithoutP2p);
                }
            }
            MatrixRow::SingleNodeAgentic(r) => {
                check_spec(&r.spec_decoding)?;
                check_topology(r.tp, r.pp, r.dcp_size, r.pcp_size, "")?;
                check_component(r.router.as_ref(), "router", true)?;
                check_component(r.kv_offload_backend.as_ref(), "kv-offload-backend", false)?;
                check_kv(&r.kv_offloading, r.kv_offload_backend.as_ref())?;
                check_fingerprint(r.recipe_fingerprint.as_ref())?;
                if r.total_cpu_dram_gb < 0 {
                    return Err(RowError::NegativeDram);
                }
            }
            MatrixRow::MultiNodeAgentic(r) => {
                check_spec(&r.spec_decoding)?;
                check_workers(&r.prefill, &r.decode)?;
                check_component(r.router.as_ref(), "router", true)?;
                check_component(r.kv_offload_backend.as_ref(), "kv-offload-backend", false)?;
                check_kv(&r.kv_offloading, r.kv_offload_backend.as_ref())?;
                check_fingerprint(r.recipe_fingerprint.as_ref())?;
                if r.total_cpu_dram_gb < 0 {
                    return Err(RowError::NegativeDram);
                }
                if r.disagg && r.kv_p2p_transfer.is_none() {
                    return Err(RowError::DisaggWithoutP2p);
                }
            }
        }
        Ok(())
    }
}

/// Reads a JSON object as a row and checks it (§8.5).
///
/// # Errors
/// The first field or rule the row breaks.
pub fn validate_row(row: &Map<String, Value>) -> Result<RowKind, RowError> {
    let r = MatrixRow::from_map(row.clone())?;
    r.validate()?;
    Ok(r.kind())
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
        assert_eq!(validate_row(&sn()).unwrap(), RowKind::SingleNodeFixed);
        let mut r = sn();
        r.insert("bogus".into(), json!(1));
        assert!(validate_row(&r).unwrap_err().to_string().contains("bogus"));
        let mut r = sn();
        r.remove("run-eval");
        assert!(
            validate_row(&r)
                .unwrap_err()
                .to_string()
                .contains("run-eval")
        );
        let mut r = sn();
        r.insert("tp".into(), json!("8"));
        assert!(validate_row(&r).is_err());
        let mut r = sn();
        r.insert("dcp-size".into(), json!(3));
        assert!(
            validate_row(&r)
                .unwrap_err()
                .to_string()
                .contains("dcp-size")
        );
    }
}
