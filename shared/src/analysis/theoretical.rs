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
//!
//! Every row says its clock ([`ClockSource`]): the clock our kernel observed on that datapath
//! (`measured`), the device's reported maximum (`device_max`), or, for the GPUs of
//! [`DATASHEETS`], the clock NVIDIA quotes its own figures at (`datasheet`): H100 SXM and H200
//! Tensor Core figures are computed at 1830 MHz, not at the 1980 MHz boost, so a row at the boost
//! reads about 8% above the datasheet. Both rows are written, each labelled.

use crate::bundle::{
    BandwidthCeiling, ClockSource, ComputeCeiling, Datapath, Device, MemoryLevel, Method,
};

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

/// A compute capability written `major.minor` (`8.0`, `9.0`) as `(major, minor)`; `None` when it
/// is not two unsigned numbers around a `.`.
pub fn parse_cc(compute_capability: &str) -> Option<(u32, u32)> {
    let (major, minor) = compute_capability.split_once('.')?;
    Some((major.trim().parse().ok()?, minor.trim().parse().ok()?))
}

/// The table row for a compute capability written `major.minor`, if the architecture is known.
pub fn rates(compute_capability: &str) -> Option<&'static ArchRates> {
    let cc = parse_cc(compute_capability)?;
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

/// One product's datasheet: the clocks NVIDIA computes its figures at, and its memory
/// bandwidth. A device matches on compute capability, SM count and its name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Datasheet {
    /// The product.
    pub product: &'static str,
    /// Compute capability.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Words the driver's name must contain (any one).
    pub name_has: &'static [&'static str],
    /// Words the driver's name must not contain.
    pub name_lacks: &'static [&'static str],
    /// The clock of the Tensor Core FP16, BF16, TF32, FP8 and INT8 figures, Hz.
    pub tensor_clock_hz: f64,
    /// The clock of the FP64 Tensor Core and CUDA-core figures (the maximum boost), Hz.
    pub boost_clock_hz: f64,
    /// Memory bandwidth, byte/s.
    pub hbm_bytes_per_s: f64,
    /// Where the figures come from.
    pub source: &'static str,
}

/// The datasheets known. Sources: for H100 SXM5 and H200, NVIDIA's figures (989.4 TFLOP/s dense
/// BF16 = 132 SMs × 4096 FLOP/clk × 1830 MHz; FP64 Tensor 66.9 = 132 × 256 × 1980 MHz) as
/// stas00/ml-engineering's accelerator notes ("1830MHz is NVIDIA's official compute clock for
/// H200 and H100 … it reproduces the 989TFLOPS bf16 spec exactly"), cudnn-frontend PR #650
/// ("132 SMs x 1.83 GHz x 4096 FLOPs/clk/SM") and glennklockwood.com (H100 SXM5: "1.83 GHz (low
/// precision), 1.98 GHz (high precision)") derive them; H100 SXM5 3.35 TB/s HBM3, H200 4.8 TB/s
/// HBM3e. H100 PCIe: 756 TFLOP/s dense FP16 at 1620 MHz on 114 SMs ("max boost clock for TC
/// usage on H100 PCIE is 1620MHz", NVIDIA forum, R. Crovella, after table 3 of the H100
/// whitepaper), 1755 MHz boost, 2.0 TB/s HBM2e.
pub const DATASHEETS: &[Datasheet] = &[
    Datasheet {
        product: "H100 SXM5",
        compute_capability: (9, 0),
        sm_count: 132,
        name_has: &["H100"],
        name_lacks: &["PCIe", "NVL", "GH200"],
        tensor_clock_hz: 1.83e9,
        boost_clock_hz: 1.98e9,
        hbm_bytes_per_s: 3.35e12,
        source: "NVIDIA H100 SXM5 datasheet",
    },
    Datasheet {
        product: "H200 SXM",
        compute_capability: (9, 0),
        sm_count: 132,
        name_has: &["H200"],
        name_lacks: &["NVL", "GH200"],
        tensor_clock_hz: 1.83e9,
        boost_clock_hz: 1.98e9,
        hbm_bytes_per_s: 4.8e12,
        source: "NVIDIA H200 datasheet",
    },
    Datasheet {
        product: "H100 PCIe",
        compute_capability: (9, 0),
        sm_count: 114,
        name_has: &["H100 PCIe"],
        name_lacks: &[],
        tensor_clock_hz: 1.62e9,
        boost_clock_hz: 1.755e9,
        hbm_bytes_per_s: 2.0e12,
        source: "NVIDIA H100 PCIe datasheet",
    },
];

/// The datasheet of `device`, if it is one of [`DATASHEETS`].
pub fn datasheet(device: &Device) -> Option<&'static Datasheet> {
    let cc = parse_cc(device.compute_capability.as_deref()?)?;
    DATASHEETS.iter().find(|d| {
        d.compute_capability == cc
            && device.sm_count == Some(d.sm_count)
            && d.name_has.iter().any(|w| device.name.contains(w))
            && !d.name_lacks.iter().any(|w| device.name.contains(w))
    })
}

/// Whether a datapath's datasheet figure is quoted at the Tensor Core clock (FP16, BF16, TF32,
/// FP8, INT8 Tensor Cores) rather than the boost clock (FP64 Tensor, CUDA cores).
pub fn at_tensor_clock(d: Datapath) -> bool {
    d.is_tensor() && d != Datapath::TensorFp64
}

/// The theoretical ceilings at the datasheet's clocks (and its HBM figure), each marked
/// `clock_source: datasheet`; empty for a device without a known datasheet.
pub fn datasheet_ceilings(device: &Device) -> (Vec<BandwidthCeiling>, Vec<ComputeCeiling>) {
    let (Some(sheet), Some(r)) = (
        datasheet(device),
        device.compute_capability.as_deref().and_then(rates),
    ) else {
        return (Vec::new(), Vec::new());
    };
    let mut hbm =
        BandwidthCeiling::new(MemoryLevel::Hbm, sheet.hbm_bytes_per_s, Method::Theoretical);
    hbm.implementation = Some(format!("{} (datasheet figure)", sheet.source));
    hbm.clock_source = Some(ClockSource::Datasheet);
    let compute = r
        .flop_per_sm_per_clock
        .iter()
        .map(|&(d, per)| {
            let (clock, which) = if at_tensor_clock(d) {
                (sheet.tensor_clock_hz, "Tensor Core figures")
            } else {
                (sheet.boost_clock_hz, "boost")
            };
            let mut c = ComputeCeiling::new(
                d,
                f64::from(sheet.sm_count) * per * clock,
                Method::Theoretical,
            );
            c.implementation = Some(format!(
                "{} SMs × {per} FLOP/clk × {:.0} MHz ({}: the datasheet's clock for {which})",
                sheet.sm_count,
                clock / 1e6,
                sheet.source
            ));
            c.clock_hz = Some(clock);
            c.clock_source = Some(ClockSource::Datasheet);
            c
        })
        .collect();
    (vec![hbm], compute)
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
    let source = if clock_hz.is_some() {
        ClockSource::Measured
    } else {
        ClockSource::DeviceMax
    };
    match (device.memory_bus_width_bits, device.memory_clock_hz) {
        (Some(w), Some(f)) => {
            let mut c =
                BandwidthCeiling::new(MemoryLevel::Hbm, dram_bandwidth(w, f), Method::Theoretical);
            c.implementation = Some(format!(
                "{w}-bit bus × {:.0} MHz × 2 (the device's reported memory clock)",
                f / 1e6
            ));
            c.clock_source = Some(ClockSource::DeviceMax);
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
            "{sms} SMs × {} B/clk × {:.0} MHz ({})",
            r.l1_bytes_per_sm_per_clock,
            clock / 1e6,
            clock_words(source)
        ));
        c.clock_hz = Some(clock);
        c.clock_source = Some(source);
        bandwidth.push(c);
    }
    for &(d, per) in r.flop_per_sm_per_clock {
        let mut c = ComputeCeiling::new(d, f64::from(sms) * per * clock, Method::Theoretical);
        c.implementation = Some(format!(
            "{sms} SMs × {per} FLOP/clk × {:.0} MHz ({}, {})",
            clock / 1e6,
            r.name,
            clock_words(source)
        ));
        c.clock_hz = Some(clock);
        c.clock_source = Some(source);
        compute.push(c);
    }
    (bandwidth, compute, missing)
}

/// How a row's label names its clock.
fn clock_words(source: ClockSource) -> &'static str {
    match source {
        ClockSource::Measured => "at the clock measured",
        ClockSource::DeviceMax => "at the device's maximum clock",
        ClockSource::Datasheet => "at the datasheet's clock",
    }
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

    /// The datasheet rows reproduce NVIDIA's figures: H100 SXM5 989.4 TFLOP/s dense FP16/BF16,
    /// 1978.9 FP8/INT8, 494.7 TF32 at 1830 MHz; FP64 Tensor and FP32 66.9 at 1980 MHz; 3.35 TB/s.
    /// The H200 matches its own row (4.8 TB/s), the H100 PCIe its own (756 at 1620 MHz); an H100
    /// NVL, a GH200 and an unknown GPU get none.
    #[test]
    fn datasheet_rows_reproduce_nvidia_figures() {
        let dev = |name: &str, sms| {
            let mut d = Device::new("gpu0", name);
            d.compute_capability = Some("9.0".into());
            d.sm_count = Some(sms);
            d
        };
        let (bw, c) = datasheet_ceilings(&dev("NVIDIA H100 80GB HBM3", 132));
        let tf = |d: Datapath| c.iter().find(|x| x.datapath == d).unwrap().value / 1e12;
        for (d, published) in [
            (D::TensorBf16, 989.4),
            (D::TensorFp16, 989.4),
            (D::TensorFp8, 1978.9),
            (D::TensorInt8, 1978.9),
            (D::TensorTf32, 494.7),
            (D::TensorFp64, 66.9),
            (D::Fp32, 66.9),
            (D::Fp64, 33.5),
        ] {
            assert!(rel(tf(d), published) < 0.002, "{d:?}: {}", tf(d));
        }
        assert!(
            c.iter()
                .all(|x| x.clock_source == Some(ClockSource::Datasheet))
        );
        assert_eq!(bw[0].value, 3.35e12);
        assert!(
            c[0].implementation
                .as_deref()
                .unwrap()
                .contains("NVIDIA H100 SXM5 datasheet")
        );
        let (bw, _) = datasheet_ceilings(&dev("NVIDIA H200", 132));
        assert_eq!(bw[0].value, 4.8e12);
        let (_, pcie) = datasheet_ceilings(&dev("NVIDIA H100 PCIe", 114));
        let fp16 = pcie.iter().find(|x| x.datapath == D::TensorFp16).unwrap();
        assert!(rel(fp16.value, 756e12) < 0.002, "{}", fp16.value);
        for (name, sms) in [
            ("NVIDIA H100 NVL", 132),
            ("NVIDIA GH200 480GB", 132),
            ("NVIDIA H100 80GB HBM3", 114),
            ("Some GPU", 132),
        ] {
            assert_eq!(datasheet(&dev(name, sms)), None, "{name}");
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
        assert_eq!(fp32.clock_source, Some(ClockSource::Measured));
        let (_, at_max, _) = ceilings(&d, None);
        assert!(
            at_max
                .iter()
                .all(|c| c.clock_source == Some(ClockSource::DeviceMax))
        );
    }
}
