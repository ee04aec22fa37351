//! The work formulas: what one kernel does per iteration of its timed loop ([`Work`]), built from
//! the constants its source is compiled with. The collector counts FLOPs and bytes with them
//! (through [`crate::LaunchWork`]); the SASS audit checks them against the compiled instructions.

use roofline_model::bundle::{Datapath, MemoryLevel};

use crate::source::VECTOR_BYTES;

/// Where a memory kernel's accesses go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// `ld.global.cs` / `st.global.cs`: streaming, evict-first (HBM kernels).
    GlobalStreaming,
    /// `ld.global.cg`: cached in L2 only, bypassing L1.
    GlobalL2Only,
    /// `ld.global.ca`: cached in L1.
    GlobalL1,
    /// `ld.global.nc`: the non-coherent read-only path, cached in L1.
    GlobalNonCoherent,
    /// Plain `ld.global`/`st.global` (the compiler's default caching; the sweep).
    GlobalDefault,
    /// `ld.shared`.
    Shared,
}

/// The shape of one `mma.sync`, `m × n × k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MmaShape {
    /// Rows of A and D.
    pub m: u32,
    /// Columns of B and D.
    pub n: u32,
    /// The reduction depth.
    pub k: u32,
}

impl MmaShape {
    /// FLOPs of one MMA: `2·m·n·k` (a multiply and an add per term; PTX ISA, "Matrix shape").
    pub fn flops(self) -> f64 {
        2.0 * f64::from(self.m) * f64::from(self.n) * f64::from(self.k)
    }
}

/// What one kernel does per iteration of its timed loop: the *work formula* the collector
/// counts FLOPs and bytes with, and the SASS audit checks against the compiled instructions.
/// Built only from the constants passed to NVRTC ([`crate::Source::defines`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Work {
    /// Per thread per iteration, `per_iteration` FMA instructions on `datapath`, each `lanes`
    /// wide (2 for `half2`/`bfloat162`); 2 FLOPs per lane.
    Fma {
        /// The CUDA-core datapath.
        datapath: Datapath,
        /// Lanes per instruction.
        lanes: u32,
        /// FMA instructions per thread per iteration.
        per_iteration: u32,
    },
    /// Per warp per iteration, `per_iteration` `mma.sync` of `shape` on `datapath`.
    Mma {
        /// The Tensor Core datapath.
        datapath: Datapath,
        /// The instruction's shape.
        shape: MmaShape,
        /// MMAs per warp per iteration.
        per_iteration: u32,
    },
    /// Per thread per iteration of the main loop, `loads` and `stores` of [`VECTOR_BYTES`]
    /// through `access`; the run counts bytes as elements × [`VECTOR_BYTES`] × accesses per element.
    Memory {
        /// The level the kernel measures.
        level: MemoryLevel,
        /// How it reaches memory.
        access: Access,
        /// Vector loads per thread per iteration.
        loads: u32,
        /// Vector stores per thread per iteration.
        stores: u32,
    },
    /// The ERT-style sweep: per element, one vector load, `fmas` FMAs per lane (an argument),
    /// one vector store; `lanes` values per vector.
    Sweep {
        /// The CUDA-core datapath.
        datapath: Datapath,
        /// Values per 16-byte vector (4 FP32, 2 FP64).
        lanes: u32,
    },
    /// Nothing (the empty kernel, for launch overhead).
    Nothing,
    /// A DL kernel: its work is the operation's analytical F and B (`roofline_model::analysis::dl`), not
    /// an instruction count; arithmetic in FP32 on CUDA cores.
    Analytical,
    /// An operand fill of `init.cu` (untimed): a grid-stride loop storing one value of `bytes`
    /// bytes per pass.
    Fill {
        /// Bytes of one value stored.
        bytes: u32,
    },
}

impl Work {
    /// FLOPs one thread (for [`Work::Fma`]) or one warp (for [`Work::Mma`]) does per
    /// iteration; `None` for the other kinds, whose FLOPs depend on their arguments.
    pub fn flops_per_iteration(self) -> Option<f64> {
        match self {
            Work::Fma {
                lanes,
                per_iteration,
                ..
            } => Some(2.0 * f64::from(lanes) * f64::from(per_iteration)),
            Work::Mma {
                shape,
                per_iteration,
                ..
            } => Some(shape.flops() * f64::from(per_iteration)),
            _ => None,
        }
    }

    /// Bytes one element moves, for the kernels that walk an array of [`VECTOR_BYTES`]-wide
    /// elements (grid-stride): each element is loaded and/or stored once, so an iteration covers
    /// `max(loads, stores)` elements with `loads + stores` accesses (1 access per element for
    /// the read and write kernels, 2 for the copy); the sweep loads and stores every element.
    /// `None` for the other kinds.
    pub fn bytes_per_element(self) -> Option<f64> {
        let vector = f64::from(VECTOR_BYTES);
        match self {
            Work::Memory { loads, stores, .. } if loads.max(stores) > 0 => {
                Some(vector * f64::from(loads + stores) / f64::from(loads.max(stores)))
            }
            Work::Sweep { .. } => Some(2.0 * vector),
            _ => None,
        }
    }

    /// Bytes one thread moves per iteration, `(loads + stores) × VECTOR_BYTES`, for the memory
    /// kernels whose every thread runs a fixed count of iterations (the L1 and shared-memory
    /// rereads); `None` for the other kinds.
    pub fn bytes_per_thread_iteration(self) -> Option<f64> {
        match self {
            Work::Memory { loads, stores, .. } => {
                Some(f64::from(VECTOR_BYTES) * f64::from(loads + stores))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kernel;
    use crate::source::{BW_UNROLL, FMA_CHAINS, FMA_UNROLL, MMA_ACC};

    #[test]
    fn work_formulas_count_from_the_defines() {
        let fma = Kernel::FmaF16x2.work().flops_per_iteration();
        assert_eq!(fma, Some(f64::from(2 * 2 * FMA_CHAINS * FMA_UNROLL)));
        let mma = Kernel::MmaBf16.work().flops_per_iteration();
        assert_eq!(mma, Some(4096.0 * f64::from(MMA_ACC)));
        assert_eq!(Kernel::all().len(), 21 + 24 + 6);
        for k in Kernel::all() {
            assert!(
                k.source()
                    .text()
                    .contains(k.entry().rsplit('_').next().unwrap_or(""))
            );
        }
    }

    #[test]
    fn bytes_per_element_and_per_thread_count_the_accesses() {
        let v = f64::from(VECTOR_BYTES);
        assert_eq!(Kernel::HbmRead.work().bytes_per_element(), Some(v));
        assert_eq!(Kernel::HbmWrite.work().bytes_per_element(), Some(v));
        // A copy reads and writes every element.
        assert_eq!(Kernel::HbmCopy.work().bytes_per_element(), Some(2.0 * v));
        assert_eq!(Kernel::ErtF64.work().bytes_per_element(), Some(2.0 * v));
        assert_eq!(
            Kernel::L1Read.work().bytes_per_thread_iteration(),
            Some(f64::from(BW_UNROLL) * v)
        );
        assert_eq!(Kernel::FmaF32.work().bytes_per_element(), None);
        assert!(matches!(
            Kernel::SharedRead.work(),
            Work::Memory {
                level: MemoryLevel::Shared,
                ..
            }
        ));
    }
}
