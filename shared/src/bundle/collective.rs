//! Collective communication: what a torch.profiler import records of an NCCL (or RCCL) kernel
//! ([`Collective`]: which collective, its message size, its process group and where its ranks
//! sit), and the link ceilings a device's collectives are placed against ([`LinkCeiling`]).
//!
//! The figures computed from them (algorithm and bus bandwidth, the binding link, exposed
//! communication, the skew across ranks) are the analysis floor's (`analysis::comm`).

use super::keyed;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{FigureSource, Method};

/// Which collective an NCCL kernel carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveKind {
    /// Every rank ends with the reduction of all ranks' inputs.
    AllReduce,
    /// Every rank ends with the concatenation of all ranks' inputs.
    AllGather,
    /// Every rank ends with one part of the reduction.
    ReduceScatter,
    /// Every rank sends a part of its input to every other rank.
    AllToAll,
    /// The root's input is copied to every rank.
    Broadcast,
    /// The reduction of all inputs ends on the root.
    Reduce,
    /// Point-to-point send or receive.
    SendRecv,
    /// All inputs gathered on the root (sends and receives in NCCL).
    Gather,
    /// The root's input scattered (sends and receives in NCCL).
    Scatter,
    /// A collective this toolkit does not name (its recorded name says which).
    Other,
}

keyed::deserialize_from_keys!(CollectiveKind {
    AllReduce => "all_reduce",
    AllGather => "all_gather",
    ReduceScatter => "reduce_scatter",
    AllToAll => "all_to_all",
    Broadcast => "broadcast",
    Reduce => "reduce",
    SendRecv => "send_recv",
    Gather => "gather",
    Scatter => "scatter",
    Other => "other",
});

impl CollectiveKind {
    /// Every kind.
    pub const ALL: [CollectiveKind; 10] = [
        CollectiveKind::AllReduce,
        CollectiveKind::AllGather,
        CollectiveKind::ReduceScatter,
        CollectiveKind::AllToAll,
        CollectiveKind::Broadcast,
        CollectiveKind::Reduce,
        CollectiveKind::SendRecv,
        CollectiveKind::Gather,
        CollectiveKind::Scatter,
        CollectiveKind::Other,
    ];

    /// The JSON name (`all_reduce`).
    pub fn key(self) -> &'static str {
        match self {
            CollectiveKind::AllReduce => "all_reduce",
            CollectiveKind::AllGather => "all_gather",
            CollectiveKind::ReduceScatter => "reduce_scatter",
            CollectiveKind::AllToAll => "all_to_all",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::Reduce => "reduce",
            CollectiveKind::SendRecv => "send_recv",
            CollectiveKind::Gather => "gather",
            CollectiveKind::Scatter => "scatter",
            CollectiveKind::Other => "other",
        }
    }

    /// Display label (`all-reduce`).
    pub fn label(self) -> &'static str {
        match self {
            CollectiveKind::AllReduce => "all-reduce",
            CollectiveKind::AllGather => "all-gather",
            CollectiveKind::ReduceScatter => "reduce-scatter",
            CollectiveKind::AllToAll => "all-to-all",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::Reduce => "reduce",
            CollectiveKind::SendRecv => "send/recv",
            CollectiveKind::Gather => "gather",
            CollectiveKind::Scatter => "scatter",
            CollectiveKind::Other => "other collective",
        }
    }

    /// The kind of a name as PyTorch records it: `record_param_comms`' `Collective name`
    /// (`allreduce`, `_allgather_base`, `reduce_scatter_tensor_coalesced`, `alltoall_base`,
    /// `send`), an annotation's (`nccl:all_reduce`, `nccl:_all_gather_base`), or a `c10d::`
    /// operator's (`c10d::allreduce_`); `None` for names that are no collective (`wait`,
    /// `barrier`, `init`) or that it does not know.
    pub fn from_recorded(name: &str) -> Option<CollectiveKind> {
        let n = name
            .trim()
            .trim_start_matches("nccl:")
            .trim_start_matches("gloo:")
            .trim_start_matches("c10d::");
        let k: String = n
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        let has = |w: &str| k.contains(w);
        Some(if has("allreduce") {
            CollectiveKind::AllReduce
        } else if has("allgather") {
            CollectiveKind::AllGather
        } else if has("reducescatter") {
            CollectiveKind::ReduceScatter
        } else if has("alltoall") {
            CollectiveKind::AllToAll
        } else if has("broadcast") {
            CollectiveKind::Broadcast
        } else if has("reduce") {
            CollectiveKind::Reduce
        } else if has("gather") {
            CollectiveKind::Gather
        } else if has("scatter") {
            CollectiveKind::Scatter
        } else if has("send") || has("recv") {
            CollectiveKind::SendRecv
        } else {
            return None;
        })
    }

    /// The kind an NCCL or RCCL kernel's name says (`ncclKernel_AllReduce_RING_LL_Sum_float`,
    /// `ncclDevKernel_AllGather_RING_LL`): the word after the prefix. `SendRecv` kernels carry
    /// all-to-all too, so a recorded collective name says more than the kernel's.
    pub fn from_kernel_name(name: &str) -> Option<CollectiveKind> {
        let rest = [
            "ncclDevKernel_",
            "ncclKernel_",
            "rcclKernel_",
            "ncclDevFunc_",
        ]
        .iter()
        .find_map(|p| name.strip_prefix(p))?;
        let word = rest.split(['_', '(', '<']).next()?;
        Some(match word {
            "AllReduce" => CollectiveKind::AllReduce,
            "AllGather" => CollectiveKind::AllGather,
            "ReduceScatter" => CollectiveKind::ReduceScatter,
            "AllToAll" | "AlltoAll" => CollectiveKind::AllToAll,
            "Broadcast" => CollectiveKind::Broadcast,
            "Reduce" => CollectiveKind::Reduce,
            "SendRecv" | "Send" | "Recv" => CollectiveKind::SendRecv,
            _ => CollectiveKind::Other,
        })
    }
}

/// Where a collective's ranks sit relative to each other: what picks the link it runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every rank of the group on one node: NVLink (or PCIe where the GPU has none).
    IntraNode,
    /// Ranks on several nodes: the network.
    InterNode,
}

keyed::deserialize_from_keys!(Scope {
    IntraNode => "intra_node",
    InterNode => "inter_node",
});

impl Scope {
    /// The JSON name (`intra_node`).
    pub fn key(self) -> &'static str {
        match self {
            Scope::IntraNode => "intra_node",
            Scope::InterNode => "inter_node",
        }
    }
}

/// Where a collective's group size comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GroupSizeSource {
    /// The collective's own arguments (`Group size`, `Process Group Ranks`).
    Recorded,
    /// The trace's `distributedInfo.pg_config`: the process group named, or the only one.
    ProcessGroups,
    /// The trace's `distributedInfo.world_size`: the default group, the only one it knows.
    WorldSize,
    /// Given by hand (`roofline import --group-size`).
    Option,
}

keyed::deserialize_from_keys!(GroupSizeSource {
    Recorded => "recorded",
    ProcessGroups => "process_groups",
    WorldSize => "world_size",
    Option => "option",
});

impl GroupSizeSource {
    /// The JSON name (`recorded`).
    pub fn key(self) -> &'static str {
        match self {
            GroupSizeSource::Recorded => "recorded",
            GroupSizeSource::ProcessGroups => "process_groups",
            GroupSizeSource::WorldSize => "world_size",
            GroupSizeSource::Option => "option",
        }
    }
}

/// An NCCL (or RCCL) kernel's collective, as a torch.profiler trace records it: the kernel's own
/// arguments (`Collective name`, `In msg nelems`, `Out msg nelems`, `Group size`, `dtype`,
/// `Process Group Ranks`: PyTorch 2.3 and later), its `record_param_comms` operator's, or its
/// `nccl:*` annotation's name and recorded input. Summed over the launches of an aggregated
/// entry (bytes, exposed and overlapped time); kept where every launch agrees (kind, group,
/// scope); the per-launch fields (sequence, start) only on one launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Collective {
    /// Which collective.
    pub kind: CollectiveKind,
    /// The name the trace records (`allreduce`, `nccl:all_to_all`, or the kernel's word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded: Option<String>,
    /// The collective's size S in bytes as nccl-tests counts it (`doc/PERFORMANCE.md`): the
    /// larger of the input and output messages (all-reduce, broadcast, reduce: the message;
    /// all-gather: the gathered output, `sendcount × size × n`; reduce-scatter: the input,
    /// `recvcount × size × n`; all-to-all and send/recv: what this rank sends); summed over the
    /// launches. Absent when the trace does not record the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<f64>,
    /// The element type as recorded (`Float`, `BFloat16`, `float`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// The ranks in the collective's group, n.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_size: Option<u32>,
    /// Where `group_size` comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_size_from: Option<GroupSizeSource>,
    /// The process group's name as recorded (`0`), or `default` where only the world size is
    /// known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_group: Option<String>,
    /// Whether the group's ranks share a node, from its ranks against the GPUs per node; absent
    /// when either is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// The collective's place among its process group's collectives on this rank (0 first, in
    /// the order its kernels started): what pairs one collective across ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<u64>,
    /// The kernel's start, integer nanoseconds on the trace's clock (Kineto's `ts` × 1000, as
    /// recorded): the skew across ranks is read from it. One launch only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ns: Option<i64>,
    /// Seconds of the kernel's run during which no compute kernel ran on any stream of its
    /// device (exposed communication); an instant under several collectives counts on the one
    /// that started first. Summed over the launches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposed_s: Option<f64>,
    /// Seconds of the kernel's run hidden under a compute kernel on another stream (counted as
    /// `exposed_s` is). Summed over the launches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlapped_s: Option<f64>,
}

impl Collective {
    /// A collective of `kind`, nothing else known.
    pub fn new(kind: CollectiveKind) -> Self {
        Collective {
            kind,
            recorded: None,
            bytes: None,
            dtype: None,
            group_size: None,
            group_size_from: None,
            process_group: None,
            scope: None,
            sequence: None,
            start_ns: None,
            exposed_s: None,
            overlapped_s: None,
        }
    }
}

/// A link a device's collectives run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// NVLink to the other GPUs of the node (through NVSwitch, or the links of a mesh).
    Nvlink,
    /// PCI Express.
    Pcie,
    /// The node's compute network (InfiniBand, Ethernet), the NIC of the GPU.
    Network,
}

keyed::deserialize_from_keys!(LinkKind {
    Nvlink => "nvlink",
    Pcie => "pcie",
    Network => "network",
});

impl LinkKind {
    /// Every link.
    pub const ALL: [LinkKind; 3] = [LinkKind::Nvlink, LinkKind::Pcie, LinkKind::Network];

    /// The JSON name (`nvlink`).
    pub fn key(self) -> &'static str {
        match self {
            LinkKind::Nvlink => "nvlink",
            LinkKind::Pcie => "pcie",
            LinkKind::Network => "network",
        }
    }

    /// Display label (`NVLink`).
    pub fn label(self) -> &'static str {
        match self {
            LinkKind::Nvlink => "NVLink",
            LinkKind::Pcie => "PCIe",
            LinkKind::Network => "network",
        }
    }
}

/// A link's bandwidth, byte/s in one direction: what a collective's bus bandwidth is compared
/// with (nccl-tests measures one direction, `doc/PERFORMANCE.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkCeiling {
    /// The link.
    pub link: LinkKind,
    /// Bandwidth, byte/s, one direction.
    pub value: f64,
    /// Empirical or theoretical.
    pub method: Method,
    /// What it is (`NVLink 4, 18 links`, `ConnectX-7 400 Gb/s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// For a figure not measured here, its cited source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<FigureSource>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_names_read_as_kinds() {
        for (name, kind) in [
            ("allreduce", CollectiveKind::AllReduce),
            ("nccl:all_reduce", CollectiveKind::AllReduce),
            ("c10d::allreduce_", CollectiveKind::AllReduce),
            ("_allgather_base", CollectiveKind::AllGather),
            ("nccl:_all_gather_base", CollectiveKind::AllGather),
            (
                "reduce_scatter_tensor_coalesced",
                CollectiveKind::ReduceScatter,
            ),
            ("nccl:_reduce_scatter_base", CollectiveKind::ReduceScatter),
            ("nccl:all_to_all", CollectiveKind::AllToAll),
            ("alltoall_base", CollectiveKind::AllToAll),
            ("broadcast", CollectiveKind::Broadcast),
            ("reduce", CollectiveKind::Reduce),
            ("send", CollectiveKind::SendRecv),
            ("nccl:recv 1<-0", CollectiveKind::SendRecv),
            ("gather", CollectiveKind::Gather),
            ("scatter", CollectiveKind::Scatter),
        ] {
            assert_eq!(CollectiveKind::from_recorded(name), Some(kind), "{name}");
        }
        for name in ["wait", "barrier", "init", ""] {
            assert_eq!(CollectiveKind::from_recorded(name), None, "{name}");
        }
    }

    #[test]
    fn kernel_names_read_as_kinds() {
        let k = |n| CollectiveKind::from_kernel_name(n);
        assert_eq!(
            k("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
            Some(CollectiveKind::AllReduce)
        );
        assert_eq!(
            k("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            Some(CollectiveKind::AllGather)
        );
        assert_eq!(
            k("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"),
            Some(CollectiveKind::SendRecv)
        );
        assert_eq!(k("ncclDevKernel_Generic_4(x)"), Some(CollectiveKind::Other));
        assert_eq!(k("volta_sgemm_128x32_nt"), None);
    }
}
