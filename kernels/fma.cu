// CUDA-core peak: FMA chains. Each thread runs FMA_CHAINS independent chains `x = x * b + c`,
// unrolled FMA_UNROLL times per loop iteration, so the pipes never wait on a result.
// FLOPs per thread = 2 (FMA) × lanes (2 for half2/bfloat162) × FMA_CHAINS × FMA_UNROLL × iters.

#ifndef FMA_CHAINS
#error "FMA_CHAINS is passed by the collector (-DFMA_CHAINS=…, collector/src/gpu/kernels.rs)"
#endif
#ifndef FMA_UNROLL
#error "FMA_UNROLL is passed by the collector (-DFMA_UNROLL=…, collector/src/gpu/kernels.rs)"
#endif

extern "C" __global__ void fma_f64(double b, double c, int iters, double* sink, double sentinel,
                                   unsigned long long* stamps) {
  STAMP_BEGIN
  double x[FMA_CHAINS];
#pragma unroll
  for (int k = 0; k < FMA_CHAINS; ++k) x[k] = threadIdx.x * 1e-3 + k;
  // One iteration per pass: the timed loop is never unrolled, so its body is what the work
  // formula counts per iteration (checked by the SASS audit).
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < FMA_UNROLL; ++u) {
#pragma unroll
      for (int k = 0; k < FMA_CHAINS; ++k) x[k] = fma(x[k], b, c);
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
  for (int k = 0; k < FMA_CHAINS; ++k) x[k] = threadIdx.x * 1e-3f + k;
  // One iteration per pass: the timed loop is never unrolled, so its body is what the work
  // formula counts per iteration (checked by the SASS audit).
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < FMA_UNROLL; ++u) {
#pragma unroll
      for (int k = 0; k < FMA_CHAINS; ++k) x[k] = fmaf(x[k], b, c);
    }
  }
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < FMA_CHAINS; ++k) s += x[k];
  KEEP(s, sink, sentinel)
  STAMP_END
}

// Packed half2 / bfloat162 FMA through PTX (`fma.rn.f16x2`, `fma.rn.bf16x2`); operands are the
// raw 32-bit pairs, so no CUDA header is needed.
#define PACKED_FMA_KERNEL(NAME, INSTR)                                                   \
  extern "C" __global__ void NAME(unsigned int b, unsigned int c, int iters,              \
                                  unsigned int* sink, unsigned int sentinel,              \
                                  unsigned long long* stamps) {                           \
    STAMP_BEGIN                                                                           \
    unsigned int x[FMA_CHAINS];                                                               \
    _Pragma("unroll") for (int k = 0; k < FMA_CHAINS; ++k) x[k] = b ^ (threadIdx.x + k);      \
    _Pragma("unroll 1") for (int i = 0; i < iters; ++i) {                                  \
      _Pragma("unroll") for (int u = 0; u < FMA_UNROLL; ++u) {                                \
        _Pragma("unroll") for (int k = 0; k < FMA_CHAINS; ++k)                                \
          asm volatile(INSTR " %0, %0, %1, %2;" : "+r"(x[k]) : "r"(b), "r"(c));           \
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
