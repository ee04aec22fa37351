//! Shapes an operator call's own arguments do not record but the trace does elsewhere
//! ([`Derived`]), so that the operator rules never assume what changes F or B.
//!
//! - The output of a convolution recorded without `Concrete Inputs` (PyTorch before 2.1): the
//!   autograd node the call made records the gradient of the output as its input. PyTorch 1.9
//!   and later write `Sequence number` on every operator (the number the next autograd node will
//!   take; `Fwd thread id` 0) and on the node (with the forward thread's id): the node named for a
//!   convolution (`CudnnConvolutionBackward`, `ConvolutionBackward0`, …) with the number of a
//!   forward convolution call gives its output. Used only when unambiguous: one such node for
//!   the number, one outermost convolution call of that number (a frozen layer makes no node and
//!   shares the next layer's number), and an output whose batch and channels fit.
//! - The input and weight of the halves of a PyTorch 1.8–1.10 convolution backward
//!   (`cudnn_convolution_backward_input(self_size, …)` records the input's size as an integer
//!   list without its values): the enclosing `cudnn_convolution_backward(self, grad_output,
//!   weight, …)` records both.
//! - Which gradients such a backward computes (its `output_mask`, not recorded before 2.1): the
//!   halves it calls say.
//! - PyTorch 1.8 writes no sequence numbers (nor element types, and each operator twice,
//!   nested): a forward convolution's output is then the output gradient that every backward call
//!   with the same input and weight shapes records (when they all agree; a call without a
//!   backward of its own that shares its shapes with one of another stride would take that one's:
//!   in a training step every convolution has its backward). Else, and in any trace without
//!   `Concrete Inputs` (inference makes no autograd node), the input of the operator called next
//!   at the same level, when it has the output's batch and channels (the batch norm after a
//!   convolution). Never a stride or padding assumed; where each came from is said
//!   ([`OutputFrom`]).
//!
//! Sources: the PyTorch 1.9 profiler's `finalizeCPUTrace` (`torch/csrc/autograd/profiler_kineto.cpp`),
//! which writes `Sequence number` and `Fwd thread id`; the TensorBoard plugin's real ResNet-50
//! traces (kineto `tb_plugin/samples`, PyTorch 1.9), where `CudnnConvolutionBackward` records
//! `[[32, 64, 112, 112]]` for the stem.

use rustc_hash::FxHashMap;

use super::model::Trace;
use crate::operators::{
    ConvRole, Derived, OutputFrom, base_name, conv_grad_output, conv_role, conv_shapes,
};

/// Each operator call's enclosing call on its thread (`None` at the top), by a sweep over start
/// times: the outer of two calls with the same span is the one earlier in the file.
pub fn parents(trace: &Trace) -> Vec<Option<usize>> {
    let mut by_thread: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    for (i, o) in trace.ops.iter().enumerate() {
        by_thread.entry(o.thread).or_default().push(i);
    }
    let mut out = vec![None; trace.ops.len()];
    for (_, mut ops) in by_thread {
        ops.sort_by_key(|&i| (trace.ops[i].ts, std::cmp::Reverse(trace.ops[i].end), i));
        let mut stack: Vec<usize> = Vec::new();
        for i in ops {
            let o = &trace.ops[i];
            while let Some(&top) = stack.last() {
                let t = &trace.ops[top];
                if t.ts <= o.ts && o.end <= t.end {
                    break;
                }
                stack.pop();
            }
            out[i] = stack.last().copied();
            stack.push(i);
        }
    }
    out
}

/// The calls recorded twice, nested (PyTorch 1.8's profiler writes each operator call inside a
/// record of itself): those directly inside a call of the same name with the same recorded
/// shapes. Each pair is one call: its kernels are linked to the inner record, and the counts
/// ([`crate::trace::calls`]) find the outer one's work inside it.
pub fn duplicates(trace: &Trace, parents: &[Option<usize>]) -> usize {
    parents
        .iter()
        .enumerate()
        .filter(|&(i, p)| {
            p.is_some_and(|p| {
                let (a, b) = (&trace.ops[i], &trace.ops[p]);
                a.name == b.name && a.inputs == b.inputs
            })
        })
        .count()
}

/// Whether an autograd node's name is a convolution's: `CudnnConvolutionBackward`,
/// `ConvolutionBackward0`, `ThnnConv2DBackward`, `SlowConvDilated2DBackward0`, … (not a double
/// backward, `…BackwardBackward0`, nor the engine's `autograd::engine::evaluate_function: …`
/// wrapper, which records no shapes).
fn is_conv_node(name: &str) -> bool {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    stem.ends_with("Backward")
        && !stem.ends_with("BackwardBackward")
        && stem.contains("Conv")
        && !name.contains(':')
}

/// The derived shapes of every call that has any, by index into [`Trace::ops`].
pub fn derive(trace: &Trace, parents: &[Option<usize>]) -> FxHashMap<usize, Derived> {
    let mut out: FxHashMap<usize, Derived> = FxHashMap::default();
    let recorded = |i: usize| {
        trace.ops[i]
            .inputs
            .map(|x| &trace.inputs[x as usize].inputs)
    };
    let role = |i: usize| conv_role(base_name(trace.name(trace.ops[i].name)));

    // Autograd nodes of convolutions, by sequence number (None: more than one).
    let mut nodes: FxHashMap<i64, Option<Vec<u64>>> = FxHashMap::default();
    for o in &trace.ops {
        let (Some(seq), Some(fwd)) = (o.sequence, o.forward_thread) else {
            continue;
        };
        if fwd == 0 || !is_conv_node(trace.name(o.name)) {
            continue;
        }
        let grad = o
            .inputs
            .and_then(|x| trace.inputs[x as usize].inputs.args.first())
            .and_then(|a| a.shape().map(<[u64]>::to_vec));
        nodes.entry(seq).and_modify(|g| *g = None).or_insert(grad);
    }
    // Forward convolution calls without Concrete Inputs, by sequence number: the outermost ones
    // (a call inside another convolution call is the same call's implementation).
    let mut calls: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
    for (i, o) in trace.ops.iter().enumerate() {
        if role(i) != Some(ConvRole::Forward) || o.forward_thread.is_some_and(|t| t != 0) {
            continue;
        }
        let Some(seq) = o.sequence else { continue };
        if recorded(i).is_some_and(|x| x.concrete.is_some()) || !nodes.contains_key(&seq) {
            continue;
        }
        calls.entry(seq).or_default().push(i);
    }
    for (seq, ops) in calls {
        let Some(Some(grad)) = nodes.get(&seq) else {
            continue;
        };
        let outermost = ops
            .iter()
            .filter(|&&i| parents[i].is_none_or(|p| role(p) != Some(ConvRole::Forward)))
            .count();
        let shapes: Vec<_> = ops
            .iter()
            .map(|&i| {
                recorded(i).and_then(|x| conv_shapes(base_name(trace.name(trace.ops[i].name)), x))
            })
            .collect();
        let Some(Some((input, weight))) = shapes.first().cloned() else {
            continue;
        };
        if outermost != 1
            || shapes
                .iter()
                .any(|s| s.as_ref() != Some(&(input.clone(), weight.clone())))
        {
            continue;
        }
        // The gradient has the output's batch and, untransposed, the weight's output channels.
        if grad.len() != input.len() || grad[0] != input[0] {
            continue;
        }
        for i in ops {
            let d = out.entry(i).or_default();
            d.output = Some(grad.clone());
            d.output_from = Some(OutputFrom::AutogradNode);
        }
    }
    without_sequence_numbers(trace, parents, &mut out);

    // The halves of a 1.8–1.10 backward, and what they say of it.
    let mut halves: FxHashMap<usize, [bool; 2]> = FxHashMap::default();
    for (i, parent) in parents.iter().enumerate() {
        let half = match role(i) {
            Some(ConvRole::InputHalf) => 0,
            Some(ConvRole::WeightHalf) => 1,
            _ => continue,
        };
        let Some(p) = parent.filter(|&p| role(p) == Some(ConvRole::Backward)) else {
            continue;
        };
        halves.entry(p).or_default()[half] = true;
        let parent =
            recorded(p).and_then(|x| conv_shapes(base_name(trace.name(trace.ops[p].name)), x));
        if let Some((input, weight)) = parent {
            let d = out.entry(i).or_default();
            d.input = Some(input);
            d.weight = Some(weight);
        }
    }
    for (p, grads) in halves {
        if recorded(p).is_none_or(|x| x.concrete.is_none()) {
            out.entry(p).or_default().grads = Some(grads);
        }
    }
    out
}

/// A convolution's input and weight shapes.
type Shapes = (Vec<u64>, Vec<u64>);

/// The output shapes of forward convolutions that neither `Concrete Inputs` nor an autograd node
/// give (PyTorch 1.8: no sequence numbers): from the backward calls with the same input and
/// weight shapes, else from the next operator's input (the module's notes).
fn without_sequence_numbers(
    trace: &Trace,
    parents: &[Option<usize>],
    out: &mut FxHashMap<usize, Derived>,
) {
    let recorded = |i: usize| {
        trace.ops[i]
            .inputs
            .map(|x| &trace.inputs[x as usize].inputs)
    };
    let name = |i: usize| base_name(trace.name(trace.ops[i].name));
    let role = |i: usize| conv_role(name(i));
    // Forward calls still without an output, with their input and weight shapes.
    let forward: Vec<(usize, Vec<u64>, Vec<u64>)> = (0..trace.ops.len())
        .filter(|&i| role(i) == Some(ConvRole::Forward))
        .filter(|i| out.get(i).is_none_or(|d| d.output.is_none()))
        .filter_map(|i| {
            let x = recorded(i).filter(|x| x.concrete.is_none())?;
            let (input, weight) = conv_shapes(name(i), x)?;
            Some((i, input, weight))
        })
        .collect();
    if forward.is_empty() {
        return;
    }
    // The output gradient every backward call of these shapes records (None: they disagree).
    // Only where the trace has no sequence numbers at all (PyTorch 1.8): where it has, a call
    // without an autograd node of its own made no backward (`no_grad`, a frozen layer), and
    // another layer's of the same shapes may have another stride.
    let sequenced = trace.ops.iter().any(|o| o.sequence.is_some());
    let mut by_shapes: FxHashMap<Shapes, Option<Vec<u64>>> = FxHashMap::default();
    for i in (0..trace.ops.len()).filter(|_| !sequenced) {
        if role(i) != Some(ConvRole::Backward) {
            continue;
        }
        let Some(x) = recorded(i) else { continue };
        let (Some(shapes), Some(grad)) = (conv_shapes(name(i), x), conv_grad_output(name(i), x))
        else {
            continue;
        };
        by_shapes
            .entry(shapes)
            .and_modify(|g| {
                if g.as_ref() != Some(&grad) {
                    *g = None;
                }
            })
            .or_insert(Some(grad));
    }
    // The calls at each level, by start time (for the next operator after a call).
    let mut level: FxHashMap<(Option<usize>, u32), Vec<usize>> = FxHashMap::default();
    for (i, o) in trace.ops.iter().enumerate() {
        level.entry((parents[i], o.thread)).or_default().push(i);
    }
    for v in level.values_mut() {
        v.sort_by_key(|&i| (trace.ops[i].ts, i));
    }
    let plausible = |o: &[u64], input: &[u64], weight: &[u64]| {
        o.len() == input.len() && o[0] == input[0] && o[1] == weight[0] && !o.contains(&0)
    };
    for (i, input, weight) in forward {
        if let Some(Some(grad)) = by_shapes.get(&(input.clone(), weight.clone()))
            && grad.len() == input.len()
            && grad[0] == input[0]
        {
            let d = out.entry(i).or_default();
            d.output = Some(grad.clone());
            d.output_from = Some(OutputFrom::Backward);
            continue;
        }
        // The outermost convolution call around this one, and the call after it at its level.
        let mut top = i;
        while let Some(p) = parents[top].filter(|&p| role(p) == Some(ConvRole::Forward)) {
            top = p;
        }
        let end = trace.ops[top].end;
        let Some(calls) = level.get(&(parents[top], trace.ops[top].thread)) else {
            continue;
        };
        let at = calls.partition_point(|&j| trace.ops[j].ts < end);
        let Some(&next) = calls.get(at) else { continue };
        let Some(shape) = recorded(next).and_then(|x| x.dims(0)) else {
            continue;
        };
        if plausible(shape, &input, &weight) {
            let d = out.entry(i).or_default();
            d.output = Some(shape.to_vec());
            d.output_from = Some(OutputFrom::NextOperator(
                trace.name(trace.ops[next].name).into(),
            ));
        }
    }
}
