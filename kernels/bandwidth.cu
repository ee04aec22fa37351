// Bandwidth microbenchmarks: HBM (read, write, copy), L2, L1 and shared memory.
//
// All accesses are 16-byte vectors. Loads are inline PTX `asm volatile`, so the compiler neither
// drops nor merges the repeated loads of the cache kernels; the cache operator picks the level:
// `.cs` (streaming, evict-first) for HBM, `.cg` (cache in L2 only, bypass L1) for L2, `.ca`
// (cache in L1) and `.nc` (the non-coherent, read-only path through the L1/texture cache) for
// L1: on sm_90 `.ca` compiles to a strong SM-scoped load (`LDG.E.128.STRONG.SM`), `.nc` to
// `LDG.E.128.CONSTANT`; the collector times both and the charts use the faster.

#ifndef BW_UNROLL
#error "BW_UNROLL is passed by the collector (-DBW_UNROLL=…, collector/src/gpu/kernels.rs)"
#endif

__device__ __forceinline__ float4 ld_cs(const float4* p) {
  float4 v;
  asm volatile("ld.global.cs.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ float4 ld_cg(const float4* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ float4 ld_ca(const float4* p) {
  float4 v;
  asm volatile("ld.global.ca.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ float4 ld_nc(const float4* p) {
  float4 v;
  asm volatile("ld.global.nc.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ void st_cs(float4* p, float4 v) {
  asm volatile("st.global.cs.v4.f32 [%0], {%1,%2,%3,%4};"
               :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
}
__device__ __forceinline__ void add4(float4& a, float4 v) {
  a.x += v.x; a.y += v.y; a.z += v.z; a.w += v.w;
}

// Reads n float4 once, BW_UNROLL independent loads in flight per thread per iteration.
extern "C" __global__ void hbm_read(const float4* a, unsigned long long n, float* sink,
                                    float sentinel, unsigned long long* stamps) {
  STAMP_BEGIN
  float4 acc = mk4(0.f, 0.f, 0.f, 0.f);
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  // Pinned (unroll 1) here and below: one pass of a main loop is what `Work::Memory` counts, and
  // what the SASS audit checks.
#pragma unroll 1
  for (; i + (BW_UNROLL - 1) * stride < n; i += BW_UNROLL * stride) {
    float4 v[BW_UNROLL];
#pragma unroll
    for (int k = 0; k < BW_UNROLL; ++k) v[k] = ld_cs(a + i + k * stride);
#pragma unroll
    for (int k = 0; k < BW_UNROLL; ++k) add4(acc, v[k]);
  }
  for (; i < n; i += stride) add4(acc, ld_cs(a + i));
  KEEP(acc.x + acc.y + acc.z + acc.w, sink, sentinel)
  STAMP_END
}

// Writes n float4 once.
extern "C" __global__ void hbm_write(float4* a, unsigned long long n, float value,
                                     unsigned long long* stamps) {
  STAMP_BEGIN
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const float4 v = mk4(value, value, value, value);
#pragma unroll 1
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    st_cs(a + i, v);
  STAMP_END
}

// Copies n float4: n read and n written.
extern "C" __global__ void hbm_copy(const float4* src, float4* dst, unsigned long long n,
                                    unsigned long long* stamps) {
  STAMP_BEGIN
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  // BW_UNROLL accesses in flight: half loads, half stores.
  constexpr int pairs = BW_UNROLL / 2;
#pragma unroll 1
  for (; i + (pairs - 1) * stride < n; i += pairs * stride) {
    float4 v[pairs];
#pragma unroll
    for (int k = 0; k < pairs; ++k) v[k] = ld_cs(src + i + k * stride);
#pragma unroll
    for (int k = 0; k < pairs; ++k) st_cs(dst + i + k * stride, v[k]);
  }
  for (; i < n; i += stride) st_cs(dst + i, ld_cs(src + i));
  STAMP_END
}

// Rereads a working set of n float4 (sized well inside L2) `reps` times through L2 only.
extern "C" __global__ void l2_read(const float4* a, unsigned long long n, int reps, float* sink,
                                   float sentinel, unsigned long long* stamps) {
  STAMP_BEGIN
  float4 acc = mk4(0.f, 0.f, 0.f, 0.f);
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < reps; ++r) {
    unsigned long long i = first;
#pragma unroll 1
    for (; i + (BW_UNROLL - 1) * stride < n; i += BW_UNROLL * stride) {
      float4 v[BW_UNROLL];
#pragma unroll
      for (int k = 0; k < BW_UNROLL; ++k) v[k] = ld_cg(a + i + k * stride);
#pragma unroll
      for (int k = 0; k < BW_UNROLL; ++k) add4(acc, v[k]);
    }
    for (; i < n; i += stride) add4(acc, ld_cg(a + i));
  }
  KEEP(acc.x + acc.y + acc.z + acc.w, sink, sentinel)
  STAMP_END
}

// Each block rereads its own slice of `slice` float4 (a power of two; resident in its SM's L1)
// `reps` times. Every thread reads BW_UNROLL vectors per repeat, blockDim apart, wrapped into the
// slice; with the collector's slice of twice the block (2048 vectors, 1024 threads) each thread
// rereads the same two vectors every repeat and the block covers its whole slice. `l1_read` loads
// with `.ca`, `l1_read_nc` with `.nc`.
#define L1_READ_KERNEL(NAME, LOAD)                                                        \
  extern "C" __global__ void NAME(const float4* a, unsigned int slice, int reps, float* sink, \
                                  float sentinel, unsigned long long* stamps) {           \
    STAMP_BEGIN                                                                           \
    float4 acc = mk4(0.f, 0.f, 0.f, 0.f);                                                 \
    const float4* mine = a + (unsigned long long)blockIdx.x * slice;                      \
    const unsigned int mask = slice - 1;                                                  \
    const unsigned int b = blockDim.x;                                                    \
    _Pragma("unroll 1") for (int r = 0; r < reps; ++r) {                                  \
      const unsigned int base = threadIdx.x + (unsigned int)r * BW_UNROLL * b;            \
      float4 v[BW_UNROLL];                                                                \
      _Pragma("unroll") for (int k = 0; k < BW_UNROLL; ++k)                               \
        v[k] = LOAD(mine + ((base + k * b) & mask));                                      \
      _Pragma("unroll") for (int k = 0; k < BW_UNROLL; ++k) add4(acc, v[k]);              \
    }                                                                                     \
    KEEP(acc.x + acc.y + acc.z + acc.w, sink, sentinel)                                   \
    STAMP_END                                                                             \
  }

L1_READ_KERNEL(l1_read, ld_ca)
L1_READ_KERNEL(l1_read_nc, ld_nc)

// Each block fills `slice` float4 of shared memory (dynamic; a power of two) and rereads it
// `reps` times, BW_UNROLL vectors per thread per repeat, conflict-free (consecutive 16-byte words).
extern "C" __global__ void shared_read(unsigned int slice, int reps, float* sink, float sentinel,
                                       unsigned long long* stamps) {
  STAMP_BEGIN
  extern __shared__ float4 smem[];
  for (unsigned int i = threadIdx.x; i < slice; i += blockDim.x)
    smem[i] = mk4((float)i, 1.f, 2.f, 3.f);
  __syncthreads();
  float4 acc = mk4(0.f, 0.f, 0.f, 0.f);
  const unsigned int mask = slice - 1;
  const unsigned int b = blockDim.x;
  unsigned int sbase;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(sbase) : "l"(smem));
#pragma unroll 1
  for (int r = 0; r < reps; ++r) {
    const unsigned int base = threadIdx.x + (unsigned int)r * BW_UNROLL * b;
#pragma unroll
    for (int k = 0; k < BW_UNROLL; ++k) {
      float4 v;
      const unsigned int addr = sbase + 16u * ((base + k * b) & mask);
      asm volatile("ld.shared.v4.f32 {%0,%1,%2,%3}, [%4];"
                   : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr));
      add4(acc, v);
    }
  }
  KEEP(acc.x + acc.y + acc.z + acc.w, sink, sentinel)
  STAMP_END
}
