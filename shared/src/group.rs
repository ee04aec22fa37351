//! Reading a kernel list per operator or per module instead of per kernel name.
//!
//! Kernels imported from a torch.profiler trace ([`crate::trace`]) carry the operator that
//! launched them (`op` tag, one `op_id` per operator call) and, where the operator has a
//! complexity rule, the operator call's F and B (`op_flops`, `op_bytes`, `op_datapath`). Grouping
//! makes one entry per operator name (or module): launches and times summed, counters summed as
//! [`crate::aggregate`] does, and the complexity summed once per operator call, so that an
//! operator whose F was not split among its kernels is read whole. Kernels without the tag keep
//! their own entry, named `(no operator) <kernel>`, so nothing is dropped.

use std::collections::{BTreeMap, BTreeSet};

use crate::bundle::{Complexity, Datapath, Flops, Kernel, KernelTime};

/// What to group kernel entries by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupBy {
    /// By kernel name (the default reading; [`group`] leaves the list as it is).
    #[default]
    Kernel,
    /// By the PyTorch operator that launched them (`op` tag).
    Operator,
    /// By the innermost `nn.Module` (`module` tag).
    Module,
}

impl GroupBy {
    /// The tag a grouping reads.
    pub fn tag(self) -> Option<&'static str> {
        match self {
            GroupBy::Kernel => None,
            GroupBy::Operator => Some("op"),
            GroupBy::Module => Some("module"),
        }
    }
}

/// The kernel list regrouped: one entry per (device, operator or module). Entries keep the
/// device; their tags say how they were grouped (`grouped_by`) and how many distinct kernel
/// names they hold (`kernel_names`).
pub fn group(kernels: &[Kernel], by: GroupBy) -> Vec<Kernel> {
    let Some(tag) = by.tag() else {
        return kernels.to_vec();
    };
    struct Acc {
        entry: Kernel,
        names: BTreeSet<String>,
        calls: BTreeSet<(Option<String>, String)>,
        complexity: Option<Complexity>,
        complexity_known: bool,
    }
    let mut groups: BTreeMap<(Option<String>, String), Acc> = BTreeMap::new();
    let mut order = Vec::new();
    for k in kernels {
        let key_name = match k.tags.get(tag) {
            Some(v) => v.clone(),
            None => format!(
                "(no {}) {}",
                if tag == "op" { "operator" } else { "module" },
                k.name
            ),
        };
        let key = (k.device.clone(), key_name.clone());
        let acc = groups.entry(key.clone()).or_insert_with(|| {
            order.push(key.clone());
            let mut e = Kernel::new(key_name.clone(), 0.0, k.source);
            // The operator's full name: the kernel-name shortener would drop its namespace.
            e.display_name = Some(key_name);
            e.device.clone_from(&k.device);
            e.launches = 0;
            e.time = KernelTime {
                total_s: 0.0,
                per_launch: None,
            };
            e.grid = k.grid;
            e.block = k.block;
            e.tags.insert("grouped_by".into(), tag.into());
            Acc {
                entry: e,
                names: BTreeSet::new(),
                calls: BTreeSet::new(),
                complexity: None,
                complexity_known: true,
            }
        });
        // Complexity and FLOPs: an operator call's figures once (its first kernel), else the
        // kernel's own.
        let call_figures = match (
            k.tags.get("op_id"),
            k.tags.get("op_flops").and_then(|v| v.parse::<f64>().ok()),
            k.tags.get("op_bytes").and_then(|v| v.parse::<f64>().ok()),
        ) {
            (Some(id), Some(flops), Some(bytes)) => {
                let first = acc.calls.insert((k.tags.get("rank").cloned(), id.clone()));
                let datapath = k
                    .tags
                    .get("op_datapath")
                    .and_then(|key| Datapath::ALL.into_iter().find(|d| d.key() == key));
                let c = if first {
                    Complexity { flops, bytes }
                } else {
                    Complexity {
                        flops: 0.0,
                        bytes: 0.0,
                    }
                };
                Some((c, datapath))
            }
            _ => None,
        };
        let (own, flops) = match call_figures {
            Some((c, Some(d))) if k.flops.is_unknown() => {
                let mut f = Flops::default();
                f.set(d, Some(c.flops));
                (Some(c), f)
            }
            Some((c, _)) => (Some(c), k.flops.clone()),
            None => (k.complexity, k.flops.clone()),
        };
        let e = &mut acc.entry;
        if e.launches == 0 {
            e.flops = flops;
            e.bytes = k.bytes.clone();
        } else {
            e.flops.add(&flops);
            e.bytes.add(&k.bytes);
            if e.grid != k.grid {
                e.grid = None;
            }
            if e.block != k.block {
                e.block = None;
            }
        }
        e.launches += k.launches;
        e.time.total_s += k.time.total_s;
        acc.names.insert(k.name.clone());
        for t in ["rank", "step"] {
            match (e.tags.get(t), k.tags.get(t)) {
                (None, Some(v)) if e.launches == k.launches => {
                    e.tags.insert(t.into(), v.clone());
                }
                (Some(a), b) if Some(a) != b => {
                    e.tags.remove(t);
                }
                _ => {}
            }
        }
        match own {
            Some(c) => {
                let s = acc.complexity.get_or_insert(Complexity {
                    flops: 0.0,
                    bytes: 0.0,
                });
                s.flops += c.flops;
                s.bytes += c.bytes;
            }
            None => acc.complexity_known = false,
        }
    }
    order
        .into_iter()
        .filter_map(|key| groups.remove(&key))
        .map(|mut acc| {
            let e = &mut acc.entry;
            e.tags
                .insert("kernel_names".into(), acc.names.len().to_string());
            if acc.complexity_known {
                e.complexity = acc.complexity;
            }
            acc.entry
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::DataSource;

    fn k(name: &str, t: f64, tags: &[(&str, &str)]) -> Kernel {
        let mut k = Kernel::new(name, t, DataSource::Import);
        for (a, b) in tags {
            k.tags.insert((*a).into(), (*b).into());
        }
        k
    }

    #[test]
    fn operators_are_counted_once_per_call() {
        let call = |id: &'static str| {
            vec![
                ("op", "aten::native_layer_norm"),
                ("op_id", id),
                ("op_flops", "320"),
                ("op_bytes", "400"),
                ("op_datapath", "fp32"),
                ("op_kernels", "2"),
            ]
        };
        let kernels = vec![
            k("ln_stats", 1.0, &call("7")),
            k("ln_apply", 2.0, &call("7")),
            k("ln_stats", 1.5, &call("9")),
            k("ln_apply", 2.5, &call("9")),
            k("orphan", 0.5, &[]),
        ];
        let g = group(&kernels, GroupBy::Operator);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].name, "aten::native_layer_norm");
        assert_eq!(g[0].launches, 4);
        assert_eq!(g[0].time.total_s, 7.0);
        assert_eq!(
            g[0].complexity,
            Some(Complexity {
                flops: 640.0,
                bytes: 800.0
            })
        );
        assert_eq!(g[0].tags["kernel_names"], "2");
        assert_eq!(g[0].flops.fp32, Some(640.0));
        assert_eq!(g[1].name, "(no operator) orphan");
        assert_eq!(g[1].complexity, None);
        assert_eq!(group(&kernels, GroupBy::Kernel), kernels);
    }

    #[test]
    fn single_kernel_operators_sum_their_own_complexity() {
        let mut a = k("gemm", 1.0, &[("op", "aten::mm")]);
        a.complexity = Some(Complexity {
            flops: 10.0,
            bytes: 4.0,
        });
        a.flops.fp32 = Some(10.0);
        let b = a.clone();
        let g = group(&[a.clone(), b.clone()], GroupBy::Operator);
        assert_eq!(g[0].complexity.unwrap().flops, 20.0);
        assert_eq!(g[0].flops.fp32, Some(20.0));
        // A kernel without complexity makes the group's unknown, never a partial sum.
        let c = k("gemm", 1.0, &[("op", "aten::mm")]);
        let g = group(&[a, b, c], GroupBy::Operator);
        assert_eq!(g[0].complexity, None);
    }

    #[test]
    fn modules_group_their_kernels() {
        let kernels = vec![
            k(
                "gemm",
                1.0,
                &[("module", "Linear_0"), ("step", "ProfilerStep#1")],
            ),
            k(
                "add",
                0.5,
                &[("module", "Linear_0"), ("step", "ProfilerStep#2")],
            ),
            k(
                "gemm",
                2.0,
                &[("module", "Linear_1"), ("step", "ProfilerStep#1")],
            ),
        ];
        let g = group(&kernels, GroupBy::Module);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].name.as_str(), g[0].launches), ("Linear_0", 2));
        assert_eq!(g[0].time.total_s, 1.5);
        assert_eq!(g[0].tags["kernel_names"], "2");
        // Launches of different steps: the group names none.
        assert!(!g[0].tags.contains_key("step"));
        assert_eq!(g[1].tags["step"], "ProfilerStep#1");
    }
}
