//! Fetching a benchmarks-API response for `--baseline-url`: one GET through
//! the workspace's HTTP client (`github_client::fetch`: the GitHub client's
//! transport and retry policy), with a timeout, retried on connection
//! errors, 429 and 5xx. Non-2xx answers become errors carrying the status
//! and the start of the body (the API explains itself there, e.g.
//! `{"error":"Unknown model"}`).

use std::time::Duration;

use github_client::RetryPolicy;
use github_client::fetch::{self, Get, GetError};

use crate::CompareError;

/// Largest response accepted. The API returns one date's rows (a few MB
/// for a full sweep); anything beyond this is not a real answer and is
/// refused before it can take the job's memory.
pub const MAX_BODY: usize = 256 * 1024 * 1024;

/// Attempts in total: the first and two retries, as before the client was
/// shared (a CI job waits for its baseline, but not for long).
const ATTEMPTS: u32 = 3;

/// First retry wait (doubling after); the API is not rate limited, so a
/// short pause is enough for a restarting server.
const RETRY_BASE: Duration = Duration::from_millis(500);

/// Longest single wait, the API's own `Retry-After` included.
const RETRY_MAX: Duration = Duration::from_secs(30);

/// GETs `url` and returns the body of a 2xx answer.
pub fn fetch(url: &str, timeout: Duration) -> Result<String, CompareError> {
    fetch_limited(url, timeout, MAX_BODY)
}

fn fetch_limited(url: &str, timeout: Duration, max_body: usize) -> Result<String, CompareError> {
    let get = Get {
        url,
        accept: "application/json",
        user_agent: concat!("sweepkit-compare-results/", env!("CARGO_PKG_VERSION")),
        timeout,
        max_body,
        retry: RetryPolicy {
            max_attempts: ATTEMPTS,
            base_delay: RETRY_BASE,
            max_delay: RETRY_MAX,
        },
    };
    fetch::get_text(&get).map_err(|e| CompareError::Http {
        url: url.to_string(),
        cause: match e {
            GetError::TooLarge { limit } => {
                format!("response body larger than the {limit} byte limit (MAX_BODY); refused")
            }
            other => other.to_string(),
        },
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;

    /// Issue #16 point 4: the response size is capped, and the error names
    /// the URL and the limit.
    #[test]
    fn bodies_over_the_limit_are_refused() {
        let server = test_kit::fake_github();
        server.serve_bytes("/big", "application/json", vec![b' '; 4096]);
        server.serve_bytes("/small", "application/json", vec![b' '; 512]);
        let url = format!("{}/big", server.base_url());
        let e = fetch_limited(&url, Duration::from_secs(5), 1024).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(&url), "{msg}");
        assert!(
            msg.contains("larger than the 1024 byte limit (MAX_BODY)"),
            "{msg}"
        );
        assert_eq!(
            server.count("GET", "/big"),
            1,
            "an oversized body is not retried"
        );
        let url = format!("{}/small", server.base_url());
        assert_eq!(
            fetch_limited(&url, Duration::from_secs(5), 1024)
                .unwrap()
                .len(),
            512
        );
    }

    /// The headers the API has always been sent.
    #[test]
    fn sends_json_accept_and_its_own_user_agent() {
        let server = test_kit::fake_github();
        server.serve_bytes("/api", "application/json", "[]");
        let url = format!("{}/api", server.base_url());
        assert_eq!(fetch(&url, Duration::from_secs(5)).unwrap(), "[]");
        let headers = &server.requests()[0].headers;
        assert_eq!(headers["accept"], "application/json");
        assert_eq!(
            headers["user-agent"],
            concat!("sweepkit-compare-results/", env!("CARGO_PKG_VERSION"))
        );
    }

    /// A server that stays down: three attempts, then the error names the
    /// last cause and the count.
    #[test]
    fn gives_up_after_three_attempts() {
        let server = test_kit::fake_github();
        server.serve_bytes("/api", "application/json", "[]");
        server.fail_always("GET", "/api", test_kit::Fault::Status(503));
        let url = format!("{}/api", server.base_url());
        let msg = fetch(&url, Duration::from_secs(5)).unwrap_err().to_string();
        assert!(msg.starts_with(&format!("GET {url}: HTTP 503: ")), "{msg}");
        assert!(msg.ends_with(" (after 3 attempts)"), "{msg}");
        assert_eq!(server.count("GET", "/api"), 3);
    }
}
