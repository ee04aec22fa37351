//! Theoretical ceilings from device attributes: units × operations per unit per clock × clock.
//!
//! Compute: `peak = SMs × FLOP per SM per clock × SM clock`, with the per-SM rates of each
//! architecture taken from NVIDIA's architecture whitepapers (Volta GV100, Ampere GA100 and GA102,
//! Ada AD102, Hopper GH100), dense (no structured sparsity), Tensor Core FP16/BF16 with FP32
//! accumulation. Each rate is checked in the tests against the whitepaper's headline figure for
//! one product (for example H100 SXM5: 132 SMs × 256 FP32 FLOP/clk × 1.98 GHz = 66.9 TFLOP/s).
//!
//! Memory: `HBM = bus width / 8 × memory clock × 2` (double data rate, the driver reporting the
//! memory clock as the HBM/GDDR command clock), and `L1 = shared = 128 B/clk/SM × SMs × SM clock`
//! (the L1/shared-memory load bandwidth of every architecture since Volta, per the whitepapers).
//! No L2 figure is given: NVIDIA does not document an L2 bandwidth per clock.

use crate::bundle::{BandwidthCeiling, ComputeCeiling, Datapath, Device, MemoryLevel, Method};

/// FLOP (or integer operations for INT8) per SM per clock, per datapath, of one architecture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArchRates {
    /// Compute capability major.minor this row covers.
    pub compute_capability: (u32, u32),
    /// Architecture name.
    pub name: &'static str,
    /// `(datapath, FLOP per SM per clock)`; a datapath missing here has no such hardware.
    pub flop_per_sm_per_clock: &'static [(Datapath, f64)],
    /// L1 / shared-memory load bandwidth, bytes per SM per clock.
    pub l1_bytes_per_sm_per_clock: f64,
}

use Datapath as D;

/// The per-architecture table. Sources: NVIDIA Tesla V100 whitepaper (2017), A100 Tensor Core
/// GPU architecture whitepaper (2020), GA102 whitepaper (2020), Ada Lovelace architecture
/// whitepaper (2022), H100 Tensor Core GPU architecture whitepaper (2022).
pub const TABLE: &[ArchRates] = &[
    ArchRates {
        compute_capability: (7, 0),
        name: "Volta",
        flop_per_sm_per_clock: &[
            (D::Fp64, 64.0),
            (D::Fp32, 128.0),
            (D::Fp16, 256.0),
            (D::TensorFp16, 1024.0),
        ],
        l1_bytes_per_sm_per_clock: 128.0,
    },
    ArchRates {
        compute_capability: (8, 0),
        name: "Ampere (GA100)",
        flop_per_sm_per_clock: &[
            (D::Fp64, 64.0),
            (D::Fp32, 128.0),
            (D::Fp16, 512.0),
            (D::Bf16, 256.0),
            (D::TensorFp16, 2048.0),
            (D::TensorBf16, 2048.0),
            (D::TensorTf32, 1024.0),
            (D::TensorInt8, 4096.0),
            (D::TensorFp64, 128.0),
        ],
        l1_bytes_per_sm_per_clock: 128.0,
    },
    ArchRates {
        compute_capability: (8, 6),
        name: "Ampere (GA10x)",
        flop_per_sm_per_clock: &[
            (D::Fp64, 4.0),
            (D::Fp32, 256.0),
            (D::Fp16, 256.0),
            (D::Bf16, 256.0),
            (D::TensorFp16, 1024.0),
            (D::TensorBf16, 1024.0),
            (D::TensorTf32, 512.0),
            (D::TensorInt8, 2048.0),
        ],
        l1_bytes_per_sm_per_clock: 128.0,
    },
    ArchRates {
        compute_capability: (8, 9),
        name: "Ada Lovelace",
        flop_per_sm_per_clock: &[
            (D::Fp64, 4.0),
            (D::Fp32, 256.0),
            (D::Fp16, 256.0),
            (D::Bf16, 256.0),
            (D::TensorFp16, 1024.0),
            (D::TensorBf16, 1024.0),
            (D::TensorTf32, 512.0),
            (D::TensorFp8, 2048.0),
            (D::TensorInt8, 2048.0),
        ],
        l1_bytes_per_sm_per_clock: 128.0,
    },
    ArchRates {
        compute_capability: (9, 0),
        name: "Hopper",
        flop_per_sm_per_clock: &[
            (D::Fp64, 128.0),
            (D::Fp32, 256.0),
            (D::Fp16, 512.0),
            (D::Bf16, 512.0),
            (D::TensorFp16, 4096.0),
            (D::TensorBf16, 4096.0),
            (D::TensorTf32, 2048.0),
            (D::TensorFp8, 8192.0),
            (D::TensorInt8, 8192.0),
            (D::TensorFp64, 256.0),
        ],
        l1_bytes_per_sm_per_clock: 128.0,
    },
];

/// The table row for a compute capability written `major.minor`, if the architecture is known.
pub fn rates(compute_capability: &str) -> Option<&'static ArchRates> {
    let (major, minor) = compute_capability.split_once('.')?;
    let cc = (major.trim().parse().ok()?, minor.trim().parse().ok()?);
    TABLE.iter().find(|r| r.compute_capability == cc)
}

impl ArchRates {
    /// FLOP per SM per clock on a datapath, if the architecture has it.
    pub fn per_sm_per_clock(&self, d: Datapath) -> Option<f64> {
        self.flop_per_sm_per_clock
            .iter()
            .find(|(p, _)| *p == d)
            .map(|(_, v)| *v)
    }
}

/// `SMs × FLOP per SM per clock × clock`, FLOP/s.
pub fn compute_peak(rates: &ArchRates, d: Datapath, sm_count: u32, clock_hz: f64) -> Option<f64> {
    rates
        .per_sm_per_clock(d)
        .map(|per| f64::from(sm_count) * per * clock_hz)
}

/// `bus width / 8 × memory clock × 2`, byte/s.
pub fn dram_bandwidth(bus_width_bits: u32, memory_clock_hz: f64) -> f64 {
    f64::from(bus_width_bits) / 8.0 * memory_clock_hz * 2.0
}

/// Every theoretical ceiling the device's attributes allow, at `clock_hz` for the SM-clocked
/// figures (pass the clock observed while measuring to compare like with like; `None` uses the
/// device's reported clock). Returns the ceilings and, for each one that cannot be computed, why.
pub fn ceilings(
    device: &Device,
    clock_hz: Option<f64>,
) -> (Vec<BandwidthCeiling>, Vec<ComputeCeiling>, Vec<String>) {
    let mut missing = Vec::new();
    let mut bandwidth = Vec::new();
    let mut compute = Vec::new();
    let clock = clock_hz.or(device.sm_clock_hz);
    match (device.memory_bus_width_bits, device.memory_clock_hz) {
        (Some(w), Some(f)) => {
            let mut c =
                BandwidthCeiling::new(MemoryLevel::Hbm, dram_bandwidth(w, f), Method::Theoretical);
            c.implementation = Some(format!("{w}-bit bus × {:.0} MHz × 2", f / 1e6));
            bandwidth.push(c);
        }
        _ => missing.push("HBM: the driver reported no memory bus width or memory clock".into()),
    }
    let cc = device.compute_capability.as_deref().unwrap_or("unknown");
    let Some(r) = rates(cc) else {
        missing.push(format!(
            "compute and L1: compute capability {cc} is not in the theoretical-rate table"
        ));
        return (bandwidth, compute, missing);
    };
    let (Some(sms), Some(clock)) = (device.sm_count, clock) else {
        missing.push("compute and L1: the SM count or SM clock is unknown".into());
        return (bandwidth, compute, missing);
    };
    for level in [MemoryLevel::L1, MemoryLevel::Shared] {
        let mut c = BandwidthCeiling::new(
            level,
            f64::from(sms) * r.l1_bytes_per_sm_per_clock * clock,
            Method::Theoretical,
        );
        c.implementation = Some(format!(
            "{sms} SMs × {} B/clk × {:.0} MHz",
            r.l1_bytes_per_sm_per_clock,
            clock / 1e6
        ));
        c.clock_hz = Some(clock);
        bandwidth.push(c);
    }
    for &(d, per) in r.flop_per_sm_per_clock {
        let mut c = ComputeCeiling::new(d, f64::from(sms) * per * clock, Method::Theoretical);
        c.implementation = Some(format!(
            "{sms} SMs × {per} FLOP/clk × {:.0} MHz ({})",
            clock / 1e6,
            r.name
        ));
        c.clock_hz = Some(clock);
        compute.push(c);
    }
    (bandwidth, compute, missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b
    }

    /// Each architecture's rates reproduce one product's headline figure from its whitepaper.
    #[test]
    fn rates_reproduce_whitepaper_headlines() {
        // (cc, datapath, SMs, clock GHz, published TFLOP/s)
        let cases = [
            ("7.0", D::Fp32, 80, 1.53, 15.7), // V100 SXM2
            ("7.0", D::TensorFp16, 80, 1.53, 125.0),
            ("8.0", D::Fp64, 108, 1.41, 9.7), // A100 SXM4
            ("8.0", D::TensorFp16, 108, 1.41, 312.0),
            ("8.0", D::TensorTf32, 108, 1.41, 156.0),
            ("8.0", D::TensorFp64, 108, 1.41, 19.5),
            ("8.0", D::Fp16, 108, 1.41, 78.0),
            ("9.0", D::Fp32, 132, 1.98, 66.9), // H100 SXM5 (at the 1.98 GHz max clock)
            ("9.0", D::Fp64, 132, 1.98, 33.5),
            ("9.0", D::Fp16, 132, 1.98, 133.8),
            ("9.0", D::TensorFp16, 132, 1.83, 989.4), // whitepaper's tensor figure at 1.83 GHz
            ("9.0", D::TensorFp8, 132, 1.83, 1978.9),
            ("9.0", D::TensorFp64, 132, 1.98, 66.9),
            ("8.9", D::TensorFp16, 142, 2.52, 362.1), // L40S
        ];
        for (cc, d, sms, ghz, tflops) in cases {
            let r = rates(cc).unwrap();
            let got = compute_peak(r, d, sms, ghz * 1e9).unwrap() / 1e12;
            // Published figures are rounded, and some products quote a slightly lower clock.
            assert!(rel(got, tflops) < 0.015, "{cc} {d:?}: {got} vs {tflops}");
        }
    }

    #[test]
    fn h100_hbm3_from_bus_and_clock() {
        // H100 SXM5: 5120-bit HBM3 at 2619 MHz (nvidia-smi) → 3.35 TB/s as published.
        let bw = dram_bandwidth(5120, 2619e6);
        assert!(rel(bw, 3.35e12) < 0.005, "{bw}");
    }

    #[test]
    fn unknown_architecture_is_said_not_guessed() {
        let mut d = Device::new("gpu0", "Some GPU");
        d.compute_capability = Some("12.0".into());
        d.sm_count = Some(10);
        d.sm_clock_hz = Some(1e9);
        let (bw, c, missing) = ceilings(&d, None);
        assert!(bw.is_empty() && c.is_empty());
        assert_eq!(missing.len(), 2, "{missing:?}");
        assert!(missing[1].contains("12.0"));
    }

    #[test]
    fn ceilings_use_the_given_clock() {
        let mut d = Device::new("gpu0", "H100");
        d.compute_capability = Some("9.0".into());
        d.sm_count = Some(132);
        d.sm_clock_hz = Some(1.98e9);
        d.memory_bus_width_bits = Some(5120);
        d.memory_clock_hz = Some(2619e6);
        let (bw, c, missing) = ceilings(&d, Some(1.5e9));
        assert!(missing.is_empty());
        let fp32 = c.iter().find(|c| c.datapath == D::Fp32).unwrap();
        assert!(rel(fp32.value, 132.0 * 256.0 * 1.5e9) < 1e-12);
        assert_eq!(fp32.clock_hz, Some(1.5e9));
        let l1 = bw.iter().find(|b| b.level == MemoryLevel::L1).unwrap();
        assert!(rel(l1.value, 132.0 * 128.0 * 1.5e9) < 1e-12);
        assert!(bw.iter().any(|b| b.level == MemoryLevel::Hbm));
        assert!(c.iter().all(|c| c.method == Method::Theoretical));
    }
}
