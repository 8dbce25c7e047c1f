// move_views driver: rounds of rewrites until none applies. Each round copies
// the graph node by node, trying the read-side rewrites then the write-side
// ones on every node (at most one per node and round: rewrites decide on the
// round's source graph), then drops the nodes no output needs and merges
// duplicate slices and splits.
#include "autofuse/fuse/move_views.h"

#include <map>

#include "fuse/move_views_rebuild.h"

namespace autofuse::fuse {

namespace {

using move_views_detail::read_rewrites;
using move_views_detail::Rebuild;
using move_views_detail::Rewrite;
using move_views_detail::write_rewrites;

/// Rounds are few (each moves a slice one op up or a concat one op down);
/// the cap only guards against a rewrite cycle, which would be a bug. The
/// graph after the last round is still correct.
constexpr int kMaxRounds = 256;

/// Copies the nodes some graph output needs, in order. Slices and splits with
/// the same input and attributes become one (rewrites build a selection per
/// user), unless the later one is a graph output (which keeps its name).
Graph compact(const Graph& g) {
  std::vector<bool> live(g.values().size(), false);
  for (ValueId out : g.outputs())
    live[static_cast<size_t>(out)] = true;
  std::vector<bool> node_live(g.nodes().size(), false);
  for (auto it = g.nodes().rbegin(); it != g.nodes().rend(); ++it) {
    bool needed = false;
    for (ValueId out : it->outputs)
      needed = needed || live[static_cast<size_t>(out)];
    if (!needed) continue;
    node_live[static_cast<size_t>(it->id)] = true;
    for (ValueId in : it->inputs)
      live[static_cast<size_t>(in)] = true;
  }
  std::vector<bool> is_output(g.values().size(), false);
  for (ValueId out : g.outputs())
    is_output[static_cast<size_t>(out)] = true;

  Graph out(g.name());
  out.shape_env() = g.shape_env();
  std::vector<ValueId> map(g.values().size(), -1);
  for (ValueId in : g.inputs())
    map[static_cast<size_t>(in)] = out.add_input(g.value(in).name, g.value(in).type);
  std::vector<const Node*> selections;  // kept slices and splits (new inputs in `map`)
  for (const Node& node : g.nodes()) {
    if (!node_live[static_cast<size_t>(node.id)]) continue;
    std::vector<ValueId> inputs;
    for (ValueId in : node.inputs)
      inputs.push_back(map[static_cast<size_t>(in)]);
    const bool selection = node.op == OpKind::Slice || node.op == OpKind::Split;
    bool any_output = false;
    for (ValueId v : node.outputs)
      any_output = any_output || is_output[static_cast<size_t>(v)];
    if (selection && !any_output) {
      const Node* same = nullptr;
      for (const Node* kept : selections)
        if (kept->op == node.op && map[static_cast<size_t>(kept->inputs[0])] == inputs[0] &&
            kept->attrs == node.attrs)
          same = kept;
      if (same != nullptr) {
        for (size_t i = 0; i < node.outputs.size(); ++i)
          map[static_cast<size_t>(node.outputs[i])] = map[static_cast<size_t>(same->outputs[i])];
        continue;
      }
    }
    std::vector<std::string> names;
    for (ValueId v : node.outputs)
      names.push_back(g.value(v).name);
    const std::vector<ValueId> outs = out.add_node(node.op, inputs, node.attrs, names);
    for (size_t i = 0; i < outs.size(); ++i)
      map[static_cast<size_t>(node.outputs[i])] = outs[i];
    if (selection) selections.push_back(&node);
  }
  std::vector<ValueId> outputs;
  for (ValueId v : g.outputs())
    outputs.push_back(map[static_cast<size_t>(v)]);
  out.set_outputs(outputs);
  return out;
}

/// One round over `src`: the rewritten graph (not yet compacted) and the
/// rewrites applied, counted into `counts`.
int run_round(const Graph& src, Graph& result, std::map<std::string, int>& counts,
              std::vector<std::string>& order) {
  Rebuild rb(src);
  int applied = 0;
  for (const Node& node : src.nodes()) {
    bool done = false;
    for (const std::vector<Rewrite>* list : {&read_rewrites(), &write_rewrites()}) {
      for (const Rewrite& rewrite : *list) {
        if (!rewrite.apply(rb, node)) continue;
        if (counts[rewrite.name]++ == 0) order.emplace_back(rewrite.name);
        ++applied;
        done = true;
        break;
      }
      if (done) break;
    }
    if (!done) rb.copy(node);
  }
  result = rb.finish();
  return applied;
}

}  // namespace

MoveViewsResult move_views(std::shared_ptr<const Graph> graph) {
  AF_CHECK(graph != nullptr, "move_views without a graph");
  MoveViewsResult result;
  result.graph = graph;
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  // Dead nodes would count as users and block rewrites: start compacted.
  auto current = std::make_shared<const Graph>(compact(*graph));
  for (int round = 0; round < kMaxRounds; ++round) {
    Graph next(graph->name());
    const int applied = run_round(*current, next, counts, order);
    if (applied == 0) break;
    result.rewrites += applied;
    current = std::make_shared<const Graph>(compact(next));
  }
  if (result.rewrites == 0) return result;
  result.graph = current;
  for (const std::string& name : order)
    result.by_rewrite.emplace_back(name, counts[name]);
  return result;
}

}  // namespace autofuse::fuse
