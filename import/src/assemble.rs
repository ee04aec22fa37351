//! Imported pieces into one bundle: the kernels, devices and notes an importer returns, placed
//! against a machine bundle when one is given (its ceilings then bound them), with the notes,
//! description and provenance the bundle carries.
//!
//! One rule for every caller: `roofline import` and `roofline profile` (which open the files and
//! write the bundle) and the viewer's import worker (which reads what was dropped on the page)
//! call these functions, so that the same input and machine give the same bundle, provenance
//! aside. The messages name the machine bundle as the CLI's `--machine` option does.

use roofline_model::bundle::{Bundle, Device, Kernel, Machine as MachineCeilings, Provenance};

use roofline_model::bundle::options::ComputeCapability;

use crate::ncu::{Arch, Imported};

/// A machine bundle given for an import (`--machine`), and what to do when it describes another
/// GPU than the input's.
#[derive(Debug, Clone)]
pub struct Machine {
    /// How the bundle is named in messages and notes (the path given, or a file's name).
    pub name: String,
    /// The bundle.
    pub bundle: Bundle,
    /// `--allow-machine-mismatch`: place the kernels against it anyway, with a note.
    pub allow_mismatch: bool,
}

/// Why imported pieces cannot be put in one bundle with a machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssembleError {
    /// The machine bundle holds no machine characterization.
    #[error(
        "--machine {name}: the bundle holds no machine characterization (make one with `roofline machine`)"
    )]
    NoMachine {
        /// The machine bundle's name.
        name: String,
    },
    /// The machine bundle describes another GPU than the one the kernels ran on.
    #[error(
        "--machine {machine} describes {machine_gpu}, but the kernels ran on {input_gpu}: its ceilings would bound them wrongly; give the machine bundle of that GPU (`roofline machine` on it), or pass --allow-machine-mismatch to place them against this one anyway (the bundle's notes then say so)"
    )]
    MachineMismatch {
        /// The machine bundle's name.
        machine: String,
        /// Its GPU, described.
        machine_gpu: String,
        /// The GPU the input names, described.
        input_gpu: String,
    },
    /// `--arch` names another GPU than the machine bundle describes.
    #[error(
        "--arch {arch} says the kernels ran on a GPU of compute capability {arch}, but --machine {machine} describes {machine_gpu}: its ceilings would bound them wrongly; give the machine bundle of that GPU, leave --arch out where the machine's GPU is the one, or pass --allow-machine-mismatch to place them against this one anyway (the bundle's notes then say so)"
    )]
    ArchMismatch {
        /// The compute capability `--arch` gave.
        arch: String,
        /// The machine bundle's name.
        machine: String,
        /// Its GPU, described.
        machine_gpu: String,
    },
    /// Kernels on a device the machine bundle does not describe.
    #[error(
        "the profile has kernels on device {missing}, which the machine bundle does not describe (it has {has})"
    )]
    DeviceNotInMachine {
        /// The input's device id.
        missing: String,
        /// The machine bundle's device ids, joined.
        has: String,
    },
}

impl Machine {
    /// A machine bundle for an import, refused when it holds no machine.
    ///
    /// # Errors
    /// [`AssembleError::NoMachine`].
    pub fn new(
        name: impl Into<String>,
        bundle: Bundle,
        allow_mismatch: bool,
    ) -> Result<Self, AssembleError> {
        let name = name.into();
        if bundle.machines.is_empty() {
            return Err(AssembleError::NoMachine { name });
        }
        Ok(Machine {
            name,
            bundle,
            allow_mismatch,
        })
    }

    /// `--arch` (`arch`) against the machine: refused where a device of the machine names
    /// another compute capability, unless mismatches are allowed, which gives a note instead.
    ///
    /// # Errors
    /// [`AssembleError::ArchMismatch`].
    pub fn check_arch(&self, arch: ComputeCapability) -> Result<Option<String>, AssembleError> {
        let Some(d) = self.bundle.devices.iter().find(|d| {
            d.compute_capability
                .as_deref()
                .is_some_and(|cc| cc.trim().parse::<ComputeCapability>() != Ok(arch))
        }) else {
            return Ok(None);
        };
        let machine_gpu = describe_gpu(d);
        if !self.allow_mismatch {
            return Err(AssembleError::ArchMismatch {
                arch: arch.to_string(),
                machine: self.name.clone(),
                machine_gpu,
            });
        }
        Ok(Some(format!(
            "MACHINE OF ANOTHER GPU: --arch {arch} says the kernels ran on a GPU of compute capability {arch}, but they are placed against the machine of {machine_gpu} (--machine {}, with --allow-machine-mismatch): its ceilings, not their GPU's, bound them",
            self.name
        )))
    }

    /// The architecture of the machine bundle's only device, when it says: it stands in for the
    /// one an input does not name.
    pub fn arch(&self) -> Option<Arch> {
        let [d] = self.bundle.devices.as_slice() else {
            return None;
        };
        Arch::from_compute_capability(d.compute_capability.as_deref()?)
            .ok()
            .map(|(a, _)| a)
    }
}

/// A device in words for a message: its name (unless the import made one up from an index),
/// compute capability and SM count, as far as known.
pub(crate) fn describe_gpu(d: &Device) -> String {
    let mut facts = Vec::new();
    if let Some(cc) = &d.compute_capability {
        facts.push(format!("compute capability {cc}"));
    }
    if let Some(n) = d.sm_count {
        facts.push(format!("{n} SMs"));
    }
    let name = if is_real_name(d) {
        d.name.clone()
    } else {
        format!("device {}", d.id)
    };
    if facts.is_empty() {
        name
    } else {
        format!("{name} ({})", facts.join(", "))
    }
}

/// Whether a device's name is the GPU's (a trace's `deviceProperties`, a machine bundle), not
/// one the CSV import made from a `Device` index (`GPU 0`).
fn is_real_name(d: &Device) -> bool {
    let made_up = d
        .name
        .strip_prefix("GPU ")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    !made_up && d.name != d.id && !d.name.trim().is_empty()
}

/// Whether the input says nothing of a device's GPU: no real name, compute capability or SM
/// count (a trace without `deviceProperties`, a CSV with only a `Device` index).
fn names_nothing(d: &Device) -> bool {
    !is_real_name(d) && d.compute_capability.is_none() && d.sm_count.is_none()
}

/// Whether two descriptions of a GPU disagree on what both say: the compute capability, the
/// SM count, or the name (where both have a real one).
pub(crate) fn differs(input: &Device, machine: &Device) -> bool {
    let both = |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(x), Some(y)) if x.trim() != y.trim());
    both(&input.compute_capability, &machine.compute_capability)
        || matches!((input.sm_count, machine.sm_count), (Some(a), Some(b)) if a != b)
        || (is_real_name(input)
            && is_real_name(machine)
            && !input.name.trim().eq_ignore_ascii_case(machine.name.trim()))
}

/// Pairs the input's devices with the machine's (the only one with the only one, else by id)
/// and refuses a pair that describes two different GPUs, unless mismatches are allowed, which
/// gives a note for the bundle instead.
fn check_machine(input: &[Device], m: &Machine) -> Result<Vec<String>, AssembleError> {
    let machine = &m.bundle.devices;
    let pairs: Vec<(&Device, &Device)> = if machine.len() == 1 && input.len() <= 1 {
        input.iter().map(|d| (d, &machine[0])).collect()
    } else {
        input
            .iter()
            .filter_map(|d| machine.iter().find(|x| x.id == d.id).map(|x| (d, x)))
            .collect()
    };
    let mut notes = Vec::new();
    if let ([], [x]) = (input, machine.as_slice()) {
        notes.push(format!(
            "the input names no device: its kernels are assumed to have run on the machine's, {} (--machine {})",
            describe_gpu(x),
            m.name
        ));
    }
    for (i, x) in pairs {
        if names_nothing(i) {
            notes.push(format!(
                "device {}: the input names no GPU (no name, compute capability or SM count): assumed to be the machine's, {} (--machine {})",
                i.id,
                describe_gpu(x),
                m.name
            ));
            continue;
        }
        if !differs(i, x) {
            continue;
        }
        let (machine_gpu, input_gpu) = (describe_gpu(x), describe_gpu(i));
        if !m.allow_mismatch {
            return Err(AssembleError::MachineMismatch {
                machine: m.name.clone(),
                machine_gpu,
                input_gpu,
            });
        }
        notes.push(format!(
            "MACHINE OF ANOTHER GPU: the kernels ran on {input_gpu} but are placed against the machine of {machine_gpu} (--machine {}, with --allow-machine-mismatch): its ceilings, not their GPU's, bound them",
            m.name
        ));
    }
    Ok(notes)
}

/// Where imported kernels go: the bundle's devices and machines (the input's, or the
/// machine's), whether kernels name their device, and what was noted about it.
#[derive(Debug, Clone)]
pub struct Placement {
    devices: Vec<Device>,
    machines: Vec<MachineCeilings>,
    /// One device or none: kernels need not repeat it.
    drop_device: bool,
    notes: Vec<String>,
}

impl Placement {
    /// Kernels on the input's only device go to the machine's only device; otherwise device ids
    /// must match. A machine of another GPU is refused unless mismatches are allowed.
    ///
    /// # Errors
    /// [`AssembleError::MachineMismatch`], [`AssembleError::DeviceNotInMachine`].
    pub fn new(input: Vec<Device>, machine: Option<Machine>) -> Result<Self, AssembleError> {
        let Some(arg) = machine else {
            return Ok(Placement {
                drop_device: input.len() <= 1,
                devices: input,
                machines: Vec::new(),
                notes: vec![
                    "no machine characterization: bounds and headroom need one (`roofline machine`, then pass it with --machine)".into(),
                ],
            });
        };
        let mut notes = check_machine(&input, &arg)?;
        let m = arg.bundle;
        let ids: Vec<&str> = input.iter().map(|d| d.id.as_str()).collect();
        let drop_device = m.devices.len() == 1 && ids.len() <= 1;
        if drop_device {
            if let Some(id) = ids.first()
                && *id != m.devices[0].id
            {
                notes.push(format!(
                    "kernels profiled on device {id} are placed against the machine of device {} ({})",
                    m.devices[0].id, m.devices[0].name
                ));
            }
        } else if let Some(missing) = ids.iter().find(|d| !m.devices.iter().any(|x| x.id == **d)) {
            return Err(AssembleError::DeviceNotInMachine {
                missing: (*missing).to_string(),
                has: m
                    .devices
                    .iter()
                    .map(|d| d.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(Placement {
            devices: m.devices,
            machines: m.machines,
            drop_device,
            notes,
        })
    }

    /// A kernel as the bundle holds it.
    pub fn place(&self, k: &mut Kernel) {
        if self.drop_device {
            k.device = None;
        }
    }

    /// What the placement noted (no machine, another device, another GPU allowed), which the
    /// bundle's notes end with.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The bundle's shell: everything but its kernels, `notes` first, then the placement's.
    pub fn shell(&self, mut notes: Vec<String>, provenance: Provenance) -> Bundle {
        let mut bundle = Bundle::new(provenance);
        bundle.devices.clone_from(&self.devices);
        bundle.machines.clone_from(&self.machines);
        notes.extend(self.notes.iter().cloned());
        bundle.notes = notes;
        bundle
    }
}

/// Puts imported kernels and a machine (if any) in one bundle ([`Placement`]): `notes` first,
/// then the import's, then the placement's.
///
/// # Errors
/// As [`Placement::new`].
pub fn assemble(
    imported: Imported,
    machine: Option<Machine>,
    mut notes: Vec<String>,
    provenance: Provenance,
) -> Result<Bundle, AssembleError> {
    let placement = Placement::new(imported.devices, machine)?;
    notes.extend(imported.notes);
    let mut bundle = placement.shell(notes, provenance);
    bundle.kernels = imported.kernels;
    for k in &mut bundle.kernels {
        placement.place(k);
    }
    Ok(bundle)
}

/// The description of a bundle imported from Nsight Compute output, naming its inputs.
pub fn ncu_description(inputs: &[String]) -> String {
    format!("imported from Nsight Compute output: {}", inputs.join(", "))
}

/// The description of a bundle imported from a torch.profiler trace (and the range-profiler
/// trace whose counters were joined with it).
pub fn trace_description(trace: &str, counters: Option<&str>) -> String {
    match counters {
        Some(c) => {
            format!("imported from a torch.profiler trace: {trace}, with the counters of {c}")
        }
        None => format!("imported from a torch.profiler trace: {trace}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_model::bundle::DataSource;

    fn provenance() -> Provenance {
        Provenance {
            tool: "test".into(),
            tool_version: "0".into(),
            ..Provenance::default()
        }
    }

    fn gpu(id: &str, name: &str, cc: &str) -> Device {
        let mut d = Device::new(id, name);
        d.compute_capability = Some(cc.into());
        d
    }

    fn machine_of(d: Device) -> Bundle {
        let mut b = Bundle::new(provenance());
        b.machines.push(MachineCeilings {
            device: d.id.clone(),
            ..MachineCeilings::default()
        });
        b.devices.push(d);
        b
    }

    fn kernel(device: &str) -> Kernel {
        let mut k = Kernel::new("k", 1e-3, DataSource::Import);
        k.device = Some(device.into());
        k
    }

    #[test]
    fn without_a_machine_the_input_devices_stay_and_a_note_says_why_bounds_are_missing() {
        let imported = Imported {
            kernels: vec![kernel("0")],
            devices: vec![gpu("0", "GPU 0", "9.0")],
            notes: vec!["from the import".into()],
            complete: true,
            left_out: None,
        };
        let b = assemble(imported, None, vec!["first".into()], provenance()).unwrap();
        assert_eq!(b.devices.len(), 1);
        assert_eq!(b.kernels[0].device, None);
        assert_eq!(
            b.notes[..2],
            ["first".to_string(), "from the import".into()]
        );
        assert!(b.notes[2].starts_with("no machine characterization"));
    }

    #[test]
    fn a_machine_of_another_gpu_is_refused_or_noted() {
        let m = machine_of(gpu("0", "Tesla V100-SXM2-16GB", "7.0"));
        assert_eq!(
            Machine::new("plain.json", Bundle::new(provenance()), false).unwrap_err(),
            AssembleError::NoMachine {
                name: "plain.json".into()
            }
        );
        let input = vec![gpu("0", "NVIDIA H100", "9.0")];
        let e = Placement::new(
            input.clone(),
            Some(Machine::new("m.json", m.clone(), false).unwrap()),
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with(
                "--machine m.json describes Tesla V100-SXM2-16GB (compute capability 7.0), but the kernels ran on NVIDIA H100 (compute capability 9.0)"
            ),
            "{e}"
        );
        let p = Placement::new(input, Some(Machine::new("m.json", m, true).unwrap())).unwrap();
        assert!(p.notes()[0].starts_with("MACHINE OF ANOTHER GPU"));
        assert_eq!(
            Machine::new("x", machine_of(gpu("0", "a", "9.0")), false)
                .unwrap()
                .arch(),
            Some(Arch::Hopper)
        );
    }

    /// A device the input says nothing of takes the machine's identity, and the note says so;
    /// one it names does not get that note.
    #[test]
    fn a_device_named_by_nothing_is_said_to_be_assumed_the_machines() {
        let m = machine_of(gpu("0", "Tesla V100-SXM2-16GB", "7.0"));
        let machine = || Some(Machine::new("m.json", m.clone(), false).unwrap());
        let p = Placement::new(vec![Device::new("0", "GPU 0")], machine()).unwrap();
        assert_eq!(
            p.notes(),
            [
                "device 0: the input names no GPU (no name, compute capability or SM count): assumed to be the machine's, Tesla V100-SXM2-16GB (compute capability 7.0) (--machine m.json)"
            ]
        );
        let p = Placement::new(vec![gpu("0", "Tesla V100-SXM2-16GB", "7.0")], machine()).unwrap();
        assert!(p.notes().is_empty(), "{:?}", p.notes());
        // `--arch` against the machine: the same compute capability passes, another is refused
        // or, allowed, noted.
        let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
        assert_eq!(machine().unwrap().check_arch(cc("7.0")), Ok(None));
        let e = machine().unwrap().check_arch(cc("9.0")).unwrap_err();
        assert!(
            e.to_string().starts_with("--arch 9.0 says the kernels ran on a GPU of compute capability 9.0, but --machine m.json describes Tesla V100-SXM2-16GB (compute capability 7.0)"),
            "{e}"
        );
        let allowed = Machine::new("m.json", m.clone(), true).unwrap();
        assert!(
            allowed
                .check_arch(cc("9.0"))
                .unwrap()
                .unwrap()
                .starts_with("MACHINE OF ANOTHER GPU: --arch 9.0")
        );
    }

    #[test]
    fn kernels_on_a_device_the_machine_lacks_are_refused() {
        let mut m = machine_of(gpu("0", "A", "9.0"));
        m.devices.push(gpu("1", "A", "9.0"));
        let e = Placement::new(
            vec![gpu("3", "A", "9.0")],
            Some(Machine::new("m.json", m, false).unwrap()),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "the profile has kernels on device 3, which the machine bundle does not describe (it has 0, 1)"
        );
    }
}
