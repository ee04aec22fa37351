// The ncu permission probe of scripts/gpu/validate.sh: one tiny kernel for `ncu --metrics
// sm__cycles_elapsed.avg` to profile. Without permission to read the GPU's counters, ncu says
// ERR_NVGPUCTRPERM instead of the metric.
#include <cstdio>

__global__ void probe(int* x) { x[threadIdx.x] = threadIdx.x; }

int main() {
  int* x = nullptr;
  if (cudaMalloc(&x, 32 * sizeof(int)) != cudaSuccess) {
    std::puts("probe: cudaMalloc failed");
    return 1;
  }
  probe<<<1, 32>>>(x);
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("probe: %s\n", cudaGetErrorString(e));
  cudaFree(x);
  return e == cudaSuccess ? 0 : 1;
}
