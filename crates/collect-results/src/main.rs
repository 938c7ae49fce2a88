//! `collect-results`: normalise, aggregate and check benchmark and eval
//! results. Thin CLI over the `collect_results` library.
//!
//! Exit codes (the contract of `sweep_model::exit`): 0 ok; 1 an input
//! rejected or a check failed (`validate-scores`, `REQUIRE_POWER` without
//! valid power, an invalid result file); 2 could not do the job (usage
//! error, missing variable, unreadable input, failed write).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use collect_results::{agentic, aggregate, evals, process, summary, validate};
use sweep_model::exit;
use sweep_model::gha::{self, Level};

#[derive(Parser)]
#[command(
    name = "collect-results",
    version,
    about = "Normalise, aggregate and check benchmark and eval results"
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
    /// Collect every `*.json` under RESULTS_DIR into `agg_<EXP_NAME>.json`.
    Aggregate {
        results_dir: String,
        exp_name: String,
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
    ValidateScores {
        /// Fallback minimum score when no threshold matches.
        #[arg(long, default_value = "0.85", value_parser = parse_float_like_python)]
        min_score: f64,
        /// Thresholds file (YAML or JSON): `default.<task>`, `models.<prefix>.<task>`.
        #[arg(long)]
        thresholds: Option<PathBuf>,
        /// `meta_env.json` used for the model prefix and the batch manifest.
        #[arg(long, default_value = "meta_env.json")]
        meta_env: String,
        /// Model prefix (default: meta_env.json, then $MODEL_PREFIX).
        #[arg(long)]
        model_prefix: Option<String>,
        /// Only metrics whose name starts with this are checked.
        #[arg(long, default_value = "exact_match,", allow_hyphen_values = true)]
        metric_prefix: String,
        /// Glob for the result files.
        #[arg(long, default_value = "results*.json")]
        results_glob: String,
        /// Space-separated concurrencies the workflow requested.
        #[arg(long, allow_hyphen_values = true)]
        expected_concs: Option<String>,
    },
    /// Check an agentic leg's aiperf aggregate (`profile_export_aiperf.json`
    /// in ARTIFACT_DIR or its first run subdirectory): requests recorded and
    /// the error fraction within the threshold.
    ValidateAgentic {
        artifact_dir: PathBuf,
        /// Maximum accepted error fraction (inclusive), between 0 and 1.
        #[arg(long, env = "AIPERF_FAILED_REQUEST_THRESHOLD", value_parser = parse_fraction)]
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

fn parse_float_like_python(s: &str) -> Result<f64, String> {
    sweep_model::python::python_float(s).ok_or_else(|| format!("invalid float value: '{s}'"))
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    match sweep_model::python::python_float(s) {
        Some(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Some(_) => Err("must be between 0 and 1".to_owned()),
        None => Err(format!("invalid float value: '{s}'")),
    }
}

/// Prints an error (and its annotation inside Actions) and returns `code`
/// (`sweep_model::exit`).
fn fail(context: &str, err: &dyn std::fmt::Display, code: u8) -> ExitCode {
    fail_at(context, err, (None, None), code)
}

/// [`fail`] with the file (and line) the error is about, for the annotation.
fn fail_at(
    context: &str,
    err: &dyn std::fmt::Display,
    (file, line): (Option<&str>, Option<usize>),
    code: u8,
) -> ExitCode {
    let msg = format!("{context}: {err:#}");
    eprintln!("error: {msg}");
    gha::annotate(Level::Error, file, line, &msg);
    ExitCode::from(code)
}

/// `process`: a result file or run description that is invalid is the
/// check saying no (1); a missing variable, an unreadable result or a
/// failed write means the job could not be done (2).
fn process_exit_code(e: &process::ProcessError) -> u8 {
    use process::ProcessError as E;
    match e {
        E::MissingVars(_) | E::Read { .. } | E::Write { .. } => exit::FAILED,
        _ => exit::REJECTED,
    }
}

/// `aggregate`: a result file that is invalid JSON or over the limits is
/// the check saying no (1); a directory or file that cannot be listed, read
/// or written means the job could not be done (2).
fn aggregate_exit_code(e: &aggregate::AggregateError) -> u8 {
    use aggregate::AggregateError as E;
    match e {
        E::Tree(_) | E::Read { .. } | E::Write { .. } => exit::FAILED,
        E::TooLarge { .. } | E::TooDeep { .. } | E::Json { .. } => exit::REJECTED,
    }
}

fn step_summary(md: &str) {
    if gha::in_actions()
        && let Err(e) = gha::append_step_summary(md)
    {
        eprintln!("warning: cannot append to $GITHUB_STEP_SUMMARY: {e}");
    }
}

fn cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

fn env_lookup(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

fn run_process() -> ExitCode {
    let dir = cwd();
    match process::run(&env_lookup, &dir) {
        Ok(out) => {
            for m in &out.power.messages {
                eprintln!("{m}");
            }
            if let Some(line) = &out.power.stdout_line {
                sweep_model::stdout::println(line);
            }
            match serde_json::to_string_pretty(&out.row) {
                Ok(s) => sweep_model::stdout::println(&s),
                Err(e) => return fail("process", &e, exit::FAILED),
            }
            if out.power.fail_exit && !out.power.valid {
                exit::rejected()
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => fail_at("process", &e, e.location(), process_exit_code(&e)),
    }
}

fn run_aggregate(results_dir: &str, exp_name: &str) -> ExitCode {
    // Relative paths keep error messages as the user wrote them.
    match aggregate::run(Path::new(results_dir), exp_name, Path::new("")) {
        Ok(report) => {
            eprintln!("{}", summary::aggregate_line(&report, results_dir));
            step_summary(&summary::aggregate_markdown(&report, results_dir));
            ExitCode::SUCCESS
        }
        Err(e) => fail_at("aggregate", &e, e.location(), aggregate_exit_code(&e)),
    }
}

fn run_evals(root: &str, exp_name: &str, sort_by: Option<&str>) -> ExitCode {
    let dir = cwd();
    match evals::run(root, exp_name, &dir, &dir) {
        Ok(report) => {
            // Unparseable files are left out (the reference skips them);
            // each is named so a broken upload is not silently lost.
            for p in &report.skipped.unparseable_files {
                let shown = p.strip_prefix(&dir).unwrap_or(p).display().to_string();
                let msg = format!("{shown}: not a valid JSON object; left out of the eval table");
                gha::annotate(Level::Warning, Some(&shown), None, &msg);
                eprintln!("warning: {msg}");
            }
            sweep_model::stdout::print(&evals::render_markdown(
                &report.rows,
                sort_by.unwrap_or("model_prefix"),
            ));
            eprintln!("{}", summary::evals_line(&report));
            step_summary(&summary::evals_markdown(&report, root));
            ExitCode::SUCCESS
        }
        // Could not do the job: there were results but none readable, or
        // the table could not be written.
        Err(e) => fail("evals", &e, exit::FAILED),
    }
}

fn run_validate(opts: validate::ValidateOptions, dir: &Path) -> ExitCode {
    let outcome = validate::run(&opts, dir);
    for (stream, line) in &outcome.lines {
        match stream {
            validate::Stream::Out => {
                sweep_model::stdout::println(line);
            }
            validate::Stream::Err => eprintln!("{line}"),
        }
    }
    ExitCode::from(outcome.exit)
}

/// `validate-agentic*`: an invalid result is the check saying no (1); a
/// missing or unreadable one leaves nothing to judge (2).
fn agentic_exit(context: &str, e: &agentic::AgenticError) -> ExitCode {
    let code = if e.is_unreadable() {
        exit::FAILED
    } else {
        exit::REJECTED
    };
    fail(context, e, code)
}

fn run_validate_agentic(artifact_dir: &Path, threshold: f64) -> ExitCode {
    match agentic::validate_result(artifact_dir, threshold) {
        Ok(ok) => {
            sweep_model::stdout::println(&ok.to_string());
            ExitCode::SUCCESS
        }
        Err(e) => agentic_exit("validate-agentic", &e),
    }
}

fn run_validate_agentic_results(result_filename: &str, conc_list: &str) -> ExitCode {
    let expected = conc_list.split_whitespace().count();
    match agentic::validate_results(&cwd(), result_filename, expected) {
        Ok(files) => {
            for f in files {
                sweep_model::stdout::println(&format!(
                    "Found agentic result file: {}",
                    f.display()
                ));
            }
            ExitCode::SUCCESS
        }
        Err(e) => agentic_exit("validate-agentic-results", &e),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                exit::FAILED
            } else {
                exit::OK
            });
        }
    };
    match cli.command {
        Command::Process { .. } => run_process(),
        Command::Aggregate {
            results_dir,
            exp_name,
            ..
        } => run_aggregate(&results_dir, &exp_name),
        Command::Evals {
            root,
            exp_name,
            sort_by,
            ..
        } => run_evals(&root, &exp_name, sort_by.as_deref()),
        Command::ValidateScores {
            min_score,
            thresholds,
            meta_env,
            model_prefix,
            metric_prefix,
            results_glob,
            expected_concs,
        } => run_validate(
            validate::ValidateOptions {
                min_score,
                thresholds,
                meta_env,
                model_prefix,
                metric_prefix,
                results_glob,
                expected_concs,
                env_model_prefix: env_lookup("MODEL_PREFIX"),
            },
            &cwd(),
        ),
        Command::ValidateAgentic {
            artifact_dir,
            failed_request_threshold,
        } => run_validate_agentic(&artifact_dir, failed_request_threshold),
        Command::ValidateAgenticResults {
            result_filename,
            conc_list,
        } => run_validate_agentic_results(&result_filename, &conc_list),
    }
}
