//! `reuse-sweep validate-artifacts` reads regular files only, from inside
//! the artifact tree: a FIFO named `*.json` is refused at once (never
//! waited on) and a `*.json` symlink leading outside is refused unread.

mod common;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::fixed;
use serde_json::json;
use test_kit::{mkfifo, stderr, stdout, write_json as write};

/// Longest a run may take before the test calls it blocked. A bound on a
/// hang (a read of a FIFO never returns), not a timing assertion.
const BOUND: Duration = Duration::from_secs(30);

/// Runs validate-artifacts on `root`, failing the test (after killing the
/// run) when it has not exited within [`BOUND`].
fn run_bounded(root: &Path) -> Output {
    let mut child = test_kit::command(env!("CARGO_BIN_EXE_reuse-sweep"))
        .args(["validate-artifacts", "--artifacts-dir"])
        .arg(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + BOUND;
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("validate-artifacts still running after {BOUND:?}: it blocked");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

/// A valid tree: fixed-sequence rows and their run stats.
fn valid_tree(root: &Path) {
    write(root, "results_bmk/agg.json", &json!([fixed(4), fixed(8)]));
    write(root, "run-stats/run_stats.json", &json!({}));
}

#[test]
fn a_fifo_named_json_among_the_results_is_refused_at_once_naming_it() {
    let d = test_kit::temp_dir();
    valid_tree(d.path());
    let fifo = d.path().join("results_bmk/x.json");
    mkfifo(&fifo);
    let out = run_bounded(d.path());
    let err = stderr(&out);
    // An unreadable file: the tool could not do the job (2).
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&fifo.display().to_string()), "{err}");
    assert!(err.contains("FIFO"), "{err}");
}

#[test]
fn a_fifo_as_a_raw_eval_meta_file_is_never_waited_on() {
    let d = test_kit::temp_dir();
    valid_tree(d.path());
    mkfifo(&d.path().join("eval_a/meta_env.json"));
    let out = run_bounded(d.path());
    // The de-duplication step skips it; validation reports the eval dir
    // as having no readable metadata.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("'eval_a'"), "{}", stderr(&out));
}

#[cfg(unix)]
#[test]
fn a_json_symlink_leading_outside_the_tree_is_refused_unread() {
    const SECRET: &str = "s3cr3t-token-value";
    let d = test_kit::temp_dir();
    let root = d.path().join("artifacts");
    valid_tree(&root);
    write(
        d.path(),
        "elsewhere/secret.json",
        &json!([{"token": SECRET}]),
    );
    let link = root.join("results_bmk/b.json");
    std::os::unix::fs::symlink(d.path().join("elsewhere/secret.json"), &link).expect("symlink");
    let out = run_bounded(&root);
    let (err, out_text) = (stderr(&out), stdout(&out));
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&link.display().to_string()), "{err}");
    assert!(err.contains("outside"), "{err}");
    assert!(!err.contains(SECRET) && !out_text.contains(SECRET));
}

#[cfg(unix)]
#[test]
fn a_json_symlink_inside_the_tree_is_read() {
    let d = test_kit::temp_dir();
    valid_tree(d.path());
    write(d.path(), "results_bmk/src/more.json", &json!([fixed(16)]));
    std::os::unix::fs::symlink("src/more.json", d.path().join("results_bmk/more.json"))
        .expect("symlink");
    let out = run_bounded(d.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("3 fixed-sequence row(s)"),
        "{}",
        stdout(&out)
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_artifact_directory_is_not_entered() {
    let d = test_kit::temp_dir();
    let root = d.path().join("artifacts");
    valid_tree(&root);
    // Rows outside the tree that would duplicate the fixed-sequence ones.
    write(
        d.path(),
        "elsewhere/bmk_agentic_x/p.json",
        &json!([fixed(4)]),
    );
    std::os::unix::fs::symlink(
        d.path().join("elsewhere/bmk_agentic_x"),
        root.join("bmk_agentic_x"),
    )
    .expect("symlink");
    let out = run_bounded(&root);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
