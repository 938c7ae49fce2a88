//! The scratch benchmark repository a scenario runs in: a bare origin and a
//! working clone whose branch is the PR (the seed config's image bump, or
//! added configs), the caller workflows, the vendored workflow and the
//! launcher the GPU legs run; and the `sweepkit-history` branch a main run
//! appends to.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};

use crate::git;
use crate::{tool, workspace_root};
use serde_json::Value;

use super::*;

/// The launcher a GPU leg runs (the caller's `launch-command`): writes a
/// benchmark result in the shape `collect-results process` reads (the
/// serving benchmark's JSON, examples/sweep/raw/) for the leg's own
/// parameters (CONC, TP, ISL, OSL, MODEL, FRAMEWORK), or an eval result
/// for an eval-only leg.
pub const LAUNCHER: &str = r#"#!/usr/bin/env bash
set -euo pipefail
echo "launcher: $MODEL $FRAMEWORK TP$TP conc $CONC isl $ISL osl $OSL eval-only $EVAL_ONLY on '${RUNNER_TYPE}'"
# A scenario that sets ACT_LEG_RECORD (act_trusted.rs) gets a line per leg
# with the cache the leg saw, and the leg pulls its image (that scenario
# puts a fake docker first on PATH).
if [ -n "${ACT_LEG_RECORD:-}" ]; then
  printf '%s HF_HUB_CACHE=%s\n' "$RESULT_FILENAME" "${HF_HUB_CACHE-<unset>}" >>"$ACT_LEG_RECORD"
  docker pull "$IMAGE"
fi
if [ "$EVAL_ONLY" = true ]; then
  cat >"results_${RESULT_FILENAME}.json" <<EOF
{"results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 0.95, "exact_match_stderr,strict-match": 0.006, "exact_match,flexible-extract": 0.955, "exact_match_stderr,flexible-extract": 0.0057}}, "config": {"model": "local-chat-completions", "model_args": "model=$MODEL"}, "n-samples": {"gsm8k": {"original": 1319, "effective": 1319}}}
EOF
  exit 0
fi
# Throughput grows with concurrency and shrinks with TP (a plausible curve);
# the points named in ACT_SLOWER_POINTS ("TP2c16 TP2c32") run 15 % slower.
factor=1
case " ${ACT_SLOWER_POINTS:-} " in *" TP${TP}c${CONC} "*) factor=0.85 ;; esac
tput=$(awk -v c="$CONC" -v tp="$TP" -v f="$factor" 'BEGIN { printf "%.1f", f * 900 * c / (1 + c / 64) / tp }')
out=$(awk -v t="$tput" -v i="$ISL" -v o="$OSL" 'BEGIN { printf "%.1f", t * o / (i + o) }')
cat >"${RESULT_FILENAME}.json" <<EOF
{"date": "20261201-000000", "backend": "$FRAMEWORK", "model_id": "$MODEL", "tokenizer_id": "$MODEL", "num_prompts": $((CONC * 10)), "max_concurrency": $CONC, "request_throughput": 0.5, "total_token_throughput": $tput, "output_throughput": $out, "mean_ttft_ms": 150.0, "median_ttft_ms": 140.0, "p99_ttft_ms": 400.0, "mean_tpot_ms": 9.5, "median_tpot_ms": 9.0, "p99_tpot_ms": 18.0, "mean_itl_ms": 9.5, "mean_e2el_ms": 10000.0}
EOF
"#;

pub struct Scratch {
    /// The working clone act runs in (HEAD = the PR head).
    pub work: PathBuf,
    /// The bare repository the checkout stand-in clones.
    pub origin: PathBuf,
    pub base: String,
    pub head: String,
    /// The PR's branch.
    pub branch: String,
}

/// What the scratch repository's PR changes.
pub enum PrChange<'a> {
    /// The seed case of issue #24: bump [`SEED_KEY`]'s image to
    /// [`SEED_IMAGE`] and log it.
    SeedBump,
    /// Add these configs of the fixture (absent from the base commit) and
    /// log them in one changelog entry.
    AddConfigs(&'a [&'a str]),
}

/// `text` without the top-level block `key:` (up to the next line that
/// starts in column 0 and is not a comment); panics when `key` is absent.
fn without_block(text: &str, key: &str, file: &Path) -> String {
    let header = format!("\n{key}:\n");
    let at = text
        .find(&header)
        .unwrap_or_else(|| panic!("{} has no top-level {key}", file.display()))
        + 1;
    let body = at + header.len() - 1;
    let end = text[body..]
        .split_inclusive('\n')
        .scan(body, |pos, line| {
            let start = *pos;
            *pos += line.len();
            Some((start, line))
        })
        .find(|(_, l)| !l.starts_with([' ', '\t', '\n', '#']))
        .map_or(text.len(), |(start, _)| start);
    format!("{}{}", &text[..at], &text[end..])
}

/// The benchmark repository: the real configs of the conformance fixture,
/// the caller workflow beside the vendored one, the launcher; then the PR
/// commit that bumps the seed config's image and logs it.
/// A caller's history job, its data branch on the scratch repository's
/// bare remote (`origin`) instead of GitHub: the `remote` input, added
/// above `results-run-id`.
fn history_remote(caller: &str, origin: &Path) -> String {
    let key = "      results-run-id: ";
    assert_eq!(caller.matches(key).count(), 1, "one history job per caller");
    caller.replacen(
        key,
        &format!("      remote: {}\n{key}", origin.display()),
        1,
    )
}

/// The runs on the scratch remote's history branch (`sweepkit-history`),
/// from a fresh clone: run id, event and benchmark rows of each; empty
/// when the branch does not exist.
pub fn history_runs(s: &Scratch, dir: &Path) -> Vec<(u64, String, usize)> {
    let heads = git(&s.origin, &["branch", "--list", "sweepkit-history"]);
    if heads.trim().is_empty() {
        return Vec::new();
    }
    let clone = dir.join(format!("history-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&clone);
    git(
        dir,
        &[
            "clone",
            "-q",
            "--branch",
            "sweepkit-history",
            &s.origin.to_string_lossy(),
            &clone.to_string_lossy(),
        ],
    );
    let index = std::fs::read_to_string(clone.join("runs.jsonl")).unwrap_or_default();
    index
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["run_id"].as_u64().unwrap(),
                v["event"].as_str().unwrap().to_string(),
                v["benchmarks"].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

/// The tip of the scratch remote's history branch, if it has one.
pub fn history_tip(s: &Scratch) -> Option<String> {
    let tip = git(
        &s.origin,
        &[
            "for-each-ref",
            "--format=%(objectname)",
            "refs/heads/sweepkit-history",
        ],
    );
    (!tip.trim().is_empty()).then(|| tip.trim().to_string())
}

pub fn make_scratch(dir: &Path, baseline_url: &str) -> Scratch {
    make_scratch_with(dir, baseline_url, &PrChange::SeedBump, LAUNCHER, &[])
}

/// [`make_scratch`] with the PR's `change`, the GPU legs' `launcher`
/// (written as `runners/launch_.sh`) and `files` (path in the repository,
/// content) added to the base commit.
pub fn make_scratch_with(
    dir: &Path,
    baseline_url: &str,
    change: &PrChange,
    launcher: &str,
    files: &[(&str, String)],
) -> Scratch {
    let work = dir.join("bench");
    let origin = dir.join("origin.git");
    let fixture = workspace_root().join("tests/conformance/fixtures/inferencex-head/configs");
    copy_tree(&fixture, &work.join("configs"));
    write_workflows(&work, baseline_url, &origin);
    std::fs::create_dir_all(work.join("runners")).unwrap();
    std::fs::write(work.join("runners/launch_.sh"), launcher).unwrap();
    std::fs::write(
        work.join("perf-changelog.yaml"),
        format!(
            "- config-keys:\n    - {SEED_KEY}\n  description:\n    - \"Initial config.\"\n  pr-link: https://github.com/{REPO}/pull/1\n"
        ),
    )
    .unwrap();
    let masters = Masters::read(&work);
    // The configs the PR adds are not in the base.
    if let PrChange::AddConfigs(keys) = change {
        masters.leave_out(keys);
    }
    for (path, content) in files {
        crate::write_file(&work, path, content);
    }
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(
        &work,
        &["commit", "-q", "-m", "base: configs, workflows, changelog"],
    );
    let base = git(&work, &["rev-parse", "HEAD"]);
    let branch = commit_pr_change(&work, change, &masters);
    let head = git(&work, &["rev-parse", "HEAD"]);
    publish(dir, &work, &origin, &head);
    Scratch {
        work,
        origin,
        base,
        head,
        branch: branch.to_string(),
    }
}

/// The callers and the vendored workflows under `work/.github/workflows`.
/// The callers are the shipped examples but for their baseline: InferenceX's
/// caller reads a database secret the test does not have, so the test's
/// copies name the benchmarks API the fake serves (`compare-baseline-url`),
/// and their history remote is the scratch origin.
fn write_workflows(work: &Path, baseline_url: &str, origin: &Path) {
    let wf = work.join(".github/workflows");
    std::fs::create_dir_all(&wf).unwrap();
    for caller in ["run-sweep.yml", "e2e-tests.yml"] {
        let text = std::fs::read_to_string(workspace_root().join("examples").join(caller)).unwrap();
        let text = text.replacen(
            "    with:\n",
            &format!("    with:\n      compare-baseline-url: {baseline_url}\n"),
            1,
        );
        let text = history_remote(&text, origin);
        assert!(
            text.contains("compare-baseline-url"),
            "examples/{caller} has no `with:`"
        );
        std::fs::write(wf.join(caller), text).unwrap();
    }
    // --allow-unreleased: this build's pin lists no archive; the test's
    // archive is listed only in its copy of the actions (see `harness`).
    sh(
        work,
        &tool("sweepkit"),
        &[
            "workflow",
            "write",
            "--dir",
            ".github/workflows",
            "--allow-unreleased",
        ],
    );
}

/// The fixture's two master config files as the PR's head has them.
struct Masters {
    paths: Vec<PathBuf>,
    full: Vec<String>,
}

impl Masters {
    fn read(work: &Path) -> Self {
        let paths: Vec<PathBuf> = ["nvidia-master.yaml", "amd-master.yaml"]
            .iter()
            .map(|f| work.join("configs").join(f))
            .collect();
        let full = paths
            .iter()
            .map(|m| std::fs::read_to_string(m).unwrap())
            .collect();
        Masters { paths, full }
    }

    /// Takes `keys` out of the files (the base before the PR adds them).
    fn leave_out(&self, keys: &[&str]) {
        for key in keys {
            let holder = self
                .paths
                .iter()
                .zip(&self.full)
                .find(|(_, t)| t.contains(&format!("\n{key}:\n")))
                .unwrap_or_else(|| panic!("no fixture config has the key {key}"))
                .0;
            let text = std::fs::read_to_string(holder).unwrap();
            std::fs::write(holder, without_block(&text, key, holder)).unwrap();
        }
    }

    /// Writes the files back whole.
    fn restore(&self) {
        for (m, t) in self.paths.iter().zip(&self.full) {
            std::fs::write(m, t).unwrap();
        }
    }
}

/// On a new branch of `work`, the PR's commit: its `change` and its
/// changelog entry. Returns the branch.
fn commit_pr_change(work: &Path, change: &PrChange, masters: &Masters) -> &'static str {
    let (branch, logged, description, subject) = match change {
        PrChange::SeedBump => {
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
            (
                "bump-qwen",
                vec![SEED_KEY.to_string()],
                format!("Bump the image to {SEED_IMAGE}."),
                format!("bump {SEED_KEY} to {SEED_IMAGE}"),
            )
        }
        PrChange::AddConfigs(keys) => {
            masters.restore();
            (
                "add-configs",
                keys.iter().map(|k| (*k).to_string()).collect(),
                "Add the configs.".to_string(),
                format!("add {}", keys.join(", ")),
            )
        }
    };
    git(work, &["checkout", "-q", "-b", branch]);
    let mut log = std::fs::read_to_string(work.join("perf-changelog.yaml")).unwrap();
    log.push_str("- config-keys:\n");
    for k in &logged {
        log.push_str(&format!("    - {k}\n"));
    }
    log.push_str(&format!(
        "  description:\n    - \"{description}\"\n  pr-link: https://github.com/{REPO}/pull/{PR}\n"
    ));
    std::fs::write(work.join("perf-changelog.yaml"), log).unwrap();
    git(work, &["commit", "-q", "-am", &subject]);
    branch
}

/// The bare `origin` the checkout stand-in clones: `work` with the PR's
/// head as `refs/pull/<n>/head`; `work`'s own `origin` remote names the
/// repository on GitHub (act names the repository after it).
fn publish(dir: &Path, work: &Path, origin: &Path, head: &str) {
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
        origin,
        &["update-ref", &format!("refs/pull/{PR}/head"), head],
    );
    git(origin, &["config", "uploadpack.allowAnySHA1InWant", "true"]);
    git(
        work,
        &[
            "remote",
            "add",
            "origin",
            &format!("https://github.com/{REPO}.git"),
        ],
    );
}
