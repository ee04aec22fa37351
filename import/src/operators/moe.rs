//! Mixture-of-experts layers as the serving engines record them: vLLM's `vllm::moe_forward`
//! (and `moe_forward_shared`), whose arguments are the hidden states and the router's logits
//! only, the fused-experts operators (`vllm::`/`sglang::` `inplace_fused_experts`,
//! `outplace_fused_experts`), whose arguments are the experts' weights and the routing, and the
//! top-k routing itself (`_moe_C::topk_softmax`, `sgl_kernel::topk_softmax`).
//!
//! Per token, each of its `k` experts runs two GEMMs: the gate and up projection `H → 2I` (a
//! gated expert, SwiGLU) and the down projection `I → H`, F = 2·H·2I + 2·I·H = 6·H·I per
//! token-expert pair (4·H·I ungated). The routing (softmax, top-k), the activation and the
//! weighted sum of the `k` outputs are not counted: a few FLOPs per hidden element, under
//! 1/(2·I) of the experts' (0.1 % for I = 360). B: the hidden states and router logits read,
//! the output written, and the weights of every expert a token may be routed to, min(E, T·k)
//! of them (exactly `k` for one token; the routing is not recorded), at their stored size; the
//! experts' biases, which a configuration does not declare (gpt-oss has them), are not counted:
//! 2·I + H values against 3·H·I weights per expert.
//!
//! `moe_forward` records neither the top-k nor the experts' width: they come from the model's
//! configuration ([`super::model::ModelConfig`], `--model-config`), the width divided by the
//! tensor parallelism (vLLM's `intermediate_size_per_partition`), the tensor parallelism given
//! or read from the trace ([`super::model::Parallel`]). With expert parallelism each rank
//! computes the tokens routed to its own experts, which the trace does not record: no cost.

use roofline_model::bundle::Datapath;

use super::model::{Context, WeightFormat};
use super::{Arg, Complexity, Dtype, Family, NoCost, OpCost, OpInputs, numel, shapes_err};

/// What a missing configuration field makes unknown, and how to give it.
const GIVE_CONFIG: &str = "give the model's config.json with --model-config";

/// The experts a token may be routed to: min(E, T·k).
fn touched(experts: u64, tokens: u64, k: u64) -> u64 {
    experts.min(tokens.saturating_mul(k))
}

/// The note on how many experts' weights B reads, when the routing could leave some out.
fn touched_note(experts: u64, tokens: u64, k: u64) -> Option<String> {
    (tokens > 1).then(|| {
        format!(
            "the weights of min(E, T·k) = {} of {experts} experts read (the routing is not recorded)",
            touched(experts, tokens, k)
        )
    })
}

/// `vllm::moe_forward(Tensor hidden_states, Tensor router_logits, str layer_name)` and
/// `moe_forward_shared` (`vllm/model_executor/layers/fused_moe/layer.py`): T tokens of the
/// recorded hidden states `[T, H′]`, E experts from the router's logits `[T, E]`, top-k, the
/// experts' width I and the hidden size H from the model's configuration, I per rank = I / TP.
/// F = 6·T·k·H·I_rank (gated experts, as vLLM's `FusedMoE` runs SwiGLU and GELU experts:
/// `w13` is `2·I` wide); the shared experts of `moe_forward_shared` add 6·T·H·I_shared/TP.
/// When the recorded width H′ exceeds the model's H (vLLM pads the hidden states for its MXFP4
/// kernels: 2,880 → 3,072), F counts the model's arithmetic, not the padding's; B the recorded
/// tensors as moved. The weights at the configuration's storage (MXFP4: 4.25 bits; FP8 with its
/// block scales; else `torch_dtype`); the datapath the hidden states' (FP8 for FP8 weights,
/// whose activations vLLM quantises), said in [`OpCost::assumed`].
pub(super) fn moe_forward(x: &OpInputs, ctx: &Context, shared: bool) -> Result<OpCost, NoCost> {
    let (Some((dt, &[t, h_rec])), Some((_, &[t2, e]))) = (x.tensor(0), x.tensor(1)) else {
        return Err(shapes_err(
            "expected hidden states [tokens, hidden] and router logits [tokens, experts]",
        ));
    };
    if t != t2 {
        return Err(shapes_err(format!(
            "impossible arguments: {t} tokens of hidden states against {t2} of router logits"
        )));
    }
    let Some(cfg) = ctx.model else {
        return Err(shapes_err(format!(
            "top-k and the experts' width are not recorded: {GIVE_CONFIG}"
        )));
    };
    let missing = |what: &str| shapes_err(format!("the model configuration gives no {what}"));
    let k = cfg
        .top_k
        .ok_or_else(|| missing("top-k (num_experts_per_tok)"))?;
    let ffn = cfg
        .expert_ffn
        .ok_or_else(|| missing("experts' width (moe_intermediate_size, intermediate_size)"))?;
    if let Some(ce) = cfg.experts
        && ce != e
    {
        return Err(shapes_err(format!(
            "the router's logits score {e} experts, the model configuration {ce}: is it this model's?"
        )));
    }
    if k > e {
        return Err(shapes_err(format!(
            "impossible arguments: top-{k} of {e} experts"
        )));
    }
    let h = cfg.hidden_size.unwrap_or(h_rec);
    if h > h_rec {
        return Err(shapes_err(format!(
            "the hidden states are {h_rec} wide, the model configuration's hidden_size {h}: is it this model's?"
        )));
    }
    let Some(tp) = ctx.tensor_parallel else {
        return Err(shapes_err(
            "the tensor parallelism is not known: give it with roofline import --tensor-parallel N",
        ));
    };
    if let Some(ep) = ctx.expert_parallel.filter(|p| p.size > 1) {
        return Err(shapes_err(format!(
            "{}: each rank computes only the tokens routed to its experts (not recorded)",
            ep.describe("expert parallelism")
        )));
    }
    let per_rank = |width: u64, what: &str| -> Result<u64, NoCost> {
        if !width.is_multiple_of(tp.size) {
            return Err(shapes_err(format!(
                "impossible arguments: {what} {width} does not divide over {} ranks",
                tp.size
            )));
        }
        Ok(width / tp.size)
    };
    let i = per_rank(ffn, "the experts' width")?;
    let weights = cfg
        .weights
        .ok_or_else(|| missing("weight storage (quantization_config, torch_dtype)"))?;
    let Some(w_bytes) = weights.bytes() else {
        return Err(shapes_err(
            "the model configuration's quantization method is not one the rules know (mxfp4, fp8, or none): the weights' size is unknown",
        ));
    };
    let mut assumed = vec![
        "gated experts (gate and up projection 2·I wide), as vLLM's FusedMoE runs them".to_string(),
        tp.describe("tensor parallelism"),
    ];
    if let Some(ep) = ctx.expert_parallel {
        assumed.push(ep.describe("expert parallelism"));
    }
    if h < h_rec {
        assumed.push(format!(
            "hidden_size {h} for the arithmetic; the hidden states, padded to {h_rec}, in B as moved"
        ));
    }
    if let Some(n) = touched_note(e, t, k) {
        assumed.push(n);
    }
    let per_matrix_scale = if matches!(weights, WeightFormat::Fp8 { block: None }) {
        4.0
    } else {
        0.0
    };
    let (tf, hf, i_f) = (t as f64, h as f64, i as f64);
    let mut flops = 6.0 * tf * k as f64 * hf * i_f;
    let mut bytes = 2.0 * x.arg(0).bytes()
        + x.arg(1).bytes()
        + touched(e, t, k) as f64 * (3.0 * hf * i_f * w_bytes + 2.0 * per_matrix_scale);
    if shared {
        let s = cfg.shared_ffn.ok_or_else(|| {
            missing("shared experts' width (shared_expert_intermediate_size, n_shared_experts)")
        })?;
        let s = per_rank(s, "the shared experts' width")? as f64;
        flops += 6.0 * tf * hf * s;
        bytes += 3.0 * hf * s * w_bytes + 2.0 * per_matrix_scale + x.arg(0).bytes();
    }
    let datapath = match weights {
        WeightFormat::Fp8 { .. } => {
            assumed.push(
                "FP8 weights: the activations quantised to FP8, F on the FP8 Tensor Cores".into(),
            );
            Datapath::TensorFp8
        }
        WeightFormat::Plain(_) => dt.matmul(),
        WeightFormat::Mxfp4 | WeightFormat::Unknown => {
            assumed.push(format!(
                "{} weights, F placed on the {} datapath of the hidden states",
                weights.describe(),
                dt.matmul().label()
            ));
            dt.matmul()
        }
    };
    Ok(OpCost {
        complexity: Complexity::new(flops, bytes),
        datapath,
        family: Family::Moe,
        assumed,
    })
}

/// The fused-experts operators, `inplace_fused_experts(Tensor hidden_states, Tensor w1, Tensor
/// w2, Tensor topk_weights, Tensor topk_ids, …)` and `outplace_fused_experts` (vLLM's
/// `fused_moe.py` and SGLang's, the same first five arguments in every release): T tokens `[T,
/// H]`, the E local experts' `w1 [E, N, H]` (N = 2I gated, I not) and `w2 [E, H, I]`, top-k
/// from `topk_ids [T, k]`. F = 2·T·k·(N·H + H·I). B: the hidden states read and the output
/// written (in place or not), the routing tensors, min(E, T·k) experts' weights at their type,
/// and the other tensor arguments (scales, zero points, biases, the expert map) once, whole.
/// Every token-expert pair is taken as computed here (with expert parallelism, only those
/// routed to this rank's experts are), said in [`OpCost::assumed`].
pub(super) fn fused_experts(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some((dt, hs)), Some((d1, w1)), Some((d2, w2)), Some((_, ids))) =
        (x.tensor(0), x.tensor(1), x.tensor(2), x.tensor(4))
    else {
        return Err(shapes_err(
            "expected hidden states, w1, w2, the top-k weights and ids",
        ));
    };
    let (&[t, h], &[e, n, k1], &[e2, h2, i], &[t2, k]) = (hs, w1, w2, ids) else {
        return Err(shapes_err(
            "expected hidden states [T, H], w1 [E, N, H], w2 [E, H, I] and topk_ids [T, k]",
        ));
    };
    if k1 != h || h2 != h {
        return Err(shapes_err(format!(
            "weights packed or of another width: w1 {w1:?} and w2 {w2:?} for hidden states of {h} (packed 4-bit weights are not read)"
        )));
    }
    if e != e2 || t != t2 || (n != 2 * i && n != i) {
        return Err(shapes_err(format!(
            "impossible arguments: w1 {w1:?}, w2 {w2:?} and topk_ids {ids:?} for hidden states {hs:?}"
        )));
    }
    let flops = 2.0 * t as f64 * k as f64 * (n * h + h * i) as f64;
    let weights =
        touched(e, t, k) as f64 * ((n * h) as f64 * d1.bytes() + (h * i) as f64 * d2.bytes());
    let others: f64 = x.args.iter().skip(5).map(Arg::bytes).sum();
    let bytes =
        2.0 * numel(hs) * dt.bytes() + x.arg(3).bytes() + x.arg(4).bytes() + weights + others;
    let mut assumed = vec![
        "every token-expert pair computed here (with expert parallelism, only this rank's are)"
            .to_string(),
    ];
    if let Some(note) = touched_note(e, t, k) {
        assumed.push(note);
    }
    let datapath = if d1 == Dtype::F8 {
        assumed.push("FP8 weights: the activations quantised to FP8 (w8a8)".into());
        Datapath::TensorFp8
    } else {
        dt.matmul()
    };
    Ok(OpCost {
        complexity: Complexity::new(flops, bytes),
        datapath,
        family: Family::Moe,
        assumed,
    })
}

/// Where a top-k routing keeps its arguments.
#[derive(Debug, Clone, Copy)]
pub(super) struct TopK {
    /// The tensors written (`topk_weights`, `topk_indices`, and vLLM's
    /// `token_expert_indices`).
    written: &'static [usize],
    /// `gating_output`, the router's logits `[T, E]`.
    gating: usize,
    /// `renormalize`.
    renormalize: usize,
}

impl TopK {
    /// vLLM's `_moe_C::topk_softmax(Tensor! topk_weights, Tensor! topk_indices, Tensor!
    /// token_expert_indices, Tensor gating_output[, bool renormalize[, Tensor? bias]])`
    /// (`csrc/moe/torch_bindings.cpp`; `renormalize` from 2025).
    pub(super) const VLLM: TopK = TopK {
        written: &[0, 1, 2],
        gating: 3,
        renormalize: 4,
    };
    /// SGLang's `topk_softmax(Tensor! topk_weights, Tensor! topk_indices, Tensor
    /// gating_output, bool renormalize, …)` (`sgl-kernel/csrc/common_extension.cc`).
    pub(super) const SGL: TopK = TopK {
        written: &[0, 1],
        gating: 2,
        renormalize: 3,
    };
}

/// A MoE layer's routing: the softmax of each token's E logits (3 FLOPs per logit, as
/// [`super::norm`]'s softmax counts it), the top k (comparisons, 0), and, with `renormalize`,
/// the k weights summed and divided by their sum (2 per weight). B: the logits and any bias
/// read, the weights and indices written. A schema without `renormalize` (vLLM before 2025,
/// which renormalised outside) counts none.
pub(super) fn topk_softmax(x: &OpInputs, r: TopK) -> Result<OpCost, NoCost> {
    let (Some((dt, &[t, e])), Some((_, &[t2, k]))) = (x.tensor(r.gating), x.tensor(r.written[0]))
    else {
        return Err(shapes_err(
            "expected the top-k weights [T, k] and the gating output [T, E]",
        ));
    };
    if t != t2 || k > e {
        return Err(shapes_err(format!(
            "impossible arguments: top-{k} of {e} experts for {t2} of {t} tokens"
        )));
    }
    let renormalize = if x.args.len() > r.renormalize {
        x.flag(r.renormalize).ok_or_else(|| {
            shapes_err("whether the weights are renormalised (renormalize) is not recorded")
        })?
    } else {
        false
    };
    let flops = 3.0 * (t * e) as f64
        + if renormalize {
            2.0 * (t * k) as f64
        } else {
            0.0
        };
    let read: f64 = x
        .args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i >= r.gating)
        .map(|(_, a)| a.bytes())
        .sum();
    let written: f64 = r.written.iter().map(|&i| x.arg(i).bytes()).sum();
    Ok(OpCost {
        complexity: Complexity::new(flops, read + written),
        datapath: super::elementwise::opmath(dt),
        family: Family::Moe,
        assumed: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::model::{ModelConfig, Parallel, ParallelFrom};
    use crate::operators::op_cost_in;
    use crate::operators::testing::{H, inputs, t};

    /// gpt-oss-120b's fields (`transformers`' `GptOssConfig` defaults, MXFP4 weights).
    fn gpt_oss() -> ModelConfig {
        ModelConfig {
            hidden_size: Some(2880),
            experts: Some(128),
            top_k: Some(4),
            expert_ffn: Some(2880),
            shared_ffn: None,
            weights: Some(WeightFormat::Mxfp4),
        }
    }

    fn tp(size: u64) -> Option<Parallel> {
        Some(Parallel {
            size,
            from: ParallelFrom::WorldSize,
        })
    }

    /// The B200 trace's `vllm::moe_forward [[888, 3072], [888, 128], []]`, gpt-oss-120b at
    /// TP 8: I per rank = 2880/8 = 360; F = 6·888·4·2880·360; B: the padded hidden states
    /// read and written, the logits, and 128 experts' weights (3·2880·360 at 0.53125 bytes).
    #[test]
    fn moe_forward_with_the_models_configuration() {
        let x = inputs(
            vec![t(H, &[888, 3072]), t(H, &[888, 128]), Arg::Other],
            Some(&["", "", ""]),
        );
        let ctx = Context {
            model: Some(gpt_oss()),
            tensor_parallel: tp(8),
            expert_parallel: None,
        };
        let c = op_cost_in("vllm::moe_forward", &x, &ctx).unwrap();
        assert_eq!(c.complexity.flops, 6.0 * 888.0 * 4.0 * 2880.0 * 360.0);
        assert_eq!(
            c.complexity.bytes,
            2.0 * 2.0 * 888.0 * 3072.0
                + 2.0 * 888.0 * 128.0
                + 128.0 * 3.0 * 2880.0 * 360.0 * 0.53125
        );
        assert_eq!((c.family, c.datapath), (Family::Moe, Datapath::TensorBf16));
        for said in [
            "gated",
            "tensor parallelism 8",
            "hidden_size 2880",
            "min(E, T·k) = 128",
            "MXFP4",
        ] {
            assert!(
                c.assumed.iter().any(|a| a.contains(said)),
                "{said}: {:?}",
                c.assumed
            );
        }
        // One token: exactly its 4 experts' weights, no note about the routing.
        let one = inputs(vec![t(H, &[1, 3072]), t(H, &[1, 128]), Arg::Other], None);
        let c = op_cost_in("vllm::moe_forward", &one, &ctx).unwrap();
        assert_eq!(
            c.complexity.bytes,
            2.0 * 2.0 * 3072.0 + 2.0 * 128.0 + 4.0 * 3.0 * 2880.0 * 360.0 * 0.53125
        );
        assert!(!c.assumed.iter().any(|a| a.contains("min(E")));
        // Without the configuration, or the parallelism, or with expert parallelism: no cost,
        // saying what is missing and how to give it.
        let why = |ctx: &Context| match op_cost_in("vllm::moe_forward", &x, ctx) {
            Err(NoCost::Shapes(w)) => w,
            other => panic!("{other:?}"),
        };
        assert!(why(&Context::default()).contains("--model-config"));
        assert!(
            why(&Context {
                tensor_parallel: None,
                ..ctx
            })
            .contains("--tensor-parallel")
        );
        let ep = Context {
            expert_parallel: Some(Parallel {
                size: 8,
                from: ParallelFrom::Given,
            }),
            ..ctx
        };
        assert!(why(&ep).contains("routed to its experts"));
        // Another model's configuration (64 experts) is refused.
        let other = Context {
            model: Some(ModelConfig {
                experts: Some(64),
                ..gpt_oss()
            }),
            ..ctx
        };
        assert!(why(&other).contains("128 experts"));
    }

    #[test]
    fn fused_experts_from_their_arguments() {
        // 16 tokens, 8 experts of I = 32 (w1 [8, 64, 48], w2 [8, 48, 32]), top-2: F =
        // 2·16·2·(64·48 + 48·32); all 8 experts' weights read (16·2 ≥ 8).
        let x = inputs(
            vec![
                t(H, &[16, 48]),
                t(H, &[8, 64, 48]),
                t(H, &[8, 48, 32]),
                t(Dtype::F32, &[16, 2]),
                t(Dtype::I32, &[16, 2]),
            ],
            None,
        );
        let c = op_cost_in("vllm::outplace_fused_experts", &x, &Context::default()).unwrap();
        assert_eq!(
            c.complexity.flops,
            2.0 * 16.0 * 2.0 * (64.0 * 48.0 + 48.0 * 32.0)
        );
        assert_eq!(
            c.complexity.bytes,
            2.0 * 2.0 * 16.0 * 48.0 + 8.0 * 32.0 + 2.0 * 8.0 * (64.0 * 48.0 + 48.0 * 32.0)
        );
        assert_eq!(c.datapath, Datapath::TensorBf16);
        let s = op_cost_in("sglang::inplace_fused_experts", &x, &Context::default()).unwrap();
        assert_eq!(s.complexity, c.complexity);
        // Packed 4-bit weights (w1's last dimension half the hidden size) are refused.
        let mut packed = x;
        packed.args[1] = t(Dtype::U8, &[8, 64, 24]);
        assert!(op_cost("vllm::outplace_fused_experts", &packed).is_err());
    }

    use crate::operators::op_cost;

    #[test]
    fn topk_routing_by_hand() {
        // vLLM's: 16 tokens over 8 experts, top-2, renormalised: 3·128 + 2·32; the float
        // logits read, the weights (float) and two index tensors (int32) written.
        let args = vec![
            t(Dtype::F32, &[16, 2]),
            t(Dtype::I32, &[16, 2]),
            t(Dtype::I32, &[16, 2]),
            t(Dtype::F32, &[16, 8]),
            Arg::Other,
            Arg::Other,
        ];
        let c = op_cost(
            "_moe_C::topk_softmax",
            &inputs(args.clone(), Some(&["", "", "", "", "True", ""])),
        )
        .unwrap();
        assert_eq!(c.complexity.flops, 3.0 * 128.0 + 2.0 * 32.0);
        assert_eq!(c.complexity.bytes, 4.0 * 128.0 + 3.0 * 4.0 * 32.0);
        assert_eq!(c.family, Family::Moe);
        // The four-argument schema: no renormalisation.
        let c = op_cost("_moe_C::topk_softmax", &inputs(args[..4].to_vec(), None)).unwrap();
        assert_eq!(c.complexity.flops, 3.0 * 128.0);
        // The flag's value not recorded: refused, not assumed.
        assert!(op_cost("_moe_C::topk_softmax", &inputs(args, None)).is_err());
    }
}
