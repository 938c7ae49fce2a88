//! The subcommands' flags and glue, one module each, and the helpers they
//! share (token, step outputs, poll settings).
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use github_client::{Client, Config};
use sweep_cli as gha;
use sweep_ops::{OpsError, Poll};

use sweep_cli::Failure;

pub(crate) mod digest;
pub(crate) mod fork;
pub(crate) mod ingest;
pub(crate) mod merge;
pub(crate) mod recover;
pub(crate) mod reminder;

/// A client with the first token of `vars`; none is a usage failure.
pub(crate) fn client(vars: &[&str]) -> Result<Client, Failure> {
    let config = Config::from_env(vars);
    if config.token.is_none() {
        return Err(anyhow::anyhow!("{} is required", vars.join(" or ")).into());
    }
    Ok(Client::new(config).map_err(OpsError::from)?)
}

pub(crate) fn outputs(path: Option<&Path>, pairs: &[(&str, String)]) -> Result<(), Failure> {
    let Some(path) = path.filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    for (k, v) in pairs {
        gha::write_output(path, k, v).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

pub(crate) fn poll(timeout: u64, interval: u64) -> Poll {
    Poll {
        timeout: Duration::from_secs(timeout),
        interval: Duration::from_secs(interval),
    }
}
