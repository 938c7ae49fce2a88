//! End-to-end tests: throwaway git repositories in a temp dir, the real
//! `check-changelog` binary and the in-process `generate-matrix changelog`
//! pipeline. Configs are small hand-written ones.
#![allow(clippy::unwrap_used)] // tests fail loudly by design

use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;
use sweep_changelog::git::Repo;
use sweep_changelog::pipeline::Options;
use test_kit::{stderr, stdout};

const AMD: &str = "\
alpha-fp8-mi355x-sglang:
  image: example/sglang:v1
  model: example-org/Alpha
  model-prefix: alpha
  precision: fp8
  framework: sglang
  runner: mi355x
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-list: [4, 16] }
";

const NVIDIA: &str = "\
beta-fp4-h200-vllm:
  image: example/vllm:v2
  model: example-org/Beta
  model-prefix: beta
  precision: fp4
  framework: vllm
  runner: h200
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 4, conc-list: [8] }
";

const RUNNERS: &str = "\
labels:
  h200:
    - h200-a_00
  mi355x:
    - mi355x-a_00
";

const LINK: &str = "https://github.com/SemiAnalysisAI/InferenceX/pull/";

fn entry(key: &str, link: &str) -> String {
    format!("- config-keys:\n    - {key}\n  description:\n    - change {key}\n  pr-link: {link}\n")
}

struct Fixture {
    _tmp: test_kit::TempDir,
    dir: PathBuf,
}

impl Fixture {
    /// A repository on `main` with configs and a one-entry changelog.
    fn new() -> Self {
        let tmp = test_kit::temp_dir();
        let dir = tmp.path().join("repo");
        std::fs::create_dir_all(dir.join("configs")).unwrap();
        let f = Fixture { _tmp: tmp, dir };
        f.git(&["init", "-q", "-b", "main"]);
        f.git(&["config", "user.email", "t@example.invalid"]);
        f.git(&["config", "user.name", "t"]);
        f.write("configs/amd-master.yaml", AMD);
        f.write("configs/nvidia-master.yaml", NVIDIA);
        f.write("configs/runners.yaml", RUNNERS);
        f.write(
            "perf-changelog.yaml",
            &entry("beta-fp4-h200-vllm", &format!("{LINK}1")),
        );
        f.commit("base");
        f
    }

    fn git(&self, args: &[&str]) -> String {
        test_kit::git(&self.dir, args)
    }

    fn write(&self, path: &str, text: &str) {
        std::fs::write(self.dir.join(path), text).unwrap();
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.dir.join(path)).unwrap()
    }

    fn append(&self, text: &str) {
        let old = self.read("perf-changelog.yaml");
        self.write("perf-changelog.yaml", &format!("{old}{text}"));
    }

    fn commit(&self, msg: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", msg]);
        self.git(&["rev-parse", "HEAD"])
    }

    fn check(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        test_kit::command(env!("CARGO_BIN_EXE_check-changelog"))
            .args(args)
            .current_dir(&self.dir)
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }

    fn generate(&self, base: &str, head: &str) -> Result<Value, String> {
        let opts = Options {
            base_ref: base.into(),
            head_ref: head.into(),
            changelog_file: "perf-changelog.yaml".into(),
            ..Options::default()
        };
        sweep_changelog::pipeline::run(&Repo::new(&self.dir), &opts)
            .map_err(|r| r.message)
            .map(|m| m.to_value().unwrap())
    }
}

#[test]
fn appended_entry_is_accepted_and_generates_the_matrix() {
    let f = Fixture::new();
    let base = f.git(&["rev-parse", "HEAD"]);
    f.append(&format!(
        "\n{}",
        entry("alpha-fp8-mi355x-sglang", &format!("{LINK}2"))
    ));
    let head = f.commit("add alpha");
    let out = f.check(&["--base-ref", &base, "--head-ref", &head], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .contains("Validated perf-changelog.yaml: final newline present and matrix generated")
    );

    let m = f.generate(&base, &head).unwrap();
    let rows = m["single_node"]["1k1k"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "one row per concurrency");
    assert_eq!(rows[0]["conc"], 4);
    assert_eq!(rows[0]["recipe-fingerprint"], rows[1]["recipe-fingerprint"]);
    assert_eq!(rows[0]["eval-only"], false);
    assert_eq!(
        m["changelog_metadata"]["entries"][0]["config-keys"][0],
        "alpha-fp8-mi355x-sglang"
    );
    assert_eq!(m["changelog_metadata"]["entries"][0]["append-only"], false);
    assert_eq!(m["changelog_metadata"]["base_ref"], base.as_str());
}

#[test]
fn genuine_deletion_gives_the_deletion_error() {
    let f = Fixture::new();
    let base = f.git(&["rev-parse", "HEAD"]);
    let text = f
        .read("perf-changelog.yaml")
        .replace(&format!("{LINK}1"), &format!("{LINK}9"));
    f.write(
        "perf-changelog.yaml",
        &format!("{text}\n{}", entry("alpha-fp8-mi355x-sglang", "XXX")),
    );
    let head = f.commit("rewrite a link");
    let out = f.check(&["--base-ref", &base, "--head-ref", &head], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("rejected the diff"), "{err}");
    assert!(
        err.contains(&format!("Deletions are not allowed in perf-changelog.yaml. Only additions to the changelog are permitted. Found deleted line:   pr-link: {LINK}1")),
        "{err}"
    );
    assert!(!err.contains("behind"), "{err}");
    let report = err.replace(&base, "[BASE]").replace(&head, "[HEAD]");
    test_kit::assert_snapshot!("deletion_rejection_report", report);
}

#[test]
fn stale_branch_is_diagnosed_and_catch_up_fixes_it() {
    let f = Fixture::new();
    f.git(&["checkout", "-q", "-b", "pr"]);
    f.append(&format!("\n{}", entry("alpha-fp8-mi355x-sglang", "XXX")));
    let pr_head = f.commit("PR entry");
    f.git(&["checkout", "-q", "main"]);
    f.append(&format!(
        "\n{}",
        entry("beta-fp4-h200-vllm", &format!("{LINK}3"))
    ));
    f.commit("main gains an entry after the PR branched");
    f.git(&["checkout", "-q", "pr"]);

    let out = f.check(&["--base-ref", "main", "--head-ref", &pr_head], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(
            "your branch is behind main: 1 entry was appended there since you branched (merge \
             base "
        ),
        "{err}"
    );
    // It leads with what works: catch-up, or a merge and resolve-conflict;
    // `git rebase` conflicts in the changelog, so it is not advised.
    assert!(
        err.contains(
            "To catch up, in the PR checkout run `check-changelog prepare-merge catch-up \
             --base-ref main` (add `--pr-number N` once the PR exists) and commit; or `git \
             merge main` and, on its conflict in perf-changelog.yaml, `check-changelog \
             prepare-merge resolve-conflict`, then `git add` and commit"
        ),
        "{err}"
    );
    assert!(!err.contains("rebase"), "{err}");
    assert!(err.contains("Deletions are not allowed"), "{err}");

    let out = f.check(
        &[
            "prepare-merge",
            "catch-up",
            "--base-ref",
            "main",
            "--pr-number",
            "12",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "Prepared perf-changelog.yaml for PR #12"
    );
    let text = f.read("perf-changelog.yaml");
    assert!(
        text.ends_with(&format!(
            "\n\n{}",
            entry("alpha-fp8-mi355x-sglang", &format!("{LINK}12"))
        )),
        "{text}"
    );
    let fixed = f.commit("catch up with main");
    let out = f.check(
        &[
            "--base-ref",
            "main",
            "--head-ref",
            &fixed,
            "--strict",
            "--pr-number",
            "12",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let m = f.generate("main", &fixed).unwrap();
    assert_eq!(m["single_node"]["1k1k"].as_array().unwrap().len(), 2);
}

#[test]
fn unknown_ref_says_how_to_fix_the_checkout() {
    let f = Fixture::new();
    let out = f.check(&["--base-ref", "origin/nope", "--head-ref", "HEAD"], &[]);
    // The ref cannot be read: the job could not be done (exit 2).
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("unknown git revision 'origin/nope'"), "{err}");
    assert!(err.contains("fetch-depth: 0"), "{err}");
}

/// Issue #16 point 5: a ref that git would read as an option is refused
/// before git runs (`--output=<file>` used to write that file).
#[test]
fn a_ref_that_looks_like_an_option_is_refused() {
    let f = Fixture::new();
    f.append(&format!(
        "\n{}",
        entry("alpha-fp8-mi355x-sglang", &format!("{LINK}2"))
    ));
    f.commit("pr");
    let victim = f._tmp.path().join("written-by-git");
    let injected = format!("--output={}", victim.display());
    let out = f.check(
        &["--base-ref", "HEAD~1"],
        &[("INPUT_HEAD_REF", injected.as_str())],
    );
    assert!(!victim.exists(), "git wrote {}", victim.display());
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("git revision '{injected}' starts with '-'")),
        "{err}"
    );
    // The same through the flag, and for the base.
    let base = format!("--base-ref={injected}");
    let out = f.check(&[base.as_str(), "--head-ref", "HEAD"], &[]);
    assert!(!victim.exists());
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("starts with '-'"), "{}", stderr(&out));
}

#[test]
fn shallow_clone_without_the_base_names_fetch_depth() {
    let f = Fixture::new();
    let base = f.git(&["rev-parse", "HEAD"]);
    f.append(&format!(
        "\n{}",
        entry("alpha-fp8-mi355x-sglang", &format!("{LINK}2"))
    ));
    f.commit("add alpha");
    let shallow = f.dir.parent().unwrap().join("shallow");
    let url = format!("file://{}", f.dir.display());
    test_kit::git(
        f.dir.parent().unwrap(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            shallow.to_str().unwrap(),
        ],
    );
    let out = test_kit::command(env!("CARGO_BIN_EXE_check-changelog"))
        .args(["--base-ref", &base, "--head-ref", "HEAD"])
        .current_dir(&shallow)
        .output()
        .unwrap();
    // The base is not in the clone: unreadable input (exit 2).
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("shallow clone"), "{err}");
    assert!(err.contains("fetch-depth: 0"), "{err}");
}

#[test]
fn rejections_are_annotated_in_github_actions() {
    let f = Fixture::new();
    let base = f.git(&["rev-parse", "HEAD"]);
    // Line 6 is the blank separator; the new entry starts on line 7.
    f.append("\n- config-keys:\n    - alpha-fp8-mi355x-sglang\n  description:\n    - no link\n");
    let head = f.commit("entry without pr-link");
    let out = f.check(
        &["--base-ref", &base, "--head-ref", &head],
        &[("GITHUB_ACTIONS", "true")],
    );
    assert_eq!(out.status.code(), Some(1));
    let so = stdout(&out);
    assert!(
        so.starts_with("::error file=perf-changelog.yaml,line=7::"),
        "{so}"
    );
    assert!(so.contains("required field 'pr-link' is missing"), "{so}");
    let annotations = so.replace(&base, "[BASE]").replace(&head, "[HEAD]");
    test_kit::assert_snapshot!("missing_pr_link_annotations", annotations);
    // Outside Actions: no workflow command.
    let out = f.check(&["--base-ref", &base, "--head-ref", &head], &[]);
    assert!(stdout(&out).is_empty());
}

#[test]
fn missing_final_newline_is_rejected() {
    let f = Fixture::new();
    let base = f.git(&["rev-parse", "HEAD"]);
    let e = entry("alpha-fp8-mi355x-sglang", &format!("{LINK}2"));
    f.append(&format!("\n{}", e.trim_end()));
    let head = f.commit("no newline");
    let out = f.check(
        &["--base-ref", &base, "--head-ref", &head],
        &[("GITHUB_ACTIONS", "true")],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(&format!(
        "perf-changelog.yaml at {head} does not end with a newline"
    )));
    assert!(stdout(&out).contains("line=11::"), "{}", stdout(&out));
    // generate-matrix changelog does not apply this rule.
    assert!(f.generate(&base, &head).is_ok());
}

/// Each byte-level violation: accepted by default (as the reference CLI),
/// rejected with --strict naming the line.
#[test]
fn strict_rejects_each_byte_level_violation_with_its_line() {
    let good = entry("alpha-fp8-mi355x-sglang", &format!("{LINK}2"));
    let cases: Vec<(&str, String, &str, usize)> = vec![
        (
            "crlf",
            format!("\n{}", good.replace('\n', "\r\n")),
            "contains CR characters",
            7,
        ),
        (
            "tab in a quoted scalar",
            format!(
                "\n{}",
                good.replace("change alpha-fp8-mi355x-sglang", "\"tab\there\"")
            ),
            "contains tabs",
            10,
        ),
        (
            "duplicate key",
            format!("\n{good}  pr-link: {LINK}2\n"),
            "found duplicate key 'pr-link'",
            12,
        ),
        (
            "no separator",
            good.clone(),
            "separated from history by one empty line",
            6,
        ),
        (
            "two separators",
            format!("\n\n{good}"),
            "separated from history by one empty line",
            6,
        ),
        (
            "blank line after the last entry",
            format!("\n{good}\n"),
            "the final appended changelog entry must end with one newline",
            12,
        ),
        (
            "two appended entries without a separator",
            format!(
                "\n{good}{}",
                entry("beta-fp4-h200-vllm", &format!("{LINK}2"))
            ),
            "appended changelog entries must have exactly one empty separator line",
            12,
        ),
        (
            "placeholder link on main",
            format!("\n{}", entry("alpha-fp8-mi355x-sglang", "XXX")),
            "new main-branch entry has invalid pr-link: 'XXX'",
            11,
        ),
    ];
    for (name, addition, needle, line) in cases {
        let f = Fixture::new();
        let base = f.git(&["rev-parse", "HEAD"]);
        f.append(&addition);
        let head = f.commit(name);
        let out = f.check(&["--base-ref", &base, "--head-ref", &head], &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: default mode accepts: {}",
            stderr(&out)
        );
        let out = f.check(
            &["--base-ref", &base, "--head-ref", &head, "--strict"],
            &[("GITHUB_ACTIONS", "true")],
        );
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = stderr(&out);
        assert!(err.contains(needle), "{name}: {err}");
        let so = stdout(&out);
        assert!(
            so.contains(&format!("::error file=perf-changelog.yaml,line={line}::")),
            "{name}: {so}"
        );
    }
}

#[test]
fn strict_accepts_a_placeholder_on_a_pr_run() {
    let f = Fixture::new();
    let base = f.git(&["rev-parse", "HEAD"]);
    f.append(&format!("\n{}", entry("alpha-fp8-mi355x-sglang", "XXX")));
    let head = f.commit("placeholder");
    let args = [
        "--base-ref",
        &base,
        "--head-ref",
        &head,
        "--strict",
        "--pr-number",
        "5",
    ];
    let out = f.check(&args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn canonicalize_rewrites_the_placeholder() {
    let f = Fixture::new();
    let base = f.git(&["rev-parse", "HEAD"]);
    f.append(&format!("\n{}", entry("alpha-fp8-mi355x-sglang", "XXX")));
    f.commit("placeholder");
    let args = [
        "prepare-merge",
        "canonicalize",
        "--base-ref",
        &base,
        "--pr-number",
        "77",
    ];
    let out = f.check(&args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        f.read("perf-changelog.yaml")
            .ends_with(&format!("  pr-link: {LINK}77\n"))
    );
    let out = f.check(&args, &[]);
    assert_eq!(
        stdout(&out).trim(),
        "perf-changelog.yaml already prepared for PR #77"
    );
}

#[test]
fn append_only_emits_only_the_new_points() {
    let f = Fixture::new();
    let base = f.git(&["rev-parse", "HEAD"]);
    f.write(
        "configs/amd-master.yaml",
        &AMD.replace("[4, 16]", "[4, 16, 64]"),
    );
    f.append(&format!(
        "\n{}  append-only: true\n",
        entry("alpha-fp8-mi355x-sglang", &format!("{LINK}2"))
    ));
    let head = f.commit("append a point");
    let m = f.generate(&base, &head).unwrap();
    let rows = m["single_node"]["1k1k"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["conc"], 64);
    assert_eq!(
        m["evals"],
        serde_json::json!([]),
        "append-only runs no evals"
    );
    // Changing a config the entry does not select is refused.
    f.write(
        "configs/nvidia-master.yaml",
        &NVIDIA.replace("[8]", "[8, 16]"),
    );
    let head2 = f.commit("touch another config");
    let err = f.generate(&base, &head2).unwrap_err();
    assert_eq!(
        err,
        "append-only PR changed configs not selected by its changelog entry: ['beta-fp4-h200-vllm']"
    );
}

#[test]
fn working_tree_configs_win_over_the_head_ref() {
    let f = Fixture::new();
    let base = f.git(&["rev-parse", "HEAD"]);
    f.append(&format!(
        "\n{}",
        entry("alpha-fp8-mi355x-sglang", &format!("{LINK}2"))
    ));
    let head = f.commit("add alpha");
    f.write("configs/amd-master.yaml", &AMD.replace("[4, 16]", "[2]"));
    let m = f.generate(&base, &head).unwrap();
    let rows = m["single_node"]["1k1k"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["conc"], 2);
}

#[test]
fn usage_errors_exit_2() {
    let f = Fixture::new();
    let out = f.check(&["--head-ref", "HEAD"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let out = f.check(
        &["--base-ref", "HEAD", "--head-ref", "HEAD", "--bogus"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn resolve_conflict_keeps_main_and_appends_the_pr_entry() {
    let f = Fixture::new();
    f.git(&["checkout", "-q", "-b", "pr"]);
    f.append(&format!("\n{}", entry("alpha-fp8-mi355x-sglang", "XXX")));
    f.commit("PR entry");
    f.git(&["checkout", "-q", "main"]);
    f.append(&format!(
        "\n{}",
        entry("beta-fp4-h200-vllm", &format!("{LINK}3"))
    ));
    f.commit("main entry");
    f.git(&["checkout", "-q", "pr"]);
    let merge = test_kit::command("git")
        .args(test_kit::GIT_SETTINGS)
        .args(["merge", "-q", "main"])
        .current_dir(&f.dir)
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the changelog conflicts");
    let out = f.check(
        &["prepare-merge", "resolve-conflict", "--pr-number", "9"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let main_text = f.git(&["show", "main:perf-changelog.yaml"]);
    assert_eq!(
        f.read("perf-changelog.yaml"),
        format!(
            "{main_text}\n\n{}",
            entry("alpha-fp8-mi355x-sglang", &format!("{LINK}9"))
        )
    );
    let merged = f.commit("merge main");
    let args = [
        "--base-ref",
        "main",
        "--head-ref",
        &merged,
        "--strict",
        "--pr-number",
        "9",
    ];
    let out = f.check(&args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A repository where `pr` appends an entry (with `pr_link`) and `main`
/// appends another after `pr` branched; `pr` is checked out.
fn stale_pr(pr_link: &str) -> Fixture {
    let f = Fixture::new();
    f.git(&["checkout", "-q", "-b", "pr"]);
    f.append(&format!("\n{}", entry("alpha-fp8-mi355x-sglang", pr_link)));
    f.commit("PR entry");
    f.git(&["checkout", "-q", "main"]);
    f.append(&format!(
        "\n{}",
        entry("beta-fp4-h200-vllm", &format!("{LINK}3"))
    ));
    f.commit("main entry");
    f.git(&["checkout", "-q", "pr"]);
    f
}

/// `git args` that may fail (a conflict), with the test identity.
fn git_may_fail(f: &Fixture, args: &[&str]) -> Output {
    test_kit::command("git")
        .args(test_kit::GIT_SETTINGS)
        .args(args)
        .current_dir(&f.dir)
        .env("GIT_EDITOR", "true")
        .output()
        .unwrap()
}

#[test]
fn resolve_conflict_during_a_rebase_takes_the_pr_entry_from_theirs() {
    let f = stale_pr("XXX");
    let rebase = git_may_fail(&f, &["rebase", "main"]);
    assert!(!rebase.status.success(), "the changelog conflicts");
    let out = f.check(
        &["prepare-merge", "resolve-conflict", "--pr-number", "9"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "Prepared perf-changelog.yaml for PR #9\nNext, `git add` it and `git rebase --continue`."
    );
    let main_text = f.git(&["show", "main:perf-changelog.yaml"]);
    assert_eq!(
        f.read("perf-changelog.yaml"),
        format!(
            "{main_text}\n\n{}",
            entry("alpha-fp8-mi355x-sglang", &format!("{LINK}9"))
        )
    );
    f.git(&["add", "perf-changelog.yaml"]);
    let cont = git_may_fail(&f, &["rebase", "--continue"]);
    assert!(cont.status.success(), "{}", stderr(&cont));
    let head = f.git(&["rev-parse", "HEAD"]);
    let args = [
        "--base-ref",
        "main",
        "--head-ref",
        &head,
        "--strict",
        "--pr-number",
        "9",
    ];
    let out = f.check(&args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn catch_up_before_the_pr_exists_keeps_the_placeholder_for_later() {
    let f = stale_pr("XXX");
    let out = f.check(&["prepare-merge", "catch-up", "--base-ref", "main"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let so = stdout(&out);
    assert!(so.starts_with("Prepared perf-changelog.yaml\n"), "{so}");
    assert!(
        so.contains("`check-changelog prepare-merge canonicalize --base-ref <base> --pr-number N`"),
        "{so}"
    );
    let main_text = f.git(&["show", "main:perf-changelog.yaml"]);
    assert_eq!(
        f.read("perf-changelog.yaml"),
        format!("{main_text}\n\n{}", entry("alpha-fp8-mi355x-sglang", "XXX"))
    );
    let head = f.commit("catch up with main");
    // The gate accepts the placeholder on the PR once it has a number ...
    let out = f.check(
        &[
            "--base-ref",
            "main",
            "--head-ref",
            &head,
            "--strict",
            "--pr-number",
            "31",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // ... and canonicalize fills in the link.
    let out = f.check(
        &[
            "prepare-merge",
            "canonicalize",
            "--base-ref",
            "main",
            "--pr-number",
            "31",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        f.read("perf-changelog.yaml")
            .ends_with(&format!("  pr-link: {LINK}31\n"))
    );
}

#[test]
fn a_dry_run_on_an_uncommitted_changelog_edit_says_commit_first() {
    let f = Fixture::new();
    f.append(&format!("\n{}", entry("alpha-fp8-mi355x-sglang", "XXX")));
    let out = f.check(&["dry-run", "--base-ref", "main"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(
            "perf-changelog.yaml has uncommitted changes and the dry run reads the commit HEAD: \
             commit first"
        ),
        "{err}"
    );
    assert!(!err.contains("No additions found"), "{err}");
    f.commit("entry");
    let out = f.check(&["dry-run", "--base-ref", "main~1"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains(": 2 legs,"), "{}", stdout(&out));
}

#[test]
fn errors_name_check_changelog() {
    let f = Fixture::new();
    // No conflict to resolve: an index stage that cannot be read is "could
    // not do the job" (exit 2, #27 item 1), with the one prefix (#26 item 8).
    let out = f.check(&["prepare-merge", "resolve-conflict"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("check-changelog: error: prepare-merge: could not read stage 1"),
        "{err}"
    );
    assert!(err.contains("`git merge`"), "{err}");
    // A rejected diff: nothing appended.
    let out = f.check(&["--base-ref", "main", "--head-ref", "main"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with("check-changelog: error: No additions found in the changelog file.\n(the matrix generation, as `generate-matrix changelog`, rejected the diff)"),
        "{err}"
    );
}

/// Issue #38 item 3: every rejection names `perf-changelog.yaml:<line>`
/// (the file's line, as the annotation), its cause, and for a config key a
/// "did you mean"; a key typo names the key; an unknown ref says so.
mod messages {
    use super::*;

    fn rejected(f: &Fixture, base: &str) -> String {
        let out = f.check(&["--base-ref", base, "--head-ref", "HEAD"], &[]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        stderr(&out)
    }

    #[test]
    fn a_bad_config_key_names_its_line_and_the_closest_key() {
        let f = Fixture::new();
        let base = f.git(&["rev-parse", "HEAD"]);
        // Lines 1-5 hold the first entry, 6 is blank, the key is on 8.
        f.append(&format!(
            "\n{}",
            entry("alpha-fp8-mi355x-sglan", &format!("{LINK}2"))
        ));
        f.commit("typo");
        let err = rejected(&f, &base);
        assert_eq!(
            err.lines().next().unwrap(),
            "check-changelog: error: perf-changelog.yaml:8: Config key 'alpha-fp8-mi355x-sglan' \
             not found in master configs. Did you mean 'alpha-fp8-mi355x-sglang'?"
        );
        // The corpus' recorded wording is still there.
        assert!(err.contains("rejected the diff"), "{err}");
    }

    #[test]
    fn a_field_typo_names_the_field_not_the_validator() {
        let f = Fixture::new();
        let base = f.git(&["rev-parse", "HEAD"]);
        f.append(&format!(
            "\n- config-keys:\n    - alpha-fp8-mi355x-sglang\n  descripton:\n    - x\n  pr-link: {LINK}2\n"
        ));
        f.commit("field typo");
        let err = rejected(&f, &base);
        assert_eq!(
            err.lines().next().unwrap(),
            "check-changelog: error: perf-changelog.yaml:9: changelog entry 1 (added): \
             'descripton' is not a changelog field; did you mean 'description'?"
        );
        assert!(!err.contains("[type="), "{err}");
    }

    #[test]
    fn wrong_indentation_names_the_files_line() {
        let f = Fixture::new();
        let base = f.git(&["rev-parse", "HEAD"]);
        // The fourth added line (file line 9) is indented one space.
        f.append(&format!(
            "\n- config-keys:\n  - alpha-fp8-mi355x-sglang\n description:\n    - x\n  pr-link: {LINK}2\n"
        ));
        f.commit("indent");
        let err = rejected(&f, &base);
        let first = err.lines().next().unwrap();
        assert!(
            first.starts_with(
                "check-changelog: error: perf-changelog.yaml:9: the changelog additions are not \
                 valid YAML: "
            ),
            "{err}"
        );
        assert!(first.contains("check the indentation"), "{err}");
        assert!(!first.contains("line 4"), "{err}");
    }

    #[test]
    fn an_unknown_ref_says_so_plainly() {
        let f = Fixture::new();
        let out = f.check(&["--base-ref", "no-such-ref", "--head-ref", "HEAD"], &[]);
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        assert!(
            err.starts_with(
                "check-changelog: error: unknown git revision 'no-such-ref' (--base-ref): the \
                 checkout does not contain it; fetch it first"
            ),
            "{err}"
        );
        assert!(!err.contains("rejected the diff"), "{err}");
    }
}

/// Issue #38 item 4: a runner label `configs/runners.yaml` lacks is named:
/// a warning from the gate (the reference accepts it), an error under
/// `--strict` and in the dry run, which would otherwise plan legs on it.
mod unknown_runner_label {
    use super::*;

    fn fixture() -> (Fixture, String) {
        let f = Fixture::new();
        let base = f.git(&["rev-parse", "HEAD"]);
        f.write(
            "configs/nvidia-master.yaml",
            &NVIDIA.replace("runner: h200", "runner: h2000"),
        );
        f.append(&format!(
            "\n{}",
            entry("beta-fp4-h200-vllm", &format!("{LINK}2"))
        ));
        f.commit("runner typo");
        (f, base)
    }

    const MESSAGE: &str = "configs/nvidia-master.yaml:1: config 'beta-fp4-h200-vllm': field \
        'runner': 'h2000' is not a label in configs/runners.yaml (did you mean 'h200'?): its 1 \
        leg would wait for a runner that never comes; add the label to configs/runners.yaml or \
        fix the runner";

    #[test]
    fn the_gate_warns_and_accepts() {
        let (f, base) = fixture();
        let out = f.check(&["--base-ref", &base, "--head-ref", "HEAD"], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!("warning: check-changelog: {MESSAGE}\n")
        );
        let out = f.check(
            &["--base-ref", &base, "--head-ref", "HEAD"],
            &[("GITHUB_ACTIONS", "true")],
        );
        assert!(
            stdout(&out).starts_with("::warning file=configs/nvidia-master.yaml,line=1::"),
            "{}",
            stdout(&out)
        );
    }

    #[test]
    fn strict_refuses() {
        let (f, base) = fixture();
        let out = f.check(
            &[
                "--base-ref",
                &base,
                "--head-ref",
                "HEAD",
                "--strict",
                "--pr-number",
                "2",
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).starts_with(&format!("check-changelog: error: {MESSAGE}\n")),
            "{}",
            stderr(&out)
        );
    }

    #[test]
    fn the_dry_run_refuses_to_plan_it() {
        let (f, base) = fixture();
        let out = f.check(&["dry-run", "--base-ref", &base], &[]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert_eq!(stderr(&out), format!("check-changelog: error: {MESSAGE}\n"));
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    }
}
