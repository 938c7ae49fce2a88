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
pub mod series;
pub mod store;
