//! The release recipe of `docs/release.md`, end to end, in a throwaway git
//! repository made of copies of the files it uses: `scripts/release-archive`
//! with its default target (over stub binaries: no release build), the
//! `.sha256` lines appended to `actions/setup/checksums.txt` and committed,
//! `actions/pin.sh` at that commit, and `actions/setup/install.sh install`
//! from the archive served on loopback by the fake GitHub — with no target
//! override, so the archive's name and install.sh's choice must agree.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::Path;
use std::process::Output;

use sweepkit_e2e::{TOOLS, workspace_root as root};
use test_kit::{git, stderr};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn ok(what: &str, out: Output) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `bash <repo>/<script> args…` in the repository, scrubbed environment
/// plus `env`.
fn run(repo: &Path, script: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = test_kit::command("bash");
    c.arg(repo.join(script)).args(args).current_dir(repo);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn the_documented_recipe_cuts_archives_lists_them_pins_them_and_installs_with_no_target_override() {
    let tmp = test_kit::temp_dir();
    let repo = tmp.path().join("sweepkit");
    for f in [
        "actions/pin.sh",
        "actions/setup/install.sh",
        "actions/setup/action.yml",
        "actions/setup/checksums.txt",
        "scripts/release-archive",
        ".github/workflows/run-sweep.yml",
        ".github/workflows/sweepkit-sweep-legs.yml",
        ".github/workflows/sweepkit-history.yml",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        let to = repo.join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root().join(f), &to).unwrap();
    }
    std::fs::create_dir_all(repo.join("crates/tool/src")).unwrap();
    std::fs::write(repo.join("crates/tool/src/lib.rs"), "pub fn f() {}\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "release commit"]);
    let code = git(&repo, &["rev-parse", "HEAD"]);
    ok("pin the code", run(&repo, "actions/pin.sh", &[&code], &[]));
    git(&repo, &["commit", "-qam", "pin"]);

    // Stubs for the nine binaries (what a build of this version leaves).
    let stubs = tmp.path().join("stubs");
    sweepkit_e2e::version_stubs(&stubs, VERSION);
    let dist = repo.join("dist");
    let out_dir = dist.join(format!("v{VERSION}"));

    // 1. The archive, for the default target: no --target.
    let printed = ok(
        "release-archive",
        run(
            &repo,
            "scripts/release-archive",
            &[
                "--bin-dir",
                stubs.to_str().unwrap(),
                "--out",
                out_dir.to_str().unwrap(),
            ],
            &[],
        ),
    );
    let host_target = ok(
        "install.sh target",
        run(&repo, "actions/setup/install.sh", &["target"], &[]),
    );
    let host_target = host_target.trim();
    assert!(
        host_target.ends_with("-unknown-linux-musl"),
        "{host_target}"
    );
    let archive = format!("sweepkit-{VERSION}-{host_target}.tar.gz");
    assert!(
        out_dir.join(&archive).is_file(),
        "release-archive did not name the archive {archive}: {printed}"
    );

    // 2. checksums.txt lists it, committed.
    let line = std::fs::read_to_string(out_dir.join(format!("{archive}.sha256"))).unwrap();
    let sums = repo.join("actions/setup/checksums.txt");
    let text = std::fs::read_to_string(&sums).unwrap() + &line;
    std::fs::write(&sums, text).unwrap();
    git(&repo, &["commit", "-qam", "checksums"]);
    let listed = git(&repo, &["rev-parse", "HEAD"]);
    // The list changed after the pin: the check asks for the re-pin.
    let stale = run(&repo, "actions/pin.sh", &["check"], &[]);
    assert_eq!(stale.status.code(), Some(1), "{}", stderr(&stale));
    assert!(
        stderr(&stale).contains("checksums.txt changed after the pinned ref"),
        "{}",
        stderr(&stale)
    );

    // 3. Pin at the checksums commit; the check passes.
    ok("pin", run(&repo, "actions/pin.sh", &[&listed], &[]));
    git(&repo, &["commit", "-qam", "pin the checksums"]);
    ok("pin check", run(&repo, "actions/pin.sh", &["check"], &[]));

    // 4. Install as a runner does, from the loopback server, with no
    //    SWEEPKIT_TARGET.
    let server = test_kit::fake_github();
    server.serve_dir("", &dist);
    let runner_temp = tmp.path().join("runner-temp");
    std::fs::create_dir_all(&runner_temp).unwrap();
    let github_path = tmp.path().join("github-path");
    let out = run(
        &repo,
        "actions/setup/install.sh",
        &["install"],
        &[
            ("SWEEPKIT_RELEASE_BASE", &server.base_url()),
            ("RUNNER_TEMP", runner_temp.to_str().unwrap()),
            ("GITHUB_PATH", github_path.to_str().unwrap()),
        ],
    );
    ok("install.sh install", out);
    let bin_dir = runner_temp.join(format!("sweepkit-{VERSION}/bin"));
    assert_eq!(
        std::fs::read_to_string(&github_path).unwrap().trim_end(),
        bin_dir.to_str().unwrap()
    );
    for t in TOOLS {
        let o = test_kit::command(bin_dir.join(t))
            .arg("--version")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            format!("{t} {VERSION}")
        );
    }
    let asked: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(asked, vec![format!("/v{VERSION}/{archive}")]);
}
