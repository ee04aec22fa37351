//! Why one of our kernels must not be timed on a GPU: its hardware is missing there, or the SASS
//! audit refused it on that architecture (the table embedded from `kernels/sass-audit.tsv`).

use crate::{Kernel, arch_name, audit_table};

/// Why `kernel` must not be timed on a GPU of compute capability `cc`, if it must not: the
/// hardware lacks its instructions ([`Kernel::min_compute_capability`]; the entry point is then
/// compiled empty), or the SASS audit refused it there ([`audit_refusal`]). `machine` and
/// `suite` call this before timing any of our own kernels and record the reason under `skipped`.
pub fn refusal(kernel: Kernel, cc: (i32, i32)) -> Option<String> {
    let min = kernel.min_compute_capability();
    if cc < min {
        return Some(format!(
            "{} needs {} or later; this GPU is {}",
            kernel.entry(),
            arch_name(min.0, min.1),
            arch_name(cc.0, cc.1)
        ));
    }
    audit_refusal(kernel, &arch_name(cc.0, cc.1))
}

/// Why the collector must not time `kernel` on `arch` (`sm_90`), from the SASS audit embedded in
/// the binary ([`audit_table::embedded`]): it failed there under some audited toolkit (a census
/// mismatch, emulation such as FP8 through FP16 Tensor Cores, spills, dead code), or the
/// architecture lacks its hardware. `None` when it passed under every toolkit, or when no toolkit
/// audited `arch` (a newer GPU: the run goes ahead, unproven).
pub fn audit_refusal(kernel: Kernel, arch: &str) -> Option<String> {
    match audit_table::embedded() {
        Ok(t) => t.refusal(kernel.entry(), arch),
        // Unreachable while the unit tests parse the embedded table; refuse rather than time an
        // unaudited kernel.
        Err(e) => Some(format!("the embedded SASS audit is unreadable: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_names_the_architecture_a_kernel_needs() {
        assert_eq!(
            refusal(Kernel::MmaFp8, (8, 0)).as_deref(),
            Some("mma_fp8 needs sm_89 or later; this GPU is sm_80")
        );
        assert_eq!(
            refusal(Kernel::FmaBf16x2, (7, 5)).as_deref(),
            Some("fma_bf16x2 needs sm_80 or later; this GPU is sm_75")
        );
        assert_eq!(
            refusal(Kernel::MmaFp8, (9, 0)),
            audit_refusal(Kernel::MmaFp8, "sm_90")
        );
        // The case: on Hopper, `mma.sync` FP8 is lowered to FP16 HMMA, so no FP8 Tensor
        // ceiling is ever measured with it; on Ada it is native and runs.
        let hopper = refusal(Kernel::MmaFp8, (9, 0)).unwrap_or_default();
        assert!(hopper.contains("emulat"), "{hopper}");
        assert_eq!(refusal(Kernel::MmaFp8, (8, 9)), None);
        assert_eq!(refusal(Kernel::MmaBf16, (9, 0)), None);
        for k in Kernel::all() {
            let min = k.min_compute_capability();
            assert_eq!(refusal(k, min), audit_refusal(k, &arch_name(min.0, min.1)));
        }
    }
}
