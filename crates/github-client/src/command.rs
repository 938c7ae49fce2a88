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
//! Differences, on purpose: only ASCII digits form a run id (Python's `\d`
//! also accepts other Unicode decimal digits); a body longer than
//! [`MAX_COMMAND_BODY_CHARS`] holds no command; a command that is empty or
//! only whitespace matches nothing.
//!
//! Linear time: the regex's backtracking only ever succeeds at one split
//! of each whitespace run (the command starts after the whole run, a run
//! id after the whole run, `$` at the run's last line break), so the scan
//! precomputes, for every position, where its whitespace run and its digit
//! run end and where the last line break before it is, and decides each
//! line start in constant time (plus one comparison with the command per
//! distinct candidate position). The reference's pattern costs quadratic
//! time on long whitespace runs: `"x" + "\n" * 65534 + "x"` took 15–36 s.

/// GitHub caps an issue comment's body at 65,536 characters: a longer body
/// cannot be a comment GitHub stored, so it is not inspected at all (the
/// scan is linear, but nothing legitimate needs more).
pub const MAX_COMMAND_BODY_CHARS: usize = 65_536;

/// Python's `\s` for `str` patterns (`str.isspace`).
fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// A command line found in a body: `None` = bare command, `Some(id)` = pin.
pub type Match = Option<String>;

/// Whether `body` is within [`MAX_COMMAND_BODY_CHARS`] (counting at most
/// one character past the limit).
pub fn within_limit(body: &str) -> bool {
    body.chars().take(MAX_COMMAND_BODY_CHARS + 1).count() <= MAX_COMMAND_BODY_CHARS
}

/// Every match in `body`, in order (what `re.findall` returns); nothing
/// for a body over [`MAX_COMMAND_BODY_CHARS`].
pub fn find_all(body: &str, command: &str) -> Vec<Match> {
    let mut out = Vec::new();
    if !within_limit(body) {
        return out;
    }
    let cmd: Vec<char> = command.chars().collect();
    // Leading whitespace of the command: it is matched by the pattern's
    // `\s*` run too, so the command starts `lead` characters before the
    // end of the line's whitespace run.
    let lead = cmd.iter().take_while(|c| is_space(**c)).count();
    if lead == cmd.len() {
        return out;
    }
    let s: Vec<char> = body.chars().collect();
    let scan = Scan::new(&s);
    // The result at a candidate start depends only on that start; many
    // line starts of one whitespace run share it.
    let mut memo: Option<(usize, Option<(usize, Match)>)> = None;
    let mut pos = 0;
    while pos <= s.len() {
        let at_line_start = pos == 0 || s[pos - 1] == '\n';
        let found = if at_line_start {
            scan.space_end[pos]
                .checked_sub(lead)
                .filter(|q| *q >= pos)
                .and_then(|q| match &memo {
                    Some((mq, r)) if *mq == q => r.clone(),
                    _ => {
                        let r = scan.match_from(q, &cmd);
                        memo = Some((q, r.clone()));
                        r
                    }
                })
        } else {
            None
        };
        match found {
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

/// The longest reason a reason-carrying command may give, in characters:
/// enough for a sentence naming why a regression is expected, short enough
/// for a heading line and a check run's title.
pub const MAX_REASON_CHARS: usize = 280;

/// What a reason-carrying command line (`<command> <reason>`) says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReasonCommand {
    /// The reason, trimmed, control characters replaced by spaces.
    Reason(String),
    /// The command with nothing after it.
    Missing,
    /// A reason longer than [`MAX_REASON_CHARS`] (its length).
    TooLong(usize),
}

/// The decisive (last) line of `body` that is `command`, optionally
/// preceded by whitespace, followed by the end of the line or by
/// whitespace and a reason that runs to the end of that line
/// (`/acknowledge-regression <reason>`). Unlike [`find_all`] a command
/// never spans lines: the reason is what follows on the same line. Nothing
/// for a body over [`MAX_COMMAND_BODY_CHARS`] or a blank command. One pass
/// over the body (each line is compared with the command once).
pub fn last_reason_command(body: &str, command: &str) -> Option<ReasonCommand> {
    let command = command.trim_matches(is_space);
    if command.is_empty() || !within_limit(body) {
        return None;
    }
    let mut found = None;
    for line in body.split('\n') {
        let line = line.trim_start_matches(is_space);
        let Some(rest) = line.strip_prefix(command) else {
            continue;
        };
        if rest.chars().next().is_some_and(|c| !is_space(c)) {
            continue;
        }
        let reason: String = rest
            .trim_matches(is_space)
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let n = reason.chars().count();
        found = Some(if n == 0 {
            ReasonCommand::Missing
        } else if n > MAX_REASON_CHARS {
            ReasonCommand::TooLong(n)
        } else {
            ReasonCommand::Reason(reason)
        });
    }
    found
}

/// Per-position facts of a body, each computed in one pass.
struct Scan<'a> {
    s: &'a [char],
    /// First index at or after `i` that is not whitespace (or the end).
    space_end: Vec<usize>,
    /// First index at or after `i` that is not an ASCII digit (or the end).
    digit_end: Vec<usize>,
    /// The last index before `i` holding a line break, if any.
    newline_before: Vec<Option<usize>>,
}

impl<'a> Scan<'a> {
    fn new(s: &'a [char]) -> Self {
        let n = s.len();
        let mut space_end = vec![n; n + 1];
        let mut digit_end = vec![n; n + 1];
        for i in (0..n).rev() {
            space_end[i] = if is_space(s[i]) { space_end[i + 1] } else { i };
            digit_end[i] = if s[i].is_ascii_digit() {
                digit_end[i + 1]
            } else {
                i
            };
        }
        let mut newline_before = vec![None; n + 1];
        for i in 0..n {
            newline_before[i + 1] = if s[i] == '\n' {
                Some(i)
            } else {
                newline_before[i]
            };
        }
        Scan {
            s,
            space_end,
            digit_end,
            newline_before,
        }
    }

    /// `\s*$` (multi-line `$`) from `q`, greedy: the end of the longest
    /// match — the end of the body when the whitespace run reaches it,
    /// else the run's last line break.
    fn tail(&self, q: usize) -> Option<usize> {
        let e = self.space_end[q];
        if e == self.s.len() {
            return Some(e);
        }
        self.newline_before[e].filter(|&t| t >= q)
    }

    /// `<command>(?:\s+(\d+))?\s*$` from `q`.
    fn match_from(&self, q: usize, cmd: &[char]) -> Option<(usize, Match)> {
        if !self.s[q..].starts_with(cmd) {
            return None;
        }
        let r = q + cmd.len();
        // `(?:\s+(\d+))?`, greedy: the group first. Digits can only follow
        // the whole whitespace run, and `\s*$` only the whole digit run.
        let d0 = self.space_end[r];
        if d0 > r {
            let d1 = self.digit_end[d0];
            if d1 > d0
                && let Some(end) = self.tail(d1)
            {
                return Some((end, Some(self.s[d0..d1].iter().collect())));
            }
        }
        self.tail(r).map(|end| (end, None))
    }
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

    const ACK: &str = "/acknowledge-regression";

    #[test]
    fn a_reason_command_takes_the_rest_of_its_line() {
        let r = |b: &str| last_reason_command(b, ACK);
        assert_eq!(
            r("/acknowledge-regression expected: new scheduler trades TTFT for throughput"),
            Some(ReasonCommand::Reason(
                "expected: new scheduler trades TTFT for throughput".into()
            ))
        );
        assert_eq!(
            r("LGTM\n  /acknowledge-regression  known\tissue #12 \r\nthanks"),
            Some(ReasonCommand::Reason("known\tissue #12".replace('\t', " ")))
        );
        assert_eq!(r("/acknowledge-regression"), Some(ReasonCommand::Missing));
        assert_eq!(
            r("/acknowledge-regression   \nwhy"),
            Some(ReasonCommand::Missing)
        );
        assert_eq!(
            r("/acknowledge-regression a\n/acknowledge-regression b"),
            Some(ReasonCommand::Reason("b".into()))
        );
        let long = "x".repeat(MAX_REASON_CHARS + 1);
        assert_eq!(
            r(&format!("{ACK} {long}")),
            Some(ReasonCommand::TooLong(MAX_REASON_CHARS + 1))
        );
        let fits = "é".repeat(MAX_REASON_CHARS);
        assert_eq!(
            r(&format!("{ACK} {fits}")),
            Some(ReasonCommand::Reason(fits))
        );
    }

    #[test]
    fn a_reason_command_is_a_line_of_its_own() {
        for body in [
            "/acknowledge-regressions because",
            "> /acknowledge-regression quoted",
            "`/acknowledge-regression code`",
            "please /acknowledge-regression now",
            "/Acknowledge-Regression x",
            "",
        ] {
            assert_eq!(last_reason_command(body, ACK), None, "{body:?}");
        }
        assert_eq!(last_reason_command("anything", "  "), None);
        let pad = " ".repeat(MAX_COMMAND_BODY_CHARS);
        assert_eq!(last_reason_command(&format!("{ACK} x{pad}"), ACK), None);
    }

    /// The quadratic matcher this module replaced, kept as the oracle the
    /// linear one is compared with.
    mod quadratic {
        use super::super::{Match, is_space};

        /// Every match in `body`, in order (what `re.findall` returns).
        pub(super) fn find_all(body: &str, command: &str) -> Vec<Match> {
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
    }

    /// A small deterministic generator (no dependency): bodies over an
    /// alphabet that exercises every corner of the pattern.
    fn bodies(count: usize, max_len: usize) -> Vec<String> {
        const PIECES: [&str; 12] = [
            " ",
            "\n",
            "\r",
            "\t",
            "\u{1c}",
            "1",
            "42",
            "x",
            "/",
            "/reuse-sweep-run",
            "/reuse-sweep-run ",
            "\u{a0}",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..count)
            .map(|_| {
                let len = (next() % max_len as u64) as usize;
                (0..len)
                    .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn linear_matcher_agrees_with_the_quadratic_one() {
        for cmd in [C, " /reuse-sweep-run", "/reuse-sweep-run ", "x"] {
            for body in bodies(4000, 24) {
                assert_eq!(
                    find_all(&body, cmd),
                    quadratic::find_all(&body, cmd),
                    "{cmd:?} in {body:?}"
                );
            }
        }
    }

    #[test]
    fn long_whitespace_runs_are_read_as_before() {
        let run = "\n".repeat(65_534);
        assert_eq!(last(&format!("x{run}x")), None);
        let run = "\n".repeat(65_000);
        assert_eq!(last(&format!("{run}{C}")), Some(None));
        assert_eq!(last(&format!("{C}{run}7")), Some(Some("7".into())));
        assert_eq!(last(&format!("{C} {}x", "9".repeat(60_000))), None);
        let spaces = " \t".repeat(8_000);
        assert_eq!(
            last(&format!("{spaces}\n{spaces}{C}{spaces}12{spaces}")),
            Some(Some("12".into()))
        );
    }

    #[test]
    fn a_body_over_the_limit_is_not_a_command() {
        let pad = " ".repeat(MAX_COMMAND_BODY_CHARS - C.len());
        assert_eq!(last(&format!("{C}{pad}")), Some(None));
        assert_eq!(last(&format!("{C}{pad} ")), None);
        // The limit counts characters, as GitHub's does, not bytes.
        let wide = "\u{2003}".repeat(MAX_COMMAND_BODY_CHARS - C.len());
        assert_eq!(last(&format!("{C}{wide}")), Some(None));
    }

    #[test]
    fn an_empty_or_blank_command_matches_nothing() {
        assert!(find_all("anything\n", "").is_empty());
        assert!(find_all("  \n ", " ").is_empty());
    }

    /// Benchmark, not a test (run with `--ignored --nocapture`): the
    /// pathological body of issue #34, `"x" + "\n" * 65534 + "x"`.
    #[test]
    #[ignore]
    fn bench_pathological_newlines() {
        let body = format!("x{}x", "\n".repeat(65_534));
        for (name, f) in [
            ("linear", find_all as fn(&str, &str) -> Vec<Match>),
            ("quadratic", quadratic::find_all),
        ] {
            let t = std::time::Instant::now();
            let n = f(&body, C).len();
            eprintln!("{name}: {n} matches in {:?}", t.elapsed());
        }
    }
}
