#include "tools/compute_probe.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace autofuse::tools {

namespace {

// Eight chains hide the FMA latency (4 cycles) on two ports; the multiplier
// just under 1 and the tiny addend keep the values near 1 forever.
constexpr float kScale = 0.999999f;
constexpr float kStep = 1e-7f;

#if defined(__x86_64__)
// Eight named chains, not an array: an array's elements went through memory
// at -O2 (a store and a reload per FMA, 4.5x under the FMA ports' rate).
#define AF_PROBE_CHAINS(V, SET1, FMA, ADD, iterations)                          \
  V a0 = SET1(1.000f), a1 = SET1(1.001f), a2 = SET1(1.002f), a3 = SET1(1.003f); \
  V a4 = SET1(1.004f), a5 = SET1(1.005f), a6 = SET1(1.006f), a7 = SET1(1.007f); \
  const V m = SET1(kScale), c = SET1(kStep);                                    \
  for (long i = 0; i < (iterations); ++i) {                                     \
    a0 = FMA(a0, m, c);                                                         \
    a1 = FMA(a1, m, c);                                                         \
    a2 = FMA(a2, m, c);                                                         \
    a3 = FMA(a3, m, c);                                                         \
    a4 = FMA(a4, m, c);                                                         \
    a5 = FMA(a5, m, c);                                                         \
    a6 = FMA(a6, m, c);                                                         \
    a7 = FMA(a7, m, c);                                                         \
  }                                                                             \
  const V sum = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)))

__attribute__((target("avx512f"), noinline)) float fma_avx512(long iterations) {
  AF_PROBE_CHAINS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, iterations);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  return lanes[0] + lanes[15];
}
__attribute__((target("avx2,fma"), noinline)) float fma_avx2(long iterations) {
  AF_PROBE_CHAINS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, iterations);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  return lanes[0] + lanes[7];
}
#undef AF_PROBE_CHAINS
#endif

// Anything else: 4-lane multiply and add (SSE2 on x86-64), counted the same.
__attribute__((noinline)) float fma_portable(long iterations) {
  float a[8][4];
  for (int k = 0; k < 8; ++k)
    for (int j = 0; j < 4; ++j)
      a[k][j] = 1.0f + 1e-3f * static_cast<float>(k);
  for (long i = 0; i < iterations; ++i)
    for (int k = 0; k < 8; ++k)
      for (int j = 0; j < 4; ++j)
        a[k][j] = a[k][j] * kScale + kStep;
  float sum = 0;
  for (int k = 0; k < 8; ++k)
    for (int j = 0; j < 4; ++j)
      sum += a[k][j];
  return sum;
}

}  // namespace

double fma_probe(long iterations) {
  volatile float sink = 0;  // keeps the chains live
  int lanes = 4;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    sink = fma_avx512(iterations);
    lanes = 16;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    sink = fma_avx2(iterations);
    lanes = 8;
  } else {
    sink = fma_portable(iterations);
  }
#else
  sink = fma_portable(iterations);
#endif
  (void)sink;
  return 2.0 * 8.0 * lanes * static_cast<double>(iterations);
}

}  // namespace autofuse::tools
