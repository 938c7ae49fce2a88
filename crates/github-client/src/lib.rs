//! Small GitHub REST client shared by the GitHub-facing tools
//! (`success-rate`, `visualizer-comment`, `reuse-sweep`).
//!
//! It sits on the workspace's one HTTP transport (blocking ureq over
//! rustls/ring, [`transport`]) and adds what those tools need:
//!
//! * configuration from the Actions environment: `GITHUB_API_URL` (GHES and
//!   tests), token from `GITHUB_TOKEN`/`GH_TOKEN`;
//! * `per_page=100` listings that follow `Link: rel="next"`;
//! * a bounded retry policy: 5xx, 429 and rate-limit 403s are retried,
//!   honouring `Retry-After` and `x-ratelimit-reset`, otherwise with
//!   exponential backoff; a wait longer than the policy allows fails at once
//!   instead of hanging the job. A non-idempotent request (POST) is never
//!   repeated once it may have reached GitHub: a 5xx or a timeout after
//!   sending is reported as [`Error::Ambiguous`] so the caller can check
//!   what happened;
//! * errors that name the method, the endpoint, the status and GitHub's own
//!   message.
//!
//! The API is blocking: the tools make a handful of sequential calls and
//! stay simple synchronous programs.
//!
//! [`fetch`] is the same for a URL outside the GitHub API (`compare-results
//! --baseline-url`, an artifact's signed download URL): the same transport
//! and the same [`RetryPolicy`], so the workspace has one HTTP client.

use std::fmt;
use std::time::Duration;

use serde_json::Value;
use sweep_model::json_type::json_type_name;

pub use retry::RetryPolicy;

pub mod actions;
pub mod command;
pub mod fetch;
mod retry;
mod transport;
pub mod trust;

/// Public GitHub's API root.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// Largest response body read from the API. The biggest answers these tools
/// read are 100-item pages (jobs with their steps; issue comments, each at
/// most 65 536 characters, so a page stays under 26 MiB even then); a body
/// beyond this is not a real answer and is refused before it can take the
/// job's memory. A `Content-Length` above it is refused without reading.
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Upper bound on followed `Link` pages (10 000 items at 100 per page):
/// protection against a server that always answers `rel="next"`.
const MAX_PAGES: usize = 100;

/// Errors of the client. Every variant names the request.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad configuration (no token, bad URL).
    #[error("{0}")]
    Config(String),
    /// GitHub answered with a non-success status (after retries, if any).
    #[error("{}", describe_http(.method, .endpoint, *.status, .message, *.attempts))]
    Http {
        method: String,
        endpoint: String,
        status: u16,
        message: String,
        attempts: u32,
    },
    /// No answer (connection refused, reset, timeout) after retries.
    #[error("GitHub API {method} {endpoint} failed: {message} (after {attempts} attempt(s))")]
    Transport {
        method: String,
        endpoint: String,
        message: String,
        attempts: u32,
    },
    /// A non-idempotent request may or may not have been applied (5xx or a
    /// broken connection after sending); it was deliberately not repeated.
    #[error(
        "GitHub API {method} {endpoint}: {detail}; the request may have been applied, so it was not repeated"
    )]
    Ambiguous {
        method: String,
        endpoint: String,
        detail: String,
    },
    /// The body was not JSON or not of the expected shape.
    #[error("GitHub API {method} {endpoint} returned an unexpected shape: {detail}")]
    Shape {
        method: String,
        endpoint: String,
        detail: String,
    },
}

fn describe_http(
    method: &str,
    endpoint: &str,
    status: u16,
    message: &str,
    attempts: u32,
) -> String {
    let mut s = format!("GitHub API {method} {endpoint} failed: HTTP {status}: {message}");
    if attempts > 1 {
        s.push_str(&format!(" (gave up after {attempts} attempts)"));
    }
    if let Some(hint) = hint_for(status, message) {
        s.push_str(&format!(" — {hint}"));
    }
    s
}

/// Help for the statuses whose cause is usually the token.
fn hint_for(status: u16, message: &str) -> Option<&'static str> {
    match status {
        401 => Some("the token is missing, expired or revoked (check GITHUB_TOKEN / GH_TOKEN)"),
        403 if message.contains("Resource not accessible") => Some(
            "the token lacks a permission for this call (workflow `permissions:`; fork pull requests only get a read-only token)",
        ),
        404 => Some(
            "not found, or not visible to this token (private repository without `contents: read`/`actions: read`?)",
        ),
        _ => None,
    }
}

impl Error {
    /// The HTTP status, when GitHub answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// True when GitHub refused the call for lack of permission (401/403
    /// that is not a rate limit) or hid the resource (404).
    pub fn is_permission_denied(&self) -> bool {
        matches!(self.status(), Some(401 | 403 | 404))
    }
}

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A collaborator's access to a repository, as the permission endpoint
/// answers it ([`Client::collaborator_access`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// `permission`: `admin`, `write`, `read` or `none`.
    pub permission: Option<String>,
    /// `role_name`: `admin`, `maintain`, `write`, `triage`, `read` or a
    /// custom role.
    pub role_name: Option<String>,
}

/// Where and how to talk to GitHub.
#[derive(Clone)]
pub struct Config {
    /// API root, e.g. `https://api.github.com` or `https://ghe.example/api/v3`.
    pub api_url: String,
    /// Token; `None` sends unauthenticated requests.
    pub token: Option<String>,
    pub retry: RetryPolicy,
    /// Per-request read timeout.
    pub timeout: Duration,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("api_url", &self.api_url)
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Config {
    /// `GITHUB_API_URL` (default public GitHub), the first non-empty of
    /// `token_vars`, and the retry policy from the environment
    /// ([`RetryPolicy::from_env`]).
    pub fn from_env(token_vars: &[&str]) -> Self {
        let api_url = std::env::var("GITHUB_API_URL")
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_API_URL.to_string());
        let token = token_vars
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .find(|v| !v.is_empty());
        Config {
            api_url,
            token,
            retry: RetryPolicy::from_env(),
            timeout: Duration::from_secs(30),
        }
    }
}

/// The client. Cheap to create; one per tool run.
pub struct Client {
    agent: ureq::Agent,
    api_url: String,
    /// `Bearer <token>`, sent to the API (never to a redirect target).
    authorization: Option<String>,
    retry: RetryPolicy,
}

/// The media type GitHub documents for its REST API.
const GITHUB_JSON: &str = "application/vnd.github+json";

/// The `User-Agent` GitHub requires on every call.
const USER_AGENT: &str = concat!("sweepkit-github-client/", env!("CARGO_PKG_VERSION"));

/// An answered request.
struct Answer {
    body: Value,
    next: Option<String>,
    /// The `Location` of a redirect, when the call asked for one.
    location: Option<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Verb {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Verb {
    fn name(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Put => "PUT",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
        }
    }

    /// PUT is idempotent in HTTP, but the PUTs these tools send (merging a
    /// pull request) change state once and answer differently the second
    /// time, so they are treated like a POST: never repeated once sent.
    fn idempotent(self) -> bool {
        !matches!(self, Verb::Post | Verb::Put)
    }
}

impl Client {
    /// Builds a client from `config`.
    pub fn new(config: Config) -> Result<Self> {
        let api_url = config.api_url.trim_end_matches('/').to_string();
        let valid = api_url
            .parse::<http::Uri>()
            .map_err(|e| e.to_string())
            .and_then(|u| {
                if matches!(u.scheme_str(), Some("http" | "https")) && u.host().is_some() {
                    Ok(())
                } else {
                    Err("give an absolute http:// or https:// URL".to_string())
                }
            });
        if let Err(e) = valid {
            return Err(Error::Config(format!(
                "GITHUB_API_URL '{api_url}' is not a valid URL: {e}"
            )));
        }
        Ok(Client {
            agent: transport::agent(USER_AGENT, transport::Timeouts::PerRead(config.timeout)),
            api_url,
            authorization: config.token.map(|t| format!("Bearer {t}")),
            retry: config.retry,
        })
    }

    /// The API root in use.
    pub fn api_url(&self) -> &str {
        &self.api_url
    }

    /// `GET path?query` → JSON body.
    pub fn get(&self, path: &str, query: &[(&str, &str)]) -> Result<Value> {
        let uri = with_query(path, query);
        Ok(self.call(Verb::Get, &uri, None)?.body)
    }

    /// `login`'s access to `repo` (`GET
    /// /repos/{repo}/collaborators/{login}/permission`); `None` when GitHub
    /// does not know `login` as a collaborator (404). Each caller decides
    /// which roles or permissions it trusts.
    pub fn collaborator_access(&self, repo: &str, login: &str) -> Result<Option<Access>> {
        let path = format!("/repos/{repo}/collaborators/{}/permission", encode(login));
        match self.get(&path, &[]) {
            Ok(v) => Ok(Some(Access {
                permission: v["permission"].as_str().map(str::to_string),
                role_name: v["role_name"].as_str().map(str::to_string),
            })),
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every item of a list endpoint: `per_page=100`, then `Link: rel="next"`
    /// until there is none. `list_key` names the array inside an object
    /// answer (`jobs`, `workflow_runs`, `artifacts`); `None` for array answers.
    pub fn get_all(
        &self,
        path: &str,
        query: &[(&str, &str)],
        list_key: Option<&str>,
    ) -> Result<Vec<Value>> {
        let mut q: Vec<(&str, &str)> = query.to_vec();
        if !q.iter().any(|(k, _)| *k == "per_page") {
            q.push(("per_page", "100"));
        }
        let mut uri = with_query(path, &q);
        let mut out = Vec::new();
        for _ in 0..MAX_PAGES {
            let answer = self.call(Verb::Get, &uri, None)?;
            let items = match (list_key, answer.body) {
                (None, Value::Array(items)) => items,
                (Some(key), Value::Object(mut map)) => match map.remove(key) {
                    Some(Value::Array(items)) => items,
                    None => Vec::new(),
                    Some(other) => {
                        return Err(self.shape(
                            Verb::Get,
                            &uri,
                            format!("'{key}' is {}", json_type_name(&other)),
                        ));
                    }
                },
                (_, other) => {
                    let want = list_key
                        .map_or("an array".to_string(), |k| format!("an object with '{k}'"));
                    return Err(self.shape(
                        Verb::Get,
                        &uri,
                        format!("expected {want}, got {}", json_type_name(&other)),
                    ));
                }
            };
            out.extend(items);
            match answer.next {
                Some(next) => uri = next,
                None => return Ok(out),
            }
        }
        Err(self.shape(
            Verb::Get,
            path,
            format!("more than {MAX_PAGES} pages; refusing to follow further"),
        ))
    }

    /// `POST path` with a JSON body. Retried only when GitHub certainly did
    /// not act (429, rate-limit 403, connection refused); see [`Error::Ambiguous`].
    pub fn post(&self, path: &str, body: &Value) -> Result<Value> {
        Ok(self.call(Verb::Post, path, Some(body))?.body)
    }

    /// `PUT path` with a JSON body (e.g. merging a pull request). Retried
    /// only when GitHub certainly did not act, like [`Client::post`].
    pub fn put(&self, path: &str, body: &Value) -> Result<Value> {
        Ok(self.call(Verb::Put, path, Some(body))?.body)
    }

    /// `DELETE path` (idempotent: retried like a GET; a 404 after a retry
    /// is the caller's to read as "already gone").
    pub fn delete(&self, path: &str) -> Result<()> {
        self.call(Verb::Delete, path, None).map(|_| ())
    }

    /// `PATCH path` with a JSON body (idempotent: retried like a GET).
    pub fn patch(&self, path: &str, body: &Value) -> Result<Value> {
        Ok(self.call(Verb::Patch, path, Some(body))?.body)
    }

    fn shape(&self, verb: Verb, uri: &str, detail: String) -> Error {
        Error::Shape {
            method: verb.name().into(),
            endpoint: self.endpoint(uri),
            detail,
        }
    }

    /// The endpoint as shown in messages: the path (and query) without the API root.
    fn endpoint(&self, uri: &str) -> String {
        uri.strip_prefix(&self.api_url).unwrap_or(uri).to_string()
    }

    fn call(&self, verb: Verb, uri: &str, body: Option<&Value>) -> Result<Answer> {
        self.send(verb, uri, body, false)
    }

    /// `GET path` that GitHub answers with a redirect (an artifact
    /// download: `302` to a short-lived signed URL on another host); the
    /// redirect's `Location`. The target is not fetched here: it needs no
    /// token and must never get one (see [`fetch`]).
    pub fn redirect_location(&self, path: &str) -> Result<String> {
        let answer = self.send(Verb::Get, path, None, true)?;
        answer.location.ok_or_else(|| {
            self.shape(
                Verb::Get,
                path,
                "expected a redirect with a Location header, got a 2xx answer".to_string(),
            )
        })
    }

    /// `uri` as a full URL: an absolute one as is, a path under the API root.
    fn absolute_url(&self, uri: &str) -> String {
        if uri.starts_with("http://") || uri.starts_with("https://") {
            uri.to_string()
        } else {
            format!("{}{uri}", self.api_url)
        }
    }

    /// What to do after a request failed in transport (no usable answer):
    /// a request that may have reached GitHub and must not be repeated (a
    /// POST that may have succeeded) is an `Ambiguous` error; otherwise wait
    /// per the retry policy, or give up with `Transport` once it is spent.
    fn transport_failure(
        &self,
        may_repeat: bool,
        method: &str,
        endpoint: &str,
        message: String,
        attempt: u32,
    ) -> Result<Duration> {
        if !may_repeat {
            return Err(Error::Ambiguous {
                method: method.to_string(),
                endpoint: endpoint.to_string(),
                detail: message,
            });
        }
        match self.retry.backoff(attempt, None, None) {
            Some(wait) => {
                retry::log_retry(method, endpoint, &message, wait, attempt, &self.retry);
                Ok(wait)
            }
            None => Err(Error::Transport {
                method: method.to_string(),
                endpoint: endpoint.to_string(),
                message,
                attempts: attempt,
            }),
        }
    }

    /// One request with the retry policy. `uri` is a path under the API
    /// root or an absolute URL (a `Link` header's next page).
    fn send(
        &self,
        verb: Verb,
        uri: &str,
        body: Option<&Value>,
        want_redirect: bool,
    ) -> Result<Answer> {
        let endpoint = self.endpoint(uri);
        let method = verb.name().to_string();
        let url = self.absolute_url(uri);
        let payload = serialised_body(body, &method, &endpoint)?;
        let mut headers = vec![("accept", GITHUB_JSON)];
        if let Some(auth) = &self.authorization {
            headers.push(("authorization", auth.as_str()));
        }
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let outcome = transport::send(
                &self.agent,
                verb.name(),
                &url,
                &headers,
                payload.clone().map(|p| ("application/json", p)),
                MAX_BODY_BYTES,
            )
            .map_err(|e| Error::Config(format!("GitHub API {method} {endpoint}: {e}")))?;
            let (status, reply_headers, bytes) = match outcome {
                transport::Outcome::Answer {
                    status,
                    headers,
                    body,
                } => (status, headers, body),
                transport::Outcome::TooLarge => {
                    return Err(Error::Shape {
                        method,
                        endpoint,
                        detail: format!(
                            "response body larger than the {} MiB limit (MAX_BODY_BYTES); refused",
                            MAX_BODY_BYTES / (1024 * 1024)
                        ),
                    });
                }
                transport::Outcome::Failed(f) => {
                    let may_repeat = verb.idempotent() || f.before_sending;
                    let wait = self.transport_failure(
                        may_repeat,
                        &method,
                        &endpoint,
                        failure_message(f),
                        attempt,
                    )?;
                    std::thread::sleep(wait);
                    continue;
                }
            };
            let reply = Reply {
                method: &method,
                endpoint: &endpoint,
                status,
                headers: &reply_headers,
                text: String::from_utf8(bytes).map_err(|_| Error::Shape {
                    method: method.clone(),
                    endpoint: endpoint.clone(),
                    detail: "body is not UTF-8".to_string(),
                })?,
            };
            if let Some(answer) = reply.answer(want_redirect)? {
                return Ok(answer);
            }
            let wait = self.http_failure(verb, &reply, attempt)?;
            std::thread::sleep(wait);
        }
    }

    /// What to do after GitHub answered with an error status: give up
    /// (a status not worth retrying, a 5xx on a request that must not be
    /// repeated, or the retry policy spent), or wait and try again.
    fn http_failure(&self, verb: Verb, reply: &Reply, attempt: u32) -> Result<Duration> {
        let Reply {
            method,
            endpoint,
            status,
            ..
        } = *reply;
        let message = github_message(&reply.text, status);
        let class = retry::classify(status, reply.headers, &message);
        let fail = |attempts| Error::Http {
            method: method.to_string(),
            endpoint: endpoint.to_string(),
            status,
            message: message.clone(),
            attempts,
        };
        let Some(asked) = class else {
            return Err(fail(attempt));
        };
        // A 5xx on a POST may hide a created resource: never repeat it.
        if !verb.idempotent() && asked.server_error {
            return Err(Error::Ambiguous {
                method: method.to_string(),
                endpoint: endpoint.to_string(),
                detail: format!("HTTP {status}: {message}"),
            });
        }
        match self.retry.backoff(attempt, asked.wait, asked.floor) {
            Some(wait) => {
                retry::log_retry(
                    method,
                    endpoint,
                    &format!("HTTP {status}: {message}"),
                    wait,
                    attempt,
                    &self.retry,
                );
                Ok(wait)
            }
            None => {
                let mut e = fail(attempt);
                if let (Some(w), Error::Http { message, .. }) = (asked.wait, &mut e)
                    && w > self.retry.max_delay
                {
                    message.push_str(&format!(
                        " (GitHub asks to wait {} s, longer than the {} s this tool waits; re-run the job later)",
                        w.as_secs(),
                        self.retry.max_delay.as_secs()
                    ));
                }
                Err(e)
            }
        }
    }
}

/// The request body as JSON bytes (`None`: no body).
fn serialised_body(body: Option<&Value>, method: &str, endpoint: &str) -> Result<Option<Vec<u8>>> {
    match body {
        Some(v) => Ok(Some(serde_json::to_vec(v).map_err(|e| {
            Error::Config(format!(
                "GitHub API {method} {endpoint}: cannot serialise the request body: {e}"
            ))
        })?)),
        None => Ok(None),
    }
}

/// A transport failure as the retry log and the error say it.
fn failure_message(f: transport::Failure) -> String {
    if f.reading_body {
        format!("reading the response failed: {}", f.message)
    } else {
        f.message
    }
}

/// One answer GitHub gave to a request, its body decoded as UTF-8.
struct Reply<'a> {
    method: &'a str,
    endpoint: &'a str,
    status: u16,
    headers: &'a http::HeaderMap,
    text: String,
}

impl Reply<'_> {
    fn shape(&self, detail: String) -> Error {
        Error::Shape {
            method: self.method.to_string(),
            endpoint: self.endpoint.to_string(),
            detail,
        }
    }

    /// The answer when this reply is a success: the redirect's `Location`
    /// (when one was asked for) or a 2xx's JSON body and next page.
    /// `Ok(None)`: an error status, for the retry policy.
    fn answer(&self, want_redirect: bool) -> Result<Option<Answer>> {
        let status = self.status;
        if want_redirect && (300..400).contains(&status) {
            let Some(location) = self
                .headers
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .filter(|v| !v.trim().is_empty())
            else {
                return Err(self.shape(format!("HTTP {status} without a Location header")));
            };
            return Ok(Some(Answer {
                body: Value::Null,
                next: None,
                location: Some(location.trim().to_string()),
            }));
        }
        if !(200..300).contains(&status) {
            return Ok(None);
        }
        let body = if self.text.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&self.text)
                .map_err(|e| self.shape(format!("body is not JSON: {e}")))?
        };
        let next = self
            .headers
            .get("link")
            .and_then(|v| v.to_str().ok())
            .and_then(next_link);
        Ok(Some(Answer {
            body,
            next,
            location: None,
        }))
    }
}

/// GitHub's `message` field, else the body text, else the reason phrase.
fn github_message(text: &str, status: u16) -> String {
    if let Ok(v) = serde_json::from_str::<Value>(text)
        && let Some(m) = v.get("message").and_then(Value::as_str)
    {
        return m.to_string();
    }
    let t = text.trim();
    if t.is_empty() {
        http::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("no message")
            .to_string()
    } else {
        t.chars().take(300).collect()
    }
}

/// Appends `query` (form-encoded) to `path`.
pub fn with_query(path: &str, query: &[(&str, &str)]) -> String {
    if query.is_empty() {
        return path.to_string();
    }
    let qs: Vec<String> = query
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}{}", qs.join("&"))
}

/// Percent-encodes a path segment or query value (RFC 3986 unreserved kept).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The `rel="next"` target of a `Link` header.
fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"");
        let url = url.trim().strip_prefix('<')?.strip_suffix('>')?;
        is_next.then(|| url.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_next_link_among_others() {
        let h = r#"<http://h/x?page=3>; rel="next", <http://h/x?page=9>; rel="last", <http://h/x?page=1>; rel="first""#;
        assert_eq!(next_link(h).as_deref(), Some("http://h/x?page=3"));
        assert_eq!(next_link(r#"<http://h/x?page=1>; rel="prev""#), None);
    }

    #[test]
    fn query_values_are_encoded() {
        assert_eq!(
            with_query("/runs", &[("branch", "klaud/a b"), ("per_page", "100")]),
            "/runs?branch=klaud%2Fa%20b&per_page=100"
        );
    }

    #[test]
    fn messages_come_from_github_json() {
        assert_eq!(
            github_message(r#"{"message":"Bad credentials"}"#, 401),
            "Bad credentials"
        );
        assert_eq!(github_message("", 502), "Bad Gateway");
        assert_eq!(github_message("oops", 500), "oops");
    }

    #[test]
    fn http_error_names_endpoint_status_and_message() {
        let e = Error::Http {
            method: "POST".into(),
            endpoint: "/repos/o/r/issues/1/comments".into(),
            status: 403,
            message: "Resource not accessible by integration".into(),
            attempts: 1,
        };
        let s = e.to_string();
        assert!(s.starts_with("GitHub API POST /repos/o/r/issues/1/comments failed: HTTP 403: Resource not accessible by integration"), "{s}");
        assert!(s.contains("read-only token"), "{s}");
        assert!(!s.contains("gave up"));
        assert!(e.is_permission_denied());
    }
}
