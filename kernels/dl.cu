// Our own DL kernels for `roofline suite`: direct NHWC convolutions (forward, backward-data,
// backward-filter) and the fused LSTM cell, each for FP32, FP16 and BF16 storage with FP32
// arithmetic on CUDA cores. Half types are raw 16-bit patterns converted through PTX, so no CUDA
// header is needed.
//
// Layouts: x N×H×W×C, w K×R×S×C, y N×P×Q×K (NHWC / KRSC), stride and padding equal in H and W.

__device__ __forceinline__ float ld_f32(const float* p, unsigned long long i) { return p[i]; }
__device__ __forceinline__ void st_f32(float* p, unsigned long long i, float v) { p[i] = v; }
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
CONV_KERNELS(f16, unsigned short)
CONV_KERNELS(bf16, unsigned short)
