//! The one JSON parser of sweepkit's inputs: `serde_json` with a key
//! written twice in one object refused.
//!
//! serde_json keeps the last of two equal keys without a word, so a result
//! file, an aggregate, a baseline or a thresholds file could say two
//! things about one figure and the reader would pick one silently. Here
//! the [`Value`] is built by a visitor that looks each key up in the object
//! it is filling (an `IndexMap`: no second set of keys) and fails on the
//! second one, naming the key's path (`$.rows[3].tput_per_gpu`); serde_json
//! adds the line and column. Everything else is serde_json's own parsing:
//! its numbers, its string rules, its recursion limit (128 levels, which
//! keeps this visitor's recursion within the stack as well).

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Parses JSON text into a [`Value`], refusing a key that appears twice
/// in one object.
///
/// # Errors
/// serde_json's errors (with line and column), and a duplicate key, named
/// by its path, as `duplicate key "k" at $.a[2].k`.
pub fn parse_value(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Node { parent: None }.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// [`parse_value`] of a string.
///
/// # Errors
/// As [`parse_value`].
pub fn parse_str(text: &str) -> Result<Value, serde_json::Error> {
    parse_value(text.as_bytes())
}

/// Whether a serde_json error is this module's duplicate-key error.
#[must_use]
pub fn is_duplicate_key(e: &serde_json::Error) -> bool {
    e.to_string().starts_with(DUPLICATE)
}

const DUPLICATE: &str = "duplicate key ";

/// Where a node sits: the path from the root, as a linked list of the
/// visitors' frames (built only when an error names it).
enum Seg<'a> {
    Key(&'a str, Option<&'a Seg<'a>>),
    Index(usize, Option<&'a Seg<'a>>),
}

fn path(seg: Option<&Seg<'_>>) -> String {
    let mut parts = Vec::new();
    let mut cur = seg;
    while let Some(s) = cur {
        match s {
            Seg::Key(k, p) => {
                let simple = !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                parts.push(if simple {
                    format!(".{k}")
                } else {
                    format!("[{}]", Value::String((*k).to_owned()))
                });
                cur = *p;
            }
            Seg::Index(i, p) => {
                parts.push(format!("[{i}]"));
                cur = *p;
            }
        }
    }
    parts.reverse();
    format!("${}", parts.concat())
}

/// Deserialises one node at a known place.
struct Node<'a> {
    parent: Option<&'a Seg<'a>>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        // serde_json only hands over finite floats; keep its `null` for
        // anything else, as its own Value does.
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            let seg = Seg::Index(items.len(), self.parent);
            match seq.next_element_seed(Node { parent: Some(&seg) })? {
                Some(v) => items.push(v),
                None => break,
            }
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let seg = Seg::Key(&key, self.parent);
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "{DUPLICATE}{} at {}: each key may appear once in an object",
                    Value::String(key.clone()),
                    path(Some(&seg))
                )));
            }
            let value = map.next_value_seed(Node { parent: Some(&seg) })?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_what_serde_json_parses() {
        let text = r#"{"b": [1, -2, 3.5, 1e300, 18446744073709551615, "s", null, true, {}],
                       "a": {"x": {"y": []}}}"#;
        let want: Value = serde_json::from_str(text).expect("serde_json");
        let got = parse_str(text).expect("strict");
        assert_eq!(got, want);
        // Key order is kept (preserve_order).
        assert_eq!(
            serde_json::to_string(&got).expect("s"),
            serde_json::to_string(&want).expect("s")
        );
        assert_eq!(parse_str("  7 ").expect("scalar"), json!(7));
    }

    #[test]
    fn a_key_twice_in_one_object_is_refused_with_its_path_and_line() {
        let e = parse_str("{\"a\": 1, \"a\": 2}").expect_err("dup");
        assert!(is_duplicate_key(&e), "{e}");
        assert_eq!(e.line(), 1);
        assert!(e.to_string().contains("duplicate key \"a\" at $.a"), "{e}");
        let e =
            parse_str("[{\"ok\": 1}, {\"rows\": [{\"t p\": 1,\n \"t p\": 1}]}]").expect_err("dup");
        assert!(
            e.to_string()
                .contains(r#"duplicate key "t p" at $[1].rows[0]["t p"]"#),
            "{e}"
        );
        assert_eq!(e.line(), 2);
        // The same key in two objects is fine.
        parse_str(r#"[{"a": 1}, {"a": 2}, {"b": {"a": 3}, "a": 4}]"#).expect("distinct objects");
    }

    #[test]
    fn other_errors_are_serde_json_s() {
        let e = parse_str("{\"a\": }").expect_err("bad");
        assert!(!is_duplicate_key(&e));
        assert_eq!(e.column(), 7);
        assert!(parse_str("1 2").is_err(), "trailing characters");
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let e = parse_str(&deep).expect_err("deep");
        assert!(e.to_string().starts_with("recursion limit exceeded"), "{e}");
        assert!(parse_value(b"\"\xff\"").is_err(), "not UTF-8");
    }
}
