//! Atomic file output: every artifact is written to a temporary file in the
//! destination's directory and renamed into place, so a failed run never
//! leaves a partial file behind.

use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` atomically (temp file in the same directory,
/// then rename). On error nothing is left at `path` that was not there before.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = temp_builder().tempfile_in(dir)?;
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("missing-dir").join("out.json");
        assert!(write_atomic(&target, b"x").is_err());
        assert!(!target.exists());
    }
}
