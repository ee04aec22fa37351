//! A trace's operator calls counted on their own, without kernels: what the operator rules give a
//! whole step, to set beside PyTorch's own FLOP counter (`torch.utils.flop_counter.FlopCounterMode`).
//!
//! A CPU-only trace has no kernels to link operators to, and a call nests the calls that
//! implement it (`aten::linear` > `aten::addmm`; `aten::conv2d` > `aten::convolution` >
//! `aten::_convolution` > `aten::mkldnn_convolution`; under autocast `aten::conv2d` >
//! `aten::conv2d`; PyTorch 1.8 records every call twice, nested). Each piece of work is counted
//! once, where a GPU trace's kernels would find it: at the innermost calls that compute. A call
//! counts what its rule gives less what the calls inside it count ([`left_over`]): nothing when
//! they do all its work (`aten::linear` > `aten::addmm`), the rest when it does part of the work
//! itself (`aten::_addmm_activation`'s matrix product, around the `aten::gelu_` the CPU records
//! inside it). A call with a cost is counted whole when nothing inside it computes (an
//! elementwise operator, or a call whose implementation has no rule); a call without a cost (no
//! rule, shapes its rule cannot read, an autograd node) is looked through.
//!
//! The import of a GPU trace gives a call's kernels the same left-over F
//! ([`crate::trace::import`]).

use std::collections::BTreeMap;

use super::cost::call_cost;
use super::derive;
use super::model::Trace;
use crate::operators::{Context, NoCost, OpCost};

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

/// What a call counts beyond the F its inner calls count: `own − inside` when that is more than
/// rounding, else `None` (its inner calls do all its work, or more).
pub(crate) fn left_over(own: f64, inside: f64) -> Option<f64> {
    let rest = own - inside;
    (rest > 1e-9 * own.abs().max(1.0)).then_some(rest)
}

/// Every call's inner calls, by start time, and the calls at the top.
pub(crate) fn children(trace: &Trace, parents: &[Option<usize>]) -> (Vec<Vec<usize>>, Vec<usize>) {
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
    (children, roots)
}

/// Counts a trace's operator calls, each once ([`self`]).
pub fn count_operators(trace: &Trace) -> OperatorCount {
    let parents = derive::parents(trace);
    let derived = derive::derive(trace, &parents);
    let (children, roots) = children(trace, &parents);
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
        let mut inside: Vec<CountedCall> = children[i]
            .iter()
            .flat_map(|&c| counted[c].take().unwrap_or_default())
            .collect();
        let inside_f: f64 = inside.iter().map(|c| c.cost.complexity.flops).sum();
        let here = match call_cost(trace, i, (None, derived.get(&i), None), &Context::default()) {
            Ok(cost) if inside_f == 0.0 => vec![CountedCall { op: i, cost }],
            Ok(mut cost) => {
                if let Some(rest) = left_over(cost.complexity.flops, inside_f) {
                    cost.complexity.flops = rest;
                    inside.push(CountedCall { op: i, cost });
                }
                inside
            }
            Err(why) => {
                if let (NoCost::Shapes(why), true) = (why, inside.is_empty()) {
                    let name = trace.name(trace.ops[i].name).to_string();
                    *out.without_cost.entry((name, why)).or_default() += 1;
                }
                inside
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse;

    #[test]
    fn left_over_is_more_than_rounding() {
        assert_eq!(left_over(800.0, 320.0), Some(480.0));
        assert_eq!(left_over(800.0, 800.0), None);
        assert_eq!(left_over(800.0, 800.0 * (1.0 - 1e-12)), None);
        assert_eq!(left_over(800.0, 900.0), None);
    }

    /// A CPU trace as PyTorch 1.8 records it (every call twice, one inside the other), a
    /// `linear` whose `addmm` does its work, and an `_addmm_activation` around a `gelu_`: each
    /// piece counted once.
    #[test]
    fn each_piece_of_work_counted_once() {
        let op = |name: &str, ts: u32, dur: u32, args: &str| {
            format!(
                r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": {dur}, "args": {{{args}}}}}"#
            )
        };
        let f = r#""float", "float", "float""#;
        let events = [
            // add_ [4, 3] + [4, 3], recorded twice: 12 FMAs, once.
            op(
                "aten::add_",
                0,
                10,
                r#""Input Dims": [[4, 3], [4, 3], []], "Input type": ["float", "float", "Scalar"]"#,
            ),
            op(
                "aten::add_",
                1,
                8,
                r#""Input Dims": [[4, 3], [4, 3], []], "Input type": ["float", "float", "Scalar"]"#,
            ),
            op(
                "aten::linear",
                20,
                20,
                &format!(r#""Input Dims": [[8, 6], [5, 6], [5]], "Input type": [{f}]"#),
            ),
            op(
                "aten::addmm",
                25,
                10,
                &format!(
                    r#""Input Dims": [[5], [8, 6], [6, 5], [], []], "Input type": [{f}, "Scalar", "Scalar"]"#
                ),
            ),
            op(
                "aten::_addmm_activation",
                50,
                20,
                &format!(
                    r#""Input Dims": [[5], [8, 6], [6, 5], [], [], []], "Input type": [{f}, "Scalar", "Scalar", "Scalar"], "Concrete Inputs": ["", "", "", "1", "1", "True"]"#
                ),
            ),
            op(
                "aten::gelu_",
                60,
                5,
                r#""Input Dims": [[8, 5], []], "Input type": ["float", "Scalar"], "Concrete Inputs": ["", "'none'"]"#,
            ),
        ];
        let text = format!(r#"{{"traceEvents": [{}]}}"#, events.join(","));
        let t = parse(text.as_bytes()).unwrap();
        let count = count_operators(&t);
        let counted: Vec<(&str, f64)> = count
            .counted
            .iter()
            .map(|c| (t.name(t.ops[c.op].name), c.cost.complexity.flops))
            .collect();
        // The add_ once (the inner record counts it, the outer has nothing left over); the
        // addmm, not the linear; the rest of _addmm_activation's rule (the product 480 and its
        // tanh GELU 8·40, less the 160 of the exact GELU the CPU runs in the gelu_ inside).
        assert_eq!(
            counted,
            [
                ("aten::add_", 24.0),
                ("aten::addmm", 480.0),
                ("aten::_addmm_activation", 640.0),
                ("aten::gelu_", 160.0),
            ]
        );
        assert_eq!(t.name(t.ops[count.counted[0].op].name), "aten::add_");
        assert_eq!(t.ops[count.counted[0].op].ts, 1000);
    }
}
