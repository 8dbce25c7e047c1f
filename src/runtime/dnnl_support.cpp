// oneDNN support shared by library_matmul and library_conv (dnnl_support.h).
#include "runtime/dnnl_support.h"

#include <omp.h>

#include "autofuse/error.h"
#include "autofuse/support/half.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace autofuse::runtime {

DnnlCache::DnnlCache() : impl_(std::make_unique<Impl>()) {}
DnnlCache::~DnnlCache() = default;
int DnnlCache::size() const {
  return static_cast<int>(impl_->matmuls.size() + impl_->convs.size());
}

void DnnlCache::Impl::start() {
  if (engine != nullptr) return;
  engine = &cpu_engine();
  stream.emplace(*engine);
}

DnnlEntry DnnlCache::Impl::create_with_fallback(DType dtype,
                                                const std::function<DnnlEntry(DType)>& create,
                                                const std::function<std::string()>& describe) {
  try {
    try {
      return create(dtype);
    } catch (const dnnl::error& err) {
      // No native f16 / bf16 kernel on this CPU: compute on f32 copies instead.
      if ((dtype != DType::f16 && dtype != DType::bf16) || err.status != dnnl_unimplemented) throw;
      DnnlEntry e = create(DType::f32);
      e.staged_f32 = true;
      return e;
    }
  } catch (const dnnl::error& err) {
    AF_CHECK(false, "oneDNN {} for {}: {}", describe(), dtype_name(dtype), err.what());
  }
  return {};
}

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::memory::data_type dnnl_type(DType dt) {
  switch (dt) {
    case DType::f32:
      return dnnl::memory::data_type::f32;
    case DType::f16:
      return dnnl::memory::data_type::f16;
    case DType::bf16:
      return dnnl::memory::data_type::bf16;
    default:
      AF_CHECK(false, "no oneDNN data type for {}", dtype_name(dt));
  }
}

dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims, dnnl::memory::data_type dt) {
  dnnl::memory::dims strides(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(dims[i], 1);
  }
  return dnnl::memory::desc(dims, dt, strides);
}

void execute(DnnlCache::Impl& cache, DnnlEntry& e, const void* src, const void* weights,
             const void* bias, void* dst, void* scratchpad) {
  e.src.set_data_handle(const_cast<void*>(src));
  e.weights.set_data_handle(const_cast<void*>(weights));
  e.dst.set_data_handle(dst);
  // The C API takes a plain argument array (the C++ one builds a map).
  dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, e.src.get()},
                             {DNNL_ARG_WEIGHTS, e.weights.get()},
                             {DNNL_ARG_DST, e.dst.get()}};
  int nargs = 3;
  if (bias != nullptr) {
    e.bias.set_data_handle(const_cast<void*>(bias));
    args[nargs++] = {DNNL_ARG_BIAS, e.bias.get()};
  }
  if (e.scratchpad_bytes > 0) {
    e.scratchpad.set_data_handle(scratchpad);
    args[nargs++] = {DNNL_ARG_SCRATCHPAD, e.scratchpad.get()};
  }
  dnnl_status_t st = dnnl_primitive_execute(e.prim.get(), cache.stream->get(), nargs, args);
  if (st == dnnl_success) st = dnnl_stream_wait(cache.stream->get());
  AF_CHECK(st == dnnl_success, "oneDNN execution failed (status {})", static_cast<int>(st));
}

namespace {

#if defined(__x86_64__)
// F16C converts 8 values per instruction, rounding to nearest even like
// f32_to_f16; the scalar loops handle the tails and CPUs without it.
__attribute__((target("avx,f16c"))) int64_t f16_to_f32_f16c(const uint16_t* src, float* dst,
                                                            int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  return i;
}
__attribute__((target("avx,f16c"))) int64_t f32_to_f16_f16c(const float* src, uint16_t* dst,
                                                            int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  return i;
}
// AVX usable (the OS saves YMM state: __builtin_cpu_supports checks that, as
// machine.cpp relies on) and CPUID leaf 1's F16C bit (clang 14's
// __builtin_cpu_supports does not know "f16c").
bool detect_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
         (ecx & bit_F16C) != 0;
}
// Once per process: CPUID traps to the hypervisor in a VM.
bool has_f16c() {
  static const bool has = detect_f16c();
  return has;
}
#endif

/// Converts n f16 values to f32 or back.
void f16_to_f32_n(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
#if defined(__x86_64__)
  if (has_f16c()) i = f16_to_f32_f16c(src, dst, n);
#endif
  for (; i < n; ++i)
    dst[i] = f16_to_f32(src[i]);
}
void f32_to_f16_n(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
#if defined(__x86_64__)
  if (has_f16c()) i = f32_to_f16_f16c(src, dst, n);
#endif
  for (; i < n; ++i)
    dst[i] = f32_to_f16(src[i]);
}

}  // namespace

void half_to_f32_n(DType dt, const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  if (dt == DType::f16) return f16_to_f32_n(h, dst, n);
  for (int64_t i = 0; i < n; ++i)
    dst[i] = bf16_to_f32(h[i]);
}
void f32_to_half_n(DType dt, const float* src, void* dst, int64_t n) {
  auto* h = static_cast<uint16_t*>(dst);
  if (dt == DType::f16) return f32_to_f16_n(src, h, n);
  for (int64_t i = 0; i < n; ++i)
    h[i] = f32_to_bf16(src[i]);
}

ScopedOmpThreads::ScopedOmpThreads(int threads) : saved_(omp_get_max_threads()) {
  omp_set_num_threads(std::max(1, threads));
}
ScopedOmpThreads::~ScopedOmpThreads() {
  omp_set_num_threads(saved_);
}
int ScopedOmpThreads::current() {
  return omp_get_max_threads();
}

}  // namespace autofuse::runtime
