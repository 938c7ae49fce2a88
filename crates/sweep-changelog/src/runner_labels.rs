//! Runner labels the generated matrix uses but `configs/runners.yaml` does
//! not define (issue #38 item 4). The reference generates such legs without
//! a word, and on GitHub they wait for a runner that never comes; sweepkit
//! keeps generating them (drop-in) but names them: a warning from the gate,
//! an error under `--strict` and in the dry run.

use crate::git::Repo;
use crate::masters::RawMasters;
use crate::pipeline::{self, Rejection};
use serde_json::Value;
use sweep_matrix::RUNNER_CONFIG;
use sweep_model::config::ConfigEntry;
use sweep_model::runners::Runners;

/// One label the matrix uses that `runners.yaml` lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRunner {
    /// The label.
    pub label: String,
    /// How many legs (matrix rows) run on it.
    pub legs: usize,
    /// `file:line: config 'key'` of the selected configs that name it.
    pub configs: Vec<String>,
    /// The closest defined label, if it looks like a typo.
    pub suggestion: Option<String>,
    /// The labels `runners.yaml` defines.
    pub defined: Vec<String>,
    /// File and line of the first such config (for an annotation).
    pub at: Option<(String, Option<usize>)>,
}

impl UnknownRunner {
    /// `configs/x.yaml:12: config 'k': field 'runner': 'b2000' is not a label
    /// in configs/runners.yaml (did you mean 'b200'?): its 9 legs would wait
    /// for a runner that never comes`.
    #[must_use]
    pub fn message(&self) -> String {
        let hint = match &self.suggestion {
            Some(s) => format!("did you mean '{s}'?"),
            None => format!("labels: {}", self.defined.join(", ")),
        };
        let legs = if self.legs == 1 {
            "its 1 leg would wait".to_string()
        } else {
            format!("its {} legs would wait", self.legs)
        };
        let configs = if self.configs.is_empty() {
            "the matrix".to_string()
        } else {
            self.configs.join(", ")
        };
        format!(
            "{configs}: field 'runner': '{}' is not a label in {RUNNER_CONFIG} ({hint}): {legs} \
             for a runner that never comes; add the label to {RUNNER_CONFIG} or fix the runner",
            self.label
        )
    }
}

/// Every object with a string `runner` under the matrix's row lists (not
/// `changelog_metadata`), counted per label in first-seen order.
fn legs_per_label(matrix: &Value) -> Vec<(String, usize)> {
    fn walk(v: &Value, out: &mut Vec<(String, usize)>) {
        match v {
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("runner") {
                    match out.iter_mut().find(|(l, _)| l == r) {
                        Some((_, n)) => *n += 1,
                        None => out.push((r.clone(), 1)),
                    }
                } else {
                    m.values().for_each(|x| walk(x, out));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Value::Object(m) = matrix {
        for (k, v) in m {
            if k != "changelog_metadata" {
                walk(v, &mut out);
            }
        }
    }
    out
}

/// The labels of `matrix` that the working tree's `runners.yaml` does not
/// define, with the selected configs (`entries`) that name them.
pub fn unknown(runners: &Runners, entries: &[ConfigEntry], matrix: &Value) -> Vec<UnknownRunner> {
    let defined: Vec<String> = runners.labels.keys().cloned().collect();
    legs_per_label(matrix)
        .into_iter()
        .filter(|(label, _)| {
            !runners.labels.contains_key(label)
                && !runners.labels.values().any(|nodes| nodes.contains(label))
        })
        .map(|(label, legs)| UnknownRunner {
            at: entries
                .iter()
                .find(|e| e.runner == label)
                .map(|e| (e.file.display().to_string(), e.line)),
            configs: entries
                .iter()
                .filter(|e| e.runner == label)
                .map(ConfigEntry::location)
                .collect(),
            suggestion: sweep_model::suggest::closest(&label, defined.iter().map(String::as_str))
                .map(str::to_string),
            defined: defined.clone(),
            label,
            legs,
        })
        .collect()
}

/// [`unknown`] for a repository's working tree: its `runners.yaml` and the
/// master configs the matrix's changelog entries select.
pub fn check(repo: &Repo, matrix: &Value) -> Result<Vec<UnknownRunner>, Rejection> {
    if legs_per_label(matrix).is_empty() {
        return Ok(Vec::new());
    }
    let path = repo.dir().join(RUNNER_CONFIG);
    let runners = Runners::load(&path).map_err(|e| Rejection::unreadable(e.to_string()))?;
    let masters = pipeline::load_head_masters(repo)?;
    let selected = selected_configs(matrix, &masters.entries);
    let owned: Vec<ConfigEntry> = selected.into_iter().cloned().collect();
    Ok(unknown(&runners, &owned, matrix))
}

/// The master configs the change's entries select (`changelog_metadata`'s
/// config keys and wildcards, resolved as the pipeline resolves them).
pub fn selected_configs<'a>(matrix: &Value, entries: &'a [ConfigEntry]) -> Vec<&'a ConfigEntry> {
    let raw = RawMasters::new(entries.iter().map(|e| (e.key.as_str(), &e.raw)));
    let mut keys: Vec<String> = Vec::new();
    let listed = matrix
        .pointer("/changelog_metadata/entries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for entry in listed {
        let patterns: Vec<String> = entry
            .get("config-keys")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect();
        // The gate accepted the change, so every pattern resolves.
        for k in pipeline::resolve_keys(&patterns, &raw).unwrap_or_default() {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    entries.iter().filter(|e| keys.contains(&e.key)).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_are_counted_per_leg_outside_the_metadata() {
        let m = json!({
            "single_node": {"8k1k": [{"runner": "b2000"}, {"runner": "b2000"}, {"runner": "h200"}]},
            "evals": [{"runner": "b2000", "prefill": {"ep": 1}}],
            "changelog_metadata": {"entries": [{"runner": "x"}]},
        });
        assert_eq!(
            legs_per_label(&m),
            vec![("b2000".to_string(), 3), ("h200".to_string(), 1)]
        );
    }

    #[test]
    fn the_message_names_the_config_the_label_and_the_fix() {
        let u = UnknownRunner {
            label: "b2000".into(),
            legs: 9,
            configs: vec!["configs/nvidia-master.yaml:1235: config 'k'".into()],
            suggestion: Some("b200".into()),
            defined: vec!["b200".into(), "h200".into()],
            at: None,
        };
        assert_eq!(
            u.message(),
            "configs/nvidia-master.yaml:1235: config 'k': field 'runner': 'b2000' is not a label \
             in configs/runners.yaml (did you mean 'b200'?): its 9 legs would wait for a runner \
             that never comes; add the label to configs/runners.yaml or fix the runner"
        );
    }
}
