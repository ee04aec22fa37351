//! From a parsed trace to bundle kernels: each GPU kernel linked to the operator that launched
//! it, with the operator's analytical complexity ([`crate::operators`]) and, from the CUPTI range
//! profiler, its counters read with the Nsight Compute metric table ([`crate::ncu`]).
//!
//! Links (Kineto's own): a kernel's `correlation` names the CUDA runtime call that launched it;
//! the call ran on a CPU thread inside the operator that issued it, so the operator is the
//! innermost `cpu_op` on the same thread whose time span holds the call's. (The `External id`
//! of the call names the operator too in recent Kineto versions; older ones, as in both
//! reference traces, write the correlation id there, so it is used only when the time spans
//! find nothing and it is not the correlation id itself.) Enclosing `user_annotation` ranges
//! (`record_function`, `ProfilerStep#N`) and `nn.Module` frames are found the same way.
//!
//! Each launch becomes one kernel entry of one launch, timed by its recorded duration. An
//! operator that launched one kernel gives that kernel its F and B ([`Kernel::complexity`]) and,
//! when no counter says otherwise, its FLOPs on the datapath of its input type (as `roofline
//! suite` records its kernels). An operator that launched several kernels cannot split its F
//! among them honestly: each of its kernels carries the operator call with the call's figures
//! ([`Kernel::operator`]), and [`roofline_model::analysis::group`] counts them once per operator call.
//!
//! Counters: Kineto's range profiler (`cuda_profiler_range` events, one per kernel with
//! `profiler_measure_per_kernel=True`) records no kernel events and no kernel times; the ranges'
//! time stamps only spread the ranges evenly over the profiling window (Kineto's
//! `CuptiRangeProfiler.cpp`: "the actual times do not really matter here"). A range becomes a
//! kernel only when its own counters give a time (`gpu__time_duration.sum`, or
//! `sm__cycles_elapsed.avg` with `.per_second`). Ranges are matched to the trace's kernel launch
//! calls in order when the counts agree (kernel replay serialises the launches). Without a
//! time counter, [`import_with_counters`] takes the times from a second trace of the same steps
//! ([`crate::trace::join`]).

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use crate::ncu::{self, Arch, Convention, Launch, NcuError};
use crate::operators::{
    self, Arg, Context, Derived, Dtype, ListElem, ModelConfig, NoCost, OpCost, Parallel,
    ParallelFrom, is_communication,
};
use crate::trace::calls;
use crate::trace::comm::{Collectives, CommOptions};
use crate::trace::cost::call_cost;
use crate::trace::derive;
use crate::trace::elems::Elems;
use crate::trace::inner::InnerFlops;
use crate::trace::join;
use crate::trace::link::{GRAPH_LAUNCHES, link};
use crate::trace::model::{Ns, Trace};
use crate::trace::notes::{other_phases, summary_notes};
pub use crate::trace::stats::{Coverage, Stats};
use roofline_model::bundle::{Complexity, DataSource, Device, Kernel, OperatorCall};

/// How to read counters, and what the operator rules may know beyond a call's record.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ImportOptions {
    /// Half-precision FLOP weights (as for Nsight Compute).
    pub convention: Convention,
    /// The architecture, when `deviceProperties` does not say.
    pub arch: Option<Arch>,
    /// What the job's collectives need beyond the trace (group size, GPUs per node).
    pub comm: CommOptions,
    /// The model's configuration (`--model-config`), read by the rules of operators that do
    /// not record what they need (a mixture of experts' top-k and width).
    pub model: Option<ModelConfig>,
    /// `--tensor-parallel`: the tensor parallelism, when given (else read from the trace).
    pub tensor_parallel: Option<u64>,
    /// `--expert-parallel`: the expert parallelism, when given (else none).
    pub expert_parallel: Option<u64>,
}

/// The context the operator rules are applied in: the options' model configuration, and the
/// parallelism given, else read from the trace: its `distributedInfo.world_size` when every
/// process group `pg_config` lists spans the world or one rank (pipeline and data parallelism
/// would show groups of other sizes, and are taken as none otherwise, which the rules' notes
/// say), one rank without `distributedInfo`, unknown when the groups are of several sizes.
pub(crate) fn context(trace: &Trace, opts: &ImportOptions) -> Context {
    let tensor_parallel = match (opts.tensor_parallel, trace.world_size) {
        (Some(size), _) => Some(Parallel {
            size,
            from: ParallelFrom::Given,
        }),
        (None, _) if !trace.distributed => Some(Parallel {
            size: 1,
            from: ParallelFrom::NotDistributed,
        }),
        (None, Some(w)) if w > 0 && trace.group_sizes.iter().all(|&g| g == 1 || g == w) => {
            Some(Parallel {
                size: w,
                from: ParallelFrom::WorldSize,
            })
        }
        (None, _) => None,
    };
    let expert_parallel = Some(match opts.expert_parallel {
        Some(size) => Parallel {
            size,
            from: ParallelFrom::Given,
        },
        None => Parallel {
            size: 1,
            from: ParallelFrom::Default,
        },
    });
    Context {
        model: opts.model,
        tensor_parallel,
        expert_parallel,
    }
}

/// Why a trace gave no kernels.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// Neither kernel events nor profiler ranges.
    #[error(
        "the trace has no GPU kernel events and no cuda_profiler_range events, so there is nothing to put on a roofline{}",
        if !other_phases.is_empty() {
            format!(": its kernel events are of other phases ({other_phases}), which this import does not read: it reads complete events (\"ph\": \"X\"), as torch.profiler writes them")
        } else if *cpu_ops > 0 {
            format!(": it is a CPU-only trace ({cpu_ops} cpu_op events, no GPU activity); record it with ProfilerActivity.CUDA on a machine with a GPU (docs/pytorch.md)")
        } else {
            "; record it with ProfilerActivity.CUDA on a machine with a GPU (docs/pytorch.md)".to_string()
        }
    )]
    NoKernels {
        /// The trace's `cpu_op` events (a CPU-only trace has them and nothing on a GPU).
        cpu_ops: usize,
        /// Its events of read categories in other phases, as counts (empty when none).
        other_phases: String,
    },
    /// Counter ranges, but none with a time.
    #[error(
        "the trace's {ranges} cuda_profiler_range events carry counters ({metrics}) but no kernel time: Kineto's range profiler records no kernel durations and spreads its ranges evenly over the profiling window. Add gpu__time_duration.sum (or sm__cycles_elapsed.avg and sm__cycles_elapsed.avg.per_second) to profiler_metrics, or record the same steps again without the range profiler and join the two: `roofline import TIMING_TRACE --counters THIS_TRACE` (see docs/pytorch.md)"
    )]
    CountersWithoutTime {
        /// How many ranges.
        ranges: usize,
        /// The metrics they hold.
        metrics: String,
    },
    /// The counter conversion failed.
    #[error(transparent)]
    Counters(#[from] NcuError),
    /// The caller of [`import_each`] stopped it (its own error says why).
    #[error("stopped by the caller")]
    Stopped,
    /// A join's timing trace holds no kernel events.
    #[error(
        "the timing trace has no kernel events{}: record it with ProfilerActivity.CUDA and without the range profiler (docs/pytorch.md)",
        if *ranges > 0 { format!(" (it holds {ranges} cuda_profiler_range events: is it the counter trace?)") } else { String::new() }
    )]
    JoinWithoutKernels {
        /// The timing trace's profiler ranges.
        ranges: usize,
    },
    /// A join's counter trace holds no profiler ranges.
    #[error(
        "the counter trace has no cuda_profiler_range events{}: record it with the CUPTI range profiler (docs/pytorch.md, path 2)",
        if *kernels > 0 { format!(" (it holds {kernels} kernel events: is it the timing trace?)") } else { String::new() }
    )]
    JoinWithoutRanges {
        /// The counter trace's kernel events.
        kernels: usize,
    },
    /// The ranges of a device could not be placed among the timing trace's launches.
    // The mismatch is this error's source, which the caller prints after it: not repeated here.
    #[error("device {}", device.map_or_else(|| "unknown".to_string(), |d| d.to_string()))]
    Join {
        /// The device (the ranges' `pid`).
        device: Option<i64>,
        /// Where the sequences part.
        source: join::Mismatch,
    },
}

/// Bundle pieces made from a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceImport {
    /// One kernel entry per launch.
    pub kernels: Vec<Kernel>,
    /// The devices the kernels ran on, from `deviceProperties` where listed.
    pub devices: Vec<Device>,
    /// What was done, assumed and not understood.
    pub notes: Vec<String>,
    /// Counts.
    pub stats: Stats,
}

/// The Nsight Compute name of a CUPTI range-profiler metric: `smsp__X.sum` counts the same
/// events as `sm__X.sum` (an SM's count is the sum of its four sub-partitions', and `.sum` adds
/// over the whole GPU), so the metric table's `sm__` names read them. The one place this
/// mapping is made.
pub fn ncu_metric_name(cupti: &str) -> String {
    match cupti.strip_prefix("smsp__") {
        Some(rest) if rest.ends_with(".sum") => format!("sm__{rest}"),
        _ => cupti.to_string(),
    }
}

/// CUPTI reports `gpu__time_duration` in nanoseconds; the Nsight Compute table holds seconds.
fn si_value(metric: &str, v: f64) -> f64 {
    if metric.starts_with("gpu__time_duration") {
        v * 1e-9
    } else {
        v
    }
}

/// The compute capability `deviceProperties` gives a device; none for an AMD GPU, whose
/// `computeMajor.computeMinor` is its gfx architecture ([`DeviceProps::is_amd`]).
fn device_cc(trace: &Trace, d: Option<i64>) -> Option<String> {
    let p = trace.devices.iter().find(|p| Some(p.id) == d)?;
    if p.is_amd() {
        return None;
    }
    Some(format!("{}.{}", p.compute_major?, p.compute_minor?))
}

/// Profiler range `i` as an Nsight Compute launch: its metrics under their Nsight Compute names
/// ([`ncu_metric_name`]) in SI units, its device's compute capability, so that
/// [`ncu::to_kernels`] reads it with the one metric table.
pub fn range_launch(trace: &Trace, i: usize) -> Launch {
    let r = &trace.ranges[i];
    Launch {
        id: i as u64,
        name: trace.name(r.name).to_string(),
        device: r.device.map(|d| d.to_string()),
        compute_capability: device_cc(trace, r.device),
        grid: None,
        block: None,
        metrics: r
            .metrics
            .iter()
            .map(|&(m, v)| {
                let name = ncu_metric_name(trace.name(m));
                let v = si_value(&name, v);
                (name, v)
            })
            .collect(),
        launches: 1,
        missing: BTreeSet::new(),
        at: Some(format!(
            "event {} (cuda_profiler_range {:?})",
            r.event,
            roofline_model::analysis::names::truncate(trace.name(r.name), 100)
        )),
    }
}

/// One launch's counters read with the Nsight Compute metric table: its kernel (none when the
/// table makes none of it), its notes added to `notes`.
fn counters_kernel(
    launch: &Launch,
    o: &ncu::ImportOptions,
    notes: &mut BTreeSet<String>,
) -> Result<Option<Kernel>, NcuError> {
    let imp = ncu::to_kernels(std::slice::from_ref(launch), o)?;
    notes.extend(imp.notes);
    Ok(imp.kernels.into_iter().next())
}

/// Per-operator results, computed once per operator call.
struct OpInfo {
    kernels: usize,
    /// Index into the distinct costs.
    cost: usize,
    /// What the calls recorded inside this one count of its work.
    inside: Inside,
}

/// What the calls recorded inside a call count of the work its rule describes
/// ([`crate::trace::calls::left_over`]).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Inside {
    /// Nothing: the call's F is its rule's.
    Nothing,
    /// Part of it: the call's own F is this rest.
    Part(f64),
    /// All of it: the call's own kernels get no complexity (its F is counted on theirs).
    All,
}

/// Turns a parsed trace into bundle kernels.
///
/// # Errors
/// [`ImportError`]: no kernels at all, or counter ranges without a time.
pub fn import(trace: &Trace, opts: &ImportOptions) -> Result<TraceImport, ImportError> {
    collected(|each| import_impl(trace, opts, None, each))
}

/// What an import found besides its kernels (which went, one by one, to the caller).
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The devices the kernels ran on, from `deviceProperties` where listed.
    pub devices: Vec<Device>,
    /// What was done, assumed and not understood.
    pub notes: Vec<String>,
    /// Counts.
    pub stats: Stats,
    /// False when launches were left out (profiler ranges without a time): every total then
    /// misses them.
    pub complete: bool,
}

/// An import whose kernels are collected into a [`TraceImport`].
fn collected(
    run: impl FnOnce(&mut dyn FnMut(Kernel) -> bool) -> Result<Summary, ImportError>,
) -> Result<TraceImport, ImportError> {
    let mut kernels = Vec::new();
    let s = run(&mut |k| {
        kernels.push(k);
        true
    })?;
    Ok(TraceImport {
        kernels,
        devices: s.devices,
        notes: s.notes,
        stats: s.stats,
    })
}

/// [`import`], or with `counters` [`import_with_counters`], handing each kernel entry to `each`
/// as it is made instead of collecting them: a trace of a million launches never holds its
/// bundle's kernels in memory. `each` returns false to stop ([`ImportError::Stopped`]).
///
/// # Errors
/// As [`import`] and [`import_with_counters`]; [`ImportError::Stopped`].
pub fn import_each(
    trace: &Trace,
    counters: Option<&Trace>,
    opts: &ImportOptions,
    each: &mut dyn FnMut(Kernel) -> bool,
) -> Result<Summary, ImportError> {
    match counters {
        None => import_impl(trace, opts, None, each),
        Some(c) => with_counters(trace, c, opts, each),
    }
}

/// The devices a trace's launches ran on (kernel events, or profiler ranges when it has none),
/// as [`import`] names them: before any kernel is made, so that a bundle can be written from its
/// start as they come. A device listed here may end with no kernel entry (its only launches had
/// no time), never the other way round.
pub fn launch_devices(trace: &Trace) -> Vec<Device> {
    let used: BTreeSet<i64> = if trace.kernels.is_empty() {
        trace.ranges.iter().filter_map(|r| r.device).collect()
    } else {
        trace.kernels.iter().filter_map(|g| g.device).collect()
    };
    devices(trace, used, &mut BTreeSet::new())
}

/// How many of a trace's profiler ranges the import leaves out for want of a time counter
/// (a trace without kernel events, read from its ranges): known before any kernel is made, so
/// that a streamed bundle can say from its start that it is incomplete.
pub fn untimed_ranges(trace: &Trace) -> usize {
    if !trace.kernels.is_empty() {
        return 0;
    }
    let o = ncu::ImportOptions {
        convention: Convention::Current,
        arch: None,
        source: DataSource::Import,
    };
    (0..trace.ranges.len())
        .filter(|&i| {
            matches!(
                ncu::to_kernels(std::slice::from_ref(&range_launch(trace, i)), &o),
                Err(NcuError::NoTime { .. } | NcuError::NoPositiveTime { .. })
            )
        })
        .count()
}

/// Counters for a timing trace's kernel events, from a range-profiler trace.
struct Joined<'a> {
    /// The counter trace.
    counters: &'a Trace,
    /// Per kernel event of the timing trace, its range in `counters`.
    range_of: Vec<Option<usize>>,
}

/// Turns a timing trace (kernel events with their times, operators and shapes) into bundle
/// kernels as [`import`] does, each launch that the counter trace's CUPTI range profiler measured
/// carrying that range's counters (FLOPs per precision, bytes per level, with the Nsight Compute
/// metric table) and keeping its own measured time ([`crate::trace::join`]: the ranges are placed
/// among the launches, per device in launch order, by kernel name).
///
/// # Errors
/// [`ImportError::JoinWithoutKernels`], [`ImportError::JoinWithoutRanges`],
/// [`ImportError::Join`] (the sequences part), and [`import`]'s own.
pub fn import_with_counters(
    timing: &Trace,
    counters: &Trace,
    opts: &ImportOptions,
) -> Result<TraceImport, ImportError> {
    collected(|each| with_counters(timing, counters, opts, each))
}

fn with_counters(
    timing: &Trace,
    counters: &Trace,
    opts: &ImportOptions,
    each: &mut dyn FnMut(Kernel) -> bool,
) -> Result<Summary, ImportError> {
    if timing.kernels.is_empty() {
        return Err(ImportError::JoinWithoutKernels {
            ranges: timing.ranges.len(),
        });
    }
    if counters.ranges.is_empty() {
        return Err(ImportError::JoinWithoutRanges {
            kernels: counters.kernels.len(),
        });
    }
    let links = link(timing);
    let mut range_of = vec![None; timing.kernels.len()];
    let mut notes = Vec::new();
    let devices: BTreeSet<Option<i64>> = counters.ranges.iter().map(|r| r.device).collect();
    for device in devices {
        let ranges: Vec<usize> = (0..counters.ranges.len())
            .filter(|&i| counters.ranges[i].device == device)
            .collect();
        let order = join::launch_order(timing, &links.launch_rt, device);
        let range_names: Vec<&str> = ranges
            .iter()
            .map(|&i| counters.name(counters.ranges[i].name))
            .collect();
        let launch_names: Vec<&str> = order
            .iter()
            .map(|&i| timing.name(timing.kernels[i].name))
            .collect();
        let a = join::align(&range_names, &launch_names)
            .map_err(|source| ImportError::Join { device, source })?;
        for (j, &r) in ranges.iter().enumerate() {
            range_of[order[a.offset + j]] = Some(r);
        }
        notes.push(format!(
            "counters from the range profiler's trace: device {}: its {} ranges are launches {} to {} of the timing trace's {} on that device, in launch order, every kernel name agreeing{}{}; each keeps its time from the timing trace",
            device.map_or_else(|| "unknown".to_string(), |d| d.to_string()),
            ranges.len(),
            a.offset + 1,
            a.offset + ranges.len(),
            order.len(),
            if a.unnamed > 0 {
                format!(" ({} ranges Kineto left unnamed, paired by position)", a.unnamed)
            } else {
                String::new()
            },
            if a.also_fits > 0 {
                format!(
                    "; the same sequence also fits {} later offsets (repeated steps): the first is used",
                    a.also_fits
                )
            } else {
                String::new()
            },
        ));
    }
    let mut imp = import_impl(timing, opts, Some(&Joined { counters, range_of }), each)?;
    imp.notes.extend(notes);
    Ok(imp)
}

fn import_impl(
    trace: &Trace,
    opts: &ImportOptions,
    joined: Option<&Joined<'_>>,
    each: &mut dyn FnMut(Kernel) -> bool,
) -> Result<Summary, ImportError> {
    let mut notes: BTreeSet<String> = BTreeSet::new();
    let mut stats = Stats::default();
    let links = link(trace);
    notes.extend(links.notes.iter().cloned());
    let from_ranges = links.from_ranges;
    let steps = Steps::of(trace);
    let parents = derive::parents(trace);
    let collectives = if from_ranges {
        Collectives::default()
    } else {
        Collectives::of(trace, &links, &parents, &opts.comm)
    };
    notes.extend(collectives.notes.iter().cloned());
    let derived = derive::derive(trace, &parents);
    let ctx = context(trace, opts);
    let costs = OpCosts::of(
        trace,
        &links.launch_op,
        from_ranges,
        (&parents, &derived, &ctx),
        &mut stats,
    );
    stats.duplicates = derive::duplicates(trace, &parents);

    // Kernel entries, handed out one by one.
    let mut used_devices: BTreeSet<i64> = BTreeSet::new();
    let mut untimed = 0usize;
    let mut inductor = false;
    let n = if from_ranges {
        trace.ranges.len()
    } else {
        trace.kernels.len()
    };
    let whole_us = trace.kernels.iter().all(|g| g.dur_us.fract() == 0.0);
    let resolution_us = if whole_us { 1.0 } else { 1e-3 };
    let launches = Launches {
        trace,
        resolution_us,
        joined,
        from_ranges,
        counter_opts: ncu::ImportOptions {
            convention: opts.convention,
            arch: opts.arch,
            source: DataSource::Import,
        },
    };
    for i in 0..n {
        let Some((mut k, device)) = launches.kernel(i, &mut stats, &mut untimed, &mut notes)?
        else {
            continue;
        };
        if let Some(d) = device {
            used_devices.insert(d);
            k.device = Some(d.to_string());
        }
        if let Some(r) = &trace.rank {
            k.tags.insert("rank".into(), r.clone());
        }
        stats.launches += 1;
        stats.time_s += k.time.total_s;
        match links.launch_rt[i] {
            None if links.ambiguous[i] => stats.ambiguous += 1,
            None => stats.no_launch_call += 1,
            Some(r) => {
                if GRAPH_LAUNCHES.contains(&trace.name(trace.runtimes[r].name)) {
                    stats.graph_replayed += 1;
                }
                if let Some(a) = links.rt_ann[r] {
                    k.nvtx_range = Some(trace.name(trace.annotations[a].name).to_string());
                }
                if let Some(m) = links.rt_mod[r] {
                    let name = trace.name(trace.modules[m].name);
                    let name = name.strip_prefix("nn.Module: ").unwrap_or(name);
                    k.tags.insert("module".into(), name.to_string());
                }
                if let Some(s) = steps.at(trace.runtimes[r].ts) {
                    k.tags.insert("step".into(), trace.name(s).to_string());
                }
            }
        }
        if let Some(o) = links.launch_op[i] {
            stats.linked += 1;
            inductor |= costs.link(trace, o, &mut k, &mut stats);
        }
        if let Some(c) = crate::trace::model::at(&collectives.by_kernel, i) {
            k.collective = Some(c.clone());
        }
        stats.coverage.add(&k);
        if !each(k) {
            return Err(ImportError::Stopped);
        }
    }

    if stats.launches == 0 {
        return Err(if from_ranges && untimed > 0 {
            let metrics: BTreeSet<&str> = trace
                .ranges
                .iter()
                .flat_map(|r| r.metrics.iter().map(|&(m, _)| trace.name(m)))
                .collect();
            ImportError::CountersWithoutTime {
                ranges: trace.ranges.len(),
                metrics: metrics.into_iter().collect::<Vec<_>>().join(", "),
            }
        } else {
            ImportError::NoKernels {
                cpu_ops: trace.ops.len(),
                other_phases: other_phases(trace),
            }
        });
    }
    summary_notes(
        trace,
        &mut stats,
        (costs.estimated, &costs.assumed),
        (from_ranges, resolution_us),
        inductor,
        untimed,
        &mut notes,
    );
    let devices = devices(trace, used_devices, &mut notes);
    Ok(Summary {
        devices,
        notes: notes.into_iter().collect(),
        stats,
        complete: untimed == 0,
    })
}

/// The `ProfilerStep#N` annotations of any thread, by time.
struct Steps(Vec<(Ns, Ns, u32)>);

impl Steps {
    fn of(trace: &Trace) -> Self {
        let mut steps: Vec<(Ns, Ns, u32)> = trace
            .annotations
            .iter()
            .filter(|a| trace.name(a.name).starts_with("ProfilerStep#"))
            .map(|a| (a.ts, a.end, a.name))
            .collect();
        steps.sort_unstable();
        Steps(steps)
    }

    /// The step under way at `t`.
    fn at(&self, t: Ns) -> Option<u32> {
        let i = self.0.partition_point(|s| s.0 <= t);
        (i > 0 && self.0[i - 1].1 >= t).then(|| self.0[i - 1].2)
    }
}

/// Every called operator's cost: computed once per distinct (name, recorded inputs), as a
/// training loop calls the same operator on the same shapes step after step.
struct OpCosts {
    /// Per operator call (index into `trace.ops`): its kernels and its cost.
    op_info: FxHashMap<usize, OpInfo>,
    /// The distinct costs.
    costs: Vec<Result<OpCost, NoCost>>,
    /// Calls whose cost is Inductor's own estimate.
    estimated: usize,
    /// What the rules assumed, `operator: assumption` → calls.
    assumed: BTreeMap<String, usize>,
}

impl OpCosts {
    fn of(
        trace: &Trace,
        launch_op: &[Option<usize>],
        from_ranges: bool,
        (parents, derived, ctx): (&[Option<usize>], &FxHashMap<usize, Derived>, &Context),
        stats: &mut Stats,
    ) -> Self {
        let mut op_info: FxHashMap<usize, OpInfo> = FxHashMap::default();
        let kernel_name = |l: usize| {
            if from_ranges {
                trace.ranges[l].name
            } else {
                trace.kernels[l].name
            }
        };
        // Each linked call's launches, in the order of their first.
        let mut order: Vec<usize> = Vec::new();
        let mut launches: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
        for (l, &o) in launch_op
            .iter()
            .enumerate()
            .filter_map(|(l, o)| Some((l, o.as_ref()?)))
        {
            launches
                .entry(o)
                .or_insert_with(|| {
                    order.push(o);
                    Vec::new()
                })
                .push(l);
        }
        let elems = Elems::of(trace, &order, &launches, kernel_name, stats);
        type CostKey = (
            u32,
            Option<u32>,
            Option<ListElem>,
            Option<[u64; 2]>,
            Option<Derived>,
            Option<Dtype>,
        );
        let mut cost_ids: FxHashMap<CostKey, usize> = FxHashMap::default();
        let mut estimated = 0usize;
        let mut costs: Vec<Result<OpCost, NoCost>> = Vec::new();
        let mut assumed: BTreeMap<String, usize> = BTreeMap::new();
        let mut inner = InnerFlops::new(trace, parents, derived, &elems, ctx);
        for &o in &order {
            let l = launches[&o][0];
            let op = &trace.ops[o];
            // Tensor lists are recorded without a type: their first kernel's name gives it.
            let list_elem = op
                .inputs
                .map(|i| &trace.inputs[i as usize].inputs)
                .filter(|x| x.args.iter().any(|a| matches!(a, Arg::Tensors(_))))
                .and_then(|_| operators::kernel_elem(trace.name(kernel_name(l))));
            let elem = elems.of.get(&o).copied();
            let estimate = trace.estimates.get(&o);
            let bits = |x: Option<f64>| x.map_or(u64::MAX, f64::to_bits);
            let key = (
                op.name,
                op.inputs,
                list_elem,
                estimate.map(|e| [bits(e.flops), bits(e.bytes)]),
                derived.get(&o).cloned(),
                elem,
            );
            let cost = *cost_ids.entry(key).or_insert_with(|| {
                costs.push(call_cost(trace, o, (list_elem, derived.get(&o), elem), ctx));
                costs.len() - 1
            });
            if estimate.is_some() && costs[cost].is_ok() {
                estimated += 1;
            }
            let name = trace.name(op.name);
            let mut inside = Inside::Nothing;
            match &costs[cost] {
                Ok(c) => {
                    for a in &c.assumed {
                        *assumed.entry(format!("{name}: {a}")).or_default() += 1;
                    }
                    if let Some(d) = derived.get(&o).and_then(|d| d.output_from.as_ref()) {
                        *stats.conv_outputs.entry(d.clone()).or_default() += 1;
                    }
                    let within = inner.inside(o);
                    if within > 0.0 {
                        inside = match calls::left_over(c.complexity.flops, within) {
                            Some(rest) => Inside::Part(rest),
                            None => Inside::All,
                        };
                        let which = match inside {
                            Inside::Part(_) => &mut stats.left_over,
                            _ => &mut stats.counted_inside,
                        };
                        *which.entry(name.to_string()).or_default() += 1;
                    }
                }
                Err(_) if elems.untyped.contains(&o) => {
                    *stats.untyped.entry(name.to_string()).or_default() += 1;
                    stats.untyped_flops += inner.own(o);
                }
                Err(NoCost::NoRule) if is_communication(name) => {
                    // A collective's message: the tensor it is called on.
                    let message = op.inputs.map_or(0.0, |i| {
                        trace.inputs[i as usize]
                            .inputs
                            .args
                            .iter()
                            .find(|a| matches!(a, Arg::Tensor(..)))
                            .map_or(0.0, Arg::bytes)
                    });
                    *stats
                        .communication_bytes
                        .entry(name.to_string())
                        .or_default() += message;
                }
                Err(_) => {}
            }
            op_info.insert(
                o,
                OpInfo {
                    kernels: launches[&o].len(),
                    cost,
                    inside,
                },
            );
        }
        OpCosts {
            op_info,
            costs,
            estimated,
            assumed,
        }
    }

    /// Links kernel `k` to operator call `o`: the call and, where a rule gave them, its F and B
    /// (a one-kernel call's also as the kernel's own). Counts the link in `stats`; true when the
    /// cost is an Inductor rule's.
    fn link(&self, trace: &Trace, o: usize, k: &mut Kernel, stats: &mut Stats) -> bool {
        let op = &trace.ops[o];
        let name = trace.name(op.name);
        let info = &self.op_info[&o];
        let mut call = OperatorCall {
            name: name.to_string(),
            call: o as u64,
            kernels: info.kernels as u64,
            shapes: op
                .inputs
                .map(|i| truncate(&trace.inputs[i as usize].dims_text, 240)),
            complexity: None,
            rule: None,
        };
        let mut inductor = false;
        match &self.costs[info.cost] {
            // The calls inside it count all its work: its own kernels get none of it.
            Ok(_) if info.inside == Inside::All => {}
            Ok(c) => {
                stats.with_complexity += 1;
                inductor = c.family == operators::Family::Inductor;
                // F on the datapath of the call's input type; the kernel's FLOPs stay its
                // counters' (none without counters), never F.
                let flops = match info.inside {
                    Inside::Part(rest) => rest,
                    _ => c.complexity.flops,
                };
                let complexity = Complexity {
                    datapath: Some(c.datapath),
                    flops,
                    ..c.complexity
                };
                call.complexity = Some(complexity);
                call.rule = Some(c.family.key().to_string());
                if info.kernels == 1 {
                    k.complexity = Some(complexity);
                }
            }
            Err(NoCost::NoRule) => {
                let by_kind = if is_communication(name) {
                    &mut stats.communication
                } else {
                    &mut stats.no_rule
                };
                *by_kind.entry(name.to_string()).or_default() += 1;
            }
            Err(NoCost::Shapes(why)) => {
                let key = (name.to_string(), why.clone());
                *stats.no_shapes.entry(key).or_default() += 1;
            }
        }
        k.operator = Some(call);
        inductor
    }
}

/// What turns one launch (a kernel event, or a range of the range profiler) into a kernel entry.
struct Launches<'a> {
    trace: &'a Trace,
    /// The trace's time resolution, µs: 1 when every kernel duration is a whole number of
    /// microseconds (Kineto's default), else 0.001 (nanosecond timestamps).
    resolution_us: f64,
    joined: Option<&'a Joined<'a>>,
    from_ranges: bool,
    counter_opts: ncu::ImportOptions,
}

impl Launches<'_> {
    /// Launch `i` as a kernel entry with its device, `None` when it has none to give (no time,
    /// counted in `stats` or `untimed`).
    fn kernel(
        &self,
        i: usize,
        stats: &mut Stats,
        untimed: &mut usize,
        notes: &mut BTreeSet<String>,
    ) -> Result<Option<(Kernel, Option<i64>)>, ImportError> {
        let (trace, joined, counter_opts) = (self.trace, self.joined, &self.counter_opts);
        Ok(Some(if self.from_ranges {
            let r = &trace.ranges[i];
            match counters_kernel(&range_launch(trace, i), counter_opts, notes) {
                Ok(Some(k)) => (k, r.device),
                Ok(None) => return Ok(None),
                Err(NcuError::NoTime { .. } | NcuError::NoPositiveTime { .. }) => {
                    *untimed += 1;
                    return Ok(None);
                }
                Err(e) => return Err(e.into()),
            }
        } else {
            let g = &trace.kernels[i];
            // A launch shorter than the trace's resolution is recorded as 0: it ran, so it is
            // kept (its launch counts in the launch bound), timed at half the resolution.
            let dur_us = if g.dur_us > 0.0 {
                g.dur_us
            } else {
                stats.zero_time += 1;
                self.resolution_us / 2.0
            };
            let timed_only = || Kernel::new(trace.name(g.name), dur_us * 1e-6, DataSource::Import);
            let ranged = joined.and_then(|j| j.range_of[i].map(|r| (j.counters, r)));
            let mut k = match ranged {
                Some((counters, r)) => {
                    // The range's counters, with this launch's name and measured time (its
                    // grid and block are set below, as for every launch).
                    let mut launch = range_launch(counters, r);
                    launch.name = trace.name(g.name).to_string();
                    launch
                        .metrics
                        .insert(ncu::metrics::time::DURATION.to_string(), dur_us * 1e-6);
                    if launch.compute_capability.is_none() {
                        launch.compute_capability = device_cc(trace, g.device);
                    }
                    stats.with_counters += 1;
                    counters_kernel(&launch, counter_opts, notes)?.unwrap_or_else(timed_only)
                }
                None => timed_only(),
            };
            k.grid = g.grid;
            k.block = g.block;
            if let Some(s) = g.stream {
                k.tags.insert("stream".into(), s.to_string());
            }
            (k, g.device)
        }))
    }
}

/// The devices the kernels ran on, from `deviceProperties` (AMD GPUs noted: their
/// `computeMajor` and `computeMinor` are a gfx architecture).
fn devices(trace: &Trace, used: BTreeSet<i64>, notes: &mut BTreeSet<String>) -> Vec<Device> {
    let mut amd = Vec::new();
    let devices = used
        .into_iter()
        .map(|d| {
            let id = d.to_string();
            match trace.devices.iter().find(|p| p.id == d) {
                Some(p) => {
                    if p.is_amd() {
                        amd.push(match (p.compute_major, p.compute_minor) {
                            (Some(a), Some(b)) => format!("{id} ({}, gfx {a}.{b})", p.name),
                            _ => format!("{id} ({})", p.name),
                        });
                    }
                    let mut dev = Device::new(id, p.name.clone());
                    dev.compute_capability = device_cc(trace, Some(d));
                    dev.sm_count = p.num_sms;
                    dev.memory_bytes = p.total_global_mem.filter(|m| *m > 0.0);
                    dev.l2_bytes = p.l2_cache_size.filter(|m| *m > 0.0);
                    dev
                }
                None => Device::new(id.clone(), format!("GPU {id}")),
            }
        })
        .collect();
    if !amd.is_empty() {
        notes.insert(format!(
            "AMD GPU (a ROCm trace): device {}; its computeMajor and computeMinor are a gfx architecture, not a CUDA compute capability, so none is given, and its SM count is its compute units. The kernels' times and the operators' F and B hold as on any GPU; measure its ceilings with AMD's tools, as `roofline machine` measures NVIDIA GPUs only",
            amd.join(", ")
        ));
    }
    devices
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse;
    use roofline_model::bundle::Datapath;

    /// The operator call a kernel was linked to.
    fn op(k: &Kernel) -> &OperatorCall {
        k.operator.as_ref().expect("a linked operator")
    }

    fn ev(cat: &str, name: &str, tid: u32, ts: f64, dur: f64, args: &str) -> String {
        format!(
            r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 1, "tid": {tid}, "ts": {ts}, "dur": {dur}, "args": {{{args}}}}}"#
        )
    }

    /// A launch call on thread 1 at `ts` (5 µs) by `call`, and its kernel on stream 7 of
    /// `device` 8 µs later (2 µs), linked by `correlation`; `extra` adds kernel arguments.
    fn launched(
        call: &str,
        correlation: u32,
        ts: f64,
        kernel: &str,
        device: u32,
        extra: &str,
    ) -> [String; 2] {
        let cat = if call.starts_with("cu") && !call.starts_with("cuda") {
            "cuda_driver"
        } else {
            "cuda_runtime"
        };
        [
            ev(
                cat,
                call,
                1,
                ts,
                5.0,
                &format!(r#""correlation": {correlation}"#),
            ),
            ev(
                "kernel",
                kernel,
                7,
                ts + 8.0,
                2.0,
                &format!(r#""device": {device}, "correlation": {correlation}{extra}"#),
            ),
        ]
    }

    /// The import of a trace of these events alone.
    fn import_events(events: &[String]) -> TraceImport {
        let text = format!(r#"{{"traceEvents": [{}]}}"#, events.join(","));
        import(&parse(text.as_bytes()).unwrap(), &ImportOptions::default()).unwrap()
    }

    /// The summary note of what was not understood.
    fn summary(imp: &TraceImport) -> &str {
        imp.notes
            .iter()
            .find(|n| n.starts_with("not understood"))
            .expect("a summary note")
    }

    /// A hand-made trace: a linear layer (addmm, one kernel) inside a step and a module, a
    /// layer norm with two kernels, an unknown operator and a kernel with no operator.
    fn trace() -> Trace {
        let events = [
            ev("user_annotation", "ProfilerStep#4", 1, 0.0, 1000.0, ""),
            ev("python_function", "nn.Module: Linear_0", 1, 5.0, 100.0, ""),
            ev(
                "cpu_op",
                "aten::linear",
                1,
                10.0,
                80.0,
                r#""Input Dims": [[8, 6], [5, 6], [5]], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]"#,
            ),
            ev(
                "cpu_op",
                "aten::addmm",
                1,
                20.0,
                60.0,
                r#""Input Dims": [[5], [8, 6], [6, 5], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
            ),
            ev(
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                30.0,
                5.0,
                r#""correlation": 1, "External id": 1"#,
            ),
            ev(
                "kernel",
                "gemm_bf16",
                7,
                40.0,
                3.0,
                r#""device": 0, "stream": 7, "correlation": 1"#,
            ),
            ev(
                "cpu_op",
                "aten::native_layer_norm",
                1,
                200.0,
                50.0,
                r#""Input Dims": [[8, 5], [], [5], [5], []], "Input type": ["float", "", "float", "float", "Scalar"]"#,
            ),
            ev(
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                210.0,
                5.0,
                r#""correlation": 2"#,
            ),
            ev(
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                220.0,
                5.0,
                r#""correlation": 3"#,
            ),
            ev(
                "kernel",
                "ln_stats",
                7,
                230.0,
                2.0,
                r#""device": 0, "correlation": 2"#,
            ),
            ev(
                "kernel",
                "ln_apply",
                7,
                233.0,
                4.0,
                r#""device": 0, "correlation": 3"#,
            ),
            ev("cpu_op", "fbgemm::magic", 1, 300.0, 50.0, ""),
            ev(
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                310.0,
                5.0,
                r#""correlation": 4"#,
            ),
            ev(
                "kernel",
                "magic_kernel",
                7,
                320.0,
                1.0,
                r#""device": 0, "correlation": 4"#,
            ),
            ev(
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                2000.0,
                5.0,
                r#""correlation": 5"#,
            ),
            ev(
                "kernel",
                "orphan",
                7,
                2010.0,
                1.5,
                r#""device": 0, "correlation": 5"#,
            ),
            ev(
                "gpu_memcpy",
                "Memcpy HtoD",
                7,
                2100.0,
                2.0,
                r#""device": 0, "bytes": 1024"#,
            ),
        ];
        let text = format!(
            r#"{{"traceEvents": [{}], "deviceProperties": [{{"id": 0, "name": "NVIDIA H100", "computeMajor": 9, "computeMinor": 0, "numSms": 132}}], "distributedInfo": {{"rank": 2}}}}"#,
            events.join(",")
        );
        parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn links_kernels_to_operators_steps_and_modules() {
        let t = trace();
        let imp = import(&t, &ImportOptions::default()).unwrap();
        assert_eq!(imp.kernels.len(), 5);
        assert_eq!(imp.stats.launches, 5);
        assert_eq!(imp.stats.linked, 4);
        let gemm = &imp.kernels[0];
        assert_eq!(op(gemm).name, "aten::addmm");
        assert_eq!(gemm.tags["step"], "ProfilerStep#4");
        assert_eq!(gemm.tags["module"], "Linear_0");
        assert_eq!(gemm.tags["rank"], "2");
        assert_eq!(gemm.nvtx_range.as_deref(), Some("ProfilerStep#4"));
        assert_eq!(gemm.time.total_s, 3e-6);
        // addmm 8×6 by 6×5: F = 2·8·5·6, on Tensor BF16; B = (48 + 30 + 40 + 5)·2.
        let c = gemm.complexity.unwrap();
        assert_eq!(c.flops, 480.0);
        assert_eq!(c.bytes, 2.0 * 123.0);
        assert_eq!(c.datapath, Some(Datapath::TensorBf16));
        // No counters: the kernel's FLOPs are unknown, not F.
        assert!(gemm.flops.is_unknown());
        // The two layer-norm kernels share their operator's figures, per operator only.
        let (a, b) = (&imp.kernels[1], &imp.kernels[2]);
        assert_eq!(op(a).call, op(b).call);
        assert_eq!(op(a).kernels, 2);
        assert_eq!(op(a).complexity.map(|c| c.flops), Some(8.0 * 40.0));
        assert!(a.complexity.is_none() && a.flops.is_unknown());
        // Not understood, in one note.
        let summary: Vec<&String> = imp
            .notes
            .iter()
            .filter(|n| n.starts_with("not understood"))
            .collect();
        assert_eq!(summary.len(), 1);
        assert!(summary[0].contains("1 of 5 kernel launches have no operator"));
        assert!(summary[0].contains("fbgemm::magic ×1"));
        assert!(imp.notes.iter().any(|n| n.contains("1 memcpy (1024 bytes")));
        assert_eq!(imp.devices.len(), 1);
        assert_eq!(imp.devices[0].compute_capability.as_deref(), Some("9.0"));
        assert_eq!(imp.devices[0].sm_count, Some(132));
    }

    /// Kernels without an operator are told apart: one launched before the window opened (its
    /// launch call is not in the trace, as in HTA's sampled training traces), one launched
    /// outside any operator.
    #[test]
    fn unlinked_kernels_say_why() {
        let mut events = vec![ev(
            "kernel",
            "early",
            7,
            1.0,
            2.0,
            r#""device": 0, "correlation": 1"#,
        )];
        events.extend(launched("cudaLaunchKernel", 2, 10.0, "bare", 0, ""));
        let imp = import_events(&events);
        assert_eq!((imp.stats.linked, imp.stats.no_launch_call), (0, 1));
        let summary = summary(&imp);
        assert!(
            summary.contains("2 of 2 kernel launches have no operator (1 whose launch call is not in the trace, as for kernels launched before the profiling window opened while the GPU ran behind the CPU, and 1 with no cpu_op around their launch call)"),
            "{summary}"
        );
    }

    /// A collective's NCCL kernel is listed as communication, not as an operator without a rule;
    /// kernels replayed from a CUDA graph are counted apart too.
    #[test]
    fn collectives_and_graph_replays_are_listed_apart() {
        let mut events = vec![ev(
            "cpu_op",
            "record_param_comms",
            1,
            10.0,
            30.0,
            r#""Collective name": "allreduce", "In msg nelems": 2049000, "dtype": "Float""#,
        )];
        events.extend(launched(
            "cudaLaunchKernel",
            1,
            12.0,
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            0,
            "",
        ));
        // A graph of two kernels replayed under a compiled function.
        events.push(ev("cpu_op", "CompiledFunction", 1, 100.0, 50.0, ""));
        events.extend(launched(
            "cudaGraphLaunch",
            2,
            110.0,
            "triton_poi_fused_0",
            0,
            "",
        ));
        events.push(ev(
            "kernel",
            "triton_poi_fused_1",
            7,
            121.0,
            2.0,
            r#""device": 0, "correlation": 2"#,
        ));
        let imp = import_events(&events);
        assert_eq!(imp.stats.graph_replayed, 2);
        assert_eq!(op(&imp.kernels[2]).name, "CompiledFunction");
        assert_eq!(imp.stats.communication.get("record_param_comms"), Some(&1));
        assert_eq!(imp.stats.no_rule.get("CompiledFunction"), Some(&2));
        let summary = summary(&imp);
        assert!(
            summary.contains("2 kernel launches replayed from CUDA graphs"),
            "{summary}"
        );
        assert!(
            summary.contains("placed against those links (see the collectives' note) (kernel launches): record_param_comms ×1"),
            "{summary}"
        );
        // The NCCL kernel carries its collective: an all-reduce of 2,049,000 floats, its group
        // unknown (no Group size, no distributedInfo).
        let c = imp.kernels[0].collective.as_ref().unwrap();
        assert_eq!(c.kind, roofline_model::bundle::CollectiveKind::AllReduce);
        assert_eq!(c.recorded.as_deref(), Some("allreduce"));
        assert_eq!(c.bytes, Some(2_049_000.0 * 4.0));
        assert_eq!((c.group_size, c.scope, c.sequence), (None, None, Some(0)));
        // Nothing else ran on the device: all of it is exposed.
        assert_eq!(c.exposed_s, Some(imp.kernels[0].time.total_s));
        assert!(
            imp.notes
                .iter()
                .any(|n| n.starts_with("collectives: 1 NCCL kernel launches")
                    && n.contains("without a group size")),
            "{:?}",
            imp.notes
        );
        assert!(imp.kernels[1].collective.is_none());
    }

    /// The note on the kernel time with F and B: the collectives' kernels (an operator's, and
    /// NCCL's with no operator) left out, the rest named with its share; the collectives'
    /// messages recorded apart.
    #[test]
    fn the_share_of_kernel_time_with_f_and_b_is_noted() {
        let mut events = vec![ev(
            "cpu_op",
            "aten::mm",
            1,
            10.0,
            30.0,
            r#""Input Dims": [[8, 6], [6, 5]], "Input type": ["float", "float"]"#,
        )];
        // 2 µs each: the product (F and B), an operator without a rule, a vLLM all-reduce
        // of [4, 8] BF16, and an NCCL kernel no operator launched.
        events.extend(launched("cudaLaunchKernel", 1, 12.0, "gemm", 0, ""));
        events.push(ev("cpu_op", "fbgemm::magic", 1, 100.0, 30.0, ""));
        events.extend(launched("cudaLaunchKernel", 2, 102.0, "magic", 0, ""));
        events.push(ev(
            "cpu_op",
            "vllm::all_reduce",
            1,
            200.0,
            30.0,
            r#""Input Dims": [[4, 8], []], "Input type": ["c10::BFloat16", ""]"#,
        ));
        events.extend(launched(
            "cudaLaunchKernel",
            3,
            202.0,
            "all_reduce_kernel",
            0,
            "",
        ));
        events.extend(launched(
            "cudaLaunchKernel",
            4,
            300.0,
            "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            0,
            "",
        ));
        let imp = import_events(&events);
        let c = &imp.stats.coverage;
        assert_eq!(c.share(), Some(0.5));
        assert_eq!(c.communication_s, 4e-6);
        assert_eq!(
            imp.stats.communication_bytes.get("vllm::all_reduce"),
            Some(&64.0)
        );
        let note = imp
            .notes
            .iter()
            .find(|n| n.starts_with("F and B for"))
            .expect("a coverage note");
        assert_eq!(
            note,
            "F and B for 50.0 % of the kernel time outside the collectives (0.002 ms of 0.004 ms); the collectives' kernels (0.004 ms) are left out of it; the rest, without: fbgemm::magic ×1 (0.002 ms, 50.0 %)"
        );
        assert!(
            imp.notes
                .iter()
                .any(|n| n.contains("kept out of the roofline")
                    && n.contains("vllm::all_reduce 64 bytes")),
            "{:?}",
            imp.notes
        );
    }

    /// The tensor parallelism the rules are given: `--tensor-parallel`, else the trace's world
    /// size when its process groups span the world or one rank, one rank without
    /// `distributedInfo`, unknown otherwise.
    #[test]
    fn the_parallelism_comes_from_the_options_or_the_trace() {
        let with = |info: &str| {
            let text = format!(
                r#"{{"traceEvents": [{}]{info}}}"#,
                launched("cudaLaunchKernel", 1, 1.0, "k", 0, "").join(",")
            );
            parse(text.as_bytes()).unwrap()
        };
        let tp = |t: &Trace, o: &ImportOptions| context(t, o).tensor_parallel;
        let none = ImportOptions::default();
        let eight = with(
            r#", "distributedInfo": {"rank": 0, "world_size": 8, "pg_config": [{"pg_size": 8}, {"pg_size": 1}]}"#,
        );
        assert_eq!(
            tp(&eight, &none),
            Some(Parallel {
                size: 8,
                from: ParallelFrom::WorldSize
            })
        );
        let mixed = with(
            r#", "distributedInfo": {"world_size": 8, "pg_config": [{"pg_size": 8}, {"pg_size": 4}]}"#,
        );
        assert_eq!(tp(&mixed, &none), None);
        let given = ImportOptions {
            tensor_parallel: Some(4),
            ..none
        };
        assert_eq!(tp(&mixed, &given).map(|p| p.size), Some(4));
        assert_eq!(
            tp(&with(""), &none),
            Some(Parallel {
                size: 1,
                from: ParallelFrom::NotDistributed
            })
        );
        let ep = context(&eight, &none).expert_parallel.unwrap();
        assert_eq!((ep.size, ep.from), (1, ParallelFrom::Default));
    }

    /// SYNTHETIC, shaped as PyTorch 2.5 records a `torch.compile`d function (HTA's public
    /// `triton_example` trace): the Inductor kernel's `cpu_op`, named after it, holds its
    /// grid as text and its buffers as inputs; the launch is a driver call (`cuLaunchKernel`).
    #[test]
    fn inductor_kernels_get_their_buffers_bytes() {
        let mut events = vec![
            ev("cpu_op", "Torch-Compiled Region: 0/0", 1, 0.0, 100.0, ""),
            ev(
                "cpu_op",
                "triton_poi_fused_add_cos_sin_0",
                1,
                10.0,
                50.0,
                r#""grid": "grid(100,)", "kernel_backend": "triton", "Input Dims": [[10, 10], [10, 10], [10, 10], []], "Input type": ["float", "float", "float", "Scalar"], "Concrete Inputs": ["", "", "", "100"]"#,
            ),
        ];
        events.extend(launched(
            "cuLaunchKernel",
            35,
            20.0,
            "triton_poi_fused_add_cos_sin_0",
            0,
            r#", "grid": [1, 1, 1], "block": [128, 1, 1]"#,
        ));
        let imp = import_events(&events);
        let k = &imp.kernels[0];
        assert_eq!(op(k).name, "triton_poi_fused_add_cos_sin_0");
        assert_eq!(k.grid, Some([1, 1, 1]));
        // Three buffers of 100 floats.
        let c = k.complexity.unwrap();
        assert_eq!((c.flops, c.bytes), (0.0, 1200.0));
        assert!(
            imp.notes
                .iter()
                .any(|n| n.starts_with("Triton kernels generated by torch.compile"))
        );
        assert!(!imp.notes.iter().any(|n| n.starts_with("not understood")));

        // The same launch with Inductor's own estimates (TORCHINDUCTOR_BENCHMARK_KERNEL=1): a
        // convolution template, which has no rule, takes F and B from them.
        let mut events = vec![ev(
            "cpu_op",
            "triton_tem_fused_convolution_0",
            1,
            10.0,
            50.0,
            r#""kernel_backend": "triton", "kernel_flop": 1327104, "kernel_num_gb": 3.6e-05, "Input Dims": [[1, 3, 56, 56], [12, 3, 5, 5], [1, 12, 52, 52]], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]"#,
        )];
        events.extend(launched(
            "cuLaunchKernel",
            35,
            20.0,
            "triton_tem_fused_convolution_0",
            0,
            "",
        ));
        let imp = import_events(&events);
        let c = imp.kernels[0].complexity.unwrap();
        assert_eq!((c.flops, c.bytes), (1_327_104.0, 3.6e-5 * 1e9));
        assert_eq!(
            op(&imp.kernels[0]).complexity.and_then(|c| c.datapath),
            Some(Dtype::Bf16.matmul())
        );
        assert!(
            imp.notes
                .iter()
                .any(|n| n.starts_with("1 operator calls carry Inductor's own estimates"))
        );
    }

    /// SYNTHETIC, shaped as a ROCm trace records an MI250 (HTA's public `amd_trace`): the
    /// device's `computeMajor.computeMinor` is its gfx architecture, its wavefront 64 threads,
    /// and its copies record no size.
    #[test]
    fn an_amd_gpu_gets_no_cuda_compute_capability() {
        let mut events = vec![ev(
            "cpu_op",
            "aten::relu",
            1,
            10.0,
            20.0,
            r#""Input Dims": [[4, 8]], "Input type": ["float"]"#,
        )];
        events.extend(launched("hipLaunchKernel", 1, 12.0, "relu_kernel", 2, ""));
        events.extend([
            ev(
                "gpu_memcpy",
                "Memcpy HtoD (Host -> Device)",
                7,
                30.0,
                3.0,
                r#""device": 2, "kind": "HtoD""#,
            ),
            ev(
                "gpu_memcpy",
                "Memcpy DtoH (Device -> Host)",
                7,
                40.0,
                1.0,
                r#""device": 2, "bytes": 64"#,
            ),
        ]);
        let text = format!(
            r#"{{"traceEvents": [{}], "deviceProperties": [{{"id": 2, "name": "AMD Radeon Graphics", "computeMajor": 9, "computeMinor": 0, "warpSize": 64, "numSms": 104}}]}}"#,
            events.join(",")
        );
        let imp = import(&parse(text.as_bytes()).unwrap(), &ImportOptions::default()).unwrap();
        let d = &imp.devices[0];
        assert_eq!(
            (d.name.as_str(), d.compute_capability.as_deref()),
            ("AMD Radeon Graphics", None)
        );
        assert_eq!(d.sm_count, Some(104));
        assert!(imp.notes.iter().any(|n| n.starts_with(
            "AMD GPU (a ROCm trace): device 2 (AMD Radeon Graphics, gfx 9.0); its computeMajor"
        )));
        // The relu still has its B: 4·8 floats read and written.
        assert_eq!(imp.kernels[0].complexity.unwrap().bytes, 2.0 * 32.0 * 4.0);
        // One copy has no size; no memsets, so none are listed.
        assert!(imp.notes.contains(
            &"memory copies and sets are kept apart, not counted as kernels: 2 memcpy (64 bytes in the 1 that record their size, 0.000004 s)".to_string()
        ));
    }

    /// A fused AdamW step as PyTorch 2.11 records it (tensor lists typed only `TensorList`) with
    /// two multi-tensor launches: the lists' type comes from the first kernel's name, and the
    /// call's B is counted once, per operator.
    #[test]
    fn tensor_list_operators_take_their_type_from_the_kernel() {
        let adam = |t: &str| {
            format!(
                "multi_tensor_apply_for_fused_optimizer_kernel<FusedOptimizerTensorListMetadata<4>, FusedAdamMathFunctor<{t}, 4, (ADAM_MODE)1, false>, double*>"
            )
        };
        let list = "[[8, 2], [3]]";
        let lists = format!(
            r#""Input Dims": [{list}, {list}, {list}, {list}, [], [[], []], [], []], "Input type": ["TensorList", "TensorList", "TensorList", "TensorList", "TensorList", "TensorList", "Scalar", "Scalar"]"#
        );
        let events = [
            ev("cpu_op", "aten::_fused_adamw_", 1, 10.0, 80.0, &lists),
            ev(
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                20.0,
                5.0,
                r#""correlation": 1"#,
            ),
            ev(
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                30.0,
                5.0,
                r#""correlation": 2"#,
            ),
            ev(
                "kernel",
                &adam("float"),
                7,
                40.0,
                3.0,
                r#""device": 0, "correlation": 1"#,
            ),
            ev(
                "kernel",
                &adam("float"),
                7,
                45.0,
                2.0,
                r#""device": 0, "correlation": 2"#,
            ),
            ev(
                "cpu_op",
                "aten::_foreach_sqrt",
                1,
                100.0,
                20.0,
                &format!(r#""Input Dims": [{list}], "Input type": ["TensorList"]"#),
            ),
            ev(
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                105.0,
                5.0,
                r#""correlation": 3"#,
            ),
            ev(
                "kernel",
                "unnamed_kernel",
                7,
                115.0,
                1.0,
                r#""device": 0, "correlation": 3"#,
            ),
            // torch.cat([4×6, 2×6]) as PyTorch 2.11 records it, and its kernel's name, which
            // gives only the element's size.
            ev(
                "cpu_op",
                "aten::cat",
                1,
                200.0,
                20.0,
                r#""Input Dims": [[[4, 6], [2, 6]], []], "Input type": ["TensorList", "Scalar"], "Concrete Inputs": ["", "0"]"#,
            ),
            ev(
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                205.0,
                5.0,
                r#""correlation": 4"#,
            ),
            ev(
                "kernel",
                "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 2, 128, 1>(at::native::(anonymous namespace)::OpaqueType<4u>*)",
                7,
                215.0,
                1.0,
                r#""device": 0, "correlation": 4"#,
            ),
        ];
        let imp = import_events(&events);
        assert_eq!(imp.kernels.len(), 4);
        let k = &imp.kernels[0];
        assert_eq!(op(k).name, "aten::_fused_adamw_");
        assert_eq!(op(k).kernels, 2);
        // 19 elements per list, four lists read and three written, 4-byte floats.
        assert_eq!(op(k).complexity.map(|c| c.bytes), Some(7.0 * 19.0 * 4.0));
        assert!(imp.notes.iter().any(|n| n.contains(
            "aten::_fused_adamw_: the tensor lists' element type, not recorded, is float32"
        )));
        // A kernel whose name gives no type leaves its list operator without a cost, listed.
        let summary = summary(&imp);
        assert!(summary.contains("aten::_foreach_sqrt"), "{summary}");
        assert!(imp.kernels[2].complexity.is_none());
        // cat: 36 four-byte elements read and written.
        let cat = &imp.kernels[3];
        assert_eq!(op(cat).name, "aten::cat");
        assert_eq!(cat.complexity.map(|c| c.bytes), Some(2.0 * 36.0 * 4.0));
        assert!(imp.notes.iter().any(|n| n.contains(
            "aten::cat: the tensor lists' element type, not recorded, is a 4-byte type"
        )));
    }

    #[test]
    fn ranges_need_a_time_and_use_the_ncu_table() {
        let range = |args: &str| {
            format!(
                r#"{{"ph": "X", "cat": "cuda_profiler_range", "name": "k", "pid": 0, "tid": 0, "ts": 1, "dur": 100, "args": {{{args}}}}}"#
            )
        };
        let ffma = r#""smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 10, "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum": 3"#;
        let text = format!(r#"{{"traceEvents": [{}]}}"#, range(ffma));
        let t = parse(text.as_bytes()).unwrap();
        let e = import(&t, &ImportOptions::default()).unwrap_err();
        assert!(
            matches!(e, ImportError::CountersWithoutTime { ranges: 1, .. }),
            "{e}"
        );
        // A time of zero is no time either (Nsight Compute's reading tells it from a missing
        // one; the range is still left out, not an error).
        let zero = format!(r#"{ffma}, "gpu__time_duration.sum": 0"#);
        let text = format!(r#"{{"traceEvents": [{}]}}"#, range(&zero));
        let e = import(&parse(text.as_bytes()).unwrap(), &ImportOptions::default()).unwrap_err();
        assert!(
            matches!(e, ImportError::CountersWithoutTime { ranges: 1, .. }),
            "{e}"
        );
        let timed = format!(r#"{ffma}, "gpu__time_duration.sum": 2000"#);
        let text = format!(r#"{{"traceEvents": [{}]}}"#, range(&timed));
        let imp = import(&parse(text.as_bytes()).unwrap(), &ImportOptions::default()).unwrap();
        let k = &imp.kernels[0];
        assert!((k.time.total_s - 2e-6).abs() < 1e-18);
        assert_eq!(k.flops.fp32, Some(20.0));
        // hfma counts 4 FLOPs under the current convention, 2 under the 2020 study's.
        assert_eq!(k.flops.fp16, Some(12.0));
        // A range alone, with no launch call to match it to, has no operator and says why.
        assert_eq!(
            summary(&imp),
            "not understood: 1 of 1 kernel launches have no operator (whose range was not matched to a launch call)"
        );
        assert_eq!(ncu_metric_name("smsp__x.sum"), "sm__x.sum");
        assert_eq!(ncu_metric_name("smsp__x.avg"), "smsp__x.avg");
    }

    /// An event of process `pid` (every helper above writes pid 1).
    fn ev_in(pid: u32, cat: &str, name: &str, tid: u32, ts: f64, dur: f64, args: &str) -> String {
        ev(cat, name, tid, ts, dur, args).replacen("\"pid\": 1,", &format!("\"pid\": {pid},"), 1)
    }

    /// Issue 29: two processes in one trace (two ranks' traces merged) both use correlation
    /// id 1: process 100's kernel was attached to process 200's operator, and process 100's
    /// operator and its F vanished. Each kernel is linked within the process that launched it,
    /// told by the device that process launches on; where that cannot tell, the kernel is left
    /// without an operator, and a note says so.
    #[test]
    fn correlation_ids_are_read_per_process() {
        let mm = r#""Input Dims": [[8, 6], [6, 5]], "Input type": ["float", "float"]"#;
        let relu = r#""Input Dims": [[8, 5]], "Input type": ["float"]"#;
        let mut events = vec![
            // Process 100 on GPU 0: aten::mm (correlation 1), then a lone launch (correlation 5).
            ev_in(100, "cpu_op", "aten::mm", 1, 10.0, 30.0, mm),
            ev_in(
                100,
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                12.0,
                5.0,
                r#""correlation": 1"#,
            ),
            ev_in(
                0,
                "kernel",
                "gemm",
                7,
                20.0,
                4.0,
                r#""device": 0, "correlation": 1"#,
            ),
            ev_in(
                100,
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                50.0,
                5.0,
                r#""correlation": 5"#,
            ),
            ev_in(
                0,
                "kernel",
                "fill",
                7,
                60.0,
                1.0,
                r#""device": 0, "correlation": 5"#,
            ),
            // Process 200 on GPU 1: aten::relu (correlation 1), then a lone launch (6).
            ev_in(200, "cpu_op", "aten::relu", 1, 11.0, 30.0, relu),
            ev_in(
                200,
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                13.0,
                5.0,
                r#""correlation": 1"#,
            ),
            ev_in(
                1,
                "kernel",
                "relu_kernel",
                7,
                21.0,
                2.0,
                r#""device": 1, "correlation": 1"#,
            ),
            ev_in(
                200,
                "cuda_runtime",
                "cudaLaunchKernel",
                1,
                51.0,
                5.0,
                r#""correlation": 6"#,
            ),
            ev_in(
                1,
                "kernel",
                "fill",
                7,
                61.0,
                1.0,
                r#""device": 1, "correlation": 6"#,
            ),
        ];
        let imp = import_events(&events);
        let by_name = |n: &str| imp.kernels.iter().find(|k| k.name == n).unwrap();
        assert_eq!(op(by_name("gemm")).name, "aten::mm");
        assert_eq!(op(by_name("relu_kernel")).name, "aten::relu");
        assert_eq!(
            op(by_name("gemm")).complexity.as_ref().map(|c| c.flops),
            Some(2.0 * 8.0 * 6.0 * 5.0)
        );
        // Without the lone launches, nothing tells which process launched on which GPU.
        events.retain(|e| !e.contains("\"fill\"") && !e.contains(": 5}") && !e.contains(": 6}"));
        let imp = import_events(&events);
        assert!(imp.kernels.iter().all(|k| k.operator.is_none()));
        assert!(
            imp.notes.iter().any(|n| n.contains(
                "2 kernel launches whose correlation id names launch calls in several processes (100, 200), which their devices do not tell apart: left without an operator"
            )),
            "{:?}",
            imp.notes
        );
    }

    /// Issue 29: notes had no length limit (200,000 categories made one 3 MB line), and an event
    /// without a category was listed as `  ×1`. Lists are capped, the rest summed up.
    #[test]
    fn notes_are_capped_and_name_what_has_no_name() {
        let mut events: Vec<String> = launched("cudaLaunchKernel", 1, 10.0, "k", 0, "").to_vec();
        for i in 0..1000 {
            events.push(format!(
                r#"{{"ph": "X", "cat": "cat{i:04}", "name": "x", "ts": 1, "dur": 1}}"#
            ));
        }
        events.push(r#"{"ph": "X", "name": "x", "ts": 1, "dur": 1}"#.into());
        let imp = import_events(&events);
        let s = summary(&imp);
        assert!(s.len() < 2000, "{} bytes: {s}", s.len());
        assert!(s.contains("(no category) ×1"), "{s}");
        assert!(s.contains("… and 981 more (981 events)"), "{s}");
        // A very long name is shortened in a note.
        let long = "n".repeat(5000);
        let mut events: Vec<String> = launched("cudaLaunchKernel", 1, 10.0, "k", 0, "").to_vec();
        events.push(format!(
            r#"{{"ph": "X", "cat": "{long}", "name": "x", "ts": 1, "dur": 1}}"#
        ));
        let s = summary(&import_events(&events)).to_string();
        assert!(s.len() < 600 && s.contains("… (5000 bytes)"), "{s}");
    }

    /// Issue 29: a trace whose kernels are all of another phase (begin/end pairs, instants) was
    /// called "a CPU-only trace".
    #[test]
    fn kernels_of_another_phase_are_not_called_cpu_only() {
        let text = r#"{"traceEvents": [
          {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 9},
          {"ph": "B", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2},
          {"ph": "E", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 3}
        ]}"#;
        let e = import(&parse(text.as_bytes()).unwrap(), &ImportOptions::default()).unwrap_err();
        let e = e.to_string();
        assert!(!e.contains("CPU-only"), "{e}");
        assert!(
            e.contains("its kernel events are of other phases (kernel events of phase \"B\" ×1, kernel events of phase \"E\" ×1)")
                && e.contains("complete events (\"ph\": \"X\")"),
            "{e}"
        );
        // Kept beside X kernels, they are noted.
        let mut events: Vec<String> = launched("cudaLaunchKernel", 1, 10.0, "k", 0, "").to_vec();
        events.push(r#"{"ph": "i", "cat": "kernel", "name": "k", "ts": 1, "s": "t"}"#.into());
        let s = summary(&import_events(&events)).to_string();
        assert!(s.contains("kernel events of phase \"i\" ×1"), "{s}");
    }

    /// Issue 42: a call that records the calls implementing it inside it counts what they do
    /// not. `_addmm_activation` [8, 6] × [6, 5] with GELU, run as CUDA's fallback does it: its
    /// own GEMM kernel, then a `gelu_(…, "tanh")` call inside it with its kernel. The outer call's
    /// rule counts the product and the tanh GELU (2·8·5·6 + 8·40 = 800); the inner call counts
    /// its GELU (8·40 = 320): the GEMM kernel gets the rest, 480, the product alone. A `linear`
    /// whose `addmm` inside does all its work, and which launched a kernel of its own, gets no
    /// complexity on that kernel, and a note says so.
    #[test]
    fn calls_recorded_inside_a_call_are_not_counted_twice() {
        let f32s = |n: usize| vec![r#""float""#; n].join(", ");
        let mut events = vec![
            ev(
                "cpu_op",
                "aten::_addmm_activation",
                1,
                10.0,
                100.0,
                &format!(
                    r#""Input Dims": [[5], [8, 6], [6, 5], [], [], []], "Input type": [{}, "Scalar", "Scalar", "Scalar"], "Concrete Inputs": ["", "", "", "1", "1", "True"]"#,
                    f32s(3)
                ),
            ),
            ev(
                "cpu_op",
                "aten::gelu_",
                1,
                60.0,
                40.0,
                r#""Input Dims": [[8, 5], []], "Input type": ["float", "Scalar"], "Concrete Inputs": ["", "'tanh'"]"#,
            ),
            ev(
                "cpu_op",
                "aten::linear",
                1,
                200.0,
                100.0,
                &format!(
                    r#""Input Dims": [[8, 6], [5, 6], [5]], "Input type": [{}], "Concrete Inputs": ["", "", ""]"#,
                    f32s(3)
                ),
            ),
            ev(
                "cpu_op",
                "aten::addmm",
                1,
                250.0,
                40.0,
                &format!(
                    r#""Input Dims": [[5], [8, 6], [6, 5], [], []], "Input type": [{}, "Scalar", "Scalar"], "Concrete Inputs": ["", "", "", "1", "1"]"#,
                    f32s(3)
                ),
            ),
        ];
        events.extend(launched("cudaLaunchKernel", 1, 20.0, "gemm", 0, ""));
        events.extend(launched("cudaLaunchKernel", 2, 70.0, "gelu", 0, ""));
        events.extend(launched("cudaLaunchKernel", 3, 210.0, "copy", 0, ""));
        events.extend(launched("cudaLaunchKernel", 4, 260.0, "gemm", 0, ""));
        let imp = import_events(&events);
        let f = |i: usize| {
            imp.kernels[i]
                .operator
                .as_ref()
                .unwrap()
                .complexity
                .map(|c| c.flops)
        };
        assert_eq!(f(0), Some(480.0));
        assert_eq!(f(1), Some(320.0));
        assert_eq!(f(2), None);
        assert_eq!(f(3), Some(480.0));
        assert_eq!(imp.stats.left_over["aten::_addmm_activation"], 1);
        assert_eq!(imp.stats.counted_inside["aten::linear"], 1);
        let notes = imp.notes.join("\n");
        assert!(
            notes.contains(
                "F is what those inner calls do not count (calls): aten::_addmm_activation ×1"
            ),
            "{notes}"
        );
        assert!(
            notes.contains("their own kernels carry no complexity, their F counted on the inner calls' kernels (calls): aten::linear ×1"),
            "{notes}"
        );
    }
}
