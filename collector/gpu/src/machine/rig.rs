//! What every phase works with: the [`Rig`] (the timing session, the plans, the compiled
//! kernels, the run's seed and notes), with its helpers (filled buffers, residency checks, a
//! ceiling's measurement and figures, the SASS audit's refusals and `--diagnose-refused`), and
//! a measurement's [`Figures`] made into a bandwidth or compute ceiling ([`bw`], [`peak`]).

use std::cell::Cell;

use cudarc::driver::CudaSlice;
use roofline_kernels::{Fill, Kernel, LaunchWork, Source};
use roofline_model::analysis::stats::median_or_nan;
use roofline_model::bundle::{
    BandwidthCeiling, ComputeCeiling, Datapath, MemoryLevel, Method, Operands, Skipped, Sustained,
    Telemetry, TimingInfo,
};

use crate::compiled::Compiled;
use crate::launch::Launcher;
use crate::launch::fill::Filler;
use crate::nvml::throttle_text;
use crate::timing::MeasurePlan;
use crate::{DeviceError, Measurement, Session};

use super::Plan;

/// Everything a phase needs: the timing session, the plans and the compiled kernels.
pub(super) struct Rig {
    /// The timing session on the device.
    pub(super) session: Session,
    /// How much to measure.
    pub(super) plan: Plan,
    /// How each ceiling is timed.
    pub(super) measure: MeasurePlan,
    /// `kernels/bandwidth.cu`.
    pub(super) bandwidth: Compiled,
    /// `kernels/fma.cu`.
    pub(super) fma: Compiled,
    /// `kernels/mma.cu`.
    pub(super) mma: Compiled,
    /// `kernels/ert.cu`.
    pub(super) ert: Compiled,
    /// `kernels/init.cu`.
    pub(super) init: Compiled,
    /// The run's seed; every buffer gets the next value.
    pub(super) seed: Cell<u64>,
    /// What the run noticed about its own launches (for the bundle's notes).
    pub(super) notes: Vec<String>,
}

/// A measured ceiling's figures, from a [`Measurement`] and one launch's work.
pub(super) struct Figures {
    /// The burst figure: the median interval's rate.
    pub(super) value: f64,
    samples: Vec<f64>,
    clock_hz: Option<f64>,
    timing: TimingInfo,
    telemetry: Option<Telemetry>,
    sustained: Option<Sustained>,
}

impl Figures {
    fn of(session: &Session, m: &Measurement, work: f64) -> Figures {
        let samples = m.burst.rates(work);
        let sustained = m.window.as_ref().map(|w| Sustained {
            value: w.overall_rate(work),
            window_s: w.seconds(),
            settle_s: m.settle_s,
            settled: m.settled,
            samples: w.rates(work),
            clock_hz: w.clock_hz,
            telemetry: session.telemetry(w.wall),
        });
        Figures {
            value: median_or_nan(&samples),
            samples,
            // A burst too short for a stamp to land (none lost in practice: every launch
            // stamps) takes the sustained window's clock.
            clock_hz: m
                .burst
                .clock_hz
                .or_else(|| m.window.as_ref().and_then(|w| w.clock_hz)),
            timing: TimingInfo {
                warmup_s: m.warmup_s,
                launch_s: m.launch_s,
                launches_per_interval: m.burst.launches,
                interval_s: m.burst.median_s(),
                intervals: u32::try_from(m.burst.intervals.len()).unwrap_or(u32::MAX),
            },
            telemetry: session.telemetry(m.burst.wall),
            sustained,
        }
    }

    /// The sustained figure, when the plan measured one.
    pub(super) fn sustained_value(&self) -> Option<f64> {
        self.sustained.as_ref().map(|s| s.value)
    }

    /// The SM clock NVML saw during the burst (median), Hz: the clock of a library kernel,
    /// which stamps none. A burst of a few milliseconds may hold no sample (NVML is read every
    /// [`crate::nvml::PERIOD`]): then the sustained window's median, measured on the same
    /// kernel a moment later. `None` only when NVML saw neither.
    pub(super) fn nvml_clock(&self) -> Option<f64> {
        let median = |t: Option<&Telemetry>| t.and_then(|t| t.sm_clock_hz).map(|s| s.median);
        median(self.telemetry.as_ref())
            .or_else(|| median(self.sustained.as_ref().and_then(|s| s.telemetry.as_ref())))
    }
}

/// The note when a sustained figure is more than 3% under its burst: with the clock-event
/// reasons NVML gave over the window, or saying none was recorded.
fn sustained_note(what: &str, burst: f64, sustained: &Sustained) -> Option<String> {
    if !(burst > 0.0 && sustained.value < 0.97 * burst) {
        return None;
    }
    let why = match sustained.telemetry.as_ref().map(throttle_text) {
        Some(t) if !t.is_empty() => format!("clock-event reasons over the window: {t}"),
        Some(_) => "NVML recorded no clock-event reason over the window".into(),
        None => "NVML was not sampled".into(),
    };
    Some(format!(
        "{what}: sustained {:.1}% under burst ({why})",
        (1.0 - sustained.value / burst) * 100.0
    ))
}

impl Rig {
    /// The run's operand filler: `init.cu` from the run's seed, each buffer the next value.
    fn filler(&self) -> Filler<'_> {
        Filler::new(&self.session, &self.init, &self.seed)
    }

    /// Fills the first `values` values of `buf` by `kind` on the GPU and waits for it.
    pub(super) fn fill(
        &self,
        buf: &CudaSlice<u8>,
        kind: Fill,
        values: u64,
    ) -> Result<(), DeviceError> {
        self.filler().fill(buf, kind, values)
    }

    /// A buffer of `bytes` filled by `kind` (as many whole values as fit).
    pub(super) fn alloc_filled(
        &self,
        bytes: usize,
        kind: Fill,
        what: &str,
    ) -> Result<CudaSlice<u8>, DeviceError> {
        self.filler().alloc_filled(bytes, kind, what)
    }

    /// The module a kernel source is compiled into.
    fn compiled(&self, s: Source) -> &Compiled {
        match s {
            Source::Bandwidth => &self.bandwidth,
            Source::Fma => &self.fma,
            Source::Mma => &self.mma,
            Source::Ert | Source::Dl => &self.ert,
            Source::Init => &self.init,
        }
    }

    /// Notes when `kernel`, compiled here, cannot hold the blocks per SM that `cfg` plans
    /// resident at once (more registers or shared memory than the SASS audit saw): the launch
    /// then runs in more than one wave and its figure may come out low. The driver's occupancy
    /// calculator (`cuOccupancyMaxActiveBlocksPerMultiprocessor`) answers; a failing query is
    /// noted too, never fatal.
    pub(super) fn check_residency(&mut self, kernel: Kernel, cfg: &cudarc::driver::LaunchConfig) {
        let compiled = self.compiled(kernel.source());
        let planned = cfg.grid_dim.0.div_ceil(self.session.sm_count().max(1));
        let fits = compiled.function(kernel.entry()).ok().and_then(|f| {
            let blocks = f
                .occupancy_max_active_blocks_per_multiprocessor(
                    cfg.block_dim.0 * cfg.block_dim.1 * cfg.block_dim.2,
                    cfg.shared_mem_bytes as usize,
                    None,
                )
                .ok()?;
            Some((blocks, f.num_regs().ok()))
        });
        if let Some(note) = residency_note(kernel.entry(), planned, fits)
            && !self.notes.contains(&note)
        {
            self.notes.push(note);
        }
    }

    /// How many blocks of `threads` of `kernel` fit on one SM at once, at most `wanted` (the
    /// driver's occupancy calculator; `wanted` when it cannot say).
    pub(super) fn resident_blocks(&self, kernel: Kernel, threads: u32, wanted: u32) -> u32 {
        self.compiled(kernel.source())
            .function(kernel.entry())
            .ok()
            .and_then(|f| {
                f.occupancy_max_active_blocks_per_multiprocessor(threads, 0, None)
                    .ok()
            })
            .filter(|b| *b > 0)
            .map_or(wanted, |b| b.min(wanted))
    }

    /// One ceiling's measurement under the run's plan.
    pub(super) fn measure<E: From<DeviceError>>(
        &mut self,
        what: &str,
        run: impl FnMut(&Session) -> Result<(), E>,
    ) -> Result<Measurement, E> {
        let plan = self.measure;
        self.session.measure(what, &plan, run)
    }

    /// The figures of a measurement of launches doing `work` each, noting a sustained figure
    /// well under its burst.
    pub(super) fn figures(&mut self, what: &str, m: &Measurement, work: f64) -> Figures {
        let f = Figures::of(&self.session, m, work);
        if let Some(n) = f
            .sustained
            .as_ref()
            .and_then(|s| sustained_note(what, f.value, s))
        {
            self.notes.push(n);
        }
        f
    }

    /// With `--diagnose-refused`, the SASS audit's reason for refusing `kernel` here when that is
    /// the only reason (its code is real, not the empty stub of a GPU too old for it): such a
    /// kernel may be timed for a diagnostic note.
    pub(super) fn diagnosable(&self, kernel: Kernel) -> Option<String> {
        let cc = self.session.compute_capability();
        if !self.plan.diagnose_refused || cc < kernel.min_compute_capability() {
            return None;
        }
        roofline_kernels::audit_refusal(kernel, &roofline_kernels::arch_name(cc.0, cc.1))
    }

    /// Times a kernel the SASS audit refuses here (`--diagnose-refused`, burst only) and notes
    /// how fast it ran, or how its run failed: a diagnostic never stops the measurement.
    pub(super) fn diagnose(
        &mut self,
        l: Result<&dyn Launcher, &DeviceError>,
        kernel: Kernel,
        reason: &str,
    ) {
        let plan = self.measure.burst_only();
        let timed = match l {
            Ok(l) => self
                .session
                .measure(kernel.entry(), &plan, |s| l.launch(s))
                .map(|m| (m, l.work()))
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match timed {
            Ok((m, work)) => {
                if let Some((d, flops)) = work.flops {
                    let rate = m.burst.median_rate(flops);
                    self.notes
                        .push(diagnostic_note(kernel.entry(), reason, d, rate));
                }
            }
            Err(e) => self.notes.push(format!(
                "diagnostic run of {} (refused here by the SASS audit) failed: {e}",
                kernel.entry()
            )),
        }
    }

    /// Whether `kernel` must not be timed here; if so, records why under `what`.
    pub(super) fn refused(&self, kernel: Kernel, what: String, skipped: &mut Vec<Skipped>) -> bool {
        match roofline_kernels::refusal(kernel, self.session.compute_capability()) {
            Some(reason) => {
                skipped.push(Skipped { what, reason });
                true
            }
            None => false,
        }
    }
}

/// The note of a kernel timed although the SASS audit refuses it here (`--diagnose-refused`).
fn diagnostic_note(entry: &str, reason: &str, datapath: Datapath, rate: f64) -> String {
    format!(
        "diagnostic, not a ceiling: {entry}, which the SASS audit refuses on this GPU ({reason}), ran at {} on the {} datapath",
        roofline_model::analysis::si::format_si(rate, "FLOP/s"),
        datapath.label()
    )
}

/// The note for a launch planning `planned` blocks per SM of a kernel that fits `fits`
/// (resident blocks per SM, registers per thread), if any: none when all fit.
fn residency_note(entry: &str, planned: u32, fits: Option<(u32, Option<i32>)>) -> Option<String> {
    match fits {
        None => Some(format!(
            "{entry}: the driver's occupancy query failed; whether its {planned} blocks per SM are resident at once is unchecked"
        )),
        Some((resident, _)) if resident >= planned => None,
        Some((resident, regs)) => Some(format!(
            "{entry}: {resident} of the {planned} blocks per SM it launches are resident at once{}, so it runs in more than one wave and its figure may be low",
            regs.map(|r| format!(" ({r} registers per thread)"))
                .unwrap_or_default()
        )),
    }
}

/// A bandwidth ceiling from a measurement's figures and the bytes one launch moves.
pub(super) fn bw(
    f: Figures,
    work: LaunchWork,
    operands: Operands,
    implementation: String,
) -> BandwidthCeiling {
    let level = work.level.unwrap_or(MemoryLevel::Hbm);
    let mut c = BandwidthCeiling::new(level, f.value, Method::Empirical);
    c.implementation = Some(implementation);
    c.clock_hz = f.clock_hz;
    c.samples = f.samples;
    c.operands = Some(operands);
    c.timing = Some(f.timing);
    c.telemetry = f.telemetry;
    c.sustained = f.sustained;
    c
}

/// A compute ceiling from a measurement's figures on a datapath.
pub(super) fn peak(
    f: Figures,
    d: Datapath,
    operands: Operands,
    implementation: String,
) -> ComputeCeiling {
    let mut c = ComputeCeiling::new(d, f.value, Method::Empirical);
    c.implementation = Some(implementation);
    c.clock_hz = f.clock_hz;
    c.samples = f.samples;
    c.operands = Some(operands);
    c.timing = Some(f.timing);
    c.telemetry = f.telemetry;
    c.sustained = f.sustained;
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diagnostic's note says it is none of the machine's ceilings, and why the kernel was
    /// refused.
    #[test]
    fn a_diagnostic_says_it_is_no_ceiling() {
        assert_eq!(
            diagnostic_note(
                "mma_fp8",
                "FP8 lowered to FP16 HMMA",
                Datapath::TensorFp8,
                2.5e14
            ),
            "diagnostic, not a ceiling: mma_fp8, which the SASS audit refuses on this GPU (FP8 lowered to FP16 HMMA), ran at 250 TFLOP/s on the Tensor FP8 datapath"
        );
    }

    /// A kernel that fits the blocks per SM its launch plans gets no note; one that does not (a
    /// compiler giving `hbm_read` 33 registers: 7 blocks of 256 threads per SM, not 8) is noted
    /// with its registers, and so is an occupancy query that failed.
    #[test]
    fn residency_is_noted_only_when_short() {
        assert_eq!(residency_note("hbm_read", 8, Some((8, Some(32)))), None);
        assert_eq!(residency_note("l1_read", 2, Some((3, None))), None);
        assert_eq!(
            residency_note("hbm_read", 8, Some((7, Some(33)))).as_deref(),
            Some(
                "hbm_read: 7 of the 8 blocks per SM it launches are resident at once (33 registers per thread), so it runs in more than one wave and its figure may be low"
            )
        );
        assert!(
            residency_note("fma_f32", 8, None)
                .is_some_and(|n| n.contains("occupancy query failed"))
        );
    }

    /// A sustained figure more than 3% under its burst is noted with the reasons NVML gave.
    #[test]
    fn a_sagging_sustained_figure_is_noted_with_its_reasons() {
        use roofline_model::bundle::{ClockEventReason, ClockEventShare};
        let mut s = Sustained {
            value: 98.0,
            window_s: 2.0,
            settle_s: 0.5,
            settled: true,
            samples: vec![],
            clock_hz: None,
            telemetry: None,
        };
        assert_eq!(sustained_note("x", 100.0, &s), None);
        s.value = 90.0;
        assert_eq!(
            sustained_note("mma_bf16", 100.0, &s).as_deref(),
            Some("mma_bf16: sustained 10.0% under burst (NVML was not sampled)")
        );
        s.telemetry = Some(Telemetry {
            samples: 100,
            window_s: 2.0,
            sm_clock_hz: None,
            power_w: None,
            energy_power_w: None,
            temperature_c_max: None,
            clock_event_reasons: vec![ClockEventShare {
                reason: ClockEventReason::SwPowerCap,
                fraction: 0.85,
            }],
        });
        assert_eq!(
            sustained_note("mma_bf16", 100.0, &s).as_deref(),
            Some(
                "mma_bf16: sustained 10.0% under burst (clock-event reasons over the window: sw_power_cap 85%)"
            )
        );
    }
}
