//! Expansion of validated master configs into matrix rows (spec matrix.md
//! §7–§9) for `full-sweep` and `test-config`.
//!
//! Library use (e.g. the changelog processor, which calls the generator
//! several times per run): load once, generate many times —
//!
//! ```no_run
//! # use sweep_matrix::generate::*;
//! # use sweep_matrix::row::{EvalMode, GenError};
//! # use std::path::{Path, PathBuf};
//! let loaded = LoadedConfigs::load(
//!     &[PathBuf::from("configs/amd-master.yaml"), PathBuf::from("configs/nvidia-master.yaml")],
//!     Path::new("configs/runners.yaml"),
//! )?;
//! let rows = generate_test_config(&loaded, &TestConfigOptions {
//!     config_keys: vec!["dsr1-fp8-mi300x-sglang".into()],
//!     common: CommonOptions { evals: EvalMode::NoEvals, ..CommonOptions::default() },
//!     conc: None,
//! })?;
//! # Ok::<(), GenError>(())
//! ```
//!
//! Both generators return the final rows: built, validated (§8.5), with
//! eval selection (§10) applied according to [`CommonOptions::evals`].

use std::path::{Path, PathBuf};

use serde_json::Value;
use sweep_model::config::{
    AgenticBlock, AgenticSearch, ConfigEntry, ConfigError, FixedBlock, FixedSearch, MasterConfigs,
    MultiNodeFixedSearch, SingleNodeFixedSearch, WorkerPool,
};
use sweep_model::rows::{
    MultiNodeAgenticRow, MultiNodeFixedRow, SingleNodeAgenticRow, SingleNodeFixedRow, Verbatim,
};
use sweep_model::runners::Runners;

use crate::evals::apply_evals;
use crate::keys::KeyMiss;
use crate::row::{EvalMode, GenError, Row};

/// Master configs plus runner file, loaded and validated once.
#[derive(Debug, Clone)]
pub struct LoadedConfigs {
    /// The merged, validated master configs.
    pub masters: MasterConfigs,
    /// The validated runner file.
    pub runners: Runners,
}

impl LoadedConfigs {
    /// Loads master configs (in order) then the runner file (spec §2.6).
    ///
    /// # Errors
    /// The first load or validation error.
    pub fn load(config_files: &[PathBuf], runner_file: &Path) -> Result<Self, ConfigError> {
        let masters = MasterConfigs::load(config_files)?;
        let runners = Runners::load(runner_file)?;
        Ok(LoadedConfigs { masters, runners })
    }
}

/// The two scenario kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScenarioType {
    /// `fixed-seq-len`.
    FixedSeqLen,
    /// `agentic-coding`.
    AgenticCoding,
}

/// Options shared by both subcommands.
#[derive(Debug, Clone, Default)]
pub struct CommonOptions {
    /// `--runner-node-filter`.
    pub runner_node_filter: Option<String>,
    /// `--scenario-type` (None = all).
    pub scenario_types: Option<Vec<ScenarioType>>,
    /// `--seq-lens` as (isl, osl) pairs (None = all).
    pub seq_lens: Option<Vec<(i64, i64)>>,
    /// Eval selection.
    pub evals: EvalMode,
}

/// `full-sweep` options (§2.3).
#[derive(Debug, Clone)]
pub struct FullSweepOptions {
    /// Shared options.
    pub common: CommonOptions,
    /// `--model-prefix`: config-key prefixes.
    pub model_prefix: Option<Vec<String>>,
    /// `--precision`.
    pub precision: Option<Vec<String>>,
    /// `--framework`.
    pub framework: Option<Vec<String>>,
    /// `--runner-type`.
    pub runner_type: Option<Vec<String>>,
    /// `--step-size` (> 1).
    pub step_size: i64,
    /// `--min-conc`.
    pub min_conc: Option<i64>,
    /// `--max-conc`.
    pub max_conc: Option<i64>,
    /// `--max-tp`.
    pub max_tp: Option<i64>,
    /// `--max-ep`.
    pub max_ep: Option<i64>,
    /// Generate single-node rows.
    pub single_node: bool,
    /// Generate multi-node rows.
    pub multi_node: bool,
}

impl Default for FullSweepOptions {
    fn default() -> Self {
        FullSweepOptions {
            common: CommonOptions::default(),
            model_prefix: None,
            precision: None,
            framework: None,
            runner_type: None,
            step_size: 2,
            min_conc: None,
            max_conc: None,
            max_tp: None,
            max_ep: None,
            single_node: true,
            multi_node: true,
        }
    }
}

/// `test-config` options (§2.4).
#[derive(Debug, Clone, Default)]
pub struct TestConfigOptions {
    /// Shared options.
    pub common: CommonOptions,
    /// `--config-keys`: exact keys or glob patterns (with `*` or `?`).
    pub config_keys: Vec<String>,
    /// `--conc`.
    pub conc: Option<Vec<i64>>,
}

/// How concurrency values are chosen and filtered.
enum ConcMode<'a> {
    Full(&'a FullSweepOptions),
    Test(Option<&'a [i64]>),
}

fn gen_err(msg: impl Into<String>) -> GenError {
    GenError::Generate(msg.into())
}

/// `full-sweep` (§7.2) followed by eval selection (§10).
///
/// # Errors
/// `--runner-type` value that is not a label, DRAM-budget failures, shape
/// mismatches, or a generated row that fails validation.
pub fn generate_full_sweep(
    loaded: &LoadedConfigs,
    opts: &FullSweepOptions,
) -> Result<Vec<Row>, GenError> {
    if let Some(types) = &opts.runner_type {
        let bad: Vec<&str> = types
            .iter()
            .filter(|t| !loaded.runners.labels.contains_key(t.as_str()))
            .map(String::as_str)
            .collect();
        if !bad.is_empty() {
            let valid: Vec<&str> = loaded.runners.labels.keys().map(String::as_str).collect();
            return Err(gen_err(format!(
                "invalid --runner-type value(s): {} (labels in {}: {})",
                bad.join(", "),
                loaded.runners.file.display(),
                valid.join(", ")
            )));
        }
    }
    let mut work = Vec::new();
    for entry in &loaded.masters.entries {
        if let Some(p) = &opts.model_prefix
            && !p.iter().any(|p| entry.key.starts_with(p.as_str()))
        {
            continue;
        }
        if !matches_opt(&opts.precision, &entry.precision)
            || !matches_opt(&opts.framework, &entry.framework)
            || !matches_opt(&opts.runner_type, &entry.runner)
        {
            continue;
        }
        let runner_values: Vec<String> = match &opts.common.runner_node_filter {
            None => vec![entry.runner.clone()],
            Some(f) => loaded
                .runners
                .nodes(&entry.runner)
                .iter()
                .filter(|n| n.contains(f.as_str()))
                .cloned()
                .collect(),
        };
        if runner_values.is_empty() {
            continue;
        }
        if (entry.multinode && !opts.multi_node) || (!entry.multinode && !opts.single_node) {
            continue;
        }
        work.push((entry, runner_values));
    }
    let rows = gen_all(loaded, work, &opts.common, &ConcMode::Full(opts))?;
    apply_evals(rows, opts.common.evals)
}

/// `test-config` (§7.3) followed by eval selection (§10).
///
/// # Errors
/// An unknown key or a pattern matching nothing, plus the generation errors
/// of [`generate_full_sweep`].
pub fn generate_test_config(
    loaded: &LoadedConfigs,
    opts: &TestConfigOptions,
) -> Result<Vec<Row>, GenError> {
    let keys = resolve_keys(&loaded.masters, &opts.config_keys)?;
    let mut work = Vec::new();
    for key in keys {
        let Some(entry) = loaded.masters.get(key) else {
            continue;
        };
        let runner_values: Vec<String> = match &opts.common.runner_node_filter {
            None => vec![entry.runner.clone()],
            Some(f) => {
                let mut out: Vec<String> = Vec::new();
                let cands =
                    std::iter::once(&entry.runner).chain(loaded.runners.nodes(&entry.runner));
                for c in cands {
                    if c.contains(f.as_str()) && !out.contains(c) {
                        out.push(c.clone());
                    }
                }
                out
            }
        };
        if runner_values.is_empty() {
            continue;
        }
        work.push((entry, runner_values));
    }
    let rows = gen_all(
        loaded,
        work,
        &opts.common,
        &ConcMode::Test(opts.conc.as_deref()),
    )?;
    apply_evals(rows, opts.common.evals)
}

/// Resolves `--config-keys` (§7.3.1) by the one key rule of
/// [`crate::keys::resolve`], with this command's messages.
///
/// # Errors
/// A pattern that matches nothing or a key that does not exist.
pub fn resolve_keys<'a>(
    masters: &'a MasterConfigs,
    wanted: &[String],
) -> Result<Vec<&'a str>, GenError> {
    let available: Vec<&str> = masters.keys().collect();
    crate::keys::resolve(&available, wanted).map_err(|miss| match miss {
        KeyMiss::NoMatch { pattern, .. } => {
            gen_err(format!("No config keys matched the pattern '{pattern}'"))
        }
        KeyMiss::Missing { key, .. } => gen_err(format!(
            "Config key '{key}' does not exist in the master configs"
        )),
    })
}

fn matches_opt(filter: &Option<Vec<String>>, value: &str) -> bool {
    filter.as_ref().is_none_or(|f| f.iter().any(|x| x == value))
}

/// Sequence-length name (§7.1).
#[must_use]
pub fn seq_name(isl: i64, osl: i64) -> String {
    match (isl, osl) {
        (1024, 1024) => "1k1k".into(),
        (8192, 1024) => "8k1k".into(),
        _ => format!("{isl}_{osl}"),
    }
}

fn want_scenario(common: &CommonOptions, t: ScenarioType) -> bool {
    common
        .scenario_types
        .as_ref()
        .is_none_or(|s| s.contains(&t))
}

/// Component metadata of a row (§7.1): the search-space key wins when
/// present; the config validated it as a mapping.
fn scoped(search: Option<&Value>, top: Option<&Value>) -> Option<Verbatim> {
    match search {
        Some(v) => v.as_object().cloned(),
        None => top.and_then(Value::as_object).cloned(),
    }
}

/// `kv-p2p-transfer` of a row (§7.1): the search-space key wins when
/// present; the config validated it as a non-empty string.
fn scoped_str(search: Option<&Value>, top: Option<&Value>) -> Option<String> {
    match search {
        Some(v) => v.as_str().map(str::to_string),
        None => top.and_then(Value::as_str).map(str::to_string),
    }
}

/// The six fields every row starts with.
struct Base {
    image: String,
    model: String,
    model_prefix: String,
    precision: String,
    framework: String,
    runner: String,
}

fn base_row(entry: &ConfigEntry, runner: &str) -> Base {
    Base {
        image: entry.image.clone(),
        model: entry.model.clone(),
        model_prefix: entry.model_prefix.clone(),
        precision: entry.precision.clone(),
        framework: entry.framework.clone(),
        runner: runner.to_string(),
    }
}

/// Validates a row as it is built (§8.5) and appends it.
pub(crate) fn push_row(rows: &mut Vec<Row>, row: Row) -> Result<(), GenError> {
    if let Err(e) = row.validate() {
        return Err(gen_err(format!(
            "generated matrix row failed validation: {e}\nrow: {}",
            row.to_value()
        )));
    }
    rows.push(row);
    Ok(())
}

/// Generates the rows of every selected entry and concatenates them in
/// entry order; the first error stops the run.
fn gen_all(
    loaded: &LoadedConfigs,
    work: Vec<(&ConfigEntry, Vec<String>)>,
    common: &CommonOptions,
    mode: &ConcMode<'_>,
) -> Result<Vec<Row>, GenError> {
    let mut rows = Vec::new();
    for (entry, runners) in work {
        gen_entry(loaded, entry, &runners, common, mode, &mut rows)?;
    }
    Ok(rows)
}

/// One entry's rows: its fixed-seq-len blocks (unless `--scenario-type`
/// leaves them out), then its agentic ones, each search-space item in
/// config order.
fn gen_entry(
    loaded: &LoadedConfigs,
    entry: &ConfigEntry,
    runners: &[String],
    common: &CommonOptions,
    mode: &ConcMode<'_>,
    rows: &mut Vec<Row>,
) -> Result<(), GenError> {
    if want_scenario(common, ScenarioType::FixedSeqLen) {
        for block in &entry.fixed {
            if let Some(sl) = &common.seq_lens
                && !sl.contains(&(block.isl, block.osl))
            {
                continue;
            }
            for s in &block.search_space {
                let fixed = FixedRows {
                    entry,
                    block,
                    runners,
                    mode,
                };
                match s {
                    FixedSearch::Single(s) => fixed.single_node(s, rows)?,
                    FixedSearch::Multi(s) => fixed.multi_node(s, rows)?,
                }
            }
        }
    }
    if want_scenario(common, ScenarioType::AgenticCoding) {
        for block in &entry.agentic {
            for s in &block.search_space {
                gen_agentic(loaded, entry, block, s, runners, mode, rows)?;
            }
        }
    }
    Ok(())
}

/// The rows of one search-space item of a fixed-seq-len block.
struct FixedRows<'a> {
    entry: &'a ConfigEntry,
    block: &'a FixedBlock,
    runners: &'a [String],
    mode: &'a ConcMode<'a>,
}

impl FixedRows<'_> {
    fn exp_name(&self) -> String {
        let b = self.block;
        format!("{}_{}", self.entry.model_prefix, seq_name(b.isl, b.osl))
    }

    fn max_model_len(&self) -> i64 {
        self.block.isl + self.block.osl + 256
    }

    /// A single-node item: one row per concurrency and runner (`--max-tp`
    /// skips the item, `--max-ep` caps its `ep`).
    fn single_node(&self, s: &SingleNodeFixedSearch, rows: &mut Vec<Row>) -> Result<(), GenError> {
        let (entry, block) = (self.entry, self.block);
        let mut ep = s.ep;
        let concs = match self.mode {
            ConcMode::Full(o) => {
                if let Some(m) = o.max_tp
                    && (m <= 0 || s.tp > m)
                {
                    return Ok(());
                }
                if let Some(m) = o.max_ep {
                    if m <= 0 {
                        return Ok(());
                    }
                    if let Some(e) = ep
                        && e > m
                    {
                        ep = Some(m);
                    }
                }
                sn_full_concs(&s.conc, o)
            }
            ConcMode::Test(filter) => test_filter(s.conc.values_list_if_present(2), *filter),
        };
        let Some(concs) = concs else { return Ok(()) };
        for c in concs {
            for r in self.runners {
                let b = base_row(entry, r);
                let row = Row::SingleNodeFixed(SingleNodeFixedRow {
                    image: b.image,
                    model: b.model,
                    model_prefix: b.model_prefix,
                    precision: b.precision,
                    framework: b.framework,
                    runner: b.runner,
                    isl: block.isl,
                    osl: block.osl,
                    tp: s.tp,
                    pp: s.pp,
                    dcp_size: s.dcp_size,
                    pcp_size: s.pcp_size,
                    conc: c,
                    max_model_len: self.max_model_len(),
                    ep: ep.unwrap_or(1),
                    dp_attn: s.dp_attn.unwrap_or(false),
                    spec_decoding: s.spec_decoding.clone(),
                    exp_name: self.exp_name(),
                    disagg: entry.disagg,
                    run_eval: false,
                    router: scoped(s.router.as_ref(), entry.router.as_ref()),
                    eval_only: None,
                    recipe_fingerprint: None,
                });
                push_row(rows, row)?;
            }
        }
        Ok(())
    }

    /// A multi-node item: one row per runner, all its concurrencies in it.
    fn multi_node(&self, s: &MultiNodeFixedSearch, rows: &mut Vec<Row>) -> Result<(), GenError> {
        let (entry, block) = (self.entry, self.block);
        let concs = match self.mode {
            ConcMode::Full(o) => mn_full_concs(s.conc.values(o.step_size), o),
            ConcMode::Test(filter) => test_filter(s.conc.values_list_if_present(2), *filter),
        };
        let Some(concs) = concs else { return Ok(()) };
        for r in self.runners {
            let b = base_row(entry, r);
            let row = Row::MultiNodeFixed(MultiNodeFixedRow {
                image: b.image,
                model: b.model,
                model_prefix: b.model_prefix,
                precision: b.precision,
                framework: b.framework,
                runner: b.runner,
                isl: block.isl,
                osl: block.osl,
                spec_decoding: s.spec_decoding.clone(),
                prefill: s.prefill.row_value.clone(),
                decode: s.decode.row_value.clone(),
                conc: concs.clone(),
                max_model_len: self.max_model_len(),
                exp_name: self.exp_name(),
                disagg: entry.disagg,
                run_eval: false,
                router: scoped(s.router.as_ref(), entry.router.as_ref()),
                kv_p2p_transfer: scoped_str(
                    s.kv_p2p_transfer.as_ref(),
                    entry.kv_p2p_transfer.as_ref(),
                ),
                eval_conc: None,
                eval_all_concs: None,
                eval_only: None,
                recipe_fingerprint: None,
            });
            push_row(rows, row)?;
        }
        Ok(())
    }
}

/// SN fixed concurrency in `full-sweep` (§7.2.3 step 4); `None` = skip the entry.
fn sn_full_concs(conc: &sweep_model::config::Conc, o: &FullSweepOptions) -> Option<Vec<i64>> {
    match &conc.list {
        Some(list) if !list.is_empty() => {
            let mut v = list.clone();
            if let Some(min) = o.min_conc {
                if min <= 0 {
                    return None;
                }
                v.retain(|c| *c >= min);
                if v.is_empty() {
                    return None;
                }
            }
            if let Some(max) = o.max_conc {
                if max <= 0 {
                    return None;
                }
                v.retain(|c| *c <= max);
                if v.is_empty() {
                    v = vec![max];
                }
            }
            Some(v)
        }
        _ => {
            let (mut start, mut end) = (conc.start?, conc.end?);
            if let Some(min) = o.min_conc {
                if min <= 0 || end < min {
                    return None;
                }
                start = start.max(min);
            }
            if let Some(max) = o.max_conc {
                if max <= 0 {
                    return None;
                }
                if start > max {
                    start = max;
                    end = max;
                } else {
                    end = end.min(max);
                }
            }
            Some(sweep_model::config::expand_range(start, end, o.step_size))
        }
    }
}

/// MN fixed concurrency filter in `full-sweep` (§7.2.3 MN steps 3–4).
fn mn_full_concs(mut v: Vec<i64>, o: &FullSweepOptions) -> Option<Vec<i64>> {
    if let Some(min) = o.min_conc {
        if min <= 0 {
            return None;
        }
        v.retain(|c| *c >= min);
        if v.is_empty() {
            return None;
        }
    }
    if let Some(max) = o.max_conc {
        v.retain(|c| *c <= max);
        if v.is_empty() {
            if max > 0 {
                v = vec![max];
            } else {
                return None;
            }
        }
    }
    Some(v)
}

/// `--conc` intersection in config order; `None` = skip the entry.
fn test_filter(mut v: Vec<i64>, filter: Option<&[i64]>) -> Option<Vec<i64>> {
    if let Some(f) = filter {
        v.retain(|c| f.contains(c));
        if v.is_empty() {
            return None;
        }
    }
    Some(v)
}

fn worker_tag(prefix: char, w: &WorkerPool) -> String {
    let mut s = format!("{prefix}{}x{}", w.num_worker, w.tp);
    if w.ep != 1 {
        s.push_str(&format!("ep{}", w.ep));
    }
    if w.dp_attn {
        s.push_str("dpa");
    }
    s
}

/// One agentic search-space item's rows: its shape checked against the
/// entry's `multinode`, its concurrencies filtered by the mode, then one
/// row per concurrency and runner.
fn gen_agentic(
    loaded: &LoadedConfigs,
    entry: &ConfigEntry,
    block: &AgenticBlock,
    s: &AgenticSearch,
    runners: &[String],
    mode: &ConcMode<'_>,
    rows: &mut Vec<Row>,
) -> Result<(), GenError> {
    let shape_err = |what: &str| {
        gen_err(format!(
            "{}: an agentic search-space entry is {what}, which does not match multinode={}",
            entry.location(),
            entry.multinode
        ))
    };
    let kv_for_row = if entry.multinode {
        match &s.kv_offloading {
            None => Some("none".into()),
            Some(v) => v.clone(),
        }
    } else {
        // Validation guarantees it for single-node-shaped entries.
        s.kv_offloading.clone().flatten()
    };
    if entry.multinode && (s.prefill.is_none() || s.decode.is_none()) {
        return Err(shape_err("single-node shaped (no prefill/decode)"));
    }
    if !entry.multinode && s.tp.is_none() {
        return Err(shape_err("multi-node shaped (no tp)"));
    }
    let dram = dram_budget(loaded, entry, block, s)?;
    let concs = agentic_concs(s, mode);
    if concs.is_empty() {
        return Ok(());
    }
    let kv_name = kv_for_row.clone().unwrap_or_else(|| "none".into());
    let kv_suffix = if kv_name == "none" {
        "kvnone".to_string()
    } else {
        let backend = s
            .kv_offload_backend
            .as_ref()
            .and_then(|b| b.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        format!("kv{kv_name}-{backend}")
    };
    let item = AgenticRows {
        entry,
        s,
        runners,
        concs,
        dram,
        kv_name,
        kv_suffix,
    };
    if let (true, Some(p), Some(d)) = (entry.multinode, &s.prefill, &s.decode) {
        // An explicit `kv-offloading: null` reaches a multi-node row as is,
        // which no row accepts.
        let Some(kv_offloading) = kv_for_row else {
            return Err(gen_err(format!(
                "{}: generated matrix row failed validation: 'kv-offloading' must be 'none' or 'dram', got null",
                entry.location()
            )));
        };
        item.multi_node(p, d, &kv_offloading, rows)
    } else {
        item.single_node(rows)
    }
}

/// An agentic item's concurrencies: its list or range (step 2 in
/// `test-config`), within `--min-conc`/`--max-conc` or `--conc`.
fn agentic_concs(s: &AgenticSearch, mode: &ConcMode<'_>) -> Vec<i64> {
    let step = match mode {
        ConcMode::Full(o) => o.step_size,
        ConcMode::Test(_) => 2,
    };
    let mut concs = s.conc.values(step);
    match mode {
        ConcMode::Full(o) => {
            if let Some(min) = o.min_conc {
                concs.retain(|c| *c >= min);
            }
            if let Some(max) = o.max_conc {
                concs.retain(|c| *c <= max);
            }
        }
        ConcMode::Test(Some(f)) => concs.retain(|c| f.contains(c)),
        ConcMode::Test(None) => {}
    }
    concs
}

/// What the rows of one agentic item share.
struct AgenticRows<'a> {
    entry: &'a ConfigEntry,
    s: &'a AgenticSearch,
    runners: &'a [String],
    concs: Vec<i64>,
    dram: i64,
    /// The row's `kv-offloading` (`none` when unset).
    kv_name: String,
    /// `kvnone` or `kv<offloading>-<backend>`, for experiment names.
    kv_suffix: String,
}

impl AgenticRows<'_> {
    fn router(&self) -> Option<Verbatim> {
        scoped(self.s.router.as_ref(), self.entry.router.as_ref())
    }

    fn backend(&self) -> Option<Verbatim> {
        self.s
            .kv_offload_backend
            .as_ref()
            .and_then(Value::as_object)
            .cloned()
    }

    /// Runner-major: one row per runner and concurrency, named for the
    /// worker pools.
    fn multi_node(
        &self,
        p: &WorkerPool,
        d: &WorkerPool,
        kv_offloading: &str,
        rows: &mut Vec<Row>,
    ) -> Result<(), GenError> {
        let (entry, s) = (self.entry, self.s);
        for r in self.runners {
            for c in &self.concs {
                let mut exp = format!(
                    "{}_{}_{}_conc{c}",
                    entry.model_prefix,
                    worker_tag('p', p),
                    worker_tag('d', d)
                );
                if self.kv_name != "none" {
                    exp.push('_');
                    exp.push_str(&self.kv_suffix);
                }
                let b = base_row(entry, r);
                let row = Row::MultiNodeAgentic(MultiNodeAgenticRow {
                    image: b.image,
                    model: b.model,
                    model_prefix: b.model_prefix,
                    precision: b.precision,
                    framework: b.framework,
                    runner: b.runner,
                    spec_decoding: s.spec_decoding.clone(),
                    prefill: p.row_value.clone(),
                    decode: d.row_value.clone(),
                    conc: vec![*c],
                    kv_offloading: kv_offloading.to_string(),
                    total_cpu_dram_gb: self.dram,
                    duration: AGENTIC_DURATION_S,
                    exp_name: exp,
                    disagg: entry.disagg,
                    scenario_type: AGENTIC_CODING.into(),
                    kv_offload_backend: self.backend(),
                    router: self.router(),
                    kv_p2p_transfer: scoped_str(
                        s.kv_p2p_transfer.as_ref(),
                        entry.kv_p2p_transfer.as_ref(),
                    ),
                    run_eval: None,
                    eval_conc: None,
                    eval_only: None,
                    recipe_fingerprint: None,
                });
                push_row(rows, row)?;
            }
        }
        Ok(())
    }

    /// Concurrency-major: one row per concurrency and runner, named for
    /// the parallelism, concurrency, offloading and speculative decoding.
    fn single_node(&self, rows: &mut Vec<Row>) -> Result<(), GenError> {
        let (entry, s) = (self.entry, self.s);
        let tp = s.tp.unwrap_or_default();
        for c in &self.concs {
            let mut exp = format!("{}_tp{tp}_conc{c}_{}", entry.model_prefix, self.kv_suffix);
            if s.spec_decoding != "none" {
                exp.push_str(&format!("_spec-{}", s.spec_decoding));
            }
            for r in self.runners {
                let b = base_row(entry, r);
                let row = Row::SingleNodeAgentic(SingleNodeAgenticRow {
                    image: b.image,
                    model: b.model,
                    model_prefix: b.model_prefix,
                    precision: b.precision,
                    framework: b.framework,
                    runner: b.runner,
                    tp,
                    pp: s.pp,
                    dcp_size: s.dcp_size,
                    pcp_size: s.pcp_size,
                    ep: s.ep.unwrap_or(1),
                    dp_attn: s.dp_attn.unwrap_or(false),
                    spec_decoding: s.spec_decoding.clone(),
                    conc: *c,
                    kv_offloading: self.kv_name.clone(),
                    total_cpu_dram_gb: self.dram,
                    duration: AGENTIC_DURATION_S,
                    exp_name: exp.clone(),
                    scenario_type: AGENTIC_CODING.into(),
                    kv_offload_backend: self.backend(),
                    router: self.router(),
                    run_eval: None,
                    eval_only: None,
                    recipe_fingerprint: None,
                });
                push_row(rows, row)?;
            }
        }
        Ok(())
    }
}

/// `duration` of an agentic row, seconds (the reference's fixed value).
const AGENTIC_DURATION_S: i64 = 3600;

/// `scenario-type` of an agentic row.
const AGENTIC_CODING: &str = "agentic-coding";

/// Available DRAM cap in MiB (≈ 3 TB).
const DRAM_CAP_MIB: i64 = 2_861_022;

/// `total-cpu-dram-gb` (§7.4), exact integer arithmetic.
fn dram_budget(
    loaded: &LoadedConfigs,
    entry: &ConfigEntry,
    block: &AgenticBlock,
    s: &AgenticSearch,
) -> Result<i64, GenError> {
    if !matches!(&s.kv_offloading, Some(Some(k)) if k == "dram") {
        return Ok(0);
    }
    let label = &entry.runner;
    let Some(hw) = loaded.runners.hardware.get(label) else {
        let avail: Vec<&str> = loaded.runners.hardware.keys().map(String::as_str).collect();
        return Err(gen_err(format!(
            "{}: runner '{label}' has no hardware record with 'available-cpu-dram-mib' in {} (needed for kv-offloading: dram); hardware records: [{}]",
            entry.location(),
            loaded.runners.file.display(),
            avail.join(", ")
        )));
    };
    let avail = i128::from(hw.available_cpu_dram_mib.min(DRAM_CAP_MIB));
    let gpn = i128::from(hw.gpus_per_node);
    let util = block
        .dram_utilization
        .as_ref()
        .and_then(|v| crate::decimal::Decimal::parse(&v.to_string()))
        .ok_or_else(|| {
            gen_err(format!(
                "{}: kv-offloading: dram needs 'dram-utilization' in its agentic block",
                entry.location()
            ))
        })?;
    let g: i128 = if let Some(p) = &s.prefill {
        let r = i128::from(p.tp) * i128::from(p.pp) * i128::from(p.pcp_size);
        if r <= 0 {
            return Err(gen_err(format!(
                "{}: prefill GPU count {r} is not positive",
                entry.location()
            )));
        }
        if r > gpn {
            if r % gpn != 0 {
                return Err(gen_err(format!(
                    "{}: prefill GPU count {r} is not a multiple of gpus-per-node ({gpn}) of '{label}'",
                    entry.location()
                )));
            }
            gpn
        } else {
            if gpn % r != 0 {
                return Err(gen_err(format!(
                    "{}: gpus-per-node ({gpn}) of '{label}' is not a multiple of the prefill GPU count {r}",
                    entry.location()
                )));
            }
            r
        }
    } else {
        let g = i128::from(s.tp.unwrap_or(0)) * i128::from(s.pp) * i128::from(s.pcp_size);
        if g > gpn {
            return Err(gen_err(format!(
                "{}: GPU count {g} exceeds gpus-per-node ({gpn}) of runner '{label}'",
                entry.location()
            )));
        }
        g
    };
    let num = avail * 1_048_576 * util.mantissa * g;
    let den = gpn * 1_000_000_000 * 10i128.pow(util.scale);
    Ok(i64::try_from(num.div_euclid(den)).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn seq_names() {
        assert_eq!(seq_name(1024, 1024), "1k1k");
        assert_eq!(seq_name(8192, 1024), "8k1k");
        assert_eq!(seq_name(2048, 256), "2048_256");
    }

    fn fo() -> FullSweepOptions {
        FullSweepOptions::default()
    }

    #[test]
    fn sn_conc_min_max_rules() {
        let range = sweep_model::config::Conc {
            start: Some(4),
            end: Some(64),
            list: None,
        };
        let o = FullSweepOptions {
            min_conc: Some(10),
            ..fo()
        };
        assert_eq!(sn_full_concs(&range, &o), Some(vec![10, 20, 40, 64]));
        let o = FullSweepOptions {
            max_conc: Some(50),
            ..fo()
        };
        assert_eq!(sn_full_concs(&range, &o), Some(vec![4, 8, 16, 32, 50]));
        let o = FullSweepOptions {
            max_conc: Some(2),
            ..fo()
        };
        assert_eq!(sn_full_concs(&range, &o), Some(vec![2]));
        let o = FullSweepOptions {
            min_conc: Some(0),
            ..fo()
        };
        assert_eq!(sn_full_concs(&range, &o), None);
        let list = sweep_model::config::Conc {
            start: None,
            end: None,
            list: Some(vec![8, 1, 32]),
        };
        let o = FullSweepOptions {
            max_conc: Some(4),
            ..fo()
        };
        assert_eq!(sn_full_concs(&list, &o), Some(vec![1]));
        let o = FullSweepOptions {
            max_conc: Some(0),
            ..fo()
        };
        assert_eq!(sn_full_concs(&list, &o), None);
        let o = FullSweepOptions {
            min_conc: Some(100),
            ..fo()
        };
        assert_eq!(sn_full_concs(&list, &o), None);
    }

    #[test]
    fn mn_conc_rules() {
        let o = FullSweepOptions {
            max_conc: Some(3),
            ..fo()
        };
        assert_eq!(mn_full_concs(vec![8, 16], &o), Some(vec![3]));
        let o = FullSweepOptions {
            max_conc: Some(0),
            ..fo()
        };
        assert_eq!(mn_full_concs(vec![8, 16], &o), None);
        assert_eq!(test_filter(vec![4, 8, 4], Some(&[4])), Some(vec![4, 4]));
        assert_eq!(test_filter(vec![4, 8], Some(&[5])), None);
    }
}
