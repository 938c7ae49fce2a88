//! The one walker over a results tree: every `*.json` under a directory, in
//! a fixed order, with one rule for symlinks and one for errors. Used by
//! `collect-results aggregate`, `compare-results` (a directory of results)
//! and `reuse-sweep validate-artifacts`.
//!
//! Rules, chosen to match the reference's `Path(dir).rglob("*.json")`
//! (`collect_results.py`, `compare_results.py`):
//! - an entry is listed when its name ends in `.json` (case-sensitive, hidden
//!   names included); a directory so named is listed too, as rglob yields it,
//!   and fails when the caller reads it, as the reference's `open` does;
//! - symlinks to files are listed like files; symlinked directories are not
//!   entered (as rglob, which never follows them: no cycles), only counted;
//! - a `*.json` symlink whose target resolves (`canonicalize`, every link in
//!   the chain followed) outside the walked root is refused: the walk fails
//!   with [`TreeError::OutsideRoot`] naming the link and its target, so a
//!   link such as `a.json -> /elsewhere/secret.json` is never read into an
//!   output (the reference's `open` follows it). A dangling link is listed,
//!   and fails when read as a missing file does. Deliberate difference from
//!   the reference: a tree of downloaded artifacts never holds such links;
//! - entries are listed by name only; reading them is `fsio::read_regular`'s
//!   job, which refuses a FIFO, socket, device or directory so named;
//! - order: in each directory its listed entries by name (byte-wise), then
//!   its subdirectories by name, each walked the same way (depth first).
//!   rglob's own order is the file system's; a fixed one makes outputs
//!   reproducible;
//! - a directory that cannot be listed is an error naming it, as is a tree
//!   deeper than [`MAX_TREE_DEPTH`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Deepest directory level walked below the root. A real results tree is
/// three levels deep (run / artifact / file); the limit keeps a hostile or
/// looping tree (bind mounts) from recursing without bound.
pub const MAX_TREE_DEPTH: usize = 64;

/// Why a walk failed.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    #[error("cannot list {dir}: {source}")]
    List {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{dir}: the directory tree is more than {MAX_TREE_DEPTH} levels deep (MAX_TREE_DEPTH)")]
    TooDeep { dir: String },
    #[error(
        "{dir}: a symlink to {target}, outside the directory being read ({root}): refused, files are read only from inside it"
    )]
    OutsideRoot {
        /// The link.
        dir: String,
        target: String,
        root: String,
    },
}

impl TreeError {
    /// The directory the error is about.
    #[must_use]
    pub fn dir(&self) -> &str {
        match self {
            TreeError::List { dir, .. }
            | TreeError::TooDeep { dir }
            | TreeError::OutsideRoot { dir, .. } => dir,
        }
    }
}

/// What a walk found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct JsonFiles {
    /// The `*.json` entries, in walk order.
    pub files: Vec<PathBuf>,
    /// Other entries (not `*.json`, not a directory), left out.
    pub ignored: usize,
    /// Symlinked directories, not entered.
    pub symlink_dirs: usize,
}

/// Every `*.json` under `root`, by the rules in the module header.
///
/// # Errors
/// A directory (the root included) cannot be listed, the tree is deeper
/// than [`MAX_TREE_DEPTH`], or a `*.json` symlink points outside `root`.
pub fn json_files(root: &Path) -> Result<JsonFiles, TreeError> {
    let mut found = JsonFiles::default();
    walk(&mut Root::new(root), root, 0, true, &mut found)?;
    Ok(found)
}

/// The `*.json` entries directly in `dir` (same rules, no descent; `dir`
/// is the root symlinks must stay inside).
///
/// # Errors
/// `dir` cannot be listed, or a `*.json` symlink points outside it.
pub fn json_files_in(dir: &Path) -> Result<JsonFiles, TreeError> {
    let mut found = JsonFiles::default();
    walk(&mut Root::new(dir), dir, 0, false, &mut found)?;
    Ok(found)
}

/// Refuses `path`, an entry named inside `root` (a category folder such as
/// `root/results_bmk`), when it is a symlink whose target resolves outside
/// `root`: the same rule, and the same error, as a `*.json` link of a walk.
/// Anything else (not a symlink, a link inside `root`, a dangling link or
/// no entry at all) is left to the caller.
///
/// # Errors
/// [`TreeError::OutsideRoot`] naming the link and its target, or `root`
/// cannot be resolved.
pub fn check_inside(root: &Path, path: &Path) -> Result<(), TreeError> {
    if path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        Root::new(root).check_link(path)
    } else {
        Ok(())
    }
}

/// Refuses `path` (which need not exist) when its real location, with
/// every link on the way resolved, is outside the real `root`: what a walk
/// that follows a linked folder or file reaches must stay inside the tree
/// it walks. A path that does not resolve (missing) is left to the caller.
///
/// # Errors
/// [`TreeError::OutsideRoot`] naming the path and where it leads.
pub fn resolves_inside(root: &Path, path: &Path) -> Result<(), TreeError> {
    let (Ok(real_root), Ok(real)) = (std::fs::canonicalize(root), std::fs::canonicalize(path))
    else {
        return Ok(());
    };
    if real.starts_with(&real_root) {
        Ok(())
    } else {
        Err(TreeError::OutsideRoot {
            dir: path.display().to_string(),
            target: real.display().to_string(),
            root: root.display().to_string(),
        })
    }
}

/// The walked root, resolved on first need (only a symlink needs it).
struct Root<'a> {
    given: &'a Path,
    resolved: Option<PathBuf>,
}

impl<'a> Root<'a> {
    fn new(given: &'a Path) -> Self {
        Root {
            given,
            resolved: None,
        }
    }

    /// Refuses the symlink `link` when its target resolves outside the root.
    fn check_link(&mut self, link: &Path) -> Result<(), TreeError> {
        // Dangling (or unresolvable): listed, and the read reports it.
        let Ok(target) = std::fs::canonicalize(link) else {
            return Ok(());
        };
        if self.resolved.is_none() {
            let root = std::fs::canonicalize(self.given).map_err(|source| TreeError::List {
                dir: self.given.display().to_string(),
                source,
            })?;
            self.resolved = Some(root);
        }
        match &self.resolved {
            Some(root) if target.starts_with(root) => Ok(()),
            _ => Err(TreeError::OutsideRoot {
                dir: link.display().to_string(),
                target: target.display().to_string(),
                root: self.given.display().to_string(),
            }),
        }
    }
}

fn walk(
    root: &mut Root<'_>,
    dir: &Path,
    depth: usize,
    recurse: bool,
    found: &mut JsonFiles,
) -> Result<(), TreeError> {
    if depth > MAX_TREE_DEPTH {
        return Err(TreeError::TooDeep {
            dir: dir.display().to_string(),
        });
    }
    let list_err = |source| TreeError::List {
        dir: dir.display().to_string(),
        source,
    };
    let mut files: Vec<OsString> = Vec::new();
    let mut dirs: Vec<OsString> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(list_err)? {
        let entry = entry.map_err(list_err)?;
        let name = entry.file_name();
        // The entry's own type: a symlink is a symlink here, not its target.
        let ft = entry.file_type().map_err(list_err)?;
        let is_json = name.as_encoded_bytes().ends_with(b".json");
        if is_json {
            if ft.is_symlink() {
                root.check_link(&entry.path())?;
            }
            files.push(name.clone());
        }
        if ft.is_dir() {
            dirs.push(name);
        } else if !is_json {
            if ft.is_symlink() && entry.path().is_dir() {
                found.symlink_dirs += 1;
            } else {
                found.ignored += 1;
            }
        }
    }
    files.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    dirs.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    found.files.extend(files.iter().map(|f| dir.join(f)));
    if recurse {
        for d in &dirs {
            walk(root, &dir.join(d), depth + 1, true, found)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {

    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_path_through_a_link_out_of_the_root_is_refused() {
        let outside = tempfile::tempdir().expect("tmp");
        std::fs::write(outside.path().join("secret.json"), "{}").expect("write");
        let root = tempfile::tempdir().expect("tmp");
        std::fs::create_dir(root.path().join("inner")).expect("mkdir");
        std::fs::write(root.path().join("inner/ok.json"), "{}").expect("write");
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).expect("link");
        std::os::unix::fs::symlink("inner", root.path().join("in")).expect("link");
        let r = root.path();
        assert!(super::resolves_inside(r, &r.join("inner/ok.json")).is_ok());
        assert!(super::resolves_inside(r, &r.join("in/ok.json")).is_ok());
        assert!(super::resolves_inside(r, &r.join("missing.json")).is_ok());
        let e = super::resolves_inside(r, &r.join("out/secret.json")).expect_err("outside");
        assert!(
            e.to_string().contains("outside the directory being read"),
            "{e}"
        );
    }

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "1").unwrap();
    }

    fn rel(root: &Path, files: &[PathBuf]) -> Vec<String> {
        files
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn files_first_then_subdirectories_bytewise() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for p in [
            "z.json",
            "a/y.json",
            "a/x.json",
            "a/deeper/w.json",
            "b/v.json",
            "B.json",
            ".h.json",
            "n.jsonl",
            "u.JSON",
        ] {
            touch(r, p);
        }
        let found = json_files(r).unwrap();
        assert_eq!(
            rel(r, &found.files),
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
        assert_eq!((found.ignored, found.symlink_dirs), (2, 0));
        let top = json_files_in(r).unwrap();
        assert_eq!(rel(r, &top.files), [".h.json", "B.json", "z.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_files_are_listed_and_symlinked_directories_are_not_entered() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().join("r");
        touch(&r, "d/a.json");
        touch(t.path(), "outside/b.json");
        std::os::unix::fs::symlink(t.path().join("outside"), r.join("link")).unwrap();
        // A link inside the tree, relative and through `..`.
        std::os::unix::fs::symlink("d/../d/a.json", r.join("c.json")).unwrap();
        // A loop: entering symlinked directories would never end.
        std::os::unix::fs::symlink(&r, r.join("d/loop")).unwrap();
        let found = json_files(&r).unwrap();
        assert_eq!(rel(&r, &found.files), ["c.json", "d/a.json"]);
        assert_eq!(found.symlink_dirs, 2);
    }

    #[cfg(unix)]
    #[test]
    fn a_json_symlink_leading_outside_the_root_is_refused_naming_it() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().join("r");
        touch(&r, "d/a.json");
        touch(t.path(), "outside/secret.json");
        // Inside, but a chain that ends outside.
        std::os::unix::fs::symlink("../../outside/secret.json", r.join("d/hop")).unwrap();
        std::os::unix::fs::symlink("hop", r.join("d/b.json")).unwrap();
        let e = json_files(&r).unwrap_err();
        assert!(matches!(e, TreeError::OutsideRoot { .. }), "{e}");
        assert_eq!(e.dir(), r.join("d/b.json").display().to_string());
        assert!(e.to_string().contains("secret.json"), "{e}");
        // The same for the flat listing, whose root is the listed directory.
        let e = json_files_in(&r.join("d")).unwrap_err();
        assert!(matches!(e, TreeError::OutsideRoot { .. }), "{e}");
        // A sibling `r2` shares the prefix `r` as a string, not as a path.
        let r2 = t.path().join("r2");
        touch(&r2, "x.json");
        std::fs::remove_file(r.join("d/b.json")).unwrap();
        std::os::unix::fs::symlink(r2.join("x.json"), r.join("c.json")).unwrap();
        assert!(matches!(
            json_files(&r).unwrap_err(),
            TreeError::OutsideRoot { .. }
        ));
        // A dangling link is listed; reading it fails as a missing file.
        std::fs::remove_file(r.join("c.json")).unwrap();
        std::os::unix::fs::symlink("nowhere.json", r.join("e.json")).unwrap();
        let found = json_files(&r).unwrap();
        assert_eq!(rel(&r, &found.files), ["e.json", "d/a.json"]);
    }

    #[test]
    fn a_directory_named_json_is_listed_and_entered() {
        let t = tempfile::tempdir().unwrap();
        touch(t.path(), "x.json/inner.json");
        let found = json_files(t.path()).unwrap();
        assert_eq!(rel(t.path(), &found.files), ["x.json", "x.json/inner.json"]);
    }

    #[test]
    fn a_missing_root_is_an_error_naming_it() {
        let t = tempfile::tempdir().unwrap();
        let missing = t.path().join("nope");
        let e = json_files(&missing).unwrap_err();
        assert_eq!(e.dir(), missing.display().to_string());
        assert!(e.to_string().starts_with("cannot list "), "{e}");
    }

    #[test]
    fn a_tree_deeper_than_the_limit_is_an_error() {
        let t = tempfile::tempdir().unwrap();
        let mut deep = t.path().to_path_buf();
        for _ in 0..=MAX_TREE_DEPTH {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        let e = json_files(t.path()).unwrap_err();
        assert!(matches!(e, TreeError::TooDeep { .. }), "{e}");
        assert!(e.to_string().contains("MAX_TREE_DEPTH"), "{e}");
        // One level less is fine.
        let ok = t.path().join("d");
        assert!(json_files(&ok).is_ok());
    }
}
