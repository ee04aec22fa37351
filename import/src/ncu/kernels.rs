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
    /// The architecture, when the launches do not name theirs (a `CC` column); the import
    /// driver refuses one that contradicts theirs.
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
    /// False when a launch lacked a value that one of its figures needs (that figure is then
    /// unknown), or a launch was left out.
    pub complete: bool,
    /// Launches left out for want of a positive time: how many, and why the first has none
    /// (the caller refuses them unless an incomplete bundle was asked for).
    pub left_out: Option<(usize, NcuError)>,
}

/// Sums the first alternative group with any metric present; the group used is reported.
/// `Err` names a metric of that group the launch has no value for (the sum would cover only
/// part of it), or, where no group has a value, one the capture holds without a value here.
fn pick(l: &Launch, alts: &Alternatives) -> Result<Option<(f64, usize)>, &'static str> {
    for (gi, (group, factor)) in alts.groups.iter().enumerate() {
        let vals: Vec<f64> = group
            .iter()
            .filter_map(|m| l.metrics.get(*m).copied())
            .collect();
        if !vals.is_empty() {
            if let Some(m) = group.iter().find(|m| l.missing.contains(**m)) {
                return Err(m);
            }
            return Ok(Some((vals.iter().sum::<f64>() * factor, gi)));
        }
    }
    match alts
        .groups
        .iter()
        .flat_map(|(g, _)| g.iter())
        .find(|m| l.missing.contains(**m))
    {
        Some(m) => Err(m),
        None => Ok(None),
    }
}

/// Launches that lack a value one of their figures needs: how many, and the first with what it
/// lacks and which figures are unknown for it.
#[derive(Default)]
struct Lacking {
    launches: usize,
    first: Option<(u64, String, Vec<String>)>,
}

impl Lacking {
    fn add(&mut self, l: &Launch, what: Vec<String>) {
        if what.is_empty() {
            return;
        }
        self.launches += 1;
        if self.first.is_none() {
            self.first = Some((l.id, l.name.clone(), what));
        }
    }

    fn note(&self) -> Option<String> {
        let (id, name, what) = self.first.as_ref()?;
        Some(format!(
            "INCOMPLETE: {} launch{} lack{} a counter value (n/a, an empty cell or no row) that a figure needs: those figures are unknown, not the other counters' sum (the first: launch {id} ({}): {})",
            self.launches,
            if self.launches == 1 { "" } else { "es" },
            if self.launches == 1 { "s" } else { "" },
            roofline_model::analysis::names::truncate(name, 100),
            what.join(", ")
        ))
    }
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
    let mut lacking = Lacking::default();
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

        let mut lacks: Vec<String> = Vec::new();
        let mut lost = |metric: &str, figure: String| {
            lacks.push(format!("{metric} → {figure} unknown"));
        };
        let mut flops = Flops::default();
        let mut unknown: Vec<Datapath> = Vec::new();
        for c in &metrics::CUDA_CORE_FLOPS {
            if l.missing.contains(c.metric) {
                lost(c.metric, format!("{} FLOPs", c.datapath.label()));
                unknown.push(c.datapath);
            } else if let Some(v) = l.metrics.get(c.metric) {
                let w = if study { c.weight_2020 } else { c.weight };
                let cur = flops.get(c.datapath).unwrap_or(0.0);
                flops.set(c.datapath, Some(cur + w * v));
            }
        }
        for d in unknown {
            flops.set(d, None);
        }
        let volta_missing = l.missing.contains(metrics::VOLTA_TENSOR_INST);
        match (arch, l.metrics.get(metrics::VOLTA_TENSOR_INST)) {
            (Some(Arch::Volta), _) if volta_missing => {
                lost(
                    metrics::VOLTA_TENSOR_INST,
                    format!("{} FLOPs", Datapath::TensorFp16.label()),
                );
            }
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
            let Some(alts) = metrics::tensor_counters(d, arch) else {
                continue;
            };
            match pick(l, &alts) {
                Ok(Some((v, gi))) => {
                    flops.set(d, Some(v));
                    notes.insert(format!("{} FLOPs from {}", d.label(), describe(&alts, gi)));
                }
                Ok(None) => {}
                Err(m) => {
                    flops.set(d, None);
                    lost(m, format!("{} FLOPs", d.label()));
                }
            }
        }

        let mut bytes = Bytes::default();
        for level in MemoryLevel::KERNEL_LEVELS {
            let Some(alts) = metrics::byte_counters(level, arch) else {
                continue;
            };
            let picked = match pick(l, &alts) {
                Ok(p) => p,
                Err(m) => {
                    lost(m, format!("{} bytes", level.label()));
                    None
                }
            };
            if let Some((v, gi)) = picked {
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

        lacking.add(l, lacks);
        check_finite(l, time_s, &flops, &bytes)?;
        let mut k = Kernel::new(l.name.clone(), time_s, opts.source);
        k.launches = l.launches;
        k.device.clone_from(&l.device);
        k.grid = l.grid;
        k.block = l.block;
        k.flops = flops;
        k.bytes = bytes;
        kernels.push(k);
    }

    let mut left_out = None;
    if let Some(first) = untimed.first() {
        let why = match why_untimed(first) {
            None => NcuError::NoTime {
                id: first.id,
                name: roofline_model::analysis::names::truncate(&first.name, 100),
            },
            Some(found) => NcuError::NoPositiveTime {
                id: first.id,
                name: roofline_model::analysis::names::truncate(&first.name, 100),
                found,
            },
        };
        if kernels.is_empty() {
            return Err(why);
        }
        let launches: u64 = untimed
            .iter()
            .map(|l| l.launches)
            .fold(0, u64::saturating_add);
        notes.insert(format!(
            "INCOMPLETE: {launches} launch{} without a positive time left out of every total (the first: {why})",
            if launches == 1 { "" } else { "es" },
        ));
        left_out = Some((untimed.len(), why));
    }
    if !kernels.is_empty() && kernels.iter().all(|k| k.flops.is_unknown()) && lacking.launches == 0
    {
        notes.insert(
            "no FLOP counter in the data (sm__sass_thread_inst_executed_op_*_pred_on.sum, sm__ops_path_tensor_*, sm__inst_executed_pipe_tensor.sum): FLOPs are unknown, so the kernels have no performance or intensity and are placed by time alone; collect them with `roofline profile`, or ncu --metrics with the names in docs/ncu-metrics.md".into(),
        );
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
        let left: BTreeSet<*const Launch> =
            untimed.iter().map(|l| std::ptr::from_ref(*l)).collect();
        let timed: Vec<&Launch> = launches
            .iter()
            .filter(|l| !left.contains(&std::ptr::from_ref(*l)))
            .collect();
        kernels = study_2020_aggregate(&timed, &kernels);
        for k in &kernels {
            let sums = Launch {
                id: 0,
                name: k.name.clone(),
                device: None,
                compute_capability: None,
                grid: None,
                block: None,
                metrics: BTreeMap::new(),
                launches: k.launches,
                missing: BTreeSet::new(),
                at: Some(format!(
                    "kernel {} (its {} launches summed, as the 2020 study counted)",
                    roofline_model::analysis::names::truncate(&k.name, 100),
                    k.launches
                )),
            };
            check_finite(&sums, k.time.total_s, &k.flops, &k.bytes)?;
        }
        notes.insert(
            "2020-study convention: hadd and hmul count 1 FLOP, hfma 2; a kernel's time is Σ cycles / (Σ clock rate / launches)".into(),
        );
    }
    let mut notes: Vec<String> = notes.into_iter().collect();
    let complete = lacking.launches == 0 && left_out.is_none();
    notes.extend(lacking.note());
    Ok(Imported {
        kernels,
        devices,
        notes,
        complete,
        left_out,
    })
}

/// A launch's figures, each made of its counters (a sum, a weight, a quotient): one beyond the
/// largest double is refused where the launch was read, never written as `inf`.
fn check_finite(l: &Launch, time_s: f64, flops: &Flops, bytes: &Bytes) -> Result<(), NcuError> {
    let bad = if !time_s.is_finite() {
        Some("time".to_string())
    } else if let Some(d) = Datapath::ALL
        .into_iter()
        .find(|d| flops.get(*d).is_some_and(|v| !v.is_finite()))
    {
        Some(format!("{} FLOPs", d.label()))
    } else {
        MemoryLevel::KERNEL_LEVELS
            .into_iter()
            .find(|lv| bytes.get(*lv).is_some_and(|v| !v.is_finite()))
            .map(|lv| format!("{} bytes", lv.label()))
    };
    match bad {
        None => Ok(()),
        Some(figure) => Err(NcuError::Overflow {
            at: l.at.clone().unwrap_or_else(|| {
                format!(
                    "launch {} ({})",
                    l.id,
                    roofline_model::analysis::names::truncate(&l.name, 100)
                )
            }),
            figure,
        }),
    }
}

/// Why a launch with time metrics has no positive time (they are zero), or `None` when it has
/// none at all.
fn why_untimed(l: &Launch) -> Option<String> {
    let [d, c, r] =
        [time::DURATION, time::CYCLES, time::CYCLES_PER_SECOND].map(|m| l.metrics.get(m));
    let missing = |m: &str| l.missing.contains(m);
    if d.is_none() && c.is_none() && r.is_none() && !missing(time::DURATION) {
        return None;
    }
    let found: Vec<String> = [
        (time::DURATION, d),
        (time::CYCLES, c),
        (time::CYCLES_PER_SECOND, r),
    ]
    .iter()
    .filter_map(|(m, v)| match v {
        Some(v) => Some(format!("{m} is {v}")),
        None if missing(m) => Some(format!("{m} has no value (n/a or an empty cell)")),
        None => None,
    })
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
fn study_2020_aggregate(launches: &[&Launch], per_launch: &[Kernel]) -> Vec<Kernel> {
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
