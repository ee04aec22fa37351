//! `roofline import` of torch.profiler traces through the binary: recognised by content (gzip
//! or not), a valid bundle written, `info --group-by op` reading it per operator, and the counter
//! trace without kernel times refused with what to add. The fixtures are the real traces of
//! `tests/fixtures/traces/` (see `tests/e2e/trace_import.rs` for the figures checked in depth).

use std::io::Read;
use std::path::PathBuf;
use std::process::Command;

use flate2::read::GzDecoder;

const SHAPES: &str = "sampled-rank-0-shapes.json.gz";
const COUNTERS: &str = "a100-cupti-profiler-counters.json.gz";

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/traces")
        .join(name)
}

fn reader(name: &str) -> GzDecoder<std::fs::File> {
    GzDecoder::new(std::fs::File::open(path(name)).unwrap())
}

fn roofline(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_roofline"))
        .args(args)
        .output()
        .unwrap()
}

/// The CLI recognises the trace by its content (gzip or not), writes a valid bundle, and
/// `info --group-by op` reads it per operator.
#[test]
fn cli_imports_traces_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let plain = dir.path().join("trace.data");
    let mut text = Vec::new();
    reader(SHAPES).read_to_end(&mut text).unwrap();
    std::fs::write(&plain, &text).unwrap();
    for input in [path(SHAPES), plain] {
        let o = roofline(&[
            "import",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(b.kernels.len(), 1154);
        assert!(b.notes.iter().any(|n| n.starts_with("not understood")));
    }
    let o = roofline(&[
        "info",
        out.to_str().unwrap(),
        "--group-by",
        "op",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = String::from_utf8(o.stdout).unwrap();
    let mm = csv
        .lines()
        .find(|l| l.starts_with("aten::mm,"))
        .expect("an aten::mm row");
    assert!(mm.starts_with("aten::mm,232,"), "{mm}");
    // The counter trace: a clear refusal naming what to add.
    let o = roofline(&[
        "import",
        path(COUNTERS).to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no kernel time") && err.contains("gpu__time_duration.sum"),
        "{err}"
    );
}

/// Our CPU-only trace from PyTorch 2.15 (`scripts/torch_cpu_trace.py`): refused with a message that says
/// it is a CPU-only trace and what to record instead; nothing is written.
#[test]
fn cli_refuses_a_cpu_only_trace_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let o = roofline(&[
        "import",
        path("cpu-small-net.json.gz").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cpu-small-net.json.gz")
            && err.contains("CPU-only trace (774 cpu_op events, no GPU activity)")
            && err.contains("ProfilerActivity.CUDA"),
        "{err}"
    );
    assert!(!out.exists());
}
