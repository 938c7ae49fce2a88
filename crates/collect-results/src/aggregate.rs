//! `collect-results aggregate <results_dir> <exp_name>`: every `*.json`
//! under the results directory, parsed and appended as one element each, to
//! `agg_<exp_name>.json` (spec `results.md` §4).
//!
//! Traversal is pinned (the reference follows the filesystem's order):
//! depth-first pre-order, a directory's matching files first in byte-wise
//! name order, then its subdirectories in byte-wise name order. Symlinked
//! directories are not entered.
//!
//! Speed: a sweep downloads one artifact directory per job, so the work is
//! dominated by thousands of small opens and reads. The top-level entries
//! are split into work units that a few threads walk, read and check in
//! parallel; each unit's output is kept in order and concatenated at the end.
//! Every file is validated with serde_json (no tree is built) and then
//! re-indented token by token, so numbers and strings are carried over
//! exactly as written. The output is semantically what the reference writes
//! (2-space indent); the only textual differences are escapes and number
//! spellings the reference would normalise (`1E5` stays `1E5`).

use std::ffi::{CString, OsString};
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, openat, statat};
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
    /// The elements written, parsed — only when asked for (summaries).
    pub rows: Vec<Value>,
}

/// One directory listing split the way the traversal order needs it.
struct Listing {
    files: Vec<OsString>,
    dirs: Vec<OsString>,
    ignored: usize,
    symlink_dirs: usize,
}

fn list(dir: &Path) -> Result<Listing, AggregateError> {
    let list_err = |source| AggregateError::List {
        dir: dir.display().to_string(),
        source,
    };
    let mut l = Listing {
        files: Vec::new(),
        dirs: Vec::new(),
        ignored: 0,
        symlink_dirs: 0,
    };
    for entry in std::fs::read_dir(dir).map_err(list_err)? {
        let entry = entry.map_err(list_err)?;
        let name = entry.file_name();
        let ft = entry.file_type().map_err(list_err)?;
        let is_json = name.as_encoded_bytes().ends_with(b".json");
        if ft.is_dir() {
            // A directory named `*.json` matches the reference's glob too
            // (which then fails to open it); it fails the same way here.
            if is_json {
                l.files.push(name.clone());
            }
            l.dirs.push(name);
        } else if is_json {
            l.files.push(name);
        } else if ft.is_symlink() && entry.path().is_dir() {
            l.symlink_dirs += 1;
        } else {
            l.ignored += 1;
        }
    }
    l.files
        .sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    l.dirs
        .sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    Ok(l)
}

/// Lists the `*.json` files under `root` in the pinned order (sequential;
/// [`run`] does the same walk in parallel).
pub fn discover(root: &Path, report: &mut AggregateReport) -> Result<Vec<PathBuf>, AggregateError> {
    fn walk(
        dir: &Path,
        out: &mut Vec<PathBuf>,
        report: &mut AggregateReport,
    ) -> Result<(), AggregateError> {
        let l = list(dir)?;
        report.ignored_files += l.ignored;
        report.skipped_symlink_dirs += l.symlink_dirs;
        out.extend(l.files.iter().map(|f| dir.join(f)));
        for d in &l.dirs {
            walk(&dir.join(d), out, report)?;
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(root, &mut out, report)?;
    Ok(out)
}

/// Newline plus indentation for up to 64 levels (deeper levels extend it).
const INDENT: &[u8] = b"\n                                                                                                                                ";

/// Re-emits already validated JSON `src` with 2-space indentation, nested
/// `depth` levels deep, appending to `out`. Tokens are copied verbatim.
pub fn reindent(src: &[u8], depth: usize, out: &mut Vec<u8>) {
    fn newline(out: &mut Vec<u8>, depth: usize) {
        let n = 1 + 2 * depth;
        if n <= INDENT.len() {
            out.extend_from_slice(&INDENT[..n]);
        } else {
            out.push(b'\n');
            out.resize(out.len() + 2 * depth, b' ');
        }
    }
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

// --- the parallel walk -------------------------------------------------
//
// Directories are opened relative to their parent's descriptor and files
// relative to their directory's, so the kernel resolves one name per call
// instead of the whole path; files are read with plain `read(2)` calls into
// a reused buffer (no size query, no seek). On a tree of 1,000 one-file
// artifact directories this is most of the run time.

/// A directory entry kept for the ordered walk.
struct Entry {
    name: CString,
    is_dir: bool,
}

/// Lists `fd` (a directory) into `*.json` files and subdirectories, each in
/// byte-wise name order, counting what is left out.
/// The `Dir` keeps the descriptor; its `fd()` serves the `*at` calls, which
/// do not depend on the read position.
fn list_fd(
    dir: &mut Dir,
    path: &Path,
    out: &mut UnitOut,
) -> Result<(Vec<CString>, Vec<CString>), AggregateError> {
    let list_err = |e: rustix::io::Errno| AggregateError::List {
        dir: path.display().to_string(),
        source: e.into(),
    };
    let mut entries: Vec<Entry> = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry.map_err(list_err)?;
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let is_json = bytes.ends_with(b".json");
        let mut ft = entry.file_type();
        if ft == FileType::Unknown {
            // Filesystems without d_type: ask once, without following links.
            ft = statat(dir.fd().map_err(list_err)?, name, AtFlags::SYMLINK_NOFOLLOW)
                .map(|st| FileType::from_raw_mode(st.st_mode))
                .map_err(list_err)?;
        }
        match ft {
            FileType::Directory => entries.push(Entry {
                name: name.to_owned(),
                is_dir: true,
            }),
            _ if is_json => entries.push(Entry {
                name: name.to_owned(),
                is_dir: false,
            }),
            FileType::Symlink => {
                let target_is_dir = statat(dir.fd().map_err(list_err)?, name, AtFlags::empty())
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory);
                if target_is_dir {
                    out.symlink_dirs += 1;
                } else {
                    out.ignored += 1;
                }
            }
            _ => out.ignored += 1,
        }
    }
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for e in entries {
        // A directory named `*.json` matches the reference's glob too (and
        // then fails to open as a file); it fails the same way here.
        if e.is_dir && e.name.to_bytes().ends_with(b".json") {
            files.push(e.name.clone());
        }
        if e.is_dir {
            dirs.push(e.name);
        } else {
            files.push(e.name);
        }
    }
    files.sort();
    dirs.sort();
    Ok((files, dirs))
}

fn os_path(base: &Path, name: &CString) -> PathBuf {
    base.join(std::ffi::OsStr::from_bytes(name.to_bytes()))
}

/// Per-thread state: a reusable read buffer and one output buffer that all
/// of the thread's units append to (few large allocations instead of one
/// per unit: page faults and heap growth were a visible share of the time).
struct Worker {
    buf: Vec<u8>,
    text: Vec<u8>,
}

/// Output of one work unit (a top-level file or a top-level subtree): its
/// elements are `text[start..end]` of the worker that ran it.
#[derive(Default)]
struct UnitOut {
    start: usize,
    end: usize,
    files: usize,
    ignored: usize,
    symlink_dirs: usize,
    rows: Vec<Value>,
}

impl Worker {
    /// Reads a whole file (`openat` + `read` until end of file).
    fn read(&mut self, dirfd: BorrowedFd<'_>, name: &CString) -> std::io::Result<usize> {
        let fd = openat(
            dirfd,
            name.as_c_str(),
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut len = 0;
        loop {
            if self.buf.len() - len < 4096 {
                let grow = self.buf.len().max(64 * 1024);
                self.buf.resize(self.buf.len() + grow, 0);
            }
            match rustix::io::read(&fd, &mut self.buf[len..]) {
                Ok(0) => return Ok(len),
                Ok(n) => len += n,
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Reads, validates and appends one file as an array element.
    fn file(
        &mut self,
        dirfd: BorrowedFd<'_>,
        name: &CString,
        dir_path: &Path,
        out: &mut UnitOut,
        keep_rows: bool,
    ) -> Result<(), AggregateError> {
        let path = || os_path(dir_path, name).display().to_string();
        let len = self
            .read(dirfd, name)
            .map_err(|source| AggregateError::Read {
                file: path(),
                source,
            })?;
        let data = &self.buf[..len];
        if let Err(e) = std::str::from_utf8(data) {
            return Err(AggregateError::Read {
                file: path(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
            });
        }
        let json_err = |source| AggregateError::Json {
            file: path(),
            source,
        };
        if keep_rows {
            out.rows
                .push(serde_json::from_slice(data).map_err(json_err)?);
        } else {
            serde_json::from_slice::<serde::de::IgnoredAny>(data).map_err(json_err)?;
        }
        if out.files > 0 {
            self.text.push(b',');
        }
        self.text.extend_from_slice(b"\n  ");
        reindent(data, 1, &mut self.text);
        out.files += 1;
        Ok(())
    }

    /// Walks the directory `name` (relative to `parent`) depth-first.
    fn tree(
        &mut self,
        parent: BorrowedFd<'_>,
        name: &CString,
        path: &Path,
        out: &mut UnitOut,
        keep_rows: bool,
    ) -> Result<(), AggregateError> {
        let fd = openat(
            parent,
            name.as_c_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| AggregateError::List {
            dir: path.display().to_string(),
            source: e.into(),
        })?;
        let list_err = |e: rustix::io::Errno| AggregateError::List {
            dir: path.display().to_string(),
            source: e.into(),
        };
        let mut dir = Dir::new(fd).map_err(list_err)?;
        let (files, dirs) = list_fd(&mut dir, path, out)?;
        let dirfd = dir.fd().map_err(list_err)?;
        for f in &files {
            self.file(dirfd, f, path, out, keep_rows)?;
        }
        for d in &dirs {
            self.tree(dirfd, d, &os_path(path, d), out, keep_rows)?;
        }
        Ok(())
    }
}

enum Unit {
    File(CString),
    Dir(CString),
}

/// Aggregates `results_dir` into `out_dir/agg_<exp_name>.json`. With
/// `keep_rows` the parsed elements are returned in the report as well.
pub fn run(
    results_dir: &Path,
    exp_name: &str,
    out_dir: &Path,
    keep_rows: bool,
) -> Result<AggregateReport, AggregateError> {
    let mut report = AggregateReport {
        output: out_dir.join(format!("agg_{exp_name}.json")),
        ..AggregateReport::default()
    };
    let mut units = Vec::new();
    let mut root_fd = None;
    if results_dir.is_dir() {
        let list_err = |source: std::io::Error| AggregateError::List {
            dir: results_dir.display().to_string(),
            source,
        };
        let fd = rustix::fs::open(
            results_dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| list_err(e.into()))?;
        let mut dir = Dir::new(fd).map_err(|e| list_err(e.into()))?;
        let mut top = UnitOut::default();
        let (files, dirs) = list_fd(&mut dir, results_dir, &mut top)?;
        report.ignored_files += top.ignored;
        report.skipped_symlink_dirs += top.symlink_dirs;
        units.extend(files.into_iter().map(Unit::File));
        units.extend(dirs.into_iter().map(Unit::Dir));
        root_fd = Some(dir);
    } else {
        report.dir_missing = true;
    }

    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, 8)
        .min(units.len().max(1));
    // Each worker takes the next unit, appends its elements to its own
    // buffer and records where they are; assembly follows unit order.
    type Done = (Vec<u8>, Vec<(usize, Result<UnitOut, AggregateError>)>);
    let work = || -> Done {
        let mut w = Worker {
            buf: vec![0; 64 * 1024],
            text: Vec::with_capacity(1 << 20),
        };
        let mut done = Vec::new();
        let Some(root) = root_fd.as_ref().and_then(|d| d.fd().ok()) else {
            return (w.text, done);
        };
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(unit) = units.get(i) else { break };
            let mut out = UnitOut {
                start: w.text.len(),
                ..UnitOut::default()
            };
            let r = match unit {
                Unit::File(name) => w.file(root, name, results_dir, &mut out, keep_rows),
                Unit::Dir(name) => {
                    w.tree(root, name, &os_path(results_dir, name), &mut out, keep_rows)
                }
            };
            out.end = w.text.len();
            let failed = r.is_err();
            done.push((i, r.map(|()| out)));
            if failed {
                // Later units cannot change the outcome for this one.
                break;
            }
        }
        (w.text, done)
    };
    let outputs: Vec<Done> = if threads <= 1 {
        vec![work()]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
            let mut all = vec![work()];
            for h in handles {
                all.push(h.join().unwrap_or_else(|_| (Vec::new(), Vec::new())));
            }
            all
        })
    };

    // Unit index -> (worker, result); the first failure in unit order wins.
    let mut by_unit: Vec<Option<(usize, UnitOut)>> = (0..units.len()).map(|_| None).collect();
    let mut first_err: Option<(usize, AggregateError)> = None;
    let mut texts = Vec::with_capacity(outputs.len());
    for (wi, (text, done)) in outputs.into_iter().enumerate() {
        texts.push(text);
        for (i, r) in done {
            match r {
                Ok(u) => by_unit[i] = Some((wi, u)),
                Err(e) => {
                    if first_err.as_ref().is_none_or(|(j, _)| i < *j) {
                        first_err = Some((i, e));
                    }
                }
            }
        }
    }
    // A failed unit stops its worker, so units after it may be missing;
    // only units before the first failure must all be present.
    let limit = first_err.as_ref().map_or(units.len(), |(i, _)| *i);
    if by_unit[..limit].iter().any(Option::is_none) {
        return Err(AggregateError::Read {
            file: results_dir.display().to_string(),
            source: std::io::Error::other("a worker thread stopped early"),
        });
    }
    if let Some((_, e)) = first_err {
        return Err(e);
    }
    let total: usize = by_unit
        .iter()
        .flatten()
        .map(|(_, u)| u.end - u.start + 1)
        .sum();
    let mut text = Vec::with_capacity(total + 4);
    text.push(b'[');
    for (wi, unit) in by_unit.into_iter().flatten() {
        if unit.files > 0 {
            if report.files_read > 0 {
                text.push(b',');
            }
            text.extend_from_slice(&texts[wi][unit.start..unit.end]);
        }
        report.files_read += unit.files;
        report.ignored_files += unit.ignored;
        report.skipped_symlink_dirs += unit.symlink_dirs;
        report.rows.extend(unit.rows);
    }
    if report.files_read > 0 {
        text.push(b'\n');
    }
    text.push(b']');

    sweep_model::fsio::write_atomic(&report.output, &text).map_err(|source| {
        AggregateError::Write {
            file: report.output.display().to_string(),
            source,
        }
    })?;
    Ok(report)
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
        let mut rep = AggregateReport::default();
        let got: Vec<String> = discover(&r, &mut rep)
            .expect("ok")
            .iter()
            .map(|p| p.strip_prefix(&r).expect("prefix").display().to_string())
            .collect();
        let want = [
            ".h.json",
            "B.json",
            "z.json",
            "a/x.json",
            "a/y.json",
            "a/deeper/w.json",
            "b/v.json",
        ];
        assert_eq!(got, want);
        assert_eq!(rep.ignored_files, 2);
        // The parallel run emits the same order.
        let rep = run(&r, "o", t.path(), false).expect("run");
        let v: Value =
            serde_json::from_slice(&std::fs::read(t.path().join("agg_o.json")).expect("read"))
                .expect("json");
        assert_eq!(v, json!([7, 6, 1, 3, 2, 4, 5]));
        assert_eq!(rep.files_read, 7);
        assert_eq!(rep.ignored_files, 2);
    }

    #[test]
    fn reindent_matches_python_indent_2() {
        let src = br#" {"a" : [1, {"b":"x,\"}]"}, [], {}], "c":{ } ,"d":-1.5e3, "e": [ ]} "#;
        let mut out = Vec::new();
        reindent(src, 0, &mut out);
        let want = "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"x,\\\"}]\"\n    },\n    [],\n    {}\n  ],\n  \"c\": {},\n  \"d\": -1.5e3,\n  \"e\": []\n}";
        assert_eq!(String::from_utf8(out).expect("utf8"), want);
    }

    #[test]
    fn output_is_the_reference_layout() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        touch(&r.join("a.json"), "{\"k\": [1, 2]}");
        touch(&r.join("b.json"), "3");
        run(&r, "x", t.path(), false).expect("run");
        let got = std::fs::read_to_string(t.path().join("agg_x.json")).expect("read");
        assert_eq!(
            got,
            "[\n  {\n    \"k\": [\n      1,\n      2\n    ]\n  },\n  3\n]"
        );
        run(&t.path().join("missing"), "y", t.path(), false).expect("run");
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
        let err = run(&r, "bmk", t.path(), false).expect_err("must fail");
        assert!(err.to_string().contains("b.json"), "{err}");
        assert!(err.to_string().contains("invalid JSON"), "{err}");
        assert!(!t.path().join("agg_bmk.json").exists());
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
        let err = run(&r, "x", t.path(), false).expect_err("must fail");
        assert!(err.to_string().contains("d040"), "{err}");
    }

    #[test]
    fn many_files_keep_order_across_threads() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        for i in 0..300 {
            touch(&r.join(format!("f{i:04}.json")), &i.to_string());
        }
        let rep = run(&r, "x", t.path(), true).expect("ok");
        let v: Vec<i64> =
            serde_json::from_slice(&std::fs::read(t.path().join("agg_x.json")).expect("read"))
                .expect("json");
        assert_eq!(v, (0..300).collect::<Vec<_>>());
        assert_eq!(rep.rows.len(), 300);
    }
}
