//! The project's one YAML loader.
//!
//! The reference tools read YAML with PyYAML's `safe_load`, i.e. YAML 1.1
//! scalar resolution (`yes`/`on` are booleans, `2_063_837` is an integer,
//! `010` is octal, `1:30` is base 60, …). Off-the-shelf Rust YAML crates
//! resolve per YAML 1.2 and forget where a node came from, so this module
//! walks `saphyr-parser` events itself and builds:
//!
//! * a [`serde_json::Value`] (mapping key order preserved, like Python dicts),
//! * the 1-based source line of every node, looked up by key path
//!   ([`YamlDoc::line_of`]),
//! * the duplicate keys met on the way ([`YamlDoc::duplicate_keys`]): as in
//!   PyYAML the last value wins and the key keeps its first position.
//!
//! Anchors and aliases are resolved (an alias is a copy of the anchored
//! node), and `<<` merge keys are honoured as PyYAML does (merged pairs come
//! first, the mapping's own pairs override them).
//!
//! Streams: only single-document input is accepted, like `safe_load`; a
//! second document is an error. An empty stream is `null`.
//!
//! Non-finite floats (`.inf`, `.nan`) are recognised but cannot be
//! represented in JSON, so they are rejected with an error naming the line.
//! Timestamps (`2024-01-01`) stay strings.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};
use serde_json::{Map, Number, Value};

/// Largest YAML input accepted, in bytes. The builder keeps the value and
/// a line index of every node, about 25 times the text in memory (a
/// 15 MB config took `full-sweep` to 302 MB, docs/limits.md); a real
/// master config is about 330 KB, the 10× scale catalogue's 3.2 MB and
/// `perf-changelog.yaml` a few hundred KB, so 4 MiB holds all of them and
/// keeps every tool that reads YAML under 200 MB.
pub const MAX_YAML_BYTES: usize = 4 * 1024 * 1024;

/// Deepest nesting accepted. The builder recurses once per level, so this
/// bounds its stack; real configs nest fewer than ten levels. (It is below
/// saphyr-parser's own limit, so this is the error a deep file gets.)
pub const MAX_YAML_DEPTH: usize = 128;

/// Most nodes that aliases may add to a document. An alias is a copy of the
/// anchored node (PyYAML shares it instead), so a few nested anchors can
/// otherwise describe billions of nodes in a few hundred bytes ("billion
/// laughs"). The two real master configs hold about 25,000 nodes in all and
/// use no aliases; 100,000 copied nodes is a few tens of MB at most.
pub const MAX_ALIAS_NODES: usize = 100_000;

/// Most nodes in one document, aliases included. Each node costs about a
/// hundred bytes or more once built (value and line index), so a file
/// within [`MAX_YAML_BYTES`] made of tiny items (`- 1` lines) could
/// otherwise take gigabytes. The two real master configs hold about 25,000
/// nodes; the ten-fold scale catalogue about 250,000.
pub const MAX_YAML_NODES: usize = 1_000_000;

/// One step of a path into a document: a mapping key or a sequence index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSeg {
    /// A mapping key.
    Key(String),
    /// A sequence index (0-based).
    Index(usize),
}

impl fmt::Display for PathSeg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathSeg::Key(k) => f.write_str(k),
            PathSeg::Index(i) => write!(f, "{i}"),
        }
    }
}

/// Formats a path the way the reference's validation errors do:
/// segments joined by `.` (`scenarios.fixed-seq-len.0.search-space.0.tp-size`).
#[must_use]
pub fn dotted(path: &[PathSeg]) -> String {
    let mut out = String::new();
    for (i, seg) in path.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(&seg.to_string());
    }
    out
}

/// A key that appeared twice in one mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// Path of the key (the mapping's path plus the key).
    pub path: Vec<PathSeg>,
    /// Line of the first occurrence (whose position is kept).
    pub first_line: usize,
    /// Line of the later occurrence (whose value wins).
    pub line: usize,
}

/// A YAML syntax or resolution error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct YamlError {
    /// The file, when loaded with [`load_file`].
    pub path: Option<PathBuf>,
    /// What went wrong.
    pub message: String,
    /// 1-based line (0 when unknown, e.g. the file could not be read).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// The file could not be opened or read (I/O, not UTF-8): the input is
    /// missing rather than invalid, which the tools report with exit 2
    /// instead of 1 (see [`crate::exit`]).
    pub unreadable: bool,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}", p.display())?;
            if self.line > 0 {
                write!(f, ":{}:{}", self.line, self.column)?;
            }
            write!(f, ": {}", self.message)
        } else if self.line > 0 {
            write!(
                f,
                "line {}, column {}: {}",
                self.line, self.column, self.message
            )
        } else {
            f.write_str(&self.message)
        }
    }
}

impl YamlError {
    /// The same error, naming the file it came from.
    #[must_use]
    pub fn in_file(mut self, path: &Path) -> Self {
        self.path = Some(path.to_path_buf());
        self
    }

    fn at(span: &Span, message: impl Into<String>) -> Self {
        YamlError {
            path: None,
            message: message.into(),
            line: span.start.line(),
            column: span.start.col() + 1,
            unreadable: false,
        }
    }
}

impl From<ScanError> for YamlError {
    fn from(e: ScanError) -> Self {
        YamlError {
            path: None,
            message: e.info().to_string(),
            line: e.marker().line(),
            column: e.marker().col() + 1,
            unreadable: false,
        }
    }
}

/// Source lines of a node and its children.
#[derive(Debug, Clone, Default)]
struct LineNode {
    line: usize,
    children: LineChildren,
}

#[derive(Debug, Clone, Default)]
enum LineChildren {
    #[default]
    Leaf,
    /// Pairs in mapping order (lookups happen only when reporting errors).
    Map(Vec<(String, LineNode)>),
    Seq(Vec<LineNode>),
}

/// A parsed YAML document: its value, the line of every node, and the
/// duplicate keys found.
#[derive(Debug, Clone)]
pub struct YamlDoc {
    value: Value,
    lines: LineNode,
    duplicates: Vec<DuplicateKey>,
}

impl YamlDoc {
    /// The document as JSON (mapping order preserved).
    #[must_use]
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Takes the value out of the document.
    #[must_use]
    pub fn into_value(self) -> Value {
        self.value
    }

    /// Moves the value out, leaving `null`; line lookups keep working.
    pub fn take_value(&mut self) -> Value {
        std::mem::take(&mut self.value)
    }

    /// 1-based line of the node at `path`. A mapping entry's line is the line
    /// of its key; a sequence item's is the line where the item starts. When
    /// the exact path does not exist, the line of the nearest existing
    /// ancestor is returned. `None` only for an empty document.
    #[must_use]
    pub fn line_of(&self, path: &[PathSeg]) -> Option<usize> {
        let mut node = &self.lines;
        for seg in path {
            let next = match (seg, &node.children) {
                (PathSeg::Key(k), LineChildren::Map(m)) => {
                    m.iter().rev().find(|(x, _)| x == k).map(|(_, n)| n)
                }
                (PathSeg::Index(i), LineChildren::Seq(v)) => v.get(*i),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        (node.line > 0).then_some(node.line)
    }

    /// Keys that appeared more than once in the same mapping, in document order.
    #[must_use]
    pub fn duplicate_keys(&self) -> &[DuplicateKey] {
        &self.duplicates
    }
}

/// Parses a single YAML document from a string.
///
/// # Errors
/// Syntax errors, a second document, unknown tags, complex keys,
/// non-finite floats, input beyond [`MAX_YAML_BYTES`], nesting beyond
/// [`MAX_YAML_DEPTH`], aliases adding more than [`MAX_ALIAS_NODES`] nodes.
pub fn parse_str(text: &str) -> Result<YamlDoc, YamlError> {
    if text.len() > MAX_YAML_BYTES {
        return Err(too_big(text.len() as u64));
    }
    Builder::new(text).document()
}

fn too_big(len: u64) -> YamlError {
    YamlError {
        path: None,
        message: format!(
            "the YAML input is {len} bytes, more than the limit of {MAX_YAML_BYTES} bytes (MAX_YAML_BYTES)"
        ),
        line: 0,
        column: 0,
        unreadable: false,
    }
}

/// Reads and parses a YAML file; every error names the path.
///
/// # Errors
/// The file cannot be read, or [`parse_str`] fails.
pub fn load_file(path: &Path) -> Result<YamlDoc, YamlError> {
    let text = read_file(path)?;
    parse_str(&text).map_err(|e| e.in_file(path))
}

/// Reads a YAML file as text, refusing one larger than [`MAX_YAML_BYTES`]
/// before reading it; the error names the path.
///
/// # Errors
/// The file cannot be read, is too large or is not UTF-8.
pub fn read_file(path: &Path) -> Result<String, YamlError> {
    use crate::fsio::{ReadError, read_regular};
    let err = |message: String| YamlError {
        path: Some(path.to_path_buf()),
        message,
        line: 0,
        column: 0,
        unreadable: true,
    };
    // A regular file only (a FIFO named `x.yaml` would block the open).
    let bytes = read_regular(path, MAX_YAML_BYTES as u64).map_err(|e| match e {
        ReadError::TooLarge { size, .. } => too_big(size).in_file(path),
        e => err(format!("cannot read file: {}", e.cause())),
    })?;
    String::from_utf8(bytes)
        .map_err(|_| err("cannot read file: stream did not contain valid UTF-8".into()))
}

struct Builder<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    /// Anchored nodes: value, lines, and node count.
    anchors: HashMap<usize, (Value, LineNode, usize)>,
    duplicates: Vec<DuplicateKey>,
    /// Nodes built so far (aliases count the nodes they copy).
    nodes: usize,
    /// Nodes copied through aliases so far (see [`MAX_ALIAS_NODES`]).
    alias_nodes: usize,
}

/// A built node: its value, its lines, and how many nodes it holds.
type Built = (Value, LineNode, usize);

impl<'a> Builder<'a> {
    fn new(text: &'a str) -> Self {
        Builder {
            parser: Parser::new_from_str(text),
            anchors: HashMap::new(),
            duplicates: Vec::new(),
            nodes: 0,
            alias_nodes: 0,
        }
    }

    /// Counts `n` more nodes, failing beyond [`MAX_YAML_NODES`].
    fn count(&mut self, n: usize, span: &Span) -> Result<(), YamlError> {
        self.nodes += n;
        if self.nodes > MAX_YAML_NODES {
            return Err(YamlError::at(
                span,
                format!("the document has more than {MAX_YAML_NODES} nodes (MAX_YAML_NODES)"),
            ));
        }
        Ok(())
    }

    fn next(&mut self) -> Result<(Event<'a>, Span), YamlError> {
        match self.parser.next_event() {
            Some(r) => Ok(r?),
            None => Err(YamlError {
                path: None,
                message: "unexpected end of YAML stream".into(),
                line: 0,
                column: 0,
                unreadable: false,
            }),
        }
    }

    fn document(&mut self) -> Result<YamlDoc, YamlError> {
        let mut result: Option<Built> = None;
        loop {
            let (ev, span) = self.next()?;
            match ev {
                Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
                Event::StreamEnd => break,
                Event::DocumentStart(_) => {
                    if result.is_some() {
                        return Err(YamlError::at(
                            &span,
                            "expected a single YAML document, found a second one",
                        ));
                    }
                    let (ev, span) = self.next()?;
                    result = Some(self.node(ev, span, 0)?);
                }
                _ => return Err(YamlError::at(&span, "unexpected YAML event")),
            }
        }
        let (value, lines, _) = result.unwrap_or((Value::Null, LineNode::default(), 0));
        Ok(YamlDoc {
            value,
            lines,
            duplicates: std::mem::take(&mut self.duplicates),
        })
    }

    fn node(&mut self, ev: Event<'a>, span: Span, depth: usize) -> Result<Built, YamlError> {
        if depth > MAX_YAML_DEPTH {
            return Err(YamlError::at(
                &span,
                format!("YAML nested more than {MAX_YAML_DEPTH} levels deep (MAX_YAML_DEPTH)"),
            ));
        }
        let line = span.start.line();
        let (anchor, built) = match ev {
            Event::Alias(id) => {
                let Some((v, l, n)) = self.anchors.get(&id) else {
                    return Err(YamlError::at(&span, "alias to an unknown anchor"));
                };
                let n = *n;
                self.alias_nodes += n;
                if self.alias_nodes > MAX_ALIAS_NODES {
                    return Err(YamlError::at(
                        &span,
                        format!(
                            "aliases expand to more than {MAX_ALIAS_NODES} nodes (MAX_ALIAS_NODES)"
                        ),
                    ));
                }
                let (v, mut l) = (v.clone(), l.clone());
                l.line = line;
                self.count(n, &span)?;
                return Ok((v, l, n));
            }
            Event::Scalar(text, style, anchor, tag) => {
                let v = resolve_scalar(text, style, tag.as_deref())
                    .map_err(|m| YamlError::at(&span, m.to_string()))?;
                self.count(1, &span)?;
                (
                    anchor,
                    (
                        v,
                        LineNode {
                            line,
                            children: LineChildren::Leaf,
                        },
                        1,
                    ),
                )
            }
            Event::SequenceStart(anchor, tag) => {
                check_collection_tag(tag.as_deref(), "seq")
                    .map_err(|m| YamlError::at(&span, m.to_string()))?;
                (anchor, self.sequence(&span, depth)?)
            }
            Event::MappingStart(anchor, tag) => {
                check_collection_tag(tag.as_deref(), "map")
                    .map_err(|m| YamlError::at(&span, m.to_string()))?;
                (anchor, self.mapping(&span, depth)?)
            }
            _ => return Err(YamlError::at(&span, "unexpected YAML event")),
        };
        if anchor > 0 {
            self.anchors.insert(anchor, built.clone());
        }
        Ok(built)
    }

    /// Puts `seg` in front of the paths of the duplicates recorded since `from`
    /// (paths are built on the way out, so no path stack is kept).
    fn prefix_duplicates(&mut self, from: usize, seg: PathSeg) {
        for d in self.duplicates.iter_mut().skip(from) {
            d.path.insert(0, seg.clone());
        }
    }

    fn sequence(&mut self, span: &Span, depth: usize) -> Result<Built, YamlError> {
        let (start, line) = (self.nodes, span.start.line());
        self.count(1, span)?;
        let mut items = Vec::new();
        let mut lines = Vec::new();
        loop {
            let (ev, span) = self.next()?;
            if matches!(ev, Event::SequenceEnd) {
                break;
            }
            let dups_before = self.duplicates.len();
            let (v, l, _) = self.node(ev, span, depth + 1)?;
            self.prefix_duplicates(dups_before, PathSeg::Index(items.len()));
            items.push(v);
            lines.push(l);
        }
        Ok((
            Value::Array(items),
            LineNode {
                line,
                children: LineChildren::Seq(lines),
            },
            self.nodes - start,
        ))
    }

    fn mapping(&mut self, span: &Span, depth: usize) -> Result<Built, YamlError> {
        let (start, line) = (self.nodes, span.start.line());
        self.count(1, span)?;
        // Own pairs in order, and merged (`<<`) pairs which PyYAML puts first.
        let mut own: Vec<(String, Value, LineNode)> = Vec::new();
        let mut merged: Vec<(String, Value, LineNode)> = Vec::new();
        loop {
            let (kev, kspan) = self.next()?;
            if matches!(kev, Event::MappingEnd) {
                break;
            }
            let key_line = kspan.start.line();
            let is_merge =
                matches!(&kev, Event::Scalar(t, ScalarStyle::Plain, _, None) if t == "<<");
            let key = self.mapping_key(kev, &kspan)?;
            let (vev, vspan) = self.next()?;
            let dups_before = self.duplicates.len();
            let (value, vlines, _) = self.node(vev, vspan, depth + 1)?;
            if self.duplicates.len() > dups_before {
                self.prefix_duplicates(dups_before, PathSeg::Key(key.clone()));
            }
            if is_merge {
                merge_into(&mut merged, value, vlines, &vspan)?;
                continue;
            }
            own.push((
                key,
                value,
                LineNode {
                    line: key_line,
                    children: vlines.children,
                },
            ));
        }
        let (map, lines) = self.combine_pairs(own, merged);
        Ok((
            Value::Object(map),
            LineNode {
                line,
                children: LineChildren::Map(lines),
            },
            self.nodes - start,
        ))
    }

    /// A mapping key as a string: a scalar (anchored keys are recorded) or
    /// an alias of one; complex keys are refused.
    fn mapping_key(&mut self, kev: Event<'a>, kspan: &Span) -> Result<String, YamlError> {
        let key_line = kspan.start.line();
        match kev {
            Event::Scalar(text, style, anchor, tag) => {
                let v = resolve_scalar(text, style, tag.as_deref())
                    .map_err(|m| YamlError::at(kspan, m.to_string()))?;
                self.count(1, kspan)?;
                if anchor > 0 {
                    let leaf = LineNode {
                        line: key_line,
                        children: LineChildren::Leaf,
                    };
                    self.anchors.insert(anchor, (v.clone(), leaf, 1));
                }
                Ok(match v {
                    Value::String(s) => s,
                    other => key_string(&other),
                })
            }
            Event::Alias(id) => match self.anchors.get(&id) {
                Some((v, _, _)) if !v.is_array() && !v.is_object() => Ok(key_string(v)),
                _ => Err(YamlError::at(
                    kspan,
                    "mapping keys must be scalars (complex keys are not supported)",
                )),
            },
            _ => Err(YamlError::at(
                kspan,
                "mapping keys must be scalars (complex keys are not supported)",
            )),
        }
    }

    /// The mapping's pairs: merged ones first (the first mapping providing
    /// a key wins), then its own (last value wins, first position kept),
    /// recording own keys written twice as duplicates.
    fn combine_pairs(
        &mut self,
        own: Vec<(String, Value, LineNode)>,
        merged: Vec<(String, Value, LineNode)>,
    ) -> (Map<String, Value>, Vec<(String, LineNode)>) {
        let mut map = Map::with_capacity(own.len() + merged.len());
        let mut lines: Vec<(String, LineNode)> = Vec::with_capacity(own.len() + merged.len());
        let has_merged = !merged.is_empty();
        for (k, v, l) in merged {
            // Merged pairs never count as duplicates of one another; the
            // first mapping that provides a key wins.
            if !map.contains_key(&k) {
                map.insert(k.clone(), v);
                lines.push((k, l));
            }
        }
        // Only needed to tell overrides of merged keys from duplicates.
        let mut own_seen: Option<HashSet<String>> = has_merged.then(HashSet::new);
        for (k, v, l) in own {
            let line = l.line;
            let seen_before = match &mut own_seen {
                None => true,
                Some(seen) => !seen.insert(k.clone()),
            };
            if map.contains_key(&k) {
                // Last value wins, first position kept. A key that only
                // came from a merge is overridden, not duplicated.
                let pos = lines.iter().position(|(x, _)| *x == k).unwrap_or(0);
                if seen_before {
                    self.duplicates.push(DuplicateKey {
                        path: vec![PathSeg::Key(k.clone())],
                        first_line: lines[pos].1.line,
                        line,
                    });
                }
                if let Some(slot) = lines.get_mut(pos) {
                    slot.1 = l;
                    slot.1.line = line;
                }
                map.insert(k, v);
            } else {
                map.insert(k.clone(), v);
                lines.push((k, l));
            }
        }
        (map, lines)
    }
}

/// Adds the pairs of a `<<` value (a mapping or a sequence of mappings) to `merged`.
fn merge_into(
    merged: &mut Vec<(String, Value, LineNode)>,
    value: Value,
    lines: LineNode,
    span: &Span,
) -> Result<(), YamlError> {
    let bad = || {
        YamlError::at(
            span,
            "a merge key `<<` needs a mapping or a sequence of mappings",
        )
    };
    match value {
        Value::Object(m) => {
            // The line pairs are kept in the mapping's order (none when no
            // line index is built).
            let mut ls = match lines.children {
                LineChildren::Map(ls) => ls.into_iter(),
                _ => Vec::new().into_iter(),
            };
            for (k, v) in m {
                let l = ls.next().map(|(_, l)| l).unwrap_or_default();
                merged.push((k, v, l));
            }
            Ok(())
        }
        Value::Array(items) => {
            let mut ls = match lines.children {
                LineChildren::Seq(ls) => ls.into_iter(),
                _ => Vec::new().into_iter(),
            };
            // Earlier mappings in the list take precedence (PyYAML semantics).
            for item in items {
                if !item.is_object() {
                    return Err(bad());
                }
                merge_into(merged, item, ls.next().unwrap_or_default(), span)?;
            }
            Ok(())
        }
        _ => Err(bad()),
    }
}

/// The JSON key for a scalar key (Python's `json.dumps` spelling for non-strings).
fn key_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Why one node cannot be turned into a value (wrapped into a
/// [`YamlError`] at the node's line and column).
#[derive(Debug, thiserror::Error)]
enum NodeError {
    #[error("unsupported YAML tag `{0}` on a collection")]
    CollectionTag(String),
    #[error("unsupported YAML tag `{0}`")]
    Tag(String),
    #[error("unsupported YAML tag `!!{0}`")]
    CoreTag(String),
    #[error("`{text}` is not a valid !!{suffix}")]
    NotValid { text: String, suffix: String },
    #[error("`{0}` is a non-finite float, which cannot be represented in JSON")]
    NonFinite(String),
}

fn check_collection_tag(tag: Option<&Tag>, expected: &str) -> Result<(), NodeError> {
    match tag {
        None => Ok(()),
        Some(t) if t.is_yaml_core_schema() && t.suffix == expected => Ok(()),
        Some(t) if t.handle == "!" && t.suffix.is_empty() => Ok(()),
        Some(t) => Err(NodeError::CollectionTag(t.to_string())),
    }
}

/// Resolves one scalar per YAML 1.1 (PyYAML `safe_load`).
fn resolve_scalar(
    cow: std::borrow::Cow<'_, str>,
    style: ScalarStyle,
    tag: Option<&Tag>,
) -> Result<Value, NodeError> {
    let text: &str = &cow;
    if let Some(t) = tag {
        if t.handle == "!" && t.suffix.is_empty() {
            // The non-specific tag `!`: a string.
            return Ok(Value::String(text.to_string()));
        }
        if !t.is_yaml_core_schema() {
            return Err(NodeError::Tag(t.to_string()));
        }
        let bad = || NodeError::NotValid {
            text: text.to_string(),
            suffix: t.suffix.clone(),
        };
        return match t.suffix.as_str() {
            "str" => Ok(Value::String(text.to_string())),
            "int" => resolve_int(text).ok_or_else(bad),
            "float" => match resolve_int(text) {
                Some(Value::Number(n)) => n
                    .as_f64()
                    .and_then(Number::from_f64)
                    .map(Value::Number)
                    .ok_or_else(bad),
                _ => resolve_float(text).ok_or_else(bad)?,
            },
            "bool" => resolve_bool(text).map(Value::Bool).ok_or_else(bad),
            "null" => {
                if is_null(text) {
                    Ok(Value::Null)
                } else {
                    Err(bad())
                }
            }
            other => Err(NodeError::CoreTag(other.to_string())),
        };
    }
    if style != ScalarStyle::Plain {
        return Ok(Value::String(cow.into_owned()));
    }
    // Fast path: a plain scalar starting with a letter that no bool or null
    // spelling starts with is a string (most config values).
    if let Some(b) = text.as_bytes().first()
        && b.is_ascii_alphabetic()
        && !matches!(b.to_ascii_lowercase(), b'y' | b'n' | b't' | b'f' | b'o')
    {
        return Ok(Value::String(cow.into_owned()));
    }
    if is_null(text) {
        return Ok(Value::Null);
    }
    if let Some(b) = resolve_bool(text) {
        return Ok(Value::Bool(b));
    }
    if let Some(v) = resolve_int(text) {
        return Ok(v);
    }
    if let Some(r) = resolve_float(text) {
        return r;
    }
    Ok(Value::String(text.to_string()))
}

fn is_null(t: &str) -> bool {
    matches!(t, "" | "~" | "null" | "Null" | "NULL")
}

fn resolve_bool(t: &str) -> Option<bool> {
    match t {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// Splits an optional sign off; returns (negative, rest).
fn split_sign(t: &str) -> (bool, &str) {
    if let Some(r) = t.strip_prefix('-') {
        (true, r)
    } else if let Some(r) = t.strip_prefix('+') {
        (false, r)
    } else {
        (false, t)
    }
}

fn int_value(neg: bool, magnitude: u128) -> Option<Value> {
    if neg {
        let m = i128::try_from(magnitude).ok()?;
        let v = i64::try_from(-m).ok()?;
        Some(Value::Number(v.into()))
    } else {
        let v = u64::try_from(magnitude).ok()?;
        Some(Value::Number(v.into()))
    }
}

/// YAML 1.1 int: `0b…`, leading-0 octal, decimal, `0x…`, base 60, all with `_`.
/// Values beyond 64 bits are not integers here (they fall through to string).
fn resolve_int(t: &str) -> Option<Value> {
    let (neg, body) = split_sign(t);
    if body.is_empty() {
        return None;
    }
    let digits = |s: &str, radix: u32| -> Option<u128> {
        if !s.contains('_') {
            return u128::from_str_radix(s, radix).ok();
        }
        let cleaned: String = s.chars().filter(|c| *c != '_').collect();
        if cleaned.is_empty() {
            // PyYAML: `0b_`, `0x_` and `0_` match the regex; int('') fails
            // there too, so treat as not-an-int.
            return None;
        }
        u128::from_str_radix(&cleaned, radix).ok()
    };
    let only =
        |s: &str, ok: fn(char) -> bool| !s.is_empty() && s.chars().all(|c| c == '_' || ok(c));
    if let Some(r) = body.strip_prefix("0b") {
        return if only(r, |c| c == '0' || c == '1') {
            int_value(neg, digits(r, 2)?)
        } else {
            None
        };
    }
    if let Some(r) = body.strip_prefix("0x") {
        return if only(r, |c| c.is_ascii_hexdigit()) {
            int_value(neg, digits(r, 16)?)
        } else {
            None
        };
    }
    if body == "0" {
        return int_value(neg, 0);
    }
    if let Some(r) = body.strip_prefix('0') {
        return if only(r, |c| ('0'..='7').contains(&c)) {
            int_value(neg, digits(r, 8)?)
        } else {
            None
        };
    }
    let first = body.chars().next()?;
    if !('1'..='9').contains(&first) {
        return None;
    }
    if body.contains(':') {
        // Base 60: [1-9][0-9_]*(:[0-5]?[0-9])+
        let mut parts = body.split(':');
        let head = parts.next()?;
        if !only(head, |c| c.is_ascii_digit()) {
            return None;
        }
        let mut acc = digits(head, 10)?;
        for p in parts {
            if p.is_empty() || p.len() > 2 || !p.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            if p.len() == 2 && !('0'..='5').contains(&p.chars().next()?) {
                return None;
            }
            acc = acc.checked_mul(60)?.checked_add(p.parse::<u128>().ok()?)?;
        }
        return int_value(neg, acc);
    }
    if only(body, |c| c.is_ascii_digit()) {
        return int_value(neg, digits(body, 10)?);
    }
    None
}

/// YAML 1.1 float (PyYAML's regex): needs a `.`; an exponent needs a sign;
/// base-60 floats; `.inf`/`.nan`. Returns `Some(Err)` for non-finite values,
/// which JSON cannot hold.
fn resolve_float(t: &str) -> Option<Result<Value, NodeError>> {
    let non_finite = || Some(Err(NodeError::NonFinite(t.to_string())));
    let (neg, body) = split_sign(t);
    if matches!(body, ".inf" | ".Inf" | ".INF") {
        return non_finite();
    }
    if matches!(t, ".nan" | ".NaN" | ".NAN") {
        return non_finite();
    }
    let f = if body.contains(':') {
        sexagesimal_float(body)?
    } else {
        decimal_float(t, body)?
    };
    match Number::from_f64(if neg { -f } else { f }) {
        Some(n) => Some(Ok(Value::Number(n))),
        None => non_finite(),
    }
}

/// The unsigned value of a base-60 float `body`
/// (`[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*`), or `None` if it is not one.
fn sexagesimal_float(body: &str) -> Option<f64> {
    let (int_part, frac) = body.split_once('.')?;
    if !frac.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    let mut parts = int_part.split(':');
    let head = parts.next()?;
    if head.is_empty()
        || !head.starts_with(|c: char| c.is_ascii_digit())
        || !head.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let mut acc: f64 = head.replace('_', "").parse().ok()?;
    let mut n_parts = 0;
    for p in parts {
        n_parts += 1;
        if p.is_empty() || p.len() > 2 || !p.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        if p.len() == 2 && !('0'..='5').contains(&p.chars().next()?) {
            return None;
        }
        acc = acc * 60.0 + p.parse::<f64>().ok()?;
    }
    if n_parts == 0 {
        return None;
    }
    let frac_clean = frac.replace('_', "");
    let f: f64 = if frac_clean.is_empty() {
        0.0
    } else {
        format!("0.{frac_clean}").parse().ok()?
    };
    Some(acc + f)
}

/// The unsigned value of a decimal float `body` (mantissa with a `.`,
/// optional signed exponent; `t` is the scalar with its sign), or `None`
/// if it is not one.
fn decimal_float(t: &str, body: &str) -> Option<f64> {
    // mantissa [exponent]
    let (mant, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (ip, fp) = mant.split_once('.')?;
    let digits_us = |s: &str| s.chars().all(|c| c.is_ascii_digit() || c == '_');
    if ip.is_empty() {
        // \.[0-9_]+ — no sign allowed by PyYAML's regex for this form.
        if fp.is_empty() || !digits_us(fp) || t.starts_with(['+', '-']) {
            return None;
        }
    } else if !ip.starts_with(|c: char| c.is_ascii_digit()) || !digits_us(ip) || !digits_us(fp) {
        return None;
    }
    if let Some(e) = exp {
        let (sign, ed) = (e.chars().next()?, &e[1..]);
        if !matches!(sign, '+' | '-') || ed.is_empty() || !ed.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
    }
    let mut cleaned = mant.replace('_', "");
    if cleaned.ends_with('.') {
        cleaned.push('0');
    }
    if cleaned.starts_with('.') {
        cleaned.insert(0, '0');
    }
    if let Some(e) = exp {
        cleaned.push('e');
        cleaned.push_str(e);
    }
    cleaned.parse().ok()
}

/// A YAML file that cannot be read is a missing input; one that is not
/// valid YAML is the input refused.
impl sweep_exit::Classify for YamlError {
    fn kind(&self) -> sweep_exit::Kind {
        if self.unreadable {
            sweep_exit::Kind::Failed
        } else {
            sweep_exit::Kind::Rejected
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn v(text: &str) -> Value {
        parse_str(&format!("k: {text}\n")).unwrap().into_value()["k"].clone()
    }

    #[test]
    fn booleans_yaml_1_1() {
        for t in [
            "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE",
        ] {
            assert_eq!(v(t), json!(true), "{t}");
        }
        for t in [
            "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE",
        ] {
            assert_eq!(v(t), json!(false), "{t}");
        }
        assert_eq!(v("y"), json!("y"));
        assert_eq!(v("n"), json!("n"));
        assert_eq!(v("yEs"), json!("yEs"));
    }

    #[test]
    fn integers_yaml_1_1() {
        assert_eq!(v("2_063_837"), json!(2_063_837));
        assert_eq!(v("42"), json!(42));
        assert_eq!(v("-7"), json!(-7));
        assert_eq!(v("+7"), json!(7));
        assert_eq!(v("0"), json!(0));
        assert_eq!(v("010"), json!(8));
        assert_eq!(v("09"), json!("09"));
        assert_eq!(v("0x1F"), json!(31));
        assert_eq!(v("0b101"), json!(5));
        assert_eq!(v("1:30"), json!(90));
        assert_eq!(v("1:30:00"), json!(5400));
        assert_eq!(v("1:70"), json!("1:70"));
        assert_eq!(
            v("99999999999999999999999"),
            json!("99999999999999999999999")
        );
    }

    #[test]
    fn floats_yaml_1_1() {
        assert_eq!(v("1.0"), json!(1.0));
        assert_eq!(v("1.5"), json!(1.5));
        assert_eq!(v("-0.25"), json!(-0.25));
        assert_eq!(v("1."), json!(1.0));
        assert_eq!(v(".5"), json!(0.5));
        assert_eq!(v("1.0e+3"), json!(1000.0));
        assert_eq!(v("1_000.5"), json!(1000.5));
        assert_eq!(v("1:30.5"), json!(90.5));
        // YAML 1.1: exponent needs a sign and a float needs a dot.
        assert_eq!(v("1e3"), json!("1e3"));
        assert_eq!(v("1.0e3"), json!("1.0e3"));
        assert_eq!(v("0.3.2"), json!("0.3.2"));
        assert!(parse_str("k: .inf\n").is_err());
        assert!(parse_str("k: -.inf\n").is_err());
        assert!(parse_str("k: .nan\n").is_err());
    }

    #[test]
    fn nulls_and_strings() {
        assert_eq!(v("~"), Value::Null);
        assert_eq!(v("null"), Value::Null);
        assert_eq!(v("NULL"), Value::Null);
        assert_eq!(v(""), Value::Null);
        assert_eq!(v("'yes'"), json!("yes"));
        assert_eq!(v("\"010\""), json!("010"));
        assert_eq!(v("2024-01-01"), json!("2024-01-01"));
        assert_eq!(v("hello world"), json!("hello world"));
        assert_eq!(v("|\n  a\n  b"), json!("a\nb\n"));
    }

    #[test]
    fn explicit_tags() {
        assert_eq!(v("!!str 10"), json!("10"));
        assert_eq!(v("!!int \"10\""), json!(10));
        assert_eq!(v("!!float 1"), json!(1.0));
        assert_eq!(v("!!bool yes"), json!(true));
        assert!(parse_str("k: !!int abc\n").is_err());
        assert!(parse_str("k: !custom x\n").is_err());
    }

    #[test]
    fn lines_by_path() {
        let text = "a:\n  b:\n    - x\n    - c: 1\n      d: 2\n  e: 3\nf: 4\n";
        let d = parse_str(text).unwrap();
        let k = |s: &str| PathSeg::Key(s.into());
        assert_eq!(d.line_of(&[]), Some(1));
        assert_eq!(d.line_of(&[k("a")]), Some(1));
        assert_eq!(d.line_of(&[k("a"), k("b")]), Some(2));
        assert_eq!(d.line_of(&[k("a"), k("b"), PathSeg::Index(0)]), Some(3));
        assert_eq!(d.line_of(&[k("a"), k("b"), PathSeg::Index(1)]), Some(4));
        assert_eq!(
            d.line_of(&[k("a"), k("b"), PathSeg::Index(1), k("d")]),
            Some(5)
        );
        assert_eq!(d.line_of(&[k("a"), k("e")]), Some(6));
        assert_eq!(d.line_of(&[k("f")]), Some(7));
        // Missing path: nearest ancestor.
        assert_eq!(
            d.line_of(&[k("a"), k("b"), PathSeg::Index(1), k("zz")]),
            Some(4)
        );
        assert_eq!(d.line_of(&[k("nope")]), Some(1));
        assert_eq!(dotted(&[k("a"), PathSeg::Index(1), k("d")]), "a.1.d");
    }

    #[test]
    fn order_and_duplicates() {
        let d = parse_str("z: 1\na: 2\nz: 3\n").unwrap();
        assert_eq!(
            serde_json::to_string(d.value()).unwrap(),
            r#"{"z":3,"a":2}"#
        );
        assert_eq!(
            d.duplicate_keys(),
            &[DuplicateKey {
                path: vec![PathSeg::Key("z".into())],
                first_line: 1,
                line: 3
            }]
        );
        assert_eq!(d.line_of(&[PathSeg::Key("z".into())]), Some(3));
    }

    #[test]
    fn nested_duplicate_paths() {
        let k = |s: &str| PathSeg::Key(s.into());
        let d = parse_str("a:\n  - y: 0\n  - x: 1\n    x: 2\n").unwrap();
        assert_eq!(d.duplicate_keys().len(), 1);
        assert_eq!(
            d.duplicate_keys()[0].path,
            vec![k("a"), PathSeg::Index(1), k("x")]
        );
        assert_eq!(d.value()["a"][1]["x"], serde_json::json!(2));
        // Overriding a merged key is not a duplicate; repeating an own key is.
        let d = parse_str("b: &b {x: 1}\nc:\n  <<: *b\n  x: 2\n  x: 3\n").unwrap();
        assert_eq!(
            d.duplicate_keys(),
            &[DuplicateKey {
                path: vec![k("c"), k("x")],
                first_line: 4,
                line: 5
            }]
        );
        assert_eq!(d.value()["c"]["x"], serde_json::json!(3));
        assert_eq!(d.line_of(&[k("c"), k("x")]), Some(5));
    }

    /// Nested anchors that would expand to 10^9 nodes ("billion laughs").
    pub(crate) fn billion_laughs() -> String {
        let mut t = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for i in 1..10 {
            let p = i - 1;
            t.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        t
    }

    #[test]
    fn alias_expansion_is_capped() {
        let e = parse_str(&billion_laughs()).unwrap_err();
        assert!(e.message.contains("MAX_ALIAS_NODES"), "{e}");
        assert!(e.message.contains(&MAX_ALIAS_NODES.to_string()), "{e}");
        assert!(e.line >= 5, "{e}");
        // Modest reuse stays fine.
        let d = parse_str("a: &a [1, 2, 3]\nb: [*a, *a]\n").unwrap();
        assert_eq!(d.value()["b"], json!([[1, 2, 3], [1, 2, 3]]));
    }

    #[test]
    fn nesting_depth_is_capped() {
        let deep = format!(
            "k: {}{}\n",
            "[".repeat(MAX_YAML_DEPTH + 10),
            "]".repeat(MAX_YAML_DEPTH + 10)
        );
        let e = parse_str(&deep).unwrap_err();
        assert!(e.message.contains("MAX_YAML_DEPTH"), "{e}");
        assert_eq!(e.line, 1, "{e}");
        let ok = format!(
            "k: {}{}\n",
            "[".repeat(MAX_YAML_DEPTH),
            "]".repeat(MAX_YAML_DEPTH)
        );
        assert!(parse_str(&ok).is_ok());
    }

    #[test]
    fn node_count_is_capped() {
        let text = "- 1\n".repeat(MAX_YAML_NODES + 1);
        assert!(text.len() < MAX_YAML_BYTES);
        let e = parse_str(&text).unwrap_err();
        assert!(e.message.contains("MAX_YAML_NODES"), "{e}");
        assert_eq!(e.line, MAX_YAML_NODES);
    }

    /// A 50 MB one-list file is refused before it is read, naming the file
    /// and the limit (it once took 5.6 GB to load).
    #[test]
    fn input_size_is_capped() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.yaml");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        let line = "- 1\n".repeat(1024);
        while f.get_ref().metadata().unwrap().len() < 50_000_000 {
            f.write_all(line.as_bytes()).unwrap();
            f.flush().unwrap();
        }
        drop(f);
        let e = load_file(&p).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("big.yaml"), "{msg}");
        assert!(msg.contains("MAX_YAML_BYTES"), "{msg}");
        let text = "- 1\n".repeat(MAX_YAML_BYTES / 4 + 1);
        assert!(
            parse_str(&text)
                .unwrap_err()
                .message
                .contains("MAX_YAML_BYTES")
        );
    }

    #[test]
    fn anchors_aliases_merge() {
        let d = parse_str("base: &b\n  x: 1\n  y: 2\nuse:\n  <<: *b\n  y: 3\n  z: 4\nref: *b\n")
            .unwrap();
        assert_eq!(
            serde_json::to_string(d.value()).unwrap(),
            r#"{"base":{"x":1,"y":2},"use":{"x":1,"y":3,"z":4},"ref":{"x":1,"y":2}}"#
        );
        assert!(d.duplicate_keys().is_empty());
    }

    #[test]
    fn keys_are_stringified() {
        let d = parse_str("1: a\ntrue: b\n").unwrap();
        assert_eq!(d.value(), &json!({"1": "a", "true": "b"}));
    }

    #[test]
    fn documents_and_errors() {
        assert_eq!(parse_str("").unwrap().value(), &Value::Null);
        assert_eq!(
            parse_str("# only a comment\n").unwrap().value(),
            &Value::Null
        );
        assert!(parse_str("a: 1\n---\nb: 2\n").is_err());
        let e = parse_str("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.line >= 1, "{e}");
        let e = parse_str("? [a]\n: 1\n").unwrap_err();
        assert!(e.message.contains("complex keys"), "{e}");
    }

    #[test]
    fn load_file_names_path() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.yaml");
        std::fs::write(&p, "a: [1\n").unwrap();
        let e = load_file(&p).unwrap_err();
        assert!(e.to_string().contains("x.yaml"), "{e}");
        let e = load_file(&dir.path().join("missing.yaml")).unwrap_err();
        assert!(e.to_string().contains("missing.yaml"), "{e}");
    }
}
