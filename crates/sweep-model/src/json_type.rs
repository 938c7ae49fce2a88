//! Type names of JSON values for error messages ("expected an object, found
//! an array"). Two vocabularies, because the inputs use two: JSON documents
//! (results, API answers, matrices) name their types as JSON does
//! ([`json_type_name`]), while YAML configs are written against PyYAML's
//! model, where a number is an integer or a float, an array a list and an
//! object a mapping ([`yaml_type_name`]). Both include the article.

use serde_json::Value;

/// The JSON type of `v` with its article: `null`, `a boolean`, `a number`,
/// `a string`, `an array`, `an object`.
#[must_use]
pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Python's type name (`type(x).__name__`) of the value `json.loads` makes
/// of `v`: `NoneType`, `bool`, `int`, `float`, `str`, `list`, `dict`.
#[must_use]
pub fn python_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// The YAML (PyYAML) type of a value loaded from YAML, with its article:
/// `null`, `a boolean`, `an integer`, `a float`, `a string`, `a list`,
/// `a mapping`.
#[must_use]
pub fn yaml_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_and_yaml_vocabularies() {
        let cases = [
            (json!(null), "null", "null"),
            (json!(true), "a boolean", "a boolean"),
            (json!(1), "a number", "an integer"),
            (json!(1.5), "a number", "a float"),
            (json!("x"), "a string", "a string"),
            (json!([1]), "an array", "a list"),
            (json!({"a": 1}), "an object", "a mapping"),
        ];
        for (v, json_name, yaml_name) in cases {
            assert_eq!(json_type_name(&v), json_name, "{v}");
            assert_eq!(yaml_type_name(&v), yaml_name, "{v}");
        }
    }
}
