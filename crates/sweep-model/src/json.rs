//! The plain-run scan of JSON strings: which of eight bytes end a run of
//! bytes that a JSON string holds unescaped (`"`, `\\`, control bytes), in
//! a handful of integer operations instead of a byte-by-byte loop. Used by
//! `collect-results aggregate` to validate result files as it re-indents
//! them.

/// The bytes of `x` (little-endian) that are `"`, `\\` or below 0x20, as
/// 0x80 in their byte of the result; its lowest set bit marks exactly the
/// first such byte (`trailing_zeros() / 8` is its index). Bits above the
/// first special byte may be set spuriously (the usual borrow of the
/// zero-byte test), never below it, and the result is zero iff no byte is
/// special: `(v - 0x01…) & !v & 0x80…` is nonzero iff some byte of `v` is
/// zero, and with 0x20 in place of 0x01 iff some byte is below 0x20.
#[must_use]
pub fn special_mask(x: u64) -> u64 {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let quote = zero(x ^ (ONES * u64::from(b'"')));
    let backslash = zero(x ^ (ONES * u64::from(b'\\')));
    let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
    quote | backslash | control
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn special_mask_marks_the_first_special_byte_exactly() {
        let special = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let first = x.to_le_bytes().iter().position(|&b| special(b));
            let m = special_mask(x);
            assert_eq!(
                (m != 0).then(|| (m.trailing_zeros() / 8) as usize),
                first,
                "{x:#018x}"
            );
        }
        for pos in 0..8 {
            for b in 0..=255u8 {
                let mut w = *b"abcdefgh";
                w[pos] = b;
                let m = special_mask(u64::from_le_bytes(w));
                let want = special(b).then_some(pos);
                assert_eq!((m != 0).then(|| (m.trailing_zeros() / 8) as usize), want);
            }
        }
    }
}
