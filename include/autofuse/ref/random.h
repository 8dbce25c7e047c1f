// Seeded random inputs for a graph (the CLI's `run` and tests).
#pragma once

#include <cstdint>
#include <vector>

#include "autofuse/graph/graph.h"
#include "autofuse/ref/tensor.h"
#include "autofuse/sym/expr.h"

namespace autofuse {

/// Concrete shape of a type under a binding (UserError on an unbound symbol
/// or a negative size).
std::vector<int64_t> concrete_shape(const Shape& shape, const sym::Binding& binding);

/// One random tensor per graph input, deterministic for (graph, binding,
/// seed). Floats uniform in [-1, 1) (f16/bf16/float8: rounded toward zero,
/// so still inside); integers in [-8, 8] clipped to the dtype (unsigned:
/// [0, 8], i4: [-8, 7]); bools fair coins. Values come
/// from splitmix64 bits, identical on every platform. An integer input used
/// directly as gather indices gets values in [-size, size) for the smallest
/// gathered axis size over the gathers that read it (so the reference run
/// is well defined).
std::vector<HostTensor> random_inputs(const Graph& graph, const sym::Binding& binding,
                                      uint64_t seed);

/// A stable checksum of a tensor's values: sum of values in f64 and a hash
/// of the bytes (for "did the output change" comparisons).
struct Checksum {
  double sum = 0;
  double abs_sum = 0;
  uint64_t hash = 0;
};
Checksum checksum(const HostTensor& t);

}  // namespace autofuse
