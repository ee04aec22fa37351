//! Every launch linked to the CPU side of the trace: the runtime call that launched it (by
//! `correlation`), and the innermost operator, `user_annotation` and `nn.Module` around that
//! call on its thread (a sweep over start times per thread).

use rustc_hash::{FxHashMap, FxHashSet};

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
    /// How ranges were matched, when they were; launches whose correlation id was ambiguous.
    pub notes: Vec<String>,
    /// Per launch, whether its correlation id names launch calls in several processes that
    /// its device does not tell apart (it then has no launch call).
    pub ambiguous: Vec<bool>,
}

/// The process of a thread ([`Trace::thread_process`]), when the trace says.
fn process_of(trace: &Trace, thread: u32) -> Option<u32> {
    trace.thread_process.get(thread as usize).copied()
}

/// Each kernel's launch call, by its correlation id, within the process that launched it.
///
/// CUPTI numbers correlation ids per process, so a trace of several processes (ranks' traces
/// merged) may hold one id several times. A kernel event says its device, not its process: of
/// the calls with its id, those that started after it are not its own, and a process is known
/// to launch on the devices its unambiguous launches ran on. When that leaves one call, it is
/// the kernel's; otherwise the kernel is left without one (`ambiguous`). Within one process an
/// id is unique; should it repeat, the last call is taken.
fn launch_calls(trace: &Trace) -> (Vec<Option<usize>>, Vec<bool>, Option<String>) {
    let process = |r: usize| process_of(trace, trace.runtimes[r].thread);
    let mut first: FxHashMap<i64, usize> = FxHashMap::default();
    // Ids seen in several processes: one call per process.
    let mut several: FxHashMap<i64, Vec<usize>> = FxHashMap::default();
    for (i, r) in trace.runtimes.iter().enumerate() {
        let Some(c) = r.correlation else { continue };
        match first.get(&c).copied() {
            None => {
                first.insert(c, i);
            }
            Some(j) if process(j) == process(i) && !several.contains_key(&c) => {
                first.insert(c, i);
            }
            Some(j) => {
                let calls = several.entry(c).or_insert_with(|| vec![j]);
                match calls.iter_mut().find(|k| process(**k) == process(i)) {
                    Some(k) => *k = i,
                    None => calls.push(i),
                }
            }
        }
    }
    let mut launch_rt: Vec<Option<usize>> = trace
        .kernels
        .iter()
        .map(|k| {
            k.correlation
                .filter(|c| !several.contains_key(c))
                .and_then(|c| first.get(&c).copied())
        })
        .collect();
    let mut ambiguous = vec![false; trace.kernels.len()];
    if several.is_empty() {
        return (launch_rt, ambiguous, None);
    }
    // The devices each process launched on, from the kernels whose call is certain.
    let mut launches_on: FxHashSet<(Option<u32>, i64)> = FxHashSet::default();
    for (k, r) in trace.kernels.iter().zip(&launch_rt) {
        if let (Some(r), Some(d)) = (r, k.device) {
            launches_on.insert((process(*r), d));
        }
    }
    let mut processes: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for (i, k) in trace.kernels.iter().enumerate() {
        let Some(calls) = k.correlation.and_then(|c| several.get(&c)) else {
            continue;
        };
        let fits: Vec<usize> = calls
            .iter()
            .copied()
            .filter(|&r| trace.runtimes[r].ts <= k.ts)
            .filter(|&r| {
                k.device
                    .is_some_and(|d| launches_on.contains(&(process(r), d)))
            })
            .collect();
        if let [r] = fits[..] {
            launch_rt[i] = Some(r);
        } else {
            ambiguous[i] = true;
            for &r in calls {
                if let Some(p) = process(r) {
                    processes.insert(&trace.processes[p as usize]);
                }
            }
        }
    }
    let n = ambiguous.iter().filter(|a| **a).count();
    let note = (n > 0).then(|| {
        let mut shown: Vec<&str> = processes.iter().copied().take(8).collect();
        if processes.len() > 8 {
            shown.push("…");
        }
        format!(
            "{n} kernel launches whose correlation id names launch calls in several processes ({}), which their devices do not tell apart: left without an operator (CUPTI numbers correlation ids per process; import each process's trace on its own to link them all)",
            shown.join(", ")
        )
    });
    (launch_rt, ambiguous, note)
}

/// Links every launch to its runtime call, operator, annotation and module.
pub fn link(trace: &Trace) -> Links {
    let mut note = None;
    // Which runtime call launched what: by correlation for kernel events, in order for ranges.
    let from_ranges = trace.kernels.is_empty() && !trace.ranges.is_empty();
    let (launch_rt, ambiguous, ambiguous_note) = if from_ranges {
        let mut calls: Vec<usize> = (0..trace.runtimes.len())
            .filter(|&i| LAUNCH_CALLS.contains(&trace.name(trace.runtimes[i].name)))
            .collect();
        calls.sort_by_key(|&i| trace.runtimes[i].ts);
        let launch_rt: Vec<Option<usize>> = if calls.len() == trace.ranges.len() {
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
        };
        // Ranges carry no correlation id, so none is ambiguous.
        (launch_rt, vec![false; trace.ranges.len()], None)
    } else {
        if !trace.ranges.is_empty() {
            note = Some(format!(
                "{} cuda_profiler_range events beside kernel events were not read (Kineto records them in separate runs)",
                trace.ranges.len()
            ));
        }
        launch_calls(trace)
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
    // External ids are numbered per process too: an operator of the call's own process.
    let by_external: FxHashMap<(Option<u32>, i64), usize> = trace
        .ops
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.external_id.map(|e| ((process_of(trace, o.thread), e), i)))
        .collect();
    for (i, r) in trace.runtimes.iter().enumerate() {
        if rt_op[i].is_none()
            && let Some(e) = r.external_id
            && r.correlation != Some(e)
        {
            rt_op[i] = by_external.get(&(process_of(trace, r.thread), e)).copied();
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
        notes: note.into_iter().chain(ambiguous_note).collect(),
        ambiguous,
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
