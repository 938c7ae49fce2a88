//! Matching, deltas, classification and the verdict (spec `results.md`
//! §8.3–8.4). Pure: rows in, a [`Comparison`] out; loading and rendering
//! live elsewhere.
//!
//! Repeats and noise (issue #19): by default ([`Repeats::Pool`]) every row
//! of one side that shares a point key is a repeat of that point (a retried
//! or repeated job, or one of several baseline runs), and the comparison
//! uses their mean, min and max. The rule is in [`classify`]: with a single
//! run on each side it is exactly the tolerance rule of §8.4; with repeats
//! a change must also separate the runs (every new run beyond the tolerance
//! from every baseline run), else it is neutral *within noise*.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use sweep_series::baseline::{Fallback, Learnt};
use sweep_series::boundary::{Boundary, Settings};

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

/// Regression policy: per-metric tolerance (a fraction, 0.05 = 5 %), the
/// optional strict rule and what to do with repeats.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Overrides by metric key; metrics not named use their default.
    pub tolerances: BTreeMap<String, f64>,
    /// A point counts as regressed only if a throughput metric regressed or
    /// at least two latency metrics did.
    pub strict: bool,
    /// How rows that share a key on one side are used.
    pub repeats: Repeats,
    /// The baseline is main's history (`--baseline-from history`): what it
    /// learnt per point and metric, and the settings it learnt with.
    pub history: Option<HistoryPolicy>,
}

/// What main's history says of each new point's metrics: a learnt boundary
/// (the point is judged by it) or the reason there is none (the tolerance
/// judges it, against the values there are).
#[derive(Debug, Clone)]
pub struct HistoryPolicy {
    pub settings: Settings,
    /// Per new point, per metric (as `sweep_series::baseline::learn_rows`
    /// gives them).
    pub learnt: BTreeMap<PointKey, BTreeMap<&'static str, Learnt>>,
}

/// One cell's judgement by the history.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryCell {
    pub learnt: Learnt,
    /// How much of the room between the series' mean and its boundary the
    /// new mean used, on the worse side (see
    /// [`sweep_series::boundary::Judgement::percent_of_limit`]); `None`
    /// without a boundary.
    pub percent_of_limit: Option<f64>,
}

impl HistoryCell {
    /// The learnt boundary, if there is one.
    pub fn boundary(&self) -> Option<&Boundary> {
        self.learnt.verdict.as_ref().ok()
    }

    /// Why the tolerance judged this cell, if it did.
    pub fn fallback(&self) -> Option<Fallback> {
        self.learnt.verdict.as_ref().err().copied()
    }
}

/// Rows sharing a point key on one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Repeats {
    /// They are repeats of the point: pooled (mean, min, max) and judged by
    /// the noise rule of [`classify`].
    #[default]
    Pool,
    /// The first in input order is used; the rest are listed as duplicates
    /// (the behaviour of spec §8.3).
    First,
}

impl Repeats {
    pub fn as_str(self) -> &'static str {
        match self {
            Repeats::Pool => "pool",
            Repeats::First => "first",
        }
    }
}

/// The runs of one metric at one point on one side: how many had a value,
/// their mean, min and max.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

impl Stats {
    /// Stats of the finite values; `None` when there is none. With one
    /// value the mean is that value exactly.
    pub fn of(values: &[f64]) -> Option<Stats> {
        let (&first, rest) = values.split_first()?;
        let (mut min, mut max, mut sum) = (first, first, first);
        for &v in rest {
            min = min.min(v);
            max = max.max(v);
            sum += v;
        }
        let mean = if rest.is_empty() {
            first
        } else {
            sum / values.len() as f64
        };
        mean.is_finite().then_some(Stats {
            n: values.len(),
            mean,
            min,
            max,
        })
    }

    /// Half the min–max range relative to the mean (0.021 = ±2.1 %);
    /// `None` for a zero mean.
    pub fn spread(&self) -> Option<f64> {
        (self.mean != 0.0)
            .then(|| (self.max - self.min) / 2.0 / self.mean.abs())
            .filter(|s| s.is_finite())
    }
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

/// One metric at one matched point. `baseline` and `new` are the means of
/// the runs (the value itself for a single run).
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub baseline: Option<f64>,
    pub new: Option<f64>,
    pub delta: Option<f64>,
    pub rel_delta: Option<f64>,
    pub class: Option<Class>,
    pub baseline_stats: Option<Stats>,
    pub new_stats: Option<Stats>,
    /// The means differ by more than the tolerance but the runs overlap
    /// (see [`classify`]), so the class is neutral.
    pub within_noise: bool,
    /// With main's history as the baseline: what it learnt of this metric
    /// at this point (`baseline_stats` are then its values).
    pub history: Option<HistoryCell>,
}

/// What a matched point's comparison says, one state per point, so the
/// states of a comparison add up to its matched points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PointState {
    /// Regressed under the policy (see [`Policy::strict`]).
    Regressed,
    /// Not regressed, but a metric's mean moved beyond tolerance while the
    /// runs overlap (a cell [`Cell::within_noise`]): re-run to know.
    Inconclusive,
    /// Neither of the above, with a metric better beyond tolerance and
    /// none worse beyond it.
    Improved,
    /// Everything else: no change beyond the policy.
    Unchanged,
}

impl PointState {
    pub fn as_str(self) -> &'static str {
        match self {
            PointState::Regressed => "regressed",
            PointState::Inconclusive => "inconclusive",
            PointState::Improved => "improved",
            PointState::Unchanged => "unchanged",
        }
    }

    fn of(regressed: bool, cells: &[Cell]) -> PointState {
        if regressed {
            PointState::Regressed
        } else if cells.iter().any(|c| c.within_noise) {
            PointState::Inconclusive
        } else if cells.iter().any(|c| c.class == Some(Class::Improvement))
            && !cells.iter().any(|c| c.class == Some(Class::Regression))
        {
            PointState::Improved
        } else {
            PointState::Unchanged
        }
    }
}

/// The counts every part of the report shows (the markdown's verdict, the
/// per-configuration summaries, the JSON `summary`, the PR comment's
/// heading): computed here once, from the points' states.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub matched: usize,
    pub regressed_points: usize,
    /// Regressed metrics over the regressed points (the regression list).
    pub regressed_metrics: usize,
    pub improved: usize,
    pub unchanged: usize,
    pub inconclusive: usize,
    /// Points (in any state) whose baseline ran on other hardware.
    pub other_hardware: usize,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Counts {
    /// The counts of these points (a whole comparison, or one
    /// configuration's points).
    pub fn of<'a>(points: impl IntoIterator<Item = &'a PointResult>) -> Counts {
        let mut c = Counts::default();
        for p in points {
            c.matched += 1;
            c.other_hardware += usize::from(p.other_hardware);
            match p.state {
                PointState::Regressed => {
                    c.regressed_points += 1;
                    c.regressed_metrics += p
                        .cells
                        .iter()
                        .filter(|c| c.class == Some(Class::Regression))
                        .count();
                }
                PointState::Inconclusive => c.inconclusive += 1,
                PointState::Improved => c.improved += 1,
                PointState::Unchanged => c.unchanged += 1,
            }
        }
        c
    }

    /// `2 points regressed (4 metrics) · 3 improved · 2 unchanged · 0
    /// inconclusive`: every count, always, in this order.
    pub fn line(&self) -> String {
        format!(
            "{} regressed ({}) · {} improved · {} unchanged · {} inconclusive",
            plural(self.regressed_points, "point", "points"),
            plural(self.regressed_metrics, "metric", "metrics"),
            self.improved,
            self.unchanged,
            self.inconclusive
        )
    }
}

/// A matched point.
#[derive(Debug, Clone)]
pub struct PointResult {
    pub key: PointKey,
    /// One cell per metric, in the order of [`Comparison::metrics`].
    pub cells: Vec<Cell>,
    /// Whether the point counts as regressed under the policy.
    pub regressed: bool,
    /// The point's one state (regressed, inconclusive, improved or
    /// unchanged).
    pub state: PointState,
    /// Rows of the point on each side (1 without repeats).
    pub n_baseline: usize,
    pub n_new: usize,
    /// What the point's rows ran on, each side (distinct, sorted).
    pub baseline_machines: Vec<Machine>,
    pub new_machines: Vec<Machine>,
    /// The baseline ran on other hardware than the new run (see
    /// [`other_hardware`]): compared, but flagged.
    pub other_hardware: bool,
}

/// What one row ran on, as far as the row tells: the hardware's cluster
/// or runner group (the row's `hw`, its node number removed:
/// `b200-dgxc_03` ran on `b200-dgxc`), the serving image and its digest.
/// Rows of the benchmarks API or the database name only the hardware type
/// in the key, not where they ran: `hw` is then `None`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Machine {
    pub hw: Option<String>,
    pub image: Option<String>,
    /// `sha256:…` from the row's `image_digest`, or from an image pinned
    /// as `name@sha256:…`.
    pub digest: Option<String>,
}

impl Machine {
    /// The machine of an `agg_bmk.json` row (read from its fields).
    pub fn of(row: &Row) -> Machine {
        let text = |k: &str| match row.metrics.get(k) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
            _ => None,
        };
        let hw = text("hw").map(|h| cluster_of(&h));
        let (image, pinned) = match text("image") {
            Some(i) => match i.split_once('@') {
                Some((name, d)) if d.starts_with("sha256:") => {
                    (Some(name.to_string()), Some(d.to_string()))
                }
                _ => (Some(i), None),
            },
            None => (None, None),
        };
        Machine {
            hw,
            image,
            digest: text("image_digest").or(pinned),
        }
    }
}

pub use sweep_model::runners::cluster_of;

/// Whether the baseline ran on other hardware than the new run: both sides
/// name where they ran and the two sets of clusters differ. A side that
/// does not say (an API or database baseline) is not flagged.
pub fn other_hardware(baseline: &[Machine], new: &[Machine]) -> bool {
    let set = |ms: &[Machine]| -> std::collections::BTreeSet<String> {
        ms.iter().filter_map(|m| m.hw.clone()).collect()
    };
    let (b, n) = (set(baseline), set(new));
    !b.is_empty() && !n.is_empty() && b != n
}

fn machines(rows: &[Row]) -> Vec<Machine> {
    let mut v: Vec<Machine> = rows.iter().map(Machine::of).collect();
    v.sort();
    v.dedup();
    v
}

impl PointResult {
    pub fn has_repeats(&self) -> bool {
        self.n_baseline > 1 || self.n_new > 1
    }
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
    pub repeats: Repeats,
    /// The settings of the learnt boundaries, when the baseline was main's
    /// history.
    pub history: Option<Settings>,
}

impl Comparison {
    /// Whether any matched point has more than one run on a side (the
    /// report then shows n and the spread).
    pub fn has_repeats(&self) -> bool {
        self.points.iter().any(PointResult::has_repeats)
    }

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

    /// Metrics (over all points) whose change of the means is beyond
    /// tolerance but inside the noise of the repeats.
    pub fn within_noise(&self) -> usize {
        self.points
            .iter()
            .flat_map(|p| &p.cells)
            .filter(|c| c.within_noise)
            .count()
    }

    pub fn regressed_points(&self) -> usize {
        self.points.iter().filter(|p| p.regressed).count()
    }

    /// The report's counts (see [`Counts`]).
    pub fn counts(&self) -> Counts {
        Counts::of(&self.points)
    }
}

/// The rows of one point on one side, in input order.
struct Runs {
    key: PointKey,
    rows: Vec<Row>,
}

/// Groups rows by key in order of first appearance. Under
/// [`Repeats::First`] only the first row per key is kept and the later
/// ones become duplicates.
fn group(
    rows: Vec<Row>,
    side: &'static str,
    repeats: Repeats,
    dups: &mut Vec<Duplicate>,
) -> Vec<Runs> {
    let mut index: HashMap<PointKey, usize> = HashMap::new();
    let mut out: Vec<Runs> = Vec::new();
    for row in rows {
        match index.get(&row.key) {
            Some(_) if repeats == Repeats::First => dups.push(Duplicate {
                side,
                key: row.key,
                origin: row.origin,
            }),
            Some(&i) => out[i].rows.push(row),
            None => {
                index.insert(row.key.clone(), out.len());
                out.push(Runs {
                    key: row.key.clone(),
                    rows: vec![row],
                });
            }
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
    let new = group(new, "new", policy.repeats, &mut duplicates);
    let baseline = group(baseline, "baseline", policy.repeats, &mut duplicates);
    let tolerances: Vec<f64> = metrics.iter().map(|d| policy.tolerance(d)).collect();

    let mut base_by_key: BTreeMap<PointKey, Runs> =
        baseline.into_iter().map(|r| (r.key.clone(), r)).collect();
    let mut points = Vec::new();
    let mut unmatched_new = Vec::new();
    for runs in new {
        let Some(base) = base_by_key.remove(&runs.key) else {
            unmatched_new.push(runs.key);
            continue;
        };
        points.push(judge_point(runs, &base, &metrics, &tolerances, policy));
    }
    points.sort_by(|a, b| a.key.cmp(&b.key));
    unmatched_new.sort();
    let unmatched_baseline: Vec<PointKey> = base_by_key.into_keys().collect();

    let regressions = regressions(&points, &metrics, &tolerances);
    Comparison {
        metrics,
        tolerances,
        strict: policy.strict,
        points,
        unmatched_new,
        unmatched_baseline,
        duplicates,
        regressions,
        repeats: policy.repeats,
        history: policy.history.as_ref().map(|h| h.settings),
    }
}

/// One matched point: a cell per metric (judged by its tolerance, or by
/// the point's learnt boundary under `--history`), its state, and where
/// each side ran.
fn judge_point(
    runs: Runs,
    base: &Runs,
    metrics: &[MetricDef],
    tolerances: &[f64],
    policy: &Policy,
) -> PointResult {
    let learnt = policy
        .history
        .as_ref()
        .map(|h| (h.learnt.get(&runs.key), &h.settings));
    let cells: Vec<Cell> = metrics
        .iter()
        .zip(tolerances)
        .map(|(def, tol)| {
            let learnt = learnt.map(|(per, s)| (per.and_then(|m| m.get(def.key)), s));
            cell(def, *tol, &base.rows, &runs.rows, learnt)
        })
        .collect();
    let regressed = is_regressed(metrics, &cells, policy.strict);
    let (baseline_machines, new_machines) = (machines(&base.rows), machines(&runs.rows));
    PointResult {
        key: runs.key,
        state: PointState::of(regressed, &cells),
        cells,
        regressed,
        n_baseline: base.rows.len(),
        n_new: runs.rows.len(),
        other_hardware: other_hardware(&baseline_machines, &new_machines),
        baseline_machines,
        new_machines,
    }
}

/// Every regressed cell of the regressed points, in point order, with the
/// limit it broke.
fn regressions(
    points: &[PointResult],
    metrics: &[MetricDef],
    tolerances: &[f64],
) -> Vec<Regression> {
    let mut regressions = Vec::new();
    for p in points.iter().filter(|p| p.regressed) {
        for ((def, c), tol) in metrics.iter().zip(&p.cells).zip(tolerances) {
            if let (Some(Class::Regression), Some(r)) = (c.class, c.rel_delta) {
                // Judged by a learnt boundary: the boundary is its limit.
                let limit = c
                    .history
                    .as_ref()
                    .and_then(HistoryCell::boundary)
                    .map_or(*tol, |b| b.limit_change.abs());
                regressions.push(Regression {
                    key: p.key.clone(),
                    metric: def.key,
                    rel_delta: r,
                    tolerance: limit,
                });
            }
        }
    }
    regressions
}

fn stats(def: &MetricDef, rows: &[Row]) -> Option<Stats> {
    let values: Vec<f64> = rows
        .iter()
        .filter_map(|r| metric_value(r.metrics.get(def.key)))
        .collect();
    Stats::of(&values)
}

/// One metric at one point. `learnt` is given when the baseline is main's
/// history: what the history learnt of this metric here (`None`: nothing)
/// and the settings.
fn cell(
    def: &MetricDef,
    tol: f64,
    base: &[Row],
    new: &[Row],
    learnt: Option<(Option<&Learnt>, &Settings)>,
) -> Cell {
    let new_stats = stats(def, new);
    let base_stats = match learnt {
        Some((Some(l), _)) => Stats::of(&l.values),
        Some((None, _)) => None,
        None => stats(def, base),
    };
    let b = base_stats.map(|s| s.mean);
    let n = new_stats.map(|s| s.mean);
    let delta = match (b, n) {
        (Some(b), Some(n)) => Some(n - b),
        _ => None,
    };
    let rel_delta = match (b, delta) {
        (Some(b), Some(d)) if b != 0.0 => Some(d / b).filter(|r| r.is_finite()),
        _ => None,
    };
    let boundary = match learnt {
        Some((Some(l), settings)) => l.verdict.as_ref().ok().map(|b| (b, settings)),
        _ => None,
    };
    let (class, within_noise) = match (rel_delta, base_stats, new_stats, boundary) {
        (Some(_), Some(_), Some(ns), Some((b, settings))) => {
            let (class, noise) = classify_learnt(b, settings, &ns);
            (Some(class), noise)
        }
        (Some(r), Some(bs), Some(ns), None) => {
            let (class, noise) = classify(def.higher_is_better, tol, r, &bs, &ns);
            (Some(class), noise)
        }
        _ => (None, false),
    };
    let history = match learnt {
        Some((Some(l), settings)) => Some(HistoryCell {
            learnt: l.clone(),
            percent_of_limit: match (&l.verdict, n) {
                (Ok(b), Some(n)) => Some(b.judge(n, settings).percent_of_limit),
                _ => None,
            },
        }),
        _ => None,
    };
    Cell {
        history,
        baseline: b,
        new: n,
        delta,
        rel_delta,
        class,
        baseline_stats: base_stats,
        new_stats,
        within_noise,
    }
}

/// The verdict rule for one metric at one point, with `rel_delta` the
/// relative change of the means and `tol` the tolerance; returns the class
/// and whether a change beyond tolerance was judged to be noise.
///
/// 1. Tolerance (spec §8.4): goodness = `rel_delta` (higher is better) or
///    `-rel_delta`; below `-tol` is a regression, above `tol` an
///    improvement, else neutral. With one run on each side this is the
///    whole rule, evaluated exactly as before repeats existed.
/// 2. Noise, when either side has two or more runs: a change beyond
///    tolerance stands only if the runs separate by more than the
///    tolerance, i.e. every pairing of a new run with a baseline run is
///    beyond the tolerance the same way. For a higher-is-better metric a
///    regression needs `max(new) < min(base) · (1 − tol)` and an
///    improvement `min(new) > max(base) · (1 + tol)`; lower-is-better
///    mirrors it (`min(new) > max(base) · (1 + tol)` is a regression).
///    Otherwise the metric is neutral *within noise*.
///
/// Why this rule: repeats on these systems are 2–5 runs, too few to
/// estimate a variance (a 95 % Welch interval at n = 2 uses t ≈ 12.7 and
/// needs two runs on both sides); the min–max range needs no distribution
/// and no variance, works with one run on one side, and its one-run limit
/// is the tolerance rule itself. It is conservative: an outlier run widens
/// the range and can hide a real change (never create one), and with many
/// runs the range grows, so it suits small n. Values are positive
/// (throughputs, latencies).
pub fn classify(
    higher_is_better: bool,
    tol: f64,
    rel_delta: f64,
    base: &Stats,
    new: &Stats,
) -> (Class, bool) {
    let goodness = if higher_is_better {
        rel_delta
    } else {
        -rel_delta
    };
    let by_means = if goodness < -tol {
        Class::Regression
    } else if goodness > tol {
        Class::Improvement
    } else {
        Class::Neutral
    };
    if (base.n <= 1 && new.n <= 1) || by_means == Class::Neutral {
        return (by_means, false);
    }
    // The new runs' best and worst values, and the baseline's.
    let (new_best, new_worst, base_best, base_worst) = if higher_is_better {
        (new.max, new.min, base.max, base.min)
    } else {
        (new.min, new.max, base.min, base.max)
    };
    let (worse, better) = if higher_is_better {
        (1.0 - tol, 1.0 + tol)
    } else {
        (1.0 + tol, 1.0 - tol)
    };
    let beyond_worse = |v: f64, limit: f64| {
        if higher_is_better {
            v < limit
        } else {
            v > limit
        }
    };
    let separated = match by_means {
        // Even the best new run is worse than the worst baseline run.
        Class::Regression => beyond_worse(new_best, base_worst * worse),
        // Even the worst new run is better than the best baseline run.
        _ => beyond_worse(base_best * better, new_worst),
    };
    if separated {
        (by_means, false)
    } else {
        (Class::Neutral, true)
    }
}

/// The verdict rule for one metric at one point against a boundary learnt
/// from main's history (`sweep_series::boundary`): returns the class and
/// whether a change beyond the boundary was judged to be noise.
///
/// 1. The mean of the new runs is a regression when it is beyond the
///    boundary on the worse side *and* at least the minimum practical
///    change (`settings.min_change`) from the series' mean; an
///    improvement when it is as far beyond the mirrored bound on the better
///    side and at least that change; else neutral. With one new run this is
///    [`Boundary::judge`] exactly.
/// 2. Repeats compose as in [`classify`]: with two or more new runs a
///    change stands only if every new run is beyond the bound the same way;
///    otherwise the metric is neutral *within noise*. (The history's side
///    needs no such rule: its spread is what the boundary is made of.)
pub fn classify_learnt(b: &Boundary, settings: &Settings, new: &Stats) -> (Class, bool) {
    use sweep_series::series::Better;
    let half = (b.limit - b.mean).abs();
    let practical = settings.min_change * b.mean.abs();
    // How much better than the series' mean a value is (negative: worse).
    let goodness = |v: f64| match b.better {
        Better::Higher => v - b.mean,
        Better::Lower => b.mean - v,
    };
    let worse = |v: f64| goodness(v) < -half && -goodness(v) >= practical;
    let better = |v: f64| goodness(v) > half && goodness(v) >= practical;
    let by_mean = if worse(new.mean) {
        Class::Regression
    } else if better(new.mean) {
        Class::Improvement
    } else {
        Class::Neutral
    };
    if new.n <= 1 || by_mean == Class::Neutral {
        return (by_mean, false);
    }
    let (best, worst) = match b.better {
        Better::Higher => (new.max, new.min),
        Better::Lower => (new.min, new.max),
    };
    let separated = match by_mean {
        Class::Regression => worse(best),
        _ => better(worst),
    };
    if separated {
        (by_mean, false)
    } else {
        (Class::Neutral, true)
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

fn stats_json(s: Option<Stats>) -> Value {
    s.map_or(Value::Null, |s| {
        json!({"n": s.n, "mean": s.mean, "min": s.min, "max": s.max, "spread": opt(s.spread())})
    })
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
        out.insert("repeats".into(), self.repeats.as_str().into());
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
        if let Some(h) = &self.history {
            out.insert(
                "history".into(),
                json!({
                    "confidence": h.confidence,
                    "min_change": h.min_change,
                    "min_runs": h.min_samples,
                    "window": h.window,
                }),
            );
        }
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
        m.insert("state".into(), p.state.as_str().into());
        m.insert(
            "n".into(),
            json!({"baseline": p.n_baseline, "new": p.n_new}),
        );
        m.insert(
            "baseline_stats".into(),
            per(&|_, c| stats_json(c.baseline_stats)),
        );
        m.insert("new_stats".into(), per(&|_, c| stats_json(c.new_stats)));
        m.insert("within_noise".into(), per(&|_, c| c.within_noise.into()));
        let ran_on = |ms: &[Machine]| -> Value {
            ms.iter()
                .map(|m| json!({"hw": m.hw, "image": m.image, "digest": m.digest}))
                .collect::<Vec<_>>()
                .into()
        };
        m.insert(
            "ran_on".into(),
            json!({"baseline": ran_on(&p.baseline_machines), "new": ran_on(&p.new_machines)}),
        );
        m.insert("other_hardware".into(), p.other_hardware.into());
        if self.history.is_some() {
            m.insert(
                "history".into(),
                per(&|_, c| history_json(c.history.as_ref())),
            );
        }
        Value::Object(m)
    }
}

/// A cell's judgement by the history, for the JSON report: the values it
/// was learnt from, the newest runs (commits and dates), the boundary and
/// the share of it used, or why the tolerance judged instead.
fn history_json(h: Option<&HistoryCell>) -> Value {
    let Some(h) = h else {
        return Value::Null;
    };
    let runs: Vec<Value> = h
        .learnt
        .runs
        .iter()
        .map(|r| json!({"run_id": r.run_id, "attempt": r.attempt, "commit": r.commit, "date": r.date, "pr": r.pr}))
        .collect();
    let mean = Stats::of(&h.learnt.values).map(|s| s.mean);
    match &h.learnt.verdict {
        Ok(b) => json!({
            "n": b.n,
            "mean": b.mean,
            "stddev": b.stddev,
            "boundary": b.limit,
            "boundary_change": b.limit_change,
            "percent_of_limit": h.percent_of_limit.filter(|p| p.is_finite()),
            "runs": runs,
        }),
        Err(f) => json!({
            "n": h.learnt.values.len(),
            "mean": mean,
            "fallback": f.to_string(),
            "runs": runs,
        }),
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
        let first = Policy {
            repeats: Repeats::First,
            ..Policy::default()
        };
        let c = compare(
            vec![row(4, 1.0, 1.0), row(16, 1.0, 1.0), row(4, 2.0, 1.0)],
            vec![row(4, 1.0, 1.0), row(8, 1.0, 1.0)],
            MetricSet::Default.defs(),
            &first,
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

    fn stats(values: &[f64]) -> Stats {
        Stats::of(values).expect("values")
    }

    /// `classify` for a higher-is-better metric at 3 % tolerance.
    fn tput_class(base: &[f64], new: &[f64]) -> (Class, bool) {
        let (b, n) = (stats(base), stats(new));
        classify(true, 0.03, (n.mean - b.mean) / b.mean, &b, &n)
    }

    #[test]
    fn single_runs_keep_the_tolerance_rule() {
        assert_eq!(tput_class(&[100.0], &[96.0]), (Class::Regression, false));
        assert_eq!(tput_class(&[100.0], &[98.0]), (Class::Neutral, false));
        assert_eq!(tput_class(&[100.0], &[104.0]), (Class::Improvement, false));
        // Exactly at the tolerance is neutral, as before.
        let (b, n) = (stats(&[1.0]), stats(&[1.05]));
        assert_eq!(classify(true, 0.05, 0.05, &b, &n), (Class::Neutral, false));
    }

    #[test]
    fn a_change_inside_the_runs_range_is_neutral_within_noise() {
        // Baseline ±3 %, new mean -4 %: beyond the 3 % tolerance, but the
        // best new run (97) is not below the worst baseline run less 3 %.
        let base = [97.0, 100.0, 103.0];
        assert_eq!(
            tput_class(&base, &[95.0, 96.0, 97.0]),
            (Class::Neutral, true)
        );
        // -8 %: even the best new run (93) is below 97 · 0.97 = 94.09.
        assert_eq!(
            tput_class(&base, &[91.0, 92.0, 93.0]),
            (Class::Regression, false)
        );
        // A single new run against repeated baselines.
        assert_eq!(tput_class(&base, &[96.0]), (Class::Neutral, true));
        assert_eq!(tput_class(&base, &[92.0]), (Class::Regression, false));
        // Within tolerance stays plain neutral (not "within noise").
        assert_eq!(tput_class(&base, &[99.0, 100.0]), (Class::Neutral, false));
    }

    #[test]
    fn improvements_need_separation_too_and_latency_mirrors() {
        let base = [97.0, 100.0, 103.0];
        assert_eq!(tput_class(&base, &[104.0, 105.0]), (Class::Neutral, true));
        assert_eq!(
            tput_class(&base, &[107.0, 108.0]),
            (Class::Improvement, false)
        );
        // Lower is better: +8 % latency with separated runs regresses,
        // +4 % overlapping the baseline's range is noise.
        let (b, n) = (stats(&[0.97, 1.0, 1.03]), stats(&[1.07, 1.08, 1.09]));
        assert_eq!(
            classify(false, 0.03, 0.08, &b, &n),
            (Class::Regression, false)
        );
        let (b, n) = (stats(&[0.97, 1.0, 1.03]), stats(&[1.03, 1.04, 1.05]));
        assert_eq!(classify(false, 0.03, 0.04, &b, &n), (Class::Neutral, true));
    }

    #[test]
    fn stats_and_spread() {
        let s = stats(&[97.0, 100.0, 103.0]);
        assert_eq!((s.n, s.mean, s.min, s.max), (3, 100.0, 97.0, 103.0));
        assert_eq!(s.spread(), Some(0.03));
        assert_eq!(Stats::of(&[]), None);
        assert_eq!(stats(&[0.0, 0.0]).spread(), None);
    }

    #[test]
    fn repeats_are_pooled_by_default() {
        let base = vec![row(4, 97.0, 1.0), row(4, 100.0, 1.0), row(4, 103.0, 1.0)];
        let new = vec![row(4, 95.0, 1.0), row(4, 96.0, 1.0), row(4, 97.0, 1.0)];
        let mut policy = Policy::default();
        policy.tolerances.insert("tput_per_gpu".into(), 0.03);
        policy.tolerances.insert("output_tput_per_gpu".into(), 0.03);
        let c = compare(new, base, MetricSet::Default.defs(), &policy);
        assert!(c.duplicates.is_empty());
        assert!(c.has_repeats());
        let p = &c.points[0];
        assert_eq!((p.n_baseline, p.n_new), (3, 3));
        assert_eq!(p.cells[0].baseline, Some(100.0));
        assert_eq!(p.cells[0].new, Some(96.0));
        assert_eq!(p.cells[0].class, Some(Class::Neutral));
        assert!(p.cells[0].within_noise);
        assert_eq!(c.within_noise(), 2, "tput and output tput");
        assert_eq!(c.verdict(), "no_regressions");
        let j = c.to_json();
        assert_eq!(j["repeats"], "pool");
        let pj = &j["points"][0];
        assert_eq!(pj["n"], json!({"baseline": 3, "new": 3}));
        assert_eq!(pj["baseline_stats"]["tput_per_gpu"]["min"], 97.0);
        assert_eq!(pj["new_stats"]["tput_per_gpu"]["max"], 97.0);
        assert_eq!(pj["within_noise"]["tput_per_gpu"], true);
        assert_eq!(pj["within_noise"]["mean_ttft"], false);
    }

    #[test]
    fn counts_give_every_point_one_state_and_one_line() {
        // The case: 7 points, two at -12 % tput (tput and output
        // tput regress at each), one improved, the rest unchanged.
        let concs = [4, 8, 16, 32, 64, 128, 256];
        let base: Vec<Row> = concs.iter().map(|&c| row(c, 100.0, 1.0)).collect();
        let new: Vec<Row> = concs
            .iter()
            .map(|&c| match c {
                4 | 8 => row(c, 88.0, 1.0),
                16 => row(c, 110.0, 1.0),
                _ => row(c, 101.0, 1.0),
            })
            .collect();
        let c = compare(new, base, MetricSet::Default.defs(), &Policy::default());
        let n = c.counts();
        assert_eq!(
            n,
            Counts {
                matched: 7,
                regressed_points: 2,
                regressed_metrics: 4,
                improved: 1,
                unchanged: 4,
                inconclusive: 0,
                other_hardware: 0
            }
        );
        assert_eq!(n.regressed_metrics, c.regressions.len());
        assert_eq!(
            n.line(),
            "2 points regressed (4 metrics) · 1 improved · 4 unchanged · 0 inconclusive"
        );
        let j = c.to_json();
        assert!(
            j.get("counts").is_none(),
            "the counts live in the summary, once"
        );
        assert_eq!(j["points"][0]["state"], "regressed");
        assert_eq!(j["points"][2]["state"], "improved");
    }

    #[test]
    fn a_mean_beyond_tolerance_inside_the_runs_is_inconclusive() {
        // Two of three new runs down 12-13 %, the third not: the mean drops
        // 9.4 % but the runs overlap the baseline's.
        let base = vec![row(4, 98.0, 1.0), row(4, 100.0, 1.0), row(4, 102.0, 1.0)];
        let new = vec![row(4, 87.0, 1.0), row(4, 88.0, 1.0), row(4, 96.8, 1.0)];
        let c = compare(new, base, MetricSet::Default.defs(), &Policy::default());
        assert_eq!(c.points[0].state, PointState::Inconclusive);
        let n = c.counts();
        assert_eq!((n.inconclusive, n.regressed_points, n.unchanged), (1, 0, 0));
        assert_eq!(
            n.line(),
            "0 points regressed (0 metrics) · 0 improved · 0 unchanged · 1 inconclusive"
        );
    }

    fn on(mut r: Row, hw: &str, image: &str) -> Row {
        r.metrics.insert("hw".into(), hw.into());
        r.metrics.insert("image".into(), image.into());
        r.key = key_from_agg(&r.metrics, &r.origin).expect("key");
        r
    }

    #[test]
    fn machines_name_the_cluster_image_and_digest() {
        let r = on(row(4, 1.0, 1.0), "B200-DGXC_03", "img:v1@sha256:abc123");
        assert_eq!(
            Machine::of(&r),
            Machine {
                hw: Some("b200-dgxc".into()),
                image: Some("img:v1".into()),
                digest: Some("sha256:abc123".into()),
            }
        );
        let mut r = on(row(4, 1.0, 1.0), "b200", "img:v1");
        r.metrics.insert("image_digest".into(), "sha256:def".into());
        let m = Machine::of(&r);
        assert_eq!(
            (m.hw.as_deref(), m.digest.as_deref()),
            (Some("b200"), Some("sha256:def"))
        );
        assert_eq!(
            cluster_of("h200-nv_x1"),
            "h200-nv_x1",
            "only a numeric node is cut"
        );
    }

    #[test]
    fn a_baseline_on_another_cluster_is_flagged_not_dropped() {
        // Same hardware key (b200), other cluster: matched, compared, flagged.
        let base = vec![
            on(row(4, 100.0, 1.0), "b200-nb_1", "img:v1"),
            on(row(8, 100.0, 1.0), "b200-dgxc_01", "img:v1"),
        ];
        let new = vec![
            on(row(4, 90.0, 1.0), "b200-dgxc_03", "img:v2"),
            on(row(8, 100.0, 1.0), "b200-dgxc_02", "img:v2"),
        ];
        let c = compare(new, base, MetricSet::Default.defs(), &Policy::default());
        assert_eq!(c.points.len(), 2);
        assert!(c.points[0].other_hardware, "conc 4: nb vs dgxc");
        assert!(
            !c.points[1].other_hardware,
            "conc 8: another node of one cluster; a new image is no other hardware"
        );
        assert_eq!(c.points[0].state, PointState::Regressed, "still compared");
        assert_eq!(c.counts().other_hardware, 1);
        let j = c.to_json();
        assert_eq!(j["points"][0]["other_hardware"], true);
        assert_eq!(j["points"][0]["ran_on"]["baseline"][0]["hw"], "b200-nb");
        // A baseline that does not say where it ran is not flagged.
        let unknown = Machine {
            hw: None,
            image: None,
            digest: None,
        };
        let dgxc = Machine {
            hw: Some("b200-dgxc".into()),
            image: None,
            digest: None,
        };
        assert!(!other_hardware(
            std::slice::from_ref(&unknown),
            std::slice::from_ref(&dgxc)
        ));
    }
}
