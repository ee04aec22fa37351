//! Recurrent layers: `lstm`, `gru` and cuDNN's `_cudnn_rnn` with its backward, every layer and
//! direction as an LSTM layer of [`roofline_model::analysis::dl::Lstm`].

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
    hx: usize,
    mode: Option<usize>,
    layers: usize,
    bidirectional: usize,
    batch_first: usize,
}

impl RnnArgs {
    /// `lstm|gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    /// batch_first)`.
    pub(super) const ATEN: RnnArgs = RnnArgs {
        hx: 1,
        mode: None,
        layers: 4,
        bidirectional: 7,
        batch_first: 8,
    };
    /// `_cudnn_rnn(input, weight, weight_stride0, weight_buf, hx, cx, mode, hidden_size,
    /// proj_size, num_layers, batch_first, dropout, train, bidirectional, …)`.
    pub(super) const CUDNN: RnnArgs = RnnArgs {
        hx: 4,
        mode: Some(6),
        layers: 9,
        bidirectional: 13,
        batch_first: 10,
    };
    /// `_cudnn_rnn_backward(input, weight, weight_stride0, weight_buf, hx, cx, output,
    /// grad_output, grad_hy, grad_cy, mode, hidden_size, proj_size, num_layers, batch_first,
    /// dropout, train, bidirectional, …)`.
    pub(super) const CUDNN_BACKWARD: RnnArgs = RnnArgs {
        hx: 4,
        mode: Some(10),
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
        let Some(&[ld, hb, h]) = hx else {
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
        let assumed = Vec::new();
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
            layers,
            dirs,
            assumed,
        })
    }

    /// Every layer and direction as an LSTM layer of [`roofline_model::analysis::dl::Lstm`] (a layer above the
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

/// LSTM and GRU, every layer and direction: an LSTM layer is [`roofline_model::analysis::dl::Lstm`]; a GRU layer
/// has 3 gates (`2·B·(I+H)·3H` per step plus [`GRU_CELL_FLOPS`]).
pub(super) fn rnn(x: &OpInputs, kind: RnnKind, p: RnnArgs) -> Result<OpCost, NoCost> {
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
/// [`roofline_model::analysis::dl::Lstm::step_gemm`]), the weights' gradient (another, when `output_mask` asks for
/// it) and [`LSTM_CELL_BACKWARD_FLOPS`]. B: the input, weights, initial states, output, the
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
