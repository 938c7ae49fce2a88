//! Power fields of `process` (spec `results.md` §3.1, the minimal
//! contract): the aggregate always gets `power_metric_schema_version` = 2 and
//! `power_valid` = 0, and the sidecar explains why.
//!
//! v1 never publishes energy numbers. Without telemetry the sidecar is the
//! reference's exact "no telemetry" payload. When telemetry is present
//! (a GPU-metrics CSV with a valid benchmark window, or a multinode power
//! package with a manifest), integrating it is out of scope for v1, so the
//! sidecar is the reference's own internal-error fallback with a message
//! saying so — valid-looking numbers are never invented.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::pyconv::{py_join, py_path};

const INTEGRATION_METHOD: &str = "per_device_trapezoidal_with_linear_boundary_interpolation";
const POWER_METRIC_SCHEMA_VERSION: i64 = 2;

/// Energy keys the power step always removes before stamping validity.
const ENERGY_KEYS: &[&str] = &[
    "avg_power_w",
    "avg_total_gpu_power_w",
    "total_gpu_energy_j",
    "joules_per_successful_query",
    "joules_per_input_token",
    "joules_per_output_token",
    "joules_per_total_token",
];
const ROLE_ENERGY_KEYS: &[&str] = &[
    "prefill_gpu_energy_j",
    "decode_gpu_energy_j",
    "prefill_avg_power_w",
    "decode_avg_power_w",
    "prefill_joules_per_input_token",
    "decode_joules_per_output_token",
];

/// Power-related environment of `process`.
#[derive(Debug, Clone, Default)]
pub struct PowerEnv {
    pub require_power: bool,
    pub gpu_metrics_csv: Option<String>,
    pub power_artifact_dir: String,
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
}

/// The benchmark window of the raw result (§3.1) and its reasons.
struct Window {
    payload: Option<Value>,
    reasons: Vec<String>,
}

fn push_reason(reasons: &mut Vec<String>, r: &str) {
    if !reasons.iter().any(|x| x == r) {
        reasons.push(r.to_owned());
    }
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
        "completed": completed,
        "total_input_tokens": total_in,
        "total_output_tokens": total_out,
    });
    Window {
        payload: Some(payload),
        reasons,
    }
}

/// Strips energy keys and stamps the v1 verdict (never valid) onto the row.
fn patch_row(data: &mut Map<String, Value>) {
    for k in ENERGY_KEYS.iter().chain(ROLE_ENERGY_KEYS) {
        data.shift_remove(*k);
    }
    data.insert(
        "power_metric_schema_version".into(),
        POWER_METRIC_SCHEMA_VERSION.into(),
    );
    data.insert("power_valid".into(), 0.into());
    data.shift_remove("power_invalid_reasons");
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

/// Telemetry is present but v1 does not integrate it: the reference's
/// internal-error fallback payload (§3.1, last paragraph).
fn unsupported_telemetry(
    telemetry_source: &str,
    bench_result: &str,
    expected_gpus: i64,
    what: &str,
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
        "{what} found at {telemetry_source}, but this collect-results version does not \
         integrate power telemetry; no energy figures are published"
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

/// The AMD accumulator cross-check (`<csv stem>_energy_{start,end}.csv`)
/// as far as it can be decided without reading the power CSV: absent
/// snapshots (`null`), a missing or unparseable one, or — both readable but
/// no CSV — the reference's `cross_check_error`. `None` when both snapshots
/// parse and the CSV exists: the check would need the telemetry stream.
fn accumulator_check(csv: &Path, csv_exists: bool) -> Option<Value> {
    let stem = csv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sibling = |suffix: &str| csv.with_file_name(format!("{stem}_energy_{suffix}.csv"));
    let (start, end) = (sibling("start"), sibling("end"));
    let reason = match (start.is_file(), end.is_file()) {
        (false, false) => return Some(Value::Null),
        (false, true) => "missing_start_snapshot",
        (true, false) => "missing_end_snapshot",
        (true, true) => {
            if !snapshot_parses(&start) {
                "unparseable_start_snapshot"
            } else if !snapshot_parses(&end) {
                "unparseable_end_snapshot"
            } else if csv_exists {
                return None;
            } else {
                "cross_check_error"
            }
        }
    };
    Some(json!({"available": false, "reason": reason}))
}

/// Whether an `amd-smi metric -E` CSV snapshot has `gpu` and
/// `total_energy_consumption` columns and at least one finite reading.
fn snapshot_parses(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return false;
    };
    let cols: Vec<&str> = header
        .split(',')
        .map(|c| c.trim().trim_matches('"'))
        .collect();
    let (Some(gi), Some(ei)) = (
        cols.iter().position(|c| *c == "gpu"),
        cols.iter().position(|c| *c == "total_energy_consumption"),
    ) else {
        return false;
    };
    lines.any(|line| {
        let cells: Vec<&str> = line
            .split(',')
            .map(|c| c.trim().trim_matches('"'))
            .collect();
        let gpu = cells.get(gi).copied().unwrap_or("");
        let energy = cells.get(ei).copied().unwrap_or("");
        !gpu.is_empty() && crate::pyconv::parse_float(energy).is_some_and(f64::is_finite)
    })
}

/// Runs the power step: patches `data` and returns the verdict and the
/// sidecar payload. `gpu_split` is `(prefill, decode)` for multi node.
#[allow(clippy::too_many_arguments)] // one call site; each input is a distinct contract item
pub fn evaluate(
    env: &PowerEnv,
    dir: &Path,
    bmk: &Map<String, Value>,
    bench_result: &str,
    sidecar_name: &str,
    expected_gpus: i64,
    gpu_split: Option<(i64, i64)>,
    data: &mut Map<String, Value>,
) -> (PowerOutcome, Value) {
    let window = load_window(bmk);
    patch_row(data);
    let mut messages = Vec::new();
    let sidecar = match gpu_split {
        None => {
            // CSV choice: first existing candidate, else first non-empty one.
            let candidates: Vec<String> = [
                env.gpu_metrics_csv.clone().filter(|s| !s.is_empty()),
                Some("gpu_metrics.csv".to_owned()),
                Some("/workspace/gpu_metrics.csv".to_owned()),
            ]
            .into_iter()
            .flatten()
            .collect();
            let resolve = |p: &str| dir.join(p);
            let chosen = candidates
                .iter()
                .find(|p| resolve(p).is_file())
                .or_else(|| candidates.first())
                .cloned()
                .unwrap_or_else(|| "gpu_metrics.csv".to_owned());
            let csv_display = py_path(&chosen);
            let csv_path = resolve(&chosen);
            let csv_exists = csv_path.is_file();
            let accumulator = accumulator_check(&csv_path, csv_exists);
            match accumulator {
                Some(acc) if window.payload.is_none() || !csv_exists => {
                    let mut reasons = window.reasons.clone();
                    if window.payload.is_some() {
                        if expected_gpus <= 0 {
                            push_reason(&mut reasons, "invalid_expected_gpu_count");
                        }
                        push_reason(&mut reasons, "telemetry_file_missing");
                    }
                    messages.push(format!(
                        "[aggregate_power] Power validation failed: {} (details: {sidecar_name})",
                        reasons.join(", ")
                    ));
                    single_node_sidecar(
                        &csv_display,
                        bench_result,
                        window.payload.clone(),
                        expected_gpus,
                        &reasons,
                        acc,
                    )
                }
                // A CSV that would have to be integrated (valid window) or
                // cross-checked against accumulator snapshots.
                _ => {
                    let (m, msg) = unsupported_telemetry(
                        &csv_display,
                        bench_result,
                        expected_gpus,
                        "GPU metrics CSV",
                    );
                    messages.push(msg);
                    m
                }
            }
        }
        Some((_, _)) => {
            let power_dir = py_path(&env.power_artifact_dir);
            let abs_dir = dir.join(&env.power_artifact_dir);
            let manifest = py_join(&power_dir, "manifest.json");
            let early = if !abs_dir.is_dir() {
                Some((
                    "power_artifacts_missing",
                    format!("power dir missing: {power_dir}"),
                ))
            } else if !abs_dir.join("manifest.json").is_file() {
                Some(("manifest_missing", format!("manifest missing: {manifest}")))
            } else {
                None
            };
            match early {
                Some((reason, failure)) => {
                    let mut reasons = vec![reason.to_owned()];
                    for r in &window.reasons {
                        push_reason(&mut reasons, r);
                    }
                    messages.push(format!(
                        "[aggregate_power_multinode] Power validation failed: {} (details: {sidecar_name})",
                        reasons.join(", ")
                    ));
                    let v = json!({
                        "schema_version": 1,
                        "power_valid": false,
                        "reasons": reasons,
                        "failures": [failure],
                        "telemetry_source": power_dir,
                        "benchmark_result": bench_result,
                        "benchmark_window": window.payload,
                        "selected_window": null,
                        "integration_method": INTEGRATION_METHOD,
                        "producer": {
                            "producer_git_commit": null,
                            "expected_producer_git_commit": env.power_producer_sha,
                            "exporter_image_sha256": null,
                            "stored_publication_valid": null,
                            "recomputed_publication_valid": null,
                        },
                        "expected_gpu_count": 0,
                        "observed_gpu_count": 0,
                        "per_gpu_role": {},
                        "per_gpu_max_sample_gap_s": {},
                        "per_gpu_energy_j": {},
                        "metrics": {},
                    });
                    match v {
                        Value::Object(m) => m,
                        _ => Map::new(),
                    }
                }
                None => {
                    let (m, msg) = unsupported_telemetry(
                        &power_dir,
                        bench_result,
                        expected_gpus,
                        "multinode power package",
                    );
                    messages.push(msg);
                    m
                }
            }
        }
    };
    let outcome = PowerOutcome {
        valid: false,
        messages,
        fail_exit: env.require_power,
    };
    (outcome, Value::Object(sidecar))
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
        let mut data = Map::new();
        let (out, side) = evaluate(
            &PowerEnv::default(),
            dir.path(),
            &b,
            "r.json",
            "p.json",
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
        assert_eq!(data["power_valid"], json!(0));
        assert_eq!(data["power_metric_schema_version"], json!(2));
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
    fn present_csv_is_never_turned_into_numbers() {
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
        let mut data = Map::new();
        let env = PowerEnv {
            require_power: true,
            ..PowerEnv::default()
        };
        let (out, side) = evaluate(&env, dir.path(), &b, "r.json", "p.json", 8, None, &mut data);
        assert!(out.fail_exit);
        assert_eq!(side["reasons"], json!(["aggregation_internal_error"]));
        assert_eq!(side["benchmark_window"], Value::Null);
        assert_eq!(side["internal_error"]["type"], json!("NotImplementedError"));
        assert!(!data.contains_key("avg_power_w"));
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
            12,
            Some((4, 8)),
            &mut Map::new(),
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
        assert_eq!(accumulator_check(&csv, false), Some(Value::Null));
        std::fs::write(
            dir.path().join("gpu_metrics_energy_end.csv"),
            "gpu,total_energy_consumption\n0,5\n",
        )
        .expect("w");
        assert_eq!(
            accumulator_check(&csv, false).expect("decided")["reason"],
            json!("missing_start_snapshot")
        );
        std::fs::write(
            dir.path().join("gpu_metrics_energy_start.csv"),
            "gpu,other\n0,5\n",
        )
        .expect("w");
        assert_eq!(
            accumulator_check(&csv, false).expect("decided")["reason"],
            json!("unparseable_start_snapshot")
        );
        std::fs::write(
            dir.path().join("gpu_metrics_energy_start.csv"),
            "gpu,total_energy_consumption\n0,1\n",
        )
        .expect("w");
        assert_eq!(
            accumulator_check(&csv, false).expect("decided")["reason"],
            json!("cross_check_error")
        );
        assert_eq!(accumulator_check(&csv, true), None);
    }
}
