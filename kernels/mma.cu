// Tensor Core peak through warp-level `mma.sync` (PTX ISA, "Warp-level matrix multiply-accumulate
// instructions"). Each warp keeps MMA_ACC independent accumulators and issues one MMA into each per
// step; operand registers hold arbitrary bit patterns (the result is never read, only kept alive),
// which does not change the instruction's throughput.
// FLOPs per MMA = 2·m·n·k: m16n8k16 (FP16, BF16) 4096; m16n8k8 (TF32) 2048; m16n8k32 (FP8, INT8)
// 8192; m8n8k4 (FP64) 512. FLOPs per kernel = FLOPs per MMA × MMA_ACC × iters × warps.

#ifndef MMA_ACC
#error "MMA_ACC is passed by the collector (-DMMA_ACC=…, collector/src/gpu/kernels.rs)"
#endif

#define MMA_F32_KERNEL(NAME, SHAPE_TYPES, MIN_ARCH)                                         \
  extern "C" __global__ void NAME(int iters, float* sink, float sentinel,                   \
                                  unsigned long long* stamps) {                             \
    STAMP_BEGIN                                                                             \
    float d[MMA_ACC][4];                                                                        \
    _Pragma("unroll") for (int k = 0; k < MMA_ACC; ++k) {                                       \
      d[k][0] = 0.f; d[k][1] = 0.f; d[k][2] = 0.f; d[k][3] = 0.f;                           \
    }                                                                                       \
    const unsigned int a0 = 0x3c003c00u ^ threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3; \
    const unsigned int b0 = 0x3c003c00u ^ (threadIdx.x << 3), b1 = b0 + 5;                 \
    {                                                                                       \
      _Pragma("unroll 1") for (int i = 0; i < iters; ++i) {                                  \
        _Pragma("unroll") for (int k = 0; k < MMA_ACC; ++k) {                                   \
          asm volatile("mma.sync.aligned." SHAPE_TYPES                                      \
                       " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"            \
                       : "+f"(d[k][0]), "+f"(d[k][1]), "+f"(d[k][2]), "+f"(d[k][3])         \
                       : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));             \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
    float s = 0.f;                                                                          \
    _Pragma("unroll") for (int k = 0; k < MMA_ACC; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3]; \
    KEEP(s, sink, sentinel)                                                                 \
    STAMP_END                                                                               \
  }

#if __CUDA_ARCH__ >= 800
MMA_F32_KERNEL(mma_f16, "m16n8k16.row.col.f32.f16.f16.f32", 800)
MMA_F32_KERNEL(mma_bf16, "m16n8k16.row.col.f32.bf16.bf16.f32", 800)
MMA_F32_KERNEL(mma_tf32, "m16n8k8.row.col.f32.tf32.tf32.f32", 800)
#else
extern "C" __global__ void mma_f16(int, float*, float, unsigned long long*) {}
extern "C" __global__ void mma_bf16(int, float*, float, unsigned long long*) {}
extern "C" __global__ void mma_tf32(int, float*, float, unsigned long long*) {}
#endif

#if __CUDA_ARCH__ >= 890
MMA_F32_KERNEL(mma_fp8, "m16n8k32.row.col.f32.e4m3.e4m3.f32", 890)
#else
extern "C" __global__ void mma_fp8(int, float*, float, unsigned long long*) {}
#endif

#if __CUDA_ARCH__ >= 800
extern "C" __global__ void mma_int8(int iters, int* sink, int sentinel,
                                    unsigned long long* stamps) {
  STAMP_BEGIN
  int d[MMA_ACC][4];
#pragma unroll
  for (int k = 0; k < MMA_ACC; ++k) { d[k][0] = 0; d[k][1] = 0; d[k][2] = 0; d[k][3] = 0; }
  const unsigned int a0 = 0x01020304u ^ threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
  const unsigned int b0 = 0x01010101u ^ (threadIdx.x << 3), b1 = b0 + 5;
  // One iteration per pass: the timed loop is never unrolled, so its body is what the work
  // formula counts per iteration (checked by the SASS audit).
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < MMA_ACC; ++k) {
      asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"
                   " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                   : "+r"(d[k][0]), "+r"(d[k][1]), "+r"(d[k][2]), "+r"(d[k][3])
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
  }
  int s = 0;
#pragma unroll
  for (int k = 0; k < MMA_ACC; ++k) s += d[k][0] ^ d[k][1] ^ d[k][2] ^ d[k][3];
  KEEP(s, sink, sentinel)
  STAMP_END
}

extern "C" __global__ void mma_f64(int iters, double* sink, double sentinel,
                                   unsigned long long* stamps) {
  STAMP_BEGIN
  double d[MMA_ACC][2];
#pragma unroll
  for (int k = 0; k < MMA_ACC; ++k) { d[k][0] = 0.0; d[k][1] = 0.0; }
  const double a = 1.0 + threadIdx.x * 1e-6, b = 1.0 - threadIdx.x * 1e-6;
  // One iteration per pass: the timed loop is never unrolled, so its body is what the work
  // formula counts per iteration (checked by the SASS audit).
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < MMA_ACC; ++k) {
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"
                   " {%0,%1}, {%2}, {%3}, {%0,%1};"
                   : "+d"(d[k][0]), "+d"(d[k][1]) : "d"(a), "d"(b));
    }
  }
  double s = 0.0;
#pragma unroll
  for (int k = 0; k < MMA_ACC; ++k) s += d[k][0] + d[k][1];
  KEEP(s, sink, sentinel)
  STAMP_END
}
#else
extern "C" __global__ void mma_int8(int, int*, int, unsigned long long*) {}
extern "C" __global__ void mma_f64(int, double*, double, unsigned long long*) {}
#endif
