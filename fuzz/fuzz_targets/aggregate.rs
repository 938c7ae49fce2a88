//! `collect-results aggregate` over a results tree holding the fuzz input
//! as one result file (plus a fixed valid one); the run also counts the
//! step-summary groups.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let results = dir.path().join("results");
    let leg = results.join("bmk_leg");
    if std::fs::create_dir_all(&leg).is_err()
        || std::fs::write(leg.join("a.json"), data).is_err()
        || std::fs::write(results.join("b.json"), br#"{"hw": "b200", "conc": 4}"#).is_err()
    {
        return;
    }
    let _ = collect_results::aggregate::run(&results, "fuzz", dir.path(), None);
});
