//! The history store: a folder of JSON Lines files, the checkout of the
//! repository's data branch (`sweepkit-history` by default; [`crate::git`]
//! fetches, commits and pushes it).
//!
//! ```text
//! runs.jsonl                                   one line per appended run: the index
//! series/<hw>/<prefix>-<precision>-<framework>.jsonl   benchmark rows of one configuration
//! evals/<hw>/<prefix>-<precision>-<framework>.jsonl    eval rows of one configuration
//! ```
//!
//! Why this shape: a PR's comparison reads only the files of the
//! configurations it swept, never the whole history; one hardware never
//! shares a file with another, so series of different GPUs cannot mix; and
//! an append only adds lines at the ends of files, so the branch grows by
//! what a run measured (no file is rewritten) and two appends on top of each
//! other never conflict once re-applied on the newer tip.
//!
//! Every line carries the run it came from. An append writes the rows
//! first and the run's index line last: the index line is what makes a run
//! part of the history, so rows of an append that died half-way are
//! orphans, which [`Store::verify`] names and refuses. A run already in the
//! index with the same rows is not appended again (appends are idempotent
//! per run id and attempt); with different rows it is refused.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};
use sweep_model::fsio::read_regular;
use sweep_model::results::{EvalRow, ResultRow};

use crate::read::RunIndex;
pub use crate::record::{
    Appended, FORMAT, INDEX, IndexLine, Kind, Line, MAX_FILE_BYTES, MAX_LINE_BYTES, PlaceError,
    Run, RunKey, RunRef, StoreError, hardware,
};
use crate::record::{MAX_COMPONENT, RowCounts};
use crate::series::{Scope, Series};

/// A history store: the folder ([`Store`]) or PostgreSQL
/// ([`crate::pg::PgStore`]), with the same rules.
pub trait History {
    /// Where the store is, for messages (a password never shown).
    fn describe(&self) -> String;
    /// Every run in the history, in the order appended.
    ///
    /// # Errors
    /// The index cannot be read or is corrupt.
    fn runs(&self) -> Result<Vec<IndexLine>, StoreError>;
    /// Appends one run, idempotently per run id and attempt.
    ///
    /// # Errors
    /// See [`Store::append`].
    fn append(&self, run: &Run) -> Result<Appended, StoreError>;
    /// Every series file (relative path, sorted).
    ///
    /// # Errors
    /// The store cannot be listed.
    fn files(&self) -> Result<Vec<String>, StoreError>;
    /// The lines of one series file, only of runs in the index.
    ///
    /// # Errors
    /// A line cannot be read or is corrupt.
    fn lines(&self, file: &str) -> Result<Vec<Line>, StoreError>;
    /// The series of one file for `metrics` within `scope`. The default
    /// reads every line ([`History::lines`]).
    ///
    /// # Errors
    /// As [`History::lines`].
    fn series(
        &self,
        file: &str,
        metrics: &[&'static str],
        scope: Scope<'_>,
    ) -> Result<Series, StoreError> {
        Ok(crate::series::series_in(&self.lines(file)?, metrics, scope))
    }
    /// Checks the whole store.
    ///
    /// # Errors
    /// The first problem found.
    fn verify(&self) -> Result<Verified, StoreError>;
}

impl History for Store {
    fn describe(&self) -> String {
        self.root.display().to_string()
    }
    fn runs(&self) -> Result<Vec<IndexLine>, StoreError> {
        Store::runs(self)
    }
    fn append(&self, run: &Run) -> Result<Appended, StoreError> {
        Store::append(self, run)
    }
    fn files(&self) -> Result<Vec<String>, StoreError> {
        Store::files(self)
    }
    fn lines(&self, file: &str) -> Result<Vec<Line>, StoreError> {
        Store::lines(self, file)
    }
    fn series(
        &self,
        file: &str,
        metrics: &[&'static str],
        scope: Scope<'_>,
    ) -> Result<Series, StoreError> {
        Store::series(self, file, metrics, scope)
    }
    fn verify(&self) -> Result<Verified, StoreError> {
        Store::verify(self)
    }
}

/// A run checked and placed, ready to be written by either store.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub(crate) digest: String,
    /// (file, kind, the line's row as compact JSON), in the run's order:
    /// benchmark rows, then eval rows.
    pub(crate) rows: Vec<(String, Kind, String)>,
}

/// Checks every row of `run` and names its file, before anything is
/// written.
pub(crate) fn plan(run: &Run) -> Result<Planned, StoreError> {
    if run.run.commit.is_empty() || run.run.run_id == 0 || run.run.attempt == 0 {
        return Err(StoreError::Invalid(
            "a run needs its id, attempt (from 1) and commit".into(),
        ));
    }
    let mut rows = Vec::new();
    for (what, kind, list) in [
        ("benchmarks", Kind::Benchmark, &run.benchmarks),
        ("evals", Kind::Eval, &run.evals),
    ] {
        for (index, row) in list.iter().enumerate() {
            let file =
                file_of(kind, row).map_err(|cause| StoreError::BadRow { what, index, cause })?;
            let text =
                serde_json::to_string(row).map_err(|e| StoreError::Invalid(e.to_string()))?;
            rows.push((file, kind, text));
        }
    }
    Ok(Planned {
        digest: digest(run),
        rows,
    })
}

/// The file a row of `kind` belongs in (after checking it is one).
pub(crate) fn file_of(kind: Kind, row: &Map<String, Value>) -> Result<String, PlaceError> {
    match kind {
        Kind::Benchmark => benchmark_file(row),
        Kind::Eval => eval_file(row),
    }
}

/// The store at a folder.
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    /// The index as read, until the next append through this store.
    index: Mutex<Option<Arc<RunIndex>>>,
}

impl Clone for Store {
    fn clone(&self) -> Store {
        Store::new(&self.root)
    }
}

impl Store {
    /// The store in `root` (a folder; an empty one is an empty history).
    #[must_use]
    pub fn new(root: &Path) -> Store {
        Store {
            root: root.to_path_buf(),
            index: Mutex::new(None),
        }
    }

    /// The folder.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The index: every run in the history, in the order appended.
    ///
    /// # Errors
    /// The index cannot be read or a line of it is corrupt.
    pub fn runs(&self) -> Result<Vec<IndexLine>, StoreError> {
        let path = self.root.join(INDEX);
        if !path.exists() {
            return Ok(Vec::new());
        }
        read_lines(&path)
    }

    /// Appends one run (see the module header).
    ///
    /// # Errors
    /// A row is not a valid aggregate row or names a path component that is
    /// not a plain name; the run is there already with other rows; the
    /// index is corrupt; a file cannot be written.
    pub fn append(&self, run: &Run) -> Result<Appended, StoreError> {
        let planned = plan(run)?;
        *self
            .index
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        if let Some(have) = self
            .runs()?
            .into_iter()
            .find(|l| l.run.run_id == run.run.run_id && l.run.attempt == run.run.attempt)
        {
            if have.digest == planned.digest {
                return Ok(Appended::AlreadyThere);
            }
            return Err(StoreError::Conflict {
                run_id: run.run.run_id,
                attempt: run.run.attempt,
                have: have.digest,
                new: planned.digest,
            });
        }
        let mut by_file: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for (file, kind, text) in &planned.rows {
            let line = format!(
                "{{\"v\":{FORMAT},\"run\":{},\"kind\":\"{}\",\"row\":{text}}}\n",
                serde_json::to_string(&run.run).map_err(|e| StoreError::Invalid(e.to_string()))?,
                match kind {
                    Kind::Benchmark => "benchmark",
                    Kind::Eval => "eval",
                }
            );
            by_file
                .entry(file.clone())
                .or_default()
                .extend_from_slice(line.as_bytes());
        }
        for (file, bytes) in &by_file {
            append_bytes(&self.root.join(file), bytes)?;
        }
        let index = IndexLine {
            v: FORMAT,
            run: run.run.clone(),
            repo: run.repo.clone(),
            event: run.event.clone(),
            benchmarks: run.benchmarks.len(),
            evals: run.evals.len(),
            digest: planned.digest,
        };
        let mut line =
            serde_json::to_vec(&index).map_err(|e| StoreError::Invalid(e.to_string()))?;
        line.push(b'\n');
        append_bytes(&self.root.join(INDEX), &line)?;
        Ok(Appended::Added {
            files: by_file.into_keys().collect(),
        })
    }

    /// The lines of one series file (relative path), in the order appended,
    /// only those of runs in the index.
    ///
    /// # Errors
    /// The file or the index cannot be read or holds a corrupt line.
    pub fn lines(&self, file: &str) -> Result<Vec<Line>, StoreError> {
        let path = self.root.join(file);
        if !path.exists() {
            return Ok(Vec::new());
        }
        let index = self.index()?;
        Ok(read_lines::<Line>(&path)?
            .into_iter()
            .filter(|l| index.has(l.run.run_id, l.run.attempt))
            .collect())
    }

    /// The series of one file (relative path) for `metrics` within
    /// `scope`, read from the newest line up (`crate::read`): what
    /// [`crate::series::series_in`] makes of [`Store::lines`], reading no
    /// more of the file than `scope` needs.
    ///
    /// # Errors
    /// The file or the index cannot be read, or a line read is corrupt or
    /// out of the index's order.
    pub fn series(
        &self,
        file: &str,
        metrics: &[&'static str],
        scope: Scope<'_>,
    ) -> Result<Series, StoreError> {
        let path = self.root.join(file);
        if !path.exists() {
            return Ok(Series::new());
        }
        let index = self.index()?;
        crate::read::series(&path, &index, metrics, scope)
    }

    /// The index as the reader uses it, read once per state of the store
    /// (an append through this store clears it).
    fn index(&self) -> Result<Arc<RunIndex>, StoreError> {
        let mut cached = self
            .index
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(index) = &*cached {
            return Ok(Arc::clone(index));
        }
        let index = Arc::new(RunIndex::new(&self.runs()?));
        *cached = Some(Arc::clone(&index));
        Ok(index)
    }

    /// Every series file of the store (relative paths, sorted).
    ///
    /// # Errors
    /// A folder cannot be listed, or holds something that is not a plain
    /// folder or `.jsonl` file.
    pub fn files(&self) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        for top in ["series", "evals"] {
            let dir = self.root.join(top);
            if !dir.exists() {
                continue;
            }
            for hw in list(&dir)? {
                let hw_dir = dir.join(&hw);
                for file in list(&hw_dir)? {
                    let path = hw_dir.join(&file);
                    let meta =
                        std::fs::symlink_metadata(&path).map_err(|source| StoreError::Write {
                            path: path.clone(),
                            source,
                        })?;
                    if !meta.is_file() || !file.ends_with(".jsonl") {
                        return Err(StoreError::Invalid(format!(
                            "{}: not a history file: it is {}, where a plain .jsonl file is expected",
                            path.display(),
                            what_it_is(meta.file_type())
                        )));
                    }
                    out.push(format!("{top}/{hw}/{file}"));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Checks the whole store: every line parses as the format says, no
    /// run is in the index twice, every row belongs to a run of the index
    /// (an orphan is what an interrupted append leaves), each run's rows are
    /// all there, in the file its identity names, once.
    ///
    /// # Errors
    /// The first problem found, by file and line.
    pub fn verify(&self) -> Result<Verified, StoreError> {
        let index_path = self.root.join(INDEX);
        let runs = self.runs()?;
        let seen = index_positions(&index_path, &runs)?;
        let mut counts = RowCounts::default();
        let mut lines = 0;
        let files = self.files()?;
        for file in &files {
            lines += check_series_file(&self.root, file, &seen, &mut counts)?;
        }
        check_row_counts(&index_path, &runs, &counts)?;
        Ok(Verified {
            runs: runs.len(),
            files: files.len(),
            lines,
        })
    }
}

/// Checks the index lines on their own (format, no run twice) and gives
/// each run's 1-based line in the index: the order a series file's lines
/// must follow.
fn index_positions(
    index_path: &Path,
    runs: &[IndexLine],
) -> Result<BTreeMap<RunKey, usize>, StoreError> {
    let mut seen = BTreeMap::new();
    for (i, l) in runs.iter().enumerate() {
        if l.v != FORMAT {
            return Err(corrupt(
                index_path,
                i + 1,
                format!("format {} is not {FORMAT}", l.v),
            ));
        }
        if let Some(first) = seen.insert(l.run.key(), i + 1) {
            return Err(corrupt(
                index_path,
                i + 1,
                format!(
                    "run {} attempt {} is in the index twice (first at line {first})",
                    l.run.run_id, l.run.attempt
                ),
            ));
        }
    }
    Ok(seen)
}

/// Checks every line of one series file (`file`, relative to `root`):
/// format, run in the index, index order, right file for the row; adds
/// its rows to `counts` and gives how many lines it read.
fn check_series_file(
    root: &Path,
    file: &str,
    seen: &BTreeMap<RunKey, usize>,
    counts: &mut RowCounts,
) -> Result<usize, StoreError> {
    let path = root.join(file);
    let mut lines = 0;
    // Position in the index of the run of the line above.
    let mut above = 0;
    for (i, l) in read_lines::<Line>(&path)?.into_iter().enumerate() {
        let at = |cause: String| corrupt(&path, i + 1, cause);
        if l.v != FORMAT {
            return Err(at(format!("format {} is not {FORMAT}", l.v)));
        }
        let key = l.run.key();
        let Some(&position) = seen.get(&key) else {
            return Err(at(format!(
                "row of run {} attempt {}, which is not in {INDEX} (left by an append that did not finish)",
                key.0, key.1
            )));
        };
        if position < above {
            return Err(at(format!(
                "run {} attempt {} is below a run the index has after it (a file's lines \
                 are in the order of {INDEX})",
                key.0, key.1
            )));
        }
        above = position;
        let placed = file_of(l.kind, &l.row).map_err(|e| at(e.to_string()))?;
        if placed != file {
            return Err(at(format!("the row belongs in {placed}")));
        }
        counts.add(&l);
        lines += 1;
    }
    Ok(lines)
}

/// Checks that each run of the index has, in the files, exactly the
/// benchmark and eval rows its index line lists.
fn check_row_counts(
    index_path: &Path,
    runs: &[IndexLine],
    counts: &RowCounts,
) -> Result<(), StoreError> {
    for (i, l) in runs.iter().enumerate() {
        if let Some(have) = counts.differs(l) {
            return Err(corrupt(
                index_path,
                i + 1,
                format!(
                    "run {} attempt {} lists {} benchmark and {} eval rows; the files hold {} and {}",
                    l.run.run_id, l.run.attempt, l.benchmarks, l.evals, have.0, have.1
                ),
            ));
        }
    }
    Ok(())
}

/// What [`Store::verify`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    pub runs: usize,
    pub files: usize,
    pub lines: usize,
}

/// The series file of a benchmark row (after checking it is one).
fn benchmark_file(row: &Map<String, Value>) -> Result<String, PlaceError> {
    let parsed = ResultRow::try_from(row.clone())?;
    let b = &parsed.row;
    Ok(format!(
        "series/{}/{}-{}-{}.jsonl",
        component(&hardware(&b.hw))?,
        component(&b.infmax_model_prefix)?,
        component(&b.precision)?,
        component(&b.framework)?
    ))
}

/// The eval file of an eval row (after checking it is one).
fn eval_file(row: &Map<String, Value>) -> Result<String, PlaceError> {
    let e: EvalRow = serde_json::from_value(Value::Object(row.clone()))?;
    Ok(format!(
        "evals/{}/{}-{}-{}.jsonl",
        component(&hardware(&e.hw))?,
        component(&e.model_prefix)?,
        component(&e.precision)?,
        component(&e.framework)?
    ))
}

/// A value as part of a file name: letters, digits, `.`, `_` and `-`, not
/// starting with a dot, so a row can never name a path outside its folder.
fn component(s: &str) -> Result<&str, PlaceError> {
    let plain = !s.is_empty()
        && s.len() <= MAX_COMPONENT
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if plain {
        Ok(s)
    } else {
        Err(PlaceError::Name(s.to_string()))
    }
}

/// The digest of a run's rows: SHA-256 over the benchmark rows then the
/// eval rows, each as compact JSON and a newline.
fn digest(run: &Run) -> String {
    let mut h = Sha256::new();
    for row in run.benchmarks.iter().chain(&run.evals) {
        if let Ok(bytes) = serde_json::to_vec(row) {
            h.update(&bytes);
        }
        h.update(b"\n");
    }
    h.update(format!("{}:{}", run.benchmarks.len(), run.evals.len()));
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Adds `bytes` at the end of `path` (created with its folders when new).
fn append_bytes(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let werr = |source| StoreError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(werr)?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.is_file()
    {
        return Err(StoreError::Invalid(format!(
            "{}: not a regular file; the history is not appended through it",
            path.display()
        )));
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(werr)?;
    f.write_all(bytes).map_err(werr)?;
    f.sync_all().map_err(werr)
}

/// The names in a folder of the store, refusing links and odd entries.
fn list(dir: &Path) -> Result<Vec<String>, StoreError> {
    let meta = std::fs::symlink_metadata(dir).map_err(|source| StoreError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(StoreError::Invalid(format!(
            "{}: not a folder (a link or a file where the history keeps a folder)",
            dir.display()
        )));
    }
    let mut names = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|source| StoreError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    for e in entries {
        let e = e.map_err(|source| StoreError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        let name = e.file_name().to_string_lossy().into_owned();
        component(&name)
            .map_err(|cause| StoreError::Invalid(format!("{}: {cause}", dir.display())))?;
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// What a directory entry is, for messages.
fn what_it_is(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_socket() || ft.is_char_device() || ft.is_block_device() {
            return "a socket or device";
        }
    }
    if ft.is_symlink() {
        "a symlink"
    } else if ft.is_dir() {
        "a folder"
    } else {
        "a file of another name"
    }
}

fn corrupt(path: &Path, line: usize, cause: String) -> StoreError {
    StoreError::Corrupt {
        path: path.to_path_buf(),
        line,
        cause,
    }
}

/// Parses every line of a JSON Lines file; the first bad line is an error
/// naming it (never skipped). A last line without its newline is an append
/// that did not finish, and is refused too.
fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, StoreError> {
    let bytes = read_regular(path, MAX_FILE_BYTES)?;
    let mut out = Vec::new();
    let mut rest: &[u8] = &bytes;
    let mut n = 0;
    while !rest.is_empty() {
        n += 1;
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            return Err(corrupt(
                path,
                n,
                "the last line has no newline (an append that did not finish)".into(),
            ));
        };
        let line = &rest[..end];
        rest = &rest[end + 1..];
        if line.len() > MAX_LINE_BYTES {
            return Err(corrupt(
                path,
                n,
                format!("the line is longer than {MAX_LINE_BYTES} bytes"),
            ));
        }
        let value =
            serde_json::from_slice::<T>(line).map_err(|e| corrupt(path, n, e.to_string()))?;
        out.push(value);
    }
    Ok(out)
}
