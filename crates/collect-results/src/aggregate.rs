//! `collect-results aggregate <results_dir> <exp_name>`: every `*.json`
//! under the results directory, parsed and appended as one element each, to
//! `agg_<exp_name>.json` (spec `results.md` §4).
//!
//! Traversal is pinned (the reference follows the filesystem's order):
//! depth-first pre-order, a directory's matching files first in byte-wise
//! name order, then its subdirectories in byte-wise name order. Symlinked
//! directories are not entered. Files are read and parsed on a few threads,
//! then emitted in that order.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Why aggregation failed; nothing is written in any of these cases.
#[derive(Debug, thiserror::Error)]
pub enum AggregateError {
    #[error("cannot list {dir}: {source}")]
    List {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
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
    /// The elements written (kept for the summaries).
    pub rows: Vec<Value>,
}

/// Lists the `*.json` files under `root` in the pinned order.
pub fn discover(root: &Path, report: &mut AggregateReport) -> Result<Vec<PathBuf>, AggregateError> {
    let mut out = Vec::new();
    walk(root, &mut out, report)?;
    Ok(out)
}

fn walk(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    report: &mut AggregateReport,
) -> Result<(), AggregateError> {
    let list_err = |source| AggregateError::List {
        dir: dir.display().to_string(),
        source,
    };
    let mut files: Vec<OsString> = Vec::new();
    let mut dirs: Vec<OsString> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(list_err)? {
        let entry = entry.map_err(list_err)?;
        let name = entry.file_name();
        let ft = entry.file_type().map_err(list_err)?;
        let is_json = name.as_encoded_bytes().ends_with(b".json");
        if ft.is_dir() {
            // A directory named `*.json` is matched by the reference's glob
            // too (and then fails to open); report it the same way.
            if is_json {
                files.push(name.clone());
            }
            dirs.push(name);
        } else if is_json {
            files.push(name);
        } else if ft.is_symlink() && entry.path().is_dir() {
            report.skipped_symlink_dirs += 1;
        } else {
            report.ignored_files += 1;
        }
    }
    files.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    dirs.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    out.extend(files.into_iter().map(|f| dir.join(f)));
    for d in dirs {
        walk(&dir.join(d), out, report)?;
    }
    Ok(())
}

fn parse_file(path: &Path) -> Result<Value, AggregateError> {
    let bytes = std::fs::read(path).map_err(|source| AggregateError::Read {
        file: path.display().to_string(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|source| AggregateError::Json {
        file: path.display().to_string(),
        source,
    })
}

/// Parses every file, in order, on up to `available_parallelism` threads.
/// The first failing file in traversal order is reported.
pub fn parse_all(files: &[PathBuf]) -> Result<Vec<Value>, AggregateError> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(8);
    if threads <= 1 || files.len() < 64 {
        return files.iter().map(|f| parse_file(f)).collect();
    }
    let chunk = files.len().div_ceil(threads);
    let results: Vec<Result<Vec<Value>, AggregateError>> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(|f| parse_file(f)).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(AggregateError::Read {
                        file: "(worker thread)".into(),
                        source: std::io::Error::other("a parser thread panicked"),
                    })
                })
            })
            .collect()
    });
    let mut all = Vec::with_capacity(files.len());
    for r in results {
        all.extend(r?);
    }
    Ok(all)
}

/// Aggregates `results_dir` into `out_dir/agg_<exp_name>.json`.
pub fn run(
    results_dir: &Path,
    exp_name: &str,
    out_dir: &Path,
) -> Result<AggregateReport, AggregateError> {
    let mut report = AggregateReport {
        output: out_dir.join(format!("agg_{exp_name}.json")),
        ..AggregateReport::default()
    };
    let files = if results_dir.is_dir() {
        discover(results_dir, &mut report)?
    } else {
        report.dir_missing = true;
        Vec::new()
    };
    let values = parse_all(&files)?;
    report.files_read = values.len();
    let bytes = serde_json::to_vec_pretty(&values).map_err(|e| AggregateError::Write {
        file: report.output.display().to_string(),
        source: std::io::Error::other(e),
    })?;
    sweep_model::fsio::write_atomic(&report.output, &bytes).map_err(|source| {
        AggregateError::Write {
            file: report.output.display().to_string(),
            source,
        }
    })?;
    report.rows = values;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut rep = AggregateReport::default();
        let got: Vec<String> = discover(&r, &mut rep)
            .expect("ok")
            .iter()
            .map(|p| p.strip_prefix(&r).expect("prefix").display().to_string())
            .collect();
        assert_eq!(
            got,
            [
                ".h.json",
                "B.json",
                "z.json",
                "a/x.json",
                "a/y.json",
                "a/deeper/w.json",
                "b/v.json"
            ]
        );
        assert_eq!(rep.ignored_files, 2);
    }

    #[test]
    fn bad_file_fails_and_writes_nothing() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        touch(&r.join("a.json"), "{}");
        touch(&r.join("b.json"), "");
        let err = run(&r, "bmk", t.path()).expect_err("must fail");
        assert!(err.to_string().contains("b.json"), "{err}");
        assert!(err.to_string().contains("invalid JSON"), "{err}");
        assert!(!t.path().join("agg_bmk.json").exists());
    }

    #[test]
    fn many_files_keep_order_across_threads() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        for i in 0..300 {
            touch(&r.join(format!("f{i:04}.json")), &i.to_string());
        }
        run(&r, "x", t.path()).expect("ok");
        let v: Vec<i64> =
            serde_json::from_slice(&std::fs::read(t.path().join("agg_x.json")).expect("read"))
                .expect("json");
        assert_eq!(v, (0..300).collect::<Vec<_>>());
    }
}
