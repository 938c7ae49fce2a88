//! `collect-results process`: one raw benchmark_serving result plus the
//! benchmark template's environment become one normalised row
//! (`agg_<RESULT_FILENAME>.json`) and its power-validation sidecar
//! (spec `results.md` §2–3).
//!
//! Every check runs before anything is written, in the reference's order, so
//! the first failure is the one reported and no output file appears.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sweep_model::results::{
    BenchmarkRow, ComponentMetadata, MultiNodeTopology, PowerPart, ResultRow, SingleNodeTopology,
    Topology,
};

use crate::power::{self, PowerOutcome};
use sweep_model::python::{python_float_of_value, python_int, python_int_of_value, python_path};
use sweep_model::ranges::{self, RangeError};

/// Why `process` rejected its input.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("Missing required environment variables: {}", .0.join(", "))]
    MissingVars(Vec<String>),
    #[error("environment variable {var}={value:?} is not an integer")]
    BadInt { var: String, value: String },
    #[error("cannot read benchmark result {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("benchmark result {file} is not valid JSON: {source}")]
    Json {
        file: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("benchmark result {file}: {msg}")]
    Field { file: String, msg: String },
    #[error("{var} must contain valid JSON")]
    RouterJson { var: String },
    #[error("{var} must contain exactly 'name' and 'version'")]
    RouterKeys { var: String },
    #[error("{var} name and version must be non-empty strings")]
    RouterValues { var: String },
    #[error("PREFILL_HARDWARE and DECODE_HARDWARE must be specified together.")]
    PartialRoleHardware,
    #[error("Multinode PP, DCP, and PCP sizes must be positive integers.")]
    MultinodeSizes,
    #[error("Multinode results require at least one GPU.")]
    NoGpu,
    #[error("Multinode results require at least one prefill GPU.")]
    NoPrefillGpu,
    #[error("Disaggregated mode requires multinode setup.")]
    DisaggWithoutMultinode,
    #[error("PP_SIZE, DCP_SIZE, and PCP_SIZE must be positive integers.")]
    SingleNodeSizes,
    /// A parallelism size or GPU count out of range (`sweep_model::ranges`).
    #[error("environment variable {var}={value} {why}")]
    BadCount {
        var: String,
        value: i64,
        why: sweep_model::ranges::RangeError,
    },
    #[error("cannot write {file}: {source}")]
    Write {
        file: String,
        #[source]
        source: std::io::Error,
    },
}

impl ProcessError {
    /// The file the error is about and, for invalid JSON, its line (for
    /// the `::error file=…,line=…::` annotation); `None` for the errors
    /// about environment variables.
    #[must_use]
    pub fn location(&self) -> (Option<&str>, Option<usize>) {
        match self {
            ProcessError::Json { file, source } => (Some(file), Some(source.line())),
            ProcessError::Read { file, .. }
            | ProcessError::Field { file, .. }
            | ProcessError::Write { file, .. } => (Some(file), None),
            _ => (None, None),
        }
    }
}

/// A result file or run description that is invalid is the check saying
/// no (1); a missing variable, an unreadable result or a failed write means
/// the job could not be done (2).
impl sweep_cli::Classify for ProcessError {
    fn kind(&self) -> sweep_cli::Kind {
        match self {
            ProcessError::MissingVars(_)
            | ProcessError::Read { .. }
            | ProcessError::Write { .. } => sweep_cli::Kind::Failed,
            _ => sweep_cli::Kind::Rejected,
        }
    }
}

/// What `process` produced.
#[derive(Debug)]
pub struct ProcessOutput {
    /// The final aggregate row (after the power step), as written.
    pub row: ResultRow,
    pub agg_path: PathBuf,
    pub sidecar_path: PathBuf,
    /// Power verdict; `failed_exit` says whether the run must exit 1
    /// (`REQUIRE_POWER` on and power invalid).
    pub power: PowerOutcome,
}

/// Environment lookup (injected so tests need not touch the process env).
pub type EnvFn<'a> = &'a dyn Fn(&str) -> Option<String>;

const BASE_VARS: &[&str] = &[
    "RUNNER_TYPE",
    "FRAMEWORK",
    "PRECISION",
    "SPEC_DECODING",
    "RESULT_FILENAME",
    "ISL",
    "OSL",
    "DISAGG",
    "MODEL_PREFIX",
    "IMAGE",
];
const SINGLE_NODE_VARS: &[&str] = &["TP", "EP_SIZE", "DP_ATTENTION"];
const MULTI_NODE_VARS: &[&str] = &[
    "PREFILL_GPUS",
    "DECODE_GPUS",
    "PREFILL_NUM_WORKERS",
    "PREFILL_TP",
    "PREFILL_EP",
    "PREFILL_DP_ATTN",
    "DECODE_NUM_WORKERS",
    "DECODE_TP",
    "DECODE_EP",
    "DECODE_DP_ATTN",
];

/// Values of a group of required variables, or the list of missing ones.
fn required(env: EnvFn<'_>, names: &[&str]) -> Result<Vec<String>, ProcessError> {
    let mut values = Vec::with_capacity(names.len());
    let mut missing = Vec::new();
    for name in names {
        match env(name) {
            Some(v) => values.push(v),
            None => missing.push((*name).to_owned()),
        }
    }
    if missing.is_empty() {
        Ok(values)
    } else {
        Err(ProcessError::MissingVars(missing))
    }
}

fn int_var(var: &str, value: &str) -> Result<i64, ProcessError> {
    python_int(value).ok_or_else(|| ProcessError::BadInt {
        var: var.to_owned(),
        value: value.to_owned(),
    })
}

/// Checks the counts of a topology, in the order given.
fn counts(
    rule: fn(i64) -> Result<i64, RangeError>,
    vars: &[(&str, i64)],
) -> Result<(), ProcessError> {
    for &(var, value) in vars {
        rule(value).map_err(|why| ProcessError::BadCount {
            var: var.to_owned(),
            value,
            why,
        })?;
    }
    Ok(())
}

/// Optional integer variable with a default of 1.
fn size_var(env: EnvFn<'_>, var: &str) -> Result<i64, ProcessError> {
    match env(var) {
        Some(v) => int_var(var, &v),
        None => Ok(1),
    }
}

/// `ROUTER_METADATA`-style strict `{name, version}` metadata.
fn component_metadata(
    env: EnvFn<'_>,
    var: &str,
) -> Result<Option<ComponentMetadata>, ProcessError> {
    let raw = match env(var) {
        None => return Ok(None),
        Some(r) if r.is_empty() || r == "null" => return Ok(None),
        Some(r) => r,
    };
    let value: Value =
        sweep_model::json_strict::parse_str(&raw).map_err(|_| ProcessError::RouterJson {
            var: var.to_owned(),
        })?;
    let keys_ok = value
        .as_object()
        .is_some_and(|o| o.len() == 2 && o.contains_key("name") && o.contains_key("version"));
    if !keys_ok {
        return Err(ProcessError::RouterKeys {
            var: var.to_owned(),
        });
    }
    let get = |k: &str| {
        value
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    match (get("name"), get("version")) {
        (Some(name), Some(version)) => Ok(Some(ComponentMetadata { name, version })),
        _ => Err(ProcessError::RouterValues {
            var: var.to_owned(),
        }),
    }
}

fn is_true(v: &str) -> bool {
    v.to_lowercase() == "true"
}

/// Reads the raw result object, naming the file on every failure.
fn read_result(path: &Path, display: &str) -> Result<Map<String, Value>, ProcessError> {
    let bytes = sweep_model::fsio::read_bytes(path, sweep_model::fsio::MAX_RESULT_JSON_BYTES)
        .map_err(|source| ProcessError::Read {
            file: display.to_owned(),
            source,
        })?;
    let value: Value =
        sweep_model::json_strict::parse_value(&bytes).map_err(|source| ProcessError::Json {
            file: display.to_owned(),
            source,
        })?;
    match value {
        Value::Object(m) => Ok(m),
        other => Err(ProcessError::Field {
            file: display.to_owned(),
            msg: format!(
                "expected a JSON object, found {}",
                sweep_model::json_type::json_type_name(&other)
            ),
        }),
    }
}

/// Runs `process` in `dir` (the job workspace) with `env`. Writes both
/// output files only when every check passed.
pub fn run(env: EnvFn<'_>, dir: &Path) -> Result<ProcessOutput, ProcessError> {
    let base = required(env, BASE_VARS)?;
    let [
        hw,
        framework,
        precision,
        spec_decoding,
        result_filename,
        isl,
        osl,
        disagg,
        prefix,
        image,
    ] = <[String; 10]>::try_from(base).map_err(|_| ProcessError::MissingVars(Vec::new()))?;
    let disagg = is_true(&disagg);
    let recipe_fingerprint = env("RECIPE_FINGERPRINT").unwrap_or_default();

    let bench_name = format!("{result_filename}.json");
    let bmk = read_result(&dir.join(&bench_name), &bench_name)?;
    let bench = Bench {
        name: &bench_name,
        bmk: &bmk,
    };
    let conc = bench.concurrency()?;
    let model = bench.model_id()?;
    let isl = int_var("ISL", &isl)?;
    let osl = int_var("OSL", &osl)?;

    let router = component_metadata(env, "ROUTER_METADATA")?;
    let kv_p2p_transfer = env("KV_P2P_TRANSFER").filter(|v| !v.is_empty());
    let is_multinode = env("IS_MULTINODE").is_some_and(|v| is_true(&v));

    let figures = if is_multinode {
        multi_node(env, &bench)?
    } else if disagg {
        return Err(ProcessError::DisaggWithoutMultinode);
    } else {
        single_node(env, &bench)?
    };
    figures.check_finite(&bench)?;
    let metrics = bench.metrics()?;

    let row = BenchmarkRow {
        hw,
        conc,
        image,
        model,
        infmax_model_prefix: prefix,
        framework,
        precision,
        spec_decoding,
        disagg,
        recipe_fingerprint,
        isl,
        osl,
        router,
        kv_p2p_transfer,
        topology: figures.topology,
        tput_per_gpu: figures.tput,
        output_tput_per_gpu: figures.out_tput,
        input_tput_per_gpu: figures.in_tput,
        metrics,
    };
    power_and_write(
        env,
        dir,
        &bench,
        &result_filename,
        row,
        figures.expected_gpus,
        figures.gpu_split,
    )
}

/// The raw benchmark result and its file name, which every field error
/// names.
struct Bench<'a> {
    name: &'a str,
    bmk: &'a Map<String, Value>,
}

impl Bench<'_> {
    fn field_err(&self, msg: String) -> ProcessError {
        ProcessError::Field {
            file: self.name.to_owned(),
            msg,
        }
    }

    /// `max_concurrency`: a positive integer.
    fn concurrency(&self) -> Result<i64, ProcessError> {
        let conc_v = self
            .bmk
            .get("max_concurrency")
            .ok_or_else(|| self.field_err("required field 'max_concurrency' is missing".into()))?;
        let conc = python_int_of_value(conc_v).ok_or_else(|| {
            self.field_err(format!(
                "field 'max_concurrency' must be an integer, found {conc_v}"
            ))
        })?;
        ranges::positive(conc)
            .map_err(|e| self.field_err(format!("field 'max_concurrency' {e}")))?;
        Ok(conc)
    }

    /// `model_id`: a string.
    fn model_id(&self) -> Result<String, ProcessError> {
        let model_v = self
            .bmk
            .get("model_id")
            .ok_or_else(|| self.field_err("required field 'model_id' is missing".into()))?;
        let model = model_v.as_str().ok_or_else(|| {
            self.field_err(format!(
                "field 'model_id' must be a string, found {model_v}"
            ))
        })?;
        Ok(model.to_owned())
    }

    /// Throughputs are read lazily in the reference (inside the topology
    /// dict), i.e. after every topology check; keep that order. Each is a
    /// finite, non-negative figure within `ranges::MAX_FIGURE`, and the
    /// output part is at most the total (their difference is the input
    /// throughput).
    fn throughput(&self, key: &str) -> Result<f64, ProcessError> {
        let v = self
            .bmk
            .get(key)
            .ok_or_else(|| self.field_err(format!("required field '{key}' is missing")))?;
        let x = python_float_of_value(v)
            .ok_or_else(|| self.field_err(format!("field '{key}' must be a number, found {v}")))?;
        ranges::figure(x).map_err(|e| self.field_err(format!("field '{key}' {e}")))
    }

    fn total_and_output(&self) -> Result<(f64, f64), ProcessError> {
        let t = self.throughput("total_token_throughput")?;
        let o = self.throughput("output_throughput")?;
        if o > t {
            return Err(self.field_err(format!(
                "field 'output_throughput' ({o}) is more than 'total_token_throughput' ({t}): the input throughput would be negative"
            )));
        }
        Ok((t, o))
    }

    /// The row's metrics: the converted latencies (§2.4).
    fn metrics(&self) -> Result<Map<String, Value>, ProcessError> {
        let mut metrics = Map::new();
        convert_latencies(self.bmk, &mut metrics).map_err(|e| self.field_err(e.to_string()))?;
        // The reference strips the energy keys and `power_invalid_reasons`
        // before stamping the verdict (a latency could be named like one):
        // the power part alone holds them.
        for k in PowerPart::ENERGY_KEYS
            .iter()
            .chain(&["power_invalid_reasons"])
        {
            metrics.shift_remove(*k);
        }
        Ok(metrics)
    }
}

/// The run's topology, its throughputs per GPU, and the GPU counts the
/// power step checks the telemetry against.
struct TopologyFigures {
    topology: Topology,
    tput: f64,
    out_tput: f64,
    in_tput: f64,
    expected_gpus: i64,
    gpu_split: Option<(i64, i64)>,
}

impl TopologyFigures {
    /// A non-finite derived value would be written as JSON `null` and read
    /// as a missing measurement: refuse it, naming the field and its inputs.
    fn check_finite(&self, bench: &Bench<'_>) -> Result<(), ProcessError> {
        for (field, v, from) in [
            ("tput_per_gpu", self.tput, "total_token_throughput"),
            ("output_tput_per_gpu", self.out_tput, "output_throughput"),
            (
                "input_tput_per_gpu",
                self.in_tput,
                "total_token_throughput - output_throughput",
            ),
        ] {
            if !v.is_finite() {
                return Err(bench.field_err(format!(
                    "derived field '{field}' (from {from}) is {v}, not a finite number; JSON cannot hold it"
                )));
            }
        }
        Ok(())
    }
}

/// Multi node: the prefill/decode topology, then the throughputs per GPU
/// of the roles that produce them.
fn multi_node(env: EnvFn<'_>, bench: &Bench<'_>) -> Result<TopologyFigures, ProcessError> {
    let mut topo = read_multi_node(env)?;
    check_multi_node(&topo)?;
    let prefill_gpus = topo.num_prefill_gpu;
    let decode_gpus = topo.num_decode_gpu;
    let total = prefill_gpus + decode_gpus;
    let has_decode = decode_gpus > 0;
    if !has_decode {
        // An aggregated run: the decode side is written as no decode.
        topo.decode_tp = 0;
        topo.decode_pp = 1;
        topo.decode_dcp_size = 1;
        topo.decode_pcp_size = 1;
        topo.decode_ep = 0;
    }
    let out_den = if has_decode { decode_gpus } else { total };
    let (t, o) = bench.total_and_output()?;
    Ok(TopologyFigures {
        topology: Topology::MultiNode(topo),
        tput: t / total as f64,
        out_tput: o / out_den as f64,
        in_tput: (t - o) / prefill_gpus as f64,
        expected_gpus: total,
        gpu_split: Some((prefill_gpus, decode_gpus)),
    })
}

/// The multi-node variables as written, parsed in the reference's order;
/// `check_multi_node` checks them.
fn read_multi_node(env: EnvFn<'_>) -> Result<MultiNodeTopology, ProcessError> {
    let mn = required(env, MULTI_NODE_VARS)?;
    let prefill_hw = env("PREFILL_HARDWARE").unwrap_or_default();
    let decode_hw = env("DECODE_HARDWARE").unwrap_or_default();
    if prefill_hw.is_empty() != decode_hw.is_empty() {
        return Err(ProcessError::PartialRoleHardware);
    }
    let prefill_gpus = int_var("PREFILL_GPUS", &mn[0])?;
    let decode_gpus = int_var("DECODE_GPUS", &mn[1])?;
    let prefill_num_workers = int_var("PREFILL_NUM_WORKERS", &mn[2])?;
    let prefill_tp = int_var("PREFILL_TP", &mn[3])?;
    let prefill_pp = size_var(env, "PREFILL_PP_SIZE")?;
    let prefill_dcp = size_var(env, "PREFILL_DCP_SIZE")?;
    let prefill_pcp = size_var(env, "PREFILL_PCP_SIZE")?;
    let prefill_ep = int_var("PREFILL_EP", &mn[4])?;
    let decode_num_workers = int_var("DECODE_NUM_WORKERS", &mn[6])?;
    let decode_tp = int_var("DECODE_TP", &mn[7])?;
    let decode_pp = size_var(env, "DECODE_PP_SIZE")?;
    let decode_dcp = size_var(env, "DECODE_DCP_SIZE")?;
    let decode_pcp = size_var(env, "DECODE_PCP_SIZE")?;
    let decode_ep = int_var("DECODE_EP", &mn[8])?;
    let role_hw = (!prefill_hw.is_empty()).then_some((prefill_hw, decode_hw));
    Ok(MultiNodeTopology {
        prefill_tp,
        prefill_pp,
        prefill_dcp_size: prefill_dcp,
        prefill_pcp_size: prefill_pcp,
        prefill_ep,
        prefill_dp_attention: mn[5].clone(),
        prefill_num_workers,
        decode_tp,
        decode_pp,
        decode_dcp_size: decode_dcp,
        decode_pcp_size: decode_pcp,
        decode_ep,
        decode_dp_attention: mn[9].clone(),
        decode_num_workers,
        num_prefill_gpu: prefill_gpus,
        num_decode_gpu: decode_gpus,
        prefill_hw: role_hw.as_ref().map(|(p, _)| p.clone()),
        decode_hw: role_hw.map(|(_, d)| d),
    })
}

/// The multi-node sizes and GPU counts, in the reference's order.
fn check_multi_node(topo: &MultiNodeTopology) -> Result<(), ProcessError> {
    if [
        topo.prefill_pp,
        topo.prefill_dcp_size,
        topo.prefill_pcp_size,
        topo.decode_pp,
        topo.decode_dcp_size,
        topo.decode_pcp_size,
    ]
    .iter()
    .any(|&v| v <= 0)
    {
        return Err(ProcessError::MultinodeSizes);
    }
    let total = topo.num_prefill_gpu + topo.num_decode_gpu;
    if total <= 0 {
        return Err(ProcessError::NoGpu);
    }
    if topo.num_prefill_gpu <= 0 {
        return Err(ProcessError::NoPrefillGpu);
    }
    let has_decode = topo.num_decode_gpu > 0;
    counts(
        ranges::positive,
        &[
            ("PREFILL_GPUS", topo.num_prefill_gpu),
            ("PREFILL_NUM_WORKERS", topo.prefill_num_workers),
            ("PREFILL_TP", topo.prefill_tp),
            ("PREFILL_PP_SIZE", topo.prefill_pp),
            ("PREFILL_DCP_SIZE", topo.prefill_dcp_size),
            ("PREFILL_PCP_SIZE", topo.prefill_pcp_size),
            ("PREFILL_EP", topo.prefill_ep),
            ("DECODE_PP_SIZE", topo.decode_pp),
            ("DECODE_DCP_SIZE", topo.decode_dcp_size),
            ("DECODE_PCP_SIZE", topo.decode_pcp_size),
        ],
    )?;
    // Without decode GPUs (an aggregated run) the decode side may be 0.
    let decode_rule = if has_decode {
        ranges::positive
    } else {
        ranges::non_negative
    };
    counts(
        decode_rule,
        &[
            ("DECODE_NUM_WORKERS", topo.decode_num_workers),
            ("DECODE_TP", topo.decode_tp),
            ("DECODE_EP", topo.decode_ep),
        ],
    )?;
    counts(
        ranges::non_negative,
        &[("DECODE_GPUS", topo.num_decode_gpu)],
    )
}

/// Single node: the topology, then the throughputs per GPU of it.
fn single_node(env: EnvFn<'_>, bench: &Bench<'_>) -> Result<TopologyFigures, ProcessError> {
    let sn = required(env, SINGLE_NODE_VARS)?;
    let tp = int_var("TP", &sn[0])?;
    let ep = int_var("EP_SIZE", &sn[1])?;
    let pp = size_var(env, "PP_SIZE")?;
    let dcp_size = size_var(env, "DCP_SIZE")?;
    let pcp_size = size_var(env, "PCP_SIZE")?;
    if pp <= 0 || dcp_size <= 0 || pcp_size <= 0 {
        return Err(ProcessError::SingleNodeSizes);
    }
    counts(
        ranges::positive,
        &[
            ("TP", tp),
            ("EP_SIZE", ep),
            ("PP_SIZE", pp),
            ("DCP_SIZE", dcp_size),
            ("PCP_SIZE", pcp_size),
        ],
    )?;
    let topo = SingleNodeTopology {
        tp,
        pp,
        dcp_size,
        pcp_size,
        ep,
        dp_attention: sn[2].clone(),
    };
    let n = topo.gpu_count();
    // Every size is at least 1 (checked above), so `n` is too.
    let (t, o) = bench.total_and_output()?;
    Ok(TopologyFigures {
        topology: Topology::SingleNode(topo),
        tput: t / n as f64,
        out_tput: o / n as f64,
        in_tput: (t - o) / n as f64,
        expected_gpus: n,
        gpu_split: None,
    })
}

/// The power step (v1: the no-telemetry contract; see power.rs) stamps the
/// row's power part, then the aggregate and the sidecar are written as a
/// pair.
fn power_and_write(
    env: EnvFn<'_>,
    dir: &Path,
    bench: &Bench<'_>,
    result_filename: &str,
    row: BenchmarkRow,
    expected_gpus: i64,
    gpu_split: Option<(i64, i64)>,
) -> Result<ProcessOutput, ProcessError> {
    let power_env = power::PowerEnv {
        require_power: env("REQUIRE_POWER")
            .is_some_and(|v| matches!(v.to_lowercase().as_str(), "1" | "true" | "yes")),
        gpu_metrics_csv: env("GPU_METRICS_CSV"),
        power_artifact_dir: env("POWER_ARTIFACT_DIR").unwrap_or_else(|| "LOGS/power".into()),
        power_result_root: env("POWER_RESULT_ROOT").unwrap_or_else(|| "LOGS".into()),
        power_producer_sha: env("POWER_PRODUCER_SHA").filter(|v| !v.is_empty()),
    };
    let bench_result = python_path(bench.name);
    let sidecar_name = python_path(&format!("power_validation_{result_filename}.json"));
    let agg_name = format!("agg_{result_filename}.json");
    let mut power_part = PowerPart::default();
    let (power, sidecar) = power::evaluate(
        &power_env,
        dir,
        bench.bmk,
        &bench_result,
        &sidecar_name,
        &python_path(&agg_name),
        expected_gpus,
        gpu_split,
        &mut power_part,
    );
    let row = ResultRow {
        row,
        power: Some(power_part),
    };

    let agg_path = dir.join(&agg_name);
    let sidecar_path = dir.join(&sidecar_name);
    write_pair(
        &agg_path,
        &Value::Object(row.to_map()),
        &sidecar_path,
        &sidecar,
    )?;
    Ok(ProcessOutput {
        row,
        agg_path,
        sidecar_path,
        power,
    })
}

/// Writes the aggregate, then the sidecar; if the second write fails the
/// first file is removed again so an error never leaves a half result.
fn write_pair(
    agg_path: &Path,
    agg: &Value,
    sidecar_path: &Path,
    sidecar: &Value,
) -> Result<(), ProcessError> {
    let write = |p: &Path, v: &Value| {
        sweep_model::fsio::write_json_atomic(p, v, true).map_err(|source| ProcessError::Write {
            file: p.display().to_string(),
            source,
        })
    };
    let agg_existed = agg_path.exists();
    write(agg_path, agg)?;
    if let Err(e) = write(sidecar_path, sidecar) {
        if !agg_existed {
            let _ = std::fs::remove_file(agg_path);
        }
        return Err(e);
    }
    Ok(())
}

/// A latency field that cannot be converted (§2.4).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LatencyError {
    /// The value is not a number.
    #[error("field '{key}' must be a number, found {value}")]
    NotANumber {
        /// The benchmark key.
        key: String,
        /// Its value as written.
        value: Value,
    },
    /// A `tpot` value of 0 (interactivity is its inverse).
    #[error("field '{0}' is 0: cannot derive interactivity (1000 / {0})")]
    ZeroTpot(String),
    /// The derived value is infinite or NaN.
    #[error("field '{0}' gives a non-finite value, which JSON cannot hold")]
    NonFinite(String),
}

/// Latency and interactivity conversion (§2.4), applied in the input's key
/// order with Python dict semantics: an existing key keeps its position and
/// takes the new value.
///
/// # Errors
/// The first latency field that is not a number, a zero `tpot`, or a
/// derived value JSON cannot hold.
pub fn convert_latencies(
    bmk: &Map<String, Value>,
    data: &mut Map<String, Value>,
) -> Result<(), LatencyError> {
    for (key, value) in bmk {
        let ends_ms = key.ends_with("ms");
        let has_tpot = key.contains("tpot");
        if !ends_ms && !has_tpot {
            continue;
        }
        let v = python_float_of_value(value).ok_or_else(|| LatencyError::NotANumber {
            key: key.clone(),
            value: value.clone(),
        })?;
        let base = key.replace("_ms", "");
        if ends_ms {
            data.insert(base.clone(), finite(key, v / 1000.0)?);
        }
        if has_tpot {
            if v == 0.0 {
                return Err(LatencyError::ZeroTpot(key.clone()));
            }
            data.insert(base.replace("tpot", "intvty"), finite(key, 1000.0 / v)?);
        }
    }
    Ok(())
}

fn finite(key: &str, x: f64) -> Result<Value, LatencyError> {
    serde_json::Number::from_f64(x)
        .map(Value::Number)
        .ok_or_else(|| LatencyError::NonFinite(key.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn latency_keys_become_seconds_and_tpot_keys_interactivity() {
        let bmk = json!({"mean_tpot_ms": 5.0, "p99.9_ttft_ms": 1500, "median_tpot": 0.02,
                         "std_tpot_ms": "2.5", "other": 1});
        let mut data = Map::new();
        convert_latencies(bmk.as_object().expect("obj"), &mut data).expect("ok");
        assert_eq!(
            Value::Object(data),
            json!({"mean_tpot": 0.005, "mean_intvty": 200.0, "p99.9_ttft": 1.5,
                   "median_intvty": 50000.0, "std_tpot": 0.0025, "std_intvty": 400.0})
        );
    }

    #[test]
    fn derived_key_overwrites_in_place() {
        let bmk = json!({"conc_ms": 2000});
        let mut data = Map::new();
        data.insert("conc".into(), json!(64));
        data.insert("z".into(), json!(1));
        convert_latencies(bmk.as_object().expect("obj"), &mut data).expect("ok");
        assert_eq!(
            serde_json::to_string(&data).expect("s"),
            r#"{"conc":2.0,"z":1}"#
        );
    }

    #[test]
    fn latency_errors_are_typed_by_cause() {
        let err = |bmk: Value| {
            convert_latencies(bmk.as_object().expect("obj"), &mut Map::new()).expect_err("fails")
        };
        assert_eq!(
            err(json!({"mean_tpot_ms": 0})),
            LatencyError::ZeroTpot("mean_tpot_ms".into())
        );
        assert_eq!(
            err(json!({"x_ms": "fast"})),
            LatencyError::NotANumber {
                key: "x_ms".into(),
                value: json!("fast")
            }
        );
    }

    #[test]
    fn bad_latency_values_are_named() {
        for (bmk, needle) in [
            (json!({"mean_ttft_ms": null}), "mean_ttft_ms"),
            (json!({"mean_tpot_ms": 0}), "is 0"),
            (json!({"x_ms": "fast"}), "x_ms"),
        ] {
            let err = convert_latencies(bmk.as_object().expect("obj"), &mut Map::new())
                .expect_err("must fail");
            assert!(err.to_string().contains(needle), "{err}");
        }
    }
}
