//! What the GPU legs of `run-sweep.yml` need computed, so that nothing but
//! bash and the sweepkit binaries runs on a GPU host and the matrix never
//! travels through an environment variable. One room per job:
//!
//! - the families, [`FAMILIES`] (this module): the workflow files name none;
//! - [`budgets`]: GitHub's and Linux's limits a split is held to
//!   (docs/limits.md has the numbers behind them);
//! - [`split`](mod@split) (`generate-matrix split`): the search-space config
//!   checked against every budget and cut into the parts list the fan-out
//!   jobs read (setup), or one part of one family, at most
//!   [`MAX_LEGS_PER_JOB`] legs, as the legs of the leg workflow's plan job
//!   (each leg's own data: [`crate::leg`]);
//! - [`config`]: reading the search-space config, and
//!   `generate-matrix changelog-metadata`;
//! - [`env`] (`generate-matrix leg-env`): the caller's extra leg
//!   environment, validated, and the template's variables it may not set;
//! - [`workers`] (`generate-matrix worker-settings`): a multi-node row's
//!   prefill/decode `additional-settings` as plain `KEY=VALUE` lines;
//! - [`words`]: the manual entry's command line (`generate-matrix
//!   from-command`) and the bucketing of its rows like the changelog
//!   path's output.

use serde_json::{Map, Value};

pub mod budgets;
pub mod config;
pub mod env;
pub mod split;
pub mod words;
pub mod workers;

pub use budgets::*;
pub use config::*;
pub use env::*;
pub use split::*;
pub use words::*;
pub use workers::*;

/// The part a leg belongs to, as its rules need it: which leg job runs it
/// and what it runs (`None`: the canary, a fixed-seq-len leg that never
/// evaluates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// Its rules (the part of a family stem, a leg's name, labels and timeout)
/// are in [`crate::leg`].
pub struct LegPart {
    pub nodes: Nodes,
    pub kind: Option<Kind>,
}

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

/// The canary's name in the parts list, `split --family`, its `kind` (the
/// leg's `FAMILY`) and its title.
pub const CANARY: &str = "canary";
