//! The bandwidth ceilings of the memory levels: HBM (read, write and copy kernels, and the
//! driver's device-to-device copy as the reference), L2 (a working set reread through L2 only),
//! and L1 and shared memory (a per-SM resident set reread).

use cudarc::driver::sys::CUfunction_attribute_enum as F;
use roofline_kernels::{BW_UNROLL, Kernel, RANDOM_WORDS, VECTOR_BYTES, stream_work};
use roofline_model::bundle::{Machine, Operands, Skipped};

use crate::launch::Launcher;
use crate::launch::micro::{Hbm, L2Read, Resident};

use super::rig::{Rig, bw};
use super::{MachineError, Plan};

/// nvbandwidth's figure for the same copy: its `device_local_copy` counts each copied byte once
/// (`bandwidth = size × loopCount / time`, NVIDIA/nvbandwidth `memcpy.cpp`), where we count the
/// bytes read plus written (the HBM traffic the roofline needs): half ours.
fn nvbandwidth_words(read_plus_written: f64) -> String {
    format!(
        "nvbandwidth's device_local_copy counts each byte once: {:.2} TB/s on its convention",
        read_plus_written / 2.0 / 1e12
    )
}

/// HBM: read, write and copy kernels over buffers far larger than L2, and the driver's
/// device-to-device copy as the reference (bytes read plus written), over random data.
pub(super) fn hbm(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    let bytes = rig.plan.hbm_bytes().max(rig.session.l2_bytes() * 16);
    let elements = (bytes / VECTOR_BYTES as usize) as u64;
    let mib = bytes >> 20;
    let src = rig.alloc_filled(bytes, RANDOM_WORDS, "HBM")?;
    let mut dst = rig.session.alloc_zeros::<u8>(bytes, "HBM")?;
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let cfg = rig.session.grid(8, 256, 0);
    let cases = [
        (
            Kernel::HbmRead,
            Operands::RandomBits,
            format!("read-only kernel, {VECTOR_BYTES}-byte streaming loads, {mib} MiB"),
        ),
        (
            Kernel::HbmWrite,
            Operands::Constant,
            format!("write-only kernel, {VECTOR_BYTES}-byte streaming stores, {mib} MiB"),
        ),
        (
            Kernel::HbmCopy,
            Operands::RandomBits,
            format!("copy kernel, bytes read + written, {mib} MiB"),
        ),
    ];
    let mut copy_bytes = None;
    for (kernel, operands, implementation) in cases {
        if rig.refused(kernel, format!("HBM {} kernel", kernel.entry()), skipped) {
            continue;
        }
        let (a, b) = match kernel {
            Kernel::HbmWrite => (&dst, None),
            _ => (&src, Some(&dst)),
        };
        rig.check_residency(kernel, &cfg);
        let l = Hbm::new(&rig.bandwidth, kernel, cfg, elements, a, b, &sink)?;
        let t = rig.measure(kernel.entry(), |s| l.launch(s))?;
        let f = rig.figures(kernel.entry(), &t, l.work().bytes);
        let implementation = if kernel == Kernel::HbmCopy {
            copy_bytes = Some(l.work());
            format!("{implementation} ({})", nvbandwidth_words(f.value))
        } else {
            implementation
        };
        m.bandwidth.push(bw(f, l.work(), operands, implementation));
    }
    // The driver's copy over the same buffers moves what our copy kernel does.
    let work =
        copy_bytes.unwrap_or_else(|| stream_work(Kernel::HbmCopy, elements, 1).unwrap_or_default());
    let t = rig.measure("cuMemcpyDtoD", |s| {
        s.stream()
            .memcpy_dtod(&src, &mut dst)
            .map_err(crate::session::driver("cuMemcpyDtoDAsync"))
    })?;
    let f = rig.figures("cuMemcpyDtoD", &t, work.bytes);
    let clock = f.nvml_clock();
    let words = nvbandwidth_words(f.value);
    let mut c = bw(
        f,
        work,
        Operands::RandomBits,
        format!(
            "driver device-to-device copy (cuMemcpyDtoDAsync), bytes read + written, {mib} MiB ({words})"
        ),
    );
    c.clock_hz = clock;
    c.reference = true;
    m.bandwidth.push(c);
    Ok(())
}

/// The L2 kernel's working set, in vectors, and its rereads per launch, for `sms` SMs and
/// `l2_bytes` of L2: `BW_UNROLL` loads per thread per pass over `sms × 1024` threads, the set at
/// most a quarter of L2 (inside one partition on GPUs whose L2 is split in two), reread 1024
/// times (256 with `--quick`); the timing plan puts as many launches back to back as an
/// interval needs.
pub(super) fn l2_set(plan: Plan, sms: u32, l2_bytes: usize) -> (u64, i32) {
    let threads = u64::from(sms) * 1024;
    let per_pass = u64::from(BW_UNROLL) * threads;
    let k = ((l2_bytes as u64 / 4) / (per_pass * u64::from(VECTOR_BYTES))).max(1);
    (per_pass * k, if plan.quick { 256 } else { 1024 })
}

/// The L1 and shared-memory kernels' slice per block (vectors: 32 KiB, two blocks per SM),
/// threads per block and rereads per launch.
pub(super) fn resident_set(plan: Plan) -> (u32, u32, i32) {
    (2048, 1024, if plan.quick { 1024 } else { 4096 })
}

/// L2: a working set well inside the L2 capacity, reread through L2 only (`ld.global.cg`).
pub(super) fn l2(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    if rig.refused(Kernel::L2Read, "L2 l2_read kernel".into(), skipped) {
        return Ok(());
    }
    let (elements, reps) = l2_set(rig.plan, rig.session.sm_count(), rig.session.l2_bytes());
    let set_bytes = (elements * u64::from(VECTOR_BYTES)) as usize;
    let buf = rig.alloc_filled(set_bytes, RANDOM_WORDS, "the L2 working set")?;
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let cfg = rig.session.grid(4, 256, 0);
    rig.check_residency(Kernel::L2Read, &cfg);
    let l = L2Read::new(&rig.bandwidth, cfg, elements, reps, &buf, &sink)?;
    let t = rig.measure("l2_read", |s| l.launch(s))?;
    let f = rig.figures("l2_read", &t, l.work().bytes);
    m.bandwidth.push(bw(
        f,
        l.work(),
        Operands::RandomBits,
        format!(
            "reread through L2 only (ld.global.cg), {:.1} MiB working set of {:.0} MiB L2",
            set_bytes as f64 / 1048576.0,
            rig.session.l2_bytes() as f64 / 1048576.0
        ),
    ));
    Ok(())
}

/// The shared-memory carve-out each resident kernel asks for
/// (`CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`, a percentage of the largest shared
/// memory; a hint the driver may override): `l1_read` the largest L1 (0: without it the driver
/// may pick a split that leaves too little L1 for the blocks' 2 × 32 KiB, and the "L1" figure
/// would be L2's; `l1_read_nc` likewise), `shared_read` the largest shared memory (100).
fn carveout(kernel: Kernel) -> i32 {
    if kernel == Kernel::SharedRead { 100 } else { 0 }
}

/// L1 and shared memory: every block rereads its own 32 KiB, resident in its SM, through L1
/// with two loads, `.ca` and the non-coherent `.nc` (each a ceiling, its load named; the charts
/// use the faster: on sm_90 `.ca` compiles to a strong SM-scoped load, `.nc` to the read-only
/// path), and from shared memory.
pub(super) fn l1_shared(
    rig: &mut Rig,
    m: &mut Machine,
    skipped: &mut Vec<Skipped>,
) -> Result<(), MachineError> {
    let (slice, threads, reps) = resident_set(rig.plan);
    let cfg = rig.session.grid(2, threads, 0);
    let blocks = u64::from(cfg.grid_dim.0);
    let buf = rig.alloc_filled(
        (blocks * u64::from(slice) * u64::from(VECTOR_BYTES)) as usize,
        RANDOM_WORDS,
        "the L1 working set",
    )?;
    let sink = rig.session.alloc_zeros::<u64>(1, "the result sink")?;
    let kib = slice * VECTOR_BYTES / 1024;
    let cases = [
        (
            Kernel::L1Read,
            Some(&buf),
            Operands::RandomBits,
            format!(
                "per-SM resident {} KiB reread with ld.global.ca, {VECTOR_BYTES}-byte loads, carve-out: largest L1",
                2 * kib
            ),
        ),
        (
            Kernel::L1ReadNc,
            Some(&buf),
            Operands::RandomBits,
            format!(
                "per-SM resident {} KiB reread with ld.global.nc (non-coherent, read-only path), {VECTOR_BYTES}-byte loads, carve-out: largest L1",
                2 * kib
            ),
        ),
        (
            Kernel::SharedRead,
            None,
            Operands::Constant,
            format!(
                "{kib} KiB of shared memory per block reread, {VECTOR_BYTES}-byte ld.shared, conflict-free"
            ),
        ),
    ];
    for (kernel, b, operands, implementation) in cases {
        if rig.refused(kernel, format!("{} kernel", kernel.entry()), skipped) {
            continue;
        }
        let l = Resident::new(&rig.bandwidth, kernel, cfg, slice, reps, b, &sink)?;
        if let Err(e) = l.function().set_attribute(
            F::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            carveout(kernel),
        ) {
            rig.notes.push(format!(
                "{}: the driver refused the shared-memory carve-out hint ({e}); it ran with the driver's choice",
                kernel.entry()
            ));
        }
        rig.check_residency(kernel, &l.config());
        let t = rig.measure(kernel.entry(), |s| l.launch(s))?;
        let f = rig.figures(kernel.entry(), &t, l.work().bytes);
        m.bandwidth.push(bw(f, l.work(), operands, implementation));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_state_nvbandwidths_convention_and_l1_asks_for_the_largest_l1() {
        assert_eq!(
            nvbandwidth_words(5.8e12),
            "nvbandwidth's device_local_copy counts each byte once: 2.90 TB/s on its convention"
        );
        assert_eq!(carveout(Kernel::L1Read), 0);
        assert_eq!(carveout(Kernel::L1ReadNc), 0);
        assert_eq!(carveout(Kernel::SharedRead), 100);
    }
}
