// Scheduling of one AscGraph: axis merge, template choice, and the passes
// over the reduced axes. The result is what codegen emits and what the
// tiling function sizes.
//
// Templates (see docs/architecture.md):
//  * Elementwise: no reductions. Blocks take contiguous chunks of the
//    flattened iteration space; the innermost axis is the vector loop.
//  * Reduction: kept axes outer (blocks split their flattened index space,
//    "rows"), reduced axes inner. Each row runs `num_passes` loops over its
//    reduced axes; a pass computes the nodes it needs (elementwise nodes are
//    recomputed in each pass that needs them instead of being buffered: the
//    row stays cache-resident, so global memory is read once when it fits
//    the cache; longer rows are simply read once per pass). Nodes constant
//    along all reduced axes ("row nodes": reduction results and what depends
//    only on them) are computed once per row between passes.
#pragma once

#include <string>
#include <vector>

#include "autofuse/ascir/asc_graph.h"

namespace autofuse::schedule {

enum class Template : uint8_t { Elementwise, Reduction };

struct ScheduledKernel {
  ascir::AscGraph graph;  ///< after merge_axes
  Template kind = Template::Elementwise;
  std::vector<int> outer_axes;  ///< loop axes split across blocks, outer to inner
  std::vector<int> inner_axes;  ///< Elementwise: {last axis}; Reduction: the reduced axes
  /// Reduction only, per node id: for nodes that vary along a reduced axis,
  /// the first pass that can compute them (0-based); for row nodes, the
  /// number of passes that must finish before them (0 = before the first
  /// pass). A Reduce (a row node by its repeats) holds the pass that
  /// computes it: its result is usable from pass node_pass + 1 on. Data and
  /// Output nodes: 0. Elementwise: all 0.
  std::vector<int> node_pass;
  std::vector<bool> is_row_node;  ///< Reduction only (else all false), per node id:
                                  ///< repeats 1 on every reduced axis
  int num_passes = 0;             ///< Reduction only (>= 1); Elementwise: 0
};

/// Merges adjacent loop axes wherever every node's view allows it (same
/// reduced-ness; for each node both axes full with stride[a] ==
/// stride[b] * size[b], or both repeat 1; an axis of literal size 1 merges
/// with either neighbor). The merged axis keeps the outer name; Index nodes
/// move with their axis. Returns true if it merged.
bool merge_axes(ascir::AscGraph& graph);

/// Chooses the template and assigns passes. Runs merge_axes first.
ScheduledKernel schedule_kernel(ascir::AscGraph graph);

/// Text form for dumps: the AscGraph plus template, axes split and passes:
///   schedule reduction outer[z0] inner[z1] passes 3
///     %4 mean: reduce 0        (Reduce computed in pass 0)
///     %9 var_eps: row 2        (row node, after 2 passes)
///     %12 xn: pass 2           (first pass computing it)
std::string print_schedule(const ScheduledKernel& kernel);

}  // namespace autofuse::schedule
