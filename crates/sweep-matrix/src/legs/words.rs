//! The manual entry (`generate-matrix from-command`): its command line
//! split into words and its rows bucketed like the changelog path's output.

use crate::assemble::{ChangelogMatrix, ChangelogMetadata};
use sweep_model::rows::MatrixRow;

/// Buckets generator rows the way the changelog path's output is bucketed:
/// rows with `eval-only: true` go to the eval lists, the rest by kind and
/// sequence length; benchmark rows get their recipe fingerprint.
#[must_use]
pub fn bucket_rows(rows: Vec<MatrixRow>, command_line: &str) -> ChangelogMatrix {
    let (mut bench, evals): (Vec<MatrixRow>, Vec<MatrixRow>) =
        rows.into_iter().partition(|r| r.eval_only() != Some(true));
    for row in &mut bench {
        let fp = crate::assemble::recipe_fingerprint(row);
        row.set_recipe_fingerprint(fp);
    }
    let meta = ChangelogMetadata {
        base_ref: String::new(),
        head_ref: String::new(),
        entries: Vec::new(),
        generate_command: Some(command_line.to_string()),
    };
    crate::assemble::assemble(bench, evals, meta)
}

/// Splits a manual-entry command line into arguments (POSIX shell quoting
/// rules, nothing evaluated) and checks its subcommand.
pub fn command_words(line: &str) -> Result<Vec<String>, CommandLineError> {
    let words =
        shlex::split(line).ok_or_else(|| CommandLineError::Unterminated(line.to_string()))?;
    match words.first().map(String::as_str) {
        Some("full-sweep" | "test-config") => Ok(words),
        Some(other) => Err(CommandLineError::Subcommand(other.to_string())),
        None => Err(CommandLineError::Empty),
    }
}

/// Why a manual-entry command line is refused before it is parsed: a
/// usage error of the manual entry (exit 2, as clap's own).
#[derive(Debug, thiserror::Error)]
pub enum CommandLineError {
    #[error("command line {0:?} has an unterminated quote or escape")]
    Unterminated(String),
    #[error("command line starts with {0:?}: only `full-sweep …` and `test-config …` are accepted")]
    Subcommand(String),
    #[error("command line is empty: give `full-sweep …` or `test-config …`")]
    Empty,
}

impl sweep_exit::Classify for CommandLineError {
    fn kind(&self) -> sweep_exit::Kind {
        sweep_exit::Kind::Failed
    }
}

/// The master configs a command line without `--config-files` reads (the
/// changelog path's fixed pair).
pub fn default_config_files() -> Vec<String> {
    crate::MASTER_CONFIGS
        .iter()
        .map(|s| s.to_string())
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    #[test]
    fn command_line_is_split_by_quoting_rules_and_checked() {
        assert_eq!(
            command_words("test-config --config-keys 'dsr1-*' --conc 4 8").unwrap(),
            ["test-config", "--config-keys", "dsr1-*", "--conc", "4", "8"]
        );
        assert!(command_words("changelog --base-ref x").is_err());
        assert!(command_words("full-sweep 'open").is_err());
        assert!(command_words("  ").is_err());
        // `;` and `$(…)` are just characters of a word.
        let w = command_words("test-config --config-keys a;rm $(x)").unwrap();
        assert_eq!(w[2], "a;rm");
    }
}
