//! Each tool's page under `docs/tools/` agrees with the binary (issue #38
//! item 6): every flag the page names is one the tool (or the other command
//! named on that line) accepts, every flag the tool's `--help` lists is on
//! its page, the exit codes the help states are the page's, and the error
//! prefix the page shows is the one the tool prints, `<tool>: error: `, on
//! a failure it really has (run here, exit 2).

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use test_kit::{TOOLS, stderr, tool_command};

/// Pages that also document a tool's flags: `generate-matrix changelog` is
/// described on check-changelog's page (the gate runs it in-process).
const ALSO_ON: &[(&str, &str)] = &[("generate-matrix", "check-changelog")];

/// Flags a page names that belong to a program other than sweepkit's tools,
/// with why they are there.
const FOREIGN: &[(&str, &str, &str)] = &[
    (
        "check-changelog",
        "--end-of-options",
        "git: every git call passes it",
    ),
    (
        "check-changelog",
        "--output",
        "git: the injection a `-` ref is refused for",
    ),
    (
        "sweep-ops",
        "--allow-empty",
        "git commit in the merge recipe",
    ),
];

/// A failure each tool really has, run in an empty directory without a
/// token: (tool, arguments). Each must exit 2 with `<tool>: error: `.
const FAILURES: &[(&str, &[&str])] = &[
    ("check-changelog", &["--base-ref", "a", "--head-ref", "b"]),
    (
        "generate-matrix",
        &[
            "full-sweep",
            "--config-files",
            "missing.yaml",
            "--runner-config",
            "missing-runners.yaml",
        ],
    ),
    ("collect-results", &["process"]),
    ("compare-results", &["--new", "missing.json"]),
    ("success-rate", &["--repo", "o/r", "--run-id", "1", "stats"]),
    (
        "visualizer-comment",
        &["--repo", "o/r", "--pr-number", "1", "--run-id", "1"],
    ),
    (
        "reuse-sweep",
        &["validate-artifacts", "--artifacts-dir", "missing"],
    ),
    ("sweep-ops", &["runner-digest", "--repo", "o/r"]),
    ("sweepkit", &["workflow", "check", "--dir", "missing"]),
    ("sweep-history", &["verify", "--store", "missing"]),
];

fn help(args: &[&str]) -> String {
    let out = tool_command(args[0])
        .args(&args[1..])
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// Flags defined in one help text (`  --flag`, `  -x, --flag`, and
/// `[aliases: --a, --b]`), not the ones its descriptions mention.
fn defined_flags(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let t = line.trim_start();
        let t = t
            .strip_prefix('-')
            .and_then(|r| r.split_once(", "))
            .filter(|(short, _)| short.len() == 1)
            .map_or(t, |(_, rest)| rest);
        if let Some(name) = t.strip_prefix("--") {
            let name: String = name
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if !name.is_empty() && line.starts_with("  ") {
                out.insert(format!("--{name}"));
            }
        }
        if let Some((_, rest)) = line.split_once("[aliases: ") {
            for a in rest.split(']').next().unwrap_or("").split(", ") {
                if a.starts_with("--") {
                    out.insert(a.to_string());
                }
            }
        }
    }
    out.remove("--help");
    out.remove("--version");
    out
}

/// The subcommands a help text lists (not `help`).
fn subcommands(text: &str) -> Vec<String> {
    let Some((_, rest)) = text.split_once("Commands:\n") else {
        return Vec::new();
    };
    rest.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// Every flag of a tool and its subcommands, and every help text read.
fn tool_flags(tool: &str) -> (BTreeSet<String>, Vec<String>) {
    let mut flags = BTreeSet::new();
    let mut texts = Vec::new();
    let mut todo = vec![vec![tool.to_string()]];
    while let Some(cmd) = todo.pop() {
        let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let text = help(&args);
        flags.extend(defined_flags(&text));
        if cmd.len() < 3 {
            for sub in subcommands(&text) {
                let mut next = cmd.clone();
                next.push(sub);
                todo.push(next);
            }
        }
        texts.push(text);
    }
    (flags, texts)
}

fn page(tool: &str) -> String {
    // This crate's own root, not test-kit's: a shared target directory
    // can hold a test-kit built from another checkout of the workspace.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join(format!("docs/tools/{tool}.md"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `--flag` tokens of a text with their line number (1-based).
fn named_flags(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let b = line.as_bytes();
        let mut j = 0;
        while let Some(k) = line[j..].find("--").map(|k| k + j) {
            let before = k.checked_sub(1).map(|p| b[p]);
            let start_ok = before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == b'-'));
            let name: String = line[k + 2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if start_ok && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                out.push((i + 1, format!("--{name}")));
            }
            j = k + 2 + name.len();
        }
    }
    out
}

struct Tools {
    flags: BTreeMap<&'static str, BTreeSet<String>>,
    helps: BTreeMap<&'static str, Vec<String>>,
}

fn tools() -> Tools {
    let mut flags = BTreeMap::new();
    let mut helps = BTreeMap::new();
    for tool in TOOLS {
        let (f, h) = tool_flags(tool);
        flags.insert(*tool, f);
        helps.insert(*tool, h);
    }
    Tools { flags, helps }
}

/// Whether a flag named on `line` of `tool`'s page is accounted for: the
/// tool's own, a placeholder prefix of its own (`--run-…`), another
/// tool's named on the same line, or a listed foreign one.
fn accounted(tools: &Tools, tool: &str, line: &str, flag: &str) -> bool {
    let own = &tools.flags[tool];
    if own.contains(flag) || flag == "--help" || flag == "--version" {
        return true;
    }
    if flag.ends_with('-') && own.iter().any(|f| f.starts_with(flag)) {
        return true;
    }
    if FOREIGN.iter().any(|(t, f, _)| *t == tool && *f == flag) {
        return true;
    }
    tools
        .flags
        .iter()
        .any(|(other, f)| *other != tool && line.contains(other) && f.contains(flag))
}

#[test]
fn each_page_names_only_flags_the_tools_accept_and_every_flag_of_the_tool() {
    let tools = tools();
    let mut problems = Vec::new();
    let mut checked = 0;
    for tool in TOOLS {
        let text = page(tool);
        let lines: Vec<&str> = text.lines().collect();
        for (n, flag) in named_flags(&text) {
            checked += 1;
            if !accounted(&tools, tool, lines[n - 1], &flag) {
                problems.push(format!(
                    "docs/tools/{tool}.md:{n}: `{flag}` is not a flag of {tool} (nor of a tool \
                     named on that line)"
                ));
            }
        }
        let mut documented: BTreeSet<String> =
            named_flags(&text).into_iter().map(|(_, f)| f).collect();
        for (t, other) in ALSO_ON {
            if t == tool {
                documented.extend(named_flags(&page(other)).into_iter().map(|(_, f)| f));
            }
        }
        for flag in &tools.flags[tool] {
            if !documented.contains(flag) {
                problems.push(format!(
                    "{tool} --help lists `{flag}` but docs/tools/{tool}.md does not name it"
                ));
            }
        }
    }
    eprintln!("{checked} flag mentions checked on {} pages", TOOLS.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The exit codes (standalone `0`, `1`, `2`) a text states: in each
/// paragraph from a word "Exit" on.
fn exit_codes(text: &str) -> BTreeSet<char> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("Exit") {
        let block = text[i..].split("\n\n").next().unwrap_or("");
        for w in block.split(|c: char| !c.is_ascii_digit()) {
            if matches!(w, "0" | "1" | "2") {
                out.extend(w.chars());
            }
        }
    }
    out
}

#[test]
fn exit_codes_in_help_are_the_pages_and_every_page_states_them() {
    let tools = tools();
    let mut problems = Vec::new();
    for tool in TOOLS {
        let text = page(tool);
        if !text.contains("index.md#exit-codes") {
            problems.push(format!(
                "docs/tools/{tool}.md does not link the exit contract (index.md#exit-codes)"
            ));
        }
        let documented = exit_codes(&text);
        for code in ['0', '2'] {
            if !documented.contains(&code) {
                problems.push(format!("docs/tools/{tool}.md states no exit code {code}"));
            }
        }
        let top = &tools.helps[tool][0];
        let in_help = top.contains("Exit codes:") || top.contains("Exit status:");
        if !in_help {
            problems.push(format!("{tool} --help states no exit codes"));
        }
        let stated = exit_codes(top);
        for code in ['0', '2'] {
            if in_help && !stated.contains(&code) {
                problems.push(format!("{tool} --help states no exit code {code}"));
            }
        }
        for code in stated {
            if !documented.contains(&code) {
                problems.push(format!(
                    "{tool} --help states exit code {code}, docs/tools/{tool}.md does not"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn pages_show_the_error_prefix_the_tools_print() {
    let mut problems = Vec::new();
    for tool in TOOLS {
        let text = page(tool);
        for (i, line) in text.lines().enumerate() {
            if line.contains("ERROR:") {
                problems.push(format!(
                    "docs/tools/{tool}.md:{}: shows `ERROR:`; the tools print `<tool>: error: `",
                    i + 1
                ));
            }
            for (k, _) in line.match_indices("error: ") {
                let before = line[..k].trim_end_matches(' ');
                let ok = before.ends_with(':')
                    && TOOLS
                        .iter()
                        .any(|t| before.trim_end_matches(':').ends_with(t));
                let annotation = line[..k].ends_with("::");
                if !ok && !annotation && line[..k].ends_with('`') {
                    problems.push(format!(
                        "docs/tools/{tool}.md:{}: an error shown without its tool prefix",
                        i + 1
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_tool_prints_its_prefix_and_exits_2_when_it_cannot_do_the_job() {
    let dir = test_kit::temp_dir();
    let mut problems = Vec::new();
    for tool in TOOLS {
        let Some((_, args)) = FAILURES.iter().find(|(t, _)| t == tool) else {
            problems.push(format!("{tool}: no failure case in FAILURES"));
            continue;
        };
        let out = tool_command(tool)
            .args(*args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = stderr(&out);
        let prefix = format!("{tool}: error: ");
        if out.status.code() != Some(2) || !err.starts_with(&prefix) {
            problems.push(format!(
                "{tool} {args:?}: exit {:?}, stderr {err:?} (expected 2 and `{prefix}`)",
                out.status.code()
            ));
        }
        // A usage error is exit 2 too (clap's own wording).
        let out = tool_command(tool).arg("--no-such-flag").output().unwrap();
        if out.status.code() != Some(2) {
            problems.push(format!(
                "{tool} --no-such-flag: exit {:?}",
                out.status.code()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_help_parser_reads_definitions_not_mentions() {
    let text = "Options:\n      --repo <REPO>\n          See --other here\n  -j, --json\n      --pr-number <N>  [aliases: --pr]\n";
    let flags: Vec<String> = defined_flags(text).into_iter().collect();
    assert_eq!(flags, ["--json", "--pr", "--pr-number", "--repo"]);
    assert_eq!(
        named_flags("run `x --a-b` and --c, not a--d or --9")
            .into_iter()
            .map(|(_, f)| f)
            .collect::<Vec<_>>(),
        ["--a-b", "--c"]
    );
}
