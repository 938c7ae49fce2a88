//! Power fields of `process` (spec `results.md` §3): the aggregate always
//! gets `power_metric_schema_version` = 2 and `power_valid`, and the
//! `power_validation_<RESULT_FILENAME>.json` sidecar explains the verdict.
//!
//! Single node: the telemetry CSV is integrated as the reference does
//! (`power_csv`, §3.2) and energy figures are published only when every
//! check passes. Multi node: the srt-slurm power package is re-validated and
//! integrated by `power_multinode` (§3.3). A CSV whose zone-less timestamps
//! cannot be placed because the local zone is not UTC records the
//! reference's own internal-error fallback (`aggregation_internal_error`,
//! `power_valid` 0) instead of numbers.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::power_csv::{self, push_reason, py_round};
use crate::power_multinode;
use sweep_model::python::python_path;
use sweep_model::results::PowerPart;

const INTEGRATION_METHOD: &str = "per_device_trapezoidal_with_linear_boundary_interpolation";
const POWER_METRIC_SCHEMA_VERSION: i64 = 2;

/// Power-related environment of `process`.
#[derive(Debug, Clone, Default)]
pub struct PowerEnv {
    pub require_power: bool,
    pub gpu_metrics_csv: Option<String>,
    pub power_artifact_dir: String,
    /// Where the package's window `result_path`s resolve (`POWER_RESULT_ROOT`).
    pub power_result_root: String,
    pub power_producer_sha: Option<String>,
}

/// Verdict of the power step.
#[derive(Debug, Clone)]
pub struct PowerOutcome {
    pub valid: bool,
    /// The line for stderr, e.g. `[aggregate_power] Power validation failed: ...`.
    pub messages: Vec<String>,
    /// True when the run must exit 1 (`REQUIRE_POWER` on, power invalid).
    pub fail_exit: bool,
    /// Printed on stdout before the row when power is valid
    /// (`[aggregate_power] avg_power_w=... -> agg_<name>.json`).
    pub stdout_line: Option<String>,
}

/// The benchmark window of the raw result (§3.1) and its reasons.
struct Window {
    payload: Option<Value>,
    reasons: Vec<String>,
    /// `(start, end)` when the window is valid.
    bounds: Option<(f64, f64)>,
    /// `(completed, total_input_tokens, total_output_tokens)` (0 when invalid).
    counts: (f64, f64, f64),
}

/// A JSON number that is a Python int (not float, not bool) and positive.
fn positive_int(v: Option<&Value>) -> Option<Value> {
    match v {
        Some(Value::Number(n)) if !n.is_f64() && n.as_f64().is_some_and(|x| x > 0.0) => {
            Some(Value::Number(n.clone()))
        }
        _ => None,
    }
}

fn load_window(bmk: &Map<String, Value>) -> Window {
    let num = |k: &str| match bmk.get(k) {
        Some(Value::Number(n)) => n.as_f64(),
        _ => None,
    };
    let invalid = || Window {
        payload: None,
        reasons: vec!["invalid_benchmark_window".to_owned()],
        bounds: None,
        counts: (0.0, 0.0, 0.0),
    };
    let (Some(start), Some(end), Some(duration)) = (
        num("benchmark_start_time_unix"),
        num("benchmark_end_time_unix"),
        num("duration"),
    ) else {
        return invalid();
    };
    if !(start.is_finite() && end.is_finite() && duration.is_finite())
        || end <= start
        || duration <= 0.0
    {
        return invalid();
    }
    let mut reasons = Vec::new();
    let span = end - start;
    if (duration - span).abs() > f64::max(0.5, span * 0.01) {
        push_reason(&mut reasons, "benchmark_duration_mismatch");
    }
    let mut count = |key: &str, reason: &str| match positive_int(bmk.get(key)) {
        Some(v) => v,
        None => {
            push_reason(&mut reasons, reason);
            json!(0)
        }
    };
    let completed = count("completed", "invalid_successful_query_count");
    let total_in = count("total_input_tokens", "invalid_input_token_count");
    let total_out = count("total_output_tokens", "invalid_output_token_count");
    let payload = json!({
        "start_time_unix": start,
        "end_time_unix": end,
        "reported_duration_s": duration,
        "integration_duration_s": span,
        "completed": completed.clone(),
        "total_input_tokens": total_in.clone(),
        "total_output_tokens": total_out.clone(),
    });
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    Window {
        counts: (f(&completed), f(&total_in), f(&total_out)),
        payload: Some(payload),
        reasons,
        bounds: Some((start, end)),
    }
}

/// Stamps the "not valid" verdict onto the row's power part, dropping any
/// energy figure. The part's field order is the reference's strip-and-
/// reinsert order: schema version, verdict, then the figures.
fn patch_row(data: &mut PowerPart) {
    *data = PowerPart {
        power_metric_schema_version: POWER_METRIC_SCHEMA_VERSION,
        power_valid: 0,
        ..PowerPart::default()
    };
}

/// Marks the power part valid with `metrics` as its energy figures.
fn publish(data: &mut PowerPart, metrics: impl IntoIterator<Item = (&'static str, f64)>) {
    data.power_valid = 1;
    for (k, v) in metrics {
        if let Some(slot) = data.energy_mut(k) {
            *slot = Some(v);
        }
    }
}

/// Single-node sidecar in the reference's shape (empty integration).
fn single_node_sidecar(
    telemetry_source: &str,
    bench_result: &str,
    window: Option<Value>,
    expected_gpus: i64,
    reasons: &[String],
    accumulator_check: Value,
) -> Map<String, Value> {
    let v = json!({
        "schema_version": 1,
        "power_valid": false,
        "reasons": reasons,
        "telemetry_source": telemetry_source,
        "benchmark_result": bench_result,
        "benchmark_window": window,
        "integration_method": INTEGRATION_METHOD,
        "expected_gpu_count": expected_gpus,
        "observed_gpu_count": 0,
        "observed_gpu_ids": [],
        "per_gpu_sample_counts": {},
        "per_gpu_max_sample_gap_s": {},
        "per_gpu_energy_j": {},
        "device_issues": {},
        "accumulator_check": accumulator_check,
        "metrics": {},
    });
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Telemetry v1 cannot evaluate faithfully (a multinode power package, or a
/// CSV detail such as zone-less timestamps off UTC): the reference's
/// internal-error fallback payload (§3.1, last paragraph).
fn unsupported_telemetry(
    telemetry_source: &str,
    bench_result: &str,
    expected_gpus: i64,
    why: &str,
) -> (Map<String, Value>, String) {
    let reasons = vec!["aggregation_internal_error".to_owned()];
    let mut m = single_node_sidecar(
        telemetry_source,
        bench_result,
        None,
        expected_gpus,
        &reasons,
        Value::Null,
    );
    let message = format!(
        "{why} ({telemetry_source}): not supported by this collect-results version; \
         no energy figures are published"
    );
    m.insert(
        "internal_error".into(),
        json!({"type": "NotImplementedError", "message": message}),
    );
    (
        m,
        format!("[process_result] power aggregation failed: {message}"),
    )
}

/// The single-node power step with the CSV path chosen: integration when
/// the CSV exists and the window is valid, the accumulator cross-check, the
/// agg patch. Returns the sidecar and, when valid, the stdout summary line;
/// notes for stderr go to `messages`.
fn single_node(
    window: &Window,
    csv_path: &Path,
    csv_display: &str,
    bench_result: &str,
    expected_gpus: i64,
    data: &mut PowerPart,
    messages: &mut Vec<String>,
) -> Result<(Map<String, Value>, Option<String>), power_csv::Unsupported> {
    let mut reasons = window.reasons.clone();
    let integration = integrate_window(
        window,
        csv_path,
        csv_display,
        expected_gpus,
        &mut reasons,
        messages,
    )?;
    let accumulator = power_csv::accumulator_check(csv_path)?;
    let metrics = energy_metrics(window, &integration, &mut reasons);
    let valid = reasons.is_empty() && !metrics.is_empty();
    if valid {
        publish(
            data,
            metrics.iter().map(|(k, v)| {
                let digits = if k.ends_with("_w") || k.ends_with("_j") {
                    3
                } else {
                    6
                };
                (*k, py_round(*v, digits))
            }),
        );
    }
    let mut m = single_node_sidecar(
        csv_display,
        bench_result,
        window.payload.clone(),
        expected_gpus,
        &reasons,
        accumulator,
    );
    m.insert("power_valid".into(), valid.into());
    fill_integration(&mut m, &integration, &metrics);
    let line = valid.then(|| {
        format!(
            "[aggregate_power] avg_power_w={:.2} avg_total_gpu_power_w={:.2} total_gpu_energy_j={:.2} (n={})",
            metrics[0].1,
            metrics[1].1,
            metrics[2].1,
            integration.observed_gpu_ids.len()
        )
    });
    Ok((m, line))
}

/// Integrates the CSV over a valid window (or records that it is missing)
/// and merges the integration's reasons into `reasons`; an empty
/// integration when the window is invalid.
fn integrate_window(
    window: &Window,
    csv_path: &Path,
    csv_display: &str,
    expected_gpus: i64,
    reasons: &mut Vec<String>,
    messages: &mut Vec<String>,
) -> Result<power_csv::Integration, power_csv::Unsupported> {
    let mut integration = power_csv::Integration::default();
    if let Some((start, end)) = window.bounds {
        if csv_path.is_file() {
            integration = power_csv::integrate(csv_path, start, end, expected_gpus)?;
            if integration.dropped_cut_row {
                messages.push(format!(
                    "[aggregate_power] note: the last row of {csv_display} has no newline (cut mid-write): left out"
                ));
            }
        } else {
            if expected_gpus <= 0 {
                push_reason(&mut integration.reasons, "invalid_expected_gpu_count");
            }
            push_reason(&mut integration.reasons, "telemetry_file_missing");
        }
        for r in &integration.reasons {
            push_reason(reasons, r);
        }
    }
    Ok(integration)
}

/// The energy figures (unrounded) when nothing is wrong so far; empty, with
/// `aggregate_result_unwritable` recorded, when one is not finite.
fn energy_metrics(
    window: &Window,
    integration: &power_csv::Integration,
    reasons: &mut Vec<String>,
) -> Vec<(&'static str, f64)> {
    let mut metrics: Vec<(&'static str, f64)> = Vec::new();
    if reasons.is_empty()
        && window.bounds.is_some()
        && let Some((avg, avg_total, energy)) = integration.totals
    {
        let (completed, input, output) = window.counts;
        metrics = vec![
            ("avg_power_w", avg),
            ("avg_total_gpu_power_w", avg_total),
            ("total_gpu_energy_j", energy),
            ("joules_per_successful_query", energy / completed),
            ("joules_per_input_token", energy / input),
            ("joules_per_output_token", energy / output),
            ("joules_per_total_token", energy / (input + output)),
        ];
        if metrics.iter().any(|(_, v)| !v.is_finite()) {
            push_reason(reasons, "aggregate_result_unwritable");
            metrics.clear();
        }
    }
    metrics
}

/// Fills the sidecar's per-GPU integration fields and its `metrics`
/// (rounded to 6 digits).
fn fill_integration(
    m: &mut Map<String, Value>,
    integration: &power_csv::Integration,
    metrics: &[(&'static str, f64)],
) {
    m.insert(
        "observed_gpu_count".into(),
        integration.observed_gpu_ids.len().into(),
    );
    m.insert(
        "observed_gpu_ids".into(),
        json!(integration.observed_gpu_ids),
    );
    m.insert(
        "per_gpu_sample_counts".into(),
        power_csv::ordered(&integration.per_gpu_sample_counts),
    );
    m.insert(
        "per_gpu_max_sample_gap_s".into(),
        power_csv::ordered(&integration.per_gpu_max_sample_gap_s),
    );
    m.insert(
        "per_gpu_energy_j".into(),
        power_csv::ordered(&integration.per_gpu_energy_j),
    );
    let issues: Vec<(String, Value)> = integration
        .device_issues
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    m.insert("device_issues".into(), power_csv::ordered(&issues));
    let rounded: Vec<(String, f64)> = metrics
        .iter()
        .map(|(k, v)| ((*k).to_owned(), py_round(*v, 6)))
        .collect();
    m.insert("metrics".into(), power_csv::ordered(&rounded));
}

/// Runs the power step: sets the row's power part `data` and returns the verdict and the
/// sidecar payload. `gpu_split` is `(prefill, decode)` for multi node.
#[allow(clippy::too_many_arguments)] // one call site; each input is a distinct contract item
pub fn evaluate(
    env: &PowerEnv,
    dir: &Path,
    bmk: &Map<String, Value>,
    bench_result: &str,
    sidecar_name: &str,
    agg_name: &str,
    expected_gpus: i64,
    gpu_split: Option<(i64, i64)>,
    data: &mut PowerPart,
) -> (PowerOutcome, Value) {
    let window = load_window(bmk);
    patch_row(data);
    let mut messages = Vec::new();
    let names = (bench_result, sidecar_name, agg_name);
    let step = match gpu_split {
        None => single_node_step(env, dir, &window, names, expected_gpus, data, &mut messages),
        Some(split) => multi_node_step(env, dir, bmk, &window, names, split, data, &mut messages),
    };
    let outcome = PowerOutcome {
        valid: step.valid,
        messages,
        fail_exit: env.require_power && !step.valid,
        stdout_line: step.stdout_line,
    };
    (outcome, Value::Object(step.sidecar))
}

/// What one power step (single or multi node) produced.
struct Step {
    sidecar: Map<String, Value>,
    valid: bool,
    stdout_line: Option<String>,
}

/// Single node: chooses the CSV, runs [`single_node`], and turns its result
/// (or a CSV it cannot evaluate) into the step's verdict and messages.
/// `names` is `(bench_result, sidecar_name, agg_name)`.
fn single_node_step(
    env: &PowerEnv,
    dir: &Path,
    window: &Window,
    (bench_result, sidecar_name, agg_name): (&str, &str, &str),
    expected_gpus: i64,
    data: &mut PowerPart,
    messages: &mut Vec<String>,
) -> Step {
    let chosen = metrics_csv(env, dir);
    let csv_display = python_path(&chosen);
    let csv_path = dir.join(&chosen);
    let mut valid = false;
    let mut stdout_line = None;
    let sidecar = match single_node(
        window,
        &csv_path,
        &csv_display,
        bench_result,
        expected_gpus,
        data,
        messages,
    ) {
        Ok((sidecar, valid_metrics)) => {
            match valid_metrics {
                Some(line) => {
                    valid = true;
                    stdout_line = Some(format!("{line} -> {agg_name}"));
                }
                None => messages.push(format!(
                    "[aggregate_power] Power validation failed: {} (details: {sidecar_name})",
                    sidecar_reasons(&sidecar).join(", ")
                )),
            }
            sidecar
        }
        Err(power_csv::Unsupported(why)) => {
            patch_row(data);
            let (m, msg) = unsupported_telemetry(&csv_display, bench_result, expected_gpus, &why);
            messages.push(msg);
            m
        }
    };
    Step {
        sidecar,
        valid,
        stdout_line,
    }
}

/// Multi node: runs [`multi_node`] and publishes its figures when valid,
/// else notes the failure. `names` is `(bench_result, sidecar_name, agg_name)`.
#[allow(clippy::too_many_arguments)] // one call site; the inputs of `evaluate` it needs
fn multi_node_step(
    env: &PowerEnv,
    dir: &Path,
    bmk: &Map<String, Value>,
    window: &Window,
    (bench_result, sidecar_name, agg_name): (&str, &str, &str),
    (prefill_gpus, decode_gpus): (i64, i64),
    data: &mut PowerPart,
    messages: &mut Vec<String>,
) -> Step {
    let verdict = multi_node(
        env,
        dir,
        bmk,
        window,
        bench_result,
        prefill_gpus,
        decode_gpus,
    );
    let mut valid = false;
    let mut stdout_line = None;
    if verdict.power_valid {
        valid = true;
        publish(data, verdict.agg_metrics.iter().copied());
        stdout_line = verdict.summary.map(|l| format!("{l} -> {agg_name}"));
    } else {
        messages.push(format!(
            "[aggregate_power_multinode] Power validation failed: {} (details: {sidecar_name})",
            verdict.reasons.join(", ")
        ));
    }
    Step {
        sidecar: verdict.sidecar,
        valid,
        stdout_line,
    }
}

/// The single-node GPU metrics CSV (relative to `dir`): the first
/// candidate that exists, else the first one.
fn metrics_csv(env: &PowerEnv, dir: &Path) -> String {
    let candidates: Vec<String> = [
        env.gpu_metrics_csv.clone().filter(|s| !s.is_empty()),
        Some("gpu_metrics.csv".to_owned()),
        Some("/workspace/gpu_metrics.csv".to_owned()),
    ]
    .into_iter()
    .flatten()
    .collect();
    candidates
        .iter()
        .find(|p| dir.join(p).is_file())
        .or_else(|| candidates.first())
        .cloned()
        .unwrap_or_else(|| "gpu_metrics.csv".to_owned())
}

/// The sidecar's `reasons`, as text.
fn sidecar_reasons(sidecar: &Map<String, Value>) -> Vec<String> {
    sidecar
        .get("reasons")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Multi node: the power package under `POWER_ARTIFACT_DIR`, integrated
/// over the benchmark window when that is fully valid.
fn multi_node(
    env: &PowerEnv,
    dir: &Path,
    bmk: &Map<String, Value>,
    window: &Window,
    bench_result: &str,
    prefill_gpus: i64,
    decode_gpus: i64,
) -> power_multinode::Verdict {
    let power_dir = python_path(&env.power_artifact_dir);
    let logs_root = python_path(&env.power_result_root);
    let inputs = power_multinode::Inputs {
        power_dir: &dir.join(&env.power_artifact_dir),
        power_dir_shown: &power_dir,
        logs_root: &dir.join(&env.power_result_root),
        logs_root_shown: &logs_root,
        processed: bmk,
        bench_result_name: bench_result,
        prefill_gpus,
        decode_gpus,
        expected_producer_sha: env.power_producer_sha.as_deref(),
    };
    // Integration only ever sees a fully valid benchmark window.
    let benchmark = window
        .bounds
        .filter(|_| window.reasons.is_empty())
        .map(|(start, end)| power_multinode::Benchmark {
            start,
            end,
            completed: window.counts.0,
            total_input_tokens: window.counts.1,
            total_output_tokens: window.counts.2,
        });
    power_multinode::evaluate(
        &inputs,
        benchmark,
        &window.reasons,
        window.payload.clone(),
        &power_dir,
        bench_result,
        INTEGRATION_METHOD,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bmk(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn valid_window_without_csv_reports_missing_telemetry() {
        let dir = tempfile::tempdir().expect("tmp");
        let b = bmk(
            json!({"benchmark_start_time_unix": 100.0, "benchmark_end_time_unix": 200.0,
                           "duration": 100.2, "completed": 10, "total_input_tokens": 5,
                           "total_output_tokens": 0}),
        );
        let mut data = PowerPart::default();
        let (out, side) = evaluate(
            &PowerEnv::default(),
            dir.path(),
            &b,
            "r.json",
            "p.json",
            "a.json",
            4,
            None,
            &mut data,
        );
        assert!(!out.valid);
        assert_eq!(
            side["reasons"],
            json!(["invalid_output_token_count", "telemetry_file_missing"])
        );
        assert_eq!(side["benchmark_window"]["total_output_tokens"], json!(0));
        assert_eq!(
            side["benchmark_window"]["integration_duration_s"],
            json!(100.0)
        );
        assert_eq!(side["telemetry_source"], json!("gpu_metrics.csv"));
        assert_eq!(data.power_valid, 0);
        assert_eq!(data.power_metric_schema_version, 2);
    }

    #[test]
    fn duration_mismatch_and_float_counts() {
        let b = bmk(
            json!({"benchmark_start_time_unix": 0, "benchmark_end_time_unix": 100,
                           "duration": 98, "completed": 10.0, "total_input_tokens": true,
                           "total_output_tokens": 3}),
        );
        let w = load_window(&b);
        assert_eq!(
            w.reasons,
            [
                "benchmark_duration_mismatch",
                "invalid_successful_query_count",
                "invalid_input_token_count"
            ]
        );
    }

    #[test]
    fn boolean_window_bounds_are_invalid() {
        let b = bmk(
            json!({"benchmark_start_time_unix": true, "benchmark_end_time_unix": 2, "duration": 1}),
        );
        let w = load_window(&b);
        assert!(w.payload.is_none());
        assert_eq!(w.reasons, ["invalid_benchmark_window"]);
    }

    #[test]
    fn present_csv_is_integrated_and_only_valid_data_publishes_numbers() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(
            dir.path().join("gpu_metrics.csv"),
            "timestamp,index,power\n1,0,300\n",
        )
        .expect("w");
        let b = bmk(
            json!({"benchmark_start_time_unix": 0.0, "benchmark_end_time_unix": 1.0, "duration": 1.0,
                           "completed": 1, "total_input_tokens": 1, "total_output_tokens": 1}),
        );
        let mut data = PowerPart::default();
        let env = PowerEnv {
            require_power: true,
            ..PowerEnv::default()
        };
        let (out, side) = evaluate(
            &env,
            dir.path(),
            &b,
            "r.json",
            "p.json",
            "a.json",
            8,
            None,
            &mut data,
        );
        assert!(out.fail_exit);
        assert_eq!(
            side["reasons"],
            json!(["expected_gpu_count_mismatch", "insufficient_power_samples"])
        );
        assert_eq!(
            side["device_issues"],
            json!({"0": ["insufficient_power_samples"]})
        );
        assert_eq!(data.avg_power_w, None);

        std::fs::write(
            dir.path().join("gpu_metrics.csv"),
            "timestamp,index,power.draw [W]\n-1,0,100 W\n1,0,100 W\n3,0,100 W\n-1,1,300 W\n1,1,300 W\n3,1,300 W\n",
        )
        .expect("w");
        let b = bmk(
            json!({"benchmark_start_time_unix": 0.0, "benchmark_end_time_unix": 2.0, "duration": 2.0,
                           "completed": 4, "total_input_tokens": 100, "total_output_tokens": 700}),
        );
        let mut data = PowerPart::default();
        let (out, side) = evaluate(
            &env,
            dir.path(),
            &b,
            "r.json",
            "p.json",
            "a.json",
            2,
            None,
            &mut data,
        );
        assert!(out.valid && !out.fail_exit, "{side}");
        assert_eq!(data.power_valid, 1);
        assert_eq!(data.total_gpu_energy_j, Some(800.0));
        assert_eq!(data.avg_power_w, Some(200.0));
        assert_eq!(data.joules_per_output_token, Some(1.142857));
        assert_eq!(side["metrics"]["joules_per_total_token"], json!(1.0));
        assert_eq!(
            out.stdout_line.as_deref(),
            Some(
                "[aggregate_power] avg_power_w=200.00 avg_total_gpu_power_w=400.00 total_gpu_energy_j=800.00 (n=2) -> a.json"
            )
        );
    }

    #[test]
    fn multinode_missing_dir_lists_both_reasons() {
        let dir = tempfile::tempdir().expect("tmp");
        let env = PowerEnv {
            power_artifact_dir: "LOGS/power/".into(),
            power_producer_sha: Some("abc".into()),
            ..PowerEnv::default()
        };
        let (_, side) = evaluate(
            &env,
            dir.path(),
            &Map::new(),
            "r.json",
            "p.json",
            "a.json",
            12,
            Some((4, 8)),
            &mut PowerPart::default(),
        );
        assert_eq!(
            side["reasons"],
            json!(["power_artifacts_missing", "invalid_benchmark_window"])
        );
        assert_eq!(side["failures"], json!(["power dir missing: LOGS/power"]));
        assert_eq!(
            side["producer"]["expected_producer_git_commit"],
            json!("abc")
        );
    }

    #[test]
    fn accumulator_snapshot_presence() {
        let dir = tempfile::tempdir().expect("tmp");
        let csv = dir.path().join("gpu_metrics.csv");
        let check = |csv: &Path| power_csv::accumulator_check(csv).expect("supported");
        assert_eq!(check(&csv), Value::Null);
        std::fs::write(
            dir.path().join("gpu_metrics_energy_end.csv"),
            "gpu,total_energy_consumption\n0,5\n",
        )
        .expect("w");
        assert_eq!(check(&csv)["reason"], json!("missing_start_snapshot"));
        std::fs::write(
            dir.path().join("gpu_metrics_energy_start.csv"),
            "gpu,other\n0,5\n",
        )
        .expect("w");
        assert_eq!(check(&csv)["reason"], json!("unparseable_start_snapshot"));
        std::fs::write(
            dir.path().join("gpu_metrics_energy_start.csv"),
            "gpu,total_energy_consumption\n0,1\n",
        )
        .expect("w");
        assert_eq!(
            check(&csv)["reason"],
            json!("cross_check_error"),
            "no CSV to integrate"
        );
        std::fs::write(&csv, "timestamp,gpu,power\n0,0,2\n2,0,2\n").expect("w");
        let c = check(&csv);
        assert_eq!(c["accumulator_delta_j"], json!(4.0));
        assert_eq!(c["integrated_stream_j"], json!(4.0));
        assert_eq!(c["within_tolerance"], json!(true));
    }
}
