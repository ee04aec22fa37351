// Tensor Core peak through warp-level `mma.sync` (PTX ISA, "Warp-level matrix multiply-accumulate
// instructions"). Each warp keeps MMA_ACC independent accumulators and issues one MMA into each per
// step. The operands are real data: before the timed loop every thread loads
// MMA_SETS operand sets from `ops`, which the collector filled on the GPU with bounded random
// values of the kernel's input type (kernels/init.cu); accumulator k uses set k % MMA_SETS, so
// consecutive MMAs change operands and the datapath switches bits as it does on a real GEMM (a
// power-limited GPU runs constants at a higher clock). The results are never read, only kept
// alive.
// FLOPs per MMA = 2·m·n·k: m16n8k16 (FP16, BF16) 4096; m16n8k8 (TF32) 2048; m16n8k32 (FP8, INT8)
// 8192; m8n8k4 (FP64) 512; m16n8k16 FP64 (sm_90 and later) 4096. FLOPs per kernel = FLOPs per
// MMA × MMA_ACC × iters × warps.
//
// Layout of `ops` (32-bit words; FP64 kernels read it as doubles): word w of set s of global
// thread t is at ((s · WORDS + w) · T + t), T the launch's threads, WORDS the A and B registers of
// one MMA (6 words for the 32-bit-register shapes; 2 doubles for m8n8k4; 12 doubles for FP64
// m16n8k16): coalesced loads, once per thread, through one pointer stepped by T. The collector
// launches as many blocks of 256 threads per SM as the driver's occupancy calculator says fit
// (at most 4; 2 for FP64 m16n8k16), so that every launch is one wave.

#ifndef MMA_ACC
#error "MMA_ACC is passed by the collector (-DMMA_ACC=…, collector/src/gpu/kernels.rs)"
#endif
// Operand sets per thread, passed by the collector, which sizes `ops` from them (they change no
// FLOP count).
#ifndef MMA_SETS
#error "MMA_SETS is passed by the collector (-DMMA_SETS=…, collector/src/gpu/kernels.rs)"
#endif
#ifndef MMA_SETS_DMMA16
#error "MMA_SETS_DMMA16 is passed by the collector (-DMMA_SETS_DMMA16=…, collector/src/gpu/kernels.rs)"
#endif

#define MMA_THREAD_INDEX                                                                    \
  const unsigned long long mma_threads = (unsigned long long)gridDim.x * blockDim.x;        \
  const unsigned long long mma_tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;

// The next operand word (or double) of this thread: `p` steps by T.
#define MMA_NEXT(p) (*(p)); (p) += mma_threads

#define MMA_F32_KERNEL(NAME, SHAPE_TYPES)                                                    \
  extern "C" __global__ void NAME(const unsigned int* ops, int iters, float* sink,          \
                                  float sentinel, unsigned long long* stamps) {             \
    STAMP_BEGIN                                                                             \
    MMA_THREAD_INDEX                                                                        \
    unsigned int a[MMA_SETS][4], b[MMA_SETS][2];                                            \
    const unsigned int* p = ops + mma_tid;                                                  \
    _Pragma("unroll") for (int s = 0; s < MMA_SETS; ++s) {                                  \
      _Pragma("unroll") for (int w = 0; w < 4; ++w) { a[s][w] = MMA_NEXT(p); }              \
      _Pragma("unroll") for (int w = 0; w < 2; ++w) { b[s][w] = MMA_NEXT(p); }              \
    }                                                                                       \
    float d[MMA_ACC][4];                                                                    \
    _Pragma("unroll") for (int k = 0; k < MMA_ACC; ++k) {                                   \
      d[k][0] = 0.f; d[k][1] = 0.f; d[k][2] = 0.f; d[k][3] = 0.f;                           \
    }                                                                                       \
    {                                                                                       \
      _Pragma("unroll 1") for (int i = 0; i < iters; ++i) {                                 \
        _Pragma("unroll") for (int k = 0; k < MMA_ACC; ++k) {                               \
          asm volatile("mma.sync.aligned." SHAPE_TYPES                                      \
                       " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"            \
                       : "+f"(d[k][0]), "+f"(d[k][1]), "+f"(d[k][2]), "+f"(d[k][3])         \
                       : "r"(a[k % MMA_SETS][0]), "r"(a[k % MMA_SETS][1]),                  \
                         "r"(a[k % MMA_SETS][2]), "r"(a[k % MMA_SETS][3]),                  \
                         "r"(b[k % MMA_SETS][0]), "r"(b[k % MMA_SETS][1]));                 \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
    float s = 0.f;                                                                          \
    _Pragma("unroll") for (int k = 0; k < MMA_ACC; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3]; \
    KEEP(s, sink, sentinel)                                                                 \
    STAMP_END                                                                               \
  }

#if __CUDA_ARCH__ >= 800
MMA_F32_KERNEL(mma_f16, "m16n8k16.row.col.f32.f16.f16.f32")
MMA_F32_KERNEL(mma_bf16, "m16n8k16.row.col.f32.bf16.bf16.f32")
MMA_F32_KERNEL(mma_tf32, "m16n8k8.row.col.f32.tf32.tf32.f32")
#else
extern "C" __global__ void mma_f16(const unsigned int*, int, float*, float, unsigned long long*) {}
extern "C" __global__ void mma_bf16(const unsigned int*, int, float*, float, unsigned long long*) {}
extern "C" __global__ void mma_tf32(const unsigned int*, int, float*, float, unsigned long long*) {}
#endif

#if __CUDA_ARCH__ >= 890
MMA_F32_KERNEL(mma_fp8, "m16n8k32.row.col.f32.e4m3.e4m3.f32")
#else
extern "C" __global__ void mma_fp8(const unsigned int*, int, float*, float, unsigned long long*) {}
#endif

#if __CUDA_ARCH__ >= 800
extern "C" __global__ void mma_int8(const unsigned int* ops, int iters,
                                                               int* sink, int sentinel,
                                                               unsigned long long* stamps) {
  STAMP_BEGIN
  MMA_THREAD_INDEX
  unsigned int a[MMA_SETS][4], b[MMA_SETS][2];
  const unsigned int* p = ops + mma_tid;
#pragma unroll
  for (int s = 0; s < MMA_SETS; ++s) {
#pragma unroll
    for (int w = 0; w < 4; ++w) { a[s][w] = MMA_NEXT(p); }
#pragma unroll
    for (int w = 0; w < 2; ++w) { b[s][w] = MMA_NEXT(p); }
  }
  int d[MMA_ACC][4];
#pragma unroll
  for (int k = 0; k < MMA_ACC; ++k) { d[k][0] = 0; d[k][1] = 0; d[k][2] = 0; d[k][3] = 0; }
  // One iteration per pass: the timed loop is never unrolled, so its body is what the work
  // formula counts per iteration (checked by the SASS audit). The INT32 accumulators wrap, which
  // changes nothing in the instruction's throughput.
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < MMA_ACC; ++k) {
      asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"
                   " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                   : "+r"(d[k][0]), "+r"(d[k][1]), "+r"(d[k][2]), "+r"(d[k][3])
                   : "r"(a[k % MMA_SETS][0]), "r"(a[k % MMA_SETS][1]), "r"(a[k % MMA_SETS][2]),
                     "r"(a[k % MMA_SETS][3]), "r"(b[k % MMA_SETS][0]), "r"(b[k % MMA_SETS][1]));
    }
  }
  int s = 0;
#pragma unroll
  for (int k = 0; k < MMA_ACC; ++k) s += d[k][0] ^ d[k][1] ^ d[k][2] ^ d[k][3];
  KEEP(s, sink, sentinel)
  STAMP_END
}

// FP64 m8n8k4 (DMMA.884 up to sm_89, DMMA.8x8x4 on sm_90): one double of A and one of B per
// thread per MMA.
extern "C" __global__ void mma_f64(const unsigned int* ops, int iters,
                                                              double* sink, double sentinel,
                                                              unsigned long long* stamps) {
  STAMP_BEGIN
  MMA_THREAD_INDEX
  const double* p = (const double*)ops + mma_tid;
  double a[MMA_SETS], b[MMA_SETS];
#pragma unroll
  for (int s = 0; s < MMA_SETS; ++s) {
    a[s] = MMA_NEXT(p);
    b[s] = MMA_NEXT(p);
  }
  double d[MMA_ACC][2];
#pragma unroll
  for (int k = 0; k < MMA_ACC; ++k) { d[k][0] = 0.0; d[k][1] = 0.0; }
  // One iteration per pass: the timed loop is never unrolled, so its body is what the work
  // formula counts per iteration (checked by the SASS audit).
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < MMA_ACC; ++k) {
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"
                   " {%0,%1}, {%2}, {%3}, {%0,%1};"
                   : "+d"(d[k][0]), "+d"(d[k][1])
                   : "d"(a[k % MMA_SETS]), "d"(b[k % MMA_SETS]));
    }
  }
  double s = 0.0;
#pragma unroll
  for (int k = 0; k < MMA_ACC; ++k) s += d[k][0] + d[k][1];
  KEEP(s, sink, sentinel)
  STAMP_END
}
#else
extern "C" __global__ void mma_int8(const unsigned int*, int, int*, int, unsigned long long*) {}
extern "C" __global__ void mma_f64(const unsigned int*, int, double*, double,
                                   unsigned long long*) {}
#endif

// FP64 m16n8k16 (PTX ISA 7.8, sm_90 and later; DMMA.16x8x16 on sm_90): eight times the work of
// m8n8k4 per instruction, the shape Hopper's FP64 Tensor Cores run natively. Eight doubles of A
// and four of B per thread per MMA.
#if __CUDA_ARCH__ >= 900
extern "C" __global__ void mma_f64_16816(const unsigned int* ops,
                                                                   int iters, double* sink,
                                                                   double sentinel,
                                                                   unsigned long long* stamps) {
  STAMP_BEGIN
  MMA_THREAD_INDEX
  const double* p = (const double*)ops + mma_tid;
  double a[MMA_SETS_DMMA16][8], b[MMA_SETS_DMMA16][4];
#pragma unroll
  for (int s = 0; s < MMA_SETS_DMMA16; ++s) {
#pragma unroll
    for (int w = 0; w < 8; ++w) { a[s][w] = MMA_NEXT(p); }
#pragma unroll
    for (int w = 0; w < 4; ++w) { b[s][w] = MMA_NEXT(p); }
  }
  double d[MMA_ACC][4];
#pragma unroll
  for (int k = 0; k < MMA_ACC; ++k) { d[k][0] = 0.0; d[k][1] = 0.0; d[k][2] = 0.0; d[k][3] = 0.0; }
  // One iteration per pass: the timed loop is never unrolled, so its body is what the work
  // formula counts per iteration (checked by the SASS audit).
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < MMA_ACC; ++k) {
      const int s = k % MMA_SETS_DMMA16;
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64"
                   " {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15},"
                   " {%0,%1,%2,%3};"
                   : "+d"(d[k][0]), "+d"(d[k][1]), "+d"(d[k][2]), "+d"(d[k][3])
                   : "d"(a[s][0]), "d"(a[s][1]), "d"(a[s][2]), "d"(a[s][3]), "d"(a[s][4]),
                     "d"(a[s][5]), "d"(a[s][6]), "d"(a[s][7]), "d"(b[s][0]), "d"(b[s][1]),
                     "d"(b[s][2]), "d"(b[s][3]));
    }
  }
  double s = 0.0;
#pragma unroll
  for (int k = 0; k < MMA_ACC; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3];
  KEEP(s, sink, sentinel)
  STAMP_END
}
#else
extern "C" __global__ void mma_f64_16816(const unsigned int*, int, double*, double,
                                         unsigned long long*) {}
#endif
