//! End-to-end: the wiring between `run-sweep.yml` and the composite actions
//! that the tools' newer flags need, run as written (the `run:` scripts by
//! bash with the `env:` the runner would build):
//!
//! - the compare-results job hands the eval aggregate of collect-evals and
//!   the repository's eval thresholds to compare-results when they exist,
//!   so `compare.json` (the PR comment's input) carries the eval table, and
//!   compares benchmarks alone when they do not;
//! - the legs' "Verify eval scores" steps check against the repository's
//!   `utils/evals/thresholds.yaml` when it exists, as the reference does;
//! - `actions/collect-results` runs `validate-agentic` and
//!   `validate-agentic-results` (and passes validate-scores' flags), and
//!   the collect-results job's aggregate fails on a sweep whose legs all
//!   failed (the legs setup scheduled, passed as `expected-legs`);
//! - `actions/compare-results` passes `baseline-runs` and `repeats`, and
//!   several baselines one per line.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use common::{agg_row, load, step};

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Map, Value, json};
use test_kit::write_file as write;

fn s(v: &Value) -> String {
    common::to_text(v)
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `key=value` lines of a `$GITHUB_OUTPUT` file.
fn outputs(path: &Path) -> Map<String, Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), json!(v)))
        .collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A bash command with the kit's scrubbed environment plus `LANG` (the
/// caller puts the tools first on PATH).
fn bash(dir: &Path) -> Command {
    let mut c = test_kit::command("bash");
    c.args(["--noprofile", "--norc", "-eo", "pipefail"])
        .current_dir(dir);
    if let Some(v) = std::env::var_os("LANG") {
        c.env("LANG", v);
    }
    c
}

/// Runs one `run:` step of a workflow job in `dir` with the job
/// environment `env`; returns the result and its `$GITHUB_OUTPUT`.
fn run_step(
    job: &Value,
    name: &str,
    ctx: &Value,
    env: &[(&str, &str)],
    dir: &Path,
) -> (Output, Map<String, Value>) {
    let st = step(job, name);
    let out_file = dir.join("github_output");
    std::fs::write(&out_file, "").unwrap();
    let mut c = bash(dir);
    c.arg("-c")
        .arg(st["run"].as_str().unwrap())
        .env("PATH", sweepkit_e2e::path_with_tools())
        .env("GITHUB_OUTPUT", &out_file)
        .envs(env.iter().copied());
    for (k, v) in st
        .get("env")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        c.env(k, common::eval_template(&s(v), ctx));
    }
    let out = c.output().unwrap();
    (out, outputs(&out_file))
}

/// One run of a composite action: the failing step's result (or the last
/// one's) and the action's outputs.
struct ActionRun {
    out: Output,
    outputs: Map<String, Value>,
}

impl ActionRun {
    fn code(&self) -> Option<i32> {
        self.out.status.code()
    }

    fn text(&self) -> String {
        text(&self.out)
    }
}

/// Runs `actions/<name>/action.yml`'s `run:` steps in `cwd` with `inputs`
/// (undeclared ones are an error; the rest take their defaults) and the job
/// environment `job_env`, stopping at the first failing step.
fn run_action(
    name: &str,
    inputs: &[(&str, &str)],
    cwd: &Path,
    job_env: &[(&str, &str)],
) -> ActionRun {
    let dir = sweepkit_e2e::workspace_root().join("actions").join(name);
    let action = load(&format!("actions/{name}/action.yml"));
    let declared = action["inputs"].as_object().unwrap();
    for (k, _) in inputs {
        assert!(declared.contains_key(*k), "actions/{name} has no input {k}");
    }
    let mut ctx = json!({"inputs": {}, "steps": {}});
    for (k, decl) in declared {
        let given = inputs.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        let v = given.map_or_else(
            || decl.get("default").map(s).unwrap_or_default(),
            str::to_owned,
        );
        ctx["inputs"][k] = json!(v);
    }
    let temp = test_kit::temp_dir();
    let path_file = temp.path().join("github_path");
    std::fs::write(&path_file, "").unwrap();
    let summary = temp.path().join("summary.md");
    let mut last = None;
    for (n, st) in action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let Some(script) = st.get("run").and_then(Value::as_str) else {
            continue;
        };
        assert!(
            st.get("if").is_none(),
            "actions/{name} step {n}: `if:` is not supported here"
        );
        let out_file = temp.path().join(format!("out-{n}"));
        std::fs::write(&out_file, "").unwrap();
        let wd = st
            .get("working-directory")
            .map(|w| cwd.join(common::eval_template(&s(w), &ctx)))
            .unwrap_or_else(|| cwd.to_path_buf());
        // $GITHUB_PATH additions apply to the following steps, as on a runner.
        let mut path: Vec<String> = std::fs::read_to_string(&path_file)
            .unwrap()
            .lines()
            .rev()
            .map(str::to_owned)
            .collect();
        path.push(std::env::var("PATH").unwrap_or_default());
        let mut c = bash(&wd);
        c.arg("-c")
            .arg(script)
            .env("PATH", path.join(":"))
            .env("GITHUB_PATH", &path_file)
            .env("GITHUB_ACTION_PATH", &dir)
            .env("GITHUB_OUTPUT", &out_file)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RUNNER_TEMP", temp.path())
            .env("SWEEPKIT_BIN_DIR", sweepkit_e2e::tool_dir())
            .envs(job_env.iter().copied());
        for (k, v) in st
            .get("env")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            c.env(k, common::eval_template(&s(v), &ctx));
        }
        let mut out = c.output().unwrap();
        if let Some(id) = st.get("id").and_then(Value::as_str) {
            ctx["steps"][id] = json!({"outputs": outputs(&out_file)});
        }
        let failed = !out.status.success();
        // The run's text is every step's, as the job log shows it; the
        // status is the last step's.
        if let Some(prev) = last.take() {
            let std::process::Output {
                mut stdout,
                mut stderr,
                ..
            } = prev;
            stdout.append(&mut out.stdout);
            stderr.append(&mut out.stderr);
            out.stdout = stdout;
            out.stderr = stderr;
        }
        last = Some(out);
        if failed {
            break;
        }
    }
    let outputs = action
        .get("outputs")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, o)| {
            (
                k.clone(),
                json!(common::eval_template(&s(&o["value"]), &ctx)),
            )
        })
        .collect();
    ActionRun {
        out: last.unwrap(),
        outputs,
    }
}

// ---------------------------------------------------------------------------
// Data.
// ---------------------------------------------------------------------------

/// One row of `agg_eval_all.json` (what `collect-results evals` writes).
fn eval_row(strict: f64) -> Value {
    json!({
        "is_multinode": false, "model_prefix": "dsr1", "model": "org/Model-FP8", "hw": "H100",
        "framework": "sglang", "precision": "fp8", "spec_decoding": "none", "isl": 1024,
        "osl": 1024, "tp": 8, "ep": 1, "prefill_tp": 8, "prefill_ep": 1, "prefill_num_workers": 1,
        "decode_tp": 8, "decode_ep": 1, "decode_num_workers": 1, "conc": 8,
        "dp_attention": "false", "prefill_dp_attention": "false", "decode_dp_attention": "false",
        "task": "gsm8k", "em_strict": strict, "em_strict_se": 0.007, "em_flexible": strict,
        "em_flexible_se": 0.006, "n_eff": 1319, "source": "results/x/results.json",
        "score": strict, "score_name": "em_strict", "score_se": 0.007
    })
}

/// The reference's thresholds layout: per-task defaults, per-model overrides.
const THRESHOLDS: &str = "default:\n  gsm8k: 0.90\nmodels:\n  dsr1:\n    gsm8k: 0.95\n";

// ---------------------------------------------------------------------------
// 1. The compare-results job: evals and thresholds reach compare.json.
// ---------------------------------------------------------------------------

/// Runs the compare job's "Pick the eval inputs" step in `dir`, then the
/// compare action with the step's `with:` as written (plus a file baseline,
/// since the caller's `compare-baseline-url` is empty here).
fn compare_job(dir: &Path) -> (Map<String, Value>, ActionRun) {
    let wf = load(".github/workflows/run-sweep.yml");
    let job = &wf["jobs"]["compare-results"];
    let (out, picked) = run_step(job, "Pick the eval inputs", &json!({}), &[], dir);
    assert!(out.status.success(), "{}", text(&out));
    let ctx = json!({
        "inputs": {"compare-baseline-url": "", "compare-baseline": "", "compare-baseline-file": ""},
        "secrets": {},
        "steps": {"eval-inputs": {"outputs": picked}},
    });
    let compare = step(job, "Compare against the baseline");
    let with: Vec<(String, String)> = compare["with"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), common::eval_template(&s(v), &ctx)))
        .collect();
    let env: Vec<(String, String)> = compare["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), common::eval_template(&s(v), &ctx)))
        .collect();
    let mut inputs: Vec<(&str, &str)> = with
        .iter()
        .filter(|(k, _)| k != "baseline-url" && k != "baseline")
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    inputs.push(("baseline", "baseline/agg_bmk.json"));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let run = run_action("compare-results", &inputs, dir, &env);
    (picked, run)
}

fn write_runs(dir: &Path) {
    let new = json!([agg_row("h100", 8, 1000.0), agg_row("h100", 16, 1800.0)]);
    let base = json!([agg_row("h100", 8, 990.0), agg_row("h100", 16, 1790.0)]);
    write(dir, "results/agg_bmk.json", &new.to_string());
    write(dir, "baseline/agg_bmk.json", &base.to_string());
}

#[test]
fn compare_job_passes_the_eval_aggregate_and_thresholds_when_present() {
    let tmp = test_kit::temp_dir();
    let dir = tmp.path();
    write_runs(dir);
    // Where the job's download and sparse checkout put them.
    write(
        dir,
        "evals/agg_eval_all.json",
        &json!([eval_row(0.93)]).to_string(),
    );
    write(dir, "repo/utils/evals/thresholds.yaml", THRESHOLDS);
    let (picked, run) = compare_job(dir);
    assert_eq!(picked["new-evals"], "evals/agg_eval_all.json");
    assert_eq!(picked["thresholds"], "repo/utils/evals/thresholds.yaml");
    assert_eq!(run.code(), Some(0), "{}", run.text());
    let cmp = read_json(&dir.join(s(&run.outputs["json"])));
    let evals = cmp["evals"].as_array().unwrap();
    assert_eq!(evals.len(), 1, "{cmp}");
    assert_eq!(evals[0]["task"], "gsm8k");
    // The per-model threshold of the repository's file applies: 0.93 < 0.95.
    assert_eq!(evals[0]["threshold"], json!(0.95), "{}", evals[0]);
    assert_eq!(evals[0]["pass"], json!(false), "{}", evals[0]);
    let md = std::fs::read_to_string(dir.join(s(&run.outputs["markdown"]))).unwrap();
    assert!(md.contains("gsm8k"), "the report has the eval table:\n{md}");
}

#[test]
fn compare_job_without_evals_or_thresholds_compares_benchmarks_alone() {
    let tmp = test_kit::temp_dir();
    let dir = tmp.path();
    write_runs(dir);
    let (picked, run) = compare_job(dir);
    assert_eq!(picked["new-evals"], "", "{picked:?}");
    assert_eq!(picked["thresholds"], "", "{picked:?}");
    assert_eq!(run.code(), Some(0), "{}", run.text());
    let cmp = read_json(&dir.join(s(&run.outputs["json"])));
    assert_eq!(cmp["evals"], json!([]));
    assert_eq!(cmp["points"].as_array().unwrap().len(), 2, "{cmp}");
    // Evals without a thresholds file: the table, with no pass/fail.
    write(
        dir,
        "evals/agg_eval_all.json",
        &json!([eval_row(0.93)]).to_string(),
    );
    let (picked, run) = compare_job(dir);
    assert_eq!(picked["thresholds"], "");
    assert_eq!(run.code(), Some(0), "{}", run.text());
    let cmp = read_json(&dir.join(s(&run.outputs["json"])));
    assert_eq!(cmp["evals"][0]["pass"], Value::Null, "{cmp}");
}

#[test]
fn compare_job_downloads_the_eval_aggregate_only_after_collect_evals_and_reads_the_thresholds() {
    let wf = load(".github/workflows/run-sweep.yml");
    let job = &wf["jobs"]["compare-results"];
    let needs: Vec<String> = job["needs"].as_array().unwrap().iter().map(s).collect();
    assert!(needs.contains(&"collect-evals".to_owned()), "{needs:?}");
    // The eval artifact's name is the one collect-evals uploads.
    let upload = step(&wf["jobs"]["collect-evals"], "Upload eval_results_all");
    let download = step(job, "Download eval_results_all");
    assert_eq!(download["with"]["name"], upload["with"]["name"]);
    assert_eq!(download["continue-on-error"], json!(true));
    let cond = s(&download["if"]);
    for (result, runs) in [("success", true), ("skipped", false), ("failure", false)] {
        let ctx = json!({"needs": {"collect-evals": {"result": result}}});
        assert_eq!(
            common::eval_if(&cond, &ctx, true),
            runs,
            "collect-evals {result}"
        );
    }
    // The file the picker looks for is the one the sparse checkout fetches,
    // with read-only contents and no persisted credentials.
    let checkout = step(job, "Check out the eval thresholds");
    let picker = step(job, "Pick the eval inputs");
    let path = s(&checkout["with"]["path"]);
    let wanted = s(&picker["env"]["THRESHOLDS_FILE"]);
    // Its first line; the second is the caller's compare-baseline-file.
    let sparse = s(&checkout["with"]["sparse-checkout"]);
    let sparse = sparse.lines().next().unwrap_or_default().to_string();
    assert_eq!(
        Path::new(&path).join(&sparse),
        Path::new(&wanted),
        "checkout {path} + {sparse} vs {wanted}"
    );
    assert_eq!(checkout["with"]["persist-credentials"], json!(false));
    assert_eq!(checkout["with"]["sparse-checkout-cone-mode"], json!(false));
    // actions: read for compare-baseline: last-main-run (runs, artifacts).
    assert_eq!(
        job["permissions"],
        json!({"contents": "read", "actions": "read"})
    );
    // The legs (jobs of the leg workflow) check against the same file of
    // the repository.
    let legs = load(".github/workflows/sweepkit-sweep-legs.yml");
    for leg in ["single-node", "multi-node"] {
        let script = s(&step(&legs["jobs"][leg], "Verify eval scores")["run"]);
        assert!(
            script.contains(&format!("thresholds={sparse}\n")),
            "{leg}: {script}"
        );
    }
}

// ---------------------------------------------------------------------------
// 1b. The legs' "Verify eval scores" use the repository's thresholds.
// ---------------------------------------------------------------------------

fn eval_leg_dir(score: f64) -> test_kit::TempDir {
    let tmp = test_kit::temp_dir();
    write(
        tmp.path(),
        "meta_env.json",
        r#"{"infmax_model_prefix": "dsr1", "framework": "sglang", "precision": "fp8", "conc": 32}"#,
    );
    write(
        tmp.path(),
        "results_conc32.json",
        &json!({"results": {"gsm8k": {"exact_match,strict-match": score}}}).to_string(),
    );
    tmp
}

#[test]
fn eval_legs_verify_against_the_repository_thresholds_when_present() {
    let wf = load(".github/workflows/sweepkit-sweep-legs.yml");
    for (leg, env) in [
        ("single-node", vec![]),
        ("multi-node", vec![("EVAL_CONC", ""), ("CONC_LIST", "8 32")]),
    ] {
        let job = &wf["jobs"][leg];
        // 0.92 passes the 0.85 fallback of a repository without the file …
        let tmp = eval_leg_dir(0.92);
        let (out, _) = run_step(job, "Verify eval scores", &json!({}), &env, tmp.path());
        assert!(out.status.success(), "{leg}: {}", text(&out));
        assert!(
            text(&out).contains("PASS: [conc=32] gsm8k"),
            "{leg}: {}",
            text(&out)
        );
        // … and fails the repository's per-model 0.95.
        write(tmp.path(), "utils/evals/thresholds.yaml", THRESHOLDS);
        let (out, _) = run_step(job, "Verify eval scores", &json!({}), &env, tmp.path());
        assert_eq!(out.status.code(), Some(1), "{leg}: {}", text(&out));
        let t = text(&out);
        assert!(
            t.contains("Loaded thresholds from utils/evals/thresholds.yaml"),
            "{leg}: {t}"
        );
        assert!(t.contains("FAIL: [conc=32] gsm8k"), "{leg}: {t}");
    }
}

// ---------------------------------------------------------------------------
// 2. actions/collect-results: the agentic gates and validate-scores' flags.
// ---------------------------------------------------------------------------

/// aiperf's export with `errors` failed requests out of 50, under `rel`.
fn aiperf_export(dir: &Path, rel: &str, errors: u32) {
    write(
        dir,
        &format!("{rel}/run_0/profile_export_aiperf.json"),
        &json!({"request_count": {"avg": 50 - errors}, "error_request_count": {"avg": errors},
                "completed_request_count": {"avg": 50}})
        .to_string(),
    );
}

#[test]
fn collect_results_action_runs_validate_agentic_with_its_inputs() {
    let tmp = test_kit::temp_dir();
    let dir = tmp.path();
    aiperf_export(dir, "results/aiperf_artifacts", 12);
    let job = [("AIPERF_FAILED_REQUEST_THRESHOLD", "0.10")];
    // Defaults: the leg's artifact directory and the job's threshold.
    let run = run_action(
        "collect-results",
        &[("command", "validate-agentic")],
        dir,
        &job,
    );
    assert_eq!(run.code(), Some(1), "{}", run.text());
    assert!(
        run.text().contains("12/50 = 24.000% > 10.000%"),
        "{}",
        run.text()
    );
    assert_eq!(run.outputs["file"], "");
    // The input overrides the job's threshold.
    let run = run_action(
        "collect-results",
        &[
            ("command", "validate-agentic"),
            ("failed-request-threshold", "0.25"),
        ],
        dir,
        &job,
    );
    assert_eq!(run.code(), Some(0), "{}", run.text());
    assert!(
        run.text().contains("12/50 = 24.000% <= 25.000%"),
        "{}",
        run.text()
    );
    // Another artifact directory.
    aiperf_export(dir, "other", 1);
    let run = run_action(
        "collect-results",
        &[("command", "validate-agentic"), ("artifact-dir", "other")],
        dir,
        &job,
    );
    assert_eq!(run.code(), Some(0), "{}", run.text());
    assert!(
        run.text().contains("1/50 = 2.000% <= 10.000%"),
        "{}",
        run.text()
    );
    // A threshold outside 0..1 could not be judged.
    let run = run_action(
        "collect-results",
        &[
            ("command", "validate-agentic"),
            ("failed-request-threshold", "2"),
        ],
        dir,
        &job,
    );
    assert_eq!(run.code(), Some(2), "{}", run.text());
}

#[test]
fn collect_results_action_runs_validate_agentic_results_with_its_inputs() {
    let tmp = test_kit::temp_dir();
    let dir = tmp.path();
    for (stem, conc, ok) in [("leg", 8, 4), ("leg", 32, 0), ("other", 8, 3)] {
        write(
            dir,
            &format!("{stem}_conc{conc}.json"),
            &json!({"num_requests_successful": ok}).to_string(),
        );
    }
    let job = [("RESULT_FILENAME", "leg"), ("CONC_LIST", "8 32")];
    // Defaults: the job's RESULT_FILENAME and CONC_LIST.
    let run = run_action(
        "collect-results",
        &[("command", "validate-agentic-results")],
        dir,
        &job,
    );
    assert_eq!(run.code(), Some(1), "{}", run.text());
    assert!(
        run.text()
            .contains("leg_conc32.json has zero successful requests"),
        "{}",
        run.text()
    );
    // The inputs override both.
    let run = run_action(
        "collect-results",
        &[
            ("command", "validate-agentic-results"),
            ("result-filename", "other"),
            ("conc-list", "8"),
        ],
        dir,
        &job,
    );
    assert_eq!(run.code(), Some(0), "{}", run.text());
    assert!(run.text().contains("other_conc8.json"), "{}", run.text());
    let run = run_action(
        "collect-results",
        &[
            ("command", "validate-agentic-results"),
            ("result-filename", "other"),
            ("conc-list", "8 16"),
        ],
        dir,
        &job,
    );
    assert_eq!(run.code(), Some(1), "{}", run.text());
    assert!(
        run.text().contains("expected 2 agentic results, found 1"),
        "{}",
        run.text()
    );
}

#[test]
fn collect_results_action_passes_validate_scores_flags() {
    let tmp = eval_leg_dir(0.92);
    let dir = tmp.path();
    let run = run_action(
        "collect-results",
        &[("command", "validate-scores")],
        dir,
        &[],
    );
    assert_eq!(run.code(), Some(0), "{}", run.text());
    write(dir, "t/thresholds.yaml", THRESHOLDS);
    let run = run_action(
        "collect-results",
        &[
            ("command", "validate-scores"),
            ("thresholds", "t/thresholds.yaml"),
        ],
        dir,
        &[],
    );
    assert_eq!(run.code(), Some(1), "{}", run.text());
    assert!(
        run.text()
            .contains("Loaded thresholds from t/thresholds.yaml"),
        "{}",
        run.text()
    );
    let run = run_action(
        "collect-results",
        &[("command", "validate-scores"), ("min-score", "0.95")],
        dir,
        &[],
    );
    assert_eq!(run.code(), Some(1), "{}", run.text());
    let run = run_action(
        "collect-results",
        &[("command", "validate-scores"), ("expected-concs", "8")],
        dir,
        &[],
    );
    assert_eq!(run.code(), Some(1), "{}", run.text());
    assert!(
        run.text()
            .contains("eval metadata concurrency does not match workflow request"),
        "{}",
        run.text()
    );
    let run = run_action(
        "collect-results",
        &[("command", "validate-everything")],
        dir,
        &[],
    );
    assert_eq!(run.code(), Some(2), "{}", run.text());
    assert!(
        run.text().contains("unknown command 'validate-everything'"),
        "{}",
        run.text()
    );
}

/// Issue #34 item 1: every leg failed, so the download of `bmk_*` finds
/// nothing and succeeds; the Aggregate step, with the leg count setup
/// scheduled, fails (exit 1, both counts named) instead of writing `[]`,
/// and collect-results' failure keeps ingest off (chain.rs checks the
/// `if:`).
#[test]
fn collect_results_job_fails_when_no_leg_left_a_result() {
    let wf = load(".github/workflows/run-sweep.yml");
    let job = &wf["jobs"]["collect-results"];
    let st = step(job, "Aggregate");
    let ctx = json!({"needs": {"setup": {"result": "success", "outputs": {"legs": "9"}}}});
    let with: Vec<(String, String)> = st["with"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), common::eval_template(&s(v), &ctx)))
        .collect();
    let inputs: Vec<(&str, &str)> = with.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert!(inputs.contains(&("expected-legs", "9")), "{inputs:?}");
    let tmp = test_kit::temp_dir();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("results")).unwrap();
    let run = run_action("collect-results", &inputs, dir, &[]);
    assert_eq!(run.code(), Some(1), "{}", run.text());
    assert!(
        run.text()
            .contains("the sweep scheduled 9 legs and 0 results arrived"),
        "{}",
        run.text()
    );
    assert!(!dir.join("agg_bmk.json").exists());
    // One leg's result is a sweep to aggregate.
    write(
        dir,
        "results/bmk_a/agg_a.json",
        &agg_row("b200", 4, 100.0).to_string(),
    );
    let run = run_action("collect-results", &inputs, dir, &[]);
    assert_eq!(run.code(), Some(0), "{}", run.text());
    assert_eq!(
        read_json(&dir.join("agg_bmk.json"))
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

// ---------------------------------------------------------------------------
// 3. actions/compare-results: repeats, baseline-runs, several baselines.
// ---------------------------------------------------------------------------

#[test]
fn compare_results_action_passes_repeats_and_several_baselines() {
    let tmp = test_kit::temp_dir();
    let dir = tmp.path();
    write(
        dir,
        "new.json",
        &json!([agg_row("h100", 8, 1000.0)]).to_string(),
    );
    write(
        dir,
        "b1.json",
        &json!([agg_row("h100", 8, 990.0)]).to_string(),
    );
    write(
        dir,
        "b2.json",
        &json!([agg_row("h100", 8, 1010.0)]).to_string(),
    );
    let baselines = "b1.json\nb2.json";
    // Default: the two baselines' rows of the point are pooled repeats.
    let run = run_action(
        "compare-results",
        &[("new", "new.json"), ("baseline", baselines)],
        dir,
        &[],
    );
    assert_eq!(run.code(), Some(0), "{}", run.text());
    let cmp = read_json(&dir.join("compare.json"));
    assert_eq!(cmp["repeats"], "pool");
    assert_eq!(cmp["duplicates"], json!([]));
    assert_eq!(cmp["baseline"]["paths"], json!(["b1.json", "b2.json"]));
    // repeats: first keeps b1's row and lists b2's as a duplicate.
    let run = run_action(
        "compare-results",
        &[
            ("new", "new.json"),
            ("baseline", baselines),
            ("repeats", "first"),
        ],
        dir,
        &[],
    );
    assert_eq!(run.code(), Some(0), "{}", run.text());
    let cmp = read_json(&dir.join("compare.json"));
    assert_eq!(cmp["repeats"], "first");
    let dups = cmp["duplicates"].as_array().unwrap();
    assert_eq!(dups.len(), 1, "{cmp}");
    assert_eq!(dups[0]["side"], "baseline");
}

#[test]
fn compare_results_action_passes_baseline_runs() {
    let tmp = test_kit::temp_dir();
    let dir = tmp.path();
    write(
        dir,
        "new.json",
        &json!([agg_row("h100", 8, 1000.0)]).to_string(),
    );
    write(
        dir,
        "b1.json",
        &json!([agg_row("h100", 8, 990.0)]).to_string(),
    );
    // baseline-runs picks runs from the database: with a file it is refused,
    // which shows the input reaches the flag.
    let run = run_action(
        "compare-results",
        &[
            ("new", "new.json"),
            ("baseline", "b1.json"),
            ("baseline-runs", "3"),
        ],
        dir,
        &[],
    );
    assert_eq!(run.code(), Some(2), "{}", run.text());
    assert!(
        run.text()
            .contains("--baseline-runs 3 picks the newest runs"),
        "{}",
        run.text()
    );
    // Out of range: refused by the flag's own check.
    let run = run_action(
        "compare-results",
        &[
            ("new", "new.json"),
            ("baseline", "b1.json"),
            ("baseline-runs", "21"),
        ],
        dir,
        &[],
    );
    assert_eq!(run.code(), Some(2), "{}", run.text());
    assert!(run.text().contains("baseline-runs"), "{}", run.text());
    // Empty means the default (one run), accepted with a file baseline.
    let run = run_action(
        "compare-results",
        &[
            ("new", "new.json"),
            ("baseline", "b1.json"),
            ("baseline-runs", ""),
        ],
        dir,
        &[],
    );
    assert_eq!(run.code(), Some(0), "{}", run.text());
}
