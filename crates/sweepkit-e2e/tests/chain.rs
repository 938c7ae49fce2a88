//! End-to-end: the sweep chain of `run-sweep.yml`, step by step, on a
//! throwaway git repository. Every tool runs through its composite action:
//! the `run:` scripts of `actions/<tool>/action.yml` are executed by bash
//! with the step `env:` the runner would build from the action's inputs
//! (a small evaluator for the `${{ inputs.* }}` / `${{ github.* }}` /
//! `${{ steps.*.outputs.* }}` forms the actions use), `$GITHUB_OUTPUT`,
//! `$GITHUB_STEP_SUMMARY` and `$GITHUB_ACTION_PATH`. Every step's artifact
//! is printed.
//!
//! The binaries are built from the current source by the test itself, or
//! taken from `$SWEEPKIT_BIN_DIR` (see `sweepkit_e2e::tool_dir`);
//! `actions/setup/install.sh ensure` finds them through `SWEEPKIT_BIN_DIR`.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use common::plain;
/// The exit contract of every binary (README "Tools"), on the same binaries.
mod exit_contract;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

const REPO: &str = "example/bench";
const RUN_ID: &str = "4242000001";
const PR: u64 = 2;

/// Writes straight to the process's stderr: libtest captures `print!`, not
/// this, so the artifacts show in `cargo test` output of a passing run.
fn show(title: &str, body: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "\n== e2e step: {title}");
    let lines: Vec<&str> = body.lines().collect();
    for l in lines.iter().take(40) {
        let _ = writeln!(err, "   {l}");
    }
    if lines.len() > 40 {
        let _ = writeln!(err, "   … ({} more lines)", lines.len() - 40);
    }
}

fn show_file(title: &str, path: &Path) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{title}: artifact {} missing: {e}", path.display()));
    show(
        &format!("{title} → {}", path.file_name().unwrap().to_string_lossy()),
        &text,
    );
}

use sweepkit_e2e::workspace_root;

fn bin_dir() -> PathBuf {
    sweepkit_e2e::tool_dir().to_path_buf()
}

/// What the runner knows about the run: `github.*` values and the
/// environment every step sees (runner variables, job `env:`).
struct Runner {
    github: Vec<(String, String)>,
    env: Vec<(String, String)>,
    summary: PathBuf,
    temp: PathBuf,
}

/// Outputs of one action run.
struct ActionRun {
    outputs: serde_json::Map<String, Value>,
    stdout: String,
}

impl Runner {
    fn lookup(
        &self,
        key: &str,
        inputs: &[(&str, &str)],
        action: &Value,
        steps: &serde_json::Map<String, Value>,
    ) -> String {
        if key.contains(' ') {
            // An expression (`inputs.a != '' && inputs.b || ''`): GitHub's
            // rules from the shared engine, over the inputs this runner
            // resolves (given, else their default).
            let mut known = serde_json::Map::new();
            for (name, spec) in action["inputs"].as_object().unwrap() {
                if inputs.iter().any(|(k, _)| k == name) || spec.get("default").is_some() {
                    let v = self.lookup(&format!("inputs.{name}"), inputs, action, steps);
                    known.insert(name.clone(), Value::String(v));
                }
            }
            let ctx = serde_json::json!({ "inputs": known });
            return common::to_text(&common::eval_value(&format!("${{{{ {key} }}}}"), &ctx));
        }
        if let Some(name) = key.strip_prefix("inputs.") {
            if let Some((_, v)) = inputs.iter().find(|(k, _)| *k == name) {
                return (*v).to_string();
            }
            let default = action["inputs"][name]
                .get("default")
                .map(plain)
                .unwrap_or_else(|| panic!("input {name} not given and without default"));
            return self.eval(&default, inputs, action, steps);
        }
        if let Some(rest) = key.strip_prefix("steps.") {
            let (id, out) = rest.split_once(".outputs.").unwrap();
            return steps
                .get(id)
                .and_then(|o| o.get(out))
                .map(plain)
                .unwrap_or_default();
        }
        if key.starts_with("github.") {
            return self
                .github
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .unwrap_or_default();
        }
        panic!("expression `{key}` is not supported by the test runner")
    }

    /// Substitutes every `${{ … }}` (plain context lookups only).
    fn eval(
        &self,
        text: &str,
        inputs: &[(&str, &str)],
        action: &Value,
        steps: &serde_json::Map<String, Value>,
    ) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(i) = rest.find("${{") {
            out.push_str(&rest[..i]);
            let j = rest[i..].find("}}").unwrap() + i;
            out.push_str(&self.lookup(rest[i + 3..j].trim(), inputs, action, steps));
            rest = &rest[j + 2..];
        }
        out.push_str(rest);
        out
    }

    /// Runs `actions/<name>/action.yml`'s `run:` steps in `cwd` with `inputs`
    /// and the extra job environment `job_env`.
    fn action(
        &self,
        name: &str,
        inputs: &[(&str, &str)],
        cwd: &Path,
        job_env: &[(String, String)],
    ) -> ActionRun {
        let (dir, action) = common::load_action(name, inputs);
        let mut steps = serde_json::Map::new();
        let mut stdout = String::new();
        // $GITHUB_PATH additions apply to the following steps, as on a runner.
        let path_file = self.temp.join(format!("{name}.path"));
        std::fs::write(&path_file, "").unwrap();
        for (n, step) in action["runs"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let Some(script) = step.get("run").and_then(Value::as_str) else {
                continue; // `uses:` steps (actions/cache) have no local effect here
            };
            if let Some(cond) = step.get("if").and_then(Value::as_str) {
                panic!("actions/{name} step {n}: `if: {cond}` is not supported by the test runner");
            }
            let out_file = self.temp.join(format!("{name}-{n}.out"));
            std::fs::write(&out_file, "").unwrap();
            let wd = step
                .get("working-directory")
                .and_then(Value::as_str)
                .map(|w| self.eval(w, inputs, &action, &steps))
                .map(|w| cwd.join(w))
                .unwrap_or_else(|| cwd.to_path_buf());
            let script_file = self.temp.join(format!("{name}-{n}.sh"));
            std::fs::write(&script_file, script).unwrap();
            let mut c = test_kit::command("bash");
            c.args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&script_file);
            c.current_dir(&wd);
            if let Some(lang) = std::env::var_os("LANG") {
                c.env("LANG", lang);
            }
            let mut path: Vec<String> = std::fs::read_to_string(&path_file)
                .unwrap()
                .lines()
                .rev()
                .map(str::to_string)
                .collect();
            path.push(std::env::var("PATH").unwrap_or_default());
            c.env("PATH", path.join(":")).env("GITHUB_PATH", &path_file);
            for (k, v) in self.env.iter().chain(job_env) {
                c.env(k, v);
            }
            c.env("GITHUB_ACTION_PATH", &dir)
                .env("GITHUB_OUTPUT", &out_file)
                .env("GITHUB_STEP_SUMMARY", &self.summary)
                .env("RUNNER_TEMP", &self.temp)
                .env("SWEEPKIT_BIN_DIR", bin_dir());
            if let Some(env) = step.get("env").and_then(Value::as_object) {
                for (k, v) in env {
                    c.env(k, self.eval(&plain(v), inputs, &action, &steps));
                }
            }
            let out = c.output().unwrap();
            stdout.push_str(&ok(
                &out,
                &format!("actions/{name} step {n} ({:?})", step.get("name")),
            ));
            if let Some(id) = step.get("id").and_then(Value::as_str) {
                steps.insert(id.to_string(), Value::Object(outputs(&out_file)));
            }
        }
        let mut result = serde_json::Map::new();
        for (k, o) in action
            .get("outputs")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            result.insert(
                k.clone(),
                Value::String(self.eval(&plain(&o["value"]), inputs, &action, &steps)),
            );
        }
        ActionRun {
            outputs: result,
            stdout,
        }
    }
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

use test_kit::git;

/// The bundled example data (`examples/sweep/`, shared with `scripts/demo`).
fn data(rel: &str) -> PathBuf {
    workspace_root().join("examples/sweep").join(rel)
}

/// `key=value` lines (and `key<<DELIM` heredocs) of a `$GITHUB_OUTPUT` file.
fn outputs(path: &Path) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut map = serde_json::Map::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((k, delim)) = line.split_once("<<") {
            let mut v = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                v.push(l);
            }
            map.insert(k.to_string(), Value::String(v.join("\n")));
        } else if let Some((k, v)) = line.split_once('=') {
            map.insert(k.to_string(), Value::String(v.to_string()));
        }
    }
    map
}

/// The throwaway repository: configs and a base changelog, then the PR's
/// changelog commit. Returns (base sha, head sha).
fn make_repo(repo: &Path) -> (String, String) {
    std::fs::create_dir_all(repo.join("configs")).unwrap();
    for f in ["nvidia-master.yaml", "amd-master.yaml", "runners.yaml"] {
        std::fs::copy(data(&format!("configs/{f}")), repo.join("configs").join(f)).unwrap();
    }
    std::fs::copy(
        data("perf-changelog.base.yaml"),
        repo.join("perf-changelog.yaml"),
    )
    .unwrap();
    git(repo, &["init", "-q"]);
    git(repo, &["add", "."]);
    git(repo, &["commit", "-q", "-m", "base: configs and changelog"]);
    let base = git(repo, &["rev-parse", "HEAD"]);
    let mut log = std::fs::read_to_string(repo.join("perf-changelog.yaml")).unwrap();
    log.push_str(&std::fs::read_to_string(data("perf-changelog.added.yaml")).unwrap());
    std::fs::write(repo.join("perf-changelog.yaml"), log).unwrap();
    git(
        repo,
        &[
            "commit",
            "-q",
            "-am",
            "perf-changelog: bump tiny-fp8-h200-sglang",
        ],
    );
    let head = git(repo, &["rev-parse", "HEAD"]);
    (base, head)
}

#[test]
fn sweep_chain_runs_end_to_end_through_the_composite_actions() {
    let tmp = test_kit::temp_dir();
    let repo = tmp.path().join("repo");
    let work = tmp.path().join("work");
    let temp = tmp.path().join("runner-temp");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&temp).unwrap();
    let summary = work.join("step_summary.md");

    // 1. A PR that adds a changelog entry.
    let (base, head) = make_repo(&repo);
    show(
        "changelog commit",
        &git(&repo, &["show", "--stat", "--format=%H %s", "HEAD"]),
    );
    let msg = git(&repo, &["log", "-1", "--format=%B", &head]);

    // The PR `labeled` event as the runner presents it.
    let event = json!({
        "action": "labeled",
        "label": {"name": "full-sweep-enabled"},
        "pull_request": {
            "number": PR, "draft": false,
            "labels": [{"name": "full-sweep-enabled"}],
            "head": {"sha": head, "repo": {"full_name": REPO}}
        }
    });
    let event_path = work.join("event.json");
    std::fs::write(&event_path, event.to_string()).unwrap();
    let runner = Runner {
        github: vec![
            ("github.event_name".into(), "pull_request".into()),
            ("github.repository".into(), REPO.into()),
            ("github.ref".into(), "refs/pull/2/merge".into()),
            ("github.run_id".into(), RUN_ID.into()),
            ("github.run_attempt".into(), "1".into()),
            ("github.event.pull_request.head.sha".into(), head.clone()),
        ],
        env: vec![
            ("GITHUB_ACTIONS".into(), "true".into()),
            ("GITHUB_EVENT_NAME".into(), "pull_request".into()),
            (
                "GITHUB_EVENT_PATH".into(),
                event_path.to_str().unwrap().into(),
            ),
            ("GITHUB_REPOSITORY".into(), REPO.into()),
            ("GITHUB_REF".into(), "refs/pull/2/merge".into()),
            ("GITHUB_RUN_ID".into(), RUN_ID.into()),
        ],
        summary: summary.clone(),
        temp: temp.clone(),
    };

    // 2. policy job: actions/sweep-policy.
    let policy = runner.action(
        "sweep-policy",
        &[
            ("head-commit-message", msg.as_str()),
            ("allow-conflict", "true"),
        ],
        &work,
        &[],
    );
    show(
        "actions/sweep-policy (outputs)",
        &serde_json::to_string_pretty(&policy.outputs).unwrap(),
    );
    for (k, want) in [
        ("run-check-changelog", "true"),
        ("run-setup", "true"),
        ("canary", "true"),
        ("run-reuse-gate", "false"),
        ("fail-fast", "false"),
        ("trim-conc", "false"),
        ("comment", "true"),
    ] {
        assert_eq!(
            policy.outputs.get(k),
            Some(&json!(want)),
            "policy output {k}"
        );
    }

    // 3. check-changelog job: actions/check-changelog.
    let repo_s = repo.to_str().unwrap();
    let run = runner.action(
        "check-changelog",
        &[
            ("base-ref", base.as_str()),
            ("head-ref", head.as_str()),
            ("all-evals", "false"),
            ("evals-only", "false"),
            ("working-directory", repo_s),
        ],
        &work,
        &[],
    );
    show("actions/check-changelog", &run.stdout);

    // 4. setup job: actions/generate-matrix (changelog + priority).
    let gm = runner.action(
        "generate-matrix",
        &[
            ("command", "changelog"),
            ("base-ref", base.as_str()),
            ("head-ref", head.as_str()),
            ("trim-conc", "false"),
            ("all-evals", "false"),
            ("evals-only", "false"),
            ("priority", "true"),
            (
                "priority-policy",
                data("configs/ci-priority.yaml").to_str().unwrap(),
            ),
            ("labels-json", r#"["full-sweep-enabled"]"#),
            ("pr-number", "2"),
            ("working-directory", repo_s),
        ],
        &work,
        &[],
    );
    let config_file = plain(&gm.outputs["config-file"]);
    let ssc_text = std::fs::read_to_string(&config_file).unwrap();
    let ssc: Value = serde_json::from_str(&ssc_text).unwrap();
    show_file(
        "actions/generate-matrix (search-space-config artifact)",
        Path::new(&config_file),
    );
    let sn = &ssc["single_node"];
    let rows_1k = sn["1k1k"].as_array().cloned().unwrap_or_default();
    let rows_8k = sn["8k1k"].as_array().cloned().unwrap_or_default();
    assert!(
        !rows_1k.is_empty() && !rows_8k.is_empty(),
        "1k1k and 8k1k rows: {ssc_text}"
    );
    assert!(
        rows_1k
            .iter()
            .chain(&rows_8k)
            .all(|r| r["model-prefix"] == "tiny" && r["runner"] == "cluster:h200-cw"),
        "only the changelog's config key is swept"
    );
    assert!(
        rows_1k
            .iter()
            .all(|r| r.get("priority").is_some() && r.get("queue-token").is_some()),
        "rows carry priority and queue token"
    );
    assert_eq!(ssc["changelog_metadata"]["head_ref"], json!(head));

    // 5. canary-select job: actions/canary.
    let cs = runner.action(
        "canary",
        &[("search-space-config-file", config_file.as_str())],
        &work,
        &[],
    );
    show(
        "actions/canary (outputs)",
        &serde_json::to_string_pretty(&cs.outputs).unwrap(),
    );
    let canary: Vec<Value> = serde_json::from_str(&plain(&cs.outputs["canary-config"])).unwrap();
    let remaining: Value = serde_json::from_str(
        &std::fs::read_to_string(plain(&cs.outputs["remaining-file"])).unwrap(),
    )
    .unwrap();
    assert_eq!(canary.len(), 1);
    let min_conc = rows_1k
        .iter()
        .chain(&rows_8k)
        .filter(|r| r["run-eval"] != json!(true))
        .filter_map(|r| r["conc"].as_u64())
        .min()
        .unwrap();
    assert_eq!(canary[0]["conc"].as_u64(), Some(min_conc));
    let remaining_rows = |b: &str| {
        remaining["single_node"][b]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(
        remaining_rows("1k1k").len() + remaining_rows("8k1k").len() + 1,
        rows_1k.len() + rows_8k.len()
    );

    // 6. setup's split step (the workflow's own script) cuts the config
    //    into the part jobs, without the canary row; then the GPU jobs of
    //    run-sweep.yml run, evaluated from the workflow itself.
    let wf =
        sweep_model::yaml::load_file(&workspace_root().join(".github/workflows/run-sweep.yml"))
            .unwrap()
            .into_value();
    let policy_outputs: serde_json::Map<String, Value> = policy
        .outputs
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let (_, parts) = run_setup_and_plans(&wf, &config_file, true, &work);
    let rows_of = |family: &str| -> Vec<Value> {
        parts
            .iter()
            .filter(|(p, _)| p["family"] == family)
            .flat_map(|(_, rows)| rows.clone())
            .collect()
    };
    assert_eq!(rows_of("sn-1k1k"), remaining_rows("1k1k"));
    assert_eq!(rows_of("sn-8k1k"), remaining_rows("8k1k"));
    assert_eq!(rows_of("canary"), canary);
    // The canary first, then the other parts in the order setup lists them.
    let mut jobs: Vec<(Value, Value)> = Vec::new();
    for (part, rows) in &parts {
        for r in rows {
            jobs.push((part.clone(), r.clone()));
        }
    }
    assert_eq!(jobs[0].0["family"], "canary");
    let results = work.join("results");
    let job_names = run_gpu_legs(&runner, &wf, &policy_outputs, &jobs, &work, &results);

    // 7. collect-results job: actions/collect-results `aggregate`.
    let run = runner.action(
        "collect-results",
        &[
            ("command", "aggregate"),
            ("results-dir", "results/"),
            ("exp-name", "bmk"),
        ],
        &work,
        &[],
    );
    let agg_bmk = work.join(plain(&run.outputs["file"]));
    let rows: Value = serde_json::from_str(&std::fs::read_to_string(&agg_bmk).unwrap()).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), jobs.len());
    show_file("actions/collect-results aggregate (results_bmk)", &agg_bmk);

    // 8. collect-evals job: one eval artifact eval_<exp>_<result>, then
    //    actions/collect-results `evals`.
    let eval_row = canary[0].clone();
    let eval_dir = work
        .join("eval-results")
        .join(format!("eval_{}_e2e", plain(&eval_row["exp-name"])));
    std::fs::create_dir_all(&eval_dir).unwrap();
    std::fs::write(
        eval_dir.join("meta_env.json"),
        json!({
            "infmax_model_prefix": eval_row["model-prefix"], "hw": eval_row["runner"],
            "framework": eval_row["framework"], "precision": eval_row["precision"],
            "spec_decoding": eval_row["spec-decoding"], "isl": plain(&eval_row["isl"]),
            "osl": plain(&eval_row["osl"]), "tp": plain(&eval_row["tp"]), "ep": plain(&eval_row["ep"]),
            "conc": plain(&eval_row["conc"]), "dp_attention": plain(&eval_row["dp-attn"]),
            "model": eval_row["model"], "is_multinode": false
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        eval_dir.join("results_gsm8k.json"),
        json!({
            "lm_eval_version": "0.4.9",
            "model_name": eval_row["model"],
            "results": {"gsm8k": {
                "exact_match,strict-match": 0.93, "exact_match_stderr,strict-match": 0.007,
                "exact_match,flexible-extract": 0.95, "exact_match_stderr,flexible-extract": 0.006
            }},
            "configs": {"gsm8k": {
                "metric_list": [{"metric": "exact_match"}],
                "filter_list": [{"name": "strict-match"}, {"name": "flexible-extract"}]
            }},
            "n-samples": {"gsm8k": {"original": 1319, "effective": 1319}}
        })
        .to_string(),
    )
    .unwrap();
    let run = runner.action(
        "collect-results",
        &[
            ("command", "evals"),
            ("results-dir", "eval-results/"),
            ("exp-name", "all"),
        ],
        &work,
        &[],
    );
    show("actions/collect-results evals (summary table)", &run.stdout);
    let agg_eval = work.join(plain(&run.outputs["file"]));
    let evals: Value = serde_json::from_str(&std::fs::read_to_string(&agg_eval).unwrap()).unwrap();
    assert_eq!(evals[0]["task"], "gsm8k");
    assert_eq!(evals[0]["score"], json!(0.93));
    show_file(
        "actions/collect-results evals (eval_results_all)",
        &agg_eval,
    );

    // 9. compare-results job: a baseline 10 % slower; no regression.
    std::fs::create_dir_all(work.join("baseline")).unwrap();
    let baseline: Vec<Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let mut b = r.clone();
            for k in ["tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu"] {
                if let Some(v) = b[k].as_f64() {
                    b[k] = json!(v / 1.1);
                }
            }
            b
        })
        .collect();
    std::fs::write(
        work.join("baseline/agg_bmk.json"),
        serde_json::to_string_pretty(&baseline).unwrap(),
    )
    .unwrap();
    let run = runner.action(
        "compare-results",
        &[
            ("new", "agg_bmk.json"),
            ("baseline", "baseline/agg_bmk.json"),
            ("new-evals", "agg_eval_all.json"),
            ("fail-on-regression", "true"),
        ],
        &work,
        &[],
    );
    let report = work.join(plain(&run.outputs["markdown"]));
    let compare_json = work.join(plain(&run.outputs["json"]));
    show_file("actions/compare-results (report)", &report);
    let cmp: Value = serde_json::from_str(
        &std::fs::read_to_string(work.join(plain(&run.outputs["json"]))).unwrap(),
    )
    .unwrap();
    assert_eq!(
        cmp["regressions"].as_array().map(Vec::len),
        Some(0),
        "no regressions: {cmp}"
    );

    // 10. calc-success-rate job: actions/success-rate against the fake API.
    let gh = test_kit::fake_github();
    let api = gh.base_url();
    let run_id: u64 = RUN_ID.parse().unwrap();
    let mut api_jobs: Vec<Value> = job_names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            // The second job failed once and passed on a re-run.
            let conclusion = if i == 1 { "failure" } else { "success" };
            json!({"id": 1000 + i, "run_id": run_id, "run_attempt": 1,
                   "status": "completed", "conclusion": conclusion, "name": n})
        })
        .collect();
    api_jobs.push(json!({"id": 2001, "run_id": run_id, "run_attempt": 2, "status": "completed", "conclusion": "success", "name": job_names[1]}));
    api_jobs.push(json!({"id": 2002, "run_id": run_id, "run_attempt": 1, "status": "completed", "conclusion": "skipped", "name": "sweep / multi-node 1k1k /"}));
    api_jobs.push(json!({"id": 2003, "run_id": run_id, "run_attempt": 1, "status": "completed", "conclusion": "success", "name": "sweep / setup"}));
    let n_jobs = api_jobs.len();
    gh.add_route(test_kit::fake_github::Route::json(
        "GET",
        "/user",
        json!({"login": "e2e-bot", "id": 1, "type": "Bot"}),
    ));
    gh.add_route(test_kit::fake_github::Route::json(
        "GET",
        &format!("/repos/{REPO}"),
        json!({"id": 7, "name": "bench", "full_name": REPO, "url": format!("https://api.github.com/repos/{REPO}")}),
    ));
    gh.add_route(test_kit::fake_github::Route::json(
        "GET",
        &format!("/repos/{REPO}/actions/runs/{RUN_ID}"),
        json!({"id": run_id, "name": "Run Sweep", "run_attempt": 2,
               "url": format!("https://api.github.com/repos/{REPO}/actions/runs/{RUN_ID}"),
               "jobs_url": format!("https://api.github.com/repos/{REPO}/actions/runs/{RUN_ID}/jobs")}),
    ));
    gh.add_route(test_kit::fake_github::Route::paginated(
        "GET",
        &format!("/repos/{REPO}/actions/runs/{RUN_ID}/jobs"),
        json!({"total_count": n_jobs, "jobs": api_jobs}),
        "object:jobs",
    ));
    let api_env = vec![("GITHUB_API_URL".to_string(), api.clone())];
    let sr_dir = work.join("success-rate");
    std::fs::create_dir_all(sr_dir.join("configs")).unwrap();
    std::fs::copy(
        data("configs/runners.yaml"),
        sr_dir.join("configs/runners.yaml"),
    )
    .unwrap();
    let run = runner.action(
        "success-rate",
        &[
            ("token", "e2e-token"),
            ("working-directory", sr_dir.to_str().unwrap()),
        ],
        &work,
        &api_env,
    );
    let stats_file = sr_dir.join(plain(&run.outputs["file"]));
    show_file("actions/success-rate (run-stats)", &stats_file);
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(&stats_file).unwrap()).unwrap();
    // Every GPU job ran on cluster:h200-cw (its runner label is in the job
    // name); the second failed once and passed on the re-run.
    assert_eq!(
        stats["h200-cw"],
        json!({"n_success": jobs.len(), "total": jobs.len() + 1})
    );
    assert_eq!(stats["h200-nb"], json!({"n_success": 0, "total": 0}));
    assert_eq!(stats["mi355x-amds"], json!({"n_success": 0, "total": 0}));

    // 11. comment job: actions/visualizer-comment, twice (a re-run): one
    //     sticky comment, updated in place, carrying the compare report.
    gh.with_comments(REPO, PR, vec![]);
    // The fake token answers GET /user as `e2e-bot` (a PAT-like identity):
    // the comments it creates are that login's, and the sticky comment is
    // found by it.
    gh.set_comment_author("e2e-bot");
    std::fs::create_dir_all(work.join("report")).unwrap();
    std::fs::copy(&report, work.join("report/compare.md")).unwrap();
    std::fs::copy(&compare_json, work.join("report/compare.json")).unwrap();
    std::fs::create_dir_all(work.join("stats")).unwrap();
    std::fs::copy(&stats_file, work.join("stats/run_stats.json")).unwrap();
    let pr = PR.to_string();
    for _ in 0..2 {
        runner.action(
            "visualizer-comment",
            &[
                ("token", "e2e-token"),
                ("pr-number", pr.as_str()),
                ("sections", "report/compare.md"),
                ("compare-json", "report/compare.json"),
                ("run-stats", "stats/run_stats.json"),
            ],
            &work,
            &api_env,
        );
    }
    let comments = gh.comments(REPO, PR);
    assert_eq!(
        comments.len(),
        1,
        "one sticky comment after two runs: {comments:?}"
    );
    let body = comments[0]["body"].as_str().unwrap();
    assert!(body.contains(&format!("inference?unofficialRun={RUN_ID}")));
    assert!(body.contains(&format!("evaluation?unofficialRun={RUN_ID}")));
    // The verdict heads the comment (from compare-results' JSON summary),
    // the success rates come from success-rate's file.
    let first = body.lines().nth(1).unwrap_or_default();
    assert!(
        first.starts_with("### ✅ 0 points regressed (0 metrics) · "),
        "verdict first: {body}"
    );
    assert!(body.contains("#### Success rate per hardware"), "{body}");
    assert!(body.contains("| h200-cw | "), "{body}");
    assert!(body.contains("<sub>posted by sweepkit "), "{body}");
    show("actions/visualizer-comment (PR comment body)", body);

    show_file("job summaries written along the way", &summary);
}

/// The GPU jobs of run-sweep.yml for `jobs` ((job id, matrix row)), each
/// in its own directory: the job env computed from the row with the job's
/// own expressions, the cleanup, leg-environment and launch steps run as
/// written (the launch command plays back the recorded raw
/// benchmark_serving file, examples/sweep/raw/), then the job's
/// collect-results action and the bmk_ artifact laid out in `results` as
/// download-artifact does. Returns the job names as the API lists them.
/// Runs the leg job of the leg workflow for each (part, row) of `jobs`, its
/// steps as written; returns the legs' job names as GitHub lists them (the
/// sweep's calling job, then the leg job).
fn run_gpu_legs(
    runner: &Runner,
    wf: &Value,
    policy_outputs: &serde_json::Map<String, Value>,
    jobs: &[(Value, Value)],
    work: &Path,
    results: &Path,
) -> Vec<String> {
    let legs_wf = common::legs_workflow();
    let launch = r#"cp "$E2E_RAW/${EXP_NAME}_tp${TP}_conc${CONC}.json" "$RESULT_FILENAME.json"
printf '%s|%s|%s|%s' "${HF_HUB_CACHE-}" "${RANDOM_RANGE_RATIO-}" "${HF_TOKEN-}" "${REQUIRE_POWER-}" >leg_seen"#;
    let nodes = ["h200-cw_00", "h200-cw_01"];
    let mut job_names = Vec::new();
    for (i, (part, row)) in jobs.iter().enumerate() {
        let job_id = part["nodes"].as_str().unwrap();
        let job = &legs_wf["jobs"][job_id];
        let node = nodes[i % nodes.len()];
        let mut ctx = common::leg_ctx(&json!({
            "matrix": {"family": part["kind"], "config": row},
            "needs": {"policy": {"result": "success", "outputs": policy_outputs}},
            "secrets": {"hf-token": "hf-e2e-secret"},
            "inputs": {
                "launch-command": launch, "timeout-minutes": 500, "duration": "3600",
                "duration-override": "", "require-power": false, "eval-limit": "",
                "leg-env": "HF_HUB_CACHE=/mnt/hf_hub_cache/\nSALLOC_EXCLUDE=h200-cw_09\n",
                "cleanup-command": "echo \"cleanup $RUNNER_NAME\" >>\"$E2E_CLEANUP_LOG\"",
            },
            "runner": {"name": node},
            "github": {"token": "e2e-token"},
        }));
        ctx["inputs"]["part"] = json!(part.to_string());
        // The sweep's calling job is named for the part (the canary or a
        // fan-out job; every fan-out job has the same name).
        let caller = if part["family"] == "canary" {
            "canary"
        } else {
            "benchmark-legs"
        };
        let part_name = common::eval_template(
            &plain(&wf["jobs"][caller]["name"]),
            &json!({"matrix": part}),
        );
        let mut env: Vec<(String, String)> = job["env"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), common::eval_template(&plain(v), &ctx)))
            .collect();
        ctx["env"] = Value::Object(env.iter().map(|(k, v)| (k.clone(), json!(v))).collect());
        let job_name = format!(
            "{part_name} / {}",
            common::eval_template(&plain(&job["name"]), &ctx)
        );
        let job_dir = work.join(format!("job{i}"));
        std::fs::create_dir_all(&job_dir).unwrap();

        // The leg's run: steps as written in the workflow: cleanup, leg
        // environment, launch.
        let cleanup_log = job_dir.join("cleanup.log");
        env.push(("E2E_RAW".into(), data("raw").to_str().unwrap().into()));
        env.push((
            "E2E_CLEANUP_LOG".into(),
            cleanup_log.to_str().unwrap().into(),
        ));
        let steps = job["steps"].as_array().unwrap();
        let step = |name: &str| steps.iter().find(|st| st["name"] == name).unwrap();
        for name in [
            "Clean up before the leg",
            "Set the leg environment",
            "Launch the benchmark",
        ] {
            let out = common::run_step(job, name, &ctx, &mut env, &job_dir);
            ok(&out, &format!("{job_id}: {name}"));
        }
        assert_eq!(
            std::fs::read_to_string(job_dir.join("leg_seen")).unwrap(),
            "/mnt/hf_hub_cache/|0.8|hf-e2e-secret|0",
            "leg-env, its default, the secret in the launch step, REQUIRE_POWER"
        );
        ctx["env"] = Value::Object(env.iter().map(|(k, v)| (k.clone(), json!(v))).collect());
        let name = env
            .iter()
            .rev()
            .find(|(k, _)| k == "RESULT_FILENAME")
            .unwrap()
            .1
            .clone();
        assert!(
            name.ends_with(&format!(
                "_{node}_recipe-{}",
                &plain(&row["recipe-fingerprint"])[..16]
            )),
            "{name}"
        );

        // "Process the result": runs for fixed-seq-len benchmark jobs.
        let process = step("Process the result");
        assert!(common::eval_if(process["if"].as_str().unwrap(), &ctx, true));
        let mut job_env = env.clone();
        for (k, v) in process["env"].as_object().unwrap() {
            job_env.push((k.clone(), common::eval_template(&plain(v), &ctx)));
        }
        let run = runner.action(
            "collect-results",
            &[
                ("command", "process"),
                ("working-directory", job_dir.to_str().unwrap()),
            ],
            work,
            &job_env,
        );
        let agg = job_dir.join(plain(&run.outputs["file"]));
        assert_eq!(agg, job_dir.join(format!("agg_{name}.json")));
        let processed: Value =
            serde_json::from_str(&std::fs::read_to_string(&agg).unwrap()).unwrap();
        assert_eq!(processed["conc"], row["conc"]);
        assert_eq!(processed["hw"], row["runner"]);
        let raw: Value = serde_json::from_str(
            &std::fs::read_to_string(job_dir.join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let gpus = row["tp"].as_f64().unwrap();
        let raw_total = raw["total_token_throughput"].as_f64().unwrap();
        assert!((processed["tput_per_gpu"].as_f64().unwrap() - raw_total / gpus).abs() < 1e-6);
        if i < 2 {
            show(
                &format!("{job_id}: job \"{job_name}\" → RESULT_FILENAME"),
                &name,
            );
            show_file(
                &format!("{job_id}: actions/collect-results process (bmk_ artifact)"),
                &agg,
            );
        }
        // The upload step's artifact name, and download-artifact's layout.
        let upload = step("Upload result");
        let artifact = common::eval_template(&plain(&upload["with"]["name"]), &ctx);
        assert_eq!(artifact, format!("bmk_{name}"));
        let art = results.join(&artifact);
        std::fs::create_dir_all(&art).unwrap();
        std::fs::copy(&agg, art.join(format!("agg_{name}.json"))).unwrap();
        let after = step("Clean up after the leg");
        assert_eq!(after["if"], "always()");
        let out = common::run_step(job, "Clean up after the leg", &ctx, &mut env, &job_dir);
        ok(&out, &format!("{job_id}: Clean up after the leg"));
        assert_eq!(
            std::fs::read_to_string(&cleanup_log).unwrap(),
            format!("cleanup {node}\ncleanup {node}\n"),
            "cleanup before and after the leg"
        );
        job_names.push(format!("sweep / {job_name}"));
    }
    job_names
}

/// setup's "Check the budgets and list the parts" step, then the leg
/// workflow's plan job for every part of its parts lists (the canary's
/// first), each step run as written on `config_file` (the
/// search-space-config artifact). Returns setup's `needs` entry and every
/// (part, rows).
fn run_setup_and_plans(
    wf: &Value,
    config_file: &str,
    canary_mode: bool,
    work: &Path,
) -> (Value, Vec<(Value, Vec<Value>)>) {
    let run_step = |job: &Value, step: &str, ctx: &Value, dir: &Path| {
        std::fs::create_dir_all(dir).unwrap();
        let out_file = dir.join("github_output");
        std::fs::write(&out_file, "").unwrap();
        let mut env = vec![
            (
                "GITHUB_OUTPUT".to_string(),
                out_file.to_str().unwrap().to_string(),
            ),
            (
                "GITHUB_STEP_SUMMARY".to_string(),
                dir.join("summary.md").to_str().unwrap().to_string(),
            ),
        ];
        let out = common::run_step(job, step, ctx, &mut env, dir);
        ok(&out, step);
        let outs = outputs(&out_file);
        // Every job output read from the step's outputs is written.
        for (k, v) in job["outputs"].as_object().unwrap() {
            if plain(v).contains("steps.split.outputs.") {
                assert!(outs.contains_key(k), "{step}: no output {k}");
            }
        }
        outs
    };
    let setup = &wf["jobs"]["setup"];
    let ctx = json!({
        "needs": {"policy": {"result": "success", "outputs": {"canary": canary_mode.to_string()}}},
        "steps": {
            "changelog-matrix": {"outputs": {"config-file": config_file}},
            "command-matrix": {"outputs": {}},
            "reuse": {"outputs": {"reuse-enabled": "false"}},
        },
    });
    let dir = work.join("setup-split");
    let mut setup_outputs = run_step(setup, "Check the budgets and list the parts", &ctx, &dir);
    setup_outputs.insert("reuse-enabled".into(), json!("false"));
    show_file("setup: split (job summary)", &dir.join("summary.md"));
    let setup_needs = json!({"result": "success", "outputs": setup_outputs});
    // Each part: one call of the leg workflow; its plan job downloads the
    // artifact to search-space/.
    let plan = &common::legs_workflow()["jobs"]["plan"];
    let mut parts = Vec::new();
    for list in [
        "canary-parts",
        "benchmark-parts",
        "agentic-parts",
        "eval-parts",
    ] {
        let listed: Vec<Value> = serde_json::from_str(&plain(&setup_outputs[list])).unwrap();
        for part in listed {
            let id = format!("{}-{}", plain(&part["family"]), part["part"]);
            let ctx = json!({"inputs": {"part": part.to_string(),
                "without-canary": setup_outputs["without-canary"] == "true"}});
            let dir = work.join(format!("plan-{id}"));
            std::fs::create_dir_all(dir.join("search-space")).unwrap();
            std::fs::copy(
                config_file,
                dir.join("search-space/search-space-config.json"),
            )
            .unwrap();
            let outs = run_step(plan, "Cut out the part's legs", &ctx, &dir);
            let legs: Vec<Value> = serde_json::from_str(&plain(&outs["legs"])).unwrap();
            let rows = legs.into_iter().map(|l| l["config"].clone()).collect();
            parts.push((part, rows));
        }
    }
    (setup_needs, parts)
}

/// The manual entry (the e2e-tests.yml equivalent): a `workflow_dispatch`
/// with `generate-command: test-config --config-keys … --conc …` runs setup
/// although the policy sweeps nothing for the event, the command line goes
/// whole to `generate-matrix from-command`, and the same legs, collect and
/// compare run; no PR comment and no ingest unless asked for.
#[test]
fn manual_entry_runs_a_test_config_command_through_the_same_legs() {
    let tmp = test_kit::temp_dir();
    let repo = tmp.path().join("repo");
    let work = tmp.path().join("work");
    let temp = tmp.path().join("runner-temp");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&temp).unwrap();
    let (_, head) = make_repo(&repo);
    let msg = git(&repo, &["log", "-1", "--format=%B", &head]);
    let event_path = work.join("event.json");
    std::fs::write(&event_path, json!({"inputs": {}}).to_string()).unwrap();
    let runner = Runner {
        github: vec![
            ("github.event_name".into(), "workflow_dispatch".into()),
            ("github.repository".into(), REPO.into()),
            ("github.ref".into(), "refs/heads/main".into()),
            ("github.run_id".into(), RUN_ID.into()),
            ("github.run_attempt".into(), "1".into()),
        ],
        env: vec![
            ("GITHUB_ACTIONS".into(), "true".into()),
            ("GITHUB_EVENT_NAME".into(), "workflow_dispatch".into()),
            (
                "GITHUB_EVENT_PATH".into(),
                event_path.to_str().unwrap().into(),
            ),
            ("GITHUB_REPOSITORY".into(), REPO.into()),
            ("GITHUB_REF".into(), "refs/heads/main".into()),
            ("GITHUB_RUN_ID".into(), RUN_ID.into()),
        ],
        summary: work.join("step_summary.md"),
        temp: temp.clone(),
    };
    let wf =
        sweep_model::yaml::load_file(&workspace_root().join(".github/workflows/run-sweep.yml"))
            .unwrap()
            .into_value();
    let jobs = &wf["jobs"];

    // policy: a dispatch sweeps nothing by itself…
    let policy = runner.action(
        "sweep-policy",
        &[
            ("head-commit-message", msg.as_str()),
            ("allow-conflict", "true"),
        ],
        &work,
        &[],
    );
    assert_eq!(policy.outputs["run-setup"], "false");
    assert_eq!(policy.outputs["canary"], "false");
    let policy_outputs = policy.outputs.clone();
    // … setup runs because of generate-command.
    let command = "test-config --config-keys tiny-fp8-h200-sglang --conc 4 8 --seq-lens 1k1k";
    let mut ctx = json!({
        "needs": {
            "policy": {"result": "success", "outputs": policy_outputs},
            "check-changelog": {"result": "skipped", "outputs": {}},
            "reuse-sweep-gate": {"result": "skipped", "outputs": {}},
        },
        "inputs": {"generate-command": command, "manual-ingest": false, "comment-pr-number": "",
                   "ingest-repository": "example/ingest"},
        "github": {"event_name": "workflow_dispatch"},
    });
    let setup_if = jobs["setup"]["if"].as_str().unwrap();
    assert!(
        common::eval_if(setup_if, &ctx, false),
        "manual entry runs setup"
    );
    let mut no_command = ctx.clone();
    no_command["inputs"]["generate-command"] = json!("");
    assert!(
        !common::eval_if(setup_if, &no_command, false),
        "a bare dispatch does not"
    );
    let setup_steps = jobs["setup"]["steps"].as_array().unwrap();
    let step_runs = |name: &str, c: &Value| {
        let st = setup_steps.iter().find(|st| st["name"] == name).unwrap();
        st.get("if")
            .is_none_or(|i| common::eval_if(i.as_str().unwrap(), c, true))
    };
    assert!(step_runs(
        "Generate the matrix from the command line (manual entry)",
        &ctx
    ));
    assert!(!step_runs("Generate the matrix from the changelog", &ctx));
    assert!(!step_runs(
        "Look up a reusable sweep (fails closed on main)",
        &ctx
    ));
    assert!(step_runs(
        "Generate the matrix from the changelog",
        &no_command
    ));

    // setup: actions/generate-matrix from-command, then the split.
    let repo_s = repo.to_str().unwrap();
    let gm = runner.action(
        "generate-matrix",
        &[
            ("command", "from-command"),
            ("command-line", command),
            ("priority", "true"),
            (
                "priority-policy",
                data("configs/ci-priority.yaml").to_str().unwrap(),
            ),
            ("working-directory", repo_s),
        ],
        &work,
        &[],
    );
    let config_file = plain(&gm.outputs["config-file"]);
    show_file(
        "manual entry: actions/generate-matrix from-command",
        Path::new(&config_file),
    );
    let ssc: Value = serde_json::from_str(&std::fs::read_to_string(&config_file).unwrap()).unwrap();
    assert_eq!(ssc["changelog_metadata"]["generate_command"], command);
    let (setup_needs, parts) = run_setup_and_plans(&wf, &config_file, false, &work);
    assert_eq!(parts.len(), 1, "--seq-lens 1k1k: one part, no 8k1k legs");
    assert_eq!(parts[0].0["family"], "sn-1k1k");
    let rows = parts[0].1.clone();
    let concs: Vec<u64> = rows.iter().filter_map(|r| r["conc"].as_u64()).collect();
    assert_eq!(concs, [4, 8], "--conc 4 8 of the one config key");
    assert!(
        rows.iter()
            .all(|r| r["model-prefix"] == "tiny" && r.get("priority").is_some())
    );

    // The legs, as in the changelog chain (no canary: the policy has none).
    ctx["needs"]["setup"] = setup_needs;
    ctx["needs"]["canary"] = json!({"result": "skipped", "outputs": {}});
    for (id, runs) in [
        ("benchmark-legs", true),
        ("agentic-legs", false),
        ("eval-legs", false),
    ] {
        assert_eq!(
            common::eval_if(jobs[id]["if"].as_str().unwrap(), &ctx, true),
            runs,
            "{id}"
        );
    }
    assert!(!common::eval_if(
        jobs["canary"]["if"].as_str().unwrap(),
        &ctx,
        true
    ));
    let legs: Vec<(Value, Value)> = rows
        .iter()
        .map(|r| (parts[0].0.clone(), r.clone()))
        .collect();
    let results = work.join("results");
    let names = run_gpu_legs(&runner, &wf, &policy_outputs, &legs, &work, &results);
    assert_eq!(names.len(), 2);
    assert!(
        names[0].starts_with("sweep / single-node 1k1k / "),
        "{}",
        names[0]
    );

    // collect-results and compare-results run; the comment and ingest do not.
    let run = runner.action(
        "collect-results",
        &[
            ("command", "aggregate"),
            ("results-dir", "results/"),
            ("exp-name", "bmk"),
        ],
        &work,
        &[],
    );
    let agg: Value = serde_json::from_str(
        &std::fs::read_to_string(work.join(plain(&run.outputs["file"]))).unwrap(),
    )
    .unwrap();
    assert_eq!(agg.as_array().unwrap().len(), 2);
    ctx["needs"]["benchmark-legs"] = json!({"result": "success", "outputs": {}});
    for (id, _) in jobs.as_object().unwrap() {
        if ctx["needs"].get(id).is_none() {
            ctx["needs"][id] = json!({"result": "skipped", "outputs": {}});
        }
    }
    assert!(common::eval_if(
        jobs["collect-results"]["if"].as_str().unwrap(),
        &ctx,
        true
    ));
    ctx["needs"]["collect-results"] = json!({"result": "success", "outputs": {}});
    ctx["needs"]["upload-changelog-metadata"] = json!({"result": "success", "outputs": {}});
    assert!(common::eval_if(
        jobs["compare-results"]["if"].as_str().unwrap(),
        &ctx,
        true
    ));
    let comment = jobs["comment-unofficial-run-visualizer"]["if"]
        .as_str()
        .unwrap();
    let ingest = jobs["trigger-ingest"]["if"].as_str().unwrap();
    assert!(
        !common::eval_if(comment, &ctx, true),
        "no PR comment by default"
    );
    assert!(!common::eval_if(ingest, &ctx, true), "no ingest by default");
    ctx["inputs"]["manual-ingest"] = json!(true);
    ctx["inputs"]["comment-pr-number"] = json!("7");
    assert!(common::eval_if(comment, &ctx, true), "comment when asked");
    assert!(
        common::eval_if(ingest, &ctx, true),
        "ingest when asked, after a successful collect"
    );
    ctx["needs"]["collect-results"]["result"] = json!("failure");
    assert!(
        !common::eval_if(ingest, &ctx, false),
        "never after a failed collect"
    );
}

/// The generate-matrix action's config-driven mode (e2e/manual sweeps):
/// lists word-split into arguments, switches from `true`/`false` inputs.
#[test]
fn generate_matrix_action_full_sweep_and_test_config() {
    let tmp = test_kit::temp_dir();
    let runner = Runner {
        github: vec![
            ("github.run_id".into(), RUN_ID.into()),
            ("github.run_attempt".into(), "1".into()),
        ],
        env: vec![("GITHUB_EVENT_NAME".into(), "workflow_dispatch".into())],
        summary: tmp.path().join("summary.md"),
        temp: tmp.path().to_path_buf(),
    };
    let root = workspace_root();
    let configs =
        "examples/sweep/configs/nvidia-master.yaml examples/sweep/configs/amd-master.yaml";
    let full = runner.action(
        "generate-matrix",
        &[
            ("command", "full-sweep"),
            ("config-files", configs),
            ("runner-config", "examples/sweep/configs/runners.yaml"),
            ("priority", "false"),
            ("working-directory", root.to_str().unwrap()),
        ],
        tmp.path(),
        &[],
    );
    let rows: Value = serde_json::from_str(
        &std::fs::read_to_string(plain(&full.outputs["config-file"])).unwrap(),
    )
    .unwrap();
    let rows = rows.as_array().unwrap();
    // nvidia: 1k1k conc 4, 8 (tp 8) + 8k1k conc 4 (tp 4); amd: 1k1k conc 4.
    let benchmarks = rows
        .iter()
        .filter(|r| r["eval-only"] != json!(true))
        .count();
    assert_eq!(benchmarks, 4, "{rows:?}");
    assert!(rows.iter().any(|r| r["runner"] == "mi355x"));

    let only = runner.action(
        "generate-matrix",
        &[
            ("command", "test-config"),
            ("config-files", configs),
            ("config-keys", "tiny-fp8-h200-*"),
            ("runner-config", "examples/sweep/configs/runners.yaml"),
            ("all-evals", "true"),
            ("priority", "false"),
            ("working-directory", root.to_str().unwrap()),
        ],
        tmp.path(),
        &[],
    );
    let rows: Value = serde_json::from_str(
        &std::fs::read_to_string(plain(&only.outputs["config-file"])).unwrap(),
    )
    .unwrap();
    let rows = rows.as_array().unwrap();
    show(
        "actions/generate-matrix test-config --all-evals",
        &serde_json::to_string(rows).unwrap(),
    );
    // --all-evals: every 8k1k row of the selected key as an eval, nothing else.
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["runner"], "cluster:h200-cw");
    assert_eq!(rows[0]["isl"], 8192);
    assert_eq!(rows[0]["run-eval"], json!(true));
}

/// The reuse gate job: actions/reuse-sweep on a PR `synchronize` with an
/// authorised `/reuse-sweep-run` comment (fake GitHub) skips the PR sweep;
/// the setup job's lookup on a PR (no event action) never reuses.
#[test]
fn reuse_sweep_action_gate_and_setup_modes() {
    let tmp = test_kit::temp_dir();
    let gh = test_kit::fake_github();
    gh.with_comments(
        REPO,
        PR,
        vec![json!({
            "id": 11, "body": "/reuse-sweep-run", "author_association": "OWNER",
            "created_at": "2026-01-01T00:00:00Z", "user": {"login": "maintainer"}
        })],
    );
    // The commenter's permission is read from the API (strict rules).
    gh.with_collaborator(REPO, "maintainer", "maintain");
    let runner = Runner {
        github: vec![
            ("github.event_name".into(), "pull_request".into()),
            ("github.repository".into(), REPO.into()),
            ("github.ref".into(), "refs/pull/2/merge".into()),
        ],
        env: vec![("GITHUB_API_URL".into(), gh.base_url())],
        summary: tmp.path().join("summary.md"),
        temp: tmp.path().to_path_buf(),
    };
    let pr = PR.to_string();
    let gate = runner.action(
        "reuse-sweep",
        &[
            ("token", "e2e-token"),
            ("commit-sha", "0123456789abcdef0123456789abcdef01234567"),
            ("event-action", "synchronize"),
            ("pr-number", pr.as_str()),
        ],
        tmp.path(),
        &[],
    );
    show(
        "actions/reuse-sweep (gate job outputs)",
        &serde_json::to_string_pretty(&gate.outputs).unwrap(),
    );
    assert_eq!(gate.outputs["skip-pr-sweep"], "true");
    assert_eq!(gate.outputs["reuse-enabled"], "false");

    let setup = runner.action(
        "reuse-sweep",
        &[
            ("token", "e2e-token"),
            ("commit-sha", "0123456789abcdef0123456789abcdef01234567"),
        ],
        tmp.path(),
        &[],
    );
    assert_eq!(setup.outputs["reuse-enabled"], "false");
    assert_eq!(setup.outputs["skip-pr-sweep"], "false");
    assert!(
        plain(&setup.outputs["reuse-reason"]).contains("is not synchronize"),
        "{:?}",
        setup.outputs
    );
}

/// The multi-node leg job of the leg workflow: worker settings exported only as
/// plain KEY=VALUE, one result per concurrency processed with the GPU split
/// read from the file name, and an injection attempt refused.
#[test]
fn multi_node_job_from_the_workflow() {
    let wf = common::legs_workflow();
    let job = &wf["jobs"]["multi-node"];
    let worker = |n: u64, settings: Value| {
        json!({"num-worker": n, "tp": 4, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 4,
               "dp-attn": true, "additional-settings": settings})
    };
    let row = |settings: Value| {
        json!({
            "image": "example/dynamo:v1", "model": "example-org/Tiny-FP8", "model-prefix": "tiny",
            "precision": "fp8", "framework": "dynamo-sglang", "spec-decoding": "none",
            "runner": "cluster:h200-cw", "isl": 1024, "osl": 1024,
            "prefill": worker(2, settings), "decode": worker(2, json!([])),
            "conc": [16, 32], "max-model-len": 2304, "exp-name": "tiny_1k1k", "disagg": true,
            "run-eval": false, "eval-only": false,
            "recipe-fingerprint": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
        })
    };
    // The launcher stand-in checks the exported settings, then writes one raw
    // result per concurrency named like the multi-node recipes do.
    let launch = r#"set -e
printf '%s|%s' "${PREFILL_MEM_FRACTION-}" "${FLAG_WITH_SPACES-}" >seen_settings
printf '%s' "${X-}" >seen_x
for c in $CONC_LIST; do
  cp "$E2E_RAW/tiny_1k1k_tp8_conc4.json" "${RESULT_FILENAME}_conc${c}_gpus_16_ctx_8_gen_8.json"
done"#;
    let ctx_for = |r: &Value, node: &str| {
        common::leg_ctx(&json!({
            "matrix": {"family": "fixed", "config": r},
            "needs": {"policy": {"outputs": {"agentx-fast": "false", "fail-fast": "false"}}},
            "secrets": {}, "inputs": {"launch-command": launch},
            "runner": {"name": node}, "github": {"token": "t"},
        }))
    };
    // The leg's environment: its first step, `generate-matrix leg-env`.
    let render_env = |ctx: &Value, dir: &Path| -> Vec<(String, String)> {
        let mut env = vec![("E2E_RAW".into(), data("raw").to_str().unwrap().into())];
        let out = common::run_step(job, "Set the leg environment", ctx, &mut env, dir);
        ok(&out, "multi-node leg environment");
        env
    };

    let tmp = test_kit::temp_dir();
    let good = row(json!(["PREFILL_MEM_FRACTION=0.8", "FLAG_WITH_SPACES=a b"]));
    let ctx = ctx_for(&good, "h200-cw_07");
    let mut env = render_env(&ctx, tmp.path());
    let name = common::eval_template(&plain(&job["name"]), &ctx);
    let out = common::run_step(
        job,
        "Launch the multi-node benchmark",
        &ctx,
        &mut env,
        tmp.path(),
    );
    ok(&out, "multi-node launch");
    let result = env
        .iter()
        .rev()
        .find(|(k, _)| k == "RESULT_FILENAME")
        .unwrap()
        .1
        .clone();
    assert_eq!(
        result,
        "tiny_1k1k_fp8_dynamo-sglang_prefill-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw2_decode-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw2_disagg-true_spec-none_conc16x32_h200-cw_07_recipe-0123456789abcdef"
    );
    let out = common::run_step(job, "Process the results", &ctx, &mut env, tmp.path());
    ok(&out, "multi-node process");
    for conc in [16, 32] {
        let agg = tmp
            .path()
            .join(format!("agg_{result}_conc{conc}_gpus_16_ctx_8_gen_8.json"));
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&agg).unwrap()).unwrap();
        assert_eq!(v["is_multinode"], true);
        assert_eq!(
            (v["num_prefill_gpu"].clone(), v["num_decode_gpu"].clone()),
            (json!(8), json!(8))
        );
        if conc == 16 {
            show(
                &format!("multi-node job \"{name}\""),
                &serde_json::to_string_pretty(&v).unwrap(),
            );
        }
    }

    // A config value that tries to run a command is refused, not evaluated.
    let attempts = [
        "X=$(touch pwned)",
        "X=1; touch pwned",
        "X=`touch pwned`",
        "NOT A KEY=1",
        "X=1 B=$(touch pwned)",
        "PATH=1\ntouch pwned",
        "BASH_ENV=./pwn.sh",
        "LD_PRELOAD=./pwn.so",
    ];
    for (case, evil) in attempts.into_iter().enumerate() {
        let bad = row(json!([evil]));
        let ctx = ctx_for(&bad, "h200-cw_07");
        let dir = tmp.path().join(format!("evil{case}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut env = render_env(&ctx, &dir);
        let out = common::run_step(job, "Launch the multi-node benchmark", &ctx, &mut env, &dir);
        let stdout = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if let Some(value) = evil.strip_prefix("X=") {
            // A plain key: exported verbatim as an opaque value, never evaluated.
            ok(&out, evil);
            assert_eq!(std::fs::read_to_string(dir.join("seen_x")).unwrap(), value);
        } else {
            assert!(
                !out.status.success() && stdout.contains("additional-settings"),
                "{evil}: {stdout}"
            );
            assert!(!dir.join("seen_x").exists(), "{evil}: the launcher ran");
        }
        assert!(!dir.join("pwned").exists(), "{evil} was executed");
    }
}
