//! Files a test makes: text or JSON under a directory (its parents made
//! first), an executable script, a FIFO (for the bounded-reader tests), a
//! zip as GitHub serves an artifact, and the size a PNG's header gives.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

/// Writes `text` to `dir/rel`, making the directories it needs.
#[track_caller]
pub fn write_file(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("mkdir {}: {e}", parent.display()));
    }
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Writes `value` as compact JSON to `dir/rel`, making the directories it
/// needs.
#[track_caller]
pub fn write_json(dir: &Path, rel: &str, value: &serde_json::Value) {
    write_file(dir, rel, &value.to_string());
}

/// Writes `text` to `path` as an executable (mode 755) script.
#[track_caller]
pub fn write_executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
}

/// Makes a FIFO (named pipe) at `path`, its parent directories first: the
/// input a bounded reader must refuse at once instead of blocking on it.
#[track_caller]
pub fn mkfifo(path: &Path) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("mkdir {}: {e}", parent.display()));
    }
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap_or_else(|e| panic!("run mkfifo: {e}"));
    assert!(status.success(), "mkfifo {} failed", path.display());
}

/// The width and height in a PNG's IHDR chunk; fails the test when `bytes`
/// is not a PNG.
#[track_caller]
pub fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(
        bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n") && &bytes[12..16] == b"IHDR",
        "not a PNG"
    );
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

/// A zip of `files` (name in the archive, content), deflated: an artifact
/// as GitHub serves it.
pub fn zip_of(files: &[(&str, &str)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, text) in files {
        w.start_file(*name, opts).expect("zip entry");
        w.write_all(text.as_bytes()).expect("zip write");
    }
    w.finish().expect("zip finish").into_inner()
}

/// The files under `dir` as a zip, paths relative to `dir`, in name order
/// (what GitHub serves for an artifact uploaded from that directory).
pub fn zip_dir(dir: &Path) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                todo.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    for f in files {
        let rel = f
            .strip_prefix(dir)
            .expect("under dir")
            .to_string_lossy()
            .into_owned();
        w.start_file(rel, opts).expect("zip entry");
        w.write_all(&std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display())))
            .expect("zip write");
    }
    w.finish().expect("zip finish").into_inner()
}
