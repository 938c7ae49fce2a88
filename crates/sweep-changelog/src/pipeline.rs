//! The changelog → matrix pipeline (`generate-matrix changelog`, spec §2–10)
//! over the `sweep-matrix` generator; master configs are loaded and
//! validated once per run and reused for every generator call.

use crate::append_only;
use crate::diff::{self, Diff};
use crate::git::Repo;
use crate::masters::RawMasters;
use crate::stale;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use sweep_matrix::assemble::{self, ChangelogMatrix, ChangelogMetadata};
use sweep_matrix::generate::{
    CommonOptions, LoadedConfigs, ScenarioType, TestConfigOptions, generate_test_config,
};
use sweep_matrix::keys::KeyMiss;
use sweep_matrix::row::{EvalMode, GenError};
use sweep_matrix::{MASTER_CONFIGS, RUNNER_CONFIG};
use sweep_model::changelog::{ChangelogEntry, SCENARIO_TYPES};
use sweep_model::config::{ConfigError, ConfigErrorKind, MasterConfigs};
use sweep_model::python::{python_repr_list, python_repr_str};
use sweep_model::rows::MatrixRow;
use sweep_model::runners::Runners;
use sweep_model::yaml::{self, PathSeg};

/// Why the changelog step stopped: the change was judged and refused, or an
/// input it needs could not be read (exit 1 and exit 2 of the contract,
/// `sweep_exit::Kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RejectionKind {
    /// The change is invalid: the check said no (exit 1).
    #[default]
    Invalid,
    /// A git ref, the changelog or a config file could not be read (unknown
    /// ref, shallow clone, missing or unreadable file): the job could not be
    /// done (exit 2).
    Unreadable,
}

/// A rejection: the message, the line of the head changelog it is about
/// when known (for `::error file=…,line=…::` annotations), and its kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Rejection {
    pub message: String,
    pub line: Option<usize>,
    pub kind: RejectionKind,
}

impl Rejection {
    pub fn new(message: impl Into<String>) -> Self {
        Rejection {
            message: message.into(),
            line: None,
            kind: RejectionKind::Invalid,
        }
    }

    /// An input that could not be read (exit 2).
    pub fn unreadable(message: impl Into<String>) -> Self {
        Rejection {
            kind: RejectionKind::Unreadable,
            ..Rejection::new(message)
        }
    }

    fn at(message: impl Into<String>, line: Option<usize>) -> Self {
        Rejection {
            line,
            ..Rejection::new(message)
        }
    }

    /// The same rejection with its message replaced (kind and line kept).
    #[must_use]
    pub fn with_message(self, message: impl Into<String>) -> Self {
        Rejection {
            message: message.into(),
            ..self
        }
    }
}

/// Invalid is a "no" (exit 1), unreadable could not do the job (exit 2).
impl sweep_exit::Classify for Rejection {
    fn kind(&self) -> sweep_exit::Kind {
        match self.kind {
            RejectionKind::Invalid => sweep_exit::Kind::Rejected,
            RejectionKind::Unreadable => sweep_exit::Kind::Failed,
        }
    }
}

/// An append-only entry the scope or delta rules refuse.
impl From<crate::append_only::AppendOnlyError> for Rejection {
    fn from(e: crate::append_only::AppendOnlyError) -> Self {
        Rejection::new(e.to_string())
    }
}

impl From<String> for Rejection {
    fn from(message: String) -> Self {
        Rejection::new(message)
    }
}

/// The loader's message; an entry whose content fails validation is
/// introduced the way the reference does ("Master config entry '<key>'
/// failed validation").
impl From<ConfigError> for Rejection {
    fn from(e: ConfigError) -> Self {
        match (&e.key, e.kind) {
            (Some(key), ConfigErrorKind::Invalid) => Rejection::new(format!(
                "Master config entry '{key}' failed validation: {e}"
            )),
            (_, ConfigErrorKind::Unreadable) => Rejection::unreadable(e.to_string()),
            _ => Rejection::new(e.to_string()),
        }
    }
}

impl From<GenError> for Rejection {
    fn from(e: GenError) -> Self {
        match e {
            GenError::Config(e) => e.into(),
            GenError::Generate(message) => Rejection::new(message),
        }
    }
}

/// One `test-config` call (matrix spec §7.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestConfig<'a> {
    pub keys: &'a [String],
    /// `--scenario-type`; `None` = all.
    pub scenario_types: Option<Vec<&'static str>>,
    pub no_evals: bool,
    pub evals_only: bool,
    pub all_evals: bool,
}

/// Loads, merges and validates master configs given as (path, text) in
/// order.
fn load_masters(files: &[(String, String)]) -> Result<MasterConfigs, ConfigError> {
    let mut docs = Vec::with_capacity(files.len());
    for (path, text) in files {
        let path = PathBuf::from(path);
        let doc = yaml::parse_str(text).map_err(|e| ConfigError::from(e.in_file(&path)))?;
        docs.push((path, doc));
    }
    MasterConfigs::from_docs(docs)
}

/// The merged raw mapping (file order), for key resolution and the
/// append-only scope comparison.
fn raw_masters(masters: &MasterConfigs) -> RawMasters<'_> {
    RawMasters::new(masters.entries.iter().map(|e| (e.key.as_str(), &e.raw)))
}

/// Adds the runner config (path, text) to validated masters.
fn with_runners(
    masters: MasterConfigs,
    path: &str,
    text: &str,
) -> Result<LoadedConfigs, ConfigError> {
    let p = Path::new(path);
    let doc = yaml::parse_str(text).map_err(|mut e| {
        e.path = Some(p.to_path_buf());
        ConfigError::from(e)
    })?;
    let runners = Runners::from_doc(p, &doc)?;
    Ok(LoadedConfigs { masters, runners })
}

/// The rows of one `test-config` call, as the generator emits them.
fn test_config(loaded: &LoadedConfigs, call: &TestConfig<'_>) -> Result<Vec<MatrixRow>, GenError> {
    let evals = if call.no_evals {
        EvalMode::NoEvals
    } else if call.all_evals {
        EvalMode::AllEvals
    } else if call.evals_only {
        EvalMode::EvalsOnly
    } else {
        EvalMode::Default
    };
    let scenario_types = call.scenario_types.as_ref().map(|types| {
        types
            .iter()
            .map(|t| {
                if *t == "agentic-coding" {
                    ScenarioType::AgenticCoding
                } else {
                    ScenarioType::FixedSeqLen
                }
            })
            .collect()
    });
    let opts = TestConfigOptions {
        common: CommonOptions {
            scenario_types,
            evals,
            ..CommonOptions::default()
        },
        config_keys: call.keys.to_vec(),
        conc: None,
    };
    generate_test_config(loaded, &opts)
}

/// Flags of `generate-matrix changelog`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub base_ref: String,
    pub head_ref: String,
    pub changelog_file: String,
    pub trim_conc: bool,
    pub all_evals: bool,
    pub evals_only: bool,
}

/// Parsed additions: the raw YAML value and the validated entries.
#[derive(Debug, Clone)]
pub struct Additions {
    pub raw: Value,
    pub entries: Vec<ChangelogEntry>,
    /// Head-file line of each entry's `config-keys` items (for annotations).
    pub key_lines: Vec<Vec<Option<usize>>>,
}

/// Steps 1–3: added lines, YAML, entry schema.
pub fn read_additions(repo: &Repo, opts: &Options) -> Result<Additions, Rejection> {
    let out = repo
        .diff(&opts.base_ref, &opts.head_ref, &opts.changelog_file)
        .map_err(|e| Rejection::unreadable(e.message))?;
    let d =
        diff::parse(&out).map_err(|e| Rejection::new(format!("{}: {e}", opts.changelog_file)))?;
    if let Some(first) = d.removed.first() {
        let deletion = format!(
            "Deletions are not allowed in {}. Only additions to the changelog are permitted. \
             Found deleted line: {}",
            opts.changelog_file, first.text
        );
        let message = match stale::diagnose(
            repo,
            &opts.base_ref,
            &opts.head_ref,
            &opts.changelog_file,
            &d.removed,
        ) {
            Some(diag) => format!("{diag}\n({deletion})"),
            None => deletion,
        };
        return Err(Rejection::at(message, Some(first.head_line.max(1))));
    }
    parse_additions(&d)
}

/// Steps 2–3 on an already classified diff.
pub fn parse_additions(d: &Diff) -> Result<Additions, Rejection> {
    let text = d.added_text();
    if diff::is_blank(&text) {
        return Err(Rejection::new("No additions found in the changelog file."));
    }
    check_printable(d, &text)?;
    let doc = parse_added_yaml(d, &text)?;
    let raw = doc.value().clone();
    if py_falsy(&raw) {
        return Err(Rejection::new(
            "No valid YAML entries found in the changelog additions.",
        ));
    }
    let items = iterated_items(&raw)?;
    let entries = validated_entries(d, &doc, &raw, &items)?;
    let key_lines = config_key_lines(d, &doc, &raw, &entries);
    Ok(Additions {
        raw,
        entries,
        key_lines,
    })
}

/// Every added character is one PyYAML's reader accepts.
fn check_printable(d: &Diff, text: &str) -> Result<(), Rejection> {
    if let Some((n, c)) = text
        .split('\n')
        .enumerate()
        .find_map(|(i, l)| l.chars().find(|&c| !yaml_printable(c)).map(|c| (i + 1, c)))
    {
        return Err(Rejection::at(
            format!(
                "unacceptable character #x{:04x}: special characters are not allowed (added \
                 line {n})",
                c as u32
            ),
            d.head_line_of(n),
        ));
    }
    Ok(())
}

/// The added text as YAML; a parse error names its head-file line.
fn parse_added_yaml(d: &Diff, text: &str) -> Result<yaml::YamlDoc, Rejection> {
    yaml::parse_str(text).map_err(|e| {
        let line = (e.line > 0)
            .then_some(e.line)
            .and_then(|l| d.head_line_of(l));
        Rejection::at(
            format!(
                "the changelog additions are not valid YAML: {} (check the indentation: an entry \
                 starts with `- config-keys:` at the line start, its fields are indented two \
                 spaces and their list items four)",
                pyyaml_wording(&e.message, text, e.line, line)
            ),
            line,
        )
    })
}

/// What Python's `for item in raw` iterates over (list items, mapping keys,
/// string characters), or its `TypeError` for a scalar.
fn iterated_items(raw: &Value) -> Result<Vec<Value>, Rejection> {
    match raw {
        Value::Array(items) => Ok(items.clone()),
        Value::Object(m) => Ok(m.keys().map(|k| Value::String(k.clone())).collect()),
        Value::String(s) => Ok(s.chars().map(|c| Value::String(c.to_string())).collect()),
        Value::Number(n) => {
            let t = if n.is_f64() { "float" } else { "int" };
            Err(Rejection::new(format!("'{t}' object is not iterable")))
        }
        _ => Err(Rejection::new("'bool' object is not iterable")),
    }
}

/// Each item as a `ChangelogEntry`; the first that fails is rejected at
/// its line.
fn validated_entries(
    d: &Diff,
    doc: &yaml::YamlDoc,
    raw: &Value,
    items: &[Value],
) -> Result<Vec<ChangelogEntry>, Rejection> {
    let line_of = |i: usize| {
        doc.line_of(&[PathSeg::Index(i)])
            .and_then(|l| d.head_line_of(l))
    };
    let mut entries = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match ChangelogEntry::from_value(item) {
            Ok(e) => entries.push(e),
            Err(e) => {
                // Point at the offending field's own line when it is in
                // the entry (a typo), else at the entry.
                let field_line = e.first_present_field().and_then(|k| {
                    raw.is_array()
                        .then(|| doc.line_of(&[PathSeg::Index(i), PathSeg::Key(k.to_string())]))
                        .flatten()
                        .and_then(|l| d.head_line_of(l))
                });
                let line = field_line.or_else(|| {
                    if raw.is_array() {
                        line_of(i)
                    } else {
                        d.head_line_of(1)
                    }
                });
                return Err(Rejection::at(
                    format!(
                        "changelog entry {} (added): {}\n(reference wording: {})",
                        i + 1,
                        e.plain(),
                        e.reference_wording()
                    ),
                    line,
                ));
            }
        }
    }
    Ok(entries)
}

/// Head-file line of each entry's `config-keys` items.
fn config_key_lines(
    d: &Diff,
    doc: &yaml::YamlDoc,
    raw: &Value,
    entries: &[ChangelogEntry],
) -> Vec<Vec<Option<usize>>> {
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let field = if raw[i].get("config-keys").is_some() {
                "config-keys"
            } else {
                "config_keys"
            };
            (0..e.config_keys.len())
                .map(|j| {
                    let path = [
                        PathSeg::Index(i),
                        PathSeg::Key(field.to_string()),
                        PathSeg::Index(j),
                    ];
                    doc.line_of(&path).and_then(|l| d.head_line_of(l))
                })
                .collect()
        })
        .collect()
}

/// PyYAML's reader accepts only these characters.
fn yaml_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
        || c as u32 >= 0x10000
}

/// Adds PyYAML's wording for a tab used as indentation (the case the
/// reference corpus pins) to the parser's own message. `line` is the line
/// of the added text; when its line in the file (`head_line`) is known the
/// report already leads with `<file>:<line>:`, so the message does not
/// repeat a line number of the added text, which readers took for the
/// file's.
fn pyyaml_wording(msg: &str, text: &str, line: usize, head_line: Option<usize>) -> String {
    let tab_indent = line > 0
        && text
            .split('\n')
            .nth(line - 1)
            .is_some_and(|l| l.trim_start_matches(' ').starts_with('\t'));
    let msg = if tab_indent && !msg.contains("cannot start any token") {
        format!("found character '\\t' that cannot start any token ({msg})")
    } else {
        msg.to_string()
    };
    if line > 0 && head_line.is_none() {
        format!("added line {line}: {msg}")
    } else {
        msg
    }
}

fn py_falsy(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// A working-tree file; `None` when it does not exist. Not UTF-8 is
/// invalid content, any other read failure is unreadable.
fn read_worktree(repo: &Repo, path: &str) -> Result<Option<String>, Rejection> {
    let full = repo.dir().join(path);
    match sweep_model::fsio::read_bytes(&full, sweep_model::yaml::MAX_YAML_BYTES as u64) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|e| {
            Rejection::new(format!("{path}: 'utf-8' codec can't decode the file: {e}"))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Rejection::unreadable(format!("cannot read {path}: {e}"))),
    }
}

/// The master config texts; a missing one is unreadable input.
fn load_master_texts(
    mut get: impl FnMut(&str) -> Result<Option<String>, Rejection>,
) -> Result<Vec<(String, String)>, Rejection> {
    let mut files = Vec::new();
    for path in MASTER_CONFIGS {
        match get(path)? {
            Some(text) => files.push((path.to_string(), text)),
            None => {
                return Err(Rejection::unreadable(format!(
                    "Input file '{path}' does not exist."
                )));
            }
        }
    }
    Ok(files)
}

/// Resolves config keys and patterns against the merged masters (§6.3) by
/// the one key rule of [`sweep_matrix::keys::resolve`], with the
/// reference's changelog messages. The error carries the index of the
/// failing key.
pub fn resolve_keys(
    keys: &[String],
    masters: &RawMasters<'_>,
) -> Result<Vec<String>, (usize, String)> {
    let available: Vec<&str> = masters.keys().collect();
    match sweep_matrix::keys::resolve(&available, keys) {
        Ok(found) => Ok(found.into_iter().map(str::to_string).collect()),
        Err(KeyMiss::NoMatch { index, pattern }) => Err((
            index,
            format!("No config keys matched the wildcard pattern '{pattern}' in master configs."),
        )),
        Err(KeyMiss::Missing { index, key }) => Err((
            index,
            format!("Config key '{key}' not found in master configs."),
        )),
    }
}

/// " Did you mean '<key>'?" for the `j`-th config key of `entry` when a
/// master config key is within a typo of it; empty otherwise (and for
/// patterns: `*`, `?`, `[…]`).
fn did_you_mean(entry: &ChangelogEntry, j: usize, masters: &RawMasters<'_>) -> String {
    entry
        .config_keys
        .get(j)
        .filter(|k| !k.contains(['*', '?', '[']))
        .and_then(|k| sweep_model::suggest::closest(k, masters.keys()))
        .map_or_else(String::new, |s| format!(" Did you mean '{s}'?"))
}

/// The head inputs: masters until the first generator call, then masters
/// plus the runner config. The runner file is read lazily so that its
/// errors never pre-empt the earlier steps (as in the reference, where only
/// the generator reads it).
enum Head {
    Pending(MasterConfigs),
    Ready(LoadedConfigs),
    Failed,
}

impl Head {
    fn get(&mut self, repo: &Repo) -> Result<&LoadedConfigs, Rejection> {
        if let Head::Pending(_) = self {
            let Head::Pending(masters) = std::mem::replace(self, Head::Failed) else {
                return Err(Rejection::new("internal: head inputs already consumed"));
            };
            let text = read_worktree(repo, RUNNER_CONFIG)?.ok_or_else(|| {
                Rejection::unreadable(format!(
                    "Runner config file '{RUNNER_CONFIG}' does not exist."
                ))
            })?;
            *self = Head::Ready(with_runners(masters, RUNNER_CONFIG, &text)?);
        }
        match self {
            Head::Ready(loaded) => Ok(loaded),
            _ => Err(Rejection::new("internal: head inputs could not be loaded")),
        }
    }
}

/// Groups keys by their not-yet-covered scenario tuple (§7.1), updating
/// the memory.
fn group_unseen(
    keys: &[String],
    entry_scenarios: &[&str],
    memory: &mut HashMap<String, Vec<&'static str>>,
) -> Vec<(Vec<&'static str>, Vec<String>)> {
    let mut groups: Vec<(Vec<&'static str>, Vec<String>)> = Vec::new();
    for key in keys {
        let seen = memory.entry(key.clone()).or_default();
        let unseen: Vec<&'static str> = SCENARIO_TYPES
            .iter()
            .copied()
            .filter(|s| entry_scenarios.contains(s) && !seen.contains(s))
            .collect();
        if unseen.is_empty() {
            continue;
        }
        seen.extend(unseen.iter().copied());
        match groups.iter_mut().find(|(t, _)| *t == unseen) {
            Some((_, ks)) => ks.push(key.clone()),
            None => groups.push((unseen, vec![key.clone()])),
        }
    }
    groups
}

/// Drops multi-node eval rows whose `prefill.ep` is below `min` (§7.2).
/// `prefill` is the config's block as written, read as the reference reads
/// it (`int(prefill.get("ep", 1))`).
pub fn filter_prefill_ep(rows: Vec<MatrixRow>, min: Option<i64>) -> Vec<MatrixRow> {
    let Some(min) = min else { return rows };
    rows.into_iter()
        .filter(|row| match row.prefill() {
            Some(p) => match p.get("ep") {
                None => 1 >= min,
                Some(Value::Number(n)) => n
                    .as_i64()
                    .or_else(|| n.as_f64().map(|f| f.trunc() as i64))
                    .is_some_and(|ep| ep >= min),
                Some(Value::Bool(b)) => i64::from(*b) >= min,
                Some(Value::String(s)) => s.trim().parse::<i64>().is_ok_and(|ep| ep >= min),
                Some(_) => false,
            },
            None => true,
        })
        .collect()
}

/// Runs the whole pipeline and returns the output object. Errors come in
/// the spec's order: diff and entries first, then the append-only checks,
/// then the configs.
pub fn run(repo: &Repo, opts: &Options) -> Result<ChangelogMatrix, Rejection> {
    let additions = read_additions(repo, opts)?;
    generate_with(repo, opts, &additions, load_head_masters(repo))
}

/// Step 5: the working-tree master configs, loaded and validated.
pub fn load_head_masters(repo: &Repo) -> Result<MasterConfigs, Rejection> {
    let head_files = load_master_texts(|p| read_worktree(repo, p))?;
    Ok(load_masters(&head_files)?)
}

/// Steps 4–9 on parsed additions.
pub fn generate(
    repo: &Repo,
    opts: &Options,
    additions: &Additions,
) -> Result<ChangelogMatrix, Rejection> {
    generate_with(repo, opts, additions, load_head_masters(repo))
}

/// Steps 4–9 with the head masters already loaded (or their load error,
/// reported only after the append-only checks, as in the reference).
fn generate_with(
    repo: &Repo,
    opts: &Options,
    additions: &Additions,
    masters: Result<MasterConfigs, Rejection>,
) -> Result<ChangelogMatrix, Rejection> {
    let entries = &additions.entries;
    let append_only = check_append_only_sweep(entries, opts)?;
    let masters = masters?;
    let raw = raw_masters(&masters);
    let mut resolved = resolve_entries(additions, &raw)?;

    let base = if append_only {
        Some(load_base(repo, opts, &raw, &resolved)?)
    } else {
        None
    };
    let mut head = Head::Pending(masters);

    // all-evals entries first; stable otherwise.
    resolved.sort_by_key(|(e, _)| !e.all_evals);

    let mut bench_seen: HashMap<String, Vec<&'static str>> = HashMap::new();
    let mut eval_seen: HashMap<String, Vec<&'static str>> = HashMap::new();
    let mut bench: Vec<MatrixRow> = Vec::new();
    let mut evals: Vec<MatrixRow> = Vec::new();
    for (entry, keys) in &resolved {
        let scenarios = entry.scenarios();
        let suppress = opts.evals_only || entry.evals_only || entry.all_evals;
        if !suppress {
            let rows = bench_rows(
                repo,
                &mut head,
                base.as_ref(),
                keys,
                &scenarios,
                &mut bench_seen,
            )?;
            bench.extend(rows);
        }
        if entry.append_only {
            continue;
        }
        let expand_all = opts.all_evals || entry.all_evals;
        let rows = eval_rows(
            repo,
            &mut head,
            keys,
            &scenarios,
            &mut eval_seen,
            expand_all,
        )?;
        evals.extend(filter_prefill_ep(rows, entry.eval_min_prefill_ep));
    }

    if opts.trim_conc {
        bench = assemble::trim_conc(bench);
    }
    for row in &mut bench {
        let fp = assemble::recipe_fingerprint(row);
        row.set_recipe_fingerprint(fp);
    }
    let metadata = ChangelogMetadata {
        base_ref: opts.base_ref.clone(),
        head_ref: opts.head_ref.clone(),
        entries: entries.clone(),
        generate_command: None,
    };
    Ok(assemble::assemble(bench, evals, metadata))
}

/// Append-only entries sweep alone and without eval modifiers; gives
/// whether this is an append-only sweep.
fn check_append_only_sweep(entries: &[ChangelogEntry], opts: &Options) -> Result<bool, Rejection> {
    let append_only = entries.iter().any(|e| e.append_only);
    if append_only && !entries.iter().all(|e| e.append_only) {
        return Err(Rejection::new(
            "append-only entries cannot share a sweep with regular changelog entries",
        ));
    }
    if append_only && (opts.all_evals || opts.evals_only) {
        return Err(Rejection::new(
            "append-only sweeps cannot use all-evals or evals-only modifiers",
        ));
    }
    Ok(append_only)
}

/// Each entry with its config keys resolved against the head masters; an
/// unknown key is rejected at its line, with a suggestion.
fn resolve_entries<'a>(
    additions: &'a Additions,
    raw: &RawMasters<'_>,
) -> Result<Vec<(&'a ChangelogEntry, Vec<String>)>, Rejection> {
    let entries = &additions.entries;
    let mut resolved: Vec<(&ChangelogEntry, Vec<String>)> = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let keys = resolve_keys(&e.config_keys, raw).map_err(|(j, msg)| {
            let line = additions
                .key_lines
                .get(i)
                .and_then(|l| l.get(j))
                .copied()
                .flatten();
            Rejection::at(format!("{msg}{}", did_you_mean(e, j, raw)), line)
        })?;
        resolved.push((e, keys));
    }
    Ok(resolved)
}

/// One entry's benchmark rows for the (key, scenario) pairs not yet seen;
/// for an append-only sweep (`base` loaded) only the rows the base lacks.
fn bench_rows(
    repo: &Repo,
    head: &mut Head,
    base: Option<&LoadedConfigs>,
    keys: &[String],
    scenarios: &[&str],
    seen: &mut HashMap<String, Vec<&'static str>>,
) -> Result<Vec<MatrixRow>, Rejection> {
    let mut bench = Vec::new();
    for (tuple, group) in group_unseen(keys, scenarios, seen) {
        let call = TestConfig {
            keys: &group,
            scenario_types: (tuple.len() != SCENARIO_TYPES.len()).then(|| tuple.clone()),
            no_evals: true,
            evals_only: false,
            all_evals: false,
        };
        let mut rows = test_config(head.get(repo)?, &call)?;
        if let Some(base_loaded) = base {
            let base_rows = test_config(base_loaded, &call)?;
            rows = append_only::delta(&base_rows, &rows)?;
        }
        bench.extend(rows);
    }
    Ok(bench)
}

/// One entry's eval rows for the (key, scenario) pairs not yet seen
/// (`expand_all`: every eval, not only the selected ones).
fn eval_rows(
    repo: &Repo,
    head: &mut Head,
    keys: &[String],
    scenarios: &[&str],
    seen: &mut HashMap<String, Vec<&'static str>>,
    expand_all: bool,
) -> Result<Vec<MatrixRow>, Rejection> {
    let mut evals = Vec::new();
    for (tuple, group) in group_unseen(keys, scenarios, seen) {
        let call = TestConfig {
            keys: &group,
            scenario_types: Some(tuple),
            no_evals: false,
            evals_only: true,
            all_evals: expand_all,
        };
        evals.extend(test_config(head.get(repo)?, &call)?);
    }
    Ok(evals)
}

/// §6.4: base inputs for append-only entries, with the scope checks.
fn load_base(
    repo: &Repo,
    opts: &Options,
    head_raw: &RawMasters<'_>,
    resolved: &[(&ChangelogEntry, Vec<String>)],
) -> Result<LoadedConfigs, Rejection> {
    let wanted = [MASTER_CONFIGS[0], MASTER_CONFIGS[1], RUNNER_CONFIG];
    let present = repo
        .ls_tree(&opts.base_ref, &wanted)
        .map_err(|e| Rejection::unreadable(e.message))?;
    let mut missing: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|p| !present.iter().any(|q| q == p))
        .collect();
    missing.sort_unstable();
    if !missing.is_empty() {
        return Err(Rejection::new(format!(
            "append-only base revision is missing generation inputs: {}",
            python_repr_list(missing.iter().map(|p| python_repr_str(p)))
        )));
    }
    let show = |p: &str| -> Result<Option<String>, Rejection> {
        let bytes = repo.show(&opts.base_ref, p).map_err(|e| {
            Rejection::unreadable(format!("could not read {p} at {}: {e}", opts.base_ref))
        })?;
        String::from_utf8(bytes).map(Some).map_err(|e| {
            Rejection::new(format!(
                "{p} at {}: 'utf-8' codec can't decode: {e}",
                opts.base_ref
            ))
        })
    };
    let base_files = load_master_texts(show)?;
    let base_masters = load_masters(&base_files)?;
    let base_raw = raw_masters(&base_masters);

    let mut selected: Vec<(String, BTreeSet<String>)> = Vec::new();
    for (entry, keys) in resolved {
        for k in keys {
            let set = match selected.iter_mut().find(|(s, _)| s == k) {
                Some((_, set)) => set,
                None => {
                    selected.push((k.clone(), BTreeSet::new()));
                    let last = selected.len() - 1;
                    &mut selected[last].1
                }
            };
            set.extend(entry.scenarios().into_iter().map(str::to_string));
        }
    }
    let mut missing: Vec<&str> = selected
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !base_raw.contains_key(k))
        .collect();
    missing.sort_unstable();
    if !missing.is_empty() {
        return Err(Rejection::new(format!(
            "append-only requires every selected config to exist in the base revision; \
             missing: {}",
            python_repr_list(missing.iter().map(|p| python_repr_str(p)))
        )));
    }
    append_only::validate_scope(&base_raw, head_raw, &selected)?;
    let runners_text = show(RUNNER_CONFIG)?.unwrap_or_default();
    Ok(with_runners(base_masters, RUNNER_CONFIG, &runners_text)?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;
    use serde_json::json;

    /// Master configs with these keys (one small single-node entry each).
    fn masters_with(keys: &[&str]) -> MasterConfigs {
        let entry = |k: &str| {
            format!(
                "{k}:\n  image: img:v1\n  model: org/Tiny\n  model-prefix: tiny\n  precision: fp8\n  framework: sglang\n  runner: h200\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - {{ tp: 8, conc-start: 4, conc-end: 4 }}\n"
            )
        };
        let text: String = keys.iter().map(|k| entry(k)).collect();
        load_masters(&[("configs/nvidia-master.yaml".into(), text)]).unwrap()
    }

    #[test]
    fn changelog_and_test_config_select_the_same_configs_for_a_pattern() {
        let masters = masters_with(&[
            "dsr1-fp8-b200-sglang",
            "dsr1-fp4-b200-sglang",
            "dsr1-fp8-h200-trt",
            "kimi-fp4-b200-sglang",
        ]);
        let raw = raw_masters(&masters);
        for patterns in [
            &["dsr1-*"][..],
            &["dsr1-fp?-b200-sglang", "dsr1-fp4-b200-sglang"],
            &["*-b200-*", "dsr1-fp8-h200-trt"],
            &["dsr1-fp[48]-b200-*"],
            &["dsr1-fp[!4]-*"],
            &["*"],
        ] {
            let wanted: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
            let changelog = resolve_keys(&wanted, &raw).unwrap();
            let test_config = sweep_matrix::generate::resolve_keys(&masters, &wanted).unwrap();
            assert_eq!(changelog, test_config, "{patterns:?}");
        }
        assert_eq!(
            resolve_keys(&["dsr1-fp?-b200-*".into()], &raw).unwrap(),
            ["dsr1-fp8-b200-sglang", "dsr1-fp4-b200-sglang"]
        );
        // Each command keeps its own (the reference's) wording of a miss.
        assert_eq!(
            resolve_keys(&["zz-*".to_string()], &raw).unwrap_err(),
            (
                0,
                "No config keys matched the wildcard pattern 'zz-*' in master configs.".into()
            )
        );
        assert_eq!(
            resolve_keys(&["kimi-fp4-b200-sglang".into(), "nope".into()], &raw).unwrap_err(),
            (1, "Config key 'nope' not found in master configs.".into())
        );
    }

    #[test]
    fn unseen_scenarios_are_grouped_and_remembered() {
        let mut mem = HashMap::new();
        let keys = vec!["a".to_string(), "b".to_string()];
        let g = group_unseen(&keys, &["agentic-coding"], &mut mem);
        assert_eq!(g, vec![(vec!["agentic-coding"], keys.clone())]);
        let g = group_unseen(&keys, &SCENARIO_TYPES, &mut mem);
        assert_eq!(g, vec![(vec!["fixed-seq-len"], keys.clone())]);
        assert!(group_unseen(&keys, &SCENARIO_TYPES, &mut mem).is_empty());
    }

    /// A row of `tp` (single-node) or with this `prefill` block as written.
    fn row_with(prefill: Option<Value>) -> MatrixRow {
        let mut v = json!({"image": "i", "model": "m", "model-prefix": "p", "precision": "fp8",
            "framework": "f", "spec-decoding": "none", "runner": "r", "isl": 1024,
            "osl": 1024, "max-model-len": 2304, "exp-name": "e", "disagg": false,
            "run-eval": false});
        let m = v.as_object_mut().unwrap();
        match prefill {
            Some(p) => {
                m.insert("prefill".into(), p);
                m.insert("decode".into(), json!({}));
                m.insert("conc".into(), json!([4]));
            }
            None => {
                for (k, x) in [
                    ("tp", 1),
                    ("pp", 1),
                    ("dcp-size", 1),
                    ("pcp-size", 1),
                    ("ep", 1),
                ] {
                    m.insert(k.into(), json!(x));
                }
                m.insert("dp-attn".into(), json!(false));
                m.insert("conc".into(), json!(4));
            }
        }
        MatrixRow::from_map(m.clone()).unwrap()
    }

    #[test]
    fn prefill_ep_filter_keeps_single_node_rows() {
        let rows = vec![
            row_with(None),
            row_with(Some(json!({"ep": 8}))),
            row_with(Some(json!({"ep": 2}))),
            row_with(Some(json!({}))),
            row_with(Some(json!({"ep": "x"}))),
        ];
        let kept = filter_prefill_ep(rows, Some(4));
        assert_eq!(kept, vec![row_with(None), row_with(Some(json!({"ep": 8})))]);
    }

    fn diff_of(lines: &[&str]) -> Diff {
        Diff {
            added: lines
                .iter()
                .enumerate()
                .map(|(i, l)| diff::Added {
                    text: (*l).to_string(),
                    head_line: 100 + i,
                })
                .collect(),
            removed: Vec::new(),
        }
    }

    #[test]
    fn additions_parse_and_report_lines() {
        let d = diff_of(&[
            "- config-keys:",
            "    - a",
            "  description:",
            "    - x",
            "  pr-link: p",
            "  pr-link: q",
        ]);
        let a = parse_additions(&d).unwrap();
        assert_eq!(a.entries[0].pr_link, "q", "duplicate keys: last wins");
        let d = diff_of(&["", "- config-keys: [a]", "  description: [x]"]);
        let e = parse_additions(&d).unwrap_err();
        assert!(
            e.message.contains("required field 'pr-link' is missing")
                && e.message
                    .contains("ChangelogEntry: pr-link: Field required"),
            "{}",
            e.message
        );
        assert_eq!(e.line, Some(101));
        let e = parse_additions(&diff_of(&["# only a comment", "  "])).unwrap_err();
        assert_eq!(
            e.message,
            "No valid YAML entries found in the changelog additions."
        );
        let e = parse_additions(&diff_of(&["", " "])).unwrap_err();
        assert_eq!(e.message, "No additions found in the changelog file.");
        let e = parse_additions(&diff_of(&["  pr-link: x"])).unwrap_err();
        assert!(
            e.message
                .contains("valid dictionary or instance of ChangelogEntry")
        );
        let e = parse_additions(&diff_of(&["a: \"x\u{0}\""])).unwrap_err();
        assert!(
            e.message.contains("unacceptable character #x0000"),
            "{}",
            e.message
        );
        assert_eq!(
            parse_additions(&diff_of(&["5"])).unwrap_err().message,
            "'int' object is not iterable"
        );
    }

    #[test]
    fn tab_indentation_uses_pyyaml_wording() {
        let e = parse_additions(&diff_of(&["- config-keys:", "\t- a"])).unwrap_err();
        assert!(
            e.message.contains("cannot start any token"),
            "{}",
            e.message
        );
        assert_eq!(e.line, Some(101));
    }
}
