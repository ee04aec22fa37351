//! What an import marks or says instead of refusing, through the binary (the bad-input corpus
//! holds what is refused): a FLOP counter without a value for one launch makes that figure
//! unknown and the bundle incomplete; a device the input does not name is said to be assumed
//! the machine's; `--arch` is recorded where it is used; the same trace imported twice is not
//! merged; `info` and `info --baseline` say what a reader must know (an incomplete baseline,
//! the devices of a run on several).

use std::path::{Path, PathBuf};

mod common;
use common::roofline;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn v100() -> PathBuf {
    repo().join("tests/fixtures/bundles/v100-deepcam-example.json")
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn read(p: &Path) -> roofline_model::Bundle {
    roofline_model::parse_bundle(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Two launches; the second's FFMA count is `cell`.
fn ffma_csv(cell: &str) -> String {
    format!(
        "\"ID\",\"Kernel Name\",\"Device\",\"CC\",\"gpu__time_duration.sum\",\"sm__sass_thread_inst_executed_op_fadd_pred_on.sum\",\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\"\n\
\"\",\"\",\"\",\"\",\"nsecond\",\"inst\",\"inst\"\n\
\"0\",\"gemm\",\"0\",\"9.0\",\"20000\",\"100\",\"1000\"\n\
\"1\",\"gemm\",\"0\",\"9.0\",\"20000\",\"100\",\"{cell}\"\n"
    )
}

/// A FLOP-instruction cell without a value (`n/a`, empty) for one launch: that launch's FP32
/// FLOPs are unknown (never the FADD count alone), the bundle is incomplete and says why, and
/// `info` shows the kernel's FLOPs empty.
#[test]
fn a_flop_counter_without_a_value_is_unknown_and_the_run_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    for cell in ["n/a", ""] {
        let csv = dir.path().join("k.csv");
        std::fs::write(&csv, ffma_csv(cell)).unwrap();
        let o = roofline(&["import", arg(&csv), "-o", arg(&out)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let b = read(&out);
        assert!(!b.complete, "{cell:?}");
        assert_eq!(b.kernels[0].flops.fp32, Some(2100.0));
        assert_eq!(b.kernels[1].flops.fp32, None, "{cell:?}");
        assert!(
            b.notes.iter().any(
                |n| n.starts_with("INCOMPLETE: 1 launch lacks a counter value")
                    && n.contains(
                        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum → FP32 FLOPs unknown"
                    )
            ),
            "{:#?}",
            b.notes
        );
        let o = roofline(&["info", arg(&out), "--format", "csv"]);
        assert!(o.status.success(), "{}", stderr(&o));
        // One kernel name, its launches' FP32 FLOPs unknown: the flops cell is empty.
        let text = stdout(&o);
        let row = text.lines().nth(1).unwrap();
        assert!(row.starts_with("gemm,2,4e-5,,"), "{row}");
    }
}

/// A trace that names no GPU (no `deviceProperties`) placed against a machine: the device is
/// the machine's, and the bundle says that was assumed.
#[test]
fn a_device_the_trace_does_not_name_is_said_to_be_assumed() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    std::fs::write(
        &trace,
        r#"{"traceEvents": [
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 100, "dur": 5, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "synthetic_sgemm", "pid": 0, "tid": 7, "ts": 110, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 1}}
]}"#,
    )
    .unwrap();
    let out = dir.path().join("run.json");
    let o = roofline(&[
        "import",
        arg(&trace),
        "--machine",
        arg(&v100()),
        "-o",
        arg(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = read(&out);
    assert_eq!(b.devices[0].name, "Tesla V100-SXM2-16GB");
    assert!(
        b.notes.iter().any(|n| n.starts_with(
            "device 0: the input names no GPU (no name, compute capability or SM count): assumed to be the machine's, Tesla V100-SXM2-16GB (compute capability 7.0, 80 SMs)"
        )),
        "{:#?}",
        b.notes
    );
}

/// `--arch` where it is used is recorded in the bundle's notes (and its command line).
#[test]
fn arch_is_recorded_where_it_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("k.csv");
    std::fs::write(
        &csv,
        "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"sm__inst_executed_pipe_tensor.sum\"\n\"\",\"\",\"nsecond\",\"inst\"\n\"0\",\"hmma\",\"20000\",\"1000\"\n",
    )
    .unwrap();
    let out = dir.path().join("run.json");
    let o = roofline(&["import", arg(&csv), "--arch", "7.0", "-o", arg(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = read(&out);
    assert!(
        b.notes.iter().any(|n| n.starts_with(
            "--arch 7.0 given: the input names no compute capability, so its counters are read with the Volta (sm_70) metric table on the word of --arch"
        )),
        "{:#?}",
        b.notes
    );
    assert_eq!(b.kernels[0].flops.tensor_fp16, Some(512_000.0));
    assert!(b.provenance.command_line.iter().any(|a| a == "--arch"));
}

/// The same trace imported twice (two outputs that differ in provenance only) is one run:
/// `merge` refuses to count its launches twice.
#[test]
fn the_same_trace_imported_twice_is_not_merged() {
    let dir = tempfile::tempdir().unwrap();
    let trace = repo().join("tests/fixtures/traces/sampled-rank-0-shapes.json.gz");
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for out in [&a, &b] {
        let o = roofline(&["import", arg(&trace), "-o", arg(out)]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let never = dir.path().join("ab.json");
    let o = roofline(&["merge", arg(&a), arg(&b), "-o", arg(&never)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("hold the same run") && stderr(&o).contains("imported twice?"),
        "{}",
        stderr(&o)
    );
    assert!(!never.exists());
}

/// A gzip stream with NUL padding after it imports, as `gzip -d` reads it; one followed by
/// other data is refused as such (tests/fixtures/bad), never called "cut short".
#[test]
fn a_gzip_stream_padded_with_zeros_imports() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read(repo().join("tests/fixtures/bad/trace-machine-mismatch.json")).unwrap();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&text).unwrap();
    let mut gz = e.finish().unwrap();
    gz.extend(std::iter::repeat_n(0u8, 10_000));
    let padded = dir.path().join("padded.json.gz");
    std::fs::write(&padded, &gz).unwrap();
    let out = dir.path().join("run.json");
    let o = roofline(&["import", arg(&padded), "-o", arg(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(&out).kernels.len(), 1);
}

/// The V100 example on two devices (ids 0 and 1, each with its machine and every kernel).
fn two_devices(dir: &Path) -> PathBuf {
    let mut b = read(&v100());
    let mut d1 = b.devices[0].clone();
    d1.id = "1".into();
    b.devices.push(d1);
    let mut m1 = b.machines[0].clone();
    m1.device = "1".into();
    b.machines.push(m1);
    let mut kernels = Vec::new();
    for k in &b.kernels {
        for d in ["0", "1"] {
            let mut k = k.clone();
            k.device = Some(d.into());
            kernels.push(k);
        }
    }
    b.kernels = kernels;
    let p = dir.join("two.json");
    std::fs::write(&p, roofline_model::to_json(&b).unwrap()).unwrap();
    p
}

/// `info` of a run on several devices counts each name once and says each row's device.
#[test]
fn info_of_a_run_on_several_devices_names_each_rows_device() {
    let dir = tempfile::tempdir().unwrap();
    let two = two_devices(dir.path());
    let o = roofline(&["info", arg(&two)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("kernels: 11 names on 2 devices (22 rows, one per device and name)"),
        "{text}"
    );
    let header = text.lines().find(|l| l.contains("T/Tbound")).unwrap();
    assert!(header.trim_end().ends_with("device  kernel"), "{header}");
    let one = roofline(&["info", arg(&v100())]);
    assert!(!stdout(&one).contains("device  kernel"));
}

/// Against an incomplete baseline, `info --baseline` says so before its totals and speed-ups
/// (the CSV on standard error); names too long for the table's first column are cut.
#[test]
fn a_comparison_says_its_baseline_is_incomplete_and_cuts_long_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut base = read(&v100());
    base.complete = false;
    base.kernels[0].name = format!("k{}", "x".repeat(1000));
    let base_path = dir.path().join("base.json");
    std::fs::write(&base_path, roofline_model::to_json(&base).unwrap()).unwrap();
    let o = roofline(&["info", arg(&v100()), "--baseline", arg(&base_path)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("note: the baseline is INCOMPLETE (its bundle says so; its notes say what is missing): its totals, and every time and speed-up below, cover only what it holds\n"),
        "{text}"
    );
    // The gone kernel's name, cut to 80 characters; no row padded to its full length.
    assert!(
        text.contains(&format!("  k{}…  ", "x".repeat(78))),
        "{text}"
    );
    assert!(!text.contains(&"x".repeat(100)), "{text}");
    assert!(!text.contains(&" ".repeat(100)), "{text}");
    let o = roofline(&[
        "info",
        arg(&v100()),
        "--baseline",
        arg(&base_path),
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("note: the baseline is INCOMPLETE"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).starts_with("kernel,presence,"));
}
