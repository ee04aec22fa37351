//! One timing session on one GPU: the context, its one stream, a ring of timing events, the
//! clock stamps our kernels write and, where NVML can be read, the thread sampling the board,
//! and the two ways runs are timed:
//!
//! - `roofline machine`'s ceilings ([`Session::measure`], [`Session::burst`]): launches
//!   streamed back to back, each interval N launches between two events of the ring behind one
//!   untimed lead launch, so that no host launch latency falls inside an interval; the warm-up,
//!   the burst, the settling and the sustained window of [`crate::timing`]'s plan;
//! - `roofline suite`'s configurations ([`Session::time_adaptive`]): one run between two
//!   events, an adaptive number of repeats.
//!
//! Times are CUDA-event intervals (CUDA C Programming Guide, "Events"); the SM clock during our
//! kernels comes from their own `clock64`/`globaltimer` stamps, summed over every launch between
//! two clearings (`kernels/common.cuh`), and from NVML for library kernels.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, DeviceRepr, DriverError, LaunchConfig,
    ValidAsZeroBits,
};
use roofline_kernels::Source;
use roofline_model::analysis::stats::median_or_nan;
use roofline_model::bundle::Telemetry;

use crate::compiled::{Compiled, KernelError};
use crate::nvml::{self, Nvml, Sampler};
use crate::timing::{BurstPlan, MeasurePlan, Settle, launches_for};

/// Why GPU work failed: a driver call, a kernel that could not be made ready, or a launch
/// whose arguments do not fit its kernel.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
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
    /// A launcher was given arguments its kernel cannot take (a buffer too small, a kernel of
    /// another family); nothing was launched.
    #[error("cannot launch {kernel}: {problem}")]
    Arguments {
        /// The entry point.
        kernel: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// SIGINT or SIGTERM arrived ([`crate::interrupt`]): the run stops here, keeping what it
    /// measured.
    #[error("interrupted (SIGINT or SIGTERM)")]
    Interrupted,
    /// A launch's grid is beyond CUDA's limits (a configuration too large for this kernel's
    /// geometry); nothing was launched.
    #[error(
        "cannot launch {kernel}: grid {grid:?} is beyond CUDA's limits (x < 2^31, y and z <= 65535, none 0)"
    )]
    GridLimits {
        /// The entry point.
        kernel: &'static str,
        /// The grid asked for.
        grid: (u32, u32, u32),
    },
}

impl DeviceError {
    /// Whether the driver ran out of device memory.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, DeviceError::Driver { source, .. }
            if source.0 == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY)
    }
}

/// Maps a driver error to [`DeviceError::Driver`] saying what we were doing.
pub fn driver(during: impl Into<String>) -> impl FnOnce(DriverError) -> DeviceError {
    let during = during.into();
    move |source| DeviceError::Driver { during, source }
}

/// A context's device's PCI bus id, `0000:01:00.0` (`cuDeviceGetPCIBusId`), to find it in NVML.
///
/// # Errors
/// The driver's error.
pub fn pci_bus_id(ctx: &CudaContext) -> Result<String, DeviceError> {
    let mut buf = [0 as std::ffi::c_char; 64];
    // SAFETY: the buffer holds 64 bytes, its length passed as such; the device is the context's
    // own.
    #[allow(unsafe_code)]
    unsafe {
        cudarc::driver::sys::cuDeviceGetPCIBusId(
            buf.as_mut_ptr(),
            buf.len() as i32,
            ctx.cu_device(),
        )
    }
    .result()
    .map_err(driver("reading the PCI bus id"))?;
    // SAFETY: the driver wrote a NUL-terminated string into `buf` (64 bytes, more than the 13 of
    // `dddd:bb:dd.f`).
    #[allow(unsafe_code)]
    let id = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    Ok(id.to_string_lossy().into_owned())
}

/// Whether CUDA lets `ctx`'s device read and write `peer`'s memory (`cuDeviceCanAccessPeer`).
///
/// # Errors
/// The driver's error.
pub fn can_access_peer(ctx: &CudaContext, peer: &CudaContext) -> Result<bool, DeviceError> {
    let mut can: std::ffi::c_int = 0;
    // SAFETY: `can` is a valid out-pointer; both devices are the driver's own.
    #[allow(unsafe_code)]
    unsafe {
        cudarc::driver::sys::cuDeviceCanAccessPeer(&mut can, ctx.cu_device(), peer.cu_device())
    }
    .result()
    .map_err(driver("cuDeviceCanAccessPeer"))?;
    Ok(can == 1)
}

/// Lets `ctx` access `peer`'s memory (`cuCtxEnablePeerAccess`; enabled already is no error),
/// leaving `ctx` bound to the thread.
///
/// # Errors
/// The driver's error.
pub fn enable_peer_access(ctx: &CudaContext, peer: &CudaContext) -> Result<(), DeviceError> {
    use cudarc::driver::sys::CUresult;
    ctx.bind_to_thread().map_err(driver("binding a context"))?;
    // SAFETY: `peer` is a live context; the flags must be 0 (the driver API's documentation).
    #[allow(unsafe_code)]
    let r = unsafe { cudarc::driver::sys::cuCtxEnablePeerAccess(peer.cu_ctx(), 0) };
    match r {
        CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(()),
        e => Err(driver("cuCtxEnablePeerAccess")(DriverError(e))),
    }
}

/// Two buffers of one size, one on a session's GPU and one on a peer GPU, for copies between
/// them ([`Session::peer_copy`]); both zeroed and waited for when made.
pub struct PeerBuffers {
    peer: Arc<CudaContext>,
    here: CudaSlice<u8>,
    there: CudaSlice<u8>,
    bytes: usize,
}

/// The SM clock a kernel observed, Hz, from its stamps: `[SM cycles, nanoseconds]` between its
/// first and last instruction in block 0, thread 0. `None` when the kernel wrote none.
pub fn clock_hz(stamps: [u64; 2]) -> Option<f64> {
    (stamps[0] > 0 && stamps[1] > 0).then(|| stamps[0] as f64 / stamps[1] as f64 * 1e9)
}

/// One phase of a measurement: intervals of `launches` back-to-back launches each.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Seconds per interval (CUDA events).
    pub intervals: Vec<f64>,
    /// Launches per interval.
    pub launches: u32,
    /// When the phase began and ended (host wall time), for the NVML samples of its window.
    pub wall: (Instant, Instant),
    /// The SM clock our kernels stamped over the phase (its lead launch included), Hz.
    pub clock_hz: Option<f64>,
}

impl Phase {
    /// `launches × work / interval` per interval: a rate per second for `work` per launch.
    pub fn rates(&self, work: f64) -> Vec<f64> {
        let per = f64::from(self.launches) * work;
        self.intervals.iter().map(|t| per / t).collect()
    }

    /// The median rate (NaN when nothing was timed).
    pub fn median_rate(&self, work: f64) -> f64 {
        median_or_nan(&self.rates(work))
    }

    /// The whole phase's rate: all its work over all its time.
    pub fn overall_rate(&self, work: f64) -> f64 {
        f64::from(self.launches) * work * self.intervals.len() as f64 / self.seconds()
    }

    /// Seconds of GPU time in all.
    pub fn seconds(&self) -> f64 {
        self.intervals.iter().sum()
    }

    /// The median interval, seconds (NaN when nothing was timed).
    pub fn median_s(&self) -> f64 {
        median_or_nan(&self.intervals)
    }
}

/// One ceiling timed by [`Session::measure`].
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The warm-up, seconds of GPU time.
    pub warmup_s: f64,
    /// One launch's time at the end of the warm-up, seconds.
    pub launch_s: f64,
    /// The burst.
    pub burst: Phase,
    /// Seconds streamed waiting for the rate to settle.
    pub settle_s: f64,
    /// Whether it settled before the plan's limit.
    pub settled: bool,
    /// The sustained window, when the plan asks for one.
    pub window: Option<Phase>,
}

/// How many timed repeats follow the first, timed, run of an adaptive schedule: runs under
/// `slow_s` seconds get one more (untimed) warm-up and `repeats`; slower ones `slow_repeats`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adaptive {
    /// Repeats of a fast run.
    pub repeats: usize,
    /// The first run's time, seconds, from which a run is slow.
    pub slow_s: f64,
    /// Repeats of a slow run.
    pub slow_repeats: usize,
}

impl Adaptive {
    /// `(extra warm-ups, repeats)` after a first run of `first_s` seconds.
    pub fn after(self, first_s: f64) -> (usize, usize) {
        if first_s < self.slow_s {
            (1, self.repeats)
        } else {
            (0, self.slow_repeats)
        }
    }
}

/// Whether NVML's latest SM clock is at least `fraction` of its maximum (`None`: unknown, no
/// sampler).
fn clock_near_max(sampler: Option<&Sampler>, fraction: f64) -> Option<bool> {
    let s = sampler?;
    let max = s.device().max_sm_clock_hz()?;
    let now = s.latest()?.sm_clock_hz?;
    Some(now >= fraction * max)
}

/// A phase's stop rule: once the intervals read add up to `seconds` (a running sum: a soak
/// reads tens of thousands of intervals).
fn at_least(seconds: f64) -> impl FnMut(&[f64]) -> bool {
    let (mut sum, mut seen) = (0.0, 0usize);
    move |done: &[f64]| {
        sum += done[seen.min(done.len())..].iter().sum::<f64>();
        seen = done.len();
        sum >= seconds
    }
}

/// One GPU, ready to time work on one stream.
pub struct Session {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    start: CudaEvent,
    end: CudaEvent,
    /// The events that bound the intervals of a phase, reused in turn.
    ring: Vec<CudaEvent>,
    stamps: CudaSlice<u64>,
    /// NVML's sampler, once [`Session::start_telemetry`] has started it.
    sampler: Option<Sampler>,
    /// Whether a measurement has warmed up yet (the first one warms up longer).
    measured: bool,
    ordinal: usize,
    name: String,
    cc: (i32, i32),
    sms: u32,
    l2_bytes: usize,
    /// Whether a timing has run yet: the first one warms the GPU up for [`FIRST_WARMUP`].
    warmed: std::sync::atomic::AtomicBool,
}

/// How long the first timing of a session keeps its warm-up launches going before it measures,
/// so that an idle GPU's clocks have ramped up (a fixed count of one or two millisecond-long
/// launches can end before they have); later timings follow on a busy GPU.
pub const FIRST_WARMUP: std::time::Duration = std::time::Duration::from_millis(200);

/// Events in the ring: at most `RING - 1` intervals are in flight.
const RING: usize = 8;

impl Session {
    /// Creates the context on device `ordinal`, one stream, two timing events and the stamp
    /// buffer, and reads the device's name, compute capability, SM count and L2 size. Compiles
    /// nothing (see [`Session::compile`]).
    ///
    /// # Errors
    /// The driver's error, saying which step failed.
    pub fn new(ordinal: usize) -> Result<Self, DeviceError> {
        let ctx = CudaContext::new(ordinal).map_err(driver("creating the CUDA context"))?;
        // One stream only: cudarc's cross-stream event tracking would add work to every launch.
        // SAFETY: every buffer of a session is used on its one stream, created below.
        #[allow(unsafe_code)]
        unsafe {
            ctx.disable_event_tracking();
        }
        let stream = ctx.new_stream().map_err(driver("creating a stream"))?;
        let attr = |a| {
            ctx.attribute(a)
                .map_err(driver("reading a device attribute"))
        };
        let sms = u32::try_from(attr(
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )?)
        .unwrap_or(1);
        let l2_bytes =
            usize::try_from(attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?)
                .unwrap_or(0);
        let cc = ctx
            .compute_capability()
            .map_err(driver("reading the compute capability"))?;
        let name = ctx.name().map_err(driver("reading the device name"))?;
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        // The ring's events block the waiting host thread rather than spin, leaving the CPU to
        // the NVML sampler.
        let blocking = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC);
        let ring = (0..RING)
            .map(|_| ctx.new_event(blocking).map_err(driver("creating an event")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Session {
            start: ctx.new_event(timing).map_err(driver("creating an event"))?,
            end: ctx.new_event(timing).map_err(driver("creating an event"))?,
            ring,
            sampler: None,
            measured: false,
            stamps: stream
                .alloc_zeros::<u64>(2)
                .map_err(driver("allocating the clock stamps"))?,
            ctx,
            stream,
            ordinal,
            name,
            cc,
            sms,
            l2_bytes,
            warmed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The one stream all work of the session goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The CUDA ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device's marketing name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.cc
    }

    /// `sm_XY`.
    pub fn arch(&self) -> String {
        roofline_kernels::arch_name(self.cc.0, self.cc.1)
    }

    /// Streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.sms
    }

    /// L2 capacity, bytes (0 if the driver does not say).
    pub fn l2_bytes(&self) -> usize {
        self.l2_bytes
    }

    /// A device attribute.
    ///
    /// # Errors
    /// The driver's error.
    pub fn attribute(&self, a: CUdevice_attribute) -> Result<i32, DeviceError> {
        self.ctx
            .attribute(a)
            .map_err(driver("reading a device attribute"))
    }

    /// Device memory, bytes, if the driver says.
    pub fn total_mem(&self) -> Option<usize> {
        self.ctx.total_mem().ok()
    }

    /// Compiles `source` for this device's architecture and loads it.
    ///
    /// # Errors
    /// NVRTC's log or the driver's error.
    pub fn compile(&self, source: Source) -> Result<Compiled, DeviceError> {
        Ok(crate::compiled::compile(&self.ctx, source, &self.arch())?)
    }

    /// A zero-filled buffer of `n` elements (at least one), on the session's stream.
    ///
    /// # Errors
    /// The driver's error (see [`DeviceError::is_out_of_memory`]), naming `what`.
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        n: usize,
        what: &str,
    ) -> Result<CudaSlice<T>, DeviceError> {
        self.stream
            .alloc_zeros::<T>(n.max(1))
            .map_err(driver(format!(
                "allocating {} MiB for {what}",
                (n * size_of::<T>()) >> 20
            )))
    }

    /// A zero-filled page-locked host buffer of `bytes` bytes (at least one), as `cudaMallocHost`
    /// makes it (no flags: not write-combined), for host↔device copies at the link's rate.
    ///
    /// # Errors
    /// The driver's error (page-locked memory is limited by the host), naming `what`.
    pub fn alloc_pinned(
        &self,
        bytes: usize,
        what: &str,
    ) -> Result<cudarc::driver::PinnedHostSlice<u8>, DeviceError> {
        let during = || {
            format!(
                "allocating {} MiB of page-locked host memory for {what}",
                bytes >> 20
            )
        };
        // SAFETY: the memory is written (zeros) before anything reads it.
        #[allow(unsafe_code)]
        let mut h = unsafe { self.ctx.alloc_pinned_with_flags::<u8>(bytes.max(1), 0) }
            .map_err(driver(during()))?;
        h.as_mut_slice().map_err(driver(during()))?.fill(0);
        Ok(h)
    }

    /// Waits for the stream.
    ///
    /// # Errors
    /// The driver's error (a kernel that failed), naming `what`.
    pub fn synchronize(&self, what: &str) -> Result<(), DeviceError> {
        self.stream.synchronize().map_err(driver(what.to_owned()))
    }

    /// A full-occupancy grid: `blocks_per_sm` blocks of `threads` per SM, `smem` bytes of
    /// dynamic shared memory each.
    pub fn grid(&self, blocks_per_sm: u32, threads: u32, smem: u32) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.sms * blocks_per_sm, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: smem,
        }
    }

    /// The clock stamps our kernels write (`stamps` argument of every microbenchmark).
    pub(crate) fn stamps(&self) -> &CudaSlice<u64> {
        &self.stamps
    }

    /// In the session's first timing only, keeps `run` going for at least [`FIRST_WARMUP`].
    fn warm_up_once<E: From<DeviceError>>(
        &self,
        what: &str,
        run: &mut impl FnMut(&Session) -> Result<(), E>,
    ) -> Result<(), E> {
        use std::sync::atomic::Ordering;
        if self.warmed.swap(true, Ordering::Relaxed) {
            return Ok(());
        }
        let started = Instant::now();
        while started.elapsed() < FIRST_WARMUP {
            run(self)?;
            self.stream
                .synchronize()
                .map_err(driver(format!("{what}: warming up")))?;
        }
        Ok(())
    }

    /// One CUDA-event interval around `run`, seconds.
    fn interval<E: From<DeviceError>>(
        &self,
        what: &str,
        run: &mut impl FnMut(&Session) -> Result<(), E>,
    ) -> Result<f64, E> {
        let fail = |during: &str| driver(format!("{what}: {during}"));
        self.start
            .record(&self.stream)
            .map_err(fail("recording an event"))?;
        run(self)?;
        self.end
            .record(&self.stream)
            .map_err(fail("recording an event"))?;
        self.end.synchronize().map_err(fail("running"))?;
        let ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(fail("reading the events"))?;
        Ok(f64::from(ms) / 1e3)
    }

    /// The device's PCI bus id, `0000:01:00.0` (`cuDeviceGetPCIBusId`), to find it in NVML.
    ///
    /// # Errors
    /// The driver's error.
    pub fn pci_bus_id(&self) -> Result<String, DeviceError> {
        pci_bus_id(&self.ctx)
    }

    /// Buffers of `bytes` here and on `peer` ([`PeerBuffers`]), this context bound again after.
    ///
    /// # Errors
    /// The driver's error (out of memory on either GPU, say).
    pub fn peer_buffers(
        &self,
        peer: &Arc<CudaContext>,
        bytes: usize,
    ) -> Result<PeerBuffers, DeviceError> {
        let here = self.alloc_zeros::<u8>(bytes, "the NVLink copies")?;
        let on_peer = peer.default_stream();
        let there = on_peer
            .alloc_zeros::<u8>(bytes.max(1))
            .map_err(driver(format!(
                "allocating {} MiB on the peer GPU",
                bytes >> 20
            )))?;
        on_peer
            .synchronize()
            .map_err(driver("zeroing the peer's buffer"))?;
        self.ctx
            .bind_to_thread()
            .map_err(driver("binding the context"))?;
        self.synchronize("zeroing the NVLink buffer")?;
        Ok(PeerBuffers {
            peer: Arc::clone(peer),
            here,
            there,
            bytes,
        })
    }

    /// Copies `b`'s buffer to the peer (`to_peer`) or back on the session's stream
    /// (`cuMemcpyPeerAsync`), enqueued only.
    ///
    /// # Errors
    /// The driver's error.
    pub fn peer_copy(&self, b: &PeerBuffers, to_peer: bool) -> Result<(), DeviceError> {
        use cudarc::driver::DevicePtr;
        let on_peer = b.peer.default_stream();
        let (here, _h) = b.here.device_ptr(&self.stream);
        let (there, _t) = b.there.device_ptr(&on_peer);
        let (ours, theirs) = (self.ctx.cu_ctx(), b.peer.cu_ctx());
        let (dst_ctx, dst, src_ctx, src) = if to_peer {
            (theirs, there, ours, here)
        } else {
            (ours, here, theirs, there)
        };
        // SAFETY: both buffers hold `b.bytes` bytes and live as long as `b`; both contexts are
        // live; the copy is ordered on the session's stream after the buffers were zeroed and
        // waited for (`peer_buffers`), and nothing else writes them.
        #[allow(unsafe_code)]
        unsafe {
            cudarc::driver::result::memcpy_peer_async(
                dst_ctx,
                dst,
                src_ctx,
                src,
                b.bytes,
                self.stream.cu_stream(),
            )
        }
        .map_err(driver("cuMemcpyPeerAsync"))
    }

    /// Starts sampling the board through NVML for the rest of the session.
    ///
    /// # Errors
    /// Why not, as a note for the bundle: NVML missing or failing, or the device not found.
    pub fn start_telemetry(&mut self) -> Result<(), String> {
        let bus = self.pci_bus_id().map_err(|e| e.to_string())?;
        let device = Nvml::load()
            .and_then(|n| n.device(&bus))
            .map_err(|e| e.to_string())?;
        self.sampler = Some(Sampler::start(device, nvml::PERIOD));
        Ok(())
    }

    /// NVML over a window of host wall time, when it is sampled.
    pub fn telemetry(&self, (from, to): (Instant, Instant)) -> Option<Telemetry> {
        self.sampler.as_ref()?.window(from, to)
    }

    /// The board's enforced power limit (NVML), W.
    pub fn power_limit_w(&self) -> Option<f64> {
        self.sampler.as_ref()?.device().power_limit_w()
    }

    /// Reads interval `k` of the ring (its end event waited for).
    fn read_interval(&self, what: &str, k: usize) -> Result<f64, DeviceError> {
        let (a, b) = (&self.ring[k % RING], &self.ring[(k + 1) % RING]);
        let ms = a
            .elapsed_ms(b)
            .map_err(driver(format!("{what}: running")))?;
        Ok(f64::from(ms) / 1e3)
    }

    /// One phase: optionally clears the clock stamps, makes one untimed lead launch, then
    /// enqueues intervals of `n` launches back to back between events of the ring (at most
    /// `RING - 1` in flight, reading finished ones as it goes) until `stop` says so given the
    /// intervals read, or `max` intervals were enqueued; then reads the rest.
    ///
    /// # Errors
    /// `run`'s error, or the driver's.
    fn phase<E: From<DeviceError>>(
        &mut self,
        what: &str,
        n: u32,
        max: usize,
        stamps: bool,
        mut stop: impl FnMut(&[f64]) -> bool,
        run: &mut impl FnMut(&Session) -> Result<(), E>,
    ) -> Result<Phase, E> {
        let fail = |during: &str| driver(format!("{what}: {during}"));
        let began = Instant::now();
        if stamps {
            self.stream
                .memset_zeros(&mut self.stamps)
                .map_err(fail("clearing the clock stamps"))?;
        }
        run(self)?;
        self.ring[0]
            .record(&self.stream)
            .map_err(fail("recording an event"))?;
        let mut enqueued = 0usize;
        let mut done: Vec<f64> = Vec::new();
        loop {
            if crate::interrupt::requested() {
                // Drain what is in flight, then stop.
                let _ = self.stream.synchronize();
                return Err(DeviceError::Interrupted.into());
            }
            // Boundary `enqueued + 1` reuses the slot of boundary `enqueued + 1 - RING`: every
            // interval using it must have been read.
            while enqueued + 1 >= RING && done.len() < enqueued + 2 - RING {
                done.push(self.read_interval(what, done.len())?);
            }
            for _ in 0..n {
                run(self)?;
            }
            enqueued += 1;
            self.ring[enqueued % RING]
                .record(&self.stream)
                .map_err(fail("recording an event"))?;
            // Read what has finished, without waiting, so that `stop` sees fresh intervals.
            while done.len() < enqueued
                && self.ring[(done.len() + 1) % RING]
                    .try_is_complete()
                    .map_err(fail("running"))?
            {
                done.push(self.read_interval(what, done.len())?);
            }
            if enqueued >= max || stop(&done) {
                break;
            }
        }
        while done.len() < enqueued {
            done.push(self.read_interval(what, done.len())?);
        }
        let clock_hz = if stamps {
            let s = self
                .stream
                .clone_dtoh(&self.stamps)
                .map_err(fail("reading the clock stamps"))?;
            match s[..] {
                [cycles, ns] => clock_hz([cycles, ns]),
                _ => None,
            }
        } else {
            None
        };
        Ok(Phase {
            intervals: done,
            launches: n,
            wall: (began, Instant::now()),
            clock_hz,
        })
    }

    /// Times `run` as one ceiling by `plan` ([`crate::timing`]): a warm-up of single
    /// launches back to back (the session's first one longer, and until NVML's SM clock nears
    /// its maximum), launches per interval from the last launches' median time, the burst, then
    /// (when the plan says) settling and the sustained window.
    ///
    /// # Errors
    /// `run`'s error, or the driver's.
    pub fn measure<E: From<DeviceError>>(
        &mut self,
        what: &str,
        plan: &MeasurePlan,
        mut run: impl FnMut(&Session) -> Result<(), E>,
    ) -> Result<Measurement, E> {
        let first = !std::mem::replace(&mut self.measured, true);
        let (least, most) = if first {
            (
                plan.first_warmup_s.max(plan.warmup_s),
                plan.first_warmup_max_s.max(plan.warmup_s),
            )
        } else {
            (plan.warmup_s, plan.warmup_s)
        };
        let fraction = plan.first_warmup_clock;
        // The sampler is lent to the warm-up's predicate while the phase holds the session.
        let sampler = self.sampler.take();
        let warm = self.phase(
            what,
            1,
            usize::MAX,
            false,
            |done| {
                let t: f64 = done.iter().sum();
                if t < least {
                    return false;
                }
                t >= most || !first || clock_near_max(sampler.as_ref(), fraction).unwrap_or(true)
            },
            &mut run,
        );
        self.sampler = sampler;
        let warm = warm?.intervals;
        let warmup_s: f64 = warm.iter().sum();
        let tail = &warm[warm.len().saturating_sub(5)..];
        let launch_s = median_or_nan(tail);
        let n = plan.launches_per_interval(launch_s);
        let burst = self.phase(
            what,
            n,
            plan.burst_intervals.max(1),
            true,
            |_| false,
            &mut run,
        )?;
        if !plan.sustained {
            return Ok(Measurement {
                warmup_s,
                launch_s,
                burst,
                settle_s: 0.0,
                settled: false,
                window: None,
            });
        }
        let mut settle = Settle::new(plan);
        let max_s = plan.settle_max_s;
        let launches = f64::from(n);
        let mut seen = 0usize;
        let settling = self.phase(
            what,
            n,
            usize::MAX,
            false,
            |done| {
                let mut settled = settle.settled();
                for &t in &done[seen..] {
                    settled = settle.push(t, launches);
                }
                seen = done.len();
                settled || settle.elapsed_s >= max_s
            },
            &mut run,
        )?;
        let settled = settle.settled();
        let window_s = plan.window_s;
        let window = self.phase(what, n, usize::MAX, true, at_least(window_s), &mut run)?;
        Ok(Measurement {
            warmup_s,
            launch_s,
            burst,
            settle_s: settling.seconds(),
            settled,
            window: Some(window),
        })
    }

    /// Times `run` as a burst only: `plan.warmup_s` seconds of single launches back to back
    /// (none for the sweep), then one launch timed (behind its own lead) to plan the launches
    /// per interval (`⌈interval_min_s / launch⌉ ≤ max_launches`), then `intervals` intervals, by
    /// `plan` (its `untimed` calls are the caller's). For the sweep's points and the GEMM
    /// candidates. Returns the launch's time and the phase.
    ///
    /// # Errors
    /// `run`'s error, or the driver's.
    pub fn burst<E: From<DeviceError>>(
        &mut self,
        what: &str,
        plan: BurstPlan,
        mut run: impl FnMut(&Session) -> Result<(), E>,
    ) -> Result<(f64, Phase), E> {
        if plan.warmup_s > 0.0 {
            self.phase(
                what,
                1,
                usize::MAX,
                false,
                at_least(plan.warmup_s),
                &mut run,
            )?;
        }
        let one = self.phase(what, 1, 1, false, |_| true, &mut run)?;
        let launch_s = one.median_s();
        let n = launches_for(launch_s, plan.interval_min_s, plan.max_launches);
        let p = self.phase(what, n, plan.intervals.max(1), true, |_| false, &mut run)?;
        Ok((launch_s, p))
    }

    /// Runs `run` back to back, untimed but for its phase, for `seconds` of GPU time (a soak
    /// that brings the board to the temperature and power of a long run); the phase, for the
    /// NVML samples of its window.
    ///
    /// # Errors
    /// `run`'s error, or the driver's.
    pub fn soak<E: From<DeviceError>>(
        &mut self,
        what: &str,
        seconds: f64,
        mut run: impl FnMut(&Session) -> Result<(), E>,
    ) -> Result<Phase, E> {
        self.phase(what, 1, usize::MAX, false, at_least(seconds), &mut run)
    }

    /// Times `run` on an [`Adaptive`] schedule: one timed warm-up decides how many repeats
    /// follow (see [`Adaptive::after`]); the warm-ups' times are not kept. No clock stamps.
    ///
    /// # Errors
    /// `run`'s error, or the driver's.
    pub fn time_adaptive<E: From<DeviceError>>(
        &self,
        what: &str,
        schedule: Adaptive,
        mut run: impl FnMut(&Session) -> Result<(), E>,
    ) -> Result<Vec<f64>, E> {
        self.warm_up_once(what, &mut run)?;
        let first = self.interval(what, &mut run)?;
        let (warmups, repeats) = schedule.after(first);
        for _ in 0..warmups {
            self.interval(what, &mut run)?;
        }
        (0..repeats)
            .map(|_| self.interval(what, &mut run))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_come_from_the_stamps() {
        // 1.5e9 cycles in one second of globaltimer: 1.5 GHz.
        assert_eq!(clock_hz([1_500_000_000, 1_000_000_000]), Some(1.5e9));
        assert_eq!(clock_hz([0, 10]), None);
        assert_eq!(clock_hz([10, 0]), None);
    }

    /// A phase's rates count every launch of an interval: 4 launches of 2 units in 2, 1 and 4
    /// seconds; the overall rate is all work over all time.
    #[test]
    fn phase_rates_count_the_launches_per_interval() {
        let now = Instant::now();
        let p = Phase {
            intervals: vec![2.0, 1.0, 4.0],
            launches: 4,
            wall: (now, now),
            clock_hz: None,
        };
        assert_eq!(p.median_s(), 2.0);
        assert_eq!(p.rates(2.0), [4.0, 8.0, 2.0]);
        assert_eq!(p.median_rate(2.0), 4.0);
        assert_eq!(p.overall_rate(2.0), 24.0 / 7.0);
        assert_eq!(p.seconds(), 7.0);
    }

    /// The stop rule adds each interval once, however often it is asked.
    #[test]
    fn a_phase_stops_once_its_intervals_add_up() {
        let mut stop = at_least(1.0);
        assert!(!stop(&[0.25]));
        assert!(!stop(&[0.25, 0.25]));
        assert!(!stop(&[0.25, 0.25, 0.25]));
        assert!(stop(&[0.25, 0.25, 0.25, 0.25]));
        assert!(at_least(0.0)(&[]));
    }

    #[test]
    fn adaptive_schedules_give_slow_runs_fewer_repeats() {
        let s = Adaptive {
            repeats: 7,
            slow_s: 0.05,
            slow_repeats: 3,
        };
        assert_eq!(s.after(0.001), (1, 7));
        assert_eq!(s.after(0.05), (0, 3));
        assert_eq!(s.after(2.0), (0, 3));
    }
}
