//! `collect-results aggregate <results_dir> <exp_name>`: every `*.json`
//! under the results directory, parsed and appended as one element each, to
//! `agg_<exp_name>.json` (spec `results.md` §4).
//!
//! Files are found by `sweep_model::tree::json_files` (the reference follows
//! the filesystem's order; the walker pins one: depth-first pre-order, a
//! directory's matching files first in byte-wise name order, then its
//! subdirectories in byte-wise name order; symlinked directories are not
//! entered, a `*.json` symlink leading outside the results directory is
//! refused) and read by `sweep_model::fsio::read_regular` (regular files
//! only: a FIFO named `x.json` is refused instead of blocking the run).
//!
//! Each file is parsed with serde_json (a key twice in one object refused,
//! `sweep_model::json_strict`) and written as the next element with
//! serde_json's pretty printer, which is the layout of the reference's
//! `json.dump(..., indent=2)`. Elements are streamed into a temporary file
//! next to the output, renamed into place once every file has been read, so
//! a failed run leaves no partial output and memory holds one document at a
//! time whatever the number of files.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use serde_json::Value;
use sweep_model::fsio::{ReadError, read_regular};
use sweep_model::tree::{TreeError, json_files};

use crate::group::{GroupKey, element_facts};

/// Largest result file read, in bytes. A benchmark result is a few KB and
/// the biggest real files (a whole aggregate fed back in) a few MB: the
/// aggregate limit (`fsio::MAX_AGGREGATE_JSON_BYTES`, 8 MiB), within which
/// one file keeps `aggregate` under 200 MB (a 60 MB one took 442 MB).
pub const MAX_RESULT_FILE_BYTES: u64 = sweep_model::fsio::MAX_AGGREGATE_JSON_BYTES;

/// Deepest nesting of a result file (arrays and objects): serde_json's own
/// recursion limit (it refuses the 128th level), which keeps its recursive
/// parser, and the printer, well within the stack. Real results nest three
/// or four levels.
pub const MAX_JSON_DEPTH: usize = 127;

/// Why aggregation failed; nothing is written in any of these cases.
#[derive(Debug, thiserror::Error)]
pub enum AggregateError {
    #[error(transparent)]
    Tree(#[from] TreeError),
    #[error("cannot read {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{file}: the file is {size} bytes, more than the limit of {MAX_RESULT_FILE_BYTES} bytes (MAX_RESULT_FILE_BYTES)"
    )]
    TooLarge { file: String, size: u64 },
    #[error(
        "{file}: invalid JSON: nested more than {MAX_JSON_DEPTH} levels deep (MAX_JSON_DEPTH) at line {line}"
    )]
    TooDeep { file: String, line: usize },
    #[error("{file}: invalid JSON: {source}")]
    Json {
        file: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot write {file}: {source}")]
    Write {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// The sweep scheduled legs and not one result row arrived: every leg
    /// failed (or uploaded nothing). Nothing is written, so no later step
    /// takes an empty aggregate for a finished sweep.
    #[error(
        "{dir}: no results: the sweep scheduled {expected} {} and 0 results arrived ({files} result {} read, none holding a result row); nothing is written",
        if *expected == 1 { "leg" } else { "legs" },
        if *files == 1 { "file" } else { "files" }
    )]
    NoResults {
        dir: String,
        expected: u64,
        files: usize,
    },
}

impl AggregateError {
    /// The file or directory the error is about and, for invalid JSON, its
    /// line (for the `::error file=…,line=…::` annotation).
    #[must_use]
    pub fn location(&self) -> (Option<&str>, Option<usize>) {
        match self {
            AggregateError::Json { file, source } => (Some(file), Some(source.line())),
            AggregateError::TooDeep { file, line } => (Some(file), Some(*line)),
            AggregateError::Tree(e) => (Some(e.dir()), None),
            AggregateError::Read { file, .. }
            | AggregateError::TooLarge { file, .. }
            | AggregateError::Write { file, .. } => (Some(file), None),
            AggregateError::NoResults { dir, .. } => (Some(dir), None),
        }
    }
}

/// A result file that is invalid JSON or over the limits, or no result
/// at all from a sweep that scheduled legs, is the check saying no (1); a
/// directory or file that cannot be listed, read or written means the job
/// could not be done (2).
impl sweep_cli::Classify for AggregateError {
    fn kind(&self) -> sweep_cli::Kind {
        use AggregateError as E;
        match self {
            E::Tree(_) | E::Read { .. } | E::Write { .. } => sweep_cli::Kind::Failed,
            E::TooLarge { .. } | E::TooDeep { .. } | E::Json { .. } | E::NoResults { .. } => {
                sweep_cli::Kind::Rejected
            }
        }
    }
}

/// What one aggregation read and wrote.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct AggregateReport {
    /// `*.json` files read (= elements written).
    pub files_read: usize,
    /// Other files seen and left out (not named `*.json`).
    pub ignored_files: usize,
    /// Symlinked directories not entered.
    pub skipped_symlink_dirs: usize,
    /// Whether `<results_dir>` was missing (output `[]`).
    pub dir_missing: bool,
    /// Output path.
    pub output: PathBuf,
    /// Result objects per group, with how many have valid power figures
    /// (for the step summary; see [`crate::group::element_facts`]).
    pub groups: BTreeMap<GroupKey, (usize, usize)>,
    /// Elements that are not result objects.
    pub other_elements: usize,
}

impl AggregateReport {
    /// Result objects written (every object element, whatever its group).
    #[must_use]
    pub fn result_rows(&self) -> usize {
        self.groups.values().map(|(n, _)| n).sum()
    }
}

/// Reads and parses one result file within the limits above. Only a
/// regular file is read (`fsio::read_regular`): a FIFO, socket or device
/// named `*.json` is an unreadable file, as a directory so named is.
fn read_value(path: &Path) -> Result<Value, AggregateError> {
    let file = || path.display().to_string();
    let read_err = |source| AggregateError::Read {
        file: file(),
        source,
    };
    let bytes = read_regular(path, MAX_RESULT_FILE_BYTES).map_err(|e| match e {
        ReadError::TooLarge { size, .. } => AggregateError::TooLarge { file: file(), size },
        ReadError::Io { source, .. } => read_err(source),
        e @ ReadError::NotRegular { .. } => read_err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            e.cause(),
        )),
    })?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| read_err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    sweep_model::json_strict::parse_str(text).map_err(|source| {
        if source.to_string().starts_with("recursion limit exceeded") {
            AggregateError::TooDeep {
                file: file(),
                line: source.line(),
            }
        } else {
            AggregateError::Json {
                file: file(),
                source,
            }
        }
    })
}

/// Writes `value` as the next array element: `,` unless it is the first,
/// then a newline and the value pretty-printed one level in.
fn write_element(
    out: &mut impl std::io::Write,
    value: &Value,
    first: bool,
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    buf.clear();
    serde_json::to_writer_pretty(&mut *buf, value).map_err(std::io::Error::other)?;
    out.write_all(if first { b"\n  " } else { b",\n  " })?;
    // The printer's newlines are all structural (strings escape theirs),
    // so indenting every line after the first moves the value one level in.
    for (i, line) in buf.split(|b| *b == b'\n').enumerate() {
        if i > 0 {
            out.write_all(b"\n  ")?;
        }
        out.write_all(line)?;
    }
    Ok(())
}

/// Aggregates `results_dir` into `out_dir/agg_<exp_name>.json`; the report
/// also counts the result objects per group for the step summary.
///
/// `expected_legs` is how many legs the sweep scheduled (`None` or 0: no
/// expectation, the reference's behaviour: an empty or missing directory
/// gives `[]`). With legs expected and not one result row read, the run
/// fails ([`AggregateError::NoResults`]) instead of writing `[]`.
///
/// # Errors
/// A directory cannot be listed, a file cannot be read or is not valid
/// JSON within the limits, no result row arrived from the legs expected,
/// or the output cannot be written. Nothing is written then, and an
/// existing output is left as it was.
pub fn run(
    results_dir: &Path,
    exp_name: &str,
    out_dir: &Path,
    expected_legs: Option<u64>,
) -> Result<AggregateReport, AggregateError> {
    let output = out_dir.join(format!("agg_{exp_name}.json"));
    let write_err = |source| AggregateError::Write {
        file: output.display().to_string(),
        source,
    };
    let mut report = AggregateReport {
        output: output.clone(),
        ..AggregateReport::default()
    };
    // Same temporary file and rename as `sweep_model::fsio::write_atomic`,
    // written file by file.
    let tmp_dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = sweep_model::fsio::temp_builder()
        .tempfile_in(tmp_dir)
        .map_err(write_err)?;
    let mut out = BufWriter::new(tmp);
    out.write_all(b"[").map_err(write_err)?;
    if results_dir.is_dir() {
        let found = json_files(results_dir)?;
        report.ignored_files = found.ignored;
        report.skipped_symlink_dirs = found.symlink_dirs;
        let mut buf = Vec::new();
        for path in &found.files {
            let value = read_value(path)?;
            match &value {
                Value::Array(items) => items.iter().for_each(|v| count(&mut report, v)),
                v => count(&mut report, v),
            }
            write_element(&mut out, &value, report.files_read == 0, &mut buf).map_err(write_err)?;
            report.files_read += 1;
        }
    } else {
        report.dir_missing = true;
    }
    if let Some(expected) = expected_legs.filter(|n| *n > 0)
        && report.result_rows() == 0
    {
        // The temporary file is removed when dropped.
        return Err(AggregateError::NoResults {
            dir: results_dir.display().to_string(),
            expected,
            files: report.files_read,
        });
    }
    out.write_all(if report.files_read > 0 { b"\n]" } else { b"]" })
        .map_err(write_err)?;
    let tmp = out.into_inner().map_err(|e| write_err(e.into_error()))?;
    // No fsync: the rename alone keeps readers from ever seeing a partial
    // file, and after a crash the job is re-run. Syncing a large run's
    // output (170 MB for 100,000 files) would wait for the disk for seconds.
    tmp.persist(&output).map_err(|e| write_err(e.error))?;
    Ok(report)
}

/// Counts one element of the output in the report's summary groups.
fn count(report: &mut AggregateReport, v: &Value) {
    match element_facts(v) {
        Some((key, power_valid)) => {
            let e = report.groups.entry(key).or_default();
            e.0 += 1;
            e.1 += usize::from(power_valid);
        }
        None => report.other_elements += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn touch(p: &Path, s: &str) {
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(p, s).expect("write");
    }

    #[test]
    fn traversal_is_files_first_then_subdirs_bytewise() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        for (p, s) in [
            ("z.json", "1"),
            ("a/y.json", "2"),
            ("a/x.json", "3"),
            ("a/deeper/w.json", "4"),
            ("b/v.json", "5"),
            ("B.json", "6"),
            (".h.json", "7"),
            ("n.jsonl", "x"),
            ("u.JSON", "x"),
        ] {
            touch(&r.join(p), s);
        }
        let rep = run(&r, "o", t.path(), None).expect("run");
        let v: Value =
            serde_json::from_slice(&std::fs::read(t.path().join("agg_o.json")).expect("read"))
                .expect("json");
        assert_eq!(v, json!([7, 6, 1, 3, 2, 4, 5]));
        assert_eq!(rep.files_read, 7);
        assert_eq!(rep.ignored_files, 2);
        assert_eq!(rep.other_elements, 7);
    }

    #[test]
    fn output_is_the_reference_layout() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        touch(
            &r.join("a.json"),
            "{\"k\": [1, 2], \"s\": \"a\\nb\", \"e\": {}}",
        );
        touch(&r.join("b.json"), "3");
        touch(&r.join("c.json"), "[1.0, 2.5e-7, []]");
        run(&r, "x", t.path(), None).expect("run");
        let got = std::fs::read_to_string(t.path().join("agg_x.json")).expect("read");
        assert_eq!(
            got,
            "[\n  {\n    \"k\": [\n      1,\n      2\n    ],\n    \"s\": \"a\\nb\",\n    \"e\": {}\n  },\n  3,\n  [\n    1.0,\n    2.5e-7,\n    []\n  ]\n]"
        );
        run(&t.path().join("missing"), "y", t.path(), None).expect("run");
        assert_eq!(
            std::fs::read_to_string(t.path().join("agg_y.json")).expect("read"),
            "[]"
        );
    }

    #[test]
    fn bad_file_fails_and_writes_nothing() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        touch(&r.join("a.json"), "{}");
        touch(&r.join("sub/b.json"), "");
        let err = run(&r, "bmk", t.path(), None).expect_err("must fail");
        assert!(err.to_string().contains("b.json"), "{err}");
        assert!(err.to_string().contains("invalid JSON"), "{err}");
        assert!(!t.path().join("agg_bmk.json").exists());
    }

    /// Issue #34 item 3b: a key twice in one object was kept with its last
    /// value; now the file is refused, naming it, the key and the line.
    #[test]
    fn a_key_twice_in_one_object_is_refused() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        touch(&r.join("a.json"), "{\"hw\": \"b200\"}");
        touch(
            &r.join("b.json"),
            "[{\"tput_per_gpu\": 1.0,\n  \"tput_per_gpu\": 9000.0}]",
        );
        let err = run(&r, "x", t.path(), None).expect_err("must fail");
        let msg = err.to_string();
        assert!(
            msg.contains(
                "b.json: invalid JSON: duplicate key \"tput_per_gpu\" at $[0].tput_per_gpu"
            ),
            "{msg}"
        );
        assert_eq!(err.location().1, Some(2));
        assert_eq!(sweep_cli::Classify::kind(&err), sweep_cli::Kind::Rejected);
        assert!(!t.path().join("agg_x.json").exists());
    }

    #[test]
    fn first_bad_file_in_traversal_order_is_reported() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        for i in 0..200 {
            touch(
                &r.join(format!("d{i:03}/f.json")),
                if i == 150 || i == 40 { "{" } else { "1" },
            );
        }
        let err = run(&r, "x", t.path(), None).expect_err("must fail");
        assert!(err.to_string().contains("d040"), "{err}");
    }

    /// A file 20,000 levels deep (about 120 KB) is an error naming the file
    /// and the limit; it once produced an 800 MB output.
    #[test]
    fn deeply_nested_file_is_refused() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        let deep = format!("{}1{}", "[  ".repeat(20_000), "  ]".repeat(20_000));
        assert!(deep.len() > 120_000);
        touch(&r.join("deep.json"), &deep);
        let err = run(&r, "x", t.path(), None).expect_err("must fail");
        let msg = err.to_string();
        assert!(msg.contains("deep.json"), "{msg}");
        assert!(msg.contains("MAX_JSON_DEPTH"), "{msg}");
        assert!(msg.contains(&MAX_JSON_DEPTH.to_string()), "{msg}");
        assert_eq!(err.location().1, Some(1));
        assert!(!t.path().join("agg_x.json").exists());
        // Just within the limit is fine.
        let ok = format!(
            "{}1{}",
            "[".repeat(MAX_JSON_DEPTH),
            "]".repeat(MAX_JSON_DEPTH)
        );
        touch(&r.join("deep.json"), &ok);
        run(&r, "x", t.path(), None).expect("within the limit");
        let over = format!("[{ok}]");
        touch(&r.join("deep.json"), &over);
        assert!(matches!(
            run(&r, "x", t.path(), None),
            Err(AggregateError::TooDeep { .. })
        ));
    }

    /// Issue #34 item 1: every leg failed, so download-artifact found
    /// nothing; with the legs expected that is a failure, not `[]`.
    #[test]
    fn no_results_from_scheduled_legs_fails_and_writes_nothing() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("results");
        std::fs::create_dir_all(&r).expect("mkdir");
        let err = run(&r, "bmk", t.path(), Some(9)).expect_err("must fail");
        assert!(matches!(
            err,
            AggregateError::NoResults {
                expected: 9,
                files: 0,
                ..
            }
        ));
        assert_eq!(sweep_cli::Classify::kind(&err), sweep_cli::Kind::Rejected);
        let msg = err.to_string();
        assert!(
            msg.contains("the sweep scheduled 9 legs and 0 results arrived"),
            "{msg}"
        );
        assert!(!t.path().join("agg_bmk.json").exists());
        // A missing directory, and files without a row (`[]`), the same.
        let err = run(&t.path().join("none"), "bmk", t.path(), Some(1)).expect_err("missing");
        assert!(
            err.to_string().contains("scheduled 1 leg and 0 results"),
            "{err}"
        );
        touch(&r.join("a.json"), "[]");
        let err = run(&r, "bmk", t.path(), Some(9)).expect_err("no rows");
        assert!(err.to_string().contains("(1 result file read"), "{err}");
        assert!(!t.path().join("agg_bmk.json").exists());
        // An existing output is left as it was.
        touch(&t.path().join("agg_bmk.json"), "old");
        run(&r, "bmk", t.path(), Some(9)).expect_err("no rows");
        assert_eq!(
            std::fs::read_to_string(t.path().join("agg_bmk.json")).expect("read"),
            "old"
        );
        // One row is enough; no expectation (or 0 legs) keeps `[]`.
        touch(&r.join("b.json"), r#"{"hw": "b200"}"#);
        assert_eq!(
            run(&r, "bmk", t.path(), Some(9))
                .expect("one row")
                .files_read,
            2
        );
        std::fs::remove_file(r.join("b.json")).expect("rm");
        run(&r, "bmk", t.path(), None).expect("no expectation");
        run(&r, "bmk", t.path(), Some(0)).expect("nothing scheduled");
        assert_eq!(
            std::fs::read_to_string(t.path().join("agg_bmk.json")).expect("read"),
            "[\n  []\n]"
        );
    }

    #[test]
    fn too_large_file_is_refused() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        std::fs::create_dir_all(&r).expect("mkdir");
        let f = std::fs::File::create(r.join("big.json")).expect("create");
        // A sparse file: the size is checked before anything is read.
        f.set_len(MAX_RESULT_FILE_BYTES + 1).expect("set_len");
        let err = run(&r, "x", t.path(), None).expect_err("must fail");
        let msg = err.to_string();
        assert!(msg.contains("big.json"), "{msg}");
        assert!(msg.contains("MAX_RESULT_FILE_BYTES"), "{msg}");
    }

    #[test]
    fn output_replaces_an_existing_file_and_leaves_no_temporaries() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        touch(&r.join("a.json"), "1");
        touch(&t.path().join("agg_x.json"), "old");
        run(&r, "x", t.path(), None).expect("run");
        run(&r, "x", t.path(), None).expect("run again");
        let got = std::fs::read_to_string(t.path().join("agg_x.json")).expect("read");
        assert_eq!(got, "[\n  1\n]");
        let names: Vec<_> = std::fs::read_dir(t.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // A directory in the way is an error, and stays a directory.
        std::fs::create_dir(t.path().join("agg_d.json")).expect("mkdir");
        let err = run(&r, "d", t.path(), None).expect_err("must fail");
        assert!(err.to_string().contains("cannot write"), "{err}");
        assert!(t.path().join("agg_d.json").is_dir());
    }

    #[test]
    fn groups_count_result_objects() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        let row = r#"{"infmax_model_prefix": "dsr1", "hw": "b200", "framework": "sglang",
                      "precision": "fp8", "is_multinode": false, "power_valid": 1}"#;
        touch(&r.join("a.json"), row);
        touch(&r.join("b.json"), &format!("[{row}, 3]"));
        let rep = run(&r, "x", t.path(), None).expect("run");
        let key = (
            "dsr1".to_owned(),
            "b200".to_owned(),
            "sglang".to_owned(),
            "fp8".to_owned(),
            "single-node",
        );
        assert_eq!(rep.groups.get(&key), Some(&(2, 2)));
        assert_eq!(rep.other_elements, 1);
    }
}
