// AscGraph basics: kind names, compute types, symbols, users.
#include "autofuse/ascir/asc_graph.h"

#include <set>

namespace autofuse::ascir {

namespace {
constexpr std::string_view kKindNames[] = {
#define AUTOFUSE_ASC_NAME(name, ...) #name,
    AUTOFUSE_ASC_KINDS(AUTOFUSE_ASC_NAME)
#undef AUTOFUSE_ASC_NAME
};
}  // namespace

std::string_view asc_kind_name(AscKind kind) {
  const auto index = static_cast<size_t>(kind);
  AF_CHECK(index < std::size(kKindNames), "bad AscKind {}", index);
  return kKindNames[index];
}

std::optional<AscKind> asc_kind_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kKindNames); ++i)
    if (kKindNames[i] == name) return static_cast<AscKind>(i);
  return std::nullopt;
}

DType compute_dtype(DType storage) {
  switch (storage) {
    case DType::f16:
    case DType::bf16:
      return DType::f32;
    default:
      return storage;
  }
}

std::vector<std::string> AscGraph::symbols() const {
  std::set<std::string> names;
  for (const Axis& axis : axes)
    sym::collect_symbols(axis.size, names);
  for (const AscNode& n : nodes) {
    for (const sym::Expr& e : n.view.strides)
      sym::collect_symbols(e, names);
    sym::collect_symbols(n.view.offset, names);
    for (const GatherDim& d : n.gather) {
      sym::collect_symbols(d.stride, names);
      sym::collect_symbols(d.size, names);
    }
  }
  return {names.begin(), names.end()};
}

std::vector<std::vector<int>> AscGraph::users() const {
  std::vector<std::vector<int>> out(nodes.size());
  for (const AscNode& n : nodes)
    for (int in : n.inputs) {
      AF_CHECK(in >= 0 && static_cast<size_t>(in) < nodes.size(), "node {} reads bad id {}", n.id,
               in);
      // A node reading the same input twice (mul(x, x)) is one user.
      auto& list = out[static_cast<size_t>(in)];
      if (list.empty() || list.back() != n.id) list.push_back(n.id);
    }
  return out;
}

}  // namespace autofuse::ascir
