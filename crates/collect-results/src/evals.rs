//! `collect-results evals <root> <exp_name> [sort_by]`: lm-eval result files
//! plus each job's `meta_env.json` become the rows of
//! `agg_eval_<exp_name>.json`, and a markdown summary (spec `results.md` §5).
//!
//! Discovery order is pinned (byte-wise names) and the newest-file choice
//! breaks modification-time ties by the greater file name, where the
//! reference leaves both to the filesystem.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Map, Value};
use sweep_model::results::EvalRow;
use sweep_model::tree::{TreeError, json_files_in};

use crate::table::{Cell, github_table};
use sweep_model::fsio::{MAX_RESULT_JSON_BYTES, ReadError, read_regular};
use sweep_model::python::{
    python_float_of_value, python_int_of_value, python_path, python_path_join,
};

/// Why `evals` could not write its output.
#[derive(Debug, thiserror::Error)]
pub enum EvalsError {
    /// Result files were found but none could be read: an empty output
    /// would hide that nothing was done.
    #[error(
        "no eval result could be read: {} file(s) are not valid JSON objects: {}",
        .files.len(),
        .files.join(", ")
    )]
    NothingReadable { files: Vec<String> },
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// A FIFO, device or directory in place of a file, or a file over the
    /// limit: refused by the bounded reader, never skipped as unparseable.
    #[error(transparent)]
    Refused(#[from] ReadError),
    #[error("cannot write {file}: {source}")]
    Write {
        file: String,
        #[source]
        source: std::io::Error,
    },
}

/// Either way the job could not be done (exit 2): there were results but
/// none readable, or the table could not be written.
impl sweep_cli::Classify for EvalsError {
    fn kind(&self) -> sweep_cli::Kind {
        sweep_cli::Kind::Failed
    }
}

/// Files looked at and left out, by reason (for the one-line summary).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SkipCounts {
    /// Not parseable as JSON (or not a JSON object).
    pub unparseable: usize,
    /// Their paths, for the warning that names them.
    pub unparseable_files: Vec<PathBuf>,
    /// JSON objects without `lm_eval_version` (not lm-eval results).
    pub not_lm_eval: usize,
    /// lm-eval results superseded by a newer file for the same set/conc.
    pub superseded: usize,
    /// Batched sets: files without a `_conc<N>` suffix or with N not completed.
    pub batch_filtered: usize,
}

/// Result of one `evals` run.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct EvalsReport {
    /// Eval sets (directories with `meta_env.json`) found.
    pub sets: usize,
    /// lm-eval result files that produced rows.
    pub files_used: usize,
    pub skipped: SkipCounts,
    pub rows: Vec<EvalRow>,
    pub output: PathBuf,
}

/// One candidate lm-eval result file.
struct Candidate {
    name: String,
    mtime: SystemTime,
    data: Map<String, Value>,
}

/// The JSON object in `path`; `None` when it cannot be read or parsed (as
/// the reference's `load_json`), but an error when the bounded reader
/// refuses it (a FIFO would block the reference; a file over the limit is
/// not an eval result).
fn load_object(path: &Path) -> Result<Option<Map<String, Value>>, EvalsError> {
    let bytes = match read_regular(path, MAX_RESULT_JSON_BYTES) {
        Ok(b) => b,
        Err(ReadError::Io { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    Ok(match sweep_model::json_strict::parse_value(&bytes) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    })
}

/// `_conc<N>.json` / `_conc<N>_<k>.json` at the end of a file name (the
/// leftmost `_conc` that makes the whole tail match, like a regex search).
pub fn conc_suffix(name: &str) -> Option<i64> {
    let stem = name.strip_suffix(".json")?;
    let mut from = 0;
    while let Some(pos) = stem[from..].find("_conc") {
        let start = from + pos;
        let rest = &stem[start + 5..];
        let (n, tail) = match rest.find('_') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if digits(n) && tail.is_none_or(digits) {
            return n.parse().ok();
        }
        from = start + 1;
    }
    None
}

/// Newest by modification time; ties go to the greater file name.
fn newer(a: &Candidate, b: &Candidate) -> bool {
    (a.mtime, &a.name) > (b.mtime, &b.name)
}

/// Eval-set directories under `root`: `root` itself, then its immediate
/// subdirectories in byte-wise order, each only if it holds `meta_env.json`.
///
/// # Errors
/// A subdirectory that is a link out of `root` (its files would be read
/// into the aggregate from elsewhere on the runner).
fn find_sets(root: &Path) -> Result<Vec<(PathBuf, Option<String>)>, TreeError> {
    let mut out = Vec::new();
    if root.join("meta_env.json").exists() {
        out.push((root.to_path_buf(), None));
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return Ok(out);
    };
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    names.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    for name in names {
        let p = root.join(&name);
        if p.is_dir() && p.join("meta_env.json").exists() {
            sweep_model::tree::resolves_inside(root, &p)?;
            out.push((p, Some(name.to_string_lossy().into_owned())));
        }
    }
    Ok(out)
}

/// lm-eval candidates of one set (immediate `*.json` except `meta_env.json`).
///
/// # Errors
/// The set's directory cannot be listed.
fn candidates(dir: &Path, skipped: &mut SkipCounts) -> Result<Vec<Candidate>, EvalsError> {
    let mut out = Vec::new();
    for path in json_files_in(dir)?.files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "meta_env.json" {
            continue;
        }
        match load_object(&path)? {
            None => {
                skipped.unparseable += 1;
                skipped.unparseable_files.push(path.clone());
            }
            Some(data) if !data.contains_key("lm_eval_version") => skipped.not_lm_eval += 1,
            Some(data) => {
                let mtime = std::fs::metadata(&path)
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                out.push(Candidate { name, mtime, data });
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Metrics extracted from one task of an lm-eval result (§5.2).
struct TaskMetrics {
    task: String,
    strict: Value,
    strict_se: Value,
    flex: Value,
    flex_se: Value,
    accuracy: Value,
    accuracy_se: Value,
    n_eff: Value,
    model: Value,
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

fn extract(data: &Map<String, Value>) -> Vec<TaskMetrics> {
    let empty = Map::new();
    let Some(results) = data.get("results").and_then(Value::as_object) else {
        return Vec::new();
    };
    let configs = data
        .get("configs")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut out = Vec::new();
    for (task, task_results) in results {
        let tr = task_results.as_object().unwrap_or(&empty);
        let cfg = configs
            .get(task)
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        out.push(task_metrics(data, task, tr, cfg));
    }
    out
}

/// One task's metrics from its results `tr` and its config `cfg`.
fn task_metrics(
    data: &Map<String, Value>,
    task: &str,
    tr: &Map<String, Value>,
    cfg: &Map<String, Value>,
) -> TaskMetrics {
    let mut m = TaskMetrics {
        task: task.to_owned(),
        strict: Value::Null,
        strict_se: Value::Null,
        flex: Value::Null,
        flex_se: Value::Null,
        accuracy: Value::Null,
        accuracy_se: Value::Null,
        n_eff: data
            .get("n-samples")
            .and_then(|n| n.get(task))
            .and_then(|t| t.get("effective"))
            .cloned()
            .unwrap_or(Value::Null),
        model: Value::Null,
    };
    fill_scores(&mut m, tr, cfg);
    let model_name = data.get("model_name").cloned().unwrap_or(Value::Null);
    m.model = if truthy(&model_name) {
        model_name
    } else {
        cfg.get("metadata")
            .and_then(|md| md.get("model"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    m
}

/// The task's scores: per filter of its `filter_list` (strict or flexible
/// match), else accuracy, else the strict score of its first metric.
fn fill_scores(m: &mut TaskMetrics, tr: &Map<String, Value>, cfg: &Map<String, Value>) {
    let base = cfg
        .get("metric_list")
        .and_then(Value::as_array)
        .and_then(|l| l.first())
        .and_then(|m| m.get("metric"))
        .and_then(Value::as_str)
        .unwrap_or("exact_match");
    let get = |k: &str| tr.get(k).cloned().unwrap_or(Value::Null);
    let filters = cfg
        .get("filter_list")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty());
    match filters {
        None => {
            if tr.contains_key("acc") {
                m.accuracy = get("acc");
                m.accuracy_se = get("acc_stderr");
            } else {
                m.strict = get(base);
                m.strict_se = get(&format!("{base}_stderr"));
            }
        }
        Some(list) => {
            for f in list {
                let Some(name) = f.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let pair = || {
                    (
                        get(&format!("{base},{name}")),
                        get(&format!("{base}_stderr,{name}")),
                    )
                };
                if name.contains("strict") || name.contains("resolved") {
                    (m.strict, m.strict_se) = pair();
                } else if name.contains("flex") || name.contains("extract") {
                    (m.flex, m.flex_se) = pair();
                }
            }
        }
    }
}

/// Python `str(x).lower()` of a metadata value.
fn lower_str(v: &Value) -> String {
    sweep_model::python::python_str(v).to_lowercase()
}

/// A metadata string field: strings as is, absent/null -> `default`, other
/// values as their Python `str()`.
fn meta_str(meta: &Map<String, Value>, key: &str, default: &str) -> String {
    match meta.get(key) {
        None | Some(Value::Null) => default.to_owned(),
        Some(v) => sweep_model::python::python_str(v),
    }
}

fn as_int(v: Option<&Value>, default: i64) -> i64 {
    v.and_then(python_int_of_value).unwrap_or(default)
}

/// Builds one row (§5.3).
fn build_row(
    meta: &Map<String, Value>,
    conc_override: Option<i64>,
    m: TaskMetrics,
    source: String,
) -> EvalRow {
    let is_multinode = match meta.get("is_multinode") {
        Some(Value::Bool(b)) => *b,
        None | Some(Value::Null) => false,
        Some(v) => sweep_model::python::python_str(v).to_lowercase() == "true",
    };
    let first = |a: &str, b: &str| meta.get(a).or_else(|| meta.get(b));
    let prefill_tp = first("prefill_tp", "tp").map_or(1, |v| python_int_of_value(v).unwrap_or(1));
    let prefill_ep = first("prefill_ep", "ep").map_or(1, |v| python_int_of_value(v).unwrap_or(1));
    let decode_tp = first("decode_tp", "tp").map_or(1, |v| python_int_of_value(v).unwrap_or(1));
    let decode_ep = first("decode_ep", "ep").map_or(1, |v| python_int_of_value(v).unwrap_or(1));
    let (dp_attention, prefill_dp_attention, decode_dp_attention) =
        dp_attention_fields(meta, is_multinode);
    let model = row_model(meta, &m.model);
    let (score, score_name, score_se) = headline_score(&m);
    EvalRow {
        is_multinode,
        model_prefix: meta_str(meta, "infmax_model_prefix", "unknown"),
        model,
        hw: meta_str(meta, "hw", "unknown").to_uppercase(),
        framework: meta_str(meta, "framework", "unknown").to_lowercase(),
        precision: meta_str(meta, "precision", "unknown").to_lowercase(),
        spec_decoding: meta_str(meta, "spec_decoding", "unknown"),
        isl: as_int(meta.get("isl"), 0),
        osl: as_int(meta.get("osl"), 0),
        tp: meta
            .get("tp")
            .map_or(prefill_tp, |v| python_int_of_value(v).unwrap_or(prefill_tp)),
        ep: meta
            .get("ep")
            .map_or(prefill_ep, |v| python_int_of_value(v).unwrap_or(prefill_ep)),
        prefill_tp,
        prefill_ep,
        prefill_num_workers: as_int(meta.get("prefill_num_workers"), 1),
        decode_tp,
        decode_ep,
        decode_num_workers: as_int(meta.get("decode_num_workers"), 1),
        conc: conc_override.unwrap_or_else(|| as_int(meta.get("conc"), 0)),
        dp_attention,
        prefill_dp_attention,
        decode_dp_attention,
        task: m.task,
        em_strict: m.strict,
        em_strict_se: m.strict_se,
        em_flexible: m.flex,
        em_flexible_se: m.flex_se,
        n_eff: m.n_eff,
        source,
        score,
        score_name,
        score_se,
    }
}

/// `(dp_attention, prefill_dp_attention, decode_dp_attention)`, lowercased:
/// each role falls back to `dp_attention` (default `none`); multi node
/// shows `prefill=…,decode=…` when the roles differ.
fn dp_attention_fields(meta: &Map<String, Value>, is_multinode: bool) -> (String, String, String) {
    let dp_default = Value::String("none".into());
    let dp = meta.get("dp_attention").unwrap_or(&dp_default);
    let role_dp = |k: &str| match meta.get(k) {
        None | Some(Value::Null) => dp.clone(),
        Some(v) => v.clone(),
    };
    let p_dp = role_dp("prefill_dp_attention");
    let d_dp = role_dp("decode_dp_attention");
    let dp_attention = if is_multinode {
        if p_dp == d_dp {
            lower_str(&p_dp)
        } else {
            format!("prefill={},decode={}", lower_str(&p_dp), lower_str(&d_dp)).to_lowercase()
        }
    } else {
        lower_str(dp)
    };
    (dp_attention, lower_str(&p_dp), lower_str(&d_dp))
}

/// The row's model: the result's own when truthy, else the metadata's,
/// else `unknown`.
fn row_model(meta: &Map<String, Value>, result_model: &Value) -> String {
    let model = if truthy(result_model) {
        result_model.clone()
    } else {
        meta.get("model")
            .cloned()
            .unwrap_or(Value::String("unknown".into()))
    };
    match model {
        Value::Null => "unknown".to_owned(),
        v => sweep_model::python::python_str(&v),
    }
}

/// `(score, score_name, score_se)`: the strict match when present, else
/// the accuracy, else none.
fn headline_score(m: &TaskMetrics) -> (Value, Option<String>, Value) {
    if !m.strict.is_null() {
        (
            m.strict.clone(),
            Some("em_strict".to_owned()),
            m.strict_se.clone(),
        )
    } else if !m.accuracy.is_null() {
        (
            m.accuracy.clone(),
            Some("accuracy".to_owned()),
            m.accuracy_se.clone(),
        )
    } else {
        (Value::Null, None, Value::Null)
    }
}

/// Collects every row under `root` (a path as given on the command line,
/// resolved against `cwd`).
///
/// # Errors
/// An eval-set directory cannot be listed.
pub fn collect(root_arg: &str, cwd: &Path) -> Result<EvalsReport, EvalsError> {
    let root_display = python_path(root_arg);
    let root = cwd.join(root_arg);
    let mut report = EvalsReport::default();
    for (dir, sub) in find_sets(&root)? {
        report.sets += 1;
        let set_display = match &sub {
            Some(s) => python_path_join(&root_display, s),
            None => root_display.clone(),
        };
        let meta = load_object(&dir.join("meta_env.json"))?.unwrap_or_default();
        let batch = meta.get("eval_concs").and_then(Value::as_array);
        let mut cands = candidates(&dir, &mut report.skipped)?;
        let selected: Vec<(Candidate, Option<i64>)> = match batch {
            None => {
                let mut best: Option<Candidate> = None;
                for c in cands.drain(..) {
                    match &best {
                        Some(b) if !newer(&c, b) => report.skipped.superseded += 1,
                        Some(_) => {
                            report.skipped.superseded += 1;
                            best = Some(c);
                        }
                        None => best = Some(c),
                    }
                }
                best.into_iter().map(|c| (c, None)).collect()
            }
            Some(concs) => {
                let allowed: Option<Vec<i64>> = match meta.get("completed_eval_concs") {
                    None => Some(
                        concs
                            .iter()
                            .map(|c| python_int_of_value(c).unwrap_or(-1))
                            .collect(),
                    ),
                    Some(Value::Array(done)) => Some(
                        done.iter()
                            .map(|c| python_int_of_value(c).unwrap_or(-1))
                            .collect(),
                    ),
                    Some(_) => None,
                };
                let mut by_conc: std::collections::BTreeMap<i64, Candidate> = Default::default();
                for c in cands.drain(..) {
                    let Some(n) = conc_suffix(&c.name) else {
                        report.skipped.batch_filtered += 1;
                        continue;
                    };
                    if allowed.as_ref().is_some_and(|a| !a.contains(&n)) {
                        report.skipped.batch_filtered += 1;
                        continue;
                    }
                    match by_conc.get(&n) {
                        Some(b) if !newer(&c, b) => report.skipped.superseded += 1,
                        _ => {
                            if by_conc.insert(n, c).is_some() {
                                report.skipped.superseded += 1;
                            }
                        }
                    }
                }
                by_conc.into_iter().map(|(n, c)| (c, Some(n))).collect()
            }
        };
        for (c, conc) in selected {
            report.files_used += 1;
            let source = python_path_join(&set_display, &c.name);
            for m in extract(&c.data) {
                report.rows.push(build_row(&meta, conc, m, source.clone()));
            }
        }
    }
    Ok(report)
}

/// Runs `evals`: collects rows and writes `out_dir/agg_eval_<exp_name>.json`.
pub fn run(
    root_arg: &str,
    exp_name: &str,
    cwd: &Path,
    out_dir: &Path,
) -> Result<EvalsReport, EvalsError> {
    let mut report = collect(root_arg, cwd)?;
    report.skipped.unparseable_files.sort();
    if report.rows.is_empty() && !report.skipped.unparseable_files.is_empty() {
        return Err(EvalsError::NothingReadable {
            files: report
                .skipped
                .unparseable_files
                .iter()
                .map(|p| p.strip_prefix(cwd).unwrap_or(p).display().to_string())
                .collect(),
        });
    }
    report.output = out_dir.join(format!("agg_eval_{exp_name}.json"));
    sweep_model::fsio::write_json_atomic(&report.output, &report.rows, true).map_err(|source| {
        EvalsError::Write {
            file: report.output.display().to_string(),
            source,
        }
    })?;
    Ok(report)
}

fn pct(v: &Value) -> String {
    python_float_of_value(v).map_or_else(|| "N/A".to_owned(), |x| format!("{:.2}%", x * 100.0))
}

fn se(v: &Value) -> String {
    python_float_of_value(v).map_or_else(String::new, |x| format!(" ±{:.2}%", x * 100.0))
}

fn n_eff_cell(v: &Value) -> Cell {
    if !truthy(v) {
        return Cell::Empty;
    }
    match v {
        Value::Number(n) if !n.is_f64() => n.as_i64().map_or(Cell::Str(n.to_string()), Cell::Int),
        Value::Number(n) => n.as_f64().map_or(Cell::Empty, Cell::Float),
        other => Cell::Str(sweep_model::python::python_str(other)),
    }
}

/// The markdown summary the reference prints (§5.4); `sort_by` = `hw`
/// drops the model prefix from the sort key.
pub fn render_markdown(rows: &[EvalRow], sort_by: &str) -> String {
    if rows.is_empty() {
        return "> No eval results found to summarize.\n".to_owned();
    }
    let by_hw = sort_by == "hw";
    let mut single: Vec<&EvalRow> = rows.iter().filter(|r| !r.is_multinode).collect();
    let mut multi: Vec<&EvalRow> = rows.iter().filter(|r| r.is_multinode).collect();
    sort_single_node(&mut single, by_hw);
    sort_multi_node(&mut multi, by_hw);
    let mut out = String::new();
    if !single.is_empty() {
        out.push_str("### Single-Node Eval Results\n\n");
        out.push_str(&single_node_table(&single));
        out.push('\n');
    }
    if !multi.is_empty() {
        if !single.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str("### Multi-Node Eval Results\n\n");
        out.push_str(&multi_node_table(&multi));
        out.push('\n');
    }
    out
}

/// The model prefix as the first sort key, or nothing when sorting by
/// hardware.
fn prefix_key(r: &EvalRow, by_hw: bool) -> String {
    if by_hw {
        String::new()
    } else {
        r.model_prefix.clone()
    }
}

fn sort_single_node(rows: &mut [&EvalRow], by_hw: bool) {
    rows.sort_by(|a, b| {
        let k = |r: &EvalRow| {
            (
                prefix_key(r, by_hw),
                r.hw.clone(),
                r.framework.clone(),
                r.precision.clone(),
                r.spec_decoding.clone(),
                r.isl,
                r.osl,
                r.tp,
                r.ep,
                r.conc,
            )
        };
        k(a).cmp(&k(b))
    });
}

fn sort_multi_node(rows: &mut [&EvalRow], by_hw: bool) {
    rows.sort_by(|a, b| {
        let k = |r: &EvalRow| {
            (
                prefix_key(r, by_hw),
                r.hw.clone(),
                r.framework.clone(),
                r.precision.clone(),
                r.spec_decoding.clone(),
                r.isl,
                r.osl,
                (r.prefill_tp, r.prefill_ep, r.prefill_num_workers),
                (r.decode_tp, r.decode_ep, r.decode_num_workers),
                r.conc,
            )
        };
        k(a).cmp(&k(b))
    });
}

/// The cells both tables end with: the scores, `N (eff)` and the model.
fn score_cells(r: &EvalRow) -> Vec<Cell> {
    vec![
        Cell::Str(format!("{}{}", pct(&r.score), se(&r.score_se))),
        Cell::Str(format!("{}{}", pct(&r.em_strict), se(&r.em_strict_se))),
        Cell::Str(format!("{}{}", pct(&r.em_flexible), se(&r.em_flexible_se))),
        n_eff_cell(&r.n_eff),
        Cell::Str(r.model.clone()),
    ]
}

/// The columns every eval table starts with: what was run.
const LEADING_HEADERS: [&str; 7] = [
    "Model Prefix",
    "Hardware",
    "Framework",
    "Precision",
    "Spec Decode",
    "ISL",
    "OSL",
];

/// The columns every eval table ends with ([`score_cells`]).
const SCORE_HEADERS: [&str; 5] = ["Score", "EM Strict", "EM Flexible", "N (eff)", "Model"];

fn text(x: &str) -> Cell {
    Cell::Str(x.to_owned())
}

fn leading_cells(r: &EvalRow) -> Vec<Cell> {
    vec![
        text(&r.model_prefix),
        text(&r.hw),
        text(&r.framework.to_uppercase()),
        text(&r.precision.to_uppercase()),
        text(&r.spec_decoding),
        Cell::Int(r.isl),
        Cell::Int(r.osl),
    ]
}

/// A table of `rows`: the leading columns, the `middle` columns a layout
/// adds (its headers, its cells of a row), then the scores.
fn eval_table(
    rows: &[&EvalRow],
    middle_headers: &[&str],
    middle: impl Fn(&EvalRow) -> Vec<Cell>,
) -> String {
    let headers: Vec<&str> = LEADING_HEADERS
        .iter()
        .chain(middle_headers)
        .chain(SCORE_HEADERS.iter())
        .copied()
        .collect();
    let body: Vec<Vec<Cell>> = rows
        .iter()
        .map(|r| {
            let mut row = leading_cells(r);
            row.extend(middle(r));
            row.extend(score_cells(r));
            row
        })
        .collect();
    github_table(&headers, &body)
}

fn single_node_table(rows: &[&EvalRow]) -> String {
    eval_table(rows, &["TP", "EP", "Conc", "DP Attention", "Task"], |r| {
        vec![
            Cell::Int(r.tp),
            Cell::Int(r.ep),
            Cell::Int(r.conc),
            text(&r.dp_attention),
            text(&r.task),
        ]
    })
}

fn multi_node_table(rows: &[&EvalRow]) -> String {
    let middle_headers = [
        "Prefill TP",
        "Prefill EP",
        "Prefill DP Attn",
        "Prefill Workers",
        "Decode TP",
        "Decode EP",
        "Decode DP Attn",
        "Decode Workers",
        "Conc",
        "Task",
    ];
    eval_table(rows, &middle_headers, |r| {
        vec![
            Cell::Int(r.prefill_tp),
            Cell::Int(r.prefill_ep),
            text(&r.prefill_dp_attention),
            Cell::Int(r.prefill_num_workers),
            Cell::Int(r.decode_tp),
            Cell::Int(r.decode_ep),
            text(&r.decode_dp_attention),
            Cell::Int(r.decode_num_workers),
            Cell::Int(r.conc),
            text(&r.task),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conc_suffix_like_the_reference_regex() {
        assert_eq!(conc_suffix("results_conc16.json"), Some(16));
        assert_eq!(conc_suffix("results_x.1_conc4_2.json"), Some(4));
        assert_eq!(conc_suffix("a_conc4_conc16.json"), Some(16));
        assert_eq!(conc_suffix("results_conc.json"), None);
        assert_eq!(conc_suffix("results_conc4_x.json"), None);
        assert_eq!(conc_suffix("results_conc4.jsonl"), None);
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn gpqa_flexible_only_filter_gives_null_score() {
        let data = obj(json!({
            "results": {"gpqa": {"exact_match,extract_abcd": 0.4, "exact_match_stderr,extract_abcd": 0.03}},
            "configs": {"gpqa": {"filter_list": [{"name": "extract_abcd"}], "metadata": {"model": "m"}}},
            "n-samples": {"gpqa": {"effective": 198}}
        }));
        let m = extract(&data).into_iter().next().expect("one task");
        let row = build_row(&Map::new(), None, m, "s".into());
        assert_eq!(row.em_flexible, json!(0.4));
        assert_eq!(row.score, Value::Null);
        assert_eq!(row.score_name, None);
        assert_eq!(row.model, "m");
        assert_eq!(row.hw, "UNKNOWN");
        assert_eq!(row.dp_attention, "none");
    }

    #[test]
    fn multinode_dp_attention_disagreement_and_fallbacks() {
        let meta = obj(
            json!({"is_multinode": "True", "tp": "8", "prefill_dp_attention": true,
                              "decode_dp_attention": "False", "prefill_tp": null, "isl": "1024"}),
        );
        let m = TaskMetrics {
            task: "t".into(),
            strict: json!(0.5),
            strict_se: json!("N/A"),
            flex: Value::Null,
            flex_se: Value::Null,
            accuracy: Value::Null,
            accuracy_se: Value::Null,
            n_eff: Value::Null,
            model: Value::Null,
        };
        let row = build_row(&meta, Some(4), m, "s".into());
        assert!(row.is_multinode);
        assert_eq!(row.dp_attention, "prefill=true,decode=false");
        assert_eq!(
            row.prefill_tp, 1,
            "explicit null prefill_tp falls to the default, not tp"
        );
        assert_eq!(row.decode_tp, 8);
        assert_eq!(row.tp, 8);
        assert_eq!(row.isl, 1024);
        assert_eq!(row.conc, 4);
        assert_eq!(row.score_se, json!("N/A"));
    }
}
