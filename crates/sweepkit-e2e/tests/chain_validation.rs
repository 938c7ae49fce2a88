//! End-to-end: the result validations of `run-sweep.yml`'s GPU legs, run
//! step by step as written in the workflow (YAML anchors resolved, the
//! `run:` scripts executed by bash with the job and step `env:` the runner
//! would build, `$GITHUB_ENV` carried from step to step):
//!
//! - an agentic single-node leg whose aiperf result has too many failed
//!   requests: its "Validate the agentic result" step fails, naming the
//!   error rate and the limit; the same leg with a healthy result passes;
//! - an agentic multi-node leg with a concurrency that recorded no
//!   successful request: "Validate the agentic results" fails, naming it;
//! - a multi-node leg with an srt-slurm power package (producer SHA from
//!   the launcher's stamp): "Process the results" publishes whole and
//!   per-role energy, and the power audit bundle collects the package; a
//!   tampered package is processed with `power_valid` 0, and with
//!   `require-power` the step fails.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod common;

use common::plain;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

/// The leg workflow (the leg jobs' steps and env).
fn workflow() -> Value {
    common::legs_workflow()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The job's own `env:` (none: the leg's environment is its first step's).
fn job_env(job: &Value, ctx: &Value) -> Vec<(String, String)> {
    job["env"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), common::eval_template(&plain(v), ctx)))
        .collect()
}

fn step_if(job: &Value, step_name: &str, ctx: &Value) -> bool {
    let step = job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["name"] == step_name)
        .unwrap();
    common::eval_if(step["if"].as_str().unwrap(), ctx, true)
}

fn last(env: &[(String, String)], key: &str) -> String {
    env.iter().rev().find(|(k, _)| k == key).unwrap().1.clone()
}

fn ctx_with_env(ctx: &Value, env: &[(String, String)]) -> Value {
    let mut c = ctx.clone();
    c["env"] = Value::Object(env.iter().map(|(k, v)| (k.clone(), json!(v))).collect());
    c
}

// ---------------------------------------------------------------------------
// Agentic legs.
// ---------------------------------------------------------------------------

fn agentic_row() -> Value {
    json!({
        "image": "example/sglang:v1", "model": "example-org/Tiny-FP8", "model-prefix": "tiny",
        "precision": "fp8", "framework": "sglang", "runner": "h200", "tp": 8, "ep": 1,
        "dp-attn": false, "conc": 16, "spec-decoding": "none", "exp-name": "tiny_agentic",
        "duration": 1800, "scenario-type": "agentic-coding"
    })
}

/// The launcher stand-in: the aggregate result plus aiperf's export with
/// `$E2E_ERRORS` failed requests out of 50.
const AGENTIC_LAUNCH: &str = r#"set -e
printf '{"num_requests_successful": %d}' $((50 - E2E_ERRORS)) >"$RESULT_FILENAME.json"
mkdir -p results/aiperf_artifacts/run_0
printf '{"request_count": {"avg": %d}, "error_request_count": {"avg": %d}, "completed_request_count": {"avg": 50}}' \
  $((50 - E2E_ERRORS)) "$E2E_ERRORS" >results/aiperf_artifacts/run_0/profile_export_aiperf.json"#;

#[test]
fn an_agentic_leg_whose_result_fails_validation_fails_with_the_cause() {
    let wf = workflow();
    let job = &wf["jobs"]["single-node"];
    let ctx = common::leg_ctx(&json!({
        "matrix": {"family": "agentic", "config": agentic_row()},
        "needs": {"policy": {"outputs": {"agentx-fast": "false", "fail-fast": "false"}},
                  "plan-sn-agentic": {"outputs": {"parts": "1"}}},
        "secrets": {},
        "inputs": {"launch-command": AGENTIC_LAUNCH, "leg-env": "", "duration": "3600",
                   "require-power": false},
        "runner": {"name": "h200-nb_03"}, "github": {"token": "t"},
    }));
    for (errors, passes) in [("12", false), ("5", true)] {
        let tmp = test_kit::temp_dir();
        let mut env = job_env(job, &ctx);
        env.push(("E2E_ERRORS".into(), errors.into()));
        for name in ["Set the leg environment", "Launch the benchmark"] {
            let out = common::run_step(job, name, &ctx, &mut env, tmp.path());
            assert!(out.status.success(), "{name}: {}", text(&out));
        }
        let c = ctx_with_env(&ctx, &env);
        assert!(step_if(job, "Validate the agentic result", &c));
        assert!(
            !step_if(job, "Process the result", &c),
            "agentic legs are not processed"
        );
        let out = common::run_step(job, "Validate the agentic result", &c, &mut env, tmp.path());
        if passes {
            assert!(out.status.success(), "{}", text(&out));
            assert!(
                text(&out)
                    .contains("Validated aiperf request error rate: 5/50 = 10.000% <= 10.000%"),
                "{}",
                text(&out)
            );
        } else {
            assert_eq!(out.status.code(), Some(1), "{}", text(&out));
            assert!(
                text(&out).contains(
                    "aiperf request error rate exceeded the benchmark limit: 12/50 = 24.000% > 10.000%"
                ),
                "{}",
                text(&out)
            );
        }
    }
    // The raw results are uploaded even when the gate fails.
    let upload = job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["name"] == "Upload agentic raw results")
        .unwrap();
    assert!(plain(&upload["if"]).starts_with("always()"));
}

#[test]
fn a_multi_node_agentic_leg_without_successful_requests_fails_naming_the_file() {
    let wf = workflow();
    let job = &wf["jobs"]["multi-node"];
    let worker = json!({"num-worker": 1, "tp": 4, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 4,
                        "dp-attn": false, "additional-settings": []});
    let row = json!({
        "image": "example/dynamo:v1", "model": "example-org/Tiny-FP8", "model-prefix": "tiny",
        "precision": "fp8", "framework": "dynamo-sglang", "spec-decoding": "none",
        "runner": "gb200", "prefill": worker, "decode": worker, "conc": [8, 32],
        "exp-name": "tiny_agentic", "disagg": true, "scenario-type": "agentic-coding"
    });
    let launch = r#"set -e
for c in $CONC_LIST; do
  n=4; [ "$c" = 32 ] && n=0
  printf '{"num_requests_successful": %d}' "$n" >"${RESULT_FILENAME}_conc${c}.json"
done"#;
    let ctx = common::leg_ctx(&json!({
        "matrix": {"family": "agentic", "config": row},
        "needs": {"policy": {"outputs": {"agentx-fast": "false", "fail-fast": "false"}},
                  "plan-mn-agentic": {"outputs": {"parts": "1"}}},
        "secrets": {}, "inputs": {"launch-command": launch, "leg-env": ""},
        "runner": {"name": "gb200-nv_1"}, "github": {"token": "t"},
    }));
    let tmp = test_kit::temp_dir();
    let mut env = job_env(job, &ctx);
    for name in ["Set the leg environment", "Launch the multi-node benchmark"] {
        let out = common::run_step(job, name, &ctx, &mut env, tmp.path());
        assert!(out.status.success(), "{name}: {}", text(&out));
    }
    let result = last(&env, "RESULT_FILENAME");
    let c = ctx_with_env(&ctx, &env);
    assert!(step_if(job, "Validate the agentic results", &c));
    let out = common::run_step(
        job,
        "Validate the agentic results",
        &c,
        &mut env,
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "{result}_conc32.json has zero successful requests"
        )),
        "{}",
        text(&out)
    );
    // One concurrency's result missing: the count is named.
    std::fs::remove_file(tmp.path().join(format!("{result}_conc32.json"))).unwrap();
    let out = common::run_step(
        job,
        "Validate the agentic results",
        &c,
        &mut env,
        tmp.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("expected 2 agentic results, found 1"),
        "{}",
        text(&out)
    );
}

// ---------------------------------------------------------------------------
// A multi-node leg with a power package.
// ---------------------------------------------------------------------------

const SHA: &str = "5a1e5a1e5a1e5a1e5a1e5a1e5a1e5a1e5a1e5a1e";
/// (host, gpu index, role, het group, watts): one prefill and one decode node.
const DEVICES: [(&str, i64, &str, i64, f64); 4] = [
    ("node-d", 0, "decode", 1, 600.0),
    ("node-d", 1, "decode", 1, 600.0),
    ("node-p", 0, "prefill", 0, 200.0),
    ("node-p", 1, "prefill", 0, 200.0),
];

fn raw_result() -> Value {
    json!({
        "model_id": "example-org/Tiny-FP8", "max_concurrency": 16,
        "benchmark_start_time_unix": 7000.0, "benchmark_end_time_unix": 7020.0, "duration": 20.0,
        "completed": 32, "total_input_tokens": 32000, "total_output_tokens": 8000,
        "output_throughput": 400.0, "total_token_throughput": 2000.0,
        "mean_ttft_ms": 120.0, "mean_tpot_ms": 9.0
    })
}

/// Writes the srt-slurm package the launcher leaves in `LOGS/`: samples
/// every second from 6998 to 7022 and the window 7000..7020 at conc 16.
fn write_power_package(dir: &Path) {
    let power = dir.join("LOGS/power");
    std::fs::create_dir_all(power.join("windows")).unwrap();
    let uuid = |h: &str, i: i64| format!("GPU-{h}-{i}");
    let mut csv = String::from(
        "schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w\n",
    );
    let (first, last) = (6998, 7022);
    for (seq, ts) in (first..=last).enumerate() {
        for (h, i, _, _, w) in DEVICES {
            csv.push_str(&format!("1,{ts}.0,{seq},{h},{i},{},{w}\n", uuid(h, i)));
        }
    }
    std::fs::write(power.join("samples.csv"), csv).unwrap();
    let gaps: serde_json::Map<String, Value> = DEVICES
        .iter()
        .map(|(h, i, ..)| (format!("{h}/{}", uuid(h, *i)), json!(1.0)))
        .collect();
    let manifest = json!({
        "schema_version": 1, "producer": "srt-slurm.dcgm-power", "producer_git_commit": SHA,
        "source_metric": "DCGM_FI_DEV_POWER_USAGE", "unit": "W",
        "power_scope": "gpu_device_board_as_reported_by_dcgm",
        "timestamp_source": "head_node_unix_clock", "sample_interval_seconds": 1.0,
        "request_timeout_seconds": 2.0, "required": true, "started_at_unix": 6990.0,
        "stopped_at_unix": 7030.0, "status": "complete", "publication_valid": true,
        "dcgm_exporter": {"container_image_resolved": "/images/dcgm.sqsh"},
        "expected_devices": DEVICES.iter().map(|(h, i, role, het, _)| json!({
            "hostname": h, "gpu_index": i,
            "assignments": [{"worker_role": role, "worker_index": 0, "worker_process": 0, "het_group": het}],
        })).collect::<Vec<_>>(),
        "observed_devices": DEVICES.iter().map(|(h, i, ..)| json!({
            "hostname": h, "gpu_index": i, "gpu_uuids": [uuid(h, *i)],
            "first_sample_time_unix": first, "last_sample_time_unix": last,
        })).collect::<Vec<_>>(),
        "expected_windows": [{"benchmark_type": "sa-bench", "concurrency": 16}],
        "scrape_count": last - first + 1, "sample_row_count": (last - first + 1) * 4,
        "window_validations": [{
            "benchmark_type": "sa-bench", "concurrency": 16, "window_file": "windows/result_c16.json",
            "power_coverage_valid": true, "reason_codes": [],
            "per_device_max_sample_gap_seconds": gaps,
        }],
        "artifact_errors": [], "reason_codes": [],
    });
    std::fs::write(power.join("manifest.json"), manifest.to_string()).unwrap();
    let window = json!({
        "schema_version": 1, "clock_source": "head_node_unix_clock", "benchmark_type": "sa-bench",
        "concurrency": 16, "status": "completed", "benchmark_start_time_unix": 7000.0,
        "benchmark_end_time_unix": 7020.0, "duration": 20.0, "reason": null,
        "result_path": "result_c16.json",
    });
    std::fs::write(power.join("windows/result_c16.json"), window.to_string()).unwrap();
    std::fs::write(dir.join("LOGS/result_c16.json"), raw_result().to_string()).unwrap();
}

#[test]
fn a_multi_node_leg_with_a_power_package_publishes_validated_energy() {
    let wf = workflow();
    let job = &wf["jobs"]["multi-node"];
    let worker = json!({"num-worker": 1, "tp": 2, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 2,
                        "dp-attn": false, "additional-settings": []});
    let row = json!({
        "image": "example/dynamo:v1", "model": "example-org/Tiny-FP8", "model-prefix": "tiny",
        "precision": "fp8", "framework": "dynamo-sglang", "spec-decoding": "none",
        "runner": "gb200", "isl": 1024, "osl": 1024, "prefill": worker, "decode": worker,
        "conc": [16], "max-model-len": 2304, "exp-name": "tiny_1k1k", "disagg": true,
        "run-eval": false, "eval-only": false
    });
    // The launcher stand-in: the renamed workspace copy of the result, and
    // the producer SHA stamp srt-slurm launchers leave.
    let launch = format!(
        r#"set -e
cp LOGS/result_c16.json "${{RESULT_FILENAME}}_conc16_gpus_4_ctx_2_gen_2.json"
printf '%s' {SHA} >power-producer-sha.txt"#
    );
    let ctx_for = |require_power: bool| {
        common::leg_ctx(&json!({
            "matrix": {"family": "fixed", "config": row},
            "needs": {"policy": {"outputs": {"agentx-fast": "false", "fail-fast": "false"}},
                      "plan-mn-1k1k": {"outputs": {"parts": "1"}}},
            "secrets": {},
            "inputs": {"launch-command": launch, "leg-env": "", "require-power": require_power,
                       "power-producer-sha": ""},
            "runner": {"name": "gb200-nv_4"}, "github": {"token": "t"},
        }))
    };
    let leg = |dir: &Path, require_power: bool| -> (Output, String) {
        let ctx = ctx_for(require_power);
        let mut env = job_env(job, &ctx);
        for name in ["Set the leg environment", "Launch the multi-node benchmark"] {
            let out = common::run_step(job, name, &ctx, &mut env, dir);
            assert!(out.status.success(), "{name}: {}", text(&out));
        }
        let c = ctx_with_env(&ctx, &env);
        assert!(step_if(job, "Process the results", &c));
        assert!(!step_if(job, "Validate the agentic results", &c));
        let out = common::run_step(job, "Process the results", &c, &mut env, dir);
        (out, last(&env, "RESULT_FILENAME"))
    };

    let tmp = test_kit::temp_dir();
    write_power_package(tmp.path());
    let (out, result) = leg(tmp.path(), true);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "POWER_PRODUCER_SHA from the launcher stamp: {SHA}"
        )),
        "{}",
        text(&out)
    );
    let stem = format!("{result}_conc16_gpus_4_ctx_2_gen_2");
    let agg: Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join(format!("agg_{stem}.json"))).unwrap(),
    )
    .unwrap();
    // 2 × 200 W and 2 × 600 W over 20 s; 32 queries, 32,000 + 8,000 tokens.
    for (k, v) in [
        ("power_valid", json!(1)),
        ("total_gpu_energy_j", json!(32000.0)),
        ("avg_power_w", json!(400.0)),
        ("avg_total_gpu_power_w", json!(1600.0)),
        ("joules_per_successful_query", json!(1000.0)),
        ("joules_per_total_token", json!(0.8)),
        ("prefill_gpu_energy_j", json!(8000.0)),
        ("decode_gpu_energy_j", json!(24000.0)),
        ("prefill_avg_power_w", json!(200.0)),
        ("decode_avg_power_w", json!(600.0)),
        ("decode_joules_per_output_token", json!(3.0)),
    ] {
        assert_eq!(agg[k], v, "{k}");
    }
    let side: Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join(format!("power_validation_{stem}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(side["producer"]["expected_producer_git_commit"], json!(SHA));
    assert_eq!(
        side["selected_window"]["window_file"],
        json!("windows/result_c16.json")
    );

    // The audit bundle carries the package and the sidecar.
    let bundle = job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["name"] == "Upload power audit bundle")
        .unwrap();
    let ctx = ctx_with_env(
        &ctx_for(false),
        &[("RESULT_FILENAME".into(), result.clone())],
    );
    assert_eq!(
        common::eval_template(&plain(&bundle["with"]["name"]), &ctx),
        format!("power_audit_{result}")
    );
    let paths = common::eval_template(&plain(&bundle["with"]["path"]), &ctx);
    for p in [
        format!("power_validation_{result}_*.json"),
        "LOGS/power/**".to_owned(),
    ] {
        assert!(paths.lines().any(|l| l.trim() == p), "{p} not in {paths}");
    }
    assert!(plain(&bundle["if"]).starts_with("always()"));

    // A package whose stored verdict disagrees: processed without energy,
    // and with require-power the step fails after writing the sidecar.
    for require_power in [false, true] {
        let tmp = test_kit::temp_dir();
        write_power_package(tmp.path());
        let manifest = tmp.path().join("LOGS/power/manifest.json");
        let mut m: Value =
            serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
        m["sample_row_count"] = json!(7);
        std::fs::write(&manifest, m.to_string()).unwrap();
        let (out, result) = leg(tmp.path(), require_power);
        assert_eq!(out.status.success(), !require_power, "{}", text(&out));
        assert!(
            text(&out).contains(
                "Power validation failed: package_recompute_invalid, producer_verdict_mismatch"
            ),
            "{}",
            text(&out)
        );
        let stem = format!("{result}_conc16_gpus_4_ctx_2_gen_2");
        let side: Value = serde_json::from_str(
            &std::fs::read_to_string(tmp.path().join(format!("power_validation_{stem}.json")))
                .unwrap(),
        )
        .unwrap();
        assert!(
            side["failures"]
                .as_array()
                .unwrap()
                .contains(&json!("sample_row_count is 7, disk has 100 rows")),
            "{side}"
        );
        let agg: Value = serde_json::from_str(
            &std::fs::read_to_string(tmp.path().join(format!("agg_{stem}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(agg["power_valid"], json!(0));
        assert!(agg.get("total_gpu_energy_j").is_none());
    }
}

#[test]
fn multi_node_eval_legs_verify_their_scores() {
    let wf = workflow();
    let job = &wf["jobs"]["multi-node"];
    let step = job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|st| st["name"] == "Verify eval scores")
        .unwrap();
    assert_eq!(
        plain(&step["if"]),
        "(success() || failure()) && env.EVAL_ONLY == 'true'"
    );
    // Without eval-conc the leg's largest concurrency is the one requested.
    let tmp = test_kit::temp_dir();
    std::fs::write(
        tmp.path().join("meta_env.json"),
        r#"{"model_prefix": "tiny", "framework": "sglang", "precision": "fp8", "conc": 32}"#,
    )
    .unwrap();
    let score = |v: f64| {
        std::fs::write(
            tmp.path().join("results_conc32.json"),
            json!({"results": {"gsm8k": {"exact_match,strict-match": v}}}).to_string(),
        )
        .unwrap();
    };
    let ctx = json!({});
    let verify = |eval_conc: &str| {
        let mut env = vec![
            ("EVAL_CONC".to_owned(), eval_conc.to_owned()),
            ("CONC_LIST".to_owned(), "8 32 16".to_owned()),
        ];
        common::run_step(job, "Verify eval scores", &ctx, &mut env, tmp.path())
    };
    score(0.92);
    let out = verify("");
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("PASS: [conc=32] gsm8k"),
        "{}",
        text(&out)
    );
    // Another requested concurrency than the eval ran at: the batch check says no.
    let out = verify("8");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("eval metadata concurrency does not match workflow request"),
        "{}",
        text(&out)
    );
    // A score below the threshold fails the step, naming it.
    score(0.42);
    let out = verify("");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("FAIL: [conc=32] gsm8k exact_match,strict-match = 0.4200"),
        "{}",
        text(&out)
    );
}
