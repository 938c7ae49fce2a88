//! Python's `repr()` and `str()` of JSON-shaped values (`'key'`,
//! `['a', 'b']`, `{'a': [1, None, True]}`), so messages and table cells
//! read as the reference's do.

use serde_json::{Number, Value};
use std::fmt::Write as _;

use super::float::python_float_repr;

/// `repr(str)`: single quotes unless the text contains one and no double
/// quote; backslash escapes for the quote, `\\`, `\n`, `\r`, `\t` and
/// `\xNN` for the other control characters.
#[must_use]
pub fn python_repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `repr(list)` of already-rendered items: `[a, b]`.
#[must_use]
pub fn python_repr_list(items: impl IntoIterator<Item = String>) -> String {
    format!("[{}]", items.into_iter().collect::<Vec<_>>().join(", "))
}

/// A JSON number as Python prints it: integers as they are, floats with
/// [`python_float_repr`].
fn python_number(n: &Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() => python_float_repr(f),
        _ => n.to_string(),
    }
}

/// `repr(v)` of the Python value `json.loads` makes of `v`.
#[must_use]
pub fn python_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => python_number(n),
        Value::String(s) => python_repr_str(s),
        Value::Array(items) => python_repr_list(items.iter().map(python_repr)),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", python_repr_str(k), python_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `str(v)` (what an f-string prints) of the Python value `json.loads`
/// makes of `v`: strings as they are, everything else as [`python_repr`].
#[must_use]
pub fn python_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => python_repr(other),
    }
}

/// `str(v or '')` of the Python value `json.loads` makes of `v` (a missing
/// key is `None`): the empty string for every falsy value (`None`, `False`,
/// `0`, `0.0`, `''`, `[]`, `{}`), else [`python_str`].
#[must_use]
pub fn python_str_or_empty(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null | Value::Bool(false)) => String::new(),
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => String::new(),
        Some(Value::Array(a)) if a.is_empty() => String::new(),
        Some(Value::Object(o)) if o.is_empty() => String::new(),
        Some(other) => python_str(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn str_or_empty_is_python_str_of_x_or_empty() {
        for falsy in [
            json!(null),
            json!(false),
            json!(0),
            json!(0.0),
            json!(""),
            json!([]),
            json!({}),
        ] {
            assert_eq!(python_str_or_empty(Some(&falsy)), "", "{falsy}");
        }
        assert_eq!(python_str_or_empty(None), "");
        assert_eq!(python_str_or_empty(Some(&json!("abc"))), "abc");
        assert_eq!(python_str_or_empty(Some(&json!(12))), "12");
        assert_eq!(python_str_or_empty(Some(&json!(true))), "True");
        assert_eq!(python_str_or_empty(Some(&json!(1.5))), "1.5");
        assert_eq!(python_str_or_empty(Some(&json!(["a"]))), "['a']");
    }

    #[test]
    fn reprs_match_python() {
        assert_eq!(python_repr_str("a"), "'a'");
        assert_eq!(python_repr_str("it's"), "\"it's\"");
        assert_eq!(python_repr_str("both ' and \""), "'both \\' and \"'");
        assert_eq!(python_repr_str("tab\there\u{1}"), "'tab\\there\\x01'");
        assert_eq!(
            python_repr_list(["'a'".to_string(), "'b'".to_string()]),
            "['a', 'b']"
        );
        assert_eq!(
            python_repr(&json!({"a": [1, null, true, 2.0, 1e-5]})),
            "{'a': [1, None, True, 2.0, 1e-05]}"
        );
        assert_eq!(python_repr(&json!(u64::MAX)), "18446744073709551615");
    }

    #[test]
    fn str_prints_like_an_f_string() {
        assert_eq!(python_str(&json!("x")), "x");
        assert_eq!(python_str(&json!(true)), "True");
        assert_eq!(python_str(&json!(null)), "None");
        assert_eq!(python_str(&json!(3)), "3");
        assert_eq!(python_str(&json!(3.0)), "3.0");
        assert_eq!(python_str(&json!(["a", 1])), "['a', 1]");
    }
}
