//! `authorize-fork`: flags and glue over `sweep_ops::fork`.
use std::path::PathBuf;

use anyhow::Context;
use serde_json::Value;
use sweep_ops::fork;

use super::{client, outputs, poll};
use sweep_cli::Failure;

#[derive(clap::Args, Debug)]
pub(crate) struct ForkCli {
    /// Repository (`owner/name`).
    #[arg(long, env = "GITHUB_REPOSITORY")]
    repo: String,
    /// The `pull_request_target` event payload.
    #[arg(long, env = "GITHUB_EVENT_PATH")]
    event_path: PathBuf,
    /// Who applied the label.
    #[arg(long, env = "GITHUB_ACTOR")]
    actor: String,
    /// Workflow file to dispatch (the manual sweep entry).
    #[arg(long, env = "INPUT_WORKFLOW", default_value = "e2e-tests.yml")]
    workflow: String,
    /// Seconds to look for the dispatched run (its link goes in the comment).
    #[arg(long, env = "INPUT_LOOKUP_TIMEOUT", default_value_t = 30)]
    lookup_timeout: u64,
    /// Seconds between run lookups.
    #[arg(long, env = "INPUT_POLL_INTERVAL", default_value_t = 2)]
    poll_interval: u64,
    #[arg(long, env = "GITHUB_SERVER_URL", default_value = "https://github.com")]
    server_url: String,
    /// The label only the runners kept for fork code carry
    /// (`vars.FORK_SWEEP_RUNNER_LABEL`); without it nothing is dispatched.
    #[arg(long, env = "INPUT_FORK_RUNNER_LABEL")]
    fork_runner_label: Option<String>,
    #[arg(long, env = "GITHUB_OUTPUT")]
    github_output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub(crate) struct CheckRunnersCli {
    /// The trusted dispatch's search-space config (setup's matrix file).
    #[arg(long, env = "INPUT_MATRIX")]
    matrix: PathBuf,
    /// The BASE's runner file (never the fork's copy in the checkout).
    #[arg(long, env = "INPUT_RUNNER_CONFIG")]
    runner_config: PathBuf,
    /// Master configs of the checkout, only to name the config of a bad
    /// runner (absent files are skipped).
    #[arg(long = "config-file", default_values = sweep_matrix_masters())]
    config_files: Vec<PathBuf>,
}

/// The fixed master-config paths (`sweep_matrix::MASTER_CONFIGS`, which
/// this crate does not depend on for two strings).
fn sweep_matrix_masters() -> [&'static str; 2] {
    ["configs/amd-master.yaml", "configs/nvidia-master.yaml"]
}

pub(crate) fn authorize_fork(c: ForkCli) -> Result<(), Failure> {
    let text =
        sweep_model::fsio::read_text(&c.event_path, sweep_model::fsio::MAX_EVENT_PAYLOAD_BYTES)
            .with_context(|| format!("reading the event payload {}", c.event_path.display()))?;
    let event: Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not JSON", c.event_path.display()))?;
    let client = client(&["GH_TOKEN", "GITHUB_TOKEN"])?;
    let args = fork::ForkArgs {
        repo: c.repo,
        event,
        actor: c.actor,
        workflow: c.workflow,
        server_url: c.server_url.trim_end_matches('/').to_string(),
        lookup: poll(c.lookup_timeout, c.poll_interval),
        fork_runner_label: c.fork_runner_label,
    };
    let d = fork::authorize(&client, &args)?;
    let run = d.run_url.clone().unwrap_or_default();
    outputs(
        c.github_output.as_deref(),
        &[
            ("head-sha", d.head_sha.clone()),
            ("merge-sha", d.merge_sha.clone()),
            ("run-url", run.clone()),
        ],
    )?;
    let mut summary = serde_json::json!({
        "pr-number": d.pr_number, "head-sha": d.head_sha, "merge-sha": d.merge_sha,
        "label": d.label, "run-url": run, "commented": d.commented,
    });
    summary["inputs"] = d.inputs;
    sweep_cli::stdout::println(&summary.to_string());
    Ok(())
}

pub(crate) fn check_fork_runners(c: CheckRunnersCli) -> Result<(), Failure> {
    let bytes = sweep_model::fsio::read_regular(&c.matrix, fork::MAX_MATRIX_BYTES)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let matrix: Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{}: not JSON", c.matrix.display()))?;
    let runners = sweep_model::runners::Runners::load(&c.runner_config)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut configs = Vec::new();
    for path in &c.config_files {
        if !path.is_file() {
            continue;
        }
        let doc = sweep_model::yaml::load_file(path).map_err(|e| anyhow::anyhow!("{e}"))?;
        configs.push(fork::ConfigFile {
            path: path.display().to_string(),
            doc,
        });
    }
    let r = fork::check_runners(&matrix, &runners, &configs)?;
    eprintln!(
        "fork legs: {} rows on {} label(s) of {}: {}",
        r.rows,
        r.runners.len(),
        c.runner_config.display(),
        r.runners.join(", ")
    );
    Ok(())
}
