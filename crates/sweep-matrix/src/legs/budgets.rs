//! The limits a split is held to: GitHub's 256 jobs per matrix, 1 MB of
//! outputs per job and 50 MB per run (sized as UTF-16), and Linux's 128 KiB
//! per environment string; and the figures a split reaches.

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

/// The search-space config file read by `split`: the matrix limit
/// (`fsio::MAX_MATRIX_JSON_BYTES`: the 10× scale catalogue fits, the
/// biggest recorded real sweep is 254 KB), within which `split` stays under
/// 200 MB of memory.
pub const MAX_CONFIG_BYTES: u64 = sweep_model::fsio::MAX_MATRIX_JSON_BYTES;

/// The caller's `leg-env` input reaches the step through one environment
/// variable, and Linux refuses a single environment string above 128 KiB;
/// 32 KiB is far more than a site's settings need.
pub const MAX_LEG_ENV_BYTES: usize = 32 * 1024;

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
