//! Offline validation of a reusable sweep's artifact directory (not yet ported).

use std::path::Path;

/// Validates `dir`; `Ok` carries the success line.
pub fn run(dir: &Path) -> Result<String, String> {
    Err(format!(
        "validate-artifacts: not implemented yet ({})",
        dir.display()
    ))
}
