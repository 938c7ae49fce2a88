//! The sweep policy (`sweep_matrix::policy`) through its public API: the
//! model of the workflow chain (`policy_model::simulate` over `decide`)
//! pinned against every named row of workflow.md §3.3 and against an
//! independent encoding of the intent over the reference gating test's whole
//! cross product, then the primary labels and modifiers of §3.1/§3.2, label
//! matching, concurrency, the comment, forks, label parsing and the event
//! payload. `gating.rs` checks the same scenarios against the YAML that ships.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod policy_model;

use policy_model::JobResult::{self, Failure, Skipped, Success};
use policy_model::{GATING_PUSH_MESSAGES, gating_cross_product, simulate};
use sweep_matrix::policy::{
    ExplicitInputs, PRIMARY_LABELS, PolicyInput, decide, fill_from_event, is_relevant_label,
    parse_labels,
};

const REPO: &str = "SemiAnalysisAI/InferenceX";

fn pr(action: &str, labels: &[&str]) -> PolicyInput {
    PolicyInput {
        event_name: "pull_request".into(),
        action: action.into(),
        labels: labels.iter().map(|s| s.to_string()).collect(),
        head_repo: Some(REPO.into()),
        repository: REPO.into(),
        git_ref: "refs/pull/1/merge".into(),
        ..PolicyInput::default()
    }
}

fn labeled(action: &str, label: &str, labels: &[&str]) -> PolicyInput {
    PolicyInput {
        label: Some(label.into()),
        ..pr(action, labels)
    }
}

fn push(msg: &str) -> PolicyInput {
    PolicyInput {
        event_name: "push".into(),
        head_commit_message: msg.into(),
        repository: REPO.into(),
        git_ref: "refs/heads/main".into(),
        ..PolicyInput::default()
    }
}

fn run(input: &PolicyInput, valid: bool, auth: bool) -> (JobResult, JobResult, &'static str) {
    let c = simulate(&decide(input), valid, auth);
    (
        c.check_changelog,
        c.reuse_gate,
        if c.setup { "RUN" } else { "SKIP" },
    )
}

/// Every row of workflow.md §3.3, in table order (rows listing
/// alternatives are expanded into one case per alternative).
#[test]
fn truth_table_rows_of_section_3_3() {
    let sync = |l: &[&str]| pr("synchronize", l);
    let mut fork = sync(&["full-sweep-enabled"]);
    fork.head_repo = Some("external/InferenceX".into());
    let mut draft = sync(&["full-sweep-enabled"]);
    draft.draft = true;
    let mut tagged = sync(&["full-sweep-enabled"]);
    tagged.head_commit_message = "fix: docs [skip-sweep]".into();

    // (name, input, changelog valid, reuse authorised,
    //  (check-changelog result, reuse-gate result, setup RUN/SKIP))
    type Row<'a> = (
        &'a str,
        PolicyInput,
        bool,
        bool,
        (JobResult, JobResult, &'a str),
    );
    #[rustfmt::skip]
    let rows: Vec<Row<'_>> = vec![
        ("sync full, no authorisation", sync(&["full-sweep-enabled"]), true, false, (Success, Success, "RUN")),
        ("sync full, authorised", sync(&["full-sweep-enabled"]), true, true, (Success, Success, "SKIP")),
        ("sync two primaries, authorised", sync(&["full-sweep-enabled", "full-sweep-fail-fast"]), true, true, (Failure, Skipped, "SKIP")),
        ("sync full, changelog invalid", sync(&["full-sweep-enabled"]), false, false, (Failure, Skipped, "SKIP")),
        ("sync sweep-enabled", sync(&["sweep-enabled"]), true, false, (Success, Skipped, "RUN")),
        ("sync only all-evals", sync(&["all-evals"]), true, false, (Success, Skipped, "SKIP")),
        ("sync only evals-only", sync(&["evals-only"]), true, false, (Success, Skipped, "SKIP")),
        ("sync only agentx-fast", sync(&["agentx-fast"]), true, false, (Success, Skipped, "SKIP")),
        ("sync no labels", sync(&[]), true, false, (Success, Skipped, "SKIP")),
        ("sync full + all-evals, authorised", sync(&["full-sweep-enabled", "all-evals"]), true, true, (Success, Success, "SKIP")),
        ("sync full + evals-only, authorised", sync(&["full-sweep-enabled", "evals-only"]), true, true, (Success, Skipped, "RUN")),
        ("sync full + agentx-fast, authorised", sync(&["full-sweep-enabled", "agentx-fast"]), true, true, (Success, Skipped, "RUN")),
        ("sync full + all-evals + evals-only, authorised", sync(&["full-sweep-enabled", "all-evals", "evals-only"]), true, true, (Success, Skipped, "RUN")),
        ("sync full, fork head", fork, true, false, (Success, Success, "SKIP")),
        ("sync full, draft", draft, true, false, (Skipped, Skipped, "SKIP")),
        ("sync full, [skip-sweep]", tagged, true, false, (Success, Success, "SKIP")),
        ("labeled full", labeled("labeled", "full-sweep-enabled", &["full-sweep-enabled"]), true, false, (Success, Skipped, "RUN")),
        ("labeled all-evals alone", labeled("labeled", "all-evals", &["all-evals"]), true, false, (Success, Skipped, "SKIP")),
        ("labeled evals-only alone", labeled("labeled", "evals-only", &["evals-only"]), true, false, (Success, Skipped, "SKIP")),
        ("labeled agentx-fast alone", labeled("labeled", "agentx-fast", &["agentx-fast"]), true, false, (Success, Skipped, "SKIP")),
        ("labeled modifier all-evals on full", labeled("labeled", "all-evals", &["full-sweep-enabled", "all-evals"]), true, false, (Success, Skipped, "RUN")),
        ("labeled modifier evals-only on full", labeled("labeled", "evals-only", &["full-sweep-enabled", "evals-only"]), true, false, (Success, Skipped, "RUN")),
        ("labeled modifier agentx-fast on full", labeled("labeled", "agentx-fast", &["full-sweep-enabled", "agentx-fast"]), true, false, (Success, Skipped, "RUN")),
        ("labeled skip_queue on full", labeled("labeled", "skip_queue", &["full-sweep-enabled", "skip_queue"]), true, false, (Success, Skipped, "RUN")),
        ("unlabeled skip_queue on full", labeled("unlabeled", "skip_queue", &["full-sweep-enabled"]), true, false, (Success, Skipped, "RUN")),
        ("labeled ci-patchwork on full", labeled("labeled", "ci-patchwork", &["full-sweep-enabled", "ci-patchwork"]), true, false, (Success, Skipped, "RUN")),
        ("unlabeled ci-patchwork on full", labeled("unlabeled", "ci-patchwork", &["full-sweep-enabled"]), true, false, (Success, Skipped, "RUN")),
        ("labeled documentation on full", labeled("labeled", "documentation", &["full-sweep-enabled"]), true, false, (Skipped, Skipped, "SKIP")),
        ("unlabeled last primary", labeled("unlabeled", "full-sweep-enabled", &[]), true, false, (Success, Skipped, "SKIP")),
        ("ready_for_review full", pr("ready_for_review", &["full-sweep-enabled"]), true, false, (Success, Skipped, "RUN")),
        ("push", push("feat: add model"), true, false, (Skipped, Skipped, "RUN")),
        ("push with [skip-sweep]", push("fix: x [skip-sweep]"), true, false, (Skipped, Skipped, "RUN")),
    ];
    for (name, input, valid, auth, want) in rows {
        assert_eq!(run(&input, valid, auth), want, "{name}");
        assert_eq!(
            intent(&input, valid, auth),
            want,
            "intent disagrees: {name}"
        );
    }
}

/// An independent encoding of the intended gating (written from the
/// prose of workflow.md §3, not from `decide`).
fn intent(sc: &PolicyInput, valid: bool, auth: bool) -> (JobResult, JobResult, &'static str) {
    let labels: std::collections::BTreeSet<&str> = sc.labels.iter().map(String::as_str).collect();
    let is_pr = sc.event_name == "pull_request";
    let relevant_event = !matches!(sc.action.as_str(), "labeled" | "unlabeled")
        || sc.label.as_deref().is_some_and(is_relevant_label);
    let sweep_labels = labels.iter().filter(|l| PRIMARY_LABELS.contains(l)).count();
    let check = if !(is_pr && !sc.draft && relevant_event) {
        Skipped
    } else if sweep_labels > 1 || !valid {
        Failure
    } else {
        Success
    };
    let gate_runs = check == Success
        && sc.action == "synchronize"
        && [
            "full-sweep-enabled",
            "non-canary-full-sweep-enabled",
            "full-sweep-fail-fast",
            "full-sweep-fail-fast-no-canary",
        ]
        .iter()
        .any(|l| labels.contains(l))
        && !labels.contains("evals-only")
        && !labels.contains("agentx-fast");
    let gate = if gate_runs { Success } else { Skipped };
    let event_ok = if is_pr {
        !sc.draft
            && sc.head_repo.as_deref() == Some(REPO)
            && sweep_labels > 0
            && relevant_event
            && !sc.head_commit_message.contains("[skip-sweep]")
    } else {
        sc.event_name == "push"
    };
    let setup = check != Failure && !(gate_runs && auth) && event_ok;
    (check, gate, if setup { "RUN" } else { "SKIP" })
}

/// The cross product of the reference's gating test: 4 actions × draft ×
/// 23 label sets × 12 event labels × authorisation × changelog validity ×
/// 2 commit messages, plus 2 pushes = 17 666 scenarios.
#[test]
fn exhaustive_cross_product_agrees_with_intent() {
    let mut n = 0;
    let mut runs = 0;
    for (sc, valid, auth) in gating_cross_product(REPO) {
        let got = run(&sc, valid, auth);
        assert_eq!(
            got,
            intent(&sc, valid, auth),
            "{sc:?} valid={valid} auth={auth}"
        );
        runs += usize::from(got.2 == "RUN");
        n += 1;
    }
    for msg in GATING_PUSH_MESSAGES {
        assert_eq!(run(&push(msg), true, false), (Skipped, Skipped, "RUN"));
        n += 1;
    }
    assert_eq!(n, 17_666);
    // Guard against a degenerate policy that never (or always) runs.
    assert!(runs > 0 && runs < n);
}

/// §3.1: primary label → canary, fail-fast, trim, reuse gate.
#[test]
fn primary_label_behaviour_of_section_3_1() {
    #[rustfmt::skip]
    let rows = [
        // label, trim, canary, fail-fast, gate on synchronize
        ("sweep-enabled", true, false, false, false),
        ("full-sweep-enabled", false, true, false, true),
        ("full-sweep-fail-fast", false, true, true, true),
        ("non-canary-full-sweep-enabled", false, false, false, true),
        ("full-sweep-fail-fast-no-canary", false, false, true, true),
    ];
    for (label, trim, canary, ff, gate) in rows {
        let d = decide(&pr("synchronize", &[label]));
        assert_eq!(
            (
                d.trim_conc,
                d.canary,
                d.fail_fast,
                d.run_reuse_gate,
                d.run_setup
            ),
            (trim, canary, ff, gate, true),
            "{label}"
        );
        assert_eq!(d.primary_label, label);
        assert!(!d.conflicting_labels);
    }
    let none = decide(&pr("synchronize", &[]));
    assert!(!none.run_setup && none.run_check_changelog && none.primary_label.is_empty());
    let two = decide(&pr(
        "synchronize",
        &["sweep-enabled", "full-sweep-fail-fast"],
    ));
    assert!(two.conflicting_labels && two.primary_label.is_empty());
}

/// §3.2: modifiers become flags only on PRs; agentx-fast and evals-only
/// rule the gate out; policy labels have no flag.
#[test]
fn modifiers_of_section_3_2() {
    let d = decide(&pr("synchronize", &["full-sweep-enabled", "all-evals"]));
    assert!(d.all_evals && !d.evals_only && !d.agentx_fast && d.run_reuse_gate);
    let d = decide(&pr("synchronize", &["full-sweep-enabled", "evals-only"]));
    assert!(d.evals_only && !d.run_reuse_gate);
    let d = decide(&pr("synchronize", &["full-sweep-enabled", "agentx-fast"]));
    assert!(d.agentx_fast && !d.run_reuse_gate);
    let d = decide(&pr(
        "synchronize",
        &["full-sweep-enabled", "skip_queue", "ci-patchwork"],
    ));
    assert!(!d.all_evals && !d.evals_only && !d.agentx_fast && d.run_reuse_gate);
    // Push: labels never apply, skip-sweep is ignored.
    let mut p = push("x [skip-sweep]");
    p.labels = vec!["sweep-enabled".into(), "all-evals".into()];
    let d = decide(&p);
    assert!(!d.trim_conc && !d.all_evals && !d.fail_fast && !d.skip_pr_sweep && d.run_setup);
    assert!(d.push_to_main);
    p.git_ref = "refs/heads/other".into();
    assert!(!decide(&p).push_to_main);
}

/// Labels match whole names only (`contains()` on an array).
#[test]
fn labels_match_exactly_not_by_substring() {
    let d = decide(&pr(
        "synchronize",
        &["full-sweep-enabled-please", "xall-evals"],
    ));
    assert!(!d.run_setup && !d.all_evals && d.primary_label.is_empty());
}

#[test]
fn concurrency_is_private_only_for_irrelevant_label_events() {
    assert_eq!(
        decide(&labeled(
            "labeled",
            "documentation",
            &["full-sweep-enabled"]
        ))
        .concurrency,
        "private"
    );
    assert_eq!(
        decide(&labeled("unlabeled", "skip_queue", &["full-sweep-enabled"])).concurrency,
        "active"
    );
    assert_eq!(
        decide(&pr("synchronize", &["full-sweep-enabled"])).concurrency,
        "active"
    );
    assert_eq!(decide(&push("m")).concurrency, "active");
}

#[test]
fn comment_skips_policy_label_events_and_drafts() {
    assert!(
        decide(&labeled(
            "labeled",
            "all-evals",
            &["sweep-enabled", "all-evals"]
        ))
        .comment
    );
    assert!(
        !decide(&labeled(
            "labeled",
            "skip_queue",
            &["sweep-enabled", "skip_queue"]
        ))
        .comment
    );
    let mut d = pr("synchronize", &["sweep-enabled"]);
    assert!(decide(&d).comment);
    d.draft = true;
    assert!(!decide(&d).comment);
    assert!(!decide(&push("m")).comment);
}

/// Issue #16 point 1: a PR whose head repository is unknown (`head.repo:
/// null`, as for a deleted fork, or empty) is a fork and sets up nothing.
#[test]
fn unknown_head_repository_is_a_fork() {
    let ev = serde_json::json!({
        "action": "synchronize",
        "pull_request": {
            "draft": false,
            "labels": [{"name": "full-sweep-enabled"}],
            "head": {"repo": null}
        }
    });
    let mut input = pr("", &[]);
    input.head_repo = None;
    fill_from_event(&mut input, &ev, &ExplicitInputs::default());
    assert_eq!(input.head_repo, None);
    let d = decide(&input);
    assert!(d.run_check_changelog && !d.run_setup, "{d:?}");
    for unknown in [None, Some(String::new())] {
        let mut i = pr("synchronize", &["full-sweep-enabled"]);
        i.head_repo = unknown.clone();
        assert!(!decide(&i).run_setup, "{unknown:?}");
    }
    // The same PR from this repository does set up.
    assert!(decide(&pr("synchronize", &["full-sweep-enabled"])).run_setup);
}

#[test]
fn parse_labels_accepts_names_payload_objects_and_empty() {
    assert_eq!(parse_labels("").unwrap(), Vec::<String>::new());
    assert_eq!(parse_labels("null").unwrap(), Vec::<String>::new());
    assert_eq!(parse_labels(r#"["a","b"]"#).unwrap(), vec!["a", "b"]);
    assert_eq!(parse_labels(r#"[{"name":"a"}]"#).unwrap(), vec!["a"]);
    assert!(
        parse_labels("{}")
            .unwrap_err()
            .to_string()
            .contains("array")
    );
    assert!(
        parse_labels("[1]")
            .unwrap_err()
            .to_string()
            .contains("labels[0]")
    );
    assert!(parse_labels("[").unwrap_err().to_string().contains("JSON"));
}

#[test]
fn event_payload_fills_what_was_not_given() {
    let ev = serde_json::json!({
        "action": "labeled",
        "label": {"name": "full-sweep-enabled"},
        "pull_request": {
            "draft": true,
            "labels": [{"name": "full-sweep-enabled"}, {"name": "all-evals"}],
            "head": {"repo": {"full_name": "fork/InferenceX"}}
        }
    });
    let mut input = pr("", &[]);
    fill_from_event(&mut input, &ev, &ExplicitInputs::default());
    assert_eq!(input.action, "labeled");
    assert_eq!(input.label.as_deref(), Some("full-sweep-enabled"));
    assert_eq!(input.labels, vec!["full-sweep-enabled", "all-evals"]);
    assert!(input.draft);
    assert_eq!(input.head_repo.as_deref(), Some("fork/InferenceX"));
    let d = decide(&input);
    assert!(!d.run_check_changelog && !d.run_setup);

    let mut given = pr("synchronize", &["sweep-enabled"]);
    fill_from_event(
        &mut given,
        &ev,
        &ExplicitInputs {
            action: true,
            labels: true,
            ..ExplicitInputs::default()
        },
    );
    assert_eq!(given.action, "synchronize");
    assert_eq!(given.labels, vec!["sweep-enabled"]);

    let push_ev = serde_json::json!({"head_commit": {"message": "m [skip-sweep]"}});
    let mut p = push("");
    fill_from_event(&mut p, &push_ev, &ExplicitInputs::default());
    assert_eq!(p.head_commit_message, "m [skip-sweep]");
}
