//! The one-line summaries (stderr) and the short `$GITHUB_STEP_SUMMARY`
//! tables that `aggregate` and `evals` add beyond the reference.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::aggregate::AggregateReport;
use crate::evals::EvalsReport;

fn file_name(p: &std::path::Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// E.g. `aggregate: read 12 files, wrote 12 rows to agg_bmk.json; skipped 1 (1 not *.json)`.
pub fn aggregate_line(r: &AggregateReport, results_dir: &str) -> String {
    if r.dir_missing {
        return format!(
            "aggregate: {results_dir} is not a directory (or does not exist); wrote 0 rows to {}",
            file_name(&r.output)
        );
    }
    let skipped = r.ignored_files + r.skipped_symlink_dirs;
    let mut why = Vec::new();
    if r.ignored_files > 0 {
        why.push(format!("{} not *.json", r.ignored_files));
    }
    if r.skipped_symlink_dirs > 0 {
        why.push(plural(
            r.skipped_symlink_dirs,
            "symlinked directory",
            "symlinked directories",
        ));
    }
    let tail = if skipped == 0 {
        "skipped 0".to_owned()
    } else {
        format!("skipped {skipped} ({})", why.join(", "))
    };
    format!(
        "aggregate: read {}, wrote {} to {}; {tail}",
        plural(r.files_read, "file", "files"),
        plural(r.files_read, "row", "rows"),
        file_name(&r.output)
    )
}

/// (model prefix, hw, framework, precision, kind) of an aggregate row.
pub type GroupKey = (String, String, String, String, &'static str);

/// What the step summary needs of one element of the aggregate: the group
/// of a result object and whether its power figures are valid; `None` for
/// an element that is not an object.
pub type ElementFacts = Option<(GroupKey, bool)>;

/// The fields of a result object that [`ElementFacts`] are made of.
const FACT_FIELDS: [&str; 7] = [
    "scenario_type",
    "is_multinode",
    "infmax_model_prefix",
    "hw",
    "framework",
    "precision",
    "power_valid",
];

/// The facts of a result object, given its field lookup.
fn object_facts<'v>(get: impl Fn(&str) -> Option<&'v Value>) -> (GroupKey, bool) {
    let str_field = |k: &str| get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
    let kind = if get("scenario_type").and_then(Value::as_str) == Some("agentic-coding") {
        "agentic"
    } else if get("is_multinode").and_then(Value::as_bool) == Some(true) {
        "multi-node"
    } else {
        "single-node"
    };
    let key = (
        str_field("infmax_model_prefix"),
        str_field("hw"),
        str_field("framework"),
        str_field("precision"),
        kind,
    );
    (key, get("power_valid").and_then(Value::as_i64) == Some(1))
}

/// The facts of each element one result file adds to the aggregate (an
/// array file adds its elements). The text is parsed without building its
/// value: only the fields in [`FACT_FIELDS`] are kept (the last of a
/// repeated key, as when the value is loaded), everything else is skipped.
///
/// Takes text (already checked to be UTF-8), so that serde_json does not
/// check each string again.
///
/// # Errors
/// `text` is not valid JSON.
pub fn file_facts(text: &str) -> serde_json::Result<Vec<ElementFacts>> {
    use serde::de::DeserializeSeed as _;
    let mut de = serde_json::Deserializer::from_str(text);
    let facts = TopLevel.deserialize(&mut de)?;
    de.end()?;
    Ok(facts)
}

mod facts_de {
    //! The visitors behind [`super::file_facts`].

    use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde_json::Value;

    use super::{ElementFacts, FACT_FIELDS, object_facts};

    /// A file's value: an array gives one fact per element, anything else one.
    pub(super) struct TopLevel;
    /// One element: an object gives its facts, anything else `None`.
    struct Element;
    /// An object key: its index in [`FACT_FIELDS`], if it is one of them.
    struct Key;

    /// Scalars (and, for [`Element`], arrays) are not result objects.
    macro_rules! not_an_object {
        ($out:expr) => {
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok($out)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok($out)
            }
        };
    }

    fn facts_of_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<ElementFacts, A::Error> {
        let mut fields: [Option<Value>; FACT_FIELDS.len()] = Default::default();
        while let Some(k) = map.next_key_seed(Key)? {
            match k {
                Some(i) => fields[i] = Some(map.next_value()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(object_facts(|k| {
            FACT_FIELDS
                .iter()
                .position(|f| *f == k)
                .and_then(|i| fields[i].as_ref())
        })))
    }

    impl<'de> DeserializeSeed<'de> for TopLevel {
        type Value = Vec<ElementFacts>;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for TopLevel {
        type Value = Vec<ElementFacts>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        not_an_object!(vec![None]);
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            facts_of_map(map).map(|f| vec![f])
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(f) = seq.next_element_seed(Element)? {
                out.push(f);
            }
            Ok(out)
        }
    }

    impl<'de> DeserializeSeed<'de> for Element {
        type Value = ElementFacts;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Element {
        type Value = ElementFacts;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        not_an_object!(None);
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            facts_of_map(map)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }

    impl<'de> DeserializeSeed<'de> for Key {
        type Value = Option<usize>;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_str(self)
        }
    }

    impl Visitor<'_> for Key {
        type Value = Option<usize>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object key")
        }
        fn visit_str<E: de::Error>(self, k: &str) -> Result<Self::Value, E> {
            Ok(FACT_FIELDS.iter().position(|f| *f == k))
        }
    }
}

use facts_de::TopLevel;

/// Markdown for the step summary: counts, then rows per configuration.
pub fn aggregate_markdown(r: &AggregateReport, results_dir: &str) -> String {
    let mut groups: BTreeMap<GroupKey, (usize, usize)> = BTreeMap::new();
    let mut other = 0usize;
    for facts in &r.elements {
        let Some((key, power_valid)) = facts else {
            other += 1;
            continue;
        };
        let e = groups.entry(key.clone()).or_default();
        e.0 += 1;
        e.1 += usize::from(*power_valid);
    }
    let mut md = String::from("### collect-results aggregate\n\n");
    md.push_str("| Results dir | Files read | Rows written | Skipped |\n|---|---:|---:|---:|\n");
    let _ = writeln!(
        md,
        "| `{results_dir}` | {} | {} | {} |",
        r.files_read,
        r.files_read,
        r.ignored_files + r.skipped_symlink_dirs
    );
    if !groups.is_empty() {
        md.push_str("\n| Model | Hardware | Framework | Precision | Kind | Rows | Power valid |\n");
        md.push_str("|---|---|---|---|---|---:|---:|\n");
        for (i, ((m, hw, fw, prec, kind), (n, pv))) in groups.iter().enumerate() {
            if i == 50 {
                let _ = writeln!(md, "\n_{} more groups not shown._", groups.len() - 50);
                break;
            }
            let _ = writeln!(md, "| {m} | {hw} | {fw} | {prec} | {kind} | {n} | {pv} |");
        }
    }
    if other > 0 {
        let _ = writeln!(md, "\n{other} element(s) are not result objects.");
    }
    md
}

fn skip_text(r: &EvalsReport) -> (usize, String) {
    let s = &r.skipped;
    let parts: Vec<String> = [
        (s.unparseable, "unparseable"),
        (s.not_lm_eval, "not lm-eval results"),
        (s.superseded, "superseded by a newer file"),
        (s.batch_filtered, "batched without a completed _concN"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, why)| format!("{n} {why}"))
    .collect();
    let total = s.unparseable + s.not_lm_eval + s.superseded + s.batch_filtered;
    (total, parts.join(", "))
}

/// E.g. `evals: 3 eval sets, read 3 result files, wrote 4 rows to agg_eval_all.json; skipped 2 files (2 not lm-eval results)`.
pub fn evals_line(r: &EvalsReport) -> String {
    let (total, why) = skip_text(r);
    let tail = if total == 0 {
        "skipped 0 files".to_owned()
    } else {
        format!("skipped {} ({why})", plural(total, "file", "files"))
    };
    format!(
        "evals: {}, read {}, wrote {} to {}; {tail}",
        plural(r.sets, "eval set", "eval sets"),
        plural(r.files_used, "result file", "result files"),
        plural(r.rows.len(), "row", "rows"),
        file_name(&r.output)
    )
}

/// Markdown counts table for the step summary.
pub fn evals_markdown(r: &EvalsReport, root: &str) -> String {
    let (total, why) = skip_text(r);
    let mut md = String::from("### collect-results evals\n\n");
    md.push_str(
        "| Root | Eval sets | Result files | Rows written | Skipped |\n|---|---:|---:|---:|---|\n",
    );
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(" ({why})")
    };
    let _ = writeln!(
        md,
        "| `{root}` | {} | {} | {} | {total}{why} |",
        r.sets,
        r.files_used,
        r.rows.len()
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn aggregate_line_names_counts_and_reasons() {
        let r = AggregateReport {
            files_read: 2,
            ignored_files: 1,
            elements: vec![None, None],
            output: "out/agg_bmk.json".into(),
            ..AggregateReport::default()
        };
        assert_eq!(
            aggregate_line(&r, "results"),
            "aggregate: read 2 files, wrote 2 rows to agg_bmk.json; skipped 1 (1 not *.json)"
        );
    }

    #[test]
    fn aggregate_markdown_groups_rows() {
        let row = json!({"infmax_model_prefix": "dsr1", "hw": "b200", "framework": "sglang",
                         "precision": "fp8", "is_multinode": false, "power_valid": 0});
        let mut elements = Vec::new();
        for v in [row.clone(), json!([row]), json!(3)] {
            elements.extend(file_facts(&v.to_string()).expect("facts"));
        }
        let r = AggregateReport {
            files_read: 2,
            elements,
            output: "agg_bmk.json".into(),
            ..AggregateReport::default()
        };
        let md = aggregate_markdown(&r, "results/");
        assert!(
            md.contains("| dsr1 | b200 | sglang | fp8 | single-node | 2 | 0 |"),
            "{md}"
        );
        assert!(md.contains("1 element(s) are not result objects"), "{md}");
    }

    /// The facts of a loaded value, for comparison.
    fn value_facts(v: &Value) -> ElementFacts {
        v.as_object().map(|m| object_facts(|k| m.get(k)))
    }

    #[test]
    fn file_facts_agree_with_the_loaded_value() {
        let values = [
            json!({"infmax_model_prefix": "dsr1", "hw": "b200", "framework": "sglang",
                   "precision": "fp8", "is_multinode": true, "power_valid": 1,
                   "nested": {"hw": "not this"}, "tput_per_gpu": 1.5}),
            json!({"hw": 3, "scenario_type": "agentic-coding", "power_valid": 1.0}),
            json!([{"is_multinode": true}, [{"hw": "x"}], 2, null, {"hw": "y"}]),
            json!("text"),
            json!({}),
        ];
        for v in values {
            let want: Vec<ElementFacts> = match &v {
                Value::Array(items) => items.iter().map(value_facts).collect(),
                v => vec![value_facts(v)],
            };
            let got = file_facts(&v.to_string()).expect("facts");
            assert_eq!(got, want, "{v}");
        }
        // A repeated key keeps its last value, as loading does.
        let got = file_facts(r#"{"hw": "a", "hw": "b"}"#).expect("facts");
        assert_eq!(got, vec![value_facts(&json!({"hw": "b"}))]);
        for bad in ["{", "1 2", "", "[1,]"] {
            assert!(file_facts(bad).is_err(), "{bad}");
        }
    }
}
