//! Matrix rows: the four row kinds of spec matrix.md §9 as strict types.
//!
//! The generator builds rows as JSON objects (fields in insertion order)
//! and checks each one with [`validate_row`] before anything is printed:
//! closed field set, exact types (no coercion, no defaults for required
//! fields) and the row rules of §8.5. Downstream tools can deserialize rows
//! into these types too.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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

/// A worker pool block (`prefill` / `decode`) in a multi-node row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WorkerPoolRow<'a> {
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
    MultiNodeFixedRow {
        pub isl: i64,
        pub osl: i64,
        #[serde(borrow)]
        pub spec_decoding: Cow<'a, str>,
        #[serde(borrow)]
        pub prefill: WorkerPoolRow<'a>,
        #[serde(borrow)]
        pub decode: WorkerPoolRow<'a>,
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
    SingleNodeAgenticRow {
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
    MultiNodeAgenticRow {
        #[serde(borrow)]
        pub spec_decoding: Cow<'a, str>,
        #[serde(borrow)]
        pub prefill: WorkerPoolRow<'a>,
        #[serde(borrow)]
        pub decode: WorkerPoolRow<'a>,
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

fn check_workers(p: &WorkerPoolRow<'_>, d: &WorkerPoolRow<'_>) -> Result<(), String> {
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

/// Validates one generated row against the schema of its kind (§8.5),
/// without copying it.
///
/// # Errors
/// A message naming the offending field.
pub fn validate_row(row: &Map<String, Value>) -> Result<RowKind, String> {
    validate_as(RowKind::of(row), || {
        serde::de::value::MapDeserializer::<_, serde_json::Error>::new(
            row.iter().map(|(k, v)| (k.as_str(), v)),
        )
    })
}

/// The typed checks of a row of `kind`, read through a fresh deserializer
/// from `de`.
fn validate_as<'de, D>(kind: RowKind, de: impl Fn() -> D) -> Result<RowKind, String>
where
    D: serde::Deserializer<'de, Error = serde_json::Error>,
{
    let e = |x: serde_json::Error| x.to_string();
    match kind {
        RowKind::SingleNodeFixed => {
            let r = SingleNodeFixedRow::deserialize(de()).map_err(e)?;
            check_spec(&r.spec_decoding)?;
            check_topology(r.tp, r.pp, r.dcp_size, r.pcp_size, "")?;
            check_component(r.router.as_ref(), "router", true)?;
            check_fingerprint(r.recipe_fingerprint.as_ref())?;
            if r.disagg {
                return Err("'disagg' must be false in a single-node row".into());
            }
        }
        RowKind::MultiNodeFixed => {
            let r = MultiNodeFixedRow::deserialize(de()).map_err(e)?;
            check_spec(&r.spec_decoding)?;
            check_workers(&r.prefill, &r.decode)?;
            check_component(r.router.as_ref(), "router", true)?;
            check_fingerprint(r.recipe_fingerprint.as_ref())?;
            if r.disagg && r.kv_p2p_transfer.is_none() {
                return Err("disagg=true requires 'kv-p2p-transfer'".into());
            }
        }
        RowKind::SingleNodeAgentic => {
            let r = SingleNodeAgenticRow::deserialize(de()).map_err(e)?;
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
        RowKind::MultiNodeAgentic => {
            let r = MultiNodeAgenticRow::deserialize(de()).map_err(e)?;
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
        assert_eq!(validate_row(&sn()).unwrap(), RowKind::SingleNodeFixed);
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
}
