//! Joining several bundles into one (one per MPI rank or node, a machine run and a profile).
//!
//! Devices are matched by id: the same id must describe the same device, and a device may carry
//! one machine characterization only; anything else is a conflict, refused with the names of the
//! two inputs. Kernels are concatenated in input order.
//!
//! Each input has two identities: its [`digest`] (the bundle), and its run's, [`run_digest`] (its
//! kernels' names, launches and times, whatever output and provenance they were imported into);
//! the merged bundle records both of all its parts (theirs included) in
//! `provenance.merged_from`. The same bundle twice, the same run imported twice, a bundle with
//! one of its own parts, or two merged bundles sharing a part are refused: each would count the
//! same launches twice.

use sha2::{Digest, Sha256};

use crate::bundle::{Bundle, Provenance};

/// A bundle's identity: the SHA-256 of its canonical JSON (compact, fields in declaration order,
/// numbers in shortest round-trip form, as this crate writes them), in lowercase hexadecimal. A
/// bundle read back from any spelling of the same content (pretty-printed, reindented) has the
/// same digest; a bundle that differs in any figure, name or provenance does not.
///
/// # Errors
/// The serializer's message, should the bundle not serialize (it always does for bundles read
/// or built by this crate).
pub fn digest(bundle: &Bundle) -> Result<String, String> {
    let json = serde_json::to_vec(bundle).map_err(|e| e.to_string())?;
    Ok(Sha256::digest(&json)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// A run's identity, whatever output it was imported into: the SHA-256 of its kernel entries'
/// names, launch counts, times (to the bit), grids, blocks, operator calls and the `stream`,
/// `step` and `rank` tags, in order, in lowercase hexadecimal; `None` for a bundle without
/// kernels (a machine characterization). The same trace or captures imported twice (other
/// provenance, another `--machine`, counters joined or not) give the same identity; two runs
/// never do, as their measured times differ.
pub fn run_digest(bundle: &Bundle) -> Option<String> {
    if bundle.kernels.is_empty() {
        return None;
    }
    let mut h = Sha256::new();
    for k in &bundle.kernels {
        h.update(k.name.as_bytes());
        h.update([0]);
        h.update(k.launches.to_le_bytes());
        h.update(k.time.total_s.to_bits().to_le_bytes());
        for dims in [k.grid, k.block] {
            match dims {
                Some(d) => d.iter().for_each(|x| h.update(x.to_le_bytes())),
                None => h.update([0xff]),
            }
        }
        if let Some(op) = &k.operator {
            h.update(op.name.as_bytes());
            h.update(op.call.to_le_bytes());
        }
        h.update([0]);
        for t in ["stream", "step", "rank"] {
            if let Some(v) = k.tags.get(t) {
                h.update(t.as_bytes());
                h.update(v.as_bytes());
            }
            h.update([0]);
        }
    }
    Some(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Why bundles could not be merged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("nothing to merge: give at least one bundle")]
    Empty,
    /// Two inputs hold the same bundle.
    #[error(
        "{first} and {second} hold the same bundle: merged, every launch would count twice; give each input once"
    )]
    SameBundle {
        /// The first input.
        first: String,
        /// The input that repeats it.
        second: String,
    },
    /// Two inputs hold the same run (the same kernels, launches and times), imported twice.
    #[error(
        "{first} and {second} hold the same run: the same {entries} kernel entries, with the same names, launches and times (the same trace or captures imported twice?); merged, every launch would count twice; give each run once"
    )]
    SameRun {
        /// The first input.
        first: String,
        /// The input that repeats its run.
        second: String,
        /// Its kernel entries.
        entries: usize,
    },
    /// One input is a merge that already holds another input.
    #[error(
        "{whole} already holds {part} (it was merged into it before): every launch would count twice; leave {part} out"
    )]
    AlreadyHolds {
        /// The merged input.
        whole: String,
        /// The input it already holds.
        part: String,
    },
    /// Two merged inputs hold a common part.
    #[error(
        "{first} and {second} both hold the same merged part: its launches would count twice; merge the original parts instead"
    )]
    SharedPart {
        /// The first input.
        first: String,
        /// The second.
        second: String,
    },
    /// An input could not be serialized to take its digest.
    #[error("cannot take the digest of {input}: {reason}")]
    Digest {
        /// The input.
        input: String,
        /// The serializer's message.
        reason: String,
    },
    /// One device id, two different devices.
    #[error(
        "device {id:?} differs between {first} and {second} ({what}); give the devices distinct ids (for example their UUIDs) before merging"
    )]
    DeviceConflict {
        /// The device id.
        id: String,
        /// The input that declared it first.
        first: String,
        /// The input that disagrees.
        second: String,
        /// What differs.
        what: String,
    },
    /// Two different machine characterizations for one device.
    #[error(
        "device {id:?} has different machine data in {first} and {second}; keep the machine in one input only (or measure once and pass it to both)"
    )]
    MachineConflict {
        /// The device id.
        id: String,
        /// The input that gave it first.
        first: String,
        /// The input that disagrees.
        second: String,
    },
}

/// Refuses inputs that would count the same launches twice, and returns the merged bundle's
/// `merged_from`: every input's digest and recorded parts, sorted and without repeats.
fn parts(inputs: &[(String, Bundle)]) -> Result<Vec<String>, MergeError> {
    /// One input's identities: its digest, its run's ([`run_digest`]), its recorded parts.
    struct Part<'a> {
        label: &'a str,
        own: String,
        run: Option<String>,
        held: &'a [String],
        entries: usize,
    }
    let mut seen: Vec<Part<'_>> = Vec::with_capacity(inputs.len());
    for (label, b) in inputs {
        let own = digest(b).map_err(|reason| MergeError::Digest {
            input: label.clone(),
            reason,
        })?;
        let run = run_digest(b);
        let held = b.provenance.merged_from.as_slice();
        // This input's identities: what a part recorded in another must not be.
        let mine = |p: &String| *p == own || run.as_ref() == Some(p);
        for f in &seen {
            let (first, second) = (f.label.to_string(), label.clone());
            if f.own == own {
                return Err(MergeError::SameBundle { first, second });
            }
            if run.is_some() && f.run == run {
                return Err(MergeError::SameRun {
                    first,
                    second,
                    entries: f.entries,
                });
            }
            if f.held.iter().any(mine) {
                return Err(MergeError::AlreadyHolds {
                    whole: first,
                    part: second,
                });
            }
            if held.contains(&f.own) || f.run.as_ref().is_some_and(|r| held.contains(r)) {
                return Err(MergeError::AlreadyHolds {
                    whole: second,
                    part: first,
                });
            }
            if f.held.iter().any(|p| held.contains(p)) {
                return Err(MergeError::SharedPart { first, second });
            }
        }
        seen.push(Part {
            label,
            own,
            run,
            held,
            entries: b.kernels.len(),
        });
    }
    let mut all: Vec<String> = seen
        .into_iter()
        .flat_map(|p| {
            std::iter::once(p.own)
                .chain(p.run)
                .chain(p.held.iter().cloned())
        })
        .collect();
    all.sort_unstable();
    all.dedup();
    Ok(all)
}

/// Merges labelled bundles (the label, usually a file name, appears in error messages). The
/// result is complete only if every input is; notes and skipped items are kept; `provenance`
/// becomes the caller's (the merge command's own), with `merged_from` listing the inputs'
/// digests and their own parts.
///
/// # Errors
/// [`MergeError`] on conflicting device or machine data, and on inputs that would count the
/// same launches twice (the same bundle twice, a bundle with one of its own parts, two merged
/// bundles with a common part).
pub fn merge(inputs: &[(String, Bundle)], provenance: Provenance) -> Result<Bundle, MergeError> {
    if inputs.is_empty() {
        return Err(MergeError::Empty);
    }
    let merged_from = parts(inputs)?;
    let mut out = Bundle::new(Provenance {
        merged_from,
        ..provenance
    });
    let mut device_from: Vec<&str> = Vec::new();
    let mut machine_from: Vec<&str> = Vec::new();
    for (label, b) in inputs {
        out.complete &= b.complete;
        for d in &b.devices {
            match out.devices.iter().position(|x| x.id == d.id) {
                None => {
                    out.devices.push(d.clone());
                    device_from.push(label);
                }
                Some(i) if out.devices[i] == *d => {}
                Some(i) => {
                    let o = &out.devices[i];
                    let what = if o.name == d.name {
                        "same name, other attributes".to_string()
                    } else {
                        format!("{:?} vs {:?}", o.name, d.name)
                    };
                    return Err(MergeError::DeviceConflict {
                        id: d.id.clone(),
                        first: device_from[i].to_string(),
                        second: label.clone(),
                        what,
                    });
                }
            }
        }
        for m in &b.machines {
            match out.machines.iter().position(|x| x.device == m.device) {
                None => {
                    out.machines.push(m.clone());
                    machine_from.push(label);
                }
                Some(i) if out.machines[i] == *m => {}
                Some(i) => {
                    return Err(MergeError::MachineConflict {
                        id: m.device.clone(),
                        first: machine_from[i].to_string(),
                        second: label.clone(),
                    });
                }
            }
        }
        // A kernel without a device meant "the only device" of its input; keep that meaning.
        let only = (b.devices.len() == 1).then(|| b.devices[0].id.clone());
        out.kernels.extend(b.kernels.iter().map(|k| {
            let mut k = k.clone();
            if k.device.is_none() {
                k.device.clone_from(&only);
            }
            k
        }));
        out.skipped.extend(b.skipped.iter().cloned());
        out.notes
            .extend(b.notes.iter().map(|n| format!("{label}: {n}")));
        if let Some(d) = &b.description {
            out.notes.push(format!("{label}: {d}"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{DataSource, Device, Kernel, LaunchOverhead, Machine, Method};

    fn device(id: &str, name: &str) -> Device {
        Device {
            compute_capability: Some("9.0".into()),
            sm_count: Some(132),
            ..Device::new(id, name)
        }
    }

    fn rank(name: &str, dev: Device, machine: bool) -> Bundle {
        let mut b = Bundle::new(Provenance::default());
        if machine {
            b.machines.push(Machine {
                device: dev.id.clone(),
                ..Machine::default()
            });
        }
        b.devices.push(dev);
        b.kernels
            .push(Kernel::new(name, 1e-3, DataSource::NsightCompute));
        b
    }

    #[test]
    fn ranks_on_identical_devices_merge() {
        let mut r1 = rank("b", device("0", "H100"), false);
        r1.complete = false;
        let inputs = vec![
            (
                "run-0.json".to_string(),
                rank("a", device("0", "H100"), true),
            ),
            ("run-1.json".to_string(), r1),
        ];
        let m = merge(&inputs, Provenance::default()).unwrap();
        assert_eq!(m.devices.len(), 1);
        assert_eq!(m.machines.len(), 1);
        assert_eq!(m.kernels.len(), 2);
        assert_eq!(m.kernels[1].device.as_deref(), Some("0"));
        assert!(!m.complete);
        crate::bundle::read::validate(&m).unwrap();
    }

    #[test]
    fn the_same_launches_are_never_merged_twice() {
        let a = rank("a", device("0", "H100"), false);
        let b = rank("b", device("0", "H100"), false);
        let c = rank("c", device("0", "H100"), false);
        let l = |s: &str, b: &Bundle| (s.to_string(), b.clone());
        let e = merge(
            &[l("a.json", &a), l("copy.json", &a)],
            Provenance::default(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.json and copy.json hold the same bundle: merged, every launch would count twice; give each input once"
        );
        // The same run in another output (other provenance, notes): refused as the same run.
        let mut again = a.clone();
        again.provenance.created = Some("2030-01-01T00:00:00Z".into());
        again.notes.push("imported again".into());
        let e = merge(
            &[l("a.json", &a), l("again.json", &again)],
            Provenance::default(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.json and again.json hold the same run: the same 1 kernel entries, with the same names, launches and times (the same trace or captures imported twice?); merged, every launch would count twice; give each run once"
        );
        let ab = merge(&[l("a", &a), l("b", &b)], Provenance::default()).unwrap();
        assert_eq!(ab.provenance.merged_from.len(), 4);
        let e = merge(
            &[l("ab.json", &ab), l("again.json", &again)],
            Provenance::default(),
        )
        .unwrap_err();
        assert!(
            matches!(&e, MergeError::AlreadyHolds { whole, part } if whole == "ab.json" && part == "again.json"),
            "{e}"
        );
        assert!(ab.provenance.merged_from.contains(&digest(&a).unwrap()));
        let e = merge(&[l("ab.json", &ab), l("a.json", &a)], Provenance::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ab.json already holds a.json (it was merged into it before): every launch would count twice; leave a.json out"
        );
        let e = merge(&[l("b.json", &b), l("ab.json", &ab)], Provenance::default()).unwrap_err();
        assert!(
            matches!(&e, MergeError::AlreadyHolds { whole, part } if whole == "ab.json" && part == "b.json"),
            "{e}"
        );
        // Parts of parts are recorded too.
        let abc = merge(&[l("ab", &ab), l("c", &c)], Provenance::default()).unwrap();
        assert_eq!(abc.provenance.merged_from.len(), 8);
        let e = merge(&[l("abc", &abc), l("a", &a)], Provenance::default()).unwrap_err();
        assert!(matches!(e, MergeError::AlreadyHolds { .. }), "{e}");
        let bc = merge(&[l("b", &b), l("c", &c)], Provenance::default()).unwrap();
        let e = merge(&[l("ab", &ab), l("bc", &bc)], Provenance::default()).unwrap_err();
        assert!(matches!(e, MergeError::SharedPart { .. }), "{e}");
        // Distinct bundles still merge, and the digest ignores how the JSON was spelled.
        let pretty = serde_json::to_string_pretty(&a).unwrap();
        let reread: Bundle = serde_json::from_str(&pretty).unwrap();
        assert_eq!(digest(&reread).unwrap(), digest(&a).unwrap());
        assert_ne!(digest(&a).unwrap(), digest(&b).unwrap());
        let all = merge(&[l("a", &a), l("b", &b), l("c", &c)], Provenance::default()).unwrap();
        assert_eq!(all.kernels.len(), 3);
        crate::bundle::read::validate(&all).unwrap();
    }

    #[test]
    fn conflicts_are_refused_with_both_inputs_named() {
        let inputs = vec![
            ("a.json".to_string(), rank("a", device("0", "H100"), false)),
            ("b.json".to_string(), rank("b", device("0", "A100"), false)),
        ];
        let e = merge(&inputs, Provenance::default()).unwrap_err();
        assert!(
            e.to_string()
                .contains("device \"0\" differs between a.json and b.json (\"H100\" vs \"A100\")"),
            "{e}"
        );

        let mut other = rank("b", device("0", "H100"), true);
        other.machines[0].launch_overhead = Some(LaunchOverhead::new(1e-6, Method::Empirical));
        let inputs = vec![
            ("a.json".to_string(), rank("a", device("0", "H100"), true)),
            ("b.json".to_string(), other),
        ];
        let e = merge(&inputs, Provenance::default()).unwrap_err();
        assert!(matches!(e, MergeError::MachineConflict { .. }), "{e}");
        assert_eq!(
            merge(&[], Provenance::default()).unwrap_err(),
            MergeError::Empty
        );
    }
}
