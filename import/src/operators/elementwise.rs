//! Elementwise operators, bytes only (F = 0): binary and unary operators, comparisons, fills,
//! copies and dropout. Every tensor input is read once and the (broadcast) output written once.

use super::matmul::broadcast;
use super::{Arg, Dtype, NoCost, OpCost, OpInputs, bytes_only, numel, shapes_err, tensors};

/// Elementwise operators (B only): every tensor input read, the broadcast output written. Those
/// of one tensor are in [`UNARY`].
pub const ELEMENTWISE: [&str; 33] = [
    "add",
    "sub",
    "rsub",
    "mul",
    "div",
    "pow",
    "clamp",
    "clamp_min",
    "clamp_max",
    "where",
    "masked_fill",
    "maximum",
    "minimum",
    "addcmul",
    "addcdiv",
    "lerp",
    "threshold_backward",
    "sigmoid_backward",
    "tanh_backward",
    "gelu_backward",
    "silu_backward",
    "logit_backward",
    "_to_copy",
    "clone",
    "native_dropout",
    "native_dropout_backward",
    "dropout",
    "mse_loss_backward",
    // The pointwise part of these losses; their reduction is a `mean` or `sum` call of its own.
    "mse_loss",
    "smooth_l1_loss",
    "smooth_l1_loss_backward",
    "huber_loss",
    "huber_loss_backward",
];

/// The elementwise operators of one tensor (the others are in [`ELEMENTWISE`] and
/// [`COMPARISONS`]): every other argument is a scalar, so a second tensor is the `.out`
/// overload's `out=`. `isnan` and `logical_not` write booleans.
pub const UNARY: [&str; 43] = [
    "abs",
    "neg",
    "relu",
    "relu6",
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sign",
    "sgn",
    "floor",
    "ceil",
    "round",
    "trunc",
    "erf",
    "sin",
    "cos",
    "nan_to_num",
    "hardtanh",
    "leaky_relu",
    "elu",
    "softplus",
    "mish",
    "hardswish",
    "hardsigmoid",
    "logit",
    "threshold",
    "isnan",
    "logical_not",
    "bitwise_not",
    "square",
    "erfinv",
    "atan",
];

/// Elementwise comparisons and logical operators: their output is boolean.
pub const COMPARISONS: [&str; 9] = [
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_xor",
];

/// `fill_` and `zero_`: the tensor written once.
pub(super) fn write_only(x: &OpInputs) -> Result<OpCost, NoCost> {
    let Some((dt, _)) = x.tensor(0) else {
        return Err(shapes_err("expected a tensor"));
    };
    Ok(bytes_only(x.arg(0).bytes(), dt))
}

/// `copy_(self, src)`: src read, self written.
pub(super) fn copy(x: &OpInputs) -> Result<OpCost, NoCost> {
    match (x.tensor(0), x.tensor(1)) {
        (Some((dt, _)), Some(_)) => Ok(bytes_only(x.arg(0).bytes() + x.arg(1).bytes(), dt)),
        _ => Err(shapes_err("expected destination and source tensors")),
    }
}

/// Elementwise operators: every tensor input read, the broadcast output written in the first
/// tensor's type (boolean for comparisons); an in-place operator writes its first input.
///
/// An elementwise operator's schema lists its tensors, then its scalars (`alpha`, `reduction`),
/// then, in its `.out` overload, the keyword-only `out=` tensor (`add.out(self, other, alpha,
/// out)`, `mse_loss_backward.grad_input(grad_output, self, target, reduction, grad_input)`, which
/// a backward calls with a sized output): a tensor recorded after a scalar that follows a tensor
/// is written, not read. (`clamp(x, None, max)` would be read so too, its `max` as an output: B
/// then lacks `max`'s bytes.)
pub(super) fn elementwise(x: &OpInputs, in_place: bool, boolean: bool) -> Result<OpCost, NoCost> {
    let mut seen_tensor = false;
    let mut inputs = Vec::new();
    for a in &x.args {
        match a {
            Arg::Tensor(d, s) => {
                seen_tensor = true;
                inputs.push((*d, s.as_slice()));
            }
            _ if seen_tensor => break,
            _ => {}
        }
    }
    elementwise_of(&inputs, in_place, boolean)
}

/// Unary elementwise operators ([`UNARY`]): the first tensor read and the output written. A
/// further tensor is the `out=` argument of the `.out` overload (`abs(x, out=y)`), written, not
/// read.
pub(super) fn unary(x: &OpInputs, in_place: bool, boolean: bool) -> Result<OpCost, NoCost> {
    let t = tensors(x);
    elementwise_of(&t[..t.len().min(1)], in_place, boolean)
}

pub(super) fn elementwise_of(
    tensors: &[(Dtype, &[u64])],
    in_place: bool,
    boolean: bool,
) -> Result<OpCost, NoCost> {
    let Some(&(dt, first)) = tensors.first() else {
        return Err(shapes_err("no tensor input recorded"));
    };
    let mut out = first.to_vec();
    let last = tensors.len() - 1;
    for (i, (_, s)) in tensors.iter().enumerate().skip(1) {
        match broadcast(&out, s) {
            Some(b) => out = b,
            // The `.out` overloads record `out=` last; PyTorch resizes an empty one (`[0]`)
            // to the result, so it is no input (and, empty, adds no bytes read).
            None if i == last && numel(s) == 0.0 => {}
            None => return Err(shapes_err("inputs do not broadcast")),
        }
    }
    let read: f64 = tensors.iter().map(|(d, s)| numel(s) * d.bytes()).sum();
    let out_elt = if boolean { 1.0 } else { dt.bytes() };
    let written = if in_place {
        numel(first) * dt.bytes()
    } else {
        numel(&out) * out_elt
    };
    Ok(bytes_only(read + written, dt))
}

/// `native_dropout(input, p, train)`: elementwise, and its boolean mask written too.
pub(super) fn dropout(x: &OpInputs) -> Result<OpCost, NoCost> {
    let mut cost = elementwise(x, false, false)?;
    cost.complexity.bytes += x.arg(0).numel() * Dtype::Bool.bytes();
    Ok(cost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{F, H, inputs, t};

    use crate::operators::{Arg, Dtype, base_name, op_cost};

    #[test]
    fn out_overloads_unary_operators_random_fills_and_losses() {
        // `abs(x, out=y)` as HTA's public A100 training trace records it: the empty `out=`
        // tensor last. Reads 4096 floats, writes 4096.
        let x = inputs(vec![t(F, &[4096]), t(F, &[0])], None);
        let c = op_cost("aten::abs", &x).unwrap();
        assert_eq!(c.complexity.bytes, 2.0 * 4096.0 * 4.0);
        // A unary operator's pre-sized `out=` is written, not read.
        let x = inputs(
            vec![t(Dtype::F64, &[1, 4096]), t(Dtype::F64, &[1, 4096])],
            None,
        );
        assert_eq!(
            op_cost("aten::sgn", &x).unwrap().complexity.bytes,
            2.0 * 4096.0 * 8.0
        );
        assert_eq!(
            op_cost("aten::isnan", &x).unwrap().complexity.bytes,
            4096.0 * 8.0 + 4096.0
        );
        // A binary operator's empty `out=` is left out too; a non-empty tensor that does not
        // broadcast is still an error.
        let x = inputs(
            vec![t(F, &[4, 3]), t(F, &[3]), Arg::Other, t(F, &[0])],
            None,
        );
        assert_eq!(
            op_cost("aten::add", &x).unwrap().complexity.bytes,
            4.0 * 27.0
        );
        let x = inputs(vec![t(F, &[4, 3]), t(F, &[2])], None);
        assert!(matches!(op_cost("aten::add", &x), Err(NoCost::Shapes(_))));
        // In-place random fills write their tensor; the out-of-place `normal(mean, std)` has
        // no rule (its tensors are read).
        let x = inputs(
            vec![t(H, &[64, 64]), Arg::Other, Arg::Other, Arg::Other],
            None,
        );
        assert_eq!(
            op_cost("aten::uniform_", &x).unwrap().complexity.bytes,
            64.0 * 64.0 * 2.0
        );
        assert_eq!(op_cost("aten::normal", &x), Err(NoCost::NoRule));
        // mse_loss(self, target, reduction): the squared differences written elementwise (the
        // mean is its own call), as in HTA's public ROCm trace: [5, 128] floats.
        let x = inputs(
            vec![t(F, &[5, 128]), t(F, &[5, 128]), Arg::Other],
            Some(&["", "", "1"]),
        );
        assert_eq!(
            op_cost("aten::mse_loss", &x).unwrap().complexity.bytes,
            3.0 * 640.0 * 4.0
        );
    }

    #[test]
    fn elementwise_bytes_only() {
        // add: [4, 3] + [3] broadcast: reads 12 + 3, writes 12 elements.
        let c = op_cost(
            "aten::add",
            &inputs(vec![t(F, &[4, 3]), t(F, &[3]), Arg::Other], None),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 0.0);
        assert_eq!(c.complexity.bytes, 4.0 * 27.0);
        // In place: writes the first input.
        let c = op_cost(
            "aten::mul_",
            &inputs(vec![t(H, &[4, 3]), t(H, &[4, 3])], None),
        )
        .unwrap();
        assert_eq!(c.complexity.bytes, 2.0 * 36.0);
        // Comparisons write booleans.
        let c = op_cost("aten::eq", &inputs(vec![t(F, &[10]), t(F, &[10])], None)).unwrap();
        assert_eq!(c.complexity.bytes, 80.0 + 10.0);
        let c = op_cost(
            "aten::copy_",
            &inputs(vec![t(H, &[10]), t(F, &[10]), Arg::Other], None),
        );
        assert_eq!(c.unwrap().complexity.bytes, 20.0 + 40.0);
        let c = op_cost("aten::fill_", &inputs(vec![t(F, &[10]), Arg::Other], None));
        assert_eq!(c.unwrap().complexity.bytes, 40.0);
        // Dropout in training writes its boolean mask beside the output; its backward reads
        // the gradient and the mask.
        let x = inputs(vec![t(H, &[10]), Arg::Other, Arg::Other], None);
        let c = op_cost("aten::native_dropout", &x);
        assert_eq!(c.unwrap().complexity.bytes, 20.0 + 20.0 + 10.0);
        let x = inputs(vec![t(H, &[10]), t(Dtype::Bool, &[10]), Arg::Other], None);
        let c = op_cost("aten::native_dropout_backward", &x);
        assert_eq!(c.unwrap().complexity.bytes, 20.0 + 10.0 + 20.0);
        assert_eq!(
            op_cost("aten::sort", &inputs(vec![], None)),
            Err(NoCost::NoRule)
        );
        assert_eq!(
            op_cost("fbgemm::jagged", &inputs(vec![], None)),
            Err(NoCost::NoRule)
        );
        assert_eq!(base_name("aten::add_"), "add");
        assert_eq!(
            op_cost("aten::_foreach_sort", &inputs(vec![], None)),
            Err(NoCost::NoRule)
        );
        assert_eq!(Dtype::from_profiler("c10::BFloat16"), Some(Dtype::Bf16));
        assert_eq!(Dtype::from_profiler("Scalar"), None);
    }
}
