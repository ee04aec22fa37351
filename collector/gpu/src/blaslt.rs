//! A small safe wrapper over cudarc's raw cuBLASLt bindings: the GEMMs of `roofline suite`, and
//! `roofline machine`'s references, the library's best per Tensor Core datapath (a
//! few shapes, each with several of the heuristic's algorithms, the fastest kept with its shape
//! and algorithm recorded, as NVIDIA's own `LtSgemmSimpleAutoTuning` sample times the
//! heuristic's first 8 answers rather than trusting the first).
//!
//! cudarc's safe `Matmul` covers FP32/FP16/BF16 only; TF32, FP64, FP8 and INT8 need the compute
//! and data types set by hand (cuBLASLt documentation, `cublasLtMatmul`: FP8 and INT8 require
//! the "TN" layout, A transposed). Every GEMM here is TN: `D (M×N) = Aᵀ (M×K) · B (K×N)`,
//! column-major, `alpha = 1`, `beta = 0`; FLOPs = 2·M·N·K.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cublaslt::sys as lt;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DriverError};
use roofline_model::analysis::dl::Precision;
use roofline_model::bundle::{Datapath, GemmAlgorithm};

/// Why a cuBLASLt GEMM could not run.
#[derive(Debug, thiserror::Error)]
pub enum BlasLtError {
    /// The library is not installed or not on the loader path.
    #[error("libcublasLt could not be loaded; {}", crate::cudalibs::INSTALL_HINT)]
    Missing,
    /// A cuBLASLt call failed.
    #[error("cuBLASLt {call} failed for the {datapath} GEMM: {status:?}")]
    Call {
        /// The function.
        call: &'static str,
        /// The GEMM's label.
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

/// The types of a GEMM: operands, result, compute and scale, and what it is called in messages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    /// Name for messages and tags (`Tensor FP16`, `FP32 on CUDA cores`).
    pub label: &'static str,
    ab: lt::cudaDataType,
    cd: lt::cudaDataType,
    compute: lt::cublasComputeType_t,
    scale: lt::cudaDataType,
    ab_bytes: usize,
    cd_bytes: usize,
    /// FP8's fast accumulation (`CUBLASLT_MATMUL_DESC_FAST_ACCUM`): without it, Hopper's FP8
    /// GEMMs promote partial sums to FP32 every few steps and run below the datapath's rate;
    /// with it, as FP8 training recipes run their forward GEMMs, the reference shows what the
    /// library reaches.
    pub fast_accumulation: bool,
}

impl Spec {
    /// The reference GEMM of a Tensor Core datapath; `None` for CUDA-core datapaths.
    pub fn tensor(d: Datapath) -> Option<Spec> {
        use lt::cublasComputeType_t as C;
        use lt::cudaDataType as T;
        let (ab, cd, compute, scale, ab_bytes, cd_bytes) = match d {
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
        };
        Some(Spec {
            label: d.label(),
            ab,
            cd,
            compute,
            scale,
            ab_bytes,
            cd_bytes,
            fast_accumulation: d == Datapath::TensorFp8,
        })
    }

    /// A GEMM of the suite: operands and result in `p`; with `tensor`, Tensor Cores (TF32 for
    /// FP32), without, FP32 on CUDA cores. `None` for FP16/BF16 without Tensor Cores, which
    /// cuBLASLt does not offer.
    pub fn suite(p: Precision, tensor: bool, result_fp32: bool) -> Option<Spec> {
        use lt::cublasComputeType_t as C;
        use lt::cudaDataType as T;
        let (ab, ab_bytes, label) = match (p, tensor) {
            (Precision::Fp32, true) => (T::CUDA_R_32F, 4, "FP32 inputs on Tensor Cores (TF32)"),
            (Precision::Fp32, false) => (T::CUDA_R_32F, 4, "FP32 on CUDA cores"),
            (Precision::Fp16, true) => (T::CUDA_R_16F, 2, "FP16 on Tensor Cores"),
            (Precision::Bf16, true) => (T::CUDA_R_16BF, 2, "BF16 on Tensor Cores"),
            _ => return None,
        };
        let (cd, cd_bytes) = if result_fp32 {
            (T::CUDA_R_32F, 4)
        } else {
            (ab, ab_bytes)
        };
        let compute = if p == Precision::Fp32 && tensor {
            C::CUBLAS_COMPUTE_32F_FAST_TF32
        } else {
            C::CUBLAS_COMPUTE_32F
        };
        Some(Spec {
            label,
            ab,
            cd,
            compute,
            scale: T::CUDA_R_32F,
            ab_bytes,
            cd_bytes,
            fast_accumulation: false,
        })
    }
}

/// A ready GEMM of one type and size: handle, descriptors, the heuristic's algorithms (one of
/// them selected), matrices, workspace.
pub struct Gemm {
    spec: Spec,
    objects: Objects,
    algos: Vec<lt::cublasLtMatmulHeuristicResult_t>,
    selected: usize,
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

/// The workspace every GEMM may use, bytes: above the 32 MiB the cuBLAS documentation
/// recommends on Hopper (`cublasSetWorkspace`; PyTorch raised its default to it, pytorch#120925).
pub const WORKSPACE: usize = 64 << 20;

/// cuBLASLt's objects of one GEMM, each destroyed on drop when it was created: when the GEMM
/// goes, and when [`Gemm::new`] fails half-way (the suite skips many configurations that way).
struct Objects {
    handle: lt::cublasLtHandle_t,
    desc: lt::cublasLtMatmulDesc_t,
    layouts: [lt::cublasLtMatrixLayout_t; 3],
    pref: lt::cublasLtMatmulPreference_t,
}

impl Drop for Objects {
    fn drop(&mut self) {
        // SAFETY: each non-null pointer was created by cuBLASLt in `Gemm::new` and is destroyed
        // once, here; errors on teardown are moot.
        #[allow(unsafe_code)]
        unsafe {
            if !self.pref.is_null() {
                let _ = lt::cublasLtMatmulPreferenceDestroy(self.pref);
            }
            for l in self.layouts {
                if !l.is_null() {
                    let _ = lt::cublasLtMatrixLayoutDestroy(l);
                }
            }
            if !self.desc.is_null() {
                let _ = lt::cublasLtMatmulDescDestroy(self.desc);
            }
            if !self.handle.is_null() {
                let _ = lt::cublasLtDestroy(self.handle);
            }
        }
    }
}

/// cuBLASLt's `status` of `call` for the `datapath` GEMM, as a result.
fn check(
    status: lt::cublasStatus_t,
    call: &'static str,
    datapath: &'static str,
) -> Result<(), BlasLtError> {
    if status == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(BlasLtError::Call {
            call,
            datapath,
            status,
        })
    }
}

impl Gemm {
    /// Sets up an `m × n × k` GEMM of type `spec` (TN, column-major), matrices zeroed, with the
    /// heuristic's first algorithm.
    ///
    /// # Errors
    /// [`BlasLtError::Missing`] without the library; [`BlasLtError::NoAlgorithm`] when cuBLASLt
    /// has none for this type and size here; allocation or call failures.
    pub fn new(
        stream: &Arc<CudaStream>,
        spec: Spec,
        size: (u64, u64, u64),
    ) -> Result<Self, BlasLtError> {
        Self::with_algorithms(stream, spec, size, 1)
    }

    /// As [`Gemm::new`], keeping up to `max_algorithms` of the heuristic's answers (in its
    /// order; the first selected).
    ///
    /// # Errors
    /// As [`Gemm::new`].
    pub fn with_algorithms(
        stream: &Arc<CudaStream>,
        spec: Spec,
        (m, n, k): (u64, u64, u64),
        max_algorithms: usize,
    ) -> Result<Self, BlasLtError> {
        if !present() {
            return Err(BlasLtError::Missing);
        }
        let datapath = spec.label;
        let (ab, cd, compute, scale) = (spec.ab, spec.cd, spec.compute, spec.scale);
        let size = |a: u64, b: u64| usize::try_from(a * b).unwrap_or(usize::MAX);
        let alloc = |bytes: usize| {
            stream
                .alloc_zeros::<u8>(bytes.max(1))
                .map_err(|source| BlasLtError::Alloc { datapath, source })
        };
        let a = alloc(size(k, m) * spec.ab_bytes)?;
        let b = alloc(size(k, n) * spec.ab_bytes)?;
        let d = alloc(size(m, n) * spec.cd_bytes)?;
        let workspace = alloc(WORKSPACE)?;
        let mut o = Objects {
            handle: std::ptr::null_mut(),
            desc: std::ptr::null_mut(),
            layouts: [std::ptr::null_mut(); 3],
            pref: std::ptr::null_mut(),
        };
        // SAFETY: `o.handle` is a valid out-pointer for the new handle (the library is loaded:
        // `present` above).
        #[allow(unsafe_code)]
        let status = unsafe { lt::cublasLtCreate(&mut o.handle) };
        check(status, "cublasLtCreate", datapath)?;
        let version = {
            #[allow(unsafe_code)]
            // SAFETY: a plain query of the loaded library.
            unsafe {
                lt::cublasLtGetVersion()
            }
        };
        // SAFETY: `o.desc` is a valid out-pointer; `compute` and `scale` are enum values.
        #[allow(unsafe_code)]
        let status = unsafe { lt::cublasLtMatmulDescCreate(&mut o.desc, compute, scale) };
        check(status, "cublasLtMatmulDescCreate", datapath)?;
        let transa: i32 = 1; // CUBLAS_OP_T
        // SAFETY: `o.desc` was created above and is alive; the value points at an `i32` that
        // outlives the call, with its size, the attribute's type (cublasOperation_t).
        #[allow(unsafe_code)]
        let status = unsafe {
            lt::cublasLtMatmulDescSetAttribute(
                o.desc,
                lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                (&raw const transa).cast::<c_void>(),
                size_of::<i32>(),
            )
        };
        check(status, "cublasLtMatmulDescSetAttribute", datapath)?;
        if spec.fast_accumulation {
            let on: i8 = 1;
            // SAFETY: `o.desc` was created above and is alive; the value points at an `i8` that
            // outlives the call, with its size, the attribute's type.
            #[allow(unsafe_code)]
            let status = unsafe {
                lt::cublasLtMatmulDescSetAttribute(
                    o.desc,
                    lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                    (&raw const on).cast::<c_void>(),
                    size_of::<i8>(),
                )
            };
            check(status, "cublasLtMatmulDescSetAttribute", datapath)?;
        }
        let ld = |rows: u64| i64::try_from(rows).unwrap_or(i64::MAX);
        // A stored K×M (transposed in the product), B K×N, C and D M×N.
        for (i, (ty, rows, cols)) in [(ab, k, m), (ab, k, n), (cd, m, n)].into_iter().enumerate() {
            // SAFETY: `o.layouts[i]` is a valid out-pointer; the rest are plain values.
            #[allow(unsafe_code)]
            let status = unsafe {
                lt::cublasLtMatrixLayoutCreate(&mut o.layouts[i], ty, rows, cols, ld(rows))
            };
            check(status, "cublasLtMatrixLayoutCreate", datapath)?;
        }
        // SAFETY: `o.pref` is a valid out-pointer.
        #[allow(unsafe_code)]
        let status = unsafe { lt::cublasLtMatmulPreferenceCreate(&mut o.pref) };
        check(status, "cublasLtMatmulPreferenceCreate", datapath)?;
        let ws = WORKSPACE as u64;
        // SAFETY: `o.pref` was created above and is alive; the value points at a `u64` that
        // outlives the call, with its size, the attribute's type.
        #[allow(unsafe_code)]
        let status = unsafe {
            lt::cublasLtMatmulPreferenceSetAttribute(
                o.pref,
                lt::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&raw const ws).cast::<c_void>(),
                size_of::<u64>(),
            )
        };
        check(status, "cublasLtMatmulPreferenceSetAttribute", datapath)?;
        let wanted = max_algorithms.clamp(1, 64);
        #[allow(unsafe_code)]
        // SAFETY: zeroed is a valid bit pattern for this plain C struct; it is only read after
        // cuBLASLt has filled it.
        let zero: lt::cublasLtMatmulHeuristicResult_t = unsafe { std::mem::zeroed() };
        let mut heuristics = vec![zero; wanted];
        let mut found = 0i32;
        // SAFETY: the handle, descriptor, layouts and preference were created above and are
        // alive; `heuristics` has room for the `wanted` results asked for, `found` is a valid
        // out-pointer.
        #[allow(unsafe_code)]
        let status = unsafe {
            lt::cublasLtMatmulAlgoGetHeuristic(
                o.handle,
                o.desc,
                o.layouts[0],
                o.layouts[1],
                o.layouts[2],
                o.layouts[2],
                o.pref,
                i32::try_from(wanted).unwrap_or(1),
                heuristics.as_mut_ptr(),
                &mut found,
            )
        };
        check(status, "cublasLtMatmulAlgoGetHeuristic", datapath)?;
        heuristics.truncate(usize::try_from(found).unwrap_or(0));
        heuristics.retain(|h| h.state == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS);
        if heuristics.is_empty() {
            return Err(BlasLtError::NoAlgorithm(datapath));
        }
        Ok(Gemm {
            spec,
            objects: o,
            algos: heuristics,
            selected: 0,
            a,
            b,
            d,
            workspace,
            stream: Arc::clone(stream),
            size: (m, n, k),
            version,
        })
    }

    /// The A operand (stored K×M) and the result D (M×N), for kernels that feed one GEMM's
    /// output into the next one's input (the LSTM's step-by-step chain).
    pub fn a_and_d(&mut self) -> (&mut CudaSlice<u8>, &CudaSlice<u8>) {
        (&mut self.a, &self.d)
    }

    /// The A and B operands (stored K×M and K×N) and the bytes of values each holds
    /// (`values × ab_bytes`), for the caller to fill with real data.
    pub fn operands(&self) -> [(&CudaSlice<u8>, u64); 2] {
        let (m, n, k) = self.size;
        let ab_bytes = self.spec.ab_bytes as u64;
        [(&self.a, k * m * ab_bytes), (&self.b, k * n * ab_bytes)]
    }

    /// How many algorithms the heuristic gave.
    pub fn algorithms(&self) -> usize {
        self.algos.len()
    }

    /// Selects the heuristic's `i`-th algorithm (from 0) for the following launches; an index
    /// out of range keeps the current one.
    pub fn select(&mut self, i: usize) {
        if i < self.algos.len() {
            self.selected = i;
        }
    }

    /// The selected algorithm (see [`Gemm::select`]) as cuBLASLt describes it
    /// (`cublasLtMatmulAlgoConfigGetAttribute`). Always one the heuristic gave: it gave at least
    /// one ([`Gemm::with_algorithms`] fails otherwise) and `select` only takes indices in range.
    pub fn selected_algorithm(&self) -> GemmAlgorithm {
        use lt::cublasLtMatmulAlgoConfigAttributes_t as A;
        let i = self.selected;
        let h = &self.algos[i];
        let get = |attr: A, signed: bool| -> Option<i64> {
            let mut size = 0usize;
            // SAFETY: `h.algo` is an algorithm the heuristic returned, alive with this GEMM; a
            // size of 0 with a null buffer asks for the attribute's size only.
            #[allow(unsafe_code)]
            let status = unsafe {
                lt::cublasLtMatmulAlgoConfigGetAttribute(
                    &h.algo,
                    attr,
                    std::ptr::null_mut(),
                    0,
                    &mut size,
                )
            };
            if status != lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS || !(1..=8).contains(&size) {
                return None;
            }
            let mut buf = [0u8; 8];
            let mut written = 0usize;
            // SAFETY: `buf` holds 8 bytes, at least the attribute's `size`, passed exactly as
            // cuBLASLt requires.
            #[allow(unsafe_code)]
            let status = unsafe {
                lt::cublasLtMatmulAlgoConfigGetAttribute(
                    &h.algo,
                    attr,
                    buf.as_mut_ptr().cast::<c_void>(),
                    size,
                    &mut written,
                )
            };
            (status == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS)
                .then(|| attribute_value(&buf[..size], signed))
        };
        GemmAlgorithm {
            heuristic_rank: u32::try_from(i).unwrap_or(u32::MAX),
            id: get(A::CUBLASLT_ALGO_CONFIG_ID, true),
            tile: get(A::CUBLASLT_ALGO_CONFIG_TILE_ID, false),
            stages: get(A::CUBLASLT_ALGO_CONFIG_STAGES_ID, false),
            split_k: get(A::CUBLASLT_ALGO_CONFIG_SPLITK_NUM, true),
            reduction_scheme: get(A::CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, false),
            swizzle: get(A::CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, false),
            custom_option: get(A::CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, false),
            inner_shape: get(A::CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, false),
            cluster_shape: get(A::CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, false),
            workspace_bytes: h.workspaceSize as u64,
            waves: Some(f64::from(h.wavesCount)).filter(|w| w.is_finite() && *w > 0.0),
        }
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
        let (alpha, beta): (*const c_void, *const c_void) = match self.spec.scale {
            lt::cudaDataType::CUDA_R_32I => ((&raw const one_i).cast(), (&raw const zero_i).cast()),
            lt::cudaDataType::CUDA_R_64F => ((&raw const one_d).cast(), (&raw const zero_d).cast()),
            _ => ((&raw const one_f).cast(), (&raw const zero_f).cast()),
        };
        let stream = Arc::clone(&self.stream);
        let (a, _ga) = self.a.device_ptr(&stream);
        let (b, _gb) = self.b.device_ptr(&stream);
        let (d, _gd) = self.d.device_ptr_mut(&stream);
        let (w, _gw) = self.workspace.device_ptr_mut(&stream);
        let datapath = self.spec.label;
        // SAFETY: the handle, descriptor, layouts and algorithm belong to this GEMM and are
        // alive (`Objects` drops with it); A, B and D hold the sizes their layouts describe and
        // the workspace `WORKSPACE` bytes, their device pointers guarded by `_ga`…`_gw` for the
        // call; alpha and beta point at values of the scale type that outlive the call; the
        // stream is this GEMM's.
        #[allow(unsafe_code)]
        let status = unsafe {
            lt::cublasLtMatmul(
                self.objects.handle,
                self.objects.desc,
                alpha,
                a as *const c_void,
                self.objects.layouts[0],
                b as *const c_void,
                self.objects.layouts[1],
                beta,
                d as *const c_void,
                self.objects.layouts[2],
                d as *mut c_void,
                self.objects.layouts[2],
                &self.algos[self.selected].algo,
                w as *mut c_void,
                WORKSPACE,
                stream.cu_stream() as lt::cudaStream_t,
            )
        };
        check(status, "cublasLtMatmul", datapath)
    }
}

/// A cuBLASLt attribute's bytes (little-endian, 1 to 8 of them) as a number, sign-extended when
/// the attribute is a signed type.
fn attribute_value(bytes: &[u8], signed: bool) -> i64 {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    let raw = u64::from_le_bytes(b);
    let bits = 8 * bytes.len() as u32;
    if signed && bits < 64 && raw >> (bits - 1) & 1 == 1 {
        (raw | (u64::MAX << bits)) as i64
    } else {
        raw as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_read_at_their_width() {
        assert_eq!(attribute_value(&[5, 0, 0, 0], true), 5);
        assert_eq!(attribute_value(&[0xff, 0xff, 0xff, 0xff], true), -1);
        assert_eq!(
            attribute_value(&[0xff, 0xff, 0xff, 0xff], false),
            0xffff_ffff
        );
        assert_eq!(attribute_value(&[0x34, 0x12], false), 0x1234);
        assert_eq!(attribute_value(&[1, 0, 0, 0, 0, 0, 0, 0], true), 1);
    }
}
