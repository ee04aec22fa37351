//! Typed launchers: one safe type per kernel family of `kernels/`, all behind one trait,
//! [`Launcher`]. Each is built by a constructor that checks its arguments against its kernel
//! (the family, the buffers' sizes) and loads the entry point; it then names its kernel and its
//! geometry, pushes the argument list its entry point declares ([`params`]: every launch compares
//! what was pushed with it, and a test compares it with NVRTC's PTX for every source and
//! architecture), and says what one launch does ([`LaunchWork`], from the kernel's work formula,
//! [`Kernel::work`], and the launch's geometry). The one `unsafe` kernel launch of the collector
//! is the private `launch_one` here, behind [`Launcher::launch`].
//!
//! - [`micro`]: the microbenchmarks of `roofline machine` (HBM, L2, L1 and shared memory, FMA and
//!   `mma.sync` peaks, the empty kernel, the ERT-style sweep);
//! - [`dl`]: our own DL kernels of `roofline suite` (direct and implicit-GEMM convolutions, the
//!   LSTM cell);
//! - [`fill`]: the untimed operand fills (bounded random data, written once per run).

use cudarc::driver::{CudaFunction, CudaSlice, LaunchArgs, LaunchConfig, PushKernelArg};
use roofline_kernels::{DlOp, Kernel, LaunchWork};

use super::session::{DeviceError, Session, driver};

pub mod dl;
pub mod fill;
pub mod micro;

/// A typed launcher of one entry point (see the module's documentation). Its constructor has
/// checked its arguments; what it pushes is checked against [`params`] at every launch.
pub trait Launcher {
    /// The entry point it launches.
    fn kernel(&self) -> Kernel;
    /// The entry point, loaded.
    fn function(&self) -> &CudaFunction;
    /// The launch geometry.
    fn config(&self) -> LaunchConfig;
    /// What one launch does: FLOPs on a datapath, bytes at a level (none for the DL kernels,
    /// whose work is the operation's, attached by the suite).
    fn work(&self) -> LaunchWork;
    /// Pushes one launch's arguments, in the order the entry point declares them ([`params`]).
    fn push<'a>(&'a self, s: &'a Session, args: &mut Args<'a, '_>);
    /// One launch on the session's stream, through the collector's one unsafe kernel launch.
    ///
    /// # Errors
    /// [`DeviceError::Arguments`] when what was pushed differs from [`params`],
    /// [`DeviceError::GridLimits`] for a grid beyond CUDA's limits (nothing is launched in
    /// either case); the driver's error.
    fn launch(&self, s: &Session) -> Result<(), DeviceError> {
        launch_one(s, self)
    }
}

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
        Kernel::L1Read | Kernel::L1ReadNc => vec![Ptr, U32, I32, Ptr, F32, Ptr],
        Kernel::SharedRead => vec![U32, I32, Ptr, F32, Ptr],
        Kernel::FmaF64 => vec![F64, F64, I32, Ptr, F64, Ptr],
        Kernel::FmaF32 => vec![F32, F32, I32, Ptr, F32, Ptr],
        Kernel::FmaF16x2 | Kernel::FmaBf16x2 => vec![U32, U32, I32, Ptr, U32, Ptr],
        Kernel::Empty => vec![],
        Kernel::MmaInt8 => vec![Ptr, I32, Ptr, I32, Ptr],
        Kernel::MmaF64 | Kernel::MmaF64M16n8k16 => vec![Ptr, I32, Ptr, F64, Ptr],
        Kernel::MmaF16 | Kernel::MmaBf16 | Kernel::MmaTf32 | Kernel::MmaFp8 => {
            vec![Ptr, I32, Ptr, F32, Ptr]
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
        Kernel::FillWords => vec![Ptr, U64, U64, U32, U32],
        Kernel::FillF32
        | Kernel::FillF64
        | Kernel::FillF16
        | Kernel::FillBf16
        | Kernel::FillE4m3 => vec![Ptr, U64, U64, F32],
    }
}

/// A value a launcher may push, with its [`Param`] class.
pub trait KernelParam {
    /// Its class.
    const PARAM: Param;
    /// Adds `value` to a launch's arguments.
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
pub struct Args<'a, 'r> {
    inner: &'r mut LaunchArgs<'a>,
    pushed: Vec<Param>,
}

impl<'a> Args<'a, '_> {
    /// Pushes the next argument.
    pub fn arg<T: KernelParam>(&mut self, value: &'a T) -> &mut Self {
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

/// The one unsafe kernel launch: `l`'s entry point, with its geometry and the arguments it
/// pushes.
///
/// Every launcher was built only through a constructor that checked the kernel's family and the
/// buffers' sizes; the arguments it pushes are compared with the entry point's declared
/// parameters ([`params`], itself checked against NVRTC's PTX by a test) and nothing is launched
/// when they differ, nor when the grid is beyond CUDA's limits.
fn launch_one<L: Launcher + ?Sized>(s: &Session, l: &L) -> Result<(), DeviceError> {
    let kernel = l.kernel();
    let cfg = l.config();
    let mut inner = s.stream().launch_builder(l.function());
    let mut args = Args {
        inner: &mut inner,
        pushed: Vec::new(),
    };
    l.push(s, &mut args);
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

/// Refuses `kernel` when it is not of the launcher's family (`ok` false).
fn check_family(kernel: Kernel, ok: bool, family: &str) -> Result<(), DeviceError> {
    if ok {
        Ok(())
    } else {
        Err(refuse(kernel, format!("not a {family} kernel")))
    }
}

/// Refuses a buffer holding fewer than the `need` bytes the launch reads or writes.
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

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_model::analysis::dl::Precision;

    fn grid(blocks: u32, threads: u32) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        }
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
        assert_eq!(threads(&grid(132 * 8, 256)), 270_336);
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
    /// roofline-gpu params_match -- --ignored`.
    #[test]
    #[ignore = "needs NVRTC (libnvrtc.so on the library path); no GPU needed"]
    fn params_match_the_compiled_entry_points() {
        use roofline_kernels::{Source, compile_ptx, nvrtc_present};
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
                #[allow(clippy::print_stderr)] // a test's note, shown with --nocapture
                {
                    eprintln!("this NVRTC does not target sm_70; not checked there");
                }
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
