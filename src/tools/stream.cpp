#include "tools/stream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "autofuse/support/host_memory.h"
#include "tools/compute_probe.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace autofuse::tools {

namespace {

using Clock = std::chrono::steady_clock;

// noinline keeps the loops as written; the copy loop must not become a
// memcpy call (which may use non-temporal stores and measure something else).
__attribute__((noinline)) void triad(double* a, const double* b, const double* c, double s,
                                     long begin, long end) {
  for (long i = begin; i < end; ++i)
    a[i] = b[i] + s * c[i];
}
#if defined(__clang__)
#define AF_NO_MEMCPY_IDIOM
#else
#define AF_NO_MEMCPY_IDIOM optimize("no-tree-loop-distribute-patterns"),
#endif
__attribute__((AF_NO_MEMCPY_IDIOM noinline)) void copy(double* a, const double* b, long begin,
                                                       long end) {
  for (long i = begin; i < end; ++i)
    a[i] = b[i];
}

// Write only (STREAM2's FILL): the figure for kernels that read next to
// nothing, such as gathers from cache-resident tables (bert_embeddings).
__attribute__((AF_NO_MEMCPY_IDIOM noinline)) void fill(double* a, double s, long begin, long end) {
  for (long i = begin; i < end; ++i)
    a[i] = s;
}

// Read only: the bits of two arrays folded by XOR (integer, so the
// compiler need not keep a floating-point add chain in order). Two streams,
// as a reduction of two tensors reads.
#if defined(__x86_64__)
__attribute__((noinline)) double read_only(const double* b, const double* c, long begin, long end) {
  __m128i acc0 = _mm_setzero_si128(), acc1 = _mm_setzero_si128();
  long i = begin;
  for (; i + 4 <= end; i += 4) {
    acc0 = _mm_xor_si128(acc0, _mm_load_si128(reinterpret_cast<const __m128i*>(b + i)));
    acc1 = _mm_xor_si128(acc1, _mm_load_si128(reinterpret_cast<const __m128i*>(c + i)));
    acc0 = _mm_xor_si128(acc0, _mm_load_si128(reinterpret_cast<const __m128i*>(b + i + 2)));
    acc1 = _mm_xor_si128(acc1, _mm_load_si128(reinterpret_cast<const __m128i*>(c + i + 2)));
  }
  double folded[2];
  _mm_storeu_pd(folded, _mm_castsi128_pd(_mm_xor_si128(acc0, acc1)));
  double tail = 0;
  for (; i < end; ++i)
    tail += b[i] + c[i];
  return folded[0] + folded[1] + tail;
}
#else
// The bits as integers: the compiler may vectorize the folds (a float sum
// would measure the add chain's latency without -ffast-math).
__attribute__((noinline)) double read_only(const double* b, const double* c, long begin, long end) {
  uint64_t acc = 0;
  for (long i = begin; i < end; ++i) {
    uint64_t u, v;
    std::memcpy(&u, b + i, sizeof u);
    std::memcpy(&v, c + i, sizeof v);
    acc ^= u ^ v;
  }
  return static_cast<double>(acc);
}
#endif

// Non-temporal variants: 256-bit streaming stores where the CPU has AVX
// (the binary itself targets baseline x86-64, hence the target attribute),
// else 128-bit SSE2 ones. `begin` is a multiple of 8 doubles (64 bytes) and
// the arrays are 64-byte aligned; the tail of the last chunk is scalar.
#if defined(__x86_64__)
__attribute__((target("avx"), noinline)) void triad_nt_avx(double* a, const double* b,
                                                           const double* c, double s, long begin,
                                                           long end) {
  const __m256d vs = _mm256_set1_pd(s);
  long i = begin;
  for (; i + 4 <= end; i += 4)
    _mm256_stream_pd(
        a + i, _mm256_add_pd(_mm256_load_pd(b + i), _mm256_mul_pd(vs, _mm256_load_pd(c + i))));
  for (; i < end; ++i)
    a[i] = b[i] + s * c[i];
  _mm_sfence();
}
__attribute__((target("avx"), noinline)) void copy_nt_avx(double* a, const double* b, long begin,
                                                          long end) {
  long i = begin;
  for (; i + 4 <= end; i += 4)
    _mm256_stream_pd(a + i, _mm256_load_pd(b + i));
  for (; i < end; ++i)
    a[i] = b[i];
  _mm_sfence();
}
__attribute__((target("avx"), noinline)) void fill_nt_avx(double* a, double s, long begin,
                                                          long end) {
  const __m256d vs = _mm256_set1_pd(s);
  long i = begin;
  for (; i + 4 <= end; i += 4)
    _mm256_stream_pd(a + i, vs);
  for (; i < end; ++i)
    a[i] = s;
  _mm_sfence();
}
__attribute__((noinline)) void triad_nt_sse2(double* a, const double* b, const double* c, double s,
                                             long begin, long end) {
  const __m128d vs = _mm_set1_pd(s);
  long i = begin;
  for (; i + 2 <= end; i += 2)
    _mm_stream_pd(a + i, _mm_add_pd(_mm_load_pd(b + i), _mm_mul_pd(vs, _mm_load_pd(c + i))));
  for (; i < end; ++i)
    a[i] = b[i] + s * c[i];
  _mm_sfence();
}
__attribute__((noinline)) void copy_nt_sse2(double* a, const double* b, long begin, long end) {
  long i = begin;
  for (; i + 2 <= end; i += 2)
    _mm_stream_pd(a + i, _mm_load_pd(b + i));
  for (; i < end; ++i)
    a[i] = b[i];
  _mm_sfence();
}
__attribute__((noinline)) void fill_nt_sse2(double* a, double s, long begin, long end) {
  const __m128d vs = _mm_set1_pd(s);
  long i = begin;
  for (; i + 2 <= end; i += 2)
    _mm_stream_pd(a + i, vs);
  for (; i < end; ++i)
    a[i] = s;
  _mm_sfence();
}
bool has_avx() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx");
}
void triad_nt(double* a, const double* b, const double* c, double s, long begin, long end) {
  static const bool avx = has_avx();
  avx ? triad_nt_avx(a, b, c, s, begin, end) : triad_nt_sse2(a, b, c, s, begin, end);
}
void copy_nt(double* a, const double* b, long begin, long end) {
  static const bool avx = has_avx();
  avx ? copy_nt_avx(a, b, begin, end) : copy_nt_sse2(a, b, begin, end);
}
void fill_nt(double* a, double s, long begin, long end) {
  static const bool avx = has_avx();
  avx ? fill_nt_avx(a, s, begin, end) : fill_nt_sse2(a, s, begin, end);
}
#else
// No streaming-store intrinsics here: the "non-temporal" figures are the
// ordinary loops (reported as such; only x86-64 is a target of autofuse).
void triad_nt(double* a, const double* b, const double* c, double s, long begin, long end) {
  triad(a, b, c, s, begin, end);
}
void copy_nt(double* a, const double* b, long begin, long end) {
  copy(a, b, begin, end);
}
void fill_nt(double* a, double s, long begin, long end) {
  fill(a, s, begin, end);
}
#endif

// Elements per thread: an equal share rounded up to 64 bytes.
long per_thread(int threads, long elements) {
  const long per = (elements + threads - 1) / threads;
  return (per + 7) / 8 * 8;
}

// Runs body(begin, end) on `threads` fresh threads over [0, elements) in
// chunks that start on 64-byte boundaries and returns the seconds from the
// common start signal to the last thread's end (thread creation is outside
// the timed window).
template <typename Body>
double timed_parallel(int threads, long elements, Body body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<Clock::time_point> ends(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  const long per = per_thread(threads, elements);
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      body(std::min(elements, t * per), std::min(elements, (t + 1) * per));
      ends[static_cast<size_t>(t)] = Clock::now();
    });
  }
  while (ready.load() < threads)
    std::this_thread::yield();
  Clock::time_point start = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& w : workers)
    w.join();
  Clock::time_point end = *std::max_element(ends.begin(), ends.end());
  return std::chrono::duration<double>(end - start).count();
}

// STREAM's arrays come from the allocator the kernels' tensors use (huge
// pages when large), so its bandwidth is measured under the same paging.
struct HostBufferDeleter {
  size_t bytes = 0;
  void operator()(double* p) const { free_host_buffer(p, bytes); }
};
using Array = std::unique_ptr<double[], HostBufferDeleter>;

Array aligned_array(long elements) {
  const size_t bytes =
      std::max<size_t>((static_cast<size_t>(elements) * sizeof(double) + 63) / 64 * 64, 64);
  return Array(static_cast<double*>(allocate_host_buffer(bytes)), HostBufferDeleter{bytes});
}

}  // namespace

StreamResult StreamResult::best(const StreamResult& other) const {
  StreamResult r = *this;
  r.triad_gbps = std::max(triad_gbps, other.triad_gbps);
  r.copy_gbps = std::max(copy_gbps, other.copy_gbps);
  r.triad_nt_gbps = std::max(triad_nt_gbps, other.triad_nt_gbps);
  r.copy_nt_gbps = std::max(copy_nt_gbps, other.copy_nt_gbps);
  r.read_gbps = std::max(read_gbps, other.read_gbps);
  r.fill_gbps = std::max(fill_gbps, other.fill_gbps);
  r.fill_nt_gbps = std::max(fill_nt_gbps, other.fill_nt_gbps);
  r.fma_gflops = std::max(fma_gflops, other.fma_gflops);
  return r;
}

StreamResult measure_stream(int threads, long elements, int reps) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  elements = std::max(elements, 1L);
  Array a = aligned_array(elements), b = aligned_array(elements), c = aligned_array(elements);
  // First touch by the threads that will use each part (page faults are
  // slow here and must stay out of the measurement).
  timed_parallel(threads, elements, [&](long begin, long end) {
    for (long i = begin; i < end; ++i)
      a[i] = 0, b[i] = 1.0, c[i] = 2.0;
  });
  double best[8] = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30, 1e30};
  // About 1.5 ms per probe on one core at full speed (8 chains on two FMA
  // ports); builds without optimization (ASan) take several times that.
  constexpr long kProbeIterations = 1L << 20;
  std::atomic<int> probing{0};
  double probe_flops = 0;
  std::vector<double> sinks(static_cast<size_t>(threads));  // keeps the reads live
  auto keep = [&](int k, double seconds) { best[k] = std::min(best[k], seconds); };
  for (int r = 0; r < reps; ++r) {
    keep(0, timed_parallel(threads, elements, [&](long begin, long end) {
           triad(a.get(), b.get(), c.get(), 3.0, begin, end);
         }));
    keep(1, timed_parallel(threads, elements,
                           [&](long begin, long end) { copy(a.get(), b.get(), begin, end); }));
    keep(2, timed_parallel(threads, elements, [&](long begin, long end) {
           triad_nt(a.get(), b.get(), c.get(), 3.0, begin, end);
         }));
    keep(3, timed_parallel(threads, elements,
                           [&](long begin, long end) { copy_nt(a.get(), b.get(), begin, end); }));
    // A thread's non-empty range begins at its index times the share.
    keep(4, timed_parallel(threads, elements, [&](long begin, long end) {
           if (begin < end)
             sinks[static_cast<size_t>(begin / per_thread(threads, elements))] +=
                 read_only(b.get(), c.get(), begin, end);
         }));
    keep(5, timed_parallel(threads, elements,
                           [&](long begin, long end) { fill(a.get(), 4.0, begin, end); }));
    keep(6, timed_parallel(threads, elements,
                           [&](long begin, long end) { fill_nt(a.get(), 5.0, begin, end); }));
    probing = 0;
    keep(7, timed_parallel(threads, elements, [&](long begin, long end) {
           if (begin >= end) return;
           const double flops = fma_probe(kProbeIterations);
           if (probing.fetch_add(1) == 0) probe_flops = flops;
         }));
  }
  const double n = static_cast<double>(elements);
  StreamResult result;
  result.triad_gbps = 24.0 * n / best[0] / 1e9;
  result.copy_gbps = 16.0 * n / best[1] / 1e9;
  result.triad_nt_gbps = 24.0 * n / best[2] / 1e9;
  result.copy_nt_gbps = 16.0 * n / best[3] / 1e9;
  result.read_gbps = 16.0 * n / best[4] / 1e9;
  result.fill_gbps = 8.0 * n / best[5] / 1e9;
  result.fill_nt_gbps = 8.0 * n / best[6] / 1e9;
  result.fma_gflops = probing.load() * probe_flops / best[7] / 1e9;
  volatile double keep_sinks = 0;
  for (double v : sinks)
    keep_sinks = keep_sinks + v;
  result.threads = threads;
  result.array_mib = 8.0 * n / (1 << 20);
  return result;
}

}  // namespace autofuse::tools
