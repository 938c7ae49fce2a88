//! The whole run: load, pick the baseline source, compare, render, write
//! outputs. The binary parses its flags into [`Options`], calls [`run`] and
//! maps the outcome to an exit code (the flags are the binary's, not the
//! library's).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use sweep_model::compare_summary::BaselineRef;

use sweep_series::boundary::Settings;

use crate::compare::{Comparison, Policy, Repeats, Row, compare};
use crate::evals::{self, EvalRow, Thresholds};
use crate::load::{self, BaselineFormat};
use crate::metrics::{self, MetricSet};
use crate::report::{self, ReportInput};
use crate::{CompareError, chart, db, http};

/// Why a comparison could not be made; each is "could not do the job"
/// (exit 2). Regressions are not an error but the [`Outcome`].
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Options that conflict or say nothing usable (the message names the
    /// flag, or the policy file and key).
    #[error("{0}")]
    Options(String),
    /// An input file, row or remote baseline (the message names it).
    #[error(transparent)]
    Compare(#[from] CompareError),
    /// The Actions API of `--baseline-from`.
    #[error(transparent)]
    GitHub(#[from] github_client::Error),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("{file}: {source}")]
    Yaml {
        file: String,
        source: sweep_model::yaml::YamlError,
    },
    #[error("{what}: {source}")]
    Chart {
        what: &'static str,
        source: chart::ChartError,
    },
    #[error("rendering the chart of {title}: {source}")]
    Png {
        title: String,
        source: crate::png::PngError,
    },
    #[error("drawing the trend of {title}: {source}")]
    Trend {
        title: String,
        source: sweep_chart::ChartError,
    },
    #[error("serialising {what}: {source}")]
    Json {
        what: &'static str,
        source: serde_json::Error,
    },
    #[error("{origin}: {source}")]
    InArtifact {
        origin: String,
        source: Box<CompareError>,
    },
    /// Main's history (`--baseline-from history`): the store could not be
    /// read, or a line of it is corrupt (named by file and line).
    #[error("main's history: {0}")]
    History(#[from] sweep_series::store::StoreError),
    #[error("{origin}: {source}")]
    Artifact {
        origin: String,
        source: github_client::actions::UnzipError,
    },
}

impl sweep_cli::Classify for RunError {
    fn kind(&self) -> sweep_cli::Kind {
        sweep_cli::Kind::Failed
    }
}

type Result<T, E = RunError> = std::result::Result<T, E>;

/// `Err(RunError::Options(..))` with a formatted message.
macro_rules! refuse {
    ($($arg:tt)*) => {
        return Err(RunError::Options(format!($($arg)*)))
    };
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> RunError {
    let what = what.into();
    move |source| RunError::Io { what, source }
}

fn writing(path: &Path) -> impl FnOnce(std::io::Error) -> RunError {
    io(format!("writing {}", path.display()))
}

/// What to compare and where to write it: the `compare-results` flags (and
/// the action inputs they read), as plain values. Empty strings mean "not
/// given" (an action input that is not set arrives empty).
#[derive(Debug, Clone)]
pub struct Options {
    /// New results: an agg_bmk.json or a directory of result JSON files
    /// (the reference's positional <results_dir>).
    pub results: Option<String>,

    /// New results (same as the positional argument).
    pub new: Option<String>,

    /// New evals: agg_eval_all.json.
    pub new_evals: Option<String>,

    /// Baseline results: an earlier agg_bmk.json (file or directory) or a
    /// saved benchmarks-API response. Give it once per earlier run (or one
    /// path per line in INPUT_BASELINE): rows of one point across them are
    /// repeats, judged by the noise rule.
    pub baseline: Vec<String>,

    /// How to read --baseline / --baseline-url rows.
    pub baseline_format: BaselineFormat,

    /// Fetch the baseline from the benchmarks API, e.g.
    /// .../api/v1/benchmarks?model=Qwen-3.5-397B-A17B&date=2026-08-01&exact=true
    /// Give it once per earlier run (say, one URL per date; one per line in
    /// INPUT_BASELINE_URL).
    pub baseline_url: Vec<String>,

    /// Where else the baseline comes from: `last-main-run`, the
    /// `results_bmk` artifact of the newest successful push run of
    /// --baseline-workflow on the default branch (Actions API; needs a
    /// token with `actions: read` in GH_TOKEN or GITHUB_TOKEN). No such run
    /// is "no baseline" (every point unmatched, exit 0).
    pub baseline_from: Option<BaselineFrom>,

    /// With --baseline-from history: the store (a folder or a
    /// `postgres://` URL).
    pub history: Option<String>,

    /// With --baseline-from history: how boundaries are learnt.
    pub history_settings: Settings,

    /// With --baseline-from: the repository (`owner/name`).
    pub repo: Option<String>,

    /// With --baseline-from: the workflow file whose runs are looked up
    /// (the caller's file, as reuse-sweep looks runs up).
    pub baseline_workflow: String,

    /// With --baseline-from: the branch (default: the repository's default
    /// branch, read from the API).
    pub baseline_branch: Option<String>,

    /// With --baseline-from: this run's id, never its own baseline.
    pub run_id: Option<String>,

    /// PostgreSQL database with the InferenceX schema; used when neither
    /// --baseline nor --baseline-url is given.
    pub database_url: Option<String>,

    /// With --database-url: the newest N error-free main-branch runs of
    /// each point form its baseline (default 1, at most 20).
    pub baseline_runs: Option<u32>,

    /// Rows sharing a point key on one side: pool (repeats: means, spread
    /// and the noise rule) or first (the first row is used, the rest are
    /// listed as duplicates).
    pub repeats: Repeats,

    /// Baseline evals (agg_eval_all.json) to flag significant score drops.
    pub baseline_evals: Option<String>,

    /// Eval thresholds (validate-scores format, JSON or YAML).
    pub thresholds: Option<String>,

    /// Label of the baseline in the report heading.
    pub baseline_label: Option<String>,

    /// Metric set: default (4), extended, or reference (the 13-metric
    /// compare_results.py table).
    pub metrics: MetricSet,

    /// Per-metric tolerance, METRIC=FRACTION or METRIC=N% (repeatable or
    /// comma-separated), e.g. mean_ttft=0.15.
    pub tolerances: Vec<String>,

    /// Policy file (JSON or YAML): {"tolerances": {metric: fraction},
    /// "strict": bool}; --tolerance and --strict override it.
    pub policy: Option<String>,

    /// A point regresses only on a throughput metric or on two latency
    /// metrics.
    pub strict: bool,

    /// Write the report laid out for a PR comment here: the largest
    /// regressions, one line per configuration, folded tables of the
    /// points beyond tolerance, within the comment's size.
    pub markdown: Option<String>,

    /// Write the full report here (every point of every configuration; the
    /// same report goes to stdout and the job summary), e.g. for the
    /// `compare-report` artifact.
    pub full_markdown: Option<String>,

    /// Write the JSON report here.
    pub json: Option<String>,

    /// Write the SVG chart here (none unless asked).
    pub svg: Option<String>,

    /// Write one PNG chart per configuration into this directory (created
    /// when missing), with `charts.json` listing them: configuration,
    /// file, regressed points, and with `--baseline-from history` the
    /// configuration's trend over main's runs (`<stem>.trend.png`). 880 px
    /// wide, text at least 14 px, the font bundled (the pictures do not
    /// depend on the machine).
    pub charts_dir: Option<String>,

    /// Leave the mermaid charts out of the markdown.
    pub no_chart: bool,

    /// Exit 1 when the verdict is "regressions".
    pub fail_on_regression: bool,

    /// Timeout in seconds for --baseline-url.
    pub timeout: u64,
}

impl Default for Options {
    /// The flags' defaults: nothing given, `--baseline-format auto`,
    /// `--repeats pool`, `--metrics default`, `--baseline-workflow
    /// run-sweep.yml`, `--timeout 60`.
    fn default() -> Self {
        Options {
            results: None,
            new: None,
            new_evals: None,
            baseline: Vec::new(),
            baseline_format: BaselineFormat::Auto,
            baseline_url: Vec::new(),
            baseline_from: None,
            history: None,
            history_settings: Settings::default(),
            repo: None,
            baseline_workflow: "run-sweep.yml".into(),
            baseline_branch: None,
            run_id: None,
            database_url: None,
            baseline_runs: None,
            repeats: Repeats::Pool,
            baseline_evals: None,
            thresholds: None,
            baseline_label: None,
            metrics: MetricSet::Default,
            tolerances: Vec::new(),
            policy: None,
            strict: false,
            markdown: None,
            full_markdown: None,
            json: None,
            svg: None,
            charts_dir: None,
            no_chart: false,
            fail_on_regression: false,
            timeout: 60,
        }
    }
}

/// Action inputs arrive as environment variables that are empty when not
/// set; an empty value means "not given".
fn given(v: &Option<String>) -> Option<PathBuf> {
    trimmed(v.as_deref()).map(PathBuf::from)
}

/// An option's value with its white space trimmed, unless that leaves
/// nothing (the rule of [`given`], for the values that are not paths).
fn trimmed(v: Option<&str>) -> Option<&str> {
    v.map(str::trim).filter(|v| !v.is_empty())
}

/// Action inputs given several times arrive as one value per line; blank
/// lines and empty values are "not given".
fn given_all(v: &[String]) -> Vec<PathBuf> {
    v.iter()
        .filter_map(|s| trimmed(Some(s)))
        .map(PathBuf::from)
        .collect()
}

/// Most baseline runs per point read from the database. Repeats on these
/// systems are a handful of runs; older runs measure older code, and the
/// min–max noise rule only widens with more of them, so more is not better.
pub const MAX_BASELINE_RUNS: u32 = 20;

/// A baseline found through the API (`--baseline-from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineFrom {
    /// The newest successful push run on the default branch.
    LastMainRun,
    /// Main's history (`--history`): each point against its own series.
    History,
}

/// The most main runs `--history-min-runs` may ask for: a boundary is
/// learnt from at most the newest 30 runs of a series
/// (`sweep_series::boundary::Settings::window`), so more could never be met.
pub const MAX_HISTORY_MIN_RUNS: usize = 30;

/// What the run found.
#[derive(Debug)]
pub struct Outcome {
    /// The check says no: a regressed point, or, under
    /// `--fail-on-regression`, no new rows at all (an empty sweep cannot
    /// show that nothing regressed).
    pub regressions: bool,
    pub fail_on_regression: bool,
}

struct Baseline {
    source: &'static str,
    /// Files or URLs read, in order (empty for the database).
    paths: Vec<String>,
    label: String,
    rows: Vec<Row>,
    /// The baseline run (`last-main-run`): commit, page, day.
    run: Option<(String, String, String)>,
    /// What main's history learnt (`--baseline-from history`).
    history: Option<crate::compare::HistoryPolicy>,
}

impl Baseline {
    /// The report's `baseline.path`: the one file or URL, or several joined
    /// by ", ".
    fn path(&self) -> Option<String> {
        (!self.paths.is_empty()).then(|| self.paths.join(", "))
    }

    /// What the summary's provenance line names.
    fn reference(&self) -> BaselineRef {
        let file = matches!(self.source, "agg" | "api" | "mixed")
            .then(|| {
                self.paths
                    .iter()
                    .filter(|p| !p.contains("://"))
                    .map(|p| {
                        Path::new(p)
                            .file_name()
                            .map_or_else(|| p.clone(), |n| n.to_string_lossy().into_owned())
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .filter(|f| !f.is_empty());
        let (sha, run_url, date) = match &self.run {
            Some((sha, url, day)) => (
                Some(sha.clone()).filter(|s| !s.is_empty()),
                Some(url.clone()).filter(|u| !u.is_empty()),
                Some(day.clone()).filter(|d| !d.is_empty()),
            ),
            None => (None, None, None),
        };
        BaselineRef {
            label: self.label.clone(),
            source: self.source.to_string(),
            sha,
            run_url,
            date,
            file,
        }
    }
}

fn parse_fraction(s: &str) -> Option<f64> {
    let s = s.trim();
    let v = match s.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().ok()? / 100.0,
        None => s.parse::<f64>().ok()?,
    };
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// A policy or thresholds file: JSON, else YAML. A key twice in one
/// object or mapping is refused (JSON's with line and column, YAML's with
/// its key path and both lines), never read as its last value.
fn read_structured(path: &Path) -> Result<Value> {
    let text = sweep_model::fsio::read_text(path, sweep_model::yaml::MAX_YAML_BYTES as u64)
        .map_err(io(format!("reading {}", path.display())))?;
    let name = path.display().to_string();
    match sweep_model::json_strict::parse_str(&text) {
        Ok(v) => return Ok(v),
        Err(e) if sweep_model::json_strict::is_duplicate_key(&e) => {
            return Err(CompareError::Json {
                path: name,
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            }
            .into());
        }
        Err(_) => {}
    }
    let doc = sweep_model::yaml::load_file(path).map_err(|source| RunError::Yaml {
        file: name.clone(),
        source,
    })?;
    if let Some(d) = doc.duplicate_keys().first() {
        return Err(RunError::Yaml {
            file: name,
            source: sweep_model::yaml::YamlError {
                path: None,
                message: format!(
                    "duplicate key '{}' (first at line {}): each key may appear once in a mapping",
                    sweep_model::yaml::dotted(&d.path),
                    d.first_line
                ),
                line: d.line,
                column: 1,
                unreadable: false,
            },
        });
    }
    Ok(doc.into_value())
}

fn policy(opts: &Options) -> Result<Policy> {
    let known = metrics::known_keys();
    let mut policy = Policy::default();
    let mut set = |name: &str, v: Option<f64>, from: &str| -> Result<()> {
        let Some(key) = metrics::resolve_key(name) else {
            refuse!(
                "{from}: unknown metric '{name}' (known: {}, or the short names the report prints: tput, TPOT, TTFT, …)",
                known.join(", ")
            );
        };
        let Some(v) = v else {
            refuse!(
                "{from}: tolerance of '{key}' must be a non-negative fraction (0.05) or percentage (5%)"
            );
        };
        policy.tolerances.insert(key.to_string(), v);
        Ok(())
    };
    let mut strict = false;
    if let Some(path) = &given(&opts.policy) {
        let name = path.display().to_string();
        let v = read_structured(path)?;
        let Value::Object(m) = v else {
            refuse!("{name}: a policy must be a mapping");
        };
        let (table, s) = match (m.get("tolerances"), m.get("strict")) {
            (Some(Value::Object(t)), s) => (t.clone(), s.cloned()),
            (None, s) => {
                let mut t = m.clone();
                t.remove("strict");
                (t, s.cloned())
            }
            (Some(_), _) => refuse!("{name}: key 'tolerances' must be a mapping"),
        };
        match s {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => strict = b,
            Some(other) => refuse!("{name}: key 'strict' must be a boolean, found {other}"),
        }
        for (k, v) in &table {
            let f = match v {
                Value::Number(n) => n.as_f64().filter(|f| f.is_finite() && *f >= 0.0),
                Value::String(s) => parse_fraction(s),
                _ => None,
            };
            set(k, f, &format!("{name}: key 'tolerances.{k}'"))?;
        }
    }
    for t in opts.tolerances.iter().filter(|t| !t.trim().is_empty()) {
        let Some((k, v)) = t.split_once('=') else {
            refuse!("--tolerance '{t}': expected METRIC=FRACTION, e.g. mean_ttft=0.15");
        };
        set(k.trim(), parse_fraction(v), &format!("--tolerance '{t}'"))?;
    }
    policy.strict = strict || opts.strict;
    policy.repeats = opts.repeats;
    Ok(policy)
}

fn load_baseline(opts: &Options, new_rows: &[Row]) -> Result<Baseline> {
    let (paths, urls) = (given_all(&opts.baseline), given_all(&opts.baseline_url));
    let given_sources = [
        (!paths.is_empty()).then_some("--baseline"),
        (!urls.is_empty()).then_some("--baseline-url"),
        opts.baseline_from.map(|_| "--baseline-from"),
    ];
    let given_sources: Vec<&str> = given_sources.into_iter().flatten().collect();
    if given_sources.len() > 1 {
        refuse!(
            "give one baseline: {} are given together",
            given_sources.join(" and ")
        );
    }
    if let Some(n) = opts.baseline_runs.filter(|n| *n > 1)
        && !given_sources.is_empty()
    {
        refuse!(
            "--baseline-runs {n} picks the newest runs from --database-url; with files or URLs give --baseline (or --baseline-url) once per run"
        );
    }
    match opts.baseline_from {
        Some(BaselineFrom::LastMainRun) => return last_main_run(opts),
        Some(BaselineFrom::History) => return from_history(opts, new_rows),
        None => {}
    }
    if given(&opts.history).is_some() {
        refuse!("--history is read only with --baseline-from history");
    }
    if !paths.is_empty() {
        return from_files(opts, &paths);
    }
    if !urls.is_empty() {
        return from_urls(opts, &urls);
    }
    if let Some(url) = opts.database_url.as_deref().filter(|u| !u.is_empty()) {
        let runs = opts.baseline_runs.unwrap_or(1);
        let rows = db::baselines(url, new_rows, runs)?;
        let label = if runs > 1 {
            format!("the {runs} most recent main-branch results")
        } else {
            "most recent main-branch results".into()
        };
        return Ok(Baseline {
            source: "database",
            label: opts.baseline_label.clone().unwrap_or(label),
            paths: Vec::new(),
            rows,
            run: None,
            history: None,
        });
    }
    refuse!(
        "no baseline: give --baseline <agg_bmk.json|dir|api.json>, --baseline-url <url>, --baseline-from last-main-run or --database-url (DATABASE_URL)"
    )
}

/// `--baseline FILE…`: the rows of saved aggregates or API answers, the
/// source named by their format (`mixed` when they differ).
fn from_files(opts: &Options, paths: &[PathBuf]) -> Result<Baseline> {
    let mut rows = Vec::new();
    let mut sources = Vec::new();
    for path in paths {
        let objects = load::load_objects(path)?;
        // A saved error answer of the API (`{"error": "Unknown model"}`).
        if let [(only, _)] = objects.as_slice()
            && let Some(Value::String(msg)) = only.get("error")
            && !only.contains_key("hw")
            && !only.contains_key("hardware")
        {
            refuse!(
                "{}: the saved API response is an error: {msg}",
                path.display()
            );
        }
        let file_rows = load::baseline_rows(objects, opts.baseline_format)?;
        let api = matches!(opts.baseline_format, BaselineFormat::Api)
            || (matches!(opts.baseline_format, BaselineFormat::Auto)
                && file_rows
                    .first()
                    .is_some_and(|r| !r.metrics.contains_key("hw")));
        sources.push(if api { "api" } else { "agg" });
        rows.extend(file_rows);
    }
    let source = if sources.iter().all(|s| *s == sources[0]) {
        sources[0]
    } else {
        "mixed"
    };
    // Named by the file's name: the directory it sits in is the
    // runner's (an absolute path means nothing to a reader), and no
    // markup (the report escapes the label as text).
    let label = opts.baseline_label.clone().unwrap_or_else(|| {
        paths
            .iter()
            .map(|p| {
                p.file_name().map_or_else(
                    || p.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    });
    let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    Ok(Baseline {
        source,
        paths,
        label,
        rows,
        run: None,
        history: None,
    })
}

/// `--baseline-url URL…`: the rows the benchmarks API answers.
fn from_urls(opts: &Options, urls: &[PathBuf]) -> Result<Baseline> {
    let mut rows = Vec::new();
    let mut paths = Vec::new();
    for url in urls {
        let url = url.display().to_string();
        let body = http::fetch(&url, Duration::from_secs(opts.timeout.max(1)))?;
        let objects = load::api_objects(&body, &url)?;
        rows.extend(load::baseline_rows(objects, opts.baseline_format)?);
        paths.push(url);
    }
    Ok(Baseline {
        source: "api",
        label: opts
            .baseline_label
            .clone()
            .unwrap_or_else(|| "InferenceX published results".into()),
        paths,
        rows,
        run: None,
        history: None,
    })
}

/// `--baseline-from history`: the store's series of the new points.
fn from_history(opts: &Options, new_rows: &[Row]) -> Result<Baseline> {
    let Some(spec) = given(&opts.history) else {
        refuse!(
            "--baseline-from history needs --history <store>: the checkout of the data branch (a folder) or a postgres:// URL"
        );
    };
    let spec = spec.display().to_string();
    let h = crate::history::load(&spec, new_rows, &opts.metrics.defs(), opts.history_settings)?;
    eprintln!(
        "compare-results: main's history at {}: {} run(s); {} of the new points have a series",
        h.store,
        h.runs,
        h.rows.len()
    );
    let run = h.newest.map(|r| {
        let day = r.date.get(..10).unwrap_or(&r.date).to_string();
        (r.commit, String::new(), day)
    });
    // "main's history (12 runs; newest 1a2b3c4, 2026-12-01)": how much
    // history and how recent, in the heading and the comment's provenance.
    let label = opts.baseline_label.clone().unwrap_or_else(|| {
        let plural = if h.runs == 1 { "" } else { "s" };
        match &run {
            Some((sha, _, day)) => {
                let short: String = sha.chars().take(7).collect();
                format!(
                    "main's history ({} run{plural}; newest {short}, {day})",
                    h.runs
                )
            }
            None => format!("main's history ({} run{plural})", h.runs),
        }
    });
    Ok(Baseline {
        source: "history",
        paths: Vec::new(),
        label,
        rows: h.rows,
        run,
        history: Some(h.policy),
    })
}

/// The artifact the last-main-run baseline reads, and the file in it.
const BASELINE_ARTIFACT: &str = "results_bmk";
const BASELINE_AGGREGATE: &str = "agg_bmk.json";

/// `--baseline-from last-main-run`: the `results_bmk` aggregate of the
/// newest successful push run of the workflow on the branch, other than
/// this run. No such run: an empty baseline labelled "no baseline" (like
/// an API or database without rows for these points). An API error is an
/// error (exit 2).
fn last_main_run(opts: &Options) -> Result<Baseline> {
    use github_client::actions::{self, RunQuery};
    let Some(repo) = trimmed(opts.repo.as_deref()) else {
        refuse!("--baseline-from last-main-run needs --repo owner/name (GITHUB_REPOSITORY)");
    };
    let config = github_client::Config::from_env(&["GH_TOKEN", "GITHUB_TOKEN"]);
    if config.token.is_none() {
        refuse!(
            "--baseline-from last-main-run needs a token with `actions: read` in GH_TOKEN or GITHUB_TOKEN"
        );
    }
    let exclude_run = match trimmed(opts.run_id.as_deref()) {
        None => None,
        Some(id) => Some(
            id.parse::<u64>()
                .map_err(|_| RunError::Options(format!("--run-id '{id}': expected a number")))?,
        ),
    };
    let client = github_client::Client::new(config)?;
    let branch = match trimmed(opts.baseline_branch.as_deref()) {
        Some(b) => b.to_string(),
        None => client.default_branch(repo)?,
    };
    let workflow = opts.baseline_workflow.trim();
    let found = client.last_successful_run_with_artifact(&RunQuery {
        repo,
        workflow,
        branch: &branch,
        event: "push",
        exclude_run,
        artifact: BASELINE_ARTIFACT,
    })?;
    let Some(run) = found else {
        let why = format!(
            "no successful push run of {workflow} on {branch} with a {BASELINE_ARTIFACT} artifact (among the newest {})",
            actions::MAX_RUNS_SCANNED
        );
        eprintln!("compare-results: no baseline: {why}");
        return Ok(Baseline {
            source: "last-main-run",
            paths: Vec::new(),
            label: opts
                .baseline_label
                .clone()
                .unwrap_or_else(|| format!("no baseline ({why})")),
            rows: Vec::new(),
            run: None,
            history: None,
        });
    };
    let (rows, origin) = run_artifact_rows(&client, repo, &run)?;
    let label = opts
        .baseline_label
        .clone()
        .unwrap_or_else(|| run_label(&branch, &run.head_sha, run.run_id, &run.created_at));
    eprintln!(
        "compare-results: baseline: {label}, {} rows from {origin}",
        rows.len()
    );
    let page = if run.html_url.is_empty() {
        format!("run {}", run.run_id)
    } else {
        run.html_url.clone()
    };
    let day = run.created_at.split('T').next().unwrap_or(&run.created_at);
    Ok(Baseline {
        source: "last-main-run",
        paths: vec![page],
        label,
        rows,
        run: Some((run.head_sha.clone(), run.html_url.clone(), day.to_string())),
        history: None,
    })
}

/// The rows of the run's `results_bmk` artifact (its `agg_bmk.json`), and
/// the words that name where they came from.
fn run_artifact_rows(
    client: &github_client::Client,
    repo: &str,
    run: &github_client::actions::RunArtifact,
) -> Result<(Vec<Row>, String)> {
    use github_client::actions;
    let zip = client.download_artifact_zip(repo, run.artifact_id)?;
    let dir = tempfile::tempdir().map_err(io("creating a directory for the baseline artifact"))?;
    let origin = format!("artifact {BASELINE_ARTIFACT} of run {}", run.run_id);
    let files = actions::unzip(&zip, dir.path()).map_err(|source| RunError::Artifact {
        origin: origin.clone(),
        source,
    })?;
    let Some(agg) = files
        .iter()
        .find(|f| f.file_name().is_some_and(|n| n == BASELINE_AGGREGATE))
    else {
        refuse!(
            "{origin}: no {BASELINE_AGGREGATE} in it (files: {})",
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let rows = load::baseline_rows(
        load::load_objects(&dir.path().join(agg))?,
        BaselineFormat::Agg,
    )
    .map_err(|source| RunError::InArtifact {
        origin: origin.clone(),
        source: Box::new(source),
    })?;
    Ok((rows, origin))
}

/// "main @ 1a2b3c4 (run 123, 2026-12-01)": the branch, the commit's short
/// sha, the run and the day it ran (the date part of `created_at`). Plain
/// text: the report escapes the label as text.
fn run_label(branch: &str, sha: &str, run_id: u64, created_at: &str) -> String {
    let sha7: String = sha.chars().take(7).collect();
    let day = created_at.split('T').next().unwrap_or(created_at);
    format!("{branch} @ {sha7} (run {run_id}, {day})")
}

fn load_evals(path: &Path, thresholds: Option<&Thresholds>) -> Result<Vec<EvalRow>> {
    let objects = load::load_objects(path)?;
    Ok(evals::eval_rows(objects, thresholds)?)
}

/// The JSON report. `baseline_paths` lists every baseline file or URL;
/// `baseline_path` is them joined (the one path of a single baseline).
/// `new_rows` is how many new result rows were read. The summary
/// ([`sweep_model::compare_summary`]) holds every count and the verdict
/// of the points and evals together, which the top-level `verdict` repeats
/// (the reference's key).
pub fn report_json(
    comparison: &Comparison,
    baseline: &BaselineRef,
    baseline_path: Option<&str>,
    baseline_paths: &[String],
    new_path: &str,
    new_rows: usize,
    evals: &[EvalRow],
) -> Result<Value> {
    let mut m = Map::new();
    m.insert(
        "schema_version".into(),
        sweep_model::compare_summary::SCHEMA_VERSION.into(),
    );
    m.insert(
        "baseline".into(),
        json!({"source": baseline.source, "path": baseline_path, "paths": baseline_paths,
            "label": baseline.label}),
    );
    m.insert("new".into(), json!({"path": new_path}));
    m.extend(comparison.to_json());
    m.insert(
        "evals".into(),
        evals.iter().map(evals::to_json).collect::<Vec<_>>().into(),
    );
    let summary = report::summary(comparison, evals, new_rows, baseline.clone());
    m.insert("verdict".into(), summary.verdict.as_str().into());
    let summary = serde_json::to_value(&summary).map_err(|source| RunError::Json {
        what: "the JSON report's summary",
        source,
    })?;
    m.insert("summary".into(), summary);
    Ok(Value::Object(m))
}

/// The manifest of `--charts-dir`, read by visualizer-comment and the
/// publish-charts action.
pub const CHARTS_MANIFEST: &str = "charts.json";

/// The files of `--charts-dir`, drawn and encoded, not yet written: one
/// PNG per configuration, then the manifest.
struct RenderedCharts {
    files: Vec<(String, Vec<u8>)>,
    pictures: usize,
}

/// Draws one PNG per configuration and the manifest, in memory (a
/// picture that cannot be drawn fails the run before anything is written).
fn render_charts(
    comparison: &Comparison,
    new_rows: &[Row],
    baseline_rows: &[Row],
) -> Result<RenderedCharts> {
    let charts = chart::group_svgs(comparison, new_rows, baseline_rows).map_err(|source| {
        RunError::Chart {
            what: "drawing the charts",
            source,
        }
    })?;
    let trends = crate::trend::trends(comparison);
    let mut listed = Vec::with_capacity(charts.len());
    let mut files = Vec::with_capacity(2 * charts.len() + 1);
    for c in &charts {
        let file = format!("{}.png", c.stem);
        let bytes = crate::png::render(&c.svg).map_err(|source| RunError::Png {
            title: c.title.clone(),
            source,
        })?;
        let mut entry =
            json!({"configuration": c.title, "file": file, "regressed_points": c.regressed});
        files.push((file, bytes));
        if let Some(trend) = trends.get(&c.title) {
            let file = format!("{}.trend.png", c.stem);
            let bytes = sweep_chart::trend::png(trend).map_err(|source| RunError::Trend {
                title: c.title.clone(),
                source,
            })?;
            entry["trend"] = file.clone().into();
            files.push((file, bytes));
        }
        listed.push(entry);
    }
    let doc = json!({"schema_version": 1, "charts": listed});
    let mut bytes = serde_json::to_vec_pretty(&doc).map_err(|source| RunError::Json {
        what: "charts.json",
        source,
    })?;
    bytes.push(b'\n');
    files.push((CHARTS_MANIFEST.to_owned(), bytes));
    Ok(RenderedCharts {
        pictures: files.len() - 1,
        files,
    })
}

/// Writes the rendered charts into `dir`, each file whole (temp file, then
/// rename); the manifest last, so a manifest never names a missing
/// picture.
fn write_charts(dir: &Path, charts: &RenderedCharts) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    for (file, bytes) in &charts.files {
        let path = dir.join(file);
        sweep_model::fsio::write_atomic(&path, bytes).map_err(writing(&path))?;
    }
    Ok(())
}

/// Runs one comparison.
pub fn run(opts: &Options) -> Result<Outcome> {
    let new_path = new_results(opts)?;
    let policy = policy(opts)?;
    let new_rows = load::agg_rows(load::load_objects(&new_path)?)?;
    eprintln!(
        "compare-results: loaded {} benchmark results from {}",
        new_rows.len(),
        new_path.display()
    );
    let baseline = if new_rows.is_empty() {
        no_new_rows_baseline(opts)
    } else {
        load_baseline(opts, &new_rows)?
    };
    let eval_rows = eval_rows(opts)?;

    let mut policy = policy;
    policy.history = baseline.history.clone();
    let comparison = compare(
        new_rows.clone(),
        baseline.rows.clone(),
        opts.metrics.defs(),
        &policy,
    );
    let input = ReportInput {
        baseline_label: &baseline.label,
        comparison: &comparison,
        new_rows: &new_rows,
        evals: &eval_rows,
        charts: !opts.no_chart,
    };
    let (markdown, full_markdown) = markdowns(opts.metrics, &input)?;
    // Every output is made before the first is written: a chart that
    // cannot be drawn (or a report that cannot be serialised) leaves no
    // compare.md or compare.json behind that would read as a finished
    // comparison.
    let made = Made {
        json: report_bytes(
            opts,
            &comparison,
            &baseline,
            &new_path,
            &new_rows,
            &eval_rows,
        )?,
        svg: match given(&opts.svg) {
            None => None,
            Some(_) => chart::svg(&comparison, &new_rows, &baseline.rows).map_err(|source| {
                RunError::Chart {
                    what: "drawing the chart",
                    source,
                }
            })?,
        },
        charts: match given(&opts.charts_dir) {
            None => None,
            Some(_) => Some(render_charts(&comparison, &new_rows, &baseline.rows)?),
        },
    };
    write_outputs(opts, &markdown, &full_markdown, &made)?;
    sweep_model::stdout::print(&full_markdown);
    if let Err(e) = sweep_model::gha::append_step_summary(&full_markdown) {
        eprintln!("compare-results: warning: could not append to GITHUB_STEP_SUMMARY: {e}");
    }
    tell_verdict(opts, &comparison, &baseline.label);
    let nothing_compared = new_rows.is_empty() && opts.fail_on_regression;
    if nothing_compared {
        tell_nothing_compared(&new_path);
    }
    // The one verdict: an eval below its threshold fails the gate as a
    // regressed point does.
    let evals_failed = opts.fail_on_regression && eval_rows.iter().any(|e| e.pass() == Some(false));
    Ok(Outcome {
        regressions: comparison.has_regressions() || nothing_compared || evals_failed,
        fail_on_regression: opts.fail_on_regression,
    })
}

/// The comment's layout and the full one (the reference layout has only
/// one).
fn markdowns(metrics: MetricSet, input: &ReportInput<'_>) -> Result<(String, String)> {
    Ok(match metrics {
        MetricSet::Reference => {
            let m = report::reference_markdown(input)?;
            (m.clone(), m)
        }
        _ => (report::markdown(input)?, report::markdown_full(input)?),
    })
}

/// The new results' path: `--new` or the positional one, not both.
fn new_results(opts: &Options) -> Result<PathBuf> {
    let (new_arg, results_arg) = (given(&opts.new), given(&opts.results));
    if new_arg.is_some() && results_arg.is_some() {
        refuse!("give the new results once: --new or the positional path, not both");
    }
    let Some(new_path) = new_arg.or(results_arg) else {
        refuse!(
            "no new results: give --new <agg_bmk.json|dir> (or the path as the first argument)"
        );
    };
    Ok(new_path)
}

/// The baseline when there is nothing new to compare: none is read.
fn no_new_rows_baseline(opts: &Options) -> Baseline {
    Baseline {
        source: "none",
        paths: given_all(&opts.baseline)
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        label: opts
            .baseline_label
            .clone()
            .unwrap_or_else(|| "baseline".into()),
        run: None,
        history: None,
        rows: Vec::new(),
    }
}

/// The new eval rows judged by `--thresholds`, with `--baseline-evals`
/// attached.
fn eval_rows(opts: &Options) -> Result<Vec<EvalRow>> {
    let thresholds = match &given(&opts.thresholds) {
        Some(p) => Some(Thresholds::from_value(
            &read_structured(p)?,
            &p.display().to_string(),
        )?),
        None => None,
    };
    let mut eval_rows = match &given(&opts.new_evals) {
        Some(p) => load_evals(p, thresholds.as_ref())?,
        None => Vec::new(),
    };
    if let Some(p) = &given(&opts.baseline_evals) {
        let base = load_evals(p, None)?;
        evals::attach_baseline(&mut eval_rows, &base);
    }
    Ok(eval_rows)
}

/// The outputs made before any is written.
struct Made {
    /// `compare.json`'s bytes, when `--json` asks for it.
    json: Option<Vec<u8>>,
    /// The SVG, when `--svg` asks and there is a point to draw.
    svg: Option<String>,
    /// The PNG charts, when `--charts-dir` asks.
    charts: Option<RenderedCharts>,
}

/// `compare.json` as bytes, when `--json` is given.
fn report_bytes(
    opts: &Options,
    comparison: &Comparison,
    baseline: &Baseline,
    new_path: &Path,
    new_rows: &[Row],
    eval_rows: &[EvalRow],
) -> Result<Option<Vec<u8>>> {
    if given(&opts.json).is_none() {
        return Ok(None);
    }
    let doc = report_json(
        comparison,
        &baseline.reference(),
        baseline.path().as_deref(),
        &baseline.paths,
        &new_path.display().to_string(),
        new_rows.len(),
        eval_rows,
    )?;
    let mut bytes = serde_json::to_vec_pretty(&doc).map_err(|source| RunError::Json {
        what: "the JSON report",
        source,
    })?;
    bytes.push(b'\n');
    Ok(Some(bytes))
}

/// Writes every output asked for, each atomically.
fn write_outputs(opts: &Options, markdown: &str, full_markdown: &str, made: &Made) -> Result<()> {
    for (path, text) in [
        (given(&opts.markdown), markdown),
        (given(&opts.full_markdown), full_markdown),
    ] {
        if let Some(p) = path {
            sweep_model::fsio::write_atomic(&p, text.as_bytes()).map_err(writing(&p))?;
        }
    }
    if let (Some(p), Some(bytes)) = (given(&opts.json), &made.json) {
        sweep_model::fsio::write_atomic(&p, bytes).map_err(writing(&p))?;
    }
    if let Some(p) = given(&opts.svg) {
        match &made.svg {
            Some(svg) => {
                sweep_model::fsio::write_atomic(&p, svg.as_bytes()).map_err(writing(&p))?
            }
            None => eprintln!("compare-results: no matched tput/GPU points, no SVG written"),
        }
    }
    if let (Some(dir), Some(charts)) = (given(&opts.charts_dir), &made.charts) {
        write_charts(&dir, charts)?;
        eprintln!(
            "compare-results: {} PNG chart(s) and charts.json written to {}",
            charts.pictures,
            dir.display()
        );
    }
    Ok(())
}

/// The verdict on stderr, and as one annotation when a point regressed.
fn tell_verdict(opts: &Options, comparison: &Comparison, baseline_label: &str) {
    // One annotation, the verdict's summary line, when a point regressed:
    // the gate's error (`--fail-on-regression`) or a warning. The regressed
    // metrics are listed in the report, not one annotation each (GitHub
    // shows only the first 10 of a step). On stderr: stdout carries the
    // markdown (the action discards it, the report went to the summary).
    let counts = comparison.counts();
    let verdict_line = format!("{} vs {}", counts.line(), baseline_label);
    if comparison.has_regressions() && sweep_model::gha::in_actions() {
        let level = if opts.fail_on_regression {
            sweep_model::gha::Level::Error
        } else {
            sweep_model::gha::Level::Warning
        };
        eprintln!(
            "{}",
            sweep_model::gha::annotation(level, None, None, &verdict_line)
        );
    }
    eprintln!("compare-results: {verdict_line}");
    eprintln!(
        "compare-results: {} matched, {} without baseline, {} not re-run, verdict: {}",
        comparison.points.len(),
        comparison.unmatched_new.len(),
        comparison.unmatched_baseline.len(),
        comparison.verdict()
    );
    let noise = comparison.within_noise();
    if noise > 0 {
        eprintln!(
            "compare-results: {noise} change(s) beyond tolerance but within the noise of the repeats (neutral)"
        );
    }
}

/// Says, on stderr, as an annotation and in the step summary, that
/// `--fail-on-regression` cannot pass with nothing compared.
fn tell_nothing_compared(new_path: &Path) {
    let msg = format!(
        "no new benchmark rows in {}: nothing was compared, so --fail-on-regression cannot pass",
        new_path.display()
    );
    if sweep_model::gha::in_actions() {
        let level = sweep_model::gha::Level::Error;
        eprintln!("{}", sweep_model::gha::annotation(level, None, None, &msg));
    }
    eprintln!("compare-results: {msg}");
    if let Err(e) = sweep_model::gha::append_step_summary(&format!("**{msg}**\n")) {
        eprintln!("compare-results: warning: could not append to GITHUB_STEP_SUMMARY: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_and_percentages() {
        assert_eq!(parse_fraction("0.05"), Some(0.05));
        assert_eq!(parse_fraction("15%"), Some(0.15));
        assert_eq!(parse_fraction("-1"), None);
        assert_eq!(parse_fraction("x"), None);
    }

    #[test]
    fn unknown_tolerance_metric_is_rejected() {
        let e = policy(&with_tolerance("bogus=0.1")).expect_err("unknown");
        assert!(e.to_string().contains("unknown metric 'bogus'"), "{e}");
        assert_eq!(
            policy(&with_tolerance("mean_ttft=15%"))
                .expect("ok")
                .tolerances
                .get("mean_ttft"),
            Some(&0.15)
        );
    }

    #[test]
    fn policy_file_in_yaml_with_flag_overrides() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("policy.yaml");
        std::fs::write(
            &p,
            "tolerances:\n  mean_ttft: 15%\n  tput_per_gpu: 0.02\nstrict: yes\n",
        )
        .expect("write");
        let path = p.display().to_string();
        let opts = Options {
            policy: Some(path.clone()),
            ..with_tolerance("tput_per_gpu=0.03")
        };
        let policy = policy(&opts).expect("policy");
        assert!(policy.strict, "YAML 1.1 'yes' is true");
        assert_eq!(policy.tolerances.get("mean_ttft"), Some(&0.15));
        assert_eq!(policy.tolerances.get("tput_per_gpu"), Some(&0.03));
        std::fs::write(&p, "tolerances:\n  mean_ttft: lots\n").expect("write");
        let e = policy_err(&path);
        assert!(e.contains("key 'tolerances.mean_ttft'"), "{e}");
    }

    #[test]
    fn no_new_rows_fail_under_fail_on_regression_and_only_then() {
        let dir = tempfile::tempdir().expect("tempdir");
        let new = dir.path().join("agg_bmk.json");
        std::fs::write(&new, "[]").expect("write");
        let new = new.display().to_string();
        let md = dir.path().join("compare.md").display().to_string();
        let run_with = |fail_on_regression: bool| {
            run(&Options {
                new: Some(new.clone()),
                markdown: Some(md.clone()),
                fail_on_regression,
                ..Options::default()
            })
            .expect("run")
        };
        let strict = run_with(true);
        assert!(
            strict.regressions && strict.fail_on_regression,
            "{strict:?}"
        );
        let lenient = run_with(false);
        assert!(!lenient.regressions, "{lenient:?}");
    }

    fn with_tolerance(t: &str) -> Options {
        Options {
            tolerances: vec![t.to_string()],
            results: Some("x".into()),
            ..Options::default()
        }
    }

    fn policy_err(path: &str) -> String {
        let opts = Options {
            policy: Some(path.to_string()),
            results: Some("x".into()),
            ..Options::default()
        };
        format!("{:#}", policy(&opts).expect_err("bad policy"))
    }
}
