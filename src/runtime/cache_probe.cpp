#include "runtime/cache_probe.h"

#include <sys/mman.h>
#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "autofuse/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace autofuse::runtime {

namespace {

using Clock = std::chrono::steady_clock;

// `+ 1.0` keeps g++ from turning the loop into a memcpy call (which may
// stream by itself); the streaming loop does the same arithmetic.
__attribute__((noinline)) void copy_ordinary(double* dst, const double* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = src[i] + 1.0;
}

#if defined(__x86_64__)
// 32-byte vectors where the CPU has AVX, as the kernels' (16-byte SSE2
// streaming stores reached half the rate on a Xeon). The binary targets
// baseline x86-64, hence the target attributes. `dst` and `src` are 64-byte
// aligned, n a multiple of 8.
__attribute__((target("avx"), noinline)) void copy_ordinary_avx(double* dst, const double* src,
                                                                int64_t n) {
  const __m256d one = _mm256_set1_pd(1.0);
  for (int64_t i = 0; i < n; i += 4)
    _mm256_store_pd(dst + i, _mm256_add_pd(_mm256_load_pd(src + i), one));
}
__attribute__((target("avx"), noinline)) void copy_streaming_avx(double* dst, const double* src,
                                                                 int64_t n) {
  const __m256d one = _mm256_set1_pd(1.0);
  for (int64_t i = 0; i < n; i += 4)
    _mm256_stream_pd(dst + i, _mm256_add_pd(_mm256_load_pd(src + i), one));
  _mm_sfence();
}
__attribute__((noinline)) void copy_streaming(double* dst, const double* src, int64_t n) {
  const __m128d one = _mm_set1_pd(1.0);
  for (int64_t i = 0; i < n; i += 2)
    _mm_stream_pd(dst + i, _mm_add_pd(_mm_load_pd(src + i), one));
  _mm_sfence();
}
#endif

// The arrays come from mmap, not malloc: freeing a malloc'd 4 MiB block
// raises glibc's dynamic mmap threshold, which moved later buffers onto the
// heap (chain30 f32 N=64 then ran 0 or 4 us slower per call, by where its
// buffers landed).
class MappedArray {
 public:
  explicit MappedArray(size_t bytes) : bytes_(bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<double*>(p);
  }
  ~MappedArray() {
    if (data_ != nullptr) ::munmap(data_, bytes_);
  }
  MappedArray(const MappedArray&) = delete;
  MappedArray& operator=(const MappedArray&) = delete;
  double* get() const { return data_; }

 private:
  size_t bytes_;
  double* data_;
};

double seconds_of(void (*copy)(double*, const double*, int64_t), double* dst, const double* src,
                  int64_t n) {
  const auto t0 = Clock::now();
  copy(dst, src, n);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

StreamingProbe probe_streaming(int64_t array_bytes, int reps) {
  StreamingProbe r;
#if defined(__x86_64__)
  const int64_t n = std::max<int64_t>(array_bytes / 64, 1) * 8;  // whole lines of doubles
  const size_t bytes = static_cast<size_t>(n) * sizeof(double);
  const MappedArray src(bytes), dst(bytes);  // page-aligned
  if (!src.get() || !dst.get()) return r;    // no memory to spare: no decision (ordinary stores)
  std::fill_n(src.get(), n, 1.0);
  std::fill_n(dst.get(), n, 0.0);
  __builtin_cpu_init();
  const bool avx = __builtin_cpu_supports("avx");
  auto* const ordinary = avx ? copy_ordinary_avx : copy_ordinary;
  auto* const streaming = avx ? copy_streaming_avx : copy_streaming;
  double best_ordinary = 1e30, best_streaming = 1e30;
  for (int rep = 0; rep < reps + 1; ++rep) {  // the first round warms up
    const double o = seconds_of(ordinary, dst.get(), src.get(), n);
    const double s = seconds_of(streaming, dst.get(), src.get(), n);
    if (rep == 0) continue;
    best_ordinary = std::min(best_ordinary, o);
    best_streaming = std::min(best_streaming, s);
  }
  const double moved = 2.0 * static_cast<double>(bytes);
  r.ordinary_gbps = moved / best_ordinary / 1e9;
  r.streaming_gbps = moved / best_streaming / 1e9;
  r.streaming_wins = best_streaming * 1.3 <= best_ordinary;
#else
  (void)array_bytes;
  (void)reps;
#endif
  return r;
}

int64_t parse_byte_size(const char* text) {
  if (text == nullptr || *text < '0' || *text > '9') return -1;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  int shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  if (*end == 'M' || *end == 'm') shift = 20;
  if (*end == 'G' || *end == 'g') shift = 30;
  if (shift > 0) ++end;
  if (*end != '\0' || v < 0 || v > (INT64_MAX >> shift)) return -1;
  return static_cast<int64_t>(v) << shift;
}

int64_t effective_l3_bytes(int64_t reported_l3, int64_t l2_bytes, int64_t cores) {
  if (const char* env = std::getenv("AUTOFUSE_L3_BYTES"); env != nullptr && *env != '\0') {
    const int64_t v = parse_byte_size(env);
    if (v >= 0) return v;
    throw UserError(
        fmt::format("AUTOFUSE_L3_BYTES={}: expected a size in bytes, e.g. 33554432 or 32M", env));
  }
  const int64_t private_bytes = l2_bytes * std::max<int64_t>(cores, 1);
  if (reported_l3 <= 2 * private_bytes) return reported_l3;  // nothing to decide
  // A hardware property: probed once per process, as the cache sizes are read.
  static const bool streaming_wins = probe_streaming(2 * l2_bytes).streaming_wins;
  return streaming_wins ? 2 * private_bytes : reported_l3;
}

}  // namespace autofuse::runtime
