//! `generate-matrix worker-settings`: a multi-node row's `additional-settings`
//! as checked `KEY=VALUE` lines, exported by the launch step unevaluated.

use serde_json::Value;

use super::env::{LegEnvError, TEMPLATE_VARS, parse_setting};

/// Names a credential has by convention: the leg's secrets and any other
/// token stay out of reach of config-written settings.
const CREDENTIAL_SUFFIXES: [&str; 2] = ["_TOKEN", "_SECRET"];

/// A variable the leg sets itself ([`TEMPLATE_VARS`]) or a credential name:
/// what a worker's `additional-settings` may not set.
pub fn is_leg_var(k: &str) -> bool {
    TEMPLATE_VARS.contains(&k) || CREDENTIAL_SUFFIXES.iter().any(|s| k.ends_with(s))
}

/// The settings of each JSON list, in order, checked by [`parse_setting`];
/// a setting of a variable the leg sets itself ([`is_leg_var`]) is refused.
/// `config` names the row in messages (its `exp-name`).
pub fn worker_settings(
    config: &str,
    lists: &[String],
) -> Result<Vec<(String, String)>, LegEnvError> {
    let mut out = Vec::new();
    for (i, text) in lists.iter().enumerate() {
        let v: Value = serde_json::from_str(if text.trim().is_empty() { "null" } else { text })
            .map_err(|source| LegEnvError::SettingsNotJson {
                index: i + 1,
                source,
            })?;
        let items = match v {
            Value::Null => Vec::new(),
            Value::Array(a) => a,
            found => {
                return Err(LegEnvError::SettingsNotList {
                    index: i + 1,
                    found,
                });
            }
        };
        for item in items {
            let s = match item {
                Value::String(s) => s,
                other => other.to_string(),
            };
            let (k, v) = parse_setting(&s).map_err(|source| LegEnvError::SettingsEntry {
                config: config.to_string(),
                index: i + 1,
                source,
            })?;
            if is_leg_var(&k) {
                return Err(LegEnvError::SettingsLegVar {
                    config: config.to_string(),
                    index: i + 1,
                    key: k,
                });
            }
            out.push((k, v));
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    #[test]
    fn worker_settings_are_plain_and_unevaluated() {
        let v = worker_settings(
            "dsr1_1k1k",
            &[
                r#"["MEM=0.8","X=$(touch pwned)"]"#.into(),
                "null".into(),
                r#"[]"#.into(),
            ],
        )
        .unwrap();
        assert_eq!(v[1], ("X".into(), "$(touch pwned)".into()));
        assert!(worker_settings("c", &[r#"["BASH_ENV=./x"]"#.into()]).is_err());
        assert!(worker_settings("c", &[r#"["PATH=1\ntouch"]"#.into()]).is_err());
        assert!(worker_settings("c", &[r#"{"a":1}"#.into()]).is_err());
    }

    #[test]
    fn worker_settings_may_not_set_what_the_leg_sets_or_a_credential() {
        for key in [
            "RESULT_FILENAME",
            "IMAGE",
            "HF_TOKEN",
            "GH_TOKEN",
            "MODAL_TOKEN_SECRET",
            "TP",
        ] {
            let lists = [
                r#"["CONFIG_FILE=a.yaml"]"#.into(),
                format!(r#"["{key}=x"]"#),
            ];
            let e = worker_settings("dsr1_1k1k", &lists)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("dsr1_1k1k: additional-settings #2: ")
                    && e.contains(&format!("{key} is set by the leg itself")),
                "{key}: {e}"
            );
        }
        // The settings real configs use stay accepted.
        let ok = worker_settings(
            "c",
            &[
                r#"["CONFIG_FILE=x","PREFILL_NODES=2","DECODE_MTP_SIZE=1","PREFILL_IMAGE=i"]"#
                    .into(),
            ],
        )
        .unwrap();
        assert_eq!(ok.len(), 4);
    }
}
