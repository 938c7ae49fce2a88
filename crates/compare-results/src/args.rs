//! The flags of `compare-results` (clap stays in the binary; the library
//! takes plain [`Options`]) and their value parsers.

use clap::Parser;
use compare_results::compare::Repeats;
use compare_results::load::BaselineFormat;
use compare_results::metrics::MetricSet;
use compare_results::run::{BaselineFrom, MAX_BASELINE_RUNS, MAX_HISTORY_MIN_RUNS, Options};
use sweep_series::boundary::{MIN_SAMPLES, Settings};

/// Compare a sweep with its baseline: per-point deltas, a regression
/// verdict, an eval table and a chart.
///
/// Exit status: 0 done (also with regressions unless --fail-on-regression),
/// 1 regressions with --fail-on-regression, 2 bad usage or unreadable input.
#[derive(Debug, Parser)]
#[command(name = "compare-results", version)]
pub(crate) struct Args {
    /// New results: an agg_bmk.json or a directory of result JSON files
    /// (the reference's positional <results_dir>).
    #[arg(value_name = "RESULTS")]
    pub(crate) results: Option<String>,

    /// New results (same as the positional argument).
    #[arg(long, env = "INPUT_NEW")]
    pub(crate) new: Option<String>,

    /// New evals: agg_eval_all.json.
    #[arg(long, env = "INPUT_NEW_EVALS")]
    pub(crate) new_evals: Option<String>,

    /// Baseline results: an earlier agg_bmk.json (file or directory) or a
    /// saved benchmarks-API response. Give it once per earlier run (or one
    /// path per line in INPUT_BASELINE): rows of one point across them are
    /// repeats, judged by the noise rule.
    #[arg(long, env = "INPUT_BASELINE", action = clap::ArgAction::Append, value_delimiter = '\n')]
    pub(crate) baseline: Vec<String>,

    /// How to read --baseline / --baseline-url rows.
    #[arg(
        long,
        env = "INPUT_BASELINE_FORMAT",
        value_parser = parse_format,
        default_value = "auto"
    )]
    pub(crate) baseline_format: BaselineFormat,

    /// Fetch the baseline from the benchmarks API, e.g.
    /// .../api/v1/benchmarks?model=Qwen-3.5-397B-A17B&date=2026-08-01&exact=true
    /// Give it once per earlier run (say, one URL per date; one per line in
    /// INPUT_BASELINE_URL).
    #[arg(long, env = "INPUT_BASELINE_URL", action = clap::ArgAction::Append, value_delimiter = '\n')]
    pub(crate) baseline_url: Vec<String>,

    /// Where else the baseline comes from: `last-main-run`, the
    /// `results_bmk` artifact of the newest successful push run of
    /// --baseline-workflow on the default branch (Actions API; needs a
    /// token with `actions: read` in GH_TOKEN or GITHUB_TOKEN; no such run
    /// is "no baseline", every point unmatched, exit 0); or `history`,
    /// main's history in --history: each point against its own series,
    /// judged by the boundary learnt from it.
    #[arg(long, env = "INPUT_BASELINE_FROM", value_parser = parse_from)]
    pub(crate) baseline_from: Option<BaselineFrom>,

    /// With --baseline-from history: the history store, a folder (the
    /// checkout of the `sweepkit-history` data branch) or a postgres:// URL.
    #[arg(long, env = "INPUT_HISTORY", hide_env_values = true)]
    pub(crate) history: Option<String>,

    /// With --baseline-from history: main runs a series needs since its
    /// last change point before a boundary is learnt; with fewer, the
    /// tolerance judges the point and the report says so.
    #[arg(long, env = "INPUT_HISTORY_MIN_RUNS", default_value_t = MIN_SAMPLES, value_parser = parse_min_runs)]
    pub(crate) history_min_runs: usize,

    /// With --baseline-from history: one-sided confidence of the learnt
    /// boundary (0.99: one stable run in a hundred crosses it by chance).
    #[arg(long, env = "INPUT_HISTORY_CONFIDENCE", default_value_t = 0.99, value_parser = parse_confidence)]
    pub(crate) history_confidence: f64,

    /// With --baseline-from history: the least change from the series'
    /// mean that can count as a regression (a fraction or N%), so a very
    /// quiet series does not flag a change nobody would act on.
    #[arg(long, env = "INPUT_HISTORY_MIN_CHANGE", default_value = "2%", value_parser = parse_min_change)]
    pub(crate) history_min_change: f64,

    /// With --baseline-from: the repository (`owner/name`).
    #[arg(long, env = "GITHUB_REPOSITORY")]
    pub(crate) repo: Option<String>,

    /// With --baseline-from: the workflow file whose runs are looked up
    /// (the caller's file, as reuse-sweep looks runs up).
    #[arg(long, env = "INPUT_BASELINE_WORKFLOW", default_value = "run-sweep.yml")]
    pub(crate) baseline_workflow: String,

    /// With --baseline-from: the branch (default: the repository's default
    /// branch, read from the API).
    #[arg(long, env = "INPUT_BASELINE_BRANCH")]
    pub(crate) baseline_branch: Option<String>,

    /// With --baseline-from: this run's id, never its own baseline.
    #[arg(long, env = "GITHUB_RUN_ID")]
    pub(crate) run_id: Option<String>,

    /// PostgreSQL database with the InferenceX schema; used when neither
    /// --baseline nor --baseline-url is given.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub(crate) database_url: Option<String>,

    /// With --database-url: the newest N error-free main-branch runs of
    /// each point form its baseline (default 1, at most 20).
    #[arg(long, env = "INPUT_BASELINE_RUNS", value_parser = parse_runs)]
    pub(crate) baseline_runs: Option<u32>,

    /// Rows sharing a point key on one side: pool (repeats: means, spread
    /// and the noise rule) or first (the first row is used, the rest are
    /// listed as duplicates).
    #[arg(long, env = "INPUT_REPEATS", value_parser = parse_repeats, default_value = "pool")]
    pub(crate) repeats: Repeats,

    /// Baseline evals (agg_eval_all.json) to flag significant score drops.
    #[arg(long, env = "INPUT_BASELINE_EVALS")]
    pub(crate) baseline_evals: Option<String>,

    /// Eval thresholds (validate-scores format, JSON or YAML).
    #[arg(long, env = "INPUT_THRESHOLDS")]
    pub(crate) thresholds: Option<String>,

    /// Label of the baseline in the report heading.
    #[arg(long, env = "INPUT_BASELINE_LABEL")]
    pub(crate) baseline_label: Option<String>,

    /// Metric set: default (4), extended, or reference (the 13-metric
    /// compare_results.py table).
    #[arg(long, env = "INPUT_METRICS", value_parser = parse_metrics, default_value = "default")]
    pub(crate) metrics: MetricSet,

    /// Per-metric tolerance, METRIC=N% or METRIC=FRACTION below 1
    /// (repeatable or comma-separated), e.g. TTFT=15% or mean_ttft=0.15:
    /// METRIC is a key or the short name the report prints (tput, output
    /// tput, TPOT, TTFT). A bare number of 1 or more (tput=5) and anything
    /// above 100% are refused.
    #[arg(
        long = "tolerance",
        env = "INPUT_TOLERANCES",
        value_delimiter = ',',
        value_parser = parse_tolerance
    )]
    pub(crate) tolerances: Vec<String>,

    /// Policy file (JSON or YAML): {"tolerances": {metric: fraction},
    /// "strict": bool}; --tolerance and --strict override it.
    #[arg(long, env = "INPUT_POLICY")]
    pub(crate) policy: Option<String>,

    /// A point regresses only on a throughput metric or on two latency
    /// metrics.
    #[arg(long, env = "INPUT_STRICT")]
    pub(crate) strict: bool,

    /// Write the report laid out for a PR comment here: the largest
    /// regressions, one line per configuration, folded tables of the
    /// points beyond tolerance, within the comment's size.
    #[arg(long, env = "INPUT_MARKDOWN")]
    pub(crate) markdown: Option<String>,

    /// Write the full report here (every point of every configuration; the
    /// same report goes to stdout and the job summary), e.g. for the
    /// `compare-report` artifact.
    #[arg(long, env = "INPUT_FULL_MARKDOWN")]
    pub(crate) full_markdown: Option<String>,

    /// Write the JSON report here (no SVG: ask for one with --svg).
    #[arg(long, env = "INPUT_JSON")]
    pub(crate) json: Option<String>,

    /// Write the SVG chart here (none unless asked: `--json` alone writes
    /// no SVG).
    #[arg(long, env = "INPUT_SVG")]
    pub(crate) svg: Option<String>,

    /// Write one PNG chart per configuration into this directory (created
    /// when missing), with `charts.json` listing them: configuration,
    /// file, regressed points, and with `--baseline-from history` the
    /// configuration's trend over main's runs (`<stem>.trend.png`). 880 px
    /// wide, text at least 14 px, the font bundled (the pictures do not
    /// depend on the machine).
    #[arg(long, env = "INPUT_CHARTS_DIR")]
    pub(crate) charts_dir: Option<String>,

    /// Leave the mermaid charts out of the markdown.
    #[arg(long, env = "INPUT_NO_CHART")]
    pub(crate) no_chart: bool,

    /// Exit 1 when the verdict is "regressions".
    #[arg(long, env = "INPUT_FAIL_ON_REGRESSION")]
    pub(crate) fail_on_regression: bool,

    /// Timeout in seconds for --baseline-url.
    #[arg(long, env = "INPUT_TIMEOUT", default_value_t = 60)]
    pub(crate) timeout: u64,
}

impl Args {
    /// The run's options: the flags' values as they are.
    pub(crate) fn options(self) -> Options {
        Options {
            results: self.results,
            new: self.new,
            new_evals: self.new_evals,
            baseline: self.baseline,
            baseline_format: self.baseline_format,
            baseline_url: self.baseline_url,
            baseline_from: self.baseline_from,
            history: self.history,
            history_settings: Settings {
                confidence: self.history_confidence,
                min_change: self.history_min_change,
                min_samples: self.history_min_runs,
                ..Settings::default()
            },
            repo: self.repo,
            baseline_workflow: self.baseline_workflow,
            baseline_branch: self.baseline_branch,
            run_id: self.run_id,
            database_url: self.database_url,
            baseline_runs: self.baseline_runs,
            repeats: self.repeats,
            baseline_evals: self.baseline_evals,
            thresholds: self.thresholds,
            baseline_label: self.baseline_label,
            metrics: self.metrics,
            tolerances: self.tolerances,
            policy: self.policy,
            strict: self.strict,
            markdown: self.markdown,
            full_markdown: self.full_markdown,
            json: self.json,
            svg: self.svg,
            charts_dir: self.charts_dir,
            no_chart: self.no_chart,
            fail_on_regression: self.fail_on_regression,
            timeout: self.timeout,
        }
    }
}

/// A flag value that is not one of those accepted: clap reports it as a
/// usage error (exit 2), naming the flag.
#[derive(Debug, thiserror::Error)]
#[error("'{value}': expected {expected}")]
pub(crate) struct BadValue {
    value: String,
    expected: String,
}

fn bad(value: &str, expected: impl Into<String>) -> BadValue {
    BadValue {
        value: value.to_string(),
        expected: expected.into(),
    }
}

/// A `--tolerance` value that would not mean what it says.
#[derive(Debug, thiserror::Error)]
#[error("'{value}': {why}")]
pub(crate) struct BadTolerance {
    value: String,
    why: String,
}

/// Checks the unit of a `METRIC=VALUE` tolerance (the metric name is
/// checked later, against the metric set): `N%` up to 100, or a fraction
/// below 1. A bare `5` would be read as 500 %, so it is refused with the
/// spelling that was meant. Empty (an unset action input) passes.
fn parse_tolerance(s: &str) -> Result<String, BadTolerance> {
    let t = s.trim();
    let refuse = |why: String| BadTolerance {
        value: t.to_string(),
        why,
    };
    let Some((metric, value)) = t.split_once('=') else {
        if t.is_empty() {
            return Ok(String::new());
        }
        return Err(refuse(
            "expected METRIC=N% or METRIC=FRACTION, e.g. TTFT=15% or mean_ttft=0.15".into(),
        ));
    };
    let (metric, value) = (metric.trim(), value.trim());
    if let Some(pct) = value.strip_suffix('%') {
        match pct.trim().parse::<f64>() {
            Ok(p) if p.is_finite() && (0.0..=100.0).contains(&p) => {}
            Ok(p) if p.is_finite() && p > 100.0 => {
                return Err(refuse(format!(
                    "{pct}% is above 100 %: a tolerance is the relative change a point may move \
                     before it counts as a regression; write at most {metric}=100%"
                )));
            }
            _ => {
                return Err(refuse(format!(
                    "'{value}' is not a percentage from 0% to 100%, e.g. {metric}=5%"
                )));
            }
        }
    } else {
        match value.parse::<f64>() {
            Ok(f) if f.is_finite() && (0.0..1.0).contains(&f) => {}
            Ok(f) if f.is_finite() && f >= 1.0 => {
                return Err(refuse(format!(
                    "a bare number is a fraction, so {value} would mean {} %; write \
                     {metric}={value}% for {value} percent (or {metric}={} as a fraction)",
                    f * 100.0,
                    f / 100.0
                )));
            }
            _ => {
                return Err(refuse(format!(
                    "'{value}' is not a tolerance: write a percentage (e.g. {metric}=5%) or a \
                     fraction below 1 (e.g. {metric}=0.05)"
                )));
            }
        }
    }
    Ok(t.to_string())
}

/// An empty action input means the default, one run.
fn parse_runs(s: &str) -> Result<u32, BadValue> {
    if s.trim().is_empty() {
        return Ok(1);
    }
    match s.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_BASELINE_RUNS).contains(&n) => Ok(n),
        _ => Err(bad(
            s,
            format!("a number of runs from 1 to {MAX_BASELINE_RUNS} (MAX_BASELINE_RUNS)"),
        )),
    }
}

/// An empty action input means "not given".
fn parse_from(s: &str) -> Result<BaselineFrom, BadValue> {
    match s.trim() {
        "last-main-run" => Ok(BaselineFrom::LastMainRun),
        "history" => Ok(BaselineFrom::History),
        other => Err(bad(other, "last-main-run or history")),
    }
}

/// At least 2 (a standard deviation needs two values), at most
/// `MAX_HISTORY_MIN_RUNS`.
fn parse_min_runs(s: &str) -> Result<usize, BadValue> {
    match s.trim().parse::<usize>() {
        Ok(n) if (2..=MAX_HISTORY_MIN_RUNS).contains(&n) => Ok(n),
        _ => Err(bad(
            s,
            format!("a number of runs from 2 to {MAX_HISTORY_MIN_RUNS} (MAX_HISTORY_MIN_RUNS)"),
        )),
    }
}

fn parse_confidence(s: &str) -> Result<f64, BadValue> {
    match s.trim().parse::<f64>() {
        Ok(c) if (0.5..1.0).contains(&c) => Ok(c),
        _ => Err(bad(s, "a confidence from 0.5 to below 1, e.g. 0.99")),
    }
}

fn parse_min_change(s: &str) -> Result<f64, BadValue> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().ok().map(|v| v / 100.0),
        None => t.parse::<f64>().ok(),
    };
    match v {
        Some(v) if (0.0..1.0).contains(&v) => Ok(v),
        _ => Err(bad(s, "a fraction (0.02) or percentage (2%) below 100 %")),
    }
}

fn parse_repeats(s: &str) -> Result<Repeats, BadValue> {
    match s.trim() {
        "" | "pool" => Ok(Repeats::Pool),
        "first" => Ok(Repeats::First),
        other => Err(bad(other, "pool or first")),
    }
}

fn parse_format(s: &str) -> Result<BaselineFormat, BadValue> {
    match s.trim() {
        "" | "auto" => Ok(BaselineFormat::Auto),
        "agg" => Ok(BaselineFormat::Agg),
        "api" => Ok(BaselineFormat::Api),
        other => Err(bad(other, "auto, agg or api")),
    }
}

fn parse_metrics(s: &str) -> Result<MetricSet, BadValue> {
    match s.trim() {
        "" | "default" => Ok(MetricSet::Default),
        "extended" => Ok(MetricSet::Extended),
        "reference" => Ok(MetricSet::Reference),
        other => Err(bad(other, "default, extended or reference")),
    }
}
