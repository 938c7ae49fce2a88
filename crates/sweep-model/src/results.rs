//! Result rows: the normalised benchmark row that `collect-results process`
//! writes (`agg_<RESULT_FILENAME>.json`, one element of `agg_bmk.json`) and
//! the eval row of `agg_eval_all.json`.
//!
//! Both convert to and from a JSON object with the reference's key order
//! (`to_map` / `TryFrom<Map>`), so a row read from an artifact and written
//! back keeps its shape. Benchmark rows keep every metric the typed fields
//! do not name (latencies in seconds, interactivity, power fields) in
//! `metrics`, in document order; the set of those keys depends on the
//! benchmark client, so it is not fixed here.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A field of a row was missing or had the wrong type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RowError {
    /// The row is not a JSON object.
    #[error("a result row must be a JSON object, found {0}")]
    NotAnObject(&'static str),
    /// A required field is absent.
    #[error("field '{field}' is missing (expected {expected})")]
    Missing {
        field: String,
        expected: &'static str,
    },
    /// A field has the wrong JSON type.
    #[error("field '{field}' must be {expected}, found {found}")]
    WrongType {
        field: String,
        expected: &'static str,
        found: String,
    },
}

/// Serving-router or similar component identity (`ROUTER_METADATA`): exactly
/// a non-empty `name` and `version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentMetadata {
    pub name: String,
    pub version: String,
}

/// Parallelism of a single-node deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SingleNodeTopology {
    pub tp: i64,
    /// Pipeline-parallel size (rows older than PP support lack it: 1).
    pub pp: i64,
    /// Decode-context-parallel size (does not add GPUs).
    pub dcp_size: i64,
    /// Prefill-context-parallel size.
    pub pcp_size: i64,
    pub ep: i64,
    /// `DP_ATTENTION` verbatim, normally `"true"` / `"false"`.
    pub dp_attention: String,
}

impl SingleNodeTopology {
    /// GPUs the throughput was divided by: `tp * pp * pcp_size`.
    pub fn gpu_count(&self) -> i64 {
        self.tp * self.pp * self.pcp_size
    }
}

/// Parallelism of a multi-node (normally disaggregated) deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiNodeTopology {
    pub prefill_tp: i64,
    pub prefill_pp: i64,
    pub prefill_dcp_size: i64,
    pub prefill_pcp_size: i64,
    pub prefill_ep: i64,
    /// `PREFILL_DP_ATTN` verbatim.
    pub prefill_dp_attention: String,
    pub prefill_num_workers: i64,
    /// `0` when there are no decode GPUs.
    pub decode_tp: i64,
    /// `1` when there are no decode GPUs (likewise dcp/pcp).
    pub decode_pp: i64,
    pub decode_dcp_size: i64,
    pub decode_pcp_size: i64,
    /// `0` when there are no decode GPUs.
    pub decode_ep: i64,
    /// `DECODE_DP_ATTN` verbatim, kept even without decode GPUs.
    pub decode_dp_attention: String,
    pub decode_num_workers: i64,
    pub num_prefill_gpu: i64,
    pub num_decode_gpu: i64,
    /// Role hardware, present only for heterogeneous deployments (both or neither).
    pub prefill_hw: Option<String>,
    pub decode_hw: Option<String>,
}

/// Single- or multi-node topology; serialised with `is_multinode`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Topology {
    SingleNode(SingleNodeTopology),
    MultiNode(MultiNodeTopology),
}

/// One normalised benchmark result (one config point, one concurrency):
/// the output of `collect-results process` and an element of `agg_bmk.json`.
///
/// Serialised field order: the head fields below, `router`,
/// `kv_p2p_transfer`, `is_multinode`, the topology fields, the three
/// per-GPU throughputs, (multi node) `prefill_hw`/`decode_hw`, then
/// `metrics` in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Map<String, Value>", into = "Map<String, Value>")]
pub struct BenchmarkRow {
    /// Runner type (`RUNNER_TYPE`), e.g. `b200` or `gb200`.
    pub hw: String,
    /// Client concurrency (`max_concurrency`, truncated to an integer).
    pub conc: i64,
    /// Serving image (`IMAGE`).
    pub image: String,
    /// Served model id (`model_id` of the benchmark output).
    pub model: String,
    /// Config-level model prefix (`MODEL_PREFIX`), e.g. `qwen3.5`.
    pub infmax_model_prefix: String,
    pub framework: String,
    pub precision: String,
    /// Speculative decoding method, `none` when off.
    pub spec_decoding: String,
    pub disagg: bool,
    /// `RECIPE_FINGERPRINT`, empty when not set.
    pub recipe_fingerprint: String,
    pub isl: i64,
    pub osl: i64,
    pub router: Option<ComponentMetadata>,
    pub kv_p2p_transfer: Option<String>,
    pub topology: Topology,
    /// Total token throughput per GPU (tok/s).
    pub tput_per_gpu: f64,
    /// Output token throughput per (decode) GPU.
    pub output_tput_per_gpu: f64,
    /// Input token throughput per (prefill) GPU.
    pub input_tput_per_gpu: f64,
    /// Every other field, in document order: latencies in seconds
    /// (`mean_ttft`, `p99_e2el`, ...), interactivity (`median_intvty`, ...),
    /// `power_metric_schema_version`, `power_valid` and any energy fields.
    pub metrics: Map<String, Value>,
}

/// Keys the typed part of [`BenchmarkRow`] owns (never part of `metrics`).
const BENCHMARK_TYPED_KEYS: &[&str] = &[
    "hw",
    "conc",
    "image",
    "model",
    "infmax_model_prefix",
    "framework",
    "precision",
    "spec_decoding",
    "disagg",
    "recipe_fingerprint",
    "isl",
    "osl",
    "router",
    "kv_p2p_transfer",
    "is_multinode",
    "tp",
    "pp",
    "dcp_size",
    "pcp_size",
    "ep",
    "dp_attention",
    "prefill_tp",
    "prefill_pp",
    "prefill_dcp_size",
    "prefill_pcp_size",
    "prefill_ep",
    "prefill_dp_attention",
    "prefill_num_workers",
    "decode_tp",
    "decode_pp",
    "decode_dcp_size",
    "decode_pcp_size",
    "decode_ep",
    "decode_dp_attention",
    "decode_num_workers",
    "num_prefill_gpu",
    "num_decode_gpu",
    "tput_per_gpu",
    "output_tput_per_gpu",
    "input_tput_per_gpu",
    "prefill_hw",
    "decode_hw",
];

impl BenchmarkRow {
    /// The row as a JSON object in the reference's key order.
    pub fn to_map(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let s = |v: &str| Value::String(v.to_owned());
        m.insert("hw".into(), s(&self.hw));
        m.insert("conc".into(), self.conc.into());
        m.insert("image".into(), s(&self.image));
        m.insert("model".into(), s(&self.model));
        m.insert("infmax_model_prefix".into(), s(&self.infmax_model_prefix));
        m.insert("framework".into(), s(&self.framework));
        m.insert("precision".into(), s(&self.precision));
        m.insert("spec_decoding".into(), s(&self.spec_decoding));
        m.insert("disagg".into(), self.disagg.into());
        m.insert("recipe_fingerprint".into(), s(&self.recipe_fingerprint));
        m.insert("isl".into(), self.isl.into());
        m.insert("osl".into(), self.osl.into());
        if let Some(r) = &self.router {
            let mut o = Map::new();
            o.insert("name".into(), s(&r.name));
            o.insert("version".into(), s(&r.version));
            m.insert("router".into(), Value::Object(o));
        }
        if let Some(kv) = &self.kv_p2p_transfer {
            m.insert("kv_p2p_transfer".into(), s(kv));
        }
        let mut role_hw = None;
        match &self.topology {
            Topology::SingleNode(t) => {
                m.insert("is_multinode".into(), false.into());
                m.insert("tp".into(), t.tp.into());
                m.insert("pp".into(), t.pp.into());
                m.insert("dcp_size".into(), t.dcp_size.into());
                m.insert("pcp_size".into(), t.pcp_size.into());
                m.insert("ep".into(), t.ep.into());
                m.insert("dp_attention".into(), s(&t.dp_attention));
            }
            Topology::MultiNode(t) => {
                m.insert("is_multinode".into(), true.into());
                m.insert("prefill_tp".into(), t.prefill_tp.into());
                m.insert("prefill_pp".into(), t.prefill_pp.into());
                m.insert("prefill_dcp_size".into(), t.prefill_dcp_size.into());
                m.insert("prefill_pcp_size".into(), t.prefill_pcp_size.into());
                m.insert("prefill_ep".into(), t.prefill_ep.into());
                m.insert("prefill_dp_attention".into(), s(&t.prefill_dp_attention));
                m.insert("prefill_num_workers".into(), t.prefill_num_workers.into());
                m.insert("decode_tp".into(), t.decode_tp.into());
                m.insert("decode_pp".into(), t.decode_pp.into());
                m.insert("decode_dcp_size".into(), t.decode_dcp_size.into());
                m.insert("decode_pcp_size".into(), t.decode_pcp_size.into());
                m.insert("decode_ep".into(), t.decode_ep.into());
                m.insert("decode_dp_attention".into(), s(&t.decode_dp_attention));
                m.insert("decode_num_workers".into(), t.decode_num_workers.into());
                m.insert("num_prefill_gpu".into(), t.num_prefill_gpu.into());
                m.insert("num_decode_gpu".into(), t.num_decode_gpu.into());
                role_hw = Some((&t.prefill_hw, &t.decode_hw));
            }
        }
        m.insert("tput_per_gpu".into(), float(self.tput_per_gpu));
        m.insert(
            "output_tput_per_gpu".into(),
            float(self.output_tput_per_gpu),
        );
        m.insert("input_tput_per_gpu".into(), float(self.input_tput_per_gpu));
        if let Some((p, d)) = role_hw {
            if let Some(p) = p {
                m.insert("prefill_hw".into(), s(p));
            }
            if let Some(d) = d {
                m.insert("decode_hw".into(), s(d));
            }
        }
        for (k, v) in &self.metrics {
            m.insert(k.clone(), v.clone());
        }
        m
    }

    /// A numeric field by name: the per-GPU throughputs or any number in
    /// `metrics` (e.g. `median_ttft`, `p99_intvty`). `None` if absent or
    /// not a number.
    pub fn metric(&self, key: &str) -> Option<f64> {
        match key {
            "tput_per_gpu" => Some(self.tput_per_gpu),
            "output_tput_per_gpu" => Some(self.output_tput_per_gpu),
            "input_tput_per_gpu" => Some(self.input_tput_per_gpu),
            _ => self.metrics.get(key).and_then(Value::as_f64),
        }
    }

    /// Whether the row was produced by a multi-node job.
    pub fn is_multinode(&self) -> bool {
        matches!(self.topology, Topology::MultiNode(_))
    }
}

/// JSON number for a finite float; `null` otherwise (JSON has no NaN/inf).
fn float(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// Typed field access over a JSON object with errors naming the field.
struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn get(&self, k: &str, expected: &'static str) -> Result<&Value, RowError> {
        self.0.get(k).ok_or_else(|| RowError::Missing {
            field: k.to_owned(),
            expected,
        })
    }
    fn wrong(k: &str, expected: &'static str, v: &Value) -> RowError {
        RowError::WrongType {
            field: k.to_owned(),
            expected,
            found: crate::json_type::json_type_name(v).to_owned(),
        }
    }
    fn string(&self, k: &str) -> Result<String, RowError> {
        let v = self.get(k, "a string")?;
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| Self::wrong(k, "a string", v))
    }
    fn opt_string(&self, k: &str) -> Result<Option<String>, RowError> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.string(k).map(Some),
        }
    }
    fn int(&self, k: &str) -> Result<i64, RowError> {
        let v = self.get(k, "an integer")?;
        v.as_i64().ok_or_else(|| Self::wrong(k, "an integer", v))
    }
    fn int_or(&self, k: &str, default: i64) -> Result<i64, RowError> {
        if self.0.contains_key(k) {
            self.int(k)
        } else {
            Ok(default)
        }
    }
    fn float(&self, k: &str) -> Result<f64, RowError> {
        let v = self.get(k, "a number")?;
        v.as_f64().ok_or_else(|| Self::wrong(k, "a number", v))
    }
    fn bool(&self, k: &str) -> Result<bool, RowError> {
        let v = self.get(k, "a boolean")?;
        v.as_bool().ok_or_else(|| Self::wrong(k, "a boolean", v))
    }
}

impl TryFrom<Map<String, Value>> for BenchmarkRow {
    type Error = RowError;

    /// Reads a row. Fields introduced after the first agg format
    /// (`image`, `recipe_fingerprint`, `pp`, `dcp_size`, `pcp_size` and
    /// their role variants) default to `""` / `1` when absent.
    fn try_from(map: Map<String, Value>) -> Result<Self, RowError> {
        let f = Fields(&map);
        let router = match map.get("router") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                serde_json::from_value::<ComponentMetadata>(v.clone())
                    .map_err(|_| Fields::wrong("router", "an object with name and version", v))?,
            ),
        };
        let topology = if f.bool("is_multinode")? {
            Topology::MultiNode(MultiNodeTopology {
                prefill_tp: f.int("prefill_tp")?,
                prefill_pp: f.int_or("prefill_pp", 1)?,
                prefill_dcp_size: f.int_or("prefill_dcp_size", 1)?,
                prefill_pcp_size: f.int_or("prefill_pcp_size", 1)?,
                prefill_ep: f.int("prefill_ep")?,
                prefill_dp_attention: f.string("prefill_dp_attention")?,
                prefill_num_workers: f.int("prefill_num_workers")?,
                decode_tp: f.int("decode_tp")?,
                decode_pp: f.int_or("decode_pp", 1)?,
                decode_dcp_size: f.int_or("decode_dcp_size", 1)?,
                decode_pcp_size: f.int_or("decode_pcp_size", 1)?,
                decode_ep: f.int("decode_ep")?,
                decode_dp_attention: f.string("decode_dp_attention")?,
                decode_num_workers: f.int("decode_num_workers")?,
                num_prefill_gpu: f.int("num_prefill_gpu")?,
                num_decode_gpu: f.int("num_decode_gpu")?,
                prefill_hw: f.opt_string("prefill_hw")?,
                decode_hw: f.opt_string("decode_hw")?,
            })
        } else {
            Topology::SingleNode(SingleNodeTopology {
                tp: f.int("tp")?,
                pp: f.int_or("pp", 1)?,
                dcp_size: f.int_or("dcp_size", 1)?,
                pcp_size: f.int_or("pcp_size", 1)?,
                ep: f.int("ep")?,
                dp_attention: f.string("dp_attention")?,
            })
        };
        let row = BenchmarkRow {
            hw: f.string("hw")?,
            conc: f.int("conc")?,
            image: f.opt_string("image")?.unwrap_or_default(),
            model: f.string("model")?,
            infmax_model_prefix: f.string("infmax_model_prefix")?,
            framework: f.string("framework")?,
            precision: f.string("precision")?,
            spec_decoding: f.string("spec_decoding")?,
            disagg: f.bool("disagg")?,
            recipe_fingerprint: f.opt_string("recipe_fingerprint")?.unwrap_or_default(),
            isl: f.int("isl")?,
            osl: f.int("osl")?,
            router,
            kv_p2p_transfer: f.opt_string("kv_p2p_transfer")?,
            topology,
            tput_per_gpu: f.float("tput_per_gpu")?,
            output_tput_per_gpu: f.float("output_tput_per_gpu")?,
            input_tput_per_gpu: f.float("input_tput_per_gpu")?,
            metrics: Map::new(),
        };
        let metrics = map
            .into_iter()
            .filter(|(k, _)| !BENCHMARK_TYPED_KEYS.contains(&k.as_str()))
            .collect();
        Ok(BenchmarkRow { metrics, ..row })
    }
}

impl From<BenchmarkRow> for Map<String, Value> {
    fn from(row: BenchmarkRow) -> Self {
        row.to_map()
    }
}

/// The power fields `collect-results process` appends to a benchmark row
/// (spec `results.md` §3): the schema version, the verdict (`0`/`1`) and,
/// only when the verdict is `1`, the energy figures. Field order is the
/// written order: the seven whole-job figures, then (multi node) the
/// prefill and the decode figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PowerPart {
    pub power_metric_schema_version: i64,
    /// `1` when the energy figures below are valid, else `0`.
    pub power_valid: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_power_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_total_gpu_power_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_gpu_energy_j: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules_per_successful_query: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules_per_input_token: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules_per_output_token: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules_per_total_token: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_gpu_energy_j: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_avg_power_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_joules_per_input_token: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_gpu_energy_j: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_avg_power_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode_joules_per_output_token: Option<f64>,
}

impl PowerPart {
    /// Every key of the power part, in written order.
    pub const KEYS: &'static [&'static str] = &[
        "power_metric_schema_version",
        "power_valid",
        "avg_power_w",
        "avg_total_gpu_power_w",
        "total_gpu_energy_j",
        "joules_per_successful_query",
        "joules_per_input_token",
        "joules_per_output_token",
        "joules_per_total_token",
        "prefill_gpu_energy_j",
        "prefill_avg_power_w",
        "prefill_joules_per_input_token",
        "decode_gpu_energy_j",
        "decode_avg_power_w",
        "decode_joules_per_output_token",
    ];

    /// The energy figures: [`Self::KEYS`] after the schema version and the
    /// verdict.
    pub const ENERGY_KEYS: &'static [&'static str] = Self::KEYS.split_at(2).1;

    /// The energy figure named `key`, for setting it; `None` for a name
    /// that is not an energy figure of the power part.
    pub fn energy_mut(&mut self, key: &str) -> Option<&mut Option<f64>> {
        Some(match key {
            "avg_power_w" => &mut self.avg_power_w,
            "avg_total_gpu_power_w" => &mut self.avg_total_gpu_power_w,
            "total_gpu_energy_j" => &mut self.total_gpu_energy_j,
            "joules_per_successful_query" => &mut self.joules_per_successful_query,
            "joules_per_input_token" => &mut self.joules_per_input_token,
            "joules_per_output_token" => &mut self.joules_per_output_token,
            "joules_per_total_token" => &mut self.joules_per_total_token,
            "prefill_gpu_energy_j" => &mut self.prefill_gpu_energy_j,
            "prefill_avg_power_w" => &mut self.prefill_avg_power_w,
            "prefill_joules_per_input_token" => &mut self.prefill_joules_per_input_token,
            "decode_gpu_energy_j" => &mut self.decode_gpu_energy_j,
            "decode_avg_power_w" => &mut self.decode_avg_power_w,
            "decode_joules_per_output_token" => &mut self.decode_joules_per_output_token,
            _ => return None,
        })
    }
}

/// A benchmark result row as `collect-results process` writes it and
/// `aggregate` reads it: the [`BenchmarkRow`] followed by its optional
/// [`PowerPart`] (rows written before the power step existed have none).
///
/// Written as one flat object: the row's keys (metrics in document order),
/// then the power keys in [`PowerPart::KEYS`] order. Reading takes the
/// power keys out wherever they stand and the rest is the row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Map<String, Value>", into = "Map<String, Value>")]
pub struct ResultRow {
    pub row: BenchmarkRow,
    pub power: Option<PowerPart>,
}

impl ResultRow {
    /// The row as a JSON object: the benchmark row's keys, then the power
    /// part's.
    pub fn to_map(&self) -> Map<String, Value> {
        let mut m = self.row.to_map();
        if let Some(p) = &self.power
            && let Ok(Value::Object(pm)) = serde_json::to_value(p)
        {
            m.extend(pm);
        }
        m
    }

    /// Whether the row carries valid power figures (`power_valid` is 1).
    pub fn power_valid(&self) -> bool {
        self.power.as_ref().is_some_and(|p| p.power_valid == 1)
    }
}

impl TryFrom<Map<String, Value>> for ResultRow {
    type Error = RowError;

    fn try_from(mut map: Map<String, Value>) -> Result<Self, RowError> {
        let mut power = Map::new();
        for k in PowerPart::KEYS {
            if let Some(v) = map.shift_remove(*k) {
                power.insert((*k).to_owned(), v);
            }
        }
        let power = if power.is_empty() {
            None
        } else {
            let f = Fields(&power);
            let mut part = PowerPart {
                power_metric_schema_version: f.int("power_metric_schema_version")?,
                power_valid: f.int("power_valid")?,
                ..PowerPart::default()
            };
            for k in PowerPart::ENERGY_KEYS {
                let value = match power.get(*k) {
                    None | Some(Value::Null) => None,
                    Some(_) => Some(f.float(k)?),
                };
                if let Some(slot) = part.energy_mut(k) {
                    *slot = value;
                }
            }
            Some(part)
        };
        Ok(ResultRow {
            row: BenchmarkRow::try_from(map)?,
            power,
        })
    }
}

impl From<ResultRow> for Map<String, Value> {
    fn from(row: ResultRow) -> Self {
        row.to_map()
    }
}

/// One eval result (one task of one lm-eval result file): an element of
/// `agg_eval_<exp>.json`.
///
/// Metric fields are kept as the JSON values lm-eval wrote (normally
/// numbers, sometimes `"N/A"` for a standard error, `null` when absent);
/// use the `*_f64` helpers to read them as numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalRow {
    pub is_multinode: bool,
    /// `infmax_model_prefix` of `meta_env.json` (default `unknown`).
    pub model_prefix: String,
    pub model: String,
    /// Upper-cased runner type, e.g. `B200`.
    pub hw: String,
    /// Lower-cased.
    pub framework: String,
    /// Lower-cased.
    pub precision: String,
    pub spec_decoding: String,
    pub isl: i64,
    pub osl: i64,
    pub tp: i64,
    pub ep: i64,
    pub prefill_tp: i64,
    pub prefill_ep: i64,
    pub prefill_num_workers: i64,
    pub decode_tp: i64,
    pub decode_ep: i64,
    pub decode_num_workers: i64,
    pub conc: i64,
    /// Lower-cased; multi node with differing roles: `prefill=<p>,decode=<d>`.
    pub dp_attention: String,
    pub prefill_dp_attention: String,
    pub decode_dp_attention: String,
    /// lm-eval task name, e.g. `gsm8k`.
    pub task: String,
    pub em_strict: Value,
    pub em_strict_se: Value,
    pub em_flexible: Value,
    pub em_flexible_se: Value,
    /// `n-samples.<task>.effective`.
    pub n_eff: Value,
    /// Path of the lm-eval result file the row came from.
    pub source: String,
    /// Primary score: `em_strict` if present, else `accuracy`, else null.
    pub score: Value,
    /// `"em_strict"`, `"accuracy"` or null.
    pub score_name: Option<String>,
    pub score_se: Value,
}

impl EvalRow {
    /// `score` as a number, if it is one.
    pub fn score_f64(&self) -> Option<f64> {
        self.score.as_f64()
    }
    /// `score_se` as a number, if it is one.
    pub fn score_se_f64(&self) -> Option<f64> {
        self.score_se.as_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn single_node_json() -> Value {
        json!({
            "hw": "b200", "conc": 64, "image": "img:1", "model": "org/m",
            "infmax_model_prefix": "qwen3.5", "framework": "sglang", "precision": "fp4",
            "spec_decoding": "none", "disagg": false, "recipe_fingerprint": "",
            "isl": 8192, "osl": 1024, "is_multinode": false, "tp": 2, "pp": 1,
            "dcp_size": 1, "pcp_size": 1, "ep": 1, "dp_attention": "false",
            "tput_per_gpu": 10.5, "output_tput_per_gpu": 1.5, "input_tput_per_gpu": 9.0,
            "mean_ttft": 0.25, "mean_intvty": 40.0,
            "power_metric_schema_version": 2, "power_valid": 0
        })
    }

    #[test]
    fn result_row_takes_power_keys_out_of_metrics_and_writes_them_last() {
        let mut v = single_node_json();
        let m = v.as_object_mut().expect("object");
        // Power keys before a latency in the file: read into the power part,
        // written after the row in the power part's order.
        m.shift_remove("mean_intvty");
        m.insert("power_valid".into(), json!(1));
        m.insert("joules_per_total_token".into(), json!(0.5));
        m.insert("avg_power_w".into(), json!(600.0));
        m.insert("mean_intvty".into(), json!(40.0));
        let row: ResultRow = serde_json::from_value(v).expect("row");
        assert!(row.power_valid());
        let power = row.power.as_ref().expect("power part");
        assert_eq!(power.power_metric_schema_version, 2);
        assert_eq!(power.avg_power_w, Some(600.0));
        assert_eq!(row.row.metrics.get("power_valid"), None);
        let keys: Vec<String> = row.to_map().keys().rev().take(6).cloned().collect();
        assert_eq!(
            keys,
            [
                "joules_per_total_token",
                "avg_power_w",
                "power_valid",
                "power_metric_schema_version",
                "mean_intvty",
                "mean_ttft"
            ]
        );
    }

    #[test]
    fn result_row_without_power_keys_has_no_power_part() {
        let mut v = single_node_json();
        let m = v.as_object_mut().expect("object");
        m.shift_remove("power_valid");
        m.shift_remove("power_metric_schema_version");
        let row: ResultRow = serde_json::from_value(v.clone()).expect("row");
        assert_eq!(row.power, None);
        assert!(!row.power_valid());
        assert_eq!(serde_json::to_value(&row).expect("ser"), v);
        let mut bad = single_node_json();
        bad["power_valid"] = json!("1");
        let err = serde_json::from_value::<ResultRow>(bad).expect_err("mistyped verdict");
        assert_eq!(
            err.to_string(),
            "field 'power_valid' must be an integer, found a string"
        );
    }

    #[test]
    fn single_node_row_round_trips_with_key_order() {
        let v = single_node_json();
        let row: BenchmarkRow = serde_json::from_value(v.clone()).expect("row");
        assert_eq!(row.metric("mean_ttft"), Some(0.25));
        assert_eq!(row.metric("tput_per_gpu"), Some(10.5));
        assert!(!row.is_multinode());
        let back = serde_json::to_value(&row).expect("ser");
        assert_eq!(
            serde_json::to_string(&back).expect("s"),
            serde_json::to_string(&v).expect("s")
        );
    }

    #[test]
    fn multi_node_row_keeps_role_hardware_after_throughput() {
        let mut v = single_node_json();
        let o = v.as_object_mut().expect("object");
        for k in ["tp", "pp", "dcp_size", "pcp_size", "ep", "dp_attention"] {
            o.remove(k);
        }
        o.insert("is_multinode".into(), true.into());
        for (k, val) in [
            ("prefill_tp", json!(4)),
            ("prefill_ep", json!(4)),
            ("prefill_dp_attention", json!("true")),
            ("prefill_num_workers", json!(1)),
            ("decode_tp", json!(8)),
            ("decode_ep", json!(8)),
            ("decode_dp_attention", json!("true")),
            ("decode_num_workers", json!(1)),
            ("num_prefill_gpu", json!(4)),
            ("num_decode_gpu", json!(8)),
            ("prefill_hw", json!("gb200")),
            ("decode_hw", json!("gb300")),
        ] {
            o.insert(k.into(), val);
        }
        let row: BenchmarkRow = serde_json::from_value(v).expect("row");
        let Topology::MultiNode(t) = &row.topology else {
            panic!("expected multi node")
        };
        assert_eq!(t.prefill_pp, 1, "absent sizes default to 1");
        assert_eq!(t.decode_hw.as_deref(), Some("gb300"));
        let keys: Vec<_> = row.to_map().keys().cloned().collect();
        let pos = |k: &str| keys.iter().position(|x| x == k).expect("key");
        assert!(pos("input_tput_per_gpu") < pos("prefill_hw"));
        assert!(pos("decode_hw") < pos("mean_ttft"));
    }

    #[test]
    fn missing_or_mistyped_fields_are_named() {
        let mut v = single_node_json();
        v.as_object_mut().expect("object").remove("tp");
        let err = serde_json::from_value::<BenchmarkRow>(v).expect_err("must fail");
        assert!(
            err.to_string()
                .contains("field 'tp' is missing (expected an integer)"),
            "{err}"
        );
        let mut v = single_node_json();
        v["conc"] = json!("64");
        let err = serde_json::from_value::<BenchmarkRow>(v).expect_err("must fail");
        assert!(
            err.to_string().contains("'conc' must be an integer"),
            "{err}"
        );
    }

    #[test]
    fn eval_row_keeps_non_numeric_metric_values() {
        let v = json!({
            "is_multinode": false, "model_prefix": "dsr1", "model": "m", "hw": "B200",
            "framework": "sglang", "precision": "fp8", "spec_decoding": "none",
            "isl": 1024, "osl": 1024, "tp": 8, "ep": 1, "prefill_tp": 8, "prefill_ep": 1,
            "prefill_num_workers": 1, "decode_tp": 8, "decode_ep": 1, "decode_num_workers": 1,
            "conc": 32, "dp_attention": "false", "prefill_dp_attention": "false",
            "decode_dp_attention": "false", "task": "gsm8k", "em_strict": 0.95,
            "em_strict_se": "N/A", "em_flexible": null, "em_flexible_se": null,
            "n_eff": 1319, "source": "r/results.json", "score": 0.95,
            "score_name": "em_strict", "score_se": "N/A"
        });
        let row: EvalRow = serde_json::from_value(v.clone()).expect("row");
        assert_eq!(row.score_f64(), Some(0.95));
        assert_eq!(row.score_se_f64(), None);
        assert_eq!(serde_json::to_value(&row).expect("ser"), v);
    }
}
