// Loop-axis mapping (AutoFuse's axis mapping in CanFuse): finds one
// iteration space shared by a set of nodes, or says why there is none.
//
// Every dim of every value the nodes read or write maps to one loop axis.
// Elementwise ops tie output dims to input dims right-aligned (an input dim
// of literal size 1 broadcasts along the output's axis); reductions tie kept
// dims to the output's dims (keepdims or not) and mark their reduced dims'
// axes as reduced. The loop axes are ordered outer-to-inner so that, for
// every value, its dims appear in the same relative order (row-major layouts
// then walk the inner axis contiguously); no such order (a transpose in
// disguise) means no mapping. All dims on one axis must have a size proven
// equal (after ShapeEnv::canonicalize) or be literal 1 (broadcast).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "autofuse/fuse/fusion_decision.h"
#include "autofuse/graph/graph.h"

namespace autofuse::fuse {

struct LoopAxes {
  std::vector<sym::Expr> sizes;  ///< per loop axis, outer to inner
  std::vector<bool> reduced;     ///< per loop axis: reduced by the region's reductions
  /// For each value the region maps onto its loop axes (every value it
  /// computes or stores, and every input it reads whole): the loop axis of
  /// each of its dims. A dim whose size is literal 1 while its axis is
  /// larger is a broadcast (its extent along the axis is 1). Values read
  /// only through view leaves (fuse/view_ops.h: a sliced input, a gathered
  /// table) and concat outputs (stored piece by piece) have no entry.
  std::map<ValueId, std::vector<int>> value_axes;

  int num_axes() const { return static_cast<int>(sizes.size()); }
  /// "[N, D]; reduce [1]"
  std::string to_string() const;
};

/// Maps the nodes (a candidate region, topological order) onto common loop
/// axes. `outputs` are the values the region must store (graph outputs and
/// values read outside it). Fills `out` when allowed; else refuses with the
/// reason (e.g. "reductions over different axes", "slice 's' reads 'y',
/// which the region computes").
FusionDecision map_loop_axes(const Graph& graph, const std::vector<NodeId>& nodes,
                             const std::vector<ValueId>& outputs, LoopAxes& out);
/// The same, with the outputs found by scanning the graph's other nodes.
FusionDecision map_loop_axes(const Graph& graph, const std::vector<NodeId>& nodes, LoopAxes& out);
/// The values produced by `nodes` that are graph outputs or read by other nodes.
std::vector<ValueId> region_outputs(const Graph& graph, const std::vector<NodeId>& nodes);

}  // namespace autofuse::fuse
