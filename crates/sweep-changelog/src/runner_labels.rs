//! Runner labels the generated matrix uses but `configs/runners.yaml` does
//! not define (issue #38 item 4). The reference generates such legs without
//! a word, and on GitHub they wait for a runner that never comes; sweepkit
//! keeps generating them (drop-in) but names them: a warning from the gate,
//! an error under `--strict` and in the dry run.

use crate::git::Repo;
use crate::masters::RawMasters;
use crate::pipeline::{self, Rejection};
use sweep_matrix::RUNNER_CONFIG;
use sweep_matrix::assemble::ChangelogMatrix;
use sweep_model::config::ConfigEntry;
use sweep_model::rows::MatrixRow;
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

/// The runner labels of the matrix's rows, counted per label in first-seen
/// order.
fn legs_per_label(matrix: &ChangelogMatrix) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for r in matrix.rows().map(MatrixRow::runner) {
        match out.iter_mut().find(|(l, _)| l == r) {
            Some((_, n)) => *n += 1,
            None => out.push((r.to_string(), 1)),
        }
    }
    out
}

/// The labels of `matrix` that the working tree's `runners.yaml` does not
/// define, with the selected configs (`entries`) that name them.
pub fn unknown(
    runners: &Runners,
    entries: &[ConfigEntry],
    matrix: &ChangelogMatrix,
) -> Vec<UnknownRunner> {
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
pub fn check(repo: &Repo, matrix: &ChangelogMatrix) -> Result<Vec<UnknownRunner>, Rejection> {
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
pub fn selected_configs<'a>(
    matrix: &ChangelogMatrix,
    entries: &'a [ConfigEntry],
) -> Vec<&'a ConfigEntry> {
    let raw = RawMasters::new(entries.iter().map(|e| (e.key.as_str(), &e.raw)));
    let mut keys: Vec<String> = Vec::new();
    for entry in &matrix.changelog_metadata.entries {
        let patterns = &entry.config_keys;
        // The gate accepted the change, so every pattern resolves.
        for k in pipeline::resolve_keys(patterns, &raw).unwrap_or_default() {
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

    fn row(runner: &str, isl: i64) -> MatrixRow {
        let v = json!({"image": "i", "model": "m", "model-prefix": "p", "precision": "fp8",
            "framework": "f", "spec-decoding": "none", "runner": runner, "isl": isl,
            "osl": 1024, "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1,
            "dp-attn": false, "conc": 4, "max-model-len": 2304, "exp-name": "e",
            "disagg": false, "run-eval": false});
        MatrixRow::from_map(v.as_object().unwrap().clone()).unwrap()
    }

    #[test]
    fn labels_are_counted_per_leg_in_output_order() {
        let metadata = sweep_matrix::assemble::ChangelogMetadata {
            base_ref: String::new(),
            head_ref: String::new(),
            entries: Vec::new(),
            generate_command: None,
        };
        let m = sweep_matrix::assemble::assemble(
            vec![row("b2000", 8192), row("b2000", 1024), row("h200", 8192)],
            vec![row("b2000", 1024)],
            metadata,
        );
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
