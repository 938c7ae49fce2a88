//! Main's memory: what every completed main sweep measured, kept as a
//! series per benchmark point and metric, and what the series say — the
//! change points on main ([`change_point`]).

pub mod change_point;
