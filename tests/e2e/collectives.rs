//! Collectives on real multi-rank traces, every figure checked against one computed here
//! independently from the same files read whole as `serde_json::Value`: message sizes from the
//! recorded arguments (or the `nccl:*` annotation's input), times from the kernels' `dur`,
//! nccl-tests' bus bandwidth (NVIDIA/nccl-tests `doc/PERFORMANCE.md`), the exposed time from the
//! union of the other kernels' runs, and the skew across ranks from the kernels' `ts`.
//!
//! Fixtures (`fixtures/traces/`, README there): `a100-ddp-nccl-msgsize.json.gz` (HTA: DDP on an
//! A100, rank 0 of 2, message sizes in the NCCL kernels' arguments),
//! `param-dlrm-v100-8ranks/` (PARAM: all 8 ranks of one DLRM step on V100s, messages only in the
//! `nccl:*` annotations), `sampled-rank-{0,1}-shapes.json.gz` (HTA: two ranks of a 128-rank
//! job, sampled).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

use flate2::read::GzDecoder;
use roofline_import::trace::{self, ImportOptions, comm::CommOptions};
use roofline_model::analysis::comm::{self, CommAcc};
use roofline_model::bundle::{
    CollectiveKind, FigureSource, GroupSizeSource, Kernel, LinkCeiling, LinkKind, Method, Scope,
    SourceKind,
};
use roofline_tests::fixtures;
use serde_json::Value;

fn path(name: &str) -> PathBuf {
    fixtures().join("traces").join(name)
}

fn value(name: &str) -> Value {
    let mut s = String::new();
    GzDecoder::new(std::fs::File::open(path(name)).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    serde_json::from_str(&s).unwrap()
}

fn import(name: &str, o: CommOptions) -> Vec<Kernel> {
    let t = trace::parse(GzDecoder::new(std::fs::File::open(path(name)).unwrap())).unwrap();
    let opts = ImportOptions {
        comm: o,
        ..ImportOptions::default()
    };
    trace::import(&t, &opts).unwrap().kernels
}

/// The NCCL kernel events of a trace, by start.
fn nccl(v: &Value) -> Vec<&Value> {
    let mut k: Vec<&Value> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["name"].as_str().unwrap().starts_with("nccl"))
        .collect();
    k.sort_by(|a, b| {
        a["ts"]
            .as_f64()
            .unwrap()
            .total_cmp(&b["ts"].as_f64().unwrap())
    });
    k
}

/// An event's start and end, ns, as the trace writes them (µs).
fn span(e: &Value) -> (f64, f64) {
    let ts = e["ts"].as_f64().unwrap() * 1000.0;
    (ts, ts + e["dur"].as_f64().unwrap() * 1000.0)
}

/// Per NCCL kernel (by start), its exposed and overlapped ns: its run less the union of every
/// other kernel's run on the device, an instant under two collectives counted on the first.
fn exposure(v: &Value) -> Vec<(f64, f64)> {
    let mut compute: Vec<(f64, f64)> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel" && !e["name"].as_str().unwrap().starts_with("nccl"))
        .map(span)
        .filter(|(a, b)| b > a)
        .collect();
    compute.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::new();
    for (a, b) in compute {
        match merged.last_mut() {
            Some(m) if a <= m.1 => m.1 = m.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    let mut upto = f64::MIN;
    nccl(v)
        .into_iter()
        .map(|e| {
            let (s, end) = span(e);
            let from = s.max(upto);
            upto = upto.max(end);
            let own = (end - from).max(0.0);
            let hidden: f64 = merged
                .iter()
                .map(|(a, b)| (b.min(end) - a.max(from)).max(0.0))
                .sum();
            (own - hidden, hidden)
        })
        .collect()
}

fn link(kind: LinkKind, value: f64) -> LinkCeiling {
    LinkCeiling {
        link: kind,
        value,
        method: Method::Theoretical,
        implementation: None,
        source: Some(FigureSource {
            kind: SourceKind::Derived,
            citation: "test".into(),
        }),
    }
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

const A100: &str = "a100-ddp-nccl-msgsize.json.gz";

/// HTA's DDP trace records each collective on its kernel: S = max(In, Out) × the element's
/// size (4 bytes for `Float`, 8 for `Long`),
/// n = Group size (2), algbw = S / dur, busbw = algbw × 2(n−1)/n = algbw (all-reduce, n = 2)
/// or × 1 (broadcast); the A100's NVLink (600 GB/s both directions, 300 GB/s one way) binds,
/// its ranks [0, 1] on one node of the 8 devices the trace lists.
#[test]
fn a100_ddp_collectives_against_nvlink() {
    let v = value(A100);
    let events = nccl(&v);
    assert_eq!(events.len(), 21);
    let kernels = import(A100, CommOptions::default());
    let mut mine: Vec<&Kernel> = kernels.iter().filter(|k| k.collective.is_some()).collect();
    mine.sort_by_key(|k| k.collective.as_ref().unwrap().start_ns);
    assert_eq!(mine.len(), 21);
    let nvlink = [link(LinkKind::Nvlink, 300e9), link(LinkKind::Pcie, 32e9)];
    let exposed = exposure(&v);
    let (mut total, mut exp_sum, mut ov_sum) = (0.0, 0.0, 0.0);
    for ((e, k), (exp_ns, ov_ns)) in events.iter().zip(&mine).zip(&exposed) {
        let a = &e["args"];
        let name = a["Collective name"].as_str().unwrap();
        let n = a["Group size"].as_u64().unwrap() as f64;
        let size = match a["dtype"].as_str().unwrap() {
            "Float" => 4.0,
            "Long" => 8.0,
            other => panic!("{other}"),
        };
        let s = a["In msg nelems"]
            .as_f64()
            .unwrap()
            .max(a["Out msg nelems"].as_f64().unwrap())
            * size;
        let t = e["dur"].as_f64().unwrap() * 1e-6;
        let factor = if name == "allreduce" {
            2.0 * (n - 1.0) / n
        } else {
            1.0
        };
        let c = k.collective.as_ref().unwrap();
        assert_eq!(k.time.total_s, t);
        assert_eq!(c.bytes, Some(s), "{name}");
        assert_eq!(c.group_size, Some(2));
        assert_eq!(c.group_size_from, Some(GroupSizeSource::Recorded));
        assert_eq!(c.process_group.as_deref(), Some("0"));
        assert_eq!(c.scope, Some(Scope::IntraNode));
        let kind = if name == "allreduce" {
            CollectiveKind::AllReduce
        } else {
            CollectiveKind::Broadcast
        };
        assert_eq!(c.kind, kind);
        let x = comm::analyze(c, k.time.total_s, Some(&nvlink));
        assert!(close(x.algbw.unwrap(), s / t, 1e-12));
        assert!(close(x.busbw.unwrap(), s / t * factor, 1e-12));
        assert_eq!(x.link, Some(LinkKind::Nvlink));
        assert!(close(x.link_share.unwrap(), s / t * factor / 300e9, 1e-12));
        assert!(
            (c.exposed_s.unwrap() - exp_ns * 1e-9).abs() < 2e-9,
            "{name}"
        );
        assert!(
            (c.overlapped_s.unwrap() - ov_ns * 1e-9).abs() < 2e-9,
            "{name}"
        );
        total += t;
        exp_sum += exp_ns * 1e-9;
        ov_sum += ov_ns * 1e-9;
    }
    // The hand count: the first all-reduce, 2,049,000 floats in 3,306.963 µs.
    let first = mine
        .iter()
        .find(|k| k.collective.as_ref().unwrap().kind == CollectiveKind::AllReduce)
        .unwrap();
    let c = first.collective.as_ref().unwrap();
    assert_eq!(c.bytes, Some(8_196_000.0));
    assert_eq!(first.time.total_s, 3306.963e-6);
    let x = comm::analyze(c, first.time.total_s, Some(&nvlink));
    assert!(close(x.busbw.unwrap(), 2.478_407e9, 1e-6), "{:?}", x.busbw);
    assert!(close(x.link_share.unwrap(), 0.008_261_36, 1e-5));
    // 46.876 ms of NCCL kernels, 39.559 ms of it exposed, 7.317 ms overlapped.
    assert!((total - 46_876.493e-6).abs() < 1e-9);
    assert!((exp_sum - 39.559_466e-3).abs() < 1e-8, "{exp_sum}");
    assert!((ov_sum - 7.317_026e-3).abs() < 1e-8, "{ov_sum}");
    let steps = comm::per_step(&CommAcc::of(&bundle_of(kernels)).records);
    let exposed: f64 = steps.iter().map(|s| s.exposed_s.unwrap()).sum();
    assert!((exposed - exp_sum).abs() < 1e-8);
}

fn bundle_of(kernels: Vec<Kernel>) -> roofline_model::Bundle {
    let mut b = roofline_model::Bundle::new(Default::default());
    b.kernels = kernels;
    b
}

const DLRM: &str = "param-dlrm-v100-8ranks";

fn dlrm_files() -> Vec<String> {
    let mut f: Vec<String> = std::fs::read_dir(path(DLRM))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json.gz"))
        .map(|n| format!("{DLRM}/{n}"))
        .collect();
    f.sort();
    f
}

/// The `nccl:*` annotations of a trace by start: name, elements and element size of their input.
fn annotations(v: &Value) -> Vec<(String, f64, f64)> {
    let mut a: Vec<&Value> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["cat"] == "user_annotation" && e["name"].as_str().unwrap().starts_with("nccl:")
        })
        .collect();
    a.sort_by(|x, y| {
        x["ts"]
            .as_f64()
            .unwrap()
            .total_cmp(&y["ts"].as_f64().unwrap())
    });
    a.iter()
        .map(|e| {
            let dims = e["args"]["Input Dims"][0].as_array().unwrap();
            let n: f64 = dims.iter().map(|d| d.as_f64().unwrap()).product();
            let size = match e["args"]["Input type"][0].as_str().unwrap() {
                "float" | "int" => 4.0,
                "long int" | "long" => 8.0,
                other => panic!("{other}"),
            };
            (e["name"].as_str().unwrap().to_string(), n, size)
        })
        .collect()
}

/// DLRM on 8 V100s: every rank's 8 collectives get their message from the `nccl:*` annotation
/// (`Input Dims` × its type's size), n = 8 from the world size, busbw = S/t × 2·7/8 (all-reduce)
/// or × 7/8 (all-to-all), against the V100's NVLink (300 GB/s both ways, 150 GB/s one way);
/// matched across ranks by their place, each collective's skew is the spread of its kernels'
/// `ts` and its straggler the rank that started last.
#[test]
fn dlrm_eight_ranks_skew_and_bandwidth() {
    let nvlink = [link(LinkKind::Nvlink, 150e9)];
    let mut acc = CommAcc::default();
    // Per place, per rank: the kernel's start (µs, as written) and time.
    let mut starts: BTreeMap<usize, Vec<(u64, f64, f64)>> = BTreeMap::new();
    for f in dlrm_files() {
        let v = value(&f);
        let rank = v["distributedInfo"]["rank"].as_u64().unwrap();
        assert_eq!(v["distributedInfo"]["world_size"], 8);
        let events = nccl(&v);
        let ann = annotations(&v);
        assert_eq!((events.len(), ann.len()), (8, 8), "{f}");
        let kernels = import(&f, CommOptions::default());
        let mut mine: Vec<&Kernel> = kernels.iter().filter(|k| k.collective.is_some()).collect();
        mine.sort_by_key(|k| k.collective.as_ref().unwrap().start_ns);
        for (i, ((e, k), (name, n, size))) in events.iter().zip(&mine).zip(&ann).enumerate() {
            let c = k.collective.as_ref().unwrap();
            let t = e["dur"].as_f64().unwrap() * 1e-6;
            let s = n * size;
            let (kind, factor) = match name.as_str() {
                "nccl:all_reduce" => (CollectiveKind::AllReduce, 2.0 * 7.0 / 8.0),
                "nccl:all_to_all" => (CollectiveKind::AllToAll, 7.0 / 8.0),
                other => panic!("{other}"),
            };
            assert_eq!(c.kind, kind, "{f} #{i}");
            assert_eq!(c.bytes, Some(s), "{f} #{i}");
            assert_eq!(c.sequence, Some(i as u64));
            assert_eq!(
                (c.group_size, c.group_size_from),
                (Some(8), Some(GroupSizeSource::WorldSize))
            );
            assert_eq!(c.scope, Some(Scope::IntraNode));
            let x = comm::analyze(c, k.time.total_s, Some(&nvlink));
            assert!(close(x.busbw.unwrap(), s / t * factor, 1e-12), "{f} #{i}");
            assert!(close(x.link_share.unwrap(), s / t * factor / 150e9, 1e-12));
            starts
                .entry(i)
                .or_default()
                .push((rank, e["ts"].as_f64().unwrap(), t));
        }
        let b = bundle_of(kernels);
        for k in &b.kernels {
            acc.push(k, Some(&format!("rank{rank}")));
        }
    }
    let (matched, notes) = comm::synchronised(&acc.records);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(matched.len(), 8);
    for s in &matched {
        let ranks = &starts[&(s.sequence as usize)];
        assert_eq!(s.ranks, 8);
        let first = ranks.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        let last = ranks.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
        assert!(
            ((last.1 - first.1) * 1e-6 - s.skew_s).abs() < 1e-9,
            "#{}",
            s.sequence
        );
        assert_eq!(s.straggler, last.0.to_string());
        assert_eq!(s.first, first.0.to_string());
        assert_eq!(s.straggler_s, last.2);
    }
    // The hand count: the first all-to-all started at 1694128201424306 µs on rank 1 and at
    // 1694128201431930 µs on rank 7, the last: 7.624 ms of skew, rank 7 (10 µs) the straggler.
    let s = matched.iter().find(|s| s.sequence == 0).unwrap();
    assert!((s.skew_s - 7.624e-3).abs() < 1e-12);
    assert_eq!((s.straggler.as_str(), s.first.as_str()), ("7", "1"));
    assert_eq!(s.straggler_s, 10.0 * 1e-6);
    assert_eq!(s.bytes, Some(6144.0 * 4.0));
    // Rank 0's first all-reduce: 394,241 floats in 246 µs, 8 ranks, on 150 GB/s.
    let r0 = acc
        .records
        .iter()
        .find(|r| r.rank.as_deref() == Some("0") && r.collective.kind == CollectiveKind::AllReduce)
        .unwrap();
    let x = comm::analyze(&r0.collective, r0.time_s, Some(&nvlink));
    assert_eq!(r0.collective.bytes, Some(1_576_964.0));
    assert!(close(x.busbw.unwrap(), 1_576_964.0 / 246e-6 * 1.75, 1e-12));
    assert!(close(x.busbw.unwrap(), 11.218_2e9, 1e-5), "{:?}", x.busbw);
    assert!(close(x.link_share.unwrap(), 0.074_788, 1e-4));
}

/// Two ranks of HTA's sampled 128-rank job: each collective's message from its annotation, n =
/// 128 from the world size, across nodes at 8 GPUs per node; their sampled windows hold other
/// collectives, so matching across them stops at the first one (another element type) and says
/// so.
#[test]
fn sampled_ranks_part_and_say_so() {
    let o = CommOptions {
        gpus_per_node: Some(8),
        ..CommOptions::default()
    };
    let mut acc = CommAcc::default();
    for (f, rank) in [
        ("sampled-rank-0-shapes.json.gz", "0"),
        ("sampled-rank-1-shapes.json.gz", "1"),
    ] {
        let v = value(f);
        assert_eq!(v["distributedInfo"]["world_size"], 128);
        let kernels = import(f, o);
        let mine: Vec<&Kernel> = kernels.iter().filter(|k| k.collective.is_some()).collect();
        assert_eq!(mine.len(), nccl(&v).len());
        for k in &mine {
            let c = k.collective.as_ref().unwrap();
            assert_eq!(c.group_size, Some(128));
            assert_eq!(c.scope, Some(Scope::InterNode));
        }
        for k in &kernels {
            acc.push(k, Some(rank));
        }
    }
    let (matched, notes) = comm::synchronised(&acc.records);
    assert!(matched.is_empty(), "{matched:?}");
    assert!(
        notes[0].contains("up to #0, where the ranks part"),
        "{notes:?}"
    );
}
