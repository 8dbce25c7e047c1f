// The bundled examples compute what their comments say: each is run on the
// reference interpreter and compared with a direct double-precision loop
// over the same inputs, on shapes including 1, primes and odd tails.
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "cli/cli_runner.h"

namespace autofuse::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace examples_test_local {

using RowFn = std::function<void(const std::vector<HostTensor>& in, int64_t row, int64_t d,
                                 std::vector<double>& out_row)>;

double at(const HostTensor& t, int64_t i) {
  return t.get_f64(i);
}

void check_example(const std::string& file, const RowFn& expected_row) {
  Graph graph = parse_graph_file(example_path(file));
  for (auto [n, d] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 7}, {17, 768}, {2, 1023}}) {
    SCOPED_TRACE(file + " N=" + std::to_string(n) + " D=" + std::to_string(d));
    sym::Binding binding{{"N", n}, {"D", d}};
    std::vector<HostTensor> inputs = random_inputs(graph, binding, /*seed=*/7);
    std::vector<HostTensor> outputs = run_reference(graph, inputs, binding);
    ASSERT_EQ(outputs.size(), 1u);
    ASSERT_EQ(outputs[0].shape(), (std::vector<int64_t>{n, d}));
    std::vector<double> row(d);
    for (int64_t r = 0; r < n; ++r) {
      expected_row(inputs, r, d, row);
      for (int64_t j = 0; j < d; ++j) {
        double got = outputs[0].get_f64(r * d + j);
        // f32 computation vs double: a few ulps per op, relative to the row scale.
        ASSERT_NEAR(got, row[j], 2e-5 * (1 + std::abs(row[j]))) << "row " << r << " col " << j;
      }
    }
  }
}

TEST(Examples, LayerNorm) {
  check_example("layernorm.af", [](const auto& in, int64_t r, int64_t d, auto& out) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j)
      mean += at(in[0], r * d + j);
    mean /= d;
    for (int64_t j = 0; j < d; ++j)
      var += std::pow(at(in[0], r * d + j) - mean, 2);
    var /= d;
    for (int64_t j = 0; j < d; ++j)
      out[j] = (at(in[0], r * d + j) - mean) / std::sqrt(var + 1e-5) * at(in[1], j) + at(in[2], j);
  });
}

TEST(Examples, Softmax) {
  check_example("softmax.af", [](const auto& in, int64_t r, int64_t d, auto& out) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < d; ++j)
      m = std::max(m, at(in[0], r * d + j));
    for (int64_t j = 0; j < d; ++j)
      s += std::exp(at(in[0], r * d + j) - m);
    for (int64_t j = 0; j < d; ++j)
      out[j] = std::exp(at(in[0], r * d + j) - m) / s;
  });
}

TEST(Examples, Gelu) {
  check_example("gelu.af", [](const auto& in, int64_t r, int64_t d, auto& out) {
    for (int64_t j = 0; j < d; ++j) {
      double h = at(in[0], r * d + j) + at(in[1], j);
      out[j] = 0.5 * h * (1 + std::erf(h / std::sqrt(2.0)));
    }
  });
}

TEST(Examples, Chain10) {
  check_example("chain10.af", [](const auto& in, int64_t r, int64_t d, auto& out) {
    for (int64_t j = 0; j < d; ++j) {
      double x = at(in[0], r * d + j);
      double a3 = std::tanh(2 * x + 1);
      double a8 = std::sqrt(std::abs(a3 * a3 - x) + 1);
      out[j] = x / (1 + std::exp(-a8));
    }
  });
}

TEST(Examples, RmsNorm) {
  check_example("rmsnorm.af", [](const auto& in, int64_t r, int64_t d, auto& out) {
    double ms = 0;
    for (int64_t j = 0; j < d; ++j)
      ms += std::pow(at(in[0], r * d + j), 2);
    ms /= d;
    for (int64_t j = 0; j < d; ++j)
      out[j] = at(in[0], r * d + j) / std::sqrt(ms + 1e-6) * at(in[1], j);
  });
}

}  // namespace examples_test_local
}  // namespace autofuse::testing
