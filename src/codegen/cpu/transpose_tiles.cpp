// The Elementwise template in transpose tiles (tiling.h: TransposeTiles),
// for kernels whose Loads read across the vector axis (a transpose that
// moves the contiguous axis). Block b takes the tiles [b * chunk, min((b +
// 1) * chunk, work)), a tile being R x C elements of (tiled axis `a`,
// vector axis `v`) at fixed other axes:
//
//   for each tile (others, tr, tc):          // tc fastest: a strip of R rows
//     r0 = tr * R, r1 = min(r0 + R, n_a); c0 = tc * C, c1 = min(c0 + C, n_v)
//     per buffered Load %5 (stride 1 along a, s along v):
//       whole tile: blk[c][r] = p[b5 + r + (c0 + c) * s]   (R contiguous
//                   elements per column; constant bounds)
//                   t5[r * C + c] = blk[c][r]              (the transpose:
//                   a fixed-size block the compiler does in registers)
//       edge tile:  t5[r * C + c] = p[b5 + r + c * s] within the tile's
//                   bounds (a vector loop along its longer side)
//     for i_a in [r0, r1):                   // the tile's rows
//       row bases, row nodes (their Stores when c0 == 0: once per row)
//       vector loop over i_v in [c0, c1): %5 reads t5[(i_a - r0) * C +
//                   (i_v - c0)], everything else as in elementwise.cpp
//
// The buffers hold the storage values (converted when read, as the Load
// converts), so every element is computed by the same expressions as in
// the row-segment walk: the results are bit-identical.
#include <fmt/format.h>

#include "autofuse/error.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;

std::string KernelEmitter::fill_tile_buffers(const std::string& indent) const {
  const int a = tiles_.axis;
  const int v = vector_axis_;
  const int64_t rows = tiles_.rows, cols = tiles_.cols;
  const std::string in1 = indent + "  ", in2 = in1 + "  ";
  std::string out =
      indent + "{  // the transposed Loads' tiles, read along their contiguous axis\n";
  out += fmt::format("{}const int64_t i{} = r0;\n", in1, a);
  std::vector<int> loads;
  for (int id : tiles_.loads) {
    if (!live_.at(static_cast<size_t>(id))) continue;
    loads.push_back(id);
    out += fmt::format("{}const int64_t b{} = {};\n", in1, id, row_base(node(id)));
  }
  const auto element = [&](int id, const std::string& r, const std::string& c) {
    const AscNode& n = node(id);
    return fmt::format("p{}[b{} + {} + ({}) * ({})]", node(n.inputs.at(0)).arg_index, id, r, c,
                       expr(n.view.strides.at(static_cast<size_t>(v))));
  };
  out +=
      fmt::format("{}if (r1 - r0 == {} && c1 - c0 == {}) {{  // a whole tile\n", in1, rows, cols);
  for (int id : loads) {
    out += fmt::format("{}{{\n{}  {} blk[{}][{}];\n", in2, in2, c_storage_type(node(id).dtype),
                       cols, rows);
    out += fmt::format("{}  for (int c_ = 0; c_ < {}; ++c_)\n", in2, cols);
    out += fmt::format("{}    for (int r_ = 0; r_ < {}; ++r_) blk[c_][r_] = {};\n", in2, rows,
                       element(id, "r_", "c0 + c_"));
    out += fmt::format("{}  for (int r_ = 0; r_ < {}; ++r_)\n", in2, rows);
    out += fmt::format("{}    for (int c_ = 0; c_ < {}; ++c_) t{}[r_ * {} + c_] = blk[c_][r_];\n",
                       in2, cols, id, cols);
    out += in2 + "}\n";
  }
  // An edge tile: the vector loop along its longer side (an axis shorter
  // than a tile makes every tile an edge tile).
  out += in1 + "} else if (r1 - r0 >= c1 - c0) {  // an edge tile, read along the rows\n";
  for (int id : loads) {
    out += fmt::format("{}for (int64_t c_ = c0; c_ < c1; ++c_) {{\n", in2);
    out += "#pragma omp simd\n";
    out +=
        fmt::format("{}  for (int64_t r_ = 0; r_ < r1 - r0; ++r_) t{}[r_ * {} + (c_ - c0)] = {};\n",
                    in2, id, cols, element(id, "r_", "c_"));
    out += in2 + "}\n";
  }
  out += in1 + "} else {  // an edge tile with few rows\n";
  for (int id : loads) {
    out += fmt::format("{}for (int64_t r_ = 0; r_ < r1 - r0; ++r_) {{\n", in2);
    out += "#pragma omp simd\n";
    out += fmt::format("{}  for (int64_t c_ = c0; c_ < c1; ++c_) t{}[r_ * {} + (c_ - c0)] = {};\n",
                       in2, id, cols, element(id, "r_", "c_"));
    out += in2 + "}\n";
  }
  out += in1 + "}\n";
  out += indent + "}\n";
  return out;
}

std::string KernelEmitter::emit_elementwise_tiled() {
  AF_CHECK(depth_ == 1 && tiles_.axis >= 0 && tiles_.axis != vector_axis_,
           "kernel {}: transpose tiles without a vector loop", graph_.name);
  const int a = tiles_.axis;
  const int v = vector_axis_;
  std::string out = fmt::format(
      "extern \"C\" void {}_kernel(const void* tiling_data, void* const* args, int64_t block_idx) "
      "{{\n",
      name_);
  out += prologue();
  out += fmt::format("  const int64_t begin = block_idx * td->chunk;  // tiles of {} x {}\n",
                     tiles_.rows, tiles_.cols);
  out += "  const int64_t end = af_min(begin + td->chunk, td->work);\n";
  out += "  if (begin >= end) return;\n";
  out += per_call_nodes("begin == 0");
  std::vector<int> others;
  for (int axis : row_axes_)
    if (axis != a) others.push_back(axis);
  out += fmt::format("  const int64_t ntr = af_ceildiv({}, {});  // tiles along {}\n", size(a),
                     tiles_.rows, graph_.axes.at(static_cast<size_t>(a)).name);
  out += fmt::format("  const int64_t ntc = af_ceildiv({}, {});  // tiles along {}\n", size(v),
                     tiles_.cols, graph_.axes.at(static_cast<size_t>(v)).name);
  out += "  int64_t tc = begin % ntc;\n";
  out += "  int64_t tr = begin / ntc % ntr;\n";
  out += decompose(others, "begin / ntc / ntr", "  ");
  for (int id : tiles_.loads)
    if (live_.at(static_cast<size_t>(id)))
      out +=
          fmt::format("  {} t{}[{}] __attribute__((aligned(64)));  // {}\n",
                      c_storage_type(node(id).dtype), id, tiles_.rows * tiles_.cols, node(id).name);
  out += "  for (int64_t u = begin; u < end; ++u) {\n";
  out += fmt::format("    const int64_t r0 = tr * {};\n", tiles_.rows);
  out += fmt::format("    const int64_t r1 = af_min(r0 + {}, {});\n", tiles_.rows, size(a));
  out += fmt::format("    const int64_t c0 = tc * {};\n", tiles_.cols);
  out += fmt::format("    const int64_t c1 = af_min(c0 + {}, {});\n", tiles_.cols, size(v));
  out += fill_tile_buffers("    ");
  out += fmt::format("    for (int64_t i{0} = r0; i{0} < r1; ++i{0}) {{\n", a);
  const std::string ind = "      ";
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (!live_[id] || level_[id] < 0 || buffered_[id]) continue;
    if (is_strided(n)) out += fmt::format("{}const int64_t b{} = {};\n", ind, n.id, row_base(n));
  }
  for (const AscNode& n : graph_.nodes) {
    if (!live_[static_cast<size_t>(n.id)] || level_[static_cast<size_t>(n.id)] != 0) continue;
    if (n.kind == AscKind::Store) {  // once per row: by the row's first tile
      std::string store;
      emit_node(n, "", store);
      out += ind + "if (c0 == 0) " + store;
    } else {
      emit_node(n, ind, out);
    }
  }
  std::vector<int> body;
  for (const AscNode& n : graph_.nodes)
    if (live_[static_cast<size_t>(n.id)] && level_[static_cast<size_t>(n.id)] == 1)
      body.push_back(n.id);
  emit_inner_loop(v, "c0", "c1", body, "#pragma omp simd", nullptr, ind, out);
  out += "    }\n";
  std::string next =
      "if (++tr == ntr) {\n        tr = 0;\n" + advance(others, "        ") + "      }\n";
  if (others.empty()) next = "if (++tr == ntr) tr = 0;\n";
  out += "    if (++tc == ntc) {\n      tc = 0;\n      " + next + "    }\n";
  out += "  }\n";
  out += fence_if_streamed("  ");
  out += "}\n";
  return out;
}

}  // namespace autofuse::codegen::cpu
