// AscGraph: the loop-level IR of one fused region (after AutoFuse's AscIR).
//
// One iteration space: `axes` (outer to inner, symbolic sizes; some marked
// reduced). Every node's result is a tensor over ALL axes described by its
// View: `repeats[i]` is the axis size (the tensor varies along axis i) or 1
// (constant along it: broadcast, or reduced away). Loads and Stores also
// carry element `strides` and an element `offset` into their buffer
// (stride 0 on repeat-1 axes). Reductions keep dims: a Reduce's repeats are 1
// on the reduced axes; Broadcast is explicit (repeats 1 -> axis size) where a
// repeat-1 tensor meets a full one, as in AutoFuse's HintGraph.
//
// Data and Output carry the repeats of their buffer (equal to those of the
// Load/Store that uses them). A Reduce reduces its input over the reduced
// axes along which the input varies (an input repeat of 1 on a reduced axis
// is one element: reducing a value that does not vary there is the value).
// Fields a kind does not use keep their defaults (strides empty, offset 0,
// arg_index -1, axis -1); verify() checks it.
//
// Values flow in the compute type of their dtype: f32, f16 and bf16 compute
// in f32, f64 in f64, integers in their own type, bool as bool. Loads convert
// from the storage dtype, Stores convert to it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autofuse/graph/graph.h"

namespace autofuse::ascir {

#define AUTOFUSE_ASC_KINDS(X)                                                    \
  X(Data)      /* a kernel input buffer: arg_index */                            \
  X(Load)      /* read a Data through view (strides, offset) */                  \
  X(Scalar)    /* compile-time constant: scalar, in dtype */                     \
  X(Index)     /* iota: the loop index along `axis`, in dtype */                 \
  X(Compute)   /* elementwise op (unary, binary, compare, logical, where) */     \
  X(Cast)      /* convert to dtype */                                            \
  X(Broadcast) /* stretch repeat-1 axes of the input to this node's repeats */   \
  X(Reduce)    /* op = ReduceSum/Mean/Max/Min/Prod over the reduced axes */      \
  X(Store)     /* write the input to an Output through view (strides, offset) */ \
  X(Output)    /* a kernel output buffer: arg_index; input = its Store */

enum class AscKind : uint8_t {
#define AUTOFUSE_ASC_ENUM(name, ...) name,
  AUTOFUSE_ASC_KINDS(AUTOFUSE_ASC_ENUM)
#undef AUTOFUSE_ASC_ENUM
};
std::string_view asc_kind_name(AscKind kind);
/// The kind whose asc_kind_name() is `name` (case-sensitive); nullopt if none.
std::optional<AscKind> asc_kind_from_name(std::string_view name);

/// The type a value of storage dtype `storage` is computed in: f32 for
/// f32/f16/bf16, the dtype itself otherwise.
DType compute_dtype(DType storage);

struct Axis {
  std::string name;  ///< "z0", "z1", ... (merged axes keep the outer name)
  sym::Expr size;
  bool reduced = false;
};

struct View {
  std::vector<sym::Expr> repeats;  ///< per axis: the axis size, or 1
  std::vector<sym::Expr> strides;  ///< per axis, elements (Load/Store only)
  sym::Expr offset;                ///< elements (Load/Store only)
};

struct AscNode {
  int id = 0;
  AscKind kind = AscKind::Compute;
  std::string name;  ///< unique; from the graph value when there is one
  DType dtype = DType::f32;
  std::vector<int> inputs;
  View view;
  OpKind op = OpKind::Add;  ///< Compute and Reduce
  int arg_index = -1;       ///< Data: input index; Output: output index
  double scalar = 0;        ///< Scalar
  int axis = -1;            ///< Index
  bool saturate = true;     ///< Cast to a float8 dtype: CastAttrs::saturate
};

struct AscGraph {
  std::string name;
  std::vector<Axis> axes;
  std::vector<AscNode> nodes;    ///< topological order; ids are indices
  std::vector<ValueId> inputs;   ///< graph value behind Data arg i
  std::vector<ValueId> outputs;  ///< graph value behind Output arg i

  const AscNode& node(int id) const { return nodes.at(static_cast<size_t>(id)); }
  int num_axes() const { return static_cast<int>(axes.size()); }
  /// Per node id, the ids of the nodes that read it (ascending).
  std::vector<std::vector<int>> users() const;
  /// Symbols used by axis sizes, strides and offsets, sorted.
  std::vector<std::string> symbols() const;
};

/// Checks the IR's invariants (InternalError on violation): ids dense and
/// topological, inputs by kind, view ranks, repeats 1 or axis size,
/// Broadcast/Reduce consistent with their input, Data/Output indices dense.
void verify(const AscGraph& graph);

/// Text form, one node per line; parse_asc_graph reads it back
/// (print(parse(print(g))) == print(g)). UserError with line:col on bad text.
std::string print_asc_graph(const AscGraph& graph);
AscGraph parse_asc_graph(std::string_view text);

}  // namespace autofuse::ascir
