//! Matrix generation: master configs expanded into the benchmark job matrix
//! ([`generate`], with the `--config-keys` rule of [`keys`] and eval marking
//! in [`evals`] over the shared types of [`row`]), the changelog matrix's row
//! steps and output models ([`assemble`]), the sweep policy ([`policy`]), the
//! canary pick ([`canary`]), the families and their split into parts
//! ([`legs`]), one leg's name, runner labels, timeout and environment
//! ([`leg`]) and the priority order ([`priority`], over [`decimal`]). Used by
//! the `generate-matrix` and `check-changelog` binaries and by
//! `sweep-changelog`'s pipeline.

pub mod assemble;
pub mod canary;
pub mod decimal;
pub mod evals;
pub mod generate;
pub mod keys;
pub mod leg;
pub mod legs;
pub mod policy;
pub mod priority;
pub mod row;

/// Fixed master-config paths, AMD first (`MASTER_CONFIGS` of the reference).
pub const MASTER_CONFIGS: [&str; 2] = ["configs/amd-master.yaml", "configs/nvidia-master.yaml"];
/// Fixed runner-config path.
pub const RUNNER_CONFIG: &str = "configs/runners.yaml";

/// An invalid config or runner file, or rows that cannot be generated from
/// valid ones, is the check saying no; a file that cannot be read is a
/// missing input.
impl sweep_exit::Classify for row::GenError {
    fn kind(&self) -> sweep_exit::Kind {
        match self {
            row::GenError::Config(c)
                if c.kind == sweep_model::config::ConfigErrorKind::Unreadable =>
            {
                sweep_exit::Kind::Failed
            }
            row::GenError::Config(_) | row::GenError::Generate(_) => sweep_exit::Kind::Rejected,
        }
    }
}
