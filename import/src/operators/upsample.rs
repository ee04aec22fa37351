//! Upsampling (`upsample_nearest{1,2,3}d`, `_upsample_nearest_exact{1,2,3}d`,
//! `upsample_linear1d`, `upsample_bilinear2d`, `upsample_trilinear3d`, `upsample_bicubic2d`, the
//! `_aa` antialiased ones excepted) and their backward operators.
//!
//! B: the input read once and the output written once (a backward: the output's gradient read,
//! the input's gradient written). F per output element, as PyTorch's CUDA kernels compute it
//! (`aten/src/ATen/native/cuda/UpSample*.cu`; the source indices and interpolation weights are
//! computed once per output position and shared by every batch and channel, so not counted):
//! - nearest: a copy, 0;
//! - linear (1-d): `w0·x0 + w1·x1`, 3; bilinear: two of those and one more across rows
//!   (`h0·(w0·a + w1·b) + h1·(w0·c + w1·d)`), 9; trilinear: 21 (the same across depths);
//!   bicubic: four cubic interpolations across columns and one across rows, 4 multiplications
//!   and 3 additions each, 35 (the cubic coefficients not counted).
//!
//! A backward scatters each element of the output's gradient to the input positions it was
//! interpolated from, `weights·grad` added to each: nearest 1 addition per element of the
//! gradient; linear 2 taps × (1 multiplication + 1 addition), 4; bilinear 4 taps × (2 + 1), 12;
//! trilinear 8 × (3 + 1), 32; bicubic 16 × (2 + 1), 48.
//!
//! The output's size is `output_size` when recorded, else the input's times `scale_factors`
//! (floored), both from `Concrete Inputs`; without them the call has no cost. A backward needs
//! the input's size (`input_size`), likewise.

use super::{Complexity, Family, NoCost, OpCost, OpInputs, numel, shapes_err};

/// The interpolation of an upsampling operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Nearest,
    Linear,
    Bilinear,
    Trilinear,
    Bicubic,
}

impl Mode {
    /// FLOPs per output element, forward.
    fn forward(self) -> f64 {
        match self {
            Mode::Nearest => 0.0,
            Mode::Linear => 3.0,
            Mode::Bilinear => 9.0,
            Mode::Trilinear => 21.0,
            Mode::Bicubic => 35.0,
        }
    }

    /// FLOPs per element of the output's gradient, backward.
    fn backward(self) -> f64 {
        match self {
            Mode::Nearest => 1.0,
            Mode::Linear => 4.0,
            Mode::Bilinear => 12.0,
            Mode::Trilinear => 32.0,
            Mode::Bicubic => 48.0,
        }
    }
}

/// An upsampling operator by name (without `aten::`): its mode, spatial dimensions and whether
/// it is the backward.
pub(super) fn parse(name: &str) -> Option<(Mode, usize, bool)> {
    let rest = name
        .strip_prefix("_upsample_nearest_exact")
        .map(|r| ("nearest", r))
        .or_else(|| {
            let r = name.strip_prefix("upsample_")?;
            ["nearest", "linear", "bilinear", "trilinear", "bicubic"]
                .into_iter()
                .find_map(|m| Some((m, r.strip_prefix(m)?)))
        });
    let (mode, rest) = rest?;
    let (dims, backward) = match rest.strip_suffix("_backward") {
        Some(d) => (d, true),
        None => (rest, false),
    };
    let nd = match dims {
        "1d" => 1,
        "2d" => 2,
        "3d" => 3,
        _ => return None,
    };
    let mode = match (mode, nd) {
        ("nearest", _) => Mode::Nearest,
        ("linear", 1) => Mode::Linear,
        ("bilinear", 2) => Mode::Bilinear,
        ("trilinear", 3) => Mode::Trilinear,
        ("bicubic", 2) => Mode::Bicubic,
        _ => return None,
    };
    Some((mode, nd, backward))
}

/// `upsample_*(input, output_size, …, scales…)` and their `.vec(input, output_size?, …,
/// scale_factors?)` overloads (the module's formulas).
pub(super) fn upsample(x: &OpInputs, mode: Mode, nd: usize) -> Result<OpCost, NoCost> {
    let Some((dt, input)) = x.tensor(0) else {
        return Err(shapes_err("expected an input tensor"));
    };
    if input.len() != nd + 2 {
        return Err(shapes_err(format!(
            "expected an input of {} dimensions",
            nd + 2
        )));
    }
    let spatial = match x.int_list_arg(1, nd, "output_size")? {
        Some(s) => s,
        None => {
            // `.vec`: the scale factors are the last argument.
            let last = x.args.len().saturating_sub(1);
            let factors: Option<Vec<f64>> = x.items(last).and_then(|items| {
                items
                    .iter()
                    .map(|f| f.parse::<f64>().ok().filter(|f| *f > 0.0))
                    .collect()
            });
            match factors {
                Some(f) if f.len() == nd => input[2..]
                    .iter()
                    .zip(&f)
                    .map(|(&i, &s)| (i as f64 * s).floor() as u64)
                    .collect(),
                _ => {
                    return Err(shapes_err(
                        "output_size and scale_factors not recorded (Concrete Inputs, PyTorch 2.1 and later)",
                    ));
                }
            }
        }
    };
    let out = numel(&input[..2]) * numel(&spatial);
    Ok(OpCost {
        complexity: Complexity::new(mode.forward() * out, dt.bytes() * (numel(input) + out)),
        datapath: super::elementwise::opmath(dt),
        family: Family::Movement,
        assumed: Vec::new(),
    })
}

/// `upsample_*_backward(grad_output, output_size, input_size, …)` (the module's formulas).
pub(super) fn backward(x: &OpInputs, mode: Mode, nd: usize) -> Result<OpCost, NoCost> {
    let Some((dt, grad)) = x.tensor(0) else {
        return Err(shapes_err("expected the output's gradient"));
    };
    let Some(input) = x.int_list_arg(2, nd + 2, "input_size")? else {
        return Err(shapes_err(
            "input_size not recorded (Concrete Inputs, PyTorch 2.1 and later)",
        ));
    };
    let g = numel(grad);
    Ok(OpCost {
        complexity: Complexity::new(mode.backward() * g, dt.bytes() * (g + numel(&input))),
        datapath: super::elementwise::opmath(dt),
        family: Family::Movement,
        assumed: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{F, H, V, count, inputs, t};
    use crate::operators::{Arg, op_cost};

    #[test]
    fn names() {
        assert_eq!(parse("upsample_nearest2d"), Some((Mode::Nearest, 2, false)));
        assert_eq!(
            parse("_upsample_nearest_exact3d_backward"),
            Some((Mode::Nearest, 3, true))
        );
        assert_eq!(
            parse("upsample_bilinear2d"),
            Some((Mode::Bilinear, 2, false))
        );
        assert_eq!(
            parse("upsample_bicubic2d_backward"),
            Some((Mode::Bicubic, 2, true))
        );
        assert_eq!(parse("upsample_bilinear3d"), None);
        assert_eq!(parse("_upsample_bilinear2d_aa"), None);
    }

    /// The per-element counts against the formulas of PyTorch's CUDA kernels
    /// (`UpSampleLinear1d.cu`, `UpSampleBilinear2d.cu`, `UpSampleTrilinear3d.cu`,
    /// `UpSampleBicubic2d.cu`), counted by evaluating them.
    #[test]
    fn the_counts_are_the_kernels_formulas() {
        let lerp = |a: V, b: V| V * a + V * b;
        assert_eq!(count(|a| lerp(a, V)), Mode::Linear.forward());
        assert_eq!(
            count(|a| V * lerp(a, V) + V * lerp(V, V)),
            Mode::Bilinear.forward()
        );
        assert_eq!(
            count(|a| V * (V * lerp(a, V) + V * lerp(V, V)) + V * (V * lerp(V, V) + V * lerp(V, V))),
            Mode::Trilinear.forward()
        );
        let cubic = |x0: V, x1: V, x2: V, x3: V| x0 * V + x1 * V + x2 * V + x3 * V;
        assert_eq!(
            count(|a| {
                let rows = [
                    cubic(a, V, V, V),
                    cubic(V, V, V, V),
                    cubic(V, V, V, V),
                    cubic(V, V, V, V),
                ];
                cubic(rows[0], rows[1], rows[2], rows[3])
            }),
            Mode::Bicubic.forward()
        );
        // Backward: per tap the weights times the gradient, added to the input's gradient (an
        // atomic addition): 2, 4, 8 and 16 taps of 1, 2, 3 and 2 weights.
        let tap = |weights: usize| count(|g| (0..weights).fold(g, |acc, _| V * acc) + V);
        assert_eq!(tap(0), Mode::Nearest.backward());
        assert_eq!(2.0 * tap(1), Mode::Linear.backward());
        assert_eq!(4.0 * tap(2), Mode::Bilinear.backward());
        assert_eq!(8.0 * tap(3), Mode::Trilinear.backward());
        assert_eq!(16.0 * tap(2), Mode::Bicubic.backward());
    }

    #[test]
    fn upsampling_by_hand() {
        // Nearest, [1, 3, 4, 4] to [8, 8]: 48 elements read, 192 written, no arithmetic.
        let x = inputs(
            vec![t(F, &[1, 3, 4, 4]), Arg::Other, Arg::Other, Arg::Other],
            Some(&["", "[8, 8]", "", ""]),
        );
        let c = op_cost("aten::upsample_nearest2d", &x).unwrap();
        assert_eq!(c.complexity.flops, 0.0);
        assert_eq!(c.complexity.bytes, 4.0 * (48.0 + 192.0));
        // Bilinear by scale factors (the .vec overload), BF16: 9 per output element.
        let x = inputs(
            vec![t(H, &[2, 3, 5, 5]), Arg::Other, Arg::Other, Arg::Other],
            Some(&["", "", "False", "[2.0, 2.0]"]),
        );
        let c = op_cost("aten::upsample_bilinear2d", &x).unwrap();
        assert_eq!(c.complexity.flops, 9.0 * 600.0);
        assert_eq!(c.complexity.bytes, 2.0 * (150.0 + 600.0));
        // Without Concrete Inputs the output's size is unknown.
        let x = inputs(vec![t(F, &[1, 3, 4, 4]), Arg::Other], None);
        assert!(matches!(
            op_cost("aten::upsample_nearest2d", &x),
            Err(NoCost::Shapes(_))
        ));
        // Backward: the [1, 3, 8, 8] gradient read, [1, 3, 4, 4] written; bilinear 12 FLOPs per
        // element of the gradient.
        let x = inputs(
            vec![t(F, &[1, 3, 8, 8]), Arg::Other, Arg::Other, Arg::Other],
            Some(&["", "[8, 8]", "[1, 3, 4, 4]", "False"]),
        );
        let c = op_cost("aten::upsample_bilinear2d_backward", &x).unwrap();
        assert_eq!(c.complexity.flops, 12.0 * 192.0);
        assert_eq!(c.complexity.bytes, 4.0 * (192.0 + 48.0));
        let c = op_cost("aten::upsample_nearest2d_backward", &x).unwrap();
        assert_eq!(c.complexity.flops, 192.0);
    }
}
