//! The CUDA kernels, as typed assets: each source in `kernels/` embedded in the binary, listed in
//! [`Source`], and compiled by [`compile`] with NVRTC for the device's exact architecture.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::{CompileError, CompileOptions};

/// Helpers every source starts with (clock stamps, `KEEP`).
const COMMON: &str = include_str!("../../kernels/common.cuh");

/// One CUDA source file of `kernels/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// `bandwidth.cu`: HBM read/write/copy, L2, L1 and shared-memory reads.
    Bandwidth,
    /// `fma.cu`: CUDA-core FMA chains per precision, and the empty kernel.
    Fma,
    /// `mma.cu`: Tensor Core `mma.sync` loops per datapath.
    Mma,
    /// `ert.cu`: the ERT-style sweep kernel.
    Ert,
    /// `dl.cu`: our own direct convolutions and LSTM cell (`roofline suite`).
    Dl,
}

impl Source {
    /// Every source.
    pub const ALL: [Source; 5] = [
        Source::Bandwidth,
        Source::Fma,
        Source::Mma,
        Source::Ert,
        Source::Dl,
    ];

    /// The file name under `kernels/`.
    pub fn file(self) -> &'static str {
        match self {
            Source::Bandwidth => "bandwidth.cu",
            Source::Fma => "fma.cu",
            Source::Mma => "mma.cu",
            Source::Ert => "ert.cu",
            Source::Dl => "dl.cu",
        }
    }

    /// The CUDA C++ text, without the common prelude.
    pub fn text(self) -> &'static str {
        match self {
            Source::Bandwidth => include_str!("../../kernels/bandwidth.cu"),
            Source::Fma => include_str!("../../kernels/fma.cu"),
            Source::Mma => include_str!("../../kernels/mma.cu"),
            Source::Ert => include_str!("../../kernels/ert.cu"),
            Source::Dl => include_str!("../../kernels/dl.cu"),
        }
    }

    /// The `extern "C"` entry points the collector loads from it.
    pub fn entry_points(self) -> &'static [&'static str] {
        match self {
            Source::Bandwidth => &[
                "hbm_read",
                "hbm_write",
                "hbm_copy",
                "l2_read",
                "l1_read",
                "shared_read",
            ],
            Source::Fma => &["fma_f64", "fma_f32", "fma_f16x2", "fma_bf16x2", "empty"],
            Source::Mma => &[
                "mma_f16", "mma_bf16", "mma_tf32", "mma_fp8", "mma_int8", "mma_f64",
            ],
            Source::Ert => &["ert_f32", "ert_f64"],
            Source::Dl => &[
                "conv_fwd_f32",
                "conv_bwd_data_f32",
                "conv_bwd_filter_f32",
                "lstm_cell_f32",
                "conv_fwd_f16",
                "conv_bwd_data_f16",
                "conv_bwd_filter_f16",
                "lstm_cell_f16",
                "conv_fwd_bf16",
                "conv_bwd_data_bf16",
                "conv_bwd_filter_bf16",
                "lstm_cell_bf16",
                "igemm_fwd_f32",
                "igemm_bwd_data_f32",
                "igemm_bwd_filter_f32",
                "conv_sum_f32",
                "igemm_fwd_f16",
                "igemm_bwd_data_f16",
                "igemm_bwd_filter_f16",
                "conv_sum_f16",
                "igemm_fwd_bf16",
                "igemm_bwd_data_bf16",
                "igemm_bwd_filter_bf16",
                "conv_sum_bf16",
            ],
        }
    }

    /// The full text NVRTC compiles: the prelude, then the source.
    pub fn program(self) -> String {
        format!("{COMMON}\n{}", self.text())
    }
}

/// Why a kernel could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// NVRTC rejected the source; the log says where.
    #[error("NVRTC could not compile kernels/{file} for {arch}:\n{log}")]
    Compile {
        /// The source file.
        file: &'static str,
        /// `sm_XY`.
        arch: String,
        /// NVRTC's log.
        log: String,
    },
    /// NVRTC failed otherwise (library missing a symbol, out of memory).
    #[error("NVRTC failed on kernels/{file}: {message}")]
    Nvrtc {
        /// The source file.
        file: &'static str,
        /// What NVRTC said.
        message: String,
    },
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
    /// The entry point `name` (one of [`Source::entry_points`]).
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

/// Whether NVRTC can be loaded (cudarc panics on first use otherwise, so ask first).
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library by name.
    #[allow(unsafe_code)]
    unsafe {
        cudarc::nvrtc::sys::is_culib_present()
    }
}

/// `sm_XY` for a compute capability.
pub fn arch_name(major: i32, minor: i32) -> String {
    format!("sm_{major}{minor}")
}

/// Compiles one source with NVRTC for `arch` (`sm_90`) and loads it into `ctx`.
///
/// # Errors
/// [`KernelError::Compile`] with NVRTC's log, or the driver's error.
pub fn compile(
    ctx: &Arc<CudaContext>,
    source: Source,
    arch: &str,
) -> Result<Compiled, KernelError> {
    let opts = CompileOptions {
        options: vec![format!("--gpu-architecture={arch}"), "-std=c++17".into()],
        name: Some(source.file().into()),
        ..Default::default()
    };
    let ptx =
        cudarc::nvrtc::compile_ptx_with_opts(source.program(), opts).map_err(|e| match e {
            CompileError::CompileError { log, .. } => KernelError::Compile {
                file: source.file(),
                arch: arch.into(),
                log: log.to_string_lossy().into_owned(),
            },
            other => KernelError::Nvrtc {
                file: source.file(),
                message: format!("{other:?}"),
            },
        })?;
    let module = ctx.load_module(ptx).map_err(|e| KernelError::Load {
        file: source.file(),
        what: "the module".into(),
        source: e,
    })?;
    Ok(Compiled { source, module })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry point listed is defined (as `extern "C"`) in its source, and every
    /// `extern "C" __global__` in a source is listed.
    #[test]
    fn every_kernel_has_a_source_and_an_entry_point() {
        for s in Source::ALL {
            let text = s.text();
            assert!(!text.is_empty(), "{}", s.file());
            for name in s.entry_points() {
                // Defined by name, as a macro's first argument, or as `prefix_##SUFFIX` by a macro
                // instantiated with that suffix.
                let by_suffix = name.rsplit_once('_').is_some_and(|(prefix, suffix)| {
                    text.contains(&format!(" {prefix}_##SUFFIX("))
                        && text.contains(&format!("_KERNELS({suffix},"))
                });
                assert!(
                    text.contains(&format!(" {name}("))
                        || text.contains(&format!("({name},"))
                        || by_suffix,
                    "{} does not define {name}",
                    s.file()
                );
            }
            // Declarations made through macros name the kernel as the macro's first argument.
            for line in text.lines() {
                let line = line.trim_start();
                let declared =
                    if let Some(rest) = line.strip_prefix("extern \"C\" __global__ void ") {
                        // Past an optional `__launch_bounds__(…) `.
                        let rest = match rest.strip_prefix("__launch_bounds__(") {
                            Some(r) => r.split_once(") ").map_or(r, |(_, name)| name),
                            None => rest,
                        };
                        rest.split('(').next()
                    } else if let Some(rest) = line
                        .strip_prefix("MMA_F32_KERNEL(")
                        .or_else(|| line.strip_prefix("PACKED_FMA_KERNEL("))
                    {
                        rest.split(',').next()
                    } else {
                        None
                    };
                if let Some(name) = declared {
                    let name = name.trim();
                    if name != "NAME" && !name.ends_with("##SUFFIX") {
                        assert!(
                            s.entry_points().contains(&name),
                            "{} defines {name}, which Source::entry_points does not list",
                            s.file()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn program_starts_with_the_prelude() {
        for s in Source::ALL {
            let p = s.program();
            assert!(p.starts_with(COMMON));
            assert!(p.contains("STAMP_BEGIN"));
        }
        assert_eq!(arch_name(9, 0), "sm_90");
    }
}
