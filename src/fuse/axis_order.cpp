#include "fuse/axis_order.h"

#include <map>
#include <set>
#include <utility>

#include "autofuse/error.h"

namespace autofuse::fuse::detail {

std::optional<std::vector<int>> order_axes(int num_axes, const std::vector<int>& priority,
                                           const std::vector<AxisChain>& chains,
                                           std::vector<int>& cycle_owners) {
  AF_CHECK(static_cast<int>(priority.size()) == num_axes, "{} priorities for {} axes",
           priority.size(), num_axes);
  std::vector<std::set<int>> succ(num_axes);
  std::vector<int> indegree(num_axes, 0);
  std::map<std::pair<int, int>, int> edge_owner;  // first chain that asked for the edge
  for (const AxisChain& chain : chains)
    for (size_t i = 1; i < chain.axes.size(); ++i) {
      const int from = chain.axes[i - 1], to = chain.axes[i];
      AF_CHECK(from >= 0 && from < num_axes && to >= 0 && to < num_axes && from != to,
               "bad axis chain");
      if (succ[from].insert(to).second) ++indegree[to];
      edge_owner.emplace(std::make_pair(from, to), chain.owner);
    }

  std::set<std::pair<int, int>> ready;  // (priority, axis)
  for (int a = 0; a < num_axes; ++a)
    if (indegree[a] == 0) ready.emplace(priority[a], a);
  std::vector<int> order;
  while (!ready.empty()) {
    const int axis = ready.begin()->second;
    ready.erase(ready.begin());
    order.push_back(axis);
    for (int next : succ[axis])
      if (--indegree[next] == 0) ready.emplace(priority[next], next);
  }
  if (static_cast<int>(order.size()) == num_axes) return order;

  // Every unplaced axis has an unplaced predecessor: walk predecessors until
  // one repeats, then collect the owners of the edges around that cycle.
  std::map<int, int> pred;
  for (const auto& [edge, owner] : edge_owner)
    if (indegree[edge.first] > 0 && indegree[edge.second] > 0)
      pred.emplace(edge.second, edge.first);
  AF_CHECK(!pred.empty(), "unplaced axes without a cycle");
  int at = pred.begin()->first;
  std::set<int> seen;
  while (seen.insert(at).second)
    at = pred.at(at);
  std::set<int> owners;
  const int start = at;
  do {
    owners.insert(edge_owner.at({pred.at(at), at}));
    at = pred.at(at);
  } while (at != start);
  cycle_owners.assign(owners.begin(), owners.end());
  return std::nullopt;
}

}  // namespace autofuse::fuse::detail
