// Movement ops inside a kernel region (docs/data-movement-fusion.md).
//
// Inside a kernel every value is an element per loop point, so a movement op
// either *ties* its input to the loop axes of its output (transpose and
// squeeze-like reshape of a computed value relabel axes; broadcast_to
// stretches; concat pieces share one iteration space and are stored at their
// offsets) or is a *view leaf*: its output is read from a buffer through a
// composed address (a Load whose strides and offset come from the chain of
// slices, splits, transposes, reshapes and broadcasts back to a region input;
// each gather on the chain adds one dynamic index, whose own dims walk loop
// axes of the leaf). A view leaf needs its input to be *walkable*: reachable
// from a value the region does not compute through movement ops only.
// fuse::map_loop_axes and ascir::lower_region both use this one
// classification.
#pragma once

#include <optional>
#include <vector>

#include "autofuse/fuse/fusion_decision.h"
#include "autofuse/graph/graph.h"

namespace autofuse::fuse {

/// transpose, reshape, slice, split, concat, gather (broadcast_to is not:
/// it has always been a kernel op that ties).
bool is_movement_op(OpKind op);

/// A reshape whose non-1 dims are the input's non-1 dims in order (it only
/// inserts or removes literal-1 dims).
bool is_squeeze_reshape(const Graph& graph, const Node& node);

/// One group of a reshape: input dims whose product equals the product of
/// output dims (literal-1 dims belong to no group).
struct ReshapeGroup {
  std::vector<int> in_dims;
  std::vector<int> out_dims;
};
/// The smallest groups of a reshape from `in` to `out`, in order; nullopt
/// when the products cannot be matched (symbolic sizes not provably equal).
std::optional<std::vector<ReshapeGroup>> reshape_groups(const sym::ShapeEnv& env, const Shape& in,
                                                        const Shape& out);
/// A reshape each of whose input dims becomes one or more output dims (no
/// merging): its input coordinates are affine in its output coordinates, so
/// it is a view of any view.
bool is_splitting_reshape(const Graph& graph, const Node& node);

/// A gather on the view chain of a leaf. Its indices are read at the loop
/// point: index dim j walks the loop axis of the leaf's output dim
/// leaf_dims[j] (-1: a literal-1 dim, on no loop axis of the leaf).
struct ChainGather {
  NodeId node = kNoNode;
  std::vector<int> leaf_dims;
};

class RegionViews {
 public:
  /// `nodes`: the candidate region, sorted (topological).
  RegionViews(const Graph& graph, const std::vector<NodeId>& nodes);

  /// Whether `v` is read from memory through movement ops only: not produced
  /// by the region, or produced by transpose/broadcast_to/reshape/slice/split
  /// or gather (data operand) of a walkable value.
  bool walkable(ValueId v) const;
  /// Whether `node`'s outputs are read through a composed view (slice,
  /// split, gather always; transpose and reshape when their input is
  /// walkable) instead of being tied to the input's loop axes.
  bool is_view_leaf(const Node& node) const;
  /// Whether input `i` of a region node lives on the node's loop axes (the
  /// node ties it); false for the inputs a view leaf reads through its view.
  bool ties_input(const Node& node, size_t i) const;
  /// Refuses a node the loop-level IR cannot express: a slice, split,
  /// gather or regrouping reshape of a value the region computes, a
  /// regrouping reshape of a strided view, or a view chain with a gather
  /// whose indices are not read at loop points (a slice of its gathered
  /// dim, two gathers of one dim).
  FusionDecision check(const Node& node) const;
  /// The gathers on the view chain of leaf `node`'s output `output_index`,
  /// the leaf first (only the leaf itself when its input is not walkable);
  /// refuses as check() does for a chain that cannot be expressed (`out`
  /// then holds the gathers before the refusing one).
  FusionDecision chain_gathers(const Node& node, size_t output_index,
                               std::vector<ChainGather>& out) const;

  bool in_region(NodeId id) const;

 private:
  const Graph& graph_;
  const std::vector<NodeId>& nodes_;
  std::vector<bool> walkable_;  // per value id (false for values outside the region's reach)
};

}  // namespace autofuse::fuse
