// Internals of the random graph generator: one random subgraph, built on a
// GraphBuilder shared with the other subgraphs of the graph.
#pragma once

#include <cmath>
#include <vector>

#include "autofuse/graph/builder.h"
#include "fuzz/random_graph.h"

namespace autofuse::fuzz::detail {

/// A float value of the subgraph and what the generator knows about it.
struct Val {
  Tensor t;
  double lo = -1, hi = 1;  ///< every element lies in [lo, hi]
  /// Kernel and reference hold it bit for bit (so floor, compares, mod on
  /// it cannot flip); `fmt` then is a float type that holds it exactly.
  bool exact = false;
  DType fmt = DType::f32;
  DType rounding = DType::f32;  ///< see OutputSpec
  double scale = 1;             ///< see OutputSpec
  bool is_input = false;

  double mag() const { return std::max(std::abs(lo), std::abs(hi)); }
  DType dtype() const { return t.dtype(); }
  /// A copy: the graph's value table (which t.shape() points into) grows.
  Shape shape() const { return t.shape(); }
  int rank() const { return t.rank(); }
};

class SubgraphGen {
 public:
  SubgraphGen(GraphBuilder& b, uint64_t seed, const GenOptions& options, int index);

  /// Builds the subgraph; its outputs in order.
  std::vector<std::pair<Tensor, OutputSpec>> build();
  const Shape& base() const { return base_; }

 private:
  /// One subgraph in five gets a wide literal innermost dim (64..1024): the
  /// static rows that get code of their own (the vector pass of short rows,
  /// static trip counts), which symbols never produce.
  void wide_static_rows(uint64_t seed);
  // ---- values (random_graph.cpp) ----
  Val input(DType dtype, Shape shape);
  Val scalar(double value, DType dtype);
  Val integer_input(DType dtype, Shape shape);  ///< gather indices (not a float value)
  /// Registers a step's result (a candidate operand and output).
  Val keep(Val v);
  /// An operand: the chain head usually, else any kept value. (By value:
  /// pool_ grows while a step runs.)
  Val pick_operand();
  /// `shape` with some dims 1 and some leading dims dropped (still broadcasts).
  Shape partner_shape(const Shape& shape);
  /// An operand for a binary op with `a`: a kept value that broadcasts with
  /// it (and with `*also` if given), a fresh input or (if allowed) a scalar.
  Val partner(const Val& a, bool allow_scalar, const Shape* also = nullptr);
  /// A kept exact value (|x| <= 16) that broadcasts with `shape`, else a fresh input.
  Val exact_operand(const Shape& shape);
  DType random_float_dtype();

  // ---- ops with interval bookkeeping (random_ops.cpp) ----
  Val unary(OpKind op, const Val& x);
  Val binary(OpKind op, Val a, Val b);
  /// Casts x to `to` (to f32 instead when the values would not fit).
  Val cast(const Val& x, DType to);
  /// One dtype for both (either's, or f32 when needed to fit).
  void align_dtypes(Val& a, Val& b);
  Val where(Tensor cond, Val a, Val b);
  Val reduce(OpKind op, const Val& x, const std::vector<int64_t>& axes, bool keepdims);
  Val movement(const Val& x, Tensor out);                    ///< same values, rearranged
  Val movement_of(const std::vector<Val>& ins, Tensor out);  ///< concat
  /// A binary op with its operands first made safe for it (see random_ops.cpp).
  Val safe_binary(OpKind op, Val a, Val b);
  /// |x| <= limit (tanh, log, scaling) when it is not already.
  Val squash(const Val& x, double limit);
  /// x >= min_lo (abs + c, exp, x*x + c, sigmoid + c) when it is not already.
  Val positive(const Val& x, double min_lo = 0.25);
  /// A bool tensor that broadcasts with `shape`, equal in kernel and reference.
  Tensor condition(const Shape& shape, int depth = 0);
  /// Reduction axes of x over dims that cannot be empty (inner, outer,
  /// middle, several or all); {} reduces all. Empty optional: none allowed.
  bool choose_axes(const Val& x, std::vector<int64_t>& axes);
  /// r (reduced over `axes` of `like`) with the reduced dims back as 1.
  Val with_kept_dims(const Val& r, const Val& like, const std::vector<int64_t>& axes,
                     bool keepdims);

  // ---- steps (random_steps.cpp) ----
  Val step_unary();
  Val step_binary();
  Val step_where();
  Val step_cast();
  Val step_quantize();
  Val step_reduce();
  Val step_pattern();
  Val step_movement();
  Val reshape_step(const Val& x);
  Val slice_step(const Val& x);
  Val concat_step(const Val& x);
  Val split_step(const Val& x);
  Val gather_step(const Val& x);
  Val broadcast_step(const Val& x);

  GraphBuilder& b_;
  Rng rng_;
  const GenOptions& options_;
  int index_;
  Shape base_;
  std::vector<std::string> symbols_;  ///< the subgraph's symbols (each a dim of its first input)
  DType home_ = DType::f32;
  std::vector<Val> pool_;
  int head_ = -1;  ///< index in pool_ of the chain head
  int next_input_ = 0;
};

/// Broadcast-compatible without guards: trailing dims equal or literal 1.
bool broadcasts(const Shape& a, const Shape& b);
/// The broadcast of two shapes that broadcasts() accepts.
Shape broadcast_shape(const Shape& a, const Shape& b);
/// Coarser of two rounding types (f32 < f16 < bf16).
DType coarser(DType a, DType b);

}  // namespace autofuse::fuzz::detail
