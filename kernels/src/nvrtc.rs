//! NVRTC: every source compiled for an architecture with the options every run uses, to PTX
//! and, for a real architecture, the CUBIN the collector loads and the SASS audit disassembles.
//! NVRTC is loaded at run time (cudarc's `dynamic-loading`); nothing here needs a driver or a GPU.

use cudarc::nvrtc::Ptx;

use crate::Source;

/// Why NVRTC could not compile a source.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
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

/// What one NVRTC compile of a source gives: its PTX and, for a real architecture (`sm_XY`),
/// the CUBIN NVRTC's own assembler makes from that PTX.
#[derive(Debug, Clone)]
pub struct NvrtcOutput {
    /// The PTX.
    pub ptx: Ptx,
    /// The machine code; `None` for a virtual architecture (`compute_XY`), which gives PTX only.
    pub cubin: Option<Vec<u8>>,
}

/// Compiles one source with NVRTC for `arch` (`sm_90`), with [`Source::options`]: the one place
/// the collector runs NVRTC. Needs NVRTC only (no driver, no GPU): the SASS audit calls it on a
/// machine without either, and checks its PTX (through `ptxas`) against its CUBIN.
///
/// # Errors
/// [`CompileError::Compile`] with NVRTC's log, or [`CompileError::Nvrtc`].
pub fn nvrtc_compile(source: Source, arch: &str) -> Result<NvrtcOutput, CompileError> {
    use cudarc::nvrtc::{result, sys};
    use std::ffi::{CStr, CString};
    /// Destroys the program on every path out (it refers to `src` and `name`, which outlive it).
    struct Program(sys::nvrtcProgram);
    impl Drop for Program {
        fn drop(&mut self) {
            // SAFETY: created by nvrtcCreateProgram in `nvrtc_compile`, destroyed once, here.
            #[allow(unsafe_code)]
            let _ = unsafe { result::destroy_program(self.0) };
        }
    }
    let failed = |what: &str, e: result::NvrtcError| CompileError::Nvrtc {
        file: source.file(),
        message: format!("{what}: {e:?}"),
    };
    let text = |what: &str, bytes: String| {
        CString::new(bytes).map_err(|_| CompileError::Nvrtc {
            file: source.file(),
            message: format!("{what} holds a NUL byte"),
        })
    };
    // NVRTC's strings (log, PTX) end in a NUL.
    let string = |raw: Vec<std::ffi::c_char>| {
        let bytes: Vec<u8> = raw.iter().map(|&c| c.to_ne_bytes()[0]).collect();
        CStr::from_bytes_until_nul(&bytes)
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).into_owned())
    };
    let src = text("the source", source.program())?;
    let name = text("the name", source.file().to_string())?;
    let prog = result::create_program(&src, Some(&name)).map_err(|e| failed("create", e))?;
    let prog = Program(prog);
    let options = source.options(arch);
    // SAFETY: `prog` is a live program (destroyed only when `Program` drops).
    #[allow(unsafe_code)]
    let compiled = unsafe { result::compile_program(prog.0, &options) };
    if let Err(e) = compiled {
        // SAFETY: as above.
        #[allow(unsafe_code)]
        let log = unsafe { result::get_program_log(prog.0) }
            .map(string)
            .ok()
            .filter(|log| !log.trim().is_empty())
            .unwrap_or_else(|| format!("{e:?} (NVRTC gave no log)"));
        return Err(CompileError::Compile {
            file: source.file(),
            arch: arch.into(),
            log,
        });
    }
    // SAFETY: as above.
    #[allow(unsafe_code)]
    let ptx = unsafe { result::get_ptx(prog.0) }.map_err(|e| failed("nvrtcGetPTX", e))?;
    let mut size = 0usize;
    // SAFETY: as above; `size` is a valid out-pointer.
    #[allow(unsafe_code)]
    unsafe { sys::nvrtcGetCUBINSize(prog.0, &raw mut size) }
        .result()
        .map_err(|e| failed("nvrtcGetCUBINSize", e))?;
    let cubin = if size == 0 {
        None
    } else {
        let mut cubin = vec![0u8; size];
        // SAFETY: as above; `cubin` holds the `size` bytes NVRTC said it needs.
        #[allow(unsafe_code)]
        unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) }
            .result()
            .map_err(|e| failed("nvrtcGetCUBIN", e))?;
        Some(cubin)
    };
    Ok(NvrtcOutput {
        ptx: Ptx::from_src(string(ptx)),
        cubin,
    })
}

/// Compiles one source to PTX with NVRTC for `arch` ([`nvrtc_compile`]'s PTX), for the test that
/// compares the launchers' parameters with the compiled entry points.
///
/// # Errors
/// As [`nvrtc_compile`].
pub fn compile_ptx(source: Source, arch: &str) -> Result<Ptx, CompileError> {
    Ok(nvrtc_compile(source, arch)?.ptx)
}

/// Compiles one source with NVRTC for `arch` (`sm_90`, a real architecture) to a CUBIN
/// ([`nvrtc_compile`]'s). The collector loads this, not the PTX, so that the driver's JIT
/// compiler plays no part: what runs is what the SASS audit disassembles (`roofline-sass-audit`
/// checks that NVRTC's CUBIN and `ptxas`'s agree), and an NVRTC newer than the driver cannot
/// fail the load with `CUDA_ERROR_UNSUPPORTED_PTX_VERSION` (CUDA's minor-version compatibility
/// covers machine code, not PTX: CUDA C++ Best Practices Guide, "Dynamic Code Generation"; CUDA
/// Compatibility, "Minor Version Compatibility"). Needs NVRTC only (no driver, no GPU).
///
/// # Errors
/// As [`nvrtc_compile`], and [`CompileError::Nvrtc`] for a virtual architecture (no CUBIN).
pub fn compile_cubin(source: Source, arch: &str) -> Result<Vec<u8>, CompileError> {
    nvrtc_compile(source, arch)?
        .cubin
        .ok_or_else(|| CompileError::Nvrtc {
            file: source.file(),
            message: format!("no CUBIN for {arch} (a virtual architecture gives PTX only)"),
        })
}
