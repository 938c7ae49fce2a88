//! CLI tests of `generate-matrix` on small configs written by the tests:
//! error reports (file, config key, field path, line), exit codes, row
//! order and the main flags.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Output;

use serde_json::{Value, json};

const RUNNERS: &str = "labels:\n  h200:\n    - h200-cw_00\n    - h200-nb_01\n  cluster:h200-cw:\n    - h200-cw_00\nhardware:\n  cluster:h200-cw:\n    available-cpu-dram-mib: 1_998_848\n    gpus-per-node: 8\n";

/// One single-node entry; `{SS}` is replaced by the search-space item.
const SN: &str = "tiny-fp8:\n  image: img:v1\n  model: org/Tiny\n  model-prefix: tiny\n  precision: fp8\n  framework: sglang\n  runner: h200\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - {SS}\n";

struct Case {
    dir: test_kit::TempDir,
}

impl Case {
    fn new(master: &str) -> Self {
        let dir = test_kit::temp_dir();
        std::fs::write(dir.path().join("master.yaml"), master).unwrap();
        std::fs::write(dir.path().join("runners.yaml"), RUNNERS).unwrap();
        Case { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = test_kit::command(env!("CARGO_BIN_EXE_generate-matrix"));
        cmd.args(args.iter().map(|a| {
            a.replace("{master}", self.path("master.yaml").to_str().unwrap())
                .replace("{runners}", self.path("runners.yaml").to_str().unwrap())
        }));
        cmd.current_dir(self.dir.path());
        cmd.output().unwrap()
    }

    fn full_sweep(&self, extra: &[&str]) -> Output {
        let mut args = vec![
            "full-sweep",
            "--config-files",
            "{master}",
            "--runner-config",
            "{runners}",
        ];
        args.extend_from_slice(extra);
        self.run(&args)
    }
}

fn sn(search_space: &str) -> String {
    SN.replace("{SS}", search_space)
}

/// Asserts a validation failure: exit 1, empty stdout, and stderr naming
/// the file, the config key, the field path and the line.
fn assert_config_error(case: &Case, out: &Output, key: &str, path: &str, line: usize, cause: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "stdout must be empty on failure");
    let file = case.path("master.yaml");
    let loc = format!("{}:{line}:", file.display());
    assert!(stderr.contains(&loc), "missing {loc} in: {stderr}");
    assert!(stderr.contains(&format!("config '{key}'")), "{stderr}");
    assert!(stderr.contains(&format!("field '{path}'")), "{stderr}");
    assert!(
        stderr.contains(cause),
        "missing cause {cause:?} in: {stderr}"
    );
}

fn stdout_json(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn error_unknown_field() {
    let c = Case::new(&sn("{ tp: 8, tp-size: 8, conc-start: 4, conc-end: 64 }"));
    let out = c.full_sweep(&[]);
    assert_config_error(
        &c,
        &out,
        "tiny-fp8",
        "scenarios.fixed-seq-len.0.search-space.0.tp-size",
        14,
        "extra field 'tp-size'",
    );
}

#[test]
fn error_wrong_type() {
    let c = Case::new(&sn("{ tp: \"8\", conc-start: 4, conc-end: 64 }"));
    let out = c.full_sweep(&[]);
    assert_config_error(
        &c,
        &out,
        "tiny-fp8",
        "scenarios.fixed-seq-len.0.search-space.0.tp",
        14,
        "must be an integer",
    );
}

#[test]
fn error_missing_required_field() {
    let c = Case::new(
        &sn("{ tp: 8, conc-start: 4, conc-end: 64 }").replace("  model-prefix: tiny\n", ""),
    );
    let out = c.full_sweep(&[]);
    assert_config_error(
        &c,
        &out,
        "tiny-fp8",
        "model-prefix",
        1,
        "'model-prefix' is required",
    );
}

#[test]
fn error_conc_list_and_range() {
    let c = Case::new(&sn(
        "{ tp: 8, conc-start: 4, conc-end: 64, conc-list: [1, 2] }",
    ));
    let out = c.full_sweep(&[]);
    assert_config_error(
        &c,
        &out,
        "tiny-fp8",
        "scenarios.fixed-seq-len.0.search-space.0",
        14,
        "conc-list",
    );
}

#[test]
fn error_conc_start_above_end_in_block_style() {
    let ss = "tp: 8\n        conc-start: 128\n        conc-end: 64";
    let c = Case::new(&sn(ss));
    let out = c.full_sweep(&[]);
    assert_config_error(
        &c,
        &out,
        "tiny-fp8",
        "scenarios.fixed-seq-len.0.search-space.0.conc-start",
        15,
        "'conc-start' (128) must be <= 'conc-end' (64)",
    );
}

#[test]
fn error_dcp_not_divisor() {
    let c = Case::new(&sn("{ tp: 8, dcp-size: 3, conc-start: 4, conc-end: 64 }"));
    let out = c.full_sweep(&[]);
    assert_config_error(
        &c,
        &out,
        "tiny-fp8",
        "scenarios.fixed-seq-len.0.search-space.0.dcp-size",
        14,
        "divisible by 'dcp-size'",
    );
}

#[test]
fn error_bad_spec_decoding() {
    let c = Case::new(&sn(
        "{ tp: 8, spec-decoding: eagle, conc-start: 4, conc-end: 64 }",
    ));
    let out = c.full_sweep(&[]);
    assert_config_error(
        &c,
        &out,
        "tiny-fp8",
        "scenarios.fixed-seq-len.0.search-space.0.spec-decoding",
        14,
        "'spec-decoding' must be one of",
    );
}

#[test]
fn error_invalid_yaml_names_file_and_line() {
    let c = Case::new("a:\n  b: [1, 2\nc: 3\n");
    let out = c.full_sweep(&[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&c.path("master.yaml").display().to_string()),
        "{stderr}"
    );
    assert!(stderr.contains("invalid YAML"), "{stderr}");
}

#[test]
fn error_runner_file_names_label_and_line() {
    let c = Case::new(&sn("{ tp: 8, conc-start: 4, conc-end: 64 }"));
    std::fs::write(c.path("runners.yaml"), "labels:\n  h200: []\n").unwrap();
    let out = c.full_sweep(&[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let loc = format!("{}:2:", c.path("runners.yaml").display());
    assert!(
        stderr.contains(&loc) && stderr.contains("'h200' cannot be an empty list"),
        "{stderr}"
    );
}

#[test]
fn usage_errors_exit_2_before_reading_files() {
    let c = Case::new("not: [valid");
    for (args, word) in [
        (vec!["--step-size", "1"], "step-size"),
        (vec!["--min-conc", "64", "--max-conc", "8"], "min-conc"),
        (vec!["--no-evals", "--all-evals"], "all-evals"),
        (vec!["--seq-lens", "2k2k"], "2k2k"),
    ] {
        let out = c.full_sweep(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(word), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
    let out = c.run(&[
        "test-config",
        "--config-files",
        "{master}",
        "--max-tp",
        "4",
        "--config-keys",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn full_sweep_rows_in_order_with_defaults() {
    let c = Case::new(&sn("{ tp: 8, conc-start: 4, conc-end: 20 }"));
    let rows = stdout_json(&c.full_sweep(&["--no-evals"]));
    let concs: Vec<i64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["conc"].as_i64().unwrap())
        .collect();
    assert_eq!(concs, vec![4, 8, 16, 20]);
    assert_eq!(
        rows[0],
        json!({"image":"img:v1","model":"org/Tiny","model-prefix":"tiny","precision":"fp8","framework":"sglang",
            "runner":"h200","isl":1024,"osl":1024,"tp":8,"pp":1,"dcp-size":1,"pcp-size":1,"conc":4,
            "max-model-len":2304,"ep":1,"dp-attn":false,"spec-decoding":"none","exp-name":"tiny_1k1k",
            "disagg":false,"run-eval":false})
    );
    // Node filter: one row per matching node, conc outer, node inner.
    let rows = stdout_json(&c.full_sweep(&[
        "--no-evals",
        "--runner-node-filter",
        "h200",
        "--max-conc",
        "8",
    ]));
    let pairs: Vec<(i64, String)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["conc"].as_i64().unwrap(),
                r["runner"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        vec![
            (4, "h200-cw_00".into()),
            (4, "h200-nb_01".into()),
            (8, "h200-cw_00".into()),
            (8, "h200-nb_01".into())
        ]
    );
}

#[test]
fn repeated_list_option_keeps_last_occurrence() {
    let c = Case::new(&sn("{ tp: 8, conc-list: [4, 8, 16] }"));
    let out = c.run(&[
        "test-config",
        "--config-files",
        "{master}",
        "--runner-config",
        "{runners}",
        "--config-keys",
        "tiny-fp8",
        "--conc",
        "4",
        "--conc",
        "8",
        "-4",
        "--no-evals",
    ]);
    let rows = stdout_json(&out);
    let concs: Vec<i64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["conc"].as_i64().unwrap())
        .collect();
    assert_eq!(concs, vec![8]);
}

#[test]
fn eval_marking_on_8k1k() {
    let c = Case::new(
        &sn("{ tp: 8, conc-list: [4, 16, 32, 64, 128] }").replace("isl: 1024", "isl: 8192"),
    );
    let rows = stdout_json(&c.full_sweep(&["--evals-only"]));
    let concs: Vec<i64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["conc"].as_i64().unwrap())
        .collect();
    // distinct eligible {16, 32, 64, 128}: upper median 64 and max 128.
    assert_eq!(concs, vec![64, 128]);
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .all(|r| r["eval-only"] == json!(true))
    );
}

#[test]
fn test_config_globs_and_conc() {
    let two = format!(
        "{}{}",
        sn("{ tp: 8, conc-start: 4, conc-end: 64 }"),
        sn("{ tp: 4, conc-list: [64, 8, 4] }").replace("tiny-fp8:", "tiny-fp4:")
    );
    let c = Case::new(&two);
    let out = c.run(&[
        "test-config",
        "--config-files",
        "{master}",
        "--runner-config",
        "{runners}",
        "--config-keys",
        "tiny-fp[48]*",
        "tiny-fp8",
        "--conc",
        "64",
        "4",
        "--no-evals",
    ]);
    let rows = stdout_json(&out);
    let got: Vec<(i64, i64)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["tp"].as_i64().unwrap(), r["conc"].as_i64().unwrap()))
        .collect();
    assert_eq!(got, vec![(8, 4), (8, 64), (4, 64), (4, 4)]);
    let out = c.run(&[
        "test-config",
        "--config-files",
        "{master}",
        "--runner-config",
        "{runners}",
        "--config-keys",
        "nope-*",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope-*"));
}

#[test]
fn priority_annotates_jobs() {
    let c = Case::new("");
    std::fs::write(
        c.path("policy.yaml"),
        "version: 1\nbase-score: 1\nadjustments:\n  multi-node: 0.5\nlabels:\n  patchwork: {names: [pw], score: 0}\n",
    )
    .unwrap();
    std::fs::write(
        c.path("in.json"),
        // An object that is not a row is refused since #34 (see
        // priority_refuses_a_list_object_that_is_not_a_matrix_row); a
        // scalar passes unchanged.
        r#"[{"runner":"a","framework":"f","prefill":{}}, "x"]"#,
    )
    .unwrap();
    let p = c.path("policy.yaml");
    let i = c.path("in.json");
    let out = c.run(&[
        "priority",
        "--policy",
        p.to_str().unwrap(),
        "--input",
        i.to_str().unwrap(),
    ]);
    let v = stdout_json(&out);
    assert_eq!(v[0]["priority"], json!("1.500"));
    assert_eq!(v[0]["queue-token"].as_str().unwrap().len(), 32);
    assert_eq!(v[1], json!("x"));
}

#[test]
fn help_documents_subcommands() {
    let out = test_kit::command(env!("CARGO_BIN_EXE_generate-matrix"))
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8_lossy(&out.stdout);
    for w in ["full-sweep", "test-config", "priority"] {
        assert!(s.contains(w), "{s}");
    }
}

/// A "billion laughs" config (nested aliases that would copy 10^9 nodes;
/// it once took more than 4 GiB) is refused at the alias that crosses the
/// limit, naming the file, line and limit.
#[test]
fn error_alias_expansion_names_file_line_and_limit() {
    let mut master = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let p = i - 1;
        let items = vec![format!("*a{p}"); 10].join(", ");
        master.push_str(&format!("a{i}: &a{i} [{items}]\n"));
    }
    let case = Case::new(&master);
    let out = case.full_sweep(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("master.yaml:"), "{err}");
    assert!(err.contains("MAX_ALIAS_NODES"), "{err}");
}

/// Runs `generate-matrix full-sweep` on `config` and `runners`, failing the
/// test instead of hanging when it has not exited within `BOUND` (a read
/// of a FIFO never returns). A bound on a hang, not a timing assertion.
fn full_sweep_bounded(case: &Case, config: &str, runners: &str) -> Output {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    const BOUND: Duration = Duration::from_secs(30);
    let mut child = test_kit::command(env!("CARGO_BIN_EXE_generate-matrix"))
        .args(["full-sweep", "--config-files"])
        .arg(case.path(config))
        .arg("--runner-config")
        .arg(case.path(runners))
        .current_dir(case.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + BOUND;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("generate-matrix full-sweep still running after {BOUND:?}: it blocked");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_fifo_config_or_runner_file_is_refused_at_once_naming_it() {
    let case = Case::new(&sn("{ tp: 8, conc-list: [4] }"));
    let st = std::process::Command::new("mkfifo")
        .arg(case.path("fifo.yaml"))
        .status()
        .unwrap();
    assert!(st.success(), "mkfifo failed");
    for (config, runners) in [("fifo.yaml", "runners.yaml"), ("master.yaml", "fifo.yaml")] {
        let out = full_sweep_bounded(&case, config, runners);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // An unreadable file, as a missing one: exit 2, no rows.
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let fifo = case.path("fifo.yaml");
        assert!(stderr.contains(&fifo.display().to_string()), "{stderr}");
        assert!(stderr.contains("FIFO"), "{stderr}");
    }
    // The same files as regular files work.
    let out = full_sweep_bounded(&case, "master.yaml", "runners.yaml");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const PRIORITY_POLICY: &str = "version: 1\nbase-score: 1\nadjustments:\n  multi-node: 0.5\nlabels:\n  patchwork: {names: [pw], score: 0}\n";

/// `priority --input in.json` on `input`, with a small policy.
fn priority_on(c: &Case, input: &str) -> Output {
    std::fs::write(c.path("policy.yaml"), PRIORITY_POLICY).unwrap();
    std::fs::write(c.path("in.json"), input).unwrap();
    let p = c.path("policy.yaml");
    let i = c.path("in.json");
    c.run(&[
        "priority",
        "--policy",
        p.to_str().unwrap(),
        "--input",
        i.to_str().unwrap(),
    ])
}

#[test]
fn priority_refuses_input_that_is_not_a_matrix() {
    let c = Case::new("");
    for (input, got) in [
        (r#"{"foo":1}"#, "an object with no job"),
        (r#""a string""#, "got a string"),
        ("42", "got a number"),
        ("null", "got null"),
        ("{}", "got an empty object"),
    ] {
        let out = priority_on(&c, input);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{input}: {stderr}");
        assert!(out.stdout.is_empty(), "{input}: nothing on stdout");
        assert!(
            stderr.contains("in.json"),
            "{input}: names the file: {stderr}"
        );
        assert!(
            stderr.contains("expected a matrix list (a JSON array), a search-space config"),
            "{input}: names the shape: {stderr}"
        );
        assert!(stderr.contains(got), "{input}: {got}: {stderr}");
    }
}

/// Issue #34 item 3d: a list of objects that are not matrix rows passed
/// unchanged (exit 0, nothing scored); now the first such object is
/// refused (exit 1) naming its index and the keys it lacks, and nothing
/// is printed.
#[test]
fn priority_refuses_a_list_object_that_is_not_a_matrix_row() {
    let c = Case::new("");
    let job = json!({"runner": "a", "framework": "f"});
    for (input, needle) in [
        (
            json!([{"foo": 1}, {"bar": 2}]),
            "in.json[0]: not a matrix row: missing 'runner' and 'framework'",
        ),
        (
            json!([job, {"runner": "b"}]),
            "in.json[1]: not a matrix row: missing 'framework'",
        ),
        (
            json!([job, "x", {"framework": "f", "tp": 8}]),
            "in.json[2]: not a matrix row: missing 'runner'",
        ),
        (
            json!([{}]),
            "in.json[0]: not a matrix row: missing 'runner' and 'framework'",
        ),
    ] {
        let out = priority_on(&c, &input.to_string());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{input}: {stderr}");
        assert!(out.stdout.is_empty(), "{input}: nothing on stdout");
        assert!(stderr.contains(needle), "{input}: {needle}: {stderr}");
    }
    // Rows, scalars and an empty list still pass.
    let v = stdout_json(&priority_on(&c, &json!([job, 17, "x"]).to_string()));
    assert_eq!(v[0]["priority"], json!("1.000"));
    assert_eq!(v[1], json!(17));
    assert_eq!(stdout_json(&priority_on(&c, "[]")), json!([]));
}

#[test]
fn priority_still_takes_a_list_a_config_and_a_bare_job() {
    let c = Case::new("");
    let job = json!({"runner": "a", "framework": "f", "prefill": {}});
    let v = stdout_json(&priority_on(&c, &json!([job, "x"]).to_string()));
    assert_eq!(v[0]["priority"], json!("1.500"));
    assert_eq!(v[1], json!("x"));
    let v = stdout_json(&priority_on(&c, &job.to_string()));
    assert_eq!(v["priority"], json!("1.500"));
    let empty = json!({"single_node": {}, "multi_node": {}, "evals": [], "changelog_metadata": {}});
    assert_eq!(stdout_json(&priority_on(&c, &empty.to_string())), empty);
    let v = stdout_json(&priority_on(&c, &json!({"wrapped": [job]}).to_string()));
    assert_eq!(v["wrapped"][0]["priority"], json!("1.500"));
}

/// `changelog-metadata --input config.json --output meta.json`.
fn metadata_of(c: &Case, config: &str) -> Output {
    std::fs::write(c.path("config.json"), config).unwrap();
    let _ = std::fs::remove_file(c.path("meta.json"));
    let i = c.path("config.json");
    let o = c.path("meta.json");
    c.run(&[
        "changelog-metadata",
        "--input",
        i.to_str().unwrap(),
        "--output",
        o.to_str().unwrap(),
    ])
}

#[test]
fn changelog_metadata_refuses_input_that_is_not_a_search_space_config() {
    let c = Case::new("");
    for (input, got) in [
        ("null", "got null"),
        ("42", "got a number"),
        ("[1,2]", "item [0] is not a job object"),
        (
            r#"{"changelog_metadata": [1]}"#,
            "'changelog_metadata' is an array",
        ),
    ] {
        let out = metadata_of(&c, input);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{input}: {stderr}");
        assert!(
            stderr.contains("config.json"),
            "{input}: names the file: {stderr}"
        );
        assert!(
            stderr.contains("expected a search-space config (a JSON object)"),
            "{input}: names the shape: {stderr}"
        );
        assert!(stderr.contains(got), "{input}: {got}: {stderr}");
        assert!(!c.path("meta.json").exists(), "{input}: nothing written");
    }
}

#[test]
fn changelog_metadata_of_a_config_or_a_matrix_list() {
    let c = Case::new("");
    let meta = json!({"base_ref": "a", "head_ref": "b", "entries": []});
    let read = |c: &Case| -> Value {
        serde_json::from_slice(&std::fs::read(c.path("meta.json")).unwrap()).unwrap()
    };
    for (input, want) in [
        (
            json!({"single_node": {}, "changelog_metadata": meta}),
            meta.clone(),
        ),
        (json!({"single_node": {}}), json!({})),
        (json!([]), json!({})),
        (json!([{"runner": "a", "framework": "f"}]), json!({})),
    ] {
        let out = metadata_of(&c, &input.to_string());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{input}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(read(&c), want, "{input}");
    }
}

#[test]
fn sweep_policy_refuses_an_event_payload_that_is_not_an_object() {
    let c = Case::new("");
    for (payload, got) in [("[]", "an array"), ("null", "null"), ("42", "a number")] {
        std::fs::write(c.path("event.json"), payload).unwrap();
        let e = c.path("event.json");
        let out = c.run(&[
            "sweep-policy",
            "--event-name",
            "pull_request",
            "--event-path",
            e.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{payload}: {stderr}");
        assert!(out.stdout.is_empty(), "{payload}: no decisions printed");
        assert!(
            stderr.contains("event.json"),
            "{payload}: names the file: {stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "the event payload is {got}; expected a JSON object"
            )),
            "{payload}: {stderr}"
        );
    }
    std::fs::write(
        c.path("event.json"),
        r#"{"action": "synchronize", "pull_request": {"labels": []}}"#,
    )
    .unwrap();
    let e = c.path("event.json");
    let out = c.run(&[
        "sweep-policy",
        "--event-name",
        "pull_request",
        "--event-path",
        e.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn worker_settings_refuse_a_variable_the_leg_sets_naming_row_and_key() {
    let c = Case::new("{}\n");
    let out = c.run(&[
        "worker-settings",
        "--config",
        "dsr1_1k1k",
        "--settings-json",
        r#"["CONFIG_FILE=a.yaml"]"#,
        "--settings-json",
        r#"["HF_TOKEN=stolen"]"#,
        "--output",
        "settings.env",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("dsr1_1k1k: additional-settings #2: HF_TOKEN is set by the leg itself"),
        "{err}"
    );
    assert!(!c.path("settings.env").exists());
    let ok = c.run(&[
        "worker-settings",
        "--settings-json",
        r#"["CONFIG_FILE=a.yaml"]"#,
        "--output",
        "settings.env",
    ]);
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(c.path("settings.env")).unwrap(),
        "CONFIG_FILE=a.yaml\n"
    );
}
