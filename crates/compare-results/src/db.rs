//! Baselines from the InferenceX PostgreSQL database (`--database-url`),
//! with the reference `compare_results.py` query semantics: per new point,
//! the newest (`benchmark_results.date`) error-free row of a `main`-branch
//! workflow run whose config matches hardware, framework, model prefix
//! (`LIKE '<prefix>%'`), precision, spec method, disagg, is_multinode,
//! prefill/decode TP, EP and DP attention, and whose ISL, OSL and
//! concurrency match. Worker and GPU counts, PP/DCP/PCP, image and recipe
//! are not matched, as in the reference. Two differences: the hardware and
//! framework are the normalised keys (so runner names such as
//! `b200-dgxc_03` match), and ties on the date break by the newest row id.
//! With `--baseline-runs N` the newest N such rows form the point's
//! baseline (repeats for the noise rule); N = 1 is the reference's query.
//! TLS follows the URL's `sslmode` (`prefer` by default: TLS when the
//! server offers it, else plain; `require`: TLS only; `disable`), with the
//! server certificate verified against the Mozilla root store.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::CompareError;
use crate::compare::Row;
use crate::key::{Origin, PointKey, Topology};

const QUERY: &str = "
    SELECT br.metrics::text, c.model, br.date::text
    FROM benchmark_results br
    JOIN configs c ON c.id = br.config_id
    JOIN workflow_runs wr ON wr.id = br.workflow_run_id
    WHERE c.hardware = $1
      AND c.framework = $2
      AND c.model LIKE $3 || '%'
      AND c.precision = $4
      AND c.spec_method = $5
      AND c.disagg = $6
      AND c.is_multinode = $7
      AND c.prefill_tp = $8::bigint
      AND c.prefill_ep = $9::bigint
      AND c.prefill_dp_attention = $10
      AND c.decode_tp = $11::bigint
      AND c.decode_ep = $12::bigint
      AND c.decode_dp_attention = $13
      AND br.isl = $14::bigint
      AND br.osl = $15::bigint
      AND br.conc = $16::bigint
      AND wr.head_branch = 'main'
      AND br.error IS NULL
    ORDER BY br.date DESC, br.id DESC
    LIMIT $17::bigint
";

/// Redacts the password of a `postgres://user:pass@host/db` URL for
/// messages (the history store's rule).
pub use sweep_series::pg::redact;

/// Looks up the baseline of every distinct key among `new`: its newest
/// `runs` rows (newest first). Returns one row per found baseline run,
/// carrying the new point's key, and prints the reference's diagnostics
/// (query parameters, matches) to stderr.
pub fn baselines(url: &str, new: &[Row], runs: u32) -> Result<Vec<Row>, CompareError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CompareError::Db(format!("starting the async runtime: {e}")))?;
    rt.block_on(query_all(url, new, i64::from(runs.max(1))))
}

/// The history store's TLS connector ([`sweep_series::pg::tls_connector`]).
fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect, CompareError> {
    sweep_series::pg::tls_connector().map_err(|e| CompareError::Db(format!("TLS set-up: {e}")))
}

async fn query_all(url: &str, new: &[Row], runs: i64) -> Result<Vec<Row>, CompareError> {
    let (client, connection) = tokio_postgres::connect(url, tls()?)
        .await
        .map_err(|e| CompareError::Db(format!("connecting to {}: {e}", redact(url))))?;
    let conn = tokio::spawn(connection);
    let stmt = client
        .prepare(QUERY)
        .await
        .map_err(|e| CompareError::Db(format!("preparing the baseline query: {e}")))?;
    let mut seen: HashSet<&PointKey> = HashSet::new();
    let mut out = Vec::new();
    let (mut matched, mut unmatched) = (0usize, 0usize);
    for row in new {
        if !seen.insert(&row.key) {
            continue;
        }
        let k = &row.key;
        let found = query_point(&client, &stmt, k, runs).await?;
        if found.is_empty() {
            unmatched += 1;
            eprintln!("compare-results:   -> no baseline found");
            continue;
        }
        matched += 1;
        for found in found {
            out.push(baseline_row(k, &found)?);
        }
    }
    eprintln!(
        "compare-results: {matched} matched, {unmatched} without a baseline out of {} points",
        seen.len()
    );
    drop(client);
    let _ = conn.await;
    Ok(out)
}

/// The (TP, EP, DP attention) of the prefill and of the decode side, as
/// the query matches them: a single-node topology is both sides.
fn sides(t: &Topology) -> ((i64, i64, bool), (i64, i64, bool)) {
    match t {
        Topology::Single {
            tp,
            ep,
            dp_attention,
            ..
        } => ((*tp, *ep, *dp_attention), (*tp, *ep, *dp_attention)),
        Topology::Multi {
            prefill, decode, ..
        } => (
            (prefill.tp, prefill.ep, prefill.dp_attention),
            (decode.tp, decode.ep, decode.dp_attention),
        ),
    }
}

/// Runs the baseline query for one new point (printing its parameters, as
/// the reference does): its newest `runs` rows, newest first.
async fn query_point(
    client: &tokio_postgres::Client,
    stmt: &tokio_postgres::Statement,
    k: &PointKey,
    runs: i64,
) -> Result<Vec<tokio_postgres::Row>, CompareError> {
    let g = &k.group;
    let ((ptp, pep, pdpa), (dtp, dep, ddpa)) = sides(&k.topology);
    eprintln!(
        "compare-results: query hardware={} framework={} model={}% precision={} spec_method={} disagg={} is_multinode={} prefill=tp{ptp}/ep{pep}/dpa={pdpa} decode=tp{dtp}/ep{dep}/dpa={ddpa} isl={} osl={} conc={}",
        g.hw,
        g.framework,
        g.model,
        g.precision,
        g.spec,
        g.disagg,
        g.is_multinode,
        g.isl,
        g.osl,
        k.conc
    );
    client
        .query(
            stmt,
            &[
                &g.hw,
                &g.framework,
                &g.model,
                &g.precision,
                &g.spec,
                &g.disagg,
                &g.is_multinode,
                &ptp,
                &pep,
                &pdpa,
                &dtp,
                &dep,
                &ddpa,
                &g.isl,
                &g.osl,
                &k.conc,
                &runs,
            ],
        )
        .await
        .map_err(|e| CompareError::Db(format!("baseline query for {}: {e}", k.label())))
}

/// One found database row as a baseline row of the new point `k`: its
/// metrics (a JSON object), its origin (model and date), checked like a
/// row of a file; prints the match, as the reference does.
fn baseline_row(k: &PointKey, found: &tokio_postgres::Row) -> Result<Row, CompareError> {
    let metrics_text: String = found
        .try_get(0)
        .map_err(|e| CompareError::Db(format!("reading metrics: {e}")))?;
    let db_model: String = found
        .try_get(1)
        .map_err(|e| CompareError::Db(format!("reading model: {e}")))?;
    let date: String = found
        .try_get(2)
        .map_err(|e| CompareError::Db(format!("reading date: {e}")))?;
    let origin = Origin {
        path: format!("database ({db_model}, {date})"),
        index: None,
    };
    let metrics: Map<String, Value> = match serde_json::from_str(&metrics_text) {
        Ok(Value::Object(m)) => m,
        _ => {
            return Err(CompareError::Row {
                origin: origin.to_string(),
                key: "metrics".into(),
                cause: "not a JSON object".into(),
            });
        }
    };
    eprintln!(
        "compare-results:   -> matched model={db_model} date={date} tput_per_gpu={}",
        metrics.get("tput_per_gpu").unwrap_or(&Value::Null)
    );
    let row = Row {
        key: k.clone(),
        metrics,
        origin,
    };
    crate::load::check_row(&row, crate::load::RowFormat::Db)?;
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("postgres://app:s3cret@db.example:5432/ix"),
            "postgres://app:***@db.example:5432/ix"
        );
        assert_eq!(redact("host=/tmp user=x"), "<connection string>");
    }
}
