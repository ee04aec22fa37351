//! Collectives: each NCCL (or RCCL) kernel linked to what the trace records of its collective,
//! made a bundle [`Collective`]: which collective, its size S in bytes as nccl-tests counts it,
//! its group's size and process group, whether its ranks share a node, its place among its
//! group's collectives, its start, and how much of its run no compute kernel overlapped.
//!
//! Where each comes from, first found first:
//! - the kind: the kernel's `Collective name` (PyTorch 2.3 and later), its `record_param_comms`
//!   operator's, the `nccl:*` annotation around its launch (`nccl:all_to_all`), the `c10d::`
//!   operator around it, the kernel's own name (`ncclKernel_AllReduce_…`; a `SendRecv` kernel
//!   carries all-to-all too, so it is the last resort);
//! - the message: `In msg nelems`, `Out msg nelems` and `dtype` of the kernel, else of its
//!   operator; else the first tensor the `nccl:*` annotation (PyTorch 2.0 to 2.2) or the
//!   `record_param_comms` call records as its input (a tensor list's shapes are not recorded);
//! - the group: `Group size` and `Process Group Ranks` of the kernel or operator; else
//!   `roofline import --group-size`; else `distributedInfo.pg_config` (the group named, or
//!   the only one listed); else `distributedInfo.world_size` where the trace knows of no other
//!   group than the default one;
//! - the scope: the group's ranks against the GPUs per node (`--gpus-per-node`, else the
//!   `--system`'s, else the trace's `deviceProperties`), rank r on node ⌊r / GPUs per node⌋
//!   as `torchrun` numbers them; a group larger than a node spans several whatever its ranks.
//!
//! Exposed communication (per device): a collective's run less the time a compute kernel (any
//! other kernel) ran on any stream; an instant under several collectives counts once, on the
//! one that started first, so that a step's sums are the time some collective ran.

use roofline_model::bundle::{Collective, CollectiveKind, GroupSizeSource, Scope};

use super::link::Links;
use super::model::{CommArgs, Ns, Trace, at};
use crate::operators::{Arg, Dtype};

/// What the import is told of the job beyond the trace (`roofline import`'s options).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommOptions {
    /// `--group-size`: the ranks of a collective whose arguments do not record its group.
    pub group_size: Option<u32>,
    /// GPUs per node: `--gpus-per-node`, or the `--system`'s.
    pub gpus_per_node: Option<u32>,
    /// Whether `gpus_per_node` is the system's (for the note's words).
    pub gpus_per_node_from_system: bool,
}

/// Whether a kernel is a collective library's: NCCL's (`ncclKernel_…`, `ncclDevKernel_…`) or
/// RCCL's.
pub fn is_collective_kernel(name: &str) -> bool {
    name.starts_with("nccl") || name.starts_with("rccl")
}

/// Bytes per element of a recorded type: a c10 scalar type's name as `dtype` records it
/// (`Float`, `BFloat16`, `Byte`, `Float8_e4m3fn`), or torch.profiler's `Input type`
/// (`float`, `c10::BFloat16`, `unsigned char`).
pub fn element_bytes(dtype: &str) -> Option<f64> {
    let t = dtype.trim().trim_start_matches("c10::");
    Some(match t {
        "Double" | "Long" | "ComplexFloat" => 8.0,
        "Float" | "Int" => 4.0,
        "Half" | "BFloat16" | "Short" => 2.0,
        "Byte" | "Char" | "Bool" | "QInt8" | "QUInt8" => 1.0,
        "ComplexDouble" => 16.0,
        t if t.starts_with("Float8_") => 1.0,
        _ => Dtype::from_profiler(dtype.trim())?.bytes(),
    })
}

/// The collectives of a trace's kernels, and what the import says of them.
#[derive(Debug, Clone, Default)]
pub struct Collectives {
    /// By kernel index, in that order ([`super::model::at`]).
    pub by_kernel: Vec<(usize, Collective)>,
    /// The bundle's notes on them.
    pub notes: Vec<String>,
}

/// Where a figure of one collective came from, counted for the note.
#[derive(Default)]
struct Sources {
    kind: Vec<(&'static str, usize)>,
    bytes: Vec<(&'static str, usize)>,
    group: Vec<(&'static str, usize)>,
    no_bytes: usize,
    no_group: usize,
    no_scope: usize,
}

fn count(m: &mut Vec<(&'static str, usize)>, k: &'static str) {
    match m.iter_mut().find(|e| e.0 == k) {
        Some(e) => e.1 += 1,
        None => m.push((k, 1)),
    }
}

/// Kernel indices by start, then index.
fn by_start(v: &mut [usize], trace: &Trace) {
    v.sort_unstable_by_key(|&i| (trace.kernels[i].ts, i));
}

/// The collective a recorded `Collective name` names, with the name.
fn named(a: Option<&CommArgs>) -> Option<(&str, CollectiveKind)> {
    let n = a?.collective.as_deref()?;
    Some((n, CollectiveKind::from_recorded(n)?))
}

/// The tensor a recorded input holds first: its elements and element type.
fn first_tensor(trace: &Trace, inputs: u32) -> Option<(f64, Dtype)> {
    trace.inputs[inputs as usize]
        .inputs
        .args
        .iter()
        .find_map(|a| match a {
            Arg::Tensor(d, s) => Some((s.iter().map(|&x| x as f64).product(), *d)),
            _ => None,
        })
}

impl Collectives {
    /// The collective of every NCCL kernel of `trace`, linked through `links` (and the operators'
    /// `parents`).
    pub fn of(trace: &Trace, links: &Links, parents: &[Option<usize>], o: &CommOptions) -> Self {
        let mut out = Collectives::default();
        let mut src = Sources::default();
        let gpus_per_node = o
            .gpus_per_node
            .or_else(|| u32::try_from(trace.devices.len()).ok().filter(|n| *n > 0));
        let mut kernels = 0usize;
        for (i, g) in trace.kernels.iter().enumerate() {
            let kname = trace.name(g.name);
            let kargs = at(&trace.kernel_comm, i);
            if !is_collective_kernel(kname) && kargs.is_none() {
                continue;
            }
            kernels += 1;
            // The operators around the launch, innermost first.
            let mut ops = Vec::new();
            let mut up = links.launch_op.get(i).copied().flatten();
            while let Some(op) = up {
                ops.push(op);
                up = parents.get(op).copied().flatten();
            }
            let oargs = ops.iter().find_map(|&o| at(&trace.op_comm, o));
            let ann = links
                .launch_rt
                .get(i)
                .copied()
                .flatten()
                .and_then(|r| links.rt_ann[r])
                .filter(|&a| trace.name(trace.annotations[a].name).starts_with("nccl:"));
            let rpc = ops
                .iter()
                .copied()
                .find(|&o| trace.name(trace.ops[o].name) == "record_param_comms");
            let c10d = ops
                .iter()
                .map(|&o| trace.name(trace.ops[o].name))
                .find(|n| n.starts_with("c10d::"));
            let args = [kargs, oargs];
            let (kind, recorded, from) = if let Some((n, k)) = named(kargs) {
                (k, n.to_string(), "the kernel's arguments")
            } else if let Some((n, k)) = named(oargs) {
                (k, n.to_string(), "record_param_comms")
            } else if let Some((n, k)) = ann
                .map(|a| trace.name(trace.annotations[a].name))
                .and_then(|n| Some((n, CollectiveKind::from_recorded(n)?)))
            {
                (k, n.to_string(), "its nccl:* annotation")
            } else if let Some((n, k)) =
                c10d.and_then(|n| Some((n, CollectiveKind::from_recorded(n)?)))
            {
                (k, n.to_string(), "its c10d:: operator")
            } else if let Some(k) = CollectiveKind::from_kernel_name(kname) {
                let word = kname
                    .split_once('_')
                    .map(|(_, r)| r.split(['_', '(']).next().unwrap_or(r))
                    .unwrap_or(kname);
                (k, word.to_string(), "the kernel's name")
            } else {
                (
                    CollectiveKind::Other,
                    kname.to_string(),
                    "the kernel's name",
                )
            };
            count(&mut src.kind, from);
            let mut c = Collective::new(kind);
            c.recorded = Some(recorded);

            // The group: recorded, given, listed, or the world.
            let rec = |f: fn(&CommArgs) -> Option<u32>| args.iter().flatten().find_map(|a| f(a));
            let recorded_ranks = args.iter().flatten().find_map(|a| a.ranks.clone());
            let pg_name = args.iter().flatten().find_map(|a| a.process_group.clone());
            let listed = match &pg_name {
                Some(n) => trace.process_groups.iter().find(|g| &g.name == n),
                None if trace.process_groups.len() == 1 => trace.process_groups.first(),
                None => None,
            };
            let only_default =
                trace.process_groups.len() <= 1 && trace.pg_count.is_none_or(|n| n <= 1);
            let mut ranks: Option<Vec<u64>> = None;
            let group = if let Some(n) = rec(|a| a.group_size).filter(|n| *n > 0) {
                ranks = recorded_ranks.filter(|r| r.len() == n as usize);
                Some((n, GroupSizeSource::Recorded))
            } else if let Some(r) = recorded_ranks.filter(|r| !r.is_empty()) {
                let n = u32::try_from(r.len()).ok();
                ranks = Some(r);
                n.map(|n| (n, GroupSizeSource::Recorded))
            } else if let Some(n) = o.group_size {
                Some((n, GroupSizeSource::Option))
            } else if let Some(g) = listed {
                ranks = (!g.ranks.is_empty()).then(|| g.ranks.clone());
                g.size
                    .or_else(|| u32::try_from(g.ranks.len()).ok().filter(|n| *n > 0))
                    .map(|n| (n, GroupSizeSource::ProcessGroups))
            } else if let Some(w) = trace
                .world_size
                .filter(|_| only_default && pg_name.is_none())
            {
                ranks = Some((0..w).collect());
                u32::try_from(w)
                    .ok()
                    .map(|n| (n, GroupSizeSource::WorldSize))
            } else {
                None
            };
            match group {
                Some((n, from)) => {
                    c.group_size = Some(n);
                    c.group_size_from = Some(from);
                    count(
                        &mut src.group,
                        match from {
                            GroupSizeSource::Recorded => "the collective's arguments",
                            GroupSizeSource::Option => "--group-size",
                            GroupSizeSource::ProcessGroups => "distributedInfo.pg_config",
                            GroupSizeSource::WorldSize => {
                                "distributedInfo.world_size (the default group)"
                            }
                        },
                    );
                }
                None => src.no_group += 1,
            }
            c.process_group = pg_name
                .or_else(|| listed.map(|g| g.name.clone()))
                .or_else(|| {
                    (c.group_size_from == Some(GroupSizeSource::WorldSize))
                        .then(|| "default".to_string())
                });

            // The message.
            let elems = |f: fn(&CommArgs) -> Option<f64>| {
                args.iter()
                    .flatten()
                    .find_map(|a| f(a))
                    .filter(|v| v.is_finite() && *v >= 0.0)
            };
            let dtype = args.iter().flatten().find_map(|a| a.dtype.clone());
            let (mut input, output, mut size, mut type_name) = (
                elems(|a| a.in_nelems),
                elems(|a| a.out_nelems),
                dtype.as_deref().and_then(element_bytes),
                dtype.clone(),
            );
            let mut bytes_from = "the collective's arguments";
            if input.is_none() && output.is_none() {
                let recorded = ann
                    .and_then(|a| at(&trace.annotation_inputs, a).copied())
                    .map(|i| (i, "its nccl:* annotation's input"))
                    .or_else(|| {
                        rpc.and_then(|o| trace.ops[o].inputs)
                            .map(|i| (i, "record_param_comms' input"))
                    });
                if let Some((n, d, from)) =
                    recorded.and_then(|(i, from)| first_tensor(trace, i).map(|(n, d)| (n, d, from)))
                {
                    input = Some(n);
                    size = Some(d.bytes());
                    type_name = Some(d.name().to_string());
                    bytes_from = from;
                }
            }
            let n = c.group_size.map(f64::from);
            let message = match kind {
                CollectiveKind::AllGather => output.or_else(|| input.zip(n).map(|(i, n)| i * n)),
                CollectiveKind::ReduceScatter => {
                    input.or_else(|| output.zip(n).map(|(o, n)| o * n))
                }
                CollectiveKind::AllToAll => input.or(output),
                _ => match (input, output) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                },
            };
            c.bytes = message.zip(size).map(|(e, s)| e * s);
            c.dtype = type_name;
            match c.bytes {
                Some(_) => count(&mut src.bytes, bytes_from),
                None => src.no_bytes += 1,
            }

            // Where the ranks sit.
            c.scope = match (gpus_per_node, c.group_size) {
                (Some(per), Some(n)) if n > per => Some(Scope::InterNode),
                (Some(per), _) if per > 0 => ranks.as_ref().filter(|r| !r.is_empty()).map(|r| {
                    let node = |x: &u64| x / u64::from(per);
                    let first = node(&r[0]);
                    if r.iter().all(|x| node(x) == first) {
                        Scope::IntraNode
                    } else {
                        Scope::InterNode
                    }
                }),
                _ => None,
            };
            if c.scope.is_none() {
                src.no_scope += 1;
            }
            c.start_ns = Some(g.ts);
            out.by_kernel.push((i, c));
        }
        if kernels == 0 {
            return out;
        }
        out.sequence(trace);
        out.exposure(trace);
        out.notes.push(note(kernels, &src, gpus_per_node, o, trace));
        out
    }

    /// Numbers each collective within its process group (on its device), in start order.
    fn sequence(&mut self, trace: &Trace) {
        let mut order: Vec<usize> = (0..self.by_kernel.len()).collect();
        // Positions in `by_kernel` by their kernels' start: `by_kernel` is in kernel order.
        let kernels: Vec<usize> = self.by_kernel.iter().map(|e| e.0).collect();
        let mut sorted = kernels.clone();
        by_start(&mut sorted, trace);
        for (n, k) in sorted.iter().enumerate() {
            order[n] = kernels.partition_point(|x| x < k);
        }
        // (device, process group) → the next place.
        type Next = ((Option<i64>, Option<String>), u64);
        let mut next: Vec<Next> = Vec::new();
        for p in order {
            let (i, c) = &mut self.by_kernel[p];
            let key = (trace.kernels[*i].device, c.process_group.clone());
            let n = match next.iter_mut().find(|e| e.0 == key) {
                Some(e) => &mut e.1,
                None => {
                    next.push((key, 0));
                    &mut next.last_mut().expect("just pushed").1
                }
            };
            c.sequence = Some(*n);
            *n += 1;
        }
    }

    /// Each collective's exposed and overlapped time on its device.
    fn exposure(&mut self, trace: &Trace) {
        let span = |i: usize| {
            let g = &trace.kernels[i];
            (g.ts, g.ts + (g.dur_us * 1000.0).round() as Ns)
        };
        let mine: Vec<usize> = self.by_kernel.iter().map(|e| e.0).collect();
        let mut devices: Vec<Option<i64>> = Vec::new();
        for &i in &mine {
            let d = trace.kernels[i].device;
            if !devices.contains(&d) {
                devices.push(d);
            }
        }
        for d in devices {
            // The union of the compute kernels' runs on this device, by start.
            let mut compute: Vec<usize> = (0..trace.kernels.len())
                .filter(|&i| trace.kernels[i].device == d && at(&self.by_kernel, i).is_none())
                .collect();
            by_start(&mut compute, trace);
            let mut merged: Vec<(Ns, Ns)> = Vec::new();
            for (a, b) in compute.into_iter().map(span).filter(|(a, b)| b > a) {
                match merged.last_mut() {
                    Some(last) if a <= last.1 => last.1 = last.1.max(b),
                    _ => merged.push((a, b)),
                }
            }
            let mut here: Vec<usize> = mine
                .iter()
                .copied()
                .filter(|&i| trace.kernels[i].device == d)
                .collect();
            by_start(&mut here, trace);
            let mut counted_to = Ns::MIN;
            for i in here {
                let (s, e) = span(i);
                let from = s.max(counted_to);
                let own = (e - from).max(0);
                let hidden = if own > 0 {
                    covered(&merged, from, e)
                } else {
                    0
                };
                counted_to = counted_to.max(e);
                let p = mine.partition_point(|&x| x < i);
                let c = &mut self.by_kernel[p].1;
                c.exposed_s = Some((own - hidden) as f64 / 1e9);
                c.overlapped_s = Some(hidden as f64 / 1e9);
            }
        }
    }
}

/// How much of `[from, to)` the sorted, disjoint intervals `merged` cover, ns.
fn covered(merged: &[(Ns, Ns)], from: Ns, to: Ns) -> Ns {
    let start = merged.partition_point(|iv| iv.1 <= from);
    merged[start..]
        .iter()
        .take_while(|iv| iv.0 < to)
        .map(|iv| (iv.1.min(to) - iv.0.max(from)).max(0))
        .sum()
}

fn join(m: &[(&'static str, usize)]) -> String {
    m.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The bundle's note on the collectives: where each figure came from and what stayed unknown.
fn note(
    kernels: usize,
    src: &Sources,
    gpus_per_node: Option<u32>,
    o: &CommOptions,
    trace: &Trace,
) -> String {
    let mut parts = vec![format!(
        "collectives: {kernels} NCCL kernel launches placed against the links they run on (nccl-tests' bus bandwidth; `roofline info` lists them); kind from {}",
        join(&src.kind)
    )];
    if !src.bytes.is_empty() {
        parts.push(format!("message size from {}", join(&src.bytes)));
    }
    if src.no_bytes > 0 {
        parts.push(format!(
            "{} without a recorded message size (no In msg nelems, and no tensor recorded as the input of their nccl:* annotation or record_param_comms; record with record_shapes=True, or PyTorch 2.3 or later): their bandwidths stay unknown",
            src.no_bytes
        ));
    }
    if !src.group.is_empty() {
        parts.push(format!("group size from {}", join(&src.group)));
    }
    if src.no_group > 0 {
        parts.push(format!(
            "{} without a group size (neither recorded nor in distributedInfo): give it with --group-size",
            src.no_group
        ));
    }
    match gpus_per_node {
        Some(n) => parts.push(format!(
            "intra- or inter-node from the group's ranks at {n} GPUs per node ({}; rank r on node r / {n}, as torchrun numbers ranks)",
            if o.gpus_per_node.is_some() {
                if o.gpus_per_node_from_system {
                    "the --system's"
                } else {
                    "--gpus-per-node"
                }
            } else {
                "the devices the trace's deviceProperties lists"
            }
        )),
        None => parts.push(
            "GPUs per node unknown (the trace lists no devices): give --gpus-per-node or --system to tell intra- from inter-node collectives".to_string(),
        ),
    }
    if src.no_scope > 0 && gpus_per_node.is_some() {
        parts.push(format!(
            "{} with their group's ranks unknown, so their link is too",
            src.no_scope
        ));
    }
    if trace.world_size.is_some()
        && src
            .group
            .iter()
            .any(|e| e.0 == "distributedInfo.world_size (the default group)")
    {
        parts.push(
            "a group size taken from the world size assumes the default process group (the trace records no other); give --group-size where a collective ran on a subgroup"
                .to_string(),
        );
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_sizes_of_both_spellings() {
        assert_eq!(element_bytes("Float"), Some(4.0));
        assert_eq!(element_bytes("BFloat16"), Some(2.0));
        assert_eq!(element_bytes("Byte"), Some(1.0));
        assert_eq!(element_bytes("Long"), Some(8.0));
        assert_eq!(element_bytes("Float8_e4m3fn"), Some(1.0));
        assert_eq!(element_bytes("float"), Some(4.0));
        assert_eq!(element_bytes("c10::BFloat16"), Some(2.0));
        assert_eq!(element_bytes("unsigned char"), Some(1.0));
        assert_eq!(element_bytes("long int"), Some(8.0));
        assert_eq!(element_bytes("TensorList"), None);
    }

    #[test]
    fn coverage_of_disjoint_intervals() {
        let m = [(0, 10), (20, 30), (40, 50)];
        assert_eq!(covered(&m, 5, 25), 10);
        assert_eq!(covered(&m, 10, 20), 0);
        assert_eq!(covered(&m, -5, 100), 30);
        assert_eq!(covered(&m, 45, 46), 1);
        assert_eq!(covered(&[], 0, 10), 0);
    }
}
