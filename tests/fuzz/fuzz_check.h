// Compiles a random graph once, runs it on several shape bindings and
// compares every output with the reference interpreter; a failure comes
// back as a replayable report (seed, .af text, binding, output, element,
// got/want, and the `autofuse run ... --check` command).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autofuse/runtime/executable.h"
#include "fuzz/random_graph.h"

namespace autofuse::fuzz {

/// |got - want| <= atol + rtol * |want| per element.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

/// The tolerance of one output. Exact outputs (and non-float ones) must
/// match exactly. Otherwise the values `autofuse run --check` uses
/// (src/tools/compare.h) for the coarsest type the output's computation
/// rounded to (its dtype alone would understate a bf16 chain cast to f32),
/// with atol times the output's cancellation scale:
///  * f32 (atol 1e-5, rtol 1e-4): vectorized exp/tanh/erf are a few ulp
///    off libm, sums run in another order than the reference's f64 sums.
///  * f16 (1e-2, 1e-2) and bf16 (6e-2, 6e-2): the reference rounds after
///    every op, kernels once per store, so they drift apart by up to half
///    an ulp (2^-11 / 2^-8 relative) per op: 20 (f16) / 15 (bf16) ops in a
///    row fit. The generator's chains are a few dozen ops at most, most
///    of them with condition number <= 1, the rest <= 4 (log/div/pow
///    arguments >= 0.25, exp arguments <= 4), and errors of independent
///    roundings add like a random walk. After a cancellation the error is
///    relative to the operands, not to the result: hence atol times `scale`
///    (the largest |operand| of an add/sub on the way, at most 4; of a sin/cos
///    argument, at most 16; of a mean of signed values).
/// Measured: the worst error/tolerance ratio over ~40000 cases was 0.36.
Tolerance output_tolerance(const OutputSpec& spec, DType dtype);

/// Totals over checked graphs.
struct FuzzStats {
  int64_t graphs = 0;
  int64_t cases = 0;  ///< (subgraph, binding) pairs compared
  int64_t outputs = 0;
  int64_t elements = 0;
  int64_t kernels = 0;
  double compile_seconds = 0;  ///< Executable::build
  double run_seconds = 0;      ///< compiled runs
  double ref_seconds = 0;      ///< reference runs
  double worst_ratio = 0;      ///< max |got - want| / tolerance over non-exact elements
  std::string summary() const;
};

struct CheckOptions {
  bool fused = true;
  /// CompileOptions::threads: also the core count the tiling cost model
  /// splits blocks for (0: one per core); 3 or 5 give uneven block splits.
  int threads = 0;
  /// >= 0: every subgraph must compile to exactly this many kernels each
  /// (elementwise-only graphs: 1).
  int kernels_per_subgraph = -1;
  /// Test of the failure path itself: corrupts one element of the first
  /// non-empty compiled output after every run.
  bool tamper_for_test = false;
};

/// Checks `graph` (= random_graph(seed, gen)) under each binding (inputs
/// from random_inputs(graph, binding, binding index)). Returns one replayable
/// report per failing subgraph (empty: all matched); a compile failure is
/// one report.
std::vector<std::string> check_graph(uint64_t seed, const GenOptions& gen, const RandomGraph& graph,
                                     const std::vector<sym::Binding>& bindings,
                                     const CheckOptions& check, FuzzStats& stats);

}  // namespace autofuse::fuzz
