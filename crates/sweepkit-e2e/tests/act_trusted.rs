//! The trusted fork sweep under act (issue #23 item 9; the harness and its
//! limits: `test_kit::act`): a `workflow_dispatch` of the manual entry
//! `examples/e2e-tests.yml` with the inputs `sweep-ops authorize-fork`
//! sends (the PR's merge commit as `ref`, the approved head and the PR's
//! base), and the repository variable that names the fork runners' label.
//!
//! Only that label is mapped to the host (`-P fork-sweeps=-self-hosted`),
//! not the rows' runner labels: act skips a job none of whose `runs-on`
//! labels is mapped, so a leg runs only if its `runs-on` carries the label.
//! A fake `docker` first on PATH keeps an image store in a file and logs
//! every call; the launcher records the `HF_HUB_CACHE` each leg saw and
//! pulls the leg's image.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt as _;

use serde_json::json;
use test_kit::act::*;
use test_kit::{act_scenario, git};

/// The label the fork runners carry (the caller's repository variable).
const FORK_LABEL: &str = "fork-sweeps";
/// The caller's `REPO_PAT` (e2e-tests.yml passes it as `repo-token`): a
/// fork leg's checkout never gets it.
const REPO_PAT: &str = "ghp_fakeRepoPat0000000000000000000000000";
/// Main's cache, as examples/e2e-tests.yml's leg-env sets it.
const MAIN_CACHE: &str = "/mnt/hf_hub_cache/";
/// The fork legs' cache by default: `untrusted/` beside main's.
const FORK_CACHE: &str = "/mnt/untrusted/hf_hub_cache";
/// Main's warm images on the runner before the sweep (`<id> <ref>`).
const WARM: [(&str, &str); 2] = [
    (
        "sha256:1111111111111111111111111111111111111111111111111111111111111111",
        "lmsysorg/sglang:v0.5.14-cu130",
    ),
    (
        "sha256:2222222222222222222222222222222222222222222222222222222222222222",
        "vllm/vllm-openai:v0.11.0",
    ),
];

/// A docker CLI stand-in. act runs matrix legs at the same time; each leg
/// job has its own `RUNNER_TEMP`, so the stand-in keeps one image store
/// per `RUNNER_TEMP` (one runner per leg, as on GitHub), starting with
/// main's warm images (`@WARM@`): `<id> <ref>` a line; `pull` gives a ref a
/// new id. Every call goes to `@CALLS@` as `<runner> <args>`.
const FAKE_DOCKER: &str = r#"#!/usr/bin/env bash
set -euo pipefail
runner=$(printf '%s' "${RUNNER_TEMP:?}" | sha256sum | cut -c1-16)
state=@STORES@/$runner
[ -f "$state" ] || cp @WARM@ "$state"
printf '%s %s\n' "$runner" "$*" >>@CALLS@
case "$*" in
  info) echo "fake docker" ;;
  "ps -aq" | "network prune -f") ;;
  "pull "*)
    ref=$2
    id="sha256:$(printf 'pulled %s' "$ref" | sha256sum | cut -d' ' -f1)"
    sed -i "s| $ref\$| <none>:<none>|" "$state"
    echo "$id $ref" >>"$state" ;;
  "image ls --quiet --no-trunc") cut -d' ' -f1 "$state" ;;
  "image rm --force "*)
    id=$4
    grep -q "^$id " "$state" || { echo "Error: No such image: $id" >&2; exit 1; }
    sed -i "\|^$id |d" "$state" ;;
  *) echo "fake docker: unexpected call: $*" >&2; exit 1 ;;
esac
"#;

#[test]
fn a_trusted_fork_sweep_runs_its_legs_apart_from_mains_cache_labels_and_images_under_act() {
    act_scenario!(act);
    let mut h = harness(act);

    // The PR's merge commit (what GitHub's test merge is): first parent
    // the base, second parent the approved head; in the origin the
    // checkout clones, as refs/pull/<n>/merge.
    let work = h.scratch.work.clone();
    git(&work, &["checkout", "-q", "main"]);
    git(
        &work,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            &format!("Merge {} into {}", h.scratch.head, h.scratch.base),
            "bump-qwen",
        ],
    );
    let merge = git(&work, &["rev-parse", "HEAD"]);
    assert_eq!(git(&work, &["rev-parse", "HEAD^2"]), h.scratch.head);
    assert_eq!(git(&work, &["rev-parse", "HEAD^1"]), h.scratch.base);
    git(
        &work,
        &[
            "push",
            "-q",
            &h.scratch.origin.to_string_lossy(),
            &format!("{merge}:refs/pull/{PR}/merge"),
        ],
    );

    // The legs the sweep must run: the dry run of the approved range.
    let dry = dry_run(&h.scratch);
    let legs = dry["legs"].as_array().unwrap().clone();
    assert!(!legs.is_empty(), "the dry run plans no leg: {dry}");
    let runners: BTreeSet<&str> = legs
        .iter()
        .map(|l| l["row"]["runner"].as_str().unwrap())
        .collect();
    assert!(!runners.contains(FORK_LABEL), "{runners:?}");

    // Only the fork label is mapped; the caller's repository variable names it.
    h.labels.insert(FORK_LABEL.to_string());
    h.vars
        .insert("FORK_SWEEP_RUNNER_LABEL".into(), FORK_LABEL.into());

    // The runner: a fake docker with main's warm images, and the launcher's record.
    let bin = h.dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let stores = h.dir.join("docker-runners");
    std::fs::create_dir_all(&stores).unwrap();
    let calls = h.dir.join("docker-calls");
    let warm_file = h.dir.join("docker-warm");
    let warm: String = WARM.iter().map(|(id, r)| format!("{id} {r}\n")).collect();
    std::fs::write(&warm_file, &warm).unwrap();
    let docker = bin.join("docker");
    std::fs::write(
        &docker,
        FAKE_DOCKER
            .replace("@STORES@", &stores.to_string_lossy())
            .replace("@WARM@", &warm_file.to_string_lossy())
            .replace("@CALLS@", &calls.to_string_lossy()),
    )
    .unwrap();
    std::fs::set_permissions(&docker, std::fs::Permissions::from_mode(0o755)).unwrap();
    h.path_first.push(bin);
    let record = h.dir.join("legs-env");
    h.env
        .insert("ACT_LEG_RECORD".into(), record.display().to_string());
    // The checkout stand-in records each checkout's inputs (the token by
    // its hash); the caller passes REPO_PAT as repo-token.
    let checkouts = h.dir.join("checkouts");
    h.env.insert(
        "ACT_CHECKOUT_RECORD".into(),
        checkouts.display().to_string(),
    );
    h.secrets.push(("REPO_PAT".into(), REPO_PAT.into()));

    // calc-success-rate reads this run's jobs (as in scenario d).
    h.serve_recorded_run();

    // What authorize-fork dispatches (crates/sweepkit-e2e/tests/trusted_dispatch.rs).
    let run = h.run_workflow(
        "e2e-tests.yml",
        "workflow_dispatch",
        &json!({"inputs": {
            "test-name": format!("External PR #{PR} - {}", &h.scratch.head[..7]),
            "ref": merge,
            "changelog-base-ref": h.scratch.base,
            "changelog-head-ref": h.scratch.head,
            "pr-labels-json": "[\"full-sweep-enabled\"]",
        }}),
    );
    h.keep_if_asked("trusted");
    run.assert_ok("trusted dispatch");
    let (log, secs, tail) = (&run.log, run.secs, run.tail());
    let ran = run.jobs("e2e/Run Sweep (sweepkit)/");
    assert!(failed_jobs(&ran).is_empty(), "{ran:#?}\n{tail}");
    assert!(ran.contains_key("setup"), "{ran:#?}");

    // Runner labels: every leg ran, so each one's runs-on carried the fork
    // label (the only one mapped); none was skipped for its platform.
    assert!(
        !run.skipped_unmapped_job(),
        "act skipped a job: a leg's runs-on lacks {FORK_LABEL}:\n{tail}"
    );
    let mut ran_legs = run.launched();
    let mut want_legs: Vec<Launched> = legs.iter().map(Launched::of_dry_run_leg).collect();
    ran_legs.sort();
    want_legs.sort();
    assert_eq!(
        ran_legs, want_legs,
        "legs run vs check-changelog dry-run of base..head"
    );
    assert!(
        !ran.keys().any(|k| k.starts_with("canary")),
        "no canary on a trusted dispatch: {ran:#?}"
    );

    // The cache: every leg saw the untrusted directory, none main's.
    let seen = std::fs::read_to_string(&record).unwrap_or_default();
    let caches: Vec<&str> = seen
        .lines()
        .map(|l| l.split_once(" HF_HUB_CACHE=").unwrap().1)
        .collect();
    assert_eq!(caches.len(), legs.len(), "one record per leg:\n{seen}");
    for c in &caches {
        assert_eq!(*c, FORK_CACHE, "a leg's HF_HUB_CACHE:\n{seen}");
        assert!(
            *c != MAIN_CACHE.trim_end_matches('/') && !c.starts_with(MAIN_CACHE),
            "a leg used main's cache {c}"
        );
    }

    // The fork's runners were checked against the base's runner file
    // (sweep-ops check-fork-runners in setup) before any leg was planned.
    let checked = log
        .lines()
        .find_map(|l| l.split_once("fork legs: ").map(|(_, t)| t.to_string()))
        .unwrap_or_else(|| panic!("setup did not check the fork's runners:\n{tail}"));
    assert!(checked.contains("trusted-runners.yaml"), "{checked}");
    eprintln!("trusted dispatch runner check: fork legs: {checked}");

    // The checkout (#34 item 5): every leg checked out the merge commit
    // with the job token, not REPO_PAT, without submodules or persisted
    // credentials.
    let sha = |t: &str| {
        sh(
            &h.dir,
            std::path::Path::new("bash"),
            &[
                "-c",
                &format!("printf '%s' '{t}' | sha256sum | cut -d' ' -f1"),
            ],
        )
        .trim()
        .to_string()
    };
    let pat_sha = sha(REPO_PAT);
    let record = std::fs::read_to_string(&checkouts).unwrap_or_default();
    let leg_checkouts: Vec<&str> = record
        .lines()
        .filter(|l| l.starts_with("job=single-node ") || l.starts_with("job=multi-node "))
        .collect();
    assert_eq!(
        leg_checkouts.len(),
        legs.len(),
        "one checkout per leg:\n{record}"
    );
    for l in &leg_checkouts {
        assert!(l.contains(&format!(" ref={merge} ")), "{l}");
        assert!(l.contains(" submodules=false "), "{l}");
        assert!(l.contains(" persist-credentials=false "), "{l}");
        assert!(
            !l.contains(&pat_sha),
            "a fork leg checked out with REPO_PAT: {l}"
        );
    }
    assert!(
        !record.contains(&pat_sha),
        "no checkout of the run saw REPO_PAT:\n{record}"
    );
    eprintln!(
        "trusted dispatch checkouts: {} leg checkouts of {merge} with the job token, submodules=false, persist-credentials=false",
        leg_checkouts.len()
    );

    // The images: on each leg's runner the leg pulled its image, and only
    // that one went; main's warm images stayed.
    let image = legs[0]["row"]["image"].as_str().unwrap();
    assert_eq!(image, SEED_IMAGE);
    let pulled_id = format!(
        "sha256:{}",
        sh(
            &h.dir,
            std::path::Path::new("bash"),
            &[
                "-c",
                &format!("printf 'pulled %s' '{SEED_IMAGE}' | sha256sum | cut -d' ' -f1")
            ],
        )
        .trim()
    );
    let call_log = std::fs::read_to_string(&calls).unwrap();
    let mut per_runner: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for l in call_log.lines() {
        let (runner, args) = l.split_once(' ').unwrap();
        per_runner.entry(runner).or_default().push(args);
    }
    assert_eq!(
        per_runner.len(),
        legs.len(),
        "one runner per leg:\n{call_log}"
    );
    let mut removed = 0;
    for (runner, calls) in &per_runner {
        let at = |want: &str| calls.iter().position(|c| c.starts_with(want));
        let rms: Vec<&str> = calls
            .iter()
            .filter_map(|c| c.strip_prefix("image rm --force "))
            .collect();
        assert_eq!(rms, [pulled_id.as_str()], "runner {runner}: {calls:#?}");
        removed += rms.len();
        let pulls = calls.iter().filter(|c| c.starts_with("pull ")).count();
        assert_eq!(pulls, 1, "runner {runner}: {calls:#?}");
        // Noted before the pull, removed after it.
        assert!(
            at("image ls").unwrap() < at("pull ").unwrap()
                && at("pull ").unwrap() < at("image rm").unwrap(),
            "runner {runner}: {calls:#?}"
        );
        assert_eq!(
            std::fs::read_to_string(stores.join(runner)).unwrap(),
            warm,
            "runner {runner}'s images after its leg are main's warm images"
        );
    }

    let all_jobs = workflow_job_count(&work);
    let fixed = ran.keys().filter(|k| !k.contains(" / ")).count();
    let calls = ran.keys().filter(|k| is_plan(k)).count();
    eprintln!(
        "trusted dispatch summary: {} jobs succeeded, 0 failed; {fixed} of the sweep's {all_jobs} job ids ran, {calls} calls of the leg workflow; {} legs on [runner, {FORK_LABEL}] with HF_HUB_CACHE={FORK_CACHE}; {} pulled images removed, {} warm kept; act wall time {secs:.1} s",
        ran.len(),
        legs.len(),
        removed,
        WARM.len()
    );
}
