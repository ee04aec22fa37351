//! Reductions (`sum`, `mean`, `amax`, `norm`, `argmax`, `any`, …): the input read once, the
//! reduced output written once; the additions are not counted (bytes only).

use super::{Dtype, Family, NoCost, OpCost, OpInputs, bytes_in, numel, shapes_err, wrap_dim};

/// What a reduction writes per output element.
#[derive(Debug, Clone, Copy)]
pub(super) enum ReduceOut {
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
pub(super) fn reduction(x: &OpInputs, dim: usize, out: ReduceOut) -> Result<OpCost, NoCost> {
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
        Family::Reduction,
        numel(shape) * dt.bytes() + outputs * per_output,
        dt,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{F, inputs, t};

    use crate::operators::{Arg, Dtype, op_cost};

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
            assert_eq!((c.complexity.flops, c.family), (0.0, Family::Reduction));
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
}
