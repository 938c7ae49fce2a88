//! Matching, deltas, classification and the verdict (spec `results.md`
//! §8.3–8.4). Pure: rows in, a [`Comparison`] out; loading and rendering
//! live elsewhere.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use crate::key::{Origin, PointKey, metric_value};
use crate::metrics::{Kind, MetricDef};

/// One benchmark point from either side: its key, the object holding its
/// metrics (the agg row itself, or an API row's `metrics`) and its origin.
#[derive(Debug, Clone)]
pub struct Row {
    pub key: PointKey,
    pub metrics: Map<String, Value>,
    pub origin: Origin,
}

/// Regression policy: per-metric tolerance (a fraction, 0.05 = 5 %) and the
/// optional strict rule.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Overrides by metric key; metrics not named use their default.
    pub tolerances: BTreeMap<String, f64>,
    /// A point counts as regressed only if a throughput metric regressed or
    /// at least two latency metrics did.
    pub strict: bool,
}

impl Policy {
    pub fn tolerance(&self, def: &MetricDef) -> f64 {
        self.tolerances
            .get(def.key)
            .copied()
            .unwrap_or(def.default_tolerance)
    }
}

/// Classification of one metric at one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Improvement,
    Neutral,
    Regression,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Improvement => "improvement",
            Class::Neutral => "neutral",
            Class::Regression => "regression",
        }
    }
}

/// One metric at one matched point.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub baseline: Option<f64>,
    pub new: Option<f64>,
    pub delta: Option<f64>,
    pub rel_delta: Option<f64>,
    pub class: Option<Class>,
}

/// A matched point.
#[derive(Debug, Clone)]
pub struct PointResult {
    pub key: PointKey,
    /// One cell per metric, in the order of [`Comparison::metrics`].
    pub cells: Vec<Cell>,
    /// Whether the point counts as regressed under the policy.
    pub regressed: bool,
}

/// A row whose key was already taken on its side (a retried job, say).
#[derive(Debug, Clone)]
pub struct Duplicate {
    pub side: &'static str,
    pub key: PointKey,
    pub origin: Origin,
}

/// One regressed metric of a regressed point.
#[derive(Debug, Clone)]
pub struct Regression {
    pub key: PointKey,
    pub metric: &'static str,
    pub rel_delta: f64,
    pub tolerance: f64,
}

/// The whole comparison.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub metrics: Vec<MetricDef>,
    pub tolerances: Vec<f64>,
    pub strict: bool,
    pub points: Vec<PointResult>,
    pub unmatched_new: Vec<PointKey>,
    pub unmatched_baseline: Vec<PointKey>,
    pub duplicates: Vec<Duplicate>,
    pub regressions: Vec<Regression>,
}

impl Comparison {
    pub fn has_regressions(&self) -> bool {
        !self.regressions.is_empty()
    }

    pub fn verdict(&self) -> &'static str {
        if self.has_regressions() {
            "regressions"
        } else {
            "no_regressions"
        }
    }

    pub fn regressed_points(&self) -> usize {
        self.points.iter().filter(|p| p.regressed).count()
    }
}

/// Keeps the first row per key, in input order; later ones become duplicates.
fn dedupe(rows: Vec<Row>, side: &'static str, dups: &mut Vec<Duplicate>) -> Vec<Row> {
    let mut seen: HashMap<PointKey, ()> = HashMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        if seen.insert(row.key.clone(), ()).is_some() {
            dups.push(Duplicate {
                side,
                key: row.key,
                origin: row.origin,
            });
        } else {
            out.push(row);
        }
    }
    out
}

/// Compares `new` against `baseline` on `metrics` under `policy`.
pub fn compare(
    new: Vec<Row>,
    baseline: Vec<Row>,
    metrics: Vec<MetricDef>,
    policy: &Policy,
) -> Comparison {
    let mut duplicates = Vec::new();
    let new = dedupe(new, "new", &mut duplicates);
    let baseline = dedupe(baseline, "baseline", &mut duplicates);
    let tolerances: Vec<f64> = metrics.iter().map(|d| policy.tolerance(d)).collect();

    let mut base_by_key: BTreeMap<PointKey, Row> =
        baseline.into_iter().map(|r| (r.key.clone(), r)).collect();
    let mut points = Vec::new();
    let mut unmatched_new = Vec::new();
    for row in new {
        let Some(base) = base_by_key.remove(&row.key) else {
            unmatched_new.push(row.key);
            continue;
        };
        let cells: Vec<Cell> = metrics
            .iter()
            .zip(&tolerances)
            .map(|(def, tol)| cell(def, *tol, &base.metrics, &row.metrics))
            .collect();
        let regressed = is_regressed(&metrics, &cells, policy.strict);
        points.push(PointResult {
            key: row.key,
            cells,
            regressed,
        });
    }
    points.sort_by(|a, b| a.key.cmp(&b.key));
    unmatched_new.sort();
    let unmatched_baseline: Vec<PointKey> = base_by_key.into_keys().collect();

    let mut regressions = Vec::new();
    for p in points.iter().filter(|p| p.regressed) {
        for ((def, c), tol) in metrics.iter().zip(&p.cells).zip(&tolerances) {
            if let (Some(Class::Regression), Some(r)) = (c.class, c.rel_delta) {
                regressions.push(Regression {
                    key: p.key.clone(),
                    metric: def.key,
                    rel_delta: r,
                    tolerance: *tol,
                });
            }
        }
    }
    Comparison {
        metrics,
        tolerances,
        strict: policy.strict,
        points,
        unmatched_new,
        unmatched_baseline,
        duplicates,
        regressions,
    }
}

fn cell(def: &MetricDef, tol: f64, base: &Map<String, Value>, new: &Map<String, Value>) -> Cell {
    let b = metric_value(base.get(def.key));
    let n = metric_value(new.get(def.key));
    let delta = match (b, n) {
        (Some(b), Some(n)) => Some(n - b),
        _ => None,
    };
    let rel_delta = match (b, delta) {
        (Some(b), Some(d)) if b != 0.0 => Some(d / b).filter(|r| r.is_finite()),
        _ => None,
    };
    let class = rel_delta.map(|r| {
        let goodness = if def.higher_is_better { r } else { -r };
        if goodness < -tol {
            Class::Regression
        } else if goodness > tol {
            Class::Improvement
        } else {
            Class::Neutral
        }
    });
    Cell {
        baseline: b,
        new: n,
        delta,
        rel_delta,
        class,
    }
}

fn is_regressed(metrics: &[MetricDef], cells: &[Cell], strict: bool) -> bool {
    let regressed = |kind: Kind| {
        metrics
            .iter()
            .zip(cells)
            .filter(|(d, c)| d.kind == kind && c.class == Some(Class::Regression))
            .count()
    };
    if strict {
        regressed(Kind::Throughput) > 0 || regressed(Kind::Latency) >= 2
    } else {
        regressed(Kind::Throughput) + regressed(Kind::Latency) > 0
    }
}

fn opt(v: Option<f64>) -> Value {
    v.map_or(Value::Null, Value::from)
}

impl Comparison {
    /// The comparison part of the JSON report (`points`, `unmatched_*`,
    /// `duplicates`, `regressions`, `verdict`, `policy`, `metrics`).
    pub fn to_json(&self) -> Map<String, Value> {
        let mut out = Map::new();
        let policy: Map<String, Value> = self
            .metrics
            .iter()
            .zip(&self.tolerances)
            .map(|(d, t)| (d.key.to_string(), Value::from(*t)))
            .collect();
        out.insert("policy".into(), Value::Object(policy));
        out.insert("strict".into(), self.strict.into());
        out.insert(
            "match_key".into(),
            json!(crate::key::MATCH_KEY_FIELDS.to_vec()),
        );
        let metrics: Vec<Value> = self
            .metrics
            .iter()
            .zip(&self.tolerances)
            .map(|(d, t)| {
                json!({
                    "key": d.key,
                    "label": d.label,
                    "higher_is_better": d.higher_is_better,
                    "display_scale": d.display_scale,
                    "decimals": d.decimals,
                    "kind": d.kind,
                    "tolerance": t,
                })
            })
            .collect();
        out.insert("metrics".into(), metrics.into());
        let points: Vec<Value> = self.points.iter().map(|p| self.point_json(p)).collect();
        out.insert("points".into(), points.into());
        let keys = |ks: &[PointKey]| -> Value {
            ks.iter()
                .map(|k| Value::Object(k.to_fields()))
                .collect::<Vec<_>>()
                .into()
        };
        out.insert("unmatched_new".into(), keys(&self.unmatched_new));
        out.insert("unmatched_baseline".into(), keys(&self.unmatched_baseline));
        let dups: Vec<Value> = self
            .duplicates
            .iter()
            .map(|d| {
                let mut m = d.key.to_fields();
                m.insert("side".into(), d.side.into());
                m.insert("source".into(), d.origin.to_string().into());
                Value::Object(m)
            })
            .collect();
        out.insert("duplicates".into(), dups.into());
        let regs: Vec<Value> = self
            .regressions
            .iter()
            .map(|r| {
                let mut m = r.key.to_fields();
                m.insert("metric".into(), r.metric.into());
                m.insert("rel_delta".into(), r.rel_delta.into());
                m.insert("tolerance".into(), r.tolerance.into());
                Value::Object(m)
            })
            .collect();
        out.insert("regressions".into(), regs.into());
        out.insert("verdict".into(), self.verdict().into());
        out
    }

    fn point_json(&self, p: &PointResult) -> Value {
        let mut m = p.key.to_fields();
        let per = |f: &dyn Fn(&MetricDef, &Cell) -> Value| -> Value {
            Value::Object(
                self.metrics
                    .iter()
                    .zip(&p.cells)
                    .map(|(d, c)| (d.key.to_string(), f(d, c)))
                    .collect(),
            )
        };
        m.insert("baseline".into(), per(&|_, c| opt(c.baseline)));
        m.insert("new".into(), per(&|_, c| opt(c.new)));
        m.insert("delta".into(), per(&|_, c| opt(c.delta)));
        m.insert("rel_delta".into(), per(&|_, c| opt(c.rel_delta)));
        m.insert(
            "baseline_display".into(),
            per(&|d, c| opt(c.baseline.map(|v| v * d.display_scale))),
        );
        m.insert(
            "new_display".into(),
            per(&|d, c| opt(c.new.map(|v| v * d.display_scale))),
        );
        m.insert(
            "classification".into(),
            per(&|_, c| c.class.map_or(Value::Null, |k| k.as_str().into())),
        );
        m.insert("regressed".into(), p.regressed.into());
        Value::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::key_from_agg;
    use crate::metrics::MetricSet;

    fn row(conc: i64, tput: f64, ttft: f64) -> Row {
        let v = json!({"hw": "b200", "infmax_model_prefix": "m", "model": "org/m", "framework": "sglang",
            "precision": "fp8", "spec_decoding": "none", "disagg": false, "is_multinode": false,
            "isl": 1024, "osl": 1024, "tp": 8, "ep": 1, "dp_attention": "false", "conc": conc,
            "tput_per_gpu": tput, "output_tput_per_gpu": tput / 2.0, "input_tput_per_gpu": tput / 2.0,
            "mean_tpot": 0.01, "mean_ttft": ttft});
        let origin = Origin {
            path: "t.json".into(),
            index: Some(conc as usize),
        };
        let metrics = v.as_object().expect("obj").clone();
        Row {
            key: key_from_agg(&metrics, &origin).expect("key"),
            metrics,
            origin,
        }
    }

    #[test]
    fn classifies_against_per_metric_tolerance() {
        let base = vec![row(4, 100.0, 1.0), row(8, 100.0, 1.0)];
        // conc 4: tput -6 % (regression at 5 %); conc 8: TTFT +9 % (neutral at 10 %).
        let new = vec![row(4, 94.0, 1.0), row(8, 100.0, 1.09)];
        let c = compare(new, base, MetricSet::Default.defs(), &Policy::default());
        assert_eq!(c.verdict(), "regressions");
        assert_eq!(c.regressions.len(), 2, "tput and output tput at conc 4");
        assert!(c.regressions.iter().all(|r| r.key.conc == 4));
        assert_eq!(c.points[1].cells[3].class, Some(Class::Neutral));
    }

    #[test]
    fn tolerance_override_changes_the_verdict() {
        let mut policy = Policy::default();
        policy.tolerances.insert("tput_per_gpu".into(), 0.10);
        policy.tolerances.insert("output_tput_per_gpu".into(), 0.10);
        let c = compare(
            vec![row(4, 94.0, 1.0)],
            vec![row(4, 100.0, 1.0)],
            MetricSet::Default.defs(),
            &policy,
        );
        assert_eq!(c.verdict(), "no_regressions");
    }

    #[test]
    fn strict_mode_needs_throughput_or_two_latency_regressions() {
        let policy = Policy {
            strict: true,
            ..Policy::default()
        };
        // Only TTFT regressed (+50 %): not enough in strict mode.
        let c = compare(
            vec![row(4, 100.0, 1.5)],
            vec![row(4, 100.0, 1.0)],
            MetricSet::Default.defs(),
            &policy,
        );
        assert_eq!(c.verdict(), "no_regressions");
        let c = compare(
            vec![row(4, 100.0, 1.5)],
            vec![row(4, 100.0, 1.0)],
            MetricSet::Default.defs(),
            &Policy::default(),
        );
        assert_eq!(c.verdict(), "regressions");
    }

    #[test]
    fn unmatched_and_duplicates_are_listed_not_dropped() {
        let c = compare(
            vec![row(4, 1.0, 1.0), row(16, 1.0, 1.0), row(4, 2.0, 1.0)],
            vec![row(4, 1.0, 1.0), row(8, 1.0, 1.0)],
            MetricSet::Default.defs(),
            &Policy::default(),
        );
        assert_eq!(c.points.len(), 1);
        assert_eq!(
            c.unmatched_new.iter().map(|k| k.conc).collect::<Vec<_>>(),
            [16]
        );
        assert_eq!(
            c.unmatched_baseline
                .iter()
                .map(|k| k.conc)
                .collect::<Vec<_>>(),
            [8]
        );
        assert_eq!(c.duplicates.len(), 1);
        assert_eq!(c.duplicates[0].side, "new");
        // The first row wins.
        assert_eq!(c.points[0].cells[0].new, Some(1.0));
    }

    #[test]
    fn zero_or_missing_baseline_is_undefined_and_ignored() {
        let mut b = row(4, 0.0, 1.0);
        b.metrics.remove("mean_tpot");
        let c = compare(
            vec![row(4, 50.0, 1.0)],
            vec![b],
            MetricSet::Default.defs(),
            &Policy::default(),
        );
        assert_eq!(c.points[0].cells[0].rel_delta, None);
        assert_eq!(c.points[0].cells[0].class, None);
        assert_eq!(c.points[0].cells[2].delta, None);
        assert_eq!(c.verdict(), "no_regressions");
    }
}
