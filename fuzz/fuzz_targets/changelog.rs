//! The changelog path: `git diff` output parsing
//! (`sweep_changelog::diff::parse`) and, when the bytes are a YAML list,
//! each item through the entry schema (`ChangelogEntry::from_value`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use sweep_model::changelog::ChangelogEntry;

fuzz_target!(|data: &[u8]| {
    let _ = sweep_changelog::diff::parse(data);
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(doc) = sweep_model::yaml::parse_str(text)
        && let Value::Array(items) = doc.into_value()
    {
        for item in &items {
            if let Ok(entry) = ChangelogEntry::from_value(item) {
                let _ = entry.to_json();
            }
        }
    }
});
