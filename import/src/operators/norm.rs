//! Normalisations and softmax: layer and batch norm with their backward, softmax and
//! log-softmax with theirs.

use super::{Complexity, Family, NoCost, OpCost, OpInputs, numel, shapes_err};

/// `layer_norm(input, normalized_shape, weight, bias, eps)`: per element 1 FLOP for the mean,
/// 3 for the variance (difference, square and accumulate), 2 to normalise (subtract, scale) and
/// 2 for the affine transform when weight and bias are given. B = x, y, weight and bias.
pub(super) fn layer_norm(x: &OpInputs) -> Result<OpCost, NoCost> {
    let Some((dt, s)) = x.tensor(0) else {
        return Err(shapes_err("expected an input tensor"));
    };
    let affine = x.arg(2).numel() > 0.0 || x.arg(3).numel() > 0.0;
    let n = numel(s);
    let per = if affine { 8.0 } else { 6.0 };
    Ok(OpCost {
        complexity: Complexity::new(
            per * n,
            2.0 * n * dt.bytes() + x.arg(2).bytes() + x.arg(3).bytes(),
        ),
        datapath: dt.cuda_core(),
        family: Family::Norm,
        assumed: Vec::new(),
    })
}

/// Where a normalisation's backward call has its arguments.
#[derive(Clone, Copy)]
pub(super) struct NormBackward {
    grad_out: usize,
    input: usize,
    weight: usize,
    /// The saved statistics (mean and inverse standard deviation), read.
    stats: [usize; 2],
    /// `output_mask` (`[True, True, True]`: grad_input, grad_weight, grad_bias), when the
    /// operator has one; without it all three are computed.
    mask: Option<usize>,
    /// The `train` flag, when the operator has one (batch norm); layer norm always normalises
    /// with its own statistics.
    train: Option<usize>,
}

/// `native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
/// output_mask)`.
pub(super) const LAYER_NORM_BACKWARD: NormBackward = NormBackward {
    grad_out: 0,
    input: 1,
    weight: 5,
    stats: [3, 4],
    mask: Some(7),
    train: None,
};

/// `native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
/// save_invstd, train, eps, output_mask)`.
pub(super) const BATCH_NORM_BACKWARD: NormBackward = NormBackward {
    grad_out: 0,
    input: 1,
    weight: 2,
    stats: [5, 6],
    mask: Some(9),
    train: Some(7),
};

/// `cudnn_batch_norm_backward(input, grad_output, weight, running_mean, running_var,
/// save_mean, save_var, epsilon, reserveSpace)`: training mode, all three gradients.
pub(super) const CUDNN_BATCH_NORM_BACKWARD: NormBackward = NormBackward {
    grad_out: 1,
    input: 0,
    weight: 2,
    stats: [5, 6],
    mask: None,
    train: None,
};

/// The backward pass of layer and batch normalisation, counted from the gradient's formula
/// (per element, `x̂ = (x − μ)·s` with `s = 1/σ` per row or channel):
/// - `grad_input = s·(g − mean(g) − x̂·mean(g·x̂))` with `g = dy·γ`: x̂ (2), g (1 with a
///   weight), the two sums (1 and 2) and the combination (4): 9 FLOPs, 10 with a weight; with
///   running statistics (batch norm in eval mode) `dy·(γ·s)`, 1;
/// - `grad_weight = Σ dy·x̂`: 2 (and x̂'s 2 when grad_input is not computed);
/// - `grad_bias = Σ dy`: 1.
///
/// B: dy and x read, each gradient asked for written (`output_mask`), the weight and the saved
/// statistics read.
pub(super) fn norm_backward(x: &OpInputs, p: NormBackward) -> Result<OpCost, NoCost> {
    let (Some((dt, s)), Some(_)) = (x.tensor(p.input), x.tensor(p.grad_out)) else {
        return Err(shapes_err("expected the gradient and the input tensors"));
    };
    let mut assumed = Vec::new();
    let mask = match p.mask {
        None => [true; 3],
        Some(i) => x.mask::<3>(i).unwrap_or_else(|| {
            assumed.push("every gradient computed (output_mask not recorded)".into());
            [true; 3]
        }),
    };
    let train = p.train.is_none_or(|i| {
        x.flag(i).unwrap_or_else(|| {
            assumed.push("training mode (not recorded)".into());
            true
        })
    });
    let n = numel(s);
    let weight = x.arg(p.weight);
    let with_weight = weight.numel() > 0.0;
    let per_dx = match (train, with_weight) {
        (false, _) => 1.0,
        (true, true) => 10.0,
        (true, false) => 9.0,
    };
    let per = if mask[0] { per_dx } else { 0.0 }
        + if mask[1] {
            if mask[0] { 2.0 } else { 4.0 }
        } else {
            0.0
        }
        + if mask[2] { 1.0 } else { 0.0 };
    let read = 2.0 * n * dt.bytes()
        + weight.bytes()
        + p.stats.iter().map(|&i| x.arg(i).bytes()).sum::<f64>();
    let params = if with_weight { weight.bytes() } else { 0.0 };
    let written = if mask[0] { n * dt.bytes() } else { 0.0 }
        + if mask[1] { params } else { 0.0 }
        + if mask[2] { params } else { 0.0 };
    Ok(OpCost {
        complexity: Complexity::new(per * n, read + written),
        datapath: dt.cuda_core(),
        family: Family::Norm,
        assumed,
    })
}

/// `batch_norm(input, weight, bias, running_mean, running_var, training, …)`: training as
/// [`layer_norm`] (statistics per channel, 8 FLOPs per element with the affine transform);
/// inference `y = x·scale + shift`, 2 per element. B = x, y and the per-channel tensors.
pub(super) fn batch_norm(x: &OpInputs) -> Result<OpCost, NoCost> {
    let Some((dt, s)) = x.tensor(0) else {
        return Err(shapes_err("expected an input tensor"));
    };
    let mut assumed = Vec::new();
    let training = x.flag(5).unwrap_or_else(|| {
        assumed.push("training mode (not recorded)".into());
        true
    });
    let n = numel(s);
    let params: f64 = (1..=4).map(|i| x.arg(i).bytes()).sum();
    Ok(OpCost {
        complexity: Complexity::new(
            if training { 8.0 } else { 2.0 } * n,
            2.0 * n * dt.bytes() + params,
        ),
        datapath: dt.cuda_core(),
        family: Family::Norm,
        assumed,
    })
}

/// `softmax(input, dim)` and `log_softmax`: per element, subtract the maximum, add to the sum,
/// scale (or subtract the log of the sum): 3 FLOPs (the maximum and exp are not counted).
pub(super) fn softmax(x: &OpInputs) -> Result<OpCost, NoCost> {
    let Some((dt, s)) = x.tensor(0) else {
        return Err(shapes_err("expected an input tensor"));
    };
    let n = numel(s);
    Ok(OpCost {
        complexity: Complexity::new(3.0 * n, 2.0 * n * dt.bytes()),
        datapath: dt.cuda_core(),
        family: Family::Softmax,
        assumed: Vec::new(),
    })
}

/// `_masked_softmax(self, mask, dim, mask_type)` (the fast path's attention with a mask): the
/// softmax of `self` with the masked positions left out, counted as [`softmax`] (3 FLOPs per
/// element; the mask selects, which is not counted). B: `self` and the boolean mask (as
/// recorded, before it is broadcast) read, the output written.
pub(super) fn masked_softmax(x: &OpInputs) -> Result<OpCost, NoCost> {
    let mut cost = softmax(x)?;
    cost.complexity.bytes += x.arg(1).bytes();
    Ok(cost)
}

/// `_softmax_backward_data(grad_output, output, dim, input_dtype)`: `dx = y·(dy − Σ dy·y)`,
/// 4 FLOPs per element (multiply-add for the sum, subtract, multiply). B = dy, y, dx.
pub(super) fn softmax_backward(x: &OpInputs) -> Result<OpCost, NoCost> {
    let Some((dt, s)) = x.tensor(0) else {
        return Err(shapes_err("expected a gradient tensor"));
    };
    let n = numel(s);
    Ok(OpCost {
        complexity: Complexity::new(4.0 * n, 3.0 * n * dt.bytes()),
        datapath: dt.cuda_core(),
        family: Family::Softmax,
        assumed: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{F, H, inputs, t};
    use crate::operators::{Arg, Dtype, op_cost};
    use roofline_model::bundle::Datapath;

    #[test]
    fn norms_softmax_embedding_by_hand() {
        let ln = inputs(
            vec![
                t(F, &[2048, 125]),
                Arg::Other,
                t(F, &[125]),
                t(F, &[125]),
                Arg::Other,
            ],
            None,
        );
        let c = op_cost("aten::native_layer_norm", &ln).unwrap();
        assert_eq!(c.complexity.flops, 8.0 * 256_000.0);
        assert_eq!(c.complexity.bytes, 4.0 * (512_000.0 + 250.0));
        let bn = inputs(
            vec![
                t(H, &[8, 4, 2, 2]),
                t(F, &[4]),
                t(F, &[4]),
                t(F, &[4]),
                t(F, &[4]),
            ],
            Some(&["", "", "", "", "", "False", "0.1", "1e-05", "True"]),
        );
        let c = op_cost("aten::batch_norm", &bn).unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 128.0);
        assert_eq!(c.complexity.bytes, 2.0 * 256.0 + 64.0);
        assert_eq!(c.datapath, Datapath::Bf16);
        let sm = inputs(vec![t(F, &[2, 1]), Arg::Other, Arg::Other], None);
        assert_eq!(
            op_cost("aten::_softmax", &sm).unwrap().complexity.flops,
            6.0
        );
        // The fast path's masked softmax: as many FLOPs, and the boolean mask [2, 1] read.
        let msm = inputs(
            vec![
                t(F, &[2, 1]),
                t(Dtype::Bool, &[2, 1]),
                Arg::Other,
                Arg::Other,
            ],
            None,
        );
        let c = op_cost("aten::_masked_softmax", &msm).unwrap();
        assert_eq!(c.complexity.flops, 6.0);
        assert_eq!(c.complexity.bytes, 2.0 * 2.0 * 4.0 + 2.0);
        assert_eq!(c.family, Family::Softmax);
        let emb = inputs(vec![t(F, &[1000, 64]), t(Dtype::I64, &[8, 5])], None);
        let c = op_cost("aten::embedding", &emb).unwrap();
        assert_eq!(c.complexity.flops, 0.0);
        assert_eq!(c.complexity.bytes, 8.0 * 40.0 + 2.0 * 40.0 * 64.0 * 4.0);
        // 40 lookups in a 10-row table read at most its 10 rows, and write 40.
        let small = inputs(vec![t(F, &[10, 64]), t(Dtype::I64, &[8, 5])], None);
        let c = op_cost("aten::embedding", &small).unwrap();
        assert_eq!(c.complexity.bytes, 8.0 * 40.0 + (10.0 + 40.0) * 64.0 * 4.0);
        // Its backward as PyTorch 2.11 records it (CPU build): the [4, 7, 16] gradient and 28
        // indices read, the [100, 16] weight gradient written.
        let bw = inputs(
            vec![
                t(F, &[4, 7, 16]),
                t(Dtype::I64, &[4, 7]),
                Arg::Other,
                Arg::Other,
                Arg::Other,
            ],
            Some(&["", "", "100", "-1", "False"]),
        );
        let c = op_cost("aten::embedding_dense_backward", &bw).unwrap();
        assert_eq!(c.complexity.flops, 0.0);
        assert_eq!(c.complexity.bytes, 4.0 * 448.0 + 8.0 * 28.0 + 4.0 * 1600.0);
        let c = op_cost(
            "aten::embedding_dense_backward",
            &OpInputs {
                concrete: None,
                ..bw
            },
        );
        assert!(matches!(c, Err(NoCost::Shapes(_))), "{c:?}");
    }

    /// `native_layer_norm_backward` as PyTorch 2.11 records it (its CPU build), and the batch
    /// norm backward calls, counted by hand.
    #[test]
    fn norm_backward_by_hand() {
        let o = || Arg::Other;
        // The trailing `Concrete Inputs` of a call, the earlier ones empty.
        let tail = |n: usize, last: &[&'static str]| -> Vec<&'static str> {
            let mut c = vec![""; n - last.len()];
            c.extend_from_slice(last);
            c
        };
        let cost = |name: &str, args: &[Arg], concrete: Option<&[&str]>| {
            op_cost(name, &inputs(args.to_vec(), concrete)).unwrap()
        };
        let ln = "aten::native_layer_norm_backward";
        // [4, 6, 5] normalised over 5, no weight, only grad_input: 9 FLOPs per element; reads
        // dy, x (120 each) and the 24 means and rstds, writes 120.
        let (x, stats) = (|| t(F, &[4, 6, 5]), || t(F, &[4, 6, 1]));
        let mut args = vec![x(), x(), o(), stats(), stats(), o(), o(), o()];
        let c = cost(ln, &args, Some(&tail(8, &["[True, False, False]"])));
        assert_eq!(c.complexity.flops, 9.0 * 120.0);
        assert_eq!(c.complexity.bytes, 4.0 * (3.0 * 120.0 + 48.0));
        assert!(c.assumed.is_empty());
        // With a weight [5] and all three gradients: 10 + 2 + 1 per element; the weight read,
        // its two gradients written.
        args[5] = t(F, &[5]);
        args[6] = t(F, &[5]);
        let c = cost(ln, &args, Some(&tail(8, &["[True, True, True]"])));
        assert_eq!(c.complexity.flops, 13.0 * 120.0);
        assert_eq!(c.complexity.bytes, 4.0 * (3.0 * 120.0 + 48.0 + 3.0 * 5.0));
        // Without Concrete Inputs every gradient is assumed.
        let c = cost(ln, &args, None);
        assert_eq!(c.complexity.flops, 13.0 * 120.0);
        assert_eq!(c.assumed.len(), 1);
        // Batch norm over [2, 3, 4, 4] (96 elements, 3 channels), BF16, in training and in eval.
        let bn = "aten::native_batch_norm_backward";
        let (x, ch) = (|| t(H, &[2, 3, 4, 4]), || t(F, &[3]));
        let args = [x(), x(), ch(), ch(), ch(), ch(), ch(), o(), o(), o()];
        let c = cost(
            bn,
            &args,
            Some(&tail(10, &["True", "1e-05", "[True, True, True]"])),
        );
        assert_eq!(c.complexity.flops, 13.0 * 96.0);
        assert_eq!(c.complexity.bytes, 2.0 * 3.0 * 96.0 + 4.0 * 3.0 * 5.0);
        assert_eq!(c.datapath, Datapath::Bf16);
        let c = cost(
            bn,
            &args,
            Some(&tail(10, &["False", "1e-05", "[True, False, False]"])),
        );
        assert_eq!(c.complexity.flops, 96.0);
        // cuDNN's: input first, then the gradient; all three gradients.
        let c = cost("aten::cudnn_batch_norm_backward", &args[..9], None);
        assert_eq!(c.complexity.flops, 13.0 * 96.0);
        assert!(c.assumed.is_empty());
    }
}
