//! Low-precision and grouped matrix products: PyTorch's FP8 GEMM `_scaled_mm`, the grouped
//! GEMMs of mixture-of-experts layers (`_grouped_mm`, `_scaled_grouped_mm`), the INT8 GEMM
//! `_int_mm`, and the serving engines' own (vLLM's `_C::cutlass_scaled_mm`, SGLang's
//! `sgl_kernel::fp8_scaled_mm`, `int8_scaled_mm`, `fp8_blockwise_scaled_mm`). F = 2·M·N·K
//! on the Tensor Core datapath of the first operand's type (FP8 on `Datapath::TensorFp8`, INT8
//! on `Datapath::TensorInt8`); B counts each operand at its own element size, the scales, bias
//! and offsets as recorded, and the output at its type.

use roofline_model::bundle::Datapath;

use super::{Arg, Complexity, Dtype, Family, NoCost, OpCost, OpInputs, numel, shapes_err};

/// A product's F and B from its operands `[M, K]` and `[K, N]`, `extra` (the scales, bias and
/// offsets' bytes) and the output's element type.
fn product(m: u64, n: u64, k: u64, a: Dtype, b: Dtype, out: Dtype, extra: f64) -> OpCost {
    let (m, n, k) = (m as f64, n as f64, k as f64);
    OpCost {
        complexity: Complexity::new(
            2.0 * m * n * k,
            m * k * a.bytes() + k * n * b.bytes() + m * n * out.bytes() + extra,
        ),
        datapath: a.matmul(),
        family: Family::Gemm,
        assumed: Vec::new(),
    }
}

/// The recorded `out_dtype` at `i` (a `ScalarType` code): `default` when recorded as none,
/// refused when `Concrete Inputs` were not recorded (the output's size is then unknown).
fn out_dtype(x: &OpInputs, i: usize, default: Dtype) -> Result<Dtype, NoCost> {
    if x.concrete.is_none() {
        return Err(shapes_err(
            "the output's type (out_dtype) is not recorded (PyTorch records it from 2.1, in Concrete Inputs)",
        ));
    }
    match x.concrete(i) {
        None => Ok(default),
        Some(code) => Dtype::from_scalar_type(code).ok_or_else(|| {
            shapes_err(format!(
                "an output type (out_dtype {code}) the rules do not know"
            ))
        }),
    }
}

/// The bytes of the tensor arguments at `idx` (scales, bias, offsets; an absent one counts 0).
fn bytes_at(x: &OpInputs, idx: &[usize]) -> f64 {
    idx.iter().map(|&i| x.arg(i).bytes()).sum()
}

/// `_scaled_mm(self[M, K], mat2[K, N], scale_a, scale_b, bias?, scale_result?, out_dtype?,
/// use_fast_accum)` (`native_functions.yaml`; its output type `out_dtype`, by default the
/// input's, `Blas.cpp`): F = 2·M·N·K, as PyTorch's own FLOP counter counts it
/// (`torch/utils/flop_counter.py`, `_scaled_mm_flop`), on the FP8 Tensor Cores for FP8 inputs.
/// Tensor-wise scales are `[]` or `[1]`, row-wise `[M, 1]` and `[1, N]`, block-wise larger: B
/// reads whichever were recorded, at their type.
pub(super) fn scaled_mm(x: &OpInputs) -> Result<OpCost, NoCost> {
    match (x.tensor(0), x.tensor(1)) {
        (Some((a, &[m, k])), Some((b, &[k2, n]))) if k == k2 => {
            let out = out_dtype(x, 6, a)?;
            Ok(product(m, n, k, a, b, out, bytes_at(x, &[2, 3, 4, 5])))
        }
        _ => Err(shapes_err("expected matrices [M,K] and [K,N]")),
    }
}

/// `_int_mm(self[M, K], mat2[K, N])`: INT8 × INT8 into INT32 (`native_functions.yaml`,
/// `Blas.cpp`'s `_int_mm_out_cuda`), F = 2·M·N·K on `Datapath::TensorInt8`.
pub(super) fn int_mm(x: &OpInputs) -> Result<OpCost, NoCost> {
    match (x.tensor(0), x.tensor(1)) {
        (Some((a, &[m, k])), Some((b, &[k2, n]))) if k == k2 => {
            let mut c = product(m, n, k, a, b, Dtype::I32, 0.0);
            if a.is_integral() {
                c.datapath = Datapath::TensorInt8;
            }
            Ok(c)
        }
        _ => Err(shapes_err("expected matrices [M,K] and [K,N]")),
    }
}

/// The serving engines' scaled GEMMs whose output is a recorded argument: vLLM's
/// `cutlass_scaled_mm(Tensor! out, Tensor a, Tensor b, Tensor a_scales, Tensor b_scales,
/// Tensor? bias)` (`csrc/torch_bindings.cpp`; `b` is `[K, N]`, column-major).
pub(super) fn scaled_mm_into(x: &OpInputs) -> Result<OpCost, NoCost> {
    match (x.tensor(0), x.tensor(1), x.tensor(2)) {
        (Some((out, &[m2, n2])), Some((a, &[m, k])), Some((b, &[k2, n])))
            if k == k2 && m == m2 && n == n2 =>
        {
            Ok(product(m, n, k, a, b, out, bytes_at(x, &[3, 4, 5])))
        }
        _ => Err(shapes_err(
            "expected an output [M,N] and matrices [M,K] and [K,N]",
        )),
    }
}

/// SGLang's `fp8_scaled_mm(Tensor mat_a, Tensor mat_b, Tensor scales_a, Tensor scales_b,
/// ScalarType out_dtype, Tensor? bias) -> Tensor`, `int8_scaled_mm` (same arguments) and
/// `fp8_blockwise_scaled_mm(mat_a, mat_b, scales_a, scales_b, out_dtype)`
/// (`sgl-kernel/csrc/common_extension.cc`).
pub(super) fn sgl_scaled_mm(x: &OpInputs) -> Result<OpCost, NoCost> {
    match (x.tensor(0), x.tensor(1)) {
        (Some((a, &[m, k])), Some((b, &[k2, n]))) if k == k2 => {
            let Some(out) = x.concrete(4).and_then(Dtype::from_scalar_type) else {
                return Err(shapes_err("the output's type (out_dtype) is not recorded"));
            };
            let mut c = product(m, n, k, a, b, out, bytes_at(x, &[2, 3, 5]));
            if a.is_integral() {
                c.datapath = Datapath::TensorInt8;
            }
            Ok(c)
        }
        _ => Err(shapes_err("expected matrices [M,K] and [K,N]")),
    }
}

/// Where a grouped product keeps its arguments.
#[derive(Debug, Clone, Copy)]
pub(super) struct Grouped {
    /// The scales, when scaled.
    scales: Option<[usize; 2]>,
    /// `offs`.
    offs: usize,
    /// `bias`.
    bias: usize,
    /// `out_dtype`.
    out: usize,
    /// The output's type when `out_dtype` is none: BF16 for the scaled product
    /// (`_scaled_grouped_mm_cuda`), the input's for the other.
    default_bf16: bool,
}

impl Grouped {
    /// `_grouped_mm(self, mat2, offs?, bias?, out_dtype?)`.
    pub(super) const PLAIN: Grouped = Grouped {
        scales: None,
        offs: 2,
        bias: 3,
        out: 4,
        default_bf16: false,
    };
    /// `_scaled_grouped_mm(self, mat2, scale_a, scale_b, offs?, bias?, scale_result?,
    /// out_dtype?, use_fast_accum)`.
    pub(super) const SCALED: Grouped = Grouped {
        scales: Some([2, 3]),
        offs: 4,
        bias: 5,
        out: 7,
        default_bf16: true,
    };
}

/// `_grouped_mm` and `_scaled_grouped_mm` (`native_functions.yaml`; the layouts and output
/// shapes of `_create_grouped_mm_output_tensor` in `torch/_meta_registrations.py`): G groups,
/// `offs` the groups' ends along the dimension the 2-d operand splits:
/// - `[M, K] × [G, K, N]` (groups of rows, a MoE layer's experts): F = 2·M·K·N;
/// - `[G, M, K] × [K, N]` (groups of columns): F = 2·M·K·N;
/// - `[M, K] × [K, N]` with `offs` (groups along K, a weight gradient; output `[G, M, N]`):
///   F = 2·M·N·K;
/// - `[G, M, K] × [G, K, N]` (no `offs`): F = 2·G·M·N·K.
///
/// The offsets' values are not recorded: F counts every row (column, K) in a group, as when
/// the last offset is the dimension's size (said in [`OpCost::assumed`]). B: both operands, the
/// scales, offsets and bias, and the output at its type.
pub(super) fn grouped_mm(x: &OpInputs, g: Grouped) -> Result<OpCost, NoCost> {
    let (Some((a, sa)), Some((b, sb))) = (x.tensor(0), x.tensor(1)) else {
        return Err(shapes_err("expected two operands"));
    };
    let offs = x.arg(g.offs).shape().map(<[u64]>::to_vec);
    let groups_of = |o: &Option<Vec<u64>>| match o.as_deref() {
        Some(&[n]) => Some(n),
        _ => None,
    };
    let (m, n, k, out_elems, batch) = match (sa, sb, groups_of(&offs)) {
        (&[m, k], &[gb, k2, n], Some(gs)) if k == k2 && gs == gb => (m, n, k, m * n, 1),
        (&[ga, m, k], &[k2, n], Some(gs)) if k == k2 && gs == ga => (m, n, k, m * n, 1),
        (&[m, k], &[k2, n], Some(gs)) if k == k2 => (m, n, k, gs * m * n, 1),
        (&[ga, m, k], &[gb, k2, n], None) if k == k2 && ga == gb => (m, n, k, ga * m * n, ga),
        _ => {
            return Err(shapes_err(
                "expected [M,K]×[G,K,N], [G,M,K]×[K,N] or [M,K]×[K,N] with G offsets, or [G,M,K]×[G,K,N]",
            ));
        }
    };
    let default = if g.default_bf16 { Dtype::Bf16 } else { a };
    let out = out_dtype(x, g.out, default)?;
    let mut extra = x.arg(g.offs).bytes() + x.arg(g.bias).bytes();
    if let Some(s) = g.scales {
        extra += bytes_at(x, &s);
    }
    let f = 2.0 * batch as f64 * (m * n * k) as f64;
    let mut assumed = Vec::new();
    if offs.is_some() {
        assumed.push(
            "every row, column or K of the split operand in a group (the offsets' values are not recorded; the last is the dimension's size when nothing is left out)".into(),
        );
    }
    Ok(OpCost {
        complexity: Complexity::new(
            f,
            numel(sa) * a.bytes() + numel(sb) * b.bytes() + out_elems as f64 * out.bytes() + extra,
        ),
        datapath: a.matmul(),
        family: Family::Gemm,
        assumed,
    })
}

/// `_scaled_mm_v2` and `_scaled_grouped_mm_v2` take their scales as tensor lists, which
/// torch.profiler records without their element type: their B is unknown.
pub(super) fn scale_lists(x: &OpInputs) -> Result<OpCost, NoCost> {
    let lists = x.args.iter().any(|a| matches!(a, Arg::Tensors(_)));
    Err(shapes_err(if lists {
        "the scales are tensor lists, which torch.profiler records without their element type: B unknown"
    } else {
        "expected the scales as tensor lists"
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::op_cost;
    use crate::operators::testing::{H, inputs, t};

    const E4M3: Dtype = Dtype::F8;

    #[test]
    fn fp8_gemms_by_hand() {
        // A Llama projection in FP8: [888, 2880] × [2880, 640], tensor-wise FP32 scales,
        // a BF16 output (out_dtype 15): 2·888·640·2880 FLOPs on the FP8 Tensor Cores;
        // B = 888·2880 + 2880·640 bytes of FP8, two 4-byte scales, 888·640·2 of output.
        let args = || {
            vec![
                t(E4M3, &[888, 2880]),
                t(E4M3, &[2880, 640]),
                t(Dtype::F32, &[]),
                t(Dtype::F32, &[]),
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
            ]
        };
        let c = op_cost(
            "aten::_scaled_mm",
            &inputs(args(), Some(&["", "", "", "", "", "", "15", "False"])),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 888.0 * 640.0 * 2880.0);
        assert_eq!(
            c.complexity.bytes,
            888.0 * 2880.0 + 2880.0 * 640.0 + 8.0 + 888.0 * 640.0 * 2.0
        );
        assert_eq!(c.datapath, Datapath::TensorFp8);
        assert_eq!(c.family, Family::Gemm);
        // Row-wise scales [M, 1] and [1, N], no out_dtype: the output in FP8, 1 byte.
        let mut rowwise = args();
        rowwise[2] = t(Dtype::F32, &[888, 1]);
        rowwise[3] = t(Dtype::F32, &[1, 640]);
        let c = op_cost(
            "aten::_scaled_mm",
            &inputs(rowwise, Some(&["", "", "", "", "", "", "", "False"])),
        )
        .unwrap();
        assert_eq!(
            c.complexity.bytes,
            888.0 * 2880.0 + 2880.0 * 640.0 + 4.0 * (888.0 + 640.0) + 888.0 * 640.0
        );
        // Without Concrete Inputs the output's type, and so B, is unknown.
        assert!(matches!(
            op_cost("aten::_scaled_mm", &inputs(args(), None)),
            Err(NoCost::Shapes(w)) if w.contains("out_dtype")
        ));
        // INT8: [32, 64] × [64, 16] into INT32 on the INT8 Tensor Cores.
        let c = op_cost(
            "aten::_int_mm",
            &inputs(vec![t(Dtype::I8, &[32, 64]), t(Dtype::I8, &[64, 16])], None),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 32.0 * 16.0 * 64.0);
        assert_eq!(
            c.complexity.bytes,
            32.0 * 64.0 + 64.0 * 16.0 + 4.0 * 32.0 * 16.0
        );
        assert_eq!(c.datapath, Datapath::TensorInt8);
        // vLLM's cutlass_scaled_mm(out, a, b, a_scales, b_scales, bias): per-token [M, 1] and
        // per-channel [1, N] scales, a BF16 bias [N].
        let c = op_cost(
            "_C::cutlass_scaled_mm",
            &inputs(
                vec![
                    t(H, &[16, 64]),
                    t(E4M3, &[16, 128]),
                    t(E4M3, &[128, 64]),
                    t(Dtype::F32, &[16, 1]),
                    t(Dtype::F32, &[1, 64]),
                    t(H, &[64]),
                ],
                None,
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 16.0 * 64.0 * 128.0);
        assert_eq!(
            c.complexity.bytes,
            16.0 * 128.0 + 128.0 * 64.0 + 2.0 * 16.0 * 64.0 + 4.0 * 80.0 + 2.0 * 64.0
        );
        assert_eq!(c.datapath, Datapath::TensorFp8);
    }

    #[test]
    fn grouped_gemms_by_hand() {
        // A MoE layer's first GEMM: 96 routed rows [96, 32] over 4 experts' [4, 32, 48]
        // (offsets [4] int32): each row through one expert, 2·96·32·48; output [96, 48] BF16.
        let args = vec![
            t(H, &[96, 32]),
            t(H, &[4, 32, 48]),
            t(Dtype::I32, &[4]),
            Arg::Other,
            Arg::Other,
        ];
        let c = op_cost(
            "aten::_grouped_mm",
            &inputs(args, Some(&["", "", "", "", ""])),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 96.0 * 32.0 * 48.0);
        assert_eq!(
            c.complexity.bytes,
            2.0 * (96.0 * 32.0 + 4.0 * 32.0 * 48.0 + 96.0 * 48.0) + 16.0
        );
        assert_eq!(c.datapath, Datapath::TensorBf16);
        assert_eq!(c.assumed.len(), 1, "{:?}", c.assumed);
        // The weight gradient's layout: [M, K] × [K, N] split along K into 4: output [4, M, N].
        let c = op_cost(
            "aten::_grouped_mm",
            &inputs(
                vec![t(H, &[32, 96]), t(H, &[96, 48]), t(Dtype::I32, &[4])],
                Some(&["", "", ""]),
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 32.0 * 48.0 * 96.0);
        assert_eq!(
            c.complexity.bytes,
            2.0 * (32.0 * 96.0 + 96.0 * 48.0 + 4.0 * 32.0 * 48.0) + 16.0
        );
        // 3-d × 3-d, no offsets: a batched product.
        let c = op_cost(
            "aten::_grouped_mm",
            &inputs(vec![t(H, &[4, 8, 32]), t(H, &[4, 32, 16])], Some(&["", ""])),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 4.0 * 2.0 * 8.0 * 16.0 * 32.0);
        assert!(c.assumed.is_empty());
        // FP8 with row-wise scales, the output BF16 by default.
        let c = op_cost(
            "aten::_scaled_grouped_mm",
            &inputs(
                vec![
                    t(E4M3, &[96, 32]),
                    t(E4M3, &[4, 32, 48]),
                    t(Dtype::F32, &[96]),
                    t(Dtype::F32, &[4, 48]),
                    t(Dtype::I32, &[4]),
                ],
                Some(&["", "", "", "", "", "", "", "", "False"]),
            ),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 96.0 * 32.0 * 48.0);
        assert_eq!(
            c.complexity.bytes,
            96.0 * 32.0 + 4.0 * 32.0 * 48.0 + 2.0 * 96.0 * 48.0 + 4.0 * (96.0 + 192.0) + 16.0
        );
        assert_eq!(c.datapath, Datapath::TensorFp8);
    }
}
