//! The gating of the real `run-sweep.yml`, evaluated: a small GitHub Actions
//! expression engine runs the workflow's own `if:` strings for
//! `check-changelog` → `reuse-sweep-gate` → `setup` (and the canary,
//! the comment job, the fail-fast strategy) with the outputs
//! `generate-matrix sweep-policy` computes for each event, over the
//! reference gating test's whole cross product (17 666 scenarios), and
//! checks the results against an independent encoding of workflow.md §3.3.
//! `sweep_policy.rs` tests the policy's own model of the chaining; this tests the
//! YAML that ships.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;
mod policy_model;

use std::path::Path;

use common::{eval_if, eval_value};
use policy_model::{GATING_PUSH_MESSAGES, gating_cross_product};
use serde_json::{Value, json};
use sweep_matrix::policy::{PolicyInput, decide};

// The oracle's own label lists, written from workflow.md's terminology (not
// imported from `sweep_matrix::policy`, the code under test), so a label
// dropped from or added to the code is caught here.

/// *Primary label*: one of these five (workflow.md, terminology).
const PRIMARY_LABELS: [&str; 5] = [
    "sweep-enabled",
    "full-sweep-enabled",
    "non-canary-full-sweep-enabled",
    "full-sweep-fail-fast",
    "full-sweep-fail-fast-no-canary",
];

/// *Modifier labels* (workflow.md, terminology).
const MODIFIER_LABELS: [&str; 3] = ["all-evals", "evals-only", "agentx-fast"];

/// *Policy labels* (workflow.md, terminology).
const POLICY_LABELS: [&str; 5] = [
    "skip_queue",
    "ci-patchwork",
    "engine-patch",
    "ci-patchwork-waived",
    "ci-checklist-complete",
];

/// *Relevant label* = primary ∪ modifier ∪ policy (13 names).
fn is_relevant_label(label: &str) -> bool {
    PRIMARY_LABELS.contains(&label)
        || MODIFIER_LABELS.contains(&label)
        || POLICY_LABELS.contains(&label)
}

#[test]
fn engine_self_check() {
    let ctx = json!({"a": {"b-c": "x", "l": ["q", "Z"]}, "e": ""});
    let t = |e: &str| eval_if(e, &ctx, true);
    assert!(t("a.b-c == 'X'"));
    assert!(t("contains(a.l, 'z') && !contains(a.l, 'y')"));
    assert!(!t("e != '' || a.missing"));
    assert!(t("(e || 'd') == 'd'"));
    assert!(t("a['b-c'] == 'x' && toJSON(a.b-c) == '\"x\"'"));
    assert!(t(
        "contains(fromJSON('[\"labeled\",\"unlabeled\"]'), 'labeled')"
    ));
    // Implicit success(): a failed dependency skips the job unless a status function is used.
    assert!(!eval_if("true", &ctx, false));
    assert!(eval_if("always() && true", &ctx, false));
    assert_eq!(eval_value("${{ e && 'a' || 'b' }}", &ctx), json!("b"));
}

// ---------------------------------------------------------------------------
// The chain.
// ---------------------------------------------------------------------------

fn workflow() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.github/workflows/run-sweep.yml");
    sweep_model::yaml::load_file(&p).unwrap().into_value()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum R {
    Success,
    Failure,
    Skipped,
}

fn r(v: R) -> &'static str {
    match v {
        R::Success => "success",
        R::Failure => "failure",
        R::Skipped => "skipped",
    }
}

/// Runs policy → check-changelog → reuse-sweep-gate → setup of the real
/// workflow for one scenario.
fn run_chain(
    wf: &Value,
    sc: &PolicyInput,
    changelog_valid: bool,
    reuse_authorised: bool,
) -> (R, R, bool, Value) {
    let d = decide(sc);
    let policy: serde_json::Map<String, Value> = d
        .outputs()
        .into_iter()
        .map(|(k, v)| (k.to_string(), Value::String(v)))
        .collect();
    // The policy job exports a subset of the decisions; use exactly those.
    let exported: serde_json::Map<String, Value> = wf["jobs"]["policy"]["outputs"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| (k.clone(), policy[k].clone()))
        .collect();
    let jobs = &wf["jobs"];
    let mut ctx = json!({"needs": {"policy": {"result": "success", "outputs": exported}}});

    let cc = &jobs["check-changelog"];
    let check = if !eval_if(cc["if"].as_str().unwrap(), &ctx, true) {
        R::Skipped
    } else {
        // Its first step fails the job on conflicting labels.
        let reject = cc["steps"][0]["if"].as_str().unwrap();
        if eval_if(reject, &ctx, true) || !changelog_valid {
            R::Failure
        } else {
            R::Success
        }
    };
    let cc_out = eval_value(cc["outputs"]["skip-pr-sweep"].as_str().unwrap(), &ctx);
    ctx["needs"]["check-changelog"] =
        json!({"result": r(check), "outputs": {"skip-pr-sweep": cc_out}});

    let g = &jobs["reuse-sweep-gate"];
    let gate_ok = check == R::Success; // implicit success() if `always()` were absent
    let gate = if eval_if(g["if"].as_str().unwrap(), &ctx, gate_ok) {
        R::Success
    } else {
        R::Skipped
    };
    // reuse-sweep find in PR mode prints skip-pr-sweep=true|false.
    let skip = match (gate, reuse_authorised) {
        (R::Success, true) => "true",
        (R::Success, false) => "false",
        _ => "",
    };
    ctx["needs"]["reuse-sweep-gate"] =
        json!({"result": r(gate), "outputs": {"skip-pr-sweep": skip}});

    let all_ok = check == R::Success && gate == R::Success;
    let setup = eval_if(jobs["setup"]["if"].as_str().unwrap(), &ctx, all_ok);
    (check, gate, setup, ctx)
}

/// Independent encoding of workflow.md §3.3 (the reference test's intent).
fn intent(sc: &PolicyInput, valid: bool, auth: bool) -> (R, R, bool) {
    let has = |l: &str| sc.labels.iter().any(|x| x == l);
    let primaries = PRIMARY_LABELS.iter().filter(|l| has(l)).count();
    let is_pr = sc.event_name == "pull_request";
    let label_ok = !matches!(sc.action.as_str(), "labeled" | "unlabeled")
        || sc.label.as_deref().is_some_and(is_relevant_label);
    let check = if !(is_pr && !sc.draft && label_ok) {
        R::Skipped
    } else if primaries > 1 || !valid {
        R::Failure
    } else {
        R::Success
    };
    let full = [
        "full-sweep-enabled",
        "non-canary-full-sweep-enabled",
        "full-sweep-fail-fast",
        "full-sweep-fail-fast-no-canary",
    ];
    let gate_runs = check == R::Success
        && sc.action == "synchronize"
        && full.iter().any(|l| has(l))
        && !has("evals-only")
        && !has("agentx-fast");
    let gate = if gate_runs { R::Success } else { R::Skipped };
    let event_ok = if is_pr {
        !sc.draft
            && sc.head_repo.as_deref() == Some(sc.repository.as_str())
            && primaries > 0
            && label_ok
            && !sc.head_commit_message.contains("[skip-sweep]")
    } else {
        sc.event_name == "push"
    };
    (
        check,
        gate,
        check != R::Failure && !(gate_runs && auth) && event_ok,
    )
}

fn pr(action: &str, labels: &[&str], label: Option<&str>) -> PolicyInput {
    PolicyInput {
        event_name: "pull_request".into(),
        action: action.into(),
        label: label.map(str::to_string),
        labels: labels.iter().map(|s| s.to_string()).collect(),
        head_repo: Some("example/bench".into()),
        repository: "example/bench".into(),
        git_ref: "refs/pull/1/merge".into(),
        ..PolicyInput::default()
    }
}

#[test]
fn real_workflow_gating_matches_section_3_3_over_the_cross_product() {
    let wf = workflow();
    let mut n = 0;
    let mut runs = 0;
    for (sc, valid, auth) in gating_cross_product("example/bench") {
        let (c, g, s, _) = run_chain(&wf, &sc, valid, auth);
        assert_eq!(
            (c, g, s),
            intent(&sc, valid, auth),
            "{sc:?} valid={valid} auth={auth}"
        );
        runs += usize::from(s);
        n += 1;
    }
    for msg in GATING_PUSH_MESSAGES {
        let sc = PolicyInput {
            event_name: "push".into(),
            head_commit_message: msg.into(),
            repository: "example/bench".into(),
            git_ref: "refs/heads/main".into(),
            ..PolicyInput::default()
        };
        let (c, g, setup, _) = run_chain(&wf, &sc, true, false);
        assert_eq!((c, g, setup), (R::Skipped, R::Skipped, true), "push: {msg}");
        n += 1;
    }
    assert_eq!(n, 17_666);
    assert!(
        runs > 1000 && runs < n,
        "{runs} of {n} scenarios set up a sweep"
    );
}

/// The `if:` expressions of canary-select and the comment job, and the
/// fan-out fail-fast strategy, of the real workflow, after a successful
/// setup, against workflow.md §2/§3.1. A model of the expressions only,
/// not of GitHub's scheduling (the act test, `act_sweep.rs`, judges what
/// runs): each `if:` is evaluated with the implicit status false, as it
/// is on every event where `reuse-sweep-gate` up the chain was skipped
/// (issue #24), and with it true, and must give the same answer both ways.
#[test]
fn real_workflow_canary_fail_fast_and_comment_follow_the_labels() {
    let wf = workflow();
    let jobs = &wf["jobs"];
    let labelsets: &[&[&str]] = &[
        &[],
        &["sweep-enabled"],
        &["full-sweep-enabled"],
        &["non-canary-full-sweep-enabled"],
        &["full-sweep-fail-fast"],
        &["full-sweep-fail-fast-no-canary"],
        &["full-sweep-enabled", "all-evals"],
        &["full-sweep-fail-fast", "skip_queue"],
        &["evals-only"],
    ];
    let mut n = 0;
    for action in ["ready_for_review", "synchronize", "labeled", "unlabeled"] {
        for draft in [false, true] {
            for labels in labelsets {
                for label in [
                    Some("full-sweep-enabled"),
                    Some("all-evals"),
                    Some("skip_queue"),
                    Some("documentation"),
                    None,
                ] {
                    let mut sc = pr(action, labels, label);
                    sc.draft = draft;
                    let d = decide(&sc);
                    let outputs: serde_json::Map<String, Value> = d
                        .outputs()
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), Value::String(v)))
                        .collect();
                    let ctx = json!({"needs": {
                        "policy": {"result": "success", "outputs": outputs},
                        "setup": {"result": "success", "outputs": {"reuse-enabled": "false"}},
                    }});
                    let has = |l: &str| labels.contains(&l);
                    // Both statuses: the answer must not hang on an implicit success().
                    let decide_if = |job: &str, ctx: &Value| {
                        let cond = jobs[job]["if"].as_str().unwrap();
                        let skipped_upstream = eval_if(cond, ctx, false);
                        assert_eq!(
                            skipped_upstream,
                            eval_if(cond, ctx, true),
                            "{job}: the if: depends on the implicit success() {sc:?}"
                        );
                        skipped_upstream
                    };
                    // setup leaves the canary out of the families (and lists
                    // it as a part of its own) when this is true.
                    let split = jobs["setup"]["steps"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|st| st["id"] == "split")
                        .unwrap();
                    let canary_of = |ctx: &Value| {
                        let want = split["env"]["INPUT_WITHOUT_CANARY"].as_str().unwrap();
                        eval_value(want, ctx) == json!(true)
                    };
                    let mut ctx = ctx;
                    ctx["steps"] = json!({"reuse": {"outputs": {"reuse-enabled": "false"}}});
                    let canary = canary_of(&ctx);
                    assert_eq!(
                        canary,
                        has("full-sweep-enabled") || has("full-sweep-fail-fast"),
                        "canary {sc:?}"
                    );
                    let ff = eval_value(
                        jobs["benchmark-legs"]["strategy"]["fail-fast"]
                            .as_str()
                            .unwrap(),
                        &ctx,
                    );
                    assert_eq!(
                        ff,
                        json!(has("full-sweep-fail-fast") || has("full-sweep-fail-fast-no-canary")),
                        "fail-fast {sc:?}"
                    );
                    let label_event = matches!(action, "labeled" | "unlabeled");
                    let want_comment = !draft
                        && labels.iter().any(|l| PRIMARY_LABELS.contains(l))
                        && (!label_event
                            || label.is_some_and(|l| {
                                PRIMARY_LABELS.contains(&l)
                                    || ["all-evals", "evals-only", "agentx-fast"].contains(&l)
                            }));
                    let comment_if = jobs["comment-unofficial-run-visualizer"]["if"]
                        .as_str()
                        .unwrap();
                    assert_eq!(
                        eval_if(comment_if, &ctx, false),
                        want_comment,
                        "comment {sc:?}"
                    );
                    // Reuse enabled: no canary.
                    let mut reused = ctx.clone();
                    reused["steps"]["reuse"]["outputs"]["reuse-enabled"] = json!("true");
                    assert!(!canary_of(&reused));
                    reused["needs"]["setup"]["outputs"]["reuse-enabled"] = json!("true");
                    reused["needs"]["setup"]["outputs"]["canary-parts"] = json!("[{}]");
                    assert!(!decide_if("canary", &reused));
                    n += 1;
                }
            }
        }
    }
    assert_eq!(n, 4 * 2 * 9 * 5);
}

/// The §3.3 rows the cross product does not vary: fork head, draft,
/// `[skip-sweep]`, conflicting labels, invalid changelog, on the real YAML.
#[test]
fn real_workflow_named_rows_of_section_3_3() {
    let wf = workflow();
    let sync = |labels: &[&str]| pr("synchronize", labels, None);
    let mut fork = sync(&["full-sweep-enabled"]);
    fork.head_repo = Some("external/bench".into());
    let mut draft = sync(&["full-sweep-enabled"]);
    draft.draft = true;
    let mut tagged = sync(&["full-sweep-enabled"]);
    tagged.head_commit_message = "fix: docs [skip-sweep]".into();
    // (name, event, changelog valid, reuse authorised, (check, gate, setup runs))
    type Row<'a> = (&'a str, PolicyInput, bool, bool, (R, R, bool));
    let rows: Vec<Row> = vec![
        (
            "no authorisation",
            sync(&["full-sweep-enabled"]),
            true,
            false,
            (R::Success, R::Success, true),
        ),
        (
            "authorised",
            sync(&["full-sweep-enabled"]),
            true,
            true,
            (R::Success, R::Success, false),
        ),
        (
            "conflicting labels",
            sync(&["full-sweep-enabled", "full-sweep-fail-fast"]),
            true,
            true,
            (R::Failure, R::Skipped, false),
        ),
        (
            "changelog invalid",
            sync(&["full-sweep-enabled"]),
            false,
            false,
            (R::Failure, R::Skipped, false),
        ),
        (
            "fork head",
            fork,
            true,
            false,
            (R::Success, R::Success, false),
        ),
        ("draft", draft, true, false, (R::Skipped, R::Skipped, false)),
        (
            "[skip-sweep]",
            tagged,
            true,
            false,
            (R::Success, R::Success, false),
        ),
        (
            "labeled documentation",
            pr("labeled", &["full-sweep-enabled"], Some("documentation")),
            true,
            false,
            (R::Skipped, R::Skipped, false),
        ),
        (
            "unlabeled last primary",
            pr("unlabeled", &[], Some("full-sweep-enabled")),
            true,
            false,
            (R::Success, R::Skipped, false),
        ),
    ];
    for (name, sc, valid, auth, want) in rows {
        let (c, g, s, _) = run_chain(&wf, &sc, valid, auth);
        assert_eq!((c, g, s), want, "{name}");
    }
}
