//! The comment's charts block: a link to the `compare-report` artifact (the
//! reports, the SVG and one PNG per configuration) and, when the PNGs were
//! pushed to a branch (run-sweep.yml's `charts-branch`, the publish-charts
//! action), each configuration's picture (and trend) embedded by URL. A comment cannot
//! show a file inside an artifact zip, so without a branch (or on a fork's
//! pull request, whose token cannot push) the link is all there is.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{BodyError, check_url};

/// Where the pictures are.
#[derive(Debug, Clone, Default)]
pub struct Charts {
    /// The compare-report artifact's page (upload-artifact's `artifact-url`).
    pub report_url: Option<String>,
    /// The folder the PNGs were pushed to (publish-charts' `base-url`).
    pub base_url: Option<String>,
    /// compare-results' `charts.json` (`--charts-dir`).
    pub manifest: Option<Value>,
}

/// `charts.json`, the layout this version reads.
const MANIFEST_SCHEMA: u64 = 1;

#[derive(Debug, Deserialize)]
struct Manifest {
    schema_version: u64,
    charts: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
struct Entry {
    configuration: String,
    file: String,
    #[serde(default)]
    regressed_points: u64,
    /// With main's history as the baseline: the configuration's trend.
    #[serde(default)]
    trend: Option<String>,
}

/// compare-results names its pictures NN-<slug>.png (and
/// NN-<slug>.trend.png): nothing that could leave the folder or end the
/// link.
fn check_file(file: &str) -> Result<(), BodyError> {
    let safe = file.ends_with(".png")
        && !file.starts_with('.')
        && file
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if safe {
        Ok(())
    } else {
        Err(bad(
            "charts.json",
            format!("file {file:?}: not a chart file name"),
        ))
    }
}

fn bad(what: &str, cause: String) -> BodyError {
    BodyError::Input {
        what: what.into(),
        cause,
    }
}

/// The template's `charts` value, `None` when there is nothing to show.
pub fn context(c: &Charts) -> Result<Option<Value>, BodyError> {
    let mut link = None;
    if let Some(url) = c.report_url.as_deref().filter(|u| !u.is_empty()) {
        check_url("compare-report URL", url)?;
        link = Some(format!(
            "Charts and the full report: [compare-report]({url}) (the SVG and one PNG per configuration)"
        ));
    }
    let mut images = Vec::new();
    if let (Some(base), Some(manifest)) = (
        c.base_url.as_deref().filter(|u| !u.is_empty()),
        c.manifest.as_ref(),
    ) {
        check_url("charts base URL", base)?;
        let m = Manifest::deserialize(manifest).map_err(|e| bad("charts.json", e.to_string()))?;
        if m.schema_version != MANIFEST_SCHEMA {
            return Err(bad(
                "charts.json",
                format!(
                    "schema_version {} (this version reads {MANIFEST_SCHEMA})",
                    m.schema_version
                ),
            ));
        }
        let base = if base.ends_with('/') {
            base.to_string()
        } else {
            format!("{base}/")
        };
        for e in &m.charts {
            check_file(&e.file)?;
            if let Some(trend) = &e.trend {
                check_file(trend)?;
            }
            let title = sweep_model::markdown::inline(&e.configuration);
            images.push(json!({
                "title": title,
                "alt": title.replace(['[', ']'], ""),
                "url": format!("{base}{}", e.file),
                "trend_url": e.trend.as_ref().map(|t| format!("{base}{t}")),
                "regressed": e.regressed_points > 0,
            }));
        }
    }
    if link.is_none() && images.is_empty() {
        return Ok(None);
    }
    Ok(Some(json!({"link": link, "images": images})))
}
