//! `generate-matrix`: expand InferenceX master configs into the benchmark job
//! matrix (a drop-in for `utils/matrix_logic/generate_sweep_configs.py` and
//! `utils/ci_priority.py`). Thin CLI over the `sweep_matrix` library;
//! the subcommands' flags and file handling are in [`cmd`].
//!
//! Exit codes (the contract of `sweep_cli`, docs/exit-codes.md): 0 success,
//! 1 invalid input (config, runner file, policy, generation), 2 could not do
//! the job (usage error, unreadable file, bad flag value, I/O). Nothing is
//! written to stdout on failure.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use sweep_cli::Outcome;

mod cmd;

/// The tool's name in `generate-matrix: error: …` messages.
pub(crate) const TOOL: &str = "generate-matrix";

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
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Expand every config entry (with optional filters) into matrix rows.
    #[command(
        after_help = "Example:\n  generate-matrix full-sweep --config-files configs/amd-master.yaml configs/nvidia-master.yaml \\\n    --runner-config configs/runners.yaml --seq-lens 1k1k --max-conc 64 --single-node"
    )]
    FullSweep(cmd::generate::FullSweepArgs),
    /// Expand only the named config keys (exact keys or shell-style globs).
    #[command(
        after_help = "Example:\n  generate-matrix test-config --config-files configs/nvidia-master.yaml \\\n    --config-keys 'dsr1-fp4-*' --conc 4 64 --no-evals"
    )]
    TestConfig(cmd::generate::TestConfigArgs),
    /// Turn the perf-changelog entries added between two git refs into the bucketed sweep matrix.
    Changelog(cmd::changelog::ChangelogArgs),
    /// Annotate a matrix (JSON on stdin or --input) with CI priority and queue tokens.
    Priority(cmd::priority::PriorityArgs),
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
    FromLine(cmd::from_command::FromCommandArgs),
    /// Cut a search-space config file into parts of at most 256 legs: the parts lists (setup) or one part's rows (the leg workflow's plan job).
    Split(cmd::legs::SplitArgs),
    /// Validate the caller's extra leg environment and append it to $GITHUB_ENV.
    LegEnv(cmd::legs::LegEnvArgs),
    /// Write a multi-node row's worker additional-settings as checked KEY=VALUE lines.
    WorkerSettings(cmd::legs::WorkerSettingsArgs),
    /// Write the changelog_metadata of a search-space config file.
    ChangelogMetadata(cmd::legs::MetadataArgs),
}

fn run(cli: &Cli) -> Outcome {
    match &cli.command {
        Command::FullSweep(a) => cmd::generate::full_sweep(a),
        Command::TestConfig(a) => cmd::generate::test_config(a),
        Command::Changelog(a) => cmd::changelog::run(a),
        Command::Priority(a) => cmd::priority::run(a),
        Command::SweepPolicy(a) => cmd::policy::run(a),
        Command::Canary(a) => cmd::canary::run(a),
        Command::FromLine(a) => cmd::from_command::from_command(a),
        Command::Split(a) => cmd::legs::run_split(a),
        Command::LegEnv(a) => cmd::legs::run_leg_env(a),
        Command::WorkerSettings(a) => cmd::legs::run_worker_settings(a),
        Command::ChangelogMetadata(a) => cmd::legs::run_metadata(a),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    sweep_cli::main(TOOL, || run(&cli))
}
