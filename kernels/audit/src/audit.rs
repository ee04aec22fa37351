//! The audit proper: what a kernel's work formula ([`Work`]) says its timed loop executes,
//! against what the disassembly shows, with a verdict.
//!
//! The timed loop is the innermost loop (a backward branch's range, [`Loop`]) carrying the most
//! instructions of the kernel's *family* (FMAs for [`Work::Fma`], Tensor Core MMAs for
//! [`Work::Mma`], global and shared accesses for [`Work::Memory`]). Its census must equal the
//! formula exactly: an unrolled or collapsed loop, an instruction the compiler dropped, a
//! datapath lowered to another (FP8 through FP16 `HMMA`), a load with the wrong cache operator, a
//! narrower vector or a spill turns the verdict to [`Verdict::Fail`] with the reason.
//!
//! The SASS names checked are NVIDIA's (CUDA Binary Utilities, "Instruction Set Reference"):
//! `FFMA`/`DFMA`/`HFMA2` (FP32/FP64/packed-half FMA), `HMMA`/`IMMA`/`DMMA`/`QMMA` (half, integer,
//! double and FP8 matrix multiply-accumulate, shape `16816` = m16n8k16), `LDG`/`STG`/`LDS` (global
//! and shared accesses; `.128` = 16 bytes; `.EF` = evict-first, from `.cs`; `.STRONG.GPU` = a
//! GPU-scope access served by L2, from `.cg`; `.STRONG.SM`/`.STRONG.CTA` = served by the SM's L1,
//! from `.ca`), `F2FP`/`F2F`/`I2F` (conversions).

use std::collections::BTreeMap;

use roofline_model::bundle::Datapath;

use roofline_kernels::audit_table::{Row, Verdict};
use roofline_kernels::{Access, DlOp, Kernel, MmaShape, Work};

use crate::disasm::{Function, Instruction, Loop};
use crate::ptxas::Resources;

/// One kernel audited for one architecture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The kernel.
    pub kernel: Kernel,
    /// `sm_XY`.
    pub arch: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The key instructions of the timed loop, per iteration (`128 FFMA`).
    pub census: String,
    /// Registers and spills from `ptxas -v`.
    pub resources: Resources,
    /// Why it failed or is absent; empty on a pass.
    pub reason: String,
}

impl Finding {
    /// The finding as a row of the audit's table, made with `toolkit`.
    pub fn row(&self, toolkit: &str) -> Row {
        Row {
            toolkit: toolkit.into(),
            arch: self.arch.clone(),
            kernel: self.kernel.entry().into(),
            verdict: self.verdict,
            registers: self.resources.registers,
            spill_stores: self.resources.spill_stores,
            spill_loads: self.resources.spill_loads,
            census: self.census.clone(),
            reason: self.reason.clone(),
        }
    }
}

/// `sm_90` → `(9, 0)`, `sm_100` → `(10, 0)`; `None` if not of that form.
pub fn compute_capability(arch: &str) -> Option<(i32, i32)> {
    let digits = arch.strip_prefix("sm_")?;
    let digits = digits.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Whether an instruction belongs to one of the classes the census reports.
fn is_key(i: &Instruction) -> bool {
    !is_move_idiom(i)
        && matches!(
            i.base(),
            "FFMA"
                | "DFMA"
                | "HFMA2"
                | "FADD"
                | "FMUL"
                | "DADD"
                | "DMUL"
                | "HADD2"
                | "HMUL2"
                | "HMMA"
                | "IMMA"
                | "DMMA"
                | "QMMA"
                | "OMMA"
                | "BMMA"
                | "LDG"
                | "STG"
                | "LDS"
                | "STS"
                | "LD"
                | "ST"
                | "LDL"
                | "STL"
                | "MUFU"
                | "CALL"
        )
        || is_conversion(i)
}

/// `HFMA2.MMA Rd, -RZ, RZ, …`: the compiler's idiom for moving a constant into a register, not
/// arithmetic.
fn is_move_idiom(i: &Instruction) -> bool {
    i.base() == "HFMA2" && i.operands.contains("-RZ, RZ")
}

/// Conversions between number formats (`F2FP`, `F2F`, `I2F`, `F2I`, `I2FP`, `F2IP`).
fn is_conversion(i: &Instruction) -> bool {
    matches!(i.base(), "F2FP" | "F2F" | "I2F" | "F2I" | "I2FP" | "F2IP")
}

fn is_mma(i: &Instruction) -> bool {
    matches!(
        i.base(),
        "HMMA" | "IMMA" | "DMMA" | "QMMA" | "OMMA" | "BMMA"
    )
}

fn is_fma(i: &Instruction) -> bool {
    matches!(i.base(), "FFMA" | "DFMA" | "HFMA2") && !is_move_idiom(i)
}

fn is_global_or_shared(i: &Instruction) -> bool {
    matches!(i.base(), "LDG" | "STG" | "LDS" | "STS" | "LD" | "ST")
}

fn is_local(i: &Instruction) -> bool {
    matches!(i.base(), "LDL" | "STL")
}

fn is_bf16(i: &Instruction) -> bool {
    i.modifiers().any(|m| m.starts_with("BF16"))
}

/// The key instructions of a set, counted: `8 HMMA.16816.F32, 2 F2FP.F16.E4M3.UNPACK_B`.
pub fn census<'a>(instructions: impl Iterator<Item = &'a Instruction>) -> String {
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for i in instructions.filter(|i| is_key(i)) {
        *counts.entry(i.opcode.as_str()).or_default() += 1;
    }
    let mut v: Vec<(&str, u32)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if v.is_empty() {
        return "none".into();
    }
    v.iter()
        .map(|(op, n)| format!("{n} {op}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The innermost loop carrying the most instructions that satisfy `family`, with that count.
pub fn timed_loop(f: &Function, family: impl Fn(&Instruction) -> bool) -> Option<(Loop, usize)> {
    let loops = f.loops();
    let counted: Vec<(Loop, usize)> = loops
        .iter()
        .map(|&l| (l, f.body(l).filter(|i| family(i)).count()))
        .filter(|&(_, n)| n > 0)
        .collect();
    counted
        .iter()
        .filter(|(l, _)| !counted.iter().any(|(m, _)| l.contains(*m)))
        .fold(None, |best: Option<(Loop, usize)>, &(l, n)| match best {
            Some((_, b)) if b >= n => best,
            _ => Some((l, n)),
        })
}

/// Instructions satisfying `family` outside every loop.
fn outside_loops(f: &Function, family: impl Fn(&Instruction) -> bool) -> usize {
    let loops = f.loops();
    f.instructions
        .iter()
        .filter(|i| {
            family(i)
                && !loops
                    .iter()
                    .any(|l| l.start <= i.offset && i.offset <= l.end)
        })
        .count()
}

/// The reason when no loop carries the family: collapsed (work outside any loop) or eliminated.
fn no_loop_reason(f: &Function, family: impl Fn(&Instruction) -> bool, what: &str) -> String {
    match outside_loops(f, family) {
        0 => format!("dead code: no {what} left in the kernel (the work was eliminated)"),
        n => format!("collapsed loop: {n} {what} outside any loop, no timed loop carries the work"),
    }
}

/// The SASS opcodes one `mma.sync` of `datapath` and shape `m`×`n`×`k` may become: one
/// instruction, spelt as the disassemblers spell it (`DMMA.884` up to sm_89, `DMMA.8x8x4` from
/// sm_90).
pub fn mma_opcodes(datapath: Datapath, m: u32, n: u32, k: u32) -> Option<Vec<String>> {
    let shape = format!("{m}{n}{k}");
    Some(match datapath {
        Datapath::TensorFp16 => vec![format!("HMMA.{shape}.F32")],
        Datapath::TensorBf16 => vec![format!("HMMA.{shape}.F32.BF16")],
        Datapath::TensorTf32 => vec![format!("HMMA.{shape}.F32.TF32")],
        Datapath::TensorFp8 => vec![format!("QMMA.{shape}.F32.E4M3.E4M3")],
        Datapath::TensorInt8 => vec![format!("IMMA.{shape}.S8.S8")],
        Datapath::TensorFp64 => vec![format!("DMMA.{shape}"), format!("DMMA.{m}x{n}x{k}")],
        _ => return None,
    })
}

/// Whether a global load's cache operator reaches the level `access` claims.
fn load_reaches(i: &Instruction, access: Access) -> bool {
    let l2_scope = i.has_pair("STRONG", "GPU") || i.has_pair("STRONG", "SYS");
    match access {
        Access::GlobalStreaming => i.base() == "LDG" && i.has("EF"),
        Access::GlobalL2Only => i.base() == "LDG" && l2_scope && !i.has("EF"),
        Access::GlobalL1 => i.base() == "LDG" && !l2_scope && !i.has("EF") && !i.has("CG"),
        Access::GlobalNonCoherent => i.base() == "LDG" && i.has("CONSTANT"),
        Access::GlobalDefault => i.base() == "LDG",
        Access::Shared => i.base() == "LDS",
    }
}

fn store_reaches(i: &Instruction, access: Access) -> bool {
    match access {
        Access::GlobalStreaming => i.base() == "STG" && i.has("EF"),
        Access::GlobalDefault => i.base() == "STG",
        Access::Shared => i.base() == "STS",
        Access::GlobalL2Only | Access::GlobalL1 | Access::GlobalNonCoherent => false,
    }
}

/// What one access kind must look like in SASS, for the reasons.
fn access_name(access: Access) -> &'static str {
    match access {
        Access::GlobalStreaming => "16-byte evict-first global access (LDG/STG .EF.128, from .cs)",
        Access::GlobalL2Only => "16-byte L2-served global load (LDG .128.STRONG.GPU, from .cg)",
        Access::GlobalL1 => "16-byte L1-cached global load (LDG .128 not GPU-scoped, from .ca)",
        Access::GlobalNonCoherent => {
            "16-byte non-coherent global load (LDG .128.CONSTANT, from .nc)"
        }
        Access::GlobalDefault => "16-byte global access (LDG/STG .128)",
        Access::Shared => "16-byte shared load (LDS .128)",
    }
}

/// Audits one kernel for `arch` against its formula ([`Kernel::work`]), given its disassembly and
/// `ptxas -v` resources (`None` when the cubin has no such function).
pub fn audit(
    kernel: Kernel,
    arch: &str,
    function: Option<&Function>,
    resources: Option<Resources>,
) -> Finding {
    audit_with(kernel, kernel.work(), arch, function, resources)
}

/// [`audit`] against a given formula `work` (the tests give wrong ones).
pub fn audit_with(
    kernel: Kernel,
    work: Work,
    arch: &str,
    function: Option<&Function>,
    resources: Option<Resources>,
) -> Finding {
    let mut finding = Finding {
        kernel,
        arch: arch.to_string(),
        verdict: Verdict::Pass,
        census: String::new(),
        resources: resources.unwrap_or_default(),
        reason: String::new(),
    };
    let Some(f) = function else {
        finding.verdict = Verdict::Fail;
        finding.census = "none".into();
        finding.reason = format!("{} is not in the cubin", kernel.entry());
        return finding;
    };
    let needs = kernel.min_compute_capability();
    if compute_capability(arch).is_some_and(|cc| cc < needs) {
        finding.census = census(f.instructions.iter());
        let work = f
            .instructions
            .iter()
            .filter(|i| is_fma(i) || is_mma(i) || is_global_or_shared(i))
            .count();
        if work == 0 {
            finding.verdict = Verdict::Absent;
            finding.reason = format!("needs sm_{}{}: an empty stub here", needs.0, needs.1);
        } else {
            finding.verdict = Verdict::Fail;
            finding.reason = format!(
                "needs sm_{}{} but the stub for {arch} does work ({})",
                needs.0, needs.1, finding.census
            );
        }
        return finding;
    }
    let mut reasons = Vec::new();
    if let Some(r) = resources {
        if r.spills() {
            reasons.push(format!(
                "spills: {} bytes stored, {} bytes loaded per thread",
                r.spill_stores, r.spill_loads
            ));
        }
    } else {
        reasons.push("ptxas -v reported nothing for it".into());
    }
    let (census_text, mut work_reasons) = check_work(kernel, work, f);
    finding.census = census_text;
    reasons.append(&mut work_reasons);
    if !reasons.is_empty() {
        finding.verdict = Verdict::Fail;
        finding.reason = reasons.join("; ");
    }
    finding
}

/// The census of the timed loop and every way it departs from the formula: one check per kind
/// of work.
fn check_work(kernel: Kernel, work: Work, f: &Function) -> (String, Vec<String>) {
    match work {
        Work::Fma {
            datapath,
            lanes: _,
            per_iteration,
        } => check_fma(f, datapath, per_iteration),
        Work::Mma {
            datapath,
            shape,
            per_iteration,
        } => check_mma(f, datapath, shape, per_iteration),
        Work::Memory {
            level: _,
            access,
            loads,
            stores,
        } => check_memory(f, access, loads, stores),
        Work::Sweep { datapath, lanes } => check_sweep(f, datapath, lanes),
        Work::Nothing => check_nothing(f),
        Work::Analytical => check_analytical(kernel, f),
        Work::Fill { bytes } => check_fill(f, bytes),
    }
}

/// The width in bytes of a global store, from its modifiers (`STG.E.U16` 2, `STG.E` 4,
/// `STG.E.64` 8, `STG.E.128` 16; `U8`/`S8` 1).
fn store_bytes(i: &Instruction) -> u32 {
    if i.has("128") {
        16
    } else if i.has("64") {
        8
    } else if i.has("U16") || i.has("S16") {
        2
    } else if i.has("U8") || i.has("S8") {
        1
    } else {
        4
    }
}

/// [`Work::Fill`] (the untimed operand fills): a grid-stride loop storing one value of `bytes`
/// per pass, no other global access, no local memory, no call (a fill that silently stored
/// nothing, or half its values, would leave zeros where the run claims random data).
fn check_fill(f: &Function, bytes: u32) -> (String, Vec<String>) {
    let mut reasons = Vec::new();
    let store = |i: &Instruction| i.base() == "STG";
    let Some((l, n)) = timed_loop(f, store) else {
        return ("none".into(), vec![no_loop_reason(f, store, "stores")]);
    };
    if n != 1 {
        reasons.push(mismatch(n, 1, "stores"));
    }
    let wrong: Vec<&Instruction> = f
        .body(l)
        .filter(|i| (store(i) && store_bytes(i) != bytes) || (is_global_or_shared(i) && !store(i)))
        .collect();
    if !wrong.is_empty() {
        reasons.push(format!(
            "{} in the fill loop, not one {bytes}-byte store",
            census(wrong.into_iter())
        ));
    }
    local_in(f, l, &mut reasons);
    (format!("fill loop: {}", census(f.body(l))), reasons)
}

/// Local memory in the timed loop `l` (spills or an array), and calls: a microbenchmark's loop
/// is straight-line work, and a call (a slow path such as 64-bit division) is overhead the
/// formula does not count.
fn local_in(f: &Function, l: Loop, reasons: &mut Vec<String>) {
    local_memory_in(f, l, reasons);
    let calls = f
        .body(l)
        .filter(|i| i.base() == "CALL" && !is_loop_exit(f, l, i))
        .count();
    if calls > 0 {
        reasons.push(format!("{calls} CALL in the timed loop"));
    }
}

/// Whether `i` is how ptxas leaves a long loop on sm_80 to sm_89: a predicated
/// `CALL.REL.NOINC` to the instruction right after the loop's backward branch, which follows it
/// (`@P1 CALL.REL.NOINC exit; BRA top`), seen in the FMA loops at 512 FMAs a pass. A jump out of
/// the loop, not a call: it costs the loop one more instruction a pass than `@!P1 BRA top`.
pub fn is_loop_exit(f: &Function, l: Loop, i: &Instruction) -> bool {
    let after = f.instructions.iter().find(|j| j.offset > l.end);
    i.base() == "CALL"
        && i.has("NOINC")
        && i.predicate.is_some()
        && i.offset + 16 == l.end
        && i.target
            .as_deref()
            .and_then(|t| f.labels.get(t))
            .zip(after)
            .is_some_and(|(&at, next)| next.offset == at)
}

/// Local memory in the loop `l`. The DL kernels are timed whole, so their calls are only
/// reported in the census: they check this alone.
fn local_memory_in(f: &Function, l: Loop, reasons: &mut Vec<String>) {
    let n = f.body(l).filter(|i| is_local(i)).count();
    if n > 0 {
        reasons.push(format!(
            "local memory: {n} LDL/STL in the timed loop (registers spilled or an array in local memory)"
        ));
    }
}

/// [`Work::Fma`]: the FMAs of the datapath per iteration, nothing foreign (other FMAs,
/// conversions).
fn check_fma(f: &Function, datapath: Datapath, per_iteration: u32) -> (String, Vec<String>) {
    let mut reasons = Vec::new();
    let (wanted, what): (fn(&Instruction) -> bool, &str) = match datapath {
        Datapath::Fp64 => (|i| i.base() == "DFMA", "DFMA"),
        Datapath::Fp32 => (|i| i.base() == "FFMA", "FFMA"),
        Datapath::Fp16 => (
            |i| is_fma(i) && i.base() == "HFMA2" && !is_bf16(i),
            "HFMA2 (FP16)",
        ),
        Datapath::Bf16 => (
            |i| is_fma(i) && i.base() == "HFMA2" && is_bf16(i),
            "HFMA2.BF16",
        ),
        _ => {
            return (
                "none".into(),
                vec![format!("no FMA opcode known for {datapath:?}")],
            );
        }
    };
    let family = |i: &Instruction| is_fma(i) || is_conversion(i);
    let Some((l, _)) = timed_loop(f, family) else {
        return ("none".into(), vec![no_loop_reason(f, wanted, what)]);
    };
    let body: Vec<&Instruction> = f.body(l).collect();
    let n = body.iter().filter(|i| wanted(i)).count();
    if n != per_iteration as usize {
        reasons.push(mismatch(n, per_iteration, what));
    }
    let foreign: Vec<&Instruction> = body
        .iter()
        .copied()
        .filter(|i| (is_fma(i) && !wanted(i)) || is_conversion(i))
        .collect();
    if !foreign.is_empty() {
        reasons.push(format!(
            "emulated: {} in the timed loop, not {what}",
            census(foreign.into_iter())
        ));
    }
    local_in(f, l, &mut reasons);
    (census(f.body(l)), reasons)
}

/// [`Work::Mma`]: the Tensor Core instructions of the datapath and shape per iteration, no
/// other MMA (emulation) and no conversion in the loop.
fn check_mma(
    f: &Function,
    datapath: Datapath,
    shape: MmaShape,
    per_iteration: u32,
) -> (String, Vec<String>) {
    let mut reasons = Vec::new();
    let Some(opcodes) = mma_opcodes(datapath, shape.m, shape.n, shape.k) else {
        return (
            "none".into(),
            vec![format!("no MMA opcode known for {datapath:?}")],
        );
    };
    let Some((l, _)) = timed_loop(f, is_mma) else {
        return (
            "none".into(),
            vec![no_loop_reason(f, is_mma, "matrix multiply-accumulates")],
        );
    };
    let body: Vec<&Instruction> = f.body(l).collect();
    let right = |i: &Instruction| opcodes.contains(&i.opcode);
    let opcode = opcodes.join(" or ");
    let n = body.iter().filter(|i| right(i)).count();
    let foreign: Vec<&Instruction> = body
        .iter()
        .copied()
        .filter(|i| is_mma(i) && !right(i))
        .collect();
    let conversions: Vec<&Instruction> =
        f.instructions.iter().filter(|i| is_conversion(i)).collect();
    if !foreign.is_empty() {
        let mut r = format!(
            "emulated: the timed loop runs {} where the formula counts {per_iteration} {opcode}",
            census(foreign.into_iter())
        );
        if !conversions.is_empty() {
            r.push_str(&format!(
                ", with {} in the kernel",
                census(conversions.iter().copied())
            ));
        }
        reasons.push(r);
    } else if n != per_iteration as usize {
        reasons.push(mismatch(n, per_iteration, &opcode));
    }
    let in_loop: Vec<&Instruction> = body.iter().copied().filter(|i| is_conversion(i)).collect();
    if !in_loop.is_empty() && reasons.is_empty() {
        reasons.push(format!(
            "conversions in the timed loop: {}",
            census(in_loop.into_iter())
        ));
    }
    local_in(f, l, &mut reasons);
    (census(f.body(l)), reasons)
}

/// [`Work::Memory`]: 16-byte loads and stores per iteration whose cache operator reaches the
/// level measured.
fn check_memory(f: &Function, access: Access, loads: u32, stores: u32) -> (String, Vec<String>) {
    let mut reasons = Vec::new();
    let Some((l, _)) = timed_loop(f, is_global_or_shared) else {
        return (
            "none".into(),
            vec![no_loop_reason(f, is_global_or_shared, "loads or stores")],
        );
    };
    let (mut ld, mut st, mut wrong) = (0, 0, Vec::new());
    for i in f.body(l).filter(|i| is_global_or_shared(i)) {
        let wide = i.has("128");
        if wide && load_reaches(i, access) {
            ld += 1;
        } else if wide && store_reaches(i, access) {
            st += 1;
        } else {
            wrong.push(i);
        }
    }
    if ld != loads as usize {
        reasons.push(mismatch(ld, loads, "loads"));
    }
    if st != stores as usize {
        reasons.push(mismatch(st, stores, "stores"));
    }
    if !wrong.is_empty() {
        reasons.push(format!(
            "{} in the timed loop, not a {}",
            census(wrong.into_iter()),
            access_name(access)
        ));
    }
    local_in(f, l, &mut reasons);
    (census(f.body(l)), reasons)
}

/// [`Work::Sweep`]: an FMA loop inside element loops of one 16-byte load and one 16-byte store,
/// a whole number of vectors' lanes per pass, no conversion.
fn check_sweep(f: &Function, datapath: Datapath, lanes: u32) -> (String, Vec<String>) {
    let mut reasons = Vec::new();
    let (fma, what): (fn(&Instruction) -> bool, &str) = match datapath {
        Datapath::Fp64 => (|i| i.base() == "DFMA", "DFMA"),
        _ => (|i| i.base() == "FFMA", "FFMA"),
    };
    let global = |i: &Instruction| matches!(i.base(), "LDG" | "STG");
    let Some((fl, n)) = timed_loop(f, fma) else {
        return ("none".into(), vec![no_loop_reason(f, fma, what)]);
    };
    if !n.is_multiple_of(lanes as usize) {
        reasons.push(format!(
            "{n} {what} per pass of the FMA loop, not a multiple of the {lanes} lanes of a vector"
        ));
    }
    // Every innermost loop that loads must be an element loop: one 16-byte load and one
    // 16-byte store, nothing narrower.
    let loops = f.loops();
    let element_loops: Vec<Loop> = loops
        .iter()
        .copied()
        .filter(|&l| {
            f.body(l).any(global)
                && !loops
                    .iter()
                    .any(|&m| l.contains(m) && f.body(m).any(global))
        })
        .collect();
    if element_loops.is_empty() {
        reasons.push(no_loop_reason(f, global, "global loads or stores"));
    }
    for &el in &element_loops {
        let acc: Vec<&Instruction> = f.body(el).filter(|i| global(i)).collect();
        let wide_ld = acc.iter().filter(|i| i.base() == "LDG" && i.has("128"));
        let wide_st = acc.iter().filter(|i| i.base() == "STG" && i.has("128"));
        if wide_ld.count() != 1 || wide_st.count() != 1 || acc.len() != 2 {
            reasons.push(format!(
                "the element loop makes {}, not one 16-byte load and one 16-byte store",
                census(acc.into_iter())
            ));
        }
    }
    if !element_loops.iter().any(|el| el.contains(fl)) {
        reasons.push(format!("the {what} loop is not inside an element loop"));
    }
    let conv: Vec<&Instruction> = f.body(fl).filter(|i| is_conversion(i)).collect();
    if !conv.is_empty() {
        reasons.push(format!(
            "emulated: {} in the FMA loop",
            census(conv.into_iter())
        ));
    }
    let per_element = element_loops.first().map_or_else(
        || "none".into(),
        |&el| census(f.body(el).filter(|i| global(i))),
    );
    (
        format!(
            "per element: {per_element}; FMA loop: {}",
            census(f.body(fl))
        ),
        reasons,
    )
}

/// [`Work::Nothing`]: the empty kernel does no work and has no loop.
fn check_nothing(f: &Function) -> (String, Vec<String>) {
    let mut reasons = Vec::new();
    let real_loops = f
        .loops()
        .into_iter()
        .filter(|&l| f.body(l).count() > 1)
        .count();
    let work = f
        .instructions
        .iter()
        .filter(|i| is_key(i) && !is_local(i))
        .count();
    if real_loops > 0 || work > 0 {
        reasons.push(format!(
            "the empty kernel does work: {} loops, {}",
            real_loops,
            census(f.instructions.iter())
        ));
    }
    (census(f.instructions.iter()), reasons)
}

/// [`Work::Analytical`] (the DL kernels): FP32 arithmetic (`FFMA`, `FADD` for `conv_sum`) in the
/// inner loop, no FP64, no local memory.
fn check_analytical(kernel: Kernel, f: &Function) -> (String, Vec<String>) {
    let mut reasons = Vec::new();
    let op = match kernel {
        Kernel::Dl(DlOp::ConvSum, _) => "FADD",
        _ => "FFMA",
    };
    let fp64: Vec<&Instruction> = f
        .instructions
        .iter()
        .filter(|i| {
            matches!(i.base(), "DFMA" | "DADD" | "DMUL") || (is_conversion(i) && i.has("F64"))
        })
        .collect();
    if !fp64.is_empty() {
        reasons.push(format!(
            "FP64 arithmetic in an FP32 kernel: {}",
            census(fp64.into_iter())
        ));
    }
    let wanted = |i: &Instruction| i.base() == op;
    if matches!(kernel, Kernel::Dl(DlOp::LstmCell, _)) {
        // Element-wise: no loop, the arithmetic is straight-line.
        let n = f.instructions.iter().filter(|i| wanted(i)).count();
        if n == 0 {
            reasons.push(format!("no {op} in the kernel"));
        }
        return (
            format!("no loop; kernel: {}", census(f.instructions.iter())),
            reasons,
        );
    }
    let Some((l, _)) = timed_loop(f, wanted) else {
        return ("none".into(), vec![no_loop_reason(f, wanted, op)]);
    };
    local_memory_in(f, l, &mut reasons);
    (format!("inner loop: {}", census(f.body(l))), reasons)
}

/// "64 FFMA per iteration, the formula counts 128".
fn mismatch(found: usize, expected: u32, what: &str) -> String {
    let how = if found == 0 {
        " (dead code: the work was eliminated)".to_string()
    } else if found > expected as usize && expected > 0 && found.is_multiple_of(expected as usize) {
        format!(" (the loop is unrolled ×{})", found / expected as usize)
    } else {
        String::new()
    };
    format!("census: {found} {what} per iteration, the formula counts {expected}{how}")
}
