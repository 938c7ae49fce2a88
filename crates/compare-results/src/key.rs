//! The normalised point key (spec `results.md` §8.3): one identity for a
//! benchmark point whether it comes from an `agg_bmk.json` row, a row of the
//! public benchmarks API or the InferenceX database. Matching, grouping and
//! sorting all go through [`PointKey`], so the three baseline sources agree.

use serde_json::{Map, Value};
use sweep_model::results::{BenchmarkRow, ResultRow, Topology as RowTopology};

use crate::CompareError;

/// Model keys the published API knows; a prefix such as `dsr1-fp4` is cut
/// back to one of these.
const KNOWN_MODELS: &[&str] = &[
    "dsr1",
    "dsv4",
    "gptoss120b",
    "llama70b",
    "qwen3.5",
    "kimik2.5",
    "minimaxm2.5",
    "glm5",
    "glm5.1",
];

/// Runner-name suffixes removed, in this order, to get the hardware key.
const HW_SUFFIXES: &[&str] = &[
    "-trt",
    "-multinode-slurm",
    "-multinode",
    "-nvs",
    "-disagg",
    "-amds",
    "-amd",
    "-nvd",
    "-dgxc-slurm",
    "-dgxc",
    "-nb",
    "-nv",
];

/// Where a row came from, for error messages: `path` (and `[index]` when the
/// file holds an array).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub path: String,
    pub index: Option<usize>,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}[{i}]", self.path),
            None => write!(f, "{}", self.path),
        }
    }
}

/// Parallelism of one role (multi-node prefill or decode).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Role {
    pub tp: i64,
    pub ep: i64,
    pub dp_attention: bool,
    pub num_workers: i64,
}

/// Topology part of the key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Topology {
    Single {
        tp: i64,
        ep: i64,
        dp_attention: bool,
        pp: i64,
        dcp_size: i64,
        pcp_size: i64,
    },
    Multi {
        prefill: Role,
        decode: Role,
        num_prefill_gpu: i64,
        num_decode_gpu: i64,
    },
}

/// The configuration a table groups by: everything but topology and
/// concurrency.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupKey {
    pub model: String,
    pub hw: String,
    pub framework: String,
    pub precision: String,
    pub spec: String,
    pub isl: i64,
    pub osl: i64,
    pub is_multinode: bool,
    pub disagg: bool,
}

/// Identity of one benchmark point. The derived order is the report order:
/// group fields, then topology (TP, EP, …), then concurrency.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PointKey {
    pub group: GroupKey,
    pub topology: Topology,
    pub conc: i64,
}

/// Names of the key fields as they appear in the JSON output (single node
/// first, then the multi-node topology fields).
pub const MATCH_KEY_FIELDS: &[&str] = &[
    "model_prefix",
    "hw",
    "framework",
    "precision",
    "spec_decoding",
    "isl",
    "osl",
    "tp",
    "ep",
    "dp_attention",
    "conc",
    "disagg",
    "is_multinode",
    "pp",
    "dcp_size",
    "pcp_size",
    "prefill_tp",
    "prefill_ep",
    "prefill_dp_attention",
    "prefill_num_workers",
    "decode_tp",
    "decode_ep",
    "decode_dp_attention",
    "decode_num_workers",
    "num_prefill_gpu",
    "num_decode_gpu",
];

impl PointKey {
    /// The key as JSON fields, in a stable order (used for points,
    /// unmatched lists, duplicates and regressions).
    pub fn to_fields(&self) -> Map<String, Value> {
        let g = &self.group;
        let mut m = Map::new();
        m.insert("model_prefix".into(), g.model.clone().into());
        m.insert("hw".into(), g.hw.clone().into());
        m.insert("framework".into(), g.framework.clone().into());
        m.insert("precision".into(), g.precision.clone().into());
        m.insert("spec_decoding".into(), g.spec.clone().into());
        m.insert("disagg".into(), g.disagg.into());
        m.insert("is_multinode".into(), g.is_multinode.into());
        m.insert("isl".into(), g.isl.into());
        m.insert("osl".into(), g.osl.into());
        match &self.topology {
            Topology::Single {
                tp,
                ep,
                dp_attention,
                pp,
                dcp_size,
                pcp_size,
            } => {
                m.insert("tp".into(), (*tp).into());
                m.insert("ep".into(), (*ep).into());
                // Agg rows carry dp_attention as a string; keep that shape.
                m.insert("dp_attention".into(), dp_attention.to_string().into());
                m.insert("pp".into(), (*pp).into());
                m.insert("dcp_size".into(), (*dcp_size).into());
                m.insert("pcp_size".into(), (*pcp_size).into());
            }
            Topology::Multi {
                prefill,
                decode,
                num_prefill_gpu,
                num_decode_gpu,
            } => {
                for (name, r) in [("prefill", prefill), ("decode", decode)] {
                    m.insert(format!("{name}_tp"), r.tp.into());
                    m.insert(format!("{name}_ep"), r.ep.into());
                    m.insert(
                        format!("{name}_dp_attention"),
                        r.dp_attention.to_string().into(),
                    );
                    m.insert(format!("{name}_num_workers"), r.num_workers.into());
                }
                m.insert("num_prefill_gpu".into(), (*num_prefill_gpu).into());
                m.insert("num_decode_gpu".into(), (*num_decode_gpu).into());
            }
        }
        m.insert("conc".into(), self.conc.into());
        m
    }

    /// Short human label of the topology and concurrency, e.g.
    /// `TP2 EP1 conc 64` or `P TP4/EP4 ×1, D TP8/EP8 ×2, conc 256`.
    pub fn label(&self) -> String {
        format!("{}, conc {}", self.topology.label(), self.conc)
    }
}

impl Topology {
    /// `TP2 EP1` (with `DPA`, `PP2`, `DCP2`, `PCP2` only when not default),
    /// or the prefill/decode form for multi node.
    pub fn label(&self) -> String {
        match self {
            Topology::Single {
                tp,
                ep,
                dp_attention,
                pp,
                dcp_size,
                pcp_size,
            } => {
                let mut s = format!("TP{tp} EP{ep}");
                if *dp_attention {
                    s.push_str(" DPA");
                }
                for (n, v) in [("PP", pp), ("DCP", dcp_size), ("PCP", pcp_size)] {
                    if *v != 1 {
                        s.push_str(&format!(" {n}{v}"));
                    }
                }
                s
            }
            Topology::Multi {
                prefill, decode, ..
            } => {
                let role = |n: &str, r: &Role| {
                    format!(
                        "{n} TP{}/EP{}{} ×{}",
                        r.tp,
                        r.ep,
                        if r.dp_attention { " DPA" } else { "" },
                        r.num_workers
                    )
                };
                format!("{}, {}", role("P", prefill), role("D", decode))
            }
        }
    }
}

impl GroupKey {
    /// Table heading: `qwen3.5 fp4 b200 sglang, 8k1k (spec: none)`.
    pub fn title(&self) -> String {
        let mut s = format!(
            "{} {} {} {}, {} (spec: {})",
            self.model,
            self.precision,
            self.hw,
            self.framework,
            seq_label(self.isl, self.osl),
            self.spec
        );
        if self.is_multinode {
            s.push_str(if self.disagg {
                ", multi-node disaggregated"
            } else {
                ", multi-node"
            });
        } else if self.disagg {
            s.push_str(", disaggregated");
        }
        s
    }
}

/// `8k1k`-style name of an ISL/OSL pair (the reference's `EXP_NAME` rule).
pub fn seq_label(isl: i64, osl: i64) -> String {
    match (isl, osl) {
        (1024, 1024) => "1k1k".into(),
        (1024, 8192) => "1k8k".into(),
        (8192, 1024) => "8k1k".into(),
        _ => format!("{isl}_{osl}"),
    }
}

/// Model key from an `infmax_model_prefix`.
pub fn normalise_model(prefix: &str) -> String {
    let lower = prefix.trim().to_lowercase();
    if lower == "gptoss" {
        return "gptoss120b".into();
    }
    for suffix in ["-fp4", "-fp8", "-mxfp4", "-nvfp4"] {
        if let Some(pos) = lower.find(suffix) {
            let head = &lower[..pos];
            let head = if head == "gptoss" { "gptoss120b" } else { head };
            if KNOWN_MODELS.contains(&head) {
                return head.into();
            }
        }
    }
    lower
}

/// Hardware key from a runner name or label (`b200-dgxc_03` -> `b200`).
pub fn normalise_hw(hw: &str) -> String {
    let mut s = hw.trim().to_lowercase();
    if let Some(pos) = s.rfind('_') {
        let tail = &s[pos + 1..];
        if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) {
            s.truncate(pos);
        }
    }
    for suffix in HW_SUFFIXES {
        if let Some(stripped) = s.strip_suffix(suffix) {
            s = stripped.to_string();
        }
    }
    s
}

/// Canonical framework name and whether the alias implies disaggregation.
pub fn normalise_framework(fw: &str) -> (String, bool) {
    let lower = fw.trim().to_lowercase();
    match lower.as_str() {
        "sglang-disagg" => ("mori-sglang".into(), true),
        "trtllm" => ("trt".into(), false),
        "dynamo-trtllm" => ("dynamo-trt".into(), false),
        _ => (lower, false),
    }
}

/// Lower-case precision with `nvfp4`/`mxfp4` folded into `fp4`.
pub fn normalise_precision(p: &str) -> String {
    let lower = p.trim().to_lowercase();
    match lower.as_str() {
        "nvfp4" | "mxfp4" => "fp4".into(),
        _ => lower,
    }
}

/// Lower-case speculative-decoding method, empty meaning `none`.
pub fn normalise_spec(s: &str) -> String {
    let lower = s.trim().to_lowercase();
    if lower.is_empty() {
        "none".into()
    } else {
        lower
    }
}

/// Typed access to the fields of one JSON row, with errors that name the
/// row and key.
pub(crate) struct Fields<'a> {
    pub(crate) map: &'a Map<String, Value>,
    pub(crate) origin: &'a Origin,
}

impl Fields<'_> {
    fn err(&self, key: &str, cause: impl Into<String>) -> CompareError {
        CompareError::Row {
            origin: self.origin.to_string(),
            key: key.to_string(),
            cause: cause.into(),
        }
    }

    pub(crate) fn str_req(&self, key: &str) -> Result<String, CompareError> {
        match self.map.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Null) | None => Err(self.err(key, "missing")),
            Some(v) => Err(self.err(key, format!("expected a string, found {v}"))),
        }
    }

    pub(crate) fn str_opt(&self, key: &str) -> Result<Option<String>, CompareError> {
        match self.map.get(key) {
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Null) | None => Ok(None),
            Some(v) => Err(self.err(key, format!("expected a string, found {v}"))),
        }
    }

    pub(crate) fn int_req(&self, key: &str) -> Result<i64, CompareError> {
        self.int_opt(key)?.ok_or_else(|| self.err(key, "missing"))
    }

    pub(crate) fn int_opt(&self, key: &str) -> Result<Option<i64>, CompareError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => value_to_int(v)
                .map(Some)
                .ok_or_else(|| self.err(key, format!("expected an integer, found {v}"))),
        }
    }

    pub(crate) fn bool_opt(&self, key: &str) -> Result<Option<bool>, CompareError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            // The reference's parse_bool: anything but "true" (any case) is false.
            Some(Value::String(s)) => Ok(Some(s.trim().eq_ignore_ascii_case("true"))),
            Some(v) => Err(self.err(key, format!("expected a boolean, found {v}"))),
        }
    }
}

/// Integer from a JSON number (integral floats accepted) or numeric string.
pub(crate) fn value_to_int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && f.fract() == 0.0)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    }
}

/// Metric value: a finite number, or a numeric string.
pub fn metric_value(v: Option<&Value>) -> Option<f64> {
    let f = match v? {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    f.is_finite().then_some(f)
}

/// An `agg_bmk.json` row read as the type `collect-results process` writes
/// ([`ResultRow`]: the benchmark row and its power part).
///
/// # Errors
/// A field of the row or of its power part is missing or mistyped; the
/// error names the row's origin and the field.
pub fn read_agg_row(map: &Map<String, Value>, origin: &Origin) -> Result<ResultRow, CompareError> {
    ResultRow::try_from(map.clone()).map_err(|e| CompareError::BadRow {
        origin: origin.to_string(),
        cause: e.to_string(),
    })
}

/// Key of an `agg_bmk.json` row (spec §8.3, left column), read through the
/// shared [`ResultRow`] type.
pub fn key_from_agg(map: &Map<String, Value>, origin: &Origin) -> Result<PointKey, CompareError> {
    Ok(key_from_row(&read_agg_row(map, origin)?.row))
}

/// `true` for the reference's string booleans (`"true"` in any case).
fn truthy(s: &str) -> bool {
    s.trim().eq_ignore_ascii_case("true")
}

/// Key of a typed benchmark row.
pub fn key_from_row(row: &BenchmarkRow) -> PointKey {
    let (framework, alias_disagg) = normalise_framework(&row.framework);
    let is_multinode = row.is_multinode();
    let group = GroupKey {
        model: normalise_model(&row.infmax_model_prefix),
        hw: normalise_hw(&row.hw),
        framework,
        precision: normalise_precision(&row.precision),
        spec: normalise_spec(&row.spec_decoding),
        isl: row.isl,
        osl: row.osl,
        is_multinode,
        disagg: row.disagg || alias_disagg,
    };
    let topology = match &row.topology {
        RowTopology::SingleNode(t) => Topology::Single {
            tp: t.tp,
            ep: t.ep,
            dp_attention: truthy(&t.dp_attention),
            pp: t.pp,
            dcp_size: t.dcp_size,
            pcp_size: t.pcp_size,
        },
        RowTopology::MultiNode(t) => Topology::Multi {
            prefill: Role {
                tp: t.prefill_tp,
                ep: t.prefill_ep,
                dp_attention: truthy(&t.prefill_dp_attention),
                num_workers: t.prefill_num_workers,
            },
            decode: Role {
                tp: t.decode_tp,
                ep: t.decode_ep,
                dp_attention: truthy(&t.decode_dp_attention),
                num_workers: t.decode_num_workers,
            },
            num_prefill_gpu: t.num_prefill_gpu,
            num_decode_gpu: t.num_decode_gpu,
        },
    };
    PointKey {
        group,
        topology,
        conc: row.conc,
    }
}

/// Key of a benchmarks-API row (spec §8.3, right column). Topology sizes
/// that are not columns (PP, DCP, PCP) come from the row's `metrics`.
pub fn key_from_api(map: &Map<String, Value>, origin: &Origin) -> Result<PointKey, CompareError> {
    let f = Fields { map, origin };
    let empty = Map::new();
    let metrics = match map.get("metrics") {
        Some(Value::Object(m)) => m,
        _ => &empty,
    };
    let mf = Fields {
        map: metrics,
        origin,
    };
    let (framework, alias_disagg) = normalise_framework(&f.str_req("framework")?);
    let is_multinode = f.bool_opt("is_multinode")?.unwrap_or(false);
    let group = GroupKey {
        model: f.str_req("model")?.to_lowercase(),
        hw: normalise_hw(&f.str_req("hardware")?),
        framework,
        precision: normalise_precision(&f.str_req("precision")?),
        spec: normalise_spec(&f.str_opt("spec_method")?.unwrap_or_default()),
        isl: f.int_req("isl")?,
        osl: f.int_req("osl")?,
        is_multinode,
        disagg: f.bool_opt("disagg")?.unwrap_or(false) || alias_disagg,
    };
    let topology = if is_multinode {
        let role = |p: &str| -> Result<Role, CompareError> {
            Ok(Role {
                tp: f.int_req(&format!("{p}_tp"))?,
                ep: f.int_req(&format!("{p}_ep"))?,
                dp_attention: f.bool_opt(&format!("{p}_dp_attention"))?.unwrap_or(false),
                num_workers: f.int_opt(&format!("{p}_num_workers"))?.unwrap_or(1),
            })
        };
        Topology::Multi {
            prefill: role("prefill")?,
            decode: role("decode")?,
            num_prefill_gpu: f.int_req("num_prefill_gpu")?,
            num_decode_gpu: f.int_req("num_decode_gpu")?,
        }
    } else {
        Topology::Single {
            tp: f.int_req("prefill_tp")?,
            ep: f.int_req("prefill_ep")?,
            dp_attention: f.bool_opt("prefill_dp_attention")?.unwrap_or(false),
            pp: mf.int_opt("pp")?.unwrap_or(1),
            dcp_size: mf.int_opt("dcp_size")?.unwrap_or(1),
            pcp_size: mf.int_opt("pcp_size")?.unwrap_or(1),
        }
    };
    Ok(PointKey {
        group,
        topology,
        conc: f.int_req("conc")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn origin() -> Origin {
        Origin {
            path: "agg_bmk.json".into(),
            index: Some(3),
        }
    }

    #[test]
    fn hardware_suffixes_are_stripped_in_sequence() {
        assert_eq!(normalise_hw("b200-dgxc_03"), "b200");
        assert_eq!(normalise_hw("B200-NB_1"), "b200");
        assert_eq!(normalise_hw("gb200-multinode-slurm"), "gb200");
        assert_eq!(normalise_hw("mi355x-amds_12"), "mi355x");
        assert_eq!(normalise_hw("h100-trt"), "h100");
        assert_eq!(normalise_hw("b200"), "b200");
        // Only a trailing all-digit part after '_' is a node number.
        assert_eq!(normalise_hw("b200_x1"), "b200_x1");
    }

    #[test]
    fn model_prefixes_map_to_api_keys() {
        assert_eq!(normalise_model("gptoss"), "gptoss120b");
        assert_eq!(normalise_model("DSR1-fp4-mtp"), "dsr1");
        assert_eq!(normalise_model("qwen3.5"), "qwen3.5");
        // Unknown heads are kept whole.
        assert_eq!(normalise_model("newmodel-fp8"), "newmodel-fp8");
    }

    #[test]
    fn framework_aliases_can_force_disagg() {
        assert_eq!(
            normalise_framework("SGLang-Disagg"),
            ("mori-sglang".into(), true)
        );
        assert_eq!(normalise_framework("trtllm"), ("trt".into(), false));
        assert_eq!(normalise_precision("NVFP4"), "fp4");
        assert_eq!(normalise_spec(""), "none");
    }

    #[test]
    fn agg_and_api_rows_of_one_point_share_a_key() {
        let agg = json!({"hw": "b200-dgxc_03", "infmax_model_prefix": "qwen3.5", "framework": "sglang",
            "model": "org/m", "precision": "fp4", "spec_decoding": "none", "disagg": false, "isl": 8192,
            "osl": 1024, "is_multinode": false, "tp": 2, "pp": 1, "ep": 1, "dp_attention": "false",
            "conc": 64, "tput_per_gpu": 1.0, "output_tput_per_gpu": 1.0, "input_tput_per_gpu": 0.0});
        let api = json!({"hardware": "b200", "model": "qwen3.5", "framework": "sglang", "precision": "fp4",
            "spec_method": "none", "disagg": false, "is_multinode": false, "prefill_tp": 2, "prefill_ep": 1,
            "prefill_dp_attention": false, "decode_tp": 2, "decode_ep": 1, "decode_dp_attention": false,
            "isl": 8192, "osl": 1024, "conc": 64, "metrics": {"pp": 1, "tput_per_gpu": 1.0}});
        let a = key_from_agg(agg.as_object().expect("obj"), &origin()).expect("agg key");
        let b = key_from_api(api.as_object().expect("obj"), &origin()).expect("api key");
        assert_eq!(a, b);
        assert_eq!(a.label(), "TP2 EP1, conc 64");
        assert_eq!(
            a.group.title(),
            "qwen3.5 fp4 b200 sglang, 8k1k (spec: none)"
        );
    }

    /// An agg row is read as the row `collect-results process` writes
    /// (`ResultRow`): its power part is typed too, so a verdict that is
    /// not an integer is refused, naming the field.
    #[test]
    fn agg_row_power_fields_are_read_as_the_typed_power_part() {
        let mut row = json!({"hw": "b200", "infmax_model_prefix": "x", "framework": "f",
            "precision": "p", "model": "m", "spec_decoding": "none", "disagg": false,
            "is_multinode": false, "isl": 1, "osl": 1, "tp": 1, "ep": 1, "dp_attention": "false",
            "conc": 1, "tput_per_gpu": 1.0, "output_tput_per_gpu": 1.0, "input_tput_per_gpu": 0.0,
            "power_metric_schema_version": 2, "power_valid": 1, "avg_power_w": 500.0});
        key_from_agg(row.as_object().expect("obj"), &origin()).expect("a valid power part");
        row["power_valid"] = json!("yes");
        let e = key_from_agg(row.as_object().expect("obj"), &origin()).expect_err("bad verdict");
        assert_eq!(
            e.to_string(),
            "agg_bmk.json[3]: field 'power_valid' must be an integer, found a string"
        );
    }

    #[test]
    fn errors_name_row_and_key() {
        let row = json!({"hw": "b200", "infmax_model_prefix": "x", "framework": "f", "precision": "p",
            "model": "m", "spec_decoding": "none", "disagg": false, "is_multinode": false,
            "isl": "eighty", "osl": 1, "tp": 1, "ep": 1, "dp_attention": "false", "conc": 1,
            "tput_per_gpu": 1.0, "output_tput_per_gpu": 1.0, "input_tput_per_gpu": 0.0});
        let e = key_from_agg(row.as_object().expect("obj"), &origin()).expect_err("bad isl");
        assert_eq!(
            e.to_string(),
            "agg_bmk.json[3]: field 'isl' must be an integer, found a string"
        );
        let api = json!({"hardware": "b200", "model": "m", "framework": "f", "precision": "p",
            "is_multinode": false, "prefill_tp": 1, "prefill_ep": 1, "isl": 1, "osl": 1});
        let e = key_from_api(api.as_object().expect("obj"), &origin()).expect_err("no conc");
        assert_eq!(e.to_string(), "agg_bmk.json[3]: key 'conc': missing");
    }

    #[test]
    fn multi_node_rows_key_on_both_roles() {
        let agg = json!({"hw": "gb200-multinode-slurm_2", "infmax_model_prefix": "dsr1-fp4",
            "framework": "dynamo-trtllm", "model": "m", "precision": "NVFP4", "spec_decoding": "",
            "disagg": true, "isl": 1024, "osl": 8192, "is_multinode": true, "prefill_tp": 4,
            "prefill_ep": 4, "prefill_dp_attention": "true", "prefill_num_workers": 2,
            "decode_tp": 8, "decode_ep": 8, "decode_dp_attention": "false", "decode_num_workers": 1,
            "num_prefill_gpu": 8, "num_decode_gpu": 8, "conc": 512,
            "tput_per_gpu": 1.0, "output_tput_per_gpu": 1.0, "input_tput_per_gpu": 1.0});
        let k = key_from_agg(agg.as_object().expect("obj"), &origin()).expect("key");
        assert_eq!(k.group.hw, "gb200");
        assert_eq!(k.group.model, "dsr1");
        assert_eq!(k.group.framework, "dynamo-trt");
        assert_eq!(k.group.precision, "fp4");
        assert_eq!(k.group.spec, "none");
        assert_eq!(k.label(), "P TP4/EP4 DPA ×2, D TP8/EP8 ×1, conc 512");
        assert_eq!(
            k.group.title(),
            "dsr1 fp4 gb200 dynamo-trt, 1k8k (spec: none), multi-node disaggregated"
        );
        let f = k.to_fields();
        assert_eq!(f["prefill_dp_attention"], "true");
        assert_eq!(f["num_decode_gpu"], 8);
        assert!(!f.contains_key("tp"));
    }
}
