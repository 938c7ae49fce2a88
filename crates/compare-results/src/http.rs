//! Fetching a benchmarks-API response for `--baseline-url`: one plain GET
//! with a timeout, retried on connection errors, 429 and 5xx. Non-2xx
//! answers become errors carrying the status and the start of the body
//! (the API explains itself there, e.g. `{"error":"Unknown model"}`).

use std::time::Duration;

use crate::CompareError;

/// Largest response accepted. The API returns one date's rows (a few MB
/// for a full sweep); anything beyond this is not a real answer and is
/// refused before it can take the job's memory.
pub const MAX_BODY: u64 = 256 * 1024 * 1024;

/// Retry schedule: the pause before each further attempt.
const BACKOFF: &[Duration] = &[Duration::from_millis(500), Duration::from_secs(2)];

/// GETs `url` and returns the body of a 2xx answer.
pub fn fetch(url: &str, timeout: Duration) -> Result<String, CompareError> {
    fetch_limited(url, timeout, MAX_BODY)
}

fn fetch_limited(url: &str, timeout: Duration, max_body: u64) -> Result<String, CompareError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .user_agent(concat!(
            "sweepkit-compare-results/",
            env!("CARGO_PKG_VERSION")
        ))
        .build()
        .into();
    let err = |cause: String| CompareError::Http {
        url: url.to_string(),
        cause,
    };
    let mut attempt = 0;
    loop {
        let outcome = agent.get(url).header("Accept", "application/json").call();
        let retry_after = match outcome {
            Ok(mut resp) => {
                let status = resp.status().as_u16();
                let body = resp
                    .body_mut()
                    .with_config()
                    .limit(max_body)
                    .read_to_string()
                    .map_err(|e| match e {
                        ureq::Error::BodyExceedsLimit(_) => err(format!(
                            "response body larger than the {} byte limit (MAX_BODY); refused",
                            max_body
                        )),
                        e => err(format!("reading the body: {e}")),
                    })?;
                if (200..300).contains(&status) {
                    return Ok(body);
                }
                let excerpt: String = body.chars().take(300).collect();
                let message = format!("HTTP {status}: {}", excerpt.trim());
                if status == 429 || status >= 500 {
                    message
                } else {
                    return Err(err(message));
                }
            }
            Err(e) => e.to_string(),
        };
        match BACKOFF.get(attempt) {
            Some(pause) => {
                eprintln!(
                    "compare-results: GET {url} failed ({retry_after}); retrying in {pause:?}"
                );
                std::thread::sleep(*pause);
                attempt += 1;
            }
            None => {
                return Err(err(format!(
                    "{retry_after} (after {} attempts)",
                    attempt + 1
                )));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests: a panic is the failure report
    use super::*;
    use std::io::{Read, Write};

    /// Serves one answer of `len` bytes on loopback, then stops.
    fn serve_once(len: usize) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            if let Ok((mut s, _)) = listener.accept() {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
                );
                let _ = s.write_all(head.as_bytes());
                let _ = s.write_all(&vec![b' '; len]);
            }
        });
        format!("http://{addr}/api")
    }

    /// Issue #16 point 4: the response size is capped, and the error names
    /// the URL and the limit.
    #[test]
    fn bodies_over_the_limit_are_refused() {
        let url = serve_once(4096);
        let e = fetch_limited(&url, Duration::from_secs(5), 1024).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(&url), "{msg}");
        assert!(
            msg.contains("larger than the 1024 byte limit (MAX_BODY)"),
            "{msg}"
        );
        let url = serve_once(512);
        assert_eq!(
            fetch_limited(&url, Duration::from_secs(5), 1024)
                .unwrap()
                .len(),
            512
        );
    }
}
