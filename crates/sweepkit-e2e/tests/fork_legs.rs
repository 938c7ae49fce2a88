//! A trusted dispatch's GPU legs are kept apart from main's state (issue
//! #23 item 9), read from `run-sweep.yml` (YAML anchors resolved), the
//! step scripts run with bash (the whole run under act:
//! `act_trusted.rs`):
//!
//! - every GPU job has the step that sets the fork leg apart (after the leg
//!   environment, before the launch) and the image removal (last, always),
//!   and both run only with `changelog-head-ref`: any other path runs the
//!   steps it ran before;
//! - the cache: `HF_HUB_CACHE` becomes `untrusted/<name>` beside main's
//!   cache (leg-env's, else the runner's, else Hugging Face's default),
//!   or `fork-cache-dir`; a directory that is main's, inside it or around
//!   it is refused, as is a line break;
//! - the images: the ones on the runner are noted before the leg, and only
//!   those that were not are removed after it; without docker, or without
//!   a note, nothing is removed and nothing fails.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use common::{gpu_jobs, plain, step};

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use sweepkit_e2e::workspace_root as root;

const APART: &str = "Set the fork leg apart (trusted dispatch)";
const REMOVE: &str = "Remove the images the leg pulled (trusted dispatch)";
const NOTE: &str = "sweepkit-images-before";

/// The leg workflow: the GPU legs' steps.
fn workflow() -> Value {
    common::legs_workflow()
}

/// The names of the job's steps whose `if:` holds (every step before succeeded).
fn running_steps(job: &Value, head_ref: &str) -> Vec<String> {
    let ctx = json!({
        "inputs": {"sweep": json!({"changelog-head-ref": head_ref, "fork-cache-dir": "",
            "fork-runner-label": ""}).to_string()},
        "env": {"EVAL_ONLY": "false", "SCENARIO_TYPE": "fixed-seq-len", "RESULT_FILENAME": "x"},
    });
    job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|st| {
            st.get("if")
                .is_none_or(|c| common::eval_if(&plain(c), &ctx, true))
        })
        .map(|st| plain(&st["name"]))
        .collect()
}

#[test]
fn only_a_trusted_dispatch_runs_the_steps_that_set_the_fork_leg_apart() {
    let wf = workflow();
    let gpu = gpu_jobs(&wf);
    assert_eq!(gpu.len(), 2, "the single-node and multi-node leg jobs");
    let mut scripts = BTreeSet::new();
    for (id, job) in &gpu {
        let names: Vec<String> = job["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|st| plain(&st["name"]))
            .collect();
        let at = |n: &str| names.iter().position(|x| x == n).unwrap();
        let launch = names
            .iter()
            .position(|n| n.starts_with("Launch the"))
            .unwrap();
        assert_eq!(
            at(APART),
            at("Set the leg environment") + 1,
            "{id}: {names:?}"
        );
        assert!(
            at(APART) < launch,
            "{id}: the note is taken before the launch"
        );
        assert_eq!(at(REMOVE), names.len() - 1, "{id}: the removal is last");
        assert_eq!(at("Clean up after the leg"), names.len() - 2, "{id}");
        assert_eq!(
            plain(&step(job, REMOVE)["if"]),
            "always() && fromJSON(inputs.sweep).changelog-head-ref != ''"
        );

        let other = running_steps(job, "");
        let trusted = running_steps(job, "feedface00000000000000000000000000000001");
        assert!(
            !other.iter().any(|n| n == APART || n == REMOVE),
            "{id}: {other:?}"
        );
        let mut want = other.clone();
        want.insert(at(APART), APART.to_string());
        want.push(REMOVE.to_string());
        assert_eq!(trusted, want, "{id}");

        // The caller's input through env only; nothing spliced into a script.
        let apart = step(job, APART);
        assert_eq!(
            apart["env"],
            json!({"FORK_CACHE_DIR": "${{ fromJSON(inputs.sweep).fork-cache-dir }}"}),
            "{id}"
        );
        for st in [apart, step(job, REMOVE)] {
            assert!(!plain(&st["run"]).contains("${{"), "{id}");
            scripts.insert(plain(&st["run"]));
        }
    }
    assert_eq!(scripts.len(), 2, "both templates run the same two scripts");
}

/// Runs `script` with bash as GitHub's `shell: bash` does, with only `env`
/// (and PATH = `path`), in `dir`; returns the output and what it wrote to
/// `$GITHUB_ENV`.
fn run(script: &str, dir: &Path, path: &str, env: &[(&str, &str)]) -> (Output, String) {
    let file = dir.join("step.sh");
    let genv = dir.join("github_env");
    let temp = dir.join("runner_temp");
    std::fs::create_dir_all(&temp).unwrap();
    std::fs::write(&file, script).unwrap();
    std::fs::write(&genv, "").unwrap();
    let out = test_kit::command("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&file)
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("HOME", "/home/runner")
        .env("GITHUB_ENV", &genv)
        .env("RUNNER_TEMP", &temp)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (out, std::fs::read_to_string(&genv).unwrap())
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Where the fork leg's cache goes for this environment, or the refusal.
fn fork_cache(env: &[(&str, &str)]) -> Result<String, String> {
    let wf = workflow();
    let script = plain(&step(&wf["jobs"]["single-node"], APART)["run"]);
    let dir = test_kit::temp_dir();
    let mut env = env.to_vec();
    if !env.iter().any(|(k, _)| *k == "FORK_CACHE_DIR") {
        env.push(("FORK_CACHE_DIR", ""));
    }
    let (out, genv) = run(&script, dir.path(), "/usr/bin:/bin", &env);
    match out.status.code() {
        Some(0) => {
            let lines: Vec<&str> = genv.lines().collect();
            assert_eq!(lines.len(), 1, "{genv}");
            Ok(lines[0].strip_prefix("HF_HUB_CACHE=").unwrap().to_string())
        }
        Some(1) => {
            assert!(genv.is_empty(), "a refusal sets nothing: {genv}");
            let t = text(&out);
            assert!(t.contains("::error::"), "{t}");
            Err(t)
        }
        other => panic!("exit {other:?}: {}", text(&out)),
    }
}

#[test]
fn the_fork_legs_cache_is_an_untrusted_directory_beside_mains_never_main_s() {
    // leg-env's HF_HUB_CACHE (examples/e2e-tests.yml).
    assert_eq!(
        fork_cache(&[("HF_HUB_CACHE", "/mnt/hf_hub_cache/")]).unwrap(),
        "/mnt/untrusted/hf_hub_cache"
    );
    // None set: Hugging Face's default cache under HF_HOME, or under HOME.
    assert_eq!(
        fork_cache(&[("HF_HOME", "/data/hf")]).unwrap(),
        "/data/hf/untrusted/hub"
    );
    assert_eq!(
        fork_cache(&[]).unwrap(),
        "/home/runner/.cache/huggingface/untrusted/hub"
    );
    // The caller's own directory wins.
    assert_eq!(
        fork_cache(&[
            ("HF_HUB_CACHE", "/mnt/hf_hub_cache/"),
            ("FORK_CACHE_DIR", "/scratch/fork-cache//")
        ])
        .unwrap(),
        "/scratch/fork-cache"
    );
    // Never main's cache, inside it or around it.
    for (main, given, why) in [
        ("/mnt/hf_hub_cache/", "/mnt/hf_hub_cache", "overlap"),
        ("/mnt/hf_hub_cache", "/mnt/hf_hub_cache/fork", "overlap"),
        ("/mnt/hf_hub_cache", "/mnt", "overlap"),
        ("/mnt/hf_hub_cache", "/", "overlap"),
        ("/", "", "overlap"),
        ("/x/untrusted", "", "overlap"),
        (
            "/mnt/hf_hub_cache",
            "/a\nHF_HUB_CACHE=/mnt/hf_hub_cache",
            "line break",
        ),
    ] {
        let err = fork_cache(&[("HF_HUB_CACHE", main), ("FORK_CACHE_DIR", given)]).unwrap_err();
        assert!(err.contains(why), "{main} / {given:?}: {err}");
    }
}

/// A docker CLI stand-in: an image store (`<id> <ref>` a line) in
/// `images`, every call appended to `calls`.
fn fake_docker(dir: &Path, images: &str) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let state = dir.join("images");
    std::fs::write(&state, images).unwrap();
    let script = format!(
        r#"#!/usr/bin/env bash
set -euo pipefail
state={state}
printf '%s\n' "$*" >>{calls}
case "$*" in
  info) ;;
  "image ls --quiet --no-trunc") cut -d' ' -f1 "$state" ;;
  "image rm --force "*)
    grep -q "^$4 " "$state" || {{ echo "Error: No such image: $4" >&2; exit 1; }}
    sed -i "\|^$4 |d" "$state" ;;
  *) echo "unexpected docker $*" >&2; exit 1 ;;
esac
"#,
        state = state.display(),
        calls = dir.join("calls").display()
    );
    std::fs::write(bin.join("docker"), script).unwrap();
    std::fs::set_permissions(bin.join("docker"), std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:/usr/bin:/bin", bin.display())
}

#[test]
fn only_the_images_the_leg_pulled_are_removed_and_no_docker_is_no_error() {
    let wf = workflow();
    let job = &wf["jobs"]["multi-node"];
    let note = plain(&step(job, APART)["run"]);
    let remove = plain(&step(job, REMOVE)["run"]);
    let env = [
        ("HF_HUB_CACHE", "/mnt/hf_hub_cache"),
        ("FORK_CACHE_DIR", ""),
    ];

    // Main's warm images (one with two tags), then the leg pulls two more.
    let dir = test_kit::temp_dir();
    let d = dir.path();
    let warm = "sha256:aa x/warm:1\nsha256:aa x/warm:latest\nsha256:bb y/warm:2\n";
    let path = fake_docker(d, warm);
    let (out, _) = run(&note, d, &path, &env);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(d.join("runner_temp").join(NOTE)).unwrap(),
        "sha256:aa\nsha256:bb\n"
    );
    let mut images = std::fs::read_to_string(d.join("images")).unwrap();
    images.push_str(
        "sha256:cc fork/pulled:1\nsha256:dd fork/pulled:2\nsha256:dd fork/pulled:again\n",
    );
    std::fs::write(d.join("images"), &images).unwrap();
    let (out, _) = run(&remove, d, &path, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(d.join("images")).unwrap(), warm);
    let calls = std::fs::read_to_string(d.join("calls")).unwrap();
    let removed: Vec<&str> = calls
        .lines()
        .filter_map(|l| l.strip_prefix("image rm --force "))
        .collect();
    assert_eq!(removed, ["sha256:cc", "sha256:dd"], "{calls}");
    assert!(!d.join("runner_temp").join(NOTE).exists(), "the note goes");

    // A leg that pulled nothing removes nothing.
    let (out, _) = run(&note, d, &path, &env);
    assert!(out.status.success());
    let (out, _) = run(&remove, d, &path, &[]);
    assert!(
        text(&out).contains("the leg pulled no image"),
        "{}",
        text(&out)
    );

    // A removal docker refuses is a warning, not a failed leg.
    let (out, _) = run(&note, d, &path, &env);
    assert!(out.status.success());
    std::fs::write(d.join("images"), format!("{warm}sha256:ee z/busy:1\n")).unwrap();
    let fail_rm = std::fs::read_to_string(d.join("bin/docker"))
        .unwrap()
        .replace(
            "  \"image rm --force \"*)",
            "  \"image rm --force sha256:ee\") exit 1 ;;\n  \"image rm --force \"*)",
        );
    std::fs::write(d.join("bin/docker"), fail_rm).unwrap();
    let (out, _) = run(&remove, d, &path, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("::warning::could not remove image sha256:ee"),
        "{}",
        text(&out)
    );

    // No docker on the runner: no note, nothing removed, no error.
    let bare = test_kit::temp_dir();
    let b = bare.path();
    let (out, genv) = run(&note, b, "/usr/bin:/bin", &env);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("no docker on this runner"),
        "{}",
        text(&out)
    );
    assert_eq!(genv, "HF_HUB_CACHE=/mnt/untrusted/hf_hub_cache\n");
    assert!(!b.join("runner_temp").join(NOTE).exists());
    let (out, _) = run(&remove, b, "/usr/bin:/bin", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("removing none"), "{}", text(&out));

    // A note but docker gone since: a warning, nothing fails.
    std::fs::write(b.join("runner_temp").join(NOTE), "sha256:aa\n").unwrap();
    let (out, _) = run(&remove, b, "/usr/bin:/bin", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("::warning::"), "{}", text(&out));
}

#[test]
fn the_example_takes_the_fork_label_and_cache_from_repository_variables_only() {
    let example = sweep_model::yaml::load_file(&root().join("examples/e2e-tests.yml"))
        .unwrap()
        .into_value();
    let with = &example["jobs"]["e2e"]["with"];
    assert_eq!(
        plain(&with["fork-runner-label"]),
        "${{ vars.FORK_SWEEP_RUNNER_LABEL }}"
    );
    assert_eq!(
        plain(&with["fork-cache-dir"]),
        "${{ vars.FORK_SWEEP_CACHE_DIR }}"
    );
    // Not dispatch inputs: authorize-fork's dispatch (or anyone's) cannot pick them.
    let on = example.get("on").or_else(|| example.get("true")).unwrap();
    let inputs = on["workflow_dispatch"]["inputs"].as_object().unwrap();
    assert!(
        !inputs.keys().any(|k| k.starts_with("fork-")),
        "{:?}",
        inputs.keys()
    );
    // run-sweep.yml: both strings, empty by default (main's labels, the derived cache).
    let wf = sweep_model::yaml::load_file(&root().join(".github/workflows/run-sweep.yml"))
        .unwrap()
        .into_value();
    let on = wf.get("on").or_else(|| wf.get("true")).unwrap();
    for k in ["fork-runner-label", "fork-cache-dir"] {
        let i = &on["workflow_call"]["inputs"][k];
        assert_eq!(
            (plain(&i["type"]), plain(&i["default"])),
            ("string".into(), String::new()),
            "{k}"
        );
    }
}

/// Issue #34 item 5: a trusted dispatch's legs check out the fork's merge
/// commit with the job token only, without submodules and without
/// persisted credentials; main's sweeps keep `repo-token` and submodules.
#[test]
fn a_fork_leg_checks_out_without_the_repo_token_or_submodules() {
    let wf = workflow();
    let jobs = gpu_jobs(&wf);
    assert_eq!(jobs.len(), 2, "the single- and multi-node leg jobs");
    for (id, job) in &jobs {
        let checkout = step(job, "Check out the repository under test");
        let with = &checkout["with"];
        let ctx = |head_ref: &str| {
            json!({
                "inputs": {"sweep": json!({"changelog-head-ref": head_ref, "ref": "m"}).to_string()},
                "secrets": {"repo-token": "ghp_REPO_PAT"},
                "github": {"token": "ghs_JOB_TOKEN"},
            })
        };
        let eval =
            |k: &str, head_ref: &str| common::eval_template(&plain(&with[k]), &ctx(head_ref));
        let fork = "feedface00000000000000000000000000000001";
        assert_eq!(eval("token", fork), "ghs_JOB_TOKEN", "{id}");
        assert_eq!(eval("submodules", fork), "false", "{id}");
        assert_eq!(eval("token", ""), "ghp_REPO_PAT", "{id}");
        assert_eq!(eval("submodules", ""), "true", "{id}");
        // Without a repo-token main's sweeps use the job token, as before.
        let mut no_pat = ctx("");
        no_pat["secrets"] = json!({});
        assert_eq!(
            common::eval_template(&plain(&with["token"]), &no_pat),
            "ghs_JOB_TOKEN",
            "{id}"
        );
        assert_eq!(with["persist-credentials"], json!(false), "{id}");
    }
}
