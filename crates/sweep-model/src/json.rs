//! Compact JSON text of a [`serde_json::Value`], byte for byte what
//! `serde_json::to_string` writes, optionally with object keys sorted (the
//! canonical form used to compare values). Strings with nothing to escape,
//! nearly all of them, are found eight bytes at a time and copied whole;
//! the rest are escaped by `serde_json` itself.

use serde_json::Value;

/// Whether any of the eight bytes in `x` is `"`, `\\` or below 0x20 (the
/// bytes that end a plain run inside a JSON string).
#[must_use]
pub fn has_special(x: u64) -> bool {
    special_mask(x) != 0
}

/// The bytes of `x` (little-endian) that are `"`, `\\` or below 0x20, as
/// 0x80 in their byte of the result; its lowest set bit marks exactly the
/// first such byte (`trailing_zeros() / 8` is its index). Bits above the
/// first special byte may be set spuriously (the usual borrow of the
/// zero-byte test), never below it, and the result is zero iff no byte is
/// special: `(v - 0x01…) & !v & 0x80…` is nonzero iff some byte of `v` is
/// zero, and with 0x20 in place of 0x01 iff some byte is below 0x20.
#[must_use]
pub fn special_mask(x: u64) -> u64 {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let quote = zero(x ^ (ONES * u64::from(b'"')));
    let backslash = zero(x ^ (ONES * u64::from(b'\\')));
    let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
    quote | backslash | control
}

/// Whether a JSON string of `s` needs any escape.
#[must_use]
pub fn needs_escape(s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        if has_special(u64::from_le_bytes(a)) {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Appends `s` as a JSON string.
pub fn write_str(s: &str, out: &mut Vec<u8>) {
    if needs_escape(s) {
        // Rare in matrix rows: let serde_json do the escaping.
        let _ = serde_json::to_writer(&mut *out, s);
    } else {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

/// Appends the compact JSON text of `v`; with `sort_keys`, object keys in
/// byte order at every level.
pub fn write_value(v: &Value, sort_keys: bool, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
            (None, Some(u)) => out.extend_from_slice(itoa::Buffer::new().format(u).as_bytes()),
            _ => out.extend_from_slice(n.to_string().as_bytes()),
        },
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, sort_keys, out);
            }
            out.push(b']');
        }
        Value::Object(m) if sort_keys => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            write_entries(entries.into_iter(), sort_keys, out);
        }
        Value::Object(m) => write_entries(m.iter(), sort_keys, out),
    }
}

/// `{…}` of `entries`.
fn write_entries<'a>(
    entries: impl Iterator<Item = (&'a String, &'a Value)>,
    sort_keys: bool,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    for (i, (k, x)) in entries.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(k, out);
        out.push(b':');
        write_value(x, sort_keys, out);
    }
    out.push(b'}');
}

/// The compact JSON text of `v` with object keys sorted.
#[must_use]
pub fn canonical(v: &Value) -> String {
    let mut s = Vec::new();
    write_value(v, true, &mut s);
    into_string(s)
}

/// Text written by this module as a `String`. It is UTF-8 by construction
/// (only `&str` and ASCII are ever appended); the check is kept rather than
/// `unsafe`, and would turn a bug into U+FFFD, never into invalid UTF-8.
#[must_use]
pub fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn has_special_finds_exactly_the_bytes_that_end_a_plain_run() {
        // Every byte value at every position of an otherwise plain word.
        for pos in 0..8 {
            for b in 0..=255u8 {
                let mut w = *b"abcdefgh";
                w[pos] = b;
                let want = b < 0x20 || b == b'"' || b == b'\\';
                assert_eq!(
                    has_special(u64::from_le_bytes(w)),
                    want,
                    "{b:#04x} at {pos}"
                );
            }
        }
        // Mixed words: one pseudo-random stream, compared with the plain test.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let want = x
                .to_le_bytes()
                .iter()
                .any(|&b| b < 0x20 || b == b'"' || b == b'\\');
            assert_eq!(has_special(x), want, "{x:#018x}");
        }
    }

    #[test]
    fn special_mask_marks_the_first_special_byte_exactly() {
        let special = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let first = x.to_le_bytes().iter().position(|&b| special(b));
            let m = special_mask(x);
            assert_eq!(
                (m != 0).then(|| (m.trailing_zeros() / 8) as usize),
                first,
                "{x:#018x}"
            );
        }
        for pos in 0..8 {
            for b in 0..=255u8 {
                let mut w = *b"abcdefgh";
                w[pos] = b;
                let m = special_mask(u64::from_le_bytes(w));
                let want = special(b).then_some(pos);
                assert_eq!((m != 0).then(|| (m.trailing_zeros() / 8) as usize), want);
            }
        }
    }

    #[test]
    fn unsorted_output_is_serde_json_compact_text() {
        let v = json!({
            "z": 1, "a": [true, false, null, -5, 18446744073709551615u64, 1.5, 1e300, 0.1],
            "nested": {"k": "v", "é": "ünïcode", "e\"sc": "line\nbreak\ttab\\ \u{1} \u{7f}"},
            "long plain string that crosses several words": "0123456789abcdef0123",
            "": ""
        });
        let mut out = Vec::new();
        write_value(&v, false, &mut out);
        assert_eq!(into_string(out), serde_json::to_string(&v).unwrap());
    }

    #[test]
    fn sorted_output_sorts_keys_at_every_level() {
        assert_eq!(
            canonical(&json!({"b":1,"a":{"d":[1,{"y":2,"x":3}],"c":null}})),
            r#"{"a":{"c":null,"d":[1,{"x":3,"y":2}]},"b":1}"#
        );
    }

    #[test]
    fn escape_check_agrees_with_the_plain_test_at_every_length() {
        for len in 0..24 {
            for pos in 0..len {
                for b in [b'"', b'\\', b'\n', 0x1f, 0x20, b'a', 0x7f] {
                    let mut s = vec![b'x'; len];
                    s[pos] = b;
                    let s = String::from_utf8(s).unwrap();
                    let want = b < 0x20 || b == b'"' || b == b'\\';
                    assert_eq!(needs_escape(&s), want, "{s:?}");
                }
            }
        }
    }
}
