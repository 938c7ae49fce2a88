//! [`RawMasters`]: a borrowed view of the merged raw master-config mapping,
//! shared by the changelog pipeline (key resolution) and the append-only
//! rules (scope comparison of base and head), so neither module depends on
//! the other for it.

use serde_json::{Map, Value};
use std::collections::HashMap;

/// A borrowed view of the merged raw master mapping (keys in merged order),
/// so the pipeline never deep-copies the configs.
#[derive(Debug, Clone, Default)]
pub struct RawMasters<'a> {
    order: Vec<&'a str>,
    map: HashMap<&'a str, &'a Value>,
}

impl<'a> RawMasters<'a> {
    /// From (key, raw value) pairs in merged order.
    pub fn new(entries: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Self {
        let mut out = RawMasters::default();
        for (k, v) in entries {
            if out.map.insert(k, v).is_none() {
                out.order.push(k);
            }
        }
        out
    }

    /// A view of a JSON mapping.
    pub fn from_map(map: &'a Map<String, Value>) -> Self {
        Self::new(map.iter().map(|(k, v)| (k.as_str(), v)))
    }

    /// Keys in merged order.
    pub fn keys(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.order.iter().copied()
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).copied()
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }
}
