//! `roofline machine`: measures a GPU's ceilings with our own microbenchmarks (kernels in
//! `kernels/`), beside same-run references (the driver's device-to-device copy, cuBLASLt GEMMs)
//! and theoretical figures at the clock observed while measuring.
//!
//! Phases, in order: device attributes, HBM, L2, L1 and shared memory, CUDA-core FMA peaks,
//! Tensor Core `mma.sync` peaks, cuBLASLt GEMMs, launch overhead, the ERT-style sweep. Every time
//! is a CUDA-event interval after warm-up ([`crate::gpu::Session::time`]); a ceiling's value is
//! the median of its repeats, with the repeats kept as `samples`; every FLOP and byte counted
//! comes from the launch's work ([`crate::gpu::launch`], from the kernel's work formula). A
//! kernel that cannot run on this GPU, or that the SASS audit refused there
//! ([`kernels::refusal`]), is recorded under `skipped`. A phase that fails stops the run: what
//! was measured before is written in a bundle marked incomplete, and the command exits non-zero.
//!
//! This module only describes what to measure: the GPU work itself is in [`crate::gpu`].
#![forbid(unsafe_code)]

use std::time::Instant;

use cudarc::driver::sys::CUdevice_attribute as A;
use roofline_model::bundle::{
    BandwidthCeiling, Bundle, ComputeCeiling, Datapath, Device, LaunchOverhead, Machine,
    MemoryLevel, Method, Skipped, SweepPoint,
};
use roofline_model::stats::median_or_nan;

use crate::gpu::blaslt::{self, BlasLtError, Gemm};
use crate::gpu::kernels::{
    self, BW_UNROLL, Compiled, FMA_CHAINS, Kernel, LaunchWork, MMA_ACC, Source, VECTOR_BYTES,
    stream_work, sweep_fmas, sweep_work,
};
use crate::gpu::launch::Launcher;
use crate::gpu::launch::micro::{Empty, FmaPeak, Hbm, L2Read, MmaPeak, Resident, Sweep};
use crate::gpu::{DeviceError, Session, Timing};
use crate::progress;

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// `--quick`: smaller buffers, fewer repeats, a coarser sweep.
    pub quick: bool,
    /// `--diagnose-refused`: time the kernels the SASS audit refuses here too, and note their
    /// rates (never as ceilings).
    pub diagnose_refused: bool,
}

impl Plan {
    fn repeats(self) -> usize {
        if self.quick { 5 } else { 11 }
    }
    fn warmup(self) -> usize {
        if self.quick { 1 } else { 2 }
    }
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

/// Everything a phase needs: the timing session and the compiled microbenchmarks.
struct Rig {
    session: Session,
    plan: Plan,
    bandwidth: Compiled,
    fma: Compiled,
    mma: Compiled,
    ert: Compiled,
    /// What the run noticed about its own launches (for the bundle's notes).
    notes: Vec<String>,
}

impl Rig {
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

    fn time<E: From<DeviceError>>(
        &mut self,
        what: &str,
        run: impl FnMut(&Session) -> Result<(), E>,
    ) -> Result<Timing, E> {
        let (warmup, repeats) = (self.plan.warmup(), self.plan.repeats());
        self.session.time(what, warmup, repeats, run)
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

    /// Notes how fast a kernel the SASS audit refuses ran (`--diagnose-refused`), or how its
    /// run failed: a diagnostic never stops the measurement.
    fn diagnose(
        &mut self,
        kernel: Kernel,
        reason: &str,
        timed: Result<(Timing, LaunchWork), DeviceError>,
    ) {
        match timed {
            Ok((t, work)) => {
                if let Some(c) = peak(&t, work, String::new()) {
                    self.notes
                        .push(diagnostic_note(kernel.entry(), reason, c.datapath, c.value));
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

/// A bandwidth ceiling from a timing and the bytes one launch moves.
fn bw(t: &Timing, work: LaunchWork, implementation: String) -> BandwidthCeiling {
    let samples = t.rates(work.bytes);
    let level = work.level.unwrap_or(MemoryLevel::Hbm);
    let mut c = BandwidthCeiling::new(level, median_or_nan(&samples), Method::Empirical);
    c.implementation = Some(implementation);
    c.clock_hz = t.clock();
    c.samples = samples;
    c
}

/// A compute ceiling from a timing and the FLOPs one launch does.
fn peak(t: &Timing, work: LaunchWork, implementation: String) -> Option<ComputeCeiling> {
    let (d, flops) = work.flops?;
    let samples = t.rates(flops);
    let mut c = ComputeCeiling::new(d, median_or_nan(&samples), Method::Empirical);
    c.implementation = Some(implementation);
    c.clock_hz = t.clock();
    c.samples = samples;
    Some(c)
}

/// HBM: read, write and copy kernels over buffers far larger than L2, and the driver's
/// device-to-device copy as the reference (bytes read plus written).
fn hbm(rig: &mut Rig, m: &mut Machine, skipped: &mut Vec<Skipped>) -> Result<(), MachineError> {
    let bytes = rig.plan.hbm_bytes().max(rig.session.l2_bytes() * 16);
    let elements = (bytes / VECTOR_BYTES as usize) as u64;
    let mib = bytes >> 20;
    let src = rig.session.alloc_zeros::<u8>(bytes, "HBM")?;
    let mut dst = rig.session.alloc_zeros::<u8>(bytes, "HBM")?;
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let cfg = rig.session.grid(8, 256, 0);
    let cases = [
        (
            Kernel::HbmRead,
            format!("read-only kernel, {VECTOR_BYTES}-byte streaming loads, {mib} MiB"),
        ),
        (
            Kernel::HbmWrite,
            format!("write-only kernel, {VECTOR_BYTES}-byte streaming stores, {mib} MiB"),
        ),
        (
            Kernel::HbmCopy,
            format!("copy kernel, bytes read + written, {mib} MiB"),
        ),
    ];
    let mut copy_bytes = None;
    for (kernel, implementation) in cases {
        if rig.refused(kernel, format!("HBM {} kernel", kernel.entry()), skipped) {
            continue;
        }
        let (a, b) = match kernel {
            Kernel::HbmWrite => (&dst, None),
            _ => (&src, Some(&dst)),
        };
        rig.check_residency(kernel, &cfg);
        let l = Hbm::new(&rig.bandwidth, kernel, cfg, elements, a, b, &sink)?;
        let t = rig.time(kernel.entry(), |s| l.launch(s))?;
        if kernel == Kernel::HbmCopy {
            copy_bytes = Some(l.work());
        }
        m.bandwidth.push(bw(&t, l.work(), implementation));
    }
    // The driver's copy over the same buffers moves what our copy kernel does.
    let work =
        copy_bytes.unwrap_or_else(|| stream_work(Kernel::HbmCopy, elements, 1).unwrap_or_default());
    let t = rig.time("cuMemcpyDtoD", |s| {
        s.stream()
            .memcpy_dtod(&src, &mut dst)
            .map_err(crate::gpu::session::driver("cuMemcpyDtoDAsync"))
    })?;
    let mut c = bw(
        &t,
        work,
        format!(
            "driver device-to-device copy (cuMemcpyDtoDAsync), bytes read + written, {mib} MiB"
        ),
    );
    c.clock_hz = None;
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
    // Each timed launch lasts about a millisecond or more on an H100 (quick: a quarter), so that
    // the few microseconds between the start event and the kernel weigh little.
    let reps: i32 = if rig.plan.quick { 256 } else { 1024 };
    let buf = rig
        .session
        .alloc_zeros::<u8>(set_bytes, "the L2 working set")?;
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let cfg = rig.session.grid(4, 256, 0);
    rig.check_residency(Kernel::L2Read, &cfg);
    let l = L2Read::new(&rig.bandwidth, cfg, elements, reps, &buf, &sink)?;
    let t = rig.time("l2_read", |s| l.launch(s))?;
    m.bandwidth.push(bw(
        &t,
        l.work(),
        format!(
            "reread through L2 only (ld.global.cg), {:.1} MiB working set of {:.0} MiB L2",
            set_bytes as f64 / 1048576.0,
            rig.session.l2_bytes() as f64 / 1048576.0
        ),
    ));
    Ok(())
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
    let buf = rig.session.alloc_zeros::<u8>(
        (blocks * u64::from(slice) * u64::from(VECTOR_BYTES)) as usize,
        "the L1 working set",
    )?;
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let kib = slice * VECTOR_BYTES / 1024;
    let cases = [
        (
            Kernel::L1Read,
            Some(&buf),
            format!(
                "per-SM resident {} KiB reread with ld.global.ca, {VECTOR_BYTES}-byte loads",
                2 * kib
            ),
        ),
        (
            Kernel::SharedRead,
            None,
            format!(
                "{kib} KiB of shared memory per block reread, {VECTOR_BYTES}-byte ld.shared, conflict-free"
            ),
        ),
    ];
    for (kernel, b, implementation) in cases {
        if rig.refused(kernel, format!("{} kernel", kernel.entry()), skipped) {
            continue;
        }
        let l = Resident::new(&rig.bandwidth, kernel, cfg, slice, reps, b, &sink)?;
        rig.check_residency(kernel, &l.config());
        let t = rig.time(kernel.entry(), |s| l.launch(s))?;
        m.bandwidth.push(bw(&t, l.work(), implementation));
    }
    Ok(())
}

/// CUDA-core peaks: FMA chains per precision.
fn fma(rig: &mut Rig, m: &mut Machine, skipped: &mut Vec<Skipped>) -> Result<(), MachineError> {
    let cfg = rig.session.grid(8, 256, 0);
    let scale = if rig.plan.quick { 1 } else { 2 };
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let cases = [
        (Kernel::FmaF64, 512 * scale),
        (Kernel::FmaF32, 1024 * scale),
        (Kernel::FmaF16x2, 1024 * scale),
        (Kernel::FmaBf16x2, 1024 * scale),
    ];
    for (kernel, iterations) in cases {
        let label = match kernel.work() {
            kernels::Work::Fma { datapath, .. } => datapath.label(),
            _ => kernel.entry(),
        };
        if rig.refused(kernel, format!("{label} FMA peak"), skipped) {
            if let Some(reason) = rig.diagnosable(kernel) {
                let timed = FmaPeak::new(&rig.fma, kernel, cfg, iterations, &sink)
                    .and_then(|l| Ok((rig.time(kernel.entry(), |s| l.launch(s))?, l.work())));
                rig.diagnose(kernel, &reason, timed);
            }
            continue;
        }
        rig.check_residency(kernel, &cfg);
        let l = FmaPeak::new(&rig.fma, kernel, cfg, iterations, &sink)?;
        let t = rig.time(kernel.entry(), |s| l.launch(s))?;
        m.compute.extend(peak(
            &t,
            l.work(),
            format!(
                "FMA chains ({}), {FMA_CHAINS} independent per thread, full occupancy",
                kernel.entry()
            ),
        ));
    }
    Ok(())
}

/// Tensor Core peaks with our own `mma.sync` kernels.
fn mma(rig: &mut Rig, m: &mut Machine, skipped: &mut Vec<Skipped>) -> Result<(), MachineError> {
    let cfg = rig.session.grid(4, 256, 0);
    let scale = if rig.plan.quick { 1 } else { 4 };
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let cases = [
        (Kernel::MmaF16, 2048 * scale),
        (Kernel::MmaBf16, 2048 * scale),
        (Kernel::MmaTf32, 2048 * scale),
        (Kernel::MmaFp8, 1024 * scale),
        (Kernel::MmaInt8, 1024 * scale),
        (Kernel::MmaF64, 2048 * scale),
    ];
    for (kernel, iterations) in cases {
        let label = match kernel.work() {
            kernels::Work::Mma { datapath, .. } => datapath.label(),
            _ => kernel.entry(),
        };
        if rig.refused(kernel, format!("{label} own mma.sync kernel"), skipped) {
            if let Some(reason) = rig.diagnosable(kernel) {
                let timed = MmaPeak::new(&rig.mma, kernel, cfg, iterations, &sink)
                    .and_then(|l| Ok((rig.time(kernel.entry(), |s| l.launch(s))?, l.work())));
                rig.diagnose(kernel, &reason, timed);
            }
            continue;
        }
        rig.check_residency(kernel, &cfg);
        let l = MmaPeak::new(&rig.mma, kernel, cfg, iterations, &sink)?;
        let t = rig.time(kernel.entry(), |s| l.launch(s))?;
        m.compute.extend(peak(
            &t,
            l.work(),
            format!(
                "own mma.sync kernel ({}), {MMA_ACC} accumulators per warp",
                kernel.entry()
            ),
        ));
    }
    if rig.session.compute_capability().0 >= 9 {
        skipped.push(Skipped {
            what: "wgmma (Hopper warpgroup MMA) own kernels".into(),
            reason: "not implemented yet: on sm_90 our Tensor Core figures use mma.sync, which cannot reach the warpgroup datapath's peak; the cuBLASLt reference does".into(),
        });
    }
    Ok(())
}

/// The cuBLASLt reference per Tensor Core datapath: the best of a few large square GEMMs.
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
    let n: u64 = if rig.plan.quick { 4096 } else { 8192 };
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
        let mut g = match Gemm::new(rig.session.stream(), spec, (n, n, n)) {
            Ok(g) => g,
            Err(e @ (BlasLtError::NoAlgorithm(_) | BlasLtError::Call { .. })) => {
                skipped.push(Skipped {
                    what,
                    reason: e.to_string(),
                });
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let work = LaunchWork {
            flops: Some((d, g.flops())),
            ..LaunchWork::default()
        };
        let version = g.version;
        let accumulation = if spec.fast_accumulation {
            ", fast accumulation"
        } else {
            ""
        };
        // A failing GEMM launch means cuBLASLt cannot run this one here: skipped, with its
        // error; a driver failure around it stops the run.
        match rig.time(&format!("cuBLASLt {}", d.label()), |_| {
            g.launch().map_err(MachineError::BlasLt)
        }) {
            Ok(t) => {
                if let Some(mut c) = peak(
                    &t,
                    work,
                    format!("cuBLASLt {version} GEMM {n}³ (TN{accumulation})"),
                ) {
                    c.clock_hz = None;
                    c.reference = true;
                    m.compute.push(c);
                }
            }
            Err(MachineError::BlasLt(e)) => skipped.push(Skipped {
                what,
                reason: e.to_string(),
            }),
            Err(e) => return Err(e),
        }
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

/// The ERT-style sweep for FP32 and FP64, kept raw, and its plateaus as ceilings.
fn sweep(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
    bar: &indicatif::ProgressBar,
) -> Result<(), MachineError> {
    let sets = rig.plan.sweep_working_sets();
    let fpes = rig.plan.sweep_flops_per_element();
    let top = *sets.last().unwrap_or(&(1 << 30));
    let buf = rig.session.alloc_zeros::<u8>(top, "the sweep")?;
    let full = u64::from(rig.session.sm_count()) * 2048;
    let traffic_target = if rig.plan.quick {
        64.0 * 1048576.0
    } else {
        256.0 * 1048576.0
    };
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
                let t = rig.time(kernel.entry(), |s| l.launch(s))?;
                let work = l.work();
                m.sweep.push(SweepPoint {
                    datapath,
                    working_set_bytes: ws as f64,
                    flops_per_element: f64::from(fpe),
                    flops: work.flop_count(),
                    bytes: work.bytes,
                    time_s: t.median_s(),
                });
                bar.inc(1);
            }
        }
    }
    // Plateaus of the FP32 sweep become "ERT" ceilings, beside the dedicated kernels'.
    let best = roofline_model::plateau::best_bandwidth_per_working_set(&m.sweep, Datapath::Fp32);
    let plateaus = roofline_model::plateau::detect(&best);
    for (level, p) in roofline_model::plateau::attribute(&plateaus, rig.session.l2_bytes() as f64) {
        let mut c = BandwidthCeiling::new(level, p.bandwidth, Method::Empirical);
        c.implementation = Some(format!(
            "ERT-style sweep plateau, {} to {} working set ({} points)",
            human_bytes(p.from_bytes),
            human_bytes(p.to_bytes),
            p.points
        ));
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
    d
}

/// Theoretical ceilings: each compute datapath at the SM clock our own kernel observed on it (the
/// device's reported clock where we measured nothing), L1/shared at the clock seen by the L1
/// kernel, HBM from bus width and memory clock.
fn theoretical(device: &Device, m: &mut Machine, notes: &mut Vec<String>) {
    let measured_clock = |pick: &dyn Fn(&&ComputeCeiling) -> bool| {
        m.compute
            .iter()
            .filter(|c| !c.reference)
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
    m.bandwidth.extend(bw_at_l1);
    m.compute.extend(compute);
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
    let session = Session::new(ordinal)?;
    let mut rig = Rig {
        bandwidth: session.compile(Source::Bandwidth)?,
        fma: session.compile(Source::Fma)?,
        mma: session.compile(Source::Mma)?,
        ert: session.compile(Source::Ert)?,
        session,
        plan,
        notes: Vec::new(),
    };
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

/// Completes a run's bundle: theoretical ceilings at the observed clocks, the device, the machine,
/// what was skipped, the wall time, and whether (and why) the run is incomplete.
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
