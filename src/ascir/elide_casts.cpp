// Mixed precision inside a kernel: f16, bf16 and f32 all compute in f32, so
// a Cast between two of them only rounds. Values stay f32 inside the kernel
// and are rounded once, when a Store converts to the output's dtype.
// Casts to and from float8 stay: with 2-3 mantissa bits the rounding is
// most of the value, and a cast may saturate where a store does not.
#include "autofuse/ascir/lower.h"

namespace autofuse::ascir {

namespace {
bool computes_in_f32(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16;
}
}  // namespace

bool elide_casts(AscGraph& graph) {
  // replacement[i]: the new id of node i, or of what replaces it.
  std::vector<int> replacement(graph.nodes.size(), -1);
  std::vector<AscNode> kept;
  for (AscNode& n : graph.nodes) {
    for (int& in : n.inputs)
      in = replacement.at(static_cast<size_t>(in));
    if (n.kind == AscKind::Cast && computes_in_f32(n.dtype) &&
        computes_in_f32(kept.at(static_cast<size_t>(n.inputs[0])).dtype)) {
      replacement[static_cast<size_t>(n.id)] = n.inputs[0];
      continue;
    }
    replacement[static_cast<size_t>(n.id)] = static_cast<int>(kept.size());
    n.id = static_cast<int>(kept.size());
    kept.push_back(std::move(n));
  }
  const bool changed = kept.size() != graph.nodes.size();
  graph.nodes = std::move(kept);
  if (changed) verify(graph);
  return changed;
}

}  // namespace autofuse::ascir
