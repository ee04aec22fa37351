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
//!
//! Sources: the PyTorch 1.9 profiler's `finalizeCPUTrace` (`torch/csrc/autograd/profiler_kineto.cpp`),
//! which writes `Sequence number` and `Fwd thread id`; the TensorBoard plugin's real ResNet-50
//! traces (kineto `tb_plugin/samples`, PyTorch 1.9), where `CudnnConvolutionBackward` records
//! `[[32, 64, 112, 112]]` for the stem.

use rustc_hash::FxHashMap;

use super::model::Trace;
use crate::operators::{ConvRole, Derived, base_name, conv_role, conv_shapes};

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
            out.entry(i).or_default().output = Some(grad.clone());
        }
    }

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
