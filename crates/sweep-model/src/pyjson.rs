//! Python-compatible JSON text, for values that the reference hashes or
//! compares as strings: `json.dumps(v, sort_keys=True, separators=(",", ":"))`
//! (ASCII-only, as Python's default `ensure_ascii=True`) and `repr(float)`.
//! The recipe fingerprint of the changelog matrix and the queue token of
//! `generate-matrix priority` are SHA-256 digests of this text, so it must
//! match Python byte for byte.

use serde_json::Value;
use std::fmt::Write as _;

/// Python `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)`.
#[must_use]
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

/// Appends [`canonical_json`] of `v` to `out`.
pub fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                out.push_str(&n.to_string());
            } else {
                out.push_str(&py_float(n.as_f64().unwrap_or(0.0)));
            }
        }
        Value::String(s) => write_py_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
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
                write_py_string(k, out);
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
    }
}

/// Appends `s` as a JSON string literal with Python's `ensure_ascii` escapes.
pub fn write_py_string(s: &str, out: &mut String) {
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

/// Python `repr(float)`: shortest round-trip digits, exponent form outside
/// 1e-4 ≤ |x| < 1e16.
#[must_use]
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        let s = format!("{x}");
        if s.contains('.') { s } else { format!("{s}.0") }
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_matches_python_dumps() {
        let v = json!({"b": [1, true, null], "a": "é\"\n/😀", "c": {"z": 1, "y": 0.5}});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":"\u00e9\"\n/\ud83d\ude00","b":[1,true,null],"c":{"y":0.5,"z":1}}"#
        );
        // DEL is outside Python's printable range and is escaped.
        assert_eq!(canonical_json(&json!("a\u{7f}")), r#""a\u007f""#);
        assert_eq!(
            canonical_json(&json!("plain-ascii_1.0")),
            r#""plain-ascii_1.0""#
        );
    }

    #[test]
    fn floats_print_like_python_repr() {
        for (x, want) in [
            (1.0, "1.0"),
            (2.0, "2.0"),
            (2.78, "2.78"),
            (100.0, "100.0"),
            (1e-7, "1e-07"),
            (1e-5, "1e-05"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (-0.5, "-0.5"),
            (-0.0, "-0.0"),
        ] {
            assert_eq!(py_float(x), want, "{x}");
        }
    }
}
