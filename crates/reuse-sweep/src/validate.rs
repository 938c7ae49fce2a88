//! `reuse-sweep validate-artifacts`: offline consistency checks of a
//! downloaded artifact directory of a reusable sweep (the reference's
//! `validate_reusable_sweep_artifacts.py`, spec: github.md §4).
//!
//! Step 1 collapses re-run eval duplicates in place (latest lm-eval result
//! per eval identity wins); step 2 collects every error: duplicate
//! fixed-sequence rows, agentic points vs aggregate vs raw dirs, raw eval
//! metadata vs the `eval_results_all` aggregate, a missing `run-stats`, and
//! "nothing to reuse", and (sweepkit's addition) every row that is not an
//! object or lacks a field the ingest needs, or has it with another JSON
//! type. Result files are streamed row by row (`Rows`).
//!
//! Identities are tuples of Python-like values ([`Py`]) so messages print
//! them as the reference does (`('single', 'h100', …)`) and sort by that
//! text. Deliberate difference: a raw eval dir without a readable
//! `meta_env.json` is reported by validation instead of crashing the
//! de-duplication step (the reference dies with a traceback there).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use sweep_model::json_type::json_type_name;
use sweep_model::python::{python_float_repr, python_int_of_value, python_repr_str};
use sweep_model::results::{BenchmarkRow, RowError};
use sweep_model::tree;

/// A Python value as the reference builds identities from JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Py {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Py>),
    Tuple(Vec<Py>),
    Dict(Vec<(String, Py)>),
}

impl Py {
    fn from_json(v: &Value) -> Py {
        match v {
            Value::Null => Py::None,
            Value::Bool(b) => Py::Bool(*b),
            Value::Number(n) => n
                .as_i64()
                .map(Py::Int)
                .unwrap_or_else(|| Py::Float(n.as_f64().unwrap_or(0.0))),
            Value::String(s) => Py::Str(s.clone()),
            Value::Array(a) => Py::List(a.iter().map(Py::from_json).collect()),
            Value::Object(o) => Py::Dict(
                o.iter()
                    .map(|(k, v)| (k.clone(), Py::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// `freeze_identity_value`: dicts become sorted tuples of pairs, lists tuples.
    fn frozen(v: &Value) -> Py {
        match v {
            Value::Object(o) => {
                let mut pairs: Vec<(&String, &Value)> = o.iter().collect();
                pairs.sort_by(|a, b| a.0.cmp(b.0));
                Py::Tuple(
                    pairs
                        .into_iter()
                        .map(|(k, v)| Py::Tuple(vec![Py::Str(k.clone()), Py::frozen(v)]))
                        .collect(),
                )
            }
            Value::Array(a) => Py::Tuple(a.iter().map(Py::frozen).collect()),
            other => Py::from_json(other),
        }
    }

    /// Python's `repr`.
    pub fn repr(&self) -> String {
        match self {
            Py::None => "None".into(),
            Py::Bool(true) => "True".into(),
            Py::Bool(false) => "False".into(),
            Py::Int(i) => i.to_string(),
            Py::Float(f) => python_float_repr(*f),
            Py::Str(s) => python_repr_str(s),
            Py::List(items) => format!("[{}]", join(items)),
            Py::Tuple(items) if items.len() == 1 => format!("({},)", items[0].repr()),
            Py::Tuple(items) => format!("({})", join(items)),
            Py::Dict(pairs) => format!(
                "{{{}}}",
                pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {}", python_repr_str(k), v.repr()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    fn truthy(&self) -> bool {
        match self {
            Py::None => false,
            Py::Bool(b) => *b,
            Py::Int(i) => *i != 0,
            Py::Float(f) => *f != 0.0,
            Py::Str(s) => !s.is_empty(),
            Py::List(v) | Py::Tuple(v) => !v.is_empty(),
            Py::Dict(d) => !d.is_empty(),
        }
    }

    /// Python's `str`.
    fn py_str(&self) -> String {
        match self {
            Py::Str(s) => s.clone(),
            other => other.repr(),
        }
    }
}

fn join(items: &[Py]) -> String {
    items.iter().map(Py::repr).collect::<Vec<_>>().join(", ")
}

/// An identity tuple; compared and hashed through its repr.
type Identity = Py;

fn key_of(id: &Identity) -> String {
    id.repr()
}

/// An identity as the checks keep it: its repr (the text messages print
/// and sort by). A repr is a fraction of the size of the [`Py`] tree, so
/// tens of thousands of rows stay small.
type Key = String;

type Row = Map<String, Value>;

/// `row.get(key, default)` as a Python value.
fn get(row: &Row, key: &str, default: Py) -> Py {
    row.get(key).map_or(default, Py::from_json)
}

/// `as_bool(row.get(key, False))`.
fn as_bool(row: &Row, key: &str) -> Py {
    Py::Bool(match row.get(key) {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => Py::from_json(v).py_str().to_lowercase() == "true",
    })
}

/// `as_int(row.get(key[, missing]), default)`.
fn as_int(row: &Row, key: &str, missing: Option<i64>, default: i64) -> Py {
    Py::Int(match row.get(key) {
        None => missing.unwrap_or(default),
        Some(v) => python_int_of_value(v).unwrap_or(default),
    })
}

fn multinode_fields(row: &Row, out: &mut Vec<Py>) {
    for side in ["prefill", "decode"] {
        let f = |k: &str| format!("{side}_{k}");
        out.push(as_int(row, &f("tp"), None, 0));
        out.push(as_int(row, &f("pp"), Some(1), 1));
        out.push(as_int(row, &f("dcp_size"), Some(1), 1));
        out.push(as_int(row, &f("pcp_size"), Some(1), 1));
        out.push(as_int(row, &f("ep"), Some(1), 0));
        out.push(as_bool(row, &f("dp_attention")));
        out.push(as_int(row, &f("num_workers"), Some(0), 0));
    }
}

fn single_fields(row: &Row, out: &mut Vec<Py>) {
    out.push(as_int(row, "tp", None, 0));
    out.push(as_int(row, "pp", Some(1), 1));
    out.push(as_int(row, "dcp_size", Some(1), 1));
    out.push(as_int(row, "pcp_size", Some(1), 1));
    out.push(as_int(row, "ep", Some(1), 0));
    out.push(as_bool(row, "dp_attention"));
}

fn is_multinode(row: &Row) -> bool {
    as_bool(row, "is_multinode") == Py::Bool(true)
}

/// Fixed-sequence identity of a result row.
pub fn benchmark_key(row: &Row) -> Identity {
    let multi = is_multinode(row);
    let mut k = vec![
        Py::Str(if multi { "multi" } else { "single" }.into()),
        get(row, "hw", Py::None),
        get(row, "infmax_model_prefix", Py::None),
        get(row, "framework", Py::None),
        get(row, "precision", Py::None),
        get(row, "spec_decoding", Py::Str("none".into())),
        as_bool(row, "disagg"),
        as_int(row, "isl", None, 0),
        as_int(row, "osl", None, 0),
    ];
    if multi {
        multinode_fields(row, &mut k);
    } else {
        single_fields(row, &mut k);
    }
    k.push(as_int(row, "conc", None, 0));
    Py::Tuple(k)
}

/// Agentic identity of a point row.
pub fn agentic_key(row: &Row) -> Identity {
    let has_kv = row.contains_key("kv_offloading");
    let offload = if has_kv {
        let kv = get(row, "kv_offloading", Py::None);
        let kv = if kv.truthy() {
            kv
        } else {
            Py::Str("none".into())
        };
        let backend = if kv != Py::Str("none".into()) {
            match row.get("kv_offload_backend") {
                Some(v) if Py::from_json(v).truthy() => Py::frozen(v),
                _ => Py::Str(String::new()),
            }
        } else {
            Py::Str(String::new())
        };
        Py::Tuple(vec![kv, backend])
    } else {
        get(row, "offloading", Py::Str("none".into()))
    };
    if is_multinode(row) {
        let mut k = vec![
            Py::Str("multi".into()),
            get(row, "hw", Py::None),
            get(row, "infmax_model_prefix", Py::None),
            get(row, "framework", Py::None),
            get(row, "precision", Py::None),
            get(row, "spec_decoding", Py::Str("none".into())),
            as_bool(row, "disagg"),
        ];
        multinode_fields(row, &mut k);
        k.push(as_int(row, "conc", None, 0));
        if has_kv || row.contains_key("offloading") {
            k.push(offload);
        }
        return Py::Tuple(k);
    }
    let mut k = vec![
        Py::Str("single".into()),
        get(row, "hw", Py::None),
        get(row, "infmax_model_prefix", Py::None),
        get(row, "framework", Py::None),
        get(row, "precision", Py::None),
    ];
    single_fields(row, &mut k);
    k.push(as_int(row, "conc", None, 0));
    k.push(offload);
    Py::Tuple(k)
}

/// Eval identity of an aggregate row or raw metadata.
pub fn eval_key(row: &Row) -> Identity {
    let multi = is_multinode(row);
    let hw = get(row, "hw", Py::None);
    let hw = if hw.truthy() {
        hw.py_str().to_lowercase()
    } else {
        String::new()
    };
    let prefix = match row.get("model_prefix") {
        Some(v) => Py::from_json(v),
        None => get(row, "infmax_model_prefix", Py::None),
    };
    let mut k = vec![
        Py::Str(if multi { "multi" } else { "single" }.into()),
        Py::Str(hw),
        prefix,
        get(row, "framework", Py::None),
        get(row, "precision", Py::None),
        get(row, "spec_decoding", Py::Str("none".into())),
        as_int(row, "isl", Some(8192), 8192),
        as_int(row, "osl", Some(1024), 1024),
    ];
    if multi {
        multinode_fields(row, &mut k);
    } else {
        single_fields(row, &mut k);
    }
    k.push(as_int(row, "conc", None, 0));
    Py::Tuple(k)
}

// ---------------------------------------------------------------- files

/// Largest artifact JSON file read, in bytes. The largest real one is a
/// whole sweep's aggregate (a few MB for a few thousand rows); 256 MiB
/// keeps far larger sweeps readable while refusing a file whose parsed form
/// would take the runner's memory.
const MAX_ARTIFACT_JSON_BYTES: u64 = 256 * 1024 * 1024;

/// Why the artifacts could not be validated: a file or folder that cannot
/// be read, written or removed, or a file that is not JSON (the message
/// names the path). A problem of the rows themselves is not an error but a
/// line of [`Report::errors`].
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("artifacts directory does not exist: {}", .0.display())]
    NoDirectory(PathBuf),
    /// Above [`MAX_ARTIFACT_JSON_BYTES`].
    #[error("{}: {} (MAX_ARTIFACT_JSON_BYTES)", path.display(), error.cause())]
    TooLarge {
        path: PathBuf,
        error: sweep_model::fsio::ReadError,
    },
    #[error("{}: cannot read: {}", path.display(), error.cause())]
    Unreadable {
        path: PathBuf,
        error: sweep_model::fsio::ReadError,
    },
    #[error("{}: invalid JSON: {source}", path.display())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(transparent)]
    Tree(#[from] sweep_model::tree::TreeError),
    /// Above [`MAX_EVAL_REWRITE_BYTES`].
    #[error(
        "{}: {bytes} bytes; an eval aggregate to rewrite may hold at most {MAX_EVAL_REWRITE_BYTES}",
        path.display()
    )]
    RewriteTooLarge { path: PathBuf, bytes: u64 },
    #[error("{}: changed while read", path.display())]
    Changed { path: PathBuf },
    #[error("{}: cannot {action}: {source}", path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
    #[error("cannot serialise {what}: {source}")]
    Serialise {
        what: &'static str,
        source: serde_json::Error,
    },
}

/// Every one is a failure to do the job (exit 2): the rows' own problems
/// are the report's errors, not this.
impl sweep_cli::Classify for ValidateError {
    fn kind(&self) -> sweep_cli::Kind {
        sweep_cli::Kind::Failed
    }
}

fn io_error(path: &Path, action: &'static str) -> impl FnOnce(std::io::Error) -> ValidateError {
    let path = path.to_path_buf();
    move |source| ValidateError::Io {
        path,
        action,
        source,
    }
}

fn json_error(path: &Path) -> impl FnOnce(serde_json::Error) -> ValidateError {
    let path = path.to_path_buf();
    move |source| ValidateError::Json { path, source }
}

/// Reads one artifact JSON file: a regular file only (a FIFO named
/// `x.json` is refused instead of blocking the run), within the limit.
fn load_json(path: &Path) -> Result<Value, ValidateError> {
    let bytes =
        sweep_model::fsio::read_regular(path, MAX_ARTIFACT_JSON_BYTES).map_err(|error| {
            let path = path.to_path_buf();
            match error {
                sweep_model::fsio::ReadError::TooLarge { .. } => {
                    ValidateError::TooLarge { path, error }
                }
                error => ValidateError::Unreadable { path, error },
            }
        })?;
    serde_json::from_slice(&bytes).map_err(json_error(path))
}

/// `dir.glob("*.json")`: the `*.json` entries directly in `dir`, as
/// `sweep_model::tree` lists them (sorted); none when `dir` is absent.
/// `dir` is a category folder of the artifact root (`root/results_bmk`): a
/// symlink from there out of the root is refused, naming it, before it is
/// listed (or, for `eval_results_all`, rewritten).
fn json_files(dir: &Path) -> Result<Vec<PathBuf>, ValidateError> {
    if let Some(root) = dir.parent() {
        tree::check_inside(root, dir)?;
    }
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    Ok(tree::json_files_in(dir)?.files)
}

/// Sub-directories of `root` (sorted by name). A symlinked directory is
/// not one (as in `sweep_model::tree`): it could lead outside the tree.
fn subdirs(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(|n| (n.to_string(), e.path())))
        .collect();
    out.sort();
    out
}

/// The top-level value of a result file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A list of rows.
    List,
    /// A single row.
    Object,
    /// Anything else (its JSON type, for the message).
    Other(&'static str),
}

/// Hands each row of a result file to a callback while the file is read:
/// the elements of a top-level list, or a top-level object as row 0. Only
/// one row is in memory at a time, so memory follows the largest row, not
/// the file (a 60 MB `agg_bmk.json` read as one `Value` tree peaked at
/// 500 MB; streamed, with identities kept as reprs, at 20 MB).
struct Rows<'f, F>(&'f mut F);

impl<'de, F: FnMut(usize, Value)> DeserializeSeed<'de> for Rows<'_, F> {
    type Value = Shape;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Shape, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, F: FnMut(usize, Value)> Visitor<'de> for Rows<'_, F> {
    type Value = Shape;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of result rows or one row")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let mut i = 0;
        while let Some(row) = seq.next_element::<Value>()? {
            (self.0)(i, row);
            i += 1;
        }
        Ok(Shape::List)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Shape, A::Error> {
        let row: Map<String, Value> =
            serde::Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        (self.0)(0, Value::Object(row));
        Ok(Shape::Object)
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Other("null"))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other("a boolean"))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Other("a number"))
    }
    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Other("a string"))
    }
}

/// Streams the rows of the JSON file `path` into `each` ([`Rows`]).
/// `Err` when it cannot be read or is not JSON.
fn stream_rows(path: &Path, mut each: impl FnMut(usize, Value)) -> Result<Shape, ValidateError> {
    // The one reader's rules (a regular file only: a FIFO is refused, not
    // waited on); streamed, so no size cap is needed for memory's sake.
    let (file, size) =
        sweep_model::fsio::open_regular(path).map_err(|error| ValidateError::Unreadable {
            path: path.to_path_buf(),
            error,
        })?;
    if size > MAX_ARTIFACT_JSON_BYTES {
        let error = sweep_model::fsio::ReadError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit: MAX_ARTIFACT_JSON_BYTES,
        };
        return Err(ValidateError::TooLarge {
            path: path.to_path_buf(),
            error,
        });
    }
    // A file that grows past the limit while read ends there (a JSON error).
    let file = std::io::Read::take(file, MAX_ARTIFACT_JSON_BYTES);
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(file));
    Rows(&mut each)
        .deserialize(&mut de)
        .and_then(|shape| de.end().map(|()| shape))
        .map_err(json_error(path))
}

/// Rows listed per file before the rest are only counted (as the identity
/// lists are capped at 20): a file of 50 000 broken rows stays readable.
const MAX_LISTED_ROW_PROBLEMS: usize = 20;

/// The row problems of one file: `<file>: row <i>: <problem>`.
struct RowProblems {
    file: String,
    lines: Vec<String>,
    count: usize,
}

impl RowProblems {
    fn new(root: &Path, path: &Path) -> Self {
        RowProblems {
            file: path
                .strip_prefix(root)
                .unwrap_or(path)
                .display()
                .to_string(),
            lines: Vec::new(),
            count: 0,
        }
    }
    fn check(&mut self, index: usize, outcome: Result<(), RowError>) {
        if let Err(e) = outcome {
            self.count += 1;
            if self.lines.len() < MAX_LISTED_ROW_PROBLEMS {
                self.lines.push(format!("{}: row {index}: {e}", self.file));
            }
        }
    }
    fn shape(&mut self, shape: Shape, want: &str) {
        if let Shape::Other(found) = shape {
            self.lines
                .push(format!("{}: must be {want}, found {found}", self.file));
        }
    }
    fn finish(mut self) -> Vec<String> {
        if self.count > MAX_LISTED_ROW_PROBLEMS {
            self.lines.push(format!(
                "{}: ... and {} more row(s) with problems",
                self.file,
                self.count - MAX_LISTED_ROW_PROBLEMS
            ));
        }
        self.lines
    }
}

/// The JSON type a row field must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Str,
    Int,
    Bool,
    /// Present, any type (metric values lm-eval may leave `null` or `"N/A"`).
    Present,
    /// Absent, `null` or a string.
    OptStr,
}

impl Kind {
    fn expected(self) -> &'static str {
        match self {
            Kind::Str => "a string",
            Kind::Int => "an integer",
            Kind::Bool => "a boolean",
            Kind::Present => "any value",
            Kind::OptStr => "a string or null",
        }
    }
    fn accepts(self, v: Option<&Value>) -> bool {
        match (self, v) {
            (Kind::OptStr, None | Some(Value::Null | Value::String(_))) => true,
            (_, None) => false,
            (Kind::Str, Some(v)) => v.is_string(),
            (Kind::Int, Some(v)) => v.as_i64().is_some(),
            (Kind::Bool, Some(v)) => v.is_boolean(),
            (Kind::Present, Some(_)) => true,
            (Kind::OptStr, Some(_)) => false,
        }
    }
}

/// Checks `row` against `fields`, naming the first field that fails.
fn check_fields(row: &Row, fields: &[(&str, Kind)]) -> Result<(), RowError> {
    for &(key, kind) in fields {
        let v = row.get(key);
        if kind.accepts(v) {
            continue;
        }
        return Err(match v {
            None => RowError::Missing {
                field: key.to_string(),
                expected: kind.expected(),
            },
            Some(v) => RowError::WrongType {
                field: key.to_string(),
                expected: kind.expected(),
                found: json_type_name(v).to_string(),
            },
        });
    }
    Ok(())
}

/// A fixed-sequence row is what `collect-results process` writes and the
/// ingest reads: [`BenchmarkRow`], the typed row of `agg_bmk.json`.
fn check_fixed(row: Row) -> Result<(), RowError> {
    BenchmarkRow::try_from(row).map(drop)
}

/// Fields of an eval aggregate row: those [`sweep_model::results::EvalRow`]
/// requires, with its types (a unit test keeps the two in step; the
/// derived deserializer would not name the field of a wrong type).
const EVAL_ROW_FIELDS: &[(&str, Kind)] = &[
    ("is_multinode", Kind::Bool),
    ("model_prefix", Kind::Str),
    ("model", Kind::Str),
    ("hw", Kind::Str),
    ("framework", Kind::Str),
    ("precision", Kind::Str),
    ("spec_decoding", Kind::Str),
    ("isl", Kind::Int),
    ("osl", Kind::Int),
    ("tp", Kind::Int),
    ("ep", Kind::Int),
    ("prefill_tp", Kind::Int),
    ("prefill_ep", Kind::Int),
    ("prefill_num_workers", Kind::Int),
    ("decode_tp", Kind::Int),
    ("decode_ep", Kind::Int),
    ("decode_num_workers", Kind::Int),
    ("conc", Kind::Int),
    ("dp_attention", Kind::Str),
    ("prefill_dp_attention", Kind::Str),
    ("decode_dp_attention", Kind::Str),
    ("task", Kind::Str),
    ("em_strict", Kind::Present),
    ("em_strict_se", Kind::Present),
    ("em_flexible", Kind::Present),
    ("em_flexible_se", Kind::Present),
    ("n_eff", Kind::Present),
    ("source", Kind::Str),
    ("score", Kind::Present),
    ("score_name", Kind::OptStr),
    ("score_se", Kind::Present),
];

/// Fields of every agentic row (`process_agentic_result.py`'s `build_agg`;
/// sweepkit has no typed agentic row): the identity's fields and what the
/// ingest groups by.
const AGENTIC_ROW_FIELDS: &[(&str, Kind)] = &[
    ("hw", Kind::Str),
    ("conc", Kind::Int),
    ("model", Kind::Str),
    ("infmax_model_prefix", Kind::Str),
    ("framework", Kind::Str),
    ("precision", Kind::Str),
    ("scenario_type", Kind::Str),
    ("is_multinode", Kind::Bool),
];
/// ... and of a single-node one.
const AGENTIC_SINGLE_FIELDS: &[(&str, Kind)] = &[("tp", Kind::Int), ("ep", Kind::Int)];
/// ... and of a multi-node one.
const AGENTIC_MULTI_FIELDS: &[(&str, Kind)] = &[
    ("prefill_tp", Kind::Int),
    ("prefill_ep", Kind::Int),
    ("prefill_num_workers", Kind::Int),
    ("decode_tp", Kind::Int),
    ("decode_ep", Kind::Int),
    ("decode_num_workers", Kind::Int),
];

fn check_agentic(row: &Row) -> Result<(), RowError> {
    check_fields(row, AGENTIC_ROW_FIELDS)?;
    if row.get("is_multinode") == Some(&Value::Bool(true)) {
        check_fields(row, AGENTIC_MULTI_FIELDS)
    } else {
        check_fields(row, AGENTIC_SINGLE_FIELDS)
    }
}

fn is_agentic(row: &Row) -> bool {
    row.get("scenario_type").and_then(Value::as_str) == Some("agentic-coding")
}

fn agentic_point_files(root: &Path) -> Result<Vec<PathBuf>, ValidateError> {
    let mut out = Vec::new();
    for (name, dir) in subdirs(root) {
        if name.starts_with("bmk_agentic_") {
            // `artifact_dir.rglob("*.json")`
            out.extend(tree::json_files(&dir)?.files);
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The rows of `results_bmk/*.json`, read once: fixed-sequence and agentic
/// identities, and the problems of rows that are not objects or lack a
/// field the ingest needs.
#[derive(Default)]
struct ResultsBmk {
    present: bool,
    fixed: Vec<Key>,
    agentic: Vec<Key>,
    errors: Vec<String>,
}

fn read_results_bmk(root: &Path) -> Result<ResultsBmk, ValidateError> {
    let dir = root.join("results_bmk");
    let mut out = ResultsBmk {
        present: dir.is_dir(),
        ..ResultsBmk::default()
    };
    for path in json_files(&dir)? {
        let mut problems = RowProblems::new(root, &path);
        let shape = stream_rows(&path, |i, row| match row {
            Value::Object(row) if is_agentic(&row) => {
                out.agentic.push(key_of(&agentic_key(&row)));
                problems.check(i, check_agentic(&row));
            }
            Value::Object(row) => {
                out.fixed.push(key_of(&benchmark_key(&row)));
                problems.check(i, check_fixed(row));
            }
            other => problems.check(i, Err(RowError::NotAnObject(json_type_name(&other)))),
        })?;
        problems.shape(shape, "a list of result rows or one row");
        out.errors.extend(problems.finish());
    }
    Ok(out)
}

/// Agentic identities of the point files (other rows are not points), and
/// the problems of agentic rows that lack a field.
fn read_agentic_points(
    root: &Path,
    paths: &[PathBuf],
) -> Result<(Vec<Key>, Vec<String>), ValidateError> {
    let mut ids = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        let mut problems = RowProblems::new(root, path);
        stream_rows(path, |i, row| {
            if let Value::Object(row) = row
                && is_agentic(&row)
            {
                ids.push(key_of(&agentic_key(&row)));
                problems.check(i, check_agentic(&row));
            }
        })?;
        errors.extend(problems.finish());
    }
    Ok((ids, errors))
}

fn raw_eval_dirs(root: &Path) -> Vec<(String, PathBuf)> {
    subdirs(root)
        .into_iter()
        .filter(|(n, _)| {
            n.starts_with("eval_")
                && n != "eval_results_all"
                && !n.starts_with("eval_server_logs_")
                && !n.starts_with("eval_gpu_metrics_")
        })
        .collect()
}

/// The identities of one raw eval dir's metadata.
fn meta_identities(meta: &Row) -> Option<Vec<(Identity, Option<i64>)>> {
    if matches!(meta.get("eval_concs"), Some(Value::Array(_))) {
        let Some(Value::Array(concs)) = meta.get("completed_eval_concs") else {
            return None;
        };
        Some(
            concs
                .iter()
                .map(|c| {
                    let mut m = meta.clone();
                    m.insert("conc".into(), c.clone());
                    (eval_key(&m), Some(python_int_of_value(c).unwrap_or(0)))
                })
                .collect(),
        )
    } else {
        Some(vec![(eval_key(meta), None)])
    }
}

fn raw_eval_rows(root: &Path) -> (Vec<Key>, Vec<String>) {
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for (name, dir) in raw_eval_dirs(root) {
        let meta_path = dir.join("meta_env.json");
        let n = python_repr_str(&name);
        if !meta_path.is_file() {
            errors.push(format!("raw eval artifact {n} is missing meta_env.json"));
            continue;
        }
        let meta = match load_json(&meta_path) {
            Ok(Value::Object(m)) => m,
            Ok(_) => {
                errors.push(format!(
                    "raw eval artifact {n} has non-object meta_env.json"
                ));
                continue;
            }
            Err(e) => {
                errors.push(format!(
                    "raw eval artifact {n} has invalid meta_env.json: {e}"
                ));
                continue;
            }
        };
        match meta_identities(&meta) {
            Some(ids) => rows.extend(ids.iter().map(|(k, _)| key_of(k))),
            None => errors.push(format!(
                "raw eval artifact {n} has invalid batched concurrency metadata"
            )),
        }
    }
    (rows, errors)
}

// ---------------------------------------------------------------- checks

fn identity_set(rows: &[Key]) -> BTreeSet<&str> {
    rows.iter().map(String::as_str).collect()
}

fn compare_sets(label: &str, expected: &[Key], actual: &[Key]) -> Vec<String> {
    let (e, a) = (identity_set(expected), identity_set(actual));
    let mut errors = Vec::new();
    for (what, from, other, word) in [
        ("missing", &e, &a, "missing"),
        ("unexpected", &a, &e, "unexpected"),
    ] {
        // A set of reprs iterates in repr order.
        let diff: Vec<&str> = from.difference(other).copied().collect();
        if diff.is_empty() {
            continue;
        }
        errors.push(if what == "missing" {
            format!(
                "{label} artifacts are missing {} expected row(s)",
                diff.len()
            )
        } else {
            format!("{label} artifacts contain {} unexpected row(s)", diff.len())
        });
        for id in diff.iter().take(20) {
            errors.push(format!("  {word}: {id}"));
        }
        if diff.len() > 20 {
            errors.push(format!("  ... and {} more", diff.len() - 20));
        }
    }
    errors
}

fn duplicates(label: &str, rows: &[Key]) -> Vec<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for r in rows {
        *counts.entry(r.as_str()).or_insert(0) += 1;
    }
    let mut dups: Vec<(&str, usize)> = counts.into_iter().filter(|(_, n)| *n > 1).collect();
    if dups.is_empty() {
        return Vec::new();
    }
    dups.sort();
    let extra: usize = dups.iter().map(|d| d.1 - 1).sum();
    let mut errors = vec![format!(
        "{label} artifacts contain {extra} duplicate row(s)"
    )];
    for (id, n) in dups.iter().take(20) {
        errors.push(format!("  duplicate x{n}: {id}"));
    }
    if dups.len() > 20 {
        errors.push(format!("  ... and {} more identities", dups.len() - 20));
    }
    errors
}

fn validate_agentic(
    root: &Path,
    points: &[PathBuf],
    point_rows: &[Key],
    bmk: &ResultsBmk,
) -> Vec<String> {
    let mut errors = duplicates("agentic point", point_rows);
    if bmk.present {
        errors.extend(duplicates("agentic aggregate", &bmk.agentic));
        errors.extend(compare_sets("agentic aggregate", point_rows, &bmk.agentic));
    }
    let point_names: BTreeSet<String> = points
        .iter()
        .filter_map(|p| p.strip_prefix(root).ok())
        .filter_map(|p| p.components().next())
        .filter_map(|c| c.as_os_str().to_str())
        .map(|n| n.strip_prefix("bmk_").unwrap_or(n).to_string())
        .collect();
    let raw_names: BTreeSet<String> = subdirs(root)
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with("agentic_"))
        .collect();
    for n in point_names.difference(&raw_names) {
        errors.push(format!("missing raw agentic artifact dir: {n}"));
    }
    for n in raw_names.difference(&point_names) {
        errors.push(format!("unexpected raw agentic artifact dir: {n}"));
    }
    errors
}

fn validate_eval(root: &Path) -> Result<Vec<String>, ValidateError> {
    let (raw, mut errors) = raw_eval_rows(root);
    errors.extend(duplicates("raw eval", &raw));
    let agg_dir = root.join("eval_results_all");
    let files = json_files(&agg_dir)?;
    if !raw.is_empty() || agg_dir.exists() {
        if files.is_empty() {
            errors.push("missing eval_results_all aggregate artifact".into());
        } else {
            let mut count = 0;
            let mut agg = Vec::new();
            for f in &files {
                let mut problems = RowProblems::new(root, f);
                let (mut ids, mut rows) = (Vec::new(), 0);
                let shape = stream_rows(f, |i, row| {
                    rows += 1;
                    match row {
                        Value::Object(row) => {
                            ids.push(key_of(&eval_key(&row)));
                            problems.check(i, check_fields(&row, EVAL_ROW_FIELDS));
                        }
                        other => {
                            problems.check(i, Err(RowError::NotAnObject(json_type_name(&other))))
                        }
                    }
                })?;
                if shape == Shape::List {
                    count += rows;
                    agg.extend(ids);
                    errors.extend(problems.finish());
                } else {
                    let found = match shape {
                        Shape::Other(t) => t,
                        _ => "an object",
                    };
                    errors.push(format!(
                        "{}: must be a list of eval rows, found {found}",
                        problems.file
                    ));
                }
            }
            if count == 0 {
                errors.push("eval_results_all contains no rows".into());
            }
            errors.extend(duplicates("eval aggregate", &agg));
            errors.extend(compare_sets("eval aggregate", &raw, &agg));
        }
    }
    Ok(errors)
}

// ---------------------------------------------------------------- dedupe

/// The lm-eval timestamp `YYYY-MM-DDTHH-MM-SS[.fraction]` in a name.
fn timestamp(name: &str) -> Option<&str> {
    let b = name.as_bytes();
    let d = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let shape = "dddd-dd-ddTdd-dd-dd";
    (0..b.len()).find_map(|i| {
        let ok = shape.bytes().enumerate().all(|(j, s)| match s {
            b'd' => d(i + j),
            c => b.get(i + j) == Some(&c),
        });
        if !ok {
            return None;
        }
        let mut end = i + shape.len();
        if b.get(end) == Some(&b'.') && d(end + 1) {
            end += 1;
            while d(end) {
                end += 1;
            }
        }
        name.get(i..end)
    })
}

/// The `_conc<N>[_<M>].json` suffix concurrency of a result file name.
fn result_conc(name: &str) -> Option<i64> {
    let stem = name.strip_suffix(".json")?;
    let mut from = 0;
    while let Some(pos) = stem[from..].find("_conc") {
        let start = from + pos + "_conc".len();
        let rest = &stem[start..];
        let nd = rest.bytes().take_while(u8::is_ascii_digit).count();
        let after = &rest[nd..];
        let tail_ok = after.is_empty()
            || after
                .strip_prefix('_')
                .is_some_and(|t| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit()));
        if nd > 0 && tail_ok {
            return rest[..nd].parse().ok();
        }
        from = from + pos + 1;
    }
    None
}

fn result_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, ValidateError> {
    Ok(json_files(dir)?
        .into_iter()
        .filter_map(|p| {
            let n = p.file_name()?.to_str()?.to_string();
            n.starts_with("results").then_some((n, p))
        })
        .collect())
}

struct RawDir {
    name: String,
    dir: PathBuf,
    meta: Row,
    batched: bool,
    ids: Vec<(Identity, Option<i64>)>,
}

fn raw_dirs_for_dedupe(root: &Path) -> Vec<RawDir> {
    raw_eval_dirs(root)
        .into_iter()
        .filter_map(|(name, dir)| {
            let Ok(Value::Object(meta)) = load_json(&dir.join("meta_env.json")) else {
                return None;
            };
            let batched = matches!(meta.get("eval_concs"), Some(Value::Array(_)));
            let ids = meta_identities(&meta).unwrap_or_default();
            Some(RawDir {
                name,
                dir,
                meta,
                batched,
                ids,
            })
        })
        .collect()
}

/// Collapses re-run eval duplicates in place; returns a change log.
pub fn dedupe_reran_evals(root: &Path) -> Result<Vec<String>, ValidateError> {
    let raws = raw_dirs_for_dedupe(root);
    // identity → (timestamp, dir name) of the latest result
    let mut best: HashMap<String, (String, String)> = HashMap::new();
    for r in &raws {
        for (fname, _) in result_files(&r.dir)? {
            let Some(stamp) = timestamp(&fname) else {
                continue;
            };
            let conc = result_conc(&fname);
            for (id, id_conc) in &r.ids {
                if r.batched && conc.is_some() && *id_conc != conc {
                    continue;
                }
                let cand = (stamp.to_string(), r.name.clone());
                let slot = best.entry(key_of(id)).or_insert_with(|| cand.clone());
                if cand > *slot {
                    *slot = cand;
                }
            }
        }
    }
    let winners: HashMap<String, String> = best.into_iter().map(|(k, (_, n))| (k, n)).collect();
    let mut messages = dedupe_aggregate(root, &winners)?;
    for r in &raws {
        if let Some(m) = prune_raw(r, &winners)? {
            messages.push(m);
        }
    }
    Ok(messages)
}

/// Largest eval aggregate file rewritten to drop re-run duplicates. The
/// rewrite holds the file as one `Value` tree (several times its size); an
/// aggregate has one row per eval task per configuration (a full sweep:
/// a few thousand rows, under 5 MB), so a larger one is refused rather than
/// loaded. Reading for the checks streams and has no such limit.
pub const MAX_EVAL_REWRITE_BYTES: u64 = 32 * 1024 * 1024;

/// `(identity key, source as Python's str or "")` of each row of an eval
/// aggregate file (`None` for a row that is not an object), if it is a list.
type EvalRowKeys = Vec<Option<(String, String)>>;

fn eval_row_keys(path: &Path) -> Result<Option<EvalRowKeys>, ValidateError> {
    let mut rows = Vec::new();
    let shape = stream_rows(path, |_, row| {
        rows.push(row.as_object().map(|obj| {
            let source = Py::from_json(obj.get("source").unwrap_or(&Value::Null));
            let source = if source.truthy() {
                source.py_str()
            } else {
                String::new()
            };
            (key_of(&eval_key(obj)), source)
        }))
    })?;
    Ok((shape == Shape::List).then_some(rows))
}

fn dedupe_aggregate(
    root: &Path,
    winners: &HashMap<String, String>,
) -> Result<Vec<String>, ValidateError> {
    let dir = root.join("eval_results_all");
    let mut messages = Vec::new();
    if !dir.is_dir() {
        return Ok(messages);
    }
    for path in json_files(&dir)? {
        let Some(rows) = eval_row_keys(&path)? else {
            continue;
        };
        let keep = rows_to_keep(&rows, winners);
        if keep.len() != rows.len() {
            messages.push(rewrite_kept(path, &keep)?);
        }
    }
    Ok(messages)
}

/// Indices of the rows an aggregate keeps: every non-object row, every row
/// whose identity is unique or has no winner, and one row per duplicated
/// identity with a winner ([`chosen_row`]).
fn rows_to_keep(rows: &EvalRowKeys, winners: &HashMap<String, String>) -> BTreeSet<usize> {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut group_of: HashMap<&str, usize> = HashMap::new();
    let mut keep: BTreeSet<usize> = BTreeSet::new();
    for (i, row) in rows.iter().enumerate() {
        let Some((k, _)) = row else {
            keep.insert(i);
            continue;
        };
        match group_of.get(k.as_str()) {
            Some(&g) => groups[g].1.push(i),
            None => {
                group_of.insert(k, groups.len());
                groups.push((k, vec![i]));
            }
        }
    }
    for (k, idx) in &groups {
        let winner = winners.get(*k);
        let (Some(winner), true) = (winner, idx.len() > 1) else {
            keep.extend(idx);
            continue;
        };
        keep.insert(chosen_row(rows, idx, winner));
    }
    keep
}

/// Of duplicated rows `idx`, the first whose source names the winning raw
/// dir, else the one with the newest source timestamp.
fn chosen_row(rows: &EvalRowKeys, idx: &[usize], winner: &str) -> usize {
    let src_str = |i: usize| rows[i].as_ref().map_or("", |r| r.1.as_str());
    idx.iter()
        .copied()
        .find(|&i| src_str(i).contains(winner))
        .unwrap_or_else(|| {
            // max() keeps the first of equal maxima
            let mut best = idx[0];
            for &i in &idx[1..] {
                let (a, b) = (src_str(i), src_str(best));
                if timestamp(a).unwrap_or("") > timestamp(b).unwrap_or("") {
                    best = i;
                }
            }
            best
        })
}

/// Rewrites the aggregate at `path` with only the rows in `keep` (refusing
/// one over [`MAX_EVAL_REWRITE_BYTES`]); returns the log line.
fn rewrite_kept(path: PathBuf, keep: &BTreeSet<usize>) -> Result<String, ValidateError> {
    let size = std::fs::metadata(&path)
        .map_err(io_error(&path, "read"))?
        .len();
    if size > MAX_EVAL_REWRITE_BYTES {
        return Err(ValidateError::RewriteTooLarge { path, bytes: size });
    }
    let Value::Array(data) = load_json(&path)? else {
        return Err(ValidateError::Changed { path });
    };
    let kept: Vec<&Value> = data
        .iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .map(|(_, v)| v)
        .collect();
    let text = serde_json::to_string_pretty(&kept).map_err(|source| ValidateError::Serialise {
        what: "the eval aggregate",
        source,
    })?;
    sweep_model::fsio::write_atomic(&path, text.as_bytes()).map_err(io_error(&path, "write"))?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    Ok(format!(
        "{name}: kept {} of {} eval row(s)",
        kept.len(),
        data.len()
    ))
}

fn prune_raw(
    r: &RawDir,
    winners: &HashMap<String, String>,
) -> Result<Option<String>, ValidateError> {
    if r.ids.is_empty() {
        return Ok(None);
    }
    let superseded = |id: &Identity| winners.get(&key_of(id)).is_some_and(|w| *w != r.name);
    let rm = |dir: &Path| std::fs::remove_dir_all(dir).map_err(io_error(dir, "remove"));
    let n = python_repr_str(&r.name);
    if !r.batched {
        if superseded(&r.ids[0].0) {
            rm(&r.dir)?;
            return Ok(Some(format!("removed superseded raw eval dir {n}")));
        }
        return Ok(None);
    }
    let losing: BTreeSet<i64> = r
        .ids
        .iter()
        .filter(|(id, c)| c.is_some() && superseded(id))
        .filter_map(|(_, c)| *c)
        .collect();
    if losing.is_empty() {
        return Ok(None);
    }
    for (fname, path) in result_files(&r.dir)? {
        if result_conc(&fname).is_some_and(|c| losing.contains(&c)) {
            std::fs::remove_file(&path).map_err(io_error(&path, "remove"))?;
        }
    }
    let remaining: Vec<Value> = match r.meta.get("completed_eval_concs") {
        Some(Value::Array(a)) => a
            .iter()
            .filter(|c| !losing.contains(&python_int_of_value(c).unwrap_or(0)))
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    if remaining.is_empty() {
        rm(&r.dir)?;
        return Ok(Some(format!("removed superseded batched raw eval dir {n}")));
    }
    let mut meta = r.meta.clone();
    meta.insert("completed_eval_concs".into(), Value::Array(remaining));
    let path = r.dir.join("meta_env.json");
    let text = serde_json::to_string(&meta).map_err(|source| ValidateError::Serialise {
        what: "meta_env.json",
        source,
    })?;
    sweep_model::fsio::write_atomic(&path, text.as_bytes()).map_err(io_error(&path, "write"))?;
    let dropped: Vec<String> = losing.iter().map(i64::to_string).collect();
    Ok(Some(format!(
        "pruned superseded conc(s) {} from batched raw eval dir {n}",
        dropped.join(",")
    )))
}

// ---------------------------------------------------------------- entry

/// The outcome of a validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// De-duplication changes made in place.
    pub collapsed: Vec<String>,
    /// Validation errors (empty = valid).
    pub errors: Vec<String>,
    pub fixed: usize,
    pub agentic: usize,
    pub eval: usize,
}

/// De-duplicates re-run evals, then validates `root`. `Err` is a failure to
/// read or write (not a validation error).
pub fn validate(root: &Path) -> Result<Report, ValidateError> {
    if !root.is_dir() {
        return Err(ValidateError::NoDirectory(root.to_path_buf()));
    }
    let collapsed = dedupe_reran_evals(root)?;
    let bmk = read_results_bmk(root)?;
    let points = agentic_point_files(root)?;
    let (agentic, point_errors) = read_agentic_points(root, &points)?;
    let (eval, _) = raw_eval_rows(root);
    let mut errors = bmk.errors.clone();
    errors.extend(point_errors);
    errors.extend(duplicates("fixed-sequence", &bmk.fixed));
    errors.extend(validate_agentic(root, &points, &agentic, &bmk));
    errors.extend(validate_eval(root)?);
    let fixed = &bmk.fixed;
    if !fixed.is_empty() && json_files(&root.join("run-stats"))?.is_empty() {
        errors.push("missing run-stats artifact for fixed-sequence benchmarks".into());
    }
    if fixed.is_empty() && agentic.is_empty() && eval.is_empty() {
        errors.push("no reusable benchmark, agentic, or eval result rows found".into());
    }
    Ok(Report {
        collapsed,
        errors,
        fixed: identity_set(fixed).len(),
        agentic: identity_set(&agentic).len(),
        eval: identity_set(&eval).len(),
    })
}

/// The success line.
pub fn summary(r: &Report) -> String {
    format!(
        "Reusable sweep artifacts validated: {} fixed-sequence row(s), {} agentic row(s), {} eval row(s).",
        r.fixed, r.agentic, r.eval
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(v: Value) -> Row {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn reprs_match_python() {
        let id = Py::Tuple(vec![
            Py::Str("single".into()),
            Py::None,
            Py::Bool(false),
            Py::Int(8),
            Py::Str("it's".into()),
        ]);
        assert_eq!(id.repr(), "('single', None, False, 8, \"it's\")");
        assert_eq!(Py::Tuple(vec![Py::Int(1)]).repr(), "(1,)");
        assert_eq!(Py::Float(2.0).repr(), "2.0");
    }

    #[test]
    fn fixed_key_normalises_defaults_and_strings() {
        let k = benchmark_key(&row(
            json!({"hw": "h100", "tp": "2", "ep": null, "disagg": "True", "conc": 4.0}),
        ));
        assert_eq!(
            k.repr(),
            "('single', 'h100', None, None, None, 'none', True, 0, 0, 2, 1, 1, 1, 0, False, 4)"
        );
    }

    #[test]
    fn agentic_key_freezes_backend_mapping() {
        let k = agentic_key(&row(
            json!({"hw": "b200", "kv_offloading": "cpu", "kv_offload_backend": {"b": 1, "a": [2]}}),
        ));
        assert!(
            k.repr().ends_with("('cpu', (('a', (2,)), ('b', 1))))"),
            "{}",
            k.repr()
        );
        let legacy = agentic_key(&row(json!({"hw": "b200"})));
        assert!(legacy.repr().ends_with(", 0, 'none')"), "{}", legacy.repr());
    }

    #[test]
    fn eval_key_lowercases_runner_and_defaults_lengths() {
        let k = eval_key(&row(
            json!({"hw": "H100-DGXC", "infmax_model_prefix": "gptoss", "conc": 8}),
        ));
        assert_eq!(
            k.repr(),
            "('single', 'h100-dgxc', 'gptoss', None, None, 'none', 8192, 1024, 0, 1, 1, 1, 1, False, 8)"
        );
    }

    fn full_eval_row() -> Row {
        row(
            json!({"is_multinode": false, "model_prefix": "gptoss", "model": "m", "hw": "B200",
            "framework": "vllm", "precision": "fp4", "spec_decoding": "none", "isl": 8192,
            "osl": 1024, "tp": 2, "ep": 1, "prefill_tp": 2, "prefill_ep": 1,
            "prefill_num_workers": 1, "decode_tp": 2, "decode_ep": 1, "decode_num_workers": 1,
            "conc": 8, "dp_attention": "false", "prefill_dp_attention": "false",
            "decode_dp_attention": "false", "task": "gsm8k", "em_strict": 0.9,
            "em_strict_se": "N/A", "em_flexible": null, "em_flexible_se": null, "n_eff": 1319,
            "source": "s/results.json", "score": 0.9, "score_name": "em_strict", "score_se": 0.01}),
        )
    }

    fn eval_row_reads(r: &Row) -> bool {
        serde_json::from_value::<sweep_model::results::EvalRow>(Value::Object(r.clone())).is_ok()
    }

    #[test]
    fn eval_row_fields_agree_with_the_typed_eval_row() {
        let full = full_eval_row();
        assert!(eval_row_reads(&full));
        assert_eq!(check_fields(&full, EVAL_ROW_FIELDS), Ok(()));
        assert_eq!(EVAL_ROW_FIELDS.len(), full.len());
        for key in full.keys() {
            let mut r = full.clone();
            r.remove(key);
            assert_eq!(
                check_fields(&r, EVAL_ROW_FIELDS).is_ok(),
                eval_row_reads(&r),
                "without {key}"
            );
            for wrong in [json!([1]), json!("x"), json!(1.5), json!(true)] {
                let mut r = full.clone();
                r.insert(key.clone(), wrong.clone());
                assert_eq!(
                    check_fields(&r, EVAL_ROW_FIELDS).is_ok(),
                    eval_row_reads(&r),
                    "{key} = {wrong}"
                );
            }
        }
    }

    #[test]
    fn a_top_level_object_is_row_zero_and_a_scalar_is_no_rows() {
        let tmp = test_kit::temp_dir();
        let d = tmp.path();
        let cases = [
            ("[{\"a\": 1}, 2]", Shape::List, 2),
            ("{\"a\": 1}", Shape::Object, 1),
            ("\"x\"", Shape::Other("a string"), 0),
            ("null", Shape::Other("null"), 0),
        ];
        for (text, shape, n) in cases {
            let p = d.join("f.json");
            std::fs::write(&p, text).expect("write");
            let mut seen = Vec::new();
            assert_eq!(
                stream_rows(&p, |i, v| seen.push((i, v))).ok(),
                Some(shape),
                "{text}"
            );
            assert_eq!(seen.len(), n, "{text}");
        }
        std::fs::write(d.join("f.json"), "[1] [2]").expect("write");
        assert!(
            stream_rows(&d.join("f.json"), |_, _| {})
                .is_err_and(|e| e.to_string().contains("invalid JSON"))
        );
    }

    #[test]
    fn file_name_patterns() {
        assert_eq!(
            timestamp("results_2025-01-02T03-04-05.123_conc4.json"),
            Some("2025-01-02T03-04-05.123")
        );
        assert_eq!(timestamp("results_2025-01-02T03-04.json"), None);
        assert_eq!(result_conc("results_2025_conc16.json"), Some(16));
        assert_eq!(result_conc("results_x_conc16_2.json"), Some(16));
        assert_eq!(result_conc("results_x_conc16_b.json"), None);
        assert_eq!(result_conc("results_conc4_conc5.json"), Some(5));
        assert_eq!(python_int_of_value(&json!(" 1_000 ")), Some(1000));
        assert_eq!(python_int_of_value(&json!("1.5")), None);
    }
}
