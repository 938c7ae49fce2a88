//! Plain HTTP GETs of a URL outside the GitHub API (`compare-results
//! --baseline-url`, the benchmarks API; an artifact's signed download URL)
//! on the same transport as the GitHub client (ureq over rustls/ring) and
//! with the same [`RetryPolicy`]: the workspace has one HTTP client and one
//! retry policy.
//!
//! One GET: a timeout for the whole attempt (connect, answer and body), a
//! cap on the body, retries on transport failures and on what the policy
//! calls transient (5xx, 429, honouring `Retry-After`). Any other non-2xx
//! answer is final and carries its status and the start of its body (an API
//! explains itself there, e.g. `{"error":"Unknown model"}`).

use std::time::Duration;

use crate::retry::{self, RetryPolicy};
use crate::transport::{self, Outcome, Timeouts};

/// Characters of a failed answer's body kept in the error.
const EXCERPT_CHARS: usize = 300;

/// What to fetch and how.
#[derive(Debug, Clone)]
pub struct Get<'a> {
    /// An absolute `http://` or `https://` URL.
    pub url: &'a str,
    /// The `Accept` header.
    pub accept: &'a str,
    /// The `User-Agent` header.
    pub user_agent: &'a str,
    /// Limit for one whole attempt (connect, answer, body).
    pub timeout: Duration,
    /// Largest body accepted, in bytes.
    pub max_body: usize,
    pub retry: RetryPolicy,
}

/// Why a GET gave no body.
#[derive(Debug, thiserror::Error)]
pub enum GetError {
    /// The URL or the client could not be set up.
    #[error("{0}")]
    Config(String),
    /// A non-2xx answer: final, or still transient when the retries ran out.
    #[error("HTTP {status}: {excerpt}{}", after(*.attempts))]
    Status {
        status: u16,
        /// The start of the body, trimmed.
        excerpt: String,
        attempts: u32,
    },
    /// No complete answer (refused, reset, timed out) after the retries.
    #[error("{message}{}", after(*.attempts))]
    Transport { message: String, attempts: u32 },
    /// The body (or its `Content-Length`) is over [`Get::max_body`]; not retried.
    #[error("response body larger than the {limit} byte limit; refused")]
    TooLarge { limit: usize },
}

fn after(attempts: u32) -> String {
    if attempts > 1 {
        format!(" (after {attempts} attempts)")
    } else {
        String::new()
    }
}

/// `url` without its query string: a signed download URL (an artifact's
/// redirect target) carries its credential there, which a log must not show.
fn without_query(url: &str) -> &str {
    url.split_once('?').map_or(url, |(u, _)| u)
}

/// GETs `get.url` and returns the body of a 2xx answer as text.
pub fn get_text(get: &Get<'_>) -> Result<String, GetError> {
    let (body, attempts) = get_body(get)?;
    String::from_utf8(body).map_err(|_| GetError::Transport {
        message: "reading the body: not UTF-8".to_string(),
        attempts,
    })
}

/// GETs `get.url` and returns the body of a 2xx answer as bytes (an
/// artifact's zip, from the signed URL GitHub redirects to).
pub fn get_bytes(get: &Get<'_>) -> Result<Vec<u8>, GetError> {
    get_body(get).map(|(body, _)| body)
}

/// The body of a 2xx answer and the attempts it took.
fn get_body(get: &Get<'_>) -> Result<(Vec<u8>, u32), GetError> {
    check_url(get.url)?;
    let agent = transport::agent(get.user_agent, Timeouts::Global(get.timeout));
    let mut attempt: u32 = 0;
    loop {
        attempt += 1;
        let outcome = transport::send(
            &agent,
            "GET",
            get.url,
            &[("accept", get.accept)],
            None,
            get.max_body,
        )
        .map_err(|e| GetError::Config(e.to_string()))?;
        let (failure, asked) = match outcome {
            Outcome::TooLarge => {
                return Err(GetError::TooLarge {
                    limit: get.max_body,
                });
            }
            Outcome::Answer {
                status,
                headers,
                body,
            } => {
                if (200..300).contains(&status) {
                    return Ok((body, attempt));
                }
                status_failure(status, &headers, &body, attempt)?
            }
            Outcome::Failed(f) => (
                GetError::Transport {
                    message: transport_message(get, f),
                    attempts: attempt,
                },
                (None, None),
            ),
        };
        match get.retry.backoff(attempt, asked.0, asked.1) {
            Some(wait) => {
                eprintln!(
                    "warning: GET {}: {failure}; retry {}/{} in {:.1} s",
                    without_query(get.url),
                    attempt,
                    get.retry.max_attempts.saturating_sub(1),
                    wait.as_secs_f64()
                );
                std::thread::sleep(wait);
            }
            None => return Err(failure),
        }
    }
}

/// Refuses anything but an absolute `http://` or `https://` URL with a host.
fn check_url(url: &str) -> Result<(), GetError> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e| GetError::Config(format!("not a valid URL: {e}")))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
        return Err(GetError::Config(
            "not a valid URL: give an absolute http:// or https:// URL".to_string(),
        ));
    }
    Ok(())
}

/// The wait the server asked for (`Retry-After`) and the recommended minimum.
type Asked = (Option<Duration>, Option<Duration>);

/// A non-2xx answer as an error: `Err` when it is final, else the error
/// to report if the retries run out and what the server asked to wait.
fn status_failure(
    status: u16,
    headers: &http::HeaderMap,
    body: &[u8],
    attempt: u32,
) -> Result<(GetError, Asked), GetError> {
    let text = String::from_utf8_lossy(body);
    let excerpt: String = text.chars().take(EXCERPT_CHARS).collect();
    let excerpt = excerpt.trim().to_string();
    let transient = retry::classify(status, headers, &excerpt);
    let failure = GetError::Status {
        status,
        excerpt,
        attempts: attempt,
    };
    match transient {
        None => Err(failure),
        Some(t) => Ok((failure, (t.wait, t.floor))),
    }
}

/// Why an attempt gave no complete answer, as the error says it.
fn transport_message(get: &Get<'_>, f: transport::Failure) -> String {
    if f.timed_out {
        format!(
            "no complete answer within {:.1} s",
            get.timeout.as_secs_f64()
        )
    } else if f.reading_body {
        format!("reading the body: {}", f.message)
    } else {
        f.message
    }
}
