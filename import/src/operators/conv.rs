//! Convolutions of any dimension, forward and backward, under every name PyTorch has given them
//! from 1.8 to today: `conv1d/2d/3d`, `conv_transpose1d/2d/3d`, `convolution`, `_convolution`,
//! the backends' own (`cudnn_*`, `mkldnn_*`, `miopen_*`, `thnn_*`, `_slow_conv2d_*`,
//! `slow_conv_*`, depthwise) and the backward ops (`convolution_backward` from 1.11, the
//! per-backend backward ops and their `_input`/`_weight` halves before it), counted as
//! [`roofline_model::analysis::dl::Conv2d`] counts each direction.
//!
//! A convolution's F needs the output's spatial size. PyTorch records the strides, paddings and
//! dilations that give it only from 2.1 (`Concrete Inputs`); before, the output's shape comes
//! from what the trace records elsewhere ([`Derived::output`](super::Derived::output): the autograd node the call made;
//! a backward call's own `grad_output`), and without either F and B stay unknown: nothing is
//! assumed that would change them. Argument positions are each op's schema
//! (`native_functions.yaml` of the PyTorch release that has it); the backends' ops put padding
//! before stride, `convolution` and `conv2d` stride before padding.

use super::{Complexity, Datapath, Dtype, Family, NoCost, OpCost, OpInputs, numel, shapes_err};

/// Whether a convolution is transposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Transposed {
    /// Never (`conv2d`, `cudnn_convolution`, …).
    No,
    /// Always (`conv_transpose2d`, `cudnn_convolution_transpose`, …).
    Yes,
    /// As the boolean argument at this position says (`convolution`, `_convolution`).
    Arg(usize),
}

/// Which gradients a backward op computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Grads {
    /// A forward op.
    Forward,
    /// As the `bool[2]` or `bool[3]` `output_mask` at this position says (input, weight, bias).
    Mask(usize),
    /// The input's only (an `_input` half).
    Input,
    /// The weight's only (a `_weight` half).
    Weight,
}

/// Where a convolution operator keeps its arguments (indices into the recorded inputs).
#[derive(Debug, Clone, Copy)]
pub(super) struct ConvArgs {
    /// The input tensor, `None` when the op records only its size (`self_size`), or nothing.
    input: Option<usize>,
    /// The weight tensor, `None` when the op records only its size (`weight_size`).
    weight: Option<usize>,
    bias: Option<usize>,
    /// A second tensor read (`cudnn_convolution_add_relu`'s `z`).
    extra: Option<usize>,
    grad_output: Option<usize>,
    stride: Option<usize>,
    padding: Option<usize>,
    dilation: Option<usize>,
    output_padding: Option<usize>,
    transposed: Transposed,
    groups: Option<usize>,
    allow_tf32: Option<usize>,
    grads: Grads,
    /// A CPU backend's op (MKL-DNN, the slow and depthwise THNN kernels): no TF32 question.
    cpu: bool,
}

impl ConvArgs {
    /// `conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups)`.
    pub(super) const CONVND: ConvArgs = ConvArgs {
        input: Some(0),
        weight: Some(1),
        bias: Some(2),
        extra: None,
        grad_output: None,
        stride: Some(3),
        padding: Some(4),
        dilation: Some(5),
        output_padding: None,
        transposed: Transposed::No,
        groups: Some(6),
        allow_tf32: None,
        grads: Grads::Forward,
        cpu: false,
    };
    /// `conv_transpose1d/2d/3d(input, weight, bias, stride, padding, output_padding, groups,
    /// dilation)`.
    pub(super) const TRANSPOSE_ND: ConvArgs = ConvArgs {
        output_padding: Some(5),
        groups: Some(6),
        dilation: Some(7),
        transposed: Transposed::Yes,
        ..ConvArgs::CONVND
    };
    /// `convolution` and `_convolution(input, weight, bias, stride, padding, dilation,
    /// transposed, output_padding, groups, …, allow_tf32)` (`_convolution.deprecated` has no
    /// `allow_tf32`).
    pub(super) const CONVOLUTION: ConvArgs = ConvArgs {
        transposed: Transposed::Arg(6),
        output_padding: Some(7),
        groups: Some(8),
        allow_tf32: Some(12),
        ..ConvArgs::CONVND
    };
    /// `cudnn_convolution(self, weight, padding, stride, dilation, groups, benchmark,
    /// deterministic, allow_tf32)`; its 1.8–1.10 overload with a bias
    /// (`self, weight, bias, padding, …`) is told apart by a tensor third ([`ConvArgs::for_call`]).
    pub(super) const CUDNN: ConvArgs = ConvArgs {
        bias: None,
        padding: Some(2),
        stride: Some(3),
        dilation: Some(4),
        groups: Some(5),
        allow_tf32: Some(8),
        ..ConvArgs::CONVND
    };
    /// `cudnn_convolution_transpose(self, weight, padding, output_padding, stride, dilation,
    /// groups, benchmark, deterministic, allow_tf32)`.
    pub(super) const CUDNN_TRANSPOSE: ConvArgs = ConvArgs {
        bias: None,
        padding: Some(2),
        output_padding: Some(3),
        stride: Some(4),
        dilation: Some(5),
        groups: Some(6),
        allow_tf32: Some(9),
        transposed: Transposed::Yes,
        ..ConvArgs::CONVND
    };
    /// `cudnn_convolution_relu(self, weight, bias, stride, padding, dilation, groups)`.
    pub(super) const CUDNN_RELU: ConvArgs = ConvArgs::CONVND;
    /// `cudnn_convolution_add_relu(self, weight, z, alpha, bias, stride, padding, dilation,
    /// groups)`.
    pub(super) const CUDNN_ADD_RELU: ConvArgs = ConvArgs {
        extra: Some(2),
        bias: Some(4),
        stride: Some(5),
        padding: Some(6),
        dilation: Some(7),
        groups: Some(8),
        ..ConvArgs::CONVND
    };
    /// `mkldnn_convolution(self, weight, bias, padding, stride, dilation, groups)` and
    /// `miopen_convolution(self, weight, bias, padding, stride, dilation, groups, …)`.
    pub(super) const MKLDNN: ConvArgs = ConvArgs {
        padding: Some(3),
        stride: Some(4),
        cpu: true,
        ..ConvArgs::CONVND
    };
    /// `miopen_convolution(self, weight, bias, padding, stride, dilation, groups, benchmark,
    /// deterministic)`.
    pub(super) const MIOPEN: ConvArgs = ConvArgs {
        cpu: false,
        ..ConvArgs::MKLDNN
    };
    /// `thnn_conv2d`, `thnn_conv2d_forward`, `_slow_conv2d_forward(self, weight, kernel_size,
    /// bias, stride, padding)`: no dilation argument (1).
    pub(super) const SLOW: ConvArgs = ConvArgs {
        bias: Some(3),
        stride: Some(4),
        padding: Some(5),
        dilation: None,
        groups: None,
        cpu: true,
        ..ConvArgs::CONVND
    };
    /// `slow_conv_dilated2d/3d`, `thnn_conv_depthwise2d(_forward)`, `_conv_depthwise2d(self,
    /// weight, kernel_size, bias, stride, padding, dilation)`.
    pub(super) const SLOW_DILATED: ConvArgs = ConvArgs {
        dilation: Some(6),
        ..ConvArgs::SLOW
    };
    /// `slow_conv_transpose2d/3d(self, weight, kernel_size, bias, stride, padding,
    /// output_padding, dilation)`.
    pub(super) const SLOW_TRANSPOSE: ConvArgs = ConvArgs {
        output_padding: Some(6),
        dilation: Some(7),
        transposed: Transposed::Yes,
        ..ConvArgs::SLOW
    };
    /// `convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
    /// transposed, output_padding, groups, output_mask)` (PyTorch 1.11 and later).
    pub(super) const BACKWARD: ConvArgs = ConvArgs {
        input: Some(1),
        weight: Some(2),
        bias: None,
        extra: None,
        grad_output: Some(0),
        stride: Some(4),
        padding: Some(5),
        dilation: Some(6),
        output_padding: Some(8),
        transposed: Transposed::Arg(7),
        groups: Some(9),
        allow_tf32: None,
        grads: Grads::Mask(10),
        cpu: false,
    };
    /// `cudnn_convolution_backward(self, grad_output, weight, padding, stride, dilation, groups,
    /// benchmark, deterministic, allow_tf32, output_mask)` (1.8–1.10); `miopen_convolution_backward`
    /// and `mkldnn_convolution_backward` have the same tensors first.
    pub(super) const CUDNN_BACKWARD: ConvArgs = ConvArgs {
        input: Some(0),
        grad_output: Some(1),
        padding: Some(3),
        stride: Some(4),
        dilation: Some(5),
        output_padding: None,
        transposed: Transposed::No,
        groups: Some(6),
        allow_tf32: Some(9),
        grads: Grads::Mask(10),
        ..ConvArgs::BACKWARD
    };
    /// `mkldnn_convolution_backward(self, grad_output, weight, padding, stride, dilation, groups,
    /// output_mask)` (1.8–1.10).
    pub(super) const MKLDNN_BACKWARD: ConvArgs = ConvArgs {
        allow_tf32: None,
        grads: Grads::Mask(7),
        cpu: true,
        ..ConvArgs::CUDNN_BACKWARD
    };
    /// `miopen_convolution_backward(self, grad_output, weight, padding, stride, dilation, groups,
    /// benchmark, deterministic, output_mask)` (1.8–1.10).
    pub(super) const MIOPEN_BACKWARD: ConvArgs = ConvArgs {
        allow_tf32: None,
        grads: Grads::Mask(9),
        ..ConvArgs::CUDNN_BACKWARD
    };
    /// The `_input` halves: `cudnn_/mkldnn_/miopen_convolution_backward_input(self_size,
    /// grad_output, weight, padding, stride, dilation, groups, …)`: the input's size only.
    pub(super) const BACKWARD_INPUT: ConvArgs = ConvArgs {
        input: None,
        grads: Grads::Input,
        ..ConvArgs::CUDNN_BACKWARD
    };
    /// The `_weight` halves: `cudnn_convolution_backward_weight`,
    /// `mkldnn_convolution_backward_weights`, `miopen_convolution_backward_weight(weight_size,
    /// grad_output, self, padding, stride, dilation, groups, …)`: the weight's size only.
    pub(super) const BACKWARD_WEIGHT: ConvArgs = ConvArgs {
        input: Some(2),
        weight: None,
        grads: Grads::Weight,
        ..ConvArgs::CUDNN_BACKWARD
    };
    /// `mkldnn_convolution_backward_input(self_size, grad_output, weight, padding, stride,
    /// dilation, groups, bias_defined)` (1.8–1.10).
    pub(super) const MKLDNN_BACKWARD_INPUT: ConvArgs = ConvArgs {
        allow_tf32: None,
        cpu: true,
        ..ConvArgs::BACKWARD_INPUT
    };
    /// `mkldnn_convolution_backward_weights(weight_size, grad_output, self, padding, stride,
    /// dilation, groups, bias_defined)` (1.8–1.10).
    pub(super) const MKLDNN_BACKWARD_WEIGHT: ConvArgs = ConvArgs {
        allow_tf32: None,
        cpu: true,
        ..ConvArgs::BACKWARD_WEIGHT
    };
    /// `cudnn_convolution_transpose_backward(self, grad_output, weight, padding, output_padding,
    /// stride, dilation, groups, benchmark, deterministic, allow_tf32, output_mask)` (1.8–1.10).
    pub(super) const CUDNN_TRANSPOSE_BACKWARD: ConvArgs = ConvArgs {
        output_padding: Some(4),
        stride: Some(5),
        dilation: Some(6),
        groups: Some(7),
        allow_tf32: Some(10),
        grads: Grads::Mask(11),
        transposed: Transposed::Yes,
        ..ConvArgs::CUDNN_BACKWARD
    };
    /// `cudnn_convolution_transpose_backward_input(grad_output, weight, padding, stride,
    /// dilation, groups, benchmark, deterministic, allow_tf32)`: no input argument at all.
    pub(super) const CUDNN_TRANSPOSE_BACKWARD_INPUT: ConvArgs = ConvArgs {
        input: None,
        grad_output: Some(0),
        weight: Some(1),
        padding: Some(2),
        stride: Some(3),
        dilation: Some(4),
        groups: Some(5),
        allow_tf32: Some(8),
        output_padding: None,
        grads: Grads::Input,
        transposed: Transposed::Yes,
        ..ConvArgs::CUDNN_BACKWARD
    };
    /// `cudnn_convolution_transpose_backward_weight(weight_size, grad_output, self, …)`.
    pub(super) const CUDNN_TRANSPOSE_BACKWARD_WEIGHT: ConvArgs = ConvArgs {
        transposed: Transposed::Yes,
        ..ConvArgs::BACKWARD_WEIGHT
    };
    /// `thnn_conv2d_backward(grad_output, self, weight, kernel_size, stride, padding, finput,
    /// fgrad_input, output_mask)` (1.8–1.10).
    pub(super) const THNN_BACKWARD: ConvArgs = ConvArgs {
        grad_output: Some(0),
        input: Some(1),
        weight: Some(2),
        stride: Some(4),
        padding: Some(5),
        dilation: None,
        output_padding: None,
        transposed: Transposed::No,
        groups: None,
        allow_tf32: None,
        grads: Grads::Mask(8),
        cpu: true,
        ..ConvArgs::BACKWARD
    };
    /// `_slow_conv2d_backward(grad_output, self, weight, kernel_size, stride, padding,
    /// output_mask)` (1.11 and later).
    pub(super) const SLOW_BACKWARD: ConvArgs = ConvArgs {
        grads: Grads::Mask(6),
        ..ConvArgs::THNN_BACKWARD
    };
    /// `slow_conv_dilated2d/3d_backward`, `thnn_conv_depthwise2d_backward`,
    /// `_conv_depthwise2d_backward(grad_output, self, weight, kernel_size, stride, padding,
    /// dilation, output_mask)`.
    pub(super) const SLOW_DILATED_BACKWARD: ConvArgs = ConvArgs {
        dilation: Some(6),
        grads: Grads::Mask(7),
        ..ConvArgs::THNN_BACKWARD
    };
    /// `slow_conv_transpose2d/3d_backward(grad_output, self, weight, kernel_size, stride,
    /// padding, output_padding, dilation, columns, ones, output_mask)` (1.8–1.10).
    pub(super) const SLOW_TRANSPOSE_BACKWARD: ConvArgs = ConvArgs {
        output_padding: Some(6),
        dilation: Some(7),
        transposed: Transposed::Yes,
        grads: Grads::Mask(10),
        ..ConvArgs::THNN_BACKWARD
    };

    /// The argument layout of a call: `cudnn_convolution`'s 1.8–1.10 overload with a bias
    /// (`self, weight, bias, padding, …`) is told apart from today's by the tensor in third
    /// place (without a bias the two differ only in where the unrecorded integers sit).
    fn for_call(self, x: &OpInputs, name: &str) -> ConvArgs {
        if name == "cudnn_convolution" && x.dims(2).is_some() {
            // `cudnn_convolution.deprecated(self, weight, bias, padding, stride, dilation, groups,
            // benchmark, deterministic)`.
            return ConvArgs {
                bias: Some(2),
                ..ConvArgs::MIOPEN
            };
        }
        self
    }
}

/// The convolution operators by name (without `aten::` and an in-place mark), with where each
/// keeps its arguments: every name PyTorch 1.8 to today records for a convolution.
pub(super) fn args(name: &str) -> Option<ConvArgs> {
    Some(match name {
        "conv1d" | "conv2d" | "conv3d" => ConvArgs::CONVND,
        "cudnn_convolution_relu" => ConvArgs::CUDNN_RELU,
        "conv_transpose1d" | "conv_transpose2d" | "conv_transpose3d" => ConvArgs::TRANSPOSE_ND,
        "convolution" | "_convolution" => ConvArgs::CONVOLUTION,
        "cudnn_convolution" => ConvArgs::CUDNN,
        "cudnn_convolution_transpose" => ConvArgs::CUDNN_TRANSPOSE,
        "cudnn_convolution_add_relu" => ConvArgs::CUDNN_ADD_RELU,
        "mkldnn_convolution" => ConvArgs::MKLDNN,
        "miopen_convolution" | "miopen_depthwise_convolution" => ConvArgs::MIOPEN,
        "thnn_conv2d" | "thnn_conv2d_forward" | "_slow_conv2d_forward" => ConvArgs::SLOW,
        "slow_conv_dilated2d"
        | "slow_conv_dilated3d"
        | "thnn_conv_depthwise2d"
        | "thnn_conv_depthwise2d_forward"
        | "_conv_depthwise2d" => ConvArgs::SLOW_DILATED,
        "slow_conv_transpose2d" | "slow_conv_transpose3d" => ConvArgs::SLOW_TRANSPOSE,
        "convolution_backward" => ConvArgs::BACKWARD,
        "cudnn_convolution_backward" => ConvArgs::CUDNN_BACKWARD,
        "mkldnn_convolution_backward" => ConvArgs::MKLDNN_BACKWARD,
        "miopen_convolution_backward" | "miopen_depthwise_convolution_backward" => {
            ConvArgs::MIOPEN_BACKWARD
        }
        "cudnn_convolution_backward_input"
        | "miopen_convolution_backward_input"
        | "miopen_depthwise_convolution_backward_input" => ConvArgs::BACKWARD_INPUT,
        "cudnn_convolution_backward_weight"
        | "miopen_convolution_backward_weight"
        | "miopen_depthwise_convolution_backward_weight" => ConvArgs::BACKWARD_WEIGHT,
        "mkldnn_convolution_backward_input" => ConvArgs::MKLDNN_BACKWARD_INPUT,
        "mkldnn_convolution_backward_weights" => ConvArgs::MKLDNN_BACKWARD_WEIGHT,
        "cudnn_convolution_transpose_backward" => ConvArgs::CUDNN_TRANSPOSE_BACKWARD,
        "cudnn_convolution_transpose_backward_input" => ConvArgs::CUDNN_TRANSPOSE_BACKWARD_INPUT,
        "cudnn_convolution_transpose_backward_weight" => ConvArgs::CUDNN_TRANSPOSE_BACKWARD_WEIGHT,
        "thnn_conv2d_backward" => ConvArgs::THNN_BACKWARD,
        "_slow_conv2d_backward" => ConvArgs::SLOW_BACKWARD,
        "slow_conv_dilated2d_backward"
        | "slow_conv_dilated3d_backward"
        | "thnn_conv_depthwise2d_backward"
        | "_conv_depthwise2d_backward" => ConvArgs::SLOW_DILATED_BACKWARD,
        "slow_conv_transpose2d_backward" | "slow_conv_transpose3d_backward" => {
            ConvArgs::SLOW_TRANSPOSE_BACKWARD
        }
        _ => return None,
    })
}

/// What a convolution operator computes, for the import's derivations
/// ([`Derived`](super::Derived)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvRole {
    /// A forward convolution.
    Forward,
    /// A backward op computing the gradients its `output_mask` asks for.
    Backward,
    /// The input-gradient half of a PyTorch 1.8–1.10 backward.
    InputHalf,
    /// The weight-gradient half.
    WeightHalf,
}

/// What the convolution operator of this name (without `aten::`) computes; `None` for other
/// operators.
pub fn role(name: &str) -> Option<ConvRole> {
    Some(match args(name)?.grads {
        Grads::Forward => ConvRole::Forward,
        Grads::Mask(_) => ConvRole::Backward,
        Grads::Input => ConvRole::InputHalf,
        Grads::Weight => ConvRole::WeightHalf,
    })
}

/// The input and weight shapes a convolution call records as tensors (typed or not), when it
/// records both.
pub fn shapes(name: &str, x: &OpInputs) -> Option<(Vec<u64>, Vec<u64>)> {
    let p = args(name)?.for_call(x, name);
    let input = x.dims(p.input?)?.to_vec();
    let weight = x.dims(p.weight?)?.to_vec();
    Some((input, weight))
}

/// The output gradient's shape a backward convolution call records (typed or not).
pub fn grad_output(name: &str, x: &OpInputs) -> Option<Vec<u64>> {
    let p = args(name)?.for_call(x, name);
    Some(x.dims(p.grad_output?)?.to_vec())
}

/// The call's output shape, when its arguments or what the trace records elsewhere give it.
fn output_shape(
    x: &OpInputs,
    p: &ConvArgs,
    input: &[u64],
    weight: &[u64],
    transposed: bool,
    groups: Option<u64>,
) -> Result<Option<Vec<u64>>, NoCost> {
    if let Some((_, dy)) = p.grad_output.and_then(|i| x.tensor(i)) {
        return Ok(Some(dy.to_vec()));
    }
    if let Some(o) = &x.derived.output {
        return Ok(Some(o.clone()));
    }
    let d = input.len() - 2;
    let kernel = &weight[2..];
    let list = |i: Option<usize>, default: u64, what: &str| match i {
        // No such argument: the op has none (`thnn_conv2d` has no dilation), which is 1 or 0.
        None => Ok(Some(vec![default; d])),
        // Recorded but impossible (a negative, a word): refused, never read as unrecorded.
        Some(i) => x.int_list_arg(i, d, what),
    };
    let (Some(stride), Some(dilation)) = (
        list(p.stride, 1, "stride")?,
        list(p.dilation, 1, "dilation")?,
    ) else {
        return Ok(None);
    };
    let padding = match p.padding.and_then(|i| x.concrete(i)) {
        Some(s) if s.contains("same") => Some(
            kernel
                .iter()
                .zip(&dilation)
                .map(|(&k, &dl)| dl * k.saturating_sub(1) / 2)
                .collect(),
        ),
        Some(s) if s.contains("valid") => Some(vec![0; d]),
        _ => list(p.padding, 0, "padding")?,
    };
    let Some(padding) = padding else {
        return Ok(None);
    };
    let output_padding = match p.output_padding {
        Some(i) if transposed => x
            .int_list_arg(i, d, "output_padding")?
            .unwrap_or_else(|| vec![0; d]),
        _ => vec![0; d],
    };
    if stride.contains(&0) || dilation.contains(&0) {
        return Err(shapes_err(format!(
            "impossible arguments: stride {stride:?}, dilation {dilation:?}"
        )));
    }
    let mut out = vec![input[0], 0];
    out[1] = if transposed {
        match groups {
            Some(g) => weight[1] * g,
            None => return Ok(None),
        }
    } else {
        weight[0]
    };
    for i in 0..d {
        let span = dilation[i]
            .checked_mul(kernel[i].max(1) - 1)
            .and_then(|s| s.checked_add(1));
        let o = if transposed {
            (input[2 + i].max(1) - 1)
                .checked_mul(stride[i])
                .and_then(|a| a.checked_add(span?))
                .and_then(|a| a.checked_add(output_padding[i]))
                .and_then(|a| a.checked_sub(padding[i].checked_mul(2)?))
        } else {
            padding[i]
                .checked_mul(2)
                .and_then(|p2| input[2 + i].checked_add(p2))
                .and_then(|padded| padded.checked_sub(span?))
                .map(|room| room / stride[i] + 1)
        };
        match o {
            Some(o) if o > 0 => out.push(o),
            _ => {
                return Err(shapes_err(format!(
                    "impossible arguments: a kernel of {:?} (dilation {dilation:?}) over an input of {:?} padded by {padding:?} leaves no output",
                    kernel,
                    &input[2..]
                )));
            }
        }
    }
    Ok(Some(out))
}

/// What a convolution without its output's shape says.
const NO_OUTPUT: &str = "stride, padding and dilation not recorded (PyTorch records them from 2.1, in Concrete Inputs) and no autograd node or gradient gives the output's shape";

/// Convolutions of any dimension: input `[N, C, spatial…]`, weight `[K, C/groups, kernel…]`,
/// output `[N, K, out…]`. F = 2·N·K·∏out·(C/groups)·∏kernel (for 2D this is
/// [`roofline_model::analysis::dl::Conv2d::flops`]); B = input, weight, bias and output, each once. A
/// transposed convolution (weight `[C, K/groups, kernel…]`) does the same products with input
/// and output swapped: F = 2·N·C·∏in·(K/groups)·∏kernel.
///
/// The backward pass costs F once per gradient it computes (input, weight), as
/// [`roofline_model::analysis::dl::Conv2d`] counts each direction: it reads the output's gradient, the
/// weight when the input's gradient is computed and the input when the weight's is, and writes
/// the gradients it computes. The bias gradient (a sum) is not counted, as elsewhere.
pub(super) fn conv(x: &OpInputs, p: ConvArgs, name: &str) -> Result<OpCost, NoCost> {
    let p = p.for_call(x, name);
    let tensor = |i: Option<usize>| i.and_then(|i| x.tensor(i));
    let input = tensor(p.input).map(|(d, s)| (d, s.to_vec()));
    let input = input.or_else(|| {
        let s = x.derived.input.clone()?;
        Some((tensor(p.grad_output).or(tensor(p.weight))?.0, s))
    });
    let weight = tensor(p.weight)
        .map(|(_, s)| s.to_vec())
        .or_else(|| x.derived.weight.clone());
    let (Some((dt, xs)), Some(ws)) = (input, weight) else {
        return Err(shapes_err(
            "expected the input and weight tensors (or their shapes from the enclosing backward call)",
        ));
    };
    if xs.len() < 3 || ws.len() != xs.len() || ws[1] == 0 || xs.contains(&0) {
        return Err(shapes_err(
            "expected input [N,C,spatial...] and weight [K,C/groups,kernel...]",
        ));
    }
    let (n, c) = (xs[0], xs[1]);
    let recorded_groups = match p.groups.map(|i| x.int_arg(i, "groups")).transpose()? {
        Some(Some(0)) => return Err(shapes_err("impossible arguments: groups 0")),
        Some(g) => g,
        None => None,
    };
    // Whether transposed: by the op, its recorded flag, else the only reading the output's
    // shape fits.
    let known_output = tensor(p.grad_output)
        .map(|(_, s)| s.to_vec())
        .or_else(|| x.derived.output.clone());
    let transposed = match p.transposed {
        Transposed::No => false,
        Transposed::Yes => true,
        Transposed::Arg(i) => match (x.flag(i), &known_output) {
            (Some(t), _) => t,
            (None, Some(o)) if o.len() == xs.len() => {
                let plain = o[1] == ws[0] && c % ws[1] == 0;
                let transpose = c == ws[0] && o[1] % ws[1] == 0;
                match (plain, transpose) {
                    (true, false) => false,
                    (false, true) => true,
                    _ => {
                        return Err(shapes_err(
                            "whether the convolution is transposed is not recorded, and its shapes fit both readings",
                        ));
                    }
                }
            }
            (None, _) => return Err(shapes_err(NO_OUTPUT)),
        },
    };
    // Groups: recorded, else what the shapes say (C / (C/groups), or K / (K/groups) transposed).
    let groups = match recorded_groups {
        Some(g) => Some(g),
        None if !transposed => {
            if c % ws[1] != 0 {
                return Err(shapes_err(format!(
                    "input channels {c} are not a multiple of the weight's {} per group",
                    ws[1]
                )));
            }
            Some(c / ws[1])
        }
        None => known_output.as_ref().map(|o| o[1] / ws[1]),
    };
    let Some(out) = output_shape(x, &p, &xs, &ws, transposed, groups)? else {
        return Err(shapes_err(NO_OUTPUT));
    };
    let fits = out.len() == xs.len()
        && out[0] == n
        && if transposed {
            c == ws[0] && groups.is_some_and(|g| out[1] == ws[1] * g)
        } else {
            out[1] == ws[0] && groups.is_some_and(|g| c == ws[1] * g)
        };
    if !fits {
        return Err(shapes_err(format!(
            "the output {out:?} does not fit the input {xs:?} and weight {ws:?}"
        )));
    }
    let kernel = &ws[2..];
    let flops = if transposed {
        2.0 * n as f64 * c as f64 * numel(&xs[2..]) * ws[1] as f64 * numel(kernel)
    } else {
        2.0 * n as f64 * out[1] as f64 * numel(&out[2..]) * ws[1] as f64 * numel(kernel)
    };
    let elt = dt.bytes();
    let (xe, we, ye) = (numel(&xs), numel(&ws), numel(&out));
    let backward = |dx: bool, dw: bool| {
        let grads = f64::from(u8::from(dx) + u8::from(dw));
        // Reads dy, w for dx and x for dw; writes the gradients it computes.
        let read_write = if dx { we + xe } else { 0.0 } + if dw { xe + we } else { 0.0 };
        (flops * grads, elt * (ye + read_write))
    };
    let (flops, bytes) = match p.grads {
        Grads::Forward => {
            let bias = p.bias.map_or(0.0, |i| x.arg(i).bytes());
            let extra = p.extra.map_or(0.0, |i| x.arg(i).bytes());
            (flops, elt * (xe + we + ye) + bias + extra)
        }
        Grads::Input => backward(true, false),
        Grads::Weight => backward(false, true),
        Grads::Mask(i) => {
            let mask = x
                .mask::<3>(i)
                .map(|[a, b, _]| [a, b])
                .or_else(|| x.mask::<2>(i))
                .or(x.derived.grads);
            let Some([dx, dw]) = mask else {
                return Err(shapes_err(
                    "which gradients it computes (output_mask) is not recorded",
                ));
            };
            backward(dx, dw)
        }
    };
    let mut assumed = Vec::new();
    let datapath = match (dt, p.allow_tf32.and_then(|i| x.flag(i))) {
        (Dtype::F32, Some(true)) => Datapath::TensorTf32,
        (Dtype::F32, Some(false)) => Datapath::Fp32,
        (Dtype::F32, None) if !p.cpu => {
            assumed.push(
                "FP32 CUDA cores for a float convolution (cuDNN may use TF32 Tensor Cores: torch.backends.cudnn.allow_tf32 is on by default)"
                    .into(),
            );
            Datapath::Fp32
        }
        (d, _) => d.matmul(),
    };
    Ok(OpCost {
        complexity: Complexity::new(flops, bytes),
        datapath,
        family: Family::Conv,
        assumed,
    })
}

#[cfg(test)]
mod tests {

    use crate::operators::testing::{F, H, inputs, t};
    use crate::operators::{Arg, Derived, NoCost, OpInputs, op_cost};
    use roofline_model::analysis::dl::{Conv2d, Gemm};
    use roofline_model::bundle::Datapath;

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
        // Without Concrete Inputs nothing is assumed: F stays unknown, saying why…
        let bare = inputs(vec![t(F, &[2, 4, 9, 9]), t(F, &[6, 4, 3, 3])], None);
        match op_cost("aten::conv2d", &bare) {
            Err(NoCost::Shapes(why)) => assert!(why.contains("not recorded"), "{why}"),
            other => panic!("{other:?}"),
        }
        // …unless the output's shape is known from elsewhere in the trace (the autograd node):
        // then F and B are exact, with no assumption.
        let derived = OpInputs {
            derived: Derived {
                output: Some(vec![2, 6, 5, 5]),
                ..Derived::default()
            },
            ..bare
        };
        let c = op_cost("aten::conv2d", &derived).unwrap();
        assert_eq!(c.complexity.flops, reference.flops());
        assert_eq!(c.complexity.bytes, reference.bytes(4.0));
        assert!(c.assumed.iter().all(|a| a.contains("TF32")));
        // An output that does not fit the shapes is refused, not used.
        let wrong = OpInputs {
            derived: Derived {
                output: Some(vec![2, 7, 5, 5]),
                ..Derived::default()
            },
            ..derived
        };
        assert!(op_cost("aten::conv2d", &wrong).is_err());
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
        // Groups follow from the shapes when not recorded (the output's length from elsewhere).
        let y = with_output(
            inputs(vec![t(F, &[1, 4, 10]), t(F, &[6, 2, 3])], None),
            &[1, 6, 8],
        );
        assert_eq!(
            op_cost("aten::conv1d", &y).unwrap().complexity.flops,
            c.complexity.flops
        );
        // conv3d 1×1×1 is a GEMM of M = N·D·H·W.
        let z = with_output(
            inputs(vec![t(H, &[2, 3, 4, 5, 6]), t(H, &[7, 3, 1, 1, 1])], None),
            &[2, 7, 4, 5, 6],
        );
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
        // A network's first layer: its input needs no gradient, only the weight's is computed:
        // dy and x read, dw written (the weight is not read for it).
        let mut first = b;
        if let Some(c) = first.concrete.as_mut() {
            c[10] = "[False, True, False]".into();
        }
        let c = op_cost("aten::convolution_backward", &first).unwrap();
        assert_eq!(c.complexity.flops, fwd.flops());
        assert_eq!(c.complexity.bytes, 4.0 * (ye + xe + we));
    }

    fn with_output(x: OpInputs, output: &[u64]) -> OpInputs {
        OpInputs {
            derived: Derived {
                output: Some(output.to_vec()),
                ..Derived::default()
            },
            ..x
        }
    }

    /// ResNet-50's stem as PyTorch 1.9 records it (the real TensorBoard-plugin trace of
    /// `tests/fixtures/traces/`): batch 32, 3×224×224 → 64×112×112, a 7×7 kernel at stride 2 and
    /// padding 3, none of which is recorded; the autograd node `CudnnConvolutionBackward` records
    /// the output's gradient `[32, 64, 112, 112]`.
    #[test]
    fn pytorch_1_9_convolutions_by_hand() {
        let stem = Conv2d {
            n: 32,
            h: 224,
            w: 224,
            c: 3,
            k: 64,
            r: 7,
            s: 7,
            stride: 2,
            pad: 3,
        };
        let (x, w, dy) = (
            t(F, &[32, 3, 224, 224]),
            t(F, &[64, 3, 7, 7]),
            t(F, &[32, 64, 112, 112]),
        );
        // cudnn_convolution(self, weight, padding, stride, dilation, groups, benchmark,
        // deterministic, allow_tf32): 9 arguments, no Concrete Inputs.
        let mut nine = vec![x.clone(), w.clone()];
        nine.extend(std::iter::repeat_n(Arg::Other, 7));
        let fwd = with_output(inputs(nine, None), &[32, 64, 112, 112]);
        let c = op_cost("aten::cudnn_convolution", &fwd).unwrap();
        assert_eq!(c.complexity.flops, stem.flops());
        assert_eq!(c.complexity.bytes, stem.bytes(4.0));
        // The 1.8–1.10 backward: cudnn_convolution_backward(self, grad_output, weight, …,
        // output_mask) around its two halves, whose presence says which gradients it computes.
        let mut args = vec![x.clone(), dy.clone(), w.clone()];
        args.extend(std::iter::repeat_n(Arg::Other, 8));
        let whole = inputs(args, None);
        assert!(op_cost("aten::cudnn_convolution_backward", &whole).is_err());
        let weight_only = OpInputs {
            derived: Derived {
                grads: Some([false, true]),
                ..Derived::default()
            },
            ..whole
        };
        let c = op_cost("aten::cudnn_convolution_backward", &weight_only).unwrap();
        assert_eq!(c.complexity.flops, stem.flops());
        // The halves: the input's (or weight's) size is an unrecorded integer list, its shape
        // the enclosing call's.
        let (xe, we, ye) = stem.elements();
        let mut half = vec![Arg::Other, dy.clone(), w];
        half.extend(std::iter::repeat_n(Arg::Other, 7));
        let input_half = OpInputs {
            derived: Derived {
                input: Some(vec![32, 3, 224, 224]),
                ..Derived::default()
            },
            ..inputs(half, None)
        };
        let c = op_cost("aten::cudnn_convolution_backward_input", &input_half).unwrap();
        assert_eq!(c.complexity.flops, stem.flops());
        assert_eq!(c.complexity.bytes, 4.0 * (ye + we + xe));
        let mut half = vec![Arg::Other, dy, x];
        half.extend(std::iter::repeat_n(Arg::Other, 7));
        let weight_half = OpInputs {
            derived: Derived {
                weight: Some(vec![64, 3, 7, 7]),
                ..Derived::default()
            },
            ..inputs(half, None)
        };
        let c = op_cost("aten::cudnn_convolution_backward_weight", &weight_half).unwrap();
        assert_eq!(c.complexity.flops, stem.flops());
        assert_eq!(c.complexity.bytes, 4.0 * (ye + xe + we));
        // Without the enclosing call's shapes, the halves have no cost.
        let bare = OpInputs {
            derived: Derived::default(),
            ..input_half
        };
        assert!(op_cost("aten::cudnn_convolution_backward_input", &bare).is_err());
    }

    /// The CPU backends' argument orders (PyTorch 2.15's schemas): `mkldnn_convolution` puts
    /// padding before stride, `_slow_conv2d_forward` has the kernel size third and no dilation,
    /// `_slow_conv2d_backward` starts with the output's gradient.
    #[test]
    fn cpu_backends_by_hand() {
        let conv = Conv2d {
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
        let (x, w, b) = (t(F, &[2, 4, 9, 9]), t(F, &[6, 4, 3, 3]), t(F, &[6]));
        let m = inputs(
            vec![
                x.clone(),
                w.clone(),
                b.clone(),
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
            ],
            Some(&["", "", "", "[1, 1]", "[2, 2]", "[1, 1]", "1"]),
        );
        let c = op_cost("aten::mkldnn_convolution", &m).unwrap();
        assert_eq!(c.complexity.flops, conv.flops());
        assert_eq!(c.complexity.bytes, conv.bytes(4.0) + 24.0);
        assert!(c.assumed.is_empty(), "{:?}", c.assumed);
        let slow = inputs(
            vec![x.clone(), w.clone(), Arg::Other, b, Arg::Other, Arg::Other],
            Some(&["", "", "[3, 3]", "", "[2, 2]", "[1, 1]"]),
        );
        let c = op_cost("aten::_slow_conv2d_forward", &slow).unwrap();
        assert_eq!(c.complexity.flops, conv.flops());
        let back = inputs(
            vec![
                t(F, &[2, 6, 5, 5]),
                x,
                w,
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
            ],
            Some(&[
                "",
                "",
                "",
                "[3, 3]",
                "[2, 2]",
                "[1, 1]",
                "[True, True, False]",
            ]),
        );
        let c = op_cost("aten::_slow_conv2d_backward", &back).unwrap();
        assert_eq!(c.complexity.flops, 2.0 * conv.flops());
    }

    /// Impossible arguments get no cost: stride or dilation 0, groups 0, a kernel larger than
    /// its padded input, a padding that would overflow.
    #[test]
    fn impossible_arguments_are_refused() {
        let x = |concrete: &[&str]| {
            inputs(
                vec![t(F, &[2, 4, 9, 9]), t(F, &[6, 4, 3, 3]), Arg::Other],
                Some(concrete),
            )
        };
        for bad in [
            ["", "", "", "[0, 0]", "[1, 1]", "[1, 1]", "1"],
            ["", "", "", "[1, 1]", "[1, 1]", "[0, 0]", "1"],
            ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "0"],
            ["", "", "", "[1, 1]", "[0, 0]", "[9, 9]", "1"],
            [
                "",
                "",
                "",
                "[1, 1]",
                "[9223372036854775807, 1]",
                "[1, 1]",
                "1",
            ],
        ] {
            match op_cost("aten::conv2d", &x(&bad)) {
                Err(NoCost::Shapes(why)) => assert!(why.contains("impossible"), "{why}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }
}
