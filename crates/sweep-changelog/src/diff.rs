//! Added and removed lines of a changelog diff (spec §3).
//!
//! Classification follows the reference exactly: the diff text is decoded
//! as strict UTF-8, newlines are normalised the way Python's universal
//! newlines do (CR LF → LF, then lone CR → LF), and each resulting line is
//! an addition when it starts with `+` but not `+++`, a removal when it
//! starts with `-` but not `---`, and ignored otherwise. On top of that we
//! track where each line sits in the head (and base) file from the hunk
//! headers, so rejections can point at a line.

/// Longest added changelog line accepted, in bytes. The longest line in
/// InferenceX's perf-changelog.yaml is about 1 100 bytes; a line beyond this
/// is not a changelog entry, and it would reach the matrix job outputs
/// (which GitHub caps at 1 MB each).
pub const MAX_LINE_BYTES: usize = 16 * 1024;

/// One added line: its text (without the `+`) and its line in the head file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    pub text: String,
    pub head_line: usize,
}

/// One removed line whose content is not whitespace-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    pub text: String,
    /// Line in the base file.
    pub base_line: usize,
    /// Line in the head file where the removal happened (the next surviving line).
    pub head_line: usize,
}

/// The classified diff.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    pub added: Vec<Added>,
    /// Non-blank removed lines, in diff order (blank ones are allowed and dropped).
    pub removed: Vec<Removed>,
}

impl Diff {
    /// The added lines joined by LF (no trailing LF), as fed to the YAML parser.
    pub fn added_text(&self) -> String {
        let mut s = String::new();
        for (i, a) in self.added.iter().enumerate() {
            if i > 0 {
                s.push('\n');
            }
            s.push_str(&a.text);
        }
        s
    }

    /// Head-file line of the `n`-th (1-based) line of [`Diff::added_text`].
    pub fn head_line_of(&self, n: usize) -> Option<usize> {
        n.checked_sub(1)
            .and_then(|i| self.added.get(i))
            .map(|a| a.head_line)
    }
}

/// Python `str.strip()` whitespace: Unicode whitespace plus U+001C..U+001F.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// True when `s.strip()` would be empty in Python.
pub fn is_blank(s: &str) -> bool {
    s.chars().all(is_py_space)
}

/// Why `git diff` output cannot be classified (the changelog change is
/// refused).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    /// Not UTF-8, worded like Python's codec error.
    #[error(
        "'utf-8' codec can't decode byte 0x{byte:02x} in position {position} of the diff output \
         (diff line {line}): the changelog change is not valid UTF-8"
    )]
    NotUtf8 {
        byte: u8,
        position: usize,
        line: usize,
    },
    /// An added line above [`MAX_LINE_BYTES`].
    #[error(
        "added line {line} is {bytes} bytes, over the {} KiB limit for one \
         changelog line (MAX_LINE_BYTES): refused",
        MAX_LINE_BYTES / 1024
    )]
    LineTooLong { line: usize, bytes: usize },
}

/// Decodes and classifies `git diff` output. The error is the UTF-8 decoding
/// failure, worded like Python's codec error, or an added line longer than
/// [`MAX_LINE_BYTES`] (naming its line in the head file).
pub fn parse(stdout: &[u8]) -> Result<Diff, DiffError> {
    let text = std::str::from_utf8(stdout).map_err(|e| {
        let position = e.valid_up_to();
        DiffError::NotUtf8 {
            byte: stdout.get(position).copied().unwrap_or(0),
            position,
            line: stdout[..position].iter().filter(|&&b| b == b'\n').count() + 1,
        }
    })?;
    let mut diff = Diff::default();
    let (mut old, mut new) = (0usize, 0usize);
    let mut in_hunk = false;
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        // Line bookkeeping uses git's own lines (LF-separated).
        let first = raw.as_bytes().first().copied();
        if raw.starts_with("diff --git") {
            in_hunk = false;
        } else if let Some((o, n)) = raw.strip_prefix("@@ ").and_then(hunk_start) {
            in_hunk = true;
            old = o;
            new = n;
        }
        let (cur_old, cur_new) = (old, new);
        if in_hunk && !raw.starts_with("@@") {
            match first {
                Some(b'+') => new += 1,
                Some(b'-') => old += 1,
                Some(b' ') => {
                    old += 1;
                    new += 1;
                }
                _ => {}
            }
        }
        // Classification uses Python's universal-newline lines: a lone CR
        // splits a git line into several.
        for part in raw.split('\r') {
            if let Some(rest) = part.strip_prefix('-') {
                if part.starts_with("---") || is_blank(rest) {
                    continue;
                }
                diff.removed.push(Removed {
                    text: rest.to_string(),
                    base_line: cur_old,
                    head_line: cur_new,
                });
            } else if let Some(rest) = part.strip_prefix('+') {
                if part.starts_with("+++") {
                    continue;
                }
                if rest.len() > MAX_LINE_BYTES {
                    return Err(DiffError::LineTooLong {
                        line: cur_new,
                        bytes: rest.len(),
                    });
                }
                diff.added.push(Added {
                    text: rest.to_string(),
                    head_line: cur_new,
                });
            }
        }
    }
    Ok(diff)
}

/// Parses `-a[,b] +c[,d] @@…` into the first old and new line numbers.
fn hunk_start(s: &str) -> Option<(usize, usize)> {
    let mut it = s.split_whitespace();
    let old = it.next()?.strip_prefix('-')?;
    let new = it.next()?.strip_prefix('+')?;
    let first = |r: &str| r.split(',').next().and_then(|n| n.parse::<usize>().ok());
    Some((first(old)?, first(new)?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;

    const HEADER: &str =
        "diff --git a/c.yaml b/c.yaml\nindex 1..2 100644\n--- a/c.yaml\n+++ b/c.yaml\n";

    #[test]
    fn additions_keep_head_lines_and_skip_headers() {
        let d = format!("{HEADER}@@ -3,2 +3,4 @@\n ctx\n ctx2\n+- config-keys:\n+    - a\n");
        let diff = parse(d.as_bytes()).unwrap();
        assert_eq!(diff.added_text(), "- config-keys:\n    - a");
        assert_eq!(diff.added[0].head_line, 5);
        assert_eq!(diff.added[1].head_line, 6);
        assert!(diff.removed.is_empty());
    }

    #[test]
    fn blank_removals_are_allowed_others_recorded() {
        let d = format!("{HEADER}@@ -1,3 +1,1 @@\n-\n-   \n-  pr-link: x\n ctx\n");
        let diff = parse(d.as_bytes()).unwrap();
        assert_eq!(diff.removed.len(), 1);
        assert_eq!(diff.removed[0].text, "  pr-link: x");
        assert_eq!(diff.removed[0].base_line, 3);
    }

    #[test]
    fn crlf_is_normalised_and_lone_cr_splits() {
        let d = format!("{HEADER}@@ -1,0 +1,2 @@\n+a: 1\r\n+b\rc\n");
        let diff = parse(d.as_bytes()).unwrap();
        assert_eq!(diff.added_text(), "a: 1\nb");
        let d = format!("{HEADER}@@ -1,0 +1,1 @@\n+b\r- removed\n");
        assert_eq!(parse(d.as_bytes()).unwrap().removed[0].text, " removed");
    }

    #[test]
    fn yaml_document_markers_are_ignored_like_headers() {
        let d = format!("{HEADER}@@ -1,1 +1,1 @@\n----\n+++x\n");
        let diff = parse(d.as_bytes()).unwrap();
        assert!(diff.removed.is_empty());
        assert!(diff.added.is_empty());
    }

    #[test]
    fn invalid_utf8_mentions_the_codec() {
        let mut d = HEADER.as_bytes().to_vec();
        d.extend_from_slice(b"@@ -1,0 +1,1 @@\n+\xff\n");
        assert!(parse(&d).unwrap_err().to_string().contains("utf-8"));
    }

    #[test]
    fn python_whitespace_includes_file_separators() {
        assert!(is_blank(" \u{1c}\t\u{a0}"));
        assert!(!is_blank(" x"));
    }
}

#[cfg(test)]
mod limit_tests {
    use super::*;

    /// Issue #16 point 4: a 10 MB changelog line is refused, naming the
    /// line and the limit, instead of becoming a job output.
    #[test]
    fn an_overlong_added_line_is_refused() {
        let long = "x".repeat(10 * 1024 * 1024);
        let diff = format!(
            "diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1,1 +1,3 @@\n a\n+- config-keys: [k]\n+  description: [\"{long}\"]\n"
        );
        let e = parse(diff.as_bytes()).expect_err("refused").to_string();
        assert!(
            e.starts_with("added line 3 is 10485779 bytes, over the 16 KiB limit"),
            "{}",
            &e[..e.len().min(200)]
        );
        let ok = format!("@@ -1,1 +1,2 @@\n a\n+{}\n", "y".repeat(MAX_LINE_BYTES));
        assert_eq!(parse(ok.as_bytes()).expect("at the limit").added.len(), 1);
    }
}
