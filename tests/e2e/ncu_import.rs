//! Importing the 2020 study's own Nsight Compute outputs reproduces its per-kernel table.
//!
//! `fixtures/ncu/nersc-v100-deepcam/` holds the twelve raw one-metric outputs of the study's
//! DeepCAM run on a V100 (details page, the program's log before each table); the study's table
//! is `fixtures/reference/nersc-v100-deepcam/expected-per-kernel.csv`. With the 2020 convention
//! and the Volta metric rules, every kernel's launch count, time, intensities and GFLOP/s (the
//! study divides by 2^30) must match to 1e-6.

use roofline_model::analysis::analyze;
use roofline_model::bundle::{Bundle, DataSource, Provenance};
use roofline_model::ncu::{self, Arch, Convention, ImportOptions};
use roofline_tests::{StudyTable, fixtures};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const REL: f64 = 1e-6;

fn captures() -> Vec<(String, ncu::Capture)> {
    let dir = fixtures().join("ncu/nersc-v100-deepcam");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 12, "the study collected twelve metrics");
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).unwrap();
            let cap = ncu::parse_capture(&text, &name).unwrap_or_else(|e| panic!("{e}"));
            (name, cap)
        })
        .collect()
}

fn close(ours: f64, theirs: f64) -> bool {
    if theirs == 0.0 {
        ours == 0.0
    } else {
        ((ours - theirs) / theirs).abs() < REL
    }
}

#[test]
fn every_capture_has_all_797_launches() {
    for (name, cap) in captures() {
        assert_eq!(cap.launches.len(), 797, "{name}");
        assert_eq!(cap.metric_names.len(), 1, "{name}: one metric per run");
        assert!(
            cap.skipped_lines.is_empty(),
            "{name}: {:?}",
            cap.skipped_lines
        );
    }
}

#[test]
fn the_2020_convention_reproduces_the_studys_table() {
    let launches = ncu::join(captures()).unwrap();
    assert_eq!(launches.len(), 797);
    let imported = ncu::to_kernels(
        &launches,
        &ImportOptions {
            convention: Convention::Study2020,
            arch: Some(Arch::Volta),
            source: DataSource::Import,
        },
    )
    .unwrap();
    let mut bundle = Bundle::new(Provenance::default());
    bundle.kernels = imported.kernels;
    roofline_model::validate(&bundle).unwrap();
    let analyses = analyze(&bundle, &bundle.kernels);

    let table = StudyTable::load();
    assert_eq!(
        bundle.kernels.len(),
        table.rows.len(),
        "one kernel per row of the study's table"
    );
    let mut checked = 0;
    for (k, a) in bundle.kernels.iter().zip(&analyses) {
        let row = table.row(&k.name);
        let name = &k.name;
        #[allow(clippy::cast_precision_loss)]
        let launches = k.launches as f64;
        assert_eq!(launches, table.num(row, "Count"), "{name}: launches");
        let time = table.num(row, "Time");
        assert!(
            close(k.time.total_s, time),
            "{name}: time {} vs {time}",
            k.time.total_s
        );
        assert!(
            close(a.flops, table.num(row, "all FLOPs")),
            "{name}: FLOPs {} vs {}",
            a.flops,
            table.num(row, "all FLOPs")
        );
        for (i, column) in ["AI L1", "AI L2", "AI HBM"].into_iter().enumerate() {
            let theirs = table.num(row, column);
            // A kernel without FLOPs has intensity 0 in the study's table and 0 here.
            let ours = a.ai[i].unwrap_or(0.0);
            assert!(close(ours, theirs), "{name}: {column} {ours} vs {theirs}");
        }
        let gflops = a.flop_per_s.unwrap_or(0.0) / GIB;
        assert!(
            close(gflops, table.num(row, "GFLOP/s")),
            "{name}: GFLOP/s {gflops} vs {}",
            table.num(row, "GFLOP/s")
        );
        checked += 1;
    }
    assert_eq!(checked, 45);
    assert!(
        imported.notes.iter().any(|n| n.contains("Volta HMMA.884")),
        "{:?}",
        imported.notes
    );
}

#[test]
fn the_current_convention_counts_half2_twice_and_keeps_launches() {
    let launches = ncu::join(captures()).unwrap();
    let opts = |convention| ImportOptions {
        convention,
        arch: Some(Arch::Volta),
        source: DataSource::Import,
    };
    let current = ncu::to_kernels(&launches, &opts(Convention::Current)).unwrap();
    let study = ncu::to_kernels(&launches, &opts(Convention::Study2020)).unwrap();
    assert_eq!(current.kernels.len(), 797, "one kernel entry per launch");
    let fp16 = |ks: &[roofline_model::bundle::Kernel]| -> f64 {
        ks.iter().filter_map(|k| k.flops.fp16).sum()
    };
    // This run has hadd and hmul but no hfma, so every half-precision FLOP doubles.
    assert!(fp16(&study.kernels) > 0.0);
    assert!(close(fp16(&current.kernels), 2.0 * fp16(&study.kernels)));
    // Launch times summed per name differ from the study's mean-clock rule by under 0.6%.
    let agg = roofline_model::aggregate::aggregate_by_name(&current.kernels);
    for k in &agg {
        let s = study.kernels.iter().find(|x| x.name == k.name).unwrap();
        let rel = (k.time.total_s - s.time.total_s).abs() / s.time.total_s;
        assert!(rel < 0.006, "{}: {rel}", k.name);
    }
}

#[test]
fn without_the_architecture_volta_tensor_counts_are_not_guessed() {
    let launches = ncu::join(captures()).unwrap();
    let imported = ncu::to_kernels(
        &launches,
        &ImportOptions {
            convention: Convention::Study2020,
            arch: None,
            source: DataSource::Import,
        },
    )
    .unwrap();
    assert!(
        imported
            .kernels
            .iter()
            .all(|k| k.flops.tensor_fp16.is_none())
    );
    assert!(
        imported
            .notes
            .iter()
            .any(|n| n.contains("used on Volta only"))
    );
}
