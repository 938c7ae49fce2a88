//! `perf-changelog.yaml` entries: the `ChangelogEntry` schema (validated from
//! the loaded YAML value with the reference's lax coercions and its error
//! wording) and the normalised form written into `changelog_metadata`.
//!
//! The reference validates with pydantic v2 in lax mode; the rules kept here
//! are the ones that matter for YAML input (see the changelog spec §5):
//! alias-or-field-name keys, extra keys forbidden, string-only strings,
//! pydantic's bool and int coercions, list minimum lengths, the scenario
//! literal set and the append-only whole-entry rule.

use serde_json::{Map, Value};
use std::fmt;

/// The two scenario types an entry (or a config) can cover, in the fixed
/// order used for grouping generator calls.
pub const SCENARIO_TYPES: [&str; 2] = ["fixed-seq-len", "agentic-coding"];

/// One validated changelog entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangelogEntry {
    pub config_keys: Vec<String>,
    pub description: Vec<String>,
    pub pr_link: String,
    pub evals_only: bool,
    pub all_evals: bool,
    pub append_only: bool,
    pub eval_min_prefill_ep: Option<i64>,
    pub scenario_type: Option<Vec<String>>,
}

/// One failing location of a validation, pydantic style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Dot-joined alias path, e.g. `description.0`; empty for the whole entry.
    pub loc: String,
    pub msg: String,
    pub kind: &'static str,
}

/// All failures of one entry; `Display` renders the pydantic report
/// (`1 validation error for ChangelogEntry\npr-link\n  Field required [type=missing]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryError {
    pub errors: Vec<FieldError>,
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.errors.len();
        write!(
            f,
            "{n} validation error{} for ChangelogEntry",
            if n == 1 { "" } else { "s" }
        )?;
        for e in &self.errors {
            if e.loc.is_empty() {
                write!(f, "\n  {} [type={}]", e.msg, e.kind)?;
            } else {
                write!(f, "\n{}\n  {} [type={}]", e.loc, e.msg, e.kind)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for EntryError {}

impl EntryError {
    /// sweepkit's wording: one clause per failing field, naming the field;
    /// an unknown field gets the closest accepted name ("did you mean"),
    /// and a required field that such a typo stands for is not reported
    /// missing a second time.
    #[must_use]
    pub fn plain(&self) -> String {
        let suggestion = |key: &str| {
            crate::suggest::closest(key, FIELDS.iter().flat_map(|(a, n)| [*a, *n]))
                .map(|s| FIELDS.iter().find(|(_, n)| *n == s).map_or(s, |(a, _)| *a))
        };
        let typos: Vec<&str> = self
            .errors
            .iter()
            .filter(|e| e.kind == "extra_forbidden")
            .filter_map(|e| suggestion(&e.loc))
            .collect();
        let mut clauses = Vec::new();
        for e in &self.errors {
            let clause = match e.kind {
                "extra_forbidden" => match suggestion(&e.loc) {
                    Some(s) if s != e.loc => {
                        format!("'{}' is not a changelog field; did you mean '{s}'?", e.loc)
                    }
                    _ => format!(
                        "'{}' is not a changelog field (fields: {})",
                        e.loc,
                        field_names().collect::<Vec<_>>().join(", ")
                    ),
                },
                "missing" if typos.contains(&e.loc.as_str()) => continue,
                "missing" => format!("required field '{}' is missing", e.loc),
                _ if e.loc.is_empty() => e.msg.clone(),
                _ => format!("field '{}': {}", e.loc, e.msg),
            };
            clauses.push(clause);
        }
        clauses.join("; ")
    }

    /// The reference's (pydantic's) report on one line, without its
    /// `[type=…]` tags: `1 validation error for ChangelogEntry: pr-link:
    /// Field required`.
    #[must_use]
    pub fn reference_wording(&self) -> String {
        let n = self.errors.len();
        let parts: Vec<String> = self
            .errors
            .iter()
            .map(|e| {
                if e.loc.is_empty() {
                    e.msg.clone()
                } else {
                    format!("{}: {}", e.loc, e.msg)
                }
            })
            .collect();
        format!(
            "{n} validation error{} for ChangelogEntry: {}",
            if n == 1 { "" } else { "s" },
            parts.join("; ")
        )
    }

    /// The first failing field that is present in the entry (an unknown
    /// or mistyped one), to point at its line.
    #[must_use]
    pub fn first_present_field(&self) -> Option<&str> {
        self.errors
            .iter()
            .find(|e| e.kind != "missing" && !e.loc.is_empty())
            .map(|e| e.loc.split('.').next().unwrap_or(&e.loc))
    }
}

/// The field names an entry accepts (the aliases), in model order.
pub fn field_names() -> impl Iterator<Item = &'static str> {
    FIELDS.iter().map(|(a, _)| *a)
}

/// (alias, field name) of every field, in model order.
const FIELDS: [(&str, &str); 8] = [
    ("config-keys", "config_keys"),
    ("description", "description"),
    ("pr-link", "pr_link"),
    ("evals-only", "evals_only"),
    ("all-evals", "all_evals"),
    ("append-only", "append_only"),
    ("eval-min-prefill-ep", "eval_min_prefill_ep"),
    ("scenario-type", "scenario_type"),
];

struct Collector(Vec<FieldError>);

impl Collector {
    fn push(&mut self, loc: impl Into<String>, msg: impl Into<String>, kind: &'static str) {
        self.0.push(FieldError {
            loc: loc.into(),
            msg: msg.into(),
            kind,
        });
    }
}

impl EntryError {
    /// An error about the entry as a whole (no field).
    fn single(msg: &str, kind: &'static str) -> Self {
        EntryError {
            errors: vec![FieldError {
                loc: String::new(),
                msg: msg.into(),
                kind,
            }],
        }
    }
}

/// Each field's value in `FIELDS` order, and the keys used for them: the
/// alias wins; the field-name spelling is used only when the alias is
/// absent, otherwise it is an extra input.
fn resolve_fields(map: &Map<String, Value>) -> (Vec<Option<&Value>>, Vec<&str>) {
    let mut used: Vec<&str> = Vec::new();
    let mut get = |alias: &'static str, name: &'static str| -> Option<&Value> {
        if let Some(v) = map.get(alias) {
            used.push(alias);
            Some(v)
        } else if let Some(v) = map.get(name) {
            used.push(name);
            Some(v)
        } else {
            None
        }
    };
    let raw: Vec<Option<&Value>> = FIELDS.iter().map(|(a, n)| get(a, n)).collect();
    (raw, used)
}

/// `eval-min-prefill-ep`: absent, null or an integer of at least 1
/// (`None`: an error was pushed).
fn min_prefill_ep(errs: &mut Collector, raw: Option<&Value>) -> Option<Option<i64>> {
    match raw {
        None | Some(Value::Null) => Some(None),
        Some(v) => lax_int(errs, "eval-min-prefill-ep", v).and_then(|n| {
            if n >= 1 {
                Some(Some(n))
            } else {
                errs.push(
                    "eval-min-prefill-ep",
                    "Input should be greater than or equal to 1",
                    "greater_than_equal",
                );
                None
            }
        }),
    }
}

/// `pr-link`: a required string (`None`: an error was pushed).
fn pr_link(errs: &mut Collector, raw: Option<&Value>) -> Option<String> {
    required(errs, "pr-link", raw).and_then(|v| match v {
        Value::String(s) => Some(s.clone()),
        _ => {
            errs.push("pr-link", "Input should be a valid string", "string_type");
            None
        }
    })
}

/// Every key of `map` not `used` for a field is an extra input.
fn extra_inputs(errs: &mut Collector, map: &Map<String, Value>, used: &[&str]) {
    for key in map.keys() {
        if !used.contains(&key.as_str()) {
            errs.push(
                key.clone(),
                "Extra inputs are not permitted",
                "extra_forbidden",
            );
        }
    }
}

impl ChangelogEntry {
    /// Validates one item of the parsed additions.
    pub fn from_value(value: &Value) -> Result<Self, EntryError> {
        let Some(map) = value.as_object() else {
            return Err(EntryError::single(
                "Input should be a valid dictionary or instance of ChangelogEntry",
                "model_type",
            ));
        };
        let mut errs = Collector(Vec::new());
        let (raw, used) = resolve_fields(map);

        let config_keys = required(&mut errs, "config-keys", raw[0])
            .and_then(|v| str_list(&mut errs, "config-keys", v, true));
        let description = required(&mut errs, "description", raw[1])
            .and_then(|v| str_list(&mut errs, "description", v, true));
        let pr_link = pr_link(&mut errs, raw[2]);
        let evals_only = raw[3].map_or(Some(false), |v| lax_bool(&mut errs, "evals-only", v));
        let all_evals = raw[4].map_or(Some(false), |v| lax_bool(&mut errs, "all-evals", v));
        let append_only = raw[5].map_or(Some(false), |v| lax_bool(&mut errs, "append-only", v));
        let eval_min_prefill_ep = min_prefill_ep(&mut errs, raw[6]);
        let scenario_type = match raw[7] {
            None | Some(Value::Null) => Some(None),
            Some(v) => scenario_list(&mut errs, v).map(Some),
        };
        extra_inputs(&mut errs, map, &used);
        if !errs.0.is_empty() {
            return Err(EntryError { errors: errs.0 });
        }
        let (
            Some(config_keys),
            Some(description),
            Some(pr_link),
            Some(evals_only),
            Some(all_evals),
            Some(append_only),
            Some(eval_min_prefill_ep),
            Some(scenario_type),
        ) = (
            config_keys,
            description,
            pr_link,
            evals_only,
            all_evals,
            append_only,
            eval_min_prefill_ep,
            scenario_type,
        )
        else {
            // Every `None` above pushed an error, so this is unreachable in
            // practice; report it rather than panic.
            return Err(EntryError::single(
                "Input could not be validated",
                "value_error",
            ));
        };
        if append_only && (evals_only || all_evals || eval_min_prefill_ep.is_some()) {
            return Err(EntryError::single(
                "Value error, append-only cannot be combined with eval selection fields",
                "value_error",
            ));
        }
        Ok(ChangelogEntry {
            config_keys,
            description,
            pr_link,
            evals_only,
            all_evals,
            append_only,
            eval_min_prefill_ep,
            scenario_type,
        })
    }

    /// Scenario types this entry covers (its `scenario-type`, or both).
    pub fn scenarios(&self) -> Vec<&str> {
        match &self.scenario_type {
            Some(list) => list.iter().map(String::as_str).collect(),
            None => SCENARIO_TYPES.to_vec(),
        }
    }

    /// The entry as it appears in `changelog_metadata.entries`: dash keys,
    /// defaults filled in, null fields left out.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("config-keys".into(), str_array(&self.config_keys));
        m.insert("description".into(), str_array(&self.description));
        m.insert("pr-link".into(), Value::String(self.pr_link.clone()));
        m.insert("evals-only".into(), Value::Bool(self.evals_only));
        m.insert("all-evals".into(), Value::Bool(self.all_evals));
        m.insert("append-only".into(), Value::Bool(self.append_only));
        if let Some(n) = self.eval_min_prefill_ep {
            m.insert("eval-min-prefill-ep".into(), Value::from(n));
        }
        if let Some(s) = &self.scenario_type {
            m.insert("scenario-type".into(), str_array(s));
        }
        Value::Object(m)
    }
}

fn str_array(items: &[String]) -> Value {
    Value::Array(items.iter().cloned().map(Value::String).collect())
}

fn required<'a>(errs: &mut Collector, loc: &str, v: Option<&'a Value>) -> Option<&'a Value> {
    if v.is_none() {
        errs.push(loc, "Field required", "missing");
    }
    v
}

/// Longest string accepted in an entry's `config-keys` or `description`
/// item, in bytes. Real items are at most about a thousand bytes; the text
/// ends up in job outputs (1 MB each on GitHub), so a multi-megabyte item
/// (a folded YAML string can span many short lines) is refused.
pub const MAX_ITEM_BYTES: usize = 16 * 1024;

/// Most items accepted in an entry's `config-keys` or `description` list
/// (real entries list a few dozen config keys at most).
pub const MAX_ITEMS: usize = 1000;

fn str_list(errs: &mut Collector, loc: &str, v: &Value, non_empty: bool) -> Option<Vec<String>> {
    let Value::Array(items) = v else {
        errs.push(loc, "Input should be a valid list", "list_type");
        return None;
    };
    if items.len() > MAX_ITEMS {
        errs.push(
            loc,
            format!(
                "List should have at most {MAX_ITEMS} items (MAX_ITEMS), not {}",
                items.len()
            ),
            "too_long",
        );
        return None;
    }
    let before = errs.0.len();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(s) if s.len() > MAX_ITEM_BYTES => errs.push(
                format!("{loc}.{i}"),
                format!(
                    "String should have at most {MAX_ITEM_BYTES} bytes (MAX_ITEM_BYTES), not {}",
                    s.len()
                ),
                "string_too_long",
            ),
            Value::String(s) => out.push(s.clone()),
            _ => errs.push(
                format!("{loc}.{i}"),
                "Input should be a valid string",
                "string_type",
            ),
        }
    }
    if errs.0.len() != before {
        return None;
    }
    if non_empty && out.is_empty() {
        errs.push(
            loc,
            "List should have at least 1 item after validation, not 0",
            "too_short",
        );
        return None;
    }
    Some(out)
}

fn scenario_list(errs: &mut Collector, v: &Value) -> Option<Vec<String>> {
    const LOC: &str = "scenario-type";
    let Value::Array(items) = v else {
        errs.push(LOC, "Input should be a valid list", "list_type");
        return None;
    };
    let before = errs.0.len();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(s) if SCENARIO_TYPES.contains(&s) => out.push(s.to_string()),
            _ => errs.push(
                format!("{LOC}.{i}"),
                "Input should be 'fixed-seq-len' or 'agentic-coding'",
                "literal_error",
            ),
        }
    }
    if errs.0.len() != before {
        return None;
    }
    if out.is_empty() {
        errs.push(
            LOC,
            "List should have at least 1 item after validation, not 0",
            "too_short",
        );
        return None;
    }
    Some(out)
}

/// pydantic's lax bool: booleans, 0/1, 0.0/1.0 and a fixed set of words.
fn lax_bool(errs: &mut Collector, loc: &str, v: &Value) -> Option<bool> {
    let parsed = match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => {
            let x = n.as_f64();
            if x == Some(0.0) {
                Some(false)
            } else if x == Some(1.0) {
                Some(true)
            } else {
                None
            }
        }
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
            "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
            _ => None,
        },
        _ => {
            errs.push(loc, "Input should be a valid boolean", "bool_type");
            return None;
        }
    };
    if parsed.is_none() {
        errs.push(
            loc,
            "Input should be a valid boolean, unable to interpret input",
            "bool_parsing",
        );
    }
    parsed
}

/// pydantic's lax int: integers, booleans, integral floats, numeric strings.
fn lax_int(errs: &mut Collector, loc: &str, v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                return Some(i);
            }
            match n.as_f64() {
                Some(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 9.0e18 => {
                    // Integral and in range, so the cast is exact.
                    #[allow(clippy::cast_possible_truncation)]
                    Some(x as i64)
                }
                Some(x) if x.is_finite() => {
                    errs.push(
                        loc,
                        "Input should be a valid integer, got a number with a fractional part",
                        "int_from_float",
                    );
                    None
                }
                _ => {
                    errs.push(loc, "Input should be a finite number", "finite_number");
                    None
                }
            }
        }
        Value::String(s) => {
            let t = s.trim();
            if let Ok(i) = t.replace('_', "").parse::<i64>() {
                return Some(i);
            }
            errs.push(
                loc,
                "Input should be a valid integer, unable to parse string as an integer",
                "int_parsing",
            );
            None
        }
        _ => {
            errs.push(loc, "Input should be a valid integer", "int_type");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;

    /// Issue #16 point 4: an item over MAX_ITEM_BYTES, or a list over
    /// MAX_ITEMS, is a validation error naming the field.
    #[test]
    fn oversized_items_and_lists_are_refused() {
        let long = "d".repeat(MAX_ITEM_BYTES + 1);
        let v = serde_json::json!({"config-keys": ["k"], "description": ["ok", long], "pr-link": "XXX"});
        let e = ChangelogEntry::from_value(&v).expect_err("refused");
        assert_eq!(e.errors.len(), 1, "{e}");
        assert_eq!(e.errors[0].loc, "description.1");
        assert_eq!(e.errors[0].kind, "string_too_long");
        assert!(e.errors[0].msg.contains("MAX_ITEM_BYTES"), "{e}");
        let many: Vec<String> = (0..=MAX_ITEMS).map(|i| format!("k{i}")).collect();
        let v = serde_json::json!({"config-keys": many, "description": ["d"], "pr-link": "XXX"});
        let e = ChangelogEntry::from_value(&v).expect_err("refused");
        assert_eq!(e.errors[0].loc, "config-keys");
        assert_eq!(e.errors[0].kind, "too_long");
    }

    use serde_json::json;

    fn err(v: Value) -> String {
        match ChangelogEntry::from_value(&v) {
            Ok(e) => panic!("accepted: {e:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn base() -> Value {
        json!({"config-keys": ["a"], "description": ["d"], "pr-link": "https://x/pull/1"})
    }

    #[test]
    fn minimal_entry_gets_defaults_in_output() {
        let e = ChangelogEntry::from_value(&base()).unwrap();
        assert_eq!(
            e.to_json(),
            json!({"config-keys": ["a"], "description": ["d"], "pr-link": "https://x/pull/1",
                   "evals-only": false, "all-evals": false, "append-only": false})
        );
        assert_eq!(e.scenarios(), vec!["fixed-seq-len", "agentic-coding"]);
    }

    #[test]
    fn missing_pr_link_is_reported_by_alias() {
        let s = err(json!({"config-keys": ["a"], "description": ["d"]}));
        assert!(
            s.starts_with("1 validation error for ChangelogEntry"),
            "{s}"
        );
        assert!(s.contains("pr-link\n  Field required"), "{s}");
    }

    /// Issue #38 item 3: a key typo names the key and the field it
    /// stands for, not pydantic's "2 validation errors … [type=missing]";
    /// the reference wording stays available on one line.
    #[test]
    fn key_typos_name_the_key_and_suggest_the_field() {
        let v = json!({"config-key": ["a"], "description": ["d"], "pr-link": "p"});
        let e = ChangelogEntry::from_value(&v).unwrap_err();
        assert_eq!(
            e.plain(),
            "'config-key' is not a changelog field; did you mean 'config-keys'?"
        );
        assert_eq!(
            e.reference_wording(),
            "2 validation errors for ChangelogEntry: config-keys: Field required; config-key: \
             Extra inputs are not permitted"
        );
        assert_eq!(e.first_present_field(), Some("config-key"));
        let v = json!({"config-keys": ["a"], "description": "d", "priority": 1});
        let e = ChangelogEntry::from_value(&v).unwrap_err();
        assert_eq!(
            e.plain(),
            "field 'description': Input should be a valid list; required field 'pr-link' is \
             missing; 'priority' is not a changelog field (fields: config-keys, description, \
             pr-link, evals-only, all-evals, append-only, eval-min-prefill-ep, scenario-type)"
        );
    }

    #[test]
    fn unknown_key_is_extra_input() {
        let mut v = base();
        v["priority"] = json!("high");
        let s = err(v);
        assert!(
            s.contains("priority\n  Extra inputs are not permitted"),
            "{s}"
        );
    }

    #[test]
    fn underscore_names_are_accepted_and_alias_wins() {
        let v = json!({"config_keys": ["a"], "description": ["d"], "pr_link": "x", "evals_only": "yes"});
        let e = ChangelogEntry::from_value(&v).unwrap();
        assert!(e.evals_only);
        let mut v = base();
        v["pr_link"] = json!("y");
        assert!(err(v).contains("pr_link\n  Extra inputs are not permitted"));
    }

    #[test]
    fn strings_must_be_strings() {
        let mut v = base();
        v["description"] = json!([1]);
        assert!(err(v).contains("description.0\n  Input should be a valid string"));
        let mut v = base();
        v["description"] = json!("text");
        assert!(err(v).contains("description\n  Input should be a valid list"));
        let mut v = base();
        v["config-keys"] = json!([]);
        assert!(err(v).contains("List should have at least 1 item after validation"));
    }

    #[test]
    fn lax_bools_and_ints() {
        let mut v = base();
        v["all-evals"] = json!(1);
        v["eval-min-prefill-ep"] = json!("4");
        let e = ChangelogEntry::from_value(&v).unwrap();
        assert!(e.all_evals);
        assert_eq!(e.eval_min_prefill_ep, Some(4));
        let mut v = base();
        v["evals-only"] = json!(2);
        assert!(err(v).contains("unable to interpret input"));
        let mut v = base();
        v["eval-min-prefill-ep"] = json!(2.5);
        assert!(err(v).contains("fractional part"));
        let mut v = base();
        v["eval-min-prefill-ep"] = json!(0);
        assert!(err(v).contains("greater than or equal to 1"));
        let mut v = base();
        v["eval-min-prefill-ep"] = json!(true);
        assert_eq!(
            ChangelogEntry::from_value(&v).unwrap().eval_min_prefill_ep,
            Some(1)
        );
    }

    #[test]
    fn scenario_type_literals() {
        let mut v = base();
        v["scenario-type"] = json!(["agentic-coding", "agentic-coding"]);
        let e = ChangelogEntry::from_value(&v).unwrap();
        assert_eq!(e.scenarios(), vec!["agentic-coding", "agentic-coding"]);
        let mut v = base();
        v["scenario-type"] = json!(["other"]);
        assert!(err(v).contains("Input should be 'fixed-seq-len' or 'agentic-coding'"));
    }

    #[test]
    fn non_mapping_entry_is_rejected() {
        assert!(
            err(json!("config-keys"))
                .contains("Input should be a valid dictionary or instance of ChangelogEntry")
        );
    }

    #[test]
    fn append_only_excludes_eval_fields() {
        let mut v = base();
        v["append-only"] = json!(true);
        v["evals-only"] = json!(true);
        assert!(err(v).contains("append-only cannot be combined with eval selection fields"));
    }
}
