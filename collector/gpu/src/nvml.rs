//! NVML, loaded at run time like the CUDA libraries (no link-time dependency, no new crate
//! beyond `libloading`, which cudarc already brings): the SM clock, the board's power, its
//! energy counter, temperature and clock-event ("throttle") reasons, sampled by a thread during
//! every measurement of `roofline machine`. An absent or failing NVML is a note in the
//! bundle, never a failure.
//!
//! Signatures and constants from NVIDIA's `nvml.h` (NVML 13.3, as vendored by NVIDIA/go-nvml):
//! `nvmlInit_v2`, `nvmlShutdown`, `nvmlErrorString`, `nvmlDeviceGetHandleByPciBusId_v2`,
//! `nvmlDeviceGetClockInfo` / `nvmlDeviceGetMaxClockInfo` (`NVML_CLOCK_SM` = 1, MHz),
//! `nvmlDeviceGetPowerUsage` (mW; on Ampere and later other than GA100 a one-second average),
//! `nvmlDeviceGetTotalEnergyConsumption` (mJ since the driver loaded, Volta and later),
//! `nvmlDeviceGetEnforcedPowerLimit` (mW), `nvmlDeviceGetTemperature` (`NVML_TEMPERATURE_GPU` =
//! 0, °C), and `nvmlDeviceGetCurrentClocksEventReasons` (NVML 12.2 and later) or, on older
//! drivers, its former name `nvmlDeviceGetCurrentClocksThrottleReasons` (same bits). "NVML is
//! thread-safe so it is safe to make simultaneous NVML calls from multiple threads" (nvml.h):
//! the sampler thread calls it beside the timing thread.
//!
//! The CUDA device is matched to its NVML handle by PCI bus id, not by index: NVML's enumeration
//! order "may not correlate with other APIs, such as the CUDA device index" (nvml.h; the bugs of
//! HAMi-core #318 and cudnn-frontend #699 came from mixing the two under
//! `CUDA_VISIBLE_DEVICES`).

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_ulonglong, c_void};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use roofline_model::analysis::stats::median;
use roofline_model::bundle::{ClockEventReason, ClockEventShare, Spread, Telemetry};

/// The library's name on Linux (installed by the driver).
pub const LIBRARY: &str = "libnvidia-ml.so.1";

/// How often the sampler reads the board.
pub const PERIOD: Duration = Duration::from_millis(5);

/// Why NVML cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NvmlError {
    /// The library could not be loaded.
    #[error("{library} could not be loaded ({message})")]
    Missing {
        /// The name or path tried.
        library: String,
        /// The loader's message.
        message: String,
    },
    /// The library lacks a function every supported version has.
    #[error("NVML lacks {0}")]
    Symbol(&'static str),
    /// A call failed.
    #[error("{call} failed: {message} (NVML error {code})")]
    Call {
        /// The function.
        call: &'static str,
        /// `nvmlReturn_t`.
        code: i32,
        /// `nvmlErrorString`'s text.
        message: String,
    },
}

type Ret = c_int;
type Handle = *mut c_void;
type InitFn = unsafe extern "C" fn() -> Ret;
type ErrorStringFn = unsafe extern "C" fn(Ret) -> *const c_char;
type ByPciFn = unsafe extern "C" fn(*const c_char, *mut Handle) -> Ret;
type ClockFn = unsafe extern "C" fn(Handle, c_uint, *mut c_uint) -> Ret;
type UintFn = unsafe extern "C" fn(Handle, *mut c_uint) -> Ret;
type UllFn = unsafe extern "C" fn(Handle, *mut c_ulonglong) -> Ret;
type TemperatureFn = unsafe extern "C" fn(Handle, c_uint, *mut c_uint) -> Ret;
type P2pFn = unsafe extern "C" fn(Handle, Handle, c_int, *mut c_int) -> Ret;

const NVML_SUCCESS: Ret = 0;
const NVML_CLOCK_SM: c_uint = 1;
const NVML_TEMPERATURE_GPU: c_uint = 0;
/// `NVML_P2P_CAPS_INDEX_NVLINK` of `nvmlGpuP2PCapsIndex_t`.
const NVML_P2P_CAPS_INDEX_NVLINK: c_int = 2;
/// `NVML_P2P_STATUS_OK` of `nvmlGpuP2PStatus_t`.
const NVML_P2P_STATUS_OK: c_int = 0;

/// The functions used, resolved once.
struct Fns {
    shutdown: InitFn,
    error_string: ErrorStringFn,
    by_pci: ByPciFn,
    clock: ClockFn,
    max_clock: ClockFn,
    power: UintFn,
    power_limit: Option<UintFn>,
    energy: Option<UllFn>,
    reasons: Option<UllFn>,
    temperature: Option<TemperatureFn>,
    p2p_status: Option<P2pFn>,
}

/// `call`'s failure `code`, in NVML's words.
fn error_of(error_string: ErrorStringFn, call: &'static str, code: Ret) -> NvmlError {
    // SAFETY: `nvmlErrorString` returns a static, NUL-terminated string for any code (or null,
    // handled).
    #[allow(unsafe_code)]
    let message = unsafe {
        let p = error_string(code);
        if p.is_null() {
            "unknown".to_string()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    NvmlError::Call {
        call,
        code,
        message,
    }
}

/// NVML, loaded and initialised; shut down when the last handle goes.
pub struct Nvml {
    fns: Fns,
    // Kept alive for the function pointers above; dropped after `Drop::drop` has shut NVML down.
    _lib: libloading::Library,
}

/// Resolves `name` in `lib` as a `T` (a function pointer type), if exported.
fn symbol<T: Copy>(lib: &libloading::Library, name: &'static str) -> Option<T> {
    let c = CString::new(name).ok()?;
    // SAFETY: `T` is the function pointer type nvml.h declares for `name` (the callers pass the
    // matching type alias); the pointer is used only while `lib` is alive (held by `Nvml`).
    #[allow(unsafe_code)]
    unsafe {
        lib.get::<T>(c.as_bytes_with_nul()).ok().map(|s| *s)
    }
}

impl Nvml {
    /// Loads the driver's NVML ([`LIBRARY`]) and initialises it.
    ///
    /// # Errors
    /// The library missing, a function missing, or `nvmlInit_v2` failing (no driver).
    pub fn load() -> Result<Arc<Nvml>, NvmlError> {
        Self::open(LIBRARY)
    }

    /// Loads NVML from `path` (the tests' stand-in library) and initialises it.
    ///
    /// # Errors
    /// As [`Nvml::load`].
    pub fn load_from(path: &Path) -> Result<Arc<Nvml>, NvmlError> {
        Self::open(path.as_os_str())
    }

    fn open(name: impl AsRef<std::ffi::OsStr>) -> Result<Arc<Nvml>, NvmlError> {
        let library = name.as_ref().to_string_lossy().into_owned();
        // SAFETY: loading NVML runs its initialisers, which have no preconditions of ours; it is
        // NVIDIA's own library, as cudarc loads libcuda.
        #[allow(unsafe_code)]
        let lib =
            unsafe { libloading::Library::new(name.as_ref()) }.map_err(|e| NvmlError::Missing {
                library: library.clone(),
                message: e.to_string(),
            })?;
        let need = |n: &'static str| NvmlError::Symbol(n);
        let init: InitFn = symbol(&lib, "nvmlInit_v2").ok_or_else(|| need("nvmlInit_v2"))?;
        let fns = Fns {
            shutdown: symbol(&lib, "nvmlShutdown").ok_or_else(|| need("nvmlShutdown"))?,
            error_string: symbol(&lib, "nvmlErrorString").ok_or_else(|| need("nvmlErrorString"))?,
            by_pci: symbol(&lib, "nvmlDeviceGetHandleByPciBusId_v2")
                .ok_or_else(|| need("nvmlDeviceGetHandleByPciBusId_v2"))?,
            clock: symbol(&lib, "nvmlDeviceGetClockInfo")
                .ok_or_else(|| need("nvmlDeviceGetClockInfo"))?,
            max_clock: symbol(&lib, "nvmlDeviceGetMaxClockInfo")
                .ok_or_else(|| need("nvmlDeviceGetMaxClockInfo"))?,
            power: symbol(&lib, "nvmlDeviceGetPowerUsage")
                .ok_or_else(|| need("nvmlDeviceGetPowerUsage"))?,
            power_limit: symbol(&lib, "nvmlDeviceGetEnforcedPowerLimit"),
            energy: symbol(&lib, "nvmlDeviceGetTotalEnergyConsumption"),
            reasons: symbol(&lib, "nvmlDeviceGetCurrentClocksEventReasons")
                .or_else(|| symbol(&lib, "nvmlDeviceGetCurrentClocksThrottleReasons")),
            temperature: symbol(&lib, "nvmlDeviceGetTemperature"),
            p2p_status: symbol(&lib, "nvmlDeviceGetP2PStatus"),
        };
        // SAFETY: `nvmlInit_v2` takes no argument; it may be called once per `nvmlShutdown`
        // (reference counted by NVML).
        #[allow(unsafe_code)]
        let r = unsafe { init() };
        if r != NVML_SUCCESS {
            // Not initialised: no `Nvml` is made, so nothing shuts it down.
            return Err(error_of(fns.error_string, "nvmlInit_v2", r));
        }
        Ok(Arc::new(Nvml { fns, _lib: lib }))
    }

    fn error(&self, call: &'static str, code: Ret) -> NvmlError {
        error_of(self.fns.error_string, call, code)
    }

    /// The device at `bus_id` (`0000:01:00.0`, as `cuDeviceGetPCIBusId` writes it).
    ///
    /// # Errors
    /// NVML's, when no device has that bus id.
    pub fn device(self: &Arc<Self>, bus_id: &str) -> Result<NvmlDevice, NvmlError> {
        let c = CString::new(bus_id).map_err(|_| NvmlError::Call {
            call: "nvmlDeviceGetHandleByPciBusId_v2",
            code: 2,
            message: "the bus id holds a NUL byte".into(),
        })?;
        let mut h: Handle = std::ptr::null_mut();
        // SAFETY: `c` is NUL-terminated and outlives the call; `h` is a valid out-pointer.
        #[allow(unsafe_code)]
        let r = unsafe { (self.fns.by_pci)(c.as_ptr(), &mut h) };
        if r != NVML_SUCCESS {
            return Err(self.error("nvmlDeviceGetHandleByPciBusId_v2", r));
        }
        Ok(NvmlDevice {
            nvml: Arc::clone(self),
            handle: DeviceHandle(h),
        })
    }
}

impl Drop for Nvml {
    fn drop(&mut self) {
        // SAFETY: NVML was initialised (`open` returns an `Nvml` only then); one shutdown per
        // init. Its status is moot on teardown.
        #[allow(unsafe_code)]
        unsafe {
            let _ = (self.fns.shutdown)();
        }
    }
}

/// An NVML device handle: an opaque pointer NVML hands out and accepts from any thread.
#[derive(Clone, Copy)]
struct DeviceHandle(Handle);

// SAFETY: the handle is an opaque token NVML owns; NVML is thread-safe ("it is safe to make
// simultaneous NVML calls from multiple threads", nvml.h), so the sampler thread may use it.
#[allow(unsafe_code)]
unsafe impl Send for DeviceHandle {}
// SAFETY: as above; the handle is never written through.
#[allow(unsafe_code)]
unsafe impl Sync for DeviceHandle {}

/// One GPU as NVML knows it.
#[derive(Clone)]
pub struct NvmlDevice {
    nvml: Arc<Nvml>,
    handle: DeviceHandle,
}

/// One reading of the board.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// When it was taken.
    pub at: Instant,
    /// SM clock, Hz.
    pub sm_clock_hz: Option<f64>,
    /// Power draw, W.
    pub power_w: Option<f64>,
    /// The energy counter, J.
    pub energy_j: Option<f64>,
    /// Clock-event reason bits.
    pub reasons: Option<u64>,
    /// GPU temperature, °C.
    pub temperature_c: Option<f64>,
}

impl NvmlDevice {
    fn uint(&self, f: UintFn) -> Option<u32> {
        let mut v: c_uint = 0;
        // SAFETY: `f` is one of NVML's `(device, unsigned int*)` getters, the handle is NVML's,
        // `v` a valid out-pointer.
        #[allow(unsafe_code)]
        let r = unsafe { f(self.handle.0, &mut v) };
        (r == NVML_SUCCESS).then_some(v)
    }

    fn ull(&self, f: UllFn) -> Option<u64> {
        let mut v: c_ulonglong = 0;
        // SAFETY: `f` is one of NVML's `(device, unsigned long long*)` getters, the handle is
        // NVML's, `v` a valid out-pointer.
        #[allow(unsafe_code)]
        let r = unsafe { f(self.handle.0, &mut v) };
        (r == NVML_SUCCESS).then_some(v)
    }

    fn sm_clock(&self, f: ClockFn) -> Option<f64> {
        let mut v: c_uint = 0;
        // SAFETY: `f` is `nvmlDeviceGet(Max)ClockInfo(device, type, unsigned int*)`; the handle
        // is NVML's, `v` a valid out-pointer.
        #[allow(unsafe_code)]
        let r = unsafe { f(self.handle.0, NVML_CLOCK_SM, &mut v) };
        (r == NVML_SUCCESS && v > 0).then(|| f64::from(v) * 1e6)
    }

    /// The SM clock's maximum, Hz.
    pub fn max_sm_clock_hz(&self) -> Option<f64> {
        self.sm_clock(self.nvml.fns.max_clock)
    }

    /// Whether NVML says this GPU and `other` reach each other over NVLink
    /// (`nvmlDeviceGetP2PStatus` with `NVML_P2P_CAPS_INDEX_NVLINK`, status `NVML_P2P_STATUS_OK`).
    ///
    /// # Errors
    /// NVML lacking the function, or the call failing.
    pub fn nvlink_to(&self, other: &NvmlDevice) -> Result<bool, NvmlError> {
        let f = self
            .nvml
            .fns
            .p2p_status
            .ok_or(NvmlError::Symbol("nvmlDeviceGetP2PStatus"))?;
        let mut status: c_int = -1;
        // SAFETY: both handles came from this NVML's `nvmlDeviceGetHandleByPciBusId_v2`; the
        // status is a valid out-pointer.
        #[allow(unsafe_code)]
        let r = unsafe {
            f(
                self.handle.0,
                other.handle.0,
                NVML_P2P_CAPS_INDEX_NVLINK,
                &mut status,
            )
        };
        if r != NVML_SUCCESS {
            return Err(self.nvml.error("nvmlDeviceGetP2PStatus", r));
        }
        Ok(status == NVML_P2P_STATUS_OK)
    }

    /// The enforced power limit, W.
    pub fn power_limit_w(&self) -> Option<f64> {
        self.nvml
            .fns
            .power_limit
            .and_then(|f| self.uint(f))
            .map(|mw| f64::from(mw) / 1e3)
    }

    /// Reads the board once.
    pub fn sample(&self) -> Sample {
        let f = &self.nvml.fns;
        let temperature_c = f.temperature.and_then(|t| {
            let mut v: c_uint = 0;
            // SAFETY: `nvmlDeviceGetTemperature(device, sensor, unsigned int*)`; the handle is
            // NVML's, `v` a valid out-pointer.
            #[allow(unsafe_code)]
            let r = unsafe { t(self.handle.0, NVML_TEMPERATURE_GPU, &mut v) };
            (r == NVML_SUCCESS).then(|| f64::from(v))
        });
        Sample {
            at: Instant::now(),
            sm_clock_hz: self.sm_clock(f.clock),
            power_w: self.uint(f.power).map(|mw| f64::from(mw) / 1e3),
            energy_j: f.energy.and_then(|e| self.ull(e)).map(|mj| mj as f64 / 1e3),
            reasons: f.reasons.and_then(|r| self.ull(r)),
            temperature_c,
        }
    }
}

/// A thread reading the board every [`PERIOD`] until dropped.
pub struct Sampler {
    device: NvmlDevice,
    samples: Arc<Mutex<Vec<Sample>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Starts sampling `device` every `period`.
    pub fn start(device: NvmlDevice, period: Duration) -> Sampler {
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (device, samples, stop) = (device.clone(), Arc::clone(&samples), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("nvml-sampler".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let s = device.sample();
                        if let Ok(mut v) = samples.lock() {
                            v.push(s);
                        }
                        std::thread::sleep(period);
                    }
                })
                .ok()
        };
        Sampler {
            device,
            samples,
            stop,
            thread,
        }
    }

    /// The device sampled.
    pub fn device(&self) -> &NvmlDevice {
        &self.device
    }

    /// The latest sample, if any.
    pub fn latest(&self) -> Option<Sample> {
        self.samples.lock().ok()?.last().copied()
    }

    /// The samples taken between `from` and `to`, summarised; `None` when there is none.
    pub fn window(&self, from: Instant, to: Instant) -> Option<Telemetry> {
        let v = self.samples.lock().ok()?;
        let inside: Vec<Sample> = v
            .iter()
            .filter(|s| s.at >= from && s.at <= to)
            .copied()
            .collect();
        summarise(&inside, to.saturating_duration_since(from).as_secs_f64())
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Smallest, median and largest of the known values; `None` without any.
fn spread(values: impl Iterator<Item = Option<f64>>) -> Option<Spread> {
    let v: Vec<f64> = values.flatten().filter(|x| x.is_finite()).collect();
    let median = median(&v)?;
    Some(Spread {
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        median,
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// The reasons set in `bits`, one per documented bit, `Other` for any bit beyond them.
pub fn reasons(bits: u64) -> Vec<ClockEventReason> {
    let known: u64 = ClockEventReason::BITS.iter().map(|(_, b)| b).sum();
    let mut v: Vec<ClockEventReason> = ClockEventReason::BITS
        .iter()
        .filter(|(_, b)| bits & b != 0)
        .map(|(r, _)| *r)
        .collect();
    if bits & !known != 0 {
        v.push(ClockEventReason::Other);
    }
    v
}

/// A window's samples as the bundle records them: the spread of the SM clock and of the power,
/// the mean power from the energy counter (first to last sample), the hottest temperature, and
/// each clock-event reason with the fraction of samples it was set in. `None` without samples.
pub fn summarise(samples: &[Sample], window_s: f64) -> Option<Telemetry> {
    if samples.is_empty() {
        return None;
    }
    let energy: Vec<(Instant, f64)> = samples
        .iter()
        .filter_map(|s| Some((s.at, s.energy_j?)))
        .collect();
    let energy_power_w = match (energy.first(), energy.last()) {
        (Some((t0, e0)), Some((t1, e1))) => {
            let dt = t1.saturating_duration_since(*t0).as_secs_f64();
            (dt > 0.0 && e1 >= e0).then(|| (e1 - e0) / dt)
        }
        _ => None,
    };
    let with_reasons: Vec<u64> = samples.iter().filter_map(|s| s.reasons).collect();
    let mut clock_event_reasons: Vec<ClockEventShare> = Vec::new();
    if !with_reasons.is_empty() {
        let mut counts: std::collections::BTreeMap<ClockEventReason, u32> = Default::default();
        for &bits in &with_reasons {
            for r in reasons(bits) {
                *counts.entry(r).or_default() += 1;
            }
        }
        clock_event_reasons = counts
            .into_iter()
            .map(|(reason, n)| ClockEventShare {
                reason,
                fraction: f64::from(n) / with_reasons.len() as f64,
            })
            .collect();
    }
    Some(Telemetry {
        samples: u32::try_from(samples.len()).unwrap_or(u32::MAX),
        window_s,
        sm_clock_hz: spread(samples.iter().map(|s| s.sm_clock_hz)),
        power_w: spread(samples.iter().map(|s| s.power_w)),
        energy_power_w,
        temperature_c_max: samples
            .iter()
            .filter_map(|s| s.temperature_c)
            .reduce(f64::max),
        clock_event_reasons,
    })
}

/// The reasons that lowered the clock in a window (idle and display excluded), as
/// `sw_power_cap 85%, hw_thermal_slowdown 10%`; empty when none did.
pub fn throttle_text(t: &Telemetry) -> String {
    t.clock_event_reasons
        .iter()
        .filter(|s| s.reason.throttles())
        .map(|s| format!("{} {:.0}%", s.reason.key(), s.fraction * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// Builds a stand-in `libnvidia-ml.so.1` from `src` with the system C compiler: a test
    /// double of the driver's library (its figures are the test's own, never a GPU's).
    fn stand_in(dir: &Path, src: &str) -> std::path::PathBuf {
        let c = dir.join("nvml.c");
        std::fs::write(&c, src).unwrap();
        let so = dir.join("libnvidia-ml.so.1");
        let status = Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&so)
            .arg(&c)
            .status()
            .expect("a C compiler (cc) is needed to build the stand-in NVML");
        assert!(status.success());
        so
    }

    /// The stand-in: one device at bus 0000:01:00.0, SM clock 1755 MHz (max 1980), 650 W
    /// drawn, an energy counter that grows 650 J per second of calls, 60 °C, power cap and
    /// idle reasons set; `EVENT` selects which reasons function is exported.
    const STAND_IN: &str = r#"
#include <string.h>
#include <time.h>
typedef void *dev;
static int inits;
int nvmlInit_v2(void) { inits++; return 0; }
int nvmlShutdown(void) { inits--; return 0; }
const char *nvmlErrorString(int r) { return r == 6 ? "Not Found" : "Unknown Error"; }
static int one, two;
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, dev *d) {
  if (strcmp(bus, "0000:01:00.0") == 0) { *d = &one; return 0; }
  if (strcmp(bus, "0000:41:00.0") == 0) { *d = &two; return 0; }
  return 6; }
int nvmlDeviceGetP2PStatus(dev a, dev b, int index, int *status) {
  if (index != 2) return 2; *status = (a != b) ? 0 : 4; return 0; }
int nvmlDeviceGetClockInfo(dev d, unsigned t, unsigned *v) { (void)d; if (t != 1) return 2; *v = 1755; return 0; }
int nvmlDeviceGetMaxClockInfo(dev d, unsigned t, unsigned *v) { (void)d; if (t != 1) return 2; *v = 1980; return 0; }
int nvmlDeviceGetPowerUsage(dev d, unsigned *mw) { (void)d; *mw = 650000; return 0; }
int nvmlDeviceGetEnforcedPowerLimit(dev d, unsigned *mw) { (void)d; *mw = 700000; return 0; }
int nvmlDeviceGetTotalEnergyConsumption(dev d, unsigned long long *mj) { (void)d;
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  *mj = (unsigned long long)(t.tv_sec * 650000ull + t.tv_nsec / 1000000ull * 650ull); return 0; }
int nvmlDeviceGetTemperature(dev d, unsigned s, unsigned *c) { (void)d; (void)s; *c = 60; return 0; }
int EVENT(dev d, unsigned long long *r) { (void)d; *r = 0x4 | 0x1000; return 0; }
"#;

    #[test]
    fn the_sampling_path_reads_a_stand_in_nvml() {
        for event in [
            "nvmlDeviceGetCurrentClocksEventReasons",
            "nvmlDeviceGetCurrentClocksThrottleReasons",
        ] {
            let dir = tempfile::tempdir().unwrap();
            let so = stand_in(dir.path(), &STAND_IN.replace("EVENT", event));
            let nvml = Nvml::load_from(&so).unwrap();
            // Two GPUs joined by NVLink, as the stand-in says (the status asked for is NVLink's).
            let other = nvml.device("0000:41:00.0").unwrap();
            let dev = nvml.device("0000:01:00.0").unwrap();
            assert_eq!(dev.nvlink_to(&other), Ok(true));
            assert_eq!(dev.nvlink_to(&dev), Ok(false));
            let e = nvml.device("0000:02:00.0").err().unwrap();
            assert_eq!(
                e.to_string(),
                "nvmlDeviceGetHandleByPciBusId_v2 failed: Not Found (NVML error 6)"
            );
            let dev = nvml.device("0000:01:00.0").unwrap();
            assert_eq!(dev.max_sm_clock_hz(), Some(1.98e9));
            assert_eq!(dev.power_limit_w(), Some(700.0));
            let from = Instant::now();
            let sampler = Sampler::start(dev, Duration::from_millis(5));
            std::thread::sleep(Duration::from_millis(120));
            let to = Instant::now();
            let latest = sampler.latest().unwrap();
            assert_eq!(latest.sm_clock_hz, Some(1.755e9));
            assert_eq!(latest.temperature_c, Some(60.0));
            let t = sampler.window(from, to).unwrap();
            assert!(t.samples >= 5, "{t:?}");
            assert_eq!(t.sm_clock_hz.unwrap().median, 1.755e9);
            assert_eq!(t.power_w.unwrap().max, 650.0);
            let p = t.energy_power_w.unwrap();
            assert!((p - 650.0).abs() < 65.0, "{p}");
            assert_eq!(t.temperature_c_max, Some(60.0));
            let r: Vec<_> = t
                .clock_event_reasons
                .iter()
                .map(|s| (s.reason, s.fraction))
                .collect();
            assert_eq!(
                r,
                [
                    (ClockEventReason::SwPowerCap, 1.0),
                    (ClockEventReason::Other, 1.0)
                ],
                "{event}"
            );
            assert_eq!(throttle_text(&t), "sw_power_cap 100%, other 100%");
            // Nothing sampled before the window: no telemetry.
            assert_eq!(sampler.window(from, from), None);
        }
    }

    /// A driver whose NVML does not initialise: an error with NVML's own words, no panic.
    #[test]
    fn an_nvml_that_fails_to_initialise_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let so = stand_in(
            dir.path(),
            "int nvmlInit_v2(void) { return 9; }\n\
             int nvmlShutdown(void) { return 0; }\n\
             const char *nvmlErrorString(int r) { (void)r; return \"Driver Not Loaded\"; }\n\
             int nvmlDeviceGetHandleByPciBusId_v2(const char *b, void **d) { (void)b; (void)d; return 0; }\n\
             int nvmlDeviceGetClockInfo(void *d, unsigned t, unsigned *v) { (void)d; (void)t; (void)v; return 0; }\n\
             int nvmlDeviceGetMaxClockInfo(void *d, unsigned t, unsigned *v) { (void)d; (void)t; (void)v; return 0; }\n\
             int nvmlDeviceGetPowerUsage(void *d, unsigned *v) { (void)d; (void)v; return 0; }\n",
        );
        let e = Nvml::load_from(&so).err().unwrap();
        assert_eq!(
            e.to_string(),
            "nvmlInit_v2 failed: Driver Not Loaded (NVML error 9)"
        );
        let missing = Nvml::load_from(&dir.path().join("absent.so"))
            .err()
            .unwrap();
        assert!(matches!(missing, NvmlError::Missing { .. }), "{missing}");
    }

    #[test]
    fn reason_bits_are_decoded() {
        assert_eq!(reasons(0), []);
        assert_eq!(
            reasons(0x4 | 0x40),
            [
                ClockEventReason::SwPowerCap,
                ClockEventReason::HwThermalSlowdown
            ]
        );
        assert_eq!(
            reasons(0x1 | 0x8000_0000),
            [ClockEventReason::GpuIdle, ClockEventReason::Other]
        );
        assert_eq!(summarise(&[], 1.0), None);
    }
}
