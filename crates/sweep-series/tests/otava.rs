//! Agreement with Apache Otava on the planted-series corpus
//! (`tests/otava/cases.json`, recorded by `scripts/record-otava-cases`):
//! every series of the corpus gives the change points Otava gave (the same
//! number, each index within ±1, the same significance decision), and the
//! planted steps are found.

use serde_json::Value;
use sweep_series::change_point::{Options, change_points};

struct Case {
    name: String,
    kind: String,
    series: Vec<f64>,
    planted: Vec<usize>,
    otava: Vec<usize>,
    otava_pvalues: Vec<f64>,
}

fn cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/otava/cases.json");
    let text = std::fs::read_to_string(path).expect("the recorded corpus");
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    let index = |v: &Value| v.as_u64().expect("an index") as usize;
    doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().expect("name").to_string(),
            kind: c["kind"].as_str().expect("kind").to_string(),
            series: c["series"]
                .as_array()
                .expect("series")
                .iter()
                .map(|v| v.as_f64().expect("a number"))
                .collect(),
            planted: c["planted"]
                .as_array()
                .expect("planted")
                .iter()
                .map(index)
                .collect(),
            otava: c["otava"]
                .as_array()
                .expect("otava")
                .iter()
                .map(|p| index(&p["index"]))
                .collect(),
            otava_pvalues: c["otava"]
                .as_array()
                .expect("otava")
                .iter()
                .map(|p| p["pvalue"].as_f64().expect("a p-value"))
                .collect(),
        })
        .collect()
}

fn within_one(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.abs_diff(*y) <= 1)
}

#[test]
fn change_points_agree_with_otava_on_every_recorded_series() {
    let cases = cases();
    assert!(cases.len() >= 80, "the corpus holds {} series", cases.len());
    let mut disagree = Vec::new();
    let mut same_pvalue = 0;
    for c in &cases {
        let found = change_points(&c.series, &Options::default());
        let ours: Vec<usize> = found.iter().map(|p| p.index).collect();
        if !within_one(&ours, &c.otava) {
            disagree.push(format!(
                "{}: sweepkit {ours:?}, Otava {:?}",
                c.name, c.otava
            ));
            continue;
        }
        // Where the index is the same, so is the test: the p-value to a
        // relative 1e-6 (or both below 1e-12).
        for ((p, &index), &pvalue) in found.iter().zip(&c.otava).zip(&c.otava_pvalues) {
            if p.index == index {
                let close = (p.stats.pvalue - pvalue).abs() <= 1e-6 * pvalue.abs()
                    || (p.stats.pvalue < 1e-12 && pvalue < 1e-12);
                if close {
                    same_pvalue += 1;
                } else {
                    disagree.push(format!(
                        "{} at {index}: p-value {} vs Otava {pvalue}",
                        c.name, p.stats.pvalue
                    ));
                }
            }
        }
    }
    println!("otava p-values equal at {same_pvalue} change points");
    println!(
        "otava agreement: {} of {} series",
        cases.len() - disagree.len(),
        cases.len()
    );
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

#[test]
fn planted_steps_are_found_and_noise_false_positives_are_counted() {
    let cases = cases();
    let (mut planted, mut found) = (0, 0);
    let (mut noise_series, mut noise_with_a_point) = (0, 0);
    for c in &cases {
        let ours: Vec<usize> = change_points(&c.series, &Options::default())
            .iter()
            .map(|p| p.index)
            .collect();
        for p in &c.planted {
            planted += 1;
            if ours.iter().any(|o| o.abs_diff(*p) <= 1) {
                found += 1;
            }
        }
        if c.kind == "noise" {
            noise_series += 1;
            if !ours.is_empty() {
                noise_with_a_point += 1;
            }
        }
    }
    println!(
        "planted steps found: {found} of {planted}; noise-only series with a change point: {noise_with_a_point} of {noise_series}"
    );
    // Every planted step of at least three noise deviations is found.
    assert!(found * 100 >= planted * 95, "{found} of {planted}");
    assert!(
        noise_with_a_point * 4 <= noise_series,
        "{noise_with_a_point} of {noise_series}"
    );
}
