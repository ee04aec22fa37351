//! One timing session on one GPU: the context, its one stream, two timing events and the clock
//! stamps our kernels write, and the two ways runs are timed (a fixed warm-up and repeat count
//! for the microbenchmarks of `roofline machine`, an adaptive one for the study configurations of
//! `roofline suite`). Every time is a CUDA-event interval around one run (CUDA C Programming
//! Guide, "Events"); the SM clock during a kernel comes from its own `clock64`/`globaltimer`
//! stamps (`kernels/common.cuh`).

use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, DeviceRepr, DriverError, LaunchConfig,
    ValidAsZeroBits,
};
use roofline_model::stats::median;

use crate::gpu::kernels::{self, Compiled, KernelError, Source};

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

/// The SM clock a kernel observed, Hz, from its stamps: `[SM cycles, nanoseconds]` between its
/// first and last instruction in block 0, thread 0. `None` when the kernel wrote none.
pub fn clock_hz(stamps: [u64; 2]) -> Option<f64> {
    (stamps[0] > 0 && stamps[1] > 0).then(|| stamps[0] as f64 / stamps[1] as f64 * 1e9)
}

/// Repeated timings of one measurement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timing {
    /// Seconds per repeat (CUDA-event intervals).
    pub times: Vec<f64>,
    /// The SM clock each repeat's kernel observed, Hz (only repeats whose kernel stamps).
    pub clocks: Vec<f64>,
}

impl Timing {
    /// The median time, seconds (NaN when nothing was timed).
    pub fn median_s(&self) -> f64 {
        median(&self.times).unwrap_or(f64::NAN)
    }

    /// The median clock, Hz, when the kernel stamped one.
    pub fn clock(&self) -> Option<f64> {
        median(&self.clocks).filter(|c| *c > 0.0)
    }

    /// `amount / time` per repeat (a rate per second).
    pub fn rates(&self, amount: f64) -> Vec<f64> {
        self.times.iter().map(|t| amount / t).collect()
    }
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

/// One GPU, ready to time work on one stream.
pub struct Session {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    start: CudaEvent,
    end: CudaEvent,
    stamps: CudaSlice<u64>,
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
        Ok(Session {
            start: ctx.new_event(timing).map_err(driver("creating an event"))?,
            end: ctx.new_event(timing).map_err(driver("creating an event"))?,
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
        kernels::arch_name(self.cc.0, self.cc.1)
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
        Ok(kernels::compile(&self.ctx, source, &self.arch())?)
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
        let started = std::time::Instant::now();
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

    /// Runs `run` `warmup` times untimed (in the session's first timing, then on for at least
    /// [`FIRST_WARMUP`]), then `repeats` times each between two events,
    /// clearing the clock stamps before and reading them after each repeat.
    ///
    /// # Errors
    /// `run`'s error, or the driver's.
    pub fn time<E: From<DeviceError>>(
        &mut self,
        what: &str,
        warmup: usize,
        repeats: usize,
        mut run: impl FnMut(&Session) -> Result<(), E>,
    ) -> Result<Timing, E> {
        for _ in 0..warmup {
            run(self)?;
        }
        self.warm_up_once(what, &mut run)?;
        let mut t = Timing::default();
        for _ in 0..repeats {
            self.stream
                .memset_zeros(&mut self.stamps)
                .map_err(driver(format!("{what}: clearing the clock stamps")))?;
            t.times.push(self.interval(what, &mut run)?);
            let s = self
                .stream
                .clone_dtoh(&self.stamps)
                .map_err(driver(format!("{what}: reading the clock stamps")))?;
            if let [cycles, ns] = s[..] {
                t.clocks.extend(clock_hz([cycles, ns]));
            }
        }
        Ok(t)
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
        let t = Timing {
            times: vec![2.0, 1.0, 4.0],
            clocks: vec![],
        };
        assert_eq!(t.median_s(), 2.0);
        assert_eq!(t.clock(), None);
        assert_eq!(t.rates(8.0), [4.0, 8.0, 2.0]);
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
