//! The group an aggregated result element belongs to (model prefix,
//! hardware, framework, precision, kind), which `aggregate` counts and the
//! step summary tabulates. Its own module so that `aggregate` (which counts)
//! and `summary` (which renders the report) both depend on it and not on
//! each other.

use serde_json::{Map, Value};
use sweep_model::results::ResultRow;

/// (model prefix, hw, framework, precision, kind) of an aggregate row.
pub type GroupKey = (String, String, String, String, &'static str);

/// The group of a result object in the aggregate and whether its power
/// figures are valid; `None` for an element that is not an object.
///
/// A benchmark row is read as the [`ResultRow`] `process` writes. Other
/// objects (agentic rows, rows the typed reader refuses) are grouped by
/// the same field names, `?` standing for a missing one, so the summary
/// still counts them.
#[must_use]
pub fn element_facts(v: &Value) -> Option<(GroupKey, bool)> {
    let m = v.as_object()?;
    if m.get("scenario_type").and_then(Value::as_str) == Some("agentic-coding") {
        return Some(untyped_facts(m, "agentic"));
    }
    match ResultRow::try_from(m.clone()) {
        Ok(row) => Some(row_facts(&row)),
        Err(_) => {
            let kind = if m.get("is_multinode").and_then(Value::as_bool) == Some(true) {
                "multi-node"
            } else {
                "single-node"
            };
            Some(untyped_facts(m, kind))
        }
    }
}

/// Group and power verdict of a typed benchmark row.
fn row_facts(row: &ResultRow) -> (GroupKey, bool) {
    let r = &row.row;
    let kind = if r.is_multinode() {
        "multi-node"
    } else {
        "single-node"
    };
    let key = (
        r.infmax_model_prefix.clone(),
        r.hw.clone(),
        r.framework.clone(),
        r.precision.clone(),
        kind,
    );
    (key, row.power_valid())
}

/// Group and power verdict of an object that is not a typed benchmark row.
fn untyped_facts(m: &Map<String, Value>, kind: &'static str) -> (GroupKey, bool) {
    let str_field = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
    let key = (
        str_field("infmax_model_prefix"),
        str_field("hw"),
        str_field("framework"),
        str_field("precision"),
        kind,
    );
    (key, m.get("power_valid").and_then(Value::as_i64) == Some(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A full benchmark row is read as the typed row: its multi-node
    /// topology and power verdict come from the typed fields.
    #[test]
    fn element_facts_reads_a_benchmark_row_as_the_typed_row() {
        let v = json!({
            "hw": "gb200", "conc": 8, "image": "i", "model": "m",
            "infmax_model_prefix": "dsr1", "framework": "dynamo-trt", "precision": "fp4",
            "spec_decoding": "none", "disagg": true, "recipe_fingerprint": "",
            "isl": 1024, "osl": 1024, "is_multinode": true,
            "prefill_tp": 4, "prefill_ep": 4, "prefill_dp_attention": "true",
            "prefill_num_workers": 1, "decode_tp": 8, "decode_ep": 8,
            "decode_dp_attention": "true", "decode_num_workers": 1,
            "num_prefill_gpu": 4, "num_decode_gpu": 8,
            "tput_per_gpu": 1.0, "output_tput_per_gpu": 1.0, "input_tput_per_gpu": 1.0,
            "power_metric_schema_version": 2, "power_valid": 1, "avg_power_w": 500.0
        });
        let (key, power_valid) = element_facts(&v).expect("an object");
        assert_eq!(
            key,
            (
                "dsr1".to_owned(),
                "gb200".to_owned(),
                "dynamo-trt".to_owned(),
                "fp4".to_owned(),
                "multi-node"
            )
        );
        assert!(power_valid);
        let mut invalid = v.clone();
        invalid["power_valid"] = json!(0);
        assert_eq!(element_facts(&invalid).map(|(_, p)| p), Some(false));
    }

    #[test]
    fn element_facts_of_objects_only() {
        let v = json!({"hw": 3, "scenario_type": "agentic-coding", "power_valid": 1});
        let (key, power_valid) = element_facts(&v).expect("an object");
        assert_eq!(key.1, "?");
        assert_eq!(key.4, "agentic");
        assert!(power_valid);
        let v = json!({"is_multinode": true, "power_valid": 1.0});
        assert_eq!(
            element_facts(&v).map(|(k, p)| (k.4, p)),
            Some(("multi-node", false))
        );
        assert_eq!(element_facts(&json!([1])), None);
        assert_eq!(element_facts(&json!("text")), None);
    }
}
