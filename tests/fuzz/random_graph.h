// A generator of random fusible graphs for the fuzz test: several
// independent subgraphs per graph (one compile builds all their kernels),
// each a random chain over a base shape of rank 1..5 whose dims are shared
// symbols (A..F) or small literals (in one subgraph in five a wide literal
// innermost dim, 64..1024: static rows), so broadcasting and reductions line up
// without guards. Deterministic from the seed: subgraph k draws from its own
// stream, so `random_graph(seed, options, k)` rebuilds it alone for replay.
//
// Values stay comparable with the reference by construction (see
// random_ops.cpp): magnitudes tracked as intervals and squashed before they
// can overflow f16 or cancel badly, log/sqrt/div/pow only on values bounded
// away from 0, discontinuous ops (floor, compares, mod, ...) only on values
// that kernel and reference hold bit-identically, sums only over values that
// are non-negative (relative error) or small integers (exact).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autofuse/graph/graph.h"
#include "autofuse/sym/expr.h"

namespace autofuse::fuzz {

// Known bugs the generator steers around so that CI stays green: none now.
// The broadcast diamond (a broadcast-shaped or one-element value read by two
// chains that join again split a kernel in two) was fixed in session 4: a
// kernel read only by one other kernel merges into it once the greedy pass
// is done (partition.cpp, merge_into_sole_consumers).

struct GenOptions {
  int subgraphs = 8;
  int min_steps = 2;  ///< random steps per subgraph (a step adds 1..~8 nodes)
  int max_steps = 7;
  bool reductions = true;
  bool data_movement = true;  ///< transpose, reshape, slice, concat, split, gather, broadcast_to
  /// Elementwise ops only, every output spanning the subgraph's full shape:
  /// such a subgraph must compile to exactly one kernel.
  bool elementwise_only = false;
};

/// What the comparison needs to know about one graph output.
struct OutputSpec {
  int subgraph = 0;
  /// The coarsest float type any op on the way rounded to (f32 < f16 < bf16):
  /// the tolerance follows it, not the output's dtype.
  DType rounding = DType::f32;
  /// Largest operand magnitude entering an add/sub (a cancellation) on the
  /// way, at least 1: absolute errors scale with it.
  double scale = 1;
  /// Kernel and reference must agree bit for bit (only exact ops on the
  /// inputs: data movement, neg/abs/max/where, floor of x*4, compares, ...).
  bool exact = false;
};

struct RandomGraph {
  std::shared_ptr<const Graph> graph;
  std::vector<OutputSpec> outputs;  ///< one per graph output
  std::vector<Shape> base_shapes;   ///< one per subgraph built
};

/// The most elements any value may have under random_binding(); the
/// generator's range reasoning (f16 sums, exact integer sums) assumes it.
inline constexpr int64_t kMaxElements = int64_t{1} << 19;

/// Builds the graph for `seed`; `only_subgraph` >= 0 builds just that one
/// (same nodes as inside the whole graph, for a smaller replay).
RandomGraph random_graph(uint64_t seed, const GenOptions& options, int only_subgraph = -1);

/// Random sizes for every symbol of the graph: 1, primes (3, 7, 13, 31, 97),
/// odd tails (65, 1023) and a few larger ones, shrunk until no value of the
/// graph has more than `max_elements` (<= kMaxElements) elements, or until
/// every symbol that could shrink is 1 (literal dims alone may exceed a tiny cap).
sym::Binding random_binding(const RandomGraph& graph, uint64_t seed, int64_t max_elements);

/// splitmix64: small, fast, the same everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n).
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  /// Uniform in [lo, hi].
  int between(int lo, int hi) { return lo + below(hi - lo + 1); }
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1p-53 < p; }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(below(static_cast<int>(items.size())))];
  }

 private:
  uint64_t state_;
};

/// Mixes a seed with an index (independent streams per subgraph, binding...).
uint64_t mix_seed(uint64_t seed, uint64_t index);

}  // namespace autofuse::fuzz
