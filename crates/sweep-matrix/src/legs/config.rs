//! Reading the search-space config (`split`'s and `changelog-metadata`'s
//! input), and `generate-matrix changelog-metadata`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sweep_model::json_type::json_type_name;

use super::budgets::MAX_CONFIG_BYTES;

/// Why a search-space config could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ReadConfigError {
    /// The file is missing or cannot be read: the job cannot be done.
    #[error("{}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_CONFIG_BYTES`]: the input is refused.
    #[error("{}: {bytes} bytes, above the {MAX_CONFIG_BYTES} bytes accepted", path.display())]
    TooLarge { path: PathBuf, bytes: u64 },
    /// The file is not JSON: the input is refused.
    #[error("{}:{}: search-space config is not valid JSON: {source}", path.display(), source.line())]
    NotJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

/// An unreadable file is "could not do the job"; a file too large or not
/// JSON is the input refused.
impl sweep_exit::Classify for ReadConfigError {
    fn kind(&self) -> sweep_exit::Kind {
        match self {
            ReadConfigError::Unreadable { .. } => sweep_exit::Kind::Failed,
            ReadConfigError::TooLarge { .. } | ReadConfigError::NotJson { .. } => {
                sweep_exit::Kind::Rejected
            }
        }
    }
}

/// Reads a search-space config file (at most [`MAX_CONFIG_BYTES`]).
///
/// # Errors
/// The file cannot be read, is larger than the limit or is not JSON.
pub fn read_config(path: &Path) -> Result<Value, ReadConfigError> {
    let unreadable = |source| ReadConfigError::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(ReadConfigError::TooLarge {
            path: path.to_path_buf(),
            bytes: meta.len(),
        });
    }
    let text = sweep_model::fsio::read_text(path, MAX_CONFIG_BYTES).map_err(unreadable)?;
    serde_json::from_str(&text).map_err(|source| ReadConfigError::NotJson {
        path: path.to_path_buf(),
        source,
    })
}

/// The shapes `generate-matrix changelog-metadata` reads, for messages.
pub const METADATA_INPUT_SHAPE: &str = "a search-space config (a JSON object) \
or a matrix list (an array of job objects with 'runner' and 'framework')";

/// The input of [`changelog_metadata`] is neither a search-space config nor
/// a matrix list (`got` says what it is): the input is refused.
#[derive(Debug, thiserror::Error)]
#[error("expected {METADATA_INPUT_SHAPE}; {got}")]
pub struct MetadataError {
    /// What the input is instead ("got null", "its 'changelog_metadata' is …").
    pub got: String,
}

impl sweep_exit::Classify for MetadataError {
    fn kind(&self) -> sweep_exit::Kind {
        sweep_exit::Kind::Rejected
    }
}

/// The changelog metadata of a search-space config, as `generate-matrix
/// changelog-metadata` writes it: the config's `changelog_metadata` object,
/// or `{}` when it has none. A matrix list (the output of `full-sweep`,
/// `test-config` and `from-command`, every item a job object) carries no
/// changelog and gives `{}` too.
///
/// # Errors
/// Any other input (`null`, a number, `[1, 2]`, a `changelog_metadata` that
/// is not an object): "expected … ; got …", without the file name.
pub fn changelog_metadata(config: &Value) -> Result<Value, MetadataError> {
    let refuse = |got: String| Err(MetadataError { got });
    match config {
        Value::Object(m) => match m.get("changelog_metadata") {
            None => Ok(Value::Object(Map::new())),
            Some(meta @ Value::Object(_)) => Ok(meta.clone()),
            Some(other) => refuse(format!(
                "its 'changelog_metadata' is {}, not an object",
                json_type_name(other)
            )),
        },
        Value::Array(items) => {
            let is_job = |v: &Value| {
                v.as_object()
                    .is_some_and(|m| m.contains_key("runner") && m.contains_key("framework"))
            };
            match items.iter().position(|v| !is_job(v)) {
                None => Ok(Value::Object(Map::new())),
                Some(i) => refuse(format!(
                    "got an array whose item [{i}] is not a job object ({})",
                    json_type_name(&items[i])
                )),
            }
        }
        other => refuse(format!("got {}", json_type_name(other))),
    }
}
