//! Every launch linked to the CPU side of the trace: the runtime call that launched it (by
//! `correlation`), and the innermost operator, `user_annotation` and `nn.Module` around that
//! call on its thread (a sweep over start times per thread).

use rustc_hash::FxHashMap;

use super::model::{Ns, Trace};

/// Names of runtime and driver calls that launch one kernel.
pub(super) const LAUNCH_CALLS: [&str; 7] = [
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cudaLaunchCooperativeKernel",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cuLaunchCooperativeKernel",
    "cudaLaunchCooperativeKernelMultiDevice",
];

/// The runtime calls that replay a captured graph of kernels.
pub(super) const GRAPH_LAUNCHES: [&str; 2] = ["cudaGraphLaunch", "hipGraphLaunch"];

/// The innermost span holding each query, per thread, by a sweep over start times. Of two
/// spans with the same start and end, the one later in the file is the inner one (Kineto writes
/// a parent operator before its child; the sort is stable).
/// `spans` and `queries` are `(thread, start, end)`; the answer is an index into `spans`.
pub(super) fn innermost(spans: &[(u32, Ns, Ns)], queries: &[(u32, Ns, Ns)]) -> Vec<Option<usize>> {
    let mut by_thread: FxHashMap<u32, (Vec<usize>, Vec<usize>)> = FxHashMap::default();
    for (i, s) in spans.iter().enumerate() {
        by_thread.entry(s.0).or_default().0.push(i);
    }
    for (i, q) in queries.iter().enumerate() {
        by_thread.entry(q.0).or_default().1.push(i);
    }
    let mut out = vec![None; queries.len()];
    for (_, (mut ss, mut qs)) in by_thread {
        if ss.is_empty() {
            continue;
        }
        // Outer spans first when two start together.
        ss.sort_by_key(|&i| (spans[i].1, std::cmp::Reverse(spans[i].2)));
        qs.sort_by_key(|&i| queries[i].1);
        let mut stack: Vec<usize> = Vec::new();
        let mut p = 0;
        for qi in qs {
            let (_, qs_t, qe_t) = queries[qi];
            while p < ss.len() && spans[ss[p]].1 <= qs_t {
                let s = ss[p];
                while stack.last().is_some_and(|&t| spans[t].2 < spans[s].1) {
                    stack.pop();
                }
                stack.push(s);
                p += 1;
            }
            while stack.last().is_some_and(|&t| spans[t].2 < qs_t) {
                stack.pop();
            }
            out[qi] = stack.iter().rev().copied().find(|&t| spans[t].2 >= qe_t);
        }
    }
    out
}

/// How each launch (kernel event, or profiler range) links to the trace's CPU side.
#[derive(Debug, Clone, PartialEq)]
pub struct Links {
    /// The launches are `cuda_profiler_range` events (the trace has no kernel events).
    pub from_ranges: bool,
    /// Per launch, the runtime call that launched it ([`Trace::runtimes`]).
    pub launch_rt: Vec<Option<usize>>,
    /// Per launch, the innermost operator around that call ([`Trace::ops`]).
    pub launch_op: Vec<Option<usize>>,
    /// Per runtime call, the innermost `user_annotation` around it.
    pub rt_ann: Vec<Option<usize>>,
    /// Per runtime call, the innermost `nn.Module` around it.
    pub rt_mod: Vec<Option<usize>>,
    /// How ranges were matched, when they were.
    pub note: Option<String>,
}

/// Links every launch to its runtime call, operator, annotation and module.
pub fn link(trace: &Trace) -> Links {
    let mut note = None;
    // Which runtime call launched what: by correlation for kernel events, in order for ranges.
    let by_correlation: FxHashMap<i64, usize> = trace
        .runtimes
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.correlation.map(|c| (c, i)))
        .collect();
    let from_ranges = trace.kernels.is_empty() && !trace.ranges.is_empty();
    let launch_rt: Vec<Option<usize>> = if from_ranges {
        let mut calls: Vec<usize> = (0..trace.runtimes.len())
            .filter(|&i| LAUNCH_CALLS.contains(&trace.name(trace.runtimes[i].name)))
            .collect();
        calls.sort_by_key(|&i| trace.runtimes[i].ts);
        if calls.len() == trace.ranges.len() {
            note = Some(format!(
                "profiler ranges matched to the {} kernel launch calls in launch order (the range profiler serialises kernels; a range carries no correlation id)",
                calls.len()
            ));
            calls.into_iter().map(Some).collect()
        } else {
            note = Some(format!(
                "{} profiler ranges but {} kernel launch calls: ranges are not linked to operators",
                trace.ranges.len(),
                calls.len()
            ));
            vec![None; trace.ranges.len()]
        }
    } else {
        if !trace.ranges.is_empty() {
            note = Some(format!(
                "{} cuda_profiler_range events beside kernel events were not read (Kineto records them in separate runs)",
                trace.ranges.len()
            ));
        }
        trace
            .kernels
            .iter()
            .map(|k| k.correlation.and_then(|c| by_correlation.get(&c).copied()))
            .collect()
    };

    // Runtime call → innermost operator, annotation, module on its thread.
    let rt_spans: Vec<(u32, Ns, Ns)> = trace
        .runtimes
        .iter()
        .map(|r| (r.thread, r.ts, r.end))
        .collect();
    let spans = |v: &mut dyn Iterator<Item = (u32, Ns, Ns)>| v.collect::<Vec<_>>();
    let op_spans = spans(&mut trace.ops.iter().map(|o| (o.thread, o.ts, o.end)));
    let mut rt_op = innermost(&op_spans, &rt_spans);
    let by_external: FxHashMap<i64, usize> = trace
        .ops
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.external_id.map(|e| (e, i)))
        .collect();
    for (i, r) in trace.runtimes.iter().enumerate() {
        if rt_op[i].is_none()
            && let Some(e) = r.external_id
            && r.correlation != Some(e)
        {
            rt_op[i] = by_external.get(&e).copied();
        }
    }
    let ann_spans = spans(&mut trace.annotations.iter().map(|a| (a.thread, a.ts, a.end)));
    let rt_ann = innermost(&ann_spans, &rt_spans);
    let mod_spans = spans(&mut trace.modules.iter().map(|a| (a.thread, a.ts, a.end)));
    let rt_mod = innermost(&mod_spans, &rt_spans);
    let launch_op: Vec<Option<usize>> =
        launch_rt.iter().map(|r| r.and_then(|r| rt_op[r])).collect();
    Links {
        from_ranges,
        launch_rt,
        launch_op,
        rt_ann,
        rt_mod,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn innermost_prefers_the_deepest_enclosing_span() {
        let spans = [(0, 0, 100), (0, 10, 50), (0, 20, 30), (1, 0, 1000)];
        let q = [
            (0, 21, 25),
            (0, 40, 45),
            (0, 60, 70),
            (0, 200, 210),
            (1, 5, 6),
            (2, 0, 1),
        ];
        assert_eq!(
            innermost(&spans, &q),
            [Some(2), Some(1), Some(0), None, Some(3), None]
        );
    }
}
