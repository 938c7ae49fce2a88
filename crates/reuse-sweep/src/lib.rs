//! Library behind the `reuse-sweep` binary: the `/reuse-sweep-run` protocol.
//!
//! * [`find`]: decide whether a push-to-main run reuses an approved PR
//!   sweep (or a PR `synchronize` run skips its own sweep), fail closed.
//! * [`validate`]: offline checks of a downloaded artifact directory before
//!   reused results are ingested.
//! * [`stage`]: the `/stage-results` command and the frontend's callback.

pub mod find;
pub mod stage;
pub mod validate;
