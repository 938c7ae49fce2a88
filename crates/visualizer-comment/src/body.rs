//! The comment body, laid out for a reader: the verdict and the regressions
//! in the first lines (from compare-results' JSON `summary`), the eval
//! failures (or how many passed their thresholds), the reference's two
//! visualizer lines, the run and the reused run with links, the success
//! rate per hardware (success-rate's `run_stats_by_runner.json` when given,
//! with the jobs it could not place, else its `run_stats.json`), then the extra
//! sections (the compare report, whose per-configuration tables and charts
//! are folded in `<details>` and whose eval table shows each threshold), and
//! a footer naming the sweepkit version.
//!
//! The layout is the minijinja template `templates/comment.md.j2`; this
//! module formats and escapes every value. A body over GitHub's limit
//! ([`BODY_LIMIT`]) keeps everything but the sections whole, cuts the
//! sections at a line end (closing an open code fence or `<details>`), and
//! says so in a visible note; the full body goes to the job summary.
//!
//! The heading's words come from [`crate::verdict`] (shared with the check
//! run), the charts block from [`crate::charts`]; neither imports this module.

use std::collections::BTreeMap;

use minijinja::Environment;
use serde::Deserialize;
use serde_json::{Value, json};

pub use crate::error::BodyError;
use crate::error::check_url;
use crate::verdict::{self, HEAD_ITEMS, plural};
use crate::{BODY_LIMIT, marker_line, visualizer_lines};

const TEMPLATE: &str = include_str!("../../../templates/comment.md.j2");

/// Everything the body is made of.
#[derive(Debug, Clone, Default)]
pub struct BodyInput {
    pub marker: String,
    pub visualizer_url: String,
    /// The run the visualizer links show.
    pub run_id: String,
    /// This workflow run.
    pub run_url: Option<String>,
    /// The run whose results were reused (`/reuse-sweep-run`).
    pub reused_run_url: Option<String>,
    /// compare-results' `--json` report (its `summary` is read).
    pub compare: Option<Value>,
    /// success-rate's `run_stats.json` (`null` when it could not count).
    pub run_stats: Option<Value>,
    /// success-rate's `run_stats_by_runner.json` (counts placed by the
    /// runner that ran each job); preferred over `run_stats` when it is
    /// there and not `null`.
    pub run_stats_by_runner: Option<Value>,
    /// Extra markdown sections, in order.
    pub sections: Vec<String>,
    /// The compare-report link and the embedded PNGs ([`crate::charts`]).
    pub charts: crate::charts::Charts,
    /// The footer's version; [`BodyInput::new`] sets this crate's.
    pub version: String,
    /// The commit the comment speaks for (the PR's head) and its page, for
    /// the provenance line.
    pub head: Option<(String, Option<String>)>,
    /// A writer's acknowledgement of the regression ([`crate::ack`]):
    /// named in the heading, which turns ⚠️.
    pub acknowledgement: Option<crate::ack::Acknowledgement>,
}

impl BodyInput {
    pub fn new(marker: &str, visualizer_url: &str, run_id: &str) -> Self {
        BodyInput {
            marker: marker.into(),
            visualizer_url: visualizer_url.into(),
            run_id: run_id.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            ..Default::default()
        }
    }
}

/// A rendered body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    pub text: String,
    /// Whether the sections were cut to fit [`BODY_LIMIT`].
    pub truncated: bool,
}

#[derive(Debug, Deserialize)]
struct Stat {
    n_success: u64,
    total: u64,
}

/// The `run_stats_by_runner.json` layout this version reads.
const BY_RUNNER_SCHEMA: u64 = 1;

#[derive(Debug, Deserialize)]
struct ByRunner {
    schema_version: u64,
    clusters: Value,
    unplaced: Unplaced,
}

#[derive(Debug, Deserialize)]
struct Unplaced {
    total: u64,
    #[serde(default)]
    jobs: Vec<UnplacedJob>,
}

#[derive(Debug, Deserialize)]
struct UnplacedJob {
    name: String,
}

fn md(s: &str) -> String {
    sweep_model::markdown::inline(s)
}

/// `[run 123](https://…/runs/123)`, the label taken from the URL's last
/// segment when it is a run id.
fn run_link(url: &str) -> String {
    let id = url
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    match id {
        Some(id) => format!("[run {id}]({url})"),
        None => format!("[the run]({url})"),
    }
}

fn stats_rows(v: &Value) -> Result<Option<Vec<Value>>, BodyError> {
    if v.is_null() {
        return Ok(None);
    }
    let stats: BTreeMap<String, Stat> = BTreeMap::deserialize(v).map_err(|e| BodyError::Input {
        what: "run stats JSON".into(),
        cause: format!("expected {{hardware: {{n_success, total}}}}: {e}"),
    })?;
    Ok(Some(
        stats
            .iter()
            .filter(|(_, s)| s.total > 0)
            .map(|(hw, s)| {
                let rate = s.n_success as f64 / s.total as f64 * 100.0;
                let mark = if s.n_success == s.total {
                    ""
                } else {
                    " ⚠️"
                };
                json!({"hw": md(hw), "ok": s.n_success, "total": s.total,
                       "rate": format!("{rate:.0}\u{a0}%{mark}")})
            })
            .collect(),
    ))
}

/// success-rate's `run_stats_by_runner.json`, with the line naming the
/// jobs it could not place (`None` when it placed them all).
fn by_runner(v: &Value) -> Result<(ByRunner, Option<String>), BodyError> {
    let bad = |cause: String| BodyError::Input {
        what: "run stats by runner JSON".into(),
        cause,
    };
    let placed = ByRunner::deserialize(v).map_err(|e| {
        bad(format!(
            "expected {{schema_version, clusters, unplaced: {{total, jobs}}}}: {e}"
        ))
    })?;
    if placed.schema_version != BY_RUNNER_SCHEMA {
        return Err(bad(format!(
            "schema_version {} (this version reads {BY_RUNNER_SCHEMA})",
            placed.schema_version
        )));
    }
    let n = placed.unplaced.total;
    if n == 0 {
        return Ok((placed, None));
    }
    // Attempts of one job share its name: each name once, with its count
    // of attempts when there are several (so the count above and the
    // names below visibly agree).
    let mut names: Vec<(&str, u64)> = Vec::new();
    for j in &placed.unplaced.jobs {
        match names.iter_mut().find(|(name, _)| *name == j.name.as_str()) {
            Some((_, k)) => *k += 1,
            None => names.push((&j.name, 1)),
        }
    }
    let listed: Vec<String> = names
        .iter()
        .take(HEAD_ITEMS)
        .map(|(name, k)| match k {
            1 => md(name),
            k => format!("{} ({k} attempts)", md(name)),
        })
        .collect();
    // The file names the first jobs only; then the count of names is a floor.
    let cut = (placed.unplaced.jobs.len() as u64) < n;
    let rest = match names.len().saturating_sub(HEAD_ITEMS) {
        0 if cut && !listed.is_empty() => "; and others".to_string(),
        0 => String::new(),
        k => format!("; and {k}{} more", if cut { " or" } else { "" }),
    };
    let line = format!(
        "⚠️ {} could not be placed on a hardware cluster (its runner is in no `cluster:` list of the runner file and no cluster appears in its name){}{}{rest}.",
        plural(n, "job", "jobs"),
        if listed.is_empty() { "" } else { ": " },
        listed.join("; "),
    );
    Ok((placed, Some(line)))
}

/// `[4f2a9c0](…/commit/…) compared with [main @ 1a2b3c4 (run 123,
/// 2026-12-01)](…/runs/123)`: the commit this comment speaks for and what it
/// was compared with (a run, a file or the label), linked when known.
fn provenance(input: &BodyInput, compare: &Value) -> Result<Option<String>, BodyError> {
    let s = verdict::summary(compare)?;
    let b = &s.baseline;
    let mut base = md(&b.label);
    if let Some(url) = &b.run_url {
        check_url("baseline run URL", url)?;
        base = format!("[{base}]({url})");
    }
    if let Some(file) = b.file.as_deref().filter(|f| *f != b.label) {
        base = format!("{base} (file {})", md(file));
    }
    let head = match &input.head {
        Some((sha, url)) => {
            let short: String = sha.chars().take(7).collect();
            let short = md(&short);
            match url {
                Some(url) => {
                    check_url("head commit URL", url)?;
                    format!("[`{short}`]({url})")
                }
                None => format!("`{short}`"),
            }
        }
        None if b.label.is_empty() => return Ok(None),
        None => "This run".to_string(),
    };
    Ok(Some(format!("{head} compared with {base}")))
}

/// The template's context, sections given separately (they are what a cut
/// shortens).
fn context(input: &BodyInput, read_only: Option<(u64, &str)>) -> Result<Value, BodyError> {
    let mut ctx = serde_json::Map::new();
    ctx.insert("marker_line".into(), marker_line(&input.marker).into());
    ctx.insert(
        "links".into(),
        visualizer_lines(&input.visualizer_url, &input.run_id).into(),
    );
    if let Some((pr, reason)) = read_only {
        ctx.insert("read_only".into(), json!({"pr": pr, "reason": md(reason)}));
    }
    insert_run_links(&mut ctx, input)?;
    if let Some(compare) = &input.compare {
        insert_verdict(&mut ctx, input, compare)?;
    }
    insert_stats(&mut ctx, input)?;
    if let Some(charts) = crate::charts::context(&input.charts)? {
        ctx.insert("charts".into(), charts);
    }
    ctx.insert(
        "footer".into(),
        format!("posted by sweepkit {}", md(&input.version)).into(),
    );
    Ok(Value::Object(ctx))
}

/// The `run` line (this run's link) and the `reused` one (the run whose
/// results were reused), each URL checked.
fn insert_run_links(
    ctx: &mut serde_json::Map<String, Value>,
    input: &BodyInput,
) -> Result<(), BodyError> {
    if let Some(url) = &input.run_url {
        check_url("run URL", url)?;
        ctx.insert("run".into(), format!("Run: {}", run_link(url)).into());
    }
    if let Some(url) = &input.reused_run_url {
        check_url("reused run URL", url)?;
        ctx.insert(
            "reused".into(),
            format!(" · benchmark results reused from {}", run_link(url)).into(),
        );
        if input.run_url.is_none() {
            ctx.insert("run".into(), "Run: this one".into());
        }
    }
    Ok(())
}

/// The verdict's part of the context, from the compare report: the
/// headline (acknowledged when an acknowledgement of the head holds), the
/// regressions, the failed evals and the provenance line.
fn insert_verdict(
    ctx: &mut serde_json::Map<String, Value>,
    input: &BodyInput,
    compare: &Value,
) -> Result<(), BodyError> {
    let scheduled =
        verdict::scheduled(input.run_stats.as_ref(), input.run_stats_by_runner.as_ref());
    let mut h = verdict::head(compare, scheduled)?;
    let head_sha = input.head.as_ref().map(|(sha, _)| sha.as_str());
    if let Some(a) = input
        .acknowledgement
        .as_ref()
        .filter(|a| head_sha.is_some_and(|sha| a.is_for(sha)))
        && h.acknowledge(&a.login, &a.reason, a.url.as_deref())
    {
        ctx.insert("acknowledged".into(), true.into());
    }
    ctx.insert("headline".into(), format!("{} {}", h.icon, h.line).into());
    let tail = " (the largest in the top regressions below, every one in the full report)";
    ctx.insert("regressions".into(), h.regressions.into());
    ctx.insert(
        "more_regressions".into(),
        verdict::more(h.regressions_total, tail).into(),
    );
    if let Some(other) = h.other_hardware {
        ctx.insert("other_hardware".into(), other.into());
    }
    ctx.insert("failed_evals".into(), h.failed_evals.into());
    ctx.insert(
        "more_failed_evals".into(),
        verdict::more(h.failed_evals_total, "").into(),
    );
    ctx.insert("evals_line".into(), h.evals_line.into());
    ctx.insert("provenance".into(), provenance(input, compare)?.into());
    Ok(())
}

/// The job counts table: from the counts by runner when given (not
/// `null`), else from the run stats; a note when none were counted or
/// success-rate could not count.
fn insert_stats(
    ctx: &mut serde_json::Map<String, Value>,
    input: &BodyInput,
) -> Result<(), BodyError> {
    let by_runner = match &input.run_stats_by_runner {
        Some(v) if !v.is_null() => Some(by_runner(v)?),
        _ => None,
    };
    if let Some((placed, unplaced)) = by_runner {
        let rows = match stats_rows(&placed.clusters) {
            Ok(Some(rows)) => rows,
            Ok(None) => Vec::new(),
            Err(BodyError::Input { cause, .. }) => {
                return Err(BodyError::Input {
                    what: "run stats by runner JSON `clusters`".into(),
                    cause,
                });
            }
            Err(e) => return Err(e),
        };
        if rows.is_empty() && unplaced.is_none() {
            ctx.insert(
                "stats_note".into(),
                "No GPU jobs were counted for this run.".into(),
            );
        }
        ctx.insert("stats".into(), rows.into());
        ctx.insert("stats_unplaced".into(), unplaced.into());
    } else if let Some(stats) = &input.run_stats {
        match stats_rows(stats)? {
            Some(rows) => {
                if rows.is_empty() {
                    ctx.insert(
                        "stats_note".into(),
                        "No GPU jobs were counted for this run.".into(),
                    );
                }
                ctx.insert("stats".into(), rows.into());
            }
            None => {
                ctx.insert("stats".into(), Vec::<Value>::new().into());
                ctx.insert(
                    "stats_note".into(),
                    "Not available: success-rate could not read this run's jobs.".into(),
                );
            }
        }
    }
    Ok(())
}

fn render_template(
    ctx: &Value,
    sections: &[String],
    note: Option<&str>,
) -> Result<String, BodyError> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.add_template("comment.md.j2", TEMPLATE)
        .map_err(|e| BodyError::Render(format!("{e:#}")))?;
    let mut ctx = ctx.clone();
    if let Value::Object(m) = &mut ctx {
        m.insert("sections".into(), sections.into());
        m.insert("truncated_note".into(), note.into());
    }
    let out = env
        .get_template("comment.md.j2")
        .and_then(|t| t.render(minijinja::Value::from_serialize(&ctx)))
        .map_err(|e| BodyError::Render(format!("{e:#}")))?;
    Ok(out.trim_end().to_string())
}

/// The sections, trimmed, empty ones dropped. When the heading says the
/// regression is acknowledged (`ctx.acknowledged`), compare-results' own
/// verdict line in a section says so too, so the body never shows ⚠️ at
/// the top and ❌ in the report.
fn clean_sections(ctx: &Value, sections: &[String]) -> Vec<String> {
    let acknowledged = ctx.get("acknowledged").and_then(Value::as_bool) == Some(true);
    sections
        .iter()
        .map(|s| s.trim_matches('\n').to_string())
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            if acknowledged {
                acknowledged_verdict(&s)
            } else {
                s
            }
        })
        .collect()
}

/// compare-results' verdict line (`**Verdict: ❌ …`, templates/compare.md.j2)
/// turned ⚠️ and marked acknowledged; every other line as it was.
fn acknowledged_verdict(section: &str) -> String {
    const FAILED: &str = "**Verdict: ❌ ";
    section
        .split('\n')
        .map(|line| match line.strip_prefix(FAILED) {
            Some(rest) => format!("**Verdict: ⚠️ acknowledged: {rest}"),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The chart images' titles, least severe first: configurations without a
/// regressed point before regressed ones, then those whose worst regression
/// comes last in compare's list of regressed points (largest change
/// first), then the latest in the manifest.
fn images_least_severe_first(ctx: &Value, compare: Option<&Value>) -> Vec<String> {
    let top: Vec<String> = compare
        .and_then(|c| verdict::summary(c).ok())
        .map(|s| {
            s.top_regressions
                .iter()
                .map(|t| md(&t.group))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let images = ctx
        .pointer("/charts/images")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut ranked: Vec<(bool, usize, usize, String)> = images
        .iter()
        .enumerate()
        .filter_map(|(i, im)| {
            let title = im.get("title")?.as_str()?.to_string();
            let regressed = im.get("regressed").and_then(Value::as_bool) == Some(true);
            let rank = top.iter().position(|g| *g == title).unwrap_or(usize::MAX);
            Some((regressed, rank, i, title))
        })
        .collect();
    ranked.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
    ranked.into_iter().map(|r| r.3).collect()
}

/// `ctx` without the chart images named in `dropped`, which it names.
fn without_images(ctx: &Value, dropped: &[String]) -> Value {
    let mut ctx = ctx.clone();
    if let Some(Value::Array(images)) = ctx.pointer_mut("/charts/images") {
        images.retain(|im| {
            !im.get("title")
                .and_then(Value::as_str)
                .is_some_and(|t| dropped.iter().any(|d| d == t))
        });
    }
    if let Value::Object(m) = &mut ctx {
        m.insert("charts_dropped".into(), dropped.into());
    }
    ctx
}

/// The comment body, capped at [`BODY_LIMIT`] characters, charts
/// included: one budget for the whole body (issue #37 item 1). Over it,
/// whole chart images go first, least severe first, named in a note; then
/// the sections are cut before a `### ` heading (never inside a table or a
/// fold) with `notice` shown.
pub fn render(input: &BodyInput, notice: &str) -> Result<Body, BodyError> {
    let mut ctx = context(input, None)?;
    let sections = clean_sections(&ctx, &input.sections);
    let full = render_template(&ctx, &sections, None)?;
    if full.chars().count() <= BODY_LIMIT {
        return Ok(Body {
            text: full,
            truncated: false,
        });
    }
    let order = images_least_severe_first(&ctx, input.compare.as_ref());
    for k in 1..=order.len() {
        let trimmed = without_images(&ctx, &order[..k]);
        let text = render_template(&trimmed, &sections, None)?;
        if text.chars().count() <= BODY_LIMIT {
            return Ok(Body {
                text,
                truncated: false,
            });
        }
        if k == order.len() {
            ctx = trimmed;
        }
    }
    let frame = render_template(&ctx, &[], Some(notice))?;
    let joined = sections.join("\n\n");
    // The frame (head, tables, note, footer) stays whole; the sections get
    // what is left, less a margin for the blank lines around them and the
    // closers a cut may need.
    let mut budget = BODY_LIMIT.saturating_sub(frame.chars().count() + 64);
    loop {
        let cut = cut_at_block(&joined, budget);
        let text = render_template(&ctx, &[cut], Some(notice))?;
        let n = text.chars().count();
        if n <= BODY_LIMIT {
            return Ok(Body {
                text,
                truncated: true,
            });
        }
        if budget == 0 {
            // Even without sections the frame is too long (huge data
            // strings): cut the whole body, keep the note.
            let tail = format!("\n\n> [!NOTE]\n> {notice}");
            let mut text =
                cut_at_line_end(&text, BODY_LIMIT.saturating_sub(tail.chars().count() + 64));
            text.push_str(&tail);
            return Ok(Body {
                text,
                truncated: true,
            });
        }
        budget = budget.saturating_sub(n - BODY_LIMIT);
    }
}

/// The first `budget` characters of `text` cut before its last `### `
/// heading that fits, so no table or fold is cut; a text without such a
/// heading in the budget is cut at a line end ([`cut_at_line_end`]).
fn cut_at_block(text: &str, budget: usize) -> String {
    let head: String = text.chars().take(budget).collect();
    if head.len() == text.len() {
        return head;
    }
    match head.rfind("\n### ").filter(|i| *i > 0) {
        Some(i) => head[..i].trim_end().to_string(),
        None => cut_at_line_end(text, budget),
    }
}

/// The whole body, uncapped: for the job summary.
pub fn render_full(input: &BodyInput) -> Result<String, BodyError> {
    let ctx = context(input, None)?;
    render_template(&ctx, &clean_sections(&ctx, &input.sections), None)
}

/// The job summary written instead of a comment when the token is
/// read-only (fork pull requests): a warning naming the PR and GitHub's
/// reason, then the whole body.
pub fn render_read_only(input: &BodyInput, pr: u64, reason: &str) -> Result<String, BodyError> {
    let ctx = context(input, Some((pr, reason)))?;
    render_template(&ctx, &clean_sections(&ctx, &input.sections), None)
}

/// The first `budget` characters of `text`, cut at a line end, with an open
/// code fence and open `<details>` closed so the rest of the body renders.
fn cut_at_line_end(text: &str, budget: usize) -> String {
    let mut head: String = text.chars().take(budget).collect();
    if head.len() < text.len() {
        match head.rfind('\n') {
            Some(i) => head.truncate(i),
            None => head.clear(),
        }
    }
    let fences = head
        .lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count();
    if fences % 2 == 1 {
        head.push_str("\n```");
    }
    let opened = head.matches("<details").count();
    let closed = head.matches("</details>").count();
    for _ in closed..opened {
        head.push_str("\n\n</details>");
    }
    head
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_closes_fences_and_details() {
        let text = "<details><summary>s</summary>\n\n```mermaid\nline 1\nline 2\n```\n\n</details>";
        let cut = cut_at_line_end(text, 50);
        assert_eq!(
            cut,
            "<details><summary>s</summary>\n\n```mermaid\nline 1\n```\n\n</details>"
        );
        assert_eq!(cut_at_line_end("short", 100), "short");
    }

    #[test]
    fn run_links_are_labelled_by_their_run_id() {
        assert_eq!(
            run_link("https://github.com/o/r/actions/runs/123"),
            "[run 123](https://github.com/o/r/actions/runs/123)"
        );
        assert_eq!(run_link("https://x/y/"), "[the run](https://x/y/)");
    }
}
