//! The client against the loopback fake server: transient faults are
//! retried, final errors are clear, POSTs are never blindly repeated,
//! listings follow `Link` past 100 items.

use std::time::Duration;

use github_client::{Client, Config, Error, RetryPolicy};
use serde_json::json;
use test_kit::{FakeGitHub, Fault, Route};

fn client(server: &FakeGitHub) -> Client {
    client_with(
        server.base_url(),
        Some("ghp_test"),
        policy(4, Duration::from_millis(5), Duration::from_secs(2)),
        Duration::from_secs(5),
    )
}

/// A client of `api_url` with this token, retry policy and read timeout.
fn client_with(
    api_url: String,
    token: Option<&str>,
    retry: RetryPolicy,
    timeout: Duration,
) -> Client {
    Client::new(Config {
        api_url,
        token: token.map(str::to_string),
        retry,
        timeout,
    })
    .expect("client")
}

fn policy(max_attempts: u32, base_delay: Duration, max_delay: Duration) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay,
        max_delay,
    }
}

fn server() -> FakeGitHub {
    test_kit::fake_github()
}

#[test]
fn get_survives_500_and_502_then_succeeds() {
    let s = server();
    s.add_route(Route::json("GET", "/user", json!({"login": "bot"})));
    s.inject("GET", "/user", [Fault::Status(500), Fault::Status(502)]);
    let body = client(&s).get("/user", &[]).expect("answer after retries");
    assert_eq!(body["login"], "bot");
    assert_eq!(s.count("GET", "/user"), 3);
    let auth = s.requests()[2].headers.get("authorization").cloned();
    assert_eq!(auth.as_deref(), Some("Bearer ghp_test"));
}

/// `Retry-After` is read, not guessed: a policy that waits at most 500 ms
/// refuses GitHub's 1 s at once and says so; one that may wait 2 s retries
/// and gets the answer. (No clock in the assertion: the first client's
/// exponential backoff alone, 5 ms, would have retried.)
#[test]
fn honours_retry_after_on_429() {
    let s = server();
    s.add_route(Route::json("GET", "/user", json!({"login": "bot"})));
    s.inject("GET", "/user", [Fault::TooManyRequests { retry_after: 1 }]);
    let impatient = client_with(
        s.base_url(),
        Some("ghp_test"),
        policy(4, Duration::from_millis(5), Duration::from_millis(500)),
        Duration::from_secs(5),
    );
    let err = impatient
        .get("/user", &[])
        .expect_err("1 s is beyond 500 ms");
    assert_eq!(err.status(), Some(429), "{err}");
    assert!(err.to_string().contains("GitHub asks to wait 1 s"), "{err}");
    assert_eq!(s.count("GET", "/user"), 1);
    s.inject("GET", "/user", [Fault::TooManyRequests { retry_after: 1 }]);
    client(&s)
        .get("/user", &[])
        .expect("answer after the asked wait");
    assert_eq!(s.count("GET", "/user"), 3);
}

/// A server slower than the read timeout is a transport failure, retried
/// like any other (the delay runs in the fake, the test only counts).
#[test]
fn a_server_slower_than_the_timeout_is_retried_then_reported() {
    let s = server();
    s.add_route(Route::json("GET", "/user", json!({"login": "bot"})));
    s.inject(
        "GET",
        "/user",
        [
            Fault::Delay(Duration::from_secs(60)),
            Fault::Delay(Duration::from_secs(60)),
        ],
    );
    let c = client_with(
        s.base_url(),
        None,
        policy(3, Duration::from_millis(1), Duration::from_millis(10)),
        Duration::from_millis(300),
    );
    let body = c.get("/user", &[]).expect("the third attempt is answered");
    assert_eq!(body["login"], "bot");
    assert_eq!(s.count("GET", "/user"), 3);
    s.inject(
        "GET",
        "/user",
        vec![Fault::Delay(Duration::from_secs(60)); 3],
    );
    let err = c.get("/user", &[]).expect_err("every attempt times out");
    assert!(matches!(err, Error::Transport { attempts: 3, .. }), "{err}");
}

#[test]
fn retries_secondary_rate_limit_403() {
    let s = server();
    s.add_route(Route::json("GET", "/user", json!({"login": "bot"})));
    s.inject(
        "GET",
        "/user",
        [
            Fault::SecondaryRateLimit { retry_after: None },
            Fault::SecondaryRateLimit {
                retry_after: Some(0),
            },
        ],
    );
    client(&s).get("/user", &[]).expect("answer");
    assert_eq!(s.count("GET", "/user"), 3);
}

#[test]
fn primary_limit_resetting_too_late_fails_at_once_with_reason() {
    let s = server();
    s.fail_always("GET", "/user", Fault::PrimaryRateLimit { reset_in: 3600 });
    let err = client(&s).get("/user", &[]).expect_err("must fail");
    assert_eq!(s.count("GET", "/user"), 1);
    let msg = err.to_string();
    assert!(
        msg.contains("GET /user failed: HTTP 403: API rate limit exceeded"),
        "{msg}"
    );
    assert!(msg.contains("longer than the 2 s this tool waits"), "{msg}");
}

#[test]
fn gives_a_clear_error_after_the_retry_budget() {
    let s = server();
    s.fail_always("GET", "/repos/o/r", Fault::Status(502));
    let err = client(&s).get("/repos/o/r", &[]).expect_err("must fail");
    assert_eq!(s.count("GET", "/repos/o/r"), 4);
    assert!(matches!(
        err,
        Error::Http {
            status: 502,
            attempts: 4,
            ..
        }
    ));
    assert_eq!(
        err.to_string(),
        "GitHub API GET /repos/o/r failed: HTTP 502: Server Error (gave up after 4 attempts)"
    );
}

#[test]
fn final_errors_are_not_retried_and_name_the_endpoint() {
    let s = server();
    let err = client(&s).get("/repos/o/r/pulls/7", &[]).expect_err("404");
    assert_eq!(s.count("GET", "/repos/o/r/pulls/7"), 1);
    let msg = err.to_string();
    assert!(
        msg.starts_with("GitHub API GET /repos/o/r/pulls/7 failed: HTTP 404: Not Found"),
        "{msg}"
    );
    assert!(!msg.contains("GitHub\n"));
}

#[test]
fn dropped_connection_on_get_is_retried() {
    let s = server();
    s.add_route(Route::json("GET", "/user", json!({"login": "bot"})));
    s.inject("GET", "/user", [Fault::Drop]);
    client(&s).get("/user", &[]).expect("answer");
    assert_eq!(s.count("GET", "/user"), 2);
}

#[test]
fn post_with_server_error_is_not_repeated() {
    let s = server();
    s.with_comments("o/r", 1, vec![]);
    s.inject(
        "POST",
        "/repos/o/r/issues/1/comments",
        [Fault::AppliedThenStatus(502)],
    );
    let err = client(&s)
        .post("/repos/o/r/issues/1/comments", &json!({"body": "hi"}))
        .expect_err("ambiguous");
    assert!(matches!(err, Error::Ambiguous { .. }), "{err}");
    assert_eq!(s.count("POST", "/repos/o/r/issues/1/comments"), 1);
    assert_eq!(s.comments("o/r", 1).len(), 1);
}

#[test]
fn post_rejected_by_rate_limit_is_retried_once_created() {
    let s = server();
    s.with_comments("o/r", 1, vec![]);
    s.inject(
        "POST",
        "/repos/o/r/issues/1/comments",
        [
            Fault::TooManyRequests { retry_after: 0 },
            Fault::SecondaryRateLimit {
                retry_after: Some(0),
            },
        ],
    );
    let created = client(&s)
        .post("/repos/o/r/issues/1/comments", &json!({"body": "hi"}))
        .expect("created");
    assert_eq!(created["body"], "hi");
    assert_eq!(s.comments("o/r", 1).len(), 1);
}

#[test]
fn listing_follows_links_past_100_items_with_auth() {
    let s = server();
    let items: Vec<_> = (0..250).map(|i| json!({"id": i})).collect();
    s.add_route(Route::paginated(
        "GET",
        "/repos/o/r/issues/5/comments",
        json!(items),
        "array",
    ));
    s.inject("GET", "/repos/o/r/issues/5/comments", [Fault::Status(503)]);
    let all = client(&s)
        .get_all("/repos/o/r/issues/5/comments", &[], None)
        .expect("list");
    assert_eq!(all.len(), 250);
    assert_eq!(all[249]["id"], 249);
    let reqs = s.requests();
    let pages: Vec<_> = reqs
        .iter()
        .map(|r| r.query.get("page").cloned().unwrap_or_default())
        .collect();
    assert_eq!(pages, ["", "", "2", "3"]);
    assert!(
        reqs.iter()
            .all(|r| r.query.get("per_page").map(String::as_str) == Some("100"))
    );
    assert!(reqs.iter().all(|r| r.headers.contains_key("authorization")));
}

#[test]
fn listing_of_objects_reads_the_named_key() {
    let s = server();
    let jobs: Vec<_> = (0..130).map(|i| json!({"id": i})).collect();
    s.add_route(Route::paginated(
        "GET",
        "/repos/o/r/actions/runs/1/jobs",
        json!({"total_count": 130, "jobs": jobs}),
        "object:jobs",
    ));
    let c = client(&s);
    let all = c
        .get_all(
            "/repos/o/r/actions/runs/1/jobs",
            &[("filter", "all")],
            Some("jobs"),
        )
        .expect("list");
    assert_eq!(all.len(), 130);
    assert!(
        s.requests()
            .iter()
            .all(|r| r.query.get("filter").map(String::as_str) == Some("all"))
    );
    let err = c
        .get_all("/repos/o/r/actions/runs/1/jobs", &[], None)
        .expect_err("shape");
    assert!(
        err.to_string()
            .contains("returned an unexpected shape: expected an array, got an object"),
        "{err}"
    );
}

#[test]
fn unreachable_server_is_a_transport_error_after_retries() {
    let c = client_with(
        test_kit::closed_url().expect("port"),
        None,
        policy(2, Duration::from_millis(1), Duration::from_millis(10)),
        Duration::from_secs(2),
    );
    let err = c.get("/user", &[]).expect_err("refused");
    assert!(matches!(err, Error::Transport { attempts: 2, .. }), "{err}");
    assert!(
        err.to_string().starts_with("GitHub API GET /user failed: "),
        "{err}"
    );
}

/// Issue #16 point 4: a response body beyond `MAX_BODY_BYTES` is refused
/// with an error naming the endpoint and the limit, and not retried.
#[test]
fn oversized_response_bodies_are_refused() {
    let s = server();
    let big = "x".repeat(github_client::MAX_BODY_BYTES + 1);
    s.add_route(Route::json(
        "GET",
        "/repos/o/r/pulls/1",
        json!({"title": big}),
    ));
    // The fake builds a 32 MiB answer (slow in a debug build on a busy
    // machine): a long timeout keeps this about the size, not the clock.
    let patient = client_with(
        s.base_url(),
        Some("ghp_test"),
        policy(4, Duration::from_millis(5), Duration::from_secs(2)),
        Duration::from_secs(300),
    );
    let err = patient
        .get("/repos/o/r/pulls/1", &[])
        .expect_err("must refuse");
    let msg = err.to_string();
    assert!(
        msg.contains("GET /repos/o/r/pulls/1")
            && msg.contains("larger than the 32 MiB limit (MAX_BODY_BYTES)"),
        "{msg}"
    );
    assert_eq!(s.count("GET", "/repos/o/r/pulls/1"), 1);
    // Just under the limit is read.
    let fits = "x".repeat(1024 * 1024);
    s.add_route(Route::json(
        "GET",
        "/repos/o/r/pulls/2",
        json!({"title": fits}),
    ));
    let ok = patient.get("/repos/o/r/pulls/2", &[]).expect("fits");
    assert_eq!(ok["title"].as_str().map(str::len), Some(1024 * 1024));
}

#[test]
fn put_with_server_error_is_not_repeated_but_a_rate_limit_is() {
    let s = server();
    let merge = "/repos/o/r/pulls/7/merge";
    s.add_route(Route::json(
        "PUT",
        merge,
        json!({"sha": "abc", "merged": true}),
    ));
    s.inject("PUT", merge, [Fault::AppliedThenStatus(502)]);
    let err = client(&s)
        .put(merge, &json!({"sha": "def"}))
        .expect_err("ambiguous");
    assert!(matches!(err, Error::Ambiguous { .. }), "{err}");
    assert!(
        err.to_string().contains("PUT /repos/o/r/pulls/7/merge"),
        "{err}"
    );
    assert_eq!(s.count("PUT", merge), 1);

    s.inject("PUT", merge, [Fault::TooManyRequests { retry_after: 0 }]);
    let body = client(&s)
        .put(merge, &json!({"sha": "def"}))
        .expect("merged after the 429");
    assert_eq!(body["merged"], true);
    assert_eq!(s.count("PUT", merge), 3);
    let sent = s.requests().pop().and_then(|r| r.body);
    assert_eq!(sent, Some(json!({"sha": "def"})));
}

#[test]
fn answer_sequences_progress_and_repeat_their_last_answer() {
    let s = server();
    let path = "/repos/o/r/commits/abc/check-runs";
    s.add_route(Route::json("GET", path, json!({"from": "route"})));
    s.add_sequence("GET", path, vec![json!({"n": 1}), json!({"n": 2})]);
    let c = client(&s);
    let seen: Vec<_> = (0..4)
        .map(|_| c.get(path, &[]).expect("answer")["n"].clone())
        .collect();
    assert_eq!(seen, vec![json!(1), json!(2), json!(2), json!(2)]);
    s.add_route(Route::empty("POST", "/repos/o/r/dispatches", 204));
    let none = c
        .post("/repos/o/r/dispatches", &json!({"event_type": "x"}))
        .expect("204");
    assert!(none.is_null());
}
