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
