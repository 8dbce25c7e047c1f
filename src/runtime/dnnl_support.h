// What library_matmul and library_conv share around oneDNN: the engine, the
// primitive cache (DnnlCache::Impl, one map per primitive kind), plain
// row-major memory descriptors, execution with user-managed scratchpads and
// the f16/bf16 <-> f32 staging used where oneDNN has no kernel for a half
// type on this CPU (an AVX2 CPU: oneDNN 2.7 reports bf16 unimplemented).
// Internal to the runtime.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/library.h"

namespace autofuse::runtime {

/// One cached primitive and its memory objects (their data handles are set
/// per execution). `bias` is empty when the problem has none.
struct DnnlEntry {
  dnnl::primitive prim;
  dnnl::memory src, weights, bias, dst, scratchpad;
  size_t scratchpad_bytes = 0;
  bool staged_f32 = false;  ///< f16 / bf16 computed through f32 copies
};

/// A matmul primitive's dims: nd = merged batch rank + 2 (library_matmul.cpp).
inline constexpr int kMaxDnnlMatmulRank = 5;
struct MatmulKey {
  DType dtype = DType::f32;
  int nd = 0;
  std::array<int64_t, kMaxDnnlMatmulRank> a{}, b{};
  auto operator<=>(const MatmulKey&) const = default;
};

/// A convolution primitive's geometry (library_conv.cpp): k spatial axes.
struct ConvKey {
  DType dtype = DType::f32;
  int k = 0;
  int64_t batch = 0, channels = 0, out_channels = 0, group = 1;
  bool bias = false;
  std::array<int64_t, 3> in{}, kernel{}, out{}, strides{}, dilations{}, pad_begin{}, pad_end{};
  auto operator<=>(const ConvKey&) const = default;
};

struct DnnlCache::Impl {
  const dnnl::engine* engine = nullptr;
  std::optional<dnnl::stream> stream;
  std::map<MatmulKey, DnnlEntry> matmuls;
  std::map<ConvKey, DnnlEntry> convs;

  /// The engine and stream, created on first use.
  void start();
  /// The cached entry for `key`, else one made by `create(compute dtype)`:
  /// first in `dtype`, then (f16/bf16 that oneDNN does not implement here)
  /// in f32 with staged_f32 set. `describe()` names the problem in an
  /// internal error if oneDNN refuses both (called only then).
  template <class Key, class Create, class Describe>
  DnnlEntry& get(std::map<Key, DnnlEntry>& entries, const Key& key, DType dtype, Create&& create,
                 Describe&& describe) {
    if (auto it = entries.find(key); it != entries.end()) return it->second;
    start();
    return entries.emplace(key, create_with_fallback(dtype, create, describe)).first->second;
  }

 private:
  DnnlEntry create_with_fallback(DType dtype, const std::function<DnnlEntry(DType)>& create,
                                 const std::function<std::string()>& describe);
};

/// The CPU engine: created once, immutable afterwards. Sharing it lets
/// oneDNN's own primitive cache (keyed by engine) serve contexts without a
/// DnnlCache, instead of generating kernels again.
const dnnl::engine& cpu_engine();
dnnl::memory::data_type dnnl_type(DType dt);
/// Dense row-major strides (a size-1 dim gets the stride it would have).
dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims, dnnl::memory::data_type dt);
/// The entry's memory objects for `pd` (its src/weights/bias/dst descs,
/// no data yet) and its user-managed scratchpad.
template <class PrimitiveDesc>
DnnlEntry make_entry(const PrimitiveDesc& pd, const dnnl::engine& engine, bool bias) {
  DnnlEntry e;
  e.src = dnnl::memory(pd.src_desc(), engine, DNNL_MEMORY_NONE);
  e.weights = dnnl::memory(pd.weights_desc(), engine, DNNL_MEMORY_NONE);
  if (bias)
    e.bias = dnnl::memory(pd.query_md(dnnl::query::weights_md, 1), engine, DNNL_MEMORY_NONE);
  e.dst = dnnl::memory(pd.dst_desc(), engine, DNNL_MEMORY_NONE);
  e.scratchpad_bytes = pd.scratchpad_desc().get_size();
  if (e.scratchpad_bytes > 0)
    e.scratchpad = dnnl::memory(pd.scratchpad_desc(), engine, DNNL_MEMORY_NONE);
  return e;
}
/// Runs the entry's primitive on the given buffers (bias null when the
/// entry has none) and waits for it.
void execute(DnnlCache::Impl& cache, DnnlEntry& e, const void* src, const void* weights,
             const void* bias, void* dst, void* scratchpad);

inline size_t align64(size_t bytes) {
  return (bytes + 63) / 64 * 64;
}
/// n values of `dt` (f16 or bf16) to f32, and back (rounded to nearest even).
void half_to_f32_n(DType dt, const void* src, float* dst, int64_t n);
void f32_to_half_n(DType dt, const float* src, void* dst, int64_t n);

}  // namespace autofuse::runtime
