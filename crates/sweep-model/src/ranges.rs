//! The ranges a measured figure or a count must lie in where it enters a
//! tool (`collect-results process`, compare's loaders): finite, not
//! negative, and below a bound far above any real sweep, so that sums,
//! ratios, products of parallelism sizes and chart axes built from them
//! stay finite. A value outside is refused with the key that held it.

/// Largest token throughput (tokens/s) or other measured figure accepted:
/// about a million times a whole multi-node deployment's throughput today
/// (10^6 tokens/s), and far enough below `f64::MAX` (1.8e308) that every
/// sum, ratio and axis bound made from such figures stays finite.
pub const MAX_FIGURE: f64 = 1e12;

/// Largest count accepted (concurrency, TP, EP, PP, DCP, PCP, workers,
/// GPUs): 2^20, a thousand times the largest concurrency swept today;
/// a product of three such sizes (the GPU count) still fits an `i64`.
pub const MAX_COUNT: i64 = 1 << 20;

/// Why a value is out of range; the caller adds the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RangeError {
    #[error("is {0}, not a finite number")]
    NotFinite(f64),
    #[error("is negative ({0})")]
    Negative(f64),
    #[error("is {0:e}, above the limit of {MAX_FIGURE:e} (MAX_FIGURE)")]
    TooLarge(f64),
    #[error("must be a positive integer, found {0}")]
    NotPositive(i64),
    #[error("must not be negative, found {0}")]
    NegativeCount(i64),
    #[error("is {0}, above the limit of {MAX_COUNT} (MAX_COUNT)")]
    TooMany(i64),
}

/// A measured figure: finite, `0 ..= MAX_FIGURE`.
///
/// # Errors
/// The first rule the value breaks.
pub fn figure(v: f64) -> Result<f64, RangeError> {
    if !v.is_finite() {
        Err(RangeError::NotFinite(v))
    } else if v < 0.0 {
        Err(RangeError::Negative(v))
    } else if v > MAX_FIGURE {
        Err(RangeError::TooLarge(v))
    } else {
        Ok(v)
    }
}

/// A count that must be at least one: `1 ..= MAX_COUNT`.
///
/// # Errors
/// Zero or negative, or above [`MAX_COUNT`].
pub fn positive(n: i64) -> Result<i64, RangeError> {
    if n <= 0 {
        Err(RangeError::NotPositive(n))
    } else {
        at_most_max(n)
    }
}

/// A count that may be zero (the decode side of an aggregated multi-node
/// run): `0 ..= MAX_COUNT`.
///
/// # Errors
/// Negative, or above [`MAX_COUNT`].
pub fn non_negative(n: i64) -> Result<i64, RangeError> {
    if n < 0 {
        Err(RangeError::NegativeCount(n))
    } else {
        at_most_max(n)
    }
}

fn at_most_max(n: i64) -> Result<i64, RangeError> {
    if n > MAX_COUNT {
        Err(RangeError::TooMany(n))
    } else {
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_finite_non_negative_and_bounded() {
        assert_eq!(figure(0.0), Ok(0.0));
        assert_eq!(figure(16866.6), Ok(16866.6));
        assert_eq!(figure(MAX_FIGURE), Ok(MAX_FIGURE));
        assert_eq!(figure(-1.0), Err(RangeError::Negative(-1.0)));
        assert_eq!(figure(1.7e308), Err(RangeError::TooLarge(1.7e308)));
        assert!(matches!(figure(f64::NAN), Err(RangeError::NotFinite(_))));
        assert_eq!(
            figure(f64::INFINITY),
            Err(RangeError::NotFinite(f64::INFINITY))
        );
        assert_eq!(
            RangeError::TooLarge(1.7e308).to_string(),
            "is 1.7e308, above the limit of 1e12 (MAX_FIGURE)"
        );
    }

    #[test]
    fn counts_are_bounded() {
        assert_eq!(positive(8), Ok(8));
        assert_eq!(positive(0), Err(RangeError::NotPositive(0)));
        assert_eq!(positive(-4), Err(RangeError::NotPositive(-4)));
        assert_eq!(
            positive(MAX_COUNT + 1),
            Err(RangeError::TooMany(MAX_COUNT + 1))
        );
        assert_eq!(non_negative(0), Ok(0));
        assert_eq!(non_negative(-1), Err(RangeError::NegativeCount(-1)));
        // Three sizes at the limit multiply without overflow.
        assert!(
            MAX_COUNT
                .checked_mul(MAX_COUNT)
                .and_then(|p| p.checked_mul(MAX_COUNT))
                .is_some()
        );
    }
}
