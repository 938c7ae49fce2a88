//! `generate-matrix full-sweep` and `test-config`: their flags, the options
//! they stand for, and generation errors reported at the file and line.

use std::path::PathBuf;

use clap::{ArgAction, Args, ValueEnum};
use sweep_cli::{Failure, Outcome};
use sweep_matrix::generate::{
    CommonOptions, FullSweepOptions, LoadedConfigs, ScenarioType, TestConfigOptions,
    generate_full_sweep, generate_test_config,
};
use sweep_matrix::row::{EvalMode, GenError, Row};

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum SeqLen {
    #[value(name = "1k1k")]
    OneKOneK,
    #[value(name = "8k1k")]
    EightKOneK,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum Scenario {
    #[value(name = "fixed-seq-len")]
    FixedSeqLen,
    #[value(name = "agentic-coding")]
    AgenticCoding,
}

#[derive(Args)]
pub(crate) struct CommonArgs {
    /// Master config files, merged in the given order.
    #[arg(long, num_args = 1.., action = ArgAction::Set, required = true, value_name = "FILE")]
    config_files: Vec<PathBuf>,
    /// Runner file: labels → node names, plus hardware records.
    #[arg(long, default_value = "configs/runners.yaml", value_name = "FILE")]
    runner_config: PathBuf,
    /// Skip eval selection: fixed rows get run-eval=false, agentic rows no run-eval.
    #[arg(long, conflicts_with_all = ["evals_only", "all_evals"])]
    no_evals: bool,
    /// Keep only eval rows (agentic rows included), each with eval-only=true.
    #[arg(long)]
    evals_only: bool,
    /// Every 8k1k fixed row and agentic row as an eval, multi-node rows merged per topology; implies eval-only output.
    #[arg(long)]
    all_evals: bool,
    /// Expand rows to runner nodes whose name contains this substring.
    #[arg(long, value_name = "SUBSTRING")]
    runner_node_filter: Option<String>,
    /// Only expand these scenario kinds.
    #[arg(long, num_args = 1.., action = ArgAction::Set, value_enum)]
    scenario_type: Option<Vec<Scenario>>,
    /// Only fixed-seq-len blocks with these (isl, osl): 1k1k = 1024/1024, 8k1k = 8192/1024.
    #[arg(long, num_args = 1.., action = ArgAction::Set, value_enum)]
    seq_lens: Option<Vec<SeqLen>>,
}

impl CommonArgs {
    fn options(&self) -> CommonOptions {
        CommonOptions {
            runner_node_filter: self.runner_node_filter.clone(),
            scenario_types: self.scenario_type.as_ref().map(|v| {
                v.iter()
                    .map(|s| match s {
                        Scenario::FixedSeqLen => ScenarioType::FixedSeqLen,
                        Scenario::AgenticCoding => ScenarioType::AgenticCoding,
                    })
                    .collect()
            }),
            seq_lens: self.seq_lens.as_ref().map(|v| {
                v.iter()
                    .map(|s| match s {
                        SeqLen::OneKOneK => (1024, 1024),
                        SeqLen::EightKOneK => (8192, 1024),
                    })
                    .collect()
            }),
            evals: if self.no_evals {
                EvalMode::NoEvals
            } else if self.all_evals {
                EvalMode::AllEvals
            } else if self.evals_only {
                EvalMode::EvalsOnly
            } else {
                EvalMode::Default
            },
        }
    }
}

#[derive(Args)]
#[command(allow_negative_numbers = true, args_override_self = true)]
pub(crate) struct FullSweepArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Keep entries whose config key starts with any of these.
    #[arg(long, num_args = 1.., action = ArgAction::Set, value_name = "PREFIX")]
    model_prefix: Option<Vec<String>>,
    /// Keep entries whose precision is one of these.
    #[arg(long, num_args = 1.., action = ArgAction::Set)]
    precision: Option<Vec<String>>,
    /// Keep entries whose framework is one of these.
    #[arg(long, num_args = 1.., action = ArgAction::Set)]
    framework: Option<Vec<String>>,
    /// Keep entries whose runner label is one of these (each must be a label in the runner file).
    #[arg(long, num_args = 1.., action = ArgAction::Set, value_name = "LABEL")]
    runner_type: Option<Vec<String>>,
    /// Multiplier between concurrency values of a range (> 1).
    #[arg(long, default_value_t = 2)]
    step_size: i64,
    /// Lower concurrency bound (moves a range's start; filters lists).
    #[arg(long)]
    min_conc: Option<i64>,
    /// Upper concurrency bound (moves a range's end; filters lists, keeping max-conc if nothing is left).
    #[arg(long)]
    max_conc: Option<i64>,
    /// Single-node fixed rows: drop search-space entries with tp above this.
    #[arg(long)]
    max_tp: Option<i64>,
    /// Single-node fixed rows: clamp ep to this.
    #[arg(long)]
    max_ep: Option<i64>,
    /// Generate single-node rows (default: both kinds).
    #[arg(long)]
    single_node: bool,
    /// Generate multi-node rows (default: both kinds).
    #[arg(long)]
    multi_node: bool,
}

#[derive(Args)]
#[command(allow_negative_numbers = true, args_override_self = true)]
pub(crate) struct TestConfigArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Config keys or glob patterns (`*`, `?`, `[abc]`, `[!abc]`); matches in config order.
    #[arg(long, num_args = 1.., action = ArgAction::Set, required = true, value_name = "KEY")]
    config_keys: Vec<String>,
    /// Keep only these concurrency values (intersection, in config order).
    #[arg(long, num_args = 1.., action = ArgAction::Set)]
    conc: Option<Vec<i64>>,
}

/// A generation error as a failure (its kind from `sweep_cli::Classify`:
/// an invalid config or runner file is 1, one that cannot be read is 2),
/// annotated on the config file and line it names.
pub(crate) fn failure(e: GenError) -> Failure {
    let at = match &e {
        GenError::Config(c) => Some((c.file.display().to_string(), c.line)),
        GenError::Generate(_) => None,
    };
    let f = Failure::from(e);
    match &at {
        Some((file, line)) => f.at((Some(file), *line)),
        None => f,
    }
}

fn rows_out(rows: &[Row]) -> Outcome {
    sweep_cli::stdout::println_json(rows);
    Ok(())
}

pub(crate) fn load(common: &CommonArgs) -> Result<LoadedConfigs, GenError> {
    let mut loaded = LoadedConfigs::load(&common.config_files, &common.runner_config)?;
    // full-sweep and test-config need only the typed fields.
    loaded.masters.drop_raw();
    for w in &loaded.masters.warnings {
        eprintln!("{w}");
    }
    Ok(loaded)
}

pub(crate) fn full_sweep(a: &FullSweepArgs) -> Outcome {
    rows_out(&full_sweep_rows(a)?)
}

/// Usage errors (a bad flag value) are exit 2, as clap's own.
pub(crate) fn full_sweep_rows(a: &FullSweepArgs) -> Result<Vec<Row>, Failure> {
    if a.step_size <= 1 {
        return Err(Failure::failed_msg(format!(
            "--step-size must be greater than 1, got {}",
            a.step_size
        )));
    }
    if let (Some(min), Some(max)) = (a.min_conc, a.max_conc)
        && min > max
    {
        return Err(Failure::failed_msg(format!(
            "--min-conc ({min}) must be <= --max-conc ({max})"
        )));
    }
    let both = a.single_node == a.multi_node;
    let opts = FullSweepOptions {
        common: a.common.options(),
        model_prefix: a.model_prefix.clone(),
        precision: a.precision.clone(),
        framework: a.framework.clone(),
        runner_type: a.runner_type.clone(),
        step_size: a.step_size,
        min_conc: a.min_conc,
        max_conc: a.max_conc,
        max_tp: a.max_tp,
        max_ep: a.max_ep,
        single_node: both || a.single_node,
        multi_node: both || a.multi_node,
    };
    load(&a.common)
        .and_then(|l| generate_full_sweep(&l, &opts))
        .map_err(failure)
}

pub(crate) fn test_config(a: &TestConfigArgs) -> Outcome {
    rows_out(&test_config_rows(a)?)
}

pub(crate) fn test_config_rows(a: &TestConfigArgs) -> Result<Vec<Row>, Failure> {
    let opts = TestConfigOptions {
        common: a.common.options(),
        config_keys: a.config_keys.clone(),
        conc: a.conc.clone(),
    };
    load(&a.common)
        .and_then(|l| generate_test_config(&l, &opts))
        .map_err(failure)
}
