//! The `workflow write` and `workflow check` commands over the `sweepkit`
//! library; a failure's annotation points at line 1 of the vendored file.
use std::path::Path;

use sweep_cli::{Failure, Outcome};
use sweepkit::{FILES, Release, Verdict, WORKFLOW_FILE, Written};

/// The annotation location of the vendored workflow file.
fn at(path: &Path) -> (Option<&str>, Option<usize>) {
    (path.to_str(), Some(1))
}

/// The lines an adopter adds while the pin has no release archives: the
/// caller's `with:` of the vendored sweep, and the top-level `env:` of
/// every other workflow that uses sweepkit's actions (their tools install
/// themselves and read the variable).
pub(crate) const BUILD_FROM_SOURCE_LINES: &str = "  in .github/workflows/run-sweep.yml, under the job that `uses: ./.github/workflows/sweepkit-run-sweep.yml`:
    with:
      build-from-source: true
  in every other workflow that uses sweepkit's actions (the `workflow check` job, trusted-external-sweep.yml, stage-results*.yml, recover-reused-ingest.yml, runner-offline-digest.yml), at the top level:
    env:
      SWEEPKIT_BUILD_FROM_SOURCE: \"true\"";

/// Refuses (exit 1) a pin whose `checksums.txt` lists no archive of this
/// version for a release target, unless `allow`; warns when it cannot know.
pub(crate) fn judge_release(dir: &Path, pin: Option<&str>, allow: bool) -> Outcome {
    let version = sweepkit::VERSION;
    let path = dir.join(WORKFLOW_FILE);
    match sweepkit::release(pin) {
        Ok(Release::Listed { .. }) => Ok(()),
        Ok(Release::Unlisted { pin, missing }) => {
            let what = format!(
                "actions/setup/checksums.txt at the pinned commit {pin} lists no release archive of sweepkit {version} for {}: every setup step of the written workflow would fail (\"no release archive of sweepkit {version}\")",
                missing.join(", ")
            );
            if allow {
                eprintln!(
                    "warning: {what}; written anyway (--allow-unreleased). Add these lines so the setup steps build the binaries with cargo (remove them once you pin a release):\n{BUILD_FROM_SOURCE_LINES}"
                );
                Ok(())
            } else {
                let msg = format!(
                    "{what}. Fix: run `sweepkit workflow write --ref <SHA>` with the pin the release notes of v{version} name (the commit that lists its checksums); or, to build the binaries on the runners instead, pass `--allow-unreleased` and add:\n{BUILD_FROM_SOURCE_LINES}"
                );
                Err(Failure::rejected_msg(msg).at(at(&path)))
            }
        }
        Ok(Release::Unknown { pin, embedded }) => {
            eprintln!(
                "warning: sweepkit {version} cannot check here whether {pin} lists release archives of sweepkit {version} (it knows the checksums at {embedded} only); if it lists none, every setup step fails: use the pin the release notes of v{version} name, or set `build-from-source: true` in your caller's `with:`"
            );
            Ok(())
        }
        Err(e) => Err(Failure::failed_msg(e).at(at(&path))),
    }
}

/// Writes every file of [`FILES`] into `dir`; exit 1 (nothing written,
/// each kept file annotated and its diff printed) when one holds local
/// edits or is not sweepkit's, unless `force`.
pub(crate) fn write(dir: &Path, pin: Option<&str>, force: bool) -> Outcome {
    let written = sweepkit::write(dir, pin, force)
        .map_err(|e| Failure::failed_msg(e).at(at(&dir.join(WORKFLOW_FILE))))?;
    let paths = match written {
        Written::All(paths) => paths,
        Written::Refused(kept) => {
            for k in &kept {
                let msg = format!(
                    "{}: {}; not overwritten (nothing was written): keep your edit out of the vendored file, or run `sweepkit workflow write --force` to replace it (the diff from what sweepkit would write follows)",
                    k.path.display(),
                    k.reason
                );
                sweep_cli::report("sweepkit", &Failure::rejected_msg(msg).at(at(&k.path)));
                if !k.diff.is_empty() {
                    sweep_cli::stdout::println(&k.diff);
                }
            }
            return Err(Failure::reported(sweep_cli::Kind::Rejected));
        }
    };
    for path in &paths {
        eprintln!("wrote {} (sweepkit {})", path.display(), sweepkit::VERSION);
    }
    eprintln!(
        "call the sweep from your run-sweep.yml with `uses: ./{}`",
        Path::new(".github/workflows").join(WORKFLOW_FILE).display()
    );
    Ok(())
}

/// Checks every file of [`FILES`]: exit 1 when any is not as written (each
/// such file annotated, its diff printed), 2 when one cannot be read.
pub(crate) fn check(dir: &Path) -> Outcome {
    // No folder at all: one failure, not one per file it should hold.
    if !dir.is_dir() {
        return Err(Failure::failed_msg(format!(
            "{}: no such directory (give --dir the folder holding {})",
            dir.display(),
            FILES.map(|(name, _)| name).join(" and ")
        )));
    }
    let mut edited = 0;
    let mut unreadable = None;
    for (name, _) in FILES {
        let path = dir.join(name);
        match check_one(&path) {
            Ok(true) => {}
            Ok(false) => edited += 1,
            Err(f) => {
                sweep_cli::report("sweepkit", &f);
                unreadable.get_or_insert(f);
            }
        }
    }
    if unreadable.is_some() {
        return Err(Failure::reported(sweep_cli::Kind::Failed));
    }
    if edited > 0 {
        return Err(Failure::reported(sweep_cli::Kind::Rejected));
    }
    Ok(())
}

/// One file: Ok(true) unchanged, Ok(false) the check said no (reported
/// here, with its diff on stdout), Err when it cannot be read.
fn check_one(path: &Path) -> Result<bool, Failure> {
    let fail = |msg: String, diff: &str| {
        sweep_cli::report("sweepkit", &Failure::rejected_msg(msg).at(at(path)));
        if !diff.is_empty() {
            sweep_cli::stdout::println(diff);
        }
        Ok(false)
    };
    match sweepkit::check(path) {
        Ok((Verdict::Unchanged { pin }, _)) => {
            eprintln!(
                "{}: unchanged since `sweepkit workflow write` (sweepkit {}, actions at {pin})",
                path.display(),
                sweepkit::VERSION
            );
            Ok(true)
        }
        Ok((Verdict::Edited { reason }, diff)) => fail(
            format!(
                "{}: {reason}; undo the edit or run `sweepkit workflow write` (the diff from what it wrote follows)",
                path.display()
            ),
            &diff,
        ),
        Ok((Verdict::OtherVersion { written_by }, diff)) => fail(
            format!(
                "{}: written by sweepkit {written_by}, this is sweepkit {}; run `sweepkit workflow write` to upgrade it (or check with sweepkit {written_by})",
                path.display(),
                sweepkit::VERSION
            ),
            &diff,
        ),
        Ok((Verdict::NotGenerated, diff)) => fail(
            format!(
                "{}: its hash matches, but sweepkit {} would write different content; run `sweepkit workflow write`",
                path.display(),
                sweepkit::VERSION
            ),
            &diff,
        ),
        Ok((Verdict::Unknown, _)) => fail(
            format!(
                "{}: not a file `sweepkit workflow write` writes",
                path.display()
            ),
            "",
        ),
        Err(e) => Err(Failure::failed_msg(e).at(at(path))),
    }
}
