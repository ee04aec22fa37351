// Our own DL kernels for `roofline suite`: direct and implicit-GEMM NHWC convolutions (forward,
// backward-data, backward-filter) and the fused LSTM cell, each for FP32, FP16 and BF16 storage with FP32
// arithmetic on CUDA cores. Half types are raw 16-bit patterns converted through PTX, so no CUDA
// header is needed.
//
// Layouts: x N×H×W×C, w K×R×S×C, y N×P×Q×K (NHWC / KRSC), stride and padding equal in H and W.

__device__ __forceinline__ float ld_f32(const float* p, unsigned long long i) { return p[i]; }
__device__ __forceinline__ void st_f32(float* p, unsigned long long i, float v) { p[i] = v; }
// FP16 and BF16 go through PTX; the host-side index check (kernels/host-check) builds FP32 only.
#ifndef ROOFLINE_HOST_CHECK
__device__ __forceinline__ float ld_f16(const unsigned short* p, unsigned long long i) {
  float f; unsigned short h = p[i];
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ void st_f16(unsigned short* p, unsigned long long i, float v) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
  p[i] = h;
}
__device__ __forceinline__ float ld_bf16(const unsigned short* p, unsigned long long i) {
  float f; unsigned int u = ((unsigned int)p[i]) << 16;
  asm("mov.b32 %0, %1;" : "=f"(f) : "r"(u));
  return f;
}
__device__ __forceinline__ void st_bf16(unsigned short* p, unsigned long long i, float v) {
  // Round to nearest even by hand (cvt.rn.bf16.f32 needs sm_80).
  unsigned int u;
  asm("mov.b32 %0, %1;" : "=r"(u) : "f"(v));
  u += 0x7fffu + ((u >> 16) & 1u);
  p[i] = (unsigned short)(u >> 16);
}
#endif

#define CONV_KERNELS(SUFFIX, T)                                                                  \
  /* One thread per output element (n, p, q, k). */                                              \
  extern "C" __global__ void conv_fwd_##SUFFIX(const T* x, const T* w, T* y, int N, int H,       \
                                               int W, int C, int K, int R, int S, int P, int Q,   \
                                               int stride, int pad) {                             \
    unsigned long long idx = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;          \
    unsigned long long total = (unsigned long long)N * P * Q * K;                                \
    if (idx >= total) return;                                                                    \
    int k = idx % K; unsigned long long t = idx / K;                                             \
    int q = t % Q; t /= Q; int p = t % P; int n = t / P;                                         \
    float acc = 0.f;                                                                             \
    for (int r = 0; r < R; ++r) {                                                                \
      int h = p * stride - pad + r;                                                              \
      if (h < 0 || h >= H) continue;                                                             \
      for (int s = 0; s < S; ++s) {                                                              \
        int ww = q * stride - pad + s;                                                           \
        if (ww < 0 || ww >= W) continue;                                                         \
        unsigned long long xb = (((unsigned long long)n * H + h) * W + ww) * C;                  \
        unsigned long long wb = (((unsigned long long)k * R + r) * S + s) * C;                   \
        for (int c = 0; c < C; ++c) acc = fmaf(ld_##SUFFIX(x, xb + c), ld_##SUFFIX(w, wb + c), acc); \
      }                                                                                          \
    }                                                                                            \
    st_##SUFFIX(y, idx, acc);                                                                    \
  }                                                                                              \
  /* One thread per input-gradient element (n, h, w, c). */                                      \
  extern "C" __global__ void conv_bwd_data_##SUFFIX(T* dx, const T* w, const T* dy, int N,       \
                                                    int H, int W, int C, int K, int R, int S,    \
                                                    int P, int Q, int stride, int pad) {         \
    unsigned long long idx = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;          \
    unsigned long long total = (unsigned long long)N * H * W * C;                                \
    if (idx >= total) return;                                                                    \
    int c = idx % C; unsigned long long t = idx / C;                                             \
    int wx = t % W; t /= W; int h = t % H; int n = t / H;                                        \
    float acc = 0.f;                                                                             \
    for (int r = 0; r < R; ++r) {                                                                \
      int ph = h + pad - r;                                                                      \
      if (ph < 0 || ph % stride != 0 || ph / stride >= P) continue;                              \
      int p = ph / stride;                                                                       \
      for (int s = 0; s < S; ++s) {                                                              \
        int qw = wx + pad - s;                                                                   \
        if (qw < 0 || qw % stride != 0 || qw / stride >= Q) continue;                            \
        int q = qw / stride;                                                                     \
        unsigned long long yb = (((unsigned long long)n * P + p) * Q + q) * K;                   \
        for (int k = 0; k < K; ++k)                                                              \
          acc = fmaf(ld_##SUFFIX(dy, yb + k),                                                    \
                     ld_##SUFFIX(w, (((unsigned long long)k * R + r) * S + s) * C + c), acc);    \
      }                                                                                          \
    }                                                                                            \
    st_##SUFFIX(dx, idx, acc);                                                                   \
  }                                                                                              \
  /* One thread per filter-gradient element (k, r, s, c). */                                     \
  extern "C" __global__ void conv_bwd_filter_##SUFFIX(const T* x, T* dw, const T* dy, int N,     \
                                                      int H, int W, int C, int K, int R, int S,  \
                                                      int P, int Q, int stride, int pad) {       \
    unsigned long long idx = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;          \
    unsigned long long total = (unsigned long long)K * R * S * C;                                \
    if (idx >= total) return;                                                                    \
    int c = idx % C; unsigned long long t = idx / C;                                             \
    int s = t % S; t /= S; int r = t % R; int k = t / R;                                         \
    float acc = 0.f;                                                                             \
    for (int n = 0; n < N; ++n)                                                                  \
      for (int p = 0; p < P; ++p) {                                                              \
        int h = p * stride - pad + r;                                                            \
        if (h < 0 || h >= H) continue;                                                           \
        for (int q = 0; q < Q; ++q) {                                                            \
          int wx = q * stride - pad + s;                                                         \
          if (wx < 0 || wx >= W) continue;                                                       \
          acc = fmaf(ld_##SUFFIX(x, (((unsigned long long)n * H + h) * W + wx) * C + c),         \
                     ld_##SUFFIX(dy, (((unsigned long long)n * P + p) * Q + q) * K + k), acc);   \
        }                                                                                        \
      }                                                                                          \
    st_##SUFFIX(dw, idx, acc);                                                                   \
  }                                                                                              \
  /* The LSTM cell of one step. gates: FP32, batch × 4·hidden, column-major (ld = batch), gate  \
     order i, f, g, o; bias: FP32, 4·hidden; c: FP32, batch × hidden, updated in place; h_out:   \
     element `h_off + b·h_ld + j` of the next step's [x, h] input (storage type T). */           \
  extern "C" __global__ void lstm_cell_##SUFFIX(const float* gates, const float* bias, float* c, \
                                                T* h_out, int batch, int hidden,                 \
                                                unsigned long long h_off, int h_ld) {            \
    int idx = blockIdx.x * blockDim.x + threadIdx.x;                                             \
    if (idx >= batch * hidden) return;                                                           \
    int b = idx % batch, j = idx / batch;                                                        \
    float gi = gates[(0 * hidden + j) * batch + b] + bias[0 * hidden + j];                       \
    float gf = gates[(1 * hidden + j) * batch + b] + bias[1 * hidden + j];                       \
    float gg = gates[(2 * hidden + j) * batch + b] + bias[2 * hidden + j];                       \
    float go = gates[(3 * hidden + j) * batch + b] + bias[3 * hidden + j];                       \
    float i = 1.f / (1.f + __expf(-gi)), f = 1.f / (1.f + __expf(-gf));                        \
    float o = 1.f / (1.f + __expf(-go)), g = tanhf(gg);                                          \
    float cn = f * c[idx] + i * g;                                                               \
    c[idx] = cn;                                                                                 \
    st_##SUFFIX(h_out, h_off + (unsigned long long)b * h_ld + j, o * tanhf(cn));                 \
  }

CONV_KERNELS(f32, float)
#ifndef ROOFLINE_HOST_CHECK
CONV_KERNELS(f16, unsigned short)
CONV_KERNELS(bf16, unsigned short)
#endif

// ---------------------------------------------------------------------------------------------
// Implicit-GEMM convolutions: each direction is a GEMM `out (M×Ng) = A (M×Kg) · B (Kg×Ng)`
// whose operands are read straight from the tensors (no im2col buffer), in 64×64 output tiles
// with 16-deep shared-memory stages, 256 threads, 4×4 outputs per thread, FP32 arithmetic on
// CUDA cores. Every output is row-major M×Ng in its tensor:
//   forward          M = N·P·Q  Ng = K      Kg = R·S·C   A = x (im2col)   B = wᵀ
//   backward-data    M = N·H·W  Ng = C      Kg = R·S·K   A = dy (col2im)  B = w
//   backward-filter  M = K      Ng = R·S·C  Kg = N·P·Q   A = dyᵀ          B = x (im2col)
// When M·Ng gives too few tiles to fill the GPU (backward-filter), Kg is split over gridDim.z:
// each slice writes FP32 partial sums and `conv_sum_*` adds them into the output (2 launches).

#ifndef IG_BM
#error "IG_BM is passed by the collector (-DIG_BM=…, collector/src/gpu/kernels.rs)"
#endif
#ifndef IG_BN
#error "IG_BN is passed by the collector (-DIG_BN=…, collector/src/gpu/kernels.rs)"
#endif
#ifndef IG_BK
#error "IG_BK is passed by the collector (-DIG_BK=…, collector/src/gpu/kernels.rs)"
#endif

// Storage formats: 0 = FP32, 1 = FP16, 2 = BF16.
template <int F> __device__ __forceinline__ float ldv(const void* p, unsigned long long i);
template <> __device__ __forceinline__ float ldv<0>(const void* p, unsigned long long i) {
  return ld_f32((const float*)p, i);
}
#ifndef ROOFLINE_HOST_CHECK
template <> __device__ __forceinline__ float ldv<1>(const void* p, unsigned long long i) {
  return ld_f16((const unsigned short*)p, i);
}
template <> __device__ __forceinline__ float ldv<2>(const void* p, unsigned long long i) {
  return ld_bf16((const unsigned short*)p, i);
}
#endif
template <int F> __device__ __forceinline__ void stv(void* p, unsigned long long i, float v);
template <> __device__ __forceinline__ void stv<0>(void* p, unsigned long long i, float v) {
  st_f32((float*)p, i, v);
}
#ifndef ROOFLINE_HOST_CHECK
template <> __device__ __forceinline__ void stv<1>(void* p, unsigned long long i, float v) {
  st_f16((unsigned short*)p, i, v);
}
template <> __device__ __forceinline__ void stv<2>(void* p, unsigned long long i, float v) {
  st_bf16((unsigned short*)p, i, v);
}
#endif

struct ConvGeo {
  int N, H, W, C, K, R, S, P, Q, stride, pad;
};

// x[n, h, w, c] through an im2col view: row (n, p, q) or (n, p, q) as the reduction index,
// column (r, s, c); zero outside the padded image.
template <int F>
__device__ __forceinline__ float im2col(const void* x, const ConvGeo& g, long long npq,
                                        long long rsc) {
  int q = (int)(npq % g.Q); long long t = npq / g.Q;
  int p = (int)(t % g.P); int n = (int)(t / g.P);
  int c = (int)(rsc % g.C); long long u = rsc / g.C;
  int s = (int)(u % g.S); int r = (int)(u / g.S);
  int h = p * g.stride - g.pad + r, w = q * g.stride - g.pad + s;
  if (h < 0 || h >= g.H || w < 0 || w >= g.W) return 0.f;
  return ldv<F>(x, (((unsigned long long)n * g.H + h) * g.W + w) * g.C + c);
}

// Element (m, kk) of A and (kk, j) of B for direction DIR (0 forward, 1 backward-data,
// 2 backward-filter).
template <int F, int DIR>
__device__ __forceinline__ float ig_a(const void* a, const ConvGeo& g, long long m, long long kk) {
  if (DIR == 0) return im2col<F>(a, g, m, kk);
  if (DIR == 2) return ldv<F>(a, (unsigned long long)kk * g.K + m);
  // Backward-data: dy[n, p, q, k] where h = p·stride − pad + r (and likewise w), or zero.
  int wx = (int)(m % g.W); long long t = m / g.W;
  int h = (int)(t % g.H); int n = (int)(t / g.H);
  int k = (int)(kk % g.K); long long u = kk / g.K;
  int s = (int)(u % g.S); int r = (int)(u / g.S);
  int ph = h + g.pad - r, qw = wx + g.pad - s;
  if (ph < 0 || qw < 0 || ph % g.stride != 0 || qw % g.stride != 0) return 0.f;
  int p = ph / g.stride, q = qw / g.stride;
  if (p >= g.P || q >= g.Q) return 0.f;
  return ldv<F>(a, (((unsigned long long)n * g.P + p) * g.Q + q) * g.K + k);
}

template <int F, int DIR>
__device__ __forceinline__ float ig_b(const void* b, const ConvGeo& g, long long kk, long long j) {
  if (DIR == 0) return ldv<F>(b, (unsigned long long)j * g.R * g.S * g.C + kk);
  if (DIR == 2) return im2col<F>(b, g, kk, j);
  // Backward-data: w[k, r, s, c] with kk = (r, s, k) and j = c.
  int k = (int)(kk % g.K); long long u = kk / g.K;
  int s = (int)(u % g.S); int r = (int)(u / g.S);
  return ldv<F>(b, (((unsigned long long)k * g.R + r) * g.S + s) * g.C + j);
}

// A_KK_FAST / B_N_FAST: which index consecutive threads walk when loading a stage, chosen so
// that they read consecutive addresses of the underlying tensor.
template <int F, int DIR, bool A_KK_FAST, bool B_N_FAST>
__device__ void ig_conv(const void* a, const void* b, void* out, float* partial, ConvGeo g,
                        int splits) {
  long long M, Ng, Kg;
  if (DIR == 0) {
    M = (long long)g.N * g.P * g.Q; Ng = g.K; Kg = (long long)g.R * g.S * g.C;
  } else if (DIR == 1) {
    M = (long long)g.N * g.H * g.W; Ng = g.C; Kg = (long long)g.R * g.S * g.K;
  } else {
    M = g.K; Ng = (long long)g.R * g.S * g.C; Kg = (long long)g.N * g.P * g.Q;
  }
  __shared__ float As[IG_BK][IG_BM + 4];
  __shared__ float Bs[IG_BK][IG_BN + 4];
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const long long m0 = (long long)blockIdx.y * IG_BM, n0 = (long long)blockIdx.x * IG_BN;
  const long long per = ((Kg + splits - 1) / splits + IG_BK - 1) / IG_BK * IG_BK;
  const long long k_begin = (long long)blockIdx.z * per;
  const long long k_end = k_begin + per < Kg ? k_begin + per : Kg;
  float acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
  for (long long k0 = k_begin; k0 < k_end; k0 += IG_BK) {
    for (int i = 0; i < 4; ++i) {
      const int e = t + 256 * i;
      const int am = A_KK_FAST ? e / IG_BK : e % IG_BM;
      const int ak = A_KK_FAST ? e % IG_BK : e / IG_BM;
      const long long m = m0 + am, ka = k0 + ak;
      As[ak][am] = (m < M && ka < k_end) ? ig_a<F, DIR>(a, g, m, ka) : 0.f;
      const int bn = B_N_FAST ? e % IG_BN : e / IG_BK;
      const int bk = B_N_FAST ? e / IG_BN : e % IG_BK;
      const long long n = n0 + bn, kb = k0 + bk;
      Bs[bk][bn] = (n < Ng && kb < k_end) ? ig_b<F, DIR>(b, g, kb, n) : 0.f;
    }
    __syncthreads();
    for (int kk = 0; kk < IG_BK; ++kk) {
      float av[4], bv[4];
      for (int i = 0; i < 4; ++i) av[i] = As[kk][ty + 16 * i];
      for (int j = 0; j < 4; ++j) bv[j] = Bs[kk][tx + 16 * j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const long long m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
      if (m >= M || n >= Ng) continue;
      const unsigned long long idx = (unsigned long long)m * Ng + n;
      if (splits == 1)
        stv<F>(out, idx, acc[i][j]);
      else
        partial[(unsigned long long)blockIdx.z * M * Ng + idx] = acc[i][j];
    }
}

// Entry points take the tensors in the same order as the direct kernels: forward (x, w, y),
// backward-data (dx, w, dy), backward-filter (x, dw, dy); then the geometry, then the FP32
// partial-sum buffer (splits × M × Ng floats, unused when splits = 1) and the split count.
#define IG_KERNELS(SUFFIX, F)                                                                    \
  extern "C" __global__ void __launch_bounds__(256) igemm_fwd_##SUFFIX(                         \
      const void* x, const void* w, void* y, int N, int H, int W, int C, int K, int R, int S,     \
      int P, int Q, int stride, int pad, float* partial, int splits) {                            \
    ConvGeo g = {N, H, W, C, K, R, S, P, Q, stride, pad};                                        \
    ig_conv<F, 0, true, false>(x, w, y, partial, g, splits);                                     \
  }                                                                                              \
  extern "C" __global__ void __launch_bounds__(256) igemm_bwd_data_##SUFFIX(                    \
      void* dx, const void* w, const void* dy, int N, int H, int W, int C, int K, int R, int S,   \
      int P, int Q, int stride, int pad, float* partial, int splits) {                            \
    ConvGeo g = {N, H, W, C, K, R, S, P, Q, stride, pad};                                        \
    ig_conv<F, 1, true, true>(dy, w, dx, partial, g, splits);                                    \
  }                                                                                              \
  extern "C" __global__ void __launch_bounds__(256) igemm_bwd_filter_##SUFFIX(                  \
      const void* x, void* dw, const void* dy, int N, int H, int W, int C, int K, int R, int S,   \
      int P, int Q, int stride, int pad, float* partial, int splits) {                            \
    ConvGeo g = {N, H, W, C, K, R, S, P, Q, stride, pad};                                        \
    ig_conv<F, 2, false, true>(dy, x, dw, partial, g, splits);                                   \
  }                                                                                              \
  /* out[i] = the sum over the splits of partial[z·count + i], in the storage type. */          \
  extern "C" __global__ void conv_sum_##SUFFIX(const float* partial, void* out,                  \
                                               unsigned long long count, int splits) {           \
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;            \
    if (i >= count) return;                                                                      \
    float s = 0.f;                                                                               \
    for (int z = 0; z < splits; ++z) s += partial[(unsigned long long)z * count + i];            \
    stv<F>(out, i, s);                                                                           \
  }

IG_KERNELS(f32, 0)
#ifndef ROOFLINE_HOST_CHECK
IG_KERNELS(f16, 1)
IG_KERNELS(bf16, 2)
#endif
