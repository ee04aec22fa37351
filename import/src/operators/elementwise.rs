//! Elementwise operators: binary and unary arithmetic, activations, comparisons, fills, copies
//! and dropout. B: every tensor input read once and the (broadcast) output written once. F: the
//! floating-point operations per output element that PyTorch's kernel evaluates ([`ARITHMETIC`]
//! and [`per_element`]), times the output's elements, counted as the hardware's FLOP counters
//! count them (Nsight Compute's `sm__sass_thread_inst_executed_op_{fadd,fmul,ffma}_pred_on`: an
//! addition or a multiplication 1, a fused multiply-add 2; so an `a·b + c` is 2 whether or not
//! the compiler fuses it).
//!
//! The rules of the count:
//! - adds, subtractions and multiplications count 1 each; a division counts 1 (the GPU runs it as
//!   a reciprocal on the special-function unit refined by a few FMAs, which its counters count:
//!   our 1 is the operation, their count is more);
//! - special functions (exp, log, tanh, erf, sqrt, rsqrt, sin, cos, a general power's `exp2` and
//!   `log2`) count 0: what the CUDA math library runs for them is not known from a trace, so their
//!   share is left out, as [`roofline_model::analysis::dl::LSTM_CELL_FLOPS`] leaves out the LSTM's sigmoids;
//! - comparisons, `min`, `max`, selects (`where`, `clamp`, `relu`, `threshold`), sign and rounding
//!   operations count 0: no add, multiply or FMA;
//! - operators with a branch per element whose count depends on the data (`elu`, `celu`, `selu`,
//!   `softplus`, `smooth_l1_loss`, `huber_loss` and their backward) are left at 0;
//! - the losses' pointwise parts (`mse_loss`, `(self − target)²`, 2 per element, and its
//!   backward, `norm·(self − target)·grad`, 3) are left at 0 as their reductions are (the
//!   losses are bytes only, [`super::movement`]'s convention);
//! - integer and boolean arithmetic counts 0 (no floating-point operation);
//! - operators that move data without arithmetic (`copy_`, `_to_copy`, `clone`, `fill_`,
//!   `zero_`) count 0 and keep their B.
//!
//! F runs on the CUDA cores of PyTorch's `opmath` type (`aten/src/ATen/OpMathType.h`): FP32 for
//! FP32, FP16, BF16 and FP8 tensors (the kernels compute in `float`), FP64 for FP64.
//!
//! The counts are read from PyTorch's CUDA kernels (sources in [`ARITHMETIC`]); a GPU run's
//! counters are to check them (`docs/operator-accuracy.md`).

use roofline_model::bundle::Datapath;

use super::inputs::broadcast;
use super::{Arg, Dtype, NoCost, OpCost, OpInputs, bytes_only, numel, shapes_err, tensors};

/// Elementwise operators of two or more tensors (or a tensor and scalars): every tensor input
/// read, the broadcast output written. Those of one tensor are in [`UNARY`].
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
pub const UNARY: [&str; 45] = [
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
    "celu",
    "selu",
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

/// One row of the arithmetic table: an operator (without `aten::` and its in-place mark), its
/// FLOPs per output element, and the formula PyTorch's CUDA kernel evaluates, with the source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arithmetic {
    /// The operator.
    pub op: &'static str,
    /// FLOPs per output element (an FMA 2).
    pub flops: f64,
    /// What is counted, and where PyTorch computes it.
    pub formula: &'static str,
}

const fn row(op: &'static str, flops: f64, formula: &'static str) -> Arithmetic {
    Arithmetic { op, flops, formula }
}

/// FLOPs per output element of the elementwise operators whose count does not depend on their
/// arguments (those that do are in [`per_element`]: `add`, `sub`, `rsub`, `pow`, `gelu`,
/// `gelu_backward`). Every other elementwise operator counts 0 (the module's rules say why).
/// Sources: PyTorch's CUDA kernels, `aten/src/ATen/native/cuda/` (2.x).
pub const ARITHMETIC: [Arithmetic; 18] = [
    row("mul", 1.0, "self·other (BinaryMulKernel.cu)"),
    row(
        "div",
        1.0,
        "self / other, one division (BinaryDivTrueKernel.cu; by a scalar, a multiplication by its reciprocal)",
    ),
    row(
        "addcmul",
        3.0,
        "self + value·tensor1·tensor2 (PointwiseOpsKernel.cu)",
    ),
    row(
        "addcdiv",
        3.0,
        "self + value·tensor1/tensor2 (PointwiseOpsKernel.cu)",
    ),
    row(
        "lerp",
        3.0,
        "self + weight·(end − self) (Lerp.cu; the other branch, end − (end − self)·(1 − weight), as many)",
    ),
    row("square", 1.0, "x·x (pow(x, 2))"),
    row(
        "reciprocal",
        1.0,
        "1 / x, one division (UnaryFractionKernels.cu)",
    ),
    row(
        "sigmoid",
        2.0,
        "1 / (1 + exp(−x)): an addition and a division (UnarySpecialOpsKernel.cu)",
    ),
    row(
        "silu",
        2.0,
        "x / (1 + exp(−x)): an addition and a division (ActivationSiluKernel.cu)",
    ),
    row(
        "silu_backward",
        7.0,
        "s = 1 / (1 + exp(−x)) (2), dy·s·(1 + x·(1 − s)) (5) (ActivationSiluKernel.cu)",
    ),
    row(
        "mish",
        1.0,
        "x·tanh(log1p(exp(x))) (ActivationMishKernel.cu)",
    ),
    row(
        "hardswish",
        3.0,
        "x·min(max(x + 3, 0), 6) / 6 (ActivationHardswishKernel.cu)",
    ),
    row(
        "hardsigmoid",
        2.0,
        "min(max(x + 3, 0), 6) / 6 (ActivationHardsigmoidKernel.cu)",
    ),
    row(
        "leaky_relu",
        1.0,
        "x > 0 ? x : x·negative_slope (ActivationLeakyReluKernel.cu)",
    ),
    row("logit", 2.0, "log(x / (1 − x)) (UnarySpecialOpsKernel.cu)"),
    row(
        "sigmoid_backward",
        3.0,
        "grad·(1 − y)·y (BinaryMiscBackwardOpsKernels.cu)",
    ),
    row(
        "tanh_backward",
        3.0,
        "grad·(1 − y·y) (BinaryMiscBackwardOpsKernels.cu)",
    ),
    row(
        "logit_backward",
        3.0,
        "grad / (x·(1 − x)) (BinaryMiscBackwardOpsKernels.cu)",
    ),
];

/// Dropout in training: `native_dropout` writes `x·mask·scale` and its backward `grad·mask·scale`
/// (two multiplications each, `Dropout.cu`'s `fused_dropout_kernel` and `masked_scale_kernel`).
pub const DROPOUT_FLOPS: f64 = 2.0;

/// GELU, exact: `x·0.5·(1 + erf(x·√½))`, 4 (`ActivationGeluKernel.cu`).
pub const GELU_FLOPS: f64 = 4.0;
/// GELU, tanh approximation: `0.5·x·(1 + tanh(β·(x + κ·x³)))`: x³ 2, κ·x³ and x + 2, β· 1,
/// 0.5·x 1, 1 + 1, the product 1: 8 (`ActivationGeluKernel.cu`).
pub const GELU_TANH_FLOPS: f64 = 8.0;
/// GELU's backward, exact: `cdf = 0.5·(1 + erf(x·√½))` 3, `pdf = exp(−0.5·x·x)·β` 3,
/// `dy·(cdf + x·pdf)` 3: 9 (`ActivationGeluKernel.cu`).
pub const GELU_BACKWARD_FLOPS: f64 = 9.0;
/// GELU's backward, tanh approximation: `x²`, `x³`, `inner = β·(x + κ·x³)` 5; `left = 0.5·x`,
/// `right = 1 + tanh(inner)`, `0.5·right` 3; `1 − tanh²` 2; `β·(1 + 3κ·x²)` 3 (3κ a constant);
/// `left·tanh′·inner′` 2; the sum and `dy·` 2: 17 (`ActivationGeluKernel.cu`).
pub const GELU_TANH_BACKWARD_FLOPS: f64 = 17.0;

/// The operators whose count depends on the data (a branch per element), left at F = 0.
pub const DATA_DEPENDENT: [&str; 8] = [
    "elu",
    "celu",
    "selu",
    "softplus",
    "smooth_l1_loss",
    "smooth_l1_loss_backward",
    "huber_loss",
    "huber_loss_backward",
];

/// FLOPs per output element of elementwise operator `op` (without `aten::` and its in-place
/// mark) on this call, and what was assumed where the call did not record what the count needs:
/// - `add` and `sub` compute `self + alpha·other` (PyTorch's ufunc `add`,
///   `aten/src/ATen/native/ufunc/add.h`): an FMA, 2, when `other` is a tensor of more than one
///   element; 1 when it is a scalar (or one element, which PyTorch passes to the kernel as a
///   scalar: `alpha·other` is then one number); `rsub` computes `other − alpha·self`, 2 when
///   `self` has more than one element;
/// - `pow` with a scalar exponent as PyTorch's `pow_tensor_scalar_optimized_kernel`
///   (`PowKernel.cu`) special-cases it: 2 → `x·x` 1, 3 → `x·x·x` 2, −1 → `1/x` 1, −2 → `1/(x·x)`
///   2, 0.5 and −0.5 → `sqrt`, `rsqrt` 0, 0 and 1 → no arithmetic 0; any other exponent, or a
///   tensor one: `exp2(y·log2(x))`, its one multiplication 1;
/// - `gelu` and `gelu_backward` by their `approximate` argument ([`GELU_FLOPS`],
///   [`GELU_TANH_FLOPS`], [`GELU_BACKWARD_FLOPS`], [`GELU_TANH_BACKWARD_FLOPS`]);
/// - `native_dropout` and its backward [`DROPOUT_FLOPS`] (in evaluation, `train` false, 0);
///   `dropout` 0 (in training it calls `native_dropout`, counted there);
/// - the rest from [`ARITHMETIC`], else 0.
pub fn per_element(op: &str, x: &OpInputs) -> (f64, Option<String>) {
    let many = |i: usize| x.arg(i).numel() > 1.0;
    match op {
        "add" | "sub" => (if many(1) { 2.0 } else { 1.0 }, None),
        "rsub" => (if many(0) { 2.0 } else { 1.0 }, None),
        "pow" => match (x.arg(0), x.arg(1)) {
            (Arg::Tensor(..), Arg::Tensor(..)) | (Arg::Other, _) => (1.0, None),
            (_, _) => match x.concrete(1).and_then(|e| e.parse::<f64>().ok()) {
                Some(e) if e == 2.0 || e == -1.0 => (1.0, None),
                Some(e) if e == 3.0 || e == -2.0 => (2.0, None),
                Some(e) if [0.5, -0.5, 0.0, 1.0].contains(&e) => (0.0, None),
                Some(_) => (1.0, None),
                None => (
                    1.0,
                    Some("pow's exponent not recorded: counted as a general power, 1 FLOP per element (x² would be 1, x³ 2, √x 0)".into()),
                ),
            },
        },
        "gelu" | "gelu_backward" => {
            let at = if op == "gelu" { 1 } else { 2 };
            let (exact, tanh) = if op == "gelu" {
                (GELU_FLOPS, GELU_TANH_FLOPS)
            } else {
                (GELU_BACKWARD_FLOPS, GELU_TANH_BACKWARD_FLOPS)
            };
            match x.concrete(at).map(|a| a.trim_matches(['\'', '"'])) {
                Some("tanh") => (tanh, None),
                Some(_) => (exact, None),
                None => (
                    exact,
                    Some(format!("GELU's approximation not recorded: counted as the exact GELU, {exact} FLOPs per element (the tanh approximation is {tanh})")),
                ),
            }
        }
        "native_dropout" => match x.flag(2) {
            Some(false) => (0.0, None),
            _ => (DROPOUT_FLOPS, None),
        },
        "native_dropout_backward" => (DROPOUT_FLOPS, None),
        _ => (
            ARITHMETIC
                .iter()
                .find(|r| r.op == op)
                .map_or(0.0, |r| r.flops),
            None,
        ),
    }
}

/// The datapath of an elementwise operator's FLOPs: the CUDA cores of PyTorch's `opmath` type,
/// FP64 for double, else FP32 (`aten/src/ATen/OpMathType.h`: half, bfloat16 and the 8-bit floats
/// compute in float).
pub(super) fn opmath(dt: Dtype) -> Datapath {
    match dt {
        Dtype::F64 | Dtype::C128 => Datapath::Fp64,
        _ => Datapath::Fp32,
    }
}

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
/// tensor's type (boolean for comparisons; `where(condition, self, other)` in `self`'s); an
/// in-place operator writes its first input. F = [`per_element`] × the output's elements.
///
/// An elementwise operator's schema lists its tensors, then its scalars (`alpha`, `reduction`),
/// then, in its `.out` overload, the keyword-only `out=` tensor (`add.out(self, other, alpha,
/// out)`, `mse_loss_backward.grad_input(grad_output, self, target, reduction, grad_input)`, which
/// a backward calls with a sized output): a tensor recorded after a scalar that follows a tensor
/// is written, not read. (`clamp(x, None, max)` would be read so too, its `max` as an output: B
/// then lacks `max`'s bytes.)
pub(super) fn elementwise(
    x: &OpInputs,
    op: &str,
    in_place: bool,
    boolean: bool,
) -> Result<OpCost, NoCost> {
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
    // `where(condition, self, other)`: the output has the values' type, not the condition's.
    let out_type = match (op, inputs.get(1)) {
        ("where", Some(&(d, _))) => Some(d),
        _ => None,
    };
    let (mut cost, elements) = elementwise_of(&inputs, in_place, boolean, out_type)?;
    with_flops(&mut cost, elements, op, x)?;
    Ok(cost)
}

/// Unary elementwise operators ([`UNARY`]): the first tensor read and the output written. A
/// further tensor is the `out=` argument of the `.out` overload (`abs(x, out=y)`), written, not
/// read. F as [`elementwise`]'s.
pub(super) fn unary(
    x: &OpInputs,
    op: &str,
    in_place: bool,
    boolean: bool,
) -> Result<OpCost, NoCost> {
    let t = tensors(x);
    let (mut cost, elements) = elementwise_of(&t[..t.len().min(1)], in_place, boolean, None)?;
    with_flops(&mut cost, elements, op, x)?;
    Ok(cost)
}

/// Gives an elementwise call its F: [`per_element`] times the output's `elements`, 0 on integer
/// and boolean tensors; on the `opmath` datapath.
fn with_flops(cost: &mut OpCost, elements: f64, op: &str, x: &OpInputs) -> Result<(), NoCost> {
    let (per, assumed) = per_element(op, x);
    let Some((dt, _)) = tensors(x).first().copied() else {
        return Ok(());
    };
    let dt = if op == "where" {
        x.tensor(1).map_or(dt, |(d, _)| d)
    } else {
        dt
    };
    if per == 0.0 || dt.is_integral() {
        return Ok(());
    }
    if matches!(dt, Dtype::C64 | Dtype::C128) {
        return Err(shapes_err(format!(
            "{op} on complex numbers: the per-element counts are for real numbers"
        )));
    }
    cost.complexity.flops = per * elements;
    cost.datapath = opmath(dt);
    cost.assumed.extend(assumed);
    Ok(())
}

/// The cost of an elementwise call on these tensors (the first one's type gives the output's,
/// unless `out_type` says), B only (F is [`with_flops`]'s), and its output's elements.
fn elementwise_of(
    tensors: &[(Dtype, &[u64])],
    in_place: bool,
    boolean: bool,
    out_type: Option<Dtype>,
) -> Result<(OpCost, f64), NoCost> {
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
    let out_elt = if boolean {
        1.0
    } else {
        out_type.unwrap_or(dt).bytes()
    };
    let (written, elements) = if in_place {
        (numel(first) * dt.bytes(), numel(first))
    } else {
        (numel(&out) * out_elt, numel(&out))
    };
    Ok((bytes_only(read + written, dt), elements))
}

/// `native_dropout(input, p, train)`: elementwise, and its boolean mask written too.
pub(super) fn dropout(x: &OpInputs) -> Result<OpCost, NoCost> {
    let mut cost = elementwise(x, "native_dropout", false, false)?;
    cost.complexity.bytes += x.arg(0).numel() * Dtype::Bool.bytes();
    Ok(cost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{F, H, V, count, inputs, special, t};

    use crate::operators::{Arg, Dtype, base_name, op_cost};
    use roofline_model::bundle::Datapath;

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
        // Issue 42: F is counted now (it was 0): self + alpha·other, an FMA per output element.
        assert_eq!(c.complexity.flops, 2.0 * 12.0);
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

    /// Every row of the arithmetic table against its formula as PyTorch's CUDA kernel writes
    /// it (`aten/src/ATen/native/cuda/`), counted by evaluating it: the table's figures are hand
    /// counts, these are the formulas' own. `a`, `b`, `c` are the inputs; `alpha`, `value`,
    /// `weight`, `scale`, `slope` run-time scalars.
    #[test]
    fn the_arithmetic_table_is_its_formulas_count() {
        let (alpha, value, weight, scale, slope, mask) = (V, V, V, V, V, V);
        let (exp, tanh, erf, log, log1p) = (special, special, special, special, special);
        let (min6, max0) = (special, special);
        let formulas: Vec<(&str, f64)> = vec![
            ("mul", count(|a| a * V)),
            ("div", count(|a| a / V)),
            ("addcmul", count(|a| a + value * V * V)),
            ("addcdiv", count(|a| a + value * (V / V))),
            ("lerp", count(|a| a + weight * (V - a))),
            ("square", count(|x| x * x)),
            ("reciprocal", count(|x| 1.0 / x)),
            ("sigmoid", count(|x| 1.0 / (1.0 + exp(-x)))),
            ("silu", count(|x| x / (1.0 + exp(-x)))),
            (
                "silu_backward",
                count(|x| {
                    let dy = V;
                    let s = 1.0 / (1.0 + exp(-x));
                    dy * s * (1.0 + x * (1.0 - s))
                }),
            ),
            ("mish", count(|x| x * tanh(log1p(exp(x))))),
            ("hardswish", count(|x| x * min6(max0(x + 3.0)) / 6.0)),
            ("hardsigmoid", count(|x| min6(max0(x + 3.0)) / 6.0)),
            ("leaky_relu", count(|x| x * slope)),
            ("logit", count(|x| log(x / (1.0 - x)))),
            ("sigmoid_backward", count(|a| a * (1.0 - V) * V)),
            (
                "tanh_backward",
                count(|a| {
                    let b = V;
                    a * (1.0 - b * b)
                }),
            ),
            (
                "logit_backward",
                count(|dy| {
                    let x = V;
                    dy / (x * (1.0 - x))
                }),
            ),
        ];
        assert_eq!(formulas.len(), ARITHMETIC.len());
        for ((op, counted), row) in formulas.iter().zip(&ARITHMETIC) {
            assert_eq!(*op, row.op);
            assert_eq!(*counted, row.flops, "{op}: {}", row.formula);
        }
        // The operators whose count depends on their arguments.
        assert_eq!(count(|a| a + alpha * V), 2.0); // add, sub: a tensor other
        let alpha_other = V; // alpha·other computed once for a scalar other
        assert_eq!(count(|a| a + alpha_other), 1.0);
        assert_eq!(count(|x| x * x), 1.0); // pow 2
        assert_eq!(count(|x| x * x * x), 2.0); // pow 3
        assert_eq!(count(|x| 1.0 / x), 1.0); // pow −1
        assert_eq!(count(|x| 1.0 / (x * x)), 2.0); // pow −2
        assert_eq!(count(|x| exp(V * log(x))), 1.0); // a general power
        let (k_alpha, k_beta, k_kappa) = (std::f64::consts::FRAC_1_SQRT_2, 0.797, 0.044_715);
        assert_eq!(count(|x| x * 0.5 * (1.0 + erf(x * k_alpha))), GELU_FLOPS);
        assert_eq!(
            count(|x| {
                let x_cube = x * x * x;
                let inner = k_beta * (x + k_kappa * x_cube);
                0.5 * x * (1.0 + tanh(inner))
            }),
            GELU_TANH_FLOPS
        );
        assert_eq!(
            count(|x| {
                let dy = V;
                let cdf = 0.5 * (1.0 + erf(x * k_alpha));
                let pdf = exp(-0.5 * x * x) * k_beta;
                dy * (cdf + x * pdf)
            }),
            GELU_BACKWARD_FLOPS
        );
        assert_eq!(
            count(|x| {
                let dy = V;
                let x_sq = x * x;
                let x_cube = x_sq * x;
                let inner = k_beta * (x + k_kappa * x_cube);
                let tanh_inner = tanh(inner);
                let left = 0.5 * x;
                let right = 1.0 + tanh_inner;
                let left_derivative = 0.5 * right;
                let tanh_derivative = 1.0 - tanh_inner * tanh_inner;
                let inner_derivative = k_beta * (1.0 + 3.0 * k_kappa * x_sq);
                let right_derivative = left * tanh_derivative * inner_derivative;
                dy * (left_derivative + right_derivative)
            }),
            GELU_TANH_BACKWARD_FLOPS
        );
        assert_eq!(count(|x| x * mask * scale), DROPOUT_FLOPS);
    }

    /// Every operator of the table reaches its rule.
    #[test]
    fn the_table_s_operators_are_elementwise_operators() {
        for r in ARITHMETIC {
            assert!(
                ELEMENTWISE.contains(&r.op) || UNARY.contains(&r.op),
                "{}",
                r.op
            );
        }
        for op in DATA_DEPENDENT {
            assert!(ELEMENTWISE.contains(&op) || UNARY.contains(&op), "{op}");
        }
    }

    /// Issue 42: elementwise arithmetic had F = 0. F is the output's elements (broadcast) times
    /// the operations per element, by hand.
    #[test]
    fn elementwise_flops_by_hand() {
        let f = |name: &str, x: &OpInputs| op_cost(name, x).unwrap().complexity.flops;
        let ten = || t(F, &[10]);
        // [4, 3] · [3]: 12 outputs, 1 multiplication each; a scalar other: 1 addition each.
        let x = inputs(vec![t(F, &[4, 3]), t(F, &[3])], None);
        assert_eq!(f("aten::mul", &x), 12.0);
        assert_eq!(f("aten::div", &x), 12.0);
        let scalar = inputs(vec![t(F, &[4, 3]), Arg::Other, Arg::Other], None);
        assert_eq!(f("aten::add", &scalar), 12.0);
        assert_eq!(f("aten::sub_", &scalar), 12.0);
        // `rsub(self, other)` = other − alpha·self: the FMA falls on self.
        assert_eq!(f("aten::rsub", &scalar), 24.0);
        // In place, [2, 3] += [2, 3]: 6 FMAs.
        let x = inputs(vec![t(H, &[2, 3]), t(H, &[2, 3]), Arg::Other], None);
        let c = op_cost("aten::add_", &x).unwrap();
        assert_eq!(c.complexity.flops, 12.0);
        // BF16 arithmetic runs in FP32 (PyTorch's opmath type).
        assert_eq!(c.datapath, Datapath::Fp32);
        let x = inputs(vec![t(Dtype::F64, &[2]), t(Dtype::F64, &[2])], None);
        assert_eq!(op_cost("aten::mul", &x).unwrap().datapath, Datapath::Fp64);
        // pow by its exponent, as recorded.
        let pow = |e: &str| inputs(vec![ten(), Arg::Other], Some(&["", e]));
        assert_eq!(f("aten::pow", &pow("2")), 10.0);
        assert_eq!(f("aten::pow", &pow("3.")), 20.0);
        assert_eq!(f("aten::pow", &pow("0.5")), 0.0);
        assert_eq!(f("aten::pow", &pow("-2")), 20.0);
        assert_eq!(f("aten::pow", &pow("1.7")), 10.0);
        let c = op_cost("aten::pow", &inputs(vec![ten(), Arg::Other], None)).unwrap();
        assert_eq!(c.complexity.flops, 10.0);
        assert!(
            c.assumed[0].contains("exponent not recorded"),
            "{:?}",
            c.assumed
        );
        // Three tensors: self + value·t1·t2.
        let x = inputs(vec![ten(), ten(), ten(), Arg::Other], None);
        assert_eq!(f("aten::addcmul_", &x), 30.0);
        // GELU by its approximation; its backward reads the gradient and the input.
        let gelu = |a: &str| inputs(vec![ten(), Arg::Other], Some(&["", a]));
        assert_eq!(f("aten::gelu", &gelu("none")), 40.0);
        assert_eq!(f("aten::gelu", &gelu("tanh")), 80.0);
        let c = op_cost("aten::gelu", &inputs(vec![ten()], None)).unwrap();
        assert_eq!(c.complexity.flops, 40.0);
        assert_eq!(c.assumed.len(), 1);
        let x = inputs(vec![ten(), ten(), Arg::Other], Some(&["", "", "tanh"]));
        assert_eq!(f("aten::gelu_backward", &x), 170.0);
        assert_eq!(f("aten::sigmoid", &inputs(vec![ten()], None)), 20.0);
        assert_eq!(
            f("aten::silu_backward", &inputs(vec![ten(), ten()], None)),
            70.0
        );
        // Dropout in training: two multiplications per element; not in training, none.
        let drop = |train: &str| {
            inputs(
                vec![ten(), Arg::Other, Arg::Other],
                Some(&["", "0.1", train]),
            )
        };
        assert_eq!(f("aten::native_dropout", &drop("True")), 20.0);
        assert_eq!(f("aten::native_dropout", &drop("False")), 0.0);
        assert_eq!(f("aten::dropout", &drop("True")), 0.0);
        // No add, multiply or FMA: selects, comparisons, special functions, conversions.
        for name in [
            "aten::relu",
            "aten::clamp",
            "aten::exp",
            "aten::tanh",
            "aten::sqrt",
            "aten::abs",
            "aten::neg",
            "aten::clone",
            "aten::_to_copy",
            "aten::elu",
            "aten::softplus",
        ] {
            assert_eq!(
                f(name, &inputs(vec![ten(), Arg::Other], None)),
                0.0,
                "{name}"
            );
        }
        assert_eq!(
            f(
                "aten::threshold_backward",
                &inputs(vec![ten(), ten(), Arg::Other], None)
            ),
            0.0
        );
        assert_eq!(f("aten::gt", &inputs(vec![ten(), ten()], None)), 0.0);
        // Integer arithmetic is no floating-point operation.
        let x = inputs(vec![t(Dtype::I64, &[10]), t(Dtype::I64, &[10])], None);
        assert_eq!(f("aten::add", &x), 0.0);
        // `where(condition, self, other)`: no arithmetic; its output in self's type.
        let x = inputs(vec![t(Dtype::Bool, &[10]), ten(), ten()], None);
        let c = op_cost("aten::where", &x).unwrap();
        assert_eq!(c.complexity.flops, 0.0);
        assert_eq!(c.complexity.bytes, 10.0 + 40.0 + 40.0 + 40.0);
        // Complex arithmetic is not in the table: no count rather than a wrong one.
        let x = inputs(vec![t(Dtype::C64, &[10]), t(Dtype::C64, &[10])], None);
        assert!(matches!(op_cost("aten::mul", &x), Err(NoCost::Shapes(_))));
    }
}
