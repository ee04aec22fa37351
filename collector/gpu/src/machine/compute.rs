//! The compute ceilings of our own kernels: CUDA-core FMA chains per precision and Tensor Core
//! `mma.sync` peaks on bounded random operands (with `--diagnose-refused`, the kernels the SASS
//! audit refuses here timed for a note).

use roofline_kernels::{FMA_CHAINS, FMA_UNROLL, Kernel, MMA_ACC, RANDOM_WORDS, mma_operands};
use roofline_model::bundle::{Machine, Operands, Skipped};

use crate::launch::Launcher;
use crate::launch::micro::{FmaPeak, MmaPeak};

use super::MachineError;
use super::rig::{Rig, peak};

/// The FMA peaks' launch geometry: blocks per SM, threads per block.
pub(super) const FMA_GRID: (u32, u32) = (8, 256);

/// The FMA peaks and the iterations of their timed loop per launch (the work of one launch is
/// kept whatever the unroll: iterations × `FMA_UNROLL` constant).
pub(super) fn fma_cases(quick: bool) -> [(Kernel, i32); 4] {
    let scale = if quick { 1 } else { 2 };
    let per = |base: i32| base * scale * 16 / FMA_UNROLL as i32;
    [
        (Kernel::FmaF64, per(512)),
        (Kernel::FmaF32, per(1024)),
        (Kernel::FmaF16x2, per(1024)),
        (Kernel::FmaBf16x2, per(1024)),
    ]
}

/// The `mma.sync` peaks a GPU of compute capability `cc` launches, and the iterations of their
/// timed loop per launch.
pub(super) fn mma_cases(quick: bool, cc: (i32, i32)) -> Vec<(Kernel, i32)> {
    let scale = if quick { 1 } else { 4 };
    let mut cases = vec![
        (Kernel::MmaF16, 2048 * scale),
        (Kernel::MmaBf16, 2048 * scale),
        (Kernel::MmaTf32, 2048 * scale),
        (Kernel::MmaFp8, 1024 * scale),
        (Kernel::MmaInt8, 1024 * scale),
        (Kernel::MmaF64, 2048 * scale),
    ];
    // m16n8k16 for FP64 exists from sm_90 (PTX ISA 7.8): 8× the work of m8n8k4 per instruction.
    if cc >= Kernel::MmaF64M16n8k16.min_compute_capability() {
        cases.push((Kernel::MmaF64M16n8k16, 512 * scale));
    }
    cases
}

/// CUDA-core peaks: FMA chains per precision.
pub(super) fn fma(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    let (blocks, threads) = FMA_GRID;
    let cfg = rig.session.grid(blocks, threads, 0);
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    for (kernel, iterations) in fma_cases(rig.plan.quick) {
        let roofline_kernels::Work::Fma { datapath, .. } = kernel.work() else {
            continue;
        };
        if rig.refused(kernel, format!("{} FMA peak", datapath.label()), skipped) {
            if let Some(reason) = rig.diagnosable(kernel) {
                let l = FmaPeak::new(&rig.fma, kernel, cfg, iterations, &sink);
                rig.diagnose(l.as_ref().map(|l| l as &dyn Launcher), kernel, &reason);
            }
            continue;
        }
        rig.check_residency(kernel, &cfg);
        let l = FmaPeak::new(&rig.fma, kernel, cfg, iterations, &sink)?;
        let t = rig.measure(kernel.entry(), |s| l.launch(s))?;
        let f = rig.figures(kernel.entry(), &t, l.work().flop_count());
        m.compute.push(peak(
            f,
            datapath,
            Operands::QuadraticMap,
            format!(
                "FMA chains ({}), {FMA_CHAINS} independent per thread, {FMA_UNROLL} steps unrolled, full occupancy",
                kernel.entry()
            ),
        ));
    }
    Ok(())
}

/// The most blocks of 256 threads per SM an `mma.sync` kernel is launched with: FP64 m16n8k16
/// needs about twice the registers of the others (122 on sm_90), so two; four otherwise. Fewer
/// when the driver's occupancy calculator says fewer fit ([`Rig::resident_blocks`]), so that a
/// launch is one wave (the FP16 kernel takes 70 registers on sm_80 to sm_89: three).
pub(super) fn mma_blocks_per_sm(kernel: Kernel) -> u32 {
    if kernel == Kernel::MmaF64M16n8k16 {
        2
    } else {
        4
    }
}

/// Tensor Core peaks with our own `mma.sync` kernels, on bounded random operands.
pub(super) fn mma(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let cc = rig.session.compute_capability();
    for (kernel, iterations) in mma_cases(rig.plan.quick, cc) {
        let roofline_kernels::Work::Mma {
            datapath, shape, ..
        } = kernel.work()
        else {
            continue;
        };
        let Some((per_thread, fill)) = mma_operands(kernel) else {
            continue;
        };
        let blocks = rig.resident_blocks(kernel, 256, mma_blocks_per_sm(kernel));
        let cfg = rig.session.grid(blocks, 256, 0);
        let ops_bytes = (per_thread * crate::launch::threads(&cfg)) as usize;
        let what = format!(
            "{} own mma.sync kernel ({})",
            datapath.label(),
            kernel.entry()
        );
        if rig.refused(kernel, what, skipped) {
            if let Some(reason) = rig.diagnosable(kernel) {
                // The operands of a refused kernel: FP8 below sm_89 has no fill; raw words then.
                let kind = if cc >= Kernel::FillE4m3.min_compute_capability() {
                    fill
                } else {
                    RANDOM_WORDS
                };
                let ops = rig.alloc_filled(ops_bytes, kind, "mma.sync operands")?;
                let l = MmaPeak::new(&rig.mma, kernel, cfg, iterations, &ops, &sink);
                rig.diagnose(l.as_ref().map(|l| l as &dyn Launcher), kernel, &reason);
            }
            continue;
        }
        let ops = rig.alloc_filled(ops_bytes, fill, "mma.sync operands")?;
        rig.check_residency(kernel, &cfg);
        let l = MmaPeak::new(&rig.mma, kernel, cfg, iterations, &ops, &sink)?;
        let t = rig.measure(kernel.entry(), |s| l.launch(s))?;
        let f = rig.figures(kernel.entry(), &t, l.work().flop_count());
        let sets = roofline_kernels::mma_sets(kernel);
        m.compute.push(peak(
            f,
            datapath,
            fill.operands(),
            format!(
                "own mma.sync kernel ({}, m{}n{}k{}), {MMA_ACC} accumulators per warp, {sets} operand sets of bounded random data per thread",
                kernel.entry(),
                shape.m,
                shape.n,
                shape.k
            ),
        ));
    }
    if cc.0 >= 9 {
        skipped.push(Skipped {
            what: "wgmma (Hopper warpgroup MMA) own kernels".into(),
            reason: "not implemented yet: on sm_90 our Tensor Core figures use mma.sync, which cannot reach the warpgroup datapath's peak; the cuBLASLt reference does".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp64_m16n8k16_launches_two_blocks_per_sm_and_the_others_four() {
        assert_eq!(mma_blocks_per_sm(Kernel::MmaF64M16n8k16), 2);
        assert_eq!(mma_blocks_per_sm(Kernel::MmaBf16), 4);
    }
}
