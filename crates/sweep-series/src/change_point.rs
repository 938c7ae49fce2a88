//! Change points of one series: E-Divisive means with a Student t
//! significance test, split over sliding windows and then merged, as MongoDB's
//! performance CI and Apache Otava run it.
//!
//! - The candidate of an interval is the split that maximises the energy
//!   statistic Q̂ of Matteson and James, "A Nonparametric Approach for
//!   Multiple Change Point Analysis of Multivariate Data" (JASA 109, 2014,
//!   doi:10.1080/01621459.2013.849605), with exponent α = 1.
//! - Split and merge are those of Fleming et al., "Hunter: Using Change Point
//!   Detection to Hunt for Performance Regressions" (ICPE 2023,
//!   doi:10.1145/3578244.3583719): E-Divisive in windows of `window` points
//!   (half a window apart) at a relaxed p-value gives the weak change points;
//!   the merge then drops, one at a time, the weakest (largest p-value, or
//!   smallest change once every p-value passes) and re-tests its neighbours.
//!
//! The significance test is the two-sided pooled Student t test of the two
//! sides' means, the sides' deviations taken over the whole side (divisor n),
//! as Otava computes it, so that the answers agree case by case
//! (`tests/otava.rs`, recorded from Otava 0.8.0).

use statrs::function::beta::beta_reg;

/// The settings of a detection. Defaults are Otava's (`AnalysisOptions`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Points per window of the split step (Otava's `window_len`).
    pub window: usize,
    /// A change point is kept when its p-value is at most this.
    pub max_pvalue: f64,
    /// ... and its relative change (the larger of before/after and
    /// after/before, minus one) is above this.
    pub min_magnitude: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            window: 50,
            max_pvalue: 0.001,
            min_magnitude: 0.0,
        }
    }
}

/// The two sides of a change point and the test between them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub mean_before: f64,
    pub mean_after: f64,
    /// Standard deviations with divisor n (0 for a side of one point).
    pub stddev_before: f64,
    pub stddev_after: f64,
    /// Two-sided p-value of the pooled t test; 1 where it is undefined
    /// (both sides constant and equal).
    pub pvalue: f64,
}

impl Stats {
    /// after / before − 1 (0 when the mean before is 0).
    #[must_use]
    pub fn forward_change(&self) -> f64 {
        if self.mean_before == 0.0 {
            0.0
        } else {
            self.mean_after / self.mean_before - 1.0
        }
    }

    fn backward_change(&self) -> f64 {
        if self.mean_after == 0.0 {
            0.0
        } else {
            self.mean_before / self.mean_after - 1.0
        }
    }

    /// The size of the change, whichever way it goes: the larger of
    /// |after/before − 1| and |before/after − 1|.
    #[must_use]
    pub fn magnitude(&self) -> f64 {
        self.forward_change()
            .abs()
            .max(self.backward_change().abs())
    }
}

/// A change point: the index of the first point of the new regime, the
/// statistic that chose it and the test of the regimes either side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    pub index: usize,
    pub qhat: f64,
    pub stats: Stats,
}

/// The change points of `series` (finite values, in time order), by index.
#[must_use]
pub fn change_points(series: &[f64], options: &Options) -> Vec<ChangePoint> {
    let first_pass = if options.max_pvalue < 0.05 {
        options.max_pvalue * 10.0
    } else if options.max_pvalue < 0.5 {
        options.max_pvalue * 2.0
    } else {
        options.max_pvalue
    };
    let weak = split(series, options.window.max(2), first_pass);
    merge(weak, series, options.max_pvalue, options.min_magnitude)
}

/// The split step: E-Divisive in each window, the union of what the windows
/// find, then every point re-tested against its neighbours over the whole
/// series.
fn split(series: &[f64], window: usize, max_pvalue: f64) -> Vec<ChangePoint> {
    let step = window / 2;
    let mut found: Vec<ChangePoint> = Vec::new();
    let mut start = 0;
    while start < series.len() {
        let end = (start + window).min(series.len());
        let local = e_divisive(&series[start..end], max_pvalue);
        let last = local.last().map_or(0, |c| c.index + start);
        for mut c in local {
            c.index += start;
            if !found.iter().any(|f| f.index == c.index) {
                found.push(c);
            }
        }
        start = last.max(start + step);
    }
    found.sort_by_key(|c| c.index);
    let indices: Vec<usize> = found.iter().map(|c| c.index).collect();
    found
        .into_iter()
        .map(|c| retest(c, series, &indices))
        .collect()
}

/// The merge step (Fleming et al., section 3.3).
fn merge(
    mut points: Vec<ChangePoint>,
    series: &[f64],
    max_pvalue: f64,
    min_magnitude: f64,
) -> Vec<ChangePoint> {
    while !points.is_empty() {
        // The weakest: the first largest p-value; if every p-value passes,
        // the first smallest change, which stays when it is large enough.
        let mut weakest = first_max_by(&points, |c| c.stats.pvalue);
        if points[weakest].stats.pvalue < max_pvalue {
            weakest = first_max_by(&points, |c| -c.stats.magnitude());
            if points[weakest].stats.magnitude() > min_magnitude {
                return points;
            }
        }
        points.remove(weakest);
        let indices: Vec<usize> = points.iter().map(|c| c.index).collect();
        for i in [weakest, weakest + 1] {
            if i < points.len() {
                points[i] = retest(points[i], series, &indices);
            }
        }
    }
    points
}

fn first_max_by(points: &[ChangePoint], key: impl Fn(&ChangePoint) -> f64) -> usize {
    let mut best = 0;
    for (i, c) in points.iter().enumerate().skip(1) {
        if key(c) > key(&points[best]) {
            best = i;
        }
    }
    best
}

/// `point` tested between its neighbours among `indices` (which holds it).
fn retest(point: ChangePoint, series: &[f64], indices: &[usize]) -> ChangePoint {
    let before = indices
        .iter()
        .copied()
        .filter(|&i| i < point.index)
        .max()
        .unwrap_or(0);
    let after = indices
        .iter()
        .copied()
        .filter(|&i| i > point.index)
        .min()
        .unwrap_or(series.len());
    ChangePoint {
        stats: t_test(&series[before..point.index], &series[point.index..after]),
        ..point
    }
}

/// E-Divisive over one window: split the interval with the best candidate
/// while the candidate is significant.
fn e_divisive(series: &[f64], max_pvalue: f64) -> Vec<ChangePoint> {
    let energy = Energy::new(series);
    let mut points: Vec<ChangePoint> = Vec::new();
    loop {
        let bounds = intervals(&points, series.len());
        let mut best: Option<(usize, f64, usize, usize)> = None;
        for &(s, e) in &bounds {
            if e - s > 1 {
                let (index, qhat) = energy.candidate(s, e);
                if best.is_none_or(|b| qhat > b.1) {
                    best = Some((index, qhat, s, e));
                }
            }
        }
        let Some((index, qhat, s, e)) = best else {
            break;
        };
        let stats = t_test(&series[s..index], &series[index..e]);
        if stats.pvalue.is_nan() || stats.pvalue > max_pvalue {
            break;
        }
        points.push(ChangePoint { index, qhat, stats });
        points.sort_by_key(|c| c.index);
    }
    points
}

/// The half-open intervals between change points.
fn intervals(points: &[ChangePoint], len: usize) -> Vec<(usize, usize)> {
    let mut cuts = vec![0];
    cuts.extend(points.iter().map(|c| c.index));
    cuts.push(len);
    cuts.windows(2)
        .filter(|w| w[0] != w[1])
        .map(|w| (w[0], w[1]))
        .collect()
}

/// Pairwise distances |zᵢ − zⱼ| of one window, with column prefix sums so
/// that the sum of a column over any row range is one subtraction.
struct Energy {
    n: usize,
    /// `prefix[k * (n + 1) + i]` = Σ_{i' < i} |z_{i'} − z_k|.
    prefix: Vec<f64>,
}

impl Energy {
    fn new(z: &[f64]) -> Energy {
        let n = z.len();
        let mut prefix = vec![0.0; n * (n + 1)];
        for k in 0..n {
            let row = &mut prefix[k * (n + 1)..(k + 1) * (n + 1)];
            for i in 0..n {
                row[i + 1] = row[i] + (z[i] - z[k]).abs();
            }
        }
        Energy { n, prefix }
    }

    /// Σ_{a ≤ i < b} |zᵢ − z_k|.
    fn column(&self, a: usize, b: usize, k: usize) -> f64 {
        let row = k * (self.n + 1);
        self.prefix[row + b] - self.prefix[row + a]
    }

    /// The best split τ of `[s, e)` and its Q̂: the maximum over
    /// s < τ < κ ≤ e of Q̂(z[s..τ], z[τ..κ]), where for X of n and Y of m
    /// points
    ///
    /// Q̂ = 2/(m+n) Σ|X−Y| − 2m/((m+n)(n−1)) Σ_{i<k}|Xᵢ−X_k| − 2n/((m+n)(m−1)) Σ_{j<k}|Yⱼ−Y_k|
    ///
    /// (a term whose divisor is zero counts zero). Pairs are scanned τ
    /// first, then κ, and the first maximum wins; the pairs with κ ≤ τ
    /// count as zero, as in the dense matrix Otava takes the maximum of, so
    /// a window whose every split scores below zero yields τ = s + 2 there.
    fn candidate(&self, s: usize, e: usize) -> (usize, f64) {
        let mut best = (s + 1, f64::NEG_INFINITY);
        let mut within_x = 0.0;
        for tau in s + 1..e {
            if tau > s + 1 {
                within_x += self.column(s, tau - 1, tau - 1);
            }
            // Cells of this row left of the diagonal: zeros of the matrix.
            if tau > s + 1 && best.1 < 0.0 {
                best = (tau, 0.0);
            }
            let n = (tau - s) as f64;
            let mut cross = 0.0;
            let mut within_y = 0.0;
            for kappa in tau + 1..=e {
                let last = kappa - 1;
                cross += self.column(s, tau, last);
                within_y += self.column(tau, last, last);
                let m = (kappa - tau) as f64;
                let b = if n > 1.0 {
                    2.0 * m / ((m + n) * (n - 1.0))
                } else {
                    0.0
                };
                let c = if m > 1.0 {
                    2.0 * n / ((m + n) * (m - 1.0))
                } else {
                    0.0
                };
                let q = 2.0 / (m + n) * cross - b * within_x - c * within_y;
                if q > best.1 {
                    best = (tau, q);
                }
            }
        }
        best
    }
}

/// Two-sided pooled Student t test of the means of `left` and `right`, with
/// the deviations given to it taken with divisor n (as Otava passes
/// `numpy.std` to `scipy.stats.ttest_ind_from_stats`).
#[must_use]
pub fn t_test(left: &[f64], right: &[f64]) -> Stats {
    let (m1, s1) = mean_std(left);
    let (m2, s2) = mean_std(right);
    let (n1, n2) = (left.len() as f64, right.len() as f64);
    let pvalue = if left.len() + right.len() > 2 {
        let df = n1 + n2 - 2.0;
        let pooled = ((n1 - 1.0) * s1 * s1 + (n2 - 1.0) * s2 * s2) / df;
        let t = (m1 - m2) / (pooled * (1.0 / n1 + 1.0 / n2)).sqrt();
        if t.is_nan() {
            1.0
        } else if t.is_infinite() {
            0.0
        } else {
            // P(|T| ≥ |t|) = I_{df/(df+t²)}(df/2, 1/2).
            beta_reg(df / 2.0, 0.5, df / (df + t * t))
        }
    } else {
        1.0
    };
    Stats {
        mean_before: m1,
        mean_after: m2,
        stddev_before: s1,
        stddev_after: s2,
        pvalue,
    }
}

fn mean_std(x: &[f64]) -> (f64, f64) {
    if x.is_empty() {
        return (f64::NAN, 0.0);
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    if x.len() < 2 {
        return (mean, 0.0);
    }
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic noise source for tests (SplitMix64 to a uniform in
    /// [-1, 1)).
    fn noise(seed: u64, n: usize) -> Vec<f64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect()
    }

    /// The brute-force Q̂ of one split, straight from the formula.
    fn qhat(x: &[f64], y: &[f64]) -> f64 {
        let (n, m) = (x.len() as f64, y.len() as f64);
        let cross: f64 = x
            .iter()
            .flat_map(|a| y.iter().map(move |b| (a - b).abs()))
            .sum();
        let pairs = |v: &[f64]| -> f64 {
            let mut s = 0.0;
            for i in 0..v.len() {
                for k in i + 1..v.len() {
                    s += (v[i] - v[k]).abs();
                }
            }
            s
        };
        let b = if n > 1.0 {
            2.0 * m / ((m + n) * (n - 1.0))
        } else {
            0.0
        };
        let c = if m > 1.0 {
            2.0 * n / ((m + n) * (m - 1.0))
        } else {
            0.0
        };
        2.0 / (m + n) * cross - b * pairs(x) - c * pairs(y)
    }

    #[test]
    fn the_candidate_is_the_brute_force_maximum_of_qhat() {
        let mut z = noise(7, 40);
        for v in &mut z[23..] {
            *v += 3.0;
        }
        let energy = Energy::new(&z);
        for (s, e) in [(0, 40), (5, 31), (0, 2), (10, 13)] {
            let mut best = (s + 1, f64::NEG_INFINITY);
            for tau in s + 1..e {
                for kappa in tau + 1..=e {
                    let q = qhat(&z[s..tau], &z[tau..kappa]);
                    if q > best.1 {
                        best = (tau, q);
                    }
                }
            }
            let got = energy.candidate(s, e);
            if best.1 >= 0.0 {
                assert_eq!(got.0, best.0, "[{s}, {e})");
            }
            assert!(
                (got.1 - best.1.max(0.0)).abs() < 1e-9,
                "[{s}, {e}): {got:?} vs {best:?}"
            );
        }
    }

    #[test]
    fn a_planted_step_is_found_where_it_was_planted() {
        let mut z: Vec<f64> = noise(1, 60).iter().map(|e| 100.0 + e).collect();
        for v in &mut z[37..] {
            *v -= 3.0;
        }
        let found = change_points(&z, &Options::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 37);
        assert!(found[0].stats.forward_change() < -0.02);
        assert!(found[0].stats.pvalue < 0.001);
    }

    #[test]
    fn noise_alone_has_no_change_point() {
        let z: Vec<f64> = noise(3, 200).iter().map(|e| 50.0 + 4.0 * e).collect();
        assert!(change_points(&z, &Options::default()).is_empty());
    }

    #[test]
    fn the_t_test_matches_known_values() {
        // scipy.stats.ttest_ind_from_stats(1.0, 1.0, 10, 2.0, 1.0, 10) → p 0.0383…
        let left: Vec<f64> = vec![0.0, 2.0, 0.0, 2.0, 0.0, 2.0, 0.0, 2.0, 0.0, 2.0];
        let right: Vec<f64> = left.iter().map(|v| v + 1.0).collect();
        let s = t_test(&left, &right);
        assert!((s.stddev_before - 1.0).abs() < 1e-12);
        // t = -1 / sqrt((9+9)/18 * 0.2) = -2.2360…, df 18.
        assert!((s.pvalue - 0.038_250_1).abs() < 1e-6, "{}", s.pvalue);
        assert_eq!(t_test(&[1.0, 1.0], &[1.0, 1.0]).pvalue, 1.0);
        assert_eq!(t_test(&[1.0, 1.0], &[2.0, 2.0]).pvalue, 0.0);
        assert_eq!(t_test(&[1.0], &[2.0]).pvalue, 1.0);
    }

    #[test]
    fn short_series_are_handled() {
        for n in 0..4 {
            let z: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let _ = change_points(&z, &Options::default());
        }
    }
}
