//! The one rule by which `--config-keys` patterns select master-config
//! keys, for every command that takes them: `generate-matrix test-config
//! --config-keys` and a changelog entry's `config-keys` (check-changelog,
//! `generate-matrix changelog`, the dry run).
//!
//! A key with `*` or `?` is a shell-style pattern, matched as Python's
//! `fnmatch.fnmatchcase` (`*`, `?`, `[seq]`, `[!seq]`, the whole key):
//! the reference's generator rule (`expand_config_keys`), which the
//! conformance corpus pins (`dsr1-fp?-b200-sglang`). Its changelog reader
//! (`get_config_keys_from_master`) knew only `*`; sweepkit uses the one
//! rule for both (docs/differences-from-reference.md). Any other key must
//! exist as written. Matches come in master order, later duplicates are
//! dropped.

/// Why a list of keys does not resolve; each command words its own message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyMiss<'w> {
    /// The pattern at `index` of the list matches no key.
    NoMatch { index: usize, pattern: &'w str },
    /// The plain key at `index` of the list does not exist.
    Missing { index: usize, key: &'w str },
}

/// Whether a wanted key is a pattern (has `*` or `?`).
#[must_use]
pub fn is_pattern(key: &str) -> bool {
    key.contains('*') || key.contains('?')
}

/// Resolves `wanted` against the `available` keys (in master order).
///
/// # Errors
/// The first pattern that matches nothing or plain key that is missing.
pub fn resolve<'a, 'w>(
    available: &[&'a str],
    wanted: &'w [String],
) -> Result<Vec<&'a str>, KeyMiss<'w>> {
    let mut out: Vec<&'a str> = Vec::new();
    let mut push = |k: &'a str| {
        if !out.contains(&k) {
            out.push(k);
        }
    };
    for (index, w) in wanted.iter().enumerate() {
        if is_pattern(w) {
            let matched: Vec<&'a str> = available
                .iter()
                .copied()
                .filter(|k| glob_match(w, k))
                .collect();
            if matched.is_empty() {
                return Err(KeyMiss::NoMatch { index, pattern: w });
            }
            matched.into_iter().for_each(&mut push);
        } else {
            match available.iter().copied().find(|k| *k == w.as_str()) {
                Some(k) => push(k),
                None => return Err(KeyMiss::Missing { index, key: w }),
            }
        }
    }
    Ok(out)
}

/// Shell-style glob as Python's `fnmatch.fnmatchcase`: `*`, `?`, `[seq]`, `[!seq]`.
#[must_use]
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    glob_at(&p, &t)
}

fn glob_at(p: &[char], t: &[char]) -> bool {
    let Some(&first) = p.first() else {
        return t.is_empty();
    };
    match first {
        '*' => (0..=t.len()).any(|i| glob_at(&p[1..], &t[i..])),
        '?' => !t.is_empty() && glob_at(&p[1..], &t[1..]),
        '[' => match class_end(p) {
            Some(end) => {
                let Some(&c) = t.first() else { return false };
                class_matches(&p[1..end], c) && glob_at(&p[end + 1..], &t[1..])
            }
            None => t.first() == Some(&'[') && glob_at(&p[1..], &t[1..]),
        },
        c => t.first() == Some(&c) && glob_at(&p[1..], &t[1..]),
    }
}

/// Index of the `]` closing a class that starts at `p[0] == '['`.
fn class_end(p: &[char]) -> Option<usize> {
    let mut i = 1;
    if p.get(i) == Some(&'!') {
        i += 1;
    }
    if p.get(i) == Some(&']') {
        i += 1;
    }
    while i < p.len() {
        if p[i] == ']' {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn class_matches(body: &[char], c: char) -> bool {
    let (neg, body) = match body.first() {
        Some('!') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut i = 0;
    let mut hit = false;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == '-' {
            if body[i] <= c && c <= body[i + 2] {
                hit = true;
            }
            i += 3;
        } else {
            if body[i] == c {
                hit = true;
            }
            i += 1;
        }
    }
    hit != neg
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn patterns_match_as_fnmatchcase_on_the_whole_key() {
        assert!(glob_match("dsr1-*", "dsr1-fp4-b200"));
        assert!(!glob_match("dsr1-*", "xdsr1-fp4"));
        assert!(glob_match("a?c", "abc"));
        assert!(glob_match("[ab]x", "bx"));
        assert!(!glob_match("[!ab]x", "bx"));
        assert!(glob_match("[a-c]*", "cat"));
        assert!(glob_match("x[", "x["));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*b", "abb"));
        assert!(!glob_match("ab*ba", "aba"));
        assert!(!glob_match("a*c", "abcd"));
        assert!(!glob_match("Dsr1-*", "dsr1-x"));
    }

    #[test]
    fn keys_resolve_in_master_order_without_duplicates() {
        let avail = ["config-b", "config-a", "other"];
        let w = |ks: &[&str]| ks.iter().map(|k| k.to_string()).collect::<Vec<_>>();
        assert_eq!(
            resolve(&avail, &w(&["config-*", "config-a"])).unwrap(),
            ["config-b", "config-a"]
        );
        assert_eq!(
            resolve(&avail, &w(&["other", "config-?"])).unwrap(),
            ["other", "config-b", "config-a"]
        );
        let wanted = w(&["other", "zz-*"]);
        assert_eq!(
            resolve(&avail, &wanted).unwrap_err(),
            KeyMiss::NoMatch {
                index: 1,
                pattern: "zz-*"
            }
        );
        let wanted = w(&["config-[ab]"]);
        assert_eq!(
            resolve(&avail, &wanted).unwrap_err(),
            KeyMiss::Missing {
                index: 0,
                key: "config-[ab]"
            },
            "a key with only [..] is a plain key, as in the reference"
        );
    }
}
