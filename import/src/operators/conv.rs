//! Convolutions of any dimension, forward and backward: `conv1d/2d/3d`, `convolution`,
//! `_convolution`, `cudnn_convolution` and `convolution_backward`, counted as
//! [`roofline_model::dl::Conv2d`] counts each direction.

use super::{Complexity, Datapath, Dtype, Family, NoCost, OpCost, OpInputs, numel, shapes_err};

/// Where a convolution operator keeps its arguments (indices into the recorded inputs).
#[derive(Debug, Clone, Copy)]
pub(super) struct ConvArgs {
    input: usize,
    weight: usize,
    bias: Option<usize>,
    stride: usize,
    padding: usize,
    dilation: usize,
    transposed: Option<usize>,
    groups: usize,
    allow_tf32: Option<usize>,
    /// `convolution_backward`: the gradient of the output first, and which gradients are computed.
    grad_output: Option<usize>,
    output_mask: Option<usize>,
}

impl ConvArgs {
    /// `conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups)`.
    pub(super) const CONVND: ConvArgs = ConvArgs {
        input: 0,
        weight: 1,
        bias: Some(2),
        stride: 3,
        padding: 4,
        dilation: 5,
        transposed: None,
        groups: 6,
        allow_tf32: None,
        grad_output: None,
        output_mask: None,
    };
    /// `convolution` and `_convolution(input, weight, bias, stride, padding, dilation,
    /// transposed, output_padding, groups, …, allow_tf32)`.
    pub(super) const CONVOLUTION: ConvArgs = ConvArgs {
        transposed: Some(6),
        groups: 8,
        allow_tf32: Some(12),
        ..ConvArgs::CONVND
    };
    /// `cudnn_convolution(self, weight, padding, stride, dilation, groups, benchmark,
    /// deterministic, allow_tf32)`.
    pub(super) const CUDNN: ConvArgs = ConvArgs {
        input: 0,
        weight: 1,
        bias: None,
        stride: 3,
        padding: 2,
        dilation: 4,
        transposed: None,
        groups: 5,
        allow_tf32: Some(8),
        grad_output: None,
        output_mask: None,
    };
    /// `convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
    /// transposed, output_padding, groups, output_mask)`.
    pub(super) const BACKWARD: ConvArgs = ConvArgs {
        input: 1,
        weight: 2,
        bias: None,
        stride: 4,
        padding: 5,
        dilation: 6,
        transposed: Some(7),
        groups: 9,
        allow_tf32: None,
        grad_output: Some(0),
        output_mask: Some(10),
    };
}

/// Convolutions of any dimension: input [N, C, spatial…], weight [K, C/groups, kernel…].
/// F = 2·N·K·∏out·(C/groups)·∏kernel (for 2D this is [`roofline_model::dl::Conv2d::flops`]); B = input,
/// weight, bias and output, each once. A transposed convolution does the same products with
/// input and output swapped. The backward pass costs F once per gradient it computes (input,
/// weight), as [`roofline_model::dl::Conv2d`] counts each direction.
pub(super) fn conv(x: &OpInputs, p: ConvArgs) -> Result<OpCost, NoCost> {
    let (Some((dt, xs)), Some((_, ws))) = (x.tensor(p.input), x.tensor(p.weight)) else {
        return Err(shapes_err("expected input and weight tensors"));
    };
    if xs.len() < 3 || ws.len() != xs.len() || ws[1] == 0 {
        return Err(shapes_err(
            "expected input [N,C,spatial...] and weight [K,C/groups,kernel...]",
        ));
    }
    let d = xs.len() - 2;
    let mut assumed = Vec::new();
    let transposed = match p.transposed {
        Some(i) => x.flag(i).unwrap_or(false),
        None => false,
    };
    let (n, c, spatial) = (xs[0], xs[1], &xs[2..]);
    let kernel = &ws[2..];
    // For a transposed convolution the weight is [C_in, C_out/groups, kernel…].
    let groups = match x.int(p.groups) {
        Some(g) if g > 0 => g,
        _ if transposed => 1,
        _ => (c / ws[1]).max(1),
    };
    let (k, c_per_group) = if transposed {
        (ws[1] * groups, ws[0] / groups)
    } else {
        (ws[0], ws[1])
    };
    let mut list = |i: usize, default: u64, what: &str| {
        x.int_list(i, d).unwrap_or_else(|| {
            assumed.push(format!("{what} {default} (not recorded)"));
            vec![default; d]
        })
    };
    let stride = list(p.stride, 1, "stride");
    let dilation = list(p.dilation, 1, "dilation");
    let padding = match x.concrete(p.padding) {
        Some(s) if s.contains("same") => kernel
            .iter()
            .zip(&dilation)
            .map(|(&k, &dl)| dl * k.saturating_sub(1) / 2)
            .collect(),
        Some(s) if s.contains("valid") => vec![0; d],
        _ => list(p.padding, 0, "padding"),
    };
    let mut out = Vec::with_capacity(d);
    for i in 0..d {
        let span = dilation[i] * (kernel[i].max(1) - 1) + 1;
        let o = if transposed {
            (spatial[i].max(1) - 1) * stride[i] + span
        } else {
            (spatial[i] + 2 * padding[i]).saturating_sub(span) / stride[i].max(1) + 1
        };
        out.push(if transposed {
            o.saturating_sub(2 * padding[i])
        } else {
            o
        });
    }
    // Products: every (output element, or input element when transposed) times C/groups·∏kernel.
    let flops = if transposed {
        2.0 * n as f64 * c as f64 * numel(spatial) * ws[1] as f64 * numel(kernel)
    } else {
        2.0 * n as f64 * k as f64 * numel(&out) * c_per_group as f64 * numel(kernel)
    };
    let elt = dt.bytes();
    let (xe, we, ye) = (
        n as f64 * c as f64 * numel(spatial),
        numel(ws),
        n as f64 * k as f64 * numel(&out),
    );
    let bias = p.bias.map_or(0.0, |i| x.arg(i).bytes());
    let (flops, bytes) = match p.grad_output {
        None => (flops, elt * (xe + we + ye) + bias),
        Some(_) => {
            let (dx, dw) = match p.output_mask.and_then(|i| x.mask::<3>(i)) {
                Some([dx, dw, _]) => (dx, dw),
                None => {
                    assumed
                        .push("both input and weight gradients (output_mask not recorded)".into());
                    (true, true)
                }
            };
            let grads = f64::from(u8::from(dx) + u8::from(dw));
            // Reads dy, x and w; writes the gradients it computes.
            let written = if dx { xe } else { 0.0 } + if dw { we } else { 0.0 };
            (flops * grads, elt * (ye + xe + we + written))
        }
    };
    let datapath = match (dt, p.allow_tf32.and_then(|i| x.flag(i))) {
        (Dtype::F32, Some(true)) => Datapath::TensorTf32,
        (Dtype::F32, Some(false)) => Datapath::Fp32,
        (Dtype::F32, None) => {
            assumed.push(
                "FP32 CUDA cores for a float convolution (cuDNN may use TF32 Tensor Cores: torch.backends.cudnn.allow_tf32 is on by default)"
                    .into(),
            );
            Datapath::Fp32
        }
        (d, _) => d.matmul(),
    };
    Ok(OpCost {
        complexity: Complexity { flops, bytes },
        datapath,
        family: Family::Conv,
        assumed,
    })
}

#[cfg(test)]
mod tests {

    use crate::operators::testing::{F, H, inputs, t};
    use crate::operators::{Arg, op_cost};
    use roofline_model::bundle::Datapath;
    use roofline_model::dl::{Conv2d, Gemm};

    /// The general convolution agrees with `dl::Conv2d` where both apply.
    #[test]
    fn conv2d_matches_dl() {
        let reference = Conv2d {
            n: 2,
            h: 9,
            w: 9,
            c: 4,
            k: 6,
            r: 3,
            s: 3,
            stride: 2,
            pad: 1,
        };
        let x = inputs(
            vec![t(F, &[2, 4, 9, 9]), t(F, &[6, 4, 3, 3]), Arg::Other],
            Some(&["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"]),
        );
        let c = op_cost("aten::conv2d", &x).unwrap();
        assert_eq!(c.complexity.flops, reference.flops());
        assert_eq!(c.complexity.bytes, reference.bytes(4.0));
        assert!(c.assumed.iter().all(|a| a.contains("TF32")));
        // Without Concrete Inputs: stride 1, padding 0, dilation 1 assumed, and said so.
        let x = inputs(vec![t(F, &[2, 4, 9, 9]), t(F, &[6, 4, 3, 3])], None);
        let c = op_cost("aten::conv2d", &x).unwrap();
        let unpadded = Conv2d {
            stride: 1,
            pad: 0,
            ..reference
        };
        assert_eq!(c.complexity.flops, unpadded.flops());
        assert!(c.assumed.iter().any(|a| a.starts_with("stride 1")));
        assert!(c.assumed.iter().any(|a| a.starts_with("padding 0")));
    }

    #[test]
    fn conv_variants_by_hand() {
        // conv1d, groups 2: N=1, C=4, L=10, K=6, kernel 3: out 8; each output sums 2·3 products.
        let x = inputs(
            vec![t(F, &[1, 4, 10]), t(F, &[6, 2, 3]), t(F, &[6])],
            Some(&["", "", "", "[1]", "[0]", "[1]", "2"]),
        );
        let c = op_cost("aten::conv1d", &x).unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 8.0 * 6.0);
        assert_eq!(c.complexity.bytes, 4.0 * (40.0 + 36.0 + 48.0 + 6.0));
        // Groups follow from the shapes when not recorded.
        let y = inputs(vec![t(F, &[1, 4, 10]), t(F, &[6, 2, 3])], None);
        assert_eq!(
            op_cost("aten::conv1d", &y).unwrap().complexity.flops,
            c.complexity.flops
        );
        // conv3d 1×1×1 is a GEMM of M = N·D·H·W.
        let z = inputs(vec![t(H, &[2, 3, 4, 5, 6]), t(H, &[7, 3, 1, 1, 1])], None);
        let c = op_cost("aten::conv3d", &z).unwrap();
        assert_eq!(c.complexity.flops, Gemm { m: 240, n: 7, k: 3 }.flops());
        assert_eq!(c.datapath, Datapath::TensorBf16);
        // cudnn_convolution orders padding before stride, and says whether TF32 was allowed.
        let w = inputs(
            vec![t(F, &[2, 4, 9, 9]), t(F, &[6, 4, 3, 3])],
            Some(&[
                "", "", "[1, 1]", "[2, 2]", "[1, 1]", "1", "False", "False", "True",
            ]),
        );
        let c = op_cost("aten::cudnn_convolution", &w).unwrap();
        assert_eq!(c.datapath, Datapath::TensorTf32);
        assert_eq!(
            c.complexity.flops,
            Conv2d {
                n: 2,
                h: 9,
                w: 9,
                c: 4,
                k: 6,
                r: 3,
                s: 3,
                stride: 2,
                pad: 1
            }
            .flops()
        );
        // The backward pass with both gradients is twice the forward F.
        let b = inputs(
            vec![
                t(F, &[2, 6, 5, 5]),
                t(F, &[2, 4, 9, 9]),
                t(F, &[6, 4, 3, 3]),
            ],
            Some(&[
                "",
                "",
                "",
                "[6]",
                "[2, 2]",
                "[1, 1]",
                "[1, 1]",
                "False",
                "[0, 0]",
                "1",
                "[True, True, True]",
            ]),
        );
        let c = op_cost("aten::convolution_backward", &b).unwrap();
        let fwd = Conv2d {
            n: 2,
            h: 9,
            w: 9,
            c: 4,
            k: 6,
            r: 3,
            s: 3,
            stride: 2,
            pad: 1,
        };
        assert_eq!(c.complexity.flops, 2.0 * fwd.flops());
        let (xe, we, ye) = fwd.elements();
        assert_eq!(c.complexity.bytes, 4.0 * (ye + 2.0 * xe + 2.0 * we));
        // A network's first layer: its input needs no gradient, only the weight's is computed
        // and written.
        let mut first = b;
        if let Some(c) = first.concrete.as_mut() {
            c[10] = "[False, True, False]".into();
        }
        let c = op_cost("aten::convolution_backward", &first).unwrap();
        assert_eq!(c.complexity.flops, fwd.flops());
        assert_eq!(c.complexity.bytes, 4.0 * (ye + xe + 2.0 * we));
    }
}
