// Emission of the TilingData struct and the tiling function (see tiling.h).
#include "autofuse/tiling/tiling.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>

#include "autofuse/ascir/vector_cost.h"
#include "autofuse/error.h"

namespace autofuse::tiling {

namespace {

using ascir::AscGraph;
using ascir::AscKind;
using ascir::AscNode;
using schedule::ScheduledKernel;
using schedule::Template;

std::string symbol_local(const std::string& name) {
  return symbol_field(name);
}

}  // namespace

std::string symbol_field(std::string_view symbol) {
  return fmt::format("s_{}", symbol);
}

std::string axis_size_field(int axis) {
  return fmt::format("size{}", axis);
}

sym::Expr work_units(const ScheduledKernel& kernel) {
  const AscGraph& g = kernel.graph;
  sym::Expr units(1);
  if (kernel.kind == Template::Reduction) {
    for (int a : kernel.row_axes())
      units = units * g.axes.at(static_cast<size_t>(a)).size;
  } else {
    for (const ascir::Axis& axis : g.axes)
      units = units * axis.size;
  }
  return units;
}

sym::Expr bytes_per_unit(const ScheduledKernel& kernel) {
  const AscGraph& g = kernel.graph;
  sym::Expr bytes(0);
  for (const AscNode& n : g.nodes) {
    // A Gather reads one element per index like a Load (its index is a node
    // of its own); every Store of a multi-piece Output counts.
    if (n.kind != AscKind::Load && n.kind != AscKind::Gather && n.kind != AscKind::Store) continue;
    const sym::Expr size(static_cast<int64_t>(dtype_size(n.dtype)));
    if (kernel.kind == Template::Reduction) {
      sym::Expr extent(1);
      for (int a : kernel.inner_axes)
        if (n.view.varies_along(a)) extent = extent * g.axes.at(static_cast<size_t>(a)).size;
      if (kernel.tile_axis >= 0 && n.view.varies_along(kernel.tile_axis))
        extent = extent * g.axes.at(static_cast<size_t>(kernel.tile_axis)).size;
      bytes = bytes + size * extent;
    } else if (kernel.inner_axes.empty() || n.view.varies_along(kernel.inner_axes.back())) {
      bytes = bytes + size;
    }
  }
  return sym::max(bytes, sym::Expr(1));
}

int vector_axis(const ScheduledKernel& kernel) {
  if (kernel.kind == Template::Reduction && kernel.tile_axis >= 0) return kernel.tile_axis;
  return kernel.inner_axes.empty() ? -1 : kernel.inner_axes.back();
}

bool streams(const ScheduledKernel& kernel, const AscNode& store) {
  const int axis = vector_axis(kernel);
  if (store.kind != AscKind::Store || axis < 0) return false;
  if (!store.view.varies_along(axis) ||
      store.view.strides.at(static_cast<size_t>(axis)) != sym::Expr(1))
    return false;
  if (kernel.kind != Template::Reduction) return transpose_tiles(kernel).axis < 0;
  // Column layout: tile vectors are stored between passes, not in the loop.
  if (kernel.is_row_node.at(static_cast<size_t>(store.id))) return false;
  const AscGraph& g = kernel.graph;
  const int pass = kernel.node_pass.at(static_cast<size_t>(store.id));
  // Rows reduced from buffers: the row layout's one reduced axis, short
  // (but a chunk or whole cache lines: else such a pass would never stream).
  const std::optional<int64_t> row = g.axes.at(static_cast<size_t>(axis)).size.as_const();
  const auto whole_lines = [&] {
    const RowSpan span = row_span(kernel, store);
    return span.first >= 0 && span.length * static_cast<int64_t>(dtype_size(store.dtype)) % 64 == 0;
  };
  const bool short_rows = kernel.tile_axis < 0 && kernel.inner_axes.size() == 1 && row &&
                          *row <= kShortReduceRow && (*row >= kStreamChunk || whole_lines());
  for (const AscNode& n : g.nodes) {
    if (n.kind == AscKind::Reduce && kernel.node_pass.at(static_cast<size_t>(n.id)) == pass &&
        g.node(n.inputs.at(0)).view.varies_along(axis) && !(short_rows && reduces_from_buffer(n)))
      return false;
  }
  return true;
}

RowSpan row_span(const ScheduledKernel& kernel, const AscNode& store) {
  const int axis = vector_axis(kernel);
  if (store.kind != AscKind::Store || axis < 0) return {};
  const AscGraph& g = kernel.graph;
  const std::optional<int64_t> row = g.axes.at(static_cast<size_t>(axis)).size.as_const();
  const auto piece = [&](const AscNode& n) {
    return n.view.varies_along(axis) &&
           n.view.strides.at(static_cast<size_t>(axis)) == sym::Expr(1) &&
           (kernel.kind != Template::Reduction ||
            (!kernel.is_row_node.at(static_cast<size_t>(n.id)) &&
             kernel.node_pass.at(static_cast<size_t>(n.id)) ==
                 kernel.node_pass.at(static_cast<size_t>(store.id))));
  };
  if (!row || *row >= kStreamChunk || !piece(store)) return {};
  // A piece of whole cache lines streams alone: a span's buffer would only
  // add a copy (dlrm_concat f32 [32768, 416], one thread: 1.2x the time).
  if (*row * static_cast<int64_t>(dtype_size(store.dtype)) % 64 == 0) return {store.id, 0, *row};
  // The Output's other pieces, by their offset from this one (in rows).
  std::vector<std::pair<int64_t, int>> others;
  for (const AscNode& out : g.nodes) {
    if (out.kind != AscKind::Output ||
        std::find(out.inputs.begin(), out.inputs.end(), store.id) == out.inputs.end())
      continue;
    for (int id : out.inputs) {
      const AscNode& p = g.node(id);
      if (id == store.id || !piece(p) || p.view.strides != store.view.strides) continue;
      const std::optional<int64_t> d = (p.view.offset - store.view.offset).as_const();
      if (d && *d % *row == 0) others.emplace_back(*d / *row, id);
    }
  }
  std::sort(others.begin(), others.end());
  int64_t lo = 0, hi = 0;  // the run [lo, hi] around 0, in rows
  int first = store.id;
  for (auto it = std::lower_bound(others.begin(), others.end(), std::make_pair(int64_t{1}, -1));
       it != others.end() && it->first == hi + 1; ++it)
    ++hi;
  for (auto it = std::lower_bound(others.begin(), others.end(), std::make_pair(int64_t{0}, -1));
       it != others.begin() && std::prev(it)->first == lo - 1; --it) {
    --lo;
    first = std::prev(it)->second;
  }
  if ((hi - lo + 1) * *row > kRowSpanMax) return {store.id, 0, *row};
  return {first, -lo * *row, (hi - lo + 1) * *row};
}

bool reduces_from_buffer(const AscNode& reduce) {
  if (reduce.kind != AscKind::Reduce || !is_float(reduce.dtype) || reduce.dtype == DType::f64)
    return false;
  switch (reduce.op) {
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
      return true;
    default:
      return false;
  }
}

LoopTraffic loop_traffic(const ScheduledKernel& kernel) {
  LoopTraffic t;
  const int axis = vector_axis(kernel);
  if (axis < 0) return t;
  const AscGraph& g = kernel.graph;
  for (const AscNode& n : g.nodes) {
    if (!n.view.varies_along(axis)) continue;
    if (kernel.kind == Template::Reduction && kernel.is_row_node.at(static_cast<size_t>(n.id)))
      continue;  // once per row (or tile)
    t.ops += ascir::vector_op_cost(n);
    if (n.kind != AscKind::Load && n.kind != AscKind::Gather && n.kind != AscKind::Store) continue;
    bool every_axis = true;
    for (int a = 0; a < g.num_axes(); ++a)
      every_axis = every_axis &&
                   (g.axes[static_cast<size_t>(a)].size == sym::Expr(1) || n.view.varies_along(a));
    if (every_axis) t.bytes += static_cast<int64_t>(dtype_size(n.dtype));
  }
  return t;
}

sym::Expr output_bytes(const ScheduledKernel& kernel) {
  const AscGraph& g = kernel.graph;
  sym::Expr bytes(0);
  for (const AscNode& n : g.nodes) {
    if (n.kind != AscKind::Store) continue;
    sym::Expr extent(static_cast<int64_t>(dtype_size(n.dtype)));
    for (int a = 0; a < g.num_axes(); ++a)
      if (n.view.varies_along(a)) extent = extent * g.axes[static_cast<size_t>(a)].size;
    bytes = bytes + extent;
  }
  return bytes;
}

TilingSource emit_tiling(const ScheduledKernel& kernel, const std::string& name) {
  const AscGraph& g = kernel.graph;
  const std::vector<std::string> symbols = g.symbols();
  TilingSource out;
  out.struct_name = name + "_tiling_data";

  std::string& c = out.code;
  c += fmt::format("struct {} {{\n  af_tiling_header header;\n", out.struct_name);
  for (const std::string& s : symbols)
    c += fmt::format("  int64_t {};\n", symbol_field(s));
  for (int a = 0; a < g.num_axes(); ++a)
    c += fmt::format("  int64_t {};  // {} = {}\n", axis_size_field(a),
                     g.axes[static_cast<size_t>(a)].name,
                     g.axes[static_cast<size_t>(a)].size.to_string());
  const bool reduction = kernel.kind == Template::Reduction;
  c += fmt::format("  int64_t {};  // {} in total\n", kWorkField,
                   reduction ? "units (rows, tiles or segments)" : "elements (or transpose tiles)");
  c += fmt::format("  int64_t {};  // per block\n", kChunkField);
  if (reduction) {
    c += fmt::format("  int64_t {};  // segments per row or tile\n", kSplitField);
    c += fmt::format("  int64_t {};  // elements of the outermost reduced axis per segment\n",
                     kSegmentField);
    c += fmt::format("  int64_t {};  // tile width (elements of the tile axis)\n", kTileField);
    c += fmt::format("  int64_t {};  // tiles per row\n", kTilesField);
    c += fmt::format("  int64_t {};  // workspace bytes per accumulator\n", kWorkspaceSlotField);
    c += fmt::format("  int64_t {};  // rows per vector loop (column layout)\n", kFoldField);
    c += fmt::format(
        "  int64_t {};  // column: reduced indices the prefetches run ahead (0: none); "
        "row: rows ahead prefetched (1) or not (0)\n",
        kPrefetchRowsField);
    if (row_reuse_bytes(kernel) != sym::Expr(0))
      c += fmt::format("  int64_t {};  // rows per tile of the inner row axes (0: none)\n",
                       kRowTileField);
    if (!kernel.moments.empty() && kernel.tile_axis >= 0)  // (row layout: the sums' chunks)
      c += fmt::format("  int64_t {};  // reduced indices per block of the centered moments\n",
                       kMomentRowsField);
  }
  c += "};\n\n";

  c += fmt::format("extern \"C\" int64_t {}_tiling_data_size(void) {{\n", name);
  c += fmt::format("  return (int64_t)sizeof({});\n}}\n\n", out.struct_name);

  c += fmt::format(
      "extern \"C\" void {}_tiling(const int64_t* symbols, const af_machine* machine,\n"
      "    void* tiling_data) {{\n",
      name);
  c += fmt::format("  {}* td = ({}*)tiling_data;\n", out.struct_name, out.struct_name);
  for (size_t i = 0; i < symbols.size(); ++i) {
    c += fmt::format("  const int64_t {} = symbols[{}];\n", symbol_local(symbols[i]), i);
    c += fmt::format("  td->{} = {};\n", symbol_field(symbols[i]), symbol_local(symbols[i]));
  }
  std::string (*print)(const sym::Expr&) = [](const sym::Expr& e) {
    return sym::to_cpp(e, [](const std::string& s) { return symbol_local(s); });
  };
  for (int a = 0; a < g.num_axes(); ++a)
    c += fmt::format("  td->{} = {};\n", axis_size_field(a),
                     print(g.axes[static_cast<size_t>(a)].size));
  if (reduction) {
    c += emit_reduction_tiling(kernel, print);
  } else if (const TransposeTiles tiles = transpose_tiles(kernel); tiles.axis >= 0) {
    // Blocks take whole tiles (transpose_tiles.cpp).
    c += fmt::format("  const int64_t units = {};  // tiles of {} x {}\n",
                     print(transpose_tile_units(kernel, tiles)), tiles.rows, tiles.cols);
    c += fmt::format("  const af_block_split split = af_choose_blocks(units, {}, 1, machine);\n",
                     print(bytes_per_unit(kernel) * sym::Expr(tiles.rows * tiles.cols)));
    c += "  td->header.block_dim = split.block_dim;\n";
    c += fmt::format("  td->{} = units;\n", kWorkField);
    c += fmt::format("  td->{} = split.chunk;\n", kChunkField);
  } else {
    // Elementwise blocks take whole vectors (no shared output cache lines).
    c += fmt::format("  const int64_t units = {};\n", print(work_units(kernel)));
    c += fmt::format(
        "  const af_block_split split = af_choose_blocks(units, {}, machine->vector_bytes, "
        "machine);\n",
        print(bytes_per_unit(kernel)));
    c += "  td->header.block_dim = split.block_dim;\n";
    c += fmt::format("  td->{} = units;\n", kWorkField);
    c += fmt::format("  td->{} = split.chunk;\n", kChunkField);
  }
  bool any_streams = false;
  for (const AscNode& n : g.nodes)
    any_streams = any_streams || streams(kernel, n);
  if (any_streams) {
    // Streaming stores save the read for ownership of every output line but
    // leave the output out of the cache, and are 3-10x slower than ordinary
    // stores on cache-resident data (cpu-facts.md). An output above half the
    // last-level cache gains little from being cached: the kernel's inputs
    // and the consumer's own reads and writes share that cache with it, and
    // the consumer reads from the start, the part written (and evicted) first.
    // In a compute-bound loop the memory traffic they save does not set the
    // time (kStreamMaxOpsPerKiB, runtime/machine.h): such a loop keeps
    // ordinary stores but still prefetches later rows (kPrefetchingKey), as
    // its inputs come from memory too (rmsnorm bf16 B=32,S=512: the
    // next rows; bert_embeddings bf16: the gathered table rows).
    const LoopTraffic traffic = loop_traffic(kernel);
    if (traffic.bytes > 0) {
      c += fmt::format(
          "  // {} vector instructions per vector, {} bytes per element through memory\n",
          traffic.ops, traffic.bytes);
      c += fmt::format(
          "  const bool memory_bound = machine->stream_max_ops_per_kib <= 0 || INT64_C({}) * 1024 "
          "<= machine->stream_max_ops_per_kib * af_max(1, machine->vector_bytes / 4) * "
          "INT64_C({});\n",
          traffic.ops, traffic.bytes);
    } else {
      c += "  const bool memory_bound = true;  // nothing per element through memory\n";
    }
    c += fmt::format(
        "  td->header.tiling_key = {} > machine->l3_bytes / 2 ? (memory_bound ? {} : {}) : {};\n",
        print(output_bytes(kernel)), kStreamingStoresKey, kPrefetchingKey, kOrdinaryStoresKey);
  } else {
    c += fmt::format("  td->header.tiling_key = {};\n", kOrdinaryStoresKey);
  }
  c += "}\n";
  return out;
}

}  // namespace autofuse::tiling
