//! What a trace's import counted ([`Stats`]): read by the summary notes (`notes.rs`) and by
//! tests; made by `import.rs`.

use std::collections::BTreeMap;

use roofline_model::bundle::Kernel;

use crate::operators::OutputFrom;

/// What the import counted, for the summary and for tests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Kernel launches read (kernel events, or timed profiler ranges).
    pub launches: usize,
    /// Their summed time, seconds.
    pub time_s: f64,
    /// Launches linked to an operator.
    pub linked: usize,
    /// Launches whose launch call (the runtime event of their correlation id) is not in the
    /// trace: most often launched before the profiling window opened.
    pub no_launch_call: usize,
    /// Launches whose correlation id names launch calls in several processes that their device
    /// does not tell apart ([`crate::trace::link::Links::ambiguous`]).
    pub ambiguous: usize,
    /// Launches replayed from a CUDA (or HIP) graph: one `cudaGraphLaunch` call for all the
    /// kernels of the graph, linked to the operator around that call.
    pub graph_replayed: usize,
    /// Launches whose operator has a complexity.
    pub with_complexity: usize,
    /// Memory copies: count, bytes, seconds.
    pub memcpy: (usize, f64, f64),
    /// Memory sets: count, bytes, seconds.
    pub memset: (usize, f64, f64),
    /// Kernel launches per operator without a rule, by operator name.
    pub no_rule: BTreeMap<String, usize>,
    /// Kernel launches per communication operator (NCCL, Gloo and the like), by operator name:
    /// collectives, which no roofline of one GPU bounds.
    pub communication: BTreeMap<String, usize>,
    /// The bytes of the messages of the communication operators' calls that launched kernels
    /// (the tensor each is called on), by operator name.
    pub communication_bytes: BTreeMap<String, f64>,
    /// The kernel time with F and B, and the rest.
    pub coverage: Coverage,
    /// Kernel launches per operator whose recorded shapes did not fit its rule (or were not
    /// recorded), by operator name and the rule's reason.
    pub no_shapes: BTreeMap<(String, String), usize>,
    /// Kernel events recorded with a zero duration (shorter than the trace's resolution): kept,
    /// each timed at half the resolution (as a summary note says).
    pub zero_time: usize,
    /// Kernel events given the counters of a range from a counter trace
    /// ([`crate::trace::import::import_with_counters`]).
    pub with_counters: usize,
    /// Operator calls (that launched kernels) recorded with shapes but no element type
    /// (PyTorch 1.8), typed from what the trace names elsewhere, by where: `kernel` (the names of
    /// the kernels they launched), `same operator and shapes`.
    pub typed_from: BTreeMap<String, usize>,
    /// Operator calls (that launched kernels) recorded with shapes but no element type that
    /// nothing in the trace named, by operator: their B is unknown, so they have no complexity.
    pub untyped: BTreeMap<String, usize>,
    /// Those calls' F from their shapes alone, FLOPs.
    pub untyped_flops: f64,
    /// Convolution calls (that launched kernels) whose output shape came from elsewhere in the
    /// trace, by where ([`OutputFrom`]).
    pub conv_outputs: BTreeMap<OutputFrom, usize>,
    /// Operator calls (that launched kernels) with calls recorded inside them that count part of
    /// their work: their F is the rest ([`crate::trace::calls::left_over`]), by operator.
    pub left_over: BTreeMap<String, usize>,
    /// Operator calls (that launched kernels) whose whole work the calls recorded inside them
    /// count: their own kernels carry no complexity, by operator.
    pub counted_inside: BTreeMap<String, usize>,
    /// Operator calls recorded twice, nested (PyTorch 1.8): the inner record of each pair.
    pub duplicates: usize,
}

/// Where the kernel time went: with F and B, in collectives, or neither (by operator).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Coverage {
    /// Seconds of kernels whose operator call carries F and B.
    pub covered_s: f64,
    /// Seconds of the collectives' kernels (a communication operator's, or NCCL's by name when
    /// no operator launched them).
    pub communication_s: f64,
    /// The rest, by operator (`None`: kernels with no operator): launches and seconds.
    pub rest: BTreeMap<Option<String>, (usize, f64)>,
}

impl Coverage {
    /// Counts one kernel entry of the import.
    pub(crate) fn add(&mut self, k: &Kernel) {
        let t = k.time.total_s;
        let comm = match &k.operator {
            Some(op) => crate::operators::is_communication(&op.name),
            None => k.name.starts_with("ncclDevKernel") || k.name.starts_with("ncclKernel"),
        };
        if comm {
            self.communication_s += t;
        } else if k
            .operator
            .as_ref()
            .is_some_and(|op| op.complexity.is_some())
        {
            self.covered_s += t;
        } else {
            let e = self
                .rest
                .entry(k.operator.as_ref().map(|op| op.name.clone()))
                .or_default();
            e.0 += 1;
            e.1 += t;
        }
    }

    /// Seconds of the kernels outside the collectives.
    pub fn computing_s(&self) -> f64 {
        self.covered_s + self.rest.values().map(|r| r.1).fold(0.0, |a, b| a + b)
    }

    /// The share of the non-communication kernel time whose operator calls carry F and B, 0 to
    /// 1; `None` when there is no such time.
    pub fn share(&self) -> Option<f64> {
        let all = self.computing_s();
        (all > 0.0).then(|| self.covered_s / all)
    }
}
