//! The launchers of our own DL kernels (`kernels/dl.cu`), which `roofline suite` times beside
//! cuDNN and cuBLASLt: the direct and implicit-GEMM convolutions ([`OwnConv`], with the split-K
//! sum [`ConvSum`] when the reduction is split) and the fused LSTM cell of one step
//! ([`LstmCell`], launched per step as an [`LstmStep`]). Their work is the operation's
//! analytical complexity (`roofline_model::analysis::dl`), which the suite attaches: a launch reports none.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig};
use roofline_kernels::{DlOp, IG_TILE, Kernel, LaunchWork};
use roofline_model::analysis::dl::{Conv2d, Direction, Precision};

use super::{Args, Launcher, check_len, launch_one, one_per_element};
use crate::compiled::Compiled;
use crate::session::{DeviceError, Session};

fn to_i32(v: u64) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// The geometry arguments every `dl.cu` convolution takes, in order: N, H, W, C, K, R, S, P, Q,
/// stride, pad.
pub fn conv_geometry(c: &Conv2d) -> [i32; 11] {
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

/// The `dl.cu` family of a convolution direction: direct or implicit-GEMM.
pub fn conv_op(implicit_gemm: bool, dir: Direction) -> DlOp {
    match (implicit_gemm, dir) {
        (false, Direction::Forward) => DlOp::ConvFwd,
        (false, Direction::BackwardData) => DlOp::ConvBwdData,
        (false, Direction::BackwardFilter) => DlOp::ConvBwdFilter,
        (true, Direction::Forward) => DlOp::IgemmFwd,
        (true, Direction::BackwardData) => DlOp::IgemmBwdData,
        (true, Direction::BackwardFilter) => DlOp::IgemmBwdFilter,
    }
}

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

/// Grid `(tiles along Ng, tiles along M, splits)` of [`IG_TILE`]-square output tiles: the
/// reduction is split when the tiles alone give fewer than [`IG_TARGET_BLOCKS`] blocks, keeping
/// at least [`IG_MIN_PER_SPLIT`] reduction elements per split and at most 64 splits.
pub fn implicit_gemm_grid((m, ng, kg): (u64, u64, u64)) -> (u64, u64, u64) {
    let tile = u64::from(IG_TILE);
    let (gx, gy) = (ng.div_ceil(tile), m.div_ceil(tile));
    let splits = IG_TARGET_BLOCKS
        .div_ceil((gx * gy).max(1))
        .min(kg.div_ceil(IG_MIN_PER_SPLIT))
        .clamp(1, 64);
    (gx, gy, splits)
}

/// Bytes of x, w and y of `c` in precision `p`.
pub fn tensor_bytes(c: &Conv2d, p: Precision) -> [u64; 3] {
    let (x, w, y) = c.elements();
    [x, w, y].map(|e| (e * p.bytes()) as u64)
}

/// A convolution's tensors by their forward names: x (dx backward-data), w (dw
/// backward-filter), y (dy in both backward directions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvTensor {
    /// The input, N×H×W×C.
    X,
    /// The filters, K×R×S×C.
    W,
    /// The output, N×P×Q×K.
    Y,
}

/// The two tensors a convolution direction reads, ours and cuDNN's alike (the third it only
/// writes, with β = 0): forward x and w, backward-data dy and w, backward-filter x and dy.
pub fn conv_inputs(dir: Direction) -> [ConvTensor; 2] {
    match dir {
        Direction::Forward => [ConvTensor::X, ConvTensor::W],
        Direction::BackwardData => [ConvTensor::Y, ConvTensor::W],
        Direction::BackwardFilter => [ConvTensor::X, ConvTensor::Y],
    }
}

/// The most products a convolution direction sums into one output element: the reduction of
/// its implicit GEMM ([`implicit_gemm_shape`]), R·S·C forward, R·S·K backward-data, N·P·Q
/// backward-filter.
pub fn reduction_depth(c: &Conv2d, dir: Direction) -> u64 {
    implicit_gemm_shape(c, dir).2
}

/// Buffers of a convolution in the storage type: x (or dx), w (or dw), y (or dy), in the order
/// every `dl.cu` convolution takes them.
pub struct ConvTensors {
    /// N·H·W·C elements.
    pub x: CudaSlice<u8>,
    /// K·R·S·C elements.
    pub w: CudaSlice<u8>,
    /// N·P·Q·K elements.
    pub y: CudaSlice<u8>,
}

impl ConvTensors {
    /// Tensors for `c` in precision `p`, zero-filled: the suite then fills the ones a direction
    /// reads ([`conv_inputs`], [`ConvTensors::get`]) with real data.
    ///
    /// # Errors
    /// The driver's error (out of memory among them).
    pub fn new(s: &Session, c: &Conv2d, p: Precision) -> Result<Self, DeviceError> {
        let [x, w, y] = tensor_bytes(c, p).map(|b| b as usize);
        Ok(ConvTensors {
            x: s.alloc_zeros::<u8>(x, "the convolution's input")?,
            w: s.alloc_zeros::<u8>(w, "the convolution's filters")?,
            y: s.alloc_zeros::<u8>(y, "the convolution's output")?,
        })
    }

    /// One of the tensors.
    pub fn get(&self, t: ConvTensor) -> &CudaSlice<u8> {
        match t {
            ConvTensor::X => &self.x,
            ConvTensor::W => &self.w,
            ConvTensor::Y => &self.y,
        }
    }

    fn check(&self, kernel: Kernel, c: &Conv2d, p: Precision) -> Result<(), DeviceError> {
        let [x, w, y] = tensor_bytes(c, p);
        check_len(kernel, "x", self.x.len(), x)?;
        check_len(kernel, "w", self.w.len(), w)?;
        check_len(kernel, "y", self.y.len(), y)
    }
}

/// Our own convolution of `dl.cu`: direct (one launch, one thread per output element) or
/// implicit-GEMM (one launch, and a `conv_sum_*` launch when the reduction is split).
pub struct OwnConv<'b> {
    kernel: Kernel,
    f: CudaFunction,
    cfg: LaunchConfig,
    dims: [i32; 11],
    tensors: &'b ConvTensors,
    split: Option<SplitK>,
    dir: Direction,
}

/// The split-K part of an implicit-GEMM launch.
struct SplitK {
    splits: i32,
    partial: CudaSlice<f32>,
    count: u64,
    sum: CudaFunction,
    sum_kernel: Kernel,
    sum_cfg: LaunchConfig,
}

impl<'b> OwnConv<'b> {
    /// The direct (`implicit_gemm` false) or implicit-GEMM kernel of `dir` in precision `p`.
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] when the tensors do not fit `c`; the driver's error
    /// allocating the split-K partial sums.
    pub fn new(
        s: &Session,
        compiled: &Compiled,
        c: &Conv2d,
        dir: Direction,
        p: Precision,
        implicit_gemm: bool,
        tensors: &'b ConvTensors,
    ) -> Result<Self, DeviceError> {
        let kernel = Kernel::Dl(conv_op(implicit_gemm, dir), p);
        tensors.check(kernel, c, p)?;
        let f = compiled.function(kernel.entry())?;
        let dims = conv_geometry(c);
        if !implicit_gemm {
            let (xe, we, ye) = c.elements();
            let outputs = match dir {
                Direction::Forward => ye,
                Direction::BackwardData => xe,
                Direction::BackwardFilter => we,
            } as u64;
            return Ok(OwnConv {
                kernel,
                f,
                cfg: one_per_element(outputs, 256),
                dims,
                tensors,
                split: None,
                dir,
            });
        }
        let shape = implicit_gemm_shape(c, dir);
        let (gx, gy, splits) = implicit_gemm_grid(shape);
        let count = shape.0 * shape.1;
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from(gx).unwrap_or(u32::MAX),
                u32::try_from(gy).unwrap_or(u32::MAX),
                u32::try_from(splits).unwrap_or(1),
            ),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let sum_kernel = Kernel::Dl(DlOp::ConvSum, p);
        let partial_len = if splits > 1 {
            (splits * count) as usize
        } else {
            1
        };
        Ok(OwnConv {
            kernel,
            f,
            cfg,
            dims,
            tensors,
            split: Some(SplitK {
                splits: to_i32(splits),
                partial: s.alloc_zeros::<f32>(partial_len, "the split-K partial sums")?,
                count,
                sum: compiled.function(sum_kernel.entry())?,
                sum_kernel,
                sum_cfg: one_per_element(count, 256),
            }),
            dir,
        })
    }

    /// Kernel launches per run: 2 when an implicit-GEMM reduction is split, else 1.
    pub fn launches(&self) -> u64 {
        match &self.split {
            Some(k) if k.splits > 1 => 2,
            _ => 1,
        }
    }

    /// The split-K sum of the partials into `out` (the convolution's output), when the
    /// reduction is split.
    fn sum(&self) -> Option<ConvSum<'_>> {
        let t = self.tensors;
        // The output is the tensor in the third slot for forward, the first for backward-data
        // and the second for backward-filter.
        let out = match self.dir {
            Direction::Forward => &t.y,
            Direction::BackwardData => &t.x,
            Direction::BackwardFilter => &t.w,
        };
        self.split
            .as_ref()
            .filter(|k| k.splits > 1)
            .map(|split| ConvSum { split, out })
    }
}

impl Launcher for OwnConv<'_> {
    fn kernel(&self) -> Kernel {
        self.kernel
    }

    fn function(&self) -> &CudaFunction {
        &self.f
    }

    fn config(&self) -> LaunchConfig {
        self.cfg
    }

    fn work(&self) -> LaunchWork {
        LaunchWork::default()
    }

    fn push<'a>(&'a self, _: &'a Session, a: &mut Args<'a, '_>) {
        let t = self.tensors;
        // Operand order per kernel: forward (x, w, y), backward-data (dx, w, dy),
        // backward-filter (x, dw, dy); then N, H, W, C, K, R, S, P, Q, stride, pad; the
        // implicit-GEMM kernels then take (partial, splits).
        a.arg(&t.x).arg(&t.w).arg(&t.y);
        for d in &self.dims {
            a.arg(d);
        }
        if let Some(k) = &self.split {
            a.arg(&k.partial).arg(&k.splits);
        }
    }

    /// One run: the convolution, then the split-K sum ([`ConvSum`]) when the reduction is split.
    fn launch(&self, s: &Session) -> Result<(), DeviceError> {
        launch_one(s, self)?;
        if let Some(sum) = self.sum() {
            sum.launch(s)?;
        }
        Ok(())
    }
}

/// `conv_sum_*`: the split-K partial sums of an implicit-GEMM convolution added into its output,
/// one thread per output element (launched by [`OwnConv`]'s run).
pub struct ConvSum<'c> {
    split: &'c SplitK,
    out: &'c CudaSlice<u8>,
}

impl Launcher for ConvSum<'_> {
    fn kernel(&self) -> Kernel {
        self.split.sum_kernel
    }

    fn function(&self) -> &CudaFunction {
        &self.split.sum
    }

    fn config(&self) -> LaunchConfig {
        self.split.sum_cfg
    }

    fn work(&self) -> LaunchWork {
        LaunchWork::default()
    }

    fn push<'a>(&'a self, _: &'a Session, a: &mut Args<'a, '_>) {
        let k = self.split;
        // conv_sum_*(partial, out, count, splits)
        a.arg(&k.partial).arg(self.out).arg(&k.count).arg(&k.splits);
    }
}

/// The fused LSTM cell of one step, `lstm_cell_*`: FP32 gates (batch × 4·hidden) and bias
/// (4·hidden), the FP32 cell state (batch × hidden, updated), and `h_t` written into the next
/// step's `[x, h]` input (batch rows of `input + hidden` elements in the storage type).
pub struct LstmCell {
    kernel: Kernel,
    f: CudaFunction,
    cfg: LaunchConfig,
    batch: i32,
    hidden: i32,
    h_off: u64,
    h_ld: i32,
    bias: CudaSlice<f32>,
    c: CudaSlice<f32>,
    gates_bytes: u64,
    xh_bytes: u64,
}

impl LstmCell {
    /// The cell for `batch × hidden` in precision `p`, `input` elements of x before h in each
    /// row of `[x, h]`; allocates the bias and cell state, zero-filled (the suite fills both:
    /// [`LstmCell::inputs`]).
    ///
    /// # Errors
    /// The driver's error.
    pub fn new(
        s: &Session,
        compiled: &Compiled,
        p: Precision,
        batch: u64,
        hidden: u64,
        input: u64,
    ) -> Result<Self, DeviceError> {
        let kernel = Kernel::Dl(DlOp::LstmCell, p);
        Ok(LstmCell {
            kernel,
            f: compiled.function(kernel.entry())?,
            cfg: one_per_element(batch * hidden, 128),
            batch: to_i32(batch),
            hidden: to_i32(hidden),
            h_off: input,
            h_ld: to_i32(input + hidden),
            bias: s.alloc_zeros::<f32>((4 * hidden) as usize, "the LSTM bias")?,
            c: s.alloc_zeros::<f32>((batch * hidden) as usize, "the LSTM cell state")?,
            gates_bytes: batch * 4 * hidden * 4,
            xh_bytes: ((batch * (input + hidden)) as f64 * p.bytes()) as u64,
        })
    }

    /// What the cell reads besides the gates: the bias (4·hidden) and the cell state
    /// (batch × hidden, updated in place), both FP32, for the caller to fill with real data.
    pub fn inputs(&self) -> [&CudaSlice<f32>; 2] {
        [&self.bias, &self.c]
    }

    /// One step's launch: `gates` (FP32) in, `xh` (`[x, h]` rows) updated, with the cell state.
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] for buffers too small.
    pub fn step<'c>(
        &'c mut self,
        gates: &'c CudaSlice<u8>,
        xh: &'c mut CudaSlice<u8>,
    ) -> Result<LstmStep<'c>, DeviceError> {
        check_len(self.kernel, "the gates", gates.len(), self.gates_bytes)?;
        check_len(self.kernel, "[x, h]", xh.len(), self.xh_bytes)?;
        Ok(LstmStep {
            cell: self,
            gates,
            xh,
        })
    }
}

/// One step of the fused LSTM cell ([`LstmCell::step`]): its buffers checked, ready to launch.
pub struct LstmStep<'c> {
    cell: &'c mut LstmCell,
    gates: &'c CudaSlice<u8>,
    xh: &'c mut CudaSlice<u8>,
}

impl Launcher for LstmStep<'_> {
    fn kernel(&self) -> Kernel {
        self.cell.kernel
    }

    fn function(&self) -> &CudaFunction {
        &self.cell.f
    }

    fn config(&self) -> LaunchConfig {
        self.cell.cfg
    }

    fn work(&self) -> LaunchWork {
        LaunchWork::default()
    }

    fn push<'a>(&'a self, _: &'a Session, a: &mut Args<'a, '_>) {
        let c = &*self.cell;
        // lstm_cell_*(gates, bias, c, h_out, batch, hidden, h_off, h_ld)
        a.arg(self.gates)
            .arg(&c.bias)
            .arg(&c.c)
            .arg(&*self.xh)
            .arg(&c.batch)
            .arg(&c.hidden)
            .arg(&c.h_off)
            .arg(&c.h_ld);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implicit_gemm_shapes_do_the_convolution_s_work() {
        for case in roofline_model::analysis::dl::conv2d_study() {
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

    /// Each direction reads two tensors and writes the third; its reduction depth is the
    /// implicit GEMM's (for the base case: 576 forward and backward-data, 50,176 backward-filter).
    #[test]
    fn each_direction_reads_two_tensors_and_writes_the_third() {
        let base = roofline_model::analysis::dl::conv2d_study()[1].op;
        assert_eq!((base.stride, base.n, base.r), (2, 16, 3));
        for dir in Direction::ALL {
            let read = conv_inputs(dir);
            assert_ne!(read[0], read[1], "{dir:?}");
            // The output, which the direct kernel and the split-K sum write, is never read.
            let written = match dir {
                Direction::Forward => ConvTensor::Y,
                Direction::BackwardData => ConvTensor::X,
                Direction::BackwardFilter => ConvTensor::W,
            };
            assert!(!read.contains(&written), "{dir:?}");
        }
        assert_eq!(reduction_depth(&base, Direction::Forward), 3 * 3 * 64);
        assert_eq!(reduction_depth(&base, Direction::BackwardData), 3 * 3 * 64);
        assert_eq!(
            reduction_depth(&base, Direction::BackwardFilter),
            16 * 56 * 56
        );
    }

    #[test]
    fn implicit_gemm_splits_the_reduction_only_when_tiles_are_few() {
        assert_eq!(IG_TILE, 64, "the hand counts below assume 64 × 64 tiles");
        // Base case forward: 16·56·56 output pixels × 64 filters, 784 tiles, no split.
        let base = roofline_model::analysis::dl::conv2d_study()
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
        let listed = roofline_kernels::Source::Dl.entry_points();
        for dir in Direction::ALL {
            for p in Precision::ALL {
                for igemm in [false, true] {
                    let k = Kernel::Dl(conv_op(igemm, dir), p);
                    assert!(listed.contains(&k.entry()), "{k:?}");
                }
            }
        }
        assert_eq!(
            Kernel::Dl(conv_op(true, Direction::BackwardData), Precision::Bf16).entry(),
            "igemm_bwd_data_bf16"
        );
        assert_eq!(
            Kernel::Dl(conv_op(false, Direction::Forward), Precision::Fp16).entry(),
            "conv_fwd_f16"
        );
    }
}
