#include "ref/op_cases.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autofuse/graph/graph.h"
#include "autofuse/ref/interpreter.h"

namespace autofuse::testing {

HostTensor tensor(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  HostTensor t(dtype, std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel()) << t.type_string();
  for (int64_t i = 0; i < t.numel() && i < static_cast<int64_t>(values.size()); ++i)
    t.set_f64(i, values[i]);
  return t;
}

HostTensor itensor(DType dtype, std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  HostTensor t(dtype, std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel()) << t.type_string();
  for (int64_t i = 0; i < t.numel() && i < static_cast<int64_t>(values.size()); ++i)
    t.set_i64(i, values[i]);
  return t;
}

std::vector<HostTensor> run_single_op(OpKind op, const std::vector<HostTensor>& inputs,
                                      const Attrs& attrs) {
  Graph g("single");
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Shape shape(inputs[i].shape().begin(), inputs[i].shape().end());
    ids.push_back(g.add_input(fmt::format("x{}", i), TensorType{inputs[i].dtype(), shape}));
  }
  size_t outputs = 1;
  if (const auto* split = std::get_if<SplitAttrs>(&attrs)) outputs = split->sizes.size();
  std::vector<std::string> names;
  for (size_t i = 0; i < outputs; ++i)
    names.push_back(fmt::format("y{}", i));
  g.set_outputs(g.add_node(op, ids, attrs, names));
  return run_reference(g, inputs);
}

namespace {

std::string values_text(const HostTensor& t) {
  std::vector<std::string> parts;
  for (int64_t i = 0; i < t.numel() && i < 64; ++i) {
    if (is_float(t.dtype()))
      parts.push_back(fmt::format("{}", t.get_f64(i)));
    else
      parts.push_back(fmt::format("{}", t.get_i64(i)));
  }
  if (t.numel() > 64) parts.push_back("...");
  return fmt::format("{} {{{}}}", t.type_string(), fmt::join(parts, ", "));
}

/// |a - b| in units of the last place of `want` in `dtype`.
double ulp_distance(double got, double want, DType dtype) {
  if (dtype == DType::f32) {
    const float w = static_cast<float>(want);
    const float ulp = std::nextafter(std::fabs(w), INFINITY) - std::fabs(w);
    return std::fabs(got - want) / ulp;
  }
  const double ulp = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
  return std::fabs(got - want) / ulp;
}

}  // namespace

::testing::AssertionResult same_tensor(const HostTensor& got, const HostTensor& want, int ulps) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return ::testing::AssertionFailure()
           << "got " << got.type_string() << ", want " << want.type_string();
  for (int64_t i = 0; i < got.numel(); ++i) {
    bool ok;
    if (is_float(got.dtype())) {
      const double g = got.get_f64(i), w = want.get_f64(i);
      if (std::isnan(w) || std::isnan(g))
        ok = std::isnan(w) && std::isnan(g);
      else if (g == w)
        ok = g != 0 || std::signbit(g) == std::signbit(w);
      else
        ok = ulps > 0 && (got.dtype() == DType::f32 || got.dtype() == DType::f64) &&
             std::isfinite(w) && ulp_distance(g, w, got.dtype()) <= ulps;
    } else {
      ok = got.get_i64(i) == want.get_i64(i);
    }
    if (!ok)
      return ::testing::AssertionFailure() << "element " << i << " differs\n  got  "
                                           << values_text(got) << "\n  want " << values_text(want);
  }
  return ::testing::AssertionSuccess();
}

IntLimits int_limits(DType dtype) {
  switch (dtype) {
    case DType::i4:
      return {-8, 7};
    case DType::u4:
      return {0, 15};
    case DType::i8:
      return {INT8_MIN, INT8_MAX};
    case DType::u8:
      return {0, UINT8_MAX};
    case DType::i16:
      return {INT16_MIN, INT16_MAX};
    case DType::u16:
      return {0, UINT16_MAX};
    case DType::i32:
      return {INT32_MIN, INT32_MAX};
    case DType::u32:
      return {0, UINT32_MAX};
    case DType::i64:
      return {INT64_MIN, INT64_MAX};
    case DType::u64:
      return {0, u64(UINT64_MAX)};
    default:
      ADD_FAILURE() << "int_limits of " << dtype_name(dtype);
      return {0, 0};
  }
}

std::vector<OpCase> all_cases() {
  std::vector<OpCase> all;
  for (auto* part : {&unary_cases, &binary_cases, &other_elementwise_cases, &reduce_cases,
                     &layout_cases, &int_width_cases, &float8_cases, &bitwise_cases})
    for (OpCase& c : (*part)())
      all.push_back(std::move(c));
  return all;
}

}  // namespace autofuse::testing
