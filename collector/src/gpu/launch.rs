//! Typed launchers: one safe type per kernel family of `kernels/`, each checking its arguments
//! against its kernel (the family, the buffers' sizes) when built, launching with the argument
//! list its entry point declares, and saying what one launch does ([`LaunchWork`]: FLOPs on a
//! datapath, bytes at a memory level) from the kernel's work formula ([`Kernel::work`], built
//! from the constants NVRTC compiles the kernel with) and the launch's geometry. The one
//! `unsafe` kernel launch of the collector is the private `launch` function, here.
//!
//! The counts, per launch:
//! - FMA peaks: `work.flops_per_iteration() × iterations × threads`;
//! - `mma.sync` peaks: `work.flops_per_iteration() × iterations × warps` (the formula counts per
//!   warp);
//! - grid-stride memory kernels (HBM, L2): `elements × work.bytes_per_element() × repeats`;
//! - per-thread memory kernels (L1, shared): `threads × repeats × work.bytes_per_thread_iteration()`;
//! - the ERT-style sweep: `repeats × elements × lanes × max(1, 2·fmas)` FLOPs and
//!   `repeats × elements × work.bytes_per_element()` bytes;
//! - the DL kernels: their work is the operation's analytical complexity
//!   ([`roofline_model::dl`]), which the suite attaches; a launch reports none.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchArgs, LaunchConfig, PushKernelArg};
use roofline_model::bundle::{Datapath, MemoryLevel};
use roofline_model::dl::{Conv2d, Direction, Precision};

use super::session::{DeviceError, Session, driver};
use crate::gpu::kernels::{Compiled, DlOp, IG_TILE, Kernel, VECTOR_BYTES, Work};

/// What one launch does.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LaunchWork {
    /// FLOPs, on one datapath.
    pub flops: Option<(Datapath, f64)>,
    /// Bytes moved; see [`LaunchWork::level`].
    pub bytes: f64,
    /// The level `bytes` are counted at: the one the kernel targets; `None` for the sweep (the
    /// working set decides) and for kernels that move nothing they count.
    pub level: Option<MemoryLevel>,
}

impl LaunchWork {
    /// The FLOPs (0 when none are counted).
    pub fn flop_count(&self) -> f64 {
        self.flops.map_or(0.0, |(_, f)| f)
    }
}

/// The class of one kernel parameter: what a launcher pushes, and what the entry point
/// declares (C type in `kernels/*.cu`; PTX `.param` type once compiled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// A device pointer (`T*`).
    Ptr,
    /// `unsigned long long`.
    U64,
    /// `int`.
    I32,
    /// `unsigned int`.
    U32,
    /// `float`.
    F32,
    /// `double`.
    F64,
}

impl Param {
    /// The PTX `.param` type NVRTC declares for it (pointers are 64-bit integers there, and
    /// PTX does not tell `int` from `unsigned int`).
    pub fn ptx(self) -> &'static str {
        match self {
            Param::Ptr | Param::U64 => ".u64",
            Param::I32 | Param::U32 => ".u32",
            Param::F32 => ".f32",
            Param::F64 => ".f64",
        }
    }
}

/// The parameter list `kernel`'s entry point declares, in order: what its launcher must push.
pub fn params(kernel: Kernel) -> Vec<Param> {
    use Param::{F32, F64, I32, Ptr, U32, U64};
    let conv = || [[Ptr; 3].as_slice(), [I32; 11].as_slice()].concat();
    match kernel {
        Kernel::HbmRead => vec![Ptr, U64, Ptr, F32, Ptr],
        Kernel::HbmWrite => vec![Ptr, U64, F32, Ptr],
        Kernel::HbmCopy => vec![Ptr, Ptr, U64, Ptr],
        Kernel::L2Read => vec![Ptr, U64, I32, Ptr, F32, Ptr],
        Kernel::L1Read => vec![Ptr, U32, I32, Ptr, F32, Ptr],
        Kernel::SharedRead => vec![U32, I32, Ptr, F32, Ptr],
        Kernel::FmaF64 => vec![F64, F64, I32, Ptr, F64, Ptr],
        Kernel::FmaF32 => vec![F32, F32, I32, Ptr, F32, Ptr],
        Kernel::FmaF16x2 | Kernel::FmaBf16x2 => vec![U32, U32, I32, Ptr, U32, Ptr],
        Kernel::Empty => vec![],
        Kernel::MmaInt8 => vec![I32, Ptr, I32, Ptr],
        Kernel::MmaF64 => vec![I32, Ptr, F64, Ptr],
        Kernel::MmaF16 | Kernel::MmaBf16 | Kernel::MmaTf32 | Kernel::MmaFp8 => {
            vec![I32, Ptr, F32, Ptr]
        }
        Kernel::ErtF32 => vec![Ptr, U64, I32, I32, F32, Ptr],
        Kernel::ErtF64 => vec![Ptr, U64, I32, I32, F64, Ptr],
        Kernel::Dl(op, _) => match op {
            DlOp::ConvFwd | DlOp::ConvBwdData | DlOp::ConvBwdFilter => conv(),
            DlOp::IgemmFwd | DlOp::IgemmBwdData | DlOp::IgemmBwdFilter => {
                [conv(), vec![Ptr, I32]].concat()
            }
            DlOp::ConvSum => vec![Ptr, Ptr, U64, I32],
            DlOp::LstmCell => vec![Ptr, Ptr, Ptr, Ptr, I32, I32, U64, I32],
        },
    }
}

/// A value a launcher may push, with its [`Param`] class.
trait KernelParam {
    const PARAM: Param;
    fn push<'a>(args: &mut LaunchArgs<'a>, value: &'a Self);
}

macro_rules! scalar_param {
    ($($t:ty => $p:ident),*) => {$(
        impl KernelParam for $t {
            const PARAM: Param = Param::$p;
            fn push<'a>(args: &mut LaunchArgs<'a>, value: &'a Self) {
                args.arg(value);
            }
        }
    )*};
}
scalar_param!(u64 => U64, i32 => I32, u32 => U32, f32 => F32, f64 => F64);

impl<T> KernelParam for CudaSlice<T> {
    const PARAM: Param = Param::Ptr;
    fn push<'a>(args: &mut LaunchArgs<'a>, value: &'a Self) {
        args.arg(value);
    }
}

/// The arguments of one launch, recorded as they are pushed so that the launch can compare
/// them with the entry point's [`params`] first.
struct Args<'a, 'r> {
    inner: &'r mut LaunchArgs<'a>,
    pushed: Vec<Param>,
}

impl<'a> Args<'a, '_> {
    fn arg<T: KernelParam>(&mut self, value: &'a T) -> &mut Self {
        T::push(self.inner, value);
        self.pushed.push(T::PARAM);
        self
    }
}

/// Compares what a launcher pushed with what the entry point declares.
fn check_params(kernel: Kernel, pushed: &[Param]) -> Result<(), DeviceError> {
    let declared = params(kernel);
    if pushed == declared {
        Ok(())
    } else {
        Err(refuse(
            kernel,
            format!("pushed {pushed:?}, the entry point takes {declared:?}"),
        ))
    }
}

/// The one unsafe kernel launch: `push` adds the arguments, `cfg` is the geometry.
///
/// Every caller is a launcher of this module, built only through a constructor that checked
/// the kernel's family and the buffers' sizes; the arguments it pushes are compared with the
/// entry point's declared parameters ([`params`], itself checked against NVRTC's PTX by a
/// test) and nothing is launched when they differ.
fn launch<'a>(
    session: &'a Session,
    f: &'a CudaFunction,
    kernel: Kernel,
    cfg: LaunchConfig,
    push: impl for<'r> FnOnce(&mut Args<'a, 'r>),
) -> Result<(), DeviceError> {
    let mut inner = session.stream().launch_builder(f);
    let mut args = Args {
        inner: &mut inner,
        pushed: Vec::new(),
    };
    push(&mut args);
    check_params(kernel, &args.pushed)?;
    check_grid(kernel, &cfg)?;
    // SAFETY: see above: the argument list matches the entry point's declaration, and each
    // buffer holds at least what the kernel reads or writes with these arguments.
    #[allow(unsafe_code)]
    let launched = unsafe { inner.launch(cfg) };
    launched
        .map(drop)
        .map_err(driver(format!("launching {}", kernel.entry())))
}

/// CUDA's grid limits (CUDA C++ Programming Guide, "Features and Technical Specifications"):
/// x up to 2³¹ − 1 blocks, y and z up to 65,535, at least one block each way. A shape beyond
/// them is refused by name rather than failing in the driver as an invalid value.
fn check_grid(kernel: Kernel, cfg: &LaunchConfig) -> Result<(), DeviceError> {
    let (x, y, z) = cfg.grid_dim;
    if x == 0 || y == 0 || z == 0 || x > 0x7fff_ffff || y > 65_535 || z > 65_535 {
        return Err(DeviceError::GridLimits {
            kernel: kernel.entry(),
            grid: (x, y, z),
        });
    }
    Ok(())
}

fn refuse(kernel: Kernel, problem: impl Into<String>) -> DeviceError {
    DeviceError::Arguments {
        kernel: kernel.entry(),
        problem: problem.into(),
    }
}

/// Threads in a launch.
pub fn threads(cfg: &LaunchConfig) -> u64 {
    let (g, b) = (cfg.grid_dim, cfg.block_dim);
    [g.0, g.1, g.2, b.0, b.1, b.2]
        .into_iter()
        .map(u64::from)
        .product()
}

/// A grid of `ceil(n / block)` blocks of `block` threads (one thread per element), at least one.
pub fn one_per_element(n: u64, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            u32::try_from(n.div_ceil(u64::from(block)).max(1)).unwrap_or(u32::MAX),
            1,
            1,
        ),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// FLOPs of an FMA-peak launch: `flops_per_iteration × iterations × threads`.
pub fn fma_work(kernel: Kernel, threads: u64, iterations: i32) -> Option<LaunchWork> {
    let Work::Fma { datapath, .. } = kernel.work() else {
        return None;
    };
    let per = kernel.work().flops_per_iteration()?;
    Some(LaunchWork {
        flops: Some((datapath, per * f64::from(iterations) * threads as f64)),
        ..LaunchWork::default()
    })
}

/// FLOPs of an `mma.sync`-peak launch: `flops_per_iteration × iterations × warps`.
pub fn mma_work(kernel: Kernel, threads: u64, iterations: i32) -> Option<LaunchWork> {
    let Work::Mma { datapath, .. } = kernel.work() else {
        return None;
    };
    let per = kernel.work().flops_per_iteration()?;
    let warps = (threads / 32) as f64;
    Some(LaunchWork {
        flops: Some((datapath, per * f64::from(iterations) * warps)),
        ..LaunchWork::default()
    })
}

/// Bytes of a grid-stride memory launch over `elements` vectors, `repeats` times.
pub fn stream_work(kernel: Kernel, elements: u64, repeats: i32) -> Option<LaunchWork> {
    let Work::Memory { level, .. } = kernel.work() else {
        return None;
    };
    let per = kernel.work().bytes_per_element()?;
    Some(LaunchWork {
        bytes: elements as f64 * per * f64::from(repeats),
        level: Some(level),
        ..LaunchWork::default()
    })
}

/// Bytes of a per-thread memory launch: every thread runs `repeats` iterations.
pub fn per_thread_work(kernel: Kernel, threads: u64, repeats: i32) -> Option<LaunchWork> {
    let Work::Memory { level, .. } = kernel.work() else {
        return None;
    };
    let per = kernel.work().bytes_per_thread_iteration()?;
    Some(LaunchWork {
        bytes: threads as f64 * f64::from(repeats) * per,
        level: Some(level),
        ..LaunchWork::default()
    })
}

/// FLOPs and bytes of a sweep launch over `elements` vectors, `repeats` times, with `fmas`
/// FMAs per value (one add when 0).
pub fn sweep_work(kernel: Kernel, elements: u64, repeats: i32, fmas: i32) -> Option<LaunchWork> {
    let Work::Sweep { datapath, lanes } = kernel.work() else {
        return None;
    };
    let per_value = if fmas <= 0 {
        1.0
    } else {
        2.0 * f64::from(fmas)
    };
    let values = f64::from(repeats) * elements as f64 * f64::from(lanes);
    Some(LaunchWork {
        flops: Some((datapath, values * per_value)),
        bytes: f64::from(repeats) * elements as f64 * kernel.work().bytes_per_element()?,
        level: None,
    })
}

/// The sweep's `fmas` argument for `flops` FLOPs per value: 1 is one add (0 FMAs), an even
/// count is `flops / 2` FMAs.
pub fn sweep_fmas(flops_per_value: u32) -> i32 {
    if flops_per_value <= 1 {
        0
    } else {
        i32::try_from(flops_per_value / 2).unwrap_or(i32::MAX)
    }
}

fn check_family(kernel: Kernel, ok: bool, family: &str) -> Result<(), DeviceError> {
    if ok {
        Ok(())
    } else {
        Err(refuse(kernel, format!("not a {family} kernel")))
    }
}

fn check_len(kernel: Kernel, what: &str, have: usize, need: u64) -> Result<(), DeviceError> {
    if (have as u64) < need {
        Err(refuse(
            kernel,
            format!("{what} holds {have} bytes, the launch needs {need}"),
        ))
    } else {
        Ok(())
    }
}

/// The checks of [`Hbm::new`], on the buffers' lengths in bytes.
fn hbm_checks(
    kernel: Kernel,
    elements: u64,
    src: usize,
    dst: Option<usize>,
) -> Result<(), DeviceError> {
    check_family(
        kernel,
        matches!(kernel, Kernel::HbmRead | Kernel::HbmWrite | Kernel::HbmCopy),
        "grid-stride HBM",
    )?;
    let need = elements * u64::from(VECTOR_BYTES);
    check_len(kernel, "the source", src, need)?;
    if kernel == Kernel::HbmCopy {
        let Some(d) = dst else {
            return Err(refuse(kernel, "a copy needs a destination"));
        };
        check_len(kernel, "the destination", d, need)?;
    }
    Ok(())
}

/// The checks of [`Resident::new`]; the launch configuration with the shared-memory slice.
fn resident_checks(
    kernel: Kernel,
    mut cfg: LaunchConfig,
    slice: u32,
    buf: Option<usize>,
) -> Result<LaunchConfig, DeviceError> {
    check_family(
        kernel,
        matches!(kernel, Kernel::L1Read | Kernel::SharedRead),
        "resident-slice",
    )?;
    if !slice.is_power_of_two() {
        return Err(refuse(
            kernel,
            format!("slice {slice} is not a power of two"),
        ));
    }
    let slice_bytes = u64::from(slice) * u64::from(VECTOR_BYTES);
    if kernel == Kernel::L1Read {
        let Some(b) = buf else {
            return Err(refuse(kernel, "needs its working set"));
        };
        check_len(
            kernel,
            "the working set",
            b,
            u64::from(cfg.grid_dim.0) * slice_bytes,
        )?;
    } else {
        cfg.shared_mem_bytes = u32::try_from(slice_bytes)
            .map_err(|_| refuse(kernel, "the slice does not fit shared memory"))?;
    }
    Ok(cfg)
}

/// The checks of [`MmaPeak::new`]: an `mma.sync` kernel on blocks of whole warps.
fn mma_checks(kernel: Kernel, cfg: &LaunchConfig) -> Result<(), DeviceError> {
    check_family(
        kernel,
        matches!(kernel.work(), Work::Mma { .. }),
        "mma.sync peak",
    )?;
    if !cfg.block_dim.0.is_multiple_of(32) || cfg.block_dim.1 != 1 || cfg.block_dim.2 != 1 {
        return Err(refuse(kernel, "blocks must be whole warps"));
    }
    Ok(())
}

/// The checks of [`Sweep::new`]: a sweep kernel, a buffer holding the working set, and a FLOP
/// count per value the kernel can do (1, one add; or even, FMAs).
fn sweep_checks(
    kernel: Kernel,
    elements: u64,
    flops_per_value: u32,
    buf: usize,
) -> Result<(), DeviceError> {
    check_family(kernel, matches!(kernel.work(), Work::Sweep { .. }), "sweep")?;
    if flops_per_value == 0 || (flops_per_value > 1 && flops_per_value % 2 == 1) {
        return Err(refuse(
            kernel,
            format!(
                "{flops_per_value} FLOPs per value: the sweep does 1 (an add) or an even count (FMAs)"
            ),
        ));
    }
    check_len(
        kernel,
        "the working set",
        buf,
        elements * u64::from(VECTOR_BYTES),
    )
}

/// The operands of an FMA-peak kernel: values that stay finite over any number of steps,
/// `x·0.99… + small`.
fn fma_operands(kernel: Kernel) -> Result<FmaOperands, DeviceError> {
    Ok(match kernel {
        Kernel::FmaF64 => FmaOperands::F64(0.999_999, 1e-7),
        Kernel::FmaF32 => FmaOperands::F32(0.999_99, 1e-5),
        // 0.99 and 0.001 in both halves.
        Kernel::FmaF16x2 => FmaOperands::Packed(0x3beb_3beb, 0x1419_1419),
        Kernel::FmaBf16x2 => FmaOperands::Packed(0x3f7d_3f7d, 0x3a83_3a83),
        _ => return Err(refuse(kernel, "not an FMA peak kernel")),
    })
}

/// Sentinels the kernels compare their result with (never equal in practice), so that the
/// compiler must keep the work (`KEEP` in `kernels/common.cuh`).
const SENTINEL_F32: f32 = -1.234_567e30;
const SENTINEL_F64: f64 = -1.234e300;
const SENTINEL_I32: i32 = i32::MIN + 7;
const SENTINEL_U32: u32 = 0xdead_beef;

/// The HBM kernels: `hbm_read` (src), `hbm_write` (dst), `hbm_copy` (src → dst), over
/// `elements` 16-byte vectors, grid-stride.
pub struct Hbm<'b> {
    kernel: Kernel,
    f: CudaFunction,
    cfg: LaunchConfig,
    elements: u64,
    src: &'b CudaSlice<u8>,
    dst: Option<&'b CudaSlice<u8>>,
    sink: &'b CudaSlice<u64>,
}

impl<'b> Hbm<'b> {
    /// `kernel` is [`Kernel::HbmRead`], [`Kernel::HbmWrite`] (which writes `src`) or
    /// [`Kernel::HbmCopy`] (which needs `dst`); `elements` vectors of [`VECTOR_BYTES`].
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] for another kernel or buffers too small; the entry point
    /// missing from `compiled`.
    pub fn new(
        compiled: &Compiled,
        kernel: Kernel,
        cfg: LaunchConfig,
        elements: u64,
        src: &'b CudaSlice<u8>,
        dst: Option<&'b CudaSlice<u8>>,
        sink: &'b CudaSlice<u64>,
    ) -> Result<Self, DeviceError> {
        hbm_checks(kernel, elements, src.len(), dst.map(CudaSlice::len))?;
        Ok(Hbm {
            kernel,
            f: compiled.function(kernel.entry())?,
            cfg,
            elements,
            src,
            dst,
            sink,
        })
    }

    /// Bytes at HBM per launch.
    pub fn work(&self) -> LaunchWork {
        stream_work(self.kernel, self.elements, 1).unwrap_or_default()
    }

    /// One launch on the session's stream.
    ///
    /// # Errors
    /// The driver's error.
    pub fn launch(&self, s: &Session) -> Result<(), DeviceError> {
        let value = 1.0f32;
        launch(s, &self.f, self.kernel, self.cfg, |a| {
            match (self.kernel, self.dst) {
                // hbm_copy(src, dst, n, stamps)
                (Kernel::HbmCopy, Some(dst)) => a.arg(self.src).arg(dst).arg(&self.elements),
                // hbm_write(a, n, value, stamps)
                (Kernel::HbmWrite, _) => a.arg(self.src).arg(&self.elements).arg(&value),
                // hbm_read(a, n, sink, sentinel, stamps)
                _ => a
                    .arg(self.src)
                    .arg(&self.elements)
                    .arg(self.sink)
                    .arg(&SENTINEL_F32),
            };
            a.arg(s.stamps());
        })
    }
}

/// `l2_read`: `elements` vectors reread `repeats` times through L2 only, grid-stride.
pub struct L2Read<'b> {
    f: CudaFunction,
    cfg: LaunchConfig,
    elements: u64,
    repeats: i32,
    buf: &'b CudaSlice<u8>,
    sink: &'b CudaSlice<u64>,
}

impl<'b> L2Read<'b> {
    /// # Errors
    /// [`DeviceError::Arguments`] when `buf` is smaller than `elements` vectors.
    pub fn new(
        compiled: &Compiled,
        cfg: LaunchConfig,
        elements: u64,
        repeats: i32,
        buf: &'b CudaSlice<u8>,
        sink: &'b CudaSlice<u64>,
    ) -> Result<Self, DeviceError> {
        let k = Kernel::L2Read;
        check_len(
            k,
            "the working set",
            buf.len(),
            elements * u64::from(VECTOR_BYTES),
        )?;
        Ok(L2Read {
            f: compiled.function(k.entry())?,
            cfg,
            elements,
            repeats,
            buf,
            sink,
        })
    }

    /// Bytes at L2 per launch.
    pub fn work(&self) -> LaunchWork {
        stream_work(Kernel::L2Read, self.elements, self.repeats).unwrap_or_default()
    }

    /// One launch.
    ///
    /// # Errors
    /// The driver's error.
    pub fn launch(&self, s: &Session) -> Result<(), DeviceError> {
        // l2_read(a, n, reps, sink, sentinel, stamps)
        launch(s, &self.f, Kernel::L2Read, self.cfg, |a| {
            a.arg(self.buf)
                .arg(&self.elements)
                .arg(&self.repeats)
                .arg(self.sink)
                .arg(&SENTINEL_F32)
                .arg(s.stamps());
        })
    }
}

/// `l1_read` (a slice of global memory per block, through L1) and `shared_read` (the slice in
/// dynamic shared memory): every block rereads `slice` vectors `repeats` times.
pub struct Resident<'b> {
    kernel: Kernel,
    f: CudaFunction,
    cfg: LaunchConfig,
    slice: u32,
    repeats: i32,
    buf: Option<&'b CudaSlice<u8>>,
    sink: &'b CudaSlice<u64>,
}

impl<'b> Resident<'b> {
    /// `kernel` is [`Kernel::L1Read`] (with `buf` holding a slice per block) or
    /// [`Kernel::SharedRead`] (`cfg` gets the slice as dynamic shared memory); `slice` is a
    /// power of two.
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] for another kernel, a slice that is not a power of two, or a
    /// buffer too small.
    pub fn new(
        compiled: &Compiled,
        kernel: Kernel,
        cfg: LaunchConfig,
        slice: u32,
        repeats: i32,
        buf: Option<&'b CudaSlice<u8>>,
        sink: &'b CudaSlice<u64>,
    ) -> Result<Self, DeviceError> {
        let cfg = resident_checks(kernel, cfg, slice, buf.map(CudaSlice::len))?;
        Ok(Resident {
            kernel,
            f: compiled.function(kernel.entry())?,
            cfg,
            slice,
            repeats,
            buf,
            sink,
        })
    }

    /// Bytes at L1 or shared memory per launch.
    pub fn work(&self) -> LaunchWork {
        per_thread_work(self.kernel, threads(&self.cfg), self.repeats).unwrap_or_default()
    }

    /// The launch geometry (with the slice as dynamic shared memory for `shared_read`).
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// One launch.
    ///
    /// # Errors
    /// The driver's error.
    pub fn launch(&self, s: &Session) -> Result<(), DeviceError> {
        launch(s, &self.f, self.kernel, self.cfg, |a| {
            // l1_read(a, slice, reps, sink, sentinel, stamps); shared_read(slice, reps, …)
            if let (Kernel::L1Read, Some(b)) = (self.kernel, self.buf) {
                a.arg(b);
            }
            a.arg(&self.slice)
                .arg(&self.repeats)
                .arg(self.sink)
                .arg(&SENTINEL_F32)
                .arg(s.stamps());
        })
    }
}

/// The operands `x = x·b + c` of an FMA-peak kernel, in its type.
#[derive(Debug, Clone, Copy)]
enum FmaOperands {
    F64(f64, f64),
    F32(f32, f32),
    /// Packed pairs (half2 or bfloat162 bit patterns).
    Packed(u32, u32),
}

/// The CUDA-core FMA peaks: `fma_f64`, `fma_f32`, `fma_f16x2`, `fma_bf16x2`.
pub struct FmaPeak<'b> {
    kernel: Kernel,
    f: CudaFunction,
    cfg: LaunchConfig,
    iterations: i32,
    operands: FmaOperands,
    sink: &'b CudaSlice<u64>,
}

impl<'b> FmaPeak<'b> {
    /// `iterations` of the timed loop per thread; `sink` takes one value of at most 8 bytes.
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] for a kernel that is not an FMA peak.
    pub fn new(
        compiled: &Compiled,
        kernel: Kernel,
        cfg: LaunchConfig,
        iterations: i32,
        sink: &'b CudaSlice<u64>,
    ) -> Result<Self, DeviceError> {
        let operands = fma_operands(kernel)?;
        Ok(FmaPeak {
            kernel,
            f: compiled.function(kernel.entry())?,
            cfg,
            iterations,
            operands,
            sink,
        })
    }

    /// FLOPs per launch.
    pub fn work(&self) -> LaunchWork {
        fma_work(self.kernel, threads(&self.cfg), self.iterations).unwrap_or_default()
    }

    /// One launch.
    ///
    /// # Errors
    /// The driver's error.
    pub fn launch(&self, s: &Session) -> Result<(), DeviceError> {
        let (sf64, sf32, su32) = (SENTINEL_F64, SENTINEL_F32, SENTINEL_U32);
        // fma_*(b, c, iters, sink, sentinel, stamps), each in the kernel's type.
        launch(s, &self.f, self.kernel, self.cfg, |a| {
            match &self.operands {
                FmaOperands::F64(b, c) => a
                    .arg(b)
                    .arg(c)
                    .arg(&self.iterations)
                    .arg(self.sink)
                    .arg(&sf64),
                FmaOperands::F32(b, c) => a
                    .arg(b)
                    .arg(c)
                    .arg(&self.iterations)
                    .arg(self.sink)
                    .arg(&sf32),
                FmaOperands::Packed(b, c) => a
                    .arg(b)
                    .arg(c)
                    .arg(&self.iterations)
                    .arg(self.sink)
                    .arg(&su32),
            };
            a.arg(s.stamps());
        })
    }
}

/// The Tensor Core peaks with `mma.sync`: `mma_f16`, `mma_bf16`, `mma_tf32`, `mma_fp8`,
/// `mma_int8`, `mma_f64`.
pub struct MmaPeak<'b> {
    kernel: Kernel,
    f: CudaFunction,
    cfg: LaunchConfig,
    iterations: i32,
    sink: &'b CudaSlice<u64>,
}

impl<'b> MmaPeak<'b> {
    /// `iterations` of the timed loop per warp; `sink` takes one value of at most 8 bytes.
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] for a kernel that is not an `mma.sync` peak, or a block that
    /// is not whole warps.
    pub fn new(
        compiled: &Compiled,
        kernel: Kernel,
        cfg: LaunchConfig,
        iterations: i32,
        sink: &'b CudaSlice<u64>,
    ) -> Result<Self, DeviceError> {
        mma_checks(kernel, &cfg)?;
        Ok(MmaPeak {
            kernel,
            f: compiled.function(kernel.entry())?,
            cfg,
            iterations,
            sink,
        })
    }

    /// FLOPs per launch.
    pub fn work(&self) -> LaunchWork {
        mma_work(self.kernel, threads(&self.cfg), self.iterations).unwrap_or_default()
    }

    /// One launch.
    ///
    /// # Errors
    /// The driver's error.
    pub fn launch(&self, s: &Session) -> Result<(), DeviceError> {
        let (sf32, si32, sf64) = (SENTINEL_F32, SENTINEL_I32, SENTINEL_F64);
        // mma_*(iters, sink, sentinel, stamps), the sentinel in the accumulator's type.
        launch(s, &self.f, self.kernel, self.cfg, |a| {
            a.arg(&self.iterations).arg(self.sink);
            match self.kernel {
                Kernel::MmaInt8 => a.arg(&si32),
                Kernel::MmaF64 => a.arg(&sf64),
                _ => a.arg(&sf32),
            };
            a.arg(s.stamps());
        })
    }
}

/// `empty`: a kernel that does nothing, one warp, for launch overhead.
pub struct Empty {
    f: CudaFunction,
}

impl Empty {
    /// # Errors
    /// The entry point missing from `compiled`.
    pub fn new(compiled: &Compiled) -> Result<Self, DeviceError> {
        Ok(Empty {
            f: compiled.function(Kernel::Empty.entry())?,
        })
    }

    /// One launch of one warp.
    ///
    /// # Errors
    /// The driver's error.
    pub fn launch(&self, s: &Session) -> Result<(), DeviceError> {
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        };
        // empty()
        launch(s, &self.f, Kernel::Empty, cfg, |_| {})
    }
}

/// The ERT-style sweep, `ert_f32` and `ert_f64`: `elements` vectors swept `repeats` times, one
/// thread per vector up to `max_threads`.
pub struct Sweep<'b> {
    kernel: Kernel,
    f: CudaFunction,
    cfg: LaunchConfig,
    elements: u64,
    repeats: i32,
    fmas: i32,
    buf: &'b CudaSlice<u8>,
}

impl<'b> Sweep<'b> {
    /// The launch for `elements` vectors and `flops_per_value` FLOPs per value (1 or even).
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] for another kernel or a buffer too small.
    pub fn new(
        compiled: &Compiled,
        kernel: Kernel,
        elements: u64,
        max_threads: u64,
        repeats: i32,
        flops_per_value: u32,
        buf: &'b CudaSlice<u8>,
    ) -> Result<Self, DeviceError> {
        sweep_checks(kernel, elements, flops_per_value, buf.len())?;
        let threads = elements.min(max_threads).max(1);
        let block = u32::try_from(threads.min(256)).unwrap_or(256);
        Ok(Sweep {
            kernel,
            f: compiled.function(kernel.entry())?,
            cfg: one_per_element(threads, block),
            elements,
            repeats,
            fmas: sweep_fmas(flops_per_value),
            buf,
        })
    }

    /// FLOPs and bytes per launch.
    pub fn work(&self) -> LaunchWork {
        sweep_work(self.kernel, self.elements, self.repeats, self.fmas).unwrap_or_default()
    }

    /// The launch geometry: one thread per vector, at most the planned full grid.
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// One launch.
    ///
    /// # Errors
    /// The driver's error.
    pub fn launch(&self, s: &Session) -> Result<(), DeviceError> {
        let (a32, a64) = (1e-7f32, 1e-7f64);
        // ert_*(a, n, reps, fmas, alpha, stamps), alpha in the kernel's type.
        launch(s, &self.f, self.kernel, self.cfg, |a| {
            a.arg(self.buf)
                .arg(&self.elements)
                .arg(&self.repeats)
                .arg(&self.fmas);
            if self.kernel == Kernel::ErtF64 {
                a.arg(&a64)
            } else {
                a.arg(&a32)
            };
            a.arg(s.stamps());
        })
    }
}

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
    /// Zero-filled tensors for `c` in precision `p`.
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

    /// The entry point.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// One run (one or two launches).
    ///
    /// # Errors
    /// The driver's error.
    pub fn launch(&self, s: &Session) -> Result<(), DeviceError> {
        let t = self.tensors;
        // Operand order per kernel: forward (x, w, y), backward-data (dx, w, dy),
        // backward-filter (x, dw, dy); then N, H, W, C, K, R, S, P, Q, stride, pad; the
        // implicit-GEMM kernels then take (partial, splits).
        launch(s, &self.f, self.kernel, self.cfg, |a| {
            a.arg(&t.x).arg(&t.w).arg(&t.y);
            for d in &self.dims {
                a.arg(d);
            }
            if let Some(k) = &self.split {
                a.arg(&k.partial).arg(&k.splits);
            }
        })?;
        if let Some(k) = self.split.as_ref().filter(|k| k.splits > 1) {
            // The output is the tensor in the third slot for forward, the first for
            // backward-data and the second for backward-filter.
            let out = match self.dir {
                Direction::Forward => &t.y,
                Direction::BackwardData => &t.x,
                Direction::BackwardFilter => &t.w,
            };
            // conv_sum_*(partial, out, count, splits)
            launch(s, &k.sum, k.sum_kernel, k.sum_cfg, |a| {
                a.arg(&k.partial).arg(out).arg(&k.count).arg(&k.splits);
            })?;
        }
        Ok(())
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
    /// row of `[x, h]`; allocates the bias and cell state.
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

    /// One launch: `gates` (FP32) in, `xh` (`[x, h]` rows) updated.
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] for buffers too small; the driver's error.
    pub fn launch(
        &mut self,
        s: &Session,
        gates: &CudaSlice<u8>,
        xh: &mut CudaSlice<u8>,
    ) -> Result<(), DeviceError> {
        check_len(self.kernel, "the gates", gates.len(), self.gates_bytes)?;
        check_len(self.kernel, "[x, h]", xh.len(), self.xh_bytes)?;
        let (f, kernel, cfg) = (&self.f, self.kernel, self.cfg);
        let (bias, c) = (&self.bias, &mut self.c);
        let (batch, hidden, h_off, h_ld) = (&self.batch, &self.hidden, &self.h_off, &self.h_ld);
        // lstm_cell_*(gates, bias, c, h_out, batch, hidden, h_off, h_ld)
        launch(s, f, kernel, cfg, |a| {
            a.arg(gates)
                .arg(bias)
                .arg(c)
                .arg(xh)
                .arg(batch)
                .arg(hidden)
                .arg(h_off)
                .arg(h_ld);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::kernels::{BW_UNROLL, FMA_CHAINS, FMA_UNROLL, MMA_ACC};

    fn grid(blocks: u32, threads: u32) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// FMA peaks, by hand: fma_f32 on 132 SMs × 8 blocks × 256 threads, 2048 iterations of 8
    /// chains × 16 steps: 2 FLOPs × 128 × 2048 × 270,336 threads.
    #[test]
    fn fma_flops_per_launch_match_a_hand_count() {
        let t = threads(&grid(132 * 8, 256));
        assert_eq!(t, 270_336);
        let w = fma_work(Kernel::FmaF32, t, 2048).unwrap();
        assert_eq!(
            w.flops,
            Some((Datapath::Fp32, 2.0 * 128.0 * 2048.0 * 270_336.0))
        );
        assert_eq!(w.bytes, 0.0);
        // Packed half2: two lanes per instruction, twice the FLOPs.
        let h = fma_work(Kernel::FmaF16x2, t, 2048).unwrap();
        assert_eq!(h.flop_count(), 2.0 * w.flop_count());
        assert_eq!(h.flops.unwrap().0, Datapath::Fp16);
        assert_eq!(
            fma_work(Kernel::FmaF64, 1, 1).unwrap().flop_count(),
            f64::from(2 * FMA_CHAINS * FMA_UNROLL)
        );
        assert!(fma_work(Kernel::MmaF16, 1, 1).is_none());
    }

    /// mma.sync peaks, by hand: m16n8k16 is 2·16·8·16 = 4096 FLOPs; 8 accumulators; 132 SMs ×
    /// 4 blocks × 256 threads = 4224 warps; 8192 iterations.
    #[test]
    fn mma_flops_per_launch_match_a_hand_count() {
        let t = threads(&grid(132 * 4, 256));
        let w = mma_work(Kernel::MmaBf16, t, 8192).unwrap();
        assert_eq!(
            w.flops,
            Some((Datapath::TensorBf16, 4096.0 * 8.0 * 8192.0 * 4224.0))
        );
        let per_warp = |k: Kernel| mma_work(k, 32, 1).unwrap().flop_count();
        let acc = f64::from(MMA_ACC);
        assert_eq!(per_warp(Kernel::MmaTf32), 2048.0 * acc);
        assert_eq!(per_warp(Kernel::MmaFp8), 8192.0 * acc);
        assert_eq!(per_warp(Kernel::MmaInt8), 8192.0 * acc);
        assert_eq!(per_warp(Kernel::MmaF64), 512.0 * acc);
        assert_eq!(
            mma_work(Kernel::MmaF64, 32, 1).unwrap().flops.unwrap().0,
            Datapath::TensorFp64
        );
        assert!(mma_work(Kernel::FmaF32, 32, 1).is_none());
    }

    /// Memory kernels, by hand: 2 GiB read once is 2 GiB at HBM; copied, 4 GiB; an L2 set of
    /// 1 MiB reread 256 times is 256 MiB; L1 with 264 blocks × 1024 threads × 4096 repeats ×
    /// 4 loads × 16 bytes.
    #[test]
    fn memory_bytes_per_launch_match_a_hand_count() {
        let n = (2u64 << 30) / 16;
        let read = stream_work(Kernel::HbmRead, n, 1).unwrap();
        assert_eq!(read.bytes, 2.0 * 1024.0 * 1024.0 * 1024.0);
        assert_eq!(read.level, Some(MemoryLevel::Hbm));
        assert_eq!(
            stream_work(Kernel::HbmWrite, n, 1).unwrap().bytes,
            read.bytes
        );
        assert_eq!(
            stream_work(Kernel::HbmCopy, n, 1).unwrap().bytes,
            2.0 * read.bytes
        );
        let l2 = stream_work(Kernel::L2Read, (1 << 20) / 16, 256).unwrap();
        assert_eq!(l2.bytes, 256.0 * 1048576.0);
        assert_eq!(l2.level, Some(MemoryLevel::L2));
        let t = threads(&grid(264, 1024));
        let l1 = per_thread_work(Kernel::L1Read, t, 4096).unwrap();
        assert_eq!(
            l1.bytes,
            264.0 * 1024.0 * 4096.0 * f64::from(BW_UNROLL) * 16.0
        );
        assert_eq!(l1.level, Some(MemoryLevel::L1));
        let sh = per_thread_work(Kernel::SharedRead, t, 4096).unwrap();
        assert_eq!((sh.bytes, sh.level), (l1.bytes, Some(MemoryLevel::Shared)));
        assert!(stream_work(Kernel::FmaF32, 1, 1).is_none());
    }

    /// The sweep, by hand: 1 MiB of float4 (65,536 vectors, 4 values each) swept 10 times at
    /// 8 FLOPs per value (4 FMAs) is 10 × 262,144 × 8 FLOPs and 10 × 1 MiB × 2 bytes; one FLOP
    /// per value is one add.
    #[test]
    fn sweep_work_matches_a_hand_count() {
        let n = (1u64 << 20) / 16;
        let w = sweep_work(Kernel::ErtF32, n, 10, sweep_fmas(8)).unwrap();
        assert_eq!(w.flops, Some((Datapath::Fp32, 10.0 * 262_144.0 * 8.0)));
        assert_eq!(w.bytes, 10.0 * 2.0 * 1048576.0);
        assert_eq!(w.level, None);
        assert_eq!(sweep_fmas(1), 0);
        assert_eq!(sweep_fmas(2), 1);
        assert_eq!(sweep_fmas(1024), 512);
        let one = sweep_work(Kernel::ErtF64, n, 1, sweep_fmas(1)).unwrap();
        // double2: two values per vector, one add each.
        assert_eq!(one.flops, Some((Datapath::Fp64, 2.0 * n as f64)));
        assert!(sweep_work(Kernel::HbmRead, 1, 1, 0).is_none());
    }

    #[test]
    fn grids_beyond_cuda_limits_are_refused() {
        let cfg = |x, y, z| LaunchConfig {
            grid_dim: (x, y, z),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        assert!(check_grid(Kernel::HbmRead, &cfg(132 * 8, 1, 1)).is_ok());
        assert!(check_grid(Kernel::HbmCopy, &cfg(0x7fff_ffff, 65_535, 65_535)).is_ok());
        for bad in [
            cfg(1, 65_536, 1),
            cfg(1 << 31, 1, 1),
            cfg(1, 1, 70_000),
            cfg(0, 1, 1),
        ] {
            let e = check_grid(Kernel::HbmCopy, &bad).unwrap_err().to_string();
            assert!(e.contains("beyond CUDA's limits"), "{e}");
        }
    }

    #[test]
    fn grids_cover_every_element() {
        let g = one_per_element(1000, 256);
        assert_eq!(g.grid_dim.0, 4);
        assert_eq!(threads(&g), 1024);
        assert_eq!(one_per_element(0, 128).grid_dim.0, 1);
    }

    #[test]
    fn implicit_gemm_shapes_do_the_convolution_s_work() {
        for case in roofline_model::dl::conv2d_study() {
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
        assert_eq!(IG_TILE, 64, "the hand counts below assume 64 × 64 tiles");
        // Base case forward: 16·56·56 output pixels × 64 filters, 784 tiles, no split.
        let base = roofline_model::dl::conv2d_study()
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
        let listed = crate::gpu::kernels::Source::Dl.entry_points();
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

    #[test]
    fn argument_errors_name_the_kernel() {
        let e = refuse(Kernel::HbmCopy, "a copy needs a destination");
        assert_eq!(
            e.to_string(),
            "cannot launch hbm_copy: a copy needs a destination"
        );
        let e = check_len(Kernel::L2Read, "the working set", 16, 32).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot launch l2_read: the working set holds 16 bytes, the launch needs 32"
        );
        assert!(check_len(Kernel::L2Read, "x", 32, 32).is_ok());
        assert!(check_family(Kernel::FmaF32, false, "sweep").is_err());
    }

    /// Every launcher's argument checks, on buffer lengths: the wrong family, a buffer too
    /// small, a missing destination, a slice that is not a power of two, blocks of partial
    /// warps and a FLOP count the sweep cannot do are refused before anything is launched.
    #[test]
    fn launcher_arguments_are_checked_before_launching() {
        let n = 1024u64;
        let bytes = (n * 16) as usize;
        assert!(hbm_checks(Kernel::HbmRead, n, bytes, None).is_ok());
        assert!(hbm_checks(Kernel::HbmCopy, n, bytes, Some(bytes)).is_ok());
        let e = hbm_checks(Kernel::HbmCopy, n, bytes, None).unwrap_err();
        assert!(e.to_string().contains("needs a destination"), "{e}");
        let e = hbm_checks(Kernel::HbmCopy, n, bytes, Some(bytes - 1)).unwrap_err();
        assert!(
            e.to_string().contains("the destination holds 16383 bytes"),
            "{e}"
        );
        assert!(hbm_checks(Kernel::HbmWrite, n, bytes - 16, None).is_err());
        let e = hbm_checks(Kernel::L2Read, n, bytes, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot launch l2_read: not a grid-stride HBM kernel"
        );

        let cfg = grid(4, 256);
        let shared = resident_checks(Kernel::SharedRead, cfg, 2048, None).unwrap();
        assert_eq!(shared.shared_mem_bytes, 2048 * 16);
        assert!(resident_checks(Kernel::SharedRead, cfg, 2000, None).is_err());
        assert!(resident_checks(Kernel::L1Read, cfg, 2048, None).is_err());
        assert!(resident_checks(Kernel::L1Read, cfg, 2048, Some(4 * 2048 * 16)).is_ok());
        assert!(resident_checks(Kernel::L1Read, cfg, 2048, Some(3 * 2048 * 16)).is_err());
        assert!(resident_checks(Kernel::HbmRead, cfg, 2048, Some(1 << 30)).is_err());

        assert!(mma_checks(Kernel::MmaF16, &grid(4, 256)).is_ok());
        assert!(mma_checks(Kernel::MmaF16, &grid(4, 48)).is_err());
        assert!(mma_checks(Kernel::FmaF32, &grid(4, 256)).is_err());

        for fpe in [1, 2, 64, 1024] {
            assert!(sweep_checks(Kernel::ErtF32, n, fpe, bytes).is_ok(), "{fpe}");
        }
        assert!(sweep_checks(Kernel::ErtF32, n, 3, bytes).is_err());
        assert!(sweep_checks(Kernel::ErtF32, n, 0, bytes).is_err());
        assert!(sweep_checks(Kernel::ErtF64, n, 2, bytes - 1).is_err());
        assert!(sweep_checks(Kernel::HbmRead, n, 2, bytes).is_err());

        for k in [
            Kernel::FmaF64,
            Kernel::FmaF32,
            Kernel::FmaF16x2,
            Kernel::FmaBf16x2,
        ] {
            assert!(fma_operands(k).is_ok(), "{k:?}");
        }
        assert!(fma_operands(Kernel::MmaF64).is_err());
    }

    #[test]
    fn launches_whose_arguments_differ_from_the_declaration_are_refused() {
        use Param::{F32, I32, Ptr, U64};
        assert!(check_params(Kernel::HbmRead, &[Ptr, U64, Ptr, F32, Ptr]).is_ok());
        let e = check_params(Kernel::HbmRead, &[Ptr, U64, Ptr, Ptr]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot launch hbm_read: pushed [Ptr, U64, Ptr, Ptr], the entry point takes \
             [Ptr, U64, Ptr, F32, Ptr]"
        );
        assert!(check_params(Kernel::Empty, &[]).is_ok());
        assert!(check_params(Kernel::MmaInt8, &[I32, Ptr, F32, Ptr]).is_err());
        // The implicit-GEMM kernels take the direct ones' arguments, then (partial, splits).
        let direct = params(Kernel::Dl(DlOp::ConvFwd, Precision::Fp16));
        let igemm = params(Kernel::Dl(DlOp::IgemmFwd, Precision::Fp16));
        assert_eq!(direct.len(), 14);
        assert_eq!(igemm[..14], direct[..]);
        assert_eq!(igemm[14..], [Ptr, I32]);
    }

    /// The `.param` types of every `.entry` of a PTX module, in order.
    fn ptx_entries(ptx: &str) -> std::collections::HashMap<String, Vec<String>> {
        let mut out = std::collections::HashMap::new();
        for chunk in ptx.split(".entry ").skip(1) {
            let Some((name, rest)) = chunk.split_once('(') else {
                continue;
            };
            let list = rest.split_once(')').map_or(rest, |(l, _)| l);
            let types = list
                .split(',')
                .filter_map(|p| {
                    let mut t = p.split_whitespace();
                    (t.next() == Some(".param")).then(|| t.next().unwrap_or("").to_owned())
                })
                .collect();
            out.insert(name.trim().to_owned(), types);
        }
        out
    }

    #[test]
    fn ptx_entry_parameters_are_read_in_order() {
        // A hand-written PTX excerpt in NVRTC's layout (parser test input, not compiler output).
        let ptx = ".visible .entry empty()\n{\n\tret;\n}\n\
                   .visible .entry hbm_write(\n\t.param .u64 .ptr .align 1 hbm_write_param_0,\n\
                   \t.param .u64 hbm_write_param_1,\n\t.param .f32 hbm_write_param_2,\n\
                   \t.param .u64 .ptr .align 1 hbm_write_param_3\n)\n{\n}\n";
        let e = ptx_entries(ptx);
        assert_eq!(e["empty"], Vec::<String>::new());
        assert_eq!(e["hbm_write"], [".u64", ".u64", ".f32", ".u64"]);
        let ours: Vec<_> = params(Kernel::HbmWrite)
            .into_iter()
            .map(Param::ptx)
            .collect();
        assert_eq!(e["hbm_write"], ours);
    }

    /// Every launcher pushes exactly the parameters NVRTC compiles for its entry point (PTX
    /// `.param` types, in order), for every source and every architecture the collector runs
    /// on, through the collector's own compile function and options. Needs NVRTC only (no
    /// driver, no GPU): `LD_LIBRARY_PATH=<dir with libnvrtc.so> cargo test -p
    /// roofline-collector params_match -- --ignored`.
    #[test]
    #[ignore = "needs NVRTC (libnvrtc.so on the library path); no GPU needed"]
    fn params_match_the_compiled_entry_points() {
        use crate::gpu::kernels::{Source, compile_ptx, nvrtc_present};
        assert!(nvrtc_present(), "NVRTC could not be loaded");
        let mut checked = Vec::new();
        for arch in ["sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"] {
            // NVRTC 13 no longer targets Volta; every later architecture must compile.
            if arch == "sm_70"
                && compile_ptx(Source::Fma, arch).is_err_and(|e| {
                    e.to_string()
                        .contains("invalid value for --gpu-architecture")
                })
            {
                crate::stderr::message("this NVRTC does not target sm_70; not checked there");
                continue;
            }
            checked.push(arch);
            for source in Source::ALL {
                let ptx = compile_ptx(source, arch)
                    .unwrap_or_else(|e| panic!("{e}"))
                    .to_src();
                let entries = ptx_entries(&ptx);
                let ours: Vec<Kernel> = Kernel::all()
                    .into_iter()
                    .filter(|k| k.source() == source)
                    .collect();
                assert_eq!(entries.len(), ours.len(), "{} on {arch}", source.file());
                for k in ours {
                    let declared = entries
                        .get(k.entry())
                        .unwrap_or_else(|| panic!("{} is not in the PTX for {arch}", k.entry()));
                    let pushed: Vec<_> = params(k).into_iter().map(Param::ptx).collect();
                    assert_eq!(declared, &pushed, "{} on {arch}", k.entry());
                }
            }
        }
        assert!(checked.len() >= 5, "{checked:?}");
    }
}
