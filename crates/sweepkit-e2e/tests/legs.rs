//! The GPU legs (the leg workflow `sweepkit-sweep-legs.yml`, called by
//! `run-sweep.yml`) against GitHub's and Linux's limits, read from the
//! workflow files themselves (YAML anchors resolved):
//!
//! - no secret in a GPU job's `env:`, secrets only in the launch step (and
//!   the checkout token); no `env:` value or action input fed from a
//!   matrix/search-space output; the cleanup before and after (always)
//!   every leg (a trusted dispatch removes its images after that);
//!   nothing but bash, coreutils and sweepkit binaries in a GPU job's
//!   scripts;
//! - `generate-matrix split` (setup's parts lists, then each part's plan
//!   job) on a synthetic 2,000-leg sweep, on the 10× scale catalogue and on
//!   the biggest recorded real case (286 rows): every part ≤ 256 legs, every
//!   group ≤ 256 parts, every job's outputs < 1 MB and the run's < 50 MB as
//!   GitHub counts them (UTF-16), and no environment string of any leg >
//!   128 KiB (docs/limits.md).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use common::{gpu_jobs, legs_workflow, plain};

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sweep_matrix::legs::{GROUPS, MAX_LEGS_PER_JOB, MAX_PARTS_PER_GROUP, TEMPLATE_VARS};

/// GitHub: the outputs of one job at most 1 MB in all, sized as UTF-16.
const GITHUB_OUTPUT_LIMIT: usize = 1024 * 1024;
/// Linux: one `KEY=VALUE` environment string at most 128 KiB (MAX_ARG_STRLEN).
const LINUX_ENV_STRING_LIMIT: usize = 128 * 1024;
/// GitHub: the outputs of a whole run at most 50 MB, sized as UTF-16.
const GITHUB_RUN_OUTPUT_LIMIT: usize = 50 * 1024 * 1024;

use sweepkit_e2e::workspace_root as root;

fn workflow() -> Value {
    sweep_model::yaml::load_file(&root().join(".github/workflows/run-sweep.yml"))
        .unwrap()
        .into_value()
}

/// The outputs that carry matrix rows: the plan job's part.
fn matrix_outputs() -> Vec<String> {
    vec![
        "needs.plan.outputs.legs".into(),
        "search-space-config".into(),
        "remaining".into(),
    ]
}

#[test]
fn gpu_jobs_keep_secrets_in_the_launch_step_matrices_out_of_env_and_clean_up_around_every_leg() {
    let wf = legs_workflow();
    let gpu = gpu_jobs(&wf);
    let ids: BTreeSet<String> = gpu.iter().map(|(k, _)| k.clone()).collect();
    // One leg job per leg template; the sweep itself has no GPU job.
    assert_eq!(
        ids,
        BTreeSet::from(["single-node".to_string(), "multi-node".to_string()]),
        "GPU jobs of the leg workflow"
    );
    assert!(
        gpu_jobs(&workflow()).is_empty(),
        "run-sweep.yml runs no leg itself"
    );

    let forbidden = matrix_outputs();
    let mut secret_steps = 0;
    for (id, job) in &gpu {
        // No job-level env: the leg's environment is its first steps'
        // (`generate-matrix leg-env`, sweep_matrix::leg), so no secret and
        // no rule of the workflow's own reaches every step.
        assert!(
            job.get("env").is_none(),
            "{id}: a job env restates what sweep_matrix::leg computes"
        );
        let steps = job["steps"].as_array().unwrap();
        for st in steps {
            let name = plain(&st["name"]);
            let text = st.to_string();
            if text.contains("secrets.") {
                let launch = name.starts_with("Launch the");
                let checkout_token = plain(&st["uses"]).starts_with("actions/checkout@")
                    && st["with"]["token"]
                        .as_str()
                        .is_some_and(|t| t.contains("secrets."))
                    && !st
                        .get("env")
                        .is_some_and(|e| e.to_string().contains("secrets."));
                assert!(
                    launch || checkout_token,
                    "{id}: step {name:?} sees a secret; only the launch step may"
                );
                secret_steps += usize::from(launch);
            }
            if let Some(env) = st.get("env").and_then(Value::as_object) {
                for k in env.keys() {
                    assert!(
                        TEMPLATE_VARS.contains(&k.as_str()) || k.starts_with("RUNNER_"),
                        "{id}: step {name:?} env {k} is not in TEMPLATE_VARS"
                    );
                }
            }
            // Nothing beyond bash, coreutils and the sweepkit binaries.
            if let Some(run) = st.get("run").and_then(Value::as_str) {
                for tool in ["jq ", "jq\n", "python", "yq ", "node ", "perl "] {
                    assert!(!run.contains(tool), "{id}: step {name:?} runs {tool:?}");
                }
            }
        }
        // The cleanup before (first step) and after (last step, always;
        // only a trusted dispatch's image removal, tests/fork_legs.rs,
        // comes after it).
        let first = &steps[0];
        let mut last = &steps[steps.len() - 1];
        if plain(&last["name"]) == "Remove the images the leg pulled (trusted dispatch)" {
            last = &steps[steps.len() - 2];
        }
        for (st, name) in [
            (first, "Clean up before the leg"),
            (last, "Clean up after the leg"),
        ] {
            assert_eq!(plain(&st["name"]), name, "{id}");
            assert_eq!(
                plain(&st["env"]["CLEANUP_COMMAND"]),
                "${{ fromJSON(inputs.sweep).cleanup-command }}"
            );
            assert!(
                plain(&st["run"]).contains(r#"bash -c "$CLEANUP_COMMAND""#),
                "{id}"
            );
        }
        assert!(
            first.get("if").is_none(),
            "{id}: the cleanup before is unconditional"
        );
        assert_eq!(
            plain(&last["if"]),
            "always()",
            "{id}: the cleanup after runs always"
        );
    }
    assert_eq!(
        secret_steps,
        gpu.len(),
        "one launch step with the secrets per GPU job"
    );

    // No env value or action input anywhere reads a matrix/search-space output.
    for (id, job) in wf["jobs"].as_object().unwrap() {
        let mut envs: Vec<(&str, &Value)> = Vec::new();
        if let Some(e) = job.get("env") {
            envs.push(("job env", e));
        }
        for st in job["steps"].as_array().into_iter().flatten() {
            if let Some(e) = st.get("env") {
                envs.push(("step env", e));
            }
            if let Some(w) = st.get("with") {
                envs.push(("step with", w));
            }
        }
        for (what, map) in envs {
            for (k, v) in map.as_object().unwrap() {
                let v = plain(v);
                for f in &forbidden {
                    assert!(
                        !(v.contains("${{") && v.contains(f.as_str())),
                        "{id}: {what} {k} reads {f}: a matrix must not pass through env"
                    );
                }
            }
        }
    }
}

/// Every `needs.<job>.outputs.<key>` the workflow reads is an output that
/// job declares (a missing one reads as empty, and a gate silently fails).
#[test]
fn every_job_output_read_is_declared() {
    // Floors, so a parser that found no reads cannot pass: the sweep reads
    // its policy, setup and collectors' outputs; the leg workflow its plan's.
    let sweep = outputs_read_are_declared(&workflow());
    assert!(sweep > 20, "only {sweep} reads found in run-sweep.yml");
    let legs = outputs_read_are_declared(&legs_workflow());
    assert!(legs >= 1, "no read found in the leg workflow");
}

/// Asserts every `needs.<job>.outputs.<key>` read names a declared output;
/// returns how many reads it checked.
fn outputs_read_are_declared(wf: &Value) -> usize {
    let jobs = wf["jobs"].as_object().unwrap();
    let text = serde_json::to_string(&wf["jobs"]).unwrap();
    let mut read = 0;
    for (i, _) in text.match_indices("needs.") {
        let rest = &text[i + 6..];
        let ident = |r: &str| -> String {
            r.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect()
        };
        let job = ident(rest);
        let Some(after) = rest[job.len()..].strip_prefix(".outputs.") else {
            continue;
        };
        let key = ident(after);
        assert!(
            jobs[&job]["outputs"].get(&key).is_some(),
            "the workflow reads needs.{job}.outputs.{key}, which {job} does not declare"
        );
        read += 1;
    }
    read
}

/// The leg's environment strings as the runner builds them: the env of its
/// first step (`LEG_ROW`, …) and of its launch step, each `KEY=VALUE` one
/// string, and what `leg-env` writes to `$GITHUB_ENV` from them.
fn leg_env_strings(job: &Value, ctx: &Value, family: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for st in job["steps"].as_array().unwrap() {
        let name = plain(&st["name"]);
        if name == "Set the leg environment" || name.starts_with("Launch the") {
            for (k, x) in st["env"].as_object().unwrap() {
                v.push(format!("{k}={}", common::eval_template(&plain(x), ctx)));
            }
        }
    }
    let inputs = sweep_matrix::leg::LegInputs {
        sweep: serde_json::from_str(&plain(&ctx["inputs"]["sweep"])).unwrap(),
        agentx_fast: false,
        runner_name: plain(&ctx["runner"]["name"]),
    };
    let part = sweep_matrix::leg::LegPart::of_family(family).unwrap();
    let row = ctx["matrix"]["leg"]["config"].as_object().unwrap();
    for (k, x) in sweep_matrix::leg::leg_env(row, part, &inputs).unwrap() {
        v.push(format!("{k}={x}"));
    }
    v
}

struct Measured {
    largest_output: (String, usize),
    largest_job: (String, usize),
    largest_env: (String, usize),
    run_output: usize,
    most_parts: usize,
    legs: usize,
}

fn utf16(s: &str) -> usize {
    s.encode_utf16().count() * 2
}

/// `generate-matrix split --input FILE [--family STEM --part K]` → its outputs.
fn run_split(input: &Path, family: Option<(&str, u64)>) -> Map<String, Value> {
    let tag = family.map_or("setup".to_string(), |(f, p)| format!("{f}-{p}"));
    let out_file = input.with_extension(format!("{tag}.out"));
    let mut c = test_kit::tool_command("generate-matrix");
    c.args(["split", "--input"])
        .arg(input)
        .arg("--github-output")
        .arg(&out_file);
    if let Some((f, p)) = family {
        c.args(["--family", f, "--part", &p.to_string()]);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "split {family:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut outputs = Map::new();
    for line in std::fs::read_to_string(&out_file).unwrap().lines() {
        let (k, v) = line.split_once('=').unwrap();
        outputs.insert(k.to_string(), Value::String(v.to_string()));
    }
    outputs
}

/// Runs setup's `split` and every listed part's plan-job `split` on `ssc`
/// (as the leg workflow would, once per row of a parts list), checks every
/// job's outputs and the run's against GitHub's limits, renders every leg's
/// environment from the leg workflow, and returns setup's outputs, the
/// rows per part (`<family>-<part>`) and the measurements.
fn split_and_measure(
    name: &str,
    ssc: &Value,
) -> (Map<String, Value>, Map<String, Value>, Measured) {
    let tmp = test_kit::temp_dir();
    let input = tmp.path().join("search-space-config.json");
    std::fs::write(&input, ssc.to_string()).unwrap();
    let mut m = Measured {
        largest_output: (String::new(), 0),
        largest_job: (String::new(), 0),
        largest_env: (String::new(), 0),
        run_output: 0,
        most_parts: 0,
        legs: 0,
    };
    let measure = |m: &mut Measured, job: &str, outputs: &Map<String, Value>| {
        let mut total = 0;
        for (k, v) in outputs {
            let n = utf16(&plain(v));
            total += n;
            if n > m.largest_output.1 {
                m.largest_output = (format!("{job}.{k}"), n);
            }
        }
        assert!(
            total < GITHUB_OUTPUT_LIMIT,
            "{name}: {job}'s outputs are {total} bytes"
        );
        m.run_output += total;
        if total > m.largest_job.1 {
            m.largest_job = (job.to_string(), total);
        }
    };
    let setup = run_split(&input, None);
    measure(&mut m, "setup", &setup);
    let wf = legs_workflow();
    let mut parts_rows = Map::new();
    for g in GROUPS {
        let parts: Vec<Value> =
            serde_json::from_str(&plain(&setup[&format!("{g}-parts")])).unwrap();
        assert!(parts.len() <= MAX_PARTS_PER_GROUP, "{name}: {g}");
        m.most_parts = m.most_parts.max(parts.len());
        for part in &parts {
            let kind = part["kind"].as_str().unwrap();
            assert!(
                matches!(
                    (g, kind),
                    ("benchmark", "fixed")
                        | ("agentic", "agentic")
                        | ("eval", "eval" | "agentic-eval")
                ),
                "{name}: {g}: {part}"
            );
            let family = part["family"].as_str().unwrap();
            let k = part["part"].as_u64().unwrap();
            let tag = format!("{family}-{k}");
            let plan = run_split(&input, Some((family, k)));
            measure(&mut m, &format!("plan {tag}"), &plan);
            let rows: Vec<Value> = serde_json::from_str(&plain(&plan["legs"]))
                .unwrap_or_else(|e| panic!("{name}: plan {tag}: {e}"));
            assert!(
                !rows.is_empty() && rows.len() <= MAX_LEGS_PER_JOB,
                "{name}: plan {tag}"
            );
            let job = &wf["jobs"][part["nodes"].as_str().unwrap()];
            let sweep = json!({"launch-command": "bash ./runners/launch_${RUNNER_NAME%%_*}.sh",
                "duration": "3600", "require-power": false, "eval-limit": "",
                "leg-env": "", "cleanup-command": "", "ref": ""});
            for row in &rows {
                let ctx = json!({
                    "matrix": {"leg": row},
                    "inputs": {"part": part.to_string(), "sweep": sweep.to_string(),
                               "agentx-fast": false},
                    "needs": {"plan": {"result": "success", "outputs": plan}},
                    "secrets": {"hf-token": "x".repeat(64)},
                    "runner": {"name": "b200-nb_00"},
                    "github": {"token": "t"},
                });
                for e in leg_env_strings(job, &ctx, family) {
                    if e.len() > m.largest_env.1 {
                        m.largest_env = (e.split('=').next().unwrap().to_string(), e.len());
                    }
                }
                m.legs += 1;
            }
            parts_rows.insert(tag, json!(rows.len()));
        }
    }
    assert!(
        m.largest_env.1 < LINUX_ENV_STRING_LIMIT,
        "{name}: env {} is {} bytes",
        m.largest_env.0,
        m.largest_env.1
    );
    assert!(
        m.run_output < GITHUB_RUN_OUTPUT_LIMIT,
        "{name}: run outputs {}",
        m.run_output
    );
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{name}: {} legs; largest job outputs {} = {} bytes (UTF-16, as GitHub counts; limit 1 MB); largest single output {} = {} bytes; outputs of the run {} bytes (limit 50 MB); largest env string {} = {} bytes (limit 128 KiB); most parts of a group {} (limit 256)",
        m.legs,
        m.largest_job.0,
        m.largest_job.1,
        m.largest_output.0,
        m.largest_output.1,
        m.run_output,
        m.largest_env.0,
        m.largest_env.1,
        m.most_parts
    );
    (setup, parts_rows, m)
}

/// Rows shaped like the generator's (the bundled demo configs), cloned
/// with distinct concurrencies and fingerprints.
fn synthetic(n: usize, template: &Value, salt: &str) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut r = template.clone();
            r["conc"] = if r["conc"].is_array() {
                json!([i + 1, 2 * i + 2])
            } else {
                json!(i + 1)
            };
            r["recipe-fingerprint"] = json!(format!("{salt}{i:060}"));
            r["priority"] = json!(1);
            r["queue-token"] = json!(format!("q-{salt}-{i}"));
            r
        })
        .collect()
}

fn demo_rows() -> (Value, Value, Value) {
    let out = test_kit::tool_command("generate-matrix")
        .args(["full-sweep", "--config-files"])
        .arg(root().join("examples/configs/demo-master.yaml"))
        .arg("--runner-config")
        .arg(root().join("examples/configs/runners.yaml"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let pick = |f: &dyn Fn(&Value) -> bool| rows.iter().find(|r| f(r)).unwrap().clone();
    let single = pick(&|r| r.get("prefill").is_none() && r.get("scenario-type").is_none());
    let multi = pick(&|r| r.get("prefill").is_some());
    let agentic = pick(&|r| r.get("scenario-type").is_some());
    (single, multi, agentic)
}

#[test]
fn a_synthetic_2000_leg_sweep_splits_within_githubs_and_linuxs_limits() {
    let (single, multi, agentic) = demo_rows();
    let ssc = json!({
        "single_node": {
            "1k1k": synthetic(900, &single, "a"),
            "8k1k": synthetic(600, &single, "b"),
            "agentic": synthetic(200, &agentic, "c"),
        },
        "multi_node": {
            "1k1k": synthetic(100, &multi, "d"),
            "8k1k": synthetic(50, &multi, "e"),
        },
        "evals": synthetic(100, &single, "f"),
        "multinode_evals": synthetic(50, &multi, "g"),
        "changelog_metadata": {"base_ref": "", "head_ref": "", "entries": []},
    });
    let (setup, parts, m) = split_and_measure("synthetic 2000-leg sweep", &ssc);
    assert_eq!(m.legs, 2000);
    assert_eq!(plain(&setup["legs"]), "2000");
    // 900 legs: four parts of 225; 600: three of 200; the rest one part.
    for (tag, legs) in [
        ("sn-1k1k-4", 225),
        ("sn-8k1k-3", 200),
        ("sn-agentic-1", 200),
        ("mn-1k1k-1", 100),
        ("evals-1", 100),
    ] {
        assert_eq!(parts[tag], json!(legs), "{tag}: {parts:?}");
    }
    assert_eq!(parts.len(), 4 + 3 + 1 + 1 + 1 + 1 + 1, "{parts:?}");
    assert_eq!(plain(&setup["has-agentic"]), "true");
    assert_eq!(plain(&setup["canary-parts"]), "[]");
    // The parts lists are small: a row per part, never a leg.
    assert!(m.largest_job.0.starts_with("plan "), "{:?}", m.largest_job);

    // 1,025 legs in one family fit (five parts); more parts in a group
    // than one matrix runs are refused, naming the limit, writing nothing.
    let big = json!({"single_node": {"1k1k": synthetic(4 * MAX_LEGS_PER_JOB + 1, &single, "h")}});
    let (_, parts, _) = split_and_measure("1,025 legs in one family", &big);
    assert_eq!(parts.len(), 5);
    let too_big =
        json!({"evals": vec![json!({"tp": 1}); MAX_PARTS_PER_GROUP * MAX_LEGS_PER_JOB + 1]});
    let tmp = test_kit::temp_dir();
    let input = tmp.path().join("big.json");
    std::fs::write(&input, too_big.to_string()).unwrap();
    let out_file = tmp.path().join("out");
    let out = test_kit::tool_command("generate-matrix")
        .args(["split", "--input"])
        .arg(&input)
        .arg("--github-output")
        .arg(&out_file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("257 parts") && err.contains("256 jobs"),
        "{err}"
    );
    assert!(!out_file.exists(), "no partial outputs");
}

/// The 10× scale catalogue (`scripts/make-scale-catalogue`: every config
/// key of the real master configs ten times) through `full-sweep` and the
/// manual entry's bucketing, then `split`: every budget holds.
#[test]
fn the_ten_times_catalogue_splits_within_the_limits() {
    let tmp = test_kit::temp_dir();
    let cat = tmp.path().join("cat");
    let made = std::process::Command::new("python3")
        .arg(root().join("scripts/make-scale-catalogue"))
        .arg(&cat)
        .output();
    let made = match made {
        Ok(o) if o.status.success() => o,
        other => {
            assert!(
                std::env::var_os("CI").is_none(),
                "make-scale-catalogue: {other:?}"
            );
            eprintln!("!!! SKIPPED: make-scale-catalogue did not run: {other:?}");
            return;
        }
    };
    let _ = made;
    let mut configs: Vec<PathBuf> = std::fs::read_dir(&cat)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml") && !p.ends_with("runners.yaml"))
        .collect();
    configs.sort();
    let mut line = String::from("full-sweep --config-files");
    for c in &configs {
        line.push(' ');
        line.push_str(&c.display().to_string());
    }
    line.push_str(&format!(
        " --runner-config {}",
        cat.join("runners.yaml").display()
    ));
    let out = test_kit::tool_command("generate-matrix")
        .args(["from-command", "--command-line", &line])
        .output()
        .unwrap();
    test_kit::assert_exit(&out, 0);
    let ssc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (setup, _, m) = split_and_measure("10x scale catalogue", &ssc);
    assert!(m.legs > 10_000, "{} legs", m.legs);
    assert_eq!(plain(&setup["legs"]), m.legs.to_string());
}

/// The biggest recorded real sweep (the conformance case
/// changelog-hist-39324e441-pr2508-range20: 286 rows, 254 KB as recorded).
#[test]
fn the_biggest_real_sweep_splits_within_the_limits() {
    let shared = std::env::var_os("SWEEPKIT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared"));
    let case = shared.join(
        "conformance/cases/generate-matrix/changelog-hist-39324e441-pr2508-range20/expected_stdout.json",
    );
    if !case.is_file() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} not found (set SWEEPKIT_SHARED)",
            case.display()
        );
        eprintln!("!!! SKIPPED: {} not found", case.display());
        return;
    }
    let ssc: Value = serde_json::from_str(&std::fs::read_to_string(&case).unwrap()).unwrap();
    let (setup, parts, m) = split_and_measure("real case pr2508-range20", &ssc);
    assert_eq!(m.legs, 286);
    assert_eq!(plain(&setup["legs"]), "286");
    assert!(parts.contains_key("sn-agentic-1"), "{parts:?}");
    assert!(
        m.largest_job.1 < GITHUB_OUTPUT_LIMIT / 2,
        "{:?}",
        m.largest_job
    );
}

/// `generate-matrix from-command` takes the command line whole: only
/// `full-sweep` / `test-config`, nothing evaluated, clear failures.
#[test]
fn from_command_accepts_only_the_generator_subcommands_and_evaluates_nothing() {
    let tmp = test_kit::temp_dir();
    let run = |line: &str| {
        test_kit::tool_command("generate-matrix")
            .arg("from-command")
            .current_dir(tmp.path())
            .env("INPUT_COMMAND_LINE", line)
            .output()
            .unwrap()
    };
    let cfg = root().join("examples/configs");
    let base = format!(
        "--config-files {} --runner-config {}",
        cfg.join("demo-master.yaml").display(),
        cfg.join("runners.yaml").display()
    );
    let ok = run(&format!(
        "test-config {base} --config-keys 'llama-*' --conc 4"
    ));
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let v: Value = serde_json::from_slice(&ok.stdout).unwrap();
    let rows = v["single_node"]["1k1k"].as_array().unwrap();
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r["conc"] == 4),
        "{v}"
    );
    assert!(rows.iter().all(|r| {
        r["recipe-fingerprint"]
            .as_str()
            .is_some_and(|f| f.len() == 64)
    }));

    for (line, code, says) in [
        (
            "changelog --base-ref a --head-ref b",
            2,
            "only `full-sweep …` and `test-config …`",
        ),
        ("rm -rf /", 2, "only `full-sweep …` and `test-config …`"),
        ("", 2, "empty"),
        ("test-config --config-keys 'open", 2, "unterminated"),
        ("test-config --no-such-flag", 2, "--no-such-flag"),
    ] {
        let out = run(line);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{line:?}: {err}");
        assert!(err.contains(says), "{line:?}: {err}");
        assert!(out.stdout.is_empty(), "{line:?}: no partial output");
    }
    // Shell syntax in a word is just text: nothing runs.
    let out = run(&format!(
        "test-config {base} --config-keys 'x;touch pwned' $(touch pwned2) --conc 4"
    ));
    assert!(!out.status.success());
    assert!(!tmp.path().join("pwned").exists() && !tmp.path().join("pwned2").exists());
}

/// No silent success: the ingest dispatch of a push to main follows the
/// collect jobs' results, evaluated on the workflow's own `if:`.
#[test]
fn ingest_is_dispatched_only_after_a_successful_collect() {
    let wf = workflow();
    let ingest = plain(&wf["jobs"]["trigger-ingest"]["if"]);
    let ctx = |collect: &str, evals: &str, reuse: &str, agentic: &str| {
        json!({
            "inputs": {"ingest-repository": "example/ingest", "generate-command": "", "manual-ingest": false},
            "needs": {
                "policy": {"result": "success", "outputs": {"push-to-main": "true"}},
                "setup": {"result": "success", "outputs": {"reuse-enabled": reuse, "has-agentic": agentic}},
                "collect-results": {"result": collect, "outputs": {}},
                "collect-evals": {"result": evals, "outputs": {}},
                "calc-success-rate": {"result": "success", "outputs": {}},
                "upload-changelog-metadata": {"result": "success", "outputs": {}},
            },
        })
    };
    let dispatch = |c: &Value| common::eval_if(&ingest, c, false);
    assert!(dispatch(&ctx("success", "skipped", "false", "false")));
    assert!(dispatch(&ctx("success", "success", "false", "false")));
    assert!(
        dispatch(&ctx("skipped", "success", "false", "false")),
        "evals-only sweep"
    );
    assert!(
        !dispatch(&ctx("failure", "skipped", "false", "false")),
        "failed collect"
    );
    assert!(
        !dispatch(&ctx("cancelled", "skipped", "false", "false")),
        "cancelled collect"
    );
    assert!(
        !dispatch(&ctx("success", "failure", "false", "false")),
        "failed eval collect"
    );
    assert!(
        !dispatch(&ctx("skipped", "skipped", "false", "false")),
        "nothing collected"
    );
    assert!(
        dispatch(&ctx("skipped", "skipped", "true", "false")),
        "reused sweep"
    );
    assert!(
        !dispatch(&ctx("success", "skipped", "false", "true")),
        "agentic: the other dispatch"
    );
    let mut pr = ctx("success", "skipped", "false", "false");
    pr["needs"]["policy"]["outputs"]["push-to-main"] = json!("false");
    assert!(!dispatch(&pr), "a PR never ingests");
}

/// Setup's `split` on a small search space: its job summary and its step
/// outputs (the leg counts per family the plan jobs read), as snapshots.
#[test]
fn split_summary_and_outputs_are_snapshotted() {
    let (single, multi, _) = demo_rows();
    let ssc = json!({
        "single_node": {"1k1k": synthetic(3, &single, "a"), "8k1k": []},
        "multi_node": {"1k1k": synthetic(2, &multi, "d")},
        "evals": [],
        "multinode_evals": [],
    });
    let tmp = test_kit::temp_dir();
    let input = tmp.path().join("search-space-config.json");
    std::fs::write(&input, ssc.to_string()).unwrap();
    let output = tmp.path().join("github_output");
    let summary = tmp.path().join("summary.md");
    let out = test_kit::tool_command("generate-matrix")
        .args(["split", "--input"])
        .arg(&input)
        .arg("--github-output")
        .arg(&output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", test_kit::stderr(&out));
    test_kit::assert_snapshot!(
        "split_step_summary",
        std::fs::read_to_string(&summary).unwrap_or_default()
    );
    // Keys and sizes only: the values are the rows' JSON, pinned elsewhere.
    let shape: Vec<String> = std::fs::read_to_string(&output)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            match v.len() {
                n if n > 40 => format!("{k}=<{n} bytes>"),
                _ => l.to_string(),
            }
        })
        .collect();
    test_kit::assert_snapshot!("split_github_output_shape", shape.join("\n"));
}
