//! Multi-node power of `process` (spec `results.md` §3.3): the srt-slurm
//! `dcgm-power` package (`<POWER_ARTIFACT_DIR>/{manifest.json, samples.csv,
//! windows/*.json}`) is re-validated from its bytes — the producer's stored
//! `publication_valid` is never trusted on its own — and, only when every
//! gate passes, the per-GPU board power is integrated over the formal
//! window into whole-deployment and per-role energy figures. The contract of
//! the reference's `aggregate_power_multinode.py`: same gates in the same
//! order, same reason codes, same failure texts and sidecar layout.
//!
//! Gates: the producer commit must equal the pin (`POWER_PRODUCER_SHA`); the
//! manifest's wire contract and lifecycle, the samples (strict CSV, no
//! duplicate rows, monotonic per device), device identity, every expected
//! measurement window (present, completed, matching its result file,
//! bracketed by samples with no gap over 3 s) and the manifest's stored
//! evidence are recomputed and must all hold; the stored verdict must agree;
//! the role topology must match the workflow's `PREFILL_GPUS`/`DECODE_GPUS`
//! (prefill and decode in distinct het groups when het groups are used);
//! exactly one completed window must belong to this result, bound by
//! content (the original under `POWER_RESULT_ROOT` equals the processed copy).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::power_csv::{integrate_device, parse_csv_with, py_round};
use sweep_model::json_type::python_type_name;
use sweep_model::python::{
    python_float, python_int, python_path, python_path_join, python_repr, python_repr_list,
    python_repr_str,
};

const SCHEMA_VERSION: i64 = 1;
const PRODUCER: &str = "srt-slurm.dcgm-power";
const POWER_METRIC: &str = "DCGM_FI_DEV_POWER_USAGE";
const POWER_UNIT: &str = "W";
const POWER_SCOPE: &str = "gpu_device_board_as_reported_by_dcgm";
const CLOCK_SOURCE: &str = "head_node_unix_clock";
const MANIFEST_FILENAME: &str = "manifest.json";
const SAMPLES_FILENAME: &str = "samples.csv";
const WINDOWS_DIRNAME: &str = "windows";
const SAMPLES_HEADER: [&str; 7] = [
    "schema_version",
    "timestamp_unix",
    "scrape_seq",
    "hostname",
    "gpu_index",
    "gpu_uuid",
    "power_w",
];
/// Fixed by the producer contract (not a multiple of the sample interval).
const MAX_SAMPLE_GAP_SECONDS: f64 = 3.0;
const WORKER_ROLES: [&str; 3] = ["prefill", "decode", "agg"];
const STATUS_COMPLETE: &str = "complete";
const WINDOW_STATUS_RUNNING: &str = "running";
const WINDOW_STATUS_COMPLETED: &str = "completed";
const WINDOW_ALLOWED_STATUSES: [&str; 4] = ["running", "completed", "failed", "interrupted"];
/// A window's wall time may differ from its reported duration by this much
/// (seconds) or this fraction of the duration, whichever is larger.
const CLOCK_TOLERANCE_SECONDS: f64 = 0.5;
const CLOCK_TOLERANCE_FRACTION: f64 = 0.01;
/// Lifecycle reason codes that contradict a "complete" manifest.
const FATAL_LIFECYCLE_REASONS: [&str; 5] = [
    "exporter_exited",
    "collector_exception",
    "collector_interrupted",
    "collector_join_timeout",
    "benchmark_child_reap_timeout",
];
/// Startup failures that also block when the manifest says power was required.
const STARTUP_FAILURE_REASONS: [&str; 3] = [
    "exporter_startup_timeout",
    "exporter_launch_failed",
    "endpoint_resolution_failed",
];

// ---------------------------------------------------------------------------
// Python semantics the contract is written in: `==` across int/float/bool,
// `repr()` in failure texts, the exception reprs of a malformed manifest.
// ---------------------------------------------------------------------------

/// A JSON number (not a boolean) as f64, as `isinstance(v, (int, float))`.
fn number(v: Option<&Value>) -> Option<f64> {
    match v {
        Some(Value::Number(n)) => n.as_f64(),
        _ => None,
    }
}

fn is_finite(v: Option<&Value>) -> bool {
    number(v).is_some_and(f64::is_finite)
}

/// A JSON integer (not a float, not a boolean), as `isinstance(v, int)`
/// without `bool`.
fn integer(v: Option<&Value>) -> Option<i64> {
    match v {
        Some(Value::Number(n)) if !n.is_f64() => n.as_i64(),
        _ => None,
    }
}

/// Python's numeric view of a value for `==`: booleans are 0/1.
fn py_num(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Python's `==` on parsed JSON: numbers (and booleans) compare by value,
/// containers element-wise, dicts regardless of key order.
fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) if !x.is_f64() && !y.is_f64() => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Bool(_) | Value::Number(_), Value::Bool(_) | Value::Number(_)) => {
            py_num(a) == py_num(b)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => a == b,
    }
}

fn py_eq_opt(a: Option<&Value>, b: &Value) -> bool {
    py_eq(a.unwrap_or(&Value::Null), b)
}

/// Python's `repr()` of a parsed JSON value (a missing key is `None`).
fn repr(v: Option<&Value>) -> String {
    v.map_or_else(|| "None".to_owned(), python_repr)
}

fn repr_strs<S: AsRef<str>>(items: &[S]) -> String {
    python_repr_list(items.iter().map(|s| python_repr_str(s.as_ref())))
}

/// The exceptions a malformed manifest raises in the reference, shown as
/// `repr(exc)` in the failure text.
#[derive(Debug)]
enum PyExc {
    Value(String),
    Type(String),
    Key(String),
    Attribute(String),
}

impl PyExc {
    fn repr(&self) -> String {
        match self {
            PyExc::Value(m) => format!("ValueError({})", python_repr_str(m)),
            PyExc::Type(m) => format!("TypeError({})", python_repr_str(m)),
            PyExc::Key(k) => format!("KeyError({})", python_repr_str(k)),
            PyExc::Attribute(m) => format!("AttributeError({})", python_repr_str(m)),
        }
    }
}

/// `value[key]` on a parsed JSON value.
fn subscript<'a>(value: &'a Value, key: &str) -> Result<&'a Value, PyExc> {
    match value {
        Value::Object(m) => m.get(key).ok_or_else(|| PyExc::Key(key.to_owned())),
        Value::Array(_) => Err(PyExc::Type(
            "list indices must be integers or slices, not str".to_owned(),
        )),
        Value::String(_) => Err(PyExc::Type(
            "string indices must be integers, not 'str'".to_owned(),
        )),
        other => Err(PyExc::Type(format!(
            "'{}' object is not subscriptable",
            python_type_name(other)
        ))),
    }
}

/// `value.get(key)` on a parsed JSON value.
fn get<'a>(value: &'a Value, key: &str) -> Result<Option<&'a Value>, PyExc> {
    match value {
        Value::Object(m) => Ok(m.get(key)),
        other => Err(PyExc::Attribute(format!(
            "'{}' object has no attribute 'get'",
            python_type_name(other)
        ))),
    }
}

/// Python truthiness.
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

fn push_once(reasons: &mut Vec<String>, r: &str) {
    if !reasons.iter().any(|x| x == r) {
        reasons.push(r.to_owned());
    }
}

fn dedupe(values: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    for v in values {
        push_once(&mut out, &v);
    }
    out
}

// ---------------------------------------------------------------------------
// Strict manifest parsing.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct DeviceKey(String, i64);

struct Assignment {
    worker_role: String,
    het_group: Option<i64>,
}

struct ExpectedDevice {
    key: DeviceKey,
    assignments: Vec<Assignment>,
}

/// `(benchmark_type, concurrency)`; a boolean concurrency keys as 0/1, as
/// Python's `True == 1` hashes.
type WindowKey = (String, i64);

fn text(v: &Value, label: &str) -> Result<String, PyExc> {
    match v {
        Value::String(s) if !s.is_empty() => Ok(s.clone()),
        other => Err(PyExc::Value(format!(
            "{label} is not a non-empty string: {}",
            repr(Some(other))
        ))),
    }
}

fn whole(v: &Value, label: &str, minimum: i64) -> Result<i64, PyExc> {
    match integer(Some(v)) {
        Some(i) if i >= minimum => Ok(i),
        _ => Err(PyExc::Value(format!(
            "{label} is not an integer >= {minimum}: {}",
            repr(Some(v))
        ))),
    }
}

/// `manifest.get(key) or []`, which must be a list.
fn entries<'a>(manifest: &'a Map<String, Value>, key: &str) -> Result<&'a [Value], PyExc> {
    let v = manifest.get(key);
    if !truthy(v) {
        return Ok(&[]);
    }
    match v {
        Some(Value::Array(a)) => Ok(a),
        other => Err(PyExc::Type(format!("{key} is not a list: {}", repr(other)))),
    }
}

fn parse_expected_devices(manifest: &Map<String, Value>) -> Result<Vec<ExpectedDevice>, PyExc> {
    let mut devices = Vec::new();
    for entry in entries(manifest, "expected_devices")? {
        let raw = get(entry, "assignments")?;
        let raw = match raw {
            Some(Value::Array(a)) if !a.is_empty() => a,
            other if !truthy(other) => {
                return Err(PyExc::Value(
                    "assignments is not a non-empty list: []".to_owned(),
                ));
            }
            other => {
                return Err(PyExc::Value(format!(
                    "assignments is not a non-empty list: {}",
                    repr(other)
                )));
            }
        };
        let mut assignments = Vec::new();
        for a in raw {
            let role = subscript(a, "worker_role")?;
            let worker_role = match role.as_str() {
                Some(r) if WORKER_ROLES.contains(&r) => r.to_owned(),
                _ => {
                    return Err(PyExc::Value(format!(
                        "worker_role is not one of ('prefill', 'decode', 'agg'): {}",
                        repr(Some(role))
                    )));
                }
            };
            whole(subscript(a, "worker_index")?, "worker_index", 0)?;
            whole(subscript(a, "worker_process")?, "worker_process", 0)?;
            let het_group = match get(a, "het_group")? {
                None | Some(Value::Null) => None,
                Some(v) => Some(whole(v, "het_group", 0)?),
            };
            assignments.push(Assignment {
                worker_role,
                het_group,
            });
        }
        let hostname = text(subscript(entry, "hostname")?, "hostname")?;
        let gpu_index = whole(subscript(entry, "gpu_index")?, "gpu_index", 0)?;
        devices.push(ExpectedDevice {
            key: DeviceKey(hostname, gpu_index),
            assignments,
        });
    }
    Ok(devices)
}

fn parse_expected_windows(manifest: &Map<String, Value>) -> Result<Vec<WindowKey>, PyExc> {
    let mut windows = Vec::new();
    for entry in entries(manifest, "expected_windows")? {
        let benchmark_type = text(subscript(entry, "benchmark_type")?, "benchmark_type")?;
        let concurrency = whole(subscript(entry, "concurrency")?, "concurrency", 1)?;
        windows.push((benchmark_type, concurrency));
    }
    Ok(windows)
}

/// The manifest's wire and lifecycle checks (the stored verdict excluded).
fn check_wire_contract(m: &Map<String, Value>) -> Vec<String> {
    let mut failures = Vec::new();
    let expected: [(&str, Value); 6] = [
        ("schema_version", json!(SCHEMA_VERSION)),
        ("producer", json!(PRODUCER)),
        ("source_metric", json!(POWER_METRIC)),
        ("unit", json!(POWER_UNIT)),
        ("power_scope", json!(POWER_SCOPE)),
        ("timestamp_source", json!(CLOCK_SOURCE)),
    ];
    for (key, want) in &expected {
        if !py_eq_opt(m.get(*key), want) {
            failures.push(format!(
                "{key} is {}, expected {}",
                repr(m.get(*key)),
                repr(Some(want))
            ));
        }
    }
    if !py_eq_opt(m.get("status"), &json!(STATUS_COMPLETE)) {
        failures.push(format!(
            "status is {}, expected {}",
            repr(m.get("status")),
            python_repr_str(STATUS_COMPLETE)
        ));
    }
    if !is_finite(m.get("started_at_unix")) {
        failures.push("started_at_unix is not a finite number".to_owned());
    }
    if !is_finite(m.get("stopped_at_unix")) {
        failures.push("stopped_at_unix is not finite in a terminal manifest".to_owned());
    }
    for key in ["sample_interval_seconds", "request_timeout_seconds"] {
        if !number(m.get(key)).is_some_and(|x| x.is_finite() && x > 0.0) {
            failures.push(format!("{key} is not finite and positive"));
        }
    }
    for key in ["scrape_count", "sample_row_count"] {
        if integer(m.get(key)).is_none_or(|x| x < 0) {
            failures.push(format!("{key} is not a non-negative integer"));
        }
    }
    let required = m.get("required");
    if !matches!(required, Some(Value::Bool(_))) {
        failures.push(format!(
            "required is {}, expected a boolean",
            repr(required)
        ));
    }
    match m.get("reason_codes") {
        Some(Value::Array(codes)) if codes.iter().all(Value::is_string) => {
            let mut blocking: BTreeSet<&str> = FATAL_LIFECYCLE_REASONS.into_iter().collect();
            if required == Some(&Value::Bool(true)) {
                blocking.extend(STARTUP_FAILURE_REASONS);
            }
            let incompatible: BTreeSet<&str> = codes
                .iter()
                .filter_map(Value::as_str)
                .filter(|c| blocking.contains(c))
                .collect();
            if !incompatible.is_empty() {
                failures.push(format!(
                    "complete manifest carries lifecycle-failure reasons: {}",
                    incompatible.into_iter().collect::<Vec<_>>().join(", ")
                ));
            }
        }
        _ => failures.push("reason_codes is not a list of strings".to_owned()),
    }
    match m.get("dcgm_exporter") {
        Some(Value::Object(e)) => {
            if !truthy(e.get("container_image_resolved")) {
                failures.push("dcgm_exporter.container_image_resolved is empty".to_owned());
            }
        }
        _ => failures.push("dcgm_exporter is not an object".to_owned()),
    }
    failures
}

// ---------------------------------------------------------------------------
// Samples.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct SampleRow {
    timestamp_unix: f64,
    scrape_seq: i64,
    hostname: String,
    gpu_index: i64,
    gpu_uuid: String,
    power_w: f64,
}

fn parse_sample_row(raw: &[String]) -> Option<SampleRow> {
    if raw.len() != SAMPLES_HEADER.len() {
        return None;
    }
    let schema_version = python_int(&raw[0])?;
    let timestamp_unix = python_float(&raw[1])?;
    let scrape_seq = python_int(&raw[2])?;
    let gpu_index = python_int(&raw[4])?;
    let power_w = python_float(&raw[6])?;
    let (hostname, gpu_uuid) = (&raw[3], &raw[5]);
    if schema_version != SCHEMA_VERSION || hostname.is_empty() || gpu_uuid.is_empty() {
        return None;
    }
    if !timestamp_unix.is_finite() || !power_w.is_finite() || power_w < 0.0 {
        return None;
    }
    if scrape_seq < 0 || gpu_index < 0 {
        return None;
    }
    Some(SampleRow {
        timestamp_unix,
        scrape_seq,
        hostname: hostname.clone(),
        gpu_index,
        gpu_uuid: gpu_uuid.clone(),
        power_w,
    })
}

/// The unique rows of `samples.csv` and the reasons it is not clean.
/// A file that is not UTF-8 counts as malformed with no rows.
fn read_samples(path: &Path) -> (Vec<SampleRow>, Vec<String>) {
    if !path.is_file() {
        return (Vec::new(), vec!["samples_csv_missing".to_owned()]);
    }
    let mut reasons = Vec::new();
    let mut rows = Vec::new();
    match sweep_model::fsio::read_bytes(path, sweep_model::fsio::MAX_POWER_CSV_BYTES)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
    {
        Some(text) => {
            let table = parse_csv_with(&text, false);
            let mut it = table.into_iter();
            let header = it.next();
            if header.as_deref().is_none_or(|h| h != SAMPLES_HEADER) {
                return (Vec::new(), vec!["samples_csv_header_mismatch".to_owned()]);
            }
            for raw in it {
                match parse_sample_row(&raw) {
                    Some(r) => rows.push(r),
                    None => reasons.push("samples_csv_malformed".to_owned()),
                }
            }
        }
        None => reasons.push("samples_csv_malformed".to_owned()),
    }
    let mut seen = HashSet::new();
    let mut unique = Vec::new();
    for row in rows {
        if !seen.insert((row.scrape_seq, row.hostname.clone(), row.gpu_index)) {
            reasons.push("duplicate_sample_row".to_owned());
            continue;
        }
        unique.push(row);
    }
    let mut per_device: BTreeMap<DeviceKey, Vec<&SampleRow>> = BTreeMap::new();
    for row in &unique {
        per_device
            .entry(DeviceKey(row.hostname.clone(), row.gpu_index))
            .or_default()
            .push(row);
    }
    for rows in per_device.values_mut() {
        rows.sort_by_key(|r| r.scrape_seq);
        if rows
            .windows(2)
            .any(|w| w[1].timestamp_unix <= w[0].timestamp_unix)
        {
            reasons.push("timestamp_non_monotonic".to_owned());
            break;
        }
    }
    (unique, dedupe(reasons))
}

struct ObservedDevice {
    key: DeviceKey,
    gpu_uuids: Vec<String>,
    first: f64,
    last: f64,
    /// Sorted sample times.
    times: Vec<f64>,
}

impl ObservedDevice {
    fn to_json(&self) -> Value {
        json!({
            "hostname": self.key.0,
            "gpu_index": self.key.1,
            "gpu_uuids": self.gpu_uuids,
            "first_sample_time_unix": self.first,
            "last_sample_time_unix": self.last,
        })
    }
    fn label(&self) -> Option<String> {
        (self.gpu_uuids.len() == 1).then(|| format!("{}/{}", self.key.0, self.gpu_uuids[0]))
    }
}

fn derive_observed_devices(rows: &[SampleRow]) -> Vec<ObservedDevice> {
    let mut by_key: BTreeMap<DeviceKey, Vec<&SampleRow>> = BTreeMap::new();
    for row in rows {
        by_key
            .entry(DeviceKey(row.hostname.clone(), row.gpu_index))
            .or_default()
            .push(row);
    }
    by_key
        .into_iter()
        .map(|(key, mut rows)| {
            rows.sort_by_key(|r| r.scrape_seq);
            let mut gpu_uuids: Vec<String> = Vec::new();
            for r in &rows {
                if !gpu_uuids.contains(&r.gpu_uuid) {
                    gpu_uuids.push(r.gpu_uuid.clone());
                }
            }
            let mut times: Vec<f64> = rows.iter().map(|r| r.timestamp_unix).collect();
            times.sort_by(f64::total_cmp);
            ObservedDevice {
                key,
                gpu_uuids,
                first: times.first().copied().unwrap_or(0.0),
                last: times.last().copied().unwrap_or(0.0),
                times,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Device identity and topology.
// ---------------------------------------------------------------------------

fn resolve_roles(devices: &[ExpectedDevice]) -> (BTreeMap<DeviceKey, String>, Vec<String>) {
    let mut roles = BTreeMap::new();
    for d in devices {
        let distinct: BTreeSet<&str> = d
            .assignments
            .iter()
            .map(|a| a.worker_role.as_str())
            .collect();
        if distinct.len() != 1 {
            return (BTreeMap::new(), vec!["conflicting_worker_roles".to_owned()]);
        }
        let role = distinct.into_iter().next().unwrap_or_default().to_owned();
        roles.insert(d.key.clone(), role);
    }
    (roles, Vec::new())
}

fn resolve_het_groups(devices: &[ExpectedDevice]) -> (BTreeMap<String, Option<i64>>, Vec<String>) {
    let conflict = || (BTreeMap::new(), vec!["conflicting_het_groups".to_owned()]);
    let mut groups: BTreeMap<String, Option<i64>> = BTreeMap::new();
    for d in devices {
        let distinct: BTreeSet<Option<i64>> = d.assignments.iter().map(|a| a.het_group).collect();
        if distinct.len() != 1 {
            return conflict();
        }
        let group = distinct.into_iter().next().flatten();
        if groups.get(&d.key.0).is_some_and(|g| *g != group) {
            return conflict();
        }
        groups.insert(d.key.0.clone(), group);
    }
    (groups, Vec::new())
}

fn validate_devices(
    expected: &[ExpectedDevice],
    observed: &[ObservedDevice],
) -> (Vec<String>, BTreeMap<DeviceKey, String>) {
    let mut reasons = Vec::new();
    let expected_keys: BTreeSet<&DeviceKey> = expected.iter().map(|d| &d.key).collect();
    let observed_keys: BTreeSet<&DeviceKey> = observed.iter().map(|d| &d.key).collect();
    if expected_keys.is_empty() || !expected_keys.is_subset(&observed_keys) {
        reasons.push("expected_device_missing".to_owned());
    }
    if !observed_keys.is_subset(&expected_keys) {
        reasons.push("unexpected_device".to_owned());
    }
    // A UUID must map 1:1 to a device key, or one GPU is counted twice.
    if observed.iter().any(|d| d.gpu_uuids.len() != 1) {
        reasons.push("gpu_uuid_changed".to_owned());
    } else {
        let uuids: BTreeSet<&String> = observed.iter().map(|d| &d.gpu_uuids[0]).collect();
        if uuids.len() != observed.len() {
            reasons.push("gpu_uuid_changed".to_owned());
        }
    }
    let (roles, role_conflicts) = resolve_roles(expected);
    let (_, group_conflicts) = resolve_het_groups(expected);
    reasons.extend(role_conflicts);
    reasons.extend(group_conflicts);
    (dedupe(reasons), roles)
}

/// Role counts against the workflow's GPU counts; distinct het groups per
/// role when the deployment uses het groups at all.
fn check_role_topology(
    expected: &[ExpectedDevice],
    roles: &BTreeMap<DeviceKey, String>,
    expected_roles: &[(&str, i64)],
) -> Vec<String> {
    let mut failures = Vec::new();
    let mut counts: BTreeMap<&str, i64> = BTreeMap::new();
    for role in roles.values() {
        *counts.entry(role.as_str()).or_default() += 1;
    }
    let want: BTreeSet<&str> = expected_roles.iter().map(|(r, _)| *r).collect();
    let found: BTreeSet<&str> = counts.keys().copied().collect();
    if want != found {
        failures.push(format!(
            "expected roles {}, found {}",
            repr_strs(&want.iter().collect::<Vec<_>>()),
            repr_strs(&found.iter().collect::<Vec<_>>())
        ));
    }
    let mut sorted_roles = expected_roles.to_vec();
    sorted_roles.sort();
    for (role, count) in sorted_roles {
        let have = counts.get(role).copied().unwrap_or(0);
        if have != count {
            failures.push(format!("expected {count} {role} GPUs, found {have}"));
        }
    }
    let (groups, conflicts) = resolve_het_groups(expected);
    if !conflicts.is_empty() {
        failures.extend(conflicts.into_iter().map(|r| format!("{r} (topology)")));
        return failures;
    }
    let mut per_role: BTreeMap<&str, BTreeSet<Option<i64>>> = BTreeMap::new();
    for d in expected {
        if let Some(role) = roles.get(&d.key) {
            per_role
                .entry(role.as_str())
                .or_default()
                .insert(groups.get(&d.key.0).copied().flatten());
        }
    }
    // Non-het deployments (one plain Slurm job) report no het group for any
    // device; the exemption is deployment-wide.
    let non_het = groups.values().all(Option::is_none);
    let mut assigned = Vec::new();
    for (role, role_groups) in per_role {
        if role_groups.len() != 1 {
            // Sorted by str(): digits before "None".
            let mut shown: Vec<String> = role_groups
                .iter()
                .map(|g| g.map_or_else(|| "None".to_owned(), |i| i.to_string()))
                .collect();
            shown.sort();
            failures.push(format!(
                "role {role} spans het groups [{}], expected exactly one",
                shown.join(", ")
            ));
            continue;
        }
        match role_groups.into_iter().next().flatten() {
            None => {
                if !non_het {
                    failures.push(format!(
                        "role {role} has het group None while other devices report real het groups"
                    ));
                }
            }
            Some(g) => assigned.push(g),
        }
    }
    let distinct: BTreeSet<i64> = assigned.iter().copied().collect();
    if distinct.len() != assigned.len() {
        failures.push("roles share a het group".to_owned());
    }
    failures
}

// ---------------------------------------------------------------------------
// Measurement windows.
// ---------------------------------------------------------------------------

struct ParsedWindow {
    relative_path: String,
    benchmark_type: String,
    concurrency: i64,
    /// As written (a boolean stays a boolean in the sidecar).
    concurrency_json: Value,
    result_path: String,
    status: String,
    start: f64,
    end: Option<f64>,
    duration: Option<f64>,
}

impl ParsedWindow {
    fn key(&self) -> WindowKey {
        (self.benchmark_type.clone(), self.concurrency)
    }
}

/// `PurePosixPath(value).parts`: components without empty and `.` ones.
fn posix_parts(value: &str) -> Vec<&str> {
    value
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect()
}

fn is_safe_relative_subpath(value: &str) -> bool {
    if value.is_empty() || value.starts_with('/') || value.starts_with('~') {
        return false;
    }
    let parts = posix_parts(value);
    !parts.is_empty() && !parts.contains(&"..")
}

/// `Path.resolve(strict=False)`: symlinks of the existing prefix followed,
/// the rest appended lexically.
fn resolve_lenient(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path)
    };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => {
                out.push(other);
                if let Ok(real) = std::fs::canonicalize(&out) {
                    out = real;
                }
            }
        }
    }
    out
}

fn stays_below(root: &Path, relative: &str) -> bool {
    resolve_lenient(&root.join(relative)).starts_with(resolve_lenient(root))
}

/// `PurePath.stem` of the last component.
fn stem(name: &str) -> &str {
    let name = name.rsplit('/').find(|p| !p.is_empty()).unwrap_or("");
    match name.rfind('.') {
        Some(i) if i > 0 && i < name.len() - 1 => &name[..i],
        _ => name,
    }
}

fn status_invariants_hold(
    status: &str,
    end: Option<&Value>,
    duration: Option<&Value>,
    reason: Option<&Value>,
) -> bool {
    let none = |v: Option<&Value>| matches!(v, None | Some(Value::Null));
    let reason_text = matches!(reason, Some(Value::String(s)) if !s.is_empty());
    match status {
        WINDOW_STATUS_RUNNING => none(end) && none(duration) && none(reason),
        "interrupted" => none(end) && none(duration) && reason_text,
        _ => {
            if !is_finite(end) || !number(duration).is_some_and(|d| d.is_finite() && d > 0.0) {
                return false;
            }
            if status == WINDOW_STATUS_COMPLETED {
                none(reason)
            } else {
                reason_text
            }
        }
    }
}

fn read_json(path: &Path) -> Option<Value> {
    let bytes =
        sweep_model::fsio::read_bytes(path, sweep_model::fsio::MAX_RESULT_JSON_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn parse_window(
    path: &Path,
    relative: &str,
    result_root: &Path,
) -> Result<ParsedWindow, &'static str> {
    let malformed = "measurement_window_malformed";
    let Some(Value::Object(p)) = read_json(path) else {
        return Err(malformed);
    };
    let status = p.get("status").and_then(Value::as_str);
    let benchmark_type = p.get("benchmark_type").and_then(Value::as_str);
    // Python's isinstance(x, int) admits booleans.
    let concurrency = match p.get("concurrency") {
        Some(Value::Bool(b)) => Some(i64::from(*b)),
        other => integer(other),
    };
    if !py_eq_opt(p.get("schema_version"), &json!(SCHEMA_VERSION))
        || !py_eq_opt(p.get("clock_source"), &json!(CLOCK_SOURCE))
        || !status.is_some_and(|s| WINDOW_ALLOWED_STATUSES.contains(&s))
        || benchmark_type.is_none()
        || concurrency.is_none()
        || !is_finite(p.get("benchmark_start_time_unix"))
    {
        return Err(malformed);
    }
    let invalid_path = "measurement_window_result_path_invalid";
    let result_path = match p.get("result_path") {
        Some(Value::String(s)) if is_safe_relative_subpath(s) => s.clone(),
        _ => return Err(invalid_path),
    };
    let own_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !stays_below(result_root, &result_path) || stem(&result_path) != stem(&own_name) {
        return Err(invalid_path);
    }
    let (end, duration) = (p.get("benchmark_end_time_unix"), p.get("duration"));
    let status = status.unwrap_or_default();
    if !status_invariants_hold(status, end, duration, p.get("reason")) {
        return Err(malformed);
    }
    Ok(ParsedWindow {
        relative_path: relative.to_owned(),
        benchmark_type: benchmark_type.unwrap_or_default().to_owned(),
        concurrency: concurrency.unwrap_or_default(),
        concurrency_json: p.get("concurrency").cloned().unwrap_or(Value::Null),
        result_path,
        status: status.to_owned(),
        start: number(p.get("benchmark_start_time_unix")).unwrap_or_default(),
        end: number(end),
        duration: number(duration),
    })
}

fn artifact_error(path: &str, reason: &str) -> Value {
    json!({"path": path, "reason_codes": [reason]})
}

/// The windows directory: parsed windows by key (duplicates dropped) and
/// the duplicated keys; problems go to `artifact_errors`.
fn scan_windows(
    windows_dir: &Path,
    result_root: &Path,
    artifact_errors: &mut Vec<Value>,
) -> (BTreeMap<WindowKey, ParsedWindow>, BTreeSet<WindowKey>) {
    let mut parsed: BTreeMap<WindowKey, ParsedWindow> = BTreeMap::new();
    let mut duplicates = BTreeSet::new();
    if !windows_dir.is_dir() {
        return (parsed, duplicates);
    }
    let parent = windows_dir.parent().unwrap_or(Path::new("."));
    if !stays_below(parent, WINDOWS_DIRNAME) {
        artifact_errors.push(artifact_error(
            WINDOWS_DIRNAME,
            "measurement_window_artifact_path_invalid",
        ));
        return (parsed, duplicates);
    }
    let mut names: Vec<String> = std::fs::read_dir(windows_dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    for name in names {
        let path = windows_dir.join(&name);
        let relative = format!("{WINDOWS_DIRNAME}/{name}");
        let is_link = path.symlink_metadata().is_ok_and(|m| m.is_symlink());
        if is_link || !path.is_file() {
            artifact_errors.push(artifact_error(
                &relative,
                "measurement_window_artifact_path_invalid",
            ));
            continue;
        }
        let window = match parse_window(&path, &relative, result_root) {
            Ok(w) => w,
            Err(reason) => {
                artifact_errors.push(artifact_error(&relative, reason));
                continue;
            }
        };
        let key = window.key();
        if let Some(first) = parsed.get(&key) {
            artifact_errors.push(artifact_error(
                &first.relative_path,
                "measurement_window_duplicate",
            ));
            artifact_errors.push(artifact_error(&relative, "measurement_window_duplicate"));
            duplicates.insert(key);
            continue;
        }
        parsed.insert(key, window);
    }
    for key in &duplicates {
        parsed.remove(key);
    }
    (parsed, duplicates)
}

fn check_window_result(w: &ParsedWindow, result_root: &Path) -> Vec<String> {
    let file = result_root.join(&w.result_path);
    if !file.is_file() {
        return vec!["measurement_window_result_missing".to_owned()];
    }
    let result = match read_json(&file) {
        Some(Value::Object(m)) => m,
        Some(_) => return vec!["measurement_window_result_mismatch".to_owned()],
        None => return vec!["measurement_window_result_missing".to_owned()],
    };
    let same =
        |key: &str, want: Option<f64>| want.is_some_and(|x| py_eq_opt(result.get(key), &json!(x)));
    if !same("benchmark_start_time_unix", Some(w.start))
        || !same("benchmark_end_time_unix", w.end)
        || !same("duration", w.duration)
    {
        return vec!["measurement_window_result_mismatch".to_owned()];
    }
    let (end, duration) = (w.end.unwrap_or_default(), w.duration.unwrap_or_default());
    let tolerance = f64::max(CLOCK_TOLERANCE_SECONDS, CLOCK_TOLERANCE_FRACTION * duration);
    if ((end - w.start) - duration).abs() > tolerance {
        return vec!["measurement_window_clock_mismatch".to_owned()];
    }
    Vec::new()
}

/// The last sample at or before `start`, those inside, the first at or
/// after `end`; `None` when the window is not bracketed.
fn bracketing_sequence(times: &[f64], start: f64, end: f64) -> Option<Vec<f64>> {
    let before = times.iter().copied().rfind(|&t| t <= start)?;
    let after = times.iter().copied().find(|&t| t >= end)?;
    let mut seq = vec![before];
    seq.extend(times.iter().copied().filter(|&t| start < t && t < end));
    seq.push(after);
    Some(seq)
}

fn largest_gap(seq: &[f64]) -> f64 {
    seq.windows(2)
        .map(|w| w[1] - w[0])
        .fold(None, |m: Option<f64>, g| Some(m.map_or(g, |m| m.max(g))))
        .unwrap_or(0.0)
}

fn check_coverage(
    start: f64,
    end: f64,
    expected_keys: &BTreeSet<DeviceKey>,
    observed: &[ObservedDevice],
) -> (Map<String, Value>, Vec<String>) {
    let mut gaps = Map::new();
    let mut reasons = Vec::new();
    for key in expected_keys {
        let Some(d) = observed.iter().find(|d| &d.key == key) else {
            reasons.push("measurement_window_not_bracketed".to_owned());
            continue;
        };
        let Some(label) = d.label() else {
            reasons.push("gpu_uuid_changed".to_owned());
            continue;
        };
        let Some(seq) = bracketing_sequence(&d.times, start, end) else {
            reasons.push("measurement_window_not_bracketed".to_owned());
            continue;
        };
        let gap = largest_gap(&seq);
        gaps.insert(label, json!(gap));
        if gap > MAX_SAMPLE_GAP_SECONDS {
            reasons.push("sample_gap_exceeded".to_owned());
        }
    }
    (gaps, reasons)
}

/// The per-expected-window audit rows, as the producer stores them.
fn validate_expected_windows(
    power_dir: &Path,
    result_root: &Path,
    expected_windows: &[WindowKey],
    expected_keys: &BTreeSet<DeviceKey>,
    observed: &[ObservedDevice],
    artifact_errors: &mut Vec<Value>,
) -> (Vec<Value>, BTreeMap<WindowKey, ParsedWindow>) {
    let (parsed, duplicates) = scan_windows(
        &power_dir.join(WINDOWS_DIRNAME),
        result_root,
        artifact_errors,
    );
    let expected_set: BTreeSet<&WindowKey> = expected_windows.iter().collect();
    for (key, w) in &parsed {
        if !expected_set.contains(key) {
            artifact_errors.push(artifact_error(
                &w.relative_path,
                "measurement_window_unexpected",
            ));
        }
    }
    let mut validations = Vec::new();
    for key in expected_windows {
        let Some(w) = parsed.get(key) else {
            let reason = if duplicates.contains(key) {
                "measurement_window_duplicate"
            } else {
                "measurement_window_missing"
            };
            validations.push(json!({
                "benchmark_type": key.0,
                "concurrency": key.1,
                "window_file": null,
                "power_coverage_valid": false,
                "reason_codes": [reason],
                "per_device_max_sample_gap_seconds": {},
            }));
            continue;
        };
        let mut reasons = if w.status == WINDOW_STATUS_COMPLETED {
            check_window_result(w, result_root)
        } else {
            vec!["measurement_window_incomplete".to_owned()]
        };
        let mut gaps = Map::new();
        if reasons.is_empty() {
            let (g, coverage) =
                check_coverage(w.start, w.end.unwrap_or_default(), expected_keys, observed);
            if coverage.is_empty() {
                gaps = g;
            }
            reasons.extend(coverage);
        }
        validations.push(json!({
            "benchmark_type": key.0,
            "concurrency": key.1,
            "window_file": w.relative_path,
            "power_coverage_valid": reasons.is_empty(),
            "reason_codes": dedupe(reasons),
            "per_device_max_sample_gap_seconds": gaps,
        }));
    }
    (validations, parsed)
}

/// The manifest's stored evidence against what was recomputed from disk.
fn check_stored_evidence(
    m: &Map<String, Value>,
    expected_devices: &[ExpectedDevice],
    expected_windows: &[WindowKey],
    rows: &[SampleRow],
    observed: &[ObservedDevice],
    validations: &[Value],
    artifact_errors: &[Value],
) -> Vec<String> {
    let mut failures = Vec::new();
    let stored_rows = m.get("sample_row_count");
    if !py_eq_opt(stored_rows, &json!(rows.len())) {
        failures.push(format!(
            "sample_row_count is {}, disk has {} rows",
            repr(stored_rows),
            rows.len()
        ));
    }
    if let Some(max_seq) = rows.iter().map(|r| r.scrape_seq).max() {
        let least = max_seq + 1;
        let stored = m.get("scrape_count");
        if integer(stored).is_none_or(|s| s < least) {
            failures.push(format!(
                "scrape_count is {}, disk needs at least {least}",
                repr(stored)
            ));
        }
    }
    if observed.is_empty() {
        failures.push("observed_devices is empty".to_owned());
    }
    let derived = Value::Array(observed.iter().map(ObservedDevice::to_json).collect());
    if !py_eq_opt(m.get("observed_devices"), &derived) {
        failures.push(
            "observed_devices does not match the devices derived from samples.csv".to_owned(),
        );
    }
    if !py_eq_opt(
        m.get("window_validations"),
        &Value::Array(validations.to_vec()),
    ) {
        failures.push("window_validations does not match the recomputed window audit".to_owned());
    }
    if !py_eq_opt(
        m.get("artifact_errors"),
        &Value::Array(artifact_errors.to_vec()),
    ) {
        failures.push("artifact_errors does not match the recomputed artifact scan".to_owned());
    }
    let device_keys: BTreeSet<&DeviceKey> = expected_devices.iter().map(|d| &d.key).collect();
    if device_keys.len() != expected_devices.len() {
        failures.push("expected_devices contains duplicate keys".to_owned());
    }
    let window_keys: BTreeSet<&WindowKey> = expected_windows.iter().collect();
    if window_keys.len() != expected_windows.len() {
        failures.push("expected_windows contains duplicate keys".to_owned());
    }
    failures
}

// ---------------------------------------------------------------------------
// The verdict.
// ---------------------------------------------------------------------------

/// Everything the sidecar needs to explain the verdict.
#[derive(Default)]
struct Audit {
    power_valid: bool,
    reasons: Vec<String>,
    failures: Vec<String>,
    stored_publication_valid: Option<bool>,
    recomputed_publication_valid: Option<bool>,
    producer_git_commit: Option<String>,
    expected_producer_git_commit: Option<String>,
    exporter_image_sha256: Option<String>,
    window: Option<Value>,
    per_gpu_energy_j: Vec<(String, f64)>,
    per_gpu_role: Vec<(String, String)>,
    per_gpu_max_sample_gap_s: Vec<(String, f64)>,
    observed_gpu_count: usize,
    expected_gpu_count: usize,
    metrics: Vec<(&'static str, f64)>,
}

impl Audit {
    fn add(&mut self, reason: &str, detail: Option<String>) {
        push_once(&mut self.reasons, reason);
        if let Some(d) = detail.filter(|d| !d.is_empty()) {
            self.failures.push(d);
        }
    }
}

/// The benchmark figures energy is normalised by (a fully valid window).
#[derive(Debug, Clone, Copy)]
pub struct Benchmark {
    pub start: f64,
    pub end: f64,
    pub completed: f64,
    pub total_input_tokens: f64,
    pub total_output_tokens: f64,
}

/// Paths and expectations of one multi-node power evaluation.
pub struct Inputs<'a> {
    /// The package directory (resolved) and how it is shown.
    pub power_dir: &'a Path,
    pub power_dir_shown: &'a str,
    /// Where window `result_path`s resolve (resolved) and how it is shown.
    pub logs_root: &'a Path,
    pub logs_root_shown: &'a str,
    /// The processed (workspace) result: its content and file name.
    pub processed: &'a Map<String, Value>,
    pub bench_result_name: &'a str,
    pub prefill_gpus: i64,
    pub decode_gpus: i64,
    pub expected_producer_sha: Option<&'a str>,
}

/// What the package holds once its manifest parsed: the devices and
/// windows it promises, the samples it carries, the devices seen in them,
/// the role of each device and the windows as parsed.
struct Package {
    expected_devices: Vec<ExpectedDevice>,
    rows: Vec<SampleRow>,
    observed: Vec<ObservedDevice>,
    roles: BTreeMap<DeviceKey, String>,
    parsed_windows: BTreeMap<WindowKey, ParsedWindow>,
}

/// The gates of a multi-node power package, one after the other in the
/// contract's order; the first that cannot go on returns the audit as it
/// stands. Only a package every gate passed is integrated.
fn validate_and_integrate(inp: &Inputs<'_>, benchmark: Option<Benchmark>) -> Audit {
    let mut audit = Audit {
        expected_producer_git_commit: inp.expected_producer_sha.map(str::to_owned),
        ..Audit::default()
    };
    let Some(manifest) = read_manifest(&mut audit, inp) else {
        return audit;
    };
    record_producer(&mut audit, &manifest, inp);
    let Some(package) = recompute_validity(&mut audit, &manifest, inp) else {
        return audit;
    };
    check_stored_verdict(&mut audit);
    check_roles(&mut audit, inp, &package);
    record_devices(&mut audit, &package);

    // Exactly one completed window must belong to this result.
    let window = select_window(&mut audit, &package.parsed_windows, inp, benchmark);
    let (Some(window), Some(bench)) = (window, benchmark) else {
        return audit;
    };
    if !audit.reasons.is_empty() {
        return audit;
    }
    integrate(&mut audit, inp, &package, window, bench);
    audit
}

/// The package directory and its manifest, as an object.
fn read_manifest(audit: &mut Audit, inp: &Inputs<'_>) -> Option<Map<String, Value>> {
    if !inp.power_dir.is_dir() {
        audit.add(
            "power_artifacts_missing",
            Some(format!("power dir missing: {}", inp.power_dir_shown)),
        );
        return None;
    }
    let manifest_path = inp.power_dir.join(MANIFEST_FILENAME);
    if !manifest_path.is_file() {
        audit.add(
            "manifest_missing",
            Some(format!(
                "manifest missing: {}",
                python_path_join(inp.power_dir_shown, MANIFEST_FILENAME)
            )),
        );
        return None;
    }
    match sweep_model::fsio::read_bytes(&manifest_path, sweep_model::fsio::MAX_RESULT_JSON_BYTES)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()))
    {
        Ok(Value::Object(m)) => Some(m),
        Ok(_) => {
            audit.add(
                "manifest_malformed",
                Some("manifest is not an object".to_owned()),
            );
            None
        }
        Err(e) => {
            audit.add(
                "manifest_malformed",
                Some(format!("manifest unreadable: {e}")),
            );
            None
        }
    }
}

/// The manifest's own verdict and producer, and the producer pin: numbers
/// from an unknown producer are never published.
fn record_producer(audit: &mut Audit, manifest: &Map<String, Value>, inp: &Inputs<'_>) {
    audit.stored_publication_valid = manifest.get("publication_valid").and_then(Value::as_bool);
    audit.producer_git_commit = manifest
        .get("producer_git_commit")
        .and_then(Value::as_str)
        .map(str::to_owned);
    audit.exporter_image_sha256 = manifest
        .get("dcgm_exporter")
        .and_then(|e| e.get("container_image_sha256"))
        .and_then(Value::as_str)
        .map(str::to_owned);

    match inp.expected_producer_sha.filter(|s| !s.is_empty()) {
        None => audit.add(
            "producer_pin_missing",
            Some("no expected producer SHA configured".to_owned()),
        ),
        Some(want) if audit.producer_git_commit.as_deref() != Some(want) => {
            let have = repr(
                audit
                    .producer_git_commit
                    .as_ref()
                    .map(|s| Value::String(s.clone()))
                    .as_ref(),
            );
            audit.add(
                "producer_commit_mismatch",
                Some(format!(
                    "producer_git_commit {have} != expected {}",
                    python_repr_str(want)
                )),
            );
        }
        Some(_) => {}
    }
}

/// Recomputes the package's validity from its bytes (wire contract,
/// devices, windows, stored evidence); `None` when the manifest's devices
/// or windows cannot be parsed.
fn recompute_validity(
    audit: &mut Audit,
    manifest: &Map<String, Value>,
    inp: &Inputs<'_>,
) -> Option<Package> {
    let mut recompute = check_wire_contract(manifest);
    let (expected_devices, expected_windows) = parse_manifest_plan(audit, manifest)?;
    let (rows, sample_reasons) = read_samples(&inp.power_dir.join(SAMPLES_FILENAME));
    recompute.extend(
        sample_reasons
            .iter()
            .map(|r| format!("{r} in {SAMPLES_FILENAME}")),
    );
    let observed = derive_observed_devices(&rows);
    let (device_reasons, roles) = validate_devices(&expected_devices, &observed);
    recompute.extend(
        device_reasons
            .iter()
            .map(|r| format!("{r} (device identity/topology)")),
    );
    let expected_keys: BTreeSet<DeviceKey> =
        expected_devices.iter().map(|d| d.key.clone()).collect();
    let mut artifact_errors = Vec::new();
    let (validations, parsed_windows) = validate_expected_windows(
        inp.power_dir,
        inp.logs_root,
        &expected_windows,
        &expected_keys,
        &observed,
        &mut artifact_errors,
    );
    if expected_windows.is_empty() {
        recompute.push("no expected measurement window".to_owned());
    }
    recompute.extend(window_failures(&validations, &artifact_errors));
    recompute.extend(check_stored_evidence(
        manifest,
        &expected_devices,
        &expected_windows,
        &rows,
        &observed,
        &validations,
        &artifact_errors,
    ));
    audit.recomputed_publication_valid = Some(recompute.is_empty());
    let recompute_invalid = !recompute.is_empty();
    audit.failures.extend(recompute);
    if recompute_invalid {
        push_once(&mut audit.reasons, "package_recompute_invalid");
    }
    Some(Package {
        expected_devices,
        rows,
        observed,
        roles,
        parsed_windows,
    })
}

/// The manifest's expected devices and windows; `None` after recording
/// `manifest_malformed` (and an invalid recomputation) when either cannot
/// be parsed.
fn parse_manifest_plan(
    audit: &mut Audit,
    manifest: &Map<String, Value>,
) -> Option<(Vec<ExpectedDevice>, Vec<WindowKey>)> {
    let parsed = parse_expected_devices(manifest)
        .and_then(|d| parse_expected_windows(manifest).map(|w| (d, w)));
    match parsed {
        Ok(p) => Some(p),
        Err(exc) => {
            audit.add(
                "manifest_malformed",
                Some(format!("manifest malformed: {}", exc.repr())),
            );
            audit.recomputed_publication_valid = Some(false);
            None
        }
    }
}

/// One failure line per reason code of each window validation
/// (`<code> (window <type>/<concurrency>)`) and of each artifact error
/// (`<code> (<path>)`), in that order.
fn window_failures(validations: &[Value], artifact_errors: &[Value]) -> Vec<String> {
    let mut failures = Vec::new();
    for v in validations {
        let window = format!(
            "{}/{}",
            v["benchmark_type"].as_str().unwrap_or_default(),
            v["concurrency"]
        );
        for r in v["reason_codes"].as_array().into_iter().flatten() {
            failures.push(format!(
                "{} (window {window})",
                r.as_str().unwrap_or_default()
            ));
        }
    }
    for e in artifact_errors {
        for r in e["reason_codes"].as_array().into_iter().flatten() {
            failures.push(format!(
                "{} ({})",
                r.as_str().unwrap_or_default(),
                e["path"].as_str().unwrap_or_default()
            ));
        }
    }
    failures
}

/// The stored verdict must agree with the recomputation, and be true.
fn check_stored_verdict(audit: &mut Audit) {
    let (stored, recomputed) = (
        audit.stored_publication_valid,
        audit.recomputed_publication_valid,
    );
    let show = |b: Option<bool>| match b {
        None => "None",
        Some(true) => "True",
        Some(false) => "False",
    };
    if stored != recomputed {
        audit.add(
            "producer_verdict_mismatch",
            Some(format!(
                "stored publication_valid={}, recomputed={}",
                show(stored),
                show(recomputed)
            )),
        );
    } else if stored != Some(true) {
        audit.add(
            "package_recompute_invalid",
            Some("stored and recomputed both invalid".to_owned()),
        );
    }
}

/// Role topology against the workflow's own GPU counts.
fn check_roles(audit: &mut Audit, inp: &Inputs<'_>, package: &Package) {
    let mut expected_roles = Vec::new();
    if inp.prefill_gpus > 0 {
        expected_roles.push(("prefill", inp.prefill_gpus));
    }
    if inp.decode_gpus > 0 {
        expected_roles.push(("decode", inp.decode_gpus));
    }
    if expected_roles.is_empty() {
        audit.add(
            "topology_env_mismatch",
            Some("PREFILL_GPUS/DECODE_GPUS are both zero".to_owned()),
        );
    } else if !package.roles.is_empty() {
        for f in check_role_topology(&package.expected_devices, &package.roles, &expected_roles) {
            audit.add("topology_env_mismatch", Some(f));
        }
    }
}

/// A device's label: the producer's hostname/uuid key when it was observed
/// (role, energy and gap maps share it), else hostname/index.
fn device_label(observed: &[ObservedDevice], key: &DeviceKey) -> String {
    observed
        .iter()
        .find(|d| &d.key == key)
        .and_then(ObservedDevice::label)
        .unwrap_or_else(|| format!("{}/{}", key.0, key.1))
}

/// GPU counts and the role of each device.
fn record_devices(audit: &mut Audit, package: &Package) {
    audit.expected_gpu_count = package.expected_devices.len();
    audit.observed_gpu_count = package.observed.len();
    audit.per_gpu_role = package
        .roles
        .iter()
        .map(|(k, role)| (device_label(&package.observed, k), role.clone()))
        .collect();
}

/// Per-GPU trapezoid clipped to the formal window, roles summed, and the
/// figures derived from them; a non-finite figure makes the verdict
/// invalid instead of being published.
fn integrate(
    audit: &mut Audit,
    inp: &Inputs<'_>,
    package: &Package,
    window: &ParsedWindow,
    bench: Benchmark,
) {
    let (start, end) = (window.start, window.end.unwrap_or_default());
    let role_energy = integrate_devices(audit, package, start, end);
    let duration = end - start;
    let total: f64 = audit.per_gpu_energy_j.iter().map(|(_, e)| e).sum();
    let devices = package.expected_devices.len() as f64;
    let tokens = bench.total_input_tokens + bench.total_output_tokens;
    let mut metrics = vec![
        ("avg_power_w", total / duration / devices),
        ("avg_total_gpu_power_w", total / duration),
        ("total_gpu_energy_j", total),
        ("joules_per_successful_query", total / bench.completed),
        ("joules_per_input_token", total / bench.total_input_tokens),
        ("joules_per_output_token", total / bench.total_output_tokens),
        ("joules_per_total_token", total / tokens),
    ];
    metrics.extend(role_metrics(inp, role_energy, duration, bench));
    // Absurd but finite samples can overflow during integration: publish an
    // invalid verdict, never an infinite figure.
    let mut non_finite: Vec<&str> = metrics
        .iter()
        .filter(|(_, v)| !v.is_finite())
        .map(|(k, _)| *k)
        .collect();
    if !non_finite.is_empty() {
        non_finite.sort_unstable();
        audit.add(
            "non_finite_power_metric",
            Some(format!("non-finite: {}", non_finite.join(", "))),
        );
        return;
    }
    audit.metrics = metrics;
    audit.power_valid = true;
}

/// Integrates each expected device over `[start, end]`, recording its
/// energy and largest sample gap under its label; returns the energy
/// summed per role (prefill, decode).
fn integrate_devices(audit: &mut Audit, package: &Package, start: f64, end: f64) -> [f64; 2] {
    let Package {
        expected_devices,
        rows,
        observed,
        roles,
        ..
    } = package;
    let mut role_energy = [0.0_f64; 2]; // prefill, decode
    for d in expected_devices {
        let mut samples: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.hostname == d.key.0 && r.gpu_index == d.key.1)
            .map(|r| (r.timestamp_unix, r.power_w))
            .collect();
        samples.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let label = device_label(observed, &d.key);
        let energy = integrate_device(&samples, start, end);
        audit.per_gpu_energy_j.push((label.clone(), energy));
        match roles.get(&d.key).map(String::as_str) {
            Some("prefill") => role_energy[0] += energy,
            Some("decode") => role_energy[1] += energy,
            _ => {}
        }
        let times = observed
            .iter()
            .find(|o| o.key == d.key)
            .map(|o| o.times.as_slice())
            .unwrap_or_default();
        let gap = bracketing_sequence(times, start, end).map_or(0.0, |s| largest_gap(&s));
        audit.per_gpu_max_sample_gap_s.push((label, gap));
    }
    role_energy
}

/// The per-role figures, for each role the workflow gives GPUs (prefill,
/// then decode).
fn role_metrics(
    inp: &Inputs<'_>,
    role_energy: [f64; 2],
    duration: f64,
    bench: Benchmark,
) -> Vec<(&'static str, f64)> {
    let mut metrics = Vec::new();
    if inp.prefill_gpus > 0 {
        metrics.extend([
            ("prefill_gpu_energy_j", role_energy[0]),
            (
                "prefill_avg_power_w",
                role_energy[0] / duration / inp.prefill_gpus as f64,
            ),
            (
                "prefill_joules_per_input_token",
                role_energy[0] / bench.total_input_tokens,
            ),
        ]);
    }
    if inp.decode_gpus > 0 {
        metrics.extend([
            ("decode_gpu_energy_j", role_energy[1]),
            (
                "decode_avg_power_w",
                role_energy[1] / duration / inp.decode_gpus as f64,
            ),
            (
                "decode_joules_per_output_token",
                role_energy[1] / bench.total_output_tokens,
            ),
        ]);
    }
    metrics
}

/// Binds the processed result to its completed window by content, not name.
fn select_window<'w>(
    audit: &mut Audit,
    windows: &'w BTreeMap<WindowKey, ParsedWindow>,
    inp: &Inputs<'_>,
    benchmark: Option<Benchmark>,
) -> Option<&'w ParsedWindow> {
    let concurrency = inp.processed.get("max_concurrency");
    let matches: Vec<&ParsedWindow> = windows
        .values()
        .filter(|w| {
            w.status == WINDOW_STATUS_COMPLETED && py_eq_opt(concurrency, &w.concurrency_json)
        })
        .collect();
    if matches.len() != 1 {
        audit.add(
            "window_for_result_missing",
            Some(format!(
                "found {} completed windows for concurrency {}",
                matches.len(),
                repr(concurrency)
            )),
        );
        return None;
    }
    let w = matches[0];
    let shown = python_path_join(inp.logs_root_shown, &python_path(&w.result_path));
    let original = match read_json(&inp.logs_root.join(&w.result_path)) {
        Some(v) => v,
        None => {
            audit.add(
                "measurement_window_result_missing",
                Some(format!("original result unreadable: {shown}")),
            );
            return None;
        }
    };
    // The reference compares SHA-256 digests of canonical JSON (sorted
    // keys); equal canonical texts are exactly equal values with int and
    // float told apart, which serde_json's `==` is.
    if original != Value::Object(inp.processed.clone()) {
        let name = inp
            .bench_result_name
            .rsplit('/')
            .next()
            .unwrap_or(inp.bench_result_name);
        audit.add(
            "result_content_mismatch",
            Some(format!(
                "workspace copy {name} differs from original {}",
                w.result_path
            )),
        );
        return None;
    }
    if let Some(b) = benchmark
        && (b.start != w.start || Some(b.end) != w.end)
    {
        audit.add(
            "measurement_window_result_mismatch",
            Some("benchmark window fields do not match the selected window file".to_owned()),
        );
        return None;
    }
    audit.window = Some(json!({
        "window_file": w.relative_path,
        "result_path": w.result_path,
        "benchmark_type": w.benchmark_type,
        "concurrency": w.concurrency_json,
        "start_time_unix": w.start,
        "end_time_unix": w.end,
        "duration": w.duration,
    }));
    Some(w)
}

/// The verdict of one multi-node evaluation.
pub struct Verdict {
    pub power_valid: bool,
    pub reasons: Vec<String>,
    /// Rounded figures for the aggregate row (3 digits for `_w`/`_j`, else 6).
    pub agg_metrics: Vec<(&'static str, f64)>,
    /// The `power_validation_<name>.json` payload, in the reference's layout.
    pub sidecar: Map<String, Value>,
    /// The summary line for a valid verdict (without `-> <agg>`).
    pub summary: Option<String>,
}

/// Validates the package and integrates it. `benchmark` is the window of
/// the raw result when fully valid; `benchmark_reasons` its problems
/// (appended to the reasons, as the reference does); `window_payload`,
/// `telemetry_source`, `bench_result` and `integration_method` are written
/// into the sidecar as given.
#[must_use]
pub fn evaluate(
    inp: &Inputs<'_>,
    benchmark: Option<Benchmark>,
    benchmark_reasons: &[String],
    window_payload: Option<Value>,
    telemetry_source: &str,
    bench_result: &str,
    integration_method: &str,
) -> Verdict {
    let mut audit = validate_and_integrate(inp, benchmark);
    for r in benchmark_reasons {
        audit.add(r, None);
    }
    if benchmark.is_none() || !audit.reasons.is_empty() {
        audit.power_valid = false;
        audit.metrics.clear();
    }
    let agg_metrics = rounded_metrics(&audit);
    let summary = summary_line(&audit);
    let sidecar = sidecar(
        &audit,
        window_payload,
        telemetry_source,
        bench_result,
        integration_method,
    );
    Verdict {
        power_valid: audit.power_valid,
        reasons: audit.reasons,
        agg_metrics,
        sidecar,
        summary,
    }
}

/// The figures for the aggregate row: 3 digits for `_w`/`_j`, else 6.
fn rounded_metrics(audit: &Audit) -> Vec<(&'static str, f64)> {
    audit
        .metrics
        .iter()
        .map(|(k, v)| {
            let digits = if k.ends_with("_w") || k.ends_with("_j") {
                3
            } else {
                6
            };
            (*k, py_round(*v, digits))
        })
        .collect()
}

/// The reference's summary line of a valid verdict.
fn summary_line(audit: &Audit) -> Option<String> {
    let metric = |k: &str| {
        audit
            .metrics
            .iter()
            .find(|(m, _)| *m == k)
            .map_or(0.0, |(_, v)| *v)
    };
    audit.power_valid.then(|| {
        format!(
            "[aggregate_power_multinode] avg_power_w={:.2} total_gpu_energy_j={:.2} prefill_gpu_energy_j={:.2} decode_gpu_energy_j={:.2} (n={})",
            metric("avg_power_w"),
            metric("total_gpu_energy_j"),
            metric("prefill_gpu_energy_j"),
            metric("decode_gpu_energy_j"),
            audit.expected_gpu_count
        )
    })
}

/// Per-GPU figures as an object in their order, a non-finite one as null.
fn ordered_figures(pairs: &[(String, f64)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    if v.is_finite() { json!(v) } else { Value::Null },
                )
            })
            .collect(),
    )
}

/// The `power_validation_<name>.json` payload, in the reference's layout.
fn sidecar(
    audit: &Audit,
    window_payload: Option<Value>,
    telemetry_source: &str,
    bench_result: &str,
    integration_method: &str,
) -> Map<String, Value> {
    let sidecar = json!({
        "schema_version": 1,
        "power_valid": audit.power_valid,
        "reasons": audit.reasons,
        "failures": audit.failures,
        "telemetry_source": telemetry_source,
        "benchmark_result": bench_result,
        "benchmark_window": window_payload,
        "selected_window": audit.window,
        "integration_method": integration_method,
        "producer": {
            "producer_git_commit": audit.producer_git_commit,
            "expected_producer_git_commit": audit.expected_producer_git_commit,
            "exporter_image_sha256": audit.exporter_image_sha256,
            "stored_publication_valid": audit.stored_publication_valid,
            "recomputed_publication_valid": audit.recomputed_publication_valid,
        },
        "expected_gpu_count": audit.expected_gpu_count,
        "observed_gpu_count": audit.observed_gpu_count,
        "per_gpu_role": Value::Object(
            audit.per_gpu_role.iter().map(|(k, r)| (k.clone(), json!(r))).collect()
        ),
        "per_gpu_max_sample_gap_s": ordered_figures(&audit.per_gpu_max_sample_gap_s),
        "per_gpu_energy_j": ordered_figures(&audit.per_gpu_energy_j),
        "metrics": Value::Object(
            audit.metrics.iter()
                .filter(|(_, v)| v.is_finite())
                .map(|(k, v)| ((*k).to_owned(), json!(py_round(*v, 6))))
                .collect()
        ),
    });
    match sidecar {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_equality_and_repr() {
        assert!(py_eq(&json!(1), &json!(1.0)));
        assert!(py_eq(&json!(true), &json!(1)));
        assert!(!py_eq(&json!("1"), &json!(1)));
        assert!(py_eq(
            &json!({"a": [1, 2.0], "b": null}),
            &json!({"b": null, "a": [1.0, 2]})
        ));
        assert!(!py_eq(&json!([1, 2]), &json!([2, 1])));
        assert_eq!(repr(None), "None");
        assert_eq!(repr(Some(&json!("it's"))), "\"it's\"");
        assert_eq!(repr(Some(&json!("a\nb"))), "'a\\nb'");
        assert_eq!(
            repr(Some(&json!([1, 2.5, true, {"k": "v"}]))),
            "[1, 2.5, True, {'k': 'v'}]"
        );
        assert_eq!(repr(Some(&json!(1e-5))), "1e-05");
        assert_eq!(PyExc::Key("hostname".into()).repr(), "KeyError('hostname')");
        assert_eq!(
            subscript(&json!(3), "x").map(|_| ()).map_err(|e| e.repr()),
            Err("TypeError(\"'int' object is not subscriptable\")".to_owned())
        );
        assert_eq!(
            get(&json!([1]), "x").map(|_| ()).map_err(|e| e.repr()),
            Err("AttributeError(\"'list' object has no attribute 'get'\")".to_owned())
        );
    }

    #[test]
    fn window_result_paths_stay_relative_and_named_like_the_window() {
        for ok in ["r.json", "a/b.json", "./a//b.json"] {
            assert!(is_safe_relative_subpath(ok), "{ok}");
        }
        for bad in [
            "",
            "/abs.json",
            "~/x.json",
            "../x.json",
            "a/../b.json",
            ".",
            "./",
        ] {
            assert!(!is_safe_relative_subpath(bad), "{bad}");
        }
        assert_eq!(stem("dir/result_c16.json"), "result_c16");
        assert_eq!(stem(".hidden"), ".hidden");
        assert_eq!(stem("name."), "name.");
        assert_eq!(stem("a.tar.gz"), "a.tar");
        let tmp = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(tmp.path().join("LOGS/sub")).expect("mkdir");
        assert!(stays_below(&tmp.path().join("LOGS"), "sub/x.json"));
        assert!(stays_below(&tmp.path().join("LOGS"), "missing/x.json"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/", tmp.path().join("LOGS/out")).expect("link");
            assert!(!stays_below(&tmp.path().join("LOGS"), "out/etc/passwd"));
        }
    }

    #[test]
    fn sample_rows_are_strict() {
        let row = |s: &str| -> Vec<String> { s.split(',').map(str::to_owned).collect() };
        assert!(parse_sample_row(&row("1,10.5,0,h,0,u,300")).is_some());
        assert!(
            parse_sample_row(&row(" 1 ,1e1,+3,h,0,u,0")).is_some(),
            "Python int()/float()"
        );
        for bad in [
            "2,10,0,h,0,u,300",
            "1,10,0,,0,u,300",
            "1,10,0,h,0,,300",
            "1,inf,0,h,0,u,300",
            "1,10,0,h,0,u,-1",
            "1,10,-1,h,0,u,300",
            "1,10,0.5,h,0,u,300",
            "1,10,0,h,0,u",
        ] {
            assert!(parse_sample_row(&row(bad)).is_none(), "{bad}");
        }
    }

    #[test]
    fn bracketing_and_gaps() {
        let times = [1.0, 2.0, 3.0, 7.0, 8.0];
        assert_eq!(
            bracketing_sequence(&times, 2.5, 7.5),
            Some(vec![2.0, 3.0, 7.0, 8.0])
        );
        assert_eq!(bracketing_sequence(&times, 0.5, 7.5), None);
        assert_eq!(bracketing_sequence(&times, 2.0, 9.0), None);
        assert_eq!(largest_gap(&[2.0, 3.0, 7.0, 8.0]), 4.0);
        assert_eq!(largest_gap(&[2.0]), 0.0);
    }
}
