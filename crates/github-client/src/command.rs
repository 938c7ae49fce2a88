//! Recognising `/reuse-sweep-run [run_id]` in a comment body: part of the
//! trust protocol (see [`crate::trust`]), shared by `reuse-sweep find` and
//! `sweep-ops recover-ingest` so both read a comment the same way.
//!
//! The reference matches the Python regex
//! `(?m)^\s*<command>(?:\s+(\d+))?\s*$` with `findall` and keeps the last
//! match. This module reproduces that exactly without a regex engine,
//! including its corners: `\s` spans line breaks (a command followed by a
//! newline and a number on the next line is a pin), a trailing `\r` is
//! fine, and the search resumes where the previous match ended.
//! Difference, on purpose: only ASCII digits form a run id (Python's `\d`
//! also accepts other Unicode decimal digits).

/// Python's `\s` for `str` patterns (`str.isspace`).
fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// A command line found in a body: `None` = bare command, `Some(id)` = pin.
pub type Match = Option<String>;

/// Every match in `body`, in order (what `re.findall` returns).
pub fn find_all(body: &str, command: &str) -> Vec<Match> {
    let s: Vec<char> = body.chars().collect();
    let cmd: Vec<char> = command.chars().collect();
    let mut out = Vec::new();
    if cmd.is_empty() {
        return out;
    }
    let mut pos = 0;
    while pos <= s.len() {
        match match_at(&s, pos, &cmd) {
            Some((end, m)) => {
                out.push(m);
                pos = if end > pos { end } else { pos + 1 };
            }
            None => pos += 1,
        }
    }
    out
}

/// The decisive command of a body (the last match), if any.
pub fn last_command(body: &str, command: &str) -> Option<Match> {
    find_all(body, command).pop()
}

fn spaces_from(s: &[char], i: usize) -> usize {
    s[i.min(s.len())..]
        .iter()
        .take_while(|c| is_space(**c))
        .count()
}

/// `\s*$` (multi-line `$`) from `q`, greedy: the end of the longest match.
fn tail(s: &[char], q: usize) -> Option<usize> {
    let w = spaces_from(s, q);
    (0..=w)
        .rev()
        .map(|k| q + k)
        .find(|&t| t == s.len() || s[t] == '\n')
}

fn match_at(s: &[char], p: usize, cmd: &[char]) -> Option<(usize, Match)> {
    if !(p == 0 || s.get(p - 1) == Some(&'\n')) {
        return None;
    }
    for k in (0..=spaces_from(s, p)).rev() {
        let q = p + k;
        if !s[q..].starts_with(cmd) {
            continue;
        }
        let r = q + cmd.len();
        // (?:\s+(\d+))? — greedy: try the group first.
        for a in (1..=spaces_from(s, r)).rev() {
            let d0 = r + a;
            let nd = s[d0..].iter().take_while(|c| c.is_ascii_digit()).count();
            for b in (1..=nd).rev() {
                if let Some(end) = tail(s, d0 + b) {
                    return Some((end, Some(s[d0..d0 + b].iter().collect())));
                }
            }
        }
        if let Some(end) = tail(s, r) {
            return Some((end, None));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: &str = "/reuse-sweep-run";

    fn last(body: &str) -> Option<Match> {
        last_command(body, C)
    }

    #[test]
    fn bare_and_pinned_commands() {
        assert_eq!(last("/reuse-sweep-run"), Some(None));
        assert_eq!(
            last("  /reuse-sweep-run   32991847205  "),
            Some(Some("32991847205".into()))
        );
        assert_eq!(last("/reuse-sweep-run 007\r\n"), Some(Some("007".into())));
        assert_eq!(
            last("LGTM\n/reuse-sweep-run 12\nthanks"),
            Some(Some("12".into()))
        );
    }

    #[test]
    fn a_number_on_the_next_line_is_a_pin() {
        assert_eq!(last("/reuse-sweep-run\n123"), Some(Some("123".into())));
        assert_eq!(
            last("/reuse-sweep-run\n\n/reuse-sweep-run 5"),
            Some(Some("5".into()))
        );
        assert_eq!(last("/reuse-sweep-run 5\n/reuse-sweep-run"), Some(None));
    }

    #[test]
    fn near_misses_do_not_match() {
        for body in [
            "/reuse-sweep-run abc",
            "/reuse-sweep-run 1 2",
            "/reuse-sweep-run 12.",
            "/reuse-sweep-run #123",
            "/reuse-sweep-run https://github.com/o/r/actions/runs/1",
            "/reuse-sweep-runs",
            "/Reuse-Sweep-Run",
            "> /reuse-sweep-run",
            "`/reuse-sweep-run`",
            "please /reuse-sweep-run 12",
            "",
        ] {
            assert_eq!(last(body), None, "{body:?}");
        }
    }
}
