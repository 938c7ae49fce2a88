//! The skip-chain rule over every job of every workflow sweepkit ships
//! (`.github/workflows/*.yml`, `examples/*.yml`), issue #24.
//!
//! GitHub adds an implicit `success() &&` to an `if:` without a status
//! function, and `success()` is false when any job up the `needs` chain
//! was skipped ("a failure or skip applies to all jobs in the dependency
//! chain"). So a job whose `needs` can contain a skipped job must say its
//! condition with explicit results. The rule, checked for every job:
//!
//! * a job *can be skipped* when it has an `if:`, or a direct need that can
//!   be skipped (then the implicit `success()` skips it);
//! * a job with a direct need that can be skipped has an `if:` that calls
//!   `always()` or `!cancelled()` (not `success()`, which is the implicit
//!   check again), and names `needs.<id>.result` for each such need, unless
//!   that need is in [`WAITED_FOR`]: jobs a job waits for without deciding
//!   on them, each with its reason.
//!
//! This is a rule over the file, not a model of GitHub's scheduling; the
//! act end-to-end test (`act_sweep.rs`) is the judge of what runs.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// (workflow file name, job, need): the job waits for the need but its
/// `if:` deliberately does not look at the need's result.
const WAITED_FOR: &[(&str, &str, &str, &str)] = &[
    (
        "run-sweep.yml",
        "collect-results",
        "agentic-legs",
        "agentic legs are waited for but do not decide (workflow.md §2, job 16)",
    ),
    (
        "run-sweep.yml",
        "upload-changelog-metadata",
        "collect-results",
        "ordering only: the metadata is uploaded whenever setup succeeded",
    ),
    (
        "run-sweep.yml",
        "compare-results",
        "collect-evals",
        "its result is read by the step that downloads the eval aggregate; no evals is a valid compare",
    ),
    (
        "run-sweep.yml",
        "trigger-ingest",
        "calc-success-rate",
        "ordering only: the run stats exist before the dispatch",
    ),
    (
        "run-sweep.yml",
        "trigger-ingest",
        "upload-changelog-metadata",
        "ordering only: the metadata exists before the dispatch",
    ),
    (
        "run-sweep.yml",
        "comment-unofficial-run-visualizer",
        "collect-results",
        "the comment reports whatever the run produced (its downloads are continue-on-error)",
    ),
    (
        "run-sweep.yml",
        "comment-unofficial-run-visualizer",
        "collect-evals",
        "the comment reports whatever the run produced",
    ),
    (
        "run-sweep.yml",
        "comment-unofficial-run-visualizer",
        "calc-success-rate",
        "the comment reports whatever the run produced",
    ),
    (
        "run-sweep.yml",
        "comment-unofficial-run-visualizer",
        "upload-changelog-metadata",
        "the comment reports whatever the run produced",
    ),
    (
        "run-sweep.yml",
        "comment-unofficial-run-visualizer",
        "compare-results",
        "the comment reports whatever the run produced",
    ),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn needs_of(job: &Value) -> Vec<String> {
    match &job["needs"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().map(|v| v.as_str().unwrap().to_string()).collect(),
        _ => Vec::new(),
    }
}

/// `if:` text with whitespace collapsed and any `${{ }}` wrapper removed.
fn if_text(job: &Value) -> Option<String> {
    let raw = match &job["if"] {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Null => return None,
        other => other.to_string(),
    };
    let t = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = t
        .strip_prefix("${{")
        .and_then(|x| x.strip_suffix("}}"))
        .map(|x| x.trim().to_string())
        .unwrap_or(t);
    Some(t)
}

/// The violations of the rule in one workflow (`name` is its file name),
/// one line per job and missing piece.
fn violations(name: &str, wf: &Value) -> Vec<String> {
    let jobs = wf["jobs"].as_object().unwrap();
    // Which jobs can be skipped: fixed point over `needs`.
    let mut skippable: BTreeSet<&str> = jobs
        .iter()
        .filter(|(_, j)| if_text(j).is_some())
        .map(|(id, _)| id.as_str())
        .collect();
    loop {
        let before = skippable.len();
        for (id, j) in jobs {
            if needs_of(j).iter().any(|n| skippable.contains(n.as_str())) {
                skippable.insert(id.as_str());
            }
        }
        if skippable.len() == before {
            break;
        }
    }
    let mut out = Vec::new();
    for (id, j) in jobs {
        let risky: Vec<String> = needs_of(j)
            .into_iter()
            .filter(|n| skippable.contains(n.as_str()))
            .collect();
        if risky.is_empty() {
            continue;
        }
        let cond = if_text(j).unwrap_or_default();
        let compact = cond.replace(' ', "");
        if !(compact.contains("always()") || compact.contains("!cancelled()")) {
            out.push(format!(
                "{name}: job `{id}` needs {risky:?}, which can be skipped, but its if: has no always() or !cancelled()"
            ));
        }
        for n in &risky {
            let named = cond.contains(&format!("needs.{n}.result"));
            let waived = WAITED_FOR
                .iter()
                .any(|(f, job, need, _)| *f == name && job == id && need == n);
            if !named && !waived {
                out.push(format!(
                    "{name}: job `{id}` needs `{n}`, which can be skipped, but its if: does not test needs.{n}.result"
                ));
            }
        }
    }
    out
}

fn workflows() -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for dir in [root().join(".github/workflows"), root().join("examples")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().and_then(|e| e.to_str()) != Some("yml") {
                continue;
            }
            let wf = sweep_model::yaml::load_file(&p).unwrap().into_value();
            if wf.get("jobs").is_some() {
                let rel = p.strip_prefix(root()).unwrap().display().to_string();
                out.insert(rel, wf);
            }
        }
    }
    out
}

#[test]
fn every_job_whose_needs_can_be_skipped_states_its_condition_with_explicit_results() {
    let wfs = workflows();
    assert!(
        wfs.contains_key(".github/workflows/run-sweep.yml"),
        "run-sweep.yml not read: {:?}",
        wfs.keys()
    );
    let mut all = Vec::new();
    for (path, wf) in &wfs {
        let name = Path::new(path).file_name().unwrap().to_str().unwrap();
        all.extend(violations(name, wf));
    }
    assert!(
        all.is_empty(),
        "skip-chain rule broken:\n{}",
        all.join("\n")
    );
}

#[test]
fn every_waiver_names_a_real_need_that_can_be_skipped() {
    let wfs = workflows();
    let wf = &wfs[".github/workflows/run-sweep.yml"];
    for (file, job, need, reason) in WAITED_FOR {
        assert_eq!(*file, "run-sweep.yml");
        assert!(!reason.is_empty());
        let j = &wf["jobs"][*job];
        assert!(
            needs_of(j).iter().any(|n| n == need),
            "waiver {job} → {need}: not a need of the job"
        );
        let cond = if_text(j).unwrap();
        assert!(
            !cond.contains(&format!("needs.{need}.result")),
            "waiver {job} → {need}: the if: tests it, drop the waiver"
        );
    }
}

/// The rule itself catches the shape of issue #24: a job after a
/// skippable job with a bare `if:` (implicit `success()`), and a job with
/// no `if:` after one.
#[test]
fn the_rule_flags_a_bare_if_after_a_skippable_job() {
    let wf: Value = serde_json::json!({"jobs": {
        "a": {},
        "gate": {"needs": "a", "if": "false"},
        "b": {"needs": ["a", "gate"], "if": "needs.a.outputs.x == 'y'"},
        "c": {"needs": "b"},
        "d": {"needs": ["gate", "b"], "if": "always() && needs.gate.result != 'failure'"},
        "e": {"needs": ["gate"], "if": "success() && needs.gate.result == 'success'"},
    }});
    let v = violations("t.yml", &wf);
    let jobs_named: BTreeSet<&str> = v.iter().map(|l| l.split('`').nth(1).unwrap()).collect();
    assert_eq!(jobs_named, BTreeSet::from(["b", "c", "d", "e"]), "{v:#?}");
    assert!(v.iter().any(|l| l.contains("`d` needs `b`")), "{v:#?}");
}

/// The act guard of the leg matrices (issue #24):
/// `fromJSON(needs.X.result == 'success' && needs.X.outputs.Y || '[]')`
/// changes nothing on GitHub only when the job's `if:` already requires
/// `needs.X.result == 'success'` and `needs.X.outputs.Y != ''` (GitHub
/// evaluates a matrix only for a job that runs). act expands a matrix
/// before evaluating `if:`, and a skipped job's outputs are unevaluated
/// templates there.
#[test]
fn every_leg_matrix_from_a_need_output_falls_back_to_empty_only_where_the_if_excludes_it() {
    let wfs = workflows();
    let mut n = 0;
    for file in ["run-sweep.yml", "sweepkit-sweep-legs.yml"] {
        let wf = &wfs[&format!(".github/workflows/{file}")];
        for (id, j) in wf["jobs"].as_object().unwrap() {
            let m = &j["strategy"]["matrix"];
            let Some(config) = m["config"]
                .as_str()
                .or(m["leg"].as_str())
                .or(m["include"].as_str())
            else {
                continue;
            };
            let inner = config
                .trim()
                .strip_prefix("${{ fromJSON(")
                .and_then(|x| x.strip_suffix(" || '[]') }}"))
                .unwrap_or_else(|| panic!("{id}: matrix {config:?} has no `|| '[]'` guard"));
            let (result, output) = inner
                .split_once(" && ")
                .unwrap_or_else(|| panic!("{id}: {inner} does not test the need's result"));
            let need = result
                .strip_prefix("needs.")
                .and_then(|x| x.strip_suffix(".result == 'success'"))
                .unwrap_or_else(|| panic!("{id}: {result}"));
            assert!(
                output.starts_with(&format!("needs.{need}.outputs.")) && !output.contains(' '),
                "{id}: {output}"
            );
            let cond = if_text(j).unwrap();
            assert!(
                cond.contains(result),
                "{id}: the if: does not require {result}, so the guard could change what GitHub runs"
            );
            assert!(
                cond.contains(&format!("{output} != '[]'")),
                "{id}: the if: does not exclude an empty {output}"
            );
            n += 1;
        }
    }
    assert_eq!(n, 6, "the canary, three fan-out jobs and two leg jobs");
}
