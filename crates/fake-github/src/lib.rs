//! A fake GitHub REST server on loopback for tests (never published, never
//! used by a shipped binary).
//!
//! It serves the scenario layout of `shared/conformance/fixtures/github/`
//! (`scenario.json` routes, `paginate` slicing with `Link` headers, query
//! variants, base-URL rewriting, 404 for unknown routes, every request
//! recorded) and adds what the conformance runner does not have:
//!
//! * fault injection per (method, path): 5xx, 429 with `Retry-After`,
//!   secondary and primary rate-limit 403s, "applied then failed" answers
//!   (the write happened but the client saw a 502) and dropped connections;
//! * a stateful issue-comment store (list, create, update) so tests can
//!   check that a sticky comment is updated and never duplicated;
//! * the other HTTP the tools talk to, so every test uses this one server:
//!   static files (raw bytes, or a directory tree, for release archives),
//!   the benchmarks API that `compare-results --baseline-url` reads
//!   ([`FakeGitHub::with_benchmarks`]), delayed answers ([`Fault::Delay`],
//!   the wait happens in the server, never in a test's assertion) and a
//!   URL nothing listens on ([`closed_url`]);
//! * check runs ([`FakeGitHub::with_check_runs`]): `POST
//!   /repos/<repo>/check-runs` validated as GitHub validates it (422 for a
//!   missing name or head SHA, an unknown conclusion, a completed run
//!   without one) and stored for the test to read;
//! * workflow runs and their artifacts ([`FakeGitHub::with_workflow_runs`],
//!   [`FakeGitHub::with_artifact`]): run lists filtered as GitHub filters
//!   them, artifact lists, and zip downloads behind a `302` to a signed URL
//!   on this server, as GitHub answers them.
//!
//! It is a plain `std::net` server with one thread per connection and
//! `Connection: close` answers: small, dependency-free and fast enough for
//! tests.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

const GITHUB_PREFIX: &str = "https://api.github.com";

/// One answered route.
#[derive(Debug, Clone)]
pub struct Route {
    pub method: String,
    pub path: String,
    pub status: u16,
    pub body: Option<Value>,
    /// `None`, `"array"` or `"object:<key>"` (see the fixture README).
    pub paginate: Option<String>,
    /// `(params that must all match, body)`, first match wins.
    pub variants: Vec<(BTreeMap<String, String>, Value)>,
}

impl Route {
    /// A `200` route answering `body` as is.
    pub fn json(method: &str, path: &str, body: Value) -> Self {
        Route {
            method: method.to_string(),
            path: path.to_string(),
            status: 200,
            body: Some(body),
            paginate: None,
            variants: Vec::new(),
        }
    }

    /// A `200` route whose body (an array, or an object holding the list
    /// under `key`) is sliced by `per_page`/`page`.
    pub fn paginated(method: &str, path: &str, body: Value, mode: &str) -> Self {
        Route {
            paginate: Some(mode.to_string()),
            ..Route::json(method, path, body)
        }
    }

    /// A route answering `status` with no body (e.g. `204` for a
    /// workflow or repository dispatch).
    pub fn empty(method: &str, path: &str, status: u16) -> Self {
        Route {
            body: None,
            ..Route::json(method, path, Value::Null).with_status(status)
        }
    }

    /// Sets the status code.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }
}

/// A fault answered instead of (or after) the normal answer.
#[derive(Debug, Clone)]
pub enum Fault {
    /// This status with a GitHub-shaped error message.
    Status(u16),
    /// `429` with `Retry-After: secs`.
    TooManyRequests { retry_after: u64 },
    /// `403` "You have exceeded a secondary rate limit", optionally with `Retry-After`.
    SecondaryRateLimit { retry_after: Option<u64> },
    /// `403` with `x-ratelimit-remaining: 0` and a reset `reset_in` seconds ahead.
    PrimaryRateLimit { reset_in: u64 },
    /// Do the normal work (e.g. create the comment), then answer this status.
    AppliedThenStatus(u16),
    /// Close the connection without answering.
    Drop,
    /// Another writer got there first: before this request is handled, a
    /// comment with this body (by the comment author, see
    /// [`FakeGitHub::set_comment_author`]) is added to the issue's store.
    /// Models two runs racing between their list and their POST.
    ConcurrentComment(String),
    /// Wait this long, then answer normally (a slow server, for client
    /// timeouts). The wait runs on the connection's thread with the server
    /// state unlocked, so other requests are answered meanwhile.
    Delay(Duration),
}

/// A recorded request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: BTreeMap<String, String>,
    pub headers: BTreeMap<String, String>,
    pub body: Option<Value>,
}

#[derive(Default)]
struct State {
    routes: Vec<Route>,
    faults: HashMap<(String, String), VecDeque<Fault>>,
    permanent: HashMap<(String, String), Fault>,
    requests: Vec<Request>,
    /// issue path prefix (`/repos/o/r/issues/<n>/comments`) → comments
    comments: BTreeMap<String, Vec<Value>>,
    next_comment_id: u64,
    clock: u64,
    /// Login that created comments get (`github-actions[bot]` by default).
    comment_author: Option<String>,
    /// (method, path) → bodies answered in turn, the last one repeating
    /// (see [`FakeGitHub::add_sequence`]).
    sequences: HashMap<(String, String), VecDeque<Value>>,
    /// GET path → (content type, bytes), answered as is.
    files: BTreeMap<String, (String, Vec<u8>)>,
    /// (URL prefix, directory): GET `<prefix>/<rel>` answers the file `<dir>/<rel>`.
    dirs: Vec<(String, PathBuf)>,
    /// (model, date) → rows of the benchmarks API.
    benchmarks: Vec<(String, String, Value)>,
    /// Runs-list path of a workflow → its runs, newest first.
    workflow_runs: BTreeMap<String, Vec<Value>>,
    /// Artifacts served through the Actions API.
    artifacts: Vec<FakeArtifact>,
    /// `/repos/<repo>/check-runs` → the check runs created there.
    check_runs: BTreeMap<String, Vec<Value>>,
}

/// An artifact of a run (see [`FakeGitHub::with_artifact`]).
#[derive(Clone)]
struct FakeArtifact {
    repo: String,
    run_id: u64,
    id: u64,
    name: String,
    zip: Vec<u8>,
}

/// Where the fake's artifact downloads redirect to (a stand-in for
/// GitHub's signed blob-storage URLs).
pub const ARTIFACT_BLOB_PREFIX: &str = "/_blob/artifacts/";

struct Shared {
    state: Mutex<State>,
    base: String,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking handler thread must not hide every later request.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The running server; stops when dropped.
pub struct FakeGitHub {
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    addr: std::net::SocketAddr,
    handle: Option<JoinHandle<()>>,
}

impl FakeGitHub {
    /// Starts an empty server (every route answers 404 until added).
    pub fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                next_comment_id: 4_000_000_001,
                ..State::default()
            }),
            base: format!("http://{addr}"),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (s2, stop2) = (shared.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = conn {
                    let s3 = s2.clone();
                    std::thread::spawn(move || handle_connection(&s3, stream));
                }
            }
        });
        Ok(FakeGitHub {
            shared,
            stop,
            addr,
            handle: Some(handle),
        })
    }

    /// Starts a server answering the routes of a fixture scenario directory
    /// (`<dir>/scenario.json`, bodies relative to `<dir>`).
    pub fn from_scenario(dir: &Path) -> std::io::Result<Self> {
        let server = Self::start()?;
        for route in load_scenario_routes(dir)? {
            server.add_route(route);
        }
        Ok(server)
    }

    /// The base URL to put in `GITHUB_API_URL`.
    pub fn base_url(&self) -> String {
        self.shared.base.clone()
    }

    /// Adds (or replaces) a route.
    pub fn add_route(&self, route: Route) {
        let mut st = self.shared.lock();
        st.routes
            .retain(|r| !(r.method == route.method && r.path == route.path));
        st.routes.push(route);
    }

    /// Answers `(method, path)` with `bodies` in turn (`200`), one per
    /// request, repeating the last one: a check run or workflow run that
    /// progresses between polls. Takes precedence over a route of the same
    /// method and path; faults still come first.
    pub fn add_sequence(&self, method: &str, path: &str, bodies: Vec<Value>) {
        self.shared
            .lock()
            .sequences
            .insert((method.to_string(), path.to_string()), bodies.into());
    }

    /// Queues faults for `(method, path)`; each request consumes one, then
    /// the normal answer resumes.
    pub fn inject(&self, method: &str, path: &str, faults: impl IntoIterator<Item = Fault>) {
        let mut st = self.shared.lock();
        st.faults
            .entry((method.to_string(), path.to_string()))
            .or_default()
            .extend(faults);
    }

    /// Makes every request to `(method, path)` answer with `fault`.
    pub fn fail_always(&self, method: &str, path: &str, fault: Fault) {
        self.shared
            .lock()
            .permanent
            .insert((method.to_string(), path.to_string()), fault);
    }

    /// Turns on the stateful comment store for issue/PR `number` of `repo`
    /// (`owner/name`), seeded with `comments`. Listing, creating
    /// (`POST …/issues/<n>/comments`) and updating
    /// (`PATCH …/issues/comments/<id>`) then work like GitHub.
    pub fn with_comments(&self, repo: &str, number: u64, comments: Vec<Value>) {
        let mut st = self.shared.lock();
        st.comments
            .insert(format!("/repos/{repo}/issues/{number}/comments"), comments);
    }

    /// Answers `GET /repos/<repo>/collaborators/<login>/permission` as
    /// GitHub does for a collaborator with repository role `role` (`admin`,
    /// `maintain`, `write`, `triage`, `read`): `role_name` is the role,
    /// `permission` the legacy value (maintain → write, triage → read).
    /// A login without this route gets GitHub's 404 (not a collaborator).
    pub fn with_collaborator(&self, repo: &str, login: &str, role: &str) {
        let permission = match role {
            "maintain" => "write",
            "triage" => "read",
            other => other,
        };
        self.add_route(Route::json(
            "GET",
            &format!("/repos/{repo}/collaborators/{login}/permission"),
            json!({
                "permission": permission,
                "role_name": role,
                "user": {"login": login},
            }),
        ));
    }

    /// The login comments created through the store get (the token's
    /// identity; default `github-actions[bot]`).
    pub fn set_comment_author(&self, login: &str) {
        self.shared.lock().comment_author = Some(login.to_string());
    }

    /// Comments currently stored for issue/PR `number` of `repo`.
    pub fn comments(&self, repo: &str, number: u64) -> Vec<Value> {
        self.shared
            .lock()
            .comments
            .get(&format!("/repos/{repo}/issues/{number}/comments"))
            .cloned()
            .unwrap_or_default()
    }

    /// Answers `GET path` with these bytes (`Content-Type: content_type`).
    /// Faults injected for `("GET", path)` apply as for any route.
    pub fn serve_bytes(&self, path: &str, content_type: &str, bytes: impl Into<Vec<u8>>) {
        self.shared
            .lock()
            .files
            .insert(path.to_string(), (content_type.to_string(), bytes.into()));
    }

    /// Answers `GET <prefix>/<rel>` with the file `<dir>/<rel>` as it is on
    /// disk at request time (`application/octet-stream`); a missing file,
    /// or a path with `..`, is a 404. `prefix` is `""` for the whole server.
    pub fn serve_dir(&self, prefix: &str, dir: &Path) {
        self.shared
            .lock()
            .dirs
            .push((prefix.trim_end_matches('/').to_string(), dir.to_path_buf()));
    }

    /// Answers the InferenceX benchmarks API that `compare-results
    /// --baseline-url` reads: `GET /api/v1/benchmarks?model=<model>&date=<date>&exact=true`
    /// → `rows` (a JSON array). A known model without rows for the date
    /// answers `[]`; an unknown model, or a request without `model`, is a
    /// 400 `{"error":"Unknown model"}` as the real API answers.
    pub fn with_benchmarks(&self, model: &str, date: &str, rows: Value) {
        self.shared
            .lock()
            .benchmarks
            .push((model.to_string(), date.to_string(), rows));
    }

    /// The URL of the benchmarks API query for `model` and `date` on this server.
    pub fn benchmarks_url(&self, model: &str, date: &str) -> String {
        format!(
            "{}{BENCHMARKS_PATH}?model={}&date={}&exact=true",
            self.shared.base,
            form_encode(model),
            form_encode(date)
        )
    }

    /// Answers `GET /repos/<repo>/actions/workflows/<workflow>/runs` with
    /// `runs` (newest first, as GitHub lists them), filtered by the query as
    /// GitHub does: `branch` (the run's `head_branch`), `event`, and
    /// `status` (a status or a conclusion), paginated under
    /// `workflow_runs` with `total_count`.
    pub fn with_workflow_runs(&self, repo: &str, workflow: &str, runs: Vec<Value>) {
        self.shared.lock().workflow_runs.insert(
            format!("/repos/{repo}/actions/workflows/{workflow}/runs"),
            runs,
        );
    }

    /// Adds an artifact `name` holding `zip` to run `run_id` of `repo` and
    /// returns its id. `GET /repos/<repo>/actions/runs/<run_id>/artifacts`
    /// lists it (`name` query filters), and `GET
    /// /repos/<repo>/actions/artifacts/<id>/zip` answers `302` with a
    /// `Location` under [`ARTIFACT_BLOB_PREFIX`] on this server (with a
    /// fake signature in the query), which serves the bytes.
    pub fn with_artifact(&self, repo: &str, run_id: u64, name: &str, zip: Vec<u8>) -> u64 {
        let mut st = self.shared.lock();
        let id = 7_000_000_001 + st.artifacts.len() as u64;
        st.artifacts.push(FakeArtifact {
            repo: repo.to_string(),
            run_id,
            id,
            name: name.to_string(),
            zip,
        });
        id
    }

    /// Turns on the check-run store of `repo` (`owner/name`): `POST
    /// /repos/<repo>/check-runs` creates a check run (`201`) after GitHub's
    /// checks of the body, and [`FakeGitHub::check_runs`] returns them. A
    /// route added for the same path answers instead when the store is off
    /// (e.g. a `403` for a token without `checks: write`).
    pub fn with_check_runs(&self, repo: &str) {
        self.shared
            .lock()
            .check_runs
            .insert(format!("/repos/{repo}/check-runs"), Vec::new());
    }

    /// The check runs created on `repo` so far, oldest first.
    pub fn check_runs(&self, repo: &str) -> Vec<Value> {
        self.shared
            .lock()
            .check_runs
            .get(&format!("/repos/{repo}/check-runs"))
            .cloned()
            .unwrap_or_default()
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.lock().requests.clone()
    }

    /// Requests with this method and path.
    pub fn count(&self, method: &str, path: &str) -> usize {
        self.shared
            .lock()
            .requests
            .iter()
            .filter(|r| r.method == method && r.path == path)
            .count()
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so the thread ends.
        let _ = TcpStream::connect(self.addr);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A loopback URL nothing listens on (a port bound, then released): for
/// tests of an unreachable server.
pub fn closed_url() -> std::io::Result<String> {
    Ok(format!("http://127.0.0.1:{}", unused_port()?))
}

/// A loopback port free a moment ago (bound, then released): for a server a
/// test starts itself (PostgreSQL) or for [`closed_url`].
pub fn unused_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// The benchmarks API path (see [`FakeGitHub::with_benchmarks`]).
pub const BENCHMARKS_PATH: &str = "/api/v1/benchmarks";

/// Reads the routes of a fixture scenario.
pub fn load_scenario_routes(dir: &Path) -> std::io::Result<Vec<Route>> {
    let scenario: Value = read_json(&dir.join("scenario.json"))?;
    let mut out = Vec::new();
    for r in scenario["routes"].as_array().cloned().unwrap_or_default() {
        let body = match r.get("body_file").and_then(Value::as_str) {
            Some(f) => Some(read_json(&dir.join(f))?),
            None => r.get("body").cloned().filter(|b| !b.is_null()),
        };
        let mut variants = Vec::new();
        for v in r["query_variants"].as_array().cloned().unwrap_or_default() {
            let m = v["match"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), value_as_query(v)))
                        .collect()
                })
                .unwrap_or_default();
            if let Some(f) = v.get("body_file").and_then(Value::as_str) {
                variants.push((m, read_json(&dir.join(f))?));
            }
        }
        out.push(Route {
            method: r["method"].as_str().unwrap_or("GET").to_string(),
            path: r["path"].as_str().unwrap_or_default().to_string(),
            status: r["status"].as_u64().unwrap_or(200) as u16,
            body,
            paginate: r["paginate"].as_str().map(str::to_string),
            variants,
        });
    }
    Ok(out)
}

fn value_as_query(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn read_json(path: &PathBuf) -> std::io::Result<Value> {
    let text = std::fs::read_to_string(path)?;
    serde_json::from_str(&text).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    })
}

struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Option<Value>,
    /// A non-JSON answer: (content type, bytes); `body` is then `None`.
    raw: Option<(String, Vec<u8>)>,
}

impl Answer {
    fn json(status: u16, body: Option<Value>) -> Self {
        Answer {
            status,
            headers: Vec::new(),
            body,
            raw: None,
        }
    }
}

fn error_answer(status: u16, message: &str) -> Answer {
    Answer::json(
        status,
        Some(json!({
            "message": message,
            "documentation_url": "https://docs.github.com/rest",
            "status": status.to_string(),
        })),
    )
}

fn not_found() -> Answer {
    error_answer(404, "Not Found")
}

fn handle_connection(shared: &Shared, stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(10)));
    let Some(request) = read_request(&stream) else {
        return;
    };
    let Some(answer) = respond(shared, request) else {
        return; // Fault::Drop
    };
    write_answer(shared, stream, answer);
}

/// Reads one HTTP/1.1 request (request line, headers, `Content-Length`
/// body); `None` when the connection closes or fails first.
fn read_request(stream: &TcpStream) -> Option<Request> {
    let read_half = stream.try_clone().ok()?;
    let mut reader = BufReader::new(read_half);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            break;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    if len > 0 && reader.read_exact(&mut body).is_err() {
        return None;
    }
    let (raw_path, raw_query) = target.split_once('?').unwrap_or((&target, ""));
    let path = percent_decode(raw_path);
    let query = parse_query(raw_query);
    let body_json = if body.is_empty() {
        None
    } else {
        Some(
            serde_json::from_slice(&body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned())),
        )
    };
    Some(Request {
        method,
        path,
        query,
        headers,
        body: body_json,
    })
}

/// Writes `answer` as an HTTP/1.1 response that closes the connection;
/// a JSON body has `https://api.github.com` replaced by the server's base.
fn write_answer(shared: &Shared, mut stream: TcpStream, answer: Answer) {
    let (content_type, payload) = match (answer.raw, &answer.body) {
        (Some((kind, bytes)), _) => (kind, bytes),
        (None, None) => (JSON_TYPE.to_string(), Vec::new()),
        (None, Some(b)) => (
            JSON_TYPE.to_string(),
            b.to_string()
                .replace(GITHUB_PREFIX, &shared.base)
                .into_bytes(),
        ),
    };
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        answer.status,
        reason(answer.status),
        payload.len()
    );
    for (k, v) in &answer.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.write_all(&payload);
    let _ = stream.flush();
}

const JSON_TYPE: &str = "application/json; charset=utf-8";

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        302 => "Found",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn respond(shared: &Shared, req: Request) -> Option<Answer> {
    let mut st = shared.lock();
    st.requests.push(req.clone());
    st.clock += 1;
    let key = (req.method.clone(), req.path.clone());
    let fault = match st.faults.get_mut(&key).and_then(VecDeque::pop_front) {
        Some(f) => Some(f),
        None => st.permanent.get(&key).cloned(),
    };
    let mut applied_status = None;
    if let Some(fault) = fault {
        match fault {
            Fault::Drop => return None,
            Fault::Status(s) => return Some(error_answer(s, "Server Error")),
            Fault::TooManyRequests { retry_after } => {
                let mut a = error_answer(429, "Too Many Requests");
                a.headers
                    .push(("Retry-After".into(), retry_after.to_string()));
                return Some(a);
            }
            Fault::SecondaryRateLimit { retry_after } => {
                let mut a = error_answer(
                    403,
                    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                );
                if let Some(s) = retry_after {
                    a.headers.push(("Retry-After".into(), s.to_string()));
                }
                return Some(a);
            }
            Fault::PrimaryRateLimit { reset_in } => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0);
                let mut a = error_answer(403, "API rate limit exceeded for installation.");
                a.headers.push(("x-ratelimit-remaining".into(), "0".into()));
                a.headers
                    .push(("x-ratelimit-reset".into(), (now + reset_in).to_string()));
                return Some(a);
            }
            Fault::AppliedThenStatus(s) => applied_status = Some(s),
            Fault::Delay(wait) => {
                drop(st);
                std::thread::sleep(wait);
                st = shared.lock();
            }
            Fault::ConcurrentComment(body) => {
                let fake = Request {
                    method: "POST".into(),
                    body: Some(json!({ "body": body })),
                    ..req.clone()
                };
                let _ = comment_store(&mut st, &shared.base, &fake);
            }
        }
    }
    let mut answer = sequence_answer(&mut st, &key)
        .or_else(|| comment_store(&mut st, &shared.base, &req))
        .or_else(|| check_run_store(&mut st, &req))
        .or_else(|| route_answer(&st, &shared.base, &req))
        .or_else(|| actions_answer(&st, &shared.base, &req))
        .or_else(|| static_answer(&st, &req))
        .or_else(|| benchmarks_answer(&st, &req))
        .unwrap_or_else(not_found);
    if let Some(s) = applied_status {
        answer = error_answer(s, "Server Error");
    }
    Some(answer)
}

/// The next body of a sequence registered for `key`, if any.
fn sequence_answer(st: &mut State, key: &(String, String)) -> Option<Answer> {
    let queue = st.sequences.get_mut(key)?;
    let body = if queue.len() > 1 {
        queue.pop_front()
    } else {
        queue.front().cloned()
    }?;
    Some(Answer::json(200, Some(body)))
}

/// Stateful comments: list/create under a registered issue, update by id.
fn comment_store(st: &mut State, base: &str, req: &Request) -> Option<Answer> {
    if st.comments.contains_key(&req.path) {
        return match req.method.as_str() {
            "GET" => {
                let list = Value::Array(st.comments[&req.path].clone());
                Some(paginate(&list, "array", base, req))
            }
            "POST" => Some(create_comment(st, req)),
            _ => None,
        };
    }
    match req.method.as_str() {
        "DELETE" => delete_comment(st, req),
        "PATCH" => update_comment(st, req),
        _ => None,
    }
}

/// `POST {issue}/comments`: a new comment by the configured author
/// (default `github-actions[bot]`), stamped from the request clock.
fn create_comment(st: &mut State, req: &Request) -> Answer {
    let body = req
        .body
        .as_ref()
        .and_then(|b| b.get("body"))
        .cloned()
        .unwrap_or(Value::Null);
    let id = st.next_comment_id;
    st.next_comment_id += 1;
    let author = st
        .comment_author
        .clone()
        .unwrap_or_else(|| "github-actions[bot]".to_string());
    let kind = if author.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    let issue_url = req.path.trim_end_matches("/comments").to_string();
    let comment = json!({
        "id": id,
        "url": format!("{GITHUB_PREFIX}{}/comments/{id}", issue_url.rsplit_once('/').map(|x| x.0).unwrap_or_default()),
        "html_url": format!("https://github.com/pull#issuecomment-{id}"),
        "user": {"login": author, "type": kind},
        "author_association": "NONE",
        "created_at": format!("2026-08-22T06:{:02}:{:02}Z", (st.clock / 60) % 60, st.clock % 60),
        "body": body,
    });
    if let Some(list) = st.comments.get_mut(&req.path) {
        list.push(comment.clone());
    }
    Answer {
        status: 201,
        headers: Vec::new(),
        body: Some(comment),
        raw: None,
    }
}

/// `DELETE /repos/{o}/{r}/issues/comments/{id}`.
fn delete_comment(st: &mut State, req: &Request) -> Option<Answer> {
    let (prefix, id) = req.path.rsplit_once('/')?;
    let id: u64 = id.parse().ok()?;
    let repo_prefix = prefix.strip_suffix("/issues/comments")?;
    for (issue, list) in st.comments.iter_mut() {
        if !issue.starts_with(&format!("{repo_prefix}/issues/")) {
            continue;
        }
        if let Some(i) = list.iter().position(|c| c["id"].as_u64() == Some(id)) {
            list.remove(i);
            return Some(Answer {
                status: 204,
                headers: Vec::new(),
                body: None,
                raw: None,
            });
        }
    }
    None
}

/// `PATCH /repos/{o}/{r}/issues/comments/{id}`: a new body, `updated_at` set.
fn update_comment(st: &mut State, req: &Request) -> Option<Answer> {
    let (prefix, id) = req.path.rsplit_once('/')?;
    let id: u64 = id.parse().ok()?;
    let repo_prefix = prefix.strip_suffix("/issues/comments")?;
    let new_body = req.body.as_ref()?.get("body")?.clone();
    for (issue, list) in st.comments.iter_mut() {
        if !issue.starts_with(&format!("{repo_prefix}/issues/")) {
            continue;
        }
        if let Some(c) = list.iter_mut().find(|c| c["id"].as_u64() == Some(id)) {
            c["body"] = new_body;
            c["updated_at"] = json!("2026-08-22T07:00:00Z");
            return Some(Answer {
                status: 200,
                headers: Vec::new(),
                body: Some(c.clone()),
                raw: None,
            });
        }
    }
    None
}

/// Conclusions GitHub accepts for a check run.
const CHECK_CONCLUSIONS: [&str; 8] = [
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "success",
    "skipped",
    "stale",
    "timed_out",
];

/// `POST /repos/<repo>/check-runs` on a repository with the store on.
fn check_run_store(st: &mut State, req: &Request) -> Option<Answer> {
    if req.method != "POST" || !st.check_runs.contains_key(&req.path) {
        return None;
    }
    let body = req.body.clone().unwrap_or(Value::Null);
    let text = |k: &str| {
        body.get(k)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    let status = text("status").unwrap_or("queued");
    let conclusion = text("conclusion");
    let invalid = if text("name").is_none() {
        Some("name wasn't supplied.")
    } else if text("head_sha").is_none() {
        Some("head_sha wasn't supplied.")
    } else if !["queued", "in_progress", "completed"].contains(&status) {
        Some("status is not included in the list")
    } else if conclusion.is_some_and(|c| !CHECK_CONCLUSIONS.contains(&c)) {
        Some("conclusion is not included in the list")
    } else if status == "completed" && conclusion.is_none() {
        Some("conclusion can't be blank when status is completed")
    } else if body.get("output").is_some_and(|o| {
        o.get("title").and_then(Value::as_str).is_none()
            || o.get("summary").and_then(Value::as_str).is_none()
    }) {
        Some("output needs a title and a summary")
    } else {
        None
    };
    if let Some(message) = invalid {
        return Some(error_answer(422, &format!("Invalid request. {message}")));
    }
    let list = st.check_runs.get_mut(&req.path)?;
    let id = 9_000_000_001 + list.len() as u64;
    let repo = req
        .path
        .trim_start_matches("/repos/")
        .trim_end_matches("/check-runs");
    let mut run = body.clone();
    run["id"] = json!(id);
    run["status"] = json!(status);
    run["html_url"] = json!(format!("https://github.com/{repo}/runs/{id}"));
    list.push(run.clone());
    Some(Answer::json(201, Some(run)))
}

/// A file registered with `serve_bytes` or found under a `serve_dir` directory.
fn static_answer(st: &State, req: &Request) -> Option<Answer> {
    if req.method != "GET" {
        return None;
    }
    let raw = |kind: &str, bytes: Vec<u8>| Answer {
        raw: Some((kind.to_string(), bytes)),
        ..Answer::json(200, None)
    };
    if let Some((kind, bytes)) = st.files.get(&req.path) {
        return Some(raw(kind, bytes.clone()));
    }
    for (prefix, dir) in &st.dirs {
        let Some(rel) = req.path.strip_prefix(prefix.as_str()) else {
            continue;
        };
        let rel = rel.trim_start_matches('/');
        if rel.is_empty() || rel.split('/').any(|part| part == "..") {
            continue;
        }
        if let Ok(bytes) = std::fs::read(dir.join(rel)) {
            return Some(raw("application/octet-stream", bytes));
        }
    }
    None
}

/// Workflow runs, run artifacts and artifact downloads (see
/// [`FakeGitHub::with_workflow_runs`] and [`FakeGitHub::with_artifact`]).
fn actions_answer(st: &State, base: &str, req: &Request) -> Option<Answer> {
    if req.method != "GET" {
        return None;
    }
    if let Some(runs) = st.workflow_runs.get(&req.path) {
        let q = |k: &str| req.query.get(k).filter(|v| !v.is_empty());
        let kept: Vec<Value> = runs
            .iter()
            .filter(|r| q("branch").is_none_or(|b| r["head_branch"].as_str() == Some(b)))
            .filter(|r| q("event").is_none_or(|e| r["event"].as_str() == Some(e)))
            .filter(|r| {
                q("status").is_none_or(|s| {
                    r["status"].as_str() == Some(s) || r["conclusion"].as_str() == Some(s)
                })
            })
            .cloned()
            .collect();
        return Some(paginate(
            &json!({ "workflow_runs": kept }),
            "object:workflow_runs",
            base,
            req,
        ));
    }
    if let Some(rest) = req.path.strip_prefix(ARTIFACT_BLOB_PREFIX) {
        let a = st
            .artifacts
            .iter()
            .find(|a| rest == format!("{}.zip", a.id))?;
        return Some(Answer {
            raw: Some(("application/zip".to_string(), a.zip.clone())),
            ..Answer::json(200, None)
        });
    }
    for a in &st.artifacts {
        let listing = format!("/repos/{}/actions/runs/{}/artifacts", a.repo, a.run_id);
        if req.path == listing {
            let name = req.query.get("name").filter(|v| !v.is_empty());
            let list: Vec<Value> = st
                .artifacts
                .iter()
                .filter(|b| b.repo == a.repo && b.run_id == a.run_id)
                .filter(|b| name.is_none_or(|n| &b.name == n))
                .map(|b| {
                    json!({
                        "id": b.id,
                        "name": b.name,
                        "size_in_bytes": b.zip.len(),
                        "expired": false,
                        "archive_download_url": format!("{GITHUB_PREFIX}/repos/{}/actions/artifacts/{}/zip", b.repo, b.id),
                        "workflow_run": {"id": b.run_id},
                    })
                })
                .collect();
            return Some(paginate(
                &json!({ "artifacts": list }),
                "object:artifacts",
                base,
                req,
            ));
        }
        if req.path == format!("/repos/{}/actions/artifacts/{}/zip", a.repo, a.id) {
            let mut answer = Answer::json(302, None);
            answer.headers.push((
                "Location".into(),
                format!(
                    "{base}{ARTIFACT_BLOB_PREFIX}{}.zip?sig=fake-signature",
                    a.id
                ),
            ));
            return Some(answer);
        }
    }
    None
}

/// The benchmarks API (see [`FakeGitHub::with_benchmarks`]).
fn benchmarks_answer(st: &State, req: &Request) -> Option<Answer> {
    if req.method != "GET" || req.path != BENCHMARKS_PATH || st.benchmarks.is_empty() {
        return None;
    }
    let model = req.query.get("model");
    let date = req.query.get("date");
    if !st.benchmarks.iter().any(|(m, _, _)| Some(m) == model) {
        return Some(Answer::json(400, Some(json!({"error": "Unknown model"}))));
    }
    let rows = st
        .benchmarks
        .iter()
        .find(|(m, d, _)| Some(m) == model && Some(d) == date)
        .map_or_else(|| json!([]), |(_, _, rows)| rows.clone());
    Some(Answer::json(200, Some(rows)))
}

fn route_answer(st: &State, base: &str, req: &Request) -> Option<Answer> {
    let route = st
        .routes
        .iter()
        .find(|r| r.method == req.method && r.path == req.path)?;
    let mut body = route.body.clone();
    for (m, b) in &route.variants {
        if m.iter().all(|(k, v)| req.query.get(k) == Some(v)) {
            body = Some(b.clone());
            break;
        }
    }
    match (&route.paginate, body) {
        (Some(mode), Some(b)) => {
            let mut a = paginate(&b, mode, base, req);
            a.status = route.status;
            Some(a)
        }
        (_, body) => Some(Answer {
            status: route.status,
            headers: Vec::new(),
            body,
            raw: None,
        }),
    }
}

fn paginate(body: &Value, mode: &str, base: &str, req: &Request) -> Answer {
    let per_page = req
        .query
        .get("per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(30)
        .min(100);
    let page = req
        .query
        .get("page")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1);
    let key = mode.strip_prefix("object:");
    let items: Vec<Value> = match key {
        Some(k) => body[k].as_array().cloned().unwrap_or_default(),
        None => body.as_array().cloned().unwrap_or_default(),
    };
    let last = items.len().div_ceil(per_page).max(1);
    let start = ((page - 1) * per_page).min(items.len());
    let end = (page * per_page).min(items.len());
    let chunk = Value::Array(items[start..end].to_vec());
    let out = match key {
        Some(k) => {
            let mut o = body.clone();
            o[k] = chunk;
            o["total_count"] = json!(items.len());
            o
        }
        None => chunk,
    };
    let link = |n: usize, rel: &str| {
        let mut q = req.query.clone();
        q.insert("page".into(), n.to_string());
        let qs: Vec<String> = q
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
            .collect();
        format!("<{base}{}?{}>; rel=\"{rel}\"", req.path, qs.join("&"))
    };
    let mut links = Vec::new();
    if page < last {
        links.push(link(page + 1, "next"));
        links.push(link(last, "last"));
    }
    if page > 1 {
        links.push(link(1, "first"));
        links.push(link(page - 1, "prev"));
    }
    let mut headers = Vec::new();
    if !links.is_empty() {
        headers.push(("Link".to_string(), links.join(", ")));
    }
    Answer {
        status: 200,
        headers,
        body: Some(out),
        raw: None,
    }
}

fn form_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_query(q: &str) -> BTreeMap<String, String> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (
                percent_decode(&k.replace('+', " ")),
                percent_decode(&v.replace('+', " ")),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One plain HTTP/1.1 request (the body, when given, as JSON text):
    /// (status, body bytes).
    fn request(base: &str, method: &str, target: &str, body: Option<&str>) -> (u16, Vec<u8>) {
        let addr = base.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).expect("connect");
        let body = body.unwrap_or("");
        write!(
            s,
            "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .expect("send");
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).expect("read");
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("head");
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .expect("status");
        (status, raw[split + 4..].to_vec())
    }

    /// A plain HTTP/1.1 GET: (status, body).
    fn get(base: &str, target: &str) -> (u16, Vec<u8>) {
        request(base, "GET", target, None)
    }

    #[test]
    fn serves_bytes_and_directories() {
        let dir = std::env::temp_dir().join(format!("fake-github-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("v1")).expect("mkdir");
        std::fs::write(dir.join("v1/a.tar.gz"), [0u8, 1, 2, 255]).expect("write");
        let s = FakeGitHub::start().expect("start");
        s.serve_bytes("/raw", "text/plain", "hello");
        s.serve_dir("/rel", &dir);
        let base = s.base_url();
        assert_eq!(get(&base, "/raw"), (200, b"hello".to_vec()));
        assert_eq!(get(&base, "/rel/v1/a.tar.gz"), (200, vec![0, 1, 2, 255]));
        assert_eq!(get(&base, "/rel/v1/missing").0, 404);
        assert_eq!(get(&base, "/rel/../v1/a.tar.gz").0, 404);
        s.inject("GET", "/raw", [Fault::Status(503)]);
        assert_eq!(get(&base, "/raw").0, 503);
        assert_eq!(get(&base, "/raw").0, 200);
        assert_eq!(s.count("GET", "/raw"), 3);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn benchmarks_api_answers_rows_empty_or_unknown_model() {
        let s = FakeGitHub::start().expect("start");
        s.with_benchmarks("M-1", "2026-08-01", json!([{"hardware": "h100"}]));
        let base = s.base_url();
        let url = s.benchmarks_url("M-1", "2026-08-01");
        let target = url.trim_start_matches(&base).to_string();
        assert_eq!(
            target,
            "/api/v1/benchmarks?model=M-1&date=2026-08-01&exact=true"
        );
        assert_eq!(
            get(&base, &target),
            (200, br#"[{"hardware":"h100"}]"#.to_vec())
        );
        let other_day = "/api/v1/benchmarks?model=M-1&date=2026-08-02&exact=true";
        assert_eq!(get(&base, other_day), (200, b"[]".to_vec()));
        let unknown = "/api/v1/benchmarks?model=X&date=2026-08-01&exact=true";
        assert_eq!(
            get(&base, unknown),
            (400, br#"{"error":"Unknown model"}"#.to_vec())
        );
    }

    #[test]
    fn a_delay_answers_late_without_blocking_other_requests() {
        let s = FakeGitHub::start().expect("start");
        s.add_route(Route::json("GET", "/slow", json!(1)));
        s.add_route(Route::json("GET", "/fast", json!(2)));
        s.inject("GET", "/slow", [Fault::Delay(Duration::from_secs(30))]);
        let base = s.base_url();
        let addr = base.trim_start_matches("http://").to_string();
        // The slow request is sent and left waiting; the fast one is answered
        // meanwhile (it would wait 30 s if the delay held the state lock).
        let mut slow = TcpStream::connect(&addr).expect("connect");
        write!(slow, "GET /slow HTTP/1.1\r\n\r\n").expect("send");
        while s.count("GET", "/slow") == 0 {
            std::thread::yield_now();
        }
        assert_eq!(get(&base, "/fast"), (200, b"2".to_vec()));
        slow.set_read_timeout(Some(Duration::from_millis(50)))
            .expect("timeout");
        let mut buf = [0u8; 16];
        assert!(
            slow.read(&mut buf).is_err(),
            "the delayed answer came early"
        );
    }

    /// A plain HTTP/1.1 POST of a JSON body: (status, body).
    fn post(base: &str, target: &str, body: &Value) -> (u16, Value) {
        let (status, raw) = request(base, "POST", target, Some(&body.to_string()));
        (status, serde_json::from_slice(&raw).unwrap_or(Value::Null))
    }

    #[test]
    fn check_runs_are_created_and_validated_as_github_does() {
        let s = FakeGitHub::start().expect("start");
        s.with_check_runs("o/r");
        let base = s.base_url();
        let path = "/repos/o/r/check-runs";
        let ok = json!({"name": "sweep verdict", "head_sha": "abc", "status": "completed",
            "conclusion": "failure", "output": {"title": "t", "summary": "s"}});
        let (status, run) = post(&base, path, &ok);
        assert_eq!(status, 201);
        assert_eq!(run["id"], 9_000_000_001u64);
        assert_eq!(run["html_url"], "https://github.com/o/r/runs/9000000001");
        let mut no_conclusion = ok.clone();
        no_conclusion["conclusion"] = Value::Null;
        assert_eq!(post(&base, path, &no_conclusion).0, 422);
        let mut bad = ok.clone();
        bad["conclusion"] = json!("failed");
        assert_eq!(post(&base, path, &bad).0, 422);
        let mut no_sha = ok.clone();
        no_sha["head_sha"] = Value::Null;
        assert_eq!(post(&base, path, &no_sha).0, 422);
        let runs = s.check_runs("o/r");
        assert_eq!(runs.len(), 1, "only the valid one is stored");
        assert_eq!(runs[0]["conclusion"], "failure");
        assert_eq!(post(&base, "/repos/o/other/check-runs", &ok).0, 404);
    }

    #[test]
    fn closed_url_refuses_connections() {
        let url = closed_url().expect("port");
        assert!(TcpStream::connect(url.trim_start_matches("http://")).is_err());
    }

    #[test]
    fn query_round_trip() {
        let q = parse_query("branch=klaud%2Fissue-1&per_page=100&x=a+b");
        assert_eq!(q["branch"], "klaud/issue-1");
        assert_eq!(q["x"], "a b");
        assert_eq!(form_encode("klaud/issue 1"), "klaud%2Fissue+1");
        assert_eq!(percent_decode("/a%2Fb%"), "/a/b%");
    }

    #[test]
    fn paginates_objects_with_links() {
        let body = json!({"jobs": (0..35).collect::<Vec<_>>()});
        let req = Request {
            method: "GET".into(),
            path: "/x".into(),
            query: parse_query("page=2"),
            headers: BTreeMap::new(),
            body: None,
        };
        let a = paginate(&body, "object:jobs", "http://h", &req);
        let b = a.body.unwrap_or_default();
        assert_eq!(b["jobs"].as_array().map(Vec::len), Some(5));
        assert_eq!(b["total_count"], 35);
        let link = &a.headers[0].1;
        assert!(
            link.contains("<http://h/x?page=1>; rel=\"first\""),
            "{link}"
        );
        assert!(!link.contains("next"));
    }
}
