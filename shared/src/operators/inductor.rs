//! Kernels that Inductor (`torch.compile`) generates in Triton. PyTorch 2.5 and later record
//! each launch as a `cpu_op` named after the kernel (`triton_poi_fused_add_cos_sin_0`) whose
//! recorded inputs are the kernel's arguments: its buffers (`in_ptr0`, `out_ptr0`,
//! `in_out_ptr0`) as tensors, then its sizes (`xnumel`, `rnumel`) as scalars.
//!
//! Inductor names a kernel `triton_` + the first three letters of its category + `_` + the
//! fused operators + a counter (`torch/_inductor/codegen/triton.py`, with the categories of
//! `get_kernel_category_by_source_code` in `torch/_inductor/wrapper_benchmark.py`): `poi`
//! (pointwise), `red` (reduction), `per` (persistent reduction), `for` (foreach), `spl` (split
//! scan) and `tem` (a template: a GEMM or convolution).
//!
//! The first five move data: bytes only (F = 0), as [`super`]'s elementwise operators and
//! reductions are, with B the bytes of every buffer argument counted once. The trace does not
//! say which buffers are read and which written, nor how often, so this is the minimum: each
//! buffer is touched at least once, an `in_out_ptr` read and written counts once, and a buffer
//! read by several lanes (a bias broadcast along a row) is counted once. A template's FLOPs
//! depend on what it computes, which its arguments do not say: no rule.

use super::{Arg, NoCost, OpCost, OpInputs, bytes_only, shapes_err};

/// The family of the rule ([`super::OpCost::family`]).
pub const FAMILY: &str = "inductor";

/// Inductor's kernel categories that move data (see the module doc).
const DATA_MOVING: [&str; 5] = ["poi", "red", "per", "for", "spl"];

/// Whether `name` is an Inductor-generated Triton kernel of a category with a rule.
pub(super) fn is_data_moving(name: &str) -> bool {
    name.strip_prefix("triton_")
        .and_then(|rest| rest.split_once('_'))
        .is_some_and(|(category, fused)| DATA_MOVING.contains(&category) && !fused.is_empty())
}

/// B: the bytes of every tensor argument, once; F = 0.
pub(super) fn data_moving(x: &OpInputs) -> Result<OpCost, NoCost> {
    let mut tensors = x.args.iter().filter_map(|a| match a {
        Arg::Tensor(d, _) => Some((*d, a.bytes())),
        _ => None,
    });
    let Some((dt, first)) = tensors.next() else {
        return Err(shapes_err("no tensor argument recorded"));
    };
    let mut cost = bytes_only(first + tensors.map(|(_, b)| b).sum::<f64>(), dt);
    cost.family = FAMILY;
    Ok(cost)
}

#[cfg(test)]
mod tests {
    use super::super::{Dtype, op_cost};
    use super::*;

    fn inputs(args: Vec<Arg>) -> OpInputs {
        OpInputs {
            args,
            concrete: None,
            list_elem: None,
        }
    }

    #[test]
    fn names() {
        for n in [
            "triton_poi_fused_add_cos_sin_0",
            "triton_red_fused_native_layer_norm_3",
            "triton_per_fused__softmax_12",
            "triton_for_fused_1",
            "triton_spl_fused_cumsum_0",
        ] {
            assert!(is_data_moving(n), "{n}");
        }
        for n in [
            "triton_tem_fused_mm_0",
            "triton_",
            "triton_poi_",
            "my_triton_poi_x",
            "aten::add",
        ] {
            assert!(!is_data_moving(n), "{n}");
        }
    }

    /// The pointwise kernel of `torch.compile(lambda x, y: x.cos() + y.sin())` on 10×10 floats,
    /// as PyTorch 2.5 records it (HTA's public `triton_example` trace): in_ptr0, in_ptr1 and
    /// out_ptr0 of 100 floats, and xnumel = 100 (a scalar, not counted).
    #[test]
    fn pointwise_by_hand() {
        let t = || Arg::Tensor(Dtype::F32, vec![10, 10]);
        let x = inputs(vec![t(), t(), t(), Arg::Other]);
        let c = op_cost("triton_poi_fused_add_cos_sin_0", &x).unwrap();
        assert_eq!(c.complexity.flops, 0.0);
        assert_eq!(c.complexity.bytes, 3.0 * 100.0 * 4.0);
        assert_eq!(c.family, FAMILY);
        assert!(c.assumed.is_empty());
    }

    /// A layer norm's reduction over bf16 rows of 4096 with float statistics: in_out_ptr0 (the
    /// [8, 1] mean, read and written: once), in_ptr0 [8, 4096] bf16, out_ptr0 [8, 1] float,
    /// xnumel and rnumel.
    #[test]
    fn reduction_by_hand() {
        let x = inputs(vec![
            Arg::Tensor(Dtype::F32, vec![8, 1]),
            Arg::Tensor(Dtype::Bf16, vec![8, 4096]),
            Arg::Tensor(Dtype::F32, vec![8, 1]),
            Arg::Other,
            Arg::Other,
        ]);
        let c = op_cost("triton_red_fused_native_layer_norm_0", &x).unwrap();
        assert_eq!(
            c.complexity.bytes,
            8.0 * 4.0 + 8.0 * 4096.0 * 2.0 + 8.0 * 4.0
        );
        // The datapath is the first buffer's type.
        assert_eq!(c.datapath, Dtype::F32.cuda_core());
    }

    #[test]
    fn templates_and_empty_calls_have_no_cost() {
        let mm = inputs(vec![
            Arg::Tensor(Dtype::Bf16, vec![64, 32]),
            Arg::Tensor(Dtype::Bf16, vec![32, 16]),
            Arg::Tensor(Dtype::Bf16, vec![64, 16]),
        ]);
        assert_eq!(op_cost("triton_tem_fused_mm_0", &mm), Err(NoCost::NoRule));
        assert_eq!(
            op_cost("triton_poi_fused_0", &inputs(vec![Arg::Other])),
            Err(shapes_err("no tensor argument recorded"))
        );
    }
}
