//! Finding the CUDA driver and a GPU, without panicking when there is none.
//!
//! cudarc loads `libcuda` at run time and panics if it is missing, so we ask first whether the
//! library can be loaded, and only then call into the driver, whose errors come back as values.

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
    /// Any other driver error, with the driver's own message.
    #[error("CUDA driver error during {during}: {message}")]
    Driver {
        /// What we were doing.
        during: &'static str,
        /// The driver's message.
        message: String,
    },
}

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
