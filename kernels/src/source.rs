//! The CUDA sources of `kernels/`, embedded with `include_str!`: each file as a [`Source`], the
//! prelude every one starts with, and the constants each is compiled with (the same constants the
//! work formulas count with, so a kernel and its count cannot drift apart).

/// Helpers every source starts with (clock stamps, `KEEP`).
const COMMON: &str = include_str!("../common.cuh");

/// Independent FMA chains per thread in `fma.cu` (`-DFMA_CHAINS`).
pub const FMA_CHAINS: u32 = 8;
/// Steps of every chain unrolled in one iteration of `fma.cu`'s timed loop (`-DFMA_UNROLL`).
/// At 16 (8 chains: 128 FMAs a pass) the loop's own `UIADD3, ISETP, BRA` took 3 of every 131
/// issue slots on sm_90 (97.7% of the FMA rate at best, 97.0% for the packed kernels, which also
/// reload their operands); at 64 they take 3 of 515 (99.4%; SASS checked with NVRTC
/// 13.2 and ptxas 12.9).
pub const FMA_UNROLL: u32 = 64;
/// Independent accumulators per warp in `mma.cu`: `mma.sync` per iteration (`-DMMA_ACC`).
pub const MMA_ACC: u32 = 8;
/// Operand sets each thread of an `mma.cu` kernel loads from its operand buffer before the timed
/// loop (`-DMMA_SETS`); accumulator `k` uses set `k % MMA_SETS`, so consecutive MMAs change
/// operands. Two keep the 32-bit-register kernels at 64 registers on sm_90 (four blocks of 256
/// threads per SM; 70 on sm_80 to sm_89: three), where four took 96 (SASS audit, ptxas 12.9).
pub const MMA_SETS: u32 = 2;
/// The same for FP64 m16n8k16 (`-DMMA_SETS_DMMA16`), whose set is 12 doubles (24 registers):
/// two keep it within 128 registers.
pub const MMA_SETS_DMMA16: u32 = 2;
/// 16-byte loads in flight per thread per iteration of the read kernels of `bandwidth.cu`
/// (`-DBW_UNROLL`); the copy kernel moves half as many (a load and a store each).
pub const BW_UNROLL: u32 = 4;
/// Bytes of one vector access in `bandwidth.cu` and `ert.cu` (`float4`, `double2`).
pub const VECTOR_BYTES: u32 = 16;
/// Rows and columns of one output tile of the implicit-GEMM convolutions in `dl.cu`
/// (`-DIG_BM`, `-DIG_BN`).
pub const IG_TILE: u32 = 64;
/// Depth of one shared-memory stage of the implicit-GEMM convolutions (`-DIG_BK`).
pub const IG_DEPTH: u32 = 16;

/// One CUDA source file of `kernels/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// `bandwidth.cu`: HBM read/write/copy, L2, L1 and shared-memory reads.
    Bandwidth,
    /// `fma.cu`: CUDA-core FMA chains per precision, and the empty kernel.
    Fma,
    /// `mma.cu`: Tensor Core `mma.sync` loops per datapath.
    Mma,
    /// `ert.cu`: the ERT-style sweep kernel.
    Ert,
    /// `dl.cu`: our own direct convolutions and LSTM cell (`roofline suite`).
    Dl,
    /// `init.cu`: the operand fills (bounded random data written on the GPU once per run,
    /// untimed).
    Init,
}

impl Source {
    /// Every source.
    pub const ALL: [Source; 6] = [
        Source::Bandwidth,
        Source::Fma,
        Source::Mma,
        Source::Ert,
        Source::Dl,
        Source::Init,
    ];

    /// The file name under `kernels/`.
    pub fn file(self) -> &'static str {
        match self {
            Source::Bandwidth => "bandwidth.cu",
            Source::Fma => "fma.cu",
            Source::Mma => "mma.cu",
            Source::Ert => "ert.cu",
            Source::Dl => "dl.cu",
            Source::Init => "init.cu",
        }
    }

    /// The CUDA C++ text, without the common prelude.
    pub fn text(self) -> &'static str {
        match self {
            Source::Bandwidth => include_str!("../bandwidth.cu"),
            Source::Fma => include_str!("../fma.cu"),
            Source::Mma => include_str!("../mma.cu"),
            Source::Ert => include_str!("../ert.cu"),
            Source::Dl => include_str!("../dl.cu"),
            Source::Init => include_str!("../init.cu"),
        }
    }

    /// The constants this source is compiled with, as `(name, value)`: the same constants the
    /// work formulas of [`crate::Work`] use, so a kernel and its count cannot drift apart. A source
    /// refuses to compile (`#error`) without them.
    pub fn defines(self) -> Vec<(&'static str, u32)> {
        match self {
            Source::Bandwidth => vec![("BW_UNROLL", BW_UNROLL)],
            Source::Fma => vec![("FMA_CHAINS", FMA_CHAINS), ("FMA_UNROLL", FMA_UNROLL)],
            Source::Mma => vec![
                ("MMA_ACC", MMA_ACC),
                ("MMA_SETS", MMA_SETS),
                ("MMA_SETS_DMMA16", MMA_SETS_DMMA16),
            ],
            Source::Ert => vec![],
            Source::Dl => vec![("IG_BM", IG_TILE), ("IG_BN", IG_TILE), ("IG_BK", IG_DEPTH)],
            Source::Init => vec![],
        }
    }

    /// The full text NVRTC compiles: the prelude, then the source.
    pub fn program(self) -> String {
        format!("{COMMON}\n{}", self.text())
    }

    /// NVRTC's options for `arch` (`sm_90`): the exact options every run uses (the SASS audit
    /// compiles through [`crate::nvrtc_compile`] with them too).
    pub fn options(self, arch: &str) -> Vec<String> {
        let mut o = vec![format!("--gpu-architecture={arch}"), "-std=c++17".into()];
        o.extend(
            self.defines()
                .into_iter()
                .map(|(k, v)| format!("-D{k}={v}")),
        );
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch_name;

    /// Every constant a source is compiled with is one it requires (`#ifndef … #error`), so a
    /// kernel can never fall back on a value of its own that its work formula does not know.
    #[test]
    fn every_define_is_required_by_its_source() {
        for s in Source::ALL {
            for (name, _) in s.defines() {
                assert!(
                    s.text().contains(&format!("#ifndef {name}\n#error")),
                    "{} does not require {name}",
                    s.file()
                );
                assert!(
                    !s.text().contains(&format!("#define {name} ")),
                    "{} defines {name} itself",
                    s.file()
                );
            }
            assert!(
                s.options("sm_90")
                    .contains(&"--gpu-architecture=sm_90".to_string())
            );
        }
    }

    #[test]
    fn program_starts_with_the_prelude() {
        for s in Source::ALL {
            let p = s.program();
            assert!(p.starts_with(COMMON));
            assert!(p.contains("STAMP_BEGIN"));
        }
        assert_eq!(arch_name(9, 0), "sm_90");
    }
}
