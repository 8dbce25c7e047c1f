// Helpers for the composite and library converter tests: one-node models
// over inputs of given types, deterministic test data, element-wise
// comparison against values computed in double, and "rows along an axis"
// indexing for the expected-value loops.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "autofuse/fuse/fusion.h"
#include "autofuse/runtime/executable.h"
#include "onnx_test_util.h"
#include "test_kernel_cache.h"

namespace autofuse::frontend::testing {

/// Reproducible values in [lo, hi) (an LCG; no dependence on <random>'s
/// implementation-defined distributions).
inline std::vector<double> test_values(int64_t n, uint64_t seed, double lo = -3, double hi = 3) {
  std::vector<double> out;
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    out.push_back(lo + (hi - lo) * static_cast<double>(s >> 11) / 9007199254740992.0);
  }
  return out;
}

inline int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A tensor of test values (rounded to the dtype once).
inline HostTensor random_host(DType dtype, const std::vector<int64_t>& shape, uint64_t seed,
                              double lo = -3, double hi = 3) {
  return host(dtype, shape, test_values(numel_of(shape), seed, lo, hi));
}

/// A one-node model: inputs in0, in1, ... typed like `inputs` (an empty
/// HostTensor with `omitted` set is an omitted optional input), outputs
/// out0, out1, ... untyped. Constant inputs become initializers.
struct OneNode {
  explicit OneNode(std::string op_type) : op(std::move(op_type)) {}

  std::string op;
  std::vector<HostTensor> inputs;
  std::vector<onnx::AttributeProto> attrs;
  int64_t opset = 17;
  int num_outputs = 1;
  std::vector<int> initializer_inputs;  ///< inputs passed as initializers, not graph inputs
  std::vector<int> omitted_inputs;      ///< listed as "" (optional input left out)
  std::vector<int> omitted_outputs;

  ModelBuilder model() const {
    ModelBuilder m(opset);
    std::vector<std::string> names;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int ii = static_cast<int>(i);
      if (std::count(omitted_inputs.begin(), omitted_inputs.end(), ii)) {
        names.emplace_back();
        continue;
      }
      names.push_back("in" + std::to_string(i));
      const HostTensor& t = inputs[i];
      if (std::count(initializer_inputs.begin(), initializer_inputs.end(), ii)) {
        onnx::TensorProto p = tensor(names.back(), onnx_type(t.dtype()), t.shape(), values_of(t));
        m.initializer(p);
      } else {
        m.input(names.back(), onnx_type(t.dtype()),
                std::vector<Dim>(t.shape().begin(), t.shape().end()));
      }
    }
    std::vector<std::string> outs;
    for (int i = 0; i < num_outputs; ++i) {
      if (std::count(omitted_outputs.begin(), omitted_outputs.end(), i)) {
        outs.emplace_back();
        continue;
      }
      outs.push_back("out" + std::to_string(i));
    }
    m.node(op, names, outs, attrs);
    for (const std::string& o : outs)
      if (!o.empty()) m.output(o);
    return m;
  }
  OnnxModel import() const { return model().import(); }
  /// The graph-input tensors (initializers and omitted inputs left out).
  std::vector<HostTensor> graph_inputs() const {
    std::vector<HostTensor> out;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int ii = static_cast<int>(i);
      if (!std::count(initializer_inputs.begin(), initializer_inputs.end(), ii) &&
          !std::count(omitted_inputs.begin(), omitted_inputs.end(), ii))
        out.push_back(inputs[i]);
    }
    return out;
  }
  std::vector<HostTensor> run() const { return testing::run(import(), graph_inputs()); }
};

/// |got - want| <= atol + rtol * |want| element-wise (NaN matches NaN, inf
/// matches the same inf), shapes equal.
inline void expect_close(const HostTensor& got, const std::vector<int64_t>& shape,
                         const std::vector<double>& want, double rtol, double atol,
                         const std::string& what) {
  ASSERT_EQ(got.shape(), shape) << what;
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size()) << what;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.get_f64(i), w = want[static_cast<size_t>(i)];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << what << " element " << i;
    } else if (std::isinf(w)) {
      EXPECT_EQ(g, w) << what << " element " << i;
    } else {
      ASSERT_LE(std::abs(g - w), atol + rtol * std::abs(w))
          << what << " element " << i << ": got " << g << ", want " << w;
    }
  }
}

/// Tolerances for results computed in the dtype vs. in double.
inline double rtol_of(DType dt) {
  return dt == DType::f16 ? 4e-3 : dt == DType::bf16 ? 3e-2 : dt == DType::f64 ? 1e-12 : 1e-5;
}

/// The flat-index decomposition of a shape around one axis: element
/// (o, i, j) with o < outer, i < len (along the axis), j < inner sits at
/// (o * len + i) * inner + j.
struct AxisRows {
  int64_t outer = 1, len = 1, inner = 1;
  AxisRows(const std::vector<int64_t>& shape, int64_t axis) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
      const int64_t n = shape[static_cast<size_t>(d)];
      if (d < axis)
        outer *= n;
      else if (d == axis)
        len = n;
      else
        inner *= n;
    }
  }
  int64_t at(int64_t o, int64_t i, int64_t j) const { return (o * len + i) * inner + j; }
};

/// The model compiled for two threads, its kernels in the tests' shared cache.
inline std::unique_ptr<runtime::Executable> compile_two_threads(const OnnxModel& model) {
  runtime::CompileOptions options;
  options.compiler.cache_dir = shared_test_cache();
  options.threads = 2;
  return runtime::Executable::build(model.graph, options);
}

/// What importing `model` (a OneNode or a ModelBuilder) throws:
/// "unsupported: " and the message for an UnsupportedError, the message
/// of another UserError, or "no error".
template <class Model>
std::string import_error(const Model& model) {
  try {
    model.import();
  } catch (const UnsupportedError& e) {
    return std::string("unsupported: ") + e.what();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

/// Kernels after fusing the imported graph (default configuration).
inline int fused_kernels(const OnnxModel& model) {
  return fuse::partition(model.graph, fuse::FusionConfig{}).num_kernels();
}

}  // namespace autofuse::frontend::testing
