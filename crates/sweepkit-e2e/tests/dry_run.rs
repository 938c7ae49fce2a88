//! `check-changelog dry-run --json` against `generate-matrix changelog` on
//! every one-commit range of the real history that the conformance corpus
//! records (`cases/generate-matrix/changelog-hist-*` whose base is the
//! head's parent), with the case's own flags: the dry run's legs are the
//! matrix's rows, leg for leg and in order, and they are also the
//! reference's recorded rows where the case records them. On a range the
//! generator rejects, the dry run exits 1 and plans nothing.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use sweepkit_e2e::{tool, workspace_root};
use test_kit::git;

/// The families of the changelog matrix in output order; the first two
/// hold buckets.
const EVAL_FAMILIES: [&str; 4] = [
    "evals",
    "agentic_evals",
    "multinode_evals",
    "multinode_agentic_evals",
];

/// (family, row) of every row of a changelog matrix, in output order.
fn matrix_legs(m: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for side in ["single_node", "multi_node"] {
        for (bucket, rows) in m[side].as_object().unwrap() {
            for row in rows.as_array().unwrap() {
                out.push((format!("{side}.{bucket}"), row.clone()));
            }
        }
    }
    for family in EVAL_FAMILIES {
        for row in m[family].as_array().unwrap() {
            out.push((family.to_string(), row.clone()));
        }
    }
    out
}

fn run(tool_name: &str, dir: &Path, args: &[&str]) -> Output {
    test_kit::command(tool(tool_name))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// A recorded one-commit case: base, head, the generator flags after the
/// changelog file, and the recorded result.
struct Case {
    name: String,
    dir: PathBuf,
    base: String,
    head: String,
    flags: Vec<String>,
    expect: Value,
}

fn cases(corpus: &Path, repo: &Path) -> Vec<Case> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus.join("cases/generate-matrix"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("changelog-hist-"))
        })
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs {
        let args: Vec<String> =
            serde_json::from_str(&std::fs::read_to_string(dir.join("args")).unwrap()).unwrap();
        let after = |flag: &str| {
            let i = args.iter().position(|a| a == flag).unwrap();
            args[i + 1].clone()
        };
        let (base, head) = (after("--base-ref"), after("--head-ref"));
        assert_eq!(after("--changelog-file"), "perf-changelog.yaml");
        if git(repo, &["rev-parse", &format!("{head}^")]) != base {
            continue; // a longer range
        }
        let flags: Vec<String> = args
            .iter()
            .filter(|a| ["--trim-conc", "--all-evals", "--evals-only"].contains(&a.as_str()))
            .cloned()
            .collect();
        let expect: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expect.json")).unwrap())
                .unwrap();
        out.push(Case {
            name: dir.file_name().unwrap().to_string_lossy().into_owned(),
            dir: dir.clone(),
            base,
            head,
            flags,
            expect,
        });
    }
    out
}

#[test]
fn the_dry_run_schedules_exactly_the_legs_generate_matrix_emits_on_real_one_commit_ranges() {
    let corpus = workspace_root().join("tests/conformance");
    let tmp = test_kit::temp_dir();
    let repo = tmp.path().join("repo");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            &corpus.join("fixtures/history.bundle").to_string_lossy(),
            &repo.to_string_lossy(),
        ],
    );
    let cases = cases(&corpus, &repo);
    let (mut planned, mut rejected, mut against_reference) = (0, 0, 0);
    for case in &cases {
        git(
            &repo,
            &[
                "-c",
                "advice.detachedHead=false",
                "checkout",
                "-q",
                &case.head,
            ],
        );
        let flags: Vec<&str> = case.flags.iter().map(String::as_str).collect();
        let mut gm = vec![
            "changelog",
            "--base-ref",
            &case.base,
            "--head-ref",
            &case.head,
            "--changelog-file",
            "perf-changelog.yaml",
        ];
        gm.extend_from_slice(&flags);
        let matrix = run("generate-matrix", &repo, &gm);
        let mut dr = vec!["dry-run", "--json", "--base-ref", &case.base];
        dr.extend_from_slice(&flags);
        let dry = run("check-changelog", &repo, &dr);
        let name = &case.name;
        if case.expect["exit"] != 0 {
            // The recorded reference exits 1 on every refusal; the exit
            // contract splits it into 1 (rejected) and 2 (a ref or file that
            // cannot be read), and the dry run answers as the generator.
            let code = matrix.status.code();
            assert!(
                matches!(code, Some(1 | 2)),
                "{name}: generate-matrix {code:?}"
            );
            assert_eq!(dry.status.code(), code, "{name}: dry-run");
            assert!(
                dry.stdout.is_empty(),
                "{name}: a rejected range plans nothing"
            );
            rejected += 1;
            continue;
        }
        assert_eq!(matrix.status.code(), Some(0), "{name}: generate-matrix");
        assert_eq!(
            dry.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&dry.stderr)
        );
        let m: Value = serde_json::from_slice(&matrix.stdout).unwrap();
        let plan: Value = serde_json::from_slice(&dry.stdout).unwrap();
        let legs: Vec<(String, Value)> = plan["legs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["family"].as_str().unwrap().to_string(), l["row"].clone()))
            .collect();
        let expected = matrix_legs(&m);
        assert_eq!(legs.len(), expected.len(), "{name}: number of legs");
        for (i, (got, want)) in legs.iter().zip(&expected).enumerate() {
            assert_eq!(got, want, "{name}: leg {i}");
        }
        assert_eq!(plan["total"]["legs"], expected.len(), "{name}");
        let reference = match (
            case.expect.get("stdout_json"),
            case.expect["stdout_json_file"].as_str(),
        ) {
            (Some(v), _) => Some(v.clone()),
            (None, Some(file)) => Some(
                serde_json::from_str(&std::fs::read_to_string(case.dir.join(file)).unwrap())
                    .unwrap(),
            ),
            (None, None) => None,
        };
        if let Some(reference) = reference {
            assert_eq!(
                legs,
                matrix_legs(&reference),
                "{name}: the reference's rows"
            );
            against_reference += 1;
        }
        planned += 1;
    }
    // The corpus holds 28 planned and 9 rejected one-commit ranges, every
    // planned one with the reference's matrix; a corpus change that drops
    // most of them must not pass quietly.
    assert!(
        planned >= 20 && rejected >= 5,
        "{planned} planned, {rejected} rejected"
    );
    assert_eq!(
        against_reference, planned,
        "every planned case records its matrix"
    );
}
