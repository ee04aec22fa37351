//! Analysing 1,000,000 kernel launches: aggregation by name, then both rooflines; and reading a
//! 100,000-launch bundle.
//!
//! The launches are SYNTHETIC, generated here for timing only (2,000 kernel names, figures from a
//! fixed-seed generator); they are never written anywhere or shown as measurements.
//! Target: under 100 ms on one core for the whole pipeline. Run with
//! `cargo bench -p roofline-model --bench analysis`.

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use roofline_model::analysis::aggregate::aggregate_by_name;
use roofline_model::analysis::analyze;
use roofline_model::bundle::{
    BandwidthCeiling, Bundle, ComputeCeiling, DataSource, Datapath, Device, Kernel, LaunchOverhead,
    Machine, MemoryLevel, Method, Provenance,
};

const LAUNCHES: usize = 1_000_000;
const NAMES: usize = 2_000;

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
}

fn synthetic_bundle() -> Bundle {
    let mut b = Bundle::new(Provenance {
        tool: "benchmark".into(),
        tool_version: "synthetic".into(),
        ..Provenance::default()
    });
    b.description = Some("SYNTHETIC launches for benchmarking only".into());
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
        compute: vec![cp(Datapath::Fp32, 60e12), cp(Datapath::TensorBf16, 900e12)],
        launch_overhead: Some(LaunchOverhead::new(3e-6, Method::Empirical)),
        sweep: vec![],
        ..Machine::default()
    });
    let names: Vec<String> = (0..NAMES)
        .map(|i| {
            format!("void at::native::synthetic_kernel_{i}<float, 4>(at::TensorIterator&, float*)")
        })
        .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    b.kernels = (0..LAUNCHES)
        .map(|i| {
            let f = 1e6 + rng.unit() * 1e10;
            let hbm = 1e5 + rng.unit() * 1e9;
            let t = 2e-6 + rng.unit() * 1e-3;
            let mut k = Kernel::new(names[i % NAMES].clone(), t, DataSource::NsightCompute);
            k.grid = Some([128, 1, 1]);
            k.block = Some([256, 1, 1]);
            k.flops.fp32 = Some(f * 0.1);
            k.flops.tensor_bf16 = Some(f * 0.9);
            k.bytes.l1 = Some(hbm * 4.0);
            k.bytes.l2 = Some(hbm * 2.0);
            k.bytes.hbm = Some(hbm);
            k
        })
        .collect();
    b
}

fn bench(c: &mut Criterion) {
    let bundle = synthetic_bundle();
    let mut g = c.benchmark_group("1M launches");
    g.sample_size(10);
    // The floor: one pass over the launches, touching each once (memory traffic only).
    g.bench_function("baseline: sum every launch's time and FLOPs", |bch| {
        bch.iter(|| {
            black_box(&bundle.kernels)
                .iter()
                .map(|k| k.time.total_s + k.flops.total())
                .sum::<f64>()
        });
    });
    g.bench_function("aggregate by name", |bch| {
        bch.iter(|| black_box(aggregate_by_name(black_box(&bundle.kernels))));
    });
    g.bench_function("analyse every launch (both rooflines)", |bch| {
        bch.iter(|| black_box(analyze(&bundle, black_box(&bundle.kernels))));
    });
    g.bench_function("aggregate, then analyse", |bch| {
        bch.iter(|| {
            let k = aggregate_by_name(black_box(&bundle.kernels));
            black_box(analyze(&bundle, &k))
        });
    });
    g.finish();
}

/// Reading a 100,000-launch bundle (the viewer's open budget): the typed pass alone, and the
/// whole of `parse_bundle` (typed pass and validation), on the pretty JSON `to_json` writes.
fn bench_read(c: &mut Criterion) {
    let mut bundle = synthetic_bundle();
    bundle.kernels.truncate(100_000);
    let pretty = roofline_model::to_json(&bundle).unwrap();
    let compact = serde_json::to_string(&bundle).unwrap();
    let mut g = c.benchmark_group("100k launches, read");
    g.sample_size(10);
    g.bench_function(
        format!(
            "serde_json::from_str only ({} MB pretty)",
            pretty.len() / 1_000_000
        ),
        |bch| {
            bch.iter(|| black_box(serde_json::from_str::<Bundle>(black_box(&pretty)).unwrap()));
        },
    );
    g.bench_function("parse_bundle (pretty)", |bch| {
        bch.iter(|| black_box(roofline_model::parse_bundle(black_box(&pretty)).unwrap()));
    });
    g.bench_function(
        format!("parse_bundle ({} MB compact)", compact.len() / 1_000_000),
        |bch| {
            bch.iter(|| black_box(roofline_model::parse_bundle(black_box(&compact)).unwrap()));
        },
    );
    g.finish();
}

/// What the viewer recomputes after a machine swap on 10,000 aggregated kernels: the report
/// (every kernel, both rooflines) and the hierarchical chart's scene.
fn bench_swap(c: &mut Criterion) {
    let bundle = synthetic_bundle();
    let mut wide = bundle.clone();
    wide.kernels = (0..10_000)
        .map(|i| {
            let mut k = bundle.kernels[i].clone();
            k.name = format!("{} #{i}", k.name);
            k
        })
        .collect();
    let ceilings = roofline_model::analysis::ceilings::Ceilings::from_machine(&wide.machines[0]);
    let options = roofline_model::chart::ChartOptions {
        ceilings: Some(ceilings.clone()),
        ..roofline_model::chart::ChartOptions::browser()
    };
    let mut g = c.benchmark_group("10k kernels, machine swap");
    g.sample_size(20);
    g.bench_function("aggregate only", |bch| {
        bch.iter(|| black_box(aggregate_by_name(black_box(&wide.kernels))));
    });
    g.bench_function("analyse only", |bch| {
        bch.iter(|| {
            black_box(roofline_model::analysis::analyze_with(
                black_box(&wide.kernels),
                |_| Some(ceilings.clone()),
            ))
        });
    });
    g.bench_function("Report::with_ceilings", |bch| {
        bch.iter(|| {
            black_box(roofline_model::analysis::report::Report::with_ceilings(
                black_box(&wide),
                Some(&ceilings),
            ))
        });
    });
    g.bench_function("chart::hierarchical", |bch| {
        bch.iter(|| {
            black_box(roofline_model::chart::hierarchical(
                black_box(&wide),
                &options,
            ))
        });
    });
    g.finish();
}

criterion_group!(benches, bench, bench_read, bench_swap);
criterion_main!(benches);
