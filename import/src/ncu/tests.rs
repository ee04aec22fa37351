//! The Nsight Compute import end to end on small tables: read, joined and turned into kernels.

use super::capture::*;
use super::join::*;
use super::kernels::*;
use super::*;
use roofline_model::bundle::DataSource;

const RAW: &str = "==PROF== Connected to process 42\nhello from the program\n\
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Some New Column\",\"dram__bytes.sum\",\"gpu__time_duration.sum\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\",\"sm__sass_thread_inst_executed_op_hfma_pred_on.sum\",\"lts__t_bytes.sum\",\"l1tex__lsu_writeback_active_mem_lgds.sum\",\"sm__ops_path_tensor_src_bf16_dst_fp32.sum\",\"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum\"\n\
\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Mbyte\",\"usecond\",\"inst\",\"inst\",\"byte\",\"\",\"\",\"\"\n\
\"0\",\"42\",\"python\",\"host\",\"void gemm<float>(float*)\",\"1\",\"7\",\"(256, 1, 1)\",\"(1024, 2, 1)\",\"0\",\"9.0\",\"x\",\"1.5\",\"10\",\"1,000\",\"10\",\"4000000\",\"100\",\"2048\",\"2048\"\n\
\"1\",\"42\",\"python\",\"host\",\"copy\",\"1\",\"7\",\"(128, 1, 1)\",\"(64, 1, 1)\",\"0\",\"9.0\",\"x\",\"2\",\"5\",\"0\",\"0\",\"n/a\",\"10\",\"0\",\"0\"\n\
==PROF== Disconnected from process 42\n";

#[test]
fn raw_page_with_units_row() {
    let c = parse_capture(RAW, "raw.csv").unwrap();
    assert_eq!(c.launches.len(), 2);
    assert_eq!(c.ignored_columns, vec!["Some New Column".to_string()]);
    let l = &c.launches[0];
    assert_eq!(l.metrics["dram__bytes.sum"], 1.5e6);
    assert_eq!(l.metrics["gpu__time_duration.sum"], 1e-5);
    assert_eq!(
        l.metrics["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"],
        1000.0
    );
    assert_eq!(l.grid, Some([1024, 2, 1]));
    assert_eq!(l.block, Some([256, 1, 1]));
    assert_eq!(l.compute_capability.as_deref(), Some("9.0"));
    assert!(
        !c.launches[1].metrics.contains_key("lts__t_bytes.sum"),
        "n/a is missing"
    );
}

#[test]
fn raw_page_to_kernels_on_hopper() {
    let c = parse_capture(RAW, "raw.csv").unwrap();
    let opts = ImportOptions {
        convention: Convention::Current,
        arch: None,
        source: DataSource::Import,
    };
    let imp = to_kernels(&join(vec![("raw.csv".into(), c)]).unwrap(), &opts).unwrap();
    let k = &imp.kernels[0];
    assert_eq!(k.flops.fp32, Some(2000.0));
    assert_eq!(
        k.flops.fp16,
        Some(40.0),
        "hfma counts 4 FLOPs by the current convention"
    );
    // The aggregate wins over its per-instruction part: no double counting.
    assert_eq!(k.flops.tensor_bf16, Some(2048.0));
    assert_eq!(k.bytes.l1, Some(12800.0));
    assert_eq!(k.bytes.hbm, Some(1.5e6));
    assert!((k.time.total_s - 10e-6).abs() < 1e-18);
    assert_eq!(k.device.as_deref(), Some("0"));
    assert_eq!(imp.devices[0].compute_capability.as_deref(), Some("9.0"));
    assert!(
        imp.notes.iter().any(
            |n| n.starts_with("L1 bytes from (l1tex__lsu_writeback_active_mem_lgds.sum) × 128")
        ),
        "{:?}",
        imp.notes
    );
}

const DETAILS: &str = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Kernel Time\",\"Context\",\"Stream\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
\"0\",\"1\",\"p\",\"h\",\"k\",\"t\",\"1\",\"7\",\"s\",\"sm__cycles_elapsed.avg\",\"cycle\",\"1,000\"\n\
\"0\",\"1\",\"p\",\"h\",\"k\",\"t\",\"1\",\"7\",\"s\",\"sm__cycles_elapsed.avg.per_second\",\"cycle/usecond\",\"1,000\"\n\
\"1\",\"1\",\"p\",\"h\",\"k\",\"t\",\"1\",\"7\",\"s\",\"sm__cycles_elapsed.avg\",\"cycle\",\"3,000\"\n\
\"1\",\"1\",\"p\",\"h\",\"k\",\"t\",\"1\",\"7\",\"s\",\"sm__cycles_elapsed.avg.per_second\",\"cycle/nsecond\",\"1.5\"\n";

#[test]
fn details_page_and_the_study_time_rule() {
    let c = parse_capture(DETAILS, "d.csv").unwrap();
    assert_eq!(c.launches.len(), 2);
    assert_eq!(
        c.launches[0].metrics["sm__cycles_elapsed.avg.per_second"],
        1e9
    );
    let launches = join(vec![("d.csv".into(), c)]).unwrap();
    let current = to_kernels(
        &launches,
        &ImportOptions {
            convention: Convention::Current,
            arch: None,
            source: DataSource::Import,
        },
    )
    .unwrap();
    // Per launch: 1000 / 1e9 = 1 µs and 3000 / 1.5e9 = 2 µs.
    assert_eq!(current.kernels.len(), 2);
    assert!((current.kernels[1].time.total_s - 2e-6).abs() < 1e-18);
    let study = to_kernels(
        &launches,
        &ImportOptions {
            convention: Convention::Study2020,
            arch: None,
            source: DataSource::Import,
        },
    )
    .unwrap();
    // One name: 4000 cycles / (2.5e9 / 2) = 3.2 µs, not 1 + 2 = 3 µs.
    assert_eq!(study.kernels.len(), 1);
    assert_eq!(study.kernels[0].launches, 2);
    assert!((study.kernels[0].time.total_s - 3.2e-6).abs() < 1e-18);
}

#[test]
fn joining_captures() {
    let a = parse_capture(DETAILS, "a.csv").unwrap();
    let b = parse_capture(DETAILS, "b.csv").unwrap();
    let e = join(vec![("a.csv".into(), a.clone()), ("b.csv".into(), b)]).unwrap_err();
    assert!(matches!(e, NcuError::OverlappingCaptures { .. }), "{e}");
    let other = DETAILS
        .replace("sm__cycles_elapsed.avg.per_second", "X")
        .replace("sm__cycles_elapsed.avg", "dram__bytes.sum")
        .replace("\"X\"", "\"lts__t_bytes.sum\"")
        .replace("\"cycle\"", "\"byte\"")
        .replace("cycle/usecond", "Kbyte")
        .replace("cycle/nsecond", "Kbyte")
        .replace(
            "\"1\",\"1\",\"p\",\"h\",\"k\"",
            "\"1\",\"1\",\"p\",\"h\",\"other\"",
        );
    let c = parse_capture(&other, "c.csv").unwrap();
    let e = join(vec![("a.csv".into(), a), ("c.csv".into(), c)]).unwrap_err();
    assert!(
        e.to_string()
            .contains("launch 1 is \"k\" in a.csv but \"other\" in c.csv"),
        "{e}"
    );
}

#[test]
fn text_valued_and_unknown_metrics_are_left_alone() {
    let raw = "\"ID\",\"Kernel Name\",\"launch__func_cache_config\",\"gpu__time_duration.sum\",\"launch__cluster_scheduling_policy\"\n\
\"\",\"\",\"\",\"ns\",\"SM\"\n\
\"0\",\"k\",\"CachePreferNone\",\"1500\",\"PolicySpread\"\n";
    let c = parse_capture(raw, "r.csv").unwrap();
    assert_eq!(c.launches[0].metrics["gpu__time_duration.sum"], 1.5e-6);
    assert_eq!(c.other_metrics.len(), 2);
    let only_other = "\"ID\",\"Kernel Name\",\"launch__grid_size\"\n\"0\",\"k\",\"64\"\n";
    let e = parse_capture(only_other, "o.csv").unwrap_err();
    assert!(
        e.to_string().contains(
            "none of the metrics the roofline needs is in this file (it has launch__grid_size)"
        ),
        "{e}"
    );
    // Details page with display names and rule rows.
    let details = "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\",\"Rule Name\"\n\
\"0\",\"k\",\"GPU Speed Of Light Throughput\",\"Duration\",\"usecond\",\"2.50\",\"\"\n\
\"0\",\"k\",\"Launch Statistics\",\"Cluster Scheduling Policy\",\"\",\"PolicySpread\",\"\"\n\
\"0\",\"k\",\"SOL\",\"\",\"\",\"\",\"SOLBottleneck\"\n";
    let c = parse_capture(details, "d.csv").unwrap();
    assert_eq!(c.launches[0].metrics["gpu__time_duration.sum"], 2.5e-6);
    assert!(!c.metric_names.contains(""));
}

#[test]
fn launches_without_time_are_left_out_with_a_note() {
    let a = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes.sum\"\n\"\",\"\",\"nsecond\",\"byte\"\n\"0\",\"k\",\"1000\",\"64\"\n\"1\",\"k\",\"n/a\",\"64\"\n";
    let c = parse_capture(a, "a.csv").unwrap();
    let opts = ImportOptions {
        convention: Convention::Current,
        arch: None,
        source: DataSource::Import,
    };
    let imp = to_kernels(&join(vec![("a.csv".into(), c)]).unwrap(), &opts).unwrap();
    assert_eq!(imp.kernels.len(), 1);
    assert!(
        imp.notes
            .iter()
            .any(|n| n.starts_with("INCOMPLETE: 1 launch without a positive time left out of every total (the first: launch 1 (k) has no positive time: gpu__time_duration.sum has no value (n/a or an empty cell)")),
        "{:?}",
        imp.notes
    );
    assert!(!imp.complete);
    assert_eq!(imp.left_out.as_ref().map(|l| l.0), Some(1));
}

/// A FLOP counter without a value for one launch (`n/a`, an empty cell, no row on a details
/// page) makes that launch's FLOPs on its datapath unknown, never the other counters' sum, and
/// the import incomplete.
#[test]
fn a_flop_counter_without_a_value_makes_its_datapath_unknown() {
    let opts = ImportOptions {
        convention: Convention::Current,
        arch: None,
        source: DataSource::Import,
    };
    for cell in ["n/a", ""] {
        let a = format!(
            "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"sm__sass_thread_inst_executed_op_fadd_pred_on.sum\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\"\n\"\",\"\",\"nsecond\",\"inst\",\"inst\"\n\"0\",\"k\",\"1000\",\"10\",\"100\"\n\"1\",\"k\",\"1000\",\"10\",\"{cell}\"\n"
        );
        let c = parse_capture(&a, "a.csv").unwrap();
        let imp = to_kernels(&join(vec![("a.csv".into(), c)]).unwrap(), &opts).unwrap();
        assert_eq!(imp.kernels[0].flops.fp32, Some(210.0));
        assert_eq!(imp.kernels[1].flops.fp32, None, "{cell:?}");
        assert!(!imp.complete);
        assert!(
            imp.notes.iter().any(|n| n.starts_with(
                "INCOMPLETE: 1 launch lacks a counter value (n/a, an empty cell or no row) that a figure needs"
            ) && n.contains("launch 1 (k): sm__sass_thread_inst_executed_op_ffma_pred_on.sum → FP32 FLOPs unknown")),
            "{:?}",
            imp.notes
        );
    }
    // A details page without the row.
    let d = "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
\"0\",\"k\",\"s\",\"gpu__time_duration.sum\",\"nsecond\",\"1000\"\n\
\"0\",\"k\",\"s\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\",\"inst\",\"100\"\n\
\"1\",\"k\",\"s\",\"gpu__time_duration.sum\",\"nsecond\",\"1000\"\n";
    let c = parse_capture(d, "d.csv").unwrap();
    let imp = to_kernels(&join(vec![("d.csv".into(), c)]).unwrap(), &opts).unwrap();
    assert_eq!(imp.kernels[0].flops.fp32, Some(200.0));
    assert_eq!(imp.kernels[1].flops.fp32, None);
    assert!(!imp.complete);
    // Every value there: complete.
    let full = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\"\n\"\",\"\",\"nsecond\",\"inst\"\n\"0\",\"k\",\"1000\",\"100\"\n";
    let c = parse_capture(full, "f.csv").unwrap();
    let imp = to_kernels(&join(vec![("f.csv".into(), c)]).unwrap(), &opts).unwrap();
    assert!(imp.complete);
    assert_eq!(imp.kernels[0].flops.fp32, Some(200.0));
}

#[test]
fn errors_name_file_and_line() {
    let e = parse_capture("nothing here", "x.csv").unwrap_err();
    assert!(
        e.to_string()
            .contains("x.csv: no Nsight Compute table found")
    );
    let bad = DETAILS.replace("\"1,000\"\n\"0\"", "\"lots\"\n\"0\"");
    let e = parse_capture(&bad, "d.csv").unwrap_err();
    assert_eq!(
        e.to_string(),
        "d.csv, line 2: sm__cycles_elapsed.avg = \"lots\" is not a number"
    );
    let bad = DETAILS.replace("cycle/usecond", "cycle/fortnight");
    let e = parse_capture(&bad, "d.csv").unwrap_err();
    assert!(
        e.to_string().contains("unknown unit \"cycle/fortnight\""),
        "{e}"
    );
}

/// A one-metric raw capture of launches `(id, name, value)`, with a units row.
fn one_metric(metric: &str, unit: &str, rows: &[(u64, &str, &str)]) -> String {
    let mut t = format!("\"ID\",\"Kernel Name\",\"{metric}\"\n\"\",\"\",\"{unit}\"\n");
    for (id, name, v) in rows {
        t.push_str(&format!("\"{id}\",\"{name}\",\"{v}\"\n"));
    }
    t
}

#[test]
fn misplaced_commas_are_refused_with_the_line() {
    let good = one_metric(
        "dram__bytes.sum",
        "byte",
        &[(0, "k", "1,024"), (1, "k", "10,240,000")],
    );
    let c = parse_capture(&good, "g.csv").unwrap();
    assert_eq!(c.launches[1].metrics["dram__bytes.sum"], 10_240_000.0);
    for bad in ["1,5", "5715,88"] {
        let text = one_metric(
            "sm__cycles_elapsed.avg",
            "cycle",
            &[(0, "k", "7"), (1, "k", bad)],
        );
        let e = parse_capture(&text, "c.csv").unwrap_err();
        assert!(matches!(e, NcuError::BadSeparator { line: 4, .. }), "{e:?}");
        assert!(
            e.to_string().starts_with(&format!(
                "c.csv, line 4: sm__cycles_elapsed.avg = \"{bad}\""
            )),
            "{e}"
        );
    }
}

#[test]
fn a_unit_that_does_not_fit_the_metric_is_refused() {
    for (metric, unit) in [
        ("sm__cycles_elapsed.avg", "msecond"),
        ("dram__bytes.sum", "%"),
        ("gpu__time_duration.sum", "byte"),
        ("sm__cycles_elapsed.avg.per_second", "cycle"),
        (
            "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
            "usecond",
        ),
    ] {
        let text = one_metric(metric, unit, &[(0, "k", "5")]);
        let e = parse_capture(&text, "u.csv").unwrap_err();
        assert!(
            matches!(&e, NcuError::UnitMismatch { line: 3, .. }),
            "{metric} in {unit}: {e:?}"
        );
        assert!(
            e.to_string()
                .contains(&format!("unit \"{unit}\" does not fit {metric}")),
            "{e}"
        );
    }
    // The units ncu writes for them are accepted.
    for (metric, unit) in [
        ("sm__cycles_elapsed.avg", "cycle"),
        ("dram__bytes.sum", "Mbyte"),
        ("gpu__time_duration.sum", "nsecond"),
        ("sm__cycles_elapsed.avg.per_second", "cycle/usecond"),
        ("sm__inst_executed_pipe_tensor.sum", "inst"),
        ("l1tex__lsu_writeback_active_mem_lgds.sum", "cycle"),
    ] {
        parse_capture(&one_metric(metric, unit, &[(0, "k", "5")]), "u.csv")
            .unwrap_or_else(|e| panic!("{metric} in {unit}: {e}"));
    }
}

#[test]
fn duplicate_launches_and_concatenated_runs_are_refused() {
    let dup = one_metric(
        "dram__bytes.sum",
        "byte",
        &[(0, "k", "1"), (1, "k", "2"), (0, "k", "3")],
    );
    let e = parse_capture(&dup, "d.csv").unwrap_err();
    assert_eq!(
        e.to_string(),
        "d.csv, line 5: launch 0 appears a second time (first at line 3); a file must hold one run: were two captures concatenated?"
    );
    let run = one_metric("dram__bytes.sum", "byte", &[(0, "k", "1")]);
    let e = parse_capture(&format!("{run}{run}"), "two.csv").unwrap_err();
    assert!(matches!(e, NcuError::SecondHeader { line: 4, .. }), "{e:?}");
    // Details page: a launch coming back after another, or one metric twice.
    let again = format!("{DETAILS}{}", DETAILS.lines().nth(1).unwrap());
    let e = parse_capture(&again, "d.csv").unwrap_err();
    assert!(
        matches!(
            e,
            NcuError::DuplicateLaunch {
                line: 6,
                first_line: 2,
                id: 0,
                ..
            }
        ),
        "{e:?}"
    );
    let lines: Vec<&str> = DETAILS.lines().collect();
    let twice = [lines[0], lines[1], lines[1], lines[2]].join("\n");
    let e = parse_capture(&twice, "d.csv").unwrap_err();
    assert!(
        e.to_string()
            .contains("launch 0 (sm__cycles_elapsed.avg) appears a second time"),
        "{e}"
    );
}

/// Found by the `ncu_csv` fuzz target: a launch with an empty kernel name was let through
/// and refused only when the bundle was validated, naming the bundle's JSON path instead of
/// the CSV line.
#[test]
fn a_launch_without_a_kernel_name_is_refused_with_its_line() {
    let csv = one_metric("dram__bytes.sum", "byte", &[(0, "k", "1"), (1, " ", "2")]);
    let e = parse_capture(&csv, "n.csv").unwrap_err();
    assert_eq!(e.to_string(), "n.csv, line 4: launch 1 has no kernel name");
}

fn set(partial: &str) -> Vec<(String, Capture)> {
    let rows: Vec<(u64, &str, &str)> = (0..5)
        .map(|i| (i, if i % 2 == 0 { "a" } else { "b" }, "1000"))
        .collect();
    let time = one_metric("gpu__time_duration.sum", "nsecond", &rows);
    vec![
        ("time.csv".into(), parse_capture(&time, "time.csv").unwrap()),
        (
            "dram.csv".into(),
            parse_capture(partial, "dram.csv").unwrap(),
        ),
    ]
}

#[test]
fn an_incomplete_capture_set_is_refused_unless_allowed() {
    let rows: Vec<(u64, &str, &str)> = (0..5)
        .map(|i| (i, if i % 2 == 0 { "a" } else { "b" }, "64"))
        .collect();
    let full = one_metric("dram__bytes.sum", "byte", &rows);
    assert!(join(set(&full)).is_ok());
    // Only the first three launches.
    let first3 = one_metric("dram__bytes.sum", "byte", &rows[..3]);
    let e = join(set(&first3)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "dram.csv holds 3 of the 5 launches of this capture set; the first missing is launch 3 (b): the file was cut short or captured with a launch limit; capture it again, or pass --allow-partial to import what is there, marked incomplete"
    );
    let j = join_with(
        set(&first3),
        JoinOptions {
            allow_partial: true,
        },
    )
    .unwrap();
    assert!(!j.complete);
    assert_eq!(j.launches.len(), 5);
    assert!(
        j.notes
            .iter()
            .any(|n| n.contains("gpu__time_duration.sum 5 of 5")
                && n.contains("dram__bytes.sum 3 of 5")),
        "{:?}",
        j.notes
    );
    // Cut inside the last row, at every byte of it.
    let last_row = full[..full.len() - 1].rfind('\n').unwrap() + 1;
    for cut in last_row + 1..full.len() - 1 {
        let e = join(set(&full[..cut])).unwrap_err();
        assert!(
            matches!(&e, NcuError::CutShort { line: 7, .. }),
            "cut at {cut}: {e:?}"
        );
        let j = join_with(
            set(&full[..cut]),
            JoinOptions {
                allow_partial: true,
            },
        )
        .unwrap();
        assert!(!j.complete);
        assert!(
            !j.launches[4].metrics.contains_key("dram__bytes.sum"),
            "cut at {cut}"
        );
    }
}

#[test]
fn captures_in_another_launch_order_are_joined_per_kernel_name() {
    // The same kernels, the same counts, another order: a, b, a, b, a then b, a, a, b, a.
    let order = ["b", "a", "a", "b", "a"];
    let rows: Vec<(u64, &str, &str)> = order
        .iter()
        .enumerate()
        .map(|(i, n)| (i as u64, *n, if *n == "a" { "10" } else { "100" }))
        .collect();
    let j = join_with(
        set(&one_metric("dram__bytes.sum", "byte", &rows)),
        JoinOptions::default(),
    )
    .unwrap();
    assert!(j.complete);
    assert_eq!(j.launches.len(), 2, "one entry per name");
    let a = j.launches.iter().find(|l| l.name == "a").unwrap();
    assert_eq!(a.launches, 3);
    assert_eq!(a.metrics["dram__bytes.sum"], 30.0);
    assert!((a.metrics["gpu__time_duration.sum"] - 3e-6).abs() < 1e-18);
    assert!(
        j.notes.iter().any(|n| n.contains("joined per kernel name")),
        "{:?}",
        j.notes
    );
    let imp = to_kernels(
        &j.launches,
        &ImportOptions {
            convention: Convention::Current,
            arch: None,
            source: DataSource::Import,
        },
    )
    .unwrap();
    assert_eq!(imp.kernels.iter().map(|k| k.launches).sum::<u64>(), 5);
    // Other names, or other counts: refused as before.
    let rows: Vec<(u64, &str, &str)> = ["b", "a", "b", "b", "a"]
        .iter()
        .enumerate()
        .map(|(i, n)| (i as u64, *n, "1"))
        .collect();
    let e = join(set(&one_metric("dram__bytes.sum", "byte", &rows))).unwrap_err();
    assert!(
        e.to_string()
            .contains("launch 0 is \"a\" in time.csv but \"b\" in dram.csv"),
        "{e}"
    );
}

fn current() -> ImportOptions {
    ImportOptions {
        convention: Convention::Current,
        arch: None,
        source: DataSource::Import,
    }
}

/// Issue 29: without a units row, or with an empty unit cell, `gpu__time_duration.sum` = 20000
/// was read as 20000 s (ncu's base unit for a duration is the nanosecond). A metric whose value
/// has a scale (a time, a rate, bytes, cycles) is refused without its unit, naming file, line
/// and metric; a count of instructions or operations has none and is read as it is.
#[test]
fn a_scaled_metric_without_its_unit_is_refused() {
    let no_row = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"20000\"\n";
    let e = parse_capture(no_row, "r.csv").unwrap_err();
    assert_eq!(
        e.to_string(),
        "r.csv, line 2: gpu__time_duration.sum = \"20000\" has no unit (the table has no units row under its header): a time's scale is not known without one (Nsight Compute's base unit for a duration is the nanosecond); export the raw page with its units row (`ncu --import REPORT --csv --page raw`), or write the unit in"
    );
    for (metric, unit_row) in [
        ("gpu__time_duration.sum", "\"\",\"\",\"\""),
        ("dram__bytes.sum", "\"\",\"\",\" \""),
        ("sm__cycles_elapsed.avg", "\"\",\"\",\"\""),
        ("sm__cycles_elapsed.avg.per_second", "\"\",\"\",\"\""),
    ] {
        let text = format!("\"ID\",\"Kernel Name\",\"{metric}\"\n{unit_row}\n\"0\",\"k\",\"5\"\n");
        let e = parse_capture(&text, "u.csv").unwrap_err();
        assert!(
            e.to_string().starts_with(&format!(
                "u.csv, line 3: {metric} = \"5\" has no unit (its unit cell is empty)"
            )),
            "{metric}: {e}"
        );
    }
    // The details page: an empty Metric Unit.
    let details = DETAILS.replacen("\"cycle\"", "\"\"", 1);
    let e = parse_capture(&details, "d.csv").unwrap_err();
    assert!(
        e.to_string().starts_with(
            "d.csv, line 2: sm__cycles_elapsed.avg = \"1,000\" has no unit (its unit cell is empty)"
        ),
        "{e}"
    );
    // Counts: no scale, read as they are.
    let text = "\"ID\",\"Kernel Name\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\",\"gpu__time_duration.sum\"\n\"\",\"\",\"\",\"ns\"\n\"0\",\"k\",\"7\",\"5\"\n";
    let c = parse_capture(text, "c.csv").unwrap();
    assert_eq!(
        c.launches[0].metrics["sm__sass_thread_inst_executed_op_ffma_pred_on.sum"],
        7.0
    );
}

/// Issue 29: two columns for one metric, the last silently winning.
#[test]
fn a_metric_twice_in_one_table_is_refused() {
    let text = "\"ID\",\"Kernel Name\",\"dram__bytes.sum\",\"gpu__time_duration.sum\",\"dram__bytes.sum\"\n\"\",\"\",\"byte\",\"ns\",\"Kbyte\"\n\"0\",\"k\",\"5\",\"5\",\"5\"\n";
    let e = parse_capture(text, "d.csv").unwrap_err();
    assert_eq!(
        e.to_string(),
        "d.csv, line 1: dram__bytes.sum has two columns (3 and 5): which one holds the value cannot be told; keep one"
    );
    // The details page: a metric under two display names for one launch.
    let lines: Vec<&str> = DETAILS.lines().collect();
    let twice = [
        lines[0],
        lines[1],
        &lines[1]
            .replace(
                "\"s\",\"sm__cycles_elapsed.avg\"",
                "\"t\",\"sm__cycles_elapsed.avg\"",
            )
            .replace("1,000", "2,000"),
    ]
    .join("\n");
    let e = parse_capture(&twice, "d.csv").unwrap_err();
    assert_eq!(
        e.to_string(),
        "d.csv, line 3: launch 0 has sm__cycles_elapsed.avg = 2000 here but 1000 at line 2: which one holds cannot be told"
    );
    // The same value shown in two sections is one metric, read once.
    let same = twice.replace("2,000", "1,000");
    let c = parse_capture(&same, "d.csv").unwrap();
    assert_eq!(c.launches[0].metrics["sm__cycles_elapsed.avg"], 1000.0);
}

/// Issue 29: a row with too few or too many cells, or a broken quote, was dropped with a note
/// while the bundle stayed complete. It is refused naming the line, as a file cut short is,
/// unless `allow_partial`, which marks the set incomplete; the program's own output inside the
/// table is still skipped.
#[test]
fn a_broken_row_is_refused_unless_partial_is_allowed() {
    let rows: Vec<(u64, &str, &str)> = (0..5)
        .map(|i| (i, if i % 2 == 0 { "a" } else { "b" }, "64"))
        .collect();
    let full = one_metric("dram__bytes.sum", "byte", &rows);
    for (broken, what) in [
        (
            "\"2\",\"a\",\"64\",\"9\"\n",
            "has 4 fields where the header has 3",
        ),
        ("\"2\",\"a\"\n", "has 2 fields where the header has 3"),
        ("\"2\",\"a,\"64\"\n", "leaves a quote open (a broken quote)"),
    ] {
        let text = full.replace("\"2\",\"a\",\"64\"\n", broken);
        let e = join(set(&text)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "dram.csv, line 5: a launch row that {what}: a broken row; fix or capture it again, or pass --allow-partial to import the other rows, marked incomplete"
            ),
            "{broken:?}"
        );
        let j = join_with(
            set(&text),
            JoinOptions {
                allow_partial: true,
            },
        )
        .unwrap();
        assert!(!j.complete, "{broken:?}");
        assert!(
            j.notes
                .iter()
                .any(|n| n.contains("dram.csv, line 5: a broken row, left out")),
            "{:?}",
            j.notes
        );
    }
    // A program's line inside the table is not a row: skipped, the set complete.
    let logged = full.replace("\"2\",\"a\"", "Apex scaled loss called\n\"2\",\"a\"");
    let j = join_with(set(&logged), JoinOptions::default()).unwrap();
    assert!(j.complete);
}

/// Issue 29: a time that is present but zero or negative was reported as missing ("collect
/// gpu__time_duration.sum"). A negative value is refused as read, with its line; a zero time
/// is named with its value.
#[test]
fn a_zero_or_negative_time_is_named_not_called_missing() {
    let e = parse_capture(
        &one_metric("gpu__time_duration.sum", "nsecond", &[(0, "k", "-5")]),
        "t.csv",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.csv, line 3: gpu__time_duration.sum = \"-5\" is negative; a time, count or rate cannot be"
    );
    let c = parse_capture(
        &one_metric("gpu__time_duration.sum", "nsecond", &[(0, "k", "0")]),
        "t.csv",
    )
    .unwrap();
    let e = to_kernels(&join(vec![("t.csv".into(), c)]).unwrap(), &current()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "launch 0 (k) has no positive time: gpu__time_duration.sum is 0, and no sm__cycles_elapsed.avg with sm__cycles_elapsed.avg.per_second to time it instead; a kernel's time must be positive"
    );
    // Missing altogether: as before.
    let c = parse_capture(
        &one_metric("dram__bytes.sum", "byte", &[(0, "k", "5")]),
        "b.csv",
    )
    .unwrap();
    let e = to_kernels(&join(vec![("b.csv".into(), c)]).unwrap(), &current()).unwrap_err();
    assert!(
        e.to_string()
            .contains("has no time: collect gpu__time_duration.sum"),
        "{e}"
    );
}

/// Issue 29: a details page without its "Metric Unit" column fell through to the raw page's
/// reading, whose repeated launch IDs were called "two captures concatenated?".
#[test]
fn a_details_page_without_a_unit_column_says_so() {
    let no_unit = DETAILS
        .replace(",\"Metric Unit\"", "")
        .replace(",\"cycle\"", "")
        .replace(",\"cycle/usecond\"", "")
        .replace(",\"cycle/nsecond\"", "");
    let e = parse_capture(&no_unit, "d.csv").unwrap_err();
    assert_eq!(
        e.to_string(),
        "d.csv: the table has \"Metric Name\" and \"Metric Value\" columns but no \"Metric Unit\": a details page needs \"Metric Name\", \"Metric Unit\" and \"Metric Value\""
    );
}

/// Issue 29: `-0` is zero: never a negative zero in what is imported.
#[test]
fn a_negative_zero_is_read_as_zero() {
    let c = parse_capture(
        &one_metric("dram__bytes.sum", "byte", &[(0, "k", "-0")]),
        "z.csv",
    )
    .unwrap();
    let v = c.launches[0].metrics["dram__bytes.sum"];
    assert!(v == 0.0 && v.is_sign_positive(), "{v}");
}

/// Issue 29: notes had no length limit. A capture with thousands of columns this build does not
/// know lists a few of them and counts the rest.
#[test]
fn a_note_of_ignored_columns_is_capped() {
    let mut header = String::from("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"");
    let mut units = String::from("\"\",\"\",\"ns\"");
    let mut row = String::from("\"0\",\"k\",\"5\"");
    for i in 0..5000 {
        header.push_str(&format!(",\"Column {i}\""));
        units.push_str(",\"\"");
        row.push_str(",\"x\"");
    }
    let c = parse_capture(&format!("{header}\n{units}\n{row}\n"), "c.csv").unwrap();
    let note = c.ignored_note("c.csv").unwrap();
    assert!(note.len() < 1000, "{} bytes", note.len());
    assert!(note.ends_with("… and 4980 more"), "{note}");
}

/// A details page of sections only (a time, no FLOP counter) imports timed only, and the notes
/// say the FLOPs are unknown and why.
#[test]
fn a_capture_without_flop_counters_says_so() {
    let details = "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
\"0\",\"k\",\"GPU Speed Of Light Throughput\",\"Duration\",\"usecond\",\"2.50\"\n\
\"0\",\"k\",\"GPU Speed Of Light Throughput\",\"DRAM Throughput\",\"%\",\"12\"\n";
    let c = parse_capture(details, "d.csv").unwrap();
    let imp = to_kernels(&join(vec![("d.csv".into(), c)]).unwrap(), &current()).unwrap();
    assert!(imp.kernels[0].flops.is_unknown());
    assert!(
        imp.notes
            .iter()
            .any(|n| n.starts_with("no FLOP counter in the data")),
        "{:?}",
        imp.notes
    );
}
