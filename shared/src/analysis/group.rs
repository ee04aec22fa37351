//! Reading a kernel list per operator or per module instead of per kernel name, and the one
//! vocabulary of those groupings ([`GroupBy`]: its CLI value, URL value, nouns and tag).
//!
//! Kernels imported from a torch.profiler trace carry the operator call that launched them
//! ([`Kernel::operator`]: the operator's name, the call's number and, where a rule gave it, the
//! call's F and B) and the innermost `nn.Module` (`module` tag). Grouping makes one entry per
//! operator name (or module): launches and times summed, counters summed as [`crate::analysis::aggregate`]
//! does, and the complexity summed once per operator call, so that an operator whose F was not
//! split among its kernels is read whole. Kernels without an operator (or module) keep their own
//! entry, named `(no operator) <kernel>`, so nothing is dropped. [`Grouper`] does it kernel by
//! kernel, as a bundle is read, so that a million launches are never held.

use std::collections::BTreeSet;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::bundle::{Complexity, Kernel, KernelTime};

/// What to group kernel entries by: the one vocabulary of `roofline info --group-by`, the
/// viewer's `group=` URL value and its picker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupBy {
    /// By kernel name (the default reading; [`group`] leaves the list as it is).
    #[default]
    Kernel,
    /// By the PyTorch operator that launched them ([`Kernel::operator`]).
    Operator,
    /// By the innermost `nn.Module` (`module` tag).
    Module,
}

impl GroupBy {
    /// Every grouping, in the order pickers list them.
    pub const ALL: [GroupBy; 3] = [GroupBy::Kernel, GroupBy::Operator, GroupBy::Module];

    /// The name on the command line (`--group-by op`) and in the viewer's URL (`group=op`).
    pub fn key(self) -> &'static str {
        match self {
            GroupBy::Kernel => "kernel",
            GroupBy::Operator => "op",
            GroupBy::Module => "module",
        }
    }

    /// The grouping a [`GroupBy::key`] names.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|g| g.key() == key)
    }

    /// What each value means, for `--help` and the viewer's picker.
    pub fn help(self) -> &'static str {
        match self {
            GroupBy::Kernel => "Kernel name",
            GroupBy::Operator => {
                "The PyTorch operator that launched the kernels (operator F and B counted once per call)"
            }
            GroupBy::Module => "The innermost nn.Module (traces recorded with with_modules=True)",
        }
    }

    /// The singular noun for a column header: `kernel`, `operator`, `module`.
    pub fn noun(self) -> &'static str {
        match self {
            GroupBy::Kernel => "kernel",
            GroupBy::Operator => "operator",
            GroupBy::Module => "module",
        }
    }

    /// The noun as a column heading: `Kernel`, `Operator`, `Module`.
    pub fn heading(self) -> &'static str {
        match self {
            GroupBy::Kernel => "Kernel",
            GroupBy::Operator => "Operator",
            GroupBy::Module => "Module",
        }
    }

    /// The plural noun: `kernels`, `operators`, `modules`.
    pub fn plural(self) -> &'static str {
        match self {
            GroupBy::Kernel => "kernels",
            GroupBy::Operator => "operators",
            GroupBy::Module => "modules",
        }
    }

    /// The tag a torch.profiler import writes for this grouping, where it is a tag.
    pub const MODULE_TAG: &'static str = "module";

    /// The tag [`group`] writes on every entry it makes: the grouping's [`GroupBy::key`].
    pub const GROUPED_BY_TAG: &'static str = "grouped_by";

    /// The tag [`group`] writes on each operator's entry: how many operator calls launched its
    /// kernels (one call may launch several kernels: `launches` alone would divide its F by
    /// them).
    pub const CALLS_TAG: &'static str = "calls";

    /// The name of the group a kernel belongs to, `None` for kernels without one (and for
    /// [`GroupBy::Kernel`], which makes no groups).
    pub fn group_of(self, k: &Kernel) -> Option<&str> {
        match self {
            GroupBy::Kernel => None,
            GroupBy::Operator => k.operator.as_ref().map(|o| o.name.as_str()),
            GroupBy::Module => k.tags.get(Self::MODULE_TAG).map(String::as_str),
        }
    }

    /// How entries were grouped: the [`GroupBy::GROUPED_BY_TAG`] [`group`] writes (read from
    /// the first entry; all carry the same). Entries without it are kernels.
    pub fn of(kernels: &[Kernel]) -> Self {
        kernels
            .first()
            .and_then(|k| k.tags.get(Self::GROUPED_BY_TAG))
            .and_then(|v| Self::from_key(v))
            .unwrap_or(GroupBy::Kernel)
    }

    /// Whether a kernel list holds anything this grouping can group (a torch.profiler import's
    /// operators or modules); always true for [`GroupBy::Kernel`].
    pub fn applies_to(self, kernels: &[Kernel]) -> bool {
        self == GroupBy::Kernel || kernels.iter().any(|k| self.group_of(k).is_some())
    }
}

/// Regroups a bundle's kernels in place ([`group`]); does nothing for [`GroupBy::Kernel`].
pub fn regroup(bundle: &mut crate::bundle::Bundle, by: GroupBy) {
    if by != GroupBy::Kernel {
        bundle.kernels = group(&bundle.kernels, by);
    }
}

/// The kernel list regrouped: one entry per (device, operator or module). Entries keep the
/// device; their tags say how they were grouped ([`GroupBy::GROUPED_BY_TAG`]) and how many
/// distinct kernel names they hold (`kernel_names`).
pub fn group(kernels: &[Kernel], by: GroupBy) -> Vec<Kernel> {
    if by == GroupBy::Kernel {
        return kernels.to_vec();
    }
    let mut g = Grouper::new(by);
    for k in kernels {
        g.push(k);
    }
    g.finish()
}

/// One group being made: its entry, its kernel names, and whether its complexity is known.
struct Acc {
    entry: Kernel,
    names: BTreeSet<String>,
    /// The operator calls among its kernels.
    calls: u64,
    complexity: Option<Complexity>,
    complexity_known: bool,
    /// Whether its kernels' collectives differ, so that the group carries none.
    collective_dropped: bool,
}

/// [`group`] one kernel at a time, as a bundle is read, so that a million launches are never
/// held: memory grows with the groups (operators or modules per device, and the kernels
/// without one by name) and the operator calls seen (each call's F is counted once), not with
/// the launches.
pub struct Grouper {
    by: GroupBy,
    groups: FxHashMap<(Option<String>, String), usize>,
    accs: Vec<Acc>,
    /// Operator calls whose complexity is counted, by (rank, call number); ranks interned.
    calls: FxHashSet<(u32, u64)>,
    /// Every operator call seen, by (rank, call number): each counted once in its group.
    every_call: FxHashSet<(u32, u64)>,
    ranks: FxHashMap<Option<String>, u32>,
}

impl Grouper {
    /// No kernels yet; `by` is an operator or module grouping (kernels are grouped by name by
    /// [`crate::analysis::aggregate::Aggregator`]).
    pub fn new(by: GroupBy) -> Self {
        Grouper {
            by,
            groups: FxHashMap::default(),
            accs: Vec::new(),
            calls: FxHashSet::default(),
            every_call: FxHashSet::default(),
            ranks: FxHashMap::default(),
        }
    }

    /// Adds one kernel entry to its group.
    pub fn push(&mut self, k: &Kernel) {
        let by = self.by;
        let key_name = match by.group_of(k) {
            Some(v) => v.to_string(),
            None => format!("(no {}) {}", by.noun(), k.name),
        };
        let key = (k.device.clone(), key_name);
        let at = match self.groups.get(&key) {
            Some(&i) => i,
            None => {
                let key_name = key.1.clone();
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
                e.tags
                    .insert(GroupBy::GROUPED_BY_TAG.into(), by.key().into());
                self.accs.push(Acc {
                    entry: e,
                    names: BTreeSet::new(),
                    calls: 0,
                    complexity: None,
                    complexity_known: true,
                    collective_dropped: false,
                });
                self.groups.insert(key, self.accs.len() - 1);
                self.accs.len() - 1
            }
        };
        // The call's rank, interned; the call counted once in its group.
        let rank = k.operator.as_ref().map(|op| {
            let next = u32::try_from(self.ranks.len()).unwrap_or(u32::MAX);
            let rank = *self
                .ranks
                .entry(k.tags.get("rank").cloned())
                .or_insert(next);
            if self.every_call.insert((rank, op.call)) {
                self.accs[at].calls += 1;
            }
            rank
        });
        // Complexity: an operator call's figures once (its first kernel), else the kernel's own.
        // FLOPs are the kernels' counters only.
        let own = match k
            .operator
            .as_ref()
            .and_then(|op| Some((op, op.complexity?)))
        {
            Some((op, c)) => {
                let first = self.calls.insert((rank.unwrap_or(0), op.call));
                Some(if first {
                    c
                } else {
                    Complexity {
                        datapath: c.datapath,
                        ..Complexity::new(0.0, 0.0)
                    }
                })
            }
            None => k.complexity,
        };
        let acc = &mut self.accs[at];
        let flops = &k.flops;
        let e = &mut acc.entry;
        if e.launches == 0 {
            e.flops = flops.clone();
            e.bytes = k.bytes.clone();
            e.collective.clone_from(&k.collective);
        } else {
            e.flops.add(flops);
            e.bytes.add(&k.bytes);
            if !acc.collective_dropped {
                match (&mut e.collective, &k.collective) {
                    (Some(a), Some(c)) if a.kind == c.kind => {
                        crate::analysis::aggregate::merge_collective(a, c);
                    }
                    _ => {
                        e.collective = None;
                        acc.collective_dropped = true;
                    }
                }
            }
            if e.grid != k.grid {
                e.grid = None;
            }
            if e.block != k.block {
                e.block = None;
            }
        }
        e.launches += k.launches;
        e.time.total_s += k.time.total_s;
        if !acc.names.contains(&k.name) {
            acc.names.insert(k.name.clone());
        }
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
            Some(c) => match &mut acc.complexity {
                Some(s) => s.add(&c),
                None => acc.complexity = Some(c),
            },
            None => acc.complexity_known = false,
        }
    }

    /// The groups, in the order of their first kernel.
    pub fn finish(self) -> Vec<Kernel> {
        self.accs
            .into_iter()
            .map(|mut acc| {
                let e = &mut acc.entry;
                e.tags
                    .insert("kernel_names".into(), acc.names.len().to_string());
                if self.by == GroupBy::Operator && acc.calls > 0 {
                    e.tags
                        .insert(GroupBy::CALLS_TAG.into(), acc.calls.to_string());
                }
                if acc.complexity_known {
                    e.complexity = acc.complexity;
                }
                acc.entry
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{DataSource, Datapath, OperatorCall};

    fn k(name: &str, t: f64, tags: &[(&str, &str)]) -> Kernel {
        let mut k = Kernel::new(name, t, DataSource::Import);
        for (a, b) in tags {
            k.tags.insert((*a).into(), (*b).into());
        }
        k
    }

    fn launched_by(mut k: Kernel, name: &str, call: u64, complexity: Option<(f64, f64)>) -> Kernel {
        k.operator = Some(OperatorCall {
            name: name.into(),
            call,
            kernels: 2,
            shapes: None,
            complexity: complexity.map(|(flops, bytes)| Complexity {
                flops,
                bytes,
                datapath: Some(Datapath::Fp32),
            }),
            rule: None,
        });
        k
    }

    #[test]
    fn operators_are_counted_once_per_call() {
        let ln = |name: &str, t: f64, call: u64| {
            launched_by(
                k(name, t, &[]),
                "aten::native_layer_norm",
                call,
                Some((320.0, 400.0)),
            )
        };
        let kernels = vec![
            ln("ln_stats", 1.0, 7),
            ln("ln_apply", 2.0, 7),
            ln("ln_stats", 1.5, 9),
            ln("ln_apply", 2.5, 9),
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
                bytes: 800.0,
                datapath: Some(Datapath::Fp32),
            })
        );
        assert_eq!(g[0].tags["kernel_names"], "2");
        assert_eq!(g[0].tags[GroupBy::GROUPED_BY_TAG], "op");
        // Two calls of two kernels each: four launches, two calls.
        assert_eq!(g[0].tags[GroupBy::CALLS_TAG], "2");
        assert!(!g[1].tags.contains_key(GroupBy::CALLS_TAG));
        // FLOPs are the kernels' counters, of which these have none: F is in the complexity.
        assert!(g[0].flops.is_unknown());
        assert_eq!(g[1].name, "(no operator) orphan");
        assert_eq!(g[1].complexity, None);
        assert_eq!(group(&kernels, GroupBy::Kernel), kernels);
        assert_eq!(GroupBy::of(&g), GroupBy::Operator);
        assert_eq!(GroupBy::of(&kernels), GroupBy::Kernel);
    }

    #[test]
    fn single_kernel_operators_sum_their_own_complexity() {
        let mut a = launched_by(k("gemm", 1.0, &[]), "aten::mm", 1, None);
        a.complexity = Some(Complexity {
            flops: 10.0,
            bytes: 4.0,
            datapath: None,
        });
        a.flops.fp32 = Some(10.0);
        let mut b = a.clone();
        b.operator.as_mut().unwrap().call = 2;
        let g = group(&[a.clone(), b.clone()], GroupBy::Operator);
        assert_eq!(g[0].complexity.unwrap().flops, 20.0);
        assert_eq!(g[0].flops.fp32, Some(20.0));
        // A kernel without complexity makes the group's unknown, never a partial sum.
        let c = launched_by(k("gemm", 1.0, &[]), "aten::mm", 3, None);
        let g = group(&[a, b, c], GroupBy::Operator);
        assert_eq!(g[0].complexity, None);
    }

    #[test]
    fn the_vocabulary_reads_back_its_own_keys() {
        for g in GroupBy::ALL {
            assert_eq!(GroupBy::from_key(g.key()), Some(g));
        }
        assert_eq!(GroupBy::from_key("operator"), None);
        let kernels = vec![k("gemm", 1.0, &[("module", "Linear_0")])];
        assert!(GroupBy::Module.applies_to(&kernels));
        assert!(!GroupBy::Operator.applies_to(&kernels));
        assert!(GroupBy::Kernel.applies_to(&kernels));
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
