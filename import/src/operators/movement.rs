//! Operators that move or select data rather than compute on it: `cat`, `index_select`,
//! `gather`, the `scatter` family, `index_add`, the scans `cumsum` and `cumprod`, and the
//! negative log-likelihood loss (a gather of one log-probability per sample).
//!
//! All are bytes only (F = 0), with the convention of [`super`]: every element the operator
//! must touch is read once and every element it writes is written once, index tensors in their
//! own type. The indices' values are not recorded, so the elements an index selects are counted
//! as distinct: one per index, and at most every element of the tensor indexed (a gather of
//! millions of indices from a 50-element table reads the table once). The additions of `scatter_add`, `index_add` and the scans are not counted, as for
//! the reductions. An out-of-place `scatter` or `index_add` first copies `self` into its output;
//! PyTorch records that copy as its own `copy_` call, whose kernel is counted there.

use super::optimizer::{list_bytes, list_cost, tensor_lists};
use super::{
    Complexity, Dtype, Family, NoCost, OpCost, OpInputs, bytes_in, numel, shapes_err, wrap_dim,
};

/// The family of every rule here.
const FAMILY: Family = Family::Movement;

/// `cat(tensors, dim)`: every input read once and the output, of as many elements, written
/// once. `stack` reaches its kernels through a `cat` call of its own. The inputs' element type
/// comes from the kernel's name ([`super::kernel_elem`]).
pub(super) fn cat(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (lists, elem) = tensor_lists(x, Some(&[0]))?;
    Ok(list_cost(2.0 * list_bytes(lists[0], elem), elem, FAMILY))
}

/// `index_select(self, dim, index)`: the index read, the selected slices of `self` (of
/// `self.numel() / self.size(dim)` elements) read, one per index and at most `self.size(dim)`,
/// and one slice per index written to the output. The dimension comes from `Concrete Inputs`; a
/// 1-d `self` needs none.
pub(super) fn index_select(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some((dt, shape)), Some((it, index))) = (x.tensor(0), x.tensor(2)) else {
        return Err(shapes_err("expected self and index tensors"));
    };
    let d = match shape.len() {
        0 | 1 => 0,
        rank => x
            .concrete(1)
            .and_then(|d| wrap_dim(d, rank))
            .ok_or_else(|| shapes_err("the selected dimension was not recorded"))?,
    };
    let size = shape.get(d).map_or(1.0, |&n| n as f64);
    let slice: f64 = shape
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != d)
        .map(|(_, &n)| n as f64)
        .product();
    let n = numel(index);
    let moved = (n.min(size) + n) * slice * dt.bytes();
    Ok(bytes_in(FAMILY, n * it.bytes() + moved, dt))
}

/// `gather(self, dim, index, sparse_grad)`: the index read, the elements of `self` it selects
/// read (one per index, at most all of `self`), and one element per index written to the output
/// (of the index's shape).
pub(super) fn gather(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some((dt, shape)), Some((it, index))) = (x.tensor(0), x.tensor(2)) else {
        return Err(shapes_err("expected self and index tensors"));
    };
    let n = numel(index);
    Ok(bytes_in(
        FAMILY,
        n * it.bytes() + (n.min(numel(shape)) + n) * dt.bytes(),
        dt,
    ))
}

/// How a scatter writes `self`'s indexed elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scatter {
    /// `scatter(self, dim, index, src|value)`: overwritten; with a `reduce` argument (the
    /// `.reduce` overloads, a fifth argument) combined, as below.
    Assign,
    /// `scatter_add`, `scatter_reduce`: read, combined and written back.
    Accumulate,
}

/// The `scatter` family `(self, dim, index, src, …)`: the index read, one element of `src` read
/// per index (none when `src` is a scalar), and the elements of `self` the indices select
/// written (one per index, at most all of `self`), read too when the scatter accumulates.
pub(super) fn scatter(x: &OpInputs, kind: Scatter) -> Result<OpCost, NoCost> {
    let (Some((dt, shape)), Some((it, index))) = (x.tensor(0), x.tensor(2)) else {
        return Err(shapes_err("expected self and index tensors"));
    };
    let n = numel(index);
    let src = x.tensor(3).map_or(0.0, |(st, _)| n * st.bytes());
    let accumulate = kind == Scatter::Accumulate || x.args.len() > 4;
    let touched = n.min(numel(shape)) * dt.bytes();
    let self_bytes = if accumulate { 2.0 } else { 1.0 } * touched;
    Ok(bytes_in(FAMILY, n * it.bytes() + src + self_bytes, dt))
}

/// `index_add(self, dim, index, source, alpha)`: the index and `source` read, and the elements
/// of `self` that `source` adds to (one per element of `source`, at most all of `self`) read and
/// written.
pub(super) fn index_add(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some((dt, shape)), Some((it, index)), Some((st, source))) =
        (x.tensor(0), x.tensor(2), x.tensor(3))
    else {
        return Err(shapes_err("expected self, index and source tensors"));
    };
    let n = numel(source);
    let touched = n.min(numel(shape)) * dt.bytes();
    Ok(bytes_in(
        FAMILY,
        numel(index) * it.bytes() + n * st.bytes() + 2.0 * touched,
        dt,
    ))
}

/// `cumsum(self, dim, dtype)`, `cumprod`: the input read and the output, of its shape, written,
/// in `dtype` when `Concrete Inputs` records one (a `ScalarType` code), else in the input's type,
/// or in int64 for an integer or boolean input (PyTorch promotes them, as `sum` does).
pub(super) fn scan(x: &OpInputs) -> Result<OpCost, NoCost> {
    let Some((dt, shape)) = x.tensor(0) else {
        return Err(shapes_err("expected an input tensor"));
    };
    let out = match x.concrete(2) {
        Some(code) => Dtype::from_scalar_type(code)
            .ok_or_else(|| shapes_err(format!("unknown dtype code {code}")))?,
        None if dt.is_integral() => Dtype::I64,
        None => dt,
    };
    Ok(bytes_in(
        FAMILY,
        numel(shape) * (dt.bytes() + out.bytes()),
        dt,
    ))
}

/// `nll_loss_forward(self, target, weight, reduction, ignore_index)` and `nll_loss2d_forward`:
/// the targets read, one log-probability read per target (and its class weight, when a weight
/// tensor is given), and the loss written: one value per target with no reduction
/// (`reduction = 0`), else one value and the total weight. The reduction comes from `Concrete
/// Inputs`; without it PyTorch's default, the mean, is assumed and said.
pub(super) fn nll_loss(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some((dt, _)), Some((tt, target))) = (x.tensor(0), x.tensor(1)) else {
        return Err(shapes_err("expected input and target tensors"));
    };
    let n = numel(target);
    let weight = x.tensor(2).map_or(0.0, |(wt, _)| n * wt.bytes());
    let (reduced, assumed) = match x.concrete(3) {
        Some("0") => (false, None),
        Some("1" | "2") => (true, None),
        Some(other) => return Err(shapes_err(format!("unknown reduction {other}"))),
        None => (true, Some("the reduction is the mean (not recorded)")),
    };
    let written = if reduced { 2.0 } else { n } * dt.bytes();
    let mut cost = bytes_in(
        Family::Loss,
        n * tt.bytes() + n * dt.bytes() + weight + written,
        dt,
    );
    cost.assumed.extend(assumed.map(String::from));
    Ok(cost)
}

/// `nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight)`
/// and `nll_loss2d_backward`: the gradient, targets, class weights (one per target, when given)
/// and total weight read, and one element of the input's gradient written per target. The
/// gradient's other elements are zeroed first by a `zero_` call of its own (PyTorch's
/// `nll_loss_backward_out_cuda`).
pub(super) fn nll_loss_backward(x: &OpInputs) -> Result<OpCost, NoCost> {
    let (Some(_), Some((dt, _)), Some((tt, target))) = (x.tensor(0), x.tensor(1), x.tensor(2))
    else {
        return Err(shapes_err("expected gradient, input and target tensors"));
    };
    let n = numel(target);
    let weight = x.tensor(3).map_or(0.0, |(wt, _)| n * wt.bytes());
    let read = x.arg(0).bytes() + n * tt.bytes() + weight + x.arg(6).bytes();
    Ok(bytes_in(Family::Loss, read + n * dt.bytes(), dt))
}

/// `index(self, indices)`, `index_put_` and `_index_put_impl_`: torch.profiler records their
/// list of optional index tensors without shapes (`[]`, type empty), so the number of elements
/// selected, and the bytes, are unknown.
pub(super) fn advanced_indexing(_: &OpInputs) -> Result<OpCost, NoCost> {
    Err(shapes_err(
        "the index tensors are not recorded: a list of optional tensors",
    ))
}

/// `embedding(weight[V,D], indices)`: no FLOPs; the indices read, the rows they select read
/// once each (one per index, and at most the V rows of the table: the indices' values are not
/// recorded), and one output row of D written per index.
pub(super) fn embedding(x: &OpInputs) -> Result<OpCost, NoCost> {
    match (x.tensor(0), x.tensor(1)) {
        (Some((dt, &[v, d])), Some((it, idx))) => {
            let n = numel(idx);
            let rows = n.min(v as f64);
            Ok(OpCost {
                complexity: Complexity::new(
                    0.0,
                    n * it.bytes() + (rows + n) * d as f64 * dt.bytes(),
                ),
                datapath: dt.cuda_core(),
                family: Family::Embedding,
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
pub(super) fn embedding_backward(x: &OpInputs) -> Result<OpCost, NoCost> {
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
        complexity: Complexity::new(0.0, bytes),
        datapath: dt.cuda_core(),
        family: Family::Embedding,
        assumed: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Arg, ListElem, op_cost};
    use super::*;
    use crate::operators::Derived;

    pub(super) const F: Dtype = Dtype::F32;
    pub(super) const L: Dtype = Dtype::I64;

    fn t(dt: Dtype, s: &[u64]) -> Arg {
        Arg::Tensor(dt, s.to_vec())
    }

    /// A call as PyTorch 2.11 records it: `Input Dims` and `Input type` as `args`, `Concrete
    /// Inputs` as `concrete`.
    fn call(name: &str, args: Vec<Arg>, concrete: Option<&[&str]>) -> Result<OpCost, NoCost> {
        let x = OpInputs {
            args,
            concrete: concrete.map(|c| c.iter().map(|s| (*s).to_string()).collect()),
            list_elem: None,
            derived: Derived::default(),
            untyped: Vec::new(),
            no_types: false,
        };
        op_cost(name, &x)
    }

    fn bytes(c: Result<OpCost, NoCost>) -> f64 {
        let c = c.unwrap();
        assert_eq!(c.complexity.flops, 0.0);
        c.complexity.bytes
    }

    /// `torch.cat([x, y], 0)` with x 4×6 and y 2×6 float, recorded as `[[[4, 6], [2, 6]], []]`,
    /// `['TensorList', 'Scalar']`: 36 elements read and written, 4 bytes each by the kernel's
    /// `OpaqueType<4u>`.
    #[test]
    fn cat_takes_its_element_size_from_the_kernel() {
        let list = Arg::Tensors(vec![vec![4, 6], vec![2, 6]]);
        let mut x = OpInputs {
            args: vec![list, Arg::Other],
            concrete: None,
            list_elem: Some(ListElem::Opaque(4)),
            derived: Derived::default(),
            untyped: Vec::new(),
            no_types: false,
        };
        let c = op_cost("aten::cat", &x).unwrap();
        assert_eq!(c.complexity.bytes, 2.0 * 36.0 * 4.0);
        assert_eq!(c.family, Family::Movement);
        assert_eq!(
            c.assumed,
            [
                "the tensor lists' element type, not recorded, is a 4-byte type (from the kernel's name)"
            ]
        );
        x.list_elem = Some(ListElem::Type(Dtype::Bf16));
        assert_eq!(bytes(op_cost("aten::cat", &x)), 2.0 * 36.0 * 2.0);
        // No type from the kernel, or an old trace's `[]` for the list: no cost.
        x.list_elem = None;
        assert!(matches!(op_cost("aten::cat", &x), Err(NoCost::Shapes(_))));
        let old = call("aten::cat", vec![Arg::Other, Arg::Other], None);
        assert!(matches!(old, Err(NoCost::Shapes(_))), "{old:?}");
    }

    #[test]
    fn cat_kernel_names() {
        use super::super::kernel_elem;
        // PyTorch 1.x, as the HolisticTraceAnalysis training trace has them.
        let old = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)";
        assert_eq!(kernel_elem(old), Some(ListElem::Type(F)));
        let long = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<long, unsigned int, 1, 128, 1>(long*)";
        assert_eq!(kernel_elem(long), Some(ListElem::Type(L)));
        // PyTorch 2.x dispatches on the element's size.
        let new = "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*)";
        assert_eq!(kernel_elem(new), Some(ListElem::Opaque(2)));
        let signed = "void at::native::CatArrayBatchedCopy_contig<at::native::OpaqueType<8>, unsigned int, 1, 128, 1>()";
        assert_eq!(kernel_elem(signed), Some(ListElem::Opaque(8)));
        assert_eq!(
            kernel_elem("void at::native::CatArrayBatchedCopy<>()"),
            None
        );
    }

    /// The calls of `torch.index_select`, `torch.gather`, `scatter_add_` and `torch.index_add`
    /// on a 4×6 float tensor, with the inputs PyTorch 2.11 records for them, counted by hand.
    #[test]
    fn indexing_by_hand() {
        let x = || t(F, &[4, 6]);
        // index_select(x, 0, [3 indices]): 3 rows of 6 read and written, 3 int64 indices read.
        let args = || vec![x(), Arg::Other, t(L, &[3])];
        let c = call("aten::index_select", args(), Some(&["", "0", ""]));
        assert_eq!(bytes(c), 3.0 * 8.0 + 2.0 * 18.0 * 4.0);
        // Along dimension -1: 3 columns of 4.
        let c = call("aten::index_select", args(), Some(&["", "-1", ""]));
        assert_eq!(bytes(c), 3.0 * 8.0 + 2.0 * 12.0 * 4.0);
        // A 2-d input needs its dimension; a 1-d one does not (the HTA trace's call: 6825
        // indices into a 2048-long int64 tensor, read once).
        let c = call("aten::index_select", args(), None);
        assert!(matches!(c, Err(NoCost::Shapes(_))), "{c:?}");
        let c = call(
            "aten::index_select",
            vec![t(L, &[2048]), Arg::Other, t(L, &[6825])],
            None,
        );
        assert_eq!(bytes(c), 6825.0 * 8.0 + (2048.0 + 6825.0) * 8.0);
        // The HTA trace's gather: 8,856,548 indices into a 50-element float table read the
        // table once.
        let c = call(
            "aten::gather",
            vec![t(F, &[50]), Arg::Other, t(L, &[8856548]), Arg::Other],
            None,
        );
        assert_eq!(bytes(c), 8856548.0 * (8.0 + 4.0) + 50.0 * 4.0);
        // index_select(x, 0, 9 indices) reads at most x's 4 rows, and writes 9.
        let c = call(
            "aten::index_select",
            vec![x(), Arg::Other, t(L, &[9])],
            Some(&["", "0", ""]),
        );
        assert_eq!(bytes(c), 9.0 * 8.0 + (4.0 + 9.0) * 6.0 * 4.0);
        // gather(x, 1, index 4×2): 8 indices, 8 elements read and written.
        let c = call(
            "aten::gather",
            vec![x(), Arg::Other, t(L, &[4, 2]), Arg::Other],
            Some(&["", "1", "", "False"]),
        );
        assert_eq!(bytes(c), 8.0 * 8.0 + 2.0 * 8.0 * 4.0);
        // scatter_add_(x, 1, index 4×2, src 4×2): src read, x's 8 elements read and written.
        let scatter = |name, src: Arg| {
            call(
                name,
                vec![x(), Arg::Other, t(L, &[4, 2]), src],
                Some(&["", "1", "", ""]),
            )
        };
        let c = scatter("aten::scatter_add_", t(F, &[4, 2]));
        assert_eq!(bytes(c), 8.0 * 8.0 + 8.0 * 4.0 + 2.0 * 8.0 * 4.0);
        // The HTA trace's scatter_add_: 8,855,045 values added into 50 floats.
        let c = call(
            "aten::scatter_add_",
            vec![t(F, &[50]), Arg::Other, t(L, &[8855045]), t(F, &[8855045])],
            None,
        );
        assert_eq!(bytes(c), 8855045.0 * (8.0 + 4.0) + 2.0 * 50.0 * 4.0);
        // scatter_ overwrites; with a scalar value nothing else is read.
        let c = scatter("aten::scatter_", t(F, &[4, 2]));
        assert_eq!(bytes(c), 8.0 * 8.0 + 8.0 * 4.0 + 8.0 * 4.0);
        let c = scatter("aten::scatter", Arg::Other);
        assert_eq!(bytes(c), 8.0 * 8.0 + 8.0 * 4.0);
        // index_add(x, 0, 3 indices, source 3×6): source read, 18 elements of x read and written.
        let c = call(
            "aten::index_add",
            vec![x(), Arg::Other, t(L, &[3]), t(F, &[3, 6]), Arg::Other],
            Some(&["", "0", "", "", "1"]),
        );
        assert_eq!(bytes(c), 3.0 * 8.0 + 18.0 * 4.0 + 2.0 * 18.0 * 4.0);
        // Advanced indexing records no index shapes: no cost, and said so.
        let c = call("aten::index", vec![x(), Arg::Other], Some(&["", ""]));
        assert!(matches!(c, Err(NoCost::Shapes(_))), "{c:?}");
        let c = call(
            "aten::_index_put_impl_",
            vec![x(), Arg::Other, t(F, &[])],
            None,
        );
        assert!(matches!(c, Err(NoCost::Shapes(_))), "{c:?}");
    }

    #[test]
    fn scans_by_hand() {
        // cumsum(x 4×6 float, 1): 24 floats read and written.
        let c = call(
            "aten::cumsum",
            vec![t(F, &[4, 6]), Arg::Other, Arg::Other],
            Some(&["", "1", ""]),
        );
        assert_eq!(bytes(c), 24.0 * 8.0);
        // An int32 input is summed into int64.
        let c = call("aten::cumsum", vec![t(Dtype::I32, &[5]), Arg::Other], None);
        assert_eq!(bytes(c), 5.0 * (4.0 + 8.0));
        // A bfloat16 input with dtype=torch.float64 (ScalarType code 7).
        let c = call(
            "aten::cumprod",
            vec![t(Dtype::Bf16, &[10]), Arg::Other, Arg::Other],
            Some(&["", "0", "7"]),
        );
        assert_eq!(bytes(c), 10.0 * (2.0 + 8.0));
        // The HTA trace's call, whose first argument is not a tensor: no cost.
        let c = call(
            "aten::cumsum",
            vec![Arg::Other, t(L, &[300]), Arg::Other, Arg::Other],
            None,
        );
        assert!(matches!(c, Err(NoCost::Shapes(_))), "{c:?}");
    }

    /// `F.cross_entropy(w, target)` for w 4×6 float and 4 int64 targets, as PyTorch 2.11 records
    /// its `nll_loss_forward` and `nll_loss_backward` calls.
    #[test]
    fn nll_loss_by_hand() {
        let fwd = |concrete: Option<&[&str]>, weight: Arg| {
            call(
                "aten::nll_loss_forward",
                vec![t(F, &[4, 6]), t(L, &[4]), weight, Arg::Other, Arg::Other],
                concrete,
            )
        };
        // Mean: 4 targets and 4 log-probabilities read, the loss and total weight written.
        let mean = fwd(Some(&["", "", "", "1", "-100"]), Arg::Other).unwrap();
        assert_eq!(mean.family, Family::Loss);
        assert!(mean.assumed.is_empty());
        assert_eq!(mean.complexity.bytes, 4.0 * 8.0 + 4.0 * 4.0 + 2.0 * 4.0);
        // No reduction: one loss per target.
        let none = fwd(Some(&["", "", "", "0", "-100"]), Arg::Other);
        assert_eq!(bytes(none), 4.0 * 8.0 + 4.0 * 4.0 + 4.0 * 4.0);
        // Class weights: one read per target.
        let weighted = fwd(Some(&["", "", "", "2", "-100"]), t(F, &[6]));
        assert_eq!(bytes(weighted), 4.0 * 8.0 + 2.0 * 4.0 * 4.0 + 2.0 * 4.0);
        // Without Concrete Inputs the mean is assumed, and said.
        let assumed = fwd(None, Arg::Other).unwrap();
        assert_eq!(assumed.complexity.bytes, mean.complexity.bytes);
        assert_eq!(assumed.assumed.len(), 1);
        // Backward: the 0-d gradient, targets and total weight read, 4 elements written.
        let args = vec![
            t(F, &[]),
            t(F, &[4, 6]),
            t(L, &[4]),
            Arg::Other,
            Arg::Other,
            Arg::Other,
            t(F, &[]),
        ];
        let c = call(
            "aten::nll_loss_backward",
            args,
            Some(&["", "", "", "", "1", "-100", ""]),
        );
        assert_eq!(bytes(c), 4.0 + 4.0 * 8.0 + 4.0 + 4.0 * 4.0);
    }
}
