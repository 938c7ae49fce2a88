//! The trust rules every entry point that acts on another run's artifacts
//! shares (`reuse-sweep find`, `/stage-results`, `sweep-ops
//! recover-ingest`): who may authorise, which commit a sweep stands for, and
//! whose run it is. Each caller keeps its own protocol; these answers are
//! the same everywhere so the strict rules cannot drift apart.

use serde_json::Value;

use crate::Access;

/// Repository roles whose holders may authorise (`role_name` of the
/// collaborator permission endpoint; custom roles report their base
/// `permission`, checked against [`WRITE_PERMISSIONS`]).
pub const AUTHORISING_ROLES: [&str; 3] = ["admin", "maintain", "write"];
/// `permission` values (the legacy field: maintain reports `write`) that
/// may authorise.
pub const WRITE_PERMISSIONS: [&str; 2] = ["admin", "write"];

/// Whether an access answer grants write, maintain or admin. `None` (GitHub
/// answered 404: not a collaborator) never does.
pub fn may_write(access: Option<&Access>) -> bool {
    access.is_some_and(|a| {
        a.role_name
            .as_deref()
            .is_some_and(|r| AUTHORISING_ROLES.contains(&r))
            || a.permission
                .as_deref()
                .is_some_and(|p| WRITE_PERMISSIONS.contains(&p))
    })
}

/// The commit whose sweep a reuse stands for: the PR's newest commit that is
/// neither a merge commit nor tagged `[skip-sweep]` (the commits the reuse
/// protocol itself adds after the sweep: the merge of main and the refresh
/// commit). `commits` is the PR's commit list in API order (oldest first).
pub fn swept_head(commits: &[Value]) -> Option<String> {
    commits
        .iter()
        .rev()
        .find(|c| {
            let parents = c
                .get("parents")
                .and_then(Value::as_array)
                .map_or(1, Vec::len);
            let message = c
                .pointer("/commit/message")
                .and_then(Value::as_str)
                .unwrap_or("");
            parents <= 1 && !message.contains("[skip-sweep]")
        })
        .and_then(|c| c.get("sha").and_then(Value::as_str))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The repository a workflow run was triggered from
/// (`head_repository.full_name`), if the run says.
pub fn head_repository(run: &Value) -> Option<&str> {
    run.pointer("/head_repository/full_name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Whether `run` was triggered from `repo` itself (`owner/name`, compared
/// without regard to case, as GitHub compares names). A run from a fork, or
/// one that does not name its head repository, is not: its code and its
/// artifacts were under someone else's control.
pub fn run_is_from(run: &Value, repo: &str) -> bool {
    head_repository(run).is_some_and(|h| h.eq_ignore_ascii_case(repo))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_write_maintain_or_admin_may_authorise() {
        let a = |p: &str, r: &str| Access {
            permission: Some(p.into()),
            role_name: Some(r.into()),
        };
        assert!(may_write(Some(&a("admin", "admin"))));
        assert!(may_write(Some(&a("write", "maintain"))));
        assert!(may_write(Some(&a("write", "custom-bench"))));
        assert!(!may_write(Some(&a("read", "triage"))));
        assert!(!may_write(Some(&a("none", "read"))));
        assert!(!may_write(None));
    }

    #[test]
    fn swept_head_skips_merges_and_skip_sweep_commits() {
        let c = |sha: &str, parents: usize, msg: &str| json!({"sha": sha, "parents": vec![json!({"sha": "p"}); parents], "commit": {"message": msg}});
        let list = vec![
            c("a", 1, "feat"),
            c("b", 1, "fix"),
            c("m", 2, "Merge branch 'main'"),
            c("r", 1, "chore: refresh [skip-sweep]"),
        ];
        assert_eq!(swept_head(&list).as_deref(), Some("b"));
        assert_eq!(swept_head(&list[..2]).as_deref(), Some("b"));
        let mut more = list.clone();
        more.push(c("z", 1, "tweak"));
        assert_eq!(swept_head(&more).as_deref(), Some("z"));
        assert_eq!(swept_head(&list[2..]), None);
        assert_eq!(swept_head(&[json!({"sha": "x"})]).as_deref(), Some("x"));
    }

    #[test]
    fn a_run_from_a_fork_or_from_nowhere_is_not_the_repositorys() {
        let run = |h: Value| json!({"id": 1, "head_repository": h});
        assert!(run_is_from(
            &run(json!({"full_name": "SemiAnalysisAI/InferenceX"})),
            "SemiAnalysisAI/InferenceX"
        ));
        assert!(run_is_from(
            &run(json!({"full_name": "semianalysisai/inferencex"})),
            "SemiAnalysisAI/InferenceX"
        ));
        assert!(!run_is_from(
            &run(json!({"full_name": "mallory-bench/InferenceX"})),
            "SemiAnalysisAI/InferenceX"
        ));
        assert!(!run_is_from(&run(Value::Null), "SemiAnalysisAI/InferenceX"));
        assert!(!run_is_from(&json!({"id": 1}), "SemiAnalysisAI/InferenceX"));
        assert!(!run_is_from(
            &run(json!({"full_name": ""})),
            "SemiAnalysisAI/InferenceX"
        ));
    }
}
