//! What one launch does ([`LaunchWork`]): a kernel's work formula ([`crate::Work`]) times the
//! launch's geometry and arguments, one function per kind of kernel. Every FLOP and byte the
//! collector records for one of our kernels is counted here.

use roofline_model::bundle::{Datapath, MemoryLevel};

use crate::{Kernel, Work};

/// What one launch does: the work formula ([`Kernel::work`]) times the launch's geometry and
/// arguments, as counted by the functions below (one per kind of kernel). The DL kernels' work is
/// the operation's analytical complexity (`roofline_model::analysis::dl`), which the suite attaches: their
/// launches report none.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{BW_UNROLL, FMA_CHAINS, FMA_UNROLL, MMA_ACC};

    /// Threads in a launch of `blocks` blocks of `per_block` threads.
    fn threads(blocks: u64, per_block: u64) -> u64 {
        blocks * per_block
    }
    /// FMA peaks, by hand: fma_f32 on 132 SMs × 8 blocks × 256 threads, 512 iterations of 8
    /// chains × 64 steps: 2 FLOPs × 512 × 512 × 270,336 threads.
    #[test]
    fn fma_flops_per_launch_match_a_hand_count() {
        let t = threads(132 * 8, 256);
        assert_eq!(t, 270_336);
        assert_eq!(FMA_CHAINS * FMA_UNROLL, 512);
        let w = fma_work(Kernel::FmaF32, t, 512).unwrap();
        assert_eq!(
            w.flops,
            Some((Datapath::Fp32, 2.0 * 512.0 * 512.0 * 270_336.0))
        );
        assert_eq!(w.bytes, 0.0);
        // Packed half2: two lanes per instruction, twice the FLOPs.
        let h = fma_work(Kernel::FmaF16x2, t, 512).unwrap();
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
        let t = threads(132 * 4, 256);
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
        let t = threads(264, 1024);
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
}
