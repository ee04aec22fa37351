//! A real LLM serving trace: vLLM (V1, eager) serving gpt-oss-120b at tensor parallelism 8 on
//! an NVIDIA B200, one prefill step of 888 tokens, rank 0 (`fixtures/traces/
//! b200-vllm-gpt-oss-tp8-eager.json.gz`, from AMD's TraceLens, MIT licence beside it). Its
//! operators are vLLM's own (`vllm::moe_forward`, `_C::fused_add_rms_norm`,
//! `_C::rotary_embedding`, `_C::static_scaled_fp8_quant`, `_C_cache_ops::reshape_and_cache_flash`,
//! `vllm::unified_attention_with_output`) and its collectives a symmetric-memory all-reduce.
//!
//! Checked against the same file read whole as `serde_json::Value`: each kernel's operator by
//! its `External id` (the innermost `cpu_op` with that id), the kernel time per operator, and
//! the share of the kernel time outside the collectives that gets F and B, before and after the
//! model's configuration (`fixtures/traces/gpt-oss-120b-config.json`) is given; each vLLM
//! operator's F and B against a hand count of its recorded shapes.

use std::collections::BTreeMap;
use std::io::Read;

use flate2::read::GzDecoder;
use roofline_import::operators::{ModelConfig, op_cost};
use roofline_import::trace::{self, ImportOptions, TraceImport};
use roofline_model::bundle::Datapath;
use roofline_tests::fixtures;
use serde_json::Value;

const TRACE: &str = "b200-vllm-gpt-oss-tp8-eager.json.gz";
const CONFIG: &str = "gpt-oss-120b-config.json";

fn raw() -> Value {
    raw_of(TRACE)
}

fn raw_of(name: &str) -> Value {
    let mut s = String::new();
    GzDecoder::new(std::fs::File::open(fixtures().join("traces").join(name)).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    serde_json::from_str(&s).unwrap()
}

fn parsed() -> trace::Trace {
    parsed_of(TRACE)
}

fn parsed_of(name: &str) -> trace::Trace {
    let f = std::fs::File::open(fixtures().join("traces").join(name)).unwrap();
    trace::parse(GzDecoder::new(f)).unwrap()
}

fn config() -> ModelConfig {
    let text = std::fs::read_to_string(fixtures().join("traces").join(CONFIG)).unwrap();
    ModelConfig::from_json(&text).unwrap()
}

/// Kernel time per operator, µs, and launches, linked by `External id` to the innermost
/// `cpu_op` carrying it (the shortest); `None` for kernels no operator carries.
fn time_per_operator(v: &Value) -> BTreeMap<Option<String>, (usize, f64)> {
    let events = v["traceEvents"].as_array().unwrap();
    let mut ops: BTreeMap<i64, (f64, String)> = BTreeMap::new();
    for e in events.iter().filter(|e| e["cat"] == "cpu_op") {
        let Some(id) = e["args"]["External id"].as_i64() else {
            continue;
        };
        let dur = e["dur"].as_f64().unwrap();
        let name = e["name"].as_str().unwrap().to_string();
        let slot = ops.entry(id).or_insert((f64::INFINITY, String::new()));
        if dur < slot.0 {
            *slot = (dur, name);
        }
    }
    let mut out: BTreeMap<Option<String>, (usize, f64)> = BTreeMap::new();
    for k in events.iter().filter(|e| e["cat"] == "kernel") {
        let op = k["args"]["External id"]
            .as_i64()
            .and_then(|id| ops.get(&id))
            .map(|o| o.1.clone());
        let e = out.entry(op).or_default();
        e.0 += 1;
        e.1 += k["dur"].as_f64().unwrap();
    }
    out
}

/// The same from the import: per operator (`None`: no operator), launches and µs.
fn imported_per_operator(imp: &TraceImport) -> BTreeMap<Option<String>, (usize, f64)> {
    let mut out: BTreeMap<Option<String>, (usize, f64)> = BTreeMap::new();
    for k in &imp.kernels {
        let e = out
            .entry(k.operator.as_ref().map(|o| o.name.clone()))
            .or_default();
        e.0 += 1;
        e.1 += k.time.total_s * 1e6;
    }
    out
}

const COLLECTIVES: [&str; 2] = ["symm_mem::multimem_all_reduce_", "record_param_comms"];

/// The operators an import's coverage left without F and B (`None`: kernels with no operator).
fn rest_of(imp: &TraceImport) -> Vec<Option<&str>> {
    imp.stats
        .coverage
        .rest
        .keys()
        .map(Option::as_deref)
        .collect()
}

/// The share of the kernel time outside the collectives that the operators `covered` have,
/// from the independent reading.
fn expected_share(v: &Value, without: &[Option<&str>]) -> f64 {
    let per = time_per_operator(v);
    let mut all = 0.0;
    let mut rest = 0.0;
    for (op, (_, t)) in &per {
        if op.as_deref().is_some_and(|o| COLLECTIVES.contains(&o)) {
            continue;
        }
        all += t;
        if without.contains(&op.as_deref()) {
            rest += t;
        }
    }
    (all - rest) / all
}

/// Every launch of the import under the operator the raw trace's `External id` names, with
/// the same launches and time per operator.
fn linked_as_external_ids_say(v: &Value, imp: &TraceImport) {
    let expected = time_per_operator(v);
    let got = imported_per_operator(imp);
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for (op, (n, t)) in &expected {
        let (m, u) = got[op];
        assert_eq!(m, *n, "{op:?}");
        assert!(close(u, *t), "{op:?}: {u} against {t} µs");
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// SGLang serving Qwen3-8B on an AMD MI300X with aiter's kernels, one extend step of 15
/// sequences, 15,360 tokens (`fixtures/traces/mi300x-sglang-qwen3-8b-prefilldecode.json.gz`,
/// from AMD's TraceLens, MIT): every launch linked as its `External id` says, and the share
/// of the kernel time with F and B recomputed from the raw events; the rest is aiter's batch
/// prefill attention (its sequence lengths are tensors whose values are not recorded) and a few
/// small launches.
#[test]
fn sglang_on_aiter_gets_f_and_b_but_for_its_attention() {
    let name = "mi300x-sglang-qwen3-8b-prefilldecode.json.gz";
    let v = raw_of(name);
    let imp = trace::import(&parsed_of(name), &ImportOptions::default()).unwrap();
    linked_as_external_ids_say(&v, &imp);
    assert_eq!(imp.stats.launches, 527);
    let rest = rest_of(&imp);
    let share = imp.stats.coverage.share().unwrap();
    let exp = expected_share(&v, &rest);
    assert!(close(share, exp), "{share} against {exp}");
    assert_eq!(
        rest,
        [
            None,
            Some("aiter::mha_batch_prefill"),
            Some("aten::arange"),
            Some("aten::index"),
            Some("sglang_profiler::forward_batch_info_compute_position_triton_340"),
        ]
    );
    assert!((0.95..0.96).contains(&share), "{share}");
    let note = imp
        .notes
        .iter()
        .find(|n| n.starts_with("F and B for "))
        .unwrap();
    assert!(note.contains("aiter::mha_batch_prefill ×36"), "{note}");
    let why = imp
        .notes
        .iter()
        .find(|n| n.starts_with("not understood"))
        .unwrap();
    assert!(
        why.contains("aiter::mha_batch_prefill ×36 (the sequence lengths are not recorded"),
        "{why}"
    );
}

#[test]
fn every_launch_is_linked_as_external_ids_say() {
    let v = raw();
    let imp = trace::import(&parsed(), &ImportOptions::default()).unwrap();
    linked_as_external_ids_say(&v, &imp);
    assert_eq!(imp.stats.launches, 768);
}

#[test]
fn the_share_with_f_and_b_before_and_after_the_models_configuration() {
    let v = raw();
    let t = parsed();
    // Without the configuration: the MoE layers, the unified attention, two kernels with no
    // operator and one advanced indexing have none.
    let without = trace::import(&t, &ImportOptions::default()).unwrap();
    let share = without.stats.coverage.share().unwrap();
    let exp = expected_share(
        &v,
        &[
            Some("vllm::moe_forward"),
            Some("vllm::unified_attention_with_output"),
            Some("aten::index"),
            None,
        ],
    );
    assert!(close(share, exp), "{share} against {exp}");
    assert!((0.24..0.25).contains(&share), "{share}");
    // With it, every MoE layer: 94.3 %, the rest the attention (its context lengths are not
    // recorded), the indexing and the two kernels no operator launched.
    let opts = ImportOptions {
        model: Some(config()),
        ..ImportOptions::default()
    };
    let with = trace::import(&t, &opts).unwrap();
    let share = with.stats.coverage.share().unwrap();
    let exp = expected_share(
        &v,
        &[
            Some("vllm::unified_attention_with_output"),
            Some("aten::index"),
            None,
        ],
    );
    assert!(close(share, exp), "{share} against {exp}");
    assert!((0.943..0.944).contains(&share), "{share}");
    let rest = rest_of(&with);
    assert_eq!(
        rest,
        [
            None,
            Some("aten::index"),
            Some("vllm::unified_attention_with_output")
        ]
    );
    let note = with
        .notes
        .iter()
        .find(|n| n.starts_with("F and B for "))
        .unwrap();
    assert!(
        note.starts_with("F and B for 94.3 % of the kernel time outside the collectives")
            && note.contains("vllm::unified_attention_with_output ×36"),
        "{note}"
    );
    // The collectives' time is left out, their messages recorded: 73 all-reduces of BF16
    // hidden states, flattened, read from the raw events (37 of 888 × 2880 elements after the
    // attention, 36 of 888 × 3072 after the padded MoE layers).
    let comm: f64 = time_per_operator(&v)
        .iter()
        .filter(|(o, _)| o.as_deref().is_some_and(|o| COLLECTIVES.contains(&o)))
        .map(|(_, (_, t))| t)
        .sum();
    assert!(close(with.stats.coverage.communication_s * 1e6, comm));
    let messages: f64 = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "symm_mem::multimem_all_reduce_")
        .map(|e| {
            assert_eq!(e["args"]["Input type"][0], "c10::BFloat16");
            2.0 * e["args"]["Input Dims"][0][0].as_f64().unwrap()
        })
        .sum();
    assert_eq!(
        messages,
        2.0 * (37.0 * 888.0 * 2880.0 + 36.0 * 888.0 * 3072.0)
    );
    assert_eq!(
        with.stats
            .communication_bytes
            .get("symm_mem::multimem_all_reduce_"),
        Some(&messages)
    );
}

/// Each vLLM operator's F and B on this trace, by hand from its recorded shapes (the hand
/// formulas of `import/src/operators/serving.rs` and `moe.rs`).
#[test]
fn vllm_operators_by_hand_on_the_b200_trace() {
    let t = parsed();
    let opts = ImportOptions {
        model: Some(config()),
        ..ImportOptions::default()
    };
    let imp = trace::import(&t, &opts).unwrap();
    let call = |name: &str| {
        imp.kernels
            .iter()
            .filter_map(|k| k.operator.as_ref())
            .find(|o| o.name == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let fb = |name: &str| {
        let c = call(name).complexity.unwrap_or_else(|| panic!("{name}"));
        (c.flops, c.bytes, c.datapath)
    };
    let n = 888.0 * 2880.0;
    assert_eq!(
        fb("_C::fused_add_rms_norm"),
        (5.0 * n, 2.0 * (4.0 * n + 2880.0), Some(Datapath::Fp32))
    );
    assert_eq!(fb("_C::rms_norm").0, 4.0 * n);
    // Rotary: 8 query heads and 1 key head of 64, all rotated.
    let (f, b, _) = fb("_C::rotary_embedding");
    assert_eq!(f, 3.0 * 888.0 * 9.0 * 64.0);
    assert_eq!(b, 8.0 * 888.0 + 4.0 * 888.0 * 576.0 + 2.0 * 888.0 * 64.0);
    // FP8 quantisation of the [888, 512] query slice: 1 FLOP per element.
    let q = 888.0 * 512.0;
    assert_eq!(fb("_C::static_scaled_fp8_quant").0, q);
    assert_eq!(fb("_C::static_scaled_fp8_quant").1, 3.0 * q + 4.0);
    // The KV cache (FP8, stored as uint8): 888 keys and values of one head of 64.
    let kv = 2.0 * 888.0 * 64.0;
    assert_eq!(
        fb("_C_cache_ops::reshape_and_cache_flash").1,
        3.0 * kv + 8.0 * 888.0 + 8.0
    );
    // The MoE layer: 888 tokens, top-4 of 128 experts, I = 2880 / 8 = 360 per rank,
    // hidden_size 2880 (the recorded hidden states are padded to 3072), MXFP4 weights.
    let (f, b, dp) = fb("vllm::moe_forward");
    assert_eq!(f, 6.0 * 888.0 * 4.0 * 2880.0 * 360.0);
    assert_eq!(
        b,
        2.0 * 2.0 * 888.0 * 3072.0 + 2.0 * 888.0 * 128.0 + 128.0 * 3.0 * 2880.0 * 360.0 * 0.53125
    );
    assert_eq!(dp, Some(Datapath::TensorBf16));
    assert_eq!(call("vllm::moe_forward").kernels, 7);
    // The dense projections (BF16 addmm): unchanged rules, here for the record.
    let addmm = t
        .ops
        .iter()
        .find(|o| t.name(o.name) == "aten::addmm")
        .unwrap();
    let c = op_cost(
        "aten::addmm",
        &t.inputs[addmm.inputs.unwrap() as usize].inputs,
    )
    .unwrap();
    assert_eq!(c.complexity.flops, 2.0 * 888.0 * 640.0 * 2880.0);
    // The assumptions behind the MoE's figures are said.
    let assumed = with_note(&imp, "assumed where the trace did not record it");
    for said in [
        "vllm::moe_forward: tensor parallelism 8 (the trace's world size",
        "vllm::moe_forward: hidden_size 2880 for the arithmetic",
        "_C_cache_ops::reshape_and_cache_flash: every token's rows written",
    ] {
        assert!(assumed.contains(said), "{said}: {assumed}");
    }
}

fn with_note<'a>(imp: &'a TraceImport, start: &str) -> &'a str {
    imp.notes
        .iter()
        .find(|n| n.starts_with(start))
        .unwrap_or_else(|| panic!("{start}: {:?}", imp.notes))
}

/// PyTorch 2.15's low-precision and grouped products as it records them
/// (`fixtures/traces/cpu-lowp-gemms.json.gz`, `scripts/lowp_cpu_trace.py`, on the CPU), each
/// by its own rule: `_scaled_mm` equal to PyTorch's own FLOP counter (its
/// `cpu-lowp-gemms.counter.json`, written in the same run), and, where the counter counts
/// nothing (`_grouped_mm`, `_int_mm`), the hand formula.
#[test]
fn low_precision_gemms_as_pytorch_records_them() {
    let dir = fixtures().join("traces");
    let f = std::fs::File::open(dir.join("cpu-lowp-gemms.json.gz")).unwrap();
    let t = trace::parse(GzDecoder::new(f)).unwrap();
    let counter: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("cpu-lowp-gemms.counter.json")).unwrap(),
    )
    .unwrap();
    // Each call is recorded twice, one record inside the other (the counter's dispatch mode
    // dispatches it again): the outer ones, in order. The CPU computes a scaled or grouped
    // product through other operators inside it, so the calls' own rules are read here, as a
    // GPU trace's kernels would find them.
    let names = ["aten::_scaled_mm", "aten::_grouped_mm", "aten::_int_mm"];
    let mut outer: Vec<usize> = (0..t.ops.len())
        .filter(|&i| names.contains(&t.name(t.ops[i].name)))
        .filter(|&i| {
            let o = &t.ops[i];
            !t.ops.iter().enumerate().any(|(j, p)| {
                j != i
                    && p.name == o.name
                    && p.ts <= o.ts
                    && o.end <= p.end
                    && (p.ts, j) < (o.ts, i)
            })
        })
        .collect();
    outer.sort_by_key(|&i| t.ops[i].ts);
    let ours: Vec<(&str, f64, f64, Datapath)> = outer
        .iter()
        .map(|&i| {
            let name = t.name(t.ops[i].name);
            let c = op_cost(name, &t.inputs[t.ops[i].inputs.unwrap() as usize].inputs)
                .unwrap_or_else(|e| panic!("{name}: {e:?}"));
            (name, c.complexity.flops, c.complexity.bytes, c.datapath)
        })
        .collect();
    let calls = counter["calls"].as_array().unwrap();
    assert_eq!(ours.len(), calls.len(), "{ours:?}");
    for ((name, f, _, _), c) in ours.iter().zip(calls) {
        assert_eq!(*name, c["operator"].as_str().unwrap());
        let by_counter = c["flops"].as_f64().unwrap();
        if by_counter > 0.0 {
            assert_eq!(*f, by_counter, "{name}");
        }
    }
    let (m, k, n) = (32.0, 64.0, 16.0);
    // Tensor-wise FP32 scales, a BF16 output; then row-wise [32, 1] and [1, 16], FP8 out.
    assert_eq!(ours[0].1, 2.0 * m * n * k);
    assert_eq!(ours[0].2, m * k + k * n + 4.0 + 4.0 + 2.0 * m * n);
    assert_eq!(ours[0].3, Datapath::TensorFp8);
    assert_eq!(ours[1].2, m * k + k * n + 4.0 * (m + n) + m * n);
    // [96, 32] × [4, 32, 48] with 4 offsets: every row through one expert.
    assert_eq!(ours[2].1, 2.0 * 96.0 * 32.0 * 48.0);
    assert_eq!(
        ours[2].2,
        2.0 * (96.0 * 32.0 + 4.0 * 32.0 * 48.0 + 96.0 * 48.0) + 16.0
    );
    // [4, 8, 32] × [4, 32, 48]: batched.
    assert_eq!(ours[3].1, 4.0 * 2.0 * 8.0 * 32.0 * 48.0);
    // INT8 into INT32.
    assert_eq!(ours[4].1, 2.0 * m * n * k);
    assert_eq!(ours[4].2, m * k + k * n + 4.0 * m * n);
    assert_eq!(ours[4].3, Datapath::TensorInt8);
}
