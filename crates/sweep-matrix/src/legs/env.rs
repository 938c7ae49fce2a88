//! `generate-matrix leg-env`: the caller's extra leg environment, checked
//! against the shell's, the runner's and the benchmark template's own
//! variables ([`TEMPLATE_VARS`]: the one list of what the leg sets itself).

use serde_json::Value;

use super::budgets::MAX_LEG_ENV_BYTES;

/// Variables the leg environment may never set: the shell's and the
/// loader's own, and the runner's.
const DENIED: [&str; 9] = [
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "NODE_OPTIONS",
    "HOME",
];
const DENIED_PREFIXES: [&str; 5] = ["LD_", "GITHUB_", "RUNNER_", "ACTIONS_", "INPUT_"];

/// The benchmark template's variables (workflow.md §6: what
/// [`crate::leg::leg_env`] sets from the row, the leg workflow's step
/// `env:` and what the launch step sets): the caller's `leg-env` and a
/// worker's settings may not override them. Tests check this list against
/// `leg_env` and the workflow's step env.
pub const TEMPLATE_VARS: [&str; 76] = [
    "FAMILY",
    "IS_MULTINODE",
    "EXP_NAME",
    "RECIPE_FINGERPRINT",
    "MODEL",
    "MODEL_PREFIX",
    "IMAGE",
    "FRAMEWORK",
    "PRECISION",
    "ISL",
    "OSL",
    "MAX_MODEL_LEN",
    "TP",
    "PP_SIZE",
    "DCP_SIZE",
    "PCP_SIZE",
    "EP_SIZE",
    "DP_ATTENTION",
    "CONC",
    "CONC_LIST",
    "CONC_X",
    "EVAL_CONC",
    "SPEC_DECODING",
    "DISAGG",
    "PREFILL_HARDWARE",
    "DECODE_HARDWARE",
    "PREFILL_NUM_WORKERS",
    "PREFILL_TP",
    "PREFILL_PP_SIZE",
    "PREFILL_DCP_SIZE",
    "PREFILL_PCP_SIZE",
    "PREFILL_EP",
    "PREFILL_DP_ATTN",
    "PREFILL_ADDITIONAL_SETTINGS",
    "DECODE_NUM_WORKERS",
    "DECODE_TP",
    "DECODE_PP_SIZE",
    "DECODE_DCP_SIZE",
    "DECODE_PCP_SIZE",
    "DECODE_EP",
    "DECODE_DP_ATTN",
    "DECODE_ADDITIONAL_SETTINGS",
    "RUN_EVAL",
    "EVAL_ONLY",
    "SCENARIO_TYPE",
    "SCENARIO_SUBDIR",
    "IS_AGENTIC",
    "KV_OFFLOADING",
    "KV_OFFLOAD_BACKEND",
    "KV_OFFLOAD_BACKEND_METADATA",
    "ROUTER_METADATA",
    "KV_P2P_TRANSFER",
    "TOTAL_CPU_DRAM_GB",
    "DURATION",
    "REQUIRE_POWER",
    "POWER_PRODUCER_SHA",
    "EVAL_LIMIT",
    "AIPERF_EXPERIMENTAL_FAST",
    "PYTHONDONTWRITEBYTECODE",
    "RESULT_DIR",
    "RESULT_FILENAME",
    "GPU_COUNT",
    "PREFILL_GPUS",
    "DECODE_GPUS",
    "LAUNCH_COMMAND",
    "CLEANUP_COMMAND",
    "LEG_ENV",
    "LEG_ROW",
    "LEG_FAMILY",
    "LEG_SWEEP",
    "LEG_AGENTX_FAST",
    "FORK_CACHE_DIR",
    "HF_TOKEN",
    "MODAL_TOKEN_ID",
    "MODAL_TOKEN_SECRET",
    "REPO_TOKEN",
];

fn is_name(k: &str) -> bool {
    let mut c = k.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

fn denied(k: &str) -> bool {
    DENIED.contains(&k) || DENIED_PREFIXES.iter().any(|p| k.starts_with(p))
}

/// Why one `KEY=VALUE` setting is refused (see [`parse_setting`]).
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    #[error("{0:?} is not KEY=VALUE")]
    NotKeyValue(String),
    #[error("{0:?} is not a plain variable name (letters, digits, _)")]
    NotAName(String),
    #[error("{0}: the value has a line break or NUL")]
    LineBreak(String),
    #[error("{0} may not be set")]
    Denied(String),
}

/// Why a leg environment or a worker's settings are refused: the input is
/// refused (exit 1); the message names the line or the entry.
#[derive(Debug, thiserror::Error)]
pub enum LegEnvError {
    #[error("leg-env: {bytes} bytes, above the {MAX_LEG_ENV_BYTES} bytes accepted")]
    TooLarge { bytes: usize },
    #[error("--default: {0}")]
    Default(#[source] SettingError),
    #[error("leg-env line {line}: {source}")]
    Line {
        line: usize,
        #[source]
        source: SettingError,
    },
    #[error(
        "leg-env line {line}: {key} is a benchmark template variable, set from the matrix row or an input"
    )]
    TemplateVar { line: usize, key: String },
    #[error("additional-settings #{index}: not JSON: {source}")]
    SettingsNotJson {
        index: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("additional-settings #{index}: expected a list, found {found}")]
    SettingsNotList { index: usize, found: Value },
    #[error("{config}: additional-settings #{index}: {source}")]
    SettingsEntry {
        config: String,
        index: usize,
        #[source]
        source: SettingError,
    },
    #[error(
        "{config}: additional-settings #{index}: {key} is set by the leg itself (the matrix row, an input or a secret): a worker setting may not override it"
    )]
    SettingsLegVar {
        config: String,
        index: usize,
        key: String,
    },
}

impl sweep_exit::Classify for LegEnvError {
    fn kind(&self) -> sweep_exit::Kind {
        sweep_exit::Kind::Rejected
    }
}

/// Parses one `KEY=VALUE` setting: a plain variable name, a value without
/// newlines (taken verbatim, never evaluated), and not a denied name.
pub fn parse_setting(kv: &str) -> Result<(String, String), SettingError> {
    let Some((k, v)) = kv.split_once('=') else {
        return Err(SettingError::NotKeyValue(kv.to_string()));
    };
    if !is_name(k) {
        return Err(SettingError::NotAName(k.to_string()));
    }
    if v.contains(['\n', '\r', '\0']) {
        return Err(SettingError::LineBreak(k.to_string()));
    }
    if denied(k) {
        return Err(SettingError::Denied(k.to_string()));
    }
    Ok((k.to_string(), v.to_string()))
}

/// Parses the caller's `leg-env` (one `KEY=VALUE` a line; blank lines and
/// lines starting with `#` skipped) over `defaults`; the template's own
/// variables are refused. Later lines win.
pub fn parse_leg_env(
    text: &str,
    defaults: &[String],
) -> Result<Vec<(String, String)>, LegEnvError> {
    if text.len() > MAX_LEG_ENV_BYTES {
        return Err(LegEnvError::TooLarge { bytes: text.len() });
    }
    let mut out: Vec<(String, String)> = Vec::new();
    let mut put = |k: String, v: String| {
        out.retain(|(x, _)| *x != k);
        out.push((k, v));
    };
    for d in defaults {
        let (k, v) = parse_setting(d).map_err(LegEnvError::Default)?;
        put(k, v);
    }
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_end_matches('\r');
        if t.trim().is_empty() || t.trim_start().starts_with('#') {
            continue;
        }
        let (k, v) = parse_setting(t).map_err(|source| LegEnvError::Line {
            line: n + 1,
            source,
        })?;
        if TEMPLATE_VARS.contains(&k.as_str()) {
            return Err(LegEnvError::TemplateVar {
                line: n + 1,
                key: k,
            });
        }
        put(k, v);
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    #[test]
    fn leg_env_accepts_plain_names_and_refuses_the_rest() {
        let v = parse_leg_env(
            "# site\nHF_HUB_CACHE=/mnt/hf_hub_cache/\n\nSALLOC_EXCLUDE=b300-005,b300-006\nRANDOM_RANGE_RATIO=0.9\n",
            &["RANDOM_RANGE_RATIO=0.8".into()],
        )
        .unwrap();
        assert_eq!(
            v,
            vec![
                ("HF_HUB_CACHE".into(), "/mnt/hf_hub_cache/".into()),
                ("SALLOC_EXCLUDE".into(), "b300-005,b300-006".into()),
                ("RANDOM_RANGE_RATIO".into(), "0.9".into()),
            ]
        );
        for (bad, why) in [
            ("TP=8", "template variable"),
            ("PATH=/x", "may not be set"),
            ("LD_PRELOAD=x.so", "may not be set"),
            ("GITHUB_TOKEN=x", "may not be set"),
            ("A B=1", "plain variable name"),
            ("novalue", "KEY=VALUE"),
        ] {
            let e = parse_leg_env(bad, &[]).unwrap_err().to_string();
            assert!(e.contains("line 1") && e.contains(why), "{bad}: {e}");
        }
    }
}
