//! The audit's results as a table: one tab-separated row per toolkit × architecture × kernel
//! (`kernels/sass-audit.tsv`, embedded in the binary and read by
//! [`crate::gpu::kernels::audit_refusal`]), and its Markdown rendering (`docs/kernels-sass.md`).
//!
//! Format: lines starting with `#` are comments; `@toolkit NAME DESCRIPTION` names a toolkit and
//! its tool versions; `@unsupported TOOLKIT ARCH WHY` records an architecture the toolkit cannot
//! compile for; every other line is a [`Row`] with the nine fields of [`HEADER`], tab-separated.

use std::fmt::Write as _;

use super::audit::{Finding, Verdict};
use crate::gpu::kernels::Kernel;

/// The column names of a row.
pub const HEADER: [&str; 9] = [
    "toolkit",
    "arch",
    "kernel",
    "verdict",
    "registers",
    "spill_stores",
    "spill_loads",
    "census",
    "reason",
];

/// One kernel audited with one toolkit for one architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The toolkit's name (`cuda-12.9`).
    pub toolkit: String,
    /// `sm_XY`.
    pub arch: String,
    /// The entry point.
    pub kernel: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Registers per thread.
    pub registers: u32,
    /// Spill stores, bytes per thread.
    pub spill_stores: u32,
    /// Spill loads, bytes per thread.
    pub spill_loads: u32,
    /// Key instructions per iteration of the timed loop.
    pub census: String,
    /// Why it failed or is absent.
    pub reason: String,
}

impl Row {
    /// The row of a finding made with `toolkit`.
    pub fn new(toolkit: &str, f: &Finding) -> Row {
        Row {
            toolkit: toolkit.into(),
            arch: f.arch.clone(),
            kernel: f.kernel.entry().into(),
            verdict: f.verdict,
            registers: f.resources.registers,
            spill_stores: f.resources.spill_stores,
            spill_loads: f.resources.spill_loads,
            census: f.census.clone(),
            reason: f.reason.clone(),
        }
    }
}

/// Every row and toolkit line of a table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    /// `(name, description)` of each toolkit, in order.
    pub toolkits: Vec<(String, String)>,
    /// `(toolkit, arch, why)` for each architecture a toolkit cannot compile for.
    pub unsupported: Vec<(String, String, String)>,
    /// The rows.
    pub rows: Vec<Row>,
}

/// A table line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SASS audit table, line {line}: {message}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Tabs and newlines inside a field would break the format: replaced by spaces.
fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

impl Table {
    /// Parses a table.
    ///
    /// # Errors
    /// [`ParseError`] naming the line: a wrong number of fields, an unknown verdict or a count
    /// that is not a number.
    pub fn parse(text: &str) -> Result<Table, ParseError> {
        let mut t = Table::default();
        for (n, line) in text.lines().enumerate() {
            let err = |message: String| ParseError {
                line: n + 1,
                message,
            };
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            match f[0] {
                "@toolkit" if f.len() == 3 => t.toolkits.push((f[1].into(), f[2].into())),
                "@unsupported" if f.len() == 4 => {
                    t.unsupported.push((f[1].into(), f[2].into(), f[3].into()));
                }
                _ if f.len() == HEADER.len() => {
                    let num = |i: usize| {
                        f[i].parse::<u32>()
                            .map_err(|_| err(format!("{} {:?} is not a number", HEADER[i], f[i])))
                    };
                    t.rows.push(Row {
                        toolkit: f[0].into(),
                        arch: f[1].into(),
                        kernel: f[2].into(),
                        verdict: Verdict::parse(f[3])
                            .ok_or_else(|| err(format!("unknown verdict {:?}", f[3])))?,
                        registers: num(4)?,
                        spill_stores: num(5)?,
                        spill_loads: num(6)?,
                        census: f[7].into(),
                        reason: f[8].into(),
                    });
                }
                _ => {
                    return Err(err(format!(
                        "{} tab-separated fields; a row has {}",
                        f.len(),
                        HEADER.len()
                    )));
                }
            }
        }
        Ok(t)
    }

    /// Appends another table's toolkits and rows.
    pub fn extend(&mut self, other: Table) {
        self.toolkits.extend(other.toolkits);
        self.unsupported.extend(other.unsupported);
        self.rows.extend(other.rows);
    }

    /// The table as text (what [`Table::parse`] reads).
    pub fn to_tsv(&self) -> String {
        let mut s = String::from(
            "# SASS audit of kernels/*.cu, written by `cargo xtask sass` (do not edit by hand);\n\
             # read by roofline_collector::gpu::kernels::audit_refusal. Format: collector/src/sass/table.rs.\n",
        );
        let _ = writeln!(s, "# {}", HEADER.join("\t"));
        for (name, desc) in &self.toolkits {
            let _ = writeln!(s, "@toolkit\t{}\t{}", clean(name), clean(desc));
        }
        for (tk, arch, why) in &self.unsupported {
            let _ = writeln!(
                s,
                "@unsupported\t{}\t{}\t{}",
                clean(tk),
                clean(arch),
                clean(why)
            );
        }
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                clean(&r.toolkit),
                clean(&r.arch),
                clean(&r.kernel),
                r.verdict.as_str(),
                r.registers,
                r.spill_stores,
                r.spill_loads,
                clean(&r.census),
                clean(&r.reason)
            );
        }
        s
    }

    /// The architectures of a toolkit, in row order.
    fn archs(&self, toolkit: &str) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for r in self.rows.iter().filter(|r| r.toolkit == toolkit) {
            if !v.contains(&r.arch) {
                v.push(r.arch.clone());
            }
        }
        v
    }

    /// Why the collector must not time `kernel` on `arch`: the first row for them, over every
    /// toolkit, that failed or is absent. `None` when every toolkit passed it, or none audited
    /// that architecture.
    pub fn refusal(&self, kernel: Kernel, arch: &str) -> Option<String> {
        let rows = || {
            self.rows
                .iter()
                .filter(|r| r.arch == arch && r.kernel == kernel.entry())
        };
        if let Some(r) = rows().find(|r| r.verdict == Verdict::Fail) {
            return Some(format!(
                "the SASS audit failed {} on {arch} ({}): {}",
                r.kernel, r.toolkit, r.reason
            ));
        }
        rows()
            .find(|r| r.verdict == Verdict::Absent)
            .map(|r| format!("{} is not built for {arch}: {}", r.kernel, r.reason))
    }

    /// The Markdown report: per toolkit, a verdict matrix (kernel × architecture), the failures
    /// with their reasons, and the details (key instructions per iteration, registers, spills).
    pub fn to_markdown(&self) -> String {
        let mut s = String::from(MARKDOWN_HEAD);
        s.push_str("\n## Toolkits\n\n");
        for (name, desc) in &self.toolkits {
            let _ = writeln!(s, "- `{name}`: {desc}.");
            for (_, arch, why) in self.unsupported.iter().filter(|u| &u.0 == name) {
                let _ = writeln!(s, "  - {arch}: not audited with it ({why}).");
            }
        }
        for (name, _) in &self.toolkits {
            let archs = self.archs(name);
            let _ = writeln!(s, "\n## Verdicts, `{name}`\n");
            let _ = writeln!(s, "| kernel | {} |", archs.join(" | "));
            let _ = writeln!(s, "|---|{}", "---|".repeat(archs.len()));
            for k in Kernel::all() {
                let cells: Vec<String> = archs
                    .iter()
                    .map(|a| {
                        self.rows
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
            let fails: Vec<&Row> = self
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
        for (name, _) in &self.toolkits {
            let _ = writeln!(s, "\n## Details, `{name}`\n");
            s.push_str("| kernel | arch | key instructions per iteration of the timed loop | registers | spills (bytes stored / loaded) | verdict |\n");
            s.push_str("|---|---|---|---|---|---|\n");
            for k in Kernel::all() {
                for r in self
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
    use crate::gpu::sass::ptxas::Resources;

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
            .push(Row::new("tk", &finding(Kernel::MmaF16, Verdict::Pass, "")));
        t.rows.push(Row::new(
            "tk",
            &finding(Kernel::MmaFp8, Verdict::Fail, "emulated:\tFP16"),
        ));
        t.rows.push(Row::new(
            "tk",
            &finding(Kernel::FmaBf16x2, Verdict::Absent, "needs sm_80"),
        ));
        let text = t.to_tsv();
        let back = Table::parse(&text).expect("parses");
        assert_eq!(back.rows.len(), 3);
        assert_eq!(back.rows[1].reason, "emulated: FP16");
        assert_eq!(back.toolkits, t.toolkits);
        assert_eq!(back.unsupported, t.unsupported);
        assert_eq!(back.refusal(Kernel::MmaF16, "sm_90"), None);
        let r = back.refusal(Kernel::MmaFp8, "sm_90").expect("refused");
        assert!(r.contains("emulated") && r.contains("tk"), "{r}");
        assert!(back.refusal(Kernel::FmaBf16x2, "sm_90").is_some());
        assert_eq!(back.refusal(Kernel::MmaFp8, "sm_120"), None);
        let md = back.to_markdown();
        assert!(md.contains("| `mma_fp8` | **FAIL** |"), "{md}");
        assert!(md.contains("sm_70: not audited with it (too old)"));
        assert!(md.contains("8 HMMA.16816.F32 \\| x"));
    }

    #[test]
    fn bad_lines_are_errors_naming_the_line() {
        let e = Table::parse("# c\na\tb\n").expect_err("two fields");
        assert_eq!(e.line, 2);
        let e = Table::parse("t\ta\tk\tmaybe\t1\t0\t0\tc\tr\n").expect_err("verdict");
        assert!(e.message.contains("maybe"));
        let e = Table::parse("t\ta\tk\tpass\tx\t0\t0\tc\tr\n").expect_err("number");
        assert!(e.message.contains("registers"));
    }
}
