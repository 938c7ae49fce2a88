//! GitHub Actions integration: workflow-command annotations, the step
//! summary and step outputs. Every function is a no-op (or returns `false`)
//! outside Actions, so tools can call them unconditionally.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// True when running inside GitHub Actions (`GITHUB_ACTIONS=true`).
pub fn in_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// Severity of an annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Notice,
}

impl Level {
    fn command(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Notice => "notice",
        }
    }
}

/// Formats a workflow command such as
/// `::error file=configs/a.yaml,line=12::message`, escaping data and
/// properties as the runner expects.
pub fn annotation(level: Level, file: Option<&str>, line: Option<usize>, message: &str) -> String {
    let mut props = Vec::new();
    if let Some(f) = file {
        props.push(format!("file={}", escape_property(f)));
    }
    if let Some(l) = line {
        props.push(format!("line={l}"));
    }
    let mut out = format!("::{}", level.command());
    if !props.is_empty() {
        let _ = write!(out, " {}", props.join(","));
    }
    let _ = write!(out, "::{}", escape_data(message));
    out
}

/// Prints an annotation to stdout when running in Actions; otherwise does nothing.
pub fn annotate(level: Level, file: Option<&str>, line: Option<usize>, message: &str) {
    if in_actions() {
        println!("{}", annotation(level, file, line, message));
    }
}

/// `text` as it may go to a runner log as a plain line: inside Actions its
/// line breaks are written as GitHub's command encoding writes them (CR →
/// `%0D`, LF → `%0A`), so no line break in user text starts a line the
/// runner reads as a command (`::error::…`, `::add-mask::…`); outside
/// Actions unchanged. `%` stays as it is: the runner decodes nothing in a
/// plain line, so `24.000%` must not read `24.000%25` there (an
/// annotation's data, which the runner does decode, goes through
/// [`escape_data`]).
pub fn log_text(text: &str) -> std::borrow::Cow<'_, str> {
    if in_actions() {
        one_line(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// `text` with its line breaks written `%0D`/`%0A` (see [`log_text`]).
fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(['\r', '\n']) {
        std::borrow::Cow::Owned(text.replace('\r', "%0D").replace('\n', "%0A"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Encodes the data (message) of a workflow command.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Encodes a property value (`file=`, `title=`) of a workflow command.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Appends markdown to `$GITHUB_STEP_SUMMARY` when it is set. Returns whether
/// anything was written.
pub fn append_step_summary(markdown: &str) -> std::io::Result<bool> {
    append_to_env_file("GITHUB_STEP_SUMMARY", markdown)
}

/// Largest value written as one step output, in bytes. GitHub Actions
/// limits a job output to 1 MB (and all of a job's outputs to 50 MB); a
/// larger value would be cut or fail the job later, far from its cause, so
/// it is refused here with room to spare.
pub const MAX_OUTPUT_BYTES: usize = 900 * 1024;

/// A step output over [`MAX_OUTPUT_BYTES`]: its name and size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "step output '{key}' would be {bytes} bytes, over the {} KiB limit per output \
     (MAX_OUTPUT_BYTES; GitHub allows 1 MB per job output): nothing written",
    MAX_OUTPUT_BYTES / 1024
)]
pub struct OutputTooLarge {
    pub key: String,
    pub bytes: usize,
}

/// `Err` naming the output and the limit when `value` is over [`MAX_OUTPUT_BYTES`].
pub fn check_output_size(key: &str, value: &str) -> Result<(), OutputTooLarge> {
    if value.len() > MAX_OUTPUT_BYTES {
        return Err(OutputTooLarge {
            key: key.to_string(),
            bytes: value.len(),
        });
    }
    Ok(())
}

/// Appends `key=value` (or a heredoc for multi-line values) to `path`.
/// A value over [`MAX_OUTPUT_BYTES`] is an `InvalidData` error and nothing
/// is written.
pub fn write_output(path: &Path, key: &str, value: &str) -> std::io::Result<()> {
    check_output_size(key, value)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    if value.contains('\n') {
        let mut delim = String::from("SWEEPKIT_EOF");
        while value.contains(&delim) {
            delim.push('_');
        }
        writeln!(f, "{key}<<{delim}\n{value}\n{delim}")
    } else {
        writeln!(f, "{key}={value}")
    }
}

fn append_to_env_file(var: &str, text: &str) -> std::io::Result<bool> {
    let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) else {
        return Ok(false);
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        f.write_all(b"\n")?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_escapes_message_and_properties() {
        let s = annotation(
            Level::Error,
            Some("a,b:c.yaml"),
            Some(7),
            "bad value\n50% off",
        );
        assert_eq!(
            s,
            "::error file=a%2Cb%3Ac.yaml,line=7::bad value%0A50%25 off"
        );
    }

    #[test]
    fn every_line_break_and_percent_is_encoded_in_data_and_properties() {
        let evil = "x\n::error::INJECTED\r\n::add-mask::y%0A";
        let d = escape_data(evil);
        assert_eq!(d, "x%0A::error::INJECTED%0D%0A::add-mask::y%250A");
        assert!(!d.contains(['\n', '\r']));
        assert_eq!(escape_property("a:b,c\nd"), "a%3Ab%2Cc%0Ad");
    }

    #[test]
    fn a_plain_log_line_keeps_its_percent_signs_and_loses_its_line_breaks() {
        let evil = "24.000% > 10%\n::error::INJECTED\r\n";
        assert_eq!(one_line(evil), "24.000% > 10%%0A::error::INJECTED%0D%0A");
        assert_eq!(one_line("12/50 = 24.000%"), "12/50 = 24.000%");
    }

    #[test]
    fn annotation_without_location() {
        assert_eq!(annotation(Level::Warning, None, None, "w"), "::warning::w");
    }

    #[test]
    fn multiline_output_uses_heredoc() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("out");
        write_output(&p, "a", "1").expect("write");
        write_output(&p, "b", "x\ny").expect("write");
        let text = std::fs::read_to_string(&p).expect("read");
        assert_eq!(text, "a=1\nb<<SWEEPKIT_EOF\nx\ny\nSWEEPKIT_EOF\n");
    }

    /// Issue #16 point 4: an output over the limit is refused, naming the
    /// output and the limit, and nothing is written.
    #[test]
    fn oversized_output_is_refused_and_not_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("out");
        let big = "x".repeat(MAX_OUTPUT_BYTES + 1);
        let e = write_output(&p, "matrix", &big).expect_err("refused");
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        let msg = e.to_string();
        assert!(
            msg.contains("step output 'matrix'") && msg.contains("900 KiB limit"),
            "{msg}"
        );
        assert!(!p.exists());
        write_output(&p, "matrix", &big[..MAX_OUTPUT_BYTES]).expect("at the limit");
    }
}
