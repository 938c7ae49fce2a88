//! `actions/pin.sh check`, the version-coherence check, on a throwaway git
//! repository made of copies of the files it reads (so the test does not
//! depend on this repository's own history): it fails when a crate changed
//! after the pinned ref, passes after a re-pin, fails on a version comment
//! that is not Cargo.toml's, and compares a released tag's code with the pin.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::Path;
use std::process::{Command, Output};

use sweepkit_e2e::workspace_root as root;

struct Repo(test_kit::TempDir);

impl Repo {
    fn new() -> Repo {
        let dir = test_kit::temp_dir();
        let r = Repo(dir);
        for f in [
            "actions/pin.sh",
            "actions/setup/checksums.txt",
            ".github/workflows/run-sweep.yml",
            ".github/workflows/sweepkit-sweep-legs.yml",
            ".github/workflows/sweepkit-history.yml",
            "Cargo.toml",
            "Cargo.lock",
            "templates/compare.md.j2",
            "examples/trusted-external-sweep.yml",
        ] {
            let to = r.path().join(f);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(root().join(f), &to).unwrap();
        }
        r.write("crates/tool/src/lib.rs", "pub fn f() {}\n");
        r.git(&["init", "-q"]);
        r.commit("base");
        r
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.invalid",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "tag.gpgsign=false",
            ])
            .args(args)
            .current_dir(self.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn commit(&self, msg: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-qm", msg]);
        self.git(&["rev-parse", "HEAD"])
    }

    fn pin_sh(&self, arg: &str) -> Output {
        Command::new("bash")
            .arg(self.path().join("actions/pin.sh"))
            .arg(arg)
            .current_dir(self.path())
            .output()
            .unwrap()
    }

    /// Pins every action ref at `sha` and commits the pin.
    fn pin(&self, sha: &str) {
        let out = self.pin_sh(sha);
        assert!(out.status.success(), "pin: {out:?}");
        self.commit(&format!("pin {sha}"));
    }

    fn check(&self) -> (i32, String) {
        let out = self.pin_sh("check");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout),
        )
    }
}

fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[test]
fn fails_when_a_crate_changed_after_the_pin_and_passes_after_a_re_pin() {
    let r = Repo::new();
    let code = r.git(&["rev-parse", "HEAD"]);
    r.pin(&code);
    let (status, text) = r.check();
    assert_eq!(status, 0, "{text}");

    r.write("crates/tool/src/lib.rs", "pub fn f() -> u8 { 1 }\n");
    let changed = r.commit("tool: change");
    let (status, text) = r.check();
    assert_eq!(status, 1, "{text}");
    assert!(
        text.contains(&format!(
            "crates changed after the pinned ref {code}; re-pin"
        )),
        "{text}"
    );

    r.pin(&changed);
    let (status, text) = r.check();
    assert_eq!(status, 0, "{text}");

    // Templates and Cargo.lock count as code as well.
    r.write("templates/compare.md.j2", "changed\n");
    r.commit("template");
    assert_eq!(r.check().0, 1);
}

#[test]
fn fails_when_the_refs_disagree_or_their_version_is_not_cargo_tomls() {
    let r = Repo::new();
    let code = r.git(&["rev-parse", "HEAD"]);
    r.pin(&code);
    let wf = ".github/workflows/run-sweep.yml";
    let text = std::fs::read_to_string(r.path().join(wf)).unwrap();

    // One ref at another commit.
    let other = "0123456789abcdef0123456789abcdef01234567";
    let one = text.replacen(&format!("@{code}"), &format!("@{other}"), 1);
    r.write(wf, &one);
    r.commit("one ref elsewhere");
    let (status, out) = r.check();
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("2 different commits"), "{out}");

    // All at the right commit, but the comment names another version.
    let stale = text.replace(&format!("# v{}", version()), "# v0.0.9");
    r.write(wf, &stale);
    r.commit("stale comments");
    let (status, out) = r.check();
    assert_eq!(status, 1, "{out}");
    assert!(out.contains(&format!("'# v{}'", version())), "{out}");
}

#[test]
fn the_callers_examples_are_pinned_and_checked_with_the_workflow() {
    let r = Repo::new();
    let code = r.git(&["rev-parse", "HEAD"]);
    r.pin(&code);
    let example = "examples/trusted-external-sweep.yml";
    let text = std::fs::read_to_string(r.path().join(example)).unwrap();
    assert!(
        text.contains(&format!("/actions/sweep-ops@{code} # v{}", version())),
        "the pin rewrites the examples too:\n{text}"
    );
    assert_eq!(r.check().0, 0);

    // An example left at another commit is a disagreement.
    let other = "0123456789abcdef0123456789abcdef01234567";
    r.write(
        example,
        &text.replace(&format!("@{code}"), &format!("@{other}")),
    );
    r.commit("example elsewhere");
    let (status, out) = r.check();
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("2 different commits"), "{out}");
}

#[test]
fn a_pin_whose_checksums_list_this_version_must_match_the_release_tag() {
    let r = Repo::new();
    let tag = format!("v{}", version());
    r.git(&["tag", &tag]);
    // The checksums commit after the release, then the pin to it.
    let list = format!(
        "{}  sweepkit-{}-x86_64-unknown-linux-musl.tar.gz\n",
        "ab".repeat(32),
        version()
    );
    let mut sums = std::fs::read_to_string(r.path().join("actions/setup/checksums.txt")).unwrap();
    sums.push_str(&list);
    r.write("actions/setup/checksums.txt", &sums);
    let listed = r.commit("checksums of the release");
    r.pin(&listed);
    let (status, out) = r.check();
    assert_eq!(status, 0, "{out}");

    // A tag whose code differs from the pin: its archives are not P's code.
    r.git(&["tag", "-d", &tag]);
    r.write("crates/tool/src/lib.rs", "pub fn g() {}\n");
    r.commit("code after the release");
    r.git(&["tag", &tag]);
    r.git(&["checkout", "-q", &listed]);
    r.git(&["checkout", "-q", "-b", "at-pin"]);
    r.pin(&listed);
    let (status, out) = r.check();
    assert_eq!(status, 1, "{out}");
    assert!(out.contains("bump the version"), "{out}");
}

#[test]
fn a_pin_missing_from_the_clone_cannot_be_checked() {
    let r = Repo::new();
    r.pin("0123456789abcdef0123456789abcdef01234567");
    let (status, out) = r.check();
    assert_eq!(status, 2, "{out}");
    assert!(out.contains("not in this clone"), "{out}");
}
