//! The `success-rate` command: count, write, summarise.
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use github_client::{Client, Config};
use serde_json::Value;
use success_rate::placed::{self, load_runners};
use success_rate::{count, fetch_jobs, repo_path, to_json, to_markdown, to_table};
use sweep_cli::{Level, annotate, append_step_summary, stdout, write_atomic};

use crate::Cli;

pub(crate) fn run(cli: &Cli) -> Result<()> {
    let runners = load_runners(&cli.runner_config)?;
    let buckets = &runners.buckets;
    let by_runner = cli
        .by_runner
        .as_deref()
        .filter(|p| !p.as_os_str().is_empty());
    let run_id: u64 = cli.run_id.trim().parse().map_err(|_| {
        anyhow!(
            "GITHUB_RUN_ID / --run-id '{}' is not a run id (a positive integer)",
            cli.run_id
        )
    })?;
    let client = token_client()?;
    let out = PathBuf::from(format!("{}.json", cli.stats_name));
    if !token_can_read(&client, &out, by_runner)? {
        return Ok(());
    }
    let jobs = fetch_jobs(&client, &cli.repo, run_id).with_context(|| {
        format!(
            "listing the jobs of run {run_id} in {}",
            repo_path(&cli.repo)
        )
    })?;
    let stats = count(&jobs, buckets);
    stdout::println(&to_table(&stats).to_string());
    write(&out, &to_json(&stats))?;
    let summary = match by_runner {
        Some(p) => write_by_runner(p, &jobs, &runners, run_id)?,
        None => to_markdown(&stats, &run_id.to_string()),
    };
    append_step_summary(&summary).context("appending to GITHUB_STEP_SUMMARY")?;
    eprintln!(
        "wrote {} ({} jobs, {} buckets)",
        out.display(),
        jobs.len(),
        buckets.len()
    );
    Ok(())
}

/// A GitHub client with the token from `GITHUB_TOKEN` / `GH_TOKEN` (required).
fn token_client() -> Result<Client> {
    let config = Config::from_env(&["GITHUB_TOKEN", "GH_TOKEN"]);
    if config.token.is_none() {
        return Err(anyhow!(
            "GITHUB_TOKEN (or GH_TOKEN) is required: a token that can read the repository's Actions runs"
        ));
    }
    Ok(Client::new(config)?)
}

/// Whether the token authenticates (`GET /user`); when it does not, the
/// outputs are written as `null` and `false` comes back (the run ends with
/// success).
fn token_can_read(client: &Client, out: &Path, by_runner: Option<&Path>) -> Result<bool> {
    // Reference contract (fixture auth-failure-writes-null): a token that
    // cannot even read /user gives a `null` file and exit 0, so the
    // artifact step still finds its file; the warning says why.
    match client.get("/user", &[]) {
        Ok(user) => eprintln!(
            "Authenticated as user: {}",
            user.get("login").and_then(|v| v.as_str()).unwrap_or("?")
        ),
        // An Actions job token (GitHub App installation) may not read
        // /user at all, yet can list the run's jobs: go on.
        Err(e)
            if e.status() == Some(403)
                && e.to_string()
                    .contains("Resource not accessible by integration") =>
        {
            eprintln!("Token is an integration token (GET /user: 403); continuing");
        }
        Err(e) => {
            let msg = format!(
                "Authentication failed: {e}; writing null to {}",
                out.display()
            );
            annotate(Level::Warning, None, None, &msg);
            eprintln!("warning: {}", sweep_model::gha::log_text(&msg));
            stdout::println("No data to display");
            write(out, "null")?;
            if let Some(p) = by_runner {
                write(p, "null")?;
            }
            return Ok(false);
        }
    }
    Ok(true)
}

/// Writes the by-runner placement to `p`; returns its step summary.
fn write_by_runner(
    p: &Path,
    jobs: &[Value],
    runners: &placed::Runners,
    run_id: u64,
) -> Result<String> {
    let placed = placed::place(jobs, runners);
    write(p, &placed::to_json(&placed))?;
    eprintln!(
        "wrote {}: {} attempts placed by runner, {} by name, {} could not be placed",
        p.display(),
        placed.by_runner,
        placed.by_name,
        placed.unplaced.total
    );
    Ok(placed::to_markdown(&placed, &run_id.to_string()))
}

fn write(path: &Path, text: &str) -> Result<()> {
    write_atomic(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))
}
