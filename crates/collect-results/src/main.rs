//! `collect-results`: normalise, aggregate and check benchmark and eval
//! results. Thin CLI over the `collect_results` library.
//!
//! Exit codes (the contract of `sweep_cli`, docs/exit-codes.md): 0 ok; 1 an input
//! rejected or a check failed (`validate-scores`, `REQUIRE_POWER` without
//! valid power, an invalid result file, no result from a sweep's
//! legs); 2 could not do the job (usage
//! error, missing variable, unreadable input, failed write).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

/// The contract of docs/tools/index.md#exit-codes, as this tool keeps it.
const EXIT_CODES: &str = "Exit codes: 0 done; 1 the check said no (an invalid result, run \
description or result file, legs expected and no result row, a failed agentic validation; per \
subcommand in docs/tools/collect-results.md); 2 could not do the job (a usage error, a missing \
variable, an unreadable file or directory, a failed write).";

#[derive(Parser)]
#[command(
    name = "collect-results",
    version,
    about = "Normalise, aggregate and check benchmark and eval results",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Normalise `<RESULT_FILENAME>.json` into `agg_<RESULT_FILENAME>.json`
    /// plus `power_validation_<RESULT_FILENAME>.json` (configured by the
    /// benchmark template's environment variables).
    Process {
        /// Ignored, as the reference script ignores extra arguments.
        #[arg(hide = true, allow_hyphen_values = true)]
        _extra: Vec<String>,
    },
    /// Normalise each result file of a multi-node leg,
    /// `<RESULT_FILENAME>_*.json`, as `process` with that file's stem and
    /// its workers' GPUs from its name (`_gpus_<n>[_ctx_<p>_gen_<d>]`);
    /// `POWER_PRODUCER_SHA` from the launcher's `power-producer-sha.txt`
    /// when unset. Exit 1 when no file names its GPUs.
    ProcessLeg {
        /// The leg's result file stem.
        #[arg(long, env = "RESULT_FILENAME")]
        result_filename: String,
    },
    /// Collect every `*.json` under RESULTS_DIR into `agg_<EXP_NAME>.json`.
    Aggregate {
        results_dir: String,
        exp_name: String,
        /// Legs the sweep scheduled: with more than 0 and not one result
        /// row found, exit 1 and write nothing (unset: no expectation, an
        /// empty directory gives `[]` as in the reference).
        #[arg(long, env = "INPUT_EXPECTED_LEGS")]
        expected_legs: Option<u64>,
        /// Ignored, as the reference script ignores extra arguments.
        #[arg(hide = true, allow_hyphen_values = true)]
        _extra: Vec<String>,
    },
    /// Collect lm-eval results under ROOT into `agg_eval_<EXP_NAME>.json`
    /// and print a markdown summary.
    Evals {
        root: String,
        exp_name: String,
        /// `hw` sorts the printed tables by hardware first; anything else by model prefix.
        sort_by: Option<String>,
        /// Ignored, as the reference script ignores extra arguments.
        #[arg(hide = true, allow_hyphen_values = true)]
        _extra: Vec<String>,
    },
    /// Check eval scores in the working directory against thresholds.
    #[command(infer_long_args = true)]
    ValidateScores(cmd::validate::ValidateScoresArgs),
    /// Check an agentic leg's aiperf aggregate (`profile_export_aiperf.json`
    /// in ARTIFACT_DIR or its first run subdirectory): requests recorded and
    /// the error fraction within the threshold.
    ValidateAgentic {
        artifact_dir: PathBuf,
        /// Maximum accepted error fraction (inclusive), between 0 and 1.
        #[arg(long, env = "AIPERF_FAILED_REQUEST_THRESHOLD", value_parser = cmd::agentic::parse_fraction)]
        failed_request_threshold: f64,
    },
    /// Check a multi-node agentic leg's results: one
    /// `<RESULT_FILENAME>_conc*.json` per concurrency, each with successful requests.
    ValidateAgenticResults {
        /// Result file stem (the files are `<stem>_conc*.json` in the working directory).
        #[arg(long, env = "RESULT_FILENAME")]
        result_filename: String,
        /// Space-separated concurrencies of the leg (one result expected per value).
        #[arg(long, env = "CONC_LIST", allow_hyphen_values = true)]
        conc_list: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    sweep_cli::main("collect-results", || match cli.command {
        Command::Process { .. } => cmd::process::run_process(),
        Command::ProcessLeg { result_filename } => cmd::process::run_process_leg(&result_filename),
        Command::Aggregate {
            results_dir,
            exp_name,
            expected_legs,
            ..
        } => cmd::aggregate::run_aggregate(&results_dir, &exp_name, expected_legs),
        Command::Evals {
            root,
            exp_name,
            sort_by,
            ..
        } => cmd::evals::run_evals(&root, &exp_name, sort_by.as_deref()),
        Command::ValidateScores(args) => cmd::validate::run_validate_scores(args),
        Command::ValidateAgentic {
            artifact_dir,
            failed_request_threshold,
        } => cmd::agentic::run_validate_agentic(&artifact_dir, failed_request_threshold),
        Command::ValidateAgenticResults {
            result_filename,
            conc_list,
        } => cmd::agentic::run_validate_agentic_results(&result_filename, &conc_list),
    })
}
