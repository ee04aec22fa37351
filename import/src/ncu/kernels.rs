//! Joined launches into bundle kernels: FLOPs per datapath and bytes per level through the
//! per-architecture metric table, under the current convention or the 2020 study's.

use std::collections::{BTreeMap, BTreeSet};

use crate::ncu::capture::Launch;
use crate::ncu::error::NcuError;
use crate::ncu::metrics::{self, Alternatives, Arch, Convention, time};
use roofline_model::analysis::aggregate::aggregate_by_name;
use roofline_model::bundle::{
    Bytes, DataSource, Datapath, Device, Flops, Kernel, KernelTime, MemoryLevel,
};

/// How to turn launches into kernels.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportOptions {
    /// FLOP weights and time rule.
    pub convention: Convention,
    /// The architecture, when the CSV has no `CC` column (or to override it).
    pub arch: Option<Arch>,
    /// What the kernels' `source` says.
    pub source: DataSource,
}

/// Bundle pieces made from launches.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// One kernel per launch ([`Convention::Current`]) or per name ([`Convention::Study2020`]).
    pub kernels: Vec<Kernel>,
    /// Devices named by the CSV's `Device` and `CC` columns.
    pub devices: Vec<Device>,
    /// What was used for what, and what was missing.
    pub notes: Vec<String>,
}

/// Sums the first alternative group with any metric present; the group used is reported.
fn pick(l: &Launch, alts: &Alternatives) -> Option<(f64, usize)> {
    for (gi, (group, factor)) in alts.groups.iter().enumerate() {
        let vals: Vec<f64> = group
            .iter()
            .filter_map(|m| l.metrics.get(*m).copied())
            .collect();
        if !vals.is_empty() {
            return Some((vals.iter().sum::<f64>() * factor, gi));
        }
    }
    None
}

fn describe(alts: &Alternatives, gi: usize) -> String {
    let (group, factor) = alts.groups[gi];
    let names = group.join(" + ");
    if factor == 1.0 {
        names
    } else {
        format!("({names}) × {factor}")
    }
}

/// Turns launches into bundle kernels with the metric table of their architecture.
///
/// # Errors
/// [`NcuError::NoTime`] for a launch without a time metric.
pub fn to_kernels(launches: &[Launch], opts: &ImportOptions) -> Result<Imported, NcuError> {
    let mut notes = BTreeSet::new();
    let mut devices: Vec<Device> = Vec::new();
    let mut kernels = Vec::with_capacity(launches.len());
    let study = opts.convention == Convention::Study2020;
    let mut untimed: Vec<&Launch> = Vec::new();
    for l in launches {
        let arch = match (opts.arch, &l.compute_capability) {
            (Some(a), _) => Some(a),
            (None, Some(cc)) => match Arch::from_compute_capability(cc) {
                Ok((a, note)) => {
                    notes.extend(note);
                    Some(a)
                }
                Err(e) => {
                    notes.insert(e);
                    None
                }
            },
            (None, None) => None,
        };
        if let Some(d) = &l.device
            && !devices.iter().any(|x| x.id == *d)
        {
            let mut dev = Device::new(
                d.clone(),
                if d.parse::<u32>().is_ok() {
                    format!("GPU {d}")
                } else {
                    d.clone()
                },
            );
            dev.compute_capability.clone_from(&l.compute_capability);
            devices.push(dev);
        }

        let time_s = match (
            l.metrics.get(time::DURATION),
            l.metrics.get(time::CYCLES),
            l.metrics.get(time::CYCLES_PER_SECOND),
        ) {
            (Some(d), _, _) if !study && *d > 0.0 => *d,
            (_, Some(c), Some(r)) if *r > 0.0 && *c > 0.0 => {
                if !study && l.metrics.contains_key(time::DURATION) {
                    notes.insert(format!(
                        "{} was zero for some launches: time from SM cycles over the SM clock",
                        time::DURATION
                    ));
                }
                c / r
            }
            (Some(d), _, _) if *d > 0.0 => *d,
            _ => {
                untimed.push(l);
                continue;
            }
        };

        let mut flops = Flops::default();
        for c in &metrics::CUDA_CORE_FLOPS {
            if let Some(v) = l.metrics.get(c.metric) {
                let w = if study { c.weight_2020 } else { c.weight };
                let cur = flops.get(c.datapath).unwrap_or(0.0);
                flops.set(c.datapath, Some(cur + w * v));
            }
        }
        match (arch, l.metrics.get(metrics::VOLTA_TENSOR_INST)) {
            (Some(Arch::Volta), Some(v)) => {
                flops.tensor_fp16 = Some(metrics::VOLTA_FLOPS_PER_TENSOR_INST * v);
                notes.insert(format!(
                    "tensor FLOPs as {} × {} (Volta HMMA.884, counted as FP16 tensor work)",
                    metrics::VOLTA_FLOPS_PER_TENSOR_INST,
                    metrics::VOLTA_TENSOR_INST
                ));
            }
            (_, Some(_)) => {
                notes.insert(format!(
                    "{} was collected but counts instructions whose FLOPs depend on the GPU; it is used on Volta only (pass the architecture if this is a V100)",
                    metrics::VOLTA_TENSOR_INST
                ));
            }
            _ => {}
        }
        for d in Datapath::ALL {
            if let Some(alts) = metrics::tensor_counters(d, arch)
                && let Some((v, gi)) = pick(l, &alts)
            {
                flops.set(d, Some(v));
                notes.insert(format!("{} FLOPs from {}", d.label(), describe(&alts, gi)));
            }
        }

        let mut bytes = Bytes::default();
        for level in MemoryLevel::KERNEL_LEVELS {
            let Some(alts) = metrics::byte_counters(level, arch) else {
                continue;
            };
            if let Some((v, gi)) = pick(l, &alts) {
                match level {
                    MemoryLevel::L1 => bytes.l1 = Some(v),
                    MemoryLevel::L2 => bytes.l2 = Some(v),
                    _ => bytes.hbm = Some(v),
                }
                if gi > 0 {
                    notes.insert(format!(
                        "{} bytes from {} ({} not collected)",
                        level.label(),
                        describe(&alts, gi),
                        describe(&alts, 0)
                    ));
                }
            }
        }

        let mut k = Kernel::new(l.name.clone(), time_s, opts.source);
        k.launches = l.launches;
        k.device.clone_from(&l.device);
        k.grid = l.grid;
        k.block = l.block;
        k.flops = flops;
        k.bytes = bytes;
        kernels.push(k);
    }

    if let Some(first) = untimed.first() {
        if kernels.is_empty() {
            return Err(match why_untimed(first) {
                None => NcuError::NoTime {
                    id: first.id,
                    name: first.name.clone(),
                },
                Some(found) => NcuError::NoPositiveTime {
                    id: first.id,
                    name: first.name.clone(),
                    found,
                },
            });
        }
        notes.insert(format!(
            "{} launch{} without a positive time left out (the first: ID {}, {})",
            untimed.len(),
            if untimed.len() == 1 { "" } else { "es" },
            first.id,
            first.name
        ));
    }
    for (level, have) in
        MemoryLevel::KERNEL_LEVELS.map(|lv| (lv, kernels.iter().any(|k| k.bytes.get(lv).is_some())))
    {
        if !have && !kernels.is_empty() {
            notes.insert(format!(
                "no {} byte counter in the data: those points are left out",
                level.label()
            ));
        }
    }

    if study {
        kernels = study_2020_aggregate(launches, &kernels);
        notes.insert(
            "2020-study convention: hadd and hmul count 1 FLOP, hfma 2; a kernel's time is Σ cycles / (Σ clock rate / launches)".into(),
        );
    }
    Ok(Imported {
        kernels,
        devices,
        notes: notes.into_iter().collect(),
    })
}

/// Why a launch with time metrics has no positive time (they are zero), or `None` when it has
/// none at all.
fn why_untimed(l: &Launch) -> Option<String> {
    let [d, c, r] =
        [time::DURATION, time::CYCLES, time::CYCLES_PER_SECOND].map(|m| l.metrics.get(m));
    if d.is_none() && c.is_none() && r.is_none() {
        return None;
    }
    let found: Vec<String> = [
        (time::DURATION, d),
        (time::CYCLES, c),
        (time::CYCLES_PER_SECOND, r),
    ]
    .iter()
    .filter_map(|(m, v)| v.map(|v| format!("{m} is {v}")))
    .collect();
    let mut s = found.join(" and ");
    if c.is_none() || r.is_none() {
        s.push_str(&format!(
            ", and no {} with {} to time it instead",
            time::CYCLES,
            time::CYCLES_PER_SECOND
        ));
    }
    Some(s)
}

/// The 2020 study's aggregation: counters summed by name, and the time of a name taken as
/// `Σ sm__cycles_elapsed.avg / (Σ sm__cycles_elapsed.avg.per_second / launches)`, the launches'
/// cycles over their mean clock rate.
fn study_2020_aggregate(launches: &[Launch], per_launch: &[Kernel]) -> Vec<Kernel> {
    let mut cycles: BTreeMap<(Option<&str>, &str), (f64, f64)> = BTreeMap::new();
    for l in launches {
        let e = cycles
            .entry((l.device.as_deref(), l.name.as_str()))
            .or_default();
        e.0 += l.metrics.get(time::CYCLES).copied().unwrap_or(f64::NAN);
        // A per-name entry carries its launches' mean rate: Σ rate = mean × launches.
        #[allow(clippy::cast_precision_loss)]
        let n = l.launches as f64;
        e.1 += n * l
            .metrics
            .get(time::CYCLES_PER_SECOND)
            .copied()
            .unwrap_or(f64::NAN);
    }
    let mut agg = aggregate_by_name(per_launch);
    for k in &mut agg {
        if let Some((c, r)) = cycles.get(&(k.device.as_deref(), k.name.as_str())) {
            // Launch counts are far below 2^53.
            #[allow(clippy::cast_precision_loss)]
            let n = k.launches as f64;
            let t = c / (r / n);
            if t.is_finite() && t > 0.0 {
                k.time = KernelTime {
                    total_s: t,
                    per_launch: None,
                };
            }
        }
    }
    agg
}
