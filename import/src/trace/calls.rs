//! A trace's operator calls counted on their own, without kernels: what the operator rules give a
//! whole step, to set beside PyTorch's own FLOP counter (`torch.utils.flop_counter.FlopCounterMode`).
//!
//! A CPU-only trace has no kernels to link operators to, and a call nests the calls that
//! implement it (`aten::linear` > `aten::addmm`; `aten::conv2d` > `aten::convolution` >
//! `aten::_convolution` > `aten::mkldnn_convolution`; under autocast `aten::conv2d` >
//! `aten::conv2d`). Each piece of work is counted once, where a GPU trace's kernels would find
//! it: at the innermost calls that compute (a rule gives them F > 0). A call with a cost is
//! counted itself when nothing inside it computes (an elementwise operator, or a call whose
//! implementation has no rule); a call without a cost (no rule, shapes its rule cannot read, an
//! autograd node) is looked through.

use std::collections::BTreeMap;

use super::derive;
use super::import::call_cost;
use super::model::Trace;
use crate::operators::{NoCost, OpCost};

/// One operator call counted.
#[derive(Debug, Clone, PartialEq)]
pub struct CountedCall {
    /// Index into [`Trace::ops`].
    pub op: usize,
    /// Its cost.
    pub cost: OpCost,
}

/// A trace's operator calls, each counted once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OperatorCount {
    /// The counted calls, by start time.
    pub counted: Vec<CountedCall>,
    /// Calls left without a cost because their rule could not read their shapes, by
    /// (operator, why), with nothing inside them counted instead.
    pub without_cost: BTreeMap<(String, String), usize>,
}

/// Counts a trace's operator calls, each once ([`self`]).
pub fn count_operators(trace: &Trace) -> OperatorCount {
    let parents = derive::parents(trace);
    let derived = derive::derive(trace, &parents);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); trace.ops.len()];
    let mut roots = Vec::new();
    for (i, p) in parents.iter().enumerate() {
        match p {
            Some(p) => children[*p].push(i),
            None => roots.push(i),
        }
    }
    let by_time = |v: &mut Vec<usize>| v.sort_by_key(|&i| (trace.ops[i].ts, i));
    by_time(&mut roots);
    for c in &mut children {
        by_time(c);
    }
    let mut out = OperatorCount::default();
    // Post-order: a call's children are counted before it is decided on.
    let mut counted: Vec<Option<Vec<CountedCall>>> = vec![None; trace.ops.len()];
    let mut stack: Vec<(usize, bool)> = roots.into_iter().rev().map(|i| (i, false)).collect();
    while let Some((i, expanded)) = stack.pop() {
        if !expanded {
            stack.push((i, true));
            stack.extend(children[i].iter().rev().map(|&c| (c, false)));
            continue;
        }
        let inside: Vec<CountedCall> = children[i]
            .iter()
            .flat_map(|&c| counted[c].take().unwrap_or_default())
            .collect();
        let here = if inside.iter().any(|c| c.cost.complexity.flops > 0.0) {
            inside
        } else {
            match call_cost(trace, i, None, derived.get(&i)) {
                Ok(cost) => vec![CountedCall { op: i, cost }],
                Err(why) => {
                    if let (NoCost::Shapes(why), true) = (why, inside.is_empty()) {
                        let name = trace.name(trace.ops[i].name).to_string();
                        *out.without_cost.entry((name, why)).or_default() += 1;
                    }
                    inside
                }
            }
        };
        if parents[i].is_some() {
            counted[i] = Some(here);
        } else {
            out.counted.extend(here);
        }
    }
    out.counted.sort_by_key(|c| (trace.ops[c.op].ts, c.op));
    out
}
