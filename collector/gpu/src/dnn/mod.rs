//! cuDNN's raw API where cudarc's safe one falls short, in one small safe module per use, with
//! what they share here: the error type ([`DnnError`]), one [`DnnHandle`] per run (a cuDNN
//! handle bound to the session's stream), the owned raw descriptors, and the storage and math
//! types the suite sets for every cuDNN call.
//!
//! - [`conv`]: cuDNN's own convolution algorithm search (`cudnnFindConvolution*Algorithm`, the
//!   auto-tuning frameworks enable), which needs the raw descriptors that cudarc keeps private;
//!   the convolutions the suite times through cudarc's safe API ([`conv::CudnnConv`], whose
//!   launch is unsafe in cudarc); and the checked table of convolution algorithms
//!   ([`conv::ConvAlgo`]: cuDNN's enum values listed one by one, an unknown value an error).
//! - [`lstm`]: the LSTM through the v8 RNN API (`cudnnRNNForward`), one [`lstm::CudnnLstm`] per
//!   LSTM configuration.
//!
//! Both allocate their buffers zero-filled and say which ones cuDNN reads
//! ([`conv::CudnnConv::fill_inputs`], [`lstm::CudnnLstm::inputs`]): the suite writes bounded
//! random data there before timing (zeros toggle no bits, and a power-limited GPU runs faster
//! on them).

use std::ptr;
use std::sync::Arc;

use cudarc::cudnn::sys as dnn;
use cudarc::driver::{CudaStream, DriverError};
use roofline_model::analysis::dl::Precision;

pub mod conv;
pub mod lstm;

/// Why a cuDNN call of this module could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum DnnError {
    /// A cuDNN call returned an error status (an unsupported configuration among them).
    #[error("cuDNN {call} failed: {status:?}")]
    Call {
        /// The function.
        call: &'static str,
        /// cuDNN's status.
        status: dnn::cudnnStatus_t,
    },
    /// A device allocation failed.
    #[error("allocating {what} failed: {source}")]
    Alloc {
        /// Which buffer.
        what: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// The CUDA context could not be made current on this thread.
    #[error("making the CUDA context current for cuDNN failed: {0}")]
    Context(#[source] DriverError),
    /// A size does not fit cuDNN's 32-bit arguments.
    #[error("the LSTM's {0} does not fit in a 32-bit integer")]
    TooLarge(&'static str),
    /// cuDNN's safe-API convolution call refused the configuration.
    #[error("cuDNN refused it: {0:?}")]
    Refused(dnn::cudnnStatus_t),
    /// An algorithm needs more workspace than we give any.
    #[error("needs a {} MiB workspace (more than {} MiB)", bytes >> 20, limit >> 20)]
    Workspace {
        /// What it asked for.
        bytes: usize,
        /// The most we allocate.
        limit: usize,
    },
    /// cuDNN named a convolution algorithm that is not in our table.
    #[error(
        "cuDNN returned {direction} convolution algorithm {value}, which this build does not know"
    )]
    UnknownAlgorithm {
        /// The direction's key.
        direction: &'static str,
        /// cuDNN's enum value.
        value: u32,
    },
}

/// cuDNN 9's allocation failures: on the host (`CUDNN_STATUS_ALLOC_FAILED`, now an alias of
/// `..._HOST_ALLOCATION_FAILED`) and on the GPU (`..._DEVICE_ALLOCATION_FAILED`), per
/// `cudnn_graph.h`'s status list.
fn allocation_failed(status: dnn::cudnnStatus_t) -> bool {
    matches!(
        status,
        dnn::cudnnStatus_t::CUDNN_STATUS_ALLOC_FAILED
            | dnn::cudnnStatus_t::CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED
    )
}

impl DnnError {
    /// Whether the failure is the GPU running out of memory (then the configuration is skipped).
    pub fn is_out_of_memory(&self) -> bool {
        match self {
            DnnError::Alloc { source, .. } => {
                source.0 == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY
            }
            DnnError::Call { status, .. } | DnnError::Refused(status) => allocation_failed(*status),
            DnnError::Context(_)
            | DnnError::TooLarge(_)
            | DnnError::Workspace { .. }
            | DnnError::UnknownAlgorithm { .. } => false,
        }
    }
}

fn check(call: &'static str, status: dnn::cudnnStatus_t) -> Result<(), DnnError> {
    if status == dnn::cudnnStatus_t::CUDNN_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(DnnError::Call { call, status })
    }
}

fn int(what: &'static str, v: u64) -> Result<i32, DnnError> {
    i32::try_from(v).map_err(|_| DnnError::TooLarge(what))
}

/// The storage type of a precision.
fn data_type(p: Precision) -> dnn::cudnnDataType_t {
    match p {
        Precision::Fp32 => dnn::cudnnDataType_t::CUDNN_DATA_FLOAT,
        Precision::Fp16 => dnn::cudnnDataType_t::CUDNN_DATA_HALF,
        Precision::Bf16 => dnn::cudnnDataType_t::CUDNN_DATA_BFLOAT16,
    }
}

/// The math type for Tensor Cores on or off, as the suite sets it for every cuDNN call: FMA math
/// forbids Tensor Cores; FP32 data with Tensor Cores uses the default math (TF32 on Ampere and
/// later), FP16 and BF16 data use Tensor Core math.
pub fn math_type(p: Precision, tensor: bool) -> dnn::cudnnMathType_t {
    match (tensor, p) {
        (false, _) => dnn::cudnnMathType_t::CUDNN_FMA_MATH,
        (true, Precision::Fp32) => dnn::cudnnMathType_t::CUDNN_DEFAULT_MATH,
        (true, _) => dnn::cudnnMathType_t::CUDNN_TENSOR_OP_MATH,
    }
}

/// Whether libcudnn can be loaded (cudarc panics on first use otherwise, so ask first).
pub fn present() -> bool {
    // SAFETY: only tries to dlopen the library by name.
    #[allow(unsafe_code)]
    unsafe {
        dnn::is_culib_present()
    }
}
/// A cuDNN handle bound to one stream, for the raw API.
pub struct DnnHandle {
    raw: dnn::cudnnHandle_t,
    stream: Arc<CudaStream>,
}

impl DnnHandle {
    /// Creates a handle whose work goes to `stream`.
    ///
    /// # Errors
    /// cuDNN could not start (library missing, no device).
    pub fn new(stream: Arc<CudaStream>) -> Result<Self, DnnError> {
        stream
            .context()
            .bind_to_thread()
            .map_err(DnnError::Context)?;
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer; the handle is destroyed exactly once, on drop.
        #[allow(unsafe_code)]
        unsafe {
            check("cudnnCreate", dnn::cudnnCreate(&mut raw))?;
        }
        let handle = DnnHandle { raw, stream };
        // SAFETY: both the handle and the stream are live.
        #[allow(unsafe_code)]
        unsafe {
            check(
                "cudnnSetStream",
                dnn::cudnnSetStream(handle.raw, handle.stream.cu_stream() as dnn::cudaStream_t),
            )?;
        }
        Ok(handle)
    }
}

impl Drop for DnnHandle {
    fn drop(&mut self) {
        // SAFETY: created by cudnnCreate, destroyed once; an error here cannot be acted on.
        #[allow(unsafe_code)]
        unsafe {
            let _ = dnn::cudnnDestroy(self.raw);
        }
    }
}

/// Owns one raw cuDNN descriptor and destroys it on drop.
macro_rules! descriptor {
    ($name:ident, $raw:ty, $create:ident, $destroy:ident) => {
        struct $name($raw);

        impl $name {
            fn new() -> Result<Self, DnnError> {
                let mut raw = ptr::null_mut();
                // SAFETY: `raw` is a valid out-pointer.
                #[allow(unsafe_code)]
                unsafe {
                    check(stringify!($create), dnn::$create(&mut raw))?;
                }
                Ok($name(raw))
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: created above, destroyed once.
                #[allow(unsafe_code)]
                unsafe {
                    let _ = dnn::$destroy(self.0);
                }
            }
        }
    };
}

descriptor!(
    RnnDesc,
    dnn::cudnnRNNDescriptor_t,
    cudnnCreateRNNDescriptor,
    cudnnDestroyRNNDescriptor
);
descriptor!(
    DataDesc,
    dnn::cudnnRNNDataDescriptor_t,
    cudnnCreateRNNDataDescriptor,
    cudnnDestroyRNNDataDescriptor
);
descriptor!(
    TensorDesc,
    dnn::cudnnTensorDescriptor_t,
    cudnnCreateTensorDescriptor,
    cudnnDestroyTensorDescriptor
);
descriptor!(
    FilterDesc,
    dnn::cudnnFilterDescriptor_t,
    cudnnCreateFilterDescriptor,
    cudnnDestroyFilterDescriptor
);
descriptor!(
    ConvDesc,
    dnn::cudnnConvolutionDescriptor_t,
    cudnnCreateConvolutionDescriptor,
    cudnnDestroyConvolutionDescriptor
);
descriptor!(
    DropoutDesc,
    dnn::cudnnDropoutDescriptor_t,
    cudnnCreateDropoutDescriptor,
    cudnnDestroyDropoutDescriptor
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn math_and_data_types_follow_the_configuration() {
        assert_eq!(
            math_type(Precision::Fp16, false),
            dnn::cudnnMathType_t::CUDNN_FMA_MATH
        );
        assert_eq!(
            math_type(Precision::Bf16, true),
            dnn::cudnnMathType_t::CUDNN_TENSOR_OP_MATH
        );
        assert_eq!(
            data_type(Precision::Bf16),
            dnn::cudnnDataType_t::CUDNN_DATA_BFLOAT16
        );
    }

    #[test]
    fn sizes_beyond_32_bits_are_refused_by_name() {
        let e = int("batch", 1 << 40).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the LSTM's batch does not fit in a 32-bit integer"
        );
        assert!(!e.is_out_of_memory());
    }
}
