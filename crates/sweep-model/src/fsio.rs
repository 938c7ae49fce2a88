//! File I/O with one rule each way.
//!
//! Output is atomic: every artifact is written to a temporary file in the
//! destination's directory and renamed into place, so a failed run never
//! leaves a partial file behind.
//!
//! Input is regular files only: [`read_regular`] is the one reader of an
//! input file (results, configs, artifacts). It refuses anything that is
//! not a regular file (a FIFO, socket, device or directory) with an error
//! naming the path and what it is, without ever blocking on it, and reads
//! at most a caller-named number of bytes.

use std::io::{Read as _, Write};
use std::path::{Path, PathBuf};

const MIB: u64 = 1024 * 1024;

// The size limits of the inputs, one per kind of file. Each is chosen from
// the largest real input of its kind times a margin, and low enough that
// the tool reading it stays within 200 MB of memory at the limit (the
// figures are in docs/limits.md, `scripts/memory-check` measures them).

/// One leg's result file: a benchmark result, an aiperf aggregate, an
/// lm-eval results file, a power manifest or window, `meta_env.json`. Real
/// ones are under 10 KB (the largest in tests/conformance is 8.6 KB); a
/// parsed file of small numbers takes about 19 times its text (161 MB at
/// the limit).
pub const MAX_RESULT_JSON_BYTES: u64 = 8 * MIB;

/// A whole sweep's aggregate (`agg_bmk.json`, `agg_eval_all.json`,
/// compare's JSON report, a saved baseline) and each file of a results
/// tree. A row is about 1.7 KB: a full sweep of the real configs (1,820
/// rows) is about 3 MB, so 8 MiB holds 4,900 rows; compare keeps both sides
/// and their index, about 15 times the text (126 MB at the limit).
pub const MAX_AGGREGATE_JSON_BYTES: u64 = 8 * MIB;

/// A search-space config or matrix (`split`, `canary`, `priority`,
/// `changelog-metadata`): a full sweep of the real configs is 1 MB, the 10×
/// scale catalogue of docs/limits.md 11.5 MB; 12 MiB holds it (`split`
/// and `canary` take about 140 MB at the limit).
pub const MAX_MATRIX_JSON_BYTES: u64 = 12 * MIB;

/// A GitHub event payload (`GITHUB_EVENT_PATH`): GitHub caps webhook
/// payloads at 25 MB, and a payload is mostly text (little parsing
/// overhead).
pub const MAX_EVENT_PAYLOAD_BYTES: u64 = 25 * MIB;

/// A markdown section of the PR comment: the comment holds at most 65,536
/// characters, and compare's full report of a full sweep is about 1 MB.
pub const MAX_MARKDOWN_BYTES: u64 = 4 * MIB;

/// A power monitor's CSV (`gpu_metrics.csv`, `samples.csv`): one line of
/// about 150 bytes per GPU per sample; 8 GPUs sampled every second for a
/// two-hour leg is 8.6 MB (the real ones in tests/conformance are 5 KB).
pub const MAX_POWER_CSV_BYTES: u64 = 32 * MIB;

/// Why an input file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {}: it is {kind}, not a regular file", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error(
        "{}: the file is {size} bytes, more than the limit of {limit} bytes",
        path.display()
    )]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
}

impl ReadError {
    /// The file the error is about.
    #[must_use]
    pub fn path(&self) -> &Path {
        match self {
            ReadError::Io { path, .. }
            | ReadError::NotRegular { path, .. }
            | ReadError::TooLarge { path, .. } => path,
        }
    }

    /// The cause without the path, for callers that print the path in
    /// their own shape (`cannot read file: …`).
    #[must_use]
    pub fn cause(&self) -> String {
        match self {
            ReadError::Io { source, .. } => source.to_string(),
            ReadError::NotRegular { kind, .. } => format!("it is {kind}, not a regular file"),
            ReadError::TooLarge { size, limit, .. } => {
                format!("the file is {size} bytes, more than the limit of {limit} bytes")
            }
        }
    }
}

/// What a non-regular file is, for messages.
fn kind_of(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// Opens `path` (following symlinks) for reading if it is a regular file.
///
/// How it never blocks: on Unix the file is opened with `O_NONBLOCK` (and
/// `O_NOCTTY`), then `fstat`ed through the open handle. Opening a FIFO for
/// reading without `O_NONBLOCK` waits for a writer, forever when there is
/// none; with it the open returns at once, and the type check on the handle
/// refuses it before any read. Checking `metadata()` first and opening
/// after would leave a window in which the name could be swapped for a
/// FIFO; checking the handle we read from has none. `O_NONBLOCK` does not
/// change reads of a regular file.
///
/// # Errors
/// The file cannot be opened ([`ReadError::Io`]) or is not a regular file
/// ([`ReadError::NotRegular`]).
pub fn open_regular(path: &Path) -> Result<(std::fs::File, u64), ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = match options.open(path) {
        Ok(f) => f,
        Err(e) => {
            // A socket cannot be opened at all (ENXIO); say what it is.
            return Err(match std::fs::metadata(path) {
                Ok(m) if !m.is_file() => ReadError::NotRegular {
                    path: path.to_path_buf(),
                    kind: kind_of(m.file_type()),
                },
                _ => io(e),
            });
        }
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of(meta.file_type()),
        });
    }
    Ok((file, meta.len()))
}

/// Reads the regular file at `path`, at most `max_bytes` of it.
///
/// A file whose size is over the limit is refused before it is read, and
/// one that grows past it while being read is refused when the byte after
/// the limit arrives (nothing more is read).
///
/// # Errors
/// As [`open_regular`], a failed read, or [`ReadError::TooLarge`].
pub fn read_regular(path: &Path, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
    let (file, len) = open_regular(path)?;
    let too_large = |size| ReadError::TooLarge {
        path: path.to_path_buf(),
        size,
        limit: max_bytes,
    };
    if len > max_bytes {
        return Err(too_large(len));
    }
    // Room for the whole file and the read that reports its end.
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    // One byte over the limit tells a file that is too large from one at it.
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > max_bytes {
        let size = std::fs::metadata(path).map_or(bytes.len() as u64, |m| m.len());
        return Err(too_large(size.max(bytes.len() as u64)));
    }
    Ok(bytes)
}

/// [`read_regular`] for a caller whose errors hold a [`std::io::Error`] and
/// name the path themselves: an I/O failure comes back as it was (a
/// missing file is still `NotFound`), a refusal as an error whose text is
/// [`ReadError::cause`] (`it is a FIFO (named pipe), not a regular file`,
/// `the file is N bytes, more than the limit of M bytes`).
///
/// # Errors
/// As [`read_regular`].
pub fn read_bytes(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    read_regular(path, max_bytes).map_err(std::io::Error::from)
}

/// [`read_bytes`] as UTF-8 text, the bounded `std::fs::read_to_string`
/// (the same `InvalidData` error for text that is not UTF-8).
///
/// # Errors
/// As [`read_regular`], or the file is not UTF-8.
pub fn read_text(path: &Path, max_bytes: u64) -> std::io::Result<String> {
    String::from_utf8(read_bytes(path, max_bytes)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Reads standard input as UTF-8 text, at most `max_bytes` of it: input
/// longer than that is refused when the byte after the limit arrives
/// (nothing more is read), so a tool fed an endless pipe stops.
///
/// # Errors
/// A failed read, more than `max_bytes`, or text that is not UTF-8.
pub fn read_stdin_text(max_bytes: u64) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("standard input is more than the limit of {max_bytes} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

impl From<ReadError> for std::io::Error {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Io { source, .. } => source,
            e @ ReadError::NotRegular { .. } => {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, e.cause())
            }
            e @ ReadError::TooLarge { .. } => {
                std::io::Error::new(std::io::ErrorKind::FileTooLarge, e.cause())
            }
        }
    }
}

/// Writes `contents` to `path` atomically (temp file in the same directory,
/// then rename). On error nothing is left at `path` that was not there before.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let plain = |e: std::io::Error| without_temp_name(e, dir);
    let mut tmp = temp_builder().tempfile_in(dir).map_err(plain)?;
    tmp.write_all(contents).map_err(plain)?;
    tmp.as_file().sync_all().map_err(plain)?;
    tmp.persist(path).map_err(|e| plain(e.error))?;
    Ok(())
}

/// The error of a step of [`write_atomic`] without the temporary file's
/// name (tempfile adds `at path "…/.sweepkit-XXXX.tmp"`, a name the user
/// never chose): callers name the destination, this says the cause, and a
/// missing folder is named as such.
fn without_temp_name(e: std::io::Error, dir: &Path) -> std::io::Error {
    let kind = e.kind();
    if kind == std::io::ErrorKind::NotFound && !dir.is_dir() {
        return std::io::Error::new(kind, format!("the folder {} does not exist", dir.display()));
    }
    let cause = e.raw_os_error().map_or_else(
        || kind.to_string(),
        |code| std::io::Error::from_raw_os_error(code).to_string(),
    );
    std::io::Error::new(kind, cause)
}

/// The temporary-file builder behind every atomic write: a hidden name in
/// the destination's directory, and the mode an ordinary `open` would give
/// (0644 less the umask) rather than tempfile's private 0600, since the
/// result is an artifact that other users and jobs read.
pub fn temp_builder() -> tempfile::Builder<'static, 'static> {
    let mut b = tempfile::Builder::new();
    b.prefix(".sweepkit-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o644));
    }
    b
}

/// Serialises `value` as JSON (pretty when `pretty`) and writes it atomically.
pub fn write_json_atomic<T: serde::Serialize + ?Sized>(
    path: &Path,
    value: &T,
    pretty: bool,
) -> std::io::Result<()> {
    let bytes = if pretty {
        serde_json::to_vec_pretty(value)
    } else {
        serde_json::to_vec(value)
    }
    .map_err(std::io::Error::other)?;
    write_atomic(path, &bytes)
}

/// A file that cannot be read is an input the tool needs and lacks (exit 2).
impl sweep_exit::Classify for ReadError {
    fn kind(&self) -> sweep_exit::Kind {
        sweep_exit::Kind::Failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// #38 item 6: a write into a missing folder names the folder, not
    /// the internal `.sweepkit-*.tmp` file.
    #[test]
    fn a_missing_folder_is_named_not_the_temp_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("no-such-dir");
        let e = write_atomic(&missing.join("out.md"), b"x").expect_err("refused");
        let msg = e.to_string();
        assert_eq!(
            msg,
            format!("the folder {} does not exist", missing.display())
        );
        assert!(!msg.contains(".sweepkit-"), "{msg}");
    }

    #[test]
    fn writes_whole_file_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("out.json");
        write_atomic(&target, b"{\"a\":1}").expect("write");
        assert_eq!(std::fs::read(&target).expect("read"), b"{\"a\":1}");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
    }

    #[cfg(unix)]
    #[test]
    fn written_file_is_world_readable_like_a_plain_open() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("out.json");
        write_atomic(&target, b"{}").expect("write");
        let mode = std::fs::metadata(&target)
            .expect("stat")
            .permissions()
            .mode();
        // A plain create in the same directory gets 0666 less the umask;
        // the artifact gets 0644 less the same umask (never tempfile's 0600).
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).expect("create");
        let plain_mode = std::fs::metadata(&plain)
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o777,
            0o644 & plain_mode,
            "mode {mode:o}, a plain create gives {plain_mode:o}"
        );
    }

    #[cfg(unix)]
    fn mkfifo(path: &Path) {
        let st = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .expect("run mkfifo");
        assert!(st.success(), "mkfifo failed");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking_and_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("x.json");
        mkfifo(&fifo);
        // No writer ever opens it: a blocking open would hang this test.
        let e = read_regular(&fifo, 10).expect_err("a FIFO was read");
        assert!(matches!(e, ReadError::NotRegular { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains(&fifo.display().to_string()), "{msg}");
        assert!(msg.contains("FIFO"), "{msg}");
    }

    #[test]
    fn a_directory_is_refused_as_a_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = read_regular(dir.path(), 10).expect_err("a directory was read");
        assert!(e.to_string().contains("it is a directory"), "{e}");
    }

    #[test]
    fn reads_up_to_the_limit_and_refuses_one_byte_more() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("f");
        std::fs::write(&p, b"12345").expect("write");
        assert_eq!(read_regular(&p, 5).expect("at the limit"), b"12345");
        let e = read_regular(&p, 4).expect_err("over the limit");
        assert!(
            matches!(
                e,
                ReadError::TooLarge {
                    size: 5,
                    limit: 4,
                    ..
                }
            ),
            "{e}"
        );
        let missing = dir.path().join("nope");
        let e = read_regular(&missing, 4).expect_err("missing");
        assert!(matches!(e, ReadError::Io { .. }), "{e}");
        assert_eq!(e.path(), missing);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_to_a_regular_file_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("f");
        std::fs::write(&p, b"ok").expect("write");
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&p, &link).expect("symlink");
        assert_eq!(read_regular(&link, 5).expect("read"), b"ok");
    }

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("missing-dir").join("out.json");
        assert!(write_atomic(&target, b"x").is_err());
        assert!(!target.exists());
    }
}
