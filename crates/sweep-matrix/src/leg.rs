//! One leg: everything the leg workflow (`sweepkit-sweep-legs.yml`) needs
//! to run one matrix row, computed here so that the workflow only copies
//! values and holds no rule of its own.
//!
//! - [`plan_leg`] (the plan job, `generate-matrix split --family`): the
//!   leg's job name, its `runs-on` labels ([`runs_on`]: **which runner a leg
//!   goes to** is answered here and nowhere else) and its `timeout-minutes`;
//! - [`leg_env`] (the leg's first step, `generate-matrix leg-env --row`):
//!   its environment (the benchmark template's variables of
//!   [`crate::legs::TEMPLATE_VARS`]) and its result file name.
//!
//! The rules are the reference's leg templates (workflow.md §6.1): a row's
//! fields as the template's variables, with the overrides of its part's
//! kind (agentic legs have no sequence lengths, eval legs only evaluate, a
//! multi-node agentic leg gets 13 hours). Row fields are read as GitHub's
//! expressions read them ([`text`], [`truthy`], [`to_json`]), so the values
//! are the ones the job-level `env:` of the leg templates gave.

use serde_json::{Map, Value};

pub use crate::legs::LegPart;
use crate::legs::{CANARY, FAMILIES, Kind, Nodes};

/// A single-node leg's timeout when the sweep's inputs name none
/// (`run-sweep.yml`'s default of `timeout-minutes`).
pub const DEFAULT_SINGLE_NODE_TIMEOUT_MINUTES: u64 = 500;

/// A multi-node agentic leg runs a long trace replay: 13 hours.
pub const MULTI_NODE_AGENTIC_TIMEOUT_MINUTES: u64 = 780;

/// Any other multi-node leg: 8 hours.
pub const MULTI_NODE_TIMEOUT_MINUTES: u64 = 480;

/// The characters a result file name may hold: it becomes an artifact name
/// and a line of `$GITHUB_ENV`.
fn safe_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._:+=-".contains(c)
}

impl LegPart {
    /// The part of a family stem of [`FAMILIES`] (or [`CANARY`]).
    #[must_use]
    pub fn of_family(stem: &str) -> Option<Self> {
        if stem == CANARY {
            return Some(LegPart {
                nodes: Nodes::Single,
                kind: None,
            });
        }
        FAMILIES.iter().find(|f| f.stem == stem).map(|f| LegPart {
            nodes: f.nodes,
            kind: Some(f.kind),
        })
    }

    /// The leg's `FAMILY` variable (the parts list's `kind`).
    #[must_use]
    pub fn family_var(self) -> &'static str {
        self.kind.map_or(CANARY, Kind::as_str)
    }

    fn agentic(self) -> bool {
        matches!(self.kind, Some(Kind::Agentic | Kind::AgenticEval))
    }

    fn eval(self) -> bool {
        matches!(self.kind, Some(Kind::Eval | Kind::AgenticEval))
    }

    fn is(self, kind: Kind) -> bool {
        self.kind == Some(kind)
    }
}

/// What the plan job writes per leg besides its row.
#[derive(Debug, Clone, PartialEq)]
pub struct LegPlan {
    /// The leg job's name (`p3.000 | dsr1 fp8 b200 sgl TP8 c4 | eval`).
    pub name: String,
    /// The `runs-on` value as JSON text, with `{0}` where this attempt's
    /// number goes (see [`runs_on`]).
    pub runs_on: String,
    pub timeout_minutes: u64,
}

impl LegPlan {
    /// The leg as the leg job's matrix reads it: `{name, runs-on,
    /// timeout-minutes, config}` (`config` is the row, unchanged).
    #[must_use]
    pub fn with_row(self, row: &Value) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::String(self.name));
        m.insert("runs-on".into(), Value::String(self.runs_on));
        m.insert("timeout-minutes".into(), Value::from(self.timeout_minutes));
        m.insert("config".into(), row.clone());
        Value::Object(m)
    }
}

/// A value as a `${{ }}` expression renders it in `env:` or a name: a
/// string as is, a number or boolean as JSON writes it, nothing as "".
#[must_use]
pub fn text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(_)) => "Array".into(),
        Some(Value::Object(_)) => "Object".into(),
        Some(other) => other.to_string(),
    }
}

/// Truthiness of an expression value: `false`, `0`, `""` and null are false.
#[must_use]
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|x| x != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}

/// `v || default`.
fn or(v: Option<&Value>, default: &str) -> String {
    if truthy(v) {
        text(v)
    } else {
        default.to_string()
    }
}

/// `toJSON(v)`: indented by two spaces, as GitHub writes it.
#[must_use]
pub fn to_json(v: Option<&Value>) -> String {
    serde_json::to_string_pretty(v.unwrap_or(&Value::Null)).unwrap_or_default()
}

/// `join(v, sep)`: a list's items rendered and joined, anything else rendered.
fn join(v: Option<&Value>, sep: &str) -> String {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| text(Some(x)))
            .collect::<Vec<_>>()
            .join(sep),
        other => text(other),
    }
}

fn bool_text(b: bool) -> String {
    b.to_string()
}

/// Which runner a leg goes to: the row's `runner` label; with the
/// caller's priority scheduler also `self-hosted`, the job's priority and
/// queue-token label (`ci-job-<priority>-<queue-token>`), this attempt's
/// (`ci-attempt-{0}`: the leg job fills in `github.run_attempt`, because a
/// re-run of a failed leg is a new attempt of that job, not of the plan)
/// and the skip-queue label of a PR that has it; a trusted dispatch of a
/// fork's head adds `fork-runner-label`. One label is a JSON string, more
/// a JSON list; `{`/`}` of a label are doubled for `format()`.
#[must_use]
pub fn runs_on(row: &Map<String, Value>, sweep: &Map<String, Value>) -> String {
    let runner = text(row.get("runner"));
    let fork_label = (!text(sweep.get("changelog-head-ref")).is_empty())
        .then(|| text(sweep.get("fork-runner-label")))
        .filter(|l| !l.is_empty());
    let labels: Vec<String> = if truthy(sweep.get("priority-scheduler")) {
        let mut l = vec![
            "self-hosted".to_string(),
            runner,
            format!(
                "ci-job-{}-{}",
                text(row.get("priority")),
                text(row.get("queue-token"))
            ),
            "ci-attempt-\u{0}".to_string(),
        ];
        if truthy(row.get("skip-queue-pr")) {
            l.push(format!(
                "ci-skip-queue-pr-{}",
                text(row.get("skip-queue-pr"))
            ));
        }
        l.extend(fork_label);
        l
    } else {
        match fork_label {
            Some(f) => vec![runner, f],
            None => vec![runner],
        }
    };
    let json = if labels.len() == 1 {
        Value::String(labels[0].clone()).to_string()
    } else {
        Value::from(labels).to_string()
    };
    // The attempt's place was marked with NUL (JSON writes it `\u0000`), so
    // no label's own text can become the placeholder.
    json.replace('{', "{{")
        .replace('}', "}}")
        .replace("\\u0000", "{0}")
}

/// `TP<tp>`, then `/PP`, `/DCP`, `/PCP`, `/EP` for values other than 1
/// (or unset), then `/DPA`: the parallelism of a single-node row or of a
/// multi-node pool, as the leg templates' job names write it.
fn parallelism(w: Option<&Map<String, Value>>, dpa: bool) -> String {
    let get = |k: &str| text(w.and_then(|w| w.get(k)));
    let mut s = format!("TP{}", get("tp"));
    for (k, tag) in [
        ("pp", "PP"),
        ("dcp-size", "DCP"),
        ("pcp-size", "PCP"),
        ("ep", "EP"),
    ] {
        let v = get(k);
        if !v.is_empty() && v != "1" {
            s.push('/');
            s.push_str(tag);
            s.push_str(&v);
        }
    }
    if dpa {
        s.push_str("/DPA");
    }
    s
}

/// The leg job's name, as the reference's leg templates write it
/// (`benchmark-tmpl.yml` / `benchmark-multinode-tmpl.yml`,
/// workflow.md §6.2): `p<priority> | <model-prefix> <precision> <runner> <fw>` (`sgl`,
/// `dyn-sgl`, `sgl-disagg` for the SGLang frameworks), the parallelism
/// (`TP8/EP8/DPA`, or a multi-node row's `1P (TP4/EP4) x 2D (TP8/EP8/DPA)`
/// when disaggregated), the speculative decoding unless `none`, the KV
/// offload mode and backend when set, `c<conc>` and ` | eval-only` for an
/// eval leg (` | eval` for a fixed leg that also evaluates). The priority
/// is the matrix's string as it is (`p3.000`). Parts that are empty are
/// left out with their space, as the recorded job names show them.
#[must_use]
pub fn job_name(row: &Map<String, Value>, part: LegPart) -> String {
    let f = |k: &str| text(row.get(k));
    let fw = match f("framework").as_str() {
        "sglang" => "sgl".to_string(),
        "dynamo-sglang" => "dyn-sgl".to_string(),
        "sglang-disagg" => "sgl-disagg".to_string(),
        other => other.to_string(),
    };
    let mut words = vec![
        format!("p{} |", f("priority")),
        f("model-prefix"),
        f("precision"),
        f("runner"),
        fw,
    ];
    let conc = match part.nodes {
        Nodes::Single => {
            words.push(parallelism(Some(row), truthy(row.get("dp-attn"))));
            f("conc")
        }
        Nodes::Multi => {
            let pool = |side: &str| row.get(side).and_then(Value::as_object);
            let (p, d) = (pool("prefill"), pool("decode"));
            // A multi-node pool's `dp-attn` is the string `'true'` there.
            let dpa =
                |w: Option<&Map<String, Value>>| text(w.and_then(|w| w.get("dp-attn"))) == "true";
            let workers =
                |w: Option<&Map<String, Value>>| text(w.and_then(|w| w.get("num-worker")));
            let prefill = format!("({})", parallelism(p, dpa(p)));
            if f("disagg") == "true" {
                words.push(format!("{}P {prefill}", workers(p)));
                words.push(format!("x {}D ({})", workers(d), parallelism(d, dpa(d))));
            } else {
                words.push(prefill);
            }
            if part.is(Kind::AgenticEval) && truthy(row.get("eval-conc")) {
                f("eval-conc")
            } else {
                join(row.get("conc"), "x")
            }
        }
    };
    let spec = f("spec-decoding");
    if spec != "none" {
        words.push(spec);
    }
    let kv = f("kv-offloading");
    if !kv.is_empty() && kv != "none" {
        words.push(format!("{kv} KV offload"));
    }
    let backend = text(row.get("kv-offload-backend").and_then(|b| b.get("name")));
    if !["", "none", "default"].contains(&backend.as_str()) {
        words.push(backend);
    }
    let suffix = if part.eval() {
        " | eval-only"
    } else if part.nodes == Nodes::Single && part.is(Kind::Fixed) && truthy(row.get("run-eval")) {
        " | eval"
    } else {
        ""
    };
    words.push(format!("c{conc}{suffix}"));
    words.retain(|w| !w.is_empty());
    words.join(" ")
}

/// The leg's `timeout-minutes`: a single-node leg the caller's
/// `timeout-minutes`, a multi-node leg [`MULTI_NODE_TIMEOUT_MINUTES`]
/// ([`MULTI_NODE_AGENTIC_TIMEOUT_MINUTES`] when agentic).
#[must_use]
pub fn timeout_minutes(part: LegPart, sweep: &Map<String, Value>) -> u64 {
    match part.nodes {
        Nodes::Single => sweep
            .get("timeout-minutes")
            .and_then(|v| v.as_u64().or_else(|| v.as_str()?.trim().parse().ok()))
            .unwrap_or(DEFAULT_SINGLE_NODE_TIMEOUT_MINUTES),
        Nodes::Multi if part.agentic() => MULTI_NODE_AGENTIC_TIMEOUT_MINUTES,
        Nodes::Multi => MULTI_NODE_TIMEOUT_MINUTES,
    }
}

/// [`job_name`], [`runs_on`] and [`timeout_minutes`] of one row.
#[must_use]
pub fn plan_leg(row: &Map<String, Value>, part: LegPart, sweep: &Map<String, Value>) -> LegPlan {
    LegPlan {
        name: job_name(row, part),
        runs_on: runs_on(row, sweep),
        timeout_minutes: timeout_minutes(part, sweep),
    }
}

/// Why a leg's environment cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum LegError {
    #[error("the leg's row is not a JSON object: {0}")]
    RowNotObject(String),
    #[error("the sweep's inputs are not a JSON object: {0}")]
    SweepNotObject(String),
    #[error("unknown family {0:?} for a leg")]
    UnknownFamily(String),
    #[error("the result file name built from the matrix row has unsafe characters: {0:?}")]
    UnsafeResultName(String),
    #[error("the row's {field} is {value:?}, not a whole number: the leg's GPU count needs it")]
    NotANumber { field: &'static str, value: String },
}

/// A leg that cannot be made is its input refused.
impl sweep_exit::Classify for LegError {
    fn kind(&self) -> sweep_exit::Kind {
        sweep_exit::Kind::Rejected
    }
}

/// What the leg's environment is made of besides the row.
#[derive(Debug, Clone, Default)]
pub struct LegInputs {
    /// The calling sweep's inputs (`toJSON(inputs)` of `run-sweep.yml`).
    pub sweep: Map<String, Value>,
    /// `agentx-fast` of the leg workflow.
    pub agentx_fast: bool,
    /// The runner's name (`runner.name`): the end of the result file name.
    pub runner_name: String,
}

/// The leg's environment, in the leg templates' order: the row's fields
/// with the kind's overrides, the sweep's settings, then `RESULT_FILENAME` (and a single-node leg's `GPU_COUNT`).
///
/// # Errors
/// The result file name has characters an artifact name or `$GITHUB_ENV`
/// cannot hold, or a single-node row's `tp`/`pp`/`pcp-size` is no number.
pub fn leg_env(
    row: &Map<String, Value>,
    part: LegPart,
    inputs: &LegInputs,
) -> Result<Vec<(String, String)>, LegError> {
    let mut env = identity_env(row, part);
    match part.nodes {
        Nodes::Single => env.extend(single_node_env(row, part)),
        Nodes::Multi => {
            env.extend(multi_node_env(row, part));
            env.push(("RUN_EVAL", bool_text(part.eval())));
        }
    }
    env.extend(kind_env(row, part));
    env.extend(sweep_env(row, part, inputs));
    let mut out: Vec<(String, String)> = env.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let get = |k: &str| {
        out.iter()
            .find(|(x, _)| x == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let name = result_filename(part.nodes, &get, &inputs.runner_name);
    if !name.chars().all(safe_name_char) || name.is_empty() {
        return Err(LegError::UnsafeResultName(name));
    }
    let gpus = match part.nodes {
        Nodes::Single => Some(gpu_count(&get)?),
        Nodes::Multi => None,
    };
    out.push(("RESULT_FILENAME".into(), name));
    if let Some(g) = gpus {
        out.push(("GPU_COUNT".into(), g.to_string()));
    }
    Ok(out)
}

/// What every leg starts with: its family, what it runs and its sequence
/// lengths (`0` for an agentic leg).
fn identity_env(row: &Map<String, Value>, part: LegPart) -> Vec<(&'static str, String)> {
    let f = |k: &str| text(row.get(k));
    let seq = |k: &str| {
        if part.agentic() {
            "0".to_string()
        } else {
            f(k)
        }
    };
    let mut env: Vec<(&'static str, String)> = vec![("FAMILY", part.family_var().into())];
    if part.nodes == Nodes::Multi {
        env.push(("IS_MULTINODE", "true".into()));
    }
    env.extend([
        ("EXP_NAME", f("exp-name")),
        ("RECIPE_FINGERPRINT", or(row.get("recipe-fingerprint"), "")),
        ("MODEL", f("model")),
        ("MODEL_PREFIX", f("model-prefix")),
        ("IMAGE", f("image")),
        ("FRAMEWORK", f("framework")),
        ("PRECISION", f("precision")),
        ("ISL", seq("isl")),
        ("OSL", seq("osl")),
        ("MAX_MODEL_LEN", seq("max-model-len")),
    ]);
    env
}

/// A single-node row's parallelism and concurrency.
fn single_node_env(row: &Map<String, Value>, part: LegPart) -> Vec<(&'static str, String)> {
    let r = |k: &str| row.get(k);
    let f = |k: &str| text(row.get(k));
    let run_eval =
        part.eval() || (part.is(Kind::Fixed) && r("run-eval") == Some(&Value::Bool(true)));
    vec![
        ("TP", f("tp")),
        ("PP_SIZE", or(r("pp"), "1")),
        ("DCP_SIZE", or(r("dcp-size"), "1")),
        ("PCP_SIZE", or(r("pcp-size"), "1")),
        ("EP_SIZE", f("ep")),
        ("DP_ATTENTION", f("dp-attn")),
        ("CONC", f("conc")),
        ("SPEC_DECODING", f("spec-decoding")),
        (
            "DISAGG",
            if part.agentic() {
                "false".into()
            } else {
                f("disagg")
            },
        ),
        ("RUN_EVAL", bool_text(run_eval)),
    ]
}

/// What the part's kind decides (eval only, agentic), and the row's
/// offload, router and memory settings.
fn kind_env(row: &Map<String, Value>, part: LegPart) -> Vec<(&'static str, String)> {
    let r = |k: &str| row.get(k);
    let agentic = part.agentic();
    let dram_default = if part.nodes == Nodes::Multi {
        "600"
    } else {
        "0"
    };
    vec![
        ("EVAL_ONLY", bool_text(part.eval())),
        (
            "SCENARIO_TYPE",
            if agentic {
                "agentic-coding"
            } else {
                "fixed-seq-len"
            }
            .into(),
        ),
        (
            "SCENARIO_SUBDIR",
            if agentic {
                "agentic/"
            } else {
                "fixed_seq_len/"
            }
            .into(),
        ),
        ("IS_AGENTIC", if agentic { "1" } else { "0" }.into()),
        ("KV_OFFLOADING", or(r("kv-offloading"), "")),
        (
            "KV_OFFLOAD_BACKEND",
            or(r("kv-offload-backend").and_then(|b| b.get("name")), ""),
        ),
        (
            "KV_OFFLOAD_BACKEND_METADATA",
            json_or_empty(r("kv-offload-backend")),
        ),
        ("ROUTER_METADATA", json_or_empty(r("router"))),
        ("KV_P2P_TRANSFER", or(r("kv-p2p-transfer"), "")),
        (
            "TOTAL_CPU_DRAM_GB",
            or(r("total-cpu-dram-gb"), dram_default),
        ),
    ]
}

/// What the calling sweep decides: duration, power, eval limit, aiperf's
/// fast mode, and the fixed settings of every leg.
fn sweep_env(
    row: &Map<String, Value>,
    part: LegPart,
    inputs: &LegInputs,
) -> Vec<(&'static str, String)> {
    let sweep = &inputs.sweep;
    let mut env = vec![
        ("DURATION", duration(row, sweep)),
        (
            "REQUIRE_POWER",
            if truthy(sweep.get("require-power")) {
                "1"
            } else {
                "0"
            }
            .into(),
        ),
    ];
    if part.nodes == Nodes::Multi {
        env.push(("POWER_PRODUCER_SHA", text(sweep.get("power-producer-sha"))));
    }
    let fast = part.is(Kind::Agentic) && inputs.agentx_fast;
    env.extend([
        ("EVAL_LIMIT", text(sweep.get("eval-limit"))),
        (
            "AIPERF_EXPERIMENTAL_FAST",
            if fast { "1" } else { "0" }.into(),
        ),
        ("PYTHONDONTWRITEBYTECODE", "1".into()),
        ("RESULT_DIR", "/workspace/results".into()),
    ]);
    env
}

/// `toJSON(v)` when `v` is truthy, else "".
fn json_or_empty(v: Option<&Value>) -> String {
    if truthy(v) { to_json(v) } else { String::new() }
}

/// The sweep's `duration-override`, else the row's `duration`, else the
/// sweep's `duration`.
fn duration(row: &Map<String, Value>, sweep: &Map<String, Value>) -> String {
    [sweep.get("duration-override"), row.get("duration")]
        .into_iter()
        .find(|v| truthy(*v))
        .map_or_else(|| text(sweep.get("duration")), text)
}

/// A multi-node row's concurrencies and worker pools.
fn multi_node_env(row: &Map<String, Value>, part: LegPart) -> Vec<(&'static str, String)> {
    let r = |k: &str| row.get(k);
    let f = |k: &str| text(row.get(k));
    let eval_conc = || {
        if part.is(Kind::AgenticEval) && truthy(r("eval-conc")) {
            f("eval-conc")
        } else {
            String::new()
        }
    };
    let conc = if part.is(Kind::Agentic) && truthy(r("conc").and_then(|c| c.get(0))) {
        text(r("conc").and_then(|c| c.get(0)))
    } else {
        eval_conc()
    };
    let eval_concs = if part.is(Kind::Eval) {
        if truthy(r("eval-all-concs")) && !join(r("conc"), " ").is_empty() {
            join(r("conc"), " ")
        } else if truthy(r("eval-conc")) {
            f("eval-conc")
        } else {
            String::new()
        }
    } else {
        eval_conc()
    };
    let mut env = vec![
        ("CONC_LIST", join(r("conc"), " ")),
        ("CONC_X", join(r("conc"), "x")),
        ("CONC", conc),
        ("EVAL_CONC", eval_concs),
        ("SPEC_DECODING", f("spec-decoding")),
        ("DISAGG", f("disagg")),
        (
            "PREFILL_HARDWARE",
            or(r("prefill").and_then(|w| w.get("hardware")), ""),
        ),
        (
            "DECODE_HARDWARE",
            or(r("decode").and_then(|w| w.get("hardware")), ""),
        ),
    ];
    for (side, names) in [("prefill", WORKER_VARS[0]), ("decode", WORKER_VARS[1])] {
        let w = |k: &str| r(side).and_then(|b| b.get(k));
        env.extend([
            (names[0], text(w("num-worker"))),
            (names[1], text(w("tp"))),
            (names[2], or(w("pp"), "1")),
            (names[3], or(w("dcp-size"), "1")),
            (names[4], or(w("pcp-size"), "1")),
            (names[5], text(w("ep"))),
            (names[6], text(w("dp-attn"))),
            (names[7], to_json(w("additional-settings"))),
        ]);
    }
    env
}

/// The variables of a multi-node row's prefill and decode pools.
const WORKER_VARS: [[&str; 8]; 2] = [
    [
        "PREFILL_NUM_WORKERS",
        "PREFILL_TP",
        "PREFILL_PP_SIZE",
        "PREFILL_DCP_SIZE",
        "PREFILL_PCP_SIZE",
        "PREFILL_EP",
        "PREFILL_DP_ATTN",
        "PREFILL_ADDITIONAL_SETTINGS",
    ],
    [
        "DECODE_NUM_WORKERS",
        "DECODE_TP",
        "DECODE_PP_SIZE",
        "DECODE_DCP_SIZE",
        "DECODE_PCP_SIZE",
        "DECODE_EP",
        "DECODE_DP_ATTN",
        "DECODE_ADDITIONAL_SETTINGS",
    ],
];

/// The result file name: the experiment, precision and framework, the
/// parallelism, disaggregation, speculative decoding and concurrency, the
/// runner's name, and the first 16 characters of the recipe fingerprint.
fn result_filename(nodes: Nodes, get: &dyn Fn(&str) -> String, runner_name: &str) -> String {
    let g = |k: &str| get(k);
    let parallel = match nodes {
        Nodes::Single => format!(
            "tp{}-pp{}-dcp{}-pcp{}-ep{}-dpa{}",
            g("TP"),
            g("PP_SIZE"),
            g("DCP_SIZE"),
            g("PCP_SIZE"),
            g("EP_SIZE"),
            g("DP_ATTENTION")
        ),
        Nodes::Multi => {
            let pool = |p: &str| {
                format!(
                    "tp{}-pp{}-dcp{}-pcp{}-ep{}-dp{}-nw{}",
                    g(&format!("{p}_TP")),
                    g(&format!("{p}_PP_SIZE")),
                    g(&format!("{p}_DCP_SIZE")),
                    g(&format!("{p}_PCP_SIZE")),
                    g(&format!("{p}_EP")),
                    g(&format!("{p}_DP_ATTN")),
                    g(&format!("{p}_NUM_WORKERS"))
                )
            };
            format!("prefill-{}_decode-{}", pool("PREFILL"), pool("DECODE"))
        }
    };
    let conc = match nodes {
        Nodes::Single => g("CONC"),
        Nodes::Multi => g("CONC_X"),
    };
    let mut name = format!(
        "{}_{}_{}_{parallel}_disagg-{}_spec-{}_conc{conc}_{runner_name}",
        g("EXP_NAME"),
        g("PRECISION"),
        g("FRAMEWORK"),
        g("DISAGG"),
        g("SPEC_DECODING")
    );
    let fp = g("RECIPE_FINGERPRINT");
    if !fp.is_empty() {
        name.push_str("_recipe-");
        name.extend(fp.chars().take(16));
    }
    name
}

/// A single-node leg's GPUs: `TP × PP_SIZE × PCP_SIZE`.
fn gpu_count(get: &dyn Fn(&str) -> String) -> Result<i64, LegError> {
    let mut n: i64 = 1;
    for (field, var) in [("tp", "TP"), ("pp", "PP_SIZE"), ("pcp-size", "PCP_SIZE")] {
        let value = get(var);
        let x: i64 = value
            .parse()
            .map_err(|_| LegError::NotANumber { field, value })?;
        n = n.saturating_mul(x);
    }
    Ok(n)
}

/// The `--default`s of a leg's caller environment, per leg job (the
/// caller's `leg-env` may override them).
#[must_use]
pub fn leg_defaults(nodes: Nodes) -> &'static [&'static str] {
    match nodes {
        Nodes::Single => &[
            "RANDOM_RANGE_RATIO=0.8",
            "AIPERF_FAILED_REQUEST_THRESHOLD=0.10",
        ],
        Nodes::Multi => &["RANDOM_RANGE_RATIO=0.8"],
    }
}

/// `KEY=VALUE` lines for `$GITHUB_ENV`; a value with a line break is
/// written as `KEY<<DELIMITER` … `DELIMITER`, with a delimiter the value
/// does not hold.
#[must_use]
pub fn github_env_lines(vars: &[(String, String)]) -> String {
    let mut text = String::new();
    for (k, v) in vars {
        if v.contains(['\n', '\r']) {
            let mut delim = String::from("SWEEPKIT_EOF");
            while v.contains(delim.as_str()) {
                delim.push('_');
            }
            text.push_str(&format!("{k}<<{delim}\n{v}\n{delim}\n"));
        } else {
            text.push_str(&format!("{k}={v}\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn sn_row() -> Map<String, Value> {
        obj(
            json!({"image": "img:v1", "model": "org/M", "model-prefix": "m", "precision": "fp8",
            "framework": "sglang", "spec-decoding": "none", "runner": "h200", "isl": 1024,
            "osl": 1024, "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 2, "ep": 1, "dp-attn": false,
            "conc": 4, "max-model-len": 2048, "exp-name": "m_1k1k", "disagg": false,
            "run-eval": true, "eval-only": false, "priority": "3.000", "queue-token": "abc",
            "recipe-fingerprint": "0123456789abcdef0123"}),
        )
    }

    fn mn_row() -> Map<String, Value> {
        let pool = json!({"num-worker": 2, "tp": 4, "pp": 1, "dcp-size": 1, "pcp-size": 1,
            "ep": 4, "dp-attn": true, "additional-settings": ["CONFIG_FILE=a.yaml"]});
        obj(
            json!({"image": "img:v1", "model": "org/M", "model-prefix": "m", "precision": "fp4",
            "framework": "dynamo-trt", "spec-decoding": "mtp", "runner": "gb200", "isl": 8192,
            "osl": 1024, "prefill": pool, "decode": pool, "conc": [16, 32],
            "max-model-len": 9216, "exp-name": "m_8k1k", "disagg": true, "run-eval": false,
            "eval-only": false, "eval-conc": 32, "eval-all-concs": false}),
        )
    }

    fn part(stem: &str) -> LegPart {
        LegPart::of_family(stem).unwrap()
    }

    fn var<'a>(env: &'a [(String, String)], k: &str) -> &'a str {
        &env.iter().find(|(x, _)| x == k).unwrap().1
    }

    #[test]
    fn a_leg_goes_to_its_runner_with_the_scheduler_and_fork_labels_when_asked() {
        let row = sn_row();
        assert_eq!(runs_on(&row, &Map::new()), r#""h200""#);
        let sched = obj(json!({"priority-scheduler": true}));
        assert_eq!(
            runs_on(&row, &sched),
            r#"["self-hosted","h200","ci-job-3.000-abc","ci-attempt-{0}"]"#
        );
        let fork = obj(
            json!({"priority-scheduler": false, "changelog-head-ref": "abc",
            "fork-runner-label": "untrusted-gpu"}),
        );
        assert_eq!(runs_on(&row, &fork), r#"["h200","untrusted-gpu"]"#);
        let mut skip = row.clone();
        skip.insert("skip-queue-pr".into(), json!(42));
        let both = obj(
            json!({"priority-scheduler": true, "changelog-head-ref": "abc",
            "fork-runner-label": "f{x}"}),
        );
        assert_eq!(
            runs_on(&skip, &both),
            r#"["self-hosted","h200","ci-job-3.000-abc","ci-attempt-{0}","ci-skip-queue-pr-42","f{{x}}"]"#
        );
        // A fork label without a trusted dispatch's head is not used.
        let no_head = obj(json!({"fork-runner-label": "untrusted-gpu"}));
        assert_eq!(runs_on(&row, &no_head), r#""h200""#);
    }

    #[test]
    fn names_and_timeouts_follow_the_part() {
        let sweep = obj(json!({"timeout-minutes": 90}));
        let p = plan_leg(&sn_row(), part("sn-1k1k"), &sweep);
        assert_eq!(p.name, "p3.000 | m fp8 h200 sgl TP8/PCP2 c4 | eval");
        assert_eq!(p.timeout_minutes, 90);
        assert_eq!(
            job_name(&sn_row(), part("evals")),
            "p3.000 | m fp8 h200 sgl TP8/PCP2 c4 | eval-only"
        );
        assert_eq!(
            job_name(&sn_row(), part(CANARY)),
            "p3.000 | m fp8 h200 sgl TP8/PCP2 c4"
        );
        assert_eq!(
            job_name(&mn_row(), part("mn-8k1k")),
            "p | m fp4 gb200 dynamo-trt 2P (TP4/EP4/DPA) x 2D (TP4/EP4/DPA) mtp c16x32"
        );
        assert_eq!(
            job_name(&mn_row(), part("mn-agentic-evals")),
            "p | m fp4 gb200 dynamo-trt 2P (TP4/EP4/DPA) x 2D (TP4/EP4/DPA) mtp c32 | eval-only"
        );
        let mut aggregated = mn_row();
        aggregated.insert("disagg".into(), json!(false));
        assert_eq!(
            job_name(&aggregated, part("mn-8k1k")),
            "p | m fp4 gb200 dynamo-trt (TP4/EP4/DPA) mtp c16x32"
        );
        assert_eq!(timeout_minutes(part("mn-agentic"), &sweep), 780);
        assert_eq!(timeout_minutes(part("mn-evals"), &sweep), 480);
        assert_eq!(timeout_minutes(part("sn-agentic"), &Map::new()), 500);
    }

    /// Job names of the reference's recorded runs (the success-rate
    /// fixtures of the conformance corpus), rebuilt from rows of the same
    /// shape: the name GitHub showed, priority string and all.
    #[test]
    fn job_names_are_the_reference_templates_names() {
        let agentic = obj(
            json!({"priority": "5.500", "model-prefix": "dsv4", "precision": "fp4",
            "runner": "cluster:mi355x-amds", "framework": "vllm", "tp": 8, "pp": 1,
            "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": false, "conc": 16,
            "spec-decoding": "mtp", "kv-offloading": "none"}),
        );
        assert_eq!(
            job_name(&agentic, part("sn-agentic")),
            "p5.500 | dsv4 fp4 cluster:mi355x-amds vllm TP8 mtp c16"
        );
        let canary = obj(json!({"priority": "3.000", "model-prefix": "qwen3.5",
            "precision": "fp4", "runner": "cluster:b200-nscale", "framework": "sglang",
            "tp": 4, "ep": 1, "dp-attn": false, "conc": 4, "spec-decoding": "none",
            "run-eval": true}));
        assert_eq!(
            job_name(&canary, part(CANARY)),
            "p3.000 | qwen3.5 fp4 cluster:b200-nscale sgl TP4 c4"
        );
        let pool = |n: u64, tp: u64, dpa: bool| json!({"num-worker": n, "tp": tp, "pp": 1, "ep": tp, "dp-attn": dpa});
        let mn = obj(
            json!({"priority": "6.000", "model-prefix": "dsv4", "precision": "fp4",
            "runner": "cluster:gb200-nv", "framework": "dynamo-vllm", "disagg": true,
            "prefill": pool(1, 4, false), "decode": pool(2, 8, true), "conc": [64, 128],
            "spec-decoding": "mtp"}),
        );
        assert_eq!(
            job_name(&mn, part("mn-agentic")),
            "p6.000 | dsv4 fp4 cluster:gb200-nv dynamo-vllm 1P (TP4/EP4) x 2D (TP8/EP8/DPA) mtp c64x128"
        );
        let mut eval = mn.clone();
        eval.insert("runner".into(), json!("gb200"));
        eval.insert("prefill".into(), pool(1, 4, true));
        eval.insert("decode".into(), pool(1, 8, true));
        eval.insert("spec-decoding".into(), json!("none"));
        eval.insert("conc".into(), json!([256, 512]));
        assert_eq!(
            job_name(&eval, part("mn-evals")),
            "p6.000 | dsv4 fp4 gb200 dynamo-vllm 1P (TP4/EP4/DPA) x 1D (TP8/EP8/DPA) c256x512 | eval-only"
        );
        // The offload mode and backend of an agentic row (none of the
        // recorded runs had one): `dram KV offload lmcache`.
        let mut offload = agentic.clone();
        offload.insert("kv-offloading".into(), json!("dram"));
        offload.insert(
            "kv-offload-backend".into(),
            json!({"name": "lmcache", "version": "1"}),
        );
        offload.insert("framework".into(), json!("dynamo-sglang"));
        offload.insert("dp-attn".into(), json!(true));
        offload.insert("ep".into(), json!(8));
        assert_eq!(
            job_name(&offload, part("sn-agentic")),
            "p5.500 | dsv4 fp4 cluster:mi355x-amds dyn-sgl TP8/EP8/DPA mtp dram KV offload lmcache c16"
        );
    }

    #[test]
    fn a_single_node_leg_gets_its_row_as_the_template_variables() {
        let inputs = LegInputs {
            sweep: obj(json!({"duration": "3600", "require-power": true, "eval-limit": ""})),
            agentx_fast: true,
            runner_name: "h200-cw_00".into(),
        };
        let env = leg_env(&sn_row(), part("sn-1k1k"), &inputs).unwrap();
        assert_eq!(var(&env, "FAMILY"), "fixed");
        assert_eq!(var(&env, "ISL"), "1024");
        assert_eq!(var(&env, "RUN_EVAL"), "true");
        assert_eq!(var(&env, "EVAL_ONLY"), "false");
        assert_eq!(var(&env, "TOTAL_CPU_DRAM_GB"), "0");
        assert_eq!(var(&env, "DURATION"), "3600");
        assert_eq!(var(&env, "REQUIRE_POWER"), "1");
        assert_eq!(var(&env, "AIPERF_EXPERIMENTAL_FAST"), "0");
        assert_eq!(var(&env, "GPU_COUNT"), "16");
        assert_eq!(
            var(&env, "RESULT_FILENAME"),
            "m_1k1k_fp8_sglang_tp8-pp1-dcp1-pcp2-ep1-dpafalse_disagg-false_spec-none_conc4_h200-cw_00_recipe-0123456789abcdef"
        );
        let agentic = leg_env(&sn_row(), part("sn-agentic"), &inputs).unwrap();
        assert_eq!(var(&agentic, "ISL"), "0");
        assert_eq!(var(&agentic, "DISAGG"), "false");
        assert_eq!(var(&agentic, "SCENARIO_TYPE"), "agentic-coding");
        assert_eq!(var(&agentic, "RUN_EVAL"), "false");
        assert_eq!(var(&agentic, "AIPERF_EXPERIMENTAL_FAST"), "1");
        let canary = leg_env(&sn_row(), part(CANARY), &inputs).unwrap();
        assert_eq!(var(&canary, "FAMILY"), "canary");
        assert_eq!(var(&canary, "RUN_EVAL"), "false");
        for (k, _) in env.iter().chain(&agentic) {
            assert!(
                crate::legs::TEMPLATE_VARS.contains(&k.as_str()),
                "{k} is not a template variable: a caller's leg-env could override it"
            );
        }
    }

    #[test]
    fn a_multi_node_leg_gets_its_pools_and_concurrencies() {
        let inputs = LegInputs {
            sweep: obj(
                json!({"duration": "600", "duration-override": "", "power-producer-sha": "abc"}),
            ),
            agentx_fast: false,
            runner_name: "gb200-nv_0".into(),
        };
        let env = leg_env(&mn_row(), part("mn-8k1k"), &inputs).unwrap();
        assert_eq!(var(&env, "IS_MULTINODE"), "true");
        assert_eq!(var(&env, "CONC_LIST"), "16 32");
        assert_eq!(var(&env, "CONC"), "");
        assert_eq!(var(&env, "TOTAL_CPU_DRAM_GB"), "600");
        assert_eq!(var(&env, "PREFILL_DP_ATTN"), "true");
        assert_eq!(
            var(&env, "PREFILL_ADDITIONAL_SETTINGS"),
            "[\n  \"CONFIG_FILE=a.yaml\"\n]"
        );
        assert_eq!(var(&env, "POWER_PRODUCER_SHA"), "abc");
        assert!(env.iter().all(|(k, _)| k != "GPU_COUNT"));
        assert_eq!(
            var(&env, "RESULT_FILENAME"),
            "m_8k1k_fp4_dynamo-trt_prefill-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw2_decode-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw2_disagg-true_spec-mtp_conc16x32_gb200-nv_0"
        );
        let evals = leg_env(&mn_row(), part("mn-evals"), &inputs).unwrap();
        assert_eq!(var(&evals, "EVAL_CONC"), "32");
        let mut all = mn_row();
        all.insert("eval-all-concs".into(), json!(true));
        let evals = leg_env(&all, part("mn-evals"), &inputs).unwrap();
        assert_eq!(var(&evals, "EVAL_CONC"), "16 32");
        let agentic = leg_env(&mn_row(), part("mn-agentic"), &inputs).unwrap();
        assert_eq!(var(&agentic, "CONC"), "16");
        let aeval = leg_env(&mn_row(), part("mn-agentic-evals"), &inputs).unwrap();
        assert_eq!(var(&aeval, "CONC"), "32");
        assert_eq!(var(&aeval, "EVAL_CONC"), "32");
    }

    #[test]
    fn a_result_name_with_unsafe_characters_is_refused() {
        let mut row = sn_row();
        row.insert("exp-name".into(), json!("x\n$(id)"));
        let e = leg_env(&row, part("sn-1k1k"), &LegInputs::default()).unwrap_err();
        assert!(e.to_string().contains("unsafe characters"), "{e}");
    }

    #[test]
    fn multi_line_values_reach_github_env_as_delimited_blocks() {
        let lines = github_env_lines(&[
            ("A".into(), "1".into()),
            ("B".into(), "[\n  \"SWEEPKIT_EOF\"\n]".into()),
        ]);
        assert_eq!(
            lines,
            "A=1\nB<<SWEEPKIT_EOF_\n[\n  \"SWEEPKIT_EOF\"\n]\nSWEEPKIT_EOF_\n"
        );
    }
}
