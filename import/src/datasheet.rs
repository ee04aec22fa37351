//! Ceilings for an import without a measured machine: the GPU catalogue's datasheet figures for
//! the device the input names ([`roofline_catalogue`]), so that a trace from any GPU people
//! profile on gets its roofline. Each device the input records (a trace's `deviceProperties`, an
//! Nsight Compute export's device name and compute capability) is matched by name, compute
//! capability (or the gfx architecture an AMD trace records), SM count and memory; the entry
//! that fits becomes that device's machine, labelled as a datasheet's, not measured. A device
//! that no entry fits, or that several fit with different figures, gets none, and a note says
//! what was seen and how to choose (`--ceilings datasheet:NAME`, or `--machine`). An entry named
//! by hand that contradicts the input's own device is refused, as a `--machine` of another GPU
//! is.
//!
//! The launch overhead is in no datasheet: from a trace it is estimated as the median host time
//! of its kernel launch calls, labelled so ([`launch_overhead`]).

use roofline_catalogue::{Catalogue, DeviceQuery, Field, GpuEntry, Match, NoMatchReason, System};
use roofline_model::bundle::options::{ComputeCapability, Datasheet};
use roofline_model::bundle::{
    Bundle, Device, FigureSource, LaunchOverhead, MemoryLevel, Method, Provenance, SourceKind,
};

use crate::assemble::Machine;
use crate::trace::Trace;

/// A device as the input records it, and what matching reads of it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The device, as the bundle will hold it.
    pub device: Device,
    /// What the catalogue is asked.
    pub query: DeviceQuery,
}

/// What the catalogue is asked of a device: its name (none where the import made one up from
/// an index, `GPU 0`), compute capability, SM count and memory.
fn query_of(d: &Device) -> DeviceQuery {
    let mut q = DeviceQuery::from(d);
    let made_up = d
        .name
        .strip_prefix("GPU ")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if made_up || d.name == d.id {
        q.name = None;
    }
    q
}

/// The devices of `devices` as an Nsight Compute export records them (name, compute capability).
pub fn of_devices(devices: &[Device]) -> Vec<Seen> {
    devices
        .iter()
        .map(|d| Seen {
            device: d.clone(),
            query: query_of(d),
        })
        .collect()
}

/// [`of_devices`] for Nsight Compute captures: where they record no device (an export without
/// its device columns), one device known by the compute capability `--arch` gave, if any.
pub fn of_capture(devices: &[Device], arch: Option<ComputeCapability>) -> Vec<Seen> {
    if !devices.is_empty() {
        return of_devices(devices);
    }
    let Some(cc) = arch else {
        return Vec::new();
    };
    let mut device = Device::new("0", "GPU 0");
    device.compute_capability = Some(cc.to_string());
    vec![Seen {
        query: query_of(&device),
        device,
    }]
}

/// The devices of a trace's launches, with what its `deviceProperties` record of each: for an
/// AMD GPU the `computeMajor.computeMinor` of its gfx architecture, which the catalogue knows.
pub fn of_trace(trace: &Trace, devices: &[Device]) -> Vec<Seen> {
    devices
        .iter()
        .map(|d| {
            let mut query = query_of(d);
            if let Some(p) = trace.devices.iter().find(|p| p.id.to_string() == d.id)
                && p.is_amd()
                && let (Some(a), Some(b)) = (p.compute_major, p.compute_minor)
            {
                query.compute_capability = Some(format!("{a}.{b}"));
            }
            Seen {
                device: d.clone(),
                query,
            }
        })
        .collect()
}

/// A refusal of `--ceilings datasheet:NAME`, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatasheetError {
    /// No entry has that id or product name.
    #[error(
        "no GPU of the catalogue is called `{name}`{}; `roofline catalogue` lists them",
        if close.is_empty() { String::new() } else { format!(" (did you mean {}?)", close.join(", ")) }
    )]
    Unknown {
        /// The name given.
        name: String,
        /// Entries whose id or product holds the name's words.
        close: Vec<String>,
    },
    /// The entry named gives no ceiling.
    #[error(
        "datasheet:{name} is the {product}, for which the catalogue gives no ceilings (`roofline catalogue {name}` says why); name another entry, or measure it (`roofline machine`) and pass --machine"
    )]
    Empty {
        /// The name given.
        name: String,
        /// The entry's product.
        product: String,
    },
    /// No system of the catalogue has that id or name.
    #[error("--system {name}: no system of the GPU catalogue is called so (it has {known})")]
    UnknownSystem {
        /// The name given.
        name: String,
        /// The systems it has.
        known: String,
    },
    /// The entry contradicts the device the input names.
    #[error(
        "datasheet:{name} is the {product} ({entry}), but the kernels ran on {input}: its ceilings would bound them wrongly; name that GPU's entry, or measure it (`roofline machine`) and pass --machine"
    )]
    Contradicts {
        /// The name given.
        name: String,
        /// The entry's product.
        product: String,
        /// What the entry is, in words.
        entry: String,
        /// What the input recorded, in words.
        input: String,
    },
}

/// `s` without case, spaces, hyphens or underscores, and without a leading `NVIDIA `/`AMD `.
fn key(s: &str) -> String {
    let s = s.trim();
    let s = s
        .strip_prefix("NVIDIA ")
        .or_else(|| s.strip_prefix("AMD "))
        .unwrap_or(s);
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase()
}

/// The entry `name` names: its id, or its product name (compared without case, spaces or
/// hyphens), or a part of the id or product of exactly one entry.
///
/// # Errors
/// [`DatasheetError::Unknown`], with the entries whose names hold it.
pub fn named<'c>(catalogue: &'c Catalogue, name: &str) -> Result<&'c GpuEntry, DatasheetError> {
    let k = key(name);
    if let Some(e) = catalogue
        .entries()
        .iter()
        .find(|e| key(&e.id) == k || key(&e.product) == k)
    {
        return Ok(e);
    }
    let holding: Vec<&GpuEntry> = catalogue
        .entries()
        .iter()
        .filter(|e| !k.is_empty() && (key(&e.id).contains(&k) || key(&e.product).contains(&k)))
        .collect();
    // A part of exactly one entry's name names it (`h100 sxm5`); the bundle's origin then
    // records the product chosen.
    if let [only] = holding.as_slice() {
        return Ok(only);
    }
    let close = holding.iter().map(|e| e.id.clone()).take(6).collect();
    Err(DatasheetError::Unknown {
        name: name.to_string(),
        close,
    })
}

/// The system `name` names: its id or name (compared without case, spaces or hyphens, a
/// leading `NVIDIA` left out), or a part of exactly one system's.
///
/// # Errors
/// [`DatasheetError::UnknownSystem`], listing the systems.
pub fn named_system<'c>(
    catalogue: &'c Catalogue,
    name: &str,
) -> Result<&'c System, DatasheetError> {
    let k = key(name);
    let holding: Vec<&System> = catalogue
        .systems()
        .iter()
        .filter(|s| !k.is_empty() && (key(&s.id).contains(&k) || key(&s.name).contains(&k)))
        .collect();
    if let Some(s) = catalogue
        .systems()
        .iter()
        .find(|s| key(&s.id) == k || key(&s.name) == k)
    {
        return Ok(s);
    }
    match holding.as_slice() {
        [only] => Ok(only),
        _ => Err(DatasheetError::UnknownSystem {
            name: name.to_string(),
            known: catalogue
                .systems()
                .iter()
                .map(|s| s.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The link ceilings of each device an input names: the `system`'s (its NVLink and network per
/// GPU) where one is given, else the catalogue entry the device matches (its NVLink and PCIe);
/// with the notes that say which, or why a device has none. Added to each device's machine in
/// `machine` that has no links, and a machine of links only made for a device without one.
pub fn with_links(
    machine: Option<Machine>,
    seen: &[Seen],
    system: Option<&System>,
) -> (Option<Machine>, Vec<String>) {
    let catalogue = Catalogue::get();
    let mut notes = Vec::new();
    let mut bundle = match machine {
        Some(m) => m,
        None => {
            let mut b = Bundle::new(Provenance::default());
            b.devices = seen.iter().map(|s| s.device.clone()).collect();
            Machine {
                name: "the GPU catalogue".into(),
                bundle: b,
                allow_mismatch: false,
            }
        }
    };
    for s in seen {
        let id = &s.device.id;
        let (links, whose) = match system {
            Some(sys) => (sys.link_ceilings(catalogue), sys.name.clone()),
            None => match catalogue.match_device(&s.query) {
                Match::Exact { candidate, .. } => (
                    candidate.entry.link_ceilings(catalogue),
                    candidate.entry.product.clone(),
                ),
                Match::Equivalent { candidates, .. } => (
                    candidates[0].entry.link_ceilings(catalogue),
                    candidates[0].entry.product.clone(),
                ),
                _ => (Vec::new(), String::new()),
            },
        };
        if links.is_empty() {
            continue;
        }
        let only = seen.len() == 1 && bundle.bundle.machines.len() == 1;
        let target = match bundle
            .bundle
            .machines
            .iter_mut()
            .position(|m| m.device == *id || only)
        {
            Some(i) => &mut bundle.bundle.machines[i],
            None if bundle.bundle.devices.iter().any(|d| d.id == *id) => {
                bundle
                    .bundle
                    .machines
                    .push(roofline_model::bundle::Machine {
                        device: id.clone(),
                        ..Default::default()
                    });
                bundle.bundle.machines.last_mut().expect("just pushed")
            }
            None => continue,
        };
        // A link the machine already has (measured by `roofline machine`: its PCIe) is kept;
        // the catalogue gives the others.
        let links: Vec<_> = links
            .into_iter()
            .filter(|l| !target.links.iter().any(|t| t.link == l.link))
            .collect();
        if links.is_empty() {
            continue;
        }
        let words = |links: &[roofline_model::bundle::LinkCeiling]| {
            links
                .iter()
                .map(|l| {
                    format!(
                        "{} {}",
                        l.link.label(),
                        roofline_model::analysis::si::format_si(l.value, "B/s")
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let kept = if target.links.is_empty() {
            String::new()
        } else {
            format!("; the machine's own {} kept", words(&target.links))
        };
        notes.push(format!(
            "links of device {id}: the {whose}'s ({}, one direction{}), from the GPU catalogue, not measured (`roofline machine` measures the PCIe host link, and NVLink on a host with a second GPU joined by it){kept}",
            words(&links),
            if system.is_some() { ", as --system names it" } else { "" }
        ));
        target.links.extend(links);
    }
    if bundle.bundle.machines.is_empty() {
        return (None, notes);
    }
    (Some(bundle), notes)
}

/// A device in words: its name, compute capability, SMs and memory, as far as recorded.
fn describe(q: &DeviceQuery) -> String {
    let mut facts = Vec::new();
    if let Some(cc) = &q.compute_capability {
        facts.push(format!("compute capability {cc}"));
    }
    if let Some(n) = q.sm_count {
        facts.push(format!("{n} SMs"));
    }
    if let Some(m) = q.memory_bytes {
        facts.push(format!("{:.1} GiB", m / 1073741824.0));
    }
    let name = q.name.as_deref().unwrap_or("an unnamed GPU");
    if facts.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", facts.join(", "))
    }
}

/// An entry in words, as a device is ([`describe`]).
fn describe_entry(e: &GpuEntry) -> String {
    describe(&DeviceQuery {
        name: None,
        compute_capability: e.compute_capability.clone(),
        gfx: None,
        sm_count: e.sm_count(),
        memory_bytes: None,
    })
    .trim_start_matches("an unnamed GPU ")
    .trim_matches(['(', ')'])
    .to_string()
}

/// Whether the entry contradicts what the input recorded of the device: a compute capability
/// or SM count both give and that differ (the name is not compared: a board's name may be any
/// of several the entry lists).
fn contradicts(e: &GpuEntry, q: &DeviceQuery) -> bool {
    let cc = matches!((&q.compute_capability, &e.compute_capability), (Some(a), Some(b)) if a.trim() != b.trim());
    let sms = matches!((q.sm_count, e.sm_count()), (Some(a), Some(b)) if a != b);
    cc || sms
}

/// The fields that decided a match, in words (`name, compute capability and SM count`).
fn fields(f: &[Field]) -> String {
    let words: Vec<&str> = f.iter().map(|f| f.label()).collect();
    match words.as_slice() {
        [] => "its recorded properties".into(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The datasheet machine for the input's devices under `choice`, and the notes the bundle gets
/// about it; `None` when no device gets one (the notes then say why). `launch` is the launch
/// overhead estimated from the input, given to every datasheet machine.
///
/// # Errors
/// [`DatasheetError`] for an entry named by hand that is not in the catalogue or contradicts a
/// device the input names.
pub fn machine(
    seen: &[Seen],
    choice: &Datasheet,
    launch: Option<&LaunchOverhead>,
) -> Result<(Option<Machine>, Vec<String>), DatasheetError> {
    let catalogue = Catalogue::get();
    let mut bundle = Bundle::new(Provenance::default());
    let mut notes = Vec::new();
    let named_entry = match choice {
        Datasheet::Off => return Ok((None, notes)),
        Datasheet::Named(n) => Some((n, named(catalogue, n)?)),
        Datasheet::Matched => None,
    };
    // An input that records no device at all (an Nsight Compute export without its device
    // columns): one device, known only by what it is given.
    let unnamed;
    let seen = if seen.is_empty() {
        unnamed = [Seen {
            device: Device::new("0", "GPU 0"),
            query: DeviceQuery::new(),
        }];
        &unnamed[..]
    } else {
        seen
    };
    for s in seen {
        let who = describe(&s.query);
        let mut equivalent_products: Option<String> = None;
        let chosen = match named_entry {
            Some((name, e)) => {
                if contradicts(e, &s.query) {
                    return Err(DatasheetError::Contradicts {
                        name: name.clone(),
                        product: e.product.clone(),
                        entry: describe_entry(e),
                        input: who,
                    });
                }
                Some((e, format!("named by hand: --ceilings datasheet:{name}")))
            }
            None => match catalogue.match_device(&s.query) {
                Match::Exact {
                    candidate,
                    decided_by,
                } => Some((
                    candidate.entry,
                    format!(
                        "matched by {} (told apart by {})",
                        fields(&candidate.agreed_on),
                        fields(&decided_by)
                    ),
                )),
                Match::Equivalent {
                    candidates,
                    decided_by,
                } => {
                    let first = candidates[0].entry;
                    let all: Vec<&str> = candidates.iter().map(|c| c.entry.id.as_str()).collect();
                    // The chart names them all: an MI250 GCD is labelled as such, not as an
                    // MI210 whose figures it shares.
                    equivalent_products = Some(
                        candidates
                            .iter()
                            .map(|c| c.entry.product.as_str())
                            .collect::<Vec<_>>()
                            .join(" or "),
                    );
                    Some((
                        first,
                        format!(
                            "matched by {}; {} fit with the same figures ({}), so its figures are theirs",
                            fields(&decided_by),
                            all.len(),
                            all.join(", ")
                        ),
                    ))
                }
                Match::Ambiguous { candidates, .. } => {
                    // Entries without figures have none to choose.
                    let all: Vec<&str> = candidates
                        .iter()
                        .filter(|c| has_ceilings(c.entry))
                        .map(|c| c.entry.id.as_str())
                        .collect();
                    notes.push(format!(
                        "no datasheet ceilings for device {} ({who}): {} catalogue GPUs fit it with different figures ({}); choose one with --ceilings datasheet:NAME, or measure it with `roofline machine` and pass --machine",
                        s.device.id,
                        all.len(),
                        all.join(", ")
                    ));
                    None
                }
                Match::None { reason, .. } => {
                    let why = match reason {
                        NoMatchReason::UnknownName => "its name is not in the GPU catalogue",
                        NoMatchReason::Contradiction { .. } => {
                            "its name is in the catalogue, but what the trace records of it contradicts that entry"
                        }
                        NoMatchReason::NoEntryFits => {
                            "no GPU of the catalogue fits what is recorded"
                        }
                    };
                    notes.push(format!(
                        "no datasheet ceilings for device {} ({who}): {why}; choose one with --ceilings datasheet:NAME (`roofline catalogue` lists them), or measure it with `roofline machine` and pass --machine",
                        s.device.id
                    ));
                    None
                }
                Match::NoDevice => {
                    notes.push(format!(
                        "no datasheet ceilings for device {}: the input names no GPU; choose one with --ceilings datasheet:NAME (`roofline catalogue` lists them), or pass --machine",
                        s.device.id
                    ));
                    None
                }
            },
        };
        bundle.devices.push(s.device.clone());
        if let Some((e, _)) = chosen.as_ref().filter(|(e, _)| !has_ceilings(e)) {
            if let Some((name, _)) = named_entry {
                return Err(DatasheetError::Empty {
                    name: name.clone(),
                    product: e.product.clone(),
                });
            }
            let lend: Vec<&str> = catalogue
                .entries()
                .iter()
                .filter(|o| {
                    has_ceilings(o)
                        && o.architecture == e.architecture
                        && o.sm_count() == e.sm_count()
                        && o.memory_bytes() == e.memory_bytes()
                })
                .map(|o| o.id.as_str())
                .collect();
            let lend = if lend.is_empty() {
                String::new()
            } else {
                format!(
                    "; the same die with the same SMs and memory: {} (its clocks may differ), which --ceilings datasheet:NAME lends",
                    lend.join(", ")
                )
            };
            notes.push(format!(
                "no datasheet ceilings for device {}: it is the {} (GPU catalogue entry {}), for which no vendor document gives clocks, peaks or bandwidth{lend}; or measure it with `roofline machine` and pass --machine",
                s.device.id, e.product, e.id
            ));
            continue;
        }
        if let Some((e, how)) = chosen {
            let mut m = e.machine(catalogue, &s.device.id, &how);
            if let (Some(o), Some(products)) = (m.origin.as_mut(), equivalent_products.take()) {
                o.product = Some(products);
            }
            m.launch_overhead = launch.cloned();
            let product = m
                .origin
                .as_ref()
                .and_then(|o| o.product.clone())
                .unwrap_or_else(|| e.product.clone());
            notes.push(format!(
                "ceilings of device {}: the datasheet figures of the {product} (GPU catalogue entry {}, {how}), not measured: `roofline machine` on that GPU, passed with --machine, gives measured ones",
                s.device.id, e.id
            ));
            bundle.machines.push(m);
        }
    }
    if bundle.machines.is_empty() {
        return Ok((None, notes));
    }
    Ok((Machine::new("the GPU catalogue", bundle, false).ok(), notes))
}

/// Every GPU of the catalogue that gives ceilings, as `(id, product)`: what the page's "Ceilings
/// from" offers for an import.
pub fn entries() -> Vec<(&'static str, &'static str)> {
    Catalogue::get()
        .entries()
        .iter()
        .filter(|e| has_ceilings(e))
        .map(|e| (e.id.as_str(), e.product.as_str()))
        .collect()
}

/// The compute capability of the NVIDIA GPU `name` names in the catalogue; `None` for an
/// unknown name (refused later, with its message) or an AMD GPU.
pub fn named_compute_capability(name: &str) -> Option<ComputeCapability> {
    let e = named(Catalogue::get(), name).ok()?;
    if e.gfx.is_some() {
        return None;
    }
    e.compute_capability.as_deref()?.parse().ok()
}

/// True when the entry gives at least one ceiling: a peak or a bandwidth.
fn has_ceilings(e: &GpuEntry) -> bool {
    e.peaks().next().is_some()
        || [MemoryLevel::L1, MemoryLevel::L2, MemoryLevel::Hbm]
            .into_iter()
            .any(|l| e.bandwidth(l).is_some())
}

/// Launch calls an estimate needs, the first (cold) one left out.
pub const MIN_LAUNCH_CALLS: usize = 16;

/// The kernel launch overhead a trace suggests: the median host time of its kernel launch calls
/// (`cudaLaunchKernel`, `cudaLaunchKernelExC`, `cuLaunchKernel`, `hipLaunchKernel`), the first
/// one left out (it pays for lazy module loading), labelled as estimated from the trace. Host
/// time rather than the gaps between kernels: kernels queued back to back hide their launch.
///
/// # Errors
/// Why there is no estimate, in words for a note: fewer than [`MIN_LAUNCH_CALLS`] calls.
pub fn launch_overhead(trace: &Trace) -> Result<LaunchOverhead, String> {
    const LAUNCHES: [&str; 5] = [
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
        "hipLaunchKernel",
    ];
    let mut calls: Vec<(i64, f64)> = trace
        .runtimes
        .iter()
        .filter(|r| LAUNCHES.contains(&trace.name(r.name)))
        .filter(|r| r.end > r.ts)
        .map(|r| (r.ts, (r.end - r.ts) as f64 * 1e-9))
        .collect();
    calls.sort_by_key(|c| c.0);
    let durations: Vec<f64> = calls.iter().skip(1).map(|c| c.1).collect();
    let median = roofline_model::analysis::stats::median(&durations)
        .filter(|_| durations.len() >= MIN_LAUNCH_CALLS)
        .ok_or_else(|| {
            format!(
                "no launch overhead: the trace holds {} kernel launch calls, and an estimate from their host times needs {} besides the first; the time-based roofline draws no launch bound",
                calls.len(),
                MIN_LAUNCH_CALLS
            )
        })?;
    let words = format!(
        "median host time of {} of the trace's kernel launch calls, the first left out ({:.2} µs)",
        durations.len(),
        median * 1e6
    );
    let mut l = LaunchOverhead::new(median, Method::Empirical);
    l.implementation = Some(format!("estimated from the trace: {words}"));
    l.source = Some(FigureSource {
        kind: SourceKind::Estimated,
        citation: words,
    });
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(name: &str, cc: &str, sms: u32, mem: f64) -> Seen {
        let mut d = Device::new("0", name);
        d.compute_capability = Some(cc.into());
        d.sm_count = Some(sms);
        d.memory_bytes = Some(mem);
        Seen {
            query: DeviceQuery::from(&d),
            device: d,
        }
    }

    /// A machine that measured its PCIe host link (`roofline machine`) keeps that figure; the
    /// catalogue adds the H100 SXM5's NVLink beside it, and the note says which is which.
    #[test]
    fn a_measured_link_is_kept_and_the_catalogue_adds_the_others() {
        use roofline_model::bundle::{LinkCeiling, LinkKind};
        let h100 = seen("NVIDIA H100 80GB HBM3", "9.0", 132, 85e9);
        let mut b = Bundle::new(Provenance::default());
        b.devices = vec![h100.device.clone()];
        b.machines = vec![roofline_model::bundle::Machine {
            device: h100.device.id.clone(),
            links: vec![LinkCeiling {
                link: LinkKind::Pcie,
                value: 25.1e9,
                method: Method::Empirical,
                implementation: Some("page-locked host↔device copies".into()),
                source: None,
            }],
            ..Default::default()
        }];
        let measured = Machine {
            name: "h100.json".into(),
            bundle: b,
            allow_mismatch: false,
        };
        let (m, notes) = with_links(Some(measured), &[h100], None);
        let links = &m.unwrap().bundle.machines[0].links;
        let pcie: Vec<_> = links.iter().filter(|l| l.link == LinkKind::Pcie).collect();
        assert_eq!(pcie.len(), 1);
        assert_eq!((pcie[0].value, pcie[0].method), (25.1e9, Method::Empirical));
        let nvlink = links.iter().find(|l| l.link == LinkKind::Nvlink).unwrap();
        assert_eq!(nvlink.value, 450e9);
        assert!(nvlink.source.is_some());
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("NVLink 450 GB/s"), "{notes:?}");
        assert!(
            notes[0].contains("the machine's own PCIe 25.1 GB/s kept"),
            "{notes:?}"
        );
    }

    /// An A100 as Meta's traces record it gets the A100 SXM4 40GB's datasheet, named in a note;
    /// a GPU the catalogue does not list gets none and a note saying how to choose.
    #[test]
    fn a_recorded_device_gets_its_entry_or_a_note() {
        let a100 = seen("NVIDIA A100-PG509-200", "8.0", 108, 42_505_273_344.0);
        let (m, notes) = machine(&[a100], &Datasheet::Matched, None).unwrap();
        let m = m.unwrap();
        let origin = m.bundle.machines[0].origin.as_ref().unwrap();
        assert_eq!(
            origin.catalogue_id.as_deref(),
            Some("nvidia-a100-sxm4-40gb")
        );
        assert!(
            notes[0].contains("datasheet figures of the NVIDIA A100"),
            "{notes:?}"
        );
        let odd = seen("Made-up GPU 9000", "8.0", 7, 1e9);
        let (m, notes) = machine(&[odd], &Datasheet::Matched, None).unwrap();
        assert!(m.is_none());
        assert!(notes[0].contains("--ceilings datasheet:NAME"), "{notes:?}");
        assert!(machine(&[], &Datasheet::Off, None).unwrap().0.is_none());
    }

    /// A GPU the catalogue knows but has no figures for (the DGX Station's V100, as a real
    /// PyTorch 1.9 trace records it) gets no ceilings, and a note naming the same die's entry;
    /// named by hand, it is refused.
    #[test]
    fn an_entry_without_figures_draws_no_ceilings() {
        let dgxs = seen("Tesla V100-DGXS-32GB", "7.0", 80, 34_084_028_416.0);
        let (m, notes) = machine(std::slice::from_ref(&dgxs), &Datasheet::Matched, None).unwrap();
        assert!(m.is_none());
        assert!(
            notes[0].contains("nvidia-v100-dgxs-32gb), for which no vendor document gives"),
            "{notes:?}"
        );
        assert!(notes[0].contains("nvidia-v100-sxm2-32gb"), "{notes:?}");
        let e = machine(
            &[dgxs],
            &Datasheet::Named("nvidia-v100-dgxs-32gb".into()),
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("gives no ceilings"), "{e}");
    }

    /// An entry named by hand: by id or product; one that contradicts the device is refused;
    /// one not in the catalogue is refused naming close ones.
    #[test]
    fn an_entry_named_by_hand_is_checked() {
        let h100 = seen("NVIDIA H100 80GB HBM3", "9.0", 132, 85e9);
        let by_product = Datasheet::Named("H100 SXM5 80GB".into());
        assert!(
            machine(std::slice::from_ref(&h100), &by_product, None)
                .unwrap()
                .0
                .is_some()
        );
        let wrong = Datasheet::Named("nvidia-a100-sxm4-80gb".into());
        let e = machine(&[h100], &wrong, None).unwrap_err();
        assert!(
            e.to_string().contains("but the kernels ran on NVIDIA H100"),
            "{e}"
        );
        let e = named(Catalogue::get(), "H100").unwrap_err();
        assert!(
            e.to_string().contains("did you mean nvidia-h100-sxm5"),
            "{e}"
        );
        assert_eq!(
            named(Catalogue::get(), "h100 sxm5").unwrap().id,
            "nvidia-h100-sxm5"
        );
    }
}
