//! `roofline import` of torch.profiler traces through the binary: recognised by content (gzip
//! or not), a valid bundle written, `info --group-by op` reading it per operator, and the counter
//! trace without kernel times refused with what to add. The fixtures are the real traces of
//! `tests/fixtures/traces/` (see `tests/e2e/trace_import.rs` for the figures checked in depth).

use std::io::Read;
use std::path::PathBuf;

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

mod common;
use common::roofline;

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

/// `info --baseline --group-by op` compares operators by name: the real trace against a
/// SYNTHETIC copy of it in which every kernel that `aten::mm` launched takes twice as long (the
/// only change), so `aten::mm` is 2× slower (speed-up 0.50), every other operator unchanged, and
/// the total grows by exactly the `aten::mm` time.
#[test]
fn info_compares_runs_per_operator() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("run.json");
    let slower = dir.path().join("run-slower-mm-SYNTHETIC.json");
    let o = roofline(&[
        "import",
        path(SHAPES).to_str().unwrap(),
        "-o",
        base.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut b = roofline_model::parse_bundle(&std::fs::read_to_string(&base).unwrap()).unwrap();
    b.description = Some(
        "SYNTHETIC: the real trace with every aten::mm kernel's time doubled, for a test".into(),
    );
    let mut mm_s = 0.0;
    for k in &mut b.kernels {
        if k.tags.get("op").map(String::as_str) == Some("aten::mm") {
            mm_s += k.time.total_s;
            k.time.total_s *= 2.0;
            if let Some(p) = &mut k.time.per_launch {
                p.min_s *= 2.0;
                p.mean_s *= 2.0;
                p.max_s *= 2.0;
                p.median_s = p.median_s.map(|m| m * 2.0);
                p.stddev_s = p.stddev_s.map(|s| s * 2.0);
            }
        }
    }
    assert!(mm_s > 0.0);
    std::fs::write(&slower, roofline_model::to_json(&b).unwrap()).unwrap();
    let csv = roofline(&[
        "info",
        slower.to_str().unwrap(),
        "--baseline",
        base.to_str().unwrap(),
        "--group-by",
        "op",
        "--format",
        "csv",
    ]);
    assert!(
        csv.status.success(),
        "{}",
        String::from_utf8_lossy(&csv.stderr)
    );
    let csv = String::from_utf8(csv.stdout).unwrap();
    // The seven figures never hold a comma; a quoted kernel name may.
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let mut r: Vec<&str> = l.rsplitn(8, ',').collect();
            r.reverse();
            r
        })
        .collect();
    let ops = roofline_model::group::group(
        &roofline_model::parse_bundle(&std::fs::read_to_string(&base).unwrap())
            .unwrap()
            .kernels,
        roofline_model::group::GroupBy::Operator,
    );
    // One row per operator, every one in both runs.
    assert_eq!(rows.len(), ops.len());
    let mut unchanged = 0;
    for r in &rows {
        assert_eq!(r[1], "both", "{r:?}");
        let (before, after): (f64, f64) = (r[2].parse().unwrap(), r[3].parse().unwrap());
        let speedup: f64 = r[5].parse().unwrap();
        if r[0] == "aten::mm" {
            assert!((before - mm_s).abs() <= 1e-12 * mm_s, "{r:?}");
            assert!((after - 2.0 * mm_s).abs() <= 1e-12 * mm_s, "{r:?}");
            assert!((speedup - 0.5).abs() < 1e-12, "{r:?}");
        } else {
            assert_eq!(before, after, "{r:?}");
            assert_eq!(speedup, 1.0, "{r:?}");
            unchanged += 1;
        }
    }
    assert_eq!(unchanged, ops.len() - 1);
    // Per kernel, the same kernel names match one to one, each mm kernel 2× slower.
    let table = roofline(&[
        "info",
        slower.to_str().unwrap(),
        "--baseline",
        base.to_str().unwrap(),
        "--group-by",
        "op",
    ]);
    assert!(table.status.success());
    let table = String::from_utf8(table.stdout).unwrap();
    let first = table.lines().next().unwrap();
    assert!(
        first.contains(&format!("{} operators matched, 0 new, 0 gone", ops.len())),
        "{first}"
    );
    assert!(
        table
            .lines()
            .nth(2)
            .unwrap()
            .trim_start()
            .starts_with("operator "),
        "{table}"
    );
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with("aten::mm "))
        .unwrap();
    assert!(line.contains("0.50×"), "{line}");
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
