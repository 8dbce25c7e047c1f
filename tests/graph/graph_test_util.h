// Helpers for the graph tests: one-node graphs and error capture.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/graph/graph.h"

namespace autofuse::graph_test {

inline sym::Expr S(const std::string& name) {
  return sym::Expr::symbol(name);
}
/// The symbols the graph tests' shapes use.
inline const sym::Expr N = S("N"), M = S("M"), D = S("D"), B = S("B"), K = S("K");

/// what() of the UserError `fn` throws; a test failure if it throws nothing.
inline std::string user_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return "<no error>";
}

/// A graph with inputs a, b, c, ... of the given types and one node `y`
/// (for split: y0, y1, ...) applying `op` to them.
struct OneNode {
  Graph graph;
  std::vector<ValueId> outputs;

  OneNode(OpKind op, const std::vector<TensorType>& inputs, Attrs attrs, int num_outputs = 1,
          const std::vector<std::pair<std::string, int64_t>>& hints = {}) {
    for (const auto& [symbol, value] : hints)
      graph.shape_env().set_hint(symbol, value);
    std::vector<ValueId> ids;
    for (size_t i = 0; i < inputs.size(); ++i)
      ids.push_back(graph.add_input(std::string(1, static_cast<char>('a' + i)), inputs[i]));
    std::vector<std::string> names;
    if (num_outputs == 1) {
      names.push_back("y");
    } else {
      for (int i = 0; i < num_outputs; ++i)
        names.push_back("y" + std::to_string(i));
    }
    outputs = graph.add_node(op, ids, std::move(attrs), names);
  }

  std::string type(int i = 0) const { return graph.value(outputs.at(i)).type.to_string(); }
  const Attrs& attrs() const { return graph.nodes().back().attrs; }
  /// Guards as "condition [reason]", in order.
  std::vector<std::string> guards() const {
    std::vector<std::string> out;
    for (const sym::Guard& g : graph.shape_env().guards())
      out.push_back(g.condition_text() + " [" + g.reason + "]");
    return out;
  }
};

/// Output type of a single-output node, as text.
inline std::string infer1(OpKind op, const std::vector<TensorType>& inputs,
                          Attrs attrs = NoAttrs{}) {
  return OneNode(op, inputs, std::move(attrs)).type();
}

/// The error of adding such a node.
inline std::string infer_error(OpKind op, const std::vector<TensorType>& inputs,
                               Attrs attrs = NoAttrs{}, int num_outputs = 1) {
  return user_error_of([&] { OneNode(op, inputs, std::move(attrs), num_outputs); });
}

inline TensorType T(DType dtype, Shape shape) {
  return TensorType{dtype, std::move(shape)};
}

}  // namespace autofuse::graph_test
