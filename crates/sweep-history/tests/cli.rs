//! `sweep-history` as a user runs it: append a run to a folder store (twice:
//! once lands), verify, show, list changes; the exit contract on a corrupt
//! store (1) and a missing aggregate (2).

use std::path::Path;
use std::process::{Command, Output};

const SEED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/conformance/fixtures/seed-compare"
);

fn history(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweep-history"))
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn append(store: &Path, run_id: &str, agg: &str) -> Output {
    history(&[
        "append",
        "--store",
        &store.display().to_string(),
        "--agg",
        agg,
        "--run-id",
        run_id,
        "--commit",
        "0123456789abcdef0123456789abcdef01234567",
        "--date",
        "2026-12-01T10:00:00Z",
        "--pr-number",
        "42",
        "--repo",
        "acme/bench",
    ])
}

#[test]
fn a_postgres_url_appends_to_the_database_not_to_a_folder_of_that_name() {
    let Some(server) = test_kit::pg::Server::start() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let agg = format!("{SEED}/baseline/agg_bmk.json");
    let out = Command::new(env!("CARGO_BIN_EXE_sweep-history"))
        .current_dir(dir.path())
        .args([
            "append",
            "--store",
            &server.url,
            "--agg",
            &agg,
            "--run-id",
            "7",
        ])
        .args(["--commit", "0123456789abcdef0123456789abcdef01234567"])
        .args(["--date", "2026-12-01T10:00:00Z", "--repo", "acme/bench"])
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("list").count(),
        0,
        "no folder named after the URL"
    );
    let v = history(&["verify", "--store", &server.url]);
    assert_eq!(
        text(&v.stdout).trim(),
        "history verified: 1 runs, 1 files, 7 rows",
        "{}",
        text(&v.stderr)
    );
}

#[test]
fn append_verify_show_and_changes() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = dir.path().join("h");
    let agg = format!("{SEED}/baseline/agg_bmk.json");
    let out = append(&store, "101", &agg);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("appended to 1 file(s)"),
        "{}",
        text(&out.stderr)
    );
    let again = append(&store, "101", &agg);
    assert!(again.status.success());
    assert!(
        text(&again.stderr).contains("nothing appended"),
        "{}",
        text(&again.stderr)
    );
    let s = store.display().to_string();
    let v = history(&["verify", "--store", &s]);
    assert_eq!(
        text(&v.stdout).trim(),
        "history verified: 1 runs, 1 files, 7 rows"
    );
    let show = history(&["show", "--store", &s, "--config", "b200/qwen3.5-fp4-sglang"]);
    assert!(show.status.success(), "{}", text(&show.stderr));
    assert!(
        text(&show.stdout)
            .contains("| 101 | 0123456789ab | 2026-12-01T10:00:00Z | #42 | 13655.10 |"),
        "{}",
        text(&show.stdout)
    );
    let ch = history(&["changes", "--store", &s]);
    assert_eq!(text(&ch.stdout).trim(), "0 change point(s)");
}

#[test]
fn a_corrupt_store_is_refused_with_exit_1_and_a_missing_input_is_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = dir.path().join("h");
    assert!(
        append(&store, "7", &format!("{SEED}/baseline/agg_bmk.json"))
            .status
            .success()
    );
    let index = store.join("runs.jsonl");
    let mut t = std::fs::read_to_string(&index).expect("read");
    t.push_str("not json\n");
    std::fs::write(&index, t).expect("write");
    let v = history(&["verify", "--store", &store.display().to_string()]);
    assert_eq!(v.status.code(), Some(1));
    let err = text(&v.stderr);
    assert!(
        err.starts_with(&format!("sweep-history: error: {}:2: ", index.display())),
        "{err}"
    );
    let missing = append(&store, "8", "/nonexistent/agg_bmk.json");
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("/nonexistent/agg_bmk.json"));
}
