//! Importing the 2020 study's own Nsight Compute outputs reproduces its per-kernel table.
//!
//! `fixtures/ncu/nersc-v100-deepcam/` holds the twelve raw one-metric outputs of the study's
//! DeepCAM run on a V100 (details page, the program's log before each table); the study's table
//! is `fixtures/reference/nersc-v100-deepcam/expected-per-kernel.csv`. With the 2020 convention
//! and the Volta metric rules, every kernel's launch count, time, intensities and GFLOP/s (the
//! study divides by 2^30) must match to 1e-6.

use roofline_import::ncu::{self, Arch, Convention, ImportOptions};
use roofline_model::analysis::analyze;
use roofline_model::bundle::{Bundle, DataSource, Provenance};
use roofline_tests::{StudyTable, fixtures};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const REL: f64 = 1e-6;

fn captures() -> Vec<(String, ncu::Capture)> {
    static PARSED: std::sync::OnceLock<Vec<(String, ncu::Capture)>> = std::sync::OnceLock::new();
    PARSED.get_or_init(parse_captures).clone()
}

fn parse_captures() -> Vec<(String, ncu::Capture)> {
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
            close(a.flops.unwrap(), table.num(row, "all FLOPs")),
            "{name}: FLOPs {:?} vs {}",
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
    let agg = roofline_model::analysis::aggregate::aggregate_by_name(&current.kernels);
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

/// The DRAM capture's text.
fn dram_text() -> String {
    std::fs::read_to_string(fixtures().join("ncu/nersc-v100-deepcam/out.dram__bytes.sum.csv"))
        .unwrap()
}

/// The set with the DRAM capture replaced by `text`.
fn with_dram(text: &str) -> Vec<(String, ncu::Capture)> {
    let dram = "out.dram__bytes.sum.csv";
    captures()
        .into_iter()
        .map(|(name, cap)| {
            if name == dram {
                let cap = ncu::parse_capture(text, dram).unwrap_or_else(|e| panic!("{e}"));
                (name, cap)
            } else {
                (name, cap)
            }
        })
        .collect()
}

#[test]
fn a_capture_cut_short_or_limited_is_refused_naming_the_first_missing_launch() {
    let full = dram_text();
    let first_row = full.find("\n\"0\",").unwrap() + 1;
    let rows: Vec<usize> = full[first_row..]
        .match_indices('\n')
        .map(|(i, _)| first_row + i + 1)
        .collect();
    // Cut after a whole row (line boundary): launch 500 and after missing.
    let at_500 = full.find("\n\"500\",").unwrap() + 1;
    let e = ncu::join(with_dram(&full[..at_500])).unwrap_err();
    assert!(
        e.to_string().starts_with(
            "out.dram__bytes.sum.csv holds 500 of the 797 launches of this capture set; the first missing is launch 500 ("
        ),
        "{e}"
    );
    // Cut inside rows, at sixty points through the table.
    let step = (full.len() - first_row) / 60;
    for k in 0..60 {
        let cut = first_row + k * step + 7;
        if rows.contains(&cut) {
            continue;
        }
        let e = ncu::join(with_dram(&full[..cut])).unwrap_err();
        assert!(
            matches!(
                e,
                ncu::NcuError::CutShort { .. } | ncu::NcuError::MissingLaunches { .. }
            ),
            "cut at {cut}: {e}"
        );
    }
    // Only the first 100 launches (a launch limit), then with --allow-partial.
    let at_100 = full.find("\n\"100\",").unwrap() + 1;
    let e = ncu::join(with_dram(&full[..at_100])).unwrap_err();
    assert!(e.to_string().contains("first missing is launch 100"), "{e}");
    let j = ncu::join_with(
        with_dram(&full[..at_100]),
        ncu::JoinOptions {
            allow_partial: true,
        },
    )
    .unwrap();
    assert!(!j.complete);
    assert_eq!(j.launches.len(), 797);
    assert!(
        j.notes
            .iter()
            .any(|n| n.contains("dram__bytes.sum 100 of 797")
                && n.contains("lts__t_bytes.sum 797 of 797")),
        "{:?}",
        j.notes
    );
}

#[test]
fn a_capture_in_another_launch_order_is_joined_per_kernel_name() {
    // Derived from the real DRAM capture: its launches in another order (a fixed permutation,
    // i → 7·i mod 797), launch IDs renumbered in the new order, as a separate run whose
    // launch order changed would list them.
    let full = dram_text();
    let header_end = full.find("\n\"0\",").unwrap() + 1;
    let rows: Vec<&str> = full[header_end..]
        .lines()
        .filter(|l| l.starts_with('"'))
        .collect();
    assert_eq!(rows.len(), 797);
    let mut reordered = full[..header_end].to_string();
    for new_id in 0..rows.len() {
        let row = rows[(new_id * 7) % rows.len()];
        let rest = &row[row[1..].find('"').unwrap() + 2..];
        reordered.push_str(&format!("\"{new_id}\"{rest}\n"));
    }
    let j = ncu::join_with(with_dram(&reordered), ncu::JoinOptions::default()).unwrap();
    assert!(j.complete);
    assert!(
        j.notes.iter().any(|n| n.contains("joined per kernel name")),
        "{:?}",
        j.notes
    );
    let opts = ImportOptions {
        convention: Convention::Study2020,
        arch: Some(Arch::Volta),
        source: DataSource::Import,
    };
    let per_name = ncu::to_kernels(&j.launches, &opts).unwrap();
    let per_launch = ncu::to_kernels(&ncu::join(captures()).unwrap(), &opts).unwrap();
    assert_eq!(per_name.kernels.len(), 45);
    assert_eq!(per_name.kernels.len(), per_launch.kernels.len());
    for k in &per_launch.kernels {
        let n = per_name
            .kernels
            .iter()
            .find(|x| x.name == k.name)
            .unwrap_or_else(|| panic!("{}", k.name));
        assert_eq!(n.launches, k.launches, "{}", k.name);
        assert!(close(n.time.total_s, k.time.total_s), "{}", k.name);
        assert!(
            close(n.bytes.hbm.unwrap(), k.bytes.hbm.unwrap()),
            "{}: {:?} vs {:?}",
            k.name,
            n.bytes.hbm,
            k.bytes.hbm
        );
        assert_eq!(n.bytes.l2, k.bytes.l2, "{}", k.name);
        assert_eq!(n.flops.total(), k.flops.total(), "{}", k.name);
    }
}

#[test]
fn the_deepcam_kernels_get_distinct_display_names() {
    let launches = ncu::join(captures()).unwrap();
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
    let report = roofline_model::analysis::report::Report::new(&bundle);
    let short: std::collections::BTreeSet<String> =
        report.kernels.iter().map(|k| k.short_name()).collect();
    assert!(
        short.len() < 45,
        "shortened names collide ({})",
        short.len()
    );
    let names = report.display_names();
    let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
    assert_eq!(distinct.len(), 45, "{names:#?}");
    let rows = report.rows(&bundle);
    let csv_names: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r.display_name.as_str()).collect();
    assert_eq!(csv_names.len(), 45);
    // Printed for review with --nocapture.
    for n in &names {
        println!("{n}");
    }
}
