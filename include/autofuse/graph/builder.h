// C++ API for building graphs in code:
//
//   GraphBuilder b("layernorm");
//   auto N = sym::Expr::symbol("N"), D = sym::Expr::symbol("D");
//   Tensor x = b.input("x", DType::f32, {N, D});
//   Tensor mean = b.reduce_mean(x, {-1}, /*keepdims=*/true);
//   Tensor y = b.sub(x, mean);
//   Graph g = std::move(b).build({y});
//
// Every call verifies and infers at once (Graph::add_node), so a mistake is a
// UserError at the line that made it. Names are optional; unnamed values get
// fresh names (v0, v1, ...) that do not clash with given ones.
#pragma once

#include <string>
#include <vector>

#include "autofuse/graph/graph.h"

namespace autofuse {

class GraphBuilder;

/// A value being built. Only valid with the builder that made it. type()
/// and shape() refer into the graph's value table, which adding a node may
/// reallocate: copy a dim or shape that must outlive the next op
/// (`const Shape s = t.shape();`), never keep a reference across one.
struct Tensor {
  ValueId id = -1;
  GraphBuilder* builder = nullptr;

  const TensorType& type() const;
  const Shape& shape() const { return type().shape; }
  DType dtype() const { return type().dtype; }
  int rank() const { return type().rank(); }
};

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string graph_name = "main");

  Tensor input(const std::string& name, DType dtype, Shape shape);

  /// Any op, single output. `name` empty = a fresh name.
  Tensor op(OpKind op, const std::vector<Tensor>& inputs, Attrs attrs = NoAttrs{},
            const std::string& name = "");
  /// Any op, several outputs (split).
  std::vector<Tensor> op_multi(OpKind op, const std::vector<Tensor>& inputs, Attrs attrs,
                               int num_outputs, const std::vector<std::string>& names = {});

  // Elementwise.
  Tensor unary(OpKind op, Tensor x, const std::string& name = "") {
    return this->op(op, {x}, NoAttrs{}, name);
  }
  Tensor binary(OpKind op, Tensor a, Tensor b, const std::string& name = "") {
    return this->op(op, {a, b}, NoAttrs{}, name);
  }
  Tensor add(Tensor a, Tensor b, const std::string& name = "") {
    return binary(OpKind::Add, a, b, name);
  }
  Tensor sub(Tensor a, Tensor b, const std::string& name = "") {
    return binary(OpKind::Sub, a, b, name);
  }
  Tensor mul(Tensor a, Tensor b, const std::string& name = "") {
    return binary(OpKind::Mul, a, b, name);
  }
  Tensor div(Tensor a, Tensor b, const std::string& name = "") {
    return binary(OpKind::Div, a, b, name);
  }
  Tensor exp(Tensor x, const std::string& name = "") { return unary(OpKind::Exp, x, name); }
  Tensor sqrt(Tensor x, const std::string& name = "") { return unary(OpKind::Sqrt, x, name); }
  Tensor rsqrt(Tensor x, const std::string& name = "") { return unary(OpKind::Rsqrt, x, name); }
  Tensor where(Tensor cond, Tensor a, Tensor b, const std::string& name = "") {
    return op(OpKind::Where, {cond, a, b}, NoAttrs{}, name);
  }
  Tensor cast(Tensor x, DType to, const std::string& name = "") {
    return op(OpKind::Cast, {x}, CastAttrs{to}, name);
  }
  /// A cast with every attribute (saturate=false: a float8 target only).
  Tensor cast(Tensor x, CastAttrs attrs, const std::string& name = "") {
    return op(OpKind::Cast, {x}, attrs, name);
  }

  /// A scalar (rank-0) constant.
  Tensor scalar(double value, DType dtype = DType::f32, const std::string& name = "");
  Tensor constant(ConstantAttrs attrs, const std::string& name = "") {
    return op(OpKind::Constant, {}, std::move(attrs), name);
  }
  Tensor iota(DType dtype, Shape shape, int64_t axis, const std::string& name = "") {
    return op(OpKind::Iota, {}, IotaAttrs{dtype, std::move(shape), axis}, name);
  }

  // Shape and reductions.
  Tensor reduce(OpKind op, Tensor x, std::vector<int64_t> axes, bool keepdims,
                const std::string& name = "") {
    return this->op(op, {x}, ReduceAttrs{std::move(axes), keepdims}, name);
  }
  Tensor reduce_sum(Tensor x, std::vector<int64_t> axes, bool keepdims,
                    const std::string& name = "") {
    return reduce(OpKind::ReduceSum, x, std::move(axes), keepdims, name);
  }
  Tensor reduce_mean(Tensor x, std::vector<int64_t> axes, bool keepdims,
                     const std::string& name = "") {
    return reduce(OpKind::ReduceMean, x, std::move(axes), keepdims, name);
  }
  Tensor reduce_max(Tensor x, std::vector<int64_t> axes, bool keepdims,
                    const std::string& name = "") {
    return reduce(OpKind::ReduceMax, x, std::move(axes), keepdims, name);
  }
  Tensor broadcast_to(Tensor x, Shape shape, const std::string& name = "") {
    return op(OpKind::BroadcastTo, {x}, ShapeAttrs{std::move(shape)}, name);
  }
  Tensor reshape(Tensor x, Shape shape, const std::string& name = "") {
    return op(OpKind::Reshape, {x}, ShapeAttrs{std::move(shape)}, name);
  }
  Tensor transpose(Tensor x, std::vector<int64_t> perm, const std::string& name = "") {
    return op(OpKind::Transpose, {x}, TransposeAttrs{std::move(perm)}, name);
  }
  Tensor slice(Tensor x, SliceAttrs attrs, const std::string& name = "") {
    return op(OpKind::Slice, {x}, std::move(attrs), name);
  }
  Tensor concat(const std::vector<Tensor>& xs, int64_t axis, const std::string& name = "") {
    return op(OpKind::Concat, xs, AxisAttrs{axis}, name);
  }
  std::vector<Tensor> split(Tensor x, int64_t axis, std::vector<sym::Expr> sizes,
                            const std::vector<std::string>& names = {});
  Tensor gather(Tensor data, Tensor indices, int64_t axis, const std::string& name = "") {
    return op(OpKind::Gather, {data, indices}, AxisAttrs{axis}, name);
  }
  Tensor matmul(Tensor a, Tensor b, const std::string& name = "") {
    return binary(OpKind::MatMul, a, b, name);
  }

  const Graph& graph() const { return graph_; }
  /// Finishes the graph with the given outputs.
  Graph build(const std::vector<Tensor>& outputs) &&;

 private:
  std::string fresh_name();
  Tensor wrap(ValueId id) { return Tensor{id, this}; }

  Graph graph_;
  int next_name_ = 0;
};

}  // namespace autofuse
