//! The history store over PostgreSQL, for teams whose results already live
//! in a database: the same [`History`] as the folder store, the same rules.
//!
//! The tool creates its two tables when they are missing:
//!
//! ```sql
//! sweepkit_history_runs (run_id, attempt) primary key, commit, date, pr, repo, event,
//!                       benchmarks, evals, digest, appended (serial: append order)
//! sweepkit_history_rows (run_id, attempt, seq) primary key → runs, kind, file, row (the JSON text)
//!                       index (file, run_id, attempt, seq): a file's rows, a run at a time
//! ```
//!
//! A run's rows and its index row are inserted in one transaction, keyed by
//! run id and attempt, so a re-ingest of the same run is a no-op, two
//! appends of the same run at once leave one (the second waits on the
//! first's key and then finds it), and an append that fails leaves nothing.
//! A row keeps its JSON text as the aggregate wrote it (`jsonb` would
//! reorder its keys). TLS follows the URL's `sslmode`, as for
//! `compare-results --database-url`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::read::Collector;
use crate::record::{RowCounts, RunKey};
use crate::series::{Scope, Series};

use crate::store::{
    Appended, FORMAT, History, IndexLine, Kind, Line, Run, RunRef, StoreError, Verified,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sweepkit_history_runs (
    run_id     BIGINT  NOT NULL,
    attempt    INTEGER NOT NULL,
    commit     TEXT    NOT NULL,
    date       TEXT    NOT NULL,
    pr         BIGINT,
    repo       TEXT    NOT NULL,
    event      TEXT    NOT NULL,
    benchmarks INTEGER NOT NULL,
    evals      INTEGER NOT NULL,
    digest     TEXT    NOT NULL,
    appended   BIGSERIAL,
    PRIMARY KEY (run_id, attempt)
);
CREATE TABLE IF NOT EXISTS sweepkit_history_rows (
    run_id  BIGINT  NOT NULL,
    attempt INTEGER NOT NULL,
    seq     INTEGER NOT NULL,
    kind    TEXT    NOT NULL,
    file    TEXT    NOT NULL,
    row     TEXT    NOT NULL,
    PRIMARY KEY (run_id, attempt, seq),
    FOREIGN KEY (run_id, attempt) REFERENCES sweepkit_history_runs (run_id, attempt)
);
CREATE INDEX IF NOT EXISTS sweepkit_history_rows_file_run
    ON sweepkit_history_rows (file, run_id, attempt, seq);
";

/// The history in a PostgreSQL database.
pub struct PgStore {
    rt: tokio::runtime::Runtime,
    /// Behind a lock because a transaction needs the client mutably; the
    /// tool is sequential, so the lock is never contended.
    client: std::sync::Mutex<tokio_postgres::Client>,
    url: String,
}

fn db(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Database(format!("{what}: {e}"))
}

/// `postgres://user:pass@host/db` with the password replaced, for messages.
#[must_use]
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "<connection string>".into();
    };
    match rest.split_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{scheme}://{user}:***@{host}")
        }
        None => url.to_string(),
    }
}

/// The TLS connector of every PostgreSQL connection sweepkit makes (this
/// store's and compare-results' benchmarks database): rustls with the ring
/// provider and the Mozilla roots, chosen explicitly so that no
/// process-wide provider has to be installed.
///
/// # Errors
/// rustls refused the protocol versions (it does not with its defaults).
pub fn tls_connector() -> Result<tokio_postgres_rustls::MakeRustlsConnect, rustls::Error> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

impl PgStore {
    /// Connects to `url` and creates the tables when they are missing.
    ///
    /// # Errors
    /// The connection or the schema statement failed.
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| db("starting the async runtime", e))?;
        let client = rt.block_on(async {
            let (client, connection) =
                tokio_postgres::connect(url, tls_connector().map_err(|e| db("TLS set-up", e))?)
                    .await
                    .map_err(|e| db(&format!("connecting to {}", redact(url)), e))?;
            tokio::spawn(connection);
            client
                .batch_execute(SCHEMA)
                .await
                .map_err(|e| db("creating the history tables", e))?;
            Ok::<_, StoreError>(client)
        })?;
        Ok(PgStore {
            rt,
            client: std::sync::Mutex::new(client),
            url: redact(url),
        })
    }

    fn client(&self) -> Result<std::sync::MutexGuard<'_, tokio_postgres::Client>, StoreError> {
        self.client.lock().map_err(|_| {
            StoreError::Database("the database client was poisoned by an earlier panic".into())
        })
    }

    fn index_lines(&self, rows: &[tokio_postgres::Row]) -> Result<Vec<IndexLine>, StoreError> {
        rows.iter()
            .map(|r| {
                let count = |i: usize| -> Result<usize, StoreError> {
                    usize::try_from(r.try_get::<_, i32>(i).map_err(|e| db("reading a run", e))?)
                        .map_err(|e| db("reading a run", e))
                };
                Ok(IndexLine {
                    v: FORMAT,
                    run: run_ref(r)?,
                    repo: r.try_get(5).map_err(|e| db("reading a run", e))?,
                    event: r.try_get(6).map_err(|e| db("reading a run", e))?,
                    benchmarks: count(7)?,
                    evals: count(8)?,
                    digest: r.try_get(9).map_err(|e| db("reading a run", e))?,
                })
            })
            .collect()
    }
}

/// The run reference of a row whose first five columns are run_id,
/// attempt, commit, date, pr.
fn run_ref(r: &tokio_postgres::Row) -> Result<RunRef, StoreError> {
    let e = |e| db("reading a run", e);
    let run_id: i64 = r.try_get(0).map_err(e)?;
    let attempt: i32 = r.try_get(1).map_err(e)?;
    let pr: Option<i64> = r.try_get(4).map_err(e)?;
    Ok(RunRef {
        run_id: u64::try_from(run_id).map_err(|e| db("reading a run", e))?,
        attempt: u32::try_from(attempt).map_err(|e| db("reading a run", e))?,
        commit: r.try_get(2).map_err(e)?,
        date: r.try_get(3).map_err(e)?,
        pr: pr.and_then(|p| u64::try_from(p).ok()),
    })
}

/// Runs whose rows one query of [`PgStore::series`] reads: a comparison
/// usually needs the newest few dozen, so one or two queries a file.
const RUNS_PER_QUERY: usize = 64;

/// A batch's rows, by (run id, attempt): each `(seq, row text)`.
type RowsByRun = BTreeMap<RunKey, Vec<(i32, String)>>;

/// A batch's rows by run, each run's newest (highest `seq`) first, as the
/// query orders them.
fn batch_rows(rows: &[tokio_postgres::Row]) -> Result<RowsByRun, StoreError> {
    let e = |e| db("reading a row", e);
    let mut by_run = RowsByRun::new();
    for r in rows {
        let run_id: i64 = r.try_get(0).map_err(e)?;
        let attempt: i32 = r.try_get(1).map_err(e)?;
        let key = (
            u64::try_from(run_id).map_err(|e| db("reading a row", e))?,
            u32::try_from(attempt).map_err(|e| db("reading a row", e))?,
        );
        by_run
            .entry(key)
            .or_default()
            .push((r.try_get(2).map_err(e)?, r.try_get(3).map_err(e)?));
    }
    Ok(by_run)
}

const RUN_COLUMNS: &str =
    "run_id, attempt, commit, date, pr, repo, event, benchmarks, evals, digest";

impl History for PgStore {
    fn describe(&self) -> String {
        self.url.clone()
    }

    fn runs(&self) -> Result<Vec<IndexLine>, StoreError> {
        let rows = self
            .rt
            .block_on(self.client()?.query(
                &format!("SELECT {RUN_COLUMNS} FROM sweepkit_history_runs ORDER BY appended"),
                &[],
            ))
            .map_err(|e| db("listing the runs", e))?;
        self.index_lines(&rows)
    }

    fn append(&self, run: &Run) -> Result<Appended, StoreError> {
        let planned = crate::store::plan(run)?;
        let to_i64 = |v: u64| i64::try_from(v).map_err(|e| db("a run id", e));
        let run_id = to_i64(run.run.run_id)?;
        let attempt = i32::try_from(run.run.attempt).map_err(|e| db("an attempt", e))?;
        let pr = run.run.pr.map(to_i64).transpose()?;
        let count = |n: usize| i32::try_from(n).map_err(|e| db("a row count", e));
        let (nb, ne) = (count(run.benchmarks.len())?, count(run.evals.len())?);
        let mut guard = self.client()?;
        self.rt.block_on(async {
            let tx_err = |e| db("appending the run", e);
            let client = guard.transaction().await.map_err(tx_err)?;
            let inserted = client
                .execute(
                    "INSERT INTO sweepkit_history_runs
                       (run_id, attempt, commit, date, pr, repo, event, benchmarks, evals, digest)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                     ON CONFLICT (run_id, attempt) DO NOTHING",
                    &[
                        &run_id,
                        &attempt,
                        &run.run.commit,
                        &run.run.date,
                        &pr,
                        &run.repo,
                        &run.event,
                        &nb,
                        &ne,
                        &planned.digest,
                    ],
                )
                .await
                .map_err(tx_err)?;
            if inserted == 0 {
                let have: String = client
                    .query_one(
                        "SELECT digest FROM sweepkit_history_runs WHERE run_id = $1 AND attempt = $2",
                        &[&run_id, &attempt],
                    )
                    .await
                    .map_err(tx_err)?
                    .try_get(0)
                    .map_err(tx_err)?;
                client.rollback().await.map_err(tx_err)?;
                return if have == planned.digest {
                    Ok(Appended::AlreadyThere)
                } else {
                    Err(StoreError::Conflict {
                        run_id: run.run.run_id,
                        attempt: run.run.attempt,
                        have,
                        new: planned.digest.clone(),
                    })
                };
            }
            let stmt = client
                .prepare(
                    "INSERT INTO sweepkit_history_rows (run_id, attempt, seq, kind, file, row)
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .await
                .map_err(tx_err)?;
            for (seq, (file, kind, text)) in planned.rows.iter().enumerate() {
                let seq = i32::try_from(seq).map_err(|e| db("a row number", e))?;
                let kind = match kind {
                    Kind::Benchmark => "benchmark",
                    Kind::Eval => "eval",
                };
                client
                    .execute(&stmt, &[&run_id, &attempt, &seq, &kind, file, text])
                    .await
                    .map_err(tx_err)?;
            }
            client.commit().await.map_err(tx_err)?;
            let mut files: Vec<String> = planned.rows.iter().map(|(f, _, _)| f.clone()).collect();
            files.sort();
            files.dedup();
            Ok(Appended::Added { files })
        })
    }

    fn files(&self) -> Result<Vec<String>, StoreError> {
        let rows = self
            .rt
            .block_on(self.client()?.query(
                "SELECT DISTINCT file FROM sweepkit_history_rows ORDER BY file",
                &[],
            ))
            .map_err(|e| db("listing the files", e))?;
        rows.iter()
            .map(|r| r.try_get(0).map_err(|e| db("listing the files", e)))
            .collect()
    }

    fn lines(&self, file: &str) -> Result<Vec<Line>, StoreError> {
        let rows = self
            .rt
            .block_on(self.client()?.query(
                "SELECT r.run_id, r.attempt, r.commit, r.date, r.pr, w.kind, w.row, w.seq
                 FROM sweepkit_history_rows w
                 JOIN sweepkit_history_runs r USING (run_id, attempt)
                 WHERE w.file = $1
                 ORDER BY r.appended, w.seq",
                &[&file],
            ))
            .map_err(|e| db("reading the rows", e))?;
        rows.iter()
            .map(|r| {
                let run = run_ref(r)?;
                let kind: String = r.try_get(5).map_err(|e| db("reading a row", e))?;
                let text: String = r.try_get(6).map_err(|e| db("reading a row", e))?;
                let seq: i32 = r.try_get(7).map_err(|e| db("reading a row", e))?;
                let at = |cause: String| {
                    StoreError::Invalid(format!(
                        "sweepkit_history_rows run {} attempt {} seq {seq}: {cause}",
                        run.run_id, run.attempt
                    ))
                };
                let kind = match kind.as_str() {
                    "benchmark" => Kind::Benchmark,
                    "eval" => Kind::Eval,
                    other => {
                        return Err(at(format!("kind {other:?} is neither benchmark nor eval")));
                    }
                };
                let row = match serde_json::from_str(&text) {
                    Ok(serde_json::Value::Object(m)) => m,
                    Ok(_) => return Err(at("the row is not a JSON object".into())),
                    Err(e) => return Err(at(e.to_string())),
                };
                Ok(Line {
                    v: FORMAT,
                    run,
                    kind,
                    row,
                })
            })
            .collect()
    }

    /// Reads the file's benchmark rows newest first, a batch of runs at a
    /// time, and stops once no older row can be among what `scope` keeps
    /// (as the folder store reads its files from the end). The runs are
    /// ordered once (a small table); each batch's rows come by the index on
    /// (file, run_id, attempt, seq), so the server never sorts a whole
    /// configuration's rows.
    fn series(
        &self,
        file: &str,
        metrics: &[&'static str],
        scope: Scope<'_>,
    ) -> Result<Series, StoreError> {
        let mut kept = Collector::new(metrics, scope);
        let mut guard = self.client()?;
        self.rt.block_on(async {
            let err = |e| db("reading the rows", e);
            // One snapshot for the runs and their rows.
            let tx = guard
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await
                .map_err(err)?;
            // Byte order of the dates, as the folder store sorts them.
            let runs = tx
                .query(
                    "SELECT run_id, attempt, commit, date, pr FROM sweepkit_history_runs
                     ORDER BY date COLLATE \"C\" DESC, run_id DESC, attempt DESC",
                    &[],
                )
                .await
                .map_err(err)?
                .iter()
                .map(run_ref)
                .collect::<Result<Vec<_>, _>>()?;
            let stmt = tx
                .prepare(
                    "SELECT run_id, attempt, seq, row FROM sweepkit_history_rows
                     WHERE file = $1 AND kind = 'benchmark' AND run_id = ANY($2)
                     ORDER BY run_id, attempt, seq DESC",
                )
                .await
                .map_err(err)?;
            // Ranks count down from the newest run with rows in the file.
            let mut rank = usize::MAX;
            let mut first = true;
            'read: for batch in runs.chunks(RUNS_PER_QUERY) {
                let ids: Vec<i64> = batch
                    .iter()
                    .filter_map(|r| i64::try_from(r.run_id).ok())
                    .collect();
                let mut rows = batch_rows(&tx.query(&stmt, &[&file, &ids]).await.map_err(err)?)?;
                for run in batch {
                    let Some(lines) = rows.remove(&run.key()) else {
                        continue;
                    };
                    if !first {
                        rank -= 1;
                        if kept.done(Some(rank)) {
                            break 'read;
                        }
                    }
                    first = false;
                    let run = Arc::new(run.clone());
                    for (seq, text) in lines {
                        let at = |cause: String| {
                            StoreError::Invalid(format!(
                                "sweepkit_history_rows run {} attempt {} seq {seq}: {cause}",
                                run.run_id, run.attempt
                            ))
                        };
                        let row = kept.parse_row(&text).map_err(at)?;
                        let whole = || match serde_json::from_str(&text) {
                            Ok(serde_json::Value::Object(m)) => Ok(m),
                            Ok(_) => Err("the row is not a JSON object".to_string()),
                            Err(e) => Err(e.to_string()),
                        };
                        kept.keep(row, &run, rank, whole).map_err(at)?;
                    }
                }
            }
            tx.commit().await.map_err(err)
        })?;
        Ok(kept.finish())
    }

    fn verify(&self) -> Result<Verified, StoreError> {
        let runs = self.runs()?;
        let mut counts = RowCounts::default();
        let mut lines = 0;
        let files = self.files()?;
        for file in &files {
            for line in self.lines(file)? {
                let placed = crate::store::file_of(line.kind, &line.row).map_err(|cause| {
                    StoreError::Invalid(format!(
                        "a row of run {} attempt {} in {file}: {cause}",
                        line.run.run_id, line.run.attempt
                    ))
                })?;
                if placed != *file {
                    return Err(StoreError::Invalid(format!(
                        "a row of run {} attempt {} is filed under {file}; it belongs in {placed}",
                        line.run.run_id, line.run.attempt
                    )));
                }
                counts.add(&line);
                lines += 1;
            }
        }
        for r in &runs {
            if let Some(have) = counts.differs(r) {
                return Err(StoreError::Invalid(format!(
                    "sweepkit_history_runs run {} attempt {} lists {} benchmark and {} eval rows; the table holds {} and {}",
                    r.run.run_id, r.run.attempt, r.benchmarks, r.evals, have.0, have.1
                )));
            }
        }
        Ok(Verified {
            runs: runs.len(),
            files: files.len(),
            lines,
        })
    }
}
