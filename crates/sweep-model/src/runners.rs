//! Typed model of `configs/runners.yaml` (spec matrix.md §6): runner labels
//! with their node names, and optional per-label hardware records.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::Value;

use crate::config::{ConfigError, ConfigErrorKind};
use crate::yaml::{self, PathSeg, YamlDoc};

/// Hardware record of a runner label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hardware {
    /// `available-cpu-dram-mib`.
    pub available_cpu_dram_mib: i64,
    /// `gpus-per-node`.
    pub gpus_per_node: i64,
}

/// The validated runner file.
#[derive(Debug, Clone, Default)]
pub struct Runners {
    /// Label → node names, in file order.
    pub labels: IndexMap<String, Vec<String>>,
    /// Label → hardware, in file order.
    pub hardware: IndexMap<String, Hardware>,
    /// The file it came from.
    pub file: PathBuf,
}

impl Runners {
    /// Reads and validates a runner file.
    ///
    /// # Errors
    /// Missing file, bad YAML or a schema violation (message names the label or field).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        if !path.exists() {
            return Err(ConfigError::file(
                path,
                None,
                format!("runner config file '{}' does not exist", path.display()),
            )
            .unreadable());
        }
        let doc = yaml::load_file(path)?;
        Self::from_doc(path, &doc)
    }

    /// Validates an already-parsed runner document; `path` is for messages.
    ///
    /// # Errors
    /// As [`Runners::load`].
    pub fn from_doc(path: &Path, doc: &YamlDoc) -> Result<Self, ConfigError> {
        let schema = Schema { path, doc };
        let Some(Value::Object(labels)) = doc.value().get("labels") else {
            return Err(schema.err(
                &[key("labels")],
                "Runner config must define a labels mapping".into(),
            ));
        };
        let mut out = Runners {
            file: path.to_path_buf(),
            ..Runners::default()
        };
        for (label, nodes) in labels {
            out.labels
                .insert(label.clone(), schema.node_names(label, nodes)?);
        }
        if let Value::Object(top) = doc.value() {
            for k in top.keys() {
                if k != "labels" && k != "hardware" {
                    return Err(schema.err(
                        &[key(k)],
                        format!(
                            "extra field '{k}' is not permitted in the runner config (allowed: labels, hardware)"
                        ),
                    ));
                }
            }
        }
        match doc.value().get("hardware") {
            None | Some(Value::Null) => {}
            Some(Value::Object(hw)) => {
                for (label, rec) in hw {
                    out.hardware
                        .insert(label.clone(), schema.hardware(label, rec)?);
                }
            }
            Some(_) => {
                return Err(schema.err(&[key("hardware")], "'hardware' must be a mapping".into()));
            }
        }
        Ok(out)
    }

    /// Nodes of a label (empty when the label is unknown).
    #[must_use]
    pub fn nodes(&self, label: &str) -> &[String] {
        self.labels.get(label).map_or(&[], Vec::as_slice)
    }
}

/// A mapping-key path segment.
fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// The runner document being validated, for schema errors that name the
/// file, the path and its line.
struct Schema<'a> {
    path: &'a Path,
    doc: &'a YamlDoc,
}

impl Schema<'_> {
    fn err(&self, p: &[PathSeg], cause: String) -> ConfigError {
        ConfigError {
            file: self.path.to_path_buf(),
            key: None,
            path: yaml::dotted(p),
            line: self.doc.line_of(p),
            cause,
            kind: ConfigErrorKind::Invalid,
        }
    }

    /// `labels.<label>`: a non-empty list of node names.
    fn node_names(&self, label: &str, nodes: &Value) -> Result<Vec<String>, ConfigError> {
        let p = [key("labels"), key(label)];
        let Value::Array(items) = nodes else {
            return Err(self.err(
                &p,
                format!("Runner config entry '{label}' must be a list of node names"),
            ));
        };
        let mut names = Vec::with_capacity(items.len());
        for it in items {
            match it.as_str() {
                Some(s) => names.push(s.to_string()),
                None => {
                    return Err(self.err(
                        &p,
                        format!("Runner config entry '{label}' must contain only strings"),
                    ));
                }
            }
        }
        if names.is_empty() {
            return Err(self.err(
                &p,
                format!("Runner config entry '{label}' cannot be an empty list"),
            ));
        }
        Ok(names)
    }

    /// `hardware.<label>`: a mapping of exactly the two positive integers.
    fn hardware(&self, label: &str, rec: &Value) -> Result<Hardware, ConfigError> {
        let p = [key("hardware"), key(label)];
        let Value::Object(m) = rec else {
            return Err(self.err(
                &p,
                format!("hardware record for '{label}' must be a mapping"),
            ));
        };
        for k in m.keys() {
            if k != "available-cpu-dram-mib" && k != "gpus-per-node" {
                return Err(self.err(
                    &[key("hardware"), key(label), key(k)],
                    format!("extra field '{k}' is not permitted in hardware record '{label}'"),
                ));
            }
        }
        let field = |name: &str| -> Result<i64, ConfigError> {
            let fp = [key("hardware"), key(label), key(name)];
            match m.get(name).and_then(Value::as_i64) {
                Some(n) if n > 0 => Ok(n),
                Some(n) => Err(self.err(
                    &fp,
                    format!("'{name}' of '{label}' must be greater than 0, got {n}"),
                )),
                None => Err(self.err(
                    &fp,
                    format!("'{name}' of '{label}' is required and must be an integer"),
                )),
            }
        };
        Ok(Hardware {
            available_cpu_dram_mib: field("available-cpu-dram-mib")?,
            gpus_per_node: field("gpus-per-node")?,
        })
    }
}

/// The cluster or runner group of a runner name: lower-cased, a trailing
/// `_<digits>` (the node) removed (`h100-nv_02` ran on `h100-nv`). What
/// compare-results flags as other hardware and what main's history keeps
/// one series per.
#[must_use]
pub fn cluster_of(runner: &str) -> String {
    let s = runner.trim().to_lowercase();
    match s.rsplit_once('_') {
        Some((head, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => {
            head.to_string()
        }
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(t: &str) -> Result<Runners, ConfigError> {
        Runners::from_doc(Path::new("runners.yaml"), &yaml::parse_str(t).unwrap())
    }

    #[test]
    fn valid_file() {
        let r = parse("labels:\n  b200: [b200-a, b200-b]\nhardware:\n  b200:\n    available-cpu-dram-mib: 2_063_837\n    gpus-per-node: 8\n").unwrap();
        assert_eq!(r.nodes("b200"), ["b200-a", "b200-b"]);
        assert!(r.nodes("x").is_empty());
        assert_eq!(r.hardware["b200"].available_cpu_dram_mib, 2_063_837);
    }

    #[test]
    fn errors_name_label_and_line() {
        let e = parse("labels:\n  h100: []\n").unwrap_err();
        assert!(e.cause.contains("h100") && e.line == Some(2), "{e}");
        let e = parse("labels:\n  h100: [1]\n").unwrap_err();
        assert!(e.cause.contains("only strings"), "{e}");
        let e = parse("nolabels: 1\n").unwrap_err();
        assert!(e.cause.contains("labels mapping"), "{e}");
        let e = parse("labels: {a: [x]}\nextra: 1\n").unwrap_err();
        assert!(e.cause.contains("extra"), "{e}");
        let e = parse(
            "labels: {a: [x]}\nhardware:\n  a: {gpus-per-node: 0, available-cpu-dram-mib: 1}\n",
        )
        .unwrap_err();
        assert!(e.cause.contains("gpus-per-node"), "{e}");
    }
}
