#include "tools/stream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

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

// Runs body(t, begin, end) on `threads` fresh threads over [0, elements) and
// returns the seconds from the common start signal to the last thread's end
// (thread creation is outside the timed window).
template <typename Body>
double timed_parallel(int threads, long elements, Body body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<Clock::time_point> ends(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  long per = (elements + threads - 1) / threads;
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

}  // namespace

StreamResult measure_stream(int threads, long elements, int reps) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::unique_ptr<double[]> a(new double[elements]), b(new double[elements]),
      c(new double[elements]);
  // First touch by the threads that will use each part (page faults are
  // slow here and must stay out of the measurement).
  timed_parallel(threads, elements, [&](long begin, long end) {
    for (long i = begin; i < end; ++i)
      a[i] = 0, b[i] = 1.0, c[i] = 2.0;
  });
  double best_triad = 1e30, best_copy = 1e30;
  for (int r = 0; r < reps; ++r) {
    best_triad = std::min(best_triad, timed_parallel(threads, elements, [&](long begin, long end) {
                            triad(a.get(), b.get(), c.get(), 3.0, begin, end);
                          }));
    best_copy = std::min(best_copy, timed_parallel(threads, elements, [&](long begin, long end) {
                           copy(a.get(), b.get(), begin, end);
                         }));
  }
  StreamResult result;
  result.triad_gbps = 24.0 * static_cast<double>(elements) / best_triad / 1e9;
  result.copy_gbps = 16.0 * static_cast<double>(elements) / best_copy / 1e9;
  return result;
}

}  // namespace autofuse::tools
