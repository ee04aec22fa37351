//! Traces as older PyTorch releases write them: no `Concrete Inputs` (before 2.1), the
//! categories `Operator`, `Kernel`, `Runtime` (before 1.10), the convolution backward split into
//! `cudnn_convolution_backward_input` and `_weight` (before 1.11), autograd nodes named
//! `CudnnConvolutionBackward` with the forward call's `Sequence number` (1.9).
//!
//! The real trace is the TensorBoard profiler plugin's ResNet-50 training sample (PyTorch 1.9,
//! four V100s, batch 32, six profiled steps; `tests/fixtures/traces/kineto/`, BSD licence). Its
//! convolutions record no stride or padding: the import takes each output's shape from the
//! autograd node the call made (`trace::derive`), and every convolution's F, forward and both
//! backward halves, is checked against PyTorch 2.15's own FLOP counter on the same architecture
//! (`tests/fixtures/oracle/`, batch 1, scaled by 32). Before, the import assumed stride 1 and
//! padding 0 and came out 1.43 times the true forward F (the stem alone 3.8 times).

use std::collections::BTreeMap;
use std::path::PathBuf;

use roofline_import::trace::{self, ImportOptions};
use serde_json::Value;

fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path)
}

/// The counter's per-call figures for one oracle run, for the calls of `op`, corrected.
fn oracle_calls(run: &str, op: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(fixture("oracle/oracle.json")).unwrap();
    let oracle: Value = serde_json::from_str(&text).unwrap();
    let run = oracle["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == run)
        .unwrap();
    run["calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["op"] == op)
        .map(|c| c["flops_corrected"].as_f64().unwrap())
        .collect()
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

fn assert_same(ours: &[f64], theirs: &[f64], what: &str) {
    assert_eq!(ours.len(), theirs.len(), "{what}: calls");
    for (a, b) in ours.iter().zip(theirs) {
        assert!((a - b).abs() <= 1e-9 * b, "{what}: {a} against {b}");
    }
}

#[test]
fn a_pytorch_1_9_resnet50_trace_gets_every_convolutions_f_exact() {
    let file = std::fs::File::open(fixture(
        "traces/kineto/resnet50-pytorch-1.9-train.pt.trace.json.gz",
    ))
    .unwrap();
    let t = trace::parse(flate2::read::GzDecoder::new(file)).unwrap();
    let imp = trace::import(&t, &ImportOptions::default()).unwrap();
    // Every launch is kept, the 636 recorded with a duration of 0 µs among them.
    assert_eq!(imp.kernels.len(), 8772);
    assert_eq!(imp.stats.zero_time, 636);
    assert!(
        imp.notes
            .iter()
            .any(|n| n.starts_with("636 kernel launches recorded with a duration of 0")),
        "{:?}",
        imp.notes
    );
    // Each operator call's F, once per call, by operator.
    let mut calls: BTreeMap<&str, BTreeMap<u64, Option<f64>>> = BTreeMap::new();
    for k in &imp.kernels {
        if let Some(op) = &k.operator {
            calls
                .entry(op.name.as_str())
                .or_default()
                .insert(op.call, op.complexity.map(|c| c.flops));
        }
    }
    let f = |name: &str| -> Vec<f64> {
        sorted(
            calls[name]
                .values()
                .map(|f| f.unwrap_or_else(|| panic!("{name}: a call without F")))
                .collect(),
        )
    };
    // Six steps of ResNet-50 at batch 32: the counter's 53 convolutions of one image, times 32,
    // six times.
    let batch = 32.0;
    let per_image = oracle_calls("resnet50-fwd-fp32", "aten::convolution");
    assert_eq!(per_image.len(), 53);
    let steps = |v: &[f64]| sorted(v.iter().flat_map(|x| [x * batch; 6]).collect());
    assert_same(&f("aten::cudnn_convolution"), &steps(&per_image), "forward");
    // Backward: the weight gradient of every layer and the input gradient of every layer but
    // the stem (the input image needs none) each cost the layer's forward F; together they are
    // the counter's (corrected) convolution_backward.
    // The counter's calls are in call order: the stem first (3 input channels, 7×7).
    let mut without_stem = per_image.clone();
    without_stem.remove(0);
    assert_same(
        &f("aten::cudnn_convolution_backward_weight"),
        &steps(&per_image),
        "weight gradients",
    );
    assert_same(
        &f("aten::cudnn_convolution_backward_input"),
        &steps(&without_stem),
        "input gradients",
    );
    let backward: f64 = oracle_calls("resnet50-fwdbwd-fp32", "aten::convolution_backward")
        .iter()
        .sum();
    let ours: f64 = f("aten::cudnn_convolution_backward_weight")
        .iter()
        .chain(&f("aten::cudnn_convolution_backward_input"))
        .sum();
    assert!((ours - 6.0 * batch * backward).abs() <= 1e-9 * ours);
}

/// A small trace shaped exactly as PyTorch 1.9 writes one (its `Operator`, `Runtime` and
/// `Kernel` categories, `Input Dims`, `Input type`, `Sequence number`, `Fwd thread id`, no
/// `Concrete Inputs`; the 1.9 sample's argument lists): a training convolution (N=2, 3→8
/// channels, 16×16, 3×3 at stride 2 and padding 1, so 8×8 out) with its backward halves, and the
/// same convolution run again under `no_grad` (no autograd node). SYNTHETIC: written here.
fn pytorch_1_9_trace() -> String {
    let op = |name: &str,
              tid: u32,
              ts: u32,
              dur: u32,
              ext: u32,
              dims: &str,
              types: &str,
              seq: Option<(u32, u32)>| {
        let seq = seq.map_or_else(String::new, |(s, f)| {
            format!(r#", "Fwd thread id": {f}, "Sequence number": {s}"#)
        });
        format!(
            r#"{{"ph": "X", "cat": "Operator", "name": "{name}", "pid": 100, "tid": "{tid}", "ts": {ts}, "dur": {dur}, "args": {{"Device": 100, "External id": {ext}, "Trace name": "PyTorch Profiler", "Trace iteration": 0, "Input Dims": {dims}, "Input type": {types}{seq}}}}}"#
        )
    };
    let launch = |tid: u32, ts: u32, corr: u32, ext: u32, kernel: &str, kts: u32| {
        [
            format!(
                r#"{{"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": "{tid}", "ts": {ts}, "dur": 4, "args": {{"cbid": 211, "correlation": {corr}, "external id": {ext}, "external ts": {ts}}}}}"#
            ),
            format!(
                r#"{{"ph": "X", "cat": "Kernel", "name": "{kernel}", "pid": 0, "tid": "stream 7", "ts": {kts}, "dur": 10, "args": {{"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": {corr}, "external id": {ext}, "registers per thread": 64, "shared memory": 0, "blocks per SM": 1.0, "warps per SM": 4.0, "grid": [64, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 12}}}}"#
            ),
        ]
    };
    let (x, w, b, y) = ("[2, 3, 16, 16]", "[8, 3, 3, 3]", "[8]", "[2, 8, 8, 8]");
    let conv2d_types =
        r#"["float", "float", "float", "GenericList", "GenericList", "GenericList", "Int"]"#;
    let cudnn_types = r#"["float", "float", "GenericList", "GenericList", "GenericList", "Int", "Bool", "Bool", "Bool"]"#;
    let half_types = r#"["GenericList", "float", "float", "GenericList", "GenericList", "GenericList", "Int", "Bool", "Bool", "Bool"]"#;
    let mut events = Vec::new();
    for (start, seq) in [(10, Some((7, 0))), (500, None)] {
        events.push(op(
            "aten::conv2d",
            100,
            start,
            60,
            start + 1,
            &format!("[{x}, {w}, {b}, [], [], [], []]"),
            conv2d_types,
            seq,
        ));
        events.push(op(
            "aten::cudnn_convolution",
            100,
            start + 5,
            40,
            start + 2,
            &format!("[{x}, {w}, [], [], [], [], [], [], []]"),
            cudnn_types,
            seq,
        ));
        events.extend(launch(
            100,
            start + 6,
            start + 1000,
            start + 2,
            "implicit_convolve_sgemm",
            start + 20,
        ));
    }
    events.push(op(
        "CudnnConvolutionBackward",
        200,
        100,
        60,
        90,
        &format!("[{y}]"),
        r#"["float"]"#,
        Some((7, 1)),
    ));
    events.push(op(
        "aten::cudnn_convolution_backward",
        200,
        101,
        58,
        91,
        &format!("[{x}, {y}, {w}, [], [], [], [], [], [], [], []]"),
        r#"["float", "float", "float", "GenericList", "GenericList", "GenericList", "Int", "Bool", "Bool", "Bool", "GenericList"]"#,
        None,
    ));
    events.push(op(
        "aten::cudnn_convolution_backward_input",
        200,
        102,
        20,
        92,
        &format!("[[], {y}, {w}, [], [], [], [], [], [], []]"),
        half_types,
        None,
    ));
    events.extend(launch(200, 103, 3001, 92, "dgrad_engine", 130));
    events.push(op(
        "aten::cudnn_convolution_backward_weight",
        200,
        130,
        20,
        93,
        &format!("[[], {y}, {x}, [], [], [], [], [], [], []]"),
        half_types,
        None,
    ));
    events.extend(launch(200, 131, 3002, 93, "wgrad_alg0_engine", 150));
    format!(
        r#"{{"schemaVersion": 1, "deviceProperties": [{{"id": 0, "name": "Tesla V100-SXM2-16GB", "totalGlobalMem": 16945512448, "computeMajor": 7, "computeMinor": 0, "numSms": 80}}], "traceEvents": [{}]}}"#,
        events.join(",\n")
    )
}

#[test]
fn a_pytorch_1_9_format_trace_counts_its_convolutions_exactly_or_not_at_all() {
    let t = trace::parse(pytorch_1_9_trace().as_bytes()).unwrap();
    let imp = trace::import(&t, &ImportOptions::default()).unwrap();
    assert_eq!(imp.kernels.len(), 4);
    // By hand: F = 2·N·K·P·Q·C·R·S = 2·2·8·8·8·3·3·3 = 55,296 per direction.
    let f = 2.0 * 2.0 * 8.0 * 64.0 * 3.0 * 9.0;
    let by_kernel = |name: &str| {
        imp.kernels
            .iter()
            .filter(|k| k.name == name)
            .map(|k| k.operator.as_ref().unwrap().complexity.map(|c| c.flops))
            .collect::<Vec<_>>()
    };
    // The training call: its output's shape from CudnnConvolutionBackward (same sequence
    // number), exact; the no_grad call has no autograd node, so no output shape: unknown.
    assert_eq!(by_kernel("implicit_convolve_sgemm"), [Some(f), None]);
    // The halves: the input's and weight's shapes from the enclosing backward call.
    assert_eq!(by_kernel("dgrad_engine"), [Some(f)]);
    assert_eq!(by_kernel("wgrad_alg0_engine"), [Some(f)]);
    // What the unknown one lacks is said, never assumed.
    let notes = imp.notes.join("\n");
    assert!(
        notes.contains("aten::cudnn_convolution")
            && notes.contains("stride, padding and dilation not recorded"),
        "{notes}"
    );
    assert!(!notes.contains("stride 1"), "{notes}");
}
