// Scheduling of one AscGraph: axis merge, template choice, and the passes
// over the reduced axes. The result is what codegen emits and what the
// tiling function sizes.
//
// Templates (see docs/pipeline.md):
//  * Elementwise: no reductions. Blocks take contiguous chunks of the
//    flattened iteration space; the innermost axis is the vector loop.
//  * Reduction: kept axes outer (blocks split their flattened index space,
//    "rows"), reduced axes inner. Each row runs `num_passes` loops over its
//    reduced axes; a pass computes the nodes it needs (elementwise nodes are
//    recomputed in each pass that needs them instead of being buffered: the
//    row stays cache-resident, so global memory is read once when it fits
//    the cache; longer rows are simply read once per pass; in the row layout an
//    expensive value several passes need is kept in a row buffer instead,
//    codegen/cpu/row_buffers.cpp). Nodes constant
//    along all reduced axes ("row nodes": reduction results and what depends
//    only on them) are computed once per row between passes.
//    Two layouts, chosen by which axis memory is contiguous along (the last
//    axis whose size is not the literal 1):
//    - row layout (tile_axis = -1), the last axis is reduced: the last
//      reduced loop is the vector loop (softmax, layernorm);
//    - column layout (tile_axis >= 0), the last axis is kept: that axis is
//      walked in tiles of W elements (W from the tiling function) and is the
//      vector loop, inside the loops over the reduced axes; accumulators and
//      row nodes that vary along it ("tile vectors", e.g. a column mean) are
//      W-wide local arrays (batch-norm statistics, a sum over a middle axis).
//    Either layout may be split by the tiling function when the rows are too
//    few for the cores: the outermost reduced axis is cut into segments, each
//    segment a work unit of its own, and the kernel runs as split_phases()
//    launches (kernel_abi.h): launch p runs pass p over every segment and
//    leaves per-segment partial results in a workspace; later launches
//    combine them in segment order (deterministic).
#pragma once

#include <string>
#include <vector>

#include "autofuse/ascir/asc_graph.h"

namespace autofuse::schedule {

enum class Template : uint8_t { Elementwise, Reduction };

/// A centered second moment, sum or mean of (x - mean(x))^2 over the
/// reduced axes (batch-norm's variance), that runs in the pass of mean(x)
/// instead of the pass after it (centered_moments.cpp): the pass walks the
/// reduced axes in blocks (column layout: rows that fit the L2; row layout:
/// the mean's chunks of the last reduced axis, in the L1), and after each
/// block's loop a second loop over the same block, read from the cache,
/// sums the squares about the block's own mean; the blocks' moments merge by
/// Chan, Golub and LeVeque's formula. The data is then read from memory once
/// for both.
struct CenteredMoment {
  int mean = -1;    ///< the ReduceMean of x
  int moment = -1;  ///< the ReduceSum or ReduceMean of (x - mean)^2
  int center = -1;  ///< the Broadcast of `mean` that the square's Sub reads
};

struct ScheduledKernel {
  ascir::AscGraph graph;  ///< after merge_axes
  Template kind = Template::Elementwise;
  /// Elementwise: every axis but the last. Reduction: the kept axes, outer
  /// to inner (blocks split their flattened index space; in the column
  /// layout the tile axis is one of them and contributes tiles).
  std::vector<int> outer_axes;
  std::vector<int> inner_axes;  ///< Elementwise: {last axis}; Reduction: the reduced axes
  /// Reduction only: -1 for the row layout; else the kept axis that the
  /// column layout walks in tiles, innermost and vectorized (a member of
  /// outer_axes). Elementwise: -1.
  int tile_axis = -1;
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
  /// Reduction only: Reduces computed as centered moments, in the pass of
  /// their mean (node_pass[moment] == node_pass[mean]).
  std::vector<CenteredMoment> moments;

  /// The moment whose `moment` Reduce is node `id`, or null.
  const CenteredMoment* moment_of(int id) const;

  /// The kept axes other than the tile axis, outer to inner (the rows).
  std::vector<int> row_axes() const;
};

/// Merges adjacent loop axes wherever every node's view allows it (same
/// reduced-ness; for each node both axes full with stride[a] ==
/// stride[b] * size[b], or both repeat 1; an axis of literal size 1 merges
/// with either neighbor). The merged axis keeps the outer name; Index nodes
/// move with their axis. Returns true if it merged.
bool merge_axes(ascir::AscGraph& graph);

/// Chooses the template and layout and assigns passes. Runs merge_axes first.
ScheduledKernel schedule_kernel(ascir::AscGraph graph);

/// The centered moments of a scheduled kernel whose passes are assigned
/// without them: the column layout with one reduced axis of a literal tile
/// width of at least 64 (narrower tiles fold rows, which the moment loop
/// does not), or the row layout with two or more reduced axes, the last a
/// literal of at least 1024; x varying along every reduced axis (and the
/// tile) and cheap to compute twice (no transcendental, at most 8 vector
/// instructions per vector); a float ReduceMean m of x in pass p and a float ReduceSum or
/// ReduceMean of Mul(d, d), d = Sub(x, Broadcast(m)) or Sub(Broadcast(m),
/// x), in pass p + 1 (centered_moments.cpp).
std::vector<CenteredMoment> find_centered_moments(const ScheduledKernel& kernel);

/// Launches a split Reduction runs: one per pass, plus one when row nodes
/// finished by the last pass are stored (the combine of its partials).
/// 0 for Elementwise.
int split_phases(const ScheduledKernel& kernel);

/// Text form for dumps: the AscGraph plus template, axes split and passes:
///   schedule reduction outer[z0] inner[z1] passes 3
///     %4 mean: reduce 0        (Reduce computed in pass 0)
///     %9 var_eps: row 2        (row node, after 2 passes)
///     %12 xn: pass 2           (first pass computing it)
///                              (a node only centered moments read, their
///                              square, keeps the pass after its mean's,
///                              where nothing computes it: their loop does)
///     %10 var: reduce 0 moment of %6 center %7   (a CenteredMoment)
/// The column layout names its tile axis after the inner axes:
///   schedule reduction outer[z1] inner[z0] tile[z1] passes 3
std::string print_schedule(const ScheduledKernel& kernel);

}  // namespace autofuse::schedule
