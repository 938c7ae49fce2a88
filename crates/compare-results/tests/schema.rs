//! `docs/compare.schema.json` against the type and the tool (issue #36
//! item 2): the checked-in schema names exactly the fields of
//! `sweep_model::compare_summary::CompareSummary` (every one required, no
//! other allowed), and real `compare.json` files written by the binary
//! validate against it. The validator below knows the keywords the schema
//! uses (`type`, `enum`, `const`, `required`, `properties`,
//! `additionalProperties: false`, `items`, `minimum`, `$ref` into `$defs`)
//! and fails on any other, so the schema cannot grow past what is checked.

use std::path::Path;

use serde_json::{Map, Value, json};
use sweep_model::compare_summary::{
    BaselineRef, CompareSummary, Counts, Eval, Impact, Regression, TopRegression, Verdict,
};

/// This checkout's root (from this crate, not test-kit: one shared target
/// directory may hold a test-kit built in another checkout).
fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schema() -> Value {
    let path = root().join("docs/compare.schema.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("docs/compare.schema.json"))
        .expect("the schema is JSON")
}

fn resolve<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
    match s.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.strip_prefix("#/$defs/").expect("a $ref into $defs");
            &root["$defs"][name]
        }
        None => s,
    }
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "integer" => v.is_u64() || v.is_i64(),
        "null" => v.is_null(),
        other => panic!("type {other} is not known to this validator"),
    }
}

/// The errors of `v` against `s`, each with its JSON path.
fn validate(root: &Value, s: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    let s = resolve(root, s);
    let known = [
        "type",
        "enum",
        "const",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "minimum",
        "description",
        "$schema",
        "$id",
        "title",
        "$defs",
    ];
    for k in s.as_object().expect("a schema object").keys() {
        assert!(
            known.contains(&k.as_str()),
            "keyword {k} at {at}: not checked"
        );
    }
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::String(t) => type_ok(t, v),
            Value::Array(ts) => ts.iter().any(|t| type_ok(t.as_str().unwrap_or(""), v)),
            _ => false,
        };
        if !ok {
            errors.push(format!("{at}: {v} is not {t}"));
            return;
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        errors.push(format!("{at}: {v} is not one of {e:?}"));
    }
    if let Some(c) = s.get("const")
        && c != v
    {
        errors.push(format!("{at}: {v} is not {c}"));
    }
    if let (Some(m), Some(n)) = (s.get("minimum").and_then(Value::as_f64), v.as_f64())
        && n < m
    {
        errors.push(format!("{at}: {n} < {m}"));
    }
    if let Some(o) = v.as_object() {
        let props = s.get("properties").and_then(Value::as_object);
        for r in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let r = r.as_str().unwrap_or_default();
            if !o.contains_key(r) {
                errors.push(format!("{at}: no `{r}`"));
            }
        }
        for (k, child) in o {
            match props.and_then(|p| p.get(k)) {
                Some(ps) => validate(root, ps, child, &format!("{at}.{k}"), errors),
                None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errors.push(format!("{at}: `{k}` is not in the schema"))
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(a)) = (s.get("items"), v.as_array()) {
        for (i, x) in a.iter().enumerate() {
            validate(root, items, x, &format!("{at}[{i}]"), errors);
        }
    }
}

fn errors_of(v: &Value) -> Vec<String> {
    let root = schema();
    let mut errors = Vec::new();
    validate(&root, &root, v, "$", &mut errors);
    errors
}

/// A summary with every option set and every list non-empty, so each
/// field appears when serialised.
fn full_summary() -> CompareSummary {
    CompareSummary {
        verdict: Verdict::Regressions,
        baseline: BaselineRef {
            label: "main @ 1a2b3c4 (run 1, 2026-12-01)".into(),
            source: "last-main-run".into(),
            sha: Some("1a2b3c4".into()),
            run_url: Some("https://github.com/o/r/actions/runs/1".into()),
            date: Some("2026-12-01".into()),
            file: Some("agg_bmk.json".into()),
        },
        line: "l".into(),
        counts: Counts {
            new_rows: 1,
            ..Counts::default()
        },
        regressions: vec![Regression {
            group: "g".into(),
            point: "p".into(),
            metric: "m".into(),
            change: "c".into(),
            tolerance: "t".into(),
        }],
        top_regressions: vec![TopRegression {
            group: "g".into(),
            point: "p".into(),
            metric: "m".into(),
            change: "c".into(),
            also: vec!["a".into()],
            other_hardware: true,
        }],
        impacts: vec![Impact {
            group: "g".into(),
            metric: "m".into(),
            median_change: "c".into(),
            better: Some(false),
        }],
        evals: vec![Eval {
            configuration: "c".into(),
            point: "p".into(),
            task: "t".into(),
            score: "s".into(),
            threshold: Some("t".into()),
            pass: Some(false),
        }],
    }
}

/// Each object of `v` has exactly the properties its schema names, all of
/// them required: the schema and the type name the same fields.
fn same_fields(root: &Value, s: &Value, v: &Value, at: &str) {
    let s = resolve(root, s);
    if let Some(o) = v.as_object() {
        let props: &Map<String, Value> = s["properties"].as_object().expect(at);
        let mut have: Vec<&String> = o.keys().collect();
        let mut want: Vec<&String> = props.keys().collect();
        have.sort();
        want.sort();
        assert_eq!(have, want, "{at}: the type's fields vs the schema's");
        let mut required: Vec<&str> = s["required"]
            .as_array()
            .expect(at)
            .iter()
            .filter_map(Value::as_str)
            .collect();
        required.sort();
        assert_eq!(
            required,
            want.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
            "{at}: every field is required"
        );
        assert_eq!(s["additionalProperties"], json!(false), "{at}");
        for (k, child) in o {
            same_fields(root, &props[k], child, &format!("{at}.{k}"));
        }
    }
    if let (Some(items), Some(a)) = (s.get("items"), v.as_array()) {
        for x in a {
            same_fields(root, items, x, &format!("{at}[]"));
        }
    }
}

#[test]
fn the_checked_in_schema_names_exactly_the_types_fields() {
    let root = schema();
    let v = serde_json::to_value(full_summary()).expect("serialise");
    same_fields(&root, &root["$defs"]["summary"], &v, "summary");
    let verdicts: Vec<Value> = [
        Verdict::Regressions,
        Verdict::EvalsFailed,
        Verdict::NoResults,
        Verdict::NoRegressions,
    ]
    .iter()
    .map(|v| json!(v))
    .collect();
    assert_eq!(
        root["$defs"]["verdict"]["enum"],
        json!(verdicts),
        "every verdict"
    );
    let doc = json!({"schema_version": 1, "verdict": "regressions", "summary": v});
    assert_eq!(errors_of(&doc), Vec::<String>::new());
}

#[test]
fn a_summary_of_another_layout_does_not_validate() {
    let mut doc = json!({"schema_version": 1, "verdict": "regressions",
        "summary": serde_json::to_value(full_summary()).expect("serialise")});
    doc["summary"]["verdict"] = json!("all_good");
    doc["summary"]["counts"]["matched_points"] = json!(3);
    let errors = errors_of(&doc);
    assert_eq!(errors.len(), 2, "{errors:?}");
}

fn compare_json(dir: &Path, args: &[&std::ffi::OsStr]) -> Value {
    let out = dir.join("compare.json");
    let o = test_kit::command(env!("CARGO_BIN_EXE_compare-results"))
        .args(args)
        .arg("--json")
        .arg(&out)
        .output()
        .expect("run compare-results");
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        test_kit::stderr(&o)
    );
    serde_json::from_str(&std::fs::read_to_string(&out).expect("compare.json")).expect("JSON")
}

/// compare.json as the binary writes it: the seed with its evals judged by
/// the corpus's thresholds, the seed run backwards (every point regressed),
/// and no new rows at all.
#[test]
fn real_reports_validate_against_the_schema() {
    let root = root();
    let seed = root.join("tests/conformance/fixtures/seed-compare");
    let thresholds = root.join("tests/conformance/fixtures/validate-scores/thresholds.yaml");
    let (base, new) = (
        seed.join("baseline/agg_bmk.json"),
        seed.join("new/agg_bmk.json"),
    );
    let evals = seed.join("new/agg_eval_all.json");
    let dir = test_kit::temp_dir();
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "[]").expect("write");
    let cases: [(&str, Vec<&std::ffi::OsStr>, &str); 3] = [
        (
            "seed",
            vec![
                "--new".as_ref(),
                new.as_os_str(),
                "--baseline".as_ref(),
                base.as_os_str(),
                "--new-evals".as_ref(),
                evals.as_os_str(),
                "--thresholds".as_ref(),
                thresholds.as_os_str(),
            ],
            "no_regressions",
        ),
        (
            "backwards",
            vec![
                "--new".as_ref(),
                base.as_os_str(),
                "--baseline".as_ref(),
                new.as_os_str(),
            ],
            "regressions",
        ),
        (
            "no results",
            vec![
                "--new".as_ref(),
                empty.as_os_str(),
                "--baseline".as_ref(),
                base.as_os_str(),
            ],
            "no_results",
        ),
    ];
    for (name, args, verdict) in cases {
        let j = compare_json(dir.path(), &args);
        assert_eq!(errors_of(&j), Vec::<String>::new(), "{name}");
        assert_eq!(j["verdict"], verdict, "{name}");
        let typed: CompareSummary =
            serde_json::from_value(j["summary"].clone()).expect("the type reads it");
        assert_eq!(typed.verdict.as_str(), verdict, "{name}");
        if name == "backwards" {
            assert!(!typed.top_regressions.is_empty() && !typed.impacts.is_empty());
        }
    }
}
