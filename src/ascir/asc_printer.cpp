// Canonical text form of an AscGraph (grammar in asc_text.h). Every field a
// node's kind uses is printed; the others hold defaults (verify checks it).
#include <string>

#include "ascir/asc_text.h"
#include "autofuse/ascir/asc_graph.h"

namespace autofuse::ascir {

namespace {

std::string join_exprs(const std::vector<sym::Expr>& exprs) {
  std::string out;
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (i > 0) out += ", ";
    out += exprs[i].to_string();
  }
  return out;
}

std::string join_ints(const std::vector<ValueId>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ", ";
    out += fmt::format("{}", ids[i]);
  }
  return out;
}

// The word after `=`: the op name for Compute/Reduce, else the kind.
std::string kind_word(const AscNode& n) {
  if (n.kind == AscKind::Compute || n.kind == AscKind::Reduce) return std::string(op_name(n.op));
  return text::kind_keyword(n.kind);
}

std::string node_args(const AscNode& n) {
  std::vector<std::string> args;
  for (int input : n.inputs)
    args.push_back(fmt::format("%{}", input));
  switch (n.kind) {
    case AscKind::Data:
    case AscKind::Output:
      args.push_back(fmt::format("arg={}", n.arg_index));
      break;
    case AscKind::Scalar:
      // Shortest text that reads back as the same double (inf, nan too).
      args.push_back(fmt::format("{}", n.scalar));
      break;
    case AscKind::Index:
      args.push_back(fmt::format("axis={}", n.axis));
      break;
    case AscKind::Cast:
      if (!n.saturate) args.push_back("saturate=false");  // the default is not written
      break;
    case AscKind::Gather:
      for (const GatherDim& d : n.gather) {
        args.push_back(fmt::format("stride={}", d.stride.to_string()));
        args.push_back(fmt::format("size={}", d.size.to_string()));
        if (d.name != n.name) args.push_back(fmt::format("name={}", d.name));
      }
      break;
    default:
      break;
  }
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) out += ", ";
    out += args[i];
  }
  return out;
}

}  // namespace

std::string print_asc_graph(const AscGraph& graph) {
  std::string out = fmt::format("kernel {} axes(", graph.name);
  for (size_t a = 0; a < graph.axes.size(); ++a) {
    const Axis& axis = graph.axes[a];
    if (a > 0) out += ", ";
    out +=
        fmt::format("{}: {}{}", axis.name, axis.size.to_string(), axis.reduced ? " reduced" : "");
  }
  out += fmt::format(") inputs({}) outputs({}) {{\n", join_ints(graph.inputs),
                     join_ints(graph.outputs));
  for (const AscNode& n : graph.nodes) {
    out += fmt::format("  %{} {} = {}({}) : {} repeats[{}]", n.id, n.name, kind_word(n),
                       node_args(n), dtype_name(n.dtype), join_exprs(n.view.repeats));
    if (n.kind == AscKind::Load || n.kind == AscKind::Gather || n.kind == AscKind::Store)
      out += fmt::format(" strides[{}] offset {}", join_exprs(n.view.strides),
                         n.view.offset.to_string());
    out += "\n";
  }
  out += "}\n";
  return out;
}

}  // namespace autofuse::ascir
