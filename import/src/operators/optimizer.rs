//! The optimizers' tensor-list operators (`_foreach_*`, fused Adam, AdamW and SGD), bytes only,
//! and the element type of a tensor list, which traces record untyped, read from the launched
//! kernel's name.

use super::elementwise::{ELEMENTWISE, UNARY};
use super::{Arg, Dtype, Family, ListElem, NoCost, OpCost, OpInputs, bytes_on, numel, shapes_err};

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
pub(super) type TensorLists<'a> = (Vec<&'a [Vec<u64>]>, ListElem);

/// The tensor lists of a `_foreach_*`, fused optimizer or `cat` call: their shapes, one list per
/// [`Arg::Tensors`] argument (positions `at`, or every such argument when `at` is `None`), and
/// the lists' element type.
pub(super) fn tensor_lists<'a>(
    x: &'a OpInputs,
    at: Option<&[usize]>,
) -> Result<TensorLists<'a>, NoCost> {
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

pub(super) fn list_bytes(list: &[Vec<u64>], dt: ListElem) -> f64 {
    list.iter().map(|s| numel(s)).sum::<f64>() * dt.bytes()
}

/// A tensor-list operator's cost (B only), saying where its lists' element type came from.
pub(super) fn list_cost(bytes: f64, dt: ListElem, family: Family) -> OpCost {
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
pub(super) fn foreach(x: &OpInputs, op: &str) -> Result<OpCost, NoCost> {
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
        return Ok(list_cost(bytes, dt, Family::Reduction));
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
    Ok(list_cost(bytes, dt, Family::Elementwise))
}

/// Which tensor lists a fused optimizer reads and writes (argument positions).
#[derive(Clone, Copy)]
pub(super) struct FusedOptimizer {
    read: &'static [usize],
    written: &'static [usize],
}

/// `_fused_adam_` / `_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
/// state_steps, …)`: parameters, gradients and both moments read, parameters and moments
/// written (PyTorch's `FusedAdamMathFunctor`); `max_exp_avg_sqs` too under AMSGrad, when the
/// list is not empty. The 0-d step counters are not counted.
pub(super) const FUSED_ADAM: FusedOptimizer = FusedOptimizer {
    read: &[0, 1, 2, 3, 4],
    written: &[0, 2, 3, 4],
};

/// `_fused_sgd_(params, grads, momentum_buffer_list, …)`: parameters, gradients and momentum
/// buffers (when not empty) read, parameters and buffers written.
pub(super) const FUSED_SGD: FusedOptimizer = FusedOptimizer {
    read: &[0, 1, 2],
    written: &[0, 2],
};

/// A fused optimizer step (B only, like the elementwise operators; see [`FUSED_ADAM`]).
pub(super) fn fused_optimizer(x: &OpInputs, p: FusedOptimizer) -> Result<OpCost, NoCost> {
    let (read, dt) = tensor_lists(x, Some(p.read))?;
    let (written, _) = tensor_lists(x, Some(p.written))?;
    let bytes: f64 = read.iter().chain(&written).map(|l| list_bytes(l, dt)).sum();
    Ok(list_cost(bytes, dt, Family::Optimizer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{F, H, inputs};
    use crate::operators::{Arg, Dtype, op_cost};
    use roofline_model::bundle::Datapath;

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
        assert_eq!(c.family, Family::Reduction);
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
        assert_eq!(c.family, Family::Optimizer);
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
