// Centered second moments (schedule.h, CenteredMoment): batch-norm's
// variance mean((x - mean(x))^2) over the rows of [N, C] needs mean(x)
// first, so it is a pass of its own, and a column kernel over data larger
// than the cache reads x from memory three times (mean, variance, output).
// Computed per block of rows that fits the L2 (the block's mean, then the
// squares about it from the L2) and merged across blocks by Chan, Golub and
// LeVeque's formula, the variance runs in the mean's pass: x comes from
// memory twice. Each block's sum of squares is two-pass about its own mean,
// and the merge works in offsets from the first block's center, so it is as
// accurate as two passes at any |mean| / sd (codegen/cpu/centered_moments.cpp
// has the arithmetic and the bound).
//
// Only the column layout with one reduced axis. Kernels with moments never
// fold rows into the vector loop (tiling::folds_rows: lanes would each need
// a count of their own), and narrow columns gain most from folding (a
// column sum of [4M, 4] f32: 7x), so the tile axis must be a literal of at
// least 64 columns, where the tiling would not fold anyway.
#include <algorithm>
#include <optional>

#include "autofuse/schedule/schedule.h"

namespace autofuse::schedule {

namespace {

using ascir::AscGraph;
using ascir::AscKind;
using ascir::AscNode;

/// Tile axes narrower than this may fold rows (tiling::kMinTileRun).
constexpr int64_t kMinMomentTile = 64;

bool float_compute(const AscNode& n) {
  return is_float(n.dtype) && !is_float8(n.dtype);
}

bool varies_along(const AscNode& n, int axis) {
  return n.view.repeats.at(static_cast<size_t>(axis)) != sym::Expr(1);
}

/// The Broadcast of `mean` among Sub `sub`'s operands whose other operand
/// is `x`; -1 if `sub` is not x - mean or mean - x.
int center_of(const AscGraph& g, const AscNode& sub, int x, int mean) {
  if (sub.kind != AscKind::Compute || sub.op != OpKind::Sub || sub.inputs.size() != 2) return -1;
  for (size_t i = 0; i < 2; ++i) {
    const AscNode& b = g.node(sub.inputs[i]);
    if (sub.inputs[1 - i] != x || b.kind != AscKind::Broadcast || b.inputs.at(0) != mean) continue;
    if (b.view.repeats != g.node(x).view.repeats) continue;  // a full broadcast
    return b.id;
  }
  return -1;
}

}  // namespace

std::vector<CenteredMoment> find_centered_moments(const ScheduledKernel& k) {
  std::vector<CenteredMoment> found;
  const AscGraph& g = k.graph;
  if (k.kind != Template::Reduction || k.tile_axis < 0 || k.inner_axes.size() != 1) return found;
  const std::optional<int64_t> width = g.axes.at(static_cast<size_t>(k.tile_axis)).size.as_const();
  if (!width || *width < kMinMomentTile) return found;
  const int reduced = k.inner_axes.front();
  const auto pass_of = [&](int id) { return k.node_pass.at(static_cast<size_t>(id)); };
  for (const AscNode& v : g.nodes) {
    if (v.kind != AscKind::Reduce || !float_compute(v) ||
        (v.op != OpKind::ReduceSum && v.op != OpKind::ReduceMean))
      continue;
    const AscNode& square = g.node(v.inputs.at(0));
    if (square.kind != AscKind::Compute || square.op != OpKind::Mul || square.inputs.size() != 2 ||
        square.inputs[0] != square.inputs[1])
      continue;
    const AscNode& sub = g.node(square.inputs[0]);
    for (int operand : sub.inputs) {
      const AscNode& broadcast = g.node(operand);  // of the mean, if this is x - mean
      if (broadcast.kind != AscKind::Broadcast) continue;
      const AscNode& mean = g.node(broadcast.inputs.at(0));
      if (mean.kind != AscKind::Reduce || mean.op != OpKind::ReduceMean || !float_compute(mean) ||
          ascir::compute_dtype(mean.dtype) != ascir::compute_dtype(v.dtype))
        continue;
      // A moment's mean is a column chunk sum of its pass, not a moment.
      if (std::any_of(found.begin(), found.end(),
                      [&](const CenteredMoment& f) { return f.moment == mean.id; }))
        continue;
      const int x = mean.inputs.at(0);
      const AscNode& xn = g.node(x);
      if (!varies_along(xn, reduced) || !varies_along(xn, k.tile_axis)) continue;
      const int center = center_of(g, sub, x, mean.id);
      if (center < 0 || pass_of(v.id) != pass_of(mean.id) + 1) continue;
      if (ascir::compute_dtype(sub.dtype) != ascir::compute_dtype(v.dtype) ||
          ascir::compute_dtype(square.dtype) != ascir::compute_dtype(v.dtype))
        continue;
      found.push_back(CenteredMoment{mean.id, v.id, center});
      break;
    }
  }
  return found;
}

}  // namespace autofuse::schedule
