//! `/stage-results [run-id]`: stage a PR's finished sweep on the frontend's
//! staging site (the reference's `stage-results.yml` and
//! `stage-results-callback.yml`).
//!
//! Three steps, so that each token is only where it is needed:
//! * [`request`] (`stage-results`, repository token): parses the comment,
//!   checks the commenter's permission and the PR's full-sweep label,
//!   resolves the source run and checks its artifact names;
//! * [`dispatch`] (`stage-dispatch`, plus the frontend token): validates the
//!   downloaded artifacts with [`crate::validate`] (the
//!   `validate-artifacts` checks), acknowledges on the PR and sends the
//!   `stage-results` repository dispatch to the frontend;
//! * [`callback`] (`stage-callback`, repository token): the frontend's
//!   `stage-results-started`/`-completed` dispatch, validated field by
//!   field, reported on the PR by updating the acknowledgement — only
//!   the one this repository's token wrote on that PR for that run, bound
//!   to the nonce the dispatch carried ([`ACK_MARKER`]).
//!
//! The rules are the reference's; see `docs/entry-points.md`.

use std::collections::BTreeSet;
use std::path::Path;

use github_client::Client;
use github_client::trust::{
    LabelHistory, head_repository, may_write, run_is_from, run_label_refusal,
};
use serde_json::{Value, json};

use crate::find::has_reusable_results;

/// The comment command.
pub const COMMAND: &str = "/stage-results";

/// Labels a PR must carry (and must have carried when the run was created).
pub const FULL_SWEEP_LABELS: [&str; 4] = [
    "full-sweep-enabled",
    "non-canary-full-sweep-enabled",
    "full-sweep-fail-fast",
    "full-sweep-fail-fast-no-canary",
];

/// Conclusions that may be staged: a cancelled or failed sweep can still
/// hold useful partial results (the artifact checks keep empty runs out).
pub const STAGEABLE_CONCLUSIONS: [&str; 3] = ["success", "cancelled", "failure"];

/// The frontend's callback event types.
pub const CALLBACK_TYPES: [&str; 2] = ["stage-results-started", "stage-results-completed"];

/// Opening of the hidden marker an acknowledgement carries:
/// `<!-- sweepkit:stage-results-ack run-id=<id> nonce-sha256=<hex> -->`.
/// The callback edits only a comment with this marker whose nonce hash is
/// that of the nonce it presents.
pub const ACK_MARKER: &str = "<!-- sweepkit:stage-results-ack ";

/// Bytes of randomness in an acknowledgement nonce (128 bits: not
/// guessable, and short enough for a dispatch payload field).
const NONCE_BYTES: usize = 16;

/// The login a callback compares the acknowledgement's author with when
/// the token cannot say who it is (`GET /user` answers 403 to a workflow's
/// installation token, whose comments are `github-actions[bot]`'s).
pub const DEFAULT_BOT_LOGIN: &str = "github-actions[bot]";

/// Why staging did not happen.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// The rules said no (exit 1).
    #[error("{0}")]
    Refused(String),
    /// GitHub could not answer (exit 2).
    #[error(transparent)]
    GitHub(#[from] github_client::Error),
    /// Unreadable input or an answer without a needed field (exit 2).
    #[error("{0}")]
    Failed(String),
    /// The downloaded artifacts could not be read or written (exit 2).
    #[error(transparent)]
    Artifacts(#[from] crate::validate::ValidateError),
}

/// Refused is a "no" (exit 1); the rest could not do the job (exit 2).
impl sweep_cli::Classify for StageError {
    fn kind(&self) -> sweep_cli::Kind {
        match self {
            StageError::Refused(_) => sweep_cli::Kind::Rejected,
            _ => sweep_cli::Kind::Failed,
        }
    }
}

type Result<T, E = StageError> = std::result::Result<T, E>;

fn refused<T>(msg: impl Into<String>) -> Result<T> {
    Err(StageError::Refused(msg.into()))
}

/// JavaScript's `String.prototype.trim` / regex `\s` set.
fn js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// The reference's grammar, `^/stage-results(?:\s+(\d+))?$` on the trimmed
/// body: `Ok(None)` for the bare command, `Ok(Some(id))` with a run id,
/// `Err(())` for anything else (the usage reply). A run id too large for a
/// `u64` is not a run id.
#[allow(clippy::result_unit_err)] // the only error is "not the grammar"
pub fn parse(body: &str) -> std::result::Result<Option<u64>, ()> {
    let rest = body
        .trim_matches(js_space)
        .strip_prefix(COMMAND)
        .ok_or(())?;
    if rest.is_empty() {
        return Ok(None);
    }
    let digits = rest.trim_start_matches(js_space);
    if digits.len() == rest.len()
        || digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(());
    }
    digits.parse().map(Some).map_err(|_| ())
}

/// What [`request`] needs.
#[derive(Debug, Clone)]
pub struct RequestArgs {
    pub repo: String,
    pub pr: u64,
    /// The comment's body and author.
    pub body: String,
    pub actor: String,
    /// Workflow file of PR sweeps.
    pub workflow: String,
}

/// The resolved source run.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub run_id: u64,
    pub run_attempt: u64,
    pub run_date: String,
    pub requested_by: String,
    pub run_url: String,
}

impl Source {
    /// The step outputs.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("run-id", self.run_id.to_string()),
            ("run-attempt", self.run_attempt.to_string()),
            ("run-date", self.run_date.clone()),
            ("requested-by", self.requested_by.clone()),
            ("run-url", self.run_url.clone()),
        ]
    }
}

fn post_comment(client: &Client, repo: &str, number: u64, body: &str) -> Result<Value> {
    Ok(client.post(
        &format!("/repos/{repo}/issues/{number}/comments"),
        &json!({ "body": body }),
    )?)
}

fn can_write(client: &Client, repo: &str, login: &str) -> Result<(bool, String)> {
    let access = client.collaborator_access(repo, login)?;
    let permission = access
        .as_ref()
        .and_then(|a| a.permission.clone())
        .unwrap_or_else(|| "none".into());
    Ok((may_write(access.as_ref()), permission))
}

/// Why `run` was not triggered from `repo` itself (a fork's run, or one
/// that does not say), if it was not: its code and artifacts were under
/// someone else's control, so it is never staged.
fn foreign_run(run: &Value, repo: &str) -> Option<String> {
    if run_is_from(run, repo) {
        return None;
    }
    Some(match head_repository(run) {
        Some(h) => format!("it was triggered from {h}, not from {repo}"),
        None => format!("it does not name its head repository, so it may not be from {repo}"),
    })
}

/// Resolves a `/stage-results` comment (module doc). Refusals the reference
/// answers on the PR (usage, permission, label) are answered the same way.
pub fn request(client: &Client, a: &RequestArgs) -> Result<Source> {
    let repo = &a.repo;
    let requested = authorised_request(client, a)?;
    let pull = client.get(&format!("/repos/{repo}/pulls/{}", a.pr), &[])?;
    require_full_sweep_label(client, a, &pull)?;

    let history = LabelHistory::from_timeline(&client.get_all(
        &format!("/repos/{repo}/issues/{}/timeline", a.pr),
        &[],
        None,
    )?);
    let commits: BTreeSet<String> = client
        .get_all(&format!("/repos/{repo}/pulls/{}/commits", a.pr), &[], None)?
        .iter()
        .filter_map(|c| c["sha"].as_str().map(str::to_string))
        .collect();
    let check = Checker {
        client,
        repo,
        pr: a.pr,
        workflow_path: format!(".github/workflows/{}", a.workflow),
        history: &history,
        commits: &commits,
    };

    let run = match requested {
        Some(id) => named_run(&check, id)?,
        None => newest_stageable_run(&check, a, &pull)?,
    };
    let run_id = run["id"]
        .as_u64()
        .ok_or_else(|| StageError::Failed("the source run has no id".into()))?;
    Ok(Source {
        run_id,
        run_attempt: run["run_attempt"].as_u64().unwrap_or(1),
        run_date: run_str(&run, "/created_at").chars().take(10).collect(),
        requested_by: a.actor.clone(),
        run_url: run_str(&run, "/html_url").to_string(),
    })
}

/// The run id the comment names (`None`: the newest stageable run), once
/// its author is known to have write access and its syntax is valid.
fn authorised_request(client: &Client, a: &RequestArgs) -> Result<Option<u64>> {
    let repo = &a.repo;
    // Who asked comes first: a reader's comment is never parsed and never
    // answered with usage help (only the permission reply), so nobody
    // without write access makes the bot talk about syntax.
    let (ok, permission) = can_write(client, repo, &a.actor)?;
    if !ok {
        post_comment(
            client,
            repo,
            a.pr,
            &format!(
                "@{} `/stage-results` requires write access to this repository.",
                a.actor
            ),
        )?;
        return refused(format!("actor {} has {permission} permission", a.actor));
    }
    let Ok(requested) = parse(&a.body) else {
        post_comment(
            client,
            repo,
            a.pr,
            "Usage: `/stage-results` or `/stage-results <run-id>`.",
        )?;
        return refused("unsupported /stage-results syntax");
    };
    Ok(requested)
}

/// Refuses (and says so on the PR) unless the PR carries a full-sweep label.
fn require_full_sweep_label(client: &Client, a: &RequestArgs, pull: &Value) -> Result<()> {
    let labels: BTreeSet<String> = pull["labels"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l.as_str().or_else(|| l["name"].as_str()))
        .map(str::to_string)
        .collect();
    if FULL_SWEEP_LABELS.iter().any(|l| labels.contains(*l)) {
        return Ok(());
    }
    let list: Vec<String> = FULL_SWEEP_LABELS.iter().map(|l| format!("`{l}`")).collect();
    post_comment(
        client,
        &a.repo,
        a.pr,
        &format!(
            "@{} `/stage-results` requires a completed run from a PR using one of: {}.",
            a.actor,
            list.join(", ")
        ),
    )?;
    refused("the PR does not have a full-sweep label")
}

/// The run the comment named, if it may be staged.
fn named_run(check: &Checker, id: u64) -> Result<Value> {
    let run = check
        .client
        .get(&format!("/repos/{}/actions/runs/{id}", check.repo), &[])?;
    if let Some(reason) = check.refusal(&run, true)? {
        return refused(format!("run {id} cannot be staged because {reason}"));
    }
    Ok(run)
}

/// The newest completed `pull_request` run of the PR's branch that may be
/// staged.
fn newest_stageable_run(check: &Checker, a: &RequestArgs, pull: &Value) -> Result<Value> {
    let branch = run_str(pull, "/head/ref");
    let candidates = check
        .client
        .completed_pull_request_runs(&a.repo, &a.workflow, branch)?;
    for c in candidates {
        if check.refusal(&c, false)?.is_none() {
            return Ok(c);
        }
    }
    refused(format!(
        "no stageable completed {} run with unexpired staging artifacts was found for PR #{}",
        a.workflow, a.pr
    ))
}

fn run_str<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

struct Checker<'a> {
    client: &'a Client,
    repo: &'a str,
    pr: u64,
    workflow_path: String,
    history: &'a LabelHistory,
    commits: &'a BTreeSet<String>,
}

impl Checker<'_> {
    /// Why `run` cannot be staged (`Ok(None)`: it can). An explicitly named
    /// run may also be one GitHub associates with the PR although its head
    /// is no longer in the commit list (a force-push).
    fn refusal(&self, run: &Value, historical: bool) -> Result<Option<String>> {
        if let Some(reason) = foreign_run(run, self.repo) {
            return Ok(Some(reason));
        }
        if run_str(run, "/path") != self.workflow_path || run_str(run, "/event") != "pull_request" {
            return Ok(Some(format!(
                "it is not a pull-request run of {}",
                self.workflow_path.trim_start_matches(".github/workflows/")
            )));
        }
        let associated = run["pull_requests"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["number"].as_u64() == Some(self.pr));
        let in_pr = self.commits.contains(run_str(run, "/head_sha"));
        if !(in_pr || (historical && associated)) {
            return Ok(Some("its head commit is not in the PR commit list".into()));
        }
        // The rule `reuse-sweep find` applies to a reused run too; staging
        // keeps the reference's check (a full-sweep label, no list of
        // incompatible ones: an `evals-only` run may be staged).
        if let Some(reason) = run_label_refusal(self.history, run, &FULL_SWEEP_LABELS, &[]) {
            return Ok(Some(reason));
        }
        let conclusion = run_str(run, "/conclusion");
        if run_str(run, "/status") != "completed" || !STAGEABLE_CONCLUSIONS.contains(&conclusion) {
            return Ok(Some(format!(
                "it is {}/{}",
                run["status"].as_str().unwrap_or("null"),
                run["conclusion"].as_str().unwrap_or("null")
            )));
        }
        let id = run["id"].as_u64().unwrap_or(0);
        let names: BTreeSet<String> = self
            .client
            .get_all(
                &format!("/repos/{}/actions/runs/{id}/artifacts", self.repo),
                &[],
                Some("artifacts"),
            )?
            .iter()
            .filter(|a| a["expired"].as_bool() != Some(true))
            .filter_map(|a| a["name"].as_str().map(str::to_string))
            .collect();
        if !names.contains("changelog-metadata") {
            return Ok(Some(
                "it has no unexpired changelog-metadata artifact".into(),
            ));
        }
        if !has_reusable_results(&names) {
            return Ok(Some(
                "it has no unexpired benchmark result artifacts".into(),
            ));
        }
        Ok(None)
    }
}

/// What [`dispatch`] needs.
#[derive(Debug, Clone)]
pub struct DispatchArgs {
    pub repo: String,
    pub pr: u64,
    pub source: Source,
    /// The source run's artifacts, downloaded (`gh run download` layout).
    pub artifacts_dir: std::path::PathBuf,
    /// `owner/name` of the frontend receiving the dispatch.
    pub frontend_repo: String,
}

/// Refuses a run not triggered from `repo` itself, validates the
/// downloaded artifacts, acknowledges on the PR (with `client`, a marker
/// holding the hash of a fresh nonce) and dispatches staging with the
/// nonce to the frontend (with `frontend`).
/// Returns the acknowledgement's comment id.
pub fn dispatch(client: &Client, frontend: &Client, a: &DispatchArgs) -> Result<u64> {
    // The request step checked this already; the dispatch step can be
    // called on its own, so it does not take the run id on trust.
    let run = client.get(
        &format!("/repos/{}/actions/runs/{}", a.repo, a.source.run_id),
        &[],
    )?;
    if let Some(reason) = foreign_run(&run, &a.repo) {
        return refused(format!(
            "run {} cannot be staged because {reason}",
            a.source.run_id
        ));
    }
    let report = crate::validate::validate(&a.artifacts_dir)?;
    if !report.errors.is_empty() {
        post_comment(
            client,
            &a.repo,
            a.pr,
            &format!(
                "@{} run {} cannot be staged: its artifacts failed validation ({} problem(s); see the [workflow log]({})).",
                a.source.requested_by,
                a.source.run_id,
                report.errors.len(),
                a.source.run_url
            ),
        )?;
        return refused(format!(
            "run {} cannot be staged: artifact validation failed:\n{}",
            a.source.run_id,
            report.errors.join("\n")
        ));
    }
    let nonce = new_nonce()?;
    let ack = post_comment(
        client,
        &a.repo,
        a.pr,
        &format!(
            "@{} staging [run {}]({}). Existing staged runs will be preserved; a completion link will be posted here.\n\n{}",
            a.source.requested_by,
            a.source.run_id,
            a.source.run_url,
            ack_marker(a.source.run_id, &nonce)
        ),
    )?;
    let comment_id = ack["id"]
        .as_u64()
        .ok_or_else(|| StageError::Failed("the acknowledgement comment has no id".into()))?;
    frontend.post(
        &format!("/repos/{}/dispatches", a.frontend_repo),
        &json!({
            "event_type": "stage-results",
            "client_payload": {
                "source-repository": a.repo,
                "pr-number": a.pr.to_string(),
                "run-id": a.source.run_id.to_string(),
                "run-attempt": a.source.run_attempt.to_string(),
                "run-date": a.source.run_date,
                "requested-by": a.source.requested_by,
                "comment-id": comment_id.to_string(),
                "ack-nonce": nonce,
            },
        }),
    )?;
    Ok(comment_id)
}

/// A fresh nonce: [`NONCE_BYTES`] from the kernel's generator, hex.
fn new_nonce() -> Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; NONCE_BYTES];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| StageError::Failed(format!("reading /dev/urandom for the nonce: {e}")))?;
    Ok(hex(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn nonce_hash(nonce: &str) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(nonce.as_bytes()))
}

/// The acknowledgement's hidden marker. The comment is public, so it
/// carries the nonce's SHA-256, not the nonce: only the receiver of the
/// dispatch can present the nonce itself.
fn ack_marker(run_id: u64, nonce: &str) -> String {
    format!(
        "{ACK_MARKER}run-id={run_id} nonce-sha256={} -->",
        nonce_hash(nonce)
    )
}

/// `(run-id, nonce-sha256)` of the first marker in `body`.
fn parse_ack_marker(body: &str) -> Option<(String, String)> {
    let rest = &body[body.find(ACK_MARKER)? + ACK_MARKER.len()..];
    let inner = &rest[..rest.find("-->")?];
    let (mut run, mut hash) = (None, None);
    for word in inner.split_whitespace() {
        match word.split_once('=') {
            Some(("run-id", v)) => run = Some(v.to_string()),
            Some(("nonce-sha256", v)) => hash = Some(v.to_string()),
            _ => {}
        }
    }
    Some((run?, hash?))
}

/// What [`callback`] needs.
#[derive(Debug, Clone)]
pub struct CallbackArgs {
    pub repo: String,
    /// The `repository_dispatch` event payload.
    pub event: Value,
    /// The only accepted `source-repository`.
    pub frontend_repo: String,
    /// `https://github.com` (or the GHES server).
    pub server_url: String,
    /// The staging site's root.
    pub staging_site: String,
    /// Who the acknowledgement's author must be when `GET /user` answers
    /// 403 (an installation token): normally [`DEFAULT_BOT_LOGIN`].
    pub bot_login: String,
}

/// The comment a valid callback produces, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub pr: u64,
    /// The acknowledgement to update; `None` = a new comment.
    pub comment_id: Option<u64>,
    pub body: String,
    /// The nonce the callback presents (`ack-nonce`; required with a
    /// comment id).
    pub nonce: String,
}

fn field(p: &Value, key: &str) -> String {
    match &p[key] {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn numeric(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The callback payload's fields, as strings (a missing one is empty).
struct CallbackFields {
    kind: String,
    nonce: String,
    run_id: String,
    run_date: String,
    pr: String,
    by: String,
    app_run: String,
    comment: String,
    succeeded: String,
}

impl CallbackFields {
    fn read(event: &Value) -> Self {
        let p = &event["client_payload"];
        CallbackFields {
            kind: event["action"].as_str().unwrap_or("").to_string(),
            nonce: field(p, "ack-nonce"),
            run_id: field(p, "run-id"),
            run_date: field(p, "run-date"),
            pr: field(p, "pr-number"),
            by: field(p, "requested-by"),
            app_run: field(p, "app-run-id"),
            comment: field(p, "comment-id"),
            succeeded: field(p, "stage-succeeded"),
        }
    }
}

/// Validates a staging callback (every field, as the reference) and
/// builds its PR comment.
pub fn callback_report(a: &CallbackArgs) -> Result<Report> {
    let p = &a.event["client_payload"];
    let f = CallbackFields::read(&a.event);
    if p["source-repository"].as_str() != Some(a.frontend_repo.as_str()) {
        return refused("unsupported staging callback source");
    }
    check_callback_ids(&f)?;
    check_callback_details(&f)?;
    let body = callback_body(a, &f);
    Ok(Report {
        pr: f
            .pr
            .parse()
            .map_err(|_| StageError::Refused("PR number out of range".into()))?,
        comment_id: if f.comment.is_empty() {
            None
        } else {
            Some(
                f.comment
                    .parse()
                    .map_err(|_| StageError::Refused("comment id out of range".into()))?,
            )
        },
        body,
        nonce: f.nonce,
    })
}

/// The run, PR, app-run and comment ids are digits; with a comment id
/// comes the acknowledgement's nonce.
fn check_callback_ids(f: &CallbackFields) -> Result<()> {
    if !numeric(&f.run_id) || !numeric(&f.pr) || !numeric(&f.app_run) {
        return refused("callback run and PR identifiers must be numeric");
    }
    if !f.comment.is_empty() && !numeric(&f.comment) {
        return refused("callback comment identifier must be numeric");
    }
    if !f.comment.is_empty()
        && (f.nonce.len() != 2 * NONCE_BYTES
            || !f
                .nonce
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    {
        return refused(format!(
            "callback ack-nonce must be the acknowledgement's nonce ({} lower-case hex digits)",
            2 * NONCE_BYTES
        ));
    }
    Ok(())
}

/// The run date, requester, callback type and success flag are well formed.
fn check_callback_details(f: &CallbackFields) -> Result<()> {
    let b = f.run_date.as_bytes();
    let date_ok = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    if !date_ok {
        return refused("callback run date must use YYYY-MM-DD");
    }
    let by = &f.by;
    if by.is_empty() || !by.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
        return refused("callback requester is not a valid GitHub login");
    }
    let kind = f.kind.as_str();
    if !CALLBACK_TYPES.contains(&kind) {
        return refused("unsupported staging callback type");
    }
    if kind == "stage-results-completed" && f.succeeded != "true" && f.succeeded != "false" {
        return refused("callback stage-succeeded value must be true or false");
    }
    Ok(())
}

/// The PR comment for a validated callback: staging started, succeeded
/// (with the chart link) or failed.
fn callback_body(a: &CallbackArgs, f: &CallbackFields) -> String {
    let (by, run_id, run_date) = (&f.by, &f.run_id, &f.run_date);
    let server = a.server_url.trim_end_matches('/');
    let app_url = format!("{server}/{}/actions/runs/{}", a.frontend_repo, f.app_run);
    let source_url = format!("{server}/{}/actions/runs/{run_id}", a.repo);
    // encodeURIComponent leaves `~`, digits and `-` as they are.
    let entry = format!("{run_date}~r{run_id}");
    let chart = format!(
        "{}/inference?i_dates={entry}",
        a.staging_site.trim_end_matches('/')
    );
    if f.kind == "stage-results-started" {
        format!(
            "@{by} staging [run {run_id}]({source_url}). The [staging workflow]({app_url}) is running; existing staged runs will be preserved and this comment will be updated when staging completes."
        )
    } else if f.succeeded == "true" {
        format!(
            "@{by} staged run {run_id}: {chart}\n\nThe run stays staged across later `/stage-results` requests; staging the same run again updates its data. [Staging workflow]({app_url})"
        )
    } else {
        format!("@{by} staging run {run_id} failed. [Inspect the staging workflow]({app_url}).")
    }
}

/// The login of the token's owner: `GET /user`, or `bot_login` when GitHub
/// answers 403 (an installation token has no user).
fn token_login(client: &Client, bot_login: &str) -> Result<String> {
    match client.get("/user", &[]) {
        Ok(user) => user["login"]
            .as_str()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .ok_or_else(|| StageError::Failed("GET /user answered without a login".into())),
        Err(e) if e.status() == Some(403) => Ok(bot_login.to_string()),
        Err(e) => Err(e.into()),
    }
}

/// Reads comment `id` and checks it is the acknowledgement this
/// repository's staging made on PR `r.pr` for run `run_id`, bound to the
/// nonce the callback presents. Returns the marker to keep in the edit.
fn check_ack(
    client: &Client,
    a: &CallbackArgs,
    r: &Report,
    id: u64,
    run_id: &str,
) -> Result<String> {
    let not_ours = |why: String| -> Result<String> {
        refused(format!(
            "comment {id} is not the staging acknowledgement of this callback: {why}; nothing was edited"
        ))
    };
    let comment = match client.get(&format!("/repos/{}/issues/comments/{id}", a.repo), &[]) {
        Ok(c) => c,
        Err(e) if e.status() == Some(404) => {
            return not_ours(format!("there is no such comment in {}", a.repo));
        }
        Err(e) => return Err(e.into()),
    };
    let me = token_login(client, &a.bot_login)?;
    let author = run_str(&comment, "/user/login");
    if !author.eq_ignore_ascii_case(&me) {
        return not_ours(format!("it was written by {author:?}, not by {me}"));
    }
    let issue_url = run_str(&comment, "/issue_url").to_ascii_lowercase();
    let want = format!("/repos/{}/issues/{}", a.repo, r.pr).to_ascii_lowercase();
    if !issue_url.ends_with(&want) {
        return not_ours(format!("it is not on PR #{} of {}", r.pr, a.repo));
    }
    let Some((ack_run, hash)) = parse_ack_marker(run_str(&comment, "/body")) else {
        return not_ours("it has no acknowledgement marker".into());
    };
    if ack_run != run_id {
        return not_ours(format!("it acknowledges run {ack_run}, not run {run_id}"));
    }
    if hash != nonce_hash(&r.nonce) {
        return not_ours(
            "the callback's ack-nonce is not the one the acknowledgement was made with".into(),
        );
    }
    Ok(format!(
        "{ACK_MARKER}run-id={ack_run} nonce-sha256={hash} -->"
    ))
}

/// Posts (or updates) the callback's comment. An update goes only to the
/// acknowledgement [`check_ack`] accepts, and keeps its marker so the next
/// callback of the same staging can find it.
pub fn callback(client: &Client, a: &CallbackArgs) -> Result<Report> {
    let r = callback_report(a)?;
    match r.comment_id {
        Some(id) => {
            let run_id = field(&a.event["client_payload"], "run-id");
            let marker = check_ack(client, a, &r, id, &run_id)?;
            let body = json!({ "body": format!("{}\n\n{marker}", r.body) });
            client.patch(&format!("/repos/{}/issues/comments/{id}", a.repo), &body)?
        }
        None => post_comment(client, &a.repo, r.pr, &r.body)?,
    };
    Ok(r)
}

/// Reads a JSON event file.
pub fn read_event(path: &Path) -> Result<Value> {
    let text = sweep_model::fsio::read_text(path, sweep_model::fsio::MAX_EVENT_PAYLOAD_BYTES)
        .map_err(|e| {
            StageError::Failed(format!("reading the event payload {}: {e}", path.display()))
        })?;
    serde_json::from_str(&text)
        .map_err(|e| StageError::Failed(format!("{}: not JSON: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar_is_the_reference_regex() {
        assert_eq!(parse("/stage-results"), Ok(None));
        assert_eq!(parse("  /stage-results \n"), Ok(None));
        assert_eq!(parse("/stage-results 123"), Ok(Some(123)));
        assert_eq!(parse("/stage-results\n\t42\n"), Ok(Some(42)));
        assert_eq!(parse("\u{feff}/stage-results\u{a0}7"), Ok(Some(7)));
        for bad in [
            "/stage-results123",
            "/stage-results abc",
            "/stage-results 12 34",
            "/stage-results 12x",
            "/stage-results -1",
            "please /stage-results",
            "/stage-resultsx",
            "/stage-results 99999999999999999999999",
            "/stage-results \u{0663}",
        ] {
            assert_eq!(parse(bad), Err(()), "{bad:?}");
        }
    }
}
