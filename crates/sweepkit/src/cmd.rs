//! The `workflow write` and `workflow check` commands over the `sweepkit`
//! library; a failure's annotation points at line 1 of the vendored file.
use std::path::Path;

use sweep_cli::{Failure, Outcome};
use sweepkit::{Release, Verdict, WORKFLOW_FILE};

/// The annotation location of the vendored workflow file.
fn at(path: &Path) -> (Option<&str>, Option<usize>) {
    (path.to_str(), Some(1))
}

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
                    "warning: {what}; written anyway (--allow-unreleased): set `build-from-source: true` in your caller's `with:` so the setup steps build the binaries with cargo"
                );
                Ok(())
            } else {
                let msg = format!(
                    "{what}. Fix: run `sweepkit workflow write --ref <SHA>` with the pin the release notes of v{version} name (the commit that lists its checksums); or, to build the binaries on the runners instead, pass `--allow-unreleased` and set `build-from-source: true` in your caller's `with:`"
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

pub(crate) fn write(dir: &Path, pin: Option<&str>) -> Outcome {
    match sweepkit::write(dir, pin) {
        Ok(path) => {
            eprintln!(
                "wrote {} (sweepkit {}); call it from your run-sweep.yml with `uses: ./{}`",
                path.display(),
                sweepkit::VERSION,
                Path::new(".github/workflows").join(WORKFLOW_FILE).display()
            );
            Ok(())
        }
        Err(e) => Err(Failure::failed_msg(e).at(at(&dir.join(WORKFLOW_FILE)))),
    }
}

pub(crate) fn check(dir: &Path) -> Outcome {
    let path = dir.join(WORKFLOW_FILE);
    let fail = |msg: String| Err(Failure::rejected_msg(msg).at(at(&path)));
    match sweepkit::check(&path) {
        Ok(Verdict::Unchanged { pin }) => {
            eprintln!(
                "{}: unchanged since `sweepkit workflow write` (sweepkit {}, actions at {pin})",
                path.display(),
                sweepkit::VERSION
            );
            Ok(())
        }
        Ok(Verdict::Edited { reason }) => fail(format!(
            "{}: {reason}; undo the edit or run `sweepkit workflow write`",
            path.display()
        )),
        Ok(Verdict::OtherVersion { written_by }) => fail(format!(
            "{}: written by sweepkit {written_by}, this is sweepkit {}; run `sweepkit workflow write` to upgrade it (or check with sweepkit {written_by})",
            path.display(),
            sweepkit::VERSION
        )),
        Ok(Verdict::NotGenerated) => fail(format!(
            "{}: its hash matches, but sweepkit {} would write different content; run `sweepkit workflow write`",
            path.display(),
            sweepkit::VERSION
        )),
        Err(e) => Err(Failure::failed_msg(e).at(at(&path))),
    }
}
