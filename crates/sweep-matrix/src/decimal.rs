//! Exact decimals for the DRAM budget (§7.4) and priority scores (§12): a
//! number is taken as the exact value of its shortest textual form
//! (`0.8` is 8/10, not the nearest binary double).

use std::fmt;

/// `mantissa × 10^-scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    /// Signed digits.
    pub mantissa: i128,
    /// Number of fraction digits.
    pub scale: u32,
}

impl Decimal {
    /// Zero.
    pub const ZERO: Decimal = Decimal {
        mantissa: 0,
        scale: 0,
    };

    /// Parses `-12`, `0.75`, `1e-3`, `2.5E+2`, `.5`. `None` for anything else
    /// or values too large for 38 digits.
    #[must_use]
    pub fn parse(text: &str) -> Option<Decimal> {
        let t = text.trim();
        let (neg, body) = match t.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let (mant, exp) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
            None => (body, 0),
        };
        let (ip, fp) = mant.split_once('.').unwrap_or((mant, ""));
        if ip.is_empty() && fp.is_empty() {
            return None;
        }
        if !ip.chars().chain(fp.chars()).all(|c| c.is_ascii_digit()) {
            return None;
        }
        let digits = format!("{ip}{fp}");
        let mut mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        let mut scale = i64::try_from(fp.len()).ok()? - i64::from(exp);
        if scale < 0 {
            mantissa = mantissa.checked_mul(10i128.checked_pow(u32::try_from(-scale).ok()?)?)?;
            scale = 0;
        }
        if neg {
            mantissa = -mantissa;
        }
        Some(Decimal {
            mantissa,
            scale: u32::try_from(scale).ok()?,
        })
    }

    fn rescale(self, scale: u32) -> Option<Decimal> {
        if scale < self.scale {
            return None;
        }
        Some(Decimal {
            mantissa: self
                .mantissa
                .checked_mul(10i128.checked_pow(scale - self.scale)?)?,
            scale,
        })
    }

    /// Exact sum (`None` on overflow).
    #[must_use]
    pub fn checked_add(self, other: Decimal) -> Option<Decimal> {
        let s = self.scale.max(other.scale);
        let (a, b) = (self.rescale(s)?, other.rescale(s)?);
        Some(Decimal {
            mantissa: a.mantissa.checked_add(b.mantissa)?,
            scale: s,
        })
    }

    /// Rounds half away from zero to `places` fraction digits.
    #[must_use]
    pub fn round_half_up(self, places: u32) -> Decimal {
        if self.scale <= places {
            return self.rescale(places).unwrap_or(self);
        }
        let div = 10i128.pow(self.scale - places);
        let q = self.mantissa / div;
        let r = (self.mantissa % div).abs();
        let q = if r * 2 >= div {
            q + self.mantissa.signum()
        } else {
            q
        };
        Decimal {
            mantissa: q,
            scale: places,
        }
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let neg = self.mantissa < 0;
        let digits = self.mantissa.unsigned_abs().to_string();
        let scale = self.scale as usize;
        let padded = if digits.len() <= scale {
            format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
        } else {
            digits
        };
        let (ip, fp) = padded.split_at(padded.len() - scale);
        if neg {
            f.write_str("-")?;
        }
        if scale == 0 {
            write!(f, "{ip}")
        } else {
            write!(f, "{ip}.{fp}")
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn parse_and_format() {
        assert_eq!(
            d("0.75"),
            Decimal {
                mantissa: 75,
                scale: 2
            }
        );
        assert_eq!(
            d("1e-3"),
            Decimal {
                mantissa: 1,
                scale: 3
            }
        );
        assert_eq!(
            d("2.5E+2"),
            Decimal {
                mantissa: 250,
                scale: 0
            }
        );
        assert_eq!(d("-6.25").to_string(), "-6.25");
        assert_eq!(d("0.005").to_string(), "0.005");
        assert!(Decimal::parse("abc").is_none());
        assert!(Decimal::parse("").is_none());
    }

    #[test]
    fn rounding() {
        let s = d("1.0").checked_add(d("0.0005")).unwrap();
        assert_eq!(s.round_half_up(3).to_string(), "1.001");
        assert_eq!(d("2.2455").round_half_up(3).to_string(), "2.246");
        assert_eq!(d("-6.25").round_half_up(3).to_string(), "-6.250");
        assert_eq!(d("-0.0005").round_half_up(3).to_string(), "-0.001");
        assert_eq!(d("6").round_half_up(3).to_string(), "6.000");
        assert_eq!(d("0").round_half_up(3).to_string(), "0.000");
    }
}
