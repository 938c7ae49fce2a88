//! The YAML loader (`sweep_model::yaml::parse_str`, the entry point every
//! config, runner and changelog file goes through): any bytes must give a
//! document or an error, never a panic, a hang or unbounded memory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(doc) = sweep_model::yaml::parse_str(text)
    {
        let _ = doc.into_value();
    }
});
