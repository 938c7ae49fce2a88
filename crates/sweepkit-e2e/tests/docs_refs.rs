//! The manual holds together: every `§N.N` reference in the repository's
//! code, workflows, templates, scripts and docs resolves to a heading of a
//! spec page under `docs/spec/`, every relative link of README.md and
//! docs/**/*.md points at a file that exists, the README stays short, and
//! the README's test command is the one `.ci/run` runs.
//!
//! Which spec a reference means: the spec file named on the same line before
//! it (`workflow.md §2`, `results.md` §8.3, "the matrix spec §7.3"), else the
//! spec of the file's place in the tree (`spec_for_path`). A reference with
//! neither is reported as naming no spec.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The spec pages, by the name code comments use for them.
const SPECS: [&str; 5] = ["matrix", "changelog", "results", "workflow", "github"];

/// File extensions scanned for references.
const SCANNED_EXTENSIONS: [&str; 5] = ["rs", "yml", "md", "j2", "sh"];

/// Directories never scanned: build output, git data, installed packages.
const SKIPPED_DIRS: [&str; 4] = ["target", ".git", "node_modules", "corpus"];

/// The README is the front page, not the manual (issue #27: at most 300 lines).
const README_MAX_LINES: usize = 300;

/// The section sign, written as an escape so this file holds no reference.
const SECTION: char = '\u{a7}';

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The spec a bare reference in `rel` (a path from the root, `/`-separated)
/// means: per crate, by what the crate implements; per file where a file
/// implements another spec than its crate.
fn spec_for_path(rel: &str) -> Option<&'static str> {
    const BY_FILE: [(&str, &str); 2] = [
        // The changelog matrix's row steps (--trim-conc, fingerprint, buckets).
        ("crates/sweep-matrix/src/assemble.rs", "changelog"),
        // The sweep policy is the workflow's label policy.
        ("crates/sweep-matrix/src/policy.rs", "workflow"),
    ];
    const BY_PREFIX: [(&str, &str); 20] = [
        ("docs/spec/matrix.md", "matrix"),
        ("docs/spec/changelog.md", "changelog"),
        ("docs/spec/results.md", "results"),
        ("docs/spec/workflow.md", "workflow"),
        ("docs/spec/github.md", "github"),
        ("crates/sweep-matrix/", "matrix"),
        ("crates/generate-matrix/", "matrix"),
        ("crates/sweep-model/", "matrix"),
        ("crates/sweep-changelog/", "changelog"),
        ("crates/check-changelog/", "changelog"),
        ("crates/collect-results/", "results"),
        ("crates/compare-results/", "results"),
        ("crates/success-rate/", "github"),
        ("crates/reuse-sweep/", "github"),
        ("crates/github-client/", "github"),
        ("crates/visualizer-comment/", "github"),
        ("crates/sweep-ops/", "github"),
        ("crates/sweepkit-e2e/", "workflow"),
        (".github/", "workflow"),
        ("actions/", "workflow"),
    ];
    if let Some((_, spec)) = BY_FILE.iter().find(|(f, _)| *f == rel) {
        return Some(spec);
    }
    if rel.starts_with("examples/") {
        return Some("workflow");
    }
    BY_PREFIX
        .iter()
        .find(|(p, _)| rel.starts_with(p))
        .map(|(_, s)| *s)
}

/// Section numbers of the headings of one spec page (`## 3.3 Event …` → `3.3`).
fn headings(page: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in page.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        let text = line.trim_start_matches('#');
        if fenced || text.len() == line.len() || !text.starts_with(' ') {
            continue;
        }
        let word = text.trim_start().split(' ').next().unwrap_or("");
        let number = word.trim_end_matches('.');
        if !number.is_empty()
            && number
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            out.insert(number.to_string());
        }
    }
    out
}

/// The section headings of every spec page under `<root>/docs/spec`.
fn spec_headings(root: &Path) -> BTreeMap<&'static str, BTreeSet<String>> {
    SPECS
        .iter()
        .map(|s| {
            let page =
                std::fs::read_to_string(root.join(format!("docs/spec/{s}.md"))).unwrap_or_default();
            (*s, headings(&page))
        })
        .collect()
}

/// Every scanned file below `dir`, sorted, as paths relative to `root`.
fn scanned_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if !SKIPPED_DIRS.contains(&name.as_str()) {
                scanned_files(root, &path, out);
            }
        } else if path
            .extension()
            .is_some_and(|e| SCANNED_EXTENSIONS.contains(&e.to_string_lossy().as_ref()))
        {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push(rel);
        }
    }
}

/// The spec named last in `before` (the text of the line before a reference).
fn named_spec(before: &str) -> Option<&'static str> {
    let mut best: Option<(usize, &'static str)> = None;
    for spec in SPECS {
        for form in [format!("{spec}.md"), format!("{spec} spec")] {
            let mut from = 0;
            while let Some(i) = before[from..].find(&form) {
                let at = from + i;
                let prev = before[..at].chars().next_back();
                let standalone =
                    !prev.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
                if standalone && best.is_none_or(|(b, _)| at > b) {
                    best = Some((at, spec));
                }
                from = at + form.len();
            }
        }
    }
    best.map(|(_, s)| s)
}

/// The section numbers referenced on one line, each with the byte offset of its `§`.
fn references(line: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (at, c) in line.char_indices() {
        if c != SECTION {
            continue;
        }
        let rest = line[at + c.len_utf8()..].trim_start_matches(' ');
        let mut number = String::new();
        for ch in rest.chars() {
            if ch.is_ascii_digit() || (ch == '.' && !number.is_empty()) {
                number.push(ch);
            } else {
                break;
            }
        }
        // A sentence may end right after the number: `§10.`
        let number = number.trim_end_matches('.').to_string();
        if !number.is_empty() {
            out.push((at, number));
        }
    }
    out
}

/// Scans the tree at `root`; returns the number of references checked and
/// one message per reference that does not resolve, naming file and line.
fn check_references(root: &Path) -> (usize, Vec<String>) {
    let specs = spec_headings(root);
    let mut files = Vec::new();
    scanned_files(root, root, &mut files);
    let mut checked = 0;
    let mut failures = Vec::new();
    for rel in files {
        let Ok(text) = std::fs::read_to_string(root.join(&rel)) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            for (at, number) in references(line) {
                checked += 1;
                let Some(spec) = named_spec(&line[..at]).or_else(|| spec_for_path(&rel)) else {
                    failures.push(format!(
                        "{rel}:{}: `{SECTION}{number}` names no spec: write `<spec>.md {SECTION}{number}` (one of {SPECS:?})",
                        i + 1
                    ));
                    continue;
                };
                if !specs[spec].contains(&number) {
                    failures.push(format!(
                        "{rel}:{}: `{SECTION}{number}` has no heading in docs/spec/{spec}.md",
                        i + 1
                    ));
                }
            }
        }
    }
    (checked, failures)
}

#[test]
fn every_section_reference_resolves_to_a_spec_heading() {
    let (checked, failures) = check_references(&root());
    eprintln!("{checked} section references checked");
    assert!(
        checked > 150,
        "only {checked} references found: is the scan reaching the crates?"
    );
    assert!(
        failures.is_empty(),
        "{} dangling references:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_dangling_reference_is_reported_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("docs/spec")).unwrap();
    std::fs::create_dir_all(root.join("crates/sweep-matrix/src")).unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(
        root.join("docs/spec/matrix.md"),
        "# matrix\n\n## 7. Expansion\n\n### 7.1 Shared definitions\n",
    )
    .unwrap();
    std::fs::write(
        root.join("docs/spec/workflow.md"),
        "# workflow\n\n## 2. Job graph\n",
    )
    .unwrap();
    let s = SECTION;
    std::fs::write(
        root.join("crates/sweep-matrix/src/a.rs"),
        format!("//! ok {s}7.1 and workflow.md {s}2\n// dangling {s}7.9\n// wrong spec: workflow.md {s}7.1\n"),
    )
    .unwrap();
    std::fs::write(root.join("notes.md"), format!("bare {s}7.1\n")).unwrap();
    // Build output is never scanned.
    std::fs::write(root.join("target/x.rs"), format!("// {s}99\n")).unwrap();
    let (checked, failures) = check_references(root);
    assert_eq!(checked, 5, "{failures:?}");
    assert_eq!(
        failures,
        vec![
            format!(
                "crates/sweep-matrix/src/a.rs:2: `{s}7.9` has no heading in docs/spec/matrix.md"
            ),
            format!(
                "crates/sweep-matrix/src/a.rs:3: `{s}7.1` has no heading in docs/spec/workflow.md"
            ),
            format!(
                "notes.md:1: `{s}7.1` names no spec: write `<spec>.md {s}7.1` (one of {SPECS:?})"
            ),
        ]
    );
}

#[test]
fn readme_stays_a_front_page_of_at_most_300_lines() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines (limit {README_MAX_LINES}): move detail into docs/"
    );
}

/// Relative link targets of a markdown page (outside code), with their line.
fn relative_links(page: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in page.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code (`[a](b)` shown as text) holds no link.
        let text: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let Some(end) = tail.find(')') else { break };
            let target = tail[..end]
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string();
            rest = &tail[end..];
            let external = target.contains("://") || target.starts_with("mailto:");
            if !external && !target.is_empty() {
                out.push((i + 1, target));
            }
        }
    }
    out
}

/// Checks every relative link of README.md and docs/**/*.md under `root`;
/// returns the dangling links (file:line: target).
fn check_links(root: &Path) -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    let mut files = Vec::new();
    if root.join("docs").is_dir() {
        scanned_files(root, &root.join("docs"), &mut files);
    }
    pages.extend(files.into_iter().filter(|f| f.ends_with(".md")));
    let mut dangling = Vec::new();
    for rel in pages {
        let Ok(text) = std::fs::read_to_string(root.join(&rel)) else {
            continue;
        };
        let dir = Path::new(&rel).parent().unwrap_or(Path::new(""));
        for (line, target) in relative_links(&text) {
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let joined = if path.is_empty() {
                rel.clone()
            } else {
                normalise(&dir.join(path))
            };
            if root.join(&joined).exists() {
                let page = std::fs::read_to_string(root.join(&joined)).unwrap_or_default();
                if !anchor.is_empty() && joined.ends_with(".md") && !anchors(&page).contains(anchor)
                {
                    dangling.push(format!("{rel}:{line}: {target} (no such heading)"));
                }
                continue;
            }
            dangling.push(format!("{rel}:{line}: {target}"));
        }
    }
    dangling
}

/// The anchors GitHub gives a page's headings: lower case, spaces to `-`,
/// punctuation other than `-` and `_` dropped (`## \`split\`, leg-env` →
/// `split-leg-env`).
fn anchors(page: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let text = line.trim_start_matches('#');
        if fenced || text.len() == line.len() || !text.starts_with(' ') {
            continue;
        }
        let slug: String = text
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        out.insert(slug);
    }
    out
}

/// `docs/tools/../adopt.md` → `docs/adopt.md`, with `/` separators.
fn normalise(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::CurDir => {}
            other => parts.push(other.as_os_str().to_string_lossy().to_string()),
        }
    }
    parts.join("/")
}

#[test]
fn every_relative_link_of_the_readme_and_docs_resolves() {
    let dangling = check_links(&root());
    assert!(
        dangling.is_empty(),
        "dangling links:\n{}",
        dangling.join("\n")
    );
}

#[test]
fn a_dangling_link_is_reported_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("docs/tools")).unwrap();
    std::fs::write(
        root.join("docs/adopt.md"),
        "# adopt\n\n## Why `it` is, so\n",
    )
    .unwrap();
    std::fs::write(
        root.join("README.md"),
        "[a](docs/adopt.md#why-it-is-so) [a2](docs/adopt.md#why) [b](docs/gone.md) [c](docs/limits.md) [d](https://x.org/y.md)\n```\n[e](not/checked.md)\n```\n",
    )
    .unwrap();
    std::fs::write(
        root.join("docs/tools/t.md"),
        "see [adopt](../adopt.md), [x](../missing.md), `[run](url)`\n",
    )
    .unwrap();
    let dangling = check_links(root);
    assert_eq!(
        dangling,
        vec![
            "README.md:1: docs/adopt.md#why (no such heading)",
            "README.md:1: docs/gone.md",
            "README.md:1: docs/limits.md",
            "docs/tools/t.md:1: ../missing.md"
        ]
    );
}

#[test]
fn ci_runs_exactly_the_readme_test_command() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let command = ci
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("exec "))
        .expect(".ci/run ends by exec-ing the test command")
        .trim()
        .to_string();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let first_block: Vec<&str> = readme
        .split("```")
        .nth(1)
        .expect("README.md opens with a code block of its two commands")
        .lines()
        .skip(1)
        .collect();
    assert!(
        first_block
            .iter()
            .any(|l| l.split('#').next().unwrap().trim() == command),
        "README.md's first code block must hold .ci/run's command `{command}`: {first_block:?}"
    );
}
