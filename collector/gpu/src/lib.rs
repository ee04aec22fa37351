//! The collector's GPU library: everything `roofline machine` and `roofline suite` do on a GPU,
//! and nothing that knows the command line. It tells its caller what it is doing through the
//! caller's [`Report`] (progress and messages: the CLI draws bars and writes standard error; a
//! test passes [`report::Silent`]), and stops a run when [`interrupt`] was asked to.
//!
//! - This file finds the CUDA driver and a GPU without panicking when there is none: cudarc
//!   loads `libcuda` at run time and panics if it is missing, so we ask first whether the
//!   library can be loaded, and only then call into the driver, whose errors come back as values.
//! - [`cudalibs`]: finding NVRTC, cuBLASLt and cuDNN where pip or a toolkit put them (the CLI's
//!   `main` calls it first for the GPU commands).
//! - [`compiled`]: the kernels of the catalogue (`roofline-kernels`: sources, entry points, work
//!   formulas, NVRTC, the SASS audit's refusals) compiled and loaded on a device.
//! - [`session`]: one timing session (context, stream, a ring of events, the SM clock stamps,
//!   the NVML sampler) that streams launches back to back and times them in intervals, and the
//!   one error type of GPU work, [`DeviceError`].
//! - [`launch`]: the typed launchers behind one trait, each with the work one launch does; the
//!   library's one unsafe kernel launch.
//! - [`timing`]: the timing plan (pure): warm-up, launches per interval, burst, settling and
//!   the sustained window of every ceiling.
//! - [`nvml`]: NVML loaded at run time, and the thread that samples the SM clock, power and
//!   clock-event reasons during every measurement.
//! - [`blaslt`] and [`dnn`]: safe wrappers over cudarc's raw cuBLASLt and cuDNN bindings.
//! - [`machine`] (the ceilings) and [`suite`] (the conv2d/LSTM/GEMM study) only describe what to
//!   measure (`#![forbid(unsafe_code)]`): their FLOPs and bytes come from the launchers' work.
//! - [`report`]: the [`Report`] and [`Progress`] traits the caller implements; [`interrupt`]:
//!   the SIGINT/SIGTERM flag the caller installs and the timing loops read.

// The library writes nothing to the standard streams: progress and messages go to the caller's
// `Report`.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod blaslt;
pub mod compiled;
pub mod cudalibs;
pub mod dnn;
pub mod interrupt;
pub mod launch;
pub mod machine;
pub mod nvml;
pub mod report;
pub mod session;
pub mod suite;
pub mod timing;

pub use report::{Progress, Report};
pub use session::{DeviceError, Measurement, Phase, Session};

use cudarc::driver::result as cu;

/// Why no GPU can be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuError {
    /// `libcuda.so.1` (or `nvcuda.dll`) is not installed or not on the loader path.
    #[error("no CUDA driver found (libcuda could not be loaded); is the NVIDIA driver installed?")]
    NoDriver,
    /// The driver loaded but reports no device.
    #[error("the CUDA driver found no GPU (check CUDA_VISIBLE_DEVICES and nvidia-smi)")]
    NoDevice,
    /// The driver works but NVRTC, which compiles our kernels, cannot be loaded.
    #[error(
        "NVRTC (libnvrtc.so) could not be loaded; {}",
        crate::cudalibs::INSTALL_HINT
    )]
    NoNvrtc,
    /// Any other driver error, with the driver's own message.
    #[error("CUDA driver error during {during}: {message}")]
    Driver {
        /// What we were doing.
        during: &'static str,
        /// The driver's message.
        message: String,
    },
}

/// Whether NVRTC, which compiles our kernels, can be loaded on this machine.
pub use roofline_kernels::nvrtc_present;

/// Whether the CUDA driver library can be loaded on this machine.
pub fn driver_present() -> bool {
    // SAFETY: `is_culib_present` only tries to dlopen the driver library by name and drops the
    // handle; it calls no CUDA function.
    #[allow(unsafe_code)]
    unsafe {
        cudarc::driver::sys::is_culib_present()
    }
}

/// Initializes the driver and returns the number of visible GPUs (at least one).
///
/// # Errors
/// [`GpuError::NoDriver`] without a driver, [`GpuError::NoDevice`] without a GPU, or the driver's
/// error.
pub fn probe() -> Result<usize, GpuError> {
    if !driver_present() {
        return Err(GpuError::NoDriver);
    }
    cu::init().map_err(|e| match e.0 {
        cudarc::driver::sys::cudaError_enum::CUDA_ERROR_NO_DEVICE => GpuError::NoDevice,
        _ => GpuError::Driver {
            during: "cuInit",
            message: e.to_string(),
        },
    })?;
    let n = cu::device::get_count().map_err(|e| GpuError::Driver {
        during: "cuDeviceGetCount",
        message: e.to_string(),
    })?;
    match usize::try_from(n) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(GpuError::NoDevice),
    }
}

/// What the driver says about one GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuIdentity {
    /// CUDA ordinal.
    pub ordinal: u32,
    /// Marketing name.
    pub name: String,
    /// Compute capability, `major.minor`.
    pub compute_capability: String,
}

/// The name and compute capability of the GPU with this CUDA ordinal.
///
/// # Errors
/// As [`probe`], or the driver's error for an ordinal out of range.
pub fn identify(ordinal: u32) -> Result<GpuIdentity, GpuError> {
    use cudarc::driver::sys::CUdevice_attribute as A;
    probe()?;
    let driver = |during: &'static str| {
        move |e: cudarc::driver::DriverError| GpuError::Driver {
            during,
            message: e.to_string(),
        }
    };
    let ord = i32::try_from(ordinal).map_err(|_| GpuError::NoDevice)?;
    let dev = cu::device::get(ord).map_err(driver("cuDeviceGet"))?;
    let name = cu::device::get_name(dev).map_err(driver("cuDeviceGetName"))?;
    // SAFETY: `dev` was returned by cuDeviceGet above.
    #[allow(unsafe_code)]
    let (major, minor) = unsafe {
        (
            cu::device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
                .map_err(driver("cuDeviceGetAttribute"))?,
            cu::device::get_attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
                .map_err(driver("cuDeviceGetAttribute"))?,
        )
    };
    Ok(GpuIdentity {
        ordinal,
        name,
        compute_capability: format!("{major}.{minor}"),
    })
}

/// The driver's version (from `/proc/driver/nvidia/version`, Linux) and the CUDA version the
/// driver supports (`cuDriverGetVersion`), when known. Call after a context exists.
pub fn driver_versions() -> (Option<String>, Option<String>) {
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

/// Whether `NVIDIA_TF32_OVERRIDE=0` is set: cuBLAS and cuDNN then use no TF32 (CUDA
/// environment variables), so their "TF32" work runs on CUDA cores.
pub fn tf32_disabled() -> bool {
    std::env::var("NVIDIA_TF32_OVERRIDE").is_ok_and(|v| v.trim() == "0")
}
