// Shared helpers for the microbenchmarks, prepended to every kernel source by the collector
// (NVRTC compiles each source on its own, with no include path).
//
// Every benchmark kernel takes `unsigned long long* stamps` last: block 0, thread 0 adds the SM
// cycles (%clock64) and nanoseconds (%globaltimer) that passed while it ran to stamps[0] and
// stamps[1], so the collector knows the SM clock during a measurement: clock = cycles /
// nanoseconds, summed over every launch between two clearings of the stamps (an interval of N
// back-to-back launches gives their average clock, weighted by time).

#define STAMP_BEGIN                                                              \
  unsigned long long stamp_c0 = 0, stamp_t0 = 0;                                 \
  const bool stamp_me = threadIdx.x == 0 && blockIdx.x == 0;                     \
  if (stamp_me) {                                                                \
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(stamp_c0));                     \
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(stamp_t0));                 \
  }

#define STAMP_END                                                                \
  if (stamp_me) {                                                                \
    unsigned long long c1, t1;                                                   \
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c1));                           \
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));                       \
    atomicAdd(&stamps[0], c1 - stamp_c0);                                        \
    atomicAdd(&stamps[1], t1 - stamp_t0);                                        \
  }

// A value the compiler cannot prove unused: written only if it equals a runtime sentinel that
// the collector never passes.
#define KEEP(value, sink, sentinel)                                              \
  if ((value) == (sentinel)) { sink[0] = (value); }

// float4 from four floats (no dependence on CUDA's vector_functions.h).
__device__ __forceinline__ float4 mk4(float x, float y, float z, float w) {
  float4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v;
}
