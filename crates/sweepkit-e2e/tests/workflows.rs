//! Structural checks of the workflows and composite actions that linters do
//! not make: no expression inside `run:`, `shell: bash` everywhere, every
//! `uses:` pinned, the job graph of workflow.md §2 present, every policy
//! output the workflow reads produced by `sweep-policy`, every action input
//! the steps read declared, the example caller within 30 lines, and a
//! `timeout-minutes` on every step that runs a sweepkit tool.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use common::{load, on};

use std::collections::BTreeSet;

use serde_json::Value;

use sweepkit_e2e::workspace_root as root;

fn action_files() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("actions"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path().join("action.yml");
            p.is_file().then(|| {
                format!(
                    "actions/{}/action.yml",
                    p.parent().unwrap().file_name().unwrap().to_string_lossy()
                )
            })
        })
        .collect();
    v.sort();
    v
}

const WORKFLOWS: [&str; 10] = [
    ".github/workflows/run-sweep.yml",
    ".github/workflows/ci.yml",
    ".github/workflows/release.yml",
    "examples/run-sweep.yml",
    "examples/e2e-tests.yml",
    "examples/trusted-external-sweep.yml",
    "examples/stage-results.yml",
    "examples/stage-results-callback.yml",
    "examples/recover-reused-ingest.yml",
    "examples/runner-offline-digest.yml",
];

/// Every step of a workflow (all jobs) or of a composite action.
fn steps(doc: &Value) -> Vec<Value> {
    if let Some(s) = doc.pointer("/runs/steps").and_then(Value::as_array) {
        return s.clone();
    }
    doc.get("jobs")
        .and_then(Value::as_object)
        .map(|jobs| {
            jobs.values()
                .filter_map(|j| j.get("steps").and_then(Value::as_array))
                .flatten()
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn no_expression_inside_run_and_bash_everywhere() {
    let mut files = action_files();
    files.extend(WORKFLOWS.iter().map(|s| s.to_string()));
    let mut runs = 0;
    for f in &files {
        for step in steps(&load(f)) {
            if let Some(run) = step.get("run").and_then(Value::as_str) {
                runs += 1;
                assert!(
                    !run.contains("${{"),
                    "{f}: step {:?} interpolates an expression into run:",
                    step.get("name")
                );
                assert_eq!(
                    step.get("shell").and_then(Value::as_str),
                    Some("bash"),
                    "{f}: step {:?} lacks shell: bash",
                    step.get("name")
                );
            }
        }
    }
    assert!(runs > 20, "only {runs} run steps found: the walk is broken");
}

#[test]
fn every_uses_is_local_or_pinned_by_full_sha_with_a_version_comment() {
    let mut files = action_files();
    files.extend(WORKFLOWS.iter().map(|s| s.to_string()));
    let mut pinned = 0;
    for f in &files {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        for (n, line) in text.lines().enumerate() {
            let t = line.trim_start().trim_start_matches("- ");
            let Some(target) = t.strip_prefix("uses:") else {
                continue;
            };
            let target = target.trim();
            if target.starts_with("./") {
                continue;
            }
            let (spec, comment) = target.split_once(" # ").unwrap_or((target, ""));
            let sha = spec.rsplit_once('@').map(|(_, r)| r).unwrap_or("");
            assert!(
                sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()),
                "{f}:{}: `{spec}` is not pinned by a full commit SHA",
                n + 1
            );
            assert!(
                comment.starts_with('v'),
                "{f}:{}: `{spec}` has no `# vX.Y.Z` comment",
                n + 1
            );
            pinned += 1;
        }
    }
    assert!(pinned > 30, "only {pinned} pinned uses found");
}

#[test]
fn run_sweep_has_the_job_graph_of_workflow_md_section_2() {
    let wf = load(".github/workflows/run-sweep.yml");
    let jobs = wf["jobs"].as_object().unwrap();
    for id in [
        "check-changelog",
        "reuse-sweep-gate",
        "setup",
        "canary",
        "benchmark-legs",
        "agentic-legs",
        "eval-legs",
        "collect-results",
        "collect-evals",
        "upload-changelog-metadata",
        "calc-success-rate",
        "compare-results",
        "trigger-ingest",
        "trigger-agentic-ingest",
        "comment-unofficial-run-visualizer",
    ] {
        assert!(jobs.contains_key(id), "run-sweep.yml lacks job {id}");
    }
    assert!(
        on(&wf).get("workflow_call").is_some(),
        "run-sweep.yml must be callable"
    );
    assert_eq!(
        wf["permissions"],
        serde_json::json!({}),
        "top-level permissions: {{}}"
    );
    for (id, job) in jobs {
        assert!(
            job.get("permissions").is_some(),
            "job {id} grants no explicit permissions"
        );
        let needs: BTreeSet<&str> = match job.get("needs") {
            Some(Value::String(s)) => [s.as_str()].into(),
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            _ => BTreeSet::new(),
        };
        for n in &needs {
            assert!(jobs.contains_key(*n), "job {id} needs unknown job {n}");
        }
        // A job may only read needs.<x>.… of jobs it needs.
        let text = job.to_string();
        for (i, _) in text.match_indices("needs.") {
            let rest = &text[i + 6..];
            let dep: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            assert!(
                needs.contains(dep.as_str()),
                "job {id} reads needs.{dep} without needing it"
            );
        }
    }
    // The fan-out calls the vendored leg workflow, which has the same name
    // in this repository, with the secrets by name.
    for id in ["canary", "benchmark-legs", "agentic-legs", "eval-legs"] {
        assert_eq!(
            s(&jobs[id]["uses"]),
            "./.github/workflows/sweepkit-sweep-legs.yml",
            "{id}"
        );
        assert!(jobs[id]["secrets"].is_object(), "{id}: secrets by name");
        assert!(
            s(&jobs[id]["strategy"]["matrix"]["include"]).contains("needs.setup.outputs."),
            "{id}: a matrix over setup's parts list"
        );
    }
    // The legs run on the row's runner with the caller's launch command.
    let legs = load(".github/workflows/sweepkit-sweep-legs.yml");
    for id in ["single-node", "multi-node"] {
        let fan = &legs["jobs"][id];
        // (or, with `priority-scheduler`, the scheduler's labels: tests/runner_labels.rs)
        let runs_on = fan["runs-on"].as_str().unwrap();
        assert!(
            runs_on
                .trim_end()
                .ends_with("format(matrix.leg.runs-on, github.run_attempt)) }}"),
            "{runs_on}"
        );
        assert!(fan.to_string().contains("LAUNCH_COMMAND"));
    }
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// The policy decisions a trusted dispatch (`changelog-head-ref`) takes
/// from run-sweep.yml's inputs instead.
const TRUSTED_FLAGS: [&str; 5] = [
    "trim-conc",
    "all-evals",
    "evals-only",
    "fail-fast",
    "agentx-fast",
];

#[test]
fn policy_outputs_read_by_the_workflow_are_produced_by_sweep_policy() {
    let keys: BTreeSet<String> = sweep_matrix::policy::decide(&Default::default())
        .outputs()
        .into_iter()
        .map(|(k, _)| k.to_string())
        .collect();
    let action = load("actions/sweep-policy/action.yml");
    let declared: BTreeSet<String> = action["outputs"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        declared, keys,
        "actions/sweep-policy outputs must be exactly the tool's decisions"
    );

    let wf = load(".github/workflows/run-sweep.yml");
    let policy_outputs = wf
        .pointer("/jobs/policy/outputs")
        .and_then(Value::as_object)
        .unwrap();
    for (k, v) in policy_outputs {
        assert!(
            keys.contains(k),
            "policy job output {k} is not a sweep-policy decision"
        );
        // The flags a trusted dispatch passes as inputs override the
        // policy's (trusted_dispatch.rs tests that mode).
        let expected = if TRUSTED_FLAGS.contains(&k.as_str()) {
            format!("${{{{ steps.trusted.outputs.{k} || steps.policy.outputs.{k} }}}}")
        } else {
            format!("${{{{ steps.policy.outputs.{k} }}}}")
        };
        assert_eq!(v.as_str().unwrap(), expected);
    }
    let text = wf.to_string();
    let mut read = 0;
    for (i, _) in text.match_indices("needs.policy.outputs.") {
        let key: String = text[i + 21..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        assert!(
            policy_outputs.contains_key(&key),
            "workflow reads needs.policy.outputs.{key}, which the policy job does not export"
        );
        read += 1;
    }
    assert!(read > 10);
}

#[test]
fn actions_read_only_declared_inputs_and_pass_them_through_env() {
    for f in action_files() {
        let a = load(&f);
        let declared: BTreeSet<String> = a
            .get("inputs")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let text = a["runs"].to_string();
        for (i, _) in text.match_indices("inputs.") {
            let key: String = text[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            assert!(declared.contains(&key), "{f}: reads undeclared input {key}");
        }
        for (name, input) in a
            .get("inputs")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            assert!(
                input.get("description").is_some(),
                "{f}: input {name} has no description"
            );
            assert!(
                text.contains(&format!("inputs.{name} ")),
                "{f}: input {name} is never used"
            );
        }
        assert_eq!(
            a.pointer("/runs/using").and_then(Value::as_str),
            Some("composite"),
            "{f}"
        );
    }
}

#[test]
fn example_caller_is_short_and_calls_the_vendored_workflow() {
    let text = std::fs::read_to_string(root().join("examples/run-sweep.yml")).unwrap();
    // The sweep's call (30 lines at most) and main's memory's (10).
    assert!(
        text.lines().count() <= 40,
        "example caller has {} lines",
        text.lines().count()
    );
    let wf = load("examples/run-sweep.yml");
    let uses = wf
        .pointer("/jobs/sweep/uses")
        .and_then(Value::as_str)
        .unwrap();
    // The workflow `sweepkit workflow write` vendors into the caller's own
    // repository, so that its GPU jobs may use the caller's runners.
    assert_eq!(uses, "./.github/workflows/sweepkit-run-sweep.yml");
    // Secrets are passed by name, never inherited.
    assert!(wf.pointer("/jobs/sweep/secrets").unwrap().is_object());
    // Every secret and input it passes is declared by the reusable workflow.
    let callee = load(".github/workflows/run-sweep.yml");
    for kind in ["secrets", "with"] {
        let declared_at = if kind == "with" { "inputs" } else { "secrets" };
        for k in wf
            .pointer(&format!("/jobs/sweep/{kind}"))
            .and_then(Value::as_object)
            .unwrap()
            .keys()
        {
            assert!(
                on(&callee)
                    .pointer(&format!("/workflow_call/{declared_at}/{k}"))
                    .is_some(),
                "example passes {kind}.{k}, which run-sweep.yml does not declare"
            );
        }
    }
}

/// Every variable an action step sets for its tool (not read by the step's
/// own script) must be one of the tool's clap `env` fallbacks: the env
/// contract between actions and binaries, checked against `--help`.
#[test]
fn every_variable_an_action_passes_is_read_by_its_tool() {
    let bin = sweepkit_e2e::tool_dir();
    let helps: &[(&str, &[&[&str]])] = &[
        ("check-changelog", &[&["check-changelog"]]),
        (
            "generate-matrix",
            &[
                &["generate-matrix", "changelog"],
                &["generate-matrix", "priority"],
                &["generate-matrix", "full-sweep"],
                &["generate-matrix", "test-config"],
                &["generate-matrix", "from-command"],
            ],
        ),
        ("sweep-policy", &[&["generate-matrix", "sweep-policy"]]),
        ("canary", &[&["generate-matrix", "canary"]]),
        (
            "collect-results",
            &[
                &["collect-results", "process"],
                &["collect-results", "aggregate"],
                &["collect-results", "evals"],
                &["collect-results", "validate-scores"],
            ],
        ),
        ("compare-results", &[&["compare-results"]]),
        ("success-rate", &[&["success-rate"]]),
        ("visualizer-comment", &[&["visualizer-comment"]]),
        ("verdict-check", &[&["visualizer-comment", "check-run"]]),
        ("reuse-sweep", &[&["reuse-sweep", "find"]]),
        (
            "stage-results",
            &[
                &["reuse-sweep", "stage-results"],
                &["reuse-sweep", "stage-dispatch"],
                &["reuse-sweep", "stage-callback"],
            ],
        ),
        (
            "sweep-ops",
            &[
                &["sweep-ops", "authorize-fork"],
                &["sweep-ops", "check-fork-runners"],
                &["sweep-ops", "dispatch-ingest"],
                &["sweep-ops", "recover-ingest"],
                &["sweep-ops", "runner-digest"],
            ],
        ),
    ];
    // Read by the tools through their client library, not through clap.
    let library_env = ["GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL"];
    let mut checked = 0;
    for (action, commands) in helps {
        let mut help = String::new();
        for cmd in *commands {
            let exe = bin.join(cmd[0]);
            let out = test_kit::command(&exe)
                .args(&cmd[1..])
                .arg("--help")
                .output()
                .unwrap();
            assert!(out.status.success(), "{cmd:?} --help failed");
            help.push_str(&String::from_utf8_lossy(&out.stdout));
        }
        let a = load(&format!("actions/{action}/action.yml"));
        for step in a["runs"]["steps"].as_array().unwrap() {
            let (Some(script), Some(env)) = (
                step.get("run").and_then(Value::as_str),
                step.get("env").and_then(Value::as_object),
            ) else {
                continue;
            };
            for key in env.keys() {
                if library_env.contains(&key.as_str())
                    || script.contains(&format!("${key}"))
                    || script.contains(&format!("${{{key}"))
                {
                    continue;
                }
                // `[env: KEY=]`, or `[env: KEY]` for a flag whose value the
                // help never shows (`hide_env_values`: a URL with a password).
                assert!(
                    help.contains(&format!("env: {key}="))
                        || help.contains(&format!("[env: {key}]")),
                    "actions/{action} sets {key}, but {commands:?} have no `env = \"{key}\"` fallback"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 25, "only {checked} variables checked");
}

#[test]
fn readme_shows_the_example_caller_verbatim() {
    // The adoption page (docs/adopt.md) carries the caller since the README split.
    let page = std::fs::read_to_string(root().join("docs/adopt.md")).unwrap();
    let example = std::fs::read_to_string(root().join("examples/run-sweep.yml")).unwrap();
    assert!(
        page.contains(&format!("```yaml\n{example}```\n")),
        "docs/adopt.md must show examples/run-sweep.yml verbatim in a yaml block"
    );
}

/// The manual-entry example (examples/e2e-tests.yml) calls the vendored
/// reusable workflow with the e2e-tests.yml inputs, every one declared.
#[test]
fn e2e_example_drives_the_manual_entry_with_declared_inputs() {
    let wf = load("examples/e2e-tests.yml");
    let dispatch = on(&wf).pointer("/workflow_dispatch/inputs").unwrap();
    for k in [
        "generate-command",
        "ref",
        "duration-override",
        "require-power",
        "eval-limit",
    ] {
        assert!(dispatch.get(k).is_some(), "dispatch input {k}");
    }
    let job = wf.pointer("/jobs/e2e").unwrap();
    assert_eq!(job["uses"], "./.github/workflows/sweepkit-run-sweep.yml");
    assert_eq!(
        job["with"]["generate-command"],
        "${{ inputs.generate-command }}"
    );
    let callee = load(".github/workflows/run-sweep.yml");
    for kind in ["secrets", "with"] {
        let declared_at = if kind == "with" { "inputs" } else { "secrets" };
        for k in job[kind].as_object().unwrap().keys() {
            assert!(
                on(&callee)
                    .pointer(&format!("/workflow_call/{declared_at}/{k}"))
                    .is_some(),
                "e2e example passes {kind}.{k}, which run-sweep.yml does not declare"
            );
        }
    }
    // The documented cleanup is accepted as written and the leg-env passes
    // generate-matrix's checks.
    let leg_env = job["with"]["leg-env"].as_str().unwrap();
    sweep_matrix::legs::parse_leg_env(leg_env, &[]).unwrap();
    assert!(
        job["with"]["cleanup-command"]
            .as_str()
            .unwrap()
            .contains("scancel")
    );
}

/// The entry-point examples (docs/entry-points.md): nothing granted at the
/// top, a commented grant per job, no checkout at all (the privileged
/// triggers must never run PR code), and the triggers of the reference.
#[test]
fn entry_point_examples_are_least_privilege_and_never_check_out() {
    let cases: [(&str, &str, &[&str]); 5] = [
        (
            "examples/trusted-external-sweep.yml",
            "pull_request_target",
            &["actions", "pull-requests"],
        ),
        (
            "examples/stage-results.yml",
            "issue_comment",
            &["actions", "contents", "issues", "pull-requests"],
        ),
        (
            "examples/stage-results-callback.yml",
            "repository_dispatch",
            &["pull-requests"],
        ),
        (
            "examples/recover-reused-ingest.yml",
            "workflow_dispatch",
            &["actions", "contents", "issues", "pull-requests"],
        ),
        ("examples/runner-offline-digest.yml", "schedule", &[]),
    ];
    for (file, trigger, granted) in cases {
        let wf = load(file);
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        assert!(
            on(&wf).get(trigger).is_some(),
            "{file}: no {trigger} trigger"
        );
        assert_eq!(
            wf["permissions"],
            serde_json::json!({}),
            "{file}: top-level permissions must be {{}}"
        );
        assert!(!text.contains("actions/checkout"), "{file} checks out code");
        let jobs = wf["jobs"].as_object().unwrap();
        assert_eq!(jobs.len(), 1, "{file}");
        let job = jobs.values().next().unwrap();
        let perms = job["permissions"].as_object().unwrap();
        let keys: Vec<&str> = perms.keys().map(String::as_str).collect();
        assert_eq!(keys, granted, "{file}: job permissions");
        for (k, v) in perms {
            if k != "actions" && k != "pull-requests" {
                assert_eq!(v, "read", "{file}: {k} must be read-only");
            }
        }
        for step in steps(&wf) {
            let uses = step["uses"].as_str().unwrap_or("");
            assert!(
                uses.starts_with("sweepkit/sweepkit/actions/"),
                "{file}: step {uses} is not a sweepkit action"
            );
        }
    }
    let trusted = load("examples/trusted-external-sweep.yml");
    assert_eq!(
        on(&trusted)["pull_request_target"]["types"],
        serde_json::json!(["labeled"])
    );
}

#[test]
fn build_from_source_reaches_every_setup_step_and_every_tool_action() {
    let doc = load(".github/workflows/run-sweep.yml");
    let input = &on(&doc)["workflow_call"]["inputs"]["build-from-source"];
    assert_eq!(input["type"], "boolean", "{input}");
    // No `default:` is GitHub's `false` for a boolean input.
    assert!(
        input
            .get("default")
            .is_none_or(|d| d.as_bool() == Some(false)),
        "{input}"
    );
    // The sweep passes its input on; the leg workflow reads it from the
    // `sweep` input (the sweep's inputs as JSON).
    let mut setups = 0;
    for (file, pass) in [
        (
            ".github/workflows/run-sweep.yml",
            "${{ inputs.build-from-source }}",
        ),
        (
            ".github/workflows/sweepkit-sweep-legs.yml",
            "${{ fromJSON(inputs.sweep).build-from-source }}",
        ),
    ] {
        let doc = load(file);
        for step in steps(&doc) {
            let uses = step.get("uses").and_then(Value::as_str).unwrap_or("");
            if uses.starts_with("sweepkit/sweepkit/actions/setup@") {
                setups += 1;
                assert_eq!(
                    step.pointer("/with/build-from-source"),
                    Some(&Value::from(pass)),
                    "{file}: a setup step does not pass build-from-source: {step}"
                );
            }
        }
        // The tool actions install their binary with `install.sh ensure`,
        // which reads SWEEPKIT_BUILD_FROM_SOURCE: each file sets it for
        // every job.
        assert_eq!(
            doc.pointer("/env/SWEEPKIT_BUILD_FROM_SOURCE"),
            Some(&Value::from(pass)),
            "{file}"
        );
    }
    // setup's, and the two leg jobs' (single- and multi-node).
    assert!(setups >= 3, "only {setups} setup steps");
    let setup = load("actions/setup/action.yml");
    assert!(setup.pointer("/inputs/build-from-source").is_some());
}

/// The job names the libraries read from GitHub's jobs API
/// (`sweep_model::jobs`) name jobs of the shipped workflow files: renaming a
/// job there without the constant fails here, not in a user's recovery.
#[test]
fn job_names_the_tools_read_are_the_workflows() {
    use sweep_model::jobs;
    let names = |rel: &str| -> Vec<String> {
        let doc = load(rel);
        doc["jobs"]
            .as_object()
            .expect("jobs")
            .iter()
            .map(|(id, job)| job["name"].as_str().unwrap_or(id).to_string())
            .collect()
    };
    let sweep = names(".github/workflows/run-sweep.yml");
    let legs = names(".github/workflows/sweepkit-sweep-legs.yml");
    for name in [jobs::INGEST, jobs::AGENTIC_INGEST] {
        assert!(
            sweep.iter().any(|n| n == name),
            "run-sweep.yml has no job named {name}: {sweep:?}"
        );
    }
    assert!(
        legs.iter().any(|n| n.starts_with(jobs::PLAN_PREFIX)),
        "no job of sweepkit-sweep-legs.yml is named `{}…`: {legs:?}",
        jobs::PLAN_PREFIX
    );
    assert!(
        !sweep
            .iter()
            .chain(&legs)
            .any(|n| n == jobs::LEGACY_CANARY_SELECT),
        "{} is a job again: it is no longer legacy",
        jobs::LEGACY_CANARY_SELECT
    );
}

/// The binaries a workflow step may run (crates/* with a `[[bin]]`).
const TOOLS: [&str; 9] = [
    "check-changelog",
    "collect-results",
    "compare-results",
    "generate-matrix",
    "reuse-sweep",
    "success-rate",
    "sweep-ops",
    "sweepkit",
    "visualizer-comment",
];

/// Whether a step runs a sweepkit tool: one of this repository's actions,
/// or a `run:` script that calls a binary as a command.
fn runs_a_tool(step: &Value) -> bool {
    let uses = s(&step["uses"]);
    if uses.starts_with("sweepkit/sweepkit/actions/") || uses.starts_with("./actions/") {
        return true;
    }
    let run = s(&step["run"]);
    run.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .any(|l| {
            l.split(|c: char| c.is_whitespace() || "();|&$\"'`".contains(c))
                .any(|w| TOOLS.contains(&w))
        })
}

/// Issue #34 item 4: every step that runs a sweepkit tool has its own
/// `timeout-minutes` (a tool that spins on bad input stops in minutes, not
/// at the job's or GitHub's six hours). The one exception is a leg's launch
/// step, which runs the caller's benchmark for as long as the job allows:
/// its job must carry the timeout.
#[test]
fn every_step_that_runs_a_sweepkit_tool_has_a_timeout() {
    let mut files: Vec<(String, Value)> =
        WORKFLOWS.iter().map(|f| (f.to_string(), load(f))).collect();
    files.push((
        ".github/workflows/sweepkit-sweep-legs.yml".into(),
        load(".github/workflows/sweepkit-sweep-legs.yml"),
    ));
    let mut checked = 0;
    let mut missing = Vec::new();
    for (f, doc) in &files {
        for (job_id, job) in doc["jobs"].as_object().unwrap() {
            for step in job["steps"].as_array().into_iter().flatten() {
                if !runs_a_tool(step) {
                    continue;
                }
                checked += 1;
                let name = s(&step["name"]);
                let launches = step["env"].get("LAUNCH_COMMAND").is_some();
                let bounded = if launches {
                    job.get("timeout-minutes").is_some()
                } else {
                    step.get("timeout-minutes").is_some()
                };
                if !bounded {
                    missing.push(format!("{f}: {job_id}: {name:?}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "steps running a sweepkit tool without timeout-minutes (in {}):\n{}",
        root().display(),
        missing.join("\n")
    );
    assert!(
        checked > 30,
        "only {checked} tool steps found: the walk is broken"
    );
}
