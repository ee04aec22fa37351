//! Joining several bundles into one (one per MPI rank or node, a machine run and a profile).
//!
//! Devices are matched by id: the same id must describe the same device, and a device may carry
//! one machine characterization only; anything else is a conflict, refused with the names of the
//! two inputs. Kernels are concatenated in input order.

use crate::bundle::{Bundle, Provenance};

/// Why bundles could not be merged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("nothing to merge: give at least one bundle")]
    Empty,
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

/// Merges labelled bundles (the label, usually a file name, appears in error messages). The
/// result is complete only if every input is; notes and skipped items are kept; `provenance`
/// becomes the caller's (the merge command's own).
///
/// # Errors
/// [`MergeError`] on conflicting device or machine data.
pub fn merge(inputs: &[(String, Bundle)], provenance: Provenance) -> Result<Bundle, MergeError> {
    if inputs.is_empty() {
        return Err(MergeError::Empty);
    }
    let mut out = Bundle::new(provenance);
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
        crate::read::validate(&m).unwrap();
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
