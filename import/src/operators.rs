//! Analytical complexity of PyTorch operators from the shapes and types torch.profiler records
//! (`record_shapes=True`): one rule per operator family, beside [`roofline_model::dl`], whose GEMM, conv2d
//! and LSTM counts they reuse.
//!
//! The conventions are those of Wang et al., "Time-Based Roofline for Deep Learning Performance
//! Analysis" (DLS workshop at SC 2020), as in [`roofline_model::dl`]: F counts the operator's multiply-adds
//! as 2 FLOPs each (bias additions are not counted, the bias is read in B); B is the minimum
//! traffic, every input tensor read once and every output written once in its element size.
//! Special functions (exp, tanh, sigmoid, the maximum of a softmax) are not counted, as FLOP
//! counters (Nsight Compute's `sm__sass_thread_inst_executed_op_*` add/mul/fma metrics) do not
//! count them either. Elementwise operators get B only (F = 0).
//!
//! Where a trace lacks what a rule needs (a convolution's stride without `Concrete Inputs`), the
//! rule uses the PyTorch default and says so in [`OpCost::assumed`].

use roofline_model::bundle::{Complexity, Datapath};
use roofline_model::dl::{Gemm, Lstm};

pub mod inductor;
mod movement;
mod pooling;

use movement::Scatter;
use pooling::Pool;

/// One recorded operator argument: its shape when it is a tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// A tensor of this element type and shape (`[]` for a 0-d tensor).
    Tensor(Dtype, Vec<u64>),
    /// A list of tensors (newer PyTorch records their shapes; older ones record `[]`).
    Tensors(Vec<Vec<u64>>),
    /// Anything else: a scalar, an int list, a missing optional tensor.
    Other,
}

impl Arg {
    /// The shape, when the argument is a tensor.
    pub fn shape(&self) -> Option<&[u64]> {
        match self {
            Arg::Tensor(_, s) => Some(s),
            _ => None,
        }
    }

    /// Elements of a tensor argument (1 for a 0-d tensor); 0 otherwise.
    pub fn numel(&self) -> f64 {
        match self {
            Arg::Tensor(_, s) => numel(s),
            _ => 0.0,
        }
    }

    /// Bytes of a tensor argument; 0 otherwise.
    pub fn bytes(&self) -> f64 {
        match self {
            Arg::Tensor(d, s) => numel(s) * d.bytes(),
            _ => 0.0,
        }
    }
}

fn numel(s: &[u64]) -> f64 {
    s.iter().map(|&d| d as f64).product()
}

/// Tensor element types, as torch.profiler names them in `Input type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// `double`.
    F64,
    /// `float`.
    F32,
    /// `c10::Half`.
    F16,
    /// `c10::BFloat16`.
    Bf16,
    /// The `c10::Float8_*` types.
    F8,
    /// `long`.
    I64,
    /// `int`.
    I32,
    /// `short`.
    I16,
    /// `signed char`.
    I8,
    /// `unsigned char`.
    U8,
    /// `bool`.
    Bool,
    /// `c10::complex<float>`.
    C64,
    /// `c10::complex<double>`.
    C128,
}

impl Dtype {
    /// The type of a recorded `Input type` string; `None` for non-tensor arguments (`Scalar`,
    /// `int[]`, `TensorList`, empty).
    pub fn from_profiler(s: &str) -> Option<Dtype> {
        Some(match s {
            "double" => Dtype::F64,
            "float" => Dtype::F32,
            "c10::Half" | "Half" => Dtype::F16,
            "c10::BFloat16" | "BFloat16" => Dtype::Bf16,
            "long" | "long int" | "int64_t" => Dtype::I64,
            "int" => Dtype::I32,
            "short" => Dtype::I16,
            "signed char" => Dtype::I8,
            "unsigned char" => Dtype::U8,
            "bool" => Dtype::Bool,
            "c10::complex<float>" => Dtype::C64,
            "c10::complex<double>" => Dtype::C128,
            s if s.starts_with("c10::Float8_") => Dtype::F8,
            _ => return None,
        })
    }

    /// The type of a `ScalarType` code, as `Concrete Inputs` records a `dtype` argument (`"6"`
    /// for float): c10's `ScalarType` enumeration (`c10/core/ScalarType.h`).
    pub fn from_scalar_type(code: &str) -> Option<Dtype> {
        Some(match code.trim().parse::<u32>().ok()? {
            0 => Dtype::U8,
            1 => Dtype::I8,
            2 => Dtype::I16,
            3 => Dtype::I32,
            4 => Dtype::I64,
            5 => Dtype::F16,
            6 => Dtype::F32,
            7 => Dtype::F64,
            9 => Dtype::C64,
            10 => Dtype::C128,
            11 => Dtype::Bool,
            15 => Dtype::Bf16,
            23..=26 => Dtype::F8,
            _ => return None,
        })
    }

    /// Whether the type is an integer or boolean type (PyTorch's `isIntegralType(t,
    /// includeBool=true)`).
    pub fn is_integral(self) -> bool {
        matches!(
            self,
            Dtype::I64 | Dtype::I32 | Dtype::I16 | Dtype::I8 | Dtype::U8 | Dtype::Bool
        )
    }

    /// PyTorch's name of the type (`torch.bfloat16` without the module).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F64 => "float64",
            Dtype::F32 => "float32",
            Dtype::F16 => "float16",
            Dtype::Bf16 => "bfloat16",
            Dtype::F8 => "float8",
            Dtype::I64 => "int64",
            Dtype::I32 => "int32",
            Dtype::I16 => "int16",
            Dtype::I8 => "int8",
            Dtype::U8 => "uint8",
            Dtype::Bool => "bool",
            Dtype::C64 => "complex64",
            Dtype::C128 => "complex128",
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::F64 | Dtype::I64 | Dtype::C64 => 8.0,
            Dtype::F32 | Dtype::I32 => 4.0,
            Dtype::F16 | Dtype::Bf16 | Dtype::I16 => 2.0,
            Dtype::F8 | Dtype::I8 | Dtype::U8 | Dtype::Bool => 1.0,
            Dtype::C128 => 16.0,
        }
    }

    /// The CUDA-core datapath of arithmetic on this type (FP32 for integer and boolean types,
    /// whose work is not counted as FLOPs anyway).
    pub fn cuda_core(self) -> Datapath {
        match self {
            Dtype::F64 | Dtype::C128 => Datapath::Fp64,
            Dtype::F16 => Datapath::Fp16,
            Dtype::Bf16 => Datapath::Bf16,
            _ => Datapath::Fp32,
        }
    }

    /// The datapath of a matrix product on this type: Tensor Cores for 16-bit, 8-bit float and
    /// int8 inputs; CUDA cores for FP32 and FP64 (TF32 and FP64 Tensor Cores depend on settings
    /// the trace does not record, see [`OpCost::assumed`]).
    pub fn matmul(self) -> Datapath {
        match self {
            Dtype::F16 => Datapath::TensorFp16,
            Dtype::Bf16 => Datapath::TensorBf16,
            Dtype::F8 => Datapath::TensorFp8,
            Dtype::I8 | Dtype::U8 => Datapath::TensorInt8,
            Dtype::F64 | Dtype::C128 => Datapath::Fp64,
            _ => Datapath::Fp32,
        }
    }
}

/// The element type of a call's tensor lists, as the name of a kernel it launched gives it
/// ([`kernel_elem`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListElem {
    /// A named type (`…Functor<float, …>`, `CatArrayBatchedCopy<c10::Half, …>`).
    Type(Dtype),
    /// A type known only by its size in bytes: kernels templated on PyTorch's `OpaqueType<N>`,
    /// as `cat`'s are in PyTorch 2.x (`CatArrayBatchedCopy<OpaqueType<4u>, …>`).
    Opaque(u8),
}

impl ListElem {
    /// Bytes per element.
    pub fn bytes(self) -> f64 {
        match self {
            ListElem::Type(d) => d.bytes(),
            ListElem::Opaque(n) => f64::from(n),
        }
    }

    /// The CUDA-core datapath: the type's; FP32 for an opaque type (the operators with tensor
    /// lists are bytes only: no FLOPs are counted on it, as for integer types).
    pub fn cuda_core(self) -> Datapath {
        match self {
            ListElem::Type(d) => d.cuda_core(),
            ListElem::Opaque(_) => Datapath::Fp32,
        }
    }

    /// How a note names it: `float32`, `a 4-byte type`.
    pub fn describe(self) -> String {
        match self {
            ListElem::Type(d) => d.name().to_string(),
            ListElem::Opaque(n) => format!("a {n}-byte type"),
        }
    }
}

/// What torch.profiler recorded for one operator call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpInputs {
    /// One entry per argument, from `Input Dims` and `Input type`.
    pub args: Vec<Arg>,
    /// `Concrete Inputs`: the values of scalar arguments as text (`"[2, 2]"`, `"True"`, `""`),
    /// when the trace has them.
    pub concrete: Option<Vec<String>>,
    /// The element type of the tensor-list arguments ([`Arg::Tensors`]), which torch.profiler
    /// records only as `TensorList`: the import reads it from the name of a kernel the call
    /// launched ([`kernel_elem`]). `None` when unknown.
    pub list_elem: Option<ListElem>,
}

impl OpInputs {
    /// Argument `i`, or [`Arg::Other`] past the end.
    fn arg(&self, i: usize) -> &Arg {
        self.args.get(i).unwrap_or(&Arg::Other)
    }

    fn tensor(&self, i: usize) -> Option<(Dtype, &[u64])> {
        match self.args.get(i) {
            Some(Arg::Tensor(d, s)) => Some((*d, s.as_slice())),
            _ => None,
        }
    }

    /// The concrete value of argument `i`, when recorded and not empty.
    fn concrete(&self, i: usize) -> Option<&str> {
        self.concrete
            .as_ref()?
            .get(i)
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
    }

    /// The items of argument `i`'s concrete value read as a list (`"[2, 2]"` → `["2", "2"]`,
    /// `"1"` → `["1"]`, `"[]"` → none), when recorded and not empty.
    fn items(&self, i: usize) -> Option<Vec<&str>> {
        let inner = self
            .concrete(i)?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim();
        Some(if inner.is_empty() {
            Vec::new()
        } else {
            inner.split(',').map(str::trim).collect()
        })
    }

    /// A `bool[N]` argument (an `output_mask`, recorded as `"[True, False, True]"`), when
    /// recorded with N items.
    fn mask<const N: usize>(&self, i: usize) -> Option<[bool; N]> {
        let items = self.items(i)?;
        (items.len() == N)
            .then(|| std::array::from_fn(|j| matches!(items[j], "True" | "true" | "1")))
    }

    fn int_list(&self, i: usize, len: usize) -> Option<Vec<u64>> {
        let v: Vec<u64> = self
            .items(i)?
            .iter()
            .map(|x| x.parse::<u64>().ok())
            .collect::<Option<_>>()?;
        match v.len() {
            1 => Some(vec![v[0]; len]),
            n if n == len => Some(v),
            _ => None,
        }
    }

    fn int(&self, i: usize) -> Option<u64> {
        self.concrete(i)?.parse().ok()
    }

    fn flag(&self, i: usize) -> Option<bool> {
        match self.concrete(i)? {
            "True" | "true" | "1" => Some(true),
            "False" | "false" | "0" => Some(false),
            _ => None,
        }
    }
}

/// An operator call's complexity and the datapath its work runs on.
#[derive(Debug, Clone, PartialEq)]
pub struct OpCost {
    /// F and B.
    pub complexity: Complexity,
    /// Where the FLOPs run, from the input type.
    pub datapath: Datapath,
    /// The rule family (`gemm`, `conv`, `attention`, `rnn`, `norm`, `softmax`, `embedding`,
    /// `elementwise`, `reduction`, `optimizer`, `movement`, `loss`, `pooling`, `inductor`).
    pub family: &'static str,
    /// What the rule had to assume because the trace did not record it.
    pub assumed: Vec<String>,
}

/// Why an operator call has no complexity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoCost {
    /// No rule for this operator.
    NoRule,
    /// A rule exists, but the recorded shapes do not fit it (or were not recorded).
    Shapes(String),
}

/// The operator's name without its namespace and in-place mark: `aten::add_` → `add`.
pub fn base_name(name: &str) -> &str {
    let n = name.strip_prefix("aten::").unwrap_or(name);
    n.strip_suffix('_').filter(|s| !s.is_empty()).unwrap_or(n)
}

/// The complexity of one operator call from its recorded inputs.
///
/// # Errors
/// [`NoCost::NoRule`] when no family covers the operator; [`NoCost::Shapes`] when the recorded
/// shapes do not fit its rule.
pub fn op_cost(name: &str, inputs: &OpInputs) -> Result<OpCost, NoCost> {
    if inductor::is_data_moving(name) {
        return inductor::data_moving(inputs);
    }
    if let Some(batched) = inductor::template_gemm(name) {
        return inductor::gemm(inputs, batched);
    }
    if !name.starts_with("aten::") {
        return Err(NoCost::NoRule);
    }
    let in_place = name.ends_with('_') && !name.ends_with("__");
    match base_name(name) {
        "mm" => gemm_2d(inputs, 0, 1, None),
        "addmm" => gemm_2d(inputs, 1, 2, Some(0)),
        "bmm" => bmm(inputs, 0, 1, None),
        "baddbmm" => bmm(inputs, 1, 2, Some(0)),
        "matmul" => matmul(inputs),
        "linear" => linear(inputs),
        "conv1d" | "conv2d" | "conv3d" => conv(inputs, ConvArgs::CONVND),
        "convolution" | "_convolution" => conv(inputs, ConvArgs::CONVOLUTION),
        "cudnn_convolution" => conv(inputs, ConvArgs::CUDNN),
        "convolution_backward" => conv(inputs, ConvArgs::BACKWARD),
        "scaled_dot_product_attention" => attention(inputs, Attn::SDPA),
        "_scaled_dot_product_flash_attention" => attention(inputs, Attn::SDPA_FLASH),
        "_scaled_dot_product_efficient_attention" => attention(inputs, Attn::SDPA_EFFICIENT),
        "_scaled_dot_product_cudnn_attention" => attention(inputs, Attn::SDPA_CUDNN),
        "_flash_attention_forward" => attention(inputs, Attn::FLASH),
        "_efficient_attention_forward" => attention(inputs, Attn::EFFICIENT),
        "_scaled_dot_product_flash_attention_backward" => {
            attention(inputs, Attn::SDPA_FLASH_BACKWARD)
        }
        "_scaled_dot_product_efficient_attention_backward" => {
            attention(inputs, Attn::SDPA_EFFICIENT_BACKWARD)
        }
        "_flash_attention_backward" => attention(inputs, Attn::FLASH_BACKWARD),
        "_efficient_attention_backward" => attention(inputs, Attn::EFFICIENT_BACKWARD),
        "lstm" => rnn(inputs, RnnKind::Lstm, RnnArgs::ATEN),
        "gru" => rnn(inputs, RnnKind::Gru, RnnArgs::ATEN),
        "_cudnn_rnn" => rnn(inputs, RnnKind::FromMode, RnnArgs::CUDNN),
        "_cudnn_rnn_backward" => rnn_backward(inputs),
        "layer_norm" | "native_layer_norm" => layer_norm(inputs),
        "native_layer_norm_backward" => norm_backward(inputs, LAYER_NORM_BACKWARD),
        "native_batch_norm_backward" => norm_backward(inputs, BATCH_NORM_BACKWARD),
        "cudnn_batch_norm_backward" => norm_backward(inputs, CUDNN_BATCH_NORM_BACKWARD),
        "batch_norm" | "native_batch_norm" | "cudnn_batch_norm" | "_batch_norm_impl_index" => {
            batch_norm(inputs)
        }
        "softmax" | "_softmax" | "log_softmax" | "_log_softmax" => softmax(inputs),
        "_softmax_backward_data" | "_log_softmax_backward_data" => softmax_backward(inputs),
        "embedding" => embedding(inputs),
        "embedding_dense_backward" => embedding_backward(inputs),
        "fill" | "zero" => write_only(inputs),
        // The in-place random fills (weight initialisation, `torch.rand`'s kernel).
        "uniform" | "normal" | "random" | "exponential" | "log_normal" | "cauchy" | "geometric"
            if in_place =>
        {
            write_only(inputs)
        }
        "copy" => copy(inputs),
        "sum" | "nansum" | "mean" | "nanmean" | "amax" | "amin" | "prod" | "var" | "std"
        | "logsumexp" => reduction(inputs, 1, ReduceOut::Same),
        "norm" | "linalg_vector_norm" => reduction(inputs, 2, ReduceOut::Same),
        "argmax" | "argmin" => reduction(inputs, 1, ReduceOut::Index),
        "any" | "all" => reduction(inputs, 1, ReduceOut::Bool),
        "max" | "min" => match inputs.arg(1) {
            Arg::Tensor(..) => elementwise(inputs, false, false),
            _ => reduction(inputs, 1, ReduceOut::ValueAndIndex),
        },
        "max_pool1d_with_indices" => pooling::pool(inputs, Pool::max(1)),
        "max_pool2d_with_indices" => pooling::pool(inputs, Pool::max(2)),
        "max_pool3d_with_indices" => pooling::pool(inputs, Pool::max(3)),
        "avg_pool1d" => pooling::pool(inputs, Pool::avg(1)),
        "avg_pool2d" => pooling::pool(inputs, Pool::avg(2)),
        "avg_pool3d" => pooling::pool(inputs, Pool::avg(3)),
        "_adaptive_avg_pool2d" => pooling::adaptive(inputs, 2, false),
        "_adaptive_avg_pool3d" => pooling::adaptive(inputs, 3, false),
        "adaptive_max_pool2d" => pooling::adaptive(inputs, 2, true),
        "adaptive_max_pool3d" => pooling::adaptive(inputs, 3, true),
        "max_pool2d_with_indices_backward" | "max_pool3d_with_indices_backward" => {
            pooling::backward(inputs, Some(7))
        }
        "adaptive_max_pool2d_backward" | "adaptive_max_pool3d_backward" => {
            pooling::backward(inputs, Some(2))
        }
        "avg_pool2d_backward"
        | "avg_pool3d_backward"
        | "_adaptive_avg_pool2d_backward"
        | "_adaptive_avg_pool3d_backward" => pooling::backward(inputs, None),
        "cat" => movement::cat(inputs),
        "index_select" => movement::index_select(inputs),
        "gather" => movement::gather(inputs),
        "scatter" => movement::scatter(inputs, Scatter::Assign),
        "scatter_add" | "scatter_reduce" => movement::scatter(inputs, Scatter::Accumulate),
        "index_add" => movement::index_add(inputs),
        "cumsum" | "cumprod" => movement::scan(inputs),
        "nll_loss_forward" | "nll_loss2d_forward" => movement::nll_loss(inputs),
        "nll_loss_backward" | "nll_loss2d_backward" => movement::nll_loss_backward(inputs),
        "index" | "index_put" | "_index_put_impl" => movement::advanced_indexing(inputs),
        "_fused_adam" | "_fused_adamw" => fused_optimizer(inputs, FUSED_ADAM),
        "_fused_sgd" => fused_optimizer(inputs, FUSED_SGD),
        n if n.starts_with("_foreach_") => foreach(inputs, &name["aten::_foreach_".len()..]),
        "native_dropout" => dropout(inputs),
        n if UNARY.contains(&n) => unary(inputs, in_place, n == "isnan" || n == "logical_not"),
        n if ELEMENTWISE.contains(&n) || COMPARISONS.contains(&n) => {
            elementwise(inputs, in_place, COMPARISONS.contains(&n))
        }
        _ => Err(NoCost::NoRule),
    }
}

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

fn shapes_err(what: impl Into<String>) -> NoCost {
    NoCost::Shapes(what.into())
}

/// A recorded dimension (`"-1"`) as an index into a tensor of `rank` dimensions (a 0-d tensor
/// takes 0 and -1, as PyTorch's `maybe_wrap_dim` does).
fn wrap_dim(d: &str, rank: usize) -> Option<usize> {
    let rank = rank.max(1) as i64;
    let d: i64 = d.trim().parse().ok()?;
    let d = if d < 0 { d + rank } else { d };
    (0..rank).contains(&d).then_some(d as usize)
}

/// What a matrix product of `dt` assumes about its datapath (the trace does not record it).
fn matmul_assumed(dt: Dtype) -> Vec<String> {
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

fn gemm_cost(g: Gemm, batch: f64, dt: Dtype, extra_bytes: f64, family: &'static str) -> OpCost {
    let assumed = matmul_assumed(dt);
    OpCost {
        complexity: Complexity {
            flops: batch * g.flops(),
            bytes: batch * g.bytes(dt.bytes()) + extra_bytes,
        },
        datapath: dt.matmul(),
        family,
        assumed,
    }
}

/// `mm(A[M,K], B[K,N])` and `addmm(bias, A, B)`: F = 2·M·N·K.
fn gemm_2d(x: &OpInputs, a: usize, b: usize, bias: Option<usize>) -> Result<OpCost, NoCost> {
    match (x.tensor(a), x.tensor(b)) {
        (Some((dt, &[m, k])), Some((_, &[k2, n]))) if k == k2 => {
            let extra = bias.map_or(0.0, |i| x.arg(i).bytes());
            Ok(gemm_cost(Gemm { m, n, k }, 1.0, dt, extra, "gemm"))
        }
        _ => Err(shapes_err("expected matrices [M,K] and [K,N]")),
    }
}

/// `bmm(A[b,M,K], B[b,K,N])` and `baddbmm(bias, A, B)`: F = b·2·M·N·K.
fn bmm(x: &OpInputs, a: usize, b: usize, bias: Option<usize>) -> Result<OpCost, NoCost> {
    match (x.tensor(a), x.tensor(b)) {
        (Some((dt, &[bt, m, k])), Some((_, &[bt2, k2, n]))) if k == k2 && bt == bt2 => {
            let extra = bias.map_or(0.0, |i| x.arg(i).bytes());
            Ok(gemm_cost(Gemm { m, n, k }, bt as f64, dt, extra, "gemm"))
        }
        _ => Err(shapes_err(
            "expected batches of matrices [b,M,K] and [b,K,N]",
        )),
    }
}

/// `matmul(A, B)` with NumPy semantics: vectors become 1×K or K×1, leading dimensions broadcast.
fn matmul(x: &OpInputs) -> Result<OpCost, NoCost> {
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
    let mut c = gemm_cost(g, numel(&batch), dt, 0.0, "gemm");
    c.complexity.bytes = bytes;
    Ok(c)
}

/// The broadcast shape of two shapes, NumPy rules.
fn broadcast(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for (i, o) in out.iter_mut().enumerate() {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        *o = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

/// `linear(x[…,in], W[out,in], bias[out])`: a GEMM with M = the leading elements of x.
fn linear(x: &OpInputs) -> Result<OpCost, NoCost> {
    match (x.tensor(0), x.tensor(1)) {
        (Some((dt, xs)), Some((_, &[out, inp]))) if xs.last() == Some(&inp) => {
            let m = xs[..xs.len() - 1].iter().product::<u64>();
            Ok(gemm_cost(
                Gemm { m, n: out, k: inp },
                1.0,
                dt,
                x.arg(2).bytes(),
                "gemm",
            ))
        }
        _ => Err(shapes_err("expected input [...,in] and weight [out,in]")),
    }
}

/// Where a convolution operator keeps its arguments (indices into the recorded inputs).
#[derive(Debug, Clone, Copy)]
struct ConvArgs {
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
    const CONVND: ConvArgs = ConvArgs {
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
    const CONVOLUTION: ConvArgs = ConvArgs {
        transposed: Some(6),
        groups: 8,
        allow_tf32: Some(12),
        ..ConvArgs::CONVND
    };
    /// `cudnn_convolution(self, weight, padding, stride, dilation, groups, benchmark,
    /// deterministic, allow_tf32)`.
    const CUDNN: ConvArgs = ConvArgs {
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
    const BACKWARD: ConvArgs = ConvArgs {
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
fn conv(x: &OpInputs, p: ConvArgs) -> Result<OpCost, NoCost> {
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
        family: "conv",
        assumed,
    })
}

/// Where an attention operator keeps its arguments.
#[derive(Debug, Clone, Copy)]
struct Attn {
    /// Index of the query (the key and value follow it).
    q: usize,
    /// `[B, L, H, E]` instead of `[B, H, L, E]`.
    seq_major: bool,
    /// Index of the causal flag (`is_causal`) or mask type (`custom_mask_type`).
    causal: usize,
    /// The causal argument is an int mask type (0 none, 1 top-left, 2 bottom-right).
    mask_type: bool,
    /// The backward pass: the gradient of the output comes first.
    backward: bool,
}

impl Attn {
    const SDPA: Attn = Attn {
        q: 0,
        seq_major: false,
        causal: 5,
        mask_type: false,
        backward: false,
    };
    const SDPA_FLASH: Attn = Attn {
        causal: 4,
        ..Attn::SDPA
    };
    const SDPA_EFFICIENT: Attn = Attn {
        causal: 6,
        ..Attn::SDPA
    };
    const SDPA_CUDNN: Attn = Attn {
        causal: 6,
        ..Attn::SDPA
    };
    const FLASH: Attn = Attn {
        q: 0,
        seq_major: true,
        causal: 8,
        mask_type: false,
        backward: false,
    };
    const EFFICIENT: Attn = Attn {
        causal: 9,
        mask_type: true,
        ..Attn::FLASH
    };
    const SDPA_FLASH_BACKWARD: Attn = Attn {
        q: 1,
        seq_major: false,
        causal: 11,
        mask_type: false,
        backward: true,
    };
    const SDPA_EFFICIENT_BACKWARD: Attn = Attn {
        causal: 11,
        ..Attn::SDPA_FLASH_BACKWARD
    };
    const FLASH_BACKWARD: Attn = Attn {
        q: 1,
        seq_major: true,
        causal: 11,
        mask_type: false,
        backward: true,
    };
    const EFFICIENT_BACKWARD: Attn = Attn {
        causal: 14,
        mask_type: true,
        ..Attn::FLASH_BACKWARD
    };
}

/// Query–key pairs a causal mask keeps, for `l` queries and `s` keys: query `i` sees keys
/// `j ≤ i + offset` (offset 0 is PyTorch's `is_causal`, aligned top-left; `s − l` is aligned
/// bottom-right).
pub fn causal_pairs(l: u64, s: u64, offset: i64) -> f64 {
    (0..l as i64)
        .map(|i| (i + 1 + offset).clamp(0, s as i64) as f64)
        .sum()
}

/// Scaled dot-product attention, F = 2·B·H·pairs·E (QKᵀ) + 2·B·H·pairs·Ev (PV) with pairs = L·S,
/// or the causal count; the softmax is not counted (exp is a special function). B = Q, K, V and
/// the output. The backward pass recomputes QKᵀ and does four more products of the same size
/// (dV, dP, dQ, dK): 2.5 × the forward F; B adds dO, dQ, dK and dV.
fn attention(x: &OpInputs, a: Attn) -> Result<OpCost, NoCost> {
    let (Some((dt, q)), Some((_, k)), Some((_, v))) =
        (x.tensor(a.q), x.tensor(a.q + 1), x.tensor(a.q + 2))
    else {
        return Err(shapes_err("expected query, key and value tensors"));
    };
    let (&[b, d1, d2, e], &[_, k1, k2, _], &[_, _, _, ev]) = (q, k, v) else {
        return Err(shapes_err("expected 4-d query, key and value"));
    };
    let ((h, l), s) = if a.seq_major {
        ((d2, d1), k1)
    } else {
        ((d1, d2), k2)
    };
    let mut assumed = Vec::new();
    let pairs = match (a.mask_type, x.concrete(a.causal)) {
        (false, Some(_)) if x.flag(a.causal) == Some(true) => causal_pairs(l, s, 0),
        (false, Some(_)) => (l * s) as f64,
        (true, Some(t)) => match t.parse::<i64>() {
            Ok(1) => causal_pairs(l, s, 0),
            Ok(2) => causal_pairs(l, s, s as i64 - l as i64),
            _ => (l * s) as f64,
        },
        (_, None) => {
            assumed.push("not causal (is_causal not recorded)".into());
            (l * s) as f64
        }
    };
    let forward = 2.0 * (b * h) as f64 * pairs * (e + ev) as f64;
    let out = (b * h * l * ev) as f64;
    let (qkv, elt) = (numel(q) + numel(k) + numel(v), dt.bytes());
    let (flops, bytes) = if a.backward {
        (2.5 * forward, elt * (2.0 * qkv + 2.0 * out))
    } else {
        (forward, elt * (qkv + out))
    };
    Ok(OpCost {
        complexity: Complexity { flops, bytes },
        datapath: dt.matmul(),
        family: "attention",
        assumed,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RnnKind {
    Lstm,
    Gru,
    /// `_cudnn_rnn`: the `mode` argument says (2 LSTM, 3 GRU).
    FromMode,
}

/// Where a recurrent operator keeps its arguments.
#[derive(Debug, Clone, Copy)]
struct RnnArgs {
    hx: usize,
    mode: Option<usize>,
    layers: usize,
    bidirectional: usize,
    batch_first: usize,
}

impl RnnArgs {
    /// `lstm|gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    /// batch_first)`.
    const ATEN: RnnArgs = RnnArgs {
        hx: 1,
        mode: None,
        layers: 4,
        bidirectional: 7,
        batch_first: 8,
    };
    /// `_cudnn_rnn(input, weight, weight_stride0, weight_buf, hx, cx, mode, hidden_size,
    /// proj_size, num_layers, batch_first, dropout, train, bidirectional, …)`.
    const CUDNN: RnnArgs = RnnArgs {
        hx: 4,
        mode: Some(6),
        layers: 9,
        bidirectional: 13,
        batch_first: 10,
    };
    /// `_cudnn_rnn_backward(input, weight, weight_stride0, weight_buf, hx, cx, output,
    /// grad_output, grad_hy, grad_cy, mode, hidden_size, proj_size, num_layers, batch_first,
    /// dropout, train, bidirectional, …)`.
    const CUDNN_BACKWARD: RnnArgs = RnnArgs {
        hx: 4,
        mode: Some(10),
        layers: 13,
        bidirectional: 17,
        batch_first: 14,
    };
}

/// FLOPs of the GRU cell per (batch, hidden) element: 6 bias additions, 2 additions of the input
/// and hidden parts of r and z, `r·(W_hn h)` and its addition (2), `(1 − z)·n + z·h` (4). The
/// sigmoids and tanh are special functions, not counted (as [`roofline_model::dl::LSTM_CELL_FLOPS`]).
pub const GRU_CELL_FLOPS: f64 = 14.0;

/// A recurrent call's dimensions, read from its input and hidden state and its recorded
/// arguments.
struct RnnShape {
    kind: RnnKind,
    dt: Dtype,
    /// Time steps, batch, input features, hidden units.
    t: u64,
    b: u64,
    i: u64,
    h: u64,
    layers: u64,
    dirs: u64,
    assumed: Vec<String>,
}

impl RnnShape {
    fn read(x: &OpInputs, kind: RnnKind, p: RnnArgs) -> Result<RnnShape, NoCost> {
        let Some((dt, input)) = x.tensor(0) else {
            return Err(shapes_err("expected an input tensor"));
        };
        let &[d0, d1, i] = input else {
            return Err(shapes_err("expected a 3-d input [T,B,I]"));
        };
        let hx: Option<&[u64]> = match x.arg(p.hx) {
            Arg::Tensor(_, s) => Some(s),
            Arg::Tensors(list) => list.first().map(Vec::as_slice),
            Arg::Other => None,
        };
        let Some(&[ld, _, h]) = hx else {
            return Err(shapes_err(
                "the hidden state's shape [layers·directions, B, H] was not recorded",
            ));
        };
        let kind = match (kind, p.mode.and_then(|m| x.int(m))) {
            (RnnKind::FromMode, Some(2)) => RnnKind::Lstm,
            (RnnKind::FromMode, Some(3)) => RnnKind::Gru,
            (RnnKind::FromMode, _) => {
                return Err(shapes_err("mode not recorded, or not LSTM or GRU"));
            }
            (k, _) => k,
        };
        let mut assumed = Vec::new();
        let dirs = match x.flag(p.bidirectional) {
            Some(true) => 2,
            Some(false) => 1,
            None => {
                assumed.push("one direction (bidirectional not recorded)".into());
                1
            }
        };
        let layers = x.int(p.layers).unwrap_or(ld / dirs).max(1);
        let (t, b) = match x.flag(p.batch_first) {
            Some(true) => (d1, d0),
            Some(false) => (d0, d1),
            None => {
                assumed.push("sequence-first input (batch_first not recorded)".into());
                (d0, d1)
            }
        };
        Ok(RnnShape {
            kind,
            dt,
            t,
            b,
            i,
            h,
            layers,
            dirs,
            assumed,
        })
    }

    /// Every layer and direction as an LSTM layer of [`roofline_model::dl::Lstm`] (a layer above the
    /// first reads the `dirs·H` outputs of the one below).
    fn lstm_layers(&self) -> impl Iterator<Item = Lstm> + '_ {
        (0..self.layers).flat_map(move |layer| {
            let input = if layer == 0 {
                self.i
            } else {
                self.dirs * self.h
            };
            (0..self.dirs).map(move |_| Lstm {
                batch: self.b,
                seq: self.t,
                input,
                hidden: self.h,
            })
        })
    }
}

/// LSTM and GRU, every layer and direction: an LSTM layer is [`roofline_model::dl::Lstm`]; a GRU layer
/// has 3 gates (`2·B·(I+H)·3H` per step plus [`GRU_CELL_FLOPS`]).
fn rnn(x: &OpInputs, kind: RnnKind, p: RnnArgs) -> Result<OpCost, NoCost> {
    let r = RnnShape::read(x, kind, p)?;
    let elt = r.dt.bytes();
    let (mut flops, mut bytes) = (0.0, 0.0);
    for l in r.lstm_layers() {
        match r.kind {
            RnnKind::Gru => {
                let (b, t, i, h) = (l.batch, l.seq, l.input, l.hidden);
                let step = 2.0 * (b * (i + h) * 3 * h) as f64 + GRU_CELL_FLOPS * (b * h) as f64;
                flops += t as f64 * step;
                // x, weights, both biases, h0 read; every h written.
                let (bf, tf, inf, hf) = (b as f64, t as f64, i as f64, h as f64);
                bytes += elt
                    * (tf * bf * inf + (inf + hf) * 3.0 * hf + 6.0 * hf + bf * hf + tf * bf * hf);
            }
            _ => {
                flops += l.flops();
                bytes += l.bytes(elt);
            }
        }
    }
    Ok(OpCost {
        complexity: Complexity { flops, bytes },
        datapath: r.dt.matmul(),
        family: "rnn",
        assumed: r.assumed,
    })
}

/// FLOPs of the LSTM cell's backward per (batch, hidden) element and step, counted as
/// [`roofline_model::dl::LSTM_CELL_FLOPS`] is (special functions not counted): the output's and the
/// recurrent gradient of h added (1); `do = dh·tanh(c)` (1); `dc += dh·o·(1 − tanh²(c))` (5);
/// `df = dc·c₋₁`, `di = dc·g`, `dg = dc·i` and `dc₋₁ = dc·f` (4); the gates' pre-activation
/// gradients, `s·(1 − s)` times the gradient for the three sigmoids and `(1 − g²)` times it for
/// the tanh (3 each, 12); the four bias gradients accumulated over the batch (4).
pub const LSTM_CELL_BACKWARD_FLOPS: f64 = 27.0;

/// `_cudnn_rnn_backward(input, weight, weight_stride0, weight_buf, hx, cx, output, grad_output,
/// grad_hy, grad_cy, mode, hidden_size, proj_size, num_layers, batch_first, dropout, train,
/// bidirectional, batch_sizes, dropout_state, reserve, output_mask)`, LSTM only. F per layer,
/// direction and step: the gates' gradient times the weights, for the gradients of x and h (one
/// [`roofline_model::dl::Lstm::step_gemm`]), the weights' gradient (another, when `output_mask` asks for
/// it) and [`LSTM_CELL_BACKWARD_FLOPS`]. B: the input, weights, initial states, output, the
/// output's and final states' gradients and cuDNN's `reserve` (the saved activations) read; the
/// gradients `output_mask` asks for written, each the size of what it is the gradient of. The
/// weights are `weight_buf` when recorded, else the `weight` list in the input's type.
fn rnn_backward(x: &OpInputs) -> Result<OpCost, NoCost> {
    let mut r = RnnShape::read(x, RnnKind::FromMode, RnnArgs::CUDNN_BACKWARD)?;
    if !matches!(r.kind, RnnKind::Lstm) {
        return Err(NoCost::NoRule);
    }
    let mask = x.mask::<4>(21).unwrap_or_else(|| {
        r.assumed
            .push("every gradient computed (output_mask not recorded)".into());
        [true; 4]
    });
    let weights = match x.arg(3).bytes() {
        w if w > 0.0 => w,
        _ => match x.arg(1) {
            Arg::Tensors(list) => list.iter().map(|s| numel(s)).sum::<f64>() * r.dt.bytes(),
            _ => {
                return Err(shapes_err(
                    "neither weight_buf nor the weights' shapes recorded",
                ));
            }
        },
    };
    let gemm_passes = if mask[3] { 2.0 } else { 1.0 };
    let flops: f64 = r
        .lstm_layers()
        .map(|l| {
            let cell = LSTM_CELL_BACKWARD_FLOPS * (l.batch * l.hidden) as f64;
            l.seq as f64 * (gemm_passes * l.step_gemm().flops() + cell)
        })
        .sum();
    let read: f64 = [0, 4, 5, 6, 7, 8, 9, 20]
        .iter()
        .map(|&a| x.arg(a).bytes())
        .sum::<f64>()
        + weights;
    let written: f64 = [
        x.arg(0).bytes(),
        x.arg(4).bytes(),
        x.arg(5).bytes(),
        weights,
    ]
    .into_iter()
    .zip(mask)
    .filter_map(|(b, m)| m.then_some(b))
    .sum();
    Ok(OpCost {
        complexity: Complexity {
            flops,
            bytes: read + written,
        },
        datapath: r.dt.matmul(),
        family: "rnn",
        assumed: r.assumed,
    })
}

/// `layer_norm(input, normalized_shape, weight, bias, eps)`: per element 1 FLOP for the mean,
/// 3 for the variance (difference, square and accumulate), 2 to normalise (subtract, scale) and
/// 2 for the affine transform when weight and bias are given. B = x, y, weight and bias.
fn layer_norm(x: &OpInputs) -> Result<OpCost, NoCost> {
    let Some((dt, s)) = x.tensor(0) else {
        return Err(shapes_err("expected an input tensor"));
    };
    let affine = x.arg(2).numel() > 0.0 || x.arg(3).numel() > 0.0;
    let n = numel(s);
    let per = if affine { 8.0 } else { 6.0 };
    Ok(OpCost {
        complexity: Complexity {
            flops: per * n,
            bytes: 2.0 * n * dt.bytes() + x.arg(2).bytes() + x.arg(3).bytes(),
        },
        datapath: dt.cuda_core(),
        family: "norm",
        assumed: Vec::new(),
    })
}

/// Where a normalisation's backward call has its arguments.
#[derive(Clone, Copy)]
struct NormBackward {
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
const LAYER_NORM_BACKWARD: NormBackward = NormBackward {
    grad_out: 0,
    input: 1,
    weight: 5,
    stats: [3, 4],
    mask: Some(7),
    train: None,
};

/// `native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
/// save_invstd, train, eps, output_mask)`.
const BATCH_NORM_BACKWARD: NormBackward = NormBackward {
    grad_out: 0,
    input: 1,
    weight: 2,
    stats: [5, 6],
    mask: Some(9),
    train: Some(7),
};

/// `cudnn_batch_norm_backward(input, grad_output, weight, running_mean, running_var,
/// save_mean, save_var, epsilon, reserveSpace)`: training mode, all three gradients.
const CUDNN_BATCH_NORM_BACKWARD: NormBackward = NormBackward {
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
fn norm_backward(x: &OpInputs, p: NormBackward) -> Result<OpCost, NoCost> {
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
        complexity: Complexity {
            flops: per * n,
            bytes: read + written,
        },
        datapath: dt.cuda_core(),
        family: "norm",
        assumed,
    })
}

/// `batch_norm(input, weight, bias, running_mean, running_var, training, …)`: training as
/// [`layer_norm`] (statistics per channel, 8 FLOPs per element with the affine transform);
/// inference `y = x·scale + shift`, 2 per element. B = x, y and the per-channel tensors.
fn batch_norm(x: &OpInputs) -> Result<OpCost, NoCost> {
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
        complexity: Complexity {
            flops: if training { 8.0 } else { 2.0 } * n,
            bytes: 2.0 * n * dt.bytes() + params,
        },
        datapath: dt.cuda_core(),
        family: "norm",
        assumed,
    })
}

/// `softmax(input, dim)` and `log_softmax`: per element, subtract the maximum, add to the sum,
/// scale (or subtract the log of the sum): 3 FLOPs (the maximum and exp are not counted).
fn softmax(x: &OpInputs) -> Result<OpCost, NoCost> {
    let Some((dt, s)) = x.tensor(0) else {
        return Err(shapes_err("expected an input tensor"));
    };
    let n = numel(s);
    Ok(OpCost {
        complexity: Complexity {
            flops: 3.0 * n,
            bytes: 2.0 * n * dt.bytes(),
        },
        datapath: dt.cuda_core(),
        family: "softmax",
        assumed: Vec::new(),
    })
}

/// `_softmax_backward_data(grad_output, output, dim, input_dtype)`: `dx = y·(dy − Σ dy·y)`,
/// 4 FLOPs per element (multiply-add for the sum, subtract, multiply). B = dy, y, dx.
fn softmax_backward(x: &OpInputs) -> Result<OpCost, NoCost> {
    let Some((dt, s)) = x.tensor(0) else {
        return Err(shapes_err("expected a gradient tensor"));
    };
    let n = numel(s);
    Ok(OpCost {
        complexity: Complexity {
            flops: 4.0 * n,
            bytes: 3.0 * n * dt.bytes(),
        },
        datapath: dt.cuda_core(),
        family: "softmax",
        assumed: Vec::new(),
    })
}

/// `embedding(weight[V,D], indices)`: no FLOPs; the indices read, the rows they select read
/// once each (one per index, and at most the V rows of the table: the indices' values are not
/// recorded), and one output row of D written per index.
fn embedding(x: &OpInputs) -> Result<OpCost, NoCost> {
    match (x.tensor(0), x.tensor(1)) {
        (Some((dt, &[v, d])), Some((it, idx))) => {
            let n = numel(idx);
            let rows = n.min(v as f64);
            Ok(OpCost {
                complexity: Complexity {
                    flops: 0.0,
                    bytes: n * it.bytes() + (rows + n) * d as f64 * dt.bytes(),
                },
                datapath: dt.cuda_core(),
                family: "embedding",
                assumed: Vec::new(),
            })
        }
        _ => Err(shapes_err("expected weight [V,D] and an index tensor")),
    }
}

/// `embedding_dense_backward(grad_output[…, D], indices, num_weights, padding_idx,
/// scale_grad_by_freq)`: the weight's gradient, `[num_weights, D]`, written once; the output's
/// gradient and the indices read (B only, as the forward: the accumulation of rows sharing an
/// index is not counted). `num_weights` comes from `Concrete Inputs`.
fn embedding_backward(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some((dt, grad)), Some((it, idx))) = (x.tensor(0), x.tensor(1)) else {
        return Err(shapes_err(
            "expected the output's gradient and an index tensor",
        ));
    };
    let Some(&d) = grad.last() else {
        return Err(shapes_err("expected a gradient of rows [..., D]"));
    };
    let Some(v) = x.int(2) else {
        return Err(shapes_err("num_weights not recorded: no Concrete Inputs"));
    };
    let bytes =
        numel(grad) * dt.bytes() + numel(idx) * it.bytes() + v as f64 * d as f64 * dt.bytes();
    Ok(OpCost {
        complexity: Complexity { flops: 0.0, bytes },
        datapath: dt.cuda_core(),
        family: "embedding",
        assumed: Vec::new(),
    })
}

/// `fill_` and `zero_`: the tensor written once.
fn write_only(x: &OpInputs) -> Result<OpCost, NoCost> {
    let Some((dt, _)) = x.tensor(0) else {
        return Err(shapes_err("expected a tensor"));
    };
    Ok(bytes_only(x.arg(0).bytes(), dt))
}

/// `copy_(self, src)`: src read, self written.
fn copy(x: &OpInputs) -> Result<OpCost, NoCost> {
    match (x.tensor(0), x.tensor(1)) {
        (Some((dt, _)), Some(_)) => Ok(bytes_only(x.arg(0).bytes() + x.arg(1).bytes(), dt)),
        _ => Err(shapes_err("expected destination and source tensors")),
    }
}

fn bytes_only(bytes: f64, dt: Dtype) -> OpCost {
    bytes_on(bytes, dt.cuda_core())
}

/// [`bytes_only`] in another rule family than `elementwise`.
fn bytes_in(family: &'static str, bytes: f64, dt: Dtype) -> OpCost {
    OpCost {
        family,
        ..bytes_only(bytes, dt)
    }
}

fn bytes_on(bytes: f64, datapath: Datapath) -> OpCost {
    OpCost {
        complexity: Complexity { flops: 0.0, bytes },
        datapath,
        family: "elementwise",
        assumed: Vec::new(),
    }
}

/// The tensor arguments, in order.
fn tensors(x: &OpInputs) -> Vec<(Dtype, &[u64])> {
    x.args
        .iter()
        .filter_map(|a| match a {
            Arg::Tensor(d, s) => Some((*d, s.as_slice())),
            _ => None,
        })
        .collect()
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
fn elementwise(x: &OpInputs, in_place: bool, boolean: bool) -> Result<OpCost, NoCost> {
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
fn unary(x: &OpInputs, in_place: bool, boolean: bool) -> Result<OpCost, NoCost> {
    let t = tensors(x);
    elementwise_of(&t[..t.len().min(1)], in_place, boolean)
}

fn elementwise_of(
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
fn dropout(x: &OpInputs) -> Result<OpCost, NoCost> {
    let mut cost = elementwise(x, false, false)?;
    cost.complexity.bytes += x.arg(0).numel() * Dtype::Bool.bytes();
    Ok(cost)
}

/// What a reduction writes per output element.
#[derive(Debug, Clone, Copy)]
enum ReduceOut {
    /// A value of the input's type (`sum`, `mean`, `amax`, `var`, `norm`).
    Same,
    /// An `int64` index (`argmax`, `argmin`).
    Index,
    /// A boolean (`any`, `all`).
    Bool,
    /// A value and its `int64` index (`max` and `min` along a dimension; the value alone
    /// without one).
    ValueAndIndex,
}

/// Reductions (`sum`, `mean`, `amax`, `prod`, `var`, `std`, `norm`, `argmax`, `any`, `max`
/// along a dimension, …): the input read once and the reduced output written, B only, as for the
/// elementwise operators (the additions or comparisons are not counted). The reduced dimensions
/// are the `dim` argument at position `dim` as `Concrete Inputs` records it (`[0, 2]`, `-1`);
/// empty (`None`), `[]`, or an overload without one (no argument after position `dim`): all of
/// them. Without `Concrete Inputs` a call that has a
/// `dim` argument has no cost (the output's size is unknown).
fn reduction(x: &OpInputs, dim: usize, out: ReduceOut) -> Result<OpCost, NoCost> {
    let Some((dt, shape)) = x.tensor(0) else {
        return Err(shapes_err("expected an input tensor"));
    };
    // The overloads with a dimension have arguments after it (`keepdim`); `sum(x, dtype)`,
    // `mean(x, dtype)`, `norm(x, p)`, `var(x, unbiased)`, `max(x)` reduce everything.
    let reduced: Option<Vec<usize>> = if x.args.len() <= dim + 1 {
        None
    } else if x.concrete.is_none() {
        return Err(shapes_err(
            "the reduced dimensions were not recorded: no Concrete Inputs",
        ));
    } else {
        match x.items(dim) {
            Some(list) if !list.is_empty() => Some(
                list.iter()
                    .map(|d| wrap_dim(d, shape.len()))
                    .collect::<Option<_>>()
                    .ok_or_else(|| shapes_err("a reduced dimension is not one of the input's"))?,
            ),
            _ => None,
        }
    };
    let outputs: f64 = match &reduced {
        None => 1.0,
        Some(r) => shape
            .iter()
            .enumerate()
            .filter(|(i, _)| !r.contains(i))
            .map(|(_, &d)| d as f64)
            .product(),
    };
    let per_output = match out {
        ReduceOut::Same => dt.bytes(),
        ReduceOut::Index => Dtype::I64.bytes(),
        ReduceOut::Bool => Dtype::Bool.bytes(),
        // `max(x)` without a dimension returns the value alone.
        ReduceOut::ValueAndIndex if reduced.is_none() => dt.bytes(),
        ReduceOut::ValueAndIndex => dt.bytes() + Dtype::I64.bytes(),
    };
    Ok(bytes_in(
        "reduction",
        numel(shape) * dt.bytes() + outputs * per_output,
        dt,
    ))
}

/// The element type of a PyTorch CUDA kernel's data, from its demangled name: the first
/// template argument of the first `…Functor<T, …>` that names a tensor type, which PyTorch's
/// multi-tensor kernels (launched by the `_foreach_*` and fused optimizer operators) carry
/// (`multi_tensor_apply_kernel<TensorListMetadata<2>, BinaryOpScalarFunctor<float, 2, 1, 1>,
/// std::multiplies<float>, float>`, `FusedAdamMathFunctor<c10::BFloat16, 4, …>`); else the first
/// template argument of `cat`'s `CatArrayBatchedCopy…<T, …>` kernels, a named type in PyTorch
/// 1.x and `OpaqueType<N>` (N bytes) since. The operators themselves record their lists as
/// `TensorList`, without a type.
pub fn kernel_elem(kernel: &str) -> Option<ListElem> {
    let functor = kernel.match_indices("Functor<").find_map(|(i, m)| {
        let rest = &kernel[i + m.len()..];
        let end = rest.find([',', '>'])?;
        Dtype::from_profiler(rest[..end].trim()).map(ListElem::Type)
    });
    functor.or_else(|| {
        let cat = &kernel[kernel.find("CatArrayBatchedCopy")?..];
        let args = &cat[cat.find('<')? + 1..];
        let first = args[..args.find(',')?].trim();
        match first.find("OpaqueType<") {
            Some(o) => {
                let n = &first[o + "OpaqueType<".len()..];
                let n = n.trim_end_matches('>').trim_end_matches(['u', 'U']);
                n.parse().ok().map(ListElem::Opaque)
            }
            None => Dtype::from_profiler(first).map(ListElem::Type),
        }
    })
}

/// Tensor lists' shapes (one slice of shapes per list) and their element type.
type TensorLists<'a> = (Vec<&'a [Vec<u64>]>, ListElem);

/// The tensor lists of a `_foreach_*`, fused optimizer or `cat` call: their shapes, one list per
/// [`Arg::Tensors`] argument (positions `at`, or every such argument when `at` is `None`), and
/// the lists' element type.
fn tensor_lists<'a>(x: &'a OpInputs, at: Option<&[usize]>) -> Result<TensorLists<'a>, NoCost> {
    let list = |a: &'a Arg| match a {
        Arg::Tensors(l) => Some(l.as_slice()),
        _ => None,
    };
    let lists: Vec<&[Vec<u64>]> = match at {
        Some(at) => at.iter().filter_map(|&i| list(x.arg(i))).collect(),
        None => x.args.iter().filter_map(list).collect(),
    };
    let Some(first) = lists.first() else {
        return Err(shapes_err("the tensor lists' shapes were not recorded"));
    };
    if lists.iter().any(|l| l.len() != first.len()) {
        return Err(shapes_err("tensor lists of different lengths"));
    }
    let Some(dt) = x.list_elem else {
        return Err(shapes_err(
            "the tensor lists' element type is not recorded, and no kernel named it",
        ));
    };
    Ok((lists, dt))
}

fn list_bytes(list: &[Vec<u64>], dt: ListElem) -> f64 {
    list.iter().map(|s| numel(s)).sum::<f64>() * dt.bytes()
}

/// A tensor-list operator's cost (B only), saying where its lists' element type came from.
fn list_cost(bytes: f64, dt: ListElem, family: &'static str) -> OpCost {
    let mut cost = bytes_on(bytes, dt.cuda_core());
    cost.family = family;
    cost.assumed.push(format!(
        "the tensor lists' element type, not recorded, is {} (from the kernel's name)",
        dt.describe()
    ));
    cost
}

/// `_foreach_OP` (PyTorch's multi-tensor kernels): the elementwise rule at each position of the
/// lists: every list read once and the first list written (in place) or a new list of its shapes
/// written; tensors outside the lists (a 0-d scalar tensor) read once. `_foreach_zero_` only
/// writes; `_foreach_copy_` reads its source and writes its destination (in place or not, the
/// bytes are the same: the first list is read and a list of its shapes written). The reductions
/// `_foreach_norm(self, ord, dtype)` (behind `clip_grad_norm_`) and `_foreach_max(self)` read the
/// list once and write one value per tensor, in `dtype` when `Concrete Inputs` records one (a
/// `ScalarType` code), else in the list's type.
fn foreach(x: &OpInputs, op: &str) -> Result<OpCost, NoCost> {
    let op = op.strip_suffix('_').unwrap_or(op);
    if op == "norm" || op == "max" {
        let (lists, dt) = tensor_lists(x, Some(&[0]))?;
        let out = match x.concrete(2).filter(|_| op == "norm") {
            Some(code) => Dtype::from_scalar_type(code)
                .ok_or_else(|| shapes_err(format!("unknown dtype code {code}")))?
                .bytes(),
            None => dt.bytes(),
        };
        let bytes = list_bytes(lists[0], dt) + lists[0].len() as f64 * out;
        return Ok(list_cost(bytes, dt, "reduction"));
    }
    if !(ELEMENTWISE.contains(&op) || UNARY.contains(&op) || op == "zero" || op == "copy") {
        return Err(NoCost::NoRule);
    }
    let (lists, dt) = tensor_lists(x, None)?;
    let first = list_bytes(lists[0], dt);
    let others: f64 = lists[1..].iter().map(|l| list_bytes(l, dt)).sum();
    let scalars: f64 = x.args.iter().map(Arg::bytes).sum();
    let bytes = match op {
        "zero" => first,
        "copy" => others + first,
        _ => 2.0 * first + others + scalars,
    };
    Ok(list_cost(bytes, dt, "elementwise"))
}

/// Which tensor lists a fused optimizer reads and writes (argument positions).
#[derive(Clone, Copy)]
struct FusedOptimizer {
    read: &'static [usize],
    written: &'static [usize],
}

/// `_fused_adam_` / `_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
/// state_steps, …)`: parameters, gradients and both moments read, parameters and moments
/// written (PyTorch's `FusedAdamMathFunctor`); `max_exp_avg_sqs` too under AMSGrad, when the
/// list is not empty. The 0-d step counters are not counted.
const FUSED_ADAM: FusedOptimizer = FusedOptimizer {
    read: &[0, 1, 2, 3, 4],
    written: &[0, 2, 3, 4],
};

/// `_fused_sgd_(params, grads, momentum_buffer_list, …)`: parameters, gradients and momentum
/// buffers (when not empty) read, parameters and buffers written.
const FUSED_SGD: FusedOptimizer = FusedOptimizer {
    read: &[0, 1, 2],
    written: &[0, 2],
};

/// A fused optimizer step (B only, like the elementwise operators; see [`FUSED_ADAM`]).
fn fused_optimizer(x: &OpInputs, p: FusedOptimizer) -> Result<OpCost, NoCost> {
    let (read, dt) = tensor_lists(x, Some(p.read))?;
    let (written, _) = tensor_lists(x, Some(p.written))?;
    let bytes: f64 = read.iter().chain(&written).map(|l| list_bytes(l, dt)).sum();
    Ok(list_cost(bytes, dt, "optimizer"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_model::dl::Conv2d;

    fn t(dt: Dtype, s: &[u64]) -> Arg {
        Arg::Tensor(dt, s.to_vec())
    }

    fn inputs(args: Vec<Arg>, concrete: Option<&[&str]>) -> OpInputs {
        OpInputs {
            args,
            concrete: concrete.map(|c| c.iter().map(|s| (*s).to_string()).collect()),
            list_elem: None,
        }
    }

    const F: Dtype = Dtype::F32;
    const H: Dtype = Dtype::Bf16;

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

    #[test]
    fn attention_by_hand() {
        // B=2, H=3, L=S=4, E=8: 16 pairs; QKᵀ and PV each 2·6·16·8.
        let qkv = vec![
            t(H, &[2, 3, 4, 8]),
            t(H, &[2, 3, 4, 8]),
            t(H, &[2, 3, 4, 8]),
        ];
        let c = op_cost(
            "aten::scaled_dot_product_attention",
            &inputs(qkv.clone(), Some(&["", "", "", "", "0.", "False", ""])),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 16.0 * 16.0);
        assert_eq!(c.complexity.bytes, 2.0 * 4.0 * 192.0);
        assert_eq!(c.datapath, Datapath::TensorBf16);
        assert!(c.assumed.is_empty());
        // Causal: 1 + 2 + 3 + 4 = 10 pairs.
        assert_eq!(causal_pairs(4, 4, 0), 10.0);
        let c = op_cost(
            "aten::_scaled_dot_product_flash_attention",
            &inputs(qkv.clone(), Some(&["", "", "", "0.", "True", "False", ""])),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 10.0 * 16.0);
        // Not recorded: assumed non-causal, said so.
        let c = op_cost("aten::scaled_dot_product_attention", &inputs(qkv, None)).unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 16.0 * 16.0);
        assert_eq!(c.assumed.len(), 1);
        // Flash forward is [B, L, H, E]; bottom-right mask type with L=2, S=4: 3 + 4 pairs.
        assert_eq!(causal_pairs(2, 4, 2), 7.0);
        let blhe = vec![
            t(H, &[2, 2, 3, 8]),
            t(H, &[2, 4, 3, 8]),
            t(H, &[2, 4, 3, 8]),
        ];
        let mut c9 = vec![""; 10];
        c9[9] = "2";
        let c = op_cost(
            "aten::_efficient_attention_forward",
            &inputs(blhe, Some(&c9)),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 6.0 * 7.0 * 16.0);
    }

    #[test]
    fn recurrent_layers_by_hand() {
        // One LSTM layer, one direction: exactly dl::Lstm.
        let x = inputs(
            vec![
                t(F, &[16, 4, 32]),
                Arg::Tensors(vec![vec![1, 4, 8], vec![1, 4, 8]]),
            ],
            Some(&["", "", "", "True", "1", "0.", "False", "False", "False"]),
        );
        let c = op_cost("aten::lstm", &x).unwrap();
        let l = Lstm {
            batch: 4,
            seq: 16,
            input: 32,
            hidden: 8,
        };
        assert_eq!(c.complexity.flops, l.flops());
        assert_eq!(c.complexity.bytes, l.bytes(4.0));
        // Two layers, bidirectional: the second layer's input is 2·H.
        let x = inputs(
            vec![t(F, &[16, 4, 32]), Arg::Tensors(vec![vec![4, 4, 8]])],
            Some(&["", "", "", "True", "2", "0.", "False", "True", "False"]),
        );
        let c = op_cost("aten::lstm", &x).unwrap();
        let l2 = Lstm { input: 16, ..l };
        assert_eq!(c.complexity.flops, 2.0 * (l.flops() + l2.flops()));
        // GRU, hand count: T=2, B=1, I=3, H=2: per step 2·1·5·6 + 14·2 = 88.
        let x = inputs(
            vec![t(F, &[2, 1, 3]), t(F, &[1, 1, 2])],
            Some(&["", "", "", "True", "1", "0.", "False", "False", "False"]),
        );
        let c = op_cost("aten::gru", &x).unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 88.0);
        // x 6, W 5·6, biases 12, h0 2, h 4 elements.
        assert_eq!(c.complexity.bytes, 4.0 * (6.0 + 30.0 + 12.0 + 2.0 + 4.0));
        // Without the hidden state's shape there is no count.
        let x = inputs(vec![t(F, &[2, 1, 3]), Arg::Tensors(vec![])], None);
        assert!(matches!(op_cost("aten::lstm", &x), Err(NoCost::Shapes(_))));
    }

    /// `_cudnn_rnn_backward` of one LSTM layer, T=2, B=1, I=3, H=2, counted by hand.
    #[test]
    fn cudnn_lstm_backward_by_hand() {
        let weights = Arg::Tensors(vec![vec![8, 3], vec![8, 2], vec![8], vec![8]]); // 56
        let h = || t(F, &[1, 1, 2]);
        let args = |weight_buf: Arg| {
            vec![
                t(F, &[2, 1, 3]), // input
                weights.clone(),
                Arg::Other,
                weight_buf,
                h(),              // hx
                h(),              // cx
                t(F, &[2, 1, 2]), // output
                t(F, &[2, 1, 2]), // grad_output
                h(),              // grad_hy
                h(),              // grad_cy
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
                Arg::Other,
                t(Dtype::U8, &[100]), // reserve
                Arg::Other,
            ]
        };
        let concrete = |mode: &str, mask: &str| -> Vec<String> {
            let mut c = vec![String::new(); 22];
            for (i, v) in [
                (10, mode),
                (11, "2"),
                (12, "0"),
                (13, "1"),
                (14, "False"),
                (15, "0."),
                (16, "True"),
                (17, "False"),
                (21, mask),
            ] {
                c[i] = v.into();
            }
            c
        };
        let call = |buf: Arg, mode: &str, mask: &str| {
            let x = OpInputs {
                concrete: Some(concrete(mode, mask)),
                ..inputs(args(buf), None)
            };
            op_cost("aten::_cudnn_rnn_backward", &x)
        };
        let all = "[True, True, True, True]";
        // Per step: the data and weight GEMMs, 2·(2·1·8·5), and the cell, 27·2; two steps.
        let c = call(t(F, &[56]), "2", all).unwrap();
        assert_eq!(c.complexity.flops, 2.0 * (2.0 * 80.0 + 27.0 * 2.0));
        assert_eq!(c.datapath, Datapath::Fp32);
        // Read: x 6, h0 and c0 2 each, y and dy 4 each, dhy and dcy 2 each, W 56 (4 bytes), and
        // the 100-byte reserve; written: dx 6, dh0 and dc0 2 each, dW 56.
        let read = 4.0 * (6.0 + 2.0 + 2.0 + 4.0 + 4.0 + 2.0 + 2.0 + 56.0) + 100.0;
        assert_eq!(c.complexity.bytes, read + 4.0 * (6.0 + 2.0 + 2.0 + 56.0));
        // The weights from the list when weight_buf is not recorded.
        let c = call(Arg::Other, "2", all).unwrap();
        assert_eq!(c.complexity.bytes, read + 4.0 * (6.0 + 2.0 + 2.0 + 56.0));
        // No gradient for the initial states (zeros, PyTorch's default).
        let c = call(t(F, &[56]), "2", "[True, False, False, True]").unwrap();
        assert_eq!(c.complexity.bytes, read + 4.0 * (6.0 + 56.0));
        // No weight gradient: one GEMM per step.
        let c = call(t(F, &[56]), "2", "[True, True, True, False]").unwrap();
        assert_eq!(c.complexity.flops, 2.0 * (80.0 + 27.0 * 2.0));
        // A GRU's backward has no rule; without Concrete Inputs the mode is unknown.
        assert_eq!(call(t(F, &[56]), "3", all), Err(NoCost::NoRule));
        let x = inputs(args(t(F, &[56])), None);
        let c = op_cost("aten::_cudnn_rnn_backward", &x);
        assert!(matches!(c, Err(NoCost::Shapes(_))), "{c:?}");
    }

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

    /// The calls PyTorch 2.11 records for reductions (seen on its CPU build), counted by hand.
    #[test]
    fn reductions_by_hand() {
        let x = || t(F, &[4, 6, 5]); // 120 elements, 480 bytes
        let o = || Arg::Other;
        // The input, then as many other arguments as `Concrete Inputs` has after it.
        let call = |name: &str, input: Arg, concrete: &[&str]| {
            let mut args = vec![input];
            args.resize(concrete.len(), Arg::Other);
            op_cost(name, &inputs(args, Some(concrete)))
        };
        let cases: [(&str, &[&str], f64); 10] = [
            // sum(x) and sum(x, dim=[]): everything → 1 value.
            ("aten::sum", &["", ""], 484.0),
            ("aten::sum", &["", "[]", "False", ""], 484.0),
            // sum(x, dim=[0, 2]) → 6 values; mean(x, dim=[-1], keepdim) → 24.
            ("aten::sum", &["", "[0, 2]", "False", ""], 480.0 + 6.0 * 4.0),
            ("aten::mean", &["", "[-1]", "True", ""], 480.0 + 24.0 * 4.0),
            // linalg_vector_norm(x, 2, [1]) → 20; std(x) with dim None → 1; norm(x, p) → 1.
            (
                "aten::linalg_vector_norm",
                &["", "2", "[1]", "False", ""],
                480.0 + 80.0,
            ),
            ("aten::std", &["", "", "", "False"], 484.0),
            ("aten::norm", &["", "2"], 484.0),
            // argmax(x, 2) writes 24 int64; max(x, 1) 20 values and indices; max(x) 1 value.
            ("aten::argmax", &["", "2", "False"], 480.0 + 24.0 * 8.0),
            ("aten::max", &["", "1", "False"], 480.0 + 20.0 * 12.0),
            ("aten::max", &[""], 484.0),
        ];
        for (name, concrete, bytes) in cases {
            let c = call(name, x(), concrete).unwrap();
            assert_eq!(c.complexity.bytes, bytes, "{name} {concrete:?}");
            assert_eq!((c.complexity.flops, c.family), (0.0, "reduction"));
        }
        // any(b, 1) writes 20 booleans; max(x, y) is elementwise.
        let c = call("aten::any", t(Dtype::Bool, &[4, 6, 5]), &["", "1", "False"]);
        assert_eq!(c.unwrap().complexity.bytes, 120.0 + 20.0);
        let c = op_cost("aten::max", &inputs(vec![x(), x()], Some(&["", ""])));
        assert_eq!(c.unwrap().complexity.bytes, 3.0 * 480.0);
        // mean(x, dtype) reduces everything, even without Concrete Inputs.
        let c = op_cost("aten::mean", &inputs(vec![x(), o()], None));
        assert_eq!(c.unwrap().complexity.bytes, 484.0);
        // A dimension out of range, or a dim argument without Concrete Inputs: no cost.
        let c = call("aten::sum", x(), &["", "[3]", "False", ""]);
        assert!(matches!(c, Err(NoCost::Shapes(_))), "{c:?}");
        let c = op_cost("aten::amax", &inputs(vec![x(), o(), o()], None));
        assert!(matches!(c, Err(NoCost::Shapes(_))), "{c:?}");
    }

    /// Kernel names as a real trace has them (the HolisticTraceAnalysis training trace of
    /// `tests/fixtures/traces/`, PyTorch's multi-tensor kernels), and names of the same form.
    #[test]
    fn tensor_list_types_from_kernel_names() {
        let foreach_mul = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float)";
        assert_eq!(kernel_elem(foreach_mul), Some(ListElem::Type(F)));
        let adam = "void at::native::(anonymous namespace)::multi_tensor_apply_for_fused_optimizer_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float*, float*>";
        assert_eq!(kernel_elem(adam), Some(ListElem::Type(H)));
        assert_eq!(kernel_elem("ampere_sgemm_128x64_nn"), None);
        // A functor whose first argument is not a type is passed over.
        assert_eq!(
            kernel_elem("k<Metadata<2>, UnaryOpFunctor<c10::Half, 1, 1, 0>>"),
            Some(ListElem::Type(Dtype::F16))
        );
    }

    /// The inputs PyTorch 2.11 records for the optimizer's calls (seen on its CPU build:
    /// `Input Dims` `[[[8, 2], [3]], …]`, `Input type` `TensorList`), counted by hand.
    #[test]
    fn foreach_and_fused_optimizers_by_hand() {
        let list = || Arg::Tensors(vec![vec![8, 2], vec![3]]); // 19 elements
        let with = |args: Vec<Arg>, dt: Option<Dtype>| OpInputs {
            list_elem: dt.map(ListElem::Type),
            ..inputs(args, None)
        };
        // _foreach_addcmul_(self, t1, t2, value): reads three lists, writes the first.
        let x = with(vec![list(), list(), list(), Arg::Other], Some(F));
        let c = op_cost("aten::_foreach_addcmul_", &x).unwrap();
        assert_eq!(c.complexity.flops, 0.0);
        assert_eq!(c.complexity.bytes, 4.0 * 19.0 * 4.0);
        assert_eq!(c.datapath, Datapath::Fp32);
        assert_eq!(c.assumed.len(), 1, "{:?}", c.assumed);
        // _foreach_sqrt(self): out of place, reads one list and writes a new one.
        let c = op_cost("aten::_foreach_sqrt", &with(vec![list()], Some(H))).unwrap();
        assert_eq!(c.complexity.bytes, 2.0 * 19.0 * 2.0);
        assert_eq!(c.datapath, Datapath::Bf16);
        // _foreach_add_(steps, 1): 0-d tensors, one element each.
        let steps = Arg::Tensors(vec![vec![], vec![]]);
        let c = op_cost(
            "aten::_foreach_add_",
            &with(vec![steps, Arg::Other], Some(F)),
        );
        assert_eq!(c.unwrap().complexity.bytes, 2.0 * 2.0 * 4.0);
        // _foreach_zero_ writes, _foreach_copy_ reads the source and writes the destination.
        let c = op_cost("aten::_foreach_zero_", &with(vec![list()], Some(F)));
        assert_eq!(c.unwrap().complexity.bytes, 19.0 * 4.0);
        let c = op_cost("aten::_foreach_copy_", &with(vec![list(), list()], Some(F)));
        assert_eq!(c.unwrap().complexity.bytes, 2.0 * 19.0 * 4.0);
        // _foreach_norm(list, 2) as clip_grad_norm_ calls it: the list read, one norm per tensor
        // written; with dtype=torch.float64 (code 7) the norms are 8 bytes each.
        let c = op_cost(
            "aten::_foreach_norm",
            &OpInputs {
                concrete: Some(vec!["".into(), "2".into(), "".into()]),
                ..with(vec![list(), Arg::Other, Arg::Other], Some(H))
            },
        )
        .unwrap();
        assert_eq!(c.family, "reduction");
        assert_eq!(c.complexity.bytes, 19.0 * 2.0 + 2.0 * 2.0);
        let c = op_cost(
            "aten::_foreach_norm",
            &OpInputs {
                concrete: Some(vec!["".into(), "2".into(), "7".into()]),
                ..with(vec![list(), Arg::Other, Arg::Other], Some(H))
            },
        );
        assert_eq!(c.unwrap().complexity.bytes, 19.0 * 2.0 + 2.0 * 8.0);
        let c = op_cost("aten::_foreach_max", &with(vec![list()], Some(F)));
        assert_eq!(c.unwrap().complexity.bytes, 19.0 * 4.0 + 2.0 * 4.0);
        // Without a type, or with lists of different lengths, the call has no cost.
        let c = op_cost("aten::_foreach_sqrt", &with(vec![list()], None));
        assert!(matches!(c, Err(NoCost::Shapes(_))), "{c:?}");
        let short = Arg::Tensors(vec![vec![3]]);
        let c = op_cost("aten::_foreach_add_", &with(vec![list(), short], Some(F)));
        assert!(matches!(c, Err(NoCost::Shapes(_))), "{c:?}");
        // Old traces record a list as [] (no shapes).
        let c = op_cost(
            "aten::_foreach_mul_",
            &with(vec![Arg::Other, Arg::Other], Some(F)),
        );
        assert!(matches!(c, Err(NoCost::Shapes(_))), "{c:?}");

        // _fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs = [], steps, …)
        // as 2.11 records it: four lists read, three written; the steps not counted.
        let steps = Arg::Tensors(vec![vec![], vec![]]);
        let mut args = vec![list(), list(), list(), list(), Arg::Other, steps];
        args.extend(std::iter::repeat_n(Arg::Other, 9));
        let c = op_cost("aten::_fused_adamw_", &with(args.clone(), Some(F))).unwrap();
        assert_eq!(c.family, "optimizer");
        assert_eq!(c.complexity.bytes, 7.0 * 19.0 * 4.0);
        // AMSGrad: max_exp_avg_sqs read and written too.
        args[4] = list();
        let c = op_cost("aten::_fused_adam_", &with(args, Some(H))).unwrap();
        assert_eq!(c.complexity.bytes, 9.0 * 19.0 * 2.0);
        // _fused_sgd_ without momentum (an empty list): parameters and gradients read,
        // parameters written.
        let x = with(vec![list(), list(), Arg::Other, Arg::Other], Some(F));
        let c = op_cost("aten::_fused_sgd_", &x).unwrap();
        assert_eq!(c.complexity.bytes, 3.0 * 19.0 * 4.0);
    }
}
