//! The priority scheduler's runner labels on every GPU leg of
//! `run-sweep.yml` (YAML anchors resolved): which runner a leg goes to is
//! `sweep_matrix::leg::runs_on` (the plan job's `split`), and the leg job's
//! `runs-on` only fills in this attempt's number — each case below goes
//! through both. With `priority-scheduler` off a leg runs on its row's
//! runner label, unchanged; with it on, `runs-on` is `[self-hosted,
//! <runner>, ci-job-<priority>-<queue-token>, ci-attempt-<run attempt>]`,
//! plus `ci-skip-queue-pr-<N>` when the row carries `skip-queue-pr` (the
//! reference templates' composition), and the setup job's matrix steps
//! annotate priorities whenever the scheduler is on. A trusted dispatch
//! (`changelog-head-ref` set) with `fork-runner-label` adds that label on
//! either path; without it, or on any other path, the labels are the same
//! as main's.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use serde_json::{Value, json};

fn workflow() -> Value {
    sweep_model::yaml::load_file(
        &sweepkit_e2e::workspace_root().join(".github/workflows/run-sweep.yml"),
    )
    .unwrap()
    .into_value()
}

/// Every job whose runner comes from the leg's plan: the leg jobs of the
/// leg workflow (`wf` is the sweep, which runs no leg itself).
fn gpu_jobs(wf: &Value) -> Vec<(String, String)> {
    assert!(!wf["jobs"].to_string().contains("matrix.leg"));
    common::legs_workflow()["jobs"]
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(k, j)| {
            let r = j["runs-on"].as_str()?;
            r.contains("matrix.leg.runs-on")
                .then(|| (k.clone(), r.to_string()))
        })
        .collect()
}

fn runs_on(expr: &str, scheduler: bool, row: &Value, attempt: &str) -> Value {
    runs_on_with(
        expr,
        &json!({"priority-scheduler": scheduler, "changelog-head-ref": "", "fork-runner-label": ""}),
        row,
        attempt,
    )
}

/// The plan's labels of `row` under the sweep's `inputs`, through the leg
/// job's `runs-on` at run attempt `attempt`.
fn runs_on_with(expr: &str, inputs: &Value, row: &Value, attempt: &str) -> Value {
    let planned = sweep_matrix::leg::runs_on(row.as_object().unwrap(), inputs.as_object().unwrap());
    let ctx = json!({
        "matrix": {"leg": {"runs-on": planned, "config": row}},
        "github": {"run_attempt": attempt},
    });
    common::eval_value(expr, &ctx)
}

#[test]
fn every_gpu_leg_gets_the_scheduler_labels_only_when_enabled() {
    let wf = workflow();
    let jobs = gpu_jobs(&wf);
    // The single-node and the multi-node leg job.
    assert_eq!(
        jobs.len(),
        2,
        "{:?}",
        jobs.iter().map(|j| &j.0).collect::<Vec<_>>()
    );
    let row = json!({"runner": "cluster:h200-cw", "priority": 3, "queue-token": "q7f3a9c2"});
    let skip =
        json!({"runner": "b200", "priority": 0, "queue-token": "tok", "skip-queue-pr": 2714});
    for (name, expr) in &jobs {
        assert_eq!(
            runs_on(expr, false, &row, "1"),
            json!("cluster:h200-cw"),
            "{name}"
        );
        assert_eq!(
            runs_on(expr, true, &row, "2"),
            json!([
                "self-hosted",
                "cluster:h200-cw",
                "ci-job-3-q7f3a9c2",
                "ci-attempt-2"
            ]),
            "{name}"
        );
        assert_eq!(
            runs_on(expr, true, &skip, "1"),
            json!([
                "self-hosted",
                "b200",
                "ci-job-0-tok",
                "ci-attempt-1",
                "ci-skip-queue-pr-2714"
            ]),
            "{name}"
        );
    }
}

#[test]
fn labels_are_json_encoded_not_spliced() {
    // A runner label with a quote stays one label (toJSON), never extra ones.
    let wf = workflow();
    let (_, expr) = &gpu_jobs(&wf)[0];
    let row = json!({"runner": "a\",\"b", "priority": 1, "queue-token": "t\"x"});
    assert_eq!(
        runs_on(expr, true, &row, "1"),
        json!(["self-hosted", "a\",\"b", "ci-job-1-t\"x", "ci-attempt-1"])
    );
    // Braces and a `{0}` of a label's own stay text, never the attempt.
    let row = json!({"runner": "r{0}}", "priority": 1, "queue-token": "{x"});
    assert_eq!(
        runs_on(expr, true, &row, "7"),
        json!(["self-hosted", "r{0}}", "ci-job-1-{x", "ci-attempt-7"])
    );
}

#[test]
fn the_scheduler_turns_on_the_priority_annotation() {
    let wf = workflow();
    let steps = wf["jobs"]["setup"]["steps"].as_array().unwrap();
    let with_priority: Vec<&Value> = steps
        .iter()
        .filter(|st| st["with"].get("priority").is_some())
        .collect();
    assert_eq!(
        with_priority.len(),
        2,
        "changelog and manual-entry matrix steps"
    );
    for st in with_priority {
        let expr = st["with"]["priority"].as_str().unwrap();
        for (priority, scheduler, want) in [
            (false, false, false),
            (true, false, true),
            (false, true, true),
        ] {
            let ctx = json!({"inputs": {"priority": priority, "priority-scheduler": scheduler}});
            assert_eq!(
                common::truthy(&common::eval_value(expr, &ctx)),
                want,
                "{expr}"
            );
        }
    }
    // `on` is YAML 1.1's `true`.
    let on = wf.get("on").or_else(|| wf.get("true")).unwrap();
    let input = &on["workflow_call"]["inputs"]["priority-scheduler"];
    // No `default:` is GitHub's `false` for a boolean input.
    assert_eq!(input["type"], json!("boolean"));
    assert!(
        input
            .get("default")
            .is_none_or(|d| d.as_bool() == Some(false)),
        "{input}"
    );
}

#[test]
fn a_trusted_dispatch_adds_the_fork_runner_label_on_both_paths_and_only_there() {
    let wf = workflow();
    let head = "feedface00000000000000000000000000000001";
    let row = json!({"runner": "cluster:h200-cw", "priority": 3, "queue-token": "q7f3a9c2"});
    let skip =
        json!({"runner": "b200", "priority": 0, "queue-token": "tok", "skip-queue-pr": 2714});
    let inputs = |scheduler: bool, head: &str, label: &str| json!({"priority-scheduler": scheduler, "changelog-head-ref": head, "fork-runner-label": label});
    for (name, expr) in &gpu_jobs(&wf) {
        // The label applies to a trusted dispatch only.
        assert_eq!(
            runs_on_with(expr, &inputs(false, "", "fork-sweeps"), &row, "1"),
            json!("cluster:h200-cw"),
            "{name}"
        );
        assert_eq!(
            runs_on_with(expr, &inputs(true, "", "fork-sweeps"), &row, "1"),
            json!([
                "self-hosted",
                "cluster:h200-cw",
                "ci-job-3-q7f3a9c2",
                "ci-attempt-1"
            ]),
            "{name}"
        );
        // No label given: main's labels (nothing queues forever).
        assert_eq!(
            runs_on_with(expr, &inputs(false, head, ""), &row, "1"),
            json!("cluster:h200-cw"),
            "{name}"
        );
        assert_eq!(
            runs_on_with(expr, &inputs(true, head, ""), &row, "2"),
            json!([
                "self-hosted",
                "cluster:h200-cw",
                "ci-job-3-q7f3a9c2",
                "ci-attempt-2"
            ]),
            "{name}"
        );
        // A trusted dispatch with a label: the runner must carry it too.
        assert_eq!(
            runs_on_with(expr, &inputs(false, head, "fork-sweeps"), &row, "1"),
            json!(["cluster:h200-cw", "fork-sweeps"]),
            "{name}"
        );
        assert_eq!(
            runs_on_with(expr, &inputs(true, head, "fork-sweeps"), &row, "2"),
            json!([
                "self-hosted",
                "cluster:h200-cw",
                "ci-job-3-q7f3a9c2",
                "ci-attempt-2",
                "fork-sweeps"
            ]),
            "{name}"
        );
        assert_eq!(
            runs_on_with(expr, &inputs(true, head, "fork \"x\""), &skip, "1"),
            json!([
                "self-hosted",
                "b200",
                "ci-job-0-tok",
                "ci-attempt-1",
                "ci-skip-queue-pr-2714",
                "fork \"x\""
            ]),
            "{name}: the label JSON-encoded, one label"
        );
    }
}
