//! Our roofline maths against the study's own numbers.
//!
//! `bundles/v100-deepcam-example.json` holds eleven kernels typed in from the per-kernel table of
//! the 2020 NERSC hierarchical-roofline study of DeepCAM on a V100, with the ceilings its notebook
//! plotted against. `reference/nersc-v100-deepcam/expected-per-kernel.csv` is that table as the
//! study published it, with the figures its own post-processing derived: all FLOPs, the arithmetic
//! intensity at HBM, L2 and L1, and GFLOP/s (with G = 2^30). These tests analyse the bundle with
//! `roofline_model::analysis` and check that every figure agrees with the study's, row by row,
//! and that the ceilings place the kernels where the hand-computed roofline says they belong.

use roofline_model::analysis::ceilings::Ceilings;
use roofline_model::analysis::hierarchical::{self, Bound};
use roofline_model::analysis::{KernelAnalysis, analyze};
use roofline_model::bundle::{Bundle, DataSource, Datapath, MemoryLevel};
use roofline_model::{parse_bundle, validate};
use roofline_tests::{StudyTable, fixture_text, parse_csv};

const BUNDLE: &str = "bundles/v100-deepcam-example.json";

/// The study's G in GFLOP/s: 2^30.
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Largest relative difference accepted for a derived figure (a division or two in f64).
const REL: f64 = 1e-9;

/// The study's name for the big Tensor Core GEMM of the forward pass.
const BIG_GEMM: &str = "Volta_hmma_implicit_gemm_fprop_fp32_nhwc_128x128x64x1_1x3x3x0x1";

fn load_bundle() -> Bundle {
    parse_bundle(&fixture_text(BUNDLE)).unwrap_or_else(|e| panic!("{BUNDLE}: {e}"))
}

/// Asserts `ours` is within [`REL`] of `theirs`, relative to `theirs` (exactly 0 when it is 0).
fn assert_close(ours: f64, theirs: f64, what: &str, kernel: &str) {
    let ok = if theirs == 0.0 {
        ours == 0.0
    } else {
        ((ours - theirs) / theirs).abs() < REL
    };
    assert!(
        ok,
        "{kernel}: {what}: ours {ours:e}, the study's {theirs:e}"
    );
}

/// Checks one intensity. Where the kernel does no FLOP the study writes 0.0 (0 / bytes); we give
/// 0 as well, or no value at all (no roofline point), and both are accepted.
fn assert_intensity(ours: Option<f64>, theirs: f64, flops: f64, what: &str, kernel: &str) {
    match ours {
        Some(ai) => assert_close(ai, theirs, what, kernel),
        None => assert!(
            flops == 0.0 && theirs == 0.0,
            "{kernel}: {what}: we have no intensity, the study has {theirs}"
        ),
    }
}

#[test]
fn csv_parser_follows_rfc_4180() {
    let text = "a,b,c\r\n\"x, y\",\"say \"\"hi\"\"\",\n\"line\nbreak\",,3\n";
    assert_eq!(
        parse_csv(text),
        vec![
            vec!["a", "b", "c"],
            vec!["x, y", "say \"hi\"", ""],
            vec!["line\nbreak", "", "3"],
        ]
    );
    assert_eq!(parse_csv("1,2"), vec![vec!["1", "2"]]);
    assert!(parse_csv("").is_empty());
}

#[test]
fn fixture_parses_and_validates() {
    let b = load_bundle();
    validate(&b).unwrap();
    assert_eq!(b.devices.len(), 1);
    assert_eq!(b.devices[0].name, "Tesla V100-SXM2-16GB");
    assert_eq!(b.machines.len(), 1);
    assert_eq!(b.machines[0].device, b.devices[0].id);
    assert!(b.kernels.len() >= 10, "{} kernels", b.kernels.len());
    for k in &b.kernels {
        assert_eq!(k.source, DataSource::Published, "{}", k.name);
        assert!(k.device.is_none(), "{}", k.name);
        assert!(k.time.per_launch.is_none(), "{}", k.name);
    }
    let description = b.description.as_deref().unwrap_or_default();
    assert!(
        description.contains("not measured by this tool"),
        "{description}"
    );
    assert_eq!(b.provenance.tool, "hand");
    assert!(b.provenance.created.is_none());
}

#[test]
fn analysis_reproduces_the_studys_per_kernel_table() {
    let b = load_bundle();
    let table = StudyTable::load();
    let analyses: Vec<KernelAnalysis> = analyze(&b, &b.kernels);
    assert_eq!(analyses.len(), b.kernels.len());

    let raw = |row: &[String], op: &str| {
        table.num(
            row,
            &format!("sm__sass_thread_inst_executed_op_{op}_pred_on.sum"),
        )
    };
    let mut checked = 0;
    let mut without_flops = 0;
    for (k, a) in b.kernels.iter().zip(&analyses) {
        let name = k.name.as_str();
        let row = table.row(name);

        // The fixture holds the study's inputs (FLOPs by the study's convention), exactly.
        assert_eq!(
            k.launches as f64,
            table.num(row, "Count"),
            "{name}: launches"
        );
        // Exactly: serde_json's `float_roundtrip` feature (enabled for the workspace) reads a
        // 17-digit decimal as the nearest f64, as Rust's own parser does.
        let time = table.num(row, "Time");
        assert_eq!(k.time.total_s, time, "{name}: time");
        let fp32 = 2.0 * raw(row, "ffma") + raw(row, "fmul") + raw(row, "fadd");
        let fp16 = 2.0 * raw(row, "hfma") + raw(row, "hmul") + raw(row, "hadd");
        assert_eq!(k.flops.get(Datapath::Fp32), Some(fp32), "{name}: fp32");
        assert_eq!(k.flops.get(Datapath::Fp16), Some(fp16), "{name}: fp16");
        let tensor = 512.0 * table.num(row, "sm__inst_executed_pipe_tensor.sum");
        assert_eq!(
            k.flops.get(Datapath::TensorFp16),
            Some(tensor),
            "{name}: tensor"
        );
        assert_eq!(
            table.num(row, "TC FLOPs"),
            tensor,
            "{name}: the study's TC FLOPs"
        );
        assert_eq!(
            k.bytes.l1,
            Some(table.num(row, "l1tex__t_bytes.sum")),
            "{name}: L1"
        );
        assert_eq!(
            k.bytes.l2,
            Some(table.num(row, "lts__t_bytes.sum")),
            "{name}: L2"
        );
        assert_eq!(
            k.bytes.hbm,
            Some(table.num(row, "dram__bytes.sum")),
            "{name}: HBM"
        );

        // What our analysis derives from them, against what the study derived.
        let all = table.num(row, "all FLOPs");
        assert_eq!(a.flops, Some(all), "{name}: all FLOPs");
        assert_eq!(a.flops_tensor, Some(tensor), "{name}: Tensor Core FLOPs");
        assert_eq!(a.time_s, k.time.total_s, "{name}: time");
        let [l1, l2, hbm] = a.ai;
        assert_intensity(hbm, table.num(row, "AI HBM"), all, "AI HBM", name);
        assert_intensity(l2, table.num(row, "AI L2"), all, "AI L2", name);
        assert_intensity(l1, table.num(row, "AI L1"), all, "AI L1", name);
        let gflops = table.num(row, "GFLOP/s");
        match a.flop_per_s {
            Some(p) => assert_close(p / GIB, gflops, "GFLOP/s (2^30)", name),
            // No FLOP, no roofline point: the study writes 0.
            None => {
                assert!(
                    all == 0.0 && gflops == 0.0,
                    "{name}: no performance, study {gflops}"
                );
                assert!(a.hierarchical.is_none(), "{name}: bound without FLOPs");
                without_flops += 1;
            }
        }
        let tc_gflops = a.flops_tensor.unwrap() / a.time_s / GIB;
        assert_close(tc_gflops, table.num(row, "TC GFLOP/s"), "TC GFLOP/s", name);
        checked += 1;
    }
    assert_eq!(checked, b.kernels.len());
    assert!(checked >= 10, "only {checked} kernels checked");
    assert_eq!(without_flops, 1, "the fixture has one kernel without FLOPs");
}

#[test]
fn ceilings_place_the_big_tensor_core_gemm_under_the_compute_roof() {
    let b = load_bundle();
    let c = Ceilings::from_machine(b.machine_for("0").expect("machine for device 0"));

    // HBM ridge point of the FP32 FMA roof: 15158.6 / 828.758 = 18.2907 FLOP/byte.
    let fp32 = c.peak(Datapath::Fp32).unwrap();
    let hbm = c.bandwidth(MemoryLevel::Hbm).unwrap();
    assert!((hierarchical::ridge_point(fp32, hbm) - 18.290_743_498).abs() < 1e-8);

    let i = b
        .kernels
        .iter()
        .position(|k| k.name == BIG_GEMM)
        .expect("the big GEMM is in the fixture");
    let a = &analyze(&b, &b.kernels)[i];
    // The study: 75,756.8 GFLOP/s with G = 2^30, which is 81.34 × 10^12 FLOP/s in SI units.
    assert!((a.flop_per_s.unwrap() - 81.343_280_806e12).abs() < 1e3);
    // Intensities: HBM 1022.6, L2 82.06, L1 64.44 FLOP/byte, each above the Tensor Core ridge at
    // that level (106496 / 828.758 = 128.5 is below 1022.6; 106496 / 2996.77 = 35.5 is below
    // 82.06; 106496 / 14336 = 7.43 is below 64.44), so no memory level binds.
    let [l1, l2, hbm_ai] = a.ai.map(Option::unwrap);
    let tensor = c.peak(Datapath::TensorFp16).unwrap();
    assert!(hbm_ai > tensor / hbm);
    assert!(l2 > tensor / c.bandwidth(MemoryLevel::L2).unwrap());
    assert!(l1 > tensor / c.bandwidth(MemoryLevel::L1).unwrap());

    // By hand, the time floor of each term: compute 293534171136 / 106496e9 (Tensor Cores) +
    // 113246208 / 15158.6e9 (FP32) = 2.7638 ms; L2 3578610368 / 2996.77e9 = 1.1942 ms; HBM
    // 0.3465 ms; L1 0.3179 ms. Compute is the largest, so the kernel is compute-bound, with
    // attainable 293647417344 / 2.7638 ms = 106.25 × 10^12 FLOP/s and headroom 3.6100 / 2.7638 =
    // 1.306 over the 3.61 ms it took.
    let h = a.hierarchical.as_ref().expect("a hierarchical bound");
    assert_eq!(h.bound, Bound::Compute);
    assert!(a.missing_peaks.is_empty());
    let floor = 293_534_171_136.0 / 106_496e9 + 113_246_208.0 / 15_158.6e9;
    assert!((h.floor_s - floor).abs() < 1e-15);
    assert!((h.attainable / 106.249_104_988e12 - 1.0).abs() < 1e-9);
    assert!((a.headroom.unwrap() - 1.306_181_702).abs() < 1e-8);
}
