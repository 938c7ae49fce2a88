//! `check-changelog dry-run` on one-commit ranges of the real InferenceX
//! history (the conformance corpus' `history.bundle`, cloned once per test):
//! the rendered table (insta snapshot), the JSON summary, and the gate's
//! verdict and messages on a range the gate rejects.
#![allow(clippy::unwrap_used)] // tests fail loudly by design

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use test_kit::{git, stderr, stdout};

/// One-commit ranges (parent, commit) of the rewritten history, from the
/// conformance cases named after them.
const PR2550: (&str, &str) = (
    // changelog-hist-0a826be36-pr2550: single-node 8k1k with evals.
    "a5aecb02cf9afb6f550ea9be90fa573c5da8c49d",
    "1dd4c709467074360db5b2dc7c7a65c247c1cca1",
);
const PR2554: (&str, &str) = (
    // changelog-hist-1446647b5-pr2554: multi-node 8k1k with evals.
    "3acaa82572698690f70cd6cf8b75aa78b215d700",
    "40787ba67f769f594dbe6f1109317a253a0fad65",
);
const PR2127: (&str, &str) = (
    // changelog-hist-0bd3fa41c-pr2127: rejected (invalid master config).
    "78af3fe9018b43b32ab070d9af3041f5c5e297c2",
    "c7fb23daa195409629379ef8bab2e285fbe93714",
);

fn bundle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/fixtures/history.bundle")
}

/// A clone of the real history.
struct History {
    _tmp: test_kit::TempDir,
    dir: PathBuf,
}

impl History {
    fn clone() -> Self {
        let tmp = test_kit::temp_dir();
        let dir = tmp.path().join("repo");
        git(
            tmp.path(),
            &[
                "clone",
                "-q",
                &bundle().to_string_lossy(),
                &dir.to_string_lossy(),
            ],
        );
        History { _tmp: tmp, dir }
    }

    /// Checks out `head` (the configs are read from the working tree) and
    /// runs the binary with `args`.
    fn run_at(&self, head: &str, args: &[&str]) -> Output {
        git(
            &self.dir,
            &["-c", "advice.detachedHead=false", "checkout", "-q", head],
        );
        test_kit::command(env!("CARGO_BIN_EXE_check-changelog"))
            .args(args)
            .current_dir(&self.dir)
            .output()
            .unwrap()
    }

    fn dry_run(&self, (base, head): (&str, &str), extra: &[&str]) -> Output {
        let mut args = vec!["dry-run", "--base-ref", base];
        args.extend_from_slice(extra);
        self.run_at(head, &args)
    }
}

#[test]
fn the_table_summarises_the_legs_of_a_real_change_per_runner_and_bucket() {
    let h = History::clone();
    let mut shown = String::new();
    for range in [PR2550, PR2554] {
        let o = h.dry_run(range, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        // The default head is HEAD (the checked-out commit).
        shown.push_str(&stdout(&o).replace(range.0, "<base>"));
        shown.push('\n');
    }
    let o = h.dry_run(PR2550, &["--leg-minutes", "90", "--trim-conc"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    shown.push_str(&stdout(&o).replace(PR2550.0, "<base>"));
    test_kit::assert_snapshot!(
        "the_table_summarises_the_legs_of_a_real_change_per_runner_and_bucket",
        shown
    );
}

#[test]
fn the_json_carries_every_leg_and_sums_that_match_them() {
    let h = History::clone();
    let o = h.dry_run(PR2554, &["--json", "--head-ref", PR2554.1]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let legs = v["legs"].as_array().unwrap();
    assert_eq!(v["total"]["legs"], legs.len());
    let minutes: u64 = legs
        .iter()
        .map(|l| l["gpus"].as_u64().unwrap() * l["minutes"].as_u64().unwrap())
        .sum();
    let hours = v["total"]["gpu_hours"].as_f64().unwrap();
    assert!(
        (hours - minutes as f64 / 60.0).abs() < 0.01,
        "{hours} vs {minutes}"
    );
    let summed: u64 = v["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["legs"].as_u64().unwrap())
        .sum();
    assert_eq!(summed, legs.len() as u64);
    // A multi-node leg: prefill plus decode workers' GPUs.
    let row = &legs[0]["row"];
    let side = |s: &str| {
        row[s]["num-worker"].as_u64().unwrap()
            * row[s]["tp"].as_u64().unwrap()
            * row[s]["pp"].as_u64().unwrap()
            * row[s]["pcp-size"].as_u64().unwrap()
    };
    assert_eq!(
        legs[0]["gpus"].as_u64().unwrap(),
        side("prefill") + side("decode")
    );
    assert_eq!(legs[0]["minutes"], 480);
    assert_eq!(v["leg_minutes"]["multi_node"], 480);
}

#[test]
fn a_rejected_range_exits_1_with_the_gates_messages_and_no_plan() {
    let h = History::clone();
    let dry = h.dry_run(PR2127, &["--json"]);
    assert_eq!(dry.status.code(), Some(1));
    assert_eq!(stdout(&dry), "");
    let gate = h.run_at(PR2127.1, &["--base-ref", PR2127.0, "--head-ref", "HEAD"]);
    assert_eq!(gate.status.code(), Some(1));
    assert_eq!(stderr(&dry), stderr(&gate));
    assert!(
        stderr(&dry).contains("Master config entry 'qwen3.5-fp8-mi355x-sglang-disagg' failed"),
        "{}",
        stderr(&dry)
    );
}

#[test]
fn leg_minutes_outside_what_github_can_run_are_a_usage_error() {
    let h = History::clone();
    for bad in ["0", "7201", "x"] {
        let o = h.dry_run(PR2550, &["--leg-minutes", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
    }
}
