// Node levels, addressing and per-node statements shared by the Elementwise
// and Reduction templates (see kernel_emitter.h).
//
// Shape of the code: a loop nest whose levels are -1 (the whole block: once
// per kernel call), 0 (one work unit: the row axes' multi-index) and 1..
// (the inner loops: Elementwise has one, the vectorized last axis;
// Reduction has one per reduced axis, the last one vectorized in the row
// layout, plus the vectorized tile loop inside them in the column layout).
// Each node is computed at the shallowest level where its value is fixed: a
// node that does not vary along an inner loop's axis is hoisted out of it (a
// broadcast operand is loaded once per row, a scalar once per call). Values
// are SSA temporaries `v<id>` of the node's compute type; in the column
// layout, row nodes that vary along the tile axis ("tile vectors") are local
// arrays `v<id>[i<tile> - t0]` filled between passes.
//
// An Elementwise kernel with a transpose that moves the contiguous axis
// (tiling::transpose_tiles) walks 2-D tiles instead of row segments
// (transpose_tiles.cpp): its transposed Loads are read into local tile
// buffers, then each tile row runs the same vector loop.
//
// The innermost loop (inner_loop.cpp) has a second variant for tiling_key
// kStreamingStoresKey: stores that tiling::streams() go through an aligned
// local chunk buffer and non-temporal stores; and a third for
// kPrefetchingKey: the same chunks and prefetches, ordinary stores.
//
// Gathers (gather.cpp) check their index; a bad one reads index 0 and is
// reported to the kernel's af_status: directly outside vector loops, and
// through OpenMP reduction flags after a vector loop (a call inside would
// stop it vectorizing). A Gather whose index is a broadcast of a value
// computed at an outer level (an embedding lookup: one index per row) is
// checked once there, and its loop reads a plain row.
//
// A bf16/f16 Load that varies only along the vector axis, of a constant
// length (a row-invariant operand: LayerNorm's gamma), reads an f32 copy the
// kernel makes once per call (row_invariant_, invariant_copies).
#include "codegen/cpu/kernel_emitter.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;
using schedule::Template;

namespace {

std::string symbol_name(const std::string& s) {
  return tiling::symbol_field(s);
}

}  // namespace

KernelEmitter::KernelEmitter(const schedule::ScheduledKernel& kernel, std::string name,
                             std::string tiling_struct, int gather_base)
    : kernel_(kernel),
      graph_(kernel.graph),
      name_(std::move(name)),
      tiling_struct_(std::move(tiling_struct)) {
  const size_t num_nodes = graph_.nodes.size();
  axis_level_.assign(static_cast<size_t>(graph_.num_axes()), 0);
  for (size_t j = 0; j < kernel_.inner_axes.size(); ++j)
    axis_level_.at(static_cast<size_t>(kernel_.inner_axes[j])) = static_cast<int>(j) + 1;
  depth_ = static_cast<int>(kernel_.inner_axes.size());
  AF_CHECK(kernel_.kind == Template::Reduction || depth_ <= 1,
           "elementwise kernel {} with {} inner axes", graph_.name, depth_);
  column_ = kernel_.kind == Template::Reduction && kernel_.tile_axis >= 0;
  if (column_) axis_level_.at(static_cast<size_t>(kernel_.tile_axis)) = ++depth_;
  row_axes_ = kernel_.row_axes();
  vector_axis_ = tiling::vector_axis(kernel_);
  tiles_ = tiling::transpose_tiles(kernel_);
  buffered_.assign(num_nodes, false);
  for (int id : tiles_.loads)
    buffered_.at(static_cast<size_t>(id)) = true;

  level_.assign(num_nodes, -1);
  output_of_store_.assign(num_nodes, -1);
  gather_id_.assign(num_nodes, -1);
  int num_gathers = gather_base;
  for (const AscNode& n : graph_.nodes) {
    if (n.kind == AscKind::Data) ++num_inputs_;
    if (n.kind == AscKind::Gather) {  // one af_status::which per gathered dim
      gather_id_[static_cast<size_t>(n.id)] = num_gathers;
      num_gathers += static_cast<int>(n.gather.size());
    }
    if (n.kind == AscKind::Output) {
      ++num_outputs_;
      for (int store : n.inputs)  // every piece of the buffer
        output_of_store_.at(static_cast<size_t>(store)) = n.arg_index;
    }
    if (n.kind == AscKind::Data || n.kind == AscKind::Output) continue;
    int level = -1;
    for (int a = 0; a < graph_.num_axes(); ++a)
      if (varies(n, a)) level = std::max(level, axis_level_[static_cast<size_t>(a)]);
    if (n.kind == AscKind::Reduce) {
      level = std::max(level, 0);          // a per-row result, whatever its input
    } else if (n.kind != AscKind::Load) {  // (a Gather: also where its index is)
      for (int in : n.inputs)
        level = std::max(level, level_.at(static_cast<size_t>(in)));
    }
    level_[static_cast<size_t>(n.id)] = level;
  }

  tile_vector_.assign(num_nodes, false);
  if (column_) {
    for (const AscNode& n : graph_.nodes) {
      const auto id = static_cast<size_t>(n.id);
      tile_vector_[id] = n.kind != AscKind::Data && n.kind != AscKind::Output &&
                         kernel_.is_row_node.at(id) && varies(n, kernel_.tile_axis);
    }
  }
  plan_gather_hoists();  // (reads levels and tile vectors)

  live_.assign(num_nodes, false);
  for (size_t i = num_nodes; i-- > 0;) {
    const AscNode& n = graph_.nodes[i];
    if (n.kind == AscKind::Store) live_[i] = true;
    if (!live_[i]) continue;
    for (int in : operands(n))
      live_.at(static_cast<size_t>(in)) = true;
  }
  for (const AscNode& n : graph_.nodes)
    has_gathers_ = has_gathers_ || (n.kind == AscKind::Gather && live_[static_cast<size_t>(n.id)]);

  // A streamed store is in the innermost loop (stride 1 along its axis).
  streamed_.assign(num_nodes, false);
  for (const AscNode& n : graph_.nodes)
    streamed_[static_cast<size_t>(n.id)] =
        depth_ >= 1 && level_[static_cast<size_t>(n.id)] == depth_ && tiling::streams(kernel_, n);
  // Row-invariant narrow loads: converted once per call (invariant_copies).
  row_invariant_.assign(num_nodes, false);
  bool many_rows = false;  // else the "copy" would be the whole input, once per block
  for (int a = 0; a < graph_.num_axes(); ++a)
    many_rows = many_rows ||
                (a != vector_axis_ && graph_.axes[static_cast<size_t>(a)].size != sym::Expr(1));
  const std::optional<int64_t> extent =
      vector_axis_ >= 0 ? graph_.axes.at(static_cast<size_t>(vector_axis_)).size.as_const()
                        : std::nullopt;
  if (extent && *extent <= kInvariantMax && many_rows && !column_ && tiles_.axis < 0 &&
      depth_ >= 1) {
    for (const AscNode& n : graph_.nodes) {
      if (n.kind != AscKind::Load || (n.dtype != DType::bf16 && n.dtype != DType::f16) ||
          buffered_[static_cast<size_t>(n.id)] || level_[static_cast<size_t>(n.id)] != depth_ ||
          !live_[static_cast<size_t>(n.id)])
        continue;
      bool only_vector_axis = varies(n, vector_axis_);
      for (int a = 0; a < graph_.num_axes(); ++a)
        only_vector_axis = only_vector_axis && (a == vector_axis_ || !varies(n, a));
      row_invariant_[static_cast<size_t>(n.id)] = only_vector_axis;
    }
  }
  spans_.assign(num_nodes, tiling::RowSpan{});
  for (const AscNode& n : graph_.nodes)
    spans_[static_cast<size_t>(n.id)] = tiling::row_span(kernel_, n);

  fold_ = tiling::folds_rows(kernel_);
  replicated_.assign(num_nodes, false);
  if (fold_) {
    for (const AscNode& n : graph_.nodes) {
      const auto id = static_cast<size_t>(n.id);
      if (level_[id] < 1 || kernel_.is_row_node.at(id)) continue;  // not computed in a pass
      for (int in : n.inputs)
        if (tile_vector_.at(static_cast<size_t>(in)))
          replicated_.at(static_cast<size_t>(in)) = true;
    }
  }
  slot_.assign(num_nodes, -1);
  const std::vector<int> partial = tiling::partial_reduces(kernel_);
  for (size_t i = 0; i < partial.size(); ++i)
    slot_.at(static_cast<size_t>(partial[i])) = static_cast<int>(i);
}

bool KernelEmitter::streams() const {
  return std::find(streamed_.begin(), streamed_.end(), true) != streamed_.end();
}

std::string KernelEmitter::fence_if_streamed(const std::string& indent) const {
  if (!streams()) return {};
  return fmt::format("{}if (AF_NT_STORES && td->header.tiling_key == {}) af_nt_fence();\n", indent,
                     tiling::kStreamingStoresKey);
}

std::string KernelEmitter::emit() {
  return kernel_.kind == Template::Reduction ? emit_reduction() : emit_elementwise();
}

bool KernelEmitter::varies(const AscNode& n, int axis) const {
  return n.view.varies_along(axis);
}

std::string KernelEmitter::value(int id) const {
  if (moment_center_ >= 0) {  // a centered moment's loop reads its block's center
    std::string c = moment_center(id);
    if (!c.empty()) return c;
  }
  if (tile_vector_.at(static_cast<size_t>(id)))
    return fmt::format("{}{}[{}]", in_pass_ && replicated_.at(static_cast<size_t>(id)) ? "r" : "v",
                       id, tile_index());
  return fmt::format("v{}", id);
}

std::string KernelEmitter::tile_index() const {
  return fmt::format("i{} - t0", kernel_.tile_axis);
}

std::string KernelEmitter::expr(const sym::Expr& e) const {
  return sym::to_cpp(e, symbol_name);
}

std::string KernelEmitter::size(int axis) const {
  return fmt::format("n{}", axis);
}

std::string KernelEmitter::prologue() const {
  std::string out;
  out += fmt::format("  const {0}* td = (const {0}*)tiling_data;\n", tiling_struct_);
  // (void): a symbol or size that only the tiling function needs is unused here.
  for (const std::string& s : graph_.symbols())
    out += fmt::format("  const int64_t {0} = td->{0};\n  (void){0};\n", symbol_name(s));
  for (int a = 0; a < graph_.num_axes(); ++a) {
    const sym::Expr& e = graph_.axes[static_cast<size_t>(a)].size;
    // A static size is a literal, so the compiler knows the trip count.
    const std::string v =
        e.is_const() ? expr(e) : fmt::format("td->{}", tiling::axis_size_field(a));
    out += fmt::format("  const int64_t {0} = {1};  // {2}\n  (void){0};\n", size(a), v,
                       graph_.axes[static_cast<size_t>(a)].name);
  }
  for (const AscNode& n : graph_.nodes) {
    if (n.kind == AscKind::Data) {
      const std::string t = c_storage_type(n.dtype);
      out += fmt::format("  const {0}* __restrict p{1} = (const {0}*)args[{1}];  // {2}\n", t,
                         n.arg_index, n.name);
    } else if (n.kind == AscKind::Output) {
      const std::string t = c_storage_type(n.dtype);
      out += fmt::format("  {0}* __restrict q{1} = ({0}*)args[{2}];  // {3}\n", t, n.arg_index,
                         num_inputs_ + n.arg_index, n.name);
    }
  }
  // After the workspace slot (kernel_abi.h); read only by kernels with gathers.
  if (has_gathers_)
    out += fmt::format("  af_status* const af_st = (af_status*)args[{}];  // gather errors\n",
                       num_inputs_ + num_outputs_ + 1);
  return out;
}

// A bf16 load costs 2-3 vector instructions per vector (widen, shift) in
// every row and pass that reads it; the copy costs them once per call.
std::string KernelEmitter::invariant_copies() const {
  std::string out;
  for (const AscNode& n : graph_.nodes) {
    if (!row_invariant_[static_cast<size_t>(n.id)]) continue;
    const sym::Expr& stride = n.view.strides.at(static_cast<size_t>(vector_axis_));
    const std::string at = stride == sym::Expr(1) ? "k_" : fmt::format("k_ * ({})", expr(stride));
    const int64_t len = *graph_.axes.at(static_cast<size_t>(vector_axis_)).size.as_const();
    out += fmt::format("  float c{}[{}] __attribute__((aligned(64)));  // {} in f32\n", n.id, len,
                       n.name);
    out += "#pragma omp simd\n";
    out += fmt::format(
        "  for (int64_t k_ = 0; k_ < {}; ++k_) c{}[k_] = {};\n", size(vector_axis_), n.id,
        load_expr(n.dtype, fmt::format("p{}[{} + {}]", node(n.inputs.at(0)).arg_index,
                                       expr(n.view.offset), at)));
  }
  return out;
}

bool KernelEmitter::is_strided(const AscNode& n) {
  return n.kind == AscKind::Load || n.kind == AscKind::Gather || n.kind == AscKind::Store;
}

std::string KernelEmitter::decompose(const std::vector<int>& outer, const std::string& row,
                                     const std::string& indent) const {
  if (outer.empty()) return {};
  std::string out = indent + "int64_t";
  for (size_t k = 0; k < outer.size(); ++k)
    out += fmt::format("{} i{}", k ? "," : "", outer[k]);
  out += ";\n" + indent + "{\n";
  out += fmt::format("{}  int64_t r = {};\n", indent, row);
  for (size_t k = outer.size(); k-- > 1;) {
    out += fmt::format("{0}  i{1} = r % {2};\n{0}  r /= {2};\n", indent, outer[k], size(outer[k]));
  }
  out += fmt::format("{}  i{} = r;\n{}}}\n", indent, outer[0], indent);
  return out;
}

std::string KernelEmitter::advance(const std::vector<int>& outer, const std::string& indent) const {
  if (outer.empty()) return {};
  // if (++i2 == n2) { i2 = 0; if (++i1 == n1) { i1 = 0; ++i0; } }
  std::string out;
  std::string close;
  for (size_t k = outer.size(); k-- > 1;) {
    out += fmt::format("if (++i{0} == {1}) {{ i{0} = 0; ", outer[k], size(outer[k]));
    close += " }";
  }
  out += fmt::format("++i{};", outer[0]);
  return indent + out + close + "\n";
}

std::string KernelEmitter::per_call_nodes(const std::string& store_guard) const {
  std::string out;
  for (const AscNode& n : graph_.nodes) {
    if (!live_[static_cast<size_t>(n.id)] || level_[static_cast<size_t>(n.id)] != -1) continue;
    if (n.kind == AscKind::Store) {
      std::string store;
      emit_node(n, "", store);
      out += "  if (" + store_guard + ") " + store;
    } else {
      emit_node(n, "  ", out);
    }
  }
  return out;
}

std::string KernelEmitter::row_base(const AscNode& n) const {
  std::string out = n.view.offset == sym::Expr(0) ? std::string() : expr(n.view.offset);
  for (int a = 0; a < graph_.num_axes(); ++a) {
    if (!varies(n, a) || axis_level_[static_cast<size_t>(a)] != 0) continue;
    const sym::Expr& stride = n.view.strides.at(static_cast<size_t>(a));
    if (stride == sym::Expr(0)) continue;
    if (!out.empty()) out += " + ";
    out +=
        stride == sym::Expr(1) ? fmt::format("i{}", a) : fmt::format("i{} * ({})", a, expr(stride));
  }
  return out.empty() ? "0" : out;
}

std::string KernelEmitter::address(const AscNode& n, int axis, const std::string& at) const {
  if (level_.at(static_cast<size_t>(n.id)) < 0) return expr(n.view.offset);
  std::string out = fmt::format("b{}", n.id);
  for (int a = 0; a < graph_.num_axes(); ++a) {
    if (!varies(n, a) || axis_level_[static_cast<size_t>(a)] == 0) continue;
    const sym::Expr& stride = n.view.strides.at(static_cast<size_t>(a));
    if (stride == sym::Expr(0)) continue;
    const std::string index = a == axis ? "(" + at + ")" : fmt::format("i{}", a);
    out += stride == sym::Expr(1) ? fmt::format(" + {}", index)
                                  : fmt::format(" + {} * ({})", index, expr(stride));
  }
  return out;
}

int KernelEmitter::never_nan_constant(const AscNode& n) const {
  for (int k = 0; k < 2; ++k) {
    const AscNode* src = &node(n.inputs.at(static_cast<size_t>(k)));
    while (src->kind == AscKind::Broadcast)
      src = &node(src->inputs.at(0));
    if (src->kind == AscKind::Scalar && !std::isnan(src->scalar)) return k;
  }
  return -1;
}

int KernelEmitter::clamp_constant(const AscNode& n) const {
  if (n.kind != AscKind::Compute || (n.op != OpKind::Max && n.op != OpKind::Min)) return -1;
  const DType operand = node(n.inputs.at(0)).dtype;
  return is_float(operand) && !is_float8(operand) ? never_nan_constant(n) : -1;
}

bool KernelEmitter::nonpositive(int id) const {
  // Each element of x is in the set its max reduced (Broadcast only repeats
  // the reduced axes back), so x - max(x) is <= 0 (exactly: a subtraction of
  // a value at least as large rounds to <= 0), or NaN from a NaN or
  // inf - inf.
  const AscNode& sub = node(id);
  if (sub.kind != AscKind::Compute || sub.op != OpKind::Sub) return false;
  const AscNode* max = &node(sub.inputs.at(1));
  while (max->kind == AscKind::Broadcast)
    max = &node(max->inputs.at(0));
  return max->kind == AscKind::Reduce && max->op == OpKind::ReduceMax &&
         max->inputs.at(0) == sub.inputs.at(0);
}

std::string KernelEmitter::store_element(const AscNode& n, StoreTo to,
                                         const std::string& at) const {
  const std::string i = at.empty() ? fmt::format("i{}", vector_axis_) : at;
  const tiling::RowSpan& span = spans_.at(static_cast<size_t>(n.id));
  switch (to) {
    case StoreTo::Chunk:
      return fmt::format("t{}[{} - nt_k]", n.id, i);
    case StoreTo::Span:
      return span.offset == 0 ? fmt::format("t{}[{} - nt_k]", span.first, i)
                              : fmt::format("t{}[{} + {} - nt_k]", span.first, span.offset, i);
    case StoreTo::Output:
      break;
  }
  return fmt::format("q{}[{}]", output_of_store_.at(static_cast<size_t>(n.id)),
                     at.empty() ? address(n) : address(n, vector_axis_, at));
}

bool KernelEmitter::exp_nonpos(const AscNode& n) const {
  if (n.kind != AscKind::Compute || n.op != OpKind::Exp) return false;
  const DType operand = node(n.inputs.at(0)).dtype;
  return c_compute_type(operand) == "float" && !is_float8(operand) && nonpositive(n.inputs.at(0));
}

void KernelEmitter::emit_node(const AscNode& n, const std::string& indent, std::string& out,
                              StoreTo to) const {
  const std::string type = c_compute_type(n.dtype);
  const auto in = [&](size_t i) -> const AscNode& { return node(n.inputs.at(i)); };
  std::string rhs;
  switch (n.kind) {
    case AscKind::Data:
    case AscKind::Output:
      return;
    case AscKind::Load: {
      if (row_invariant_.at(static_cast<size_t>(n.id))) {
        rhs = fmt::format("c{}[i{}]", n.id, vector_axis_);
        break;
      }
      const std::string element = buffered_.at(static_cast<size_t>(n.id))
                                      ? fmt::format("t{}[(i{} - r0) * {} + (i{} - c0)]", n.id,
                                                    tiles_.axis, tiles_.cols, vector_axis_)
                                      : fmt::format("p{}[{}]", in(0).arg_index, address(n));
      rhs = load_expr(n.dtype, element);
      break;
    }
    case AscKind::Gather:
      rhs = gather_value(n, indent, out);
      break;
    case AscKind::Store: {
      const int arg = output_of_store_.at(static_cast<size_t>(n.id));
      AF_CHECK(arg >= 0, "store {} feeds no output", n.name);
      const bool to_buffer = to != StoreTo::Output;
      AF_CHECK(!to_buffer || streamed_.at(static_cast<size_t>(n.id)) || n.dtype == DType::bf16,
               "store {} buffered but neither streamed nor bf16", n.name);
      const tiling::RowSpan& span = spans_.at(static_cast<size_t>(n.id));
      AF_CHECK(to != StoreTo::Span || span.first >= 0, "store {} buffered by a row span of none",
               n.name);
      const std::string target = store_element(n, to);
      // A bf16 chunk buffer holds what the prelude rounds by the chunk
      // (f32 where vcvtne2ps2bf16 does it; inner_loop.cpp).
      const std::string stored =
          to_buffer && n.dtype == DType::bf16
              ? fmt::format("AF_BF16_CHUNK_VALUE({})",
                            half_store_value(in(0).dtype, DType::bf16, value(in(0).id)))
              : store_expr(in(0).dtype, n.dtype, value(in(0).id));
      out += fmt::format("{}{} = {};  // {}\n", indent, target, stored, n.name);
      return;
    }
    case AscKind::Scalar:
      rhs = scalar_literal(n.dtype, n.scalar);
      break;
    case AscKind::Index:
      rhs = index_expr(n.dtype, varies(n, n.axis) ? fmt::format("i{}", n.axis) : "(int64_t)0");
      break;
    case AscKind::Compute: {
      std::vector<std::string> args;
      for (int id : n.inputs)
        args.push_back(value(id));
      const DType operand = n.op == OpKind::Where ? in(1).dtype : in(0).dtype;
      const int constant = clamp_constant(n);
      if (constant >= 0)
        rhs = min_max_with_constant(n.op, constant, args.at(0), args.at(1));
      else if (std::count(chunk_sigmoids_.begin(), chunk_sigmoids_.end(), n.id) > 0)
        rhs = fmt::format(
            "af_sigmoid_from_exp({}, e{}[{}])", args.at(0), n.id,
            chunk_exp_index_.empty() ? fmt::format("i{} - nt_k", vector_axis_) : chunk_exp_index_);
      else if (std::count(row_exps_.begin(), row_exps_.end(), n.id) > 0)
        rhs = args.at(0);  // its buffer's exp after the loop (short_row_reduce.cpp)
      else if (exp_nonpos(n))
        rhs = fmt::format("af_exp_nonpos({})", args.at(0));  // no upper clamp
      else
        rhs = compute_expr(n.op, operand, args);
      break;
    }
    case AscKind::Cast:
      rhs = cast_expr(in(0).dtype, n.dtype, value(in(0).id), n.saturate);
      break;
    case AscKind::Broadcast:
      rhs = value(in(0).id);
      break;
    case AscKind::Reduce:
      AF_CHECK(false, "reduce {} outside the reduction template", n.name);
  }
  if (tile_vector_.at(static_cast<size_t>(n.id))) {  // an array element, filled in a stage
    out += fmt::format("{}{} = {};  // {}\n", indent, value(n.id), rhs, n.name);
    return;
  }
  out += fmt::format("{}const {} {} = {};  // {}\n", indent, type, value(n.id), rhs, n.name);
  emit_gather_checks(n.id, indent, out);  // Gathers indexed by this value, checked once here
}

}  // namespace autofuse::codegen::cpu
