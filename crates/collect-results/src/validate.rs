//! `collect-results validate-scores`: checks lm-eval scores in the job
//! workspace against per-model and per-task thresholds, and checks that a
//! batched eval produced every requested concurrency (spec `results.md` §6).
//!
//! Output lines go to stdout (`PASS`, informational) or stderr (`FAIL`,
//! `WARN`) exactly as the reference splits them; the function returns them
//! instead of printing so tests can assert on both streams.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::evals::conc_suffix;
use sweep_model::fsio::{MAX_RESULT_JSON_BYTES as RESULT_MAX, read_bytes, read_text};
use sweep_model::python::{python_float_repr, python_str};
use sweep_model::yaml::MAX_YAML_BYTES;

/// Options of `validate-scores` (the reference's flags).
#[derive(Debug, Clone)]
pub struct ValidateOptions {
    pub min_score: f64,
    pub thresholds: Option<PathBuf>,
    pub meta_env: String,
    pub model_prefix: Option<String>,
    pub metric_prefix: String,
    pub results_glob: String,
    pub expected_concs: Option<String>,
    /// `MODEL_PREFIX` from the environment (last-resort prefix).
    pub env_model_prefix: Option<String>,
}

/// Which stream a line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Out,
    Err,
}

/// Everything `validate-scores` says, and how it failed (`None`: passed).
#[derive(Debug, Clone, Default)]
pub struct ValidateOutcome {
    pub lines: Vec<(Stream, String)>,
    /// `Rejected` a score below its threshold or nothing checked; `Failed`
    /// a thresholds file that does not parse.
    pub failure: Option<sweep_cli::Kind>,
    pub checked: usize,
    pub failed: bool,
}

impl ValidateOutcome {
    /// The exit status this outcome stands for (0, 1 or 2).
    #[must_use]
    pub fn code(&self) -> u8 {
        self.failure.map_or(sweep_cli::OK, sweep_cli::Kind::code)
    }

    fn out(&mut self, s: String) {
        self.lines.push((Stream::Out, s));
    }
    fn err(&mut self, s: String) {
        self.lines.push((Stream::Err, s));
    }
}

/// Threshold tables: `default.<task>` and `models.<prefix>.<task>`.
#[derive(Debug, Clone, Default)]
struct Thresholds {
    default: Map<String, Value>,
    models: Map<String, Value>,
}

/// Why the thresholds file was not used.
enum ThresholdsError {
    /// Absent or unreadable: the reference warns and uses the defaults.
    Unreadable(String),
    /// Present but not a thresholds mapping (not UTF-8, not YAML, a key
    /// twice, not a mapping): an error (`file:line:col: …`), never a
    /// silent fallback to the defaults.
    Invalid(String),
}

fn load_thresholds(path: &Path, shown: &str) -> Result<Thresholds, ThresholdsError> {
    let text = read_text(path, MAX_YAML_BYTES as u64).map_err(|e| match e.kind() {
        // Present but not text: judging by the defaults would hide it.
        std::io::ErrorKind::InvalidData => {
            ThresholdsError::Invalid(format!("{shown}: not UTF-8 text: {e}"))
        }
        std::io::ErrorKind::NotFound => {
            ThresholdsError::Unreadable(format!("[Errno 2] No such file or directory: '{shown}'"))
        }
        // Refused by the bounded reader (a FIFO, a file over the limit):
        // an error, never a silent fall back to the defaults.
        std::io::ErrorKind::InvalidInput | std::io::ErrorKind::FileTooLarge => {
            ThresholdsError::Invalid(format!("{shown}: {e}"))
        }
        _ => ThresholdsError::Unreadable(format!("{e}: '{shown}'")),
    })?;
    let doc = sweep_model::yaml::parse_str(&text).map_err(|e| {
        ThresholdsError::Invalid(if e.line > 0 {
            format!(
                "{shown}:{}:{}: invalid YAML: {}",
                e.line, e.column, e.message
            )
        } else {
            format!("{shown}: invalid YAML: {}", e.message)
        })
    })?;
    if let Some(d) = doc.duplicate_keys().first() {
        return Err(ThresholdsError::Invalid(format!(
            "{shown}:{}: duplicate key '{}' (first at line {}): each key may appear once in a mapping",
            d.line,
            sweep_model::yaml::dotted(&d.path),
            d.first_line
        )));
    }
    let Value::Object(cfg) = doc.into_value() else {
        return Err(ThresholdsError::Invalid(format!(
            "{shown}:1:1: thresholds config must be a mapping"
        )));
    };
    let table = |v: Option<&Value>| v.and_then(Value::as_object).cloned().unwrap_or_default();
    if !cfg.contains_key("default") && !cfg.contains_key("models") {
        // Legacy flat format: the whole mapping is the per-task default.
        return Ok(Thresholds {
            default: cfg,
            models: Map::new(),
        });
    }
    Ok(Thresholds {
        default: table(cfg.get("default")),
        models: table(cfg.get("models")),
    })
}

/// Why `meta_env.json` cannot be read; the text mimics Python's exception
/// text.
#[derive(Debug, thiserror::Error)]
enum MetaError {
    #[error("[Errno 2] No such file or directory: '{0}'")]
    NotFound(String),
    #[error("{source}: '{path}'")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Reads `meta_env.json`.
fn read_meta(path: &str, cwd: &Path) -> Result<Value, MetaError> {
    let bytes = read_bytes(&cwd.join(path), RESULT_MAX).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => MetaError::NotFound(path.to_string()),
        _ => MetaError::Io {
            path: path.to_string(),
            source,
        },
    })?;
    Ok(sweep_model::json_strict::parse_value(&bytes)?)
}

fn detect_prefix(opts: &ValidateOptions, cwd: &Path) -> Option<String> {
    if let Some(p) = opts.model_prefix.as_ref().filter(|p| !p.is_empty()) {
        return Some(p.clone());
    }
    if let Ok(Value::Object(meta)) = read_meta(&opts.meta_env, cwd) {
        match meta.get("infmax_model_prefix") {
            Some(Value::String(s)) if !s.is_empty() && s != "unknown" => return Some(s.clone()),
            Some(v @ (Value::Number(_) | Value::Bool(true))) => return Some(python_str(v)),
            _ => {}
        }
    }
    opts.env_model_prefix
        .clone()
        .filter(|p| !p.is_empty() && p != "unknown")
}

/// `fnmatch.fnmatchcase`: `*`, `?`, `[seq]`, `[!seq]`.
pub fn fnmatch(pattern: &str, name: &str) -> bool {
    fn rec(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|i| rec(&p[1..], &n[i..])),
            Some('?') => !n.is_empty() && rec(&p[1..], &n[1..]),
            Some('[') => {
                let close = p.iter().skip(2).position(|&c| c == ']').map(|i| i + 2);
                match (close, n.first()) {
                    (Some(end), Some(&c)) => {
                        let (neg, set) = match p[1] {
                            '!' => (true, &p[2..end]),
                            _ => (false, &p[1..end]),
                        };
                        let mut hit = false;
                        let mut i = 0;
                        while i < set.len() {
                            if i + 2 < set.len() && set[i + 1] == '-' {
                                hit |= set[i] <= c && c <= set[i + 2];
                                i += 3;
                            } else {
                                hit |= set[i] == c;
                                i += 1;
                            }
                        }
                        hit != neg && rec(&p[end + 1..], &n[1..])
                    }
                    (None, Some(&c)) => c == '[' && rec(&p[1..], &n[1..]),
                    (_, None) => false,
                }
            }
            Some(&c) => n.first() == Some(&c) && rec(&p[1..], &n[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    rec(&p, &n)
}

fn has_magic(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// `sorted(glob.glob(pattern))` relative to `cwd`: wildcards in any path
/// component, hidden names matched only by a component starting with `.`,
/// literal components kept when they exist. Results are spelled as the
/// pattern is (relative stays relative).
pub fn glob_sorted(pattern: &str, cwd: &Path) -> Vec<String> {
    if pattern.is_empty() {
        return Vec::new();
    }
    let absolute = pattern.starts_with('/');
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    // (display prefix, filesystem path) pairs matched so far.
    let start = if absolute {
        ("/".to_owned(), PathBuf::from("/"))
    } else {
        (String::new(), cwd.to_path_buf())
    };
    let mut current = vec![start];
    for (idx, part) in parts.iter().enumerate() {
        let last = idx + 1 == parts.len();
        let mut next = Vec::new();
        for (shown, fs) in &current {
            let join = |name: &str| {
                let shown = if shown.is_empty() || shown.ends_with('/') {
                    format!("{shown}{name}")
                } else {
                    format!("{shown}/{name}")
                };
                (shown, fs.join(name))
            };
            if has_magic(part) {
                let Ok(entries) = std::fs::read_dir(fs) else {
                    continue;
                };
                for e in entries.filter_map(Result::ok) {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if (!name.starts_with('.') || part.starts_with('.')) && fnmatch(part, &name) {
                        let (sh, p) = join(&name);
                        if last || p.is_dir() {
                            next.push((sh, p));
                        }
                    }
                }
            } else {
                let (sh, p) = join(part);
                let keep = if last {
                    p.symlink_metadata().is_ok()
                } else {
                    p.is_dir()
                };
                if keep {
                    next.push((sh, p));
                }
            }
        }
        current = next;
    }
    let mut out: Vec<String> = current.into_iter().map(|(s, _)| s).collect();
    out.sort();
    out
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A Python int-like JSON value (ints and booleans, not floats).
fn py_int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) if !n.is_f64() => n.as_i64(),
        _ => None,
    }
}

fn join_sorted(set: &BTreeSet<i64>) -> String {
    set.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The batch-manifest checks (§6 step 5). Returns the error messages.
fn batch_manifest_errors(
    meta_path: &str,
    cwd: &Path,
    result_files: &[String],
    expected: Option<&[i64]>,
) -> Vec<String> {
    let meta = match read_meta(meta_path, cwd) {
        Ok(Value::Object(m)) => m,
        Ok(_) => {
            return unusable_meta_errors(meta_path, "not a JSON object", result_files, expected);
        }
        Err(e) => return unusable_meta_errors(meta_path, &e.to_string(), result_files, expected),
    };
    if let (Some(exp), false) = (expected, meta.contains_key("eval_concs")) {
        return single_conc_errors(&meta, exp, result_files);
    }
    if !meta.contains_key("eval_concs") {
        return Vec::new();
    }
    let concs = match batch_concs(&meta) {
        Ok(concs) => concs,
        Err(e) => return vec![e],
    };
    let expected_set: BTreeSet<i64> = expected
        .unwrap_or(&concs.expected)
        .iter()
        .copied()
        .collect();
    let mut errors = concurrency_errors(&concs, expected, &expected_set);
    errors.extend(result_file_errors(result_files, &expected_set));
    errors
}

/// `meta_env.json` is missing or not an object (`why`): an error only when
/// the workflow asked for concurrencies or a result file names one.
fn unusable_meta_errors(
    meta_path: &str,
    why: &str,
    result_files: &[String],
    expected: Option<&[i64]>,
) -> Vec<String> {
    if expected.is_some()
        || result_files
            .iter()
            .any(|f| conc_suffix(file_name(f)).is_some())
    {
        return vec![format!(
            "batched eval result files exist but {meta_path} is unavailable or invalid: {why}"
        )];
    }
    Vec::new()
}

/// An unbatched eval for a workflow that asked for concurrencies: one
/// concurrency, matching the metadata's, and one result file.
fn single_conc_errors(
    meta: &Map<String, Value>,
    exp: &[i64],
    result_files: &[String],
) -> Vec<String> {
    if exp.len() > 1 {
        return vec![
            "workflow requested multiple concurrencies but batched eval metadata is missing"
                .to_owned(),
        ];
    }
    let mut errors = Vec::new();
    let conc_matches = match meta.get("conc") {
        Some(Value::Number(n)) => n.as_f64() == Some(exp[0] as f64),
        Some(Value::Bool(b)) => i64::from(*b) == exp[0],
        _ => false,
    };
    if !conc_matches {
        errors.push("eval metadata concurrency does not match workflow request".to_owned());
    }
    if result_files.len() != 1 {
        errors.push("eval must produce exactly one result file".to_owned());
    }
    errors
}

/// The concurrency lists of a batched eval's metadata.
struct BatchConcs {
    expected: Vec<i64>,
    completed: Vec<i64>,
    failed: Vec<i64>,
}

/// Reads `eval_concs`, `completed_eval_concs` and `failed_eval_concs`:
/// lists of positive integers, or the one error that says they are not.
fn batch_concs(meta: &Map<String, Value>) -> Result<BatchConcs, String> {
    let lists: Vec<Option<&Vec<Value>>> =
        ["eval_concs", "completed_eval_concs", "failed_eval_concs"]
            .iter()
            .map(|k| meta.get(*k).and_then(Value::as_array))
            .collect();
    let (Some(meta_expected), Some(completed), Some(failed)) = (lists[0], lists[1], lists[2])
    else {
        return Err("batched eval metadata must contain list-valued concurrency fields".to_owned());
    };
    let ints = |l: &Vec<Value>| -> Option<Vec<i64>> {
        l.iter().map(|v| py_int(v).filter(|&n| n > 0)).collect()
    };
    let (Some(expected), Some(completed), Some(failed)) =
        (ints(meta_expected), ints(completed), ints(failed))
    else {
        return Err("batched eval metadata contains an invalid concurrency".to_owned());
    };
    Ok(BatchConcs {
        expected,
        completed,
        failed,
    })
}

/// The metadata's lists against each other and against the workflow's
/// request (`expected`; `expected_set` is the request, or the metadata's
/// list without one).
fn concurrency_errors(
    concs: &BatchConcs,
    expected: Option<&[i64]>,
    expected_set: &BTreeSet<i64>,
) -> Vec<String> {
    let mut errors = Vec::new();
    let meta_set: BTreeSet<i64> = concs.expected.iter().copied().collect();
    let completed_set: BTreeSet<i64> = concs.completed.iter().copied().collect();
    let failed_set: BTreeSet<i64> = concs.failed.iter().copied().collect();
    if meta_set.len() != concs.expected.len() {
        errors.push("batched eval metadata contains duplicate expected concurrencies".to_owned());
    }
    if completed_set.len() != concs.completed.len() {
        errors.push("batched eval metadata contains duplicate completed concurrencies".to_owned());
    }
    if expected.is_some() && meta_set != *expected_set {
        errors.push("batched eval metadata does not match workflow concurrencies".to_owned());
    }
    if !failed_set.is_empty() {
        errors.push(format!(
            "batched eval failed for concurrency: {}",
            join_sorted(&failed_set)
        ));
    }
    if completed_set != *expected_set {
        let missing: BTreeSet<i64> = expected_set.difference(&completed_set).copied().collect();
        let unexpected: BTreeSet<i64> = completed_set.difference(expected_set).copied().collect();
        if !missing.is_empty() {
            errors.push(format!(
                "batched eval is missing completed concurrency: {}",
                join_sorted(&missing)
            ));
        }
        if !unexpected.is_empty() {
            errors.push(format!(
                "batched eval completed unexpected concurrency: {}",
                join_sorted(&unexpected)
            ));
        }
    }
    errors
}

/// The result files' concurrency suffixes against `expected_set`.
fn result_file_errors(result_files: &[String], expected_set: &BTreeSet<i64>) -> Vec<String> {
    let mut errors = Vec::new();
    let mut actual = BTreeSet::new();
    for f in result_files {
        match conc_suffix(file_name(f)) {
            Some(n) => {
                actual.insert(n);
            }
            None => errors.push(format!(
                "batched eval result lacks a concurrency suffix: {f}"
            )),
        }
    }
    let missing: BTreeSet<i64> = expected_set.difference(&actual).copied().collect();
    let unexpected: BTreeSet<i64> = actual.difference(expected_set).copied().collect();
    if !missing.is_empty() {
        errors.push(format!(
            "batched eval is missing result files for concurrency: {}",
            join_sorted(&missing)
        ));
    }
    if !unexpected.is_empty() {
        errors.push(format!(
            "batched eval has unexpected result files for concurrency: {}",
            join_sorted(&unexpected)
        ));
    }
    errors
}

/// A threshold value as a number, and its Python `str()`.
fn threshold_number(v: &Value) -> Option<(f64, String)> {
    match v {
        Value::Number(n) if n.is_f64() => n.as_f64().map(|f| (f, python_float_repr(f))),
        Value::Number(n) => n.as_f64().map(|f| (f, n.to_string())),
        Value::Bool(b) => Some((f64::from(u8::from(*b)), python_str(v))),
        _ => None,
    }
}

/// Runs the validation in `cwd`.
pub fn run(opts: &ValidateOptions, cwd: &Path) -> ValidateOutcome {
    let mut o = ValidateOutcome::default();

    let expected = match expected_concs(opts.expected_concs.as_deref()) {
        Ok(expected) => expected,
        Err(e) => {
            o.err(format!("FAIL: {e}"));
            o.failure = Some(sweep_cli::Kind::Rejected);
            o.failed = true;
            return o;
        }
    };
    let thresholds = match thresholds(opts, cwd, &mut o) {
        Ok(thresholds) => thresholds,
        Err(e) => {
            // Could not do the job: checking against the defaults
            // instead would hide a broken thresholds file.
            o.err(format!("ERROR: {e}"));
            o.failure = Some(sweep_cli::Kind::Failed);
            o.failed = true;
            return o;
        }
    };

    let prefix = detect_prefix(opts, cwd);
    match &prefix {
        Some(p) if thresholds.models.contains_key(p) => {
            o.out(format!("Model prefix: {p} (per-model thresholds apply)"));
        }
        Some(p) => o.out(format!(
            "Model prefix: {p} (no per-model override; using global default)"
        )),
        None => o.out("Model prefix: <unknown> (using global default thresholds)".to_owned()),
    }

    let result_files = glob_sorted(&opts.results_glob, cwd);
    check_batch_manifest(
        &mut o,
        &opts.meta_env,
        cwd,
        &result_files,
        expected.as_deref(),
    );
    for f in &result_files {
        check_result_file(&mut o, opts, cwd, f, prefix.as_deref(), &thresholds);
    }
    if o.checked == 0 {
        o.err(format!(
            "WARN: no metrics matched prefix '{}'",
            opts.metric_prefix
        ));
    }
    if o.failed || o.checked == 0 {
        o.failure = Some(sweep_cli::Kind::Rejected);
    }
    o
}

/// `--expected-concs` as a list, if given: unique positive integers.
fn expected_concs(raw: Option<&str>) -> Result<Option<Vec<i64>>, String> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let parsed: Option<Vec<i64>> = raw
        .split_whitespace()
        .map(sweep_model::python::python_int)
        .collect();
    let parsed = parsed.unwrap_or_default();
    let unique: BTreeSet<i64> = parsed.iter().copied().collect();
    if parsed.is_empty() || parsed.iter().any(|&v| v <= 0) || unique.len() != parsed.len() {
        return Err("expected concurrencies must be unique positive integers".to_owned());
    }
    Ok(Some(parsed))
}

/// The thresholds to check against: the file's if one is given and can be
/// read, else the defaults (with a warning in `o`); an invalid file is the
/// error.
fn thresholds(
    opts: &ValidateOptions,
    cwd: &Path,
    o: &mut ValidateOutcome,
) -> Result<Thresholds, String> {
    let mut thresholds = Thresholds::default();
    if let Some(path) = &opts.thresholds {
        match load_thresholds(&cwd.join(path), &path.display().to_string()) {
            Ok(t) => {
                thresholds = t;
                o.out(format!("Loaded thresholds from {}", path.display()));
            }
            Err(ThresholdsError::Unreadable(e)) => o.err(format!(
                "WARN: could not load thresholds from {}: {e}",
                path.display()
            )),
            Err(ThresholdsError::Invalid(e)) => return Err(e),
        }
    }
    Ok(thresholds)
}

/// Reports the batch-manifest checks: each error, or that a batched eval
/// produced every requested concurrency.
fn check_batch_manifest(
    o: &mut ValidateOutcome,
    meta_path: &str,
    cwd: &Path,
    result_files: &[String],
    expected: Option<&[i64]>,
) {
    let manifest_errors = batch_manifest_errors(meta_path, cwd, result_files, expected);
    for e in &manifest_errors {
        o.err(format!("FAIL: {e}"));
        o.failed = true;
    }
    if manifest_errors.is_empty() {
        match read_meta(meta_path, cwd) {
            Ok(Value::Object(m)) if m.contains_key("eval_concs") => {
                o.out("PASS: batched eval produced every requested concurrency".to_owned());
            }
            Ok(_) => {}
            Err(e) => o.err(format!(
                "WARN: could not inspect eval metadata for batched concurrency status: {e}"
            )),
        }
    }
}

/// Checks the scores of one result file, task by task.
fn check_result_file(
    o: &mut ValidateOutcome,
    opts: &ValidateOptions,
    cwd: &Path,
    f: &str,
    prefix: Option<&str>,
    thresholds: &Thresholds,
) {
    let label = conc_suffix(file_name(f)).map_or_else(String::new, |n| format!("[conc={n}] "));
    // A match reached through a link out of the working directory is
    // not read (the scores would come from elsewhere on the runner).
    if let Err(e) = sweep_model::tree::resolves_inside(cwd, &cwd.join(f)) {
        o.err(format!("FAIL: {label}{e}"));
        o.failed = true;
        return;
    }
    let data = match read_bytes(&cwd.join(f), RESULT_MAX)
        .map_err(|e| e.to_string())
        .and_then(|b| {
            sweep_model::json_strict::parse_value(&b).map_err(|e| format!("invalid JSON: {e}"))
        }) {
        Ok(d) => d,
        Err(e) => {
            o.err(format!("FAIL: {f}: cannot read result file: {e}"));
            o.failed = true;
            return;
        }
    };
    let results = match data.get("results") {
        None => return,
        Some(Value::Object(r)) => r,
        Some(_) => {
            o.err(format!("FAIL: {f}: 'results' must be a JSON object"));
            o.failed = true;
            return;
        }
    };
    for (task, metrics) in results {
        check_task(o, opts, &label, task, metrics, prefix, thresholds);
    }
}

/// Checks one task's metrics against its threshold: the model's, else the
/// default table's, else `--min-score`.
fn check_task(
    o: &mut ValidateOutcome,
    opts: &ValidateOptions,
    label: &str,
    task: &str,
    metrics: &Value,
    prefix: Option<&str>,
    thresholds: &Thresholds,
) {
    let (threshold, source) = match prefix
        .and_then(|p| thresholds.models.get(p))
        .and_then(Value::as_object)
        .and_then(|m| m.get(task))
    {
        Some(v) => (Some(v.clone()), format!("models.{}", prefix.unwrap_or(""))),
        None => match thresholds.default.get(task) {
            Some(v) => (Some(v.clone()), "default".to_owned()),
            None => (None, "min-score".to_owned()),
        },
    };
    let (min, min_text) = match threshold.as_ref() {
        None => (opts.min_score, python_float_repr(opts.min_score)),
        Some(v) => match threshold_number(v) {
            Some(t) => t,
            None => {
                o.err(format!(
                    "FAIL: {label}{task}: threshold from {source} must be a number, found {v}"
                ));
                o.failed = true;
                return;
            }
        },
    };
    let Some(metrics) = metrics.as_object() else {
        return;
    };
    for (name, val) in metrics {
        if !name.starts_with(&opts.metric_prefix) || name.contains("stderr") {
            continue;
        }
        let x = match val {
            Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
            Value::Bool(b) => f64::from(u8::from(*b)),
            _ => continue,
        };
        o.checked += 1;
        if x < min {
            o.err(format!(
                "FAIL: {label}{task} {name} = {x:.4} (< {min_text} from {source})"
            ));
            o.failed = true;
        } else {
            o.out(format!(
                "PASS: {label}{task} {name} = {x:.4} (>= {min_text} from {source})"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ValidateOptions {
        ValidateOptions {
            min_score: 0.85,
            thresholds: None,
            meta_env: "meta_env.json".into(),
            model_prefix: None,
            metric_prefix: "exact_match,".into(),
            results_glob: "results*.json".into(),
            expected_concs: None,
            env_model_prefix: None,
        }
    }

    fn text(o: &ValidateOutcome) -> String {
        o.lines
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn glob_wildcards_in_any_component() {
        let d = tempfile::tempdir().expect("tmp");
        for rel in [
            "a/x/results_1.json",
            "a/y/results_2.json",
            "a/.h/results_3.json",
            "results_0.json",
            "a/y/other.json",
        ] {
            let p = d.path().join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "{}").expect("w");
        }
        assert_eq!(
            glob_sorted("a/*/results*.json", d.path()),
            ["a/x/results_1.json", "a/y/results_2.json"]
        );
        assert_eq!(glob_sorted("results*.json", d.path()), ["results_0.json"]);
        assert_eq!(glob_sorted("a/y/other.json", d.path()), ["a/y/other.json"]);
        assert!(glob_sorted("a/z/*.json", d.path()).is_empty());
    }

    #[test]
    fn fnmatch_basics() {
        assert!(fnmatch("results*.json", "results_2026.json"));
        assert!(fnmatch("results*.json", "results.json"));
        assert!(!fnmatch("results*.json", "xresults.json"));
        assert!(fnmatch("r?[0-9].json", "ra5.json"));
        assert!(!fnmatch("r[!a]", "ra"));
    }

    /// Issue #16 point 8: a thresholds file that does not parse is exit 2
    /// naming file:line, not a silent fallback to the default thresholds.
    #[test]
    fn unparseable_thresholds_file_is_an_error_with_its_line() {
        let d = tempfile::tempdir().expect("tmp");
        std::fs::write(
            d.path().join("t.yaml"),
            "default:\n  gsm8k: 0.90\n  bad: [1,\n",
        )
        .expect("w");
        std::fs::write(d.path().join("list.yaml"), "- 0.5\n").expect("w");
        std::fs::write(
            d.path().join("results_a.json"),
            r#"{"results":{"gsm8k":{"exact_match,strict-match":0.93,"exact_match_stderr,strict-match":0.01}}}"#,
        )
        .expect("w");
        let mut op = opts();
        op.thresholds = Some("t.yaml".into());
        let o = run(&op, d.path());
        assert_eq!(o.code(), 2, "{}", text(&o));
        assert!(text(&o).contains("ERROR: t.yaml:"), "{}", text(&o));
        assert!(!text(&o).contains("PASS"), "nothing checked: {}", text(&o));
        op.thresholds = Some("list.yaml".into());
        let o = run(&op, d.path());
        assert_eq!(o.code(), 2);
        assert!(
            text(&o).contains("ERROR: list.yaml:1:1: thresholds config must be a mapping"),
            "{}",
            text(&o)
        );
        // A missing file keeps the reference's warning and defaults.
        op.thresholds = Some("missing.yaml".into());
        let o = run(&op, d.path());
        assert_ne!(o.code(), 2, "{}", text(&o));
        assert!(text(&o).contains("WARN: could not load thresholds from missing.yaml"));
    }

    /// Issue #34 item 3a/3b: a thresholds file that is not UTF-8 fell back
    /// to the defaults with exit 0; it and one with a key twice are now an
    /// error naming the file and the cause (exit 2), nothing checked.
    #[test]
    fn non_utf8_or_duplicate_key_thresholds_are_refused() {
        let d = tempfile::tempdir().expect("tmp");
        std::fs::write(
            d.path().join("latin1.yaml"),
            b"default:\n  gsm8k: 0.9 # caf\xe9\n",
        )
        .expect("w");
        std::fs::write(
            d.path().join("dup.yaml"),
            "default:\n  gsm8k: 0.10\n  gsm8k: 0.99\n",
        )
        .expect("w");
        std::fs::write(
            d.path().join("dup.json"),
            r#"{"default": {"gsm8k": 0.1, "gsm8k": 0.99}}"#,
        )
        .expect("w");
        std::fs::write(
            d.path().join("results_a.json"),
            r#"{"results":{"gsm8k":{"exact_match,strict-match":0.93,"exact_match_stderr,strict-match":0.01}}}"#,
        )
        .expect("w");
        let mut op = opts();
        for (file, needle) in [
            ("latin1.yaml", "ERROR: latin1.yaml: not UTF-8 text"),
            (
                "dup.yaml",
                "ERROR: dup.yaml:3: duplicate key 'default.gsm8k' (first at line 2)",
            ),
            (
                "dup.json",
                "ERROR: dup.json:1: duplicate key 'default.gsm8k' (first at line 1)",
            ),
        ] {
            op.thresholds = Some(file.into());
            let o = run(&op, d.path());
            assert_eq!(o.code(), 2, "{file}: {}", text(&o));
            assert!(text(&o).contains(needle), "{file}: {}", text(&o));
            assert!(!text(&o).contains("PASS"), "nothing checked: {}", text(&o));
        }
    }

    /// Issue #34 item 3b: a result file with a key twice is a FAIL line
    /// naming the key, not judged by the last value.
    #[test]
    fn result_file_with_a_key_twice_fails() {
        let d = tempfile::tempdir().expect("tmp");
        std::fs::write(
            d.path().join("results_a.json"),
            r#"{"results":{"gsm8k":{"exact_match,strict-match":0.10,"exact_match,strict-match":0.93}}}"#,
        )
        .expect("w");
        let o = run(&opts(), d.path());
        assert_eq!(o.code(), 1, "{}", text(&o));
        assert!(
            text(&o).contains(r#"FAIL: results_a.json: cannot read result file: invalid JSON: duplicate key "exact_match,strict-match" at $.results.gsm8k["exact_match,strict-match"]"#),
            "{}",
            text(&o)
        );
    }

    #[test]
    fn model_threshold_beats_default_and_flat_file_is_default() {
        let d = tempfile::tempdir().expect("tmp");
        std::fs::write(
            d.path().join("t.yaml"),
            "default:\n  gsm8k: 0.90\nmodels:\n  glm5:\n    gsm8k: 0.94\n",
        )
        .expect("w");
        std::fs::write(d.path().join("flat.yaml"), "gsm8k: 0.5\n").expect("w");
        std::fs::write(
            d.path().join("results_a.json"),
            r#"{"results":{"gsm8k":{"exact_match,strict-match":0.93,"exact_match_stderr,strict-match":0.01,"acc":0.1}}}"#,
        )
        .expect("w");
        let mut op = opts();
        op.thresholds = Some("t.yaml".into());
        op.model_prefix = Some("glm5".into());
        let o = run(&op, d.path());
        assert_eq!(o.code(), 1);
        assert!(
            text(&o).contains(
                "FAIL: gsm8k exact_match,strict-match = 0.9300 (< 0.94 from models.glm5)"
            )
        );
        assert_eq!(o.checked, 1);
        op.thresholds = Some("flat.yaml".into());
        let o = run(&op, d.path());
        assert_eq!(o.code(), 0, "{}", text(&o));
        assert!(text(&o).contains("(>= 0.5 from default)"));
    }

    #[test]
    fn batched_manifest_reports_failed_and_missing() {
        let d = tempfile::tempdir().expect("tmp");
        std::fs::write(
            d.path().join("meta_env.json"),
            r#"{"eval_concs":[4,16],"completed_eval_concs":[4],"failed_eval_concs":[16]}"#,
        )
        .expect("w");
        std::fs::write(
            d.path().join("results_conc4.json"),
            r#"{"results":{"gsm8k":{"exact_match,x":0.99}}}"#,
        )
        .expect("w");
        let o = run(&opts(), d.path());
        let t = text(&o);
        assert!(
            t.contains("FAIL: batched eval failed for concurrency: 16"),
            "{t}"
        );
        assert!(
            t.contains("batched eval is missing result files for concurrency: 16"),
            "{t}"
        );
        assert!(
            t.contains("PASS: [conc=4] gsm8k exact_match,x = 0.9900 (>= 0.85 from min-score)"),
            "{t}"
        );
        assert_eq!(o.code(), 1);
    }

    #[test]
    fn invalid_expected_concs_fail_fast() {
        let d = tempfile::tempdir().expect("tmp");
        for bad in ["4 4", "", "0", "x"] {
            let mut op = opts();
            op.expected_concs = Some(bad.into());
            let o = run(&op, d.path());
            assert_eq!(o.code(), 1);
            assert!(text(&o).contains("unique positive integers"));
        }
    }
}
