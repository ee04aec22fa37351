//! Traces as older PyTorch releases write them: no `Concrete Inputs` (before 2.1), the
//! categories `Operator`, `Kernel`, `Runtime` (before 1.10), the convolution backward split into
//! `cudnn_convolution_backward_input` and `_weight` (before 1.11), autograd nodes named
//! `CudnnConvolutionBackward` with the forward call's `Sequence number` (1.9), and the first
//! format (1.8): `Input dims` with no element types, no sequence numbers, every call recorded
//! twice.
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

/// A trace fixture's kernel events as the file records them: how many, how many with a duration
/// of 0, and their summed duration, µs.
fn raw_kernels(path: &str) -> (usize, usize, f64) {
    let file = std::fs::File::open(fixture(path)).unwrap();
    let v: Value = serde_json::from_reader(flate2::read::GzDecoder::new(file)).unwrap();
    let mut out = (0, 0, 0.0);
    for e in v["traceEvents"].as_array().unwrap() {
        if e["cat"] == "Kernel" {
            let dur = e["dur"].as_f64().unwrap_or(0.0);
            out.0 += 1;
            out.1 += usize::from(dur == 0.0);
            out.2 += dur;
        }
    }
    out
}

/// Issue 42: the first torch.profiler traces (PyTorch 1.8, January 2021: the TensorBoard plugin's
/// ResNet-50 samples, batch 32, six training steps; `tests/fixtures/traces/kineto/`) record
/// `Input dims` with no element types, no sequence numbers, and every operator twice, one record
/// inside the other. Every input read as "not a tensor", so no call had F. Now F comes from the
/// shapes, the element type (for B) from the kernels' names, each convolution's output from its
/// backward, each call counted once.
#[test]
fn pytorch_1_8_resnet50_traces_get_f_from_their_shapes() {
    let batch = 32.0;
    let per_image = oracle_calls("resnet50-fwd-fp32", "aten::convolution");
    let steps = |v: &[f64]| sorted(v.iter().flat_map(|x| [x * batch; 6]).collect());
    let mut without_stem = per_image.clone();
    without_stem.remove(0);
    for (path, pairs) in [
        (
            "traces/kineto/resnet50-pytorch-1.8-profiler-api.pt.trace.json.gz",
            8394,
        ),
        (
            "traces/kineto/resnet50-pytorch-1.8-autograd-api.pt.trace.json.gz",
            8076,
        ),
    ] {
        let file = std::fs::File::open(fixture(path)).unwrap();
        let t = trace::parse(flate2::read::GzDecoder::new(file)).unwrap();
        let imp = trace::import(&t, &ImportOptions::default()).unwrap();
        // Every kernel event once, and its time: the file's own count and sum, a duration of
        // 0 timed at half the 1 µs resolution.
        let (kernels, zero, dur_us) = raw_kernels(path);
        assert_eq!(imp.kernels.len(), kernels, "{path}");
        assert_eq!(imp.stats.launches, kernels, "{path}");
        assert_eq!(imp.stats.zero_time, zero, "{path}");
        let time: f64 = imp.kernels.iter().map(|k| k.time.total_s).sum();
        let expected = (dur_us + 0.5 * zero as f64) * 1e-6;
        assert!(
            (time - expected).abs() <= 1e-9 * expected,
            "{path}: {time} against {expected}"
        );
        assert_eq!(imp.stats.duplicates, pairs, "{path}");
        // Each operator call once, with its complexity.
        // Per operator name, per call id: its (F, B), if any.
        type Calls<'a> = BTreeMap<&'a str, BTreeMap<u64, Option<(f64, f64)>>>;
        let mut calls: Calls<'_> = BTreeMap::new();
        for k in &imp.kernels {
            if let Some(op) = &k.operator {
                calls
                    .entry(op.name.as_str())
                    .or_default()
                    .insert(op.call, op.complexity.map(|c| (c.flops, c.bytes)));
            }
        }
        let f = |name: &str| -> Vec<f64> {
            sorted(
                calls[name]
                    .values()
                    .map(|c| c.unwrap_or_else(|| panic!("{path}: {name} without F")).0)
                    .collect(),
            )
        };
        // The classifier: addmm [32, 2048] × [2048, 1000] + bias [1000], six calls (one per
        // step, not two: the nested record is the same call), F = 2·32·2048·1000 (the bias not
        // counted, as the addmm rule has it); B in FP32, read from its kernels' names.
        let gemm = 2.0 * 32.0 * 2048.0 * 1000.0;
        assert_eq!(f("aten::addmm"), vec![gemm; 6], "{path}");
        let addmm_bytes = 4.0 * (1000.0 + 32.0 * 2048.0 + 2048.0 * 1000.0 + 32.0 * 1000.0);
        assert!(
            calls["aten::addmm"]
                .values()
                .all(|c| c.unwrap().1 == addmm_bytes),
            "{path}"
        );
        // Its backward: the input's and the weight's gradients, each the same product.
        assert_eq!(f("aten::mm"), vec![gemm; 12], "{path}");
        // Every convolution, forward and both backward halves, exact: the counter's 53 of one
        // image, times 32, six times; the output shapes from the backward calls.
        assert_eq!(per_image.len(), 53);
        for (name, expected) in [
            ("aten::cudnn_convolution", steps(&per_image)),
            ("aten::cudnn_convolution_backward_weight", steps(&per_image)),
            (
                "aten::cudnn_convolution_backward_input",
                steps(&without_stem),
            ),
        ] {
            assert_same(&f(name), &expected, &format!("{path}: {name}"));
        }
        // Elementwise arithmetic: the residual additions, [32, 256, 56, 56] + the same, an FMA
        // per element (self + alpha·other); the ReLUs (threshold_) no arithmetic, their B kept.
        let residual = 2.0 * 32.0 * 256.0 * 56.0 * 56.0;
        assert!(f("aten::add_").contains(&residual), "{path}");
        assert!(f("aten::threshold_").iter().all(|&x| x == 0.0), "{path}");
        // The notes a user reads.
        let notes = imp.notes.join("\n");
        for said in [
            "operator calls recorded twice, one record inside the other (as PyTorch 1.8 writes every call): each counted once",
            "tensors recorded with their shapes but no element type (`Input type` empty, as PyTorch 1.8 writes it): F counted from the shapes",
            "from the backward calls with the same input and weight shapes (the output gradient they all record), 318 calls",
            "aten::add ×318 (no tensor shape recorded: PyTorch 1.8 writes a 0-d tensor and a scalar alike, as [])",
        ] {
            assert!(notes.contains(said), "{path}: {said}\n{notes}");
        }
        assert!(!notes.contains("no tensor input recorded"), "{notes}");
        assert!(!notes.contains("stride 1"), "{notes}");
    }
}

/// A small trace shaped as PyTorch 1.8 writes one (its `Operator`, `Runtime` and `Kernel`
/// categories, `Input dims` with an empty `Input type`, no `Sequence number`, every operator
/// recorded twice, the inner record first): inference, so no backward. A convolution (N=2,
/// 3→8 channels, 16×16, 3×3 at stride 2 and padding 1, so 8×8 out) followed by its batch norm; a
/// second convolution followed by an addition of other channels; a matrix product whose kernel
/// names no type. SYNTHETIC: written here.
fn pytorch_1_8_inference_trace() -> String {
    let mut ext = 0;
    let mut events = Vec::new();
    let mut op = |name: &str, ts: u32, dur: u32, dims: &str| {
        ext += 1;
        // The inner record first, starting later and ending sooner, as PyTorch 1.8 writes it.
        for (start, length) in [(ts + 2, dur - 4), (ts, dur)] {
            events.push(format!(
                r#"{{"ph": "X", "cat": "Operator", "name": "{name}", "pid": 7, "tid": "1890023232", "ts": {start}, "dur": {length}, "args": {{"Input dims": {dims}, "Input type": [], "Input names": [], "Output dims": [], "Output type": [], "Output names": [], "Device": 7, "External id": {ext}, "Extra arguments": [], "Trace name": "PyTorch Profiler", "Trace iteration": 0}}}}"#
            ));
        }
    };
    let (x, w) = ("[2, 3, 16, 16]", "[8, 3, 3, 3]");
    op(
        "aten::conv2d",
        100,
        100,
        &format!("[{x}, {w}, [], [], [], [], []]"),
    );
    op(
        "aten::convolution",
        104,
        90,
        &format!("[{x}, {w}, [], [], [], [], [], [], []]"),
    );
    op(
        "aten::cudnn_convolution",
        110,
        60,
        &format!("[{x}, {w}, [], [], [], [], [], [], []]"),
    );
    op(
        "aten::batch_norm",
        300,
        60,
        "[[2, 8, 8, 8], [8], [8], [8], [8], [], [], [], []]",
    );
    op(
        "aten::cudnn_batch_norm",
        305,
        40,
        "[[2, 8, 8, 8], [8], [8], [8], [8], [], [], []]",
    );
    op(
        "aten::conv2d",
        400,
        100,
        &format!("[{x}, {w}, [], [], [], [], []]"),
    );
    op(
        "aten::cudnn_convolution",
        410,
        60,
        &format!("[{x}, {w}, [], [], [], [], [], [], []]"),
    );
    op("aten::add", 600, 40, "[[2, 5, 8, 8], [2, 5, 8, 8], []]");
    op("aten::mm", 700, 40, "[[4, 6], [6, 5]]");
    let mut corr = 0;
    let mut launch = |ts: u32, kernel: &str| {
        corr += 1;
        events.push(format!(
            r#"{{"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": "1890023232", "ts": {ts}, "dur": 4, "args": {{"cbid": 211, "correlation": {corr}, "external id": 0, "external ts": {ts}}}}}"#
        ));
        events.push(format!(
            r#"{{"ph": "X", "cat": "Kernel", "name": "{kernel}", "pid": 0, "tid": "stream 7", "ts": {}, "dur": 10, "args": {{"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": {corr}, "external id": 0, "registers per thread": 64, "shared memory": 0, "warps per SM": 4.0, "grid": [64, 1, 1], "block": [128, 1, 1]}}}}"#,
            ts + 20
        ));
    };
    launch(
        120,
        "void implicit_convolve_sgemm<float, float, 128, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
    );
    launch(
        320,
        "void cudnn::bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>(float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float const*, float const*, float)",
    );
    launch(
        420,
        "void implicit_convolve_sgemm<float, float, 128, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
    );
    launch(
        610,
        "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, at::detail::Array<char*, 3>)",
    );
    launch(710, "gemmk1_kernel");
    format!(
        r#"{{"schemaVersion": 1, "traceEvents": [{}]}}"#,
        events.join(",\n")
    )
}

#[test]
fn a_pytorch_1_8_format_inference_trace_takes_a_convolution_s_output_from_the_next_operator() {
    let t = trace::parse(pytorch_1_8_inference_trace().as_bytes()).unwrap();
    let imp = trace::import(&t, &ImportOptions::default()).unwrap();
    assert_eq!(imp.kernels.len(), 5);
    assert_eq!(imp.stats.duplicates, 9);
    let complexity = |i: usize| imp.kernels[i].operator.as_ref().unwrap().complexity;
    // By hand: F = 2·N·K·P·Q·C·R·S = 2·2·8·8·8·3·3·3 = 55,296; B in FP32 (the kernel says
    // float): x 1,536, w 216, y 1,024 elements.
    let conv = complexity(0).expect("the first convolution's F");
    assert_eq!(conv.flops, 55_296.0);
    assert_eq!(conv.bytes, 4.0 * (1536.0 + 216.0 + 1024.0));
    // The batch norm on [2, 8, 8, 8]: its training flag is not recorded, so training is
    // assumed (and said), 8 FLOPs per element.
    assert_eq!(complexity(1).unwrap().flops, 8.0 * 1024.0);
    // The second convolution: the next operator reads [2, 5, 8, 8], not its output's 8
    // channels: unknown, never a guess.
    assert_eq!(complexity(2), None);
    // The addition: an FMA per element.
    assert_eq!(complexity(3).unwrap().flops, 2.0 * 640.0);
    // The product whose kernel names no type: F known from the shapes, B not: no complexity,
    // and a note gives its F.
    assert_eq!(complexity(4), None);
    let notes = imp.notes.join("\n");
    for said in [
        "from the input of the operator called next, which reads the output (calls): aten::batch_norm ×1",
        "1 calls that launched kernels named no type: no complexity given, B being unknown (their F from the shapes alone: 240 FLOPs): aten::mm ×1",
        "aten::cudnn_convolution ×1 (stride, padding and dilation not recorded",
        "9 operator calls recorded twice",
    ] {
        assert!(notes.contains(said), "{said}\n{notes}");
    }
}
