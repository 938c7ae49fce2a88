//! The trusted fork sweep lands: `sweep-ops authorize-fork` dispatches
//! `examples/e2e-tests.yml`, which passes the dispatch on to
//! `run-sweep.yml`'s trusted-dispatch mode.
//!
//! - every input the binary dispatches (read from the request it sends to
//!   the fake GitHub, not copied) is declared by the example, and the run
//!   title holds the marker the binary looks the run up by;
//! - every input the example passes is a `workflow_call` input of
//!   run-sweep.yml of the same type;
//! - in trusted mode `setup` runs the changelog path (not the command
//!   line, not the reuse lookup), with the head and base from the inputs
//!   and the label flags from the dispatch; the manual and PR paths keep
//!   their steps;
//! - the revision check's script, run with bash on a small git repository,
//!   accepts the merge commit of the approved head and rejects a non-SHA, a
//!   merge commit of another head, a checkout that is not a merge, a base
//!   outside the checkout, and both modes at once; the example's `mode` job
//!   refuses both and neither;
//! - in trusted mode the priority policy is the base's copy, taken by a
//!   step that runs only in that mode: its script, run on a repository
//!   whose fork head edits the policy, writes the base's content, and
//!   writes nothing (the matrix step then fails on the missing file, as it
//!   does outside this mode) when the base has no policy.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use common::{load, on, plain};

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use serde_json::{Map, Value, json};
use test_kit::{CommandExt as _, Route, git};

const HEAD: &str = "feedface00000000000000000000000000000001";
const MERGE: &str = "0123456789abcdef0123456789abcdef01234567";
const BASE: &str = "baseba5e00000000000000000000000000000000";
const DISPATCH: &str = "/repos/acme/bench/actions/workflows/e2e-tests.yml/dispatches";
const RUNS: &str = "/repos/acme/bench/actions/workflows/e2e-tests.yml/runs";

/// The inputs `sweep-ops authorize-fork` dispatches for a writer's
/// `full-sweep-fail-fast` label on fork PR #42 carrying `labels`, as the
/// fake GitHub received them (the setup of crates/sweep-ops/tests/cli.rs).
fn dispatched_inputs(labels: &[&str]) -> Map<String, Value> {
    let srv = test_kit::fake_github();
    srv.with_collaborator("acme/bench", "writer", "write");
    let names: Vec<Value> = labels.iter().map(|l| json!({"name": l})).collect();
    srv.add_route(Route::json(
        "GET",
        "/repos/acme/bench/pulls/42",
        json!({
            "number": 42, "state": "open", "draft": false, "labels": names,
            "head": {"sha": HEAD, "ref": "patch-1", "repo": {"full_name": "fork/bench"}},
            "base": {"sha": BASE, "ref": "main"},
            "merge_commit_sha": MERGE,
        }),
    ));
    srv.add_route(Route::empty("POST", DISPATCH, 204));
    srv.with_comments("acme/bench", 42, vec![]);
    srv.add_route(Route::json("GET", RUNS, json!({"workflow_runs": []})));

    let dir = test_kit::temp_dir();
    let event = dir.path().join("event.json");
    let ev = json!({
        "action": "labeled",
        "label": {"name": labels[0]},
        "pull_request": {"number": 42, "head": {"sha": HEAD, "repo": {"full_name": "fork/bench"}}},
        "repository": {"full_name": "acme/bench", "default_branch": "main"},
    });
    std::fs::write(&event, ev.to_string()).unwrap();
    let out = test_kit::tool_command("sweep-ops")
        .args([
            "authorize-fork",
            "--poll-interval",
            "0",
            "--lookup-timeout",
            "0",
        ])
        .current_dir(dir.path())
        .github(&srv)
        .env("GITHUB_REPOSITORY", "acme/bench")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_ACTOR", "writer")
        .env("INPUT_FORK_RUNNER_LABEL", "fork-sweeps")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "authorize-fork: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent: Vec<Value> = srv
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path == DISPATCH)
        .filter_map(|r| r.body)
        .collect();
    assert_eq!(sent.len(), 1, "one dispatch");
    sent[0]["inputs"].as_object().unwrap().clone()
}

/// A dispatched string as GitHub hands it to an input of `ty`.
fn typed(ty: &str, v: &Value) -> Value {
    let text = v.as_str().unwrap();
    match ty {
        "boolean" => match text {
            "true" => json!(true),
            "false" => json!(false),
            other => panic!("{other:?} is not a boolean input value"),
        },
        "string" => json!(text),
        other => panic!("input type {other}"),
    }
}

/// Values of `declared` inputs: their defaults, overlaid with `given`.
fn input_values(declared: &Value, given: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, d) in declared.as_object().unwrap() {
        let v = match given.get(k) {
            Some(v) if v.is_string() => typed(d["type"].as_str().unwrap(), v),
            Some(v) => v.clone(),
            None => d.get("default").cloned().unwrap_or(json!("")),
        };
        out.insert(k.clone(), v);
    }
    out
}

#[test]
fn every_input_authorize_fork_dispatches_is_declared_by_the_e2e_example() {
    let sent = dispatched_inputs(&["full-sweep-fail-fast", "all-evals"]);
    let example = load("examples/e2e-tests.yml");
    let declared = on(&example).pointer("/workflow_dispatch/inputs").unwrap();
    let declared_names: BTreeSet<&String> = declared.as_object().unwrap().keys().collect();
    let sent_names: BTreeSet<&String> = sent.keys().collect();
    let undeclared: Vec<_> = sent_names.difference(&declared_names).collect();
    assert!(
        undeclared.is_empty(),
        "GitHub would answer 422 Unexpected inputs: {undeclared:?}"
    );
    for (k, d) in declared.as_object().unwrap() {
        assert!(
            d["required"] != json!(true) || sent.contains_key(k),
            "required input {k} is not dispatched"
        );
    }
    // Each value fits its declared type (a boolean input gets true/false).
    let inputs = input_values(declared, &sent);
    assert_eq!(inputs["changelog-head-ref"], HEAD);
    assert_eq!(inputs["fail-fast"], true);
    assert_eq!(inputs["trim-conc"], false);
    assert_eq!(inputs["generate-command"], "");

    // The binary finds its run by the marker in the run's title.
    let title = common::eval_template(
        example["run-name"].as_str().unwrap(),
        &json!({"inputs": inputs}),
    );
    let marker = sent["test-name"].as_str().unwrap();
    assert!(
        title.contains(marker),
        "run title {title:?} lacks {marker:?}"
    );

    // Everything but the run's name goes on to run-sweep.yml as it came.
    let with = example.pointer("/jobs/e2e/with").unwrap();
    for k in sent.keys().filter(|k| *k != "test-name") {
        assert_eq!(
            plain(&with[k.as_str()]),
            format!("${{{{ inputs.{k} }}}}"),
            "e2e example does not pass {k} on"
        );
    }
}

#[test]
fn every_input_the_example_passes_is_a_run_sweep_input_of_the_same_type() {
    let example = load("examples/e2e-tests.yml");
    let own = on(&example).pointer("/workflow_dispatch/inputs").unwrap();
    let callee = load(".github/workflows/run-sweep.yml");
    let declared = on(&callee).pointer("/workflow_call/inputs").unwrap();
    let with = example.pointer("/jobs/e2e/with").unwrap();
    let mut forwarded = 0;
    for (k, v) in with.as_object().unwrap() {
        let Some(target) = declared.get(k) else {
            panic!("e2e example passes {k}, which run-sweep.yml does not declare");
        };
        let want = target["type"].as_str().unwrap();
        let text = plain(v);
        let got = match text
            .strip_prefix("${{ inputs.")
            .and_then(|r| r.strip_suffix(" }}"))
        {
            Some(name) => {
                forwarded += 1;
                let Some(source) = own.get(name) else {
                    panic!("{k} reads inputs.{name}, which the example does not declare");
                };
                source["type"].as_str().unwrap().to_string()
            }
            None => match v {
                Value::Bool(_) => "boolean".into(),
                Value::Number(_) => "number".into(),
                // A repository variable compared with 'true' is a boolean.
                _ if text.starts_with("${{ vars.") && text.ends_with(" == 'true' }}") => {
                    "boolean".into()
                }
                // A repository variable is a string (empty when unset).
                _ if text.starts_with("${{ vars.") && text.ends_with(" }}") => "string".into(),
                _ => {
                    assert!(!text.contains("${{"), "{k}: {text}");
                    "string".into()
                }
            },
        };
        assert_eq!(
            got, want,
            "{k}: the example gives a {got}, run-sweep wants a {want}"
        );
    }
    assert!(forwarded >= 14, "{forwarded} inputs forwarded");
}

/// The names of `job`'s steps whose `if:` holds in `ctx` (every step before
/// succeeded).
fn running_steps(job: &Value, ctx: &Value) -> Vec<String> {
    job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|st| {
            st.get("if")
                .is_none_or(|c| common::eval_if(&plain(c), ctx, true))
        })
        .map(|st| plain(&st["name"]))
        .collect()
}

/// The setup job's context for `event` with run-sweep.yml inputs `given`.
fn setup_ctx(wf: &Value, event: &str, given: &Map<String, Value>) -> Value {
    let declared = on(wf).pointer("/workflow_call/inputs").unwrap();
    let policy_outputs = json!({
        "run-check-changelog": "false", "run-setup": (event == "pull_request").to_string(),
        "canary": "false", "trim-conc": "false", "all-evals": "false",
        "evals-only": "false", "fail-fast": "false", "agentx-fast": "false",
    });
    json!({
        "inputs": input_values(declared, given),
        "github": {"event_name": event, "event": {}},
        "needs": {
            "policy": {"result": "success", "outputs": policy_outputs},
            "check-changelog": {"result": "skipped", "outputs": {}},
            "reuse-sweep-gate": {"result": "skipped", "outputs": {}},
        },
        "steps": {},
    })
}

const CHANGELOG_STEP: &str = "Generate the matrix from the changelog";
const COMMAND_STEP: &str = "Generate the matrix from the command line (manual entry)";
const CHECK_STEP: &str = "Check the approved revision (trusted dispatch)";
const REUSE_STEP: &str = "Look up a reusable sweep (fails closed on main)";
const RANGE_STEP: &str = "Diff range";
const POLICY_STEP: &str = "Take the priority policy from the base (trusted dispatch)";
const RUNNERS_STEP: &str = "Take the runner file from the base (trusted dispatch)";
const FORK_RUNNERS_STEP: &str =
    "Check the fork's runners against the base's labels (trusted dispatch)";
/// Where the trusted-policy step leaves the base's policy (under RUNNER_TEMP).
const TRUSTED_POLICY: &str = "trusted-ci-priority.yaml";

/// The setup step called `name`.
fn setup_step<'a>(wf: &'a Value, name: &str) -> &'a Value {
    wf["jobs"]["setup"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["name"] == name)
        .unwrap_or_else(|| panic!("setup has no step {name:?}"))
}

#[test]
fn trusted_mode_sweeps_the_changelog_at_the_approved_head() {
    let wf = load(".github/workflows/run-sweep.yml");
    let setup = &wf["jobs"]["setup"];
    let sent = dispatched_inputs(&["full-sweep-fail-fast", "evals-only"]);
    // What the example hands on (everything but the run name).
    let given: Map<String, Value> = sent.into_iter().filter(|(k, _)| k != "test-name").collect();
    let mut ctx = setup_ctx(&wf, "workflow_dispatch", &given);
    assert!(
        common::eval_if(&plain(&setup["if"]), &ctx, false),
        "setup runs on the trusted dispatch"
    );
    let steps = running_steps(setup, &ctx);
    for want in [
        CHECK_STEP,
        POLICY_STEP,
        RUNNERS_STEP,
        CHANGELOG_STEP,
        FORK_RUNNERS_STEP,
    ] {
        assert!(steps.iter().any(|n| n == want), "{want} runs: {steps:?}");
    }
    let at = |name: &str| steps.iter().position(|n| n == name).unwrap();
    assert!(at(CHECK_STEP) < at(POLICY_STEP) && at(POLICY_STEP) < at(CHANGELOG_STEP));
    // The fork's runners are checked against the base's file, before the
    // matrix is uploaded and split into legs.
    assert!(at(CHECK_STEP) < at(RUNNERS_STEP) && at(RUNNERS_STEP) < at(CHANGELOG_STEP));
    assert!(at(CHANGELOG_STEP) < at(FORK_RUNNERS_STEP));
    assert!(at(FORK_RUNNERS_STEP) < at("Upload the search-space config"));
    for not in [COMMAND_STEP, REUSE_STEP, RANGE_STEP] {
        assert!(!steps.iter().any(|n| n == not), "{not} is off: {steps:?}");
    }

    // The changelog step diffs the checked base..head.
    ctx["steps"] = json!({"trusted-range": {"outputs": {"base": BASE, "head": HEAD}}});
    let step = setup["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["name"] == CHANGELOG_STEP)
        .unwrap();
    let with = &step["with"];
    assert_eq!(common::eval_template(&plain(&with["base-ref"]), &ctx), BASE);
    assert_eq!(common::eval_template(&plain(&with["head-ref"]), &ctx), HEAD);
    // The priority policy is the base's copy, not the checkout's file, even
    // when the caller names another path.
    ctx["steps"]["trusted-policy"] = json!({"outputs": {"file": "/tmp/runner/trusted.yaml"}});
    let policy_of = |ctx: &Value| common::eval_template(&plain(&with["priority-policy"]), ctx);
    assert_eq!(policy_of(&ctx), "/tmp/runner/trusted.yaml");
    let mut custom = ctx.clone();
    custom["inputs"]["priority-policy"] = json!("ci/my-priority.yaml");
    assert_eq!(policy_of(&custom), "/tmp/runner/trusted.yaml");
    // Without the step's output, no path at all: never the checkout's copy.
    ctx["steps"]["trusted-policy"] = json!({"outputs": {}});
    assert_eq!(policy_of(&ctx), "");
    // check-fork-runners reads the matrix and the base's runner file.
    let fr = &setup_step(&wf, FORK_RUNNERS_STEP)["with"];
    let mut rctx = ctx.clone();
    rctx["steps"]["changelog-matrix"] = json!({"outputs": {"config-file": "/tmp/m.json"}});
    rctx["steps"]["trusted-runners"] = json!({"outputs": {"file": "/tmp/runner/runners.yaml"}});
    assert_eq!(plain(&fr["command"]), "check-fork-runners");
    assert_eq!(
        common::eval_template(&plain(&fr["matrix"]), &rctx),
        "/tmp/m.json"
    );
    assert_eq!(
        common::eval_template(&plain(&fr["runner-config"]), &rctx),
        "/tmp/runner/runners.yaml"
    );
    // The checkout is the merge commit, with full history.
    let checkout = &setup["steps"][0];
    assert_eq!(
        common::eval_template(&plain(&checkout["with"]["ref"]), &ctx),
        MERGE
    );
    assert_eq!(checkout["with"]["fetch-depth"], json!(0));

    // The label flags are the dispatch's, not the (dispatch-blind) policy's.
    let policy = &wf["jobs"]["policy"];
    assert!(
        running_steps(policy, &ctx)
            .iter()
            .any(|n| n.contains("trusted dispatch"))
    );
    let script = policy["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["id"] == "trusted")
        .unwrap();
    let dir = test_kit::temp_dir();
    let env: Vec<(String, String)> = script["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), common::eval_template(&plain(v), &ctx)))
        .collect();
    let (out, outputs) = run_script(&plain(&script["run"]), dir.path(), &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mut pctx = ctx.clone();
    pctx["steps"] = json!({
        "trusted": {"outputs": outputs},
        "policy": {"outputs": {"fail-fast": "false", "evals-only": "false", "trim-conc": "true"}},
    });
    let decided = |k: &str| common::eval_template(&plain(&policy["outputs"][k]), &pctx);
    assert_eq!(decided("fail-fast"), "true");
    assert_eq!(decided("evals-only"), "true");
    assert_eq!(decided("trim-conc"), "false");
    assert_eq!(decided("all-evals"), "false");
}

#[test]
fn the_manual_and_pr_paths_keep_their_steps() {
    let wf = load(".github/workflows/run-sweep.yml");
    let setup = &wf["jobs"]["setup"];
    let mut manual = Map::new();
    manual.insert(
        "generate-command".into(),
        json!("test-config --config-keys k --conc 4"),
    );
    let ctx = setup_ctx(&wf, "workflow_dispatch", &manual);
    assert!(common::eval_if(&plain(&setup["if"]), &ctx, false));
    let steps = running_steps(setup, &ctx);
    assert!(steps.iter().any(|n| n == COMMAND_STEP), "{steps:?}");
    for not in [
        CHECK_STEP,
        POLICY_STEP,
        RUNNERS_STEP,
        FORK_RUNNERS_STEP,
        CHANGELOG_STEP,
        REUSE_STEP,
        RANGE_STEP,
    ] {
        assert!(!steps.iter().any(|n| n == not), "{not} is off: {steps:?}");
    }
    assert!(
        !running_steps(&wf["jobs"]["policy"], &ctx)
            .iter()
            .any(|n| n.contains("trusted"))
    );

    let ctx = setup_ctx(&wf, "pull_request", &Map::new());
    assert!(common::eval_if(&plain(&setup["if"]), &ctx, false));
    let steps = running_steps(setup, &ctx);
    for want in [RANGE_STEP, CHANGELOG_STEP, REUSE_STEP] {
        assert!(steps.iter().any(|n| n == want), "{want} runs: {steps:?}");
    }
    for not in [
        CHECK_STEP,
        POLICY_STEP,
        RUNNERS_STEP,
        FORK_RUNNERS_STEP,
        COMMAND_STEP,
    ] {
        assert!(!steps.iter().any(|n| n == not), "{not} is off: {steps:?}");
    }
    // A PR reads the caller's policy path from its checkout, as before.
    let with = &setup_step(&wf, CHANGELOG_STEP)["with"];
    let mut pr = ctx.clone();
    pr["inputs"]["priority-policy"] = json!("ci/my-priority.yaml");
    assert_eq!(
        common::eval_template(&plain(&with["priority-policy"]), &pr),
        "ci/my-priority.yaml"
    );
    assert_eq!(
        common::eval_template(&plain(&with["priority-policy"]), &ctx),
        "configs/ci-priority.yaml"
    );

    // A dispatch with neither mode sweeps nothing here (the example refuses it).
    let ctx = setup_ctx(&wf, "workflow_dispatch", &Map::new());
    assert!(!common::eval_if(&plain(&setup["if"]), &ctx, false));
}

/// Runs a step's `run:` script as GitHub's `shell: bash` does, in `dir`,
/// with `env`; returns the output and the `$GITHUB_OUTPUT` pairs it wrote.
fn run_script(script: &str, dir: &Path, env: &[(String, String)]) -> (Output, Map<String, Value>) {
    let file = dir.join("step.sh");
    let out_file = dir.join("github_output");
    std::fs::write(&file, script).unwrap();
    std::fs::write(&out_file, "").unwrap();
    let out = test_kit::command("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&file)
        .current_dir(dir)
        .env("GITHUB_OUTPUT", &out_file)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    let outputs = std::fs::read_to_string(&out_file)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    (out, outputs)
}

fn commit(dir: &Path, file: &str, text: &str) -> String {
    std::fs::write(dir.join(file), text).unwrap();
    git(dir, &["add", file]);
    git(dir, &["commit", "-q", "-m", file]);
    git(dir, &["rev-parse", "HEAD"])
}

#[test]
fn the_revision_check_accepts_only_the_merge_commit_of_the_approved_head() {
    let wf = load(".github/workflows/run-sweep.yml");
    let step = wf["jobs"]["setup"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["id"] == "trusted-range")
        .unwrap();
    let script = plain(&step["run"]);
    let env_names: BTreeSet<&String> = step["env"].as_object().unwrap().keys().collect();
    let want: BTreeSet<String> = [
        "BASE_SHA",
        "HEAD_SHA",
        "CHECKOUT_REF",
        "MANUAL_COMMAND",
        "FORK_RUNNER_LABEL",
    ]
    .map(String::from)
    .into();
    assert_eq!(env_names, want.iter().collect());

    // main: a; the fork's head h on a; main moves to b; the test merge m = b + h.
    let repo = test_kit::temp_dir();
    let r = repo.path();
    git(r, &["init", "-q", "-b", "main"]);
    commit(r, "perf-changelog.yaml", "- a\n");
    git(r, &["checkout", "-q", "-b", "fork"]);
    let head = commit(r, "perf-changelog.yaml", "- a\n- h\n");
    git(r, &["checkout", "-q", "main"]);
    let base = commit(r, "other.txt", "b\n");
    git(r, &["checkout", "-q", "--detach", "main"]);
    git(r, &["merge", "-q", "--no-ff", "-m", "merge", "fork"]);
    let merge = git(r, &["rev-parse", "HEAD"]);

    let check_with = |head_sha: &str, base_sha: &str, manual: &str, label: &str| {
        let env = vec![
            ("BASE_SHA".to_string(), base_sha.to_string()),
            ("HEAD_SHA".to_string(), head_sha.to_string()),
            ("CHECKOUT_REF".to_string(), merge.clone()),
            ("MANUAL_COMMAND".to_string(), manual.to_string()),
            ("FORK_RUNNER_LABEL".to_string(), label.to_string()),
        ];
        run_script(&script, r, &env)
    };
    let check = |head_sha: &str, base_sha: &str, manual: &str| {
        check_with(head_sha, base_sha, manual, "fork-sweeps")
    };
    let refused = |(out, outputs): (Output, Map<String, Value>), why: &str| {
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(1), "{why}: {stdout}");
        assert!(
            stdout.contains("::error::") && stdout.contains(why),
            "{why}: {stdout}"
        );
        assert!(outputs.is_empty(), "{why}: no range output");
    };

    let (out, outputs) = check(&head, &base, "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(outputs["head"], head.as_str());
    assert_eq!(outputs["base"], base.as_str());

    refused(check("main", &base, ""), "is not a 40-hex commit SHA");
    refused(check(&head[..12], &base, ""), "is not a 40-hex commit SHA");
    refused(
        check(&head.to_uppercase(), &base, ""),
        "is not a 40-hex commit SHA",
    );
    refused(
        check(&head, "origin/main", ""),
        "is not a 40-hex commit SHA",
    );
    // A real commit, but not the merge commit's second parent.
    refused(check(&base, &base, ""), "not the approved head");
    refused(check(&"0".repeat(40), &base, ""), "not the approved head");
    refused(check(&head, &"1".repeat(40), ""), "is not in the checkout");
    refused(check(&head, &base, "full-sweep"), "not both");
    // Fail closed (#34 item 5): no fork leg without a dedicated label.
    refused(
        check_with(&head, &base, "", ""),
        "set the repository variable FORK_SWEEP_RUNNER_LABEL",
    );
    for label in ["self-hosted", "Self-Hosted", "a,b", "a b"] {
        refused(
            check_with(&head, &base, "", label),
            "is not a dedicated plain runner label",
        );
    }
    // The checkout is the head itself, not a merge commit.
    git(r, &["checkout", "-q", "--detach", &head]);
    refused(check(&head, &base, ""), "is not a merge commit");
}

#[test]
fn the_example_refuses_both_modes_and_neither() {
    let example = load("examples/e2e-tests.yml");
    let step = &example["jobs"]["mode"]["steps"][0];
    let script = plain(&step["run"]);
    assert_eq!(plain(&example["jobs"]["e2e"]["needs"]), "mode");
    let dir = test_kit::temp_dir();
    let run = |cmd: &str, head: &str| {
        let env = vec![
            ("GENERATE_COMMAND".to_string(), cmd.to_string()),
            ("CHANGELOG_HEAD_REF".to_string(), head.to_string()),
        ];
        run_script(&script, dir.path(), &env).0
    };
    assert!(run("full-sweep", "").status.success());
    assert!(run("", HEAD).status.success());
    for (cmd, head, why) in [
        ("full-sweep", HEAD, "not both"),
        ("", "", "nothing to sweep"),
    ] {
        let out = run(cmd, head);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        assert!(
            stdout.contains("::error::") && stdout.contains(why),
            "{stdout}"
        );
    }
}

/// The trusted dispatch gets the same comparison with the baseline as a PR:
/// `compare-results` runs after a successful collect in this mode, and not
/// on a dispatch without either mode.
#[test]
fn trusted_mode_compares_with_the_baseline() {
    let wf = load(".github/workflows/run-sweep.yml");
    let compare = &wf["jobs"]["compare-results"];
    let sent = dispatched_inputs(&["sweep-enabled"]);
    let given: Map<String, Value> = sent.into_iter().filter(|(k, _)| k != "test-name").collect();
    let mut ctx = setup_ctx(&wf, "workflow_dispatch", &given);
    ctx["needs"]["setup"]["result"] = json!("success");
    ctx["needs"]["collect-results"] = json!({"result": "success", "outputs": {}});
    assert!(
        common::eval_if(&plain(&compare["if"]), &ctx, false),
        "compare-results runs on the trusted dispatch"
    );
    let mut neither = setup_ctx(&wf, "workflow_dispatch", &Map::new());
    neither["needs"]["setup"]["result"] = json!("success");
    neither["needs"]["collect-results"] = json!({"result": "success", "outputs": {}});
    assert!(!common::eval_if(&plain(&compare["if"]), &neither, false));
}

/// The trusted-policy step's script, run with bash on a repository where
/// the fork's head edits the policy: it writes the base's content under
/// RUNNER_TEMP and names that file; with no policy at the base it writes no
/// file, so the matrix step fails as on any missing policy (exit 2, naming
/// the file) rather than reading the fork's copy.
#[test]
fn the_trusted_policy_is_the_base_copy_never_the_forks() {
    let wf = load(".github/workflows/run-sweep.yml");
    let step = setup_step(&wf, POLICY_STEP);
    assert_eq!(plain(&step["id"]), "trusted-policy");
    assert_eq!(plain(&step["shell"]), "bash");
    let script = plain(&step["run"]);
    assert!(!script.contains("${{"), "values go through env:");
    let env_names: BTreeSet<&String> = step["env"].as_object().unwrap().keys().collect();
    let want: BTreeSet<String> = ["BASE_SHA", "POLICY_PATH"].map(String::from).into();
    assert_eq!(env_names, want.iter().collect());

    // main: a (with policy "base"); the fork edits it; main moves to b; m = b + h.
    let policy = "configs/ci-priority.yaml";
    let build = |with_policy: bool| {
        let repo = test_kit::temp_dir();
        let r = repo.path();
        std::fs::create_dir(r.join("configs")).unwrap();
        git(r, &["init", "-q", "-b", "main"]);
        commit(r, "perf-changelog.yaml", "- a\n");
        if with_policy {
            commit(r, policy, "version: 1 # base\n");
        }
        git(r, &["checkout", "-q", "-b", "fork"]);
        let head = commit(r, policy, "version: 1 # fork: top priority\n");
        git(r, &["checkout", "-q", "main"]);
        let base = commit(r, "other.txt", "b\n");
        git(r, &["checkout", "-q", "--detach", "main"]);
        git(r, &["merge", "-q", "--no-ff", "-m", "merge", "fork"]);
        (repo, base, head)
    };
    // The step's env, evaluated as the workflow wires it: the base is the
    // revision check's output, the path the caller's input.
    let run = |r: &Path, base: &str, head: &str, path: &str, temp: &Path| {
        let mut given = Map::new();
        given.insert("changelog-base-ref".into(), json!(base));
        given.insert("changelog-head-ref".into(), json!(head));
        given.insert("priority-policy".into(), json!(path));
        let mut ctx = setup_ctx(&wf, "workflow_dispatch", &given);
        ctx["steps"] = json!({"trusted-range": {"outputs": {"base": base, "head": head}}});
        assert!(common::eval_if(&plain(&step["if"]), &ctx, true));
        let mut env: Vec<(String, String)> = step["env"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), common::eval_template(&plain(v), &ctx)))
            .collect();
        env.push(("RUNNER_TEMP".into(), temp.display().to_string()));
        run_script(&script, r, &env)
    };

    let (repo, base, head) = build(true);
    let r = repo.path();
    assert_eq!(
        std::fs::read_to_string(r.join(policy)).unwrap(),
        "version: 1 # fork: top priority\n",
        "the checkout holds the fork's edit"
    );
    let temp = test_kit::temp_dir();
    let (out, outputs) = run(r, &base, &head, policy, temp.path());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    let file = temp.path().join(TRUSTED_POLICY);
    assert_eq!(outputs["file"], file.display().to_string().as_str());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "version: 1 # base\n"
    );
    // `./` is the checkout's root, as in the matrix step.
    let (out, _) = run(r, &base, &head, &format!("./{policy}"), temp.path());
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "version: 1 # base\n"
    );

    // A path outside the repository is refused, with no output.
    for bad in ["/etc/passwd", "../ci-priority.yaml", "configs/../../x", ""] {
        let (out, outputs) = run(r, &base, &head, bad, temp.path());
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(1), "{bad}: {stdout}");
        assert!(stdout.contains("::error::"), "{bad}: {stdout}");
        assert!(outputs.is_empty(), "{bad}");
    }

    // No policy at the base: the step names the file but writes none (a
    // stale one from an earlier step is gone) ...
    let (repo, base, head) = build(false);
    let r = repo.path();
    assert!(r.join(policy).is_file(), "the fork added one");
    let temp = test_kit::temp_dir();
    let file = temp.path().join(TRUSTED_POLICY);
    std::fs::write(&file, "stale\n").unwrap();
    let (out, outputs) = run(r, &base, &head, policy, temp.path());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("::notice::"), "{stdout}");
    assert_eq!(outputs["file"], file.display().to_string().as_str());
    assert!(!file.exists(), "no policy file is written");
    // ... a directory at that path is no policy either ...
    let (out, outputs) = run(r, &base, &head, "configs", temp.path());
    assert!(out.status.success());
    assert_eq!(outputs["file"], file.display().to_string().as_str());
    assert!(!file.exists());
    // ... and the priority annotation then fails on the missing file (2),
    // as it does outside trusted mode.
    let matrix = temp.path().join("matrix.json");
    std::fs::write(&matrix, "[]").unwrap();
    let pri = test_kit::tool_command("generate-matrix")
        .args(["priority", "--input"])
        .arg(&matrix)
        .env("INPUT_POLICY", &file)
        .current_dir(r)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&pri.stderr).into_owned();
    assert_eq!(pri.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(TRUSTED_POLICY), "{stderr}");
}

/// The compare job's eval thresholds are the base's in trusted mode (a fork
/// cannot loosen the thresholds its evals are judged by), and the caller's
/// `ref` otherwise.
#[test]
fn trusted_mode_judges_evals_by_the_base_thresholds() {
    let wf = load(".github/workflows/run-sweep.yml");
    let steps = wf["jobs"]["compare-results"]["steps"].as_array().unwrap();
    let checkout = steps
        .iter()
        .find(|st| plain(&st["name"]) == "Check out the eval thresholds")
        .unwrap();
    let sent = dispatched_inputs(&["sweep-enabled"]);
    let given: Map<String, Value> = sent.into_iter().filter(|(k, _)| k != "test-name").collect();
    let merge = plain(&given["ref"]);
    let base = plain(&given["changelog-base-ref"]);
    assert_ne!(merge, base);
    let ctx = setup_ctx(&wf, "workflow_dispatch", &given);
    assert_eq!(
        common::eval_template(&plain(&checkout["with"]["ref"]), &ctx),
        base
    );
    let mut manual = Map::new();
    manual.insert(
        "generate-command".into(),
        json!("test-config --config-keys k"),
    );
    manual.insert("ref".into(), json!("feature"));
    let ctx = setup_ctx(&wf, "workflow_dispatch", &manual);
    assert_eq!(
        common::eval_template(&plain(&checkout["with"]["ref"]), &ctx),
        "feature"
    );
}

/// Issue #34 item 5: the runner labels a fork's legs may ask for come from
/// the base's `configs/runners.yaml`, never the fork's edit of it; a base
/// without the file, or a path outside the repository, fails the step.
#[test]
fn the_runner_file_is_the_base_copy_and_its_absence_fails() {
    let wf = load(".github/workflows/run-sweep.yml");
    let step = setup_step(&wf, RUNNERS_STEP);
    assert_eq!(plain(&step["id"]), "trusted-runners");
    let script = plain(&step["run"]);
    let env_names: BTreeSet<&String> = step["env"].as_object().unwrap().keys().collect();
    let want: BTreeSet<String> = ["BASE_SHA", "RUNNER_CONFIG"].map(String::from).into();
    assert_eq!(env_names, want.iter().collect());

    let runners = "configs/runners.yaml";
    let build = |with_file: bool| {
        let repo = test_kit::temp_dir();
        let r = repo.path();
        std::fs::create_dir(r.join("configs")).unwrap();
        git(r, &["init", "-q", "-b", "main"]);
        commit(r, "perf-changelog.yaml", "- a\n");
        if with_file {
            commit(r, runners, "labels:\n  h100: [h100_0]\n");
        }
        git(r, &["checkout", "-q", "-b", "fork"]);
        let head = commit(r, runners, "labels:\n  self-hosted: [any]\n");
        git(r, &["checkout", "-q", "main"]);
        let base = commit(r, "other.txt", "b\n");
        git(r, &["checkout", "-q", "--detach", "main"]);
        git(r, &["merge", "-q", "--no-ff", "-m", "merge", "fork"]);
        (repo, base, head)
    };
    let run = |r: &Path, base: &str, head: &str, path: &str, temp: &Path| {
        let mut given = Map::new();
        given.insert("changelog-base-ref".into(), json!(base));
        given.insert("changelog-head-ref".into(), json!(head));
        given.insert("runner-config".into(), json!(path));
        let mut ctx = setup_ctx(&wf, "workflow_dispatch", &given);
        ctx["steps"] = json!({"trusted-range": {"outputs": {"base": base, "head": head}}});
        assert!(common::eval_if(&plain(&step["if"]), &ctx, true));
        let mut env: Vec<(String, String)> = step["env"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), common::eval_template(&plain(v), &ctx)))
            .collect();
        env.push(("RUNNER_TEMP".into(), temp.display().to_string()));
        run_script(&script, r, &env)
    };

    let (repo, base, head) = build(true);
    let r = repo.path();
    assert!(
        std::fs::read_to_string(r.join(runners))
            .unwrap()
            .contains("self-hosted"),
        "the checkout holds the fork's edit"
    );
    let temp = test_kit::temp_dir();
    let (out, outputs) = run(r, &base, &head, runners, temp.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let file = temp.path().join("trusted-runners.yaml");
    assert_eq!(outputs["file"], file.display().to_string().as_str());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "labels:\n  h100: [h100_0]\n"
    );
    for bad in ["../x.yaml", "/etc/passwd", "configs/../../x"] {
        let (out, outputs) = run(r, &base, &head, bad, temp.path());
        assert_eq!(out.status.code(), Some(1), "{bad}");
        assert!(outputs.is_empty());
        assert!(String::from_utf8_lossy(&out.stdout).contains("not a path inside the repository"));
    }

    let (repo, base, head) = build(false);
    let temp = test_kit::temp_dir();
    let (out, outputs) = run(repo.path(), &base, &head, runners, temp.path());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("::error::") && stdout.contains("cannot be checked"),
        "{stdout}"
    );
    assert!(outputs.is_empty());
    assert!(!temp.path().join("trusted-runners.yaml").exists());
}
