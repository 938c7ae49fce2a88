//! A small GitHub Actions expression engine for the tests: literals,
//! context paths (`a.b-c`, `a['x']`), `!`, `==`, `!=`, `&&`/`||` (returning
//! operands, as GitHub does), parentheses, and the functions the workflows
//! use (`contains`, `fromJSON`, `toJSON`, `join`, status functions).
//!
//! Beside it, what the workflow tests share to read and run a workflow's
//! jobs without an executor: [`legs_workflow`], [`gpu_jobs`], [`step`],
//! [`plain`] and [`run_step`] (one `run:` step in bash, as the runner runs
//! it). The act scenarios run the workflows for real (`test_kit::act`).

#![allow(dead_code)] // each test binary uses part of it

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Expression engine: literals, context paths (`a.b-c`, `a['x']`), `!`, `==`,
// `!=`, `<`/`>`, `&&`/`||` (returning operands, as GitHub does), parentheses,
// and the functions the workflow uses.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Str(String),
    Num(f64),
    Ident(String),
    Op(&'static str),
}

thread_local! {
    static TOKENS: RefCell<HashMap<String, Rc<Vec<Tok>>>> = RefCell::new(HashMap::new());
}

/// Tokenizes once per expression text.
fn tokens(s: &str) -> Rc<Vec<Tok>> {
    TOKENS.with(|c| {
        c.borrow_mut()
            .entry(s.to_string())
            .or_insert_with(|| Rc::new(tokenize(s)))
            .clone()
    })
}

fn tokenize(s: &str) -> Vec<Tok> {
    let b: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            let mut v = String::new();
            i += 1;
            loop {
                if b[i] == '\'' {
                    if i + 1 < b.len() && b[i + 1] == '\'' {
                        v.push('\'');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                v.push(b[i]);
                i += 1;
            }
            out.push(Tok::Str(v));
        } else if let Some(op) = ["&&", "||", "==", "!=", "<=", ">="].into_iter().find(|op| {
            let o: Vec<char> = op.chars().collect();
            b[i..].starts_with(&o)
        }) {
            out.push(Tok::Op(op));
            i += 2;
        } else if "!()[],.<>".contains(c) {
            out.push(Tok::Op(match c {
                '!' => "!",
                '(' => "(",
                ')' => ")",
                '[' => "[",
                ']' => "]",
                ',' => ",",
                '.' => ".",
                '<' => "<",
                _ => ">",
            }));
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == '.') {
                i += 1;
            }
            out.push(Tok::Num(
                b[start..i].iter().collect::<String>().parse().unwrap(),
            ));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '_' || b[i] == '-') {
                i += 1;
            }
            out.push(Tok::Ident(b[start..i].iter().collect()));
        } else {
            panic!("unexpected character {c:?} in expression {s:?}");
        }
    }
    out
}

/// Job results the status functions look at.
struct Status {
    /// Every `needs` job succeeded.
    needs_ok: bool,
}

struct Parser<'a> {
    t: Rc<Vec<Tok>>,
    i: usize,
    ctx: &'a Value,
    status: &'a Status,
    /// Whether a status function appeared (else GitHub adds `success() &&`).
    used_status: bool,
}

pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// GitHub's loose equality: strings compare case-insensitively; a number and
/// a string compare as numbers; otherwise by JSON value.
fn loose_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.eq_ignore_ascii_case(y),
        // Numbers compare by value (`1 == 1.0`), as GitHub's do.
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Number(x), Value::String(y)) | (Value::String(y), Value::Number(x)) => {
            y.trim().parse::<f64>().ok() == x.as_f64()
        }
        // null coerces to 0, '' and whitespace to 0 as well (so `null == ''`).
        (Value::Null, Value::String(y)) | (Value::String(y), Value::Null) => {
            y.trim().is_empty() || y.trim().parse::<f64>().ok() == Some(0.0)
        }
        (Value::Bool(x), Value::String(y)) | (Value::String(y), Value::Bool(x)) => {
            // Booleans coerce to numbers, strings to numbers: never equal to text.
            y.trim().parse::<f64>().ok() == Some(if *x { 1.0 } else { 0.0 })
        }
        _ => a == b,
    }
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn eat(&mut self, op: &'static str) -> bool {
        if self.peek() == Some(&Tok::Op(op)) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn or(&mut self) -> Value {
        let mut v = self.and();
        while self.eat("||") {
            let r = self.and();
            if !truthy(&v) {
                v = r;
            }
        }
        v
    }
    fn and(&mut self) -> Value {
        let mut v = self.cmp();
        while self.eat("&&") {
            let r = self.cmp();
            if truthy(&v) {
                v = r;
            }
        }
        v
    }
    fn cmp(&mut self) -> Value {
        let v = self.unary();
        if self.eat("==") {
            return Value::Bool(loose_eq(&v, &self.unary()));
        }
        if self.eat("!=") {
            return Value::Bool(!loose_eq(&v, &self.unary()));
        }
        v
    }
    fn unary(&mut self) -> Value {
        if self.eat("!") {
            return Value::Bool(!truthy(&self.unary()));
        }
        self.postfix()
    }
    fn postfix(&mut self) -> Value {
        let mut v = self.primary();
        loop {
            if self.eat(".") {
                let Some(Tok::Ident(name)) = self.peek().cloned() else {
                    panic!("property name expected")
                };
                self.i += 1;
                v = v.get(&name).cloned().unwrap_or(Value::Null);
            } else if self.eat("[") {
                let k = self.or();
                assert!(self.eat("]"));
                v = match (&v, &k) {
                    (Value::Array(a), Value::Number(n)) => a
                        .get(n.as_f64().unwrap() as usize)
                        .cloned()
                        .unwrap_or(Value::Null),
                    (_, Value::String(s)) => v.get(s).cloned().unwrap_or(Value::Null),
                    _ => Value::Null,
                };
            } else {
                return v;
            }
        }
    }
    fn primary(&mut self) -> Value {
        let tok = self.peek().cloned().expect("unexpected end of expression");
        self.i += 1;
        match tok {
            Tok::Str(s) => Value::String(s),
            Tok::Num(n) => json!(n),
            Tok::Op("(") => {
                let v = self.or();
                assert!(self.eat(")"));
                v
            }
            Tok::Ident(id) => match id.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                "null" => Value::Null,
                _ if self.eat("(") => {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.or());
                            if self.eat(")") {
                                break;
                            }
                            assert!(self.eat(","));
                        }
                    }
                    self.call(&id, &args)
                }
                _ => self.ctx.get(&id).cloned().unwrap_or(Value::Null),
            },
            other => panic!("unexpected token {other:?}"),
        }
    }
    fn call(&mut self, name: &str, a: &[Value]) -> Value {
        match name {
            "always" => {
                self.used_status = true;
                Value::Bool(true)
            }
            "cancelled" => {
                self.used_status = true;
                Value::Bool(false)
            }
            "success" => {
                self.used_status = true;
                Value::Bool(self.status.needs_ok)
            }
            "failure" => {
                self.used_status = true;
                Value::Bool(!self.status.needs_ok)
            }
            "contains" => Value::Bool(match &a[0] {
                Value::Array(items) => items.iter().any(|x| loose_eq(x, &a[1])),
                Value::String(s) => s
                    .to_lowercase()
                    .contains(&a[1].as_str().unwrap_or("").to_lowercase()),
                _ => false,
            }),
            "fromJSON" => serde_json::from_str(a[0].as_str().unwrap()).unwrap(),
            "toJSON" => Value::String(serde_json::to_string_pretty(&a[0]).unwrap()),
            "join" => {
                let sep = a.get(1).and_then(Value::as_str).unwrap_or(",").to_string();
                match &a[0] {
                    Value::Array(items) => {
                        Value::String(items.iter().map(to_text).collect::<Vec<_>>().join(&sep))
                    }
                    other => Value::String(to_text(other)),
                }
            }
            "format" => {
                // `{N}` replaced by argument N+1, `{{`/`}}` are `{`/`}`.
                let f: Vec<char> = a[0].as_str().unwrap_or("").chars().collect();
                let mut out = String::new();
                let mut i = 0;
                while i < f.len() {
                    match (f[i], f.get(i + 1)) {
                        ('{', Some('{')) | ('}', Some('}')) => {
                            out.push(f[i]);
                            i += 2;
                        }
                        ('{', _) => {
                            let end = (i..f.len()).find(|&j| f[j] == '}').unwrap();
                            let n: usize =
                                f[i + 1..end].iter().collect::<String>().parse().unwrap();
                            out.push_str(&to_text(&a[n + 1]));
                            i = end + 1;
                        }
                        (c, _) => {
                            out.push(c);
                            i += 1;
                        }
                    }
                }
                Value::String(out)
            }
            _ => panic!("function {name}() is not supported by the test engine"),
        }
    }
}

/// Evaluates an `if:` the way GitHub does (implicit `success() &&` when no
/// status function appears).
pub(crate) fn eval_if(expr: &str, ctx: &Value, needs_ok: bool) -> bool {
    let e = expr.trim();
    let e = e
        .strip_prefix("${{")
        .and_then(|x| x.strip_suffix("}}"))
        .unwrap_or(e);
    let (v, used_status) = evaluate(e, ctx, needs_ok, true);
    truthy(&v) && (used_status || needs_ok)
}

/// Parses and evaluates expression text `e`; also says whether a status
/// function was called. With `whole`, tokens left over are an error.
fn evaluate(e: &str, ctx: &Value, needs_ok: bool, whole: bool) -> (Value, bool) {
    let status = Status { needs_ok };
    let mut p = Parser {
        t: tokens(e),
        i: 0,
        ctx,
        status: &status,
        used_status: false,
    };
    let v = p.or();
    if whole {
        assert_eq!(p.i, p.t.len(), "trailing tokens in {e:?}");
    }
    (v, p.used_status)
}

/// Evaluates a `${{ … }}` value.
pub(crate) fn eval_value(expr: &str, ctx: &Value) -> Value {
    let e = expr
        .trim()
        .strip_prefix("${{")
        .and_then(|x| x.strip_suffix("}}"))
        .unwrap()
        .trim();
    evaluate(e, ctx, true, false).0
}

/// A value as GitHub renders it into a string (`env:` values, `format`).
pub(crate) fn to_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => serde_json::to_string_pretty(other).unwrap(),
    }
}

/// Renders a string with embedded `${{ … }}` pieces (job names, `env:`).
pub(crate) fn eval_template(text: &str, ctx: &Value) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${{") {
        out.push_str(&rest[..i]);
        let j = rest[i..].find("}}").unwrap() + i;
        out.push_str(&to_text(&eval_value(&rest[i..j + 2], ctx)));
        rest = &rest[j + 2..];
    }
    out.push_str(rest);
    out
}

/// The context of a leg job of the leg workflow (`sweepkit-sweep-legs.yml`)
/// from the one a leg job of the sweep had before the split: `matrix.family`
/// becomes the part's `kind`, the sweep's `inputs` its `inputs.sweep` JSON,
/// the policy's `agentx-fast` the boolean input.
pub(crate) fn leg_ctx(old: &Value) -> Value {
    let mut c = old.clone();
    let multi = old["matrix"]["config"].get("prefill").is_some();
    let nodes = if multi { "multi-node" } else { "single-node" };
    // A family of that kind and nodes: the leg's rules follow only those.
    let kind = old["matrix"]["family"].as_str().unwrap_or("fixed");
    let family = match (kind, multi) {
        ("canary", _) => "canary",
        ("agentic", false) => "sn-agentic",
        ("eval", false) => "evals",
        ("agentic-eval", false) => "agentic-evals",
        ("agentic", true) => "mn-agentic",
        ("eval", true) => "mn-evals",
        ("agentic-eval", true) => "mn-agentic-evals",
        (_, false) => "sn-1k1k",
        (_, true) => "mn-1k1k",
    };
    let part = json!({"family": family, "part": 1, "parts": 1, "nodes": nodes,
        "kind": kind, "title": "t"});
    let agentx = old["needs"]["policy"]["outputs"]["agentx-fast"] == "true";
    c["inputs"] = json!({"part": part.to_string(), "sweep": old["inputs"].to_string(),
        "agentx-fast": agentx, "fail-fast": false, "without-canary": false});
    c["matrix"] = json!({"leg": planned_leg(family, &old["matrix"]["config"], &old["inputs"])});
    c
}

/// The leg the plan job's `split` writes for `row` of `family` under the
/// sweep's `inputs` (`matrix.leg` of the leg jobs).
pub(crate) fn planned_leg(family: &str, row: &Value, inputs: &Value) -> Value {
    let part = sweep_matrix::leg::LegPart::of_family(family).unwrap();
    let empty = serde_json::Map::new();
    sweep_matrix::leg::plan_leg(
        row.as_object().unwrap(),
        part,
        inputs.as_object().unwrap_or(&empty),
    )
    .with_row(row)
}

/// The variables a step appended to `$GITHUB_ENV` (`KEY=VALUE` lines and
/// `KEY<<DELIMITER` blocks), in order.
pub(crate) fn github_env_vars(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((k, delim)) = line.split_once("<<") {
            let mut v: Vec<&str> = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                v.push(l);
            }
            out.push((k.to_string(), v.join("\n")));
        } else {
            let (k, v) = line.split_once('=').unwrap();
            out.push((k.to_string(), v.to_string()));
        }
    }
    out
}

/// The leg workflow, YAML anchors resolved.
pub(crate) fn legs_workflow() -> Value {
    load(".github/workflows/sweepkit-sweep-legs.yml")
}

/// The YAML file `rel` (from the workspace root) as JSON.
pub(crate) fn load(rel: &str) -> Value {
    sweep_model::yaml::load_file(&sweepkit_e2e::workspace_root().join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .into_value()
}

/// A workflow's `on:` mapping (YAML 1.1 reads the bare key `on` as the
/// boolean true).
pub(crate) fn on(doc: &Value) -> &Value {
    doc.get("on").or_else(|| doc.get("true")).unwrap()
}

/// Runs one `run:` step of a workflow job in `dir` as the runner would,
/// the tools under test first on PATH: the job's rendered `env:` is in
/// `env`, the step's own `env:` is rendered from `ctx`, and the
/// `$GITHUB_ENV` lines it writes are added to `env` for the steps after it.
pub(crate) fn run_step(
    job: &Value,
    step_name: &str,
    ctx: &Value,
    env: &mut Vec<(String, String)>,
    dir: &std::path::Path,
) -> std::process::Output {
    let step = job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["name"] == step_name)
        .unwrap_or_else(|| panic!("no step {step_name:?}"));
    let github_env = dir.join("github_env");
    std::fs::write(&github_env, "").unwrap();
    let mut c = test_kit::command("bash");
    c.args(["--noprofile", "--norc", "-eo", "pipefail", "-c"])
        .arg(step["run"].as_str().unwrap())
        .current_dir(dir)
        .env("PATH", sweepkit_e2e::path_with_tools())
        .env("GITHUB_ENV", &github_env);
    for (k, v) in env.iter() {
        c.env(k, v);
    }
    for (k, v) in step
        .get("env")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        c.env(k, eval_template(&plain(v), ctx));
    }
    let out = c.output().unwrap();
    env.extend(github_env_vars(
        &std::fs::read_to_string(&github_env).unwrap(),
    ));
    out
}

/// A workflow value as plain text: a string as it is, nothing for null,
/// anything else as compact JSON (how the tests read `runs-on`, `if:` and
/// `env:` values). [`to_text`] is GitHub's rendering, with objects as
/// pretty JSON, for what an expression produces.
pub(crate) fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The jobs of a leg workflow that run on a GPU runner (the matrix row's
/// runner), by name.
pub(crate) fn gpu_jobs(wf: &Value) -> Vec<(String, Value)> {
    wf["jobs"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, j)| plain(&j["runs-on"]).contains("matrix.leg.runs-on"))
        .map(|(k, j)| (k.clone(), j.clone()))
        .collect()
}

/// The step of `job` named `name`.
pub(crate) fn step<'a>(job: &'a Value, name: &str) -> &'a Value {
    job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["name"] == name)
        .unwrap_or_else(|| panic!("no step {name:?}"))
}

/// `actions/<name>`'s directory and its `action.yml`, after checking that
/// it declares every input of `inputs` the test gives it.
pub(crate) fn load_action(name: &str, inputs: &[(&str, &str)]) -> (std::path::PathBuf, Value) {
    let dir = sweepkit_e2e::workspace_root().join("actions").join(name);
    let action = sweep_model::yaml::load_file(&dir.join("action.yml"))
        .unwrap()
        .into_value();
    for (k, _) in inputs {
        assert!(
            action["inputs"].get(*k).is_some(),
            "actions/{name} has no input {k}"
        );
    }
    (dir, action)
}

/// A complete agg row (the shape `collect-results process` writes).
pub(crate) fn agg_row(hw: &str, conc: i64, tput: f64) -> Value {
    json!({
        "hw": hw, "conc": conc, "image": "img:1", "model": "org/Model-FP8",
        "infmax_model_prefix": "dsr1", "framework": "sglang", "precision": "fp8",
        "spec_decoding": "none", "disagg": false, "recipe_fingerprint": "",
        "isl": 1024, "osl": 1024, "is_multinode": false, "tp": 8, "pp": 1, "dcp_size": 1,
        "pcp_size": 1, "ep": 1, "dp_attention": "false",
        "tput_per_gpu": tput, "output_tput_per_gpu": tput / 2.0, "input_tput_per_gpu": tput / 2.0,
        "mean_ttft": 0.2, "median_ttft": 0.2, "p90_ttft": 0.3, "p99_ttft": 0.4,
        "p99.9_ttft": 0.5, "mean_tpot": 0.01, "mean_intvty": 100.0,
        "median_intvty": 100.0, "p90_intvty": 90.0, "p99_intvty": 80.0,
        "p99.9_intvty": 70.0, "median_e2el": 10.0, "p90_e2el": 12.0, "p99_e2el": 14.0,
        "p99.9_e2el": 15.0, "power_metric_schema_version": 2, "power_valid": 0
    })
}
