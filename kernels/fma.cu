// CUDA-core peak: FMA chains. Each thread runs FMA_CHAINS independent chains of the quadratic map
// `x = fma(x, x, c)` (one FMA per step), unrolled FMA_UNROLL times per loop iteration, so the
// pipes never wait on a result.
// FLOPs per thread = 2 (FMA) × lanes (2 for half2/bfloat162) × FMA_CHAINS × FMA_UNROLL × iters.
//
// Operands that keep toggling bits: a contracting chain such as `x = x·0.99 + c` reaches a fixed
// point (in FP16 and BF16 within ~700 of a launch's ~32,768 steps), after which no bit toggles,
// the GPU draws less power and holds a higher clock, and the peak comes out optimistic. The map
// x ↦ x² + c stays bounded for every start in its basin |x| ≤ (1 + √(1 + 4|c|)) / 2 (1.90 to
// 1.97 for the constants used) and, for most c in (−2, −1.4), is chaotic there (between
// periodic windows: in FP16, c = −1.75 falls into a 2-cycle). The collector passes `b`,
// the start, and `c` (collector/src/gpu/launch/micro.rs `fma_operands`: c = −1.9 in FP64 and FP32,
// −1.72 in FP16, −1.92 in BF16, values with long cycles once rounded; b = 0.5). Each chain starts
// at b plus one of FMA_START_MASK + 1 small offsets, inside the basin: (t & mask) · 2⁻⁸ for the
// float kernels, an xor of the low 6 mantissa bits of each half for the packed ones (which
// leaves sign and exponent alone), with t = threadIdx.x · FMA_CHAINS + k. A unit test emulates
// every such orbit as the GPU rounds it, over the steps a launch runs
// (collector/src/gpu/launch/micro/fma_orbits.rs): none leaves the basin, none reaches a fixed
// point or a cycle shorter than 16 steps, and per step about 6.7 (FP16), 4.9 (BF16), 13 (FP32)
// and 27 (FP64) bits of x toggle on average.

#ifndef FMA_CHAINS
#error "FMA_CHAINS is passed by the collector (-DFMA_CHAINS=…, collector/src/gpu/kernels.rs)"
#endif
#ifndef FMA_UNROLL
#error "FMA_UNROLL is passed by the collector (-DFMA_UNROLL=…, collector/src/gpu/kernels.rs)"
#endif

// The start offsets: 64 per chain and lane (the unit test covers each of them).
#define FMA_START_MASK 63u

extern "C" __global__ void fma_f64(double b, double c, int iters, double* sink, double sentinel,
                                   unsigned long long* stamps) {
  STAMP_BEGIN
  double x[FMA_CHAINS];
#pragma unroll
  for (int k = 0; k < FMA_CHAINS; ++k)
    x[k] = b + (double)((threadIdx.x * FMA_CHAINS + k) & FMA_START_MASK) * 0.00390625;
  // One iteration per pass: the timed loop is never unrolled, so its body is what the work
  // formula counts per iteration (checked by the SASS audit).
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < FMA_UNROLL; ++u) {
#pragma unroll
      for (int k = 0; k < FMA_CHAINS; ++k) x[k] = fma(x[k], x[k], c);
    }
  }
  double s = 0.0;
#pragma unroll
  for (int k = 0; k < FMA_CHAINS; ++k) s += x[k];
  KEEP(s, sink, sentinel)
  STAMP_END
}

extern "C" __global__ void fma_f32(float b, float c, int iters, float* sink, float sentinel,
                                   unsigned long long* stamps) {
  STAMP_BEGIN
  float x[FMA_CHAINS];
#pragma unroll
  for (int k = 0; k < FMA_CHAINS; ++k)
    x[k] = b + (float)((threadIdx.x * FMA_CHAINS + k) & FMA_START_MASK) * 0.00390625f;
  // One iteration per pass: the timed loop is never unrolled, so its body is what the work
  // formula counts per iteration (checked by the SASS audit).
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < FMA_UNROLL; ++u) {
#pragma unroll
      for (int k = 0; k < FMA_CHAINS; ++k) x[k] = fmaf(x[k], x[k], c);
    }
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < FMA_CHAINS; ++k) s += x[k];
  KEEP(s, sink, sentinel)
  STAMP_END
}

// Packed half2 / bfloat162 FMA through PTX (`fma.rn.f16x2`, `fma.rn.bf16x2`); operands are the
// raw 32-bit pairs, so no CUDA header is needed. The start xors the low mantissa bits of both
// halves (t's low 6 bits into the low half, the next 6 into the high half).
#define PACKED_FMA_KERNEL(NAME, INSTR)                                                   \
  extern "C" __global__ void NAME(unsigned int b, unsigned int c, int iters,              \
                                  unsigned int* sink, unsigned int sentinel,              \
                                  unsigned long long* stamps) {                           \
    STAMP_BEGIN                                                                           \
    unsigned int x[FMA_CHAINS];                                                               \
    _Pragma("unroll") for (int k = 0; k < FMA_CHAINS; ++k) {                                  \
      const unsigned int t = threadIdx.x * FMA_CHAINS + k;                                    \
      x[k] = b ^ ((t & FMA_START_MASK) | ((t >> 6) & FMA_START_MASK) << 16);                  \
    }                                                                                         \
    _Pragma("unroll 1") for (int i = 0; i < iters; ++i) {                                  \
      _Pragma("unroll") for (int u = 0; u < FMA_UNROLL; ++u) {                                \
        _Pragma("unroll") for (int k = 0; k < FMA_CHAINS; ++k)                                \
          asm volatile(INSTR " %0, %0, %0, %1;" : "+r"(x[k]) : "r"(c));                  \
      }                                                                                   \
    }                                                                                     \
    unsigned int s = 0;                                                                   \
    _Pragma("unroll") for (int k = 0; k < FMA_CHAINS; ++k) s ^= x[k];                         \
    KEEP(s, sink, sentinel)                                                               \
    STAMP_END                                                                             \
  }

PACKED_FMA_KERNEL(fma_f16x2, "fma.rn.f16x2")

#if __CUDA_ARCH__ >= 800
PACKED_FMA_KERNEL(fma_bf16x2, "fma.rn.bf16x2")
#else
extern "C" __global__ void fma_bf16x2(unsigned int, unsigned int, int, unsigned int*,
                                      unsigned int, unsigned long long*) {}
#endif

// Launch overhead: a kernel that does nothing.
extern "C" __global__ void empty() {}
