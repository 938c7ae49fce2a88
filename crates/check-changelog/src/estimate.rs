//! `check-changelog dry-run`'s second cost figure: what the legs took the
//! last time they ran. The plan charges each leg its job timeout (an upper
//! bound); with a token, this module reads the newest completed runs of the
//! sweep workflow (Actions API, through `github_client`), finds for each leg
//! the newest successful job of the same leg, and charges the leg that
//! job's duration (`completed_at - started_at`). A leg that never ran
//! successfully in those runs keeps its timeout, and the output says how
//! many did.
//!
//! A leg is recognised by its job name in `run-sweep.yml`:
//! `<family>[ (k/n)] / p<priority> | <model-prefix> <precision> <runner>
//! <framework> TP<tp> c<conc>[ | eval|eval-only]` (multi-node: `<n>P x
//! <m>D c<conc>x<conc>…`), with the caller's job name in front when the
//! workflow is called (`sweep / …`). The family and everything after `| `
//! must match; the priority and the part number are ignored.

use serde_json::{Value, json};
use sweep_changelog::dry_run::{Leg, Plan, gpu_hours};
use sweep_matrix::leg::{LegPart, job_name};
use sweep_matrix::legs::FAMILIES;

/// Newest completed runs of the workflow whose jobs are read: one runs
/// page, then one jobs listing per run until every leg is found. Twenty
/// runs are a few weeks of a busy repository's sweeps; older durations say
/// little about today's images.
pub(crate) const MAX_RUNS_SCANNED: usize = 20;

/// Where the history is read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Source {
    /// `owner/name`.
    pub(crate) repo: String,
    /// The sweep workflow's file name (or id).
    pub(crate) workflow: String,
}

/// The job a leg's duration was taken from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Measured {
    pub(crate) job: String,
    pub(crate) run_id: u64,
    pub(crate) minutes: f64,
}

/// Durations found for the legs of a plan (same order as `plan.legs`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Estimate {
    pub(crate) source: Source,
    pub(crate) runs_scanned: usize,
    pub(crate) legs: Vec<Option<Measured>>,
}

/// Reads the history and measures the legs of `plan`.
pub(crate) fn estimate(
    client: &github_client::Client,
    source: &Source,
    plan: &Plan,
) -> github_client::Result<Estimate> {
    let keys: Vec<Option<(String, String)>> = plan.legs.iter().map(leg_key).collect();
    let mut legs: Vec<Option<Measured>> = vec![None; plan.legs.len()];
    let per_page = MAX_RUNS_SCANNED.to_string();
    let runs = client.get(
        &format!(
            "/repos/{}/actions/workflows/{}/runs",
            source.repo,
            github_client::encode(&source.workflow)
        ),
        &[("status", "completed"), ("per_page", &per_page)],
    )?;
    let ids: Vec<u64> = runs
        .get("workflow_runs")
        .and_then(Value::as_array)
        .map(|runs| {
            runs.iter()
                .filter_map(|r| r.get("id").and_then(Value::as_u64))
                .take(MAX_RUNS_SCANNED)
                .collect()
        })
        .unwrap_or_default();
    let mut runs_scanned = 0;
    for run_id in ids {
        let wanted = |i: usize| legs[i].is_none() && keys[i].is_some();
        if !(0..legs.len()).any(wanted) {
            break;
        }
        runs_scanned += 1;
        let jobs = client.get_all(
            &format!("/repos/{}/actions/runs/{run_id}/jobs", source.repo),
            &[],
            Some("jobs"),
        )?;
        for job in &jobs {
            if job.get("conclusion").and_then(Value::as_str) != Some("success") {
                continue;
            }
            let name = job.get("name").and_then(Value::as_str).unwrap_or_default();
            let (Some(key), Some(minutes)) = (job_key(name), duration_minutes(job)) else {
                continue;
            };
            for (i, leg_key) in keys.iter().enumerate() {
                if legs[i].is_none() && leg_key.as_ref() == Some(&key) {
                    legs[i] = Some(Measured {
                        job: name.to_string(),
                        run_id,
                        minutes,
                    });
                }
            }
        }
    }
    Ok(Estimate {
        source: source.clone(),
        runs_scanned,
        legs,
    })
}

impl Estimate {
    fn measured(&self) -> usize {
        self.legs.iter().flatten().count()
    }

    /// GPU-minutes: measured legs at their last duration, the others at
    /// the plan's charge.
    fn gpu_minutes(&self, plan: &Plan) -> f64 {
        plan.legs
            .iter()
            .zip(&self.legs)
            .map(|(leg, m)| {
                let minutes = m.as_ref().map_or(f64::from(leg.minutes), |m| m.minutes);
                leg.gpus as f64 * minutes
            })
            .sum()
    }

    /// The lines printed under the plan's table.
    pub(crate) fn render(&self, plan: &Plan) -> String {
        let hours = self.gpu_minutes(plan) / 60.0;
        let unmeasured = plan.legs.len() - self.measured();
        let mut out = format!(
            "Estimate from the last successful jobs of the same legs ({} {}, newest {} completed runs read): {:.2} GPU-hours; upper bound (job timeouts): {:.2} GPU-hours.\n",
            self.source.repo,
            self.source.workflow,
            self.runs_scanned,
            hours,
            gpu_hours(plan.gpu_minutes()),
        );
        out.push_str(&format!(
            "{} of {} legs measured{}.\n",
            self.measured(),
            plan.legs.len(),
            if unmeasured > 0 {
                format!("; {unmeasured} without a successful job in those runs are charged their timeout")
            } else {
                String::new()
            }
        ));
        out
    }

    /// The `estimate` object of `--json`.
    pub(crate) fn to_json(&self, plan: &Plan) -> Value {
        let legs: Vec<Value> = self
            .legs
            .iter()
            .map(|m| match m {
                Some(m) => json!({"job": m.job, "run_id": m.run_id, "minutes": round2(m.minutes)}),
                None => Value::Null,
            })
            .collect();
        json!({
            "repo": self.source.repo,
            "workflow": self.source.workflow,
            "runs_scanned": self.runs_scanned,
            "legs_measured": self.measured(),
            "gpu_hours": round2(self.gpu_minutes(plan) / 60.0),
            "upper_bound_gpu_hours": gpu_hours(plan.gpu_minutes()),
            "legs": legs,
        })
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `(family label, identity)` of a job name, or `None` when the name is not
/// a sweep leg's.
pub(crate) fn job_key(name: &str) -> Option<(String, String)> {
    let (head, tail) = name.split_once(" | ")?;
    let (before, priority) = head.rsplit_once(" / ")?;
    // The matrix's priority string (`p3.000`, `p-3.000`); a sweep without
    // the priority step names its legs `p | …`.
    let priority = priority.strip_prefix('p')?;
    if !priority.is_empty() {
        priority.parse::<f64>().ok()?;
    }
    let label = before.rsplit(" / ").next()?;
    let label = match label.rsplit_once(" (") {
        Some((l, part)) if part.ends_with(')') && part.contains('/') => l,
        _ => label,
    };
    Some((label.to_string(), tail.to_string()))
}

/// `(family label, identity)` the leg's job is named with: the leg
/// workflow's own name ([`sweep_matrix::leg::job_name`]) without its
/// priority, or `None` when the leg's family is not a sweep family.
pub(crate) fn leg_key(leg: &Leg) -> Option<(String, String)> {
    let row = leg.row.as_object()?;
    // The family's title is the start of its jobs' names (FAMILIES).
    let family = FAMILIES.iter().find(|f| f.dotted() == leg.family)?;
    let part = LegPart::of_family(family.stem)?;
    let name = job_name(row, part);
    let (_, identity) = name.split_once(" | ")?;
    Some((family.title.to_string(), identity.to_string()))
}

/// Minutes from `started_at` to `completed_at`, when both are there.
fn duration_minutes(job: &Value) -> Option<f64> {
    let at = |k: &str| job.get(k).and_then(Value::as_str).and_then(epoch_seconds);
    let seconds = at("completed_at")? - at("started_at")?;
    (seconds >= 0).then(|| seconds as f64 / 60.0)
}

/// Seconds since the epoch of GitHub's `YYYY-MM-DDTHH:MM:SSZ` (fractional
/// seconds and offsets are not in its answers; such a time is not read).
fn epoch_seconds(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| ts.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_give_family_and_identity_without_priority_or_part() {
        assert_eq!(
            job_key("sweep / single-node 8k1k (2/4) / p3.000 | dsr1 fp8 b200 sgl TP8 c64 | eval"),
            Some((
                "single-node 8k1k".to_string(),
                "dsr1 fp8 b200 sgl TP8 c64 | eval".to_string()
            ))
        );
        assert_eq!(
            job_key(
                "multi-node agentic / p-3.000 | dsr1 fp4 gb200 dynamo-trt 1P (TP4) x 2D (TP8) c4x8"
            ),
            Some((
                "multi-node agentic".to_string(),
                "dsr1 fp4 gb200 dynamo-trt 1P (TP4) x 2D (TP8) c4x8".to_string()
            ))
        );
        assert_eq!(
            job_key("eval / p | m fp8 h200 vllm TP8 c64 | eval-only"),
            Some((
                "eval".to_string(),
                "m fp8 h200 vllm TP8 c64 | eval-only".to_string()
            ))
        );
        assert_eq!(job_key("eval / pX | m fp8 h200 vllm TP8 c64"), None);
        assert_eq!(job_key("collect-results"), None);
        assert_eq!(job_key("sweep / setup"), None);
    }

    #[test]
    fn github_times_are_read_and_others_refused() {
        assert_eq!(epoch_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(epoch_seconds("2024-03-01T01:02:03Z"), Some(1_709_254_923));
        assert_eq!(epoch_seconds("2024-03-01 01:02:03"), None);
        assert_eq!(epoch_seconds("2024-13-01T01:02:03Z"), None);
    }
}
