//! Fetching a benchmarks-API response for `--baseline-url`: one plain GET
//! with a timeout, retried on connection errors, 429 and 5xx. Non-2xx
//! answers become errors carrying the status and the start of the body
//! (the API explains itself there, e.g. `{"error":"Unknown model"}`).

use std::time::Duration;

use crate::CompareError;

/// Largest response accepted (the API returns one date's rows).
const MAX_BODY: u64 = 256 * 1024 * 1024;

/// Retry schedule: the pause before each further attempt.
const BACKOFF: &[Duration] = &[Duration::from_millis(500), Duration::from_secs(2)];

/// GETs `url` and returns the body of a 2xx answer.
pub fn fetch(url: &str, timeout: Duration) -> Result<String, CompareError> {
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
                    .limit(MAX_BODY)
                    .read_to_string()
                    .map_err(|e| err(format!("reading the body: {e}")))?;
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
