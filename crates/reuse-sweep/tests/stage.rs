//! `reuse-sweep stage-results`, `stage-dispatch` and `stage-callback`
//! against the loopback fake GitHub: the reference's rules, the comments
//! it answers with, and the refusals (read-only commenter, a run that is
//! not stageable, artifacts that fail validation, a forged callback).

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use test_kit::{FakeGitHub, Route};

const R: &str = "/repos/acme/bench";
const HEAD: &str = "aaaa000000000000000000000000000000000001";
const OLD: &str = "aaaa000000000000000000000000000000000000";
const RUNS: &str = "/repos/acme/bench/actions/workflows/run-sweep.yml/runs";
const FRONTEND: &str = "/repos/SemiAnalysisAI/InferenceX-app/dispatches";

fn run(s: &FakeGitHub, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    test_kit::command(env!("CARGO_BIN_EXE_reuse-sweep"))
        .args(args)
        .current_dir(dir)
        .env("GITHUB_API_URL", s.base_url())
        .env("GH_TOKEN", "ghs_repo")
        .env("GITHUB_REPOSITORY", "acme/bench")
        .env("SWEEPKIT_GITHUB_MAX_ATTEMPTS", "1")
        .envs(env.iter().copied())
        .output()
        .expect("run reuse-sweep")
}

/// SHA-256 of `s`, lower-case hex (the acknowledgement marker's hash).
fn sha256_hex(s: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn sweep_run(id: u64, sha: &str, created: &str, conclusion: &str) -> Value {
    json!({"id": id, "path": ".github/workflows/run-sweep.yml", "event": "pull_request",
           "head_sha": sha, "created_at": created, "status": "completed", "conclusion": conclusion,
           "run_attempt": 2, "html_url": format!("https://github.com/acme/bench/actions/runs/{id}"),
           "pull_requests": [{"number": 7}], "head_repository": {"full_name": "acme/bench"}})
}

fn artifacts(names: &[&str]) -> Value {
    json!({"artifacts": names.iter().map(|n| json!({"name": n, "expired": false})).collect::<Vec<_>>()})
}

/// PR #7 labelled `full-sweep-enabled` from 10:00; runs (newest first):
/// 303 (created before the label), 302 (in progress), 301 (good).
fn server(labels: &[&str]) -> FakeGitHub {
    let s = FakeGitHub::start().expect("server");
    for (login, role) in [
        ("writer", "write"),
        ("maintainer", "maintain"),
        ("reader", "read"),
        ("triager", "triage"),
    ] {
        s.with_collaborator("acme/bench", login, role);
    }
    let labels: Vec<Value> = labels.iter().map(|l| json!({"name": l})).collect();
    s.add_route(Route::json(
        "GET",
        &format!("{R}/pulls/7"),
        json!({"number": 7, "labels": labels, "head": {"sha": HEAD, "ref": "feat/x"}}),
    ));
    s.add_route(Route::paginated("GET", &format!("{R}/issues/7/timeline"), json!([
        {"event": "commented", "created_at": "2026-08-22T09:00:00Z"},
        {"event": "labeled", "label": {"name": "full-sweep-enabled"}, "created_at": "2026-08-22T10:00:00Z"},
        {"event": "labeled", "label": {"name": "all-evals"}, "created_at": "2026-08-22T10:01:00Z"},
    ]), "array"));
    s.add_route(Route::paginated(
        "GET",
        &format!("{R}/pulls/7/commits"),
        json!([{"sha": OLD}, {"sha": HEAD}]),
        "array",
    ));
    let mut in_progress = sweep_run(302, HEAD, "2026-08-22T12:00:00Z", "success");
    in_progress["status"] = json!("in_progress");
    in_progress["conclusion"] = Value::Null;
    s.add_route(Route::paginated(
        "GET",
        RUNS,
        json!({"workflow_runs": [
            sweep_run(303, HEAD, "2026-08-22T09:30:00Z", "success"),
            in_progress,
            sweep_run(301, HEAD, "2026-08-22T11:00:00Z", "cancelled"),
        ]}),
        "object:workflow_runs",
    ));
    for id in [301, 302, 303] {
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/actions/runs/{id}/artifacts"),
            artifacts(&["changelog-metadata", "results_bmk", "run-stats"]),
            "object:artifacts",
        ));
    }
    s.with_comments("acme/bench", 7, vec![]);
    s
}

fn comment_event(dir: &Path, body: &str, login: &str) -> String {
    let p = dir.join("event.json");
    std::fs::write(
        &p,
        json!({"issue": {"number": 7, "pull_request": {}},
                              "comment": {"body": body, "user": {"login": login}}})
        .to_string(),
    )
    .expect("event");
    p.to_string_lossy().into_owned()
}

fn request(s: &FakeGitHub, body: &str, login: &str) -> (Output, String) {
    let d = test_kit::temp_dir();
    let ev = comment_event(d.path(), body, login);
    let out_file = d.path().join("out");
    let out = run(
        s,
        d.path(),
        &["stage-results"],
        &[
            ("GITHUB_EVENT_PATH", &ev),
            ("GITHUB_OUTPUT", &out_file.to_string_lossy()),
        ],
    );
    (out, std::fs::read_to_string(out_file).unwrap_or_default())
}

mod request {
    use super::*;

    #[test]
    fn the_bare_command_picks_the_newest_stageable_run() {
        let s = server(&["full-sweep-enabled"]);
        let (out, outputs) = request(&s, "  /stage-results\n", "maintainer");
        test_kit::assert_exit(&out, 0);
        assert_eq!(
            outputs,
            "run-id=301\nrun-attempt=2\nrun-date=2026-08-22\nrequested-by=maintainer\nrun-url=https://github.com/acme/bench/actions/runs/301\n"
        );
        assert!(
            s.comments("acme/bench", 7).is_empty(),
            "the acknowledgement comes with the dispatch"
        );
        let q = s
            .requests()
            .into_iter()
            .find(|r| r.path == RUNS)
            .expect("listed")
            .query;
        assert_eq!(
            (
                q["event"].as_str(),
                q["branch"].as_str(),
                q["status"].as_str()
            ),
            ("pull_request", "feat/x", "completed")
        );
    }

    #[test]
    fn an_explicit_run_id_is_checked_and_used() {
        let s = server(&["full-sweep-enabled"]);
        s.add_route(Route::json(
            "GET",
            &format!("{R}/actions/runs/301"),
            sweep_run(301, HEAD, "2026-08-22T11:00:00Z", "failure"),
        ));
        let (out, outputs) = request(&s, "/stage-results 301", "writer");
        test_kit::assert_exit(&out, 0);
        assert!(outputs.starts_with("run-id=301\n"), "{outputs}");
    }

    #[test]
    fn a_force_pushed_run_counts_only_when_named_and_associated_with_the_pr() {
        const GONE: &str = "dddd000000000000000000000000000000000009";
        let s = server(&["full-sweep-enabled"]);
        let gone = sweep_run(305, GONE, "2026-08-22T13:00:00Z", "success");
        s.add_route(Route::paginated(
            "GET",
            RUNS,
            json!({"workflow_runs": [gone.clone()]}),
            "object:workflow_runs",
        ));
        s.add_route(Route::json("GET", &format!("{R}/actions/runs/305"), gone));
        s.add_route(Route::paginated(
            "GET",
            &format!("{R}/actions/runs/305/artifacts"),
            artifacts(&["changelog-metadata", "results_bmk"]),
            "object:artifacts",
        ));
        let (out, _) = request(&s, "/stage-results", "writer");
        test_kit::assert_exit(&out, 1);
        let (out, outputs) = request(&s, "/stage-results 305", "writer");
        test_kit::assert_exit(&out, 0);
        assert!(outputs.starts_with("run-id=305\n"), "{outputs}");
    }

    #[test]
    fn a_read_only_commenter_is_answered_and_refused() {
        for login in ["reader", "triager", "stranger"] {
            let s = server(&["full-sweep-enabled"]);
            let (out, outputs) = request(&s, "/stage-results", login);
            test_kit::assert_exit(&out, 1);
            assert!(outputs.is_empty());
            let c = s.comments("acme/bench", 7);
            assert_eq!(c.len(), 1, "{login}");
            assert_eq!(
                c[0]["body"],
                format!("@{login} `/stage-results` requires write access to this repository.")
            );
            assert_eq!(s.count("GET", RUNS), 0);
        }
    }

    #[test]
    fn bad_syntax_from_a_writer_gets_the_usage_reply() {
        let s = server(&["full-sweep-enabled"]);
        let (out, _) = request(&s, "/stage-results latest", "writer");
        test_kit::assert_exit(&out, 1);
        let c = s.comments("acme/bench", 7);
        assert_eq!(c.len(), 1);
        assert_eq!(
            c[0]["body"],
            "Usage: `/stage-results` or `/stage-results <run-id>`."
        );
        assert_eq!(
            s.count("GET", &format!("{R}/collaborators/writer/permission")),
            1,
            "the permission is read before the grammar"
        );
    }

    /// Issue #34: usage help only for writers. A reader's malformed
    /// command gets the permission answer, never the usage text, and
    /// nothing else is read.
    #[test]
    fn bad_syntax_from_a_reader_gets_the_permission_reply_not_usage() {
        for login in ["reader", "stranger"] {
            let s = server(&["full-sweep-enabled"]);
            let (out, outputs) = request(&s, "/stage-results latest", login);
            test_kit::assert_exit(&out, 1);
            assert!(outputs.is_empty());
            let c = s.comments("acme/bench", 7);
            assert_eq!(c.len(), 1, "{login}");
            assert_eq!(
                c[0]["body"],
                format!("@{login} `/stage-results` requires write access to this repository.")
            );
            assert_eq!(s.count("GET", &format!("{R}/pulls/7")), 0);
        }
    }

    #[test]
    fn a_pr_without_a_full_sweep_label_is_refused() {
        let s = server(&["sweep-enabled"]);
        let (out, _) = request(&s, "/stage-results", "writer");
        test_kit::assert_exit(&out, 1);
        let body = s.comments("acme/bench", 7)[0]["body"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            body.contains("requires a completed run from a PR using one of: `full-sweep-enabled`"),
            "{body}"
        );
    }

    #[test]
    fn runs_that_cannot_be_staged_are_refused_with_the_reason() {
        let cases: Vec<(Value, &str)> = vec![
            (
                {
                    let mut r = sweep_run(400, HEAD, "2026-08-22T11:00:00Z", "success");
                    r["status"] = json!("in_progress");
                    r["conclusion"] = Value::Null;
                    r
                },
                "it is in_progress/null",
            ),
            (
                sweep_run(400, HEAD, "2026-08-22T11:00:00Z", "skipped"),
                "it is completed/skipped",
            ),
            (
                sweep_run(400, HEAD, "2026-08-22T09:00:00Z", "success"),
                "it was not created while a full-sweep label",
            ),
            (
                {
                    let mut r = sweep_run(
                        400,
                        "ffff000000000000000000000000000000000000",
                        "2026-08-22T11:00:00Z",
                        "success",
                    );
                    r["pull_requests"] = json!([]);
                    r
                },
                "its head commit is not in the PR commit list",
            ),
            (
                {
                    let mut r = sweep_run(400, HEAD, "2026-08-22T11:00:00Z", "success");
                    r["event"] = json!("push");
                    r
                },
                "it is not a pull-request run of run-sweep.yml",
            ),
        ];
        for (run_body, want) in cases {
            let s = server(&["full-sweep-enabled"]);
            s.add_route(Route::json(
                "GET",
                &format!("{R}/actions/runs/400"),
                run_body,
            ));
            s.add_route(Route::paginated(
                "GET",
                &format!("{R}/actions/runs/400/artifacts"),
                artifacts(&["changelog-metadata", "results_bmk"]),
                "object:artifacts",
            ));
            let (out, _) = request(&s, "/stage-results 400", "writer");
            test_kit::assert_exit(&out, 1);
            assert!(
                stderr(&out).contains(&format!("run 400 cannot be staged because {want}")),
                "{want}: {}",
                stderr(&out)
            );
        }
    }

    #[test]
    fn artifact_names_that_fail_validation_are_refused() {
        for (names, want) in [
            (vec!["results_bmk"], "no unexpired changelog-metadata"),
            (
                vec!["changelog-metadata", "run-stats"],
                "no unexpired benchmark result",
            ),
        ] {
            let s = server(&["full-sweep-enabled"]);
            s.add_route(Route::json(
                "GET",
                &format!("{R}/actions/runs/400"),
                sweep_run(400, HEAD, "2026-08-22T11:00:00Z", "success"),
            ));
            s.add_route(Route::paginated(
                "GET",
                &format!("{R}/actions/runs/400/artifacts"),
                artifacts(&names),
                "object:artifacts",
            ));
            let (out, _) = request(&s, "/stage-results 400", "writer");
            test_kit::assert_exit(&out, 1);
            assert!(stderr(&out).contains(want), "{want}: {}", stderr(&out));
        }
    }

    #[test]
    fn a_run_from_a_fork_or_without_a_head_repository_is_refused() {
        for (head, want) in [
            (
                json!({"full_name": "mallory/bench"}),
                "run 400 cannot be staged because it was triggered from mallory/bench, not from acme/bench",
            ),
            (
                Value::Null,
                "run 400 cannot be staged because it does not name its head repository",
            ),
        ] {
            let s = server(&["full-sweep-enabled"]);
            s.add_route(Route::empty("POST", FRONTEND, 204));
            let mut r = sweep_run(400, HEAD, "2026-08-22T11:00:00Z", "success");
            r["head_repository"] = head;
            s.add_route(Route::json("GET", &format!("{R}/actions/runs/400"), r));
            s.add_route(Route::paginated(
                "GET",
                &format!("{R}/actions/runs/400/artifacts"),
                artifacts(&["changelog-metadata", "results_bmk"]),
                "object:artifacts",
            ));
            let (out, outputs) = request(&s, "/stage-results 400", "writer");
            test_kit::assert_exit(&out, 1);
            assert!(stderr(&out).contains(want), "{want}: {}", stderr(&out));
            assert!(outputs.is_empty(), "no run handed to the dispatch step");
            assert_eq!(s.count("POST", FRONTEND), 0);
        }
    }

    #[test]
    fn the_bare_command_skips_runs_from_forks() {
        let s = server(&["full-sweep-enabled"]);
        let mut fork = sweep_run(301, HEAD, "2026-08-22T11:00:00Z", "success");
        fork["head_repository"] = json!({"full_name": "mallory/bench"});
        s.add_route(Route::paginated(
            "GET",
            RUNS,
            json!({"workflow_runs": [fork]}),
            "object:workflow_runs",
        ));
        let (out, outputs) = request(&s, "/stage-results", "writer");
        test_kit::assert_exit(&out, 1);
        assert!(outputs.is_empty(), "{outputs}");
        assert!(
            stderr(&out).contains("no stageable completed run-sweep.yml run"),
            "{}",
            stderr(&out)
        );
    }

    #[test]
    fn no_stageable_run_at_all_is_refused() {
        let s = server(&["full-sweep-enabled"]);
        s.add_route(Route::paginated(
            "GET",
            RUNS,
            json!({"workflow_runs": [sweep_run(303, HEAD, "2026-08-22T09:30:00Z", "success")]}),
            "object:workflow_runs",
        ));
        let (out, _) = request(&s, "/stage-results", "writer");
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("no stageable completed run-sweep.yml run"),
            "{}",
            stderr(&out)
        );
    }
}

mod dispatch {
    use super::*;

    use test_kit::write_json as write;

    /// A fixed-sequence row as `collect-results process` writes it.
    fn fixed(conc: u32) -> Value {
        json!({"hw": "h100", "conc": conc, "image": "img", "model": "openai/gpt-oss-120b",
               "infmax_model_prefix": "gptoss", "framework": "vllm", "precision": "fp8",
               "spec_decoding": "none", "disagg": false, "recipe_fingerprint": "", "isl": 1024,
               "osl": 1024, "is_multinode": false, "tp": 2, "pp": 1, "dcp_size": 1, "pcp_size": 1,
               "ep": 1, "dp_attention": "false", "tput_per_gpu": 10.5, "output_tput_per_gpu": 1.5,
               "input_tput_per_gpu": 9.0})
    }

    #[test]
    fn rows_without_the_fields_the_ingest_needs_are_not_dispatched() {
        let s = dispatch_server();
        s.add_route(Route::empty("POST", FRONTEND, 204));
        let d = test_kit::temp_dir();
        write(
            d.path(),
            "artifacts/results_bmk/agg.json",
            &json!({"anything": 1}),
        );
        write(d.path(), "artifacts/run-stats/run_stats.json", &json!({}));
        let out = dispatch(&s, d.path());
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("results_bmk/agg.json: row 0: field 'is_multinode' is missing"),
            "{}",
            stderr(&out)
        );
        assert_eq!(s.count("POST", FRONTEND), 0);
    }

    fn dispatch(s: &FakeGitHub, dir: &Path) -> Output {
        let art = dir.join("artifacts");
        run(
            s,
            dir,
            &[
                "stage-dispatch",
                "--pr-number",
                "7",
                "--run-id",
                "301",
                "--run-attempt",
                "2",
                "--run-date",
                "2026-08-22",
                "--run-url",
                "https://github.com/acme/bench/actions/runs/301",
                "--requested-by",
                "writer",
                "--artifacts-dir",
                &art.to_string_lossy(),
            ],
            &[("STAGE_TOKEN", "ghp_frontend")],
        )
    }

    /// The fake with the source run 301 (from the repository itself).
    fn dispatch_server() -> FakeGitHub {
        let s = server(&["full-sweep-enabled"]);
        s.add_route(Route::json(
            "GET",
            &format!("{R}/actions/runs/301"),
            sweep_run(301, HEAD, "2026-08-22T11:00:00Z", "success"),
        ));
        s
    }

    #[test]
    fn a_run_from_a_fork_is_neither_acknowledged_nor_dispatched() {
        let s = dispatch_server();
        let mut fork = sweep_run(301, HEAD, "2026-08-22T11:00:00Z", "success");
        fork["head_repository"] = json!({"full_name": "mallory/bench"});
        s.add_route(Route::json("GET", &format!("{R}/actions/runs/301"), fork));
        s.add_route(Route::empty("POST", FRONTEND, 204));
        let d = test_kit::temp_dir();
        write(
            d.path(),
            "artifacts/results_bmk/agg.json",
            &json!([fixed(4), fixed(8)]),
        );
        write(d.path(), "artifacts/run-stats/run_stats.json", &json!({}));
        let out = dispatch(&s, d.path());
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("it was triggered from mallory/bench, not from acme/bench"),
            "{}",
            stderr(&out)
        );
        assert_eq!(s.count("POST", FRONTEND), 0);
        assert!(s.comments("acme/bench", 7).is_empty());
    }

    #[test]
    fn valid_artifacts_are_acknowledged_then_dispatched_with_the_frontend_token() {
        let s = dispatch_server();
        s.add_route(Route::empty("POST", FRONTEND, 204));
        let d = test_kit::temp_dir();
        write(
            d.path(),
            "artifacts/results_bmk/agg.json",
            &json!([fixed(4), fixed(8)]),
        );
        write(d.path(), "artifacts/run-stats/run_stats.json", &json!({}));
        let out = dispatch(&s, d.path());
        test_kit::assert_exit(&out, 0);
        let c = s.comments("acme/bench", 7);
        assert_eq!(c.len(), 1);
        assert!(c[0]["body"].as_str().unwrap_or_default().starts_with(
            "@writer staging [run 301](https://github.com/acme/bench/actions/runs/301)."
        ));
        let id = c[0]["id"].as_u64().expect("id").to_string();
        let post = s
            .requests()
            .into_iter()
            .find(|r| r.path == FRONTEND)
            .expect("dispatched");
        assert_eq!(
            post.headers.get("authorization").map(String::as_str),
            Some("Bearer ghp_frontend")
        );
        let body = post.body.expect("payload");
        let nonce = body["client_payload"]["ack-nonce"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert_eq!(nonce.len(), 32, "{nonce}");
        assert!(nonce.bytes().all(|b| b.is_ascii_hexdigit()), "{nonce}");
        assert_eq!(
            body,
            json!({"event_type": "stage-results", "client_payload": {
            "source-repository": "acme/bench", "pr-number": "7", "run-id": "301", "run-attempt": "2",
            "run-date": "2026-08-22", "requested-by": "writer", "comment-id": id, "ack-nonce": nonce}})
        );
        let ack = c[0]["body"].as_str().unwrap_or_default();
        assert!(
            ack.ends_with(&format!(
                "\n\n<!-- sweepkit:stage-results-ack run-id=301 nonce-sha256={} -->",
                super::sha256_hex(&nonce)
            )),
            "{ack}"
        );
        assert!(
            !ack.contains(&nonce),
            "the public comment carries only the hash"
        );
    }

    #[test]
    fn two_dispatches_get_different_nonces() {
        let s = dispatch_server();
        s.add_route(Route::empty("POST", FRONTEND, 204));
        let d = test_kit::temp_dir();
        write(
            d.path(),
            "artifacts/results_bmk/agg.json",
            &json!([fixed(4)]),
        );
        write(d.path(), "artifacts/run-stats/run_stats.json", &json!({}));
        test_kit::assert_exit(&dispatch(&s, d.path()), 0);
        test_kit::assert_exit(&dispatch(&s, d.path()), 0);
        let nonces: Vec<String> = s
            .requests()
            .into_iter()
            .filter(|r| r.path == FRONTEND)
            .filter_map(|r| {
                r.body?["client_payload"]["ack-nonce"]
                    .as_str()
                    .map(str::to_string)
            })
            .collect();
        assert_eq!(nonces.len(), 2);
        assert_ne!(nonces[0], nonces[1]);
    }

    #[test]
    fn the_callback_with_the_dispatched_nonce_edits_the_acknowledgement() {
        let s = dispatch_server();
        s.add_route(Route::empty("POST", FRONTEND, 204));
        let d = test_kit::temp_dir();
        write(
            d.path(),
            "artifacts/results_bmk/agg.json",
            &json!([fixed(4)]),
        );
        write(d.path(), "artifacts/run-stats/run_stats.json", &json!({}));
        test_kit::assert_exit(&dispatch(&s, d.path()), 0);
        let payload = s
            .requests()
            .into_iter()
            .find(|r| r.path == FRONTEND)
            .and_then(|r| r.body)
            .expect("dispatched")["client_payload"]
            .clone();
        let mut ack = s.comments("acme/bench", 7)[0].clone();
        let id = ack["id"].as_u64().expect("id");
        ack["issue_url"] = json!(format!("{}/repos/acme/bench/issues/7", s.base_url()));
        s.add_route(Route::json(
            "GET",
            &format!("{R}/issues/comments/{id}"),
            ack,
        ));
        s.add_route(Route::empty("GET", "/user", 403));
        let p = json!({"source-repository": "SemiAnalysisAI/InferenceX-app", "run-id": "301",
            "run-date": "2026-08-22", "pr-number": "7", "requested-by": "writer", "app-run-id": "9001",
            "comment-id": payload["comment-id"], "ack-nonce": payload["ack-nonce"], "stage-succeeded": "true"});
        test_kit::assert_exit(
            &super::callback::callback(&s, "stage-results-completed", &p),
            0,
        );
        let body = s.comments("acme/bench", 7)[0]["body"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(body.starts_with("@writer staged run 301: "), "{body}");
        assert!(
            body.contains("<!-- sweepkit:stage-results-ack run-id=301 "),
            "{body}"
        );
    }

    #[test]
    fn artifacts_that_fail_validation_are_not_dispatched() {
        let s = dispatch_server();
        s.add_route(Route::empty("POST", FRONTEND, 204));
        let d = test_kit::temp_dir();
        // Fixed-sequence results without their run-stats artifact.
        write(
            d.path(),
            "artifacts/results_bmk/agg.json",
            &json!([fixed(4)]),
        );
        let out = dispatch(&s, d.path());
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("missing run-stats artifact"),
            "{}",
            stderr(&out)
        );
        assert_eq!(s.count("POST", FRONTEND), 0);
        let body = s.comments("acme/bench", 7)[0]["body"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            body.contains("cannot be staged: its artifacts failed validation"),
            "{body}"
        );
    }

    #[test]
    fn a_missing_artifacts_directory_or_token_cannot_work() {
        let s = dispatch_server();
        let d = test_kit::temp_dir();
        let out = dispatch(&s, d.path());
        test_kit::assert_exit(&out, 2);
        assert!(s.comments("acme/bench", 7).is_empty());
        let out = run(
            &s,
            d.path(),
            &[
                "stage-dispatch",
                "--pr-number",
                "7",
                "--run-id",
                "1",
                "--run-attempt",
                "1",
                "--run-date",
                "x",
                "--run-url",
                "x",
                "--requested-by",
                "x",
                "--artifacts-dir",
                ".",
            ],
            &[],
        );
        test_kit::assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("STAGE_TOKEN is required"),
            "{}",
            stderr(&out)
        );
    }
}

pub(crate) mod callback {
    use super::*;

    const NONCE: &str = "0123456789abcdef0123456789abcdef";
    const ACK: &str = "/repos/acme/bench/issues/comments/4000000001";

    fn payload() -> Value {
        json!({"source-repository": "SemiAnalysisAI/InferenceX-app", "run-id": "301", "run-date": "2026-08-22",
               "pr-number": "7", "requested-by": "writer", "app-run-id": "9001", "comment-id": "4000000001",
               "ack-nonce": NONCE, "stage-succeeded": "true"})
    }

    fn marker(run: &str, nonce: &str) -> String {
        format!(
            "<!-- sweepkit:stage-results-ack run-id={run} nonce-sha256={} -->",
            sha256_hex(nonce)
        )
    }

    /// The acknowledgement as `GET …/issues/comments/<id>` answers it.
    fn ack(s: &FakeGitHub, author: &str, issue: u64, body: &str) -> Value {
        json!({"id": 4000000001u64, "body": body, "user": {"login": author},
               "issue_url": format!("{}/repos/acme/bench/issues/{issue}", s.base_url())})
    }

    pub(crate) fn callback(s: &FakeGitHub, action: &str, p: &Value) -> Output {
        let d = test_kit::temp_dir();
        let ev = d.path().join("event.json");
        std::fs::write(
            &ev,
            json!({"action": action, "client_payload": p}).to_string(),
        )
        .expect("event");
        run(
            s,
            d.path(),
            &["stage-callback"],
            &[("GITHUB_EVENT_PATH", &ev.to_string_lossy())],
        )
    }

    /// PR #7 with the acknowledgement of run 301 made with [`NONCE`] by
    /// the workflow token (`GET /user` answers 403, as to an installation
    /// token).
    fn seeded() -> FakeGitHub {
        let s = FakeGitHub::start().expect("server");
        let body = format!("@writer staging run 301\n\n{}", marker("301", NONCE));
        let c = ack(&s, "github-actions[bot]", 7, &body);
        s.with_comments("acme/bench", 7, vec![c.clone()]);
        s.add_route(Route::json("GET", ACK, c));
        s.add_route(Route::empty("GET", "/user", 403));
        s
    }

    #[test]
    fn only_our_own_acknowledgement_on_that_pr_with_the_callbacks_nonce_is_edited() {
        let good = format!("@writer staging run 301\n\n{}", marker("301", NONCE));
        const BOT: &str = "github-actions[bot]";
        let with = |run: &str, nonce: &str| format!("x\n\n{}", marker(run, nonce));
        let cases: Vec<(&str, &str, u64, String, &str)> = vec![
            (
                "someone else's comment",
                "mallory",
                7,
                with("301", NONCE),
                "it was written by \"mallory\", not by github-actions[bot]",
            ),
            (
                "a comment on another issue",
                BOT,
                8,
                with("301", NONCE),
                "it is not on PR #7 of acme/bench",
            ),
            (
                "a comment without the marker",
                BOT,
                7,
                "## Sweep summary".into(),
                "it has no acknowledgement marker",
            ),
            (
                "another nonce",
                BOT,
                7,
                with("301", "ffffffffffffffffffffffffffffffff"),
                "the callback's ack-nonce is not the one the acknowledgement was made with",
            ),
            (
                "another run's acknowledgement",
                BOT,
                7,
                with("299", NONCE),
                "it acknowledges run 299, not run 301",
            ),
        ];
        for (what, author, issue, body, want) in cases {
            let s = seeded();
            let c = ack(&s, author, issue, &body);
            s.with_comments("acme/bench", 7, vec![c.clone()]);
            s.add_route(Route::json("GET", ACK, c.clone()));
            let out = callback(&s, "stage-results-completed", &payload());
            test_kit::assert_exit(&out, 1);
            assert!(stderr(&out).contains(want), "{what}: {}", stderr(&out));
            assert_eq!(s.count("PATCH", ACK), 0, "{what}");
            assert_eq!(s.comments("acme/bench", 7), vec![c], "{what}");
        }
        // The same callback against our own acknowledgement does edit it.
        let s = seeded();
        test_kit::assert_exit(&callback(&s, "stage-results-completed", &payload()), 0);
        assert_eq!(s.count("PATCH", ACK), 1);
        assert_ne!(s.comments("acme/bench", 7)[0]["body"], good);
    }

    #[test]
    fn a_wrong_nonce_or_a_missing_comment_is_refused_without_an_edit() {
        let s = seeded();
        let mut p = payload();
        p["ack-nonce"] = json!("fedcba9876543210fedcba9876543210");
        let out = callback(&s, "stage-results-completed", &p);
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("ack-nonce is not the one"),
            "{}",
            stderr(&out)
        );
        assert_eq!(s.count("PATCH", ACK), 0);

        let s = seeded();
        let mut p = payload();
        p["comment-id"] = json!("4000000002");
        let out = callback(&s, "stage-results-completed", &p);
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("there is no such comment in acme/bench"),
            "{}",
            stderr(&out)
        );
        assert!(s.requests().iter().all(|r| r.method != "PATCH"));
    }

    #[test]
    fn with_a_user_token_the_author_must_be_that_user() {
        let s = seeded();
        s.add_route(Route::json("GET", "/user", json!({"login": "staging-bot"})));
        let out = callback(&s, "stage-results-completed", &payload());
        test_kit::assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("not by staging-bot"),
            "{}",
            stderr(&out)
        );
        assert_eq!(s.count("PATCH", ACK), 0);
        let body = format!("@writer staging run 301\n\n{}", marker("301", NONCE));
        s.add_route(Route::json("GET", ACK, ack(&s, "staging-bot", 7, &body)));
        test_kit::assert_exit(&callback(&s, "stage-results-completed", &payload()), 0);
        assert_eq!(s.count("PATCH", ACK), 1);
    }

    #[test]
    fn the_edit_keeps_the_marker_so_the_completion_finds_the_acknowledgement_again() {
        let s = seeded();
        test_kit::assert_exit(&callback(&s, "stage-results-started", &payload()), 0);
        let after_start = s.comments("acme/bench", 7)[0].clone();
        let body = after_start["body"].as_str().unwrap_or_default().to_string();
        assert!(
            body.ends_with(&format!("\n\n{}", marker("301", NONCE))),
            "{body}"
        );
        s.add_route(Route::json(
            "GET",
            ACK,
            ack(&s, "github-actions[bot]", 7, &body),
        ));
        test_kit::assert_exit(&callback(&s, "stage-results-completed", &payload()), 0);
        assert_eq!(s.count("PATCH", ACK), 2);
    }

    #[test]
    fn completion_updates_the_acknowledgement_with_the_chart_link() {
        let s = seeded();
        let out = callback(&s, "stage-results-completed", &payload());
        test_kit::assert_exit(&out, 0);
        let c = s.comments("acme/bench", 7);
        assert_eq!(c.len(), 1, "updated in place");
        let body = c[0]["body"].as_str().unwrap_or_default();
        assert!(body.starts_with("@writer staged run 301: https://inferencemax-app-git-staging-semianalysisai.vercel.app/inference?i_dates=2026-08-22~r301\n"), "{body}");
        assert!(
            body.contains("(https://github.com/SemiAnalysisAI/InferenceX-app/actions/runs/9001)"),
            "{body}"
        );
    }

    #[test]
    fn start_and_failure_have_their_own_text_and_no_comment_id_means_a_new_comment() {
        let s = seeded();
        let mut p = payload();
        p["comment-id"] = json!("");
        test_kit::assert_exit(&callback(&s, "stage-results-started", &p), 0);
        let mut p2 = payload();
        p2["stage-succeeded"] = json!("false");
        test_kit::assert_exit(&callback(&s, "stage-results-completed", &p2), 0);
        let c = s.comments("acme/bench", 7);
        assert_eq!(c.len(), 2);
        assert!(c[1]["body"].as_str().unwrap_or_default().contains("staging workflow](https://github.com/SemiAnalysisAI/InferenceX-app/actions/runs/9001) is running"));
        assert_eq!(
            c[0]["body"],
            format!(
                "@writer staging run 301 failed. [Inspect the staging workflow](https://github.com/SemiAnalysisAI/InferenceX-app/actions/runs/9001).\n\n{}",
                marker("301", NONCE)
            )
        );
    }

    #[test]
    fn forged_or_malformed_callbacks_are_refused_without_a_comment() {
        let cases: Vec<(&str, &str, Value, &str)> = vec![
            (
                "stage-results-completed",
                "source-repository",
                json!("evil/app"),
                "unsupported staging callback source",
            ),
            (
                "stage-results-completed",
                "run-id",
                json!("301; rm"),
                "must be numeric",
            ),
            (
                "stage-results-completed",
                "app-run-id",
                json!(""),
                "must be numeric",
            ),
            (
                "stage-results-completed",
                "comment-id",
                json!("x"),
                "comment identifier must be numeric",
            ),
            (
                "stage-results-completed",
                "ack-nonce",
                json!(""),
                "ack-nonce must be the acknowledgement's nonce",
            ),
            (
                "stage-results-completed",
                "ack-nonce",
                json!("0123456789ABCDEF0123456789ABCDEF"),
                "ack-nonce must be the acknowledgement's nonce",
            ),
            (
                "stage-results-completed",
                "run-date",
                json!("2026-8-22"),
                "YYYY-MM-DD",
            ),
            (
                "stage-results-completed",
                "requested-by",
                json!("@everyone here"),
                "not a valid GitHub login",
            ),
            (
                "stage-results-completed",
                "stage-succeeded",
                json!("yes"),
                "true or false",
            ),
            (
                "stage-results-deleted",
                "run-id",
                json!("301"),
                "unsupported staging callback type",
            ),
        ];
        for (action, key, value, want) in cases {
            let s = seeded();
            let mut p = payload();
            p[key] = value;
            let out = callback(&s, action, &p);
            test_kit::assert_exit(&out, 1);
            assert!(stderr(&out).contains(want), "{want}: {}", stderr(&out));
            assert_eq!(
                s.comments("acme/bench", 7)[0]["body"],
                format!("@writer staging run 301\n\n{}", marker("301", NONCE)),
                "{want}"
            );
            assert!(s.requests().is_empty(), "{want}");
        }
    }
}
