//! The subcommands: read the inputs, call `sweep-series`, print.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Map, Value};
use sweep_cli::{Failure, Outcome, ResultExt as _, stdout};
use sweep_model::fsio::read_regular;
use sweep_series::change_point::Options;
use sweep_series::git::{self, Branch, GitError, Pushed};
use sweep_series::pg::PgStore;
use sweep_series::series::{Sample, Scope};
use sweep_series::store::{Appended, History, Run, RunRef, Store, StoreError};

use crate::{AppendArgs, BackfillArgs, ChangesArgs, CheckoutArgs, ShowArgs, StoreArgs};

/// The pull request a merge commit's message names on its first line: a
/// merge commit's `Merge pull request #12 from owner/branch`, or a squash
/// merge's `Subject (#12)`. Anything else names none.
pub(crate) fn pr_of_message(message: &str) -> Option<u64> {
    let first = message.lines().next()?.trim();
    let digits = |s: &str| -> Option<u64> {
        let n: String = s.chars().take_while(char::is_ascii_digit).collect();
        (!n.is_empty() && n.len() <= 12)
            .then(|| n.parse().ok())
            .flatten()
    };
    if let Some(rest) = first.strip_prefix("Merge pull request #") {
        return digits(rest);
    }
    let inner = first.strip_suffix(')')?;
    let at = inner.rfind("(#")?;
    let n = &inner[at + 2..];
    digits(n).filter(|_| n.chars().all(|c| c.is_ascii_digit()))
}

/// `checkout`: the data branch's tip into a folder, for reading.
pub(crate) fn checkout(c: &CheckoutArgs) -> Outcome {
    let target = Branch {
        remote: c.remote.clone(),
        branch: c.branch.clone(),
        work: c.work.clone(),
    };
    match git::checkout(&target).map_err(Failure::failed)? {
        git::CheckedOut::Tip { commit } => eprintln!(
            "sweep-history: {} at {commit} checked out in {}",
            c.branch,
            c.work.display()
        ),
        git::CheckedOut::NoBranch => eprintln!(
            "sweep-history: no branch {} yet (no main run appended): {} is an empty history",
            c.branch,
            c.work.display()
        ),
    }
    Ok(())
}

/// The largest aggregate read: a full sweep's `agg_bmk.json` of 378 points
/// is under 1 MB; 64 MiB is far past any real one and bounds the memory.
const MAX_AGG_BYTES: u64 = 64 * 1024 * 1024;

/// A store error as the exit contract sees it: what the store or the rows
/// refuse is a "no" (1); what could not be read or written is 2.
fn store_failure(e: StoreError) -> Failure {
    match e {
        StoreError::Read(_) | StoreError::Write { .. } | StoreError::Database(_) => {
            Failure::failed(e)
        }
        StoreError::Corrupt { .. }
        | StoreError::BadRow { .. }
        | StoreError::Conflict { .. }
        | StoreError::Invalid(_) => Failure::rejected(e),
    }
}

/// The store `--store` names: a `postgres://` (or `postgresql://`) URL, or
/// a folder, which an append creates and every other command needs (a
/// missing folder read as an empty history would hide that nothing was
/// read).
fn open(store: &Path) -> Result<Box<dyn History>, Failure> {
    let text = store.to_string_lossy();
    if text.starts_with("postgres://") || text.starts_with("postgresql://") {
        Ok(Box::new(PgStore::connect(&text).map_err(store_failure)?))
    } else {
        Ok(Box::new(Store::new(store)))
    }
}

/// [`open`] for a command that reads the history: a folder must exist.
fn open_existing(store: &Path) -> Result<Box<dyn History>, Failure> {
    let text = store.to_string_lossy();
    let url = text.starts_with("postgres://") || text.starts_with("postgresql://");
    if !url && !store.is_dir() {
        return Err(Failure::failed(anyhow::anyhow!(
            "{}: no history store there (a folder: the checkout of the data branch, or a postgres:// URL)",
            store.display()
        )));
    }
    open(store)
}

fn rows(path: &Path) -> Result<Vec<Map<String, Value>>, Failure> {
    let bytes = read_regular(path, MAX_AGG_BYTES).or_failed()?;
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Failure::rejected(anyhow::anyhow!("{}: invalid JSON: {e}", path.display())))?;
    let Value::Array(items) = value else {
        return Err(Failure::rejected(anyhow::anyhow!(
            "{}: an aggregate is a JSON array of rows",
            path.display()
        )));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Object(m) => Ok(m),
            _ => Err(Failure::rejected(anyhow::anyhow!(
                "{}[{i}]: a row is a JSON object",
                path.display()
            ))),
        })
        .collect()
}

pub(crate) fn append(a: &AppendArgs) -> Outcome {
    let run = Run {
        run: RunRef {
            run_id: a.run_id,
            attempt: a.run_attempt,
            commit: a.commit.clone(),
            date: a.date.clone(),
            pr: a
                .pr_number
                .or_else(|| a.commit_message.as_deref().and_then(pr_of_message)),
        },
        repo: a.repo.clone(),
        event: a.event.clone(),
        benchmarks: rows(&a.agg)?,
        evals: match &a.evals {
            Some(p) => rows(p)?,
            None => Vec::new(),
        },
    };
    let what = format!(
        "run {} attempt {} of {} ({} benchmark and {} eval rows)",
        a.run_id,
        a.run_attempt,
        a.commit,
        run.benchmarks.len(),
        run.evals.len()
    );
    match (&a.target.remote, &a.target.store) {
        (Some(remote), _) => {
            let target = Branch {
                remote: remote.clone(),
                branch: a.target.branch.clone(),
                work: a.target.work.clone().unwrap_or_default(),
            };
            let message = format!("history: {what}");
            match git::append(&target, &run, &message, |_| ()) {
                Ok(Pushed::Landed { attempt, commit }) => {
                    eprintln!(
                        "sweep-history: {what} pushed to {} as {commit} (attempt {attempt})",
                        a.target.branch
                    );
                    Ok(())
                }
                Ok(Pushed::AlreadyThere) => {
                    eprintln!(
                        "sweep-history: {what} is on {} already; nothing to push",
                        a.target.branch
                    );
                    Ok(())
                }
                Err(GitError::Store(e)) => Err(store_failure(e)),
                Err(e) => Err(Failure::failed(e)),
            }
        }
        (None, Some(dir)) => match open(dir)?.append(&run).map_err(store_failure)? {
            Appended::Added { files } => {
                eprintln!(
                    "sweep-history: {what} appended to {} file(s) of {}",
                    files.len(),
                    dir.display()
                );
                Ok(())
            }
            Appended::AlreadyThere => {
                eprintln!(
                    "sweep-history: {what} is in {} already; nothing appended",
                    dir.display()
                );
                Ok(())
            }
        },
        (None, None) => Err(Failure::failed(anyhow::anyhow!("give --store or --remote"))),
    }
}

pub(crate) fn verify(s: &StoreArgs) -> Outcome {
    let v = open_existing(&s.store)?.verify().map_err(store_failure)?;
    stdout::println(&format!(
        "history verified: {} runs, {} files, {} rows",
        v.runs, v.files, v.lines
    ));
    Ok(())
}

pub(crate) fn changes(c: &ChangesArgs) -> Outcome {
    let in_unit = |x: f64| x.is_finite() && (0.0..=1.0).contains(&x);
    if !in_unit(c.max_pvalue) || !in_unit(c.min_magnitude) {
        return Err(Failure::failed(anyhow::anyhow!(
            "--max-pvalue and --min-magnitude are fractions from 0 to 1 (e.g. 0.001 and 0.02)"
        )));
    }
    let options = Options {
        max_pvalue: c.max_pvalue,
        min_magnitude: c.min_magnitude,
        ..Options::default()
    };
    // Every line read is parsed and a corrupt one refused (`lines`), so
    // no separate verify pass is needed here.
    let store = open_existing(&c.store.store)?;
    let mut found = Vec::new();
    for file in store.files().map_err(store_failure)? {
        let all = store
            .series(&file, &watched(), Scope::All)
            .map_err(store_failure)?;
        let news = match &c.since {
            Some(since) => sweep_series::changes::new_since(&all, since, &options),
            None => sweep_series::changes::changes(&all, &options),
        };
        for change in news {
            found.push((file.clone(), change));
        }
    }
    if c.markdown {
        stdout::print(&digest(&found, c.since.as_deref()));
        return Ok(());
    }
    if c.json {
        let items: Vec<Value> = found
            .iter()
            .map(|(file, ch)| {
                let mut v = serde_json::to_value(ch).unwrap_or(Value::Null);
                if let Value::Object(m) = &mut v {
                    m.insert("file".into(), Value::from(file.as_str()));
                }
                v
            })
            .collect();
        stdout::println(&Value::Array(items).to_string());
        return Ok(());
    }
    let mut out = format!("{} change point(s)\n", found.len());
    for (file, ch) in &found {
        let pr = ch
            .after
            .pr
            .map_or_else(|| "no PR".to_string(), |p| format!("PR #{p}"));
        let _ = writeln!(
            out,
            "{file} {metric} {change:+.1}% at run {run} ({pr}, commits {from}..{to}, {date}; p = {p:.2e}) {point}",
            metric = ch.metric,
            change = ch.change * 100.0,
            run = ch.after.run_id,
            from = short(&ch.before.commit),
            to = short(&ch.after.commit),
            date = ch.after.date,
            p = ch.pvalue,
            point = ch.point,
        );
    }
    stdout::print(&out);
    Ok(())
}

pub(crate) fn show(s: &ShowArgs) -> Outcome {
    let store = open_existing(&s.store.store)?;
    let file = format!("series/{}.jsonl", s.config);
    if !store.files().map_err(store_failure)?.contains(&file) {
        return Err(Failure::rejected(anyhow::anyhow!(
            "no series for {} in {} (a configuration is <hw>/<model prefix>-<precision>-<framework>)",
            s.config,
            s.store.store.display()
        )));
    }
    let all = store
        .series(&file, &watched(), Scope::All)
        .map_err(store_failure)?;
    let mut out = String::new();
    let mut panels = Vec::new();
    for (point, metrics) in &all {
        let Some(samples) = metrics.get(s.metric.as_str()) else {
            continue;
        };
        let _ = writeln!(
            out,
            "{point}\n| run | commit | date | PR | {} |\n|---:|---|---|---:|---:|",
            s.metric
        );
        for x in samples {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.2} |",
                x.run.run_id,
                short(&x.run.commit),
                x.run.date,
                x.run.pr.map_or_else(String::new, |p| format!("#{p}")),
                x.value
            );
        }
        panels.push(trend_panel(point, samples, &s.metric));
    }
    if out.is_empty() {
        return Err(Failure::rejected(anyhow::anyhow!(
            "{}: no values of {} (watched: {})",
            s.config,
            s.metric,
            watched().join(", ")
        )));
    }
    if let Some(path) = &s.png {
        let trend = sweep_chart::trend::Trend {
            title: s.config.clone(),
            metric: s.metric.clone(),
            panels,
        };
        let bytes = sweep_chart::trend::png(&trend)
            .map_err(|e| Failure::failed_msg(format!("drawing {}: {e}", path.display())))?;
        sweep_model::fsio::write_atomic(path, &bytes)
            .map_err(|e| Failure::failed_msg(format!("{}: {e}", path.display())))?;
        eprintln!(
            "sweep-history: {} point(s) of {} drawn to {}",
            trend.panels.len(),
            s.config,
            path.display()
        );
    }
    stdout::print(&out);
    Ok(())
}

/// The change points as markdown: a heading with their number, then one
/// row each, 🟢 for a change for the better and 🔴 for the worse (by the
/// metric's direction), data strings escaped.
fn digest(found: &[(String, sweep_series::changes::Change)], since: Option<&str>) -> String {
    use sweep_model::markdown::inline;
    use sweep_series::series::{Better, WATCHED};
    let when = since.map_or_else(String::new, |d| format!(" since {d}"));
    if found.is_empty() {
        return format!("No new change points on main{when}.\n");
    }
    let mut out = format!(
        "### {} change point{} on main{when}\n\n\
         | Configuration | Point | Metric | Change | First run after | Pull request | Commits |\n\
         |:---|:---|:---|---:|:---|:---|:---|\n",
        found.len(),
        if found.len() == 1 { "" } else { "s" },
    );
    for (file, ch) in found {
        let higher = WATCHED
            .iter()
            .any(|(m, b)| *m == ch.metric && *b == Better::Higher);
        let icon = if (ch.change > 0.0) == higher {
            "🟢"
        } else {
            "🔴"
        };
        let config = file
            .strip_prefix("series/")
            .and_then(|f| f.strip_suffix(".jsonl"))
            .unwrap_or(file);
        let pr = ch
            .after
            .pr
            .map_or_else(|| "none".to_string(), |p| format!("#{p}"));
        let _ = writeln!(
            out,
            "| {config} | {point} | {metric} | {icon}\u{a0}{change:+.1}\u{a0}% | run {run}, {date} | {pr} | {from}..{to} |",
            config = inline(config),
            point = inline(&point_label(&ch.point)),
            metric = ch.metric,
            change = ch.change * 100.0,
            run = ch.after.run_id,
            date = inline(&ch.after.date),
            from = inline(short(&ch.before.commit)),
            to = inline(short(&ch.after.commit)),
        );
    }
    out
}

/// A point's identity as a reader names it, without what its file already
/// says (hardware, model, precision, framework) and without the fields at
/// their usual value: `8192/1024 TP2 EP1 conc 16`, then any other field
/// as `name value`.
fn point_label(id: &str) -> String {
    const IN_FILE: &[&str] = &["hw", "infmax_model_prefix", "precision", "framework"];
    const USUAL: &[(&str, &str)] = &[
        ("pp", "1"),
        ("dcp_size", "1"),
        ("pcp_size", "1"),
        ("disagg", "false"),
        ("is_multinode", "false"),
        ("spec_decoding", "none"),
        ("dp_attention", "false"),
    ];
    let Ok(Value::Object(m)) = serde_json::from_str::<Value>(id) else {
        return id.to_string();
    };
    let text = |k: &str| match m.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => Some(v.to_string()),
        None => None,
    };
    let mut words = Vec::new();
    if let (Some(i), Some(o)) = (text("isl"), text("osl")) {
        words.push(format!("{i}/{o}"));
    }
    for (k, prefix) in [("tp", "TP"), ("ep", "EP")] {
        if let Some(v) = text(k) {
            words.push(format!("{prefix}{v}"));
        }
    }
    if let Some(c) = text("conc") {
        words.push(format!("conc {c}"));
    }
    for k in m.keys() {
        let shown = ["isl", "osl", "tp", "ep", "conc"].contains(&k.as_str())
            || IN_FILE.contains(&k.as_str());
        let usual = USUAL
            .iter()
            .any(|(u, d)| u == k && text(k).as_deref() == Some(d));
        if !shown && !usual {
            let v = text(k).unwrap_or_default();
            words.push(format!("{k} {v}"));
        }
    }
    words.join(" ")
}

/// A point's panel of the trend picture: its values, oldest first, and the
/// line past which the next value would regress (learnt since the last
/// change point, as a comparison learns it), when there are enough values.
fn trend_panel(point: &str, samples: &[Sample], metric: &str) -> sweep_chart::trend::Panel {
    use sweep_series::baseline::{change_options, learn_samples};
    let better = sweep_series::series::WATCHED
        .iter()
        .find(|(m, _)| *m == metric)
        .map_or(sweep_series::series::Better::Higher, |(_, b)| *b);
    let settings = sweep_series::boundary::Settings::default();
    let learnt = learn_samples(Some(samples), better, &settings, &change_options());
    sweep_chart::trend::Panel {
        title: point_label(point),
        main: samples.iter().map(|x| x.value).collect(),
        limit: learnt.verdict.ok().map(|b| b.regression_limit(&settings)),
        new: None,
    }
}

/// The watched metrics' names.
fn watched() -> Vec<&'static str> {
    sweep_series::series::WATCHED
        .iter()
        .map(|(m, _)| *m)
        .collect()
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

pub(crate) fn backfill(b: &BackfillArgs) -> Outcome {
    use sweep_series::backfill::{self, BackfillError, Query, Report};
    let config = github_client::Config::from_env(&["GITHUB_TOKEN", "GH_TOKEN"]);
    let client = github_client::Client::new(config).or_failed()?;
    let q = Query {
        repo: &b.repo,
        workflow: &b.workflow,
        branch: &b.main_branch,
        max_runs: b.max_runs,
    };
    let failure = |e: BackfillError| match e {
        BackfillError::Store(e) => store_failure(e),
        other => Failure::failed(other),
    };
    let mut report = Report::default();
    match (&b.target.remote, &b.target.store) {
        (Some(remote), _) => {
            let target = Branch {
                remote: remote.clone(),
                branch: b.target.branch.clone(),
                work: b.target.work.clone().unwrap_or_default(),
            };
            let mut inner: Option<BackfillError> = None;
            let pushed = git::update(
                &target,
                &format!("history: backfill from {} ({})", b.repo, b.workflow),
                |store| match backfill::backfill(&client, &q, store) {
                    Ok(r) => {
                        let changed = !r.appended.is_empty();
                        report = r;
                        Ok(changed)
                    }
                    Err(BackfillError::Store(e)) => Err(e),
                    Err(e) => {
                        inner = Some(e);
                        Err(StoreError::Invalid("the backfill stopped".into()))
                    }
                },
                |_| (),
            );
            if let Some(e) = inner {
                return Err(failure(e));
            }
            match pushed {
                Ok(_) => {}
                Err(GitError::Store(e)) => return Err(store_failure(e)),
                Err(e) => return Err(Failure::failed(e)),
            }
        }
        (None, Some(dir)) => {
            report = backfill::backfill(&client, &q, &*open(dir)?).map_err(failure)?
        }
        (None, None) => return Err(Failure::failed(anyhow::anyhow!("give --store or --remote"))),
    }
    let mut out = format!(
        "backfill: {} run(s) listed, {} appended, {} already in the history",
        report.listed,
        report.appended.len(),
        report.already
    );
    if !report.without_artifact.is_empty() {
        let _ = write!(
            out,
            ", {} without a results_bmk artifact (expired or never made): {}",
            report.without_artifact.len(),
            report
                .without_artifact
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    stdout::println(&out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::pr_of_message;

    #[test]
    fn the_pull_request_is_read_from_a_merge_or_squash_subject() {
        assert_eq!(
            pr_of_message("Merge pull request #1234 from acme/bump\n\nBump."),
            Some(1234)
        );
        assert_eq!(pr_of_message("Bump the image (#77)\n\n* x"), Some(77));
        assert_eq!(pr_of_message("Bump (#77) again"), None);
        assert_eq!(pr_of_message("Fix (#7a)"), None);
        assert_eq!(pr_of_message("plain commit"), None);
        assert_eq!(pr_of_message(""), None);
    }
}
