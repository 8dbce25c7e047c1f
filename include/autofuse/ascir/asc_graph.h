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
// A Data's repeats are not tied to its readers' (a buffer read through
// several views, e.g. slices of one input, has one Data node and Loads of
// different repeats; a buffer read only through views has repeats 1).
// An Output has one or more Stores, all into its buffer and of its dtype,
// each with its own view: a concat written in pieces is one Store per piece
// at the piece's offset (pieces never overlap; a piece may be constant
// along axes where others vary, e.g. a reduced row between full ones). The
// Output's repeats are the union of its Stores' (the axis size where some
// Store varies), so with one Store they are that Store's. A Reduce
// reduces its input over the reduced axes along which the input varies (an
// input repeat of 1 on a reduced axis is one element: reducing a value that
// does not vary there is the value). Fields a kind does not use keep their
// defaults (strides empty, offset 0, arg_index -1, axis -1, gather empty);
// verify() checks it.
//
// Gather (ONNX Gather, embedding lookup; a chain of gathers, e.g. a Pad of
// several axes): a Load whose coordinates along one or more buffer dims
// come from loaded values. inputs = {Data, index_0, ..., index_m-1}, one
// GatherDim per index: each index has an integer dtype and the Gather's
// repeats. Per element, with k_j the value of index j and n_j =
// gather[j].size: k_j < 0 counts from the end (k_j += n_j); k_j outside
// [0, n_j) is a run-time error, reported through the kernel's af_status
// (kernel_abi.h) as gather[j].name, and reads with k_j = 0 instead (never
// out of bounds); the element is buffer[offset + sum(strides * i) +
// sum_j(k_j * gather[j].stride)]. Strides and offset are as for a Load (the
// non-gathered part of the address).
//
// Values flow in the compute type of their dtype: f32, f16 and bf16 compute
// in f32, f64 in f64, integers in their own type, bool as bool. Loads and
// Gathers convert from the storage dtype, Stores convert to it.
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
  X(Gather)    /* read a Data at view + sum(index_j * gather[j].stride) */       \
  X(Scalar)    /* compile-time constant: scalar, in dtype */                     \
  X(Index)     /* iota: the loop index along `axis`, in dtype */                 \
  X(Compute)   /* elementwise op (unary, binary, compare, logical, where) */     \
  X(Cast)      /* convert to dtype */                                            \
  X(Broadcast) /* stretch repeat-1 axes of the input to this node's repeats */   \
  X(Reduce)    /* op = ReduceSum/Mean/Max/Min/Prod over the reduced axes */      \
  X(Store)     /* write the input to an Output through view (strides, offset) */ \
  X(Output)    /* a kernel output buffer: arg_index; inputs = its Stores */

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
  std::vector<sym::Expr> strides;  ///< per axis, elements (Load/Gather/Store only)
  sym::Expr offset;                ///< elements (Load/Gather/Store only)

  /// Whether the value changes along loop axis `axis` (its repeat there is
  /// not 1; an axis of size 1 never varies).
  bool varies_along(int axis) const {
    return repeats.at(static_cast<size_t>(axis)) != sym::Expr(1);
  }
};

/// One gathered buffer dim of a Gather; its index is the node's input 1 + j.
struct GatherDim {
  sym::Expr stride;  ///< elements per index step
  sym::Expr size;    ///< n, the dim's size (indices in [-n, n))
  std::string name;  ///< the graph gather it comes from (its bad-index report names it)
  bool operator==(const GatherDim&) const = default;
};

struct AscNode {
  int id = 0;
  AscKind kind = AscKind::Compute;
  std::string name;  ///< unique; from the graph value when there is one
  DType dtype = DType::f32;
  std::vector<int> inputs;
  View view;
  OpKind op = OpKind::Add;        ///< Compute and Reduce
  int arg_index = -1;             ///< Data: input index; Output: output index
  double scalar = 0;              ///< Scalar
  int axis = -1;                  ///< Index
  bool saturate = true;           ///< Cast to a float8 dtype: CastAttrs::saturate
  std::vector<GatherDim> gather;  ///< Gather: one per index input, in input order
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
  /// Symbols used by axis sizes, strides, offsets and gather fields, sorted.
  std::vector<std::string> symbols() const;
};

/// Checks the IR's invariants (InternalError on violation): ids dense and
/// topological, inputs by kind, view ranks, repeats 1 or axis size,
/// Broadcast/Reduce consistent with their input, Gather index an integer
/// over the Gather's repeats, Data/Output indices dense, every Store read by
/// exactly one Output (of the Store's dtype).
void verify(const AscGraph& graph);

/// Text form, one node per line; parse_asc_graph reads it back
/// (print(parse(print(g))) == print(g)). UserError with line:col on bad text.
std::string print_asc_graph(const AscGraph& graph);
AscGraph parse_asc_graph(std::string_view text);

}  // namespace autofuse::ascir
