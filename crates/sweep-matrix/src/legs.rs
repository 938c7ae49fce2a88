//! What the GPU legs of `run-sweep.yml` need computed, so that nothing but
//! bash and the sweepkit binaries runs on a GPU host and the matrix never
//! travels through an environment variable:
//!
//! - `generate-matrix split`: the search-space config (a file, the setup
//!   job's artifact) checked against every budget and cut into the parts
//!   list the fan-out jobs read (setup), or one part of one family, at most
//!   [`MAX_LEGS_PER_JOB`] legs, as the rows of the leg workflow's plan job;
//! - `generate-matrix leg-env`: the caller's extra leg environment, validated
//!   and appended to `$GITHUB_ENV`;
//! - `generate-matrix worker-settings`: a multi-node row's prefill/decode
//!   `additional-settings` as plain `KEY=VALUE` lines (formerly jq in bash);
//! - `generate-matrix changelog-metadata`: the config's `changelog_metadata`;
//! - [`bucket_rows`]: the rows of a `full-sweep` / `test-config` command
//!   line (the manual entry, `generate-matrix from-command`) bucketed like
//!   the changelog path's output.
//!
//! The families are one table, [`FAMILIES`]: the workflow files name none
//! (docs/limits.md has the budgets and GitHub's numbers behind them).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sweep_model::json_type::json_type_name;

use crate::canary;
use crate::leg::{LegPart, plan_leg};

/// GitHub runs at most 256 jobs from one matrix: a part holds at most this
/// many legs (the leg job's matrix), and a fan-out group at most
/// [`MAX_PARTS_PER_GROUP`] parts (the fan-out job's matrix).
pub const MAX_LEGS_PER_JOB: usize = 256;

/// The fan-out job of a group is one matrix too: 256 parts of 256 legs.
pub const MAX_PARTS_PER_GROUP: usize = 256;

/// GitHub caps the outputs of one job at 1 MB in all, sized as UTF-16
/// (two bytes per character of JSON). A part's rows are the one output of
/// its plan job, and the parts lists the outputs of setup; refuse either
/// above 900 KiB so the limit is never met (the rest is a few bytes).
pub const MAX_JOB_OUTPUT_UTF16_BYTES: usize = 900 * 1024;

/// GitHub caps the outputs of a whole run at 50 MB (UTF-16). The plan jobs
/// carry the matrix once; refuse a matrix whose outputs would pass 45 MiB,
/// leaving the other jobs' few outputs room.
pub const MAX_RUN_OUTPUT_UTF16_BYTES: usize = 45 * 1024 * 1024;

/// Linux refuses one environment string (`NAME=value`) above 128 KiB
/// (MAX_ARG_STRLEN) when the runner starts a step: a leg's environment
/// values are the fields of its row, so no row may be that large as JSON.
pub const MAX_ENV_STRING_BYTES: usize = 128 * 1024;

/// Bytes GitHub counts for an output value (UTF-16 code units × 2).
pub fn utf16_bytes(s: &str) -> usize {
    s.encode_utf16().count() * 2
}

/// The search-space config file read by `split`: 64 MiB, far above any real
/// sweep (the biggest recorded one is 254 KB) but bounded.
pub const MAX_CONFIG_BYTES: u64 = 64 * 1024 * 1024;

/// The caller's `leg-env` input reaches the step through one environment
/// variable, and Linux refuses a single environment string above 128 KiB;
/// 32 KiB is far more than a site's settings need.
pub const MAX_LEG_ENV_BYTES: usize = 32 * 1024;

/// Which leg job of the leg workflow runs a family's rows: the steps of a
/// single-node and a multi-node leg differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nodes {
    Single,
    Multi,
}

impl Nodes {
    /// The leg workflow's `nodes` input.
    pub fn as_str(self) -> &'static str {
        match self {
            Nodes::Single => "single-node",
            Nodes::Multi => "multi-node",
        }
    }
}

/// What a family's legs run: the leg template's `FAMILY` (its fixed
/// overrides, workflow.md §6.1). Its [`Kind::group`] is the fan-out job the
/// family's parts go to, because the jobs after the fan-out judge the groups
/// apart (results, evals, the agentic ingest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Fixed,
    Agentic,
    Eval,
    AgenticEval,
}

/// The fan-out groups, in workflow order: each is one fan-out job of
/// `run-sweep.yml` reading the setup output `<group>-parts`.
pub const GROUPS: [&str; 3] = ["benchmark", "agentic", "eval"];

impl Kind {
    /// The leg workflow's `kind` input (the leg's `FAMILY`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Fixed => "fixed",
            Kind::Agentic => "agentic",
            Kind::Eval => "eval",
            Kind::AgenticEval => "agentic-eval",
        }
    }

    /// The fan-out group (one of [`GROUPS`]).
    pub fn group(self) -> &'static str {
        match self {
            Kind::Fixed => GROUPS[0],
            Kind::Agentic => GROUPS[1],
            Kind::Eval | Kind::AgenticEval => GROUPS[2],
        }
    }
}

/// One family of legs: where its rows sit in the search-space config, its
/// name in the parts list, its title in job names, and how its legs run.
/// Adding a family is one row of [`FAMILIES`] (and a test); the workflow
/// files do not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// Path in the search-space config (`single_node.1k1k`, `evals`).
    pub path: (&'static str, Option<&'static str>),
    /// The family's name in the parts list and `split --family`.
    pub stem: &'static str,
    /// The start of its leg jobs' names (`single-node 1k1k (1/2) / …`).
    pub title: &'static str,
    pub nodes: Nodes,
    pub kind: Kind,
}

/// The families, in the order their parts are listed (and the dry run's).
pub const FAMILIES: [Family; 10] = [
    fam(
        ("single_node", Some("1k1k")),
        "sn-1k1k",
        "single-node 1k1k",
        Nodes::Single,
        Kind::Fixed,
    ),
    fam(
        ("single_node", Some("8k1k")),
        "sn-8k1k",
        "single-node 8k1k",
        Nodes::Single,
        Kind::Fixed,
    ),
    fam(
        ("single_node", Some("agentic")),
        "sn-agentic",
        "agentic",
        Nodes::Single,
        Kind::Agentic,
    ),
    fam(
        ("multi_node", Some("1k1k")),
        "mn-1k1k",
        "multi-node 1k1k",
        Nodes::Multi,
        Kind::Fixed,
    ),
    fam(
        ("multi_node", Some("8k1k")),
        "mn-8k1k",
        "multi-node 8k1k",
        Nodes::Multi,
        Kind::Fixed,
    ),
    fam(
        ("multi_node", Some("agentic")),
        "mn-agentic",
        "multi-node agentic",
        Nodes::Multi,
        Kind::Agentic,
    ),
    fam(("evals", None), "evals", "eval", Nodes::Single, Kind::Eval),
    fam(
        ("agentic_evals", None),
        "agentic-evals",
        "agentic eval",
        Nodes::Single,
        Kind::AgenticEval,
    ),
    fam(
        ("multinode_evals", None),
        "mn-evals",
        "multi-node eval",
        Nodes::Multi,
        Kind::Eval,
    ),
    fam(
        ("multinode_agentic_evals", None),
        "mn-agentic-evals",
        "multi-node agentic eval",
        Nodes::Multi,
        Kind::AgenticEval,
    ),
];

const fn fam(
    path: (&'static str, Option<&'static str>),
    stem: &'static str,
    title: &'static str,
    nodes: Nodes,
    kind: Kind,
) -> Family {
    Family {
        path,
        stem,
        title,
        nodes,
        kind,
    }
}

impl Family {
    /// `single_node["1k1k"]` / `evals`, as messages name it.
    pub fn label(&self) -> String {
        match self.path {
            (t, Some(b)) => format!("{t}[\"{b}\"]"),
            (t, None) => t.to_string(),
        }
    }

    /// What the family's legs run, as [`crate::leg`] reads it.
    pub fn leg_part(&self) -> LegPart {
        LegPart {
            nodes: self.nodes,
            kind: Some(self.kind),
        }
    }

    /// `single_node.1k1k` / `evals`, as the dry run names it.
    pub fn dotted(&self) -> String {
        match self.path {
            (t, Some(b)) => format!("{t}.{b}"),
            (t, None) => t.to_string(),
        }
    }

    /// The family's rows in a search-space config (none when absent).
    ///
    /// # Errors
    /// The path holds something else than a list (or its top is no object).
    pub fn rows<'a>(&self, ssc: &'a Map<String, Value>) -> Result<&'a [Value], SplitError> {
        let absent = |v: Option<&Value>| matches!(v, None | Some(Value::Null));
        let (top, bucket) = self.path;
        let v = match bucket {
            None => ssc.get(top),
            Some(b) => match ssc.get(top) {
                v if absent(v) => None,
                Some(Value::Object(m)) => m.get(b),
                Some(_) => return Err(SplitError::TopNotObject { top }),
                None => None,
            },
        };
        match v {
            v if absent(v) => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(_) => Err(SplitError::NotList {
                family: self.label(),
            }),
            None => Ok(&[]),
        }
    }
}

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

/// The largest figures of a split against GitHub's limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budget {
    /// Largest output of one job (a plan job's rows, or setup's outputs),
    /// in UTF-16 bytes.
    pub largest_job_output: usize,
    /// All the outputs of the run's plan jobs and setup, in UTF-16 bytes.
    pub run_output: usize,
    /// Largest row as JSON, in bytes (bounds every environment string).
    pub largest_row: usize,
    /// Most parts of one group (the fan-out job's matrix).
    pub most_parts: usize,
    /// Most legs of one part (the leg job's matrix).
    pub most_legs: usize,
}

/// The canary's name in the parts list, `split --family`, its `kind` (the
/// leg's `FAMILY`) and its title.
pub const CANARY: &str = "canary";

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
    let picked = canary::select(ssc)?;
    let mut budget = Budget::default();
    if family == Some(CANARY) {
        if part != 1 || picked.canary.is_empty() {
            return Err(SplitError::NoCanaryPart { part });
        }
        let canary_part = LegPart {
            nodes: Nodes::Single,
            kind: None,
        };
        let text =
            family_parts(CANARY, canary_part, &picked.canary, sweep, &mut budget)?.swap_remove(0);
        return Ok(Split {
            outputs: vec![("legs".into(), text)],
            summary: "### canary (1/1)\n\nthe canary leg\n".into(),
            budget,
        });
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
    if let Some(stem) = family {
        let Some(f) = FAMILIES.iter().find(|f| f.stem == stem) else {
            let known: Vec<&str> = FAMILIES.iter().map(|f| f.stem).collect();
            return Err(SplitError::UnknownFamily {
                stem: stem.to_string(),
                known: known.join(", "),
            });
        };
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
        return Ok(Split {
            outputs: vec![("legs".into(), text)],
            summary,
            budget,
        });
    }
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
    let mut setup_output = utf16_bytes(&canary_parts.to_string());
    let mut outputs = vec![("canary-parts".to_string(), canary_parts.to_string())];
    for (g, parts) in GROUPS.iter().zip(&groups) {
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
impl sweep_cli::Classify for ReadConfigError {
    fn kind(&self) -> sweep_cli::Kind {
        match self {
            ReadConfigError::Unreadable { .. } => sweep_cli::Kind::Failed,
            ReadConfigError::TooLarge { .. } | ReadConfigError::NotJson { .. } => {
                sweep_cli::Kind::Rejected
            }
        }
    }
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

impl sweep_cli::Classify for SplitError {
    fn kind(&self) -> sweep_cli::Kind {
        sweep_cli::Kind::Rejected
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
    let text = std::fs::read_to_string(path).map_err(unreadable)?;
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

impl sweep_cli::Classify for MetadataError {
    fn kind(&self) -> sweep_cli::Kind {
        sweep_cli::Kind::Rejected
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

// ---------------------------------------------------------------------------
// Leg environment.
// ---------------------------------------------------------------------------

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

impl sweep_cli::Classify for LegEnvError {
    fn kind(&self) -> sweep_cli::Kind {
        sweep_cli::Kind::Rejected
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

// ---------------------------------------------------------------------------
// The manual entry.
// ---------------------------------------------------------------------------

/// Buckets generator rows the way the changelog path's output is bucketed:
/// rows with `eval-only: true` go to the eval lists, the rest by kind and
/// sequence length; benchmark rows get their recipe fingerprint.
///
/// # Errors
/// A row an output model rejects ([`crate::assemble::AssembleError`]).
pub fn bucket_rows(
    rows: Vec<Value>,
    command_line: &str,
) -> Result<Value, crate::assemble::AssembleError> {
    let (mut bench, evals): (Vec<Value>, Vec<Value>) = rows
        .into_iter()
        .partition(|r| r.get("eval-only") != Some(&Value::Bool(true)));
    for row in &mut bench {
        let fp = crate::assemble::recipe_fingerprint(row);
        if let Value::Object(m) = row {
            m.insert("recipe-fingerprint".into(), Value::String(fp));
        }
    }
    let mut meta = Map::new();
    meta.insert("base_ref".into(), Value::String(String::new()));
    meta.insert("head_ref".into(), Value::String(String::new()));
    meta.insert("entries".into(), Value::Array(Vec::new()));
    meta.insert(
        "generate_command".into(),
        Value::String(command_line.to_string()),
    );
    crate::assemble::assemble(&bench, &evals, Value::Object(meta))
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

impl sweep_cli::Classify for CommandLineError {
    fn kind(&self) -> sweep_cli::Kind {
        sweep_cli::Kind::Failed
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
