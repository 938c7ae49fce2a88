//! JSON re-indentation for `aggregate`: each file's text is re-emitted as
//! one element of the output array in the layout Python's `json.dump(...,
//! indent=2)` writes, with its tokens (numbers, strings) copied verbatim.
//!
//! Three entry points, fastest first; each agrees with the next one on what
//! it accepts:
//! - [`reindent_canonical`] takes only text that is already in that layout
//!   (what the reference's `process` step writes) and copies it line by line;
//! - [`reindent_checked`] validates any JSON and re-indents it token by token;
//! - [`reindent`] re-indents text that is already known to be valid.

/// Newline plus indentation for up to 64 levels (deeper levels extend it).
const INDENT: &[u8] = b"\n                                                                                                                                ";

/// Re-emits already validated JSON `src` with 2-space indentation, nested
/// `depth` levels deep, appending to `out`. Tokens are copied verbatim.
pub fn reindent(src: &[u8], depth: usize, out: &mut Vec<u8>) {
    let mut depth = depth;
    let mut i = 0;
    let n = src.len();
    out.reserve(n + n / 2);
    while i < n {
        let c = src[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'"' => {
                // Find the closing quote, stepping over escapes.
                let start = i;
                i += 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', &src[i..]) {
                        Some(k) if src[i + k] == b'\\' => i += k + 2,
                        Some(k) => {
                            i += k + 1;
                            break;
                        }
                        None => {
                            i = n;
                            break;
                        }
                    }
                }
                out.extend_from_slice(&src[start..i.min(n)]);
            }
            b'{' | b'[' => {
                let close = if c == b'{' { b'}' } else { b']' };
                let mut j = i + 1;
                while j < n && matches!(src[j], b' ' | b'\t' | b'\n' | b'\r') {
                    j += 1;
                }
                if j < n && src[j] == close {
                    out.push(c);
                    out.push(close);
                    i = j + 1;
                } else {
                    out.push(c);
                    depth += 1;
                    newline(out, depth);
                    i += 1;
                }
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(out, depth);
                out.push(c);
                i += 1;
            }
            b',' => {
                out.push(b',');
                newline(out, depth);
                i += 1;
            }
            b':' => {
                out.extend_from_slice(b": ");
                i += 1;
            }
            _ => {
                let start = i;
                while i < n
                    && !matches!(
                        src[i],
                        b' ' | b'\t' | b'\n' | b'\r' | b',' | b'}' | b']' | b':'
                    )
                {
                    i += 1;
                }
                out.extend_from_slice(&src[start..i]);
            }
        }
    }
}

/// Appends a newline and the indentation for `depth` levels.
fn newline(out: &mut Vec<u8>, depth: usize) {
    let n = 1 + 2 * depth;
    if n <= INDENT.len() {
        out.extend_from_slice(&INDENT[..n]);
    } else {
        out.push(b'\n');
        out.resize(out.len() + 2 * depth, b' ');
    }
}

/// Nesting handled by [`reindent_checked`] (one bit per level).
const MAX_CHECKED_DEPTH: u32 = 64;

/// Validates `src` as one JSON value and appends it re-indented exactly as
/// [`reindent`] would, in one pass. Returns `false` with `out` unchanged
/// when `src` is not valid JSON or nests deeper than 64 levels; the caller
/// then lets serde_json decide (and word the error).
///
/// The grammar is what `serde_json` accepts when it skips a value
/// (`IgnoredAny`): RFC 8259, whitespace ` \t\n\r`, strings without raw
/// control characters and with the escapes `\" \\ \/ \b \f \n \r \t \uXXXX`
/// (a `\u` escape is not checked further), no limit on number sizes, only
/// whitespace after the value. `src` must be valid UTF-8 (checked by the
/// caller), so bytes from 0x80 up are accepted inside strings. The tests
/// compare the outcome with serde_json's on many malformed inputs.
pub fn reindent_checked(src: &[u8], depth: usize, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    out.reserve(src.len() + src.len() / 2);
    let ok = checked_value(src, depth, out).is_some();
    if !ok {
        out.truncate(start);
    }
    ok
}

fn skip_ws(src: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = src.get(i) {
        i += 1;
    }
    i
}

/// The index after the scalar (string, number, `true`, `false` or `null`)
/// that starts at `i`.
#[inline(always)]
fn scalar_end(src: &[u8], i: usize) -> Option<usize> {
    match *src.get(i)? {
        b'"' => string_end(src, i),
        b'-' | b'0'..=b'9' => number_end(src, i),
        c @ (b't' | b'f' | b'n') => {
            let word: &[u8] = match c {
                b't' => b"true",
                b'f' => b"false",
                _ => b"null",
            };
            src[i..].starts_with(word).then_some(i + word.len())
        }
        _ => None,
    }
}

/// Copies the token `src[i..end]` to `out`; returns `end`.
fn copied(src: &[u8], i: usize, end: usize, out: &mut Vec<u8>) -> usize {
    out.extend_from_slice(&src[i..end]);
    end
}

/// The index after the valid string that starts at `src[i] == '"'`.
#[inline(always)]
fn string_end(src: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        // Straight to the next quote, backslash or control character (or
        // to the last few bytes, which the match below steps through).
        j = first_marked(src, j, special_mask);
        match *src.get(j)? {
            b'"' => break,
            b'\\' => match *src.get(j + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                b'u' => {
                    let hex = src.get(j + 2..j + 6)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    j += 6;
                }
                _ => return None,
            },
            0..=0x1f => return None,
            _ => j += 1,
        }
    }
    Some(j + 1)
}

/// An object key at `i` (after whitespace) and its colon: `"key": `.
fn checked_key(src: &[u8], i: usize, out: &mut Vec<u8>) -> Option<usize> {
    let i = skip_ws(src, i);
    if src.get(i) != Some(&b'"') {
        return None;
    }
    let i = skip_ws(src, copied(src, i, string_end(src, i)?, out));
    if src.get(i) != Some(&b':') {
        return None;
    }
    out.extend_from_slice(b": ");
    Some(i + 1)
}

/// The index after the run of ASCII digits at `i`.
#[inline(always)]
fn digits(src: &[u8], i: usize) -> usize {
    let mut i = first_marked(src, i, non_digit_mask);
    while let Some(b'0'..=b'9') = src.get(i) {
        i += 1;
    }
    i
}

/// Scans `src` from `i` eight bytes at a time for the first byte that
/// `mask` marks (see [`special_mask`]); returns its index, or the index of
/// the last partial word (fewer than eight bytes left) when none is marked
/// before it, for the caller to finish byte by byte.
#[inline(always)]
fn first_marked(src: &[u8], mut i: usize, mask: impl Fn(u64) -> u64) -> usize {
    while let Some(&word) = src.get(i..).and_then(|s| s.first_chunk::<8>()) {
        let marked = mask(u64::from_le_bytes(word));
        if marked != 0 {
            return i + (marked.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i
}

/// The bytes of `x` (little-endian) that end a run a JSON string holds
/// unescaped (`"`, `\\` or below 0x20), as 0x80 in their byte of the
/// result; its lowest set bit marks exactly the first such byte. Bits above
/// the first special byte may be set spuriously (the usual borrow of the
/// zero-byte test), never below it, and the result is zero iff no byte is
/// special: `(v - 0x01…) & !v & 0x80…` is nonzero iff some byte of `v` is
/// zero, and with 0x20 in place of 0x01 iff some byte is below 0x20.
#[inline(always)]
fn special_mask(x: u64) -> u64 {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let quote = zero(x ^ (ONES * u64::from(b'"')));
    let backslash = zero(x ^ (ONES * u64::from(b'\\')));
    let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
    quote | backslash | control
}

/// The high bit of every byte of `x` that is not an ASCII digit. Exact for
/// every byte: after `^ 0x30` a digit is 0..=9, and `(b & 0x7f) + 0x76`
/// reaches 0x80 from 10 up without carrying into the next byte.
#[inline(always)]
fn non_digit_mask(x: u64) -> u64 {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const LOW7: u64 = ONES * 0x7f;
    const HIGH: u64 = ONES * 0x80;
    let a = x ^ (ONES * u64::from(b'0'));
    (((a & LOW7) + ONES * 0x76) | a) & HIGH
}

/// The index after the number that starts at `i`:
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
#[inline(always)]
fn number_end(src: &[u8], i: usize) -> Option<usize> {
    let mut j = i + usize::from(src[i] == b'-');
    match *src.get(j)? {
        b'0' => j += 1,
        b'1'..=b'9' => j = digits(src, j + 1),
        _ => return None,
    }
    if src.get(j) == Some(&b'.') {
        let k = digits(src, j + 1);
        if k == j + 1 {
            return None;
        }
        j = k;
    }
    if let Some(b'e' | b'E') = src.get(j) {
        j += 1;
        if let Some(b'+' | b'-') = src.get(j) {
            j += 1;
        }
        let k = digits(src, j);
        if k == j {
            return None;
        }
        j = k;
    }
    Some(j)
}

fn checked_value(src: &[u8], base: usize, out: &mut Vec<u8>) -> Option<()> {
    // Open containers, innermost in the lowest bit (1 = object).
    let mut stack: u64 = 0;
    let mut level: u32 = 0;
    let mut i = 0;
    loop {
        // A value is expected at `i`.
        i = skip_ws(src, i);
        let c = *src.get(i)?;
        match c {
            b'{' | b'[' => {
                let close = c + 2; // `}` and `]`
                let j = skip_ws(src, i + 1);
                out.push(c);
                if src.get(j) == Some(&close) {
                    out.push(close);
                    i = j + 1;
                } else {
                    if level == MAX_CHECKED_DEPTH {
                        return None;
                    }
                    level += 1;
                    stack = (stack << 1) | u64::from(c == b'{');
                    newline(out, base + level as usize);
                    i = if c == b'{' {
                        checked_key(src, j, out)?
                    } else {
                        j
                    };
                    continue;
                }
            }
            _ => i = copied(src, i, scalar_end(src, i)?, out),
        }
        // After a value: a comma, closing brackets, or the end.
        loop {
            i = skip_ws(src, i);
            if level == 0 {
                return (i == src.len()).then_some(());
            }
            let in_object = stack & 1 == 1;
            match *src.get(i)? {
                b',' => {
                    out.push(b',');
                    newline(out, base + level as usize);
                    i = if in_object {
                        checked_key(src, i + 1, out)?
                    } else {
                        i + 1
                    };
                    break;
                }
                c @ b'}' if in_object => out_close(out, &mut level, &mut stack, base, c),
                c @ b']' if !in_object => out_close(out, &mut level, &mut stack, base, c),
                _ => return None,
            }
            i += 1;
        }
    }
}

fn out_close(out: &mut Vec<u8>, level: &mut u32, stack: &mut u64, base: usize, c: u8) {
    *level -= 1;
    *stack >>= 1;
    newline(out, base + *level as usize);
    out.push(c);
}

/// Fast path of [`reindent_checked`] for text already laid out the way
/// Python's `json.dump(value, f, indent=2)` writes it: every line break
/// followed by exactly two spaces per open container, `"key": value`, a
/// comma right after each element but the last, `{}` and `[]` for empty
/// containers, optional trailing whitespace. That is the layout of every
/// file the `process` step writes, and for such text re-indenting `depth`
/// levels deeper only adds `2 * depth` spaces after each line break, so the
/// text is validated token by token but copied a line at a time.
///
/// Returns `false` with `out` unchanged for anything else, valid or not
/// (the caller then goes on to [`reindent_checked`]). When it returns
/// `true`, `src` is valid JSON and `out` got exactly what [`reindent`]
/// appends (the tests compare the two over many edited documents).
pub fn reindent_canonical(src: &[u8], depth: usize, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    let pad = match INDENT.get(1..=2 * depth) {
        Some(pad) => pad,
        None => return false,
    };
    out.reserve(src.len() + src.len() / 2);
    let ok = canonical_value(src, pad, out).is_some();
    if !ok {
        out.truncate(start);
    }
    ok
}

/// Copies the lines of `src` up to the line break at `i` (plus `pad`), then
/// checks that `level` indentation steps follow; returns the index after them.
#[inline(always)]
fn canonical_break(
    src: &[u8],
    i: usize,
    level: u32,
    copied: &mut usize,
    pad: &[u8],
    out: &mut Vec<u8>,
) -> Option<usize> {
    if src.get(i) != Some(&b'\n') {
        return None;
    }
    out.extend_from_slice(&src[*copied..=i]);
    out.extend_from_slice(pad);
    *copied = i + 1;
    let end = i + 1 + 2 * level as usize;
    let indent = src.get(i + 1..end)?;
    indent.iter().all(|&b| b == b' ').then_some(end)
}

/// An object key at `i` and its separator, exactly `"key": `.
#[inline(always)]
fn canonical_key(src: &[u8], i: usize) -> Option<usize> {
    if src.get(i) != Some(&b'"') {
        return None;
    }
    let j = string_end(src, i)?;
    (src.get(j..j + 2)? == b": ").then_some(j + 2)
}

fn canonical_value(src: &[u8], pad: &[u8], out: &mut Vec<u8>) -> Option<()> {
    // Open containers, innermost in the lowest bit (1 = object).
    let mut stack: u64 = 0;
    let mut level: u32 = 0;
    let mut i = 0;
    // `src[..copied]` is in `out` already.
    let mut copied = 0;
    loop {
        // A value is expected at `i`.
        let c = *src.get(i)?;
        match c {
            b'{' | b'[' => {
                if src.get(i + 1) == Some(&(c + 2)) {
                    i += 2;
                } else {
                    if level == MAX_CHECKED_DEPTH {
                        return None;
                    }
                    level += 1;
                    stack = (stack << 1) | u64::from(c == b'{');
                    i = canonical_break(src, i + 1, level, &mut copied, pad, out)?;
                    if c == b'{' {
                        i = canonical_key(src, i)?;
                    }
                    continue;
                }
            }
            _ => i = scalar_end(src, i)?,
        }
        // After a value: `,` and a line break, a line break and the
        // closing bracket, or (at the top) only whitespace to the end.
        loop {
            if level == 0 {
                if skip_ws(src, i) != src.len() {
                    return None;
                }
                out.extend_from_slice(&src[copied..i]);
                return Some(());
            }
            let in_object = stack & 1 == 1;
            if src.get(i) == Some(&b',') {
                i = canonical_break(src, i + 1, level, &mut copied, pad, out)?;
                if in_object {
                    i = canonical_key(src, i)?;
                }
                break;
            }
            level -= 1;
            stack >>= 1;
            i = canonical_break(src, i, level, &mut copied, pad, out)?;
            let close = if in_object { b'}' } else { b']' };
            if src.get(i) != Some(&close) {
                return None;
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small random edits of JSON documents (xorshift, so every run tests
    /// the same documents).
    struct Editor(u64);

    impl Editor {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        /// `doc` with 1 to `max_edits` bytes removed, replaced or inserted
        /// (from bytes that matter to JSON); `None` if that is not UTF-8.
        fn edit(&mut self, doc: &[u8], max_edits: usize) -> Option<Vec<u8>> {
            const ALPHABET: &[u8] = b" \t\n\r{}[],:\"\\/-+.0123456789eEtrufalsn\x01xu";
            let mut doc = doc.to_vec();
            for _ in 0..1 + self.below(max_edits) {
                let at = self.below(doc.len() + 1);
                match self.below(3) {
                    0 if at < doc.len() => {
                        doc.remove(at);
                    }
                    1 if at < doc.len() => doc[at] = ALPHABET[self.below(ALPHABET.len())],
                    _ => doc.insert(at, ALPHABET[self.below(ALPHABET.len())]),
                }
            }
            std::str::from_utf8(&doc).is_ok().then_some(doc)
        }
    }

    #[test]
    fn reindent_matches_python_indent_2() {
        let src = br#" {"a" : [1, {"b":"x,\"}]"}, [], {}], "c":{ } ,"d":-1.5e3, "e": [ ]} "#;
        let mut out = Vec::new();
        reindent(src, 0, &mut out);
        let want = "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"x,\\\"}]\"\n    },\n    [],\n    {}\n  ],\n  \"c\": {},\n  \"d\": -1.5e3,\n  \"e\": []\n}";
        assert_eq!(String::from_utf8(out).expect("utf8"), want);
    }

    /// `reindent_checked` accepts exactly what serde_json accepts (as
    /// `IgnoredAny`) and then writes what `reindent` writes, over many
    /// small edits of valid documents.
    #[test]
    fn checked_reindent_agrees_with_serde_json() {
        let seeds: [&[u8]; 6] = [
            br#" {"a" : [1, {"b":"x,\"}]\u00e9\/"}, [], {}], "c":{ } ,"d":-1.5e3, "e": [ ]} "#,
            b"[0, -0, 1.25E+10, 3e-2, true, false, null, \"\\t\\n\\u12aF\", [[[]]]]",
            "{\"k\u{e9}y\": \"v\u{20ac}\", \"n\": {\"m\": [{}, [ ], 12]}}".as_bytes(),
            b"  \"plain\"\n",
            b"-12.5e7",
            b"{\n  \"hw\": \"b200\",\n  \"conc\": 4,\n  \"x\": [\n    1,\n    2\n  ]\n}",
        ];
        let mut edits = Editor(0x9e37_79b9_7f4a_7c15);
        let (mut accepted, mut rejected) = (0, 0);
        for round in 0..20_000 {
            let Some(doc) = edits.edit(seeds[round % seeds.len()], 3) else {
                continue;
            };
            let mut fast = b"prefix".to_vec();
            let ok = reindent_checked(&doc, 1, &mut fast);
            let serde_ok = serde_json::from_slice::<serde::de::IgnoredAny>(&doc).is_ok();
            assert_eq!(ok, serde_ok, "{:?}", String::from_utf8_lossy(&doc));
            if ok {
                let mut slow = b"prefix".to_vec();
                reindent(&doc, 1, &mut slow);
                assert_eq!(fast, slow, "{:?}", String::from_utf8_lossy(&doc));
                accepted += 1;
            } else {
                assert_eq!(fast, b"prefix");
                rejected += 1;
            }
        }
        assert!(accepted > 1000 && rejected > 1000, "{accepted} {rejected}");
        // Deep nesting is left to serde_json.
        let deep = format!("{}1{}", "[".repeat(65), "]".repeat(65));
        assert!(!reindent_checked(deep.as_bytes(), 0, &mut Vec::new()));
        let ok = format!("{}1{}", "[".repeat(64), "]".repeat(64));
        assert!(reindent_checked(ok.as_bytes(), 0, &mut Vec::new()));
    }

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

    #[test]
    fn non_digit_mask_is_exact_for_every_byte() {
        for pos in 0..8 {
            for b in 0..=255u8 {
                let mut w = *b"01234567";
                w[pos] = b;
                let m = non_digit_mask(u64::from_le_bytes(w));
                let want = if b.is_ascii_digit() {
                    0
                } else {
                    0x80 << (8 * pos)
                };
                assert_eq!(m, want, "byte {b:#04x} at {pos}");
            }
        }
        let src = b"-12345678901234567890.5e+300,";
        assert_eq!(number_end(src, 0), Some(src.len() - 1));
        assert_eq!(digits(b"123456789x", 0), 9);
        assert_eq!(digits(b"12345678", 0), 8);
    }

    /// Documents in the layout `json.dump(indent=2)` writes: what
    /// serde_json's pretty printer writes too.
    fn canonical_seeds() -> Vec<Vec<u8>> {
        let values = [
            serde_json::json!({
                "hw": "b200", "conc": 64, "tp": 8, "disagg": false, "x": null,
                "tput_per_gpu": 1234.5678, "mean_ttft": 0.0123, "e": -1.5e-7,
                "nested": {"a": [1, 2, {"b": []}], "c": {}, "s": "q\"\\\u{e9}\n\u{1}"},
            }),
            serde_json::json!([[1, [2, [3]]], {"k": {"k": {"k": true}}}, "", 0]),
            serde_json::json!({}),
            serde_json::json!([]),
            serde_json::json!("top"),
            serde_json::json!(-0.5),
        ];
        let mut seeds: Vec<Vec<u8>> = values
            .iter()
            .map(|v| serde_json::to_vec_pretty(v).expect("json"))
            .collect();
        let mut with_newline = seeds[0].clone();
        with_newline.push(b'\n');
        seeds.push(with_newline);
        seeds
    }

    #[test]
    fn canonical_layout_takes_the_fast_path() {
        for doc in canonical_seeds() {
            for depth in [0, 1, 3] {
                let mut fast = b"prefix".to_vec();
                assert!(
                    reindent_canonical(&doc, depth, &mut fast),
                    "{}",
                    String::from_utf8_lossy(&doc)
                );
                let mut slow = b"prefix".to_vec();
                reindent(&doc, depth, &mut slow);
                assert_eq!(fast, slow);
            }
        }
        // Valid JSON in other layouts is left to the general path.
        for doc in [
            &b"{\"a\": 1}"[..],
            b"{\n    \"a\": 1\n}",
            b" 1",
            b"[\r\n  1\r\n]",
            b"{ }",
        ] {
            let mut out = b"prefix".to_vec();
            assert!(!reindent_canonical(doc, 1, &mut out));
            assert_eq!(out, b"prefix");
            assert!(reindent_checked(doc, 1, &mut out));
        }
    }

    /// Whatever `reindent_canonical` accepts is valid JSON, and it writes
    /// exactly what `reindent_checked` writes, over many small edits of
    /// documents in the canonical layout.
    #[test]
    fn canonical_agrees_with_checked() {
        let seeds = canonical_seeds();
        let mut edits = Editor(0x2545_f491_4f6c_dd1d);
        let (mut accepted, mut rejected) = (0, 0);
        for round in 0..40_000 {
            let Some(doc) = edits.edit(&seeds[round % seeds.len()], 2) else {
                continue;
            };
            let depth = round % 3;
            let mut fast = b"prefix".to_vec();
            if reindent_canonical(&doc, depth, &mut fast) {
                let mut checked = b"prefix".to_vec();
                assert!(
                    reindent_checked(&doc, depth, &mut checked),
                    "{:?}",
                    String::from_utf8_lossy(&doc)
                );
                assert_eq!(fast, checked, "{:?}", String::from_utf8_lossy(&doc));
                accepted += 1;
            } else {
                assert_eq!(fast, b"prefix");
                rejected += 1;
            }
        }
        assert!(accepted > 2000 && rejected > 2000, "{accepted} {rejected}");
        // Nesting deeper than 64 levels is left to the general path.
        let deep = |n: usize| {
            let mut v = serde_json::json!(1);
            for _ in 0..n {
                v = serde_json::json!([v]);
            }
            serde_json::to_vec_pretty(&v).expect("json")
        };
        assert!(reindent_canonical(&deep(64), 0, &mut Vec::new()));
        assert!(!reindent_canonical(&deep(65), 0, &mut Vec::new()));
    }
}
