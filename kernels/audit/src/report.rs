//! The audit's results as Markdown (`docs/reference/kernels-sass.md`): per toolkit, the verdicts of every
//! kernel of the catalogue (in its order) on every architecture, the failures with their
//! reasons, and the details. The table itself, its format and the refusals it gives, is
//! [`roofline_kernels::audit_table`].

use std::fmt::Write as _;

use roofline_kernels::Kernel;
use roofline_kernels::audit_table::{Row, Table, Verdict};

/// The Markdown report of a table (`docs/reference/kernels-sass.md`): per toolkit, a verdict matrix (kernel × architecture), the failures
/// with their reasons, and the details (key instructions per iteration, registers, spills).
pub fn markdown(t: &Table) -> String {
    let mut s = String::from(MARKDOWN_HEAD);
    s.push_str("\n## Toolkits\n\n");
    for (name, desc) in &t.toolkits {
        let _ = writeln!(s, "- `{name}`: {desc}.");
        for (_, arch, why) in t.unsupported.iter().filter(|u| &u.0 == name) {
            let _ = writeln!(s, "  - {arch}: not audited with it ({why}).");
        }
    }
    for (name, _) in &t.toolkits {
        let archs = archs(t, name);
        let _ = writeln!(s, "\n## Verdicts, `{name}`\n");
        let _ = writeln!(s, "| kernel | {} |", archs.join(" | "));
        let _ = writeln!(s, "|---|{}", "---|".repeat(archs.len()));
        for k in Kernel::all() {
            let cells: Vec<String> = archs
                .iter()
                .map(|a| {
                    t.rows
                        .iter()
                        .find(|r| &r.toolkit == name && &r.arch == a && r.kernel == k.entry())
                        .map_or("–".into(), |r| match r.verdict {
                            Verdict::Fail => "**FAIL**".into(),
                            v => v.as_str().into(),
                        })
                })
                .collect();
            let _ = writeln!(s, "| `{}` | {} |", k.entry(), cells.join(" | "));
        }
        let fails: Vec<&Row> = t
            .rows
            .iter()
            .filter(|r| &r.toolkit == name && r.verdict == Verdict::Fail)
            .collect();
        if !fails.is_empty() {
            let _ = writeln!(s, "\nFailures (the collector does not time these):\n");
            for r in fails {
                let _ = writeln!(s, "- `{}` on {}: {}", r.kernel, r.arch, md(&r.reason));
            }
        }
    }
    for (name, _) in &t.toolkits {
        let _ = writeln!(s, "\n## Details, `{name}`\n");
        s.push_str("| kernel | arch | key instructions per iteration of the timed loop | registers | spills (bytes stored / loaded) | verdict |\n");
        s.push_str("|---|---|---|---|---|---|\n");
        for k in Kernel::all() {
            for r in t
                .rows
                .iter()
                .filter(|r| &r.toolkit == name && r.kernel == k.entry())
            {
                let _ = writeln!(
                    s,
                    "| `{}` | {} | {} | {} | {} / {} | {} |",
                    r.kernel,
                    r.arch,
                    md(&r.census),
                    r.registers,
                    r.spill_stores,
                    r.spill_loads,
                    r.verdict.as_str()
                );
            }
        }
    }
    s
}

/// The architectures of a toolkit, in row order.
fn archs(t: &Table, toolkit: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in t.rows.iter().filter(|r| r.toolkit == toolkit) {
        if !v.contains(&r.arch) {
            v.push(r.arch.clone());
        }
    }
    v
}

/// Escapes the characters Markdown tables care about.
fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('*', "\\*")
}

const MARKDOWN_HEAD: &str = "# SASS audit of the kernels

Written by `cargo xtask sass`; do not edit by hand. `cargo xtask test` (CI) audits afresh and fails
on any difference with this file or with `kernels/sass-audit.tsv`, the same table that the
collector embeds: `kernels::audit_refusal` refuses a kernel that fails here on the device's
architecture, with the reason below, for the collector to record under `skipped` instead of timing
it.

How: every source of `kernels/` is compiled by the collector's own `kernels::nvrtc_compile` (NVRTC,
the exact options a GPU run uses) for each architecture, assembled with `ptxas -v` (registers,
spills) and disassembled with `nvdisasm`; no driver, no GPU. The collector loads NVRTC's own
CUBIN (`kernels::compile_cubin`), never the PTX, so no driver JIT plays a part; the audit takes
that CUBIN from the same compile and fails unless every function in it has exactly the
instructions of ptxas's. The *timed loop* is the innermost loop (a backward branch) carrying the
most instructions of the kernel's kind, and its census must equal
the kernel's work formula (`kernels::Work`, built from the same `-D` constants): FMAs per iteration
(`FFMA`, `DFMA`, `HFMA2` and `HFMA2.MMA` together for FP16, `HFMA2.BF16_V2` for BF16), Tensor Core
instructions of the right kind and shape (`HMMA.16816.F32`, `QMMA.16832.F32.E4M3.E4M3`, …), and for
the bandwidth kernels 16-byte accesses whose cache operator reaches the level measured (`.cs` →
`.EF`, `.cg` → `.STRONG.GPU`, served by L2; `.ca` → L1). A fail names what differs: a census
mismatch (an instruction dropped, a loop unrolled or collapsed), dead code, emulation (one datapath
lowered to another, e.g. FP8 through FP16 `HMMA`), a wrong cache operator or vector width, spills
or local memory. The DL kernels (`dl.cu`) are counted analytically: their check is FP32 arithmetic
(`FFMA` in the inner loop, `FADD` for `conv_sum`), no FP64, no spills. `absent`: the architecture
lacks the hardware, the entry point is an empty stub and is never timed.

What this proves and what it cannot: that each kernel *executes* the instructions its formula
counts, with no spills and no emulation. Only a GPU run measures rates, clocks and cache hit rates.
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::Finding;
    use crate::ptxas::Resources;
    use roofline_kernels::audit_refusal;
    use roofline_kernels::audit_table::EMBEDDED;

    fn finding(kernel: Kernel, verdict: Verdict, reason: &str) -> Finding {
        Finding {
            kernel,
            arch: "sm_90".into(),
            verdict,
            census: "8 HMMA.16816.F32 | x".into(),
            resources: Resources {
                registers: 40,
                ..Resources::default()
            },
            reason: reason.into(),
        }
    }

    #[test]
    fn round_trips_and_refuses_failed_and_absent_kernels() {
        let mut t = Table::default();
        t.toolkits.push(("tk".into(), "NVRTC x".into()));
        t.unsupported
            .push(("tk".into(), "sm_70".into(), "too old".into()));
        t.rows
            .push(finding(Kernel::MmaF16, Verdict::Pass, "").row("tk"));
        t.rows
            .push(finding(Kernel::MmaFp8, Verdict::Fail, "emulated:\tFP16").row("tk"));
        t.rows
            .push(finding(Kernel::FmaBf16x2, Verdict::Absent, "needs sm_80").row("tk"));
        let text = t.to_tsv();
        let back = Table::parse(&text).expect("parses");
        assert_eq!(back.rows.len(), 3);
        assert_eq!(back.rows[1].reason, "emulated: FP16");
        assert_eq!(back.toolkits, t.toolkits);
        assert_eq!(back.unsupported, t.unsupported);
        assert_eq!(back.refusal(Kernel::MmaF16.entry(), "sm_90"), None);
        let r = back
            .refusal(Kernel::MmaFp8.entry(), "sm_90")
            .expect("refused");
        assert!(r.contains("emulated") && r.contains("tk"), "{r}");
        assert!(back.refusal(Kernel::FmaBf16x2.entry(), "sm_90").is_some());
        assert_eq!(back.refusal(Kernel::MmaFp8.entry(), "sm_120"), None);
        let md = markdown(&back);
        assert!(md.contains("| `mma_fp8` | **FAIL** |"), "{md}");
        assert!(md.contains("sm_70: not audited with it (too old)"));
        assert!(md.contains("8 HMMA.16816.F32 \\| x"));
    }

    /// The embedded SASS audit parses, covers every kernel on every architecture the collector
    /// supports (sm_70 to sm_90) under some toolkit, and refuses what it failed.
    #[test]
    fn the_embedded_sass_audit_covers_every_kernel_and_refuses_its_failures() {
        let t = Table::parse(EMBEDDED).expect("the embedded table parses");
        for arch in ["sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"] {
            for k in Kernel::all() {
                let rows: Vec<_> = t
                    .rows
                    .iter()
                    .filter(|r| r.arch == arch && r.kernel == k.entry())
                    .collect();
                assert!(!rows.is_empty(), "{} on {arch} was not audited", k.entry());
                let failed = rows.iter().any(|r| r.verdict != Verdict::Pass);
                assert_eq!(
                    audit_refusal(k, arch).is_some(),
                    failed,
                    "{} {arch}",
                    k.entry()
                );
            }
        }
        // Kernels for newer hardware are stubs on older GPUs, refused there.
        assert!(audit_refusal(Kernel::MmaBf16, "sm_70").is_some());
        assert!(audit_refusal(Kernel::FmaF32, "sm_90").is_none());
        // An architecture no toolkit audited is not refused.
        assert!(audit_refusal(Kernel::FmaF32, "sm_120").is_none());
        // The report is the rendering of this very table (no hand edit of either).
        assert_eq!(
            include_str!("../../../docs/reference/kernels-sass.md"),
            markdown(&t),
            "docs/reference/kernels-sass.md is not the rendering of kernels/sass-audit.tsv: run `cargo xtask sass`"
        );
    }
}
