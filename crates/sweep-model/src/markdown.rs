//! Escaping of data for GitHub-flavoured markdown.
//!
//! Strings that come from result files, configs or the API (hardware,
//! framework, model, image names, task names, error texts) reach the PR
//! comment, `compare.md` and step summaries. Written verbatim they could
//! mention people (`@user`, `@org/team`), add links or autolinks, inject
//! HTML, break a table (`|`) or, with a line break, open a heading or a new
//! block. [`inline`] makes such a string inert text for one table cell,
//! list item or heading; [`code_block_line`] does the same for a line inside
//! a fenced code block (mermaid charts).
//!
//! What is changed, and what is left alone on purpose:
//! * line breaks (CR, LF and the Unicode line/paragraph separators) become
//!   one space;
//! * `\`, `|`, `[`, `]`, `` ` `` and `#` get a backslash (GitHub shows the
//!   character itself), so neither links/images, code spans, issue
//!   references nor a table cell boundary can be formed;
//! * `<`, `>` and `&` become `&lt;`, `&gt;` and `&amp;` (no HTML, no entity);
//! * `@` is followed by U+2060 WORD JOINER (invisible), so `@user` and
//!   `a@b.c` are neither a mention nor an e-mail autolink; an `@` before a
//!   space or at the end can be neither and is kept as is (`main @ 1a2b3c4`);
//! * `://` becomes `:/` U+2060 `/` and `www.` becomes `www` U+2060 `.`, so no
//!   URL is autolinked.
//!
//! Everything else, including non-ASCII text and `-`, `.`, `(`, `)`, `+`,
//! `%`, is kept as is. Emphasis characters (`*`, `_`, `~`) are kept too:
//! they can only style the text, and names such as `H100-NV_03` then stay
//! exactly as the reference writes them.

/// Invisible character that breaks mentions and autolinks (U+2060).
const JOINER: char = '\u{2060}';

/// `s` as inert inline markdown text (see the module documentation).
pub fn inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    let mut chars = s.chars().peekable();
    let mut prev_space = false;
    while let Some(c) = chars.next() {
        match c {
            '\r' | '\n' | '\u{2028}' | '\u{2029}' | '\u{0085}' | '\u{000B}' | '\u{000C}' => {
                // A CR LF pair (or any run of breaks) becomes one space.
                if !prev_space {
                    out.push(' ');
                }
                prev_space = true;
                continue;
            }
            '\\' | '|' | '[' | ']' | '`' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' => {
                out.push('@');
                if chars.peek().is_some_and(|n| !n.is_whitespace()) {
                    out.push(JOINER);
                }
            }
            ':' if starts_with(&mut chars, "//") => {
                out.push_str(":/");
                out.push(JOINER);
                out.push('/');
                chars.next();
                chars.next();
            }
            'w' | 'W' if ends_with_ci(&out, "ww") && chars.peek() == Some(&'.') => {
                out.push(c);
                out.push(JOINER);
            }
            c => out.push(c),
        }
        prev_space = false;
    }
    out
}

/// `s` for one line inside a fenced code block: line breaks become spaces
/// and backticks become `'`, so the fence cannot be closed from data.
pub fn code_block_line(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\r' | '\n' | '\u{2028}' | '\u{2029}' | '\u{0085}' => ' ',
            '`' | '~' => '\'',
            c => c,
        })
        .collect()
}

fn starts_with(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, pat: &str) -> bool {
    let rest: String = chars.clone().take(pat.len()).collect();
    rest == pat
}

fn ends_with_ci(out: &str, pat: &str) -> bool {
    out.len() >= pat.len()
        && out.is_char_boundary(out.len() - pat.len())
        && out[out.len() - pat.len()..].eq_ignore_ascii_case(pat)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hostile corpus: each input and the exact text that must come out.
    #[test]
    fn hostile_corpus() {
        let j = JOINER;
        let cases: Vec<(&str, String)> = vec![
            ("b200", "b200".into()),
            (
                "mi355x-sglang 0.5.1 (rc2)",
                "mi355x-sglang 0.5.1 (rc2)".into(),
            ),
            ("@octocat", format!("@{j}octocat")),
            ("cc @org/team please", format!("cc @{j}org/team please")),
            ("mail a@b.example", format!("mail a@{j}b.example")),
            (
                "main @ 1a2b3c4 (run 7)",
                "main @ 1a2b3c4 (run 7)".to_string(),
            ),
            ("trailing @", "trailing @".to_string()),
            (
                "[click](https://evil.example)",
                format!("\\[click\\](https:/{j}/evil.example)"),
            ),
            ("![img](x.png)", "!\\[img\\](x.png)".into()),
            (
                "see https://evil.example/x",
                format!("see https:/{j}/evil.example/x"),
            ),
            ("www.evil.example", format!("www{j}.evil.example")),
            ("WWW.Evil.example", format!("WWW{j}.Evil.example")),
            (
                "<img src=x onerror=alert(1)>",
                "&lt;img src=x onerror=alert(1)&gt;".into(),
            ),
            ("<!-- hidden -->", "&lt;!-- hidden --&gt;".into()),
            ("&lt;b&gt;", "&amp;lt;b&amp;gt;".into()),
            ("a | b", "a \\| b".into()),
            ("h100\n# Heading", "h100 \\# Heading".into()),
            ("x\r\n\r\n- item", "x - item".into()),
            ("line\u{2028}sep", "line sep".into()),
            ("`code` **bold** _em_", "\\`code\\` **bold** _em_".into()),
            ("back\\slash", "back\\\\slash".into()),
            ("H100-NV_03", "H100-NV_03".into()),
            ("fixes #123", "fixes \\#123".into()),
            ("ünïcødé 模型", "ünïcødé 模型".into()),
        ];
        for (input, want) in cases {
            assert_eq!(inline(input), want, "{input:?}");
            // Nothing that forms markup survives.
            let out = inline(input);
            assert!(!out.contains('\n') && !out.contains('<'), "{out:?}");
        }
    }

    #[test]
    fn code_block_lines_cannot_close_the_fence() {
        assert_eq!(code_block_line("a```\n# x"), "a''' # x");
        assert_eq!(code_block_line("~~~"), "'''");
    }
}
