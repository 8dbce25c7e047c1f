// The op-level graph IR: values with symbolic shapes, nodes that produce
// them, and the ShapeEnv holding the guards that shape inference recorded.
//
// A Graph is built append-only: add_input() and add_node() verify the node,
// infer its output types and record guards, so every Graph in existence is
// valid and fully typed. Nodes and values are plain immutable records once
// added; ids are dense indices into the graph's tables, in topological order.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "autofuse/error.h"
#include "autofuse/graph/dtype.h"
#include "autofuse/graph/ops.h"
#include "autofuse/sym/shape_env.h"

namespace autofuse {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr NodeId kNoNode = -1;

struct TensorType {
  DType dtype = DType::f32;
  Shape shape;
  int rank() const { return static_cast<int>(shape.size()); }
  bool operator==(const TensorType&) const = default;
  /// `f32[N, 768]`
  std::string to_string() const;
};

/// Number of elements of a shape (product of dims).
sym::Expr numel(const Shape& shape);

struct Value {
  ValueId id;
  std::string name;  ///< unique in the graph, a C identifier
  TensorType type;
  NodeId producer = kNoNode;  ///< kNoNode for graph inputs
  int output_index = 0;
};

struct Node {
  NodeId id;
  OpKind op;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attrs attrs;  ///< normalized (e.g. axes non-negative)
};

class Graph {
 public:
  explicit Graph(std::string name = "main");

  const std::string& name() const { return name_; }

  /// Declares a graph input. Symbols in its shape become the graph's symbols.
  /// UserError on a duplicate or invalid name.
  ValueId add_input(const std::string& name, TensorType type, const SourceLocation& where = {});

  /// Verifies and appends a node, infers and returns its outputs.
  /// `output_names` must hold one unique name per output (the number of
  /// outputs is 1 except for split). UserError naming the node and op on any
  /// problem (wrong input count, bad attribute, incompatible shapes or dtypes).
  std::vector<ValueId> add_node(OpKind op, const std::vector<ValueId>& inputs, Attrs attrs,
                                const std::vector<std::string>& output_names,
                                const SourceLocation& where = {});

  /// Marks graph outputs (in order). A value may be listed once.
  void set_outputs(const std::vector<ValueId>& outputs, const SourceLocation& where = {});

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Value& value(ValueId id) const;
  const Node& node(NodeId id) const;
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  std::optional<ValueId> find_value(const std::string& name) const;

  /// Symbols of the graph: those in input shapes (in order of appearance),
  /// then any that only appear in attributes.
  std::vector<std::string> symbols() const;

  sym::ShapeEnv& shape_env() { return shape_env_; }
  const sym::ShapeEnv& shape_env() const { return shape_env_; }

  /// Number of nodes that use each value (graph outputs count as a use).
  std::vector<int> use_counts() const;

 private:
  ValueId new_value(const std::string& name, TensorType type, NodeId producer, int index,
                    const SourceLocation& where);

  std::string name_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<std::string> symbols_;
  std::unordered_map<std::string, ValueId> value_by_name_;
  sym::ShapeEnv shape_env_;
};

/// Type inference for one op, used by Graph::add_node. Normalizes `attrs` in
/// place (e.g. negative axes). Throws UserError (without location; the
/// caller adds it) on a problem. `reason_prefix` names the node in guard
/// reasons.
std::vector<TensorType> infer_types(OpKind op, const std::vector<TensorType>& inputs, Attrs& attrs,
                                    sym::ShapeEnv& env, const std::string& reason_prefix);

/// Symbolic NumPy broadcast of two shapes: size-1 dims stretch; a symbol
/// against an equal expression is fine; two expressions not proven equal and
/// neither proven 1 are guarded equal (Expect guard). UserError when two
/// dims are proven different and neither is 1.
Shape broadcast_shapes(const Shape& a, const Shape& b, sym::ShapeEnv& env,
                       const std::string& reason_prefix);

/// The first index a slice reads along a dim of size `dim` (Python
/// semantics, as inference clamps it): element j of the slice is element
/// first + j * step of the input. Used to address slices as views.
sym::Expr slice_first_index(const sym::ShapeEnv& env, const sym::Expr& dim, int64_t start,
                            int64_t step);

}  // namespace autofuse
