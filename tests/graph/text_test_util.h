// Helpers shared by the text-format tests.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <string>

#include "autofuse/graph/text.h"

namespace autofuse::testing {

/// Attrs equality that treats NaN constant values as equal when their bits
/// are (ConstantAttrs::operator== would call NaN != NaN).
inline bool same_attrs(const Attrs& a, const Attrs& b) {
  const auto* ca = std::get_if<ConstantAttrs>(&a);
  const auto* cb = std::get_if<ConstantAttrs>(&b);
  if (ca == nullptr || cb == nullptr) return a == b;
  if (ca->dtype != cb->dtype || ca->shape != cb->shape || ca->values.size() != cb->values.size()) {
    return false;
  }
  for (size_t i = 0; i < ca->values.size(); ++i) {
    if (std::bit_cast<uint64_t>(ca->values[i]) != std::bit_cast<uint64_t>(cb->values[i])) {
      return false;
    }
  }
  return true;
}

/// Structural equality of two graphs: names, types, nodes, attributes,
/// outputs and guards.
inline void expect_same_structure(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.name(), b.name());
  EXPECT_EQ(a.inputs(), b.inputs());
  EXPECT_EQ(a.outputs(), b.outputs());
  ASSERT_EQ(a.values().size(), b.values().size());
  for (size_t i = 0; i < a.values().size(); ++i) {
    const Value& va = a.values()[i];
    const Value& vb = b.values()[i];
    EXPECT_EQ(va.name, vb.name);
    EXPECT_EQ(va.type, vb.type) << va.name << ": " << va.type.to_string() << " vs "
                                << vb.type.to_string();
    EXPECT_EQ(va.producer, vb.producer);
    EXPECT_EQ(va.output_index, vb.output_index);
  }
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const Node& na = a.nodes()[i];
    const Node& nb = b.nodes()[i];
    EXPECT_EQ(na.op, nb.op);
    EXPECT_EQ(na.inputs, nb.inputs);
    EXPECT_EQ(na.outputs, nb.outputs);
    EXPECT_TRUE(same_attrs(na.attrs, nb.attrs))
        << "attributes of node " << i << " (" << op_name(na.op) << ") differ";
  }
  const auto& ga = a.shape_env().guards();
  const auto& gb = b.shape_env().guards();
  ASSERT_EQ(ga.size(), gb.size());
  for (size_t i = 0; i < ga.size(); ++i) {
    EXPECT_EQ(ga[i].condition_text(), gb[i].condition_text());
    EXPECT_EQ(ga[i].kind, gb[i].kind);
    EXPECT_EQ(ga[i].reason, gb[i].reason);
  }
}

/// Prints `g`, parses the text back and checks that the result prints the
/// same and has the same structure. Returns the printed text.
inline std::string expect_round_trip(const Graph& g) {
  const std::string printed = print_graph(g);
  Graph reparsed = [&] {
    try {
      return parse_graph(printed, "printed.af");
    } catch (const UserError& e) {
      ADD_FAILURE() << "printed text does not parse: " << e.what() << "\n" << printed;
      throw;
    }
  }();
  EXPECT_EQ(print_graph(reparsed), printed);
  expect_same_structure(g, reparsed);
  return printed;
}

}  // namespace autofuse::testing
