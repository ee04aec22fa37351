//! `roofline suite`: the time-based roofline study of Wang et al. (2020), run natively: conv2d
//! (cuDNN, every algorithm it offers, and our own direct and implicit-GEMM kernels), LSTM (cuDNN's
//! RNN, every algorithm, through [`crate::dnn`]; and our own step-by-step implementation: a
//! cuBLASLt GEMM and a fused cell kernel per time step) and GEMM (cuBLASLt), in FP32, FP16 and
//! BF16, Tensor Cores on and off.
//!
//! Every entry carries the analytical complexity of [`roofline_model::dl`] (F and the minimum B),
//! its launch count n, the median time of repeats after warm-up (CUDA events) with the spread in
//! its tags, and its FLOPs on the datapath the configuration asks for (so the time-based bound
//! uses that datapath's peak). A configuration that cannot run is recorded in `skipped` with why.
//!
//! Tags beyond the sweep's: `implementation` (`cudnn`, `own`, `cublaslt`), `algorithm`,
//! `precision`, `tensor`, `direction`; among one configuration's cuDNN algorithms, `fastest` on
//! the one our timing found fastest and, for convolutions, `autotuned = cudnnFind` (with
//! `cudnn_find_time_s`) on the one cuDNN's own search (`cudnnFindConvolution*Algorithm`, what
//! frameworks' auto-tuning calls) picks.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use cudarc::cudnn::{self, Cudnn, CudnnDataType, sys as dnn};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, DeviceRepr, DriverError, LaunchConfig,
    PushKernelArg, ValidAsZeroBits,
};
use roofline_model::bundle::{
    Bundle, Complexity, DataSource, Datapath, Device, Kernel, Provenance, Skipped,
};
use roofline_model::dl::{self, Conv2d, Direction, Lstm, Precision};

use crate::blaslt::{BlasLtError, Gemm, Spec};
use crate::dnn::{Algo as RnnAlgo, CudnnLstm, DnnError, DnnHandle, find_conv_algorithm, math_type};
use crate::kernels::{self, Compiled, KernelError, Source};
use crate::progress;

/// Which sweeps to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Study {
    /// 2D convolutions.
    Conv2d,
    /// LSTM layers.
    Lstm,
    /// Matrix products.
    Gemm,
}

impl Study {
    /// Parses the positional argument: `conv2d`, `lstm`, `gemm` or `all`.
    ///
    /// # Errors
    /// A message naming the accepted values.
    pub fn parse(s: &str) -> Result<Vec<Study>, String> {
        match s {
            "conv2d" => Ok(vec![Study::Conv2d]),
            "lstm" => Ok(vec![Study::Lstm]),
            "gemm" => Ok(vec![Study::Gemm]),
            "all" => Ok(vec![Study::Conv2d, Study::Lstm, Study::Gemm]),
            other => Err(format!(
                "unknown study {other:?}: expected conv2d, lstm, gemm or all"
            )),
        }
    }
}

/// Tensor Cores on, off, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorMode {
    /// Tensor Core math only.
    On,
    /// CUDA cores only.
    Off,
    /// Both, one entry each.
    Both,
}

impl TensorMode {
    /// Parses `on`, `off` or `both`.
    ///
    /// # Errors
    /// A message naming the accepted values.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "on" => Ok(TensorMode::On),
            "off" => Ok(TensorMode::Off),
            "both" => Ok(TensorMode::Both),
            other => Err(format!("--tensor {other:?}: expected on, off or both")),
        }
    }

    /// The settings to run, Tensor Cores first.
    pub fn settings(self) -> &'static [bool] {
        match self {
            TensorMode::On => &[true],
            TensorMode::Off => &[false],
            TensorMode::Both => &[true, false],
        }
    }
}

/// Parses `--precision` values.
///
/// # Errors
/// A message naming the bad value and the accepted ones.
pub fn parse_precisions(values: &[String]) -> Result<Vec<Precision>, String> {
    let mut out = Vec::new();
    for v in values {
        let p = Precision::from_key(v.trim())
            .ok_or_else(|| format!("--precision {v:?}: expected fp32, fp16 or bf16"))?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    if out.is_empty() {
        return Err("--precision: give at least one of fp32, fp16, bf16".into());
    }
    Ok(out)
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The sweeps.
    pub studies: Vec<Study>,
    /// The precisions.
    pub precisions: Vec<Precision>,
    /// Tensor Cores on, off or both.
    pub tensor: TensorMode,
}

/// What stopped a suite run.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// A driver call failed.
    #[error("{during}: {source}")]
    Driver {
        /// What we were doing.
        during: String,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// A kernel could not be compiled or loaded.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// cuBLASLt failed in a way that is not "unsupported here".
    #[error(transparent)]
    BlasLt(#[from] BlasLtError),
    /// cuDNN's RNN failed in a way that is not "unsupported here".
    #[error(transparent)]
    Rnn(#[from] DnnError),
}

fn drv(during: impl Into<String>) -> impl FnOnce(DriverError) -> SuiteError {
    let during = during.into();
    move |source| SuiteError::Driver { during, source }
}

/// The datapath a configuration's FLOPs run on: Tensor Cores of its precision (TF32 for FP32)
/// when `tensor`, else the CUDA-core datapath of its arithmetic.
pub fn datapath(p: Precision, tensor: bool) -> Datapath {
    match (p, tensor) {
        (Precision::Fp32, true) => Datapath::TensorTf32,
        (Precision::Fp16, true) => Datapath::TensorFp16,
        (Precision::Bf16, true) => Datapath::TensorBf16,
        (Precision::Fp32, false) => Datapath::Fp32,
        (Precision::Fp16, false) => Datapath::Fp16,
        (Precision::Bf16, false) => Datapath::Bf16,
    }
}

/// One measured configuration, before it becomes a bundle entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Unique entry name (the aggregation key).
    pub name: String,
    /// Times of the repeats, seconds.
    pub times: Vec<f64>,
    /// Kernel launches per run.
    pub launches: u64,
    /// F and B.
    pub complexity: Complexity,
    /// The datapath its FLOPs run on.
    pub datapath: Datapath,
    /// Sweep parameter, value, algorithm, precision, tensor, direction, …
    pub tags: BTreeMap<String, String>,
}

fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

impl Measured {
    /// The bundle entry: time = median of the repeats (the spread in tags `time_min_s`,
    /// `time_max_s`, `repeats`), `launches` = n, the analytical complexity, and F on its datapath.
    pub fn into_kernel(self, device: &str) -> Kernel {
        let t = median(&self.times);
        let mut k = Kernel::new(self.name, t, DataSource::Suite);
        k.device = Some(device.to_owned());
        k.launches = self.launches;
        k.complexity = Some(self.complexity);
        k.flops.set(self.datapath, Some(self.complexity.flops));
        k.tags = self.tags;
        let min = self.times.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.times.iter().copied().fold(0.0, f64::max);
        k.tags.insert("time_min_s".into(), format!("{min:e}"));
        k.tags.insert("time_max_s".into(), format!("{max:e}"));
        k.tags
            .insert("repeats".into(), self.times.len().to_string());
        k.tags.insert("datapath".into(), self.datapath.key().into());
        k
    }
}

fn tags(pairs: &[(&str, String)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

struct Rig {
    stream: Arc<CudaStream>,
    start: CudaEvent,
    end: CudaEvent,
    dl: Compiled,
    cudnn: Option<Arc<Cudnn>>,
    dnn: Option<DnnHandle>,
}

/// Timed repeats of a configuration.
const REPEATS: usize = 7;
/// A run slower than this, seconds, gets [`SLOW_REPEATS`] repeats after one warm-up.
const SLOW_S: f64 = 0.05;
/// Repeats of a slow configuration.
const SLOW_REPEATS: usize = 3;

impl Rig {
    /// Times `run`: one timed warm-up; then, for runs under [`SLOW_S`], a second warm-up and
    /// [`REPEATS`] timed repeats, for slower ones [`SLOW_REPEATS`] (so that `suite all` stays
    /// within minutes). Each time is a CUDA-event interval around one run.
    fn time(
        &self,
        what: &str,
        mut run: impl FnMut(&Self) -> Result<(), Failure>,
    ) -> Result<Vec<f64>, Failure> {
        let mut once = |r: &Self| -> Result<f64, Failure> {
            let fatal = |during: &str| {
                let during = format!("{what}: {during}");
                move |e| Failure::Fatal(drv(during)(e))
            };
            r.start
                .record(&r.stream)
                .map_err(fatal("recording an event"))?;
            run(r)?;
            r.end
                .record(&r.stream)
                .map_err(fatal("recording an event"))?;
            r.end.synchronize().map_err(fatal("running"))?;
            let ms = r
                .start
                .elapsed_ms(&r.end)
                .map_err(fatal("reading events"))?;
            Ok(f64::from(ms) / 1e3)
        };
        let first = once(self)?;
        let repeats = if first < SLOW_S {
            once(self)?;
            REPEATS
        } else {
            SLOW_REPEATS
        };
        (0..repeats).map(|_| once(self)).collect()
    }
}

/// A configuration either cannot run here (skipped, with why) or broke the device (fatal).
enum Failure {
    Skip(String),
    Fatal(SuiteError),
}

impl From<SuiteError> for Failure {
    fn from(e: SuiteError) -> Self {
        Failure::Fatal(e)
    }
}

/// The result of a run.
pub struct Outcome {
    /// The bundle (incomplete if a fatal error stopped the run).
    pub bundle: Bundle,
    /// The error that stopped it.
    pub failure: Option<SuiteError>,
    /// Wall time, seconds.
    pub wall_s: f64,
}

fn record(
    out: &mut Vec<Measured>,
    skipped: &mut Vec<Skipped>,
    what: String,
    result: Result<Measured, Failure>,
) -> Result<(), SuiteError> {
    match result {
        Ok(m) => out.push(m),
        Err(Failure::Skip(reason)) => skipped.push(Skipped { what, reason }),
        Err(Failure::Fatal(e)) => return Err(e),
    }
    Ok(())
}

fn alloc<T: DeviceRepr + ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    n: usize,
) -> Result<CudaSlice<T>, Failure> {
    stream.alloc_zeros::<T>(n.max(1)).map_err(|e| {
        if e.0 == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
            Failure::Skip(format!(
                "out of GPU memory allocating {} MiB",
                (n * size_of::<T>()) >> 20
            ))
        } else {
            Failure::Fatal(drv("allocating")(e))
        }
    })
}

fn to_i32(v: u64) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// The suffix of `dl.cu`'s entry points for a storage precision.
fn kernel_suffix(p: Precision) -> &'static str {
    match p {
        Precision::Fp32 => "f32",
        Precision::Fp16 => "f16",
        Precision::Bf16 => "bf16",
    }
}

/// The geometry arguments every `dl.cu` convolution takes, in order: N, H, W, C, K, R, S, P, Q,
/// stride, pad.
fn conv_geometry(c: &Conv2d) -> [i32; 11] {
    [
        c.n,
        c.h,
        c.w,
        c.c,
        c.k,
        c.r,
        c.s,
        c.p(),
        c.q(),
        c.stride,
        c.pad,
    ]
    .map(to_i32)
}

/// The `dl.cu` entry point `{prefix}_{fwd|bwd_data|bwd_filter}_{suffix}` of a convolution.
fn conv_kernel_name(prefix: &str, dir: Direction, p: Precision) -> String {
    let d = match dir {
        Direction::Forward => "fwd",
        Direction::BackwardData => "bwd_data",
        Direction::BackwardFilter => "bwd_filter",
    };
    format!("{prefix}_{d}_{}", kernel_suffix(p))
}

/// Zero-filled device buffers for x, w and y (N·H·W·C, K·R·S·C, N·P·Q·K) in the storage type;
/// the backward directions use them as dx and dy, or dw.
fn conv_tensors(rig: &Rig, c: &Conv2d, p: Precision) -> Result<[CudaSlice<u8>; 3], Failure> {
    let elt = p.bytes() as usize;
    let (xe, we, ye) = c.elements();
    Ok([
        alloc::<u8>(&rig.stream, xe as usize * elt)?,
        alloc::<u8>(&rig.stream, we as usize * elt)?,
        alloc::<u8>(&rig.stream, ye as usize * elt)?,
    ])
}

/// Our own direct convolution kernels: one launch, FP32 arithmetic on CUDA cores.
fn own_conv(
    rig: &Rig,
    c: &Conv2d,
    dir: Direction,
    p: Precision,
) -> Result<(Vec<f64>, u64), Failure> {
    let name = conv_kernel_name("conv", dir, p);
    let f = rig.dl.function(&name).map_err(SuiteError::from)?;
    let [x, w, y] = conv_tensors(rig, c, p)?;
    let (xe, we, ye) = c.elements();
    let threads = match dir {
        Direction::Forward => ye,
        Direction::BackwardData => xe,
        Direction::BackwardFilter => we,
    } as u64;
    let cfg = LaunchConfig {
        grid_dim: (
            u32::try_from(threads.div_ceil(256)).unwrap_or(u32::MAX),
            1,
            1,
        ),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let dims = conv_geometry(c);
    let times = rig.time(&name, |r| {
        let mut l = r.stream.launch_builder(&f);
        // Operand order per kernel: forward (x, w, y), backward-data (dx, w, dy),
        // backward-filter (x, dw, dy); the buffers are sized for the roles they take.
        l.arg(&x).arg(&w).arg(&y);
        for d in &dims {
            l.arg(d);
        }
        // SAFETY: argument types and order match the `dl.cu` convolution kernels; each buffer
        // holds its tensor's elements in the storage type.
        #[allow(unsafe_code)]
        unsafe { l.launch(cfg) }
            .map(drop)
            .map_err(|e| Failure::Fatal(drv(format!("launching {name}"))(e)))
    })?;
    Ok((times, 1))
}

/// Output tiles of the implicit-GEMM kernels (`IG_BM` × `IG_BN` in `dl.cu`).
const IG_TILE: u64 = 64;
/// Thread blocks the implicit-GEMM launch aims for before it splits the reduction.
pub const IG_TARGET_BLOCKS: u64 = 512;
/// Fewest reduction elements per split.
pub const IG_MIN_PER_SPLIT: u64 = 256;

/// The implicit-GEMM shape of a convolution direction, `(M, Ng, Kg)`, as `dl.cu` lays it out.
pub fn implicit_gemm_shape(c: &Conv2d, dir: Direction) -> (u64, u64, u64) {
    let (p, q) = (c.p(), c.q());
    match dir {
        Direction::Forward => (c.n * p * q, c.k, c.r * c.s * c.c),
        Direction::BackwardData => (c.n * c.h * c.w, c.c, c.r * c.s * c.k),
        Direction::BackwardFilter => (c.k, c.r * c.s * c.c, c.n * p * q),
    }
}

/// Grid `(tiles along Ng, tiles along M, splits)`: the reduction is split when the output tiles
/// alone give fewer than [`IG_TARGET_BLOCKS`] blocks, keeping at least [`IG_MIN_PER_SPLIT`]
/// reduction elements per split and at most 64 splits.
pub fn implicit_gemm_grid((m, ng, kg): (u64, u64, u64)) -> (u64, u64, u64) {
    let (gx, gy) = (ng.div_ceil(IG_TILE), m.div_ceil(IG_TILE));
    let splits = IG_TARGET_BLOCKS
        .div_ceil((gx * gy).max(1))
        .min(kg.div_ceil(IG_MIN_PER_SPLIT))
        .clamp(1, 64);
    (gx, gy, splits)
}

/// Our own implicit-GEMM convolution kernels: FP32 arithmetic on CUDA cores, one launch, or two
/// when the reduction is split (partial sums, then `conv_sum_*`).
fn own_igemm(
    rig: &Rig,
    c: &Conv2d,
    dir: Direction,
    p: Precision,
) -> Result<(Vec<f64>, u64), Failure> {
    let name = conv_kernel_name("igemm", dir, p);
    let f = rig.dl.function(&name).map_err(SuiteError::from)?;
    let sum_name = format!("conv_sum_{}", kernel_suffix(p));
    let sum = rig.dl.function(&sum_name).map_err(SuiteError::from)?;
    let [x, w, y] = conv_tensors(rig, c, p)?;
    let shape = implicit_gemm_shape(c, dir);
    let (gx, gy, splits) = implicit_gemm_grid(shape);
    let count = shape.0 * shape.1;
    let partial = alloc::<f32>(
        &rig.stream,
        if splits > 1 {
            (splits * count) as usize
        } else {
            1
        },
    )?;
    let cfg = LaunchConfig {
        grid_dim: (
            u32::try_from(gx).unwrap_or(u32::MAX),
            u32::try_from(gy).unwrap_or(u32::MAX),
            u32::try_from(splits).unwrap_or(1),
        ),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let sum_cfg = LaunchConfig {
        grid_dim: (u32::try_from(count.div_ceil(256)).unwrap_or(u32::MAX), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let dims = conv_geometry(c);
    let split_arg = to_i32(splits);
    // The output is the tensor in the third slot for forward, the first for backward-data and
    // the second for backward-filter (the operand order of the direct kernels).
    let out = match dir {
        Direction::Forward => &y,
        Direction::BackwardData => &x,
        Direction::BackwardFilter => &w,
    };
    let times = rig.time(&name, |r| {
        let mut l = r.stream.launch_builder(&f);
        l.arg(&x).arg(&w).arg(&y);
        for d in &dims {
            l.arg(d);
        }
        l.arg(&partial).arg(&split_arg);
        // SAFETY: argument types and order match the `igemm_*` kernels; each buffer holds its
        // tensor's elements in the storage type, `partial` holds splits × M × Ng floats when
        // splits > 1.
        #[allow(unsafe_code)]
        unsafe { l.launch(cfg) }
            .map(drop)
            .map_err(|e| Failure::Fatal(drv(format!("launching {name}"))(e)))?;
        if splits > 1 {
            let mut l = r.stream.launch_builder(&sum);
            l.arg(&partial).arg(out).arg(&count).arg(&split_arg);
            // SAFETY: matches `conv_sum_*`; `out` holds `count` = M × Ng elements.
            #[allow(unsafe_code)]
            unsafe { l.launch(sum_cfg) }
                .map(drop)
                .map_err(|e| Failure::Fatal(drv(format!("launching {sum_name}"))(e)))?;
        }
        Ok(())
    })?;
    Ok((times, if splits > 1 { 2 } else { 1 }))
}

fn dnn_err(e: cudnn::result::CudnnError) -> Failure {
    Failure::Skip(format!("cuDNN refused it: {:?}", e.0))
}

/// One cuDNN convolution direction with one algorithm (by index), generic over the element type.
#[allow(clippy::too_many_arguments)]
fn cudnn_conv<X>(
    rig: &Rig,
    handle: &Arc<Cudnn>,
    c: &Conv2d,
    dir: Direction,
    tensor: bool,
    p: Precision,
    algo: u32,
    (one, zero): (X, X),
) -> Result<Vec<f64>, Failure>
where
    X: CudnnDataType + DeviceRepr + ValidAsZeroBits + Copy,
{
    let nhwc = dnn::cudnnTensorFormat_t::CUDNN_TENSOR_NHWC;
    let mut conv = handle
        .create_conv2d::<f32>(
            [to_i32(c.pad), to_i32(c.pad)],
            [to_i32(c.stride), to_i32(c.stride)],
            [1, 1],
            dnn::cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION,
        )
        .map_err(dnn_err)?;
    conv.set_math_type(math_type(p, tensor)).map_err(dnn_err)?;
    let x_desc = handle
        .create_4d_tensor::<X>(nhwc, [to_i32(c.n), to_i32(c.c), to_i32(c.h), to_i32(c.w)])
        .map_err(dnn_err)?;
    let w_desc = handle
        .create_4d_filter::<X>(nhwc, [to_i32(c.k), to_i32(c.c), to_i32(c.r), to_i32(c.s)])
        .map_err(dnn_err)?;
    let y_desc = handle
        .create_4d_tensor::<X>(
            nhwc,
            [to_i32(c.n), to_i32(c.k), to_i32(c.p()), to_i32(c.q())],
        )
        .map_err(dnn_err)?;
    let (xe, we, ye) = c.elements();
    let mut x = alloc::<X>(&rig.stream, xe as usize)?;
    let mut w = alloc::<X>(&rig.stream, we as usize)?;
    let mut y = alloc::<X>(&rig.stream, ye as usize)?;
    const MAX_WORKSPACE: usize = 2 << 30;
    let too_big = |ws: usize| {
        Failure::Skip(format!(
            "needs a {} MiB workspace (more than {} MiB)",
            ws >> 20,
            MAX_WORKSPACE >> 20
        ))
    };
    // SAFETY (the three transmutes): the enums are `repr(u32)` with contiguous discriminants
    // from 0 to COUNT − 1, and `algo` is checked against COUNT first.
    match dir {
        Direction::Forward => {
            if algo >= dnn::cudnnConvolutionFwdAlgo_t::CUDNN_CONVOLUTION_FWD_ALGO_COUNT as u32 {
                return Err(Failure::Skip("no such algorithm".into()));
            }
            #[allow(unsafe_code)]
            let a: dnn::cudnnConvolutionFwdAlgo_t = unsafe { std::mem::transmute(algo) };
            let op = cudnn::ConvForward {
                conv: &conv,
                x: &x_desc,
                w: &w_desc,
                y: &y_desc,
            };
            let ws = op.get_workspace_size(a).map_err(dnn_err)?;
            if ws > MAX_WORKSPACE {
                return Err(too_big(ws));
            }
            let mut work = alloc::<u8>(&rig.stream, ws)?;
            rig.time("cuDNN forward", |_| {
                // SAFETY: the buffers match the descriptors' sizes and types.
                #[allow(unsafe_code)]
                unsafe { op.launch(a, Some(&mut work), (one, zero), &x, &w, &mut y) }
                    .map_err(dnn_err)
            })
        }
        Direction::BackwardData => {
            if algo
                >= dnn::cudnnConvolutionBwdDataAlgo_t::CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT as u32
            {
                return Err(Failure::Skip("no such algorithm".into()));
            }
            #[allow(unsafe_code)]
            let a: dnn::cudnnConvolutionBwdDataAlgo_t = unsafe { std::mem::transmute(algo) };
            let op = cudnn::ConvBackwardData {
                conv: &conv,
                dx: &x_desc,
                w: &w_desc,
                dy: &y_desc,
            };
            let ws = op.get_workspace_size(a).map_err(dnn_err)?;
            if ws > MAX_WORKSPACE {
                return Err(too_big(ws));
            }
            let mut work = alloc::<u8>(&rig.stream, ws)?;
            rig.time("cuDNN backward-data", |_| {
                // SAFETY: as above.
                #[allow(unsafe_code)]
                unsafe { op.launch(a, Some(&mut work), (one, zero), &mut x, &w, &y) }
                    .map_err(dnn_err)
            })
        }
        Direction::BackwardFilter => {
            if algo
                >= dnn::cudnnConvolutionBwdFilterAlgo_t::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT
                    as u32
            {
                return Err(Failure::Skip("no such algorithm".into()));
            }
            #[allow(unsafe_code)]
            let a: dnn::cudnnConvolutionBwdFilterAlgo_t = unsafe { std::mem::transmute(algo) };
            let op = cudnn::ConvBackwardFilter {
                conv: &conv,
                x: &x_desc,
                dw: &w_desc,
                dy: &y_desc,
            };
            let ws = op.get_workspace_size(a).map_err(dnn_err)?;
            if ws > MAX_WORKSPACE {
                return Err(too_big(ws));
            }
            let mut work = alloc::<u8>(&rig.stream, ws)?;
            rig.time("cuDNN backward-filter", |_| {
                // SAFETY: as above.
                #[allow(unsafe_code)]
                unsafe { op.launch(a, Some(&mut work), (one, zero), &x, &mut w, &y) }
                    .map_err(dnn_err)
            })
        }
    }
}

/// cuDNN's algorithm names per direction, in enum order.
pub fn cudnn_algorithms(dir: Direction) -> &'static [&'static str] {
    match dir {
        Direction::Forward => &[
            "IMPLICIT_GEMM",
            "IMPLICIT_PRECOMP_GEMM",
            "GEMM",
            "DIRECT",
            "FFT",
            "FFT_TILING",
            "WINOGRAD",
            "WINOGRAD_NONFUSED",
        ],
        Direction::BackwardData => &[
            "ALGO_0",
            "ALGO_1",
            "FFT",
            "FFT_TILING",
            "WINOGRAD",
            "WINOGRAD_NONFUSED",
        ],
        Direction::BackwardFilter => &[
            "ALGO_0",
            "ALGO_1",
            "FFT",
            "ALGO_3",
            "WINOGRAD",
            "WINOGRAD_NONFUSED",
            "FFT_TILING",
        ],
    }
}

fn conv_study(
    rig: &Rig,
    plan: &Plan,
    out: &mut Vec<Measured>,
    skipped: &mut Vec<Skipped>,
    bar: &indicatif::ProgressBar,
) -> Result<(), SuiteError> {
    for case in dl::conv2d_study() {
        let c = case.op;
        for dir in Direction::ALL {
            for &p in &plan.precisions {
                let elt = p.bytes();
                let cx = c.complexity(elt);
                let base = |imp: &str, algo: &str, tensor: bool| {
                    tags(&[
                        ("study", "conv2d".into()),
                        ("parameter", case.parameter.into()),
                        ("value", case.value.to_string()),
                        ("direction", dir.key().into()),
                        ("precision", p.key().into()),
                        ("tensor", if tensor { "on" } else { "off" }.into()),
                        ("implementation", imp.into()),
                        ("algorithm", algo.into()),
                    ])
                };
                let label = format!(
                    "conv2d {} {}={} {}",
                    dir.key(),
                    case.parameter,
                    case.value,
                    p.key()
                );
                // Our own direct kernel: CUDA cores, FP32 arithmetic.
                let own = own_conv(rig, &c, dir, p).map(|(times, launches)| Measured {
                    name: format!("{label} own direct"),
                    times,
                    launches,
                    complexity: cx,
                    datapath: Datapath::Fp32,
                    tags: base("own", "direct", false),
                });
                record(out, skipped, format!("{label} own direct"), own)?;
                let own = own_igemm(rig, &c, dir, p).map(|(times, launches)| Measured {
                    name: format!("{label} own implicit-GEMM"),
                    times,
                    launches,
                    complexity: cx,
                    datapath: Datapath::Fp32,
                    tags: base("own", "implicit-GEMM", false),
                });
                record(out, skipped, format!("{label} own implicit-GEMM"), own)?;
                let Some(handle) = &rig.cudnn else { continue };
                for &tensor in plan.tensor.settings() {
                    let group_start = out.len();
                    let mut best: Option<(f64, usize)> = None;
                    for (i, algo) in cudnn_algorithms(dir).iter().enumerate() {
                        let what = format!(
                            "{label} cuDNN {algo} tensor {}",
                            if tensor { "on" } else { "off" }
                        );
                        let algo_index = u32::try_from(i).unwrap_or(u32::MAX);
                        let times = match p {
                            Precision::Fp32 => cudnn_conv::<f32>(
                                rig,
                                handle,
                                &c,
                                dir,
                                tensor,
                                p,
                                algo_index,
                                (1.0, 0.0),
                            ),
                            Precision::Fp16 => cudnn_conv::<half::f16>(
                                rig,
                                handle,
                                &c,
                                dir,
                                tensor,
                                p,
                                algo_index,
                                (half::f16::ONE, half::f16::ZERO),
                            ),
                            Precision::Bf16 => cudnn_conv::<half::bf16>(
                                rig,
                                handle,
                                &c,
                                dir,
                                tensor,
                                p,
                                algo_index,
                                (half::bf16::ONE, half::bf16::ZERO),
                            ),
                        };
                        let m = times.map(|times| Measured {
                            name: what.clone(),
                            times,
                            launches: 1,
                            complexity: cx,
                            datapath: datapath(p, tensor),
                            tags: base("cudnn", algo, tensor),
                        });
                        if let Ok(m) = &m {
                            let t = median(&m.times);
                            if best.is_none_or(|(b, _)| t < b) {
                                best = Some((t, out.len()));
                            }
                        }
                        record(out, skipped, what, m)?;
                    }
                    if let Some((_, i)) = best {
                        out[i].tags.insert("fastest".into(), "true".into());
                    }
                    // Auto-tuning: the algorithm cuDNN's own search picks.
                    if let Some(dnn) = &rig.dnn {
                        let tensor_key = if tensor { "on" } else { "off" };
                        let what = format!("{label} cuDNN search tensor {tensor_key}");
                        match find_conv_algorithm(dnn, &c, dir, p, tensor) {
                            Ok(Some((algo, find_s))) => {
                                let name = usize::try_from(algo)
                                    .ok()
                                    .and_then(|a| cudnn_algorithms(dir).get(a))
                                    .copied()
                                    .unwrap_or("unknown");
                                let picked = out.iter_mut().skip(group_start).find(|m| {
                                    m.tags.get("implementation").map(String::as_str)
                                        == Some("cudnn")
                                        && m.tags.get("algorithm").map(String::as_str) == Some(name)
                                        && m.tags.get("tensor").map(String::as_str)
                                            == Some(tensor_key)
                                });
                                match picked {
                                    Some(m) => {
                                        m.tags.insert("autotuned".into(), "cudnnFind".into());
                                        m.tags.insert("cudnn_find_time_s".into(), format!("{find_s:e}"));
                                    }
                                    None => skipped.push(Skipped {
                                        what,
                                        reason: format!(
                                            "cuDNN's search picked {name}, which could not be timed here (see its own entry)"
                                        ),
                                    }),
                                }
                            }
                            Ok(None) => skipped.push(Skipped {
                                what,
                                reason: "cuDNN's search found no algorithm that runs".into(),
                            }),
                            Err(e) if e.is_out_of_memory() => skipped.push(Skipped {
                                what,
                                reason: format!("out of GPU memory: {e}"),
                            }),
                            Err(e) => skipped.push(Skipped {
                                what,
                                reason: format!("cuDNN refused it: {e}"),
                            }),
                        }
                    }
                }
            }
            bar.inc(1);
        }
    }
    Ok(())
}

fn lstm_study(
    rig: &Rig,
    plan: &Plan,
    out: &mut Vec<Measured>,
    skipped: &mut Vec<Skipped>,
    bar: &indicatif::ProgressBar,
) -> Result<(), SuiteError> {
    for case in dl::lstm_study() {
        let l = case.op;
        for &p in &plan.precisions {
            for &tensor in plan.tensor.settings() {
                let what = format!(
                    "lstm {}={} {} tensor {} own step-by-step",
                    case.parameter,
                    case.value,
                    p.key(),
                    if tensor { "on" } else { "off" }
                );
                let r = own_lstm(rig, &l, p, tensor).map(|times| Measured {
                    name: what.clone(),
                    times,
                    launches: l.step_by_step_launches(),
                    complexity: l.complexity(p.bytes()),
                    datapath: datapath(p, tensor),
                    tags: tags(&[
                        ("study", "lstm".into()),
                        ("parameter", case.parameter.into()),
                        ("value", case.value.to_string()),
                        ("precision", p.key().into()),
                        ("tensor", if tensor { "on" } else { "off" }.into()),
                        ("implementation", "own".into()),
                        ("algorithm", "cuBLASLt GEMM + fused cell per step".into()),
                        ("direction", "forward".into()),
                    ]),
                });
                record(out, skipped, what, r)?;
                let Some(handle) = &rig.dnn else { continue };
                let mut best: Option<(f64, usize)> = None;
                for algo in RnnAlgo::ALL {
                    let what = format!(
                        "lstm {}={} {} tensor {} cuDNN {}",
                        case.parameter,
                        case.value,
                        p.key(),
                        if tensor { "on" } else { "off" },
                        algo.key()
                    );
                    let r = cudnn_lstm(rig, handle, &l, p, tensor, algo).map(|times| Measured {
                        name: what.clone(),
                        times,
                        launches: 1,
                        complexity: l.complexity(p.bytes()),
                        datapath: datapath(p, tensor),
                        tags: tags(&[
                            ("study", "lstm".into()),
                            ("parameter", case.parameter.into()),
                            ("value", case.value.to_string()),
                            ("precision", p.key().into()),
                            ("tensor", if tensor { "on" } else { "off" }.into()),
                            ("implementation", "cudnn".into()),
                            ("algorithm", algo.key().into()),
                            ("direction", "forward".into()),
                        ]),
                    });
                    if let Ok(m) = &r {
                        let t = median(&m.times);
                        if best.is_none_or(|(b, _)| t < b) {
                            best = Some((t, out.len()));
                        }
                    }
                    record(out, skipped, what, r)?;
                }
                if let Some((_, i)) = best {
                    out[i].tags.insert("fastest".into(), "true".into());
                }
            }
        }
        bar.inc(1);
    }
    Ok(())
}

/// cuDNN's LSTM forward (inference mode) over the whole sequence with one algorithm.
fn cudnn_lstm(
    rig: &Rig,
    handle: &DnnHandle,
    l: &Lstm,
    p: Precision,
    tensor: bool,
    algo: RnnAlgo,
) -> Result<Vec<f64>, Failure> {
    let refused = |e: DnnError| {
        if e.is_out_of_memory() {
            Failure::Skip(format!("out of GPU memory: {e}"))
        } else {
            match e {
                DnnError::Alloc { .. } | DnnError::Context(_) => Failure::Fatal(SuiteError::Rnn(e)),
                _ => Failure::Skip(format!("cuDNN refused it: {e}")),
            }
        }
    };
    let mut lstm = CudnnLstm::new(handle, l, p, tensor, algo).map_err(refused)?;
    rig.time("cuDNN LSTM", |_| lstm.forward().map_err(refused))
}

/// One LSTM sequence, step by step: per step a cuBLASLt GEMM `[x_t, h_{t−1}] · W` into FP32
/// gates, then the fused cell kernel, which writes `h_t` back into the GEMM's input. The input
/// `x_t` is the same buffer every step (its values do not change the work).
fn own_lstm(rig: &Rig, l: &Lstm, p: Precision, tensor: bool) -> Result<Vec<f64>, Failure> {
    let spec = Spec::suite(p, tensor, true).ok_or_else(|| {
        Failure::Skip(format!(
            "cuBLASLt has no CUDA-core GEMM for {} inputs",
            p.key()
        ))
    })?;
    let g = l.step_gemm();
    let mut gemm = match Gemm::new(&rig.stream, spec, (g.m, g.n, g.k)) {
        Ok(gemm) => gemm,
        Err(e @ (BlasLtError::NoAlgorithm(_) | BlasLtError::Call { .. })) => {
            return Err(Failure::Skip(e.to_string()));
        }
        Err(e) => return Err(Failure::Fatal(e.into())),
    };
    let suffix = kernel_suffix(p);
    let cell = rig
        .dl
        .function(&format!("lstm_cell_{suffix}"))
        .map_err(SuiteError::from)?;
    let hidden = to_i32(l.hidden);
    let batch = to_i32(l.batch);
    let bias = alloc::<f32>(&rig.stream, (4 * l.hidden) as usize)?;
    let mut c = alloc::<f32>(&rig.stream, (l.batch * l.hidden) as usize)?;
    let h_off = l.input; // h sits after x in each row of [x, h]
    let h_ld = to_i32(l.input + l.hidden);
    let cfg = LaunchConfig {
        grid_dim: (
            u32::try_from((l.batch * l.hidden).div_ceil(128)).unwrap_or(1),
            1,
            1,
        ),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    let steps = l.seq;
    {
        let gemm = &mut gemm;
        let c = &mut c;
        let mut run = |r: &Rig| -> Result<(), Failure> {
            for _ in 0..steps {
                gemm.launch().map_err(|e| Failure::Skip(e.to_string()))?;
                let (a, d) = gemm.a_and_d();
                let mut b = r.stream.launch_builder(&cell);
                b.arg(d)
                    .arg(&bias)
                    .arg(&mut *c)
                    .arg(a)
                    .arg(&batch)
                    .arg(&hidden)
                    .arg(&h_off)
                    .arg(&h_ld);
                // SAFETY: argument types and order match `lstm_cell_*`; the gates are FP32
                // batch × 4·hidden, the [x, h] buffer holds batch rows of input + hidden
                // elements in the storage type.
                #[allow(unsafe_code)]
                unsafe { b.launch(cfg) }
                    .map(drop)
                    .map_err(|e| Failure::Fatal(drv("launching lstm_cell")(e)))?;
            }
            Ok(())
        };
        rig.time("LSTM", |r| run(r))
    }
}

fn gemm_study(
    rig: &Rig,
    plan: &Plan,
    out: &mut Vec<Measured>,
    skipped: &mut Vec<Skipped>,
    bar: &indicatif::ProgressBar,
) -> Result<(), SuiteError> {
    for case in dl::gemm_study() {
        let g = case.op;
        for &p in &plan.precisions {
            for &tensor in plan.tensor.settings() {
                let what = format!(
                    "gemm {}³ {} tensor {} cuBLASLt",
                    case.value,
                    p.key(),
                    if tensor { "on" } else { "off" }
                );
                let r = (|| {
                    let spec = Spec::suite(p, tensor, false).ok_or_else(|| {
                        Failure::Skip(format!(
                            "cuBLASLt has no CUDA-core GEMM for {} inputs",
                            p.key()
                        ))
                    })?;
                    let mut gemm = match Gemm::new(&rig.stream, spec, (g.m, g.n, g.k)) {
                        Ok(gemm) => gemm,
                        Err(e @ (BlasLtError::NoAlgorithm(_) | BlasLtError::Call { .. })) => {
                            return Err(Failure::Skip(e.to_string()));
                        }
                        Err(BlasLtError::Alloc { source, .. })
                            if source.0
                                == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY =>
                        {
                            return Err(Failure::Skip("out of GPU memory".into()));
                        }
                        Err(e) => return Err(Failure::Fatal(e.into())),
                    };
                    let times = rig.time("GEMM", |_| {
                        gemm.launch().map_err(|e| Failure::Skip(e.to_string()))
                    })?;
                    Ok(Measured {
                        name: what.clone(),
                        times,
                        launches: 1,
                        complexity: g.complexity(p.bytes()),
                        datapath: datapath(p, tensor),
                        tags: tags(&[
                            ("study", "gemm".into()),
                            ("parameter", case.parameter.into()),
                            ("value", case.value.to_string()),
                            ("precision", p.key().into()),
                            ("tensor", if tensor { "on" } else { "off" }.into()),
                            ("implementation", "cublaslt".into()),
                            ("algorithm", spec.label.into()),
                        ]),
                    })
                })();
                record(out, skipped, what, r)?;
            }
        }
        bar.inc(1);
    }
    Ok(())
}

/// Runs the plan on device `ordinal`. `machine` (from `--machine`) provides the device entry and
/// ceilings; it must describe this GPU. Fatal errors stop the run and the bundle so far is
/// returned marked incomplete.
///
/// # Errors
/// Setting up the context or compiling the kernels failed; a `--machine` for another GPU.
pub fn run(
    ordinal: usize,
    plan: &Plan,
    provenance: Provenance,
    machine: Option<Bundle>,
) -> Result<Outcome, SuiteError> {
    let started = Instant::now();
    let ctx = CudaContext::new(ordinal).map_err(drv("creating the CUDA context"))?;
    // SAFETY: every buffer is used on the one stream created below.
    #[allow(unsafe_code)]
    unsafe {
        ctx.disable_event_tracking();
    }
    let stream = ctx.new_stream().map_err(drv("creating a stream"))?;
    let cc = ctx
        .compute_capability()
        .map_err(drv("reading the compute capability"))?;
    let name = ctx.name().map_err(drv("reading the device name"))?;
    let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut skipped = Vec::new();
    // SAFETY: only tries to dlopen the library by name.
    #[allow(unsafe_code)]
    let cudnn_present = unsafe { dnn::is_culib_present() };
    let cudnn = if cudnn_present {
        match Cudnn::new(Arc::clone(&stream)) {
            Ok(h) => Some(h),
            Err(e) => {
                skipped.push(Skipped {
                    what: "every cuDNN convolution".into(),
                    reason: format!("cuDNN could not start: {:?}", e.0),
                });
                None
            }
        }
    } else {
        skipped.push(Skipped {
            what: "every cuDNN convolution".into(),
            reason: "libcudnn could not be loaded (install cuDNN or add it to LD_LIBRARY_PATH)"
                .into(),
        });
        None
    };
    let dnn = if cudnn_present {
        match DnnHandle::new(Arc::clone(&stream)) {
            Ok(h) => Some(h),
            Err(e) => {
                skipped.push(Skipped {
                    what: "every cuDNN LSTM and convolution search".into(),
                    reason: format!("cuDNN could not start: {e}"),
                });
                None
            }
        }
    } else {
        skipped.push(Skipped {
            what: "every cuDNN LSTM and convolution search".into(),
            reason: "libcudnn could not be loaded (install cuDNN or add it to LD_LIBRARY_PATH)"
                .into(),
        });
        None
    };
    let rig = Rig {
        start: ctx.new_event(timing).map_err(drv("creating an event"))?,
        end: ctx.new_event(timing).map_err(drv("creating an event"))?,
        dl: kernels::compile(&ctx, Source::Dl, &kernels::arch_name(cc.0, cc.1))?,
        cudnn,
        dnn,
        stream,
    };
    let (mut bundle, device_id) = match machine {
        Some(mut m) => {
            let Some(d) = m.devices.iter().find(|d| d.name == name) else {
                return Err(SuiteError::Driver {
                    during: format!(
                        "--machine describes {}, not this GPU ({name})",
                        m.devices
                            .iter()
                            .map(|d| d.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    source: DriverError(
                        cudarc::driver::sys::cudaError_enum::CUDA_ERROR_INVALID_DEVICE,
                    ),
                });
            };
            let id = d.id.clone();
            m.provenance = provenance;
            m.kernels.clear();
            m.skipped.clear();
            m.notes = vec!["devices and machines copied from the --machine bundle".into()];
            (m, id)
        }
        None => {
            let mut b = Bundle::new(provenance);
            let mut d = Device::new(format!("gpu{ordinal}"), name.clone());
            d.compute_capability = Some(format!("{}.{}", cc.0, cc.1));
            b.devices.push(d);
            b.notes.push(
                "no --machine given: the bundle has no ceilings, so no time-based bound; merge a \
                 `roofline machine` bundle or open one beside it in the viewer"
                    .into(),
            );
            (b, format!("gpu{ordinal}"))
        }
    };
    bundle.description = Some(format!(
        "roofline suite on {name}: the time-based roofline study (Wang et al. 2020)"
    ));
    let mut measured = Vec::new();
    let mut failure = None;
    for study in &plan.studies {
        let (len, title) = match study {
            Study::Conv2d => (dl::conv2d_study().len() * 3, "conv2d"),
            Study::Lstm => (dl::lstm_study().len(), "LSTM"),
            Study::Gemm => (dl::gemm_study().len(), "GEMM"),
        };
        let bar = progress::bar(len as u64, title);
        let r = match study {
            Study::Conv2d => conv_study(&rig, plan, &mut measured, &mut skipped, &bar),
            Study::Lstm => lstm_study(&rig, plan, &mut measured, &mut skipped, &bar),
            Study::Gemm => gemm_study(&rig, plan, &mut measured, &mut skipped, &bar),
        };
        bar.finish_and_clear();
        if let Err(e) = r {
            failure = Some(e);
            break;
        }
    }
    let wall_s = started.elapsed().as_secs_f64();
    bundle.kernels = measured
        .into_iter()
        .map(|m| m.into_kernel(&device_id))
        .collect();
    bundle.skipped.extend(skipped);
    bundle
        .notes
        .push(format!("wall time of the run: {wall_s:.1} s"));
    bundle.notes.push(
        "cuDNN entries (convolutions and LSTMs) count 1 launch per call, a lower bound: most \
         algorithms launch several kernels (an LSTM's standard algorithm one or more per time \
         step); profile them to know n"
            .into(),
    );
    if let Some(e) = &failure {
        bundle.notes.push(format!("incomplete: {e}"));
    }
    bundle.complete = failure.is_none();
    Ok(Outcome {
        bundle,
        failure,
        wall_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_or_say_what_is_accepted() {
        assert_eq!(Study::parse("all").unwrap().len(), 3);
        assert_eq!(Study::parse("lstm").unwrap(), [Study::Lstm]);
        assert!(
            Study::parse("rnn")
                .unwrap_err()
                .contains("conv2d, lstm, gemm or all")
        );
        assert_eq!(TensorMode::parse("both").unwrap().settings(), [true, false]);
        assert!(
            TensorMode::parse("yes")
                .unwrap_err()
                .contains("on, off or both")
        );
        let p = parse_precisions(&["fp16".into(), "fp32".into(), "fp16".into()]).unwrap();
        assert_eq!(p, [Precision::Fp16, Precision::Fp32]);
        assert!(
            parse_precisions(&["fp8".into()])
                .unwrap_err()
                .contains("fp8")
        );
    }

    #[test]
    fn configurations_map_to_datapaths() {
        assert_eq!(datapath(Precision::Fp32, true), Datapath::TensorTf32);
        assert_eq!(datapath(Precision::Bf16, false), Datapath::Bf16);
    }

    /// Fixed unit-test inputs (not measurements): an entry carries median time, n, F on its
    /// datapath, B, and the spread; the time-based analysis then bounds it.
    #[test]
    fn measured_entries_become_bounded_kernels() {
        use roofline_model::bundle::{
            BandwidthCeiling, ComputeCeiling, LaunchOverhead, Machine, MemoryLevel, Method,
        };
        let g = dl::Gemm {
            m: 1024,
            n: 1024,
            k: 1024,
        };
        let m = Measured {
            name: "gemm 1024³ fp16 tensor on cuBLASLt".into(),
            times: vec![3e-5, 1e-5, 2e-5],
            launches: 1,
            complexity: g.complexity(2.0),
            datapath: Datapath::TensorFp16,
            tags: tags(&[("study", "gemm".into())]),
        };
        let k = m.into_kernel("gpu0");
        assert_eq!(k.time.total_s, 2e-5);
        assert_eq!(
            k.flops.get(Datapath::TensorFp16),
            Some(2.0 * 1024f64.powi(3))
        );
        assert_eq!(k.tags["repeats"], "3");
        assert_eq!(k.tags["time_min_s"], "1e-5");
        let mut b = Bundle::new(Provenance::default());
        b.devices.push(Device::new("gpu0", "Unit-test GPU"));
        let mut mach = Machine {
            device: "gpu0".into(),
            ..Machine::default()
        };
        mach.compute.push(ComputeCeiling::new(
            Datapath::TensorFp16,
            500e12,
            Method::Empirical,
        ));
        mach.bandwidth.push(BandwidthCeiling::new(
            MemoryLevel::Hbm,
            3e12,
            Method::Empirical,
        ));
        mach.launch_overhead = Some(LaunchOverhead::new(4e-6, Method::Empirical));
        b.machines.push(mach);
        b.kernels.push(k);
        roofline_model::validate(&b).unwrap();
        let a = roofline_model::analysis::analyze(&b, &b.kernels);
        let bound = a[0].time_bound.unwrap();
        // F / P = 2^31 / 5e14 = 4.3 µs; B / BW = 6 MiB / 3e12 = 2.1 µs; n·t_launch = 4 µs.
        assert!((bound.bound_s - 2.0 * 1024f64.powi(3) / 500e12).abs() < 1e-12);
        assert_eq!(bound.region, roofline_model::time_based::Region::Compute);
    }

    #[test]
    fn implicit_gemm_shapes_do_the_convolution_s_work() {
        for case in dl::conv2d_study() {
            let c = case.op;
            let f = |dir| {
                let (m, n, k) = implicit_gemm_shape(&c, dir);
                2.0 * (m * n * k) as f64
            };
            // Forward and backward-filter multiply exactly the analytical F.
            assert_eq!(f(Direction::Forward), c.flops(), "{case:?}");
            assert_eq!(f(Direction::BackwardFilter), c.flops(), "{case:?}");
            // Backward-data walks every (h, w) and filter tap, zeros included: F·H·W/(P·Q),
            // i.e. about stride² times F, the waste the time-based chart then shows as a gap.
            let ratio = (c.h * c.w) as f64 / (c.p() * c.q()) as f64;
            let bwd = f(Direction::BackwardData);
            assert!((bwd / c.flops() - ratio).abs() < 1e-9, "{case:?}");
        }
    }

    #[test]
    fn implicit_gemm_splits_the_reduction_only_when_tiles_are_few() {
        // Base case forward: 16·56·56 output pixels × 64 filters, 784 tiles, no split.
        let base = dl::conv2d_study()
            .into_iter()
            .find(|c| c.parameter == "stride" && c.value == 2)
            .map(|c| c.op)
            .expect("the study has the base case");
        let (m, n, k) = implicit_gemm_shape(&base, Direction::Forward);
        assert_eq!((m, n, k), (16 * 56 * 56, 64, 576));
        assert_eq!(implicit_gemm_grid((m, n, k)), (1, 784, 1));
        // Backward-filter: 64 × 576 output, 9 tiles, a 50 176-long reduction split 57 ways.
        // (512 / 9 blocks, rounded up.)
        let (m, n, k) = implicit_gemm_shape(&base, Direction::BackwardFilter);
        assert_eq!((m, n), (64, 576));
        assert_eq!(implicit_gemm_grid((m, n, k)), (9, 1, 57));
        // A short reduction is never cut below 256 elements per split.
        assert_eq!(implicit_gemm_grid((64, 64, 600)), (1, 1, 3));
        assert_eq!(implicit_gemm_grid((0, 0, 0)), (0, 0, 1));
    }

    #[test]
    fn own_convolution_kernels_are_entry_points_of_dl_cu() {
        let listed = Source::Dl.entry_points();
        for dir in Direction::ALL {
            for p in [Precision::Fp32, Precision::Fp16, Precision::Bf16] {
                for prefix in ["conv", "igemm"] {
                    let name = conv_kernel_name(prefix, dir, p);
                    assert!(listed.contains(&name.as_str()), "{name}");
                }
                let sum = format!("conv_sum_{}", kernel_suffix(p));
                assert!(listed.contains(&sum.as_str()), "{sum}");
            }
        }
    }

    #[test]
    fn cudnn_algorithm_lists_match_the_enums() {
        assert_eq!(
            cudnn_algorithms(Direction::Forward).len(),
            dnn::cudnnConvolutionFwdAlgo_t::CUDNN_CONVOLUTION_FWD_ALGO_COUNT as usize
        );
        assert_eq!(
            cudnn_algorithms(Direction::BackwardData).len(),
            dnn::cudnnConvolutionBwdDataAlgo_t::CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT as usize
        );
        assert_eq!(
            cudnn_algorithms(Direction::BackwardFilter).len(),
            dnn::cudnnConvolutionBwdFilterAlgo_t::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT as usize
        );
    }
}
