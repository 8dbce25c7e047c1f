// Address composition for view leaves (fuse/view_ops.h): the element a view
// leaf reads at a loop point, as an affine function of the loop indices (and
// of the gathered indices, one per gather on the chain), found by walking
// the movement ops back from the leaf to the region input whose buffer holds
// the data.
#pragma once

#include <vector>

#include "autofuse/fuse/fusion.h"
#include "autofuse/fuse/view_ops.h"

namespace autofuse::ascir::detail {

/// One gathered buffer dim of a view leaf (a gather on its chain).
struct LeafGather {
  ValueId gather = 0;  ///< the gather's output (a bad index is reported with its name)
  ValueId index = 0;   ///< its indices (a region value on the leaf's loop axes)
  sym::Expr stride;    ///< elements per index step
  sym::Expr size;      ///< the gathered dim's size
};

struct LeafView {
  ValueId buffer = 0;              ///< the region input read
  sym::Expr offset;                ///< elements
  std::vector<sym::Expr> strides;  ///< per loop axis, elements (0: does not vary)
  /// The gathers on the chain, the one reading the buffer first (empty: a Load).
  std::vector<LeafGather> gathers;
};

/// The view through which output `output_index` of the leaf `node` reads
/// its buffer, over the region's loop axes.
LeafView compose_leaf_view(const Graph& graph, const fuse::Region& region,
                           const fuse::RegionViews& views, const Node& node, int output_index);

/// Row-major element strides of `shape`.
std::vector<sym::Expr> row_major_strides(const sym::ShapeEnv& env, const Shape& shape);

}  // namespace autofuse::ascir::detail
