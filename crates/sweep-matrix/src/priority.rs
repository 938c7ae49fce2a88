//! `generate-matrix priority` (spec matrix.md §12): annotate every job of a
//! matrix payload with a CI priority score (exact decimals, half-up to three
//! places) and a deterministic queue token (SHA-256 over namespace, JSON path
//! and the job's canonical JSON, Python `json.dumps(sort_keys=True)` style).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use indexmap::IndexMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use sweep_model::python::{dumps_like_python, python_str};
use sweep_model::yaml;

use crate::decimal::Decimal;

/// A priority failure (bad policy, bad flags, unknown criteria).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PriorityError(pub String);

fn perr(m: impl Into<String>) -> PriorityError {
    PriorityError(m.into())
}

/// Run-time context from the command line.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// `--event-name`.
    pub event_name: String,
    /// `--labels-json`, parsed.
    pub labels: HashSet<String>,
    /// `--queue-namespace`.
    pub queue_namespace: String,
    /// `--pr-number`.
    pub pr_number: Option<i64>,
    /// `--criteria-json`, parsed (None = normal mode).
    pub criteria: Option<HashSet<String>>,
}

/// The validated policy file.
#[derive(Debug, Clone)]
pub struct Policy {
    raw: Map<String, Value>,
    base: Decimal,
}

fn num(v: &Value, what: &str) -> Result<Decimal, PriorityError> {
    let text = match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => {
            return Err(perr(format!(
                "policy value {what} must be a number, got {other}"
            )));
        }
    };
    Decimal::parse(&text)
        .ok_or_else(|| perr(format!("policy value {what} is not a number: {text}")))
}

impl Policy {
    /// Loads a policy file (YAML).
    ///
    /// # Errors
    /// Unreadable file, bad YAML, wrong `version`, missing required parts.
    pub fn load(path: &Path) -> Result<Self, PriorityError> {
        let doc = yaml::load_file(path).map_err(|e| perr(e.to_string()))?;
        Self::from_value(doc.into_value(), &path.display().to_string())
    }

    /// Validates a parsed policy; `name` is used in messages.
    ///
    /// # Errors
    /// As [`Policy::load`].
    pub fn from_value(v: Value, name: &str) -> Result<Self, PriorityError> {
        let Value::Object(raw) = v else {
            return Err(perr(format!(
                "{name}: the CI priority policy must be a mapping"
            )));
        };
        match raw.get("version") {
            Some(Value::Number(n)) if n.as_i64() == Some(1) || n.as_f64() == Some(1.0) => {}
            other => {
                let shown = other.map_or_else(|| "None".to_string(), Value::to_string);
                return Err(perr(format!(
                    "{name}: unsupported CI priority policy version: {shown} (expected version: 1)"
                )));
            }
        }
        let base = num(
            raw.get("base-score")
                .ok_or_else(|| perr(format!("{name}: 'base-score' is required")))?,
            "base-score",
        )?;
        if !raw.get("adjustments").is_some_and(Value::is_object) {
            return Err(perr(format!("{name}: 'adjustments' must be a mapping")));
        }
        let Some(Value::Object(labels)) = raw.get("labels") else {
            return Err(perr(format!("{name}: 'labels' must be a mapping")));
        };
        let Some(Value::Object(pw)) = labels.get("patchwork") else {
            return Err(perr(format!("{name}: 'labels.patchwork' is required")));
        };
        if !pw.get("names").is_some_and(Value::is_array) || !pw.contains_key("score") {
            return Err(perr(format!(
                "{name}: 'labels.patchwork' needs 'names' and 'score'"
            )));
        }
        Ok(Policy { raw, base })
    }

    fn adjustments(&self) -> &Map<String, Value> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        match self.raw.get("adjustments") {
            Some(Value::Object(m)) => m,
            _ => EMPTY.get_or_init(Map::new),
        }
    }

    fn adj_map(&self, name: &str) -> Option<&Map<String, Value>> {
        self.adjustments().get(name).and_then(Value::as_object)
    }

    fn label_section(&self, name: &str) -> Option<&Map<String, Value>> {
        self.raw
            .get("labels")
            .and_then(|l| l.get(name))
            .and_then(Value::as_object)
    }

    fn names(section: Option<&Map<String, Value>>, key: &str) -> HashSet<String> {
        section
            .and_then(|s| s.get(key))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn supported(&self) -> HashSet<String> {
        let mut s: HashSet<String> = [
            "multi-node",
            "agentic",
            "eval-only",
            "checklist-complete",
            "patchwork",
        ]
        .iter()
        .map(|x| (*x).to_string())
        .collect();
        for sec in [
            "precision",
            "spec-decoding",
            "framework-prefix",
            "model-prefix",
        ] {
            if let Some(m) = self.adj_map(sec) {
                s.extend(m.keys().cloned());
            }
        }
        s
    }
}

/// Python's `str()` of a job field, as the reference applies it; a missing
/// field is the empty string.
fn field_str(v: Option<&Value>) -> String {
    v.map_or_else(String::new, python_str)
}

fn prefix_match(value: &str, prefix: &str) -> bool {
    value == prefix || value.starts_with(&format!("{prefix}-"))
}

/// The priority score of one job, rounded to three places.
///
/// # Errors
/// Unknown criteria (criteria mode) or a non-numeric policy value.
pub fn score(
    job: &Map<String, Value>,
    policy: &Policy,
    ctx: &Context,
) -> Result<Decimal, PriorityError> {
    let patch = policy.label_section("patchwork");
    let patch_names = Policy::names(patch, "names");
    let waive = Policy::names(patch, "waived-by");
    let crit = ctx.criteria.as_ref();
    let patch_hit = crit.is_some_and(|c| c.contains("patchwork"))
        || ctx.labels.iter().any(|l| patch_names.contains(l));
    if patch_hit && !ctx.labels.iter().any(|l| waive.contains(l)) {
        let s = patch.and_then(|p| p.get("score")).unwrap_or(&Value::Null);
        return Ok(num(s, "labels.patchwork.score")?.round_half_up(3));
    }
    let synthetic;
    let job = if let Some(c) = crit {
        synthetic = criteria_job(job, c, policy)?;
        &synthetic
    } else {
        job
    };
    adjusted_total(job, policy, ctx)
}

/// The base score plus every adjustment that applies to `job`.
fn adjusted_total(
    job: &Map<String, Value>,
    policy: &Policy,
    ctx: &Context,
) -> Result<Decimal, PriorityError> {
    let crit = ctx.criteria.as_ref();
    let adj = policy.adjustments();
    let mut total = policy.base;
    let add = |total: &mut Decimal, v: Option<&Value>, what: &str| -> Result<(), PriorityError> {
        if let Some(v) = v {
            *total = total
                .checked_add(num(v, what)?)
                .ok_or_else(|| perr("priority score overflow"))?;
        }
        Ok(())
    };
    add(
        &mut total,
        policy.adj_map("event").and_then(|m| m.get(&ctx.event_name)),
        "adjustments.event",
    )?;
    if job.get("prefill").is_some_and(|p| !p.is_null()) {
        add(&mut total, adj.get("multi-node"), "adjustments.multi-node")?;
    }
    if job.get("scenario-type").and_then(Value::as_str) == Some("agentic-coding") {
        add(&mut total, adj.get("agentic"), "adjustments.agentic")?;
    }
    if job.get("eval-only") == Some(&Value::Bool(true)) {
        add(&mut total, adj.get("eval-only"), "adjustments.eval-only")?;
    }
    for (sec, field) in [
        ("precision", "precision"),
        ("spec-decoding", "spec-decoding"),
    ] {
        let key = field_str(job.get(field));
        add(
            &mut total,
            policy.adj_map(sec).and_then(|m| m.get(&key)),
            sec,
        )?;
    }
    let framework = field_str(job.get("framework"));
    if let Some(m) = policy.adj_map("framework-prefix") {
        let hit = m
            .iter()
            .find(|(k, _)| prefix_match(&framework, k))
            .map(|(_, v)| v);
        add(&mut total, hit, "adjustments.framework-prefix")?;
    }
    let mp = field_str(job.get("model-prefix"));
    add(
        &mut total,
        policy.adj_map("model-prefix").and_then(|m| m.get(&mp)),
        "adjustments.model-prefix",
    )?;
    let checklist = policy.label_section("checklist-complete");
    let check_names = Policy::names(checklist, "names");
    if crit.is_some_and(|c| c.contains("checklist-complete"))
        || ctx.labels.iter().any(|l| check_names.contains(l))
    {
        add(
            &mut total,
            checklist.and_then(|c| c.get("adjustment")),
            "labels.checklist-complete.adjustment",
        )?;
    }
    Ok(total.round_half_up(3))
}

/// In criteria mode, the job as the adjustments see it: only the fields
/// the named criteria select keep their values.
///
/// # Errors
/// A criterion the policy does not support.
fn criteria_job(
    job: &Map<String, Value>,
    c: &HashSet<String>,
    policy: &Policy,
) -> Result<Map<String, Value>, PriorityError> {
    let supported = policy.supported();
    let mut unknown: Vec<&String> = c.iter().filter(|x| !supported.contains(*x)).collect();
    if !unknown.is_empty() {
        unknown.sort();
        let list: Vec<String> = unknown.iter().map(|u| format!("'{u}'")).collect();
        return Err(perr(format!(
            "Unknown CI priority criteria: [{}]",
            list.join(", ")
        )));
    }
    let precision = field_str(job.get("precision"));
    let spec = field_str(job.get("spec-decoding"));
    let framework = field_str(job.get("framework"));
    let model_prefix = field_str(job.get("model-prefix"));
    let any_prefix = |sec: &str, v: &str| {
        policy
            .adj_map(sec)
            .is_some_and(|m| m.keys().any(|k| c.contains(k) && prefix_match(v, k)))
    };
    let mut m = Map::new();
    m.insert(
        "prefill".into(),
        if c.contains("multi-node") && job.get("prefill").is_some_and(|p| !p.is_null()) {
            Value::Object(Map::new())
        } else {
            Value::Null
        },
    );
    let agentic = c.contains("agentic")
        && job.get("scenario-type").and_then(Value::as_str) == Some("agentic-coding");
    m.insert(
        "scenario-type".into(),
        (if agentic { "agentic-coding" } else { "" }).into(),
    );
    m.insert(
        "eval-only".into(),
        (c.contains("eval-only") && job.get("eval-only") == Some(&Value::Bool(true))).into(),
    );
    m.insert(
        "precision".into(),
        (if c.contains(&precision) {
            precision
        } else {
            String::new()
        })
        .into(),
    );
    m.insert(
        "spec-decoding".into(),
        (if c.contains(&spec) {
            spec
        } else {
            String::new()
        })
        .into(),
    );
    let fw_ok = any_prefix("framework-prefix", &framework);
    m.insert(
        "framework".into(),
        (if fw_ok { framework } else { String::new() }).into(),
    );
    let mp_ok = any_prefix("model-prefix", &model_prefix);
    m.insert(
        "model-prefix".into(),
        (if mp_ok { model_prefix } else { String::new() }).into(),
    );
    Ok(m)
}

/// Queue token: first 32 hex chars of SHA-256(`ns:path:canonical-json`).
#[must_use]
pub fn queue_token(job: &Value, namespace: &str, path: &[String]) -> String {
    let material = format!("{namespace}:{}:{}", path.join("/"), dumps_like_python(job));
    let digest = Sha256::digest(material.as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        let _ = write!(hex, "{b:02x}");
    }
    hex.truncate(32);
    hex
}

/// Annotates every job in `payload` (§12.3), returning the new payload.
///
/// # Errors
/// See [`score`].
pub fn annotate(payload: &Value, policy: &Policy, ctx: &Context) -> Result<Value, PriorityError> {
    let mut path = Vec::new();
    walk(payload, policy, ctx, &mut path)
}

fn walk(
    v: &Value,
    policy: &Policy,
    ctx: &Context,
    path: &mut Vec<String>,
) -> Result<Value, PriorityError> {
    match v {
        Value::Array(a) => {
            let mut out = Vec::with_capacity(a.len());
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                out.push(walk(x, policy, ctx, path)?);
                path.pop();
            }
            Ok(Value::Array(out))
        }
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                path.push(k.clone());
                out.insert(k.clone(), walk(x, policy, ctx, path)?);
                path.pop();
            }
            if m.contains_key("runner") && m.contains_key("framework") {
                let s = score(m, policy, ctx)?;
                out.insert("priority".into(), s.to_string().into());
                out.insert(
                    "queue-token".into(),
                    queue_token(v, &ctx.queue_namespace, path).into(),
                );
                if let Some(pr) = ctx.pr_number {
                    let skip = policy
                        .label_section("skip-queue")
                        .and_then(|s| s.get("name"))
                        .and_then(Value::as_str)
                        .ok_or_else(|| perr("policy 'labels.skip-queue.name' is required when --pr-number is given"))?;
                    if ctx.labels.contains(skip) {
                        out.insert("skip-queue-pr".into(), pr.into());
                    }
                }
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

/// Deepest nesting [`annotate_text`] follows: serde_json's own parse limit,
/// so every document serde_json reads is handled (one stack frame a level).
pub const MAX_DEPTH: usize = 128;

/// The family keys of a search-space config (`generate-matrix changelog`'s
/// output): an object with one of them is a matrix even with no job in it.
pub const CONFIG_KEYS: [&str; 6] = [
    "single_node",
    "multi_node",
    "evals",
    "agentic_evals",
    "multinode_evals",
    "multinode_agentic_evals",
];

/// The payload shapes `priority` annotates, for messages.
pub const EXPECTED_SHAPE: &str = "a matrix list (a JSON array), a search-space config \
(an object with single_node, multi_node or an evals list) or a bare job object \
(with 'runner' and 'framework')";

/// Why [`annotate_text`] failed.
#[derive(Debug, thiserror::Error)]
pub enum AnnotateError {
    /// The payload is valid JSON of a shape `priority` does not annotate
    /// (exit 1: the input is judged and refused).
    #[error("expected {EXPECTED_SHAPE}; got {0}")]
    Shape(String),
    /// Not valid JSON.
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Scoring failed (policy, criteria).
    #[error(transparent)]
    Priority(#[from] PriorityError),
    /// Writing the output failed.
    #[error("cannot write the output: {0}")]
    Io(#[from] std::io::Error),
}

/// Annotates the JSON document `text` like [`annotate`] and writes the
/// result (compact JSON, byte for byte what `annotate` plus
/// `serde_json::to_writer` give) to `out`, without building the whole tree:
/// arrays and non-job objects are walked over their raw text, and only
/// each job object is materialised as a [`Value`]. Memory stays near the
/// size of `text` (a 60 MB list once peaked at 949 MB through a tree, its
/// annotated copy and the output string).
///
/// The payload must be an array, a job object, an object holding a job or
/// an object with one of [`CONFIG_KEYS`]; anything else (a string, a
/// number, `null`, an object like `{"foo": 1}`) is [`AnnotateError::Shape`].
/// `out` may hold a partial document on error: write to a temporary file.
pub fn annotate_text(
    text: &str,
    policy: &Policy,
    ctx: &Context,
    out: &mut impl std::io::Write,
) -> Result<(), AnnotateError> {
    let root: &RawValue = serde_json::from_str(text)?;
    let shape = match root.get().as_bytes().first() {
        Some(b'[' | b'{') => None,
        Some(b'"') => Some("a string"),
        Some(b'n') => Some("null"),
        Some(b't' | b'f') => Some("a boolean"),
        _ => Some("a number"),
    };
    if let Some(got) = shape {
        return Err(AnnotateError::Shape(got.to_string()));
    }
    let mut w = RawWalk {
        policy,
        ctx,
        path: Vec::new(),
        jobs: 0,
        out,
    };
    if root.get().starts_with('{') {
        let top: IndexMap<String, &RawValue> = serde_json::from_str(root.get())?;
        let config = CONFIG_KEYS.iter().any(|k| top.contains_key(*k));
        let job = top.contains_key("runner") && top.contains_key("framework");
        if !config && !job {
            // Walk into a sink first: an object holding no job is refused
            // before anything is written.
            let mut probe = RawWalk {
                policy,
                ctx,
                path: Vec::new(),
                jobs: 0,
                out: &mut std::io::sink(),
            };
            probe.visit(root, 0)?;
            if probe.jobs == 0 {
                if top.is_empty() {
                    return Err(AnnotateError::Shape("an empty object".into()));
                }
                let keys: Vec<&str> = top.keys().take(5).map(String::as_str).collect();
                let more = if top.len() > keys.len() { ", …" } else { "" };
                return Err(AnnotateError::Shape(format!(
                    "an object with no job and none of {} (keys: {}{more})",
                    CONFIG_KEYS.join(", "),
                    keys.join(", ")
                )));
            }
        }
    }
    w.visit(root, 0)
}

/// Writes `v` as compact JSON; a failure is the writer's (I/O).
fn put(out: &mut impl std::io::Write, v: &impl serde::Serialize) -> Result<(), AnnotateError> {
    serde_json::to_writer(out, v).map_err(|e| AnnotateError::Io(e.into()))
}

/// The state of [`annotate_text`]'s walk.
struct RawWalk<'a, W: std::io::Write> {
    policy: &'a Policy,
    ctx: &'a Context,
    path: Vec<String>,
    jobs: usize,
    out: &'a mut W,
}

impl<W: std::io::Write> RawWalk<'_, W> {
    fn visit(&mut self, raw: &RawValue, depth: usize) -> Result<(), AnnotateError> {
        if depth > MAX_DEPTH {
            return Err(AnnotateError::Shape(format!(
                "a document nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'[') => {
                let items: Vec<&RawValue> = serde_json::from_str(text)?;
                self.out.write_all(b"[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.write_all(b",")?;
                    }
                    self.path.push(i.to_string());
                    self.visit(item, depth + 1)?;
                    self.path.pop();
                }
                self.out.write_all(b"]")?;
            }
            Some(b'{') => {
                let entries: IndexMap<String, &RawValue> = serde_json::from_str(text)?;
                if entries.contains_key("runner") && entries.contains_key("framework") {
                    // A job (small): the tree walk scores it exactly as
                    // `annotate` does, nested jobs included.
                    let job: Value = serde_json::from_str(text)?;
                    let annotated = walk(&job, self.policy, self.ctx, &mut self.path)?;
                    put(&mut *self.out, &annotated)?;
                    self.jobs += 1;
                } else {
                    self.out.write_all(b"{")?;
                    for (i, (k, v)) in entries.iter().enumerate() {
                        if i > 0 {
                            self.out.write_all(b",")?;
                        }
                        put(&mut *self.out, k)?;
                        self.out.write_all(b":")?;
                        self.path.push(k.clone());
                        self.visit(v, depth + 1)?;
                        self.path.pop();
                    }
                    self.out.write_all(b"}")?;
                }
            }
            _ => {
                let v: Value = serde_json::from_str(text)?;
                put(&mut *self.out, &v)?;
            }
        }
        Ok(())
    }
}

/// Parses `--labels-json` / `--criteria-json`: empty or `null` → `None`.
///
/// # Errors
/// Invalid JSON, or not an array of strings (message names `flag`).
pub fn parse_string_array(raw: &str, flag: &str) -> Result<Option<HashSet<String>>, PriorityError> {
    if raw.is_empty() {
        return Ok(None);
    }
    let v: Value =
        serde_json::from_str(raw).map_err(|e| perr(format!("{flag}: invalid JSON: {e}")))?;
    match v {
        Value::Null => Ok(None),
        Value::Array(a) => a
            .into_iter()
            .map(|x| match x {
                Value::String(s) => Ok(s),
                _ => Err(perr(format!("{flag} must be a JSON array of strings"))),
            })
            .collect::<Result<HashSet<_>, _>>()
            .map(Some),
        _ => Err(perr(format!("{flag} must be a JSON array of strings"))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_and_token() {
        let job = json!({"runner":"a","framework":"trt"});
        assert_eq!(
            dumps_like_python(&job),
            r#"{"framework":"trt","runner":"a"}"#
        );
        assert_eq!(
            dumps_like_python(&json!("é/😀")),
            r#""\u00e9/\ud83d\ude00""#
        );
        let t = queue_token(&job, "local", &["0".into()]);
        assert_eq!(t.len(), 32);
        assert_ne!(t, queue_token(&job, "local", &["1".into()]));
    }

    #[test]
    fn annotate_text_writes_what_the_tree_walk_gives() {
        let job = json!({"runner": "a", "framework": "dynamo-sglang", "model-prefix": "dsr1"});
        let ctx = Context {
            event_name: "push".into(),
            queue_namespace: "ns".into(),
            ..Context::default()
        };
        for text in [
            json!([job, {"x": 1}, "not-a-job", 17, null, [job, {"y": [job]}], 1.0, -0.0, "é\u{2028}\""]).to_string(),
            json!({"single_node": {"1k1k": [job, job]}, "multi_node": {}, "evals": [],
                   "changelog_metadata": {"runner": "not-a-job", "entries": []}}).to_string(),
            json!({"wrapped": {"deeper": [job]}}).to_string(),
            json!({"runner": "b", "framework": "f", "inner": job, "priority": "old", "conc": [8]}).to_string(),
            // Duplicate keys, escapes and number spellings come out as the
            // tree gives them.
            r#"[{"runner":"a","framework":"b","runner":"c","x":1.50,"y":1E2,"z":"\u00e9"}, 12345678901234567890]"#.to_string(),
            "[]".to_string(),
        ] {
            let tree = annotate(&serde_json::from_str(&text).unwrap(), &policy(), &ctx).unwrap();
            let mut out = Vec::new();
            annotate_text(&text, &policy(), &ctx, &mut out).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), tree.to_string(), "{text}");
        }
    }

    #[test]
    fn annotate_text_refuses_what_is_not_a_matrix() {
        let ctx = Context::default();
        for (text, got) in [
            (r#"{"foo": 1}"#, "an object with no job"),
            (r#"{"foo": {"bar": [1]}}"#, "an object with no job"),
            ("{}", "an empty object"),
            (r#""text""#, "a string"),
            ("42", "a number"),
            ("null", "null"),
            ("true", "a boolean"),
        ] {
            let mut out = Vec::new();
            let e = annotate_text(text, &policy(), &ctx, &mut out).unwrap_err();
            assert!(matches!(e, AnnotateError::Shape(_)), "{text}: {e}");
            assert!(
                e.to_string().ends_with(&format!("got {got}"))
                    || e.to_string().contains(&format!("got {got} ")),
                "{text}: {e}"
            );
            assert!(out.is_empty(), "{text}: nothing written");
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 2), "]".repeat(MAX_DEPTH + 2));
        let mut out = Vec::new();
        assert!(annotate_text(&deep, &policy(), &ctx, &mut out).is_err());
    }

    fn policy() -> Policy {
        Policy::from_value(
            json!({"version":1,"base-score":1.0,"adjustments":{"event":{"push":0.0005},
                "framework-prefix":{"dynamo":2,"dynamo-sglang":5},"model-prefix":{"dsr1":1}},
                "labels":{"patchwork":{"names":["pw"],"score":-3}}}),
            "p",
        )
        .unwrap()
    }

    #[test]
    fn scores() {
        let p = policy();
        let ctx = Context {
            event_name: "push".into(),
            ..Context::default()
        };
        let job = json!({"runner":"r","framework":"dynamo-sglang","model-prefix":"dsr1-long"});
        let s = score(job.as_object().unwrap(), &p, &ctx).unwrap();
        assert_eq!(s.to_string(), "3.001");
        let ctx = Context {
            labels: ["pw".to_string()].into(),
            ..Context::default()
        };
        assert_eq!(
            score(job.as_object().unwrap(), &p, &ctx)
                .unwrap()
                .to_string(),
            "-3.000"
        );
        let ctx = Context {
            criteria: Some(["bogus".to_string()].into()),
            ..Context::default()
        };
        assert!(
            score(job.as_object().unwrap(), &p, &ctx)
                .unwrap_err()
                .0
                .contains("bogus")
        );
    }

    #[test]
    fn version_checked() {
        let e = Policy::from_value(json!({"version":2}), "p").unwrap_err();
        assert!(e.0.contains("version"));
    }
}
