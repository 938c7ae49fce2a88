//! The result files of a multi-node leg. Its launcher writes one
//! `<RESULT_FILENAME>_…_gpus_<n>[_ctx_<p>_gen_<d>].json` per point, and
//! `process` runs once per file with that file's stem and its workers' GPUs,
//! which only the file's name carries: the rules of the reference's
//! multi-node template (its `sed` lines), kept here so the leg workflow
//! parses no file name.
use std::path::{Path, PathBuf};

/// Result files one leg may hold: a leg writes one per concurrency of its
/// `CONC_LIST`, a few dozen at most; past this the directory is not a
/// leg's and nothing is processed.
pub const MAX_LEG_RESULT_FILES: usize = 1024;

/// Bytes of the launcher's `power-producer-sha.txt`: one commit hash and a
/// line break; anything longer is not a stamp.
pub const MAX_STAMP_BYTES: u64 = 4096;

/// The launcher's stamp of the power producer's commit.
pub const STAMP_FILE: &str = "power-producer-sha.txt";

/// One result file of a leg and what its name says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegResult {
    /// The file name, `<stem>.json`.
    pub name: String,
    /// The name without `.json`: this point's `RESULT_FILENAME`.
    pub stem: String,
    /// `PREFILL_GPUS`: the `_ctx_` digits, or all the GPUs when the name
    /// has no `_ctx_`/`_gen_` pair (an aggregated, not disaggregated, run).
    pub prefill_gpus: String,
    /// `DECODE_GPUS`: the `_gen_` digits, or `0` as above.
    pub decode_gpus: String,
}

/// What reading the leg's directory found.
#[derive(Debug, Default)]
pub struct LegResults {
    /// The files to process, in byte order of their names.
    pub results: Vec<LegResult>,
    /// Files matching `<RESULT_FILENAME>_*.json` whose name gives no GPU
    /// count (no `_gpus_<n>`): the reference passes over them too.
    pub skipped: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LegResultsError {
    #[error("cannot list {}: {source}", dir.display())]
    List {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{found} files match {pattern} in {}: more than the {MAX_LEG_RESULT_FILES} a leg writes",
        dir.display()
    )]
    TooMany {
        dir: PathBuf,
        pattern: String,
        found: usize,
    },
    #[error("no result file of the leg names its GPUs: none of {pattern} in {} has `_gpus_<n>` in its name", dir.display())]
    Nothing { dir: PathBuf, pattern: String },
    #[error("cannot read the launcher's stamp {STAMP_FILE}: {source}")]
    Stamp { source: std::io::Error },
}

impl sweep_cli::Classify for LegResultsError {
    fn kind(&self) -> sweep_cli::Kind {
        match self {
            // The leg ran and left nothing this step can judge.
            LegResultsError::Nothing { .. } => sweep_cli::Kind::Rejected,
            _ => sweep_cli::Kind::Failed,
        }
    }
}

/// The digits after the last `marker` in `name` that has at least
/// `min_digits` of them (`sed 's/.*<marker>\([0-9]*\).*\.json/\1/p'`: the
/// greedy `.*` tries the last occurrence first and falls back to earlier
/// ones only when the digits are too few).
fn digits_after<'a>(name: &'a str, marker: &str, min_digits: usize) -> Option<&'a str> {
    let bytes = name.as_bytes();
    let m = marker.as_bytes();
    (0..=bytes.len().saturating_sub(m.len()))
        .rev()
        .filter(|&i| bytes[i..].starts_with(m))
        .find_map(|i| {
            let start = i + m.len();
            let len = bytes[start..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            // ASCII digits end on a char boundary.
            (len >= min_digits).then(|| &name[start..start + len])
        })
}

/// What a result file's name says of its workers' GPUs, or `None` when it
/// has no `_gpus_<n>`.
pub fn parse_name(name: &str) -> Option<LegResult> {
    let stem = name.strip_suffix(".json")?;
    let gpus = digits_after(name, "_gpus_", 1)?;
    let prefill = digits_after(name, "_ctx_", 0).filter(|d| !d.is_empty());
    let decode = digits_after(name, "_gen_", 0).filter(|d| !d.is_empty());
    let (prefill_gpus, decode_gpus) = match (prefill, decode) {
        (Some(p), Some(d)) => (p.to_string(), d.to_string()),
        _ => (gpus.to_string(), "0".to_string()),
    };
    Some(LegResult {
        name: name.to_string(),
        stem: stem.to_string(),
        prefill_gpus,
        decode_gpus,
    })
}

/// The files `<result_filename>_*.json` in `dir` (folders passed over),
/// each with what its name says. Fails when none of them names its GPUs.
pub fn find(dir: &Path, result_filename: &str) -> Result<LegResults, LegResultsError> {
    let prefix = format!("{result_filename}_");
    let pattern = format!("{prefix}*.json");
    let list = |source| LegResultsError::List {
        dir: dir.to_path_buf(),
        source,
    };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(list)? {
        let entry = entry.map_err(list)?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let matches = name.len() >= prefix.len() + ".json".len()
            && name.starts_with(&prefix)
            && name.ends_with(".json");
        // A folder is passed over (as `[ -f "$f" ]`); anything else that is
        // not a regular file reaches the bounded reader, which names and
        // refuses it rather than skip it.
        if matches && !dir.join(&name).is_dir() {
            names.push(name);
        }
        if names.len() > MAX_LEG_RESULT_FILES {
            return Err(LegResultsError::TooMany {
                dir: dir.to_path_buf(),
                pattern,
                found: names.len(),
            });
        }
    }
    names.sort();
    let mut found = LegResults::default();
    for name in names {
        match parse_name(&name) {
            Some(r) => found.results.push(r),
            None => found.skipped.push(name),
        }
    }
    if found.results.is_empty() {
        return Err(LegResultsError::Nothing {
            dir: dir.to_path_buf(),
            pattern,
        });
    }
    Ok(found)
}

/// The power producer's commit from the launcher's stamp in `dir`, when
/// there is one (`$(cat power-producer-sha.txt)`: trailing line breaks
/// dropped).
pub fn read_stamp(dir: &Path) -> Result<Option<String>, LegResultsError> {
    let path = dir.join(STAMP_FILE);
    // Absent: no stamp. Present, it is read as a regular file or refused.
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let text = sweep_model::fsio::read_text(&path, MAX_STAMP_BYTES)
        .map_err(|source| LegResultsError::Stamp { source })?;
    Ok(Some(text.trim_end_matches('\n').to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpus(name: &str) -> Option<(String, String)> {
        parse_name(name).map(|r| (r.prefill_gpus, r.decode_gpus))
    }

    fn pair(p: &str, d: &str) -> Option<(String, String)> {
        Some((p.to_string(), d.to_string()))
    }

    #[test]
    fn a_disaggregated_name_gives_its_prefill_and_decode_gpus() {
        assert_eq!(
            gpus("x_1p1d_conc64_gpus_12_ctx_4_gen_8.json"),
            pair("4", "8")
        );
    }

    #[test]
    fn an_aggregated_name_gives_all_gpus_to_prefill() {
        assert_eq!(gpus("x_agg-tp8_conc32_gpus_16.json"), pair("16", "0"));
        // `_ctx_` without `_gen_` is no pair either.
        assert_eq!(gpus("x_gpus_16_ctx_4.json"), pair("16", "0"));
        // `_ctx_` without digits is empty, so no pair.
        assert_eq!(gpus("x_gpus_16_ctx__gen_8.json"), pair("16", "0"));
    }

    #[test]
    fn the_last_marker_with_digits_counts() {
        assert_eq!(gpus("x_gpus_8_gpus_12.json"), pair("12", "0"));
        // The last `_gpus_` has no digits: sed falls back to the one before.
        assert_eq!(gpus("x_gpus_8_gpus_.json"), pair("8", "0"));
        // The last `_ctx_` is empty: sed stops there (`[0-9]*`).
        assert_eq!(gpus("x_gpus_8_ctx_2_gen_6_ctx_.json"), pair("8", "0"));
    }

    #[test]
    fn a_name_without_a_gpu_count_is_none() {
        assert_eq!(gpus("x_conc64.json"), None);
        assert_eq!(gpus("x_gpus_.json"), None);
        assert_eq!(gpus("x_gpus_8.txt"), None);
    }

    #[test]
    fn find_lists_the_legs_files_in_order_and_names_the_skipped() {
        let dir = tempfile::tempdir().expect("temp dir");
        for f in [
            "leg_b_gpus_8.json",
            "leg_a_gpus_4_ctx_2_gen_2.json",
            "leg_conc4.json",
            "agg_leg_a_gpus_4.json",
            "leg.json",
            "other_gpus_8.json",
        ] {
            std::fs::write(dir.path().join(f), "{}").expect("write");
        }
        std::fs::create_dir(dir.path().join("leg_dir_gpus_8.json")).expect("mkdir");
        let found = find(dir.path(), "leg").expect("found");
        let stems: Vec<_> = found.results.iter().map(|r| r.stem.as_str()).collect();
        assert_eq!(stems, ["leg_a_gpus_4_ctx_2_gen_2", "leg_b_gpus_8"]);
        assert_eq!(found.skipped, ["leg_conc4.json"]);
    }

    #[test]
    fn find_with_no_file_naming_its_gpus_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("leg_conc4.json"), "{}").expect("write");
        let err = find(dir.path(), "leg").expect_err("refused");
        assert!(matches!(err, LegResultsError::Nothing { .. }), "{err}");
        assert!(err.to_string().contains("leg_*.json"), "{err}");
    }

    #[test]
    fn the_stamp_loses_its_trailing_line_breaks_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(read_stamp(dir.path()).expect("stamp"), None);
        std::fs::write(dir.path().join(STAMP_FILE), "abc123\n\n").expect("write");
        assert_eq!(
            read_stamp(dir.path()).expect("stamp").as_deref(),
            Some("abc123")
        );
    }
}
