//! `compare-results --baseline-from last-main-run` against the fake
//! server (the newest successful push run of `run-sweep.yml` on the default
//! branch, its `results_bmk` zip behind GitHub's redirect), and how a
//! baseline file is named in the report.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use test_kit::{CommandExt, FakeGitHub, Fault, Route, stderr, zip_of};

const REPO: &str = "example/bench";
const THIS_RUN: u64 = 4300;

fn cmd() -> Command {
    test_kit::command(env!("CARGO_BIN_EXE_compare-results"))
}

fn row(tp: i64, conc: i64, tput: f64) -> Value {
    json!({
        "hw": "h100", "conc": conc, "image": "img:1", "model": "org/Model-FP8",
        "infmax_model_prefix": "dsr1", "framework": "sglang", "precision": "fp8",
        "spec_decoding": "none", "disagg": false, "isl": 1024, "osl": 1024,
        "is_multinode": false, "tp": tp, "pp": 1, "ep": 1, "dp_attention": "false",
        "tput_per_gpu": tput, "output_tput_per_gpu": tput / 2.0, "input_tput_per_gpu": tput / 2.0,
        "mean_ttft": 0.2, "median_ttft": 0.2, "p99_ttft": 0.4, "mean_tpot": 0.01,
        "mean_intvty": 100.0, "median_intvty": 100.0, "median_e2el": 10.0
    })
}

fn base_rows() -> Value {
    json!([row(8, 4, 1000.0), row(8, 8, 1800.0), row(8, 16, 3000.0)])
}

fn new_rows() -> Value {
    json!([
        row(8, 4, 1010.0),
        row(8, 8, 1790.0),
        row(8, 16, 3020.0),
        row(8, 32, 4000.0)
    ])
}

fn main_run(id: u64, sha: &str, conclusion: &str) -> Value {
    json!({
        "id": id, "event": "push", "head_branch": "main", "head_sha": sha,
        "status": "completed", "conclusion": conclusion,
        "created_at": "2026-11-30T23:10:00Z",
        "html_url": format!("https://github.com/{REPO}/actions/runs/{id}"),
    })
}

/// The fake with the repository (default branch `main`) and these runs of
/// `run-sweep.yml`.
fn server(runs: Vec<Value>) -> FakeGitHub {
    let s = test_kit::fake_github();
    s.add_route(Route::json(
        "GET",
        &format!("/repos/{REPO}"),
        json!({"full_name": REPO, "default_branch": "main"}),
    ));
    s.with_workflow_runs(REPO, "run-sweep.yml", runs);
    s
}

struct Dir {
    dir: test_kit::TempDir,
}

impl Dir {
    fn new() -> Self {
        let dir = test_kit::temp_dir();
        std::fs::write(dir.path().join("new.json"), new_rows().to_string()).expect("write");
        Dir { dir }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn last_main_run(&self, s: &FakeGitHub) -> Output {
        cmd()
            .github(s)
            .env("GITHUB_REPOSITORY", REPO)
            .env("GITHUB_RUN_ID", THIS_RUN.to_string())
            .env("INPUT_BASELINE_FROM", "last-main-run")
            .arg("--new")
            .arg(self.path("new.json"))
            .arg("--markdown")
            .arg(self.path("compare.md"))
            .arg("--json")
            .arg(self.path("compare.json"))
            .output()
            .expect("run compare-results")
    }
    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).expect("read")
    }
}

#[test]
fn the_last_main_run_is_the_baseline_and_is_named_by_branch_commit_run_and_day() {
    let s = server(vec![
        // This run, already listed as successful (a re-run): never its own baseline.
        main_run(THIS_RUN, "ffffffffffffffff", "success"),
        main_run(4242, "1a2b3c4d5e6f7a8b9c0d", "success"),
    ]);
    let zip = zip_of(&[("agg_bmk.json", &base_rows().to_string())]);
    s.with_artifact(REPO, THIS_RUN, "results_bmk", zip.clone());
    s.with_artifact(REPO, 4242, "results_bmk", zip);
    let d = Dir::new();
    let o = d.last_main_run(&s);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = d.read("compare.md");
    assert!(
        md.contains("## Benchmark comparison vs main @ 1a2b3c4 (run 4242, 2026-11-30)\n"),
        "{md}"
    );
    assert!(!md.contains("\\`"), "{md}");
    let j: Value = serde_json::from_str(&d.read("compare.json")).expect("json");
    assert_eq!(j["baseline"]["source"], "last-main-run");
    assert_eq!(
        j["baseline"]["label"],
        "main @ 1a2b3c4 (run 4242, 2026-11-30)"
    );
    assert_eq!(j["points"].as_array().map(Vec::len), Some(3), "{j}");
    assert_eq!(
        s.count(
            "GET",
            &format!("/repos/{REPO}/actions/runs/{THIS_RUN}/artifacts")
        ),
        0,
        "the current run is skipped before its artifacts are listed"
    );
}

#[test]
fn no_successful_main_run_says_no_baseline_and_exits_0() {
    let s = server(vec![main_run(4100, "0123456789", "failure")]);
    let d = Dir::new();
    let o = d.last_main_run(&s);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = d.read("compare.md");
    assert!(
        md.contains("## Benchmark comparison vs no baseline (no successful push run of run-sweep.yml on main with a results_bmk artifact"),
        "{md}"
    );
    assert_eq!(md.matches("- no baseline: ").count(), 4, "{md}");
    let j: Value = serde_json::from_str(&d.read("compare.json")).expect("json");
    assert_eq!(j["points"].as_array().map(Vec::len), Some(0));
}

#[test]
fn an_api_error_looking_up_the_last_main_run_exits_2_naming_the_endpoint() {
    let s = server(vec![]);
    let path = format!("/repos/{REPO}/actions/workflows/run-sweep.yml/runs");
    s.fail_always("GET", &path, Fault::Status(403));
    let d = Dir::new();
    let o = d.last_main_run(&s);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&path), "{}", stderr(&o));
    assert!(!d.path("compare.md").exists(), "no partial report");
}

#[test]
fn an_artifact_without_the_aggregate_exits_2() {
    let s = server(vec![main_run(4242, "1a2b3c4d5e6f", "success")]);
    s.with_artifact(REPO, 4242, "results_bmk", zip_of(&[("other.json", "[]")]));
    let d = Dir::new();
    let o = d.last_main_run(&s);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "artifact results_bmk of run 4242: no agg_bmk.json in it (files: other.json)"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn last_main_run_and_a_baseline_file_together_are_refused() {
    let s = server(vec![]);
    let d = Dir::new();
    std::fs::write(d.path("base.json"), base_rows().to_string()).expect("write");
    let o = cmd()
        .github(&s)
        .env("GITHUB_REPOSITORY", REPO)
        .args(["--baseline-from", "last-main-run", "--baseline"])
        .arg(d.path("base.json"))
        .arg("--new")
        .arg(d.path("new.json"))
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("give one baseline: --baseline and --baseline-from are given together"),
        "{}",
        stderr(&o)
    );
    assert!(s.requests().is_empty(), "nothing was asked of GitHub");
}

#[test]
fn a_baseline_file_is_named_by_its_file_name_not_its_path_or_escaped_backticks() {
    let d = Dir::new();
    let base: &Path = &d.path("baselines/agg_bmk.json");
    std::fs::create_dir_all(d.path("baselines")).expect("mkdir");
    std::fs::write(base, base_rows().to_string()).expect("write");
    let o = cmd()
        .arg("--new")
        .arg(d.path("new.json"))
        .arg("--baseline")
        .arg(base)
        .arg("--markdown")
        .arg(d.path("compare.md"))
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = d.read("compare.md");
    assert!(
        md.contains("## Benchmark comparison vs agg_bmk.json\n"),
        "{md}"
    );
    let dir = d.dir.path().display().to_string();
    assert!(!md.contains(&dir) && !md.contains("\\`"), "{md}");
}
