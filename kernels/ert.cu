// The ERT-style sweep kernel (after the Empirical Roofline Toolkit's GPU driver): every element
// of a working set of n vectors is loaded, put through `fmas` multiply-adds (or one add when
// `fmas` is 0, for 1 FLOP per element), and stored back; the whole set is swept `reps` times
// inside the kernel so that small working sets stay in cache. The intensity is an argument: one
// compiled kernel serves every point of the sweep.
// FLOPs = reps × n × lanes × max(1, 2 × fmas); bytes = reps × n × 16 × 2 (read and written).

extern "C" __global__ void ert_f32(float4* a, unsigned long long n, int reps, int fmas,
                                   float alpha, unsigned long long* stamps) {
  STAMP_BEGIN
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < reps; ++r) {
    for (unsigned long long i = first; i < n; i += stride) {
      float4 v = a[i];
      if (fmas == 0) {
        v.x += alpha; v.y += alpha; v.z += alpha; v.w += alpha;
      } else {
        const float4 b = v;
#pragma unroll 8
        for (int j = 0; j < fmas; ++j) {
          v.x = fmaf(v.x, b.x, alpha); v.y = fmaf(v.y, b.y, alpha);
          v.z = fmaf(v.z, b.z, alpha); v.w = fmaf(v.w, b.w, alpha);
        }
      }
      a[i] = v;
    }
  }
  STAMP_END
}

extern "C" __global__ void ert_f64(double2* a, unsigned long long n, int reps, int fmas,
                                   double alpha, unsigned long long* stamps) {
  STAMP_BEGIN
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < reps; ++r) {
    for (unsigned long long i = first; i < n; i += stride) {
      double2 v = a[i];
      if (fmas == 0) {
        v.x += alpha; v.y += alpha;
      } else {
        const double2 b = v;
#pragma unroll 8
        for (int j = 0; j < fmas; ++j) {
          v.x = fma(v.x, b.x, alpha); v.y = fma(v.y, b.y, alpha);
        }
      }
      a[i] = v;
    }
  }
  STAMP_END
}
