//! `sweep-ops` end to end against the loopback fake GitHub: the happy path
//! and the refusals of each subcommand (read-only actor, moved head, a run
//! that is not `success`, artifacts that do not qualify, a failed check).

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use test_kit::{FakeGitHub, Route, stderr};

const R: &str = "/repos/acme/bench";
const HEAD: &str = "feedface00000000000000000000000000000001";
const MOVED: &str = "feedface00000000000000000000000000000002";
const MERGE: &str = "0123456789abcdef0123456789abcdef01234567";
const BASE: &str = "baseba5e00000000000000000000000000000000";

/// Runs `sweep-ops args…` in `dir` against `s` with a scrubbed environment.
fn run(s: &FakeGitHub, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    test_kit::command(env!("CARGO_BIN_EXE_sweep-ops"))
        .args(args)
        .current_dir(dir)
        .env("GITHUB_API_URL", s.base_url())
        .env("GH_TOKEN", test_kit::TEST_TOKEN)
        .env("SWEEPKIT_GITHUB_MAX_ATTEMPTS", "1")
        .envs(env.iter().copied())
        .output()
        .expect("run sweep-ops")
}

fn roles(s: &FakeGitHub) {
    for (login, role) in [
        ("owner", "admin"),
        ("maintainer", "maintain"),
        ("writer", "write"),
        ("triager", "triage"),
        ("reader", "read"),
    ] {
        s.with_collaborator("acme/bench", login, role);
    }
}

fn bodies(s: &FakeGitHub, method: &str, path: &str) -> Vec<Value> {
    s.requests()
        .into_iter()
        .filter(|r| r.method == method && r.path == path)
        .filter_map(|r| r.body)
        .collect()
}

mod authorize_fork {
    use super::*;

    const DISPATCH: &str = "/repos/acme/bench/actions/workflows/e2e-tests.yml/dispatches";
    const RUNS: &str = "/repos/acme/bench/actions/workflows/e2e-tests.yml/runs";

    fn event(label: &str, head: &str, head_repo: &str) -> Value {
        json!({
            "action": "labeled",
            "label": {"name": label},
            "pull_request": {"number": 42, "head": {"sha": head, "repo": {"full_name": head_repo}}},
            "repository": {"full_name": "acme/bench", "default_branch": "main"},
        })
    }

    fn pull(labels: &[&str], head: &str) -> Value {
        let labels: Vec<Value> = labels.iter().map(|l| json!({"name": l})).collect();
        json!({
            "number": 42, "state": "open", "draft": false, "labels": labels,
            "head": {"sha": head, "ref": "patch-1", "repo": {"full_name": "fork/bench"}},
            "base": {"sha": BASE, "ref": "main"},
            "merge_commit_sha": MERGE,
        })
    }

    fn server(pull_body: Value) -> FakeGitHub {
        let s = test_kit::fake_github();
        roles(&s);
        s.add_route(Route::json("GET", &format!("{R}/pulls/42"), pull_body));
        s.add_route(Route::empty("POST", DISPATCH, 204));
        s.with_comments("acme/bench", 42, vec![]);
        let old = json!({"id": 10, "display_title": "e2e Test - External PR #42 @ feedface0000",
                         "html_url": "https://github.com/acme/bench/actions/runs/10"});
        let new = json!({"id": 11, "display_title": "e2e Test - External PR #42 @ feedface0000",
                         "html_url": "https://github.com/acme/bench/actions/runs/11"});
        // Before the dispatch: an older run of the same revision; then the new one.
        s.add_sequence(
            "GET",
            RUNS,
            vec![
                json!({"workflow_runs": [old.clone()]}),
                json!({"workflow_runs": [old.clone()]}),
                json!({"workflow_runs": [new, old]}),
            ],
        );
        s
    }

    fn authorize(s: &FakeGitHub, dir: &Path, ev: &Value, actor: &str) -> Output {
        authorize_within(s, dir, ev, actor, "60")
    }

    /// With `--lookup-timeout lookup` (seconds; polls are back to back).
    fn authorize_within(
        s: &FakeGitHub,
        dir: &Path,
        ev: &Value,
        actor: &str,
        lookup: &str,
    ) -> Output {
        let path = dir.join("event.json");
        std::fs::write(&path, ev.to_string()).expect("event");
        let path = path.to_string_lossy().into_owned();
        run(
            s,
            dir,
            &[
                "authorize-fork",
                "--poll-interval",
                "0",
                "--lookup-timeout",
                lookup,
            ],
            &[
                ("GITHUB_REPOSITORY", "acme/bench"),
                ("GITHUB_EVENT_PATH", &path),
                ("GITHUB_ACTOR", actor),
                ("INPUT_FORK_RUNNER_LABEL", "fork-sweeps"),
            ],
        )
    }

    /// Issue #34 item 5: without the dedicated runner label nothing is
    /// dispatched (exit 1, before any API call) and the error names the
    /// variable to set; `self-hosted` is no dedicated label.
    #[test]
    fn no_fork_runner_label_refuses_before_any_request_and_names_the_variable() {
        let s = server(pull(&["sweep-enabled"], HEAD));
        let d = test_kit::temp_dir();
        let path = d.path().join("event.json");
        std::fs::write(
            &path,
            event("sweep-enabled", HEAD, "fork/bench").to_string(),
        )
        .expect("event");
        let path = path.to_string_lossy().into_owned();
        for label in [None, Some(""), Some("self-hosted")] {
            let mut env = vec![
                ("GITHUB_REPOSITORY", "acme/bench"),
                ("GITHUB_EVENT_PATH", path.as_str()),
                ("GITHUB_ACTOR", "writer"),
                ("GITHUB_ACTIONS", "true"),
            ];
            if let Some(l) = label {
                env.push(("INPUT_FORK_RUNNER_LABEL", l));
            }
            let out = run(&s, d.path(), &["authorize-fork"], &env);
            test_kit::assert_exit(&out, 1);
            let err = stderr(&out);
            assert!(err.contains("FORK_SWEEP_RUNNER_LABEL"), "{label:?}: {err}");
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(stdout.starts_with("::error::"), "{stdout}");
            if label != Some("self-hosted") {
                assert!(
                    err.contains("set the repository variable FORK_SWEEP_RUNNER_LABEL"),
                    "{err}"
                );
            }
        }
        assert!(s.requests().is_empty(), "{:#?}", s.requests());
    }

    #[test]
    fn a_writer_label_dispatches_the_exact_head_and_links_the_new_run() {
        let s = server(pull(&["full-sweep-fail-fast", "all-evals"], HEAD));
        let d = test_kit::temp_dir();
        let out = authorize(
            &s,
            d.path(),
            &event("full-sweep-fail-fast", HEAD, "fork/bench"),
            "writer",
        );
        test_kit::assert_exit(&out, 0);
        let sent = bodies(&s, "POST", DISPATCH);
        assert_eq!(sent.len(), 1);
        assert_eq!(
            sent[0],
            json!({"ref": "main", "inputs": {
                "test-name": "External PR #42 @ feedface0000",
                "ref": MERGE,
                "changelog-base-ref": BASE,
                "changelog-head-ref": HEAD,
                "trim-conc": "false",
                "all-evals": "true",
                "evals-only": "false",
                "fail-fast": "true",
                "agentx-fast": "false",
                "pr-labels-json": "[\"full-sweep-fail-fast\",\"all-evals\"]",
            }})
        );
        let comments = s.comments("acme/bench", 42);
        assert_eq!(comments.len(), 1);
        let body = comments[0]["body"].as_str().unwrap_or_default();
        assert!(
            body.contains("(https://github.com/acme/bench/actions/runs/11)"),
            "{body}"
        );
        assert!(body.contains(HEAD), "{body}");
    }

    #[test]
    fn maintain_and_admin_also_authorise() {
        for actor in ["maintainer", "owner"] {
            let s = server(pull(&["sweep-enabled"], HEAD));
            let d = test_kit::temp_dir();
            let out = authorize(
                &s,
                d.path(),
                &event("sweep-enabled", HEAD, "fork/bench"),
                actor,
            );
            test_kit::assert_exit(&out, 0);
            let sent = bodies(&s, "POST", DISPATCH);
            assert_eq!(sent[0]["inputs"]["trim-conc"], "true", "{actor}");
        }
    }

    #[test]
    fn a_read_only_or_unknown_labeler_is_refused_without_dispatch() {
        for actor in ["triager", "reader", "stranger"] {
            let s = server(pull(&["sweep-enabled"], HEAD));
            let d = test_kit::temp_dir();
            let out = authorize(
                &s,
                d.path(),
                &event("sweep-enabled", HEAD, "fork/bench"),
                actor,
            );
            test_kit::assert_exit(&out, 1);
            assert!(
                stderr(&out).contains("write, maintain or admin permission is required"),
                "{}",
                stderr(&out)
            );
            assert_eq!(s.count("POST", DISPATCH), 0, "{actor}");
            assert_eq!(s.count("GET", &format!("{R}/pulls/42")), 0, "{actor}");
        }
    }

    #[test]
    fn a_head_that_moved_after_the_label_is_refused() {
        let s = server(pull(&["sweep-enabled"], MOVED));
        let d = test_kit::temp_dir();
        let out = authorize(
            &s,
            d.path(),
            &event("sweep-enabled", HEAD, "fork/bench"),
            "writer",
        );
        test_kit::assert_exit(&out, 1);
        let err = stderr(&out);
        assert!(
            err.contains(&format!("advanced from {HEAD} to {MOVED}")),
            "{err}"
        );
        assert_eq!(s.count("POST", DISPATCH), 0);
        assert!(s.comments("acme/bench", 42).is_empty());
    }

    #[test]
    fn other_refusals_dispatch_nothing() {
        let cases: Vec<(Value, Value, &str)> = vec![
            // two primary sweep labels
            (
                pull(&["sweep-enabled", "full-sweep-enabled"], HEAD),
                event("sweep-enabled", HEAD, "fork/bench"),
                "exactly the newly applied",
            ),
            // a label that is not a sweep label
            (
                pull(&["sweep-enabled"], HEAD),
                event("all-evals", HEAD, "fork/bench"),
                "not a primary sweep label",
            ),
            // same-repository PR
            (
                pull(&["sweep-enabled"], HEAD),
                event("sweep-enabled", HEAD, "acme/bench"),
                "only for fork",
            ),
            // draft
            (
                {
                    let mut p = pull(&["sweep-enabled"], HEAD);
                    p["draft"] = json!(true);
                    p
                },
                event("sweep-enabled", HEAD, "fork/bench"),
                "open and ready",
            ),
            // no test merge commit (conflicts)
            (
                {
                    let mut p = pull(&["sweep-enabled"], HEAD);
                    p["merge_commit_sha"] = Value::Null;
                    p
                },
                event("sweep-enabled", HEAD, "fork/bench"),
                "merge commit",
            ),
        ];
        for (p, ev, want) in cases {
            let s = server(p);
            let d = test_kit::temp_dir();
            let out = authorize(&s, d.path(), &ev, "writer");
            test_kit::assert_exit(&out, 1);
            assert!(stderr(&out).contains(want), "{want}: {}", stderr(&out));
            assert_eq!(s.count("POST", DISPATCH), 0, "{want}");
        }
    }

    #[test]
    fn a_run_not_found_in_time_links_the_workflow_page() {
        let s = server(pull(&["sweep-enabled"], HEAD));
        s.add_sequence("GET", RUNS, vec![json!({"workflow_runs": []})]);
        let d = test_kit::temp_dir();
        let ev = event("sweep-enabled", HEAD, "fork/bench");
        let out = authorize_within(&s, d.path(), &ev, "writer", "0");
        test_kit::assert_exit(&out, 0);
        let body = s.comments("acme/bench", 42)[0]["body"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            body.contains("[e2e-tests.yml runs](https://github.com/acme/bench/actions/workflows/e2e-tests.yml)"),
            "{body}"
        );
        assert_eq!(s.count("POST", DISPATCH), 1);
    }

    #[test]
    fn a_failed_comment_after_the_dispatch_only_warns() {
        // No comment store: the comment POST gets the read-only 403.
        let s = test_kit::fake_github();
        roles(&s);
        s.add_route(Route::json(
            "GET",
            &format!("{R}/pulls/42"),
            pull(&["sweep-enabled"], HEAD),
        ));
        s.add_route(Route::empty("POST", DISPATCH, 204));
        s.add_route(Route::json("GET", RUNS, json!({"workflow_runs": []})));
        s.add_route(
            Route::json(
                "POST",
                "/repos/acme/bench/issues/42/comments",
                json!({"message": "Resource not accessible by integration"}),
            )
            .with_status(403),
        );
        let d = test_kit::temp_dir();
        let ev = event("sweep-enabled", HEAD, "fork/bench");
        let out = authorize_within(&s, d.path(), &ev, "writer", "0");
        test_kit::assert_exit(&out, 0);
        assert!(
            stderr(&out).contains("the sweep was dispatched, but the PR comment failed"),
            "{}",
            stderr(&out)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"commented\":false"));
        assert_eq!(s.count("POST", DISPATCH), 1);
    }

    #[test]
    fn an_unreadable_event_or_no_token_cannot_work() {
        let s = server(pull(&["sweep-enabled"], HEAD));
        let d = test_kit::temp_dir();
        let out = run(
            &s,
            d.path(),
            &["authorize-fork", "--event-path", "missing.json"],
            &[
                ("GITHUB_REPOSITORY", "acme/bench"),
                ("GITHUB_ACTOR", "writer"),
            ],
        );
        test_kit::assert_exit(&out, 2);
        assert!(stderr(&out).contains("missing.json"), "{}", stderr(&out));
        assert!(s.requests().is_empty());
    }
}

mod check_fork_runners {
    use super::*;

    const RUNNERS: &str = "labels:\n  h100: [h100_0]\n  cluster:b200: [b200_0]\n";
    const CONFIG: &str = "fine-fp8-h100-sglang:\n  runner: h100\nfork-fp8-h100-sglang:\n  image: x\n  runner: self-hosted\n";

    fn check(matrix: &Value) -> Output {
        let d = test_kit::temp_dir();
        std::fs::create_dir(d.path().join("configs")).expect("configs");
        std::fs::write(d.path().join("configs/nvidia-master.yaml"), CONFIG).expect("config");
        std::fs::write(d.path().join("base-runners.yaml"), RUNNERS).expect("runners");
        std::fs::write(d.path().join("matrix.json"), matrix.to_string()).expect("matrix");
        let s = test_kit::fake_github();
        let out = run(
            &s,
            d.path(),
            &[
                "check-fork-runners",
                "--matrix",
                "matrix.json",
                "--runner-config",
                "base-runners.yaml",
            ],
            &[],
        );
        assert!(s.requests().is_empty());
        out
    }

    #[test]
    fn rows_on_the_bases_labels_pass() {
        let out = check(
            &json!({"single_node": {"1k1k": [{"runner": "h100", "exp-name": "a"}]},
            "multi_node": {"8k1k": [{"runner": "cluster:b200", "exp-name": "b"}]}}),
        );
        test_kit::assert_exit(&out, 0);
        assert!(
            stderr(&out).contains("2 rows on 2 label(s)"),
            "{}",
            stderr(&out)
        );
    }

    #[test]
    fn a_fork_runner_outside_the_bases_file_is_refused_naming_config_value_and_labels() {
        let out = check(&json!({"single_node": {"1k1k": [
            {"runner": "h100", "exp-name": "a"}, {"runner": "self-hosted", "exp-name": "fork_1024"}]}}));
        test_kit::assert_exit(&out, 1);
        let err = stderr(&out);
        assert!(
            err.contains("configs/nvidia-master.yaml:5: config 'fork-fp8-h100-sglang': runner \"self-hosted\" is not a label of the base's base-runners.yaml"),
            "{err}"
        );
        assert!(err.contains("known labels: h100, cluster:b200"), "{err}");
    }

    #[test]
    fn an_unreadable_matrix_or_runner_file_cannot_work() {
        let d = test_kit::temp_dir();
        let s = test_kit::fake_github();
        let out = run(
            &s,
            d.path(),
            &[
                "check-fork-runners",
                "--matrix",
                "none.json",
                "--runner-config",
                "none.yaml",
            ],
            &[],
        );
        test_kit::assert_exit(&out, 2);
        assert!(stderr(&out).contains("none.json"), "{}", stderr(&out));
    }
}

mod merge {
    use super::*;

    const CHECKS: &str =
        "/repos/acme/bench/commits/feedface00000000000000000000000000000001/check-runs";
    const RUNS: &str = "/repos/acme/bench/actions/workflows/run-sweep.yml/runs";
    const PUT: &str = "/repos/acme/bench/pulls/7/merge";

    fn pull(labels: &[&str], head: &str) -> Value {
        let labels: Vec<Value> = labels.iter().map(|l| json!({"name": l})).collect();
        json!({"number": 7, "state": "open", "labels": labels,
               "head": {"sha": head, "ref": "feat/x", "repo": {"full_name": "acme/bench"}}})
    }

    fn check(status: &str, conclusion: Option<&str>) -> Value {
        json!({"check_runs": [
            {"name": "other", "status": "completed", "conclusion": "failure", "started_at": "2026-08-22T10:00:00Z"},
            {"name": "sweep / check-changelog", "status": status, "conclusion": conclusion,
             "started_at": "2026-08-22T10:01:00Z", "details_url": "https://github.com/acme/bench/runs/1"},
        ]})
    }

    fn server(pull_body: Value, run_conclusion: &str) -> FakeGitHub {
        let s = test_kit::fake_github();
        s.add_route(Route::json("GET", &format!("{R}/pulls/7"), pull_body));
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/pulls/7/commits"),
            json!([{"sha": HEAD}]),
            "array",
        ));
        s.add_route(Route::paginated(
            "GET",
            RUNS,
            json!({"workflow_runs": [{"id": 555, "head_sha": HEAD, "status": "completed", "conclusion": run_conclusion}]}),
            "object:workflow_runs",
        ));
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/actions/runs/555/artifacts"),
            json!({"artifacts": [{"name": "results_bmk", "expired": false}]}),
            "object:artifacts",
        ));
        // Phase 1 ran: the authorisation is on the PR.
        s.with_comments(
            "acme/bench",
            7,
            vec![json!({"id": 1, "body": "/reuse-sweep-run\n", "user": {"login": "owner"}})],
        );
        s.add_sequence(
            "GET",
            CHECKS,
            vec![
                check("queued", None),
                check("in_progress", None),
                check("completed", Some("success")),
            ],
        );
        s.add_route(Route::json(
            "PUT",
            PUT,
            json!({"sha": MERGE, "merged": true, "message": "Pull Request successfully merged"}),
        ));
        s
    }

    fn merge(s: &FakeGitHub, extra: &[&str]) -> Output {
        let d = test_kit::temp_dir();
        let mut args = vec![
            "merge",
            "--repo",
            "acme/bench",
            "--pr",
            "7",
            "--head-sha",
            HEAD,
            "--poll-interval",
            "0",
        ];
        if !extra.contains(&"--timeout") {
            args.extend_from_slice(&["--timeout", "60"]);
        }
        args.extend_from_slice(extra);
        run(s, d.path(), &args, &[])
    }

    fn push_run(status: &str, conclusion: Option<&str>) -> Value {
        json!({"workflow_runs": [
            {"id": 899, "head_sha": MERGE, "path": ".github/workflows/other.yml", "status": "completed",
             "conclusion": "success", "html_url": "https://github.com/acme/bench/actions/runs/899"},
            {"id": 900, "head_sha": MERGE, "path": ".github/workflows/run-sweep.yml", "status": status,
             "conclusion": conclusion, "html_url": "https://github.com/acme/bench/actions/runs/900"},
        ]})
    }

    const ALL_RUNS: &str = "/repos/acme/bench/actions/runs";

    #[test]
    fn waits_for_the_gate_merges_the_head_and_waits_for_the_push_run() {
        let s = server(pull(&["full-sweep-enabled"], HEAD), "success");
        s.add_sequence(
            "GET",
            ALL_RUNS,
            vec![
                json!({"workflow_runs": []}),
                push_run("in_progress", None),
                push_run("completed", Some("success")),
            ],
        );
        let out = merge(&s, &["--reuse-timeout", "60"]);
        test_kit::assert_exit(&out, 0);
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), MERGE);
        assert!(
            stderr(&out).contains("actions/runs/900"),
            "{}",
            stderr(&out)
        );
        assert_eq!(
            s.count("GET", CHECKS),
            3,
            "polled until the check completed"
        );
        assert_eq!(
            s.count("GET", ALL_RUNS),
            3,
            "polled until the push run completed"
        );
        assert_eq!(
            bodies(&s, "PUT", PUT),
            vec![json!({"sha": HEAD, "merge_method": "squash"})]
        );
        // Issue #34: phase 2 approves again once the prepared head is pushed
        // and checked, so the approval binds to that head; then it merges.
        let comments = s.comments("acme/bench", 7);
        assert_eq!(comments.len(), 2, "phase 2 re-approves once");
        assert_eq!(comments[1]["body"], "/reuse-sweep-run");
        let order: Vec<String> = s
            .requests()
            .iter()
            .filter(|r| r.method != "GET" || r.path == CHECKS)
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        let posted = order
            .iter()
            .position(|r| r.starts_with("POST ") && r.ends_with("/issues/7/comments"))
            .expect("the approval is posted");
        assert!(
            order[..posted].iter().any(|r| r.ends_with("/check-runs")),
            "{order:?}"
        );
        assert!(
            order[posted..].iter().any(|r| r.starts_with("PUT ")),
            "{order:?}"
        );
    }

    #[test]
    fn phase_one_checks_and_authorises_without_merging() {
        let s = server(pull(&["full-sweep-enabled"], HEAD), "success");
        s.with_comments("acme/bench", 7, vec![]);
        let d = test_kit::temp_dir();
        let out = run(
            &s,
            d.path(),
            &["merge", "--repo", "acme/bench", "--pr", "7"],
            &[],
        );
        test_kit::assert_exit(&out, 0);
        assert!(out.stdout.is_empty());
        assert!(
            stderr(&out).contains("check-changelog prepare-merge"),
            "{}",
            stderr(&out)
        );
        let comments = s.comments("acme/bench", 7);
        assert_eq!(comments.len(), 1);
        assert_eq!(comments[0]["body"], "/reuse-sweep-run");
        assert_eq!(s.count("GET", CHECKS), 0);
        assert_eq!(s.count("PUT", PUT), 0);
    }

    #[test]
    fn phase_two_without_the_authorisation_comment_is_refused() {
        let s = server(pull(&["full-sweep-enabled"], HEAD), "success");
        s.with_comments(
            "acme/bench",
            7,
            vec![json!({"id": 2, "body": "please /reuse-sweep-run", "user": {"login": "owner"}})],
        );
        let out = merge(&s, &["--reuse-timeout", "0"]);
        test_kit::assert_exit(&out, 1);
        assert!(stderr(&out).contains("run phase 1"), "{}", stderr(&out));
        assert_eq!(s.count("GET", CHECKS), 0);
        assert_eq!(s.count("PUT", PUT), 0);
    }

    #[test]
    fn a_failed_push_run_after_the_merge_is_reported_as_a_no() {
        let s = server(pull(&["full-sweep-enabled"], HEAD), "success");
        s.add_sequence(
            "GET",
            ALL_RUNS,
            vec![push_run("completed", Some("failure"))],
        );
        let out = merge(&s, &["--reuse-timeout", "60"]);
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("push run is completed/failure"),
            "{}",
            stderr(&out)
        );
        assert_eq!(s.count("PUT", PUT), 1);
    }

    #[test]
    fn refuses_a_head_other_than_the_prepared_one() {
        let s = server(pull(&["full-sweep-enabled"], MOVED), "success");
        let out = merge(&s, &["--reuse-timeout", "0"]);
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("expected feedface"),
            "{}",
            stderr(&out)
        );
        assert_eq!(s.count("PUT", PUT), 0);
        assert_eq!(s.count("GET", CHECKS), 0);
    }

    #[test]
    fn a_non_ascii_head_sha_is_refused_without_a_panic() {
        let s = server(pull(&["full-sweep-enabled"], HEAD), "success");
        let d = test_kit::temp_dir();
        let args = [
            "merge",
            "--repo",
            "acme/bench",
            "--pr",
            "7",
            "--head-sha",
            "ééééééééé",
        ];
        let out = run(&s, d.path(), &args, &[]);
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("expected éééééééé:"),
            "{}",
            stderr(&out)
        );
    }

    #[test]
    fn refuses_without_a_successful_sweep_run() {
        let s = server(pull(&["full-sweep-enabled"], HEAD), "failure");
        let out = merge(&s, &["--reuse-timeout", "0"]);
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("no successful reusable run-sweep.yml run"),
            "{}",
            stderr(&out)
        );
        assert_eq!(s.count("PUT", PUT), 0);
        // Phase 1 refuses the same way and authorises nothing.
        s.with_comments("acme/bench", 7, vec![]);
        let d = test_kit::temp_dir();
        let out = run(
            &s,
            d.path(),
            &["merge", "--repo", "acme/bench", "--pr", "7"],
            &[],
        );
        test_kit::assert_exit(&out, 1);
        assert!(s.comments("acme/bench", 7).is_empty());
    }

    #[test]
    fn refuses_labels_that_cannot_be_reused() {
        for (labels, want) in [
            (vec!["sweep-enabled"], "full-sweep label"),
            (vec!["full-sweep-enabled", "evals-only"], "evals-only"),
            (vec![], "exactly one sweep label"),
        ] {
            let s = server(pull(&labels, HEAD), "success");
            let out = merge(&s, &["--reuse-timeout", "0"]);
            test_kit::assert_exit(&out, 1);
            assert!(stderr(&out).contains(want), "{want}: {}", stderr(&out));
            assert_eq!(s.count("PUT", PUT), 0);
        }
    }

    #[test]
    fn a_failed_gate_check_stops_before_the_merge() {
        let s = server(pull(&["full-sweep-enabled"], HEAD), "success");
        s.add_sequence("GET", CHECKS, vec![check("completed", Some("failure"))]);
        let out = merge(&s, &["--reuse-timeout", "0"]);
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("concluded failure - https://github.com/acme/bench/runs/1"),
            "{}",
            stderr(&out)
        );
        assert_eq!(s.count("PUT", PUT), 0);
    }

    #[test]
    fn a_gate_that_never_finishes_times_out_with_exit_2() {
        let s = server(pull(&["full-sweep-enabled"], HEAD), "success");
        s.add_sequence("GET", CHECKS, vec![check("in_progress", None)]);
        let out = merge(&s, &["--reuse-timeout", "0", "--timeout", "0"]);
        test_kit::assert_exit(&out, 2);
        assert!(stderr(&out).contains("timed out"), "{}", stderr(&out));
        assert_eq!(s.count("PUT", PUT), 0);
    }

    #[test]
    fn github_refusing_the_merge_is_a_no() {
        let s = server(pull(&["full-sweep-enabled"], HEAD), "success");
        s.add_route(
            Route::json(
                "PUT",
                PUT,
                json!({"message": "Head branch was modified. Review and try the merge again."}),
            )
            .with_status(409),
        );
        let out = merge(&s, &["--reuse-timeout", "0"]);
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("Head branch was modified"),
            "{}",
            stderr(&out)
        );
        assert_eq!(s.count("PUT", PUT), 1, "a PUT is never repeated");
    }
}

mod recover_ingest {
    use super::*;

    const DISPATCH: &str = "/repos/acme/app/dispatches";
    const SRC: &str = "cafe000000000000000000000000000000000001";

    const OLDER: &str = "cafe000000000000000000000000000000000000";

    fn run_body(id: u64, event: &str, conclusion: &str, sha: &str, branch: &str) -> Value {
        json!({"id": id, "event": event, "status": "completed", "conclusion": conclusion,
               "path": ".github/workflows/run-sweep.yml", "head_sha": sha, "head_branch": branch,
               "head_repository": {"full_name": "acme/bench"}, "created_at": "2026-08-22T10:00:00Z"})
    }

    fn artifacts(names: &[&str]) -> Value {
        json!({"artifacts": names.iter().map(|n| json!({"name": n, "expired": false})).collect::<Vec<_>>()})
    }

    fn job(name: &str, conclusion: &str) -> Value {
        json!({"id": 1, "name": format!("sweep / {name}"), "status": "completed", "conclusion": conclusion})
    }

    /// The jobs of a push-to-main run of run-sweep.yml (called as `sweep`)
    /// that reused a PR sweep: nothing planned, the ingest job ran.
    fn reuse_jobs(trigger: &str) -> Value {
        json!({"total_count": 7, "jobs": [
            job("policy", "success"),
            job("setup", "success"),
            job("canary-select", "skipped"),
            job("plan single-node 1k1k (parts 1-2)", "skipped"),
            job("plan agentic", "skipped"),
            job("collect-results", "skipped"),
            job("upload-changelog-metadata", "success"),
            job(trigger, "failure"),
        ]})
    }

    fn comment(login: &str, body: &str, at: &str) -> Value {
        json!({"id": 1, "body": body, "user": {"login": login}, "created_at": at,
               "author_association": "MEMBER"})
    }

    fn commit(sha: &str, parents: &[&str], message: &str) -> Value {
        let parents: Vec<Value> = parents.iter().map(|p| json!({"sha": p})).collect();
        json!({"sha": sha, "parents": parents, "commit": {"message": message}})
    }

    /// `GET /compare/<parent>...<sha>`: `sha` changes `files`.
    fn compare(s: &FakeGitHub, parent: &str, sha: &str, files: &[&str]) {
        let files: Vec<Value> = files.iter().map(|f| json!({"filename": f})).collect();
        s.add_route(Route::json(
            "GET",
            &format!("{R}/compare/{parent}...{sha}"),
            json!({"status": "ahead", "files": files}),
        ));
    }

    fn server(
        source_conclusion: &str,
        source_artifacts: &[&str],
        merge_artifacts: &[&str],
    ) -> FakeGitHub {
        let s = test_kit::fake_github();
        roles(&s);
        s.add_route(Route::json(
            "GET",
            &format!("{R}/actions/runs/111"),
            run_body(111, "pull_request", source_conclusion, SRC, "feat/x"),
        ));
        s.add_route(Route::json(
            "GET",
            &format!("{R}/actions/runs/222"),
            run_body(222, "push", "failure", MERGE, "main"),
        ));
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/actions/runs/111/artifacts"),
            artifacts(source_artifacts),
            "object:artifacts",
        ));
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/actions/runs/222/artifacts"),
            artifacts(merge_artifacts),
            "object:artifacts",
        ));
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/actions/runs/222/jobs"),
            reuse_jobs("trigger-agentic-ingest"),
            "object:jobs",
        ));
        s.add_route(Route::json(
            "GET",
            &format!("{R}/commits/{MERGE}/pulls"),
            json!([
                {"number": 7, "merged_at": "2026-08-22T14:05:31Z", "merge_commit_sha": MERGE},
                {"number": 8, "merged_at": null, "merge_commit_sha": MERGE},
            ]),
        ));
        s.with_comments(
            "acme/bench",
            7,
            vec![comment(
                "writer",
                "/reuse-sweep-run",
                "2026-08-22T14:00:00Z",
            )],
        );
        // The sweep ran on SRC; the reuse protocol then merged main and
        // refreshed the changelog ([skip-sweep]).
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/pulls/7/commits"),
            json!([
                commit(OLDER, &["p"], "first try"),
                commit(SRC, &[OLDER], "feat"),
                commit(HEAD, &[SRC, "m"], "Merge branch 'main'"),
                commit(MOVED, &[HEAD], "prepare #7 for sweep reuse [skip-sweep]"),
            ]),
            "array",
        ));
        // Main brought documentation only; the refresh commit is empty.
        compare(&s, SRC, HEAD, &["docs/adopt.md"]);
        compare(&s, HEAD, MOVED, &[]);
        s.add_route(Route::json(
            "GET",
            &format!("{R}/pulls/7"),
            json!({"number": 7, "head": {"ref": "feat/x", "repo": {"full_name": "acme/bench"}}}),
        ));
        // Labelled full-sweep-enabled before the sweep ran (10:00).
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/issues/7/timeline"),
            json!([{"event": "labeled", "created_at": "2026-08-22T09:00:00Z", "label": {"name": "full-sweep-enabled"}}]),
            "array",
        ));
        s.add_route(Route::empty("POST", DISPATCH, 204));
        s
    }

    #[track_caller]
    fn refused_without_dispatch(s: &FakeGitHub, out: &Output, want: &str) {
        test_kit::assert_exit(out, 1);
        assert!(stderr(out).contains(want), "{want}: {}", stderr(out));
        assert_eq!(s.count("POST", DISPATCH), 0);
    }

    fn recover(s: &FakeGitHub, extra: &[&str]) -> Output {
        let d = test_kit::temp_dir();
        let mut args = vec![
            "recover-ingest",
            "--repo",
            "acme/bench",
            "--source-run-id",
            "111",
            "--merge-run-id",
            "222",
            "--ingest-repository",
            "acme/app",
        ];
        args.extend_from_slice(extra);
        run(s, d.path(), &args, &[("INGEST_TOKEN", "ghp_ingest")])
    }

    #[test]
    fn dispatches_the_agentic_ingest_for_runs_that_belong_together() {
        let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
        let out = recover(&s, &[]);
        test_kit::assert_exit(&out, 0);
        assert_eq!(
            bodies(&s, "POST", DISPATCH),
            vec![json!({
                "event_type": "ingest-agentic-results",
                "client_payload": {"source-run-id": "111", "merge-run-id": "222", "database-target": "production"},
            })]
        );
        let post = s
            .requests()
            .into_iter()
            .find(|r| r.method == "POST")
            .expect("post");
        assert_eq!(
            post.headers.get("authorization").map(String::as_str),
            Some("Bearer ghp_ingest")
        );
    }

    #[test]
    fn the_plain_ingest_needs_result_artifacts_and_has_no_database_target() {
        let s = server("success", &["results_bmk"], &["changelog-metadata"]);
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/actions/runs/222/jobs"),
            reuse_jobs("trigger-ingest"),
            "object:jobs",
        ));
        let out = recover(&s, &["--event-type", "ingest-results"]);
        test_kit::assert_exit(&out, 0);
        assert_eq!(
            bodies(&s, "POST", DISPATCH)[0]["client_payload"],
            json!({"source-run-id": "111", "merge-run-id": "222"})
        );
    }

    /// Issue #34 item 1, as `reuse-sweep find` judges it: a `[skip-sweep]`
    /// commit pushed after the approval that changes a config, or a merge
    /// that brings one, makes the source run stand for other code.
    #[test]
    fn a_sweep_input_changed_after_the_approval_is_refused() {
        let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
        compare(&s, HEAD, MOVED, &["configs/nvidia-master.yaml"]);
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/activity"),
            json!([
                {"ref": "refs/heads/feat/x", "timestamp": "2026-08-22T14:01:00Z", "after": MOVED},
                {"ref": "refs/heads/feat/x", "timestamp": "2026-08-22T09:30:00Z", "after": SRC},
            ]),
            "array",
        ));
        let out = recover(&s, &[]);
        refused_without_dispatch(
            &s,
            &out,
            &format!(
                "commit {MOVED} after the swept head {SRC} changes configs/nvidia-master.yaml"
            ),
        );

        let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
        compare(
            &s,
            SRC,
            HEAD,
            &["docs/adopt.md", "benchmarks/single_node/dsv4.sh"],
        );
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/activity"),
            json!([]),
            "array",
        ));
        let out = recover(&s, &[]);
        refused_without_dispatch(
            &s,
            &out,
            &format!(
                "commit {HEAD} after the swept head {SRC} changes benchmarks/single_node/dsv4.sh"
            ),
        );

        // Pushed before the approval (14:00): covered by it.
        let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
        compare(&s, HEAD, MOVED, &["configs/nvidia-master.yaml"]);
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/activity"),
            json!([{"ref": "refs/heads/feat/x", "timestamp": "2026-08-22T13:59:00Z", "after": MOVED}]),
            "array",
        ));
        let out = recover(&s, &[]);
        test_kit::assert_exit(&out, 0);
    }

    /// Issue #34 item 3a: a run made under `evals-only` is not ingested as
    /// a full sweep.
    #[test]
    fn a_source_run_made_under_evals_only_is_refused() {
        let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/issues/7/timeline"),
            json!([
                {"event": "labeled", "created_at": "2026-08-22T09:00:00Z", "label": {"name": "full-sweep-enabled"}},
                {"event": "labeled", "created_at": "2026-08-22T09:10:00Z", "label": {"name": "evals-only"}},
                {"event": "unlabeled", "created_at": "2026-08-22T11:00:00Z", "label": {"name": "evals-only"}},
            ]),
            "array",
        ));
        let out = recover(&s, &[]);
        refused_without_dispatch(
            &s,
            &out,
            "source run 111 is not a full sweep: it was created while reuse-incompatible label(s) evals-only were applied",
        );
    }

    #[test]
    fn a_dry_run_checks_without_dispatching() {
        let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
        let out = recover(&s, &["--dry-run"]);
        test_kit::assert_exit(&out, 0);
        assert_eq!(s.count("POST", DISPATCH), 0);
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"pr-number\":7"));
    }

    #[test]
    fn a_source_run_that_is_not_success_is_refused() {
        for conclusion in ["failure", "cancelled"] {
            let s = server(conclusion, &["bmk_agentic_dsv4"], &["changelog-metadata"]);
            let out = recover(&s, &[]);
            test_kit::assert_exit(&out, 1);
            assert!(
                stderr(&out).contains(&format!(
                    "is completed/{conclusion}, expected completed/success"
                )),
                "{}",
                stderr(&out)
            );
            assert_eq!(s.count("POST", DISPATCH), 0);
        }
    }

    #[test]
    fn artifact_sets_that_do_not_qualify_are_refused() {
        for (src, merge, want) in [
            (
                vec!["results_bmk"],
                vec!["changelog-metadata"],
                "no unexpired bmk_agentic_*",
            ),
            (
                vec!["bmk_agentic_dsv4"],
                vec!["results_bmk"],
                "no unexpired changelog-metadata",
            ),
        ] {
            let s = server("success", &src, &merge);
            let out = recover(&s, &[]);
            test_kit::assert_exit(&out, 1);
            assert!(stderr(&out).contains(want), "{want}: {}", stderr(&out));
            assert_eq!(s.count("POST", DISPATCH), 0);
        }
    }

    #[test]
    fn a_source_run_outside_the_merged_pr_is_refused() {
        let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/pulls/7/commits"),
            json!([commit(HEAD, &["p"], "feat")]),
            "array",
        ));
        let out = recover(&s, &[]);
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("is not a commit of PR #7"),
            "{}",
            stderr(&out)
        );
        assert_eq!(s.count("POST", DISPATCH), 0);
    }

    #[test]
    fn swapped_run_ids_are_refused() {
        let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
        let d = test_kit::temp_dir();
        let out = run(
            &s,
            d.path(),
            &[
                "recover-ingest",
                "--repo",
                "acme/bench",
                "--source-run-id",
                "222",
                "--merge-run-id",
                "111",
                "--ingest-repository",
                "acme/app",
            ],
            &[("INGEST_TOKEN", "x")],
        );
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("source run 222 event is 'push', expected 'pull_request'"),
            "{}",
            stderr(&out)
        );
    }

    #[test]
    fn a_fork_triggered_source_run_is_refused() {
        let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
        let mut source = run_body(111, "pull_request", "success", SRC, "feat/x");
        source["head_repository"] = json!({"full_name": "mallory/bench"});
        s.add_route(Route::json("GET", &format!("{R}/actions/runs/111"), source));
        let out = recover(&s, &[]);
        refused_without_dispatch(
            &s,
            &out,
            "source run 111 was triggered from mallory/bench, not from acme/bench",
        );
    }

    #[test]
    fn a_source_run_on_an_older_commit_than_the_swept_head_is_refused() {
        let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
        s.add_route(Route::json(
            "GET",
            &format!("{R}/actions/runs/111"),
            run_body(111, "pull_request", "success", OLDER, "feat/x"),
        ));
        let out = recover(&s, &[]);
        refused_without_dispatch(
            &s,
            &out,
            &format!("source run 111 ran on {OLDER}, not on PR #7's swept head {SRC}"),
        );
    }

    #[test]
    fn a_reuse_command_by_a_reader_does_not_authorise() {
        for login in ["reader", "triager", "stranger"] {
            let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
            s.with_comments(
                "acme/bench",
                7,
                vec![comment(login, "/reuse-sweep-run", "2026-08-22T14:00:00Z")],
            );
            let out = recover(&s, &[]);
            refused_without_dispatch(
                &s,
                &out,
                "PR #7 has no /reuse-sweep-run comment by a commenter with write, maintain or admin permission",
            );
            assert!(
                s.requests()
                    .iter()
                    .any(|r| r.path == format!("{R}/collaborators/{login}/permission")),
                "the permission of {login} was asked of the API"
            );
        }
    }

    #[test]
    fn a_writer_pin_of_another_run_is_refused() {
        let s = server("success", &["bmk_agentic_dsv4"], &["changelog-metadata"]);
        s.with_comments(
            "acme/bench",
            7,
            vec![
                comment("writer", "/reuse-sweep-run 999", "2026-08-22T13:00:00Z"),
                comment("reader", "/reuse-sweep-run 111", "2026-08-22T14:00:00Z"),
            ],
        );
        let out = recover(&s, &[]);
        refused_without_dispatch(
            &s,
            &out,
            "@writer's /reuse-sweep-run comment on PR #7 pins run 999, not source run 111",
        );
    }

    #[test]
    fn a_merge_run_that_swept_by_itself_is_not_a_reuse() {
        let swept = json!({"jobs": [
            job("setup", "success"),
            job("plan agentic", "success"),
            job("trigger-agentic-ingest", "failure"),
        ]});
        let not_triggered = json!({"jobs": [
            job("setup", "success"),
            job("plan agentic", "skipped"),
            job("trigger-agentic-ingest", "skipped"),
        ]});
        for (jobs, merge_artifacts, want) in [
            (
                swept,
                vec!["changelog-metadata"],
                "its planning job(s) ran (plan agentic)",
            ),
            (
                not_triggered,
                vec!["changelog-metadata"],
                "its trigger-agentic-ingest job did not run",
            ),
            (
                reuse_jobs("trigger-agentic-ingest"),
                vec!["changelog-metadata", "bmk_agentic_dsv4"],
                "it holds benchmark results of its own (bmk_agentic_dsv4)",
            ),
        ] {
            let s = server("success", &["bmk_agentic_dsv4"], &merge_artifacts);
            s.add_route(Route::paginated(
                "GET",
                &format!("{R}/actions/runs/222/jobs"),
                jobs,
                "object:jobs",
            ));
            let out = recover(&s, &[]);
            refused_without_dispatch(&s, &out, "merge run 222 was not a reuse run");
            assert!(stderr(&out).contains(want), "{want}: {}", stderr(&out));
        }
    }
}

#[allow(clippy::unwrap_used)] // test code: a panic is the failure report
mod dispatch_ingest {
    use super::*;
    use test_kit::Fault;

    const DISPATCH: &str = "/repos/acme/app/dispatches";

    fn server() -> FakeGitHub {
        let s = test_kit::fake_github();
        s.add_route(Route::empty("POST", DISPATCH, 204));
        s
    }

    /// `sweep-ops dispatch-ingest` as the sweep-ops action runs it: inputs
    /// in `INPUT_*`, this run's id in `GITHUB_RUN_ID`, the ingest token in
    /// `INGEST_TOKEN` (and a `GH_TOKEN` that must not be used). Returns the
    /// output and the step summary written.
    fn dispatch(s: &FakeGitHub, event: &str, reuse: &str, source: &str) -> (Output, String) {
        let d = test_kit::temp_dir();
        let summary = d.path().join("summary.md");
        let out = run(
            s,
            d.path(),
            &["dispatch-ingest"],
            &[
                ("INPUT_INGEST_REPOSITORY", "acme/app"),
                ("INPUT_EVENT_TYPE", event),
                ("GITHUB_RUN_ID", "222"),
                ("INPUT_REUSE_ENABLED", reuse),
                ("INPUT_REUSE_SOURCE_RUN_ID", source),
                ("INGEST_TOKEN", "ghp_ingest"),
                ("GITHUB_STEP_SUMMARY", &summary.to_string_lossy()),
            ],
        );
        let written = std::fs::read_to_string(&summary).unwrap_or_default();
        (out, written)
    }

    #[test]
    fn a_reused_sweep_dispatches_the_source_run_and_this_run_with_the_ingest_token() {
        let s = server();
        let (out, summary) = dispatch(&s, "ingest-results", "true", "111");
        test_kit::assert_exit(&out, 0);
        let want = json!({"source-run-id": "111", "merge-run-id": "222"});
        assert_eq!(
            bodies(&s, "POST", DISPATCH),
            vec![json!({"event_type": "ingest-results", "client_payload": want})]
        );
        let reqs = s.requests();
        assert_eq!(reqs.len(), 1, "one request, the dispatch: {reqs:?}");
        assert_eq!(
            reqs[0].headers.get("authorization").map(String::as_str),
            Some("Bearer ghp_ingest"),
            "the ingest token, never GH_TOKEN"
        );
        assert_eq!(
            summary,
            format!("dispatched `ingest-results` to `acme/app`: `{want}`\n")
        );
    }

    #[test]
    fn without_reuse_this_run_is_source_and_merge() {
        for reuse in ["false", ""] {
            let s = server();
            let (out, _) = dispatch(&s, "ingest-results", reuse, "111");
            test_kit::assert_exit(&out, 0);
            assert_eq!(
                bodies(&s, "POST", DISPATCH)[0]["client_payload"],
                json!({"source-run-id": "222", "merge-run-id": "222"}),
                "reuse-enabled {reuse:?}"
            );
        }
    }

    #[test]
    fn the_agentic_ingest_adds_the_production_database_target() {
        let s = server();
        let (out, summary) = dispatch(&s, "ingest-agentic-results", "true", "111");
        test_kit::assert_exit(&out, 0);
        assert_eq!(
            bodies(&s, "POST", DISPATCH),
            vec![
                json!({"event_type": "ingest-agentic-results", "client_payload":
                {"source-run-id": "111", "merge-run-id": "222", "database-target": "production"}})
            ]
        );
        assert!(
            summary.contains("\"database-target\":\"production\""),
            "{summary}"
        );
    }

    #[test]
    fn a_non_numeric_source_run_id_is_refused_before_any_request() {
        for source in ["", "abc", "12 34", "1;2"] {
            let s = server();
            let (out, summary) = dispatch(&s, "ingest-results", "true", source);
            test_kit::assert_exit(&out, 1);
            assert!(
                stderr(&out).contains("is not numeric"),
                "{source:?}: {}",
                stderr(&out)
            );
            assert!(s.requests().is_empty(), "{source:?}: {:?}", s.requests());
            assert!(summary.is_empty(), "{summary}");
        }
    }

    #[test]
    fn an_unknown_event_type_is_refused_before_any_request() {
        let s = server();
        let (out, _) = dispatch(&s, "ingest", "true", "111");
        test_kit::assert_exit(&out, 1);
        assert!(s.requests().is_empty());
    }

    #[test]
    fn a_failed_dispatch_is_exit_2_with_no_summary() {
        let s = server();
        s.fail_always("POST", DISPATCH, Fault::Status(500));
        let (out, summary) = dispatch(&s, "ingest-results", "true", "111");
        test_kit::assert_exit(&out, 2);
        assert_eq!(s.count("POST", DISPATCH), 1, "the dispatch was tried");
        assert!(summary.is_empty(), "{summary}");
        let s = test_kit::fake_github(); // no route: GitHub's 404 for a repository the token cannot see
        let (out, _) = dispatch(&s, "ingest-results", "true", "111");
        test_kit::assert_exit(&out, 2);
    }

    #[test]
    fn without_the_ingest_token_nothing_is_sent() {
        let s = server();
        let d = test_kit::temp_dir();
        let out = run(
            &s,
            d.path(),
            &[
                "dispatch-ingest",
                "--ingest-repository",
                "acme/app",
                "--event-type",
                "ingest-results",
                "--run-id",
                "222",
            ],
            &[],
        );
        test_kit::assert_exit(&out, 2);
        assert!(stderr(&out).contains("INGEST_TOKEN"), "{}", stderr(&out));
        assert!(s.requests().is_empty());
    }

    /// The recorded reference dispatches (conformance fixtures
    /// `github/ingest-dispatch/`): the same POST path, token and body for
    /// the same push-to-main state. The event type is the ingest job's
    /// (agentic rows in the search space run `trigger-agentic-ingest`).
    /// The `Accept` header is not compared: the reference sends
    /// `application/vnd.github+v3+json`, sweepkit's client GitHub's
    /// current `application/vnd.github+json`.
    #[test]
    fn the_recorded_reference_dispatches_are_reproduced() {
        let root =
            test_kit::workspace_root().join("tests/conformance/fixtures/github/ingest-dispatch");
        let mut dirs: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        dirs.sort();
        assert_eq!(dirs.len(), 3, "{dirs:?}");
        for dir in dirs {
            let read = |f: &str| -> Value {
                serde_json::from_str(&std::fs::read_to_string(dir.join(f)).unwrap()).unwrap()
            };
            let scenario = read("scenario.json");
            let expected = read("expected.json");
            let i = &scenario["inputs"];
            let agentic =
                i["ssc_has_single_node_agentic"] == true || i["ssc_has_multi_node_agentic"] == true;
            let s = FakeGitHub::from_scenario(&dir).unwrap();
            let want = &expected["requests"][0];
            let path = want["path"].as_str().unwrap();
            let repo = path
                .strip_prefix("/repos/")
                .and_then(|p| p.strip_suffix("/dispatches"))
                .unwrap();
            let d = test_kit::temp_dir();
            let out = run(
                &s,
                d.path(),
                &["dispatch-ingest"],
                &[
                    ("INPUT_INGEST_REPOSITORY", repo),
                    (
                        "INPUT_EVENT_TYPE",
                        if agentic {
                            "ingest-agentic-results"
                        } else {
                            "ingest-results"
                        },
                    ),
                    ("GITHUB_RUN_ID", &i["run_id"].to_string()),
                    ("INPUT_REUSE_ENABLED", i["reuse_enabled"].as_str().unwrap()),
                    (
                        "INPUT_REUSE_SOURCE_RUN_ID",
                        i["reuse_source_run_id"].as_str().unwrap(),
                    ),
                    (
                        "INGEST_TOKEN",
                        i["env"]["INFX_FRONTEND_PAT"].as_str().unwrap(),
                    ),
                ],
            );
            test_kit::assert_exit(&out, expected["exit_code"].as_i64().unwrap() as i32);
            let got = s.requests();
            assert_eq!(got.len(), 1, "{}: {got:?}", dir.display());
            assert_eq!(got[0].method, want["method"].as_str().unwrap());
            assert_eq!(got[0].path, path);
            assert_eq!(
                got[0].headers.get("authorization").map(String::as_str),
                want["headers"]["Authorization"].as_str(),
                "{}",
                dir.display()
            );
            assert_eq!(
                got[0].body.as_ref(),
                Some(&want["body"]),
                "{}",
                dir.display()
            );
        }
    }
}

mod runner_digest {
    use super::*;

    fn runner(i: usize, status: &str) -> Value {
        let labels = if i.is_multiple_of(2) {
            json!([{"name": "self-hosted", "type": "read-only"}, {"name": "Linux", "type": "read-only"},
                   {"name": format!("b200-{i:03}"), "type": "custom"}, {"name": "gpu", "type": "custom"}])
        } else {
            json!([{"name": "self-hosted", "type": "read-only"}, {"name": "X64", "type": "read-only"}])
        };
        json!({"id": i, "name": format!("runner-{i:03}"), "os": "Linux", "status": status, "labels": labels})
    }

    fn server(runners: Vec<Value>) -> FakeGitHub {
        let s = test_kit::fake_github();
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/actions/runners"),
            json!({"total_count": runners.len(), "runners": runners}),
            "object:runners",
        ));
        s.with_comments("acme/bench", 99, vec![]);
        s
    }

    fn digest(s: &FakeGitHub, dir: &Path, extra: &[&str]) -> Output {
        let mut args = vec![
            "runner-digest",
            "--repo",
            "acme/bench",
            "--date",
            "2026-12-01",
        ];
        args.extend_from_slice(extra);
        let summary = dir.join("summary.md");
        let summary = summary.to_string_lossy().into_owned();
        run(s, dir, &args, &[("GITHUB_STEP_SUMMARY", &summary)])
    }

    #[test]
    fn lists_offline_runners_of_every_page() {
        // 150 runners: two pages of 100; offline ones on both.
        let runners: Vec<Value> = (0..150)
            .map(|i| {
                runner(
                    i,
                    if [3, 40, 120, 149].contains(&i) {
                        "offline"
                    } else {
                        "online"
                    },
                )
            })
            .rev()
            .collect();
        let s = server(runners);
        let d = test_kit::temp_dir();
        let out = digest(
            &s,
            d.path(),
            &["--run-url", "https://github.com/acme/bench/actions/runs/5"],
        );
        test_kit::assert_exit(&out, 0);
        let md = String::from_utf8_lossy(&out.stdout).into_owned();
        test_kit::assert_snapshot!("offline_digest", md);
        assert_eq!(
            std::fs::read_to_string(d.path().join("summary.md")).expect("summary"),
            md
        );
        assert!(
            s.comments("acme/bench", 99).is_empty(),
            "no issue asked for"
        );
    }

    #[test]
    fn all_online_is_one_line_and_posts_nothing() {
        let s = server((0..3).map(|i| runner(i, "online")).collect());
        let d = test_kit::temp_dir();
        let out = digest(
            &s,
            d.path(),
            &["--comment-issue", "99", "--fail-on-offline"],
        );
        test_kit::assert_exit(&out, 0);
        test_kit::assert_snapshot!("online_digest", String::from_utf8_lossy(&out.stdout));
        assert!(s.comments("acme/bench", 99).is_empty());
    }

    #[test]
    fn offline_runners_are_posted_and_can_fail_the_job() {
        let s = server(vec![runner(0, "offline"), runner(1, "online")]);
        let d = test_kit::temp_dir();
        let out = digest(
            &s,
            d.path(),
            &["--comment-issue", "99", "--fail-on-offline"],
        );
        test_kit::assert_exit(&out, 1);
        let comments = s.comments("acme/bench", 99);
        assert_eq!(comments.len(), 1);
        assert_eq!(
            comments[0]["body"].as_str(),
            Some(String::from_utf8_lossy(&out.stdout).as_ref())
        );
    }

    #[test]
    fn hostile_runner_names_are_inert_markdown() {
        let s = server(vec![
            json!({"id": 1, "name": "evil | @team [x](http://a.b)", "os": "<b>Linux</b>",
                                   "status": "offline", "labels": [{"name": "`x`", "type": "custom"}]}),
        ]);
        let d = test_kit::temp_dir();
        let out = digest(&s, d.path(), &[]);
        test_kit::assert_exit(&out, 0);
        test_kit::assert_snapshot!("hostile_digest", String::from_utf8_lossy(&out.stdout));
    }

    #[test]
    fn organisation_runners_are_read_from_the_org_endpoint() {
        let s = test_kit::fake_github();
        s.add_route(Route::paginated(
            "GET",
            "/orgs/acme/actions/runners",
            json!({"runners": [runner(0, "offline")]}),
            "object:runners",
        ));
        let d = test_kit::temp_dir();
        let out = run(
            &s,
            d.path(),
            &["runner-digest", "--org", "acme", "--date", "2026-12-01"],
            &[],
        );
        test_kit::assert_exit(&out, 0);
        let md = String::from_utf8_lossy(&out.stdout);
        assert!(
            md.contains("1/1 self-hosted runners offline in `acme`"),
            "{md}"
        );
        assert!(
            md.contains("| runner-000 | Linux | b200-000, gpu |"),
            "{md}"
        );
    }

    #[test]
    fn a_token_that_cannot_list_runners_is_exit_2() {
        let s = test_kit::fake_github();
        s.add_route(
            Route::json(
                "GET",
                &format!("{R}/actions/runners"),
                json!({"message": "Resource not accessible by integration"}),
            )
            .with_status(403),
        );
        let d = test_kit::temp_dir();
        let out = digest(&s, d.path(), &[]);
        test_kit::assert_exit(&out, 2);
        assert!(stderr(&out).contains("HTTP 403"), "{}", stderr(&out));
    }
}
