// Shared helpers of the per-op-class type inference (infer_*.cpp). Internal to
// the graph module.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "autofuse/graph/graph.h"

namespace autofuse::graph_detail {

/// What every inference routine needs: the op, the env to query and guard,
/// and the node description for guard reasons.
struct InferContext {
  OpKind op;
  sym::ShapeEnv& env;
  const std::string& reason_prefix;  ///< e.g. "node 'y' (add)"; may be empty

  std::string_view op_name() const { return autofuse::op_name(op); }
  /// " in node 'y' (add)" or "" when no node is known: for guard reasons.
  std::string in_node() const { return reason_prefix.empty() ? "" : " in " + reason_prefix; }

  /// Throws a UserError whose message starts with the op name.
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    throw UserError(
        fmt::format("{}: {}", op_name(), fmt::format(format, std::forward<Args>(args)...)));
  }
};

/// Normalizes a possibly negative axis to [0, rank); UserError naming `what`
/// when it is out of range.
int64_t normalize_axis(const InferContext& ctx, int64_t axis, int rank, std::string_view what);

/// Checks that all operands share one dtype and that it suits the op's
/// DTypeRule; returns the output dtype.
DType check_dtype_rule(const InferContext& ctx, const std::vector<DType>& operands);

/// UserError unless no entry of `shape` is proven negative; the message
/// names the entry as "<what> <index>".
void check_dims_not_negative(const InferContext& ctx, const Shape& shape, std::string_view what);

/// NumPy broadcast of any number of shapes, dims right-aligned; dim indices
/// in messages and guard reasons are those of the result.
Shape broadcast_all(const std::vector<const Shape*>& shapes, sym::ShapeEnv& env,
                    const std::string& reason_prefix);

/// min/max that fold when the order of the operands is proven.
sym::Expr fold_min(const InferContext& ctx, const sym::Expr& a, const sym::Expr& b);
sym::Expr fold_max(const InferContext& ctx, const sym::Expr& a, const sym::Expr& b);

// Per-class inference. `inputs` already hold canonical dims; attrs are the
// node's (already checked to be the right alternative) and may be normalized.
std::vector<TensorType> infer_unary(const InferContext& ctx, const std::vector<TensorType>& in);
std::vector<TensorType> infer_binary(const InferContext& ctx, const std::vector<TensorType>& in);
std::vector<TensorType> infer_where(const InferContext& ctx, const std::vector<TensorType>& in);
std::vector<TensorType> infer_cast(const InferContext& ctx, const std::vector<TensorType>& in,
                                   const CastAttrs& attrs);
std::vector<TensorType> infer_broadcast_to(const InferContext& ctx,
                                           const std::vector<TensorType>& in,
                                           const ShapeAttrs& attrs);
std::vector<TensorType> infer_reduce(const InferContext& ctx, const std::vector<TensorType>& in,
                                     ReduceAttrs& attrs);
std::vector<TensorType> infer_transpose(const InferContext& ctx, const std::vector<TensorType>& in,
                                        TransposeAttrs& attrs);
std::vector<TensorType> infer_reshape(const InferContext& ctx, const std::vector<TensorType>& in,
                                      const ShapeAttrs& attrs);
std::vector<TensorType> infer_slice(const InferContext& ctx, const std::vector<TensorType>& in,
                                    SliceAttrs& attrs);
std::vector<TensorType> infer_concat(const InferContext& ctx, const std::vector<TensorType>& in,
                                     AxisAttrs& attrs);
std::vector<TensorType> infer_split(const InferContext& ctx, const std::vector<TensorType>& in,
                                    SplitAttrs& attrs);
std::vector<TensorType> infer_gather(const InferContext& ctx, const std::vector<TensorType>& in,
                                     AxisAttrs& attrs);
std::vector<TensorType> infer_constant(const InferContext& ctx, const ConstantAttrs& attrs);
std::vector<TensorType> infer_iota(const InferContext& ctx, IotaAttrs& attrs);
std::vector<TensorType> infer_conv(const InferContext& ctx, const std::vector<TensorType>& in,
                                   ConvAttrs& attrs);
std::vector<TensorType> infer_matmul(const InferContext& ctx, const std::vector<TensorType>& in);

/// Name of an attribute kind for messages ("no attributes", "slice attributes").
std::string_view attr_kind_name(AttrKind kind);

/// UserError unless `num_inputs` and the attrs alternative fit the op.
void check_signature(OpKind op, size_t num_inputs, const Attrs& attrs);

}  // namespace autofuse::graph_detail
