//! Analytical complexity of PyTorch operators from the shapes and types torch.profiler records
//! (`record_shapes=True`): one rule per operator family, beside [`roofline_model::analysis::dl`], whose GEMM, conv2d
//! and LSTM counts they reuse.
//!
//! The conventions are those of Wang et al., "Time-Based Roofline for Deep Learning Performance
//! Analysis" (DLS workshop at SC 2020), as in [`roofline_model::analysis::dl`]: F counts the operator's multiply-adds
//! as 2 FLOPs each (bias additions are not counted, the bias is read in B); B is the minimum
//! traffic, every input tensor read once and every output written once in its element size.
//! Special functions (exp, tanh, sigmoid's exp, the maximum of a softmax) are not counted, as FLOP
//! counters (Nsight Compute's `sm__sass_thread_inst_executed_op_*` add/mul/fma metrics) do not
//! count them either. Elementwise arithmetic counts its adds, multiplications and FMAs per output
//! element ([`elementwise::ARITHMETIC`]); operators that only move data (copies, `cat`, indexing,
//! reductions' and poolings' comparisons) get B only (F = 0).
//!
//! Where a trace lacks what a rule needs (a convolution's stride without `Concrete Inputs`), the
//! rule says so and gives no cost, or, where it can assume without changing F or B much (a
//! reduction mode), says what it assumed in [`OpCost::assumed`]. A call whose tensors were
//! recorded with no element type at all (PyTorch 1.8) is typed by the import from what the trace
//! names elsewhere ([`OpInputs::typed_as`]).
//!
//! A call that the trace records with the calls that implement it inside
//! (`aten::_native_multi_head_attention` > `aten::bmm`, `aten::_addmm_activation` > `aten::gelu_`)
//! gets a rule for its whole work; the import counts each piece once
//! ([`crate::trace::calls`]).

pub mod attention;
pub mod conv;
pub mod elementwise;
pub mod fastpath;
pub mod inductor;
pub mod inputs;
pub mod matmul;
pub mod model;
pub mod moe;
pub mod movement;
pub mod norm;
pub mod optimizer;
pub mod pooling;
pub mod reduction;
pub mod rnn;
pub mod scaled;
pub mod serving;
pub mod te;
pub mod upsample;

use roofline_model::bundle::{Complexity, Datapath};

pub use attention::{band_pairs, causal_pairs};
pub use conv::{
    ConvRole, grad_output as conv_grad_output, role as conv_role, shapes as conv_shapes,
};
pub use elementwise::{COMPARISONS, ELEMENTWISE, UNARY};
pub(crate) use inputs::numel;
pub use inputs::{Arg, Derived, Dtype, ListElem, OpInputs, OutputFrom};
pub use model::{Context, ModelConfig, ModelConfigError, Parallel, ParallelFrom, WeightFormat};
pub use optimizer::kernel_elem;
pub use rnn::{GRU_CELL_FLOPS, LSTM_CELL_BACKWARD_FLOPS};

/// The operator families, one module of rules each (or a part of one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Matrix products ([`matmul`]).
    Gemm,
    /// Convolutions ([`conv`]).
    Conv,
    /// Scaled-dot-product attention ([`attention`]), and the fast path's multi-head attention
    /// ([`fastpath`]).
    Attention,
    /// The inference fast path's whole encoder layer ([`fastpath`]).
    Transformer,
    /// LSTM and GRU layers ([`rnn`]).
    Rnn,
    /// Layer and batch norm ([`norm`]).
    Norm,
    /// Softmax and log-softmax ([`norm`]).
    Softmax,
    /// Embedding lookups ([`movement`]).
    Embedding,
    /// Elementwise operators ([`elementwise`]).
    Elementwise,
    /// Reductions ([`reduction`]).
    Reduction,
    /// The optimizers' tensor-list operators ([`optimizer`]).
    Optimizer,
    /// Operators that move or select data ([`movement`]).
    Movement,
    /// Losses ([`movement`]).
    Loss,
    /// Poolings ([`pooling`]).
    Pooling,
    /// The Triton kernels of `torch.compile` ([`inductor`]).
    Inductor,
    /// Mixture-of-experts layers ([`moe`]).
    Moe,
}

impl Family {
    /// The family's name, as the bundle's [`OperatorCall::rule`](roofline_model::bundle::OperatorCall::rule) records it.
    pub fn key(self) -> &'static str {
        match self {
            Family::Gemm => "gemm",
            Family::Conv => "conv",
            Family::Attention => "attention",
            Family::Transformer => "transformer",
            Family::Rnn => "rnn",
            Family::Norm => "norm",
            Family::Softmax => "softmax",
            Family::Embedding => "embedding",
            Family::Elementwise => "elementwise",
            Family::Reduction => "reduction",
            Family::Optimizer => "optimizer",
            Family::Movement => "movement",
            Family::Loss => "loss",
            Family::Pooling => "pooling",
            Family::Inductor => "inductor",
            Family::Moe => "moe",
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
    /// The rule family that gave it.
    pub family: Family,
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

/// Whether every tensor of the operator `name` has one element type, the one the trace names
/// elsewhere for a call recorded without any (PyTorch 1.8, [`OpInputs::typed_as`]): not for those
/// that read indices, masks or targets of their own type (embeddings, gathers and scatters,
/// indexing, the negative log-likelihood, a max pooling's backward, `where`, `masked_fill`,
/// dropout's backward), nor for conversions (`copy_`, `to`), nor for batch norm, whose statistics
/// are FP32 under 16-bit inputs (its FP32 and FP64 calls aside).
pub fn one_element_type(name: &str, dt: Dtype) -> bool {
    let base = base_name(name);
    let several = [
        "embedding",
        "embedding_dense_backward",
        "embedding_backward",
        "nll_loss",
        "nll_loss_forward",
        "nll_loss2d_forward",
        "nll_loss_backward",
        "nll_loss2d_backward",
        "gather",
        "scatter",
        "scatter_add",
        "scatter_reduce",
        "index_select",
        "index_add",
        "index",
        "index_put",
        "_index_put_impl",
        "where",
        "masked_fill",
        "_masked_softmax",
        "native_dropout_backward",
        "copy",
        "to",
        "_to_copy",
    ];
    if several.contains(&base)
        || base.ends_with("pool2d_with_indices_backward")
        || base.ends_with("pool3d_with_indices_backward")
        || base.ends_with("pool1d_with_indices_backward")
        || base.starts_with("adaptive_max_pool") && base.ends_with("_backward")
    {
        return false;
    }
    !base.contains("batch_norm") || matches!(dt, Dtype::F32 | Dtype::F64)
}

/// The complexity of one operator call from its recorded inputs, with nothing known beyond them
/// ([`op_cost_in`] with an empty [`Context`]).
///
/// # Errors
/// [`NoCost::NoRule`] when no family covers the operator; [`NoCost::Shapes`] when the recorded
/// shapes do not fit its rule.
pub fn op_cost(name: &str, inputs: &OpInputs) -> Result<OpCost, NoCost> {
    op_cost_in(name, inputs, &Context::default())
}

/// The complexity of one operator call from its recorded inputs and what the import knows
/// beyond them ([`Context`]: the model's configuration, the parallelism), which only the rules
/// of operators that do not record what they need read ([`moe`]).
///
/// # Errors
/// [`NoCost::NoRule`] when no family covers the operator; [`NoCost::Shapes`] when the recorded
/// shapes do not fit its rule, or what it needs is neither recorded nor in the context.
pub fn op_cost_in(name: &str, inputs: &OpInputs, ctx: &Context) -> Result<OpCost, NoCost> {
    match rule(name, inputs, ctx) {
        // A rule that could not read the call because an argument's type is unknown says so,
        // rather than that the shapes were others.
        Err(NoCost::Shapes(_))
            if inputs.no_types
                && inputs.untyped.is_empty()
                && !inputs
                    .args
                    .iter()
                    .any(|a| matches!(a, Arg::Tensor(..) | Arg::Tensors(_))) =>
        {
            Err(NoCost::Shapes(
                "no tensor shape recorded: PyTorch 1.8 writes a 0-d tensor and a scalar alike, as []".into(),
            ))
        }
        Err(NoCost::Shapes(_)) if !inputs.untyped.is_empty() => {
            let (i, ty, shape) = &inputs.untyped[0];
            Err(NoCost::Shapes(if ty.is_empty() {
                format!(
                    "input {i} is a tensor {shape:?} whose element type was not recorded (PyTorch 1.8 records none) and not named elsewhere in the trace: its element size and datapath are unknown"
                )
            } else {
                format!(
                    "input {i} is a tensor {shape:?} of a type the rules do not know ({ty:?}): its element size and datapath are unknown"
                )
            }))
        }
        other => other,
    }
}

/// The rule of `name` applied to the call.
fn rule(name: &str, inputs: &OpInputs, ctx: &Context) -> Result<OpCost, NoCost> {
    if inductor::is_data_moving(name) {
        return inductor::data_moving(inputs);
    }
    if let Some(backward) = inductor::template_flex(name) {
        return attention::flex_template(inputs, backward);
    }
    if let Some(batched) = inductor::template_gemm(name) {
        return inductor::gemm(inputs, batched);
    }
    if let Some(cost) = library(name, inputs, ctx) {
        return cost;
    }
    if !name.starts_with("aten::") {
        return Err(NoCost::NoRule);
    }
    let in_place = name.ends_with('_') && !name.ends_with("__");
    let base = base_name(name);
    if let Some(args) = conv::args(base) {
        return conv::conv(inputs, args, base);
    }
    if let Some((mode, nd, backward)) = upsample::parse(base) {
        return if backward {
            upsample::backward(inputs, mode, nd)
        } else {
            upsample::upsample(inputs, mode, nd)
        };
    }
    match base {
        "mm" => matmul::gemm_2d(inputs, 0, 1, None),
        "addmm" => matmul::gemm_2d(inputs, 1, 2, Some(0)),
        "_addmm_activation" => matmul::addmm_activation(inputs),
        "bmm" => matmul::bmm(inputs, 0, 1, None),
        "baddbmm" => matmul::bmm(inputs, 1, 2, Some(0)),
        "matmul" => matmul::matmul(inputs),
        "_native_multi_head_attention" => fastpath::multi_head_attention(inputs),
        "_transformer_encoder_layer_fwd" => fastpath::encoder_layer(inputs),
        "_transform_bias_rescale_qkv" => fastpath::transform_bias_rescale_qkv(inputs),
        "_masked_softmax" => norm::masked_softmax(inputs),
        "linear" => matmul::linear(inputs),
        "scaled_dot_product_attention" => attention::attention(inputs, attention::Attn::SDPA),
        "_scaled_dot_product_flash_attention" => {
            attention::attention(inputs, attention::Attn::SDPA_FLASH)
        }
        "_scaled_dot_product_efficient_attention" => {
            attention::attention(inputs, attention::Attn::SDPA_EFFICIENT)
        }
        "_scaled_dot_product_cudnn_attention" => {
            attention::attention(inputs, attention::Attn::SDPA_CUDNN)
        }
        "_flash_attention_forward" => attention::attention(inputs, attention::Attn::FLASH),
        "_efficient_attention_forward" => attention::attention(inputs, attention::Attn::EFFICIENT),
        "_scaled_dot_product_flash_attention_backward" => {
            attention::attention(inputs, attention::Attn::SDPA_FLASH_BACKWARD)
        }
        "_scaled_dot_product_efficient_attention_backward" => {
            attention::attention(inputs, attention::Attn::SDPA_EFFICIENT_BACKWARD)
        }
        "_flash_attention_backward" => {
            attention::attention(inputs, attention::Attn::FLASH_BACKWARD)
        }
        "_efficient_attention_backward" => {
            attention::attention(inputs, attention::Attn::EFFICIENT_BACKWARD)
        }
        "_scaled_dot_product_flash_attention_for_cpu" => {
            attention::attention(inputs, attention::Attn::SDPA_FLASH)
        }
        "_scaled_dot_product_flash_attention_for_cpu_backward" => {
            attention::attention(inputs, attention::Attn::SDPA_FLASH_CPU_BACKWARD)
        }
        "_cudnn_attention_forward" => attention::attention(inputs, attention::Attn::CUDNN),
        "_cudnn_attention_backward" | "_scaled_dot_product_cudnn_attention_backward" => {
            attention::attention(inputs, attention::Attn::CUDNN_BACKWARD)
        }
        "_scaled_dot_product_fused_attention_overrideable" => {
            attention::attention(inputs, attention::Attn::SDPA_OVERRIDEABLE)
        }
        "_scaled_dot_product_fused_attention_overrideable_backward" => {
            attention::attention(inputs, attention::Attn::SDPA_OVERRIDEABLE_BACKWARD)
        }
        "_scaled_mm" => scaled::scaled_mm(inputs),
        "_scaled_mm_v2" | "_scaled_grouped_mm_v2" => scaled::scale_lists(inputs),
        "_scaled_grouped_mm" => scaled::grouped_mm(inputs, scaled::Grouped::SCALED),
        "_grouped_mm" => scaled::grouped_mm(inputs, scaled::Grouped::PLAIN),
        "_int_mm" => scaled::int_mm(inputs),
        "lstm" => rnn::rnn(inputs, rnn::RnnKind::Lstm, rnn::RnnArgs::ATEN),
        "gru" => rnn::rnn(inputs, rnn::RnnKind::Gru, rnn::RnnArgs::ATEN),
        "_cudnn_rnn" => rnn::rnn(inputs, rnn::RnnKind::FromMode, rnn::RnnArgs::CUDNN),
        "_cudnn_rnn_backward" => rnn::rnn_backward(inputs),
        "mkldnn_rnn_layer" => rnn::mkldnn_layer(inputs),
        "mkldnn_rnn_layer_backward" => rnn::mkldnn_layer_backward(inputs),
        "layer_norm" | "native_layer_norm" => norm::layer_norm(inputs),
        "native_layer_norm_backward" => norm::norm_backward(inputs, norm::LAYER_NORM_BACKWARD),
        "native_batch_norm_backward" => norm::norm_backward(inputs, norm::BATCH_NORM_BACKWARD),
        "cudnn_batch_norm_backward" => norm::norm_backward(inputs, norm::CUDNN_BATCH_NORM_BACKWARD),
        "batch_norm" | "native_batch_norm" | "cudnn_batch_norm" | "_batch_norm_impl_index" => {
            norm::batch_norm(inputs)
        }
        "softmax" | "_softmax" | "log_softmax" | "_log_softmax" => norm::softmax(inputs),
        "_softmax_backward_data" | "_log_softmax_backward_data" => norm::softmax_backward(inputs),
        "embedding" => movement::embedding(inputs),
        "embedding_dense_backward" => movement::embedding_backward(inputs),
        "fill" | "zero" => elementwise::write_only(inputs),
        // The in-place random fills (weight initialisation, `torch.rand`'s kernel).
        "uniform" | "normal" | "random" | "exponential" | "log_normal" | "cauchy" | "geometric"
            if in_place =>
        {
            elementwise::write_only(inputs)
        }
        "copy" => elementwise::copy(inputs),
        "sum" | "nansum" | "mean" | "nanmean" | "amax" | "amin" | "prod" | "var" | "std"
        | "logsumexp" => reduction::reduction(inputs, 1, reduction::ReduceOut::Same),
        "norm" | "linalg_vector_norm" => {
            reduction::reduction(inputs, 2, reduction::ReduceOut::Same)
        }
        "argmax" | "argmin" => reduction::reduction(inputs, 1, reduction::ReduceOut::Index),
        "any" | "all" => reduction::reduction(inputs, 1, reduction::ReduceOut::Bool),
        "max" | "min" => match inputs.arg(1) {
            Arg::Tensor(..) => elementwise::elementwise(inputs, base, false, false),
            _ => reduction::reduction(inputs, 1, reduction::ReduceOut::ValueAndIndex),
        },
        "max_pool1d_with_indices" => pooling::pool(inputs, pooling::Pool::max(1)),
        "max_pool2d_with_indices" => pooling::pool(inputs, pooling::Pool::max(2)),
        "max_pool3d_with_indices" => pooling::pool(inputs, pooling::Pool::max(3)),
        "avg_pool1d" => pooling::pool(inputs, pooling::Pool::avg(1)),
        "avg_pool2d" => pooling::pool(inputs, pooling::Pool::avg(2)),
        "avg_pool3d" => pooling::pool(inputs, pooling::Pool::avg(3)),
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
        "scatter" => movement::scatter(inputs, movement::Scatter::Assign),
        "scatter_add" | "scatter_reduce" => {
            movement::scatter(inputs, movement::Scatter::Accumulate)
        }
        "index_add" => movement::index_add(inputs),
        "cumsum" | "cumprod" => movement::scan(inputs),
        "nll_loss_forward" | "nll_loss2d_forward" => movement::nll_loss(inputs),
        "nll_loss_backward" | "nll_loss2d_backward" => movement::nll_loss_backward(inputs),
        "index" | "index_put" | "_index_put_impl" => movement::advanced_indexing(inputs),
        "_fused_adam" | "_fused_adamw" => optimizer::fused_optimizer(inputs, optimizer::FUSED_ADAM),
        "_fused_sgd" => optimizer::fused_optimizer(inputs, optimizer::FUSED_SGD),
        n if n.starts_with("_foreach_") => {
            optimizer::foreach(inputs, &name["aten::_foreach_".len()..])
        }
        "native_dropout" => elementwise::dropout(inputs),
        n if UNARY.contains(&n) => {
            elementwise::unary(inputs, n, in_place, n == "isnan" || n == "logical_not")
        }
        n if ELEMENTWISE.contains(&n) || COMPARISONS.contains(&n) => {
            elementwise::elementwise(inputs, n, in_place, COMPARISONS.contains(&n))
        }
        _ => Err(NoCost::NoRule),
    }
}

/// The rules of operators outside `aten`, by namespace and name: the attention libraries, the
/// serving engines' operators, Transformer Engine's softmax; `None` for an operator none covers.
fn library(name: &str, x: &OpInputs, ctx: &Context) -> Option<Result<OpCost, NoCost>> {
    use attention::Attn;
    use serving::{CacheWrite, Gated, Paged, Quant, Rms};
    let (ns, op) = name.split_once("::")?;
    Some(match (ns, op) {
        ("flash_attn" | "flashattn", "_flash_attn_forward") => attention::attention(x, Attn::FA2),
        ("flash_attn" | "flashattn", "_flash_attn_varlen_forward") => {
            attention::attention(x, Attn::FA2_VARLEN)
        }
        ("flash_attn" | "flashattn", "_flash_attn_backward") => {
            attention::attention(x, Attn::FA2_BACKWARD)
        }
        ("flash_attn" | "flashattn", "_flash_attn_varlen_backward") => {
            attention::attention(x, Attn::FA2_VARLEN_BACKWARD)
        }
        ("xformers_flash", "flash_fwd") => attention::xformers_flash(x, false),
        ("xformers_flash", "flash_bwd") => attention::xformers_flash(x, true),
        ("xformers", "efficient_attention_forward_cutlass") => attention::xformers_cutlass(x),
        ("_C" | "sgl_kernel" | "aiter", "rms_norm" | "rmsnorm") => serving::rms_norm(x, Rms::NORM),
        ("aiter", "add_rmsnorm") => serving::rms_norm(x, Rms::AITER_ADD),
        ("_C" | "sgl_kernel", "fused_add_rms_norm" | "fused_add_rmsnorm") => {
            serving::rms_norm(x, Rms::FUSED_ADD)
        }
        ("sgl_kernel", "gemma_rmsnorm") => serving::rms_norm(x, Rms::GEMMA),
        ("sgl_kernel", "gemma_fused_add_rmsnorm") => serving::rms_norm(x, Rms::GEMMA_FUSED_ADD),
        ("_C" | "sgl_kernel", "rotary_embedding") => serving::rotary_embedding(x),
        ("sgl_kernel", "apply_rope_pos_ids_cos_sin_cache") => serving::sgl_rope(x),
        ("_C" | "sgl_kernel", "silu_and_mul" | "mul_and_silu") => serving::gated(x, Gated::Silu),
        ("_C" | "sgl_kernel", "gelu_and_mul") => serving::gated(x, Gated::Gelu),
        ("_C" | "sgl_kernel", "gelu_tanh_and_mul") => serving::gated(x, Gated::GeluTanh),
        ("_C", "fatrelu_and_mul") => serving::gated(x, Gated::FatRelu),
        ("_C", "swigluoai_and_mul") => serving::gated(x, Gated::SwigluOai),
        ("_C", "static_scaled_fp8_quant" | "static_scaled_int8_quant") => {
            serving::quantize(x, Quant::VLLM_STATIC)
        }
        ("_C", "dynamic_scaled_fp8_quant" | "dynamic_per_token_scaled_fp8_quant") => {
            serving::quantize(x, Quant::VLLM_DYNAMIC)
        }
        ("sgl_kernel", "sgl_per_token_quant_fp8" | "sgl_per_token_group_quant_fp8") => {
            serving::quantize(x, Quant::SGL_DYNAMIC)
        }
        ("sgl_kernel", "sgl_per_tensor_quant_fp8") => serving::sgl_per_tensor_quant(x),
        ("_C_cache_ops", "reshape_and_cache" | "reshape_and_cache_flash") => {
            serving::cache_write(x, CacheWrite::KV)
        }
        ("_C_cache_ops", "concat_and_cache_mla") => serving::cache_write(x, CacheWrite::MLA),
        ("sglang", "store_cache") => serving::cache_write(x, CacheWrite::SGL_STORE),
        ("aiter", "mha_batch_prefill") => serving::aiter_batch_prefill(x),
        ("_C", "paged_attention_v1") => serving::paged_attention(x, Paged::V1),
        ("_C", "paged_attention_v2") => serving::paged_attention(x, Paged::V2),
        ("vllm", "unified_attention" | "unified_attention_with_output") => {
            serving::unified_attention(x)
        }
        ("_C", "cutlass_scaled_mm") => scaled::scaled_mm_into(x),
        ("sgl_kernel", "fp8_scaled_mm" | "int8_scaled_mm" | "fp8_blockwise_scaled_mm") => {
            scaled::sgl_scaled_mm(x)
        }
        ("vllm", "moe_forward") => moe::moe_forward(x, ctx, false),
        ("vllm", "moe_forward_shared") => moe::moe_forward(x, ctx, true),
        ("vllm" | "sglang", "inplace_fused_experts" | "outplace_fused_experts") => {
            moe::fused_experts(x)
        }
        ("_moe_C", "topk_softmax") => moe::topk_softmax(x, moe::TopK::VLLM),
        ("sgl_kernel", "topk_softmax") => moe::topk_softmax(x, moe::TopK::SGL),
        ("te_softmax", op) => {
            let backward = op.ends_with("_bwd");
            let which = match op.trim_end_matches("_fwd").trim_end_matches("_bwd") {
                "scaled_softmax" => te::TeSoftmax::Scaled,
                "scaled_masked_softmax" => te::TeSoftmax::Masked,
                "scaled_upper_triang_masked_softmax" => te::TeSoftmax::UpperTriang,
                "scaled_aligned_causal_masked_softmax" => te::TeSoftmax::AlignedCausal,
                _ => return None,
            };
            te::softmax(x, which, backward)
        }
        _ => return None,
    })
}

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

fn bytes_only(bytes: f64, dt: Dtype) -> OpCost {
    bytes_on(bytes, dt.cuda_core())
}

/// [`bytes_only`] in another rule family than `elementwise`.
fn bytes_in(family: Family, bytes: f64, dt: Dtype) -> OpCost {
    OpCost {
        family,
        ..bytes_only(bytes, dt)
    }
}

fn bytes_on(bytes: f64, datapath: Datapath) -> OpCost {
    OpCost {
        complexity: Complexity::new(0.0, bytes),
        datapath,
        family: Family::Elementwise,
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

/// Whether an operator is a collective: `torch.distributed`'s `c10d::` operators and the
/// `record_param_comms` range PyTorch records around every collective (with its message sizes),
/// the symmetric-memory collectives (`symm_mem::multimem_all_reduce_`, …), and the serving
/// engines' wrappers and custom all-reduces (vLLM's `vllm::all_reduce`, `vllm::all_gather`,
/// `vllm::reduce_scatter` and `_C_custom_ar::all_reduce`; SGLang's `sgl_kernel::all_reduce`
/// and `mscclpp_allreduce`).
pub fn is_communication(name: &str) -> bool {
    name == "record_param_comms"
        || name.starts_with("c10d::")
        || name.starts_with("nccl:")
        || name.starts_with("symm_mem::")
        || matches!(
            name,
            "vllm::all_reduce"
                | "vllm::all_gather"
                | "vllm::reduce_scatter"
                | "_C_custom_ar::all_reduce"
                | "_C_custom_ar::qr_all_reduce"
                | "sgl_kernel::all_reduce"
                | "sgl_kernel::mscclpp_allreduce"
        )
}

#[cfg(test)]
pub(crate) mod testing {
    //! What the rules' tests share.
    use super::{Arg, Derived, Dtype, OpInputs};

    /// A tensor argument.
    pub(crate) fn t(dt: Dtype, s: &[u64]) -> Arg {
        Arg::Tensor(dt, s.to_vec())
    }

    /// Recorded inputs, with `Concrete Inputs` when given.
    pub(crate) fn inputs(args: Vec<Arg>, concrete: Option<&[&str]>) -> OpInputs {
        OpInputs {
            args,
            concrete: concrete.map(|c| c.iter().map(|s| (*s).to_string()).collect()),
            list_elem: None,
            derived: Derived::default(),
            untyped: Vec::new(),
            no_types: false,
        }
    }

    pub(crate) const F: Dtype = Dtype::F32;
    pub(crate) const H: Dtype = Dtype::Bf16;

    /// A value of an elementwise formula whose floating-point operations are counted as it is
    /// evaluated: each `+`, `−`, `·` and `/` between two values, or a value and a number known
    /// only at run time, is one operation; a number known at compile time (`1.0`, `M_SQRT1_2`,
    /// `3·κ`) is an `f64`, and arithmetic between two of them is the compiler's, not counted; the
    /// special functions and selects count nothing.
    #[derive(Clone, Copy)]
    pub(crate) struct V;

    thread_local! {
        static OPS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }

    fn op() -> V {
        OPS.with(|n| n.set(n.get() + 1));
        V
    }

    macro_rules! counted {
        ($($tr:ident $f:ident),*) => {$(
            impl std::ops::$tr for V {
                type Output = V;
                fn $f(self, _: V) -> V { op() }
            }
            impl std::ops::$tr<f64> for V {
                type Output = V;
                fn $f(self, _: f64) -> V { op() }
            }
            impl std::ops::$tr<V> for f64 {
                type Output = V;
                fn $f(self, _: V) -> V { op() }
            }
        )*};
    }
    counted!(Add add, Sub sub, Mul mul, Div div);

    impl std::ops::Neg for V {
        type Output = V;
        /// A sign flip is an operand modifier of the instruction that uses it, no operation.
        fn neg(self) -> V {
            V
        }
    }

    /// A special function or a select: no add, multiply or FMA.
    pub(crate) fn special(_: V) -> V {
        V
    }

    /// The operations of one evaluation of a formula, per output element.
    pub(crate) fn count(formula: impl FnOnce(V) -> V) -> f64 {
        OPS.with(|n| n.set(0));
        formula(V);
        f64::from(OPS.with(std::cell::Cell::get))
    }
}

#[cfg(test)]
mod impossible {
    //! Issue 29: impossible or unreadable arguments are refused by every family as the pooling
    //! rules refuse them, never read as unrecorded (which a default could fill) nor given an F.

    use super::testing::{F, inputs, t};
    use super::{Arg, NoCost, op_cost};

    fn refused(name: &str, x: &super::OpInputs) -> String {
        match op_cost(name, x) {
            Err(NoCost::Shapes(why)) => why,
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn negative_or_unreadable_lists_are_refused_not_read_as_unrecorded() {
        let conv = |stride: &str, padding: &str, dilation: &str, groups: &str| {
            inputs(
                vec![t(F, &[2, 4, 9, 9]), t(F, &[6, 4, 3, 3]), Arg::Other],
                Some(&["", "", "", stride, padding, dilation, groups]),
            )
        };
        let why = refused("aten::conv2d", &conv("[-2, -2]", "[1, 1]", "[1, 1]", "1"));
        assert_eq!(
            why,
            "impossible arguments: stride [-2, -2] (expected 2 non-negative integers)"
        );
        let why = refused("aten::conv2d", &conv("[2, 2]", "[1, x]", "[1, 1]", "1"));
        assert!(
            why.starts_with("impossible arguments: padding [1, x]"),
            "{why}"
        );
        let why = refused("aten::conv2d", &conv("[2, 2]", "[1, 1]", "[1, 1, 1]", "1"));
        assert!(
            why.starts_with("impossible arguments: dilation [1, 1, 1]"),
            "{why}"
        );
        let why = refused("aten::conv2d", &conv("[2, 2]", "[1, 1]", "[1, 1]", "-1"));
        assert!(why.starts_with("impossible arguments: groups -1"), "{why}");
        // Pooling: a negative padding was read as none.
        let pool = inputs(
            vec![t(F, &[1, 3, 8, 8])],
            Some(&["", "[2, 2]", "[2, 2]", "[-1, -1]", "[1, 1]", "False"]),
        );
        let why = refused("aten::max_pool2d_with_indices", &pool);
        assert!(
            why.starts_with("impossible arguments: padding [-1, -1]"),
            "{why}"
        );
    }

    #[test]
    fn a_tensor_of_an_unknown_type_is_named_not_called_another_shape() {
        // Issue 29: `mm` of a type the rules do not know was refused with "expected matrices
        // [M,K] and [K,N]", though the shapes were those.
        let mut x = inputs(vec![Arg::Other, t(F, &[6, 5])], None);
        x.untyped = vec![(0, "c10::Float4_e2m1fn_x2".into(), vec![8, 6])];
        let why = refused("aten::mm", &x);
        assert_eq!(
            why,
            "input 0 is a tensor [8, 6] of a type the rules do not know (\"c10::Float4_e2m1fn_x2\"): its element size and datapath are unknown"
        );
    }
}
