//! How long `roofline machine` takes, before it runs: every phase's planned seconds, computed
//! from the measurement plan's own numbers ([`MeasurePlan`]: warm-ups, bursts, settling, windows,
//! the soak, the GEMM search and its finalists; [`Plan`]: buffers, shapes, the sweep's grid) and
//! the work of each launch (the kernels' work formulas, as the launchers count it), for a GPU
//! whose datasheet is known. Pure: `roofline machine --plan` prints it on any machine, and
//! `scripts/gpu/validate.sh --plan` builds each device call's budget on it.
//!
//! Every figure is a range. The plan fixes most of a ceiling's time (its warm-up, settling and
//! window are seconds of GPU time); what it does not fix is how long one launch takes, which sets
//! how far an interval overshoots its minimum and how long a long launch (an FP64 GEMM) makes
//! its intervals. A launch's length is bounded below by its work at the datasheet's figure and,
//! above, by the same work at half that figure (an assumption, stated in the output: a kernel
//! reaching under half its datasheet rate would make its rows longer). What is not known before
//! a run at all (NVRTC's compile time on the host's CPU, the driver's start-up, the launch
//! overhead's own loop) is an allowance, labelled as such, never presented as a measurement.

use roofline_kernels::{Kernel, VECTOR_BYTES, fma_work, mma_work, per_thread_work, stream_work};
use roofline_model::analysis::theoretical::{self, DATASHEETS, Datasheet};
use roofline_model::bundle::{Datapath, Device, MemoryLevel};

use crate::timing::{BurstPlan, MeasurePlan, launches_for};

use super::{Plan, compute, gemm, memory, sweep};

/// A GPU the schedule is computed for: a datasheet's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// The datasheet.
    pub sheet: &'static Datasheet,
    /// L2 capacity, bytes (sizes the L2 kernel's set and the HBM buffers).
    pub l2_bytes: usize,
    /// Where the L2 capacity comes from.
    pub l2_source: &'static str,
}

impl Target {
    /// The targets known: the datasheets of [`DATASHEETS`] with their L2 capacity (50 MB on
    /// H100 SXM5 and H100 PCIe: the H100 whitepaper's table 3; H200: the same GH100 die).
    pub fn known() -> Vec<Target> {
        DATASHEETS
            .iter()
            .map(|sheet| Target {
                sheet,
                l2_bytes: 50 * 1024 * 1024,
                l2_source: "NVIDIA H100 Tensor Core GPU architecture whitepaper, table 3 (L2 cache size 50 MB; H200 is the same GH100 die)",
            })
            .collect()
    }

    /// The target whose product name is `name`, ignoring case, spaces and hyphens
    /// (`h100-sxm5`, `"H200 SXM"`).
    pub fn named(name: &str) -> Option<Target> {
        let key = |s: &str| {
            s.chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase()
        };
        Self::known()
            .into_iter()
            .find(|t| key(t.sheet.product) == key(name))
    }

    fn device(&self) -> Device {
        let mut d = Device::new("plan", self.sheet.product);
        d.compute_capability = Some(format!(
            "{}.{}",
            self.sheet.compute_capability.0, self.sheet.compute_capability.1
        ));
        d.sm_count = Some(self.sheet.sm_count);
        d.sm_clock_hz = Some(self.sheet.boost_clock_hz);
        d
    }

    fn cc(&self) -> (i32, i32) {
        let (a, b) = self.sheet.compute_capability;
        (i32::try_from(a).unwrap_or(0), i32::try_from(b).unwrap_or(0))
    }

    /// The datasheet's peak on a datapath, FLOP/s.
    fn peak(&self, d: Datapath) -> Option<f64> {
        let rates = theoretical::rates(self.device().compute_capability.as_deref()?)?;
        let clock = if theoretical::at_tensor_clock(d) {
            self.sheet.tensor_clock_hz
        } else {
            self.sheet.boost_clock_hz
        };
        theoretical::compute_peak(rates, d, self.sheet.sm_count, clock)
    }

    /// L1's figure at the boost clock: 128 B/clk/SM × SMs × clock (`theoretical`).
    fn l1(&self) -> Option<f64> {
        let (bw, _, _) = theoretical::ceilings(&self.device(), Some(self.sheet.boost_clock_hz));
        bw.iter()
            .find(|c| c.level == MemoryLevel::L1)
            .map(|c| c.value)
    }
}

/// A range of seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// The least.
    pub low: f64,
    /// The most.
    pub high: f64,
}

impl Span {
    fn exactly(s: f64) -> Span {
        Span { low: s, high: s }
    }

    fn add(self, o: Span) -> Span {
        Span {
            low: self.low + o.low,
            high: self.high + o.high,
        }
    }

    fn times(self, n: f64) -> Span {
        Span {
            low: self.low * n,
            high: self.high * n,
        }
    }
}

/// One row of the schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The phase, as `roofline machine` names it.
    pub phase: &'static str,
    /// What runs.
    pub what: String,
    /// Its planned seconds.
    pub seconds: Span,
    /// Whether the figure is an allowance (not computed from the plan).
    pub allowance: bool,
}

/// One launch's length: its work at the datasheet figure, and at half of it.
fn launch(work: f64, rate: Option<f64>) -> Span {
    match rate.filter(|r| *r > 0.0) {
        Some(r) => Span {
            low: work / r,
            high: 2.0 * work / r,
        },
        None => Span::exactly(0.0),
    }
}

/// One interval of launches of length `l` under a minimum of `min_s` (the launches per interval
/// chosen as the plan does) at each end of the range.
fn interval(l: Span, min_s: f64, max_launches: u32) -> Span {
    let one = |x: f64| f64::from(launches_for(x, min_s, max_launches)) * x;
    Span {
        low: one(l.low).max(if l.low > 0.0 { 0.0 } else { min_s }),
        high: one(l.high).max(if l.high > 0.0 { 0.0 } else { min_s }),
    }
}

/// One ceiling measured by `m` ([`crate::Session::measure`]) with launches of length `l`:
/// warm-up (the session's first: at least `first_warmup_s`, at most `first_warmup_max_s`), the
/// burst's intervals after a lead launch, settling (at least `settle_steps` steps, at most
/// `settle_max_s` and one interval more), and the window (`window_s` and at most one interval
/// more) after its lead launch.
pub fn measure(m: &MeasurePlan, l: Span, first: bool) -> Span {
    let i = interval(l, m.interval_min_s, m.max_launches);
    let warm = if first {
        Span {
            low: m.first_warmup_s.max(m.warmup_s),
            high: m.first_warmup_max_s.max(m.warmup_s),
        }
    } else {
        Span::exactly(m.warmup_s)
    }
    .add(l);
    let burst = i.times(m.burst_intervals as f64).add(l);
    if !m.sustained {
        return warm.add(burst);
    }
    let settle = Span {
        low: f64::from(m.settle_steps) * m.settle_step_s,
        high: m.settle_max_s,
    }
    .add(Span {
        low: 0.0,
        high: i.high,
    })
    .add(l);
    let window = Span::exactly(m.window_s)
        .add(Span {
            low: 0.0,
            high: i.high,
        })
        .add(l);
    warm.add(burst).add(settle).add(window)
}

/// One burst timing ([`crate::Session::burst`]) of launches of length `l`, after the
/// plan's untimed calls and warm-up.
pub fn burst(b: &BurstPlan, l: Span) -> Span {
    let i = interval(l, b.interval_min_s, b.max_launches);
    let warm = if b.warmup_s > 0.0 {
        Span::exactly(b.warmup_s).add(l)
    } else {
        Span::exactly(0.0)
    };
    l.times(b.untimed as f64 + 2.0)
        .add(warm)
        .add(i.times(b.intervals as f64))
        .add(l)
}

/// Allowance for the run's start: the CUDA context, NVRTC compiling the five sources, loading
/// cuBLASLt: not known before a run on the host (NVRTC's time depends on its CPU).
pub const START_ALLOWANCE_S: f64 = 30.0;
/// Allowance for the launch overhead's loops: 11,050 empty launches (50 + 1,000 timed singly,
/// 10,000 back to back) and a graph of 1,000, at up to 50 µs each.
pub const OVERHEAD_ALLOWANCE_S: f64 = 1.0;

/// Allowance for finding an NVLink peer: a CUDA context on each other GPU of an eight-GPU host,
/// at up to 0.3 s each (nothing on a host with one GPU).
pub const PEER_ALLOWANCE_S: f64 = 2.1;

/// The schedule of `roofline machine` under `plan` on `target`, phase by phase, in the order of
/// a run.
pub fn schedule(plan: Plan, target: &Target) -> Vec<Row> {
    let m = MeasurePlan::of(plan.quick);
    let sms = target.sheet.sm_count;
    let cc = target.cc();
    let hbm = Some(target.sheet.hbm_bytes_per_s);
    let l1 = target.l1();
    let mut rows = vec![Row {
        phase: "start",
        what:
            "CUDA context, NVRTC compiles five sources, cuBLASLt and NVML loaded, operands filled"
                .into(),
        seconds: Span::exactly(START_ALLOWANCE_S),
        allowance: true,
    }];
    let mut first = true;
    let mut ceiling = |phase: &'static str, what: String, l: Span, rows: &mut Vec<Row>| {
        rows.push(Row {
            phase,
            what,
            seconds: measure(&m, l, first),
            allowance: false,
        });
        first = false;
    };
    // HBM: read, write, copy, and the driver's copy (moving what the copy kernel moves).
    let bytes = plan.hbm_bytes().max(target.l2_bytes * 16);
    let elements = (bytes / VECTOR_BYTES as usize) as u64;
    for k in [
        Kernel::HbmRead,
        Kernel::HbmWrite,
        Kernel::HbmCopy,
        Kernel::HbmCopy,
    ] {
        let w = stream_work(k, elements, 1).unwrap_or_default().bytes;
        ceiling(
            "HBM",
            format!("{} ({} MiB)", k.entry(), bytes >> 20),
            launch(w, hbm),
            &mut rows,
        );
    }
    if let Some(r) = rows.last_mut() {
        r.what = format!("cuMemcpyDtoD ({} MiB)", bytes >> 20);
    }
    // L2: at least as fast as HBM, at most as fast as L1.
    let (elements, reps) = memory::l2_set(plan, sms, target.l2_bytes);
    let w = stream_work(Kernel::L2Read, elements, reps)
        .unwrap_or_default()
        .bytes;
    let l = Span {
        low: l1.map_or(0.0, |r| w / r),
        high: 2.0 * w / target.sheet.hbm_bytes_per_s,
    };
    ceiling("L2", "l2_read".into(), l, &mut rows);
    let (_, threads, reps) = memory::resident_set(plan);
    let t = u64::from(sms) * 2 * u64::from(threads);
    for k in [Kernel::L1Read, Kernel::L1ReadNc, Kernel::SharedRead] {
        let w = per_thread_work(k, t, reps).unwrap_or_default().bytes;
        ceiling(
            "L1 and shared memory",
            k.entry().into(),
            launch(w, l1),
            &mut rows,
        );
    }
    let (blocks, threads) = compute::FMA_GRID;
    let t = u64::from(sms * blocks * threads);
    for (k, iterations) in compute::fma_cases(plan.quick) {
        if cc < k.min_compute_capability() {
            continue;
        }
        let w = fma_work(k, t, iterations).unwrap_or_default();
        let rate = w.flops.and_then(|(d, _)| target.peak(d));
        ceiling(
            "CUDA-core FMA peaks",
            k.entry().into(),
            launch(w.flop_count(), rate),
            &mut rows,
        );
    }
    let arch = roofline_kernels::arch_name(cc.0, cc.1);
    for (k, iterations) in compute::mma_cases(plan.quick, cc) {
        if cc < k.min_compute_capability()
            || (roofline_kernels::audit_refusal(k, &arch).is_some() && !plan.diagnose_refused)
        {
            continue;
        }
        let t = u64::from(sms * compute::mma_blocks_per_sm(k) * 256);
        let w = mma_work(k, t, iterations).unwrap_or_default();
        let rate = w.flops.and_then(|(d, _)| target.peak(d));
        ceiling(
            "Tensor Core mma.sync peaks",
            k.entry().into(),
            launch(w.flop_count(), rate),
            &mut rows,
        );
    }
    // The cuBLASLt references: the soak, every candidate, the finalists in full.
    let bf16 = target.peak(Datapath::TensorBf16);
    rows.push(Row {
        phase: "cuBLASLt reference GEMMs",
        what: "soak: BF16 GEMM 8192³".into(),
        seconds: Span::exactly(m.soak_s).add(launch(2.0 * 8192f64.powi(3), bf16)),
        allowance: false,
    });
    let candidates = BurstPlan::candidates(plan.quick);
    for (d, min_cc) in gemm::DATAPATHS {
        if cc < min_cc {
            continue;
        }
        let shapes = plan.gemm_shapes(d);
        let rate = target.peak(d);
        let mut search = Span::exactly(0.0);
        let mut longest = Span::exactly(0.0);
        for &(a, b, c) in &shapes {
            let l = launch(2.0 * (a * b * c) as f64, rate);
            search = search.add(burst(&candidates, l).times(plan.gemm_algorithms() as f64));
            if l.high > longest.high {
                longest = l;
            }
        }
        rows.push(Row {
            phase: "cuBLASLt reference GEMMs",
            what: format!(
                "{}: {} shapes × {} algorithms",
                d.label(),
                shapes.len(),
                plan.gemm_algorithms()
            ),
            seconds: search,
            allowance: false,
        });
        // The finalists may be of any shape: the longest launch bounds them above.
        let finalists = Span {
            low: measure(&m, launch(2.0 * 8192f64.powi(3), rate), false).low,
            high: measure(&m, longest, false).high,
        };
        rows.push(Row {
            phase: "cuBLASLt reference GEMMs",
            what: format!("{}: {} finalists in full", d.label(), m.gemm_finalists),
            seconds: finalists.times(m.gemm_finalists as f64),
            allowance: false,
        });
    }
    rows.push(Row {
        phase: "launch overhead",
        what: "empty kernels: 1,050 timed singly, 10,000 back to back, a graph of 1,000".into(),
        seconds: Span::exactly(OVERHEAD_ALLOWANCE_S),
        allowance: true,
    });
    // The host link: each direction a burst of copies, a copy's length bounded by PCIe 5.0 x16
    // (about 64 GB/s one way) below and a slow host's 8 GB/s above (an assumption, as the
    // launches' half-rate bound is).
    let copy = plan.host_link_bytes() as f64;
    let l = Span {
        low: copy / 64e9,
        high: copy / 8e9,
    };
    for what in ["host to device", "device to host"] {
        rows.push(Row {
            phase: "PCIe host link",
            what: format!(
                "page-locked copies {what}, {} MiB each (at 8 to 64 GB/s)",
                plan.host_link_bytes() >> 20
            ),
            seconds: burst(&BurstPlan::host_link(plan.quick), l),
            allowance: false,
        });
    }
    // The NVLink to a peer GPU, on a host with one: each direction a burst of device-to-device
    // copies of the same size (NVLink from 50 GB/s, a two-board bridge, to 900 GB/s, NVLink 5,
    // one way); nothing on a host without an NVLink peer (the phase is skipped).
    let nv = Span {
        low: copy / 900e9,
        high: copy / 50e9,
    };
    for what in ["to the peer", "back"] {
        rows.push(Row {
            phase: "NVLink peer copies",
            what: format!(
                "device copies {what}, {} MiB each (at 50 to 900 GB/s; none without an NVLink peer)",
                plan.host_link_bytes() >> 20
            ),
            seconds: Span {
                low: 0.0,
                high: burst(&BurstPlan::host_link(plan.quick), nv).high,
            },
            allowance: false,
        });
    }
    rows.push(Row {
        phase: "NVLink peer copies",
        what: "a CUDA context on each other GPU, to find the peer (allowance)".into(),
        seconds: Span::exactly(PEER_ALLOWANCE_S),
        allowance: true,
    });
    // The sweep: every point of the grid as a burst.
    let (points, left_out) = sweep::sweep_grid(plan);
    let b = BurstPlan::sweep(plan.quick);
    let traffic = if plan.quick {
        64.0 * 1048576.0
    } else {
        256.0 * 1048576.0
    };
    let mut total = Span::exactly(0.0);
    for (k, _, _, per_sweep) in &points {
        let reps = f64::from(sweep::sweep_repeats(*per_sweep, traffic));
        let flops = per_sweep.flop_count() * reps;
        let bytes = per_sweep.bytes * reps;
        let peak = per_sweep
            .flops
            .and_then(|(d, _)| target.peak(d))
            .unwrap_or(0.0);
        let slow = |r: Option<f64>| r.filter(|r| *r > 0.0).map_or(0.0, |r| bytes / r);
        let low = (if peak > 0.0 { flops / peak } else { 0.0 }).max(slow(l1));
        let high = 2.0 * (if peak > 0.0 { flops / peak } else { 0.0 }).max(slow(hbm));
        let _ = k;
        total = total.add(burst(&b, Span { low, high }));
    }
    rows.push(Row {
        phase: "ERT-style sweep",
        what: format!(
            "{} points ({} over the FLOP cap left out)",
            points.len(),
            left_out
        ),
        seconds: total,
        allowance: false,
    });
    rows
}

/// The schedule's total.
pub fn total(rows: &[Row]) -> Span {
    rows.iter()
        .fold(Span::exactly(0.0), |acc, r| acc.add(r.seconds))
}

/// The schedule as text: one line per row, then a line per phase's subtotal, then the total
/// and a last line `total_seconds LOW HIGH` for scripts.
pub fn render(plan: Plan, target: &Target) -> String {
    use std::fmt::Write as _;
    let rows = schedule(plan, target);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "roofline machine{}{}: planned seconds on {} ({} SMs, its datasheet's clocks and HBM figure; L2 {} MiB from the {})",
        if plan.quick { " --quick" } else { "" },
        if plan.diagnose_refused {
            " --diagnose-refused"
        } else {
            ""
        },
        target.sheet.product,
        target.sheet.sm_count,
        target.l2_bytes >> 20,
        target.l2_source
    );
    let _ = writeln!(
        out,
        "Each range: launches at the datasheet figure (low) to half of it (high); nothing here was measured.\n"
    );
    let _ = writeln!(out, "{:<28} {:<58} {:>16}", "phase", "what", "seconds");
    for r in &rows {
        let s = if r.allowance {
            format!("{:.0} (allowance)", r.seconds.high)
        } else {
            format!("{:.1} – {:.1}", r.seconds.low, r.seconds.high)
        };
        let _ = writeln!(out, "{:<28} {:<58} {:>16}", r.phase, r.what, s);
    }
    let _ = writeln!(out);
    let mut phases: Vec<&'static str> = Vec::new();
    for r in &rows {
        if !phases.contains(&r.phase) {
            phases.push(r.phase);
        }
    }
    for p in phases {
        let t = total(
            &rows
                .iter()
                .filter(|r| r.phase == p)
                .cloned()
                .collect::<Vec<_>>(),
        );
        let _ = writeln!(
            out,
            "{:<28} {:>75}",
            p,
            format!("{:.1} – {:.1}", t.low, t.high)
        );
    }
    let t = total(&rows);
    let _ = writeln!(
        out,
        "{:<28} {:>75}",
        "total",
        format!("{:.1} – {:.1}", t.low, t.high)
    );
    let _ = writeln!(out, "total_seconds {:.1} {:.1}", t.low, t.high);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Plan {
        Plan {
            quick: false,
            diagnose_refused: false,
        }
    }

    /// One ceiling of short launches (1 ms against the full plan's 2 ms intervals), by hand:
    /// warm-up 0.4 s, burst 11 intervals of 2 launches, settling 1.0 to 3.0 s (+ an interval),
    /// window 2.0 s (+ an interval), a lead launch each.
    #[test]
    fn a_ceiling_is_the_plans_seconds() {
        let m = MeasurePlan::full();
        let l = Span {
            low: 1e-3,
            high: 1e-3,
        };
        let s = measure(&m, l, false);
        let lead = 1e-3;
        let low = 0.4 + lead + 11.0 * 2e-3 + lead + 1.0 + lead + 2.0 + lead;
        let high = 0.4 + lead + 11.0 * 2e-3 + lead + 3.0 + 2e-3 + lead + 2.0 + 2e-3 + lead;
        assert!((s.low - low).abs() < 1e-9, "{s:?}");
        assert!((s.high - high).abs() < 1e-9, "{s:?}");
        // The session's first ceiling warms up 1 to 2 s.
        let f = measure(&m, l, true);
        assert!((f.low - s.low - 0.6).abs() < 1e-9 && (f.high - s.high - 1.6).abs() < 1e-9);
    }

    /// The full plan on an H100 SXM5 and an H200 fits the first device call's share (the
    /// validation's first call, `scripts/gpu/validate.sh call1`, gives `roofline machine` 300 s
    /// of its 360), and every phase of a run is there.
    #[test]
    fn the_full_plan_fits_the_first_call() {
        for name in ["H100 SXM5", "H200 SXM"] {
            let t = Target::named(name).unwrap();
            let rows = schedule(full(), &t);
            let total = total(&rows);
            assert!(total.high < 300.0, "{name}: {total:?}");
            assert!(total.low > 100.0, "{name}: {total:?}");
            for p in [
                "start",
                "HBM",
                "L2",
                "L1 and shared memory",
                "CUDA-core FMA peaks",
                "Tensor Core mma.sync peaks",
                "cuBLASLt reference GEMMs",
                "launch overhead",
                "PCIe host link",
                "NVLink peer copies",
                "ERT-style sweep",
            ] {
                assert!(rows.iter().any(|r| r.phase == p), "{name}: no {p}");
            }
            // 4 HBM, 1 L2, 3 L1/shared, 4 FMA, 6 mma.sync (FP8 refused on sm_90), 2 PCIe,
            // 2 NVLink.
            let measured = rows
                .iter()
                .filter(|r| {
                    !r.allowance
                        && !matches!(r.phase, "cuBLASLt reference GEMMs" | "ERT-style sweep")
                })
                .count();
            assert_eq!(measured, 22, "{name}");
        }
        assert!(Target::named("h100-sxm5").is_some());
        assert!(Target::named("B200").is_none());
    }

    #[test]
    fn the_rendered_plan_ends_with_its_total_for_scripts() {
        let t = Target::named("H100 SXM5").unwrap();
        let text = render(full(), &t);
        let last = text.lines().last().unwrap();
        let v: Vec<f64> = last
            .strip_prefix("total_seconds ")
            .unwrap()
            .split(' ')
            .map(|x| x.parse().unwrap())
            .collect();
        let s = total(&schedule(full(), &t));
        assert!((v[0] - s.low).abs() < 0.06 && (v[1] - s.high).abs() < 0.06);
        assert!(text.contains("(allowance)"));
        assert!(text.contains("nothing here was measured"));
    }
}
