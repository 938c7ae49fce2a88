//! `check-changelog prepare-merge` (spec §12.4, the job of the reference's
//! `prepare_perf_changelog_merge.py`): rewrite a PR's changelog so it
//! appends cleanly after the base branch — placeholder links made
//! canonical, and conflicted (or merely stale) changelogs rebuilt as "the
//! base branch's bytes + this PR's own entries". Main's bytes are kept
//! byte-for-byte; every result is re-checked with the strict rules.

use crate::strict::{self, Author, Links, Parsed, Violation, entry_starts, without_pr_link};
use serde_json::Value;
use sweep_model::python::dumps_like_python;
use sweep_model::python::python_repr_str;

fn fail(message: impl Into<String>) -> Violation {
    Violation {
        message: message.into(),
        line: None,
    }
}

/// Byte span of one top-level entry: its start, the end of its content
/// (trailing blank lines excluded) and the start of the next entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    content_end: usize,
}

fn spans(raw: &[u8], parsed: &Parsed) -> Result<Vec<Span>, Violation> {
    let starts = entry_starts(raw);
    if starts.len() != parsed.entries.len() {
        return Err(fail(
            "could not map parsed changelog entries to raw byte spans",
        ));
    }
    let mut out = Vec::with_capacity(starts.len());
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(raw.len());
        let mut lines = strict::byte_lines(&raw[start..end]);
        while lines
            .last()
            .is_some_and(|l| l.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n')))
        {
            lines.pop();
        }
        let content_end = start + lines.iter().map(|l| l.len()).sum::<usize>();
        out.push(Span { start, content_end });
    }
    Ok(out)
}

/// Replaces the first `^  pr-link:…` line of `block` (up to CR/LF).
fn replace_pr_link(block: &[u8], link: &str) -> Result<Vec<u8>, Violation> {
    let mut pos = 0;
    while pos < block.len() {
        if block[pos..].starts_with(b"  pr-link:") {
            let end = block[pos..]
                .iter()
                .position(|&b| b == b'\r' || b == b'\n')
                .map_or(block.len(), |i| pos + i);
            let mut out = block[..pos].to_vec();
            out.extend_from_slice(format!("  pr-link: {link}").as_bytes());
            out.extend_from_slice(&block[end..]);
            return Ok(out);
        }
        match block[pos..].iter().position(|&b| b == b'\n') {
            Some(i) => pos += i + 1,
            None => break,
        }
    }
    Err(fail(
        "could not locate exactly one pr-link line in a changelog entry",
    ))
}

fn splice(raw: &[u8], replacements: &[(Span, Vec<u8>)]) -> Vec<u8> {
    let mut out = raw.to_vec();
    for (span, block) in replacements.iter().rev() {
        out.splice(span.start..span.content_end, block.iter().copied());
    }
    out
}

fn recheck(
    base: &[u8],
    base_parsed: &Parsed,
    result: &[u8],
    label: &str,
    author: Author,
    links: &Links,
) -> Result<(), Violation> {
    let parsed = strict::parse(result, label)?;
    let cmp = strict::compare_as(base_parsed, &parsed, author, links)?;
    strict::raw_change(base, result, &cmp)
}

/// `canonicalize`: the PR's appended entries get the PR's own link.
pub fn canonicalize(
    base: &[u8],
    head: &[u8],
    pr: u64,
    links: &Links,
) -> Result<Vec<u8>, Violation> {
    let b = strict::parse(base, "base perf-changelog.yaml")?;
    let h = strict::parse(head, "PR perf-changelog.yaml")?;
    let cmp = strict::compare(&b, &h, Some(pr), links)?;
    strict::raw_change(base, head, &cmp)?;
    if cmp.additions == 0 {
        return Ok(head.to_vec());
    }
    let expected = links.expected(pr);
    let sp = spans(head, &h)?;
    let mut replacements = Vec::new();
    for (i, (entry, &s)) in h.entries.iter().zip(&sp).enumerate().skip(b.entries.len()) {
        let link = strict::link_of(entry);
        if link == expected {
            continue;
        }
        if !links.is_placeholder(&link) {
            return Err(fail(format!(
                "appended entry {} has unexpected pr-link {}",
                i + 1,
                python_repr_str(&link)
            )));
        }
        replacements.push((
            s,
            replace_pr_link(&head[s.start..s.content_end], &expected)?,
        ));
    }
    let result = splice(head, &replacements);
    recheck(
        base,
        &b,
        &result,
        "prepared perf-changelog.yaml",
        Author::Pr(pr),
        links,
    )?;
    Ok(result)
}

fn signature(entry: &Value) -> String {
    dumps_like_python(&without_pr_link(entry))
}

/// `resolve-conflict` (and the stale-branch catch-up): merge base, PR side
/// and main side of the changelog → main's bytes plus the PR's own
/// contribution. With the PR number its entries get the PR's link; without
/// one (the PR does not exist yet) they keep theirs as written, an `XXX`
/// placeholder or a canonical link.
pub fn resolve(
    base: &[u8],
    ours: &[u8],
    main: &[u8],
    pr: Option<u64>,
    links: &Links,
) -> Result<Vec<u8>, Violation> {
    let author = pr.map_or(Author::UnnumberedPr, Author::Pr);
    let b = strict::parse(base, "merge-base perf-changelog.yaml")?;
    let p = strict::parse(ours, "PR-side perf-changelog.yaml")?;
    let m = strict::parse(main, "main-side perf-changelog.yaml")?;
    let cmp = strict::compare_as(&b, &p, author, links)?;
    strict::raw_change(base, ours, &cmp)?;
    let result = if cmp.additions > 0 {
        replay_additions(ours, &p, b.entries.len(), main, &m, pr, links)?
    } else if !cmp.corrected.is_empty() {
        replay_corrections(main, &m, &b, &p, &cmp.corrected)?
    } else {
        return Err(fail(
            "the PR has no appended entry or pr-link correction to preserve",
        ));
    };
    recheck(
        main,
        &m,
        &result,
        "resolved perf-changelog.yaml",
        author,
        links,
    )?;
    Ok(result)
}

/// Main's bytes plus the PR's appended entries (those after the first
/// `base_len`) that main does not already carry, each with the PR's link
/// when the PR number is known.
fn replay_additions(
    ours: &[u8],
    p: &Parsed,
    base_len: usize,
    main: &[u8],
    m: &Parsed,
    pr: Option<u64>,
    links: &Links,
) -> Result<Vec<u8>, Violation> {
    let main_sigs: Vec<String> = m.entries.iter().map(signature).collect();
    let sp = spans(ours, p)?;
    let mut blocks = Vec::new();
    for (entry, &s) in p.entries.iter().zip(&sp).skip(base_len) {
        if main_sigs.contains(&signature(entry)) {
            continue;
        }
        let block = &ours[s.start..s.content_end];
        blocks.push(match pr {
            Some(n) => replace_pr_link(block, &links.expected(n))?,
            None => block.to_vec(),
        });
    }
    if blocks.is_empty() {
        return Err(fail(
            "the PR has no changelog contribution remaining after merging main",
        ));
    }
    let mut out = main.to_vec();
    if !main.ends_with(b"\n\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(&blocks.join(&b'\n'));
    Ok(out)
}

/// Main's bytes with the PR's pr-link corrections (entries `corrected` of
/// merge base `b` vs PR side `p`) applied where main still has the base's
/// link.
fn replay_corrections(
    main: &[u8],
    m: &Parsed,
    b: &Parsed,
    p: &Parsed,
    corrected: &[usize],
) -> Result<Vec<u8>, Violation> {
    let sp = spans(main, m)?;
    let mut replacements = Vec::new();
    for &i in corrected {
        let Some(main_entry) = m.entries.get(i) else {
            return Err(fail(format!("main is missing corrected entry {}", i + 1)));
        };
        if without_pr_link(main_entry) != without_pr_link(&b.entries[i]) {
            return Err(fail(format!(
                "main changed corrected entry {}; resolve manually",
                i + 1
            )));
        }
        let desired = strict::link_of(&p.entries[i]);
        let main_link = strict::link_of(main_entry);
        if main_link == desired {
            continue;
        }
        if main_link != strict::link_of(&b.entries[i]) {
            return Err(fail(format!(
                "main has a conflicting pr-link for entry {}",
                i + 1
            )));
        }
        let s = sp[i];
        replacements.push((s, replace_pr_link(&main[s.start..s.content_end], &desired)?));
    }
    if replacements.is_empty() {
        return Err(fail(
            "the PR's pr-link corrections are already present on main",
        ));
    }
    Ok(splice(main, &replacements))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;

    const L: &str = "https://github.com/SemiAnalysisAI/InferenceX/pull/";

    fn entry(key: &str, link: &str) -> String {
        format!("- config-keys:\n    - {key}\n  description:\n    - d\n  pr-link: {link}\n")
    }

    #[test]
    fn canonicalize_rewrites_placeholders_only() {
        let base = entry("a", &format!("{L}1"));
        let head = format!("{base}\n{}", entry("b", "XXX"));
        let out = canonicalize(base.as_bytes(), head.as_bytes(), 42, &Links::default()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{base}\n{}", entry("b", &format!("{L}42")))
        );
        let head = format!("{base}\n{}", entry("b", &format!("{L}42")));
        let out = canonicalize(base.as_bytes(), head.as_bytes(), 42, &Links::default()).unwrap();
        assert_eq!(out, head.as_bytes(), "already prepared");
    }

    #[test]
    fn resolve_appends_pr_entries_after_main() {
        let base = entry("a", &format!("{L}1"));
        let ours = format!("{base}\n{}", entry("mine", "XXX"));
        let main = format!("{base}\n{}", entry("theirs", &format!("{L}2")));
        let out = resolve(
            base.as_bytes(),
            ours.as_bytes(),
            main.as_bytes(),
            Some(7),
            &Links::default(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{main}\n{}", entry("mine", &format!("{L}7")))
        );
        // Already merged upstream: nothing of ours remains.
        let main2 = format!("{main}\n{}", entry("mine", &format!("{L}7")));
        let e = resolve(
            base.as_bytes(),
            ours.as_bytes(),
            main2.as_bytes(),
            Some(7),
            &Links::default(),
        )
        .unwrap_err();
        assert!(e.message.contains("no changelog contribution remaining"));
    }

    #[test]
    fn resolve_carries_pr_link_corrections() {
        let base = entry("a", "XXX");
        let ours = entry("a", &format!("{L}5"));
        let main = format!("{base}\n{}", entry("b", &format!("{L}2")));
        let out = resolve(
            base.as_bytes(),
            ours.as_bytes(),
            main.as_bytes(),
            Some(5),
            &Links::default(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "{}\n{}",
                entry("a", &format!("{L}5")),
                entry("b", &format!("{L}2"))
            )
        );
    }

    #[test]
    fn resolve_without_a_pr_number_keeps_the_placeholder_as_written() {
        let base = entry("a", &format!("{L}1"));
        let ours = format!("{base}\n{}", entry("mine", "XXX"));
        let main = format!("{base}\n{}", entry("theirs", &format!("{L}2")));
        let out = resolve(
            base.as_bytes(),
            ours.as_bytes(),
            main.as_bytes(),
            None,
            &Links::default(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{main}\n{}", entry("mine", "XXX"))
        );
        // A link that is neither a placeholder nor canonical is refused.
        let ours = format!("{base}\n{}", entry("mine", "TODO"));
        let e = resolve(
            base.as_bytes(),
            ours.as_bytes(),
            main.as_bytes(),
            None,
            &Links::default(),
        )
        .unwrap_err();
        assert!(e.message.contains("XXX placeholder"), "{}", e.message);
    }
}
