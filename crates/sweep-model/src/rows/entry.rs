//! A row as the changelog matrix writes it: through the reference's output
//! model of its kind (`SingleNodeMatrixEntry`, `MultiNodeMatrixEntry`,
//! `SingleNodeAgenticMatrixEntry`, `MultiNodeAgenticMatrixEntry`, dumped by
//! alias without nulls): the model's field order, its defaults filled in
//! (`eval-only`, `eval-all-concs`, a worker's `additional-settings`), nulls
//! inside `router` / `kv-offload-backend` left out.
//!
//! The generator prints the same row in its own order ([`MatrixRow`]'s serde
//! order). Each struct here borrows every field of the typed row, so the
//! compiler checks the two orders against each other: a field added to a
//! row type that no model writes does not compile.

use serde::ser::Error as _;
use serde::{Serialize, Serializer};

use super::{
    MatrixRow, MultiNodeAgenticRow, MultiNodeFixedRow, SingleNodeAgenticRow, SingleNodeFixedRow,
    Verbatim, WorkerPoolRow, view,
};

/// A row written through its output model (see the module header).
#[derive(Debug, Clone, Copy)]
pub struct AsMatrixEntry<'a>(pub &'a MatrixRow);

impl Serialize for AsMatrixEntry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            MatrixRow::SingleNodeFixed(r) => single_node_fixed(r).serialize(s),
            MatrixRow::MultiNodeFixed(r) => {
                multi_node_fixed(r).map_err(S::Error::custom)?.serialize(s)
            }
            MatrixRow::SingleNodeAgentic(r) => single_node_agentic(r).serialize(s),
            MatrixRow::MultiNodeAgentic(r) => multi_node_agentic(r)
                .map_err(S::Error::custom)?
                .serialize(s),
        }
    }
}

/// A `router` / `kv-offload-backend` block as written, its null members
/// left out.
#[derive(Debug, Clone, Copy)]
struct WithoutNulls<'a>(&'a Verbatim);

impl Serialize for WithoutNulls<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().filter(|(_, v)| !v.is_null()))
    }
}

fn without_nulls(v: Option<&Verbatim>) -> Option<WithoutNulls<'_>> {
    v.map(WithoutNulls)
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct SingleNodeEntry<'a> {
    image: &'a str,
    model: &'a str,
    model_prefix: &'a str,
    precision: &'a str,
    framework: &'a str,
    spec_decoding: &'a str,
    runner: &'a str,
    isl: i64,
    osl: i64,
    tp: i64,
    pp: i64,
    dcp_size: i64,
    pcp_size: i64,
    ep: i64,
    dp_attn: bool,
    conc: i64,
    max_model_len: i64,
    exp_name: &'a str,
    disagg: bool,
    run_eval: bool,
    eval_only: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    router: Option<WithoutNulls<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recipe_fingerprint: Option<&'a str>,
}

fn single_node_fixed(r: &SingleNodeFixedRow) -> SingleNodeEntry<'_> {
    SingleNodeEntry {
        image: &r.image,
        model: &r.model,
        model_prefix: &r.model_prefix,
        precision: &r.precision,
        framework: &r.framework,
        spec_decoding: &r.spec_decoding,
        runner: &r.runner,
        isl: r.isl,
        osl: r.osl,
        tp: r.tp,
        pp: r.pp,
        dcp_size: r.dcp_size,
        pcp_size: r.pcp_size,
        ep: r.ep,
        dp_attn: r.dp_attn,
        conc: r.conc,
        max_model_len: r.max_model_len,
        exp_name: &r.exp_name,
        disagg: r.disagg,
        run_eval: r.run_eval,
        eval_only: r.eval_only.unwrap_or(false),
        router: without_nulls(r.router.as_ref()),
        recipe_fingerprint: r.recipe_fingerprint.as_deref(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct MultiNodeEntry<'a> {
    image: &'a str,
    model: &'a str,
    model_prefix: &'a str,
    precision: &'a str,
    framework: &'a str,
    spec_decoding: &'a str,
    runner: &'a str,
    isl: i64,
    osl: i64,
    prefill: WorkerPoolRow<'a>,
    decode: WorkerPoolRow<'a>,
    conc: &'a [i64],
    max_model_len: i64,
    exp_name: &'a str,
    disagg: bool,
    run_eval: bool,
    eval_only: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    eval_conc: Option<i64>,
    eval_all_concs: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    router: Option<WithoutNulls<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kv_p2p_transfer: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recipe_fingerprint: Option<&'a str>,
}

fn multi_node_fixed(r: &MultiNodeFixedRow) -> Result<MultiNodeEntry<'_>, super::RowError> {
    Ok(MultiNodeEntry {
        image: &r.image,
        model: &r.model,
        model_prefix: &r.model_prefix,
        precision: &r.precision,
        framework: &r.framework,
        spec_decoding: &r.spec_decoding,
        runner: &r.runner,
        isl: r.isl,
        osl: r.osl,
        prefill: view(&r.prefill)?,
        decode: view(&r.decode)?,
        conc: &r.conc,
        max_model_len: r.max_model_len,
        exp_name: &r.exp_name,
        disagg: r.disagg,
        run_eval: r.run_eval,
        eval_only: r.eval_only.unwrap_or(false),
        eval_conc: r.eval_conc,
        eval_all_concs: r.eval_all_concs.unwrap_or(false),
        router: without_nulls(r.router.as_ref()),
        kv_p2p_transfer: r.kv_p2p_transfer.as_deref(),
        recipe_fingerprint: r.recipe_fingerprint.as_deref(),
    })
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct SingleNodeAgenticEntry<'a> {
    image: &'a str,
    model: &'a str,
    model_prefix: &'a str,
    precision: &'a str,
    framework: &'a str,
    runner: &'a str,
    tp: i64,
    pp: i64,
    dcp_size: i64,
    pcp_size: i64,
    ep: i64,
    dp_attn: bool,
    spec_decoding: &'a str,
    conc: i64,
    kv_offloading: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    kv_offload_backend: Option<WithoutNulls<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    router: Option<WithoutNulls<'a>>,
    total_cpu_dram_gb: i64,
    duration: i64,
    exp_name: &'a str,
    scenario_type: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_eval: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    eval_only: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recipe_fingerprint: Option<&'a str>,
}

fn single_node_agentic(r: &SingleNodeAgenticRow) -> SingleNodeAgenticEntry<'_> {
    SingleNodeAgenticEntry {
        image: &r.image,
        model: &r.model,
        model_prefix: &r.model_prefix,
        precision: &r.precision,
        framework: &r.framework,
        runner: &r.runner,
        tp: r.tp,
        pp: r.pp,
        dcp_size: r.dcp_size,
        pcp_size: r.pcp_size,
        ep: r.ep,
        dp_attn: r.dp_attn,
        spec_decoding: &r.spec_decoding,
        conc: r.conc,
        kv_offloading: &r.kv_offloading,
        kv_offload_backend: without_nulls(r.kv_offload_backend.as_ref()),
        router: without_nulls(r.router.as_ref()),
        total_cpu_dram_gb: r.total_cpu_dram_gb,
        duration: r.duration,
        exp_name: &r.exp_name,
        scenario_type: &r.scenario_type,
        run_eval: r.run_eval,
        eval_only: r.eval_only,
        recipe_fingerprint: r.recipe_fingerprint.as_deref(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct MultiNodeAgenticEntry<'a> {
    image: &'a str,
    model: &'a str,
    model_prefix: &'a str,
    precision: &'a str,
    framework: &'a str,
    spec_decoding: &'a str,
    runner: &'a str,
    prefill: WorkerPoolRow<'a>,
    decode: WorkerPoolRow<'a>,
    conc: &'a [i64],
    kv_offloading: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    kv_offload_backend: Option<WithoutNulls<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    router: Option<WithoutNulls<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kv_p2p_transfer: Option<&'a str>,
    total_cpu_dram_gb: i64,
    duration: i64,
    exp_name: &'a str,
    disagg: bool,
    scenario_type: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_eval: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    eval_only: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    eval_conc: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recipe_fingerprint: Option<&'a str>,
}

fn multi_node_agentic(
    r: &MultiNodeAgenticRow,
) -> Result<MultiNodeAgenticEntry<'_>, super::RowError> {
    Ok(MultiNodeAgenticEntry {
        image: &r.image,
        model: &r.model,
        model_prefix: &r.model_prefix,
        precision: &r.precision,
        framework: &r.framework,
        spec_decoding: &r.spec_decoding,
        runner: &r.runner,
        prefill: view(&r.prefill)?,
        decode: view(&r.decode)?,
        conc: &r.conc,
        kv_offloading: &r.kv_offloading,
        kv_offload_backend: without_nulls(r.kv_offload_backend.as_ref()),
        router: without_nulls(r.router.as_ref()),
        kv_p2p_transfer: r.kv_p2p_transfer.as_deref(),
        total_cpu_dram_gb: r.total_cpu_dram_gb,
        duration: r.duration,
        exp_name: &r.exp_name,
        disagg: r.disagg,
        scenario_type: &r.scenario_type,
        run_eval: r.run_eval,
        eval_only: r.eval_only,
        eval_conc: r.eval_conc,
        recipe_fingerprint: r.recipe_fingerprint.as_deref(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // tests fail loudly by design
    use super::*;
    use serde_json::json;

    fn entry(row: &serde_json::Value) -> String {
        let row = MatrixRow::from_map(row.as_object().unwrap().clone()).unwrap();
        serde_json::to_string(&AsMatrixEntry(&row)).unwrap()
    }

    #[test]
    fn a_single_node_row_is_written_in_model_order_with_its_defaults() {
        let row = json!({"image": "i", "model": "m", "model-prefix": "p", "precision": "fp8",
            "framework": "f", "runner": "r", "isl": 1024, "osl": 1024, "tp": 8, "pp": 1,
            "dcp-size": 1, "pcp-size": 1, "conc": 4, "max-model-len": 2304, "ep": 1,
            "dp-attn": false, "spec-decoding": "none", "exp-name": "e", "disagg": false,
            "run-eval": false, "router": {"version": null, "name": "x"}});
        assert_eq!(
            entry(&row),
            r#"{"image":"i","model":"m","model-prefix":"p","precision":"fp8","framework":"f","spec-decoding":"none","runner":"r","isl":1024,"osl":1024,"tp":8,"pp":1,"dcp-size":1,"pcp-size":1,"ep":1,"dp-attn":false,"conc":4,"max-model-len":2304,"exp-name":"e","disagg":false,"run-eval":false,"eval-only":false,"router":{"name":"x"}}"#
        );
    }

    #[test]
    fn a_worker_block_is_written_in_worker_order_and_its_settings_default_to_empty() {
        let worker = |extra: serde_json::Value| {
            let mut w = json!({"ep": 8, "dp-attn": true, "tp": 8, "num-worker": 1, "pp": 1,
                "dcp-size": 1, "pcp-size": 1, "hardware": null});
            w.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            w
        };
        let row = json!({"image": "i", "model": "m", "model-prefix": "p", "precision": "fp8",
            "framework": "f", "runner": "r", "isl": 1024, "osl": 1024,
            "spec-decoding": "none", "prefill": worker(json!({})),
            "decode": worker(json!({"additional-settings": null})), "conc": [4],
            "max-model-len": 2304, "exp-name": "e", "disagg": false, "run-eval": false});
        let out = entry(&row);
        assert!(
            out.contains(r#""prefill":{"num-worker":1,"tp":8,"pp":1,"dcp-size":1,"pcp-size":1,"ep":8,"dp-attn":true,"additional-settings":[]}"#),
            "{out}"
        );
        assert!(
            out.contains(r#""decode":{"num-worker":1,"tp":8,"pp":1,"dcp-size":1,"pcp-size":1,"ep":8,"dp-attn":true},"#),
            "{out}"
        );
        assert!(
            out.ends_with(r#""eval-only":false,"eval-all-concs":false}"#),
            "{out}"
        );
    }
}
