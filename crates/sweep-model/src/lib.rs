//! Typed model of sweep configs, matrix rows, changelog entries and result rows.
