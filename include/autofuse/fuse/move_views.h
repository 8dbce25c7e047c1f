// move_views: the graph rewrite before fuse::partition that moves data
// movement ops to the region boundary (docs/data-movement-fusion.md,
// "Principle: movement ops move to the region boundary").
//
// Fusion absorbs a slice or split only on the read side (its input reachable
// from a region input through movement ops) and a concat only on the write
// side (its output only stored). So this pass moves
//  * slices and splits towards the graph inputs: slice(ew(a, b)) becomes
//    ew(slice a, slice b), also through broadcast_to and transpose; and
//  * concats towards the graph outputs: ew(concat(a1, a2), c) becomes
//    concat(ew(a1, c1), ew(a2, c2)) with c split at the same points;
//    a reduction below a concat becomes per-piece reductions (concatenated,
//    or combined elementwise when the concat axis is reduced).
// Rewrites are small functions applied to a fixed point. Results stay equal
// up to float rounding (combined reductions add in another order).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autofuse/graph/graph.h"

namespace autofuse::fuse {

struct MoveViewsResult {
  /// The rewritten graph: same name, inputs (names, order, types) and
  /// outputs (names, order, types); nodes no output needs are dropped. The
  /// input graph itself when nothing was rewritten.
  std::shared_ptr<const Graph> graph;
  int rewrites = 0;  ///< rewrites applied in all
  /// Rewrites applied per rewrite name (e.g. "hoist_slice_over_elementwise"),
  /// in first-applied order.
  std::vector<std::pair<std::string, int>> by_rewrite;
};

/// Runs the rewrites to a fixed point (deterministic).
MoveViewsResult move_views(std::shared_ptr<const Graph> graph);

}  // namespace autofuse::fuse
