//! A small safe wrapper over cudarc's raw cuBLASLt bindings: one large GEMM per Tensor Core
//! datapath, the library-achievable reference for our own `mma.sync` kernels.
//!
//! cudarc's safe `Matmul` covers FP32/FP16/BF16 only; TF32, FP64, FP8 and INT8 need the compute
//! and data types set by hand (cuBLASLt documentation, `cublasLtMatmul`: FP8 and INT8 require
//! the "TN" layout, A transposed). Every GEMM here is TN: `D (M×N) = Aᵀ (M×K) · B (K×N)`,
//! column-major, `alpha = 1`, `beta = 0`; FLOPs = 2·M·N·K.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cublaslt::sys as lt;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DriverError};
use roofline_model::bundle::Datapath;

/// Why a cuBLASLt GEMM could not run.
#[derive(Debug, thiserror::Error)]
pub enum BlasLtError {
    /// The library is not installed or not on the loader path.
    #[error("libcublasLt could not be loaded (add the CUDA toolkit's lib64 to LD_LIBRARY_PATH)")]
    Missing,
    /// A cuBLASLt call failed.
    #[error("cuBLASLt {call} failed for the {datapath} GEMM: {status:?}")]
    Call {
        /// The function.
        call: &'static str,
        /// The datapath's label.
        datapath: &'static str,
        /// cuBLASLt's status.
        status: lt::cublasStatus_t,
    },
    /// No algorithm for this datapath on this GPU (reported, then skipped).
    #[error("cuBLASLt offers no algorithm for the {0} GEMM on this GPU")]
    NoAlgorithm(&'static str),
    /// A device allocation failed.
    #[error("allocating the {datapath} GEMM's matrices failed: {source}")]
    Alloc {
        /// The datapath's label.
        datapath: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
}

/// Whether libcublasLt can be loaded.
pub fn present() -> bool {
    // SAFETY: only tries to dlopen the library by name.
    #[allow(unsafe_code)]
    unsafe {
        lt::is_culib_present()
    }
}

/// The types of one datapath's GEMM: (A/B type, C/D type, compute type, scale type, bytes of
/// A/B element, bytes of C/D element).
fn types(
    d: Datapath,
) -> Option<(
    lt::cudaDataType,
    lt::cudaDataType,
    lt::cublasComputeType_t,
    lt::cudaDataType,
    usize,
    usize,
)> {
    use lt::cublasComputeType_t as C;
    use lt::cudaDataType as T;
    Some(match d {
        Datapath::TensorFp16 => (
            T::CUDA_R_16F,
            T::CUDA_R_16F,
            C::CUBLAS_COMPUTE_32F,
            T::CUDA_R_32F,
            2,
            2,
        ),
        Datapath::TensorBf16 => (
            T::CUDA_R_16BF,
            T::CUDA_R_16BF,
            C::CUBLAS_COMPUTE_32F,
            T::CUDA_R_32F,
            2,
            2,
        ),
        Datapath::TensorTf32 => (
            T::CUDA_R_32F,
            T::CUDA_R_32F,
            C::CUBLAS_COMPUTE_32F_FAST_TF32,
            T::CUDA_R_32F,
            4,
            4,
        ),
        Datapath::TensorFp64 => (
            T::CUDA_R_64F,
            T::CUDA_R_64F,
            C::CUBLAS_COMPUTE_64F,
            T::CUDA_R_64F,
            8,
            8,
        ),
        Datapath::TensorFp8 => (
            T::CUDA_R_8F_E4M3,
            T::CUDA_R_16BF,
            C::CUBLAS_COMPUTE_32F,
            T::CUDA_R_32F,
            1,
            2,
        ),
        Datapath::TensorInt8 => (
            T::CUDA_R_8I,
            T::CUDA_R_32I,
            C::CUBLAS_COMPUTE_32I,
            T::CUDA_R_32I,
            1,
            4,
        ),
        _ => return None,
    })
}

/// A ready GEMM of one datapath and size: handle, descriptors, algorithm, matrices, workspace.
pub struct Gemm {
    datapath: Datapath,
    handle: lt::cublasLtHandle_t,
    desc: lt::cublasLtMatmulDesc_t,
    layouts: [lt::cublasLtMatrixLayout_t; 3],
    algo: lt::cublasLtMatmulAlgo_t,
    a: CudaSlice<u8>,
    b: CudaSlice<u8>,
    d: CudaSlice<u8>,
    workspace: CudaSlice<u8>,
    stream: Arc<CudaStream>,
    /// `(M, N, K)`.
    pub size: (u64, u64, u64),
    /// The cuBLASLt version the library reports.
    pub version: usize,
}

const WORKSPACE: usize = 64 << 20;

macro_rules! check {
    ($call:expr, $name:literal, $d:expr) => {
        // SAFETY (for every use): the handles and descriptors passed were created above and are
        // alive; pointers point at live buffers of the stated sizes.
        #[allow(unsafe_code)]
        let status = unsafe { $call };
        if status != lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(BlasLtError::Call {
                call: $name,
                datapath: $d.label(),
                status,
            });
        }
    };
}

impl Gemm {
    /// Sets up an `n × n × n` GEMM on `datapath` (a Tensor Core datapath), matrices zeroed.
    ///
    /// # Errors
    /// [`BlasLtError::Missing`] without the library; [`BlasLtError::NoAlgorithm`] when cuBLASLt
    /// has none for this datapath here; allocation or call failures.
    pub fn new(stream: &Arc<CudaStream>, datapath: Datapath, n: u64) -> Result<Self, BlasLtError> {
        if !present() {
            return Err(BlasLtError::Missing);
        }
        let (ab, cd, compute, scale, ab_bytes, cd_bytes) =
            types(datapath).ok_or(BlasLtError::NoAlgorithm(datapath.label()))?;
        let elems = usize::try_from(n * n).unwrap_or(usize::MAX);
        let alloc = |bytes: usize| {
            stream
                .alloc_zeros::<u8>(bytes)
                .map_err(|source| BlasLtError::Alloc {
                    datapath: datapath.label(),
                    source,
                })
        };
        let a = alloc(elems * ab_bytes)?;
        let b = alloc(elems * ab_bytes)?;
        let d = alloc(elems * cd_bytes)?;
        let workspace = alloc(WORKSPACE)?;
        let mut handle: lt::cublasLtHandle_t = std::ptr::null_mut();
        check!(lt::cublasLtCreate(&mut handle), "cublasLtCreate", datapath);
        let version = {
            #[allow(unsafe_code)]
            // SAFETY: a plain query of the loaded library.
            unsafe {
                lt::cublasLtGetVersion()
            }
        };
        let mut desc: lt::cublasLtMatmulDesc_t = std::ptr::null_mut();
        check!(
            lt::cublasLtMatmulDescCreate(&mut desc, compute, scale),
            "cublasLtMatmulDescCreate",
            datapath
        );
        let transa: i32 = 1; // CUBLAS_OP_T
        check!(
            lt::cublasLtMatmulDescSetAttribute(
                desc,
                lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                (&raw const transa).cast::<c_void>(),
                size_of::<i32>(),
            ),
            "cublasLtMatmulDescSetAttribute",
            datapath
        );
        let nn = i64::try_from(n).unwrap_or(i64::MAX);
        let mut layouts = [std::ptr::null_mut(); 3];
        for (i, ty) in [ab, ab, cd].into_iter().enumerate() {
            check!(
                lt::cublasLtMatrixLayoutCreate(&mut layouts[i], ty, n, n, nn),
                "cublasLtMatrixLayoutCreate",
                datapath
            );
        }
        let mut pref: lt::cublasLtMatmulPreference_t = std::ptr::null_mut();
        check!(
            lt::cublasLtMatmulPreferenceCreate(&mut pref),
            "cublasLtMatmulPreferenceCreate",
            datapath
        );
        let ws = WORKSPACE as u64;
        check!(
            lt::cublasLtMatmulPreferenceSetAttribute(
                pref,
                lt::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&raw const ws).cast::<c_void>(),
                size_of::<u64>(),
            ),
            "cublasLtMatmulPreferenceSetAttribute",
            datapath
        );
        #[allow(unsafe_code)]
        // SAFETY: zeroed is a valid bit pattern for this plain C struct; it is only read after
        // cuBLASLt has filled it.
        let mut heuristic: lt::cublasLtMatmulHeuristicResult_t = unsafe { std::mem::zeroed() };
        let mut found = 0i32;
        check!(
            lt::cublasLtMatmulAlgoGetHeuristic(
                handle,
                desc,
                layouts[0],
                layouts[1],
                layouts[2],
                layouts[2],
                pref,
                1,
                &mut heuristic,
                &mut found,
            ),
            "cublasLtMatmulAlgoGetHeuristic",
            datapath
        );
        check!(
            lt::cublasLtMatmulPreferenceDestroy(pref),
            "cublasLtMatmulPreferenceDestroy",
            datapath
        );
        if found == 0 || heuristic.state != lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(BlasLtError::NoAlgorithm(datapath.label()));
        }
        Ok(Gemm {
            datapath,
            handle,
            desc,
            layouts,
            algo: heuristic.algo,
            a,
            b,
            d,
            workspace,
            stream: Arc::clone(stream),
            size: (n, n, n),
            version,
        })
    }

    /// `2·M·N·K`.
    pub fn flops(&self) -> f64 {
        2.0 * self.size.0 as f64 * self.size.1 as f64 * self.size.2 as f64
    }

    /// Enqueues one GEMM on the stream.
    ///
    /// # Errors
    /// cuBLASLt's status.
    pub fn launch(&mut self) -> Result<(), BlasLtError> {
        // Alpha and beta in the scale type: i32 for INT8, f64 for FP64, f32 otherwise.
        let (one_f, zero_f) = (1.0f32, 0.0f32);
        let (one_d, zero_d) = (1.0f64, 0.0f64);
        let (one_i, zero_i) = (1i32, 0i32);
        let (alpha, beta): (*const c_void, *const c_void) = match self.datapath {
            Datapath::TensorInt8 => ((&raw const one_i).cast(), (&raw const zero_i).cast()),
            Datapath::TensorFp64 => ((&raw const one_d).cast(), (&raw const zero_d).cast()),
            _ => ((&raw const one_f).cast(), (&raw const zero_f).cast()),
        };
        let stream = Arc::clone(&self.stream);
        let (a, _ga) = self.a.device_ptr(&stream);
        let (b, _gb) = self.b.device_ptr(&stream);
        let (d, _gd) = self.d.device_ptr_mut(&stream);
        let (w, _gw) = self.workspace.device_ptr_mut(&stream);
        let datapath = self.datapath;
        check!(
            lt::cublasLtMatmul(
                self.handle,
                self.desc,
                alpha,
                a as *const c_void,
                self.layouts[0],
                b as *const c_void,
                self.layouts[1],
                beta,
                d as *const c_void,
                self.layouts[2],
                d as *mut c_void,
                self.layouts[2],
                &self.algo,
                w as *mut c_void,
                WORKSPACE,
                stream.cu_stream() as lt::cudaStream_t,
            ),
            "cublasLtMatmul",
            datapath
        );
        Ok(())
    }
}

impl Drop for Gemm {
    fn drop(&mut self) {
        // SAFETY: each was created in `new` and is destroyed once; errors on teardown are moot.
        #[allow(unsafe_code)]
        unsafe {
            for l in self.layouts {
                let _ = lt::cublasLtMatrixLayoutDestroy(l);
            }
            let _ = lt::cublasLtMatmulDescDestroy(self.desc);
            let _ = lt::cublasLtDestroy(self.handle);
        }
    }
}
