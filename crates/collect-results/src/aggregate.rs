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
//! are split into chunks that a few threads walk, read and check in
//! parallel; the chunks are written to the output in order as they finish
//! (see the notes on the parallel walk below). Every file is validated and
//! re-indented in one pass ([`crate::relayout`]), so numbers and strings are
//! carried over exactly as written; serde_json only words the error of an
//! invalid file. The output is semantically what the reference writes
//! (2-space indent); the only textual differences are escapes and number
//! spellings the reference would normalise (`1E5` stays `1E5`).

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, OsString};
use std::io::Write as _;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::relayout::{reindent, reindent_canonical, reindent_checked};
use crate::summary::ElementFacts;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, RenameFlags, openat, statat};

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

impl AggregateError {
    /// The file or directory the error is about and, for invalid JSON, its
    /// line (for the `::error file=…,line=…::` annotation).
    #[must_use]
    pub fn location(&self) -> (Option<&str>, Option<usize>) {
        match self {
            AggregateError::Json { file, source } => (Some(file), Some(source.line())),
            AggregateError::List { dir: file, .. }
            | AggregateError::Read { file, .. }
            | AggregateError::Write { file, .. } => (Some(file), None),
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
    /// What the step summary needs of each element written (see
    /// [`crate::summary::file_facts`]) — only when asked for.
    pub elements: Vec<ElementFacts>,
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

// --- the parallel walk -------------------------------------------------
//
// Directories are opened relative to their parent's descriptor and files
// relative to their directory's, so the kernel resolves one name per call
// instead of the whole path; directories are listed with `getdents64` into
// a reused buffer and files are read with plain `read(2)` calls into
// another (no size query, no seek). On a tree of 1,000 one-file artifact
// directories these calls are most of the run time, so the calls that
// would only confirm an end are skipped where the end is already known: a
// listing whose last entry points at ext4's end-of-directory position, and
// a regular file whose read came back short (see [`Worker::file`]). That
// takes each artifact directory from eight system calls to six.
//
// The walk allocates no paths (they are built only for error messages,
// [`Loc`]) and chunk buffers do not grow after the first few chunks: with
// glibc's allocator, each thread allocates from an arena of its own, but a
// buffer allocated by one thread and grown by the other locks the first
// one's arena during the copy, and `perf sched` showed the other thread
// sleeping on that lock for 50-170 µs at a time, 15 times in one run.
//
// The output is streamed: the top-level entries are cut into chunks of
// consecutive units, workers take the next chunk, render its elements into
// a small recycled buffer and hand it to the [`Sink`], which writes the
// chunks to the temporary output file in order. Keeping no whole-output
// buffer matters here: each fresh page of memory costs a page fault (about
// 2.5 µs on the CI VMs), which for a 2 MB output was a fifth of the run.
//
// Where the threads run matters as much (measured on the 2-CPU CI VM, 1,000
// files, median of interleaved runs): left to the scheduler, both threads
// often shared one CPU for the whole walk (16–18 ms); with each pinned to
// its own CPU, 12.4 ms; with the helpers also spawned before the calling
// thread pins itself, so that they do not start on its CPU, 11.2 ms.

/// Top-level units per chunk: small enough to balance two workers and keep
/// buffers small, large enough that writes and lock round trips are few.
const CHUNK_UNITS: usize = 16;

/// Initial room of a chunk's text: 16 elements of up to 4 KB.
const CHUNK_TEXT_ROOM: usize = 64 * 1024;

/// A `*.json` entry to read, and whether the listing said it is a regular
/// file (only then is a short read taken as its end, see [`Worker::file`]).
type JsonEntry = (CString, bool);

/// The directory position ext4 (and btrfs) hand out after the last entry:
/// a listing whose last entry points there is complete, so the `getdents64`
/// call that would only return "no more entries" is skipped. Other
/// positions, and other filesystems, get that call as before.
const END_OF_DIRECTORY: u64 = i64::MAX as u64;

/// Lists `fd` (a directory) into `*.json` files and subdirectories, each in
/// byte-wise name order, counting what is left out.
fn list_fd(
    fd: BorrowedFd<'_>,
    dirbuf: &mut Vec<u8>,
    dir: &Loc<'_>,
    out: &mut ChunkOut,
) -> Result<(Vec<JsonEntry>, Vec<CString>), AggregateError> {
    let list_err = |e: rustix::io::Errno| AggregateError::List {
        dir: dir.path().display().to_string(),
        source: e.into(),
    };
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    dirbuf.clear();
    let mut raw = RawDir::new(fd, dirbuf.spare_capacity_mut());
    let mut complete = false;
    while !(complete && raw.is_buffer_empty()) {
        let Some(entry) = raw.next() else {
            break;
        };
        let entry = entry.map_err(list_err)?;
        complete = entry.next_entry_cookie() == END_OF_DIRECTORY;
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let is_json = bytes.ends_with(b".json");
        let mut ft = entry.file_type();
        if ft == FileType::Unknown {
            // Filesystems without d_type: ask once, without following links.
            ft = statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
                .map(|st| FileType::from_raw_mode(st.st_mode))
                .map_err(list_err)?;
        }
        match ft {
            FileType::Directory => {
                // A directory named `*.json` matches the reference's glob too
                // (and then fails to open as a file); it fails the same way.
                if is_json {
                    files.push((name.to_owned(), false));
                }
                dirs.push(name.to_owned());
            }
            _ if is_json => files.push((name.to_owned(), ft == FileType::RegularFile)),
            FileType::Symlink => {
                let target_is_dir = statat(fd, name, AtFlags::empty())
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
    files.sort_unstable();
    dirs.sort_unstable();
    Ok((files, dirs))
}

fn os_path(base: &Path, name: &CStr) -> PathBuf {
    base.join(std::ffi::OsStr::from_bytes(name.to_bytes()))
}

/// Where a directory of the walk is: the results directory or a name in
/// another directory. It becomes a path only for an error message, so the
/// walk itself allocates no paths (allocations shared between the two
/// walking threads made them wait on each other's allocator locks).
#[derive(Clone, Copy)]
enum Loc<'a> {
    Root(&'a Path),
    Child(&'a Loc<'a>, &'a CStr),
}

impl Loc<'_> {
    fn path(&self) -> PathBuf {
        match self {
            Loc::Root(p) => p.to_path_buf(),
            Loc::Child(parent, name) => os_path(&parent.path(), name),
        }
    }
}

/// Per-thread state: reusable file and directory-listing buffers.
struct Worker {
    buf: Vec<u8>,
    dirbuf: Vec<u8>,
    /// Whether opening with `O_NOATIME` is still allowed (see [`open_read`]).
    noatime: bool,
}

/// Opens `name` in `dirfd` for reading with `flags`, and with `O_NOATIME`
/// while `*noatime` holds: reading a file or listing a directory otherwise
/// records its access time, which for freshly downloaded artifacts is one
/// inode write per file and per directory (a first walk of a new tree of
/// 1,000 artifact directories took 3-8 ms longer than the next one; with
/// `O_NOATIME` the two took the same). The kernel allows the flag only on
/// files the caller owns (or with `CAP_FOWNER`); on the first refusal it is
/// dropped for the rest of the walk.
fn open_read(
    dirfd: BorrowedFd<'_>,
    name: &CStr,
    flags: OFlags,
    noatime: &mut bool,
) -> rustix::io::Result<rustix::fd::OwnedFd> {
    let flags = flags | OFlags::RDONLY | OFlags::CLOEXEC;
    if *noatime {
        match openat(dirfd, name, flags | OFlags::NOATIME, Mode::empty()) {
            Err(rustix::io::Errno::PERM) => *noatime = false,
            opened => return opened,
        }
    }
    openat(dirfd, name, flags, Mode::empty())
}

/// What one chunk of top-level units produced: its elements, each written
/// as `,\n  <element>` (the sink drops the very first comma).
#[derive(Default)]
struct ChunkOut {
    text: Vec<u8>,
    files: usize,
    ignored: usize,
    symlink_dirs: usize,
    elements: Vec<ElementFacts>,
}

/// Why a file's text could not be appended.
enum Invalid {
    Utf8(std::str::Utf8Error),
    Json(serde_json::Error),
}

/// Validates `data` and appends it to the chunk as the next element
/// (`,\n  ` and the value re-indented one level), with its summary facts
/// when `summarize`; on error the chunk's facts are unchanged, its text may
/// have the separator appended.
fn append_element(data: &[u8], out: &mut ChunkOut, summarize: bool) -> Result<(), Invalid> {
    let text = std::str::from_utf8(data).map_err(Invalid::Utf8)?;
    if summarize {
        let facts = crate::summary::file_facts(text).map_err(Invalid::Json)?;
        out.elements.extend(facts);
    }
    out.text.extend_from_slice(b",\n  ");
    if !reindent_canonical(data, 1, &mut out.text) && !reindent_checked(data, 1, &mut out.text) {
        serde_json::from_slice::<serde::de::IgnoredAny>(data).map_err(Invalid::Json)?;
        reindent(data, 1, &mut out.text);
    }
    Ok(())
}

impl Worker {
    /// Reads from `fd` into the buffer after its first `len` bytes until a
    /// read returns nothing or, with `short_is_end`, until one returns less
    /// than it asked for. Returns the new length and whether the end of the
    /// file was seen (a read that returned nothing).
    fn read_from(
        &mut self,
        fd: BorrowedFd<'_>,
        mut len: usize,
        short_is_end: bool,
    ) -> std::io::Result<(usize, bool)> {
        loop {
            if self.buf.len() - len < 4096 {
                let grow = self.buf.len().max(16 * 1024);
                self.buf.resize(self.buf.len() + grow, 0);
            }
            let asked = self.buf.len() - len;
            match rustix::io::read(fd, &mut self.buf[len..]) {
                Ok(0) => return Ok((len, true)),
                Ok(n) => {
                    len += n;
                    if short_is_end && n < asked {
                        return Ok((len, false));
                    }
                }
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Reads, validates and appends one file as an array element.
    ///
    /// A regular file is taken to end where a read first returns less than
    /// it asked for, as Linux filesystems do for regular files; that skips
    /// the read that would return nothing, about a tenth of the system time
    /// per file. Should the text not be valid at that point (a filesystem
    /// that returns short reads early), the rest is read to the end and the
    /// whole text checked again, so an error is only ever reported for the
    /// complete file.
    fn file(
        &mut self,
        dirfd: BorrowedFd<'_>,
        name: &CStr,
        regular: bool,
        dir: &Loc<'_>,
        out: &mut ChunkOut,
        summarize: bool,
    ) -> Result<(), AggregateError> {
        let path = || os_path(&dir.path(), name).display().to_string();
        let read_err = |source| AggregateError::Read {
            file: path(),
            source,
        };
        let fd = open_read(dirfd, name, OFlags::empty(), &mut self.noatime)
            .map_err(|e| read_err(e.into()))?;
        let (mut len, mut at_end) = self.read_from(fd.as_fd(), 0, regular).map_err(read_err)?;
        let start = (out.text.len(), out.elements.len());
        loop {
            match append_element(&self.buf[..len], out, summarize) {
                Ok(()) => break,
                Err(_) if !at_end => {
                    out.text.truncate(start.0);
                    out.elements.truncate(start.1);
                    (len, at_end) = self.read_from(fd.as_fd(), len, false).map_err(read_err)?;
                }
                Err(Invalid::Utf8(e)) => {
                    return Err(read_err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        e,
                    )));
                }
                Err(Invalid::Json(source)) => {
                    return Err(AggregateError::Json {
                        file: path(),
                        source,
                    });
                }
            }
        }
        out.files += 1;
        Ok(())
    }

    /// Walks the directory `name` in `parent` (open as `parent_fd`)
    /// depth-first.
    fn tree(
        &mut self,
        parent_fd: BorrowedFd<'_>,
        name: &CStr,
        parent: &Loc<'_>,
        out: &mut ChunkOut,
        summarize: bool,
    ) -> Result<(), AggregateError> {
        let here = Loc::Child(parent, name);
        let fd = open_read(parent_fd, name, OFlags::DIRECTORY, &mut self.noatime).map_err(|e| {
            AggregateError::List {
                dir: here.path().display().to_string(),
                source: e.into(),
            }
        })?;
        let (files, dirs) = list_fd(fd.as_fd(), &mut self.dirbuf, &here, out)?;
        for (f, regular) in &files {
            self.file(fd.as_fd(), f, *regular, &here, out, summarize)?;
        }
        for d in &dirs {
            self.tree(fd.as_fd(), d, &here, out, summarize)?;
        }
        Ok(())
    }
}

enum Unit {
    File(CString, bool),
    Dir(CString),
}

/// The temporary output file (`None` if it could not be created; that
/// error is reported only if the walk itself succeeds).
struct Out {
    file: Option<tempfile::NamedTempFile>,
    err: Option<std::io::Error>,
}

impl Out {
    fn write(&mut self, bytes: &[u8]) {
        if self.err.is_some() {
            return;
        }
        if let Some(f) = self.file.as_mut()
            && let Err(e) = f.write_all(bytes)
        {
            self.err = Some(e);
        }
    }
}

/// Receives finished chunks and puts them in order for the output. One
/// worker at a time is the writer (`writing`); it writes outside this lock,
/// so the other worker never waits for a write to hand in its chunk.
#[derive(Default)]
struct Sink {
    /// Next chunk to write, and chunks that finished ahead of it.
    next: usize,
    pending: BTreeMap<usize, ChunkOut>,
    writing: bool,
    /// Buffers of written chunks, for reuse.
    spare: Vec<Vec<u8>>,
    /// The first failing chunk and its error (chunks are consecutive units,
    /// so this is the first failure in traversal order).
    failed: Option<(usize, AggregateError)>,
    report: AggregateReport,
}

impl Sink {
    /// The chunks that are next in order, each with the number of bytes to
    /// skip (the leading comma of the very first element).
    fn take_ready(&mut self) -> Vec<(usize, Vec<u8>)> {
        let mut ready = Vec::new();
        while let Some(mut c) = self.pending.remove(&self.next) {
            self.next += 1;
            if !c.text.is_empty() {
                let skip = usize::from(self.report.files_read == 0);
                ready.push((skip, std::mem::take(&mut c.text)));
            }
            self.report.files_read += c.files;
            self.report.ignored_files += c.ignored;
            self.report.skipped_symlink_dirs += c.symlink_dirs;
            self.report.elements.append(&mut c.elements);
        }
        ready
    }
}

/// Hands chunk `i` to the sink and, unless another worker is writing,
/// writes every chunk that is now next in order.
fn put(sink: &Mutex<Sink>, out: &Mutex<Out>, i: usize, chunk: ChunkOut) -> Vec<u8> {
    let lock = || sink.lock().unwrap_or_else(PoisonError::into_inner);
    let mut s = lock();
    s.pending.insert(i, chunk);
    if !s.writing {
        s.writing = true;
        loop {
            let ready = s.take_ready();
            if ready.is_empty() {
                s.writing = false;
                break;
            }
            drop(s);
            let mut o = out.lock().unwrap_or_else(PoisonError::into_inner);
            for (skip, text) in &ready {
                o.write(&text[*skip..]);
            }
            drop(o);
            s = lock();
            s.spare.extend(ready.into_iter().map(|(_, t)| t));
        }
    }
    s.spare.pop().unwrap_or_default()
}

/// Moves the finished temporary file to `output`. An existing regular file
/// there is swapped out atomically (`RENAME_EXCHANGE`) and then removed
/// under the temporary name: renaming over it directly made ext4
/// (`auto_da_alloc`) start writing the new file back inside the rename,
/// about 2 ms against 0.8 ms for the swap and removal. Anything else (no
/// file yet, a directory, no support for the swap) is a plain rename.
fn replace(tmp: tempfile::NamedTempFile, output: &Path) -> std::io::Result<()> {
    let cwd = rustix::fs::CWD;
    let is_file = statat(cwd, output, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile);
    if is_file
        && rustix::fs::renameat_with(cwd, tmp.path(), cwd, output, RenameFlags::EXCHANGE).is_ok()
    {
        // `tmp` now names the previous output; dropping it removes that.
        drop(tmp);
        return Ok(());
    }
    tmp.persist(output).map(drop).map_err(|e| e.error)
}

/// Everything the workers share once the top level is listed.
struct Job<'a> {
    results_dir: &'a Path,
    summarize: bool,
    root_fd: Option<rustix::fd::OwnedFd>,
    /// Whether the results directory could be opened with `O_NOATIME`
    /// (the workers start from that).
    noatime: bool,
    units: Vec<Unit>,
    chunks: usize,
    next: AtomicUsize,
    stop: AtomicBool,
    sink: Mutex<Sink>,
    out: Mutex<Out>,
}

impl Job<'_> {
    /// One worker: takes the next chunk, renders it and hands it to the
    /// sink. After a failure no new chunks are taken: every chunk before
    /// the failing one was taken already and still finishes, so the first
    /// failure in traversal order is the one reported.
    fn work(&self) {
        let Some(root) = self.root_fd.as_ref().map(AsFd::as_fd) else {
            return;
        };
        let mut w = Worker {
            buf: vec![0; 16 * 1024],
            dirbuf: Vec::with_capacity(16 * 1024),
            noatime: self.noatime,
        };
        let mut text = Vec::new();
        // Chunk buffers travel between the threads (the writer recycles
        // them), and growing one locks the allocator arena of the thread
        // that allocated it for the whole copy; the other thread then
        // waited on that lock. So each chunk starts with room for the
        // largest chunk seen so far, and the buffers stop growing early.
        let mut room = CHUNK_TEXT_ROOM;
        while !self.stop.load(Ordering::Relaxed) {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.chunks {
                break;
            }
            text.clear();
            text.reserve(room);
            let mut chunk = ChunkOut {
                text,
                ..ChunkOut::default()
            };
            let mut r = Ok(());
            let units = &self.units[i * CHUNK_UNITS..((i + 1) * CHUNK_UNITS).min(self.units.len())];
            let top = Loc::Root(self.results_dir);
            for unit in units {
                r = match unit {
                    Unit::File(name, regular) => {
                        w.file(root, name, *regular, &top, &mut chunk, self.summarize)
                    }
                    Unit::Dir(name) => w.tree(root, name, &top, &mut chunk, self.summarize),
                };
                if r.is_err() {
                    break;
                }
            }
            room = room.max(chunk.text.len() + chunk.text.len() / 4);
            text = match r {
                Ok(()) => put(&self.sink, &self.out, i, chunk),
                Err(e) => {
                    self.stop.store(true, Ordering::Relaxed);
                    let mut s = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
                    if s.failed.as_ref().is_none_or(|(j, _)| i < *j) {
                        s.failed = Some((i, e));
                    }
                    Vec::new()
                }
            };
        }
    }
}

/// Opens the temporary output and lists the top level into work units.
fn prepare<'a>(
    results_dir: &'a Path,
    output: PathBuf,
    summarize: bool,
) -> Result<Job<'a>, AggregateError> {
    // Same temporary file and rename as `sweep_model::fsio::write_atomic`,
    // written as the walk goes.
    let tmp_dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut out = match sweep_model::fsio::temp_builder().tempfile_in(tmp_dir) {
        Ok(f) => Out {
            file: Some(f),
            err: None,
        },
        Err(e) => Out {
            file: None,
            err: Some(e),
        },
    };
    out.write(b"[");
    let mut sink = Sink {
        report: AggregateReport {
            output,
            ..AggregateReport::default()
        },
        ..Sink::default()
    };

    let mut units = Vec::new();
    let mut root_fd = None;
    let mut noatime = true;
    if results_dir.is_dir() {
        let list_err = |source: std::io::Error| AggregateError::List {
            dir: results_dir.display().to_string(),
            source,
        };
        let path = CString::new(results_dir.as_os_str().as_bytes())
            .map_err(|e| list_err(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))?;
        let fd = open_read(rustix::fs::CWD, &path, OFlags::DIRECTORY, &mut noatime)
            .map_err(|e| list_err(e.into()))?;
        let mut top = ChunkOut::default();
        let mut dirbuf = Vec::with_capacity(64 * 1024);
        let (files, dirs) = list_fd(fd.as_fd(), &mut dirbuf, &Loc::Root(results_dir), &mut top)?;
        sink.report.ignored_files += top.ignored;
        sink.report.skipped_symlink_dirs += top.symlink_dirs;
        units.extend(files.into_iter().map(|(f, regular)| Unit::File(f, regular)));
        units.extend(dirs.into_iter().map(Unit::Dir));
        root_fd = Some(fd);
    } else {
        sink.report.dir_missing = true;
    }
    Ok(Job {
        results_dir,
        summarize,
        root_fd,
        noatime,
        chunks: units.len().div_ceil(CHUNK_UNITS),
        units,
        next: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        sink: Mutex::new(sink),
        out: Mutex::new(out),
    })
}

/// Aggregates `results_dir` into `out_dir/agg_<exp_name>.json`. With
/// `summarize` the report also carries each element's summary facts.
pub fn run(
    results_dir: &Path,
    exp_name: &str,
    out_dir: &Path,
    summarize: bool,
) -> Result<AggregateReport, AggregateError> {
    let output = out_dir.join(format!("agg_{exp_name}.json"));
    let helpers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, 8)
        - 1;
    // The helper threads start before the top level is listed: on the CI
    // VMs a thread took up to 4 ms to start running on an idle CPU, most of
    // which now overlaps the listing. They wait for the job, or for the
    // sender's end if preparing it fails.
    let job: OnceLock<Job<'_>> = OnceLock::new();
    // Each thread on a CPU of its own for the walk (see
    // `sweep_model::affinity`); the calling thread stays on its own CPU.
    let place = sweep_model::affinity::Placement::new(helpers);
    let mut pin_here = None;
    let prepared = std::thread::scope(|s| {
        let mut go = Vec::with_capacity(helpers);
        for k in 0..helpers {
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            go.push(tx);
            let job = &job;
            let cpu = place.helper(k);
            s.spawn(move || {
                let _pin = cpu.and_then(sweep_model::affinity::pin);
                if rx.recv().is_ok()
                    && let Some(j) = job.get()
                {
                    j.work();
                }
            });
        }
        // Pinned only now: a thread starts with its creator's affinity, so
        // a helper spawned by a pinned thread would first run on (and
        // delay) the calling thread's CPU.
        pin_here = place.pin_caller();
        let j = prepare(results_dir, output, summarize)?;
        // Helpers beyond one per chunk would find nothing to do.
        let needed = j.chunks.saturating_sub(1);
        let j = job.get_or_init(|| j);
        for tx in go.iter().take(needed) {
            // A helper that is gone (it panicked) leaves its share to the
            // others.
            let _ = tx.send(());
        }
        drop(go);
        j.work();
        Ok(())
    });
    drop(pin_here);
    prepared?;
    let Some(job) = job.into_inner() else {
        return Err(AggregateError::Read {
            file: results_dir.display().to_string(),
            source: std::io::Error::other("the walk was not prepared"),
        });
    };

    let chunks = job.chunks;
    let mut sink = job
        .sink
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some((_, e)) = sink.failed.take() {
        return Err(e);
    }
    if sink.next < chunks {
        return Err(AggregateError::Read {
            file: results_dir.display().to_string(),
            source: std::io::Error::other("a worker thread stopped early"),
        });
    }
    let mut out = job.out.into_inner().unwrap_or_else(PoisonError::into_inner);
    out.write(if sink.report.files_read > 0 {
        b"\n]"
    } else {
        b"]"
    });
    let report = sink.report;
    let write_err = |source| AggregateError::Write {
        file: report.output.display().to_string(),
        source,
    };
    if let Some(e) = out.err {
        return Err(write_err(e));
    }
    // No fsync, unlike `write_atomic`: the rename alone means a reader sees
    // the old file or the whole new one, ext4 (`auto_da_alloc`) flushes a
    // file renamed over another before the rename commits, and the next
    // workflow step reads this file on the same machine. Syncing 2 MB cost
    // about 2 ms here, a sixth of the run (the reference does not sync).
    if let Some(tmp) = out.file {
        replace(tmp, &report.output).map_err(write_err)?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

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

    /// The walk leaves access times alone (`O_NOATIME`), where the
    /// filesystem would otherwise record them.
    #[test]
    fn reading_leaves_access_times_alone() {
        use std::time::{Duration, SystemTime};
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        let file = r.join("sub/a.json");
        touch(&file, "{}");
        let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let age = |p: &Path| {
            std::fs::File::open(p)
                .and_then(|f| f.set_times(std::fs::FileTimes::new().set_accessed(old)))
                .expect("set atime");
        };
        let atime = |p: &Path| {
            std::fs::metadata(p)
                .and_then(|m| m.accessed())
                .expect("atime")
        };
        // Only meaningful where a plain read records the access time.
        age(&file);
        std::fs::read(&file).expect("read");
        if atime(&file) == old {
            return;
        }
        for p in [&file, &r.join("sub"), &r] {
            age(p);
        }
        run(&r, "x", t.path(), false).expect("run");
        for p in [&file, &r.join("sub"), &r] {
            assert_eq!(atime(p), old, "{}", p.display());
        }
    }

    /// Directories whose listing takes several `getdents64` calls (here an
    /// ext4 directory large enough to be hash-indexed) are listed whole.
    #[test]
    fn large_directories_are_listed_whole() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        let long = "n".repeat(100);
        for i in 0..600 {
            touch(&r.join(format!("sub/{long}{i:04}.json")), &i.to_string());
        }
        let rep = run(&r, "x", t.path(), false).expect("ok");
        assert_eq!(rep.files_read, 600);
        let v: Vec<i64> =
            serde_json::from_slice(&std::fs::read(t.path().join("agg_x.json")).expect("read"))
                .expect("json");
        assert_eq!(v, (0..600).collect::<Vec<_>>());
    }

    /// A file taken to end at a short read is read on when its text is not
    /// valid there. A FIFO stands in for a filesystem that returns short
    /// reads early: the writer stops after half a document, so the first
    /// read returns only that half.
    #[test]
    fn short_read_of_an_incomplete_text_reads_on() {
        let t = tempfile::tempdir().expect("tmp");
        let dir = rustix::fs::open(t.path(), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
            .expect("open dir");
        rustix::fs::mknodat(&dir, "f.json", FileType::Fifo, Mode::RUSR | Mode::WUSR, 0)
            .expect("mkfifo");
        let fifo = t.path().join("f.json");
        let writer = std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(fifo)
                .expect("open fifo");
            f.write_all(b"{\"a\": [1,").expect("write");
            f.flush().expect("flush");
            std::thread::sleep(std::time::Duration::from_millis(100));
            f.write_all(b" 2]}").expect("write");
        });
        let mut w = Worker {
            buf: vec![0; 16 * 1024],
            dirbuf: Vec::new(),
            noatime: true,
        };
        let mut out = ChunkOut::default();
        w.file(
            dir.as_fd(),
            c"f.json",
            true,
            &Loc::Root(t.path()),
            &mut out,
            false,
        )
        .expect("complete text");
        writer.join().expect("writer");
        assert_eq!(out.files, 1);
        assert_eq!(
            String::from_utf8(out.text).expect("utf8"),
            ",\n  {\n    \"a\": [\n      1,\n      2\n    ]\n  }"
        );
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
        assert_eq!(rep.elements.len(), 300);
    }
    #[test]
    fn output_replaces_an_existing_file_and_leaves_no_temporaries() {
        let t = tempfile::tempdir().expect("tmp");
        let r = t.path().join("r");
        touch(&r.join("a.json"), "1");
        touch(&t.path().join("agg_x.json"), "old");
        run(&r, "x", t.path(), false).expect("run");
        run(&r, "x", t.path(), false).expect("run again");
        let got = std::fs::read_to_string(t.path().join("agg_x.json")).expect("read");
        assert_eq!(got, "[\n  1\n]");
        let names: Vec<_> = std::fs::read_dir(t.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // A directory in the way is an error, and stays a directory.
        std::fs::create_dir(t.path().join("agg_d.json")).expect("mkdir");
        let err = run(&r, "d", t.path(), false).expect_err("must fail");
        assert!(err.to_string().contains("cannot write"), "{err}");
        assert!(t.path().join("agg_d.json").is_dir());
    }
}
