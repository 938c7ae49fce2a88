//! The group an aggregated result element belongs to (model prefix,
//! hardware, framework, precision, kind), which `aggregate` counts and the
//! step summary tabulates. Its own module so that `aggregate` (which counts)
//! and `summary` (which renders the report) both depend on it and not on
//! each other.

use serde_json::Value;

/// (model prefix, hw, framework, precision, kind) of an aggregate row.
pub type GroupKey = (String, String, String, String, &'static str);

/// The group of a result object in the aggregate and whether its power
/// figures are valid; `None` for an element that is not an object.
#[must_use]
pub fn element_facts(v: &Value) -> Option<(GroupKey, bool)> {
    let m = v.as_object()?;
    let str_field = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
    let kind = if m.get("scenario_type").and_then(Value::as_str) == Some("agentic-coding") {
        "agentic"
    } else if m.get("is_multinode").and_then(Value::as_bool) == Some(true) {
        "multi-node"
    } else {
        "single-node"
    };
    let key = (
        str_field("infmax_model_prefix"),
        str_field("hw"),
        str_field("framework"),
        str_field("precision"),
        kind,
    );
    Some((key, m.get("power_valid").and_then(Value::as_i64) == Some(1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
