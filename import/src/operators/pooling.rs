//! Pooling: `max_pool{1,2,3}d_with_indices`, `avg_pool{1,2,3}d`, the adaptive poolings and
//! their backward operators. Bytes only (F = 0), as [`super`]'s reductions are: the comparisons
//! of a max pool and the additions of an average are not counted. B: the input read once, the
//! output written once, and the `int64` indices of a max pool written (read back by its
//! backward). A backward reads the output's gradient (and the indices) and writes the input's
//! gradient, of the input's shape.
//!
//! The output's size is PyTorch's `pooling_output_shape` (`aten/src/ATen/native/Pool.h`): per
//! spatial dimension `⌊(in + 2·pad − dil·(k − 1) − 1 + (ceil ? stride − 1 : 0)) / stride⌋ + 1`,
//! less one when ceil mode would start the last window in the right padding. The kernel size,
//! stride and padding come from `Concrete Inputs`; a forward pooling recorded without them has
//! no cost (its output's size is unknown), while a backward needs none: its gradients are
//! recorded tensors.

use super::{Dtype, Family, NoCost, OpCost, OpInputs, bytes_in, numel, shapes_err};

/// The family of every rule here.
const FAMILY: Family = Family::Pooling;

/// A forward pooling's B: `input` read, `out` written, and a max pool's `int64` indices of
/// `out`'s shape written.
fn forward(dt: Dtype, input: &[u64], out: &[u64], max: bool) -> OpCost {
    let index = if max { Dtype::I64.bytes() } else { 0.0 };
    bytes_in(
        FAMILY,
        numel(input) * dt.bytes() + numel(out) * (dt.bytes() + index),
        dt,
    )
}

/// Which pooling, and where its arguments are.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pool {
    /// Spatial dimensions (1, 2 or 3).
    pub nd: usize,
    /// Max pooling (writes `int64` indices) or average.
    pub max: bool,
    /// Position of `dilation`, when the operator has one.
    pub dilation: Option<usize>,
    /// Position of `ceil_mode`.
    pub ceil_mode: usize,
}

impl Pool {
    /// `max_poolNd_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)`.
    pub fn max(nd: usize) -> Pool {
        Pool {
            nd,
            max: true,
            dilation: Some(4),
            ceil_mode: 5,
        }
    }

    /// `avg_poolNd(self, kernel_size, stride, padding, ceil_mode, count_include_pad, …)`.
    pub fn avg(nd: usize) -> Pool {
        Pool {
            nd,
            max: false,
            dilation: None,
            ceil_mode: 4,
        }
    }
}

/// The input (`[N, C, *spatial]` or `[C, *spatial]`) and its spatial dimensions.
fn input(x: &OpInputs, nd: usize) -> Result<(Dtype, &[u64]), NoCost> {
    match x.tensor(0) {
        Some((dt, s)) if s.len() == nd + 1 || s.len() == nd + 2 => Ok((dt, s)),
        _ => Err(shapes_err(format!(
            "expected an input of {} or {} dimensions",
            nd + 1,
            nd + 2
        ))),
    }
}

/// One spatial dimension's output size (PyTorch's `pooling_output_shape`).
fn out_size(input: u64, k: u64, stride: u64, pad: u64, dil: u64, ceil: bool) -> Option<u64> {
    let (input, k, stride, pad, dil) = (
        input as i64,
        k as i64,
        stride as i64,
        pad as i64,
        dil as i64,
    );
    if stride <= 0 || k <= 0 {
        return None;
    }
    let span = input + 2 * pad - dil * (k - 1) - 1 + if ceil { stride - 1 } else { 0 };
    let mut out = span.div_euclid(stride) + 1;
    if ceil && (out - 1) * stride >= input + pad {
        out -= 1;
    }
    u64::try_from(out).ok().filter(|&o| o > 0)
}

/// A forward max or average pooling.
pub(super) fn pool(x: &OpInputs, p: Pool) -> Result<OpCost, NoCost> {
    let (dt, shape) = input(x, p.nd)?;
    if x.concrete.is_none() {
        return Err(shapes_err(
            "the kernel size and stride were not recorded: no Concrete Inputs",
        ));
    }
    let nd = p.nd;
    let kernel = x
        .int_list_arg(1, nd, "kernel_size")?
        .ok_or_else(|| shapes_err("kernel_size not recorded"))?;
    // An empty stride means the kernel size (PyTorch's default).
    let stride = match x.items(2) {
        Some(s) if !s.is_empty() => x
            .int_list_arg(2, nd, "stride")?
            .unwrap_or_else(|| kernel.clone()),
        _ => kernel.clone(),
    };
    // Recorded but impossible values are refused; unrecorded ones take PyTorch's defaults.
    let padding = x
        .int_list_arg(3, nd, "padding")?
        .unwrap_or_else(|| vec![0; nd]);
    let dilation = match p.dilation {
        Some(i) => x.int_list_arg(i, nd, "dilation")?,
        None => None,
    }
    .unwrap_or_else(|| vec![1; nd]);
    let ceil = x.flag(p.ceil_mode).unwrap_or(false);
    let lead = shape.len() - nd;
    let mut out = shape[..lead].to_vec();
    for i in 0..nd {
        let o = out_size(
            shape[lead + i],
            kernel[i],
            stride[i],
            padding[i],
            dilation[i],
            ceil,
        )
        .ok_or_else(|| shapes_err("the pooling window does not fit the input"))?;
        out.push(o);
    }
    Ok(forward(dt, shape, &out, p.max))
}

/// `_adaptive_avg_poolNd(self, output_size)` and `adaptive_max_poolNd(self, output_size)`:
/// the output's spatial size is `output_size`.
pub(super) fn adaptive(x: &OpInputs, nd: usize, max: bool) -> Result<OpCost, NoCost> {
    let (dt, shape) = input(x, nd)?;
    let size = x
        .int_list_arg(1, nd, "output_size")?
        .ok_or_else(|| shapes_err("output_size not recorded: no Concrete Inputs"))?;
    let out: Vec<u64> = shape[..shape.len() - nd]
        .iter()
        .chain(&size)
        .copied()
        .collect();
    Ok(forward(dt, shape, &out, max))
}

/// A pooling's backward: `grad_output` read, the tensor at `indices` (a max pool's) read, and
/// the input's gradient, of `self`'s shape (argument 1) and the gradient's type, written.
pub(super) fn backward(x: &OpInputs, indices: Option<usize>) -> Result<OpCost, NoCost> {
    let (Some((dt, grad)), Some((_, input))) = (x.tensor(0), x.tensor(1)) else {
        return Err(shapes_err("expected grad_output and self tensors"));
    };
    let mut bytes = numel(grad) * dt.bytes() + numel(input) * dt.bytes();
    if let Some(i) = indices {
        let Some((it, idx)) = x.tensor(i) else {
            return Err(shapes_err("expected the indices tensor"));
        };
        bytes += numel(idx) * it.bytes();
    }
    Ok(bytes_in(FAMILY, bytes, dt))
}

#[cfg(test)]
mod tests {
    use super::super::{Arg, op_cost};
    use super::*;
    use crate::operators::Derived;

    fn call(name: &str, args: Vec<Arg>, concrete: Option<&[&str]>) -> Result<OpCost, NoCost> {
        let x = OpInputs {
            args,
            concrete: concrete.map(|c| c.iter().map(|s| s.to_string()).collect()),
            list_elem: None,
            derived: Derived::default(),
            untyped: Vec::new(),
            no_types: false,
        };
        op_cost(name, &x)
    }

    fn t(dt: Dtype, s: &[u64]) -> Arg {
        Arg::Tensor(dt, s.to_vec())
    }

    #[test]
    fn output_sizes_as_pytorch_computes_them() {
        // ResNet's stem: 112 → 56 with k 3, stride 2, padding 1.
        assert_eq!(out_size(112, 3, 2, 1, 1, false), Some(56));
        // AlexNet: 55 → 27 with k 3, stride 2.
        assert_eq!(out_size(55, 3, 2, 0, 1, false), Some(27));
        // 6 with k 2, stride 4: windows at 0 and 4.
        assert_eq!(out_size(6, 2, 4, 0, 1, false), Some(2));
        // Ceil mode: 7 with k 2, stride 4 gives ⌊8/4⌋ + 1 = 3, but the third window would start
        // at 8, past the input: 2.
        assert_eq!(out_size(7, 2, 4, 0, 1, true), Some(2));
        // 5 with k 2, stride 2, padding 1 in ceil mode: ⌊6/2⌋ + 1 = 4, the fourth window would
        // start at 5, in the right padding: 3.
        assert_eq!(out_size(5, 2, 2, 1, 1, true), Some(3));
        // Dilation 2 widens a 3-window to 5: 10 → 6.
        assert_eq!(out_size(10, 3, 1, 0, 2, false), Some(6));
        assert_eq!(out_size(2, 5, 1, 0, 1, false), None);
    }

    #[test]
    fn max_pool_by_hand() {
        // ResNet-50's stem pooling on a batch of 8 in bf16: [8, 64, 112, 112] → [8, 64, 56, 56].
        let x = vec![
            t(Dtype::Bf16, &[8, 64, 112, 112]),
            Arg::Other,
            Arg::Other,
            Arg::Other,
            Arg::Other,
            Arg::Other,
        ];
        let c = call(
            "aten::max_pool2d_with_indices",
            x.clone(),
            Some(&["", "[3, 3]", "[2, 2]", "[1, 1]", "[1, 1]", "False"]),
        )
        .unwrap();
        let (input, out) = (8.0 * 64.0 * 112.0 * 112.0, 8.0 * 64.0 * 56.0 * 56.0);
        assert_eq!(c.complexity.flops, 0.0);
        assert_eq!(c.complexity.bytes, input * 2.0 + out * 2.0 + out * 8.0);
        assert_eq!(c.family, FAMILY);
        // One-item lists stand for every dimension; an empty stride is the kernel size.
        let c2 = call(
            "aten::max_pool2d_with_indices",
            x.clone(),
            Some(&["", "[2]", "[]", "[0]", "[1]", "False"]),
        )
        .unwrap();
        assert_eq!(c2.complexity.bytes, input * 2.0 + (input / 4.0) * 10.0);
        // Without Concrete Inputs the output is unknown.
        assert!(matches!(
            call("aten::max_pool2d_with_indices", x, None),
            Err(NoCost::Shapes(_))
        ));
    }

    #[test]
    fn avg_and_adaptive_pools_by_hand() {
        // avg_pool2d on an unbatched float [3, 8, 8] with k 2: [3, 4, 4], no indices.
        let c = call(
            "aten::avg_pool2d",
            vec![
                t(Dtype::F32, &[3, 8, 8]),
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
            ],
            Some(&["", "[2, 2]", "[]", "[0, 0]", "False", "True", ""]),
        )
        .unwrap();
        assert_eq!(c.complexity.bytes, (192.0 + 48.0) * 4.0);
        // ResNet's global average: [8, 2048, 7, 7] → [8, 2048, 1, 1] in half.
        let c = call(
            "aten::_adaptive_avg_pool2d",
            vec![t(Dtype::F16, &[8, 2048, 7, 7]), Arg::Other],
            Some(&["", "[1, 1]"]),
        )
        .unwrap();
        assert_eq!(
            c.complexity.bytes,
            (8.0 * 2048.0 * 49.0 + 8.0 * 2048.0) * 2.0
        );
        let c = call(
            "aten::adaptive_max_pool2d",
            vec![t(Dtype::F32, &[2, 4, 6, 6]), Arg::Other],
            Some(&["", "[3, 3]"]),
        )
        .unwrap();
        assert_eq!(c.complexity.bytes, (288.0 + 72.0) * 4.0 + 72.0 * 8.0);
    }

    #[test]
    fn backwards_by_hand() {
        // max_pool2d_with_indices_backward(grad_output, self, k, stride, pad, dil, ceil, indices).
        let c = call(
            "aten::max_pool2d_with_indices_backward",
            vec![
                t(Dtype::F32, &[2, 3, 4, 4]),
                t(Dtype::F32, &[2, 3, 8, 8]),
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
                t(Dtype::I64, &[2, 3, 4, 4]),
            ],
            None,
        )
        .unwrap();
        assert_eq!(c.complexity.bytes, 96.0 * 4.0 + 384.0 * 4.0 + 96.0 * 8.0);
        let c = call(
            "aten::_adaptive_avg_pool2d_backward",
            vec![
                t(Dtype::Bf16, &[8, 2048, 1, 1]),
                t(Dtype::Bf16, &[8, 2048, 7, 7]),
            ],
            None,
        )
        .unwrap();
        assert_eq!(
            c.complexity.bytes,
            (8.0 * 2048.0 + 8.0 * 2048.0 * 49.0) * 2.0
        );
        assert!(matches!(
            call("aten::avg_pool2d_backward", vec![t(Dtype::F32, &[1])], None),
            Err(NoCost::Shapes(_))
        ));
    }
}
