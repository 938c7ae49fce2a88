//! Python's `json.dumps(v, sort_keys=True, separators=(",", ":"))` with the
//! default `ensure_ascii=True`: the text the reference hashes (recipe
//! fingerprint, queue token) or compares (eval topology, append-only rows),
//! so it must match Python byte for byte.

use serde_json::Value;
use std::fmt::Write as _;

use super::float::python_float_repr;

/// `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)`.
#[must_use]
pub fn dumps_like_python(v: &Value) -> String {
    let mut out = String::new();
    write_dumps_like_python(v, &mut out);
    out
}

/// Appends [`dumps_like_python`] of `v` to `out`.
pub fn write_dumps_like_python(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                out.push_str(&n.to_string());
            } else {
                out.push_str(&json_float(n.as_f64().unwrap_or(0.0)));
            }
        }
        Value::String(s) => write_json_string_like_python(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_dumps_like_python(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string_like_python(k, out);
                out.push(':');
                write_dumps_like_python(v, out);
            }
            out.push('}');
        }
    }
}

/// A float as `json.dumps` writes it: `repr(float)`, except the non-finite
/// values, which Python's encoder spells `NaN`, `Infinity`, `-Infinity`.
fn json_float(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        python_float_repr(x)
    }
}

/// Appends `s` as a JSON string literal with Python's `ensure_ascii` escapes.
pub fn write_json_string_like_python(s: &str, out: &mut String) {
    out.push('"');
    if s.bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\')
    {
        // Printable ASCII without quotes or backslashes: nothing to escape.
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dumps_matches_python_sorted_compact_ascii() {
        let v = json!({"b": [1, true, null], "a": "é\"\n/😀", "c": {"z": 1, "y": 0.5}});
        assert_eq!(
            dumps_like_python(&v),
            r#"{"a":"\u00e9\"\n/\ud83d\ude00","b":[1,true,null],"c":{"y":0.5,"z":1}}"#
        );
        // DEL is outside Python's printable range and is escaped.
        assert_eq!(dumps_like_python(&json!("a\u{7f}")), r#""a\u007f""#);
        assert_eq!(
            dumps_like_python(&json!("plain-ascii_1.0")),
            r#""plain-ascii_1.0""#
        );
        assert_eq!(
            dumps_like_python(&json!([1.0, 1e-5, 1e16])),
            "[1.0,1e-05,1e+16]"
        );
    }

    #[test]
    fn non_finite_floats_use_the_json_encoder_spelling() {
        assert_eq!(json_float(f64::NAN), "NaN");
        assert_eq!(json_float(f64::INFINITY), "Infinity");
        assert_eq!(json_float(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(json_float(2.5), "2.5");
    }
}
