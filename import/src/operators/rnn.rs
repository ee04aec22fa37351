//! Recurrent layers: `lstm`, `gru` and cuDNN's `_cudnn_rnn` with its backward, every layer and
//! direction as an LSTM layer of [`roofline_model::analysis::dl::Lstm`], or, for an LSTM with
//! projections (`proj_size > 0`), that layer with its projection ([`ProjectedLayer`]).

use roofline_model::analysis::dl::Lstm;

use super::{Arg, Complexity, Dtype, Family, NoCost, OpCost, OpInputs, numel, shapes_err};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RnnKind {
    Lstm,
    Gru,
    /// `_cudnn_rnn`: the `mode` argument says (2 LSTM, 3 GRU).
    FromMode,
}

/// Where a recurrent operator keeps its arguments.
#[derive(Debug, Clone, Copy)]
pub(super) struct RnnArgs {
    /// The initial hidden state `[layers·directions, B, P]` (a list `[h0, c0]` for `aten::lstm`).
    hx: usize,
    /// The initial cell state `[layers·directions, B, H]`, when it is an argument of its own.
    cx: Option<usize>,
    /// The weights, as a tensor list: `w_ih [4H, I]`, `w_hh [4H, P]`, the biases, and `w_hr [P, H]`
    /// with projections, per layer and direction.
    weights: usize,
    mode: Option<usize>,
    /// `hidden_size` and `proj_size` (cuDNN's ops record them).
    hidden_size: Option<usize>,
    proj_size: Option<usize>,
    layers: usize,
    bidirectional: usize,
    batch_first: usize,
}

impl RnnArgs {
    /// `lstm|gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    /// batch_first)`.
    pub(super) const ATEN: RnnArgs = RnnArgs {
        hx: 1,
        cx: None,
        weights: 2,
        mode: None,
        hidden_size: None,
        proj_size: None,
        layers: 4,
        bidirectional: 7,
        batch_first: 8,
    };
    /// `_cudnn_rnn(input, weight, weight_stride0, weight_buf, hx, cx, mode, hidden_size,
    /// proj_size, num_layers, batch_first, dropout, train, bidirectional, …)`.
    pub(super) const CUDNN: RnnArgs = RnnArgs {
        hx: 4,
        cx: Some(5),
        weights: 1,
        mode: Some(6),
        hidden_size: Some(7),
        proj_size: Some(8),
        layers: 9,
        bidirectional: 13,
        batch_first: 10,
    };
    /// `_cudnn_rnn_backward(input, weight, weight_stride0, weight_buf, hx, cx, output,
    /// grad_output, grad_hy, grad_cy, mode, hidden_size, proj_size, num_layers, batch_first,
    /// dropout, train, bidirectional, …)`.
    pub(super) const CUDNN_BACKWARD: RnnArgs = RnnArgs {
        hx: 4,
        cx: Some(5),
        weights: 1,
        mode: Some(10),
        hidden_size: Some(11),
        proj_size: Some(12),
        layers: 13,
        bidirectional: 17,
        batch_first: 14,
    };
}

/// FLOPs of the GRU cell per (batch, hidden) element: 6 bias additions, 2 additions of the input
/// and hidden parts of r and z, `r·(W_hn h)` and its addition (2), `(1 − z)·n + z·h` (4). The
/// sigmoids and tanh are special functions, not counted (as [`roofline_model::analysis::dl::LSTM_CELL_FLOPS`]).
pub const GRU_CELL_FLOPS: f64 = 14.0;

/// A recurrent call's dimensions, read from its input and hidden state and its recorded
/// arguments.
pub(super) struct RnnShape {
    kind: RnnKind,
    dt: Dtype,
    /// Time steps, batch, input features, hidden units.
    t: u64,
    b: u64,
    i: u64,
    h: u64,
    /// The LSTM's projection size P (its output and recurrent state), `h` without projections.
    p: u64,
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
        let kind = match (kind, p.mode.and_then(|m| x.int(m))) {
            (RnnKind::FromMode, Some(2)) => RnnKind::Lstm,
            (RnnKind::FromMode, Some(3)) => RnnKind::Gru,
            (RnnKind::FromMode, _) => {
                return Err(shapes_err("mode not recorded, or not LSTM or GRU"));
            }
            (k, _) => k,
        };
        let (hx, cx): (Option<&[u64]>, Option<&[u64]>) = match x.arg(p.hx) {
            Arg::Tensor(_, s) => (Some(s), p.cx.and_then(|c| x.arg(c).shape())),
            Arg::Tensors(list) => (
                list.first().map(Vec::as_slice),
                list.get(1).map(Vec::as_slice),
            ),
            Arg::Other => (None, None),
        };
        let Some(&[ld, hb, hx_last]) = hx else {
            return Err(shapes_err(
                "the hidden state's shape [layers·directions, B, H] was not recorded",
            ));
        };
        // The hidden size H and the projection size P: the hidden state h0 is [.., B, P] and the
        // cell state c0 [.., B, H]; else `hidden_size` and `proj_size` as recorded; else the
        // first weight, w_ih [4H, I]. Without projections P = H (PyTorch requires P < H).
        let mut assumed = Vec::new();
        let first_weight = match x.arg(p.weights) {
            Arg::Tensors(list) => list.first().filter(|w| w.len() == 2).map(|w| w[0]),
            _ => None,
        };
        let recorded_h = p.hidden_size.and_then(|i| x.int(i)).filter(|&h| h > 0);
        let recorded_p = p.proj_size.and_then(|i| x.int(i));
        let h = match (cx, recorded_h, first_weight) {
            (Some(&[_, _, h]), _, _) | (_, Some(h), _) => h,
            (_, _, Some(g)) if g % 4 == 0 && kind != RnnKind::Gru => g / 4,
            (_, _, Some(g)) if g % 3 == 0 && kind == RnnKind::Gru => g / 3,
            _ if recorded_p == Some(0) || kind == RnnKind::Gru => hx_last,
            _ => {
                assumed.push(
                    "no projection (proj_size 0): neither the cell state's shape, hidden_size nor the weights recorded, so the hidden size is taken from the hidden state's, which is the projection's size when proj_size > 0".to_string(),
                );
                hx_last
            }
        };
        let proj = hx_last;
        if proj > h || recorded_p.is_some_and(|rp| rp != 0 && rp != proj) {
            return Err(shapes_err(format!(
                "impossible arguments: a hidden state of {proj} for a hidden size of {h} (proj_size {})",
                recorded_p.map_or_else(|| "not recorded".into(), |v| v.to_string())
            )));
        }
        // Layers and directions: recorded, else what the hidden state's first dimension
        // (layers·directions) leaves no doubt about.
        let (layers, dirs) = match (x.int(p.layers), x.flag(p.bidirectional)) {
            (Some(l), Some(bi)) => (l, if bi { 2 } else { 1 }),
            (Some(l), None) if l > 0 && ld % l == 0 && ld / l <= 2 => (l, ld / l),
            (None, Some(bi)) => (ld / if bi { 2 } else { 1 }, if bi { 2 } else { 1 }),
            _ if ld == 1 => (1, 1),
            _ => {
                return Err(shapes_err(
                    "num_layers and bidirectional not recorded, and the hidden state's shape fits more than one reading",
                ));
            }
        };
        let layers = layers.max(1);
        // Batch from the hidden state, time steps from the input: batch_first is not needed.
        let (t, b) = match x.flag(p.batch_first) {
            Some(true) => (d1, d0),
            Some(false) => (d0, d1),
            None if d0 == hb && d1 == hb => (d0, d1),
            None if d0 == hb => (d1, d0),
            None if d1 == hb => (d0, d1),
            None => {
                return Err(shapes_err(format!(
                    "the hidden state's batch {hb} is neither dimension of the input [{d0}, {d1}, {i}]"
                )));
            }
        };
        Ok(RnnShape {
            kind,
            dt,
            t,
            b,
            i,
            h,
            p: proj,
            layers,
            dirs,
            assumed,
        })
    }

    /// Every layer and direction (a layer above the first reads the `dirs·P` outputs of the one
    /// below).
    fn layers(&self) -> impl Iterator<Item = ProjectedLayer> + '_ {
        (0..self.layers).flat_map(move |layer| {
            let input = if layer == 0 {
                self.i
            } else {
                self.dirs * self.p
            };
            (0..self.dirs).map(move |_| ProjectedLayer {
                lstm: Lstm {
                    batch: self.b,
                    seq: self.t,
                    input,
                    hidden: self.h,
                },
                proj: self.p,
            })
        })
    }
}

/// One layer and direction of an LSTM with projections (`proj_size` P < H: PyTorch's `nn.LSTM`,
/// after Sak et al. 2014): each step computes the gates from `[x_t, h_{t−1}]`, where `h` now has
/// P elements, and projects the cell's output to P, `h_t = W_hr·(o·tanh(c_t))`. Without
/// projections (P = H) it is exactly [`roofline_model::analysis::dl::Lstm`].
#[derive(Debug, Clone, Copy)]
pub(super) struct ProjectedLayer {
    /// The layer with its hidden size H; its `hidden` is H, not P.
    lstm: Lstm,
    /// P (H without projections).
    proj: u64,
}

impl ProjectedLayer {
    fn projected(&self) -> bool {
        self.proj != self.lstm.hidden
    }

    /// The gates' GEMM of one step, `[B, I + P] × [I + P, 4H]`: 2·B·4H·(I + P).
    fn gates_gemm(&self) -> f64 {
        let l = &self.lstm;
        2.0 * (l.batch * 4 * l.hidden) as f64 * (l.input + self.proj) as f64
    }

    /// The projection's GEMM of one step, `[B, H] × [H, P]`: 2·B·H·P (none without projections).
    fn projection_gemm(&self) -> f64 {
        if self.projected() {
            2.0 * (self.lstm.batch * self.lstm.hidden * self.proj) as f64
        } else {
            0.0
        }
    }

    /// F forward: per step the gates' GEMM, the cell
    /// ([`roofline_model::analysis::dl::LSTM_CELL_FLOPS`] per B·H) and the projection.
    fn flops(&self) -> f64 {
        if !self.projected() {
            return self.lstm.flops();
        }
        let l = &self.lstm;
        let cell = roofline_model::analysis::dl::LSTM_CELL_FLOPS * (l.batch * l.hidden) as f64;
        l.seq as f64 * (self.gates_gemm() + cell + self.projection_gemm())
    }

    /// B forward, as [`roofline_model::analysis::dl::Lstm::bytes`] counts it: x, the weights
    /// (`w_ih`, `w_hh` [4H, P], `w_hr` [P, H]), one bias of 4H, h0 (B·P) and c0 (B·H) read; every
    /// step's h (T·B·P) and the final c (B·H) written.
    fn bytes(&self, elt: f64) -> f64 {
        if !self.projected() {
            return self.lstm.bytes(elt);
        }
        let l = &self.lstm;
        let (b, t, i, h, p) = (
            l.batch as f64,
            l.seq as f64,
            l.input as f64,
            l.hidden as f64,
            self.proj as f64,
        );
        elt * (t * b * i + (i + p) * 4.0 * h + p * h + 4.0 * h + b * p + b * h + t * b * p + b * h)
    }

    /// F backward per step: `passes` times (the gates' GEMM and the projection's: once for the
    /// data gradients, once more for the weights' when they are computed) and
    /// [`LSTM_CELL_BACKWARD_FLOPS`] per B·H.
    fn backward_flops(&self, passes: f64) -> f64 {
        let l = &self.lstm;
        let cell = LSTM_CELL_BACKWARD_FLOPS * (l.batch * l.hidden) as f64;
        l.seq as f64 * (passes * (self.gates_gemm() + self.projection_gemm()) + cell)
    }
}

/// LSTM and GRU, every layer and direction: an LSTM layer is [`roofline_model::analysis::dl::Lstm`]
/// (with projections, [`ProjectedLayer`]: per step 2·B·4H·(I + P) + 8·B·H + 2·B·H·P); a GRU
/// layer has 3 gates (`2·B·(I+H)·3H` per step plus [`GRU_CELL_FLOPS`]).
pub(super) fn rnn(x: &OpInputs, kind: RnnKind, p: RnnArgs) -> Result<OpCost, NoCost> {
    let r = RnnShape::read(x, kind, p)?;
    let elt = r.dt.bytes();
    let (mut flops, mut bytes) = (0.0, 0.0);
    for layer in r.layers() {
        let l = layer.lstm;
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
                flops += layer.flops();
                bytes += layer.bytes(elt);
            }
        }
    }
    Ok(OpCost {
        complexity: Complexity::new(flops, bytes),
        datapath: r.dt.matmul(),
        family: Family::Rnn,
        assumed: r.assumed,
    })
}

/// FLOPs of the LSTM cell's backward per (batch, hidden) element and step, counted as
/// [`roofline_model::analysis::dl::LSTM_CELL_FLOPS`] is (special functions not counted): the output's and the
/// recurrent gradient of h added (1); `do = dh·tanh(c)` (1); `dc += dh·o·(1 − tanh²(c))` (5);
/// `df = dc·c₋₁`, `di = dc·g`, `dg = dc·i` and `dc₋₁ = dc·f` (4); the gates' pre-activation
/// gradients, `s·(1 − s)` times the gradient for the three sigmoids and `(1 − g²)` times it for
/// the tanh (3 each, 12); the four bias gradients accumulated over the batch (4).
pub const LSTM_CELL_BACKWARD_FLOPS: f64 = 27.0;

/// `_cudnn_rnn_backward(input, weight, weight_stride0, weight_buf, hx, cx, output, grad_output,
/// grad_hy, grad_cy, mode, hidden_size, proj_size, num_layers, batch_first, dropout, train,
/// bidirectional, batch_sizes, dropout_state, reserve, output_mask)`, LSTM only. F per layer,
/// direction and step: the gates' gradient times the weights, for the gradients of x and h (one
/// [`roofline_model::analysis::dl::Lstm::step_gemm`], 2·B·4H·(I + P) with projections), the
/// weights' gradient (another, when `output_mask` asks for it) and [`LSTM_CELL_BACKWARD_FLOPS`];
/// with projections, the projection's gradients likewise (2·B·H·P for the cell output's, 2·B·H·P
/// more for `w_hr`'s). B: the input, weights, initial states, output, the
/// output's and final states' gradients and cuDNN's `reserve` (the saved activations) read; the
/// gradients `output_mask` asks for written, each the size of what it is the gradient of. The
/// weights are `weight_buf` when recorded, else the `weight` list in the input's type.
pub(super) fn rnn_backward(x: &OpInputs) -> Result<OpCost, NoCost> {
    let r = RnnShape::read(x, RnnKind::FromMode, RnnArgs::CUDNN_BACKWARD)?;
    if !matches!(r.kind, RnnKind::Lstm) {
        return Err(NoCost::NoRule);
    }
    let Some(mask) = x.mask::<4>(21) else {
        return Err(shapes_err(
            "which gradients it computes (output_mask) is not recorded",
        ));
    };
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
    let flops: f64 = r.layers().map(|l| l.backward_flops(gemm_passes)).sum();
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
        complexity: Complexity::new(flops, read + written),
        datapath: r.dt.matmul(),
        family: Family::Rnn,
        assumed: r.assumed,
    })
}

/// One layer and direction of an LSTM as the CPU's MKL-DNN path runs it (PyTorch 2.0 and
/// later): `mkldnn_rnn_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse,
/// batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional, batch_first, train)`.
/// The input is time-major whatever `batch_first` says (`aten::lstm` transposes it first), so
/// the batch comes from `hx_` `[B, H]` and the steps from the input's size. F and B of one
/// [`roofline_model::analysis::dl::Lstm`] layer.
pub(super) fn mkldnn_layer(x: &OpInputs) -> Result<OpCost, NoCost> {
    let l = mkldnn_shape(x)?;
    Ok(OpCost {
        complexity: Complexity::new(l.1.flops(), l.1.bytes(l.0.bytes())),
        datapath: l.0.matmul(),
        family: Family::Rnn,
        assumed: Vec::new(),
    })
}

/// `mkldnn_rnn_layer_backward(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, output,
/// hy_, cy_, grad_output, grad_hy, grad_cy, reverse, mode, hidden_size, num_layers, has_biases,
/// train, bidirectional, batch_sizes, batch_first, workspace)`: every gradient (the op has no
/// mask), counted as [`rnn_backward`] counts a cuDNN layer: per step the data and weight GEMMs and
/// [`LSTM_CELL_BACKWARD_FLOPS`]; B the tensors read (input, weights, states, output and its
/// gradients, the workspace) and the gradients written (input, weights, initial states).
pub(super) fn mkldnn_layer_backward(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (dt, l) = mkldnn_shape(x)?;
    let cell = LSTM_CELL_BACKWARD_FLOPS * (l.batch * l.hidden) as f64;
    let flops = l.seq as f64 * (2.0 * l.step_gemm().flops() + cell);
    let read: f64 = (0..13).chain([22]).map(|a| x.arg(a).bytes()).sum();
    let written: f64 = (0..7).map(|a| x.arg(a).bytes()).sum();
    Ok(OpCost {
        complexity: Complexity::new(flops, read + written),
        datapath: dt.matmul(),
        family: Family::Rnn,
        assumed: Vec::new(),
    })
}

/// One MKL-DNN LSTM layer's dimensions: batch from `hx` `[B, H]`, input and hidden sizes from
/// the weights `[4H, I]` and `[4H, H]`, steps from the input's elements.
fn mkldnn_shape(x: &OpInputs) -> Result<(Dtype, Lstm), NoCost> {
    let (Some((dt, input)), Some((_, w_ih)), Some((_, w_hh)), Some((_, hx))) =
        (x.tensor(0), x.tensor(1), x.tensor(2), x.tensor(5))
    else {
        return Err(shapes_err("expected input, weights and hx tensors"));
    };
    let (&[g, i], &[g2, h], &[b, h2]) = (w_ih, w_hh, hx) else {
        return Err(shapes_err(
            "expected weights [4H, I], [4H, H] and hx [B, H]",
        ));
    };
    let elements = numel(input);
    if g != 4 * h || g2 != g || h2 != h || b == 0 || i == 0 || elements % (b * i) as f64 != 0.0 {
        return Err(shapes_err(format!(
            "an LSTM layer's shapes do not fit: input {input:?}, weights [{g}, {i}] and [{g2}, {h}], hx [{b}, {h2}]"
        )));
    }
    let seq = (elements / (b * i) as f64) as u64;
    Ok((
        dt,
        Lstm {
            batch: b,
            seq,
            input: i,
            hidden: h,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{F, inputs, t};
    use crate::operators::{Arg, Dtype, op_cost};
    use roofline_model::bundle::Datapath;

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

    /// Issue 42: an LSTM with projections (`proj_size` P > 0) was counted with the hidden size
    /// taken from h0, which has P elements, and without the projection's GEMM. One layer, T = 5,
    /// B = 3, I = 7, H = 11, P = 4, by hand: per step the gates 2·3·44·(7 + 4) = 2,904, the cell
    /// 8·3·11 = 264, the projection 2·3·11·4 = 264; five steps 17,160. PyTorch's own counter
    /// gives the same model's matrix products 15,840 (`self_test` in the oracle's
    /// `oracle.json`), which is this less the cell's 5·264.
    #[test]
    fn lstm_with_projections_by_hand() {
        let params = |layers: usize, dirs: usize| {
            let mut w = Vec::new();
            for l in 0..layers {
                for _ in 0..dirs {
                    let i = if l == 0 { 7 } else { 4 * dirs as u64 };
                    w.extend([vec![44, i], vec![44, 4], vec![44], vec![44], vec![4, 11]]);
                }
            }
            Arg::Tensors(w)
        };
        let x = inputs(
            vec![
                t(F, &[3, 5, 7]),
                Arg::Tensors(vec![vec![1, 3, 4], vec![1, 3, 11]]),
                params(1, 1),
            ],
            Some(&["", "", "", "True", "1", "0.", "False", "False", "True"]),
        );
        let c = op_cost("aten::lstm", &x).unwrap();
        assert_eq!(c.complexity.flops, 17_160.0);
        assert!(c.assumed.is_empty(), "{:?}", c.assumed);
        // B: x 105, w_ih 308 + w_hh 176 + w_hr 44, one bias 44, h0 12 and c0 33 read; h 60 and
        // the final c 33 written.
        let elements = 105.0 + 308.0 + 176.0 + 44.0 + 44.0 + 12.0 + 33.0 + 60.0 + 33.0;
        assert_eq!(c.complexity.bytes, 4.0 * elements);
        // The count before: H = 4 from h0, no projection: 5·(2·3·16·11 + 8·3·4) = 5,760, a third.
        assert!(5_760.0 / c.complexity.flops < 0.34);
        // Two layers, bidirectional: the second layer reads 2·P = 8 features.
        let x = inputs(
            vec![
                t(F, &[3, 5, 7]),
                Arg::Tensors(vec![vec![4, 3, 4], vec![4, 3, 11]]),
                params(2, 2),
            ],
            Some(&["", "", "", "True", "2", "0.", "False", "True", "True"]),
        );
        let second = 5.0 * (2.0 * 3.0 * 44.0 * 12.0 + 264.0 + 264.0);
        assert_eq!(
            op_cost("aten::lstm", &x).unwrap().complexity.flops,
            2.0 * (17_160.0 + second)
        );
        // cuDNN's `_cudnn_rnn`: hidden_size and proj_size recorded; without them and without cx
        // the weights give H (w_ih [4H, I]).
        let cudnn = |hidden: &str, proj: &str, cx: Arg| {
            let mut c = vec![String::new(); 16];
            for (i, v) in [(6, "2"), (7, hidden), (8, proj), (9, "1"), (10, "True")] {
                c[i] = v.into();
            }
            c[12] = "False".into();
            c[13] = "False".into();
            OpInputs {
                concrete: Some(c),
                ..inputs(
                    vec![
                        t(F, &[3, 5, 7]),
                        params(1, 1),
                        Arg::Other,
                        t(F, &[580]),
                        t(F, &[1, 3, 4]),
                        cx,
                    ],
                    None,
                )
            }
        };
        let c = op_cost("aten::_cudnn_rnn", &cudnn("11", "4", t(F, &[1, 3, 11]))).unwrap();
        assert_eq!(c.complexity.flops, 17_160.0);
        let c = op_cost("aten::_cudnn_rnn", &cudnn("", "", Arg::Other)).unwrap();
        assert_eq!(c.complexity.flops, 17_160.0);
        // A recorded proj_size that the hidden state contradicts is refused.
        assert!(matches!(
            op_cost("aten::_cudnn_rnn", &cudnn("11", "5", t(F, &[1, 3, 11]))),
            Err(NoCost::Shapes(_))
        ));
        // Without the cell state, hidden_size or weights, H is taken from h0 and said so.
        let x = inputs(
            vec![t(F, &[3, 5, 7]), Arg::Tensors(vec![vec![1, 3, 4]])],
            Some(&["", "", "", "True", "1", "0.", "False", "False", "True"]),
        );
        let c = op_cost("aten::lstm", &x).unwrap();
        assert!(c.assumed[0].contains("proj_size"), "{:?}", c.assumed);
    }

    /// The backward of the LSTM with projections above, every gradient: per step the data and
    /// weight passes of the gates' and the projection's GEMMs, 2·(2,904 + 264), and the cell's
    /// 27·3·11 = 891; five steps 36,135. The counter's backward of the same model (its input and
    /// initial states requiring their gradients) is 31,680, this less the cell's 5·891.
    #[test]
    fn cudnn_lstm_with_projections_backward_by_hand() {
        let weights = Arg::Tensors(vec![
            vec![44, 7],
            vec![44, 4],
            vec![44],
            vec![44],
            vec![4, 11],
        ]);
        let mut args = vec![
            t(F, &[3, 5, 7]),
            weights,
            Arg::Other,
            t(F, &[580]),
            t(F, &[1, 3, 4]),
            t(F, &[1, 3, 11]),
            t(F, &[3, 5, 4]),
            t(F, &[3, 5, 4]),
            t(F, &[1, 3, 4]),
            t(F, &[1, 3, 11]),
        ];
        args.extend(std::iter::repeat_n(Arg::Other, 10));
        args.extend([t(Dtype::U8, &[100]), Arg::Other]);
        let mut c = vec![String::new(); 22];
        for (i, v) in [
            (10, "2"),
            (11, "11"),
            (12, "4"),
            (13, "1"),
            (14, "True"),
            (16, "True"),
            (17, "False"),
            (21, "[True, True, True, True]"),
        ] {
            c[i] = v.into();
        }
        let x = OpInputs {
            concrete: Some(c),
            ..inputs(args, None)
        };
        let cost = op_cost("aten::_cudnn_rnn_backward", &x).unwrap();
        assert_eq!(cost.complexity.flops, 36_135.0);
        assert_eq!(cost.complexity.flops - 5.0 * 891.0, 31_680.0);
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
}
