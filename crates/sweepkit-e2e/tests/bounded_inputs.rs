//! Every input file of every tool goes through the one bounded reader
//! (`sweep_model::fsio::read_regular`, #34 item 6): a FIFO in place of the
//! file is refused without waiting for a writer, and a file over its named
//! size limit is refused before it is read. Each refusal exits non-zero
//! and names the file.
//!
//! [`COMMANDS`] lists every tool and subcommand with the input files it
//! reads; [`the_list_names_every_command_of_every_tool`] fails when a tool
//! grows a subcommand the list does not name (it reads each binary's
//! `--help`), so a new reader cannot be left out by accident.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use sweepkit_e2e::TOOLS;
use test_kit::bench_repo::{self, RUNNERS};
use test_kit::{mkfifo, write_file as write};

/// Bigger than every input limit (the largest is reuse-sweep's 256 MiB
/// artifact JSON). Made with `set_len`: a sparse file costs no disk.
const OVERSIZE: u64 = 1 << 30;

/// A tool still running after this is killed and the test fails: it hung on
/// its input. Far above what a refusal takes; not a timing assertion.
const DEADLINE: Duration = Duration::from_secs(120);

/// One run of a command with one bad input: what the run needs besides the
/// bad file is written by [`Input::setup`].
struct Run {
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
    /// The bad file, relative to the run's directory.
    bad: &'static str,
    /// The fake GitHub a tool that asks the API first talks to (else a
    /// closed port: a tool that gets past its input fails fast).
    server: Option<test_kit::FakeGitHub>,
}

/// One input file of a command.
struct Input {
    what: &'static str,
    /// Writes the rest of the run's inputs into the directory; returns the
    /// run (the bad file is made by the test).
    setup: fn(&Path) -> Run,
}

/// A command: the tool, its subcommand path (empty: the tool itself) and
/// the input files it reads (none: it reads no input file, only flags,
/// the environment or the GitHub API).
type CommandInputs = (&'static str, &'static [&'static str], &'static [Input]);

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_string()).collect()
}

fn run(args_: &[&str], bad: &'static str) -> Run {
    Run {
        args: args(args_),
        env: Vec::new(),
        bad,
        server: None,
    }
}

/// The benchmark template's environment `process` needs (result stem `r`)
/// and `extra`: a single node's parallelism or a multi-node leg's flag.
fn process_env(extra: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    [
        ("RUNNER_TYPE", "h200"),
        ("FRAMEWORK", "vllm"),
        ("PRECISION", "fp8"),
        ("SPEC_DECODING", "none"),
        ("RESULT_FILENAME", "r"),
        ("ISL", "1024"),
        ("OSL", "1024"),
        ("DISAGG", "false"),
        ("MODEL_PREFIX", "alpha"),
        ("IMAGE", "example/vllm:v1"),
    ]
    .iter()
    .chain(extra)
    .map(|(k, v)| (*k, (*v).to_string()))
    .collect()
}

/// A multi-node leg's environment for `process-leg`.
fn multinode_env() -> Vec<(&'static str, String)> {
    process_env(&[("IS_MULTINODE", "true")])
}

/// A repository whose `head` appends one changelog entry to `base`.
fn changelog_repo(d: &Path) -> (String, String) {
    let git = |a: &[&str]| test_kit::git(d, a);
    git(&["init", "-q", "-b", "main"]);
    bench_repo::write_configs(d);
    let (base_log, head_log) = bench_repo::base_and_appended_changelog();
    write(d, "perf-changelog.yaml", &base_log);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    let base = git(&["rev-parse", "HEAD"]);
    write(d, "perf-changelog.yaml", &head_log);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "append"]);
    (base, git(&["rev-parse", "HEAD"]))
}

fn agg_rows() -> String {
    json!([{
        "hw": "h100", "conc": 8, "image": "img:1", "model": "org/Model-FP8",
        "infmax_model_prefix": "dsr1", "framework": "sglang", "precision": "fp8",
        "spec_decoding": "none", "disagg": false, "recipe_fingerprint": "",
        "isl": 1024, "osl": 1024, "is_multinode": false, "tp": 8, "pp": 1, "dcp_size": 1,
        "pcp_size": 1, "ep": 1, "dp_attention": "false",
        "tput_per_gpu": 1000.0, "output_tput_per_gpu": 500.0, "input_tput_per_gpu": 500.0,
        "mean_ttft": 0.2, "median_ttft": 0.2, "p90_ttft": 0.3, "p99_ttft": 0.4,
        "p99.9_ttft": 0.5, "mean_tpot": 0.01, "mean_intvty": 100.0,
        "median_intvty": 100.0, "p90_intvty": 90.0, "p99_intvty": 80.0,
        "p99.9_intvty": 70.0, "median_e2el": 10.0, "p90_e2el": 12.0, "p99_e2el": 14.0,
        "p99.9_e2el": 15.0, "power_metric_schema_version": 2, "power_valid": 0
    }])
    .to_string()
}

const GM: &str = "generate-matrix";

/// Every tool and subcommand, and the input files each one reads.
const COMMANDS: &[CommandInputs] = &[
    (
        "check-changelog",
        &[],
        &[Input {
            what: "a master config of the work tree",
            setup: |d| {
                let (base, head) = changelog_repo(d);
                run(
                    &["--base-ref", &base, "--head-ref", &head],
                    "configs/amd-master.yaml",
                )
            },
        }],
    ),
    (
        "check-changelog",
        &["prepare-merge", "canonicalize"],
        &[Input {
            what: "the changelog of the work tree",
            setup: |d| {
                let (base, _) = changelog_repo(d);
                run(
                    &[
                        "prepare-merge",
                        "canonicalize",
                        "--base-ref",
                        &base,
                        "--pr-number",
                        "2",
                    ],
                    "perf-changelog.yaml",
                )
            },
        }],
    ),
    (
        "check-changelog",
        &["prepare-merge", "resolve-conflict"],
        &[Input {
            what: "the changelog of the work tree",
            setup: |d| {
                changelog_repo(d);
                run(
                    &["prepare-merge", "resolve-conflict"],
                    "perf-changelog.yaml",
                )
            },
        }],
    ),
    (
        "check-changelog",
        &["prepare-merge", "catch-up"],
        &[Input {
            what: "the changelog of the work tree",
            setup: |d| {
                let (base, _) = changelog_repo(d);
                run(
                    &["prepare-merge", "catch-up", "--base-ref", &base],
                    "perf-changelog.yaml",
                )
            },
        }],
    ),
    (
        "check-changelog",
        &["dry-run"],
        &[Input {
            what: "a master config of the work tree",
            setup: |d| {
                let (base, head) = changelog_repo(d);
                run(
                    &["dry-run", "--base-ref", &base, "--head-ref", &head],
                    "configs/amd-master.yaml",
                )
            },
        }],
    ),
    (
        GM,
        &["full-sweep"],
        &[
            Input {
                what: "--config-files",
                setup: |d| {
                    bench_repo::write_configs(d);
                    run(
                        &[
                            "full-sweep",
                            "--config-files",
                            "bad.yaml",
                            "--runner-config",
                            "configs/runners.yaml",
                        ],
                        "bad.yaml",
                    )
                },
            },
            Input {
                what: "--runner-config",
                setup: |d| {
                    bench_repo::write_configs(d);
                    run(
                        &[
                            "full-sweep",
                            "--config-files",
                            "configs/nvidia-master.yaml",
                            "--runner-config",
                            "bad.yaml",
                        ],
                        "bad.yaml",
                    )
                },
            },
        ],
    ),
    (
        GM,
        &["test-config"],
        &[Input {
            what: "--config-files",
            setup: |d| {
                bench_repo::write_configs(d);
                run(
                    &[
                        "test-config",
                        "--config-keys",
                        "alpha-fp8-h200-vllm",
                        "--config-files",
                        "bad.yaml",
                        "--runner-config",
                        "configs/runners.yaml",
                    ],
                    "bad.yaml",
                )
            },
        }],
    ),
    (
        GM,
        &["changelog"],
        &[Input {
            what: "a master config of the work tree",
            setup: |d| {
                let (base, head) = changelog_repo(d);
                run(
                    &[
                        "changelog",
                        "--base-ref",
                        &base,
                        "--head-ref",
                        &head,
                        "--changelog-file",
                        "perf-changelog.yaml",
                    ],
                    "configs/amd-master.yaml",
                )
            },
        }],
    ),
    (
        GM,
        &["priority"],
        &[
            Input {
                what: "--input",
                setup: |d| {
                    write(d, "policy.yaml", &policy_text());
                    run(
                        &["priority", "--policy", "policy.yaml", "--input", "bad.json"],
                        "bad.json",
                    )
                },
            },
            Input {
                what: "--policy",
                setup: |d| {
                    write(d, "m.json", "[]");
                    run(
                        &["priority", "--policy", "bad.yaml", "--input", "m.json"],
                        "bad.yaml",
                    )
                },
            },
        ],
    ),
    (
        GM,
        &["sweep-policy"],
        &[Input {
            what: "--event-path",
            setup: |_| {
                run(
                    &[
                        "sweep-policy",
                        "--event-name",
                        "pull_request",
                        "--event-path",
                        "event.json",
                    ],
                    "event.json",
                )
            },
        }],
    ),
    (
        GM,
        &["canary"],
        &[Input {
            what: "--input",
            setup: |_| run(&["canary", "--input", "ssc.json"], "ssc.json"),
        }],
    ),
    (
        GM,
        &["from-command"],
        &[Input {
            what: "a config file of the command line",
            setup: |d| {
                bench_repo::write_configs(d);
                run(
                    &[
                        "from-command",
                        "--command-line",
                        "full-sweep --config-files bad.yaml --runner-config configs/runners.yaml",
                    ],
                    "bad.yaml",
                )
            },
        }],
    ),
    (
        GM,
        &["split"],
        &[Input {
            what: "--input",
            setup: |_| run(&["split", "--input", "ssc.json"], "ssc.json"),
        }],
    ),
    (GM, &["leg-env"], &[]),
    (GM, &["worker-settings"], &[]),
    (
        GM,
        &["changelog-metadata"],
        &[Input {
            what: "--input",
            setup: |_| {
                run(
                    &[
                        "changelog-metadata",
                        "--input",
                        "ssc.json",
                        "--output",
                        "m.json",
                    ],
                    "ssc.json",
                )
            },
        }],
    ),
    (
        "collect-results",
        &["process"],
        &[Input {
            what: "the benchmark result",
            setup: |_| {
                let mut r = run(&["process"], "r.json");
                r.env = process_env(&[("TP", "8"), ("EP_SIZE", "1"), ("DP_ATTENTION", "false")]);
                r
            },
        }],
    ),
    (
        "collect-results",
        &["process-leg"],
        &[
            Input {
                what: "a result file of the leg",
                setup: |_| {
                    let mut r = run(&["process-leg"], "r_x_gpus_8.json");
                    r.env = multinode_env();
                    r
                },
            },
            Input {
                what: "the launcher's power-producer-sha.txt",
                setup: |d| {
                    write(d, "r_x_gpus_8.json", "{}");
                    let mut r = run(&["process-leg"], "power-producer-sha.txt");
                    r.env = multinode_env();
                    r
                },
            },
        ],
    ),
    (
        "collect-results",
        &["aggregate"],
        &[Input {
            what: "a result file of the tree",
            setup: |d| {
                write(d, "res/a.json", "{}");
                run(&["aggregate", "res", "bmk"], "res/b.json")
            },
        }],
    ),
    (
        "collect-results",
        &["evals"],
        &[
            Input {
                what: "an eval set's meta_env.json",
                setup: |d| {
                    write(d, "ev/e1/results_1.json", r#"{"results": {}}"#);
                    run(&["evals", "ev", "all"], "ev/e1/meta_env.json")
                },
            },
            Input {
                what: "an lm-eval results file",
                setup: |d| {
                    write(
                        d,
                        "ev/e1/meta_env.json",
                        r#"{"infmax_model_prefix": "alpha"}"#,
                    );
                    run(&["evals", "ev", "all"], "ev/e1/results_1.json")
                },
            },
        ],
    ),
    (
        "collect-results",
        &["validate-scores"],
        &[
            Input {
                what: "--thresholds",
                setup: |d| {
                    write(d, "results_1.json", r#"{"results": {}}"#);
                    let mut r = run(&["validate-scores", "--thresholds", "t.yaml"], "t.yaml");
                    r.env = vec![("MODEL_PREFIX", "alpha".into())];
                    r
                },
            },
            Input {
                what: "a results file",
                setup: |_| {
                    let mut r = run(&["validate-scores"], "results_1.json");
                    r.env = vec![("MODEL_PREFIX", "alpha".into())];
                    r
                },
            },
        ],
    ),
    (
        "collect-results",
        &["validate-agentic"],
        &[Input {
            what: "the aiperf aggregate",
            setup: |d| {
                std::fs::create_dir_all(d.join("art")).expect("mkdir");
                run(
                    &[
                        "validate-agentic",
                        "--failed-request-threshold",
                        "0.1",
                        "art",
                    ],
                    "art/profile_export_aiperf.json",
                )
            },
        }],
    ),
    (
        "collect-results",
        &["validate-agentic-results"],
        &[Input {
            what: "a concurrency's result",
            setup: |_| {
                run(
                    &[
                        "validate-agentic-results",
                        "--result-filename",
                        "r",
                        "--conc-list",
                        "4",
                    ],
                    "r_conc4.json",
                )
            },
        }],
    ),
    (
        "compare-results",
        &[],
        &[
            Input {
                what: "--new",
                setup: |d| {
                    write(d, "base.json", &agg_rows());
                    run(
                        &["--new", "new.json", "--baseline", "base.json"],
                        "new.json",
                    )
                },
            },
            Input {
                what: "--baseline",
                setup: |d| {
                    write(d, "new.json", &agg_rows());
                    run(
                        &["--new", "new.json", "--baseline", "base.json"],
                        "base.json",
                    )
                },
            },
            Input {
                what: "a file of a --new directory",
                setup: |d| {
                    write(d, "base.json", &agg_rows());
                    write(d, "new/a.json", &agg_rows());
                    run(&["--new", "new", "--baseline", "base.json"], "new/b.json")
                },
            },
            Input {
                what: "--new-evals",
                setup: |d| {
                    write(d, "new.json", &agg_rows());
                    write(d, "base.json", &agg_rows());
                    run(
                        &[
                            "--new",
                            "new.json",
                            "--baseline",
                            "base.json",
                            "--new-evals",
                            "evals.json",
                        ],
                        "evals.json",
                    )
                },
            },
            Input {
                what: "--baseline-evals",
                setup: |d| {
                    write(d, "new.json", &agg_rows());
                    write(d, "base.json", &agg_rows());
                    write(d, "evals.json", "[]");
                    run(
                        &[
                            "--new",
                            "new.json",
                            "--baseline",
                            "base.json",
                            "--new-evals",
                            "evals.json",
                            "--baseline-evals",
                            "base-evals.json",
                        ],
                        "base-evals.json",
                    )
                },
            },
            Input {
                what: "--thresholds",
                setup: |d| {
                    write(d, "new.json", &agg_rows());
                    write(d, "base.json", &agg_rows());
                    write(d, "evals.json", "[]");
                    run(
                        &[
                            "--new",
                            "new.json",
                            "--baseline",
                            "base.json",
                            "--new-evals",
                            "evals.json",
                            "--thresholds",
                            "t.yaml",
                        ],
                        "t.yaml",
                    )
                },
            },
            Input {
                what: "--policy",
                setup: |d| {
                    write(d, "new.json", &agg_rows());
                    write(d, "base.json", &agg_rows());
                    run(
                        &[
                            "--new",
                            "new.json",
                            "--baseline",
                            "base.json",
                            "--policy",
                            "p.yaml",
                        ],
                        "p.yaml",
                    )
                },
            },
        ],
    ),
    (
        "success-rate",
        &[],
        &[Input {
            what: "--runner-config",
            setup: |_| {
                run(
                    &[
                        "--runner-config",
                        "runners.yaml",
                        "--repo",
                        "o/r",
                        "--run-id",
                        "1",
                        "run_stats",
                    ],
                    "runners.yaml",
                )
            },
        }],
    ),
    (
        "visualizer-comment",
        &[],
        &[
            Input {
                what: "--compare-json",
                setup: |_| comment(&["--compare-json", "c.json"], "c.json"),
            },
            Input {
                what: "--section",
                setup: |_| comment(&["--section", "s.md"], "s.md"),
            },
            Input {
                what: "--run-stats",
                setup: |_| comment(&["--run-stats", "rs.json"], "rs.json"),
            },
            Input {
                what: "--run-stats-by-runner",
                setup: |_| comment(&["--run-stats-by-runner", "rr.json"], "rr.json"),
            },
            Input {
                what: "--charts",
                setup: |_| comment(&["--charts", "charts.json"], "charts.json"),
            },
        ],
    ),
    (
        "visualizer-comment",
        &["check-run"],
        &[Input {
            what: "--report",
            setup: |_| {
                run(
                    &[
                        "check-run",
                        "--report",
                        "c.json",
                        "--repo",
                        "o/r",
                        "--sha",
                        "0123456789abcdef0123456789abcdef01234567",
                    ],
                    "c.json",
                )
            },
        }],
    ),
    ("reuse-sweep", &["find"], &[]),
    (
        "reuse-sweep",
        &["validate-artifacts"],
        &[Input {
            what: "a file of results_bmk",
            setup: |d| {
                std::fs::create_dir_all(d.join("art/results_bmk")).expect("mkdir");
                run(
                    &["validate-artifacts", "--artifacts-dir", "art"],
                    "art/results_bmk/agg_bmk.json",
                )
            },
        }],
    ),
    (
        "reuse-sweep",
        &["stage-results"],
        &[Input {
            what: "--event-path",
            setup: |_| {
                run(
                    &[
                        "stage-results",
                        "--repo",
                        "o/r",
                        "--event-path",
                        "event.json",
                    ],
                    "event.json",
                )
            },
        }],
    ),
    (
        "reuse-sweep",
        &["stage-dispatch"],
        &[Input {
            what: "a file of results_bmk",
            setup: |d| {
                std::fs::create_dir_all(d.join("art/results_bmk")).expect("mkdir");
                // The run is checked first: one of this repository.
                let server = test_kit::fake_github();
                server.add_route(test_kit::Route::json(
                    "GET",
                    "/repos/o/r/actions/runs/1",
                    json!({"id": 1, "head_repository": {"full_name": "o/r"},
                           "repository": {"full_name": "o/r"}}),
                ));
                let mut r = run(
                    &[
                        "stage-dispatch",
                        "--repo",
                        "o/r",
                        "--pr-number",
                        "1",
                        "--run-id",
                        "1",
                        "--run-attempt",
                        "1",
                        "--run-date",
                        "2026-12-01",
                        "--run-url",
                        "https://github.com/o/r/actions/runs/1",
                        "--requested-by",
                        "u",
                        "--artifacts-dir",
                        "art",
                    ],
                    "art/results_bmk/agg_bmk.json",
                );
                r.server = Some(server);
                r
            },
        }],
    ),
    (
        "reuse-sweep",
        &["stage-callback"],
        &[Input {
            what: "--event-path",
            setup: |_| {
                run(
                    &[
                        "stage-callback",
                        "--repo",
                        "o/r",
                        "--event-path",
                        "event.json",
                    ],
                    "event.json",
                )
            },
        }],
    ),
    (
        "sweep-ops",
        &["authorize-fork"],
        &[Input {
            what: "--event-path",
            setup: |_| {
                run(
                    &[
                        "authorize-fork",
                        "--repo",
                        "o/r",
                        "--event-path",
                        "event.json",
                        "--actor",
                        "u",
                    ],
                    "event.json",
                )
            },
        }],
    ),
    (
        "sweep-ops",
        &["check-fork-runners"],
        &[
            Input {
                what: "--matrix",
                setup: |d| {
                    write(d, "runners.yaml", RUNNERS);
                    run(
                        &[
                            "check-fork-runners",
                            "--matrix",
                            "m.json",
                            "--runner-config",
                            "runners.yaml",
                        ],
                        "m.json",
                    )
                },
            },
            Input {
                what: "--runner-config",
                setup: |d| {
                    write(d, "m.json", "{}");
                    run(
                        &[
                            "check-fork-runners",
                            "--matrix",
                            "m.json",
                            "--runner-config",
                            "runners.yaml",
                        ],
                        "runners.yaml",
                    )
                },
            },
        ],
    ),
    ("sweep-ops", &["dispatch-ingest"], &[]),
    ("sweep-ops", &["merge"], &[]),
    ("sweep-ops", &["recover-ingest"], &[]),
    ("sweep-ops", &["runner-digest"], &[]),
    (
        "sweep-ops",
        &["pr-reminder"],
        &[Input {
            what: "--template",
            setup: |_| {
                run(
                    &[
                        "pr-reminder",
                        "--repo",
                        "o/r",
                        "--pr-number",
                        "1",
                        "--template",
                        "reminder.md",
                    ],
                    "reminder.md",
                )
            },
        }],
    ),
    (
        "sweepkit",
        &["workflow", "check"],
        &[Input {
            what: "a vendored workflow file",
            setup: |d| {
                let out = test_kit::tool_command("sweepkit")
                    .args(["workflow", "write", "--dir", "wf", "--allow-unreleased"])
                    .current_dir(d)
                    .output()
                    .expect("run sweepkit");
                assert!(out.status.success(), "{}", test_kit::stderr(&out));
                std::fs::remove_file(d.join("wf/sweepkit-run-sweep.yml")).expect("rm");
                run(
                    &["workflow", "check", "--dir", "wf"],
                    "wf/sweepkit-run-sweep.yml",
                )
            },
        }],
    ),
    // Writes the workflows; reads no input file.
    ("sweepkit", &["workflow", "write"], &[]),
    (
        "sweep-history",
        &["append"],
        &[Input {
            what: "--agg",
            setup: |_| {
                run(
                    &[
                        "append",
                        "--store",
                        "h",
                        "--agg",
                        "agg.json",
                        "--run-id",
                        "1",
                        "--commit",
                        "abc",
                        "--date",
                        "2026-12-01T00:00:00Z",
                        "--repo",
                        "o/r",
                    ],
                    "agg.json",
                )
            },
        }],
    ),
    // The history's index; the series files are read the same way.
    (
        "sweep-history",
        &["verify"],
        &[Input {
            what: "the store's runs.jsonl",
            setup: |d| {
                std::fs::create_dir_all(d.join("h")).expect("mkdir");
                run(&["verify", "--store", "h"], "h/runs.jsonl")
            },
        }],
    ),
    (
        "sweep-history",
        &["changes"],
        &[Input {
            what: "a series file",
            setup: |d| {
                std::fs::create_dir_all(d.join("h/series/b200")).expect("mkdir");
                run(
                    &["changes", "--store", "h"],
                    "h/series/b200/dsr1-fp8-sglang.jsonl",
                )
            },
        }],
    ),
    (
        "sweep-history",
        &["show"],
        &[Input {
            what: "the store's runs.jsonl",
            setup: |d| {
                write(d, "h/series/b200/dsr1-fp8-sglang.jsonl", "");
                run(
                    &["show", "--store", "h", "--config", "b200/dsr1-fp8-sglang"],
                    "h/runs.jsonl",
                )
            },
        }],
    ),
    // Reads past runs through the GitHub API, no input file.
    ("sweep-history", &["backfill"], &[]),
    // Fetches the data branch with git; the tool reads no file itself.
    ("sweep-history", &["checkout"], &[]),
];

fn policy_text() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/conformance/fixtures/inferencex-head/configs/ci-priority.yaml");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// visualizer-comment's comment command, printed instead of posted.
fn comment(extra: &[&str], bad: &'static str) -> Run {
    let mut a = vec![
        "--repo",
        "o/r",
        "--pr-number",
        "1",
        "--run-id",
        "1",
        "--dry-run",
    ];
    a.extend(extra);
    run(&a, bad)
}

/// Runs `tool` with `r` in `dir`, killing it when it passes [`DEADLINE`]
/// (`None`: it hung). Output goes to files, so a chatty tool never blocks
/// on a full pipe.
fn run_bounded(tool: &str, r: &Run, dir: &Path) -> Option<Output> {
    let out_path = dir.join(".stdout");
    let err_path = dir.join(".stderr");
    let mut child = test_kit::tool_command(tool)
        .args(&r.args)
        .envs(r.env.iter().map(|(k, v)| (*k, v.as_str())))
        .env(
            "GITHUB_API_URL",
            r.server.as_ref().map_or_else(
                || test_kit::closed_url().expect("port"),
                test_kit::FakeGitHub::base_url,
            ),
        )
        .env("GITHUB_TOKEN", test_kit::TEST_TOKEN)
        .env("SWEEPKIT_GITHUB_MAX_ATTEMPTS", "1")
        .env("STAGE_TOKEN", "x")
        .env("INGEST_TOKEN", "x")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Some(Output {
        status,
        stdout: std::fs::read(&out_path).expect("stdout"),
        stderr: std::fs::read(&err_path).expect("stderr"),
    })
}

/// Feeds `input` of `tool sub` a FIFO, then a file over every limit, and
/// returns what went wrong (empty: both refused as they should be).
fn check(tool: &str, sub: &[&str], input: &Input) -> Vec<String> {
    let mut problems = Vec::new();
    for bad_kind in ["FIFO", "oversize file"] {
        let tmp = test_kit::temp_dir();
        let d = tmp.path();
        let r = (input.setup)(d);
        let bad: PathBuf = d.join(r.bad);
        std::fs::create_dir_all(bad.parent().expect("parent")).expect("mkdir");
        let _ = std::fs::remove_file(&bad);
        if bad_kind == "FIFO" {
            mkfifo(&bad);
        } else {
            std::fs::File::create(&bad)
                .and_then(|f| f.set_len(OVERSIZE))
                .expect("sparse file");
        }
        let name = format!("{tool} {} ({}, a {bad_kind})", sub.join(" "), input.what);
        let Some(out) = run_bounded(tool, &r, d) else {
            problems.push(format!("{name}: hung (killed after {DEADLINE:?})"));
            continue;
        };
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cause = if bad_kind == "FIFO" {
            text.contains("FIFO")
        } else {
            text.contains(&OVERSIZE.to_string()) || text.contains("larger than")
        };
        if out.status.success() || out.status.code().is_none() {
            problems.push(format!("{name}: exit {:?}\n{text}", out.status.code()));
        } else if !text.contains(r.bad) || !cause {
            problems.push(format!(
                "{name}: the message does not name {} and the cause\n{text}",
                r.bad
            ));
        }
    }
    problems
}

#[test]
fn every_input_file_of_every_tool_refuses_a_fifo_and_an_oversize_file() {
    let mut problems = Vec::new();
    for (tool, sub, inputs) in COMMANDS {
        for input in *inputs {
            problems.extend(check(tool, sub, input));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Standard input, where a tool reads it (`priority` without `--input`),
/// has the same bound: an endless stream is refused at the limit.
#[test]
fn priority_refuses_standard_input_over_the_matrix_limit() {
    use std::io::Write as _;
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    write(d, "policy.yaml", &policy_text());
    let mut child = test_kit::tool_command(GM)
        .args(["priority", "--policy", "policy.yaml"])
        .current_dir(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run generate-matrix");
    let mut stdin = child.stdin.take().expect("stdin");
    let limit = sweep_model::fsio::MAX_MATRIX_JSON_BYTES;
    let writer = std::thread::spawn(move || {
        let chunk = vec![b' '; 1 << 16];
        let mut sent = 0u64;
        // Stops when the tool closes the pipe (it read the limit and left).
        while sent <= 2 * limit && stdin.write_all(&chunk).is_ok() {
            sent += chunk.len() as u64;
        }
        sent
    });
    let out = child.wait_with_output().expect("wait");
    let sent = writer.join().expect("writer");
    let err = test_kit::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("standard input") && err.contains(&limit.to_string()),
        "{err}"
    );
    assert!(sent <= 2 * limit, "the tool read on after the limit");
}

/// The `Commands:` of `tool words… --help`, each with its own
/// subcommands, as command paths; the tool itself is one when it runs
/// without a subcommand.
fn commands_of(tool: &str, words: &[String], out: &mut Vec<Vec<String>>) {
    let help = test_kit::tool_command(tool)
        .args(words)
        .arg("--help")
        .output()
        .expect("help");
    let text = test_kit::stdout(&help);
    let mut subs = Vec::new();
    let mut in_commands = false;
    for line in text.lines() {
        if line.starts_with("Commands:") {
            in_commands = true;
            continue;
        }
        if in_commands {
            match line
                .strip_prefix("  ")
                .and_then(|l| l.split_whitespace().next())
            {
                Some(name) if !line.starts_with("   ") => {
                    if name != "help" {
                        subs.push(name.to_string());
                    }
                }
                Some(_) => {}
                None => in_commands = false,
            }
        }
    }
    // Runs by itself when one of its usage lines (`Usage: tool …` and the
    // `       tool …` lines under it) has no `<COMMAND>`.
    let runs_alone = text
        .lines()
        .skip_while(|l| !l.starts_with("Usage:"))
        .take_while(|l| l.starts_with("Usage:") || l.starts_with(&format!("       {tool}")))
        .any(|l| !l.contains("<COMMAND>"));
    if subs.is_empty() || runs_alone {
        out.push(words.to_vec());
    }
    for s in subs {
        let mut w = words.to_vec();
        w.push(s);
        commands_of(tool, &w, out);
    }
}

#[test]
fn the_list_names_every_command_of_every_tool() {
    let mut found: Vec<String> = Vec::new();
    for tool in TOOLS {
        let mut paths = Vec::new();
        commands_of(tool, &[], &mut paths);
        found.extend(paths.iter().map(|p| format!("{tool} {}", p.join(" "))));
    }
    let mut listed: Vec<String> = COMMANDS
        .iter()
        .map(|(t, s, _)| format!("{t} {}", s.join(" ")))
        .collect();
    found.sort();
    listed.sort();
    assert_eq!(
        listed, found,
        "COMMANDS must name every command of every tool, as their --help lists them"
    );
}

/// "No symlink out of the root": `validate-artifacts` refuses a category
/// folder (`results_bmk`) that is a symlink to a folder outside the
/// artifact directory, naming the link, instead of reading what it points
/// at; a link that stays inside is read as before.
#[test]
fn validate_artifacts_refuses_a_category_folder_linked_out_of_the_root() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    write(d, "elsewhere/agg_bmk.json", &agg_rows());
    std::fs::create_dir_all(d.join("art")).expect("mkdir");
    std::os::unix::fs::symlink(d.join("elsewhere"), d.join("art/results_bmk")).expect("symlink");
    let out = test_kit::tool_command("reuse-sweep")
        .args(["validate-artifacts", "--artifacts-dir", "art"])
        .current_dir(d)
        .output()
        .expect("run reuse-sweep");
    let err = test_kit::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("art/results_bmk") && err.contains("outside the directory"),
        "{err}"
    );
    // Inside the root: followed.
    std::fs::remove_file(d.join("art/results_bmk")).expect("rm");
    write(d, "art/inside/agg_bmk.json", &agg_rows());
    std::os::unix::fs::symlink(d.join("art/inside"), d.join("art/results_bmk")).expect("symlink");
    let out = test_kit::tool_command("reuse-sweep")
        .args(["validate-artifacts", "--artifacts-dir", "art"])
        .current_dir(d)
        .output()
        .expect("run reuse-sweep");
    let err = test_kit::stderr(&out);
    assert!(!err.contains("outside the directory"), "{err}");
}
