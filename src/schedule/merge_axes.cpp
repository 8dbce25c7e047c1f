// Axis merge (AutoFuse's MergeContinuousAxis): adjacent loop axes collapse
// into one when every node walks them as one contiguous range, so loops get
// fewer levels and longer inner trip counts.
#include "autofuse/schedule/schedule.h"

namespace autofuse::schedule {

namespace {

using ascir::AscGraph;
using ascir::AscKind;
using ascir::AscNode;

const sym::Expr kOne(1);

// Nodes with per-axis strides (a Gather's gathered part, index *
// gather_stride, does not depend on the loop axes: merging leaves it alone).
bool is_strided(const AscNode& n) {
  return n.kind == AscKind::Load || n.kind == AscKind::Gather || n.kind == AscKind::Store;
}

// Whether node `n` allows merging axes i and i+1. An axis of size 1 merges
// with anything (it contributes no iteration); otherwise both axes must be
// constant for the node, or both vary and (for buffers) be contiguous.
bool node_allows(const AscGraph& g, const AscNode& n, size_t i) {
  const sym::Expr& size_i = g.axes[i].size;
  const sym::Expr& size_j = g.axes[i + 1].size;
  if (size_i == kOne || size_j == kOne) return true;
  const bool full_i = n.view.repeats[i] != kOne;
  const bool full_j = n.view.repeats[i + 1] != kOne;
  if (full_i != full_j) return false;
  if (!full_i || !is_strided(n)) return true;
  return sym::proven_eq(n.view.strides[i], n.view.strides[i + 1] * size_j);
}

bool can_merge(const AscGraph& g, size_t i) {
  if (g.axes[i].reduced != g.axes[i + 1].reduced) return false;
  for (const AscNode& n : g.nodes)
    if (!node_allows(g, n, i)) return false;
  return true;
}

template <typename T>
void erase_at(std::vector<T>& v, size_t i) {
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
}

// Replaces axes i and i+1 by one (named after the outer one).
void merge(AscGraph& g, size_t i) {
  const sym::Expr size_i = g.axes[i].size;
  const sym::Expr size_j = g.axes[i + 1].size;
  const sym::Expr merged = size_i * size_j;
  for (AscNode& n : g.nodes) {
    auto& reps = n.view.repeats;
    const bool full = reps[i] != kOne || reps[i + 1] != kOne;
    if (is_strided(n)) {
      auto& strides = n.view.strides;
      // With a size-1 axis involved, the stride of the other axis survives;
      // otherwise the inner stride (the outer one is stride_j * size_j).
      sym::Expr stride = strides[i + 1];
      if (size_j == kOne) stride = strides[i];
      strides[i] = full ? stride : sym::Expr(0);
      erase_at(strides, i + 1);
    }
    // A node constant along both stays constant; otherwise it spans the
    // merged axis (a size-1 axis adds nothing to what it varies over).
    reps[i] = full ? merged : kOne;
    erase_at(reps, i + 1);
    if (n.kind == AscKind::Index && n.axis > static_cast<int>(i)) --n.axis;
  }
  g.axes[i].size = merged;
  erase_at(g.axes, i + 1);
}

}  // namespace

bool merge_axes(ascir::AscGraph& graph) {
  bool changed = false;
  for (bool merged_any = true; merged_any;) {
    merged_any = false;
    for (size_t i = 0; i + 1 < graph.axes.size();) {
      if (can_merge(graph, i)) {
        merge(graph, i);
        merged_any = changed = true;
      } else {
        ++i;
      }
    }
  }
  if (changed) ascir::verify(graph);
  return changed;
}

}  // namespace autofuse::schedule
