#include "tools/compare.h"

#include <cmath>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "autofuse/error.h"

namespace autofuse::tools {

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return {1e-5, 1e-4};
    case DType::f64:
      return {1e-12, 1e-10};
    case DType::f16:
      return {1e-2, 1e-2};
    case DType::bf16:
      return {6e-2, 6e-2};
    case DType::f8e4m3fn:
    case DType::f8e4m3fnuz:
      return {0.25, 0.25};
    case DType::f8e5m2:
    case DType::f8e5m2fnuz:
      return {0.5, 0.5};
    default:
      return {0, 0};
  }
}

Tolerance tolerance_for_output(const Graph& graph, ValueId value) {
  const DType dtype = graph.value(value).type.dtype;
  if (!is_integer(dtype)) return tolerance_for(dtype);
  std::vector<ValueId> todo = {value};
  std::unordered_set<ValueId> seen = {value};
  while (!todo.empty()) {
    const Value& v = graph.value(todo.back());
    todo.pop_back();
    if (v.producer == kNoNode) continue;
    const Node& node = graph.node(v.producer);
    if (node.op == OpKind::Cast && is_float(graph.value(node.inputs.at(0)).type.dtype) &&
        is_integer(v.type.dtype))
      return {1, 0};
    for (ValueId in : node.inputs)
      if (seen.insert(in).second) todo.push_back(in);
  }
  return tolerance_for(dtype);
}

Comparison compare(const HostTensor& got, const HostTensor& want, Tolerance tolerance) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    throw UserError(
        fmt::format("cannot compare {} with {}", got.type_string(), want.type_string()));
  Comparison c;
  const bool exact = !is_float(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i) {
    bool mismatch = false;
    if (exact) {
      int64_t g = got.get_i64(i), w = want.get_i64(i);
      double err = std::abs(static_cast<double>(g) - static_cast<double>(w));
      c.max_abs_err = std::max(c.max_abs_err, err);
      if (w != 0) c.max_rel_err = std::max(c.max_rel_err, err / std::abs(static_cast<double>(w)));
      mismatch = tolerance.atol == 0 ? g != w : err > tolerance.atol;
    } else {
      double g = got.get_f64(i), w = want.get_f64(i);
      if (std::isnan(w) || std::isnan(g)) {
        mismatch = std::isnan(w) != std::isnan(g);
      } else if (std::isinf(w) || std::isinf(g)) {
        mismatch = g != w;
      } else {
        double err = std::abs(g - w);
        c.max_abs_err = std::max(c.max_abs_err, err);
        if (w != 0) c.max_rel_err = std::max(c.max_rel_err, err / std::abs(w));
        mismatch = err > tolerance.atol + tolerance.rtol * std::abs(w);
      }
    }
    if (mismatch) {
      if (c.mismatches == 0) c.first_mismatch = i;
      ++c.mismatches;
    }
  }
  return c;
}

}  // namespace autofuse::tools
