//! The event model a trace is read into: the kernels, copies and sets, runtime calls,
//! operators, annotations, module frames and range-profiler ranges the import needs, with names
//! interned and times in integer nanoseconds ([`Trace`]).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::operators::OpInputs;

/// A time in nanoseconds (Kineto's microseconds × 1000).
pub type Ns = i64;

/// A device kernel, copy or set as the trace recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuEvent {
    /// Interned name ([`Trace::name`]).
    pub name: u32,
    /// Start, ns.
    pub ts: Ns,
    /// Duration as written, µs.
    pub dur_us: f64,
    /// `args.device`.
    pub device: Option<i64>,
    /// `args.stream`.
    pub stream: Option<i64>,
    /// `args.correlation`: the id of the runtime call that launched it.
    pub correlation: Option<i64>,
    /// `args.grid`.
    pub grid: Option<[u32; 3]>,
    /// `args.block`.
    pub block: Option<[u32; 3]>,
    /// `args.bytes` (copies and sets).
    pub bytes: Option<f64>,
}

/// A CUDA runtime or driver call on a CPU thread.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeCall {
    /// Interned name (`cudaLaunchKernel`).
    pub name: u32,
    /// Interned (pid, tid).
    pub thread: u32,
    /// Start, ns.
    pub ts: Ns,
    /// End, ns.
    pub end: Ns,
    /// `args.correlation`.
    pub correlation: Option<i64>,
    /// `args["External id"]`.
    pub external_id: Option<i64>,
}

/// A PyTorch operator on a CPU thread.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuOp {
    /// Interned name (`aten::mm`).
    pub name: u32,
    /// Interned (pid, tid).
    pub thread: u32,
    /// Start, ns.
    pub ts: Ns,
    /// End, ns.
    pub end: Ns,
    /// `args["External id"]`.
    pub external_id: Option<i64>,
    /// `args["Sequence number"]` (PyTorch 1.9 and later, with autograd on): an autograd node
    /// carries the number of the forward operator that made it.
    pub sequence: Option<i64>,
    /// `args["Fwd thread id"]`: 0 on a forward operator, the forward thread on an autograd node.
    pub forward_thread: Option<i64>,
    /// `Input Dims`, `Input type` and `Concrete Inputs`, when recorded: an index into
    /// [`Trace::inputs`] (a training loop repeats the same shapes step after step, so they are
    /// kept once).
    pub inputs: Option<u32>,
}

/// What Inductor (`torch.compile`) estimated for one of its Triton kernels and PyTorch 2.5+
/// records on the kernel's `cpu_op` when Inductor was asked to (`config.benchmark_kernel` or
/// `config.profile_bandwidth`, `TORCHINDUCTOR_BENCHMARK_KERNEL=1` or
/// `TORCHINDUCTOR_PROFILE_BANDWIDTH=1`): `kernel_flop` and `kernel_num_gb`
/// (`torch/_inductor/runtime/triton_heuristics.py`, `get_profiler_kwargs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InductorEstimate {
    /// `kernel_flop`: the FLOPs of the operators a template computes (PyTorch's FLOP counter).
    pub flops: Option<f64>,
    /// `kernel_num_gb` in bytes: the buffers the kernel accesses, the sliced or broadcast part
    /// of each, an in-place buffer twice.
    pub bytes: Option<f64>,
}

/// One distinct set of recorded operator inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedInputs {
    /// As the operator rules read them.
    pub inputs: OpInputs,
    /// The recorded `Input Dims` as compact text (`[[2048,256],[256,6948]]`), for tags.
    pub dims_text: Box<str>,
}

/// A named time span on a CPU thread (`user_annotation`, a module's `python_function`).
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Interned name.
    pub name: u32,
    /// Interned (pid, tid).
    pub thread: u32,
    /// Start, ns.
    pub ts: Ns,
    /// End, ns.
    pub end: Ns,
}

/// One `cuda_profiler_range` event: the counters of one kernel (per-kernel mode) or range.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfilerRange {
    /// Interned name: the demangled kernel name in per-kernel mode.
    pub name: u32,
    /// The device (Kineto writes it as the event's `pid`).
    pub device: Option<i64>,
    /// Start, ns: NOT a measurement (Kineto spreads the ranges evenly over the profiling window).
    pub ts: Ns,
    /// Counter values by interned metric name, as recorded.
    pub metrics: Vec<(u32, f64)>,
    /// Its 0-based position in `traceEvents`, for messages.
    pub event: u64,
}

/// What one event records of a collective: the arguments PyTorch 2.3 and later write on an NCCL
/// kernel and on its `record_param_comms` operator (`Collective name`, `In msg nelems`,
/// `Out msg nelems`, `Group size`, `dtype`, `Process Group Name`, `Process Group Ranks`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommArgs {
    /// `Collective name` (`allreduce`, `_allgather_base`, `wait`).
    pub collective: Option<String>,
    /// `In msg nelems`.
    pub in_nelems: Option<f64>,
    /// `Out msg nelems`.
    pub out_nelems: Option<f64>,
    /// `Group size`.
    pub group_size: Option<u32>,
    /// `dtype`, a c10 scalar type's name (`Float`, `BFloat16`).
    pub dtype: Option<String>,
    /// `Process Group Name`.
    pub process_group: Option<String>,
    /// `Process Group Ranks`, read from its text (`"[0, 1]"`) or list.
    pub ranks: Option<Vec<u64>>,
}

impl CommArgs {
    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        *self == CommArgs::default()
    }
}

/// One process group of `distributedInfo.pg_config`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcessGroup {
    /// `pg_name`.
    pub name: String,
    /// `pg_size`.
    pub size: Option<u32>,
    /// `ranks`.
    pub ranks: Vec<u64>,
}

/// A device from `deviceProperties`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DeviceProps {
    /// CUDA ordinal.
    pub id: i64,
    /// Marketing name.
    pub name: String,
    /// Compute capability, major.
    pub compute_major: Option<u32>,
    /// Compute capability, minor.
    pub compute_minor: Option<u32>,
    /// SM count.
    pub num_sms: Option<u32>,
    /// Device memory, bytes.
    pub total_global_mem: Option<f64>,
    /// L2 size, bytes (newer Kineto).
    pub l2_cache_size: Option<f64>,
    /// Threads per warp: 32 on every NVIDIA GPU, 64 on AMD's CDNA GPUs (a wavefront).
    pub warp_size: Option<u32>,
}

impl DeviceProps {
    /// Whether this is an AMD GPU, traced through ROCm: Kineto then fills `computeMajor` and
    /// `computeMinor` with the gfx architecture (9 and 0 for an MI250's gfx90a), which is not a
    /// CUDA compute capability. Told by the 64-thread wavefront or the name AMD's runtime reports.
    pub fn is_amd(&self) -> bool {
        self.warp_size == Some(64) || self.name.starts_with("AMD")
    }
}

/// The events of one trace that the import uses, and counts of the rest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    pub(super) names: Vec<String>,
    /// Interned (pid, tid) pairs as text, by id.
    pub threads: Vec<String>,
    /// Per interned thread, its process (an index into [`Self::processes`]).
    pub thread_process: Vec<u32>,
    /// The processes (`pid`s, as text) of the CPU events, by id.
    pub processes: Vec<String>,
    /// `deviceProperties`.
    pub devices: Vec<DeviceProps>,
    /// `distributedInfo.rank`.
    pub rank: Option<String>,
    /// `distributedInfo.world_size`.
    pub world_size: Option<u64>,
    /// `distributedInfo.pg_config`: the process groups the trace lists.
    pub process_groups: Vec<ProcessGroup>,
    /// `distributedInfo.pg_count`: how many process groups there were (more than listed, at
    /// times).
    pub pg_count: Option<u64>,
    /// What kernels record of their collective (PyTorch 2.3 and later), by index into
    /// [`Self::kernels`], in that order ([`at`]).
    pub kernel_comm: Vec<(usize, CommArgs)>,
    /// What operators record of their collective (`record_param_comms`), by index into
    /// [`Self::ops`], in that order.
    pub op_comm: Vec<(usize, CommArgs)>,
    /// The recorded input of `nccl:*` annotations (their message, on PyTorch 2.0 and later), by
    /// index into [`Self::annotations`], in that order: an index into [`Self::inputs`].
    pub annotation_inputs: Vec<(usize, u32)>,
    /// Whether the trace has `distributedInfo` (torch.profiler writes it when
    /// `torch.distributed` is initialised).
    pub distributed: bool,
    /// The sizes of the process groups `distributedInfo.pg_config` lists.
    pub group_sizes: Vec<u64>,
    /// `kernel` events, in file order.
    pub kernels: Vec<GpuEvent>,
    /// `gpu_memcpy` events.
    pub memcpys: Vec<GpuEvent>,
    /// `gpu_memset` events.
    pub memsets: Vec<GpuEvent>,
    /// `cuda_runtime` and `cuda_driver` events.
    pub runtimes: Vec<RuntimeCall>,
    /// `cpu_op` events.
    pub ops: Vec<CpuOp>,
    /// `user_annotation` events (`record_function`, `ProfilerStep#N`).
    pub annotations: Vec<Span>,
    /// `python_function` events of `nn.Module`s (`with_modules=True`).
    pub modules: Vec<Span>,
    /// `cuda_profiler_range` events.
    pub ranges: Vec<ProfilerRange>,
    /// The distinct operator inputs ([`CpuOp::inputs`]).
    pub inputs: Vec<RecordedInputs>,
    /// Inductor's own estimates for the `cpu_op`s of its Triton kernels that carry them, by
    /// index into [`Self::ops`].
    pub estimates: BTreeMap<usize, InductorEstimate>,
    /// Flow events (`ac2g` and others); the import links through `correlation` instead.
    pub flows: u64,
    /// Every event read.
    pub events: u64,
    /// Events of categories the import does not know, by category (or phase).
    pub unknown: BTreeMap<String, u64>,
    /// Events of a category the import reads, in another phase than `X` (a kernel as an
    /// instant `i`, or as `B`/`E` pairs): not read, counted by `"{cat} events of phase …"`.
    pub other_phases: BTreeMap<String, u64>,
}

/// The entry of index `i` in a list sorted by index (what the trace keeps for a few of its
/// events: [`Trace::kernel_comm`], [`Trace::op_comm`], [`Trace::annotation_inputs`]).
pub fn at<T>(list: &[(usize, T)], i: usize) -> Option<&T> {
    let p = list.partition_point(|e| e.0 < i);
    list.get(p).filter(|e| e.0 == i).map(|e| &e.1)
}

impl Trace {
    /// An interned name.
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}
