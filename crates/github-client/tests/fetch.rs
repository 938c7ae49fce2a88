//! `github_client::fetch`, the plain GET for URLs outside the GitHub API,
//! against the fake server: same retry policy as the client, a timeout per
//! whole attempt, final errors with the status and the body's start.

use std::time::Duration;

use github_client::RetryPolicy;
use github_client::fetch::{Get, GetError, get_text};
use test_kit::{FakeGitHub, Fault};

fn get(url: &str, timeout: Duration) -> Get<'_> {
    Get {
        url,
        accept: "application/json",
        user_agent: "sweepkit-test",
        timeout,
        max_body: 1024,
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(500),
        },
    }
}

fn server() -> FakeGitHub {
    let s = test_kit::fake_github();
    s.serve_bytes("/data", "application/json", "[1]");
    s
}

#[test]
fn transient_answers_are_retried_then_the_body_is_returned() {
    let s = server();
    s.inject(
        "GET",
        "/data",
        [
            Fault::Status(502),
            Fault::TooManyRequests { retry_after: 0 },
        ],
    );
    let url = format!("{}/data", s.base_url());
    assert_eq!(
        get_text(&get(&url, Duration::from_secs(5))).expect("body"),
        "[1]"
    );
    assert_eq!(s.count("GET", "/data"), 3);
}

#[test]
fn a_client_error_is_final_with_status_and_body() {
    let s = server();
    s.with_benchmarks("M", "2026-08-01", serde_json::json!([]));
    let url = s.benchmarks_url("Other", "2026-08-01");
    let err = get_text(&get(&url, Duration::from_secs(5))).expect_err("400");
    assert!(
        matches!(
            &err,
            GetError::Status {
                status: 400,
                attempts: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.to_string(), r#"HTTP 400: {"error":"Unknown model"}"#);
    assert_eq!(s.count("GET", test_kit::fake_github::BENCHMARKS_PATH), 1);
}

#[test]
fn a_retry_after_beyond_the_policy_fails_at_once() {
    let s = server();
    s.inject("GET", "/data", [Fault::TooManyRequests { retry_after: 5 }]);
    let url = format!("{}/data", s.base_url());
    let err = get_text(&get(&url, Duration::from_secs(5))).expect_err("5 s > 500 ms");
    assert!(
        matches!(
            err,
            GetError::Status {
                status: 429,
                attempts: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(s.count("GET", "/data"), 1);
}

/// The timeout bounds the whole attempt: a server that answers after a
/// minute is a transport failure, retried, and the next answer is used.
#[test]
fn a_slow_answer_times_out_and_is_retried() {
    let s = server();
    s.inject("GET", "/data", [Fault::Delay(Duration::from_secs(60))]);
    let url = format!("{}/data", s.base_url());
    assert_eq!(
        get_text(&get(&url, Duration::from_millis(300))).expect("second attempt"),
        "[1]"
    );
    assert_eq!(s.count("GET", "/data"), 2);
    s.inject(
        "GET",
        "/data",
        vec![Fault::Delay(Duration::from_secs(60)); 3],
    );
    let err = get_text(&get(&url, Duration::from_millis(300))).expect_err("timeouts");
    assert!(
        matches!(err, GetError::Transport { attempts: 3, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("no complete answer within 0.3 s"),
        "{err}"
    );
}

#[test]
fn a_refused_connection_is_a_transport_error_after_the_retries() {
    let url = format!("{}/data", test_kit::closed_url().expect("port"));
    let err = get_text(&get(&url, Duration::from_secs(5))).expect_err("refused");
    assert!(
        matches!(err, GetError::Transport { attempts: 3, .. }),
        "{err:?}"
    );
    assert!(err.to_string().ends_with(" (after 3 attempts)"), "{err}");
}

#[test]
fn an_oversized_body_is_refused_once() {
    let s = server();
    s.serve_bytes("/big", "application/json", vec![b'1'; 2048]);
    let url = format!("{}/big", s.base_url());
    let err = get_text(&get(&url, Duration::from_secs(5))).expect_err("too large");
    assert!(matches!(err, GetError::TooLarge { limit: 1024 }), "{err:?}");
    assert_eq!(s.count("GET", "/big"), 1);
}

#[test]
fn a_bad_url_is_a_config_error() {
    let err = get_text(&get("not a url", Duration::from_secs(1))).expect_err("bad url");
    assert!(matches!(err, GetError::Config(_)), "{err:?}");
    let err = get_text(&get("ftp://example.com/x", Duration::from_secs(1))).expect_err("not http");
    assert!(
        err.to_string().contains("absolute http:// or https:// URL"),
        "{err}"
    );
}
