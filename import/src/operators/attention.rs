//! Scaled-dot-product attention, forward and backward, in every kernel PyTorch dispatches it to
//! (math, flash, memory-efficient, cuDNN), causal masks counted pair by pair.

use super::{Complexity, Family, NoCost, OpCost, OpInputs, numel, shapes_err};

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
    /// The backward pass: the gradient of the output comes first.
    backward: bool,
}

impl Attn {
    pub(super) const SDPA: Attn = Attn {
        q: 0,
        seq_major: false,
        causal: 5,
        mask_type: false,
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
    pub(super) const FLASH: Attn = Attn {
        q: 0,
        seq_major: true,
        causal: 8,
        mask_type: false,
        backward: false,
    };
    pub(super) const EFFICIENT: Attn = Attn {
        causal: 9,
        mask_type: true,
        ..Attn::FLASH
    };
    pub(super) const SDPA_FLASH_BACKWARD: Attn = Attn {
        q: 1,
        seq_major: false,
        causal: 11,
        mask_type: false,
        backward: true,
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
    pub(super) const FLASH_BACKWARD: Attn = Attn {
        q: 1,
        seq_major: true,
        causal: 11,
        mask_type: false,
        backward: true,
    };
    pub(super) const EFFICIENT_BACKWARD: Attn = Attn {
        causal: 14,
        mask_type: true,
        ..Attn::FLASH_BACKWARD
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

/// Scaled dot-product attention, F = 2·B·H·pairs·E (QKᵀ) + 2·B·H·pairs·Ev (PV) with pairs = L·S,
/// or the causal count; the softmax is not counted (exp is a special function). B = Q, K, V and
/// the output. The backward pass recomputes QKᵀ and does four more products of the same size
/// (dV, dP, dQ, dK): 2.5 × the forward F; B adds dO, dQ, dK and dV.
pub(super) fn attention(x: &OpInputs, a: Attn) -> Result<OpCost, NoCost> {
    let (Some((dt, q)), Some((_, k)), Some((_, v))) =
        (x.tensor(a.q), x.tensor(a.q + 1), x.tensor(a.q + 2))
    else {
        return Err(shapes_err("expected query, key and value tensors"));
    };
    let (&[b, d1, d2, e], &[_, k1, k2, _], &[_, _, _, ev]) = (q, k, v) else {
        return Err(shapes_err("expected 4-d query, key and value"));
    };
    let ((h, l), (hk, s), (hv, sv)) = if a.seq_major {
        ((d2, d1), (k2, k1), (v[2], v[1]))
    } else {
        ((d1, d2), (k1, k2), (v[1], v[2]))
    };
    let (bk, bv) = (k[0], v[0]);
    let impossible = |what: String| Err(shapes_err(format!("impossible arguments: {what}")));
    if hk != hv || hk == 0 || h % hk != 0 {
        return impossible(format!(
            "{h} query heads over {hk} key and {hv} value heads (key and value must have the same heads, and the query a multiple of them)"
        ));
    }
    if e != k[3] {
        return impossible(format!(
            "a query embedding of {e} against a key embedding of {}",
            k[3]
        ));
    }
    if s != sv {
        return impossible(format!(
            "a key length of {s} against a value length of {sv}"
        ));
    }
    let batches = [b, bk, bv];
    let batch = batches.iter().copied().max().unwrap_or(b);
    if batches.iter().any(|&x| x != batch && x != 1) {
        return impossible(format!(
            "query, key and value batch sizes {batches:?} that do not broadcast"
        ));
    }
    let b = batch;
    let assumed = Vec::new();
    let pairs = match (a.mask_type, x.concrete(a.causal)) {
        (false, Some(_)) if x.flag(a.causal) == Some(true) => causal_pairs(l, s, 0),
        (false, Some(_)) => (l * s) as f64,
        (true, Some(t)) => match t.parse::<i64>() {
            Ok(1) => causal_pairs(l, s, 0),
            Ok(2) => causal_pairs(l, s, s as i64 - l as i64),
            _ => (l * s) as f64,
        },
        (_, None) => {
            return Err(shapes_err(
                "whether the mask is causal (is_causal) is not recorded",
            ));
        }
    };
    let forward = 2.0 * (b * h) as f64 * pairs * (e + ev) as f64;
    let out = (b * h * l * ev) as f64;
    let (qkv, elt) = (numel(q) + numel(k) + numel(v), dt.bytes());
    let (flops, bytes) = if a.backward {
        (2.5 * forward, elt * (2.0 * qkv + 2.0 * out))
    } else {
        (forward, elt * (qkv + out))
    };
    Ok(OpCost {
        complexity: Complexity::new(flops, bytes),
        datapath: dt.matmul(),
        family: Family::Attention,
        assumed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::op_cost;
    use crate::operators::testing::{F, H, inputs, t};
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
}
