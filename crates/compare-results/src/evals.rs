//! Eval rows in the report (spec `results.md` §8.4, "Evals in the
//! report"): rows of `agg_eval_all.json`, each with its pass/fail against
//! the validate-scores thresholds (`models.<prefix>.<task>` >
//! `default.<task>` > none) and, when baseline evals are given, a flag for
//! a strict-match drop larger than twice the combined standard error.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::CompareError;
use sweep_model::results::EvalRow as SharedEvalRow;

use crate::key::{
    GroupKey, PointKey, Role, Topology, metric_value, normalise_framework, normalise_hw,
    normalise_model, normalise_precision, normalise_spec,
};

/// A threshold and where it came from (`models.<prefix>` or `default`).
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub value: f64,
    pub source: String,
}

/// Threshold tables as in `utils/evals/thresholds.yaml`.
#[derive(Debug, Clone, Default)]
pub struct Thresholds {
    default: Map<String, Value>,
    models: Map<String, Value>,
}

impl Thresholds {
    /// From the parsed file: `{default: {task: x}, models: {prefix: {task:
    /// x}}}`; a mapping with neither key is the default table itself.
    pub fn from_value(v: &Value, path: &str) -> Result<Self, CompareError> {
        let Value::Object(m) = v else {
            return Err(CompareError::Policy(format!(
                "{path}: thresholds must be a mapping"
            )));
        };
        let table = |k: &str| match m.get(k) {
            Some(Value::Object(t)) => t.clone(),
            _ => Map::new(),
        };
        if m.contains_key("default") || m.contains_key("models") {
            Ok(Self {
                default: table("default"),
                models: table("models"),
            })
        } else {
            Ok(Self {
                default: m.clone(),
                models: Map::new(),
            })
        }
    }

    pub fn lookup(&self, prefix: &str, task: &str) -> Option<Threshold> {
        if let Some(v) = self
            .models
            .get(prefix)
            .and_then(|t| t.get(task))
            .and_then(|v| metric_value(Some(v)))
        {
            return Some(Threshold {
                value: v,
                source: format!("models.{prefix}"),
            });
        }
        metric_value(self.default.get(task)).map(|value| Threshold {
            value,
            source: "default".into(),
        })
    }
}

/// One eval row, normalised.
#[derive(Debug, Clone)]
pub struct EvalRow {
    pub key: PointKey,
    pub model_prefix: String,
    pub task: String,
    pub raw: Map<String, Value>,
    pub em_strict: Option<f64>,
    pub em_strict_se: Option<f64>,
    pub em_flexible: Option<f64>,
    pub em_flexible_se: Option<f64>,
    pub threshold: Option<Threshold>,
    pub baseline: Option<BaselineEval>,
}

/// The matching baseline row's strict score and whether the drop is
/// significant.
#[derive(Debug, Clone)]
pub struct BaselineEval {
    pub em_strict: Option<f64>,
    pub em_strict_se: Option<f64>,
    pub significant_drop: bool,
}

impl EvalRow {
    /// `Some(true)` when the strict score (or, lacking one, the flexible
    /// score) meets the threshold; `None` without a threshold or score.
    pub fn pass(&self) -> Option<bool> {
        let t = self.threshold.as_ref()?;
        let score = self.em_strict.or(self.em_flexible)?;
        Some(score >= t.value)
    }
}

/// `true` for the collector's string booleans.
fn truthy(s: &str) -> bool {
    s.trim().eq_ignore_ascii_case("true")
}

/// Normalises the rows of an `agg_eval_all.json`, read through the shared
/// [`sweep_model::results::EvalRow`] type.
pub fn eval_rows(
    objects: crate::load::Objects,
    thresholds: Option<&Thresholds>,
) -> Result<Vec<EvalRow>, CompareError> {
    objects
        .into_iter()
        .map(|(m, origin)| {
            let r: SharedEvalRow =
                serde_json::from_value(Value::Object(m.clone())).map_err(|e| {
                    CompareError::BadRow {
                        origin: origin.to_string(),
                        cause: format!("not an eval row: {e}"),
                    }
                })?;
            let (framework, alias_disagg) = normalise_framework(&r.framework);
            let group = GroupKey {
                model: normalise_model(&r.model_prefix),
                hw: normalise_hw(&r.hw),
                framework,
                precision: normalise_precision(&r.precision),
                spec: normalise_spec(&r.spec_decoding),
                isl: r.isl,
                osl: r.osl,
                is_multinode: r.is_multinode,
                disagg: alias_disagg || m.get("disagg").and_then(Value::as_bool).unwrap_or(false),
            };
            let topology = if r.is_multinode {
                // Eval rows carry no GPU counts; 0 on both sides keeps keys comparable.
                Topology::Multi {
                    prefill: Role {
                        tp: r.prefill_tp,
                        ep: r.prefill_ep,
                        dp_attention: truthy(&r.prefill_dp_attention),
                        num_workers: r.prefill_num_workers,
                    },
                    decode: Role {
                        tp: r.decode_tp,
                        ep: r.decode_ep,
                        dp_attention: truthy(&r.decode_dp_attention),
                        num_workers: r.decode_num_workers,
                    },
                    num_prefill_gpu: 0,
                    num_decode_gpu: 0,
                }
            } else {
                Topology::Single {
                    tp: r.tp,
                    ep: r.ep,
                    dp_attention: truthy(&r.dp_attention),
                    pp: 1,
                    dcp_size: 1,
                    pcp_size: 1,
                }
            };
            let key = PointKey {
                group,
                topology,
                conc: r.conc,
            };
            Ok(EvalRow {
                threshold: thresholds.and_then(|t| t.lookup(&r.model_prefix, &r.task)),
                em_strict: metric_value(Some(&r.em_strict)),
                em_strict_se: metric_value(Some(&r.em_strict_se)),
                em_flexible: metric_value(Some(&r.em_flexible)),
                em_flexible_se: metric_value(Some(&r.em_flexible_se)),
                key,
                model_prefix: r.model_prefix,
                task: r.task,
                raw: m,
                baseline: None,
            })
        })
        .collect()
}

/// Attaches baseline scores by key and task; a drop is significant when
/// `base - new > 2 * sqrt(se_new^2 + se_base^2)`.
pub fn attach_baseline(rows: &mut [EvalRow], baseline: &[EvalRow]) {
    let mut by_key: HashMap<(PointKey, String), &EvalRow> = HashMap::new();
    for b in baseline {
        by_key.entry((b.key.clone(), b.task.clone())).or_insert(b);
    }
    for r in rows {
        let Some(b) = by_key.get(&(r.key.clone(), r.task.clone())) else {
            continue;
        };
        let significant_drop = match (r.em_strict, b.em_strict) {
            (Some(n), Some(base)) => {
                let se = (r.em_strict_se.unwrap_or(0.0).powi(2)
                    + b.em_strict_se.unwrap_or(0.0).powi(2))
                .sqrt();
                base - n > 2.0 * se
            }
            _ => false,
        };
        r.baseline = Some(BaselineEval {
            em_strict: b.em_strict,
            em_strict_se: b.em_strict_se,
            significant_drop,
        });
    }
}

/// JSON form of one eval row: the key fields, the task, the scores as
/// given (integers stay integers), threshold and pass/fail.
pub fn to_json(r: &EvalRow) -> Value {
    let mut m = Map::new();
    m.insert("model_prefix".into(), r.model_prefix.clone().into());
    let key = r.key.to_fields();
    for (k, v) in key {
        if matches!(
            k.as_str(),
            "model_prefix" | "pp" | "dcp_size" | "pcp_size" | "num_prefill_gpu" | "num_decode_gpu"
        ) {
            continue;
        }
        m.insert(k, v);
    }
    m.insert("task".into(), r.task.clone().into());
    for k in [
        "em_strict",
        "em_strict_se",
        "em_flexible",
        "em_flexible_se",
        "n_eff",
    ] {
        m.insert(k.into(), r.raw.get(k).cloned().unwrap_or(Value::Null));
    }
    m.insert(
        "threshold".into(),
        r.threshold.as_ref().map_or(Value::Null, |t| t.value.into()),
    );
    m.insert(
        "threshold_source".into(),
        r.threshold
            .as_ref()
            .map_or(Value::Null, |t| t.source.clone().into()),
    );
    m.insert("pass".into(), r.pass().map_or(Value::Null, Value::from));
    if let Some(b) = &r.baseline {
        m.insert(
            "baseline_em_strict".into(),
            b.em_strict.map_or(Value::Null, Value::from),
        );
        m.insert(
            "baseline_em_strict_se".into(),
            b.em_strict_se.map_or(Value::Null, Value::from),
        );
        m.insert("significant_drop".into(), b.significant_drop.into());
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(v: Value) -> crate::load::Objects {
        let mut out = Vec::new();
        crate::load::flatten_into(v, "agg_eval_all.json", &mut out).expect("flatten");
        out
    }

    fn row(conc: i64, strict: f64, se: f64) -> Value {
        json!({"is_multinode": false, "model_prefix": "qwen3.5", "model": "org/m", "hw": "B200",
            "framework": "sglang", "precision": "fp4", "spec_decoding": "none", "isl": 8192, "osl": 1024,
            "tp": 2, "ep": 1, "prefill_tp": 2, "prefill_ep": 1, "prefill_num_workers": 1, "decode_tp": 2,
            "decode_ep": 1, "decode_num_workers": 1, "conc": conc, "dp_attention": "false",
            "prefill_dp_attention": "false", "decode_dp_attention": "false", "task": "gsm8k",
            "em_strict": strict, "em_strict_se": se, "em_flexible": 0.95, "em_flexible_se": 0.005,
            "n_eff": 1319, "source": "s", "score": strict, "score_name": "em_strict", "score_se": se})
    }

    #[test]
    fn model_threshold_wins_over_default() {
        let t = Thresholds::from_value(
            &json!({"default": {"gsm8k": 0.9}, "models": {"qwen3.5": {"gsm8k": 0.97}}}),
            "t.yaml",
        )
        .expect("thresholds");
        let r = eval_rows(rows(json!([row(64, 0.9682, 0.0048)])), Some(&t)).expect("rows");
        assert_eq!(
            r[0].threshold.as_ref().map(|t| t.source.as_str()),
            Some("models.qwen3.5")
        );
        assert_eq!(r[0].pass(), Some(false));
        let flat = Thresholds::from_value(&json!({"gsm8k": 0.9}), "t.yaml").expect("flat");
        assert_eq!(flat.lookup("other", "gsm8k").map(|t| t.value), Some(0.9));
        assert_eq!(flat.lookup("other", "gpqa"), None);
    }

    #[test]
    fn significant_drop_uses_combined_standard_error() {
        let mut new = eval_rows(
            rows(json!([row(64, 0.95, 0.005), row(128, 0.96, 0.005)])),
            None,
        )
        .expect("new");
        let base = eval_rows(
            rows(json!([row(64, 0.97, 0.005), row(128, 0.965, 0.005)])),
            None,
        )
        .expect("base");
        attach_baseline(&mut new, &base);
        // 0.02 > 2 * 0.00707; 0.005 is not.
        assert!(new[0].baseline.as_ref().is_some_and(|b| b.significant_drop));
        assert!(
            new[1]
                .baseline
                .as_ref()
                .is_some_and(|b| !b.significant_drop)
        );
    }
}
