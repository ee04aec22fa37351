//! Cross-checks of the catalogue's peaks against the architectures' per-SM (per-CU) rates.
//!
//! A peak is SMs × operations per clock per SM × clock. Each table below gives an
//! architecture's dense rates, in FLOP (or integer operations) per clock per SM, with the
//! document that states them, and the entries it applies to. For an entry with an SM count and
//! a clock, every peak must equal SMs × rate × clock to within one unit of the last digit the
//! source prints (one unit, not half: vendors round twice, 33.45 → 33.5 → 34). For an entry
//! without them, the peaks of one clock domain must imply the same SMs × clock to within the
//! sum of their printed precisions (the clock cancels). A figure that fails is either a data
//! error or a disagreement of the source with itself; the known disagreements are listed, with
//! why, and must keep failing (so that fixing the data updates the list).

use roofline_model::bundle::Datapath;

use crate::{Catalogue, Figure, GpuEntry};

/// Which clock a datapath's figure assumes: NVIDIA computes Hopper's Tensor Core figures (all
/// but FP64) at a lower clock than the rest.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Domain {
    Vector,
    Tensor,
}

use Datapath as D;
use Domain::{Tensor, Vector};

struct Rates {
    architecture: &'static str,
    /// Where the per-SM rates are stated.
    source: &'static str,
    entries: &'static [&'static str],
    /// (datapath, dense operations per clock per SM, clock domain).
    rates: &'static [(Datapath, f64, Domain)],
}

const TABLES: &[Rates] = &[
    Rates {
        architecture: "Volta GV100",
        source: "Volta whitepaper: 64 FP32 and 32 FP64 cores per SM, 8 Tensor Cores per SM of \
                 64 FP16 FMA per clock; FP16 at twice FP32 (A100 whitepaper Table 4, V100 column: \
                 31.4 against 15.7)",
        entries: &[
            "nvidia-v100-sxm2-16gb",
            "nvidia-v100-sxm2-32gb",
            "nvidia-v100-pcie-16gb",
            "nvidia-v100-pcie-32gb",
        ],
        rates: &[
            (D::Fp32, 128.0, Vector),
            (D::Fp64, 64.0, Vector),
            (D::Fp16, 256.0, Vector),
            (D::TensorFp16, 1024.0, Vector),
        ],
    },
    Rates {
        architecture: "Turing TU104",
        source: "Turing whitepaper: 64 FP32 cores and 8 Tensor Cores per SM (64 FP16 FMA per \
                 clock each, INT8 at twice FP16)",
        entries: &["nvidia-t4"],
        rates: &[
            (D::Fp32, 128.0, Vector),
            (D::TensorFp16, 1024.0, Vector),
            (D::TensorInt8, 2048.0, Vector),
        ],
    },
    Rates {
        architecture: "Ampere GA100",
        source: "A100 whitepaper: 64 FP32 and 32 FP64 cores per SM, 64 FP64 Tensor FMA and 1024 \
                 dense FP16 Tensor FMA per clock per SM; FP16 at 4x and BF16 at 2x FP32 \
                 (Table 4: 78 and 39 against 19.5)",
        entries: &[
            "nvidia-a100-sxm4-40gb",
            "nvidia-a100-sxm4-80gb",
            "nvidia-a100-pcie-40gb",
            "nvidia-a100-pcie-80gb",
            "nvidia-a30",
        ],
        rates: &[
            (D::Fp32, 128.0, Vector),
            (D::Fp64, 64.0, Vector),
            (D::Fp16, 512.0, Vector),
            (D::Bf16, 256.0, Vector),
            (D::TensorFp64, 128.0, Vector),
            (D::TensorTf32, 1024.0, Vector),
            (D::TensorFp16, 2048.0, Vector),
            (D::TensorBf16, 2048.0, Vector),
            (D::TensorInt8, 4096.0, Vector),
        ],
    },
    Rates {
        architecture: "Ampere GA10x, professional and data-center boards",
        source: "GA102 whitepaper: 128 FP32 cores and 4 Tensor Cores per SM; FP32 accumulation \
                 at the full Tensor rate on these boards (RTX A6000, Table 3)",
        entries: &["nvidia-a10", "nvidia-a40", "nvidia-rtx-a6000"],
        rates: &[
            (D::Fp32, 256.0, Vector),
            (D::TensorTf32, 512.0, Vector),
            (D::TensorFp16, 1024.0, Vector),
            (D::TensorBf16, 1024.0, Vector),
            (D::TensorInt8, 2048.0, Vector),
        ],
    },
    Rates {
        architecture: "Ampere GA10x, GeForce",
        source: "GA102 whitepaper Appendix A: FP16/BF16 with FP32 accumulate at half the \
                 professional rate on GeForce boards; INT8 at the full rate",
        entries: &["nvidia-rtx-3090"],
        rates: &[
            (D::Fp32, 256.0, Vector),
            (D::TensorFp16, 512.0, Vector),
            (D::TensorBf16, 512.0, Vector),
            (D::TensorInt8, 2048.0, Vector),
        ],
    },
    Rates {
        architecture: "Ada AD10x, GeForce",
        source: "Ada whitepaper Appendix A Table 2: 128 FP32 cores per SM; FP16/BF16 and FP8 \
                 with FP32 accumulate at half the FP16-accumulate rate",
        entries: &["nvidia-rtx-4090"],
        rates: &[
            (D::Fp32, 256.0, Vector),
            (D::TensorTf32, 256.0, Vector),
            (D::TensorFp16, 512.0, Vector),
            (D::TensorBf16, 512.0, Vector),
            (D::TensorFp8, 1024.0, Vector),
            (D::TensorInt8, 2048.0, Vector),
        ],
    },
    Rates {
        architecture: "Ada AD10x, professional and data-center boards",
        source: "Ada whitepaper: 128 FP32 cores and 4 Tensor Cores per SM; full-rate FP32 \
                 accumulation on these boards (RTX PRO Blackwell whitepaper Table 4: RTX 6000 \
                 Ada BF16 364 at 142 SMs)",
        entries: &["nvidia-l4", "nvidia-l40s", "nvidia-rtx-6000-ada"],
        rates: &[
            (D::Fp32, 256.0, Vector),
            (D::TensorTf32, 512.0, Vector),
            (D::TensorFp16, 1024.0, Vector),
            (D::TensorBf16, 1024.0, Vector),
            (D::TensorFp8, 2048.0, Vector),
            (D::TensorInt8, 2048.0, Vector),
        ],
    },
    Rates {
        architecture: "Hopper GH100",
        source: "H100 whitepaper Table 3 (128 FP32 and 64 FP64 cores per SM) and the Hot Chips \
                 34 per-SM table as quoted with it (dense MAC per clock per SM: FP64 Tensor 128, \
                 TF32 1024, FP16/BF16 2048, FP8/INT8 4096); FP16/BF16 non-Tensor at 2x FP32 \
                 (Table 3: 133.8 against 66.9)",
        entries: &[
            "nvidia-h100-sxm5",
            "nvidia-h100-pcie",
            "nvidia-h100-nvl",
            "nvidia-h200-sxm",
            "nvidia-h200-nvl",
            "nvidia-gh200-96gb",
            "nvidia-gh200-144gb",
        ],
        rates: &[
            (D::Fp32, 256.0, Vector),
            (D::Fp64, 128.0, Vector),
            (D::Fp16, 512.0, Vector),
            (D::Bf16, 512.0, Vector),
            (D::TensorFp64, 256.0, Vector),
            (D::TensorFp16, 4096.0, Tensor),
            (D::TensorTf32, 2048.0, Tensor),
            (D::TensorBf16, 4096.0, Tensor),
            (D::TensorFp8, 8192.0, Tensor),
            (D::TensorInt8, 8192.0, Tensor),
        ],
    },
    Rates {
        architecture: "AMD CDNA (MI100)",
        source: "CDNA 2 whitepaper, FLOPS/clock/CU table (MI100 column): FP64 64, FP32 128, \
                 matrix FP16 1024, BF16 512, INT8 1024",
        entries: &["amd-mi100"],
        rates: &[
            (D::Fp32, 128.0, Vector),
            (D::Fp64, 64.0, Vector),
            (D::TensorFp16, 1024.0, Vector),
            (D::TensorBf16, 512.0, Vector),
            (D::TensorInt8, 1024.0, Vector),
        ],
    },
    Rates {
        architecture: "AMD CDNA 2 (MI200, per GCD)",
        source: "ROCm MI250 page and CDNA 2 whitepaper, FLOPS/clock/CU: vector FP64 and FP32 128, \
                 matrix FP64 256, matrix FP16/BF16/INT8 1024",
        entries: &["amd-mi210", "amd-mi250-gcd", "amd-mi250x-gcd"],
        rates: &[
            (D::Fp32, 128.0, Vector),
            (D::Fp64, 128.0, Vector),
            (D::TensorFp64, 256.0, Vector),
            (D::TensorFp16, 1024.0, Vector),
            (D::TensorBf16, 1024.0, Vector),
            (D::TensorInt8, 1024.0, Vector),
        ],
    },
    Rates {
        architecture: "AMD CDNA 3",
        source: "CDNA 3 whitepaper endnote MI325-019, FLOPS per clock per CU: FP64 128, FP64 \
                 matrix 256, FP32 256, TF32 1024, FP16/BF16 2048, FP8 and INT8 4096",
        entries: &["amd-mi300x", "amd-mi325x"],
        rates: &[
            (D::Fp32, 256.0, Vector),
            (D::Fp64, 128.0, Vector),
            (D::TensorFp64, 256.0, Vector),
            (D::TensorTf32, 1024.0, Vector),
            (D::TensorFp16, 2048.0, Vector),
            (D::TensorBf16, 2048.0, Vector),
            (D::TensorFp8, 4096.0, Vector),
            (D::TensorInt8, 4096.0, Vector),
        ],
    },
];

/// Entries with peaks but no per-SM check, and why.
const UNCHECKED: &[(&str, &str)] = &[
    (
        "nvidia-b200",
        "no Blackwell data-center per-SM rates in a source read here",
    ),
    (
        "nvidia-gb200",
        "no Blackwell data-center per-SM rates in a source read here",
    ),
    (
        "nvidia-rtx-5090",
        "one peak only, and no Blackwell GeForce per-SM rates in a source read here",
    ),
];

/// Where the printed figures disagree with each other beyond rounding, and why.
const KNOWN_DISAGREEMENTS: &[(&str, Datapath, &str)] = &[
    (
        "nvidia-l40s",
        D::TensorFp16,
        "362.05 implies 2490 MHz where every other L40S figure, and half its own sparse 733, \
         imply 2520 MHz; unexplained by the source",
    ),
    (
        "nvidia-l40s",
        D::TensorBf16,
        "362.05 implies 2490 MHz where every other L40S figure implies 2520 MHz",
    ),
];

/// The relative precision of a figure as its source prints it: one unit of the last printed
/// digit, divided by the printed number. The printed number is the one in `printed` that, as
/// printed or halved (a sparse figure), is closest to the value.
fn precision(f: &Figure) -> f64 {
    let printed = f.printed.as_deref().unwrap_or("");
    let mut best: Option<(f64, f64)> = None; // (closeness, precision)
    let mut token = String::new();
    let mut flush = |token: &mut String| {
        let digits: String = token.chars().filter(|c| *c != ',').collect();
        token.clear();
        let Ok(n) = digits.parse::<f64>() else {
            return;
        };
        if n <= 0.0 {
            return;
        }
        let decimals = digits.split_once('.').map_or(0, |(_, d)| d.len());
        let unit = 10f64.powi(-i32::try_from(decimals).unwrap_or(0));
        for scale in [1e9, 1e12, 1e15] {
            for halve in [1.0, 0.5] {
                let v = n * scale * halve;
                let closeness = (v - f.value).abs() / f.value;
                if best.is_none_or(|(c, _)| closeness < c) {
                    best = Some((closeness, unit / n));
                }
            }
        }
    };
    for ch in printed.chars() {
        if ch.is_ascii_digit() || ch == '.' || (ch == ',' && !token.is_empty()) {
            token.push(ch);
        } else {
            flush(&mut token);
        }
    }
    flush(&mut token);
    match best {
        Some((closeness, p)) if closeness < 0.01 => p,
        // Nothing printed matches the value: hold it to 0.5 %.
        _ => 0.005,
    }
}

/// The figures of an entry that fail the per-SM check, with a description of each.
fn failures(entry: &GpuEntry, table: &Rates) -> Vec<(Datapath, String)> {
    let mut out = Vec::new();
    for (d, _) in entry.peaks() {
        if !table.rates.iter().any(|(r, _, _)| *r == d) {
            out.push((
                d,
                format!("no per-SM rate for {} in {}", d.key(), table.architecture),
            ));
        }
    }
    let sms = entry.sm_count().map(f64::from);
    for domain in [Vector, Tensor] {
        let present: Vec<(Datapath, f64, &Figure)> = table
            .rates
            .iter()
            .filter(|(_, _, dom)| *dom == domain)
            .filter_map(|(d, rate, _)| entry.peak(*d).map(|f| (*d, *rate, f)))
            .collect();
        let Some(&(_, ref_rate, ref_figure)) = present.first() else {
            continue;
        };
        for &(d, rate, f) in &present {
            let tolerance = precision(f);
            match (sms, entry.assumed_clock_hz(d)) {
                (Some(sms), Some(clock)) => {
                    let expected = sms * rate * clock;
                    let off = (f.value - expected).abs() / expected;
                    if off > tolerance {
                        out.push((
                            d,
                            format!(
                                "{} = {:.4e} but {sms} SMs x {rate} x {clock:.4e} Hz = {expected:.4e} \
                                 ({:.2} % off, printed precision {:.2} %)",
                                d.key(),
                                f.value,
                                off * 100.0,
                                tolerance * 100.0
                            ),
                        ));
                    }
                }
                _ => {
                    // The SM-clock product each figure implies must agree within the domain.
                    let implied = f.value / rate;
                    let reference = ref_figure.value / ref_rate;
                    let off = (implied - reference).abs() / reference;
                    let tolerance = tolerance + precision(ref_figure);
                    if off > tolerance {
                        out.push((
                            d,
                            format!(
                                "{} implies SMs x clock = {implied:.4e}, the domain's first \
                                 figure {reference:.4e} ({:.2} % off, precision {:.2} %)",
                                d.key(),
                                off * 100.0,
                                tolerance * 100.0
                            ),
                        ));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_entry_with_peaks_is_checked_or_listed_as_unchecked() {
    let c = Catalogue::get();
    for e in c.entries() {
        if e.peaks_flop_per_s.is_empty() {
            continue;
        }
        let tables = TABLES
            .iter()
            .filter(|t| t.entries.contains(&e.id.as_str()))
            .count();
        let unchecked = UNCHECKED.iter().any(|(id, _)| *id == e.id);
        assert!(
            (tables == 1) != unchecked,
            "{}: in {tables} rate table(s), unchecked: {unchecked}",
            e.id
        );
    }
    for t in TABLES {
        assert!(!t.source.is_empty());
        for id in t.entries {
            assert!(
                c.by_id(id).is_some(),
                "{} names unknown {id}",
                t.architecture
            );
        }
    }
}

#[test]
fn every_peak_agrees_with_the_per_sm_rates() {
    let c = Catalogue::get();
    let mut unexpected = Vec::new();
    let mut known_seen = Vec::new();
    for t in TABLES {
        for id in t.entries {
            let e = c.by_id(id).unwrap();
            for (d, why) in failures(e, t) {
                if KNOWN_DISAGREEMENTS
                    .iter()
                    .any(|(k, kd, _)| k == id && *kd == d)
                {
                    known_seen.push((*id, d));
                } else {
                    unexpected.push(format!("{id}: {why}"));
                }
            }
        }
    }
    assert!(unexpected.is_empty(), "{unexpected:#?}");
    for (id, d, why) in KNOWN_DISAGREEMENTS {
        assert!(
            known_seen.contains(&(*id, *d)),
            "{id} {}: listed as a disagreement ({why}) but now agrees; remove it from the list",
            d.key()
        );
    }
}

#[test]
fn the_worked_examples_hold() {
    // H100 SXM5 FP32 = 132 x 256 x 1.98 GHz; A100 Tensor FP16 = 108 x 2048 x 1.41 GHz.
    let c = Catalogue::get();
    let h100 = c.by_id("nvidia-h100-sxm5").unwrap();
    let fp32 = 132.0 * 256.0 * h100.assumed_clock_hz(D::Fp32).unwrap();
    assert!((fp32 / 66.9e12 - 1.0).abs() < 0.001, "{fp32}");
    // NVIDIA's Tensor figures assume 1830 MHz, not the 1980 MHz boost clock.
    let tensor = 132.0 * 4096.0 * h100.assumed_clock_hz(D::TensorFp16).unwrap();
    assert!((tensor / 989.4e12 - 1.0).abs() < 0.001, "{tensor}");
    let at_boost = 132.0 * 4096.0 * 1.98e9;
    assert!(at_boost / 989.4e12 > 1.08);
    let a100 = c.by_id("nvidia-a100-sxm4-40gb").unwrap();
    let fp16 = 108.0 * 2048.0 * a100.assumed_clock_hz(D::TensorFp16).unwrap();
    assert!((fp16 / 312e12 - 1.0).abs() < 0.001, "{fp16}");
}

#[test]
fn precision_reads_the_printed_digits() {
    let f = |value: f64, printed: &str| Figure {
        value,
        kind: crate::Kind::Datasheet,
        source: "s".into(),
        printed: Some(printed.into()),
        formula: None,
        clock_hz: None,
        note: None,
    };
    assert!((precision(&f(34e12, "FP64 34 teraFLOPS")) - 1.0 / 34.0).abs() < 1e-12);
    assert!((precision(&f(989.4e12, "989.4/1978.9")) - 0.1 / 989.4).abs() < 1e-12);
    // A halved sparse figure keeps the sparse figure's relative precision.
    assert!((precision(&f(756.5e12, "1,513 TFLOPS*")) - 1.0 / 1513.0).abs() < 1e-12);
    // The dense number is chosen when both are printed.
    assert!((precision(&f(494e12, "989 teraFLOPS* | 494 teraFLOPS")) - 1.0 / 494.0).abs() < 1e-12);
    assert_eq!(precision(&f(1.0e12, "nothing")), 0.005);
}

#[test]
fn the_documented_disagreement_is_the_only_one() {
    // The L40S's FP16 check, spelled out: 142 SMs x 1024 x 2520 MHz = 366.4 TFLOPS.
    let l40s = Catalogue::get().by_id("nvidia-l40s").unwrap();
    let implied_fp32_clock = l40s.peak(D::Fp32).unwrap().value / (142.0 * 256.0);
    let implied_fp16_clock = l40s.peak(D::TensorFp16).unwrap().value / (142.0 * 1024.0);
    assert!((implied_fp32_clock / 2.52e9 - 1.0).abs() < 0.001);
    assert!((implied_fp16_clock / 2.49e9 - 1.0).abs() < 0.001);
}
