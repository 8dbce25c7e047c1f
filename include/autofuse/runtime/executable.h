// The runtime: an Executable is a graph compiled once for its symbolic
// shapes. run() binds the symbols from the inputs, checks the guards, sizes
// the memory plan (once per distinct shape; buffers reused across runs),
// calls each kernel's tiling function (cached per shape) and launches its
// blocks on the thread pool; library regions (matmul, data movement) run
// their implementations; views alias. bare_calls() gives the kernels of a
// run without any of that around them, to measure what it costs.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "autofuse/fuse/fusion.h"
#include "autofuse/jit/compiler.h"
#include "autofuse/ref/tensor.h"

namespace autofuse::runtime {

struct CompileOptions {
  fuse::FusionConfig fusion;  ///< fusion.enabled = false gives the unfused path
  jit::CompilerOptions compiler;
  int threads = 0;       ///< 0: one per core
  std::string dump_dir;  ///< empty: $AUTOFUSE_DUMP, else no dumps
};

/// Per-pass timings and outcome of a compile (for reports and --json).
struct CompileReport {
  int kernels = 0;   ///< generated loop nests (Kernel regions)
  int launches = 0;  ///< kernel launches per run: kernel groups (fuse::KernelGroup)
  jit::CompileStats jit;
  std::vector<std::pair<std::string, double>> pass_seconds;  ///< in pipeline order
};

/// The calls of one run's kernels and library ops, prepared for one shape
/// (Executable::bare_calls).
class BareCalls {
 public:
  virtual ~BareCalls() = default;
  /// Calls every block of every kernel launch, and every library op, of one
  /// run, in program order, all on the calling thread; checks nothing.
  virtual void call() = 0;
};

class Executable {
 public:
  /// Runs the whole compile pipeline (see src/runtime/pipeline.cpp).
  static std::unique_ptr<Executable> build(std::shared_ptr<const Graph> graph,
                                           const CompileOptions& options);
  virtual ~Executable() = default;

  /// Runs on the inputs (graph-input order); returns the outputs. UserError
  /// on wrong inputs (count, dtype, rank, sizes, guards), like bind_symbols.
  virtual std::vector<HostTensor> run(std::span<const HostTensor> inputs) = 0;
  /// Runs into caller-owned outputs of the right types and shapes (no
  /// allocation once this shape has run before): the benchmark path.
  virtual void run_into(std::span<const HostTensor> inputs, std::span<HostTensor> outputs) = 0;

  /// The bare calls of run_into(inputs, outputs) (docs/benchmarks.md, "bare
  /// call cost"): runs run_into once (so it checks the inputs and throws as
  /// it does), then prepares the kernel functions' calls for this shape: the
  /// tiling data computed, intermediates and workspaces allocated (their own,
  /// not the run's), every pointer set. They read `inputs` and write
  /// `outputs`, which must outlive them, as must this Executable. The first
  /// call also creates oneDNN matmul primitives: time the ones after it.
  virtual std::unique_ptr<BareCalls> bare_calls(std::span<const HostTensor> inputs,
                                                std::span<HostTensor> outputs) = 0;

  virtual const fuse::FusedGraph& fused() const = 0;
  virtual const CompileReport& report() const = 0;
};

}  // namespace autofuse::runtime
