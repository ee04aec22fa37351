//! Datasheet ceilings for inputs without a measured machine, through the binary: every real
//! trace and capture of the fixtures maps to the GPU catalogue entry it should, or to a note
//! saying why none and how to choose; the figures come from the catalogue, labelled in the
//! bundle, `info`, the JSON and the SVG; `--ceilings datasheet:NAME` chooses, `--no-datasheet`
//! declines, a contradicting choice is refused and a measured machine always wins.
//!
//! The traces are real (HolisticTraceAnalysis, MIT; the kineto ResNet-50 traces; see
//! `tests/fixtures/traces/README.md`); the expected figures are the vendors' datasheet ones
//! (A100 40GB: 1,555 GB/s HBM2, 312 TFLOP/s dense BF16 Tensor; MI250: 3.2768 TB/s for two
//! GCDs), independent of the catalogue's file.

use std::path::{Path, PathBuf};
use std::process::Output;

use roofline_model::bundle::{Bundle, Datapath, MemoryLevel, OriginKind};

mod common;
use common::roofline;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(rel)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `roofline import INPUTS ARGS -o OUT`: the bundle written, and what it said.
fn import(inputs: &[PathBuf], args: &[&str]) -> (Bundle, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let mut all: Vec<&str> = vec!["import"];
    all.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    all.extend(args);
    all.extend(["-o", out.to_str().unwrap()]);
    let o = roofline(&all);
    assert!(o.status.success(), "{all:?}: {}", stderr(&o));
    let b = roofline_model::parse_bundle(&std::fs::read_to_string(&out).unwrap()).unwrap();
    (b, stderr(&o))
}

fn catalogue_id(b: &Bundle) -> Option<&str> {
    b.machines.first()?.origin.as_ref()?.catalogue_id.as_deref()
}

fn has_note(b: &Bundle, words: &str) -> bool {
    b.notes.iter().any(|n| n.contains(words))
}

fn captures() -> Vec<PathBuf> {
    let dir = fixture("ncu/nersc-v100-deepcam");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    v.sort();
    v
}

/// An A100 as Meta's traces record it (`NVIDIA A100-PG509-200`, 8.0, 108 SMs, 42.3 GB): the
/// A100 SXM4 40GB's datasheet, everywhere labelled.
#[test]
fn an_a100_trace_gets_the_a100_datasheet_labelled_everywhere() {
    let trace = fixture("traces/inductor-triton-example.json.gz");
    let (b, said) = import(std::slice::from_ref(&trace), &[]);
    assert_eq!(catalogue_id(&b), Some("nvidia-a100-sxm4-40gb"), "{said}");
    let m = &b.machines[0];
    let origin = m.origin.as_ref().unwrap();
    assert_eq!(origin.kind, OriginKind::Datasheet);
    let hbm = m
        .bandwidth
        .iter()
        .find(|c| c.level == MemoryLevel::Hbm)
        .unwrap();
    assert_eq!(hbm.value, 1555e9);
    assert!(hbm.source.as_ref().unwrap().citation.contains("A100"));
    let bf16 = m
        .compute
        .iter()
        .find(|c| c.datapath == Datapath::TensorBf16)
        .unwrap();
    assert_eq!(bf16.value, 312e12);
    assert!(
        said.contains("the datasheet figures of the NVIDIA A100 SXM4 40GB"),
        "{said}"
    );

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a100.json");
    let o = roofline(&[
        "import",
        trace.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let info = roofline(&["info", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(
        text.contains("  ceilings: NVIDIA A100 SXM4 40GB, datasheet, not measured"),
        "{text}"
    );
    let hbm_row = text.lines().find(|l| l.starts_with("  HBM ")).unwrap();
    assert!(
        hbm_row.contains(" 1.56 TB/s ") && hbm_row.ends_with(" datasheet"),
        "{hbm_row}"
    );
    let json = roofline(&["info", out.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        v["devices"][0]["ceilings_from"],
        "NVIDIA A100 SXM4 40GB, datasheet, not measured"
    );
    let svg = dir.path().join("a100.svg");
    let o = roofline(&[
        "plot",
        out.to_str().unwrap(),
        "--chart",
        "hierarchical",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("HBM 1.56 TB/s (datasheet)"), "{svg}");
    assert!(svg.contains("ceilings: NVIDIA A100 SXM4 40GB, datasheet, not measured"));

    // Declined, chosen by hand, contradicted.
    let (none, _) = import(std::slice::from_ref(&trace), &["--no-datasheet"]);
    assert!(none.machines.is_empty());
    let (named, _) = import(
        std::slice::from_ref(&trace),
        &["--ceilings", "datasheet:A100 SXM4 40GB"],
    );
    assert_eq!(catalogue_id(&named), Some("nvidia-a100-sxm4-40gb"));
    let o = roofline(&[
        "import",
        trace.to_str().unwrap(),
        "--ceilings",
        "datasheet:nvidia-h100-sxm5",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("but the kernels ran on NVIDIA A100-PG509-200"),
        "{}",
        stderr(&o)
    );
}

/// A measured machine always wins over the datasheet.
#[test]
fn a_measured_machine_wins() {
    let trace = fixture("traces/inductor-triton-example.json.gz");
    let machine = fixture("bundles/v100-deepcam-example.json");
    let (b, _) = import(
        &[trace],
        &[
            "--machine",
            machine.to_str().unwrap(),
            "--allow-machine-mismatch",
        ],
    );
    assert_eq!(b.machines.len(), 1);
    assert!(b.machines[0].origin.is_none());
    assert!(!has_note(&b, "datasheet figures"));
}

/// An MI250 GCD as ROCm records it (`AMD Radeon Graphics`, gfx 9.0, 104 CUs, 64 GiB): the MI210
/// and the MI250's GCD share every figure, and the label names both.
#[test]
fn an_mi250_gcd_gets_the_figures_it_shares_with_the_mi210() {
    let (b, _) = import(&[fixture("traces/mi250-rocm62-minitoy-train.json.gz")], &[]);
    let origin = b.machines[0].origin.as_ref().unwrap();
    assert_eq!(
        origin.product.as_deref(),
        Some("AMD Instinct MI210 or AMD Instinct MI250, one GCD")
    );
    let hbm = b.machines[0]
        .bandwidth
        .iter()
        .find(|c| c.level == MemoryLevel::Hbm)
        .unwrap();
    // AMD: 3.2768 TB/s for the MI250's two GCDs, 1.6384 TB/s for the MI210.
    assert_eq!(hbm.value, 1.6384e12);
    // Twelve launch calls: too few to estimate the launch overhead, said so.
    assert!(b.machines[0].launch_overhead.is_none());
    assert!(has_note(
        &b,
        "no launch overhead: the trace holds 12 kernel launch calls"
    ));
}

/// Traces that name no GPU, or one the catalogue has no figures for: no ceilings, and a note
/// that says what was seen and how to choose.
#[test]
fn traces_naming_no_gpu_or_one_without_figures_get_a_note() {
    for name in [
        "traces/kineto/resnet50-pytorch-1.8-autograd-api.pt.trace.json.gz",
        "traces/kineto/resnet50-pytorch-1.8-profiler-api.pt.trace.json.gz",
        "traces/sampled-rank-0-shapes.json.gz",
    ] {
        let (b, _) = import(&[fixture(name)], &[]);
        assert!(b.machines.is_empty(), "{name}");
        assert!(
            has_note(
                &b,
                "the input names no GPU; choose one with --ceilings datasheet:NAME"
            ),
            "{name}: {:?}",
            b.notes
        );
    }
    // The DGX Station's V100: known, but no vendor document gives its figures.
    let (b, _) = import(
        &[fixture(
            "traces/kineto/resnet50-pytorch-1.9-train.pt.trace.json.gz",
        )],
        &[],
    );
    assert!(b.machines.is_empty());
    assert!(
        has_note(
            &b,
            "NVIDIA Tesla V100 DGXS 32GB (DGX Station) (GPU catalogue entry nvidia-v100-dgxs-32gb), for which no vendor document gives"
        ) && has_note(&b, "nvidia-v100-sxm2-32gb"),
        "{:?}",
        b.notes
    );
}

/// Nsight Compute captures without device columns: a note; with `--arch 7.0`, the V100s that
/// fit listed; with `--ceilings`, that GPU's figures and its architecture's counter rules.
#[test]
fn captures_without_a_device_are_given_one() {
    let (b, _) = import(&captures(), &[]);
    assert!(b.machines.is_empty());
    assert!(has_note(&b, "the input names no GPU"), "{:?}", b.notes);
    let (b, _) = import(&captures(), &["--arch", "7.0"]);
    assert!(b.machines.is_empty());
    assert!(
        has_note(
            &b,
            "4 catalogue GPUs fit it with different figures (nvidia-v100-sxm2-16gb, nvidia-v100-sxm2-32gb, nvidia-v100-pcie-16gb, nvidia-v100-pcie-32gb)"
        ),
        "{:?}",
        b.notes
    );
    let (b, _) = import(
        &captures(),
        &["--ceilings", "datasheet:nvidia-v100-sxm2-16gb"],
    );
    assert_eq!(catalogue_id(&b), Some("nvidia-v100-sxm2-16gb"));
    // Volta's tensor rule, as with --arch 7.0: the entry's architecture stands in.
    assert!(
        has_note(
            &b,
            "tensor FLOPs as 512 × sm__inst_executed_pipe_tensor.sum"
        ),
        "{:?}",
        b.notes
    );
    assert!(
        b.kernels
            .iter()
            .any(|k| k.flops.tensor_fp16.is_some_and(|f| f > 0.0))
    );
}
