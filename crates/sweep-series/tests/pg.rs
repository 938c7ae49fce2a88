//! The PostgreSQL store against a real server started by the test: the
//! same answers as the folder store, idempotent re-ingest, conflicting
//! rows refused, and concurrent writers.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use sweep_series::pg::PgStore;
use sweep_series::series::{PointId, Scope, series_in};
use sweep_series::store::{Appended, History, Run, RunRef, Store, StoreError};

const SEED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/conformance/fixtures/seed-compare"
);

fn rows(file: &str) -> Vec<Map<String, Value>> {
    let text = std::fs::read_to_string(format!("{SEED}/{file}")).expect("fixture");
    serde_json::from_str(&text).expect("rows")
}

fn run(id: u64, scale: f64) -> Run {
    let benchmarks = rows("baseline/agg_bmk.json")
        .into_iter()
        .map(|mut r| {
            let v = r["tput_per_gpu"].as_f64().expect("a number") * scale;
            r.insert("tput_per_gpu".into(), Value::from(v));
            r
        })
        .collect();
    Run {
        run: RunRef {
            run_id: id,
            attempt: 1,
            commit: format!("{id:040x}"),
            date: format!("2026-11-01T{:02}:{:02}:00Z", id / 60, id % 60),
            pr: Some(id + 500),
        },
        repo: "acme/bench".into(),
        event: "push".into(),
        benchmarks,
        evals: rows("new/agg_eval_all.json"),
    }
}

#[test]
fn the_database_store_answers_as_the_folder_store_does() {
    let Some(server) = test_kit::pg::Server::start() else {
        return;
    };
    let pg = PgStore::connect(&server.url).expect("connect");
    let dir = tempfile_dir();
    let folder = Store::new(dir.path());
    for store in [&pg as &dyn History, &folder] {
        for id in [3, 1, 2] {
            assert!(matches!(
                store
                    .append(&run(id, 1.0 + id as f64 / 100.0))
                    .expect("append"),
                Appended::Added { .. }
            ));
        }
        // A re-ingest is a no-op; other rows under the same run are refused.
        assert_eq!(
            store.append(&run(1, 1.01)).expect("again"),
            Appended::AlreadyThere
        );
        assert!(matches!(
            store.append(&run(1, 2.0)),
            Err(StoreError::Conflict { run_id: 1, .. })
        ));
    }
    assert_eq!(pg.runs().expect("runs"), folder.runs().expect("runs"));
    assert_eq!(pg.files().expect("files"), folder.files().expect("files"));
    for file in folder.files().expect("files") {
        assert_eq!(
            pg.lines(&file).expect("pg lines"),
            folder.lines(&file).expect("folder lines"),
            "{file}"
        );
    }
    // The series as a comparison and `changes` read them (newest first,
    // stopping early), whatever the order the runs were appended in.
    let metrics = ["tput_per_gpu", "median_ttft"];
    for file in folder.files().expect("files") {
        if !file.starts_with("series/") {
            continue;
        }
        let lines = folder.lines(&file).expect("lines");
        let all: BTreeSet<PointId> = series_in(&lines, &metrics, Scope::All)
            .into_keys()
            .collect();
        let one: BTreeSet<PointId> = all.iter().take(1).cloned().collect();
        let mut scopes = vec![Scope::All];
        for rows in [1, 2, 5] {
            scopes.push(Scope::Newest { rows, points: &all });
            scopes.push(Scope::Newest { rows, points: &one });
        }
        for scope in scopes {
            let want = series_in(&lines, &metrics, scope);
            assert!(!want.is_empty());
            assert_eq!(
                pg.series(&file, &metrics, scope).expect("pg"),
                want,
                "{scope:?}"
            );
            assert_eq!(
                folder.series(&file, &metrics, scope).expect("folder"),
                want,
                "{scope:?}"
            );
        }
    }
    let v = pg.verify().expect("verify");
    assert_eq!(v, folder.verify().expect("verify"));
    assert_eq!((v.runs, v.lines), (3, 3 * 9));
    // The schema is created once: a second connection finds the history.
    assert_eq!(
        PgStore::connect(&server.url)
            .expect("again")
            .runs()
            .expect("runs")
            .len(),
        3
    );
}

#[test]
fn concurrent_writers_both_land_and_the_same_run_lands_once() {
    let Some(server) = test_kit::pg::Server::start() else {
        return;
    };
    // Create the schema before the writers race to.
    drop(PgStore::connect(&server.url).expect("connect"));
    let url = server.url.clone();
    let writers: Vec<_> = [10u64, 20, 30, 30]
        .into_iter()
        .map(|id| {
            let url = url.clone();
            std::thread::spawn(move || {
                PgStore::connect(&url)
                    .expect("connect")
                    .append(&run(id, 1.0))
                    .expect("append")
            })
        })
        .collect();
    let results: Vec<Appended> = writers
        .into_iter()
        .map(|w| w.join().expect("writer"))
        .collect();
    assert_eq!(
        results
            .iter()
            .filter(|r| **r == Appended::AlreadyThere)
            .count(),
        1,
        "{results:?}"
    );
    let pg = PgStore::connect(&url).expect("connect");
    let mut ids: Vec<u64> = pg
        .runs()
        .expect("runs")
        .iter()
        .map(|r| r.run.run_id)
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![10, 20, 30]);
    pg.verify().expect("verify");
}

fn tempfile_dir() -> test_kit::TempDir {
    test_kit::temp_dir()
}
