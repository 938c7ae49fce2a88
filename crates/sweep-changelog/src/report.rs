//! Printing a [`Rejection`](crate::pipeline::Rejection): the message, and a
//! GitHub workflow-command annotation on the changelog line it is about.

use crate::git::Repo;
use crate::pipeline::Rejection;
use std::path::Path;
use sweep_model::gha::{self, Level};

/// The changelog path as GitHub annotations want it (relative to the
/// repository root).
pub fn annotation_path(repo: &Repo, changelog_file: &str) -> String {
    let p = Path::new(changelog_file);
    if p.is_absolute() {
        let root = std::fs::canonicalize(repo.dir()).unwrap_or_else(|_| repo.dir().to_path_buf());
        if let Ok(rel) = p
            .strip_prefix(&root)
            .or_else(|_| p.strip_prefix(repo.dir()))
        {
            return rel.display().to_string();
        }
    }
    changelog_file.trim_start_matches("./").to_string()
}

/// The terminal form of a rejection: `<file>:<line>: <message>` when the
/// line is known (what the annotation shows on the PR's diff), as
/// `generate-matrix` prints config errors.
pub fn located(file: &str, r: &Rejection) -> String {
    match r.line {
        Some(line) => format!("{file}:{line}: {}", r.message),
        None => r.message.clone(),
    }
}

/// Where a workflow-command annotation goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnnotationStream {
    /// stdout (the runner reads commands from both streams).
    Stdout,
    /// stderr, for tools whose stdout is captured as data.
    Stderr,
}

/// Prints a rejection (and its annotation when in GitHub Actions).
pub fn report(
    repo: &Repo,
    changelog_file: &str,
    prefix: &str,
    r: &Rejection,
    to: AnnotationStream,
) {
    let file = annotation_path(repo, changelog_file);
    // The message quotes changelog text: under Actions its line breaks are
    // encoded, or one could start a workflow command (#34 item 8).
    eprintln!("{prefix}{}", gha::log_text(&located(&file, r)));
    match to {
        AnnotationStream::Stdout => gha::annotate(Level::Error, Some(&file), r.line, &r.message),
        AnnotationStream::Stderr if gha::in_actions() => {
            eprintln!(
                "{}",
                gha::annotation(Level::Error, Some(&file), r.line, &r.message)
            );
        }
        AnnotationStream::Stderr => {}
    }
}
