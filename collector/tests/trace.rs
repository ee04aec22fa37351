//! `roofline import` of torch.profiler traces through the binary: recognised by content (gzip
//! or not), a valid bundle written, `info --group-by op` reading it per operator, `plot`
//! drawing its time-based chart when no chart is asked for, the counter
//! trace without kernel times refused with what to add, and `--counters` joining a counter trace
//! with a timing trace. The fixtures are the real traces of
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
    // `plot` with no --chart: the hierarchical chart has nothing to draw (no counters, no
    // machine), so the time-based one is drawn, and said; asked for, the hierarchical refuses.
    // The HTML page needs the viewer's page built in (the `viewer-page` feature); without it,
    // only the SVG is drawn and the page's refusal checked.
    let (svg, html) = (dir.path().join("run.svg"), dir.path().join("run.html"));
    let with_page = roofline_collector::export::html::embedded_template().is_some();
    for target in [&svg, &html] {
        let o = roofline(&[
            "plot",
            out.to_str().unwrap(),
            "-o",
            target.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        if target == &html && !with_page {
            assert_eq!(o.status.code(), Some(1), "{err}");
            assert!(err.contains("--features viewer-page"), "{err}");
            continue;
        }
        assert!(o.status.success(), "{err}");
        assert!(err.contains("note: drawing the time-based chart"), "{err}");
    }
    assert!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .contains("Time-based roofline")
    );
    if with_page {
        assert!(
            std::fs::read_to_string(&html)
                .unwrap()
                .contains("chart=time")
        );
    }
    let o = roofline(&[
        "plot",
        out.to_str().unwrap(),
        "--chart",
        "hierarchical",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing to plot"));
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
        if k.operator.as_ref().is_some_and(|o| o.name == "aten::mm") {
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
    // Only the first column, a (quoted) name, may hold a comma.
    let columns = csv.lines().next().unwrap().split(',').count();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let mut r: Vec<&str> = l.rsplitn(columns, ',').collect();
            r.reverse();
            r
        })
        .collect();
    let ops = roofline_model::analysis::group::group(
        &roofline_model::parse_bundle(&std::fs::read_to_string(&base).unwrap())
            .unwrap()
            .kernels,
        roofline_model::analysis::group::GroupBy::Operator,
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
    // Without --group-by, both runs carrying operators: compared per operator, as the viewer
    // compares them, and said so.
    let table = roofline(&[
        "info",
        slower.to_str().unwrap(),
        "--baseline",
        base.to_str().unwrap(),
    ]);
    assert!(table.status.success());
    assert!(
        String::from_utf8_lossy(&table.stderr).contains("comparing per operator"),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
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
    // --group-by kernel: kernel names, every one matched, nothing said about operators.
    let kernels = roofline(&[
        "info",
        slower.to_str().unwrap(),
        "--baseline",
        base.to_str().unwrap(),
        "--group-by",
        "kernel",
    ]);
    assert!(kernels.status.success());
    assert!(!String::from_utf8_lossy(&kernels.stderr).contains("per operator"));
    let kernels = String::from_utf8(kernels.stdout).unwrap();
    let first = kernels.lines().next().unwrap();
    assert!(first.contains("kernels matched, 0 new, 0 gone"), "{first}");
    assert!(
        kernels
            .lines()
            .nth(2)
            .unwrap()
            .trim_start()
            .starts_with("kernel "),
        "{kernels}"
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

/// Two small SYNTHETIC traces, written here: a timing trace of three launches and a counter
/// trace whose two ranges are the last two.
const TIMING: &str = r#"{"traceEvents": [
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 100, "dur": 5, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 200, "dur": 5, "args": {"correlation": 2}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 300, "dur": 5, "args": {"correlation": 3}},
 {"ph": "X", "cat": "kernel", "name": "synthetic_warmup", "pid": 0, "tid": 7, "ts": 110, "dur": 4, "args": {"device": 0, "stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "synthetic_sgemm", "pid": 0, "tid": 7, "ts": 210, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "synthetic_relu", "pid": 0, "tid": 7, "ts": 310, "dur": 8, "args": {"device": 0, "stream": 7, "correlation": 3}}
], "deviceProperties": [{"id": 0, "name": "SYNTHETIC GPU", "computeMajor": 8, "computeMinor": 0}]}"#;

const RANGES: &str = r#"{"traceEvents": [
 {"ph": "X", "cat": "cuda_profiler_range", "name": "synthetic_sgemm", "pid": 0, "tid": 0, "ts": 1, "dur": 50, "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 1000000, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 0, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 0}},
 {"ph": "X", "cat": "cuda_profiler_range", "name": "synthetic_relu", "pid": 0, "tid": 0, "ts": 51, "dur": 50, "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 0, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 0, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 500}}
], "deviceProperties": [{"id": 0, "name": "SYNTHETIC GPU", "computeMajor": 8, "computeMinor": 0}]}"#;

/// `import TRACE --counters RANGES`: the matched launches carry their ranges' FLOPs and keep
/// their own times; traces that do not join, or `--counters` without a trace, are refused.
#[test]
fn cli_joins_a_counter_trace_with_a_timing_trace() {
    let dir = tempfile::tempdir().unwrap();
    let timing = dir.path().join("timing.json");
    let ranges = dir.path().join("ranges.json");
    let out = dir.path().join("run.json");
    std::fs::write(&timing, TIMING).unwrap();
    std::fs::write(&ranges, RANGES).unwrap();
    let join = |trace: &std::path::Path, counters: &std::path::Path| {
        roofline(&[
            "import",
            trace.to_str().unwrap(),
            "--counters",
            counters.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
    };
    let o = join(&timing, &ranges);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let k = |name: &str| b.kernels.iter().find(|k| k.name == name).unwrap();
    assert_eq!(b.kernels.len(), 3);
    assert_eq!(k("synthetic_sgemm").flops.fp32, Some(2e6));
    assert!((k("synthetic_sgemm").time.total_s - 20e-6).abs() < 1e-18);
    assert_eq!(k("synthetic_relu").flops.fp32, Some(500.0));
    assert!((k("synthetic_relu").time.total_s - 8e-6).abs() < 1e-18);
    assert!(k("synthetic_warmup").flops.is_unknown());
    assert!(
        b.notes
            .iter()
            .any(|n| n.contains("its 2 ranges are launches 2 to 3 of the timing trace's 3")),
        "{:#?}",
        b.notes
    );
    assert!(
        b.description
            .as_deref()
            .unwrap_or("")
            .contains("with the counters of")
    );
    // The traces swapped: the timing one has no kernel events.
    let o = join(&ranges, &timing);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the timing trace has no kernel events"),
        "{err}"
    );
    // Kernels that differ: refused, saying where.
    std::fs::write(&ranges, RANGES.replace("synthetic_relu", "synthetic_gelu")).unwrap();
    let o = join(&timing, &ranges);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("first parts at range 1") && err.contains("synthetic_gelu"),
        "{err}"
    );
    // Said once (issue 29: the mismatch was printed twice, as the error and as its cause).
    assert_eq!(err.matches("first parts at range 1").count(), 1, "{err}");
    // A counter that is not a number: refused naming the range and the metric (issue 29: it
    // was dropped while the join reported a match).
    std::fs::write(
        &ranges,
        RANGES.replace(
            "\"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum\": 500",
            "\"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum\": \"500\"",
        ),
    )
    .unwrap();
    let o = join(&timing, &ranges);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("ranges.json is not a readable torch.profiler trace: event 1 (cuda_profiler_range \"synthetic_relu\"): counter smsp__sass_thread_inst_executed_op_fmul_pred_on.sum = \"500\" is not a number"),
        "{err}"
    );
    // --counters with Nsight Compute CSV: nothing to join.
    let csv = dir.path().join("k.csv");
    std::fs::write(
        &csv,
        "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"1000\"\n",
    )
    .unwrap();
    let o = join(&csv, &ranges);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("none of the files given is one"), "{err}");
}

/// Issue 29: a trace that begins with a UTF-8 byte-order mark (as Windows tools write) was
/// refused ("expected a Chrome trace") although bundles accept one; gzipped or not, it imports.
#[test]
fn a_byte_order_mark_before_a_trace_is_skipped() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let plain = dir.path().join("bom.json");
    std::fs::write(&plain, format!("\u{feff}{TIMING}")).unwrap();
    let gz = dir.path().join("bom.json.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(format!("\u{feff}{TIMING}").as_bytes()).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    for input in [&plain, &gz] {
        let o = roofline(&[
            "import",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(b.kernels.len(), 3);
    }
}

/// Issue 29: `--machine` for another GPU replaced the trace's device without a word (an H100
/// trace became a V100 one). Refused naming both; with `--allow-machine-mismatch`, noted.
#[test]
fn a_trace_against_a_machine_of_another_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let trace = dir.path().join("timing.json");
    std::fs::write(&trace, TIMING).unwrap();
    let v100 = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/bundles/v100-deepcam-example.json");
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "import".to_string(),
            trace.display().to_string(),
            "--machine".into(),
            v100.display().to_string(),
            "-o".into(),
            out.display().to_string(),
        ];
        a.extend(extra.iter().map(|s| (*s).to_string()));
        a
    };
    let run = |a: Vec<String>| roofline(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let o = run(args(&[]));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("describes Tesla V100-SXM2-16GB (compute capability 7.0, 80 SMs), but the kernels ran on SYNTHETIC GPU (compute capability 8.0)"),
        "{e}"
    );
    assert!(!out.exists());
    let o = run(args(&["--allow-machine-mismatch"]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(
        b.notes
            .iter()
            .any(|n| n.starts_with("MACHINE OF ANOTHER GPU: the kernels ran on SYNTHETIC GPU")),
        "{:?}",
        b.notes
    );
}

/// `info --group-by op` counts each operator's calls, checked against the trace read whole: the
/// operator events of that name (`cpu_op`, `Operator` in PyTorch 1.9; ResNet-50, six steps of 53 convolutions; the first layer's
/// input needs no gradient). One call launches several kernels, so F per call is F over calls,
/// not over launches.
#[test]
fn operators_have_their_calls_and_per_call_f() {
    let name = "kineto/resnet50-pytorch-1.9-train.pt.trace.json.gz";
    let mut text = String::new();
    reader(name).read_to_string(&mut text).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let count = |op: &str| {
        v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| (e["cat"] == "cpu_op" || e["cat"] == "Operator") && e["name"] == op)
            .count()
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let o = roofline(&[
        "import",
        path(name).to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = roofline(&[
        "info",
        out.to_str().unwrap(),
        "--group-by",
        "op",
        "--format",
        "csv",
    ]);
    let csv = String::from_utf8(o.stdout).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |c: &str| header.iter().position(|h| *h == c).unwrap();
    for op in [
        "aten::cudnn_convolution",
        "aten::cudnn_convolution_backward_input",
        "aten::cudnn_convolution_backward_weight",
    ] {
        let row: Vec<&str> = csv
            .lines()
            .find(|l| l.starts_with(&format!("{op},")))
            .unwrap()
            .split(',')
            .collect();
        let calls: usize = row[col("calls")].parse().unwrap();
        let launches: usize = row[col("launches")].parse().unwrap();
        assert_eq!(calls, count(op), "{op}");
        assert!(launches > calls, "{op}: {launches} launches, {calls} calls");
        let f: f64 = row[col("complexity_flops")].parse().unwrap();
        let per: f64 = row[col("flops_per_call")].parse().unwrap();
        assert!((per - f / calls as f64).abs() <= 1e-9 * per, "{op}");
    }
    let table = roofline(&["info", out.to_str().unwrap(), "--group-by", "op"]);
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(
        table.contains(" calls ") && table.contains("F/call"),
        "{table}"
    );
}

/// `import TRACE --model-config config.json` on the B200 vLLM trace: the model's configuration
/// read from its file gives the MoE layers their F, the note says the share of the kernel time
/// with F and B; a file that is no configuration, and the options without a trace, are refused.
#[test]
fn cli_reads_a_model_configuration_for_an_llm_trace() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let trace = path("b200-vllm-gpt-oss-tp8-eager.json.gz");
    let config = path("gpt-oss-120b-config.json");
    let o = roofline(&[
        "import",
        trace.to_str().unwrap(),
        "--model-config",
        config.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bundle = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let moe = bundle
        .kernels
        .iter()
        .filter_map(|k| k.operator.as_ref())
        .find(|op| op.name == "vllm::moe_forward")
        .unwrap();
    assert_eq!(
        moe.complexity.map(|c| c.flops),
        Some(6.0 * 888.0 * 4.0 * 2880.0 * 360.0)
    );
    assert!(
        bundle
            .notes
            .iter()
            .any(|n| n.starts_with("F and B for 94.3 % of the kernel time outside the collectives")),
        "{:?}",
        bundle.notes
    );
    assert!(
        bundle
            .provenance
            .command_line
            .windows(2)
            .any(|w| w[0] == "--model-config"),
        "{:?}",
        bundle.provenance.command_line
    );
    // Not a configuration.
    let o = roofline(&[
        "import",
        trace.to_str().unwrap(),
        "--model-config",
        trace.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--model-config") && err.contains("it has neither model_type nor hidden_size"),
        "{err}"
    );
    // A parallelism that is no number of ranks.
    let o = roofline(&[
        "import",
        trace.to_str().unwrap(),
        "--tensor-parallel",
        "0",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--tensor-parallel \"0\": expected a number of ranks"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
