//! Tests of the three charts on a small hand-made bundle.

use super::*;
use crate::bundle::{
    BandwidthCeiling, Bundle, ComputeCeiling, DataSource, Device, LaunchOverhead, Machine, Method,
    Provenance,
};

fn bundle() -> Bundle {
    let mut b = Bundle::new(Provenance::default());
    b.devices.push(Device::new("0", "test GPU"));
    let bw = |level, value| BandwidthCeiling::new(level, value, Method::Empirical);
    let fp32 = ComputeCeiling::new(Datapath::Fp32, 50e12, Method::Empirical);
    b.machines.push(Machine {
        device: "0".into(),
        bandwidth: vec![bw(MemoryLevel::L2, 10e12), bw(MemoryLevel::Hbm, 2e12)],
        compute: vec![fp32],
        launch_overhead: Some(LaunchOverhead::new(4e-6, Method::Empirical)),
        sweep: vec![],
        ..Machine::default()
    });
    // 1 GFLOP, 100 MB at HBM, 200 MB at L2, 1 ms: AI_HBM = 10, AI_L2 = 5, 1 TFLOP/s.
    let mut k = Kernel::new("void gemm<float>(float*)", 1e-3, DataSource::Suite);
    k.flops.fp32 = Some(1e9);
    k.bytes.l2 = Some(2e8);
    k.bytes.hbm = Some(1e8);
    b.kernels.push(k);
    b
}

fn close(a: (f64, f64), b: (f64, f64)) -> bool {
    (a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-6
}

#[test]
fn one_analysis_feeds_both_charts_and_the_table() {
    let mut b = bundle();
    let mut k = Kernel::new("void copy<float>(float*)", 3e-3, DataSource::Suite);
    k.flops.fp32 = Some(1e6);
    k.bytes.hbm = Some(4e9);
    b.kernels.push(k.clone());
    b.kernels.push(k);
    let o = ChartOptions::default();
    let a = Analysed::new(&b, None, None);
    assert_eq!(a.kernels.len(), 2, "launches are aggregated by name");
    assert_eq!(a.kernels[a.top[0].index].name, "void copy<float>(float*)");
    assert_eq!(hierarchical_of(&a, &o), hierarchical(&b, &o));
    assert_eq!(time_based_of(&a, &o), time_based(&b, &o));
    assert_eq!(
        a.report(),
        crate::analysis::report::Report::with_ceilings(&b, Some(&a.ceilings))
    );
    // A filter keeps the kernel's figures, its share of the whole included.
    let only = a.retain(|k| k.name.contains("gemm"));
    assert_eq!(only.top.len(), 1);
    assert_eq!(only.kernels.len(), 1);
    assert_eq!(only.top[0].index, 0);
    let whole = a
        .top
        .iter()
        .find(|x| a.kernels[x.index].name.contains("gemm"));
    assert_eq!(
        only.top[0],
        KernelAnalysis {
            index: 0,
            ..whole.unwrap().clone()
        }
    );
    assert!((only.top[0].share_of_time - 1.0 / 7.0).abs() < 1e-12);
}

#[test]
fn hierarchical_markers_sit_at_their_intensities_and_invert() {
    let s = hierarchical(&bundle(), &ChartOptions::default()).unwrap();
    assert_eq!(s.kernels.len(), 1);
    assert_eq!(s.kernels[0].name, "gemm");
    let hbm = s
        .markers
        .iter()
        .find(|m| m.kind == MarkerKind::Level(MemoryLevel::Hbm))
        .unwrap();
    assert_eq!(hbm.data, (10.0, 1e12));
    assert!(close(hbm.at, s.viewport.project((10.0, 1e12))));
    let back = s.viewport.invert(hbm.at);
    assert!((back.0 / 10.0 - 1.0).abs() < 1e-9 && (back.1 / 1e12 - 1.0).abs() < 1e-9);
    // Both levels are drawn and joined.
    assert_eq!(s.markers.len(), 2);
    assert!(
        s.lines
            .iter()
            .any(|l| l.role == LineRole::KernelLink { kernel: 0 })
    );
}

#[test]
fn hierarchical_ceilings_meet_the_roof_at_the_ridge() {
    let s = hierarchical(&bundle(), &ChartOptions::default()).unwrap();
    let hbm = s
        .lines
        .iter()
        .find(|l| l.role == LineRole::Bandwidth(MemoryLevel::Hbm))
        .unwrap();
    let end = *hbm.points.last().unwrap();
    // The HBM diagonal ends where it meets the FP32 roof: AI = 50e12 / 2e12 = 25.
    assert!(close(end, s.viewport.project((25.0, 50e12))), "{end:?}");
    let roof = s
        .lines
        .iter()
        .find(|l| l.role == LineRole::Compute(Datapath::Fp32))
        .unwrap();
    // The roof starts at the ridge with the highest bandwidth (L2: 50/10 = 5) and runs to
    // the right edge of the plot.
    assert!(close(roof.points[0], s.viewport.project((5.0, 50e12))));
    assert!((roof.points.last().unwrap().0 - s.viewport.area.right()).abs() < 1e-6);
    // Everything drawn stays inside the plot area.
    for l in &s.lines {
        for p in &l.points {
            assert!(
                p.0 >= s.viewport.area.x - 1e-6 && p.0 <= s.viewport.area.right() + 1e-6,
                "{l:?}"
            );
        }
    }
    assert!(s.labels.iter().any(|l| l.text == "HBM 2 TB/s"));
    assert!(s.labels.iter().any(|l| l.text == "FP32 50 TFLOP/s"));
    assert!(s.notes.iter().any(|n| n == "binding ceilings: 1 HBM"));
}

#[test]
fn time_based_vertex_and_launch_box() {
    let s = time_based(&bundle(), &ChartOptions::default()).unwrap();
    let point = s
        .markers
        .iter()
        .find(|m| m.kind == MarkerKind::Complexity)
        .unwrap();
    assert_eq!(point.data, (1e8, 1e9));
    let vertex = s
        .markers
        .iter()
        .find(|m| m.kind == MarkerKind::TimeVertex)
        .unwrap();
    // AI = 10 < balance 25: bandwidth side, B* = T × BW = 2e9, F* = B* × AI = 2e10.
    assert!((vertex.data.0 / 2e9 - 1.0).abs() < 1e-12);
    assert!((vertex.data.1 / 2e10 - 1.0).abs() < 1e-12);
    let lb = s
        .lines
        .iter()
        .find(|l| l.role == LineRole::LaunchBox { launches: 1 })
        .unwrap();
    // The box's corner is (n t BW, n t P) = (8e6, 2e8).
    assert!(
        lb.points
            .iter()
            .any(|p| close(*p, s.viewport.project((8e6, 2e8))))
    );
    assert!(s.labels.iter().any(|l| l.text == "FP32 balance 25 FLOP/B"));
}

#[test]
fn a_domain_override_zooms() {
    let o = ChartOptions {
        domain: Some(((1.0, 100.0), (1e11, 1e14))),
        ..ChartOptions::default()
    };
    let s = hierarchical(&bundle(), &o).unwrap();
    assert_eq!(s.viewport.x.domain(), (1.0, 100.0));
    assert_eq!(s.viewport.y.domain(), (1e11, 1e14));
    // The kernel at AI_HBM = 10, 1 TFLOP/s is inside and still where the scales put it.
    let m = s.markers.iter().find(|m| m.data == (10.0, 1e12)).unwrap();
    assert!(close(m.at, s.viewport.project((10.0, 1e12))));
}

#[test]
fn nothing_to_plot_is_an_error_not_a_panic() {
    let mut b = bundle();
    b.machines.clear();
    b.kernels.clear();
    assert!(hierarchical(&b, &ChartOptions::default()).is_err());
    assert!(time_based(&b, &ChartOptions::default()).is_err());
    // Ceilings alone still make a chart.
    let mut c = bundle();
    c.kernels.clear();
    assert!(hierarchical(&c, &ChartOptions::default()).is_ok());
    assert!(time_based(&c, &ChartOptions::default()).is_ok());
}

/// A trace imported without counters or a machine (F, B and a time, no bytes per level) opens
/// on the time-based chart: the hierarchical one would have nothing, and says so.
#[test]
fn a_bundle_with_only_complexity_prefers_the_time_based_chart() {
    use crate::bundle::Complexity;
    let levels = MemoryLevel::KERNEL_LEVELS.to_vec();
    let prefers = |b: &Bundle| prefers_time_based(&Analysed::new(b, None, None), &levels);
    let mut trace = bundle();
    trace.machines.clear();
    let k = &mut trace.kernels[0];
    k.bytes = Default::default();
    k.complexity = Some(Complexity {
        flops: 1e9,
        bytes: 1e8,
        datapath: None,
    });
    assert!(prefers(&trace));
    assert!(hierarchical(&trace, &ChartOptions::default()).is_err());
    assert!(time_based(&trace, &ChartOptions::default()).is_ok());
    // A machine, counters, or nothing at all: the hierarchical chart stays the default.
    assert!(!prefers(&bundle()));
    let mut counted = trace.clone();
    counted.kernels[0].bytes.hbm = Some(1e8);
    assert!(!prefers(&counted));
    let mut empty = trace;
    empty.kernels.clear();
    assert!(!prefers(&empty));
}

#[test]
fn sweep_draws_one_line_per_working_set() {
    let mut b = bundle();
    // Test input, not a measurement: two working sets, three intensities each.
    for (ws, bw) in [(1e6_f64, 8e12_f64), (1e9, 2e12)] {
        for fpe in [1.0, 8.0, 64.0] {
            let bytes = ws * 10.0;
            let flops = fpe * bytes / 4.0;
            let time = (bytes / bw).max(flops / 50e12);
            b.machines[0].sweep.push(crate::bundle::SweepPoint {
                datapath: Datapath::Fp32,
                working_set_bytes: ws,
                flops_per_element: fpe,
                flops,
                bytes,
                time_s: time,
            });
        }
    }
    let s = sweep(&b, &ChartOptions::default()).unwrap();
    let series: Vec<_> = s
        .lines
        .iter()
        .filter(|l| matches!(l.role, LineRole::Sweep { .. }))
        .collect();
    assert_eq!(series.len(), 2);
    assert_eq!(series[0].points.len(), 3);
    // The large working set's low-intensity point sits at 2 TB/s × 0.25 FLOP/B.
    let p = series[1].points[0];
    let (x, y) = s.viewport.invert(p);
    assert!(
        (x / 0.25 - 1.0).abs() < 1e-9 && (y / 0.5e12 - 1.0).abs() < 1e-9,
        "{x} {y}"
    );
    assert!(s.labels.iter().any(|l| l.text == "1 GB"));
    let mut empty = bundle();
    empty.machines[0].sweep.clear();
    assert!(sweep(&empty, &ChartOptions::default()).is_err());
}

#[test]
fn the_sweep_chart_without_a_sweep_says_so() {
    let e = sweep(&bundle(), &ChartOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("this bundle has a machine characterization for device 0 without a sweep"),
        "{e}"
    );
    let mut none = bundle();
    none.machines.clear();
    let e = sweep(&none, &ChartOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("this bundle has no machine characterization;"),
        "{e}"
    );
}

#[test]
fn kernels_beyond_a_double_are_kept_off_the_charts_with_a_note() {
    let mut b = bundle();
    let mut k = Kernel::new("void huge<1>()", 1e-300, DataSource::Suite);
    k.flops.fp32 = Some(1e308);
    k.bytes.l2 = Some(1.0);
    k.bytes.hbm = Some(1.0);
    b.kernels.push(k);
    crate::validate(&b).unwrap();
    for scene in [
        hierarchical(&b, &ChartOptions::default()).unwrap(),
        time_based(&b, &ChartOptions::default()).unwrap(),
    ] {
        assert_eq!(scene.kernels.len(), 1, "only gemm is drawn");
        assert_eq!(scene.kernels[0].name, "gemm");
        let finite = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite();
        assert!(scene.markers.iter().all(|m| finite(&m.at)));
        assert!(scene.lines.iter().all(|l| l.points.iter().all(finite)));
        assert!(scene.labels.iter().all(|l| finite(&l.at)));
        assert!(
            scene.notes.iter().any(
                |n| n.starts_with("1 kernel out of range, kept off the charts")
                    && n.ends_with(": huge")
            ),
            "{:?}",
            scene.notes
        );
    }
}

#[test]
fn a_ceiling_label_moves_off_a_marker_on_its_place() {
    let mut b = bundle();
    // A kernel just under the FP32 roof near its right end, where the roof's label would go.
    let mut k = Kernel::new("void near_roof()", 1e-3, DataSource::Suite);
    k.flops.fp32 = Some(4.6e10);
    k.bytes.l2 = Some(2.3e7);
    k.bytes.hbm = Some(4.6e7);
    b.kernels.push(k);
    let s = hierarchical(&b, &ChartOptions::default()).unwrap();
    let roof = s
        .lines
        .iter()
        .find(|l| l.role == LineRole::Compute(Datapath::Fp32))
        .unwrap();
    let end = *roof.points.last().unwrap();
    let usual = Label {
        text: "FP32 50 TFLOP/s".into(),
        at: (end.0 - 4.0, end.1 - 5.0),
        direction: Label::LEVEL,
        anchor: Anchor::End,
        role: roof.role,
    };
    let covered = s
        .markers
        .iter()
        .any(|m| usual.overlaps_box(marker_box(m.at, m.radius)));
    assert!(covered, "the test kernel should sit on the usual place");
    let placed = s.labels.iter().find(|l| l.text == usual.text).unwrap();
    assert_ne!(placed.at, usual.at);
    for l in &s.labels {
        for m in &s.markers {
            assert!(
                !l.overlaps_box(marker_box(m.at, m.radius)),
                "{} on a marker",
                l.text
            );
        }
    }
    // Still along the roof: horizontal, just above or below it.
    assert_eq!(placed.angle_deg(), 0.0);
    assert!((placed.at.1 - end.1).abs() < 20.0, "{:?}", placed.at);
}

#[test]
fn a_new_analysis_of_the_same_kernels_adopts_the_display_names() {
    let b = colliding_names();
    let first = Analysed::new(&b, None, None);
    let other = Analysed::new(&b, None, None);
    // Nothing to take before the first analysis has computed its names.
    assert!(!other.adopt_names(&first));
    let names = first.display_names().to_vec();
    assert_eq!(names.len(), 2);
    assert_ne!(names[0], names[1]);
    // Other ceilings, same kernels: the names are taken, and equal a fresh computation.
    let swapped = hbm_only(1e12);
    let a = Analysed::new(&b, None, Some(&swapped));
    assert!(a.adopt_names(&first));
    assert_eq!(a.display_names(), names.as_slice());
    assert_eq!(
        Analysed::new(&b, None, Some(&swapped)).display_names(),
        names.as_slice()
    );
    // Other kernels: refused, and computed from their own kernels.
    let fewer = first.retain(|k| k.name.contains("float"));
    assert!(!fewer.adopt_names(&first));
    assert_eq!(fewer.display_names().len(), 1);
}

#[test]
fn an_analysis_against_other_ceilings_equals_a_new_one_and_shares_the_kernels() {
    let b = colliding_names();
    let first = Analysed::new(&b, None, None);
    let names = first.display_names().to_vec();
    // A slower HBM: the bounds and floors change with it.
    let slow = hbm_only(1e9);
    let swapped = first.against(slow.clone());
    let fresh = Analysed::new(&b, None, Some(&slow));
    assert_eq!(swapped.top, fresh.top);
    assert_ne!(swapped.top, first.top);
    assert_eq!(swapped.ceilings, fresh.ceilings);
    assert_eq!(
        (&swapped.device, &swapped.device_name, swapped.complete),
        (&fresh.device, &fresh.device_name, fresh.complete)
    );
    assert_eq!(*swapped.kernels, *fresh.kernels);
    // Shared, not copied: the kernels and the names computed once.
    assert!(std::sync::Arc::ptr_eq(&swapped.kernels, &first.kernels));
    assert_eq!(swapped.display_names(), names.as_slice());
    assert_eq!(fresh.display_names(), names.as_slice());
}

#[test]
fn an_analysis_knows_whether_it_is_against_the_bundles_own_machine() {
    let b = bundle();
    let own = Analysed::new(&b, None, None);
    assert!(own.is_own_analysis_of(&b));
    // The same ceilings named explicitly are still its own.
    let same = own.against(own.ceilings.clone());
    assert!(same.is_own_analysis_of(&b));
    // Other ceilings are not.
    let mut faster = own.ceilings.clone();
    let mut hbm = faster
        .bandwidth_ceiling(MemoryLevel::Hbm)
        .expect("the test machine has an HBM ceiling");
    hbm.value *= 2.0;
    faster.set_bandwidth(MemoryLevel::Hbm, Some(hbm));
    assert!(!own.against(faster).is_own_analysis_of(&b));
}

/// Ceilings of a machine with an HBM bandwidth of `bw` byte/s and nothing else.
fn hbm_only(bw: f64) -> Ceilings {
    Ceilings::from_machine(&Machine {
        device: "0".into(),
        bandwidth: vec![BandwidthCeiling::new(
            MemoryLevel::Hbm,
            bw,
            Method::Empirical,
        )],
        compute: vec![],
        launch_overhead: None,
        sweep: vec![],
        ..Machine::default()
    })
}

/// The test bundle with a second kernel whose short name collides with the first's, so that
/// the display names are told apart.
fn colliding_names() -> Bundle {
    let mut b = bundle();
    b.kernels.push(Kernel::new(
        "void gemm<double>(double*)",
        2e-3,
        DataSource::Suite,
    ));
    b
}

/// The sample bundles the viewer lists (the fixtures `cargo xtask web` copies beside it).
pub(crate) fn samples() -> Vec<(&'static str, Bundle)> {
    [
        (
            "v100-deepcam-example",
            include_str!("../../../tests/fixtures/bundles/v100-deepcam-example.json"),
        ),
        (
            "deepcam-v100-amp-fw",
            include_str!("../../../tests/fixtures/bundles/deepcam-v100-amp-fw.json"),
        ),
        (
            "deepcam-v100-fp32-fw",
            include_str!("../../../tests/fixtures/bundles/deepcam-v100-fp32-fw.json"),
        ),
        (
            "deepcam-v100-amp-bw",
            include_str!("../../../tests/fixtures/bundles/deepcam-v100-amp-bw.json"),
        ),
        (
            "deepcam-v100-fp32-bw",
            include_str!("../../../tests/fixtures/bundles/deepcam-v100-fp32-bw.json"),
        ),
    ]
    .into_iter()
    .map(|(n, t)| (n, crate::parse_bundle(t).unwrap()))
    .collect()
}

/// What a scene's labels sit on: for each label (ceiling labels, then `names`), the ceiling
/// lines it crosses, the markers it covers and the labels it overlaps, in words.
pub(crate) fn collisions(scene: &Scene, names: &[Label]) -> Vec<String> {
    let segments = label::ceiling_segments(&scene.lines);
    let all: Vec<&Label> = scene.labels.iter().chain(names).collect();
    let mut bad = Vec::new();
    for (i, l) in all.iter().enumerate() {
        if segments.iter().any(|s| l.crosses(*s)) {
            bad.push(format!("{} on a ceiling line", l.text));
        }
        if scene
            .markers
            .iter()
            .any(|m| l.overlaps_box(marker_box(m.at, m.radius)))
        {
            bad.push(format!("{} on a marker", l.text));
        }
        for o in &all[i + 1..] {
            if l.overlaps(o) {
                bad.push(format!("{} on {}", l.text, o.text));
            }
        }
    }
    bad
}

/// Every sample, both charts, at the CLI's size, the viewer's and a narrow and a wide page's:
/// no label (ceiling or kernel name) sits on a ceiling line, a marker or another label; what
/// finds no place is said in a note instead, and on a page 1280 pixels wide (the browser
/// tests') or wider every ceiling is named on the chart.
#[test]
fn no_label_sits_on_a_ceiling_line_a_marker_or_a_label() {
    for (name, b) in samples() {
        for o in [
            ChartOptions::default(),
            ChartOptions::browser(),
            ChartOptions::browser_sized(468.0),
            ChartOptions::browser_sized(1233.0),
            ChartOptions::browser_sized(1368.0),
        ] {
            for scene in [hierarchical(&b, &o).unwrap(), time_based(&b, &o).unwrap()] {
                let names = kernel_labels(&scene, names_for_width(20, scene.width));
                let bad = collisions(&scene, &names);
                assert!(
                    bad.is_empty(),
                    "{name} {} {}: {bad:?}",
                    scene.title,
                    o.width
                );
                let ceilings = scene.label_candidates.iter().filter(|c| c.required).count();
                let placed = scene
                    .labels
                    .iter()
                    .filter(|l| !matches!(l.role, LineRole::LaunchBox { .. }))
                    .count();
                if placed < ceilings {
                    assert!(
                        scene
                            .notes
                            .iter()
                            .any(|n| n.starts_with(label::CROWDED_NOTE)),
                        "{name}: a ceiling label left out without a note"
                    );
                }
                if o.width >= 1200.0 {
                    assert_eq!(placed, ceilings, "{name} {} {}", scene.title, o.width);
                }
            }
        }
    }
}

/// The hovered kernel's path ends on its binding ceiling: straight up from its HBM point to
/// BW × AI for a bandwidth-bound kernel.
#[test]
fn the_bound_path_ends_on_the_binding_ceiling() {
    let s = hierarchical(&bundle(), &ChartOptions::default()).unwrap();
    let k = &s.kernels[0];
    let p = k.bound_path.as_ref().unwrap();
    // HBM-bound at AI 10: attainable 2 TB/s × 10 = 20 TFLOP/s, achieved 1 TFLOP/s.
    assert!(close(p.from, s.viewport.project((10.0, 1e12))));
    assert!(close(p.to, s.viewport.project((10.0, 20e12))));
    assert_eq!(
        p.text,
        "bound by HBM: 20 TFLOP/s attainable, 20.00× headroom"
    );
    // The HBM diagonal passes through the path's end.
    let hbm = s
        .lines
        .iter()
        .find(|l| l.role == LineRole::Bandwidth(MemoryLevel::Hbm))
        .unwrap();
    let (a, b) = (hbm.points[0], *hbm.points.last().unwrap());
    let cross = (b.0 - a.0) * (p.to.1 - a.1) - (b.1 - a.1) * (p.to.0 - a.0);
    assert!(cross.abs() / (b.0 - a.0).hypot(b.1 - a.1) < 1e-6);
    // On the time-based chart: from the complexity point to the time vertex.
    let t = time_based(&bundle(), &ChartOptions::default()).unwrap();
    let p = t.kernels[0].bound_path.as_ref().unwrap();
    let vertex = t
        .markers
        .iter()
        .find(|m| m.kind == MarkerKind::TimeVertex)
        .unwrap();
    assert!(close(p.to, vertex.at));
    assert!(
        p.text.starts_with("bound by HBM (bandwidth region)"),
        "{}",
        p.text
    );
}

/// Every colour a line or a label is drawn in reads against the chart's background at WCAG
/// AA's 4.5:1, in the light theme and in the dark one.
#[test]
fn every_colour_reads_against_its_background_in_both_themes() {
    use crate::bundle::Datapath;
    let mut inks: Vec<&str> = vec![
        style::TEXT,
        style::LABEL,
        style::AXIS,
        style::ARROW,
        style::MUTED,
    ];
    inks.extend(MemoryLevel::ALL.map(style::level));
    inks.extend(Datapath::ALL.map(style::datapath));
    inks.push(style::line(LineRole::LaunchBox { launches: 1 }));
    for ink in inks {
        let light = style::contrast(ink, style::BACKGROUND).unwrap();
        assert!(light >= 4.5, "{ink}: {light:.2}:1 on {}", style::BACKGROUND);
        let dark = style::dark(ink);
        assert_ne!(dark, ink, "{ink} has no dark counterpart");
        let on_dark = style::contrast(dark, style::DARK_BACKGROUND).unwrap();
        assert!(
            on_dark >= 4.5,
            "{ink} → {dark}: {on_dark:.2}:1 on {}",
            style::DARK_BACKGROUND
        );
    }
    // WCAG's own figures: black on white 21:1, the same colour 1:1.
    assert!((style::contrast("#000000", "#ffffff").unwrap() - 21.0).abs() < 1e-9);
    assert!((style::contrast("#767676", "#767676").unwrap() - 1.0).abs() < 1e-12);
    assert_eq!(style::contrast("red", "#ffffff"), None);
    let css = style::dark_css(".dark");
    assert!(
        css.contains(r##".dark [stroke="#000000" i] { stroke: #F2F2F2; }"##),
        "{css}"
    );
}

#[test]
fn a_narrow_chart_names_fewer_kernels_and_keeps_its_pixel_size() {
    assert_eq!(names_for_width(8, 900.0), 8);
    assert_eq!(names_for_width(8, 468.0), 4);
    assert_eq!(names_for_width(20, 1368.0), 12);
    assert_eq!(names_for_width(0, 1368.0), 0);
    let o = ChartOptions::browser_sized(468.4);
    assert_eq!((o.width, o.height), (468.0, 420.0));
    let o = ChartOptions::browser_sized(1368.0);
    assert_eq!((o.width, o.height), (1368.0, 640.0));
    assert_eq!(ChartOptions::browser_sized(900.0).height, 558.0);
    assert_eq!(ChartOptions::browser_sized(100.0).width, MIN_WIDTH);
    let label = |text: &str| Label {
        text: text.into(),
        at: (0.0, 0.0),
        direction: Label::LEVEL,
        anchor: Anchor::Start,
        role: LineRole::KernelLink { kernel: 0 },
    };
    assert_eq!(
        kernel_labels_note(&[label("gemm"), label("sgemm_128x64")]),
        None
    );
    assert!(
        kernel_labels_note(&[label("elementwise_kernel #3")])
            .unwrap()
            .contains("rank by time")
    );
}

/// A datasheet machine (the GPU catalogue's, for a trace) says so on both charts: each
/// ceiling's label names its source, a note names the product, and an estimated launch
/// overhead is labelled as such.
#[test]
fn datasheet_ceilings_are_labelled_on_the_charts() {
    use crate::bundle::{FigureSource, MachineOrigin, OriginKind, SourceKind};
    let mut b = bundle();
    let sheet = |kind| {
        Some(FigureSource {
            kind,
            citation: "a datasheet".into(),
        })
    };
    let m = &mut b.machines[0];
    for c in &mut m.bandwidth {
        c.method = Method::Theoretical;
        c.source = sheet(SourceKind::Datasheet);
    }
    m.bandwidth[0].source = sheet(SourceKind::Derived);
    m.compute[0].method = Method::Theoretical;
    m.compute[0].source = sheet(SourceKind::Datasheet);
    let mut launch = LaunchOverhead::new(5e-6, Method::Empirical);
    launch.source = sheet(SourceKind::Estimated);
    m.launch_overhead = Some(launch);
    m.origin = Some(MachineOrigin {
        kind: OriginKind::Datasheet,
        product: Some("NVIDIA H100 SXM5 80GB".into()),
        catalogue_id: Some("nvidia-h100-sxm5".into()),
        chosen: None,
    });
    let o = ChartOptions::default();
    let h = hierarchical(&b, &o).unwrap();
    let texts: Vec<&str> = h.labels.iter().map(|l| l.text.as_str()).collect();
    assert!(texts.contains(&"HBM 2 TB/s (datasheet)"), "{texts:?}");
    assert!(texts.contains(&"L2 10 TB/s (derived)"), "{texts:?}");
    assert!(texts.contains(&"FP32 50 TFLOP/s (datasheet)"), "{texts:?}");
    let note = "ceilings: NVIDIA H100 SXM5 80GB, datasheet, not measured";
    assert!(h.notes.iter().any(|n| n == note), "{:?}", h.notes);
    let t = time_based(&b, &o).unwrap();
    assert!(t.notes.iter().any(|n| n == note), "{:?}", t.notes);
    assert!(
        t.notes
            .iter()
            .any(|n| n == "t_launch 5 µs: estimated from the trace's kernel launch calls"),
        "{:?}",
        t.notes
    );
}

/// An operator's hover summary gives its calls and one call's F and B.
#[test]
fn an_operators_summary_gives_its_calls_and_per_call_figures() {
    use crate::analysis::group::{GroupBy, regroup};
    use crate::bundle::{Complexity, OperatorCall};
    let mut b = bundle();
    b.kernels.clear();
    for call in [1, 2] {
        for name in ["wgrad", "dgrad"] {
            let mut k = Kernel::new(name, 1e-3, DataSource::Import);
            k.operator = Some(OperatorCall {
                name: "aten::convolution_backward".into(),
                call,
                kernels: 2,
                shapes: None,
                complexity: Some(Complexity::new(6e9, 3e6)),
                rule: None,
            });
            b.kernels.push(k);
        }
    }
    regroup(&mut b, GroupBy::Operator);
    let t = time_based(&b, &ChartOptions::default()).unwrap();
    let s = &t.kernels[0].summary;
    assert!(
        s.starts_with("4 ms in 4 launches (100.0% of time), 2 calls, 6 GFLOP, 3 MB per call"),
        "{s}"
    );
}

/// A kernel with no arithmetic (F = 0, a copy) is drawn in the band along the bottom at its B,
/// never at a made-up F; the notes give the shares drawn at (B, F), in the band and not at all.
#[test]
fn kernels_with_no_arithmetic_are_drawn_in_the_f0_band() {
    use crate::bundle::Complexity;
    let mut b = bundle();
    b.kernels[0].complexity = Some(Complexity::new(1e9, 1e8));
    let mut copy = Kernel::new("copy", 1e-3, DataSource::Import);
    copy.complexity = Some(Complexity::new(0.0, 4e8));
    b.kernels.push(copy);
    let mut unknown = Kernel::new("custom_op_kernel", 2e-3, DataSource::Import);
    unknown.complexity = None;
    b.kernels.push(unknown);
    let s = time_based(&b, &ChartOptions::default()).unwrap();
    let copy_at = s
        .markers
        .iter()
        .find(|m| s.kernels[m.kernel].full_name == "copy")
        .unwrap();
    assert_eq!(copy_at.data, (4e8, 0.0));
    assert_eq!(copy_at.kind, MarkerKind::Complexity);
    let area = s.viewport.area;
    assert!((copy_at.at.1 - (area.bottom() - 9.0)).abs() < 1e-9);
    assert!((copy_at.at.0 - s.viewport.x.project(4e8)).abs() < 1e-9);
    // No time vertex for it, and no kernel of F above zero in the band.
    assert_eq!(
        s.markers
            .iter()
            .filter(|m| s.kernels[m.kernel].full_name == "copy")
            .count(),
        1
    );
    let gemm = s
        .markers
        .iter()
        .find(|m| m.kind == MarkerKind::Complexity && m.data.1 > 0.0)
        .unwrap();
    assert!(gemm.at.1 < area.bottom() - 18.0);
    let band = s
        .lines
        .iter()
        .find(|l| l.role == LineRole::ZeroBand)
        .unwrap();
    assert!(band.dashed);
    assert!(s.legend.iter().any(|e| e.role == LegendRole::ZeroBand));
    // 1 ms at (B, F), 1 ms in the band, 2 ms without F: 25 %, 25 %, 50 %.
    assert!(
        s.notes.iter().any(|n| n
            == "kernel time drawn: 25.0% at (B, F), 25.0% in the F = 0 band (no arithmetic); 50.0% not drawn (no F or B, or not among the kernels plotted)"),
        "{:?}",
        s.notes
    );
}
