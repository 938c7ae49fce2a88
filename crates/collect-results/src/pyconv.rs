//! Number conversions with the semantics of Python's `int()` and `float()`,
//! which the reference applies to environment values and benchmark fields.
//! Matching them decides which inputs are accepted (`" 8 "`, `"1_000"`,
//! `"+4"`, numeric strings in JSON) and how values are rounded (`int(64.9)`
//! truncates).

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
pub fn parse_int(s: &str) -> Option<i64> {
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
pub fn parse_float(s: &str) -> Option<f64> {
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
/// zero, booleans 0/1, numeric strings via [`parse_int`]. `None` for
/// anything else (null, arrays, objects, non-finite floats).
pub fn value_to_int(v: &Value) -> Option<i64> {
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
        Value::String(s) => parse_int(s),
        _ => None,
    }
}

/// `float(v)` for a JSON value: numbers, booleans (1.0/0.0) and numeric
/// strings via [`parse_float`].
pub fn value_to_float(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::String(s) => parse_float(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn int_accepts_python_spellings() {
        assert_eq!(parse_int(" 8 "), Some(8));
        assert_eq!(parse_int("+4"), Some(4));
        assert_eq!(parse_int("-2"), Some(-2));
        assert_eq!(parse_int("1_000"), Some(1000));
        assert_eq!(parse_int("007"), Some(7));
    }

    #[test]
    fn int_rejects_non_integers() {
        for bad in [
            "", " ", "3.0", "1e3", "_1", "1_", "1__0", "0x10", "--1", "four",
        ] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn float_accepts_python_spellings() {
        assert_eq!(parse_float(" 12.5 "), Some(12.5));
        assert_eq!(parse_float("1e3"), Some(1000.0));
        assert_eq!(parse_float(".5"), Some(0.5));
        assert_eq!(parse_float("5."), Some(5.0));
        assert_eq!(parse_float("1_0.5"), Some(10.5));
        assert_eq!(parse_float("-inf"), Some(f64::NEG_INFINITY));
        assert!(parse_float("NaN").is_some_and(f64::is_nan));
        for bad in ["", "abc", "1.2.3x", "--1", "0x1p3", "1,5"] {
            assert_eq!(parse_float(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn json_values_convert_like_python() {
        assert_eq!(value_to_int(&json!(64.9)), Some(64));
        assert_eq!(value_to_int(&json!(-3.7)), Some(-3));
        assert_eq!(value_to_int(&json!("64")), Some(64));
        assert_eq!(value_to_int(&json!(true)), Some(1));
        assert_eq!(value_to_int(&json!(null)), None);
        assert_eq!(value_to_int(&json!("64.0")), None);
        assert_eq!(value_to_float(&json!("2.5")), Some(2.5));
        assert_eq!(value_to_float(&json!(3)), Some(3.0));
        assert_eq!(value_to_float(&json!(null)), None);
        assert_eq!(value_to_float(&json!([1])), None);
    }
}

/// Python's `repr(float)`: the shortest round-trip digits, in positional
/// notation for decimal exponents -4..16 (always with a fractional part,
/// `0.9`, `1.0`) and scientific otherwise (`1e-05`, `1.5e+16`).
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp < 0 {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        } else if exp + 1 >= n {
            format!("{}{}.0", digits, "0".repeat((exp + 1 - n) as usize))
        } else {
            let (int, frac) = digits.split_at((exp + 1) as usize);
            format!("{int}.{frac}")
        };
        format!("{sign}{body}")
    } else {
        let (first, rest) = digits.split_at(1);
        let mant = if rest.is_empty() {
            first.to_owned()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

/// Python's `str()` of a JSON value as the reference's f-strings print it:
/// strings as is, `True`/`False`/`None`, floats via [`float_repr`].
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Null => "None".to_owned(),
        Value::Number(n) => match n.as_i64().map(|i| i.to_string()) {
            Some(s) if !n.is_f64() => s,
            _ => n.as_f64().map_or_else(|| n.to_string(), float_repr),
        },
        other => other.to_string(),
    }
}

/// `str(pathlib.Path(p))`: repeated and trailing slashes and `.`
/// components dropped, `""` becomes `"."`.
pub fn py_path(p: &str) -> String {
    let absolute = p.starts_with('/');
    let parts: Vec<&str> = p
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// `str(Path(dir) / name)` for an already normalised `dir`.
pub fn py_join(dir: &str, name: &str) -> String {
    match dir {
        "." => name.to_owned(),
        "/" => format!("/{name}"),
        _ => format!("{dir}/{name}"),
    }
}

#[cfg(test)]
mod repr_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn float_repr_matches_python() {
        assert_eq!(float_repr(0.94), "0.94");
        assert_eq!(float_repr(0.9), "0.9");
        assert_eq!(float_repr(1.0), "1.0");
        assert_eq!(float_repr(123456.5), "123456.5");
        assert_eq!(float_repr(0.0001), "0.0001");
        assert_eq!(float_repr(0.00001), "1e-05");
        assert_eq!(float_repr(1.5e16), "1.5e+16");
        assert_eq!(float_repr(1e15), "1000000000000000.0");
        assert_eq!(float_repr(-2.5e-7), "-2.5e-07");
    }

    #[test]
    fn py_str_and_paths() {
        assert_eq!(py_str(&json!(true)), "True");
        assert_eq!(py_str(&json!(null)), "None");
        assert_eq!(py_str(&json!(3)), "3");
        assert_eq!(py_str(&json!(3.0)), "3.0");
        assert_eq!(py_path("eval_results/"), "eval_results");
        assert_eq!(py_path("./a//b/."), "a/b");
        assert_eq!(py_path(""), ".");
        assert_eq!(py_path("/x/"), "/x");
        assert_eq!(py_join(".", "f.json"), "f.json");
        assert_eq!(py_join("a", "f.json"), "a/f.json");
    }
}
