//! The conformance corpus of `tests/conformance/` (workspace root): facts
//! recorded by running the reference (InferenceX's Python utilities), run
//! against the tools built from the current source (`sweepkit_e2e::tool_dir`).
//!
//! * `recorded_cases`: every `cases/<tool>/<case>/` — argv, optional git
//!   checkout, setup files, environment and stdin; expected exit status,
//!   stdout JSON, written JSON files and error text (layout: the folder's
//!   README).
//! * `github_scenarios`: `success-rate` and `reuse-sweep find` against the
//!   scenarios of `fixtures/github/`, served on loopback by `fake-github`,
//!   plus the routes of `sweepkit-routes/github/<tool>/<case>/` where the
//!   strict rules ask GitHub more than the reference did.
//!
//! JSON is compared by value: object key order ignored, array order kept,
//! floats equal within a relative 1e-9 (absolute 1e-12), a boolean never
//! equal to a number. Each test prints `conformance: N passed, N failed`
//! (`github-conformance: …`) and fails listing every failing case with its
//! reason.
//!
//! `SWEEPKIT_CONFORMANCE_DIR` runs another copy of the corpus (e.g. the
//! shared one it was copied from); `SWEEPKIT_CONFORMANCE_ONLY` keeps the
//! cases whose `<tool>/<case>` label starts with its value.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::BTreeMap;
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A case (or a git command setting one up) that runs longer than this has
/// hung rather than run slowly on a loaded machine (the recorded cases take
/// seconds on a debug build): it fails instead of hanging the test.
const CASE_TIMEOUT: Duration = Duration::from_secs(120);

/// How often a running case is checked for having ended.
const POLL: Duration = Duration::from_millis(10);

/// Relative and absolute tolerance of float comparison (as recorded).
const REL_TOL: f64 = 1e-9;
const ABS_TOL: f64 = 1e-12;

/// The tools whose GitHub scenarios are checked (`fixtures/github/` also
/// holds visualizer-comment and ingest-dispatch scenarios, which describe
/// workflow steps rather than a tool's recorded run).
const GITHUB_TOOLS: &[&str] = &["success-rate", "reuse-sweep"];

/// Extra routes per GitHub scenario, `<tool>/<case>/scenario.json` (layout
/// of a scenario, routes only): the API answers sweepkit's stricter rules
/// need that the reference's recording lacks (README there).
const SWEEPKIT_ROUTES: &str = "sweepkit-routes/github";

fn corpus_root() -> PathBuf {
    let root = match std::env::var_os("SWEEPKIT_CONFORMANCE_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => sweepkit_e2e::workspace_root().join(dir),
        None => sweepkit_e2e::workspace_root().join("tests/conformance"),
    };
    root.canonicalize()
        .unwrap_or_else(|e| panic!("conformance corpus {}: {e}", root.display()))
}

fn selected(label: &str) -> bool {
    std::env::var("SWEEPKIT_CONFORMANCE_ONLY").map_or(true, |only| label.starts_with(&only))
}

/// Writes straight to the process's stderr (libtest captures `eprint!`), so
/// the tally shows in the output of a passing `cargo test`.
fn report(lines: &[String]) {
    let mut err = std::io::stderr().lock();
    for line in lines {
        let _ = writeln!(err, "{line}");
    }
}

/// Sub-directories of `dir`, sorted by name (byte-wise).
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `{key}` placeholders replaced by their values.
fn substitute(text: &str, mapping: &[(&str, String)]) -> String {
    let mut out = text.to_string();
    for (key, value) in mapping {
        out = out.replace(&format!("{{{key}}}"), value);
    }
    out
}

/// A JSON value as an environment variable or argument.
fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() < 80 {
        s
    } else {
        format!("{}...", s.chars().take(77).collect::<String>())
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn numbers_equal(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x == y;
    }
    let (Some(x), Some(y)) = (a.as_f64(), b.as_f64()) else {
        return false;
    };
    if x == y {
        return true;
    }
    // Integers compare exactly; a float on either side allows the tolerance.
    if !(a.is_f64() || b.is_f64()) {
        return false;
    }
    (x - y).abs() <= (REL_TOL * x.abs().max(y.abs())).max(ABS_TOL)
}

/// `None` when `got` equals `want`, else where and how they first differ.
fn json_diff(got: &Value, want: &Value, path: &str) -> Option<String> {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) => {
            (!numbers_equal(a, b)).then(|| format!("{path}: {a} != expected {b}"))
        }
        (Value::Object(a), Value::Object(b)) => {
            let missing: Vec<&String> = b.keys().filter(|k| !a.contains_key(*k)).collect();
            let extra: Vec<&String> = a.keys().filter(|k| !b.contains_key(*k)).collect();
            if !missing.is_empty() || !extra.is_empty() {
                return Some(format!(
                    "{path}: keys missing {:?} extra {:?}",
                    &missing[..missing.len().min(5)],
                    &extra[..extra.len().min(5)]
                ));
            }
            b.iter().find_map(|(k, w)| {
                json_diff(a.get(k).unwrap_or(&Value::Null), w, &format!("{path}.{k}"))
            })
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Some(format!(
                    "{path}: length {} != expected {}",
                    a.len(),
                    b.len()
                ));
            }
            a.iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| json_diff(x, y, &format!("{path}[{i}]")))
        }
        _ if kind(got) != kind(want) => Some(format!(
            "{path}: {} != expected {} ({} vs {})",
            kind(got),
            kind(want),
            short(got),
            short(want)
        )),
        _ => (got != want).then(|| format!("{path}: {} != expected {}", short(got), short(want))),
    }
}

#[test]
fn json_comparison_follows_the_corpus_rules() {
    let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
    assert_eq!(
        json_diff(&v(r#"{"a":1,"b":[1,2]}"#), &v(r#"{"b":[1,2],"a":1}"#), "$"),
        None
    );
    assert!(json_diff(&v("[1,2]"), &v("[2,1]"), "$").is_some());
    assert_eq!(json_diff(&v("0.1"), &v("0.10000000000000002"), "$"), None);
    assert!(json_diff(&v("0.1"), &v("0.1001"), "$").is_some());
    assert_eq!(json_diff(&v("1"), &v("1.0"), "$"), None);
    assert!(json_diff(&v("1"), &v("2"), "$").is_some());
    assert!(json_diff(&v("true"), &v("1"), "$").is_some());
    assert!(json_diff(&v("null"), &v("0"), "$").is_some());
    let d = json_diff(
        &v(r#"{"a":{"b":[0,"x"]}}"#),
        &v(r#"{"a":{"b":[0,"y"]}}"#),
        "$",
    );
    assert_eq!(d.as_deref(), Some(r#"$.a.b[1]: "x" != expected "y""#));
}

/// Runs `cmd` with `stdin` (`None`: none), killing it after [`CASE_TIMEOUT`].
fn run_bounded(cmd: Command, stdin: Option<Vec<u8>>) -> Result<Output, String> {
    run_with_timeout(cmd, stdin, CASE_TIMEOUT)
}

fn run_with_timeout(
    mut cmd: Command,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<Output, String> {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", cmd.get_program().to_string_lossy()))?;
    let writer = child.stdin.take().zip(stdin).map(|(mut pipe, data)| {
        std::thread::spawn(move || {
            // A tool that does not read its input closes the pipe early.
            let _ = pipe.write_all(&data);
        })
    });
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {} s", timeout.as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(POLL),
            Err(e) => return Err(format!("waiting for the process: {e}")),
        }
    };
    if let Some(w) = writer {
        let _ = w.join();
    }
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

#[test]
fn a_hanging_process_is_killed_and_reported() {
    // A process that never ends on its own: the outcome does not depend on
    // how long the timeout is or how busy the machine is.
    let mut cmd = Command::new("sleep");
    cmd.arg("infinity");
    let err = run_with_timeout(cmd, None, Duration::from_millis(200)).unwrap_err();
    assert_eq!(err, "timed out after 0.2 s");
    let mut cmd = Command::new("cat");
    cmd.arg("-");
    let out = run_with_timeout(cmd, Some(b"in".to_vec()), Duration::from_secs(60)).unwrap();
    assert_eq!((out.status.code(), &out.stdout[..]), (Some(0), &b"in"[..]));
}

/// `program` with the kit's scrubbed environment (no `GITHUB_*`, `GH_*`,
/// `RUNNER_*` or `GIT_*` of the host), and git reading no user or system
/// configuration.
fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = test_kit::command(program);
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    cmd
}

fn git(cwd: &Path, args: &[&str]) -> Result<Output, String> {
    let mut cmd = command("git");
    cmd.current_dir(cwd).args(args);
    let out = run_bounded(cmd, None)?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// `repo.json`: `cwd` becomes a clone of the bundle checked out at
/// `checkout`, with a local branch for every branch the bundle holds.
fn prepare_repo(spec: &Value, root: &Path, case_dir: &Path, cwd: &Path) -> Result<(), String> {
    let bundle = spec["bundle"].as_str().ok_or("repo.json: no \"bundle\"")?;
    let checkout = spec["checkout"]
        .as_str()
        .ok_or("repo.json: no \"checkout\"")?;
    let bundle_path = match bundle.strip_prefix("case/") {
        Some(rest) => case_dir.join(rest),
        None => root.join("fixtures").join(bundle),
    };
    let parent = cwd.parent().ok_or("work directory has no parent")?;
    git(
        parent,
        &[
            "clone",
            "-q",
            &bundle_path.to_string_lossy(),
            &cwd.to_string_lossy(),
        ],
    )?;
    let refs = git(
        cwd,
        &["for-each-ref", "--format=%(refname)", "refs/remotes/origin"],
    )?;
    // The branch the clone checked out cannot be force-updated (it is
    // already at its remote's tip).
    let current = git(cwd, &["symbolic-ref", "--quiet", "--short", "HEAD"])
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    for r in String::from_utf8_lossy(&refs.stdout).split_whitespace() {
        let branch = r.strip_prefix("refs/remotes/origin/").unwrap_or(r);
        if branch != "HEAD" && branch != current {
            git(cwd, &["branch", "-f", branch, r])?;
        }
    }
    git(
        cwd,
        &[
            "-c",
            "advice.detachedHead=false",
            "checkout",
            "-q",
            checkout,
        ],
    )?;
    git(
        cwd,
        &["config", "user.email", "conformance@example.invalid"],
    )?;
    git(cwd, &["config", "user.name", "conformance"])?;
    Ok(())
}

/// Copies the tree `from` into `to`, merging with what is there.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", from.display()))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| format!("{}: {e}", src.display()))?;
        }
    }
    Ok(())
}

/// The last `n` characters of the trimmed text.
fn tail(text: &str, n: usize) -> String {
    let t = text.trim();
    let skip = t.chars().count().saturating_sub(n);
    t.chars().skip(skip).collect()
}

/// Runs one recorded case; `Err` says why it failed.
fn run_case(tool: &str, case_dir: &Path, root: &Path) -> Result<(), String> {
    let expect = read_json(&case_dir.join("expect.json"))?;
    let args = read_json(&case_dir.join("args"))?;
    let args = args.as_array().ok_or("args is not a JSON array")?;
    let tmp = test_kit::tempfile::Builder::new()
        .prefix("conf-")
        .tempdir()
        .map_err(|e| format!("temporary directory: {e}"))?;
    let cwd = tmp.path().join("work");
    let repo_spec = case_dir.join("repo.json");
    if repo_spec.exists() {
        prepare_repo(&read_json(&repo_spec)?, root, case_dir, &cwd)?;
    } else {
        std::fs::create_dir(&cwd).map_err(|e| format!("{}: {e}", cwd.display()))?;
    }
    let setup = case_dir.join("setup");
    if setup.is_dir() {
        copy_tree(&setup, &cwd)?;
    }
    let mapping = [
        (
            "fixtures",
            root.join("fixtures").to_string_lossy().into_owned(),
        ),
        ("case", case_dir.to_string_lossy().into_owned()),
        ("cwd", cwd.to_string_lossy().into_owned()),
    ];
    let mut cmd = command(sweepkit_e2e::tool(tool));
    cmd.current_dir(&cwd)
        .args(args.iter().map(|a| substitute(&as_text(a), &mapping)));
    let env_file = case_dir.join("env.json");
    if env_file.exists() {
        let env = read_json(&env_file)?;
        for (k, v) in env.as_object().ok_or("env.json is not a JSON object")? {
            cmd.env(k, substitute(&as_text(v), &mapping));
        }
    }
    let stdin_file = case_dir.join("stdin");
    let stdin = if stdin_file.exists() {
        Some(std::fs::read(&stdin_file).map_err(|e| format!("{}: {e}", stdin_file.display()))?)
    } else {
        None
    };
    let out = run_bounded(cmd, stdin)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);

    let code = out.status.code();
    match &expect["exit"] {
        Value::String(s) if s == "nonzero" => {
            if code == Some(0) {
                return Err("exit 0, expected a failure".into());
            }
        }
        want => {
            let want = want.as_i64().unwrap_or(0);
            if code.map(i64::from) != Some(want) {
                return Err(format!(
                    "exit {}, expected {want}: {}",
                    code.map_or_else(|| out.status.to_string(), |c| c.to_string()),
                    tail(&stderr, 300)
                ));
            }
        }
    }
    let all_output = format!("{stderr}{stdout}").to_lowercase();
    for needle in expect["stderr_contains"].as_array().into_iter().flatten() {
        let needle = as_text(needle);
        if !all_output.contains(&needle.to_lowercase()) {
            return Err(format!(
                "error output lacks {needle:?}: {}",
                tail(&stderr, 300)
            ));
        }
    }
    let want_stdout = match (expect.get("stdout_json"), expect.get("stdout_json_file")) {
        (Some(v), _) => Some(v.clone()),
        (None, Some(file)) => Some(read_json(&case_dir.join(as_text(file)))?),
        (None, None) => None,
    };
    if let Some(want) = want_stdout {
        let got: Value = serde_json::from_str(&stdout).map_err(|e| {
            format!(
                "stdout is not JSON ({e}): {:?}",
                stdout.chars().take(200).collect::<String>()
            )
        })?;
        if let Some(d) = json_diff(&got, &want, "$") {
            return Err(format!("stdout differs at {d}"));
        }
    }
    for (rel, expected_file) in expect["files"].as_object().into_iter().flatten() {
        let produced = cwd.join(substitute(rel, &mapping));
        if !produced.exists() {
            return Err(format!("expected output file {rel} was not written"));
        }
        let got = read_json(&produced).map_err(|e| format!("{rel} is not JSON: {e}"))?;
        let want = read_json(&case_dir.join(as_text(expected_file)))?;
        if let Some(d) = json_diff(&got, &want, "$") {
            return Err(format!("{rel} differs at {d}"));
        }
    }
    Ok(())
}

/// The `key=value` and `key<<DELIM … DELIM` entries of a GitHub output file.
fn parse_github_output(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let heredoc = line
            .find("<<")
            .filter(|&i| line.find('=').is_none_or(|j| i < j));
        if let Some(i) = heredoc {
            let (key, delim) = (&line[..i], &line[i + 2..]);
            let value: Vec<&str> = lines.by_ref().take_while(|l| *l != delim).collect();
            out.insert(key.to_string(), value.join("\n"));
        } else if let Some((key, value)) = line.split_once('=') {
            out.insert(key.to_string(), value.to_string());
        }
    }
    out
}

#[test]
fn github_output_entries_are_read_with_multiline_values() {
    let got = parse_github_output("a=1\nb<<EOF\nx\ny=z\nEOF\nc=d=e\n");
    let want: BTreeMap<String, String> = [("a", "1"), ("b", "x\ny=z"), ("c", "d=e")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(got, want);
}

/// Runs one GitHub scenario of `fixtures/github/<tool>/`.
fn run_scenario(tool: &str, dir: &Path) -> Result<(), String> {
    let scenario = read_json(&dir.join("scenario.json"))?;
    let expected = read_json(&dir.join("expected.json"))?;
    let server = test_kit::fake_github::FakeGitHub::from_scenario(dir)
        .map_err(|e| format!("fake GitHub server: {e}"))?;
    // The answers to calls only sweepkit's stricter rules make (the
    // reference never asked, so the recording has none): kept beside the
    // corpus, never in a recorded case; the workspace's copy serves a
    // corpus without one (the shared corpus).
    let case = Path::new(tool).join(dir.file_name().unwrap_or_default());
    let extra = [
        corpus_root(),
        sweepkit_e2e::workspace_root().join("tests/conformance"),
    ]
    .into_iter()
    .map(|root| root.join(SWEEPKIT_ROUTES).join(&case))
    .find(|d| d.join("scenario.json").is_file())
    .unwrap_or_default();
    if extra.join("scenario.json").is_file() {
        for route in test_kit::fake_github::load_scenario_routes(&extra)
            .map_err(|e| format!("{}: {e}", extra.display()))?
        {
            server.add_route(route);
        }
    }
    let tmp = test_kit::tempfile::Builder::new()
        .prefix("ghconf-")
        .tempdir()
        .map_err(|e| format!("temporary directory: {e}"))?;
    let cwd = tmp.path();
    let output_file = cwd.join("github_output");
    std::fs::write(&output_file, "").map_err(|e| format!("{}: {e}", output_file.display()))?;
    let inputs = &scenario["inputs"];
    let argv: Vec<String> = inputs["argv"]
        .as_array()
        .into_iter()
        .flatten()
        .map(as_text)
        .collect();

    let mut cmd = command(sweepkit_e2e::tool(tool));
    for (k, v) in inputs["env"].as_object().into_iter().flatten() {
        cmd.env(k, as_text(v));
    }
    cmd.env("GITHUB_API_URL", server.base_url())
        .env("GITHUB_OUTPUT", &output_file)
        .current_dir(cwd);
    if tool == "success-rate" {
        let runners = dir.parent().map(|p| p.join("runners.yaml"));
        if let Some(runners) = runners.filter(|r| r.exists()) {
            let configs = cwd.join("configs");
            std::fs::create_dir(&configs).map_err(|e| format!("{}: {e}", configs.display()))?;
            std::fs::copy(&runners, configs.join("runners.yaml"))
                .map_err(|e| format!("{}: {e}", runners.display()))?;
        }
        cmd.args(&argv);
    } else {
        cmd.arg("find")
            .args(&argv)
            .arg("--github-output")
            .arg(&output_file);
    }
    let out = run_bounded(cmd, None)?;
    let want_exit = expected["exit_code"].as_i64().unwrap_or(0);
    let code = out.status.code();
    if (code == Some(0)) != (want_exit == 0) {
        return Err(format!(
            "exit {}, expected {want_exit}: {}",
            code.map_or_else(|| out.status.to_string(), |c| c.to_string()),
            tail(&String::from_utf8_lossy(&out.stderr), 300)
        ));
    }
    if tool == "success-rate" {
        if let Some(name) = expected["output_file"].as_str() {
            let produced = cwd.join(name);
            if !produced.exists() {
                return Err(format!("{name} was not written"));
            }
            let got = read_json(&produced)?;
            let want = read_json(&dir.join("expected").join(name))?;
            if let Some(d) = json_diff(&got, &want, "$") {
                return Err(format!("{name} differs at {d}"));
            }
        }
    } else if want_exit == 0 {
        let text = std::fs::read_to_string(&output_file)
            .map_err(|e| format!("{}: {e}", output_file.display()))?;
        let got = parse_github_output(&text);
        for (key, value) in expected["github_output"].as_object().into_iter().flatten() {
            if key == "reuse-reason" {
                continue; // the wording is free; the decision fields are not
            }
            let value = as_text(value);
            if got.get(key) != Some(&value) {
                let got = got
                    .get(key)
                    .map_or("nothing".to_string(), |v| format!("{v:?}"));
                return Err(format!("output {key}={got}, expected {value:?}"));
            }
        }
    }
    Ok(())
}

/// One unit of work: its `<tool>/<case>` label and how to run it.
struct Job {
    label: String,
    tool: String,
    dir: PathBuf,
}

/// Cases between two progress lines: a run of the corpus on a busy 2-core
/// machine takes minutes, and a check that says nothing for that long looks
/// hung (scripts/check promises a line at least every minute).
const PROGRESS_EVERY: usize = 32;

/// Runs every job on a few worker threads (the machine's parallelism);
/// results come back in job order. Prints `<title>: N of M cases run`
/// every [`PROGRESS_EVERY`] cases.
fn run_jobs(
    title: &str,
    jobs: &[Job],
    run: impl Fn(&Job) -> Result<(), String> + Sync,
) -> Vec<Result<(), String>> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results = Mutex::new(vec![None; jobs.len()]);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len())
        .max(1);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(i) else { break };
                    let result = run(job);
                    results.lock().unwrap()[i] = Some(result);
                    let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                    if n.is_multiple_of(PROGRESS_EVERY) && n < jobs.len() {
                        report(&[format!("{title}: {n} of {} cases run", jobs.len())]);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not run".into())))
        .collect()
}

/// Prints the failures, the per-tool tally and `<title>: N passed, N
/// failed`; fails the test listing every failing case.
fn tally(title: &str, jobs: &[Job], results: &[Result<(), String>]) {
    let mut lines = Vec::new();
    let mut by_tool: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for (job, result) in jobs.iter().zip(results) {
        let t = by_tool.entry(&job.tool).or_default();
        match result {
            Ok(()) => t.0 += 1,
            Err(why) => {
                t.1 += 1;
                failures.push(format!("FAIL {}: {why}", job.label));
            }
        }
    }
    lines.extend(failures.iter().cloned());
    for (tool, (p, f)) in &by_tool {
        lines.push(format!("  {tool}: {p} passed, {f} failed"));
    }
    let passed = results.iter().filter(|r| r.is_ok()).count();
    if results.is_empty() && std::env::var_os("SWEEPKIT_CONFORMANCE_ONLY").is_some() {
        report(&[format!(
            "{title}: no case matches SWEEPKIT_CONFORMANCE_ONLY"
        )]);
        return;
    }
    lines.push(format!(
        "{title}: {passed} passed, {} failed",
        failures.len()
    ));
    report(&lines);
    assert!(
        failures.is_empty(),
        "{} of {} {title} cases failed:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
    assert!(passed > 0, "no {title} case found under the corpus");
}

#[test]
fn recorded_cases() {
    let root = corpus_root();
    let mut jobs = Vec::new();
    for tool_dir in subdirs(&root.join("cases")) {
        let tool = tool_dir.file_name().unwrap().to_string_lossy().into_owned();
        for dir in subdirs(&tool_dir) {
            let label = format!("{tool}/{}", dir.file_name().unwrap().to_string_lossy());
            if selected(&label) {
                jobs.push(Job {
                    label,
                    tool: tool.clone(),
                    dir,
                });
            }
        }
    }
    sweepkit_e2e::tool_dir(); // build (or check) the tools before the clock of any case starts
    let results = run_jobs("conformance", &jobs, |job| {
        run_case(&job.tool, &job.dir, &root)
    });
    tally("conformance", &jobs, &results);
}

#[test]
fn github_scenarios() {
    let root = corpus_root();
    let mut jobs = Vec::new();
    for tool in GITHUB_TOOLS {
        for dir in subdirs(&root.join("fixtures/github").join(tool)) {
            let label = format!("{tool}/{}", dir.file_name().unwrap().to_string_lossy());
            if dir.join("scenario.json").is_file() && selected(&label) {
                jobs.push(Job {
                    label,
                    tool: tool.to_string(),
                    dir,
                });
            }
        }
    }
    sweepkit_e2e::tool_dir();
    let results = run_jobs("github-conformance", &jobs, |job| {
        run_scenario(&job.tool, &job.dir)
    });
    tally("github-conformance", &jobs, &results);
}
