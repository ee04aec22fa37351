//! The comparison's tests: matching, figures and summary (the overlay's are the chart's:
//! `crate::chart::overlay`). Its run builders serve those too.

use super::*;
use crate::bundle::{Bundle, Bytes, DataSource};

pub(crate) fn kernel(name: &str, t: f64, fp32: f64, tensor: f64, hbm: f64) -> Kernel {
    let mut k = Kernel::new(name, t, DataSource::Import);
    k.flops.set(Datapath::Fp32, Some(fp32));
    k.flops.set(Datapath::TensorFp16, Some(tensor));
    k.bytes = Bytes {
        l1: Some(hbm * 4.0),
        l2: Some(hbm * 2.0),
        hbm: Some(hbm),
    };
    k
}

pub(crate) fn run(kernels: Vec<Kernel>) -> Analysed {
    let mut b: Bundle = crate::parse_bundle(include_str!(
        "../../../../tests/fixtures/bundles/v100-deepcam-example.json"
    ))
    .unwrap();
    let device = b.devices[0].id.clone();
    b.kernels = kernels
        .into_iter()
        .map(|k| Kernel {
            device: Some(device.clone()),
            ..k
        })
        .collect();
    Analysed::new(&b, None, None)
}

pub(crate) fn pair() -> (Analysed, Analysed) {
    // FP32 GEMM becomes a Tensor Core GEMM; a copy stays; an old kernel goes, a new one comes.
    let base = run(vec![
        kernel("gemm", 4e-3, 4e10, 0.0, 1e8),
        kernel("copy", 1e-3, 0.0, 0.0, 8e8),
        kernel("old", 5e-4, 1e6, 0.0, 1e8),
    ]);
    let cur = run(vec![
        kernel("gemm", 1e-3, 0.0, 4e10, 1e8),
        kernel("copy", 1e-3, 0.0, 0.0, 8e8),
        kernel("cast", 2e-4, 1e6, 0.0, 4e8),
    ]);
    (cur, base)
}

#[test]
fn matches_by_name_and_computes_delta_and_speedup() {
    let (cur, base) = pair();
    let c = compare(&cur, &base);
    assert_eq!(c.rows.len(), 4);
    let gemm = c.row("gemm").unwrap();
    assert_eq!(gemm.presence, Presence::Both);
    assert!((gemm.delta_s() - (-3e-3)).abs() < 1e-15);
    assert!((gemm.speedup().unwrap() - 4.0).abs() < 1e-12);
    assert_eq!(
        gemm.baseline.as_ref().unwrap().datapath,
        Some(Datapath::Fp32)
    );
    assert_eq!(
        gemm.current.as_ref().unwrap().datapath,
        Some(Datapath::TensorFp16)
    );
    let copy = c.row("copy").unwrap();
    assert_eq!(copy.speedup(), Some(1.0));
    assert_eq!(copy.bound_change(), None);
    assert_eq!(c.row("cast").unwrap().presence, Presence::New);
    assert_eq!(c.row("cast").unwrap().speedup(), None);
    let old = c.row("old").unwrap();
    assert_eq!(old.presence, Presence::Gone);
    assert!((old.delta_s() + 5e-4).abs() < 1e-15);
    // Current kernels first, largest time first; the gone one last.
    assert_eq!(c.rows.last().unwrap().name, "old");
}

#[test]
fn names_that_differ_in_precision_pair_when_launches_agree() {
    let base = run(vec![
        kernel("void conv<float>(float*)", 4e-3, 4e10, 0.0, 1e8),
        kernel("void ew<float, 1>(float*)", 1e-3, 1e6, 0.0, 8e8),
        kernel("void ew<float, 2>(float*)", 1e-3, 1e6, 0.0, 8e8),
    ]);
    let cur = run(vec![
        kernel("void conv<__half>(__half*)", 1e-3, 0.0, 4e10, 1e8),
        kernel("void ew<__half, 1>(__half*)", 1e-3, 1e6, 0.0, 8e8),
    ]);
    let c = compare(&cur, &base);
    let conv = c.row("void conv<__half>(__half*)").unwrap();
    assert_eq!(conv.presence, Presence::Both);
    assert_eq!(conv.quality, Some(Match::Precision));
    assert_eq!(
        conv.baseline_name.as_deref(),
        Some("void conv<float>(float*)")
    );
    assert!((conv.speedup().unwrap() - 4.0).abs() < 1e-12);
    // Two baseline `ew` kernels, but only one has the same template but for its precision.
    let ew = c.row("void ew<__half, 1>(__half*)").unwrap();
    assert_eq!(ew.presence, Presence::Both);
    assert_eq!(
        ew.baseline_name.as_deref(),
        Some("void ew<float, 1>(float*)")
    );
    assert_eq!(
        (c.summary.matched, c.summary.new, c.summary.gone),
        (2, 0, 1)
    );
    assert_eq!(c.summary.matched_similar, 2);
    assert!(
        c.summary
            .line()
            .contains("2 kernels matched (2 by a similar name)")
    );
    assert!(
        ew.transition().contains("same name but its precision"),
        "{}",
        ew.transition()
    );
    assert!(ew.change().starts_with('≈'));
}

fn launched(mut k: Kernel, n: u64) -> Kernel {
    k.launches = n;
    k
}

/// The DeepCAM showcase: apex O1 replaced the 61-launch FP32 batch-norm kernel by a 60-launch
/// `_fp16` variant and one launch of a half-precision template of the FP32 kernel. The
/// 60-launch variant is its counterpart; the 1-launch template, whose name is closer, is not.
#[test]
fn the_counterpart_is_the_one_whose_launches_agree() {
    let bn = |t: &str, args: &str| {
        format!(
            "void cudnn::detail::bn_fw_tr_1C11_singleread{t}(cudnnTensorStruct, {args} const*, cudnnTensorStruct, {args}*, float const*, float const*)"
        )
    };
    let fp32 = bn("<float, 512, true, 1, 2, 0>", "float");
    let half = bn("<__half, 512, true, 1, 2, 0>", "__half");
    let fp16 = bn("_fp16<512, 1, 2, 0>", "__half2");
    let fp16_20 = bn("_fp16<512, 1, 2, 20>", "__half2");
    let base = run(vec![launched(kernel(&fp32, 4.2e-3, 2e9, 0.0, 1e9), 61)]);
    let cur = run(vec![
        launched(kernel(&fp16, 2.6e-3, 2e9, 0.0, 5e8), 60),
        launched(kernel(&fp16_20, 3.7e-4, 1e8, 0.0, 5e7), 4),
        launched(kernel(&half, 1e-5, 2e6, 0.0, 1e6), 1),
    ]);
    let c = compare(&cur, &base);
    let row = c.row(&fp16).unwrap();
    assert_eq!(row.presence, Presence::Both);
    assert_eq!(row.quality, Some(Match::Similar));
    assert_eq!(row.baseline_name.as_deref(), Some(fp32.as_str()));
    assert!((row.speedup().unwrap() - 4.2 / 2.6).abs() < 1e-12);
    // The 1-launch template is new, not a 420× speed-up.
    assert_eq!(c.row(&half).unwrap().presence, Presence::New);
    assert_eq!(c.row(&fp16_20).unwrap().presence, Presence::New);
    assert_eq!(
        (c.summary.matched, c.summary.new, c.summary.gone),
        (1, 2, 0)
    );

    // Without the 60-launch variant, the 1-launch template is a doubtful pair, left apart and
    // said on both rows.
    let cur = run(vec![launched(kernel(&half, 1e-5, 2e6, 0.0, 1e6), 1)]);
    let c = compare(&cur, &base);
    let new = c.row(&half).unwrap();
    assert_eq!(new.presence, Presence::New);
    let d = new.doubt.as_ref().unwrap();
    assert_eq!(d.name, fp32);
    assert_eq!(d.reason, "1 launch here, 61 in the baseline");
    assert_eq!(c.row(&fp32).unwrap().presence, Presence::Gone);
    assert_eq!(c.row(&fp32).unwrap().doubt.as_ref().unwrap().name, half);
    assert_eq!(c.summary.doubtful, 1);
    assert!(
        c.summary
            .line()
            .contains("0 kernels matched, 1 doubtful pair left apart, 1 new, 1 gone"),
        "{}",
        c.summary.line()
    );
    assert_eq!(new.change(), "new ?");
    assert!(new.transition().contains("doubtful counterpart left apart"));
}

/// Kernels of the same family whose tile sizes changed pair when their launch counts tell them
/// apart; where they cannot, nothing is paired.
#[test]
fn similar_names_pair_only_when_one_candidate_agrees() {
    let conv = |t: &str, tiles: &str| {
        format!(
            "void cudnn::detail::implicit_convolve_sgemm<{t}, {t}, {tiles}, true, false>(int, {t} const*)"
        )
    };
    let base = run(vec![
        launched(kernel(&conv("float", "128, 6, 7"), 2e-2, 6e10, 0.0, 1e9), 3),
        launched(
            kernel(&conv("float", "1024, 5, 5"), 1.4e-4, 3e7, 0.0, 1e7),
            1,
        ),
    ]);
    let cur = run(vec![
        launched(
            kernel(&conv("__half", "512, 6, 8"), 2.4e-2, 6e10, 0.0, 1e9),
            3,
        ),
        launched(
            kernel(&conv("__half", "1024, 5, 5"), 5e-4, 3e7, 0.0, 1e7),
            1,
        ),
    ]);
    let c = compare(&cur, &base);
    assert_eq!(
        (c.summary.matched, c.summary.new, c.summary.gone),
        (2, 0, 0)
    );
    let big = c.row(&conv("__half", "512, 6, 8")).unwrap();
    assert_eq!(big.quality, Some(Match::Similar));
    assert_eq!(
        big.baseline_name.as_deref(),
        Some(conv("float", "128, 6, 7").as_str())
    );
    let small = c.row(&conv("__half", "1024, 5, 5")).unwrap();
    assert_eq!(small.quality, Some(Match::Precision));
    // Two of each with the same launch counts: the names do not say which is which.
    let base = run(vec![
        launched(kernel(&conv("float", "128, 6, 7"), 2e-2, 6e10, 0.0, 1e9), 3),
        launched(kernel(&conv("float", "256, 6, 7"), 2e-2, 6e10, 0.0, 1e9), 3),
    ]);
    let cur = run(vec![
        launched(
            kernel(&conv("__half", "512, 6, 8"), 2e-2, 6e10, 0.0, 1e9),
            3,
        ),
        launched(kernel(&conv("__half", "64, 6, 8"), 2e-2, 6e10, 0.0, 1e9), 3),
    ]);
    let c = compare(&cur, &base);
    assert_eq!(c.summary.matched, 0);
    assert_eq!(c.summary.doubtful, 2);
    assert!(
        c.rows
            .iter()
            .filter_map(|r| r.doubt.as_ref())
            .all(|d| d.reason.contains("one of 2 kernels")),
        "{:?}",
        c.rows
    );
}

/// What a person pairs by hand wins over the rules, and a pair can be undone by hand.
#[test]
fn pairs_by_hand_win() {
    let (cur, base) = pair();
    let manual = [
        ManualPair {
            current: "cast".into(),
            baseline: Some("old".into()),
        },
        ManualPair {
            current: "copy".into(),
            baseline: None,
        },
    ];
    let c = compare_with(
        &cur,
        &base,
        &CompareOptions {
            manual: &manual,
            ..CompareOptions::default()
        },
    );
    let cast = c.row("cast").unwrap();
    assert_eq!(cast.quality, Some(Match::Manual));
    assert_eq!(cast.baseline_name.as_deref(), Some("old"));
    assert!(cast.change().starts_with('✋'));
    assert_eq!(c.row("copy").unwrap().presence, Presence::New);
    assert_eq!(
        c.rows.iter().filter(|r| r.name == "copy").count(),
        2,
        "copy is new and gone"
    );
    assert_eq!(c.summary.matched_by_hand, 1);
    assert!(
        c.summary.line().contains("2 kernels matched (1 by hand)"),
        "{}",
        c.summary.line()
    );
    // Names that are not there change nothing.
    let stray = [ManualPair {
        current: "nothing".into(),
        baseline: Some("gemm".into()),
    }];
    assert_eq!(
        compare_with(
            &cur,
            &base,
            &CompareOptions {
                manual: &stray,
                ..CompareOptions::default()
            }
        ),
        compare(&cur, &base)
    );
}

/// Colliding short names are told apart as `roofline info` tells them apart: a current kernel
/// keeps its run's name, and a new or gone one never reads like another row.
#[test]
fn rows_carry_the_runs_display_names() {
    let a = "void at::native::vectorized_elementwise_kernel<4, at::native::mul_kernel_cuda>(int)";
    let b = "void at::native::vectorized_elementwise_kernel<4, at::native::add_kernel_cuda>(int)";
    let base = run(vec![
        kernel(a, 2e-3, 1e6, 0.0, 1e8),
        kernel(b, 1e-3, 1e6, 0.0, 1e8),
    ]);
    let cur = run(vec![kernel(a, 1e-3, 1e6, 0.0, 1e8)]);
    let c = compare(&cur, &base);
    // The matched kernel keeps its run's name (its run has no other of that short name); the
    // gone one is told apart from it.
    assert_eq!(
        c.row(a).unwrap().short_name(),
        "vectorized_elementwise_kernel"
    );
    assert_eq!(
        c.row(b).unwrap().short_name(),
        "vectorized_elementwise_kernel [add_kernel_cuda]"
    );
    assert_eq!(c.row(b).unwrap().presence, Presence::Gone);
    // A new and a gone kernel of one short name: both told apart.
    let cur = run(vec![kernel(a, 1e-3, 1e6, 0.0, 1e8)]);
    let base = run(vec![kernel(b, 1e-3, 1e6, 0.0, 1e8)]);
    let c = compare(&cur, &base);
    let (new, gone) = (c.row(a).unwrap(), c.row(b).unwrap());
    assert_eq!(
        (new.presence, gone.presence),
        (Presence::New, Presence::Gone)
    );
    assert_ne!(new.short_name(), gone.short_name());
    assert!(gone.short_name().ends_with("[add_kernel_cuda]"));
}

fn op(name: &str, op: &str, t: f64, fp32: f64, tensor: f64, hbm: f64) -> Kernel {
    let mut k = kernel(name, t, fp32, tensor, hbm);
    k.operator = Some(crate::bundle::OperatorCall {
        name: op.into(),
        call: 0,
        kernels: 1,
        shapes: None,
        complexity: None,
        rule: None,
    });
    k
}

/// A GEMM operator whose kernel changed (an FP32 SGEMM became a Tensor Core CUTLASS kernel),
/// an add that stayed, a ReLU gone and a cast new, read per operator.
fn op_pair() -> (Vec<Kernel>, Vec<Kernel>) {
    let base = vec![
        op("volta_sgemm_128x64_nn", "aten::mm", 3e-3, 4e10, 0.0, 1e8),
        op("volta_sgemm_64x64_nn", "aten::mm", 1e-3, 1e10, 0.0, 1e8),
        op(
            "vectorized_elementwise_kernel<add>",
            "aten::add",
            1e-3,
            1e6,
            0.0,
            8e8,
        ),
        op(
            "vectorized_elementwise_kernel<relu>",
            "aten::relu",
            5e-4,
            1e6,
            0.0,
            4e8,
        ),
    ];
    let cur = vec![
        op(
            "cutlass_80_tensorop_s1688gemm",
            "aten::mm",
            1e-3,
            0.0,
            5e10,
            1e8,
        ),
        op(
            "vectorized_elementwise_kernel<add>",
            "aten::add",
            1e-3,
            1e6,
            0.0,
            8e8,
        ),
        op(
            "vectorized_elementwise_kernel<copy>",
            "aten::to",
            2e-4,
            0.0,
            0.0,
            4e8,
        ),
    ];
    (cur, base)
}

#[test]
fn operators_are_matched_by_operator_name() {
    use crate::analysis::group::{GroupBy, group};
    let (cur, base) = op_pair();
    let c = compare(
        &run(group(&cur, GroupBy::Operator)),
        &run(group(&base, GroupBy::Operator)),
    );
    assert_eq!(c.summary.unit, GroupBy::Operator);
    assert_eq!(c.summary.note, None);
    // aten::mm: 3 + 1 ms before, 1 ms after, by different kernels: 4× faster.
    let mm = c.row("aten::mm").unwrap();
    assert_eq!(mm.presence, Presence::Both);
    assert_eq!(mm.baseline_name, None);
    assert!((mm.baseline_s() - 4e-3).abs() < 1e-15);
    assert!((mm.current_s() - 1e-3).abs() < 1e-15);
    assert!((mm.speedup().unwrap() - 4.0).abs() < 1e-12);
    // The GEMM moved from FP32 to Tensor Core FP16.
    assert_eq!(mm.baseline.as_ref().unwrap().datapath, Some(Datapath::Fp32));
    assert_eq!(
        mm.current.as_ref().unwrap().datapath,
        Some(Datapath::TensorFp16)
    );
    assert_eq!(c.row("aten::add").unwrap().speedup(), Some(1.0));
    assert_eq!(c.row("aten::to").unwrap().presence, Presence::New);
    assert_eq!(c.row("aten::relu").unwrap().presence, Presence::Gone);
    let s = &c.summary;
    assert_eq!((s.matched, s.new, s.gone), (2, 1, 1));
    assert!((s.before_s - 5.5e-3).abs() < 1e-15);
    assert!((s.after_s - 2.2e-3).abs() < 1e-15);
    assert!(
        s.line().contains("2 operators matched, 1 new, 1 gone"),
        "{}",
        s.line()
    );
    // Read per kernel, the GEMM kernels match nothing (the CUTLASS kernel is new, both
    // SGEMMs gone), and the copy is not paired with the ReLU: their one shared short name is a
    // doubtful pair (other identifiers in their templates), said, not paired.
    let k = compare(&run(cur), &run(base));
    assert_eq!(k.summary.unit, GroupBy::Kernel);
    assert_eq!(
        (k.summary.matched, k.summary.new, k.summary.gone),
        (1, 2, 3)
    );
    let copy = k.row("vectorized_elementwise_kernel<copy>").unwrap();
    assert_eq!(copy.presence, Presence::New);
    let d = copy.doubt.as_ref().unwrap();
    assert_eq!(d.name, "vectorized_elementwise_kernel<relu>");
    assert!(d.reason.contains("other identifiers"), "{}", d.reason);
    assert!(
        k.summary
            .line()
            .contains("1 kernels matched, 1 doubtful pair left apart"),
        "{}",
        k.summary.line()
    );
}

#[test]
fn modules_are_matched_by_module_name_and_mixed_groupings_say_so() {
    use crate::analysis::group::{GroupBy, group};
    let tag = |mut k: Kernel, m: &str| {
        k.tags.insert("module".into(), m.into());
        k
    };
    let base = vec![
        tag(kernel("sgemm", 2e-3, 4e10, 0.0, 1e8), "Linear_0"),
        tag(kernel("relu", 1e-3, 1e6, 0.0, 4e8), "Linear_0"),
        tag(kernel("sgemm", 2e-3, 4e10, 0.0, 1e8), "Linear_1"),
    ];
    let cur = vec![
        tag(kernel("hgemm", 1e-3, 0.0, 4e10, 1e8), "Linear_0"),
        tag(kernel("sgemm", 2e-3, 4e10, 0.0, 1e8), "Linear_1"),
    ];
    let c = compare(
        &run(group(&cur, GroupBy::Module)),
        &run(group(&base, GroupBy::Module)),
    );
    assert_eq!(c.summary.unit, GroupBy::Module);
    // Linear_0: 3 ms → 1 ms; Linear_1 unchanged.
    assert!((c.row("Linear_0").unwrap().speedup().unwrap() - 3.0).abs() < 1e-12);
    assert_eq!(c.row("Linear_1").unwrap().speedup(), Some(1.0));
    assert!(
        c.summary
            .line()
            .contains("2 modules matched, 0 new, 0 gone")
    );
    // Per module against per kernel: nothing of the same name, and the line says why.
    let mixed = compare(&run(group(&cur, GroupBy::Module)), &run(base));
    assert_eq!(mixed.summary.matched, 0);
    let line = mixed.summary.line();
    assert!(
        line.contains("read per kernel and this run per module"),
        "{line}"
    );
}

#[test]
fn summary_adds_up_where_the_time_went() {
    let (cur, base) = pair();
    let s = compare(&cur, &base).summary;
    assert!((s.before_s - 5.5e-3).abs() < 1e-15);
    assert!((s.after_s - 2.2e-3).abs() < 1e-15);
    assert_eq!((s.matched, s.new, s.gone), (2, 1, 1));
    assert!((s.speedup().unwrap() - 2.5).abs() < 1e-12);
    // Every group's times add up to the totals.
    for g in [&s.by_bound, &s.by_datapath] {
        let before: f64 = g.iter().map(|m| m.before_s).sum();
        let after: f64 = g.iter().map(|m| m.after_s).sum();
        assert!((before - s.before_s).abs() < 1e-15);
        assert!((after - s.after_s).abs() < 1e-15);
    }
    // The largest move by datapath: FP32 lost the GEMM's 4 ms (and the old kernel's).
    let top = &s.by_datapath[0];
    assert_eq!(top.key, "fp32");
    assert!((top.before_s - 4.5e-3).abs() < 1e-15);
    assert!((top.after_s - 2e-4).abs() < 1e-15);
    let tc = s
        .by_datapath
        .iter()
        .find(|m| m.key == "tensor_fp16")
        .unwrap();
    assert!((tc.before_s, tc.after_s) == (0.0, 1e-3));
    let line = s.line();
    assert!(line.contains("2.50× speed-up"), "{line}");
    // Every part of each split is named, Tensor Cores apart from CUDA cores.
    assert!(
        line.contains("by datapath: FP32 on CUDA cores 4.5 ms → 200 µs, Tensor FP16 0 s → 1 ms, no FLOPs 1 ms → 1 ms"),
        "{line}"
    );
    assert!(
        line.contains("by bound: FP32 4 ms → 0 s, Tensor FP16 0 s → 1 ms, HBM 500 µs → 200 µs, no bound 1 ms → 1 ms"),
        "{line}"
    );
}

/// Per operator, each row lists the kernels its operator launched before and after, largest
/// time first, the first three named.
#[test]
fn operator_rows_list_the_kernels_they_launched() {
    use crate::analysis::group::{GroupBy, group};
    let (cur, base) = op_pair();
    let c = compare_with(
        &run(group(&cur, GroupBy::Operator)),
        &run(group(&base, GroupBy::Operator)),
        &CompareOptions {
            launches: Some((&cur, &base)),
            ..CompareOptions::default()
        },
    );
    let mm = c.row("aten::mm").unwrap().launched.as_ref().unwrap();
    let names = |ks: &[LaunchedKernel]| ks.iter().map(|k| k.name.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&mm.before),
        ["volta_sgemm_128x64_nn", "volta_sgemm_64x64_nn"]
    );
    assert_eq!(names(&mm.after), ["cutlass_80_tensorop_s1688gemm"]);
    assert_eq!(
        mm.line(),
        "before: volta_sgemm_128x64_nn (1×, 3 ms), volta_sgemm_64x64_nn (1×, 1 ms); after: cutlass_80_tensorop_s1688gemm (1×, 1 ms)"
    );
    // A gone operator's kernels: before only.
    let relu = c.row("aten::relu").unwrap().launched.as_ref().unwrap();
    assert!(relu.after.is_empty() && relu.before.len() == 1);
    // Beyond three kernels a side, a count.
    let many = Launched {
        before: (0..5)
            .map(|i| LaunchedKernel {
                name: format!("k{i}"),
                full_name: format!("k{i}"),
                launches: 1,
                time_s: 1e-3,
            })
            .collect(),
        after: Vec::new(),
    };
    assert!(
        many.line().starts_with(
            "before: k0 (1×, 1 ms), k1 (1×, 1 ms), k2 (1×, 1 ms) and 2 more; after: none"
        ),
        "{}",
        many.line()
    );
    // Read per kernel, nothing is listed.
    let k = compare_with(
        &run(cur.clone()),
        &run(base.clone()),
        &CompareOptions {
            launches: Some((&cur, &base)),
            ..CompareOptions::default()
        },
    );
    assert!(k.rows.iter().all(|r| r.launched.is_none()));
}

/// Without counters, the datapath of a kernel is its analytical F's (a trace's operator rule).
#[test]
fn the_datapath_of_uncounted_work_is_its_complexitys() {
    let mut k = Kernel::new("gemm", 1e-3, DataSource::Import);
    assert_eq!(main_datapath(&k), None);
    k.complexity = Some(crate::bundle::Complexity {
        flops: 1e9,
        bytes: 1e6,
        datapath: Some(Datapath::TensorBf16),
    });
    assert_eq!(main_datapath(&k), Some(Datapath::TensorBf16));
    k.flops.fp32 = Some(5e8);
    assert_eq!(main_datapath(&k), Some(Datapath::Fp32));
}

/// A speed-up beyond what a double holds is unknown, never `inf`: 1e300 s against 1e-300 s.
#[test]
fn a_speedup_beyond_a_double_is_unknown() {
    assert_eq!(ratio(2.0, 1.0), Some(2.0));
    assert_eq!(ratio(1e300, 1e-300), None);
    assert_eq!(ratio(0.0, 1.0), None);
    assert_eq!(ratio(1.0, 0.0), None);
    assert_eq!(ratio(1e-320, 1e300), None);
}

/// A device of one run only, compared per operator: the side without entries is read as the
/// other is (no note that one run is per kernel, the rows headed by operators).
#[test]
fn a_device_of_one_run_only_keeps_the_other_runs_grouping() {
    use crate::analysis::group::{GroupBy, group};
    let (cur, _) = op_pair();
    let empty = run(Vec::new());
    for c in [
        compare(&run(group(&cur, GroupBy::Operator)), &empty),
        compare(&empty, &run(group(&cur, GroupBy::Operator))),
    ] {
        assert_eq!(c.summary.unit, GroupBy::Operator);
        assert_eq!(c.summary.note, None);
        assert!(c.rows.iter().any(|r| r.name == "aten::mm"));
    }
}
