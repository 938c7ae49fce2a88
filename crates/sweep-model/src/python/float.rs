//! Python's `repr(float)`.

/// Python `repr(x)` for a float: the shortest digits that round-trip, in
/// positional notation for decimal exponents -4..16 (always with a
/// fractional part: `0.9`, `1.0`) and scientific otherwise (`1e-05`,
/// `1.5e+16`); `nan`, `inf`, `-inf` and `-0.0` as Python spells them.
/// (`json.dumps` spells the non-finite values differently: see
/// [`super::json`].)
#[must_use]
pub fn python_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // Rust's `{:e}` gives the same shortest round-trip digits as Python,
    // e.g. `1.5e-5`; only the layout differs.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        // Rust's `Display` is positional with the same shortest digits.
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

    #[test]
    fn floats_print_like_python_repr() {
        for (x, want) in [
            (1.0, "1.0"),
            (2.0, "2.0"),
            (0.9, "0.9"),
            (0.94, "0.94"),
            (2.78, "2.78"),
            (100.0, "100.0"),
            (123_456.5, "123456.5"),
            (1e-7, "1e-07"),
            (1e-5, "1e-05"),
            (1.5e-5, "1.5e-05"),
            (-2.5e-7, "-2.5e-07"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1e15, "1000000000000000.0"),
            (-0.5, "-0.5"),
            (-0.0, "-0.0"),
            (f64::NAN, "nan"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(python_float_repr(x), want, "{x}");
        }
    }
}
