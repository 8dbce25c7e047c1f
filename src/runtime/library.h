// Runtime library implementations of the ops that are not generated
// kernels (yet): matmul, the data movement ops, and the creation of
// constants and iotas. They work on raw buffers described by TensorView and
// take the thread pool for large work. Semantics are those of graph/ops.h
// (the reference interpreter is the oracle in the tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "autofuse/graph/graph.h"
#include "runtime/thread_pool.h"

namespace autofuse::runtime {

/// Contiguous row-major tensor in runtime memory (not owned).
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::span<const int64_t> shape;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
};

/// A growable, 64-byte aligned scratch buffer that keeps its memory between
/// uses (no allocation once it is large enough).
class Scratch {
 public:
  Scratch() = default;
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  /// At least `bytes` bytes, 64-byte aligned; earlier contents are lost on growth.
  void* get(size_t bytes);
  size_t capacity() const { return capacity_; }

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

/// oneDNN state for library_matmul and library_conv: the CPU engine, a
/// stream and one primitive per problem (dims, broadcast pattern or conv
/// geometry, dtype) seen so far, so a shape that ran before creates nothing.
/// One per Executable; not thread-safe (an Executable runs one call at a
/// time). Defined in dnnl_support.h/.cpp.
class DnnlCache {
 public:
  DnnlCache();
  ~DnnlCache();
  DnnlCache(const DnnlCache&) = delete;
  DnnlCache& operator=(const DnnlCache&) = delete;
  /// Primitives created so far (for tests).
  int size() const;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// What library ops may use: the pool (blocks of >= min_block_bytes moved)
/// and per-thread scratch.
struct LibraryContext {
  ThreadPool& pool;
  Scratch& scratch;
  int64_t min_block_bytes;
  /// Primitive cache for matmul and conv; null: a temporary one per call
  /// (correct, but it creates the oneDNN primitive every time).
  DnnlCache* dnnl_cache = nullptr;
};

/// NumPy matmul (rank >= 2, batch dims broadcast) for f32/f64/f16/bf16:
/// oneDNN's matmul primitive for f32 and bf16 (and f16 through f32 staging
/// where oneDNN lacks an f16 kernel for the CPU), f32 accumulation, rounded
/// to the dtype once per element; a plain loop over the pool for f64
/// (oneDNN has no f64 matmul). oneDNN threads with its own OpenMP runtime.
/// Bounds the OpenMP team oneDNN uses (Debian's libdnnl runs on OpenMP, not
/// on our pool) to `threads` for the calling thread while alive.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int threads);
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;
  /// The calling thread's current team bound (omp_get_max_threads).
  static int current();

 private:
  int saved_;
};

void library_matmul(const TensorView& a, const TensorView& b, const TensorView& out,
                    LibraryContext& ctx);
/// ONNX Conv (attributes normalized by inference; `bias` null when absent)
/// for f32/f64/f16/bf16, 1 to 3 spatial axes: oneDNN's convolution for f32
/// and bf16 (f16 through f32 staging where oneDNN lacks a kernel), a plain
/// loop over the pool for f64.
void library_conv(const TensorView& x, const TensorView& w, const TensorView* bias,
                  const ConvAttrs& attrs, const TensorView& out, LibraryContext& ctx);

/// out[i...] = x[perm-permuted i...].
void library_transpose(const TensorView& x, std::span<const int64_t> perm, const TensorView& out,
                       LibraryContext& ctx);
void library_slice(const TensorView& x, const SliceAttrs& attrs, const TensorView& out,
                   LibraryContext& ctx);
void library_concat(std::span<const TensorView> xs, int64_t axis, const TensorView& out,
                    LibraryContext& ctx);
void library_split(const TensorView& x, int64_t axis, std::span<const TensorView> outs,
                   LibraryContext& ctx);
/// ONNX Gather. UserError (without location) on an index out of range,
/// before any data moves.
void library_gather(const TensorView& data, const TensorView& indices, int64_t axis,
                    const TensorView& out, LibraryContext& ctx);
/// A copy between equal-sized contiguous buffers (parallel when large).
void library_copy(void* dst, const void* src, size_t bytes, LibraryContext& ctx);

/// Fills `out` with the constant's values (a splat is rounded once).
void fill_constant(const ConstantAttrs& attrs, const TensorView& out);
/// Fills `out` with its index along `axis`.
void fill_iota(int64_t axis, const TensorView& out);

/// Runs a Library (or creation) node on views of its inputs and outputs.
/// UserErrors from the op get the node's name and op as their location.
void run_library_node(const Graph& graph, const Node& node, std::span<const TensorView> inputs,
                      std::span<const TensorView> outputs, LibraryContext& ctx);

/// Whether run_library_node implements the op.
bool has_library_impl(OpKind op);

}  // namespace autofuse::runtime
