//! Validity gates of agentic legs, run right after the benchmark (the
//! reference's `agentic/validation/validate_agentic_result.py` and the
//! multi-node template's result checks).
//!
//! - [`validate_result`]: aiperf's aggregate (`profile_export_aiperf.json`,
//!   directly in the artifact directory or in its first run subdirectory)
//!   must report requests, and the error fraction of the completed requests
//!   must not exceed the caller's threshold.
//! - [`validate_results`]: a multi-node agentic leg must leave one
//!   `<RESULT_FILENAME>_conc*.json` per requested concurrency, each with
//!   successful requests (the aggregation writes the file even when aiperf
//!   recorded none).
//!
//! Invalid content is the check saying no (exit 1); a file that is not
//! there or cannot be read means there is nothing to judge (exit 2).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sweep_model::fsio::{MAX_RESULT_JSON_BYTES as RESULT_MAX, read_bytes};

/// aiperf's aggregate file name.
pub const AGGREGATE_FILE: &str = "profile_export_aiperf.json";

/// Why an agentic result was rejected or could not be judged.
#[derive(Debug, thiserror::Error)]
pub enum AgenticError {
    #[error("{} not found", .0.display())]
    NotFound(PathBuf),
    #[error("failed to read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to read {}: {cause}", path.display())]
    Invalid { path: PathBuf, cause: String },
    #[error("{} must contain a JSON object", .0.display())]
    NotObject(PathBuf),
    /// The aggregate is reached through a link out of the artifact folder.
    #[error(transparent)]
    Outside(#[from] sweep_model::tree::TreeError),
    #[error("request_count.avg is missing")]
    MissingRequestCount,
    #[error("aiperf completed zero requests")]
    ZeroCompleted,
    #[error(
        "aiperf request error rate exceeded the benchmark limit: {} = {} > {}",
        ratio(*errors, *completed),
        percent(*errors / *completed),
        percent(*threshold)
    )]
    ErrorRate {
        errors: f64,
        completed: f64,
        threshold: f64,
    },
    #[error("expected {expected} agentic results, found {found}")]
    ResultCount { expected: usize, found: usize },
    #[error("{} has zero successful requests", .0.display())]
    ZeroSuccessful(PathBuf),
    #[error("cannot list {}: {source}", dir.display())]
    List {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl AgenticError {
    /// True when the input could not be found or read (exit 2), false when
    /// it was read and judged invalid (exit 1).
    #[must_use]
    pub fn is_unreadable(&self) -> bool {
        matches!(
            self,
            AgenticError::NotFound(_) | AgenticError::Read { .. } | AgenticError::List { .. }
        )
    }
}

/// Unreadable is "could not do the job" (2); invalid is a "no" (1).
impl sweep_cli::Classify for AgenticError {
    fn kind(&self) -> sweep_cli::Kind {
        if self.is_unreadable() {
            sweep_cli::Kind::Failed
        } else {
            sweep_cli::Kind::Rejected
        }
    }
}

/// Python's `format(x, 'g')`: six significant digits, trailing zeros
/// dropped, scientific notation below 1e-4 and from 1e6 on.
fn py_g(x: f64) -> String {
    if x == 0.0 {
        return "0".to_owned();
    }
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".to_owned()
        } else if x > 0.0 {
            "inf".to_owned()
        } else {
            "-inf".to_owned()
        };
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    };
    if (-4..6).contains(&exp) {
        let decimals = usize::try_from(5 - exp).unwrap_or(0);
        trim(format!("{x:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa.to_owned()), exp.abs())
    }
}

fn ratio(errors: f64, completed: f64) -> String {
    format!("{}/{}", py_g(errors), py_g(completed))
}

/// Python's `format(x, '.3%')`.
fn percent(x: f64) -> String {
    format!("{:.3}%", x * 100.0)
}

/// The aggregate in the direct layout, else in the first subdirectory (by
/// name) that holds one, else the direct path (reported as missing).
#[must_use]
pub fn resolve_aggregate_path(artifact_dir: &Path) -> PathBuf {
    let direct = artifact_dir.join(AGGREGATE_FILE);
    if direct.is_file() {
        return direct;
    }
    if let Ok(entries) = std::fs::read_dir(artifact_dir) {
        let mut children: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        children.sort();
        for child in children {
            let candidate = child.join(AGGREGATE_FILE);
            if child.is_dir() && candidate.is_file() {
                return candidate;
            }
        }
    }
    direct
}

/// Why a metric of the aiperf aggregate cannot be read (the metric's name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum MetricError {
    #[error("{0} must be an object")]
    NotObject(&'static str),
    #[error("{0}.avg must be numeric")]
    NotNumeric(&'static str),
    #[error("{0}.avg must be a finite non-negative number")]
    OutOfRange(&'static str),
}

/// `aggregate[name].avg` as a finite non-negative number, `None` when the
/// metric or its average is absent.
fn metric_avg(
    aggregate: &Map<String, Value>,
    name: &'static str,
) -> Result<Option<f64>, MetricError> {
    let metric = match aggregate.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(MetricError::NotObject(name)),
    };
    let value = match metric.get("avg") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_f64(),
        Some(_) => None,
    };
    let Some(value) = value else {
        return Err(MetricError::NotNumeric(name));
    };
    if !value.is_finite() || value < 0.0 {
        return Err(MetricError::OutOfRange(name));
    }
    Ok(Some(value))
}

/// A passed check: the line the reference prints.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorRateOk {
    pub errors: f64,
    pub completed: f64,
    pub threshold: f64,
}

impl std::fmt::Display for ErrorRateOk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Validated aiperf request error rate: {} = {} <= {}",
            ratio(self.errors, self.completed),
            percent(self.errors / self.completed),
            percent(self.threshold)
        )
    }
}

/// Checks the aiperf aggregate under `artifact_dir` against the maximum
/// accepted error fraction `threshold` (inclusive, `0..=1`).
pub fn validate_result(artifact_dir: &Path, threshold: f64) -> Result<ErrorRateOk, AgenticError> {
    let path = resolve_aggregate_path(artifact_dir);
    // `exists`, not `is_file`: a FIFO so named is refused by the read.
    if !path.exists() {
        return Err(AgenticError::NotFound(path));
    }
    sweep_model::tree::resolves_inside(artifact_dir, &path)?;
    let bytes = read_bytes(&path, RESULT_MAX).map_err(|source| AgenticError::Read {
        path: path.clone(),
        source,
    })?;
    let value: Value =
        sweep_model::json_strict::parse_value(&bytes).map_err(|e| AgenticError::Invalid {
            path: path.clone(),
            cause: e.to_string(),
        })?;
    let Value::Object(aggregate) = value else {
        return Err(AgenticError::NotObject(path));
    };
    let invalid = |e: MetricError| AgenticError::Invalid {
        path: path.clone(),
        cause: e.to_string(),
    };
    let successes = metric_avg(&aggregate, "request_count").map_err(invalid)?;
    let errors = metric_avg(&aggregate, "error_request_count")
        .map_err(invalid)?
        .unwrap_or(0.0);
    let completed = metric_avg(&aggregate, "completed_request_count").map_err(invalid)?;
    let Some(successes) = successes else {
        return Err(AgenticError::MissingRequestCount);
    };
    let completed = completed.unwrap_or(successes + errors);
    if completed <= 0.0 {
        return Err(AgenticError::ZeroCompleted);
    }
    if errors / completed > threshold {
        return Err(AgenticError::ErrorRate {
            errors,
            completed,
            threshold,
        });
    }
    Ok(ErrorRateOk {
        errors,
        completed,
        threshold,
    })
}

/// Python's truthiness of a JSON value.
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|x| x != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(m)) => !m.is_empty(),
    }
}

/// Checks a multi-node agentic leg's results in `dir`: exactly
/// `expected` files `<result_filename>_conc*.json`, each a JSON object with
/// a truthy `num_requests_successful`. Returns the files, sorted by name.
pub fn validate_results(
    dir: &Path,
    result_filename: &str,
    expected: usize,
) -> Result<Vec<PathBuf>, AgenticError> {
    let prefix = format!("{result_filename}_conc");
    let entries = std::fs::read_dir(dir).map_err(|source| AgenticError::List {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut names: Vec<String> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| AgenticError::List {
            dir: dir.to_path_buf(),
            source,
        })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && name.ends_with(".json") && name.len() >= prefix.len() + 5 {
            names.push(name);
        }
    }
    names.sort();
    if names.len() != expected {
        return Err(AgenticError::ResultCount {
            expected,
            found: names.len(),
        });
    }
    let mut files = Vec::new();
    for name in names {
        let shown = PathBuf::from(&name);
        let bytes =
            read_bytes(&dir.join(&name), RESULT_MAX).map_err(|source| AgenticError::Read {
                path: shown.clone(),
                source,
            })?;
        let value: Value =
            sweep_model::json_strict::parse_value(&bytes).map_err(|e| AgenticError::Invalid {
                path: shown.clone(),
                cause: e.to_string(),
            })?;
        let Value::Object(result) = value else {
            return Err(AgenticError::NotObject(shown));
        };
        if !truthy(result.get("num_requests_successful")) {
            return Err(AgenticError::ZeroSuccessful(shown));
        }
        files.push(shown);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write_aggregate(dir: &Path, aggregate: &Value, per_run: bool) -> PathBuf {
        let artifacts = dir.join("aiperf_artifacts");
        let out = if per_run {
            artifacts.join("run_0")
        } else {
            artifacts.clone()
        };
        std::fs::create_dir_all(&out).expect("mkdir");
        std::fs::write(out.join(AGGREGATE_FILE), aggregate.to_string()).expect("write");
        artifacts
    }

    #[test]
    fn error_rate_at_the_limit_passes() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = write_aggregate(
            tmp.path(),
            &json!({"request_count": {"avg": 45}, "error_request_count": {"avg": 5},
                    "completed_request_count": {"avg": 50}}),
            false,
        );
        let ok = validate_result(&dir, 0.10).expect("valid");
        assert_eq!(
            ok.to_string(),
            "Validated aiperf request error rate: 5/50 = 10.000% <= 10.000%"
        );
    }

    #[test]
    fn error_rate_over_the_limit_names_the_fraction() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = write_aggregate(
            tmp.path(),
            &json!({"request_count": {"avg": 3}, "error_request_count": {"avg": 37},
                    "completed_request_count": {"avg": 40}}),
            false,
        );
        let err = validate_result(&dir, 0.10).expect_err("rejected");
        assert!(!err.is_unreadable());
        assert_eq!(
            err.to_string(),
            "aiperf request error rate exceeded the benchmark limit: 37/40 = 92.500% > 10.000%"
        );
    }

    #[test]
    fn missing_counts_default_as_the_reference() {
        let tmp = tempfile::tempdir().expect("tmp");
        // No error count: zero errors; no completed count: successes + errors.
        let dir = write_aggregate(tmp.path(), &json!({"request_count": {"avg": 7}}), true);
        let ok = validate_result(&dir, 0.0).expect("valid");
        assert_eq!((ok.errors, ok.completed), (0.0, 7.0));
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = write_aggregate(
            tmp.path(),
            &json!({"error_request_count": {"avg": 1}}),
            false,
        );
        assert_eq!(
            validate_result(&dir, 0.5)
                .expect_err("no count")
                .to_string(),
            "request_count.avg is missing"
        );
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = write_aggregate(tmp.path(), &json!({"request_count": {"avg": 0}}), false);
        assert_eq!(
            validate_result(&dir, 0.5).expect_err("zero").to_string(),
            "aiperf completed zero requests"
        );
    }

    #[test]
    fn malformed_metrics_are_invalid_with_the_cause() {
        for (aggregate, cause) in [
            (
                json!({"request_count": 3}),
                "request_count must be an object",
            ),
            (
                json!({"request_count": {"avg": "3"}}),
                "request_count.avg must be numeric",
            ),
            (
                json!({"request_count": {"avg": true}}),
                "request_count.avg must be numeric",
            ),
            (
                json!({"request_count": {"avg": 3}, "error_request_count": {"avg": -1}}),
                "error_request_count.avg must be a finite non-negative number",
            ),
        ] {
            let tmp = tempfile::tempdir().expect("tmp");
            let dir = write_aggregate(tmp.path(), &aggregate, false);
            let err = validate_result(&dir, 0.1).expect_err("invalid");
            assert!(!err.is_unreadable());
            assert!(err.to_string().ends_with(&format!(": {cause}")), "{err}");
        }
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = write_aggregate(tmp.path(), &json!([1]), false);
        let err = validate_result(&dir, 0.1).expect_err("array");
        assert!(
            err.to_string().ends_with("must contain a JSON object"),
            "{err}"
        );
    }

    #[test]
    fn missing_aggregate_cannot_be_judged() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("aiperf_artifacts");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("profile_export.jsonl"), "{}\n").expect("write");
        let err = validate_result(&dir, 0.1).expect_err("missing");
        assert!(err.is_unreadable());
        assert!(
            err.to_string()
                .ends_with("aiperf_artifacts/profile_export_aiperf.json not found"),
            "{err}"
        );
    }

    #[test]
    fn python_g_and_percent_formats() {
        assert_eq!(py_g(65.0), "65");
        assert_eq!(py_g(2.5), "2.5");
        assert_eq!(py_g(1234567.0), "1.23457e+06");
        assert_eq!(py_g(0.00001), "1e-05");
        assert_eq!(py_g(100000.0), "100000");
        assert_eq!(percent(65.0 / 67.0), "97.015%");
    }

    #[test]
    fn multi_node_results_need_one_successful_file_per_concurrency() {
        let tmp = tempfile::tempdir().expect("tmp");
        let d = tmp.path();
        let put = |name: &str, v: &Value| std::fs::write(d.join(name), v.to_string()).expect("w");
        put("run_conc16.json", &json!({"num_requests_successful": 12}));
        put("other_conc16.json", &json!({"num_requests_successful": 0}));
        assert_eq!(
            validate_results(d, "run", 2)
                .expect_err("count")
                .to_string(),
            "expected 2 agentic results, found 1"
        );
        put("run_conc32.json", &json!({"num_requests_successful": 0}));
        let err = validate_results(d, "run", 2).expect_err("zero");
        assert_eq!(
            err.to_string(),
            "run_conc32.json has zero successful requests"
        );
        put("run_conc32.json", &json!({"num_requests_successful": 3.5}));
        assert_eq!(
            validate_results(d, "run", 2).expect("valid"),
            [
                PathBuf::from("run_conc16.json"),
                PathBuf::from("run_conc32.json")
            ]
        );
        put("run_conc32.json", &json!({}));
        assert!(matches!(
            validate_results(d, "run", 2),
            Err(AgenticError::ZeroSuccessful(_))
        ));
        std::fs::write(d.join("run_conc32.json"), "{not json").expect("w");
        let err = validate_results(d, "run", 2).expect_err("json");
        assert!(!err.is_unreadable());
        assert!(
            err.to_string()
                .starts_with("failed to read run_conc32.json: "),
            "{err}"
        );
    }
}
