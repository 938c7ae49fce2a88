//! `actions/setup/install.sh` against a release archive served on loopback
//! by the fake server (`serve_dir`):
//! the archive comes from `scripts/release-archive --bin-dir` over small stub
//! executables (no release build needed), the script runs from a temp copy
//! of `actions/setup` whose `checksums.txt` the test writes, and a `cargo`
//! first on PATH records any call, so a test fails if the script compiles.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use test_kit::{FakeGitHub, stderr, write_executable as executable};

use sweepkit_e2e::TOOLS;
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The host's glibc target: what a host build is, and the archive
/// install.sh falls back to on a glibc host when no musl one is listed.
#[cfg(not(target_arch = "aarch64"))]
const TARGET: &str = "x86_64-unknown-linux-gnu";
#[cfg(target_arch = "aarch64")]
const TARGET: &str = "aarch64-unknown-linux-gnu";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

struct Fixture {
    tmp: test_kit::TempDir,
    base: String,
    /// Serves `<tmp>/srv` (GET only, 404 when missing); records requests.
    server: FakeGitHub,
    /// The `sha256sum` line of the served archive.
    line: String,
    archive_bytes: u64,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = test_kit::temp_dir();
        let stubs = tmp.path().join("stubs");
        sweepkit_e2e::version_stubs(&stubs, VERSION);
        let dist = tmp.path().join("srv").join(format!("v{VERSION}"));
        let out = Command::new(root().join("scripts/release-archive"))
            .args(["--bin-dir", stubs.to_str().unwrap()])
            .args(["--target", TARGET])
            .args(["--out", dist.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "release-archive: {out:?}");
        let archive = format!("sweepkit-{VERSION}-{TARGET}.tar.gz");
        let line = std::fs::read_to_string(dist.join(format!("{archive}.sha256"))).unwrap();
        let line = line.trim_end().to_string();
        assert!(line.ends_with(&format!("  {archive}")), "{line}");
        // The archive holds exactly the binaries of TOOLS at the top level.
        let list = Command::new("tar")
            .arg("-tzf")
            .arg(dist.join(&archive))
            .output()
            .unwrap();
        let mut names: Vec<String> = String::from_utf8(list.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        names.sort();
        let mut want: Vec<String> = TOOLS.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(names, want);
        let archive_bytes = std::fs::metadata(dist.join(&archive)).unwrap().len();

        // The action as a caller's runner checks it out: actions/setup plus
        // the Cargo.toml that names the version.
        let action = tmp.path().join("sweepkit/actions/setup");
        std::fs::create_dir_all(&action).unwrap();
        for f in ["install.sh", "action.yml"] {
            std::fs::copy(root().join("actions/setup").join(f), action.join(f)).unwrap();
        }
        std::fs::copy(
            root().join("Cargo.toml"),
            tmp.path().join("sweepkit/Cargo.toml"),
        )
        .unwrap();
        // A cargo that records being called.
        let fake = tmp.path().join("fake-bin");
        std::fs::create_dir(&fake).unwrap();
        executable(
            &fake.join("cargo"),
            &format!(
                "#!/bin/sh\ntouch '{}'\nexit 97\n",
                tmp.path().join("cargo-was-called").display()
            ),
        );
        let server = test_kit::fake_github();
        server.serve_dir("", &tmp.path().join("srv"));
        Fixture {
            tmp,
            base: server.base_url(),
            server,
            line,
            archive_bytes,
        }
    }

    fn checksums(&self, text: &str) {
        std::fs::write(
            self.tmp.path().join("sweepkit/actions/setup/checksums.txt"),
            format!("# test\n{text}"),
        )
        .unwrap();
    }

    fn runner_temp(&self) -> PathBuf {
        self.tmp.path().join("runner-temp")
    }

    fn bin_dir(&self) -> PathBuf {
        self.runner_temp().join(format!("sweepkit-{VERSION}/bin"))
    }

    /// Requests the server has had so far.
    fn hits(&self) -> usize {
        self.server.requests().len()
    }

    fn github_path(&self) -> String {
        std::fs::read_to_string(self.tmp.path().join("github-path")).unwrap_or_default()
    }

    /// Runs install.sh as a runner step would, with `extra` env and the
    /// given PATH prefix before the fake cargo.
    fn run(&self, args: &[&str], extra: &[(&str, &str)]) -> Output {
        std::fs::create_dir_all(self.runner_temp()).unwrap();
        let path = format!(
            "{}:{}",
            self.tmp.path().join("fake-bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = test_kit::command("bash");
        c.arg(self.tmp.path().join("sweepkit/actions/setup/install.sh"))
            .args(args)
            .env("PATH", path)
            .env("HOME", self.tmp.path())
            .env("RUNNER_TEMP", self.runner_temp())
            .env("GITHUB_PATH", self.tmp.path().join("github-path"))
            .env("GITHUB_OUTPUT", self.tmp.path().join("github-output"))
            .env("SWEEPKIT_TARGET", TARGET)
            .env("SWEEPKIT_RELEASE_BASE", &self.base);
        for (k, v) in extra {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    fn assert_no_cargo(&self) {
        assert!(
            !self.tmp.path().join("cargo-was-called").exists(),
            "install.sh ran cargo without build-from-source"
        );
    }

    fn assert_nothing_installed(&self) {
        assert_eq!(self.github_path(), "", "something was put on PATH");
        let entries = std::fs::read_dir(self.bin_dir())
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(entries, 0, "{} is not empty", self.bin_dir().display());
    }
}

#[test]
fn a_matching_checksum_installs_every_tool_on_path() {
    let f = Fixture::new();
    f.checksums(&format!("{}\n", f.line));
    let started = std::time::Instant::now();
    let out = f.run(&["install"], &[]);
    let took = started.elapsed();
    assert!(out.status.success(), "install failed: {}", stderr(&out));
    eprintln!(
        "installed the stub archive ({} bytes) in {took:?}",
        f.archive_bytes
    );
    let path = f.github_path();
    assert_eq!(path.trim_end(), f.bin_dir().to_str().unwrap());
    for t in TOOLS {
        let o = Command::new(f.bin_dir().join(t))
            .arg("--version")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            format!("{t} {VERSION}")
        );
    }
    let outputs = std::fs::read_to_string(f.tmp.path().join("github-output")).unwrap();
    assert!(outputs.contains("source=prebuilt"), "{outputs}");
    assert!(outputs.contains(&format!("version={VERSION}")), "{outputs}");
    f.assert_no_cargo();

    // `ensure` finds the tool on PATH with the right version: no download.
    let hits = f.hits();
    let with_path = format!(
        "{}:{}:{}",
        f.bin_dir().display(),
        f.tmp.path().join("fake-bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = f.run(&["ensure", "generate-matrix"], &[("PATH", &with_path)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(f.hits(), hits, "ensure downloaded again");
}

#[test]
fn ensure_replaces_a_tool_of_another_version_with_the_verified_one() {
    ensure_does_not_trust("9.9.9");
}

#[test]
fn ensure_does_not_trust_a_same_version_tool_outside_the_job_directory() {
    // What an earlier job on a persistent runner could leave on PATH.
    ensure_does_not_trust(VERSION);
}

fn ensure_does_not_trust(planted_version: &str) {
    let f = Fixture::new();
    f.checksums(&format!("{}\n", f.line));
    // A planted generate-matrix first on PATH.
    let planted = f.tmp.path().join("planted");
    std::fs::create_dir(&planted).unwrap();
    executable(
        &planted.join("generate-matrix"),
        &format!("#!/bin/sh\necho 'generate-matrix {planted_version}'\n"),
    );
    let path = format!(
        "{}:{}:{}",
        planted.display(),
        f.tmp.path().join("fake-bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = f.run(&["ensure", "generate-matrix"], &[("PATH", &path)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(f.hits() > 0, "nothing was downloaded");
    assert_eq!(f.github_path().trim_end(), f.bin_dir().to_str().unwrap());
    f.assert_no_cargo();
}

#[test]
fn a_wrong_checksum_is_refused_and_nothing_is_installed() {
    let f = Fixture::new();
    let (sha, name) = f.line.split_once("  ").unwrap();
    let flipped: String = sha
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if i == 0 {
                if c == '0' { '1' } else { '0' }
            } else {
                c
            }
        })
        .collect();
    f.checksums(&format!("{flipped}  {name}\n"));
    let out = f.run(&["install"], &[]);
    assert!(!out.status.success(), "a wrong checksum was accepted");
    let err = stderr(&out);
    assert!(err.contains("sha256") && err.contains("refused"), "{err}");
    f.assert_nothing_installed();
    f.assert_no_cargo();
}

#[test]
fn a_version_without_an_archive_is_a_clear_error_and_never_compiles() {
    let f = Fixture::new();
    f.checksums("");
    let out = f.run(&["install"], &[]);
    assert!(!out.status.success());
    let err = stderr(&out);
    let url = format!("{}/v{VERSION}/sweepkit-{VERSION}-{TARGET}.tar.gz", f.base);
    for want in [VERSION, TARGET, url.as_str(), "build-from-source"] {
        assert!(err.contains(want), "error lacks {want:?}: {err}");
    }
    f.assert_nothing_installed();
    f.assert_no_cargo();
    assert_eq!(f.hits(), 0);
}

#[test]
fn a_listed_archive_the_server_lacks_is_a_clear_error_and_never_compiles() {
    let f = Fixture::new();
    // Listed under another target name than the one served.
    let other = "aarch64-unknown-linux-musl";
    let (sha, _) = f.line.split_once("  ").unwrap();
    f.checksums(&format!("{sha}  sweepkit-{VERSION}-{other}.tar.gz\n"));
    let out = f.run(&["install"], &[("SWEEPKIT_TARGET", other)]);
    assert!(!out.status.success());
    let err = stderr(&out);
    let url = format!("{}/v{VERSION}/sweepkit-{VERSION}-{other}.tar.gz", f.base);
    assert!(
        err.contains("could not download") && err.contains(&url),
        "{err}"
    );
    f.assert_nothing_installed();
    f.assert_no_cargo();
}

#[test]
fn a_glibc_host_takes_the_listed_gnu_archive_when_no_musl_one_is_listed() {
    let f = Fixture::new();
    f.checksums(&format!("{}\n", f.line));
    let musl = TARGET.replace("-gnu", "-musl");
    // Without an override install.sh looks for the musl archive first.
    let out = f.run(&["target"], &[("SWEEPKIT_TARGET", "")]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), musl);
    // An explicit target is taken as it is: no fallback.
    let out = f.run(&["install"], &[("SWEEPKIT_TARGET", &musl)]);
    assert!(!out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "lists no sha256 for sweepkit-{VERSION}-{musl}.tar.gz"
        )),
        "{}",
        stderr(&out)
    );
    f.assert_nothing_installed();
    // No override: the gnu archive the list names is installed, and said so.
    let out = f.run(&["install"], &[("SWEEPKIT_TARGET", "")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("takes the {TARGET} archive")),
        "{}",
        stderr(&out)
    );
    assert_eq!(f.github_path().trim_end(), f.bin_dir().to_str().unwrap());
    f.assert_no_cargo();
}

#[test]
fn build_from_source_is_the_only_way_cargo_runs() {
    let f = Fixture::new();
    f.checksums("");
    let out = f.run(
        &["install", "generate-matrix"],
        &[("SWEEPKIT_BUILD_FROM_SOURCE", "true")],
    );
    // The fake cargo fails, so the install fails, but it was asked to build.
    assert!(!out.status.success());
    assert!(f.tmp.path().join("cargo-was-called").exists());
    assert!(stderr(&out).contains("cargo build"), "{}", stderr(&out));
    f.assert_nothing_installed();
}

/// A loopback server whose every answer is a chunked body of `total`
/// bytes without Content-Length (what `--max-filesize` of curl 7.88 does not
/// stop). Returns its base URL and the count of body bytes it got written
/// before the client hung up.
fn chunked_server(total: u64) -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    const CHUNK: usize = 64 * 1024;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let sent = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&sent);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 2 {
                line.clear();
            }
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/gzip\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
            if stream.write_all(head.as_bytes()).is_err() {
                continue;
            }
            let data = vec![b'x'; CHUNK];
            let mut left = total;
            while left > 0 {
                let n = left.min(CHUNK as u64);
                let frame = format!("{n:x}\r\n");
                let ok = stream.write_all(frame.as_bytes()).is_ok()
                    && stream.write_all(&data[..n as usize]).is_ok()
                    && stream.write_all(b"\r\n").is_ok();
                if !ok {
                    break;
                }
                counter.fetch_add(n, Ordering::SeqCst);
                left -= n;
            }
            let _ = stream.write_all(b"0\r\n\r\n");
        }
    });
    (base, sent)
}

#[test]
fn a_chunked_download_past_the_limit_is_cut_off_and_refused_as_too_large() {
    // 1 MiB limit, a 64 MiB body: the installer must stop at the limit.
    const LIMIT: u64 = 1024 * 1024;
    const BODY: u64 = 64 * 1024 * 1024;
    let f = Fixture::new();
    f.checksums(&format!("{}\n", f.line));
    let (base, sent) = chunked_server(BODY);
    let limit = LIMIT.to_string();
    let out = f.run(
        &["install"],
        &[
            ("SWEEPKIT_RELEASE_BASE", &base),
            ("SWEEPKIT_MAX_ARCHIVE_BYTES", &limit),
        ],
    );
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "an oversize download was accepted: {err}"
    );
    assert!(err.contains("too large"), "{err}");
    // The script reports what it wrote: never more than the limit plus the
    // one byte that tells it the body goes on.
    let written: u64 = err
        .split("stopped after ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no byte count in: {err}"));
    assert_eq!(written, LIMIT + 1, "{err}");
    // The server could write no more than the limit plus what the loopback
    // socket buffers hold (a few MB) before the client hung up.
    let sent = sent.load(std::sync::atomic::Ordering::SeqCst);
    assert!(sent < BODY / 2, "the whole body was read: {sent} bytes");
    f.assert_nothing_installed();
    f.assert_no_cargo();
    // The staging directory is gone.
    let left: Vec<_> = std::fs::read_dir(f.bin_dir().parent().unwrap())
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.iter().all(|n| n == "bin"), "{left:?}");
}
