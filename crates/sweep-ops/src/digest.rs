//! `runner-digest`: the self-hosted runners reporting `offline` (the
//! reference's scheduled `runner-offline-digest.yml`), as markdown.
//!
//! Runners come from `GET /repos/{repo}/actions/runners` (or the
//! organisation's list), all pages. The digest lists the offline ones by
//! name with their OS and labels (the custom labels when there are any,
//! else all, as the reference). The reference posts it to Slack; here it
//! goes to stdout and the job summary, and optionally as a comment on an
//! issue — only when something is offline, like the reference's post.

use github_client::Client;
use serde_json::Value;
use sweep_model::markdown::inline;

use crate::Result;

/// Where the runners are registered.
#[derive(Debug, Clone)]
pub enum Scope {
    Repo(String),
    Org(String),
}

impl Scope {
    fn path(&self) -> String {
        match self {
            Scope::Repo(r) => format!("/repos/{r}/actions/runners"),
            Scope::Org(o) => format!("/orgs/{o}/actions/runners"),
        }
    }

    fn name(&self) -> &str {
        match self {
            Scope::Repo(s) | Scope::Org(s) => s,
        }
    }
}

/// One offline runner.
#[derive(Debug, Clone, PartialEq)]
pub struct Offline {
    pub name: String,
    pub os: String,
    pub labels: Vec<String>,
}

/// The counts and the offline runners, sorted by name.
#[derive(Debug, Clone, PartialEq)]
pub struct Digest {
    pub total: usize,
    pub offline: Vec<Offline>,
}

/// Reads every runner of `scope`.
pub fn collect(client: &Client, scope: &Scope) -> Result<Digest> {
    let runners = client.get_all(&scope.path(), &[], Some("runners"))?;
    Ok(from_runners(&runners))
}

/// The digest of a runner list.
pub fn from_runners(runners: &[Value]) -> Digest {
    let mut offline: Vec<Offline> = runners
        .iter()
        .filter(|r| r["status"].as_str() == Some("offline"))
        .map(|r| {
            let labels: Vec<&Value> = r["labels"].as_array().into_iter().flatten().collect();
            let custom: Vec<String> = labels
                .iter()
                .filter(|l| l["type"].as_str() == Some("custom"))
                .filter_map(|l| l["name"].as_str().map(str::to_string))
                .collect();
            let labels = if custom.is_empty() {
                labels
                    .iter()
                    .filter_map(|l| l["name"].as_str().map(str::to_string))
                    .collect()
            } else {
                custom
            };
            Offline {
                name: r["name"].as_str().unwrap_or("?").to_string(),
                os: r["os"].as_str().unwrap_or("?").to_string(),
                labels,
            }
        })
        .collect();
    offline.sort_by(|a, b| a.name.cmp(&b.name));
    Digest {
        total: runners.len(),
        offline,
    }
}

/// The markdown digest; `run_url` links the run that made it.
pub fn render(d: &Digest, scope: &Scope, date: &str, run_url: Option<&str>) -> String {
    let mut s = format!("### Runner digest — {}\n\n", inline(date));
    let run = run_url
        .map(|u| format!(" ([run]({u}))"))
        .unwrap_or_default();
    if d.offline.is_empty() {
        s.push_str(&format!(
            "All {} self-hosted runners of `{}` are online{run}.\n",
            d.total,
            scope.name()
        ));
        return s;
    }
    s.push_str(&format!(
        "{}/{} self-hosted runners offline in `{}`{run}.\n\n| runner | OS | labels |\n|---|---|---|\n",
        d.offline.len(),
        d.total,
        scope.name()
    ));
    for r in &d.offline {
        let labels: Vec<String> = r.labels.iter().map(|l| inline(l)).collect();
        s.push_str(&format!(
            "| {} | {} | {} |\n",
            inline(&r.name),
            inline(&r.os),
            labels.join(", ")
        ));
    }
    s
}

/// `YYYY-MM-DD` of a Unix time (UTC), for the heading.
pub fn utc_date(unix_secs: u64) -> String {
    // Howard Hinnant's days-to-civil algorithm.
    let z = (unix_secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(1_795_996_800), "2026-11-30");
    }
}
