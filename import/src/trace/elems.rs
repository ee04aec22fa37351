//! The element types of calls recorded with shapes but no types (PyTorch 1.8's empty
//! `Input type`), found where the trace names them: the kernels a call launched, or another
//! call of the same operator on the same shapes ([`Elems`]).

use rustc_hash::FxHashMap;

use crate::operators::Dtype;
use crate::trace::model::Trace;
use crate::trace::stats::Stats;

/// The element types of the calls whose tensors were recorded without one (PyTorch 1.8's empty
/// `Input type`), as the trace names them elsewhere: the names of the kernels the call launched
/// ([`Dtype::from_kernel_name`]: `…AddFunctor<float>…`, `implicit_convolve_sgemm<float, …>`,
/// `volta_sgemm_…`), when they name one type; else another call of the same operator on the same
/// shapes whose kernels do (the same layer in another step, a nested duplicate). Counted in
/// [`Stats::typed_from`].
pub(crate) struct Elems {
    /// The element type found, per call.
    pub(crate) of: FxHashMap<usize, Dtype>,
    /// The calls with kernels whose element type nothing named.
    pub(crate) untyped: rustc_hash::FxHashSet<usize>,
}

impl Elems {
    pub(crate) fn of(
        trace: &Trace,
        order: &[usize],
        launches: &FxHashMap<usize, Vec<usize>>,
        kernel_name: impl Fn(usize) -> u32,
        stats: &mut Stats,
    ) -> Elems {
        // Calls with shapes recorded without an element type (not those whose every argument
        // is a `[]`: nothing to type).
        let untyped_call = |o: usize| {
            trace.ops[o].inputs.is_some_and(|i| {
                let x = &trace.inputs[i as usize].inputs;
                x.untyped.iter().any(|(_, ty, _)| ty.is_empty())
            })
        };
        let mut by_name: FxHashMap<u32, Option<Dtype>> = FxHashMap::default();
        let mut named = |o: usize| -> Option<Dtype> {
            let mut found: Option<Dtype> = None;
            for &l in &launches[&o] {
                let k = kernel_name(l);
                let d = *by_name
                    .entry(k)
                    .or_insert_with(|| Dtype::from_kernel_name(trace.name(k)));
                match (found, d) {
                    (_, None) => {}
                    (None, Some(d)) => found = Some(d),
                    (Some(f), Some(d)) if f == d => {}
                    // Kernels naming two types: none is the call's.
                    (Some(_), Some(_)) => return None,
                }
            }
            found
        };
        let mut of = FxHashMap::default();
        // By operator and recorded shapes: the type their calls' kernels name (None: two).
        let mut by_shapes: FxHashMap<(u32, u32), Option<Dtype>> = FxHashMap::default();
        let mut unnamed = Vec::new();
        for &o in order.iter().filter(|&&o| untyped_call(o)) {
            let op = &trace.ops[o];
            match named(o) {
                Some(d) => {
                    of.insert(o, d);
                    *stats.typed_from.entry("kernel".into()).or_default() += 1;
                    if let Some(i) = op.inputs {
                        by_shapes
                            .entry((op.name, i))
                            .and_modify(|e| {
                                if *e != Some(d) {
                                    *e = None;
                                }
                            })
                            .or_insert(Some(d));
                    }
                }
                None => unnamed.push(o),
            }
        }
        let mut untyped = rustc_hash::FxHashSet::default();
        for o in unnamed {
            let op = &trace.ops[o];
            match op.inputs.and_then(|i| by_shapes.get(&(op.name, i))) {
                Some(Some(d)) => {
                    of.insert(o, *d);
                    *stats
                        .typed_from
                        .entry("same operator and shapes".into())
                        .or_default() += 1;
                }
                _ => {
                    untyped.insert(o);
                }
            }
        }
        Elems { of, untyped }
    }
}
