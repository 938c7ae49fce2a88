//! The history store on real aggregate rows (the seed comparison's
//! `agg_bmk.json` and `agg_eval_all.json`): appends, idempotency, what
//! `verify` refuses, and what the series learnt from it say.

use serde_json::{Map, Value};
use sweep_series::boundary::{Settings, learn};
use sweep_series::change_point::Options;
use sweep_series::changes::{changes, new_since};
use sweep_series::series::{Better, series};
use sweep_series::store::{Appended, Run, RunRef, Store, StoreError};

const SEED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/conformance/fixtures/seed-compare"
);

fn rows(file: &str) -> Vec<Map<String, Value>> {
    let text = std::fs::read_to_string(format!("{SEED}/{file}")).expect("fixture");
    match serde_json::from_str(&text).expect("JSON") {
        Value::Array(a) => a
            .into_iter()
            .map(|v| match v {
                Value::Object(m) => m,
                _ => panic!("a row"),
            })
            .collect(),
        _ => panic!("an array"),
    }
}

fn run(id: u64, rows: Vec<Map<String, Value>>) -> Run {
    Run {
        run: RunRef {
            run_id: id,
            attempt: 1,
            commit: format!("{id:040x}"),
            // Minutes apart, in run order (the series are ordered by date).
            date: format!("2026-11-01T{:02}:{:02}:00Z", id / 60, id % 60),
            pr: Some(1000 + id),
        },
        repo: "acme/bench".into(),
        event: "push".into(),
        benchmarks: rows,
        evals: Vec::new(),
    }
}

/// The baseline rows with every throughput scaled by `f`.
fn scaled(f: f64) -> Vec<Map<String, Value>> {
    rows("baseline/agg_bmk.json")
        .into_iter()
        .map(|mut r| {
            for k in ["tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu"] {
                let v = r[k].as_f64().expect("a number") * f;
                r.insert(k.into(), Value::from(v));
            }
            r
        })
        .collect()
}

#[test]
fn an_append_lands_once_and_verify_counts_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = Store::new(dir.path());
    let mut first = run(1, rows("baseline/agg_bmk.json"));
    first.evals = rows("new/agg_eval_all.json");
    let Appended::Added { files } = store.append(&first).expect("append") else {
        panic!("added")
    };
    assert!(
        files.iter().any(|f| f.starts_with("series/b200/")),
        "{files:?}"
    );
    assert!(
        files.iter().any(|f| f.starts_with("evals/b200/")),
        "{files:?}"
    );
    assert_eq!(store.append(&first).expect("again"), Appended::AlreadyThere);
    let v = store.verify().expect("verify");
    assert_eq!(
        (v.runs, v.lines),
        (1, first.benchmarks.len() + first.evals.len())
    );
    // The same run id with other rows is refused, and nothing is written.
    let before = store.verify().expect("verify");
    let other = run(1, scaled(1.1));
    assert!(matches!(
        store.append(&other),
        Err(StoreError::Conflict { run_id: 1, .. })
    ));
    assert_eq!(store.verify().expect("verify"), before);
}

#[test]
fn a_corrupt_line_is_named_by_file_and_line_and_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = Store::new(dir.path());
    store
        .append(&run(1, rows("baseline/agg_bmk.json")))
        .expect("append");
    let file = store.files().expect("files").remove(0);
    let path = dir.path().join(&file);
    let good = std::fs::read_to_string(&path).expect("read");
    std::fs::write(&path, format!("{good}{{\"v\":1,\"run\":\n")).expect("write");
    let err = store.verify().expect_err("corrupt").to_string();
    let lines = good.lines().count();
    assert!(
        err.starts_with(&format!("{}:{}: ", path.display(), lines + 1)),
        "{err}"
    );
    // Reading the series refuses it too, never skipping it.
    assert!(store.lines(&file).is_err());
    // A last line cut short (an append that died) is named as such.
    std::fs::write(&path, &good[..good.len() - 10]).expect("write");
    let err = store.verify().expect_err("cut").to_string();
    assert!(err.contains("no newline"), "{err}");
}

#[test]
fn rows_of_an_unfinished_append_are_orphans() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = Store::new(dir.path());
    store
        .append(&run(1, rows("baseline/agg_bmk.json")))
        .expect("append");
    store
        .append(&run(2, rows("baseline/agg_bmk.json")))
        .expect("append");
    // Take run 2 out of the index: its rows are now what an append that
    // died before its index line leaves.
    let index = dir.path().join("runs.jsonl");
    let text = std::fs::read_to_string(&index).expect("read");
    std::fs::write(
        &index,
        format!("{}\n", text.lines().next().expect("a line")),
    )
    .expect("write");
    let err = store.verify().expect_err("orphans").to_string();
    assert!(
        err.contains("run 2 attempt 1, which is not in runs.jsonl"),
        "{err}"
    );
}

#[test]
fn a_row_cannot_name_a_path_outside_its_folder() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = Store::new(dir.path());
    let mut bad = rows("baseline/agg_bmk.json");
    bad[1].insert("hw".into(), Value::from("../../etc"));
    let err = store.append(&run(1, bad)).expect_err("refused").to_string();
    assert!(
        err.starts_with("benchmarks[1]: \"../../etc\" cannot name a history file"),
        "{err}"
    );
    assert!(store.runs().expect("runs").is_empty());
    assert!(store.files().expect("files").is_empty());
}

/// Deterministic noise in [-1, 1).
fn noise(seed: u64) -> impl FnMut() -> f64 {
    let mut x = seed;
    move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

#[test]
fn a_noisy_but_stable_series_learns_a_boundary_that_a_fixed_tolerance_lacks() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = Store::new(dir.path());
    let mut e = noise(8);
    for id in 1..=12 {
        store
            .append(&run(id, scaled(1.0 + 0.08 * e())))
            .expect("append");
    }
    let file = store.files().expect("files").remove(0);
    let s = series(&store.lines(&file).expect("lines"));
    let settings = Settings::default();
    let (point, metrics) = s.iter().next().expect("a point");
    let tput: Vec<f64> = metrics["tput_per_gpu"].iter().map(|x| x.value).collect();
    assert_eq!(tput.len(), 12);
    let b = learn(&tput, Better::Higher, &settings).expect("a boundary");
    // A new value 7 % under the mean: today's fixed 5 % tolerance flags it;
    // the series' own noise says it is within what main does.
    let new = b.mean * 0.93;
    assert!(new / b.mean - 1.0 < -0.05);
    let j = b.judge(new, &settings);
    assert!(!j.regressed, "{point}: {b:?} {j:?}");
    // And no change point on the noise alone.
    assert!(changes(&s, &Options::default()).is_empty());
}

#[test]
fn a_three_percent_step_that_persists_for_five_runs_is_named_with_its_pr() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = Store::new(dir.path());
    let mut e = noise(3);
    for id in 1..=35u64 {
        let level = if id > 30 { 0.97 } else { 1.0 };
        store
            .append(&run(id, scaled(level * (1.0 + 0.005 * e()))))
            .expect("append");
    }
    let file = store.files().expect("files").remove(0);
    let s = series(&store.lines(&file).expect("lines"));
    let found = changes(&s, &Options::default());
    let tput: Vec<_> = found
        .iter()
        .filter(|c| c.metric == "tput_per_gpu")
        .collect();
    // One change per point of the configuration's file, each at run 31.
    assert_eq!(tput.len(), s.len(), "{found:#?}");
    for c in tput {
        assert_eq!((c.before.run_id, c.after.run_id), (30, 31));
        assert_eq!(c.after.pr, Some(1031));
        assert!((c.change + 0.03).abs() < 0.01, "{c:?}");
    }
}

#[test]
fn a_change_point_is_new_until_the_runs_before_the_cutoff_show_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = Store::new(dir.path());
    let mut e = noise(3);
    for id in 1..=40u64 {
        let level = if id > 30 { 0.97 } else { 1.0 };
        store
            .append(&run(id, scaled(level * (1.0 + 0.005 * e()))))
            .expect("append");
    }
    let file = store.files().expect("files").remove(0);
    let s = series(&store.lines(&file).expect("lines"));
    let o = Options::default();
    let all: Vec<_> = changes(&s, &o)
        .into_iter()
        .filter(|c| c.metric == "tput_per_gpu")
        .collect();
    assert_eq!(all.len(), s.len(), "{all:#?}");
    let tput = |v: Vec<sweep_series::changes::Change>| -> Vec<(u64, u64)> {
        v.into_iter()
            .filter(|c| c.metric == "tput_per_gpu")
            .map(|c| (c.before.run_id, c.after.run_id))
            .collect()
    };
    let date = |id: u64| run(id, Vec::new()).run.date;
    // Since run 31: the runs before it are all of the old level, so every
    // point's step at run 31 is new.
    assert_eq!(tput(new_since(&s, &date(31), &o)), vec![(30, 31); s.len()]);
    // Since run 38: the runs before it show the step already; nothing new.
    assert_eq!(tput(new_since(&s, &date(38), &o)), Vec::new());
    // Since after the last run: nothing is new by definition.
    assert!(new_since(&s, "2026-11-02T00:00:00Z", &o).is_empty());
    // Since before the first: every change point is new.
    assert_eq!(new_since(&s, "2026-10-01T00:00:00Z", &o), changes(&s, &o));
}
