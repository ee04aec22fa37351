//! The matrix products: `mm`, `addmm`, `bmm`, `baddbmm`, `matmul` and `linear`, each a GEMM of
//! [`roofline_model::analysis::dl::Gemm`] (F = 2·M·N·K per product, B = both operands and the result, and a
//! bias read once when there is one).

use roofline_model::analysis::dl::Gemm;

use super::inputs::broadcast;
use super::{Complexity, Dtype, Family, NoCost, OpCost, OpInputs, numel, shapes_err};

/// What a matrix product of `dt` assumes about its datapath (the trace does not record it).
pub(super) fn matmul_assumed(dt: Dtype) -> Vec<String> {
    match dt {
        Dtype::F32 => vec![
            "FP32 CUDA cores for a float matrix product (TF32 Tensor Cores when allow_tf32 is set)"
                .into(),
        ],
        Dtype::F64 => vec![
            "FP64 CUDA cores for a double matrix product (cuBLAS may use FP64 Tensor Cores on sm_80 and later)"
                .into(),
        ],
        _ => Vec::new(),
    }
}

pub(super) fn gemm_cost(
    g: Gemm,
    batch: f64,
    dt: Dtype,
    extra_bytes: f64,
    family: Family,
) -> OpCost {
    let assumed = matmul_assumed(dt);
    OpCost {
        complexity: Complexity::new(batch * g.flops(), batch * g.bytes(dt.bytes()) + extra_bytes),
        datapath: dt.matmul(),
        family,
        assumed,
    }
}

/// `mm(A[M,K], B[K,N])` and `addmm(bias, A, B)`: F = 2·M·N·K.
pub(super) fn gemm_2d(
    x: &OpInputs,
    a: usize,
    b: usize,
    bias: Option<usize>,
) -> Result<OpCost, NoCost> {
    match (x.tensor(a), x.tensor(b)) {
        (Some((dt, &[m, k])), Some((_, &[k2, n]))) if k == k2 => {
            let extra = bias.map_or(0.0, |i| x.arg(i).bytes());
            Ok(gemm_cost(Gemm { m, n, k }, 1.0, dt, extra, Family::Gemm))
        }
        _ => Err(shapes_err("expected matrices [M,K] and [K,N]")),
    }
}

/// `_addmm_activation(self, mat1, mat2, beta, alpha, use_gelu)`: `addmm` with a ReLU or GELU on
/// its result, as the inference fast path's first feed-forward layer runs it. F = 2·M·N·K (the
/// bias not counted, as `addmm`'s) + the activation per output element: ReLU 0 (a maximum), GELU
/// as PyTorch's CUDA path applies it, the tanh approximation
/// ([`GELU_TANH_FLOPS`](super::elementwise::GELU_TANH_FLOPS), 8: cuBLASLt's GELU epilogue, or a
/// `gelu_(…, "tanh")` call; `addmm_out_cuda_impl` in `aten/src/ATen/native/cuda/Blas.cpp`). The
/// CPU applies the exact GELU (4) in a `gelu_` call recorded inside this one, whose F the import
/// subtracts ([`crate::trace::calls`]): on a CPU trace the call keeps 4·M·N more than the CPU ran.
/// B as `addmm`'s.
pub(super) fn addmm_activation(x: &OpInputs) -> Result<OpCost, NoCost> {
    let mut c = gemm_2d(x, 1, 2, Some(0))?;
    let out = match (x.tensor(1), x.tensor(2)) {
        (Some((_, &[m, _])), Some((_, &[_, n]))) => (m * n) as f64,
        _ => return Err(shapes_err("expected matrices [M,K] and [K,N]")),
    };
    match x.flag(5) {
        Some(false) => {}
        Some(true) => {
            c.complexity.flops += super::elementwise::GELU_TANH_FLOPS * out;
            c.assumed.push("GELU counted as CUDA applies it, the tanh approximation (8 FLOPs per element); the CPU applies the exact GELU (4)".into());
        }
        None => c.assumed.push(
            "the activation (use_gelu) not recorded: counted as a ReLU (0 FLOPs); a GELU would add 8 per output element".into(),
        ),
    }
    Ok(c)
}

/// `bmm(A[b,M,K], B[b,K,N])` and `baddbmm(bias, A, B)`: F = b·2·M·N·K.
pub(super) fn bmm(x: &OpInputs, a: usize, b: usize, bias: Option<usize>) -> Result<OpCost, NoCost> {
    match (x.tensor(a), x.tensor(b)) {
        (Some((dt, &[bt, m, k])), Some((_, &[bt2, k2, n]))) if k == k2 && bt == bt2 => {
            let extra = bias.map_or(0.0, |i| x.arg(i).bytes());
            Ok(gemm_cost(
                Gemm { m, n, k },
                bt as f64,
                dt,
                extra,
                Family::Gemm,
            ))
        }
        _ => Err(shapes_err(
            "expected batches of matrices [b,M,K] and [b,K,N]",
        )),
    }
}

/// `matmul(A, B)` with NumPy semantics: vectors become 1×K or K×1, leading dimensions broadcast.
pub(super) fn matmul(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some((dt, a)), Some((_, b))) = (x.tensor(0), x.tensor(1)) else {
        return Err(shapes_err("expected two tensors"));
    };
    if a.is_empty() || b.is_empty() {
        return Err(shapes_err("matmul of a 0-d tensor"));
    }
    let (m, k) = if a.len() == 1 {
        (1, a[0])
    } else {
        (a[a.len() - 2], a[a.len() - 1])
    };
    let (k2, n) = if b.len() == 1 {
        (b[0], 1)
    } else {
        (b[b.len() - 2], b[b.len() - 1])
    };
    if k != k2 {
        return Err(shapes_err("inner dimensions differ"));
    }
    let ba = if a.len() > 2 { &a[..a.len() - 2] } else { &[] };
    let bb = if b.len() > 2 { &b[..b.len() - 2] } else { &[] };
    let batch = broadcast(ba, bb).ok_or_else(|| shapes_err("batch dimensions do not broadcast"))?;
    let g = Gemm { m, n, k };
    // Each operand is read once even when broadcast: B counts the tensors as recorded.
    let bytes = dt.bytes() * (numel(a) + numel(b) + numel(&batch) * (m * n) as f64);
    let mut c = gemm_cost(g, numel(&batch), dt, 0.0, Family::Gemm);
    c.complexity.bytes = bytes;
    Ok(c)
}

/// `linear(x[…,in], W[out,in], bias[out])`: a GEMM with M = the leading elements of x.
pub(super) fn linear(x: &OpInputs) -> Result<OpCost, NoCost> {
    match (x.tensor(0), x.tensor(1)) {
        (Some((dt, xs)), Some((_, &[out, inp]))) if xs.last() == Some(&inp) => {
            let m = xs[..xs.len() - 1].iter().product::<u64>();
            Ok(gemm_cost(
                Gemm { m, n: out, k: inp },
                1.0,
                dt,
                x.arg(2).bytes(),
                Family::Gemm,
            ))
        }
        _ => Err(shapes_err("expected input [...,in] and weight [out,in]")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{F, H, inputs, t};
    use crate::operators::{Arg, op_cost};
    use roofline_model::bundle::Datapath;

    #[test]
    fn matrix_products_by_hand() {
        // 2×3 times 3×4: 24 products of length 3 → 2·2·4·3 = 48 FLOPs; 6 + 12 + 8 elements.
        let c = op_cost(
            "aten::mm",
            &inputs(vec![t(F, &[2, 3]), t(F, &[3, 4])], None),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 48.0);
        assert_eq!(c.complexity.bytes, 4.0 * 26.0);
        assert_eq!(c.datapath, Datapath::Fp32);
        assert!(!c.assumed.is_empty());
        // bf16 is Tensor BF16; addmm's bias read too.
        let c = op_cost(
            "aten::addmm",
            &inputs(
                vec![
                    t(H, &[4]),
                    t(H, &[2, 3]),
                    t(H, &[3, 4]),
                    Arg::Other,
                    Arg::Other,
                ],
                None,
            ),
        )
        .unwrap();
        assert_eq!(c.datapath, Datapath::TensorBf16);
        assert_eq!(c.complexity.flops, 48.0);
        assert_eq!(c.complexity.bytes, 2.0 * (26.0 + 4.0));
        // bmm: 5 batches.
        let c = op_cost(
            "aten::bmm",
            &inputs(vec![t(F, &[5, 2, 3]), t(F, &[5, 3, 4])], None),
        );
        assert_eq!(c.unwrap().complexity.flops, 5.0 * 48.0);
        let c = op_cost(
            "aten::baddbmm",
            &inputs(
                vec![t(F, &[5, 2, 4]), t(F, &[5, 2, 3]), t(F, &[5, 3, 4])],
                None,
            ),
        );
        assert_eq!(c.unwrap().complexity.bytes, 4.0 * (5.0 * 26.0 + 40.0));
        // Mismatched inner dimensions have no rule result.
        assert!(matches!(
            op_cost(
                "aten::mm",
                &inputs(vec![t(F, &[2, 3]), t(F, &[4, 4])], None)
            ),
            Err(NoCost::Shapes(_))
        ));
    }

    #[test]
    fn addmm_activation_by_hand() {
        // The fast path's first feed-forward GEMM: [20, 64] × [64, 128] + bias [128], ReLU:
        // 2·20·128·64 = 327,680; B = (128 + 1280 + 8192 + 2560)·4.
        let args = |gelu: &str| {
            inputs(
                vec![
                    t(F, &[128]),
                    t(F, &[20, 64]),
                    t(F, &[64, 128]),
                    Arg::Other,
                    Arg::Other,
                    Arg::Other,
                ],
                Some(&["", "", "", "1", "1", gelu]),
            )
        };
        let c = op_cost("aten::_addmm_activation", &args("False")).unwrap();
        assert_eq!(c.complexity.flops, 327_680.0);
        assert_eq!(c.complexity.bytes, 4.0 * (128.0 + 1280.0 + 8192.0 + 2560.0));
        assert_eq!(c.family, Family::Gemm);
        assert_eq!(c.assumed.len(), 1, "{:?}", c.assumed); // FP32's datapath only
        // GELU: 8 more per output element (CUDA's tanh approximation), said so.
        let c = op_cost("aten::_addmm_activation", &args("True")).unwrap();
        assert_eq!(c.complexity.flops, 327_680.0 + 8.0 * 2560.0);
        assert!(c.assumed.iter().any(|a| a.contains("tanh approximation")));
        // Not recorded: the ReLU's 0, said so.
        let c = op_cost("aten::_addmm_activation", &args("")).unwrap();
        assert_eq!(c.complexity.flops, 327_680.0);
        assert!(c.assumed.iter().any(|a| a.contains("use_gelu")));
    }

    #[test]
    fn matmul_and_linear_by_hand() {
        // [7, 2, 3] @ [3, 4]: batch 7 broadcast over the matrix.
        let c = op_cost(
            "aten::matmul",
            &inputs(vec![t(F, &[7, 2, 3]), t(F, &[3, 4])], None),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 7.0 * 48.0);
        assert_eq!(c.complexity.bytes, 4.0 * (42.0 + 12.0 + 56.0));
        // Vector times matrix: 1×3 by 3×4.
        let c = op_cost(
            "aten::matmul",
            &inputs(vec![t(F, &[3]), t(F, &[3, 4])], None),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 24.0);
        // linear: x [8, 10, 6] (M = 80), W [5, 6], bias [5].
        let c = op_cost(
            "aten::linear",
            &inputs(vec![t(H, &[8, 10, 6]), t(H, &[5, 6]), t(H, &[5])], None),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 80.0 * 5.0 * 6.0);
        assert_eq!(c.complexity.bytes, 2.0 * (480.0 + 30.0 + 400.0 + 5.0));
    }
}
