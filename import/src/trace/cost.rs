//! One operator call's cost from what the trace records of it ([`call_cost`]): the one place
//! the trace's calls meet the operator rules, for the import, the counts of calls and the F
//! counted inside calls.

use crate::operators::{self, Context, Derived, Dtype, ListElem, NoCost, OpCost, OpInputs};
use crate::trace::model::Trace;

/// One operator call's cost from what the trace records of it: its recorded inputs, the
/// element type of its tensor lists (read from a kernel's name), Inductor's own estimate, the
/// shapes found elsewhere in the trace ([`crate::trace::derive`]), and, for a call whose tensors
/// were recorded with no element type (PyTorch 1.8), the element type the trace names elsewhere
/// (`elem`, `crate::trace::elems::Elems`), in the import's [`Context`] (the model's
/// configuration, the parallelism).
pub(crate) fn call_cost(
    trace: &Trace,
    o: usize,
    (list_elem, derived, elem): (Option<ListElem>, Option<&Derived>, Option<Dtype>),
    ctx: &Context,
) -> Result<OpCost, NoCost> {
    let op = &trace.ops[o];
    let name = trace.name(op.name);
    let recorded = op.inputs.map(|i| &trace.inputs[i as usize].inputs);
    match (recorded, trace.estimates.get(&o)) {
        (_, Some(e)) => operators::inductor::with_estimate(name, recorded, e.flops, e.bytes),
        (Some(x), None) => {
            let typed;
            let x = match elem {
                Some(dt) if x.types_unrecorded() => {
                    if !operators::one_element_type(name, dt) {
                        return Err(NoCost::Shapes(
                            "element types not recorded (PyTorch 1.8), and its tensors are of several types (indices, masks)".into(),
                        ));
                    }
                    typed = x.typed_as(dt);
                    &typed
                }
                _ => x,
            };
            operators::op_cost_in(
                name,
                &OpInputs {
                    list_elem: list_elem.or(x.list_elem),
                    derived: derived.cloned().unwrap_or_default(),
                    ..x.clone()
                },
                ctx,
            )
        }
        (None, None) => match operators::op_cost_in(name, &OpInputs::default(), ctx) {
            Err(NoCost::NoRule) => Err(NoCost::NoRule),
            _ => Err(NoCost::Shapes("no shapes recorded".into())),
        },
    }
}
