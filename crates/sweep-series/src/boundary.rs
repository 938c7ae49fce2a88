//! A threshold learnt from a series: the boundary a new value of the series
//! must not cross to count as unchanged.
//!
//! The model is Bencher's t-test threshold: with at least
//! [`MIN_SAMPLES`] values since the series' last change point, the boundary
//! is the one-sided Student t prediction bound of one new value,
//! `mean ∓ t(confidence, n − 1) · s · √(1 + 1/n)`, on the side that is worse
//! for the metric. A value is a regression when it is beyond the boundary
//! *and* its change from the mean is at least the minimum practical change,
//! so a very quiet series does not flag a change nobody would act on. With
//! fewer values there is no boundary, and the caller falls back to its fixed
//! tolerance and says so.

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::series::Better;

/// Values needed before a boundary is learnt (the default).
pub const MIN_SAMPLES: usize = 5;

/// The settings of a boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// One-sided confidence of the bound (0.99: one stable run in a hundred
    /// crosses it by chance).
    pub confidence: f64,
    /// Minimum relative change from the mean that can count as a regression
    /// (0.02: 2 %).
    pub min_change: f64,
    /// Values needed.
    pub min_samples: usize,
    /// At most this many of the newest values are used, so that the
    /// boundary follows the series as it is now.
    pub window: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            confidence: 0.99,
            min_change: 0.02,
            min_samples: MIN_SAMPLES,
            window: 30,
        }
    }
}

/// A learnt boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Boundary {
    /// Values it was learnt from.
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (divisor n − 1).
    pub stddev: f64,
    /// The value past which a new value is worse than the series allows.
    pub limit: f64,
    /// `limit` relative to the mean (negative below it).
    pub limit_change: f64,
    pub better: Better,
}

/// The judgement of one value against a boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// The value's change from the mean (relative).
    pub change: f64,
    /// How much of the room between the mean and the limit the value used,
    /// in percent, on the worse side (0 or less when it moved the better way).
    pub percent_of_limit: f64,
    /// Beyond the boundary and at least the minimum practical change.
    pub regressed: bool,
}

/// Learns the boundary of `values` (oldest first); `None` with fewer than
/// `settings.min_samples` finite values, or when the mean is zero.
#[must_use]
pub fn learn(values: &[f64], better: Better, settings: &Settings) -> Option<Boundary> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let recent = &finite[finite.len().saturating_sub(settings.window.max(2))..];
    let n = recent.len();
    if n < settings.min_samples.max(2) {
        return None;
    }
    let nf = n as f64;
    let mean = recent.iter().sum::<f64>() / nf;
    if mean == 0.0 {
        return None;
    }
    let var = recent.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (nf - 1.0);
    let stddev = var.sqrt();
    let t = StudentsT::new(0.0, 1.0, nf - 1.0)
        .ok()?
        .inverse_cdf(settings.confidence);
    let half = t * stddev * (1.0 + 1.0 / nf).sqrt();
    let limit = match better {
        Better::Higher => mean - half,
        Better::Lower => mean + half,
    };
    Some(Boundary {
        n,
        mean,
        stddev,
        limit,
        limit_change: limit / mean - 1.0,
        better,
    })
}

impl Boundary {
    /// The value past which a new value regresses: the boundary, or the
    /// minimum practical change from the mean where that lies further out
    /// (what a picture draws, so a value past the line is a regression).
    #[must_use]
    pub fn regression_limit(&self, settings: &Settings) -> f64 {
        let practical = self.mean.abs() * settings.min_change;
        match self.better {
            Better::Higher => self.limit.min(self.mean - practical),
            Better::Lower => self.limit.max(self.mean + practical),
        }
    }

    /// Judges `value` against the boundary.
    #[must_use]
    pub fn judge(&self, value: f64, settings: &Settings) -> Judgement {
        let change = value / self.mean - 1.0;
        let room = (self.limit - self.mean).abs();
        let worse_by = match self.better {
            Better::Higher => self.mean - value,
            Better::Lower => value - self.mean,
        };
        let percent_of_limit = if room > 0.0 {
            worse_by / room * 100.0
        } else if worse_by > 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
        let beyond = match self.better {
            Better::Higher => value < self.limit,
            Better::Lower => value > self.limit,
        };
        Judgement {
            change,
            percent_of_limit,
            regressed: beyond && worse_by / self.mean.abs() >= settings.min_change,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_regression_limit_is_the_boundary_or_the_practical_change_whichever_is_further() {
        let settings = Settings::default();
        let quiet = learn(
            &[100.0, 100.1, 99.9, 100.0, 100.05, 99.95],
            Better::Higher,
            &settings,
        )
        .expect("learnt");
        assert!(quiet.limit > 98.0, "{quiet:?}");
        assert!((quiet.regression_limit(&settings) - 98.0).abs() < 1e-9);
        let noisy = learn(
            &[100.0, 90.0, 110.0, 95.0, 105.0, 100.0],
            Better::Lower,
            &settings,
        )
        .expect("learnt");
        assert!((noisy.regression_limit(&settings) - noisy.limit).abs() < 1e-12);
        // A value past the line regresses; one just inside does not.
        for b in [quiet, noisy] {
            let line = b.regression_limit(&settings);
            let step = match b.better {
                Better::Higher => -1e-6,
                Better::Lower => 1e-6,
            };
            assert!(b.judge(line + step, &settings).regressed, "{b:?}");
            assert!(!b.judge(line - step, &settings).regressed, "{b:?}");
        }
    }

    #[test]
    fn too_few_values_learn_nothing() {
        assert!(learn(&[1.0, 2.0, 3.0, 4.0], Better::Higher, &Settings::default()).is_none());
        assert!(
            learn(
                &[1.0, 2.0, 3.0, 4.0, 5.0],
                Better::Higher,
                &Settings::default()
            )
            .is_some()
        );
    }

    #[test]
    fn the_bound_is_the_t_prediction_bound() {
        // mean 100, s = 1.5811 (values 98..102), n 5, t(0.99, 4) = 3.7469.
        let b = learn(
            &[98.0, 99.0, 100.0, 101.0, 102.0],
            Better::Higher,
            &Settings::default(),
        )
        .expect("a boundary");
        let half = 3.746_947 * 1.581_139 * (1.2f64).sqrt();
        assert!((b.limit - (100.0 - half)).abs() < 1e-3, "{b:?}");
        let lower = learn(
            &[98.0, 99.0, 100.0, 101.0, 102.0],
            Better::Lower,
            &Settings::default(),
        )
        .expect("a boundary");
        assert!((lower.limit - (100.0 + half)).abs() < 1e-3);
    }

    #[test]
    fn a_value_must_cross_the_bound_and_the_practical_minimum() {
        let s = Settings::default();
        let quiet = learn(&[100.0, 100.1, 99.9, 100.0, 100.05], Better::Higher, &s).expect("b");
        // Beyond the tight bound but only 1 % down: not a regression.
        let j = quiet.judge(99.0, &s);
        assert!(j.percent_of_limit > 100.0 && !j.regressed, "{j:?}");
        assert!(quiet.judge(97.0, &s).regressed);
        // An improvement never regresses.
        assert!(!quiet.judge(120.0, &s).regressed);
        assert!(quiet.judge(120.0, &s).percent_of_limit < 0.0);
    }
}
