//! cuDNN's raw API where cudarc's safe one falls short, in one small safe module: the LSTM through
//! the v8 RNN API (`cudnnRNNForward`), and cuDNN's own convolution algorithm search
//! (`cudnnFindConvolution*Algorithm`, the auto-tuning frameworks enable), which needs the raw
//! descriptors that cudarc keeps private.
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
    #[error("allocating the LSTM's {what} failed: {source}")]
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
}

impl DnnError {
    /// Whether the failure is the GPU running out of memory (then the configuration is skipped).
    pub fn is_out_of_memory(&self) -> bool {
        match self {
            DnnError::Alloc { source, .. } => {
                source.0 == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY
            }
            DnnError::Call { status, .. } => {
                *status == dnn::cudnnStatus_t::CUDNN_STATUS_ALLOC_FAILED
            }
            DnnError::Context(_) | DnnError::TooLarge(_) => false,
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
/// sorts by the time it measured) whose status is success, as its index in the direction's
/// algorithm enum, with the time cuDNN measured (seconds). `None` when no algorithm ran.
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
) -> Result<Option<(u32, f64)>, DnnError> {
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
    Ok(match dir {
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
    })
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
        let mut dropout_states = alloc(stream, "dropout states", states_size)?;
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
                what: "sequence lengths",
                source,
            })?;
        Ok(CudnnLstm {
            handle,
            x: alloc(stream, "input", (l.seq * l.batch * l.input) as usize * elt)?,
            y: alloc(
                stream,
                "output",
                (l.seq * l.batch * l.hidden) as usize * elt,
            )?,
            hx: alloc(stream, "initial hidden state", bh)?,
            cx: alloc(stream, "initial cell state", bh)?,
            hy: alloc(stream, "final hidden state", bh)?,
            cy: alloc(stream, "final cell state", bh)?,
            weights: alloc(stream, "weights", weight_size)?,
            work: alloc(stream, "workspace", work_size)?,
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
}
