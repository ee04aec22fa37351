//! What a run's bundle gets once measured: the theoretical ceilings at the observed clocks and
//! the datasheet's, the "best reach" marks on Tensor Core ceilings ([`limit_of`]), the bundle
//! completed ([`assemble`]), and the per-device bundles of `--all-devices` combined
//! ([`combine`]).

use roofline_model::analysis::ceilings::{FigureKind, datapath_in_use, level_in_use};
use roofline_model::bundle::{
    Bundle, ClockSource, Datapath, Device, Limit, LimitKind, Machine, MemoryLevel, Method, Skipped,
};

/// The SM clock measured while a ceiling's figure that the charts use was measured: the
/// sustained window's (our kernels' stamps, else NVML's median) for a sustained figure, the
/// burst's otherwise (stamps or NVML, as [`super::rig`] records `clock_hz`).
fn clock_of_figure(
    clock_hz: Option<f64>,
    sustained: Option<&roofline_model::bundle::Sustained>,
    kind: FigureKind,
) -> Option<f64> {
    match (kind, sustained) {
        (FigureKind::Sustained, Some(s)) => s.clock_hz.or_else(|| {
            s.telemetry
                .as_ref()
                .and_then(|t| t.sm_clock_hz.as_ref())
                .map(|c| c.median)
        }),
        _ => clock_hz,
    }
    .filter(|c| c.is_finite() && *c > 0.0)
}

/// Theoretical ceilings: each compute datapath at the SM clock measured while the ceiling the
/// charts use for it ran (that ceiling's own kernel, cuBLASLt's GEMM where it wins, and its
/// sustained window's clock where the charts use the sustained figure; the device's reported
/// clock where we measured nothing), L1/shared likewise at the clock of the L1 ceiling in use,
/// HBM from bus width and memory clock; and, for a GPU whose datasheet is known
/// ([`roofline_model::analysis::theoretical::DATASHEETS`]), every datapath at the datasheet's clock and
/// the datasheet's HBM figure, each row labelled with its clock.
fn theoretical(device: &Device, m: &mut Machine, notes: &mut Vec<String>) {
    let l1_clock = level_in_use(m, MemoryLevel::L1).and_then(|(i, kind)| {
        let b = &m.bandwidth[i];
        (b.method == Method::Empirical)
            .then(|| clock_of_figure(b.clock_hz, b.sustained.as_ref(), kind))
            .flatten()
            .map(|c| (c, b.implementation.clone()))
    });
    let (mut bw_at_l1, _, missing) =
        roofline_model::analysis::theoretical::ceilings(device, l1_clock.as_ref().map(|c| c.0));
    if let Some((_, Some(what))) = &l1_clock {
        for c in bw_at_l1
            .iter_mut()
            .filter(|c| c.clock_source == Some(ClockSource::Measured))
        {
            c.implementation = c
                .implementation
                .take()
                .map(|i| format!("{i}, during {what}"));
        }
    }
    notes.extend(
        missing
            .into_iter()
            .map(|s| format!("no theoretical ceiling for {s}")),
    );
    let mut compute = Vec::new();
    for d in Datapath::ALL {
        let clock = datapath_in_use(m, d).and_then(|(i, kind)| {
            let c = &m.compute[i];
            (c.method == Method::Empirical)
                .then(|| clock_of_figure(c.clock_hz, c.sustained.as_ref(), kind))
                .flatten()
                .map(|clock| (clock, c.implementation.clone()))
        });
        let (_, cs, _) =
            roofline_model::analysis::theoretical::ceilings(device, clock.as_ref().map(|c| c.0));
        compute.extend(cs.into_iter().filter(|c| c.datapath == d).map(|mut c| {
            if let Some((_, Some(what))) = &clock {
                c.implementation = c.implementation.map(|i| format!("{i}, during {what}"));
            }
            c
        }));
    }
    let (sheet_bw, sheet_compute) =
        roofline_model::analysis::theoretical::datasheet_ceilings(device);
    if sheet_compute.is_empty() && device.compute_capability.as_deref() == Some("9.0") {
        notes.push(format!(
            "no datasheet row for {}: its product is not among the known datasheets, so theoretical figures are at the measured or reported clock only",
            device.name
        ));
    }
    m.bandwidth.extend(bw_at_l1);
    m.bandwidth.extend(sheet_bw);
    m.compute.extend(compute);
    m.compute.extend(sheet_compute);
}

/// Below this fraction of the theoretical figure at its own clock, a Tensor Core ceiling with
/// no known cause is marked as our best reach (`unexplained_shortfall`).
pub const SHORTFALL: f64 = 0.8;
/// Below this fraction, a ceiling on a path known not to reach the hardware's rate is marked as
/// our best reach (`instruction`).
pub const KNOWN_SHORT: f64 = 0.9;

/// Why a Tensor Core figure on a GPU of compute capability `cc` is the best we reached rather
/// than the hardware's, if it is: `own` is our `mma.sync` kernel (else the cuBLASLt reference),
/// `value` the burst figure and `theoretical` the figure at the same clock.
///
/// - sm_90, our own `mma.sync` for FP16, BF16, TF32, FP8 and INT8: only `wgmma` (sm_90a) drives
///   Hopper's Tensor Cores at full rate (Luo et al., "Benchmarking and Dissecting the Nvidia
///   Hopper GPU Architecture", arXiv 2402.13499);
/// - sm_90 INT8, either path, under 0.9 of theoretical: full-rate INT8 needs `wgmma` (IGMMA);
///   `mma.sync`'s IMMA and cuBLASLt's INT8 kernels reach about half (the H100 host
///   survey's `torch._int_mm`, 946 of 1979 TOP/s);
/// - sm_90 FP64 Tensor, either path, under 0.9: DMMA through `mma.sync` is the only FP64 Tensor
///   path (`wgmma` has no FP64), and no figure near the datasheet's has been shown for it (the
///   survey's cuBLAS DGEMM: 54.7 of 66.9 TFLOP/s);
/// - any Tensor Core figure under [`SHORTFALL`] of its theoretical figure: unexplained.
pub fn limit_of(
    d: Datapath,
    cc: (i32, i32),
    own: bool,
    value: f64,
    theoretical: Option<f64>,
) -> Option<Limit> {
    if !d.is_tensor() {
        return None;
    }
    let ratio = theoretical
        .filter(|t| *t > 0.0)
        .map(|t| value / t)
        .filter(|r| r.is_finite());
    let of = |r: f64| format!("{r:.2} of the theoretical figure at its clock");
    let hopper = cc == (9, 0);
    let short = ratio.is_some_and(|r| r < KNOWN_SHORT);
    let instruction = |reason: String| {
        Some(Limit {
            kind: LimitKind::Instruction,
            reason,
        })
    };
    if hopper && own && d != Datapath::TensorFp64 {
        return instruction(format!(
            "mma.sync, not Hopper's full-rate path: only wgmma (sm_90a) reaches the {} rate{}",
            d.label(),
            ratio.map(|r| format!("; {}", of(r))).unwrap_or_default()
        ));
    }
    if hopper && d == Datapath::TensorInt8 && short {
        return instruction(format!(
            "INT8 at full rate on sm_90 needs wgmma (IGMMA); mma.sync's IMMA and cuBLASLt's INT8 kernels reach about half ({})",
            ratio.map(of).unwrap_or_default()
        ));
    }
    if hopper && d == Datapath::TensorFp64 && short {
        return instruction(format!(
            "FP64 Tensor on sm_90 runs through mma.sync DMMA only (wgmma has no FP64), and no figure near the datasheet's has been shown for it ({})",
            ratio.map(of).unwrap_or_default()
        ));
    }
    match ratio {
        Some(r) if r < SHORTFALL => Some(Limit {
            kind: LimitKind::UnexplainedShortfall,
            reason: format!("{}, and no known cause", of(r)),
        }),
        _ => None,
    }
}

/// Marks the Tensor Core ceilings that are our best reach rather than the hardware's
/// ([`limit_of`]), each against the theoretical figure at its own clock (the SM clock our
/// kernel stamped or NVML saw while it ran). A ceiling without a measured clock is compared with
/// nothing: a shortfall is never claimed against the device's maximum clock, which a GPU under
/// load may not hold.
fn mark_limits(device: &Device, m: &mut Machine) {
    let cc = device
        .compute_capability
        .as_deref()
        .and_then(roofline_model::analysis::theoretical::parse_cc)
        .and_then(|(a, b)| Some((i32::try_from(a).ok()?, i32::try_from(b).ok()?)));
    let (Some(cc), Some(rates), Some(sms)) = (
        cc,
        device
            .compute_capability
            .as_deref()
            .and_then(roofline_model::analysis::theoretical::rates),
        device.sm_count,
    ) else {
        return;
    };
    for c in m
        .compute
        .iter_mut()
        .filter(|c| c.method == Method::Empirical && c.datapath.is_tensor())
    {
        let theoretical = c
            .clock_hz
            .filter(|c| c.is_finite() && *c > 0.0)
            .and_then(|clock| {
                roofline_model::analysis::theoretical::compute_peak(rates, c.datapath, sms, clock)
            });
        c.limit = limit_of(c.datapath, cc, !c.reference, c.value, theoretical);
    }
}

/// Completes a run's bundle: theoretical ceilings at the observed clocks and the datasheet's, the
/// "best reach" marks, the device, the machine, what was skipped, the wall time, and whether (and
/// why) the run is incomplete.
pub fn assemble(
    mut bundle: Bundle,
    device: Device,
    mut m: Machine,
    skipped: Vec<Skipped>,
    failure: Option<&str>,
    wall_s: f64,
) -> Bundle {
    let mut notes = Vec::new();
    theoretical(&device, &mut m, &mut notes);
    mark_limits(&device, &mut m);
    notes.push(format!("wall time of the run: {wall_s:.1} s"));
    if let Some(f) = failure {
        notes.push(format!("incomplete: {f}"));
    }
    bundle.complete = failure.is_none();
    bundle.devices.push(device);
    bundle.machines.push(m);
    bundle.skipped = skipped;
    bundle.notes = notes;
    bundle
}

/// One bundle from the per-device bundles of `roofline machine --all-devices` (labelled, e.g.
/// `gpu1`), joined by [`roofline_model::bundle::merge::merge`]: devices and machines side by side,
/// complete only if every run is, notes and skipped items kept (notes prefixed by their
/// device's label). A single device's bundle is kept as it is; `None` when there is none. The
/// merged bundle keeps the first run's provenance (driver and CUDA versions).
///
/// # Errors
/// The merge's, when two runs disagree about one device id.
pub fn combine(
    mut runs: Vec<(String, Bundle)>,
) -> Result<Option<Bundle>, roofline_model::bundle::merge::MergeError> {
    if runs.len() <= 1 {
        return Ok(runs.pop().map(|(_, b)| b));
    }
    let provenance = runs[0].1.provenance.clone();
    let mut b = roofline_model::bundle::merge::merge(&runs, provenance)?;
    b.description = Some(format!(
        "roofline machine: ceilings of {} GPUs ({})",
        b.devices.len(),
        b.devices
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(Some(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_model::bundle::{BandwidthCeiling, ComputeCeiling};

    /// Best reach, by hand (made-up unit-test figures): on sm_90 our own mma.sync (not FP64)
    /// is marked by its instruction whatever its figure; INT8 and FP64 Tensor under 0.9 of the
    /// theoretical figure at their clock are marked on either path, above it not; anything
    /// under 0.8 with no known cause is an unexplained shortfall; CUDA-core figures never.
    #[test]
    fn best_reach_marks_follow_the_rules() {
        let h = (9, 0);
        let kind = |l: Option<Limit>| l.map(|l| l.kind);
        let own = limit_of(Datapath::TensorBf16, h, true, 600e12, Some(1000e12)).unwrap();
        assert_eq!(own.kind, LimitKind::Instruction);
        assert!(
            own.reason.contains("wgmma") && own.reason.contains("0.60"),
            "{}",
            own.reason
        );
        assert_eq!(
            kind(limit_of(
                Datapath::TensorBf16,
                h,
                false,
                850e12,
                Some(1000e12)
            )),
            None
        );
        let int8 = limit_of(Datapath::TensorInt8, h, false, 946e12, Some(1900e12)).unwrap();
        assert_eq!(int8.kind, LimitKind::Instruction);
        assert!(int8.reason.contains("IGMMA"), "{}", int8.reason);
        assert_eq!(
            kind(limit_of(
                Datapath::TensorFp64,
                h,
                false,
                54.7e12,
                Some(66.9e12)
            )),
            Some(LimitKind::Instruction)
        );
        assert_eq!(
            kind(limit_of(
                Datapath::TensorFp64,
                h,
                true,
                62e12,
                Some(66.9e12)
            )),
            None
        );
        assert_eq!(
            kind(limit_of(
                Datapath::TensorFp16,
                (8, 0),
                false,
                200e12,
                Some(312e12)
            )),
            Some(LimitKind::UnexplainedShortfall)
        );
        assert_eq!(
            kind(limit_of(
                Datapath::TensorFp16,
                (8, 0),
                true,
                280e12,
                Some(312e12)
            )),
            None
        );
        assert_eq!(
            kind(limit_of(Datapath::Fp32, h, true, 1e12, Some(60e12))),
            None
        );
        assert_eq!(
            kind(limit_of(Datapath::TensorFp16, (8, 0), true, 1e12, None)),
            None
        );
    }

    /// Made-up unit-test inputs (not measurements) for an H100 SXM: the theoretical rows come at
    /// the measured clock and at the datasheet's (1830 MHz for Tensor FP16: 989.4 TFLOP/s), each
    /// labelled; our own mma.sync INT8 figure is marked "best reach"; the bundle validates.
    #[test]
    fn an_h100_gets_datasheet_rows_and_best_reach_marks() {
        use roofline_model::bundle::{ClockSource, Provenance};
        let mut d = Device::new("gpu0", "NVIDIA H100 80GB HBM3");
        d.compute_capability = Some("9.0".into());
        d.sm_count = Some(132);
        d.sm_clock_hz = Some(1.98e9);
        d.memory_bus_width_bits = Some(5120);
        d.memory_clock_hz = Some(2.619e9);
        let mut m = Machine {
            device: "gpu0".into(),
            ..Machine::default()
        };
        let mut int8 = ComputeCeiling::new(Datapath::TensorInt8, 900e12, Method::Empirical);
        int8.clock_hz = Some(1.755e9);
        m.compute.push(int8);
        let b = assemble(Bundle::new(Provenance::default()), d, m, vec![], None, 1.0);
        let mc = &b.machines[0];
        let theo = |dp: Datapath, src: ClockSource| {
            mc.compute
                .iter()
                .find(|c| c.datapath == dp && c.clock_source == Some(src))
                .map(|c| c.value)
        };
        let sheet = theo(Datapath::TensorFp16, ClockSource::Datasheet).unwrap();
        assert!((sheet / 1e12 - 989.4).abs() < 1.0, "{sheet}");
        assert_eq!(
            theo(Datapath::TensorInt8, ClockSource::Measured),
            Some(132.0 * 8192.0 * 1.755e9)
        );
        assert!(theo(Datapath::TensorFp16, ClockSource::DeviceMax).is_some());
        assert!(mc.bandwidth.iter().any(|c| c.level == MemoryLevel::Hbm
            && c.clock_source == Some(ClockSource::Datasheet)
            && c.value == 3.35e12));
        let own = mc
            .compute
            .iter()
            .find(|c| c.method == Method::Empirical)
            .unwrap();
        assert_eq!(own.limit.as_ref().unwrap().kind, LimitKind::Instruction);
        roofline_model::validate(&b).unwrap();
        let json = roofline_model::to_json(&b).unwrap();
        assert_eq!(roofline_model::parse_bundle(&json).unwrap(), b);
    }

    /// Fixed, made-up unit-test inputs (not measurements): the assembled bundle carries the
    /// theoretical ceilings at the clock each kernel observed, validates, and round-trips.
    #[test]
    fn assembled_bundles_validate_and_round_trip() {
        use roofline_model::bundle::Provenance;
        let mut d = Device::new("gpu0", "Unit-test GPU");
        d.compute_capability = Some("9.0".into());
        d.sm_count = Some(132);
        d.sm_clock_hz = Some(1.98e9);
        d.memory_bus_width_bits = Some(5120);
        d.memory_clock_hz = Some(2.619e9);
        d.l2_bytes = Some(50.0 * 1048576.0);
        let mut m = Machine {
            device: "gpu0".into(),
            ..Machine::default()
        };
        let mut fp32 = ComputeCeiling::new(Datapath::Fp32, 60e12, Method::Empirical);
        fp32.clock_hz = Some(1.755e9);
        fp32.samples = vec![59e12, 60e12, 61e12];
        m.compute.push(fp32);
        let mut l1 = BandwidthCeiling::new(MemoryLevel::L1, 25e12, Method::Empirical);
        l1.clock_hz = Some(1.9e9);
        m.bandwidth.push(l1);
        let skipped = vec![Skipped {
            what: "x".into(),
            reason: "y".into(),
        }];
        let b = assemble(
            Bundle::new(Provenance::default()),
            d.clone(),
            m.clone(),
            skipped.clone(),
            None,
            21.5,
        );
        assert!(b.complete);
        let theo = |dp: Datapath| {
            b.machines[0]
                .compute
                .iter()
                .find(|c| c.datapath == dp && c.method == Method::Theoretical)
                .unwrap()
                .clone()
        };
        assert_eq!(theo(Datapath::Fp32).clock_hz, Some(1.755e9));
        assert!((theo(Datapath::Fp32).value - 132.0 * 256.0 * 1.755e9).abs() < 1.0);
        // Datapaths we did not measure fall back to the device's reported clock.
        assert_eq!(theo(Datapath::TensorFp16).clock_hz, Some(1.98e9));
        let l1_theo = b.machines[0]
            .bandwidth
            .iter()
            .find(|c| c.level == MemoryLevel::L1 && c.method == Method::Theoretical)
            .unwrap();
        assert_eq!(l1_theo.clock_hz, Some(1.9e9));
        assert!(
            b.machines[0]
                .bandwidth
                .iter()
                .any(|c| c.level == MemoryLevel::Hbm && c.method == Method::Theoretical)
        );
        assert!(b.notes.iter().any(|n| n == "wall time of the run: 21.5 s"));
        roofline_model::validate(&b).unwrap();
        let json = roofline_model::to_json(&b).unwrap();
        assert_eq!(roofline_model::parse_bundle(&json).unwrap(), b);

        let failed = assemble(
            Bundle::new(Provenance::default()),
            d,
            m,
            skipped,
            Some("the L2 phase failed: out of memory"),
            3.0,
        );
        assert!(!failed.complete);
        assert!(
            failed
                .notes
                .iter()
                .any(|n| n == "incomplete: the L2 phase failed: out of memory")
        );
        roofline_model::validate(&failed).unwrap();
    }

    /// Made-up unit-test inputs (not measurements): our mma.sync BF16 ran at 1.98 GHz, the
    /// cuBLASLt reference (the ceiling the charts use, by its sustained figure) at 1.71 GHz
    /// over its sustained window (NVML; library kernels stamp no clock): the theoretical row
    /// "at the measured clock" is at 1.71 GHz and says whose clock it is. A cuBLASLt INT8
    /// figure at half the theoretical one but with no measured clock gets no shortfall label.
    #[test]
    fn theoretical_rows_use_the_clock_of_the_ceiling_in_use() {
        use roofline_model::bundle::{Provenance, Spread, Sustained, Telemetry};
        let mut d = Device::new("gpu0", "Unit-test GPU");
        d.compute_capability = Some("8.0".into());
        d.sm_count = Some(108);
        d.sm_clock_hz = Some(1.41e9);
        let mut m = Machine {
            device: "gpu0".into(),
            ..Machine::default()
        };
        let mut own = ComputeCeiling::new(Datapath::TensorBf16, 250e12, Method::Empirical);
        own.clock_hz = Some(1.98e9);
        own.implementation = Some("own mma.sync kernel".into());
        let mut lib = ComputeCeiling::new(Datapath::TensorBf16, 290e12, Method::Empirical);
        lib.reference = true;
        lib.implementation = Some("cuBLASLt GEMM".into());
        lib.clock_hz = Some(1.41e9);
        let spread = |v: f64| Spread {
            min: v,
            median: v,
            max: v,
        };
        lib.sustained = Some(Sustained {
            value: 280e12,
            window_s: 2.0,
            settle_s: 1.0,
            settled: true,
            samples: vec![],
            clock_hz: None,
            telemetry: Some(Telemetry {
                samples: 400,
                window_s: 2.0,
                sm_clock_hz: Some(spread(1.71e9)),
                power_w: None,
                energy_power_w: None,
                temperature_c_max: None,
                clock_event_reasons: vec![],
            }),
        });
        m.compute.push(own);
        m.compute.push(lib);
        let mut int8 = ComputeCeiling::new(Datapath::TensorInt8, 300e12, Method::Empirical);
        int8.reference = true;
        m.compute.push(int8);
        let b = assemble(Bundle::new(Provenance::default()), d, m, vec![], None, 1.0);
        let at_clock = b.machines[0]
            .compute
            .iter()
            .find(|c| {
                c.datapath == Datapath::TensorBf16 && c.clock_source == Some(ClockSource::Measured)
            })
            .unwrap();
        assert_eq!(at_clock.clock_hz, Some(1.71e9));
        assert_eq!(at_clock.value, 108.0 * 2048.0 * 1.71e9);
        assert!(
            at_clock
                .implementation
                .as_deref()
                .is_some_and(|i| i.ends_with("during cuBLASLt GEMM")),
            "{:?}",
            at_clock.implementation
        );
        let int8 = b.machines[0]
            .compute
            .iter()
            .find(|c| c.datapath == Datapath::TensorInt8 && c.method == Method::Empirical)
            .unwrap();
        assert_eq!(int8.limit, None);
        // Its theoretical row falls back to the device's reported clock, labelled so.
        assert!(
            b.machines[0]
                .compute
                .iter()
                .any(|c| c.datapath == Datapath::TensorInt8
                    && c.clock_source == Some(ClockSource::DeviceMax))
        );
    }

    /// Fixed unit-test inputs: two devices' runs become one bundle through the shared merge.
    #[test]
    fn devices_are_combined_by_the_shared_merge() {
        use roofline_model::bundle::Provenance;
        let run = |id: &str, name: &str, complete: bool| {
            let mut b = Bundle::new(Provenance {
                driver_version: Some("580.1".into()),
                ..Provenance::default()
            });
            b.devices.push(Device::new(id, name));
            b.machines.push(Machine {
                device: id.into(),
                ..Machine::default()
            });
            b.skipped.push(Skipped {
                what: format!("{id} thing"),
                reason: "why".into(),
            });
            b.notes.push("wall time of the run: 1.0 s".into());
            b.complete = complete;
            (id.to_string(), b)
        };
        assert!(combine(vec![]).unwrap().is_none());
        let one = run("gpu0", "A", true);
        assert_eq!(combine(vec![one.clone()]).unwrap(), Some(one.1.clone()));
        let b = combine(vec![one, run("gpu1", "B", false)])
            .unwrap()
            .unwrap();
        assert_eq!(b.devices.len(), 2);
        assert_eq!(b.machines.len(), 2);
        assert_eq!(b.skipped.len(), 2);
        assert!(!b.complete);
        assert_eq!(b.provenance.driver_version.as_deref(), Some("580.1"));
        assert!(
            b.notes
                .contains(&"gpu1: wall time of the run: 1.0 s".to_string())
        );
        assert_eq!(
            b.description.as_deref(),
            Some("roofline machine: ceilings of 2 GPUs (A, B)")
        );
        roofline_model::validate(&b).unwrap();
        // The same id for two different GPUs is refused.
        assert!(combine(vec![run("gpu0", "A", true), run("gpu0", "B", true)]).is_err());
    }
}
