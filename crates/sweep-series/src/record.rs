//! What the history holds, line by line: the format version, the limits of
//! a file and a line, a run's provenance ([`RunRef`]), the index line, a row
//! line, and the errors of reading and writing them. The folder store
//! ([`crate::store`]), its reader and the series all speak these; none of
//! them is needed to read one.
use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sweep_model::fsio::ReadError;

/// The format version every line carries.
pub const FORMAT: u32 = 1;

/// The largest file of the store read. A configuration's file grows by its
/// points per run (a handful) times about 2 KB a row: 1,000 main runs of a
/// large configuration are ~30 MB; four times that is refused as not a
/// history file rather than read into memory.
pub const MAX_FILE_BYTES: u64 = 128 * 1024 * 1024;

/// The longest line accepted. A benchmark row is about 2 KB; a line of
/// 1 MiB is not one of ours.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

/// The index file at the root of the store.
pub const INDEX: &str = "runs.jsonl";

/// Where a run came from: what names its points in the history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRef {
    /// The workflow run id.
    pub run_id: u64,
    /// Its attempt (1 for the first).
    pub attempt: u32,
    /// The commit of main the run measured.
    pub commit: String,
    /// When the run was made (RFC 3339, as GitHub writes it).
    pub date: String,
    /// The pull request the commit came from, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<u64>,
}

/// A run's identity in the history: its run id and attempt.
pub type RunKey = (u64, u32);

impl RunRef {
    /// The run's [`RunKey`].
    #[must_use]
    pub fn key(&self) -> RunKey {
        (self.run_id, self.attempt)
    }
}

/// Per run, the benchmark and eval rows a store holds: what a `verify`
/// checks against each run's index line.
#[derive(Debug, Default)]
pub(crate) struct RowCounts(BTreeMap<RunKey, (usize, usize)>);

impl RowCounts {
    /// Counts `line`'s row for its run.
    pub(crate) fn add(&mut self, line: &Line) {
        let c = self.0.entry(line.run.key()).or_default();
        match line.kind {
            Kind::Benchmark => c.0 += 1,
            Kind::Eval => c.1 += 1,
        }
    }

    /// The benchmark and eval rows held for `run`, when they are not the
    /// ones its index line lists.
    pub(crate) fn differs(&self, run: &IndexLine) -> Option<(usize, usize)> {
        let have = self.0.get(&run.run.key()).copied().unwrap_or_default();
        (have != (run.benchmarks, run.evals)).then_some(have)
    }
}

/// One line of `runs.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexLine {
    pub v: u32,
    #[serde(flatten)]
    pub run: RunRef,
    /// `owner/name` of the repository.
    pub repo: String,
    /// The event of the run (`push`, `workflow_dispatch`, …).
    pub event: String,
    pub benchmarks: usize,
    pub evals: usize,
    /// SHA-256 of the run's rows as appended: tells a repeated append of the
    /// same run from a different one under the same id.
    pub digest: String,
}

/// The kind of row a line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Benchmark,
    Eval,
}

/// One line of a series file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub v: u32,
    pub run: RunRef,
    pub kind: Kind,
    /// The row as the aggregate holds it (`agg_bmk.json`, `agg_eval_all.json`).
    pub row: Map<String, Value>,
}

/// A run to append: its provenance and its aggregated rows.
#[derive(Debug, Clone)]
pub struct Run {
    pub run: RunRef,
    pub repo: String,
    pub event: String,
    pub benchmarks: Vec<Map<String, Value>>,
    pub evals: Vec<Map<String, Value>>,
}

/// What an append did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// The run's rows were added to these files (relative paths).
    Added { files: Vec<String> },
    /// The run was in the history already, with the same rows.
    AlreadyThere,
}

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {cause}", path.display())]
    Corrupt {
        path: PathBuf,
        line: usize,
        cause: String,
    },
    #[error("{what}[{index}]: {cause}")]
    BadRow {
        what: &'static str,
        index: usize,
        #[source]
        cause: PlaceError,
    },
    #[error(
        "run {run_id} attempt {attempt} is in the history already with other rows (digest {have}, \
         this append {new}); a run's rows are never replaced"
    )]
    Conflict {
        run_id: u64,
        attempt: u32,
        have: String,
        new: String,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Database(String),
}

/// Why a row has no file of the store.
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    /// Not an aggregate benchmark row.
    #[error(transparent)]
    Benchmark(#[from] sweep_model::results::RowError),
    /// Not an aggregate eval row.
    #[error("not an eval row: {0}")]
    Eval(#[from] serde_json::Error),
    /// A value that cannot be part of a file name.
    #[error(
        "{0:?} cannot name a history file (letters, digits, '.', '_' and '-', at most {MAX_COMPONENT})"
    )]
    Name(String),
}

/// The hardware a row's `hw` names: its cluster
/// ([`sweep_model::runners::cluster_of`]: `h100-nv_02` is `h100-nv`). The
/// nodes of one cluster measure one series: which node a leg lands on is
/// the runner group's choice, part of the noise the boundary learns;
/// another cluster (or GPU) is another hardware and another file, so it
/// never mixes in.
#[must_use]
pub fn hardware(hw: &str) -> String {
    sweep_model::runners::cluster_of(hw)
}

/// Longest name part of a file path, well above any runner, model prefix,
/// precision or framework name.
pub(crate) const MAX_COMPONENT: usize = 64;
