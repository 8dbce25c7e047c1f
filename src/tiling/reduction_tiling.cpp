// The Reduction part of the tiling function (see tiling.h): the work units
// (rows; tiles of rows in the column layout; segments of either when the
// outermost reduced axis is split), the block split, and for a split kernel
// its launches and workspace.
//
// The decisions, in order, all from the machine and the sizes at run time:
//  1. want = the blocks the work can use: clamp(bytes / min_block_bytes, 1, cores).
//  2. Column layout, tile width W: at most max_tile() elements and what keeps
//     the local arrays (accumulators, tile vectors) in the L1, a whole
//     number of vectors. When a later pass re-reads the tile (more than one
//     pass) it is "resident" if the tile's loads over the whole reduced
//     extent fit in half the L2; W does not shrink to make it so: narrow
//     tiles pay a loop start per row and tile and a page per row (x - mean
//     over [2048, 1024] f32, one Zen 5 core: W = 64 resident 0.6 ms, W = 1024
//     re-read from the L3 0.2 ms; W = 256..512 also slower at every size
//     tried, up to [2048, 16384] from DRAM), so a tile that does not fit
//     streams its later passes from the L3 or memory, like the unfused
//     kernels. Then, if rows * tiles < want, resident tiles (and streaming
//     ones when the caller cannot run a split) narrow, not below
//     kMinTileRun, so that every usable core gets a tile; streaming tiles
//     stay wide and the split below makes the units. Except where the
//     blocks would write tiles of the same output rows at once (fewer rows
//     than blocks, a Store along the tile axis and a reduced axis): the
//     cores' store prefetches then take each other's lines, so a row of
//     less than kSharedRowBytes keeps one tile (no narrowing) and goes to
//     the blocks by segments of the split, or whole to one block; a wider
//     row gets at least two tiles per block, a whole number each, so that
//     the tiles written at the same time are not neighbours.
//     A tile narrower than kMinTileRun that covers its whole axis folds
//     about kFoldLanes / W rows into one vector loop when folds_rows() (a
//     column sum of [4M, 4] f32: 14 ms unfolded, 2 ms folded, on 2 cores).
//  3. Split: if the units still keep fewer than 3/4 of `want` busy and the
//     caller can run split_phases() launches, the outermost reduced axis is
//     cut into about 4 * want / units segments (so blocks of whole units
//     balance within ~20%; fewer, down to half, when that makes the units a
//     multiple of `want`), no more than its length and, in the column
//     layout, no more than sqrt(length / 64) (every unit of a later launch
//     combines the partials of its tile: S * W values, a centered moment
//     3 * S * W, kept small against the S * W * length / S it reads). Row
//     layout segments along the vector axis are whole multiples of 64
//     elements.
//  4. af_choose_blocks over the units; a split kernel runs split_phases()
//     launches and gets a workspace of one slot per partial_reduces() entry
//     and two per centered moment (workspace_slots), each units * W *
//     kWorkspaceElementBytes (rounded to 64 bytes).
//  5. Centered moments (schedule.h), column layout: the moment loop's blocks, mom_rows
//     reduced indices whose tile rows fill about a quarter of the L2 (at
//     least one 64-index chunk). Such kernels never fold rows (their tile
//     axis is a literal of at least 64 columns).
#include <algorithm>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"

namespace autofuse::tiling {

namespace {

using ascir::AscGraph;
using ascir::AscKind;
using ascir::AscNode;
using schedule::ScheduledKernel;

bool varies_along_reduced(const ScheduledKernel& k, const AscNode& n) {
  for (int a : k.inner_axes)
    if (n.view.varies_along(a)) return true;
  return false;
}

/// Bytes per tile lane of the column layout's local arrays (an estimate
/// that errs high: compute types at their size; per accumulator its total,
/// compensation and chunk sum, and a NaN flag).
int64_t array_bytes_per_lane(const ScheduledKernel& k) {
  const AscGraph& g = k.graph;
  int64_t bytes = 0;
  for (const AscNode& n : g.nodes) {
    if (n.kind == AscKind::Data || n.kind == AscKind::Output || n.kind == AscKind::Store) continue;
    if (!k.is_row_node.at(static_cast<size_t>(n.id)) || !n.view.varies_along(k.tile_axis)) continue;
    bytes += dtype_size(ascir::compute_dtype(n.dtype));
    if (n.kind == AscKind::Reduce) bytes += 3 * dtype_size(ascir::compute_dtype(n.dtype)) + 4;
    // A centered moment's running mean offset, block center, block squares,
    // shift and block deviations, and its mean's block sum (counted per
    // moment: at most once too many; codegen/cpu/centered_moments.cpp).
    if (k.moment_of(n.id)) bytes += 6 * dtype_size(ascir::compute_dtype(n.dtype));
  }
  return std::max<int64_t>(bytes, 1);
}

/// A Load or Gather read along the tile axis and a reduced axis: what each
/// pass over a tile streams.
bool tile_stream(const ScheduledKernel& k, const AscNode& n) {
  return (n.kind == AscKind::Load || n.kind == AscKind::Gather) &&
         n.view.varies_along(k.tile_axis) && varies_along_reduced(k, n);
}

/// Bytes per tile lane of one reduced index of the tile streams (at least 1).
int64_t tile_row_bytes_per_lane(const ScheduledKernel& k) {
  int64_t bytes = 0;
  for (const AscNode& n : k.graph.nodes)
    if (tile_stream(k, n)) bytes += dtype_size(n.dtype);
  return std::max<int64_t>(bytes, 1);
}

/// Bytes per tile lane of one reduced index of the Stores along the tile
/// axis and a reduced axis (an output row that several blocks may share).
int64_t store_row_bytes_per_lane(const ScheduledKernel& k) {
  int64_t bytes = 0;
  for (const AscNode& n : k.graph.nodes)
    if (n.kind == AscKind::Store && n.view.varies_along(k.tile_axis) && varies_along_reduced(k, n))
      bytes += dtype_size(n.dtype);
  return bytes;
}

/// Bytes per tile lane that a pass after the first reads again: the tile
/// streams over the reduced extent they vary along.
sym::Expr resident_bytes_per_lane(const ScheduledKernel& k) {
  const AscGraph& g = k.graph;
  sym::Expr bytes(0);
  for (const AscNode& n : g.nodes) {
    if (!tile_stream(k, n)) continue;
    sym::Expr extent(static_cast<int64_t>(dtype_size(n.dtype)));
    for (int a : k.inner_axes)
      if (n.view.varies_along(a)) extent = extent * g.axes.at(static_cast<size_t>(a)).size;
    bytes = bytes + extent;
  }
  return sym::max(bytes, sym::Expr(1));
}

}  // namespace

int64_t max_tile(const ScheduledKernel& kernel) {
  if (kernel.kind != schedule::Template::Reduction || kernel.tile_axis < 0) return kMaxTile;
  const int64_t fit = kTileStackBytes / array_bytes_per_lane(kernel) / 16 * 16;
  return std::clamp<int64_t>(fit, 16, kMaxTile);
}

bool folds_rows(const ScheduledKernel& kernel) {
  if (kernel.kind != schedule::Template::Reduction || kernel.tile_axis < 0 ||
      kernel.inner_axes.empty() || !kernel.moments.empty())
    return false;
  const AscGraph& g = kernel.graph;
  const int r = kernel.inner_axes.back();
  const int t = kernel.tile_axis;
  const auto r_at = static_cast<size_t>(r), t_at = static_cast<size_t>(t);
  const sym::Expr size_t_ = g.axes.at(t_at).size;
  for (const AscNode& n : g.nodes) {
    if (n.kind == AscKind::Data || n.kind == AscKind::Output) continue;
    if (n.kind == AscKind::Index && (n.axis == r || n.axis == t)) return false;
    const bool along_r = n.view.varies_along(r), along_t = n.view.varies_along(t);
    if (along_r && !along_t) return false;  // a per-row scalar
    // A buffer read or written along another reduced axis but not along r:
    // lane j would need column j % W of its own row (the fold addresses it
    // as if it varied along r; found by the fuzz test).
    const bool buffer =
        n.kind == AscKind::Load || n.kind == AscKind::Gather || n.kind == AscKind::Store;
    if (buffer && along_t && !along_r && varies_along_reduced(kernel, n)) return false;
    const sym::Expr stride_t = n.view.strides.empty() ? sym::Expr(0) : n.view.strides[t_at];
    const sym::Expr stride_r = n.view.strides.empty() ? sym::Expr(0) : n.view.strides[r_at];
    if ((n.kind == AscKind::Load || n.kind == AscKind::Store) && along_r &&
        (stride_t != sym::Expr(1) || !sym::proven_eq(stride_r, size_t_)))
      return false;
    // A Gather reads where its index says, so contiguity does not matter:
    // its non-gathered part must only map lane j to row j / W, column j % W
    // (stride_r == stride_t * W, e.g. both 0); the index folds on its own.
    if (n.kind == AscKind::Gather && along_r && !sym::proven_eq(stride_r, stride_t * size_t_))
      return false;
    if (n.kind == AscKind::Reduce) {
      const AscNode& in = g.node(n.inputs.at(0));
      if (varies_along_reduced(kernel, in) && !in.view.varies_along(r)) return false;
    }
  }
  return true;
}

sym::Expr row_reuse_bytes(const ScheduledKernel& kernel) {
  const std::vector<int> rows = kernel.row_axes();
  sym::Expr bytes(0);
  if (kernel.kind != schedule::Template::Reduction || kernel.tile_axis >= 0 || rows.size() < 2)
    return bytes;
  const AscGraph& g = kernel.graph;
  for (const AscNode& n : g.nodes) {
    if ((n.kind != AscKind::Load && n.kind != AscKind::Gather) || n.view.varies_along(rows[0]) ||
        !varies_along_reduced(kernel, n))
      continue;
    bool inner = false;  // varies along a later row axis
    for (size_t r = 1; r < rows.size(); ++r)
      inner = inner || n.view.varies_along(rows[r]);
    if (!inner) continue;  // the same for every row: stays in the cache anyway
    sym::Expr extent(static_cast<int64_t>(dtype_size(n.dtype)));
    for (int a : kernel.inner_axes)
      if (n.view.varies_along(a)) extent = extent * g.axes.at(static_cast<size_t>(a)).size;
    bytes = bytes + extent;
  }
  return bytes;
}

std::vector<int> partial_reduces(const ScheduledKernel& kernel) {
  std::vector<int> out;
  if (kernel.kind != schedule::Template::Reduction) return out;
  for (const AscNode& n : kernel.graph.nodes)
    if (n.kind == AscKind::Reduce &&
        varies_along_reduced(kernel, kernel.graph.node(n.inputs.at(0))))
      out.push_back(n.id);
  return out;
}

size_t workspace_slots(const ScheduledKernel& kernel) {
  return partial_reduces(kernel).size() + 2 * kernel.moments.size();
}

size_t moment_workspace_slot(const ScheduledKernel& kernel, size_t index) {
  AF_CHECK(index < kernel.moments.size(), "moment {} of {}", index, kernel.moments.size());
  return partial_reduces(kernel).size() + 2 * index;
}

std::string emit_reduction_tiling(const ScheduledKernel& k,
                                  std::string (*print)(const sym::Expr&)) {
  const AscGraph& g = k.graph;
  const bool column = k.tile_axis >= 0;
  const int phases = schedule::split_phases(k);
  const size_t slots = workspace_slots(k);
  std::string c;
  c += "  // Reduction: rows, tiles and segments (tiling.h, reduction_tiling.cpp).\n";
  c += fmt::format("  const int64_t rows = {};\n", print(work_units(k)));
  c += fmt::format("  const int64_t row_bytes = {};\n", print(bytes_per_unit(k)));
  c += fmt::format("  const int64_t n_split = {};  // the outermost reduced axis\n",
                   k.inner_axes.empty()
                       ? std::string("1")
                       : print(g.axes.at(static_cast<size_t>(k.inner_axes[0])).size));
  c += "  const int64_t cores = machine->cores > 0 ? machine->cores : 1;\n";
  c += "  const int64_t min_bytes = machine->min_block_bytes > 0 ? machine->min_block_bytes : 1;\n";
  c += "  const int64_t total = rows > 0 && row_bytes > INT64_MAX / rows ? INT64_MAX : rows * "
       "row_bytes;\n";
  c += "  const int64_t want = af_max(1, af_min(total / min_bytes, cores));\n";
  c += "  int64_t tile = 1;\n  int64_t tiles = 1;\n";
  const bool can_split = !k.inner_axes.empty();
  c += fmt::format(
      "  const bool can_split = {};  // the caller runs the launches of a split\n  "
      "(void)can_split;\n",
      can_split ? fmt::format("td->header.max_phases >= {} && n_split > 1", phases)
                : std::string("false"));
  if (column) {
    c += fmt::format("  const int64_t n_tile = {};\n",
                     print(g.axes.at(static_cast<size_t>(k.tile_axis)).size));
    c += "  const int64_t lanes = af_max(1, machine->vector_bytes / 4);\n";
    c += fmt::format(
        "  tile = af_min(n_tile, af_max(lanes, af_min({}, machine->l1_bytes / {}) / lanes * "
        "lanes));\n",
        max_tile(k), array_bytes_per_lane(k));
    c += "  bool resident = false;  // later passes find the tile in the L2\n";
    if (k.num_passes > 1) {
      c += fmt::format("  const int64_t fit = machine->l2_bytes / 2 / af_max(1, {});\n",
                       print(resident_bytes_per_lane(k)));
      c += "  resident = fit >= tile;\n";
    }
    c += "  if (tile < 1) tile = 1;\n";
    c += "  tiles = af_ceildiv(n_tile, tile);\n";
    c +=
        fmt::format("  const int64_t min_tile = af_min(n_tile, af_max(lanes, {}));\n", kMinTileRun);
    // Fewer rows than blocks: blocks would write tiles of the same output
    // rows at once (kSharedRowBytes). Wide rows: at least two tiles per
    // block and a whole number of tiles each, so the tiles written at the
    // same time are not neighbours. Narrow rows: no tiles shared; a split
    // gives the blocks different rows (one tile per row), else one block.
    const int64_t store_bytes = store_row_bytes_per_lane(k);
    c += fmt::format("  const bool narrow_rows = {};  // output rows not shared\n",
                     store_bytes > 0 ? fmt::format("rows < want && n_tile * {} < {}", store_bytes,
                                                   kSharedRowBytes)
                                     : std::string("false"));
    if (store_bytes > 0) {
      c += "  if (rows < want && !narrow_rows) {\n";
      c += "    const int64_t per_block = af_max(2, af_ceildiv(tiles * af_max(rows, 1), want));\n";
      c += "    const int64_t target = af_ceildiv(per_block * want, af_max(rows, 1));\n";
      c +=
          "    const int64_t even = af_max(min_tile, af_ceildiv(af_ceildiv(n_tile, target), lanes) "
          "* lanes);\n";
      c += "    if (even < tile) tile = even;\n";
      c += "    tiles = af_ceildiv(n_tile, tile);\n  }\n";
      c += fmt::format(
          "  if (narrow_rows && can_split && rows * 4 < want * 3 && n_tile <= {}) {{  // one "
          "tile per row\n    tile = n_tile;\n    tiles = 1;\n  }}\n",
          max_tile(k));
    }
    c += "  if (rows * tiles < want && tile > min_tile && (resident || !can_split) && "
         "!narrow_rows) {\n";
    c += "    // narrower tiles, one per usable core (a split keeps wide streaming tiles)\n";
    c += "    const int64_t per_row = af_ceildiv(want, af_max(rows, 1));\n";
    c += "    const int64_t narrow = af_max(min_tile, af_ceildiv(af_ceildiv(n_tile, per_row), "
         "lanes) * lanes);\n";
    c += "    if (narrow < tile) tile = narrow;\n";
    c += "    tiles = af_ceildiv(n_tile, tile);\n  }\n";
    c += fmt::format("  if (tile > {0}) {{  // the kernel's arrays hold {0} lanes\n", max_tile(k));
    c += fmt::format("    tile = {};\n    tiles = af_ceildiv(n_tile, tile);\n  }}\n", max_tile(k));
  }
  if (!column)
    c += "  const bool narrow_rows = false;  // (column layout only)\n  (void)narrow_rows;\n";
  c += "  int64_t fold = 1;\n";
  if (folds_rows(k)) {
    c += fmt::format(
        "  if (tiles == 1 && n_tile > 0 && n_tile < {}) {{  // narrow: rows share a loop\n",
        kMinTileRun);
    c += fmt::format("    fold = af_max(1, {} / n_tile);\n  }}\n",
                     std::min(kFoldLanes, max_tile(k)));
  }
  c += "  const int64_t units0 = rows * tiles;\n";
  c += "  int64_t split = 1;\n  int64_t seg_len = n_split;\n";
  if (can_split) {
    // (Not narrow rows of several tiles: a split's blocks would share them.)
    c += "  if (can_split && units0 * 4 < want * 3 && !(narrow_rows && tiles > 1)) {\n";
    c += "    split = af_min(n_split, af_ceildiv(4 * want, af_max(units0, 1)));\n";
    if (column) {
      c += "    const int64_t combine_cap = (int64_t)__builtin_sqrt((double)(n_split / 64));\n";
      c += "    split = af_max(1, af_min(split, combine_cap));\n";
    }
    // Whole rounds of `want` units when that costs at most half the
    // segments: 5 units on 2 cores run as 3 + 2 (the slow block 20% late).
    c += "    for (int64_t s = split; s > 1 && s * 2 > split; --s)\n";
    c += "      if (units0 * s % want == 0) {\n        split = s;\n        break;\n      }\n";
    c += "    seg_len = af_ceildiv(n_split, split);\n";
    if (!column && k.inner_axes.size() == 1)
      c += "    seg_len = af_min(n_split, af_ceildiv(seg_len, 64) * 64);  // whole cache lines\n";
    c += "    split = af_ceildiv(n_split, seg_len);\n  }\n";
  }
  c += fmt::format("  td->{} = split;\n  td->{} = seg_len;\n", kSplitField, kSegmentField);
  c += fmt::format("  td->{} = tile;\n  td->{} = tiles;\n  td->{} = fold;\n", kTileField,
                   kTilesField, kFoldField);
  if (column) {
    // Tile rows of data larger than the cache come from memory: each pass
    // prefetches them kColumnPrefetchBytes ahead (the hardware prefetcher
    // alone left a pass reading one stream at ~30 GB/s on 1 thread). Data
    // in the cache gains nothing and pays the instructions (batchnorm_stats
    // [4096, 256]: 0.16 -> 0.19 ms), so only above half the L3.
    c += fmt::format(
        "  td->{} = total > machine->l3_bytes / 2 ? af_max(1, {} / af_max(1, tile * fold * 4)) : "
        "0;\n",
        kPrefetchRowsField, kColumnPrefetchBytes);
  } else {
    // Rows prefetched ahead must survive in the L2 until pass 0 reads them:
    // a row of NCHW batch-norm training ([64, 64, 12544] f32, 3.1 MiB)
    // had left it, and the prefetches only cost bandwidth (one thread:
    // 51.4 -> 43-46 ms without them).
    c += fmt::format("  td->{} = {} * row_bytes <= machine->l2_bytes ? 1 : 0;\n",
                     kPrefetchRowsField, kReductionRowsAhead + 1);
  }
  const sym::Expr reuse = row_reuse_bytes(k);
  if (reuse != sym::Expr(0)) {
    // Rows in tiles (tiling.h kRowTileField) where the broadcast operand's
    // rows of one outer index would not stay in the L2 until the next: a
    // tile's take an eighth of it.
    const std::vector<int> row_axes = k.row_axes();
    c += fmt::format("  const int64_t outer_rows = {};\n",
                     print(g.axes.at(static_cast<size_t>(row_axes[0])).size));
    c += fmt::format("  const int64_t reuse_bytes = af_max(1, {});\n", print(reuse));
    c += "  const int64_t inner_rows = rows / af_max(1, outer_rows);\n";
    c += "  const int64_t row_tile = af_max(1, machine->l2_bytes / 8 / reuse_bytes);\n";
    c += fmt::format(
        "  td->{} = split == 1 && outer_rows > 1 && row_tile < inner_rows &&\n"
        "                  inner_rows * reuse_bytes > machine->l2_bytes / 2 ? row_tile : 0;\n",
        kRowTileField);
  }
  if (!k.moments.empty() && column) {
    // The moment loop re-reads each block from the L2 (a quarter of it:
    // room for the prefetched rows and the outputs).
    c += fmt::format(
        "  td->{0} = af_max({1}, machine->l2_bytes / 4 / af_max(1, tile * {2}) / {1} * {1});\n",
        kMomentRowsField, kColumnChunk, tile_row_bytes_per_lane(k));
  }
  c += "  const int64_t units = units0 * split;\n";
  c += "  af_block_split blocks =\n"
       "      af_choose_blocks(units, af_max(1, total / af_max(units, 1)), 1, machine);\n";
  if (column) {
    c += "  if (narrow_rows && tiles > 1 && units > 0) {  // whole rows per block\n";
    c +=
        "    blocks.chunk = af_ceildiv(rows, af_max(1, af_min(rows, blocks.block_dim))) * tiles;\n";
    c += "    blocks.block_dim = af_ceildiv(units, blocks.chunk);\n  }\n";
  }
  c += "  td->header.block_dim = blocks.block_dim;\n";
  c += fmt::format("  td->{} = units;\n  td->{} = blocks.chunk;\n", kWorkField, kChunkField);
  c += fmt::format("  td->header.num_phases = split > 1 ? {} : 1;\n", std::max(phases, 1));
  c += fmt::format("  td->{} = split > 1 ? af_ceildiv(units * tile * {}, 64) * 64 : 0;\n",
                   kWorkspaceSlotField, kWorkspaceElementBytes);
  c += fmt::format("  td->header.workspace_bytes = {} * td->{};\n", slots, kWorkspaceSlotField);
  return c;
}

}  // namespace autofuse::tiling
