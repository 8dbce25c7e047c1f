// A split Reduction's partial results (reduction_pass.cpp, tiling.h): when
// the tiling splits the outermost reduced axis into segments, each unit
// writes its Reduces' accumulators to the workspace (one slot per partial
// Reduce, a lane per tile column in the column layout), and the last launch
// combines a row's segments in segment order with the Reduce's own update,
// so a split sum adds nsplit - 1 roundings and a max/min keeps its NaN.
// Centered moments merge their segments by their own formula
// (centered_moments.cpp, emit_moment_combine).
#include <fmt/format.h>

#include "autofuse/tiling/tiling.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

void KernelEmitter::emit_combine(int r, const std::string& indent, std::string& out) const {
  if (kernel_.moment_of(r)) {
    emit_moment_combine(r, indent, out);
    return;
  }
  const AscNode& n = node(r);
  const ReduceCode code = reduce_code(n.op, n.dtype);
  const bool tile = tile_vector_.at(static_cast<size_t>(r));
  const std::string stride = column_ ? "tw" : "1";
  const std::string in1 = indent + "  ";
  out += fmt::format("{}if (nsplit > 1) {{  // {}: the row's partials, in segment order\n", indent,
                     n.name);
  out += workspace_row(code.acc_type, "w_", static_cast<size_t>(slot_.at(static_cast<size_t>(r))),
                       in1);
  const std::string element = tile ? fmt::format("w_[s_ * {} + {}]", stride, tile_index())
                                   : fmt::format("w_[s_ * {}]", stride);
  const std::string step = reduce_update(n.op, n.dtype, acc(r), nan(r), element);
  const std::string reset = fmt::format("{} = {};{}", acc(r), code.identity,
                                        code.tracks_nan ? fmt::format(" {} = 0;", nan(r)) : "");
  if (!tile) {
    out += fmt::format("{}{}\n{}for (int64_t s_ = 0; s_ < nsplit; ++s_) {{ {} }}\n", in1, reset,
                       in1, step);
  } else {
    out += tile_loop(in1, reset);
    out += fmt::format("{}for (int64_t s_ = 0; s_ < nsplit; ++s_) {{\n", in1);
    out += tile_loop(in1 + "  ", step);
    out += in1 + "}\n";
  }
  out += indent + "}\n";
}

void KernelEmitter::emit_partial_write(int r, const std::string& indent, std::string& out) const {
  const AscNode& n = node(r);
  const ReduceCode code = reduce_code(n.op, n.dtype);
  const bool tile = tile_vector_.at(static_cast<size_t>(r));
  // Max/min: NaN once any element was NaN (the combine's update sees it).
  const std::string partial =
      code.tracks_nan ? reduce_result(n.op, n.dtype, acc(r), nan(r), "1") : acc(r);
  const std::string target =
      workspace_element(code.acc_type, static_cast<size_t>(slot_.at(static_cast<size_t>(r))),
                        tile ? tile_index() : "0");
  if (!tile) {
    out += fmt::format("{}{} = {};  // {}\n", indent, target, partial, n.name);
  } else {
    out += tile_loop(indent, fmt::format("{} = {};", target, partial));
  }
}

std::string KernelEmitter::workspace_element(const std::string& type, size_t slot,
                                             const std::string& lane) const {
  return fmt::format("(({}*)(ws + {} * td->{}))[row * {} + {}]", type, slot,
                     tiling::kWorkspaceSlotField, column_ ? "tw" : "1", lane);
}

std::string KernelEmitter::workspace_row(const std::string& type, const std::string& name,
                                         size_t slot, const std::string& indent) const {
  return fmt::format("{}const {}* {} = (const {}*)(ws + {} * td->{}) + (row - seg) * {};\n", indent,
                     type, name, type, slot, tiling::kWorkspaceSlotField, column_ ? "tw" : "1");
}

}  // namespace autofuse::codegen::cpu
