//! The audit can fail: recorded disassemblies (`fixtures/`, from `cargo xtask sass --keep`-style
//! runs of NVRTC 12.9 + ptxas 12.9 + nvdisasm 12.8) pass as recorded, and each deliberate defect
//! (an instruction removed, a wrong formula, a collapsed or unrolled loop, a spill, local memory,
//! FP8 emulated through FP16, a wrong cache operator or vector width) turns the verdict red.

use roofline_kernels::audit_table::Verdict;
use roofline_kernels::{FMA_CHAINS, FMA_UNROLL, Kernel, Work};
use roofline_model::bundle::Datapath;

use crate::audit::{Finding, audit, audit_with, timed_loop};
use crate::disasm::{Function, parse};
use crate::ptxas::{self, Resources};

const FMA_F32_SM90: &str = include_str!("fixtures/sm_90-fma_f32.sass");
const FMA_F16X2_SM70: &str = include_str!("fixtures/sm_70-fma_f16x2.sass");
const MMA_FP8_SM90: &str = include_str!("fixtures/sm_90-mma_fp8.sass");
const MMA_FP8_SM89: &str = include_str!("fixtures/sm_89-mma_fp8.sass");
const MMA_BF16_SM90: &str = include_str!("fixtures/sm_90-mma_bf16.sass");
const L2_READ_SM90: &str = include_str!("fixtures/sm_90-l2_read.sass");
const HBM_COPY_SM90: &str = include_str!("fixtures/sm_90-hbm_copy.sass");
const ERT_F32_SM90: &str = include_str!("fixtures/sm_90-ert_f32.sass");
const PTXAS_FMA_SM90: &str = include_str!("fixtures/sm_90-fma.ptxas.txt");

fn function(text: &str) -> Function {
    let mut f = parse(text).expect("the fixture parses");
    assert_eq!(f.len(), 1, "one function per fixture");
    f.remove(0)
}

fn clean() -> Resources {
    Resources {
        registers: 32,
        ..Resources::default()
    }
}

fn check(kernel: Kernel, arch: &str, text: &str) -> Finding {
    audit(kernel, arch, Some(&function(text)), Some(clean()))
}

fn red(f: &Finding, why: &str) {
    assert_eq!(f.verdict, Verdict::Fail, "{f:?}");
    assert!(f.reason.contains(why), "expected {why:?} in {:?}", f.reason);
}

fn green(f: &Finding) {
    assert_eq!(f.verdict, Verdict::Pass, "{f:?}");
    assert!(f.reason.is_empty());
}

/// The offsets of the instructions of the timed loop (the innermost loop with the most `opcode`)
/// whose opcode starts with `opcode`.
fn loop_offsets(text: &str, opcode: &str) -> Vec<u32> {
    let f = function(text);
    let (l, _) = timed_loop(&f, |i| i.opcode.starts_with(opcode)).expect("a timed loop");
    f.body(l)
        .filter(|i| i.opcode.starts_with(opcode))
        .map(|i| i.offset)
        .collect()
}

/// `text` with the instruction at `offset` rewritten by `edit` (`None` removes the line).
fn edit_at(text: &str, offset: u32, edit: impl Fn(&str) -> Option<String>) -> String {
    let tag = format!("/*{offset:04x}*/");
    let mut hit = false;
    let out: Vec<String> = text
        .lines()
        .filter_map(|l| {
            if l.contains(&tag) {
                hit = true;
                edit(l)
            } else {
                Some(l.to_string())
            }
        })
        .collect();
    assert!(hit, "no instruction at {tag}");
    out.join("\n")
}

#[test]
fn the_recorded_kernels_pass() {
    let f = check(Kernel::FmaF32, "sm_90", FMA_F32_SM90);
    green(&f);
    assert_eq!(f.census, format!("{} FFMA", FMA_CHAINS * FMA_UNROLL));
    green(&check(Kernel::FmaF16x2, "sm_70", FMA_F16X2_SM70));
    let f = check(Kernel::MmaFp8, "sm_89", MMA_FP8_SM89);
    green(&f);
    assert!(
        f.census.contains("8 QMMA.16832.F32.E4M3.E4M3"),
        "{}",
        f.census
    );
    green(&check(Kernel::MmaBf16, "sm_90", MMA_BF16_SM90));
    green(&check(Kernel::L2Read, "sm_90", L2_READ_SM90));
    green(&check(Kernel::HbmCopy, "sm_90", HBM_COPY_SM90));
    green(&check(Kernel::ErtF32, "sm_90", ERT_F32_SM90));
    let r = ptxas::parse(PTXAS_FMA_SM90).expect("parses")["fma_f32"];
    assert!(!r.spills());
    green(&audit(
        Kernel::FmaF32,
        "sm_90",
        Some(&function(FMA_F32_SM90)),
        Some(r),
    ));
}

#[test]
fn one_ffma_removed_fails() {
    let at = loop_offsets(FMA_F32_SM90, "FFMA");
    let text = edit_at(FMA_F32_SM90, at[5], |_| None);
    red(
        &check(Kernel::FmaF32, "sm_90", &text),
        &format!("census: {} FFMA", FMA_CHAINS * FMA_UNROLL - 1),
    );
}

#[test]
fn one_packed_fma_removed_fails() {
    let at = loop_offsets(FMA_F16X2_SM70, "HFMA2");
    let text = edit_at(FMA_F16X2_SM70, at[0], |_| None);
    red(&check(Kernel::FmaF16x2, "sm_70", &text), "census");
}

#[test]
fn a_wrong_formula_fails() {
    let f = function(FMA_F32_SM90);
    // One more FMA per iteration than the kernel does.
    let wrong = Work::Fma {
        datapath: Datapath::Fp32,
        lanes: 1,
        per_iteration: FMA_CHAINS * FMA_UNROLL + 1,
    };
    let r = audit_with(Kernel::FmaF32, wrong, "sm_90", Some(&f), Some(clean()));
    red(&r, "the formula counts");
    // The right count on the wrong datapath.
    let wrong = Work::Fma {
        datapath: Datapath::Fp64,
        lanes: 1,
        per_iteration: FMA_CHAINS * FMA_UNROLL,
    };
    let r = audit_with(Kernel::FmaF32, wrong, "sm_90", Some(&f), Some(clean()));
    red(&r, "0 DFMA");
    // An MMA formula with half the MMAs the loop runs.
    let f = function(MMA_BF16_SM90);
    let Work::Mma {
        datapath, shape, ..
    } = Kernel::MmaBf16.work()
    else {
        panic!("mma_bf16 is an MMA kernel")
    };
    let wrong = Work::Mma {
        datapath,
        shape,
        per_iteration: 4,
    };
    let r = audit_with(Kernel::MmaBf16, wrong, "sm_90", Some(&f), Some(clean()));
    red(&r, "unrolled ×2");
}

#[test]
fn a_collapsed_loop_fails() {
    // The backward branch gone: the FMAs run once, outside any loop.
    let f = function(FMA_F32_SM90);
    let (l, _) = timed_loop(&f, |i| i.base() == "FFMA").expect("a loop");
    let text = edit_at(FMA_F32_SM90, l.end, |line| {
        Some(line.replace(line.split("*/").nth(1).unwrap_or(""), "    NOP ;"))
    });
    red(&check(Kernel::FmaF32, "sm_90", &text), "collapsed loop");
}

#[test]
fn an_unrolled_loop_fails() {
    // Every FFMA of the loop twice: two iterations per pass.
    let mut text = FMA_F32_SM90.to_string();
    for at in loop_offsets(FMA_F32_SM90, "FFMA") {
        text = edit_at(&text, at, |l| Some(format!("{l}\n{l}")));
    }
    red(&check(Kernel::FmaF32, "sm_90", &text), "unrolled ×2");
}

#[test]
fn eliminated_work_fails() {
    let mut text = FMA_F32_SM90.to_string();
    for at in loop_offsets(FMA_F32_SM90, "FFMA") {
        text = edit_at(&text, at, |_| None);
    }
    // The FFMAs left (outside the loop) do not count.
    let f = check(Kernel::FmaF32, "sm_90", &text);
    assert_eq!(f.verdict, Verdict::Fail, "{f:?}");
    let all: String = text
        .lines()
        .filter(|l| !l.contains("FFMA"))
        .collect::<Vec<_>>()
        .join("\n");
    red(&check(Kernel::FmaF32, "sm_90", &all), "dead code");
}

#[test]
fn a_spill_fails() {
    let report = PTXAS_FMA_SM90.replace("0 bytes spill stores", "8 bytes spill stores");
    let r = ptxas::parse(&report).expect("parses")["fma_f32"];
    let f = audit(
        Kernel::FmaF32,
        "sm_90",
        Some(&function(FMA_F32_SM90)),
        Some(r),
    );
    red(&f, "spills: 8 bytes stored");
    // Local memory in the loop, even without a reported spill.
    let at = loop_offsets(FMA_F32_SM90, "FFMA")[0];
    let text = edit_at(FMA_F32_SM90, at, |l| {
        Some(format!(
            "{l}\n        /*{at:04x}*/                   STL [R1], R4 ;"
        ))
    });
    red(&check(Kernel::FmaF32, "sm_90", &text), "local memory");
    // A call in the loop.
    let text = edit_at(FMA_F32_SM90, at, |l| {
        Some(format!(
            "{l}\n        /*{at:04x}*/                   CALL.REL.NOINC `($__internal_0_$__cuda_sm20_div_s64) ;"
        ))
    });
    red(
        &check(Kernel::FmaF32, "sm_90", &text),
        "1 CALL in the timed loop",
    );
}

#[test]
fn fp8_emulated_through_fp16_fails() {
    let f = check(Kernel::MmaFp8, "sm_90", MMA_FP8_SM90);
    red(&f, "emulated");
    assert!(f.reason.contains("HMMA.16816.F32"), "{}", f.reason);
    assert!(f.reason.contains("F2FP.F16.E4M3.UNPACK_B"), "{}", f.reason);
    // A native FP8 MMA dropped on sm_89.
    let at = loop_offsets(MMA_FP8_SM89, "QMMA");
    let text = edit_at(MMA_FP8_SM89, at[3], |_| None);
    red(&check(Kernel::MmaFp8, "sm_89", &text), "census: 7");
    // One BF16 MMA lowered to FP16.
    let at = loop_offsets(MMA_BF16_SM90, "HMMA");
    let text = edit_at(MMA_BF16_SM90, at[0], |l| {
        Some(l.replace(".F32.BF16", ".F32"))
    });
    red(&check(Kernel::MmaBf16, "sm_90", &text), "emulated");
}

#[test]
fn a_wrong_cache_operator_or_width_fails() {
    // L1-served loads in the L2 kernel.
    let text = L2_READ_SM90.replace("STRONG.GPU", "STRONG.SM");
    red(&check(Kernel::L2Read, "sm_90", &text), "L2-served");
    // One 8-byte load among the 16-byte ones.
    let at = loop_offsets(L2_READ_SM90, "LDG");
    let text = edit_at(L2_READ_SM90, at[1], |l| Some(l.replace(".128", ".64")));
    red(&check(Kernel::L2Read, "sm_90", &text), "census: 3 loads");
    // A store that is not evict-first in the HBM copy.
    let at = loop_offsets(HBM_COPY_SM90, "STG");
    let text = edit_at(HBM_COPY_SM90, at[0], |l| Some(l.replace(".EF", "")));
    red(&check(Kernel::HbmCopy, "sm_90", &text), "evict-first");
    // The L2 listing audited as the L1 kernel: GPU-scoped loads do not stay in L1.
    red(&check(Kernel::L1Read, "sm_90", L2_READ_SM90), "L1-cached");
    // Nor as the non-coherent one: no load takes the read-only path.
    red(
        &check(Kernel::L1ReadNc, "sm_90", L2_READ_SM90),
        "non-coherent",
    );
}

#[test]
fn a_broken_sweep_fails() {
    let at = loop_offsets(ERT_F32_SM90, "FFMA");
    let text = edit_at(ERT_F32_SM90, at[0], |_| None);
    red(&check(Kernel::ErtF32, "sm_90", &text), "not a multiple");
    let at = loop_offsets(ERT_F32_SM90, "LDG");
    let text = edit_at(ERT_F32_SM90, at[0], |l| Some(l.replace(".128", ".64")));
    red(&check(Kernel::ErtF32, "sm_90", &text), "element loop");
}

#[test]
fn a_missing_function_or_stub_is_reported() {
    let f = audit(Kernel::FmaF32, "sm_90", None, None);
    red(&f, "not in the cubin");
    // A kernel that needs sm_80 is an empty stub on sm_70, never timed.
    let stub = ".text.mma_bf16:\n        /*0000*/                   EXIT ;\n";
    let f = check(Kernel::MmaBf16, "sm_70", stub);
    assert_eq!(f.verdict, Verdict::Absent);
    // …and a stub that does work is a failure.
    let f = check(Kernel::MmaBf16, "sm_70", MMA_BF16_SM90);
    assert_eq!(f.verdict, Verdict::Fail);
}

/// The loop exit ptxas writes on sm_80 to sm_89 for long loops, `@P1 CALL.REL.NOINC` to the
/// instruction after the backward branch, is no call; a call anywhere else in the loop is (a
/// hand-written listing in nvdisasm's layout: parser and audit input, not compiler output).
#[test]
fn a_loop_exit_through_call_rel_noinc_is_no_call() {
    let listing = |target: &str| {
        format!(
            ".text.fma_f32:\n\
             \x20       /*0000*/                   MOV R1, RZ ;\n\
             .L_x_1:\n\
             \x20       /*0010*/                   FFMA R1, R1, R2, R3 ;\n\
             \x20       /*0020*/                   FFMA R4, R4, R2, R3 ;\n\
             \x20       /*0030*/                   ISETP.LE.AND P1, PT, R0, UR4, PT ;\n\
             \x20       /*0040*/               @P1 CALL.REL.NOINC `({target}) ;\n\
             \x20       /*0050*/                   BRA `(.L_x_1) ;\n\
             .L_x_0:\n\
             \x20       /*0060*/                   EXIT ;\n\
             .L_x_2:\n\
             \x20       /*0070*/                   RET.REL.NODEC R20 `(fma_f32) ;\n"
        )
    };
    let work = Work::Fma {
        datapath: Datapath::Fp32,
        lanes: 1,
        per_iteration: 2,
    };
    let run = |text: &str| {
        audit_with(
            Kernel::FmaF32,
            work,
            "sm_80",
            Some(&function(text)),
            Some(clean()),
        )
    };
    green(&run(&listing(".L_x_0")));
    red(&run(&listing(".L_x_2")), "1 CALL in the timed loop");
}
