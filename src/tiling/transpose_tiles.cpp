// Transpose tiles of the Elementwise template (tiling.h: TransposeTiles).
//
// A Load whose stride along the vector axis is not 0 or 1 reads one element
// per cache line in the vector loop (y = exp(transpose(x)) for x [N, M]:
// the loop runs along N, the load steps M elements). When such a Load is
// contiguous (stride 1) along an outer axis and the Stores are contiguous
// along the vector axis, the kernel walks the two axes in tiles instead:
// the Load's part of a tile is read along its contiguous axis into a local
// buffer (transposed through a fixed-size block, which the compiler turns
// into register shuffles), then the ordinary vector loop runs over the
// tile's rows, reading the buffer and storing contiguously.
//
// Tile sizes (measured on an AMD EPYC (Zen 4) with g++ 12, one thread,
// y[m, n] = x[n, m] + 1 at [4096, 4096] and [4099, 4093]; elements):
//   1-byte: 64 x 16   2-byte: 16 x 16   4-byte: 16 x 16   8-byte: 16 x 8
// (rows along the Load's contiguous axis x columns along the vector axis):
// a column of the tile reads at least a whole cache line of 16 elements;
// larger or squarer tiles defeat the vectorized block transpose (f32 16x32:
// 2.4x slower, 32x32: 1.8x). f32: 9.8 / 6.5 ms against 109 / 16 ms per
// element and 3 ms for a copy.
#include <algorithm>

#include "autofuse/tiling/tiling.h"

namespace autofuse::tiling {

namespace {

using ascir::AscGraph;
using ascir::AscKind;
using ascir::AscNode;
using schedule::ScheduledKernel;
using schedule::Template;

/// Per node: reaches a Store.
std::vector<bool> live_nodes(const AscGraph& g) {
  std::vector<bool> live(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const AscNode& n = g.nodes[i];
    if (n.kind == AscKind::Store) live[i] = true;
    if (!live[i]) continue;
    for (int in : n.inputs)
      live.at(static_cast<size_t>(in)) = true;
  }
  return live;
}

/// A Load that reads across the vector axis `v`: it varies along it with a
/// stride that is not 0 or 1.
bool reads_across(const AscNode& n, int v) {
  if (n.kind != AscKind::Load || !n.view.varies_along(v)) return false;
  const sym::Expr& stride = n.view.strides.at(static_cast<size_t>(v));
  return stride != sym::Expr(0) && stride != sym::Expr(1);
}

}  // namespace

TransposeTiles transpose_tiles(const ScheduledKernel& kernel) {
  TransposeTiles out;
  if (kernel.kind != Template::Elementwise || kernel.inner_axes.empty()) return out;
  const AscGraph& g = kernel.graph;
  const int v = kernel.inner_axes.back();
  const auto at_v = static_cast<size_t>(v);
  const std::vector<bool> live = live_nodes(g);
  for (const AscNode& n : g.nodes) {  // every Store along the vector axis is contiguous
    if (n.kind == AscKind::Store && n.view.varies_along(v) &&
        n.view.strides.at(at_v) != sym::Expr(1))
      return out;
  }
  // The tiled axis: the first such Load's stride-1 axis.
  for (const AscNode& n : g.nodes) {
    if (!live[static_cast<size_t>(n.id)] || !reads_across(n, v)) continue;
    for (int a = 0; a < g.num_axes() && out.axis < 0; ++a)
      if (a != v && n.view.strides.at(static_cast<size_t>(a)) == sym::Expr(1)) out.axis = a;
    if (out.axis >= 0) break;
  }
  if (out.axis < 0) return out;
  int64_t element = 1;
  for (const AscNode& n : g.nodes) {
    if (!live[static_cast<size_t>(n.id)] || !reads_across(n, v) ||
        n.view.strides.at(static_cast<size_t>(out.axis)) != sym::Expr(1))
      continue;
    out.loads.push_back(n.id);
    element = std::max(element, static_cast<int64_t>(dtype_size(n.dtype)));
  }
  out.rows = element == 1 ? 64 : 16;
  out.cols = element >= 8 ? 8 : 16;
  return out;
}

sym::Expr transpose_tile_units(const ScheduledKernel& kernel, const TransposeTiles& tiles) {
  const AscGraph& g = kernel.graph;
  const int v = kernel.inner_axes.back();
  sym::Expr units(1);
  for (int a = 0; a < g.num_axes(); ++a) {
    const sym::Expr& size = g.axes[static_cast<size_t>(a)].size;
    if (a == tiles.axis) {
      units = units * sym::ceildiv(size, sym::Expr(tiles.rows));
    } else if (a == v) {
      units = units * sym::ceildiv(size, sym::Expr(tiles.cols));
    } else {
      units = units * size;
    }
  }
  return units;
}

}  // namespace autofuse::tiling
