//! `roofline machine`: measures a GPU's ceilings with our own microbenchmarks (kernels in
//! `kernels/`), beside same-run references (the driver's device-to-device copy, cuBLASLt GEMMs)
//! and theoretical figures at the clock observed while measuring and at the datasheet's clock.
//!
//! Phases, in order: device attributes, HBM, L2, L1 and shared memory, CUDA-core FMA peaks,
//! Tensor Core `mma.sync` peaks, cuBLASLt GEMMs, launch overhead, the ERT-style sweep. Every
//! ceiling is timed by [`crate::gpu::Session::measure`] under the plan of [`crate::gpu::timing`]
//! (issue 33): its own warm-up, intervals of back-to-back launches between two events (no host
//! launch latency inside), a burst figure (the median interval's rate, `value`, with the
//! intervals' rates as `samples`) and a sustained one after the rate settled (`sustained`), with
//! NVML's SM clock, power and clock-event reasons over both windows where NVML can be read.
//! Every GEMM and `mma.sync` operand, and every buffer a bandwidth kernel or the sweep reads, is
//! bounded random data written on the GPU once per run (`kernels/init.cu`). The cuBLASLt
//! references are the best of several shapes and heuristic algorithms per datapath. Every FLOP
//! and byte counted comes from the launch's work ([`crate::gpu::launch`], from the kernel's work
//! formula). A kernel that cannot run on this GPU, or that the SASS audit refused there
//! ([`kernels::refusal`]), is recorded under `skipped`. A phase that fails stops the run: what
//! was measured before is written in a bundle marked incomplete, and the command exits non-zero.
//!
//! This module only describes what to measure: the GPU work itself is in [`crate::gpu`].
#![forbid(unsafe_code)]

use std::cell::Cell;
use std::time::Instant;

use cudarc::driver::CudaSlice;
use cudarc::driver::sys::CUdevice_attribute as A;
use cudarc::driver::sys::CUfunction_attribute_enum as F;
use roofline_model::bundle::{
    BandwidthCeiling, Bundle, ComputeCeiling, Datapath, Device, GemmAlgorithm, GemmCandidate,
    GemmChoice, LaunchOverhead, Limit, LimitKind, Machine, MemoryLevel, Method, Operands, Skipped,
    Sustained, SweepPoint, SweepTiming, Telemetry, TimingInfo,
};
use roofline_model::stats::median_or_nan;

use crate::gpu::blaslt::{self, BlasLtError, Gemm};
use crate::gpu::kernels::{
    self, BW_UNROLL, Compiled, FMA_CHAINS, FMA_UNROLL, Fill, Kernel, LaunchWork, MMA_ACC, MMA_SETS,
    RANDOM_WORDS, Source, UNIT_FLOAT_WORDS, VECTOR_BYTES, mma_operands, stream_work, sweep_fmas,
    sweep_work,
};
use crate::gpu::launch::Launcher;
use crate::gpu::launch::fill::Fill as FillLaunch;
use crate::gpu::launch::micro::{Empty, FmaPeak, Hbm, L2Read, MmaPeak, Resident, Sweep};
use crate::gpu::nvml::throttle_text;
use crate::gpu::timing::{CandidatePlan, MeasurePlan, SweepPlan};
use crate::gpu::{DeviceError, Measurement, Session};
use crate::progress;

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// `--quick`: smaller buffers, shorter windows, fewer GEMM shapes and algorithms, a coarser
    /// sweep.
    pub quick: bool,
    /// `--diagnose-refused`: time the kernels the SASS audit refuses here too, and note their
    /// rates (never as ceilings).
    pub diagnose_refused: bool,
}

/// One reference GEMM shape, `(m, n, k)` in cuBLAS's column-major terms (TN: `D = Aᵀ·B`).
pub type Shape = (u64, u64, u64);

impl Plan {
    /// Bytes of each HBM buffer.
    fn hbm_bytes(self) -> usize {
        if self.quick { 512 << 20 } else { 2 << 30 }
    }
    /// Working sets of the sweep, bytes.
    pub fn sweep_working_sets(self) -> Vec<usize> {
        let (step, top) = if self.quick {
            (4, 1usize << 30)
        } else {
            (2, 2usize << 30)
        };
        let mut v = Vec::new();
        let mut ws = 16usize << 10;
        while ws <= top {
            v.push(ws);
            ws *= step;
        }
        v
    }
    /// FLOPs per element of the sweep: 1, 2, 4, … 1024.
    pub fn sweep_flops_per_element(self) -> Vec<u32> {
        let step = if self.quick { 4 } else { 2 };
        let mut v = Vec::new();
        let mut f = 1u32;
        while f <= 1024 {
            v.push(f);
            f *= step;
        }
        v
    }

    /// The shapes of a datapath's reference GEMM search: a square 8192³ baseline, then the
    /// non-square shapes published as Hopper's best (stas00/ml-engineering's MAMF finder tables:
    /// BF16 2048×2048×13312 on H100 SXM and 1024×15360×4096 on GH200, FP8 1024×9216×14336,
    /// 1280×4096×12032 and 1024×14336×14336, given there as `torch.mm(M×K, K×N)`, i.e. cuBLAS
    /// `m = N`, `n = M`), and larger squares. `--quick` keeps the first two (never below 8192³,
    /// where launch and tail effects dominate) and its references are marked indicative. Every
    /// `k` stays within [`kernels::MAX_K_FP16`], so bounded random FP16 operands cannot overflow.
    pub fn gemm_shapes(self, d: Datapath) -> Vec<Shape> {
        const SQUARE: Shape = (8192, 8192, 8192);
        let full: Vec<Shape> = match d {
            Datapath::TensorFp16 | Datapath::TensorBf16 => vec![
                SQUARE,
                (2048, 2048, 13312),
                (15360, 1024, 4096),
                (16384, 8192, 8192),
                (4096, 16384, 16384),
            ],
            Datapath::TensorTf32 => vec![
                SQUARE,
                (2048, 2048, 13312),
                (15360, 1024, 4096),
                (16384, 8192, 8192),
            ],
            Datapath::TensorFp8 => vec![
                SQUARE,
                (9216, 1024, 14336),
                (4096, 1280, 12032),
                (14336, 1024, 14336),
                (16384, 16384, 16384),
            ],
            Datapath::TensorInt8 => vec![
                SQUARE,
                (14336, 1024, 14336),
                (9216, 1024, 14336),
                (16384, 16384, 16384),
            ],
            Datapath::TensorFp64 => vec![SQUARE, (12288, 12288, 12288), (4096, 4096, 16384)],
            _ => vec![],
        };
        if self.quick {
            if d == Datapath::TensorTf32 {
                vec![full[0], full[2]]
            } else {
                full.into_iter().take(2).collect()
            }
        } else {
            full
        }
    }

    /// Heuristic algorithms timed per shape: 8 (NVIDIA's `LtSgemmSimpleAutoTuning` sample asks
    /// for 8), 4 with `--quick`.
    pub fn gemm_algorithms(self) -> usize {
        if self.quick { 4 } else { 8 }
    }
}

/// What stopped a run.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// GPU work failed: a driver call, a kernel that could not be compiled or loaded, a launch.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// cuBLASLt failed setting up a GEMM in a way that is not a plain "unsupported here".
    #[error(transparent)]
    BlasLt(#[from] BlasLtError),
}

/// The result of a run: the bundle (complete or not) and the error that stopped it, if any.
pub struct Outcome {
    /// The bundle with every phase measured.
    pub bundle: Bundle,
    /// The phase that failed and why.
    pub failure: Option<(&'static str, MachineError)>,
    /// Wall time of the run, seconds.
    pub wall_s: f64,
}

/// Everything a phase needs: the timing session, the plans and the compiled kernels.
struct Rig {
    session: Session,
    plan: Plan,
    measure: MeasurePlan,
    bandwidth: Compiled,
    fma: Compiled,
    mma: Compiled,
    ert: Compiled,
    init: Compiled,
    /// The run's seed; every buffer gets the next value.
    seed: Cell<u64>,
    /// What the run noticed about its own launches (for the bundle's notes).
    notes: Vec<String>,
}

/// A measured ceiling's figures, from a [`Measurement`] and one launch's work.
struct Figures {
    value: f64,
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
            clock_hz: m.burst.clock_hz,
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

    /// The SM clock NVML saw during the burst (median), Hz: the clock of a library kernel,
    /// which stamps none.
    fn nvml_clock(&self) -> Option<f64> {
        self.telemetry
            .as_ref()
            .and_then(|t| t.sm_clock_hz)
            .map(|s| s.median)
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
    /// The next buffer's seed.
    fn next_seed(&self) -> u64 {
        let s = self.seed.get();
        self.seed.set(s.wrapping_add(0x9E37_79B9_7F4A_7C15));
        s
    }

    /// Fills the first `values` values of `buf` by `kind` on the GPU and waits for it.
    fn fill(&self, buf: &CudaSlice<u8>, kind: Fill, values: u64) -> Result<(), DeviceError> {
        let blocks = self.session.sm_count() * 8;
        let l = FillLaunch::new(&self.init, kind, buf, values, self.next_seed(), blocks)?;
        l.launch(&self.session)?;
        self.session.synchronize("filling operands")
    }

    /// A buffer of `bytes` filled by `kind` (as many whole values as fit).
    fn alloc_filled(
        &self,
        bytes: usize,
        kind: Fill,
        what: &str,
    ) -> Result<CudaSlice<u8>, DeviceError> {
        let buf = self.session.alloc_zeros::<u8>(bytes, what)?;
        self.fill(&buf, kind, bytes as u64 / kind.value_bytes())?;
        Ok(buf)
    }

    /// Notes when `kernel`, compiled here, cannot hold the blocks per SM that `cfg` plans
    /// resident at once (more registers or shared memory than the SASS audit saw): the launch
    /// then runs in more than one wave and its figure may come out low. The driver's occupancy
    /// calculator (`cuOccupancyMaxActiveBlocksPerMultiprocessor`) answers; a failing query is
    /// noted too, never fatal.
    fn check_residency(&mut self, kernel: Kernel, cfg: &cudarc::driver::LaunchConfig) {
        let compiled = match kernel.source() {
            Source::Bandwidth => &self.bandwidth,
            Source::Fma => &self.fma,
            Source::Mma => &self.mma,
            Source::Ert | Source::Dl => &self.ert,
            Source::Init => &self.init,
        };
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
    fn resident_blocks(&self, kernel: Kernel, threads: u32, wanted: u32) -> u32 {
        let compiled = match kernel.source() {
            Source::Mma => &self.mma,
            Source::Fma => &self.fma,
            _ => &self.bandwidth,
        };
        compiled
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
    fn measure<E: From<DeviceError>>(
        &mut self,
        what: &str,
        run: impl FnMut(&Session) -> Result<(), E>,
    ) -> Result<Measurement, E> {
        let plan = self.measure;
        self.session.measure(what, &plan, run)
    }

    /// The figures of a measurement of launches doing `work` each, noting a sustained figure
    /// well under its burst.
    fn figures(&mut self, what: &str, m: &Measurement, work: f64) -> Figures {
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
    fn diagnosable(&self, kernel: Kernel) -> Option<String> {
        let cc = self.session.compute_capability();
        if !self.plan.diagnose_refused || cc < kernel.min_compute_capability() {
            return None;
        }
        kernels::audit_refusal(kernel, &kernels::arch_name(cc.0, cc.1))
    }

    /// Times a kernel the SASS audit refuses here (`--diagnose-refused`, burst only) and notes
    /// how fast it ran, or how its run failed: a diagnostic never stops the measurement.
    fn diagnose(&mut self, l: Result<&dyn Launcher, &DeviceError>, kernel: Kernel, reason: &str) {
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
    fn refused(&self, kernel: Kernel, what: String, skipped: &mut Vec<Skipped>) -> bool {
        match kernels::refusal(kernel, self.session.compute_capability()) {
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
        roofline_model::geometry::si::format_si(rate, "FLOP/s"),
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
fn bw(
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
fn peak(f: Figures, d: Datapath, operands: Operands, implementation: String) -> ComputeCeiling {
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

/// nvbandwidth's figure for the same copy: its `device_local_copy` counts each copied byte once
/// (`bandwidth = size × loopCount / time`, NVIDIA/nvbandwidth `memcpy.cpp`), where we count the
/// bytes read plus written (the HBM traffic the roofline needs): half ours.
fn nvbandwidth_words(read_plus_written: f64) -> String {
    format!(
        "nvbandwidth's device_local_copy counts each byte once: {:.2} TB/s on its convention",
        read_plus_written / 2.0 / 1e12
    )
}

/// HBM: read, write and copy kernels over buffers far larger than L2, and the driver's
/// device-to-device copy as the reference (bytes read plus written), over random data.
fn hbm(rig: &mut Rig, m: &mut Machine, skipped: &mut Vec<Skipped>) -> Result<(), MachineError> {
    let bytes = rig.plan.hbm_bytes().max(rig.session.l2_bytes() * 16);
    let elements = (bytes / VECTOR_BYTES as usize) as u64;
    let mib = bytes >> 20;
    let src = rig.alloc_filled(bytes, RANDOM_WORDS, "HBM")?;
    let mut dst = rig.session.alloc_zeros::<u8>(bytes, "HBM")?;
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let cfg = rig.session.grid(8, 256, 0);
    let cases = [
        (
            Kernel::HbmRead,
            Operands::RandomBits,
            format!("read-only kernel, {VECTOR_BYTES}-byte streaming loads, {mib} MiB"),
        ),
        (
            Kernel::HbmWrite,
            Operands::Constant,
            format!("write-only kernel, {VECTOR_BYTES}-byte streaming stores, {mib} MiB"),
        ),
        (
            Kernel::HbmCopy,
            Operands::RandomBits,
            format!("copy kernel, bytes read + written, {mib} MiB"),
        ),
    ];
    let mut copy_bytes = None;
    for (kernel, operands, implementation) in cases {
        if rig.refused(kernel, format!("HBM {} kernel", kernel.entry()), skipped) {
            continue;
        }
        let (a, b) = match kernel {
            Kernel::HbmWrite => (&dst, None),
            _ => (&src, Some(&dst)),
        };
        rig.check_residency(kernel, &cfg);
        let l = Hbm::new(&rig.bandwidth, kernel, cfg, elements, a, b, &sink)?;
        let t = rig.measure(kernel.entry(), |s| l.launch(s))?;
        let f = rig.figures(kernel.entry(), &t, l.work().bytes);
        let implementation = if kernel == Kernel::HbmCopy {
            copy_bytes = Some(l.work());
            format!("{implementation} ({})", nvbandwidth_words(f.value))
        } else {
            implementation
        };
        m.bandwidth.push(bw(f, l.work(), operands, implementation));
    }
    // The driver's copy over the same buffers moves what our copy kernel does.
    let work =
        copy_bytes.unwrap_or_else(|| stream_work(Kernel::HbmCopy, elements, 1).unwrap_or_default());
    let t = rig.measure("cuMemcpyDtoD", |s| {
        s.stream()
            .memcpy_dtod(&src, &mut dst)
            .map_err(crate::gpu::session::driver("cuMemcpyDtoDAsync"))
    })?;
    let f = rig.figures("cuMemcpyDtoD", &t, work.bytes);
    let clock = f.nvml_clock();
    let words = nvbandwidth_words(f.value);
    let mut c = bw(
        f,
        work,
        Operands::RandomBits,
        format!(
            "driver device-to-device copy (cuMemcpyDtoDAsync), bytes read + written, {mib} MiB ({words})"
        ),
    );
    c.clock_hz = clock;
    c.reference = true;
    m.bandwidth.push(c);
    Ok(())
}

/// L2: a working set well inside the L2 capacity, reread through L2 only (`ld.global.cg`).
fn l2(rig: &mut Rig, m: &mut Machine, skipped: &mut Vec<Skipped>) -> Result<(), MachineError> {
    if rig.refused(Kernel::L2Read, "L2 l2_read kernel".into(), skipped) {
        return Ok(());
    }
    let threads = u64::from(rig.session.sm_count()) * 1024;
    // BW_UNROLL loads per thread per pass, the set at most a quarter of L2 (inside one
    // partition on GPUs whose L2 is split in two).
    let per_pass = u64::from(BW_UNROLL) * threads;
    let k = ((rig.session.l2_bytes() as u64 / 4) / (per_pass * u64::from(VECTOR_BYTES))).max(1);
    let elements = per_pass * k;
    let set_bytes = (elements * u64::from(VECTOR_BYTES)) as usize;
    // Each launch lasts about a millisecond on an H100 (quick: a quarter); the timing plan
    // puts as many back to back as an interval needs.
    let reps: i32 = if rig.plan.quick { 256 } else { 1024 };
    let buf = rig.alloc_filled(set_bytes, RANDOM_WORDS, "the L2 working set")?;
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let cfg = rig.session.grid(4, 256, 0);
    rig.check_residency(Kernel::L2Read, &cfg);
    let l = L2Read::new(&rig.bandwidth, cfg, elements, reps, &buf, &sink)?;
    let t = rig.measure("l2_read", |s| l.launch(s))?;
    let f = rig.figures("l2_read", &t, l.work().bytes);
    m.bandwidth.push(bw(
        f,
        l.work(),
        Operands::RandomBits,
        format!(
            "reread through L2 only (ld.global.cg), {:.1} MiB working set of {:.0} MiB L2",
            set_bytes as f64 / 1048576.0,
            rig.session.l2_bytes() as f64 / 1048576.0
        ),
    ));
    Ok(())
}

/// The shared-memory carve-out each resident kernel asks for
/// (`CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`, a percentage of the largest shared
/// memory; a hint the driver may override): `l1_read` the largest L1 (0: without it the driver
/// may pick a split that leaves too little L1 for the blocks' 2 × 32 KiB, and the "L1" figure
/// would be L2's), `shared_read` the largest shared memory (100).
fn carveout(kernel: Kernel) -> i32 {
    if kernel == Kernel::L1Read { 0 } else { 100 }
}

/// L1 and shared memory: every block rereads its own 32 KiB, resident in its SM.
fn l1_shared(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    let slice: u32 = 2048; // vectors: 32 KiB per block, two blocks per SM
    let threads: u32 = 1024;
    let reps: i32 = if rig.plan.quick { 1024 } else { 4096 };
    let cfg = rig.session.grid(2, threads, 0);
    let blocks = u64::from(cfg.grid_dim.0);
    let buf = rig.alloc_filled(
        (blocks * u64::from(slice) * u64::from(VECTOR_BYTES)) as usize,
        RANDOM_WORDS,
        "the L1 working set",
    )?;
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let kib = slice * VECTOR_BYTES / 1024;
    let cases = [
        (
            Kernel::L1Read,
            Some(&buf),
            Operands::RandomBits,
            format!(
                "per-SM resident {} KiB reread with ld.global.ca, {VECTOR_BYTES}-byte loads, carve-out: largest L1",
                2 * kib
            ),
        ),
        (
            Kernel::SharedRead,
            None,
            Operands::Constant,
            format!(
                "{kib} KiB of shared memory per block reread, {VECTOR_BYTES}-byte ld.shared, conflict-free"
            ),
        ),
    ];
    for (kernel, b, operands, implementation) in cases {
        if rig.refused(kernel, format!("{} kernel", kernel.entry()), skipped) {
            continue;
        }
        let l = Resident::new(&rig.bandwidth, kernel, cfg, slice, reps, b, &sink)?;
        if let Err(e) = l.function().set_attribute(
            F::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            carveout(kernel),
        ) {
            rig.notes.push(format!(
                "{}: the driver refused the shared-memory carve-out hint ({e}); it ran with the driver's choice",
                kernel.entry()
            ));
        }
        rig.check_residency(kernel, &l.config());
        let t = rig.measure(kernel.entry(), |s| l.launch(s))?;
        let f = rig.figures(kernel.entry(), &t, l.work().bytes);
        m.bandwidth.push(bw(f, l.work(), operands, implementation));
    }
    Ok(())
}

/// CUDA-core peaks: FMA chains per precision.
fn fma(rig: &mut Rig, m: &mut Machine, skipped: &mut Vec<Skipped>) -> Result<(), MachineError> {
    let cfg = rig.session.grid(8, 256, 0);
    let scale = if rig.plan.quick { 1 } else { 2 };
    // The work of one launch is kept whatever the unroll: iterations × FMA_UNROLL constant.
    let per = |base: i32| base * scale * 16 / FMA_UNROLL as i32;
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let cases = [
        (Kernel::FmaF64, per(512)),
        (Kernel::FmaF32, per(1024)),
        (Kernel::FmaF16x2, per(1024)),
        (Kernel::FmaBf16x2, per(1024)),
    ];
    for (kernel, iterations) in cases {
        let kernels::Work::Fma { datapath, .. } = kernel.work() else {
            continue;
        };
        if rig.refused(kernel, format!("{} FMA peak", datapath.label()), skipped) {
            if let Some(reason) = rig.diagnosable(kernel) {
                let l = FmaPeak::new(&rig.fma, kernel, cfg, iterations, &sink);
                rig.diagnose(l.as_ref().map(|l| l as &dyn Launcher), kernel, &reason);
            }
            continue;
        }
        rig.check_residency(kernel, &cfg);
        let l = FmaPeak::new(&rig.fma, kernel, cfg, iterations, &sink)?;
        let t = rig.measure(kernel.entry(), |s| l.launch(s))?;
        let f = rig.figures(kernel.entry(), &t, l.work().flop_count());
        m.compute.push(peak(
            f,
            datapath,
            Operands::Constant,
            format!(
                "FMA chains ({}), {FMA_CHAINS} independent per thread, {FMA_UNROLL} steps unrolled, full occupancy",
                kernel.entry()
            ),
        ));
    }
    Ok(())
}

/// The most blocks of 256 threads per SM an `mma.sync` kernel is launched with: FP64 m16n8k16
/// needs about twice the registers of the others (122 on sm_90), so two; four otherwise. Fewer
/// when the driver's occupancy calculator says fewer fit ([`Rig::resident_blocks`]), so that a
/// launch is one wave (the FP16 kernel takes 70 registers on sm_80 to sm_89: three).
fn mma_blocks_per_sm(kernel: Kernel) -> u32 {
    if kernel == Kernel::MmaF64M16n8k16 {
        2
    } else {
        4
    }
}

/// Tensor Core peaks with our own `mma.sync` kernels, on bounded random operands.
fn mma(rig: &mut Rig, m: &mut Machine, skipped: &mut Vec<Skipped>) -> Result<(), MachineError> {
    let scale = if rig.plan.quick { 1 } else { 4 };
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let cc = rig.session.compute_capability();
    let mut cases = vec![
        (Kernel::MmaF16, 2048 * scale),
        (Kernel::MmaBf16, 2048 * scale),
        (Kernel::MmaTf32, 2048 * scale),
        (Kernel::MmaFp8, 1024 * scale),
        (Kernel::MmaInt8, 1024 * scale),
        (Kernel::MmaF64, 2048 * scale),
    ];
    // m16n8k16 for FP64 exists from sm_90 (PTX ISA 7.8): 8× the work of m8n8k4 per instruction.
    if cc >= Kernel::MmaF64M16n8k16.min_compute_capability() {
        cases.push((Kernel::MmaF64M16n8k16, 512 * scale));
    }
    for (kernel, iterations) in cases {
        let kernels::Work::Mma {
            datapath, shape, ..
        } = kernel.work()
        else {
            continue;
        };
        let Some((per_thread, fill)) = mma_operands(kernel) else {
            continue;
        };
        let blocks = rig.resident_blocks(kernel, 256, mma_blocks_per_sm(kernel));
        let cfg = rig.session.grid(blocks, 256, 0);
        let ops_bytes = (per_thread * crate::gpu::launch::threads(&cfg)) as usize;
        let what = format!(
            "{} own mma.sync kernel ({})",
            datapath.label(),
            kernel.entry()
        );
        if rig.refused(kernel, what, skipped) {
            if let Some(reason) = rig.diagnosable(kernel) {
                // The operands of a refused kernel: FP8 below sm_89 has no fill; raw words then.
                let kind = if cc >= Kernel::FillE4m3.min_compute_capability() {
                    fill
                } else {
                    RANDOM_WORDS
                };
                let ops = rig.alloc_filled(ops_bytes, kind, "mma.sync operands")?;
                let l = MmaPeak::new(&rig.mma, kernel, cfg, iterations, &ops, &sink);
                rig.diagnose(l.as_ref().map(|l| l as &dyn Launcher), kernel, &reason);
            }
            continue;
        }
        let ops = rig.alloc_filled(ops_bytes, fill, "mma.sync operands")?;
        rig.check_residency(kernel, &cfg);
        let l = MmaPeak::new(&rig.mma, kernel, cfg, iterations, &ops, &sink)?;
        let t = rig.measure(kernel.entry(), |s| l.launch(s))?;
        let f = rig.figures(kernel.entry(), &t, l.work().flop_count());
        let sets = if kernel == Kernel::MmaF64M16n8k16 {
            kernels::MMA_SETS_DMMA16
        } else {
            MMA_SETS
        };
        m.compute.push(peak(
            f,
            datapath,
            fill.operands(),
            format!(
                "own mma.sync kernel ({}, m{}n{}k{}), {MMA_ACC} accumulators per warp, {sets} operand sets of bounded random data per thread",
                kernel.entry(),
                shape.m,
                shape.n,
                shape.k
            ),
        ));
    }
    if cc.0 >= 9 {
        skipped.push(Skipped {
            what: "wgmma (Hopper warpgroup MMA) own kernels".into(),
            reason: "not implemented yet: on sm_90 our Tensor Core figures use mma.sync, which cannot reach the warpgroup datapath's peak; the cuBLASLt reference does".into(),
        });
    }
    Ok(())
}

/// How a datapath's reference GEMM operands are filled.
fn gemm_fill(d: Datapath) -> Fill {
    match d {
        Datapath::TensorFp16 => Fill::F16,
        Datapath::TensorBf16 => Fill::Bf16,
        Datapath::TensorFp8 => Fill::E4m3,
        Datapath::TensorInt8 => RANDOM_WORDS,
        Datapath::TensorFp64 => Fill::F64,
        _ => Fill::F32,
    }
}

/// The best candidate so far of a datapath's GEMM search.
struct Best {
    gemm: Gemm,
    algorithm: usize,
    rate: f64,
}

/// Fills a GEMM's A and B with real data.
fn fill_gemm(rig: &Rig, g: &Gemm, fill: Fill) -> Result<(), DeviceError> {
    for (buf, values) in g.operands() {
        // Values of the element type; INT8's raw words cover four bytes each.
        let n = if fill == RANDOM_WORDS {
            values / 4
        } else {
            values
        };
        rig.fill(buf, fill, n)?;
    }
    Ok(())
}

/// One candidate (shape, algorithm): untimed calls, then burst intervals. `Ok(Err(e))` when
/// cuBLASLt cannot run it.
fn time_candidate(
    rig: &mut Rig,
    g: &mut Gemm,
    label: &str,
) -> Result<Result<f64, BlasLtError>, MachineError> {
    let plan = CandidatePlan::of(rig.plan.quick);
    for _ in 0..plan.untimed {
        if let Err(e) = g.launch() {
            return Ok(Err(e));
        }
    }
    rig.session.synchronize("running a cuBLASLt GEMM")?;
    let flops = g.flops();
    match rig.session.burst(
        label,
        plan.interval_min_s,
        plan.max_launches,
        plan.intervals,
        |_| g.launch().map_err(MachineError::BlasLt),
    ) {
        Ok((_, p)) => Ok(Ok(p.median_rate(flops))),
        Err(MachineError::BlasLt(e)) => Ok(Err(e)),
        Err(e) => Err(e),
    }
}

/// The cuBLASLt reference per Tensor Core datapath: every shape of [`Plan::gemm_shapes`] with
/// up to [`Plan::gemm_algorithms`] of the heuristic's algorithms each, timed as bursts on
/// bounded random operands; the fastest is then measured as a ceiling (warm-up, burst,
/// sustained), with its shape, algorithm and every candidate recorded.
fn cublaslt(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    if !blaslt::present() {
        skipped.push(Skipped {
            what: "cuBLASLt reference GEMMs".into(),
            reason: BlasLtError::Missing.to_string(),
        });
        return Ok(());
    }
    let datapaths = [
        (Datapath::TensorFp16, (7, 0)),
        (Datapath::TensorBf16, (8, 0)),
        (Datapath::TensorTf32, (8, 0)),
        (Datapath::TensorFp8, (8, 9)),
        (Datapath::TensorInt8, (7, 5)),
        (Datapath::TensorFp64, (8, 0)),
    ];
    let cc = rig.session.compute_capability();
    for (d, min_cc) in datapaths {
        let what = format!("{} cuBLASLt GEMM", d.label());
        if cc < min_cc {
            skipped.push(Skipped {
                what,
                reason: format!("needs sm_{}{} or later", min_cc.0, min_cc.1),
            });
            continue;
        }
        let Some(spec) = blaslt::Spec::tensor(d) else {
            continue;
        };
        let fill = gemm_fill(d);
        let shapes = rig.plan.gemm_shapes(d);
        let mut candidates = Vec::new();
        let mut best: Option<Best> = None;
        let mut shapes_tried = 0u32;
        let mut last_error = None;
        for &(mm, n, k) in &shapes {
            let candidate = |rank: u32, value: Option<f64>, error: Option<String>| GemmCandidate {
                m: mm,
                n,
                k,
                heuristic_rank: rank,
                value,
                error,
            };
            let mut g = match Gemm::with_algorithms(
                rig.session.stream(),
                spec,
                (mm, n, k),
                rig.plan.gemm_algorithms(),
            ) {
                Ok(g) => g,
                Err(
                    e @ (BlasLtError::NoAlgorithm(_)
                    | BlasLtError::Call { .. }
                    | BlasLtError::Alloc { .. }),
                ) => {
                    candidates.push(candidate(0, None, Some(e.to_string())));
                    last_error = Some(e.to_string());
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            shapes_tried += 1;
            fill_gemm(rig, &g, fill)?;
            let mut shape_best: Option<(usize, f64)> = None;
            for i in 0..g.algorithms() {
                g.select(i);
                let rank = u32::try_from(i).unwrap_or(u32::MAX);
                let label = format!("cuBLASLt {} {mm}×{n}×{k} algorithm {i}", d.label());
                match time_candidate(rig, &mut g, &label)? {
                    Ok(rate) => {
                        candidates.push(candidate(rank, Some(rate), None));
                        if rate.is_finite() && shape_best.is_none_or(|(_, r)| rate > r) {
                            shape_best = Some((i, rate));
                        }
                    }
                    Err(e) => {
                        last_error = Some(e.to_string());
                        candidates.push(candidate(rank, None, Some(e.to_string())));
                    }
                }
            }
            if let Some((i, rate)) = shape_best
                && best.as_ref().is_none_or(|b| rate > b.rate)
            {
                best = Some(Best {
                    gemm: g,
                    algorithm: i,
                    rate,
                });
            }
        }
        let Some(Best {
            gemm: mut g,
            algorithm,
            ..
        }) = best
        else {
            skipped.push(Skipped {
                what,
                reason: last_error.unwrap_or_else(|| "no shape ran".into()),
            });
            continue;
        };
        g.select(algorithm);
        let flops = g.flops();
        let (mm, n, k) = g.size;
        let version = g.version;
        let algo = g.algorithm(algorithm).unwrap_or(GemmAlgorithm {
            heuristic_rank: u32::try_from(algorithm).unwrap_or(u32::MAX),
            id: None,
            tile: None,
            stages: None,
            split_k: None,
            reduction_scheme: None,
            swizzle: None,
            custom_option: None,
            inner_shape: None,
            cluster_shape: None,
            workspace_bytes: 0,
            waves: None,
        });
        let label = format!("cuBLASLt {}", d.label());
        let t = match rig.measure(&label, |_| g.launch().map_err(MachineError::BlasLt)) {
            Ok(t) => t,
            // A failing GEMM launch means cuBLASLt cannot run this one here: skipped, with its
            // error; a driver failure around it stops the run.
            Err(MachineError::BlasLt(e)) => {
                skipped.push(Skipped {
                    what,
                    reason: e.to_string(),
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        let f = rig.figures(&label, &t, flops);
        let clock = f.nvml_clock();
        let accumulation = if spec.fast_accumulation {
            ", fast accumulation"
        } else {
            ""
        };
        let tried = candidates.iter().filter(|c| c.value.is_some()).count();
        let mut c = peak(
            f,
            d,
            fill.operands(),
            format!(
                "cuBLASLt {version} GEMM {mm}×{n}×{k} (TN{accumulation}), heuristic algorithm {algorithm}{}, the best of {shapes_tried} shapes × up to {} algorithms ({tried} timed)",
                algo.id.map(|i| format!(" (id {i})")).unwrap_or_default(),
                rig.plan.gemm_algorithms()
            ),
        );
        c.clock_hz = clock;
        c.reference = true;
        c.indicative = rig.plan.quick || shapes_tried < 3;
        c.gemm = Some(GemmChoice {
            m: mm,
            n,
            k,
            algorithm: algo,
            shapes_tried,
            algorithms_tried: u32::try_from(tried).unwrap_or(u32::MAX),
            candidates,
        });
        m.compute.push(c);
    }
    Ok(())
}

/// Launch overhead: launch-to-completion of an empty kernel (host wall time), back-to-back
/// launches, and launches replayed from a CUDA graph.
fn launch_overhead(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    if rig.refused(
        Kernel::Empty,
        "launch overhead (empty kernel)".into(),
        skipped,
    ) {
        return Ok(());
    }
    let empty = Empty::new(&rig.fma)?;
    let s = &rig.session;
    let n = if rig.plan.quick { 200 } else { 1000 };
    for _ in 0..50 {
        empty.launch(s)?;
    }
    s.synchronize("synchronizing")?;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        empty.launch(s)?;
        s.synchronize("synchronizing after an empty kernel")?;
        samples.push(t0.elapsed().as_secs_f64());
    }
    let batch = if rig.plan.quick { 2000 } else { 10_000 };
    let t0 = Instant::now();
    for _ in 0..batch {
        empty.launch(s)?;
    }
    s.synchronize("synchronizing after back-to-back launches")?;
    let back_to_back = t0.elapsed().as_secs_f64() / f64::from(batch);
    let graph_n = 1000u32;
    let drv = crate::gpu::session::driver;
    s.stream()
        .begin_capture(
            cudarc::driver::sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
        )
        .map_err(drv("beginning graph capture"))?;
    for _ in 0..graph_n {
        empty.launch(s)?;
    }
    let graph = s
        .stream()
        .end_capture(cudarc::driver::sys::CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
        .map_err(drv("ending graph capture"))?;
    let graph_s = match graph {
        Some(g) => {
            g.launch().map_err(drv("launching the graph"))?;
            s.synchronize("synchronizing")?;
            let t0 = Instant::now();
            g.launch().map_err(drv("launching the graph"))?;
            s.synchronize("synchronizing after the graph")?;
            Some(t0.elapsed().as_secs_f64() / f64::from(graph_n))
        }
        None => None,
    };
    let mut l = LaunchOverhead::new(median_or_nan(&samples), Method::Empirical);
    l.back_to_back_s = Some(back_to_back);
    l.graph_s = graph_s;
    l.samples = samples;
    l.implementation = Some("empty kernel, host wall time from launch to stream synchronize (median); back-to-back: 10,000 launches then one synchronize; graph: 1,000 launches captured in one CUDA graph".into());
    m.launch_overhead = Some(l);
    Ok(())
}

/// Most FLOPs one sweep launch may execute.
pub const FLOP_CAP: f64 = 4e9;

/// Repeats of one sweep point: enough sweeps for `traffic_target` bytes, but no more than
/// [`FLOP_CAP`] FLOPs per launch (small sets run on few threads, and their high intensities
/// would otherwise take a second each); at least one. `per_sweep` is one sweep's work.
pub fn sweep_repeats(per_sweep: LaunchWork, traffic_target: f64) -> i32 {
    let traffic = (traffic_target / per_sweep.bytes).floor().max(1.0);
    let flop = (FLOP_CAP / per_sweep.flop_count()).floor().max(1.0);
    let reps = traffic.min(flop);
    if reps >= f64::from(i32::MAX) {
        i32::MAX
    } else {
        reps as i32
    }
}

/// The ERT-style sweep for FP32 and FP64, kept raw, and its plateaus as ceilings. Each point is
/// timed as a burst ([`Session::burst`]: a lead launch, then intervals of back-to-back launches
/// of at least 1 ms), its time the median interval over its launches.
fn sweep(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
    bar: &indicatif::ProgressBar,
) -> Result<(), MachineError> {
    let sets = rig.plan.sweep_working_sets();
    let fpes = rig.plan.sweep_flops_per_element();
    let top = *sets.last().unwrap_or(&(1 << 30));
    let buf = rig.alloc_filled(top, UNIT_FLOAT_WORDS, "the sweep")?;
    let full = u64::from(rig.session.sm_count()) * 2048;
    let traffic_target = if rig.plan.quick {
        64.0 * 1048576.0
    } else {
        256.0 * 1048576.0
    };
    let plan = SweepPlan::of(rig.plan.quick);
    let mut launches = (u32::MAX, 0u32);
    for kernel in [Kernel::ErtF32, Kernel::ErtF64] {
        let kernels::Work::Sweep { datapath, .. } = kernel.work() else {
            continue;
        };
        if rig.refused(
            kernel,
            format!("{} ERT-style sweep", datapath.label()),
            skipped,
        ) {
            bar.inc((sets.len() * fpes.len()) as u64);
            continue;
        }
        for &ws in &sets {
            let elements = (ws / VECTOR_BYTES as usize) as u64;
            for &fpe in &fpes {
                let per_sweep =
                    sweep_work(kernel, elements, 1, sweep_fmas(fpe)).unwrap_or_default();
                let reps = sweep_repeats(per_sweep, traffic_target);
                let l = Sweep::new(&rig.ert, kernel, elements, full, reps, fpe, &buf)?;
                rig.check_residency(kernel, &l.config());
                let (_, p) = rig.session.burst(
                    kernel.entry(),
                    plan.interval_min_s,
                    plan.max_launches,
                    plan.intervals,
                    |s| l.launch(s),
                )?;
                launches = (launches.0.min(p.launches), launches.1.max(p.launches));
                let work = l.work();
                m.sweep.push(SweepPoint {
                    datapath,
                    working_set_bytes: ws as f64,
                    flops_per_element: f64::from(fpe),
                    flops: work.flop_count(),
                    bytes: work.bytes,
                    time_s: p.median_s() / f64::from(p.launches),
                });
                bar.inc(1);
            }
        }
    }
    if launches.1 > 0 {
        m.sweep_timing = Some(SweepTiming {
            interval_min_s: plan.interval_min_s,
            intervals_per_point: u32::try_from(plan.intervals).unwrap_or(u32::MAX),
            launches_per_interval_min: launches.0,
            launches_per_interval_max: launches.1,
        });
    }
    // Plateaus of the FP32 sweep become "ERT" ceilings, beside the dedicated kernels'.
    let best = roofline_model::plateau::best_bandwidth_per_working_set(&m.sweep, Datapath::Fp32);
    let plateaus = roofline_model::plateau::detect(&best);
    for (level, p) in roofline_model::plateau::attribute(&plateaus, rig.session.l2_bytes() as f64) {
        let mut c = BandwidthCeiling::new(level, p.bandwidth, Method::Empirical);
        c.implementation = Some(format!(
            "ERT-style sweep plateau, {} to {} working set ({} points; burst figures)",
            human_bytes(p.from_bytes),
            human_bytes(p.to_bytes),
            p.points
        ));
        c.operands = Some(Operands::RandomUnitFloats);
        m.bandwidth.push(c);
    }
    Ok(())
}

fn human_bytes(b: f64) -> String {
    if b >= 1073741824.0 {
        format!("{:.0} GiB", b / 1073741824.0)
    } else if b >= 1048576.0 {
        format!("{:.0} MiB", b / 1048576.0)
    } else {
        format!("{:.0} KiB", b / 1024.0)
    }
}

/// The device's identity and attributes as the bundle records them.
fn describe(s: &Session) -> Device {
    let attr = |a| s.attribute(a).ok().filter(|k| *k > 0);
    let cc = s.compute_capability();
    let mut d = Device::new(format!("gpu{}", s.ordinal()), s.name());
    d.compute_capability = Some(format!("{}.{}", cc.0, cc.1));
    d.sm_count = Some(s.sm_count());
    d.sm_clock_hz = attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).map(|k| f64::from(k) * 1e3);
    d.memory_clock_hz = attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).map(|k| f64::from(k) * 1e3);
    d.memory_bus_width_bits =
        attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH).and_then(|w| u32::try_from(w).ok());
    d.memory_bytes = s.total_mem().map(|b| b as f64);
    d.l2_bytes = Some(s.l2_bytes() as f64).filter(|b| *b > 0.0);
    d.power_limit_w = s.power_limit_w();
    d
}

/// Theoretical ceilings: each compute datapath at the SM clock our own kernel observed on it (the
/// device's reported clock where we measured nothing), L1/shared at the clock seen by the L1
/// kernel, HBM from bus width and memory clock; and, for a GPU whose datasheet is known
/// ([`roofline_model::theoretical::DATASHEETS`]), every datapath at the datasheet's clock and
/// the datasheet's HBM figure, each row labelled with its clock.
fn theoretical(device: &Device, m: &mut Machine, notes: &mut Vec<String>) {
    let measured_clock = |pick: &dyn Fn(&&ComputeCeiling) -> bool| {
        m.compute
            .iter()
            .filter(|c| !c.reference && c.method == Method::Empirical)
            .find(pick)
            .and_then(|c| c.clock_hz)
    };
    let l1_clock = m
        .bandwidth
        .iter()
        .find(|b| b.level == MemoryLevel::L1 && b.method == Method::Empirical)
        .and_then(|b| b.clock_hz);
    let (bw_at_l1, _, missing) = roofline_model::theoretical::ceilings(device, l1_clock);
    notes.extend(
        missing
            .into_iter()
            .map(|s| format!("no theoretical ceiling for {s}")),
    );
    let mut compute = Vec::new();
    for d in Datapath::ALL {
        let clock = measured_clock(&|c: &&ComputeCeiling| c.datapath == d);
        let (_, cs, _) = roofline_model::theoretical::ceilings(device, clock);
        compute.extend(cs.into_iter().filter(|c| c.datapath == d));
    }
    let (sheet_bw, sheet_compute) = roofline_model::theoretical::datasheet_ceilings(device);
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
///   `mma.sync`'s IMMA and cuBLASLt's INT8 kernels reach about half (issue 33; the H100 host
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
/// kernel stamped or NVML saw, else the device's maximum).
fn mark_limits(device: &Device, m: &mut Machine) {
    let cc = device
        .compute_capability
        .as_deref()
        .and_then(|c| c.split_once('.'))
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
    let (Some(cc), Some(rates), Some(sms)) = (
        cc,
        device
            .compute_capability
            .as_deref()
            .and_then(roofline_model::theoretical::rates),
        device.sm_count,
    ) else {
        return;
    };
    for c in m
        .compute
        .iter_mut()
        .filter(|c| c.method == Method::Empirical && c.datapath.is_tensor())
    {
        let theoretical = c.clock_hz.or(device.sm_clock_hz).and_then(|clock| {
            roofline_model::theoretical::compute_peak(rates, c.datapath, sms, clock)
        });
        c.limit = limit_of(c.datapath, cc, !c.reference, c.value, theoretical);
    }
}
/// Measures device `ordinal`. Never panics on a driver failure: the phases measured before a
/// failure are returned in a bundle marked incomplete, with the failure.
///
/// # Errors
/// The session could not start or a microbenchmark could not be compiled.
pub fn run(
    ordinal: usize,
    plan: Plan,
    provenance: roofline_model::bundle::Provenance,
) -> Result<Outcome, MachineError> {
    let started = Instant::now();
    let mut session = Session::new(ordinal)?;
    // NVML is sampled during every measurement where it can be read; without it, a note.
    let nvml = session.start_telemetry().err();
    // One seed per run (the clock's nanoseconds), recorded; each buffer gets the next value.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x5EED, |d| d.as_nanos() as u64);
    let mut rig = Rig {
        bandwidth: session.compile(Source::Bandwidth)?,
        fma: session.compile(Source::Fma)?,
        mma: session.compile(Source::Mma)?,
        ert: session.compile(Source::Ert)?,
        init: session.compile(Source::Init)?,
        session,
        plan,
        measure: MeasurePlan::of(plan.quick),
        seed: Cell::new(seed),
        notes: Vec::new(),
    };
    if let Some(why) = nvml {
        rig.notes.push(format!(
            "NVML unavailable ({why}): SM clock, power and clock-event reasons not sampled"
        ));
    }
    rig.notes.push(format!(
        "operands: bounded random data written on the GPU once per run (kernels/init.cu), seed {seed:#018x}; FMA chains and the HBM write kernel use constants"
    ));
    let device = describe(&rig.session);
    let mut bundle = Bundle::new(provenance);
    let (driver, cuda) = crate::gpu::driver_versions();
    bundle.provenance.driver_version = driver;
    bundle.provenance.cuda_version = cuda;
    bundle.description = Some(format!(
        "roofline machine{}: ceilings of {} measured with our own kernels, same-run references and theoretical figures",
        if plan.quick { " --quick" } else { "" },
        device.name
    ));
    let mut m = Machine {
        device: device.id.clone(),
        chart_figure: Some(roofline_model::bundle::ChartFigure::Sustained),
        ..Machine::default()
    };
    let mut skipped = Vec::new();
    type Phase = fn(&mut Rig, &mut Machine, &mut Vec<Skipped>) -> Result<(), MachineError>;
    let phases: [(&'static str, Phase); 7] = [
        ("HBM", hbm),
        ("L2", l2),
        ("L1 and shared memory", l1_shared),
        ("CUDA-core FMA peaks", fma),
        ("Tensor Core mma.sync peaks", mma),
        ("cuBLASLt reference GEMMs", cublaslt),
        ("launch overhead", launch_overhead),
    ];
    let mut failure = None;
    let overall = progress::bar(phases.len() as u64 + 1, "measuring");
    for (name, phase) in phases {
        overall.set_message(name);
        if let Err(e) = phase(&mut rig, &mut m, &mut skipped) {
            failure = Some((name, e));
            break;
        }
        overall.inc(1);
    }
    overall.finish_and_clear();
    if failure.is_none() {
        let points =
            (plan.sweep_working_sets().len() * plan.sweep_flops_per_element().len() * 2) as u64;
        let bar = progress::bar(points, "ERT-style sweep");
        if let Err(e) = sweep(&mut rig, &mut m, &mut skipped, &bar) {
            failure = Some(("ERT-style sweep", e));
        }
        bar.finish_and_clear();
    }
    let wall_s = started.elapsed().as_secs_f64();
    let failed = failure
        .as_ref()
        .map(|(phase, e)| format!("the {phase} phase failed: {e}"));
    let mut bundle = assemble(bundle, device, m, skipped, failed.as_deref(), wall_s);
    bundle.notes.append(&mut rig.notes);
    if crate::gpu::tf32_disabled() {
        bundle.notes.push(
            "NVIDIA_TF32_OVERRIDE=0 was set: cuBLASLt used no TF32, so the TF32 reference GEMM ran on CUDA cores and is no Tensor Core figure"
                .into(),
        );
    }
    Ok(Outcome {
        bundle,
        failure,
        wall_s,
    })
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
/// `gpu1`), joined by [`roofline_model::merge::merge`]: devices and machines side by side,
/// complete only if every run is, notes and skipped items kept (notes prefixed by their
/// device's label). A single device's bundle is kept as it is; `None` when there is none. The
/// merged bundle keeps the first run's provenance (driver and CUDA versions).
///
/// # Errors
/// The merge's, when two runs disagree about one device id.
pub fn combine(
    mut runs: Vec<(String, Bundle)>,
) -> Result<Option<Bundle>, roofline_model::merge::MergeError> {
    if runs.len() <= 1 {
        return Ok(runs.pop().map(|(_, b)| b));
    }
    let provenance = runs[0].1.provenance.clone();
    let mut b = roofline_model::merge::merge(&runs, provenance)?;
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

    #[test]
    fn plans_cover_the_ert_range() {
        let full = Plan {
            quick: false,
            diagnose_refused: false,
        };
        let ws = full.sweep_working_sets();
        assert_eq!(ws.first(), Some(&(16 << 10)));
        assert_eq!(ws.last(), Some(&(2 << 30)));
        assert_eq!(
            full.sweep_flops_per_element(),
            [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        );
        let quick = Plan {
            quick: true,
            diagnose_refused: false,
        };
        assert!(quick.sweep_working_sets().len() < ws.len() / 2 + 1);
        assert_eq!(quick.sweep_flops_per_element(), [1, 4, 16, 64, 256, 1024]);
    }

    /// The reference GEMM search: 3 to 6 shapes per Tensor datapath (8192³ first), 8 heuristic
    /// algorithms each; `--quick` keeps two shapes (one for FP64), 8192³ first, and 4
    /// algorithms. Every reduction depth stays within what FP16 holds for our operands.
    #[test]
    fn gemm_searches_cover_several_shapes_and_algorithms() {
        let full = Plan {
            quick: false,
            diagnose_refused: false,
        };
        let quick = Plan {
            quick: true,
            diagnose_refused: false,
        };
        assert_eq!((full.gemm_algorithms(), quick.gemm_algorithms()), (8, 4));
        let tensor: Vec<Datapath> = Datapath::ALL
            .into_iter()
            .filter(|d| d.is_tensor())
            .collect();
        for d in tensor {
            let shapes = full.gemm_shapes(d);
            assert!((3..=6).contains(&shapes.len()), "{d:?}: {shapes:?}");
            assert_eq!(shapes[0], (8192, 8192, 8192));
            let q = quick.gemm_shapes(d);
            assert!(!q.is_empty() && q.len() <= 2, "{d:?}");
            for (m, n, k) in shapes.iter().chain(&q) {
                assert!(*k <= kernels::MAX_K_FP16, "{d:?}: k = {k}");
                assert!(m % 256 == 0 && n % 256 == 0 && k % 128 == 0, "{d:?}");
            }
            // Quick keeps the square baseline (its references are marked indicative).
            assert_eq!(q[0], (8192, 8192, 8192));
        }
        assert!(full.gemm_shapes(Datapath::Fp32).is_empty());
        assert_eq!(
            quick.gemm_shapes(Datapath::TensorTf32),
            [(8192, 8192, 8192), (15360, 1024, 4096)]
        );
        assert_eq!(
            full.gemm_shapes(Datapath::TensorFp8)[1],
            (9216, 1024, 14336),
            "MAMF's torch 1024×9216×14336 is cuBLAS m = 9216, n = 1024"
        );
    }

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

    #[test]
    fn copies_state_nvbandwidths_convention_and_l1_asks_for_the_largest_l1() {
        assert_eq!(
            nvbandwidth_words(5.8e12),
            "nvbandwidth's device_local_copy counts each byte once: 2.90 TB/s on its convention"
        );
        assert_eq!(carveout(Kernel::L1Read), 0);
        assert_eq!(carveout(Kernel::SharedRead), 100);
        assert_eq!(mma_blocks_per_sm(Kernel::MmaF64M16n8k16), 2);
        assert_eq!(mma_blocks_per_sm(Kernel::MmaBf16), 4);
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

    /// Hand counts (made-up unit-test sizes, not measurements): a sweep point runs enough
    /// sweeps for the traffic target unless that exceeds the FLOP cap.
    #[test]
    fn sweep_repeats_respect_traffic_and_flop_caps() {
        // 1 MiB of float4 at 1 FLOP per value: 2 MiB of traffic and 262,144 FLOPs per sweep;
        // 256 MiB of traffic needs 128 sweeps, far under the cap.
        let n = (1u64 << 20) / 16;
        let w = sweep_work(Kernel::ErtF32, n, 1, sweep_fmas(1)).unwrap();
        assert_eq!(sweep_repeats(w, 256.0 * 1048576.0), 128);
        // At 1024 FLOPs per value one sweep is 2.7e8 FLOPs: the 4e9 cap allows 14.
        let w = sweep_work(Kernel::ErtF32, n, 1, sweep_fmas(1024)).unwrap();
        assert_eq!(w.flop_count(), 262_144.0 * 1024.0);
        assert_eq!(sweep_repeats(w, 256.0 * 1048576.0), 14);
        // A set larger than the target still runs once.
        let big = sweep_work(Kernel::ErtF64, (2u64 << 30) / 16, 1, 0).unwrap();
        assert_eq!(sweep_repeats(big, 64.0 * 1048576.0), 1);
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
