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
// Row layout (NCHW batch-norm training: the rows are channels, the reduced
// axes [N, HW]): the blocks are the chunks of the mean's cascaded sum (up to
// 1024 elements of the last reduced axis, in the L1), so a row longer than
// the L2 is read from memory twice instead of three times. Only with an
// outer reduced axis (N: the row is N times the last axis) and a last axis
// that is a literal of at least a chunk: a merge costs a few scalar
// operations and divisions per block, which blocks of a few dozen elements
// (HW = 7 x 7 or 14 x 14, symbolic and small at run time) pay dearly for
// rows that stay in the L2 anyway (measured 1.4-1.6x the time of three
// passes), and a single reduced axis (LayerNorm's rows) keeps its short-row
// code and row buffers.
//
// Column layout: one reduced axis. Kernels with moments never
// fold rows into the vector loop (tiling::folds_rows: lanes would each need
// a count of their own), and narrow columns gain most from folding (a
// column sum of [4M, 4] f32: 7x), so the tile axis must be a literal of at
// least 64 columns, where the tiling would not fold anyway.
#include <algorithm>
#include <optional>

#include "autofuse/ascir/vector_cost.h"
#include "autofuse/schedule/schedule.h"

namespace autofuse::schedule {

namespace {

using ascir::AscGraph;
using ascir::AscKind;
using ascir::AscNode;

/// Tile axes narrower than this may fold rows (tiling::kMinTileRun).
constexpr int64_t kMinMomentTile = 64;
/// Row layout: the literal last reduced axis a block (the mean's cascade
/// chunk, reduction_pass.cpp kSumChunk) needs at least.
constexpr int64_t kMinMomentChunk = 1024;
/// The most vector instructions per vector that computing x again may cost
/// (an f16 load's software decode: 8).
constexpr int kMaxRecomputeCost = 8;

bool float_compute(const AscNode& n) {
  return is_float(n.dtype) && !is_float8(n.dtype);
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

/// Whether x (the mean's input) is cheap enough to compute twice: the
/// moment's second loop computes it again from its loads. At most
/// kMaxRecomputeCost vector instructions per vector (ascir::vector_op_cost)
/// over the nodes it needs inside the loops, and no transcendental: an x
/// of exp(...) over rows that stay in the L2 gains nothing from one memory
/// read fewer and pays its exp twice.
bool cheap_to_recompute(const ScheduledKernel& k, int x) {
  const AscGraph& g = k.graph;
  std::vector<bool> seen(g.nodes.size(), false);
  std::vector<int> todo = {x};
  int cost = 0;
  while (!todo.empty()) {
    const int id = todo.back();
    todo.pop_back();
    const auto at = static_cast<size_t>(id);
    if (seen.at(at) || k.is_row_node.at(at)) continue;
    seen[at] = true;
    const AscNode& n = g.node(id);
    if (ascir::is_transcendental(n)) return false;
    cost += ascir::vector_op_cost(n);
    if (n.kind != AscKind::Data) todo.insert(todo.end(), n.inputs.begin(), n.inputs.end());
  }
  return cost <= kMaxRecomputeCost;
}

}  // namespace

std::vector<CenteredMoment> find_centered_moments(const ScheduledKernel& k) {
  std::vector<CenteredMoment> found;
  const AscGraph& g = k.graph;
  if (k.kind != Template::Reduction || k.inner_axes.empty()) return found;
  const bool column = k.tile_axis >= 0;
  if (column) {
    const std::optional<int64_t> width =
        g.axes.at(static_cast<size_t>(k.tile_axis)).size.as_const();
    if (k.inner_axes.size() != 1 || !width || *width < kMinMomentTile) return found;
  } else {
    const std::optional<int64_t> last =
        g.axes.at(static_cast<size_t>(k.inner_axes.back())).size.as_const();
    if (k.inner_axes.size() < 2 || !last || *last < kMinMomentChunk) return found;
  }
  // x must vary along every reduced axis (and the tile): each block's count
  // is its extent.
  const auto varies_everywhere = [&](const AscNode& n) {
    for (int a : k.inner_axes)
      if (!n.view.varies_along(a)) return false;
    return !column || n.view.varies_along(k.tile_axis);
  };
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
      // A moment's mean is a chunk sum of its pass (column chunks or the
      // row layout's cascade chunks), not a moment.
      if (std::any_of(found.begin(), found.end(),
                      [&](const CenteredMoment& f) { return f.moment == mean.id; }))
        continue;
      const int x = mean.inputs.at(0);
      const AscNode& xn = g.node(x);
      if (!varies_everywhere(xn) || !cheap_to_recompute(k, x)) continue;
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
