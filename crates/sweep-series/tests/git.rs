//! The history branch against a local bare repository: two main runs that
//! finish together both land, and a run appended twice lands once.

use std::path::Path;
use std::process::Command;

use serde_json::{Map, Value};
use sweep_series::git::{Branch, CheckedOut, Pushed, append, checkout};
use sweep_series::store::{Run, RunRef, Store};

const SEED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/conformance/fixtures/seed-compare"
);

fn rows() -> Vec<Map<String, Value>> {
    let text = std::fs::read_to_string(format!("{SEED}/baseline/agg_bmk.json")).expect("fixture");
    serde_json::from_str(&text).expect("rows")
}

fn run(id: u64) -> Run {
    Run {
        run: RunRef {
            run_id: id,
            attempt: 1,
            commit: format!("{id:040x}"),
            date: "2026-12-01T00:00:00Z".into(),
            pr: None,
        },
        repo: "acme/bench".into(),
        event: "push".into(),
        benchmarks: rows(),
        evals: Vec::new(),
    }
}

fn bare(dir: &Path) -> String {
    let remote = dir.join("remote.git");
    let ok = Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&remote)
        .status()
        .expect("git")
        .success();
    assert!(ok);
    remote.display().to_string()
}

fn branch(remote: &str, work: &Path) -> Branch {
    Branch {
        remote: remote.to_string(),
        branch: "sweepkit-history".into(),
        work: work.to_path_buf(),
    }
}

/// The store as the remote's branch holds it now, from a fresh clone.
fn landed(remote: &str, dir: &Path) -> Vec<u64> {
    let clone = dir.join(format!("check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&clone);
    let ok = Command::new("git")
        .args(["clone", "-q", "-b", "sweepkit-history", remote])
        .arg(&clone)
        .status()
        .expect("git")
        .success();
    assert!(ok);
    let store = Store::new(&clone);
    store.verify().expect("the pushed history verifies");
    store
        .runs()
        .expect("runs")
        .iter()
        .map(|r| r.run.run_id)
        .collect()
}

#[test]
fn a_writer_refused_by_a_race_appends_again_on_the_new_tip() {
    let dir = tempfile::tempdir().expect("tmp");
    let remote = bare(dir.path());
    let a = branch(&remote, &dir.path().join("a"));
    let b = branch(&remote, &dir.path().join("b"));
    append(&a, &run(1), "run 1", |_| ()).expect("first");
    // B commits on the tip that holds run 1; before it pushes, A lands run 2.
    let pushed = append(&b, &run(3), "run 3", |attempt| {
        if attempt == 1 {
            append(&a, &run(2), "run 2", |_| ()).expect("the racing run");
        }
    })
    .expect("B lands");
    assert!(
        matches!(pushed, Pushed::Landed { attempt: 2, .. }),
        "{pushed:?}"
    );
    assert_eq!(landed(&remote, dir.path()), vec![1, 2, 3]);
}

#[test]
fn two_writers_at_once_both_land() {
    let dir = tempfile::tempdir().expect("tmp");
    let remote = bare(dir.path());
    append(
        &branch(&remote, &dir.path().join("seed")),
        &run(1),
        "run 1",
        |_| (),
    )
    .expect("seed");
    let writers: Vec<_> = [10u64, 20]
        .into_iter()
        .map(|id| {
            let b = branch(&remote, &dir.path().join(format!("w{id}")));
            std::thread::spawn(move || append(&b, &run(id), "run", |_| ()).expect("lands"))
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    let mut ids = landed(&remote, dir.path());
    ids.sort_unstable();
    assert_eq!(ids, vec![1, 10, 20]);
}

#[test]
fn a_run_appended_twice_lands_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let remote = bare(dir.path());
    let a = branch(&remote, &dir.path().join("a"));
    append(&a, &run(7), "run 7", |_| ()).expect("first");
    let again = branch(&remote, &dir.path().join("again"));
    assert_eq!(
        append(&again, &run(7), "run 7", |_| ()).expect("second"),
        Pushed::AlreadyThere
    );
    assert_eq!(landed(&remote, dir.path()), vec![7]);
}

#[test]
fn a_reader_checks_out_the_tip_or_an_empty_history_before_the_first_run() {
    let dir = test_kit::temp_dir();
    let remote = bare(dir.path());
    let reader = dir.path().join("reader");
    // No main run yet: an empty history, and nothing pushed.
    assert_eq!(
        checkout(&branch(&remote, &reader)).expect("checkout"),
        CheckedOut::NoBranch
    );
    assert!(Store::new(&reader).runs().expect("runs").is_empty());
    let writer = dir.path().join("writer");
    append(&branch(&remote, &writer), &run(7), "history: run 7", |_| ()).expect("append");
    // The same folder again: the tip, with the run.
    let CheckedOut::Tip { commit } = checkout(&branch(&remote, &reader)).expect("checkout") else {
        panic!("the branch exists now");
    };
    assert_eq!(commit.len(), 40);
    let runs = Store::new(&reader).runs().expect("runs");
    assert_eq!(runs.iter().map(|r| r.run.run_id).collect::<Vec<_>>(), [7]);
    append(&branch(&remote, &writer), &run(8), "history: run 8", |_| ()).expect("append");
    checkout(&branch(&remote, &reader)).expect("checkout again");
    assert_eq!(Store::new(&reader).runs().expect("runs").len(), 2);
}
