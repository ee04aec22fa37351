//! Our kernels on a device: a source of the catalogue compiled by NVRTC to machine code
//! ([`roofline_kernels::compile_cubin`]) and loaded into a context ([`compile`]), its entry points
//! looked up by name ([`Compiled::function`]).

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use roofline_kernels::{CompileError, Source, compile_cubin};

/// Why a kernel could not be made ready: NVRTC could not compile its source, or the driver could
/// not load it.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// NVRTC failed, with the source's file and NVRTC's log.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// The driver could not load the compiled module or find an entry point.
    #[error("the CUDA driver could not load {what} from kernels/{file}: {source}")]
    Load {
        /// The source file.
        file: &'static str,
        /// The module or the entry point.
        what: String,
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },
}

/// A compiled source with its entry points loaded.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The source.
    pub source: Source,
    module: Arc<CudaModule>,
}

impl Compiled {
    /// The entry point `name` (the [`roofline_kernels::Kernel::entry`] of one of the source's kernels).
    ///
    /// # Errors
    /// The driver's error, with the kernel's name.
    pub fn function(&self, name: &str) -> Result<CudaFunction, KernelError> {
        self.module
            .load_function(name)
            .map_err(|source| KernelError::Load {
                file: self.source.file(),
                what: format!("entry point {name}"),
                source,
            })
    }
}

/// Compiles one source with NVRTC for `arch` (`sm_90`) to machine code ([`compile_cubin`]) and
/// loads it into `ctx`.
///
/// # Errors
/// [`KernelError::Compile`] with NVRTC's log, or the driver's error.
pub fn compile(
    ctx: &Arc<CudaContext>,
    source: Source,
    arch: &str,
) -> Result<Compiled, KernelError> {
    let cubin = compile_cubin(source, arch)?;
    let module = ctx
        .load_module(Ptx::from_binary(cubin))
        .map_err(|e| KernelError::Load {
            file: source.file(),
            what: "the module".into(),
            source: e,
        })?;
    Ok(Compiled { source, module })
}
