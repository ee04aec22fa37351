//! The FMA-peak chains of `kernels/fma.cu`, emulated on the CPU exactly as the GPU rounds them:
//! every chain runs the quadratic map `x = fma(x, x, c)` from its start value, and must keep
//! toggling bits for as long as a launch runs (a chain that settles on a fixed point toggles
//! none, draws less power and lets the GPU hold a higher clock than real work would).
//!
//! The rounding: FP64 through [`f64::mul_add`] and FP32 through [`f32::mul_add`] (one rounding,
//! as `DFMA` and `FFMA` do; the kernels are compiled without flush-to-zero); FP16 and BF16 (`fma.rn.f16x2`,
//! `fma.rn.bf16x2`: the exact `x·x + c` rounded once to the format, to nearest, ties to even)
//! by computing `x·x + c` in f64, which is exact for these formats (an 11- or 8-bit
//! significand squared fits in 22 or 16 bits, and the sum with c within 53: checked at every
//! step), then [`Format::round`].

use roofline_kernels::{FMA_UNROLL, Kernel, Source};

use super::{FMA_START_MASK, FmaOperands, fma_operands};

/// A binary floating-point format: `mant` stored significand bits, `exp` exponent bits, a sign.
#[derive(Debug, Clone, Copy)]
struct Format {
    mant: i32,
    exp: i32,
}

/// IEEE binary16.
const FP16: Format = Format { mant: 10, exp: 5 };
/// bfloat16.
const BF16: Format = Format { mant: 7, exp: 8 };

/// 2^k as an f64, exactly (k within the normal range).
fn pow2(k: i32) -> f64 {
    assert!((-1022..=1023).contains(&k), "2^{k}");
    f64::from_bits(((k + 1023) as u64) << 52)
}

impl Format {
    fn bias(self) -> i32 {
        (1 << (self.exp - 1)) - 1
    }

    /// The smallest normal exponent.
    fn emin(self) -> i32 {
        1 - self.bias()
    }

    /// The all-ones exponent field (infinities and NaNs).
    fn top(self) -> u32 {
        (1 << self.exp) - 1
    }

    fn sign_bit(self) -> u32 {
        1 << (self.mant + self.exp)
    }

    /// The value of a bit pattern.
    fn value(self, bits: u16) -> f64 {
        let bits = u32::from(bits);
        let sign = if bits & self.sign_bit() != 0 {
            -1.0
        } else {
            1.0
        };
        let field = (bits >> self.mant) & self.top();
        let m = f64::from(bits & ((1 << self.mant) - 1));
        if field == self.top() {
            return if m == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
        if field == 0 {
            return sign * m * pow2(self.emin() - self.mant);
        }
        sign * (pow2(self.mant) + m) * pow2(field as i32 - self.bias() - self.mant)
    }

    /// `x` rounded to the format, to nearest, ties to even (with subnormals, and overflow to
    /// infinity).
    fn round(self, x: f64) -> u16 {
        let sign = if x.is_sign_negative() {
            self.sign_bit()
        } else {
            0
        };
        let inf = self.top() << self.mant;
        if x.is_nan() {
            return (inf | 1 << (self.mant - 1)) as u16;
        }
        let a = x.abs();
        if a.is_infinite() {
            return (sign | inf) as u16;
        }
        // The exponent of `a` (f64 subnormals, far below any value kept here, count as emin).
        let field = ((a.to_bits() >> 52) & 0x7ff) as i32;
        let mut e = (field - 1023).max(self.emin());
        // `a` in units of the last place at exponent e: exact (a power-of-two scaling), then
        // rounded to an integer, ties to even.
        let mut r = (a * pow2(self.mant - e)).round_ties_even() as u32;
        if r == 1 << (self.mant + 1) {
            // Rounded up to the next binade.
            e += 1;
            r >>= 1;
        }
        if r < 1 << self.mant {
            // Subnormal (or zero): e is emin, the field 0.
            return (sign | r) as u16;
        }
        let biased = e + self.bias();
        if biased >= self.top() as i32 {
            return (sign | inf) as u16;
        }
        (sign | (biased as u32) << self.mant | (r - (1 << self.mant))) as u16
    }

    /// One step `x·x + c` as `fma.rn` computes it in this format: exact, then rounded once.
    fn fma_step(self, x: u16, c: f64) -> u16 {
        let v = self.value(x);
        let p = v * v;
        // The product and the sum are exact in f64 (see the module's documentation): checked.
        assert_eq!(v.mul_add(v, -p), 0.0, "x·x is inexact for {x:#06x}");
        let s = p + c;
        let back = s - p;
        assert_eq!((p - (s - back)) + (c - back), 0.0, "x·x + c is inexact");
        self.round(s)
    }
}

/// What one orbit did over the steps of a launch.
#[derive(Debug)]
struct Orbit {
    /// The length of the cycle it entered, if a value repeated within the launch.
    cycle: Option<usize>,
    /// Bits of x toggled per step, on average.
    toggled: f64,
    /// The largest |x| met.
    max_abs: f64,
}

/// The orbit of `start` (raw bits) under `step` over `steps` steps: the cycle it enters (from
/// the values that repeat: consecutive occurrences of one value are one period apart), the bits
/// toggled per step, the largest |x| (`value` of the bits; a non-finite value fails).
fn orbit(start: u64, steps: usize, step: impl Fn(u64) -> u64, value: impl Fn(u64) -> f64) -> Orbit {
    let mut seen = Vec::with_capacity(steps + 1);
    let (mut x, mut toggled, mut max_abs) = (start, 0u64, 0f64);
    seen.push((x, 0usize));
    for t in 1..=steps {
        let y = step(x);
        let v = value(y);
        assert!(v.is_finite(), "start {start:#x}: step {t} gives {v}");
        max_abs = max_abs.max(v.abs());
        toggled += u64::from((x ^ y).count_ones());
        x = y;
        seen.push((x, t));
    }
    seen.sort_unstable();
    let cycle = seen
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| w[1].1 - w[0].1)
        .min();
    Orbit {
        cycle,
        toggled: toggled as f64 / steps as f64,
        max_abs,
    }
}

/// The steps of one launch of the full plan (`collector/gpu/src/machine/compute.rs` `fma()`:
/// iterations `per(base) = base × 2 × 16 / FMA_UNROLL`, `FMA_UNROLL` steps each; `--quick`
/// runs half of them, a prefix of the same orbits).
fn launch_steps(base: u32) -> usize {
    let iterations = base * 2 * 16 / FMA_UNROLL;
    (iterations * FMA_UNROLL) as usize
}

/// The start offsets the kernels can produce: chain k of thread t takes
/// `(t·FMA_CHAINS + k) & FMA_START_MASK` (the low half of a packed pair) and the next 6 bits of
/// that index (the high half): every value of the mask, each tried here.
fn offsets() -> std::ops::RangeInclusive<u32> {
    0..=FMA_START_MASK
}

/// The basin of `x ↦ x² + c`: orbits from `|x| ≤ (1 + √(1 + 4|c|)) / 2` stay there.
fn basin(c: f64) -> f64 {
    (1.0 + (1.0 + 4.0 * c.abs()).sqrt()) / 2.0
}

/// Checks every orbit of one datapath: inside the basin, no fixed point, no cycle under 16
/// steps, at least `min_toggled` bits toggled per step on average; prints the least cycle (None:
/// no value repeated within a launch) and the least mean of bits toggled (`--nocapture`).
fn check_orbits(what: &str, orbits: &[Orbit], c: f64, min_toggled: f64) {
    for (j, o) in orbits.iter().enumerate() {
        assert!(
            o.max_abs <= basin(c),
            "{what} start {j}: |x| reached {}",
            o.max_abs
        );
        if let Some(cycle) = o.cycle {
            assert!(cycle >= 16, "{what} start {j}: a cycle of {cycle} steps");
        }
        assert!(
            o.toggled >= min_toggled,
            "{what} start {j}: {:.2} bits toggled per step",
            o.toggled
        );
    }
    let cycle = orbits.iter().filter_map(|o| o.cycle).min();
    let toggled = orbits
        .iter()
        .map(|o| o.toggled)
        .fold(f64::INFINITY, f64::min);
    // A test's note, shown with --nocapture.
    #[allow(clippy::print_stderr)]
    {
        eprintln!("{what}: least cycle {cycle:?}, least {toggled:.2} bits toggled per step");
    }
}

/// Every orbit an FMA-peak launch runs, emulated as the GPU rounds it, for every start value
/// the kernels can produce (64 per datapath and half), over the steps of one launch (16,384 for
/// FP64, 32,768 for the others): no value is ever non-finite or leaves the map's basin, no orbit
/// reaches a fixed point, every cycle is at least 16 steps long, and the bits of x toggled per
/// step average at least 4 (FP16, BF16), 8 (FP32) and 16 (FP64) in every orbit.
///
/// Measured minima over the orbits (c = −1.9, −1.9, −1.72, −1.92; starts 0.5 + j·2⁻⁸ or
/// 0.5 with its low 6 mantissa bits xored by j): FP64 no value repeats within a launch, 27.3
/// bits per step; FP32 cycles of at least 759 steps, 12.9 bits; FP16 at least 77 steps, 6.7
/// bits; BF16 at least 34 steps, 4.9 bits. (−1.75 in FP16 gives a 2-cycle, −1.9 in BF16 a
/// 4-cycle: the constants matter.)
#[test]
fn fma_chains_keep_toggling_bits_for_a_whole_launch() {
    // FP64
    let FmaOperands::F64(b, c) = fma_operands(Kernel::FmaF64).unwrap() else {
        panic!("fma_f64 takes doubles");
    };
    let steps = launch_steps(512);
    assert_eq!(steps, 16_384);
    let orbits: Vec<Orbit> = offsets()
        .map(|j| {
            let x0 = b + f64::from(j) * 0.003_906_25;
            assert!(x0.abs() <= basin(c));
            orbit(
                x0.to_bits(),
                steps,
                |x| {
                    let x = f64::from_bits(x);
                    x.mul_add(x, c).to_bits()
                },
                f64::from_bits,
            )
        })
        .collect();
    check_orbits("FP64", &orbits, c, 16.0);
    assert!(
        orbits.iter().all(|o| o.cycle.is_none()),
        "an FP64 value repeated"
    );

    // FP32
    let FmaOperands::F32(b, c) = fma_operands(Kernel::FmaF32).unwrap() else {
        panic!("fma_f32 takes floats");
    };
    let steps = launch_steps(1024);
    assert_eq!(steps, 32_768);
    let orbits: Vec<Orbit> = offsets()
        .map(|j| {
            let x0 = b + j as f32 * 0.003_906_25;
            assert!(f64::from(x0).abs() <= basin(f64::from(c)));
            orbit(
                u64::from(x0.to_bits()),
                steps,
                |x| {
                    let x = f32::from_bits(x as u32);
                    u64::from(x.mul_add(x, c).to_bits())
                },
                |x| f64::from(f32::from_bits(x as u32)),
            )
        })
        .collect();
    check_orbits("FP32", &orbits, f64::from(c), 8.0);

    // FP16 and BF16, each half of the packed pair.
    for (kernel, format) in [(Kernel::FmaF16x2, FP16), (Kernel::FmaBf16x2, BF16)] {
        let FmaOperands::Packed(b, c) = fma_operands(kernel).unwrap() else {
            panic!("{kernel:?} takes packed pairs");
        };
        for half in [0, 16] {
            let (b, c) = ((b >> half) as u16, (c >> half) as u16);
            let c = format.value(c);
            let orbits: Vec<Orbit> = offsets()
                .map(|j| {
                    let x0 = b ^ j as u16;
                    assert!(format.value(x0).abs() <= basin(c));
                    orbit(
                        u64::from(x0),
                        steps,
                        |x| u64::from(format.fma_step(x as u16, c)),
                        |x| format.value(x as u16),
                    )
                })
                .collect();
            check_orbits(&format!("{kernel:?} bits {half}+"), &orbits, c, 4.0);
        }
    }
}

/// The operands are what the kernel's comment and the test's documentation say: starts of 0.5
/// in every format, c = −1.9 (FP64, FP32), −1.72 (FP16, nearest −1.7197265625), −1.92 (BF16,
/// −1.921875), both halves alike; and the kernel source runs the map with the start offsets the
/// test emulates.
#[test]
fn fma_operands_are_the_emulated_ones() {
    assert!(matches!(
        fma_operands(Kernel::FmaF64),
        Ok(FmaOperands::F64(0.5, -1.9))
    ));
    assert!(matches!(
        fma_operands(Kernel::FmaF32),
        Ok(FmaOperands::F32(0.5, -1.9))
    ));
    for (kernel, format, c) in [
        (Kernel::FmaF16x2, FP16, -1.72),
        (Kernel::FmaBf16x2, BF16, -1.92),
    ] {
        let Ok(FmaOperands::Packed(b, cc)) = fma_operands(kernel) else {
            panic!("{kernel:?}");
        };
        assert_eq!(b >> 16, b & 0xffff, "{kernel:?}");
        assert_eq!(cc >> 16, cc & 0xffff, "{kernel:?}");
        assert_eq!(format.value(b as u16), 0.5, "{kernel:?}");
        assert_eq!(cc as u16, format.round(c), "{kernel:?}");
        // The xored bits are mantissa bits: sign and exponent never change.
        assert!(FMA_START_MASK < 1 << format.mant);
    }
    let src = Source::Fma.text();
    for needle in [
        format!("#define FMA_START_MASK {FMA_START_MASK}u"),
        "x[k] = fma(x[k], x[k], c);".into(),
        "x[k] = fmaf(x[k], x[k], c);".into(),
        r#"asm volatile(INSTR " %0, %0, %0, %1;" : "+r"(x[k]) : "r"(c));"#.into(),
        "(double)((threadIdx.x * FMA_CHAINS + k) & FMA_START_MASK) * 0.00390625;".into(),
        "(float)((threadIdx.x * FMA_CHAINS + k) & FMA_START_MASK) * 0.00390625f;".into(),
        "const unsigned int t = threadIdx.x * FMA_CHAINS + k;".into(),
        "x[k] = b ^ ((t & FMA_START_MASK) | ((t >> 6) & FMA_START_MASK) << 16);".into(),
    ] {
        assert!(src.contains(&needle), "kernels/fma.cu lacks {needle}");
    }
}

/// FP16 rounding on known values: exact ones, the largest finite value and the overflow
/// threshold, subnormals, ties to even, signed zero, NaN.
#[test]
fn fp16_rounds_to_nearest_even() {
    let r = |x: f64| FP16.round(x);
    assert_eq!(r(1.0), 0x3c00);
    assert_eq!(r(0.5), 0x3800);
    assert_eq!(r(-2.0), 0xc000);
    assert_eq!(r(0.1), 0x2e66);
    assert_eq!(r(1.0 / 3.0), 0x3555);
    assert_eq!(r(-1.72), 0xbee1);
    assert_eq!(FP16.value(0xbee1), -1.719_726_562_5);
    assert_eq!(r(65504.0), 0x7bff);
    assert_eq!(r(65519.99), 0x7bff);
    assert_eq!(
        r(65520.0),
        0x7c00,
        "the tie above the largest value rounds to infinity"
    );
    assert_eq!(r(-1e6), 0xfc00);
    assert_eq!(r(pow2(-14)), 0x0400, "the smallest normal");
    assert_eq!(r(pow2(-24)), 0x0001, "the smallest subnormal");
    assert_eq!(r(pow2(-25)), 0x0000, "a tie to zero, even");
    assert_eq!(r(1.5 * pow2(-24)), 0x0002, "a tie to 2, even");
    assert_eq!(r(1.0 + pow2(-11)), 0x3c00, "a tie to 1, even");
    assert_eq!(r(1.0 + 3.0 * pow2(-11)), 0x3c02, "a tie up to even");
    assert_eq!(r(1.0 + 1.01 * pow2(-11)), 0x3c01);
    assert_eq!(r(2.0 - pow2(-12)), 0x4000, "rounds into the next binade");
    assert_eq!(r(-0.0), 0x8000);
    assert!(FP16.value(r(f64::NAN)).is_nan());
    assert_eq!(FP16.value(0x7c00), f64::INFINITY);
    assert_eq!(FP16.value(0x0001), pow2(-24));
    assert_eq!(FP16.value(0x7bff), 65504.0);
}

/// BF16 rounding on known values, and against the integer rounding of FP32 bits that
/// `kernels/init.cu` and `dl.cu` use (`(b + 0x7FFF + ((b >> 16) & 1)) >> 16`) on a sweep of FP32
/// values.
#[test]
fn bf16_rounds_to_nearest_even() {
    let r = |x: f64| BF16.round(x);
    assert_eq!(r(1.0), 0x3f80);
    assert_eq!(r(0.5), 0x3f00);
    assert_eq!(r(0.1), 0x3dcd);
    assert_eq!(r(std::f64::consts::PI), 0x4049);
    assert_eq!(r(-1.92), 0xbff6);
    assert_eq!(BF16.value(0xbff6), -1.921_875);
    assert_eq!(r(1.0 + pow2(-8)), 0x3f80, "a tie to 1, even");
    assert_eq!(r(1.0 + 3.0 * pow2(-8)), 0x3f82, "a tie up to even");
    assert_eq!(
        r((2.0 - pow2(-7)) * pow2(127)),
        0x7f7f,
        "the largest finite value"
    );
    assert_eq!(
        r((2.0 - pow2(-8)) * pow2(127)),
        0x7f80,
        "its tie rounds to infinity"
    );
    assert_eq!(r(pow2(-126)), 0x0080, "the smallest normal");
    assert_eq!(r(pow2(-133)), 0x0001, "the smallest subnormal");
    assert_eq!(r(pow2(-134)), 0x0000, "a tie to zero, even");
    assert_eq!(r(-0.0), 0x8000);
    assert!(BF16.value(r(f64::NAN)).is_nan());
    let mut bits = 0x0080_0000u32;
    while bits < 0x7f00_0000 {
        for sign in [0, 0x8000_0000] {
            let b = bits | sign;
            let want = ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16;
            assert_eq!(r(f64::from(f32::from_bits(b))), want, "{b:#010x}");
        }
        bits += 0x0001_2345;
    }
}

/// Every finite FP16 and BF16 value rounds to itself, and the midpoint between neighbours to
/// the even one of them (just above it, to the upper; just below, to the lower).
#[test]
fn every_value_and_midpoint_rounds_as_it_should() {
    for format in [FP16, BF16] {
        let largest = ((format.top() - 1) << format.mant | ((1 << format.mant) - 1)) as u16;
        for b in 0..largest {
            let (lo, hi) = (format.value(b), format.value(b + 1));
            assert_eq!(format.round(lo), b, "{format:?} {b:#06x}");
            assert_eq!(format.round(-lo), b | format.sign_bit() as u16);
            let mid = (lo + hi) / 2.0;
            let even = if b % 2 == 0 { b } else { b + 1 };
            assert_eq!(format.round(mid), even, "{format:?} {b:#06x}");
            let gap = (hi - lo) / 1024.0;
            assert_eq!(format.round(mid + gap), b + 1, "{format:?} {b:#06x}");
            assert_eq!(format.round(mid - gap), b, "{format:?} {b:#06x}");
        }
        assert_eq!(format.round(format.value(largest)), largest);
    }
}
