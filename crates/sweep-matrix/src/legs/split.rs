//! `generate-matrix split`: a search-space config cut into parts (setup)
//! and one part into its legs (the plan job), within [`super::budgets`].

use serde_json::{Map, Value, json};

use super::budgets::{
    Budget, MAX_ENV_STRING_BYTES, MAX_JOB_OUTPUT_UTF16_BYTES, MAX_LEGS_PER_JOB,
    MAX_PARTS_PER_GROUP, MAX_RUN_OUTPUT_UTF16_BYTES, utf16_bytes,
};
use super::{CANARY, FAMILIES, GROUPS, Kind, Nodes};
use crate::canary;
use crate::leg::{LegPart, plan_leg};

/// The split of a search-space config (see [`split`]).
#[derive(Debug, Clone)]
pub struct Split {
    /// Step outputs in order. Without a family (the setup job):
    /// `canary-parts` (the canary's one part, or none), per group
    /// `<group>-parts` (a JSON list of parts), then `legs`, `has-agentic`,
    /// `has-fixed`, `without-canary`. For one part (the plan job): `legs`.
    pub outputs: Vec<(String, String)>,
    /// Markdown for the job summary.
    pub summary: String,
    /// The largest figures met, for the budget tests and the summary.
    pub budget: Budget,
}

/// One row of a parts list: what the leg workflow's `part` input reads.
fn part_row(
    family: &str,
    part: usize,
    parts: usize,
    nodes: Nodes,
    kind: &str,
    title: &str,
) -> Value {
    json!({"family": family, "part": part, "parts": parts, "nodes": nodes.as_str(),
        "kind": kind, "title": title})
}

/// One family's legs dealt evenly over as few parts as hold them (300 legs
/// become 150 + 150, not 256 + 44), each part as the JSON list of its legs
/// ([`crate::leg::LegPlan::with_row`]: name, runner labels, timeout and the
/// row), checked against the job-output and environment-string budgets.
fn family_parts(
    label: &str,
    leg_part: LegPart,
    rows: &[Value],
    sweep: &Map<String, Value>,
    budget: &mut Budget,
) -> Result<Vec<String>, SplitError> {
    let parts = rows.len().div_ceil(MAX_LEGS_PER_JOB);
    let per = if parts == 0 {
        0
    } else {
        rows.len().div_ceil(parts)
    };
    let mut legs = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        // The leg's first step reads its row as one environment string
        // (`LEG_ROW`, GitHub's indented `toJSON`).
        let len = LEG_ROW_VAR.len() + 1 + serde_json::to_string_pretty(row)?.len();
        if len > MAX_ENV_STRING_BYTES {
            return Err(SplitError::RowTooLarge {
                family: label.to_string(),
                index: i,
                bytes: len,
            });
        }
        budget.largest_row = budget.largest_row.max(len);
        let empty = Map::new();
        let fields = row.as_object().unwrap_or(&empty);
        legs.push(plan_leg(fields, leg_part, sweep).with_row(row));
    }
    let mut out = Vec::with_capacity(parts);
    for chunk in legs.chunks(per.max(1)).take(parts) {
        let text = serde_json::to_string(chunk)?;
        let size = utf16_bytes(&text);
        if size > MAX_JOB_OUTPUT_UTF16_BYTES {
            return Err(SplitError::PartTooLarge {
                family: label.to_string(),
                legs: rows.len(),
                part_legs: chunk.len(),
                bytes: size,
            });
        }
        budget.largest_job_output = budget.largest_job_output.max(size);
        budget.run_output += size;
        budget.most_legs = budget.most_legs.max(chunk.len());
        out.push(text);
    }
    Ok(out)
}

/// The leg's row reaches its first step as this environment variable.
pub const LEG_ROW_VAR: &str = "LEG_ROW";

/// Checks `ssc` against every budget and lists its parts per group (the
/// setup job), or, with `family` (a stem of [`FAMILIES`]) and `part`
/// (1-based), writes that part's legs (the leg workflow's plan job: each
/// row with its job name, runner labels and timeout for the caller's
/// `sweep` inputs, [`crate::leg`]). With `without_canary`, the canary row
/// ([`canary::select`]) is left out of the single-node buckets, as the
/// fan-out runs it first. Setup measures the parts with the `sweep` it is
/// given (none: the plan jobs' inputs are not known yet); each plan job
/// checks its part again with the caller's.
///
/// # Errors
/// The config is not shaped as a search-space config, a family is unknown,
/// the part does not exist, or a budget is passed (the message names it).
pub fn split(
    ssc: &Value,
    without_canary: bool,
    family: Option<&str>,
    part: usize,
    sweep: &Map<String, Value>,
) -> Result<Split, SplitError> {
    // The canary is the one leg the fan-out runs first ([`canary::select`]).
    // Without `without_canary` only the canary row is needed: no copy.
    let picked = if without_canary {
        canary::select(ssc)?
    } else {
        canary::CanarySplit {
            canary: canary::pick(ssc)?,
            remaining: Value::Null,
        }
    };
    split_picked(ssc, picked, without_canary, family, part, sweep)
}

/// [`split`] of a config the caller gives up (`generate-matrix split`):
/// with `without_canary` the config less its canary is the config itself,
/// not a copy, so memory follows the config once.
///
/// # Errors
/// As [`split`].
pub fn split_owned(
    ssc: Value,
    without_canary: bool,
    family: Option<&str>,
    part: usize,
    sweep: &Map<String, Value>,
) -> Result<Split, SplitError> {
    if !without_canary {
        return split(&ssc, false, family, part, sweep);
    }
    let picked = canary::select_owned(ssc)?;
    split_picked(&Value::Null, picked, true, family, part, sweep)
}

/// [`split`] once the canary is picked (`picked.remaining` is the config
/// read when `without_canary`, else `ssc`).
fn split_picked(
    ssc: &Value,
    picked: canary::CanarySplit,
    without_canary: bool,
    family: Option<&str>,
    part: usize,
    sweep: &Map<String, Value>,
) -> Result<Split, SplitError> {
    if family == Some(CANARY) {
        return split_canary(&picked.canary, part, sweep);
    }
    let canary_parts = if without_canary && !picked.canary.is_empty() {
        json!([part_row(CANARY, 1, 1, Nodes::Single, CANARY, CANARY)])
    } else {
        json!([])
    };
    let ssc = if without_canary {
        &picked.remaining
    } else {
        ssc
    };
    let Value::Object(top) = ssc else {
        return Err(SplitError::NotObject);
    };
    match family {
        Some(stem) => split_part(top, stem, part, sweep),
        None => list_parts(top, &canary_parts, without_canary, sweep),
    }
}

/// The canary's one part of one leg (the plan job of the canary).
fn split_canary(
    canary: &[Value],
    part: usize,
    sweep: &Map<String, Value>,
) -> Result<Split, SplitError> {
    if part != 1 || canary.is_empty() {
        return Err(SplitError::NoCanaryPart { part });
    }
    let canary_part = LegPart {
        nodes: Nodes::Single,
        kind: None,
    };
    let mut budget = Budget::default();
    let text = family_parts(CANARY, canary_part, canary, sweep, &mut budget)?.swap_remove(0);
    Ok(Split {
        outputs: vec![("legs".into(), text)],
        summary: "### canary (1/1)\n\nthe canary leg\n".into(),
        budget,
    })
}

/// Part `part` (1-based) of the family `stem`, as its legs (a plan job).
fn split_part(
    top: &Map<String, Value>,
    stem: &str,
    part: usize,
    sweep: &Map<String, Value>,
) -> Result<Split, SplitError> {
    let Some(f) = FAMILIES.iter().find(|f| f.stem == stem) else {
        let known: Vec<&str> = FAMILIES.iter().map(|f| f.stem).collect();
        return Err(SplitError::UnknownFamily {
            stem: stem.to_string(),
            known: known.join(", "),
        });
    };
    let mut budget = Budget::default();
    let rows = f.rows(top)?;
    let parts = family_parts(&f.label(), f.leg_part(), rows, sweep, &mut budget)?;
    if part == 0 || part > parts.len() {
        return Err(SplitError::NoSuchPart {
            family: f.label(),
            legs: rows.len(),
            parts: parts.len(),
            part,
        });
    }
    let text = parts[part - 1].clone();
    let summary = format!(
        "### {} ({part}/{})\n\n{} of its {} legs\n",
        f.title,
        parts.len(),
        serde_json::from_str::<Vec<Value>>(&text).map_or(0, |v| v.len()),
        rows.len()
    );
    Ok(Split {
        outputs: vec![("legs".into(), text)],
        summary,
        budget,
    })
}

/// Every family's parts, listed per group with the setup job's other
/// outputs and a summary table; every budget checked.
fn list_parts(
    top: &Map<String, Value>,
    canary_parts: &Value,
    without_canary: bool,
    sweep: &Map<String, Value>,
) -> Result<Split, SplitError> {
    let mut budget = Budget::default();
    let mut groups: Vec<Vec<Value>> = vec![Vec::new(); GROUPS.len()];
    let mut summary =
        String::from("### Matrix split\n\n| family | legs | parts | group |\n|---|---|---|---|\n");
    let (mut total, mut agentic, mut fixed) = (0usize, 0usize, 0usize);
    for f in FAMILIES {
        let rows = f.rows(top)?;
        let parts = family_parts(&f.label(), f.leg_part(), rows, sweep, &mut budget)?.len();
        let g = GROUPS
            .iter()
            .position(|g| *g == f.kind.group())
            .unwrap_or(0);
        for k in 1..=parts {
            groups[g].push(part_row(
                f.stem,
                k,
                parts,
                f.nodes,
                f.kind.as_str(),
                f.title,
            ));
        }
        if !rows.is_empty() {
            summary.push_str(&format!(
                "| {} | {} | {parts} | {} |\n",
                f.label(),
                rows.len(),
                f.kind.group()
            ));
        }
        total += rows.len();
        match f.kind {
            Kind::Agentic => agentic += rows.len(),
            Kind::Fixed => fixed += rows.len(),
            Kind::Eval | Kind::AgenticEval => {}
        }
    }
    let mut outputs = group_outputs(canary_parts, &groups, &mut budget)?;
    if total == 0 {
        summary
            .push_str("\nNo legs to run: the search-space config is empty, so no GPU job runs.\n");
    } else {
        summary.push_str(&format!("\n{total} legs in all.\n"));
    }
    outputs.push(("legs".into(), total.to_string()));
    outputs.push(("has-agentic".into(), (agentic > 0).to_string()));
    outputs.push(("has-fixed".into(), (fixed > 0).to_string()));
    outputs.push(("without-canary".into(), without_canary.to_string()));
    Ok(Split {
        outputs,
        summary,
        budget,
    })
}

/// The parts lists (`canary-parts`, `<group>-parts`), checked against the
/// matrix, job-output and run-output budgets.
fn group_outputs(
    canary_parts: &Value,
    groups: &[Vec<Value>],
    budget: &mut Budget,
) -> Result<Vec<(String, String)>, SplitError> {
    let mut setup_output = utf16_bytes(&canary_parts.to_string());
    let mut outputs = vec![("canary-parts".to_string(), canary_parts.to_string())];
    for (g, parts) in GROUPS.iter().zip(groups) {
        if parts.len() > MAX_PARTS_PER_GROUP {
            return Err(SplitError::TooManyParts {
                group: g,
                parts: parts.len(),
            });
        }
        budget.most_parts = budget.most_parts.max(parts.len());
        let text = Value::Array(parts.clone()).to_string();
        setup_output += utf16_bytes(&text);
        outputs.push((format!("{g}-parts"), text));
    }
    if setup_output > MAX_JOB_OUTPUT_UTF16_BYTES {
        return Err(SplitError::SetupOutputTooLarge {
            bytes: setup_output,
        });
    }
    budget.largest_job_output = budget.largest_job_output.max(setup_output);
    budget.run_output += setup_output;
    if budget.run_output > MAX_RUN_OUTPUT_UTF16_BYTES {
        return Err(SplitError::RunOutputTooLarge {
            bytes: budget.run_output,
        });
    }
    Ok(outputs)
}

/// Why a search-space config cannot be split into legs: the config is
/// refused (its shape, an unknown family or part, or a GitHub budget it
/// passes; the message names which).
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    #[error("search-space config: {top} is not an object")]
    TopNotObject { top: &'static str },
    #[error("search-space config: {family} is not a list")]
    NotList { family: String },
    #[error("search-space config must be a JSON object")]
    NotObject,
    #[error(transparent)]
    Canary(#[from] canary::CanaryError),
    #[error("cannot serialise a row: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "{family}[{index}]: the row is {bytes} bytes as the leg's {LEG_ROW_VAR} environment string, above the {MAX_ENV_STRING_BYTES} one environment string may hold (Linux's 128 KiB); it would not reach the leg"
    )]
    RowTooLarge {
        family: String,
        index: usize,
        bytes: usize,
    },
    #[error(
        "{family}: {legs} legs; a part of {part_legs} legs is {bytes} bytes of job output as GitHub counts them (UTF-16), above the {MAX_JOB_OUTPUT_UTF16_BYTES} allowed (GitHub's limit: 1 MB per job); narrow the sweep or split it over runs"
    )]
    PartTooLarge {
        family: String,
        legs: usize,
        part_legs: usize,
        bytes: usize,
    },
    #[error("the canary is one part of one leg, no part {part}")]
    NoCanaryPart { part: usize },
    #[error("unknown family {stem:?} (one of {known})")]
    UnknownFamily { stem: String, known: String },
    #[error("{family} has {legs} legs in {parts} part(s), no part {part}")]
    NoSuchPart {
        family: String,
        legs: usize,
        parts: usize,
        part: usize,
    },
    #[error(
        "the {group} legs need {parts} parts of at most {MAX_LEGS_PER_JOB} legs: more than the {MAX_PARTS_PER_GROUP} jobs GitHub runs from one matrix; narrow the sweep or split it over runs"
    )]
    TooManyParts { group: &'static str, parts: usize },
    #[error(
        "the parts lists are {bytes} bytes of job output (UTF-16), above the {MAX_JOB_OUTPUT_UTF16_BYTES} allowed (GitHub's limit: 1 MB per job)"
    )]
    SetupOutputTooLarge { bytes: usize },
    #[error(
        "the sweep's plan jobs would output {bytes} bytes (UTF-16), above the {MAX_RUN_OUTPUT_UTF16_BYTES} allowed (GitHub's limit: 50 MB of outputs per run); narrow the sweep or split it over runs"
    )]
    RunOutputTooLarge { bytes: usize },
}

impl sweep_exit::Classify for SplitError {
    fn kind(&self) -> sweep_exit::Kind {
        sweep_exit::Kind::Rejected
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(n: usize, isl: u64) -> Vec<Value> {
        (0..n)
            .map(|i| json!({"runner": "b200", "conc": i + 1, "isl": isl, "run-eval": false}))
            .collect()
    }

    fn out<'a>(s: &'a Split, k: &str) -> &'a str {
        &s.outputs.iter().find(|(x, _)| x == k).unwrap().1
    }

    fn parts(s: &Split, group: &str) -> Vec<Value> {
        serde_json::from_str(out(s, &format!("{group}-parts"))).unwrap()
    }

    /// `split_owned` (no copy of the config) gives what `split` gives, with
    /// and without the canary, for the parts lists and for one part.
    #[test]
    fn splitting_an_owned_config_is_the_same_split() {
        let ssc = json!({"single_node": {"1k1k": rows(600, 1024), "8k1k": rows(3, 8192)},
            "evals": rows(2, 1024)});
        for without_canary in [false, true] {
            for (family, part) in [(None, 1), (Some("sn-1k1k"), 2), (Some(CANARY), 1)] {
                let by_ref =
                    split(&ssc, without_canary, family, part, &Map::new()).map(|s| s.outputs);
                let owned = split_owned(ssc.clone(), without_canary, family, part, &Map::new())
                    .map(|s| s.outputs);
                assert_eq!(
                    format!("{by_ref:?}"),
                    format!("{owned:?}"),
                    "{without_canary} {family:?}"
                );
            }
        }
    }

    #[test]
    fn a_big_bucket_splits_evenly_into_parts_listed_under_its_group() {
        let ssc = json!({"single_node": {"1k1k": rows(600, 1024), "8k1k": rows(3, 8192)},
            "evals": rows(2, 1024)});
        let all = split(&ssc, false, None, 1, &Map::new()).unwrap();
        assert_eq!(out(&all, "legs"), "605");
        assert_eq!(out(&all, "has-fixed"), "true");
        assert_eq!(out(&all, "has-agentic"), "false");
        let bench = parts(&all, "benchmark");
        assert_eq!(bench.len(), 4, "{bench:?}");
        assert_eq!(
            bench[0],
            json!({"family": "sn-1k1k", "part": 1, "parts": 3, "nodes": "single-node",
                "kind": "fixed", "title": "single-node 1k1k"})
        );
        assert_eq!(bench[3]["family"], "sn-8k1k");
        assert_eq!(parts(&all, "eval")[0]["kind"], "eval");
        assert_eq!(parts(&all, "agentic"), Vec::<Value>::new());
        // Each part of the plan job: 200 legs, and no part 4.
        for k in 1..=3 {
            let s = split(&ssc, false, Some("sn-1k1k"), k, &Map::new()).unwrap();
            let v: Vec<Value> = serde_json::from_str(out(&s, "legs")).unwrap();
            assert_eq!(v.len(), 200, "part {k}");
            assert_eq!(v[0]["config"], rows(600, 1024)[(k - 1) * 200]);
            assert_eq!(v[0]["runs-on"], r#""b200""#);
        }
        let e = split(&ssc, false, Some("sn-1k1k"), 4, &Map::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("3 part(s), no part 4"), "{e}");
        assert!(split(&ssc, false, Some("mn-agentic"), 1, &Map::new()).is_err());
        // Without the canary: one row fewer in the single-node buckets.
        assert_eq!(
            out(&split(&ssc, true, None, 1, &Map::new()).unwrap(), "legs"),
            "604"
        );
        assert!(split(&ssc, false, Some("nope"), 1, &Map::new()).is_err());
    }

    #[test]
    fn a_family_has_no_fixed_cap_but_a_group_holds_256_parts() {
        // 513 legs were refused when a family had two part jobs.
        let s = split(
            &json!({"evals": rows(513, 1024)}),
            false,
            None,
            1,
            &Map::new(),
        )
        .unwrap();
        assert_eq!(parts(&s, "eval").len(), 3);
        let big = rows(MAX_PARTS_PER_GROUP * MAX_LEGS_PER_JOB + 1, 1024);
        let e = split(&json!({"evals": big}), false, None, 1, &Map::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("257 parts") && e.contains("256 jobs"), "{e}");
    }

    #[test]
    fn a_part_above_the_job_output_budget_is_refused_naming_the_family() {
        // Rows of ~2 KB: 256 of them are above the job-output budget.
        let fat: Vec<Value> = (0..256)
            .map(|i| json!({"conc": i, "isl": 1024, "pad": "x".repeat(2000)}))
            .collect();
        let e = split(&json!({"evals": fat}), false, None, 1, &Map::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("UTF-16") && e.contains("evals"), "{e}");
    }

    #[test]
    fn a_row_larger_than_one_environment_string_is_refused() {
        let row = json!({"conc": 1, "pad": "x".repeat(MAX_ENV_STRING_BYTES)});
        let e = split(&json!({"evals": [row]}), false, None, 1, &Map::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("evals[0]") && e.contains("environment string"),
            "{e}"
        );
    }

    #[test]
    fn empty_config_says_so() {
        let s = split(&json!({}), false, None, 1, &Map::new()).unwrap();
        assert_eq!(out(&s, "legs"), "0");
        assert!(s.summary.contains("No legs to run"));
    }
}
