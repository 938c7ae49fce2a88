//! `collect-results process` on one result file: the fuzz input is the
//! benchmark JSON, the environment is a fixed single-node leg.
#![no_main]

use libfuzzer_sys::fuzz_target;

const RESULT: &str = "fuzz_result";

fn env(name: &str) -> Option<String> {
    let v = match name {
        "RUNNER_TYPE" => "b200",
        "FRAMEWORK" => "vllm",
        "PRECISION" => "fp8",
        "SPEC_DECODING" => "none",
        "RESULT_FILENAME" => RESULT,
        "ISL" => "1024",
        "OSL" => "128",
        "DISAGG" => "false",
        "MODEL_PREFIX" => "glm5",
        "IMAGE" => "vllm/vllm-openai:v0.15.1",
        "TP" => "8",
        "EP_SIZE" => "1",
        "DP_ATTENTION" => "false",
        _ => return None,
    };
    Some(v.to_string())
}

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    if std::fs::write(dir.path().join(format!("{RESULT}.json")), data).is_err() {
        return;
    }
    let _ = collect_results::process::run(&env, dir.path());
});
