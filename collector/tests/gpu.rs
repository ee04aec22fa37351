//! Tests that need a CUDA GPU (run on a GPU host with `cargo test -p roofline-collector --test gpu
//! -- --ignored`). They check the targets of `roofline machine` on the bundle a real run writes.

use std::process::Command;

use roofline_model::bundle::{Datapath, MemoryLevel};
use roofline_model::summary::{self, Subject};

#[test]
#[ignore = "needs a CUDA GPU, NVRTC and cuBLASLt"]
fn machine_quick_meets_its_targets() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("machine.json");
    let o = Command::new(env!("CARGO_BIN_EXE_roofline"))
        .args(["machine", "--quick", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    println!("{stdout}\n{stderr}");
    assert!(o.status.success(), "{stderr}");
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
