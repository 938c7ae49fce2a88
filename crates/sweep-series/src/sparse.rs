//! Lines read for their series only: of each row, the identity fields
//! ([`crate::series::IDENTITY`]), the image and every numeric field (the
//! metrics); the rest of the row (strings, lists, objects a series never
//! reads) is checked as JSON and dropped without being kept. A comparison
//! or a change-point scan over a large history reads hundreds of thousands
//! of ~2 KB rows, and building every field of each as a `Value` was most of
//! its time (issue #35's bench). The store's rules are the same: a line
//! that is not JSON, or not a line of the store, is corrupt.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::series::IDENTITY;
use crate::store::{Kind, Line, RunRef};

/// A line of a series file as a series reads it (see the module).
#[derive(Debug, Deserialize)]
pub(crate) struct SparseLine {
    v: u32,
    run: RunRef,
    kind: Kind,
    row: SparseRow,
}

impl From<SparseLine> for Line {
    fn from(l: SparseLine) -> Line {
        Line {
            v: l.v,
            run: l.run,
            kind: l.kind,
            row: l.row.0,
        }
    }
}

/// The kept fields of a row.
#[derive(Debug)]
pub(crate) struct SparseRow(Map<String, Value>);

/// A key, borrowed from the line when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// A field's value when it is a number; anything else is read and dropped.
struct Number(Option<f64>);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Number, E> {
                Ok(Number(Some(v as f64)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number(Some(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Number, E> {
                Ok(Number(Some(v)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Number, E> {
                Ok(Number(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Number, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Number(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Number, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Number(None))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for SparseRow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SparseRow;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a row object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<SparseRow, A::Error> {
                let mut out = Map::new();
                while let Some(Key(k)) = m.next_key::<Key<'de>>()? {
                    if k == "image" || IDENTITY.contains(&k.as_ref()) {
                        let v = m.next_value::<Value>()?;
                        out.insert(k.into_owned(), v);
                    } else if let Number(Some(v)) = m.next_value::<Number>()? {
                        out.insert(k.into_owned(), Value::from(v));
                    }
                }
                Ok(SparseRow(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparse_row_keeps_identity_image_and_numbers_only() {
        let text = r#"{"hw":"b200","conc":4,"image":"img:1","model":"org/m","tput_per_gpu":10.5,
            "extra":{"a":[1,2]},"list":[1,"x"],"flag":true,"none":null,"esc\u0061ped":2}"#;
        let SparseRow(row) = serde_json::from_str(text).expect("a row");
        let keys: Vec<&str> = row.keys().map(String::as_str).collect();
        assert_eq!(keys, ["hw", "conc", "image", "tput_per_gpu", "escaped"]);
        assert_eq!(row["tput_per_gpu"], 10.5);
        assert_eq!(row["conc"], 4);
        assert!(serde_json::from_str::<SparseRow>(r#"{"hw": }"#).is_err());
    }
}
