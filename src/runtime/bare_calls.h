// The bare calls of a program for one shape (docs/benchmarks.md, "bare call
// cost"): its kernel functions called directly, every block of every launch
// in order on the calling thread, and its library ops called on prebuilt
// views, with the tiling data and every buffer prepared beforehand. What
// Executable::run_into adds around them (symbol binding, guard and status
// checks, the shape lookup, the thread pool) is the runtime overhead that
// `autofuse bench` reports. The Executable fills a BareCallList (see
// ExecutableImpl::bare_calls); this file knows nothing of its plan.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "autofuse/codegen/kernel_abi.h"
#include "autofuse/runtime/executable.h"
#include "runtime/library.h"
#include "runtime/program.h"
#include "runtime/thread_pool.h"

namespace autofuse::runtime {

class BareCallList final : public BareCalls {
 public:
  /// `arena_bytes`: the intermediates and workspaces of one run (arena()).
  BareCallList(std::shared_ptr<const Graph> graph, int64_t arena_bytes, int64_t min_block_bytes);

  /// The arena the added steps' intermediate and workspace pointers point into.
  char* arena() { return static_cast<char*>(arena_.get(arena_bytes_)); }

  /// A kernel: blocks [0, blocks) in order (all its launches; one thread runs
  /// launch p + 1 after launch p). `args`: inputs, outputs, workspace; the
  /// status slot is added here (kernels with gathers write it; nobody reads it).
  void add_kernel(KernelFn kernel, std::span<const uint64_t> tiling, std::span<void* const> args,
                  int64_t blocks);
  /// A library (or creation) node of the graph on views of its values.
  void add_library(const Node& node, std::span<const TensorView> inputs,
                   std::span<const TensorView> outputs);
  /// An output that aliases another value: a copy after the steps.
  void add_copy(void* dst, const void* src, size_t bytes);

  void call() override;

 private:
  struct KernelStep {
    KernelFn kernel;
    size_t tiling;  // offset into tiling_ (in words)
    size_t args;    // offset into args_
    int64_t blocks;
  };
  struct LibraryStep {
    const Node* node;
    std::vector<TensorView> inputs, outputs;  // shapes in shapes_
  };
  struct CopyStep {
    void* dst;
    const void* src;
    size_t bytes;
  };
  enum class Kind : uint8_t { Kernel, Library, Copy };
  struct Step {
    Kind kind;
    size_t index;  // into kernels_, libraries_ or copies_
  };

  TensorView own_view(const TensorView& v);

  std::shared_ptr<const Graph> graph_;
  size_t arena_bytes_;
  Scratch arena_;
  std::vector<uint64_t> tiling_;  // every kernel's tiling data, one after the other
  std::vector<void*> args_;       // every kernel's args, one after the other
  af_status status_{};
  std::vector<Step> steps_;
  std::vector<KernelStep> kernels_;
  std::vector<LibraryStep> libraries_;
  std::vector<CopyStep> copies_;
  std::vector<std::unique_ptr<std::vector<int64_t>>> shapes_;  // stable storage for views
  // Library ops run on a pool of one thread (its launches run inline) with
  // their own matmul primitives and scratch.
  ThreadPool pool_{1};
  Scratch scratch_;
  DnnlCache dnnl_cache_;
  LibraryContext context_;
};

}  // namespace autofuse::runtime
