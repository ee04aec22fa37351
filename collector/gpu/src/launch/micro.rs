//! The microbenchmark launchers of `roofline machine`: the HBM, L2, L1 and shared-memory reads
//! (and HBM writes and copies), the CUDA-core FMA and Tensor Core `mma.sync` peaks, the empty
//! kernel (launch overhead) and the ERT-style sweep. Their work per launch:
//! - FMA peaks: `work.flops_per_iteration() × iterations × threads`;
//! - `mma.sync` peaks: `work.flops_per_iteration() × iterations × warps` (the formula counts per
//!   warp);
//! - grid-stride memory kernels (HBM, L2): `elements × work.bytes_per_element() × repeats`;
//! - per-thread memory kernels (L1, shared): `threads × repeats × work.bytes_per_thread_iteration()`;
//! - the ERT-style sweep: `repeats × elements × lanes × max(1, 2·fmas)` FLOPs and
//!   `repeats × elements × work.bytes_per_element()` bytes
//!
//! (the functions beside [`Kernel::work`]: [`fma_work`], [`mma_work`], [`stream_work`],
//! [`per_thread_work`], [`sweep_work`]).

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig};
use roofline_kernels::{
    Kernel, LaunchWork, VECTOR_BYTES, Work, fma_work, mma_operands, mma_work, per_thread_work,
    stream_work, sweep_fmas, sweep_work,
};

use super::{Args, Launcher, check_family, check_len, one_per_element, refuse, threads};
use crate::compiled::Compiled;
use crate::session::{DeviceError, Session};

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
        matches!(
            kernel,
            Kernel::L1Read | Kernel::L1ReadNc | Kernel::SharedRead
        ),
        "resident-slice",
    )?;
    if !slice.is_power_of_two() {
        return Err(refuse(
            kernel,
            format!("slice {slice} is not a power of two"),
        ));
    }
    let slice_bytes = u64::from(slice) * u64::from(VECTOR_BYTES);
    if kernel != Kernel::SharedRead {
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

/// The checks of [`MmaPeak::new`]: an `mma.sync` kernel on blocks of whole warps, with an
/// operand buffer of `ops` bytes holding every launched thread's operand sets
/// ([`mma_operands`]).
fn mma_checks(kernel: Kernel, cfg: &LaunchConfig, ops: usize) -> Result<(), DeviceError> {
    check_family(
        kernel,
        matches!(kernel.work(), Work::Mma { .. }),
        "mma.sync peak",
    )?;
    if !cfg.block_dim.0.is_multiple_of(32) || cfg.block_dim.1 != 1 || cfg.block_dim.2 != 1 {
        return Err(refuse(kernel, "blocks must be whole warps"));
    }
    let per_thread = mma_operands(kernel).map_or(0, |(bytes, _)| bytes);
    check_len(kernel, "the operand buffer", ops, per_thread * threads(cfg))
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

/// The operands `(b, c)` of an FMA-peak kernel: the chains' start value b and the constant c of
/// the quadratic map `x = x·x + c` (`kernels/fma.cu`), bounded from starts in its basin and, for
/// most c in (−2, −1.4), chaotic, so that the chains keep toggling bits instead of settling on a
/// fixed point. Each chain starts at b plus one of 64 offsets ([`FMA_START_MASK`]): `j·2⁻⁸` for
/// the float kernels, `b ^ j` in each half of the packed ones. The c are chosen for long cycles
/// once rounded to the format (`fma_orbits`' test emulates every orbit): −1.9 in FP64 and FP32,
/// −1.72 in FP16 (the nearest FP16 is −1.7197265625; −1.75 has a 2-cycle), −1.92 in BF16
/// (−1.921875).
fn fma_operands(kernel: Kernel) -> Result<FmaOperands, DeviceError> {
    Ok(match kernel {
        Kernel::FmaF64 => FmaOperands::F64(0.5, -1.9),
        Kernel::FmaF32 => FmaOperands::F32(0.5, -1.9),
        // 0.5 and −1.72 (FP16 0x3800, 0xBEE1) in both halves.
        Kernel::FmaF16x2 => FmaOperands::Packed(0x3800_3800, 0xbee1_bee1),
        // 0.5 and −1.921875 (BF16 0x3F00, 0xBFF6) in both halves.
        Kernel::FmaBf16x2 => FmaOperands::Packed(0x3f00_3f00, 0xbff6_bff6),
        _ => return Err(refuse(kernel, "not an FMA peak kernel")),
    })
}

/// The start offsets of `kernels/fma.cu`'s chains: chain k of thread t starts from offset
/// `(t·FMA_CHAINS + k) & FMA_START_MASK` (and, in the high half of a packed pair, the next 6
/// bits of that index), `#define`d there with the same value (a test compares them).
pub const FMA_START_MASK: u32 = 63;

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
}

impl Launcher for Hbm<'_> {
    fn kernel(&self) -> Kernel {
        self.kernel
    }

    fn function(&self) -> &CudaFunction {
        &self.f
    }

    fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// Bytes at HBM per launch.
    fn work(&self) -> LaunchWork {
        stream_work(self.kernel, self.elements, 1).unwrap_or_default()
    }

    fn push<'a>(&'a self, s: &'a Session, a: &mut Args<'a, '_>) {
        match (self.kernel, self.dst) {
            // hbm_copy(src, dst, n, stamps)
            (Kernel::HbmCopy, Some(dst)) => a.arg(self.src).arg(dst).arg(&self.elements),
            // hbm_write(a, n, value, stamps)
            (Kernel::HbmWrite, _) => a.arg(self.src).arg(&self.elements).arg(&1.0f32),
            // hbm_read(a, n, sink, sentinel, stamps)
            _ => a
                .arg(self.src)
                .arg(&self.elements)
                .arg(self.sink)
                .arg(&SENTINEL_F32),
        };
        a.arg(s.stamps());
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
}

impl Launcher for L2Read<'_> {
    fn kernel(&self) -> Kernel {
        Kernel::L2Read
    }

    fn function(&self) -> &CudaFunction {
        &self.f
    }

    fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// Bytes at L2 per launch.
    fn work(&self) -> LaunchWork {
        stream_work(Kernel::L2Read, self.elements, self.repeats).unwrap_or_default()
    }

    fn push<'a>(&'a self, s: &'a Session, a: &mut Args<'a, '_>) {
        // l2_read(a, n, reps, sink, sentinel, stamps)
        a.arg(self.buf)
            .arg(&self.elements)
            .arg(&self.repeats)
            .arg(self.sink)
            .arg(&SENTINEL_F32)
            .arg(s.stamps());
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
    /// `kernel` is [`Kernel::L1Read`] or [`Kernel::L1ReadNc`] (with `buf` holding a slice per
    /// block) or
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
}

impl Launcher for Resident<'_> {
    fn kernel(&self) -> Kernel {
        self.kernel
    }

    fn function(&self) -> &CudaFunction {
        &self.f
    }

    /// The launch geometry (with the slice as dynamic shared memory for `shared_read`).
    fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// Bytes at L1 or shared memory per launch.
    fn work(&self) -> LaunchWork {
        per_thread_work(self.kernel, threads(&self.cfg), self.repeats).unwrap_or_default()
    }

    fn push<'a>(&'a self, s: &'a Session, a: &mut Args<'a, '_>) {
        // l1_read(a, slice, reps, sink, sentinel, stamps); shared_read(slice, reps, …)
        if let (Kernel::L1Read | Kernel::L1ReadNc, Some(b)) = (self.kernel, self.buf) {
            a.arg(b);
        }
        a.arg(&self.slice)
            .arg(&self.repeats)
            .arg(self.sink)
            .arg(&SENTINEL_F32)
            .arg(s.stamps());
    }
}

/// The operands `(b, c)` of an FMA-peak kernel, in its type: the start value and the constant
/// of `x = x·x + c`.
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
}

impl Launcher for FmaPeak<'_> {
    fn kernel(&self) -> Kernel {
        self.kernel
    }

    fn function(&self) -> &CudaFunction {
        &self.f
    }

    fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// FLOPs per launch.
    fn work(&self) -> LaunchWork {
        fma_work(self.kernel, threads(&self.cfg), self.iterations).unwrap_or_default()
    }

    fn push<'a>(&'a self, s: &'a Session, a: &mut Args<'a, '_>) {
        // fma_*(b, c, iters, sink, sentinel, stamps), each in the kernel's type.
        match &self.operands {
            FmaOperands::F64(b, c) => a
                .arg(b)
                .arg(c)
                .arg(&self.iterations)
                .arg(self.sink)
                .arg(&SENTINEL_F64),
            FmaOperands::F32(b, c) => a
                .arg(b)
                .arg(c)
                .arg(&self.iterations)
                .arg(self.sink)
                .arg(&SENTINEL_F32),
            FmaOperands::Packed(b, c) => a
                .arg(b)
                .arg(c)
                .arg(&self.iterations)
                .arg(self.sink)
                .arg(&SENTINEL_U32),
        };
        a.arg(s.stamps());
    }
}

/// The Tensor Core peaks with `mma.sync`: `mma_f16`, `mma_bf16`, `mma_tf32`, `mma_fp8`,
/// `mma_int8`, `mma_f64`, `mma_f64_16816`.
pub struct MmaPeak<'b> {
    kernel: Kernel,
    f: CudaFunction,
    cfg: LaunchConfig,
    iterations: i32,
    ops: &'b CudaSlice<u8>,
    sink: &'b CudaSlice<u64>,
}

impl<'b> MmaPeak<'b> {
    /// `iterations` of the timed loop per warp; `ops` holds every thread's operand sets, filled
    /// with the kernel's input type ([`mma_operands`]); `sink` takes one value of at most 8 bytes.
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] for a kernel that is not an `mma.sync` peak, a block that is
    /// not whole warps, or an operand buffer too small.
    pub fn new(
        compiled: &Compiled,
        kernel: Kernel,
        cfg: LaunchConfig,
        iterations: i32,
        ops: &'b CudaSlice<u8>,
        sink: &'b CudaSlice<u64>,
    ) -> Result<Self, DeviceError> {
        mma_checks(kernel, &cfg, ops.len())?;
        Ok(MmaPeak {
            kernel,
            f: compiled.function(kernel.entry())?,
            cfg,
            iterations,
            ops,
            sink,
        })
    }
}

impl Launcher for MmaPeak<'_> {
    fn kernel(&self) -> Kernel {
        self.kernel
    }

    fn function(&self) -> &CudaFunction {
        &self.f
    }

    fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// FLOPs per launch.
    fn work(&self) -> LaunchWork {
        mma_work(self.kernel, threads(&self.cfg), self.iterations).unwrap_or_default()
    }

    fn push<'a>(&'a self, s: &'a Session, a: &mut Args<'a, '_>) {
        // mma_*(ops, iters, sink, sentinel, stamps), the sentinel in the accumulator's type.
        a.arg(self.ops).arg(&self.iterations).arg(self.sink);
        match self.kernel {
            Kernel::MmaInt8 => a.arg(&SENTINEL_I32),
            Kernel::MmaF64 | Kernel::MmaF64M16n8k16 => a.arg(&SENTINEL_F64),
            _ => a.arg(&SENTINEL_F32),
        };
        a.arg(s.stamps());
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
}

impl Launcher for Empty {
    fn kernel(&self) -> Kernel {
        Kernel::Empty
    }

    fn function(&self) -> &CudaFunction {
        &self.f
    }

    /// One warp.
    fn config(&self) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Nothing.
    fn work(&self) -> LaunchWork {
        LaunchWork::default()
    }

    /// `empty()` takes no argument.
    fn push<'a>(&'a self, _: &'a Session, _: &mut Args<'a, '_>) {}
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
}

impl Launcher for Sweep<'_> {
    fn kernel(&self) -> Kernel {
        self.kernel
    }

    fn function(&self) -> &CudaFunction {
        &self.f
    }

    /// The launch geometry: one thread per vector, at most the planned full grid.
    fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// FLOPs and bytes per launch.
    fn work(&self) -> LaunchWork {
        sweep_work(self.kernel, self.elements, self.repeats, self.fmas).unwrap_or_default()
    }

    fn push<'a>(&'a self, s: &'a Session, a: &mut Args<'a, '_>) {
        // ert_*(a, n, reps, fmas, alpha, stamps), alpha in the kernel's type.
        a.arg(self.buf)
            .arg(&self.elements)
            .arg(&self.repeats)
            .arg(&self.fmas);
        if self.kernel == Kernel::ErtF64 {
            a.arg(&1e-7f64)
        } else {
            a.arg(&1e-7f32)
        };
        a.arg(s.stamps());
    }
}

#[cfg(test)]
mod fma_orbits;

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(blocks: u32, threads: u32) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        }
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

        // 1024 threads × MMA_SETS (2) sets × 6 words × 4 bytes of operands.
        let ops = 1024 * 48;
        assert!(mma_checks(Kernel::MmaF16, &grid(4, 256), ops).is_ok());
        assert!(mma_checks(Kernel::MmaF16, &grid(4, 256), ops - 1).is_err());
        assert!(mma_checks(Kernel::MmaF16, &grid(4, 48), ops).is_err());
        assert!(mma_checks(Kernel::FmaF32, &grid(4, 256), ops).is_err());
        // FP64 m16n8k16: 2 sets × 12 doubles per thread.
        assert!(mma_checks(Kernel::MmaF64M16n8k16, &grid(4, 256), 1024 * 192).is_ok());
        assert!(mma_checks(Kernel::MmaF64M16n8k16, &grid(4, 256), 1024 * 191).is_err());

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
}
