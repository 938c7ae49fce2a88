//! The smallest benchmark repository the changelog tools accept: one
//! single-node config (`alpha-fp8-h200-vllm`, one sequence length, two
//! concurrencies) in `configs/nvidia-master.yaml`, an empty AMD master, a
//! runner file with its one label, and changelog entries naming it.

use std::path::Path;

use crate::write_file;

/// The one config's key.
pub const KEY: &str = "alpha-fp8-h200-vllm";

/// `configs/nvidia-master.yaml`: the config [`KEY`].
pub const MASTER: &str = "\
alpha-fp8-h200-vllm:
  image: example/vllm:v1
  model: example-org/Alpha
  model-prefix: alpha
  precision: fp8
  framework: vllm
  runner: h200
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-list: [4, 16] }
";

/// `configs/runners.yaml`: the label `h200` with one machine.
pub const RUNNERS: &str = "labels:\n  h200:\n    - h200-a_00\n";

/// A `perf-changelog.yaml` entry that changes `key`, from PR `pr`.
pub fn entry(key: &str, pr: u32) -> String {
    format!(
        "- config-keys:\n    - {key}\n  description:\n    - change {key}\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{pr}\n"
    )
}

/// Writes the three config files under `dir`.
pub fn write_configs(dir: &Path) {
    write_file(dir, "configs/nvidia-master.yaml", MASTER);
    write_file(dir, "configs/amd-master.yaml", "{}\n");
    write_file(dir, "configs/runners.yaml", RUNNERS);
}

/// The changelog of the base commit (the entry of PR 1), and the one of a
/// head that appends PR 2's entry to it.
pub fn base_and_appended_changelog() -> (String, String) {
    let base = entry(KEY, 1);
    let head = format!("{base}\n{}", entry(KEY, 2));
    (base, head)
}
