//! `dispatch-ingest`: the `repository_dispatch` that `run-sweep.yml`'s
//! ingest jobs (`trigger-ingest`, `trigger-agentic-ingest`) send after a
//! push-to-main sweep, or a reused one (the reference's inline
//! `actions/github-script` step, as tested Rust).
//!
//! The event type is `ingest-results` or `ingest-agentic-results` (the
//! latter adds `database-target: production`); the payload names the run
//! holding the benchmark artifacts (`source-run-id`: the reused PR run when
//! the setup job enabled a reuse, else this run) and the run holding the
//! changelog metadata (`merge-run-id`: always this run). Both ids go out as
//! decimal strings, as the reference sends them; anything else is refused
//! before a request is made. `recover-ingest` sends the same dispatch
//! ([`payload`], [`send`]).

use serde_json::{Value, json};

use crate::{Result, refused};

/// The event types the ingest repository accepts.
pub const EVENT_TYPES: [&str; 2] = ["ingest-agentic-results", "ingest-results"];

/// The event type whose payload carries `database-target: production`.
pub const AGENTIC_EVENT: &str = "ingest-agentic-results";

/// What `dispatch-ingest` needs (the ingest job's inputs, unparsed: the
/// checks are [`plan`]'s).
#[derive(Debug, Clone)]
pub struct IngestArgs {
    /// `owner/name` receiving the dispatch.
    pub ingest_repository: String,
    /// One of [`EVENT_TYPES`].
    pub event_type: String,
    /// This run's id (`GITHUB_RUN_ID`).
    pub run_id: String,
    /// The setup job's `reuse-enabled`: `true`, `false`, or empty when the
    /// reuse lookup did not run (the manual entry).
    pub reuse_enabled: String,
    /// The setup job's `reuse-source-run-id` (read only when reused).
    pub reuse_source_run_id: String,
}

/// The `client_payload` of an ingest dispatch of `event_type`.
pub fn payload(event_type: &str, source_run_id: &str, merge_run_id: &str) -> Value {
    let mut p = json!({"source-run-id": source_run_id, "merge-run-id": merge_run_id});
    if event_type == AGENTIC_EVENT {
        p["database-target"] = json!("production");
    }
    p
}

/// Checks the inputs and returns the payload to send (module doc).
/// Refused (exit 1): an unknown event type, a repository that is not
/// `owner/name`, a `reuse-enabled` other than `true`/`false`/empty, a
/// source or run id that is not a decimal number.
pub fn plan(a: &IngestArgs) -> Result<Value> {
    if !EVENT_TYPES.contains(&a.event_type.as_str()) {
        return refused(format!(
            "event type '{}' is not one of {}",
            a.event_type,
            EVENT_TYPES.join(", ")
        ));
    }
    if !is_repository(&a.ingest_repository) {
        return refused(format!(
            "ingest repository '{}' is not `owner/name`",
            a.ingest_repository
        ));
    }
    let reused = match a.reuse_enabled.as_str() {
        "true" => true,
        "false" | "" => false,
        other => {
            return refused(format!(
                "reuse-enabled '{other}' is not true or false (the setup job's output)"
            ));
        }
    };
    if !is_run_id(&a.run_id) {
        return refused(format!("this run's id '{}' is not numeric", a.run_id));
    }
    let source = if reused {
        a.reuse_source_run_id.as_str()
    } else {
        a.run_id.as_str()
    };
    if !is_run_id(source) {
        return refused(format!(
            "source run id '{source}' (the reused run) is not numeric: nothing dispatched"
        ));
    }
    Ok(payload(&a.event_type, source, &a.run_id))
}

/// Sends the ingest dispatch with `ingest` (a client holding the token
/// allowed to dispatch to `repository`).
pub fn send(
    ingest: &github_client::Client,
    repository: &str,
    event_type: &str,
    payload: &Value,
) -> Result<()> {
    ingest.post(
        &format!("/repos/{repository}/dispatches"),
        &json!({"event_type": event_type, "client_payload": payload}),
    )?;
    Ok(())
}

/// A run id as the reference accepts it (`^[0-9]+$`).
fn is_run_id(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `owner/name` with GitHub's characters only, so the name cannot reach
/// another API path.
fn is_repository(s: &str) -> bool {
    let ok = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    };
    matches!(s.split_once('/'), Some((o, n)) if ok(o) && ok(n))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // test code: a panic is the failure report
mod tests {
    use super::*;

    fn args(reuse: &str, source: &str) -> IngestArgs {
        IngestArgs {
            ingest_repository: "acme/app".into(),
            event_type: "ingest-results".into(),
            run_id: "222".into(),
            reuse_enabled: reuse.into(),
            reuse_source_run_id: source.into(),
        }
    }

    #[test]
    fn a_reused_sweep_names_the_source_run_and_this_run_as_merge() {
        assert_eq!(
            plan(&args("true", "111")).unwrap(),
            json!({"source-run-id": "111", "merge-run-id": "222"})
        );
    }

    #[test]
    fn without_reuse_this_run_is_source_and_merge() {
        for reuse in ["false", ""] {
            assert_eq!(
                plan(&args(reuse, "111")).unwrap(),
                json!({"source-run-id": "222", "merge-run-id": "222"})
            );
        }
    }

    #[test]
    fn the_agentic_ingest_targets_the_production_database() {
        let mut a = args("true", "111");
        a.event_type = AGENTIC_EVENT.into();
        assert_eq!(
            plan(&a).unwrap(),
            json!({"source-run-id": "111", "merge-run-id": "222", "database-target": "production"})
        );
    }

    #[test]
    fn non_numeric_ids_and_odd_inputs_are_refused() {
        let refused = |a: IngestArgs| matches!(plan(&a), Err(crate::OpsError::Refused(_)));
        for source in ["", "12a", "-1", " 1", "1e3", "١٢"] {
            assert!(refused(args("true", source)), "{source:?}");
        }
        let mut a = args("false", "");
        a.run_id = "x".into();
        assert!(refused(a));
        assert!(refused(args("yes", "111")));
        for repo in [
            "acme",
            "acme/app/x",
            "/app",
            "acme/..",
            "acme/a p",
            "acme/a?b",
        ] {
            let mut a = args("true", "111");
            a.ingest_repository = repo.into();
            assert!(refused(a), "{repo}");
        }
        let mut a = args("true", "111");
        a.event_type = "ingest".into();
        assert!(refused(a));
    }
}
