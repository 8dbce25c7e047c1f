// Gather nodes (asc_graph.h): the index check, the safe read, and the
// report of a bad index to the kernel's af_status (kernel_abi.h).
//
// Per element of Gather %5 reading Data p0 with index %4 (n = gather_size):
//
//   const int64_t gr5 = (int64_t)v4;                 // the index as given
//   const int64_t gw5 = gr5 < 0 ? gr5 + n : gr5;     // negative: from the end
//   const bool gb5 = (uint64_t)gw5 >= (uint64_t)n;   // outside [0, n)
//   const float v5 = p0[b5 + ... + (gb5 ? 0 : gw5) * gather_stride];
//
// (unsigned index dtypes skip the negative case). A bad index reads index 0
// (and, when n is not provably >= 1, nothing: the value is 0), so no read is
// ever out of bounds. Outside a vector loop it is reported at once
// (af_gather_fail: the first report of the call wins). Inside one, a call
// would keep the loop from vectorizing, so the loop carries two reduction
// variables per Gather, `gf5` (|: some index was bad) and `gk5` (max: the
// largest bad index), declared before it and reported after it.
//
// Hoisting. When the index is a broadcast of a value %2 computed at an outer
// loop level (the embedding lookup: one index per row, broadcast along the
// hidden axis), the check runs once, right after %2 is defined (per call,
// per row; in the Reduction template in the row's stage, not per pass), and
// reports at once; the gathered row's offset is kept:
//
//   const int64_t go5 = (gb5 ? 0 : gw5) * gather_stride;
//   ... in the loop: const float v5 = p0[b5 + i1 + go5];   // a plain load
//
// The broadcast chain is then dead (operands()). A report needs an element
// actually read: in a Reduction's pass, the check is guarded by the sizes of
// the loops between the two levels when they may be 0 (a row with an empty
// reduced axis reads nothing). The values are those of the
// per-element form, and so is the report (one index per row: the loop's
// largest bad index was that index).
#include <algorithm>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "codegen/cpu/c_exprs.h"
#include "codegen/cpu/kernel_emitter.h"

namespace autofuse::codegen::cpu {

using ascir::AscKind;
using schedule::Template;

std::vector<int> KernelEmitter::operands(const AscNode& n) const {
  std::vector<int> out = n.inputs;
  const int src = hoist_src_.empty() ? -1 : hoist_src_.at(static_cast<size_t>(n.id));
  if (src >= 0) out.at(1) = src;
  return out;
}

void KernelEmitter::plan_gather_hoists() {
  hoist_src_.assign(graph_.nodes.size(), -1);
  for (const AscNode& n : graph_.nodes) {
    if (n.kind != AscKind::Gather) continue;
    int src = n.inputs.at(1);
    while (node(src).kind == AscKind::Broadcast)
      src = node(src).inputs.at(0);
    const auto at = static_cast<size_t>(src);
    // Tile vectors are arrays filled in a stage's tile loop: not a scalar
    // to check once (and at the tile level anyway).
    if (level_.at(at) < level_.at(static_cast<size_t>(n.id)) && !tile_vector_.at(at))
      hoist_src_[static_cast<size_t>(n.id)] = src;
  }
}

std::string KernelEmitter::gather_check(const AscNode& n, const std::string& index,
                                        const std::string& indent, const std::string& guard) const {
  const AscNode& index_node = node(n.inputs.at(1));
  AF_CHECK(is_integer(index_node.dtype), "gather {}: index {} is {}", n.name, index_node.name,
           dtype_name(index_node.dtype));
  const int id = n.id;
  const std::string bound = fmt::format("(int64_t)({})", expr(n.gather_size));
  std::string out;
  out += fmt::format("{}const int64_t gr{} = (int64_t){};  // {}: index {}\n", indent, id, index,
                     n.name, index_node.name);
  if (is_unsigned_integer(index_node.dtype)) {
    out += fmt::format("{0}const int64_t gw{1} = gr{1};\n", indent, id);
    out += fmt::format("{}const bool gb{} = (uint64_t){} >= (uint64_t){};\n", indent, id, index,
                       bound);
  } else {
    out += fmt::format("{0}const int64_t gw{1} = gr{1} < 0 ? gr{1} + {2} : gr{1};\n", indent, id,
                       bound);
    out +=
        fmt::format("{0}const bool gb{1} = (uint64_t)gw{1} >= (uint64_t){2};\n", indent, id, bound);
  }
  const int which = gather_id_.at(static_cast<size_t>(id));
  if (in_simd_) {
    out += fmt::format("{0}gf{1} |= (int)gb{1};\n", indent, id);
    out += fmt::format("{0}gk{1} = af_max(gk{1}, gb{1} ? gr{1} : INT64_MIN);\n", indent, id);
  } else {
    out += fmt::format("{0}if (gb{1}{2}) af_gather_fail(af_st, {3}, gr{1}, {4});\n", indent, id,
                       guard, which, bound);
  }
  return out;
}

void KernelEmitter::emit_gather_checks(int src, const std::string& indent, std::string& out) const {
  for (const AscNode& n : graph_.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (n.kind != AscKind::Gather || hoist_src_[id] != src || !live_[id]) continue;
    AF_CHECK(!in_simd_, "gather {}: hoisted check inside a vector loop", n.name);
    // The loops that compute the Gather may be empty (a Reduction's pass
    // over a reduced axis of size 0): then nothing is read, and the
    // per-element form reported nothing either.
    std::string guard;
    if (kernel_.kind == Template::Reduction && !kernel_.is_row_node.at(id)) {
      const int from = std::max(level_.at(static_cast<size_t>(src)) + 1, 1);
      for (int a = 0; a < graph_.num_axes(); ++a) {
        const int level = axis_level_[static_cast<size_t>(a)];
        if (level < from || level > level_[id]) continue;
        // (Symbols are >= 1 by contract, but a size of 0 runs: only literals skip it.)
        const sym::Expr& n_a = graph_.axes[static_cast<size_t>(a)].size;
        if (n_a.is_const() && sym::proven_ge(n_a, sym::Expr(1))) continue;
        guard += fmt::format(" && {} > 0", size(a));
      }
    }
    out += gather_check(n, value(src), indent, guard);
    out +=
        fmt::format("{0}const int64_t go{1} = (gb{1} ? 0 : gw{1}) * ({2});  // {3}: row offset\n",
                    indent, n.id, expr(n.gather_stride), n.name);
  }
}

std::string KernelEmitter::gather_value(const AscNode& n, const std::string& indent,
                                        std::string& out) const {
  const AscNode& data = node(n.inputs.at(0));
  const int id = n.id;
  std::string element;
  if (hoist_src_.at(static_cast<size_t>(id)) >= 0) {  // checked at an outer level
    element = fmt::format("p{}[{} + go{}]", data.arg_index, address(n), id);
  } else {
    out += gather_check(n, value(n.inputs.at(1)), indent, "");
    element = fmt::format("p{}[{} + (gb{} ? 0 : gw{}) * ({})]", data.arg_index, address(n), id, id,
                          expr(n.gather_stride));
  }
  std::string rhs = load_expr(n.dtype, element);
  // An empty gathered dim has no element 0 to read instead.
  if (!sym::proven_ge(n.gather_size, sym::Expr(1)))
    rhs = fmt::format("(gb{} ? ({})0 : {})", id, c_compute_type(n.dtype), rhs);
  return rhs;
}

std::vector<int> KernelEmitter::gathers_in(const std::vector<int>& nodes) const {
  std::vector<int> out;
  for (int id : nodes) {
    const auto at = static_cast<size_t>(id);
    if (node(id).kind == AscKind::Gather && live_.at(at) && hoist_src_.at(at) < 0)
      out.push_back(id);
  }
  return out;
}

std::string KernelEmitter::gather_clauses(const std::vector<int>& gathers) const {
  std::string out;
  for (int id : gathers)
    out += fmt::format(" reduction(|:gf{0}) reduction(max:gk{0})", id);
  return out;
}

std::string KernelEmitter::gather_flags(const std::vector<int>& gathers,
                                        const std::string& indent) const {
  std::string out;
  for (int id : gathers)
    out += fmt::format("{0}int gf{1} = 0;  // {2}: a bad index\n{0}int64_t gk{1} = INT64_MIN;\n",
                       indent, id, node(id).name);
  return out;
}

std::string KernelEmitter::gather_reports(const std::vector<int>& gathers,
                                          const std::string& indent) const {
  std::string out;
  for (int id : gathers)
    out += fmt::format("{0}if (gf{1}) af_gather_fail(af_st, {2}, gk{1}, (int64_t)({3}));\n", indent,
                       id, gather_id_.at(static_cast<size_t>(id)), expr(node(id).gather_size));
  return out;
}

void KernelEmitter::emit_simd(const std::vector<int>& nodes, const std::string& indent,
                              std::string& out,
                              const std::function<void(const std::string&)>& emit) const {
  const std::vector<int> gathers = gathers_in(nodes);
  if (gathers.empty()) {
    emit("");
    return;
  }
  struct InSimd {  // Gathers emitted in the loop set its flags
    const KernelEmitter& e;
    explicit InSimd(const KernelEmitter& emitter) : e(emitter) { e.in_simd_ = true; }
    ~InSimd() { e.in_simd_ = false; }
  };
  out += indent + "{\n";
  out += gather_flags(gathers, indent);
  {
    InSimd in_simd(*this);
    emit(gather_clauses(gathers));
  }
  out += gather_reports(gathers, indent);
  out += indent + "}\n";
}

}  // namespace autofuse::codegen::cpu
