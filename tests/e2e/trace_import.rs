//! Importing two real torch.profiler (Kineto) traces, checked against figures computed here
//! independently from the same files read whole as `serde_json::Value`.
//!
//! `fixtures/traces/` holds two traces from the public HolisticTraceAnalysis repository (MIT
//! licence beside them): `sampled-rank-0-shapes.json.gz`, a training step with shapes recorded
//! (kernel events with durations), and `a100-cupti-profiler-counters.json.gz`, Kineto's CUPTI
//! range profiler on an A100 (per-kernel counters, no kernel events, no kernel times).
//! `cpu-small-net.json.gz` was made here with PyTorch 2.15 on the CPU only (no GPU) by
//! `scripts/torch_cpu_trace.py` (a small conv + LSTM + transformer network): a current trace
//! format, `cpu_op` events with shapes and no GPU activity, whose operators' F is counted by
//! hand below. `cpu-cnn-pooling.json.gz`, made the same way with PyTorch 2.11 (the GPU host's
//! version), holds the poolings, losses, an `.out` call and a random fill.

use std::io::Read;
use std::path::PathBuf;

use flate2::read::GzDecoder;
use roofline_import::ncu::{self, Convention};
use roofline_import::trace::{self, ImportOptions, import::ImportError};
use roofline_model::bundle::Datapath;
use roofline_tests::fixtures;
use serde_json::Value;

fn path(name: &str) -> PathBuf {
    fixtures().join("traces").join(name)
}

fn reader(name: &str) -> GzDecoder<std::fs::File> {
    GzDecoder::new(std::fs::File::open(path(name)).unwrap())
}

/// The whole trace as a JSON value: the independent reading.
fn value(name: &str) -> Value {
    let mut s = String::new();
    reader(name).read_to_string(&mut s).unwrap();
    serde_json::from_str(&s).unwrap()
}

fn events<'a>(v: &'a Value, cat: &str) -> Vec<&'a Value> {
    v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == cat)
        .collect()
}

const SHAPES: &str = "sampled-rank-0-shapes.json.gz";
const COUNTERS: &str = "a100-cupti-profiler-counters.json.gz";
const CPU: &str = "cpu-small-net.json.gz";
const CNN: &str = "cpu-cnn-pooling.json.gz";

#[test]
fn shapes_trace_keeps_every_launch_and_its_time() {
    let v = value(SHAPES);
    let kernels = events(&v, "kernel");
    assert_eq!(kernels.len(), 1154);
    let t = trace::parse(reader(SHAPES)).unwrap();
    let imp = trace::import(&t, &ImportOptions::default()).unwrap();
    assert_eq!(imp.kernels.len(), kernels.len());
    assert_eq!(imp.stats.launches, kernels.len());
    let mut sum = 0.0;
    for (k, e) in imp.kernels.iter().zip(&kernels) {
        assert_eq!(k.name, e["name"].as_str().unwrap());
        assert_eq!(k.launches, 1);
        let dur = e["dur"].as_f64().unwrap();
        assert_eq!(k.time.total_s, dur * 1e-6, "{}", k.name);
        assert_eq!(
            k.tags["stream"],
            e["args"]["stream"].as_i64().unwrap().to_string()
        );
        sum += dur;
    }
    assert_eq!(sum, 606_519.0, "the trace's kernel time, µs");
    assert!((imp.stats.time_s - sum * 1e-6).abs() < 1e-12);
    // Copies and sets are apart, and counted.
    let copies = events(&v, "gpu_memcpy");
    let sets = events(&v, "gpu_memset");
    assert_eq!((imp.stats.memcpy.0, imp.stats.memset.0), (40, 10));
    let bytes: f64 = copies
        .iter()
        .map(|e| e["args"]["bytes"].as_f64().unwrap())
        .sum();
    assert_eq!(imp.stats.memcpy.1, bytes);
    assert_eq!(sets.len(), 10);
    assert!(!imp.kernels.iter().any(|k| k.name.starts_with("Memcpy")));
    // Rank from distributedInfo.
    assert!(imp.kernels.iter().all(|k| k.tags["rank"] == "0"));
}

/// Each kernel's operator is the innermost `cpu_op` on its launch call's thread whose span holds
/// the call (of equal spans, the one written later), found here by brute force; `2·M·N·K` of every
/// `aten::mm` and the bytes of every gather, scatter and `index_select` from its recorded dims.
#[test]
fn shapes_trace_links_operators_and_counts_matmuls() {
    let v = value(SHAPES);
    let ops = events(&v, "cpu_op");
    let runtime = events(&v, "cuda_runtime");
    let kernels = events(&v, "kernel");
    let t = trace::parse(reader(SHAPES)).unwrap();
    let imp = trace::import(&t, &ImportOptions::default()).unwrap();
    let span = |e: &Value| {
        let ts = e["ts"].as_f64().unwrap();
        (ts, ts + e["dur"].as_f64().unwrap())
    };
    let mut linked = 0;
    let mut mm_checked = 0;
    let mut indexing_checked = 0;
    for (k, e) in imp.kernels.iter().zip(&kernels) {
        let call = runtime
            .iter()
            .find(|r| r["args"]["correlation"] == e["args"]["correlation"])
            .unwrap();
        let (cs, ce) = span(call);
        let inner = ops
            .iter()
            .enumerate()
            .filter(|(_, o)| o["pid"] == call["pid"] && o["tid"] == call["tid"])
            .filter(|(_, o)| {
                let (s, e) = span(o);
                s <= cs && ce <= e
            })
            .min_by(|a, b| {
                let (da, db) = (span(a.1), span(b.1));
                (da.1 - da.0)
                    .partial_cmp(&(db.1 - db.0))
                    .unwrap()
                    .then(db.0.partial_cmp(&da.0).unwrap())
                    // Equal spans: Kineto writes a parent before its child.
                    .then(b.0.cmp(&a.0))
            });
        match inner {
            None => assert!(k.operator.is_none(), "{}", k.name),
            Some((i, o)) => {
                linked += 1;
                let op = k.operator.as_ref().unwrap();
                assert_eq!(op.name, o["name"].as_str().unwrap());
                assert_eq!(op.call, i as u64);
                if o["name"] == "aten::mm" {
                    let d = &o["args"]["Input Dims"];
                    let (m, kk, n) = (
                        d[0][0].as_f64().unwrap(),
                        d[0][1].as_f64().unwrap(),
                        d[1][1].as_f64().unwrap(),
                    );
                    assert_eq!(d[1][0].as_f64().unwrap(), kk);
                    let c = op.complexity.unwrap();
                    let f = c.flops;
                    assert_eq!(f, 2.0 * m * n * kk);
                    assert_eq!(c.bytes, 4.0 * (m * kk + kk * n + m * n), "float32 operands");
                    assert_eq!(c.datapath, Some(Datapath::Fp32));
                    if op.kernels == 1 {
                        assert_eq!(k.complexity.unwrap().flops, f);
                    }
                    // No counters in this trace: the kernel's FLOPs are unknown, not F.
                    assert!(k.flops.is_unknown());
                    mm_checked += 1;
                }
                // The indexing operators, bytes only: n indices of int64, the elements they
                // select from a source of s elements read once each (at most s), per operator.
                let name = o["name"].as_str().unwrap();
                if [
                    "aten::gather",
                    "aten::scatter_",
                    "aten::scatter_add_",
                    "aten::index_select",
                ]
                .contains(&name)
                {
                    let d = &o["args"]["Input Dims"];
                    let ty = &o["args"]["Input type"];
                    let numel = |i: usize| -> f64 {
                        d[i].as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_f64().unwrap())
                            .product()
                    };
                    let elt = |i: usize| match ty[i].as_str().unwrap() {
                        "float" => 4.0,
                        "long" => 8.0,
                        other => panic!("{other}"),
                    };
                    assert_eq!(elt(2), 8.0, "int64 indices");
                    let (s, n, e) = (numel(0), numel(2), elt(0));
                    let expected = match name {
                        "aten::gather" | "aten::index_select" => 8.0 * n + (n.min(s) + n) * e,
                        "aten::scatter_" => 8.0 * n + n * elt(3) + n.min(s) * e,
                        _ => 8.0 * n + n * elt(3) + 2.0 * n.min(s) * e,
                    };
                    let b = op.complexity.unwrap().bytes;
                    assert_eq!(b, expected, "{name} {d}");
                    assert_eq!(k.complexity.unwrap().bytes, expected);
                    indexing_checked += 1;
                }
            }
        }
    }
    assert_eq!(linked, imp.stats.linked);
    assert_eq!(linked, 1138);
    assert_eq!(mm_checked, 232);
    assert_eq!(indexing_checked, 10);
    let summary: Vec<_> = imp
        .notes
        .iter()
        .filter(|n| n.starts_with("not understood"))
        .collect();
    assert_eq!(summary.len(), 1, "one summary note");
    assert!(summary[0].contains("16 of 1154 kernel launches have no operator"));
    // The 2020-era trace records cat's tensor list without shapes; each call is listed with why.
    assert!(
        summary[0].contains("aten::cat ×34 (the tensor lists' shapes were not recorded)"),
        "{}",
        summary[0]
    );
}

/// A kernel's FLOPs per precision are those of the range's raw counter values: FMA counts
/// twice, and a half-precision instruction works on two values (Nsight Compute's convention).
fn assert_flops_of_range(k: &roofline_model::bundle::Kernel, range: &Value) {
    let a = &range["args"];
    let c = |op: &str| {
        a[format!("smsp__sass_thread_inst_executed_op_{op}_pred_on.sum")]
            .as_f64()
            .unwrap()
    };
    assert_eq!(k.flops.fp32, Some(2.0 * c("ffma") + c("fmul") + c("fadd")));
    assert_eq!(k.flops.fp64, Some(2.0 * c("dfma") + c("dmul") + c("dadd")));
    assert_eq!(
        k.flops.fp16,
        Some(4.0 * c("hfma") + 2.0 * c("hmul") + 2.0 * c("hadd"))
    );
}

/// The counter trace: 77 ranges, each matched in order to a launch call and so to its
/// operator, FLOPs per precision from the counters with the Nsight Compute table, and no kernel
/// time, which the import refuses to invent.
#[test]
fn counter_trace_flops_links_and_no_time() {
    let v = value(COUNTERS);
    let ranges = events(&v, "cuda_profiler_range");
    assert_eq!(ranges.len(), 77);
    let t = trace::parse(reader(COUNTERS)).unwrap();
    assert_eq!(t.ranges.len(), 77);
    assert!(t.kernels.is_empty());
    // The ranges' counters, through the ncu metric table (a placeholder 1 s time only to run the
    // conversion; FLOPs do not depend on it and no bundle is written).
    for (i, r) in ranges.iter().enumerate() {
        let mut launch = trace::import::range_launch(&t, i);
        assert_eq!(launch.name, r["name"].as_str().unwrap());
        assert_eq!(launch.compute_capability.as_deref(), Some("8.0"));
        launch.metrics.insert("gpu__time_duration.sum".into(), 1.0);
        let o = ncu::ImportOptions {
            convention: Convention::Current,
            arch: None,
            source: roofline_model::bundle::DataSource::Import,
        };
        let k = ncu::to_kernels(&[launch], &o).unwrap().kernels.remove(0);
        assert_flops_of_range(&k, r);
    }
    // Range i is the i-th kernel launch call; its operator the innermost cpu_op around it.
    let mut calls: Vec<&Value> = events(&v, "cuda_runtime")
        .into_iter()
        .filter(|r| r["name"] == "cudaLaunchKernel")
        .collect();
    calls.sort_by(|a, b| a["ts"].as_f64().partial_cmp(&b["ts"].as_f64()).unwrap());
    assert_eq!(calls.len(), 77);
    let ops = events(&v, "cpu_op");
    let links = trace::link::link(&t);
    assert!(links.from_ranges);
    for (i, call) in calls.iter().enumerate() {
        let ts = call["ts"].as_f64().unwrap();
        let te = ts + call["dur"].as_f64().unwrap();
        let inner = ops
            .iter()
            .filter(|o| o["tid"] == call["tid"])
            .filter(|o| {
                let s = o["ts"].as_f64().unwrap();
                s <= ts && te <= s + o["dur"].as_f64().unwrap()
            })
            .min_by(|a, b| a["dur"].as_f64().partial_cmp(&b["dur"].as_f64()).unwrap())
            .map(|o| o["name"].as_str().unwrap());
        let ours = links.launch_op[i].map(|o| t.name(t.ops[o].name));
        assert_eq!(ours, inner, "range {i}");
    }
    let names: Vec<&str> = links
        .launch_op
        .iter()
        .map(|o| o.map_or("", |o| t.name(t.ops[o].name)))
        .collect();
    assert!(names.contains(&"aten::cudnn_convolution"));
    assert!(names.contains(&"aten::addmm"));
    // No kernel time anywhere: refused, with the metric to add.
    match trace::import(&t, &ImportOptions::default()) {
        Err(ImportError::CountersWithoutTime {
            ranges: 77,
            metrics,
        }) => {
            assert!(metrics.contains("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"));
        }
        other => panic!("{other:?}"),
    }
}

/// A timing trace for the counter trace, SYNTHETIC: the real A100 trace with its ranges taken
/// out and, for each kernel launch call (in launch order), a kernel event named as the matching
/// range, linked by the call's correlation id, lasting `3 + i` µs. Only the join's mechanism is
/// tested with it: no trace of the same program without the range profiler is public.
fn synthetic_timing_trace(v: &Value, rename: impl Fn(usize, &str) -> String) -> String {
    let ranges = events(v, "cuda_profiler_range");
    let mut calls: Vec<&Value> = events(v, "cuda_runtime")
        .into_iter()
        .filter(|r| r["name"] == "cudaLaunchKernel")
        .collect();
    calls.sort_by(|a, b| a["ts"].as_f64().partial_cmp(&b["ts"].as_f64()).unwrap());
    let mut out: Vec<Value> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] != "cuda_profiler_range")
        .cloned()
        .collect();
    for (i, (call, range)) in calls.iter().zip(&ranges).enumerate() {
        let name = range["name"].as_str().unwrap();
        let name = if name == "__missing__" {
            "synthetic_kernel_left_unnamed_by_kineto"
        } else {
            name
        };
        out.push(serde_json::json!({
            "ph": "X", "cat": "kernel", "name": rename(i, name), "pid": 0, "tid": 7,
            "ts": call["ts"].as_f64().unwrap() + 10.0, "dur": 3.0 + i as f64,
            "args": {"device": 0, "stream": 7, "correlation": call["args"]["correlation"],
                     "grid": [1, 1, 1], "block": [128, 1, 1]}
        }));
    }
    let mut whole = v.clone();
    whole["traceEvents"] = Value::Array(out);
    whole.to_string()
}

/// The counter trace joined with a timing trace (SYNTHETIC, [`synthetic_timing_trace`]): all 77
/// ranges placed, in launch order, each launch keeping its own time and taking its range's
/// FLOPs per precision from the counters (computed here from the raw values); the operators come
/// from the timing trace. Traces of the wrong kind, or whose kernels differ, are refused.
#[test]
fn counter_trace_joined_with_a_timing_trace() {
    let v = value(COUNTERS);
    let ranges = events(&v, "cuda_profiler_range");
    let counters = trace::parse(reader(COUNTERS)).unwrap();
    let timing_text = synthetic_timing_trace(&v, |_, n| n.to_string());
    let timing = trace::parse(timing_text.as_bytes()).unwrap();
    assert_eq!(timing.kernels.len(), 77);
    assert!(timing.ranges.is_empty());
    let imp = trace::import_with_counters(&timing, &counters, &ImportOptions::default()).unwrap();
    assert_eq!(imp.kernels.len(), 77);
    assert_eq!(imp.stats.launches, 77);
    assert_eq!(imp.stats.with_counters, 77);
    for (i, (k, r)) in imp.kernels.iter().zip(&ranges).enumerate() {
        assert!(
            (k.time.total_s - (3.0 + i as f64) * 1e-6).abs() < 1e-15,
            "{i}"
        );
        assert_flops_of_range(k, r);
        assert_eq!(k.block, Some([128, 1, 1]));
    }
    let ops: Vec<&str> = imp
        .kernels
        .iter()
        .filter_map(|k| k.operator.as_ref().map(|o| o.name.as_str()))
        .collect();
    assert!(ops.contains(&"aten::cudnn_convolution"), "{ops:?}");
    assert!(
        imp.notes
            .iter()
            .any(|n| n.contains("its 77 ranges are launches 1 to 77")
                && n.contains("1 ranges Kineto left unnamed")),
        "{:#?}",
        imp.notes
    );
    // The wrong traces, or traces of other kernels, are refused.
    assert_eq!(
        trace::import_with_counters(&counters, &counters, &ImportOptions::default()).unwrap_err(),
        ImportError::JoinWithoutKernels { ranges: 77 }
    );
    assert_eq!(
        trace::import_with_counters(&timing, &timing, &ImportOptions::default()).unwrap_err(),
        ImportError::JoinWithoutRanges { kernels: 77 }
    );
    let other = synthetic_timing_trace(&v, |i, n| {
        if i == 40 {
            "some_other_kernel".into()
        } else {
            n.to_string()
        }
    });
    let other = trace::parse(other.as_bytes()).unwrap();
    let e = trace::import_with_counters(&other, &counters, &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(
            &e,
            ImportError::Join {
                device: Some(0),
                ..
            }
        ) && e.to_string() == "device 0",
        "{e}"
    );
    // Where the sequences part is the error's cause (printed once after it, not twice).
    let cause = std::error::Error::source(&e)
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        cause.contains("first parts at range 40") && cause.contains("\"some_other_kernel\""),
        "{cause}"
    );
}

/// Our CPU-only trace (PyTorch 2.15): every `cpu_op` read, in order, with its name, thread,
/// `Input Dims`, `Input type` and `Concrete Inputs` as the raw JSON has them; module frames
/// (`with_stack` + `with_modules`) and annotations read; each operator inside its module.
#[test]
fn cpu_trace_operators_and_recorded_inputs() {
    use roofline_import::operators::{Arg, Dtype};
    let v = value(CPU);
    let raw = events(&v, "cpu_op");
    assert_eq!(raw.len(), 774);
    let t = trace::parse(reader(CPU)).unwrap();
    assert_eq!(t.ops.len(), raw.len());
    assert!(t.kernels.is_empty() && t.runtimes.is_empty() && t.ranges.is_empty());
    let mut with_inputs = 0;
    for (op, e) in t.ops.iter().zip(&raw) {
        assert_eq!(t.name(op.name), e["name"].as_str().unwrap());
        assert_eq!(
            t.threads[op.thread as usize],
            format!("{}/{}", e["pid"], e["tid"])
        );
        assert_eq!(op.external_id, e["args"]["External id"].as_i64());
        let dur_ns = (e["dur"].as_f64().unwrap() * 1000.0).round() as i64;
        assert!((op.end - op.ts - dur_ns).abs() <= 1, "{}", e["name"]);
        let Some(i) = op.inputs else {
            assert!(e["args"].get("Input Dims").is_none(), "{}", e["name"]);
            continue;
        };
        with_inputs += 1;
        let rec = &t.inputs[i as usize];
        let dims = e["args"]["Input Dims"].as_array().unwrap();
        let types = e["args"]["Input type"].as_array().unwrap();
        assert_eq!(
            &*rec.dims_text,
            serde_json::to_string(&e["args"]["Input Dims"]).unwrap()
        );
        assert_eq!(rec.inputs.args.len(), dims.len());
        for ((arg, d), ty) in rec.inputs.args.iter().zip(dims).zip(types) {
            let shape = |d: &Value| -> Vec<u64> {
                d.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect()
            };
            let expected = match ty.as_str().unwrap() {
                "float" => Arg::Tensor(Dtype::F32, shape(d)),
                "long int" => Arg::Tensor(Dtype::I64, shape(d)),
                "TensorList" => Arg::Tensors(d.as_array().unwrap().iter().map(shape).collect()),
                "Scalar" | "ScalarList" | "" => Arg::Other,
                _ => continue, // other element types: the operators module's unit tests
            };
            assert_eq!(arg, &expected, "{} {d} {ty}", e["name"]);
        }
        let concrete: Vec<String> = e["args"]["Concrete Inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect();
        assert_eq!(rec.inputs.concrete.as_ref(), Some(&concrete));
    }
    let raw_with = raw
        .iter()
        .filter(|e| e["args"].get("Input Dims").is_some())
        .count();
    assert_eq!(with_inputs, raw_with);
    // Annotations and module frames.
    let ann: Vec<&str> = t.annotations.iter().map(|a| t.name(a.name)).collect();
    assert!(ann.contains(&"ProfilerStep#2"), "{ann:?}");
    let modules: Vec<&str> = t.modules.iter().map(|m| t.name(m.name)).collect();
    let raw_modules = events(&v, "python_function")
        .into_iter()
        .filter(|e| e["name"].as_str().unwrap().starts_with("nn.Module: "))
        .count();
    assert_eq!(modules.len(), raw_modules);
    for m in [
        "Conv2d_0",
        "Conv2d_1",
        "LSTM_0",
        "MultiheadAttention_0",
        "Linear_2",
    ] {
        assert!(modules.contains(&format!("nn.Module: {m}").as_str()), "{m}");
    }
    // Each forward operator of interest lies inside its module's frame, on the same thread.
    for (op_name, module) in [
        ("aten::lstm", "nn.Module: LSTM_0"),
        (
            "aten::scaled_dot_product_attention",
            "nn.Module: MultiheadAttention_0",
        ),
    ] {
        let op = t.ops.iter().find(|o| t.name(o.name) == op_name).unwrap();
        let m = t.modules.iter().find(|m| t.name(m.name) == module).unwrap();
        assert_eq!(op.thread, m.thread);
        assert!(m.ts <= op.ts && op.end <= m.end, "{op_name} in {module}");
    }
}

/// The complexity of the first call of `name` recorded with these `Input Dims` (compact JSON).
fn recorded_cost(t: &trace::Trace, name: &str, dims: &str) -> roofline_import::operators::OpCost {
    let op = t
        .ops
        .iter()
        .find(|o| {
            t.name(o.name) == name
                && o.inputs
                    .is_some_and(|i| &*t.inputs[i as usize].dims_text == dims)
        })
        .unwrap_or_else(|| panic!("{name} {dims}"));
    roofline_import::operators::op_cost(name, &t.inputs[op.inputs.unwrap() as usize].inputs)
        .unwrap_or_else(|e| panic!("{name} {dims}: {e:?}"))
}

/// B of the pooling, loss, `.out` and random-fill calls of the CNN trace (PyTorch 2.11, CPU
/// only, `scripts/torch_cpu_trace.py cnn`), counted by hand from the script's shapes: each
/// bytes only, F = 0, every figure in 4-byte floats and 8-byte `int64` indices.
#[test]
fn cnn_trace_pooling_and_losses_by_hand() {
    let t = trace::parse(reader(CNN)).unwrap();
    let input = 2.0 * 8.0 * 15.0 * 15.0; // after the convolution
    let (p1, p2, p3) = (2.0 * 8.0 * 64.0, 2.0 * 8.0 * 16.0, 2.0 * 8.0 * 4.0); // 8×8, 4×4, 2×2
    for (name, dims, bytes) in [
        // k 3, stride 2, padding 1: 15 → 8; input read, output and indices written.
        (
            "aten::max_pool2d_with_indices",
            "[[2,8,15,15],[],[],[],[],[]]",
            4.0 * (input + p1) + 8.0 * p1,
        ),
        // k 3, stride 2, ceil mode: 8 → 4 (3 without it).
        (
            "aten::max_pool2d_with_indices",
            "[[2,8,8,8],[],[],[],[],[]]",
            4.0 * (p1 + p2) + 8.0 * p2,
        ),
        (
            "aten::avg_pool2d",
            "[[2,8,4,4],[],[],[],[],[],[]]",
            4.0 * (p2 + p3),
        ),
        (
            "aten::adaptive_max_pool2d",
            "[[2,8,4,4],[]]",
            4.0 * (p2 + p3) + 8.0 * p3,
        ),
        (
            "aten::_adaptive_avg_pool2d",
            "[[2,8,4,4],[]]",
            4.0 * (p2 + p3),
        ),
        // Backward: the output's gradient and the indices read, the input's gradient written.
        (
            "aten::max_pool2d_with_indices_backward",
            "[[2,8,8,8],[2,8,15,15],[],[],[],[],[],[2,8,8,8]]",
            4.0 * (p1 + input) + 8.0 * p1,
        ),
        (
            "aten::adaptive_max_pool2d_backward",
            "[[2,8,2,2],[2,8,4,4],[2,8,2,2]]",
            4.0 * (p3 + p2) + 8.0 * p3,
        ),
        (
            "aten::_adaptive_avg_pool2d_backward",
            "[[2,8,2,2],[2,8,4,4]]",
            4.0 * (p3 + p2),
        ),
        (
            "aten::avg_pool2d_backward",
            "[[2,8,2,2],[2,8,4,4],[],[],[],[],[],[]]",
            4.0 * (p3 + p2),
        ),
        // Losses on 2×4: both tensors read, the squared differences written (the mean is its own
        // call); the backward's `grad_input` overload records its sized output last, written.
        ("aten::mse_loss", "[[2,4],[2,4],[]]", 4.0 * 24.0),
        ("aten::smooth_l1_loss", "[[2,4],[2,4],[],[]]", 4.0 * 24.0),
        (
            "aten::mse_loss_backward",
            "[[],[2,4],[2,4],[],[2,4]]",
            4.0 * (1.0 + 8.0 + 8.0 + 8.0),
        ),
        (
            "aten::smooth_l1_loss_backward",
            "[[],[2,4],[2,4],[],[],[2,4]]",
            4.0 * 25.0,
        ),
        // `abs(x, out=torch.empty(0))`: x read, its absolute values written.
        (
            "aten::abs",
            "[[2,3,15,15],[0]]",
            4.0 * 2.0 * 2.0 * 3.0 * 225.0,
        ),
        ("aten::uniform_", "[[4],[],[],[]]", 4.0 * 4.0),
    ] {
        let c = recorded_cost(&t, name, dims);
        assert_eq!(c.complexity.flops, 0.0, "{name} {dims}");
        assert_eq!(c.complexity.bytes, bytes, "{name} {dims}");
    }
}

/// F of the CPU trace's matmul, convolution, LSTM and attention calls, counted by hand from the
/// shapes the script sets (stride, padding, dilation and groups read from `Concrete Inputs`);
/// and the import says plainly that a CPU-only trace has nothing for a roofline.
#[test]
fn cpu_trace_complexity_by_hand_and_no_kernels() {
    let t = trace::parse(reader(CPU)).unwrap();
    let cost = |name: &str, dims: &str| recorded_cost(&t, name, dims);
    // conv1: 2×3×16×16 input, 8 filters 3×3, stride 2, padding 1: 8×8 output.
    let c = cost("aten::conv2d", "[[2,3,16,16],[8,3,3,3],[8],[],[],[],[]]");
    assert_eq!(c.complexity.flops, 2.0 * 2.0 * 8.0 * 64.0 * 3.0 * 9.0);
    // B: x, w, y and the bias, 4 bytes each.
    assert_eq!(
        c.complexity.bytes,
        4.0 * (2.0 * 3.0 * 256.0 + 216.0 + 2.0 * 8.0 * 64.0 + 8.0)
    );
    assert!(
        !c.assumed.iter().any(|a| a.contains("not recorded")),
        "{:?}",
        c.assumed
    );
    // conv2: 2×8×8×8, 8 filters of 4 channels (groups 2), padding 2, dilation 2: 8×8 output.
    let c = cost("aten::conv2d", "[[2,8,8,8],[8,4,3,3],[8],[],[],[],[]]");
    assert_eq!(c.complexity.flops, 2.0 * 2.0 * 8.0 * 64.0 * 4.0 * 9.0);
    assert!(!c.assumed.iter().any(|a| a.contains("not recorded")));
    // Its backward: input and weight gradients (output_mask [True, True, True]), twice the F;
    // conv1's backward computes only the weight gradient ([False, True, True]).
    let c = cost(
        "aten::convolution_backward",
        "[[2,8,8,8],[2,8,8,8],[8,4,3,3],[],[],[],[],[],[],[],[]]",
    );
    assert_eq!(c.complexity.flops, 2.0 * 2.0 * 2.0 * 8.0 * 64.0 * 4.0 * 9.0);
    let c = cost(
        "aten::convolution_backward",
        "[[2,8,8,8],[2,3,16,16],[8,3,3,3],[],[],[],[],[],[],[],[]]",
    );
    assert_eq!(c.complexity.flops, 2.0 * 2.0 * 8.0 * 64.0 * 3.0 * 9.0);
    // LSTM, batch first: 8 steps of batch 2, input 64, hidden 32; per step the gates' GEMM
    // 2·B·(I+H)·4H plus 8 FLOPs per cell element (dl.rs).
    let c = cost(
        "aten::lstm",
        "[[2,8,64],[[1,2,32],[1,2,32]],[[128,64],[128,32],[128],[128]],[],[],[],[],[],[]]",
    );
    assert_eq!(
        c.complexity.flops,
        8.0 * (2.0 * 2.0 * 96.0 * 128.0 + 8.0 * 2.0 * 32.0)
    );
    assert!(c.assumed.is_empty(), "{:?}", c.assumed);
    // The attention's input projection (16 tokens × 32 → 96) and a backward mm.
    let c = cost("aten::addmm", "[[96],[16,32],[32,96],[],[]]");
    assert_eq!(c.complexity.flops, 2.0 * 16.0 * 96.0 * 32.0);
    assert_eq!(c.datapath, Datapath::Fp32);
    let c = cost("aten::mm", "[[2,10],[10,32]]");
    assert_eq!(c.complexity.flops, 2.0 * 2.0 * 32.0 * 10.0);
    // Attention: batch 2, 4 heads, 8 tokens, head size 8, not causal (recorded).
    let c = cost(
        "aten::scaled_dot_product_attention",
        "[[2,4,8,8],[2,4,8,8],[2,4,8,8],[],[],[],[],[]]",
    );
    assert_eq!(c.complexity.flops, 2.0 * 8.0 * 64.0 * 16.0);
    assert!(c.assumed.is_empty(), "{:?}", c.assumed);
    // No GPU activity: refused, saying so.
    let e = trace::import(&t, &ImportOptions::default()).unwrap_err();
    assert_eq!(
        e,
        ImportError::NoKernels {
            cpu_ops: 774,
            other_phases: String::new()
        }
    );
    let msg = e.to_string();
    assert!(
        msg.contains("no GPU kernel events")
            && msg.contains("CPU-only trace (774 cpu_op events, no GPU activity)")
            && msg.contains("ProfilerActivity.CUDA"),
        "{msg}"
    );
}

/// A reader handing out pieces of 1 to 97 bytes: every event of the real traces crosses the
/// parser's window boundaries somewhere, and the trace read is the same.
struct Pieces<R> {
    inner: R,
    next: usize,
}

impl<R: Read> Read for Pieces<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.next = self.next % 97 + 1;
        let n = self.next.min(buf.len());
        self.inner.read(&mut buf[..n])
    }
}

#[test]
fn real_traces_read_the_same_in_any_pieces() {
    for name in [SHAPES, COUNTERS, CPU] {
        let whole = trace::parse(reader(name)).unwrap();
        let pieces = trace::parse(Pieces {
            inner: reader(name),
            next: 0,
        })
        .unwrap();
        assert!(whole == pieces, "{name}");
    }
}

/// Peak resident memory of this process so far, bytes (Linux `VmHWM`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// CPU time of this process so far (user + system), from `/proc/self/stat` (fields 14 and 15,
/// in clock ticks of `USER_HZ`, 100 per second on Linux): the one-core cost, which a loaded
/// machine does not inflate as it does the wall time.
fn cpu_time() -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces: the fields after it start past its closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state), so fields 14 and 15 are at 11 and 12.
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(std::time::Duration::from_millis(ticks * 10))
}

/// Wall and CPU time of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (start, cpu) = (std::time::Instant::now(), cpu_time());
    let v = f();
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu, cpu_time()) {
        (Some(a), Some(b)) => (b - a).as_secs_f64(),
        _ => f64::NAN,
    };
    (v, wall, cpu)
}

/// Benchmark, not a timed test: writes a ~500 MB SYNTHETIC trace to a temporary folder (never
/// committed), then reads and imports it, printing the wall and CPU times (user + system: the
/// one-core cost) and the peak memory. Run pinned to one core with
/// `taskset -c 0 cargo test --release -p roofline-tests --test e2e bench_trace -- --ignored --nocapture`
/// (`TRACE_BENCH_MB` changes the size).
#[test]
#[ignore = "benchmark: writes a 500 MB SYNTHETIC trace; run in release with --ignored --nocapture"]
fn bench_trace_import_500_mb() {
    let mb: u64 = std::env::var("TRACE_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("synthetic-trace.json");
    let w = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    let written = roofline_tests::synthetic_trace::write_trace(w, mb * 1_000_000).unwrap();
    let open = || std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&file).unwrap());
    // The floor: serde_json reading the same text into nothing.
    let (_, floor_wall, floor_cpu) = timed(|| {
        let _: serde::de::IgnoredAny = serde_json::from_reader(open()).unwrap();
    });
    let before = peak_rss();
    let (t, parse_wall, parse_cpu) = timed(|| trace::parse(open()).unwrap());
    let after_parse = peak_rss();
    let (imp, import_wall, import_cpu) =
        timed(|| trace::import(&t, &ImportOptions::default()).unwrap());
    let after = peak_rss();
    assert_eq!(imp.kernels.len() as u64, written.kernels);
    assert_eq!(t.events, written.events);
    assert!((imp.stats.time_s - written.kernel_us * 1e-6).abs() < 1e-6 * imp.stats.time_s);
    assert_eq!(imp.stats.linked, imp.kernels.len());
    let mb = |b: Option<u64>| b.map_or("?".into(), |b| (b / 1_000_000).to_string());
    println!(
        "SYNTHETIC trace: {:.1} MB, {} events, {} kernels\n\
         serde_json skipping it (IgnoredAny): wall {floor_wall:.2} s, CPU {floor_cpu:.2} s\n\
         parse:          wall {parse_wall:.2} s, CPU {parse_cpu:.2} s\n\
         import:         wall {import_wall:.2} s, CPU {import_cpu:.2} s\n\
         parse + import: wall {:.2} s, CPU {:.2} s\n\
         peak RSS {} MB before reading, {} MB after parsing, {} MB after import ({} kernel entries)",
        written.bytes as f64 / 1e6,
        written.events,
        written.kernels,
        parse_wall + import_wall,
        parse_cpu + import_cpu,
        mb(before),
        mb(after_parse),
        mb(after),
        imp.kernels.len(),
    );
}

/// The metric lists of `docs/pytorch.md` are the metric table's (sm_80 without the Hopper-only
/// wgmma and the FP8 counters).
#[test]
fn docs_metric_lists_follow_the_table() {
    let doc = std::fs::read_to_string(roofline_tests::repo().join("docs/pytorch.md")).unwrap();
    let list = |name: &str| -> Vec<String> {
        let start = doc
            .find(&format!("{name} = ["))
            .unwrap_or_else(|| panic!("{name}"));
        doc[start..]
            .lines()
            .skip(1)
            .take_while(|l| l.trim() != "]")
            .map(|l| l.trim().trim_end_matches(',').trim_matches('"').to_string())
            .collect()
    };
    let table = |arch: ncu::Arch, keep: &dyn Fn(&str) -> bool| -> Vec<String> {
        ncu::metrics::profile_metrics(arch)
            .into_iter()
            .filter(|m| keep(m))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        list("SM80_METRICS"),
        table(ncu::Arch::Ampere, &|m| !m.contains("gmma")
            && !m.contains("fp8"))
    );
    assert_eq!(list("SM90_METRICS"), table(ncu::Arch::Hopper, &|_| true));
}
