//! What the GPU legs of `run-sweep.yml` need computed, so that nothing but
//! bash and the sweepkit binaries runs on a GPU host and the matrix never
//! travels through an environment variable:
//!
//! - `generate-matrix split`: the search-space config (a file, the setup
//!   job's artifact) checked and counted (setup), or one family's share cut
//!   into the fixed part jobs of the workflow, at most [`MAX_LEGS_PER_JOB`]
//!   legs each, as the outputs of that family's plan job;
//! - `generate-matrix leg-env`: the caller's extra leg environment, validated
//!   and appended to `$GITHUB_ENV`;
//! - `generate-matrix worker-settings`: a multi-node row's prefill/decode
//!   `additional-settings` as plain `KEY=VALUE` lines (formerly jq in bash);
//! - `generate-matrix changelog-metadata`: the config's `changelog_metadata`;
//! - [`bucket_rows`]: the rows of a `full-sweep` / `test-config` command
//!   line (the manual entry, `generate-matrix from-command`) bucketed like
//!   the changelog path's output.

use std::path::Path;

use serde_json::{Map, Value};
use sweep_model::json_type::json_type_name;

use crate::canary;

/// GitHub runs at most 256 jobs from one matrix.
pub const MAX_LEGS_PER_JOB: usize = 256;

/// GitHub caps the outputs of one job at 1 MB in all, sized as UTF-16
/// (two bytes per character of JSON). A family's rows are the outputs of its
/// own plan jobs; refuse a plan job above 900 KiB so the limit is never met
/// (the rest of its outputs is a few bytes).
pub const MAX_JOB_OUTPUT_UTF16_BYTES: usize = 900 * 1024;

/// Bytes GitHub counts for an output value (UTF-16 code units × 2).
pub fn utf16_bytes(s: &str) -> usize {
    s.encode_utf16().count() * 2
}

/// The search-space config file read by `split`: 64 MiB, far above any real
/// sweep (the biggest recorded one is 254 KB) but bounded.
pub const MAX_CONFIG_BYTES: u64 = 64 * 1024 * 1024;

/// The caller's `leg-env` input reaches the step through one environment
/// variable, and Linux refuses a single environment string above 128 KiB;
/// 32 KiB is far more than a site's settings need.
pub const MAX_LEG_ENV_BYTES: usize = 32 * 1024;

/// One fan-out family of the workflow: where its rows sit in the
/// search-space config, the output/job-id stem, and its fixed number of part
/// jobs in `run-sweep.yml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// Path in the search-space config (`single_node.1k1k`, `evals`).
    pub path: (&'static str, Option<&'static str>),
    /// Stem of the family's setup outputs (`<stem>-legs`, `<stem>-parts`)
    /// and plan jobs (`plan-<stem>`, `plan-<stem>-2`).
    pub stem: &'static str,
    /// Job id of part 1; part k ≥ 2 is `<job>-part-<k>`.
    pub job: &'static str,
    /// Part jobs in the workflow.
    pub parts: usize,
    /// Plan jobs carrying the parts' rows as outputs, each an equal share of
    /// the parts (GitHub's 1 MB of outputs per job).
    pub plans: usize,
}

/// The families in workflow order. The fixed-sequence single-node buckets
/// are the big ones (a full sweep of one sequence length); four parts give
/// them 1,024 legs each, over two plan jobs; every other family has two
/// parts, 512 legs, and one plan job.
pub const FAMILIES: [Family; 10] = [
    fam(
        ("single_node", Some("1k1k")),
        "sn-1k1k",
        "sweep-single-node-1k1k",
        4,
        2,
    ),
    fam(
        ("single_node", Some("8k1k")),
        "sn-8k1k",
        "sweep-single-node-8k1k",
        4,
        2,
    ),
    fam(
        ("single_node", Some("agentic")),
        "sn-agentic",
        "sweep-agentic",
        2,
        1,
    ),
    fam(("evals", None), "evals", "sweep-evals", 2, 1),
    fam(
        ("agentic_evals", None),
        "agentic-evals",
        "sweep-agentic-evals",
        2,
        1,
    ),
    fam(
        ("multi_node", Some("1k1k")),
        "mn-1k1k",
        "sweep-multi-node-1k1k",
        2,
        1,
    ),
    fam(
        ("multi_node", Some("8k1k")),
        "mn-8k1k",
        "sweep-multi-node-8k1k",
        2,
        1,
    ),
    fam(
        ("multi_node", Some("agentic")),
        "mn-agentic",
        "sweep-multi-node-agentic",
        2,
        1,
    ),
    fam(
        ("multinode_evals", None),
        "mn-evals",
        "sweep-multi-node-evals",
        2,
        1,
    ),
    fam(
        ("multinode_agentic_evals", None),
        "mn-agentic-evals",
        "sweep-multi-node-agentic-evals",
        2,
        1,
    ),
];

const fn fam(
    path: (&'static str, Option<&'static str>),
    stem: &'static str,
    job: &'static str,
    parts: usize,
    plans: usize,
) -> Family {
    Family {
        path,
        stem,
        job,
        parts,
        plans,
    }
}

impl Family {
    /// `single_node["1k1k"]` / `evals`, as messages name it.
    pub fn label(&self) -> String {
        match self.path {
            (t, Some(b)) => format!("{t}[\"{b}\"]"),
            (t, None) => t.to_string(),
        }
    }

    /// Job id of part `k` (1-based).
    pub fn job_id(&self, k: usize) -> String {
        if k == 1 {
            self.job.to_string()
        } else {
            format!("{}-part-{k}", self.job)
        }
    }

    /// Job id of plan job `p` (1-based).
    pub fn plan_id(&self, p: usize) -> String {
        if p == 1 {
            format!("plan-{}", self.stem)
        } else {
            format!("plan-{}-{p}", self.stem)
        }
    }

    /// The plan job (1-based) that carries part `k`.
    pub fn plan_of(&self, k: usize) -> usize {
        (k - 1) / (self.parts / self.plans) + 1
    }

    /// The parts (1-based) plan job `p` carries.
    pub fn parts_of(&self, p: usize) -> std::ops::RangeInclusive<usize> {
        let per = self.parts / self.plans;
        (p - 1) * per + 1..=p * per
    }

    fn rows<'a>(&self, ssc: &'a Map<String, Value>) -> Result<&'a [Value], String> {
        let absent = |v: Option<&Value>| matches!(v, None | Some(Value::Null));
        let (top, bucket) = self.path;
        let v = match bucket {
            None => ssc.get(top),
            Some(b) => match ssc.get(top) {
                v if absent(v) => None,
                Some(Value::Object(m)) => m.get(b),
                Some(_) => return Err(format!("search-space config: {top} is not an object")),
                None => None,
            },
        };
        match v {
            v if absent(v) => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(_) => Err(format!(
                "search-space config: {} is not a list",
                self.label()
            )),
            None => Ok(&[]),
        }
    }
}

/// The split of a search-space config into the workflow's part jobs.
#[derive(Debug, Clone)]
pub struct Split {
    /// Step outputs in order. Without a family (the setup job): per family
    /// `<stem>-parts` and `<stem>-legs`, then `legs`, `has-agentic`,
    /// `has-fixed`, `without-canary`. For one family (its plan job):
    /// `part-<k>` (a JSON array, `[]` when unused) for every part job, then
    /// `parts`.
    pub outputs: Vec<(String, String)>,
    /// Markdown for the job summary.
    pub summary: String,
}

/// One family's legs dealt evenly over as few part jobs as hold them (300
/// legs become 150 + 150, not 256 + 44), checked against the part count
/// and the job-output budget.
fn family_parts(f: &Family, rows: &[Value]) -> Result<Vec<String>, String> {
    let parts = rows.len().div_ceil(MAX_LEGS_PER_JOB);
    if parts > f.parts {
        return Err(format!(
            "{} has {} legs: more than the {} part jobs of {} legs each that run-sweep.yml has for it ({} legs at most); narrow the sweep or split it over runs",
            f.label(),
            rows.len(),
            f.parts,
            MAX_LEGS_PER_JOB,
            f.parts * MAX_LEGS_PER_JOB
        ));
    }
    let per = if parts == 0 {
        0
    } else {
        rows.len().div_ceil(parts)
    };
    let mut out = Vec::with_capacity(f.parts);
    let mut totals = vec![0; f.plans];
    for k in 1..=f.parts {
        let chunk: &[Value] = if k <= parts {
            let lo = (k - 1) * per;
            &rows[lo..(lo + per).min(rows.len())]
        } else {
            &[]
        };
        let text = serde_json::to_string(chunk).map_err(|e| e.to_string())?;
        totals[f.plan_of(k) - 1] += utf16_bytes(&text);
        out.push(text);
    }
    for (p, total) in totals.into_iter().enumerate() {
        if total > MAX_JOB_OUTPUT_UTF16_BYTES {
            return Err(format!(
                "{}: {} legs; the rows of plan job {} are {total} bytes of job output as GitHub counts them (UTF-16), above the {MAX_JOB_OUTPUT_UTF16_BYTES} allowed (GitHub's limit: 1 MB per job); narrow the sweep or split it over runs",
                f.label(),
                rows.len(),
                f.plan_id(p + 1)
            ));
        }
    }
    Ok(out)
}

/// Checks and counts every family of `ssc` (the setup job), or, with
/// `family` (a stem of [`FAMILIES`]) and `plan`, writes the part outputs
/// of that family's plan job `plan` (1-based). With `without_canary`, the canary row
/// ([`canary::select`]) is left out of the single-node buckets, as the
/// fan-out runs it first.
pub fn split(
    ssc: &Value,
    without_canary: bool,
    family: Option<&str>,
    plan: usize,
) -> Result<Split, String> {
    let owned;
    let ssc = if without_canary {
        owned = canary::select(ssc).map_err(|e| e.to_string())?.remaining;
        &owned
    } else {
        ssc
    };
    let Value::Object(top) = ssc else {
        return Err("search-space config must be a JSON object".into());
    };
    if let Some(stem) = family {
        let Some(f) = FAMILIES.iter().find(|f| f.stem == stem) else {
            let known: Vec<&str> = FAMILIES.iter().map(|f| f.stem).collect();
            return Err(format!(
                "unknown family {stem:?} (one of {})",
                known.join(", ")
            ));
        };
        if plan == 0 || plan > f.plans {
            return Err(format!("{stem} has {} plan job(s), not {plan}", f.plans));
        }
        let rows = f.rows(top)?;
        let parts = family_parts(f, rows)?;
        let used = rows.len().div_ceil(MAX_LEGS_PER_JOB);
        let mine = f.parts_of(plan);
        let mut outputs: Vec<(String, String)> = parts
            .into_iter()
            .enumerate()
            .filter(|(i, _)| mine.contains(&(i + 1)))
            .map(|(i, t)| (format!("part-{}", i + 1), t))
            .collect();
        outputs.push(("parts".into(), used.to_string()));
        let summary = format!(
            "### {}\n\n{} legs in {used} part job(s) of at most {MAX_LEGS_PER_JOB}\n",
            f.label(),
            rows.len()
        );
        return Ok(Split { outputs, summary });
    }
    let mut outputs = Vec::new();
    let mut summary = String::from("### Matrix split\n\n| family | legs | jobs |\n|---|---|---|\n");
    let mut total = 0usize;
    let mut agentic = 0usize;
    let mut fixed = 0usize;
    for f in FAMILIES {
        let rows = f.rows(top)?;
        family_parts(&f, rows)?;
        let parts = rows.len().div_ceil(MAX_LEGS_PER_JOB);
        outputs.push((format!("{}-parts", f.stem), parts.to_string()));
        outputs.push((format!("{}-legs", f.stem), rows.len().to_string()));
        if !rows.is_empty() {
            summary.push_str(&format!("| {} | {} | {parts} |\n", f.label(), rows.len()));
        }
        total += rows.len();
        if matches!(f.stem, "sn-agentic" | "mn-agentic") {
            agentic += rows.len();
        }
        if matches!(f.stem, "sn-1k1k" | "sn-8k1k" | "mn-1k1k" | "mn-8k1k") {
            fixed += rows.len();
        }
    }
    if total == 0 {
        summary
            .push_str("\nNo legs to run: the search-space config is empty, so no GPU job runs.\n");
    } else {
        summary.push_str(&format!("\n{total} legs in all.\n"));
    }
    outputs.push(("legs".into(), total.to_string()));
    outputs.push(("has-agentic".into(), (agentic > 0).to_string()));
    outputs.push(("has-fixed".into(), (fixed > 0).to_string()));
    outputs.push(("without-canary".into(), without_canary.to_string()));
    Ok(Split { outputs, summary })
}

/// Why a search-space config could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadConfigError {
    /// The file is missing or cannot be read: the job cannot be done (exit 2).
    #[error("{0}")]
    Unreadable(String),
    /// The file is too large or not JSON: the input is rejected (exit 1).
    #[error("{0}")]
    Invalid(String),
}

impl ReadConfigError {
    /// The exit code of the contract (`sweep_model::exit`).
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        match self {
            ReadConfigError::Unreadable(_) => sweep_model::exit::FAILED,
            ReadConfigError::Invalid(_) => sweep_model::exit::REJECTED,
        }
    }
}

/// Reads a search-space config file (at most [`MAX_CONFIG_BYTES`]).
///
/// # Errors
/// The file cannot be read, is larger than the limit or is not JSON.
pub fn read_config(path: &Path) -> Result<Value, ReadConfigError> {
    let unreadable =
        |e: std::io::Error| ReadConfigError::Unreadable(format!("{}: {e}", path.display()));
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(ReadConfigError::Invalid(format!(
            "{}: {} bytes, above the {MAX_CONFIG_BYTES} bytes accepted",
            path.display(),
            meta.len()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(unreadable)?;
    serde_json::from_str(&text).map_err(|e| {
        ReadConfigError::Invalid(format!(
            "{}:{}: search-space config is not valid JSON: {e}",
            path.display(),
            e.line()
        ))
    })
}

/// The shapes `generate-matrix changelog-metadata` reads, for messages.
pub const METADATA_INPUT_SHAPE: &str = "a search-space config (a JSON object) \
or a matrix list (an array of job objects with 'runner' and 'framework')";

/// The changelog metadata of a search-space config, as `generate-matrix
/// changelog-metadata` writes it: the config's `changelog_metadata` object,
/// or `{}` when it has none. A matrix list (the output of `full-sweep`,
/// `test-config` and `from-command`, every item a job object) carries no
/// changelog and gives `{}` too.
///
/// # Errors
/// Any other input (`null`, a number, `[1, 2]`, a `changelog_metadata` that
/// is not an object): "expected … ; got …", without the file name.
pub fn changelog_metadata(config: &Value) -> Result<Value, String> {
    let refuse = |got: String| Err(format!("expected {METADATA_INPUT_SHAPE}; {got}"));
    match config {
        Value::Object(m) => match m.get("changelog_metadata") {
            None => Ok(Value::Object(Map::new())),
            Some(meta @ Value::Object(_)) => Ok(meta.clone()),
            Some(other) => refuse(format!(
                "its 'changelog_metadata' is {}, not an object",
                json_type_name(other)
            )),
        },
        Value::Array(items) => {
            let is_job = |v: &Value| {
                v.as_object()
                    .is_some_and(|m| m.contains_key("runner") && m.contains_key("framework"))
            };
            match items.iter().position(|v| !is_job(v)) {
                None => Ok(Value::Object(Map::new())),
                Some(i) => refuse(format!(
                    "got an array whose item [{i}] is not a job object ({})",
                    json_type_name(&items[i])
                )),
            }
        }
        other => refuse(format!("got {}", json_type_name(other))),
    }
}

// ---------------------------------------------------------------------------
// Leg environment.
// ---------------------------------------------------------------------------

/// Variables the leg environment may never set: the shell's and the
/// loader's own, and the runner's.
const DENIED: [&str; 9] = [
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "NODE_OPTIONS",
    "HOME",
];
const DENIED_PREFIXES: [&str; 5] = ["LD_", "GITHUB_", "RUNNER_", "ACTIONS_", "INPUT_"];

/// The benchmark template's variables (workflow.md §6, the GPU jobs' `env:`
/// and what the launch step sets): the caller's `leg-env` may not override
/// them. A test checks this list against the workflow's job env.
pub const TEMPLATE_VARS: [&str; 72] = [
    "FAMILY",
    "IS_MULTINODE",
    "EXP_NAME",
    "RECIPE_FINGERPRINT",
    "MODEL",
    "MODEL_PREFIX",
    "IMAGE",
    "FRAMEWORK",
    "PRECISION",
    "ISL",
    "OSL",
    "MAX_MODEL_LEN",
    "TP",
    "PP_SIZE",
    "DCP_SIZE",
    "PCP_SIZE",
    "EP_SIZE",
    "DP_ATTENTION",
    "CONC",
    "CONC_LIST",
    "CONC_X",
    "EVAL_CONC",
    "SPEC_DECODING",
    "DISAGG",
    "PREFILL_HARDWARE",
    "DECODE_HARDWARE",
    "PREFILL_NUM_WORKERS",
    "PREFILL_TP",
    "PREFILL_PP_SIZE",
    "PREFILL_DCP_SIZE",
    "PREFILL_PCP_SIZE",
    "PREFILL_EP",
    "PREFILL_DP_ATTN",
    "PREFILL_ADDITIONAL_SETTINGS",
    "DECODE_NUM_WORKERS",
    "DECODE_TP",
    "DECODE_PP_SIZE",
    "DECODE_DCP_SIZE",
    "DECODE_PCP_SIZE",
    "DECODE_EP",
    "DECODE_DP_ATTN",
    "DECODE_ADDITIONAL_SETTINGS",
    "RUN_EVAL",
    "EVAL_ONLY",
    "SCENARIO_TYPE",
    "SCENARIO_SUBDIR",
    "IS_AGENTIC",
    "KV_OFFLOADING",
    "KV_OFFLOAD_BACKEND",
    "KV_OFFLOAD_BACKEND_METADATA",
    "ROUTER_METADATA",
    "KV_P2P_TRANSFER",
    "TOTAL_CPU_DRAM_GB",
    "DURATION",
    "REQUIRE_POWER",
    "POWER_PRODUCER_SHA",
    "EVAL_LIMIT",
    "AIPERF_EXPERIMENTAL_FAST",
    "PYTHONDONTWRITEBYTECODE",
    "RESULT_DIR",
    "RESULT_FILENAME",
    "GPU_COUNT",
    "PREFILL_GPUS",
    "DECODE_GPUS",
    "LAUNCH_COMMAND",
    "CLEANUP_COMMAND",
    "LEG_ENV",
    "FORK_CACHE_DIR",
    "HF_TOKEN",
    "MODAL_TOKEN_ID",
    "MODAL_TOKEN_SECRET",
    "REPO_TOKEN",
];

fn is_name(k: &str) -> bool {
    let mut c = k.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

fn denied(k: &str) -> bool {
    DENIED.contains(&k) || DENIED_PREFIXES.iter().any(|p| k.starts_with(p))
}

/// Parses one `KEY=VALUE` setting: a plain variable name, a value without
/// newlines (taken verbatim, never evaluated), and not a denied name.
pub fn parse_setting(kv: &str) -> Result<(String, String), String> {
    let Some((k, v)) = kv.split_once('=') else {
        return Err(format!("{kv:?} is not KEY=VALUE"));
    };
    if !is_name(k) {
        return Err(format!(
            "{k:?} is not a plain variable name (letters, digits, _)"
        ));
    }
    if v.contains(['\n', '\r', '\0']) {
        return Err(format!("{k}: the value has a line break or NUL"));
    }
    if denied(k) {
        return Err(format!("{k} may not be set"));
    }
    Ok((k.to_string(), v.to_string()))
}

/// Parses the caller's `leg-env` (one `KEY=VALUE` a line; blank lines and
/// lines starting with `#` skipped) over `defaults`; the template's own
/// variables are refused. Later lines win.
pub fn parse_leg_env(text: &str, defaults: &[String]) -> Result<Vec<(String, String)>, String> {
    if text.len() > MAX_LEG_ENV_BYTES {
        return Err(format!(
            "leg-env: {} bytes, above the {MAX_LEG_ENV_BYTES} bytes accepted",
            text.len()
        ));
    }
    let mut out: Vec<(String, String)> = Vec::new();
    let mut put = |k: String, v: String| {
        out.retain(|(x, _)| *x != k);
        out.push((k, v));
    };
    for d in defaults {
        let (k, v) = parse_setting(d).map_err(|e| format!("--default: {e}"))?;
        put(k, v);
    }
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_end_matches('\r');
        if t.trim().is_empty() || t.trim_start().starts_with('#') {
            continue;
        }
        let (k, v) = parse_setting(t).map_err(|e| format!("leg-env line {}: {e}", n + 1))?;
        if TEMPLATE_VARS.contains(&k.as_str()) {
            return Err(format!(
                "leg-env line {}: {k} is a benchmark template variable, set from the matrix row or an input",
                n + 1
            ));
        }
        put(k, v);
    }
    Ok(out)
}

/// The settings of each JSON list, in order, checked by [`parse_setting`].
pub fn worker_settings(lists: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (i, text) in lists.iter().enumerate() {
        let v: Value = serde_json::from_str(if text.trim().is_empty() { "null" } else { text })
            .map_err(|e| format!("additional-settings #{}: not JSON: {e}", i + 1))?;
        let items = match v {
            Value::Null => Vec::new(),
            Value::Array(a) => a,
            other => {
                return Err(format!(
                    "additional-settings #{}: expected a list, found {other}",
                    i + 1
                ));
            }
        };
        for item in items {
            let s = match item {
                Value::String(s) => s,
                other => other.to_string(),
            };
            out.push(parse_setting(&s).map_err(|e| format!("additional-settings entry: {e}"))?);
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// The manual entry.
// ---------------------------------------------------------------------------

/// Buckets generator rows the way the changelog path's output is bucketed:
/// rows with `eval-only: true` go to the eval lists, the rest by kind and
/// sequence length; benchmark rows get their recipe fingerprint.
pub fn bucket_rows(rows: Vec<Value>, command_line: &str) -> Result<Value, String> {
    let (mut bench, evals): (Vec<Value>, Vec<Value>) = rows
        .into_iter()
        .partition(|r| r.get("eval-only") != Some(&Value::Bool(true)));
    for row in &mut bench {
        let fp = crate::assemble::recipe_fingerprint(row);
        if let Value::Object(m) = row {
            m.insert("recipe-fingerprint".into(), Value::String(fp));
        }
    }
    let mut meta = Map::new();
    meta.insert("base_ref".into(), Value::String(String::new()));
    meta.insert("head_ref".into(), Value::String(String::new()));
    meta.insert("entries".into(), Value::Array(Vec::new()));
    meta.insert(
        "generate_command".into(),
        Value::String(command_line.to_string()),
    );
    crate::assemble::assemble(&bench, &evals, Value::Object(meta))
}

/// Splits a manual-entry command line into arguments (POSIX shell quoting
/// rules, nothing evaluated) and checks its subcommand.
pub fn command_words(line: &str) -> Result<Vec<String>, String> {
    let words = shlex::split(line)
        .ok_or_else(|| format!("command line {line:?} has an unterminated quote or escape"))?;
    match words.first().map(String::as_str) {
        Some("full-sweep" | "test-config") => Ok(words),
        Some(other) => Err(format!(
            "command line starts with {other:?}: only `full-sweep …` and `test-config …` are accepted"
        )),
        None => Err("command line is empty: give `full-sweep …` or `test-config …`".into()),
    }
}

/// The master configs a command line without `--config-files` reads (the
/// changelog path's fixed pair).
pub fn default_config_files() -> Vec<String> {
    crate::MASTER_CONFIGS
        .iter()
        .map(|s| s.to_string())
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(n: usize, isl: u64) -> Vec<Value> {
        (0..n)
            .map(|i| json!({"runner": "b200", "conc": i + 1, "isl": isl, "run-eval": false}))
            .collect()
    }

    fn out<'a>(s: &'a Split, k: &str) -> &'a str {
        &s.outputs.iter().find(|(x, _)| x == k).unwrap().1
    }

    #[test]
    fn a_big_bucket_splits_evenly_and_empty_parts_are_empty_lists() {
        let ssc = json!({"single_node": {"1k1k": rows(600, 1024), "8k1k": rows(3, 8192)}});
        let all = split(&ssc, false, None, 1).unwrap();
        assert_eq!(out(&all, "sn-1k1k-parts"), "3");
        assert_eq!(out(&all, "legs"), "603");
        assert_eq!(out(&all, "has-fixed"), "true");
        assert_eq!(out(&all, "has-agentic"), "false");
        // Two plan jobs: parts 1-2, then 3-4.
        let p1 = split(&ssc, false, Some("sn-1k1k"), 1).unwrap();
        let p2 = split(&ssc, false, Some("sn-1k1k"), 2).unwrap();
        assert_eq!((out(&p1, "parts"), out(&p2, "parts")), ("3", "3"));
        for (s, k) in [(&p1, 1), (&p1, 2), (&p2, 3)] {
            let v: Vec<Value> = serde_json::from_str(out(s, &format!("part-{k}"))).unwrap();
            assert_eq!(v.len(), 200, "part {k}");
        }
        assert_eq!(out(&p2, "part-4"), "[]");
        assert!(p1.outputs.iter().all(|(k, _)| k != "part-3"));
        assert!(split(&ssc, false, Some("sn-1k1k"), 3).is_err());
        let s = split(&ssc, false, Some("mn-agentic"), 1).unwrap();
        assert_eq!((out(&s, "part-1"), out(&s, "parts")), ("[]", "0"));
        // Without the canary: one row fewer in the single-node buckets.
        assert_eq!(out(&split(&ssc, true, None, 1).unwrap(), "legs"), "602");
        assert!(split(&ssc, false, Some("nope"), 1).is_err());
    }

    #[test]
    fn more_legs_than_part_jobs_or_job_output_is_refused_naming_the_family() {
        let ssc = json!({"evals": rows(513, 1024)});
        let e = split(&ssc, false, None, 1).unwrap_err();
        assert!(
            e.contains("evals has 513 legs") && e.contains("512 legs at most"),
            "{e}"
        );
        let s = split(&json!({"evals": rows(512, 1024)}), false, None, 1).unwrap();
        assert_eq!(out(&s, "evals-parts"), "2");
        // Rows of ~2 KB: 300 of them are above the job-output budget.
        let fat: Vec<Value> = (0..300)
            .map(|i| json!({"conc": i, "isl": 1024, "pad": "x".repeat(2000)}))
            .collect();
        let e = split(&json!({"evals": fat}), false, None, 1).unwrap_err();
        assert!(e.contains("UTF-16") && e.contains("evals"), "{e}");
    }

    #[test]
    fn empty_config_says_so() {
        let s = split(&json!({}), false, None, 1).unwrap();
        assert_eq!(out(&s, "legs"), "0");
        assert!(s.summary.contains("No legs to run"));
    }

    #[test]
    fn leg_env_accepts_plain_names_and_refuses_the_rest() {
        let v = parse_leg_env(
            "# site\nHF_HUB_CACHE=/mnt/hf_hub_cache/\n\nSALLOC_EXCLUDE=b300-005,b300-006\nRANDOM_RANGE_RATIO=0.9\n",
            &["RANDOM_RANGE_RATIO=0.8".into()],
        )
        .unwrap();
        assert_eq!(
            v,
            vec![
                ("HF_HUB_CACHE".into(), "/mnt/hf_hub_cache/".into()),
                ("SALLOC_EXCLUDE".into(), "b300-005,b300-006".into()),
                ("RANDOM_RANGE_RATIO".into(), "0.9".into()),
            ]
        );
        for (bad, why) in [
            ("TP=8", "template variable"),
            ("PATH=/x", "may not be set"),
            ("LD_PRELOAD=x.so", "may not be set"),
            ("GITHUB_TOKEN=x", "may not be set"),
            ("A B=1", "plain variable name"),
            ("novalue", "KEY=VALUE"),
        ] {
            let e = parse_leg_env(bad, &[]).unwrap_err();
            assert!(e.contains("line 1") && e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn worker_settings_are_plain_and_unevaluated() {
        let v = worker_settings(&[
            r#"["MEM=0.8","X=$(touch pwned)"]"#.into(),
            "null".into(),
            r#"[]"#.into(),
        ])
        .unwrap();
        assert_eq!(v[1], ("X".into(), "$(touch pwned)".into()));
        assert!(worker_settings(&[r#"["BASH_ENV=./x"]"#.into()]).is_err());
        assert!(worker_settings(&[r#"["PATH=1\ntouch"]"#.into()]).is_err());
        assert!(worker_settings(&[r#"{"a":1}"#.into()]).is_err());
    }

    #[test]
    fn command_line_is_split_by_quoting_rules_and_checked() {
        assert_eq!(
            command_words("test-config --config-keys 'dsr1-*' --conc 4 8").unwrap(),
            ["test-config", "--config-keys", "dsr1-*", "--conc", "4", "8"]
        );
        assert!(command_words("changelog --base-ref x").is_err());
        assert!(command_words("full-sweep 'open").is_err());
        assert!(command_words("  ").is_err());
        // `;` and `$(…)` are just characters of a word.
        let w = command_words("test-config --config-keys a;rm $(x)").unwrap();
        assert_eq!(w[2], "a;rm");
    }
}
