//! The CUDA kernels' index arithmetic, checked on the CPU: `kernels/host-check/conv_check.cpp`
//! includes `kernels/dl.cu` (its FP32 variants) with CUDA's keywords mapped to plain C++, runs
//! every convolution kernel (direct and implicit-GEMM, split-K included) and the LSTM cell with
//! one thread per CUDA thread, and compares each output with a naive double-precision reference.
//!
//! It needs a C++20 compiler (`c++`, or `$CXX`), so it is ignored by a plain `cargo test`;
//! `cargo xtask test` installs one if it is missing and runs it.

use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "needs a C++20 compiler; `cargo xtask test` runs it"]
fn dl_kernels_match_a_naive_reference_on_the_cpu() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace");
    let source = root.join("kernels/host-check/conv_check.cpp");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let exe = dir.path().join("conv_check");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    // The same constants NVRTC gets (tile sizes), from the kernel catalogue's one list.
    let defines = roofline_kernels::Source::Dl
        .defines()
        .into_iter()
        .map(|(k, v)| format!("-D{k}={v}"));
    let built = Command::new(&cxx)
        .args(defines)
        .args(["-std=c++20", "-O1", "-pthread", "-Wno-attributes", "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("could not start the C++ compiler `{cxx}`: {e}"));
    assert!(
        built.status.success(),
        "compiling {} failed:\n{}",
        source.display(),
        String::from_utf8_lossy(&built.stderr)
    );
    let run = Command::new(&exe).output().expect("the check runs");
    let out = String::from_utf8_lossy(&run.stdout);
    println!("{out}");
    assert!(
        run.status.success(),
        "a kernel disagrees with the reference:\n{out}"
    );
    // 5 shapes × (3 direct + 2 implicit-GEMM + 2 backward-filter split settings), 2 LSTM cells.
    assert_eq!(out.matches("  ok").count(), 37, "{out}");
    assert!(!out.contains("WRONG"), "{out}");
}
