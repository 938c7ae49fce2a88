//! "Did you mean" for a misspelt name: the closest candidate by edit
//! distance (Levenshtein over chars), when it is close enough to be a typo.

/// Names longer than this are not compared (a changelog key is under 100
/// characters; the distance table is `len × len`).
const MAX_NAME_CHARS: usize = 256;

/// Edit distance (insertions, deletions, substitutions) between `a` and `b`.
#[must_use]
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `name`, if it is within a third of `name`'s
/// length (at least 1, at most 4 edits): a typo, not another name. Ties go
/// to the first candidate in the order given.
#[must_use]
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = name.chars().count();
    if len == 0 || len > MAX_NAME_CHARS {
        return None;
    }
    let limit = (len / 3).clamp(1, 4);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name || c.chars().count() > MAX_NAME_CHARS {
            continue;
        }
        let d = distance(name, c);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("config-key", "config-keys"), 1);
    }

    #[test]
    fn closest_suggests_a_typo_and_not_a_stranger() {
        let keys = [
            "qwen3.5-fp4-b200-sglang",
            "qwen3.5-fp4-b200-vllm",
            "dsr1-fp8-h200",
        ];
        assert_eq!(
            closest("qwen3.5-fp4-b200-sglan", keys),
            Some("qwen3.5-fp4-b200-sglang")
        );
        assert_eq!(closest("precison", ["precision", "tp"]), Some("precision"));
        assert_eq!(closest("totally-different", keys), None);
        assert_eq!(closest("", keys), None);
    }
}
