//! Transformer Engine's operators as torch.profiler records them. Its GEMMs
//! (`cpp_extensions/gemm.py`'s `general_gemm` calls `tex.generic_gemm`), hence its fused layer
//! norm + MLP, and its fused attention (`cpp_extensions/fused_attn.py`: `tex.fused_attn_fwd`)
//! are calls into its pybind extension `transformer_engine_torch` (`csrc/extensions/pybind.cpp`,
//! `PYBIND11_MODULE`), not dispatcher operators: torch.profiler records no operator with shapes
//! for them (their kernels are linked to the enclosing call, or to none), so no rule can count
//! them from a trace. What TE registers with `torch.library.custom_op`, and so records with
//! shapes, is its fused softmax (`te_softmax::…`,
//! `transformer_engine/pytorch/attention/dot_product_attention/softmax.py`), counted here.

use super::attention::causal_pairs;
use super::{Complexity, Family, NoCost, OpCost, OpInputs, numel, shapes_err};

/// Which of TE's softmaxes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TeSoftmax {
    /// `scaled_softmax_fwd(Tensor inputs, float scale)`: every element.
    Scaled,
    /// `scaled_masked_softmax_fwd(Tensor inputs, Tensor mask, float scale)`: every element,
    /// the mask read.
    Masked,
    /// `scaled_upper_triang_masked_softmax_fwd(Tensor inputs, float scale)`, `[batches, sq,
    /// sk]`, causal aligned top-left: the kept elements.
    UpperTriang,
    /// `scaled_aligned_causal_masked_softmax_fwd(Tensor inputs, float scale)`, `[b, heads, sq,
    /// sk]`, causal aligned bottom-right: the kept elements.
    AlignedCausal,
}

/// TE's scaled softmax, forward `softmax(scale·x)` and backward (`…_bwd(Tensor output_grads,
/// Tensor softmax_results, float scale)`): per kept element, the scaling (1) and the
/// softmax's 3 forward ([`super::norm`]'s count), or the softmax backward's 4 and the scaling
/// (1) backward; a causal variant keeps the query–key pairs its mask keeps
/// ([`causal_pairs`]), the rest written as zeros. B: the kept inputs read (both tensors
/// backward), the mask read, the whole output written.
pub(super) fn softmax(x: &OpInputs, which: TeSoftmax, backward: bool) -> Result<OpCost, NoCost> {
    let Some((dt, s)) = x.tensor(0) else {
        return Err(shapes_err("expected an input tensor"));
    };
    let n = numel(s);
    let kept = match (which, s) {
        (TeSoftmax::Scaled | TeSoftmax::Masked, _) => n,
        (TeSoftmax::UpperTriang, &[b, sq, sk]) if sq == sk => b as f64 * causal_pairs(sq, sk, 0),
        (TeSoftmax::AlignedCausal, &[b, h, sq, sk]) => {
            (b * h) as f64 * causal_pairs(sq, sk, sk as i64 - sq as i64)
        }
        _ => {
            return Err(shapes_err(
                "expected [batches, sq, sq] for the upper-triangular softmax, [b, heads, sq, sk] for the aligned causal one",
            ));
        }
    };
    let per = if backward { 5.0 } else { 4.0 };
    let read = if backward { 2.0 } else { 1.0 } * kept * dt.bytes();
    let mask = if which == TeSoftmax::Masked && !backward {
        x.arg(1).bytes()
    } else {
        0.0
    };
    Ok(OpCost {
        complexity: Complexity::new(per * kept, read + n * dt.bytes() + mask),
        datapath: super::elementwise::opmath(dt),
        family: Family::Softmax,
        assumed: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use crate::operators::testing::{H, inputs, t};
    use crate::operators::{Arg, Dtype, op_cost};

    #[test]
    fn te_softmax_by_hand() {
        // [2, 4, 8, 8] scaled: 4 per element; read and written at 2 bytes.
        let c = op_cost(
            "te_softmax::scaled_softmax_fwd",
            &inputs(vec![t(H, &[2, 4, 8, 8]), Arg::Other], None),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 4.0 * 512.0);
        assert_eq!(c.complexity.bytes, 2.0 * 2.0 * 512.0);
        // Masked: the mask [2, 1, 8, 8] of bytes read.
        let c = op_cost(
            "te_softmax::scaled_masked_softmax_fwd",
            &inputs(
                vec![t(H, &[2, 4, 8, 8]), t(Dtype::U8, &[2, 1, 8, 8]), Arg::Other],
                None,
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.bytes, 2.0 * 2.0 * 512.0 + 128.0);
        // Upper-triangular [8 batches, 4, 4]: 10 of 16 pairs each.
        let c = op_cost(
            "te_softmax::scaled_upper_triang_masked_softmax_fwd",
            &inputs(vec![t(H, &[8, 4, 4]), Arg::Other], None),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 4.0 * 80.0);
        assert_eq!(c.complexity.bytes, 2.0 * (80.0 + 128.0));
        // Its backward: 5 per kept element, dy and y read.
        let c = op_cost(
            "te_softmax::scaled_upper_triang_masked_softmax_bwd",
            &inputs(vec![t(H, &[8, 4, 4]), t(H, &[8, 4, 4]), Arg::Other], None),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 5.0 * 80.0);
        assert_eq!(c.complexity.bytes, 2.0 * (2.0 * 80.0 + 128.0));
        // Aligned causal, 2 queries over 4 keys (bottom-right): 3 + 4 pairs per head.
        let c = op_cost(
            "te_softmax::scaled_aligned_causal_masked_softmax_fwd",
            &inputs(vec![t(H, &[1, 2, 2, 4]), Arg::Other], None),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 4.0 * 2.0 * 7.0);
    }
}
