// Runs the kernels of ../dl.cu (FP32 variants) on the CPU, one std::thread per CUDA thread and a
// std::barrier for __syncthreads, and compares every output with a naive double-precision
// reference: the convolutions (direct and implicit-GEMM, split-K included) and the LSTM cell. It
// checks the kernels' index arithmetic (im2col, col2im, tiling, split-K, gate layout), not their
// speed; tests/kernels runs it.
#include <barrier>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>
#include <vector>

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
static std::barrier<>* block_barrier = nullptr;

#define ROOFLINE_HOST_CHECK
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
inline void __syncthreads() { block_barrier->arrive_and_wait(); }
inline float __expf(float x) { return std::exp(x); }

#include "../dl.cu"

// Runs `kernel` over the whole grid, block after block; the threads of a block run together.
static void launch(dim3 grid, dim3 block, const std::function<void()>& kernel) {
  gridDim = grid;
  blockDim = block;
  const unsigned threads = block.x * block.y * block.z;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        std::barrier<> bar(threads);
        block_barrier = &bar;
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
          pool.emplace_back([&, t] {
            threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
            blockIdx = {bx, by, bz};
            kernel();
          });
        for (auto& th : pool) th.join();
      }
}

struct Case {
  int N, H, W, C, K, R, S, stride, pad;
  int P() const { return (H + 2 * pad - R) / stride + 1; }
  int Q() const { return (W + 2 * pad - S) / stride + 1; }
};

static double max_rel_error(const std::vector<float>& got, const std::vector<double>& want) {
  double scale = 0, err = 0;
  for (double v : want) scale = std::fmax(scale, std::fabs(v));
  for (size_t i = 0; i < got.size(); ++i) err = std::fmax(err, std::fabs(got[i] - want[i]));
  return err / (scale > 0 ? scale : 1);
}

static int check(const Case& c, int splits_filter) {
  const int P = c.P(), Q = c.Q();
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto fill = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& e : v) e = u(rng);
    return v;
  };
  const size_t xs = (size_t)c.N * c.H * c.W * c.C, ws = (size_t)c.K * c.R * c.S * c.C,
               ys = (size_t)c.N * P * Q * c.K;
  auto x = fill(xs), w = fill(ws), dy = fill(ys);

  // Naive references in double.
  std::vector<double> y_ref(ys, 0), dx_ref(xs, 0), dw_ref(ws, 0);
  for (int n = 0; n < c.N; ++n)
    for (int p = 0; p < P; ++p)
      for (int q = 0; q < Q; ++q)
        for (int k = 0; k < c.K; ++k)
          for (int r = 0; r < c.R; ++r)
            for (int s = 0; s < c.S; ++s) {
              int h = p * c.stride - c.pad + r, ww = q * c.stride - c.pad + s;
              if (h < 0 || h >= c.H || ww < 0 || ww >= c.W) continue;
              for (int ch = 0; ch < c.C; ++ch) {
                size_t xi = (((size_t)n * c.H + h) * c.W + ww) * c.C + ch;
                size_t wi = (((size_t)k * c.R + r) * c.S + s) * c.C + ch;
                size_t yi = (((size_t)n * P + p) * Q + q) * c.K + k;
                y_ref[yi] += (double)x[xi] * w[wi];
                dx_ref[xi] += (double)dy[yi] * w[wi];
                dw_ref[wi] += (double)dy[yi] * x[xi];
              }
            }

  int failures = 0;
  auto report = [&](const char* what, const std::vector<float>& got,
                    const std::vector<double>& want) {
    double e = max_rel_error(got, want);
    bool ok = e < 1e-5;
    failures += !ok;
    std::printf("  %-22s max error / max |value| = %.2e  %s\n", what, e, ok ? "ok" : "WRONG");
  };
  auto blocks = [](long long n) { return (unsigned)((n + 255) / 256); };
  const int N = c.N, H = c.H, W = c.W, C = c.C, K = c.K, R = c.R, S = c.S, st = c.stride,
            pd = c.pad;

  std::vector<float> y(ys), dx(xs), dw(ws);
  launch({blocks(ys)}, {256}, [&] { conv_fwd_f32(x.data(), w.data(), y.data(), N, H, W, C, K, R, S, P, Q, st, pd); });
  report("direct forward", y, y_ref);
  launch({blocks(xs)}, {256}, [&] { conv_bwd_data_f32(dx.data(), w.data(), dy.data(), N, H, W, C, K, R, S, P, Q, st, pd); });
  report("direct backward-data", dx, dx_ref);
  launch({blocks(ws)}, {256}, [&] { conv_bwd_filter_f32(x.data(), dw.data(), dy.data(), N, H, W, C, K, R, S, P, Q, st, pd); });
  report("direct backward-filter", dw, dw_ref);

  auto tiles = [](long long m, long long n, int z) {
    return dim3{(unsigned)((n + 63) / 64), (unsigned)((m + 63) / 64), (unsigned)z};
  };
  std::vector<float> none(1);
  std::fill(y.begin(), y.end(), NAN);
  launch(tiles((long long)N * P * Q, K, 1), {256}, [&] { igemm_fwd_f32(x.data(), w.data(), y.data(), N, H, W, C, K, R, S, P, Q, st, pd, none.data(), 1); });
  report("implicit-GEMM forward", y, y_ref);
  std::fill(dx.begin(), dx.end(), NAN);
  launch(tiles((long long)N * H * W, C, 1), {256}, [&] { igemm_bwd_data_f32(dx.data(), w.data(), dy.data(), N, H, W, C, K, R, S, P, Q, st, pd, none.data(), 1); });
  report("implicit-GEMM bwd-data", dx, dx_ref);
  for (int splits : {1, splits_filter}) {
    std::fill(dw.begin(), dw.end(), NAN);
    std::vector<float> partial((size_t)splits * ws, NAN);
    launch(tiles(K, (long long)R * S * C, splits), {256}, [&] { igemm_bwd_filter_f32(x.data(), dw.data(), dy.data(), N, H, W, C, K, R, S, P, Q, st, pd, partial.data(), splits); });
    if (splits > 1)
      launch({blocks(ws)}, {256}, [&] { conv_sum_f32(partial.data(), dw.data(), ws, splits); });
    char label[64];
    std::snprintf(label, sizeof label, "implicit-GEMM bwd-filt/%d", splits);
    report(label, dw, dw_ref);
  }
  return failures;
}

// The LSTM cell against its definition: gates i, f, g, o from the column-major FP32 gate matrix
// plus bias; c ← σ(f)·c + σ(i)·tanh(g); h ← σ(o)·tanh(c), written into row b of the next step's
// [x, h] input at column input + j.
static int check_lstm_cell(int batch, int hidden, int input) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  std::vector<float> gates((size_t)batch * 4 * hidden), bias(4 * hidden), c((size_t)batch * hidden);
  for (auto* v : {&gates, &bias, &c})
    for (auto& e : *v) e = u(rng);
  const int ld = input + hidden;
  std::vector<float> xh((size_t)batch * ld, NAN), c_ref = c;
  std::vector<double> h_ref((size_t)batch * hidden);
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < hidden; ++j) {
      auto gate = [&](int g) {
        return (double)gates[((size_t)g * hidden + j) * batch + b] + bias[g * hidden + j];
      };
      double cn = sigmoid(gate(1)) * c[(size_t)j * batch + b] + sigmoid(gate(0)) * std::tanh(gate(2));
      c_ref[(size_t)j * batch + b] = (float)cn;
      h_ref[(size_t)b * hidden + j] = sigmoid(gate(3)) * std::tanh(cn);
    }
  const unsigned long long h_off = input;
  launch({(unsigned)((batch * hidden + 127) / 128)}, {128}, [&] {
    lstm_cell_f32(gates.data(), bias.data(), c.data(), xh.data(), batch, hidden, h_off, ld);
  });
  std::vector<float> h((size_t)batch * hidden);
  int untouched = 0;
  for (int b = 0; b < batch; ++b) {
    for (int j = 0; j < hidden; ++j) h[(size_t)b * hidden + j] = xh[(size_t)b * ld + input + j];
    for (int k = 0; k < input; ++k) untouched += !std::isnan(xh[(size_t)b * ld + k]);
  }
  std::vector<double> c_want(c_ref.begin(), c_ref.end());
  double eh = max_rel_error(h, h_ref), ec = max_rel_error(c, c_want);
  bool ok = eh < 1e-5 && ec < 1e-5 && untouched == 0;
  std::printf("LSTM cell batch=%d hidden=%d input=%d\n  %-22s h error %.2e, c error %.2e, x columns %s  %s\n",
              batch, hidden, input, "fused cell", eh, ec, untouched ? "OVERWRITTEN" : "untouched",
              ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}

int main() {
  // Small shapes that still cover partial tiles, several tiles per dimension, padding, strides
  // 1 to 3, 1×1 and 7×7 filters, and split-K with a ragged last slice.
  const Case cases[] = {
      {2, 9, 9, 5, 7, 3, 3, 2, 1},    {1, 12, 10, 70, 3, 3, 3, 1, 1},
      {2, 8, 8, 3, 130, 1, 1, 1, 0},  {1, 15, 15, 4, 6, 7, 7, 2, 3},
      {3, 11, 11, 17, 9, 3, 3, 3, 1},
  };
  int failures = 0;
  for (const Case& c : cases) {
    std::printf("N=%d H=%d W=%d C=%d K=%d R=%d S=%d stride=%d pad=%d (P=%d Q=%d)\n", c.N, c.H,
                c.W, c.C, c.K, c.R, c.S, c.stride, c.pad, c.P(), c.Q());
    failures += check(c, 3);
  }
  failures += check_lstm_cell(5, 33, 7);
  failures += check_lstm_cell(16, 16, 32);
  std::printf(failures ? "%d comparisons WRONG\n" : "every kernel matches the reference\n",
              failures);
  return failures ? 1 : 0;
}
