//! `collect-results validate-agentic` and `validate-agentic-results` as the
//! workflow calls them: exit 0 valid, 1 rejected with the cause, 2 nothing
//! to judge or a bad threshold.

use std::path::Path;
use std::process::Output;

use test_kit::stderr;

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    test_kit::command(env!("CARGO_BIN_EXE_collect-results"))
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .expect("run binary")
}

fn aggregate(dir: &Path, body: &str) {
    let a = dir.join("results/aiperf_artifacts");
    std::fs::create_dir_all(&a).expect("mkdir");
    std::fs::write(a.join("profile_export_aiperf.json"), body).expect("write");
}

#[test]
fn validate_agentic_exit_codes_and_messages() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    let args = ["validate-agentic", "results/aiperf_artifacts"];
    let threshold = [("AIPERF_FAILED_REQUEST_THRESHOLD", "0.10")];

    let o = run(d, &args, &threshold);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("results/aiperf_artifacts/profile_export_aiperf.json not found"),
        "{}",
        stderr(&o)
    );

    aggregate(
        d,
        r#"{"request_count":{"avg":2},"error_request_count":{"avg":65},"completed_request_count":{"avg":67}}"#,
    );
    let o = run(d, &args, &threshold);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "validate-agentic: aiperf request error rate exceeded the benchmark limit: 65/67 = 97.015% > 10.000%"
        ),
        "{}",
        stderr(&o)
    );

    aggregate(
        d,
        r#"{"request_count":{"avg":90},"error_request_count":{"avg":10}}"#,
    );
    let o = run(d, &args, &threshold);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "Validated aiperf request error rate: 10/100 = 10.000% <= 10.000%\n"
    );

    // The flag wins over the environment; out of range is a usage error.
    let mut with_flag = args.to_vec();
    with_flag.extend(["--failed-request-threshold", "0.05"]);
    assert_eq!(run(d, &with_flag, &threshold).status.code(), Some(1));
    let o = run(d, &args, &[("AIPERF_FAILED_REQUEST_THRESHOLD", "1.5")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("between 0 and 1"), "{}", stderr(&o));
    assert_eq!(
        run(d, &args, &[]).status.code(),
        Some(2),
        "threshold required"
    );
}

#[test]
fn validate_agentic_results_counts_and_successes() {
    let tmp = test_kit::temp_dir();
    let d = tmp.path();
    let env = [("RESULT_FILENAME", "leg"), ("CONC_LIST", "8 16")];
    std::fs::write(
        d.join("leg_conc8.json"),
        r#"{"num_requests_successful": 4}"#,
    )
    .expect("w");
    let o = run(d, &["validate-agentic-results"], &env);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("expected 2 agentic results, found 1"),
        "{}",
        stderr(&o)
    );
    std::fs::write(
        d.join("leg_conc16.json"),
        r#"{"num_requests_successful": 0}"#,
    )
    .expect("w");
    let o = run(d, &["validate-agentic-results"], &env);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("leg_conc16.json has zero successful requests"),
        "{}",
        stderr(&o)
    );
    std::fs::write(
        d.join("leg_conc16.json"),
        r#"{"num_requests_successful": 9}"#,
    )
    .expect("w");
    let o = run(d, &["validate-agentic-results"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "Found agentic result file: leg_conc16.json\nFound agentic result file: leg_conc8.json\n"
    );
}
