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

/// The seed's baseline rows, every throughput scaled by `f`, as a file.
fn scaled_agg(dir: &Path, id: u64, f: f64) -> String {
    let text = std::fs::read_to_string(format!("{SEED}/baseline/agg_bmk.json")).expect("seed");
    let mut rows: Vec<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_str(&text).expect("rows");
    for r in &mut rows {
        for k in ["tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu"] {
            let v = r[k].as_f64().expect("a number") * f;
            r.insert(k.into(), v.into());
        }
    }
    let path = dir.join(format!("agg-{id}.json"));
    std::fs::write(&path, serde_json::to_string(&rows).expect("json")).expect("write");
    path.display().to_string()
}

fn date(id: u64) -> String {
    format!("2026-11-01T{:02}:{:02}:00Z", id / 60, id % 60)
}

#[test]
fn the_digest_names_the_change_points_the_newest_runs_revealed() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = dir.path().join("h");
    let s = store.display().to_string();
    // 40 main runs, throughput 3 % down from run 31 on, with ±0.5 % of
    // deterministic wobble.
    for id in 1..=40u64 {
        let level = if id > 30 { 0.97 } else { 1.0 };
        let wobble = 1.0 + 0.005 * (((id * 7919) % 13) as f64 / 6.0 - 1.0);
        let agg = scaled_agg(dir.path(), id, level * wobble);
        let out = history(&[
            "append",
            "--store",
            &s,
            "--agg",
            &agg,
            "--run-id",
            &id.to_string(),
            "--commit",
            &format!("{id:012x}{:028}", 0),
            "--date",
            &date(id),
            "--pr-number",
            &(1000 + id).to_string(),
            "--repo",
            "acme/bench",
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    // Since run 31: the step is news, in both throughputs of each of the
    // 7 points.
    let out = history(&["changes", "--store", &s, "--since", &date(31), "--markdown"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let md = text(&out.stdout);
    assert!(
        md.starts_with("### 14 change points on main since 2026-11-01T00:31:00Z\n"),
        "{md}"
    );
    assert_eq!(
        md.matches("| tput_per_gpu | 🔴\u{a0}-3.").count(),
        7,
        "{md}"
    );
    assert_eq!(
        md.matches(" | run 31, 2026-11-01T00:31:00Z | #1031 | 00000000001e..00000000001f |")
            .count(),
        14,
        "{md}"
    );
    assert!(
        md.contains("| b200/qwen3.5-fp4-sglang | 8192/1024 TP2 EP1 conc 16 | tput_per_gpu | "),
        "{md}"
    );
    test_kit::assert_snapshot!("digest_since_the_step", md);
    // Since run 38 the older runs show it already: nothing new.
    let out = history(&["changes", "--store", &s, "--since", &date(38), "--markdown"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "No new change points on main since 2026-11-01T00:38:00Z.\n"
    );
    // A date in another form would compare wrongly as text: refused.
    let out = history(&["changes", "--store", &s, "--since", "2026-11-01"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "'2026-11-01' is not a UTC date of the store's form, e.g. 2026-12-04T00:00:00Z"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn show_draws_the_series_as_a_png_and_a_path_it_cannot_write_is_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = dir.path().join("h");
    let s = store.display().to_string();
    for id in 1..=8u64 {
        let agg = scaled_agg(dir.path(), id, 1.0 + 0.01 * ((id % 3) as f64 - 1.0));
        let out = history(&[
            "append",
            "--store",
            &s,
            "--agg",
            &agg,
            "--run-id",
            &id.to_string(),
            "--commit",
            &format!("{id:012x}{:028}", 0),
            "--date",
            &date(id),
            "--repo",
            "acme/bench",
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let png = dir.path().join("trend.png");
    let png_arg = png.display().to_string();
    let config = "b200/qwen3.5-fp4-sglang";
    let out = history(&["show", "--store", &s, "--config", config, "--png", &png_arg]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("7 point(s) of {config} drawn to {png_arg}")),
        "{}",
        text(&out.stderr)
    );
    let bytes = std::fs::read(&png).expect("the picture is written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let width = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
    assert_eq!(width, 880);
    // The table is still printed.
    assert!(
        text(&out.stdout).contains("| run | commit |"),
        "{}",
        text(&out.stdout)
    );

    let nowhere = dir.path().join("missing-dir/trend.png");
    let out = history(&[
        "show",
        "--store",
        &s,
        "--config",
        config,
        "--png",
        &nowhere.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&nowhere.display().to_string()),
        "{}",
        text(&out.stderr)
    );
    assert!(!nowhere.exists());
}
