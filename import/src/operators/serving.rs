//! The serving engines' own operators, as vLLM (`_C::`, `_C_cache_ops::`, `vllm::`) and SGLang
//! (`sgl_kernel::`) register them with the PyTorch dispatcher, so that torch.profiler records
//! their shapes: RMS norm and fused add + RMS norm, rotary embedding, the gated activations
//! (`silu_and_mul`, `gelu_and_mul`…), FP8 and INT8 quantisation, the KV-cache writes
//! (`reshape_and_cache`, `reshape_and_cache_flash`, `concat_and_cache_mla`) and the paged and
//! unified attention. Argument positions are the schemas of vLLM's `csrc/torch_bindings.cpp`
//! and SGLang's `sgl-kernel/csrc/common_extension.cc`; the FLOPs per element are read from their
//! CUDA kernels (`csrc/layernorm_kernels.cu`, `csrc/pos_encoding_kernels.cu`,
//! `csrc/activation_kernels.cu`, `csrc/quantization/`, `csrc/cache_kernels.cu`), counted as the
//! elementwise table counts (an addition or multiplication 1, an FMA 2, special functions 0).
//!
//! The collectives (`vllm::all_reduce`, `_C_custom_ar::all_reduce`, `symm_mem::…`,
//! `sgl_kernel::all_reduce`) have no rule: they move data between GPUs, bound by the links, and
//! the import keeps them out of the roofline, recording their bytes
//! (`crate::trace::import`).

use super::attention::Lens;
use super::elementwise::{GELU_FLOPS, GELU_TANH_FLOPS};
use super::{Arg, Complexity, Dtype, Family, NoCost, OpCost, OpInputs, numel, shapes_err};

/// An elementwise-like cost on the CUDA cores of PyTorch's `opmath` type (FP32 for 16-bit and
/// 8-bit inputs).
fn on_cores(family: Family, flops: f64, bytes: f64, dt: Dtype) -> OpCost {
    OpCost {
        complexity: Complexity::new(flops, bytes),
        datapath: super::elementwise::opmath(dt),
        family,
        assumed: Vec::new(),
    }
}

/// Where an RMS norm keeps its arguments.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rms {
    /// The output written, when it is its own argument (`rms_norm(result, input, …)`).
    out: Option<usize>,
    /// The input (and, with a residual, the output written in its place).
    input: usize,
    /// The residual, read and written: `fused_add_rms_norm`.
    residual: Option<usize>,
    /// The residual's sum written to its own argument (aiter's `add_rmsnorm`), not in place.
    residual_out: Option<usize>,
    /// The weight.
    weight: usize,
    /// Gemma's `x·s·(1 + w)`: one more addition per element.
    gemma: bool,
}

impl Rms {
    /// vLLM's `rms_norm(Tensor! result, Tensor input, Tensor weight, float epsilon)` and
    /// SGLang's `rmsnorm(Tensor! output, Tensor input, Tensor weight, float eps, bool
    /// enable_pdl)`.
    pub(super) const NORM: Rms = Rms {
        out: Some(0),
        input: 1,
        residual: None,
        residual_out: None,
        weight: 2,
        gemma: false,
    };
    /// vLLM's `fused_add_rms_norm(Tensor! input, Tensor! residual, Tensor weight, float
    /// epsilon)` and SGLang's `fused_add_rmsnorm(Tensor! input, Tensor! residual, Tensor weight,
    /// float eps, bool enable_pdl)`.
    pub(super) const FUSED_ADD: Rms = Rms {
        out: None,
        input: 0,
        residual: Some(1),
        residual_out: None,
        weight: 2,
        gemma: false,
    };
    /// AMD aiter's `add_rmsnorm(Tensor! out, Tensor input, Tensor residual_in, Tensor!
    /// residual_out, Tensor weight, float epsilon)` (`csrc/include/rmsnorm.h`): the sum `z =
    /// input + residual_in` written to `residual_out`, its norm to `out`, out of place: the same
    /// reads and writes as [`Rms::FUSED_ADD`] in place.
    pub(super) const AITER_ADD: Rms = Rms {
        out: Some(0),
        input: 1,
        residual: Some(2),
        residual_out: Some(3),
        weight: 4,
        gemma: false,
    };
    /// SGLang's `gemma_rmsnorm`, as [`Rms::NORM`].
    pub(super) const GEMMA: Rms = Rms {
        gemma: true,
        ..Rms::NORM
    };
    /// SGLang's `gemma_fused_add_rmsnorm`, as [`Rms::FUSED_ADD`].
    pub(super) const GEMMA_FUSED_ADD: Rms = Rms {
        gemma: true,
        ..Rms::FUSED_ADD
    };
}

/// RMS norm over the last dimension (`rms_norm_kernel`, `fused_add_rms_norm_kernel` in vLLM's
/// `csrc/layernorm_kernels.cu`): per element `variance += x·x` (an FMA, 2) and `(x·s)·w` (2):
/// 4 FLOPs; with a residual `z = x + r` first (1): 5; Gemma's `(1 + w)` one more. The row's
/// mean, `+ ε` and `rsqrt` (a few per row) are not counted, as [`super::norm`]'s are not. B: the
/// input and the weight read, the output written; with a residual, the input and residual read
/// and both written (in place, or to `out` and `residual_out`).
pub(super) fn rms_norm(x: &OpInputs, r: Rms) -> Result<OpCost, NoCost> {
    let Some((dt, s)) = x.tensor(r.input) else {
        return Err(shapes_err("expected an input tensor"));
    };
    let Some(&h) = s.last() else {
        return Err(shapes_err("expected an input of at least one dimension"));
    };
    if x.arg(r.weight).shape() != Some(&[h][..]) {
        return Err(shapes_err(format!(
            "impossible arguments: a weight of {:?} for rows of {h}",
            x.arg(r.weight).shape().unwrap_or_default()
        )));
    }
    let n = numel(s);
    let row = n * dt.bytes();
    let gemma = if r.gemma { 1.0 } else { 0.0 };
    let (per, bytes) = match (r.residual, r.out) {
        (Some(res), out) => {
            if [Some(res), out, r.residual_out]
                .into_iter()
                .flatten()
                .any(|i| x.arg(i).shape() != Some(s))
            {
                return Err(shapes_err(
                    "impossible arguments: a residual or an output of another shape",
                ));
            }
            (5.0 + gemma, 2.0 * row + 2.0 * x.arg(res).bytes())
        }
        (None, Some(o)) => {
            if x.arg(o).shape() != Some(s) {
                return Err(shapes_err(
                    "impossible arguments: an output of another shape",
                ));
            }
            (4.0 + gemma, row + x.arg(o).bytes())
        }
        (None, None) => (4.0 + gemma, 2.0 * row),
    };
    Ok(on_cores(
        Family::Norm,
        per * n,
        bytes + x.arg(r.weight).bytes(),
        dt,
    ))
}

/// vLLM's `rotary_embedding(Tensor positions, Tensor! query, Tensor!? key, int head_size,
/// Tensor cos_sin_cache, bool is_neox)`, in place (`csrc/pos_encoding_kernels.cu`): each
/// rotated pair `(x, y)` becomes `(x·cos − y·sin, y·cos + x·sin)`, 6 FLOPs, so 3 per rotated
/// element; the rotated part of each head is the cache's width (`rot_dim`, a partial rotary
/// embedding rotates less than the head). F = 3·T·(Hq + Hk)·rot_dim. B: the positions, the
/// rotated parts read and written, and one cache row per token (never more than the cache,
/// as an embedding lookup counts it).
pub(super) fn rotary_embedding(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some((_, pos)), Some((dt, q)), Some((dc, cache))) =
        (x.tensor(0), x.tensor(1), x.tensor(4))
    else {
        return Err(shapes_err(
            "expected positions, a query and the cos/sin cache",
        ));
    };
    let Some(head) = x.int(3).filter(|&h| h > 0) else {
        return Err(shapes_err("the head size (head_size) is not recorded"));
    };
    let (&[max_pos, rot], t) = (cache, numel(pos)) else {
        return Err(shapes_err("expected a cos/sin cache [positions, rot_dim]"));
    };
    let heads = |s: &[u64]| -> Option<f64> {
        let per_token = numel(s) / t;
        (per_token.fract() == 0.0 && per_token % head as f64 == 0.0)
            .then(|| per_token / head as f64)
    };
    let hk = match x.arg(2) {
        Arg::Tensor(_, k) => heads(k),
        _ => Some(0.0),
    };
    let (Some(hq), Some(hk)) = (heads(q), hk) else {
        return Err(shapes_err(format!(
            "impossible arguments: query or key not a whole number of heads of {head} per token"
        )));
    };
    if rot > head || rot % 2 != 0 || t == 0.0 {
        return Err(shapes_err(format!(
            "impossible arguments: a rotary width of {rot} for heads of {head}"
        )));
    }
    let rotated = t * (hq + hk) * rot as f64;
    let cache_read = t.min(max_pos as f64) * rot as f64 * dc.bytes();
    Ok(on_cores(
        Family::Elementwise,
        3.0 * rotated,
        x.arg(0).bytes() + 2.0 * rotated * dt.bytes() + cache_read,
        dt,
    ))
}

/// SGLang's `apply_rope_pos_ids_cos_sin_cache(Tensor q, Tensor k, Tensor! q_rope, Tensor!
/// k_rope, Tensor cos_sin_cache, Tensor pos_ids, bool interleave, bool enable_pdl, int
/// cuda_stream, Tensor? v, Tensor!? k_buffer, Tensor!? v_buffer, Tensor? kv_cache_loc)`
/// (FlashInfer's kernel, out of place): F as [`rotary_embedding`]'s, 3 per rotated element; B:
/// `q` and `k` read, `q_rope` and `k_rope` written, the positions and one cache row per token;
/// with the fused KV-cache write (`k_buffer` recorded), `v` read, the key and value written
/// into the buffers at their type and the locations read.
pub(super) fn sgl_rope(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some((dt, q)), Some((_, k)), Some((dc, cache)), Some((_, pos))) =
        (x.tensor(0), x.tensor(1), x.tensor(4), x.tensor(5))
    else {
        return Err(shapes_err(
            "expected q, k, the cos/sin cache and the positions",
        ));
    };
    let (&[t, hq, d], &[t2, hk, d2], &[max_pos, rot]) = (q, k, cache) else {
        return Err(shapes_err(
            "expected q [tokens, heads, head size], k likewise and a cache [positions, rot_dim]",
        ));
    };
    if t != t2 || d != d2 || rot > d || rot % 2 != 0 || numel(pos) != t as f64 {
        return Err(shapes_err(
            "impossible arguments: q, k, the positions and the rotary width disagree",
        ));
    }
    let rotated = (t * (hq + hk) * rot) as f64;
    let mut bytes = 2.0 * (x.arg(0).bytes() + x.arg(1).bytes())
        + x.arg(5).bytes()
        + (t.min(max_pos) * rot) as f64 * dc.bytes();
    if let (Arg::Tensor(..), Some((dk, _))) = (x.arg(9), x.tensor(10)) {
        let row = (t * hk * d) as f64;
        bytes += x.arg(9).bytes() + 2.0 * row * dk.bytes() + x.arg(12).bytes();
    }
    Ok(on_cores(Family::Elementwise, 3.0 * rotated, bytes, dt))
}

/// The gated activations `act(x)·y` of vLLM's `csrc/activation_kernels.cu` and SGLang's
/// kernels, `(Tensor! out, Tensor input)` with `input = [x, y]` along the last dimension: F per
/// output element.
#[derive(Debug, Clone, Copy)]
pub(super) enum Gated {
    /// `silu_and_mul`, `mul_and_silu`: `x/(1 + exp(−x))·y`, 3.
    Silu,
    /// `gelu_and_mul`: the exact GELU (4) and the product, 5.
    Gelu,
    /// `gelu_tanh_and_mul`: the tanh GELU (8) and the product, 9.
    GeluTanh,
    /// `fatrelu_and_mul`: a threshold (0) and the product, 1.
    FatRelu,
    /// `swigluoai_and_mul` (gpt-oss): `(u + 1)·g / (1 + exp(−g·α))` with `g`, `u` clamped: 5.
    SwigluOai,
}

impl Gated {
    /// FLOPs per output element.
    pub(super) fn flops(self) -> f64 {
        match self {
            Gated::Silu => 3.0,
            Gated::Gelu => GELU_FLOPS + 1.0,
            Gated::GeluTanh => GELU_TANH_FLOPS + 1.0,
            Gated::FatRelu => 1.0,
            Gated::SwigluOai => 5.0,
        }
    }
}

/// A gated activation: `out [..., d]` from `input [..., 2d]`. F = per × out's elements; B:
/// the input read, the output written.
pub(super) fn gated(x: &OpInputs, act: Gated) -> Result<OpCost, NoCost> {
    let (Some((dt, out)), Some((_, inp))) = (x.tensor(0), x.tensor(1)) else {
        return Err(shapes_err("expected an output and an input tensor"));
    };
    let (Some(&d), Some(&d2)) = (out.last(), inp.last()) else {
        return Err(shapes_err("expected tensors of at least one dimension"));
    };
    if d2 != 2 * d || out[..out.len() - 1] != inp[..inp.len() - 1] {
        return Err(shapes_err(format!(
            "impossible arguments: an output {out:?} from an input {inp:?} (expected [..., d] from [..., 2d])"
        )));
    }
    Ok(on_cores(
        Family::Elementwise,
        act.flops() * numel(out),
        x.arg(0).bytes() + x.arg(1).bytes(),
        dt,
    ))
}

/// Where a quantisation keeps its arguments.
#[derive(Debug, Clone, Copy)]
pub(super) struct Quant {
    /// The quantised output.
    out: usize,
    /// The input.
    input: usize,
    /// The scale (or scales), read or written.
    scale: usize,
    /// Scales computed from the data (dynamic): one division each, `absmax / max`.
    dynamic: bool,
}

impl Quant {
    /// vLLM's `static_scaled_fp8_quant(Tensor! result, Tensor input, Tensor scale, …)` and
    /// `static_scaled_int8_quant(Tensor! result, Tensor input, Tensor scale, Tensor? azp)`.
    pub(super) const VLLM_STATIC: Quant = Quant {
        out: 0,
        input: 1,
        scale: 2,
        dynamic: false,
    };
    /// vLLM's `dynamic_scaled_fp8_quant(Tensor! result, Tensor input, Tensor! scale)` and
    /// `dynamic_per_token_scaled_fp8_quant(Tensor! result, Tensor input, Tensor! scale, Tensor?
    /// scale_ub)`.
    pub(super) const VLLM_DYNAMIC: Quant = Quant {
        dynamic: true,
        ..Quant::VLLM_STATIC
    };
    /// SGLang's `sgl_per_token_quant_fp8(Tensor input, Tensor output_q, Tensor output_s)` and
    /// `sgl_per_token_group_quant_fp8(Tensor input, Tensor output_q, Tensor output_s, int
    /// group_size, …)`.
    pub(super) const SGL_DYNAMIC: Quant = Quant {
        out: 1,
        input: 0,
        scale: 2,
        dynamic: true,
    };
}

/// Quantisation to FP8 or INT8 (vLLM's `scaled_fp8_conversion`: `x·(1/scale)` or `x/scale`,
/// then a clamp): 1 FLOP per element; a dynamic scale is the maximum of its group (comparisons,
/// 0) over the type's largest value, one division per scale. B: the input read, the output
/// written at its type, the scales read or written.
pub(super) fn quantize(x: &OpInputs, q: Quant) -> Result<OpCost, NoCost> {
    let (Some((dt, inp)), Some((_, out)), Some(_)) =
        (x.tensor(q.input), x.tensor(q.out), x.tensor(q.scale))
    else {
        return Err(shapes_err(
            "expected an input, an output and a scale tensor",
        ));
    };
    if numel(inp) != numel(out) {
        return Err(shapes_err(format!(
            "impossible arguments: an output {out:?} for an input {inp:?}"
        )));
    }
    let scales = if q.dynamic {
        x.arg(q.scale).numel()
    } else {
        0.0
    };
    Ok(on_cores(
        Family::Elementwise,
        numel(inp) + scales,
        x.arg(q.input).bytes() + x.arg(q.out).bytes() + x.arg(q.scale).bytes(),
        dt,
    ))
}

/// SGLang's `sgl_per_tensor_quant_fp8(Tensor input, Tensor output_q, Tensor output_s, bool
/// is_static)`: [`quantize`], the scale computed when `is_static` is false.
pub(super) fn sgl_per_tensor_quant(x: &OpInputs) -> Result<OpCost, NoCost> {
    match x.flag(3) {
        Some(is_static) => quantize(
            x,
            Quant {
                dynamic: !is_static,
                ..Quant::SGL_DYNAMIC
            },
        ),
        None => Err(shapes_err(
            "whether the scale is static (is_static) is not recorded",
        )),
    }
}

/// Where a KV-cache write keeps its arguments.
#[derive(Debug, Clone, Copy)]
pub(super) struct CacheWrite {
    /// The tensors written into the cache, one row per token (`key`, `value`; MLA's `kv_c`,
    /// `k_pe`).
    rows: &'static [usize],
    /// The caches written (their element type is the stored one).
    caches: &'static [usize],
    /// `slot_mapping`.
    slots: usize,
    /// The scales (`k_scale`, `v_scale`).
    scales: &'static [usize],
}

impl CacheWrite {
    /// SGLang's `store_cache(Tensor k, Tensor v, Tensor! k_cache, Tensor! v_cache, Tensor
    /// indices, int row_bytes, int num_split)` (`jit_kernel/kvcache.py`, the
    /// `StoreKVCacheKernel` of `elementwise/kvcache.cuh`): each token's key and value rows
    /// copied to its cache row, no scaling.
    pub(super) const SGL_STORE: CacheWrite = CacheWrite {
        rows: &[0, 1],
        caches: &[2, 3],
        slots: 4,
        scales: &[],
    };
    /// vLLM's `reshape_and_cache(Tensor key, Tensor value, Tensor! key_cache, Tensor!
    /// value_cache, Tensor slot_mapping, str kv_cache_dtype, Tensor k_scale, Tensor v_scale)`
    /// and `reshape_and_cache_flash` (same arguments).
    pub(super) const KV: CacheWrite = CacheWrite {
        rows: &[0, 1],
        caches: &[2, 3],
        slots: 4,
        scales: &[6, 7],
    };
    /// vLLM's `concat_and_cache_mla(Tensor kv_c, Tensor k_pe, Tensor! kv_cache, Tensor
    /// slot_mapping, str kv_cache_dtype, Tensor scale)`.
    pub(super) const MLA: CacheWrite = CacheWrite {
        rows: &[0, 1],
        caches: &[2],
        slots: 3,
        scales: &[5],
    };
}

/// A KV-cache write (`csrc/cache_kernels.cu`): every token's rows read and written into their
/// cache slots at the cache's element type; into an FP8 cache (stored as `uint8`) each value is
/// scaled on the way (`fp8::scaled_convert`: `x / scale`, 1 FLOP per element), else copied
/// (0). B: the rows, the slots and the scales read, the rows written at the cache's type. The
/// slot values are not recorded: every token is taken as written (a slot of −1, padding, is
/// skipped), said in [`OpCost::assumed`].
pub(super) fn cache_write(x: &OpInputs, w: CacheWrite) -> Result<OpCost, NoCost> {
    let Some((_, slots)) = x.tensor(w.slots) else {
        return Err(shapes_err("expected the slot mapping tensor"));
    };
    let tokens = numel(slots);
    let mut rows = Vec::new();
    for &i in w.rows {
        match x.tensor(i) {
            Some((dt, s)) if s.first().map(|&t| t as f64) == Some(tokens) => {
                rows.push((dt, numel(s)));
            }
            _ => {
                return Err(shapes_err(format!(
                    "expected rows of {tokens} tokens, one per slot"
                )));
            }
        }
    }
    let Some(&(dt, _)) = rows.first() else {
        return Err(shapes_err("expected the rows written"));
    };
    let cache_types: Vec<Dtype> = w
        .caches
        .iter()
        .filter_map(|&i| x.tensor(i).map(|(d, _)| d))
        .collect();
    if cache_types.len() != w.caches.len() {
        return Err(shapes_err("expected the cache tensors"));
    }
    let stored = cache_types[0];
    let elements: f64 = rows.iter().map(|r| r.1).sum();
    let read: f64 = rows.iter().map(|&(d, n)| n * d.bytes()).sum();
    // An FP8 cache (vLLM stores it as uint8) of 16- or 32-bit rows: each value scaled.
    let scaled = stored.bytes() == 1.0 && dt.bytes() > 1.0;
    let scales: f64 = w.scales.iter().map(|&i| x.arg(i).bytes()).sum();
    let mut c = on_cores(
        Family::Movement,
        if scaled { elements } else { 0.0 },
        read + elements * stored.bytes() + x.arg(w.slots).bytes() + scales,
        dt,
    );
    c.assumed
        .push("every token's rows written (the slot mapping's values are not recorded)".into());
    Ok(c)
}

/// Where a paged attention keeps its arguments.
#[derive(Debug, Clone, Copy)]
pub(super) struct Paged {
    /// The output.
    out: usize,
    /// The query `[num_seqs, heads, head size]`.
    query: usize,
    /// The key and value caches.
    caches: [usize; 2],
    /// `block_tables`, `seq_lens`.
    tables: [usize; 2],
    /// `max_seq_len`.
    max_len: usize,
    /// The intermediates of the two-pass version (`exp_sums`, `max_logits`, `tmp_out`):
    /// written by the first kernel, read by the second.
    partials: &'static [usize],
}

impl Paged {
    /// vLLM's `paged_attention_v1(Tensor! out, Tensor query, Tensor key_cache, Tensor
    /// value_cache, int num_kv_heads, float scale, Tensor block_tables, Tensor seq_lens, int
    /// block_size, int max_seq_len, …)`.
    pub(super) const V1: Paged = Paged {
        out: 0,
        query: 1,
        caches: [2, 3],
        tables: [6, 7],
        max_len: 9,
        partials: &[],
    };
    /// `paged_attention_v2(Tensor! out, Tensor! exp_sums, Tensor! max_logits, Tensor! tmp_out,
    /// Tensor query, Tensor key_cache, Tensor value_cache, int num_kv_heads, float scale,
    /// Tensor block_tables, Tensor seq_lens, int block_size, int max_seq_len, …)`.
    pub(super) const V2: Paged = Paged {
        out: 0,
        query: 4,
        caches: [5, 6],
        tables: [9, 10],
        max_len: 12,
        partials: &[1, 2, 3],
    };
}

/// vLLM's paged attention for decoding, one query token per sequence (`csrc/attention/`): F =
/// 2·H·D per key for QKᵀ and as many for PV, 4·H·D·Σ seq_len. The lengths are a tensor
/// (`seq_lens`) whose values torch.profiler does not record, only their maximum
/// (`max_seq_len`): F and B are known for one sequence, whose length is that maximum. B: the
/// query, its keys and values (Σ seq_len rows of the KV heads, at the cache's type), the block
/// table and lengths read, the output written; the two-pass version's partial results written
/// and read once.
pub(super) fn paged_attention(x: &OpInputs, p: Paged) -> Result<OpCost, NoCost> {
    let (Some((dt, q)), Some((dk, kc))) = (x.tensor(p.query), x.tensor(p.caches[0])) else {
        return Err(shapes_err("expected a query and the key cache"));
    };
    let &[seqs, h, d] = q else {
        return Err(shapes_err("expected a query [sequences, heads, head size]"));
    };
    let Some(hk) = kc.get(1).copied().filter(|&hk| hk > 0 && h % hk == 0) else {
        return Err(shapes_err(format!(
            "impossible arguments: a key cache {kc:?} for {h} query heads"
        )));
    };
    let Lens::Uniform(total) = Lens::of(seqs, None, x.int(p.max_len)) else {
        return Err(shapes_err(
            "seq_lens' values are not recorded, only their maximum: F and B known for one sequence",
        ));
    };
    let keys = (total * hk * d) as f64;
    let partials: f64 = p.partials.iter().map(|&i| x.arg(i).bytes()).sum();
    Ok(OpCost {
        complexity: Complexity::new(
            4.0 * (h * d) as f64 * total as f64,
            x.arg(p.query).bytes()
                + x.arg(p.out).bytes()
                + 2.0 * keys * dk.bytes()
                + x.arg(p.tables[0]).bytes()
                + x.arg(p.tables[1]).bytes()
                + 2.0 * partials,
        ),
        datapath: dt.matmul(),
        family: Family::Attention,
        assumed: Vec::new(),
    })
}

/// vLLM's `unified_attention` and `unified_attention_with_output(query, key, value, output,
/// layer_name, …)`: the attention of a whole batch, prefills and decodes together, over the
/// paged KV cache. Each sequence's context length is in vLLM's attention metadata (its forward
/// context), not in the call's arguments: F and B are unknown, never guessed.
pub(super) fn unified_attention(_: &OpInputs) -> Result<OpCost, NoCost> {
    Err(shapes_err(
        "the context lengths are not recorded (vLLM keeps them in its attention metadata): F and B unknown",
    ))
}

/// AMD aiter's `mha_batch_prefill(q, k, v, cu_seqlens_q, kv_indptr, kv_page_indices,
/// max_seqlen_q, max_seqlen_k, …)`: a batch of prefills over a paged KV cache. Each
/// sequence's query and key lengths are the values of its `cu_seqlens_q` and `kv_indptr`
/// tensors, which the trace does not record (their shapes give only the batch; the page
/// indices' length is an allocation, not the keys used): F and B are unknown, never guessed.
pub(super) fn aiter_batch_prefill(_: &OpInputs) -> Result<OpCost, NoCost> {
    Err(shapes_err(
        "the sequence lengths are not recorded (the values of cu_seqlens_q and kv_indptr): F and B unknown",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::op_cost;
    use crate::operators::testing::{F, H, inputs, t};
    use roofline_model::bundle::Datapath;

    /// SGLang's calls on AMD's aiter kernels as the MI300X Qwen3-8B trace records them
    /// (`tests/fixtures/traces/mi300x-sglang-qwen3-8b-prefilldecode.json.gz`, 15,360 tokens of a
    /// prefill, hidden 4,096, 32 query and 8 key heads of 128), counted by hand.
    #[test]
    fn sglang_and_aiter_operators_as_the_mi300x_trace_records_them() {
        let n = 15360.0 * 4096.0;
        // aiter::rmsnorm(out, input, weight, eps) [[15360, 4096], [15360, 4096], [4096], []]:
        // 4 per element; the input read, the output written, the weight read.
        let c = op_cost(
            "aiter::rmsnorm",
            &inputs(
                vec![
                    t(H, &[15360, 4096]),
                    t(H, &[15360, 4096]),
                    t(H, &[4096]),
                    Arg::Other,
                ],
                Some(&["", "", "", "9.9999999999999995e-07"]),
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 4.0 * n);
        assert_eq!(c.complexity.bytes, 2.0 * (2.0 * n + 4096.0));
        // aiter::add_rmsnorm(out, input, residual_in, residual_out, weight, eps): the sum (1)
        // and the norm (4) per element; input and residual read, out and residual_out written.
        let c = op_cost(
            "aiter::add_rmsnorm",
            &inputs(
                vec![
                    t(H, &[15360, 4096]),
                    t(H, &[15360, 4096]),
                    t(H, &[15360, 4096]),
                    t(H, &[15360, 4096]),
                    t(H, &[4096]),
                    Arg::Other,
                ],
                Some(&["", "", "", "", "", "9.9999999999999995e-07"]),
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 5.0 * n);
        assert_eq!(c.complexity.bytes, 2.0 * (4.0 * n + 4096.0));
        // A residual of another shape is refused, not counted.
        assert!(
            op_cost(
                "aiter::add_rmsnorm",
                &inputs(
                    vec![
                        t(H, &[15360, 4096]),
                        t(H, &[15360, 4096]),
                        t(H, &[15360, 4096]),
                        t(H, &[15360, 2048]),
                        t(H, &[4096]),
                        Arg::Other,
                    ],
                    None,
                ),
            )
            .is_err()
        );
        // sgl_kernel::rotary_embedding, vLLM's arguments: [[15360], [15360, 4096], [15360,
        // 1024], [], [41216, 128], []], head 128: 32 + 8 heads rotated whole, 3 per element;
        // positions (int64), the rotated parts read and written, 15,360 cache rows.
        let c = op_cost(
            "sgl_kernel::rotary_embedding",
            &inputs(
                vec![
                    t(Dtype::I64, &[15360]),
                    t(H, &[15360, 4096]),
                    t(H, &[15360, 1024]),
                    Arg::Other,
                    t(H, &[41216, 128]),
                    Arg::Other,
                ],
                Some(&["", "", "", "128", "", "True"]),
            ),
        )
        .unwrap();
        let rotated = 15360.0 * 40.0 * 128.0;
        assert_eq!(c.complexity.flops, 3.0 * rotated);
        assert_eq!(
            c.complexity.bytes,
            8.0 * 15360.0 + 2.0 * 2.0 * rotated + 2.0 * 15360.0 * 128.0
        );
        // sglang::store_cache(k, v, k_cache, v_cache, indices, 2048, 0): 15,360 key and value
        // rows of 1,024 bf16 copied (no FLOPs) into bf16 caches; the indices (int64) read.
        let c = op_cost(
            "sglang::store_cache",
            &inputs(
                vec![
                    t(H, &[15360, 1024]),
                    t(H, &[15360, 1024]),
                    t(H, &[835874, 1024]),
                    t(H, &[835874, 1024]),
                    t(Dtype::I64, &[15360]),
                    Arg::Other,
                    Arg::Other,
                ],
                Some(&["", "", "", "", "", "2048", "0"]),
            ),
        )
        .unwrap();
        let kv = 2.0 * 15360.0 * 1024.0;
        assert_eq!(c.complexity.flops, 0.0);
        assert_eq!(c.complexity.bytes, 2.0 * kv + kv * 2.0 + 8.0 * 15360.0);
    }

    /// The B200 vLLM trace's calls (`tests/fixtures/traces/b200-vllm-gpt-oss-tp8-eager.json.gz`),
    /// as recorded, counted by hand.
    #[test]
    fn vllm_norms_and_rope_as_the_b200_trace_records_them() {
        let eps = Some(&["", "", "", "1.0000000000000001e-05"][..]);
        // _C::fused_add_rms_norm [[888, 2880], [888, 2880], [2880], []] bf16: 5 FLOPs per
        // element; input and residual read and written, the weight read.
        let c = op_cost(
            "_C::fused_add_rms_norm",
            &inputs(
                vec![
                    t(H, &[888, 2880]),
                    t(H, &[888, 2880]),
                    t(H, &[2880]),
                    Arg::Other,
                ],
                eps,
            ),
        )
        .unwrap();
        let n = 888.0 * 2880.0;
        assert_eq!(c.complexity.flops, 5.0 * n);
        assert_eq!(c.complexity.bytes, 2.0 * (4.0 * n + 2880.0));
        assert_eq!((c.family, c.datapath), (Family::Norm, Datapath::Fp32));
        // _C::rms_norm(result, input, weight, eps): 4 per element, input read, result written.
        let c = op_cost(
            "_C::rms_norm",
            &inputs(
                vec![
                    t(H, &[888, 2880]),
                    t(H, &[888, 2880]),
                    t(H, &[2880]),
                    Arg::Other,
                ],
                eps,
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 4.0 * n);
        assert_eq!(c.complexity.bytes, 2.0 * (2.0 * n + 2880.0));
        // SGLang's gemma_rmsnorm: one more per element.
        let c = op_cost(
            "sgl_kernel::gemma_rmsnorm",
            &inputs(
                vec![
                    t(H, &[4, 8]),
                    t(H, &[4, 8]),
                    t(H, &[8]),
                    Arg::Other,
                    Arg::Other,
                ],
                None,
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 5.0 * 32.0);
        // _C::rotary_embedding [[888], [888, 512], [888, 64], [], [131072, 64], []], head 64,
        // NeoX: 8 query heads and 1 key head of 64, all rotated: 3·888·9·64 FLOPs; positions
        // (int64), the rotated parts read and written, 888 cache rows.
        let c = op_cost(
            "_C::rotary_embedding",
            &inputs(
                vec![
                    t(Dtype::I64, &[888]),
                    t(H, &[888, 512]),
                    t(H, &[888, 64]),
                    Arg::Other,
                    t(H, &[131072, 64]),
                    Arg::Other,
                ],
                Some(&["", "", "", "64", "", "True"]),
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 3.0 * 888.0 * 9.0 * 64.0);
        assert_eq!(
            c.complexity.bytes,
            8.0 * 888.0 + 2.0 * 2.0 * 888.0 * 576.0 + 2.0 * 888.0 * 64.0
        );
        // A partial rotary embedding (rot_dim 32 of heads of 64): half of each head.
        let c = op_cost(
            "_C::rotary_embedding",
            &inputs(
                vec![
                    t(Dtype::I64, &[4]),
                    t(H, &[4, 128]),
                    Arg::Other,
                    Arg::Other,
                    t(H, &[2, 32]),
                    Arg::Other,
                ],
                Some(&["", "", "", "64", "", "True"]),
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 3.0 * 4.0 * 2.0 * 32.0);
        assert_eq!(
            c.complexity.bytes,
            8.0 * 4.0 + 2.0 * 2.0 * 4.0 * 2.0 * 32.0 + 2.0 * 2.0 * 32.0
        );
        // No head size recorded: no cost.
        assert!(matches!(
            op_cost(
                "_C::rotary_embedding",
                &inputs(vec![t(Dtype::I64, &[4]), t(H, &[4, 128]), Arg::Other, Arg::Other, t(H, &[2, 32])], None)
            ),
            Err(NoCost::Shapes(w)) if w.contains("head_size")
        ));
    }

    #[test]
    fn quantization_and_cache_writes_as_the_b200_trace_records_them() {
        // _C::static_scaled_fp8_quant [[888, 512], [888, 512], []]: fp8 out, bf16 in, a float
        // scale: one multiplication per element; 888·512 read at 2 bytes, written at 1.
        let c = op_cost(
            "_C::static_scaled_fp8_quant",
            &inputs(
                vec![t(Dtype::F8, &[888, 512]), t(H, &[888, 512]), t(F, &[])],
                Some(&["", "", ""]),
            ),
        )
        .unwrap();
        let n = 888.0 * 512.0;
        assert_eq!(c.complexity.flops, n);
        assert_eq!(c.complexity.bytes, 3.0 * n + 4.0);
        // Dynamic per token: one division per scale [888, 1] more; the scales written.
        let c = op_cost(
            "_C::dynamic_per_token_scaled_fp8_quant",
            &inputs(
                vec![
                    t(Dtype::F8, &[888, 512]),
                    t(H, &[888, 512]),
                    t(F, &[888, 1]),
                    Arg::Other,
                ],
                None,
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, n + 888.0);
        assert_eq!(c.complexity.bytes, 3.0 * n + 4.0 * 888.0);
        // _C_cache_ops::reshape_and_cache_flash: 888 keys and values [888, 1, 64] bf16 into an
        // FP8 cache stored as uint8: scaled on the way (1 per element), written at 1 byte; the
        // slots (int64) and the two scales read. The caches' sizes do not count.
        let c = op_cost(
            "_C_cache_ops::reshape_and_cache_flash",
            &inputs(
                vec![
                    t(H, &[888, 1, 64]),
                    t(H, &[888, 1, 64]),
                    t(Dtype::U8, &[4213816, 16, 1, 64]),
                    t(Dtype::U8, &[4213816, 16, 1, 64]),
                    t(Dtype::I64, &[888]),
                    Arg::Other,
                    t(F, &[]),
                    t(F, &[]),
                ],
                Some(&["", "", "", "", "", "", "", ""]),
            ),
        )
        .unwrap();
        let kv = 2.0 * 888.0 * 64.0;
        assert_eq!(c.complexity.flops, kv);
        assert_eq!(c.complexity.bytes, 2.0 * kv + kv + 8.0 * 888.0 + 8.0);
        assert_eq!(c.family, Family::Movement);
        assert_eq!(c.assumed.len(), 1);
        // The same into a BF16 cache: a copy, no FLOPs.
        let c = op_cost(
            "_C_cache_ops::reshape_and_cache",
            &inputs(
                vec![
                    t(H, &[8, 2, 16]),
                    t(H, &[8, 2, 16]),
                    t(H, &[10, 2, 2, 16, 8]),
                    t(H, &[10, 2, 16, 16]),
                    t(Dtype::I64, &[8]),
                ],
                None,
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 0.0);
        assert_eq!(c.complexity.bytes, 4.0 * 2.0 * 8.0 * 32.0 + 64.0);
    }

    #[test]
    fn gated_activations_by_hand() {
        // silu_and_mul(out [4, 16], input [4, 32]): 3 per output element.
        let args = || vec![t(H, &[4, 16]), t(H, &[4, 32])];
        let c = op_cost("_C::silu_and_mul", &inputs(args(), None)).unwrap();
        assert_eq!(c.complexity.flops, 3.0 * 64.0);
        assert_eq!(c.complexity.bytes, 2.0 * (64.0 + 128.0));
        let c = op_cost("sgl_kernel::gelu_tanh_and_mul", &inputs(args(), None)).unwrap();
        assert_eq!(c.complexity.flops, 9.0 * 64.0);
        let c = op_cost("_C::gelu_and_mul", &inputs(args(), None)).unwrap();
        assert_eq!(c.complexity.flops, 5.0 * 64.0);
        let c = op_cost("_C::swigluoai_and_mul", &inputs(args(), None)).unwrap();
        assert_eq!(c.complexity.flops, 5.0 * 64.0);
        // An input that is not twice the output is refused.
        assert!(matches!(
            op_cost(
                "_C::silu_and_mul",
                &inputs(vec![t(H, &[4, 16]), t(H, &[4, 16])], None)
            ),
            Err(NoCost::Shapes(_))
        ));
    }

    #[test]
    fn paged_and_unified_attention() {
        // paged_attention_v1 for one sequence of max_seq_len 100: query [1, 8, 64], a cache of
        // 2 KV heads: 4·8·64·100 FLOPs; 100 keys and values of 2 heads read.
        let mut args = vec![
            t(H, &[1, 8, 64]),
            t(H, &[1, 8, 64]),
            t(H, &[50, 2, 8, 16, 8]),
            t(H, &[50, 2, 64, 16]),
            Arg::Other,
            Arg::Other,
            t(Dtype::I32, &[1, 7]),
            t(Dtype::I32, &[1]),
            Arg::Other,
            Arg::Other,
        ];
        let concrete = ["", "", "", "", "2", "0.125", "", "", "16", "100"];
        let c = op_cost(
            "_C::paged_attention_v1",
            &inputs(args.clone(), Some(&concrete)),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 4.0 * 8.0 * 64.0 * 100.0);
        assert_eq!(
            c.complexity.bytes,
            2.0 * 2.0 * 512.0 + 2.0 * 2.0 * 100.0 * 2.0 * 64.0 + 4.0 * 8.0
        );
        assert_eq!(c.datapath, Datapath::TensorBf16);
        // Three sequences: only their maximum is recorded.
        args[1] = t(H, &[3, 8, 64]);
        assert!(matches!(
            op_cost("_C::paged_attention_v1", &inputs(args, Some(&concrete))),
            Err(NoCost::Shapes(w)) if w.contains("seq_lens")
        ));
        // The B200 trace's unified attention: no lengths, no cost, and the note says why.
        let u = inputs(
            vec![
                t(Dtype::F8, &[888, 8, 64]),
                t(H, &[888, 1, 64]),
                t(H, &[888, 1, 64]),
                t(H, &[888, 8, 64]),
            ],
            Some(&["", "", "", "", "", "", ""]),
        );
        assert!(matches!(
            op_cost("vllm::unified_attention_with_output", &u),
            Err(NoCost::Shapes(w)) if w.contains("context lengths")
        ));
    }
}
