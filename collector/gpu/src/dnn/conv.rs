//! cuDNN's convolutions: the checked table of its algorithms ([`ConvAlgo`]), its own algorithm
//! search ([`find_conv_algorithm`], per convolution configuration), and one direction with one
//! algorithm ready to time ([`CudnnConv`], through cudarc's safe API). NHWC tensors, KRSC filters,
//! cross-correlation, FP32 compute, the math type as the suite sets it.

use std::sync::Arc;

use cudarc::cudnn::sys as dnn;
use cudarc::driver::{CudaSlice, CudaStream};
use roofline_kernels::Fill;
use roofline_model::analysis::dl::{Conv2d, Direction, Precision};

use super::{
    ConvDesc, DnnError, DnnHandle, FilterDesc, TensorDesc, check, data_type, int, math_type,
};
use crate::DeviceError;
use crate::launch::dl::{ConvTensor, conv_inputs};
use crate::launch::fill::Filler;

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

/// The algorithm cuDNN's own search picks for a convolution direction: the first entry of
/// `cudnnFindConvolution{Forward,BackwardData,BackwardFilter}Algorithm`'s results (which cuDNN
/// sorts by the time it measured) whose status is success, with the time cuDNN measured
/// (seconds). `None` when no algorithm ran.
///
/// The search runs every algorithm once on buffers it allocates itself (not filled by us: its
/// times are what cuDNN measured on them). NHWC tensors, KRSC filters, cross-correlation, FP32
/// compute, the math type as the suite sets it.
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

/// Most workspace a cuDNN convolution algorithm gets, bytes.
pub const MAX_WORKSPACE: usize = 2 << 30;

fn saturate(v: u64) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// One cuDNN convolution direction with one algorithm, ready to run: cudarc's safe descriptors
/// (NHWC tensors, KRSC filters, cross-correlation, FP32 compute, the suite's math type), the
/// tensors (allocated zero-filled; the suite writes real data into the two the direction reads,
/// [`CudnnConv::fill_inputs`]) and the algorithm's workspace.
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

    /// Fills the two tensors its direction reads ([`conv_inputs`]: x and w forward, dy and w
    /// backward-data, x and dy backward-filter) by `kind` on the GPU, bounded normal values
    /// scaled by `scale`; the tensor it writes stays zero.
    ///
    /// # Errors
    /// The driver's error.
    pub fn fill_inputs(
        &self,
        filler: &Filler<'_>,
        kind: Fill,
        scale: f32,
    ) -> Result<(), DeviceError> {
        match &self.inner {
            ConvOf::F32(c) => c.fill_inputs(filler, kind, scale),
            ConvOf::F16(c) => c.fill_inputs(filler, kind, scale),
            ConvOf::Bf16(c) => c.fill_inputs(filler, kind, scale),
        }
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

    fn tensor(&self, t: ConvTensor) -> &CudaSlice<X> {
        match t {
            ConvTensor::X => &self.x,
            ConvTensor::W => &self.w,
            ConvTensor::Y => &self.y,
        }
    }

    fn fill_inputs(&self, filler: &Filler<'_>, kind: Fill, scale: f32) -> Result<(), DeviceError> {
        for t in conv_inputs(self.algo.direction()) {
            filler.fill_whole(self.tensor(t), kind, scale)?;
        }
        Ok(())
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
