//! `collect-results process` on multi-node legs with an srt-slurm power
//! package (`LOGS/power/{manifest.json, samples.csv, windows/*.json}`): a
//! self-consistent package publishes whole-deployment and per-role energy;
//! each test breaks one gate and checks that no energy figure is published,
//! the sidecar names the reason, and `REQUIRE_POWER=1` turns it into exit 1.
//!
//! The fixture: two prefill GPUs on `pf-a` (het group 0, 250 W) and two
//! decode GPUs on `dc-b` (het group 1, 500 W), sampled every second from
//! 4998 to 5042, the formal window 5000..5040 at concurrency 8.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use test_kit::stderr;

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";
const RESULT: &str = "leg_conc8_gpus_4_ctx_2_gen_2";
const START: f64 = 5000.0;
const END: f64 = 5040.0;
const FIRST: i64 = 4998;
const LAST: i64 = 5042;
/// (host, gpu index, role, het group, watts)
const DEVICES: [(&str, i64, &str, i64, f64); 4] = [
    ("dc-b", 0, "decode", 1, 500.0),
    ("dc-b", 1, "decode", 1, 500.0),
    ("pf-a", 0, "prefill", 0, 250.0),
    ("pf-a", 1, "prefill", 0, 250.0),
];

fn uuid(host: &str, idx: i64) -> String {
    format!("GPU-{host}-{idx:02}")
}

fn raw_result() -> Value {
    json!({
        "model_id": "example/Tiny", "max_concurrency": 8,
        "benchmark_start_time_unix": START, "benchmark_end_time_unix": END, "duration": 40.0,
        "completed": 10, "total_input_tokens": 20000, "total_output_tokens": 5000,
        "output_throughput": 125.0, "total_token_throughput": 625.0,
        "mean_ttft_ms": 100.0, "mean_tpot_ms": 8.0
    })
}

struct Package {
    dir: test_kit::TempDir,
}

impl Package {
    fn power(&self) -> std::path::PathBuf {
        self.dir.path().join("LOGS/power")
    }
    fn read(&self, rel: &str) -> Value {
        let p = self.dir.path().join(rel);
        serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{rel}: {e}")))
            .expect("json")
    }
    fn write(&self, rel: &str, v: &Value) {
        std::fs::write(self.dir.path().join(rel), v.to_string()).expect("write");
    }
    fn edit(&self, rel: &str, f: impl FnOnce(&mut Value)) {
        let mut v = self.read(rel);
        f(&mut v);
        self.write(rel, &v);
    }
    fn edit_samples(&self, f: impl FnOnce(Vec<String>) -> Vec<String>) {
        let p = self.power().join("samples.csv");
        let text = std::fs::read_to_string(&p).expect("samples");
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let header = lines.remove(0);
        let mut out = vec![header];
        out.extend(f(lines));
        std::fs::write(&p, out.join("\n") + "\n").expect("write");
    }
    fn run(&self, extra: &[(&str, &str)]) -> Output {
        let mut cmd = test_kit::command(env!("CARGO_BIN_EXE_collect-results"));
        cmd.arg("process").current_dir(self.dir.path());
        for (k, v) in [
            ("RUNNER_TYPE", "gb200"),
            ("FRAMEWORK", "dynamo-sglang"),
            ("PRECISION", "fp8"),
            ("SPEC_DECODING", "none"),
            ("RESULT_FILENAME", RESULT),
            ("ISL", "1024"),
            ("OSL", "1024"),
            ("DISAGG", "true"),
            ("MODEL_PREFIX", "tiny"),
            ("IMAGE", "example/dynamo:v1"),
            ("IS_MULTINODE", "true"),
            ("PREFILL_GPUS", "2"),
            ("DECODE_GPUS", "2"),
            ("PREFILL_NUM_WORKERS", "1"),
            ("PREFILL_TP", "2"),
            ("PREFILL_EP", "1"),
            ("PREFILL_DP_ATTN", "false"),
            ("DECODE_NUM_WORKERS", "1"),
            ("DECODE_TP", "2"),
            ("DECODE_EP", "1"),
            ("DECODE_DP_ATTN", "false"),
            ("POWER_PRODUCER_SHA", SHA),
        ] {
            cmd.env(k, v);
        }
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd.output().expect("run")
    }
    fn agg(&self) -> Value {
        self.read(&format!("agg_{RESULT}.json"))
    }
    fn sidecar(&self) -> Value {
        self.read(&format!("power_validation_{RESULT}.json"))
    }
}

/// A package the producer would publish: evidence consistent with the bytes.
fn package() -> Package {
    let dir = test_kit::temp_dir();
    let power = dir.path().join("LOGS/power");
    std::fs::create_dir_all(power.join("windows")).expect("mkdir");
    let mut csv = String::from(
        "schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w\n",
    );
    let mut rows = 0;
    for (seq, ts) in (FIRST..=LAST).enumerate() {
        for (host, idx, _, _, watts) in DEVICES {
            csv.push_str(&format!(
                "1,{ts}.0,{seq},{host},{idx},{},{watts}\n",
                uuid(host, idx)
            ));
            rows += 1;
        }
    }
    std::fs::write(power.join("samples.csv"), csv).expect("samples");
    let gaps: serde_json::Map<String, Value> = DEVICES
        .iter()
        .map(|(h, i, ..)| (format!("{h}/{}", uuid(h, *i)), json!(1.0)))
        .collect();
    let manifest = json!({
        "schema_version": 1, "producer": "srt-slurm.dcgm-power", "producer_git_commit": SHA,
        "source_metric": "DCGM_FI_DEV_POWER_USAGE", "unit": "W",
        "power_scope": "gpu_device_board_as_reported_by_dcgm",
        "timestamp_source": "head_node_unix_clock",
        "sample_interval_seconds": 1.0, "request_timeout_seconds": 2.0, "required": true,
        "started_at_unix": 4990.0, "stopped_at_unix": 5050.0, "status": "complete",
        "publication_valid": true,
        "dcgm_exporter": {"container_image_resolved": "/images/dcgm.sqsh",
                          "container_image_sha256": "f00d"},
        "expected_devices": DEVICES.iter().map(|(h, i, role, het, _)| json!({
            "hostname": h, "gpu_index": i,
            "assignments": [{"worker_role": role, "worker_index": 0, "worker_process": 0, "het_group": het}],
        })).collect::<Vec<_>>(),
        "observed_devices": DEVICES.iter().map(|(h, i, ..)| json!({
            "hostname": h, "gpu_index": i, "gpu_uuids": [uuid(h, *i)],
            "first_sample_time_unix": FIRST, "last_sample_time_unix": LAST,
        })).collect::<Vec<_>>(),
        "expected_windows": [{"benchmark_type": "sa-bench", "concurrency": 8}],
        "scrape_count": LAST - FIRST + 1,
        "sample_row_count": rows,
        "window_validations": [{
            "benchmark_type": "sa-bench", "concurrency": 8, "window_file": "windows/bench_c8.json",
            "power_coverage_valid": true, "reason_codes": [],
            "per_device_max_sample_gap_seconds": gaps,
        }],
        "artifact_errors": [],
        "reason_codes": [],
    });
    std::fs::write(power.join("manifest.json"), manifest.to_string()).expect("manifest");
    let window = json!({
        "schema_version": 1, "clock_source": "head_node_unix_clock", "benchmark_type": "sa-bench",
        "concurrency": 8, "status": "completed", "benchmark_start_time_unix": START,
        "benchmark_end_time_unix": END, "duration": 40.0, "reason": null,
        "result_path": "bench_c8.json",
    });
    std::fs::write(power.join("windows/bench_c8.json"), window.to_string()).expect("window");
    // The launcher renames the result into the workspace; LOGS keeps the original.
    std::fs::write(
        dir.path().join("LOGS/bench_c8.json"),
        raw_result().to_string(),
    )
    .expect("orig");
    std::fs::write(
        dir.path().join(format!("{RESULT}.json")),
        raw_result().to_string(),
    )
    .expect("result");
    Package { dir }
}

const ENERGY_KEYS: [&str; 13] = [
    "avg_power_w",
    "avg_total_gpu_power_w",
    "total_gpu_energy_j",
    "joules_per_successful_query",
    "joules_per_input_token",
    "joules_per_output_token",
    "joules_per_total_token",
    "prefill_gpu_energy_j",
    "decode_gpu_energy_j",
    "prefill_avg_power_w",
    "decode_avg_power_w",
    "prefill_joules_per_input_token",
    "decode_joules_per_output_token",
];

/// A rewrite of the sample lines (header excluded).
type SampleEdit = fn(Vec<String>) -> Vec<String>;

/// Best effort: exit 0, `power_valid` 0, no figure; strict: exit 1.
/// Returns the sidecar.
fn assert_rejected(pkg: &Package, reason: &str) -> Value {
    let out = pkg.run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let agg = pkg.agg();
    assert_eq!(agg["power_valid"], json!(0));
    assert_eq!(agg["power_metric_schema_version"], json!(2));
    for k in ENERGY_KEYS {
        assert!(agg.get(k).is_none(), "{k} published for an invalid package");
    }
    let side = pkg.sidecar();
    assert_eq!(side["power_valid"], json!(false));
    let reasons: Vec<&str> = side["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(reasons.contains(&reason), "{reason} not in {reasons:?}");
    assert!(
        stderr(&out).contains("[aggregate_power_multinode] Power validation failed: "),
        "{}",
        stderr(&out)
    );
    let strict = pkg.run(&[("REQUIRE_POWER", "1")]);
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));
    side
}

fn failures(side: &Value) -> Vec<String> {
    side["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_consistent_package_publishes_whole_and_role_energy() {
    let pkg = package();
    let out = pkg.run(&[("REQUIRE_POWER", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let agg = pkg.agg();
    assert_eq!(agg["power_valid"], json!(1));
    for (k, v) in [
        ("avg_power_w", 375.0),
        ("avg_total_gpu_power_w", 1500.0),
        ("total_gpu_energy_j", 60000.0),
        ("joules_per_successful_query", 6000.0),
        ("joules_per_input_token", 3.0),
        ("joules_per_output_token", 12.0),
        ("joules_per_total_token", 2.4),
        ("prefill_gpu_energy_j", 20000.0),
        ("decode_gpu_energy_j", 40000.0),
        ("prefill_avg_power_w", 250.0),
        ("decode_avg_power_w", 500.0),
        ("prefill_joules_per_input_token", 1.0),
        ("decode_joules_per_output_token", 8.0),
    ] {
        assert_eq!(agg[k], json!(v), "{k}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!(
            "[aggregate_power_multinode] avg_power_w=375.00 total_gpu_energy_j=60000.00 \
             prefill_gpu_energy_j=20000.00 decode_gpu_energy_j=40000.00 (n=4) -> agg_{RESULT}.json\n"
        )),
        "{stdout}"
    );
    let side = pkg.sidecar();
    assert_eq!(side["reasons"], json!([]));
    assert_eq!(side["failures"], json!([]));
    assert_eq!(side["telemetry_source"], json!("LOGS/power"));
    assert_eq!(
        side["selected_window"]["window_file"],
        json!("windows/bench_c8.json")
    );
    assert_eq!(
        side["producer"]["recomputed_publication_valid"],
        json!(true)
    );
    assert_eq!(side["producer"]["exporter_image_sha256"], json!("f00d"));
    assert_eq!(side["per_gpu_role"]["pf-a/GPU-pf-a-00"], json!("prefill"));
    assert_eq!(side["per_gpu_energy_j"]["dc-b/GPU-dc-b-01"], json!(20000.0));
    assert_eq!(
        side["per_gpu_max_sample_gap_s"]["pf-a/GPU-pf-a-01"],
        json!(1.0)
    );
    assert_eq!(
        (
            side["expected_gpu_count"].clone(),
            side["observed_gpu_count"].clone()
        ),
        (json!(4), json!(4))
    );
}

#[test]
fn the_producer_pin_is_required_and_must_match() {
    let pkg = package();
    let out = pkg.run(&[("POWER_PRODUCER_SHA", "")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let side = pkg.sidecar();
    assert_eq!(side["reasons"], json!(["producer_pin_missing"]));
    assert_eq!(failures(&side), ["no expected producer SHA configured"]);
    assert_eq!(
        side["producer"]["expected_producer_git_commit"],
        Value::Null
    );
    assert_eq!(pkg.agg()["power_valid"], json!(0));
    let strict = pkg.run(&[("POWER_PRODUCER_SHA", ""), ("REQUIRE_POWER", "1")]);
    assert_eq!(strict.status.code(), Some(1), "{}", stderr(&strict));

    let pkg = package();
    pkg.edit("LOGS/power/manifest.json", |m| {
        m["producer_git_commit"] = json!("feedface")
    });
    let side = assert_rejected(&pkg, "producer_commit_mismatch");
    assert_eq!(
        failures(&side),
        [format!(
            "producer_git_commit 'feedface' != expected '{SHA}'"
        )]
    );
}

#[test]
fn the_stored_verdict_is_never_trusted_alone() {
    let pkg = package();
    pkg.edit("LOGS/power/manifest.json", |m| {
        m["publication_valid"] = json!(false)
    });
    let side = assert_rejected(&pkg, "producer_verdict_mismatch");
    assert_eq!(
        failures(&side),
        ["stored publication_valid=False, recomputed=True"]
    );
}

#[test]
fn wire_contract_and_lifecycle_are_recomputed() {
    let pkg = package();
    pkg.edit("LOGS/power/manifest.json", |m| {
        m["unit"] = json!("mW");
        m["reason_codes"] = json!(["collector_exception", "exporter_startup_timeout"]);
    });
    let side = assert_rejected(&pkg, "package_recompute_invalid");
    let f = failures(&side);
    assert!(
        f.contains(&"unit is 'mW', expected 'W'".to_owned()),
        "{f:?}"
    );
    assert!(
        f.contains(
            &"complete manifest carries lifecycle-failure reasons: collector_exception, exporter_startup_timeout"
                .to_owned()
        ),
        "{f:?}"
    );
}

#[test]
fn a_malformed_manifest_names_the_field() {
    let pkg = package();
    pkg.edit("LOGS/power/manifest.json", |m| {
        m["expected_devices"][1]["assignments"][0]["worker_role"] = json!("router");
    });
    let side = assert_rejected(&pkg, "manifest_malformed");
    assert_eq!(
        failures(&side),
        [
            "manifest malformed: ValueError(\"worker_role is not one of ('prefill', 'decode', 'agg'): 'router'\")"
        ]
    );
    assert_eq!(
        side["producer"]["recomputed_publication_valid"],
        json!(false)
    );
}

#[test]
fn sample_defects_invalidate_the_package() {
    // A repeated row, a device that loses its samples around the window
    // start, and a gap over three seconds: each alone is enough.
    let cases: [(&str, SampleEdit); 3] = [
        ("duplicate_sample_row", |mut l| {
            let dup = l[7].clone();
            l.push(dup);
            l
        }),
        ("measurement_window_not_bracketed", |l| {
            l.into_iter()
                .filter(|r| {
                    !(r.contains(",pf-a,0,") && r.split(',').nth(1).is_some_and(|t| t <= "5000.0"))
                })
                .collect()
        }),
        ("sample_gap_exceeded", |l| {
            l.into_iter()
                .filter(|r| {
                    let t: f64 = r
                        .split(',')
                        .nth(1)
                        .and_then(|t| t.parse().ok())
                        .unwrap_or(0.0);
                    !(r.contains(",dc-b,1,") && (5010.0..=5014.0).contains(&t))
                })
                .collect()
        }),
    ];
    for (code, mutate) in cases {
        let pkg = package();
        pkg.edit_samples(mutate);
        let side = assert_rejected(&pkg, "package_recompute_invalid");
        assert!(
            failures(&side).iter().any(|f| f.contains(code)),
            "{code}: {:?}",
            failures(&side)
        );
    }
}

#[test]
fn the_result_is_bound_to_its_window_by_content() {
    let pkg = package();
    let mut tampered = raw_result();
    tampered["completed"] = json!(11);
    pkg.write(&format!("{RESULT}.json"), &tampered);
    let side = assert_rejected(&pkg, "result_content_mismatch");
    assert_eq!(
        failures(&side),
        [format!(
            "workspace copy {RESULT}.json differs from original bench_c8.json"
        )]
    );

    let pkg = package();
    let mut other = raw_result();
    other["max_concurrency"] = json!(16);
    pkg.write(&format!("{RESULT}.json"), &other);
    pkg.write("LOGS/bench_c8.json", &other);
    let side = assert_rejected(&pkg, "window_for_result_missing");
    assert_eq!(
        failures(&side),
        ["found 0 completed windows for concurrency 16"]
    );
}

#[test]
fn a_window_result_path_cannot_leave_the_logs_root() {
    let pkg = package();
    pkg.edit("LOGS/power/windows/bench_c8.json", |w| {
        w["result_path"] = json!("../bench_c8.json");
    });
    let side = assert_rejected(&pkg, "package_recompute_invalid");
    assert!(
        failures(&side)
            .contains(&"measurement_window_result_path_invalid (windows/bench_c8.json)".to_owned()),
        "{:?}",
        failures(&side)
    );
}

#[test]
fn role_topology_must_match_the_workflow() {
    let pkg = package();
    let out = pkg.run(&[("PREFILL_GPUS", "3"), ("DECODE_GPUS", "2")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        failures(&pkg.sidecar()),
        ["expected 3 prefill GPUs, found 2"]
    );

    // Prefill and decode in one het group is not a disaggregated deployment.
    let pkg = package();
    pkg.edit("LOGS/power/manifest.json", |m| {
        for d in m["expected_devices"].as_array_mut().expect("devices") {
            d["assignments"][0]["het_group"] = json!(0);
        }
    });
    let side = assert_rejected(&pkg, "topology_env_mismatch");
    assert_eq!(failures(&side), ["roles share a het group"]);

    // No het groups at all (one plain Slurm job) is fine.
    let pkg = package();
    pkg.edit("LOGS/power/manifest.json", |m| {
        for d in m["expected_devices"].as_array_mut().expect("devices") {
            d["assignments"][0]["het_group"] = Value::Null;
        }
    });
    let out = pkg.run(&[("REQUIRE_POWER", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(pkg.agg()["decode_gpu_energy_j"], json!(40000.0));
}

#[test]
fn overflowing_energy_is_invalid_and_the_sidecar_stays_json() {
    let pkg = package();
    pkg.edit_samples(|l| {
        l.into_iter()
            .map(|r| {
                let mut f: Vec<&str> = r.split(',').collect();
                f[6] = "9e307";
                f.join(",")
            })
            .collect()
    });
    let side = assert_rejected(&pkg, "non_finite_power_metric");
    let energies: Vec<&Value> = side["per_gpu_energy_j"]
        .as_object()
        .expect("map")
        .values()
        .collect();
    assert!(energies.iter().all(|v| v.is_null()), "{energies:?}");
}

#[test]
fn a_missing_package_keeps_the_reference_payload() {
    let pkg = package();
    std::fs::remove_dir_all(pkg.power()).expect("rm");
    let side = assert_rejected(&pkg, "power_artifacts_missing");
    assert_eq!(failures(&side), ["power dir missing: LOGS/power"]);
    assert_eq!(side["selected_window"], Value::Null);
    assert!(Path::new(&pkg.dir.path().join(format!("agg_{RESULT}.json"))).is_file());
}
