//! cuDNN's raw API where cudarc's safe one falls short, in one small safe module: the LSTM through
//! the v8 RNN API (`cudnnRNNForward`), and cuDNN's own convolution algorithm search
//! (`cudnnFindConvolution*Algorithm`, the auto-tuning frameworks enable), which needs the raw
//! descriptors that cudarc keeps private.
//!
//! Also the cuDNN convolutions the suite times through cudarc's safe API ([`CudnnConv`], whose
//! launch is unsafe in cudarc), and the checked table of convolution algorithms ([`ConvAlgo`]:
//! cuDNN's enum values listed one by one, an unknown value an error).
//!
//! One [`DnnHandle`] per run; [`find_conv_algorithm`] per convolution configuration; one
//! [`CudnnLstm`] per LSTM configuration (a single-layer,
//! unidirectional LSTM with one input bias, packed sequence-major data, every sequence full
//! length), holding its descriptors and device buffers, all released on drop. The call
//! sequence follows the cuDNN API reference (`cudnnSetRNNDescriptor_v8`,
//! `cudnnSetRNNDataDescriptor`, `cudnnGetRNNWeightSpaceSize`, `cudnnGetRNNTempSpaceSizes`,
//! `cudnnBuildRNNDynamic` for the persistent-dynamic algorithm, `cudnnRNNForward`).

use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

use cudarc::cudnn::sys as dnn;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DriverError};
use roofline_model::dl::{Conv2d, Direction, Lstm, Precision};

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

/// cuDNN's RNN algorithms (`cudnnRNNAlgo_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algo {
    /// One GEMM for all inputs, then per-step kernels.
    Standard,
    /// Persistent kernel, weights kept on chip; compiled ahead of time.
    PersistStatic,
    /// Persistent kernel compiled at run time for the exact sizes (`cudnnBuildRNNDynamic`).
    PersistDynamic,
    /// Persistent kernel for small hidden sizes.
    PersistStaticSmallH,
}

impl Algo {
    /// Every algorithm, in enum order.
    pub const ALL: [Algo; 4] = [
        Algo::Standard,
        Algo::PersistStatic,
        Algo::PersistDynamic,
        Algo::PersistStaticSmallH,
    ];

    /// cuDNN's name without the `CUDNN_RNN_ALGO_` prefix.
    pub fn key(self) -> &'static str {
        match self {
            Algo::Standard => "STANDARD",
            Algo::PersistStatic => "PERSIST_STATIC",
            Algo::PersistDynamic => "PERSIST_DYNAMIC",
            Algo::PersistStaticSmallH => "PERSIST_STATIC_SMALL_H",
        }
    }

    fn raw(self) -> dnn::cudnnRNNAlgo_t {
        match self {
            Algo::Standard => dnn::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_STANDARD,
            Algo::PersistStatic => dnn::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_PERSIST_STATIC,
            Algo::PersistDynamic => dnn::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_PERSIST_DYNAMIC,
            Algo::PersistStaticSmallH => dnn::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H,
        }
    }
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

use dnn::cudnnConvolutionBwdDataAlgo_t as BwdData;
use dnn::cudnnConvolutionBwdFilterAlgo_t as BwdFilter;
use dnn::cudnnConvolutionFwdAlgo_t as Fwd;

/// cuDNN's forward convolution algorithms, each with its name (without the enum's prefix).
const FORWARD_ALGOS: [(Fwd, &str); 8] = [
    (
        Fwd::CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
        "IMPLICIT_GEMM",
    ),
    (
        Fwd::CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
        "IMPLICIT_PRECOMP_GEMM",
    ),
    (Fwd::CUDNN_CONVOLUTION_FWD_ALGO_GEMM, "GEMM"),
    (Fwd::CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, "DIRECT"),
    (Fwd::CUDNN_CONVOLUTION_FWD_ALGO_FFT, "FFT"),
    (Fwd::CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, "FFT_TILING"),
    (Fwd::CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, "WINOGRAD"),
    (
        Fwd::CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED,
        "WINOGRAD_NONFUSED",
    ),
];

/// cuDNN's backward-data convolution algorithms.
const BACKWARD_DATA_ALGOS: [(BwdData, &str); 6] = [
    (BwdData::CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, "ALGO_0"),
    (BwdData::CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "ALGO_1"),
    (BwdData::CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, "FFT"),
    (
        BwdData::CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING,
        "FFT_TILING",
    ),
    (
        BwdData::CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD,
        "WINOGRAD",
    ),
    (
        BwdData::CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED,
        "WINOGRAD_NONFUSED",
    ),
];

/// cuDNN's backward-filter convolution algorithms.
const BACKWARD_FILTER_ALGOS: [(BwdFilter, &str); 7] = [
    (BwdFilter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, "ALGO_0"),
    (BwdFilter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "ALGO_1"),
    (BwdFilter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, "FFT"),
    (BwdFilter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, "ALGO_3"),
    (
        BwdFilter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD,
        "WINOGRAD",
    ),
    (
        BwdFilter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED,
        "WINOGRAD_NONFUSED",
    ),
    (
        BwdFilter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING,
        "FFT_TILING",
    ),
];

/// One cuDNN convolution algorithm of one direction: a row of the direction's table, so only
/// values the table lists can exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvAlgo {
    direction: Direction,
    row: usize,
}

impl ConvAlgo {
    /// Every algorithm of a direction, in enum order.
    pub fn all(direction: Direction) -> Vec<ConvAlgo> {
        (0..Self::rows(direction))
            .map(|row| ConvAlgo { direction, row })
            .collect()
    }

    fn rows(direction: Direction) -> usize {
        match direction {
            Direction::Forward => FORWARD_ALGOS.len(),
            Direction::BackwardData => BACKWARD_DATA_ALGOS.len(),
            Direction::BackwardFilter => BACKWARD_FILTER_ALGOS.len(),
        }
    }

    /// The algorithm whose cuDNN enum value is `value` in `direction`.
    ///
    /// # Errors
    /// [`DnnError::UnknownAlgorithm`] for a value the table does not list.
    pub fn from_value(direction: Direction, value: u32) -> Result<ConvAlgo, DnnError> {
        let row = match direction {
            Direction::Forward => FORWARD_ALGOS.iter().position(|(a, _)| *a as u32 == value),
            Direction::BackwardData => BACKWARD_DATA_ALGOS
                .iter()
                .position(|(a, _)| *a as u32 == value),
            Direction::BackwardFilter => BACKWARD_FILTER_ALGOS
                .iter()
                .position(|(a, _)| *a as u32 == value),
        };
        row.map(|row| ConvAlgo { direction, row })
            .ok_or(DnnError::UnknownAlgorithm {
                direction: direction.key(),
                value,
            })
    }

    /// The direction.
    pub fn direction(self) -> Direction {
        self.direction
    }

    /// cuDNN's name without the `CUDNN_CONVOLUTION_*_ALGO_` prefix.
    pub fn name(self) -> &'static str {
        match self.direction {
            Direction::Forward => FORWARD_ALGOS[self.row].1,
            Direction::BackwardData => BACKWARD_DATA_ALGOS[self.row].1,
            Direction::BackwardFilter => BACKWARD_FILTER_ALGOS[self.row].1,
        }
    }

    /// cuDNN's enum value.
    pub fn value(self) -> u32 {
        match self.direction {
            Direction::Forward => FORWARD_ALGOS[self.row].0 as u32,
            Direction::BackwardData => BACKWARD_DATA_ALGOS[self.row].0 as u32,
            Direction::BackwardFilter => BACKWARD_FILTER_ALGOS[self.row].0 as u32,
        }
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

/// The algorithm cuDNN's own search picks for a convolution direction: the first entry of
/// `cudnnFindConvolution{Forward,BackwardData,BackwardFilter}Algorithm`'s results (which cuDNN
/// sorts by the time it measured) whose status is success, with the time cuDNN measured
/// (seconds). `None` when no algorithm ran.
///
/// The search runs every algorithm once on buffers it allocates itself. NHWC tensors, KRSC
/// filters, cross-correlation, FP32 compute, the math type as the suite sets it.
///
/// # Errors
/// cuDNN refused the descriptors or the search.
pub fn find_conv_algorithm(
    handle: &DnnHandle,
    c: &Conv2d,
    dir: Direction,
    p: Precision,
    tensor: bool,
) -> Result<Option<(ConvAlgo, f64)>, DnnError> {
    let dt = data_type(p);
    let nhwc = dnn::cudnnTensorFormat_t::CUDNN_TENSOR_NHWC;
    let x = TensorDesc::new()?;
    let y = TensorDesc::new()?;
    let w = FilterDesc::new()?;
    let conv = ConvDesc::new()?;
    let (n, ch, h, wd) = (
        int("batch", c.n)?,
        int("channels", c.c)?,
        int("height", c.h)?,
        int("width", c.w)?,
    );
    let (k, r, s) = (
        int("filters", c.k)?,
        int("filter height", c.r)?,
        int("filter width", c.s)?,
    );
    let (pp, q) = (int("output height", c.p())?, int("output width", c.q())?);
    let (pad, stride) = (int("padding", c.pad)?, int("stride", c.stride)?);
    // SAFETY: live descriptors; valid enums and positive sizes (cuDNN checks them and says so).
    #[allow(unsafe_code)]
    unsafe {
        check(
            "cudnnSetTensor4dDescriptor",
            dnn::cudnnSetTensor4dDescriptor(x.0, nhwc, dt, n, ch, h, wd),
        )?;
        check(
            "cudnnSetTensor4dDescriptor",
            dnn::cudnnSetTensor4dDescriptor(y.0, nhwc, dt, n, k, pp, q),
        )?;
        check(
            "cudnnSetFilter4dDescriptor",
            dnn::cudnnSetFilter4dDescriptor(w.0, dt, nhwc, k, ch, r, s),
        )?;
        check(
            "cudnnSetConvolution2dDescriptor",
            dnn::cudnnSetConvolution2dDescriptor(
                conv.0,
                pad,
                pad,
                stride,
                stride,
                1,
                1,
                dnn::cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION,
                dnn::cudnnDataType_t::CUDNN_DATA_FLOAT,
            ),
        )?;
        check(
            "cudnnSetConvolutionMathType",
            dnn::cudnnSetConvolutionMathType(conv.0, math_type(p, tensor)),
        )?;
    }
    // Each search returns at most COUNT results, sorted fastest first.
    macro_rules! search {
        ($call:ident, $perf:ty, $count:expr, $($desc:expr),+) => {{
            let mut perf: Vec<$perf> = Vec::with_capacity($count);
            let mut returned = 0;
            // SAFETY: `perf` has room for `$count` results and `returned` says how many were
            // written; the descriptors are live.
            #[allow(unsafe_code)]
            unsafe {
                check(
                    stringify!($call),
                    dnn::$call(
                        handle.raw,
                        $($desc),+,
                        $count as i32,
                        &mut returned,
                        perf.as_mut_ptr(),
                    ),
                )?;
                perf.set_len(usize::try_from(returned).unwrap_or(0).min($count));
            }
            perf.iter()
                .find(|r| r.status == dnn::cudnnStatus_t::CUDNN_STATUS_SUCCESS)
                .map(|r| (r.algo as u32, f64::from(r.time) / 1e3))
        }};
    }
    let found = match dir {
        Direction::Forward => search!(
            cudnnFindConvolutionForwardAlgorithm,
            dnn::cudnnConvolutionFwdAlgoPerf_t,
            dnn::cudnnConvolutionFwdAlgo_t::CUDNN_CONVOLUTION_FWD_ALGO_COUNT as usize,
            x.0,
            w.0,
            conv.0,
            y.0
        ),
        Direction::BackwardData => search!(
            cudnnFindConvolutionBackwardDataAlgorithm,
            dnn::cudnnConvolutionBwdDataAlgoPerf_t,
            dnn::cudnnConvolutionBwdDataAlgo_t::CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT as usize,
            w.0,
            y.0,
            conv.0,
            x.0
        ),
        Direction::BackwardFilter => search!(
            cudnnFindConvolutionBackwardFilterAlgorithm,
            dnn::cudnnConvolutionBwdFilterAlgoPerf_t,
            dnn::cudnnConvolutionBwdFilterAlgo_t::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT as usize,
            x.0,
            y.0,
            conv.0,
            w.0
        ),
    };
    found
        .map(|(value, s)| Ok((ConvAlgo::from_value(dir, value)?, s)))
        .transpose()
}

/// `auxFlags` of `cudnnSetRNNDescriptor_v8`: packed input and output, no padding
/// (`CUDNN_RNN_PADDED_IO_DISABLED`).
const PADDED_IO_DISABLED: u32 = 0;

fn alloc(
    stream: &Arc<CudaStream>,
    what: &'static str,
    bytes: usize,
) -> Result<CudaSlice<u8>, DnnError> {
    stream
        .alloc_zeros::<u8>(bytes.max(1))
        .map_err(|source| DnnError::Alloc { what, source })
}

/// A cuDNN LSTM ready to run forward (inference mode) over one sequence batch.
///
/// Device buffers are zero-filled: the values do not change the work an LSTM does.
pub struct CudnnLstm<'h> {
    handle: &'h DnnHandle,
    // Field order is drop order: descriptors go after the calls that use them are done.
    rnn: RnnDesc,
    _dropout: DropoutDesc,
    x_desc: DataDesc,
    y_desc: DataDesc,
    h_desc: TensorDesc,
    seq_lengths: CudaSlice<i32>,
    x: CudaSlice<u8>,
    y: CudaSlice<u8>,
    hx: CudaSlice<u8>,
    cx: CudaSlice<u8>,
    hy: CudaSlice<u8>,
    cy: CudaSlice<u8>,
    weights: CudaSlice<u8>,
    work: CudaSlice<u8>,
    _dropout_states: CudaSlice<u8>,
}

impl<'h> CudnnLstm<'h> {
    /// Sets up `l` with `algo` for storage precision `p`, FP32 arithmetic (`mathPrec`), Tensor
    /// Cores allowed or not.
    ///
    /// # Errors
    /// cuDNN refused the configuration ([`DnnError::Call`]), or memory ran out.
    pub fn new(
        handle: &'h DnnHandle,
        l: &Lstm,
        p: Precision,
        tensor: bool,
        algo: Algo,
    ) -> Result<Self, DnnError> {
        let stream = &handle.stream;
        let (batch, seq) = (int("batch", l.batch)?, int("time steps", l.seq)?);
        let (input, hidden) = (int("input size", l.input)?, int("hidden size", l.hidden)?);
        let dt = data_type(p);
        let elt = match p {
            Precision::Fp32 => 4usize,
            Precision::Fp16 | Precision::Bf16 => 2,
        };

        // Dropout descriptor (required by the v8 descriptor; a one-layer RNN applies none).
        let dropout = DropoutDesc::new()?;
        let mut states_size = 0usize;
        // SAFETY: live handle, valid out-pointer.
        #[allow(unsafe_code)]
        unsafe {
            check(
                "cudnnDropoutGetStatesSize",
                dnn::cudnnDropoutGetStatesSize(handle.raw, &mut states_size),
            )?;
        }
        let mut dropout_states = alloc(stream, "the LSTM's dropout states", states_size)?;
        {
            let (states, _g) = dropout_states.device_ptr_mut(stream);
            // SAFETY: `states` holds `states_size` bytes and outlives the descriptor.
            #[allow(unsafe_code)]
            unsafe {
                check(
                    "cudnnSetDropoutDescriptor",
                    dnn::cudnnSetDropoutDescriptor(
                        dropout.0,
                        handle.raw,
                        0.0,
                        states as *mut c_void,
                        states_size,
                        0,
                    ),
                )?;
            }
        }

        let rnn = RnnDesc::new()?;
        // SAFETY: live descriptors; every enum is a valid cuDNN value.
        #[allow(unsafe_code)]
        unsafe {
            check(
                "cudnnSetRNNDescriptor_v8",
                dnn::cudnnSetRNNDescriptor_v8(
                    rnn.0,
                    algo.raw(),
                    dnn::cudnnRNNMode_t::CUDNN_LSTM,
                    dnn::cudnnRNNBiasMode_t::CUDNN_RNN_SINGLE_INP_BIAS,
                    dnn::cudnnDirectionMode_t::CUDNN_UNIDIRECTIONAL,
                    dnn::cudnnRNNInputMode_t::CUDNN_LINEAR_INPUT,
                    dt,
                    dnn::cudnnDataType_t::CUDNN_DATA_FLOAT,
                    math_type(p, tensor),
                    input,
                    hidden,
                    hidden,
                    1,
                    dropout.0,
                    PADDED_IO_DISABLED,
                ),
            )?;
            if algo == Algo::PersistDynamic {
                check(
                    "cudnnBuildRNNDynamic",
                    dnn::cudnnBuildRNNDynamic(handle.raw, rnn.0, batch),
                )?;
            }
        }

        let lengths = vec![seq; l.batch as usize];
        let data = |vector: i32| -> Result<DataDesc, DnnError> {
            let d = DataDesc::new()?;
            // SAFETY: `lengths` holds `batch` entries; no padding fill for a packed layout.
            #[allow(unsafe_code)]
            unsafe {
                check(
                    "cudnnSetRNNDataDescriptor",
                    dnn::cudnnSetRNNDataDescriptor(
                        d.0,
                        dt,
                        dnn::cudnnRNNDataLayout_t::CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                        seq,
                        batch,
                        vector,
                        lengths.as_ptr(),
                        ptr::null_mut(),
                    ),
                )?;
            }
            Ok(d)
        };
        let x_desc = data(input)?;
        let y_desc = data(hidden)?;
        let h_desc = TensorDesc::new()?;
        let dims = [1, batch, hidden];
        let strides = [batch * hidden, hidden, 1];
        // SAFETY: three dimensions and strides, as `nbDims` says.
        #[allow(unsafe_code)]
        unsafe {
            check(
                "cudnnSetTensorNdDescriptor",
                dnn::cudnnSetTensorNdDescriptor(h_desc.0, dt, 3, dims.as_ptr(), strides.as_ptr()),
            )?;
        }

        let (mut weight_size, mut work_size, mut reserve_size) = (0usize, 0usize, 0usize);
        // SAFETY: live handle and descriptors, valid out-pointers.
        #[allow(unsafe_code)]
        unsafe {
            check(
                "cudnnGetRNNWeightSpaceSize",
                dnn::cudnnGetRNNWeightSpaceSize(handle.raw, rnn.0, &mut weight_size),
            )?;
            check(
                "cudnnGetRNNTempSpaceSizes",
                dnn::cudnnGetRNNTempSpaceSizes(
                    handle.raw,
                    rnn.0,
                    dnn::cudnnForwardMode_t::CUDNN_FWD_MODE_INFERENCE,
                    x_desc.0,
                    &mut work_size,
                    &mut reserve_size,
                ),
            )?;
        }

        let bh = (l.batch * l.hidden) as usize * elt;
        let seq_lengths = stream
            .clone_htod(&lengths)
            .map_err(|source| DnnError::Alloc {
                what: "the LSTM's sequence lengths",
                source,
            })?;
        Ok(CudnnLstm {
            handle,
            x: alloc(
                stream,
                "the LSTM's input",
                (l.seq * l.batch * l.input) as usize * elt,
            )?,
            y: alloc(
                stream,
                "the LSTM's output",
                (l.seq * l.batch * l.hidden) as usize * elt,
            )?,
            hx: alloc(stream, "the LSTM's initial hidden state", bh)?,
            cx: alloc(stream, "the LSTM's initial cell state", bh)?,
            hy: alloc(stream, "the LSTM's final hidden state", bh)?,
            cy: alloc(stream, "the LSTM's final cell state", bh)?,
            weights: alloc(stream, "the LSTM's weights", weight_size)?,
            work: alloc(stream, "the LSTM's workspace", work_size)?,
            rnn,
            _dropout: dropout,
            x_desc,
            y_desc,
            h_desc,
            seq_lengths,
            _dropout_states: dropout_states,
        })
    }

    /// Enqueues one forward pass over the whole sequence on the handle's stream.
    ///
    /// # Errors
    /// cuDNN rejected the call.
    pub fn forward(&mut self) -> Result<(), DnnError> {
        let s = &self.handle.stream;
        let (lengths, _g0) = self.seq_lengths.device_ptr(s);
        let (x, _g1) = self.x.device_ptr(s);
        let (y, _g2) = self.y.device_ptr_mut(s);
        let (hx, _g3) = self.hx.device_ptr(s);
        let (hy, _g4) = self.hy.device_ptr_mut(s);
        let (cx, _g5) = self.cx.device_ptr(s);
        let (cy, _g6) = self.cy.device_ptr_mut(s);
        let weight_size = self.weights.len();
        let (w, _g7) = self.weights.device_ptr(s);
        let work_size = self.work.len();
        let (work, _g8) = self.work.device_ptr_mut(s);
        // SAFETY: every buffer was sized from the descriptors (cuDNN's own size queries for the
        // weights and workspace) and lives until the call is enqueued; inference mode needs no
        // reserve space.
        #[allow(unsafe_code)]
        unsafe {
            check(
                "cudnnRNNForward",
                dnn::cudnnRNNForward(
                    self.handle.raw,
                    self.rnn.0,
                    dnn::cudnnForwardMode_t::CUDNN_FWD_MODE_INFERENCE,
                    lengths as *const i32,
                    self.x_desc.0,
                    x as *const c_void,
                    self.y_desc.0,
                    y as *mut c_void,
                    self.h_desc.0,
                    hx as *const c_void,
                    hy as *mut c_void,
                    self.h_desc.0,
                    cx as *const c_void,
                    cy as *mut c_void,
                    weight_size,
                    w as *const c_void,
                    work_size,
                    work as *mut c_void,
                    0,
                    ptr::null_mut(),
                ),
            )
        }
    }
}

/// Most workspace a cuDNN convolution algorithm gets, bytes.
pub const MAX_WORKSPACE: usize = 2 << 30;

fn saturate(v: u64) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// One cuDNN convolution direction with one algorithm, ready to run: cudarc's safe descriptors
/// (NHWC tensors, KRSC filters, cross-correlation, FP32 compute, the suite's math type), the
/// zero-filled tensors and the algorithm's workspace.
pub struct CudnnConv {
    inner: ConvOf,
}

enum ConvOf {
    F32(Conv<f32>),
    F16(Conv<half::f16>),
    Bf16(Conv<half::bf16>),
}

struct Conv<X: cudarc::cudnn::CudnnDataType> {
    conv: cudarc::cudnn::ConvDescriptor<f32>,
    x_desc: cudarc::cudnn::TensorDescriptor<X>,
    w_desc: cudarc::cudnn::FilterDescriptor<X>,
    y_desc: cudarc::cudnn::TensorDescriptor<X>,
    x: CudaSlice<X>,
    w: CudaSlice<X>,
    y: CudaSlice<X>,
    work: CudaSlice<u8>,
    algo: ConvAlgo,
    scale: (X, X),
}

impl CudnnConv {
    /// Sets up `algo` for convolution `c` in precision `p`, Tensor Cores on or off.
    ///
    /// # Errors
    /// [`DnnError::Refused`] when cuDNN refuses the configuration or the algorithm,
    /// [`DnnError::Workspace`] beyond [`MAX_WORKSPACE`], [`DnnError::Alloc`].
    pub fn new(
        handle: &Arc<cudarc::cudnn::Cudnn>,
        stream: &Arc<CudaStream>,
        c: &Conv2d,
        p: Precision,
        tensor: bool,
        algo: ConvAlgo,
    ) -> Result<Self, DnnError> {
        let inner = match p {
            Precision::Fp32 => {
                ConvOf::F32(Conv::new(handle, stream, c, p, tensor, algo, (1.0, 0.0))?)
            }
            Precision::Fp16 => ConvOf::F16(Conv::new(
                handle,
                stream,
                c,
                p,
                tensor,
                algo,
                (half::f16::ONE, half::f16::ZERO),
            )?),
            Precision::Bf16 => ConvOf::Bf16(Conv::new(
                handle,
                stream,
                c,
                p,
                tensor,
                algo,
                (half::bf16::ONE, half::bf16::ZERO),
            )?),
        };
        Ok(CudnnConv { inner })
    }

    /// Enqueues one convolution on the handle's stream.
    ///
    /// # Errors
    /// [`DnnError::Refused`] with cuDNN's status.
    pub fn run(&mut self) -> Result<(), DnnError> {
        match &mut self.inner {
            ConvOf::F32(c) => c.run(),
            ConvOf::F16(c) => c.run(),
            ConvOf::Bf16(c) => c.run(),
        }
    }
}

impl<X> Conv<X>
where
    X: cudarc::cudnn::CudnnDataType
        + cudarc::driver::DeviceRepr
        + cudarc::driver::ValidAsZeroBits
        + Copy,
{
    fn new(
        handle: &Arc<cudarc::cudnn::Cudnn>,
        stream: &Arc<CudaStream>,
        c: &Conv2d,
        p: Precision,
        tensor: bool,
        algo: ConvAlgo,
        scale: (X, X),
    ) -> Result<Self, DnnError> {
        let refused = |e: cudarc::cudnn::CudnnError| DnnError::Refused(e.0);
        let nhwc = dnn::cudnnTensorFormat_t::CUDNN_TENSOR_NHWC;
        let mut conv = handle
            .create_conv2d::<f32>(
                [saturate(c.pad), saturate(c.pad)],
                [saturate(c.stride), saturate(c.stride)],
                [1, 1],
                dnn::cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION,
            )
            .map_err(refused)?;
        conv.set_math_type(math_type(p, tensor)).map_err(refused)?;
        let x_desc = handle
            .create_4d_tensor::<X>(nhwc, [c.n, c.c, c.h, c.w].map(saturate))
            .map_err(refused)?;
        let w_desc = handle
            .create_4d_filter::<X>(nhwc, [c.k, c.c, c.r, c.s].map(saturate))
            .map_err(refused)?;
        let y_desc = handle
            .create_4d_tensor::<X>(nhwc, [c.n, c.k, c.p(), c.q()].map(saturate))
            .map_err(refused)?;
        let (xe, we, ye) = c.elements();
        let buffer = |what: &'static str, n: f64| {
            stream
                .alloc_zeros::<X>((n as usize).max(1))
                .map_err(|source| DnnError::Alloc { what, source })
        };
        let (x, w, y) = (
            buffer("the convolution's input", xe)?,
            buffer("the convolution's filters", we)?,
            buffer("the convolution's output", ye)?,
        );
        let mut me = Conv {
            work: stream
                .alloc_zeros::<u8>(1)
                .map_err(|source| DnnError::Alloc {
                    what: "the convolution's workspace",
                    source,
                })?,
            conv,
            x_desc,
            w_desc,
            y_desc,
            x,
            w,
            y,
            algo,
            scale,
        };
        let bytes = me.workspace_size()?;
        if bytes > MAX_WORKSPACE {
            return Err(DnnError::Workspace {
                bytes,
                limit: MAX_WORKSPACE,
            });
        }
        me.work = stream
            .alloc_zeros::<u8>(bytes.max(1))
            .map_err(|source| DnnError::Alloc {
                what: "the convolution's workspace",
                source,
            })?;
        Ok(me)
    }

    fn workspace_size(&self) -> Result<usize, DnnError> {
        let refused = |e: cudarc::cudnn::CudnnError| DnnError::Refused(e.0);
        match self.algo.direction() {
            Direction::Forward => self
                .forward()
                .get_workspace_size(FORWARD_ALGOS[self.algo.row].0),
            Direction::BackwardData => self
                .backward_data()
                .get_workspace_size(BACKWARD_DATA_ALGOS[self.algo.row].0),
            Direction::BackwardFilter => self
                .backward_filter()
                .get_workspace_size(BACKWARD_FILTER_ALGOS[self.algo.row].0),
        }
        .map_err(refused)
    }

    fn forward(&self) -> cudarc::cudnn::ConvForward<'_, X, f32, X> {
        cudarc::cudnn::ConvForward {
            conv: &self.conv,
            x: &self.x_desc,
            w: &self.w_desc,
            y: &self.y_desc,
        }
    }

    fn backward_data(&self) -> cudarc::cudnn::ConvBackwardData<'_, X, f32, X> {
        cudarc::cudnn::ConvBackwardData {
            conv: &self.conv,
            dx: &self.x_desc,
            w: &self.w_desc,
            dy: &self.y_desc,
        }
    }

    fn backward_filter(&self) -> cudarc::cudnn::ConvBackwardFilter<'_, X, f32, X> {
        cudarc::cudnn::ConvBackwardFilter {
            conv: &self.conv,
            x: &self.x_desc,
            dw: &self.w_desc,
            dy: &self.y_desc,
        }
    }

    fn run(&mut self) -> Result<(), DnnError> {
        let row = self.algo.row;
        let scale = self.scale;
        // Disjoint borrows: the descriptors (shared) and the buffers (one written per direction).
        let Conv {
            conv,
            x_desc,
            w_desc,
            y_desc,
            x,
            w,
            y,
            work,
            algo,
            ..
        } = self;
        // SAFETY: the buffers were allocated for these descriptors (element type X, NHWC/KRSC
        // element counts of the same convolution) and the workspace holds what cuDNN asked for
        // this algorithm.
        #[allow(unsafe_code)]
        let r = unsafe {
            match algo.direction() {
                Direction::Forward => cudarc::cudnn::ConvForward {
                    conv: &*conv,
                    x: &*x_desc,
                    w: &*w_desc,
                    y: &*y_desc,
                }
                .launch(FORWARD_ALGOS[row].0, Some(work), scale, &*x, &*w, y),
                Direction::BackwardData => cudarc::cudnn::ConvBackwardData {
                    conv: &*conv,
                    dx: &*x_desc,
                    w: &*w_desc,
                    dy: &*y_desc,
                }
                .launch(BACKWARD_DATA_ALGOS[row].0, Some(work), scale, x, &*w, &*y),
                Direction::BackwardFilter => cudarc::cudnn::ConvBackwardFilter {
                    conv: &*conv,
                    x: &*x_desc,
                    dw: &*w_desc,
                    dy: &*y_desc,
                }
                .launch(
                    BACKWARD_FILTER_ALGOS[row].0,
                    Some(work),
                    scale,
                    &*x,
                    w,
                    &*y,
                ),
            }
        };
        r.map_err(|e| DnnError::Refused(e.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithms_are_listed_in_enum_order() {
        for (i, a) in Algo::ALL.iter().enumerate() {
            assert_eq!(a.raw() as usize, i, "{}", a.key());
        }
        assert_eq!(
            Algo::ALL.len(),
            dnn::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_COUNT as usize
        );
    }

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

    #[test]
    fn convolution_algorithm_tables_list_every_enum_value_once() {
        let counts = [
            (
                Direction::Forward,
                Fwd::CUDNN_CONVOLUTION_FWD_ALGO_COUNT as u32,
            ),
            (
                Direction::BackwardData,
                BwdData::CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT as u32,
            ),
            (
                Direction::BackwardFilter,
                BwdFilter::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT as u32,
            ),
        ];
        for (dir, count) in counts {
            let all = ConvAlgo::all(dir);
            assert_eq!(all.len() as u32, count, "{dir:?}");
            for (i, a) in all.iter().enumerate() {
                // Listed in enum order, and each value maps back to its own row.
                assert_eq!(a.value(), i as u32, "{dir:?} {}", a.name());
                assert_eq!(ConvAlgo::from_value(dir, a.value()).unwrap(), *a);
                assert_eq!(a.direction(), dir);
            }
            // The COUNT sentinel and anything beyond are refused, by name.
            let e = ConvAlgo::from_value(dir, count).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "cuDNN returned {} convolution algorithm {count}, which this build does not know",
                    dir.key()
                )
            );
            assert!(ConvAlgo::from_value(dir, u32::MAX).is_err());
        }
        let names = |d| {
            ConvAlgo::all(d)
                .into_iter()
                .map(ConvAlgo::name)
                .collect::<Vec<_>>()
        };
        assert_eq!(names(Direction::Forward)[1], "IMPLICIT_PRECOMP_GEMM");
        assert_eq!(names(Direction::BackwardData)[5], "WINOGRAD_NONFUSED");
        assert_eq!(names(Direction::BackwardFilter)[6], "FFT_TILING");
        assert_eq!(
            ConvAlgo::from_value(Direction::BackwardFilter, 3)
                .unwrap()
                .name(),
            "ALGO_3"
        );
    }

    #[test]
    fn convolution_refusals_say_why() {
        let e = DnnError::Workspace {
            bytes: 3 << 30,
            limit: MAX_WORKSPACE,
        };
        assert_eq!(
            e.to_string(),
            "needs a 3072 MiB workspace (more than 2048 MiB)"
        );
        assert!(!e.is_out_of_memory());
        let e = DnnError::Refused(dnn::cudnnStatus_t::CUDNN_STATUS_NOT_SUPPORTED);
        assert_eq!(
            e.to_string(),
            "cuDNN refused it: CUDNN_STATUS_NOT_SUPPORTED"
        );
        assert!(
            DnnError::Refused(dnn::cudnnStatus_t::CUDNN_STATUS_ALLOC_FAILED).is_out_of_memory()
        );
        // cuDNN 9 reports a full GPU as a device allocation failure (4004), not ALLOC_FAILED.
        let full = dnn::cudnnStatus_t::CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
        assert!(DnnError::Refused(full).is_out_of_memory());
        assert!(
            DnnError::Call {
                call: "cudnnRNNForward",
                status: full
            }
            .is_out_of_memory()
        );
    }
}
