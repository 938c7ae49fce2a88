//! Retry policy: which answers are transient, how long to wait, when to stop.
//!
//! Transient: any 5xx, 429, and a 403 that GitHub marks as a rate limit
//! (`Retry-After`, `x-ratelimit-remaining: 0`, or a "secondary rate limit"
//! message). The wait is GitHub's own (`Retry-After`, else the
//! `x-ratelimit-reset` time), else exponential backoff from `base_delay`.
//! Every wait is bounded by `max_delay`: when GitHub asks for more (a
//! primary limit resetting in 40 minutes), the call fails at once with that
//! in the message rather than stalling a CI job.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::HeaderMap;

/// How often and how long to retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included (1 = no retry).
    pub max_attempts: u32,
    /// First backoff step; doubles with each retry.
    pub base_delay: Duration,
    /// Longest single wait, GitHub's requested waits included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_secs(2),
            max_delay: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The default policy, overridden by `SWEEPKIT_GITHUB_MAX_ATTEMPTS`,
    /// `SWEEPKIT_GITHUB_RETRY_BASE_MS` and `SWEEPKIT_GITHUB_RETRY_MAX_MS`
    /// (tests use these to keep waits in milliseconds).
    pub fn from_env() -> Self {
        let num = |var: &str| {
            std::env::var(var)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        let d = RetryPolicy::default();
        RetryPolicy {
            max_attempts: num("SWEEPKIT_GITHUB_MAX_ATTEMPTS")
                .map_or(d.max_attempts, |n| n.clamp(1, 20) as u32),
            base_delay: num("SWEEPKIT_GITHUB_RETRY_BASE_MS")
                .map_or(d.base_delay, Duration::from_millis),
            max_delay: num("SWEEPKIT_GITHUB_RETRY_MAX_MS")
                .map_or(d.max_delay, Duration::from_millis),
        }
    }

    /// The wait before attempt `attempt + 1`, or `None` to give up.
    /// `asked` is the wait GitHub requested, if any.
    /// `floor` is a recommended minimum (GitHub's "wait a minute" for a
    /// secondary limit without a header), still bounded by `max_delay`.
    pub(crate) fn backoff(
        &self,
        attempt: u32,
        asked: Option<Duration>,
        floor: Option<Duration>,
    ) -> Option<Duration> {
        if attempt >= self.max_attempts {
            return None;
        }
        match asked {
            Some(w) if w > self.max_delay => None,
            Some(w) => Some(w),
            None => {
                let factor = 1u32 << (attempt.saturating_sub(1)).min(16);
                let exp = self.base_delay.saturating_mul(factor);
                Some(exp.max(floor.unwrap_or_default()).min(self.max_delay))
            }
        }
    }
}

/// A transient answer and the wait GitHub asked for.
pub(crate) struct Transient {
    pub(crate) wait: Option<Duration>,
    pub(crate) floor: Option<Duration>,
    pub(crate) server_error: bool,
}

/// `Some` when `status` (with these headers and message) is worth retrying.
pub(crate) fn classify(status: u16, headers: &HeaderMap, message: &str) -> Option<Transient> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let retry_after = header("retry-after")
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_secs);
    let exhausted = header("x-ratelimit-remaining") == Some("0");
    let reset_wait = header("x-ratelimit-reset")
        .and_then(|v| v.parse::<u64>().ok())
        .map(|reset| {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            Duration::from_secs(reset.saturating_sub(now).max(1))
        });
    let asked = retry_after.or(if exhausted { reset_wait } else { None });
    let secondary = message
        .to_ascii_lowercase()
        .contains("secondary rate limit");
    match status {
        500..=599 => Some(Transient {
            wait: asked,
            floor: None,
            server_error: true,
        }),
        429 => Some(Transient {
            wait: asked,
            floor: None,
            server_error: false,
        }),
        403 if retry_after.is_some() || exhausted || secondary => Some(Transient {
            wait: asked,
            // GitHub's guidance for a secondary limit without a header:
            // wait at least a minute (bounded by the policy).
            floor: secondary.then_some(Duration::from_secs(60)),
            server_error: false,
        }),
        _ => None,
    }
}

/// The distinct messages of an error and its sources, joined with `: `.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = Vec::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        let s = err.to_string();
        if !s.is_empty() && !parts.contains(&s) {
            parts.push(s);
        }
        source = err.source();
    }
    if parts.is_empty() {
        "transport error".to_string()
    } else {
        parts.join(": ")
    }
}

pub(crate) fn log_retry(
    method: &str,
    endpoint: &str,
    why: &str,
    wait: Duration,
    attempt: u32,
    policy: &RetryPolicy,
) {
    eprintln!(
        "warning: GitHub API {method} {endpoint}: {why}; retry {}/{} in {:.1} s",
        attempt,
        policy.max_attempts.saturating_sub(1),
        wait.as_secs_f64()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            if let Ok(v) = v.parse() {
                h.insert(*k, v);
            }
        }
        h
    }

    #[test]
    fn server_errors_and_429_are_transient() {
        assert!(classify(502, &HeaderMap::new(), "Bad Gateway").is_some_and(|t| t.server_error));
        let t = classify(429, &headers(&[("retry-after", "7")]), "x");
        assert_eq!(t.and_then(|t| t.wait), Some(Duration::from_secs(7)));
    }

    #[test]
    fn plain_403_and_404_are_final() {
        assert!(
            classify(
                403,
                &HeaderMap::new(),
                "Resource not accessible by integration"
            )
            .is_none()
        );
        assert!(classify(404, &HeaderMap::new(), "Not Found").is_none());
        assert!(classify(422, &HeaderMap::new(), "Validation Failed").is_none());
    }

    #[test]
    fn rate_limit_403s_are_transient() {
        let secondary = classify(
            403,
            &HeaderMap::new(),
            "You have exceeded a secondary rate limit.",
        );
        assert_eq!(
            secondary.and_then(|t| t.floor),
            Some(Duration::from_secs(60))
        );
        let far = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() + 100)
            .unwrap_or(0)
            .to_string();
        let primary = classify(
            403,
            &headers(&[("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", &far)]),
            "API rate limit exceeded",
        );
        let w = primary.and_then(|t| t.wait).unwrap_or_default();
        assert!(
            w >= Duration::from_secs(98) && w <= Duration::from_secs(101),
            "{w:?}"
        );
    }

    #[test]
    fn backoff_doubles_is_capped_and_bounded() {
        let p = RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(250),
        };
        assert_eq!(p.backoff(1, None, None), Some(Duration::from_millis(100)));
        assert_eq!(p.backoff(2, None, None), Some(Duration::from_millis(200)));
        assert_eq!(p.backoff(3, None, None), Some(Duration::from_millis(250)));
        assert_eq!(p.backoff(4, None, None), None);
        let asked = Some(Duration::from_millis(240));
        assert_eq!(p.backoff(1, asked, None), asked);
        assert_eq!(p.backoff(1, Some(Duration::from_secs(3600)), None), None);
        let floor = Some(Duration::from_secs(60));
        assert_eq!(p.backoff(1, None, floor), Some(Duration::from_millis(250)));
    }
}
