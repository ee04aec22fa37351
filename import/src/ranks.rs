//! One run of several ranks: the bundles of each rank's trace, imported one by one
//! ([`crate::driver::run`], as a single trace is), joined into one bundle with a device per rank
//! ([`RankJoin`]). The join is made from the parts' shells (devices, machines, notes) before any
//! kernel, and each part's kernels then pass through it one at a time ([`RankJoin::kernel`]), so
//! that the joint bundle is written as a stream: memory holds one kernel, never a rank's bundle.
//!
//! A rank's device is named `rank{r}` (`rank{r}:{id}` where a rank ran on several devices), so
//! that two nodes' device 0 stay two devices; every kernel already carries its `rank` tag.
//! Collectives are matched across ranks later, by their place in their process group
//! (`roofline_model::analysis::comm::synchronised`).

use std::collections::{BTreeMap, BTreeSet};

use roofline_model::bundle::{Bundle, Kernel, Provenance};

/// One rank's bundle, as its import made it: its shell and the rank its trace records.
#[derive(Debug, Clone, PartialEq)]
pub struct RankPart {
    /// The trace's name (its file).
    pub name: String,
    /// `distributedInfo.rank`.
    pub rank: Option<String>,
    /// The part's bundle without its kernels.
    pub shell: Bundle,
}

/// Why parts cannot be joined.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RankError {
    /// A trace records no rank.
    #[error(
        "{name} records no rank (distributedInfo.rank): a run of several ranks is joined rank by rank; import it alone, or write one bundle per trace with -o DIR/"
    )]
    NoRank {
        /// The trace.
        name: String,
    },
    /// Two traces of one rank.
    #[error(
        "{first} and {second} are both rank {rank}: one trace per rank (two steps of one rank are two runs; import them apart)"
    )]
    SameRank {
        /// The rank.
        rank: String,
        /// The first trace.
        first: String,
        /// The second.
        second: String,
    },
}

/// Several ranks' bundles joined into one: the joint shell, and each part's device ids renamed.
#[derive(Debug, Clone, PartialEq)]
pub struct RankJoin {
    shell: Bundle,
    /// The parts in rank order.
    order: Vec<usize>,
    /// Per part: its device ids → the joint bundle's.
    ids: Vec<BTreeMap<String, String>>,
    /// Per part: the id of its only device, for kernels that name none.
    only: Vec<Option<String>>,
}

/// A rank's number for sorting: its number where it is one.
fn rank_key(r: &str) -> (u64, String) {
    (r.parse().unwrap_or(u64::MAX), r.to_string())
}

impl RankJoin {
    /// The joint shell of `parts` (in rank order: their devices, machines and notes, each note
    /// a part's own said once where all parts say it, else prefixed with its rank), with
    /// `provenance`.
    ///
    /// # Errors
    /// [`RankError`]: a part without a rank, two parts of one rank.
    pub fn new(parts: &[RankPart], provenance: Provenance) -> Result<Self, RankError> {
        let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
        for p in parts {
            let rank = p.rank.as_deref().ok_or_else(|| RankError::NoRank {
                name: p.name.clone(),
            })?;
            if let Some(first) = seen.insert(rank, &p.name) {
                return Err(RankError::SameRank {
                    rank: rank.to_string(),
                    first: first.to_string(),
                    second: p.name.clone(),
                });
            }
        }
        let mut shell = Bundle::new(provenance);
        let mut ids = Vec::with_capacity(parts.len());
        let mut only = Vec::with_capacity(parts.len());
        let mut order: Vec<usize> = (0..parts.len()).collect();
        order.sort_by_key(|&i| rank_key(parts[i].rank.as_deref().unwrap_or("")));
        let mut renames: Vec<BTreeMap<String, String>> = vec![BTreeMap::new(); parts.len()];
        for &i in &order {
            let p = &parts[i];
            let rank = p.rank.as_deref().unwrap_or("");
            let several = p.shell.devices.len() > 1;
            for d in &p.shell.devices {
                let id = if several {
                    format!("rank{rank}:{}", d.id)
                } else {
                    format!("rank{rank}")
                };
                renames[i].insert(d.id.clone(), id.clone());
                let mut d = d.clone();
                d.id = id;
                shell.devices.push(d);
            }
            for m in &p.shell.machines {
                let mut m = m.clone();
                if let Some(id) = renames[i].get(&m.device) {
                    m.device.clone_from(id);
                }
                shell.machines.push(m);
            }
            shell.complete &= p.shell.complete;
            shell.skipped.extend(p.shell.skipped.iter().cloned());
        }
        for (i, p) in parts.iter().enumerate() {
            only.push(match p.shell.devices.as_slice() {
                [d] => renames[i].get(&d.id).cloned(),
                _ => None,
            });
            ids.push(std::mem::take(&mut renames[i]));
        }
        // Notes every part says alike, once; the others with their rank.
        let common: BTreeSet<&String> = parts
            .iter()
            .map(|p| p.shell.notes.iter().collect::<BTreeSet<_>>())
            .reduce(|a, b| a.intersection(&b).copied().collect())
            .unwrap_or_default();
        let ranks: Vec<&str> = order
            .iter()
            .map(|&i| parts[i].rank.as_deref().unwrap_or(""))
            .collect();
        shell.notes.push(format!(
            "one run of {} ranks ({}), one trace each, joined: rank r's device is `rank{{r}}`; collectives are matched across ranks by their place in their process group (`roofline info` gives each one's skew and straggler); each trace's clock is its host's, so ranks on several nodes compare as their clocks agree",
            parts.len(),
            ranks.join(", ")
        ));
        for n in parts.first().map(|p| &p.shell.notes).into_iter().flatten() {
            if common.contains(n) {
                shell.notes.push(n.clone());
            }
        }
        for &i in &order {
            let p = &parts[i];
            for n in &p.shell.notes {
                if !common.contains(n) {
                    shell
                        .notes
                        .push(format!("rank {}: {n}", p.rank.as_deref().unwrap_or("")));
                }
            }
        }
        let names: Vec<&str> = order.iter().map(|&i| parts[i].name.as_str()).collect();
        shell.description = Some(format!(
            "imported from {} torch.profiler traces, one per rank: {}",
            parts.len(),
            names.join(", ")
        ));
        Ok(RankJoin {
            shell,
            order,
            ids,
            only,
        })
    }

    /// The parts (indices into those given) in rank order: the order their kernels are written.
    pub fn order(&self) -> &[usize] {
        &self.order
    }

    /// The joint bundle's shell (everything but its kernels).
    pub fn shell(&self) -> &Bundle {
        &self.shell
    }

    /// A kernel of part `part` as the joint bundle holds it: its device renamed (or named,
    /// where the part's only device went without saying).
    pub fn kernel(&self, part: usize, k: &mut Kernel) {
        let renamed = match &k.device {
            Some(d) => self.ids[part].get(d).cloned(),
            None => self.only[part].clone(),
        };
        if renamed.is_some() {
            k.device = renamed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_model::bundle::{DataSource, Device, Machine};

    fn part(name: &str, rank: Option<&str>, device: &str, notes: &[&str]) -> RankPart {
        let mut shell = Bundle::new(Provenance::default());
        shell
            .devices
            .push(Device::new(device, "Tesla V100-SXM2-32GB"));
        shell.machines.push(Machine {
            device: device.into(),
            ..Machine::default()
        });
        shell.notes = notes.iter().map(|n| n.to_string()).collect();
        RankPart {
            name: name.into(),
            rank: rank.map(str::to_string),
            shell,
        }
    }

    #[test]
    fn ranks_become_devices_and_their_notes_are_told_apart() {
        let parts = [
            part("b.json", Some("1"), "1", &["same", "device 1 only"]),
            part("a.json", Some("0"), "0", &["same", "device 0 only"]),
        ];
        let j = RankJoin::new(&parts, Provenance::default()).unwrap();
        let s = j.shell();
        let ids: Vec<&str> = s.devices.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["rank0", "rank1"]);
        assert_eq!(s.machines[0].device, "rank0");
        assert!(
            s.notes[0].starts_with("one run of 2 ranks (0, 1)"),
            "{:?}",
            s.notes
        );
        assert_eq!(s.notes[1], "same");
        assert_eq!(
            &s.notes[2..],
            ["rank 0: device 0 only", "rank 1: device 1 only"]
        );
        assert_eq!(
            s.description.as_deref(),
            Some("imported from 2 torch.profiler traces, one per rank: a.json, b.json")
        );
        let mut k = Kernel::new("k", 1e-6, DataSource::Import);
        j.kernel(0, &mut k);
        assert_eq!(k.device.as_deref(), Some("rank1"));
        k.device = Some("0".into());
        j.kernel(1, &mut k);
        assert_eq!(k.device.as_deref(), Some("rank0"));
        let mut whole = s.clone();
        whole.kernels.push(k);
        roofline_model::validate(&whole).unwrap();
    }

    #[test]
    fn a_part_without_a_rank_or_a_rank_twice_is_refused() {
        let e =
            RankJoin::new(&[part("a.json", None, "0", &[])], Provenance::default()).unwrap_err();
        assert!(e.to_string().starts_with("a.json records no rank"), "{e}");
        let e = RankJoin::new(
            &[
                part("a.json", Some("3"), "0", &[]),
                part("b.json", Some("3"), "1", &[]),
            ],
            Provenance::default(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.json and b.json are both rank 3: one trace per rank (two steps of one rank are two runs; import them apart)"
        );
    }
}
