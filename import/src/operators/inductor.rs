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
//! The first five are bytes only (F = 0), as [`super`]'s reductions are: the operations they
//! fuse are not recorded (so, unlike an elementwise operator's, their arithmetic cannot be
//! counted), with B the bytes of every buffer argument counted once. The trace does not
//! say which buffers are read and which written, nor how often, so this is the minimum: each
//! buffer is touched at least once, an `in_out_ptr` read and written counts once, and a buffer
//! read by several lanes (a bias broadcast along a row) is counted once.
//!
//! A template's FLOPs depend on what it computes. The matrix-product templates, named after
//! `mm`, `addmm`, `bmm` or `baddbmm` (`triton_tem_fused_addmm_relu_0`: the product and its fused
//! epilogue), get F = 2·M·N·K (times the batch), as [`super`]'s GEMM rules, with M, N and K
//! read from their buffers: an `[M, K]` and a `[K, N]` operand and an `[M, N]` output (with a
//! leading batch for the batched ones), required to give one F whichever buffers play which
//! part; the epilogue's elementwise work is not counted. B: every buffer once, as above. Other
//! templates (convolutions, attention) have no rule.

use super::matmul::matmul_assumed;
use super::{Arg, Family, NoCost, OpCost, OpInputs, bytes_in, shapes_err, tensors};

/// The family of these rules ([`super::OpCost::family`]).
pub const FAMILY: Family = Family::Inductor;

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
    let Some(&(dt, _)) = tensors(x).first() else {
        return Err(shapes_err("no tensor argument recorded"));
    };
    Ok(bytes_in(FAMILY, x.args.iter().map(Arg::bytes).sum(), dt))
}

/// Whether `name` is FlexAttention's template (`triton_tem_fused_flex_attention_0`):
/// `Some(true)` its backward (`…_flex_attention_backward_…`), `Some(false)` its forward
/// ([`super::attention::flex_template`]).
pub(super) fn template_flex(name: &str) -> Option<bool> {
    let fused = name.strip_prefix("triton_tem_fused_")?;
    fused
        .contains("flex_attention")
        .then(|| fused.contains("flex_attention_backward"))
}

/// Whether `name` is a matrix-product template: `Some(true)` batched, `Some(false)` not.
pub(super) fn template_gemm(name: &str) -> Option<bool> {
    let fused = name.strip_prefix("triton_tem_fused_")?;
    let ops: Vec<&str> = fused.split('_').collect();
    if ops.iter().any(|o| matches!(*o, "bmm" | "baddbmm")) {
        Some(true)
    } else if ops.iter().any(|o| matches!(*o, "mm" | "addmm")) {
        Some(false)
    } else {
        None
    }
}

/// A matrix-product template: F from its buffers' shapes, B every buffer once.
pub(super) fn gemm(x: &OpInputs, batched: bool) -> Result<OpCost, NoCost> {
    let rank = if batched { 3 } else { 2 };
    let mut mats = tensors(x);
    mats.retain(|(_, s)| s.len() == rank);
    // Every assignment of operands and output that fits: (F, the first operand's type).
    let mut fits = Vec::new();
    for (i, &(dt, a)) in mats.iter().enumerate() {
        for (j, &(_, b)) in mats.iter().enumerate() {
            for (o, &(_, c)) in mats.iter().enumerate() {
                if i == j || j == o || i == o {
                    continue;
                }
                let lead = &a[..rank - 2];
                let (m, k) = (a[rank - 2], a[rank - 1]);
                let (k2, n) = (b[rank - 2], b[rank - 1]);
                let (m2, n2) = (c[rank - 2], c[rank - 1]);
                if k == k2 && m == m2 && n == n2 && lead == &b[..rank - 2] && lead == &c[..rank - 2]
                {
                    let batch: f64 = lead.iter().map(|&d| d as f64).product();
                    fits.push((batch * 2.0 * (m * n * k) as f64, dt));
                }
            }
        }
    }
    let Some(&(flops, dt)) = fits.first() else {
        return Err(shapes_err(if batched {
            "no buffers [b, M, K], [b, K, N] and [b, M, N] recorded"
        } else {
            "no buffers [M, K], [K, N] and [M, N] recorded"
        }));
    };
    if fits.iter().any(|&(f, _)| f != flops) {
        return Err(shapes_err(
            "the buffers' shapes fit several matrix products",
        ));
    }
    let mut cost = data_moving(x)?;
    cost.complexity.flops = flops;
    cost.datapath = dt.matmul();
    cost.assumed = matmul_assumed(dt);
    Ok(cost)
}

/// An Inductor kernel's cost when its `cpu_op` carries Inductor's own estimates
/// ([`crate::trace::model::InductorEstimate`]): `flops` (when above 0, as PyTorch's own
/// `profile_analysis` reads it) replaces the rule's F and `bytes` (when above 0) its B. A kernel
/// without a rule takes its F from `flops` (0 without one, for a kernel other than a template)
/// and its B from `bytes`, else from its buffers; its datapath is its first buffer's type (a
/// matrix unit's for a template). A template without `flops` and without a rule has no cost.
///
/// # Errors
/// [`NoCost`] when neither the rule nor the estimates give F and B.
pub fn with_estimate(
    name: &str,
    x: Option<&OpInputs>,
    flops: Option<f64>,
    bytes: Option<f64>,
) -> Result<OpCost, NoCost> {
    let (flops, bytes) = (flops.filter(|f| *f > 0.0), bytes.filter(|b| *b > 0.0));
    let rule = match x {
        Some(x) => super::op_cost(name, x),
        None => Err(shapes_err("no shapes recorded")),
    };
    let mut cost = match (rule, x) {
        (Ok(c), _) => c,
        // No rule: the buffers (the first one's type, and their bytes unless Inductor's own
        // are given), and for a template Inductor's FLOPs on the matrix unit.
        (Err(e), Some(x)) => {
            let template = name.starts_with("triton_tem_");
            let mut c = match data_moving(x) {
                Ok(c) if !(template && flops.is_none()) => c,
                _ => return Err(e),
            };
            if template {
                let dt = tensors(x)[0].0;
                c.datapath = dt.matmul();
                c.assumed = matmul_assumed(dt);
            }
            c
        }
        (Err(e), None) => return Err(e),
    };
    if let Some(f) = flops {
        cost.complexity.flops = f;
    }
    if let Some(b) = bytes {
        cost.complexity.bytes = b;
    }
    Ok(cost)
}

#[cfg(test)]
mod tests {
    use super::super::{Dtype, op_cost};
    use super::*;
    use crate::operators::Derived;

    fn inputs(args: Vec<Arg>) -> OpInputs {
        OpInputs {
            args,
            concrete: None,
            list_elem: None,
            derived: Derived::default(),
            untyped: Vec::new(),
            no_types: false,
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

    /// `triton_tem_fused_addmm_relu_0(in_ptr0, arg_A, arg_B, out_ptr1)`: a bias [16], A
    /// [64, 32] and B [32, 16] in bf16, the output [64, 16]: F = 2·64·16·32 on Tensor BF16.
    #[test]
    fn gemm_templates_by_hand() {
        let t = |s: &[u64]| Arg::Tensor(Dtype::Bf16, s.to_vec());
        let x = inputs(vec![
            t(&[16]),
            t(&[64, 32]),
            t(&[32, 16]),
            t(&[64, 16]),
            Arg::Other,
        ]);
        let c = op_cost("triton_tem_fused_addmm_relu_0", &x).unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 64.0 * 16.0 * 32.0);
        assert_eq!(
            c.complexity.bytes,
            2.0 * (16.0 + 64.0 * 32.0 + 32.0 * 16.0 + 64.0 * 16.0)
        );
        assert_eq!(c.datapath, Dtype::Bf16.matmul());
        assert_eq!(c.family, FAMILY);
        // Square matrices fit every assignment, all with one F.
        let x = inputs(vec![t(&[8, 8]), t(&[8, 8]), t(&[8, 8])]);
        assert_eq!(
            op_cost("triton_tem_fused_mm_1", &x)
                .unwrap()
                .complexity
                .flops,
            1024.0
        );
        // A batched product: [4, 64, 32] by [4, 32, 16].
        let x = inputs(vec![t(&[4, 64, 32]), t(&[4, 32, 16]), t(&[4, 64, 16])]);
        let c = op_cost("triton_tem_fused_bmm_2", &x).unwrap();
        assert_eq!(c.complexity.flops, 4.0 * 2.0 * 64.0 * 16.0 * 32.0);
        // Float: the TF32 caveat, as for aten::mm.
        let f = |s: &[u64]| Arg::Tensor(Dtype::F32, s.to_vec());
        let x = inputs(vec![f(&[64, 32]), f(&[32, 16]), f(&[64, 16])]);
        assert_eq!(
            op_cost("triton_tem_fused_mm_3", &x).unwrap().assumed.len(),
            1
        );
        // Shapes that fit no product, or two different ones.
        let x = inputs(vec![t(&[64, 32]), t(&[16, 8]), t(&[64, 16])]);
        assert!(matches!(
            op_cost("triton_tem_fused_mm_4", &x),
            Err(NoCost::Shapes(_))
        ));
        let x = inputs(vec![t(&[2, 3]), t(&[3, 2]), t(&[2, 2]), t(&[3, 3])]);
        assert_eq!(
            op_cost("triton_tem_fused_mm_5", &x),
            Err(shapes_err(
                "the buffers' shapes fit several matrix products"
            ))
        );
    }

    /// Inductor's own estimates replace what the buffers give; a template needs `flops`.
    #[test]
    fn estimates_by_hand() {
        let b = |s: &[u64]| Arg::Tensor(Dtype::Bf16, s.to_vec());
        let conv = inputs(vec![
            b(&[1, 3, 56, 56]),
            b(&[12, 3, 5, 5]),
            b(&[1, 12, 52, 52]),
        ]);
        let name = "triton_tem_fused_convolution_0";
        let c = with_estimate(name, Some(&conv), Some(1e6), Some(4e4)).unwrap();
        assert_eq!((c.complexity.flops, c.complexity.bytes), (1e6, 4e4));
        assert_eq!((c.datapath, c.family), (Dtype::Bf16.matmul(), FAMILY));
        // Without bytes, the buffers; without flops (or 0, Inductor's "could not count"), no cost.
        let buffers = 2.0 * (3.0 * 3136.0 + 12.0 * 75.0 + 12.0 * 2704.0);
        let c = with_estimate(name, Some(&conv), Some(1e6), None).unwrap();
        assert_eq!(c.complexity.bytes, buffers);
        assert_eq!(
            with_estimate(name, Some(&conv), Some(0.0), Some(4e4)),
            Err(NoCost::NoRule)
        );
        // A pointwise kernel keeps F = 0 and takes Inductor's B (in-place buffers twice).
        let f = |s: &[u64]| Arg::Tensor(Dtype::F32, s.to_vec());
        let x = inputs(vec![f(&[10, 10]), f(&[10, 10]), Arg::Other]);
        let c = with_estimate("triton_poi_fused_add_0", Some(&x), None, Some(1200.0)).unwrap();
        assert_eq!((c.complexity.flops, c.complexity.bytes), (0.0, 1200.0));
        // A matrix-product template's F from its rule is replaced by Inductor's.
        let x = inputs(vec![b(&[64, 32]), b(&[32, 16]), b(&[64, 16])]);
        let c = with_estimate("triton_tem_fused_mm_0", Some(&x), Some(70000.0), None).unwrap();
        assert_eq!(c.complexity.flops, 70000.0);
        // No shapes recorded: no datapath to put F on.
        assert!(with_estimate(name, None, Some(1e6), Some(4e4)).is_err());
    }

    #[test]
    fn templates_and_empty_calls_have_no_cost() {
        let mm = inputs(vec![
            Arg::Tensor(Dtype::Bf16, vec![1, 3, 8, 8]),
            Arg::Tensor(Dtype::Bf16, vec![4, 3, 3, 3]),
            Arg::Tensor(Dtype::Bf16, vec![1, 4, 6, 6]),
        ]);
        assert_eq!(
            op_cost("triton_tem_fused_convolution_0", &mm),
            Err(NoCost::NoRule)
        );
        assert_eq!(op_cost("triton_tem_0", &mm), Err(NoCost::NoRule));
        assert_eq!(
            op_cost("triton_poi_fused_0", &inputs(vec![Arg::Other])),
            Err(shapes_err("no tensor argument recorded"))
        );
    }
}
