//! Main's memory: what every completed main sweep measured, kept in a
//! history store ([`store`]) as series per benchmark point and metric
//! ([`series`]), and what the series say: the boundary a new value must not
//! cross ([`boundary`]) and the change points on main ([`change_point`],
//! named by run, commit and PR in [`changes`]).

pub mod backfill;
pub mod baseline;
pub mod boundary;
pub mod change_point;
pub mod changes;
pub mod git;
pub mod pg;
mod read;
pub mod record;
pub mod series;
pub mod store;

/// Whether a store spec names a PostgreSQL database rather than a folder.
#[must_use]
pub fn is_database(spec: &str) -> bool {
    spec.starts_with("postgres://") || spec.starts_with("postgresql://")
}

/// Opens the history a reader names: a `postgres://` URL, or a folder that
/// must exist (a missing folder read as an empty history would hide that
/// nothing was read).
///
/// # Errors
/// The folder does not exist, or the database cannot be reached.
pub fn open_existing(spec: &str) -> Result<Box<dyn store::History>, store::StoreError> {
    if is_database(spec) {
        return Ok(Box::new(pg::PgStore::connect(spec)?));
    }
    let root = std::path::Path::new(spec);
    if !root.is_dir() {
        return Err(store::StoreError::Invalid(format!(
            "{spec}: no history store there (a folder: the checkout of the data branch, or a postgres:// URL)"
        )));
    }
    Ok(Box::new(store::Store::new(root)))
}
