//! What the validate-artifacts tests share.

use serde_json::{Value, json};

/// A complete fixed-sequence row as `collect-results process` writes it
/// (every field the ingest needs), at concurrency `conc`.
pub(crate) fn fixed(conc: u32) -> Value {
    json!({"hw": "h100", "conc": conc, "image": "vllm/vllm-openai:v0.11", "model": "openai/gpt-oss-120b",
           "infmax_model_prefix": "gptoss", "framework": "vllm", "precision": "fp8", "spec_decoding": "none",
           "disagg": false, "recipe_fingerprint": "", "isl": 1024, "osl": 1024, "is_multinode": false,
           "tp": 2, "pp": 1, "dcp_size": 1, "pcp_size": 1, "ep": 1, "dp_attention": "false",
           "tput_per_gpu": 10.5, "output_tput_per_gpu": 1.5, "input_tput_per_gpu": 9.0, "mean_ttft": 0.25})
}
