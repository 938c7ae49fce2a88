//! Scenario f of issue #24 under act (the harness and its limits:
//! `test_kit::act`): a PR whose changelog entry adds a multi-node
//! config and two agentic configs (one single-node, one multi-node) runs
//! every leg kind those schedule — multi-node benchmark and eval legs,
//! single-node and multi-node agentic legs and their agentic evals — with a
//! launcher that writes each kind's result shape, and the validation steps
//! (`validate-scores --expected-concs`, `validate-agentic`,
//! `validate-agentic-results`) run for real; a launcher whose aiperf export
//! reports too many failed requests makes `validate-agentic` fail the leg.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use sweepkit_e2e::workspace_root;
use test_kit::act::*;
use test_kit::act_scenario;

/// The configs the PR adds, from the fixture of InferenceX's configs: the
/// smallest of each kind. A multi-node disaggregated 8k1k config with
/// worker settings (1 benchmark leg of 5 concurrencies, 1 multi-node eval
/// leg), a single-node agentic one (4 agentic legs, 1
/// agentic eval leg) and a multi-node agentic one (1 agentic leg, 1
/// multi-node agentic eval leg).
const MULTI_NODE_KEY: &str = "qwen3.5-fp8-mi355x-sglang-disagg";
const AGENTIC_KEY: &str = "kimik3-fp4-mi355x-vllm-agentic-mtp";
const MULTI_NODE_AGENTIC_KEY: &str = "minimaxm3-fp4-gb200-dynamo-vllm-agentic-disagg-mtp";

/// The launcher of this scenario: one line naming the leg, then the result
/// shape of the leg's kind, in the workspace the workflow's steps read.
/// The shapes come from recorded files:
///
/// * multi-node benchmark: one serving-benchmark result per concurrency of
///   `CONC_LIST`, named `<RESULT_FILENAME>_<config>_conc<N>_gpus_<G>[_ctx_<P>_gen_<D>].json`
///   (the launcher's copy, spec results.md §1.3; the conformance case
///   `process-multinode-disagg-hetero-hw`), fields as `examples/sweep/raw/`;
/// * eval legs: lm-eval's `results*.json` and the harness's `meta_env.json`
///   (conformance `evals-single-node-gsm8k`, `evals-batched-concurrencies`):
///   the recorded gsm8k result of the corpus (`evals-single-node-gsm8k`),
///   one result for a single requested concurrency (`meta_env.json`'s
///   `conc`), one `_conc<N>` result per concurrency and the batch manifest
///   (`eval_concs`, `completed_eval_concs`, `failed_eval_concs`) for
///   several; gsm8k for the fixed-seq-len model, swebench_lite (lm-eval
///   shaped, `exact_match,resolved`) for an agentic one;
/// * single-node agentic: the agentic aggregate `<RESULT_FILENAME>.json`
///   (the reference's `process_agentic_result.py` fields) and aiperf's
///   `results/aiperf_artifacts/profile_export_aiperf.json` (metric
///   objects with `avg`, as the reference's validator tests write it), with
///   `@ERRORS@` failed requests out of 50;
/// * multi-node agentic: one agentic aggregate `<RESULT_FILENAME>_conc<N>.json`
///   per concurrency of `CONC_LIST`.
const KIND_LAUNCHER: &str = r#"#!/usr/bin/env bash
set -euo pipefail
errors=@ERRORS@
if [ "${IS_MULTINODE:-false}" = true ]; then
  node=multi-node
  shape="p=${PREFILL_NUM_WORKERS}x${PREFILL_TP}ep${PREFILL_EP} d=${DECODE_NUM_WORKERS}x${DECODE_TP}ep${DECODE_EP}"
  concs=$CONC_X
else
  node=single-node
  shape="tp=$TP ep=$EP_SIZE"
  concs=$CONC
fi
echo "launcher-leg: $node $FAMILY $RUNNER_TYPE $EXP_NAME c$concs $shape"
# A multi-node leg's worker settings (the config's additional-settings,
# exported by the step before the launcher).
if [ "${IS_MULTINODE:-false}" = true ]; then
  kv=""
  for k in @SETTINGS@; do if [ -n "${!k+x}" ]; then kv="$kv $k=${!k}"; fi; done
  echo "launcher-settings: $EXP_NAME$kv"
fi
# The concurrencies a multi-node eval leg is asked for (the step "Verify
# eval scores" passes the same variable as --expected-concs).
if [ "${IS_MULTINODE:-false}" = true ] && [ "$EVAL_ONLY" = true ]; then
  echo "launcher-eval-concs: $EXP_NAME ${EVAL_CONC}"
fi

# meta_env.json as the eval harness writes it; $1: its `conc`, $2: the
# batch manifest's fields (empty for one concurrency).
meta_env() {
  local multi=${IS_MULTINODE:-false}
  cat >meta_env.json <<EOF
{"is_multinode": $multi, "framework": "$FRAMEWORK", "precision": "$PRECISION", "spec_decoding": "$SPEC_DECODING", "recipe_fingerprint": "${RECIPE_FINGERPRINT:-}", "tp": ${PREFILL_TP:-$TP}, "pp": 1, "dcp_size": 1, "pcp_size": 1, "conc": $1, $2"ep": ${PREFILL_EP:-${EP_SIZE:-1}}, "dp_attention": ${PREFILL_DP_ATTN:-${DP_ATTENTION:-false}}, "prefill_tp": ${PREFILL_TP:-$TP}, "prefill_pp": 1, "prefill_dcp_size": 1, "prefill_pcp_size": 1, "prefill_ep": ${PREFILL_EP:-${EP_SIZE:-1}}, "prefill_dp_attention": ${PREFILL_DP_ATTN:-${DP_ATTENTION:-false}}, "prefill_num_workers": ${PREFILL_NUM_WORKERS:-1}, "decode_tp": ${DECODE_TP:-$TP}, "decode_pp": 1, "decode_dcp_size": 1, "decode_pcp_size": 1, "decode_ep": ${DECODE_EP:-${EP_SIZE:-1}}, "decode_dp_attention": ${DECODE_DP_ATTN:-${DP_ATTENTION:-false}}, "decode_num_workers": ${DECODE_NUM_WORKERS:-1}, "model": "$MODEL", "infmax_model_prefix": "$MODEL_PREFIX", "hw": "$RUNNER_TYPE", "isl": "$ISL", "osl": "$OSL"}
EOF
}
# lm-eval's results file ($1): the recorded gsm8k result the scenario puts
# in the repository (runners/recorded/), for this leg's model; an agentic
# eval's SWE-bench score is published in lm-eval's shape
# (results_swebench_lite.json, the resolved rate as `exact_match,resolved`).
eval_result() {
  if [ "$SCENARIO_TYPE" = agentic-coding ]; then
    cat >"$1" <<EOF
{"lm_eval_version": "0.4.9.1", "model_name": "$MODEL", "results": {"swebench_lite": {"alias": "swebench_lite", "exact_match,resolved": 0.61, "exact_match_stderr,resolved": 0.028}}, "configs": {"swebench_lite": {"metric_list": [{"metric": "exact_match"}], "filter_list": [{"name": "resolved"}]}}, "n-samples": {"swebench_lite": {"effective": 300, "original": 300}}, "swebench": {"resolved": 183, "total": 300, "resolved_rate": 0.61, "report": null}}
EOF
  else
    sed "s|@RECORDED_MODEL@|$MODEL|g" runners/recorded/lm-eval-gsm8k.json >"$1"
  fi
}
# The agentic aggregate of one concurrency ($1) into $2.
agentic_row() {
  local ok=$((50 - errors))
  cat >"$2" <<EOF
{"hw": "$RUNNER_TYPE", "conc": $1, "image": "$IMAGE", "recipe_fingerprint": "${RECIPE_FINGERPRINT:-}", "model": "$MODEL", "infmax_model_prefix": "$MODEL_PREFIX", "framework": "$FRAMEWORK", "precision": "$PRECISION", "spec_decoding": "$SPEC_DECODING", "disagg": ${DISAGG:-false}, "scenario_type": "agentic-coding", "is_multinode": ${IS_MULTINODE:-false}, "tp": ${TP:-$DECODE_TP}, "ep": ${EP_SIZE:-$DECODE_EP}, "dp_attention": ${DP_ATTENTION:-$DECODE_DP_ATTN}, "kv_offloading": "${KV_OFFLOADING:-none}", "kv_offload_backend": "${KV_OFFLOAD_BACKEND:-}", "allocated_cpu_dram_gb": ${TOTAL_CPU_DRAM_GB:-0}, "num_requests_total": 50, "num_requests_successful": $ok, "request_accounting": {"records_total": 50, "records_profiled": $ok, "records_dropped_total": $errors, "records_warmup_dropped": 0, "records_error_dropped": $errors, "error_categories": {}}, "request_metrics": {"throughput": {"input": {"tokens_per_second": 5200.0}, "output": {"tokens_per_second": 310.0}, "total": {"tokens_per_second": 5510.0}, "duration_seconds": 1800.0, "per_gpu": {}}}, "server_metrics": {"present": false}, "kv_cache_pool_tokens": null}
EOF
}

if [ "$EVAL_ONLY" = true ]; then
  stamp=2026-12-01T00-00-00.000000
  read -r -a want <<<"${EVAL_CONC:-$CONC}"
  if [ "${#want[@]}" -gt 1 ]; then
    list=$(IFS=,; echo "${want[*]}")
    meta_env "${want[0]}" "\"eval_concs\": [$list], \"completed_eval_concs\": [$list], \"failed_eval_concs\": [], "
    for c in "${want[@]}"; do eval_result "results_${stamp}_conc${c}.json"; done
  elif [ "$SCENARIO_TYPE" = agentic-coding ]; then
    meta_env "${want[0]}" ""
    eval_result results_swebench_lite.json
  else
    meta_env "${want[0]}" ""
    eval_result "results_${stamp}.json"
  fi
elif [ "$SCENARIO_TYPE" = agentic-coding ]; then
  if [ "${IS_MULTINODE:-false}" = true ]; then
    for c in $CONC_LIST; do agentic_row "$c" "${RESULT_FILENAME}_conc${c}.json"; done
  else
    agentic_row "$CONC" "${RESULT_FILENAME}.json"
    mkdir -p results/aiperf_artifacts
    printf '{"request_count": {"avg": %d}, "error_request_count": {"avg": %d}}\n' \
      $((50 - errors)) "$errors" >results/aiperf_artifacts/profile_export_aiperf.json
  fi
elif [ "${IS_MULTINODE:-false}" = true ]; then
  pg=$((PREFILL_NUM_WORKERS * PREFILL_TP))
  dg=$((DECODE_NUM_WORKERS * DECODE_TP))
  # Disaggregated results name the prefill and decode GPUs, aggregated ones
  # only the total.
  gpus="_gpus_$((pg + dg))"
  if [ "$DISAGG" = true ]; then gpus="${gpus}_ctx_${pg}_gen_${dg}"; fi
  for c in $CONC_LIST; do
    tput=$(awk -v c="$c" -v g=$((pg + dg)) 'BEGIN { printf "%.1f", 900 * c / (1 + c / 64) * g / 8 }')
    out=$(awk -v t="$tput" -v i="$ISL" -v o="$OSL" 'BEGIN { printf "%.1f", t * o / (i + o) }')
    cat >"${RESULT_FILENAME}_${PREFILL_NUM_WORKERS}p${DECODE_NUM_WORKERS}d_conc${c}${gpus}.json" <<EOF
{"date": "20261201-000000", "backend": "$FRAMEWORK", "model_id": "$MODEL", "tokenizer_id": "$MODEL", "num_prompts": $((c * 10)), "max_concurrency": $c, "request_throughput": 0.5, "total_token_throughput": $tput, "output_throughput": $out, "mean_ttft_ms": 150.0, "median_ttft_ms": 140.0, "p99_ttft_ms": 400.0, "mean_tpot_ms": 9.5, "median_tpot_ms": 9.0, "p99_tpot_ms": 18.0, "mean_itl_ms": 9.5, "mean_e2el_ms": 10000.0}
EOF
  done
else
  echo "launcher: this scenario schedules no single-node fixed-seq-len leg" >&2
  exit 1
fi
"#;

/// The worker settings (`additional-settings`) of the multi-node configs
/// above, by name in byte order: the launcher prints those it sees.
const WORKER_SETTINGS: &[&str] = &[
    "CONFIG_FILE",
    "DECODE_MTP_SIZE",
    "DECODE_NODES",
    "PREFILL_NODES",
    "SYNTHETIC_ACCEPTANCE",
    "SYNTHETIC_ACCEPTANCE_LENGTH",
];

fn launcher(errors: u32) -> String {
    KIND_LAUNCHER
        .replace("@ERRORS@", &errors.to_string())
        .replace("@SETTINGS@", &WORKER_SETTINGS.join(" "))
}

/// The recorded single-node gsm8k result of the conformance corpus.
const RECORDED_GSM8K: &str = "tests/conformance/cases/collect-results/evals-single-node-gsm8k/setup/eval_results/eval_qwen3.5_8k1k_qwen3.5_8k1k_fp4_sglang_tp2-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc64_b200-dgxc_02/results_2026-08-06T13-40-12.123456.json";

/// Files the scenario's repository carries besides the configs: the eval
/// thresholds of the conformance fixture at `utils/evals/thresholds.yaml`
/// (the file the legs' "Verify eval scores" and compare read) and the
/// recorded lm-eval gsm8k result the launcher copies for an eval leg (its
/// `model_name` a placeholder for the leg's model).
fn repo_files() -> Vec<(&'static str, String)> {
    let root = workspace_root();
    let thresholds = std::fs::read_to_string(
        root.join("tests/conformance/fixtures/validate-scores/thresholds.yaml"),
    )
    .unwrap();
    let mut gsm8k: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(RECORDED_GSM8K)).unwrap()).unwrap();
    gsm8k["model_name"] = json!("@RECORDED_MODEL@");
    vec![
        ("utils/evals/thresholds.yaml", thresholds),
        (
            "runners/recorded/lm-eval-gsm8k.json",
            serde_json::to_string_pretty(&gsm8k).unwrap(),
        ),
    ]
}

/// The `launcher-leg:` line's fields for a dry-run leg.
fn leg_line(leg: &Value) -> String {
    let r = &leg["row"];
    let family = match leg["family"].as_str().unwrap() {
        "single_node.agentic" | "multi_node.agentic" => "agentic",
        "agentic_evals" | "multinode_agentic_evals" => "agentic-eval",
        "multinode_evals" | "evals" => "eval",
        f if f.starts_with("multi_node.") || f.starts_with("single_node.") => "fixed",
        f => panic!("unknown dry-run family {f}"),
    };
    let runner = r["runner"].as_str().unwrap();
    let exp = r["exp-name"].as_str().unwrap();
    match (r["prefill"].as_object(), r["decode"].as_object()) {
        (Some(p), Some(d)) => {
            let concs: Vec<String> = r["conc"]
                .as_array()
                .unwrap()
                .iter()
                .map(Value::to_string)
                .collect();
            format!(
                "multi-node {family} {runner} {exp} c{} p={}x{}ep{} d={}x{}ep{}",
                concs.join("x"),
                p["num-worker"],
                p["tp"],
                p["ep"],
                d["num-worker"],
                d["tp"],
                d["ep"]
            )
        }
        _ => format!(
            "single-node {family} {runner} {exp} c{} tp={} ep={}",
            r["conc"], r["tp"], r["ep"]
        ),
    }
}

/// How many times act printed `step` (`✅  Success - Main <step>` or
/// `❌  Failure - Main <step>`) with this outcome.
fn step_count(log: &str, step: &str, success: bool) -> usize {
    let mark = if success {
        format!("Success - Main {step} [")
    } else {
        format!("Failure - Main {step} [")
    };
    log.lines().filter(|l| l.contains(&mark)).count()
}

#[test]
fn multi_node_and_agentic_entries_run_every_leg_kind_with_their_validation_steps_under_act() {
    act_scenario!(act);
    let keys = [MULTI_NODE_KEY, AGENTIC_KEY, MULTI_NODE_AGENTIC_KEY];
    let mut h = harness_with(
        act,
        &PrChange::AddConfigs(&keys),
        &launcher(0),
        &repo_files(),
    );

    let legs = h.plan_pr_sweep();
    let families: BTreeMap<&str, usize> = legs.iter().fold(BTreeMap::new(), |mut m, l| {
        *m.entry(l["family"].as_str().unwrap()).or_default() += 1;
        m
    });
    assert_eq!(
        families,
        BTreeMap::from([
            ("multi_node.8k1k", 1),
            ("multinode_evals", 1),
            ("single_node.agentic", 4),
            ("agentic_evals", 1),
            ("multi_node.agentic", 1),
            ("multinode_agentic_evals", 1),
        ]),
        "the dry run's legs per family: {legs:#?}"
    );
    // The API calc-success-rate reads: the seed run's recorded job list,
    // as in scenario a.
    h.serve_recorded_run();

    let sweep = h.run_labelled_pr();
    h.keep_if_asked("multinode");
    sweep.assert_ok("scenario f");
    let (log, secs, t) = (&sweep.log, sweep.secs, sweep.tail());
    let prefix = SWEEP_PREFIX;
    let ran = sweep.jobs(prefix);
    assert!(
        !sweep.skipped_unmapped_job(),
        "act skipped a job for an unmapped runs-on label:\n{t}"
    );

    // The job graph: every job that ran succeeded; the fixed jobs are these
    // (no canary: the canary is a single-node fixed-seq-len leg, and this
    // PR schedules none).
    let failed = failed_jobs(&ran);
    assert!(failed.is_empty(), "jobs failed: {failed:?}\n{t}");
    let fixed = fixed_jobs(&ran);
    assert_eq!(fixed, BTreeSet::from(PR_SWEEP_JOBS), "jobs that ran");
    // One call of the leg workflow per part, each with its plan job.
    let plans: BTreeSet<&str> = ran
        .keys()
        .filter(|k| is_plan(k))
        .map(String::as_str)
        .collect();
    assert_eq!(
        plans,
        BTreeSet::from([
            "multi-node 8k1k / plan mn-8k1k 1",
            "multi-node eval / plan mn-evals 1",
            "agentic / plan sn-agentic 1",
            "agentic eval / plan agentic-evals 1",
            "multi-node agentic / plan mn-agentic 1",
            "multi-node agentic eval / plan mn-agentic-evals 1",
        ]),
        "{ran:#?}"
    );

    // The legs: one launcher line per leg, equal leg for leg to the dry run.
    let mut ran_legs: Vec<String> = log
        .lines()
        .filter_map(|l| l.split_once("| launcher-leg: ").map(|(_, t)| t.to_string()))
        .collect();
    let mut want_legs: Vec<String> = legs.iter().map(leg_line).collect();
    ran_legs.sort();
    want_legs.sort();
    assert_eq!(ran_legs, want_legs, "legs run vs check-changelog dry-run");
    let leg_jobs: Vec<&String> = ran.keys().filter(|k| is_leg(k)).collect();
    assert_eq!(leg_jobs.len(), legs.len(), "{leg_jobs:#?}");
    for (job, n) in [
        ("multi-node 8k1k / ", 1),
        ("multi-node eval / ", 1),
        ("agentic / ", 4),
        ("agentic eval / ", 1),
        ("multi-node agentic / ", 1),
        ("multi-node agentic eval / ", 1),
    ] {
        assert_eq!(
            leg_jobs.iter().filter(|k| k.starts_with(job)).count(),
            n,
            "{job}… jobs: {leg_jobs:#?}"
        );
    }

    // The validation steps ran, for real, on every leg of their kind and
    // passed (act prints each step's outcome).
    let evals = 1 + 1 + 1;
    for (step, n) in [
        ("Validate the agentic result", 4),
        ("Validate the agentic results", 1),
        ("Verify eval scores", evals),
        ("Process the results", 1),
    ] {
        assert_eq!(step_count(log, step, true), n, "{step} passed\n{t}");
        assert_eq!(step_count(log, step, false), 0, "{step} failed\n{t}");
    }
    for said in [
        // validate-agentic, on each single-node agentic leg.
        "Validated aiperf request error rate: 0/50 = 0.000% <= 10.000%",
        // validate-agentic-results, on the multi-node agentic leg.
        "Found agentic result file: ",
        // process-leg, on the multi-node leg: the GPUs from the file's name.
        ": prefill GPUs ",
        // validate-scores with the thresholds file of the repository.
        "Loaded thresholds from utils/evals/thresholds.yaml",
        "PASS: gsm8k exact_match,strict-match = 0.9682 (>= 0.94 from models.qwen3.5)",
        "PASS: swebench_lite exact_match,resolved = 0.6100 (>= 0.5 from default)",
    ] {
        assert!(log.contains(said), "act's log lacks {said:?}\n{t}");
    }
    // The multi-node eval legs were asked for the dry run's eval-conc (the
    // variable their "Verify eval scores" step passes as --expected-concs;
    // validate-scores then held the launcher's meta_env.json `conc` to it).
    let mut asked: Vec<String> = log
        .lines()
        .filter_map(|l| {
            l.split_once("| launcher-eval-concs: ")
                .map(|(_, t)| t.trim().to_string())
        })
        .collect();
    let mut want_asked: Vec<String> = legs
        .iter()
        .filter(|l| l["family"] == "multinode_evals" || l["family"] == "multinode_agentic_evals")
        .map(|l| {
            format!(
                "{} {}",
                l["row"]["exp-name"].as_str().unwrap(),
                l["row"]["eval-conc"]
            )
        })
        .collect();
    asked.sort();
    want_asked.sort();
    assert_eq!(asked, want_asked, "multi-node eval concurrencies");

    // The multi-node legs saw their rows' worker settings in the
    // environment (generate-matrix worker-settings, then the launcher).
    let mut settings: Vec<String> = log
        .lines()
        .filter_map(|l| {
            l.split_once("| launcher-settings: ")
                .map(|(_, t)| t.trim().to_string())
        })
        .collect();
    let mut want_settings: Vec<String> = legs
        .iter()
        .filter(|l| l["row"]["prefill"].is_object())
        .map(|l| {
            let r = &l["row"];
            let mut kv: Vec<&str> = ["prefill", "decode"]
                .iter()
                .flat_map(|w| r[*w]["additional-settings"].as_array().unwrap())
                .map(|v| v.as_str().unwrap())
                .collect();
            for setting in &kv {
                let name = setting.split_once('=').unwrap().0;
                assert!(
                    WORKER_SETTINGS.contains(&name),
                    "WORKER_SETTINGS lacks {name} of {}",
                    r["exp-name"]
                );
            }
            kv.sort_unstable();
            format!("{} {}", r["exp-name"].as_str().unwrap(), kv.join(" "))
                .trim()
                .to_string()
        })
        .collect();
    settings.sort();
    want_settings.sort();
    assert_eq!(
        settings, want_settings,
        "worker settings seen by the launcher"
    );

    // The artifacts.
    let names = h.artifact_names();
    let count = |p: &str| names.iter().filter(|n| n.starts_with(p)).count();
    assert_eq!(count("bmk_agentic_"), 4 + 1, "{names:#?}");
    assert_eq!(count("bmk_") - count("bmk_agentic_"), 1, "{names:#?}");
    assert_eq!(count("agentic_"), 4, "agentic raw results: {names:#?}");
    assert_eq!(
        count("eval_")
            - count("eval_server_logs_")
            - count("eval_gpu_metrics_")
            - usize::from(names.contains("eval_results_all")),
        evals,
        "{names:#?}"
    );
    for a in [
        "search-space-config",
        "results_bmk",
        "eval_results_all",
        "changelog-metadata",
        "run-stats",
        "compare-report",
    ] {
        assert!(names.contains(a), "artifact {a} missing: {names:#?}");
    }
    let store = h.artifacts.join(ACT_RUN_ID.to_string());
    let read = |p: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(store.join(p)).unwrap()).unwrap()
    };
    // results_bmk: one row per concurrency of each multi-node benchmark leg
    // (processed), plus the agentic aggregates (bmk_* holds bmk_agentic_*).
    let agg = read("results_bmk/agg_bmk.json");
    let rows = agg.as_array().unwrap();
    let mn_concs: usize = legs
        .iter()
        .filter(|l| l["family"] == "multi_node.8k1k")
        .map(|l| l["row"]["conc"].as_array().unwrap().len())
        .sum();
    let processed = rows
        .iter()
        .filter(|r| r["is_multinode"] == true && r.get("scenario_type").is_none())
        .count();
    let agentic = rows
        .iter()
        .filter(|r| r["scenario_type"] == "agentic-coding")
        .count();
    assert_eq!(processed, mn_concs, "processed multi-node rows in {agg:#}");
    assert_eq!(agentic, 4 + 1, "agentic rows");
    assert_eq!(rows.len(), processed + agentic);
    // eval_results_all: one row per eval leg.
    let evals_all = read("eval_results_all/agg_eval_all.json");
    let tasks: BTreeMap<String, usize> =
        evals_all
            .as_array()
            .unwrap()
            .iter()
            .fold(BTreeMap::new(), |mut m, r| {
                *m.entry(r["task"].as_str().unwrap().to_string())
                    .or_default() += 1;
                m
            });
    assert_eq!(
        tasks,
        BTreeMap::from([("gsm8k".to_string(), 1), ("swebench_lite".to_string(), 2)]),
        "{evals_all:#}"
    );
    assert!(
        evals_all
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["score"].as_f64().is_some_and(|x| x > 0.5)),
        "every eval row has its score: {evals_all:#}"
    );

    let comments = h.fake.comments(REPO, PR);
    assert_eq!(comments.len(), 1, "one comment on the PR");
    let all_jobs = workflow_job_count(&h.scratch.work);
    eprintln!(
        "scenario f summary: {} jobs succeeded, 0 failed; {} of the sweep's {all_jobs} job ids ran, {} calls of the leg workflow; {} legs; act wall time {secs:.1} s",
        ran.len(),
        fixed.len(),
        plans.len(),
        legs.len()
    );
}

/// The negative: an agentic leg whose aiperf export reports 12 failed
/// requests of 50 (24 %, over the default threshold of 10 %) fails at
/// `validate-agentic` (the manual entry, one leg).
#[test]
fn an_agentic_leg_over_the_failed_request_threshold_fails_at_validate_agentic_under_act() {
    act_scenario!(act);
    let mut h = harness_with(
        act,
        &PrChange::AddConfigs(&[AGENTIC_KEY]),
        &launcher(12),
        &repo_files(),
    );
    let line = format!("test-config --config-keys {AGENTIC_KEY} --conc 4");
    let matrix = h.from_command(&line);
    let rows = matrix["single_node"]["agentic"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{matrix}");
    let failing = h.run_workflow(
        "e2e-tests.yml",
        "workflow_dispatch",
        &json!({"inputs": {"generate-command": line, "test-name": "act agentic negative"}}),
    );
    let (log, secs, t) = (&failing.log, failing.secs, failing.tail());
    let ran = failing.jobs("e2e/Run Sweep (sweepkit)/");
    eprintln!("scenario f (negative): act ran {secs:.1} s; jobs: {ran:#?}");
    assert!(!failing.ok, "act succeeded with a failed agentic leg:\n{t}");
    let legs: Vec<(&String, &Outcome)> = ran.iter().filter(|(k, _)| is_leg(k)).collect();
    assert_eq!(legs.len(), 1, "{ran:#?}");
    assert!(legs[0].0.starts_with("agentic / "), "{ran:#?}");
    assert_eq!(*legs[0].1, Outcome::Failed, "the agentic leg failed");
    assert_eq!(
        step_count(log, "Validate the agentic result", false),
        1,
        "validate-agentic failed the leg\n{t}"
    );
    assert!(
        log.contains(
            "aiperf request error rate exceeded the benchmark limit: 12/50 = 24.000% > 10.000%"
        ),
        "validate-agentic's cause\n{t}"
    );
    // The leg's result is still kept (its uploads run after a failure).
    let names = h.artifact_names();
    assert_eq!(
        names
            .iter()
            .filter(|n| n.starts_with("bmk_agentic_"))
            .count(),
        1,
        "{names:#?}"
    );
    assert!(
        ran.iter()
            .filter(|(k, _)| !k.contains(" / "))
            .all(|(_, o)| *o == Outcome::Succeeded),
        "only the leg failed: {ran:#?}"
    );
    eprintln!(
        "scenario f (negative) summary: {} jobs succeeded, 1 failed; act wall time {secs:.1} s",
        ran.len() - 1
    );
}

/// The jobs list calc-success-rate reads for a sweep of `legs` (dry-run
/// legs): the fixed jobs on GitHub's runners, then every leg's job as the
/// leg workflow names it (`sweep / <part> / <leg name>`), successful, on
/// the first machine of its runner label's cluster.
fn jobs_of(legs: &[Value]) -> Value {
    use sweep_matrix::leg::{LegPart, job_name};
    use sweep_matrix::legs::FAMILIES;
    let mut jobs: Vec<Value> = ["policy", "check-changelog", "setup"]
        .iter()
        .map(|j| {
            json!({"name": format!("sweep / {j}"), "labels": ["ubuntu-latest"],
            "runner_name": "GitHub Actions 1"})
        })
        .collect();
    for l in legs {
        let family = FAMILIES
            .iter()
            .find(|f| f.dotted() == l["family"].as_str().unwrap())
            .unwrap();
        let part = LegPart::of_family(family.stem).unwrap();
        let row = l["row"].as_object().unwrap();
        let runner = row["runner"].as_str().unwrap();
        let machine = format!("{}_00", runner.trim_start_matches("cluster:"));
        jobs.push(
            json!({"name": format!("sweep / {} / {}", family.title, job_name(row, part)),
            "labels": [runner], "runner_name": machine}),
        );
    }
    for (i, j) in jobs.iter_mut().enumerate() {
        j["id"] = json!(5000 + i);
        j["run_id"] = json!(ACT_RUN_ID);
        j["run_attempt"] = json!(1);
        j["status"] = json!("completed");
        j["conclusion"] = json!("success");
    }
    json!({"total_count": jobs.len(), "jobs": jobs})
}

/// Issue #37 item 10: an agentic-only sweep (the single-node agentic
/// config: agentic legs and its agentic eval, no fixed-seq-len leg) has no
/// collect-results and no comparison, yet its legs ran: calc-success-rate
/// counts them, the comment has the success-rate section, and no download
/// of an artifact this sweep does not make is attempted (no "Artifact not
/// found" error).
#[test]
fn an_agentic_only_sweep_gets_its_comment_whole_with_the_success_rate_under_act() {
    act_scenario!(act);
    let mut h = harness_with(
        act,
        &PrChange::AddConfigs(&[AGENTIC_KEY]),
        &launcher(0),
        &repo_files(),
    );
    let legs = h.plan_pr_sweep();
    let families: BTreeSet<&str> = legs.iter().map(|l| l["family"].as_str().unwrap()).collect();
    assert_eq!(
        families,
        BTreeSet::from(["single_node.agentic", "agentic_evals"]),
        "an agentic-only sweep: {legs:#?}"
    );
    let (user, run, _) = recorded_run_and_jobs();
    h.fake
        .add_route(fake_github::Route::json("GET", "/user", user));
    h.fake.add_route(fake_github::Route::json(
        "GET",
        &format!("/repos/{REPO}/actions/runs/{ACT_RUN_ID}"),
        run,
    ));
    h.fake.add_route(fake_github::Route::paginated(
        "GET",
        &format!("/repos/{REPO}/actions/runs/{ACT_RUN_ID}/jobs"),
        jobs_of(&legs),
        "object:jobs",
    ));

    let sweep = h.run_labelled_pr();
    sweep.assert_ok("agentic-only");
    let (log, secs, t) = (&sweep.log, sweep.secs, sweep.tail());
    let ran = sweep.jobs(SWEEP_PREFIX);
    let failed = failed_jobs(&ran);
    assert!(failed.is_empty(), "jobs failed: {failed:?}\n{t}");
    let fixed = fixed_jobs(&ran);
    assert_eq!(
        fixed,
        BTreeSet::from([
            "policy",
            "check-changelog",
            "setup",
            "collect-evals",
            "upload-changelog-metadata",
            "calc-success-rate",
            "comment-unofficial-run-visualizer",
        ]),
        "no collect-results nor compare-results for agentic legs; the success rate runs"
    );
    assert_eq!(
        ran.keys().filter(|k| is_leg(k)).count(),
        legs.len(),
        "{ran:#?}"
    );
    // No download of what this sweep does not produce: the comment's
    // compare-report fetch is not attempted, run-stats is found; no error
    // annotation at all (act marks one `❗`; the stand-in's script text,
    // which act prints, holds the words too).
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("❗")).collect();
    assert!(
        errors.is_empty(),
        "error annotations:\n{}",
        errors.join("\n")
    );
    assert_eq!(
        step_count(log, "Fetch the compare report", true)
            + step_count(log, "Fetch the compare report", false),
        0,
        "the compare report was fetched\n{t}"
    );
    assert_eq!(step_count(log, "Fetch the success rates", true), 1, "{t}");
    let names = h.artifact_names();
    assert!(names.contains("run-stats"), "{names:#?}");
    assert!(!names.contains("compare-report"), "{names:#?}");

    let comments = h.fake.comments(REPO, PR);
    assert_eq!(comments.len(), 1, "one comment on the PR");
    let body = comments[0]["body"].as_str().unwrap();
    eprintln!("comment:\n{body}");
    // Every leg is counted (agentic and agentic eval) on its cluster.
    let cluster = legs[0]["row"]["runner"]
        .as_str()
        .unwrap()
        .trim_start_matches("cluster:")
        .to_string();
    assert!(
        legs.iter()
            .all(|l| l["row"]["runner"] == legs[0]["row"]["runner"]),
        "one runner: {legs:#?}"
    );
    for want in [
        "#### Success rate per hardware".to_string(),
        format!("| {cluster} | {n} / {n} | 100\u{a0}% |", n = legs.len()),
        format!("https://github.com/{REPO}/actions/runs/{ACT_RUN_ID}"),
    ] {
        assert!(body.contains(&want), "the comment lacks {want:?}:\n{body}");
    }
    assert!(
        !body.contains("could not read this run's jobs"),
        "success-rate read the jobs:\n{body}"
    );
    eprintln!(
        "agentic-only summary: {} jobs succeeded, {} legs counted in the success rate; act wall time {secs:.1} s",
        ran.len(),
        legs.len()
    );
}
