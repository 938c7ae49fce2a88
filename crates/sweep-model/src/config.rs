//! Typed, strict model of InferenceX master configs (`configs/*-master.yaml`).
//!
//! [`MasterConfigs::load`] reads the files in order, merges their entries
//! (file order, then entry order) and validates every entry against the
//! schema of spec matrix.md §5: closed mappings at every depth, typed fields,
//! and the cross-field rules of §5.10. Validation is all-or-nothing; the
//! first invalid entry aborts with a [`ConfigError`] that names the file,
//! the config key, the dotted field path and the YAML line.
//!
//! Values are checked strictly (an `int` field takes only YAML integers, a
//! `bool` only booleans, a `string` only strings), so the typed values equal
//! the raw YAML values the reference copies into rows.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::json_type::yaml_type_name;
use crate::yaml::{self, PathSeg, YamlDoc};

/// The two scenario kinds.
pub const FIXED_SEQ_LEN: &str = "fixed-seq-len";
/// See [`FIXED_SEQ_LEN`].
pub const AGENTIC_CODING: &str = "agentic-coding";

/// What a [`ConfigError`] is about, for callers that introduce the
/// message differently (the changelog pipeline names the failing entry only
/// when its content is invalid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConfigErrorKind {
    /// A whole file, or the content of one entry.
    #[default]
    Invalid,
    /// A top-level key defined in more than one master config file.
    DuplicateKey,
    /// A top-level key containing `*` (reserved for wildcard patterns).
    WildcardKey,
    /// The file could not be opened or read: a missing input (exit 2), not
    /// an invalid one (exit 1); see [`crate::exit`].
    Unreadable,
}

/// A load or validation error in a master config (or `runners.yaml`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The file the problem is in.
    pub file: PathBuf,
    /// The config key (top-level entry), when the problem is inside one.
    pub key: Option<String>,
    /// Field path inside the entry (dotted like the reference), possibly empty.
    pub path: String,
    /// 1-based YAML line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub cause: String,
    /// Which kind of problem this is.
    pub kind: ConfigErrorKind,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        f.write_str(": ")?;
        if let Some(k) = &self.key {
            write!(f, "config '{k}': ")?;
        }
        if !self.path.is_empty() {
            write!(f, "field '{}': ", self.path)?;
        }
        f.write_str(&self.cause)
    }
}

impl ConfigError {
    /// An error about a whole file (no key, no path).
    #[must_use]
    pub fn file(file: &Path, line: Option<usize>, cause: impl Into<String>) -> Self {
        ConfigError {
            file: file.to_path_buf(),
            key: None,
            path: String::new(),
            line,
            cause: cause.into(),
            kind: ConfigErrorKind::Invalid,
        }
    }

    /// The same error, marked as a missing or unreadable file (exit 2).
    #[must_use]
    pub fn unreadable(mut self) -> Self {
        self.kind = ConfigErrorKind::Unreadable;
        self
    }
}

impl From<yaml::YamlError> for ConfigError {
    fn from(e: yaml::YamlError) -> Self {
        ConfigError {
            file: e.path.clone().unwrap_or_default(),
            key: None,
            path: String::new(),
            line: (e.line > 0).then_some(e.line),
            cause: if e.line > 0 {
                format!("invalid YAML (column {}): {}", e.column, e.message)
            } else {
                e.message
            },
            kind: if e.unreadable {
                ConfigErrorKind::Unreadable
            } else {
                ConfigErrorKind::Invalid
            },
        }
    }
}

/// Concurrency specification of a search-space entry (§5.10.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conc {
    /// `conc-start` when non-null.
    pub start: Option<i64>,
    /// `conc-end` when non-null.
    pub end: Option<i64>,
    /// `conc-list` when non-null (may be empty).
    pub list: Option<Vec<i64>>,
}

impl Conc {
    /// The values with step `step`: the list when non-empty, else the range.
    #[must_use]
    pub fn values(&self, step: i64) -> Vec<i64> {
        match &self.list {
            Some(l) if !l.is_empty() => l.clone(),
            _ => match (self.start, self.end) {
                (Some(s), Some(e)) => expand_range(s, e, step),
                _ => Vec::new(),
            },
        }
    }

    /// `test-config` fixed-block rule: the list whenever it is present (even empty).
    #[must_use]
    pub fn values_list_if_present(&self, step: i64) -> Vec<i64> {
        match &self.list {
            Some(l) => l.clone(),
            None => self.values(step),
        }
    }
}

/// Range expansion (spec §7.1): start, ×step…, always ending with `end`.
#[must_use]
pub fn expand_range(start: i64, end: i64, step: i64) -> Vec<i64> {
    let mut out = vec![start];
    if start >= end || step <= 1 || start <= 0 {
        if start < end {
            out.push(end);
        }
        return out;
    }
    let mut cur = start;
    loop {
        let next = cur.saturating_mul(step);
        if next >= end {
            out.push(end);
            return out;
        }
        out.push(next);
        cur = next;
    }
}

/// A worker pool block (`prefill` / `decode`), §5.8: `num-worker` workers
/// of one parallel layout (named for what it is: a pool of serving workers
/// in one stage, not threads).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerPool {
    /// `num-worker`.
    pub num_worker: i64,
    /// `tp`.
    pub tp: i64,
    /// `ep`.
    pub ep: i64,
    /// `dp-attn`.
    pub dp_attn: bool,
    /// `pp` (default 1).
    pub pp: i64,
    /// `dcp-size` (default 1).
    pub dcp_size: i64,
    /// `pcp-size` (default 1).
    pub pcp_size: i64,
    /// `hardware` when set.
    pub hardware: Option<String>,
    /// The block as written plus the `pp`/`dcp-size`/`pcp-size` defaults: what rows carry.
    pub row_value: Map<String, Value>,
}

/// Single-node fixed search-space entry (§5.5).
#[derive(Debug, Clone, PartialEq)]
pub struct SingleNodeFixedSearch {
    /// `tp`.
    pub tp: i64,
    /// `pp`.
    pub pp: i64,
    /// `dcp-size`.
    pub dcp_size: i64,
    /// `pcp-size`.
    pub pcp_size: i64,
    /// `ep` when non-null.
    pub ep: Option<i64>,
    /// `dp-attn` when non-null.
    pub dp_attn: Option<bool>,
    /// `spec-decoding` (default `none`).
    pub spec_decoding: String,
    /// `router` key: `None` absent, `Some(Value::Null)` explicit null.
    pub router: Option<Value>,
    /// Concurrency.
    pub conc: Conc,
}

/// Multi-node fixed search-space entry (§5.6).
#[derive(Debug, Clone, PartialEq)]
pub struct MultiNodeFixedSearch {
    /// `prefill`.
    pub prefill: WorkerPool,
    /// `decode`.
    pub decode: WorkerPool,
    /// `spec-decoding`.
    pub spec_decoding: String,
    /// `router` key (see [`SingleNodeFixedSearch::router`]).
    pub router: Option<Value>,
    /// `kv-p2p-transfer` key (same convention).
    pub kv_p2p_transfer: Option<Value>,
    /// Concurrency.
    pub conc: Conc,
}

/// A fixed-seq-len search-space entry of either shape.
#[derive(Debug, Clone, PartialEq)]
pub enum FixedSearch {
    /// In a single-node config entry.
    Single(SingleNodeFixedSearch),
    /// In a multi-node config entry.
    Multi(Box<MultiNodeFixedSearch>),
}

/// A fixed-seq-len block (§5.4).
#[derive(Debug, Clone, PartialEq)]
pub struct FixedBlock {
    /// `isl`.
    pub isl: i64,
    /// `osl`.
    pub osl: i64,
    /// `search-space`.
    pub search_space: Vec<FixedSearch>,
}

/// Agentic search-space entry (§5.7), either shape.
#[derive(Debug, Clone, PartialEq)]
pub struct AgenticSearch {
    /// `tp` when non-null (single-node shaped).
    pub tp: Option<i64>,
    /// `pp`.
    pub pp: i64,
    /// `dcp-size`.
    pub dcp_size: i64,
    /// `pcp-size`.
    pub pcp_size: i64,
    /// `ep` when non-null.
    pub ep: Option<i64>,
    /// `dp-attn` when non-null.
    pub dp_attn: Option<bool>,
    /// `spec-decoding`.
    pub spec_decoding: String,
    /// `prefill` when non-null.
    pub prefill: Option<WorkerPool>,
    /// `decode` when non-null.
    pub decode: Option<WorkerPool>,
    /// `kv-offloading` key: `None` absent, `Some(None)` null, `Some(Some(v))`.
    pub kv_offloading: Option<Option<String>>,
    /// `kv-offload-backend` when non-null.
    pub kv_offload_backend: Option<Value>,
    /// `router` key (see [`SingleNodeFixedSearch::router`]).
    pub router: Option<Value>,
    /// `kv-p2p-transfer` key.
    pub kv_p2p_transfer: Option<Value>,
    /// Concurrency.
    pub conc: Conc,
}

/// An agentic-coding block (§5.7).
#[derive(Debug, Clone, PartialEq)]
pub struct AgenticBlock {
    /// `dram-utilization` as written (int or float).
    pub dram_utilization: Option<Value>,
    /// `search-space`.
    pub search_space: Vec<AgenticSearch>,
}

/// One validated master-config entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigEntry {
    /// The config key.
    pub key: String,
    /// File the entry came from.
    pub file: PathBuf,
    /// Line of the config key in that file.
    pub line: Option<usize>,
    /// `image`.
    pub image: String,
    /// `model`.
    pub model: String,
    /// `model-prefix`.
    pub model_prefix: String,
    /// `precision`.
    pub precision: String,
    /// `framework`.
    pub framework: String,
    /// `runner` label.
    pub runner: String,
    /// `multinode`.
    pub multinode: bool,
    /// `disagg` (default false).
    pub disagg: bool,
    /// Top-level `router` when non-null.
    pub router: Option<Value>,
    /// Top-level `kv-p2p-transfer` when non-null.
    pub kv_p2p_transfer: Option<Value>,
    /// `scenarios.fixed-seq-len`.
    pub fixed: Vec<FixedBlock>,
    /// `scenarios.agentic-coding`.
    pub agentic: Vec<AgenticBlock>,
    /// The entry exactly as loaded (for deep comparisons).
    pub raw: Value,
}

/// All master configs, merged and validated.
#[derive(Debug, Clone, Default)]
pub struct MasterConfigs {
    /// Entries in merged order.
    pub entries: Vec<ConfigEntry>,
    index: HashMap<String, usize>,
    /// Non-fatal findings (duplicate keys inside one file), for stderr.
    pub warnings: Vec<String>,
}

impl ConfigEntry {
    /// `file:line: config 'key'`, the prefix of generation-time messages.
    #[must_use]
    pub fn location(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{l}: config '{}'", self.file.display(), self.key),
            None => format!("{}: config '{}'", self.file.display(), self.key),
        }
    }
}

impl MasterConfigs {
    /// Frees the `raw` copy of every entry. The generators read only the
    /// typed fields, and on a large catalogue the raw trees are a tenth of
    /// the peak memory; the changelog path, which compares raw entries,
    /// does not call this.
    pub fn drop_raw(&mut self) {
        for e in &mut self.entries {
            e.raw = Value::Null;
        }
    }

    /// Loads, merges and validates master config files (spec §3.1).
    ///
    /// # Errors
    /// Missing/unreadable file, bad YAML, non-mapping document, `*` in a key,
    /// a key defined twice across files, or any schema violation.
    pub fn load(files: &[PathBuf]) -> Result<Self, ConfigError> {
        let mut docs = Vec::with_capacity(files.len());
        for f in files {
            if !f.exists() {
                return Err(ConfigError::file(
                    f,
                    None,
                    format!("config file '{}' does not exist", f.display()),
                )
                .unreadable());
            }
            docs.push((f.clone(), yaml::load_file(f)?));
        }
        Self::from_docs(docs)
    }

    /// Like [`MasterConfigs::load`] but from already-parsed documents (e.g.
    /// files read from a git revision); `path` is used in messages only.
    ///
    /// # Errors
    /// As [`MasterConfigs::load`], minus the I/O.
    pub fn from_docs(docs: Vec<(PathBuf, YamlDoc)>) -> Result<Self, ConfigError> {
        let mut out = MasterConfigs::default();
        let mut pending: Vec<(usize, String, Value)> = Vec::new();
        let mut loaded: Vec<(PathBuf, YamlDoc)> = Vec::new();
        for (fi, (path, mut doc)) in docs.into_iter().enumerate() {
            let Value::Object(map) = doc.value() else {
                return Err(ConfigError::file(
                    &path,
                    doc.line_of(&[]),
                    format!("config file '{}' must contain a mapping", path.display()),
                ));
            };
            for d in doc.duplicate_keys() {
                out.warnings.push(format!(
                    "{}:{}: warning: key '{}' is defined again (first at line {}); the later value wins",
                    path.display(),
                    d.line,
                    yaml::dotted(&d.path),
                    d.first_line
                ));
            }
            let mut dups = Vec::new();
            for k in map.keys() {
                if k.contains('*') {
                    return Err(ConfigError {
                        file: path.clone(),
                        key: Some(k.clone()),
                        path: String::new(),
                        line: doc.line_of(&[PathSeg::Key(k.clone())]),
                        cause: format!(
                            "config key '{k}' contains '*', which is reserved for wildcard patterns"
                        ),
                        kind: ConfigErrorKind::WildcardKey,
                    });
                }
                if out.index.contains_key(k) {
                    dups.push(k.clone());
                }
                out.index.insert(k.clone(), usize::MAX);
            }
            if !dups.is_empty() {
                return Err(ConfigError {
                    file: path.clone(),
                    key: Some(dups[0].clone()),
                    path: String::new(),
                    line: doc.line_of(&[PathSeg::Key(dups[0].clone())]),
                    cause: format!(
                        "Duplicate config keys found in '{}': {}",
                        path.display(),
                        dups.join(", ")
                    ),
                    kind: ConfigErrorKind::DuplicateKey,
                });
            }
            if let Value::Object(map) = doc.take_value() {
                pending.extend(map.into_iter().map(|(k, v)| (fi, k, v)));
            }
            loaded.push((path, doc));
        }
        out.entries.reserve(pending.len());
        for (fi, key, raw) in pending {
            let (path, doc) = &loaded[fi];
            let entry = Validator {
                file: path,
                key: &key,
                doc,
            }
            .entry(raw)?;
            out.index.insert(entry.key.clone(), out.entries.len());
            out.entries.push(entry);
        }
        Ok(out)
    }

    /// The entry for a config key.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&ConfigEntry> {
        self.index.get(key).and_then(|i| self.entries.get(*i))
    }

    /// Config keys in merged order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.key.as_str())
    }
}

/// Context for validating one entry: builds errors with file, key, path, line.
struct Validator<'a> {
    file: &'a Path,
    key: &'a str,
    doc: &'a YamlDoc,
}

type P = Vec<PathSeg>;

fn push(p: &[PathSeg], seg: &str) -> P {
    let mut v = p.to_vec();
    v.push(PathSeg::Key(seg.to_string()));
    v
}

fn idx(p: &[PathSeg], i: usize) -> P {
    let mut v = p.to_vec();
    v.push(PathSeg::Index(i));
    v
}

const SPEC_DECODING: [&str; 3] = ["mtp", "draft_model", "none"];

impl Validator<'_> {
    fn err(&self, path: &[PathSeg], cause: impl Into<String>) -> ConfigError {
        let mut full = vec![PathSeg::Key(self.key.to_string())];
        full.extend_from_slice(path);
        ConfigError {
            file: self.file.to_path_buf(),
            key: Some(self.key.to_string()),
            path: yaml::dotted(path),
            line: self.doc.line_of(&full),
            cause: cause.into(),
            kind: ConfigErrorKind::Invalid,
        }
    }

    fn mapping<'v>(
        &self,
        v: &'v Value,
        path: &[PathSeg],
    ) -> Result<&'v Map<String, Value>, ConfigError> {
        v.as_object().ok_or_else(|| {
            self.err(
                path,
                format!("must be a mapping, got {}", yaml_type_name(v)),
            )
        })
    }

    fn closed(
        &self,
        m: &Map<String, Value>,
        allowed: &[&str],
        path: &[PathSeg],
    ) -> Result<(), ConfigError> {
        for k in m.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(self.err(
                    &push(path, k),
                    format!(
                        "extra field '{k}' is not permitted here (allowed: {})",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn required<'v>(
        &self,
        m: &'v Map<String, Value>,
        name: &str,
        path: &[PathSeg],
    ) -> Result<&'v Value, ConfigError> {
        match m.get(name) {
            None => Err(self.err(&push(path, name), format!("field '{name}' is required"))),
            Some(Value::Null) => Err(self.err(
                &push(path, name),
                format!("field '{name}' must not be null"),
            )),
            Some(v) => Ok(v),
        }
    }

    fn as_string(&self, v: &Value, name: &str, path: &[PathSeg]) -> Result<String, ConfigError> {
        v.as_str().map(str::to_string).ok_or_else(|| {
            self.err(
                &push(path, name),
                format!("'{name}' must be a string, got {}", yaml_type_name(v)),
            )
        })
    }

    fn req_str(
        &self,
        m: &Map<String, Value>,
        name: &str,
        path: &[PathSeg],
    ) -> Result<String, ConfigError> {
        let v = self.required(m, name, path)?;
        self.as_string(v, name, path)
    }

    fn as_int(&self, v: &Value, name: &str, path: &[PathSeg]) -> Result<i64, ConfigError> {
        v.as_i64().ok_or_else(|| {
            self.err(
                &push(path, name),
                format!("'{name}' must be an integer, got {}", yaml_type_name(v)),
            )
        })
    }

    fn req_int(
        &self,
        m: &Map<String, Value>,
        name: &str,
        path: &[PathSeg],
    ) -> Result<i64, ConfigError> {
        let v = self.required(m, name, path)?;
        self.as_int(v, name, path)
    }

    fn opt_int(
        &self,
        m: &Map<String, Value>,
        name: &str,
        path: &[PathSeg],
    ) -> Result<Option<i64>, ConfigError> {
        match m.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => self.as_int(v, name, path).map(Some),
        }
    }

    fn opt_bool(
        &self,
        m: &Map<String, Value>,
        name: &str,
        path: &[PathSeg],
    ) -> Result<Option<bool>, ConfigError> {
        match m.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.err(
                &push(path, name),
                format!("'{name}' must be a boolean, got {}", yaml_type_name(v)),
            )),
        }
    }

    /// `pp`, `dcp-size`, `pcp-size`: strict int > 0, default 1, null rejected.
    fn strict_pos(
        &self,
        m: &Map<String, Value>,
        name: &str,
        path: &[PathSeg],
    ) -> Result<i64, ConfigError> {
        match m.get(name) {
            None => Ok(1),
            Some(v) => {
                let n = v.as_i64().ok_or_else(|| {
                    self.err(
                        &push(path, name),
                        format!("'{name}' must be an integer, got {}", yaml_type_name(v)),
                    )
                })?;
                if n <= 0 {
                    return Err(self.err(
                        &push(path, name),
                        format!("'{name}' must be greater than 0, got {n}"),
                    ));
                }
                Ok(n)
            }
        }
    }

    fn spec_decoding(
        &self,
        m: &Map<String, Value>,
        path: &[PathSeg],
    ) -> Result<String, ConfigError> {
        match m.get("spec-decoding") {
            None => Ok("none".into()),
            Some(Value::String(s)) if SPEC_DECODING.contains(&s.as_str()) => Ok(s.clone()),
            Some(v) => Err(self.err(
                &push(path, "spec-decoding"),
                format!("'spec-decoding' must be one of 'mtp', 'draft_model', 'none', got {v}"),
            )),
        }
    }

    fn non_empty_str(&self, v: &Value, name: &str, path: &[PathSeg]) -> Result<(), ConfigError> {
        match v.as_str() {
            Some(s) if !s.is_empty() => Ok(()),
            Some(_) => Err(self.err(&push(path, name), format!("'{name}' must not be empty"))),
            None => Err(self.err(
                &push(path, name),
                format!("'{name}' must be a string, got {}", yaml_type_name(v)),
            )),
        }
    }

    /// `router` (version required) or `kv-offload-backend` (version optional), §5.9.
    fn component(
        &self,
        v: &Value,
        name: &str,
        path: &[PathSeg],
        version_required: bool,
    ) -> Result<(), ConfigError> {
        let p = push(path, name);
        let m = self.mapping(v, &p)?;
        self.closed(m, &["name", "version"], &p)?;
        let n = self.required(m, "name", &p)?;
        self.non_empty_str(n, "name", &p)?;
        let ver = if version_required {
            Some(self.required(m, "version", &p)?)
        } else {
            m.get("version").filter(|v| !v.is_null())
        };
        if let Some(ver) = ver {
            self.non_empty_str(ver, "version", &p)?;
            if ver.as_str().is_some_and(|s| s.starts_with("image:")) {
                return Err(self.err(
                    &push(&p, "version"),
                    "the version must be a component version, not an image reference ('image:…')",
                ));
            }
        }
        Ok(())
    }

    fn opt_component(
        &self,
        m: &Map<String, Value>,
        name: &str,
        path: &[PathSeg],
        version_required: bool,
    ) -> Result<Option<Value>, ConfigError> {
        match m.get(name) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(Value::Null)),
            Some(v) => {
                self.component(v, name, path, version_required)?;
                Ok(Some(v.clone()))
            }
        }
    }

    fn opt_p2p(
        &self,
        m: &Map<String, Value>,
        path: &[PathSeg],
    ) -> Result<Option<Value>, ConfigError> {
        match m.get("kv-p2p-transfer") {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(Value::Null)),
            Some(v) => {
                self.non_empty_str(v, "kv-p2p-transfer", path)?;
                Ok(Some(v.clone()))
            }
        }
    }

    fn dcp_divides(&self, tp: i64, dcp: i64, path: &[PathSeg]) -> Result<(), ConfigError> {
        if tp % dcp != 0 {
            return Err(self.err(
                &push(path, "dcp-size"),
                format!("'tp' ({tp}) must be divisible by 'dcp-size' ({dcp})"),
            ));
        }
        Ok(())
    }

    fn conc(&self, m: &Map<String, Value>, path: &[PathSeg]) -> Result<Conc, ConfigError> {
        let start = self.opt_int(m, "conc-start", path)?;
        let end = self.opt_int(m, "conc-end", path)?;
        let list = match m.get("conc-list") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => {
                let lp = push(path, "conc-list");
                let mut out = Vec::with_capacity(items.len());
                for (i, it) in items.iter().enumerate() {
                    out.push(it.as_i64().ok_or_else(|| {
                        self.err(
                            &idx(&lp, i),
                            format!(
                                "'conc-list' entries must be integers, got {}",
                                yaml_type_name(it)
                            ),
                        )
                    })?);
                }
                Some(out)
            }
            Some(v) => {
                return Err(self.err(
                    &push(path, "conc-list"),
                    format!(
                        "'conc-list' must be a list of integers, got {}",
                        yaml_type_name(v)
                    ),
                ));
            }
        };
        let has_range = start.is_some() && end.is_some();
        let has_list = list.as_ref().is_some_and(|l| !l.is_empty());
        if has_range && has_list {
            return Err(self.err(
                path,
                "Cannot specify both 'conc-list' and 'conc-start'/'conc-end': use either a list or a range, not both",
            ));
        }
        if !has_range && !has_list {
            return Err(self.err(
                path,
                "Must specify either a non-empty 'conc-list' or both 'conc-start' and 'conc-end'",
            ));
        }
        if has_list {
            if let Some(bad) = list.iter().flatten().find(|c| **c <= 0) {
                return Err(self.err(
                    &push(path, "conc-list"),
                    format!("'conc-list' entries must be greater than 0, got {bad}"),
                ));
            }
        } else if let (Some(s), Some(e)) = (start, end) {
            if s <= 0 || e <= 0 {
                return Err(self.err(
                    &push(path, "conc-start"),
                    "'conc-start' and 'conc-end' must be greater than 0",
                ));
            }
            if s > e {
                return Err(self.err(
                    &push(path, "conc-start"),
                    format!("'conc-start' ({s}) must be <= 'conc-end' ({e})"),
                ));
            }
        }
        Ok(Conc { start, end, list })
    }

    fn worker(&self, v: &Value, path: &[PathSeg]) -> Result<WorkerPool, ConfigError> {
        let m = self.mapping(v, path)?;
        self.closed(
            m,
            &[
                "num-worker",
                "tp",
                "ep",
                "dp-attn",
                "pp",
                "dcp-size",
                "pcp-size",
                "hardware",
                "additional-settings",
            ],
            path,
        )?;
        let num_worker = self.req_int(m, "num-worker", path)?;
        let tp = self.req_int(m, "tp", path)?;
        let ep = self.req_int(m, "ep", path)?;
        let dp_attn = self.req_bool(m, "dp-attn", path)?;
        let pp = self.strict_pos(m, "pp", path)?;
        let dcp_size = self.strict_pos(m, "dcp-size", path)?;
        let pcp_size = self.strict_pos(m, "pcp-size", path)?;
        let hardware = self.opt_hardware(m, path)?;
        self.additional_settings(m, path)?;
        self.dcp_divides(tp, dcp_size, path)?;
        let mut row_value = m.clone();
        for (k, d) in [("pp", pp), ("dcp-size", dcp_size), ("pcp-size", pcp_size)] {
            row_value.insert(k.to_string(), Value::from(d));
        }
        Ok(WorkerPool {
            num_worker,
            tp,
            ep,
            dp_attn,
            pp,
            dcp_size,
            pcp_size,
            hardware,
            row_value,
        })
    }

    /// A required boolean field of a worker pool.
    fn req_bool(
        &self,
        m: &Map<String, Value>,
        key: &str,
        path: &[PathSeg],
    ) -> Result<bool, ConfigError> {
        match self.required(m, key, path)? {
            Value::Bool(b) => Ok(*b),
            other => Err(self.err(
                &push(path, key),
                format!("'{key}' must be a boolean, got {}", yaml_type_name(other)),
            )),
        }
    }

    /// A worker pool's optional `hardware` (a non-empty string; null is absent).
    fn opt_hardware(
        &self,
        m: &Map<String, Value>,
        path: &[PathSeg],
    ) -> Result<Option<String>, ConfigError> {
        match m.get("hardware") {
            None | Some(Value::Null) => Ok(None),
            Some(h) => {
                self.non_empty_str(h, "hardware", path)?;
                Ok(h.as_str().map(str::to_string))
            }
        }
    }

    /// A worker pool's optional `additional-settings`: a list of strings.
    fn additional_settings(
        &self,
        m: &Map<String, Value>,
        path: &[PathSeg],
    ) -> Result<(), ConfigError> {
        match m.get("additional-settings") {
            None | Some(Value::Null) => Ok(()),
            Some(Value::Array(items)) => {
                for (i, it) in items.iter().enumerate() {
                    if !it.is_string() {
                        return Err(self.err(
                            &idx(&push(path, "additional-settings"), i),
                            format!(
                                "'additional-settings' entries must be strings, got {}",
                                yaml_type_name(it)
                            ),
                        ));
                    }
                }
                Ok(())
            }
            Some(other) => Err(self.err(
                &push(path, "additional-settings"),
                format!(
                    "'additional-settings' must be a list of strings, got {}",
                    yaml_type_name(other)
                ),
            )),
        }
    }

    fn hardware_pair(
        &self,
        p: &WorkerPool,
        d: &WorkerPool,
        path: &[PathSeg],
    ) -> Result<(), ConfigError> {
        if p.hardware.is_some() != d.hardware.is_some() {
            return Err(self.err(
                path,
                "'hardware' must be specified for both 'prefill' and 'decode', or neither",
            ));
        }
        Ok(())
    }

    fn sn_fixed(&self, v: &Value, path: &[PathSeg]) -> Result<SingleNodeFixedSearch, ConfigError> {
        let m = self.mapping(v, path)?;
        self.closed(
            m,
            &[
                "tp",
                "pp",
                "dcp-size",
                "pcp-size",
                "ep",
                "dp-attn",
                "spec-decoding",
                "router",
                "conc-start",
                "conc-end",
                "conc-list",
            ],
            path,
        )?;
        let tp = self.req_int(m, "tp", path)?;
        let pp = self.strict_pos(m, "pp", path)?;
        let dcp_size = self.strict_pos(m, "dcp-size", path)?;
        let pcp_size = self.strict_pos(m, "pcp-size", path)?;
        let ep = self.opt_int(m, "ep", path)?;
        let dp_attn = self.opt_bool(m, "dp-attn", path)?;
        let spec_decoding = self.spec_decoding(m, path)?;
        let router = self.opt_component(m, "router", path, true)?;
        let conc = self.conc(m, path)?;
        self.dcp_divides(tp, dcp_size, path)?;
        Ok(SingleNodeFixedSearch {
            tp,
            pp,
            dcp_size,
            pcp_size,
            ep,
            dp_attn,
            spec_decoding,
            router,
            conc,
        })
    }

    fn mn_fixed(&self, v: &Value, path: &[PathSeg]) -> Result<MultiNodeFixedSearch, ConfigError> {
        let m = self.mapping(v, path)?;
        self.closed(
            m,
            &[
                "prefill",
                "decode",
                "spec-decoding",
                "router",
                "kv-p2p-transfer",
                "conc-start",
                "conc-end",
                "conc-list",
            ],
            path,
        )?;
        let prefill = self.worker(self.required(m, "prefill", path)?, &push(path, "prefill"))?;
        let decode = self.worker(self.required(m, "decode", path)?, &push(path, "decode"))?;
        let spec_decoding = self.spec_decoding(m, path)?;
        let router = self.opt_component(m, "router", path, true)?;
        let kv_p2p_transfer = self.opt_p2p(m, path)?;
        let conc = self.conc(m, path)?;
        self.hardware_pair(&prefill, &decode, path)?;
        Ok(MultiNodeFixedSearch {
            prefill,
            decode,
            spec_decoding,
            router,
            kv_p2p_transfer,
            conc,
        })
    }

    fn agentic_search(&self, v: &Value, path: &[PathSeg]) -> Result<AgenticSearch, ConfigError> {
        let m = self.mapping(v, path)?;
        self.closed(
            m,
            &[
                "tp",
                "pp",
                "dcp-size",
                "pcp-size",
                "ep",
                "dp-attn",
                "spec-decoding",
                "prefill",
                "decode",
                "kv-offloading",
                "kv-offload-backend",
                "router",
                "kv-p2p-transfer",
                "conc-start",
                "conc-end",
                "conc-list",
            ],
            path,
        )?;
        let tp = self.opt_int(m, "tp", path)?;
        let pp = self.strict_pos(m, "pp", path)?;
        let dcp_size = self.strict_pos(m, "dcp-size", path)?;
        let pcp_size = self.strict_pos(m, "pcp-size", path)?;
        let ep = self.opt_int(m, "ep", path)?;
        let dp_attn = self.opt_bool(m, "dp-attn", path)?;
        let spec_decoding = self.spec_decoding(m, path)?;
        let prefill = self.opt_worker(m, "prefill", path)?;
        let decode = self.opt_worker(m, "decode", path)?;
        let kv_offloading = self.kv_offloading(m, path)?;
        let kv_offload_backend = match self.opt_component(m, "kv-offload-backend", path, false)? {
            Some(Value::Null) | None => None,
            some => some,
        };
        let router = self.opt_component(m, "router", path, true)?;
        let kv_p2p_transfer = self.opt_p2p(m, path)?;
        // Checks in the reference's order: concurrency, KV offload, topology.
        let conc = self.conc(m, path)?;
        let search = AgenticSearch {
            tp,
            pp,
            dcp_size,
            pcp_size,
            ep,
            dp_attn,
            spec_decoding,
            prefill,
            decode,
            kv_offloading,
            kv_offload_backend,
            router,
            kv_p2p_transfer,
            conc,
        };
        let offload = search.kv_offloading.clone().flatten();
        self.offload_backend_fits(
            offload.as_deref(),
            search.kv_offload_backend.is_some(),
            path,
        )?;
        self.agentic_topology(m, &search, offload.is_some(), path)?;
        Ok(search)
    }

    /// An optional worker pool (`prefill` or `decode`); null is absent.
    fn opt_worker(
        &self,
        m: &Map<String, Value>,
        key: &str,
        path: &[PathSeg],
    ) -> Result<Option<WorkerPool>, ConfigError> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(w) => Ok(Some(self.worker(w, &push(path, key))?)),
        }
    }

    /// `kv-offloading`: absent, null, `none` or `dram`.
    fn kv_offloading(
        &self,
        m: &Map<String, Value>,
        path: &[PathSeg],
    ) -> Result<Option<Option<String>>, ConfigError> {
        match m.get("kv-offloading") {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(s)) if s == "none" || s == "dram" => Ok(Some(Some(s.clone()))),
            Some(other) => Err(self.err(
                &push(path, "kv-offloading"),
                format!("'kv-offloading' must be 'none' or 'dram', got {other}"),
            )),
        }
    }

    /// `kv-offload-backend` is set exactly when `kv-offloading` is `dram`
    /// (`offload`: the offloading mode, `backend`: whether a backend is set).
    fn offload_backend_fits(
        &self,
        offload: Option<&str>,
        backend: bool,
        path: &[PathSeg],
    ) -> Result<(), ConfigError> {
        let cause = match (offload, backend) {
            (None, true) => "'kv-offload-backend' requires 'kv-offloading'",
            (Some("none"), true) => {
                "'kv-offload-backend' can only be set when 'kv-offloading' is not 'none'"
            }
            (Some("dram"), false) => {
                "'kv-offload-backend' is required when 'kv-offloading' is 'dram'"
            }
            _ => return Ok(()),
        };
        Err(self.err(&push(path, "kv-offload-backend"), cause))
    }

    /// An agentic entry is single-node (`tp`, with `kv-offloading`: `offload`
    /// says whether one is set) or multi-node (both `prefill` and `decode`,
    /// no entry-level parallelism), not both.
    fn agentic_topology(
        &self,
        m: &Map<String, Value>,
        search: &AgenticSearch,
        offload: bool,
        path: &[PathSeg],
    ) -> Result<(), ConfigError> {
        if let Some(tp) = search.tp {
            if search.prefill.is_some() || search.decode.is_some() {
                return Err(self.err(
                    path,
                    "agentic search-space entries must specify either tp or both prefill and decode, not both",
                ));
            }
            if !offload {
                return Err(self.err(
                    &push(path, "kv-offloading"),
                    "single-node agentic search-space entries must specify 'kv-offloading'",
                ));
            }
            self.dcp_divides(tp, search.dcp_size, path)
        } else {
            let (Some(p), Some(d)) = (&search.prefill, &search.decode) else {
                return Err(self.err(
                    path,
                    "agentic search-space entries must specify either tp or both prefill and decode",
                ));
            };
            let written: Vec<&str> = ["pp", "dcp-size", "pcp-size"]
                .into_iter()
                .filter(|k| m.contains_key(*k))
                .collect();
            if !written.is_empty() {
                return Err(self.err(
                    &push(path, written[0]),
                    "multi-node agentic search-space entries must not set ['pp', 'dcp-size', 'pcp-size'] at the entry level; set them in 'prefill'/'decode'",
                ));
            }
            self.hardware_pair(p, d, path)
        }
    }

    fn list<'v>(
        &self,
        m: &'v Map<String, Value>,
        name: &str,
        path: &[PathSeg],
        required: bool,
    ) -> Result<Option<&'v Vec<Value>>, ConfigError> {
        match m.get(name) {
            None if required => {
                Err(self.err(&push(path, name), format!("field '{name}' is required")))
            }
            None | Some(Value::Null) if !required => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(v) => Err(self.err(
                &push(path, name),
                format!("'{name}' must be a list, got {}", yaml_type_name(v)),
            )),
            None => Ok(None),
        }
    }

    fn entry(&self, raw: Value) -> Result<ConfigEntry, ConfigError> {
        let root: P = Vec::new();
        let m = self.mapping(&raw, &root)?;
        let Some(multinode) = self.top_flag(m, "multinode", &root)? else {
            return Err(self.err(&push(&root, "multinode"), "field 'multinode' is required"));
        };
        let mut allowed = vec![
            "image",
            "model",
            "model-prefix",
            "precision",
            "framework",
            "runner",
            "multinode",
            "disagg",
            "router",
            "scenarios",
        ];
        if multinode {
            allowed.push("kv-p2p-transfer");
        }
        self.closed(m, &allowed, &root)?;
        let image = self.req_str(m, "image", &root)?;
        let model = self.req_str(m, "model", &root)?;
        let model_prefix = self.req_str(m, "model-prefix", &root)?;
        let precision = self.req_str(m, "precision", &root)?;
        let framework = self.req_str(m, "framework", &root)?;
        let runner = self.req_str(m, "runner", &root)?;
        let disagg = self.top_flag(m, "disagg", &root)?.unwrap_or(false);
        if disagg && !multinode {
            return Err(self.err(
                &push(&root, "disagg"),
                "'disagg' must be false for single-node entries (multinode=false)",
            ));
        }
        let router = self
            .opt_component(m, "router", &root, true)?
            .filter(|v| !v.is_null());
        let kv_p2p_transfer = self.opt_p2p(m, &root)?.filter(|v| !v.is_null());

        let sp = push(&root, "scenarios");
        let (fixed, agentic) = self.scenarios(m, &root, &sp, multinode, &runner)?;
        let entry = ConfigEntry {
            key: self.key.to_string(),
            file: self.file.to_path_buf(),
            line: self.doc.line_of(&[PathSeg::Key(self.key.to_string())]),
            image,
            model,
            model_prefix,
            precision,
            framework,
            runner,
            multinode,
            disagg,
            router,
            kv_p2p_transfer,
            fixed,
            agentic,
            raw,
        };
        self.component_scope(&entry, &sp)?;
        Ok(entry)
    }

    /// `multinode` and `disagg`: a boolean, or the integer 0 or 1; `None`
    /// when absent (unlike `opt_bool`, a null is refused).
    fn top_flag(
        &self,
        m: &Map<String, Value>,
        name: &str,
        path: &[PathSeg],
    ) -> Result<Option<bool>, ConfigError> {
        match m.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::Number(n)) if n.as_i64() == Some(0) || n.as_i64() == Some(1) => {
                Ok(Some(n.as_i64() == Some(1)))
            }
            Some(v) => Err(self.err(
                &push(path, name),
                format!("'{name}' must be a boolean, got {}", yaml_type_name(v)),
            )),
        }
    }

    /// `scenarios` (at `sp`): the fixed-seq-len and agentic-coding blocks,
    /// at least one of them, and agentic ones only on a cluster runner.
    fn scenarios(
        &self,
        m: &Map<String, Value>,
        root: &[PathSeg],
        sp: &[PathSeg],
        multinode: bool,
        runner: &str,
    ) -> Result<(Vec<FixedBlock>, Vec<AgenticBlock>), ConfigError> {
        let sc = self.mapping(self.required(m, "scenarios", root)?, sp)?;
        self.closed(sc, &[FIXED_SEQ_LEN, AGENTIC_CODING], sp)?;
        let fixed = self.fixed_blocks(sc, sp, multinode)?;
        let agentic = self.agentic_blocks(sc, sp)?;
        if fixed.is_empty() && agentic.is_empty() {
            return Err(self.err(
                sp,
                "At least one scenario type must be specified in 'scenarios' (a non-empty 'fixed-seq-len' or 'agentic-coding' list)",
            ));
        }
        if !agentic.is_empty() && !runner.starts_with("cluster:") {
            return Err(self.err(
                &push(root, "runner"),
                format!("agentic master configs must use a 'cluster:<name>' runner label, got '{runner}'"),
            ));
        }
        Ok((fixed, agentic))
    }

    /// `scenarios.fixed-seq-len`: blocks of `isl`, `osl` and a search space
    /// of single- or multi-node entries.
    fn fixed_blocks(
        &self,
        sc: &Map<String, Value>,
        sp: &[PathSeg],
        multinode: bool,
    ) -> Result<Vec<FixedBlock>, ConfigError> {
        let mut fixed = Vec::new();
        let fp = push(sp, FIXED_SEQ_LEN);
        for (bi, b) in self
            .list(sc, FIXED_SEQ_LEN, sp, false)?
            .into_iter()
            .flatten()
            .enumerate()
        {
            let bp = idx(&fp, bi);
            let bm = self.mapping(b, &bp)?;
            self.closed(bm, &["isl", "osl", "search-space"], &bp)?;
            let isl = self.req_int(bm, "isl", &bp)?;
            let osl = self.req_int(bm, "osl", &bp)?;
            let ssp = push(&bp, "search-space");
            let mut search_space = Vec::new();
            for (si, s) in self
                .list(bm, "search-space", &bp, true)?
                .into_iter()
                .flatten()
                .enumerate()
            {
                let p = idx(&ssp, si);
                search_space.push(if multinode {
                    FixedSearch::Multi(Box::new(self.mn_fixed(s, &p)?))
                } else {
                    FixedSearch::Single(self.sn_fixed(s, &p)?)
                });
            }
            fixed.push(FixedBlock {
                isl,
                osl,
                search_space,
            });
        }
        Ok(fixed)
    }

    /// `scenarios.agentic-coding`: blocks of a search space and, when an
    /// entry offloads to DRAM, `dram-utilization`.
    fn agentic_blocks(
        &self,
        sc: &Map<String, Value>,
        sp: &[PathSeg],
    ) -> Result<Vec<AgenticBlock>, ConfigError> {
        let mut agentic = Vec::new();
        let ap = push(sp, AGENTIC_CODING);
        for (bi, b) in self
            .list(sc, AGENTIC_CODING, sp, false)?
            .into_iter()
            .flatten()
            .enumerate()
        {
            let bp = idx(&ap, bi);
            let bm = self.mapping(b, &bp)?;
            self.closed(bm, &["search-space", "dram-utilization"], &bp)?;
            let dram_utilization = self.dram_utilization(bm, &bp)?;
            let ssp = push(&bp, "search-space");
            let mut search_space = Vec::new();
            for (si, s) in self
                .list(bm, "search-space", &bp, true)?
                .into_iter()
                .flatten()
                .enumerate()
            {
                search_space.push(self.agentic_search(s, &idx(&ssp, si))?);
            }
            if dram_utilization.is_none()
                && search_space
                    .iter()
                    .any(|s| matches!(&s.kv_offloading, Some(Some(k)) if k == "dram"))
            {
                return Err(self.err(
                    &push(&bp, "dram-utilization"),
                    "kv-offloading='dram' requires 'dram-utilization' in the agentic block",
                ));
            }
            agentic.push(AgenticBlock {
                dram_utilization,
                search_space,
            });
        }
        Ok(agentic)
    }

    /// An agentic block's `dram-utilization`: a number in (0, 1], as
    /// written; `None` when absent or null.
    fn dram_utilization(
        &self,
        bm: &Map<String, Value>,
        bp: &[PathSeg],
    ) -> Result<Option<Value>, ConfigError> {
        match bm.get("dram-utilization") {
            None | Some(Value::Null) => Ok(None),
            Some(v @ Value::Number(n)) => {
                let f = n.as_f64().unwrap_or(0.0);
                if !(f > 0.0 && f <= 1.0) {
                    return Err(self.err(
                        &push(bp, "dram-utilization"),
                        format!("'dram-utilization' must be > 0 and <= 1, got {n}"),
                    ));
                }
                Ok(Some(v.clone()))
            }
            Some(v) => Err(self.err(
                &push(bp, "dram-utilization"),
                format!(
                    "'dram-utilization' must be a number, got {}",
                    yaml_type_name(v)
                ),
            )),
        }
    }

    /// §5.10.6 component scope: `router` and `kv-p2p-transfer` at the top
    /// level or in search-space entries, never both; an agentic entry's
    /// `kv-p2p-transfer` only for multi node; and disagg needs one.
    fn component_scope(&self, e: &ConfigEntry, sp: &[PathSeg]) -> Result<(), ConfigError> {
        let scoped = scoped_components(&e.fixed, &e.agentic, sp);
        let set = |v: Option<&Value>| v.is_some_and(|v| !v.is_null());
        for (p, r, kv, _) in &scoped {
            if e.router.is_some() && set(*r) {
                return Err(self.err(
                    &push(p, "router"),
                    "router must be declared either at the top level or in search-space entries, not both",
                ));
            }
            if e.kv_p2p_transfer.is_some() && set(*kv) {
                return Err(self.err(
                    &push(p, "kv-p2p-transfer"),
                    "kv-p2p-transfer must be declared either at the top level or in search-space entries, not both",
                ));
            }
        }
        if !e.multinode
            && let Some((p, ..)) = scoped.iter().find(|(_, _, kv, ag)| *ag && set(*kv))
        {
            return Err(self.err(
                &push(p, "kv-p2p-transfer"),
                "kv-p2p-transfer is only valid when multinode=true",
            ));
        }
        if e.disagg && e.kv_p2p_transfer.is_none() {
            let missing = scoped.iter().find(|(_, _, kv, _)| !set(*kv));
            if scoped.is_empty() || missing.is_some() {
                let p = missing.map_or_else(|| sp.to_vec(), |(p, ..)| p.clone());
                return Err(self.err(
                    &p,
                    "disagg=true requires kv-p2p-transfer at the top level or in every search-space entry",
                ));
            }
        }
        Ok(())
    }
}

/// One search-space entry's components for the scope check: its path, its
/// `router`, its `kv-p2p-transfer`, and whether it is agentic.
type Scoped<'a> = (P, Option<&'a Value>, Option<&'a Value>, bool);

/// Every search-space entry's components, fixed-seq-len blocks first.
fn scoped_components<'a>(
    fixed: &'a [FixedBlock],
    agentic: &'a [AgenticBlock],
    sp: &[PathSeg],
) -> Vec<Scoped<'a>> {
    let fp = push(sp, FIXED_SEQ_LEN);
    let ap = push(sp, AGENTIC_CODING);
    let mut scoped: Vec<Scoped<'a>> = Vec::new();
    for (bi, b) in fixed.iter().enumerate() {
        for (si, s) in b.search_space.iter().enumerate() {
            let p = idx(&push(&idx(&fp, bi), "search-space"), si);
            match s {
                FixedSearch::Single(s) => scoped.push((p, s.router.as_ref(), None, false)),
                FixedSearch::Multi(s) => {
                    scoped.push((p, s.router.as_ref(), s.kv_p2p_transfer.as_ref(), false))
                }
            }
        }
    }
    for (bi, b) in agentic.iter().enumerate() {
        for (si, s) in b.search_space.iter().enumerate() {
            let p = idx(&push(&idx(&ap, bi), "search-space"), si);
            scoped.push((p, s.router.as_ref(), s.kv_p2p_transfer.as_ref(), true));
        }
    }
    scoped
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn load(text: &str) -> Result<MasterConfigs, ConfigError> {
        let doc = yaml::parse_str(text).unwrap();
        MasterConfigs::from_docs(vec![(PathBuf::from("m.yaml"), doc)])
    }

    const SN: &str = "k1:\n  image: img\n  model: m\n  model-prefix: mp\n  precision: fp8\n  framework: sglang\n  runner: h200\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-start: 4, conc-end: 64 }\n";

    #[test]
    fn range_expansion() {
        assert_eq!(expand_range(4, 64, 2), vec![4, 8, 16, 32, 64]);
        assert_eq!(expand_range(4, 100, 2), vec![4, 8, 16, 32, 64, 100]);
        assert_eq!(expand_range(16, 16, 2), vec![16]);
        assert_eq!(expand_range(32, 33, 2), vec![32, 33]);
        assert_eq!(expand_range(5, 90, 3), vec![5, 15, 45, 90]);
    }

    #[test]
    fn valid_sn_entry() {
        let c = load(SN).unwrap();
        let e = c.get("k1").unwrap();
        assert!(!e.multinode);
        let FixedSearch::Single(s) = &e.fixed[0].search_space[0] else {
            panic!()
        };
        assert_eq!((s.tp, s.pp, s.ep), (8, 1, None));
        assert_eq!(s.conc.values(2), vec![4, 8, 16, 32, 64]);
    }

    #[test]
    fn unknown_field_has_path_and_line() {
        let e = load(&SN.replace("tp: 8,", "tp: 8, tp-size: 8,")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("k1"));
        assert_eq!(e.path, "scenarios.fixed-seq-len.0.search-space.0.tp-size");
        assert_eq!(e.line, Some(14));
        assert!(e.to_string().contains("m.yaml:14"), "{e}");
    }

    #[test]
    fn missing_multinode_and_wrong_types() {
        let e = load(&SN.replace("  multinode: false\n", "")).unwrap_err();
        assert!(e.path.contains("multinode"), "{e}");
        let e = load(&SN.replace("model-prefix: mp", "model-prefix: 1.0")).unwrap_err();
        assert!(e.cause.contains("string"), "{e}");
        assert_eq!(e.line, Some(4));
    }

    #[test]
    fn conc_rules() {
        let e = load(&SN.replace("conc-end: 64", "conc-end: 64, conc-list: [1]")).unwrap_err();
        assert!(e.cause.contains("conc-list"), "{e}");
        let e = load(&SN.replace("conc-start: 4", "conc-start: 128")).unwrap_err();
        assert!(e.cause.contains("conc-start"), "{e}");
        let e = load(&SN.replace("conc-start: 4, conc-end: 64", "conc-start: 4")).unwrap_err();
        assert!(e.cause.contains("conc-list"), "{e}");
        let c = load(&SN.replace(
            "conc-start: 4, conc-end: 64",
            "conc-start: 4, conc-list: [3, 1, 3]",
        ))
        .unwrap();
        let FixedSearch::Single(s) = &c.entries[0].fixed[0].search_space[0] else {
            panic!()
        };
        assert_eq!(s.conc.values(2), vec![3, 1, 3]);
    }

    #[test]
    fn dcp_and_strict_ints() {
        let e = load(&SN.replace("tp: 8,", "tp: 8, dcp-size: 3,")).unwrap_err();
        assert!(e.cause.contains("dcp-size"), "{e}");
        let e = load(&SN.replace("tp: 8,", "tp: 8, pp: 0,")).unwrap_err();
        assert!(e.path.ends_with("pp"), "{e}");
        let e = load(&SN.replace("tp: 8,", "tp: 8, pp: true,")).unwrap_err();
        assert!(e.path.ends_with("pp"), "{e}");
    }

    #[test]
    fn star_and_duplicates_across_files() {
        let e = load(&SN.replace("k1:", "k*:")).unwrap_err();
        assert!(e.cause.contains("k*"), "{e}");
        let d1 = yaml::parse_str(SN).unwrap();
        let d2 = yaml::parse_str(SN).unwrap();
        let e = MasterConfigs::from_docs(vec![("a.yaml".into(), d1), ("b.yaml".into(), d2)])
            .unwrap_err();
        assert!(
            e.cause.contains("Duplicate") && e.cause.contains("k1"),
            "{e}"
        );
    }
}
