//! `generate-matrix`: expand InferenceX master configs into the benchmark job
//! matrix (a drop-in for `utils/matrix_logic/generate_sweep_configs.py` and
//! `utils/ci_priority.py`). Thin CLI over the `sweep_matrix` library;
//! the subcommands' flags and file handling are in [`cmd`].
//!
//! Exit codes (the contract of `sweep_model::exit`): 0 success, 1 invalid
//! input (config, runner file, policy, generation), 2 could not do the job
//! (usage error, unreadable file, bad flag value, I/O). Nothing is written to
//! stdout on failure.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use serde_json::Value;
use sweep_matrix::generate::{
    CommonOptions, FullSweepOptions, LoadedConfigs, ScenarioType, TestConfigOptions,
    generate_full_sweep, generate_test_config,
};
use sweep_matrix::priority;
use sweep_matrix::row::{EvalMode, GenError, Row};
use sweep_model::config::ConfigErrorKind;
use sweep_model::{exit, gha};

mod cmd;

#[derive(Parser)]
#[command(
    name = "generate-matrix",
    version,
    about = "Expand benchmark master configs into the CI job matrix (JSON on stdout)",
    long_about = "Expand InferenceX-style master configs (configs/*-master.yaml) and configs/runners.yaml \
into the JSON list of benchmark jobs that the sweep workflow fans out to GPU runners.\n\n\
Configs are validated strictly before anything is generated; an error names the file, the config key, \
the field path and the YAML line. Exit status: 0 ok, 1 invalid input, 2 usage error or unreadable file.",
    args_override_self = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Expand every config entry (with optional filters) into matrix rows.
    #[command(
        after_help = "Example:\n  generate-matrix full-sweep --config-files configs/amd-master.yaml configs/nvidia-master.yaml \\\n    --runner-config configs/runners.yaml --seq-lens 1k1k --max-conc 64 --single-node"
    )]
    FullSweep(FullSweepArgs),
    /// Expand only the named config keys (exact keys or shell-style globs).
    #[command(
        after_help = "Example:\n  generate-matrix test-config --config-files configs/nvidia-master.yaml \\\n    --config-keys 'dsr1-fp4-*' --conc 4 64 --no-evals"
    )]
    TestConfig(TestConfigArgs),
    /// Turn the perf-changelog entries added between two git refs into the bucketed sweep matrix.
    Changelog(cmd::changelog::ChangelogArgs),
    /// Annotate a matrix (JSON on stdin or --input) with CI priority and queue tokens.
    Priority(PriorityArgs),
    /// Decide what a GitHub event sweeps (label/trigger policy of workflow.md §3) as JSON and step outputs.
    SweepPolicy(cmd::policy::PolicyArgs),
    /// Split a search-space config into the canary row and the remaining config (workflow.md §5).
    Canary(cmd::canary::CanaryArgs),
    /// The manual entry: run a `full-sweep …` or `test-config …` command line (split by shell
    /// quoting rules, never evaluated) and print the bucketed search-space config.
    #[command(
        after_help = "Example:\n  generate-matrix from-command --command-line \\\n    'test-config --config-keys dsr1-fp8-b200-sglang --conc 4 8 --seq-lens 1k1k'"
    )]
    #[command(name = "from-command")]
    FromLine(FromCommandArgs),
    /// Cut a search-space config file into the fixed part jobs of run-sweep.yml (step outputs).
    Split(cmd::legs::SplitArgs),
    /// Validate the caller's extra leg environment and append it to $GITHUB_ENV.
    LegEnv(cmd::legs::LegEnvArgs),
    /// Write a multi-node row's worker additional-settings as checked KEY=VALUE lines.
    WorkerSettings(cmd::legs::WorkerSettingsArgs),
    /// Write the changelog_metadata of a search-space config file.
    ChangelogMetadata(cmd::legs::MetadataArgs),
}

#[derive(Args)]
struct FromCommandArgs {
    /// The command line: `full-sweep …` or `test-config …` (without the program name).
    /// Without --config-files, the changelog path's master configs are read.
    #[arg(long, env = "INPUT_COMMAND_LINE", value_name = "LINE")]
    command_line: String,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum SeqLen {
    #[value(name = "1k1k")]
    OneKOneK,
    #[value(name = "8k1k")]
    EightKOneK,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Scenario {
    #[value(name = "fixed-seq-len")]
    FixedSeqLen,
    #[value(name = "agentic-coding")]
    AgenticCoding,
}

#[derive(Args)]
struct CommonArgs {
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
struct FullSweepArgs {
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
struct TestConfigArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Config keys or glob patterns (`*`, `?`, `[abc]`, `[!abc]`); matches in config order.
    #[arg(long, num_args = 1.., action = ArgAction::Set, required = true, value_name = "KEY")]
    config_keys: Vec<String>,
    /// Keep only these concurrency values (intersection, in config order).
    #[arg(long, num_args = 1.., action = ArgAction::Set)]
    conc: Option<Vec<i64>>,
}

#[derive(Args)]
#[command(allow_negative_numbers = true, args_override_self = true)]
struct PriorityArgs {
    /// Priority policy (YAML).
    #[arg(
        long,
        env = "INPUT_POLICY",
        default_value = "configs/ci-priority.yaml",
        value_name = "FILE"
    )]
    policy: PathBuf,
    /// CI event name (push, pull_request, schedule, …).
    #[arg(long, env = "INPUT_EVENT_NAME", default_value = "")]
    event_name: String,
    /// JSON array of PR label names.
    #[arg(long, env = "INPUT_LABELS_JSON", default_value = "[]")]
    labels_json: String,
    /// Namespace mixed into queue tokens.
    #[arg(long, env = "INPUT_QUEUE_NAMESPACE", default_value = "local")]
    queue_namespace: String,
    /// PR number (enables skip-queue-pr with the skip-queue label).
    #[arg(long, env = "INPUT_PR_NUMBER")]
    pr_number: Option<i64>,
    /// JSON array of classifier criteria (criteria mode); empty or null = normal mode.
    #[arg(long, env = "INPUT_CRITERIA_JSON", default_value = "")]
    criteria_json: String,
    /// Read the matrix JSON from this file instead of stdin.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("generate-matrix: error: {msg}");
    exit::failed()
}

/// The exit code of a generation error: an invalid config or runner file is
/// the check saying no (1); one that cannot be read is a missing input (2).
fn gen_exit_code(e: &GenError) -> ExitCode {
    match e {
        GenError::Config(c) if c.kind == ConfigErrorKind::Unreadable => exit::failed(),
        GenError::Config(_) | GenError::Generate(_) => exit::rejected(),
    }
}

fn report(e: &GenError) -> ExitCode {
    eprintln!("generate-matrix: error: {e}");
    if let GenError::Config(c) = e {
        let file = c.file.display().to_string();
        gha::annotate(gha::Level::Error, Some(&file), c.line, &e.to_string());
    }
    gen_exit_code(e)
}

fn print_json(v: &Value) -> ExitCode {
    match serde_json::to_string(v) {
        Ok(s) => {
            sweep_model::stdout::println(&s);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("generate-matrix: error: cannot serialise output: {e}");
            exit::failed()
        }
    }
}

fn rows_out(rows: &[Row]) -> ExitCode {
    sweep_model::stdout::println_json(rows);
    ExitCode::SUCCESS
}

fn load(common: &CommonArgs) -> Result<LoadedConfigs, GenError> {
    let mut loaded = LoadedConfigs::load(&common.config_files, &common.runner_config)?;
    // full-sweep and test-config need only the typed fields.
    loaded.masters.drop_raw();
    for w in &loaded.masters.warnings {
        eprintln!("{w}");
    }
    Ok(loaded)
}

fn full_sweep(a: &FullSweepArgs) -> ExitCode {
    match full_sweep_rows(a) {
        Ok(rows) => rows_out(&rows),
        Err(code) => code,
    }
}

fn full_sweep_rows(a: &FullSweepArgs) -> Result<Vec<Row>, ExitCode> {
    if a.step_size <= 1 {
        return Err(usage_error(&format!(
            "--step-size must be greater than 1, got {}",
            a.step_size
        )));
    }
    if let (Some(min), Some(max)) = (a.min_conc, a.max_conc)
        && min > max
    {
        return Err(usage_error(&format!(
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
        .map_err(|e| report(&e))
}

fn test_config(a: &TestConfigArgs) -> ExitCode {
    match test_config_rows(a) {
        Ok(rows) => rows_out(&rows),
        Err(code) => code,
    }
}

fn test_config_rows(a: &TestConfigArgs) -> Result<Vec<Row>, ExitCode> {
    let opts = TestConfigOptions {
        common: a.common.options(),
        config_keys: a.config_keys.clone(),
        conc: a.conc.clone(),
    };
    load(&a.common)
        .and_then(|l| generate_test_config(&l, &opts))
        .map_err(|e| report(&e))
}

/// `from-command`: the command line is split by quoting rules (nothing is
/// evaluated) and parsed by this program's own `full-sweep` / `test-config`
/// parser, so it accepts exactly what those subcommands accept.
fn from_command(a: &FromCommandArgs) -> ExitCode {
    let mut words = match sweep_matrix::legs::command_words(&a.command_line) {
        Ok(w) => w,
        Err(e) => {
            gha::annotate(gha::Level::Error, None, None, &e);
            return usage_error(&e);
        }
    };
    if !words
        .iter()
        .any(|w| w == "--config-files" || w.starts_with("--config-files="))
    {
        words.push("--config-files".into());
        words.extend(sweep_matrix::legs::default_config_files());
    }
    let argv = std::iter::once("generate-matrix".to_string()).chain(words);
    let cli = match Cli::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) => {
            let msg = format!("command line {:?}: {}", a.command_line, e.render());
            gha::annotate(gha::Level::Error, None, None, msg.trim_end());
            eprintln!("generate-matrix: error: {msg}");
            return exit::failed();
        }
    };
    let rows = match &cli.command {
        Command::FullSweep(f) => full_sweep_rows(f),
        Command::TestConfig(t) => test_config_rows(t),
        _ => return usage_error("only full-sweep and test-config command lines are accepted"),
    };
    let rows = match rows {
        Ok(r) => r,
        Err(code) => return code,
    };
    let rows: Result<Vec<Value>, _> = rows.iter().map(serde_json::to_value).collect();
    let rows = match rows {
        Ok(r) => r,
        Err(e) => {
            eprintln!("generate-matrix: error: cannot serialise the rows: {e}");
            return exit::failed();
        }
    };
    if rows.is_empty() {
        let msg = format!(
            "command line {:?} selects no benchmark rows: nothing to sweep",
            a.command_line
        );
        gha::annotate(gha::Level::Error, None, None, &msg);
        eprintln!("generate-matrix: error: {msg}");
        return exit::rejected();
    }
    match sweep_matrix::legs::bucket_rows(rows, &a.command_line) {
        Ok(v) => print_json(&v),
        Err(e) => {
            eprintln!("generate-matrix: error: {e}");
            exit::rejected()
        }
    }
}

/// Why `priority` failed: the exit code (`sweep_model::exit`) and the message.
type PriorityFailure = (u8, String);

/// `priority`: an invalid policy file is the check saying no (1); an
/// unreadable policy, a bad flag value or an unreadable/malformed matrix
/// input means the job could not be done (2).
fn run_priority(a: &PriorityArgs) -> Result<Value, PriorityFailure> {
    let failed = |e: String| (exit::FAILED, e);
    let doc = sweep_model::yaml::load_file(&a.policy).map_err(|e| {
        let code = if e.unreadable {
            exit::FAILED
        } else {
            exit::REJECTED
        };
        (code, e.to_string())
    })?;
    let policy = priority::Policy::from_value(doc.into_value(), &a.policy.display().to_string())
        .map_err(|e| (exit::REJECTED, e.to_string()))?;
    let labels = priority::parse_string_array(&a.labels_json, "--labels-json")
        .map_err(|e| failed(e.to_string()))?
        .unwrap_or_default();
    let criteria = priority::parse_string_array(&a.criteria_json, "--criteria-json")
        .map_err(|e| failed(e.to_string()))?;
    let text = match &a.input {
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| failed(format!("cannot read {}: {e}", p.display())))?,
        None => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| failed(format!("cannot read stdin: {e}")))?;
            s
        }
    };
    let payload: Value = serde_json::from_str(&text)
        .map_err(|e| failed(format!("matrix input is not valid JSON: {e}")))?;
    let ctx = priority::Context {
        event_name: a.event_name.clone(),
        labels,
        queue_namespace: a.queue_namespace.clone(),
        pr_number: a.pr_number,
        criteria,
    };
    priority::annotate(&payload, &policy, &ctx).map_err(|e| failed(e.to_string()))
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(exit::FAILED));
        }
    };
    match &cli.command {
        Command::FullSweep(a) => full_sweep(a),
        Command::TestConfig(a) => test_config(a),
        Command::Changelog(a) => cmd::changelog::run(a),
        Command::Priority(a) => match run_priority(a) {
            Ok(v) => print_json(&v),
            Err((code, e)) => {
                eprintln!("generate-matrix priority: error: {e}");
                ExitCode::from(code)
            }
        },
        Command::SweepPolicy(a) => cmd::policy::run(a),
        Command::Canary(a) => cmd::canary::run(a),
        Command::FromLine(a) => from_command(a),
        Command::Split(a) => cmd::legs::run_split(a),
        Command::LegEnv(a) => cmd::legs::run_leg_env(a),
        Command::WorkerSettings(a) => cmd::legs::run_worker_settings(a),
        Command::ChangelogMetadata(a) => cmd::legs::run_metadata(a),
    }
}
