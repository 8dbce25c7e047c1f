// Address composition for view leaves (fuse/view_ops.h): the element a view
// leaf reads at a loop point, as an affine function of the loop indices (and
// of one gathered index), found by walking the movement ops back from the
// leaf to the region input whose buffer holds the data.
#pragma once

#include <vector>

#include "autofuse/fuse/fusion.h"
#include "autofuse/fuse/view_ops.h"

namespace autofuse::ascir::detail {

struct LeafView {
  ValueId buffer = 0;              ///< the region input read
  sym::Expr offset;                ///< elements
  std::vector<sym::Expr> strides;  ///< per loop axis, elements (0: does not vary)
  bool is_gather = false;          ///< the leaf is a gather: one dim is indexed
  ValueId gather_index = 0;        ///< the gather's indices (a region value)
  sym::Expr gather_stride;         ///< elements per index step
  sym::Expr gather_size;           ///< the gathered dim's size
};

/// The view through which output `output_index` of the leaf `node` reads
/// its buffer, over the region's loop axes.
LeafView compose_leaf_view(const Graph& graph, const fuse::Region& region,
                           const fuse::RegionViews& views, const Node& node, int output_index);

/// Row-major element strides of `shape`.
std::vector<sym::Expr> row_major_strides(const sym::ShapeEnv& env, const Shape& shape);

}  // namespace autofuse::ascir::detail
