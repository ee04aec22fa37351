//! Tests that need a CUDA GPU (run on a GPU host with `cargo test -p roofline-collector --test gpu
//! -- --ignored`). They check the targets of `roofline machine` on the bundle a real run writes.

use std::process::Command;

use roofline_model::analysis::summary::{self, Subject};
use roofline_model::bundle::{Datapath, MemoryLevel};

#[test]
#[ignore = "needs a CUDA GPU, NVRTC and cuBLASLt"]
fn machine_quick_meets_its_targets() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("machine.json");
    roofline(&["machine", "--quick", "-o", out.to_str().unwrap()]);
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(b.complete);
    let m = &b.machines[0];
    let rows = summary::rows(m);
    let row = |s: Subject| {
        rows.iter()
            .find(|r| r.subject == s)
            .unwrap_or_else(|| panic!("no {s:?}"))
    };
    // HBM: our best kernel against the driver's device-to-device copy.
    let hbm = row(Subject::Level(MemoryLevel::Hbm));
    assert!(hbm.own_over_reference().unwrap() >= 0.97, "{hbm:?}");
    // CUDA-core peaks against theoretical at the clock the kernel observed.
    for d in [
        Datapath::Fp64,
        Datapath::Fp32,
        Datapath::Fp16,
        Datapath::Bf16,
    ] {
        let r = row(Subject::Datapath(d));
        let ratio = r.own.as_ref().unwrap().value / r.theoretical.as_ref().unwrap().value;
        assert!(ratio >= 0.97, "{d:?}: {ratio}");
    }
    // The hierarchy is ordered.
    let own = |l| row(Subject::Level(l)).own.as_ref().unwrap().value;
    assert!(own(MemoryLevel::L1) > own(MemoryLevel::L2));
    assert!(own(MemoryLevel::L2) > own(MemoryLevel::Hbm));
    assert!(m.launch_overhead.as_ref().is_some_and(|l| l.value_s > 0.0));
    assert!(!m.sweep.is_empty());
}

#[test]
#[ignore = "needs a CUDA GPU, NVRTC, cuBLASLt and cuDNN"]
fn suite_gemm_is_never_faster_than_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let machine = dir.path().join("machine.json");
    let suite = dir.path().join("suite.json");
    roofline(&["machine", "--quick", "-o", machine.to_str().unwrap()]);
    roofline(&[
        "suite",
        "gemm",
        "--machine",
        machine.to_str().unwrap(),
        "-o",
        suite.to_str().unwrap(),
    ]);
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&suite).unwrap()).unwrap();
    assert!(!b.kernels.is_empty());
    for k in &b.kernels {
        let n: f64 = k.tags["value"].parse().unwrap();
        assert_eq!(k.complexity.unwrap().flops, 2.0 * n * n * n, "{}", k.name);
    }
    for a in roofline_model::analysis::analyze(&b, &b.kernels) {
        let bound = a.time_bound.expect("every GEMM is bounded").bound_s;
        assert!(
            a.time_s >= bound,
            "{}: {} s < bound {} s",
            b.kernels[a.index].name,
            a.time_s,
            bound
        );
    }
}

/// Runs the CLI, echoing its output, and asserts success.
fn roofline(args: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_roofline"))
        .args(args)
        .output()
        .unwrap();
    println!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "roofline {args:?}");
}

#[test]
#[ignore = "needs a CUDA GPU, NVRTC, cuBLASLt and cuDNN"]
fn suite_lstm_runs_cudnn_and_our_own_within_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let machine = dir.path().join("machine.json");
    let suite = dir.path().join("suite.json");
    roofline(&["machine", "--quick", "-o", machine.to_str().unwrap()]);
    roofline(&[
        "suite",
        "lstm",
        "--precision",
        "fp16",
        "--tensor",
        "on",
        "--machine",
        machine.to_str().unwrap(),
        "-o",
        suite.to_str().unwrap(),
    ]);
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&suite).unwrap()).unwrap();
    for s in &b.skipped {
        println!("skipped: {} ({})", s.what, s.reason);
    }
    let by = |imp: &str| {
        b.kernels
            .iter()
            .filter(|k| k.tags.get("implementation").map(String::as_str) == Some(imp))
            .count()
    };
    // 15 configurations: our own LSTM runs every one; cuDNN at least one algorithm of each.
    assert_eq!(by("own"), 15);
    assert!(by("cudnn") >= 15, "{} cuDNN entries", by("cudnn"));
    let fastest = b
        .kernels
        .iter()
        .filter(|k| k.tags.contains_key("fastest"))
        .count();
    assert_eq!(fastest, 15, "one fastest cuDNN algorithm per configuration");
    for a in roofline_model::analysis::analyze(&b, &b.kernels) {
        let bound = a.time_bound.expect("every LSTM is bounded").bound_s;
        assert!(
            a.time_s >= bound,
            "{}: {} s < bound {} s",
            b.kernels[a.index].name,
            a.time_s,
            bound
        );
    }
}
