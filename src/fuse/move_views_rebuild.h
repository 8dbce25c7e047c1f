// Internals of move_views (autofuse/fuse/move_views.h): one round of
// rewrites copies the source graph node by node into a new graph (graphs are
// append-only), and a rewrite replaces a node's outputs by values it builds
// in the new graph. Rewrites decide on the source graph (shapes, users) and
// plan completely before adding anything, so a refused rewrite leaves no
// nodes or guards behind.
#pragma once

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "autofuse/graph/graph.h"

namespace autofuse::fuse::move_views_detail {

/// One round's copy of `src` into a new graph.
class Rebuild {
 public:
  explicit Rebuild(const Graph& src);

  // ---- The source graph (what rewrites match on) ----
  const Graph& src() const { return src_; }
  const Value& value(ValueId v) const { return src_.value(v); }
  const Shape& shape(ValueId v) const { return src_.value(v).type.shape; }
  /// The producing node, nullptr for graph inputs.
  const Node* producer(ValueId v) const;
  /// Nodes reading `v` (each once, in graph order).
  const std::vector<NodeId>& users(ValueId v) const { return users_[static_cast<size_t>(v)]; }
  bool is_output(ValueId v) const { return is_output_[static_cast<size_t>(v)]; }
  /// Equal for every binding that passes the guards (ShapeEnv::known_equal).
  bool equal(const sym::Expr& a, const sym::Expr& b) const;
  bool is_one(const sym::Expr& d) const { return equal(d, sym::Expr(1)); }

  // ---- The new graph ----
  const Graph& dst() const { return dst_; }
  /// The new value standing for source value `v` (already copied or replaced).
  ValueId mapped(ValueId v) const;
  /// Adds a single-output node to the new graph.
  ValueId add(OpKind op, const std::vector<ValueId>& inputs, Attrs attrs, const std::string& name);
  /// Adds a split; output names `base` + "_0", "_1", ... (made unique).
  std::vector<ValueId> add_split(ValueId x, SplitAttrs attrs, const std::string& base);
  /// A name used neither in the source graph nor yet in the new one: `base`
  /// itself when free, else base_1, base_2, ...
  std::string fresh(const std::string& base);
  /// The source value `v` is now computed by new value `by` (same type).
  void replace(ValueId v, ValueId by);
  /// Copies a source node unchanged.
  void copy(const Node& node);
  /// Sets the outputs and hands over the new graph (call once).
  Graph finish();

 private:
  const Graph& src_;
  Graph dst_;
  std::vector<std::vector<NodeId>> users_;
  std::vector<bool> is_output_;
  std::vector<ValueId> map_;
  std::unordered_set<std::string> taken_;
};

/// A rewrite: applies to the node (adding the replacement of its outputs to
/// the new graph) and returns true, or returns false and adds nothing.
using RewriteFn = bool (*)(Rebuild&, const Node&);
struct Rewrite {
  const char* name;
  RewriteFn apply;
};

/// Elementwise ops (unary, binary, where, cast): movement commutes with them.
bool is_elementwise(OpKind op);
/// Elementwise ops worth recomputing on a slice rather than keeping a value
/// alive for another user (no transcendental functions, no division).
bool is_cheap(OpKind op);

// ---- A slice or a split of one value (the read side's unit) ----

/// A slice (one output) or a split (one output per size) of a value.
struct Selection {
  OpKind op = OpKind::Slice;  ///< Slice or Split
  SliceAttrs slice;           ///< op == Slice
  SplitAttrs split;           ///< op == Split
  int pieces() const { return op == OpKind::Split ? static_cast<int>(split.sizes.size()) : 1; }
  /// True when it selects along no axis (a split into one piece counts as
  /// selecting: it is only built by rewrites that split along an axis).
  bool empty() const { return op == OpKind::Slice && slice.axes.empty(); }
};

/// The selection of a node (a slice or split node).
Selection selection_of(const Node& node);

/// The selection `sel` of a broadcast result of shape `out` restricted to an
/// operand of shape `operand` (right-aligned, NumPy-style): the operand's own
/// axes, without those it broadcasts (size 1 there). Nullopt when a dim is
/// neither known equal to the result's nor 1.
std::optional<Selection> restrict_to_operand(const Rebuild& rb, const Selection& sel,
                                             const Shape& out, const Shape& operand);

/// Adds `sel` of new value `x` to the new graph: one value per piece (`x`
/// itself for every piece when `sel` is empty; a split at static points as
/// one slice per piece). Names from `base`.
std::vector<ValueId> emit_selection(Rebuild& rb, ValueId x, const Selection& sel,
                                    const std::string& base);

/// Piece `i` of a selection's result (a single value stands for every piece).
inline ValueId piece(const std::vector<ValueId>& pieces, size_t i) {
  return pieces.size() == 1 ? pieces[0] : pieces.at(i);
}

// ---- The rewrites (move_views_read.cpp, move_views_write.cpp) ----

/// reshape(ew(a, b)) -> ew(reshape a, reshape b) (move_views_reshape.cpp).
bool hoist_reshape_over_elementwise(Rebuild& rb, const Node& node);

/// concat of a few pieces of unequal static extent -> where over clamped
/// gathers of the pieces (move_views_concat.cpp).
bool concat_unequal_by_gather(Rebuild& rb, const Node& node);

/// Read side, in the order they are tried.
const std::vector<Rewrite>& read_rewrites();
/// Write side, in the order they are tried.
const std::vector<Rewrite>& write_rewrites();

}  // namespace autofuse::fuse::move_views_detail
