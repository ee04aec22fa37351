//! `roofline machine`: measures a GPU's ceilings with our own microbenchmarks (kernels in
//! `kernels/`), beside same-run references (the driver's device-to-device copy, cuBLASLt GEMMs)
//! and theoretical figures at the clock observed while measuring.
//!
//! Phases, in order: device attributes, HBM, L2, L1 and shared memory, CUDA-core FMA peaks,
//! Tensor Core `mma.sync` peaks, cuBLASLt GEMMs, launch overhead, the ERT-style sweep. Every time
//! is a CUDA-event interval after warm-up; a ceiling's value is the median of its repeats, with
//! the repeats kept as `samples`. A phase that fails stops the run: what was measured before is
//! written in a bundle marked incomplete, and the command exits non-zero.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::CUdevice_attribute as A;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig,
    PushKernelArg,
};
use roofline_model::bundle::{
    BandwidthCeiling, Bundle, ComputeCeiling, Datapath, Device, LaunchOverhead, Machine,
    MemoryLevel, Method, Skipped, SweepPoint,
};

use crate::blaslt::{self, BlasLtError, Gemm};
use crate::kernels::{self, Compiled, KernelError, Source};
use crate::progress;

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// `--quick`: smaller buffers, fewer repeats, a coarser sweep.
    pub quick: bool,
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
    /// A driver call failed.
    #[error("{during}: {source}")]
    Driver {
        /// What we were doing.
        during: String,
        /// The driver's error (out of memory, illegal address, …).
        #[source]
        source: DriverError,
    },
    /// A kernel could not be compiled or loaded.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// A cuBLASLt failure that is not a plain "unsupported here".
    #[error(transparent)]
    BlasLt(#[from] BlasLtError),
}

fn drv(during: impl Into<String>) -> impl FnOnce(DriverError) -> MachineError {
    let during = during.into();
    move |source| MachineError::Driver { during, source }
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

/// Everything a phase needs: the context, one stream, the compiled kernels, the device.
struct Rig {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    start: CudaEvent,
    end: CudaEvent,
    stamps: CudaSlice<u64>,
    sms: u32,
    cc: (i32, i32),
    l2_bytes: usize,
    plan: Plan,
    bandwidth: Compiled,
    fma: Compiled,
    mma: Compiled,
    ert: Compiled,
}

/// Repeated timings of one measurement: seconds, and SM clocks (Hz) seen by the kernel.
struct Timing {
    times: Vec<f64>,
    clocks: Vec<f64>,
}

fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

impl Timing {
    fn clock(&self) -> Option<f64> {
        let c = median(&self.clocks);
        (c.is_finite() && c > 0.0).then_some(c)
    }
    /// `amount / time` per repeat.
    fn rates(&self, amount: f64) -> Vec<f64> {
        self.times.iter().map(|t| amount / t).collect()
    }
}

impl Rig {
    fn new(ordinal: usize, plan: Plan) -> Result<Self, MachineError> {
        let ctx = CudaContext::new(ordinal).map_err(drv("creating the CUDA context"))?;
        // One stream only: cudarc's cross-stream event tracking would add work to every launch.
        // SAFETY: every buffer is used on the one stream created below.
        #[allow(unsafe_code)]
        unsafe {
            ctx.disable_event_tracking();
        }
        let stream = ctx.new_stream().map_err(drv("creating a stream"))?;
        let attr = |a| ctx.attribute(a).map_err(drv("reading a device attribute"));
        let sms = u32::try_from(attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?).unwrap_or(1);
        let cc = ctx
            .compute_capability()
            .map_err(drv("reading the compute capability"))?;
        let l2_bytes = usize::try_from(attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?).unwrap_or(0);
        let arch = kernels::arch_name(cc.0, cc.1);
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        Ok(Rig {
            start: ctx.new_event(timing).map_err(drv("creating an event"))?,
            end: ctx.new_event(timing).map_err(drv("creating an event"))?,
            stamps: stream
                .alloc_zeros::<u64>(2)
                .map_err(drv("allocating the clock stamps"))?,
            bandwidth: kernels::compile(&ctx, Source::Bandwidth, &arch)?,
            fma: kernels::compile(&ctx, Source::Fma, &arch)?,
            mma: kernels::compile(&ctx, Source::Mma, &arch)?,
            ert: kernels::compile(&ctx, Source::Ert, &arch)?,
            ctx,
            stream,
            sms,
            cc,
            l2_bytes,
            plan,
        })
    }

    /// Runs `launch` `warmup` times, then `repeats` times each between two events; reads the
    /// kernel's clock stamps after each repeat.
    fn time(
        &mut self,
        what: &str,
        mut launch: impl FnMut(&Self) -> Result<(), MachineError>,
    ) -> Result<Timing, MachineError> {
        for _ in 0..self.plan.warmup() {
            launch(self)?;
        }
        let mut times = Vec::new();
        let mut clocks = Vec::new();
        for _ in 0..self.plan.repeats() {
            self.stream
                .memset_zeros(&mut self.stamps)
                .map_err(drv(format!("{what}: clearing the clock stamps")))?;
            self.start
                .record(&self.stream)
                .map_err(drv(format!("{what}: recording an event")))?;
            launch(self)?;
            self.end
                .record(&self.stream)
                .map_err(drv(format!("{what}: recording an event")))?;
            self.end
                .synchronize()
                .map_err(drv(format!("{what}: running")))?;
            let ms = self
                .start
                .elapsed_ms(&self.end)
                .map_err(drv(format!("{what}: reading the events")))?;
            times.push(f64::from(ms) / 1e3);
            let s = self
                .stream
                .clone_dtoh(&self.stamps)
                .map_err(drv(format!("{what}: reading the clock stamps")))?;
            if s[1] > 0 && s[0] > 0 {
                clocks.push(s[0] as f64 / s[1] as f64 * 1e9);
            }
        }
        Ok(Timing { times, clocks })
    }

    /// A full-occupancy grid: `blocks_per_sm` blocks of `threads` per SM.
    fn grid(&self, blocks_per_sm: u32, threads: u32, smem: u32) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.sms * blocks_per_sm, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: smem,
        }
    }
}

fn launch_err(kernel: &str) -> impl FnOnce(DriverError) -> MachineError + '_ {
    move |source| MachineError::Driver {
        during: format!("launching {kernel}"),
        source,
    }
}

fn bw(level: MemoryLevel, t: &Timing, bytes: f64, implementation: String) -> BandwidthCeiling {
    let samples = t.rates(bytes);
    let mut c = BandwidthCeiling::new(level, median(&samples), Method::Empirical);
    c.implementation = Some(implementation);
    c.clock_hz = t.clock();
    c.samples = samples;
    c
}

fn peak(d: Datapath, t: &Timing, flops: f64, implementation: String) -> ComputeCeiling {
    let samples = t.rates(flops);
    let mut c = ComputeCeiling::new(d, median(&samples), Method::Empirical);
    c.implementation = Some(implementation);
    c.clock_hz = t.clock();
    c.samples = samples;
    c
}

const SENTINEL_F32: f32 = -1.234_567e30;

/// HBM: read, write and copy kernels over buffers far larger than L2, and the driver's
/// device-to-device copy as the reference (bytes read plus written).
fn hbm(rig: &mut Rig, m: &mut Machine) -> Result<(), MachineError> {
    let bytes = rig.plan.hbm_bytes().max(rig.l2_bytes * 16);
    let n4 = (bytes / 16) as u64;
    let src = rig
        .stream
        .alloc_zeros::<u8>(bytes)
        .map_err(drv(format!("allocating {} MiB for HBM", bytes >> 20)))?;
    let mut dst = rig
        .stream
        .alloc_zeros::<u8>(bytes)
        .map_err(drv(format!("allocating {} MiB for HBM", bytes >> 20)))?;
    let sink = rig
        .stream
        .alloc_zeros::<f32>(1)
        .map_err(drv("allocating"))?;
    let cfg = rig.grid(8, 256, 0);
    let (read, write, copy) = (
        rig.bandwidth.function("hbm_read")?,
        rig.bandwidth.function("hbm_write")?,
        rig.bandwidth.function("hbm_copy")?,
    );
    let mib = bytes >> 20;
    let t = rig.time("hbm_read", |r| {
        let mut b = r.stream.launch_builder(&read);
        b.arg(&src)
            .arg(&n4)
            .arg(&sink)
            .arg(&SENTINEL_F32)
            .arg(&r.stamps);
        // SAFETY: argument types and order match `hbm_read`; `src` holds `n4` float4.
        #[allow(unsafe_code)]
        unsafe { b.launch(cfg) }
            .map(drop)
            .map_err(launch_err("hbm_read"))
    })?;
    m.bandwidth.push(bw(
        MemoryLevel::Hbm,
        &t,
        bytes as f64,
        format!("read-only kernel, 16-byte streaming loads, {mib} MiB"),
    ));
    let value = 1.0f32;
    let t = rig.time("hbm_write", |r| {
        let mut b = r.stream.launch_builder(&write);
        b.arg(&dst).arg(&n4).arg(&value).arg(&r.stamps);
        // SAFETY: as above, `dst` holds `n4` float4.
        #[allow(unsafe_code)]
        unsafe { b.launch(cfg) }
            .map(drop)
            .map_err(launch_err("hbm_write"))
    })?;
    m.bandwidth.push(bw(
        MemoryLevel::Hbm,
        &t,
        bytes as f64,
        format!("write-only kernel, 16-byte streaming stores, {mib} MiB"),
    ));
    let t = rig.time("hbm_copy", |r| {
        let mut b = r.stream.launch_builder(&copy);
        b.arg(&src).arg(&dst).arg(&n4).arg(&r.stamps);
        // SAFETY: as above.
        #[allow(unsafe_code)]
        unsafe { b.launch(cfg) }
            .map(drop)
            .map_err(launch_err("hbm_copy"))
    })?;
    m.bandwidth.push(bw(
        MemoryLevel::Hbm,
        &t,
        2.0 * bytes as f64,
        format!("copy kernel, bytes read + written, {mib} MiB"),
    ));
    let stream = Arc::clone(&rig.stream);
    let t = rig.time("cuMemcpyDtoD", |_| {
        stream
            .memcpy_dtod(&src, &mut dst)
            .map_err(drv("cuMemcpyDtoDAsync"))
    })?;
    let mut c = bw(
        MemoryLevel::Hbm,
        &t,
        2.0 * bytes as f64,
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
fn l2(rig: &mut Rig, m: &mut Machine) -> Result<(), MachineError> {
    let threads = u64::from(rig.sms) * 1024;
    // Four loads per thread per pass, the set at most a quarter of L2 (inside one partition on
    // GPUs whose L2 is split in two).
    let k = ((rig.l2_bytes as u64 / 4) / (64 * threads)).max(1);
    let n4 = 4 * threads * k;
    let bytes = (n4 * 16) as usize;
    let reps: i32 = if rig.plan.quick { 64 } else { 256 };
    let buf = rig
        .stream
        .alloc_zeros::<u8>(bytes)
        .map_err(drv("allocating the L2 working set"))?;
    let sink = rig
        .stream
        .alloc_zeros::<f32>(1)
        .map_err(drv("allocating"))?;
    let f = rig.bandwidth.function("l2_read")?;
    let cfg = rig.grid(4, 256, 0);
    let t = rig.time("l2_read", |r| {
        let mut b = r.stream.launch_builder(&f);
        b.arg(&buf)
            .arg(&n4)
            .arg(&reps)
            .arg(&sink)
            .arg(&SENTINEL_F32)
            .arg(&r.stamps);
        // SAFETY: argument types and order match `l2_read`; `buf` holds `n4` float4.
        #[allow(unsafe_code)]
        unsafe { b.launch(cfg) }
            .map(drop)
            .map_err(launch_err("l2_read"))
    })?;
    m.bandwidth.push(bw(
        MemoryLevel::L2,
        &t,
        bytes as f64 * f64::from(reps),
        format!(
            "reread through L2 only (ld.global.cg), {:.1} MiB working set of {:.0} MiB L2",
            bytes as f64 / 1048576.0,
            rig.l2_bytes as f64 / 1048576.0
        ),
    ));
    Ok(())
}

/// L1 and shared memory: every block rereads its own 32 KiB, resident in its SM.
fn l1_shared(rig: &mut Rig, m: &mut Machine) -> Result<(), MachineError> {
    let slice: u32 = 2048; // float4: 32 KiB per block, two blocks per SM
    let threads: u32 = 1024;
    let reps: i32 = if rig.plan.quick { 1024 } else { 4096 };
    let blocks = u64::from(rig.sms) * 2;
    let per_launch = blocks as f64 * f64::from(reps) * f64::from(threads) * 4.0 * 16.0;
    let buf = rig
        .stream
        .alloc_zeros::<u8>((blocks * u64::from(slice) * 16) as usize)
        .map_err(drv("allocating the L1 working set"))?;
    let sink = rig
        .stream
        .alloc_zeros::<f32>(1)
        .map_err(drv("allocating"))?;
    let f = rig.bandwidth.function("l1_read")?;
    let cfg = rig.grid(2, threads, 0);
    let t = rig.time("l1_read", |r| {
        let mut b = r.stream.launch_builder(&f);
        b.arg(&buf)
            .arg(&slice)
            .arg(&reps)
            .arg(&sink)
            .arg(&SENTINEL_F32)
            .arg(&r.stamps);
        // SAFETY: argument types and order match `l1_read`; `buf` holds a slice per block.
        #[allow(unsafe_code)]
        unsafe { b.launch(cfg) }
            .map(drop)
            .map_err(launch_err("l1_read"))
    })?;
    m.bandwidth.push(bw(
        MemoryLevel::L1,
        &t,
        per_launch,
        "per-SM resident 64 KiB reread with ld.global.ca, 16-byte loads".into(),
    ));
    let f = rig.bandwidth.function("shared_read")?;
    let cfg = rig.grid(2, threads, slice * 16);
    let t = rig.time("shared_read", |r| {
        let mut b = r.stream.launch_builder(&f);
        b.arg(&slice)
            .arg(&reps)
            .arg(&sink)
            .arg(&SENTINEL_F32)
            .arg(&r.stamps);
        // SAFETY: argument types and order match `shared_read`; dynamic shared memory holds
        // `slice` float4.
        #[allow(unsafe_code)]
        unsafe { b.launch(cfg) }
            .map(drop)
            .map_err(launch_err("shared_read"))
    })?;
    m.bandwidth.push(bw(
        MemoryLevel::Shared,
        &t,
        per_launch,
        "32 KiB of shared memory per block reread, 16-byte ld.shared, conflict-free".into(),
    ));
    Ok(())
}

/// CUDA-core peaks: FMA chains per precision.
fn fma(rig: &mut Rig, m: &mut Machine, skipped: &mut Vec<Skipped>) -> Result<(), MachineError> {
    const CHAINS_X_UNROLL: f64 = 8.0 * 16.0;
    let cfg = rig.grid(8, 256, 0);
    let threads = f64::from(rig.sms * 8 * 256);
    let scale = if rig.plan.quick { 1 } else { 2 };
    // (datapath, kernel, lanes, iterations)
    let cases: [(Datapath, &str, f64, i32); 4] = [
        (Datapath::Fp64, "fma_f64", 1.0, 512 * scale),
        (Datapath::Fp32, "fma_f32", 1.0, 1024 * scale),
        (Datapath::Fp16, "fma_f16x2", 2.0, 1024 * scale),
        (Datapath::Bf16, "fma_bf16x2", 2.0, 1024 * scale),
    ];
    for (d, name, lanes, iters) in cases {
        if d == Datapath::Bf16 && rig.cc.0 < 8 {
            skipped.push(Skipped {
                what: "BF16 FMA peak".into(),
                reason: "bfloat162 FMA needs sm_80 or later".into(),
            });
            continue;
        }
        let f = rig.fma.function(name)?;
        let flops = 2.0 * lanes * CHAINS_X_UNROLL * f64::from(iters) * threads;
        let t = match d {
            Datapath::Fp64 => {
                let sink = rig
                    .stream
                    .alloc_zeros::<f64>(1)
                    .map_err(drv("allocating"))?;
                let (b, c, s) = (0.999_999f64, 1e-7f64, -1.234e300f64);
                rig.time(name, |r| {
                    let mut l = r.stream.launch_builder(&f);
                    l.arg(&b)
                        .arg(&c)
                        .arg(&iters)
                        .arg(&sink)
                        .arg(&s)
                        .arg(&r.stamps);
                    // SAFETY: argument types and order match `fma_f64`.
                    #[allow(unsafe_code)]
                    unsafe { l.launch(cfg) }.map(drop).map_err(launch_err(name))
                })?
            }
            Datapath::Fp32 => {
                let sink = rig
                    .stream
                    .alloc_zeros::<f32>(1)
                    .map_err(drv("allocating"))?;
                let (b, c) = (0.999_99f32, 1e-5f32);
                rig.time(name, |r| {
                    let mut l = r.stream.launch_builder(&f);
                    l.arg(&b)
                        .arg(&c)
                        .arg(&iters)
                        .arg(&sink)
                        .arg(&SENTINEL_F32)
                        .arg(&r.stamps);
                    // SAFETY: argument types and order match `fma_f32`.
                    #[allow(unsafe_code)]
                    unsafe { l.launch(cfg) }.map(drop).map_err(launch_err(name))
                })?
            }
            _ => {
                let sink = rig
                    .stream
                    .alloc_zeros::<u32>(1)
                    .map_err(drv("allocating"))?;
                // 0.99 and 0.001 in both halves (f16 or bf16 bit patterns).
                let (b, c) = if d == Datapath::Fp16 {
                    (0x3beb_3bebu32, 0x1419_1419u32)
                } else {
                    (0x3f7d_3f7du32, 0x3a83_3a83u32)
                };
                let s = 0xdead_beefu32;
                rig.time(name, |r| {
                    let mut l = r.stream.launch_builder(&f);
                    l.arg(&b)
                        .arg(&c)
                        .arg(&iters)
                        .arg(&sink)
                        .arg(&s)
                        .arg(&r.stamps);
                    // SAFETY: argument types and order match the packed FMA kernels.
                    #[allow(unsafe_code)]
                    unsafe { l.launch(cfg) }.map(drop).map_err(launch_err(name))
                })?
            }
        };
        m.compute.push(peak(
            d,
            &t,
            flops,
            format!("FMA chains ({name}), 8 independent per thread, full occupancy"),
        ));
    }
    Ok(())
}

/// Tensor Core peaks with our own `mma.sync` kernels.
fn mma(rig: &mut Rig, m: &mut Machine, skipped: &mut Vec<Skipped>) -> Result<(), MachineError> {
    let cfg = rig.grid(4, 256, 0);
    let warps = f64::from(rig.sms * 4 * 8);
    let scale = if rig.plan.quick { 1 } else { 4 };
    // (datapath, kernel, FLOPs per mma, iterations, minimum compute capability)
    type Case = (Datapath, &'static str, f64, i32, (i32, i32));
    let cases: [Case; 6] = [
        (
            Datapath::TensorFp16,
            "mma_f16",
            4096.0,
            2048 * scale,
            (8, 0),
        ),
        (
            Datapath::TensorBf16,
            "mma_bf16",
            4096.0,
            2048 * scale,
            (8, 0),
        ),
        (
            Datapath::TensorTf32,
            "mma_tf32",
            2048.0,
            2048 * scale,
            (8, 0),
        ),
        (Datapath::TensorFp8, "mma_fp8", 8192.0, 1024 * scale, (8, 9)),
        (
            Datapath::TensorInt8,
            "mma_int8",
            8192.0,
            1024 * scale,
            (8, 0),
        ),
        (Datapath::TensorFp64, "mma_f64", 512.0, 2048 * scale, (8, 0)),
    ];
    for (d, name, per_mma, iters, min_cc) in cases {
        if rig.cc < min_cc {
            skipped.push(Skipped {
                what: format!("{} own mma.sync kernel", d.label()),
                reason: format!(
                    "needs sm_{}{} or later; this GPU is sm_{}{}",
                    min_cc.0, min_cc.1, rig.cc.0, rig.cc.1
                ),
            });
            continue;
        }
        let f = rig.mma.function(name)?;
        let sink = rig
            .stream
            .alloc_zeros::<u64>(1)
            .map_err(drv("allocating"))?;
        let t = rig.time(name, |r| {
            let mut l = r.stream.launch_builder(&f);
            // The sink and sentinel are typed per kernel; a zeroed 8-byte buffer and a sentinel
            // of matching width that the result never equals serve them all.
            l.arg(&iters).arg(&sink);
            let (sf, si, sd) = (SENTINEL_F32, i32::MIN + 7, -1.234e300f64);
            match d {
                Datapath::TensorInt8 => l.arg(&si),
                Datapath::TensorFp64 => l.arg(&sd),
                _ => l.arg(&sf),
            };
            l.arg(&r.stamps);
            // SAFETY: argument types and order match the mma kernels (the sink is at least
            // as wide as the value stored).
            #[allow(unsafe_code)]
            unsafe { l.launch(cfg) }.map(drop).map_err(launch_err(name))
        })?;
        let flops = per_mma * 8.0 * f64::from(iters) * warps;
        m.compute.push(peak(
            d,
            &t,
            flops,
            format!("own mma.sync kernel ({name}), 8 accumulators per warp"),
        ));
    }
    if rig.cc.0 >= 9 {
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
    for (d, min_cc) in datapaths {
        if rig.cc < min_cc {
            skipped.push(Skipped {
                what: format!("{} cuBLASLt GEMM", d.label()),
                reason: format!("needs sm_{}{} or later", min_cc.0, min_cc.1),
            });
            continue;
        }
        let Some(spec) = blaslt::Spec::tensor(d) else {
            continue;
        };
        let mut g = match Gemm::new(&rig.stream, spec, (n, n, n)) {
            Ok(g) => g,
            Err(e @ (BlasLtError::NoAlgorithm(_) | BlasLtError::Call { .. })) => {
                skipped.push(Skipped {
                    what: format!("{} cuBLASLt GEMM", d.label()),
                    reason: e.to_string(),
                });
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let flops = g.flops();
        let version = g.version;
        let mut failure = None;
        let t = rig.time(&format!("cuBLASLt {}", d.label()), |_| {
            g.launch().map_err(|e| {
                failure = Some(e.to_string());
                MachineError::Driver {
                    during: "cuBLASLt".into(),
                    source: DriverError(cudarc::driver::sys::cudaError_enum::CUDA_ERROR_UNKNOWN),
                }
            })
        });
        match t {
            Ok(t) => {
                let mut c = peak(d, &t, flops, format!("cuBLASLt {version} GEMM {n}³ (TN)"));
                c.clock_hz = None;
                c.reference = true;
                m.compute.push(c);
            }
            Err(e) => match failure {
                Some(reason) => skipped.push(Skipped {
                    what: format!("{} cuBLASLt GEMM", d.label()),
                    reason,
                }),
                None => return Err(e),
            },
        }
    }
    Ok(())
}

/// Launch overhead: launch-to-completion of an empty kernel (host wall time), back-to-back
/// launches, and launches replayed from a CUDA graph.
fn launch_overhead(rig: &mut Rig, m: &mut Machine) -> Result<(), MachineError> {
    let f: CudaFunction = rig.fma.function("empty")?;
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    let launch = |s: &CudaStream| {
        // SAFETY: `empty` takes no arguments.
        #[allow(unsafe_code)]
        unsafe { s.launch_builder(&f).launch(cfg) }
            .map(drop)
            .map_err(launch_err("empty"))
    };
    let n = if rig.plan.quick { 200 } else { 1000 };
    for _ in 0..50 {
        launch(&rig.stream)?;
    }
    rig.stream.synchronize().map_err(drv("synchronizing"))?;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        launch(&rig.stream)?;
        rig.stream
            .synchronize()
            .map_err(drv("synchronizing after an empty kernel"))?;
        samples.push(t0.elapsed().as_secs_f64());
    }
    let batch = if rig.plan.quick { 2000 } else { 10_000 };
    let t0 = Instant::now();
    for _ in 0..batch {
        launch(&rig.stream)?;
    }
    rig.stream
        .synchronize()
        .map_err(drv("synchronizing after back-to-back launches"))?;
    let back_to_back = t0.elapsed().as_secs_f64() / f64::from(batch);
    let graph_n = 1000u32;
    rig.stream
        .begin_capture(
            cudarc::driver::sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
        )
        .map_err(drv("beginning graph capture"))?;
    for _ in 0..graph_n {
        launch(&rig.stream)?;
    }
    let graph = rig
        .stream
        .end_capture(cudarc::driver::sys::CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
        .map_err(drv("ending graph capture"))?;
    let graph_s = match graph {
        Some(g) => {
            g.launch().map_err(drv("launching the graph"))?;
            rig.stream.synchronize().map_err(drv("synchronizing"))?;
            let t0 = Instant::now();
            g.launch().map_err(drv("launching the graph"))?;
            rig.stream
                .synchronize()
                .map_err(drv("synchronizing after the graph"))?;
            Some(t0.elapsed().as_secs_f64() / f64::from(graph_n))
        }
        None => None,
    };
    let mut l = LaunchOverhead::new(median(&samples), Method::Empirical);
    l.back_to_back_s = Some(back_to_back);
    l.graph_s = graph_s;
    l.samples = samples;
    l.implementation = Some("empty kernel, host wall time from launch to stream synchronize (median); back-to-back: 10,000 launches then one synchronize; graph: 1,000 launches captured in one CUDA graph".into());
    m.launch_overhead = Some(l);
    Ok(())
}

/// Most FLOPs one sweep launch may execute.
const FLOP_CAP: f64 = 4e9;

/// The ERT-style sweep for FP32 and FP64, kept raw, and its plateaus as ceilings.
fn sweep(rig: &mut Rig, m: &mut Machine, bar: &indicatif::ProgressBar) -> Result<(), MachineError> {
    let sets = rig.plan.sweep_working_sets();
    let fpes = rig.plan.sweep_flops_per_element();
    let top = *sets.last().unwrap_or(&(1 << 30));
    let buf = rig
        .stream
        .alloc_zeros::<u8>(top)
        .map_err(drv(format!("allocating {} MiB for the sweep", top >> 20)))?;
    let full = u64::from(rig.sms) * 2048;
    let traffic_target = if rig.plan.quick {
        64u64 << 20
    } else {
        256u64 << 20
    };
    for (d, name, lanes) in [
        (Datapath::Fp32, "ert_f32", 4.0),
        (Datapath::Fp64, "ert_f64", 2.0),
    ] {
        let f = rig.ert.function(name)?;
        for &ws in &sets {
            let n = (ws / 16) as u64;
            let threads = n.min(full);
            let block = 256u64.min(threads);
            let cfg = LaunchConfig {
                grid_dim: (
                    u32::try_from(threads.div_ceil(block)).unwrap_or(u32::MAX),
                    1,
                    1,
                ),
                block_dim: (block as u32, 1, 1),
                shared_mem_bytes: 0,
            };
            let traffic_reps = (traffic_target / (2 * ws as u64)).max(1);
            for &fpe in &fpes {
                let fmas: i32 = if fpe == 1 { 0 } else { (fpe / 2) as i32 };
                // Enough sweeps for the traffic target, but no more than FLOP_CAP FLOPs per
                // launch: small sets run on few threads, and their high intensities would
                // otherwise take a second each.
                let flop_reps = (FLOP_CAP / (n as f64 * lanes * f64::from(fpe))).max(1.0) as u64;
                let reps = i32::try_from(traffic_reps.min(flop_reps)).unwrap_or(i32::MAX);
                let t = rig.time(name, |r| {
                    let mut l = r.stream.launch_builder(&f);
                    l.arg(&buf).arg(&n).arg(&reps).arg(&fmas);
                    let (a32, a64) = (1e-7f32, 1e-7f64);
                    if d == Datapath::Fp32 {
                        l.arg(&a32)
                    } else {
                        l.arg(&a64)
                    };
                    l.arg(&r.stamps);
                    // SAFETY: argument types and order match the ert kernels; `buf` holds at
                    // least `n` 16-byte vectors.
                    #[allow(unsafe_code)]
                    unsafe { l.launch(cfg) }.map(drop).map_err(launch_err(name))
                })?;
                let elements = f64::from(reps) * n as f64 * lanes;
                m.sweep.push(SweepPoint {
                    datapath: d,
                    working_set_bytes: ws as f64,
                    flops_per_element: f64::from(fpe),
                    flops: elements * f64::from(fpe),
                    bytes: f64::from(reps) * n as f64 * 32.0,
                    time_s: median(&t.times),
                });
                bar.inc(1);
            }
        }
    }
    // Plateaus of the FP32 sweep become "ERT" ceilings, beside the dedicated kernels'.
    let best = roofline_model::plateau::best_bandwidth_per_working_set(&m.sweep, Datapath::Fp32);
    let plateaus = roofline_model::plateau::detect(&best);
    for (level, p) in roofline_model::plateau::attribute(&plateaus, rig.l2_bytes as f64) {
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
fn describe(rig: &Rig, ordinal: usize) -> Result<Device, MachineError> {
    let attr = |a| {
        rig.ctx
            .attribute(a)
            .map_err(drv("reading a device attribute"))
    };
    let name = rig.ctx.name().map_err(drv("reading the device name"))?;
    let mut d = Device::new(format!("gpu{ordinal}"), name);
    d.compute_capability = Some(format!("{}.{}", rig.cc.0, rig.cc.1));
    d.sm_count = Some(rig.sms);
    d.sm_clock_hz = attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
        .ok()
        .filter(|k| *k > 0)
        .map(|k| f64::from(k) * 1e3);
    d.memory_clock_hz = attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
        .ok()
        .filter(|k| *k > 0)
        .map(|k| f64::from(k) * 1e3);
    d.memory_bus_width_bits = attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
        .ok()
        .and_then(|w| u32::try_from(w).ok())
        .filter(|w| *w > 0);
    d.memory_bytes = rig.ctx.total_mem().ok().map(|b| b as f64);
    d.l2_bytes = Some(rig.l2_bytes as f64).filter(|b| *b > 0.0);
    Ok(d)
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

fn driver_versions() -> (Option<String>, Option<String>) {
    let driver = std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .find(|w| {
                    w.chars().next().is_some_and(|c| c.is_ascii_digit())
                        && w.contains('.')
                        && w.len() >= 6
                })
                .map(str::to_owned)
        });
    let mut v = 0i32;
    // SAFETY: the driver library is loaded (a context exists) and `v` is a valid out pointer.
    #[allow(unsafe_code)]
    let ok = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }
        == cudarc::driver::sys::cudaError_enum::CUDA_SUCCESS;
    let cuda = ok.then(|| format!("{}.{}", v / 1000, (v % 1000) / 10));
    (driver, cuda)
}

/// Measures device `ordinal`. Never panics on a driver failure: the phases measured before a
/// failure are returned in a bundle marked incomplete, with the failure.
pub fn run(
    ordinal: usize,
    plan: Plan,
    provenance: roofline_model::bundle::Provenance,
) -> Result<Outcome, MachineError> {
    let started = Instant::now();
    let mut rig = Rig::new(ordinal, plan)?;
    let device = describe(&rig, ordinal)?;
    let mut bundle = Bundle::new(provenance);
    let (driver, cuda) = driver_versions();
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
    type Phase = fn(
        &mut Rig,
        &mut Machine,
        &mut Vec<Skipped>,
        &indicatif::ProgressBar,
    ) -> Result<(), MachineError>;
    let phases: [(&'static str, u64, Phase); 7] = [
        ("HBM", 1, |r, m, _, _| hbm(r, m)),
        ("L2", 1, |r, m, _, _| l2(r, m)),
        ("L1 and shared memory", 1, |r, m, _, _| l1_shared(r, m)),
        ("CUDA-core FMA peaks", 1, |r, m, s, _| fma(r, m, s)),
        ("Tensor Core mma.sync peaks", 1, |r, m, s, _| mma(r, m, s)),
        ("cuBLASLt reference GEMMs", 1, |r, m, s, _| {
            cublaslt(r, m, s)
        }),
        ("launch overhead", 1, |r, m, _, _| launch_overhead(r, m)),
    ];
    let mut failure = None;
    let overall = progress::bar(phases.len() as u64 + 1, "measuring");
    for (name, _, phase) in phases {
        overall.set_message(name);
        if let Err(e) = phase(&mut rig, &mut m, &mut skipped, &overall) {
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
        if let Err(e) = sweep(&mut rig, &mut m, &bar) {
            failure = Some(("ERT-style sweep", e));
        }
        bar.finish_and_clear();
    }
    let wall_s = started.elapsed().as_secs_f64();
    let failed = failure
        .as_ref()
        .map(|(phase, e)| format!("the {phase} phase failed: {e}"));
    let bundle = assemble(bundle, device, m, skipped, failed.as_deref(), wall_s);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_cover_the_ert_range() {
        let full = Plan { quick: false };
        let ws = full.sweep_working_sets();
        assert_eq!(ws.first(), Some(&(16 << 10)));
        assert_eq!(ws.last(), Some(&(2 << 30)));
        assert_eq!(
            full.sweep_flops_per_element(),
            [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        );
        let quick = Plan { quick: true };
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

    #[test]
    fn median_ignores_non_finite() {
        assert_eq!(median(&[3.0, f64::NAN, 1.0, 2.0]), 2.0);
        assert!(median(&[]).is_nan());
        assert_eq!(median(&[1.0, 2.0]), 1.5);
    }
}
