// Template choice and pass assignment for one AscGraph (see schedule.h).
//
// Passes of the Reduction template: a Reduce finishes when the pass that
// computes it ends, so whatever reads its result (directly, or through row
// nodes) can only run from the next pass on. For each node, `ready` below is
// the number of passes that must have finished before its value exists for
// a whole row; a full node's (first) pass and a row node's node_pass are the
// maximum `ready` of its inputs.
//
// Layout of a Reduction: the vector loop must walk memory contiguously, so
// it runs along the last axis that has more than one element (axes of
// literal size 1 do not move through memory): the row layout when that axis
// is reduced, the column layout (tiles of that kept axis) when it is kept.
//
// Centered moments (centered_moments.cpp) are found after a first pass
// assignment; the passes are then assigned again with each moment in its
// mean's pass. The pass that used to compute it remains only if something
// else needs it (batch-norm's output does; statistics alone do not).
#include <algorithm>
#include <string>

#include "autofuse/schedule/schedule.h"

namespace autofuse::schedule {

namespace {

using ascir::AscGraph;
using ascir::AscKind;
using ascir::AscNode;

bool is_row(const AscGraph& g, const AscNode& n) {
  for (size_t a = 0; a < g.axes.size(); ++a)
    if (g.axes[a].reduced && n.view.repeats[a] != sym::Expr(1)) return false;
  return true;
}

void assign_passes(ScheduledKernel& k) {
  const AscGraph& g = k.graph;
  const size_t count = g.nodes.size();
  std::vector<int> ready(count, 0);
  int last_pass = 0;
  // Nodes only centered moments read (their squares): the moment's loop
  // computes them in the mean's pass, so the pass after it need not exist
  // for them.
  std::vector<bool> moment_only(count, false);
  if (!k.moments.empty()) {
    const std::vector<std::vector<int>> users = g.users();
    for (size_t i = count; i-- > 0;) {
      bool only = !users[i].empty();
      for (int u : users[i])
        only = only && (k.moment_of(u) != nullptr || moment_only[static_cast<size_t>(u)]);
      moment_only[i] = only;
    }
  }
  for (const AscNode& n : g.nodes) {
    const auto id = static_cast<size_t>(n.id);
    k.is_row_node[id] = is_row(g, n);
    int pass = 0;
    for (int in : n.inputs)
      pass = std::max(pass, ready[static_cast<size_t>(in)]);
    if (n.kind == AscKind::Data || n.kind == AscKind::Output) pass = 0;
    if (const CenteredMoment* m = k.moment_of(n.id))  // runs in its mean's pass
      pass = k.node_pass[static_cast<size_t>(m->mean)];
    k.node_pass[id] = pass;
    if (n.kind == AscKind::Reduce) {
      ready[id] = pass + 1;  // complete once its pass has run over the row
      last_pass = std::max(last_pass, pass);
    } else {
      ready[id] = pass;
      if (!k.is_row_node[id] && !moment_only[id]) last_pass = std::max(last_pass, pass);
    }
  }
  k.num_passes = last_pass + 1;
}

// The axis the vector loop should run along: the last one whose size is not
// the literal 1 (the last axis when all are).
int contiguous_axis(const AscGraph& g) {
  for (int a = g.num_axes(); a-- > 0;)
    if (g.axes[static_cast<size_t>(a)].size != sym::Expr(1)) return a;
  return g.num_axes() - 1;
}

std::string axis_list(const AscGraph& g, const std::vector<int>& axes) {
  std::string out = "[";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i > 0) out += ", ";
    out += g.axes.at(static_cast<size_t>(axes[i])).name;
  }
  return out + "]";
}

}  // namespace

ScheduledKernel schedule_kernel(ascir::AscGraph graph) {
  ascir::verify(graph);
  merge_axes(graph);
  ScheduledKernel k;
  k.graph = std::move(graph);
  const AscGraph& g = k.graph;
  const bool has_reduce = std::any_of(g.nodes.begin(), g.nodes.end(),
                                      [](const AscNode& n) { return n.kind == AscKind::Reduce; });
  k.kind = has_reduce ? Template::Reduction : Template::Elementwise;
  k.node_pass.assign(g.nodes.size(), 0);
  k.is_row_node.assign(g.nodes.size(), false);
  const int rank = g.num_axes();
  if (k.kind == Template::Elementwise) {
    for (int a = 0; a + 1 < rank; ++a)
      k.outer_axes.push_back(a);
    if (rank > 0) k.inner_axes.push_back(rank - 1);
    return k;
  }
  for (int a = 0; a < rank; ++a)
    (g.axes[static_cast<size_t>(a)].reduced ? k.inner_axes : k.outer_axes).push_back(a);
  const int contiguous = contiguous_axis(g);
  if (contiguous >= 0 && !g.axes[static_cast<size_t>(contiguous)].reduced) k.tile_axis = contiguous;
  assign_passes(k);
  k.moments = find_centered_moments(k);
  if (!k.moments.empty()) assign_passes(k);
  return k;
}

const CenteredMoment* ScheduledKernel::moment_of(int id) const {
  for (const CenteredMoment& m : moments)
    if (m.moment == id) return &m;
  return nullptr;
}

std::vector<int> ScheduledKernel::row_axes() const {
  std::vector<int> rows;
  for (int a : outer_axes)
    if (a != tile_axis) rows.push_back(a);
  return rows;
}

int split_phases(const ScheduledKernel& k) {
  if (k.kind != Template::Reduction) return 0;
  for (const AscNode& n : k.graph.nodes) {
    const auto id = static_cast<size_t>(n.id);
    if (n.kind == AscKind::Store && k.is_row_node[id] && k.node_pass[id] == k.num_passes)
      return k.num_passes + 1;
  }
  return k.num_passes;
}

std::string print_schedule(const ScheduledKernel& k) {
  const AscGraph& g = k.graph;
  std::string out = ascir::print_asc_graph(g);
  if (k.kind == Template::Elementwise) {
    out += fmt::format("schedule elementwise outer{} inner{}\n", axis_list(g, k.outer_axes),
                       axis_list(g, k.inner_axes));
    return out;
  }
  const std::string tile =
      k.tile_axis >= 0 ? fmt::format(" tile{}", axis_list(g, {k.tile_axis})) : std::string();
  out += fmt::format("schedule reduction outer{} inner{}{} passes {}\n", axis_list(g, k.outer_axes),
                     axis_list(g, k.inner_axes), tile, k.num_passes);
  for (const AscNode& n : g.nodes) {
    const auto id = static_cast<size_t>(n.id);
    const char* role = n.kind == AscKind::Reduce ? "reduce" : k.is_row_node[id] ? "row" : "pass";
    std::string moment;
    if (const CenteredMoment* m = k.moment_of(n.id))
      moment = fmt::format(" moment of %{} center %{}", m->mean, m->center);
    out += fmt::format("  %{} {}: {} {}{}\n", n.id, n.name, role, k.node_pass[id], moment);
  }
  return out;
}

}  // namespace autofuse::schedule
