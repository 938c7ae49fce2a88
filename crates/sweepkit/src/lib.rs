//! The adoption path: `sweepkit workflow write` vendors sweepkit's reusable
//! workflows (the sweep and the leg workflow it calls) into a benchmark
//! repository's `.github/workflows/`, and `sweepkit workflow check` proves
//! those files unchanged since they were written, with a unified diff of
//! any edit.
//!
//! GitHub lets a called workflow use the caller's self-hosted runners only
//! when the called workflow belongs to the caller's user, organisation or
//! enterprise. The sweep's GPU jobs run on those runners, so the workflow
//! that fans them out must live in the caller's repository; its steps still
//! use sweepkit's actions, pinned by commit. The files written here are
//! `.github/workflows/run-sweep.yml` and `sweepkit-sweep-legs.yml` of this
//! sweepkit commit (embedded at build time, with their action pins), each
//! under a header that names the sweepkit version, the action commit and a
//! SHA-256 of everything else in the file.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The sweep workflow `write` creates in the caller's workflow directory
/// (the caller's `uses:` names it).
pub const WORKFLOW_FILE: &str = "sweepkit-run-sweep.yml";
/// The leg workflow the sweep calls as `./.github/workflows/<this>`; it has
/// that name in sweepkit's own repository too, so the `uses:` is the same.
pub const LEGS_FILE: &str = "sweepkit-sweep-legs.yml";
/// The version of this sweepkit build (the workspace version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// sweepkit's reusable workflow as it is at build time, pins included.
const SOURCE: &str = include_str!("../../../.github/workflows/run-sweep.yml");
/// The leg workflow as it is at build time.
const LEGS_SOURCE: &str = include_str!("../../../.github/workflows/sweepkit-sweep-legs.yml");
/// The history workflow a caller runs after a main sweep (docs/history.md);
/// the same name in sweepkit's own repository.
pub const HISTORY_FILE: &str = "sweepkit-history.yml";
/// The history workflow as it is at build time.
const HISTORY_SOURCE: &str = include_str!("../../../.github/workflows/sweepkit-history.yml");
/// Every file `write` creates, with its embedded source.
pub const FILES: [(&str, &str); 3] = [
    (WORKFLOW_FILE, SOURCE),
    (LEGS_FILE, LEGS_SOURCE),
    (HISTORY_FILE, HISTORY_SOURCE),
];
/// `actions/setup/checksums.txt` as it is at build time. `actions/pin.sh
/// check` fails when it differs from the file at the pinned commit, so these
/// are the checksums the setup action at [`embedded_pin`] verifies against.
const CHECKSUMS: &str = include_str!("../../../actions/setup/checksums.txt");
/// The targets the release ships (`.github/workflows/release.yml`), one per
/// architecture `actions/setup/install.sh` supports.
pub const RELEASE_TARGETS: [&str; 2] = ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"];
/// How the workflow references sweepkit's own actions.
const ACTION_PREFIX: &str = "sweepkit/sweepkit/actions/";
/// Largest file `check` reads. The generated workflows are about 40 KB; a
/// file twenty times that is not one this tool wrote, and reading stops there.
const MAX_FILE_BYTES: u64 = 1 << 20;

const VERSION_KEY: &str = "# sweepkit-version: ";
const PIN_KEY: &str = "# sweepkit-actions: ";
const SHA_KEY: &str = "# sweepkit-sha256: ";

/// Why a file could not be written or read (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: larger than {MAX_FILE_BYTES} bytes; not a workflow sweepkit wrote")]
    TooLarge { path: PathBuf },
    #[error("{path}: not UTF-8 text")]
    NotText { path: PathBuf },
    #[error("{path}: cannot write: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--ref {0:?} is not a full 40-hex commit SHA")]
    BadRef(String),
    #[error(
        "the embedded workflows name {0} different commits of sweepkit's actions; this build is broken"
    )]
    EmbeddedPins(usize),
}

/// What `check` found (the check says yes or no).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Unchanged since this version wrote it with actions at `pin`.
    Unchanged { pin: String },
    /// The content does not match its recorded SHA-256 (or has no header).
    Edited { reason: String },
    /// Written by another sweepkit version: run this version's `write`.
    OtherVersion { written_by: String },
    /// The hash matches, but this version would write different content.
    NotGenerated,
    /// Not a file `write` creates.
    Unknown,
}

/// Every `sweepkit/sweepkit/actions/<tool>@<sha>` of `text`: (offset of the
/// SHA, SHA).
fn action_pins(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices(ACTION_PREFIX) {
        let rest = &text[i + ACTION_PREFIX.len()..];
        let tool_len = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
            .unwrap_or(rest.len());
        let Some(after) = rest[tool_len..].strip_prefix('@') else {
            continue;
        };
        if after.len() >= 40 && after.as_bytes()[..40].iter().all(u8::is_ascii_hexdigit) {
            let at = i + ACTION_PREFIX.len() + tool_len + 1;
            out.push((at, &text[at..at + 40]));
        }
    }
    out
}

/// The one commit the embedded workflows pin sweepkit's actions to.
pub fn embedded_pin() -> Result<String, Error> {
    let mut shas: Vec<&str> = FILES
        .iter()
        .flat_map(|(_, src)| action_pins(src))
        .map(|(_, s)| s)
        .collect();
    shas.sort_unstable();
    shas.dedup();
    match shas.as_slice() {
        [one] => Ok((*one).to_string()),
        other => Err(Error::EmbeddedPins(other.len())),
    }
}

/// Whether the setup action at the pin the written workflow names can
/// install this version's binaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Release {
    /// The pin's `checksums.txt` lists an archive of this version for every
    /// release target.
    Listed { pin: String },
    /// It lists none for these targets: their setup steps fail unless the
    /// caller sets `build-from-source: true`.
    Unlisted { pin: String, missing: Vec<String> },
    /// Another pin than this build's (`--ref`): its checksums are not known
    /// here.
    Unknown { pin: String, embedded: String },
}

/// The release targets `checksums` lists no archive of `version` for. An
/// architecture's gnu archive counts too: `install.sh` takes it on a glibc
/// host when no musl one is listed.
pub fn missing_targets(checksums: &str, version: &str) -> Vec<String> {
    let listed = |target: &str| {
        let name = format!("sweepkit-{version}-{target}.tar.gz");
        checksums.lines().any(|l| {
            l.split_once("  ").is_some_and(|(sha, file)| {
                file == name && sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit())
            })
        })
    };
    RELEASE_TARGETS
        .iter()
        .filter(|t| !listed(t) && !listed(&t.replace("-musl", "-gnu")))
        .map(|t| (*t).to_string())
        .collect()
}

/// What [`Release`] the workflow `write` renders for `pin` would get.
pub fn release(pin: Option<&str>) -> Result<Release, Error> {
    let embedded = embedded_pin()?;
    let pin = match pin {
        Some(p) => {
            valid_ref(p)?;
            p.to_string()
        }
        None => embedded.clone(),
    };
    if pin != embedded {
        return Ok(Release::Unknown { pin, embedded });
    }
    let missing = missing_targets(CHECKSUMS, VERSION);
    Ok(if missing.is_empty() {
        Release::Listed { pin }
    } else {
        Release::Unlisted { pin, missing }
    })
}

fn valid_ref(pin: &str) -> Result<(), Error> {
    if pin.len() == 40
        && pin
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        Ok(())
    } else {
        Err(Error::BadRef(pin.to_string()))
    }
}

fn sha256_hex(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
    }
    let mut hex = String::with_capacity(64);
    for b in h.finalize() {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

fn header_lines(pin: &str) -> String {
    format!(
        "# Generated by `sweepkit workflow write` (sweepkit {VERSION}): do not edit.\n\
         # `sweepkit workflow check` fails on any change to this file; a newer\n\
         # sweepkit's `sweepkit workflow write` upgrades it. It lives in this\n\
         # repository so that its GPU jobs can run on this repository's runners.\n\
         {VERSION_KEY}{VERSION}\n\
         {PIN_KEY}{pin}\n"
    )
}

/// The file `write` creates: the embedded workflow with sweepkit's actions
/// pinned at `pin` (default: the embedded pin), under the header.
pub fn render(pin: Option<&str>) -> Result<String, Error> {
    render_file(SOURCE, pin)
}

/// [`render`] of one embedded source (one of [`FILES`]).
fn render_file(source: &str, pin: Option<&str>) -> Result<String, Error> {
    let pin = match pin {
        Some(p) => {
            valid_ref(p)?;
            p.to_string()
        }
        None => embedded_pin()?,
    };
    let mut body = source.to_string();
    for (at, _) in action_pins(source) {
        body.replace_range(at..at + 40, &pin);
    }
    let head = header_lines(&pin);
    let sha = sha256_hex(&[&head, &body]);
    Ok(format!("{head}{SHA_KEY}{sha}\n{body}"))
}

/// The embedded source of the file named `name` (one of [`FILES`]).
fn source_of(name: &str) -> Option<&'static str> {
    FILES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// The mode of a written workflow: world-readable like any file of the
/// repository (git records only the executable bit; 0600 would keep
/// teammates and CI users on a shared checkout from reading it).
pub const WRITTEN_MODE: u32 = 0o644;

/// A file `write` would not replace: it exists and is not as a sweepkit
/// wrote it (edited, or not a sweepkit file at all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub path: PathBuf,
    /// Why (the verdict's reason).
    pub reason: String,
    /// The unified diff from what sweepkit would have written there to the
    /// file as found.
    pub diff: String,
}

/// What [`write`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// Every file written, in [`FILES`] order.
    All(Vec<PathBuf>),
    /// Nothing written: these files hold edits (or are not sweepkit's), and
    /// `force` was not given.
    Refused(Vec<Kept>),
}

/// Whether the file at `path` (one of [`FILES`], `source` its embedded
/// text) may be replaced: absent, or unedited since a sweepkit wrote it
/// (any version: that is the upgrade). Otherwise why not, with the diff.
fn replaceable(path: &Path, source: &str) -> Result<Option<Kept>, Error> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(Error::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let kept = |reason: String, diff: String| {
        Ok(Some(Kept {
            path: path.to_path_buf(),
            reason,
            diff,
        }))
    };
    if !meta.file_type().is_file() {
        return kept(
            "not a regular file (a symlink, directory or device is never replaced)".into(),
            String::new(),
        );
    }
    let text = match read_limited(path) {
        Ok(t) => t,
        Err(Error::TooLarge { .. } | Error::NotText { .. }) => {
            return kept("not a workflow sweepkit wrote".into(), String::new());
        }
        Err(e) => return Err(e),
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match verdict_of(source, &text) {
        Verdict::Edited { reason } => kept(reason, diff(source, &text, name)),
        Verdict::Unchanged { .. } | Verdict::OtherVersion { .. } | Verdict::NotGenerated => {
            Ok(None)
        }
        Verdict::Unknown => kept("not a file sweepkit writes".into(), String::new()),
    }
}

/// Writes every file of [`FILES`] into `dir` (created when missing), each
/// atomically (temp file + rename, mode [`WRITTEN_MODE`]), after all of
/// them rendered. Also the upgrade: it replaces files a sweepkit wrote and
/// nobody edited. A file that exists and is not that (edited since, or not
/// sweepkit's) is kept, and then nothing is written, unless `force`.
pub fn write(dir: &Path, pin: Option<&str>, force: bool) -> Result<Written, Error> {
    let mut texts = Vec::with_capacity(FILES.len());
    let mut kept = Vec::new();
    for (name, source) in FILES {
        let path = dir.join(name);
        if !force && let Some(k) = replaceable(&path, source)? {
            kept.push(k);
        }
        texts.push((path, render_file(source, pin)?));
    }
    if !kept.is_empty() {
        return Ok(Written::Refused(kept));
    }
    let mut written = Vec::with_capacity(texts.len());
    for (path, text) in texts {
        let werr = |source| Error::Write {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(werr)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(werr)?;
        tmp.write_all(text.as_bytes()).map_err(werr)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(WRITTEN_MODE))
                .map_err(werr)?;
        }
        tmp.as_file().sync_all().map_err(werr)?;
        tmp.persist(&path).map_err(|e| werr(e.error))?;
        written.push(path);
    }
    Ok(Written::All(written))
}

fn read_limited(path: &Path) -> Result<String, Error> {
    let rerr = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    // The one bounded reader: a regular file only (a FIFO is refused, not
    // waited on), at most MAX_FILE_BYTES.
    let bytes = sweep_model::fsio::read_regular(path, MAX_FILE_BYTES).map_err(|e| match e {
        sweep_model::fsio::ReadError::TooLarge { .. } => Error::TooLarge {
            path: path.to_path_buf(),
        },
        e => rerr(e.into()),
    })?;
    String::from_utf8(bytes).map_err(|_| Error::NotText {
        path: path.to_path_buf(),
    })
}

/// Checks the file at `path`, one of [`FILES`] by its name (see
/// [`Verdict`]); with the verdict, the unified diff from what `write` would
/// write to the file's text (empty when they agree).
pub fn check(path: &Path) -> Result<(Verdict, String), Error> {
    let text = read_limited(path)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let Some(source) = source_of(name) else {
        return Ok((Verdict::Unknown, String::new()));
    };
    let verdict = verdict_of(source, &text);
    let diff = match verdict {
        Verdict::Unchanged { .. } => String::new(),
        _ => diff(source, &text, name),
    };
    Ok((verdict, diff))
}

/// Lines of context around each change in [`check`]'s diff.
const DIFF_CONTEXT: usize = 3;

/// The unified diff from the rendering of `source` (at the pin the text's
/// header names when it is a valid one, else the embedded pin) to `text`.
fn diff(source: &str, text: &str, name: &str) -> String {
    let pin = text
        .lines()
        .take(8)
        .find_map(|l| l.strip_prefix(PIN_KEY))
        .filter(|p| valid_ref(p).is_ok());
    let Ok(expected) = render_file(source, pin).or_else(|_| render_file(source, None)) else {
        return String::new();
    };
    similar::TextDiff::from_lines(expected.as_str(), text)
        .unified_diff()
        .context_radius(DIFF_CONTEXT)
        .header(
            &format!("{name} (as written)"),
            &format!("{name} (as found)"),
        )
        .to_string()
}

/// The verdict on the text of the sweep workflow file.
pub fn verdict(text: &str) -> Verdict {
    verdict_of(SOURCE, text)
}

/// The verdict on a file's text, against its embedded `source`.
fn verdict_of(source: &str, text: &str) -> Verdict {
    let edited = |reason: &str| Verdict::Edited {
        reason: reason.to_string(),
    };
    // The header is the six lines of header_lines, then the hash line.
    let mut head_end = 0;
    for _ in 0..6 {
        match text[head_end..].find('\n') {
            Some(n) => head_end += n + 1,
            None => return edited("no sweepkit header (not written by `sweepkit workflow write`)"),
        }
    }
    let (head, rest) = text.split_at(head_end);
    let Some((sha_line, body)) = rest.split_once('\n') else {
        return edited("no sweepkit header (not written by `sweepkit workflow write`)");
    };
    let Some(recorded) = sha_line.strip_prefix(SHA_KEY) else {
        return edited("the header has no `# sweepkit-sha256:` line where sweepkit writes it");
    };
    let actual = sha256_hex(&[head, body]);
    if recorded != actual {
        return edited(&format!(
            "content changed since it was written (SHA-256 {actual}, the header records {recorded})"
        ));
    }
    let field = |key: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::to_string)
    };
    let (Some(written_by), Some(pin)) = (field(VERSION_KEY), field(PIN_KEY)) else {
        return edited("the header lacks its version or actions line");
    };
    if written_by != VERSION {
        return Verdict::OtherVersion { written_by };
    }
    match render_file(source, Some(&pin)) {
        Ok(expected) if expected == text => Verdict::Unchanged { pin },
        _ => Verdict::NotGenerated,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report
    use super::*;

    #[test]
    fn embedded_workflow_pins_one_commit() {
        let pin = embedded_pin().unwrap();
        valid_ref(&pin).unwrap();
        assert!(action_pins(SOURCE).len() > 10);
    }

    #[test]
    fn rendered_file_checks_and_every_action_names_the_pin() {
        let pin = "0123456789abcdef0123456789abcdef01234567";
        let text = render(Some(pin)).unwrap();
        assert_eq!(
            verdict(&text),
            Verdict::Unchanged {
                pin: pin.to_string()
            }
        );
        let pins = action_pins(&text);
        assert!(pins.len() > 10);
        assert!(pins.iter().all(|(_, s)| *s == pin));
        let uses = text
            .lines()
            .filter(|l| l.contains(ACTION_PREFIX) && l.contains("uses:"))
            .count();
        assert_eq!(uses, pins.len(), "every action use is pinned");
    }

    #[test]
    fn every_one_byte_edit_of_a_sample_is_caught() {
        let text = render(None).unwrap();
        let bytes = text.as_bytes();
        // A spread of positions across header, hash line and body.
        for pos in (0..bytes.len()).step_by(997).chain([bytes.len() - 1]) {
            let mut b = bytes.to_vec();
            b[pos] = if b[pos] == b'x' { b'y' } else { b'x' };
            let edited = String::from_utf8_lossy(&b).into_owned();
            assert!(
                !matches!(verdict(&edited), Verdict::Unchanged { .. }),
                "edit at byte {pos} not caught"
            );
        }
    }

    #[test]
    fn a_version_is_released_only_when_every_target_has_an_archive() {
        let sha = "ab".repeat(32);
        let line = |t: &str| format!("{sha}  sweepkit-1.2.0-{t}.tar.gz\n");
        // Comments only: both targets missing.
        assert_eq!(
            missing_targets("# sha256 of the release archives\n", "1.2.0"),
            RELEASE_TARGETS.map(String::from).to_vec()
        );
        // One architecture listed, another version's line does not count.
        let text = format!(
            "{}{}",
            line("x86_64-unknown-linux-musl"),
            line("aarch64-unknown-linux-musl").replace("1.2.0", "1.1.0")
        );
        assert_eq!(
            missing_targets(&text, "1.2.0"),
            vec!["aarch64-unknown-linux-musl".to_string()]
        );
        // Both: musl, or a glibc build of the architecture.
        let text = format!(
            "{}{}",
            line("x86_64-unknown-linux-musl"),
            line("aarch64-unknown-linux-gnu")
        );
        assert!(missing_targets(&text, "1.2.0").is_empty());
        // A line without a full sha256 is no checksum.
        let short = "abc  sweepkit-1.2.0-x86_64-unknown-linux-musl.tar.gz\n";
        assert_eq!(missing_targets(short, "1.2.0").len(), 2);
    }

    #[test]
    fn another_ref_than_the_embedded_pin_is_not_judged() {
        let other = "0123456789abcdef0123456789abcdef01234567";
        assert!(matches!(
            release(Some(other)).unwrap(),
            Release::Unknown { pin, .. } if pin == other
        ));
        let embedded = embedded_pin().unwrap();
        assert!(!matches!(
            release(Some(&embedded)).unwrap(),
            Release::Unknown { .. }
        ));
    }

    #[test]
    fn write_writes_every_shipped_workflow_and_check_passes_them() {
        let dir = tempfile::tempdir().unwrap();
        let Written::All(paths) = write(dir.path(), None, false).unwrap() else {
            panic!("refused")
        };
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [WORKFLOW_FILE, LEGS_FILE, HISTORY_FILE]);
        for p in &paths {
            let (v, diff) = check(p).unwrap();
            assert!(
                matches!(v, Verdict::Unchanged { .. }),
                "{}: {v:?}",
                p.display()
            );
            assert!(diff.is_empty());
        }
        // The sweep calls the leg workflow by the name it is written under.
        let sweep = std::fs::read_to_string(&paths[0]).unwrap();
        assert!(sweep.contains(&format!("uses: ./.github/workflows/{LEGS_FILE}")));
    }

    #[test]
    fn write_keeps_an_edited_or_foreign_file_unless_forced_and_writes_0644() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let Written::All(paths) = write(dir.path(), None, false).unwrap() else {
            panic!("refused on an empty directory")
        };
        for p in &paths {
            let mode = std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, WRITTEN_MODE, "{}", p.display());
        }
        // Unedited: written again (the upgrade path), as often as asked.
        assert!(matches!(
            write(dir.path(), None, false).unwrap(),
            Written::All(_)
        ));

        // A local edit of the leg workflow: nothing is written, the edit
        // stays, and the refusal carries the diff.
        let legs = dir.path().join(LEGS_FILE);
        let sweep = dir.path().join(WORKFLOW_FILE);
        let text = std::fs::read_to_string(&legs).unwrap();
        let edited = text.replacen("runs-on: ubuntu-latest", "runs-on: my-runner", 1);
        std::fs::write(&legs, &edited).unwrap();
        std::fs::remove_file(&sweep).unwrap();
        let Written::Refused(kept) = write(dir.path(), None, false).unwrap() else {
            panic!("an edited file was overwritten")
        };
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(kept[0].path, legs);
        assert!(kept[0].reason.contains("content changed"), "{:?}", kept[0]);
        assert!(
            kept[0].diff.contains("\n+    runs-on: my-runner\n"),
            "{}",
            kept[0].diff
        );
        assert_eq!(std::fs::read_to_string(&legs).unwrap(), edited);
        assert!(!sweep.exists(), "a refused write wrote the other file");

        // A file of the same name sweepkit never wrote: kept too.
        std::fs::write(&sweep, "name: mine\n").unwrap();
        let Written::Refused(kept) = write(dir.path(), None, false).unwrap() else {
            panic!("a foreign file was overwritten")
        };
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(
            kept[0].reason.contains("no sweepkit header"),
            "{:?}",
            kept[0]
        );
        assert_eq!(std::fs::read_to_string(&sweep).unwrap(), "name: mine\n");

        // --force replaces both, 0644.
        assert!(matches!(
            write(dir.path(), None, true).unwrap(),
            Written::All(_)
        ));
        assert_eq!(std::fs::read_to_string(&legs).unwrap(), text);
        for p in [&legs, &sweep] {
            assert!(matches!(check(p).unwrap().0, Verdict::Unchanged { .. }));
            let mode = std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, WRITTEN_MODE);
        }

        // A symlink in a file's place is never followed or replaced.
        std::fs::remove_file(&legs).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", &legs).unwrap();
        let Written::Refused(kept) = write(dir.path(), None, false).unwrap() else {
            panic!("a symlink was replaced")
        };
        assert!(kept[0].reason.contains("not a regular file"), "{kept:?}");
    }

    #[test]
    fn an_edit_of_the_leg_workflow_fails_the_check_with_a_unified_diff() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), None, false).unwrap();
        let legs = dir.path().join(LEGS_FILE);
        let text = std::fs::read_to_string(&legs).unwrap();
        let edited = text.replacen("runs-on: ubuntu-latest", "runs-on: my-runner", 1);
        assert_ne!(edited, text);
        std::fs::write(&legs, &edited).unwrap();
        let (v, diff) = check(&legs).unwrap();
        assert!(matches!(v, Verdict::Edited { .. }), "{v:?}");
        assert!(
            diff.contains(&format!("--- {LEGS_FILE} (as written)")),
            "{diff}"
        );
        assert!(
            diff.contains(&format!("+++ {LEGS_FILE} (as found)")),
            "{diff}"
        );
        assert!(diff.contains("\n-    runs-on: ubuntu-latest\n"), "{diff}");
        assert!(diff.contains("\n+    runs-on: my-runner\n"), "{diff}");
        assert!(diff.contains("@@ "), "{diff}");
        // The sweep file is still as written.
        let (v, _) = check(&dir.path().join(WORKFLOW_FILE)).unwrap();
        assert!(matches!(v, Verdict::Unchanged { .. }), "{v:?}");
    }

    #[test]
    fn a_bad_ref_is_refused() {
        assert!(matches!(render(Some("abc")), Err(Error::BadRef(_))));
        assert!(matches!(
            render(Some("0123456789ABCDEF0123456789abcdef01234567")),
            Err(Error::BadRef(_))
        ));
    }

    #[test]
    fn another_version_is_reported_as_such() {
        let text = render(None).unwrap().replacen(
            &format!("{VERSION_KEY}{VERSION}\n"),
            &format!("{VERSION_KEY}0.0.1\n"),
            1,
        );
        // Re-hash as an older sweepkit would have.
        let head_end = text.match_indices('\n').nth(5).unwrap().0 + 1;
        let (head, rest) = text.split_at(head_end);
        let (_, body) = rest.split_once('\n').unwrap();
        let sha = sha256_hex(&[head, body]);
        let older = format!("{head}{SHA_KEY}{sha}\n{body}");
        assert_eq!(
            verdict(&older),
            Verdict::OtherVersion {
                written_by: "0.0.1".into()
            }
        );
    }
}
