//! Attention, forward and backward: PyTorch's scaled-dot-product attention in every kernel it
//! dispatches to (math, flash, memory-efficient, cuDNN, the overrideable backend), the
//! FlashAttention library (`flash_attn::`/`flashattn::` `_flash_attn_forward`,
//! `_flash_attn_varlen_forward` and their backward), xFormers' operators
//! (`xformers_flash::flash_fwd`/`flash_bwd`, `xformers::efficient_attention_forward_cutlass`)
//! and FlexAttention's Inductor templates. Causal and sliding-window masks are counted by the
//! query–key pairs they keep ([`band_pairs`]); variable-length batches (`cu_seqlens`) by their
//! sequences' lengths where the shapes and the recorded maxima fix them ([`Attn::varlen`]),
//! else not at all.

use super::{Arg, Complexity, Family, NoCost, OpCost, OpInputs, bytes_in, shapes_err};

/// Where an attention operator keeps its arguments.
#[derive(Debug, Clone, Copy)]
pub(super) struct Attn {
    /// Index of the query (the key and value follow it).
    q: usize,
    /// `[B, L, H, E]` instead of `[B, H, L, E]`.
    seq_major: bool,
    /// Index of the causal flag (`is_causal`) or mask type (`custom_mask_type`).
    causal: usize,
    /// The causal argument is an int mask type (0 none, 1 top-left, 2 bottom-right).
    mask_type: bool,
    /// A causal flag aligns the mask to the bottom-right corner (FlashAttention's kernels:
    /// query `i` of `L` sees keys up to `i + S − L`), not the top-left (PyTorch's `is_causal`).
    bottom_right: bool,
    /// The sliding window's left and right sizes (`window_size_left`, `window_size_right`:
    /// a negative or empty value is no bound).
    window: Option<(usize, usize)>,
    /// An argument that, recorded with a value, sets a window the rule does not count
    /// (`_efficient_attention_forward`'s `window_size`): then refused.
    window_unsupported: Option<usize>,
    /// Variable-length batches: `cu_seqlens_q`, `cu_seqlens_k`, `max_seqlen_q`,
    /// `max_seqlen_k`.
    varlen: Option<[usize; 4]>,
    /// Arguments that, recorded as tensors, give the keys' lengths by value (`seqused_k`,
    /// `leftpad_k`) or a paged cache (`block_table`): the index of the block table first.
    kv_by_value: Option<[usize; 3]>,
    /// The backward pass: the gradient of the output comes first.
    backward: bool,
}

impl Attn {
    pub(super) const SDPA: Attn = Attn {
        q: 0,
        seq_major: false,
        causal: 5,
        mask_type: false,
        bottom_right: false,
        window: None,
        window_unsupported: None,
        varlen: None,
        kv_by_value: None,
        backward: false,
    };
    pub(super) const SDPA_FLASH: Attn = Attn {
        causal: 4,
        ..Attn::SDPA
    };
    pub(super) const SDPA_EFFICIENT: Attn = Attn {
        causal: 6,
        ..Attn::SDPA
    };
    pub(super) const SDPA_CUDNN: Attn = Attn {
        causal: 6,
        ..Attn::SDPA
    };
    /// `_scaled_dot_product_fused_attention_overrideable(query, key, value, attn_bias,
    /// dropout_p, is_causal, …)`.
    pub(super) const SDPA_OVERRIDEABLE: Attn = Attn::SDPA;
    /// `_flash_attention_forward(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k,
    /// dropout_p, is_causal, return_debug_mask, *, scale, window_size_left, window_size_right,
    /// seqused_k, alibi_slopes, block_table, num_splits)`: FlashAttention's kernel, causal
    /// aligned bottom-right (the same as top-left for the square masks PyTorch's SDPA sends it).
    pub(super) const FLASH: Attn = Attn {
        q: 0,
        seq_major: true,
        causal: 8,
        mask_type: false,
        bottom_right: true,
        window: Some((11, 12)),
        window_unsupported: None,
        varlen: Some([3, 4, 5, 6]),
        kv_by_value: Some([15, 13, 13]),
        backward: false,
    };
    /// `_efficient_attention_forward(query, key, value, bias, cu_seqlens_q, cu_seqlens_k,
    /// max_seqlen_q, max_seqlen_k, dropout_p, custom_mask_type, compute_log_sumexp, *, scale,
    /// seqlen_k, window_size)`: variable-length batches as `[1, total, H, E]`.
    pub(super) const EFFICIENT: Attn = Attn {
        causal: 9,
        mask_type: true,
        bottom_right: false,
        window: None,
        window_unsupported: Some(13),
        varlen: Some([4, 5, 6, 7]),
        kv_by_value: Some([12, 12, 12]),
        ..Attn::FLASH
    };
    /// `_cudnn_attention_forward(query, key, value, attn_bias, cum_seq_q, cum_seq_k, max_q,
    /// max_k, compute_log_sumexp, dropout_p, is_causal, return_debug_mask, *, scale, seqused_k,
    /// block_table)`: `[B, H, L, E]`, causal top-left as SDPA's.
    pub(super) const CUDNN: Attn = Attn {
        causal: 10,
        varlen: Some([4, 5, 6, 7]),
        kv_by_value: Some([14, 13, 13]),
        ..Attn::SDPA
    };
    pub(super) const SDPA_FLASH_BACKWARD: Attn = Attn {
        q: 1,
        causal: 11,
        backward: true,
        ..Attn::SDPA
    };
    /// `_scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value, out,
    /// logsumexp, dropout_p, is_causal, *, attn_mask, scale)` (PyTorch 2.3 and later).
    pub(super) const SDPA_FLASH_CPU_BACKWARD: Attn = Attn {
        causal: 7,
        ..Attn::SDPA_FLASH_BACKWARD
    };
    pub(super) const SDPA_EFFICIENT_BACKWARD: Attn = Attn {
        causal: 11,
        ..Attn::SDPA_FLASH_BACKWARD
    };
    /// `_scaled_dot_product_cudnn_attention_backward` and `_cudnn_attention_backward`
    /// (`grad_out, query, key, value, out, logsumexp, philox_seed, philox_offset, attn_bias,
    /// cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, *, scale`): the sequence
    /// offsets are the forward's outputs, dense batches.
    pub(super) const CUDNN_BACKWARD: Attn = Attn {
        causal: 14,
        ..Attn::SDPA_FLASH_BACKWARD
    };
    /// `_scaled_dot_product_fused_attention_overrideable_backward(grad_out, query, key, value,
    /// attn_bias, grad_input_mask, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k,
    /// dropout_p, is_causal, …)`.
    pub(super) const SDPA_OVERRIDEABLE_BACKWARD: Attn = Attn {
        causal: 13,
        ..Attn::SDPA_FLASH_BACKWARD
    };
    /// `_flash_attention_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q,
    /// cum_seq_k, max_q, max_k, dropout_p, is_causal, rng_state, unused, *, scale,
    /// window_size_left, window_size_right)`.
    pub(super) const FLASH_BACKWARD: Attn = Attn {
        q: 1,
        causal: 11,
        window: Some((15, 16)),
        varlen: Some([6, 7, 8, 9]),
        kv_by_value: None,
        backward: true,
        ..Attn::FLASH
    };
    /// `_efficient_attention_backward(grad_out_, query, key, value, bias, out, cu_seqlens_q,
    /// cu_seqlens_k, max_seqlen_q, max_seqlen_k, logsumexp, dropout_p, philox_seed,
    /// philox_offset, custom_mask_type, bias_requires_grad, *, scale, num_splits_key,
    /// window_size, shared_storage_dqdkdv)`.
    pub(super) const EFFICIENT_BACKWARD: Attn = Attn {
        q: 1,
        causal: 14,
        window_unsupported: Some(18),
        varlen: Some([6, 7, 8, 9]),
        kv_by_value: None,
        backward: true,
        ..Attn::EFFICIENT
    };
    /// FlashAttention 2's `_flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal,
    /// window_size_left, window_size_right, softcap, alibi_slopes, return_softmax)`
    /// (`flash_attn/flash_attn_interface.py`, registered with `torch.library.custom_op` as
    /// `flash_attn::` or, in some releases, `flashattn::`): `[B, L, H, E]`, causal aligned
    /// bottom-right (its README).
    pub(super) const FA2: Attn = Attn {
        q: 0,
        seq_major: true,
        causal: 5,
        mask_type: false,
        bottom_right: true,
        window: Some((6, 7)),
        window_unsupported: None,
        varlen: None,
        kv_by_value: None,
        backward: false,
    };
    /// `_flash_attn_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
    /// max_seqlen_k, dropout_p, softmax_scale, causal, window_size_left, window_size_right,
    /// softcap, alibi_slopes, return_softmax, block_table, leftpad_k, seqused_k)`.
    pub(super) const FA2_VARLEN: Attn = Attn {
        causal: 9,
        window: Some((10, 11)),
        varlen: Some([3, 4, 5, 6]),
        kv_by_value: Some([15, 16, 17]),
        ..Attn::FA2
    };
    /// `_flash_attn_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, dropout_p,
    /// softmax_scale, causal, window_size_left, window_size_right, …)`.
    pub(super) const FA2_BACKWARD: Attn = Attn {
        q: 1,
        causal: 11,
        window: Some((12, 13)),
        backward: true,
        ..Attn::FA2
    };
    /// `_flash_attn_varlen_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, cu_seqlens_q,
    /// cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale, causal,
    /// window_size_left, window_size_right, …)`.
    pub(super) const FA2_VARLEN_BACKWARD: Attn = Attn {
        q: 1,
        causal: 15,
        window: Some((16, 17)),
        varlen: Some([9, 10, 11, 12]),
        backward: true,
        ..Attn::FA2
    };
    /// xFormers' `xformers_flash::flash_fwd(query, key, value, cu_seqlens_q, cu_seqlens_k,
    /// max_seqlen_q, max_seqlen_k, p, softmax_scale, is_causal, return_softmax)`
    /// (`xformers/ops/fmha/flash.py`, 11 arguments): `[B·S, H, E]` with the offsets.
    pub(super) const XFORMERS_FLASH_11: Attn = Attn {
        causal: 9,
        window: None,
        varlen: Some([3, 4, 5, 6]),
        ..Attn::FA2
    };
    /// Its later layout, `flash_fwd(query, key, value, cu_seqlens_q, cu_seqlens_k, seqused_k,
    /// max_seqlen_q, max_seqlen_k, p, softmax_scale, is_causal, window_left, window_right,
    /// return_softmax[, block_tables])` (14 or 15 arguments).
    pub(super) const XFORMERS_FLASH_14: Attn = Attn {
        causal: 10,
        window: Some((11, 12)),
        varlen: Some([3, 4, 6, 7]),
        kv_by_value: Some([14, 5, 5]),
        ..Attn::FA2
    };
    /// `flash_bwd(dout, query, key, value, out, softmax_lse_, dq, dk, dv, cu_seqlens_q,
    /// cu_seqlens_k, max_seqlen_q, max_seqlen_k, p, softmax_scale, is_causal)` (16 arguments).
    pub(super) const XFORMERS_FLASH_BACKWARD_16: Attn = Attn {
        q: 1,
        causal: 15,
        window: None,
        varlen: Some([9, 10, 11, 12]),
        backward: true,
        ..Attn::FA2
    };
}

/// Query–key pairs a causal mask keeps, for `l` queries and `s` keys: query `i` sees keys
/// `j ≤ i + offset` (offset 0 is PyTorch's `is_causal`, aligned top-left; `s − l` is aligned
/// bottom-right).
///
/// In closed form (query `i` sees `clamp(i + 1 + offset, 0, s)` keys: none, then one more per
/// query, then all), so that any recorded length costs the same.
pub fn causal_pairs(l: u64, s: u64, offset: i64) -> f64 {
    let (l, s, c) = (i128::from(l), i128::from(s), i128::from(offset) + 1);
    // Queries seeing no key: i + c ≤ 0; seeing all: i + c ≥ s; the others see i + c.
    let first = (-c + 1).clamp(0, l);
    let all_from = (s - c).clamp(first, l);
    let ramp = all_from - first;
    // Σ (i + c) for i in [first, all_from), as a float (it may pass i128's range).
    let ramp_sum = ramp as f64 * c as f64 + (first + all_from - 1) as f64 * ramp as f64 / 2.0;
    ramp_sum + (l - all_from) as f64 * s as f64
}

/// Query–key pairs a band mask keeps, for `l` queries and `s` keys: query `i` sees keys `j`
/// with `i + offset − left ≤ j ≤ i + offset + right`, `None` leaving that side unbounded.
/// A causal mask is `right = Some(0)`, FlashAttention's sliding window `(left, right)` with the
/// bottom-right offset `s − l` (`flash_attn_interface.py`: "query at position i will only
/// attend to keys between [i + seqlen_k − seqlen_q − window_size[0], i + seqlen_k − seqlen_q +
/// window_size[1]] inclusive"). Keys `j ≤ i + c` number [`causal_pairs`]`(l, s, c)`, so the
/// band is the difference of two of them.
pub fn band_pairs(l: u64, s: u64, offset: i64, left: Option<u64>, right: Option<u64>) -> f64 {
    let upto = |c: i64| causal_pairs(l, s, c);
    let hi = match right {
        None => (l as f64) * (s as f64),
        Some(r) => upto(offset.saturating_add(r.min(i64::MAX as u64) as i64)),
    };
    let lo = match left {
        None => 0.0,
        Some(w) => upto(
            offset
                .saturating_sub(w.min(i64::MAX as u64) as i64)
                .saturating_sub(1),
        ),
    };
    (hi - lo).max(0.0)
}

/// Which query–key pairs a call keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Mask {
    /// Aligned to the bottom-right corner (offset `s − l`), else top-left (offset 0).
    pub(super) bottom_right: bool,
    /// Keys before the diagonal a query sees (`None`: all).
    pub(super) left: Option<u64>,
    /// Keys after the diagonal a query sees (`None`: all; `Some(0)`: causal).
    pub(super) right: Option<u64>,
}

impl Mask {
    /// Every pair.
    pub(super) const FULL: Mask = Mask {
        bottom_right: false,
        left: None,
        right: None,
    };

    /// Causal, aligned as said.
    pub(super) fn causal(bottom_right: bool) -> Mask {
        Mask {
            bottom_right,
            left: None,
            right: Some(0),
        }
    }

    /// The pairs kept for `l` queries and `s` keys.
    pub(super) fn pairs(self, l: u64, s: u64) -> f64 {
        let offset = if self.bottom_right {
            s as i64 - l as i64
        } else {
            0
        };
        band_pairs(l, s, offset, self.left, self.right)
    }

    /// Whether every pair is kept.
    pub(super) fn is_full(self) -> bool {
        self.left.is_none() && self.right.is_none()
    }
}

/// The mask a call's recorded arguments give, or why they give none.
fn mask(x: &OpInputs, a: Attn) -> Result<Mask, NoCost> {
    let mut m = match (a.mask_type, x.concrete(a.causal)) {
        (false, Some(_)) => match x.flag(a.causal) {
            Some(true) => Mask::causal(a.bottom_right),
            Some(false) => Mask::FULL,
            None => {
                return Err(shapes_err(format!(
                    "impossible arguments: is_causal {}",
                    x.concrete(a.causal).unwrap_or_default()
                )));
            }
        },
        (true, Some(t)) => match t.parse::<i64>() {
            Ok(1) => Mask::causal(false),
            Ok(2) => Mask::causal(true),
            _ => Mask::FULL,
        },
        (_, None) => {
            return Err(shapes_err(
                "whether the mask is causal (is_causal) is not recorded",
            ));
        }
    };
    if let Some(i) = a.window_unsupported
        && x.concrete(i)
            .is_some_and(|w| w.parse::<i64>().is_ok_and(|w| w >= 0))
    {
        return Err(shapes_err(
            "a sliding window (window_size) whose alignment this operator's rule does not know",
        ));
    }
    if let Some((wl, wr)) = a.window {
        // Not recorded (no Concrete Inputs) is refused: a window changes F.
        if x.concrete.is_none() {
            return Err(shapes_err(
                "the sliding window (window_size) is not recorded",
            ));
        }
        let side = |i: usize| -> Result<Option<u64>, NoCost> {
            match x.concrete(i) {
                None => Ok(None),
                Some(v) => match v.parse::<i64>() {
                    Ok(w) if w < 0 => Ok(None),
                    Ok(w) => Ok(Some(w as u64)),
                    Err(_) => Err(shapes_err(format!("impossible arguments: window size {v}"))),
                },
            }
        };
        let (left, right) = (side(wl)?, side(wr)?);
        if left.is_some() || right.is_some() {
            m.bottom_right = a.bottom_right;
            m.left = left;
            // A causal call's right window is 0 (FlashAttention sets it so).
            m.right = match (m.right, right) {
                (Some(c), Some(r)) => Some(c.min(r)),
                (c, r) => c.or(r),
            };
        }
    }
    Ok(m)
}

/// The lengths of a variable-length batch's sequences on one side, as far as the record fixes
/// them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Lens {
    /// Every sequence this long (one sequence, or a total of `b × max`).
    Uniform(u64),
    /// Only their total.
    Total(u64),
    /// Not even that (a paged cache's keys, several sequences).
    Unknown,
}

impl Lens {
    /// `b` sequences of `total` elements whose longest is `max` (when recorded).
    pub(super) fn of(b: u64, total: Option<u64>, max: Option<u64>) -> Lens {
        match (total, max) {
            (Some(t), _) if b == 1 => Lens::Uniform(t),
            (Some(t), Some(m)) if b * m == t => Lens::Uniform(m),
            (Some(t), _) => Lens::Total(t),
            (None, Some(m)) if b == 1 => Lens::Uniform(m),
            _ => Lens::Unknown,
        }
    }

    /// The total over `b` sequences, when known.
    pub(super) fn total(self, b: u64) -> Option<u64> {
        match self {
            Lens::Uniform(l) => Some(l * b),
            Lens::Total(t) => Some(t),
            Lens::Unknown => None,
        }
    }
}

/// The pairs a variable-length batch of `b` sequences keeps, when the lengths fix them: both
/// sides uniform; or, with every pair kept, one side uniform (`Σ lq·lk = Lq·Σ lk`).
pub(super) fn varlen_pairs(b: u64, q: Lens, k: Lens, m: Mask) -> Option<f64> {
    match (q, k) {
        (Lens::Uniform(lq), Lens::Uniform(lk)) => Some(b as f64 * m.pairs(lq, lk)),
        (Lens::Uniform(lq), Lens::Total(tk)) if m.is_full() => Some(lq as f64 * tk as f64),
        (Lens::Total(tq), Lens::Uniform(lk)) if m.is_full() => Some(tq as f64 * lk as f64),
        _ => None,
    }
}

/// Why a variable-length batch has no pair count.
pub(super) const VARLEN_UNKNOWN: &str = "the sequences' lengths are not recorded (cu_seqlens' values): known for one sequence or equal lengths";

/// A query, key or value tensor's `[batch, length, heads, embedding]`, whatever its layout.
struct Qkv {
    b: u64,
    l: u64,
    h: u64,
    e: u64,
}

/// Scaled dot-product attention, F = 2·B·H·pairs·E (QKᵀ) + 2·B·H·pairs·Ev (PV) with pairs
/// = L·S, or those a causal or sliding-window mask keeps ([`band_pairs`]); the softmax is not
/// counted (exp is a special function). B = Q, K, V and the output, each at its element size
/// (the output at the query's). The backward pass recomputes QKᵀ and does four more products of
/// the same size (dV, dP, dQ, dK): 2.5 × the forward F; B adds dO, dQ, dK and dV.
///
/// Variable-length batches (`cu_seqlens_q` recorded as a tensor of `b + 1` offsets, the
/// tensors packed as `[total, H, E]`, or `[1, total, H, E]`): pairs = Σ per sequence, known
/// when each side's lengths are (one sequence; a total of `b × max_seqlen`), or, with every
/// pair kept, when one side's are. A paged key cache (a block table recorded) is read as far as
/// its one sequence's length (`max_seqlen_k`); keys whose lengths are tensors (`seqused_k`,
/// `leftpad_k`) are not known.
pub(super) fn attention(x: &OpInputs, a: Attn) -> Result<OpCost, NoCost> {
    let (Some((dt, q)), Some((dk, k)), Some((dv, v))) =
        (x.tensor(a.q), x.tensor(a.q + 1), x.tensor(a.q + 2))
    else {
        return Err(shapes_err("expected query, key and value tensors"));
    };
    let m = mask(x, a)?;
    let impossible = |what: String| Err(shapes_err(format!("impossible arguments: {what}")));
    let cu = a
        .varlen
        .and_then(|[cq, _, _, _]| x.arg(cq).shape().map(<[u64]>::to_vec));
    let paged = a
        .kv_by_value
        .is_some_and(|[bt, _, _]| matches!(x.arg(bt), Arg::Tensor(..)));
    if let Some([_, s1, s2]) = a.kv_by_value
        && (matches!(x.arg(s1), Arg::Tensor(..)) || matches!(x.arg(s2), Arg::Tensor(..)))
    {
        return Err(shapes_err(
            "the keys' lengths are a tensor's values (seqused_k, leftpad_k), which are not recorded",
        ));
    }
    // Each tensor as [batch, length, heads, embedding].
    let dims = |s: &[u64], packed: bool| -> Option<Qkv> {
        match (s, packed) {
            (&[t, h, e], true) => Some(Qkv { b: 1, l: t, h, e }),
            (&[1, t, h, e], true) => Some(Qkv { b: 1, l: t, h, e }),
            (&[b, d1, d2, e], false) if a.seq_major => Some(Qkv { b, l: d1, h: d2, e }),
            (&[b, d1, d2, e], false) => Some(Qkv { b, l: d2, h: d1, e }),
            _ => None,
        }
    };
    let packed = cu.is_some();
    let (Some(qd), Some(kd), Some(vd)) = (
        dims(q, packed),
        dims(k, packed && !paged),
        dims(v, packed && !paged),
    ) else {
        return Err(shapes_err(if packed {
            "expected a variable-length batch's query, key and value as [total, heads, embedding]"
        } else {
            "expected 4-d query, key and value"
        }));
    };
    // A paged cache's blocks are [blocks, block size, heads, embedding]: its heads.
    let (hk, hv) = if paged {
        match (k, v) {
            (&[_, _, hk, ek], &[_, _, hv, _]) if ek == qd.e => (hk, hv),
            _ => {
                return Err(shapes_err(
                    "expected a paged key and value cache [blocks, block size, heads, embedding]",
                ));
            }
        }
    } else {
        (kd.h, vd.h)
    };
    let (h, e, ev) = (qd.h, qd.e, vd.e);
    if hk != hv || hk == 0 || h % hk != 0 {
        return impossible(format!(
            "{h} query heads over {hk} key and {hv} value heads (key and value must have the same heads, and the query a multiple of them)"
        ));
    }
    if e != kd.e {
        return impossible(format!(
            "a query embedding of {e} against a key embedding of {}",
            kd.e
        ));
    }
    let (eq_b, eq_k, eq_v) = (dt.bytes(), dk.bytes(), dv.bytes());
    let (pairs, q_elems, k_read, v_read, out) = match (cu, a.varlen) {
        (Some(cu), Some([_, ck, mq, mk])) => {
            let [n] = cu[..] else {
                return impossible(format!("cu_seqlens_q of shape {cu:?}"));
            };
            let b = n.saturating_sub(1);
            if b == 0 {
                return impossible("cu_seqlens_q with no sequence".into());
            }
            if x.arg(ck).shape().is_some_and(|c| c != [n]) {
                return impossible(format!(
                    "cu_seqlens_k of shape {:?} for {b} sequences",
                    x.arg(ck).shape().unwrap_or_default()
                ));
            }
            let lq = Lens::of(b, Some(qd.l), x.int(mq));
            let lk = if paged {
                Lens::of(b, None, x.int(mk))
            } else {
                if kd.l != vd.l {
                    return impossible(format!(
                        "a key length of {} against a value length of {}",
                        kd.l, vd.l
                    ));
                }
                Lens::of(b, Some(kd.l), x.int(mk))
            };
            let Some(pairs) = varlen_pairs(b, lq, lk, m) else {
                return Err(shapes_err(VARLEN_UNKNOWN));
            };
            let Some(tk) = lk.total(b) else {
                return Err(shapes_err(VARLEN_UNKNOWN));
            };
            let tq = qd.l as f64;
            (
                pairs,
                tq * (h * e) as f64,
                tk as f64 * (hk * e) as f64,
                tk as f64 * (hv * ev) as f64,
                tq * (h * ev) as f64,
            )
        }
        _ => {
            if paged {
                return Err(shapes_err(
                    "a paged key cache (block_table) without sequence offsets",
                ));
            }
            if kd.l != vd.l {
                return impossible(format!(
                    "a key length of {} against a value length of {}",
                    kd.l, vd.l
                ));
            }
            let batches = [qd.b, kd.b, vd.b];
            let batch = batches.iter().copied().max().unwrap_or(qd.b);
            if batches.iter().any(|&x| x != batch && x != 1) {
                return impossible(format!(
                    "query, key and value batch sizes {batches:?} that do not broadcast"
                ));
            }
            (
                batch as f64 * m.pairs(qd.l, kd.l),
                (qd.b * qd.l * h * e) as f64,
                (kd.b * kd.l * hk * e) as f64,
                (vd.b * vd.l * hv * ev) as f64,
                (batch * qd.l * h * ev) as f64,
            )
        }
    };
    let forward = 2.0 * h as f64 * pairs * (e + ev) as f64;
    let qkv_bytes = q_elems * eq_b + k_read * eq_k + v_read * eq_v;
    let (flops, bytes) = if a.backward {
        (2.5 * forward, 2.0 * qkv_bytes + 2.0 * out * eq_b)
    } else {
        (forward, qkv_bytes + out * eq_b)
    };
    Ok(OpCost {
        complexity: Complexity::new(flops, bytes),
        datapath: dt.matmul(),
        family: Family::Attention,
        assumed: Vec::new(),
    })
}

/// xFormers' `xformers_flash::flash_fwd` and `flash_bwd` in the layouts its releases recorded
/// (told apart by their number of arguments), refusing one it does not know and a causal mask
/// over unequal lengths (whose alignment changed between releases).
pub(super) fn xformers_flash(x: &OpInputs, backward: bool) -> Result<OpCost, NoCost> {
    let a = match (backward, x.args.len()) {
        (false, 11) => Attn::XFORMERS_FLASH_11,
        (false, 14 | 15) => Attn::XFORMERS_FLASH_14,
        (true, 16) => Attn::XFORMERS_FLASH_BACKWARD_16,
        (_, n) => {
            return Err(shapes_err(format!(
                "an xFormers release whose layout of this operator's {n} arguments the rules do not know"
            )));
        }
    };
    if x.flag(a.causal) == Some(true)
        && let (Some(q), Some(k)) = (x.dims(a.q), x.dims(a.q + 1))
        && q.first() != k.first()
        && a.varlen.is_none_or(|[_, _, mq, mk]| x.int(mq) != x.int(mk))
    {
        return Err(shapes_err(
            "a causal mask over queries and keys of different lengths, whose alignment depends on the xFormers release",
        ));
    }
    attention(x, a)
}

/// `xformers::efficient_attention_forward_cutlass` in its layout of `aten`'s
/// `_efficient_attention_forward` (14 arguments, xFormers 0.0.2x): the same rule.
pub(super) fn xformers_cutlass(x: &OpInputs) -> Result<OpCost, NoCost> {
    if x.args.len() != 14 {
        return Err(shapes_err(format!(
            "an xFormers release whose layout of this operator's {} arguments the rules do not know",
            x.args.len()
        )));
    }
    attention(x, Attn::EFFICIENT)
}

/// FlexAttention's Inductor templates (`triton_tem_fused_flex_attention_…`, and
/// `…_flex_attention_backward_…`), whose kernels take `Q`, `K` and `V` (`[B, H, L, E]`) first
/// (`torch/_inductor/kernel/flex/templates/flex_attention.py.jinja`, `flex_backwards…`): F as
/// [`attention`]'s with every query–key pair, an upper bound, since the block mask's sparsity
/// (its `KV_NUM_BLKS`, `KV_IDX` values) and the score and mask modifications are not recorded;
/// said in [`OpCost::assumed`]. B: every buffer once, as Inductor's other kernels.
pub(super) fn flex_template(x: &OpInputs, backward: bool) -> Result<OpCost, NoCost> {
    let Some((dt, _)) = x.tensor(0) else {
        return Err(shapes_err("expected Q, K and V buffers first"));
    };
    // Q, K and V alone, every pair kept (mask type 0).
    let dense = OpInputs {
        args: x.args.iter().take(3).cloned().collect(),
        concrete: Some(vec![
            String::new(),
            String::new(),
            String::new(),
            "0".into(),
        ]),
        ..OpInputs::default()
    };
    let a = Attn {
        causal: 3,
        mask_type: true,
        backward,
        ..Attn::SDPA
    };
    let f = attention(&dense, a)?.complexity.flops;
    let mut cost = bytes_in(Family::Attention, x.args.iter().map(Arg::bytes).sum(), dt);
    cost.complexity.flops = f;
    cost.datapath = dt.matmul();
    cost.assumed.push(
        "F counted dense (every query–key pair), an upper bound: the block mask's sparsity is not recorded".into(),
    );
    Ok(cost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{F, H, inputs, t};
    use crate::operators::{Dtype, op_cost};
    use roofline_model::bundle::Datapath;

    #[test]
    fn attention_by_hand() {
        // B=2, H=3, L=S=4, E=8: 16 pairs; QKᵀ and PV each 2·6·16·8.
        let qkv = vec![
            t(H, &[2, 3, 4, 8]),
            t(H, &[2, 3, 4, 8]),
            t(H, &[2, 3, 4, 8]),
        ];
        let c = op_cost(
            "aten::scaled_dot_product_attention",
            &inputs(qkv.clone(), Some(&["", "", "", "", "0.", "False", ""])),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 16.0 * 16.0);
        assert_eq!(c.complexity.bytes, 2.0 * 4.0 * 192.0);
        assert_eq!(c.datapath, Datapath::TensorBf16);
        assert!(c.assumed.is_empty());
        // Causal: 1 + 2 + 3 + 4 = 10 pairs.
        assert_eq!(causal_pairs(4, 4, 0), 10.0);
        let c = op_cost(
            "aten::_scaled_dot_product_flash_attention",
            &inputs(qkv.clone(), Some(&["", "", "", "0.", "True", "False", ""])),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 10.0 * 16.0);
        // Not recorded: a causal mask halves F, so nothing is assumed and F stays unknown.
        match op_cost(
            "aten::scaled_dot_product_attention",
            &inputs(qkv.clone(), None),
        ) {
            Err(NoCost::Shapes(why)) => assert!(why.contains("is_causal"), "{why}"),
            other => panic!("{other:?}"),
        }
        // The CPU's flash attention and its backward (PyTorch 2.3 and later; GPT-2's call as
        // PyTorch 2.15 records it: dropout 0, causal, scale 0.125): forward the causal pairs,
        // backward 2.5 times that.
        let cpu = op_cost(
            "aten::_scaled_dot_product_flash_attention_for_cpu",
            &inputs(qkv.clone(), Some(&["", "", "", "0.", "True", "", "0.125"])),
        )
        .unwrap();
        assert_eq!(cpu.complexity.flops, 2.0 * 6.0 * 10.0 * 16.0);
        let mut back = vec![t(H, &[2, 3, 4, 8])];
        back.extend(qkv);
        back.extend([t(H, &[2, 3, 4, 8]), t(F, &[2, 3, 4])]);
        let c = op_cost(
            "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
            &inputs(
                back,
                Some(&["", "", "", "", "", "", "0.", "True", "", "0.125"]),
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.5 * cpu.complexity.flops);
        // Flash forward is [B, L, H, E]; bottom-right mask type with L=2, S=4: 3 + 4 pairs.
        assert_eq!(causal_pairs(2, 4, 2), 7.0);
        let blhe = vec![
            t(H, &[2, 2, 3, 8]),
            t(H, &[2, 4, 3, 8]),
            t(H, &[2, 4, 3, 8]),
        ];
        let mut c9 = vec![""; 10];
        c9[9] = "2";
        let c = op_cost(
            "aten::_efficient_attention_forward",
            &inputs(blhe, Some(&c9)),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 7.0 * 16.0);
    }

    /// Issue 29: impossible attention arguments got an F. Query, key and value must agree on
    /// batch (or broadcast it), key and value on heads and length, query and key on their
    /// embedding; the query's heads must be a multiple of the key's (grouped-query attention).
    #[test]
    fn impossible_attention_arguments_are_refused() {
        let causal = Some(&["", "", "", "", "0.", "False", ""][..]);
        let cost = |q: &[u64], k: &[u64], v: &[u64]| {
            op_cost(
                "aten::scaled_dot_product_attention",
                &inputs(vec![t(H, q), t(H, k), t(H, v)], causal),
            )
        };
        for (q, k, v, why) in [
            (&[2, 3, 4, 8], &[2, 5, 4, 8], &[2, 5, 4, 8], "heads"),
            (&[2, 3, 4, 8], &[2, 3, 4, 8], &[2, 2, 4, 8], "heads"),
            (&[2, 3, 4, 8], &[2, 3, 4, 16], &[2, 3, 4, 8], "embedding"),
            (&[2, 3, 4, 8], &[2, 3, 4, 8], &[2, 3, 6, 8], "length"),
            (&[2, 3, 4, 8], &[3, 3, 4, 8], &[3, 3, 4, 8], "batch"),
        ] {
            match cost(q, k, v) {
                Err(NoCost::Shapes(w)) => {
                    assert!(
                        w.starts_with("impossible arguments") && w.contains(why),
                        "{w}"
                    );
                }
                other => panic!("{q:?} {k:?} {v:?}: {other:?}"),
            }
        }
        // Grouped-query attention (6 query heads over 2 key and value heads) and a broadcast
        // batch are possible: F counts every query head.
        let c = cost(&[2, 6, 4, 8], &[2, 2, 4, 8], &[2, 2, 4, 8]).unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 12.0 * 16.0 * 16.0);
        let c = cost(&[2, 3, 4, 8], &[1, 3, 4, 8], &[1, 3, 4, 8]).unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 16.0 * 16.0);
    }

    /// Issue 29: the causal count summed query by query, so a recorded length of 2^40 took
    /// hours. It is a closed form, the same as the sum.
    #[test]
    fn causal_pairs_in_closed_form() {
        let by_sum = |l: u64, s: u64, off: i64| -> f64 {
            (0..l as i64)
                .map(|i| (i + 1 + off).clamp(0, s as i64) as f64)
                .sum()
        };
        for l in [0, 1, 2, 5, 17] {
            for s in [0, 1, 3, 5, 20] {
                for off in [-30, -5, -1, 0, 1, 3, 40] {
                    assert_eq!(causal_pairs(l, s, off), by_sum(l, s, off), "{l} {s} {off}");
                }
            }
        }
        let start = std::time::Instant::now();
        let big = causal_pairs(1 << 40, 1 << 40, 0);
        assert!(start.elapsed().as_secs() < 1);
        assert_eq!(big, (1u128 << 40) as f64 * ((1u128 << 40) + 1) as f64 / 2.0);
    }

    #[test]
    fn band_pairs_count_the_band() {
        let by_sum = |l: u64, s: u64, off: i64, left: Option<u64>, right: Option<u64>| -> f64 {
            let mut n = 0.0;
            for i in 0..l as i64 {
                for j in 0..s as i64 {
                    let lo = left.is_none_or(|w| j >= i + off - w as i64);
                    let hi = right.is_none_or(|r| j <= i + off + r as i64);
                    if lo && hi {
                        n += 1.0;
                    }
                }
            }
            n
        };
        for l in [0, 1, 3, 7] {
            for s in [0, 1, 4, 9] {
                for off in [-3, 0, 2, s as i64 - l as i64] {
                    for left in [None, Some(0), Some(2), Some(20)] {
                        for right in [None, Some(0), Some(1), Some(30)] {
                            assert_eq!(
                                band_pairs(l, s, off, left, right),
                                by_sum(l, s, off, left, right),
                                "{l} {s} {off} {left:?} {right:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// FlashAttention 2's operators as `flash_attn_interface.py` registers them: causal aligned
    /// bottom-right, sliding windows, variable-length batches.
    #[test]
    fn flash_attn_library_by_hand() {
        let o = || Arg::Other;
        // [B=2, L=2, H=3, E=8] queries over S=4 keys, causal: bottom-right, 3 + 4 pairs.
        let args = vec![
            t(H, &[2, 2, 3, 8]),
            t(H, &[2, 4, 3, 8]),
            t(H, &[2, 4, 3, 8]),
            o(),
            o(),
            o(),
            o(),
            o(),
        ];
        let c = op_cost(
            "flash_attn::_flash_attn_forward",
            &inputs(
                args.clone(),
                Some(&["", "", "", "0.0", "0.125", "True", "-1", "-1"]),
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 7.0 * 16.0);
        assert_eq!(c.complexity.bytes, 2.0 * (96.0 + 192.0 + 192.0 + 96.0));
        // A sliding window of 1 to the left (and causal): query i sees keys i+2−1 and i+2, 2
        // each.
        let c = op_cost(
            "flashattn::_flash_attn_forward",
            &inputs(
                args.clone(),
                Some(&["", "", "", "0.0", "0.125", "True", "1", "-1"]),
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 4.0 * 16.0);
        // Not causal, window (1, 1) around the bottom-right diagonal: query 0 sees keys 1..3,
        // query 1 keys 2..3 (4 is past the end): 3 + 2.
        let c = op_cost(
            "flash_attn::_flash_attn_forward",
            &inputs(args, Some(&["", "", "", "0.0", "0.125", "False", "1", "1"])),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 5.0 * 16.0);
        // Varlen: 3 sequences of 4 tokens packed [12, 3, 8] (cu_seqlens [4], max 4), causal:
        // 3 × 10 pairs; B the packed tensors.
        let varlen = |q_total: u64, max: &str, causal: &str| {
            let mut c = [""; 12];
            c[5] = max;
            c[6] = max;
            c[9] = causal;
            let concrete: Vec<String> = c.iter().map(|s| s.to_string()).collect();
            let x = inputs(
                vec![
                    t(H, &[q_total, 3, 8]),
                    t(H, &[q_total, 3, 8]),
                    t(H, &[q_total, 3, 8]),
                    t(Dtype::I32, &[4]),
                    t(Dtype::I32, &[4]),
                ],
                None,
            );
            op_cost(
                "flash_attn::_flash_attn_varlen_forward",
                &OpInputs {
                    concrete: Some(concrete),
                    ..x
                },
            )
        };
        let c = varlen(12, "4", "True").unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 3.0 * 30.0 * 16.0);
        assert_eq!(c.complexity.bytes, 2.0 * 4.0 * 12.0 * 24.0);
        // 10 tokens in 3 sequences of at most 5: the lengths are not known, neither is F…
        match varlen(10, "5", "True") {
            Err(NoCost::Shapes(w)) => assert!(w.contains("cu_seqlens"), "{w}"),
            other => panic!("{other:?}"),
        }
        // … unless every pair is kept and one side's lengths are (not here: both vary).
        assert!(varlen(10, "5", "False").is_err());
        // The backward: 2.5 times, dO and the gradients counted.
        let mut c = vec![""; 18];
        c[11] = "4";
        c[12] = "4";
        c[15] = "True";
        let mut args = vec![t(H, &[12, 3, 8]); 5];
        args.extend([t(Dtype::F32, &[3, 12]), o(), o(), o()]);
        args.extend([t(Dtype::I32, &[4]), t(Dtype::I32, &[4])]);
        let b = op_cost(
            "flash_attn::_flash_attn_varlen_backward",
            &OpInputs {
                concrete: Some(c.iter().map(|s| s.to_string()).collect()),
                ..inputs(args, None)
            },
        )
        .unwrap();
        assert_eq!(b.complexity.flops, 2.5 * 2.0 * 3.0 * 30.0 * 16.0);
    }

    #[test]
    fn pytorchs_varlen_cudnn_and_xformers_attention() {
        let o = || Arg::Other;
        // `_efficient_attention_forward` on a packed batch [1, 12, 3, 8] of 3 sequences of 4
        // (cu_seqlens [4], max 4), not causal: 3 × 16 pairs, not 12 × 12.
        let mut c = vec![""; 14];
        c[6] = "4";
        c[7] = "4";
        c[9] = "0";
        let x = inputs(
            vec![
                t(H, &[1, 12, 3, 8]),
                t(H, &[1, 12, 3, 8]),
                t(H, &[1, 12, 3, 8]),
                o(),
                t(Dtype::I32, &[4]),
                t(Dtype::I32, &[4]),
            ],
            Some(&c),
        );
        let e = op_cost("aten::_efficient_attention_forward", &x).unwrap();
        assert_eq!(e.complexity.flops, 2.0 * 3.0 * 48.0 * 16.0);
        // A sliding window there (window_size) is refused, its alignment unknown.
        let mut w = c.clone();
        w[13] = "128";
        assert!(
            op_cost(
                "aten::_efficient_attention_forward",
                &OpInputs {
                    concrete: Some(w.iter().map(|s| s.to_string()).collect()),
                    ..x
                }
            )
            .is_err()
        );
        // `_cudnn_attention_forward`, [B, H, L, E], causal top-left (is_causal at 10).
        let qkv = || {
            vec![
                t(H, &[2, 3, 4, 8]),
                t(H, &[2, 3, 4, 8]),
                t(H, &[2, 3, 4, 8]),
            ]
        };
        let mut c = vec![""; 12];
        c[10] = "True";
        let f = op_cost("aten::_cudnn_attention_forward", &inputs(qkv(), Some(&c))).unwrap();
        assert_eq!(f.complexity.flops, 2.0 * 6.0 * 10.0 * 16.0);
        // Its backward (and SDPA's cuDNN backward): is_causal at 14, 2.5 times.
        let mut args = vec![t(H, &[2, 3, 4, 8])];
        args.extend(qkv());
        let mut c = vec![""; 16];
        c[14] = "True";
        for name in [
            "aten::_cudnn_attention_backward",
            "aten::_scaled_dot_product_cudnn_attention_backward",
        ] {
            let b = op_cost(name, &inputs(args.clone(), Some(&c))).unwrap();
            assert_eq!(b.complexity.flops, 2.5 * f.complexity.flops, "{name}");
        }
        // xFormers' flash_fwd, 11 arguments: [B·S, H, E] with offsets (2 sequences of 4).
        let xf = |n: usize, causal: usize| {
            let mut c = vec![""; n];
            c[if n == 11 { 5 } else { 6 }] = "4";
            c[if n == 11 { 6 } else { 7 }] = "4";
            c[causal] = "True";
            let mut args = vec![
                t(H, &[8, 3, 8]),
                t(H, &[8, 3, 8]),
                t(H, &[8, 3, 8]),
                t(Dtype::I32, &[3]),
                t(Dtype::I32, &[3]),
            ];
            args.resize(n, o());
            op_cost(
                "xformers_flash::flash_fwd",
                &OpInputs {
                    concrete: Some(c.iter().map(|s| s.to_string()).collect()),
                    ..inputs(args, None)
                },
            )
        };
        assert_eq!(xf(11, 9).unwrap().complexity.flops, 2.0 * 3.0 * 20.0 * 16.0);
        assert_eq!(
            xf(14, 10).unwrap().complexity.flops,
            2.0 * 3.0 * 20.0 * 16.0
        );
        assert!(matches!(xf(12, 9), Err(NoCost::Shapes(w)) if w.contains("xFormers release")));
    }

    #[test]
    fn flex_attention_template_is_an_upper_bound() {
        // Inductor's flex attention kernel: Q, K, V [1, 2, 8, 16], then LSE, the block mask's
        // tensors and the output: F dense, 2·2·64·32; B every buffer once.
        let x = inputs(
            vec![
                t(H, &[1, 2, 8, 16]),
                t(H, &[1, 2, 8, 16]),
                t(H, &[1, 2, 8, 16]),
                t(Dtype::F32, &[1, 2, 8]),
                t(Dtype::I32, &[1, 1, 1]),
                t(Dtype::I32, &[1, 1, 1, 1]),
                t(H, &[1, 2, 8, 16]),
            ],
            None,
        );
        let c = op_cost("triton_tem_fused_flex_attention_0", &x).unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 2.0 * 64.0 * 32.0);
        assert_eq!(
            c.complexity.bytes,
            2.0 * 4.0 * 256.0 + 4.0 * 16.0 + 4.0 + 4.0
        );
        assert_eq!(c.family, Family::Attention);
        assert!(c.assumed[0].contains("upper bound"), "{:?}", c.assumed);
        let b = op_cost("triton_tem_fused_flex_attention_backward_1", &x).unwrap();
        assert_eq!(b.complexity.flops, 2.5 * c.complexity.flops);
    }
}
