//! The workspace's one HTTP transport: blocking ureq over rustls (ring,
//! Mozilla roots). The GitHub client ([`crate::Client`]) and the plain GET
//! ([`crate::fetch`]) send every request through [`send`], so both share one
//! client, one TLS set-up and one way of reading bodies; the retry policy
//! around it stays theirs ([`crate::RetryPolicy`]).
//!
//! Settings common to both: no redirect is followed (an artifact's redirect
//! is read by [`crate::Client::redirect_location`] and its target fetched
//! without the token), no proxy from the environment (as before: the
//! runners these tools serve reach GitHub directly), non-2xx statuses are
//! answers, not errors, and bodies are read up to a cap.

use std::time::Duration;

use http::HeaderMap;

use crate::retry::error_chain;

/// Connect timeout of every request: a host that does not accept a
/// connection in this time is down, whatever the read timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How the requests of one agent time out.
pub(crate) enum Timeouts {
    /// Each read of the answer (GitHub: a slow page still streams).
    PerRead(Duration),
    /// The whole call, connect to last byte of the body.
    Global(Duration),
}

/// An agent (connection pool and settings) for one tool run.
pub(crate) fn agent(user_agent: &str, timeouts: Timeouts) -> ureq::Agent {
    let builder = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .user_agent(user_agent)
        .timeout_connect(Some(CONNECT_TIMEOUT));
    let builder = match timeouts {
        Timeouts::PerRead(d) => builder.timeout_per_read(Some(d)),
        Timeouts::Global(d) => builder.timeout_global(Some(d)),
    };
    builder.build().new_agent()
}

/// One request's outcome.
pub(crate) enum Outcome {
    /// An answer of any status, its body read in full.
    Answer {
        status: u16,
        headers: HeaderMap,
        body: Vec<u8>,
    },
    /// The body (or its `Content-Length`) is over the cap.
    TooLarge,
    /// No usable answer.
    Failed(Failure),
}

/// Why a request gave no answer.
pub(crate) struct Failure {
    /// The cause, readable (the error and its sources).
    pub(crate) message: String,
    /// The request certainly never reached the server (the connection was
    /// refused or never made): safe to repeat even when not idempotent.
    pub(crate) before_sending: bool,
    /// A timeout ended it.
    pub(crate) timed_out: bool,
    /// The answer had started: the status line came, its body did not.
    pub(crate) reading_body: bool,
}

impl Failure {
    fn of(e: &ureq::Error, reading_body: bool) -> Self {
        use std::io::ErrorKind;
        let before_sending = !reading_body
            && match e {
                ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => true,
                ureq::Error::Timeout(t) => {
                    matches!(t, ureq::Timeout::Connect | ureq::Timeout::Resolve)
                }
                ureq::Error::Io(io) => matches!(
                    io.kind(),
                    ErrorKind::ConnectionRefused | ErrorKind::AddrNotAvailable
                ),
                _ => false,
            };
        Failure {
            message: error_chain(e),
            before_sending,
            timed_out: matches!(e, ureq::Error::Timeout(_)),
            reading_body,
        }
    }
}

/// The request could not be built (a URL or header `http` refuses): a
/// configuration error, not worth a retry.
#[derive(Debug, thiserror::Error)]
#[error("building the request: {0}")]
pub(crate) struct BuildError(#[from] http::Error);

/// Sends one request (`body` as given, no body when `None`) and reads the
/// answer's body up to `max_body` bytes.
pub(crate) fn send(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<(&str, Vec<u8>)>,
    max_body: usize,
) -> Result<Outcome, BuildError> {
    let mut request = http::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let sent = match body {
        Some((content_type, bytes)) => request
            .header(http::header::CONTENT_TYPE, content_type)
            .body(bytes)
            .map(|r| agent.run(r)),
        None => request.body(()).map(|r| agent.run(r)),
    }?;
    let mut response = match sent {
        Ok(r) => r,
        Err(e) => return Ok(Outcome::Failed(Failure::of(&e, false))),
    };
    let declared = response
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_body as u64) {
        return Ok(Outcome::TooLarge);
    }
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    match response
        .body_mut()
        .with_config()
        .limit(max_body as u64)
        .read_to_vec()
    {
        Ok(body) => Ok(Outcome::Answer {
            status,
            headers,
            body,
        }),
        Err(ureq::Error::BodyExceedsLimit(_)) => Ok(Outcome::TooLarge),
        Err(e) => Ok(Outcome::Failed(Failure::of(&e, true))),
    }
}
