//! `int()` and `float()` with Python's semantics, which the reference
//! applies to environment values and benchmark fields. Matching them decides
//! which inputs are accepted (`" 8 "`, `"1_000"`, `"+4"`, numeric strings in
//! JSON) and how values are rounded (`int(64.9)` truncates).

use serde_json::Value;

/// Removes underscores that sit between two ASCII digits (PEP 515); any
/// other underscore makes the literal invalid (`None`).
fn strip_digit_separators(s: &str) -> Option<String> {
    if !s.contains('_') {
        return Some(s.to_owned());
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let prev_digit = i > 0 && b[i - 1].is_ascii_digit();
            let next_digit = b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !(prev_digit && next_digit) {
                return None;
            }
        } else {
            out.push(c as char);
        }
    }
    Some(out)
}

/// `int(s)` for a string: surrounding whitespace, an optional sign, decimal
/// digits with optional single `_` separators.
#[must_use]
pub fn python_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = strip_digit_separators(digits)?;
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    Some(if neg { -n } else { n })
}

/// `float(s)` for a string: decimal or exponent notation, `inf`,
/// `infinity`, `nan` (any case, optional sign), surrounding whitespace and
/// digit separators.
#[must_use]
pub fn python_float(s: &str) -> Option<f64> {
    let t = strip_digit_separators(s.trim())?;
    let body = t.trim_start_matches(['+', '-']);
    if t.len() - body.len() > 1 {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return t.parse::<f64>().ok();
    }
    // Rust accepts the same decimal grammar as Python here, but also
    // spellings Python rejects are excluded by requiring digits/./e only.
    if body.is_empty()
        || !body
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    t.parse::<f64>().ok()
}

/// `int(v)` for a JSON value: integers as is, floats truncated toward
/// zero, booleans 0/1, numeric strings via [`python_int`]. `None` for
/// anything else (null, arrays, objects, non-finite floats).
#[must_use]
pub fn python_int_of_value(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(i)
            } else {
                let f = n.as_f64()?;
                let t = f.trunc();
                // i64 range check: values outside it are not representable.
                (-9.223_372_036_854_776e18..9.223_372_036_854_776e18)
                    .contains(&t)
                    .then_some(t as i64)
            }
        }
        Value::Bool(b) => Some(i64::from(*b)),
        Value::String(s) => python_int(s),
        _ => None,
    }
}

/// `float(v)` for a JSON value: numbers, booleans (1.0/0.0) and numeric
/// strings via [`python_float`].
#[must_use]
pub fn python_float_of_value(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::String(s) => python_float(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn int_accepts_python_spellings() {
        assert_eq!(python_int(" 8 "), Some(8));
        assert_eq!(python_int("+4"), Some(4));
        assert_eq!(python_int("-2"), Some(-2));
        assert_eq!(python_int("1_000"), Some(1000));
        assert_eq!(python_int("007"), Some(7));
    }

    #[test]
    fn int_rejects_non_integers() {
        for bad in [
            "", " ", "3.0", "1e3", "_1", "1_", "1__0", "0x10", "--1", "four",
        ] {
            assert_eq!(python_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn float_accepts_python_spellings() {
        assert_eq!(python_float(" 12.5 "), Some(12.5));
        assert_eq!(python_float("1e3"), Some(1000.0));
        assert_eq!(python_float(".5"), Some(0.5));
        assert_eq!(python_float("5."), Some(5.0));
        assert_eq!(python_float("1_0.5"), Some(10.5));
        assert_eq!(python_float("-inf"), Some(f64::NEG_INFINITY));
        assert!(python_float("NaN").is_some_and(f64::is_nan));
        for bad in ["", "abc", "1.2.3x", "--1", "0x1p3", "1,5"] {
            assert_eq!(python_float(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn json_values_convert_like_python() {
        assert_eq!(python_int_of_value(&json!(64.9)), Some(64));
        assert_eq!(python_int_of_value(&json!(-3.7)), Some(-3));
        assert_eq!(python_int_of_value(&json!("64")), Some(64));
        assert_eq!(python_int_of_value(&json!(true)), Some(1));
        assert_eq!(python_int_of_value(&json!(null)), None);
        assert_eq!(python_int_of_value(&json!("64.0")), None);
        assert_eq!(python_float_of_value(&json!("2.5")), Some(2.5));
        assert_eq!(python_float_of_value(&json!(3)), Some(3.0));
        assert_eq!(python_float_of_value(&json!(null)), None);
        assert_eq!(python_float_of_value(&json!([1])), None);
    }
}
