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
/// seed). Floats uniform in [-1, 1); integers in [-8, 8]; bools fair coins.
/// An integer input used as gather indices gets values valid for every
/// gather that reads it, so the reference run is well defined.
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
