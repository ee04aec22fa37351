//! The inference fast path of `nn.TransformerEncoderLayer` and `nn.MultiheadAttention` (in eval
//! under `no_grad`, PyTorch 1.12 and later): `_transformer_encoder_layer_fwd`, which runs
//! `_native_multi_head_attention`, which runs `_transform_bias_rescale_qkv`, and the matrix
//! products, softmax, residual additions, layer norms and `_addmm_activation` around them
//! (`aten/src/ATen/native/transformers/transformer.cpp` and `attention.cpp`).
//!
//! An outer call's F is the sum of its parts, each counted by the rule of the operator that runs
//! it ([`super::op_cost`] on the part's shapes), so that a trace that records the parts inside the
//! call (as the CPU's does) counts the same work either way, and the import, which counts each
//! piece once ([`crate::trace::calls`]), finds nothing left over. B is the call's own minimum
//! traffic: its tensor arguments read once and its outputs written once.
//!
//! PyTorch's own FLOP counter (`torch.utils.flop_counter`) counts 0 for the whole path: it runs
//! the outer operator whole. The oracle's figure is a hand formula, checked against the counter
//! on the same model with the fast path disabled (`scripts/oracle/make_oracle.py`,
//! `docs/operator-accuracy.md`).

use super::{Arg, Complexity, Dtype, Family, NoCost, OpCost, OpInputs, numel, op_cost, shapes_err};

/// `_transform_bias_rescale_qkv(qkv [B, T, 3·D], qkv_bias [3·D], num_heads)`: `q = (q + b_q)/√d`
/// (an addition and a multiplication per element), `k + b_k` and `v + b_v` (an addition each):
/// F = 4·B·T·D. B: `qkv` and the bias read, q, k and v (`[3, B, h, T, d]`, as many elements as
/// `qkv`) written. Source: `transform_bias_rescale_qkv_inner_loop` (CPU) and
/// `transform_bias_rescale_qkv_kernel` (CUDA), `aten/src/ATen/native/transformers/`.
pub(super) fn transform_bias_rescale_qkv(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some((dt, qkv)), Some((_, bias))) = (x.tensor(0), x.tensor(1)) else {
        return Err(shapes_err("expected qkv [B, T, 3·D] and qkv_bias [3·D]"));
    };
    let (&[b, t, d3], &[d3b]) = (qkv, bias) else {
        return Err(shapes_err("expected qkv [B, T, 3·D] and qkv_bias [3·D]"));
    };
    if d3 % 3 != 0 || d3b != d3 {
        return Err(shapes_err(format!(
            "impossible arguments: qkv {qkv:?} with a bias {bias:?} (3·D each)"
        )));
    }
    let elements = (b * t * d3) as f64;
    Ok(OpCost {
        complexity: Complexity::new(
            4.0 / 3.0 * elements,
            dt.bytes() * (2.0 * elements + d3 as f64),
        ),
        datapath: super::elementwise::opmath(dt),
        family: Family::Elementwise,
        assumed: Vec::new(),
    })
}

/// What one attention of the fast path computes.
struct Mha {
    dt: Dtype,
    /// Batch, query length, key length, width, heads.
    b: u64,
    t: u64,
    s: u64,
    d: u64,
    h: u64,
    /// The attention weights returned, averaged over the heads or not.
    weights: Option<bool>,
}

impl Mha {
    /// The parts `native_multi_head_attention_cpu` runs, each as `(operator, inputs)` for
    /// [`op_cost`]: the Q, K, V projection (one GEMM `[B·T, D] × [D, 3·D]`: the fast path requires
    /// query, key and value of one shape), `_transform_bias_rescale_qkv`, `Q·Kᵀ` and
    /// `softmax(·)·V` as batched products over B·h, the softmax (`_masked_softmax` with a mask:
    /// as many FLOPs), and the output projection (`addmm` with its bias).
    fn parts(&self) -> Vec<(&'static str, OpInputs)> {
        let (b, t, s, d, h) = (self.b, self.t, self.s, self.d, self.h);
        let dh = d / h;
        let tensor = |shape: &[u64]| Arg::Tensor(self.dt, shape.to_vec());
        let call = |args: Vec<Arg>| OpInputs {
            args,
            ..OpInputs::default()
        };
        vec![
            (
                "aten::mm",
                call(vec![tensor(&[b * t, d]), tensor(&[d, 3 * d])]),
            ),
            (
                "aten::_transform_bias_rescale_qkv",
                call(vec![tensor(&[b, t, 3 * d]), tensor(&[3 * d])]),
            ),
            (
                "aten::bmm",
                call(vec![tensor(&[b * h, t, dh]), tensor(&[b * h, dh, s])]),
            ),
            ("aten::_softmax", call(vec![tensor(&[b, h, t, s])])),
            (
                "aten::bmm",
                call(vec![tensor(&[b * h, t, s]), tensor(&[b * h, s, dh])]),
            ),
            (
                "aten::addmm",
                call(vec![
                    tensor(&[d]),
                    tensor(&[b * t, d]),
                    tensor(&[d, d]),
                    Arg::Other,
                    Arg::Other,
                ]),
            ),
        ]
    }

    /// F: the parts', and with the weights averaged over the heads their sum over the heads and
    /// division by h (`qkt.sum(1); qkt /= num_head`): (h − 1)·B·T·S additions and B·T·S
    /// divisions.
    fn flops(&self, assumed: &mut Vec<String>) -> Result<f64, NoCost> {
        let mut f = sum_parts(&self.parts(), assumed)?;
        if self.weights == Some(true) {
            f += (self.h * self.b * self.t * self.s) as f64;
        }
        Ok(f)
    }
}

/// The summed F of these parts, their assumptions gathered.
fn sum_parts(parts: &[(&str, OpInputs)], assumed: &mut Vec<String>) -> Result<f64, NoCost> {
    let mut f = 0.0;
    for (op, x) in parts {
        let c = op_cost(op, x)?;
        f += c.complexity.flops;
        for a in c.assumed {
            if !assumed.contains(&a) {
                assumed.push(a);
            }
        }
    }
    Ok(f)
}

/// An integer of `Concrete Inputs`, or why it is needed.
fn recorded(x: &OpInputs, i: usize, what: &str) -> Result<u64, NoCost> {
    x.int_arg(i, what)?.ok_or_else(|| {
        shapes_err(format!(
            "{what} not recorded (Concrete Inputs, PyTorch 2.1 and later): the softmax's size is unknown"
        ))
    })
}

/// The attention's dimensions from a query `[B, T, D]`, a key `[B, S, D]` and the head count.
fn dims(q: &[u64], k: &[u64], heads: u64) -> Result<(u64, u64, u64, u64), NoCost> {
    let (&[b, t, d], &[bk, s, dk]) = (q, k) else {
        return Err(shapes_err("expected 3-d query and key [B, T, D]"));
    };
    if heads == 0 || d % heads != 0 || bk != b || dk != d {
        return Err(shapes_err(format!(
            "impossible arguments: a query {q:?} and key {k:?} over {heads} heads"
        )));
    }
    Ok((b, t, s, d))
}

/// `_native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
/// proj_weight, proj_bias, mask, need_weights, average_attn_weights, mask_type)`: F as
/// `native_multi_head_attention_cpu` runs it ([`Mha::parts`]): for B·T queries of width D, h
/// heads, 2·B·T·D·3D + 4·B·T·D (bias and scale) + 2·B·T·S·D (Q·Kᵀ) + 3·B·h·T·S (softmax) +
/// 2·B·T·S·D + 2·B·T·D·D, and h·B·T·S when the weights are returned averaged. B: query, key,
/// value, the weights and biases (and a mask) read; the output `[B, T, D]` (and the weights,
/// `[B, T, S]` averaged or `[B, h, T, S]`) written. (On CUDA PyTorch may run the attention as
/// scaled-dot-product attention, recorded inside this call and counted by its own rule, which
/// counts no softmax: this call then keeps the softmax's and the bias's FLOPs, on its own
/// kernels if it launched any.)
pub(super) fn multi_head_attention(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some((dt, q)), Some((_, k)), Some(_)) = (x.tensor(0), x.tensor(1), x.tensor(2)) else {
        return Err(shapes_err("expected query, key and value tensors"));
    };
    let heads = recorded(x, 4, "num_head")?;
    let (b, t, s, d) = dims(q, k, heads)?;
    let need_weights = x.flag(10).unwrap_or(true);
    let average = x.flag(11).unwrap_or(true);
    let m = Mha {
        dt,
        b,
        t,
        s,
        d,
        h: heads,
        weights: need_weights.then_some(average),
    };
    let mut assumed = Vec::new();
    let flops = m.flops(&mut assumed)?;
    let read: f64 = [0, 1, 2, 5, 6, 7, 8, 9]
        .iter()
        .map(|&i| x.arg(i).bytes())
        .sum();
    let weights = match m.weights {
        Some(true) => (b * t * s) as f64,
        Some(false) => (b * heads * t * s) as f64,
        None => 0.0,
    };
    Ok(OpCost {
        complexity: Complexity::new(flops, read + dt.bytes() * ((b * t * d) as f64 + weights)),
        datapath: dt.matmul(),
        family: Family::Attention,
        assumed,
    })
}

/// `_transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias,
/// proj_weight, proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2,
/// norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask, mask_type)`: F as
/// `transformer_encoder_layer_forward` runs it: the self-attention
/// ([`multi_head_attention`]'s parts, no weights), two residual additions (`x.add_(src)`, 2 FLOPs
/// per element: `add`'s FMA), two layer norms, the feed-forward network `_addmm_activation`
/// (`[B·T, D] × [D, F]`, ReLU or GELU) and `addmm` (`[B·T, F] × [F, D]`), each part by its own
/// rule. B: `src`, every weight and bias (and a mask) read, the output `[B, T, D]` written.
pub(super) fn encoder_layer(x: &OpInputs) -> Result<OpCost, NoCost> {
    let Some((dt, src)) = x.tensor(0) else {
        return Err(shapes_err("expected the input src [B, T, D]"));
    };
    let heads = recorded(x, 2, "num_heads")?;
    let (b, t, _, d) = dims(src, src, heads)?;
    let (Some((_, w1)), Some((_, w2))) = (x.tensor(14), x.tensor(16)) else {
        return Err(shapes_err(
            "expected the feed-forward weights [F, D] and [D, F]",
        ));
    };
    let (&[ff, d1], &[d2, ff2]) = (w1, w2) else {
        return Err(shapes_err(
            "expected the feed-forward weights [F, D] and [D, F]",
        ));
    };
    if d1 != d || d2 != d || ff2 != ff {
        return Err(shapes_err(format!(
            "impossible arguments: feed-forward weights {w1:?} and {w2:?} for a width of {d}"
        )));
    }
    let tensor = |shape: &[u64]| Arg::Tensor(dt, shape.to_vec());
    let call = |args: Vec<Arg>, concrete: Option<Vec<String>>| OpInputs {
        args,
        concrete,
        ..OpInputs::default()
    };
    let x3 = [b, t, d];
    let add = call(vec![tensor(&x3), tensor(&x3), Arg::Other], None);
    let norm = call(
        vec![
            tensor(&x3),
            Arg::Other,
            tensor(&[d]),
            tensor(&[d]),
            Arg::Other,
        ],
        None,
    );
    let use_gelu = x.concrete(7).map(str::to_string);
    let ffn1 = call(
        vec![
            tensor(&[ff]),
            tensor(&[b * t, d]),
            tensor(&[d, ff]),
            Arg::Other,
            Arg::Other,
            Arg::Other,
        ],
        Some(vec![
            String::new(),
            String::new(),
            String::new(),
            "1".into(),
            "1".into(),
            use_gelu.unwrap_or_default(),
        ]),
    );
    let ffn2 = call(
        vec![
            tensor(&[d]),
            tensor(&[b * t, ff]),
            tensor(&[ff, d]),
            Arg::Other,
            Arg::Other,
        ],
        None,
    );
    let attention = Mha {
        dt,
        b,
        t,
        s: t,
        d,
        h: heads,
        weights: None,
    };
    let mut parts = attention.parts();
    parts.extend([
        ("aten::add_", add.clone()),
        ("aten::native_layer_norm", norm.clone()),
        ("aten::_addmm_activation", ffn1),
        ("aten::addmm", ffn2),
        ("aten::add_", add),
        ("aten::native_layer_norm", norm),
    ]);
    let mut assumed = Vec::new();
    let flops = sum_parts(&parts, &mut assumed)?;
    let read: f64 = (0..x.args.len()).map(|i| x.arg(i).bytes()).sum();
    Ok(OpCost {
        complexity: Complexity::new(flops, read + dt.bytes() * numel(src)),
        datapath: dt.matmul(),
        family: Family::Transformer,
        assumed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{F, inputs, t};

    /// The CPU trace's first layer of the oracle's encoder (PyTorch 2.15): B = 2, T = 10,
    /// D = 64, 4 heads, F = 128, ReLU: its Concrete Inputs as recorded.
    fn layer(use_gelu: &str) -> OpInputs {
        let mut args = vec![t(F, &[2, 10, 64]), Arg::Other, Arg::Other];
        args.extend([t(F, &[192, 64]), t(F, &[192]), t(F, &[64, 64]), t(F, &[64])]);
        args.extend([Arg::Other, Arg::Other, Arg::Other]);
        args.extend([t(F, &[64]), t(F, &[64]), t(F, &[64]), t(F, &[64])]);
        args.extend([
            t(F, &[128, 64]),
            t(F, &[128]),
            t(F, &[64, 128]),
            t(F, &[64]),
        ]);
        args.extend([Arg::Other, Arg::Other]);
        let mut c = vec![""; 20];
        c[1] = "64";
        c[2] = "4";
        c[7] = use_gelu;
        c[8] = "False";
        c[9] = "1.0000000000000001e-05";
        inputs(args, Some(&c))
    }

    #[test]
    fn transform_bias_rescale_qkv_by_hand() {
        // qkv [2, 10, 192]: q's 1280 elements 2 FLOPs each, k's and v's 1 each: 5120.
        let x = inputs(
            vec![t(F, &[2, 10, 192]), t(F, &[192]), Arg::Other],
            Some(&["", "", "4"]),
        );
        let c = op_cost("aten::_transform_bias_rescale_qkv", &x).unwrap();
        assert_eq!(c.complexity.flops, 2.0 * 1280.0 + 1280.0 + 1280.0);
        assert_eq!(c.complexity.bytes, 4.0 * (2.0 * 3840.0 + 192.0));
    }

    #[test]
    fn multi_head_attention_by_hand() {
        // Self-attention, B = 2, T = S = 10, D = 64, 4 heads, no weights returned: the Q/K/V
        // projection 2·20·64·192 = 491,520; bias and scale 4·20·64 = 5,120; Q·Kᵀ and P·V
        // 2·2·10·10·64 = 25,600 each; the softmax 3·2·4·10·10 = 2,400; the output projection
        // 2·20·64·64 = 163,840.
        let by_hand = 491_520.0 + 5_120.0 + 2.0 * 25_600.0 + 2_400.0 + 163_840.0;
        let q = || t(F, &[2, 10, 64]);
        let mut args = vec![q(), q(), q(), Arg::Other, Arg::Other];
        args.extend([t(F, &[192, 64]), t(F, &[192]), t(F, &[64, 64]), t(F, &[64])]);
        args.extend(std::iter::repeat_n(Arg::Other, 4));
        let mut c = vec![""; 13];
        c[3] = "64";
        c[4] = "4";
        c[10] = "False";
        c[11] = "True";
        let x = inputs(args.clone(), Some(&c));
        let cost = op_cost("aten::_native_multi_head_attention", &x).unwrap();
        assert_eq!(cost.complexity.flops, by_hand);
        assert_eq!(cost.family, Family::Attention);
        // Read: q, k, v (1280 each), the weights and biases (12288 + 192 + 4096 + 64); written:
        // the output (1280).
        let read = 3.0 * 1280.0 + 12288.0 + 192.0 + 4096.0 + 64.0;
        assert_eq!(cost.complexity.bytes, 4.0 * (read + 1280.0));
        // The weights returned averaged: their sum over the heads and division, 4·2·10·10, and
        // their [2, 10, 10] written.
        c[10] = "True";
        let cost = op_cost(
            "aten::_native_multi_head_attention",
            &inputs(args.clone(), Some(&c)),
        )
        .unwrap();
        assert_eq!(cost.complexity.flops, by_hand + 800.0);
        assert_eq!(cost.complexity.bytes, 4.0 * (read + 1280.0 + 200.0));
        // Without Concrete Inputs the heads are unknown: no count.
        let why = op_cost("aten::_native_multi_head_attention", &inputs(args, None));
        assert!(matches!(why, Err(NoCost::Shapes(w)) if w.contains("num_head")));
    }

    #[test]
    fn encoder_layer_by_hand() {
        // The attention above (739,680), two residual additions 2·2·1280, two layer norms
        // 2·8·1280, the feed-forward GEMMs 2·20·64·128 = 327,680 each.
        let attention = 491_520.0 + 5_120.0 + 2.0 * 25_600.0 + 2_400.0 + 163_840.0;
        let by_hand = attention + 2.0 * 2.0 * 1280.0 + 2.0 * 8.0 * 1280.0 + 2.0 * 327_680.0;
        let c = op_cost("aten::_transformer_encoder_layer_fwd", &layer("False")).unwrap();
        assert_eq!(c.complexity.flops, by_hand);
        assert_eq!(c.family, Family::Transformer);
        // B: src, 12 weights and biases read; the output written.
        let weights = 12288.0 + 192.0 + 4096.0 + 64.0 + 4.0 * 64.0 + 8192.0 + 128.0 + 8192.0 + 64.0;
        assert_eq!(c.complexity.bytes, 4.0 * (1280.0 + weights + 1280.0));
        // GELU: 8 more per element of the first feed-forward output (CUDA's tanh approximation).
        let c = op_cost("aten::_transformer_encoder_layer_fwd", &layer("True")).unwrap();
        assert_eq!(c.complexity.flops, by_hand + 8.0 * 2560.0);
        assert!(
            c.assumed.iter().any(|a| a.contains("tanh")),
            "{:?}",
            c.assumed
        );
    }
}
