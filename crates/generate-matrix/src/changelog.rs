//! `generate-matrix changelog`: the perf-changelog diff → bucketed sweep
//! matrix (spec changelog.md §2–10). The pipeline lives in
//! `sweep_changelog::pipeline`; this module plugs this crate's generator
//! into it (master configs validated once per run, not once per call) and
//! holds the subcommand's flags and exit codes.

use crate::generate::{
    CommonOptions, EvalMode, LoadedConfigs, ScenarioType, TestConfigOptions, generate_test_config,
};
use clap::Args;
use serde_json::Value;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use sweep_changelog::git::Repo;
use sweep_changelog::pipeline::{self, Generator, Options, RawMasters, Rejection, TestConfig};
use sweep_model::config::{ConfigError, MasterConfigs};
use sweep_model::gha::{self, Level};
use sweep_model::runners::Runners;
use sweep_model::yaml;

/// Flags of `generate-matrix changelog`.
#[derive(Debug, Clone, Args)]
pub struct ChangelogArgs {
    /// Older revision of the diff.
    #[arg(long, env = "INPUT_BASE_REF")]
    pub base_ref: String,
    /// Newer revision of the diff.
    #[arg(long, env = "INPUT_HEAD_REF")]
    pub head_ref: String,
    /// Changelog path (a git pathspec, relative to the repository root).
    #[arg(long, env = "INPUT_CHANGELOG_FILE")]
    pub changelog_file: String,
    /// Keep one (the lowest) concurrency per recipe.
    #[arg(long, env = "INPUT_TRIM_CONC")]
    pub trim_conc: bool,
    /// Expand every entry's eval selection, keep throughput.
    #[arg(long, env = "INPUT_ALL_EVALS")]
    pub all_evals: bool,
    /// Suppress throughput for every entry (default eval subset).
    #[arg(long, env = "INPUT_EVALS_ONLY")]
    pub evals_only: bool,
}

impl ChangelogArgs {
    /// The pipeline options these flags stand for.
    pub fn options(&self) -> Options {
        Options {
            base_ref: self.base_ref.clone(),
            head_ref: self.head_ref.clone(),
            changelog_file: self.changelog_file.clone(),
            trim_conc: self.trim_conc,
            all_evals: self.all_evals,
            evals_only: self.evals_only,
        }
    }
}

/// This crate's generator behind the pipeline's [`Generator`] trait.
#[derive(Debug, Clone, Copy, Default)]
pub struct MatrixGenerator;

/// The loader's message; an entry that fails validation is introduced the
/// way the reference does ("Master config entry '<key>' failed validation").
fn config_error(e: &ConfigError) -> String {
    match &e.key {
        Some(key)
            if !e.cause.contains("Duplicate config keys")
                && !e.cause.contains("reserved for wildcard") =>
        {
            format!("Master config entry '{key}' failed validation: {e}")
        }
        _ => e.to_string(),
    }
}

impl Generator for MatrixGenerator {
    type Masters = MasterConfigs;
    type Loaded = LoadedConfigs;

    fn load_masters(&self, files: &[(String, String)]) -> Result<MasterConfigs, String> {
        let mut docs = Vec::with_capacity(files.len());
        for (path, text) in files {
            let path = PathBuf::from(path);
            let doc = yaml::parse_str(text)
                .map_err(|e| config_error(&ConfigError::from(e.in_file(&path))))?;
            docs.push((path, doc));
        }
        MasterConfigs::from_docs(docs).map_err(|e| config_error(&e))
    }

    fn raw_masters<'a>(&self, masters: &'a MasterConfigs) -> RawMasters<'a> {
        RawMasters::new(masters.entries.iter().map(|e| (e.key.as_str(), &e.raw)))
    }

    fn with_runners(
        &self,
        masters: MasterConfigs,
        path: &str,
        text: &str,
    ) -> Result<LoadedConfigs, String> {
        let p = Path::new(path);
        let doc = yaml::parse_str(text).map_err(|mut e| {
            e.path = Some(p.to_path_buf());
            config_error(&ConfigError::from(e))
        })?;
        let runners = Runners::from_doc(p, &doc).map_err(|e| config_error(&e))?;
        Ok(LoadedConfigs { masters, runners })
    }

    fn test_config(
        &self,
        loaded: &LoadedConfigs,
        call: &TestConfig<'_>,
    ) -> Result<Vec<Value>, String> {
        let evals = if call.no_evals {
            EvalMode::NoEvals
        } else if call.all_evals {
            EvalMode::AllEvals
        } else if call.evals_only {
            EvalMode::EvalsOnly
        } else {
            EvalMode::Default
        };
        let scenario_types = call.scenario_types.as_ref().map(|types| {
            types
                .iter()
                .map(|t| {
                    if *t == "agentic-coding" {
                        ScenarioType::AgenticCoding
                    } else {
                        ScenarioType::FixedSeqLen
                    }
                })
                .collect()
        });
        let opts = TestConfigOptions {
            common: CommonOptions {
                scenario_types,
                evals,
                ..CommonOptions::default()
            },
            config_keys: call.keys.to_vec(),
            conc: None,
        };
        generate_test_config(loaded, &opts)
            .map(|rows| rows.into_iter().map(Value::from).collect())
            .map_err(|e| e.to_string())
    }
}

/// Runs the pipeline in `repo` with this crate's generator.
pub fn generate(repo: &Repo, opts: &Options) -> Result<Value, Rejection> {
    pipeline::run(&MatrixGenerator, repo, opts)
}

/// The changelog path as GitHub annotations want it (relative to the
/// repository root).
pub fn annotation_path(repo: &Repo, changelog_file: &str) -> String {
    let p = Path::new(changelog_file);
    if p.is_absolute() {
        let root = std::fs::canonicalize(repo.dir()).unwrap_or_else(|_| repo.dir().to_path_buf());
        if let Ok(rel) = p
            .strip_prefix(&root)
            .or_else(|_| p.strip_prefix(repo.dir()))
        {
            return rel.display().to_string();
        }
    }
    changelog_file.trim_start_matches("./").to_string()
}

/// Where a workflow-command annotation goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnnotationStream {
    /// stdout (the runner reads commands from both streams).
    Stdout,
    /// stderr, for tools whose stdout is captured as data.
    Stderr,
}

/// Prints a rejection (and its annotation when in GitHub Actions).
pub fn report(
    repo: &Repo,
    changelog_file: &str,
    prefix: &str,
    r: &Rejection,
    to: AnnotationStream,
) {
    eprintln!("{prefix}{}", r.message);
    let file = annotation_path(repo, changelog_file);
    match to {
        AnnotationStream::Stdout => gha::annotate(Level::Error, Some(&file), r.line, &r.message),
        AnnotationStream::Stderr if gha::in_actions() => {
            eprintln!(
                "{}",
                gha::annotation(Level::Error, Some(&file), r.line, &r.message)
            );
        }
        AnnotationStream::Stderr => {}
    }
}

/// `generate-matrix changelog`: 0 with the matrix on stdout, 1 on rejection.
pub fn run(args: &ChangelogArgs) -> ExitCode {
    let repo = Repo::new(".");
    match generate(&repo, &args.options()) {
        Ok(v) => {
            // Written by hand (not println!) so a closed stdout is an error
            // message, not a panic.
            let written = serde_json::to_string(&v)
                .map_err(std::io::Error::other)
                .and_then(|s| {
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "{s}").and_then(|()| out.flush())
                });
            match written {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: cannot write the matrix to stdout: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Err(r) => {
            // stdout is the matrix (the action captures it): annotate on stderr.
            report(
                &repo,
                &args.changelog_file,
                "error: ",
                &r,
                AnnotationStream::Stderr,
            );
            ExitCode::from(1)
        }
    }
}
