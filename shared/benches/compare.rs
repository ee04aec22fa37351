//! Comparing two runs of 10,000 kernels each (the viewer's compare budget: a baseline chosen →
//! summary, table and arrows drawn in under 100 ms), step by step: the baseline's analysis, the
//! matching and figures ([`compare`]), and both charts with their arrows ([`compare_scene`]).
//!
//! The kernels are SYNTHETIC, generated here for timing only (long PyTorch-like names, figures
//! from a fixed-seed generator; the "after" run scales every time, renames one kernel in twenty
//! and drops one in twenty, as `tests/synthetic.rs` does for the browser benchmark); they are
//! never written anywhere or shown as measurements. Run with
//! `cargo bench -p roofline-model --bench compare`.

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use roofline_model::analysis::Analysed;
use roofline_model::analysis::compare::{compare, pairing};
use roofline_model::bundle::{
    BandwidthCeiling, Bundle, ComputeCeiling, DataSource, Datapath, Device, Kernel, LaunchOverhead,
    Machine, MemoryLevel, Method, Provenance,
};
use roofline_model::chart::overlay::compare_scene;
use roofline_model::chart::{ChartOptions, hierarchical_of, time_based_of};

const KERNELS: usize = 10_000;

/// A small xorshift generator: fixed seed, so every run times the same input.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        #[allow(clippy::cast_precision_loss)]
        let v = (self.0 >> 11) as f64 / (1u64 << 53) as f64;
        v
    }

    fn log_between(&mut self, lo: f64, hi: f64) -> f64 {
        lo * (hi / lo).powf(self.unit())
    }
}

fn name(i: usize) -> String {
    match i % 4 {
        0 => format!(
            "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_{i}_128x256_64x3_tn_align8>(Params)"
        ),
        1 => format!(
            "void at::native::vectorized_elementwise_kernel<4, at::native::synthetic_op_{i}<float>, at::detail::Array<char*, 3> >(int, at::native::synthetic_op_{i}<float>, at::detail::Array<char*, 3>)"
        ),
        2 => format!(
            "void cudnn::synthetic_conv_fprop_{i}<__nv_bfloat16, float, 128, 64, 32, true>(cudnn::ConvParams, __nv_bfloat16 const*, __nv_bfloat16*)"
        ),
        _ => format!(
            "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::synthetic_reduce_{i}<float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::synthetic_reduce_{i}<float>, unsigned int, float, 4>)"
        ),
    }
}

/// The SYNTHETIC baseline: 10,000 aggregated kernels with a machine.
fn before() -> Bundle {
    let mut b = Bundle::new(Provenance {
        tool: "benchmark".into(),
        tool_version: "synthetic".into(),
        ..Provenance::default()
    });
    b.description = Some("SYNTHETIC kernels for benchmarking only".into());
    b.devices.push(Device::new("0", "synthetic"));
    let bw = |level, value| BandwidthCeiling::new(level, value, Method::Empirical);
    let cp = |datapath, value| ComputeCeiling::new(datapath, value, Method::Empirical);
    b.machines.push(Machine {
        device: "0".into(),
        bandwidth: vec![
            bw(MemoryLevel::L1, 30e12),
            bw(MemoryLevel::L2, 10e12),
            bw(MemoryLevel::Hbm, 3e12),
        ],
        compute: vec![cp(Datapath::Fp32, 60e12), cp(Datapath::TensorBf16, 700e12)],
        launch_overhead: Some(LaunchOverhead::new(3e-6, Method::Empirical)),
        sweep: vec![],
        ..Machine::default()
    });
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    b.kernels = (0..KERNELS)
        .map(|i| {
            #[allow(
                clippy::cast_precision_loss,
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss
            )]
            let n = rng.log_between(1.0, 200.0) as u64;
            #[allow(clippy::cast_precision_loss)]
            let scale = n as f64;
            let mut k = Kernel::new(
                name(i),
                rng.log_between(2e-6, 2e-3) * scale,
                DataSource::NsightCompute,
            );
            k.launches = n;
            let hbm = rng.log_between(1e5, 1e9) * scale;
            let tensor = i % 2 == 0;
            let ai = if tensor {
                rng.log_between(20.0, 2000.0)
            } else {
                rng.log_between(0.05, 4.0)
            };
            if tensor {
                k.flops.tensor_bf16 = Some(hbm * ai * 0.95);
                k.flops.fp32 = Some(hbm * ai * 0.05);
            } else {
                k.flops.fp32 = Some(hbm * ai);
                k.flops.tensor_bf16 = Some(0.0);
            }
            k.bytes.l1 = Some(hbm * rng.log_between(1.5, 8.0));
            k.bytes.l2 = Some(hbm * rng.log_between(1.0, 3.0));
            k.bytes.hbm = Some(hbm);
            k
        })
        .collect();
    b
}

/// The SYNTHETIC current run: times scaled, one kernel in twenty renamed, one dropped.
fn after(before: &Bundle) -> Bundle {
    let mut b = before.clone();
    b.kernels = b
        .kernels
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 20 != 7)
        .map(|(i, k)| {
            let mut k = k.clone();
            #[allow(clippy::cast_precision_loss)]
            let f = 0.5 + ((i * 37) % 101) as f64 / 100.0;
            k.time.total_s *= f;
            if i % 20 == 3 {
                k.name = format!("{} (renamed)", k.name);
            }
            k
        })
        .collect();
    b
}

fn bench(c: &mut Criterion) {
    let base_bundle = before();
    let cur_bundle = after(&base_bundle);
    let cur = Analysed::new(&cur_bundle, None, None);
    let base = Analysed::new(&base_bundle, None, None);
    let o = ChartOptions::browser();
    let mut g = c.benchmark_group("compare 10k × 10k kernels");
    g.sample_size(20);
    g.bench_function("the baseline's analysis (Analysed::new)", |bch| {
        bch.iter(|| black_box(Analysed::new(black_box(&base_bundle), None, None)));
    });
    g.bench_function("pairing only", |bch| {
        bch.iter(|| black_box(pairing(black_box(&cur), black_box(&base)).len()));
    });
    g.bench_function("compare (matching, rows and summary)", |bch| {
        bch.iter(|| black_box(compare(black_box(&cur), black_box(&base))));
    });
    g.bench_function("compare_scene, hierarchical", |bch| {
        bch.iter(|| black_box(compare_scene(&cur, &base, hierarchical_of, &o).unwrap()));
    });
    g.bench_function("compare_scene, time-based", |bch| {
        bch.iter(|| black_box(compare_scene(&cur, &base, time_based_of, &o).unwrap()));
    });
    g.bench_function("display names of the current run (the table's)", |bch| {
        // What `Analysed::display_names` computes once per analysis (it keeps the result).
        bch.iter(|| {
            let entries: Vec<(String, &str)> = cur
                .kernels
                .iter()
                .map(|k| (k.short_name(), k.name.as_str()))
                .collect();
            black_box(roofline_model::analysis::names::disambiguate(&entries))
        });
    });
    g.bench_function("hierarchical_of alone (current run, names known)", |bch| {
        bch.iter(|| black_box(hierarchical_of(&cur, &o).unwrap()));
    });
    g.bench_function(
        "all a baseline choice costs (analysis, compare, scene)",
        |bch| {
            bch.iter(|| {
                let base = Analysed::new(black_box(&base_bundle), None, None);
                let c = compare(&cur, &base);
                let s = compare_scene(&cur, &base, hierarchical_of, &o).unwrap();
                black_box((c, s))
            });
        },
    );
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
