//! Byte-level changelog rules (spec §12.1–12.3): the whole-file parse, the
//! base → new entry comparison and the raw-byte change rule. The reference
//! CLI no longer applies them (only its merge helper does); sweepkit offers
//! them as `check-changelog --strict` and uses them in `prepare-merge`.
//! Every violation names the line it is about.

use serde_json::Value;
use sweep_model::changelog::ChangelogEntry;
use sweep_model::python::python_repr_str;
use sweep_model::yaml::{self, PathSeg, YamlDoc};

/// The repository whose PR links are canonical.
pub const DEFAULT_REPO: &str = "SemiAnalysisAI/InferenceX";

/// A rule violation: message and, when known, the 1-based line of the file
/// it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Violation {
    pub message: String,
    pub line: Option<usize>,
}

fn v(message: impl Into<String>, line: Option<usize>) -> Violation {
    Violation {
        message: message.into(),
        line,
    }
}

/// 1-based line of byte offset `pos` (LF-separated).
pub fn line_at(raw: &[u8], pos: usize) -> usize {
    raw[..pos.min(raw.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// A parsed changelog: raw entries and the line where each starts.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub entries: Vec<Value>,
    pub starts: Vec<usize>,
    doc: YamlDoc,
}

impl Parsed {
    /// Line of a key of entry `i` (0-based), falling back to the entry start.
    pub fn line_of_key(&self, i: usize, key: &str) -> Option<usize> {
        self.doc
            .line_of(&[PathSeg::Index(i), PathSeg::Key(key.to_string())])
    }
}

/// Python `str.splitlines()` line boundaries.
fn py_splitlines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut it = text.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let brk = matches!(
            c,
            '\n' | '\r'
                | '\u{b}'
                | '\u{c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if brk {
            out.push(&text[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r'
                && let Some(&(j, '\n')) = it.peek()
            {
                it.next();
                end = j + 1;
            }
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// §12.1: the whole-file rules, in order.
pub fn parse(raw: &[u8], label: &str) -> Result<Parsed, Violation> {
    let text = checked_text(raw, label)?;
    reject_merge_keys(text, label)?;
    let doc = parse_yaml(text, label)?;
    let Value::Array(items) = doc.value() else {
        return Err(v(format!("{label} root must be a YAML list"), Some(1)));
    };
    let starts: Vec<usize> = (0..items.len())
        .map(|i| doc.line_of(&[PathSeg::Index(i)]).unwrap_or(1))
        .collect();
    check_entry_count(text, items.len(), &starts, label)?;
    check_entries(items, &starts, label)?;
    Ok(Parsed {
        entries: items.clone(),
        starts,
        doc,
    })
}

/// The byte rules of §12.1: a final newline, no CR, tab or NUL byte, and
/// UTF-8; gives the text back.
fn checked_text<'a>(raw: &'a [u8], label: &str) -> Result<&'a str, Violation> {
    if !raw.ends_with(b"\n") {
        return Err(v(
            format!("{label} does not end with a newline"),
            Some(line_at(raw, raw.len())),
        ));
    }
    for (byte, what) in [
        (b'\r', "CR characters"),
        (b'\t', "tabs"),
        (0u8, "NUL bytes"),
    ] {
        if let Some(pos) = raw.iter().position(|&b| b == byte) {
            return Err(v(
                format!("{label} contains {what}"),
                Some(line_at(raw, pos)),
            ));
        }
    }
    std::str::from_utf8(raw).map_err(|e| {
        let pos = e.valid_up_to();
        v(
            format!(
                "{label} is not UTF-8: 'utf-8' codec can't decode byte 0x{:02x} in position {pos}",
                raw[pos]
            ),
            Some(line_at(raw, pos)),
        )
    })
}

/// YAML merge keys (`<<`) are refused the way PyYAML's safe loader
/// refuses them.
fn reject_merge_keys(text: &str, label: &str) -> Result<(), Violation> {
    if let Some((i, _)) = text.split('\n').enumerate().find(|(_, l)| {
        l.trim_start()
            .trim_start_matches("- ")
            .trim_start()
            .starts_with("<<")
    }) {
        return Err(v(
            format!(
                "{label} is not valid YAML: could not determine a constructor for the tag \
                 'tag:yaml.org,2002:merge'"
            ),
            Some(i + 1),
        ));
    }
    Ok(())
}

/// The YAML parse itself, with duplicate keys as an error.
fn parse_yaml(text: &str, label: &str) -> Result<YamlDoc, Violation> {
    let doc = yaml::parse_str(text).map_err(|e| {
        v(
            format!("{label} is not valid YAML: {}", e.message),
            (e.line > 0).then_some(e.line),
        )
    })?;
    if let Some(d) = doc.duplicate_keys().first() {
        let key = match d.path.last() {
            Some(PathSeg::Key(k)) => k.clone(),
            Some(PathSeg::Index(i)) => i.to_string(),
            None => String::new(),
        };
        return Err(v(
            format!(
                "{label} is not valid YAML: found duplicate key {} (first at line {})",
                python_repr_str(&key),
                d.first_line
            ),
            Some(d.line),
        ));
    }
    Ok(doc)
}

/// Every top-level item starts on a `- config-keys:` marker line and every
/// marker line starts an item (`starts`: each item's first line).
fn check_entry_count(
    text: &str,
    items: usize,
    starts: &[usize],
    label: &str,
) -> Result<(), Violation> {
    let lines = py_splitlines(text);
    let marked: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("- config-keys:"))
        .map(|(i, _)| i + 1)
        .collect();
    if marked.len() != items {
        // Point at the first item that does not start on a marker line (or
        // the first marker line that is not an item).
        let line = starts
            .iter()
            .find(|s| !marked.contains(s))
            .or_else(|| marked.iter().find(|m| !starts.contains(m)))
            .copied();
        return Err(v(
            format!(
                "{label} has {} top-level config entries but YAML parsed {} entries",
                marked.len(),
                items
            ),
            line,
        ));
    }
    Ok(())
}

/// Each item is a mapping that passes `ChangelogEntry` validation.
fn check_entries(items: &[Value], starts: &[usize], label: &str) -> Result<(), Violation> {
    for (i, item) in items.iter().enumerate() {
        if !item.is_object() {
            return Err(v(
                format!("{label} entry {} is not a mapping", i + 1),
                Some(starts[i]),
            ));
        }
        if let Err(e) = ChangelogEntry::from_value(item) {
            return Err(v(
                format!(
                    "{label} entry {} fails ChangelogEntry validation: {e}",
                    i + 1
                ),
                Some(starts[i]),
            ));
        }
    }
    Ok(())
}

/// Link rules of §12.2 for one repository.
#[derive(Debug, Clone)]
pub struct Links {
    pub repo: String,
}

impl Default for Links {
    fn default() -> Self {
        Links {
            repo: DEFAULT_REPO.into(),
        }
    }
}

impl Links {
    fn prefix(&self) -> String {
        format!("https://github.com/{}/pull/", self.repo)
    }

    /// Full match of `https://github.com/<repo>/pull/<digits>`.
    pub fn is_canonical(&self, link: &str) -> bool {
        link.strip_prefix(&self.prefix())
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    }

    pub fn is_placeholder(&self, link: &str) -> bool {
        link == "XXX" || link == format!("{}XXX", self.prefix())
    }

    pub fn expected(&self, pr: u64) -> String {
        format!("{}{pr}", self.prefix())
    }
}

/// `str(entry.get("pr-link") or "")`.
pub fn link_of(entry: &Value) -> String {
    match entry.get("pr-link") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => String::new(),
        Some(Value::Bool(true)) => "True".into(),
        Some(other) => other.to_string(),
    }
}

/// The entry without its `pr-link`.
pub fn without_pr_link(entry: &Value) -> Value {
    match entry {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "pr-link")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Result of §12.2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    pub additions: usize,
    /// 0-based positions of corrected base entries.
    pub corrected: Vec<usize>,
}

/// Who writes the new entries, which decides the links they may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Author {
    /// A push to the main branch: canonical links only.
    Main,
    /// Pull request N: an `XXX` placeholder or its own link.
    Pr(u64),
    /// A branch whose pull request does not exist yet (`prepare-merge`
    /// without `--pr-number`): an `XXX` placeholder or a canonical link,
    /// kept as written.
    UnnumberedPr,
}

impl Author {
    /// `Some(n)` is pull request n, `None` a main-branch push.
    pub fn from_pr(pr: Option<u64>) -> Self {
        pr.map_or(Author::Main, Author::Pr)
    }
}

/// §12.2: base entries vs new entries (`pr`: see [`Author::from_pr`]).
pub fn compare(
    base: &Parsed,
    new: &Parsed,
    pr: Option<u64>,
    links: &Links,
) -> Result<Comparison, Violation> {
    compare_as(base, new, Author::from_pr(pr), links)
}

/// §12.2 for new entries written by `author`.
pub fn compare_as(
    base: &Parsed,
    new: &Parsed,
    author: Author,
    links: &Links,
) -> Result<Comparison, Violation> {
    if new.entries.len() < base.entries.len() {
        return Err(v(
            "perf-changelog.yaml entries were deleted",
            base.starts.get(new.entries.len()).copied(),
        ));
    }
    let corrected = corrected_entries(base, new, links)?;
    let additions = new.entries.len() - base.entries.len();
    if !corrected.is_empty() && additions > 0 {
        return Err(v(
            "do not mix historical pr-link corrections with new changelog entries",
            new.starts.get(base.entries.len()).copied(),
        ));
    }
    for i in base.entries.len()..new.entries.len() {
        check_new_link(new, i, author, links)?;
    }
    Ok(Comparison {
        additions,
        corrected,
    })
}

/// The base entries `new` changed: each may only get a canonical pr-link
/// correction. Gives their 0-based positions.
fn corrected_entries(base: &Parsed, new: &Parsed, links: &Links) -> Result<Vec<usize>, Violation> {
    let mut corrected = Vec::new();
    for (i, (b, n)) in base.entries.iter().zip(&new.entries).enumerate() {
        if b == n {
            continue;
        }
        let line = Some(new.starts[i]);
        if without_pr_link(b) != without_pr_link(n) {
            return Err(v(
                format!(
                    "entry {} changed; existing entries are immutable except for pr-link-only \
                     corrections",
                    i + 1
                ),
                line,
            ));
        }
        let (old_link, new_link) = (link_of(b), link_of(n));
        let link_line = new.line_of_key(i, "pr-link").or(line);
        if old_link == new_link {
            return Err(v(
                format!("entry {} was reformatted without a semantic change", i + 1),
                line,
            ));
        }
        if !links.is_canonical(&new_link) {
            return Err(v(
                format!(
                    "entry {} pr-link correction is not canonical: {}",
                    i + 1,
                    python_repr_str(&new_link)
                ),
                link_line,
            ));
        }
        corrected.push(i);
    }
    Ok(corrected)
}

/// The pr-link of new entry `i` is one `author` may write.
fn check_new_link(new: &Parsed, i: usize, author: Author, links: &Links) -> Result<(), Violation> {
    let link = link_of(&new.entries[i]);
    let line = new.line_of_key(i, "pr-link").or(Some(new.starts[i]));
    match author {
        Author::Main if !links.is_canonical(&link) => Err(v(
            format!(
                "new main-branch entry has invalid pr-link: {}",
                python_repr_str(&link)
            ),
            line,
        )),
        Author::Pr(n) if !links.is_placeholder(&link) && link != links.expected(n) => Err(v(
            format!(
                "new PR entry must use {} or an XXX placeholder; found {}",
                python_repr_str(&links.expected(n)),
                python_repr_str(&link)
            ),
            line,
        )),
        Author::UnnumberedPr if !links.is_placeholder(&link) && !links.is_canonical(&link) => {
            Err(v(
                format!(
                    "new entry must use an XXX placeholder (or a canonical pull-request \
                     link); found {}",
                    python_repr_str(&link)
                ),
                line,
            ))
        }
        _ => Ok(()),
    }
}

/// Offsets of lines matching `^- config-keys:[^\r\n]*\n`.
pub fn entry_starts(raw: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < raw.len() {
        let end = raw[pos..].iter().position(|&b| b == b'\n').map(|i| pos + i);
        let line = &raw[pos..end.unwrap_or(raw.len())];
        if end.is_some() && line.starts_with(b"- config-keys:") && !line.contains(&b'\r') {
            out.push(pos);
        }
        match end {
            Some(e) => pos = e + 1,
            None => break,
        }
    }
    out
}

/// `bytes.splitlines(keepends=True)`: LF, CR LF and CR terminators.
pub fn byte_lines(raw: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'\n' => {
                out.push(&raw[start..=i]);
                start = i + 1;
            }
            b'\r' => {
                let end = if raw.get(i + 1) == Some(&b'\n') {
                    i + 1
                } else {
                    i
                };
                out.push(&raw[start..=end]);
                i = end;
                start = end + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < raw.len() {
        out.push(&raw[start..]);
    }
    out
}

/// §12.3: historical bytes stay exact outside appended entries and
/// pr-link-line corrections.
pub fn raw_change(base: &[u8], new: &[u8], cmp: &Comparison) -> Result<(), Violation> {
    if cmp.additions > 0 {
        return raw_append(base, new, cmp.additions);
    }
    if !cmp.corrected.is_empty() {
        return raw_corrections(base, new, cmp.corrected.len());
    }
    if base != new {
        let pos = first_difference(base, new);
        return Err(v(
            "changelog diff has no appended entry or pr-link correction; historical whitespace \
             and formatting are immutable",
            Some(line_at(new, pos)),
        ));
    }
    Ok(())
}

/// Byte offset of the first byte where `base` and `new` differ (the shorter
/// length when one is a prefix of the other).
fn first_difference(base: &[u8], new: &[u8]) -> usize {
    base.iter()
        .zip(new)
        .position(|(a, b)| a != b)
        .unwrap_or(new.len().min(base.len()))
}

/// §12.3 for `additions` appended entries: the base is an exact prefix and
/// each appended entry follows one empty line.
fn raw_append(base: &[u8], new: &[u8], additions: usize) -> Result<(), Violation> {
    if !new.starts_with(base) {
        let pos = first_difference(base, new);
        return Err(v(
            "appended entries changed historical perf-changelog.yaml bytes; restore the base \
             file byte-for-byte and append at the end",
            Some(line_at(new, pos)),
        ));
    }
    let suffix = &new[base.len()..];
    let expected: &[u8] = if base.ends_with(b"\n\n") {
        b"- config-keys:"
    } else {
        b"\n- config-keys:"
    };
    if !suffix.starts_with(expected) {
        return Err(v(
            "new changelog entries must be separated from history by one empty line and \
             appended at the end",
            Some(line_at(new, base.len())),
        ));
    }
    let starts = entry_starts(new);
    let appended = &starts[starts.len().saturating_sub(additions)..];
    for &s in appended.iter().skip(1) {
        let prefix = &new[..s];
        if !prefix.ends_with(b"\n\n") || prefix.ends_with(b"\n\n\n") {
            return Err(v(
                "appended changelog entries must have exactly one empty separator line",
                Some(line_at(new, s)),
            ));
        }
    }
    if new.ends_with(b"\n\n") {
        return Err(v(
            "the final appended changelog entry must end with one newline",
            Some(line_at(new, new.len() - 1)),
        ));
    }
    Ok(())
}

/// §12.3 for `corrected` pr-link corrections: same line count, and exactly
/// that many lines changed, each a `  pr-link:` line.
fn raw_corrections(base: &[u8], new: &[u8], corrected: usize) -> Result<(), Violation> {
    let (bl, nl) = (byte_lines(base), byte_lines(new));
    if bl.len() != nl.len() {
        let first = bl
            .iter()
            .zip(&nl)
            .position(|(a, b)| a != b)
            .unwrap_or(bl.len().min(nl.len()));
        return Err(v(
            "pr-link corrections may not add or delete lines",
            Some(first + 1),
        ));
    }
    let mut changed = 0;
    for (i, (a, b)) in bl.iter().zip(&nl).enumerate() {
        if a == b {
            continue;
        }
        changed += 1;
        let ok = a.starts_with(b"  pr-link:")
            && b.starts_with(b"  pr-link:")
            && a.ends_with(b"\n")
            && b.ends_with(b"\n");
        if !ok {
            return Err(v(
                format!(
                    "historical bytes changed outside a pr-link line at line {}",
                    i + 1
                ),
                Some(i + 1),
            ));
        }
    }
    if changed != corrected {
        return Err(v(
            format!("expected {corrected} changed pr-link line(s), found {changed}"),
            None,
        ));
    }
    Ok(())
}

/// All byte-level rules for one change: parse both versions, compare, raw rule.
pub fn check(
    base: &[u8],
    new: &[u8],
    base_label: &str,
    new_label: &str,
    pr: Option<u64>,
    links: &Links,
) -> Result<Comparison, Violation> {
    // A broken base is reported without a line: the line would be in a
    // file the PR did not write.
    let b = parse(base, base_label).map_err(|e| v(e.message, None))?;
    let n = parse(new, new_label)?;
    let cmp = compare(&b, &n, pr, links)?;
    raw_change(base, new, &cmp)?;
    Ok(cmp)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;

    const L: &str = "https://github.com/SemiAnalysisAI/InferenceX/pull/";

    fn entry(key: &str, link: &str) -> String {
        format!("- config-keys:\n    - {key}\n  description:\n    - d\n  pr-link: {link}\n")
    }

    fn base() -> String {
        format!(
            "{}\n{}",
            entry("a", &format!("{L}1")),
            entry("b", &format!("{L}2"))
        )
    }

    fn err(new: &str, pr: Option<u64>) -> Violation {
        check(
            base().as_bytes(),
            new.as_bytes(),
            "base",
            "new",
            pr,
            &Links::default(),
        )
        .unwrap_err()
    }

    #[test]
    fn clean_append_passes() {
        let new = format!("{}\n{}", base(), entry("c", &format!("{L}3")));
        let c = check(
            base().as_bytes(),
            new.as_bytes(),
            "b",
            "n",
            None,
            &Links::default(),
        )
        .unwrap();
        assert_eq!(c.additions, 1);
        let new = format!("{}\n{}", base(), entry("c", "XXX"));
        assert!(
            check(
                base().as_bytes(),
                new.as_bytes(),
                "b",
                "n",
                Some(7),
                &Links::default()
            )
            .is_ok()
        );
    }

    #[test]
    fn whole_file_rules_name_the_line() {
        let e = parse(b"- a\n- b", "f").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.line),
            ("f does not end with a newline", Some(2))
        );
        let e = parse(b"- a\r\n", "f").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.line),
            ("f contains CR characters", Some(1))
        );
        let e = parse(b"- a\n-\tb\n", "f").unwrap_err();
        assert_eq!((e.message.as_str(), e.line), ("f contains tabs", Some(2)));
        let e = parse(b"- a\n\n- \0\n", "f").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.line),
            ("f contains NUL bytes", Some(3))
        );
        let e = parse(b"- a\n- \xff\n", "f").unwrap_err();
        assert!(e.message.starts_with("f is not UTF-8"));
        assert_eq!(e.line, Some(2));
        let e = parse(b"a: 1\n", "f").unwrap_err();
        assert_eq!(e.message, "f root must be a YAML list");
    }

    #[test]
    fn duplicate_keys_and_entry_count() {
        let dup = format!("{}  pr-link: x\n", entry("a", "y"));
        let e = parse(dup.as_bytes(), "f").unwrap_err();
        assert!(
            e.message.contains("found duplicate key 'pr-link'"),
            "{}",
            e.message
        );
        assert_eq!(e.line, Some(6));
        let odd = "- config-keys: [a]\n  description: [d]\n  pr-link: x\n-\n  config-keys: [b]\n  description: [d]\n  pr-link: x\n";
        let e = parse(odd.as_bytes(), "f").unwrap_err();
        assert!(
            e.message
                .contains("has 1 top-level config entries but YAML parsed 2")
        );
        assert_eq!(
            e.line,
            Some(5),
            "the item's first key, which lacks the marker"
        );
        let bad = "- config-keys: [a]\n  description: [d]\n";
        let e = parse(bad.as_bytes(), "f").unwrap_err();
        assert!(
            e.message
                .contains("entry 1 fails ChangelogEntry validation")
        );
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn separators_are_enforced() {
        let e = err(&format!("{}{}", base(), entry("c", &format!("{L}3"))), None);
        assert!(
            e.message
                .contains("separated from history by one empty line")
        );
        assert_eq!(e.line, Some(12));
        let e = err(
            &format!(
                "{}\n{}\n\n{}",
                base(),
                entry("c", &format!("{L}3")),
                entry("d", &format!("{L}4"))
            ),
            None,
        );
        assert!(e.message.contains("exactly one empty separator line"));
        let e = err(
            &format!("{}\n{}\n", base(), entry("c", &format!("{L}3"))),
            None,
        );
        assert!(e.message.contains("must end with one newline"));
    }

    #[test]
    fn link_rules() {
        let e = err(&format!("{}\n{}", base(), entry("c", "XXX")), None);
        assert_eq!(
            e.message,
            "new main-branch entry has invalid pr-link: 'XXX'"
        );
        assert_eq!(e.line, Some(17));
        let e = err(
            &format!("{}\n{}", base(), entry("c", &format!("{L}9"))),
            Some(7),
        );
        assert!(e.message.contains("new PR entry must use"));
        let fixed = base().replace(&format!("{L}2"), &format!("{L}22"));
        assert!(
            check(
                base().as_bytes(),
                fixed.as_bytes(),
                "b",
                "n",
                None,
                &Links::default()
            )
            .is_ok()
        );
        let bad = base().replace(&format!("{L}2"), "nope");
        assert!(
            err(&bad, None)
                .message
                .contains("pr-link correction is not canonical: 'nope'")
        );
        let changed = base().replace("- b", "- z");
        let e = err(&changed, None);
        assert!(e.message.contains("entry 2 changed"));
        assert_eq!(e.line, Some(7));
        let reformatted = base().replace("  description:\n    - d\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2", "  description: [d]\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2");
        assert!(
            err(&reformatted, None)
                .message
                .contains("historical whitespace and formatting are immutable")
        );
        assert_eq!(
            err(&entry("a", &format!("{L}1")), None).message,
            "perf-changelog.yaml entries were deleted"
        );
    }

    #[test]
    fn splitlines_like_python() {
        assert_eq!(
            py_splitlines("a\r\nb\u{2028}c\rd\n"),
            vec!["a", "b", "c", "d"]
        );
        assert_eq!(byte_lines(b"a\r\nb\rc"), vec![&b"a\r\n"[..], b"b\r", b"c"]);
    }
}
