//! The F counted inside calls ([`InnerFlops`]): a call counts its rule's F less what the calls
//! recorded inside it count, so that nested records (PyTorch 1.8's duplicates, an outer fast-path
//! call and its parts) count each piece of work once.

use rustc_hash::FxHashMap;

use crate::operators::{Context, Derived, Dtype};
use crate::trace::calls;
use crate::trace::cost::call_cost;
use crate::trace::elems::Elems;
use crate::trace::model::Trace;

/// What a call's rule F depends on: its operator, recorded inputs, derived shapes and element
/// type.
type OwnKey = (u32, Option<u32>, Option<Derived>, Option<Dtype>);

/// The F counted inside calls ([`crate::trace::calls`]): per call, its rule's F and, below it,
/// what its inner calls count, each piece once; computed once per call and cost.
pub(crate) struct InnerFlops<'a> {
    trace: &'a Trace,
    children: Vec<Vec<usize>>,
    derived: &'a FxHashMap<usize, Derived>,
    elems: &'a Elems,
    /// Per call, the F counted in it and inside it.
    total: FxHashMap<usize, f64>,
    /// The rules' F by (operator, inputs, derived shapes, element type).
    own: FxHashMap<OwnKey, f64>,
    /// The import's context, which the rules are applied in.
    ctx: &'a Context,
}

impl<'a> InnerFlops<'a> {
    pub(crate) fn new(
        trace: &'a Trace,
        parents: &[Option<usize>],
        derived: &'a FxHashMap<usize, Derived>,
        elems: &'a Elems,
        ctx: &'a Context,
    ) -> Self {
        InnerFlops {
            trace,
            children: calls::children(trace, parents).0,
            derived,
            elems,
            total: FxHashMap::default(),
            own: FxHashMap::default(),
            ctx,
        }
    }

    /// A call's F by its rule (0 without one); a call recorded without element types and none
    /// found is counted as FP32 (F does not depend on it but for integers, which do none).
    pub(crate) fn own(&mut self, o: usize) -> f64 {
        let op = &self.trace.ops[o];
        let elem = self.elems.of.get(&o).copied().or_else(|| {
            op.inputs
                .filter(|&i| self.trace.inputs[i as usize].inputs.types_unrecorded())
                .map(|_| Dtype::F32)
        });
        let key = (op.name, op.inputs, self.derived.get(&o).cloned(), elem);
        if let Some(&f) = self.own.get(&key) {
            return f;
        }
        let f = call_cost(self.trace, o, (None, self.derived.get(&o), elem), self.ctx)
            .map_or(0.0, |c| c.complexity.flops);
        self.own.insert(key, f);
        f
    }

    /// What the calls inside `o` count.
    pub(crate) fn inside(&mut self, o: usize) -> f64 {
        if self.children[o].is_empty() {
            return 0.0;
        }
        // The children of a call, then theirs: a post-order without recursion.
        let mut stack: Vec<(usize, bool)> = self.children[o].iter().map(|&c| (c, false)).collect();
        while let Some((i, expanded)) = stack.pop() {
            if self.total.contains_key(&i) {
                continue;
            }
            if !expanded {
                stack.push((i, true));
                stack.extend(self.children[i].iter().map(|&c| (c, false)));
                continue;
            }
            let inside: f64 = self.children[i].iter().map(|c| self.total[c]).sum();
            let own = self.own(i);
            self.total.insert(i, own.max(inside));
        }
        self.children[o].iter().map(|c| self.total[c]).sum()
    }
}
