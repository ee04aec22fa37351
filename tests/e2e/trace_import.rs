//! Importing two real torch.profiler (Kineto) traces, checked against figures computed here
//! independently from the same files read whole as `serde_json::Value`.
//!
//! `fixtures/traces/` holds two traces from the public HolisticTraceAnalysis repository (MIT
//! licence beside them): `sampled-rank-0-shapes.json.gz`, a training step with shapes recorded
//! (kernel events with durations), and `a100-cupti-profiler-counters.json.gz`, Kineto's CUPTI
//! range profiler on an A100 (per-kernel counters, no kernel events, no kernel times).

use std::io::Read;
use std::path::PathBuf;

use flate2::read::GzDecoder;
use roofline_model::bundle::Datapath;
use roofline_model::ncu::{self, Convention};
use roofline_model::trace::{self, ImportOptions, import::ImportError};
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
/// the call (of equal spans, the one written later), found here by brute force; `2·M·N·K` of every `aten::mm` from its recorded dims.
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
            None => assert!(!k.tags.contains_key("op"), "{}", k.name),
            Some((i, o)) => {
                linked += 1;
                assert_eq!(k.tags["op"], o["name"].as_str().unwrap());
                assert_eq!(k.tags["op_id"], i.to_string());
                if o["name"] == "aten::mm" {
                    let d = &o["args"]["Input Dims"];
                    let (m, kk, n) = (
                        d[0][0].as_f64().unwrap(),
                        d[0][1].as_f64().unwrap(),
                        d[1][1].as_f64().unwrap(),
                    );
                    assert_eq!(d[1][0].as_f64().unwrap(), kk);
                    let f: f64 = k.tags["op_flops"].parse().unwrap();
                    assert_eq!(f, 2.0 * m * n * kk);
                    let b: f64 = k.tags["op_bytes"].parse().unwrap();
                    assert_eq!(b, 4.0 * (m * kk + kk * n + m * n), "float32 operands");
                    if k.tags["op_kernels"] == "1" {
                        assert_eq!(k.complexity.unwrap().flops, f);
                        assert_eq!(k.flops.get(Datapath::Fp32), Some(f));
                    }
                    mm_checked += 1;
                }
            }
        }
    }
    assert_eq!(linked, imp.stats.linked);
    assert_eq!(linked, 1138);
    assert_eq!(mm_checked, 232);
    let summary: Vec<_> = imp
        .notes
        .iter()
        .filter(|n| n.starts_with("not understood"))
        .collect();
    assert_eq!(summary.len(), 1, "one summary note");
    assert!(summary[0].contains("16 of 1154 kernel launches have no operator"));
    assert!(summary[0].contains("aten::cat ×34"));
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
        let a = &r["args"];
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
    // Range i is the i-th kernel launch call; its operator the innermost cpu_op around it.
    let mut calls: Vec<&Value> = events(&v, "cuda_runtime")
        .into_iter()
        .filter(|r| r["name"] == "cudaLaunchKernel")
        .collect();
    calls.sort_by(|a, b| a["ts"].as_f64().partial_cmp(&b["ts"].as_f64()).unwrap());
    assert_eq!(calls.len(), 77);
    let ops = events(&v, "cpu_op");
    let links = trace::import::link(&t);
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

/// Peak resident memory of this process so far, bytes (Linux `VmHWM`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Benchmark, not a timed test: writes a ~500 MB SYNTHETIC trace to a temporary folder (never
/// committed), then reads and imports it, printing the times and the peak memory. Run with
/// `cargo test --release -p roofline-tests --test e2e bench_trace -- --ignored --nocapture`.
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
    // The floor: serde_json reading the same text into nothing.
    let start = std::time::Instant::now();
    let r = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&file).unwrap());
    let _: serde::de::IgnoredAny = serde_json::from_reader(r).unwrap();
    let floor = start.elapsed();
    let before = peak_rss();
    let start = std::time::Instant::now();
    let r = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&file).unwrap());
    let t = trace::parse(r).unwrap();
    let parsed = start.elapsed();
    let after_parse = peak_rss();
    let imp = trace::import(&t, &ImportOptions::default()).unwrap();
    let total = start.elapsed();
    let after = peak_rss();
    assert_eq!(imp.kernels.len() as u64, written.kernels);
    assert_eq!(t.events, written.events);
    assert!((imp.stats.time_s - written.kernel_us * 1e-6).abs() < 1e-6 * imp.stats.time_s);
    assert_eq!(imp.stats.linked, imp.kernels.len());
    println!(
        "SYNTHETIC trace: {:.1} MB, {} events, {} kernels; serde_json skipping it {:.2} s; parse {:.2} s, parse + import {:.2} s; peak RSS {} MB before reading, {} MB after parsing, {} MB after import ({} kernel entries)",
        written.bytes as f64 / 1e6,
        written.events,
        written.kernels,
        floor.as_secs_f64(),
        parsed.as_secs_f64(),
        total.as_secs_f64(),
        before.map_or("?".into(), |b| (b / 1_000_000).to_string()),
        after_parse.map_or("?".into(), |b| (b / 1_000_000).to_string()),
        after.map_or("?".into(), |b| (b / 1_000_000).to_string()),
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
