//! A new point judged against its own series in the history (what
//! `compare-results --baseline history` reports per row).

use serde_json::{Map, Value};
use sweep_series::baseline::{Fallback, judge};
use sweep_series::boundary::Settings;
use sweep_series::change_point::Options;
use sweep_series::store::{Run, RunRef, Store};

const SEED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/conformance/fixtures/seed-compare"
);

/// The seed's first baseline row with its throughputs scaled by `f`.
fn row(f: f64) -> Map<String, Value> {
    let text = std::fs::read_to_string(format!("{SEED}/baseline/agg_bmk.json")).expect("fixture");
    let rows: Vec<Map<String, Value>> = serde_json::from_str(&text).expect("rows");
    let mut r = rows[0].clone();
    for k in ["tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu"] {
        let v = r[k].as_f64().expect("a number") * f;
        r.insert(k.into(), Value::from(v));
    }
    r
}

fn history(levels: &[f64]) -> (test_kit::TempDir, Store) {
    let dir = test_kit::temp_dir();
    let store = Store::new(dir.path());
    for (i, level) in levels.iter().enumerate() {
        let id = i as u64 + 1;
        store
            .append(&Run {
                run: RunRef {
                    run_id: id,
                    attempt: 1,
                    commit: format!("{id:040x}"),
                    date: format!("2026-11-01T{:02}:{:02}:00Z", id / 60, id % 60),
                    pr: Some(100 + id),
                },
                repo: "acme/bench".into(),
                event: "push".into(),
                benchmarks: vec![row(*level)],
                evals: Vec::new(),
            })
            .expect("append");
    }
    (dir, store)
}

/// ±8 % around 1.0, fixed so the test reads the same every time.
const NOISY: &[f64] = &[
    1.06, 0.93, 1.02, 0.95, 1.08, 0.97, 1.01, 0.92, 1.05, 0.99, 1.07, 0.94,
];

fn tput(judged: &[sweep_series::baseline::Judged]) -> &sweep_series::baseline::Judged {
    judged
        .iter()
        .find(|j| j.metric == "tput_per_gpu")
        .expect("tput judged")
}

#[test]
fn a_noisy_but_stable_series_does_not_flag_what_a_fixed_tolerance_would() {
    let (_dir, store) = history(NOISY);
    let s = Settings::default();
    let judged = judge(&store, &[row(0.93)], &s, &Options::default()).expect("judge");
    let j = tput(&judged);
    let (b, verdict) = j.verdict.expect("a learnt boundary");
    // 7 % under the series' mean: past today's 5 % tolerance, within the
    // series' own noise.
    assert!(j.value / b.mean - 1.0 < -0.05, "{b:?}");
    assert!(
        !verdict.regressed && verdict.percent_of_limit < 100.0,
        "{verdict:?}"
    );
    assert_eq!((j.samples, j.runs.len()), (12, 5));
    assert_eq!(j.runs.last().map(|r| r.run_id), Some(12));
    // A real drop is past the boundary.
    let judged = judge(&store, &[row(0.75)], &s, &Options::default()).expect("judge");
    assert!(tput(&judged).verdict.expect("boundary").1.regressed);
}

#[test]
fn too_little_history_or_another_hardware_falls_back_and_says_why() {
    let (_dir, store) = history(&[1.0, 1.01, 0.99]);
    let s = Settings::default();
    let judged = judge(&store, &[row(0.9)], &s, &Options::default()).expect("judge");
    assert_eq!(
        tput(&judged).verdict,
        Err(Fallback::TooFew { have: 3, need: 5 })
    );
    assert_eq!(
        Fallback::TooFew { have: 3, need: 5 }.to_string(),
        "3 of the 5 main runs a learnt boundary needs"
    );
    let mut other = row(1.0);
    other.insert("hw".into(), Value::from("h100"));
    let judged = judge(&store, &[other], &s, &Options::default()).expect("judge");
    assert_eq!(tput(&judged).verdict, Err(Fallback::NoSeries));
}

#[test]
fn the_boundary_is_learnt_since_the_series_last_change_point() {
    // Twenty runs at 1.0, then twelve at 0.8 (a change main took): the new
    // level is the baseline, so 0.8 is not a regression and 1.0 is an
    // improvement, not the mean.
    let mut levels: Vec<f64> = (0..20).map(|i| 1.0 + 0.003 * f64::from(i % 3)).collect();
    levels.extend((0..12).map(|i| 0.8 + 0.003 * f64::from(i % 3)));
    let (_dir, store) = history(&levels);
    let s = Settings::default();
    let judged = judge(&store, &[row(0.8)], &s, &Options::default()).expect("judge");
    let j = tput(&judged);
    assert_eq!(j.samples, 12);
    let (b, verdict) = j.verdict.expect("boundary");
    assert!((b.mean / (row(0.8)["tput_per_gpu"].as_f64().expect("n")) - 1.0).abs() < 0.01);
    assert!(!verdict.regressed);
}
