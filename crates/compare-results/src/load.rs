//! Reading result files: a single JSON file or a directory tree of them
//! (every `*.json` as `sweep_model::tree::json_files` finds them, the walk
//! of `collect-results aggregate`), objects and (nested) arrays
//! flattened into rows. Rows of the agentic scenario are left out, as the
//! reference compare does.
//!
//! Every row, new or baseline, from a file, the benchmarks API or the
//! database, is checked where it enters ([`check_row`]): its counts
//! (concurrency, parallelism sizes, workers, GPUs) and every figure compare
//! reads (the metrics of every set, interactivity) must lie in the ranges
//! of `sweep_model::ranges`, so no sum, ratio or chart axis made from them
//! can be infinite. A row outside is an error naming its origin and key.

use std::path::Path;

use serde_json::{Map, Value};
use sweep_model::json_type::json_type_name;
use sweep_model::tree::json_files;

use crate::CompareError;
use crate::compare::Row;
use crate::key::{Origin, PointKey, Topology, key_from_agg, key_from_api};
use crate::{chart, metrics};
use sweep_model::ranges::{self, RangeError};

/// Parsed objects with where each came from.
pub type Objects = Vec<(Map<String, Value>, Origin)>;

/// Format of baseline rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BaselineFormat {
    /// Decide per row: API rows have `hardware` and a `metrics` object.
    Auto,
    /// `agg_bmk.json` rows.
    Agg,
    /// Rows of the public benchmarks API.
    Api,
}

/// Parses JSON text, turning errors into `path:line:column` messages; a
/// key twice in one object is one (`sweep_model::json_strict`).
pub fn parse_json(text: &str, path: &str) -> Result<Value, CompareError> {
    sweep_model::json_strict::parse_str(text).map_err(|e| CompareError::Json {
        path: path.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

fn read(path: &Path) -> Result<String, CompareError> {
    sweep_model::fsio::read_text(path, sweep_model::fsio::MAX_AGGREGATE_JSON_BYTES).map_err(
        |source| CompareError::Io {
            path: path.display().to_string(),
            source,
        },
    )
}

/// Every object in the file or directory at `path`, with its origin.
pub fn load_objects(path: &Path) -> Result<Objects, CompareError> {
    let meta = std::fs::metadata(path).map_err(|source| CompareError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let files = if meta.is_dir() {
        json_files(path)?.files
    } else {
        vec![path.to_path_buf()]
    };
    let mut out = Vec::new();
    for file in files {
        let name = file.display().to_string();
        let value = parse_json(&read(&file)?, &name)?;
        flatten_into(value, &name, &mut out)?;
    }
    Ok(out)
}

/// Flattens one parsed document: an object is one row, an array contributes
/// its elements (nested arrays too).
pub fn flatten_into(value: Value, path: &str, out: &mut Objects) -> Result<(), CompareError> {
    match value {
        Value::Object(m) => {
            out.push((
                m,
                Origin {
                    path: path.to_string(),
                    index: None,
                },
            ));
        }
        Value::Array(items) => {
            let mut index = 0;
            flatten_array(items, path, &mut index, out)?;
        }
        other => {
            return Err(CompareError::NotObject {
                origin: path.to_string(),
                found: json_type_name(&other).into(),
            });
        }
    }
    Ok(())
}

fn flatten_array(
    items: Vec<Value>,
    path: &str,
    index: &mut usize,
    out: &mut Objects,
) -> Result<(), CompareError> {
    for item in items {
        match item {
            Value::Array(inner) => flatten_array(inner, path, index, out)?,
            Value::Object(m) => {
                out.push((
                    m,
                    Origin {
                        path: path.to_string(),
                        index: Some(*index),
                    },
                ));
                *index += 1;
            }
            other => {
                return Err(CompareError::NotObject {
                    origin: format!("{path}[{index}]"),
                    found: json_type_name(&other).into(),
                });
            }
        }
    }
    Ok(())
}

fn is_agentic(m: &Map<String, Value>) -> bool {
    m.get("scenario_type").and_then(Value::as_str) == Some("agentic-coding")
}

fn is_api_row(m: &Map<String, Value>) -> bool {
    m.contains_key("hardware") && matches!(m.get("metrics"), Some(Value::Object(_)))
}

/// Where a row's fields come from, for the key names in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFormat {
    /// An `agg_bmk.json` row: every field at the top level.
    Agg,
    /// A benchmarks-API row: the key columns at the top level
    /// (`prefill_tp`), the figures and the PP/DCP/PCP sizes in `metrics`.
    Api,
    /// A database row: the key is the new row's, the figures are `metrics`.
    Db,
}

/// The counts of a point key with their names in `format`, and whether 0
/// is allowed (the decode side of a multi-node run without decode GPUs).
fn counts(key: &PointKey, format: RowFormat) -> Vec<(&'static str, i64, bool)> {
    let api = format == RowFormat::Api;
    let mut out = vec![("conc", key.conc, false)];
    match &key.topology {
        Topology::Single {
            tp,
            ep,
            pp,
            dcp_size,
            pcp_size,
            ..
        } => {
            let (tp_k, ep_k, pp_k, dcp_k, pcp_k) = if api {
                (
                    "prefill_tp",
                    "prefill_ep",
                    "metrics.pp",
                    "metrics.dcp_size",
                    "metrics.pcp_size",
                )
            } else {
                ("tp", "ep", "pp", "dcp_size", "pcp_size")
            };
            out.extend([
                (tp_k, *tp, false),
                (ep_k, *ep, false),
                (pp_k, *pp, false),
                (dcp_k, *dcp_size, false),
                (pcp_k, *pcp_size, false),
            ]);
        }
        Topology::Multi {
            prefill,
            decode,
            num_prefill_gpu,
            num_decode_gpu,
        } => {
            let no_decode = *num_decode_gpu == 0;
            out.extend([
                ("prefill_tp", prefill.tp, false),
                ("prefill_ep", prefill.ep, false),
                ("prefill_num_workers", prefill.num_workers, false),
                ("num_prefill_gpu", *num_prefill_gpu, false),
                ("decode_tp", decode.tp, no_decode),
                ("decode_ep", decode.ep, no_decode),
                ("decode_num_workers", decode.num_workers, no_decode),
                ("num_decode_gpu", *num_decode_gpu, true),
            ]);
        }
    }
    out
}

/// Every figure compare reads from a row: the metrics of every set and
/// the chart's interactivity and its fallback.
fn figure_keys() -> Vec<&'static str> {
    let mut keys = metrics::known_keys();
    for k in [chart::INTERACTIVITY_METRIC, chart::TPOT_FALLBACK] {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys
}

/// Checks one row where it enters: counts in `1..=MAX_COUNT` (0 allowed
/// for the decode side without decode GPUs) and every figure compare reads
/// finite, not negative and at most `MAX_FIGURE`. A figure given as a
/// string is read as compare reads it (a numeric string is a number; any
/// other string is "no value", as before).
///
/// # Errors
/// The first count or figure out of range, naming the row and the key
/// (`metrics.<key>` for an API row's figures).
pub fn check_row(row: &Row, format: RowFormat) -> Result<(), CompareError> {
    let err = |key: String, e: RangeError| CompareError::Row {
        origin: row.origin.to_string(),
        key,
        cause: e.to_string(),
    };
    if format != RowFormat::Db {
        for (key, n, zero_ok) in counts(&row.key, format) {
            let rule = if zero_ok {
                ranges::non_negative
            } else {
                ranges::positive
            };
            rule(n).map_err(|e| err(key.to_owned(), e))?;
        }
    }
    for key in figure_keys() {
        let x = match row.metrics.get(key) {
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        if let Some(x) = x {
            ranges::figure(x).map_err(|e| {
                let name = if format == RowFormat::Agg {
                    key.to_owned()
                } else {
                    format!("metrics.{key}")
                };
                err(name, e)
            })?;
        }
    }
    Ok(())
}

/// Rows of a new sweep (agg rows), each checked ([`check_row`]).
pub fn agg_rows(objects: Objects) -> Result<Vec<Row>, CompareError> {
    objects
        .into_iter()
        .filter(|(m, _)| !is_agentic(m))
        .map(|(m, origin)| {
            let row = Row {
                key: key_from_agg(&m, &origin)?,
                metrics: m,
                origin,
            };
            check_row(&row, RowFormat::Agg)?;
            Ok(row)
        })
        .collect()
}

/// Baseline rows in the given format, each checked ([`check_row`]). API
/// rows of another benchmark type than `single_turn` (and agentic rows
/// without ISL/OSL) are left out.
pub fn baseline_rows(objects: Objects, format: BaselineFormat) -> Result<Vec<Row>, CompareError> {
    let mut out = Vec::new();
    for (m, origin) in objects {
        let api = match format {
            BaselineFormat::Agg => false,
            BaselineFormat::Api => true,
            BaselineFormat::Auto => is_api_row(&m),
        };
        if api {
            if let Some(t) = m.get("benchmark_type").and_then(Value::as_str)
                && t != "single_turn"
            {
                continue;
            }
            if m.get("isl").is_none_or(Value::is_null) {
                continue;
            }
            let key = key_from_api(&m, &origin)?;
            let metrics = match m.get("metrics") {
                Some(Value::Object(mm)) => mm.clone(),
                _ => {
                    return Err(CompareError::Row {
                        origin: origin.to_string(),
                        key: "metrics".into(),
                        cause: "missing (an API row keeps its values in a 'metrics' object)".into(),
                    });
                }
            };
            let row = Row {
                key,
                metrics,
                origin,
            };
            check_row(&row, RowFormat::Api)?;
            out.push(row);
        } else if !is_agentic(&m) {
            let row = Row {
                key: key_from_agg(&m, &origin)?,
                metrics: m,
                origin,
            };
            check_row(&row, RowFormat::Agg)?;
            out.push(row);
        }
    }
    Ok(out)
}

/// Parses a benchmarks-API response body: a JSON array of rows, or an
/// `{"error": …}` object, which becomes an error naming `source_name`.
pub fn api_objects(text: &str, source_name: &str) -> Result<Objects, CompareError> {
    let value = parse_json(text, source_name)?;
    if let Value::Object(m) = &value
        && !m.contains_key("hardware")
    {
        let message = match m.get("error") {
            Some(Value::String(s)) => format!("the API answered with an error: {s}"),
            _ => "expected a JSON array of benchmark rows, found an object".into(),
        };
        return Err(CompareError::Api {
            source_name: source_name.to_string(),
            message,
        });
    }
    let mut out = Vec::new();
    flatten_into(value, source_name, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn directory_walk_is_files_first_then_subdirs_bytewise() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/deeper")).expect("mkdir");
        std::fs::create_dir_all(root.join("b")).expect("mkdir");
        for (p, n) in [
            ("z.json", 1),
            ("a/y.json", 3),
            ("a/x.json", 2),
            ("a/deeper/w.json", 4),
            ("b/v.json", 5),
        ] {
            std::fs::write(root.join(p), json!({"n": n}).to_string()).expect("write");
        }
        std::fs::write(root.join("notes.txt"), "x").expect("write");
        let rows = load_objects(root).expect("load");
        let ns: Vec<i64> = rows
            .iter()
            .map(|(m, _)| m["n"].as_i64().expect("n"))
            .collect();
        assert_eq!(ns, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn nested_arrays_are_flattened_and_scalars_rejected() {
        let mut out = Vec::new();
        flatten_into(json!([{"a": 1}, [{"a": 2}, {"a": 3}]]), "f.json", &mut out).expect("ok");
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].1.to_string(), "f.json[2]");
        let e = flatten_into(json!([{"a": 1}, 7]), "f.json", &mut Vec::new()).expect_err("7");
        assert_eq!(
            e.to_string(),
            "f.json[1]: expected a JSON object (a result row), found a number"
        );
    }

    #[test]
    fn api_error_object_is_reported() {
        let e = api_objects(r#"{"error":"Unknown model"}"#, "api.json").expect_err("error");
        assert_eq!(
            e.to_string(),
            "api.json: the API answered with an error: Unknown model"
        );
    }

    #[test]
    fn invalid_json_names_file_line_and_column() {
        let e = parse_json("[\n{\"a\": }", "x.json").expect_err("bad");
        assert!(e.to_string().starts_with("x.json:2:7: invalid JSON"), "{e}");
    }
}
